/*
 * Implementation of the shared helpers declared in util.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

/*
 * A big array's whole 2 MiB pages advised huge (MADV_HUGEPAGE; advice,
 * ignored where transparent huge pages are off).  Each fresh 4 KiB page
 * costs a page fault at its first touch, about 10 us on the VMs this
 * project is built on: a replay's input load took 7 500 of them, in its
 * hash maps and stream arrays.
 */
static void advise_huge(void *p, size_t size)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + size) & ~(huge - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

int swt_grow(void **ptr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -SWT_ENOMEM;
		ncap *= 2;
	}
	p = realloc(*ptr, ncap * elem);
	if (!p)
		return -SWT_ENOMEM;
	advise_huge(p, ncap * elem);
	memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	*ptr = p;
	*cap = ncap;
	return 0;
}

void swt_reserve(void **ptr, size_t *cap, size_t n, size_t elem)
{
	*ptr = n && elem && n <= SIZE_MAX / elem ? malloc(n * elem) : NULL;
	if (*ptr)
		advise_huge(*ptr, n * elem);
	*cap = *ptr ? n : 0;
}

static inline uint64_t map_hash(uint64_t a, uint64_t b)
{
	/* splitmix64 finaliser over both words: cheap and well mixed */
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/*
 * GCC folds malloc and a memset to zero into calloc, which swt_alloc_written
 * exists to avoid: its memset is called through a pointer it cannot see.
 */
static void *(*const volatile zero_fill)(void *, int, size_t) = memset;

void *swt_alloc_written(size_t n, size_t elem)
{
	size_t size;
	void *p;

	if (elem && n > SIZE_MAX / elem)
		return NULL;
	size = n * elem;
	p = malloc(size ? size : 1);
	if (p) {
		advise_huge(p, size);
		zero_fill(p, 0, size);
	}
	return p;
}

void swt_sort_key_values(struct swt_key_value *a, struct swt_key_value *tmp, size_t n)
{
	uint64_t differ = 0;
	struct swt_key_value *from = a, *to = tmp;

	/* the bits where some key differs from the first: the bytes worth a pass */
	for (size_t i = 1; i < n; i++)
		differ |= a[i].key ^ a[0].key;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, at = 0;

		if (!((differ >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[(from[i].key >> shift) & 0xff]++;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = count[d];

			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i].key >> shift) & 0xff]++] = from[i];
		from = to;
		to = from == a ? tmp : a;
	}
	if (from != a)
		memcpy(a, from, n * sizeof(*a));
}

int swt_map_init(struct swt_map *m, size_t cap_hint)
{
	size_t cap = 64;

	while (cap < cap_hint * 2)
		cap *= 2;
	/* keys hash all over the table: nearly every page is written anyway */
	m->slots = swt_alloc_written(cap, sizeof(*m->slots));
	if (!m->slots)
		return -SWT_ENOMEM;
	m->cap = cap;
	m->len = 0;
	return 0;
}

void swt_map_release(struct swt_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}

static int map_rehash(struct swt_map *m, size_t ncap)
{
	struct swt_map_slot *old = m->slots;
	size_t ocap = m->cap, i;

	m->slots = swt_alloc_written(ncap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -SWT_ENOMEM;
	}
	m->cap = ncap;
	m->len = 0;
	for (i = 0; i < ocap; i++)
		if (old[i].used)
			swt_map_put(m, old[i].a, old[i].b, old[i].value);
	free(old);
	return 0;
}

int swt_map_put(struct swt_map *m, uint64_t a, uint64_t b, uint64_t value)
{
	size_t mask, i;

	if ((m->len + 1) * 4 > m->cap * 3) {
		int ret = map_rehash(m, m->cap * 2);

		if (ret)
			return ret;
	}
	mask = m->cap - 1;
	for (i = map_hash(a, b) & mask;; i = (i + 1) & mask) {
		struct swt_map_slot *s = &m->slots[i];

		if (!s->used) {
			s->used = 1;
			s->a = a;
			s->b = b;
			s->value = value;
			m->len++;
			return 0;
		}
		if (s->a == a && s->b == b) {
			s->value = value;
			return 0;
		}
	}
}

