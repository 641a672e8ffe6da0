/*
 * blktrace decoder on crafted buffers: v7 and v8 records, both byte orders,
 * PDUs (unplug counts, remaps, cgroup ids), notify records, records split
 * across read boundaries, and every kind of malformed input.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "blktrace.h"
#include "check.h"
#include "util.h"

#define TC(x) ((uint64_t)(x) << 16)

struct buf {
	unsigned char data[8192];
	size_t len;
};

static void add(struct buf *b, int version, int be, uint32_t seq, uint64_t time, uint64_t sector,
		uint32_t bytes, uint64_t action, uint32_t pid, uint32_t dev, uint32_t cpu,
		const void *pdu, uint16_t pdu_len)
{
	struct swt_blk_record r = {
		.version = version, .sequence = seq, .time = time, .sector = sector,
		.bytes = bytes, .action = action, .pid = pid, .device = dev, .cpu = cpu,
		.pdu_len = pdu_len,
	};

	b->len += swt_blk_encode(&r, be, b->data + b->len);
	if (pdu_len) {
		memcpy(b->data + b->len, pdu, pdu_len);
		b->len += pdu_len;
	}
}

/* A small request lifecycle with an unplug PDU and a notify record. */
static void make_trace(struct buf *b, int version, int be)
{
	static const unsigned char unplug_pdu[8] = { 0, 0, 0, 0, 0, 0, 0, 3 };	/* BE u64 3 */
	uint32_t dev = swt_dev_make(8, 16);

	memset(b, 0, sizeof(*b));
	add(b, version, be, 1, 1000, 0, 0, TC(SWT_BLK_TC_NOTIFY) | SWT_BLK_TN_PROCESS, 42, dev, 0,
	    "swapload", 9);
	add(b, version, be, 2, 2000, 2048, 4096,
	    TC(SWT_BLK_TC_READ | SWT_BLK_TC_QUEUE) | SWT_BLK_TA_QUEUE, 42, dev, 0, NULL, 0);
	add(b, version, be, 3, 2100, 2048, 4096,
	    TC(SWT_BLK_TC_READ | SWT_BLK_TC_QUEUE) | SWT_BLK_TA_GETRQ, 42, dev, 0, NULL, 0);
	add(b, version, be, 4, 2200, 2056, 4096,
	    TC(SWT_BLK_TC_READ | SWT_BLK_TC_QUEUE) | SWT_BLK_TA_QUEUE, 42, dev, 0, NULL, 0);
	add(b, version, be, 5, 2300, 2056, 4096,
	    TC(SWT_BLK_TC_READ | SWT_BLK_TC_QUEUE) | SWT_BLK_TA_BACKMERGE, 42, dev, 0, NULL, 0);
	add(b, version, be, 6, 2400, 0, 0, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_UNPLUG_IO, 42, dev, 0,
	    unplug_pdu, 8);
	add(b, version, be, 7, 2500, 2048, 8192,
	    TC(SWT_BLK_TC_READ | SWT_BLK_TC_ISSUE) | SWT_BLK_TA_ISSUE, 42, dev, 0, NULL, 0);
	add(b, version, be, 8, 9000, 2048, 8192,
	    TC(SWT_BLK_TC_READ | SWT_BLK_TC_COMPLETE | SWT_BLK_TC_SYNC) | SWT_BLK_TA_COMPLETE, 0,
	    dev, 0, NULL, 0);
}

struct collected {
	struct swt_event ev[32];
	int n;
};

static void decode_mem(const struct buf *b, struct collected *out, int *be)
{
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_err err = { 0 };
	int ret;

	memset(out, 0, sizeof(*out));
	CHECK_INT(swt_blk_reader_open_mem(b->data, b->len, "mem", &r, &err), 0);
	while ((ret = swt_blk_reader_next(r, &rec, &err)) > 0) {
		if (swt_blk_record_to_event(&rec, &out->ev[out->n]) > 0 && out->n < 31)
			out->n++;
	}
	CHECK_INT(ret, 0);
	*be = swt_blk_reader_big_endian(r);
	swt_blk_reader_free(r);
}

