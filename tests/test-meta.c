/*
 * Capture metadata and --swap statements: the shared captures' meta.txt
 * format, swaptrace capture's own keys, and malformed lines.
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "layout.h"
#include "meta.h"
#include "util.h"

static struct swt_meta *parse(const char *text, int *ret, struct swt_err *err)
{
	struct swt_meta *m = swt_meta_alloc();
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	*ret = swt_meta_parse_stream(m, f, "meta.txt", err);
	fclose(f);
	return m;
}

/*
 * A swap_device line (and what follows it) refused with msg, areas_left
 * areas in the failed parse (a bad field leaves none half-added).
 */
static void check_refused_line(const char *line, const char *msg, size_t areas_left)
{
	struct swt_err err = { 0 };
	struct swt_meta *m;
	char text[256];
	int ret;

	snprintf(text, sizeof(text), "kernel 6.19.0\n%s", line);
	m = parse(text, &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK_STR(err.msg, msg);
	CHECK_INT((long)m->nr_areas, (long)areas_left);
	swt_meta_free(m);
}

static const char shared_4dev[] =
	"kernel 6.18.44-fc-v657\n"
	"page_cluster 3\n"
	"vma_ra_enabled true\n"
	"kind loop ndev 4 swap_mb 1024\n"
	"workload ws_mb=256 limit_mb=205 mode=rnd accesses=120000 seed=21\n"
	"mode=rnd mb=256 accesses=120000 seconds=7.823 MBps=59.9\n"
	"# /proc/swaps at end\n"
	"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	"/dev/loop0                              partition\t262140\t\t8\t\t5\n"
	"/dev/loop1                              partition\t262140\t\t4\t\t5\n"
	"/dev/loop10                             partition\t262140\t\t4\t\t-2\n"
	"dev /dev/loop0 7:0 rotational=1\n"
	"dev /dev/loop1 7:1 rotational=1\n"
	"dev /dev/loop10 7:a rotational=0\n"
	"# vmstat delta\n"
	"pswpin 96511\n"
	"pswpout 59683\n"
	"swap_ra 21216\n"
	"# lost events\n";

TEST(shared_capture_format)
{
	struct swt_err err = { 0 };
	int ret;
	struct swt_meta *m = parse(shared_4dev, &ret, &err);

	CHECK_INT(ret, 0);
	CHECK_STR(m->kernel, "6.18.44-fc-v657");
	CHECK_INT(m->page_cluster, 3);
	CHECK_INT(m->vma_ra_enabled, 1);
	CHECK_INT(m->working_set_bytes, 256ll << 20);
	CHECK_INT(m->mem_limit_bytes, 205ll << 20);
	CHECK_INT(m->nr_areas, 3);
	CHECK_STR(m->areas[0].path, "/dev/loop0");
	CHECK_INT(m->areas[0].dev, swt_dev_make(7, 0));
	CHECK_INT(m->areas[0].slots, 262140 / 4 + 1);
	CHECK_INT(m->areas[0].priority, 5);
	CHECK_INT(m->areas[0].rotational, 1);
	CHECK_INT(m->areas[0].used_kib, 8);
	/* stat %t:%T prints hex: 7:a is minor 10 */
	CHECK_INT(m->areas[2].dev, swt_dev_make(7, 10));
	CHECK_INT(m->areas[2].priority, -2);
	CHECK_INT(m->areas[2].rotational, 0);
	CHECK_INT(swt_meta_vmstat_delta(m, "pswpin"), 96511);
	CHECK_INT(swt_meta_vmstat_delta(m, "swap_ra"), 21216);
	CHECK_INT(swt_meta_vmstat_delta(m, "swap_ra_hit"), SWT_META_UNKNOWN);
	CHECK_INT(m->lost_events, 0);
	CHECK_INT(m->nr_facts, 16);
	swt_meta_free(m);
}

TEST(capture_keys_and_vmstat_before_after)
{
	static const char text[] =
		"swaptrace-capture 1\n"
		"kernel 6.19.0\n"
		"page_size 4096\n"
		"ncpus 8\n"
		"mem_total_kib 24000000\n"
		"mem_limit_bytes 1048576\n"
		"probes none (no kprobe events)\n"
		"swap_device path=/dev/sda2 dev=8:2 type=partition prio=-2 rotational=1 sync=0 "
		"start=2048 slots=1000 size_kib=3996 used_kib=0\n"
		"swap_device path=/swap\\040files/a\\134b dev=8:1 type=file prio=-3 rotational=0 "
		"sync=0 start=0 slots=300\n"
		"extent area=1 first_slot=1 nr_slots=100 start_sector=80000\n"
		"extent area=1 first_slot=101 nr_slots=199 start_sector=90000\n"
		"# vmstat before\n"
		"pswpin 10\n"
		"# vmstat after\n"
		"pswpin 25\n"
		"# lost events\n"
		"cpu0 3\n"
		"cpu1 0\n";
	struct swt_err err = { 0 };
	int ret;
	struct swt_meta *m = parse(text, &ret, &err);

	CHECK_INT(ret, 0);
	CHECK_INT(m->page_size, 4096);
	CHECK_INT(m->ncpus, 8);
	CHECK_INT(m->mem_limit_bytes, 1048576);
	CHECK_STR(m->probes, "none (no kprobe events)");
	CHECK_INT(m->nr_areas, 2);
	CHECK_INT(m->areas[0].start_sector, 2048);
	CHECK_INT(m->areas[0].slots, 1000);
	CHECK_INT(m->areas[0].dev, swt_dev_make(8, 2));
	CHECK_STR(m->areas[1].type, "file");
	/* blanks and backslashes as /proc/swaps writes them (capture writes them so) */
	CHECK_STR(m->areas[1].path, "/swap files/a\\b");
	{
		char *e = swt_escape_octal("/a b\\c\td");

		CHECK_STR(e, "/a\\040b\\134c\\011d");
		swt_unescape_octal(e);
		CHECK_STR(e, "/a b\\c\td");
		free(e);
	}
	CHECK_INT(m->areas[1].nr_extents, 2);
	CHECK_INT(m->areas[1].extents[1].start_sector, 90000);
	CHECK_INT(swt_meta_vmstat_delta(m, "pswpin"), 15);
	CHECK_INT(m->lost_events, 3);
	swt_meta_free(m);
}

/*
 * A slot is a page of the capture's own size: on a host of 64 KiB pages
 * (ppc64, some arm64) size / 4 + 1 made 16 times the slots the area has.
 * page_size after the areas counts as much as before them.
 */
/*
 * An area's used_kib is the start's (the replay's walk counts the trace's
 * swap-outs on top of it): /proc/swaps at the end, with those swap-outs on
 * it, does not replace it; it gives it where nothing earlier did.
 */
TEST(used_is_the_start_not_the_end)
{
	static const char text[] =
		"swaptrace-capture 1\n"
		"page_size 4096\n"
		"swap_device path=/dev/loop0 dev=7:0 type=partition prio=5 rotational=1 sync=0 "
		"start=0 slots=32768 size_kib=131068 used_kib=1000\n"
		"# /proc/swaps at start\n"
		"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		"/dev/loop0\tpartition\t131068\t\t1000\t\t5\n"
		"/dev/loop1\tpartition\t131068\t\t200\t\t5\n"
		"# /proc/swaps at end\n"
		"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		"/dev/loop0\tpartition\t131068\t\t50000\t\t5\n"
		"/dev/loop1\tpartition\t131068\t\t60000\t\t5\n"
		"/dev/loop2\tpartition\t131068\t\t700\t\t5\n";
	struct swt_err err = { 0 };
	int ret;
	struct swt_meta *m = parse(text, &ret, &err);

	CHECK_INT(ret, 0);
	CHECK_INT(m->nr_areas, 3);
	CHECK_INT(m->areas[0].used_kib, 1000);
	CHECK_INT(m->areas[1].used_kib, 200);
	/* swapped on during the capture: the end is all there is */
	CHECK_INT(m->areas[2].used_kib, 700);
	swt_meta_free(m);
}

TEST(slots_take_the_page_size)
{
	static const char *const text[] = {
		"page_size 65536\n"
		"swap_device path=/dev/sda2 dev=8:2 start=2048 size_kib=524224\n"
		"# /proc/swaps at end\n"
		"/dev/loop0 partition 1048512 0 5\n"
		"dev /dev/loop0 7:0 rotational=1\n",
		"swap_device path=/dev/sda2 dev=8:2 start=2048 size_kib=524224\n"
		"page_size 65536\n"
		"# /proc/swaps at end\n"
		"/dev/loop0 partition 1048512 0 5\n"
		"dev /dev/loop0 7:0 rotational=1\n",
	};
	struct swt_err err = { 0 };
	struct swt_meta *m;
	int ret;

	for (size_t i = 0; i < 2; i++) {
		m = parse(text[i], &ret, &err);
		CHECK_INT(ret, 0);
		CHECK_INT(m->page_size, 65536);
		CHECK_INT(m->nr_areas, 2);
		CHECK_INT(m->areas[0].slots, 524224 / 64 + 1);
		CHECK_INT(m->areas[1].slots, 1048512 / 64 + 1);
		swt_meta_free(m);
	}
	/* 4 KiB pages, said or not: as before */
	m = parse(text[0] + strlen("page_size 65536\n"), &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(m->page_size, SWT_META_UNKNOWN);
	CHECK_INT(m->areas[0].slots, 524224 / 4 + 1);
	CHECK_INT(m->areas[1].slots, 1048512 / 4 + 1);
	swt_meta_free(m);
	m = parse("page_size 4096\nswap_device dev=8:2 size_kib=524224\n", &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(m->areas[0].slots, 524224 / 4 + 1);
	swt_meta_free(m);

	/* --swap takes the page size it is given (the metadata file's) */
	m = swt_meta_alloc();
	m->page_size = 65536;
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,size=524224", &err), 0);
	CHECK_INT(m->areas[0].slots, 524224 / 64 + 1);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=4096,slots=8192,size=524224", &err), 0);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=8192,slots=131057,size=524224", &err),
		  -SWT_EUSAGE);
	CHECK_STR(err.msg, "bad --swap '8:0,start=8192,slots=131057,size=524224': slots=131057 and "
		  "size=524224 disagree: with 64 KiB pages, slots = size / 64 + 1 (the header page)");
	CHECK_INT(m->nr_areas, 2);
	swt_meta_free(m);
	swt_err_clear(&err);
	m = swt_meta_alloc();
	m->page_size = 4096;
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,slots=131057,size=524224", &err), 0);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=8,slots=8192,size=524224", &err),
		  -SWT_EUSAGE);
	CHECK_STR(err.msg, "bad --swap '8:0,start=8,slots=8192,size=524224': slots=8192 and "
		  "size=524224 disagree: with 4 KiB pages, slots = size / 4 + 1 (the header page)");
	swt_meta_free(m);
	swt_err_clear(&err);
	m = swt_meta_alloc();
	m->page_size = 512;
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,size=100", &err), 0);
	CHECK_INT(m->areas[0].slots, 201);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=8,slots=26,size=100", &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "bad --swap '8:0,start=8,slots=26,size=100': slots=26 and size=100 "
		  "disagree: with 512-byte pages, slots = size * 2 + 1 (the header page)");
	swt_meta_free(m);
	swt_err_clear(&err);
}