int swt_map_get(const struct swt_map *m, uint64_t a, uint64_t b, uint64_t *value)
{
	size_t mask = m->cap - 1, i;

	for (i = map_hash(a, b) & mask;; i = (i + 1) & mask) {
		const struct swt_map_slot *s = &m->slots[i];

		if (!s->used)
			return 0;
		if (s->a == a && s->b == b) {
			*value = s->value;
			return 1;
		}
	}
}

int swt_map_del(struct swt_map *m, uint64_t a, uint64_t b)
{
	size_t mask = m->cap - 1, i, j;

	for (i = map_hash(a, b) & mask;; i = (i + 1) & mask) {
		if (!m->slots[i].used)
			return 0;
		if (m->slots[i].a == a && m->slots[i].b == b)
			break;
	}
	/* backward-shift: pull later members of the probe run into the hole */
	for (j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
		size_t home = map_hash(m->slots[j].a, m->slots[j].b) & mask;

		/* move j into i unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].used = 0;
	m->len--;
	return 1;
}

int swt_dev_parse(const char *text, uint32_t *dev)
{
	char *end;
	unsigned long maj, min;

	errno = 0;
	maj = strtoul(text, &end, 10);
	if (end == text || (*end != ':' && *end != ',') || errno)
		return -SWT_EUSAGE;
	text = end + 1;
	min = strtoul(text, &end, 10);
	if (end == text || *end || errno || maj >= 4096 || min >= (1ul << 20))
		return -SWT_EUSAGE;
	*dev = swt_dev_make((uint32_t)maj, (uint32_t)min);
	return 0;
}

char *swt_dev_format(uint32_t dev, char *buf, size_t size)
{
	snprintf(buf, size, "%u:%u", swt_dev_major(dev), swt_dev_minor(dev));
	return buf;
}

int swt_parse_u64(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* strtoull takes " -5" (blanks first) as 2^64 - 5, and "+5" and " 5" as 5 */
	if (!text || !isdigit((unsigned char)text[0]))
		return -SWT_EUSAGE;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (*end || errno)
		return -SWT_EUSAGE;
	*out = v;
	return 0;
}

int swt_parse_i64(const char *text, int64_t *out)
{
	char *end;
	long long v;

	if (!text || !isdigit((unsigned char)text[text[0] == '-']))
		return -SWT_EUSAGE;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (*end || errno)
		return -SWT_EUSAGE;
	*out = v;
	return 0;
}

int swt_parse_int(const char *text, int *out)
{
	int64_t v;

	if (swt_parse_i64(text, &v) || v < INT_MIN || v > INT_MAX)
		return -SWT_EUSAGE;
	*out = (int)v;
	return 0;
}

int swt_list_has_empty(const char *text)
{
	size_t len = strlen(text);

	return !len || text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,") != NULL;
}

int swt_parse_double(const char *text, double *out)
{
	char *end;
	double v;

	/* a decimal number: strtod also takes blanks, '+', hex ("0x1p-1") and "inf" */
	if (!text || !(isdigit((unsigned char)text[text[0] == '-']) ||
		       (text[text[0] == '-'] == '.' && isdigit((unsigned char)text[(text[0] == '-') + 1]))) ||
	    strpbrk(text, "xX"))
		return -SWT_EUSAGE;
	errno = 0;
	v = strtod(text, &end);
	if (*end || errno || !isfinite(v))
		return -SWT_EUSAGE;
	*out = v;
	return 0;
}

char *swt_escape_octal(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1), *w = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			w += sprintf(w, "\\%03o", (unsigned char)*s);
		else
			*w++ = *s;
	}
	*w = '\0';
	return out;
}