static void check_trace_events(const struct collected *c)
{
	CHECK_INT(c->n, 8);
	CHECK_INT(c->ev[0].type, SWT_EV_COMM);
	CHECK_STR(c->ev[0].comm, "swapload");
	CHECK_INT(c->ev[0].pid, 42);
	CHECK_INT(c->ev[1].type, SWT_EV_BLOCK);
	CHECK_INT(c->ev[1].block.action, SWT_BA_QUEUE);
	CHECK_INT(c->ev[1].block.sector, 2048);
	CHECK_INT(c->ev[1].block.nr_sectors, 8);
	CHECK_INT(c->ev[1].block.dev, swt_dev_make(8, 16));
	CHECK_STR(c->ev[1].block.rwbs, "R");
	CHECK_INT(c->ev[1].block.write, 0);
	CHECK_STR(c->ev[1].name, "block_bio_queue");
	CHECK_INT(c->ev[4].block.action, SWT_BA_BACKMERGE);
	CHECK_INT(c->ev[5].block.action, SWT_BA_UNPLUG);
	CHECK_INT(c->ev[5].block.arg, 3);
	CHECK_STR(c->ev[5].block.rwbs, "N");
	CHECK_INT(c->ev[6].block.nr_sectors, 16);
	CHECK_INT(c->ev[7].block.action, SWT_BA_COMPLETE);
	CHECK_STR(c->ev[7].block.rwbs, "RS");
	CHECK_INT(c->ev[7].ts, 9000);
}

TEST(v7_little_endian)
{
	struct buf b;
	struct collected c;
	int be;

	make_trace(&b, SWT_BLK_V7, 0);
	CHECK_INT(b.len, 8 * 48 + 9 + 8);
	decode_mem(&b, &c, &be);
	CHECK_INT(be, 0);
	check_trace_events(&c);
}

TEST(v7_big_endian_same_events)
{
	struct buf le, bige;
	struct collected a, b;
	int be;

	make_trace(&le, SWT_BLK_V7, 0);
	make_trace(&bige, SWT_BLK_V7, 1);
	CHECK(memcmp(le.data, bige.data, le.len) != 0);
	decode_mem(&le, &a, &be);
	decode_mem(&bige, &b, &be);
	CHECK_INT(be, 1);
	check_trace_events(&b);
	CHECK_INT(a.n, b.n);
	for (int i = 0; i < a.n && i < b.n; i++) {
		CHECK_INT(a.ev[i].ts, b.ev[i].ts);
		CHECK_INT(a.ev[i].block.sector, b.ev[i].block.sector);
		CHECK_INT(a.ev[i].block.arg, b.ev[i].block.arg);
	}
}

TEST(v8_both_orders)
{
	struct buf b;
	struct collected c;
	int be;

	for (int order = 0; order < 2; order++) {
		make_trace(&b, SWT_BLK_V8, order);
		CHECK_INT(b.len, 8 * 64 + 9 + 8);
		decode_mem(&b, &c, &be);
		CHECK_INT(be, order);
		check_trace_events(&c);
	}
}

TEST(v8_wide_categories)
{
	struct buf b = { .len = 0 };
	struct collected c;
	int be;

	/* a zone append completion: a category bit above 16 */
	add(&b, SWT_BLK_V8, 0, 1, 5, 64, 4096,
	    TC(SWT_BLK_TC_COMPLETE | SWT_BLK_TC_ZONE_APPEND | SWT_BLK_TC_WRITE) | SWT_BLK_TA_COMPLETE,
	    1, swt_dev_make(259, 0), 1, NULL, 0);
	decode_mem(&b, &c, &be);
	CHECK_INT(c.n, 1);
	CHECK_STR(c.ev[0].block.rwbs, "ZA");
	CHECK_INT(c.ev[0].block.write, 1);
}

