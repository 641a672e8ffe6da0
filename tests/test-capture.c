/*
 * The pure parts of capture on crafted inputs: the trace.dat v6 writer
 * round-tripping through the decoder ingest uses, swap-file extent layout,
 * /proc/swaps parsing, the blk tracer record converter, probe planning,
 * the undo log of settings, vmstat parsing and command-line quoting.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blktracer.h"
#include "blktrace.h"
#include "check.h"
#include "hostinfo.h"
#include "knobs.h"
#include "probes.h"
#include "swaps.h"
#include "target.h"
#include "tracedat-writer.h"
#include "tracedat.h"
#include "util.h"

/* ---- scratch directory ---------------------------------------------------- */

static char scratch[256];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_scratch(void)
{
	if (scratch[0])
		nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *scratch_dir(void)
{
	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "/tmp/swt-test-capture-XXXXXX");
		if (!mkdtemp(scratch))
			scratch[0] = '\0';
		else
			atexit(remove_scratch);
	}
	return scratch;
}

static char *scratch_path(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, 512, "%s/%s", scratch_dir(), name);
	return p;
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(swt_write_all(fd, data, len), 0);
	close(fd);
}

static long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* ---- ring-buffer pages, as the kernel lays them out ----------------------- */

#define PAGE 4096

struct page_builder {
	unsigned char page[PAGE];
	size_t len;		/* bytes of event data after the 16-byte page header */
	uint64_t last_ts;
};

static void page_start(struct page_builder *pb, uint64_t ts)
{
	memset(pb, 0, sizeof(*pb));
	memcpy(pb->page, &ts, 8);
	pb->last_ts = ts;
}

/* An event of dlen bytes (a multiple of 4, at most 112) at time ts. */
static void page_event(struct page_builder *pb, uint64_t ts, const void *data, size_t dlen)
{
	uint32_t head = (uint32_t)(dlen / 4) | (uint32_t)((ts - pb->last_ts) << 5);

	memcpy(pb->page + 16 + pb->len, &head, 4);
	memcpy(pb->page + 16 + pb->len + 4, data, dlen);
	pb->len += 4 + dlen;
	pb->last_ts = ts;
}

static void page_finish(struct page_builder *pb)
{
	uint64_t commit = pb->len;

	memcpy(pb->page + 8, &commit, 8);
}

struct probe_rec {
	uint16_t type;
	uint8_t flags, preempt;
	int32_t pid;
	uint64_t entry, address;
};

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

static const char fault_format[] =
	"name: swt_fault\n"
	"ID: 900\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:u64 entry;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 address;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"entry=%llx address=%llx\", REC->entry, REC->address\n";

static const char read_format[] =
	"name: swt_read\n"
	"ID: 901\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:u64 entry;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 address;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"entry=%llx\", REC->entry\n";

static const char stats_fmt[] =
	"entries: 0\noverrun: %d\ncommit overrun: 0\nbytes: 0\noldest event ts:  1.000000\n"
	"now ts:  2.000000\ndropped events: 0\nread events: %d\n";

#define SWP_ENTRY(type, off) ((uint64_t)(type) << 58 | (uint64_t)(off))

struct collected {
	int probes, comms, lost_events;
	int64_t lost;
	uint64_t last_ts;
	int in_order;
	struct swt_event ev[16];
};

static int collect(void *ctx, const struct swt_event *ev)
{
	struct collected *col = ctx;

	if (ev->type == SWT_EV_COMM) {
		col->comms++;
		return 0;
	}
	if (ev->type == SWT_EV_LOST) {
		col->lost_events++;
		col->lost += ev->lost.count;
		return 0;
	}
	if (ev->ts < col->last_ts)
		col->in_order = 0;
	col->last_ts = ev->ts;
	if (ev->type == SWT_EV_SWAP_PROBE && col->probes < 16)
		col->ev[col->probes++] = *ev;
	return 0;
}

/*
 * Two buffers: "swaptrace" with three probe events on CPU 0 and two pages
 * on CPU 1, "second" with one event on CPU 1 and nothing on CPU 0.
 */
static int write_sample(const char *out, unsigned flags, int torn_tail, int overrun)
{
	struct page_builder pb;
	struct probe_rec r = { .type = 900, .pid = 1234 };
	unsigned char two[2 * PAGE];
	char st0[512], st1[512], st2[512], st3[512];
	const char *raw0 = scratch_path("swaptrace.cpu0"), *raw1 = scratch_path("swaptrace.cpu1");
	const char *raw2 = scratch_path("second.cpu1");
	struct swt_err err = { 0 };
	int kept = -1, ret;

	page_start(&pb, 1000000);
	r.entry = SWP_ENTRY(0, 17);
	r.address = 0x7f0000001000;
	page_event(&pb, 1000100, &r, 24);
	r.type = 901;
	r.entry = SWP_ENTRY(1, 18);
	r.address = 0;
	page_event(&pb, 1000200, &r, 24);
	r.type = 900;
	r.entry = SWP_ENTRY(0, 99);
	r.address = 0x7f0000002000;
	page_event(&pb, 1000300, &r, 24);
	page_finish(&pb);
	if (torn_tail) {
		/* a page cut short by a full disk after the whole one */
		unsigned char buf[PAGE + 100];

		memcpy(buf, pb.page, PAGE);
		memset(buf + PAGE, 0xab, 100);
		write_file(raw0, buf, sizeof(buf));
	} else {
		write_file(raw0, pb.page, PAGE);
	}

	page_start(&pb, 1000150);
	r.type = 901;
	r.pid = 1235;
	r.entry = SWP_ENTRY(0, 5);
	page_event(&pb, 1000150, &r, 24);
	page_finish(&pb);
	memcpy(two, pb.page, PAGE);
	page_start(&pb, 1000400);
	r.entry = SWP_ENTRY(0, 6);
	page_event(&pb, 1000450, &r, 24);
	page_finish(&pb);
	memcpy(two + PAGE, pb.page, PAGE);
	write_file(raw1, two, sizeof(two));

	page_start(&pb, 1000250);
	r.type = 900;
	r.entry = SWP_ENTRY(2, 7);
	r.address = 0x1000;
	page_event(&pb, 1000250, &r, 24);
	page_finish(&pb);
	write_file(raw2, pb.page, PAGE);

	snprintf(st0, sizeof(st0), stats_fmt, overrun, 3);
	snprintf(st1, sizeof(st1), stats_fmt, 0, 2);
	snprintf(st2, sizeof(st2), stats_fmt, 0, 0);
	snprintf(st3, sizeof(st3), stats_fmt, 0, 1);
	{
		const struct swt_tdw_blob formats[2] = {
			{ fault_format, strlen(fault_format) }, { read_format, strlen(read_format) },
		};
		const struct swt_tdw_system systems[1] = { { "swaptrace", formats, 2 } };
		const struct swt_tdw_cpu cpus_a[2] = { { raw0, st0 }, { raw1, st1 } };
		const struct swt_tdw_cpu cpus_b[2] = { { NULL, st2 }, { raw2, st3 } };
		const struct swt_tdw_buffer buffers[2] = { { "swaptrace", cpus_a }, { "second", cpus_b } };
		static const char kallsyms[] = "ffffffff81000000 T _stext\n";
		static const char cmdlines[] = "1234 swapload\n1235 kswapd0\n";
		struct swt_tdw_input in = {
			.page_size = PAGE,
			.header_page = { header_page, strlen(header_page) },
			.header_event = { header_event, strlen(header_event) },
			.systems = systems, .nr_systems = 1,
			.kallsyms = { kallsyms, strlen(kallsyms) },
			.printk_formats = { "", 0 },
			.cmdlines = { cmdlines, strlen(cmdlines) },
			.ncpus = 2,
			.uname = "Linux test 6.18.0 #1",
			.trace_clock = "[local] global counter\n",
			.buffers = buffers, .nr_buffers = 2,
		};

		ret = swt_tracedat_write(&in, out, flags, &kept, &err);
		if (ret)
			fprintf(stderr, "swt_tracedat_write: %s\n", err.msg);
	}
	CHECK_INT(kept, 0);
	return ret;
}

