/*
 * A structural reader for trace.dat files (versions 6 and 7), independent
 * of libtracecmd: it walks the headers, option sections and buffer tables
 * with every offset and size bounds-checked, and records what the file
 * declares -- each buffer's per-CPU data regions (and, for compressed
 * data, the uncompressed size from the chunk headers), the CPUSTAT
 * counters and where each event format is -- so the decoder can refuse
 * damaged files before libtracecmd sees them, name a damaged format where
 * it is, and check afterwards that it decoded everything.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "tracedat-layout.h"
#include "util.h"

struct cursor {
	const unsigned char *base;
	uint64_t size;
	int be;
	const char *path;
	struct swt_err *err;
	/* a clock that counts no nanoseconds, judged once every option is read */
	const char *bad_clock;
	uint64_t bad_clock_off;
	int tsc2nsec;		/* a TSC2NSEC option with a multiplier */
	/* the largest CPUCOUNT option's count, judged once every option is read */
	uint32_t cpucount;
	uint64_t cpucount_off;	/* its option's, 0: none seen */
	uint64_t *sections;	/* v7 options sections read, by offset (freed by the reader) */
	size_t nr_sections, cap_sections;
};

static int out_of_bounds(struct cursor *c, uint64_t off, uint64_t len, const char *what)
{
	return swt_error(c->err, SWT_EFORMAT,
			 "'%s': %s at offset %llu (%llu bytes) runs past the end of the file (%llu bytes)",
			 c->path, what, (unsigned long long)off, (unsigned long long)len,
			 (unsigned long long)c->size);
}

static int need(struct cursor *c, uint64_t off, uint64_t len, const char *what)
{
	if (off > c->size || len > c->size - off)
		return out_of_bounds(c, off, len, what);
	return 0;
}

static uint16_t rd16(struct cursor *c, uint64_t off)
{
	const unsigned char *p = c->base + off;

	return c->be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t rd32(struct cursor *c, uint64_t off)
{
	const unsigned char *p = c->base + off;

	return c->be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		     : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t rd64(struct cursor *c, uint64_t off)
{
	uint64_t hi = rd32(c, off + (c->be ? 0 : 4)), lo = rd32(c, off + (c->be ? 4 : 0));

	return hi << 32 | lo;
}

/* An n-byte number at p, in memory (decompressed data), in the file's byte order. */
static uint64_t rd_mem(const struct cursor *c, const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int k = 0; k < n; k++)
		v = v << 8 | p[c->be ? k : n - 1 - k];
	return v;
}

/* NUL-terminated string at off, bounded by limit; its length or an error. */
static int string_at(struct cursor *c, uint64_t off, uint64_t limit, const char *what,
		     size_t *len)
{
	const unsigned char *p;

	if (off >= limit || limit > c->size)
		return out_of_bounds(c, off, 1, what);
	p = memchr(c->base + off, '\0', limit - off);
	if (!p)
		return swt_error(c->err, SWT_EFORMAT, "'%s': unterminated %s at offset %llu",
				 c->path, what, (unsigned long long)off);
	*len = (size_t)(p - (c->base + off));
	return 0;
}

static struct swt_td_buffer *add_buffer(struct swt_td_layout *l, const char *name, size_t len)
{
	struct swt_td_buffer *b;

	if (swt_grow((void **)&l->buffers, &l->cap_buffers, l->nr_buffers + 1, sizeof(*l->buffers)))
		return NULL;
	b = &l->buffers[l->nr_buffers];
	memset(b, 0, sizeof(*b));
	b->name = malloc(len + 1);
	if (!b->name)
		return NULL;
	memcpy(b->name, name, len);
	b->name[len] = '\0';
	l->nr_buffers++;
	return b;
}

/*
 * counter ticks once per event, x86-tsc once per cycle, uptime once per
 * USER_HZ tick: taken as nanoseconds they give spans and latencies that
 * look plausible and mean nothing, so such a file is refused where its
 * clock is named (capture sets them to local for the same reason) -- but
 * x86-tsc where the file also has trace-cmd's TSC2NSEC option (record
 * --tsc2nsec), whose multiplier and shift libtracecmd converts its
 * timestamps to nanoseconds with.  That option may come after the clock,
 * so the clock is only noted here (the first one that no option can
 * rescue, else the first x86-tsc) and judged by clock_verdict.
 */
static const char *const not_ns_clocks[] = { "counter", "x86-tsc", "uptime" };

static void check_clock(struct cursor *c, const char *name, size_t len, uint64_t off)
{
	for (size_t i = 0; i < SWT_ARRAY_SIZE(not_ns_clocks); i++) {
		const char *clock = not_ns_clocks[i];

		if (len != strlen(clock) || memcmp(name, clock, len))
			continue;
		if (!c->bad_clock || (!strcmp(c->bad_clock, "x86-tsc") && strcmp(clock, "x86-tsc"))) {
			c->bad_clock = clock;
			c->bad_clock_off = off;
		}
		return;
	}
}

static int clock_verdict(struct cursor *c)
{
	if (!c->bad_clock || (c->tsc2nsec && !strcmp(c->bad_clock, "x86-tsc")))
		return 0;
	return swt_error(c->err, SWT_EFORMAT,
			 "'%s': trace clock '%s' at offset %llu does not count nanoseconds "
			 "(record with -C local, global, mono or boot)", c->path, c->bad_clock,
			 (unsigned long long)c->bad_clock_off);
}

/* TSC2NSEC: u32 multiplier, u32 shift, u64 offset; libtracecmd takes 16 bytes or more */
static void note_tsc2nsec(struct cursor *c, uint64_t off, uint32_t osize)
{
	if (osize >= 16 && rd32(c, off))
		c->tsc2nsec = 1;
}

/*
 * TRACECLOCK: "[local] global ...", the one in brackets in use.  Version 7
 * names each buffer's clock in its BUFFER option, which stays the one
 * reported (set_clock 0); the top-level list is still checked.
 */
static void parse_traceclock(struct cursor *c, struct swt_td_layout *l, uint64_t pos,
			     uint32_t osize, int set_clock)
{
	const char *t = (const char *)c->base + pos, *lb = memchr(t, '[', osize), *rb;

	if (!lb)
		return;
	rb = memchr(lb, ']', osize - (size_t)(lb - t));
	if (!rb)
		return;
	check_clock(c, lb + 1, (size_t)(rb - lb - 1), pos + (uint64_t)(lb + 1 - t));
	if (set_clock)
		snprintf(l->clock, sizeof(l->clock), "%.*s", (int)(rb - lb - 1), lb + 1);
}

static int add_cpu(struct swt_td_buffer *b, uint32_t cpu, uint64_t off, uint64_t size)
{
	struct swt_td_cpu *c;

	if (swt_grow((void **)&b->cpus, &b->cap_cpus, b->nr_cpus + 1, sizeof(*b->cpus)))
		return -SWT_ENOMEM;
	c = &b->cpus[b->nr_cpus++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->offset = off;
	c->size = size;
	c->data_size = size;
	c->read_events = -1;
	return 0;
}

/*
 * Walk the chunk headers of compressed CPU data: sum of uncompressed sizes.
 * Each chunk must hold whole ring-buffer pages, as trace-cmd writes them:
 * libtracecmd decompresses a chunk into a buffer of exactly its size and
 * reads a page's events wherever its header says, past the end of a
 * partial page's buffer.
 */
static int walk_chunks(struct cursor *c, struct swt_td_buffer *b, struct swt_td_cpu *cpu,
		       unsigned page_size)
{
	uint64_t off = cpu->offset, end;
	uint32_t count, i;

	if (!cpu->size)
		return 0;
	/*
	 * The declared size counts the chunks, not the chunk count before
	 * them: each is checked on its own, as 4 + size wraps for a size
	 * near 2^64 and would pass as 0 bytes.
	 */
	if (need(c, off, 4, "compressed CPU data") ||
	    need(c, off + 4, cpu->size, "compressed CPU data"))
		return -SWT_EFORMAT;
	end = off + 4 + cpu->size;
	count = rd32(c, off);
	off += 4;
	cpu->data_size = 0;
	for (i = 0; i < count; i++) {
		uint32_t csize, usize;

		if (off + 8 > end)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': buffer '%s' CPU %u: chunk %u header at offset %llu lies "
					 "outside the CPU data", c->path, b->name, cpu->cpu, i,
					 (unsigned long long)off);
		csize = rd32(c, off);
		usize = rd32(c, off + 4);
		off += 8;
		if (csize > end - off)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': buffer '%s' CPU %u: chunk %u at offset %llu (%u bytes) "
					 "runs past the CPU data", c->path, b->name, cpu->cpu, i,
					 (unsigned long long)(off - 8), csize);
		if (usize % page_size)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': buffer '%s' CPU %u: chunk %u at offset %llu declares %u "
					 "decompressed bytes, not whole pages of %u", c->path, b->name,
					 cpu->cpu, i, (unsigned long long)(off - 8), usize, page_size);
		off += csize;
		cpu->data_size += usize;
	}
	/* a damaged count (0 of 427 chunks) left the rest unread: the CPU's events lost */
	if (off != end)
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': buffer '%s' CPU %u: its %u chunks end at offset %llu, %llu bytes "
				 "before the end of its data (%llu bytes at offset %llu)", c->path,
				 b->name, cpu->cpu, count, (unsigned long long)off,
				 (unsigned long long)(end - off), (unsigned long long)cpu->size,
				 (unsigned long long)cpu->offset);
	return 0;
}