TEST(remap_and_cgroup_pdus)
{
	unsigned char remap[16] = { 0, 0x80, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0 };
	unsigned char cg[8 + 8] = { 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 5 };
	struct buf b = { .len = 0 };
	struct collected c;
	int be;

	add(&b, SWT_BLK_V7, 1, 1, 10, 4096, 4096,
	    TC(SWT_BLK_TC_QUEUE | SWT_BLK_TC_READ) | SWT_BLK_TA_REMAP, 7, swt_dev_make(8, 0), 0,
	    remap, sizeof(remap));
	/* cgroup flag: the PDU starts with an 8-byte cgroup id, then the unplug count */
	add(&b, SWT_BLK_V7, 1, 2, 11, 0, 0,
	    TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_UNPLUG_TIMER | SWT_BLK_TA_CGROUP, 7,
	    swt_dev_make(8, 0), 0, cg, sizeof(cg));
	decode_mem(&b, &c, &be);
	CHECK_INT(c.n, 2);
	CHECK_INT(c.ev[0].block.action, SWT_BA_REMAP);
	CHECK_INT(c.ev[0].block.arg, 4096);
	CHECK_INT(c.ev[0].block.arg_dev, 0x00800010);
	CHECK_INT(c.ev[1].block.action, SWT_BA_UNPLUG_TIMER);
	CHECK_INT(c.ev[1].block.arg, 5);
}

TEST(truncated_record)
{
	struct buf b;
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_err err = { 0 };
	int ret, n = 0;

	make_trace(&b, SWT_BLK_V7, 0);
	CHECK_INT(swt_blk_reader_open_mem(b.data, b.len - 20, "short.blktrace.0", &r, &err), 0);
	while ((ret = swt_blk_reader_next(r, &rec, &err)) > 0)
		n++;
	CHECK_INT(ret, -SWT_EFORMAT);
	CHECK_INT(n, 7);
	CHECK(strstr(err.msg, "'short.blktrace.0': truncated record at offset 353") != NULL);
	swt_blk_reader_free(r);
}

TEST(truncated_pdu)
{
	static const unsigned char pdu[8] = { 0 };
	struct buf b = { .len = 0 };
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_err err = { 0 };

	add(&b, SWT_BLK_V7, 0, 1, 1, 0, 0, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_UNPLUG_IO, 1, 1, 0,
	    pdu, 8);
	CHECK_INT(swt_blk_reader_open_mem(b.data, b.len - 3, "p", &r, &err), 0);
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), -SWT_EFORMAT);
	CHECK(strstr(err.msg, "offset 0 (PDU of 8 bytes)") != NULL);
	swt_blk_reader_free(r);
}

TEST(bad_magic_and_version)
{
	struct buf b;
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_err err = { 0 };

	make_trace(&b, SWT_BLK_V7, 0);
	b.data[3] ^= 0xff;	/* the 0x65 of the little-endian magic */
	CHECK_INT(swt_blk_reader_open_mem(b.data, b.len, "x", &r, &err), 0);
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), -SWT_EFORMAT);
	CHECK(strstr(err.msg, "not a blktrace file") && strstr(err.msg, "offset 0"));
	swt_blk_reader_free(r);

	/* a later record with a foreign magic */
	make_trace(&b, SWT_BLK_V7, 0);
	b.data[48 + 9 + 2] = 0x11;
	swt_err_clear(&err);
	CHECK_INT(swt_blk_reader_open_mem(b.data, b.len, "x", &r, &err), 0);
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), 1);
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), -SWT_EFORMAT);
	CHECK(strstr(err.msg, "bad record magic") && strstr(err.msg, "offset 57"));
	swt_blk_reader_free(r);

	/* version 9 does not exist */
	make_trace(&b, SWT_BLK_V7, 0);
	b.data[0] = 9;
	swt_err_clear(&err);
	CHECK_INT(swt_blk_reader_open_mem(b.data, b.len, "x", &r, &err), 0);
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), -SWT_EVERSION);
	CHECK(strstr(err.msg, "unsupported blktrace record version 9 at offset 0"));
	swt_blk_reader_free(r);
}

/*
 * Record 0's PDU length damaged to 65535: the error names that record and
 * its length field, whether the length runs past the end of the file or
 * lands in the middle of a later record.
 */