static void check_decoded(const char *path, int64_t lost)
{
	struct collected col = { .in_order = 1 };
	struct swt_tracedat_stats stats;
	struct swt_err err = { 0 };
	int ret = swt_tracedat_decode(path, collect, &col, &stats, &err);

	if (ret)
		fprintf(stderr, "decode: %s\n", err.msg);
	CHECK_INT(ret, 0);
	CHECK_INT(stats.version, 6);
	CHECK_STR(stats.clock, "local");
	CHECK_INT(stats.events, 6);
	CHECK_INT(stats.buffers, 2);
	CHECK_INT(col.probes, 6);
	CHECK(col.in_order);
	CHECK_INT(col.lost, lost);
	CHECK(col.comms >= 1);
	/* time order across CPUs and buffers: 100, 150, 200, 250, 300, 450 */
	CHECK_INT(col.ev[0].ts, 1000100);
	CHECK_INT(col.ev[0].probe.kind, SWT_PROBE_FAULT);
	CHECK_INT(col.ev[0].probe.swap_type, 0);
	CHECK_INT(col.ev[0].probe.offset, 17);
	CHECK_INT(col.ev[0].probe.address, 0x7f0000001000);
	CHECK_INT(col.ev[0].pid, 1234);
	CHECK_INT(col.ev[0].cpu, 0);
	CHECK_INT(col.ev[1].ts, 1000150);
	CHECK_INT(col.ev[1].probe.kind, SWT_PROBE_READ);
	CHECK_INT(col.ev[1].cpu, 1);
	CHECK_INT(col.ev[2].probe.swap_type, 1);
	CHECK_INT(col.ev[2].probe.offset, 18);
	CHECK_INT(col.ev[3].ts, 1000250);
	CHECK_INT(col.ev[3].probe.swap_type, 2);
	CHECK_INT(col.ev[3].probe.offset, 7);
	CHECK_INT(col.ev[4].probe.offset, 99);
	CHECK_INT(col.ev[5].ts, 1000450);
	CHECK_INT(col.ev[5].probe.offset, 6);
}

TEST(tracedat_v6_round_trip)
{
	const char *out = scratch_path("trace.dat");

	CHECK_INT(write_sample(out, 0, 0, 0), 0);
	CHECK(swt_tracedat_probe(out));
	CHECK_INT(file_size(out) % PAGE, 0);
	check_decoded(out, 0);
	/* copies leave the raw files; no temporary file is left behind */
	CHECK_INT(file_size(scratch_path("swaptrace.cpu0")), PAGE);
	CHECK_INT(file_size(scratch_path("trace.dat.tmp")), -1);
	{
		struct stat sb;

		CHECK_INT(stat(out, &sb), 0);
		CHECK_INT(sb.st_mode & 0777, 0600);
	}
}

TEST(tracedat_v6_moved_pages_and_torn_tail)
{
	const char *out = scratch_path("moved.dat");

	/* 100 bytes of a torn page are dropped, not decoded as events */
	CHECK_INT(write_sample(out, SWT_TDW_MOVE_RAW, 1, 0), 0);
	check_decoded(out, 0);
	CHECK_INT(file_size(scratch_path("swaptrace.cpu0")), -1);
	CHECK_INT(file_size(scratch_path("swaptrace.cpu1")), -1);
	CHECK_INT(file_size(scratch_path("second.cpu1")), -1);
}

TEST(tracedat_v6_cpustat_losses)
{
	const char *out = scratch_path("lossy.dat");

	/* the kernel's overrun count for a buffer's CPU is reported as lost */
	CHECK_INT(write_sample(out, 0, 0, 42), 0);
	check_decoded(out, 42);
}