char *swt_shell_word(const char *s, unsigned flags)
{
	size_t len = strlen(s);
	char *out, *w;

	if ((flags & SWT_SHELL_BARE) && len &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,+%@") ==
	    len)
		return swt_strdup(s);
	/* worst case: every character a quote, '\'' each, and the two quotes around */
	out = len < SIZE_MAX / 4 - 3 ? malloc(4 * len + 3) : NULL;
	if (!out)
		return NULL;
	w = out;
	*w++ = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(w, "'\\''", 4);
			w += 4;
		} else {
			*w++ = *s == '\n' && (flags & SWT_SHELL_ONE_LINE) ? ' ' : *s;
		}
	}
	*w++ = '\'';
	*w = '\0';
	return out;
}

void swt_unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

char *swt_strdup(const char *s)
{
	size_t n;
	char *d;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

const char *swt_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

char *swt_path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	int slashed = dir[0] && dir[strlen(dir) - 1] == '/';	/* "cap/" as typed: no "cap//x" */
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s%s", dir, slashed ? "" : "/", name);
	return p;
}

char *swt_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = swt_strdup(slash ? path : ".");

	if (dir && slash)
		dir[slash - path] = '\0';
	return dir;
}

int swt_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

long swt_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (long)got;
}

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define ARENA_GAP 64
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ARENA_GAP 0
#endif

#ifdef MADV_POPULATE_WRITE
#define SWT_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define SWT_MADV_POPULATE_WRITE 23	/* Linux 5.14's, for older C libraries' headers */
#endif

#define ARENA_ALIGN 64
#define HUGE_PAGE (2u << 20)	/* x86-64's and arm64's (4 KiB base pages) PMD size */

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* Map in the pages of [p, p + bytes) now (swt_arena_part.populate). */
static void populate_pages(char *p, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), head = (uintptr_t)p % page;

	/* advice only: an older kernel maps the pages in as they are first written */
	(void)madvise(p - head, round_up(head + bytes, page), SWT_MADV_POPULATE_WRITE);
}

int swt_arena_carve(struct swt_arena *a, const struct swt_arena_part *parts, size_t n)
{
	size_t total = 0, off = 0, span;
	char *raw, *map;

	a->map = NULL;
	a->size = 0;
	for (size_t i = 0; i < n; i++) {
		size_t part = round_up(parts[i].bytes ? parts[i].bytes : 1, ARENA_ALIGN) + ARENA_GAP;

		if (part > SIZE_MAX / 2 - total)
			return -SWT_ENOMEM;
		total += round_up(part, ARENA_ALIGN);
	}
	total = round_up(total ? total : 1, HUGE_PAGE);
	if (total > SIZE_MAX / 2)
		return -SWT_ENOMEM;
	/* a huge page needs a 2 MiB-aligned range: map one more and trim both ends */
	span = total + HUGE_PAGE;
	raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return -SWT_ENOMEM;
	map = (char *)round_up((uintptr_t)raw, HUGE_PAGE);
	if (map > raw)
		munmap(raw, (size_t)(map - raw));
	if (raw + span > map + total)
		munmap(map + total, (size_t)(raw + span - (map + total)));
	/* advice only: without transparent huge pages the arena is an ordinary mapping */
	(void)madvise(map, total, MADV_HUGEPAGE);
	a->map = map;
	a->size = total;
	for (size_t i = 0; i < n; i++) {
		size_t bytes = parts[i].bytes ? parts[i].bytes : 1;

		*parts[i].ptr = map + off;
		if (parts[i].populate && parts[i].bytes)
			populate_pages(map + off, parts[i].bytes);
		off = round_up(off + bytes, ARENA_ALIGN);
		ASAN_POISON_MEMORY_REGION(map + off - round_up(bytes, ARENA_ALIGN) + bytes,
					  round_up(bytes, ARENA_ALIGN) - bytes + ARENA_GAP);
		off += ARENA_GAP;
	}
	ASAN_POISON_MEMORY_REGION(map + off, total - off);
	return 0;
}

