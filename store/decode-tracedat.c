/*
 * trace.dat decoder (see tracedat.h for the why of each step).
 *
 *   1. swt_td_layout_read(): our own bounds-checked walk of the file.
 *   2. fork(): the child opens the file with libtracecmd, iterates every
 *      buffer (the top level and each instance) in one time-ordered pass,
 *      decodes the events swaptrace models through the file's own event
 *      formats (libtraceevent field lookups, no text parsing), and streams
 *      fixed-size event messages through a pipe.  Compressed data is read
 *      a chunk at a time by tracedat-stream.c and merged here exactly as
 *      libtracecmd merges it (its own reader keeps every chunk in memory).
 *   3. The parent turns messages back into events for the caller, reaps the
 *      child (a signal means libtracecmd crashed on the file), and compares
 *      what came through with what the file declares.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd/trace-cmd.h>
#include <kbuffer.h>

#include "tracedat-layout.h"
#include "tracedat-stream.h"
#include "tracedat.h"
#include "util.h"

enum msg_type {
	MSG_NAME = 1,	/* u32 name_id, system\0, name\0 */
	MSG_EVENT,	/* struct wire_event, its type's union member, then info text */
	MSG_COMM,	/* i32 pid, comm\0 */
	MSG_BUFFER,	/* u32 index, name\0 */
	MSG_CPU,	/* struct cpu_report */
	MSG_DONE,	/* u64 events */
	MSG_ERROR,	/* i32 code, message\0 */
};

struct msg_head {
	uint32_t type;
	uint32_t len;
};

/*
 * Where the child is, in memory it shares with the parent: when libtracecmd
 * crashes the child's unsent messages die with it, and this still says
 * which record was the last good one, so the error can name an offset.
 */
struct crash_mark {
	uint64_t events;	/* records taken so far; 0 while opening */
	uint64_t offset;	/* the last one's: a file offset, or in decompressed data */
	int32_t cpu;
	uint32_t compressed;
	char buffer[64];	/* its buffer's name, "" for the top level */
};

/*
 * An event on the wire: this head, then only the member of struct
 * swt_event's union that its type uses (a block event takes 72 bytes
 * instead of the whole struct's 112: most of a trace goes through here).
 */
struct wire_event {
	uint64_t ts;
	int32_t cpu, pid;
	uint32_t type, name_id;
};

static size_t wire_payload(uint32_t type)
{
	switch (type) {
	case SWT_EV_BLOCK: return sizeof(struct swt_block_event);
	case SWT_EV_FAULT: return sizeof(struct swt_fault_event);
	case SWT_EV_RECLAIM_WRITE: return sizeof(struct swt_reclaim_event);
	case SWT_EV_SWAP_PROBE: return sizeof(struct swt_probe_event);
	case SWT_EV_LOST: return sizeof(struct swt_lost_event);
	default: return 0;
	}
}

struct cpu_report {
	uint32_t buffer, cpu;
	uint64_t events, min_off, max_off;
	int64_t missed;
};

int swt_tracedat_probe(const char *path)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	unsigned char head[10];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = 0;

	if (fd < 0)
		return 0;
	ok = swt_read_full(fd, head, sizeof(head)) == sizeof(head) && !memcmp(head, magic, sizeof(head));
	close(fd);
	return ok;
}

/* What the file's layout says about it, as the stats report it. */
static void stats_from_layout(struct swt_tracedat_stats *stats, const struct swt_td_layout *l)
{
	stats->version = l->version;
	stats->big_endian = l->big_endian;
	snprintf(stats->clock, sizeof(stats->clock), "%s", l->clock);
	snprintf(stats->compression, sizeof(stats->compression), "%s", l->compression);
}

int swt_tracedat_check(const char *path, struct swt_tracedat_stats *stats, struct swt_err *err)
{
	struct swt_td_layout l;
	int ret = swt_td_layout_read(path, &l, err);

	memset(stats, 0, sizeof(*stats));
	if (ret)
		return ret;
	stats_from_layout(stats, &l);
	swt_td_layout_release(&l);
	return 0;
}

/* ---- child: libtracecmd -> messages ------------------------------------ */

enum ev_kind { K_OTHER = 0, K_BLOCK, K_FAULT, K_RECLAIM, K_PROBE };

struct field_set {
	struct tep_format_field *dev, *sector, *nr_sector, *rwbs, *error, *nr_rq;
	struct tep_format_field *old_dev, *old_sector;
	struct tep_format_field *address, *ip, *error_code;
	struct tep_format_field *pfn, *flags;
	struct tep_format_field *entry;
};

struct ev_info {
	int known;
	int kind;
	int letter;		/* block action / probe kind */
	uint32_t name_id;
	struct field_set f;
	struct tep_event *event;
	uint64_t fixed_size;	/* where its format's last fixed field ends */
	const char *lacks;	/* a field it reads that its format does not have */
	const struct tep_format_field *odd_field;	/* a field it reads that cannot be read so */
	const struct tep_format_field *misplaced[2];	/* two fields of its format out of place */
};

struct child {
	int fd;
	struct tep_handle *tep;
	char *buf;
	size_t len;
	int failed;
	struct ev_info *info;	/* by event id */
	size_t cap_info;
	uint32_t next_name_id;
	struct swt_map pids;	/* pids whose comm was sent */
	int last_pid;		/* the latest of them: most events repeat it */
	struct trace_seq seq;
	struct cpu_report *cpus;	/* [buffer * ncpu_slots + cpu] */
	size_t nr_buffers, cpu_slots;
	const char **buf_names;		/* by buffer index */
	uint8_t *buf_compressed;	/* offsets are in decompressed data */
	uint64_t events;
	uint64_t crash_after;		/* test seam: SWT_TEST_DECODER_CRASH, 0 off */
	uint32_t page_size;		/* the file's ring-buffer page */
	unsigned long_size;		/* and the size of a long, */
	int big_endian;			/* and its byte order */
	uint64_t *page_base;		/* [buffer * cpu_slots + cpu]: where libtracecmd's
					 * offsets of its pages start counting */
	int streaming;			/* records come from the streams, already checked */
	const struct swt_td_layout *layout;	/* where the event formats are */
	struct crash_mark *mark;	/* shared with the parent; NULL if mmap failed */
	size_t mark_bufidx;		/* the buffer mark->buffer names */
	int swap;			/* the file's byte order is not ours */
	/* common fields, shared by every event format; NULL until one is known */
	struct tep_format_field *common_type, *common_pid;
};

#define CHILD_BUF (256 * 1024)

static void child_flush(struct child *c)
{
	if (c->len && !c->failed && swt_write_all(c->fd, c->buf, c->len))
		c->failed = 1;
	c->len = 0;
}

static void child_send(struct child *c, uint32_t type, const void *a, size_t alen,
		       const void *b, size_t blen)
{
	struct msg_head h = { type, (uint32_t)(alen + blen) };

	if (c->len + sizeof(h) + alen + blen > CHILD_BUF)
		child_flush(c);
	if (sizeof(h) + alen + blen > CHILD_BUF) {
		/* oversized (a huge info string): write straight through */
		if (swt_write_all(c->fd, &h, sizeof(h)) || swt_write_all(c->fd, a, alen) ||
		    (blen && swt_write_all(c->fd, b, blen)))
			c->failed = 1;
		return;
	}
	memcpy(c->buf + c->len, &h, sizeof(h));
	memcpy(c->buf + c->len + sizeof(h), a, alen);
	if (blen)
		memcpy(c->buf + c->len + sizeof(h) + alen, b, blen);
	c->len += sizeof(h) + alen + blen;
}

static void child_send_event(struct child *c, const struct swt_event *ev, const char *info,
			     size_t info_len)
{
	struct wire_event w = {
		.ts = ev->ts, .cpu = ev->cpu, .pid = ev->pid, .type = ev->type,
		.name_id = ev->name_id,
	};
	size_t n = wire_payload(ev->type);
	/* room for the union, whichever member is the largest */
	char head[sizeof(w) + offsetof(struct swt_event, info) - offsetof(struct swt_event, block)];

	memcpy(head, &w, sizeof(w));
	memcpy(head + sizeof(w), &ev->block, n);	/* the union's member */
	child_send(c, MSG_EVENT, head, sizeof(w) + n, info, info_len);
}

static void __attribute__((noreturn)) child_die(struct child *c, int code, const char *fmt, ...)
{
	char msg[600];
	int32_t icode = code;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	child_send(c, MSG_ERROR, &icode, sizeof(icode), msg, strlen(msg) + 1);
	child_flush(c);
	_exit(1);
}