TEST(tracedat_v6_head_kept_when_copy_fails)
{
	const char *out = scratch_path("kept.dat"), *raw = scratch_path("unreadable.cpu0");
	struct swt_tdw_cpu cpus[1] = { { raw, NULL } };
	struct swt_tdw_buffer buffers[1] = { { "swaptrace", cpus } };
	const struct swt_tdw_blob formats[1] = { { fault_format, strlen(fault_format) } };
	const struct swt_tdw_system systems[1] = { { "swaptrace", formats, 1 } };
	struct swt_tdw_input in = {
		.page_size = PAGE,
		.header_page = { header_page, strlen(header_page) },
		.header_event = { header_event, strlen(header_event) },
		.systems = systems, .nr_systems = 1,
		.ncpus = 1, .buffers = buffers, .nr_buffers = 1,
	};
	char head_path[600], cmd[2048];
	struct page_builder pb;
	struct probe_rec r = { .type = 900, .pid = 1, .entry = SWP_ENTRY(0, 3) };
	struct swt_err err = { 0 };
	long dir_size;
	int kept = -1;

	/* a "raw file" that has a size but cannot be read: copying fails */
	CHECK_INT(mkdir(raw, 0700), 0);
	dir_size = file_size(raw);
	CHECK_INT(swt_tracedat_write(&in, out, 0, &kept, &err), -SWT_EIO);
	CHECK_INT(kept, 1);
	CHECK_INT(file_size(out), -1);
	snprintf(head_path, sizeof(head_path), "%s.head", out);
	CHECK_INT(file_size(head_path) % PAGE, 0);
	rmdir(raw);
	if (dir_size != PAGE)
		return;	/* the recovery below needs the directory to have been one page */
	/* head + the raw pages, as the capture tells the user, make the file */
	page_start(&pb, 500);
	page_event(&pb, 510, &r, 24);
	page_finish(&pb);
	write_file(raw, pb.page, PAGE);
	snprintf(cmd, sizeof(cmd), "cat '%s' '%s' > '%s'", head_path, raw, out);
	CHECK_INT(system(cmd), 0);
	{
		struct collected col = { .in_order = 1 };
		struct swt_tracedat_stats stats;
		int ret = swt_tracedat_decode(out, collect, &col, &stats, &err);

		CHECK_INT(ret, 0);
		CHECK_INT(col.probes, 1);
		CHECK_INT(col.ev[0].ts, 510);
		CHECK_INT(col.ev[0].probe.offset, 3);
		CHECK_INT(stats.events, 1);
	}
}

/* ---- swap files ---------------------------------------------------------- */

TEST(swap_file_extents_round_inward_and_number_consecutively)
{
	/* 4 KiB pages; physical offsets in bytes */
	const struct swt_fiemap_extent ext[] = {
		{ 0, 1 << 20, 8 * PAGE },	/* aligned: 8 pages, slots 0..7 (0 = header) */
		{ 8 * PAGE, (2 << 20) + 512, 4 * PAGE },	/* unaligned: 3 whole pages inside */
		{ 12 * PAGE, (2 << 20) + 512 + 4 * PAGE, 2 * PAGE },	/* continues it on disk */
		{ 14 * PAGE, 3 << 20, PAGE / 2 },	/* under a page: nothing */
		{ 15 * PAGE, 4 << 20, 10 * PAGE },	/* cut by the file size */
	};
	struct swt_meta_extent *out = NULL;
	size_t n = 0;
	int64_t slots = swt_swap_file_extents(ext, SWT_ARRAY_SIZE(ext), 20 * PAGE + 100, PAGE,
					      UINT64_MAX, 2048, &out, &n);

	CHECK_INT(slots, 8 + 5 + 5);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_INT(out[0].first_slot, 0);
		CHECK_INT(out[0].nr_slots, 8);
		CHECK_INT(out[0].start_sector, 2048 + (1 << 20) / 512);
		/* merged run [2 MiB + 512, 2 MiB + 512 + 6 pages): pages 1..5 of it */
		CHECK_INT(out[1].first_slot, 8);
		CHECK_INT(out[1].nr_slots, 5);
		CHECK_INT(out[1].start_sector, 2048 + ((2 << 20) + PAGE) / 512);
		/* the file's last whole page is its 20th: 5 of the 10 pages remain */
		CHECK_INT(out[2].first_slot, 13);
		CHECK_INT(out[2].nr_slots, 5);
		CHECK_INT(out[2].start_sector, 2048 + (4 << 20) / 512);
	}
	free(out);

	/* the swap header's size limits the slots */
	slots = swt_swap_file_extents(ext, SWT_ARRAY_SIZE(ext), 20 * PAGE, PAGE, 10, 0, &out, &n);
	CHECK_INT(slots, 10);
	CHECK_INT(n, 2);
	if (n == 2)
		CHECK_INT(out[1].nr_slots, 2);
	free(out);
}

/* ---- /proc/swaps --------------------------------------------------------- */

TEST(proc_swaps_rows)
{
	static const char text[] =
		"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		"/dev/loop0                              partition\t524284\t\t116\t\t5\n"
		"/var/swap\\040file                       file\t\t1048572\t\t0\t\t-2\n";
	struct swt_swap_area *a = NULL;
	struct swt_err err = { 0 };
	size_t n = 0;

	CHECK_INT(swt_swap_parse(text, &a, &n, &err), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(a[0].path, "/dev/loop0");
		CHECK_STR(a[0].type, "partition");
		CHECK_INT(a[0].size_kib, 524284);
		CHECK_INT(a[0].used_kib, 116);
		CHECK_INT(a[0].priority, 5);
		CHECK_STR(a[1].path, "/var/swap file");
		CHECK_STR(a[1].type, "file");
		CHECK_INT(a[1].priority, -2);
	}
	swt_swap_areas_free(a, n);

	CHECK_INT(swt_swap_parse("Filename Type Size Used Priority\n", &a, &n, &err), 0);
	CHECK_INT(n, 0);
	swt_swap_areas_free(a, n);
	CHECK_INT(swt_swap_parse("Filename\n/dev/sda2 partition lots 0 1\n", &a, &n, &err),
		  -SWT_EFORMAT);
	CHECK_STR(err.msg, "'/proc/swaps': line 2: not a swap area row");
}

/* ---- blk tracer records -------------------------------------------------- */