void swt_arena_release(struct swt_arena *a)
{
	if (!a->map)
		return;
	/* the addresses may be mapped again, by malloc too */
	ASAN_UNPOISON_MEMORY_REGION(a->map, a->size);
	munmap(a->map, a->size);
	a->map = NULL;
	a->size = 0;
}

uint64_t swt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t swt_meminfo_kib(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "re");
	size_t klen = strlen(key);
	char line[256];
	int64_t v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* A cgroup file's first number (or "max"), in bytes; -1 unreadable or unlimited. */
static int64_t cgroup_value(const char *dir, const char *file, const char *key)
{
	char path[PATH_MAX + 64], line[256];
	size_t klen = key ? strlen(key) : 0;
	int64_t v = -1;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *text = line;

		if (key) {
			if (strncmp(line, key, klen) || line[klen] != ' ')
				continue;
			text = line + klen + 1;
		}
		if (strncmp(text, "max", 3))
			v = strtoll(text, NULL, 10);
		break;
	}
	fclose(f);
	/* cgroup v1 writes "no limit" as the largest page multiple below 2^63 */
	return v >= ((int64_t)1 << 62) ? -1 : v;
}

/*
 * A mountinfo line's mount point (the fifth field), file system type and
 * super options (after " - "): 0, or -1 for a line that is not one.
 */
static int mountinfo_entry(const char *line, char mnt[PATH_MAX], char fstype[64],
			   char opts[1024])
{
	const char *sep = strstr(line, " - ");
	char source[256];

	opts[0] = '\0';
	if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
	    sscanf(sep + 3, "%63s %255s %1023s", fstype, source, opts) < 2)
		return -1;
	return 0;
}

int swt_fs_mounted_at(const char *mountinfo, const char *fstype, const char *path)
{
	FILE *f = fopen(mountinfo, "re");
	char line[4096 + 256], mnt[PATH_MAX], type[64], opts[1024];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = !mountinfo_entry(line, mnt, type, opts) && !strcmp(mnt, path) &&
			!strcmp(type, fstype);
	fclose(f);
	return found;
}

void swt_cgroup_mounts(const char *mountinfo, char *v1, char *v2, size_t size)
{
	FILE *f = fopen(mountinfo, "re");
	char line[4096];

	v1[0] = v2[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], opts[1024];

		if (mountinfo_entry(line, mnt, fstype, opts))
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2[0])
			snprintf(v2, size, "%s", mnt);
		else if (!strcmp(fstype, "cgroup") && !v1[0]) {
			char *o, *save = NULL;

			for (o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
				if (!strcmp(o, "memory"))
					snprintf(v1, size, "%s", mnt);
		}
	}
	fclose(f);
}

char *swt_memcg_dir(const char *cgroup_file, const char *v1, const char *v2)
{
	char line[4096], *result = NULL;
	char v2path[PATH_MAX] = "";
	FILE *f = fopen(cgroup_file, "re");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (!strcmp(c1 + 1, "") && v2[0])
			snprintf(v2path, sizeof(v2path), "%s%s", v2, c2 + 1);
		else if (v1[0]) {
			char *o, *save = NULL;

			for (o = strtok_r(c1 + 1, ",", &save); o; o = strtok_r(NULL, ",", &save))
				if (!strcmp(o, "memory") && !result &&
				    asprintf(&result, "%s%s", v1, c2 + 1) < 0)
					result = NULL;
		}
	}
	fclose(f);
	if (!result && v2path[0])
		result = swt_strdup(v2path);
	return result;
}

int64_t swt_memcg_limit(const char *dir)
{
	int64_t v = cgroup_value(dir, "memory.limit_in_bytes", NULL);

	return v >= 0 ? v : cgroup_value(dir, "memory.max", NULL);
}