/*
 * A section header (u16 id, u16 flags, u32 string id, u64 size) at off,
 * whose id must be the one the pointing option names: a bogus offset that
 * still lands inside the file is caught here rather than in libtracecmd.
 */
static int check_section(struct cursor *c, uint64_t off, uint16_t id, const char *what,
			 int *compressed)
{
	uint64_t size;
	uint16_t got;
	int ret = need(c, off, 16, what);

	if (ret)
		return ret;
	got = rd16(c, off);
	if (got != id)
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': %s at offset %llu has section id %u, expected %u", c->path,
				 what, (unsigned long long)off, got, id);
	size = rd64(c, off + 8);
	if (compressed)
		*compressed = rd16(c, off + 2) & 1;
	if (size > c->size - off - 16)
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': %s at offset %llu declares %llu bytes, past the end of the file "
				 "(%llu bytes)", c->path, what, (unsigned long long)off,
				 (unsigned long long)size, (unsigned long long)c->size);
	return 0;
}

/*
 * A ring-buffer page size libtracecmd can work with (it divides by it):
 * a power of two from 1 KiB to 1 MiB.
 */
static int page_size_plausible(uint32_t size)
{
	return size >= 1024 && !(size & (size - 1)) && size <= (1u << 20);
}

/*
 * A CPUCOUNT option (u32) at off, osize bytes.  libtracecmd sizes its
 * per-CPU state and walks every CPU by it: a damaged count of hundreds of
 * millions runs it out of memory and time, so it is bounded here, as the
 * version-6 header's count is.
 */
static int check_cpucount(struct cursor *c, uint64_t off, uint32_t osize)
{
	uint32_t n;

	if (osize < 4)
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': CPUCOUNT option at offset %llu has %u bytes, not 4", c->path,
				 (unsigned long long)off, osize);
	n = rd32(c, off);
	if (n > SWT_TD_MAX_CPUS)
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': implausible CPU count %u in the CPUCOUNT option at offset %llu",
				 c->path, n, (unsigned long long)off);
	if (!c->cpucount_off || n > c->cpucount) {
		c->cpucount = n;
		c->cpucount_off = off;
	}
	return 0;
}

/*
 * Version 7 lists each buffer's CPUs in its BUFFER option, by number: one
 * at or past the file's CPU count (CPUCOUNT, which may come after the
 * option), or one listed twice, is a damaged entry.  libtracecmd took the
 * first for a CPU of its own (its events ingested as another CPU's) and
 * failed to open the file on the second, naming nothing.
 */
static int check_buffer_cpus(struct cursor *c, const struct swt_td_layout *l)
{
	for (size_t b = 0; b < l->nr_buffers; b++) {
		const struct swt_td_buffer *buf = &l->buffers[b];

		for (size_t i = 0; buf->option && i < buf->nr_cpus; i++) {
			const struct swt_td_cpu *cpu = &buf->cpus[i];

			if (c->cpucount_off && cpu->cpu >= c->cpucount)
				return swt_error(c->err, SWT_EFORMAT,
						 "'%s': BUFFER option at offset %llu (buffer '%s'): its "
						 "entry at offset %llu names CPU %u, past the file's %u "
						 "CPUs (CPUCOUNT option at offset %llu)", c->path,
						 (unsigned long long)buf->option, buf->name,
						 (unsigned long long)cpu->entry, cpu->cpu, c->cpucount,
						 (unsigned long long)c->cpucount_off);
			for (size_t k = 0; k < i; k++)
				if (buf->cpus[k].cpu == cpu->cpu)
					return swt_error(c->err, SWT_EFORMAT,
							 "'%s': BUFFER option at offset %llu (buffer "
							 "'%s'): its entry at offset %llu names CPU %u, "
							 "as its entry at offset %llu does", c->path,
							 (unsigned long long)buf->option, buf->name,
							 (unsigned long long)cpu->entry, cpu->cpu,
							 (unsigned long long)buf->cpus[k].entry);
		}
	}
	return 0;
}

/*
 * The printk formats ("ADDRESS : \"FORMAT\"" lines), which libtraceevent
 * parses when libtracecmd opens the file (1.7, tep_parse_printk_formats):
 * it takes the format one character past the line's ':' -- past the end of
 * the text when the last line has no ':' or nothing after it -- and looks
 * at the format's last three characters, before its start when it has
 * fewer (after a leading quote).  Text that would do the first is refused
 * here as damaged.  A legal format that short is read safely through
 * printk-guard.c; were the guard not in place, it is refused, the error
 * naming it as such.  It reads the text up to its first NUL, skips empty lines
 * and stops at a line of only ':'.  at: the text's offset in the file, or
 * in the decompressed section at offset sect (0: not compressed).
 */