static size_t put_blk(unsigned char *p, uint32_t pid, uint32_t cpu, uint64_t ts, uint32_t dev,
		      uint64_t sector, uint32_t action, const void *pdu, uint16_t pdu_len)
{
	uint32_t magic = SWT_BLK_MAGIC | SWT_BLK_V7, zero = 0, bytes = 4096;
	uint16_t err = 0;

	memcpy(p, &pid, 4);
	memcpy(p + 4, &cpu, 4);
	memcpy(p + 8, &ts, 8);
	p += 16;
	memset(p, 0, 48);
	memcpy(p, &magic, 4);
	memcpy(p + 4, &zero, 4);	/* the kernel leaves the sequence 0 */
	memcpy(p + 8, &ts, 8);
	memcpy(p + 16, &sector, 8);
	memcpy(p + 24, &bytes, 4);
	memcpy(p + 28, &action, 4);
	memcpy(p + 32, &pid, 4);
	memcpy(p + 36, &dev, 4);
	memcpy(p + 40, &cpu, 4);
	memcpy(p + 44, &err, 2);
	memcpy(p + 46, &pdu_len, 2);
	if (pdu_len)
		memcpy(p + 48, pdu, pdu_len);
	return 16 + 48 + pdu_len;
}

TEST(blk_tracer_records_become_blktrace_records)
{
	const uint32_t dev = swt_dev_make(7, 0), other = swt_dev_make(8, 0);
	const uint32_t queue_read = SWT_BLK_TA_QUEUE | (SWT_BLK_TC_READ | SWT_BLK_TC_QUEUE) << 16;
	const unsigned char unplug_pdu[8] = { 0, 0, 0, 0, 0, 0, 0, 3 };
	unsigned char in[1024], out[1024];
	struct swt_blktracer_conv cv = { 0 };
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_err err = { 0 };
	size_t len = 0, out_len = 0;
	uint32_t foreign_pid = 77, cpu = 1;
	uint64_t foreign_ts = 5;
	long used;

	len += put_blk(in + len, 100, 1, 1000, dev, 8, queue_read, NULL, 0);
	len += put_blk(in + len, 100, 1, 1001, other, 16, queue_read, NULL, 0);
	/* another tracer's record: only its context */
	memcpy(in + len, &foreign_pid, 4);
	memcpy(in + len + 4, &cpu, 4);
	memcpy(in + len + 8, &foreign_ts, 8);
	len += 16;
	len += (size_t)sprintf((char *)in + len, "CPU:1 [LOST 3 EVENTS]\n");
	len += put_blk(in + len, 100, 1, 1005, dev, 24, SWT_BLK_TA_UNPLUG_IO, unplug_pdu, 8);
	/* half a record: left for the next read */
	len += put_blk(in + len, 100, 1, 1006, dev, 32, queue_read, NULL, 0) - 20;

	used = swt_blktracer_convert(&cv, 1, in, len, &dev, 1, out, &out_len);
	CHECK_INT(used, (long)(len - 44));
	CHECK_INT(cv.records, 2);
	CHECK_INT(cv.foreign, 2);
	CHECK_INT(cv.lost, 3);
	CHECK_INT(out_len, 48 + 48 + 8);

	CHECK_INT(swt_blk_reader_open_mem(out, out_len, "converted", &r, &err), 0);
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.sequence, 1);
	CHECK_INT(rec.time, 1000);
	CHECK_INT(rec.cpu, 1);
	CHECK_INT(rec.device, dev);
	CHECK_INT(rec.sector, 8);
	/* three lost events leave a gap, as in blktrace's own files */
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.sequence, 5);
	CHECK_INT(rec.time, 1005);
	CHECK_INT(rec.pdu_len, 8);
	CHECK(rec.pdu && !memcmp(rec.pdu, unplug_pdu, 8));
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), 0);
	swt_blk_reader_free(r);

	/* out of step: a context naming another CPU */
	out_len = 0;
	CHECK_INT(swt_blktracer_convert(&cv, 0, in, len, &dev, 1, out, &out_len), -SWT_EFORMAT);
}

/* ---- probes -------------------------------------------------------------- */

static int only_old_names(const char *name, void *ctx)
{
	(void)ctx;
	return !strcmp(name, "swap_readpage") || !strcmp(name, "swapin_readahead");
}

TEST(probe_plan)
{
	static const char no_kprobes[] =
		"  uprobe_events\t\t- Create/append/remove/show the userspace dynamic events\n"
		"\t   Format: p[:[<group>/][<event>]] <place> [<args>]\n"
		"\t           e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>]\n"
		"   place (uprobe): <path>:<offset>[%return][(ref_ctr_offset)]\n"
		"\t           $stack<index>, $stack, $retval, $comm, $arg<N>,\n";
	static const char kprobes[] =
		"  kprobe_events\t\t- Add/remove/show the kernel dynamic events\n"
		"   place: [<module>:]<symbol>[+<offset>]|<memaddr>\n"
		"   place (kprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>\n"
		"\t           $stack<index>, $stack, $retval, $comm, $arg<N>,\n";
	struct swt_probe_plan plan;

	swt_probes_plan(no_kprobes, "x86_64", only_old_names, NULL, &plan);
	CHECK_INT(plan.nr, 0);
	CHECK_STR(plan.reason, "no kprobe events: dynamic_events accepts uprobe and eprobe "
			       "definitions only");

	swt_probes_plan(kprobes, "aarch64", only_old_names, NULL, &plan);
	CHECK_INT(plan.nr, 0);
	CHECK_STR(plan.reason, "probe arguments are defined for x86_64 only, not aarch64");

	/* an older kernel: swap_readpage, and no swap_update_readahead or swap_writeout */
	swt_probes_plan(kprobes, "x86_64", only_old_names, NULL, &plan);
	CHECK_INT(plan.nr, 2);
	CHECK_STR(plan.defs[0].event, "swt_fault");
	CHECK_STR(plan.defs[0].function, "swapin_readahead");
	CHECK_STR(plan.defs[0].args, "entry=$arg1:x64 address=+24($arg3):x64");
	CHECK_STR(plan.defs[1].event, "swt_read");
	CHECK_STR(plan.defs[1].function, "swap_readpage");
	CHECK_STR(plan.reason, "no function in /proc/kallsyms for swt_ra_hit, swt_swapout");
}

TEST(kallsyms_scan)
{
	static const char text[] =
		"ffffffff815ea4a0 T do_swap_page\n"
		"ffffffff8163d300 T swap_writeout\n"
		"ffffffff8163d6f0 t swap_read_folio\n"
		"ffffffff8163ee00 D swapin_readahead\n"
		"ffffffffc0000000 t swap_update_readahead\t[somemod]\n";
	struct swt_ksyms ks;

	swt_ksyms_scan(text, strlen(text), &ks);
	CHECK(swt_ksyms_has("swap_writeout", &ks));
	CHECK(swt_ksyms_has("swap_read_folio", &ks));
	CHECK(swt_ksyms_has("swap_update_readahead", &ks));
	CHECK(!swt_ksyms_has("swapin_readahead", &ks));	/* data, not text */
	CHECK(!swt_ksyms_has("swap_readpage", &ks));
	CHECK(!swt_ksyms_has("do_swap_page", &ks));	/* not a candidate */
}