/*
 * A record libtracecmd handed over makes no sense.  Its offset is a file
 * offset only for uncompressed data; in compressed data it counts bytes of
 * the decompressed stream, which the message says.
 */
static void __attribute__((noreturn, format(printf, 5, 6)))
record_die(struct child *c, size_t bufidx, int cpu, const struct tep_record *rec, const char *fmt,
	   ...)
{
	const char *name = bufidx < c->nr_buffers && c->buf_names[bufidx][0] ?
			   c->buf_names[bufidx] : "top level";
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (bufidx < c->nr_buffers && c->buf_compressed[bufidx])
		child_die(c, SWT_EFORMAT,
			  "buffer '%s' CPU %d: the record at offset %llu of the decompressed data %s "
			  "(damaged compressed data)", name, cpu, (unsigned long long)rec->offset,
			  what);
	child_die(c, SWT_EFORMAT, "buffer '%s' CPU %d: the record at offset %llu %s", name, cpu,
		  (unsigned long long)rec->offset, what);
}

/*
 * An event's format makes no sense: the format is what is damaged, not
 * the record that led to it (nor, in a compressed file, its data), and
 * the message says where the format is.
 */
static void __attribute__((noreturn, format(printf, 3, 4)))
format_die(struct child *c, const struct tep_event *e, const char *fmt, ...)
{
	const struct swt_td_format *f = swt_td_layout_format(c->layout, e->system, e->name);
	char what[200], where[160] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (f && f->section)
		snprintf(where, sizeof(where), " at offset %llu of the decompressed %s section at "
			 "offset %llu", (unsigned long long)f->offset,
			 f->ftrace ? "ftrace formats" : "event formats",
			 (unsigned long long)f->section);
	else if (f)
		snprintf(where, sizeof(where), " at offset %llu", (unsigned long long)f->offset);
	child_die(c, SWT_EFORMAT, "the format of event %s:%s%s %s: the format is damaged", e->system,
		  e->name, where, what);
}

/*
 * need: the fields ingest reads of a modelled event that its format has in
 * every kernel.  A format without one is damaged (a field renamed): such
 * an event was once kept as an other event instead, and a block_rq_issue
 * without its rwbs left every request without an issue time, exit 0.  A
 * field some kernels lack is not needed, and reads as 0 where absent: a
 * completion's error (errors before Linux 4.13).
 */
#define BLOCK_FIELDS "dev", "sector", "nr_sector", "rwbs"

static const struct {
	const char *system, *name;
	int kind, letter;
	const char *need[6];
} known_events[] = {
	{ "block", "block_bio_queue", K_BLOCK, SWT_BA_QUEUE, { BLOCK_FIELDS } },
	{ "block", "block_getrq", K_BLOCK, SWT_BA_GETRQ, { BLOCK_FIELDS } },
	{ "block", "block_bio_backmerge", K_BLOCK, SWT_BA_BACKMERGE, { BLOCK_FIELDS } },
	{ "block", "block_bio_frontmerge", K_BLOCK, SWT_BA_FRONTMERGE, { BLOCK_FIELDS } },
	{ "block", "block_rq_insert", K_BLOCK, SWT_BA_INSERT, { BLOCK_FIELDS } },
	{ "block", "block_rq_issue", K_BLOCK, SWT_BA_ISSUE, { BLOCK_FIELDS } },
	{ "block", "block_rq_complete", K_BLOCK, SWT_BA_COMPLETE, { BLOCK_FIELDS } },
	{ "block", "block_bio_complete", K_BLOCK, SWT_BA_COMPLETE, { BLOCK_FIELDS } },
	{ "block", "block_rq_requeue", K_BLOCK, SWT_BA_REQUEUE, { BLOCK_FIELDS } },
	{ "block", "block_rq_merge", K_BLOCK, SWT_BA_RQ_MERGE, { BLOCK_FIELDS } },
	{ "block", "block_plug", K_BLOCK, SWT_BA_PLUG, { NULL } },
	{ "block", "block_unplug", K_BLOCK, SWT_BA_UNPLUG, { "nr_rq" } },
	/*
	 * No kernel's block_split has an nr_sector, which a block row needs:
	 * it has always been kept as an other event, its text whole.
	 */
	{ "block", "block_split", K_OTHER, 0, { NULL } },
	{ "block", "block_bio_bounce", K_BLOCK, SWT_BA_BOUNCE, { BLOCK_FIELDS } },
	{ "block", "block_bio_remap", K_BLOCK, SWT_BA_REMAP,
	  { BLOCK_FIELDS, "old_dev", "old_sector" } },
	{ "block", "block_rq_remap", K_BLOCK, SWT_BA_REMAP,
	  { BLOCK_FIELDS, "old_dev", "old_sector" } },
	{ "block", "block_sleeprq", K_BLOCK, SWT_BA_SLEEPRQ, { BLOCK_FIELDS } },
	{ "exceptions", "page_fault_user", K_FAULT, 0, { "address", "ip", "error_code" } },
	/*
	 * A kernel-mode fault on a user address (copy_from_user of a buffer
	 * that was swapped out: write(), send()) swaps in as a user fault
	 * does; letter 1 tells it from the user one.  One on a kernel
	 * address is no task's page: kept as an other event.
	 */
	{ "exceptions", "page_fault_kernel", K_FAULT, 1, { "address", "ip", "error_code" } },
	{ "vmscan", "mm_vmscan_write_folio", K_RECLAIM, 0, { "pfn", "reclaim_flags" } },
	{ "vmscan", "mm_vmscan_writepage", K_RECLAIM, 0, { "pfn", "reclaim_flags" } },
	/* swap-entry probes defined by swaptrace capture (docs/capture-format.md) */
	{ "swaptrace", "swt_fault", K_PROBE, SWT_PROBE_FAULT, { "entry", "address" } },
	{ "swaptrace", "swt_read", K_PROBE, SWT_PROBE_READ, { "entry" } },
	{ "swaptrace", "swt_ra_hit", K_PROBE, SWT_PROBE_RA_HIT, { "entry", "address" } },
	{ "swaptrace", "swt_swapout", K_PROBE, SWT_PROBE_SWAPOUT, { "entry" } },
};

/*
 * Where the last field of an event's format ends (a dynamic field's own
 * four bytes; what they point at is not counted): libtraceevent prints a
 * record's fields wherever its format puts them, whatever the record's
 * size.  A negative offset or size is no place at all: UINT64_MAX.
 */
static uint64_t format_fixed_size(const struct tep_event *e)
{
	const struct tep_format_field *lists[2] = { e->format.common_fields, e->format.fields };
	uint64_t end = 0;

	for (size_t i = 0; i < 2; i++)
		for (const struct tep_format_field *f = lists[i]; f; f = f->next) {
			if (f->offset < 0 || f->size < 0)
				return UINT64_MAX;
			end = SWT_MAX(end, (uint64_t)f->offset + (uint64_t)f->size);
		}
	return end;
}

/*
 * Two fields of an event's format out of place (set in pair, in the order
 * it lists them), or 0.  The kernel lays a format's fields out side by side
 * in the order it lists them: one that starts before the one listed ahead
 * of it ends was moved by damage -- onto it, reading its neighbour's bytes
 * as its own, or past it, beyond the records (whose fields then read as
 * if the records were too short).  Sizes and offsets are >= 0 here
 * (format_fixed_size).
 */
static int format_misplaced(const struct tep_event *e, const struct tep_format_field *pair[2])
{
	const struct tep_format_field *lists[2] = { e->format.common_fields, e->format.fields };
	const struct tep_format_field *prev = NULL;

	for (size_t i = 0; i < 2; i++)
		for (const struct tep_format_field *f = lists[i]; f; f = f->next) {
			if (!f->size)
				continue;
			if (prev && (int64_t)f->offset < (int64_t)prev->offset + prev->size) {
				pair[0] = prev;
				pair[1] = f;
				return 1;
			}
			prev = f;
		}
	return 0;
}

/* Whether a field is what field_num() reads: a number of 1, 2, 4 or 8 bytes. */
static int number_field(const struct tep_format_field *f)
{
	return (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) &&
	       !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC));
}

/*
 * Whether a field is what field_str() reads: chars in the record itself.
 * A dynamic string's field holds where the string is, and a number's
 * bytes are no letters.
 */