static int check_printk(struct cursor *c, const unsigned char *text, uint64_t len, uint64_t at,
			uint64_t sect)
{
	const unsigned char *nul = memchr(text, '\0', len);
	uint64_t n = nul ? (uint64_t)(nul - text) : len, i = 0;
	const char *what = "is not 'ADDRESS : \"FORMAT\"'";

	while (i < n) {
		uint64_t s = i, e = i, k;

		while (e < n && text[e] != '\n')
			e++;
		i = e + 1;
		if (s == e)
			continue;
		for (k = s; k < e && text[k] == ':'; k++)
			;
		if (k == e)
			return 0;	/* libtraceevent stops at an empty entry */
		while (k < e && text[k] != ':')
			k++;
		/* the format starts two past the ':' (after its space) */
		if (k + 1 < e) {
			k += 2;
			if (k < e && text[k] == '"')
				k++;
			if (e - k >= 3 || swt_printk_guard_active())
				continue;
			/* a legal line, but one libtraceevent would read before */
			what = "has a format too short for libtraceevent to read safely (fewer "
			       "than 3 characters after its opening quote)";
		}
		if (sect)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': printk formats section at offset %llu: the line at "
					 "offset %llu of its decompressed data %s", c->path,
					 (unsigned long long)sect, (unsigned long long)(at + s), what);
		return swt_error(c->err, SWT_EFORMAT, "'%s': printk formats: the line at offset %llu %s",
				 c->path, (unsigned long long)(at + s), what);
	}
	return 0;
}

/*
 * A version-7 section at sect (its header checked) compressed with zstd:
 * its u32 compressed size, u32 decompressed size and frame, decompressed
 * into *out (the caller frees it).  Returns 0; 1 when it is not one to read
 * here, with why empty for another codec (zlib is left to libtracecmd, as
 * its CPU data is) and saying what is wrong with sizes or data that do not
 * decompress; or an error.
 */
static int zstd_section(struct cursor *c, const struct swt_td_layout *l, uint64_t sect,
			unsigned char **out, uint32_t *usize, char *why, size_t why_size)
{
	uint64_t size = rd64(c, sect + 8), off = sect + 16;
	uint32_t csize;
	size_t got;

	*out = NULL;
	why[0] = '\0';
	if (strcmp(l->compression, "zstd"))
		return 1;
	if (size < 8) {
		snprintf(why, why_size, "has %llu bytes, too few for its sizes",
			 (unsigned long long)size);
		return 1;
	}
	csize = rd32(c, off);
	*usize = rd32(c, off + 4);
	if (csize > size - 8) {
		snprintf(why, why_size, "declares %u compressed bytes, more than its %llu", csize,
			 (unsigned long long)(size - 8));
		return 1;
	}
	if (*usize > (64u << 20)) {
		snprintf(why, why_size, "declares %u decompressed bytes, over 64 MiB", *usize);
		return 1;
	}
	*out = malloc(SWT_MAX(*usize, 1u));
	if (!*out)
		return swt_error(c->err, SWT_ENOMEM, "out of memory");
	got = ZSTD_decompress(*out, *usize, c->base + off + 8, csize);
	if (ZSTD_isError(got) || got != *usize) {
		snprintf(why, why_size, "does not decompress to its %u bytes (zstd: %s)", *usize,
			 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "fewer bytes");
		free(*out);
		*out = NULL;
		return 1;
	}
	return 0;
}

/*
 * A version-7 printk formats section at sect (its header checked): a u32
 * size and the text, compressed or not.  Compressed with zstd, it is
 * decompressed to be checked; a section that does not read or decompress
 * is libtracecmd's to refuse, which it does without harm.
 */
static int check_printk_section(struct cursor *c, const struct swt_td_layout *l, uint64_t sect)
{
	uint64_t size = rd64(c, sect + 8), off = sect + 16;
	uint32_t usize = 0, tlen;
	unsigned char *out;
	char why[128];
	int ret;

	if (!(rd16(c, sect + 2) & 1)) {
		if (size < 4)
			return 0;
		tlen = rd32(c, off);
		return check_printk(c, c->base + off + 4, SWT_MIN((uint64_t)tlen, size - 4), off + 4, 0);
	}
	ret = zstd_section(c, l, sect, &out, &usize, why, sizeof(why));
	if (ret)
		return ret < 0 ? ret : 0;
	ret = 0;
	if (usize >= 4) {
		tlen = (uint32_t)rd_mem(c, out, 4);
		ret = check_printk(c, out + 4, SWT_MIN((uint64_t)tlen, (uint64_t)usize - 4), 4, sect);
	}
	free(out);
	return ret;
}

/* One "field: TYPE NAME; offset:N; size:N; [signed:N;]" line of header_page. */
struct hp_field {
	const unsigned char *name;
	size_t name_len;
	uint64_t offset, size;
};

static void hp_space(const unsigned char **p, const unsigned char *e)
{
	while (*p < e && **p != '\n' && isspace(**p))
		(*p)++;
}

static int hp_word(const unsigned char **p, const unsigned char *e, const unsigned char **w,
		   size_t *len)
{
	hp_space(p, e);
	*w = *p;
	while (*p < e && (**p == '_' || isalnum(**p)))
		(*p)++;
	*len = (size_t)(*p - *w);
	return *len ? 0 : -1;
}

static int hp_char(const unsigned char **p, const unsigned char *e, unsigned char ch)
{
	hp_space(p, e);
	if (*p == e || **p != ch)
		return -1;
	(*p)++;
	return 0;
}

/* "KEY:N;" with a decimal N (bounded: only small ones are legal anyway) */
static int hp_number(const unsigned char **p, const unsigned char *e, const char *key,
		     uint64_t *v)
{
	const unsigned char *w;
	size_t len;

	if (hp_word(p, e, &w, &len) || len != strlen(key) || memcmp(w, key, len) ||
	    hp_char(p, e, ':') || hp_word(p, e, &w, &len) || len > 9)
		return -1;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(w[i] - '0');
	}
	return hp_char(p, e, ';');
}

/*
 * The line [p, e) as libtraceevent's parse_header_field() reads it: one
 * type word, the name, offset, size and an optional signedness, nothing
 * else.  Returns 0 or -1 (not such a line).
 */
static int hp_line(const unsigned char *p, const unsigned char *e, struct hp_field *f)
{
	const unsigned char *w;
	size_t len;
	uint64_t sign;

	if (hp_word(&p, e, &w, &len) || len != 5 || memcmp(w, "field", 5) || hp_char(&p, e, ':') ||
	    hp_word(&p, e, &w, &len) || hp_word(&p, e, &f->name, &f->name_len) ||
	    hp_char(&p, e, ';') || hp_number(&p, e, "offset", &f->offset) ||
	    hp_number(&p, e, "size", &f->size))
		return -1;
	hp_space(&p, e);
	if (p < e && hp_number(&p, e, "signed", &sign))
		return -1;
	hp_space(&p, e);
	return p == e ? 0 : -1;
}

static int hp_is(const struct hp_field *f, const char *name)
{
	return f->name_len == strlen(name) && !memcmp(f->name, name, f->name_len);
}

/*
 * The header_page text: the kernel's description of a ring-buffer page's
 * header (a u64 time stamp at 0, a long commit count at 8, an optional
 * overwrite flag inside it, then the data).  libtraceevent reads its lines
 * in that order and gives up on one that is not so without a word, and
 * libtracecmd then takes whatever commit size it was left with for the
 * size of a long in every page -- or crashes, or refuses the file without
 * saying where -- so a damaged line here read every event at the wrong
 * offsets.  kbuffer reads the data right after the commit count whatever
 * the text says: a data offset elsewhere says one of the two is damaged.
 * An empty text (kernels before 2.6.31) is libtraceevent's to read.  at:
 * the text's offset in the file, or in the decompressed section at offset
 * sect (0: not compressed).
 */
