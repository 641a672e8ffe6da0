/*
 * Small helpers shared by every area: growable arrays, a hash map keyed by
 * two 64-bit words, device-number and number parsing.  Nothing here knows
 * about traces or swap.
 */
#ifndef SWT_UTIL_H
#define SWT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "swaptrace/error.h"

#define SWT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SWT_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SWT_MAX(a, b) ((a) > (b) ? (a) : (b))

/*
 * Make room for at least `need` elements of `elem` bytes in *ptr (capacity
 * *cap, in elements), growing geometrically.  New space is zeroed.
 * Returns 0 or -SWT_ENOMEM (then *ptr is unchanged).
 */
int swt_grow(void **ptr, size_t *cap, size_t need, size_t elem);
/*
 * An array for a bound of n elements: *ptr gets room for them, left
 * unwritten, and *cap = n, so that pages are touched only as elements are
 * stored, where swt_grow's doublings copy the array and zero each new half
 * (a replay's input arrays, loaded from tables of known row counts: a
 * tenth of its load under the sanitizers).  swt_grow takes over past the
 * bound.  n 0, or no memory: *ptr NULL and *cap 0, for swt_grow to start
 * from (and fail on).
 */
void swt_reserve(void **ptr, size_t *cap, size_t n, size_t elem);
/*
 * n zeroed elements, the zeros written now (NULL: out of memory).  Where a
 * table is read before it is written, a page at a time in no order (a hash
 * table, a table per slot), calloc's untouched pages cost two faults each
 * (the first read maps the shared zero page, the first store copies it and
 * flushes the TLB); written zeros cost one (a replay's input load: 2 000
 * page faults fewer of 10 200, each about 10 us on the VMs this project is
 * built on).
 */
void *swt_alloc_written(size_t n, size_t elem);
/*
 * swt_grow, swt_reserve and swt_alloc_written advise the whole 2 MiB pages
 * of what they allocate huge (MADV_HUGEPAGE): a page fault per 2 MiB where
 * the kernel gives huge pages, not one per 4 KiB, for the hash maps and
 * stream arrays of a replay's load.
 */

/*
 * One mapping holding a job's big arrays, backed by huge pages where the
 * kernel gives them (MADV_HUGEPAGE): a replay run first touches about a
 * megabyte of fresh tables, and in 4 KiB pages each touch of a new page
 * is a page fault (about 2 us in a VM: 300 of them per run of 75 000
 * faults, a tenth of the run), where 2 MiB pages take one per 512.
 * Embedded by value, zeroed; swt_arena_release() unmaps it (a zeroed one
 * is a no-op).
 */
struct swt_arena {
	char *map;
	size_t size;
};

/*
 * An array to place in the arena: *ptr is set to bytes of zeroed memory.
 * populate: its pages are mapped in as it is placed (MADV_POPULATE_WRITE,
 * Linux 5.14; where the kernel lacks it, at first touch as the others), for
 * an array that a timed loop writes all over from its start, where each
 * page fault (a 2 MiB page zeroed, or 512 small ones) would be timed too.
 */
struct swt_arena_part {
	void **ptr;
	size_t bytes;
	int populate;
};

/*
 * Map an arena for the n parts and set each part's pointer: every part
 * 64-byte aligned, with an inaccessible gap after it under AddressSanitizer,
 * which then still catches overruns from one array into the next.  0, or
 * -SWT_ENOMEM with nothing mapped.
 */
int swt_arena_carve(struct swt_arena *a, const struct swt_arena_part *parts, size_t n);
void swt_arena_release(struct swt_arena *a);

/*
 * Sort n (key, value) pairs by key, stably, in linear time: a radix sort a
 * byte at a time from the lowest, skipping the bytes every key shares.
 * Sorting by a second key then by a first gives the pairs in (first,
 * second) order.  tmp has room for n pairs.  Where qsort's merge sort
 * called a comparison through a pointer 1.2 million times for a replay's
 * 75 000 faults (a tenth of loading its input).
 */
struct swt_key_value {
	uint64_t key, value;
};
void swt_sort_key_values(struct swt_key_value *a, struct swt_key_value *tmp, size_t n);

/*
 * Open-addressing hash map from a pair of 64-bit keys to a 64-bit value,
 * embedded by value: swt_map_init() / swt_map_release().  Linear probing
 * with backward-shift deletion, so it never fills with tombstones.
 */
struct swt_map_slot {
	uint64_t a, b, value;
	uint8_t used;
};

struct swt_map {
	struct swt_map_slot *slots;
	size_t cap;	/* power of two */
	size_t len;
};

int swt_map_init(struct swt_map *m, size_t cap_hint);
void swt_map_release(struct swt_map *m);
/* Insert or replace; 0 or -SWT_ENOMEM. */
int swt_map_put(struct swt_map *m, uint64_t a, uint64_t b, uint64_t value);
/* 1 and *value set when found, 0 when absent. */
int swt_map_get(const struct swt_map *m, uint64_t a, uint64_t b, uint64_t *value);
/* 1 when a key was removed, 0 when absent. */
int swt_map_del(struct swt_map *m, uint64_t a, uint64_t b);

/*
 * a + b for counts read from a file, stopping at the int64_t limits: a
 * damaged file's count must not overflow (undefined) a total.
 */