static int char_array_field(const struct tep_format_field *f)
{
	unsigned long kind = f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING |
					 TEP_FIELD_IS_DYNAMIC);

	return f->size > 0 && kind == (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING);
}

static struct ev_info *event_info(struct child *c, struct tep_event *e)
{
	const char *const *need = NULL;
	struct ev_info *ei;
	size_t id = (size_t)e->id, i;

	if (swt_grow((void **)&c->info, &c->cap_info, id + 1, sizeof(*c->info)))
		child_die(c, SWT_ENOMEM, "out of memory");
	ei = &c->info[id];
	if (ei->known)
		return ei;
	ei->known = 1;
	ei->kind = K_OTHER;
	ei->name_id = c->next_name_id++;
	for (i = 0; i < SWT_ARRAY_SIZE(known_events); i++) {
		if (strcmp(e->name, known_events[i].name) || strcmp(e->system, known_events[i].system))
			continue;
		ei->kind = known_events[i].kind;
		ei->letter = known_events[i].letter;
		need = known_events[i].need;
		break;
	}
	if (!c->common_type) {
		c->common_type = tep_find_common_field(e, "common_type");
		c->common_pid = tep_find_common_field(e, "common_pid");
	}
	ei->f.dev = tep_find_field(e, "dev");
	ei->f.sector = tep_find_field(e, "sector");
	ei->f.nr_sector = tep_find_field(e, "nr_sector");
	ei->f.rwbs = tep_find_field(e, "rwbs");
	ei->f.error = tep_find_field(e, "error");
	ei->f.nr_rq = tep_find_field(e, "nr_rq");
	ei->f.old_dev = tep_find_field(e, "old_dev");
	ei->f.old_sector = tep_find_field(e, "old_sector");
	ei->f.address = tep_find_field(e, "address");
	ei->f.ip = tep_find_field(e, "ip");
	ei->f.error_code = tep_find_field(e, "error_code");
	ei->f.pfn = tep_find_field(e, "pfn");
	ei->f.flags = tep_find_field(e, "reclaim_flags");
	ei->f.entry = tep_find_field(e, "entry");
	ei->event = e;
	ei->fixed_size = format_fixed_size(e);
	/*
	 * Older kernels' mm_vmscan_writepage recorded the struct page
	 * pointer, no pfn: their event is kept as-is, as it always was, not
	 * refused as a damaged format.
	 */
	if (ei->kind == K_RECLAIM && !ei->f.pfn && tep_find_field(e, "page"))
		ei->kind = K_OTHER;
	/*
	 * What a modelled event's format must give the fields read of it: a
	 * field missing, of no number's size or shape, or out of place made
	 * rows of zeros, empty strings or a neighbour's bytes (exit 0).
	 */
	if (ei->kind != K_OTHER) {
		const struct tep_format_field *numbers[] = {
			ei->f.dev, ei->f.sector, ei->f.nr_sector, ei->f.error, ei->f.nr_rq,
			ei->f.old_dev, ei->f.old_sector, ei->f.address, ei->f.ip,
			ei->f.error_code, ei->f.pfn, ei->f.flags, ei->f.entry,
		};

		for (i = 0; i < SWT_ARRAY_SIZE(known_events[0].need) && need[i] && !ei->lacks; i++)
			if (!tep_find_field(e, need[i]))
				ei->lacks = need[i];
		for (i = 0; i < SWT_ARRAY_SIZE(numbers) && !ei->odd_field; i++)
			if (numbers[i] && !number_field(numbers[i]))
				ei->odd_field = numbers[i];
		if (!ei->odd_field && ei->kind == K_BLOCK && ei->f.rwbs &&
		    !char_array_field(ei->f.rwbs))
			ei->odd_field = ei->f.rwbs;
		if (ei->fixed_size != UINT64_MAX)
			format_misplaced(e, ei->misplaced);
	}
	{
		uint32_t nid = ei->name_id;
		size_t sl = strlen(e->system) + 1, nl = strlen(e->name) + 1;
		char tmp[512];

		if (sl + nl <= sizeof(tmp)) {
			memcpy(tmp, e->system, sl);
			memcpy(tmp + sl, e->name, nl);
			child_send(c, MSG_NAME, &nid, sizeof(nid), tmp, sl + nl);
		}
	}
	return ei;
}

/*
 * Whether a field lies inside the record.  Compared without adding offset
 * and size: a damaged format can declare an offset near INT_MAX.
 */
static int field_fits(const struct tep_format_field *f, const struct tep_record *rec)
{
	return f && f->offset >= 0 && f->size > 0 && rec->size >= 0 && f->offset <= rec->size &&
	       f->size <= rec->size - f->offset;
}

/*
 * A numeric field of a record; 0 when the field is absent or lies beyond
 * the record (damaged data).  Read here rather than through
 * tep_read_number_field(): this runs for every field of every event, and
 * the byte order is the file's, fixed.
 */
static uint64_t field_num(const struct child *c, const struct tep_format_field *f,
			  const struct tep_record *rec)
{
	const unsigned char *p;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	if (!field_fits(f, rec))
		return 0;
	p = (const unsigned char *)rec->data + f->offset;
	switch (f->size) {
	case 1:
		return p[0];
	case 2:
		memcpy(&v16, p, 2);
		return c->swap ? __builtin_bswap16(v16) : v16;
	case 4:
		memcpy(&v32, p, 4);
		return c->swap ? __builtin_bswap32(v32) : v32;
	case 8:
		memcpy(&v64, p, 8);
		return c->swap ? __builtin_bswap64(v64) : v64;
	default:
		return 0;
	}
}

static void field_str(struct tep_format_field *f, struct tep_record *rec, char *out, size_t size)
{
	size_t n;

	out[0] = '\0';
	if (!field_fits(f, rec))
		return;
	n = SWT_MIN((size_t)f->size, size - 1);
	memcpy(out, (const char *)rec->data + f->offset, n);
	out[n] = '\0';
}

static void note_pid(struct child *c, int pid)
{
	uint64_t dummy;
	const char *comm;

	if (pid < 0 || pid == c->last_pid || swt_map_get(&c->pids, (uint64_t)pid, 0, &dummy))
		return;
	swt_map_put(&c->pids, (uint64_t)pid, 0, 1);
	c->last_pid = pid;
	comm = tep_data_comm_from_pid(c->tep, pid);
	if (comm && comm[0] && strcmp(comm, "<...>")) {
		int32_t p = pid;

		child_send(c, MSG_COMM, &p, sizeof(p), comm, strlen(comm) + 1);
	}
}

/*
 * A modelled event whose format event_info judged damaged, refused with
 * what is wrong with it: out of line, as child_record runs per record.
 */
static void __attribute__((noreturn, noinline, cold))
format_refuse(struct child *c, const struct ev_info *ei)
{
	const struct tep_format_field *odd = ei->odd_field;

	if (ei->lacks)
		format_die(c, ei->event, "has no field '%s', which ingest reads", ei->lacks);
	if (odd && odd == ei->f.rwbs)
		format_die(c, ei->event, "gives its field 'rwbs' the type '%s' of %d bytes, not a "
			   "char array", odd->type, odd->size);
	if (odd && odd->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))
		format_die(c, ei->event, "gives its field '%s' the type '%s', not a number",
			   odd->name, odd->type);
	if (odd)
		format_die(c, ei->event, "gives its field '%s' %d bytes, not a number's 1, 2, 4 or 8",
			   odd->name, odd->size);
	if ((int64_t)ei->misplaced[1]->offset + ei->misplaced[1]->size >
	    (int64_t)ei->misplaced[0]->offset)
		format_die(c, ei->event, "puts its field '%s' over its field '%s'",
			   ei->misplaced[1]->name, ei->misplaced[0]->name);
	format_die(c, ei->event, "lists its field '%s' (offset %d) before its field '%s' "
		   "(offset %d)", ei->misplaced[0]->name, ei->misplaced[0]->offset,
		   ei->misplaced[1]->name, ei->misplaced[1]->offset);
}

