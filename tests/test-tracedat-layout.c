/*
 * The structural trace.dat reader (tracedat-layout.c) on crafted files:
 * version 7 option chains, buffers, CPUSTAT and compressed chunk walking;
 * version 6 headers, options and flyrecord tables; and the damage it must
 * refuse before libtracecmd sees a file.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <zstd.h>

#include "check.h"
#include "tracedat-layout.h"
#include "util.h"

#define PAGE 4096

struct file {
	unsigned char *data;
	size_t len, cap;
	char path[64];
};

static void put(struct file *f, const void *p, size_t n)
{
	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2 + 1024;
		f->data = realloc(f->data, f->cap);
	}
	memcpy(f->data + f->len, p, n);
	f->len += n;
}

static void put16(struct file *f, uint16_t v) { put(f, &v, 2); }	/* host: little-endian */
static void put32(struct file *f, uint32_t v) { put(f, &v, 4); }
static void put64(struct file *f, uint64_t v) { put(f, &v, 8); }
static void puts0(struct file *f, const char *s) { put(f, s, strlen(s) + 1); }
static void set64(struct file *f, size_t at, uint64_t v) { memcpy(f->data + at, &v, 8); }
static void set32(struct file *f, size_t at, uint32_t v) { memcpy(f->data + at, &v, 4); }
static uint64_t get64(const struct file *f, size_t at)
{
	uint64_t v;

	memcpy(&v, f->data + at, 8);
	return v;
}
static void pad_to(struct file *f, size_t at) { while (f->len < at) put(f, "", 1); }

static void header(struct file *f, const char *version)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

	memset(f, 0, sizeof(*f));
	put(f, magic, sizeof(magic));
	puts0(f, version);
	put(f, "\0\x08", 2);	/* little-endian, 8-byte longs */
	put32(f, PAGE);
}

/* Option header; returns where its u32 size is, to patch once known. */
static size_t option(struct file *f, uint16_t id)
{
	size_t at;

	put16(f, id);
	at = f->len;
	put32(f, 0);
	return at;
}

static void option_end(struct file *f, size_t size_at)
{
	set32(f, size_at, (uint32_t)(f->len - size_at - 4));
}

static void cpustat(struct file *f, const char *text)
{
	size_t at = option(f, 2);

	puts0(f, text);
	option_end(f, at);
}

/*
 * A version 7 file: options section (CPUSTAT, a BUFFER "swt" with two CPUs
 * of data), its flyrecord section, and the data.  compressed: the data of
 * each CPU is a chunk list (u32 count, then u32 csize, u32 usize, bytes).
 * Returns the offsets a test may want to damage.
 */
struct v7_spots {
	size_t options_field, buffer_opt, buffer_size_at, cpu_entry[2], fly_sect, data[2];
};

static void make_v7_clock(struct file *f, int compressed, struct v7_spots *sp, const char *clock,
			  int tsc2nsec)
{
	size_t sect, size_at, opt_size_at;

	header(f, "7");
	puts0(f, "none");
	puts0(f, "");
	sp->options_field = f->len;
	put64(f, 0);
	/* the flyrecord section header of the buffer */
	sp->fly_sect = f->len;
	put16(f, 3);
	put16(f, compressed ? 1 : 0);
	put32(f, 0);
	put64(f, 0);
	/* options section */
	sect = f->len;
	set64(f, sp->options_field, sect);
	put16(f, 0);
	put16(f, 0);
	put32(f, 0);
	size_at = f->len;
	put64(f, 0);
	cpustat(f, "CPU: 0\nentries: 0\noverrun: 0\nread events: 11\n");
	cpustat(f, "\nBuffer: swt\n\n");
	cpustat(f, "CPU: 0\nentries: 0\noverrun: 3\nread events: 42\ndropped events: 1\n");
	cpustat(f, "CPU: 1\nread events: 7\n");
	opt_size_at = option(f, 3);
	sp->buffer_opt = f->len;
	sp->buffer_size_at = opt_size_at;
	put64(f, sp->fly_sect);
	puts0(f, "swt");
	puts0(f, clock);
	put32(f, PAGE);
	put32(f, 2);
	for (int i = 0; i < 2; i++) {
		sp->cpu_entry[i] = f->len;
		put32(f, (uint32_t)i);
		put64(f, 0);	/* data offset, patched below */
		put64(f, 0);	/* data size */
	}
	option_end(f, opt_size_at);
	if (tsc2nsec) {
		/* multiplier, shift, offset: after the BUFFER option that names the clock */
		opt_size_at = option(f, 14);
		put32(f, (uint32_t)tsc2nsec);
		put32(f, 10);
		put64(f, 0);
		option_end(f, opt_size_at);
	}
	opt_size_at = option(f, 0);	/* DONE: no next section */
	put64(f, 0);
	option_end(f, opt_size_at);
	set64(f, size_at, f->len - size_at - 8);
	/* per-CPU data, page aligned */
	for (int i = 0; i < 2; i++) {
		pad_to(f, (f->len + PAGE - 1) / PAGE * PAGE);
		sp->data[i] = f->len;
		set64(f, sp->cpu_entry[i] + 4, f->len);
		if (compressed) {
			/* two chunks of 100 and 60 bytes, 8192 and 4096 bytes uncompressed */
			put32(f, 2);
			put32(f, 100);
			put32(f, 2 * PAGE);
			pad_to(f, f->len + 100);
			put32(f, 60);
			put32(f, PAGE);
			pad_to(f, f->len + 60);
			set64(f, sp->cpu_entry[i] + 12, f->len - sp->data[i] - 4);
		} else {
			pad_to(f, f->len + (size_t)(i + 1) * PAGE);
			set64(f, sp->cpu_entry[i] + 12, (uint64_t)(i + 1) * PAGE);
		}
	}
}