static int check_header_page(struct cursor *c, const unsigned char *text, uint64_t len,
			     uint64_t at, uint64_t sect)
{
	static const char *const want[] = { "timestamp", "commit", "overwrite", "data" };
	struct hp_field f, commit = { 0 };
	uint64_t i = 0, s = 0, field = 0;
	char where[128], what[160];
	int ended = 0;

	while (field < SWT_ARRAY_SIZE(want) && len) {
		uint64_t e = i;

		s = i;
		if (s >= len) {
			/* (the overwrite flag may be missing: then it is data that is) */
			snprintf(what, sizeof(what), "before its '%s' field",
				 want[field == 2 ? 3 : field]);
			s = len;
			ended = 1;
			goto bad;
		}
		while (e < len && text[e] != '\n')
			e++;
		i = e + 1;
		if (hp_line(text + s, text + e, &f)) {
			snprintf(what, sizeof(what), "is not 'field: TYPE NAME; offset:N; size:N;'");
			goto bad;
		}
		/* the overwrite flag may be missing (older kernels): the line is data's */
		if (field == 2 && !hp_is(&f, "overwrite"))
			field++;
		if (!hp_is(&f, want[field])) {
			snprintf(what, sizeof(what), "describes a field '%.*s' where '%s' belongs",
				 (int)SWT_MIN(f.name_len, (size_t)32), (const char *)f.name,
				 want[field]);
			goto bad;
		}
		if (field == 0 && (f.offset != 0 || f.size != 8)) {
			snprintf(what, sizeof(what), "gives the time stamp %llu bytes at offset %llu, "
				 "not 8 at 0", (unsigned long long)f.size,
				 (unsigned long long)f.offset);
			goto bad;
		}
		if (field == 1 && (f.offset != 8 || (f.size != 4 && f.size != 8))) {
			snprintf(what, sizeof(what), "gives the commit count %llu bytes at offset "
				 "%llu, not 4 or 8 (a long) at 8", (unsigned long long)f.size,
				 (unsigned long long)f.offset);
			goto bad;
		}
		if (field == 1)
			commit = f;
		if (field == 3 && f.offset != commit.offset + commit.size) {
			snprintf(what, sizeof(what), "puts the data at offset %llu, not right after "
				 "the %llu-byte commit count (at %llu)",
				 (unsigned long long)f.offset, (unsigned long long)commit.size,
				 (unsigned long long)(commit.offset + commit.size));
			goto bad;
		}
		field++;
	}
	return 0;
bad:
	if (sect)
		snprintf(where, sizeof(where), "offset %llu of the decompressed header section at "
			 "offset %llu", (unsigned long long)(at + s), (unsigned long long)sect);
	else
		snprintf(where, sizeof(where), "offset %llu", (unsigned long long)(at + s));
	if (ended)
		return swt_error(c->err, SWT_EFORMAT, "'%s': header_page: the text ends at %s, %s",
				 c->path, where, what);
	return swt_error(c->err, SWT_EFORMAT, "'%s': header_page: the line at %s %s", c->path,
			 where, what);
}

/*
 * A version-7 header section at sect (its header checked): "header_page",
 * u64 size, text; "header_event", u64 size, text -- what version 6 has
 * after its file header -- compressed or not.  libtracecmd fails to open a
 * file whose names or sizes here are damaged, or crashes on it, saying
 * nothing of where.  base: the section's data, len bytes, at file offset
 * at; or, decompressed, its decompressed data (at 0).
 */
static int check_header_parts(struct cursor *c, const unsigned char *base, uint64_t len,
			      uint64_t at, uint64_t sect, int decompressed)
{
	uint64_t pos = 0, text = 0, text_size = 0;
	char where[128];

	for (int i = 0; i < 2; i++) {
		const char *want = i ? "header_event" : "header_page";
		size_t wlen = strlen(want) + 1;
		const unsigned char *p;
		uint64_t size;

		if (decompressed)
			snprintf(where, sizeof(where), "offset %llu of the decompressed header section "
				 "at offset %llu", (unsigned long long)pos, (unsigned long long)sect);
		else
			snprintf(where, sizeof(where), "offset %llu", (unsigned long long)(at + pos));
		if (len - pos < wlen + 8 || memcmp(base + pos, want, wlen))
			return swt_error(c->err, SWT_EFORMAT, "'%s': expected '%s' at %s", c->path,
					 want, where);
		p = base + pos + wlen;
		size = rd_mem(c, p, 8);
		if (size > len - pos - wlen - 8)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': %s at %s declares %llu bytes, past the end of the "
					 "header section at offset %llu (%llu bytes%s)", c->path, want,
					 where, (unsigned long long)size, (unsigned long long)sect,
					 (unsigned long long)len, decompressed ? ", decompressed" : "");
		if (!i) {
			text = pos + wlen + 8;
			text_size = size;
		}
		pos += wlen + 8 + size;
	}
	/* (after both: a damaged size is named as such, not as the text it cuts) */
	return check_header_page(c, base + text, text_size, (decompressed ? 0 : at) + text,
				 decompressed ? sect : 0);
}

static int check_header_section(struct cursor *c, const struct swt_td_layout *l, uint64_t sect)
{
	uint32_t usize = 0;
	unsigned char *out;
	char why[128];
	int ret;

	if (!(rd16(c, sect + 2) & 1))
		return check_header_parts(c, c->base + sect + 16, rd64(c, sect + 8), sect + 16, sect,
					  0);
	ret = zstd_section(c, l, sect, &out, &usize, why, sizeof(why));
	if (ret < 0)
		return ret;
	if (ret)
		return why[0] ? swt_error(c->err, SWT_EFORMAT,
					  "'%s': the compressed header section at offset %llu %s",
					  c->path, (unsigned long long)sect, why) : 0;
	ret = check_header_parts(c, out, usize, 0, sect, 1);
	free(out);
	return ret;
}

/*
 * Note where an event's format ("name: NAME\nID: ...") is: the decoder
 * names it when it finds the format damaged.  at: the text's offset in the
 * file, or in the decompressed section at offset sect (0: not compressed).
 */
static int add_format(struct cursor *c, struct swt_td_layout *l, const char *system,
		      size_t system_len, const unsigned char *text, uint64_t len, uint64_t at,
		      uint64_t sect, int ftrace)
{
	const unsigned char *name, *end = text + len;
	struct swt_td_format *f;

	if (len < 5 || memcmp(text, "name:", 5))
		return 0;	/* no name: libtraceevent's to refuse */
	for (name = text + 5; name < end && (*name == ' ' || *name == '\t'); name++)
		;
	for (text = name; text < end && !isspace(*text); text++)
		;
	if (swt_grow((void **)&l->formats, &l->cap_formats, l->nr_formats + 1, sizeof(*l->formats)))
		return swt_error(c->err, SWT_ENOMEM, "out of memory");
	f = &l->formats[l->nr_formats];
	memset(f, 0, sizeof(*f));
	f->system = strndup(system, system_len);
	f->name = strndup((const char *)name, (size_t)(text - name));
	if (!f->system || !f->name) {
		free(f->system);
		free(f->name);
		return swt_error(c->err, SWT_ENOMEM, "out of memory");
	}
	f->offset = at;
	f->section = sect;
	f->ftrace = ftrace;
	l->nr_formats++;
	return 0;
}