/* ---- settings undo log --------------------------------------------------- */

TEST(knob_restore_values)
{
	char *v;

	v = swt_knob_restore_value("[local] global counter uptime\n");
	CHECK_STR(v, "local");
	free(v);
	v = swt_knob_restore_value("7 (expanded: 1408)\n");
	CHECK_STR(v, "1408");
	free(v);
	v = swt_knob_restore_value("nop\n");
	CHECK_STR(v, "nop");
	free(v);
	v = swt_knob_restore_value("");
	CHECK_STR(v, "");
	free(v);
}

static char *slurp(const char *path)
{
	char *t = swt_read_text(path, NULL);

	return t ? t : swt_strdup("(missing)");
}

TEST(knobs_set_and_restore)
{
	const char *a = scratch_path("knob_a"), *b = scratch_path("knob_b");
	const char *gone = scratch_path("knob_gone");
	struct swt_knobs k;
	struct swt_err err = { 0 };
	char *t;

	write_file(a, "0\n", 2);
	write_file(b, "[nop] blk\n", 10);
	write_file(gone, "0\n", 2);
	swt_knobs_init(&k);
	CHECK_INT(swt_knobs_set(&k, a, "1", &err), 0);
	CHECK_INT(swt_knobs_set(&k, a, "2", &err), 0);	/* the first original is kept */
	CHECK_INT(swt_knobs_set(&k, b, "nop", &err), 0);	/* already so: not touched */
	CHECK_INT(swt_knobs_set(&k, gone, "1", &err), 0);
	CHECK_INT(k.n, 2);
	t = slurp(a);
	CHECK_STR(t, "2");
	free(t);
	CHECK_INT(swt_knobs_set(&k, scratch_path("knob_missing"), "1", &err), -SWT_ENOENT);
	swt_err_clear(&err);
	/* a file that vanished meanwhile (a removed device) has nothing to restore */
	unlink(gone);
	CHECK_INT(swt_knobs_restore(&k, &err), 0);
	t = slurp(a);
	CHECK_STR(t, "0");
	free(t);
	t = slurp(b);
	CHECK_STR(t, "[nop] blk\n");
	free(t);
	CHECK_INT(access(gone, F_OK), -1);
	/* restoring twice writes nothing more */
	write_file(a, "5", 1);
	CHECK_INT(swt_knobs_restore(&k, &err), 0);
	t = slurp(a);
	CHECK_STR(t, "5");
	free(t);
	swt_knobs_release(&k);
}

static void collect_note(void *ctx, int warning, const char *msg)
{
	char *buf = ctx;

	(void)warning;
	strncat(buf, msg, 4095 - strlen(buf));
	strncat(buf, "\n", 4095 - strlen(buf));
}

/*
 * A capture killed after changing settings: the next one restores those
 * still holding a value the dead one wrote (also one it journaled and
 * died before writing), and leaves alone one someone set since.
 */
TEST(crash_journal_leaves_settings_changed_since)
{
	char dir[512], lock[600], journal[600], notes[4096] = "";
	const char *a = scratch_path("jr_a"), *b = scratch_path("jr_b"), *c = scratch_path("jr_c");
	struct swt_knobs k;
	struct swt_err err = { 0 };
	char *t;

	snprintf(dir, sizeof(dir), "%s/undo", scratch_dir());
	snprintf(lock, sizeof(lock), "%s/blk.lock", scratch_dir());
	snprintf(journal, sizeof(journal), "%s/capture-%d.undo", dir, (int)getpid());
	write_file(a, "0\n", 2);
	write_file(b, "0\n", 2);
	write_file(c, "[nop] blk\n", 10);
	swt_knobs_init(&k);
	CHECK_INT(swt_knobs_journal_open(&k, dir, &err), 0);
	CHECK_INT(swt_knobs_set(&k, a, "1", &err), 0);
	CHECK_INT(swt_knobs_set(&k, a, "2", &err), 0);
	CHECK_INT(swt_knobs_set(&k, b, "1", &err), 0);
	CHECK_INT(swt_knobs_set(&k, c, "blk", &err), 0);
	/* killed: nothing restored, the journal stays */
	swt_knobs_release(&k);
	CHECK_INT(access(journal, F_OK), 0);
	write_file(a, "1", 1);		/* as if it died before writing "2" */
	write_file(b, "5", 1);		/* someone's own setting */
	CHECK_INT(swt_knobs_recover(dir, lock, collect_note, notes), 1);
	t = slurp(a);
	CHECK_STR(t, "0");
	free(t);
	t = slurp(b);
	CHECK_STR(t, "5");
	free(t);
	t = slurp(c);
	CHECK_STR(t, "nop");
	free(t);
	CHECK(strstr(notes, "someone has set it since") != NULL);
	CHECK(strstr(notes, "restored 2 setting(s)") != NULL);
	CHECK_INT(access(journal, F_OK), -1);
}

/*
 * --blktrace grows the top-level buffer.  One the kernel never expanded
 * reads "7 (expanded: 1408)" at the top and a bare "7" per CPU: it is
 * grown through the top-level file, restored to 1408, never to a real
 * 7 KiB buffer; an expanded one per CPU, restored to its size.
 */