static void make_v7(struct file *f, int compressed, struct v7_spots *sp)
{
	make_v7_clock(f, compressed, sp, "local", 0);
}

static int read_layout(struct file *f, struct swt_td_layout *l, struct swt_err *err)
{
	FILE *out;

	snprintf(f->path, sizeof(f->path), "/tmp/swt-test-layout-%d.dat", (int)getpid());
	out = fopen(f->path, "wb");
	CHECK(out != NULL);
	if (!out)
		return -1;
	fwrite(f->data, 1, f->len, out);
	fclose(out);
	memset(err, 0, sizeof(*err));
	return swt_td_layout_read(f->path, l, err);
}

static void done(struct file *f)
{
	unlink(f->path);
	free(f->data);
}

/* The layout must be read. */
static void check_taken(struct file *f)
{
	struct swt_td_layout l;
	struct swt_err err;

	CHECK_INT(read_layout(f, &l, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	else
		swt_td_layout_release(&l);
}

/* The layout must be refused with a message containing want. */
static void check_refused(struct file *f, const char *want)
{
	struct swt_td_layout l;
	struct swt_err err;

	CHECK(read_layout(f, &l, &err) < 0);
	if (!strstr(err.msg, want)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, want);
		check_failures++;
	}
	CHECK(strstr(err.msg, f->path) != NULL);
}

TEST(v7_buffers_and_cpustat)
{
	struct file f;
	struct v7_spots sp;
	struct swt_td_layout l;
	struct swt_err err;
	const struct swt_td_stat *st;

	make_v7(&f, 0, &sp);
	CHECK_INT(read_layout(&f, &l, &err), 0);
	CHECK_INT(l.version, 7);
	CHECK_INT(l.page_size, PAGE);
	CHECK_STR(l.compression, "none");
	CHECK_STR(l.clock, "local");
	CHECK_INT(l.nr_buffers, 1);
	CHECK_STR(l.buffers[0].name, "swt");
	CHECK_INT(l.buffers[0].compressed, 0);
	CHECK_INT(l.buffers[0].nr_cpus, 2);
	CHECK_INT(l.buffers[0].cpus[1].cpu, 1);
	CHECK_INT(l.buffers[0].cpus[1].offset, sp.data[1]);
	CHECK_INT(l.buffers[0].cpus[1].data_size, 2 * PAGE);
	/* CPUSTAT entries belong to the buffer the "Buffer:" line named */
	st = swt_td_layout_stat(&l, "", 0);
	CHECK(st && st->read_events == 11);
	st = swt_td_layout_stat(&l, "swt", 0);
	CHECK(st && st->read_events == 42 && st->overrun == 3 && st->dropped == 1);
	st = swt_td_layout_stat(&l, "swt", 1);
	CHECK(st && st->read_events == 7);
	CHECK(swt_td_layout_stat(&l, "swt", 2) == NULL);
	swt_td_layout_release(&l);
	done(&f);
}

TEST(v7_compressed_chunks)
{
	struct file f;
	struct v7_spots sp;
	struct swt_td_layout l;
	struct swt_err err;

	make_v7(&f, 1, &sp);
	CHECK_INT(read_layout(&f, &l, &err), 0);
	CHECK_INT(l.buffers[0].compressed, 1);
	/* uncompressed size: the chunk headers' sum, not the bytes in the file */
	CHECK_INT(l.buffers[0].cpus[0].data_size, 3 * PAGE);
	CHECK_INT(l.buffers[0].cpus[0].size, 8 + 100 + 8 + 60);
	swt_td_layout_release(&l);

	/* a chunk longer than the CPU's data */
	set32(&f, sp.data[1] + 4 + 8 + 100, 1000);
	check_refused(&f, "buffer 'swt' CPU 1: chunk 1 at offset");
	done(&f);

	/* more chunks declared than there are */
	make_v7(&f, 1, &sp);
	set32(&f, sp.data[0], 3);
	check_refused(&f, "buffer 'swt' CPU 0: chunk 2 header at offset");
	done(&f);

	/*
	 * a size of 2^64 - 4, which 4 (the chunk count) plus wrapped to 0
	 * bytes: at the end of the file the count was once read past it
	 */
	make_v7(&f, 1, &sp);
	set64(&f, sp.cpu_entry[1] + 4, f.len);
	set64(&f, sp.cpu_entry[1] + 12, UINT64_MAX - 3);
	{
		char want[128];

		snprintf(want, sizeof(want), "compressed CPU data at offset %zu (4 bytes) runs past "
			 "the end of the file", f.len);
		check_refused(&f, want);
	}
	done(&f);
	/* inside the file, the chunks it declares run past its end */
	make_v7(&f, 1, &sp);
	set64(&f, sp.cpu_entry[1] + 12, UINT64_MAX - 3);
	{
		char want[128];

		snprintf(want, sizeof(want), "compressed CPU data at offset %zu (%llu bytes) runs "
			 "past the end of the file", sp.data[1] + 4, (unsigned long long)UINT64_MAX - 3);
		check_refused(&f, want);
	}
	done(&f);
}

/*
 * A second options section at the end of a make_v7 file, holding a
 * CPUCOUNT option of n: after the BUFFER option, as it may be.  Returns
 * the CPUCOUNT option's data offset.
 */
static size_t add_cpucount(struct file *f, const struct v7_spots *sp, uint32_t n)
{
	size_t first = (size_t)get64(f, sp->options_field), sect = f->len, size_at, at, count;

	/* the first section's DONE option links to it */
	set64(f, first + 16 + get64(f, first + 8) - 8, sect);
	put16(f, 0);
	put16(f, 0);
	put32(f, 0);
	size_at = f->len;
	put64(f, 0);
	at = option(f, 8);
	count = f->len;
	put32(f, n);
	option_end(f, at);
	at = option(f, 0);
	put64(f, 0);
	option_end(f, at);
	set64(f, size_at, f->len - size_at - 8);
	return count;
}

TEST(v7_damaged_structure)
{
	struct file f;
	struct v7_spots sp;

	/*
	 * a buffer's clock that counts no nanoseconds, named in its BUFFER
	 * option; x86-tsc is taken with a TSC2NSEC option that has a
	 * multiplier, even one that comes after the clock
	 */
	make_v7_clock(&f, 0, &sp, "counter", 2048);
	check_refused(&f, "trace clock 'counter' at offset");
	done(&f);
	make_v7_clock(&f, 0, &sp, "x86-tsc", 0);
	check_refused(&f, "trace clock 'x86-tsc' at offset");
	done(&f);
	make_v7_clock(&f, 0, &sp, "x86-tsc", 2048);
	check_taken(&f);
	done(&f);

	/* options offset past the end */
	make_v7(&f, 0, &sp);
	set64(&f, sp.options_field, f.len + 10);
	check_refused(&f, "options section header at offset");
	done(&f);

	/* options offset at something that is not an options section */
	make_v7(&f, 0, &sp);
	set64(&f, sp.options_field, sp.fly_sect);
	check_refused(&f, "should be options (id 0), has id 3");
	done(&f);

	/* the buffer's flyrecord section is not one */
	make_v7(&f, 0, &sp);
	set64(&f, sp.buffer_opt, 0);
	check_refused(&f, "buffer flyrecord section at offset 0 has section id 2071, expected 3");
	done(&f);

	/* a CPU count that does not fill the option: a damaged name or count */
	make_v7(&f, 0, &sp);
	set32(&f, sp.cpu_entry[0] - 4, 1);
	check_refused(&f, "do not hold a buffer description");
	done(&f);
	make_v7(&f, 0, &sp);
	f.data[sp.buffer_opt + 8 + 3] = 'x';	/* "swt\0" loses its end */
	check_refused(&f, "BUFFER option at offset");
	done(&f);

	/* CPU data past the end of the file */
	make_v7(&f, 0, &sp);
	set64(&f, sp.cpu_entry[1] + 12, 100 * PAGE);
	check_refused(&f, "CPU data at offset");
	done(&f);

	/* options that point back at themselves: the link that does is named */
	make_v7(&f, 0, &sp);
	{
		size_t sect = (size_t)*(uint64_t *)(f.data + sp.options_field);
		uint64_t size;
		char want[160];

		memcpy(&size, f.data + sect + 8, 8);
		set64(&f, sect + 16 + size - 8, sect);	/* DONE's next offset */
		snprintf(want, sizeof(want), "the DONE option at offset %zu links back to the "
			 "options section at offset %zu: the options sections form a loop",
			 sect + 16 + (size_t)size - 8, sect);
		check_refused(&f, want);
	}
	done(&f);
	/* ... or at the first of two: the second's DONE closes the loop */
	make_v7(&f, 0, &sp);
	{
		size_t sect = (size_t)get64(&f, sp.options_field), count;
		char want[160];

		count = add_cpucount(&f, &sp, 2);
		/* the second section: CPUCOUNT (6 + 4 bytes), then DONE's header */
		set64(&f, count + 4 + 6, sect);
		snprintf(want, sizeof(want), "the DONE option at offset %zu links back to the "
			 "options section at offset %zu", count + 4 + 6, sect);
		check_refused(&f, want);
	}
	done(&f);
}

/*
 * A BUFFER option's CPU at or past the file's CPU count, or listed twice:
 * libtracecmd took the first for a CPU of its own and ingested its events
 * as that CPU's, and failed to open the file on the second, naming nothing.
 */
TEST(v7_buffer_cpus)
{
	struct file f;
	struct v7_spots sp;
	size_t count;
	char want[256];

	make_v7(&f, 0, &sp);
	add_cpucount(&f, &sp, 2);
	check_taken(&f);
	done(&f);
	/* without a CPUCOUNT there is nothing to hold it to */
	make_v7(&f, 0, &sp);
	set32(&f, sp.cpu_entry[1], 7);
	check_taken(&f);
	done(&f);

	make_v7(&f, 0, &sp);
	set32(&f, sp.cpu_entry[1], 2);
	count = add_cpucount(&f, &sp, 2);
	snprintf(want, sizeof(want), "BUFFER option at offset %zu (buffer 'swt'): its entry at "
		 "offset %zu names CPU 2, past the file's 2 CPUs (CPUCOUNT option at offset %zu)",
		 sp.buffer_opt, sp.cpu_entry[1], count);
	check_refused(&f, want);
	done(&f);
	make_v7(&f, 0, &sp);
	count = add_cpucount(&f, &sp, 1);
	snprintf(want, sizeof(want), "its entry at offset %zu names CPU 1, past the file's 1 CPUs "
		 "(CPUCOUNT option at offset %zu)", sp.cpu_entry[1], count);
	check_refused(&f, want);
	done(&f);

	make_v7(&f, 0, &sp);
	set32(&f, sp.cpu_entry[1], 0);
	add_cpucount(&f, &sp, 2);
	snprintf(want, sizeof(want), "BUFFER option at offset %zu (buffer 'swt'): its entry at "
		 "offset %zu names CPU 0, as its entry at offset %zu does", sp.buffer_opt,
		 sp.cpu_entry[1], sp.cpu_entry[0]);
	check_refused(&f, want);
	done(&f);
}

TEST(header_checks)
{
	struct file f;
	struct v7_spots sp;

	make_v7(&f, 0, &sp);
	f.data[0] = 0x18;
	check_refused(&f, "not a trace.dat file (bad magic at offset 0)");
	done(&f);

	header(&f, "5");
	pad_to(&f, 64);
	check_refused(&f, "trace.dat version '5' is not supported");
	done(&f);

	make_v7(&f, 0, &sp);
	f.data[12] = 2;		/* endianness byte after "7\0" */
	check_refused(&f, "bad endianness byte 2 at offset 12");
	done(&f);

	make_v7(&f, 0, &sp);
	set32(&f, 14, 1000);	/* page size */
	check_refused(&f, "implausible header");
	done(&f);

	header(&f, "7");
	check_refused(&f, "truncated header");
	done(&f);
}

/* A 64-bit kernel's events/header_page, as the kernel writes it. */
static const char HEADER_PAGE[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

/*
 * A version 6 file: header_page, header_event, empty format sections,
 * 2 CPUs, options (BUFFER "swt", CPUSTAT), top-level flyrecord table, the
 * buffer's table, data.
 */
static void make_v6_header_page(struct file *f, size_t *swt_table, size_t *cpus_at,
				const char *printk, const char *header_page)
{
	size_t buf_opt, top_table;

	header(f, "6");
	puts0(f, "header_page");
	put64(f, strlen(header_page));
	put(f, header_page, strlen(header_page));
	puts0(f, "header_event");
	put64(f, 0);
	put32(f, 0);	/* ftrace formats */
	put32(f, 0);	/* event systems */
	put32(f, 0);	/* kallsyms */
	put32(f, (uint32_t)strlen(printk));
	put(f, printk, strlen(printk));
	put64(f, 0);	/* saved cmdlines */
	*cpus_at = f->len;
	put32(f, 2);
	put(f, "options  ", 10);
	buf_opt = option(f, 3);
	put64(f, 0);	/* the buffer's flyrecord table, patched below */
	puts0(f, "swt");
	option_end(f, buf_opt);
	{
		size_t at = option(f, 4);

		puts0(f, "[local] global counter");
		option_end(f, at);
	}
	cpustat(f, "\nBuffer: swt\n\n");
	cpustat(f, "CPU: 1\nread events: 5\n");
	put16(f, 0);	/* end of options */
	top_table = f->len;
	put(f, "flyrecord", 10);
	for (int i = 0; i < 2; i++) {
		put64(f, 0);
		put64(f, 0);
	}
	*swt_table = f->len;
	set64(f, buf_opt + 4, *swt_table);
	put(f, "flyrecord", 10);
	for (int i = 0; i < 2; i++) {
		put64(f, 0);
		put64(f, 0);
	}
	for (int i = 0; i < 2; i++) {
		pad_to(f, (f->len + PAGE - 1) / PAGE * PAGE);
		set64(f, *swt_table + 10 + 16 * (size_t)i, f->len);
		set64(f, *swt_table + 18 + 16 * (size_t)i, PAGE);
		pad_to(f, f->len + PAGE);
	}
	(void)top_table;
}

static void make_v6_printk(struct file *f, size_t *swt_table, size_t *cpus_at, const char *printk)
{
	make_v6_header_page(f, swt_table, cpus_at, printk, HEADER_PAGE);
}

static void make_v6(struct file *f, size_t *swt_table, size_t *cpus_at)
{
	make_v6_printk(f, swt_table, cpus_at, "");
}

TEST(v6_walk)
{
	struct file f;
	struct swt_td_layout l;
	struct swt_err err;
	size_t table, cpus_at;

	make_v6(&f, &table, &cpus_at);
	CHECK_INT(read_layout(&f, &l, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(l.version, 6);
	CHECK_STR(l.compression, "none");
	CHECK_STR(l.clock, "local");
	CHECK_INT(l.nr_buffers, 2);
	CHECK_STR(l.buffers[0].name, "");
	CHECK_INT(l.buffers[0].nr_cpus, 2);
	CHECK_INT(l.buffers[0].cpus[0].size, 0);
	CHECK_STR(l.buffers[1].name, "swt");
	CHECK_INT(l.buffers[1].cpus[1].size, PAGE);
	CHECK_INT(l.buffers[1].cpus[1].offset % PAGE, 0);
	CHECK(swt_td_layout_stat(&l, "swt", 1) && swt_td_layout_stat(&l, "swt", 1)->read_events == 5);
	swt_td_layout_release(&l);
	done(&f);

	/* the buffer's table is not a flyrecord table: the message names its option */
	make_v6(&f, &table, &cpus_at);
	f.data[table] = 'X';
	check_refused(&f, "(instance 'swt') points at offset");
	done(&f);

	/* its BUFFER option points at offset 0, as trace-cmd split (3.1.6) writes it */
	make_v6(&f, &table, &cpus_at);
	for (size_t at = cpus_at; at + 8 <= table; at++)
		if (get64(&f, at) == table) {
			set64(&f, at, 0);
			break;
		}
	check_refused(&f, "(instance 'swt') points at offset 0, where no flyrecord is");
	done(&f);

	/* its CPU data past the end */
	make_v6(&f, &table, &cpus_at);
	set64(&f, table + 18, 10 * PAGE);
	check_refused(&f, "CPU data at offset");
	done(&f);

	/* a CPU count no machine has */
	make_v6(&f, &table, &cpus_at);
	set32(&f, cpus_at, 100000);
	check_refused(&f, "implausible CPU count 100000");
	done(&f);

	/* cut inside the headers */
	make_v6(&f, &table, &cpus_at);
	f.len = cpus_at - 3;
	check_refused(&f, "runs past the end of the file");
	done(&f);
}

/* Where text is in the file (it must be there). */
static size_t find_text(const struct file *f, const char *text)
{
	const unsigned char *at = memmem(f->data, f->len, text, strlen(text));

	CHECK(at != NULL);
	return at ? (size_t)(at - f->data) : 0;
}

/* Overwrite the first copy of old with new, as long. */
static size_t patch_text(struct file *f, const char *old, const char *new)
{
	size_t at = find_text(f, old);

	CHECK_INT(strlen(old), strlen(new));
	memcpy(f->data + at, new, strlen(new));
	return at;
}

/*
 * A version 7 file of only one section, id, holding body -- compressed with
 * zstd or not -- and the options section with the option that points at
 * it.  Returns the section's offset.
 */
static size_t make_v7_section(struct file *f, int compressed, uint16_t id, const struct file *body)
{
	size_t options_field, sect, size_at, at;

	header(f, "7");
	puts0(f, compressed ? "zstd" : "none");
	puts0(f, compressed ? "1.5.5" : "");
	options_field = f->len;
	put64(f, 0);
	sect = f->len;
	put16(f, id);
	put16(f, compressed ? 1 : 0);
	put32(f, 0);
	if (compressed) {
		size_t cap = ZSTD_compressBound(body->len), n;
		void *z = malloc(cap);

		n = ZSTD_compress(z, cap, body->data, body->len, 3);
		CHECK(!ZSTD_isError(n));
		put64(f, 8 + n);
		put32(f, (uint32_t)n);
		put32(f, (uint32_t)body->len);
		put(f, z, n);
		free(z);
	} else {
		put64(f, body->len);
		put(f, body->data, body->len);
	}
	set64(f, options_field, f->len);
	put16(f, 0);
	put16(f, 0);
	put32(f, 0);
	size_at = f->len;
	put64(f, 0);
	at = option(f, id);
	put64(f, sect);
	option_end(f, at);
	at = option(f, 0);	/* DONE */
	put64(f, 0);
	option_end(f, at);
	set64(f, size_at, f->len - size_at - 8);
	return sect;
}

/* A version 7 file of only a header section: header_page, an empty header_event. */
static size_t make_v7_header(struct file *f, int compressed, const char *header_page)
{
	struct file body;
	size_t sect;

	memset(&body, 0, sizeof(body));
	puts0(&body, "header_page");
	put64(&body, strlen(header_page));
	put(&body, header_page, strlen(header_page));
	puts0(&body, "header_event");
	put64(&body, 0);
	sect = make_v7_section(f, compressed, 16, &body);
	free(body.data);
	return sect;
}

/*
 * The header_page text libtraceevent reads without a word when it cannot,
 * leaving libtracecmd a page layout of whatever it was left with: a
 * damaged line is refused where it is, in version 6 and in version 7's
 * header section, compressed or not.
 */
TEST(header_page_checks)
{
	static const char commit[] = "\tfield: local_t commit;\toffset:8;\tsize:8;";
	/* a 32-bit kernel's, and an older one's without the overwrite flag */
	static const char page32[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n";
	struct file f;
	size_t table, cpus_at, at, sect, line = strstr(HEADER_PAGE, "\tfield: local_t") - HEADER_PAGE;
	char want[256], text[sizeof(HEADER_PAGE)];

	make_v6_header_page(&f, &table, &cpus_at, "", page32);
	check_taken(&f);
	done(&f);
	/* kernels before 2.6.31 have none: libtraceevent's own defaults */
	make_v6_header_page(&f, &table, &cpus_at, "", "");
	check_taken(&f);
	done(&f);

	/* a commit count of 3 bytes: libtracecmd read every page as of 4-byte longs */
	make_v6(&f, &table, &cpus_at);
	at = patch_text(&f, commit, "\tfield: local_t commit;\toffset:8;\tsize:3;");
	snprintf(want, sizeof(want), "header_page: the line at offset %zu gives the commit count 3 "
		 "bytes at offset 8, not 4 or 8 (a long) at 8", at);
	check_refused(&f, want);
	done(&f);
	/* a 4-byte one whose data still starts at 16: one of the two is damaged */
	make_v6(&f, &table, &cpus_at);
	at = patch_text(&f, commit, "\tfield: local_t commit;\toffset:8;\tsize:4;");
	snprintf(want, sizeof(want), "header_page: the line at offset %zu puts the data at offset "
		 "16, not right after the 4-byte commit count (at 12)",
		 find_text(&f, "\tfield: char data;"));
	check_refused(&f, want);
	done(&f);
	/* the time stamp's size (libtracecmd stopped before any event) */
	make_v6(&f, &table, &cpus_at);
	at = patch_text(&f, "timestamp;\toffset:0;\tsize:8;", "timestamp;\toffset:0;\tsize:1;");
	snprintf(want, sizeof(want), "header_page: the line at offset %zu gives the time stamp 1 "
		 "bytes at offset 0, not 8 at 0", find_text(&f, "\tfield: u64 timestamp"));
	check_refused(&f, want);
	done(&f);
	/* a line that is not one, and a field's name */
	make_v6(&f, &table, &cpus_at);
	at = patch_text(&f, "\tfield: u64", "\tfie1d: u64");
	snprintf(want, sizeof(want), "header_page: the line at offset %zu is not 'field: TYPE "
		 "NAME; offset:N; size:N;'", at);
	check_refused(&f, want);
	done(&f);
	make_v6(&f, &table, &cpus_at);
	at = patch_text(&f, commit, "\tfield: local_t commix;\toffset:8;\tsize:8;");
	snprintf(want, sizeof(want), "header_page: the line at offset %zu describes a field "
		 "'commix' where 'commit' belongs", at);
	check_refused(&f, want);
	done(&f);
	/* the text cut after its commit count */
	make_v6_header_page(&f, &table, &cpus_at, "",
			    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n");
	snprintf(want, sizeof(want), "header_page: the text ends at offset %zu, before its 'data' "
		 "field", find_text(&f, "header_event"));
	check_refused(&f, want);
	done(&f);

	/* version 7: the header section, as it is ... */
	sect = make_v7_header(&f, 0, HEADER_PAGE);
	check_taken(&f);
	done(&f);
	/* ... its names and sizes (libtracecmd could not open the file, no offset) ... */
	sect = make_v7_header(&f, 0, HEADER_PAGE);
	f.data[sect + 16 + 10] = 'X';
	snprintf(want, sizeof(want), "expected 'header_page' at offset %zu", sect + 16);
	check_refused(&f, want);
	done(&f);
	sect = make_v7_header(&f, 0, HEADER_PAGE);
	set64(&f, sect + 16 + 12, 1000);
	snprintf(want, sizeof(want), "header_page at offset %zu declares 1000 bytes, past the end "
		 "of the header section at offset %zu", sect + 16, sect);
	check_refused(&f, want);
	done(&f);
	sect = make_v7_header(&f, 0, HEADER_PAGE);
	f.data[find_text(&f, "header_event") + 3] = 'X';
	snprintf(want, sizeof(want), "expected 'header_event' at offset %zu",
		 sect + 16 + 20 + strlen(HEADER_PAGE));
	check_refused(&f, want);
	done(&f);
	/* ... and its text, compressed or not */
	memcpy(text, HEADER_PAGE, sizeof(text));
	memcpy(strstr(text, commit) + strlen(commit) - 2, "3", 1);
	sect = make_v7_header(&f, 0, text);
	snprintf(want, sizeof(want), "header_page: the line at offset %zu gives the commit count 3 "
		 "bytes", sect + 16 + 20 + line);
	check_refused(&f, want);
	done(&f);
	sect = make_v7_header(&f, 1, HEADER_PAGE);
	check_taken(&f);
	done(&f);
	sect = make_v7_header(&f, 1, text);
	snprintf(want, sizeof(want), "header_page: the line at offset %zu of the decompressed "
		 "header section at offset %zu gives the commit count 3 bytes", 20 + line, sect);
	check_refused(&f, want);
	done(&f);
	/* a compressed one that does not decompress */
	sect = make_v7_header(&f, 1, HEADER_PAGE);
	memset(f.data + sect + 16 + 8, 0xee, 4);	/* the zstd frame's magic */
	snprintf(want, sizeof(want), "the compressed header section at offset %zu does not "
		 "decompress", sect);
	check_refused(&f, want);
	done(&f);
}

/*
 * Where each event format is, for the decoder to name a damaged one: in a
 * version 7 event formats section, compressed or not (an offset in its
 * decompressed data, then).
 */
TEST(v7_event_format_places)
{
	static const char fmt_a[] = "name: block_rq_issue\nID: 7\nformat:\n";
	static const char fmt_b[] = "name: page_fault_user\nID: 9\nformat:\n";
	struct file f, body;
	struct swt_td_layout l;
	struct swt_err err;
	const struct swt_td_format *fa, *fb;

	for (int compressed = 0; compressed < 2; compressed++) {
		size_t sect;

		memset(&body, 0, sizeof(body));
		put32(&body, 2);		/* systems */
		puts0(&body, "block");
		put32(&body, 1);
		put64(&body, strlen(fmt_a));
		put(&body, fmt_a, strlen(fmt_a));
		puts0(&body, "exceptions");
		put32(&body, 1);
		put64(&body, strlen(fmt_b));
		put(&body, fmt_b, strlen(fmt_b));
		sect = make_v7_section(&f, compressed, 18, &body);
		CHECK_INT(read_layout(&f, &l, &err), 0);
		fa = swt_td_layout_format(&l, "block", "block_rq_issue");
		fb = swt_td_layout_format(&l, "exceptions", "page_fault_user");
		CHECK(fa && fb && !swt_td_layout_format(&l, "block", "page_fault_user"));
		if (fa && fb) {
			/* 4 + "block\0" + 4 + 8, then fmt_a, "exceptions\0", 4 + 8 */
			size_t a = 4 + 6 + 4 + 8, b = a + strlen(fmt_a) + 11 + 4 + 8;

			CHECK_INT(fa->offset, compressed ? a : sect + 16 + a);
			CHECK_INT(fb->offset, compressed ? b : sect + 16 + b);
			CHECK_INT(fa->section, compressed ? sect : 0);
			CHECK_INT(fa->ftrace, 0);
		}
		swt_td_layout_release(&l);
		free(body.data);
		done(&f);
	}
}

/*
 * A format's size that runs past the end of its section -- declared too
 * large, or read from the text of the format before it -- or a count of
 * formats whose last size lies past it: refused naming the section and
 * where the size is, in the file or in the decompressed section, before
 * libtracecmd reads format text as a size.
 */
TEST(v7_format_size_past_section)
{
	static const char fmt[] = "name: block_rq_issue\nID: 7\nformat:\n";
	char want[256];

	for (int compressed = 0; compressed < 2; compressed++) {
		for (int damage = 0; damage < 3; damage++) {
			uint16_t id = damage == 2 ? 17 : 18;
			struct file f, body;
			size_t sect, size_at;

			memset(&body, 0, sizeof(body));
			if (id == 18) {
				put32(&body, 1);	/* systems */
				puts0(&body, "block");
			}
			/* damage 1: a second format the section does not hold */
			put32(&body, damage == 1 ? 2 : 1);
			size_at = body.len;
			put64(&body, damage == 1 ? strlen(fmt) : strlen(fmt) + 1);
			put(&body, fmt, strlen(fmt));
			sect = make_v7_section(&f, compressed, id, &body);
			if (damage == 1)
				snprintf(want, sizeof(want), "the size of format 2 of the 2 of system "
					 "'block' at offset %zu", compressed ? body.len :
					 sect + 16 + body.len);
			else
				snprintf(want, sizeof(want), "the size of format 1 of the 1 of system "
					 "'%s' at offset %zu", id == 17 ? "ftrace" : "block",
					 compressed ? size_at : sect + 16 + size_at);
			if (compressed)
				snprintf(want + strlen(want), sizeof(want) - strlen(want),
					 " of the decompressed %s formats section at offset %zu",
					 id == 17 ? "ftrace" : "event", sect);
			else
				snprintf(want + strlen(want), sizeof(want) - strlen(want),
					 ", in the %s formats section at offset %zu,",
					 id == 17 ? "ftrace" : "event", sect);
			check_refused(&f, want);
			check_refused(&f, damage == 1 ? "runs past the end of the section" :
				      "past the end of the section");
			free(body.data);
			done(&f);
		}
	}
}

#ifndef SWT_TEST_UNGUARDED
/*
 * printk formats under 3 characters (printk-guard.c): libtraceevent 1.7
 * looked before its copy of one (ASan in the test build); the guard has
 * each registered as the library registers a longer one, and the reader
 * takes a file that holds them.
 */
TEST(short_printk_formats_are_read_whole)
{
	static const char formats[] =
		"ffffffff81000001 : \"\"\n"
		"ffffffff81000002 : \"x\"\n"
		"ffffffff81000003 : \"\n"
		"ffffffff81000004 : x\n"
		"ffffffff81000005 : \\n\n"
		"ffffffff81000006 : \"NQ\"\n"
		"ffffffff81000007 : \"ab\\n\"\n"
		"ffffffff81000008 : \"\"\"\n";
	static const char *const want[] = {
		"ffffffff81000001 ", "ffffffff81000002 x", "ffffffff81000003 ",
		"ffffffff81000004 x", "ffffffff81000005 \\n", "ffffffff81000006 NQ",
		"ffffffff81000007 ab", "ffffffff81000008 \"",
	};
	struct tep_handle *tep = tep_alloc();
	FILE *out = tmpfile();
	char line[64], *got[16] = { 0 };
	int saved, n = 0;
	struct file f;
	size_t table, cpus_at;

	CHECK(swt_printk_guard_active());
	CHECK(tep && out);
	if (!tep || !out)
		return;
	CHECK_INT(tep_parse_printk_formats(tep, formats), 0);
	/* the registered formats, as the library prints them */
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fileno(out), STDOUT_FILENO);
	tep_print_printk(tep);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(out);
	while (n < 16 && fgets(line, sizeof(line), out)) {
		line[strcspn(line, "\n")] = '\0';
		got[n++] = strdup(line);
	}
	CHECK_INT(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int found = 0;

		for (int k = 0; k < n; k++)
			found |= !strcmp(got[k], want[i]);
		if (!found) {
			fprintf(stderr, "no registered format '%s'\n", want[i]);
			check_failures++;
		}
	}
	for (int k = 0; k < n; k++)
		free(got[k]);
	fclose(out);
	tep_free(tep);

	/* a version 6 file whose printk formats include short ones is read */
	make_v6_printk(&f, &table, &cpus_at, formats);
	check_taken(&f);
	done(&f);
}
#else
/*
 * Built with tests/printk-unguarded.c instead of the guard: a file with a
 * printk format under 3 characters is refused, naming the file and the
 * line's offset, before libtraceevent could read before its copy; longer
 * formats are still read.
 */
TEST(short_printk_formats_are_refused_unguarded)
{
	static const char formats[] =
		"ffffffff81000001 : \"long enough\"\n"
		"ffffffff81000002 : \"x\"\n";
	const char *second = strchr(formats, '\n') + 1;
	char want[160];
	const unsigned char *at;
	struct file f;
	size_t table, cpus_at;

	CHECK(!swt_printk_guard_active());
	make_v6_printk(&f, &table, &cpus_at, formats);
	at = memmem(f.data, f.len, formats, strlen(formats));
	CHECK(at != NULL);
	if (!at) {
		done(&f);
		return;
	}
	snprintf(want, sizeof(want),
		 "printk formats: the line at offset %zu has a format too short for "
		 "libtraceevent to read safely", (size_t)(at - f.data) + (size_t)(second - formats));
	check_refused(&f, want);
	done(&f);

	make_v6_printk(&f, &table, &cpus_at, "ffffffff81000001 : \"abc\"\n");
	check_taken(&f);
	done(&f);
}
#endif

CHECK_MAIN