/*
 * A format's u64 size at pos (of the section's data, len bytes) that does
 * not fit what is left of the section: libtracecmd reads a size past it,
 * or one that cut the previous format's text short or long, from what
 * follows -- format text taken for a size -- and refuses the file naming
 * nothing, or (under ASan) the decoder dies before its first event.  at,
 * sect: as index_formats_section's; hdr: the section's header, 0 for
 * version 6, whose formats have no section but the file (len: its size).
 * size_ok: the size could be read.
 */
static int bad_format_size(struct cursor *c, uint16_t id, const char *system, size_t slen,
			   uint32_t nth, uint32_t n, uint64_t pos, uint64_t len, uint64_t at,
			   uint64_t sect, uint64_t hdr, int size_ok, uint64_t size)
{
	const char *what = id == 17 ? "ftrace formats" : "event formats";
	char where[160], fmt[160];

	if (sect)
		snprintf(where, sizeof(where), "offset %llu of the decompressed %s section at "
			 "offset %llu", (unsigned long long)pos, what, (unsigned long long)sect);
	else if (hdr)
		snprintf(where, sizeof(where), "offset %llu, in the %s section at offset %llu,",
			 (unsigned long long)(at + pos), what, (unsigned long long)hdr);
	else
		snprintf(where, sizeof(where), "offset %llu", (unsigned long long)(at + pos));
	snprintf(fmt, sizeof(fmt), "format %u of the %u of system '%.*s'", nth + 1, n,
		 (int)SWT_MIN(slen, (size_t)64), system);
	if (!size_ok)
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': the size of %s at %s runs past the end of the %s "
				 "(%llu bytes%s)", c->path, fmt, where, hdr ? "section" : "file",
				 (unsigned long long)len, sect ? ", decompressed" : "");
	return swt_error(c->err, SWT_EFORMAT,
			 "'%s': the size of %s at %s declares %llu bytes, past the end of the "
			 "%s (%llu bytes%s): the size, or the format before it, is damaged",
			 c->path, fmt, where, (unsigned long long)size, hdr ? "section" : "file",
			 (unsigned long long)len, sect ? ", decompressed" : "");
}

/*
 * A version-7 ftrace formats (id 17: u32 count; u64 size, text each) or
 * event formats section (18: u32 systems; name, u32 count, then the same
 * each), compressed or not: where each format is.  A format's size that
 * runs past the section is refused here (bad_format_size); other damage to
 * its structure is libtracecmd's to refuse, and what was read of it stays.
 */
static int index_formats_section(struct cursor *c, struct swt_td_layout *l, uint64_t sect,
				 uint16_t id)
{
	uint64_t len = rd64(c, sect + 8), pos = 0, at = sect + 16, where = 0;
	const unsigned char *base = c->base + sect + 16;
	unsigned char *out = NULL;
	uint32_t systems = 1, usize = 0;
	char why[128];
	int ret = 0;

	if (rd16(c, sect + 2) & 1) {
		ret = zstd_section(c, l, sect, &out, &usize, why, sizeof(why));
		if (ret)
			return ret < 0 ? ret : 0;
		base = out;
		len = usize;
		at = 0;
		where = sect;
	}
	if (id == 18) {
		if (len < 4)
			goto out;
		systems = (uint32_t)rd_mem(c, base, 4);
		pos = 4;
	}
	for (uint32_t s = 0; s < systems && !ret; s++) {
		const char *system = "ftrace";
		size_t slen = 6;
		uint32_t n;

		if (id == 18) {
			const unsigned char *nul = memchr(base + pos, '\0', len - pos);

			if (!nul)
				goto out;
			system = (const char *)base + pos;
			slen = (size_t)(nul - (base + pos));
			pos += slen + 1;
		}
		if (len - pos < 4)
			goto out;
		n = (uint32_t)rd_mem(c, base + pos, 4);
		pos += 4;
		for (uint32_t e = 0; e < n && !ret; e++) {
			uint64_t size;

			if (len - pos < 8) {
				ret = bad_format_size(c, id, system, slen, e, n, pos, len, at, where,
						      sect, 0, 0);
				goto out;
			}
			size = rd_mem(c, base + pos, 8);
			if (size > len - pos - 8) {
				ret = bad_format_size(c, id, system, slen, e, n, pos, len, at, where,
						      sect, 1, size);
				goto out;
			}
			pos += 8;
			ret = add_format(c, l, system, slen, base + pos, size, at + pos, where,
					 id == 17);
			pos += size;
		}
	}
out:
	free(out);
	return ret;
}

/*
 * CPUSTAT text at off: "CPU: 0\nentries: ...\nread events: N\n" or
 * "\nBuffer: NAME\n".
 */
static void parse_cpustat(struct swt_td_layout *l, const char *text, size_t len, uint64_t off)
{
	char buf[1024], *line, *save = NULL;
	struct swt_td_stat st = { .cpu = -1, .read_events = -1, .overrun = 0, .dropped = 0,
				  .offset = off };

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long v;

		if (!strncmp(line, "Buffer: ", 8)) {
			snprintf(l->stat_buffer, sizeof(l->stat_buffer), "%s", line + 8);
			return;
		}
		if (sscanf(line, "CPU: %lld", &v) == 1)
			st.cpu = (int)v;
		else if (sscanf(line, "read events: %lld", &v) == 1)
			st.read_events = v;
		else if (sscanf(line, "overrun: %lld", &v) == 1)
			st.overrun = v;
		else if (sscanf(line, "dropped events: %lld", &v) == 1)
			st.dropped = v;
	}
	if (st.cpu < 0)
		return;
	snprintf(st.buffer, sizeof(st.buffer), "%s", l->stat_buffer);
	if (!swt_grow((void **)&l->stats, &l->cap_stats, l->nr_stats + 1, sizeof(*l->stats)))
		l->stats[l->nr_stats++] = st;
}

/*
 * A v7 BUFFER option: flyrecord section offset, name, clock, page size, CPU
 * count, then (cpu, data offset, data size) per CPU.  The fields must fill
 * the option exactly: a damaged name or count shifts everything after it,
 * and would otherwise read as a buffer with no data -- a silently empty
 * database.
 */
