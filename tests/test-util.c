/*
 * The memory swaptrace may count on (swt_mem_available_kib): MemAvailable,
 * or what the memory cgroup it runs in leaves it, v1 and v2, read from
 * fake cgroup trees built here, with a fake /proc/self (SWT_TEST_PROC_SELF)
 * whose mountinfo mounts them.  Also the arena the replay's tables live in,
 * and a few parsers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "check.h"
#include "util.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* every parent directory */
	for (char *p = strchr(path + strlen(root) + 1, '/'); p; p = strchr(p + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
		mkdir(dir, 0755);
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* MemAvailable, or room when it is less */
static int64_t expect(int64_t room_kib)
{
	int64_t host = swt_meminfo_kib("MemAvailable");

	return room_kib >= 0 && (host < 0 || room_kib < host) ? room_kib : host;
}

/*
 * swt_mem_available_kib() against expect(room_kib): where the host's
 * MemAvailable is the answer, it moves between two reads when other
 * processes (tests run alongside) allocate, so the answer must lie between
 * the expectations read just before and just after it; a few tries, in
 * case it moved back and forth in between.  The answer, or the last
 * expectation when none fit.
 */
static int64_t available_as_expected(int64_t room_kib, int64_t *expected)
{
	int64_t got = -2;

	for (int tries = 0; tries < 5; tries++) {
		int64_t before = expect(room_kib), after;

		got = swt_mem_available_kib();
		after = expect(room_kib);
		*expected = after;
		if (got >= SWT_MIN(before, after) && got <= SWT_MAX(before, after)) {
			*expected = got;
			break;
		}
	}
	return got;
}

#define CHECK_AVAILABLE(room_kib)                                               \
	do {                                                                    \
		int64_t _want, _got = available_as_expected(room_kib, &_want);  \
		CHECK_INT(_got, _want);                                         \
	} while (0)

/* A fresh tree whose self/mountinfo mounts cgroup v1's memory and cgroup2 in it. */
static void fresh_root(void)
{
	char self[128], mounts[512];

	snprintf(root, sizeof(root), "/tmp/swt-test-cgroup-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	snprintf(self, sizeof(self), "%s/self", root);
	setenv("SWT_TEST_PROC_SELF", self, 1);
	snprintf(mounts, sizeof(mounts),
		 "25 1 0:21 / /proc rw - proc proc rw\n"
		 "30 25 0:26 / %s/sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,cpuset,memory\n"
		 "31 25 0:27 / %s/sys/fs/cgroup/named rw - cgroup cgroup rw,name=memory_x\n"
		 "32 25 0:28 / %s/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", root, root, root);
	put("self/mountinfo", mounts);
}

static void drop_root(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);
	unsetenv("SWT_TEST_PROC_SELF");
}

TEST(cgroup_v2_limit_up_the_tree)
{
	fresh_root();
	put("self/cgroup", "0::/a/b\n");
	/* the leaf has no limit; its parent has 2 GiB, 1 GiB used, 768 MiB of it file cache */
	put("sys/fs/cgroup/a/b/memory.max", "max\n");
	put("sys/fs/cgroup/a/b/memory.current", "4096\n");
	put("sys/fs/cgroup/a/b/memory.stat", "anon 4096\nfile 0\n");
	put("sys/fs/cgroup/a/memory.max", "2147483648\n");
	put("sys/fs/cgroup/a/memory.current", "1073741824\n");
	put("sys/fs/cgroup/a/memory.stat",
	    "anon 268435456\nactive_file 268435456\ninactive_file 536870912\n");
	CHECK_AVAILABLE((1024 + 768) * 1024);
	drop_root();
}

TEST(cgroup_v1_memory_among_controllers)
{
	fresh_root();
	/* a named hierarchy with "memory" in its name is not the controller */
	put("self/cgroup", "9:name=systemd:/\n7:name=memory_x:/m\n4:cpuset,memory:/job\n");
	put("sys/fs/cgroup/memory/job/memory.limit_in_bytes", "536870912\n");
	put("sys/fs/cgroup/memory/job/memory.usage_in_bytes", "134217728\n");
	put("sys/fs/cgroup/memory/job/memory.stat",
	    "cache 0\ntotal_inactive_file 67108864\ntotal_active_file 0\n");
	put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put("sys/fs/cgroup/memory/memory.usage_in_bytes", "9000000000\n");
	CHECK_AVAILABLE((512 - 128 + 64) * 1024);
	drop_root();
}

TEST(fs_mounted_at_by_type_and_point)
{
	char info[192], path[128];

	fresh_root();
	snprintf(info, sizeof(info), "%s/self/mountinfo", root);
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/memory", root);
	CHECK_INT(swt_fs_mounted_at(info, "cgroup", path), 1);
	CHECK_INT(swt_fs_mounted_at(info, "cgroup2", path), 0);
	CHECK_INT(swt_fs_mounted_at(info, "proc", "/proc"), 1);
	CHECK_INT(swt_fs_mounted_at(info, "tracefs", "/sys/kernel/tracing"), 0);
	snprintf(info, sizeof(info), "%s/self/none", root);
	CHECK_INT(swt_fs_mounted_at(info, "proc", "/proc"), -1);
	drop_root();
}

TEST(cgroup_full_is_zero_not_unknown)
{
	fresh_root();
	put("self/cgroup", "4:memory:/full\n");
	put("sys/fs/cgroup/memory/full/memory.limit_in_bytes", "268435456\n");
	put("sys/fs/cgroup/memory/full/memory.usage_in_bytes", "268435456\n");
	put("sys/fs/cgroup/memory/full/memory.stat", "total_inactive_file 0\n");
	CHECK_INT(swt_mem_available_kib(), 0);
	drop_root();
}

TEST(no_limit_is_memavailable)
{
	fresh_root();
	put("self/cgroup", "0::/\n4:memory:/\n");
	put("sys/fs/cgroup/memory.max", "max\n");
	put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	CHECK_AVAILABLE(-1);
	/* and the test seam that replaces it all */
	setenv("SWT_TEST_MEM_AVAILABLE_KIB", "1234", 1);
	CHECK_INT(swt_mem_available_kib(), 1234);
	unsetenv("SWT_TEST_MEM_AVAILABLE_KIB");
	drop_root();
}

/*
 * The limit a capture records for its target's cgroup: a parent's binds a
 * child with none of its own (it was recorded as unlimited, and replay
 * then had no memory size to start from), and the lowest one counts.
 */
TEST(memcg_limit_is_the_lowest_up_the_tree)
{
	char dir[256];

	fresh_root();
	put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put("sys/fs/cgroup/memory/slice/memory.limit_in_bytes", "67108864\n");
	put("sys/fs/cgroup/memory/slice/job/memory.limit_in_bytes", "9223372036854771712\n");
	snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup/memory/slice/job/", root);
	CHECK_INT(swt_memcg_effective_limit(dir), 67108864);
	snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup/memory", root);
	CHECK_INT(swt_memcg_effective_limit(dir), -1);
	/* v2: the grandparent's 1 GiB under the parent's 2 GiB */
	put("sys/fs/cgroup/a/memory.max", "1073741824\n");
	put("sys/fs/cgroup/a/b/memory.max", "2147483648\n");
	put("sys/fs/cgroup/a/b/c/memory.max", "max\n");
	snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup/a/b/c", root);
	CHECK_INT(swt_memcg_effective_limit(dir), 1073741824);
	drop_root();
}

/* every number swaptrace reads is decimal: zero-padded ones were octal */
TEST(numbers_are_decimal)
{
	uint64_t u = 0;
	int64_t i = 0;
	int n = 0;

	CHECK_INT(swt_parse_u64("010", &u), 0);
	CHECK_INT((int)u, 10);
	CHECK_INT(swt_parse_u64("09", &u), 0);
	CHECK_INT((int)u, 9);
	CHECK_INT(swt_parse_i64("-010", &i), 0);
	CHECK_INT((int)i, -10);
	CHECK_INT(swt_parse_int("0262144", &n), 0);
	CHECK_INT(n, 262144);
	CHECK_INT(swt_parse_u64("0x10", &u), -SWT_EUSAGE);
	CHECK_INT(swt_parse_i64("0x10", &i), -SWT_EUSAGE);
	CHECK_INT(swt_parse_u64("-1", &u), -SWT_EUSAGE);
	CHECK_INT(swt_parse_u64(" -5", &u), -SWT_EUSAGE);
	/* digits only: strtoll's blanks and '+' were taken (-c ' +3' was page-cluster 3) */
	CHECK_INT(swt_parse_u64("+5", &u), -SWT_EUSAGE);
	CHECK_INT(swt_parse_u64(" 5", &u), -SWT_EUSAGE);
	CHECK_INT(swt_parse_i64("+5", &i), -SWT_EUSAGE);
	CHECK_INT(swt_parse_i64(" -5", &i), -SWT_EUSAGE);
	CHECK_INT(swt_parse_i64("-", &i), -SWT_EUSAGE);
	CHECK_INT(swt_parse_i64("--5", &i), -SWT_EUSAGE);
	CHECK_INT(swt_parse_int(" 3", &n), -SWT_EUSAGE);
	CHECK_INT(swt_parse_i64("-5", &i), 0);
	CHECK_INT((int)i, -5);
	{
		static const char *const bad[] = { "+0.5", " 0.5", "0x1p-1", "inf", "-nan", ".", "-.", "" };
		double d;

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
			CHECK_INT(swt_parse_double(bad[k], &d), -SWT_EUSAGE);
		CHECK_INT(swt_parse_double("-.5", &d), 0);
		CHECK(d == -0.5);
		CHECK_INT(swt_parse_double("1e3", &d), 0);
		CHECK(d == 1000.0);
	}
	CHECK_INT(swt_parse_u64("18446744073709551616", &u), -SWT_EUSAGE);
}


/*
 * An error message keeps its advice after three long paths, and one too
 * long for the report keeps its start and its end -- the cause after a
 * path of kilobytes -- with an ellipsis for the middle, cut between
 * UTF-8 characters.
 */
TEST(error_messages_fit_long_paths)
{
	static const char ellipsis[] = "\xe2\x80\xa6", cause[] = "': cannot create directory: "
								      "File name too long";
	struct swt_err err = { 0 };
	char path[1001];
	char *huge = malloc(3 * sizeof(err.msg));
	const char *cut;
	size_t len;

	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	CHECK_INT(swt_error(&err, SWT_EUSAGE, "'%s', '%s' and '%s': give its path", path, path,
			    path),
		  -SWT_EUSAGE);
	CHECK_INT(err.code, SWT_EUSAGE);
	CHECK(strstr(err.msg, "': give its path") != NULL);
	/* the first error recorded wins */
	CHECK_INT(swt_error(&err, SWT_EIO, "later"), -SWT_EIO);
	CHECK_INT(err.code, SWT_EUSAGE);

	CHECK(huge != NULL);
	if (!huge)
		return;
	/* a path of 'h', then of two-byte characters at either parity */
	for (int kind = 0; kind < 3; kind++) {
		size_t n = 3 * sizeof(err.msg) - 1;

		memset(huge, 'h', n);
		if (kind) {
			for (size_t i = (size_t)kind - 1; i + 1 < n; i += 2)
				memcpy(huge + i, "\xc3\xa9", 2);	/* U+00E9 */
			huge[n - 1] = 'h';
		}
		huge[n] = '\0';
		swt_err_clear(&err);
		CHECK_INT(err.code, 0);
		CHECK_INT(swt_error(&err, SWT_EIO, "'%s%s", huge, cause), -SWT_EIO);
		len = strlen(err.msg);
		CHECK(len <= sizeof(err.msg) - 1);
		CHECK(len + 3 >= sizeof(err.msg) - 1);
		CHECK(len > strlen(cause) && !strcmp(err.msg + len - strlen(cause), cause));
		CHECK(!strncmp(err.msg, "'hh", 3) || !strncmp(err.msg, "'h\xc3\xa9", 4) ||
		      !strncmp(err.msg, "'\xc3\xa9", 3));
		cut = strstr(err.msg, ellipsis);
		CHECK(cut != NULL);
		if (!cut)
			continue;
		/* whole characters either side of it */
		CHECK((unsigned char)cut[-1] < 0x80 || (unsigned char)cut[-1] == 0xa9);
		CHECK((unsigned char)cut[3] < 0x80 || (unsigned char)cut[3] == 0xc3);
	}
	free(huge);
}


/* Parts are zeroed, 64-byte aligned, apart, in a 2 MiB-aligned mapping; gaps poisoned under ASan. */
TEST(arena_parts_are_apart_aligned_and_zeroed)
{
	struct swt_arena a = { 0 };
	uint32_t *small = NULL, *big = NULL;
	char *empty = NULL, *odd = NULL;
	const size_t nbig = (3u << 20) / sizeof(uint32_t);
	const struct swt_arena_part parts[] = {
		{ (void **)&small, 3 * sizeof(uint32_t), 0 },
		{ (void **)&empty, 0, 1 },
		{ (void **)&odd, 65, 0 },
		{ (void **)&big, nbig * sizeof(uint32_t), 0 },
	};
	int zero = 1;

	CHECK_INT(swt_arena_carve(&a, parts, SWT_ARRAY_SIZE(parts)), 0);
	CHECK(small && empty && odd && big);
	if (!small || !empty || !odd || !big)
		return;
	CHECK((uintptr_t)a.map % (2u << 20) == 0);
	CHECK(a.size % (2u << 20) == 0 && a.size >= (3u << 20) + 256);
	CHECK((char *)small == a.map);
	CHECK((char *)empty >= (char *)(small + 3) && odd >= empty + 1);
	CHECK((char *)big >= odd + 65 && (char *)(big + nbig) <= a.map + a.size);
	CHECK((uintptr_t)empty % 64 == 0 && (uintptr_t)odd % 64 == 0 && (uintptr_t)big % 64 == 0);
	for (size_t i = 0; i < nbig; i += 1021)
		zero &= big[i] == 0;
	CHECK(zero && small[2] == 0 && odd[64] == 0);
	small[2] = 7;
	odd[64] = 1;
	big[nbig - 1] = 9;
	CHECK(small[2] == 7 && odd[64] == 1 && big[nbig - 1] == 9);
#if defined(__SANITIZE_ADDRESS__)
	/* an overrun of one part is caught before it reaches the next */
	CHECK(__asan_address_is_poisoned(small + 3));
	CHECK(__asan_address_is_poisoned(odd + 65));
	CHECK(!__asan_address_is_poisoned(odd + 64));
	CHECK(__asan_address_is_poisoned(big + nbig));
#endif
	swt_arena_release(&a);
	CHECK(a.map == NULL && a.size == 0);
	swt_arena_release(&a);	/* released twice: a no-op */
}

/* Pages resident of [p, p + bytes), by mincore(). */
static size_t resident_pages(const void *p, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n, in = 0;
	uintptr_t from = (uintptr_t)p - (uintptr_t)p % page;
	unsigned char *vec;

	n = ((uintptr_t)p + bytes - from + page - 1) / page;
	vec = calloc(n, 1);
	if (!vec || mincore((void *)from, n * page, vec)) {
		free(vec);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	free(vec);
	return in;
}

/*
 * A part to populate is mapped in as it is placed, the others at their
 * first touch: the replay's timed loop writes its tables from the start.
 */
TEST(arena_populates_the_parts_asked)
{
	struct swt_arena a = { 0 };
	char *lazy = NULL, *ready = NULL, *probe;
	const size_t bytes = 6u << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	const struct swt_arena_part parts[] = {
		{ (void **)&lazy, bytes, 0 },
		{ (void **)&ready, bytes, 1 },
	};

	/* a kernel before 5.14 lacks MADV_POPULATE_WRITE: the parts are lazy there */
	probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(probe != MAP_FAILED);
	if (probe == MAP_FAILED)
		return;
	if (madvise(probe, page, 23 /* MADV_POPULATE_WRITE */)) {
		fprintf(stderr, "note: this kernel lacks MADV_POPULATE_WRITE: not checked\n");
		munmap(probe, page);
		return;
	}
	munmap(probe, page);
	CHECK_INT(swt_arena_carve(&a, parts, SWT_ARRAY_SIZE(parts)), 0);
	if (!lazy || !ready)
		return;
	CHECK(resident_pages(ready, bytes) == (bytes + page - 1) / page + ((uintptr_t)ready % page != 0));
	/* its first 2 MiB share no huge page with the populated part */
	CHECK(resident_pages(lazy, 2u << 20) == 0);
	CHECK(ready[0] == 0 && ready[bytes - 1] == 0);
	swt_arena_release(&a);
}

/*
 * swt_alloc_written's zeros are written as it allocates, every page of a
 * large block resident at once (calloc leaves them to first touch, which
 * costs two faults a page where a table is read before it is written).
 */
TEST(alloc_written_is_zeroed_and_resident)
{
	const size_t n = (4u << 20) / sizeof(uint64_t), page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t *t = swt_alloc_written(n, sizeof(*t)), any = 0;
	char *none = swt_alloc_written(0, 8);

	CHECK(t != NULL);
	if (t) {
		size_t in = resident_pages(t, n * sizeof(*t)), pages = n * sizeof(*t) / page;

		/* the block's first and last pages may share theirs with the heap */
		CHECK(in != SIZE_MAX && in >= pages);
		for (size_t i = 0; i < n; i += 509)
			any |= t[i];
		CHECK(any == 0 && t[n - 1] == 0);
	}
	CHECK(none != NULL);	/* a zero-size table is a valid pointer, as malloc(1) */
	CHECK(swt_alloc_written(SIZE_MAX / 4, 8) == NULL);
	free(t);
	free(none);
}

/* swt_reserve's room is used by swt_grow up to the bound, and grown past it as before */
TEST(reserve_then_grow)
{
	uint32_t *v, *kept;
	size_t cap;

	swt_reserve((void **)&v, &cap, 1000, sizeof(*v));
	CHECK(v != NULL && cap == 1000);
	if (!v)
		return;
	kept = v;
	CHECK_INT(swt_grow((void **)&v, &cap, 1000, sizeof(*v)), 0);
	CHECK(v == kept && cap == 1000);
	for (size_t i = 0; i < 1000; i++)
		v[i] = (uint32_t)i;
	CHECK_INT(swt_grow((void **)&v, &cap, 1001, sizeof(*v)), 0);
	CHECK(cap >= 1001 && v[999] == 999 && v[1000] == 0);
	free(v);
	/* no bound, or none that fits: nothing reserved, swt_grow starts from nothing */
	swt_reserve((void **)&v, &cap, 0, sizeof(*v));
	CHECK(v == NULL && cap == 0);
	swt_reserve((void **)&v, &cap, SIZE_MAX / 2, sizeof(*v));
	CHECK(v == NULL && cap == 0);
}

/*
 * Whether the mapping holding addr is advised huge (VmFlags "hg" in
 * /proc/self/smaps): 1, 0, or -1 when smaps does not say.
 */
static int advised_huge(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, ret = -1;
	uintptr_t a = (uintptr_t)addr;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			ret = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* big tables get their whole 2 MiB pages advised huge, small ones are left alone */
TEST(big_tables_are_advised_huge)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	size_t cap;
	uint64_t *written = swt_alloc_written((8u << 20) / 8, 8), *reserved, *grown = NULL;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK)) {
		printf("  (skipped: this kernel has no transparent huge pages)\n");
		free(written);
		return;
	}
	swt_reserve((void **)&reserved, &cap, (8u << 20) / 8, 8);
	cap = 0;
	CHECK_INT(swt_grow((void **)&grown, &cap, (8u << 20) / 8, 8), 0);
	CHECK(written && reserved && grown);
	if (written && reserved && grown) {
		/* a whole huge page inside each: the one after its start's */
		CHECK_INT(advised_huge((void *)(((uintptr_t)written + huge) & ~(huge - 1))), 1);
		CHECK_INT(advised_huge((void *)(((uintptr_t)reserved + huge) & ~(huge - 1))), 1);
		CHECK_INT(advised_huge((void *)(((uintptr_t)grown + huge) & ~(huge - 1))), 1);
	}
	free(written);
	free(reserved);
	free(grown);
}

/* swt_sort_key_values against a reference sort, keys differing in one byte to all eight */
static int cmp_reference(const void *a, const void *b)
{
	const struct swt_key_value *x = a, *y = b;

	/* stable: equal keys keep their order, which the values hold */
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->value > y->value) - (x->value < y->value);
}