TEST(bad_pdu_length)
{
	static const int versions[] = { SWT_BLK_V7, SWT_BLK_V8 };

	for (size_t v = 0; v < 2; v++) {
		int version = versions[v];
		size_t size = version == SWT_BLK_V7 ? SWT_BLK_V7_SIZE : SWT_BLK_V8_SIZE;
		size_t field = version == SWT_BLK_V7 ? 46 : 50, n = 2000, len = 0;
		unsigned char *data = calloc(n, size);
		struct swt_blk_reader *r;
		struct swt_blk_record rec;
		struct swt_err err = { 0 };
		char want[160];
		struct buf b;

		if (!data) {
			CHECK(data != NULL);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			struct swt_blk_record q = {
				.version = version, .sequence = (uint32_t)i, .time = i, .sector = 8 * i,
				.bytes = 4096, .action = TC(SWT_BLK_TC_READ | SWT_BLK_TC_QUEUE) |
							  SWT_BLK_TA_QUEUE,
				.pid = 42, .device = swt_dev_make(8, 16),
			};

			len += swt_blk_encode(&q, 0, data + len);
		}
		data[field] = data[field + 1] = 0xff;
		CHECK_INT(swt_blk_reader_open_mem(data, len, "big", &r, &err), 0);
		CHECK_INT(swt_blk_reader_next(r, &rec, &err), 1);
		CHECK_INT(swt_blk_reader_next(r, &rec, &err), -SWT_EFORMAT);
		snprintf(want, sizeof(want), "'big': bad PDU length 65535 at offset %zu (record at "
			 "offset 0): no record follows at offset %zu", field, size + 65535);
		CHECK_STR(err.msg, want);
		swt_blk_reader_free(r);
		free(data);

		/* a file shorter than the length says */
		make_trace(&b, version, 0);
		b.data[field] = b.data[field + 1] = 0xff;
		swt_err_clear(&err);
		CHECK_INT(swt_blk_reader_open_mem(b.data, b.len, "short", &r, &err), 0);
		CHECK_INT(swt_blk_reader_next(r, &rec, &err), -SWT_EFORMAT);
		snprintf(want, sizeof(want), "'short': bad PDU length 65535 at offset %zu (record at "
			 "offset 0): runs past the end of the file", field);
		CHECK_STR(err.msg, want);
		swt_blk_reader_free(r);
	}
}

TEST(unknown_action)
{
	struct buf b = { .len = 0 };
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_event ev;
	struct swt_err err = { 0 };

	add(&b, SWT_BLK_V7, 0, 1, 1, 0, 0, TC(SWT_BLK_TC_QUEUE) | 0x7f, 1, 1, 0, NULL, 0);
	CHECK_INT(swt_blk_reader_open_mem(b.data, b.len, "x", &r, &err), 0);
	CHECK_INT(swt_blk_reader_next(r, &rec, &err), 1);
	CHECK(swt_blk_record_to_event(&rec, &ev) < 0);
	swt_blk_reader_free(r);
}

static int count_cb(void *ctx, const struct swt_event *ev)
{
	struct collected *c = ctx;

	if (c->n < 32)
		c->ev[c->n++] = *ev;
	return 0;
}

/* Records split across read() boundaries, with tiny and odd buffer sizes. */
TEST(split_across_reads)
{
	char path[] = "/tmp/swt-test-blkXXXXXX";
	struct buf b;
	int fd = mkstemp(path);
	size_t sizes[] = { 1, 7, 48, 50, 63, 1000 };

	make_trace(&b, SWT_BLK_V8, 1);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, b.data, b.len), (long long)b.len);
	close(fd);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(sizes); i++) {
		struct collected c = { .n = 0 };
		struct swt_blktrace_stats st;
		struct swt_err err = { 0 };
		char *paths[] = { path, NULL };

		CHECK_INT(swt_blktrace_decode(paths, 1, sizes[i], count_cb, &c, &st, &err), 0);
		check_trace_events(&c);
		CHECK_INT(st.records, 8);
		CHECK_INT(st.big_endian, 1);
		CHECK_INT(st.version, 8);
	}
	unlink(path);
}