static int parse_buffer_v7(struct cursor *c, struct swt_td_layout *l, uint64_t start,
			   uint64_t end)
{
	uint64_t sect, off = start;
	size_t nlen = 0, clen = 0;
	const char *name;
	struct swt_td_buffer *b;
	uint32_t ncpus, psize, i;
	int ret, compressed = 0;

	if (end - off < 8)
		goto bad_size;
	sect = rd64(c, off);
	off += 8;
	ret = string_at(c, off, end, "buffer name", &nlen);
	if (ret)
		return ret;
	name = (const char *)c->base + off;
	off += nlen + 1;
	ret = string_at(c, off, end, "buffer clock", &clen);
	if (ret)
		return ret;
	check_clock(c, (const char *)c->base + off, clen, off);
	if (!l->clock[0])
		snprintf(l->clock, sizeof(l->clock), "%.*s", (int)clen, (const char *)c->base + off);
	off += clen + 1;
	if (end - off < 8)
		goto bad_size;
	/*
	 * page size u32, then CPU count.  libtracecmd divides by the page
	 * size: bounded as the header's is.
	 */
	psize = rd32(c, off);
	if (!page_size_plausible(psize))
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': BUFFER option at offset %llu: implausible page size %u",
				 c->path, (unsigned long long)start, psize);
	ncpus = rd32(c, off + 4);
	off += 8;
	if ((uint64_t)ncpus * 20 != end - off)
		goto bad_size;
	b = add_buffer(l, name, nlen);
	if (!b)
		return swt_error(c->err, SWT_ENOMEM, "out of memory");
	ret = check_section(c, sect, 3, "buffer flyrecord section", &compressed);
	if (ret)
		return ret;
	b->compressed = compressed;
	b->option = start;
	for (i = 0; i < ncpus; i++, off += 20) {
		struct swt_td_cpu *cpu;
		uint32_t id = rd32(c, off);
		uint64_t doff = rd64(c, off + 4), dsize = rd64(c, off + 12);

		if (id >= SWT_TD_MAX_CPUS)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': BUFFER option at offset %llu: implausible CPU number %u",
					 c->path, (unsigned long long)start, id);
		if (add_cpu(b, id, doff, dsize))
			return swt_error(c->err, SWT_ENOMEM, "out of memory");
		cpu = &b->cpus[b->nr_cpus - 1];
		cpu->entry = off;
		ret = compressed ? walk_chunks(c, b, cpu, l->page_size) :
				   need(c, doff, dsize, "CPU data");
		if (ret)
			return ret;
	}
	return 0;
bad_size:
	return swt_error(c->err, SWT_EFORMAT,
			 "'%s': BUFFER option at offset %llu: its %llu bytes do not hold a buffer "
			 "description", c->path, (unsigned long long)start,
			 (unsigned long long)(end - start));
}

/*
 * The options section at sect, reached through the link at offset link
 * (the file header's field, or a DONE option's): one already read closes a
 * loop, which the error names by the link.  A chain of thousands is no
 * trace-cmd file either, and is bounded so.
 */
static int note_options_section(struct cursor *c, uint64_t sect, uint64_t link)
{
	for (size_t i = 0; i < c->nr_sections; i++)
		if (c->sections[i] == sect)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': the DONE option at offset %llu links back to the options "
					 "section at offset %llu: the options sections form a loop",
					 c->path, (unsigned long long)link, (unsigned long long)sect);
	if (c->nr_sections == 4096)
		return swt_error(c->err, SWT_EFORMAT,
				 "'%s': the DONE option at offset %llu links to a 4097th options "
				 "section (at offset %llu): more than a trace.dat file holds",
				 c->path, (unsigned long long)link, (unsigned long long)sect);
	if (swt_grow((void **)&c->sections, &c->cap_sections, c->nr_sections + 1,
		     sizeof(*c->sections)))
		return swt_error(c->err, SWT_ENOMEM, "out of memory");
	c->sections[c->nr_sections++] = sect;
	return 0;
}

static int parse_v7(struct cursor *c, struct swt_td_layout *l, uint64_t pos)
{
	size_t nlen = 0, vlen = 0;
	uint64_t opt_off, link;
	int ret;

	ret = string_at(c, pos, c->size, "compression name", &nlen);
	if (ret)
		return ret;
	snprintf(l->compression, sizeof(l->compression), "%.*s", (int)nlen,
		 (const char *)c->base + pos);
	pos += nlen + 1;
	ret = string_at(c, pos, c->size, "compression version", &vlen);
	if (ret)
		return ret;
	pos += vlen + 1;
	ret = need(c, pos, 8, "options offset");
	if (ret)
		return ret;
	opt_off = rd64(c, pos);
	link = pos;
	while (opt_off) {
		uint64_t size, off, end;
		uint16_t id, flags;

		ret = note_options_section(c, opt_off, link);
		if (ret)
			return ret;
		ret = need(c, opt_off, 16, "options section header");
		if (ret)
			return ret;
		id = rd16(c, opt_off);
		flags = rd16(c, opt_off + 2);
		size = rd64(c, opt_off + 8);
		if (id != 0)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': section at offset %llu should be options (id 0), has id %u",
					 c->path, (unsigned long long)opt_off, id);
		ret = need(c, opt_off + 16, size, "options section");
		if (ret)
			return ret;
		if (flags & 1) {
			/* compressed options: their data is libtracecmd's to read */
			l->partial = 1;
			break;
		}
		off = opt_off + 16;
		end = off + size;
		opt_off = 0;
		while (off < end) {
			uint16_t oid;
			uint32_t osize;

			if (end - off < 6)
				return swt_error(c->err, SWT_EFORMAT,
						 "'%s': truncated option header at offset %llu", c->path,
						 (unsigned long long)off);
			oid = rd16(c, off);
			osize = rd32(c, off + 2);
			off += 6;
			if (osize > end - off)
				return swt_error(c->err, SWT_EFORMAT,
						 "'%s': option %u at offset %llu (%u bytes) runs past its section",
						 c->path, oid, (unsigned long long)(off - 6), osize);
			switch (oid) {
			case 0:	/* DONE: next options section */
				if (osize >= 8) {
					opt_off = rd64(c, off);
					link = off;
				}
				off = end;
				continue;
			case 2:	/* CPUSTAT */
				parse_cpustat(l, (const char *)c->base + off, osize, off);
				break;
			case 3:	/* BUFFER */
				ret = parse_buffer_v7(c, l, off, off + osize);
				if (ret)
					return ret;
				break;
			case 4:	/* TRACECLOCK */
				parse_traceclock(c, l, off, osize, 0);
				break;
			case 8:	/* CPUCOUNT */
				ret = check_cpucount(c, off, osize);
				if (ret)
					return ret;
				break;
			case 14:	/* TSC2NSEC */
				note_tsc2nsec(c, off, osize);
				break;
			case 16: case 17: case 18: case 19: case 20: case 21:
				if (osize >= 8) {
					ret = check_section(c, rd64(c, off), oid, "section", NULL);
					if (!ret && oid == 16)
						ret = check_header_section(c, l, rd64(c, off));
					if (!ret && (oid == 17 || oid == 18))
						ret = index_formats_section(c, l, rd64(c, off), oid);
					if (!ret && oid == 20)
						ret = check_printk_section(c, l, rd64(c, off));
					if (ret)
						return ret;
				}
				break;
			default:
				break;
			}
			off += osize;
		}
	}
	return 0;
}

/*
 * "flyrecord\0" + per-CPU (offset, size) table at off, for ncpus CPUs; for
 * an instance buffer, where its BUFFER option is (opt), else UINT64_MAX.
 */
static int parse_flyrecord_v6(struct cursor *c, struct swt_td_buffer *b, uint64_t off,
			      uint32_t ncpus, uint64_t opt)
{
	uint32_t i;
	int ret = need(c, off, 10 + (uint64_t)ncpus * 16, "flyrecord table");

	if (ret)
		return ret;
	if (memcmp(c->base + off, "flyrecord", 10) && opt != UINT64_MAX)
		/* trace-cmd split (3.1.6) writes BUFFER options that point at 0 */
		return swt_error(c->err, SWT_EFORMAT, "'%s': the BUFFER option at offset %llu "
				 "(instance '%s') points at offset %llu, where no flyrecord is",
				 c->path, (unsigned long long)opt, b->name, (unsigned long long)off);
	if (memcmp(c->base + off, "flyrecord", 10))
		return swt_error(c->err, SWT_EFORMAT, "'%s': expected 'flyrecord' at offset %llu",
				 c->path, (unsigned long long)off);
	off += 10;
	for (i = 0; i < ncpus; i++, off += 16) {
		uint64_t doff = rd64(c, off), dsize = rd64(c, off + 8);

		if (add_cpu(b, i, doff, dsize))
			return swt_error(c->err, SWT_ENOMEM, "out of memory");
		if (dsize && need(c, doff, dsize, "CPU data"))
			return -SWT_EFORMAT;
	}
	return 0;
}