TEST(blk_buffers_grow_and_restore)
{
	char dir[512], top[600], cpu0[600], cpu1[600];
	struct swt_knobs k;
	struct swt_err err = { 0 };
	char *t;

	snprintf(dir, sizeof(dir), "%s/fake-tracefs", scratch_dir());
	snprintf(top, sizeof(top), "%s/buffer_size_kb", dir);
	snprintf(cpu0, sizeof(cpu0), "%s/per_cpu/cpu0/buffer_size_kb", dir);
	snprintf(cpu1, sizeof(cpu1), "%s/per_cpu/cpu1/buffer_size_kb", dir);
	{
		char path[600];

		mkdir(dir, 0700);
		snprintf(path, sizeof(path), "%s/per_cpu", dir);
		mkdir(path, 0700);
		for (int c = 0; c < 2; c++) {
			snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", dir, c);
			mkdir(path, 0700);
		}
	}
	/* unexpanded, grown past its expanded size: top-level, back to 1408 */
	write_file(top, "7 (expanded: 1408)\n", 19);
	write_file(cpu0, "7\n", 2);
	write_file(cpu1, "7\n", 2);
	swt_knobs_init(&k);
	CHECK_INT(swt_blktracer_grow_buffers(&k, dir, 2, 4096, &err), 0);
	t = slurp(top);
	CHECK_STR(t, "4096");
	free(t);
	t = slurp(cpu1);
	CHECK_STR(t, "7\n");
	free(t);
	CHECK_INT(swt_knobs_restore(&k, &err), 0);
	t = slurp(top);
	CHECK_STR(t, "1408");
	free(t);
	swt_knobs_release(&k);
	/* unexpanded, wanted smaller than it expands to: nothing to write */
	write_file(top, "7 (expanded: 1408)\n", 19);
	swt_knobs_init(&k);
	CHECK_INT(swt_blktracer_grow_buffers(&k, dir, 2, 512, &err), 0);
	CHECK_INT((int)k.n, 0);
	swt_knobs_release(&k);
	/* expanded: each CPU grown, then restored */
	write_file(top, "2048\n", 5);
	write_file(cpu0, "2048\n", 5);
	write_file(cpu1, "8192\n", 5);
	swt_knobs_init(&k);
	CHECK_INT(swt_blktracer_grow_buffers(&k, dir, 2, 4096, &err), 0);
	t = slurp(cpu0);
	CHECK_STR(t, "4096");
	free(t);
	t = slurp(cpu1);
	CHECK_STR(t, "8192\n");	/* never shrunk */
	free(t);
	CHECK_INT(swt_knobs_restore(&k, &err), 0);
	t = slurp(cpu0);
	CHECK_STR(t, "2048");
	free(t);
	swt_knobs_release(&k);
	CHECK_INT((int)swt_blktracer_buffer_kb(dir, 2), 2048);	/* the smaller */
	CHECK_INT((int)swt_blktracer_buffer_kb(dir, 3), 0);	/* no cpu2 */
	/* a size that does not parse is grown, and reads back as none */
	write_file(cpu0, "what\n", 5);
	CHECK_INT((int)swt_blktracer_buffer_kb(dir, 2), 0);
	swt_knobs_init(&k);
	CHECK_INT(swt_blktracer_grow_buffers(&k, dir, 2, 4096, &err), 0);
	t = slurp(cpu0);
	CHECK_STR(t, "4096");
	free(t);
	swt_knobs_release(&k);
	CHECK_INT((int)swt_blktracer_buffer_kb(dir, 2), 4096);
	/* past an unsigned: none */
	write_file(cpu1, "4294967296\n", 11);
	CHECK_INT((int)swt_blktracer_buffer_kb(dir, 2), 0);
}

/* ---- host facts ---------------------------------------------------------- */

TEST(vmstat_counters)
{
	struct swt_vmstat vs;

	swt_vmstat_parse("nr_free_pages 5\npswpin 10\npswpout 20\npgfault 7\nswap_ra 3\n"
			 "swap_ra_hit 2\npgmajfault 1\npswpinx 99\noom_kill 4\n", &vs);
	CHECK_INT(vs.v[0], 10);
	CHECK_INT(vs.v[1], 20);
	CHECK_INT(vs.v[2], 3);
	CHECK_INT(vs.v[3], 2);
	CHECK_INT(vs.v[4], 1);
	CHECK_INT(vs.v[5], 7);
	CHECK_INT(vs.v[6], -1);	/* no such counter in this kernel */
	CHECK_INT(vs.v[SWT_VMSTAT_OOM_KILL], 4);
	CHECK_STR(swt_vmstat_name(SWT_VMSTAT_OOM_KILL), "oom_kill");
	CHECK_STR(swt_vmstat_name(0), "pswpin");
}

TEST(command_line_quoting)
{
	char *const argv[] = { "sh", "-c", "echo $$ > x; exec it's", "mb=64", "", NULL };
	char *s = swt_shell_join(argv);

	CHECK_STR(s, "sh -c 'echo $$ > x; exec it'\\''s' mb=64 ''");
	free(s);
}

static int thread_pipe[2];