/*
 * An area /proc/swaps lists with no block device (a swap file on btrfs)
 * still takes its swap type: the next area's id is 1, as the kernel's
 * swp_type, which swap-entry probes name.
 */
TEST(unmapped_area_keeps_its_swap_type)
{
	struct swt_err err = { 0 };
	struct swt_layout l;
	size_t skipped = 0;
	int ret;
	struct swt_meta *m = parse("swap_unmapped path=/mnt/btrfs/swap reason=no\\040extents\n"
				   "swap_device path=/dev/loop0 dev=7:0 type=partition prio=5 "
				   "start=0 slots=1000\n"
				   "swap_device path=/dev/loop1 dev=7:1 type=partition prio=5 "
				   "start=0 slots=1000\n"
				   "extent area=1 first_slot=1 nr_slots=10 start_sector=8\n", &ret, &err);

	CHECK_INT(ret, 0);
	CHECK_INT(m->nr_areas, 2);
	CHECK_INT(m->areas[0].swap_type, 1);
	CHECK_INT(m->areas[1].swap_type, 2);
	/* extents still name their area among the swap_device lines */
	CHECK_INT(m->areas[1].nr_extents, 1);
	CHECK_INT(swt_layout_init(&l, m, &skipped), 0);
	CHECK_INT(l.nr_areas, 2);
	CHECK_INT(l.areas[0].id, 1);
	CHECK_INT(l.areas[1].id, 2);
	swt_layout_release(&l);
	swt_meta_free(m);
}