static int child_record(struct tracecmd_input *h, struct tep_record *rec, int multi_cpu,
			void *data)
{
	/* with several handles the callback's CPU counts across all of them */
	int cpu = rec->cpu, id;
	struct child *c = data;
	size_t bufidx = (size_t)(uintptr_t)tracecmd_get_private(h), slot;
	struct cpu_report *cr;
	struct swt_event ev;
	struct ev_info *ei;
	enum ev_kind kind;
	const char *info = NULL;
	size_t info_len = 0;

	if (cpu < 0 || (size_t)cpu >= c->cpu_slots || bufidx >= c->nr_buffers)
		record_die(c, bufidx, cpu, rec, "is on an unexpected CPU %d", cpu);
	slot = bufidx * c->cpu_slots + (size_t)cpu;
	if (c->mark) {
		if (c->mark_bufidx != bufidx) {
			snprintf(c->mark->buffer, sizeof(c->mark->buffer), "%s", c->buf_names[bufidx]);
			c->mark->compressed = c->buf_compressed[bufidx];
			c->mark_bufidx = bufidx;
		}
		c->mark->offset = rec->offset;
		c->mark->cpu = cpu;
		c->mark->events = c->events + 1;
	}
	/*
	 * libtracecmd takes an event that starts inside a page's data whatever
	 * its length (the stream's records were checked against their page):
	 * one that runs past the page (damaged data) would have its fields
	 * read beyond the page, past the end of libtracecmd's buffer.
	 */
	if (!c->streaming && c->page_size && rec->record_size > 0) {
		uint64_t in_page = (rec->offset - c->page_base[slot]) % c->page_size;

		if (in_page + (uint64_t)rec->record_size > c->page_size)
			record_die(c, bufidx, cpu, rec, "runs past the end of its page by %llu bytes",
				   (unsigned long long)(in_page + (uint64_t)rec->record_size -
							c->page_size));
	}
	id = c->common_type ? (int)field_num(c, c->common_type, rec) : tep_data_type(c->tep, rec);
	/* known ids skip libtraceevent's lookup; a new one must have a format */
	if (id >= 0 && (size_t)id < c->cap_info && c->info[id].known) {
		ei = &c->info[id];
	} else {
		struct tep_event *e;

		/* event ids are a u16 (common_type); c->info is indexed by them */
		swt_formats_load(c->tep, id);	/* kept unparsed since the file was opened */
		if (id < 0 || id > UINT16_MAX || !(e = tep_find_event(c->tep, id)))
			record_die(c, bufidx, cpu, rec, "has unknown event id %d", id);
		ei = event_info(c, e);
	}
	/* stored as a signed 64-bit integer: past 2^63 - 1 it went in negative (or NULL) */
	if (rec->ts > (unsigned long long)INT64_MAX)
		record_die(c, bufidx, cpu, rec, "has time %llu ns, past 2^63 - 1 (292 years)",
			   (unsigned long long)rec->ts);
	cr = &c->cpus[slot];
	if (!cr->events || rec->offset < cr->min_off)
		cr->min_off = rec->offset;
	if (rec->offset > cr->max_off)
		cr->max_off = rec->offset;
	cr->events++;
	c->events++;
	if (rec->missed_events) {
		memset(&ev, 0, sizeof(ev));
		ev.type = SWT_EV_LOST;
		ev.ts = rec->ts;
		ev.cpu = cpu;
		ev.pid = -1;
		ev.lost.count = rec->missed_events > 0 ? rec->missed_events : -1;
		cr->missed = swt_add_sat(cr->missed, rec->missed_events > 0 ? rec->missed_events : 1);
		child_send_event(c, &ev, NULL, 0);
	}

	memset(&ev, 0, sizeof(ev));
	ev.ts = rec->ts;
	ev.cpu = cpu;
	ev.pid = c->common_pid ? (int32_t)field_num(c, c->common_pid, rec) :
				 tep_data_pid(c->tep, rec);
	ev.name_id = ei->name_id;
	note_pid(c, ev.pid);
	kind = ei->kind;
	/*
	 * A modelled event's format must have the fields ingest reads, its
	 * numbers be numbers and its rwbs a string, and its fields be in
	 * place: the format is judged first, as a field moved past the
	 * others makes every record look too short for it.  Then every record
	 * holds its format's fixed fields: a modelled event's numbers read
	 * beyond it came out 0 (rows of garbage), and another's text, printed
	 * through its format, would be read past the record and its page (an
	 * event id damaged into a larger event's).
	 */
	if (ei->lacks || ei->odd_field || ei->misplaced[0])
		format_refuse(c, ei);
	if (rec->size < 0 || (uint64_t)rec->size < ei->fixed_size)
		record_die(c, bufidx, cpu, rec, "holds %d bytes, fewer than the %llu of its event "
			   "%s:%s", rec->size, (unsigned long long)ei->fixed_size,
			   ei->event->system, ei->event->name);
	if (kind == K_FAULT && ei->letter && field_num(c, ei->f.address, rec) >> 63)
		kind = K_OTHER;	/* the kernel's half of the address space */
	switch (kind) {
	case K_BLOCK: {
		struct swt_block_event *b = &ev.block;
		uint64_t nr;

		ev.type = SWT_EV_BLOCK;
		b->action = (uint8_t)ei->letter;
		b->dev = (uint32_t)field_num(c, ei->f.dev, rec);
		b->sector = field_num(c, ei->f.sector, rec);
		/*
		 * A bio's or request's size is a u32 of bytes in the kernel: a
		 * larger count is damage, and ingest would write a swap row for
		 * each of its pages (billions, from one event).
		 */
		nr = field_num(c, ei->f.nr_sector, rec);
		if (nr > UINT32_MAX >> 9)
			record_die(c, bufidx, cpu, rec, "declares %llu sectors, more than 4 GiB",
				   (unsigned long long)nr);
		b->nr_sectors = (uint32_t)nr;
		field_str(ei->f.rwbs, rec, b->rwbs, sizeof(b->rwbs));
		b->write = (uint8_t)swt_rwbs_is_write(b->rwbs);
		b->error = (int32_t)field_num(c, ei->f.error, rec);
		if (ei->letter == SWT_BA_UNPLUG)
			b->arg = field_num(c, ei->f.nr_rq, rec);
		else if (ei->letter == SWT_BA_REMAP) {
			b->arg = field_num(c, ei->f.old_sector, rec);
			b->arg_dev = (uint32_t)field_num(c, ei->f.old_dev, rec);
		}
		break;
	}
	case K_FAULT:
		ev.type = SWT_EV_FAULT;
		ev.fault.address = field_num(c, ei->f.address, rec);
		ev.fault.ip = field_num(c, ei->f.ip, rec);
		ev.fault.error_code = field_num(c, ei->f.error_code, rec);
		break;
	case K_RECLAIM:
		ev.type = SWT_EV_RECLAIM_WRITE;
		ev.reclaim.pfn = field_num(c, ei->f.pfn, rec);
		ev.reclaim.flags = (int64_t)field_num(c, ei->f.flags, rec);
		break;
	case K_PROBE: {
		/* swp_entry_t on 64-bit: type in the top bits above a 58-bit offset */
		uint64_t entry = field_num(c, ei->f.entry, rec);

		ev.type = SWT_EV_SWAP_PROBE;
		ev.probe.kind = (uint32_t)ei->letter;
		ev.probe.swap_type = (uint32_t)(entry >> 58);
		ev.probe.offset = entry & ((1ull << 58) - 1);
		ev.probe.address = field_num(c, ei->f.address, rec);
		break;
	}
	default:
		ev.type = SWT_EV_OTHER;
		swt_kallsyms_load(c->tep);	/* a %pS in its text names a function */
		trace_seq_reset(&c->seq);
		tep_print_event(c->tep, &c->seq, rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&c->seq);
		info = c->seq.buffer;
		info_len = c->seq.len + 1;
		break;
	}
	child_send_event(c, &ev, info, info_len);
	if (c->crash_after && c->events >= c->crash_after) {
		/* what a libtracecmd crash looks like to the parent, whatever
		 * SIGSEGV handler a sanitizer installed */
		child_flush(c);
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	return c->failed ? -1 : 0;
}

/*
 * Whether a ring-buffer page's header (u64 time stamp, then a long whose
 * low 30 bits are the data's size; the top two flag missed events) keeps
 * the data inside the page.  Checked before kbuffer sees the page: kbuffer
 * reads the first event wherever the header puts the data, and crashes on
 * a size far past the page.
 */
static int page_header_ok(const unsigned char *page, unsigned long_size, int big_endian,
			  unsigned page_size)
{
	const unsigned char *p = page + 8 + (big_endian && long_size == 8 ? 4 : 0);
	uint32_t commit = big_endian ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
				       (uint32_t)p[2] << 8 | p[3] :
				       (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
				       (uint32_t)p[1] << 8 | p[0];

	return 8 + long_size + (uint64_t)(commit & ~(3u << 30)) <= page_size;
}

/* Load a page into kbuf if its header and data fit the page: 0, or -1 (damaged). */
static int load_page(struct kbuffer *kbuf, void *page, unsigned long_size, int big_endian,
		     unsigned page_size)
{
	if (!page_header_ok(page, long_size, big_endian, page_size) ||
	    kbuffer_load_subbuffer(kbuf, page) < 0 || kbuffer_subbuffer_size(kbuf) < 0 ||
	    (unsigned)kbuffer_start_of_data(kbuf) + (unsigned)kbuffer_subbuffer_size(kbuf) > page_size)
		return -1;
	return 0;
}

/*
 * Compressed files: one source per (buffer, CPU), merged by timestamp as
 * tracecmd_iterate_events_multi() does -- the earliest record first, ties
 * to the earlier buffer, then the lower CPU -- with each record filled in
 * the way tracecmd_peek_data() fills it from libtraceevent's kbuffer.
 */
struct source {
	struct tracecmd_input *handle;
	struct swt_td_stream *stream;
	struct kbuffer *kbuf;
	size_t bufidx;
	const unsigned char *page;	/* the page kbuf reads */
	uint64_t page_off;
	int cpu, loaded, have;
	struct tep_record rec;
	unsigned long long first_page_ts;	/* kbuffer's time of the first page, once loaded */
};

static const char *source_name(const struct child *c, const struct source *s)
{
	return c->buf_names[s->bufidx][0] ? c->buf_names[s->bufidx] : "top level";
}

/* The source's next record into s->rec (s->have = 0 after its last). */
static void source_next(struct child *c, struct source *s, uint32_t page_size)
{
	for (;;) {
		struct swt_err err = { 0 };
		unsigned long long ts;
		uint64_t off;
		void *page, *data;
		int r;

		if (s->loaded && (data = kbuffer_read_event(s->kbuf, &ts))) {
			/*
			 * kbuffer takes an event that starts inside the page's
			 * data whatever its length: one that runs past the page
			 * (damaged data) would have its fields read beyond it.
			 */
			if ((const unsigned char *)data < s->page ||
			    (size_t)((const unsigned char *)data - s->page) +
			    (size_t)SWT_MAX(kbuffer_event_size(s->kbuf), 0) > page_size)
				child_die(c, SWT_EFORMAT,
					  "buffer '%s' CPU %d: the record at offset %llu of the "
					  "decompressed data runs past the end of its page (damaged "
					  "compressed data)", source_name(c, s), s->cpu,
					  (unsigned long long)(s->page_off +
							       (uint64_t)kbuffer_curr_offset(s->kbuf)));
			memset(&s->rec, 0, sizeof(s->rec));
			s->rec.ts = ts;
			s->rec.size = kbuffer_event_size(s->kbuf);
			s->rec.record_size = kbuffer_curr_size(s->kbuf);
			s->rec.cpu = s->cpu;
			s->rec.data = data;
			s->rec.offset = s->page_off + (uint64_t)kbuffer_curr_offset(s->kbuf);
			s->rec.missed_events = kbuffer_missed_events(s->kbuf);
			s->rec.ref_count = 1;
			kbuffer_next_event(s->kbuf, NULL);
			s->have = 1;
			return;
		}
		r = swt_td_stream_next_page(s->stream, &page, &off, &err);
		if (r < 0)
			child_die(c, err.code ? err.code : SWT_EFORMAT, "%s", err.msg);
		if (!r) {
			s->have = 0;
			return;
		}
		if (load_page(s->kbuf, page, c->long_size, c->big_endian, page_size))
			child_die(c, SWT_EFORMAT,
				  "buffer '%s' CPU %d: the page at offset %llu of the decompressed data "
				  "has a bad header (damaged compressed data)", source_name(c, s),
				  s->cpu, (unsigned long long)off);
		s->page = page;
		if (!s->loaded)
			s->first_page_ts = kbuffer_timestamp(s->kbuf);
		s->page_off = off;
		s->loaded = 1;
	}
}

static int source_before(const struct source *a, size_t ia, const struct source *b, size_t ib)
{
	return a->rec.ts < b->rec.ts || (a->rec.ts == b->rec.ts && ia < ib);
}

/* Restore the heap (of source indexes, earliest record on top) below slot i. */
static void heap_down(const struct source *src, size_t *heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && source_before(&src[heap[l]], heap[l], &src[heap[m]], heap[m]))
			m = l;
		if (r < n && source_before(&src[heap[r]], heap[r], &src[heap[m]], heap[m]))
			m = r;
		if (m == i)
			return;
		size_t t = heap[i];

		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

static int cmp_cpu_index(const void *a, const void *b, void *arg)
{
	const struct swt_td_buffer *buf = arg;
	uint32_t x = buf->cpus[*(const size_t *)a].cpu, y = buf->cpus[*(const size_t *)b].cpu;

	return x < y ? -1 : x > y;
}

/*
 * Decode a compressed file through the streams.  Returns 0 when it did,
 * 1 when the file is not one it takes (not compressed, or compressed in
 * part, or a codec it lacks) or when libtracecmd's first timestamp differs
 * from the stream's (a timestamp correction stored in the file, which
 * libtracecmd applies; SWT_TEST_FIRST_TS_DIFFERS pretends one, for the
 * tests): the caller then iterates with libtracecmd, from the start.
 */
static int stream_events(struct child *c, const char *path, const struct swt_td_layout *l,
			 struct tracecmd_input **handles, size_t nr_handles)
{
	struct source *src = NULL;
	size_t nsrc = 0, cap = 0, *heap = NULL, *order = NULL, nheap;
	enum kbuffer_long_size lsize = l->long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4;
	enum kbuffer_endian endian = l->big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE;
	const char *force = getenv("SWT_TRACEDAT_READER");
	int fd = -1, ret = 1;

	if ((force && !strcmp(force, "libtracecmd")) || l->partial || !swt_td_stream_supported(l))
		return 1;
	for (size_t b = 0; b < l->nr_buffers; b++)
		for (size_t k = 0; k < l->buffers[b].nr_cpus; k++)
			if (l->buffers[b].cpus[k].size && !l->buffers[b].compressed)
				return 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		child_die(c, SWT_EIO, "cannot open it: %s", strerror(errno));
	for (size_t i = 0; i < nr_handles; i++) {
		const struct swt_td_buffer *buf = NULL;

		for (size_t b = 0; b < l->nr_buffers; b++)
			if (!strcmp(l->buffers[b].name, c->buf_names[i]))
				buf = &l->buffers[b];
		if (!buf)
			goto out;	/* a buffer libtracecmd sees and the layout does not */
		free(order);
		order = calloc(buf->nr_cpus + 1, sizeof(*order));
		if (!order)
			child_die(c, SWT_ENOMEM, "out of memory");
		for (size_t k = 0; k < buf->nr_cpus; k++)
			order[k] = k;
		qsort_r(order, buf->nr_cpus, sizeof(*order), cmp_cpu_index, (void *)buf);
		for (size_t j = 0; j < buf->nr_cpus; j++) {
			const struct swt_td_cpu *cpu = &buf->cpus[order[j]];
			struct swt_err err = { 0 };
			struct source *s;

			if (!cpu->size)
				continue;
			if (swt_grow((void **)&src, &cap, nsrc + 1, sizeof(*src)))
				child_die(c, SWT_ENOMEM, "out of memory");
			s = &src[nsrc++];
			memset(s, 0, sizeof(*s));
			s->handle = handles[i];
			s->bufidx = i;
			s->cpu = (int)cpu->cpu;
			s->kbuf = kbuffer_alloc(lsize, endian);
			if (!s->kbuf)
				child_die(c, SWT_ENOMEM, "out of memory");
			if (tep_is_old_format(c->tep))
				kbuffer_set_old_format(s->kbuf);
			if (swt_td_stream_open(fd, l, buf, cpu, &s->stream, &err))
				child_die(c, err.code ? err.code : SWT_EFORMAT, "%s", err.msg);
		}
	}
	heap = calloc(nsrc + 1, sizeof(*heap));
	if (!heap)
		child_die(c, SWT_ENOMEM, "out of memory");
	nheap = 0;
	for (size_t i = 0; i < nsrc; i++) {
		source_next(c, &src[i], l->page_size);
		if (src[i].have)
			heap[nheap++] = i;
	}
	/*
	 * libtracecmd corrects timestamps the file asks it to (offsets, TSC
	 * conversion, guest clocks).  It read each CPU's first page when it
	 * opened the file, and its first timestamp is the earliest of those
	 * pages' times after its correction: the same as ours only when there
	 * is none.  (Reading its records instead would move its iterators,
	 * which the fallback needs at the start.)
	 */
	for (size_t i = 0; i < nr_handles; i++) {
		unsigned long long ours = 0;
		int any = 0;

		for (size_t k = 0; k < nsrc; k++)
			if (src[k].bufidx == i && src[k].loaded &&
			    (!any++ || src[k].first_page_ts < ours))
				ours = src[k].first_page_ts;
		if (any && (ours != tracecmd_get_first_ts(handles[i]) ||
			    getenv("SWT_TEST_FIRST_TS_DIFFERS")))
			goto out;
	}
	for (size_t i = nheap / 2; i-- > 0;)
		heap_down(src, heap, nheap, i);
	c->streaming = 1;
	while (nheap) {
		struct source *s = &src[heap[0]];

		if (child_record(s->handle, &s->rec, s->cpu, c) < 0)
			break;
		source_next(c, s, l->page_size);
		if (!s->have)
			heap[0] = heap[--nheap];
		heap_down(src, heap, nheap, 0);
	}
	ret = 0;
out:
	for (size_t i = 0; i < nsrc; i++) {
		swt_td_stream_free(src[i].stream);
		kbuffer_free(src[i].kbuf);
	}
	free(src);
	free(heap);
	free(order);
	close(fd);
	return ret;
}

/*
 * libtracecmd reads the first page of every CPU when it opens a buffer --
 * decompressing the first chunk of compressed data -- and a chunk that does
 * not decompress, or a page whose header declares more data than a page
 * holds, crashes it (3.1.6: in kbuffer, or in tracecmd_close() of a
 * half-made handle on its error path), which tells the user nothing about
 * where the damage is.  The same pages are checked here first, the
 * compressed ones through the streams, which name the chunk and its offset.
 */
static void check_first_pages(struct child *c, const char *path, const struct swt_td_layout *l)
{
	struct kbuffer *kbuf = kbuffer_alloc(l->long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
					     l->big_endian ? KBUFFER_ENDIAN_BIG :
							     KBUFFER_ENDIAN_LITTLE);
	unsigned char *buf = calloc(1, l->page_size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!kbuf || !buf)
		child_die(c, SWT_ENOMEM, "out of memory");
	if (fd < 0)
		child_die(c, SWT_EIO, "cannot open it: %s", strerror(errno));
	/* (no tep yet to ask for the pre-2.6.31 format: only headers are checked) */
	for (size_t b = 0; b < l->nr_buffers; b++) {
		const struct swt_td_buffer *tb = &l->buffers[b];
		const char *name = tb->name[0] ? tb->name : "top level";

		for (size_t k = 0; k < tb->nr_cpus; k++) {
			const struct swt_td_cpu *cpu = &tb->cpus[k];
			struct swt_err err = { 0 };
			void *page = buf;
			uint64_t off = cpu->offset;

			if (!cpu->size)
				continue;
			if (tb->compressed) {
				struct swt_td_stream *st;

				/* zlib (no stream) is left to libtracecmd */
				if (l->partial || !swt_td_stream_supported(l))
					continue;
				if (swt_td_stream_open(fd, l, tb, cpu, &st, &err) ||
				    swt_td_stream_next_page(st, &page, &off, &err) < 0)
					child_die(c, err.code ? err.code : SWT_EFORMAT, "%s", err.msg);
				memcpy(buf, page, l->page_size);
				swt_td_stream_free(st);
			} else {
				memset(buf, 0, l->page_size);
				if (pread(fd, buf, SWT_MIN(cpu->size, (uint64_t)l->page_size),
					  (off_t)cpu->offset) < 0)
					child_die(c, SWT_EIO, "cannot read it: %s", strerror(errno));
			}
			if (load_page(kbuf, buf, l->long_size, l->big_endian, l->page_size))
				child_die(c, SWT_EFORMAT,
					  "buffer '%s' CPU %u: the page at offset %llu%s has a bad "
					  "header", name, cpu->cpu, (unsigned long long)off,
					  tb->compressed ? " of the decompressed data" : "");
		}
	}
	close(fd);
	free(buf);
	kbuffer_free(kbuf);
}

static void __attribute__((noreturn)) child_main(const char *path, int fd,
						 const struct swt_td_layout *l, struct crash_mark *mark)
{
	struct child c = { .fd = fd, .last_pid = -1, .layout = l, .mark = mark,
			   .mark_bufidx = SIZE_MAX };
	struct tracecmd_input *top, **handles = NULL;
	const char *crash;
	int n, i, ret;

	c.buf = malloc(CHILD_BUF);
	if (!c.buf || swt_map_init(&c.pids, 1024))
		_exit(1);
	trace_seq_init(&c.seq);
	tracecmd_set_loglevel(TEP_LOG_NONE);
	check_first_pages(&c, path, l);
	swt_formats_defer(1);	/* the formats of events the file uses are parsed as they come */
	top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	swt_formats_defer(0);
	if (!top)
		child_die(&c, SWT_EFORMAT, "libtracecmd cannot open it (damaged headers or sections)");
	c.tep = tracecmd_get_tep(top);
	swt_formats_opened(c.tep);
	c.swap = tep_is_file_bigendian(c.tep) != tep_is_local_bigendian(c.tep);
	tep_set_loglevel(TEP_LOG_NONE);
	n = tracecmd_buffer_instances(top);
	if (n < 0)
		child_die(&c, SWT_EFORMAT, "cannot read its buffer instances");
	handles = calloc((size_t)n + 1, sizeof(*handles));
	c.nr_buffers = (size_t)n + 1;
	c.cpu_slots = SWT_TD_MAX_CPUS;
	for (size_t b = 0; b < l->nr_buffers; b++)
		for (size_t k = 0; k < l->buffers[b].nr_cpus; k++)
			if (l->buffers[b].cpus[k].cpu >= c.cpu_slots)
				child_die(&c, SWT_EFORMAT, "CPU number %u out of range",
					  l->buffers[b].cpus[k].cpu);
	c.cpu_slots = 1;
	for (size_t b = 0; b < l->nr_buffers; b++)
		for (size_t k = 0; k < l->buffers[b].nr_cpus; k++)
			c.cpu_slots = SWT_MAX(c.cpu_slots, (size_t)l->buffers[b].cpus[k].cpu + 1);
	if (tep_get_cpus(c.tep) > 0)
		c.cpu_slots = SWT_MAX(c.cpu_slots, (size_t)tep_get_cpus(c.tep));
	c.cpus = calloc(c.nr_buffers * c.cpu_slots, sizeof(*c.cpus));
	c.page_base = calloc(c.nr_buffers * c.cpu_slots, sizeof(*c.page_base));
	c.buf_names = calloc(c.nr_buffers, sizeof(*c.buf_names));
	c.buf_compressed = calloc(c.nr_buffers, sizeof(*c.buf_compressed));
	if (!handles || !c.cpus || !c.page_base || !c.buf_names || !c.buf_compressed)
		child_die(&c, SWT_ENOMEM, "out of memory");
	c.page_size = l->page_size;
	c.long_size = l->long_size;
	c.big_endian = l->big_endian;
	for (i = 0; i <= n; i++) {
		const char *name = i ? tracecmd_buffer_instance_name(top, i - 1) : "";
		uint32_t idx = (uint32_t)i;

		handles[i] = i ? tracecmd_buffer_instance_handle(top, i - 1) : top;
		if (!name)
			child_die(&c, SWT_EFORMAT, "libtracecmd cannot name instance buffer %d", i - 1);
		if (!handles[i])
			child_die(&c, SWT_EFORMAT, "libtracecmd cannot open buffer '%s' (damaged data)",
				  name);
		tracecmd_set_private(handles[i], (void *)(uintptr_t)idx);
		c.buf_names[i] = name;
		for (size_t b = 0; b < l->nr_buffers; b++) {
			const struct swt_td_buffer *buf = &l->buffers[b];

			if (strcmp(buf->name, name))
				continue;
			c.buf_compressed[i] = (uint8_t)buf->compressed;
			/* a file offset for uncompressed data, a decompressed one otherwise */
			for (size_t k = 0; k < buf->nr_cpus; k++)
				c.page_base[(size_t)i * c.cpu_slots + buf->cpus[k].cpu] =
					buf->compressed ? 0 : buf->cpus[k].offset;
		}
		child_send(&c, MSG_BUFFER, &idx, sizeof(idx), name, strlen(name) + 1);
	}
	crash = getenv("SWT_TEST_DECODER_CRASH");
	if (crash && swt_parse_u64(crash, &c.crash_after))
		child_die(&c, SWT_EUSAGE, "SWT_TEST_DECODER_CRASH='%s' is not a number", crash);
	ret = stream_events(&c, path, l, handles, (size_t)n + 1) ?
	      tracecmd_iterate_events_multi(handles, n + 1, child_record, &c) : 0;
	if (c.failed)
		_exit(1);	/* the parent went away */
	if (ret < 0)
		child_die(&c, SWT_EFORMAT, "libtracecmd failed while reading events");
	for (size_t k = 0; k < c.nr_buffers * c.cpu_slots; k++) {
		struct cpu_report cr = c.cpus[k];

		if (!cr.events)
			continue;
		cr.buffer = (uint32_t)(k / c.cpu_slots);
		cr.cpu = (uint32_t)(k % c.cpu_slots);
		child_send(&c, MSG_CPU, &cr, sizeof(cr), NULL, 0);
	}
	child_send(&c, MSG_DONE, &c.events, sizeof(c.events), NULL, 0);
	swt_formats_release();
	child_flush(&c);
	_exit(c.failed ? 1 : 0);
}

/* ---- parent: messages -> events -------------------------------------- */

struct reader {
	int fd;
	char *buf;
	size_t start, end, cap;
};

/* Next message; returns 1, 0 at EOF, -1 on a torn message. */
static int read_msg(struct reader *r, struct msg_head *h, char **payload)
{
	for (;;) {
		size_t avail = r->end - r->start;

		if (avail >= sizeof(*h)) {
			memcpy(h, r->buf + r->start, sizeof(*h));
			if (avail >= sizeof(*h) + h->len) {
				*payload = r->buf + r->start + sizeof(*h);
				r->start += sizeof(*h) + h->len;
				return 1;
			}
			if (sizeof(*h) + h->len > r->cap) {
				size_t ncap = sizeof(*h) + h->len;
				char *nb = realloc(r->buf, ncap);

				if (!nb)
					return -1;
				r->buf = nb;
				r->cap = ncap;
			}
		}
		if (r->start) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->start = 0;
		}
		{
			ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return r->end ? -1 : 0;
			r->end += (size_t)n;
		}
	}
}

struct name_entry {
	char *system, *name;
};

struct parent_state {
	struct name_entry *names;
	size_t cap_names;
	char **buffers;
	size_t cap_buffers;
	struct cpu_report *cpus;
	size_t nr_cpus, cap_cpus;
	uint64_t done_events;
	int done;
	int child_code;
	char child_msg[600];
};

static void parent_release(struct parent_state *p)
{
	for (size_t i = 0; i < p->cap_names; i++) {
		free(p->names[i].system);
		free(p->names[i].name);
	}
	free(p->names);
	for (size_t i = 0; i < p->cap_buffers; i++)
		free(p->buffers[i]);
	free(p->buffers);
	free(p->cpus);
}

static const char *buffer_label(const char *name)
{
	return name && name[0] ? name : "top level";
}

/* Compare what was decoded with what the file declares. */
static int check_complete(const char *path, const struct swt_td_layout *l,
			  const struct parent_state *p, struct swt_tracedat_stats *stats,
			  struct swt_err *err)
{
	for (size_t b = 0; b < l->nr_buffers; b++) {
		const struct swt_td_buffer *buf = &l->buffers[b];

		for (size_t k = 0; k < buf->nr_cpus; k++) {
			const struct swt_td_cpu *cpu = &buf->cpus[k];
			const struct swt_td_stat *st = swt_td_layout_stat(l, buf->name, (int)cpu->cpu);
			const struct cpu_report *got = NULL;
			uint64_t pages, ps = l->page_size;
			int span_ok = 0, count_ok = 0;

			for (size_t i = 0; i < p->nr_cpus; i++) {
				const char *bn = p->cpus[i].buffer < p->cap_buffers ?
						 p->buffers[p->cpus[i].buffer] : NULL;

				if (bn && !strcmp(bn, buf->name) && p->cpus[i].cpu == cpu->cpu)
					got = &p->cpus[i];
			}
			/*
			 * Counts from the file's text (negative ones mean nothing),
			 * with or without data in the file.  The missed-event
			 * markers on the pages are how the reader learns of the same
			 * overrun (rb_get_reader_page), so only an overrun beyond
			 * them adds; dropped events have no marker.
			 */
			if (st) {
				int64_t marked = got ? got->missed : 0;

				stats->lost = swt_add_sat(stats->lost,
							  swt_add_sat(SWT_MAX(st->overrun - marked, 0),
								      SWT_MAX(st->dropped, 0)));
			}
			if (!cpu->data_size) {
				/*
				 * What it read is not in the file either, but a
				 * trace-cmd extract's top buffer declares events it never
				 * wrote, so only a recording known to have failed
				 * counts those (ingest, from meta.txt's end error).
				 */
				if (st)
					stats->unwritten = swt_add_sat(stats->unwritten,
								       SWT_MAX(st->read_events, 0));
				continue;
			}
			pages = (cpu->data_size + ps - 1) / ps;
			if (got) {
				stats->cpus++;
				if (buf->compressed)
					span_ok = (got->max_off / ps - got->min_off / ps + 1) >= pages;
				else
					span_ok = (got->max_off - cpu->offset) / ps + 1 == pages;
			}
			count_ok = st && st->read_events >= 0 && got &&
				   (uint64_t)st->read_events == got->events;
			if (!got)
				return swt_error(err, SWT_EFORMAT,
						 "'%s': buffer '%s' CPU %u: no events could be decoded from "
						 "its %llu bytes of data at offset %llu", path,
						 buffer_label(buf->name), cpu->cpu,
						 (unsigned long long)cpu->size,
						 (unsigned long long)cpu->offset);
			if (!span_ok && !count_ok)
				return swt_error(err, SWT_EFORMAT,
						 "'%s': buffer '%s' CPU %u: decoding stopped after %llu events, "
						 "before the end of its data (offset %llu, %llu bytes%s): the "
						 "file is damaged", path, buffer_label(buf->name), cpu->cpu,
						 (unsigned long long)got->events,
						 (unsigned long long)cpu->offset,
						 (unsigned long long)cpu->size,
						 buf->compressed ? ", compressed" : "");
			/*
			 * Damaged compressed data can decompress into pages that
			 * still span the whole CPU but hold fewer events, so there
			 * the statistics' count decides when the file has one.
			 * Uncompressed, reaching the last page is enough and a
			 * count that differs is only worth a warning: a
			 * concurrent reader of the ring buffer or a size-capped
			 * recording leave it above what the file holds.
			 */
			/*
			 * Events the tracer took from the ring buffer and the file
			 * does not hold are as lost to the trace as an overrun.
			 */
			if (!count_ok && st && st->read_events > 0 && !buf->compressed &&
			    (uint64_t)st->read_events > got->events)
				stats->lost = swt_add_sat(stats->lost,
							  st->read_events - (int64_t)got->events);
			if (!count_ok && st && st->read_events >= 0 && !buf->compressed &&
			    !stats->warning[0]) {
				snprintf(stats->warning, sizeof(stats->warning),
					 "'%s': buffer '%s' CPU %u: %llu events decoded where the "
					 "file's statistics declare %lld", path,
					 buffer_label(buf->name), cpu->cpu,
					 (unsigned long long)got->events,
					 (long long)st->read_events);
				stats->short_count = 1;
			}
			if (buf->compressed && st && st->read_events >= 0 && !count_ok)
				return swt_error(err, SWT_EFORMAT,
						 "'%s': buffer '%s' CPU %u: %llu events decoded where the "
						 "file's statistics declare %lld: the compressed data at "
						 "offset %llu (%llu bytes) is damaged", path,
						 buffer_label(buf->name), cpu->cpu,
						 (unsigned long long)got->events,
						 (long long)st->read_events,
						 (unsigned long long)cpu->offset,
						 (unsigned long long)cpu->size);
		}
	}
	return 0;
}

static int dispatch(struct parent_state *p, struct msg_head *h, char *payload,
		    swt_event_fn cb, void *ctx, struct swt_err *err, const char *path)
{
	switch (h->type) {
	case MSG_NAME: {
		uint32_t id;
		const char *sys, *name;

		if (h->len < 6)
			break;
		memcpy(&id, payload, 4);
		sys = payload + 4;
		name = sys + strlen(sys) + 1;
		if (swt_grow((void **)&p->names, &p->cap_names, (size_t)id + 1, sizeof(*p->names)))
			return swt_error(err, SWT_ENOMEM, "out of memory");
		free(p->names[id].system);
		free(p->names[id].name);
		p->names[id].system = swt_strdup(sys);
		p->names[id].name = swt_strdup(name);
		break;
	}
	case MSG_EVENT: {
		struct swt_event ev = { 0 };
		struct wire_event w;
		size_t n;

		if (h->len < sizeof(w))
			return swt_error(err, SWT_ECRASH, "'%s': decoder sent a torn event", path);
		memcpy(&w, payload, sizeof(w));
		n = wire_payload(w.type);
		if (h->len < sizeof(w) + n)
			return swt_error(err, SWT_ECRASH, "'%s': decoder sent a torn event", path);
		ev.ts = w.ts;
		ev.cpu = w.cpu;
		ev.pid = w.pid;
		ev.type = w.type;
		ev.name_id = w.name_id;
		memcpy(&ev.block, payload + sizeof(w), n);
		ev.info = h->len > sizeof(w) + n ? payload + sizeof(w) + n : NULL;
		if (ev.type != SWT_EV_LOST) {
			if (ev.name_id >= p->cap_names || !p->names[ev.name_id].name)
				return swt_error(err, SWT_ECRASH, "'%s': decoder sent an unnamed event",
						 path);
			ev.system = p->names[ev.name_id].system;
			ev.name = p->names[ev.name_id].name;
		}
		return cb(ctx, &ev);
	}
	case MSG_COMM: {
		struct swt_event ev = { .type = SWT_EV_COMM, .cpu = -1 };

		if (h->len < 5)
			break;
		memcpy(&ev.pid, payload, 4);
		snprintf(ev.comm, sizeof(ev.comm), "%s", payload + 4);
		return cb(ctx, &ev);
	}
	case MSG_BUFFER: {
		uint32_t idx;

		if (h->len < 5)
			break;
		memcpy(&idx, payload, 4);
		if (swt_grow((void **)&p->buffers, &p->cap_buffers, (size_t)idx + 1, sizeof(char *)))
			return swt_error(err, SWT_ENOMEM, "out of memory");
		free(p->buffers[idx]);
		p->buffers[idx] = swt_strdup(payload + 4);
		break;
	}
	case MSG_CPU:
		if (h->len < sizeof(struct cpu_report))
			break;
		if (swt_grow((void **)&p->cpus, &p->cap_cpus, p->nr_cpus + 1, sizeof(*p->cpus)))
			return swt_error(err, SWT_ENOMEM, "out of memory");
		memcpy(&p->cpus[p->nr_cpus++], payload, sizeof(struct cpu_report));
		break;
	case MSG_DONE:
		if (h->len >= 8)
			memcpy(&p->done_events, payload, 8);
		p->done = 1;
		break;
	case MSG_ERROR:
		if (h->len > 4) {
			int32_t code;

			memcpy(&code, payload, 4);
			p->child_code = code;
			snprintf(p->child_msg, sizeof(p->child_msg), "%s", payload + 4);
		}
		break;
	default:
		return swt_error(err, SWT_ECRASH, "'%s': decoder sent an unknown message", path);
	}
	return 0;
}

int swt_tracedat_decode(const char *path, swt_event_fn cb, void *ctx,
			struct swt_tracedat_stats *stats, struct swt_err *err)
{
	return swt_tracedat_decode_ex(path, cb, ctx, NULL, stats, err);
}

int swt_tracedat_decode_ex(const char *path, swt_event_fn cb, void *ctx,
			   void (*before_fork)(void *ctx), struct swt_tracedat_stats *stats,
			   struct swt_err *err)
{
	struct parent_state p = { 0 };
	struct reader r = { .fd = -1 };
	struct swt_td_layout l;
	struct crash_mark *mark = MAP_FAILED;
	int fds[2], status = 0, ret;
	pid_t pid;

	memset(stats, 0, sizeof(*stats));
	ret = swt_td_layout_read(path, &l, err);
	if (ret)
		return ret;
	stats_from_layout(stats, &l);

	if (pipe2(fds, O_CLOEXEC) < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': pipe: %s", path, strerror(errno));
		goto out_layout;
	}
	mark = mmap(NULL, sizeof(*mark), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (before_fork)
		before_fork(ctx);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': fork: %s", path, strerror(errno));
		close(fds[0]);
		close(fds[1]);
		goto out_layout;
	}
	if (pid == 0) {
		int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		close(fds[0]);
		signal(SIGPIPE, SIG_DFL);
		/*
		 * libtracecmd prints its own diagnostics (perror, fprintf) on
		 * damaged files whatever its log level; the parent reports
		 * every failure in one line, so the child's stderr goes away.
		 */
		if (null_fd >= 0) {
			dup2(null_fd, STDERR_FILENO);
			close(null_fd);
		}
		child_main(path, fds[1], &l, mark == MAP_FAILED ? NULL : mark);
	}
	close(fds[1]);
	r.fd = fds[0];
	r.cap = 1 << 20;
	r.buf = malloc(r.cap);
	if (!r.buf) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_kill;
	}
	for (;;) {
		struct msg_head h;
		char *payload;
		int got = read_msg(&r, &h, &payload);

		if (got == 0)
			break;
		if (got < 0) {
			ret = -SWT_ECRASH;
			break;
		}
		ret = dispatch(&p, &h, payload, cb, ctx, err, path);
		if (ret < 0)
			goto out_kill;
		if (h.type == MSG_EVENT)
			stats->events++;
	}
	close(r.fd);
	r.fd = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	if (WIFSIGNALED(status) && mark != MAP_FAILED && mark->events) {
		ret = swt_error(err, SWT_ECRASH,
				"'%s': libtracecmd crashed (signal %d) after the record at offset %llu%s "
				"of buffer '%s' CPU %d (event %llu): the file is damaged", path,
				WTERMSIG(status), (unsigned long long)mark->offset,
				mark->compressed ? " of the decompressed data" : "",
				mark->buffer[0] ? mark->buffer : "top level", mark->cpu,
				(unsigned long long)mark->events);
		goto out;
	}
	if (WIFSIGNALED(status)) {
		ret = swt_error(err, SWT_ECRASH,
				"'%s': libtracecmd crashed (signal %d) %s: the file is damaged", path,
				WTERMSIG(status), mark != MAP_FAILED ?
				"opening the file, before its first event" : "decoding the file");
		goto out;
	}
	if (p.child_msg[0]) {
		ret = swt_error(err, p.child_code > 0 ? p.child_code : SWT_EFORMAT, "'%s': %s", path,
				p.child_msg);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !p.done || ret < 0) {
		ret = swt_error(err, SWT_ECRASH, "'%s': the decoder stopped unexpectedly after %llu events",
				path, (unsigned long long)stats->events);
		goto out;
	}
	for (size_t i = 0; i < p.nr_cpus; i++)
		stats->lost = swt_add_sat(stats->lost, p.cpus[i].missed);
	stats->buffers = 0;
	for (size_t b = 0; b < l.nr_buffers; b++)
		for (size_t k = 0; k < l.buffers[b].nr_cpus; k++)
			if (l.buffers[b].cpus[k].data_size) {
				stats->buffers++;
				break;
			}
	ret = l.partial ? 0 : check_complete(path, &l, &p, stats, err);
	if (!ret && stats->lost > 0) {
		struct swt_event lost = { .type = SWT_EV_LOST, .cpu = -1, .pid = -1 };
		int64_t missed = 0;

		/* markers already went through; report tracer-side losses on top */
		for (size_t i = 0; i < p.nr_cpus; i++)
			missed = swt_add_sat(missed, p.cpus[i].missed);
		lost.lost.count = stats->lost - missed;
		if (lost.lost.count > 0)
			ret = cb(ctx, &lost);
	}
	goto out;

out_kill:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
out:
	if (r.fd >= 0)
		close(r.fd);
	free(r.buf);
	parent_release(&p);
out_layout:
	if (mark != MAP_FAILED)
		munmap(mark, sizeof(*mark));
	swt_td_layout_release(&l);
	return ret;
}