TEST(sort_key_values_is_a_stable_radix_sort)
{
	static const uint64_t masks[] = {
		0, 0xff, 0xff00, 0xffff, 0xff0000000000ull, 0xffffffffull, ~0ull, 0x8000000000000001ull,
	};
	const size_t sizes[] = { 0, 1, 2, 7, 1000, 20011 };
	uint64_t state = 88172645463325252ull;

	for (size_t m = 0; m < SWT_ARRAY_SIZE(masks); m++) {
		for (size_t z = 0; z < SWT_ARRAY_SIZE(sizes); z++) {
			size_t n = sizes[z];
			struct swt_key_value *a = malloc((n + 1) * sizeof(*a));
			struct swt_key_value *tmp = malloc((n + 1) * sizeof(*tmp));
			struct swt_key_value *want = malloc((n + 1) * sizeof(*want));
			int same = 1;

			CHECK(a && tmp && want);
			if (!a || !tmp || !want) {
				free(a);
				free(tmp);
				free(want);
				return;
			}
			for (size_t i = 0; i < n; i++) {
				state ^= state << 13;
				state ^= state >> 7;
				state ^= state << 17;
				/* few distinct keys in the small masks: many ties to keep in order */
				a[i] = (struct swt_key_value){ .key = 0x1122334455667788ull ^ (state & masks[m]),
							       .value = i };
			}
			memcpy(want, a, n * sizeof(*a));
			qsort(want, n, sizeof(*want), cmp_reference);
			swt_sort_key_values(a, tmp, n);
			for (size_t i = 0; i < n; i++)
				same &= a[i].key == want[i].key && a[i].value == want[i].value;
			CHECK(same);
			free(a);
			free(tmp);
			free(want);
		}
	}
}

/* one quoter for report's printed commands and capture's recorded one */
TEST(shell_words)
{
	static const struct {
		const char *in;
		unsigned flags;
		const char *out;
	} cases[] = {
		{ "cap.db", 0, "'cap.db'" },
		{ "cap.db", SWT_SHELL_BARE, "cap.db" },
		{ "mb=64,x:y+1%@", SWT_SHELL_BARE, "mb=64,x:y+1%@" },
		{ "", SWT_SHELL_BARE, "''" },
		{ "it's", SWT_SHELL_BARE, "'it'\\''s'" },
		{ "'", 0, "''\\'''" },
		{ "-o x", SWT_SHELL_BARE, "'-o x'" },
		{ "a\nb", SWT_SHELL_BARE, "'a\nb'" },
		{ "a\nb", SWT_SHELL_BARE | SWT_SHELL_ONE_LINE, "'a b'" },
		{ "$HOME `x`", SWT_SHELL_BARE, "'$HOME `x`'" },
	};

	for (size_t i = 0; i < SWT_ARRAY_SIZE(cases); i++) {
		char *w = swt_shell_word(cases[i].in, cases[i].flags);

		CHECK_STR(w, cases[i].out);
		free(w);
	}
}

CHECK_MAIN