TEST(bad_lines)
{
	struct swt_err err = { 0 };
	int ret;
	struct swt_meta *m;

	m = parse("kernel x\npage_cluster many\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK_STR(err.msg, "'meta.txt': line 2: bad value 'many' for page_cluster");
	swt_meta_free(m);

	/* beyond vm.page-cluster's 31: 2^32 + 3 was read back by replay as 3 */
	swt_err_clear(&err);
	m = parse("kernel x\npage_cluster 4294967299\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK_STR(err.msg, "'meta.txt': line 2: bad value '4294967299' for page_cluster");
	swt_meta_free(m);
	swt_err_clear(&err);
	m = parse("kernel x\npage_cluster 31\n", &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(m->page_cluster, 31);
	swt_meta_free(m);

	swt_err_clear(&err);
	m = parse("# vmstat delta\npswpin lots\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK(strstr(err.msg, "line 2") != NULL);
	swt_meta_free(m);

	/*
	 * a before and an after whose difference is beyond int64_t (signed
	 * overflow, undefined: UBSan stopped ingest), or INT64_MIN, which is
	 * SWT_META_UNKNOWN (the delta taken as missing), are refused
	 */
	for (size_t i = 0; i < 3; i++) {
		static const char *const text[] = {
			"# vmstat before\npswpin -2\n# vmstat after\npswpin 9223372036854775807\n",
			"# vmstat after\npswpin -1\n# vmstat before\npswpin 9223372036854775807\n",
			"# vmstat before\npswpin -9223372036854775808\n",
		};
		static const char *const msg[] = {
			"'meta.txt': line 4: vmstat pswpin: after - before (9223372036854775807 - -2) "
			"is out of range",
			"'meta.txt': line 4: vmstat pswpin: after - before (-1 - 9223372036854775807) "
			"is out of range",
			"'meta.txt': line 2: bad vmstat value '-9223372036854775808'",
		};

		swt_err_clear(&err);
		m = parse(text[i], &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK_STR(err.msg, msg[i]);
		swt_meta_free(m);
	}
	/* a lost events count that is not one: its events went uncounted */
	for (size_t i = 0; i < 3; i++) {
		static const char *const count[] = { "12x", "-5", "99999999999999999999" };
		char text[128], msg[128];

		snprintf(text, sizeof(text), "# lost events\ncpu0 1\ncpu1 %s\n", count[i]);
		snprintf(msg, sizeof(msg), "'meta.txt': line 3: bad lost events count '%s'", count[i]);
		swt_err_clear(&err);
		m = parse(text, &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK_STR(err.msg, msg);
		swt_meta_free(m);
	}
	/* a line of another key under lost events: it was counted as lost events */
	swt_err_clear(&err);
	m = parse("# lost events\ncpu0 1\ntotal 1\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK_STR(err.msg, "'meta.txt': line 3: lost events line 'total' is not \"cpuN COUNT\"");
	swt_meta_free(m);
	swt_err_clear(&err);
	m = parse("# lost events\ncpu 1\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	swt_meta_free(m);
	/*
	 * a dev line whose rotational= is no 0 or 1, or with a word more, was
	 * taken as saying nothing of the disk; one for a path given twice, the
	 * later won
	 */
	for (size_t i = 0; i < 4; i++) {
		static const char *const text[] = {
			"dev /dev/loop0 7:0 rotational=7\n",
			"dev /dev/loop0 7:0 rotational=\n",
			"dev /dev/loop0 7:0 rotational=1 extra\n",
			"dev /dev/loop0 7:0 sync=1\n",
		};

		swt_err_clear(&err);
		m = parse(text[i], &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK_STR(err.msg, "'meta.txt': line 1: bad dev line (\"dev PATH MAJ:MIN "
			  "[rotational=0|1]\", numbers in hex)");
		swt_meta_free(m);
	}
	swt_err_clear(&err);
	m = parse("dev /dev/loop0 7:0 rotational=1\ndev /dev/loop0 7:1 rotational=0\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK_STR(err.msg, "'meta.txt': line 2: dev line for '/dev/loop0' given twice (first on "
		  "line 1)");
	swt_meta_free(m);
	/* ... and one without rotational=, or two for two paths, are as they were */
	swt_err_clear(&err);
	m = parse("dev /dev/loop0 7:0\ndev /dev/loop1 7:1 rotational=0\n", &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(m->nr_areas, 2);
	CHECK_INT(m->areas[0].rotational, SWT_META_UNKNOWN);
	CHECK_INT(m->areas[1].rotational, 0);
	CHECK_INT(m->areas[1].dev, swt_dev_make(7, 1));
	swt_meta_free(m);
	/* ... and the extremes whose difference fits are kept */
	swt_err_clear(&err);
	m = parse("# vmstat before\npswpin 0\n# vmstat after\npswpin 9223372036854775807\n",
		  &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(swt_meta_vmstat_delta(m, "pswpin"), INT64_MAX);
	swt_meta_free(m);

	swt_err_clear(&err);
	m = parse("swap_device path=/dev/x prio=1\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK(strstr(err.msg, "without dev=") != NULL);
	swt_meta_free(m);

	/*
	 * a key given twice on a swap_device line (or under its alias) is
	 * refused, as --swap refuses it: the last value was kept, silently.
	 * The disk's request limits, too, and they are whole numbers from 1 up
	 * to 2^31 - 1 (replay reads them from capture_fact, so a bad one is
	 * refused here): words parted by tabs too, in any section.
	 */
	for (size_t i = 0; i < 13; i++) {
		static const char *const line[] = {
			"swap_device path=/dev/sda2 dev=8:0 start=8 slots=100 start=16\n",
			"swap_device path=/dev/sda2 dev=8:0 size=400 size_kib=800\n",
			"swap_device path=/dev/sda2 dev=8:0 type=partition kind=file\n",
			"swap_device dev=8:0 path=/dev/sda2 dev=8:16\n",
			"swap_device path=/dev/sda2 dev=8:0 max_segments=128 max_segments=64\n",
			"swap_device path=/dev/sda2 dev=8:0 max_sectors_kb=128 max_sectors_kb=128\n",
			"swap_device path=/dev/sda2 dev=8:0 max_sectors_kb=0\n",
			"swap_device path=/dev/sda2 dev=8:0 max_segments=12x\n",
			"swap_device\tpath=/dev/sda2\tdev=8:0\tmax_segments=8\tmax_segments=8\n",
			"# swap\nswap_device path=/dev/sda2 dev=8:0 max_sectors_kb=1 max_sectors_kb=1\n",
			"swap_device path=/dev/sda2 dev=8:0 max_sectors_kb=2147483648\n",
			"swap_device path=/dev/sda2 dev=8:0 max_segments=\n",
			"swap_device path=/dev/sda2 dev=8:0 max_sectors_kb\n",
		};
		static const char *const msg[] = {
			"'meta.txt': line 2: bad swap_device field 'start=16': start= given twice",
			"'meta.txt': line 2: bad swap_device field 'size_kib=800': size= given twice",
			"'meta.txt': line 2: bad swap_device field 'kind=file': type= given twice",
			"'meta.txt': line 2: bad swap_device field 'dev=8:16': dev= given twice",
			"'meta.txt': line 2: bad swap_device field 'max_segments=64': max_segments= given twice",
			"'meta.txt': line 2: bad swap_device field 'max_sectors_kb=128': max_sectors_kb= given twice",
			"'meta.txt': line 2: bad swap_device field 'max_sectors_kb=0': a whole number from 1",
			"'meta.txt': line 2: bad swap_device field 'max_segments=12x': a whole number from 1",
			"'meta.txt': line 2: bad swap_device field 'max_segments=8': max_segments= given twice",
			"'meta.txt': line 3: bad swap_device field 'max_sectors_kb=1': max_sectors_kb= given twice",
			"'meta.txt': line 2: bad swap_device field 'max_sectors_kb=2147483648': a whole number "
			"from 1",
			"'meta.txt': line 2: bad swap_device field 'max_segments=': a whole number from 1",
			"'meta.txt': line 2: bad swap_device field 'max_sectors_kb'",
		};

		check_refused_line(line[i], msg[i], 0);
	}
	{
		m = parse("kernel 6.19.0\nswap_device path=/dev/nvme0n1p2 dev=259:0 type=partition "
			  "max_sectors_kb=128 max_segments=33 start=2048 slots=100\n", &ret, &err);
		CHECK_INT(ret, 0);
		CHECK_INT((long)m->nr_areas, 1);
		CHECK_INT((long)m->areas[0].start_sector, 2048);
		CHECK_INT((long)m->areas[0].slots, 100);
		swt_meta_free(m);
		/* up to 2^31 - 1 (a stacked device's), which replay caps at its largest request */
		m = parse("# devices\nswap_device\tpath=/dev/dm-0\tdev=253:0\tmax_sectors_kb=2147483647"
			  "\tmax_segments=2147483647\n", &ret, &err);
		CHECK_INT(ret, 0);
		CHECK_INT((long)m->nr_areas, 1);
		swt_meta_free(m);
	}
	/*
	 * slots= and size_kib= (or size=) that disagree are refused, as --swap
	 * refuses them: slots= won, silently; by the capture's page size, which
	 * may come after the line
	 */
	for (size_t i = 0; i < 4; i++) {
		static const char *const line[] = {
			"swap_device path=/dev/sda2 dev=8:0 start=8 slots=1000 size_kib=4000\n",
			"swap_device path=/dev/sda2 dev=8:0 size=4000 slots=1000\n",
			"swap_device path=/dev/sda2 dev=8:0 slots=1000 size_kib=3996\npage_size 65536\n",
			"swap_device path=/dev/sda2 dev=8:0 slots=1000 size_kib=0\n",
		};
		static const char *const msg[] = {
			"'meta.txt': line 2: swap_device slots=1000 and size_kib=4000 disagree: with "
			"4 KiB pages (no page_size given), slots = size_kib / 4 + 1 (the header page)",
			"'meta.txt': line 2: swap_device slots=1000 and size_kib=4000 disagree: with "
			"4 KiB pages (no page_size given), slots = size_kib / 4 + 1 (the header page)",
			"'meta.txt': line 2: swap_device slots=1000 and size_kib=3996 disagree: with "
			"64 KiB pages, slots = size_kib / 64 + 1 (the header page)",
			"'meta.txt': line 2: swap_device slots=1000 and size_kib=0 disagree: with "
			"4 KiB pages (no page_size given), slots = size_kib / 4 + 1 (the header page)",
		};

		check_refused_line(line[i], msg[i], 1);
	}
	/* ... and agree by the page size the file gives, wherever it gives it */
	swt_err_clear(&err);
	m = parse("swap_device path=/dev/sda2 dev=8:2 slots=63 size_kib=3968\n"
		  "swap_device path=/dev/sda3 dev=8:3 slots=11 size=640\npage_size 65536\n",
		  &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(m->areas[0].slots, 63);
	CHECK_INT(m->areas[1].slots, 11);
	swt_meta_free(m);
	/* every key once, as capture writes the line: taken */
	swt_err_clear(&err);
	m = parse("swap_device path=/dev/sda2 dev=8:2 type=partition prio=-2 rotational=1 sync=0 "
		  "start=2048 slots=1000 size_kib=3996 used_kib=0\n", &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(m->nr_areas, 1);
	swt_meta_free(m);

	swt_err_clear(&err);
	m = parse("dev /dev/loop0 zz rotational=1\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	swt_meta_free(m);

	/* extents that repeat or overlap another's slots (found by fuzzing:
	 * a repeated line failed as the database's key, naming no line) */
	for (size_t i = 0; i < 3; i++) {
		static const char *const ext[] = {
			"extent area=0 first_slot=0 nr_slots=8 start_sector=0\n",
			"extent area=0 first_slot=7 nr_slots=1 start_sector=99\n",
			"extent area=0 first_slot=1 nr_slots=0 start_sector=99\n",
		};
		char text[512];

		snprintf(text, sizeof(text), "swap_device path=/f dev=8:0\n"
			 "extent area=0 first_slot=0 nr_slots=8 start_sector=4096\n%s", ext[i]);
		swt_err_clear(&err);
		m = parse(text, &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK(strstr(err.msg, "'meta.txt': line 3: extent") != NULL);
		swt_meta_free(m);
	}

	/*
	 * slots the replay cannot index: the line is named here, where a
	 * first slot near 2^62 once sized the replay's tables past 2^64 bytes
	 */
	swt_err_clear(&err);
	m = parse("swap_device path=/f dev=8:0\n"
		  "extent area=0 first_slot=4294967295 nr_slots=1 start_sector=0\n", &ret, &err);
	CHECK_INT(ret, 0);
	swt_meta_free(m);
	/*
	 * ... and, after the first two, an extent of no slots, one whose slots
	 * wrap and one naming no area say which: all three were "extent needs
	 * area=N first_slot=N nr_slots=N start_sector=N", on a line giving all four
	 */
	for (size_t i = 0; i < 5; i++) {
		static const char *const ext[] = {
			"extent area=0 first_slot=4294967295 nr_slots=2 start_sector=0\n",
			"extent area=0 first_slot=4611686018427387904 nr_slots=8 start_sector=0\n",
			"extent area=0 first_slot=8 nr_slots=0 start_sector=99\n",
			"extent area=0 first_slot=18446744073709551615 nr_slots=8 start_sector=0\n",
			"extent area=1 first_slot=8 nr_slots=8 start_sector=99\n",
		};
		static const char *const msg[] = {
			"'meta.txt': line 3: extent slots 4294967295-4294967296: beyond what the "
			"replay handles (2^32)",
			"'meta.txt': line 3: extent slots 4611686018427387904-4611686018427387911: "
			"beyond what the replay handles (2^32)",
			"'meta.txt': line 3: extent of no slots (nr_slots=0)",
			"'meta.txt': line 3: extent slots from 18446744073709551615, 8 of them: "
			"beyond what the replay handles (2^32)",
			"'meta.txt': line 3: extent area=1: no swap area 1 stated before it",
		};
		char text[512];

		snprintf(text, sizeof(text), "swap_device path=/f dev=8:0\n"
			 "extent area=0 first_slot=0 nr_slots=8 start_sector=4096\n%s", ext[i]);
		swt_err_clear(&err);
		m = parse(text, &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK_STR(err.msg, msg[i]);
		swt_meta_free(m);
	}

	/* out of slot order: a later extent below an earlier one is still checked */
	swt_err_clear(&err);
	m = parse("swap_device path=/f dev=8:0\n"
		  "extent area=0 first_slot=8 nr_slots=8 start_sector=4096\n"
		  "extent area=0 first_slot=0 nr_slots=8 start_sector=8192\n"
		  "extent area=0 first_slot=16 nr_slots=8 start_sector=9000\n", &ret, &err);
	CHECK_INT(ret, 0);
	CHECK(m && m->nr_areas == 1 && m->areas[0].nr_extents == 3);
	swt_meta_free(m);
	swt_err_clear(&err);
	m = parse("swap_device path=/f dev=8:0\n"
		  "extent area=0 first_slot=8 nr_slots=8 start_sector=4096\n"
		  "extent area=0 first_slot=0 nr_slots=8 start_sector=8192\n"
		  "extent area=0 first_slot=5 nr_slots=1 start_sector=9000\n", &ret, &err);
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK(strstr(err.msg, "'meta.txt': line 4: extent slots 5-5 overlap") != NULL);
	swt_meta_free(m);

	/* page sizes ingest cannot divide swap I/O into (found by fuzzing:
	 * 100 made sectors per page 0, and a division by zero) */
	for (size_t i = 0; i < 4; i++) {
		static const char *const bad[] = {
			"page_size 100\n", "page_size 6144\n", "page_size 0\n",
			"page_size 2199023255552\n",
		};

		swt_err_clear(&err);
		m = parse(bad[i], &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK(strstr(err.msg, "'meta.txt': line 1: bad value") != NULL);
		swt_meta_free(m);
	}
}

/*
 * A number is its digits, after a '-' where it may be negative, as maps
 * numbers are: strtoll took a '+' and blanks first ("+3" was 3).
 */
TEST(numbers_are_digits_only)
{
	static const char *const text[] = {
		"kernel x\npage_cluster +3\n",
		"page_size +4096\n",
		"# vmstat delta\npswpin +5\n",
		"# lost events\ncpu0 +1\n",
		"swap_device dev=8:0 prio=+5\n",
		"swap_device dev=8:0 start=+8\n",
		"swap_device dev=+8:0\n",
		"swap_device dev=8:+0\n",
		"swap_device path=/f dev=8:0\nextent area=0 first_slot=+0 nr_slots=8 start_sector=0\n",
		"# /proc/swaps at end\ndev /dev/loop0 +7:0 rotational=1\n",
		"# /proc/swaps at end\ndev /dev/loop0 7:+a rotational=1\n",
		"# /proc/swaps at end\n/dev/loop0 partition +1048572 0 5\n",
		"# /proc/swaps at start\n/dev/loop0 partition 1048572 0 +5\n",
		"workload ws_mb=256 limit_mb=+205\n",
		"workload ws_mb=0x100 limit_mb=205\n",
		/* the kernel's priorities are a signed short */
		"swap_device dev=8:0 prio=32768\n",
		"# /proc/swaps at end\n/dev/loop0 partition 1048572 0 -32769\n",
	};
	static const char *const msg[] = {
		"'meta.txt': line 2: bad value '+3' for page_cluster",
		"'meta.txt': line 1: bad value '+4096' for page_size",
		"'meta.txt': line 2: bad vmstat value '+5'",
		"'meta.txt': line 2: bad lost events count '+1'",
		"'meta.txt': line 1: bad swap_device field 'prio=+5'",
		"'meta.txt': line 1: bad swap_device field 'start=+8'",
		"'meta.txt': line 1: bad swap_device field 'dev=+8:0'",
		"'meta.txt': line 1: bad swap_device field 'dev=8:+0'",
		"'meta.txt': line 2: extent needs area=N first_slot=N nr_slots=N start_sector=N",
		"'meta.txt': line 2: bad dev line (\"dev PATH MAJ:MIN [rotational=0|1]\", numbers "
		"in hex)",
		"'meta.txt': line 2: bad dev line (\"dev PATH MAJ:MIN [rotational=0|1]\", numbers "
		"in hex)",
		"'meta.txt': line 2: bad /proc/swaps row: expected Filename Type Size Used Priority, "
		"numbers in digits",
		"'meta.txt': line 2: bad /proc/swaps row: expected Filename Type Size Used Priority, "
		"numbers in digits",
		"'meta.txt': line 1: bad value '+205' for limit_mb",
		"'meta.txt': line 1: bad value '0x100' for ws_mb",
		"'meta.txt': line 1: bad swap_device field 'prio=32768'",
		"'meta.txt': line 2: bad /proc/swaps row: priority -32769 is outside -32768..32767",
	};
	struct swt_err err = { 0 };
	struct swt_meta *m;
	int ret;

	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		swt_err_clear(&err);
		m = parse(text[i], &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK_STR(err.msg, msg[i]);
		swt_meta_free(m);
	}
	/* --swap reads its words alike: " 5" was 5 */
	m = swt_meta_alloc();
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,prio= 5", &err), -SWT_EUSAGE);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=+8", &err), -SWT_EUSAGE);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,prio=40000", &err), -SWT_EUSAGE);
	CHECK_INT(m->nr_areas, 0);
	/* negative where a value may be: a priority, a vmstat delta */
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,prio=-2", &err), 0);
	CHECK_INT(m->areas[0].priority, -2);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:1,prio=32767", &err), 0);
	CHECK_INT(m->areas[1].priority, 32767);
	swt_meta_free(m);
	m = parse("# vmstat delta\npswpin -5\n", &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(swt_meta_vmstat_delta(m, "pswpin"), -5);
	swt_meta_free(m);
	/* a swap area's priority; and a workload size may have a fraction */
	m = parse("workload ws_mb=0.5 limit_mb=205\n# /proc/swaps at end\n"
		  "/dev/loop0 partition 1048572 0 -2\n", &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(m->working_set_bytes, 524288);
	CHECK_INT(m->mem_limit_bytes, 205 * 1048576);
	CHECK_INT(m->nr_areas, 1);
	CHECK_INT(m->areas[0].priority, -2);
	swt_meta_free(m);
}

/* a key that holds one value, given twice: the last won, silently */
TEST(key_given_twice)
{
	static const char *const text[] = {
		"kernel x\npage_cluster 3\npage_cluster 0\n",
		"page_size 4096\nkernel x\nkernel y\n",
		"end command\n# vmstat delta\npswpin 1\n#\nend error\n",
		"# vmstat delta\npswpin 1\npswpout 2\npswpin 3\n",
		"# vmstat before\npswpin 1\n# vmstat after\npswpin 5\npswpin 6\n",
		"kernel x\nlru_gen 0x0007\nlru_gen absent\n",
	};
	static const char *const msg[] = {
		"'meta.txt': line 3: page_cluster given twice (first on line 2)",
		"'meta.txt': line 3: kernel given twice (first on line 2)",
		"'meta.txt': line 5: end given twice (first on line 1)",
		"'meta.txt': line 4: vmstat pswpin given twice in '# vmstat delta' (first on line 2)",
		"'meta.txt': line 5: vmstat pswpin given twice in '# vmstat after' (first on line 4)",
		"'meta.txt': line 3: lru_gen given twice (first on line 2)",
	};
	struct swt_err err = { 0 };
	struct swt_meta *m;
	int ret;

	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		swt_err_clear(&err);
		m = parse(text[i], &ret, &err);
		CHECK_INT(ret, -SWT_EFORMAT);
		CHECK_STR(err.msg, msg[i]);
		swt_meta_free(m);
	}
	/* keys that come once a line of their own, and those ingest only keeps, may repeat */
	swt_err_clear(&err);
	m = parse("swap_unmapped path=/a reason=btrfs\nswap_unmapped path=/b reason=btrfs\n"
		  "machine x\nmachine y\n# other\npage_cluster 1\npage_cluster 2\n", &ret, &err);
	CHECK_INT(ret, 0);
	swt_meta_free(m);
}

TEST(swap_spec)
{
	struct swt_err err = { 0 };
	struct swt_meta *m = swt_meta_alloc(), *file;
	int ret;

	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=2048,slots=512,prio=5,rotational=1", &err), 0);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=100000", &err), 0);
	CHECK_INT(m->nr_areas, 2);
	CHECK_INT(m->areas[0].start_sector, 2048);
	CHECK_INT(m->areas[0].slots, 512);
	CHECK_INT(m->areas[0].priority, 5);
	CHECK_INT(m->areas[1].start_sector, 100000);
	CHECK_INT(m->areas[1].slots, SWT_META_UNKNOWN);
	CHECK_STR(m->areas[1].type, "partition");
	CHECK_INT(swt_meta_add_swap_spec(m, "sda2", &err), -SWT_EUSAGE);
	CHECK(strstr(err.msg, "bad --swap 'sda2'") != NULL);
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,colour=blue", &err), -SWT_EUSAGE);
	/* a key given twice (or under its alias) is refused, not read as its last value */
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=8,start=16", &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "bad --swap '8:0,start=8,start=16': start= given twice");
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,prio=1,size=400,size_kib=800", &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "bad --swap '8:0,prio=1,size=400,size_kib=800': size= given twice");
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,dev=8:16", &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "bad --swap '8:0,dev=8:16': the device given twice (MAJ:MIN and dev=)");
	/*
	 * the disk's request limits are the capture's swap_device line's:
	 * --swap states none, sound or not, once or twice
	 */
	for (size_t i = 0; i < 4; i++) {
		static const char *const spec[] = {
			"8:0,start=8,max_sectors_kb=64", "8:0,max_segments=128,slots=10",
			"8:0,max_sectors_kb=0", "8:0,max_segments=8,max_segments=8",
		};
		char msg[256];

		swt_err_clear(&err);
		CHECK_INT(swt_meta_add_swap_spec(m, spec[i], &err), -SWT_EUSAGE);
		snprintf(msg, sizeof(msg), "bad --swap '%s': expected MAJ:MIN[,start=SECTOR][,slots=N]"
			 "[,size=KIB][,prio=N][,rotational=0|1][,sync=0|1][,path=P]", spec[i]);
		CHECK_STR(err.msg, msg);
	}
	/* slots= and size= that disagree are refused: slots= won, silently */
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=4096,slots=10,size=4000", &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "bad --swap '8:0,start=4096,slots=10,size=4000': slots=10 and size=4000 "
		  "disagree: with 4 KiB pages (no page_size given), slots = size / 4 + 1 "
		  "(the header page)");
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=4096,slots=10,size=0", &err), -SWT_EUSAGE);
	CHECK_INT(m->nr_areas, 2);
	swt_err_clear(&err);
	CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=4096,slots=1001,size=4000", &err), 0);
	CHECK_INT(m->areas[2].slots, 1001);
	CHECK_INT(m->areas[2].size_kib, 4000);

	/* stated areas replace the file's */
	file = parse(shared_4dev, &ret, &err);
	swt_meta_move_areas(file, m);
	CHECK_INT(file->nr_areas, 3);
	CHECK_INT(file->areas[0].dev, swt_dev_make(8, 0));
	CHECK_INT(m->nr_areas, 0);
	swt_meta_free(file);
	swt_meta_free(m);

	/*
	 * ... but what the file says of a restated area's disk stays: an SSD
	 * restated without rotational=0 was taken as rotational, and auto
	 * replayed cluster instead of VMA readahead
	 */
	m = swt_meta_alloc();
	CHECK_INT(swt_meta_add_swap_spec(m, "7:10,slots=1024", &err), 0);
	CHECK_INT(swt_meta_add_swap_spec(m, "7:0,rotational=0", &err), 0);
	CHECK_INT(swt_meta_add_swap_spec(m, "7:5", &err), 0);
	file = parse(shared_4dev, &ret, &err);
	swt_meta_move_areas(file, m);
	CHECK_INT(file->nr_areas, 3);
	CHECK_INT(file->areas[0].rotational, 0);	/* from the file's dev line */
	CHECK_INT(file->areas[0].slots, 1024);		/* as stated */
	CHECK_INT(file->areas[0].priority, SWT_META_UNKNOWN);
	CHECK_INT(file->areas[1].rotational, 0);	/* stated wins over the file's 1 */
	CHECK_INT(file->areas[2].rotational, SWT_META_UNKNOWN);	/* a device the file lacks */
	swt_meta_free(file);
	swt_meta_free(m);
}

/*
 * Two partitions stated on the whole disk without their sizes: the first
 * ends where the second begins, in whichever order they are given (stated
 * first, it took the second's I/O too), and the same area twice is refused.
 */
TEST(unsized_areas_on_one_disk)
{
	static const char *const order[2][2] = {
		{ "8:0,start=2048", "8:0,start=100000" },
		{ "8:0,start=100000", "8:0,start=2048" },
	};
	struct swt_err err = { 0 };

	for (size_t k = 0; k < 2; k++) {
		struct swt_meta *m = swt_meta_alloc();
		const struct swt_layout_area *a = NULL;
		struct swt_layout l;
		size_t skipped = 0;
		int64_t slot = 0;

		CHECK_INT(swt_meta_add_swap_spec(m, order[k][0], &err), 0);
		CHECK_INT(swt_meta_add_swap_spec(m, order[k][1], &err), 0);
		CHECK_INT(swt_layout_init(&l, m, &skipped), 0);
		CHECK_INT(swt_layout_map(&l, swt_dev_make(8, 0), 100000 + 8, &a, &slot), 1);
		CHECK_INT(a->meta->start_sector, 100000);
		CHECK_INT(slot, 1);
		CHECK_INT(swt_layout_map(&l, swt_dev_make(8, 0), 99992, &a, &slot), 1);
		CHECK_INT(a->meta->start_sector, 2048);
		CHECK_INT(slot, (99992 - 2048) / 8);
		CHECK_INT(swt_layout_map(&l, swt_dev_make(8, 0), 900000, &a, &slot), 1);
		CHECK_INT(a->meta->start_sector, 100000);
		swt_layout_release(&l);

		CHECK_INT(swt_meta_add_swap_spec(m, "8:0,start=2048,slots=64", &err), -SWT_EUSAGE);
		CHECK_STR(err.msg, "bad --swap '8:0,start=2048,slots=64': an area on 8:0 from "
			  "sector 2048 is already stated");
		swt_err_clear(&err);
		CHECK_INT(m->nr_areas, 2);
		swt_meta_free(m);
	}
}

CHECK_MAIN