/* Two per-CPU files merge by time; a sequence gap counts as lost events. */
TEST(merge_cpus_and_sequence_gaps)
{
	char p0[] = "/tmp/swt-test-cpuXXXXXX", p1[] = "/tmp/swt-test-cpuXXXXXX";
	struct buf a = { .len = 0 }, b = { .len = 0 };
	struct collected c = { .n = 0 };
	struct swt_blktrace_stats st;
	struct swt_err err = { 0 };
	char *paths[] = { p0, p1, NULL };
	int fd;

	add(&a, 7, 0, 1, 100, 8, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_QUEUE, 1, 1, 0, NULL, 0);
	add(&a, 7, 0, 5, 300, 8, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_GETRQ, 1, 1, 0, NULL, 0);
	add(&b, 7, 0, 1, 200, 16, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_QUEUE, 1, 1, 1, NULL, 0);
	add(&b, 7, 0, 2, 400, 16, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_GETRQ, 1, 1, 1, NULL, 0);
	/* a record whose sequence is damaged (back to 0) is no gap, nor is the next */
	add(&b, 7, 0, 0, 500, 16, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_QUEUE, 1, 1, 1, NULL, 0);
	add(&b, 7, 0, 4, 600, 16, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_GETRQ, 1, 1, 1, NULL, 0);
	fd = mkstemp(p0);
	CHECK_INT(write(fd, a.data, a.len), (long long)a.len);
	close(fd);
	fd = mkstemp(p1);
	CHECK_INT(write(fd, b.data, b.len), (long long)b.len);
	close(fd);
	CHECK_INT(swt_blktrace_decode(paths, 2, 0, count_cb, &c, &st, &err), 0);
	CHECK_INT(c.n, 6);
	CHECK_INT(c.ev[0].ts, 100);
	CHECK_INT(c.ev[1].ts, 200);
	CHECK_INT(c.ev[2].ts, 300);
	CHECK_INT(c.ev[3].ts, 400);
	CHECK_INT(st.lost, 3);
	CHECK_INT(st.cpus, 2);
	unlink(p0);
	unlink(p1);
}

/*
 * A sequence number damaged upwards, the next record going on from before
 * it, is no gap (it claimed 3999999997 lost events); a gap the next record
 * confirms is, as is one in the last record.
 */
TEST(sequence_damaged_upwards)
{
	static const uint32_t seqs[] = { 1, 2, 4000000000u, 4, 5, 9, 10, 13 };
	char p0[] = "/tmp/swt-test-seqXXXXXX";
	struct buf a = { .len = 0 };
	struct collected c = { .n = 0 };
	struct swt_blktrace_stats st;
	struct swt_err err = { 0 };
	char *paths[] = { p0, NULL };
	int fd;

	for (size_t i = 0; i < SWT_ARRAY_SIZE(seqs); i++)
		add(&a, 7, 0, seqs[i], 100 * (i + 1), 8 * i, 4096,
		    TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_QUEUE, 1, 1, 0, NULL, 0);
	fd = mkstemp(p0);
	CHECK_INT(write(fd, a.data, a.len), (long long)a.len);
	close(fd);
	CHECK_INT(swt_blktrace_decode(paths, 1, 0, count_cb, &c, &st, &err), 0);
	CHECK_INT(c.n, 8);
	CHECK_INT(st.lost, 3 + 2);	/* 6-8 and 11-12 */
	unlink(p0);
}

/* A time past 2^63 - 1 ns, stored as a negative number (2^63 as NULL), is damage. */
TEST(time_past_int64)
{
	char p0[] = "/tmp/swt-test-timeXXXXXX";
	struct buf a = { .len = 0 };
	struct collected c = { .n = 0 };
	struct swt_blktrace_stats st;
	struct swt_err err = { 0 };
	char *paths[] = { p0, NULL };
	int fd;

	add(&a, 7, 0, 1, 100, 8, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_QUEUE, 1, 1, 0, NULL, 0);
	add(&a, 7, 0, 2, (uint64_t)1 << 63, 8, 4096, TC(SWT_BLK_TC_QUEUE) | SWT_BLK_TA_GETRQ, 1, 1,
	    0, NULL, 0);
	fd = mkstemp(p0);
	CHECK_INT(write(fd, a.data, a.len), (long long)a.len);
	close(fd);
	CHECK_INT(swt_blktrace_decode(paths, 1, 0, count_cb, &c, &st, &err), -SWT_EFORMAT);
	CHECK(strstr(err.msg, "the record at offset 48 has time 9223372036854775808 ns, past "
			      "2^63 - 1") != NULL);
	unlink(p0);
}

TEST(expand_names)
{
	struct swt_err err = { 0 };
	char **paths;
	size_t n;

	CHECK_INT(swt_blktrace_expand("/nonexistent/swap", &paths, &n, &err), -SWT_ENOENT);
	CHECK(strstr(err.msg, "'/nonexistent/swap.blktrace.0'") != NULL);
}

CHECK_MAIN