static void *blocked_thread(void *arg)
{
	char c;

	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	while (read(thread_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* A target (its kind still to set) whose maps go to the new scratch directory NAME, its path in dir. */
static void init_target_maps(struct swt_target *t, const char *name, char *dir, size_t size)
{
	snprintf(dir, size, "%s/%s", scratch_dir(), name);
	CHECK_INT(mkdir(dir, 0700), 0);
	swt_target_init(t);
	t->maps_dir = strdup(dir);
}

static int has_thread(const struct swt_target_proc *p, pid_t tid)
{
	for (size_t k = 0; k < p->nr_threads; k++)
		if (p->threads[k] == tid)
			return 1;
	return 0;
}

static const struct swt_target_proc *mapped(const struct swt_target *t, pid_t pid)
{
	for (size_t i = 0; i < t->nr_procs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

/*
 * The maps' looks at /proc (no tracefs): a process's threads are noted;
 * a traced task outside the process tree (a double-forked daemon) gets
 * its process mapped, and retired when a look no longer sees it; --pid
 * of a thread's id follows its process.
 */
TEST(target_threads_and_outside_processes)
{
	struct swt_target t, t2;
	struct swt_err err = { 0 };
	pthread_t th[2];
	pid_t tids[2] = { 0, 0 }, daemon_pid = 0;
	int daemon_pipe[2], id_pipe[2];
	char traced[96], dir[600];
	const struct swt_target_proc *self, *d;
	pid_t a;

	CHECK_INT(pipe(thread_pipe), 0);
	CHECK_INT(pipe(daemon_pipe), 0);
	CHECK_INT(pipe(id_pipe), 0);
	for (int k = 0; k < 2; k++)
		CHECK_INT(pthread_create(&th[k], NULL, blocked_thread, &tids[k]), 0);
	a = fork();
	if (a == 0) {
		pid_t b = fork();

		if (b == 0) {	/* the daemon: waits for the pipe to close */
			char c;

			close(daemon_pipe[1]);
			close(id_pipe[0]);
			b = getpid();
			if (write(id_pipe[1], &b, sizeof(b)) != sizeof(b))
				_exit(1);
			close(id_pipe[1]);
			while (read(daemon_pipe[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		_exit(b > 0 ? 0 : 1);
	}
	CHECK(a > 0);
	close(daemon_pipe[0]);
	close(id_pipe[1]);
	CHECK_INT(waitpid(a, NULL, 0), a);
	CHECK_INT(read(id_pipe[0], &daemon_pid, sizeof(daemon_pid)), (long)sizeof(daemon_pid));
	close(id_pipe[0]);
	for (int n = 0; n < 500 && (!tids[0] || !tids[1]); n++)
		usleep(2000);
	CHECK(tids[0] > 0 && tids[1] > 0);

	init_target_maps(&t, "target-maps", dir, sizeof(dir));
	CHECK_INT(swt_target_attach_pid(&t, getpid(), &err), 0);
	snprintf(traced, sizeof(traced), "%d\n%d\n%d\n", (int)tids[0], (int)daemon_pid, (int)tids[1]);
	CHECK_INT(swt_target_snapshot(&t, traced, &err), 0);
	self = mapped(&t, getpid());
	CHECK(self && self->started && has_thread(self, tids[0]) && has_thread(self, tids[1]));
	CHECK(!has_thread(self, getpid()));
	d = mapped(&t, daemon_pid);
	CHECK(d && d->started && !d->gone);
	CHECK_INT(t.nr_procs, 2);
	CHECK_INT(t.nr_live, 2);
	/* a look without it: retired; and found again */
	snprintf(traced, sizeof(traced), "%d\n", (int)tids[0]);
	CHECK_INT(swt_target_snapshot(&t, traced, &err), 0);
	d = mapped(&t, daemon_pid);
	CHECK(d && d->gone);
	CHECK_INT(t.nr_live, 1);
	snprintf(traced, sizeof(traced), "%d\n", (int)daemon_pid);
	CHECK_INT(swt_target_snapshot(&t, traced, &err), 0);
	CHECK(!mapped(&t, daemon_pid)->gone);
	CHECK_INT(t.nr_live, 2);
	CHECK_INT(t.nr_procs, 2);
	/*
	 * found again with another start time: a new process that reused the
	 * pid (the same program, so its exe does not tell): its start maps are
	 * taken anew (as after an exec), its old threads dropped
	 */
	{
		char start_file[700];
		struct stat sb;
		struct swt_target_proc *dp = (struct swt_target_proc *)mapped(&t, daemon_pid);

		snprintf(traced, sizeof(traced), "%d\n", (int)tids[0]);
		CHECK_INT(swt_target_snapshot(&t, traced, &err), 0);	/* retired */
		CHECK(dp->gone);
		snprintf(start_file, sizeof(start_file), "%s/%d-start.txt", dir, (int)daemon_pid);
		CHECK_INT(truncate(start_file, 0), 0);
		dp->start_ticks ^= 1;
		dp->nr_threads = 0;
		CHECK_INT(swt_grow((void **)&dp->threads, &dp->cap_threads, 1, sizeof(*dp->threads)), 0);
		dp->threads[dp->nr_threads++] = 1;	/* a thread the old process had */
		snprintf(traced, sizeof(traced), "%d\n", (int)daemon_pid);
		CHECK_INT(swt_target_snapshot(&t, traced, &err), 0);
		CHECK(!dp->gone && dp->started);
		CHECK_INT(stat(start_file, &sb), 0);
		CHECK(sb.st_size > 0);
		CHECK_INT((long)dp->nr_threads, 0);
	}

	/* a thread's id stands for its process */
	swt_target_init(&t2);
	CHECK_INT(swt_target_attach_pid(&t2, tids[1], &err), 0);
	CHECK_INT(t2.pid, getpid());
	swt_target_release(&t2);
	swt_target_release(&t);

	close(daemon_pipe[1]);
	close(thread_pipe[1]);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	close(thread_pipe[0]);
}

/* A child that waits for the pipe's write end to close, or dies. */
static pid_t blocked_child(const int hold[2])
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		close(hold[1]);
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	return pid;
}

/* n blocked children into pids; and reaping pids[from..to) */
static void start_blocked(const int hold[2], pid_t *pids, int n)
{
	for (int k = 0; k < n; k++)
		CHECK((pids[k] = blocked_child(hold)) > 0);
}

static void reap(const pid_t *pids, int from, int to)
{
	for (int k = from; k < to; k++)
		CHECK_INT(waitpid(pids[k], NULL, 0), pids[k]);
}

static int start_file_size(const char *dir, pid_t pid)
{
	char path[700];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%d-start.txt", dir, (int)pid);
	return stat(path, &sb) ? -1 : (int)sb.st_size;
}

/*
 * With as many live processes as are mapped at once (64: this one and 63
 * children), a look that finds new ones where some have exited maps the
 * new ones at once: the exited are retired to make room, not at the
 * look's end (the new ones were mapped a look late, or never when they
 * lived less than a second).  Live ones are never retired for room.  And
 * a live pid whose start time changed between looks is a new process.
 */
TEST(target_full_table_makes_room)
{
	enum { OLD = 63, KILLED = 8, NEW = 4, EXTRA = 8 };
	struct swt_target t;
	struct swt_err err = { 0 };
	pid_t old[OLD], fresh[NEW], extra[EXTRA];
	int hold[2];
	char dir[600];
	int mapped_extra = 0;

	CHECK_INT(pipe(hold), 0);
	start_blocked(hold, old, OLD);
	init_target_maps(&t, "full-maps", dir, sizeof(dir));
	CHECK_INT(swt_target_attach_pid(&t, getpid(), &err), 0);
	CHECK_INT(swt_target_snapshot(&t, NULL, &err), 0);
	CHECK_INT((long)t.nr_live, 64);
	for (int k = 0; k < OLD; k++)
		CHECK(mapped(&t, old[k]) && start_file_size(dir, old[k]) > 0);

	for (int k = 0; k < KILLED; k++) {
		CHECK_INT(kill(old[k], SIGKILL), 0);
		CHECK_INT(waitpid(old[k], NULL, 0), old[k]);
	}
	start_blocked(hold, fresh, NEW);
	CHECK_INT(swt_target_snapshot(&t, NULL, &err), 0);
	for (int k = 0; k < NEW; k++) {
		const struct swt_target_proc *p = mapped(&t, fresh[k]);

		CHECK(p && !p->gone && p->started);
		CHECK(start_file_size(dir, fresh[k]) > 0);
	}
	for (int k = 0; k < KILLED; k++)
		CHECK(mapped(&t, old[k])->gone);
	CHECK_INT((long)t.nr_live, 64 - KILLED + NEW);

	/* 68 live: four of the new ones wait, and no live one is retired for them */
	start_blocked(hold, extra, EXTRA);
	CHECK_INT(swt_target_snapshot(&t, NULL, &err), 0);
	CHECK_INT((long)t.nr_live, 64);
	for (int k = 0; k < EXTRA; k++)
		mapped_extra += mapped(&t, extra[k]) != NULL;
	CHECK_INT(mapped_extra, EXTRA - 4);
	for (int k = KILLED; k < OLD; k++)
		CHECK(!mapped(&t, old[k])->gone);

	/* a pid reused between two looks, its entry still live: its start maps are taken anew */
	{
		struct swt_target_proc *p = (struct swt_target_proc *)mapped(&t, fresh[0]);
		char path[700];

		snprintf(path, sizeof(path), "%s/%d-start.txt", dir, (int)fresh[0]);
		CHECK_INT(truncate(path, 0), 0);
		p->start_ticks ^= 1;
		CHECK_INT(swt_target_snapshot(&t, NULL, &err), 0);
		CHECK(!p->gone && p->started);
		CHECK(start_file_size(dir, fresh[0]) > 0);
	}
	swt_target_release(&t);

	close(hold[1]);
	close(hold[0]);
	reap(old, KILLED, OLD);
	reap(fresh, 0, NEW);
	reap(extra, 0, EXTRA);
}

/*
 * Between the looks at a followed cgroup, at each drain: the processes of
 * tasks that joined are mapped at once (making room as a look does, the
 * last look's processes included), and for a second a joined one is
 * looked at again for an exec(): a shell that joined and then exec()ed its
 * workload is mapped as the workload.  (The cgroup itself is not read
 * here: the joined tasks are given, as swt_target_new_tids lists them.)
 */
TEST(target_joined_tasks_mapped_at_drains)
{
	enum { OLD = 63, KILLED = 4 };
	struct swt_target t;
	struct swt_err err = { 0 };
	pid_t old[OLD], fresh[KILLED], shell;
	int hold[2], go[2];
	char dir[600], joined[OLD * 12 + 16], exe[256] = "";
	size_t len = 0;
	const struct swt_target_proc *p;

	CHECK_INT(pipe(hold), 0);
	start_blocked(hold, old, OLD);
	init_target_maps(&t, "joined-maps", dir, sizeof(dir));
	t.kind = SWT_TARGET_CGROUP;
	len += (size_t)snprintf(joined + len, sizeof(joined) - len, "%d", (int)getpid());
	for (int k = 0; k < OLD; k++)
		len += (size_t)snprintf(joined + len, sizeof(joined) - len, " %d", (int)old[k]);
	CHECK_INT(swt_target_snapshot_joined(&t, joined, &err), 0);
	CHECK_INT((long)t.nr_live, 64);
	CHECK(start_file_size(dir, old[0]) > 0 && mapped(&t, old[0])->young > 0);

	/*
	 * 4 exit and 4 join: mapped at the next drain, the exited making room
	 * though the last look (none here) saw them as much as it saw the rest
	 */
	for (int k = 0; k < KILLED; k++) {
		CHECK_INT(kill(old[k], SIGKILL), 0);
		CHECK_INT(waitpid(old[k], NULL, 0), old[k]);
	}
	start_blocked(hold, fresh, KILLED);
	len = 0;
	for (int k = 0; k < KILLED; k++)
		len += (size_t)snprintf(joined + len, sizeof(joined) - len, "%d ", (int)fresh[k]);
	CHECK_INT(swt_target_snapshot_joined(&t, joined, &err), 0);
	for (int k = 0; k < KILLED; k++) {
		p = mapped(&t, fresh[k]);
		CHECK(p && !p->gone && p->started && p->young > 0);
	}
	for (int k = 0; k < KILLED; k++)
		CHECK(mapped(&t, old[k])->gone);
	CHECK_INT((long)t.nr_live, 64);

	/* a shell that joined, then exec()s: mapped as what it runs now */
	CHECK_INT(pipe(go), 0);	/* after the other children: theirs would keep it open */
	shell = fork();
	if (shell == 0) {
		char c;

		close(go[1]);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	CHECK(shell > 0);
	close(go[0]);
	CHECK_INT(kill(fresh[0], SIGKILL), 0);	/* room for it */
	CHECK_INT(waitpid(fresh[0], NULL, 0), fresh[0]);
	snprintf(joined, sizeof(joined), "%d", (int)shell);
	CHECK_INT(swt_target_snapshot_joined(&t, joined, &err), 0);
	p = mapped(&t, shell);
	CHECK(p && p->started && !strstr(p->exe, "sleep"));
	close(go[1]);
	for (int n = 0; n < 500; n++) {
		char path[64];
		ssize_t r;

		snprintf(path, sizeof(path), "/proc/%d/exe", (int)shell);
		r = readlink(path, exe, sizeof(exe) - 1);
		exe[r > 0 ? r : 0] = '\0';
		if (strstr(exe, "sleep"))
			break;
		usleep(2000);
	}
	CHECK(strstr(exe, "sleep") != NULL);
	CHECK_INT(swt_target_snapshot_joined(&t, NULL, &err), 0);
	p = mapped(&t, shell);
	CHECK(p && strstr(p->exe, "sleep") != NULL);
	swt_target_release(&t);

	kill(shell, SIGKILL);
	CHECK_INT(waitpid(shell, NULL, 0), shell);
	close(hold[1]);
	close(hold[0]);
	reap(old, KILLED, OLD);
	reap(fresh, 1, KILLED);
}

CHECK_MAIN