static int parse_v6(struct cursor *c, struct swt_td_layout *l, uint64_t pos)
{
	uint64_t size, text = 0, text_len = 0;
	uint32_t n, i, ncpus;
	size_t len = 0;
	struct swt_td_buffer *top;
	uint64_t buffer_offs[256], buffer_opts[256];
	char *buffer_names[256];
	unsigned nbuf = 0;
	int ret;

	snprintf(l->compression, sizeof(l->compression), "none");
	/* header_page, header_event: name, u64 size, data */
	for (i = 0; i < 2; i++) {
		const char *want = i ? "header_event" : "header_page";

		ret = need(c, pos, strlen(want) + 1 + 8, want);
		if (ret)
			return ret;
		if (memcmp(c->base + pos, want, strlen(want) + 1))
			return swt_error(c->err, SWT_EFORMAT, "'%s': expected '%s' at offset %llu",
					 c->path, want, (unsigned long long)pos);
		pos += strlen(want) + 1;
		size = rd64(c, pos);
		ret = need(c, pos + 8, size, want);
		if (ret)
			return ret;
		if (!i) {
			text = pos + 8;
			text_len = size;
		}
		pos += 8 + size;
	}
	/* (after both: a damaged size is named as such, not as the text it cuts) */
	ret = check_header_page(c, c->base + text, text_len, text, 0);
	if (ret)
		return ret;
	/* ftrace formats: u32 count, each u64 size + data */
	ret = need(c, pos, 4, "ftrace formats");
	if (ret)
		return ret;
	n = rd32(c, pos);
	pos += 4;
	for (i = 0; i < n; i++) {
		if (c->size - pos < 8)
			return bad_format_size(c, 17, "ftrace", 6, i, n, pos, c->size, 0, 0, 0, 0, 0);
		size = rd64(c, pos);
		if (size > c->size - pos - 8)
			return bad_format_size(c, 17, "ftrace", 6, i, n, pos, c->size, 0, 0, 0, 1,
					       size);
		ret = add_format(c, l, "ftrace", 6, c->base + pos + 8, size, pos + 8, 0, 1);
		if (ret)
			return ret;
		pos += 8 + size;
	}
	/* event formats: u32 systems; name, u32 count, each u64 size + data */
	ret = need(c, pos, 4, "event formats");
	if (ret)
		return ret;
	n = rd32(c, pos);
	pos += 4;
	for (i = 0; i < n; i++) {
		uint64_t system;
		uint32_t events, e;

		ret = string_at(c, pos, c->size, "event system name", &len);
		if (ret)
			return ret;
		system = pos;
		pos += len + 1;
		ret = need(c, pos, 4, "event system");
		if (ret)
			return ret;
		events = rd32(c, pos);
		pos += 4;
		for (e = 0; e < events; e++) {
			if (c->size - pos < 8)
				return bad_format_size(c, 18, (const char *)c->base + system, len, e,
						       events, pos, c->size, 0, 0, 0, 0, 0);
			size = rd64(c, pos);
			if (size > c->size - pos - 8)
				return bad_format_size(c, 18, (const char *)c->base + system, len, e,
						       events, pos, c->size, 0, 0, 0, 1, size);
			ret = add_format(c, l, (const char *)c->base + system, len,
					 c->base + pos + 8, size, pos + 8, 0, 0);
			if (ret)
				return ret;
			pos += 8 + size;
		}
	}
	/* kallsyms, printk: u32 size + data; cmdlines: u64 size + data */
	for (i = 0; i < 2; i++) {
		ret = need(c, pos, 4, i ? "printk formats" : "kallsyms");
		if (ret)
			return ret;
		size = rd32(c, pos);
		ret = need(c, pos + 4, size, i ? "printk formats" : "kallsyms");
		if (ret)
			return ret;
		if (i) {
			ret = check_printk(c, c->base + pos + 4, size, pos + 4, 0);
			if (ret)
				return ret;
		}
		pos += 4 + size;
	}
	ret = need(c, pos, 8, "saved command lines");
	if (ret)
		return ret;
	size = rd64(c, pos);
	ret = need(c, pos + 8, size, "saved command lines");
	if (ret)
		return ret;
	pos += 8 + size;
	ret = need(c, pos, 4 + 10, "CPU count");
	if (ret)
		return ret;
	ncpus = rd32(c, pos);
	pos += 4;
	if (ncpus > SWT_TD_MAX_CPUS)
		return swt_error(c->err, SWT_EFORMAT, "'%s': implausible CPU count %u at offset %llu",
				 c->path, ncpus, (unsigned long long)(pos - 4));
	if (!memcmp(c->base + pos, "options  ", 10)) {
		pos += 10;
		for (;;) {
			uint16_t oid;
			uint32_t osize;

			ret = need(c, pos, 2, "option");
			if (ret)
				return ret;
			oid = rd16(c, pos);
			pos += 2;
			if (!oid)
				break;
			ret = need(c, pos, 4, "option");
			if (ret)
				return ret;
			osize = rd32(c, pos);
			pos += 4;
			ret = need(c, pos, osize, "option");
			if (ret)
				return ret;
			if (oid == 2) {
				parse_cpustat(l, (const char *)c->base + pos, osize, pos);
			} else if (oid == 8) {
				ret = check_cpucount(c, pos, osize);
				if (ret)
					return ret;
			} else if (oid == 3 && osize > 8 && nbuf == SWT_ARRAY_SIZE(buffer_offs)) {
				l->partial = 1;	/* buffers past these are libtracecmd's alone */
			} else if (oid == 3 && osize > 8) {
				ret = string_at(c, pos + 8, pos + osize, "buffer name", &len);
				if (ret)
					return ret;
				buffer_offs[nbuf] = rd64(c, pos);
				buffer_opts[nbuf] = pos - 6;	/* its id and size first */
				buffer_names[nbuf++] = (char *)c->base + pos + 8;
			} else if (oid == 4 && osize) {
				parse_traceclock(c, l, pos, osize, 1);
			} else if (oid == 14) {
				note_tsc2nsec(c, pos, osize);
			}
			pos += osize;
		}
	}
	ret = need(c, pos, 10, "data kind");
	if (ret)
		return ret;
	if (!memcmp(c->base + pos, "latency  ", 10))
		return swt_error(c->err, SWT_ENOTSUP,
				 "'%s': a latency-tracer text trace, not event data", c->path);
	top = add_buffer(l, "", 0);
	if (!top)
		return swt_error(c->err, SWT_ENOMEM, "out of memory");
	ret = parse_flyrecord_v6(c, top, pos, ncpus, UINT64_MAX);
	for (i = 0; !ret && i < nbuf; i++) {
		struct swt_td_buffer *b = add_buffer(l, buffer_names[i], strlen(buffer_names[i]));

		if (!b)
			return swt_error(c->err, SWT_ENOMEM, "out of memory");
		ret = parse_flyrecord_v6(c, b, buffer_offs[i], ncpus, buffer_opts[i]);
	}
	return ret;
}