static inline int64_t swt_add_sat(int64_t a, int64_t b)
{
	int64_t sum;

	if (__builtin_add_overflow(a, b, &sum))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return sum;
}

/*
 * Kernel dev_t as tracepoints and blktrace records carry it:
 * major << 20 | minor.
 */
#define SWT_DEV_MINORBITS 20
static inline uint32_t swt_dev_make(uint32_t major, uint32_t minor)
{
	return (major << SWT_DEV_MINORBITS) | (minor & ((1u << SWT_DEV_MINORBITS) - 1));
}
static inline uint32_t swt_dev_major(uint32_t dev) { return dev >> SWT_DEV_MINORBITS; }
static inline uint32_t swt_dev_minor(uint32_t dev) { return dev & ((1u << SWT_DEV_MINORBITS) - 1); }

/* "MAJ:MIN" (decimal) into a kernel dev_t; 0 or -SWT_EUSAGE. */
int swt_dev_parse(const char *text, uint32_t *dev);
/* Format as "MAJ:MIN" into buf (at least 24 bytes); returns buf. */
char *swt_dev_format(uint32_t dev, char *buf, size_t size);

/*
 * Strict number parsing: decimal digits (a zero-padded 010 is ten, as every
 * help text and meta.txt mean it, not octal eight), after a '-' for a signed
 * one; no blanks or '+' (strtoll's), whole string, no overflow.  0 or
 * -SWT_EUSAGE.
 */
int swt_parse_u64(const char *text, uint64_t *out);
int swt_parse_i64(const char *text, int64_t *out);
/* A /proc/meminfo value ("MemAvailable"...) in KiB, -1 when unreadable. */
int64_t swt_meminfo_kib(const char *key);
/*
 * Mount points of the cgroup v1 memory controller and of cgroup2, read
 * from a mountinfo file (/proc/self/mountinfo); "" where not mounted.
 */
void swt_cgroup_mounts(const char *mountinfo, char *v1, char *v2, size_t size);
/* Whether a file system of type fstype is mounted at path, by a mountinfo file: 1, 0, -1 unreadable. */
int swt_fs_mounted_at(const char *mountinfo, const char *fstype, const char *path);
/*
 * The memory cgroup directory a /proc/PID/cgroup file names under those
 * mounts: the v1 memory hierarchy's, else the cgroup2 one's.  NULL when
 * none (or out of memory); the caller frees.
 */
char *swt_memcg_dir(const char *cgroup_file, const char *v1, const char *v2);
/* A memory cgroup's limit in bytes, -1 when unlimited or unreadable. */
int64_t swt_memcg_limit(const char *dir);
/*
 * The limit its tasks live under: the lowest of its own and its
 * ancestors' up to the hierarchy's root; -1 when none is limited.
 */
int64_t swt_memcg_effective_limit(const char *dir);
/*
 * Memory available for new allocations, in KiB: MemAvailable, or less
 * when the memory cgroup this process is in (v1 or v2) leaves it less; -1
 * unknown (0 is none at all).  Test seams: SWT_TEST_MEM_AVAILABLE_KIB in
 * the environment replaces it; SWT_TEST_PROC_SELF names a directory read
 * for /proc/self's mountinfo and cgroup.
 */
int64_t swt_mem_available_kib(void);
int swt_parse_int(const char *text, int *out);
int swt_parse_double(const char *text, double *out);
/*
 * True when a comma-separated list has an empty item ("1,,2", "1,", ",2",
 * ""), which strtok() would skip without a word.
 */
int swt_list_has_empty(const char *text);

/* Duplicate a string; NULL on NULL or allocation failure. */
char *swt_strdup(const char *s);
/*
 * A path as /proc/swaps writes it: space, tab, newline and backslash as
 * \ooo, so that it is one word (malloc'd; NULL when out of memory).
 */
char *swt_escape_octal(const char *s);
/*
 * s as one shell word (malloc'd; NULL when out of memory): in single
 * quotes, each ' in it as '\''.  With SWT_SHELL_BARE a word of only
 * [A-Za-z0-9-_=./:,+%@] stays bare; with SWT_SHELL_ONE_LINE a newline
 * becomes a space, for files read line by line.
 */
#define SWT_SHELL_BARE 1u
#define SWT_SHELL_ONE_LINE 2u
char *swt_shell_word(const char *s, unsigned flags);
/* Undo swt_escape_octal (and /proc/swaps' escapes), in place. */
void swt_unescape_octal(char *s);

/* Last path component, without allocating. */
const char *swt_basename(const char *path);

/* "dir/name", allocated; NULL when out of memory. */
char *swt_path_join(const char *dir, const char *name);

/* The directory part of path, allocated ("." when it has none); NULL when out of memory. */
char *swt_dirname(const char *path);

/* Write all of buf to fd, retrying short writes; 0 or -errno. */
int swt_write_all(int fd, const void *buf, size_t len);
/* Read exactly len bytes; returns bytes read (short only at end of file) or -errno. */
long swt_read_full(int fd, void *buf, size_t len);

/* Monotonic clock in nanoseconds, for progress and benchmarks only. */
uint64_t swt_now_ns(void);

#endif