int64_t swt_memcg_effective_limit(const char *dir)
{
	char path[PATH_MAX], file[PATH_MAX + 32];
	size_t len = strlen(dir);
	int64_t best = -1;

	if (len >= sizeof(path))
		return swt_memcg_limit(dir);
	memcpy(path, dir, len + 1);
	/*
	 * A limit on a parent (a systemd slice, a pod) binds a child that
	 * has none of its own.  The hierarchy ends where the directories
	 * have no limit file: above the mount (v1) or at the root (v2).
	 */
	for (;;) {
		char *slash;
		int64_t v;

		while (len > 1 && path[len - 1] == '/')
			path[--len] = '\0';
		snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", path);
		if (access(file, F_OK) < 0) {
			snprintf(file, sizeof(file), "%s/memory.max", path);
			if (access(file, F_OK) < 0)
				break;
		}
		v = swt_memcg_limit(path);
		if (v >= 0 && (best < 0 || v < best))
			best = v;
		slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = '\0';
		len = (size_t)(slash - path);
	}
	return best;
}

/* A memory.stat value, v1's hierarchical total_ one where there is one (v2 has none). */
static int64_t cgroup_stat(const char *dir, const char *key)
{
	char total[64];
	int64_t v;

	snprintf(total, sizeof(total), "total_%s", key);
	v = cgroup_value(dir, "memory.stat", total);
	return v >= 0 ? v : cgroup_value(dir, "memory.stat", key);
}

/*
 * What the memory cgroup this process is in leaves it, in KiB: at each
 * level up to the hierarchy's root, the limit less the usage, plus the
 * file cache, which reclaim frees before it fails; -1 when no level has a
 * limit (or the files cannot be read).  cgroup v1 and v2 alike, found as
 * capture finds a target's (swt_cgroup_mounts, swt_memcg_dir).
 */
static int64_t cgroup_headroom_kib(void)
{
	/* test seam: a directory standing for /proc/self (mountinfo, cgroup) */
	const char *self = getenv("SWT_TEST_PROC_SELF") ? getenv("SWT_TEST_PROC_SELF") : "/proc/self";
	char v1[PATH_MAX], v2[PATH_MAX], path[PATH_MAX + 16], *dir;
	int64_t best = -1;

	snprintf(path, sizeof(path), "%s/mountinfo", self);
	swt_cgroup_mounts(path, v1, v2, sizeof(v1));
	snprintf(path, sizeof(path), "%s/cgroup", self);
	dir = swt_memcg_dir(path, v1, v2);
	if (!dir)
		return -1;
	for (;;) {
		int64_t limit = swt_memcg_limit(dir);
		int64_t usage = cgroup_value(dir, "memory.usage_in_bytes", NULL);
		char *slash = strrchr(dir, '/');

		if (usage < 0)
			usage = cgroup_value(dir, "memory.current", NULL);
		if (limit >= 0 && usage >= 0) {
			/* file cache, which reclaim frees for the asking, as MemAvailable counts it */
			int64_t inactive = cgroup_stat(dir, "inactive_file");
			int64_t active = cgroup_stat(dir, "active_file");
			int64_t room = limit - usage + (inactive > 0 ? inactive : 0) +
				       (active > 0 ? active : 0);

			room = room > 0 ? room / 1024 : 0;
			best = best < 0 ? room : SWT_MIN(best, room);
		}
		/* up to the hierarchy's root, which has no limit of its own */
		if (!slash || slash == dir || !strcmp(dir, v1) || !strcmp(dir, v2))
			break;
		*slash = '\0';
	}
	free(dir);
	return best;
}

int64_t swt_mem_available_kib(void)
{
	const char *test = getenv("SWT_TEST_MEM_AVAILABLE_KIB");
	int64_t v, room;

	if (test && !swt_parse_i64(test, &v))
		return v;
	v = swt_meminfo_kib("MemAvailable");
	room = cgroup_headroom_kib();
	return room >= 0 && (v < 0 || room < v) ? room : v;
}