/*
 * A buffer's CPUs' data lie one after another, each starting on a page:
 * a CPU that declares no data but is followed by more than a page before
 * the next CPU's data of its buffer has lost its size (zeroed, its events
 * silently gone).  A CPU with nothing recorded sits where the next one
 * starts; trace-cmd extract's empty top buffer declares none anywhere.
 */
static int check_empty_cpus(struct cursor *c, const struct swt_td_layout *l)
{
	for (size_t b = 0; b < l->nr_buffers; b++) {
		const struct swt_td_buffer *buf = &l->buffers[b];

		for (size_t i = 0; i < buf->nr_cpus; i++) {
			const struct swt_td_cpu *cpu = &buf->cpus[i];
			uint64_t next = UINT64_MAX;

			if (cpu->size || !cpu->offset)
				continue;
			for (size_t k = 0; k < buf->nr_cpus; k++)
				if (buf->cpus[k].offset > cpu->offset && buf->cpus[k].offset < next)
					next = buf->cpus[k].offset;
			if (next != UINT64_MAX && next - cpu->offset > l->page_size)
				return swt_error(c->err, SWT_EFORMAT,
						 "'%s': buffer '%s' CPU %u declares no data at offset %llu, "
						 "but the next CPU's data starts %llu bytes later: its size "
						 "is damaged", c->path, buf->name, cpu->cpu,
						 (unsigned long long)cpu->offset,
						 (unsigned long long)(next - cpu->offset));
		}
	}
	return 0;
}

/*
 * An instance buffer whose CPUSTATs say it recorded events must have a
 * BUFFER option saying where they are: in version 7 each buffer's option
 * may sit in an options section of its own, reached through the previous
 * section's DONE option, and a damaged link there (or a damaged option id)
 * lost the buffer without a word -- an empty database, exit 0.  (The top
 * level is not asked: trace-cmd extract declares events for it that it
 * never wrote.)
 */
static int check_stat_buffers(struct cursor *c, const struct swt_td_layout *l)
{
	if (l->partial)
		return 0;
	for (size_t i = 0; i < l->nr_stats; i++) {
		const struct swt_td_stat *st = &l->stats[i];
		size_t b;

		/* a name too long for the stat's copy is not compared */
		if (!st->buffer[0] || strlen(st->buffer) >= sizeof(st->buffer) - 1 ||
		    st->read_events <= 0)
			continue;
		for (b = 0; b < l->nr_buffers && strcmp(l->buffers[b].name, st->buffer); b++)
			;
		if (b == l->nr_buffers)
			return swt_error(c->err, SWT_EFORMAT,
					 "'%s': the CPUSTAT option at offset %llu declares %lld events "
					 "read from buffer '%s' CPU %d, but no BUFFER option says where "
					 "they are: the file's options are damaged", c->path,
					 (unsigned long long)st->offset, (long long)st->read_events,
					 st->buffer, st->cpu);
	}
	return 0;
}

int swt_td_layout_read(const char *path, struct swt_td_layout *l, struct swt_err *err)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct cursor c = { .path = path, .err = err };
	struct stat sb;
	uint64_t pos;
	size_t vlen = 0;
	void *map = MAP_FAILED;
	int fd, ret;

	memset(l, 0, sizeof(*l));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return swt_error(err, errno == ENOENT ? SWT_ENOENT : SWT_EIO, "'%s': %s", path,
				 strerror(errno));
	if (fstat(fd, &sb) < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
		goto out;
	}
	l->file_size = (uint64_t)sb.st_size;
	if (sb.st_size < 20) {
		ret = swt_error(err, SWT_EFORMAT, "'%s': truncated header (%lld bytes)", path,
				(long long)sb.st_size);
		goto out;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = swt_error(err, SWT_EIO, "'%s': cannot map: %s", path, strerror(errno));
		goto out;
	}
	c.base = map;
	c.size = (uint64_t)sb.st_size;
	if (memcmp(c.base, magic, sizeof(magic))) {
		ret = swt_error(err, SWT_EFORMAT, "'%s': not a trace.dat file (bad magic at offset 0)",
				path);
		goto out;
	}
	ret = string_at(&c, 10, SWT_MIN(c.size, 32), "version", &vlen);
	if (ret)
		goto out;
	l->version = atoi((const char *)c.base + 10);
	pos = 10 + vlen + 1;
	if (l->version != 6 && l->version != 7) {
		ret = swt_error(err, SWT_EVERSION, "'%s': trace.dat version '%.*s' is not supported "
				"(6 and 7 are)", path, (int)vlen, (const char *)c.base + 10);
		goto out;
	}
	ret = need(&c, pos, 6, "header");
	if (ret)
		goto out;
	if (c.base[pos] > 1) {
		ret = swt_error(err, SWT_EFORMAT, "'%s': bad endianness byte %u at offset %llu", path,
				c.base[pos], (unsigned long long)pos);
		goto out;
	}
	c.be = l->big_endian = c.base[pos];
	l->long_size = c.base[pos + 1];
	l->page_size = rd32(&c, pos + 2);
	if ((l->long_size != 4 && l->long_size != 8) || !page_size_plausible(l->page_size)) {
		ret = swt_error(err, SWT_EFORMAT,
				"'%s': implausible header at offset %llu (long size %u, page size %u)",
				path, (unsigned long long)pos + 1, l->long_size, l->page_size);
		goto out;
	}
	pos += 6;
	ret = l->version == 7 ? parse_v7(&c, l, pos) : parse_v6(&c, l, pos);
	if (!ret)
		ret = check_buffer_cpus(&c, l);
	if (!ret)
		ret = check_empty_cpus(&c, l);
	if (!ret)
		ret = check_stat_buffers(&c, l);
	if (!ret)
		ret = clock_verdict(&c);
out:
	free(c.sections);
	if (map != MAP_FAILED)
		munmap(map, (size_t)sb.st_size);
	close(fd);
	if (ret)
		swt_td_layout_release(l);
	return ret;
}

void swt_td_layout_release(struct swt_td_layout *l)
{
	for (size_t i = 0; i < l->nr_buffers; i++) {
		free(l->buffers[i].name);
		free(l->buffers[i].cpus);
	}
	free(l->buffers);
	free(l->stats);
	for (size_t i = 0; i < l->nr_formats; i++) {
		free(l->formats[i].system);
		free(l->formats[i].name);
	}
	free(l->formats);
	l->buffers = NULL;
	l->stats = NULL;
	l->formats = NULL;
	l->nr_buffers = l->nr_stats = l->nr_formats = 0;
}

const struct swt_td_stat *swt_td_layout_stat(const struct swt_td_layout *l, const char *buffer,
					     int cpu)
{
	for (size_t i = 0; i < l->nr_stats; i++)
		if (l->stats[i].cpu == cpu && !strcmp(l->stats[i].buffer, buffer))
			return &l->stats[i];
	return NULL;
}

const struct swt_td_format *swt_td_layout_format(const struct swt_td_layout *l, const char *system,
						 const char *name)
{
	for (size_t i = 0; i < l->nr_formats; i++)
		if (!strcmp(l->formats[i].name, name) && !strcmp(l->formats[i].system, system))
			return &l->formats[i];
	return NULL;
}
