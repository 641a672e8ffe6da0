/*
 * blktrace binary decoder.
 *
 * Reads struct blk_io_trace (v7) and blk_io_trace2 (v8) records in either
 * byte order -- the order is detected from the first record's magic, as
 * blkparse does -- from per-CPU files, skipping PDUs (but using the ones
 * that carry data: unplug counts, remap sources, notify process names), and
 * merges the per-CPU streams by time.  Reading is buffered; a record split
 * across a buffer refill is reassembled.  Every malformed input is an error
 * naming the file and the byte offset.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blktrace.h"
#include "util.h"

#define DEFAULT_BUFSIZE (1u << 20)
#define MAX_RECORD (SWT_BLK_V8_SIZE + 65535)
/*
 * The kernel's PDUs are a few bytes (unplug counts, remaps, task names), a
 * message of at most 128 or a SCSI command, plus an 8-byte cgroup id.  A
 * longer one is taken for a damaged length when the record it claims
 * does not fit or is not followed by another: the error then names that
 * record, not the garbage its length points at.
 */
#define PLAUSIBLE_PDU 4096

struct swt_blk_reader {
	char *name;
	int fd;			/* -1: memory */
	const unsigned char *mem;
	size_t mem_len;
	unsigned char *buf;	/* file buffer */
	size_t bufsize, start, end;	/* valid bytes [start, end) */
	uint64_t file_off;	/* file offset of buf[start] */
	int big_endian;		/* -1 until the first record */
	int eof;
	/* the last record's PDU length and where that field is, for errors */
	unsigned prev_pdu_len;
	uint64_t prev_offset, prev_pdu_field;
};

static inline uint16_t get16(const unsigned char *p, int be)
{
	return be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static inline uint32_t get32(const unsigned char *p, int be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline uint64_t get64(const unsigned char *p, int be)
{
	return be ? (uint64_t)get32(p, 1) << 32 | get32(p + 4, 1)
		  : (uint64_t)get32(p + 4, 0) << 32 | get32(p, 0);
}

static inline void put16(unsigned char *p, uint16_t v, int be)
{
	if (be) {
		p[0] = (unsigned char)(v >> 8);
		p[1] = (unsigned char)v;
	} else {
		p[0] = (unsigned char)v;
		p[1] = (unsigned char)(v >> 8);
	}
}

static inline void put32(unsigned char *p, uint32_t v, int be)
{
	for (int i = 0; i < 4; i++)
		p[be ? 3 - i : i] = (unsigned char)(v >> (8 * i));
}

static inline void put64(unsigned char *p, uint64_t v, int be)
{
	for (int i = 0; i < 8; i++)
		p[be ? 7 - i : i] = (unsigned char)(v >> (8 * i));
}

size_t swt_blk_encode(const struct swt_blk_record *rec, int be, unsigned char *out)
{
	if (rec->version == SWT_BLK_V8) {
		memset(out, 0, SWT_BLK_V8_SIZE);
		put32(out, SWT_BLK_MAGIC | SWT_BLK_V8, be);
		put32(out + 4, rec->sequence, be);
		put64(out + 8, rec->time, be);
		put64(out + 16, rec->sector, be);
		put32(out + 24, rec->bytes, be);
		put32(out + 28, rec->pid, be);
		put64(out + 32, rec->action, be);
		put32(out + 40, rec->device, be);
		put32(out + 44, rec->cpu, be);
		put16(out + 48, rec->error, be);
		put16(out + 50, rec->pdu_len, be);
		return SWT_BLK_V8_SIZE;
	}
	put32(out, SWT_BLK_MAGIC | SWT_BLK_V7, be);
	put32(out + 4, rec->sequence, be);
	put64(out + 8, rec->time, be);
	put64(out + 16, rec->sector, be);
	put32(out + 24, rec->bytes, be);
	put32(out + 28, (uint32_t)rec->action, be);
	put32(out + 32, rec->pid, be);
	put32(out + 36, rec->device, be);
	put32(out + 40, rec->cpu, be);
	put16(out + 44, rec->error, be);
	put16(out + 46, rec->pdu_len, be);
	return SWT_BLK_V7_SIZE;
}

static struct swt_blk_reader *reader_alloc(const char *name)
{
	struct swt_blk_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->name = swt_strdup(name);
	if (!r->name) {
		free(r);
		return NULL;
	}
	r->fd = -1;
	r->big_endian = -1;
	return r;
}

int swt_blk_reader_open_file(const char *path, size_t bufsize, struct swt_blk_reader **out,
			     struct swt_err *err)
{
	struct swt_blk_reader *r;

	*out = NULL;
	r = reader_alloc(path);
	if (!r)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		int e = errno;

		swt_blk_reader_free(r);
		return swt_error(err, e == ENOENT ? SWT_ENOENT : SWT_EIO, "'%s': %s", path,
				 strerror(e));
	}
	/* the buffer must hold the largest record: header plus a 64 KiB PDU */
	r->bufsize = bufsize ? bufsize : DEFAULT_BUFSIZE;
	r->buf = malloc(SWT_MAX(r->bufsize, (size_t)MAX_RECORD) + MAX_RECORD);
	if (!r->buf) {
		swt_blk_reader_free(r);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	*out = r;
	return 0;
}

int swt_blk_reader_open_mem(const void *buf, size_t len, const char *name,
			    struct swt_blk_reader **out, struct swt_err *err)
{
	struct swt_blk_reader *r = reader_alloc(name);

	*out = NULL;
	if (!r)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	r->mem = buf;
	r->mem_len = len;
	r->end = len;
	r->eof = 1;
	*out = r;
	return 0;
}

void swt_blk_reader_free(struct swt_blk_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->name);
	free(r);
}

int swt_blk_reader_big_endian(const struct swt_blk_reader *r)
{
	return r->big_endian > 0;
}

/*
 * Make at least `need` bytes available from start; returns the bytes
 * available (less only at end of file) or a negative error.
 */
static long reader_fill(struct swt_blk_reader *r, size_t need, struct swt_err *err)
{
	if (r->fd < 0 || r->end - r->start >= need || r->eof)
		return (long)(r->end - r->start);
	/* move the partial record to the front, then read more behind it */
	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->file_off += r->start;
		r->start = 0;
	}
	while (r->end < need) {
		size_t room = SWT_MAX(r->bufsize, need) - r->end;
		ssize_t n = read(r->fd, r->buf + r->end, room);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return swt_error(err, SWT_EIO, "'%s': read error at offset %llu: %s", r->name,
					 (unsigned long long)(r->file_off + r->end), strerror(errno));
		}
		if (n == 0) {
			r->eof = 1;
			break;
		}
		r->end += (size_t)n;
	}
	return (long)(r->end - r->start);
}

static const unsigned char *reader_data(struct swt_blk_reader *r)
{
	return (r->fd < 0 ? r->mem : r->buf) + r->start;
}

static uint64_t reader_offset(const struct swt_blk_reader *r)
{
	return r->file_off + r->start;
}

int swt_blk_reader_next(struct swt_blk_reader *r, struct swt_blk_record *rec,
			struct swt_err *err)
{
	const unsigned char *p;
	uint32_t magic;
	size_t size, pdu_field;
	long avail;
	int be;

	avail = reader_fill(r, SWT_BLK_V7_SIZE, err);
	if (avail < 0)
		return (int)avail;
	if (avail == 0)
		return 0;
	if (avail < 4)
		return swt_error(err, SWT_EFORMAT, "'%s': truncated record at offset %llu", r->name,
				 (unsigned long long)reader_offset(r));
	p = reader_data(r);
	if (r->big_endian < 0) {
		/* the magic's byte order is the file's, as blkparse decides it */
		if ((get32(p, 0) & SWT_BLK_MAGIC_MASK) == SWT_BLK_MAGIC)
			r->big_endian = 0;
		else if ((get32(p, 1) & SWT_BLK_MAGIC_MASK) == SWT_BLK_MAGIC)
			r->big_endian = 1;
		else
			return swt_error(err, SWT_EFORMAT,
					 "'%s': not a blktrace file (bad magic 0x%08x at offset %llu)",
					 r->name, get32(p, 0), (unsigned long long)reader_offset(r));
	}
	be = r->big_endian;
	magic = get32(p, be);
	if ((magic & SWT_BLK_MAGIC_MASK) != SWT_BLK_MAGIC) {
		if (r->prev_pdu_len > PLAUSIBLE_PDU)
			return swt_error(err, SWT_EFORMAT, "'%s': bad PDU length %u at offset %llu "
					 "(record at offset %llu): no record follows at offset %llu",
					 r->name, r->prev_pdu_len,
					 (unsigned long long)r->prev_pdu_field,
					 (unsigned long long)r->prev_offset,
					 (unsigned long long)reader_offset(r));
		return swt_error(err, SWT_EFORMAT, "'%s': bad record magic 0x%08x at offset %llu",
				 r->name, magic, (unsigned long long)reader_offset(r));
	}
	rec->version = (int)(magic & 0xff);
	if (rec->version == SWT_BLK_V7)
		size = SWT_BLK_V7_SIZE;
	else if (rec->version == SWT_BLK_V8)
		size = SWT_BLK_V8_SIZE;
	else
		return swt_error(err, SWT_EVERSION,
				 "'%s': unsupported blktrace record version %d at offset %llu",
				 r->name, rec->version, (unsigned long long)reader_offset(r));
	if ((size_t)avail < size) {
		avail = reader_fill(r, size, err);
		if (avail < 0)
			return (int)avail;
		if ((size_t)avail < size)
			return swt_error(err, SWT_EFORMAT, "'%s': truncated record at offset %llu",
					 r->name, (unsigned long long)reader_offset(r));
		p = reader_data(r);
	}
	rec->offset = reader_offset(r);
	rec->sequence = get32(p + 4, be);
	rec->time = get64(p + 8, be);
	rec->sector = get64(p + 16, be);
	rec->bytes = get32(p + 24, be);
	pdu_field = rec->version == SWT_BLK_V7 ? 46 : 50;
	if (rec->version == SWT_BLK_V7) {
		rec->action = get32(p + 28, be);
		rec->pid = get32(p + 32, be);
		rec->device = get32(p + 36, be);
		rec->cpu = get32(p + 40, be);
		rec->error = get16(p + 44, be);
		rec->pdu_len = get16(p + pdu_field, be);
	} else {
		rec->pid = get32(p + 28, be);
		rec->action = get64(p + 32, be);
		rec->device = get32(p + 40, be);
		rec->cpu = get32(p + 44, be);
		rec->error = get16(p + 48, be);
		rec->pdu_len = get16(p + pdu_field, be);
	}
	if (rec->pdu_len) {
		if ((size_t)avail < size + rec->pdu_len) {
			avail = reader_fill(r, size + rec->pdu_len, err);
			if (avail < 0)
				return (int)avail;
			if ((size_t)avail < size + rec->pdu_len && rec->pdu_len > PLAUSIBLE_PDU)
				return swt_error(err, SWT_EFORMAT,
						 "'%s': bad PDU length %u at offset %llu (record at "
						 "offset %llu): runs past the end of the file",
						 r->name, rec->pdu_len,
						 (unsigned long long)(rec->offset + pdu_field),
						 (unsigned long long)rec->offset);
			if ((size_t)avail < size + rec->pdu_len)
				return swt_error(err, SWT_EFORMAT,
						 "'%s': truncated record at offset %llu (PDU of %u bytes)",
						 r->name, (unsigned long long)reader_offset(r),
						 rec->pdu_len);
			p = reader_data(r);
		}
		rec->pdu = p + size;
	} else {
		rec->pdu = NULL;
	}
	r->prev_pdu_len = rec->pdu_len;
	r->prev_offset = rec->offset;
	r->prev_pdu_field = rec->offset + pdu_field;
	r->start += size + rec->pdu_len;
	return 1;
}

static void fill_rwbs(const struct swt_blk_record *rec, uint64_t cat, char *rwbs)
{
	int i = 0;

	if (cat & SWT_BLK_TC_FLUSH)
		rwbs[i++] = 'F';
	if (cat & SWT_BLK_TC_DISCARD)
		rwbs[i++] = 'D';
	else if (cat & (SWT_BLK_TC_ZONE_APPEND | SWT_BLK_TC_ZONE_RESET | SWT_BLK_TC_ZONE_RESET_ALL |
			SWT_BLK_TC_ZONE_FINISH | SWT_BLK_TC_ZONE_OPEN | SWT_BLK_TC_ZONE_CLOSE)) {
		rwbs[i++] = 'Z';
		rwbs[i++] = cat & SWT_BLK_TC_ZONE_APPEND ? 'A' : cat & SWT_BLK_TC_ZONE_FINISH ? 'F' :
			    cat & SWT_BLK_TC_ZONE_OPEN ? 'O' : cat & SWT_BLK_TC_ZONE_CLOSE ? 'C' : 'R';
	} else if (cat & SWT_BLK_TC_WRITE)
		rwbs[i++] = 'W';
	else if (rec->bytes)
		rwbs[i++] = 'R';
	else
		rwbs[i++] = 'N';
	if (cat & SWT_BLK_TC_FUA)
		rwbs[i++] = 'F';
	if (cat & SWT_BLK_TC_AHEAD)
		rwbs[i++] = 'A';
	if (cat & SWT_BLK_TC_SYNC)
		rwbs[i++] = 'S';
	if (cat & SWT_BLK_TC_META)
		rwbs[i++] = 'M';
	rwbs[i] = '\0';
}

static const unsigned char *payload(const struct swt_blk_record *rec, int cgroup, size_t *len)
{
	size_t skip = cgroup ? 8 : 0;

	if (rec->pdu_len < skip) {
		*len = 0;
		return NULL;
	}
	*len = rec->pdu_len - skip;
	return rec->pdu + skip;
}

int swt_blk_record_to_event(const struct swt_blk_record *rec, struct swt_event *ev)
{
	uint64_t cat = rec->action >> 16;
	unsigned act = (unsigned)(rec->action & 0xffff);
	int cgroup = !!(act & SWT_BLK_TA_CGROUP);
	struct swt_block_event *b = &ev->block;
	const unsigned char *pdu;
	size_t pdu_len;
	int letter;

	act &= ~(unsigned)SWT_BLK_TA_CGROUP;
	memset(ev, 0, sizeof(*ev));
	ev->ts = rec->time;
	ev->cpu = (int32_t)rec->cpu;
	ev->pid = (int32_t)rec->pid;
	pdu = payload(rec, cgroup, &pdu_len);

	if (cat & SWT_BLK_TC_NOTIFY) {
		if (act == SWT_BLK_TN_PROCESS && pdu_len) {
			ev->type = SWT_EV_COMM;
			snprintf(ev->comm, sizeof(ev->comm), "%.*s", (int)SWT_MIN(pdu_len, 15),
				 (const char *)pdu);
			return 1;
		}
		return 0;	/* timestamps and messages carry no event */
	}
	switch (act) {
	case SWT_BLK_TA_QUEUE: letter = SWT_BA_QUEUE; break;
	case SWT_BLK_TA_BACKMERGE: letter = SWT_BA_BACKMERGE; break;
	case SWT_BLK_TA_FRONTMERGE: letter = SWT_BA_FRONTMERGE; break;
	case SWT_BLK_TA_GETRQ: letter = SWT_BA_GETRQ; break;
	case SWT_BLK_TA_SLEEPRQ: letter = SWT_BA_SLEEPRQ; break;
	case SWT_BLK_TA_REQUEUE: letter = SWT_BA_REQUEUE; break;
	case SWT_BLK_TA_ISSUE: letter = SWT_BA_ISSUE; break;
	case SWT_BLK_TA_COMPLETE: letter = SWT_BA_COMPLETE; break;
	case SWT_BLK_TA_PLUG: letter = SWT_BA_PLUG; break;
	case SWT_BLK_TA_UNPLUG_IO: letter = SWT_BA_UNPLUG; break;
	case SWT_BLK_TA_UNPLUG_TIMER: letter = SWT_BA_UNPLUG_TIMER; break;
	case SWT_BLK_TA_INSERT: letter = SWT_BA_INSERT; break;
	case SWT_BLK_TA_SPLIT: letter = SWT_BA_SPLIT; break;
	case SWT_BLK_TA_BOUNCE: letter = SWT_BA_BOUNCE; break;
	case SWT_BLK_TA_REMAP: letter = SWT_BA_REMAP; break;
	case SWT_BLK_TA_ABORT: letter = SWT_BA_ABORT; break;
	case SWT_BLK_TA_DRV_DATA: letter = SWT_BA_DRV_DATA; break;
	case SWT_BLK_TA_ZONE_PLUG: letter = SWT_BA_ZONE_PLUG; break;
	case SWT_BLK_TA_ZONE_UNPLUG: letter = SWT_BA_ZONE_UNPLUG; break;
	default:
		return -SWT_EFORMAT;
	}
	ev->type = SWT_EV_BLOCK;
	ev->system = "block";
	ev->name = swt_block_action_event_name(letter);
	ev->name_id = (uint32_t)letter;
	b->action = (uint8_t)letter;
	b->write = !!(cat & SWT_BLK_TC_WRITE);
	b->pc = !!(cat & SWT_BLK_TC_PC);
	b->error = rec->error;
	b->dev = rec->device;
	b->sector = rec->sector;
	b->nr_sectors = rec->bytes >> 9;
	fill_rwbs(rec, cat, b->rwbs);
	switch (letter) {
	case SWT_BA_UNPLUG:
	case SWT_BA_UNPLUG_TIMER:
	case SWT_BA_SPLIT:
		/* a big-endian u64 in every file, as the kernel writes it */
		if (pdu_len >= 8)
			b->arg = get64(pdu, 1);
		break;
	case SWT_BA_REMAP:
		/* struct blk_io_trace_remap: __be32 device_from, device_to; __be64 sector_from */
		if (pdu_len >= 16) {
			b->arg_dev = get32(pdu, 1);
			b->arg = get64(pdu + 8, 1);
		}
		break;
	default:
		break;
	}
	return 1;
}

int swt_blktrace_probe(const char *path)
{
	unsigned char head[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = 0;

	if (fd < 0)
		return 0;
	if (swt_read_full(fd, head, 4) == 4)
		ok = (get32(head, 0) & SWT_BLK_MAGIC_MASK) == SWT_BLK_MAGIC ||
		     (get32(head, 1) & SWT_BLK_MAGIC_MASK) == SWT_BLK_MAGIC;
	close(fd);
	return ok;
}

void swt_blktrace_paths_free(char **paths)
{
	if (!paths)
		return;
	for (char **p = paths; *p; p++)
		free(*p);
	free(paths);
}

size_t swt_blktrace_set_name_len(const char *path)
{
	const char *base = swt_basename(path), *dot = NULL, *p;
	size_t digits;

	/* the last ".blktrace." of the file name: NAME may hold one itself */
	for (p = base; (p = strstr(p, ".blktrace.")); p++)
		dot = p;
	if (!dot || dot == base)
		return 0;
	digits = strspn(dot + 10, "0123456789");
	if (!digits || dot[10 + digits])
		return 0;
	return (size_t)(dot - path);
}

/*
 * A file NAME.blktrace.N of the set with N above first_missing, -1 none:
 * expanding NAME stops at the first CPU number missing (as blkparse does),
 * which would leave the files past a lost one out without a word.
 */
static long set_file_beyond(const char *name, unsigned first_missing)
{
	char *dir = swt_dirname(name);
	const char *base = swt_basename(name);
	size_t blen = strlen(base);
	struct dirent *de;
	long found = -1;
	DIR *d;

	if (!dir)
		return -1;
	d = opendir(dir);
	free(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		unsigned long cpu;

		/* NAME.blktrace.N, this NAME */
		if (swt_blktrace_set_name_len(de->d_name) != blen || strncmp(de->d_name, base, blen))
			continue;
		cpu = strtoul(de->d_name + blen + 10, NULL, 10);
		if (cpu > first_missing && (found < 0 || cpu < (unsigned long)found))
			found = (long)cpu;
	}
	closedir(d);
	return found;
}

int swt_blktrace_expand(const char *input, char ***paths, size_t *n, struct swt_err *err)
{
	char **list = NULL;
	size_t cap = 0, count = 0;
	struct stat sb;

	*paths = NULL;
	*n = 0;
	if (stat(input, &sb) == 0 && S_ISREG(sb.st_mode)) {
		list = calloc(2, sizeof(*list));
		if (!list || !(list[0] = swt_strdup(input))) {
			free(list);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		*paths = list;
		*n = 1;
		return 0;
	}
	/* NAME.blktrace.0, .1, ... stop at the first CPU number missing */
	for (unsigned cpu = 0;; cpu++) {
		size_t len = strlen(input) + 32;
		char *p = malloc(len);

		if (!p)
			goto nomem;
		snprintf(p, len, "%s.blktrace.%u", input, cpu);
		if (stat(p, &sb) != 0) {
			free(p);
			break;
		}
		if (swt_grow((void **)&list, &cap, count + 2, sizeof(*list))) {
			free(p);
			goto nomem;
		}
		list[count++] = p;
		list[count] = NULL;
	}
	if (!count)
		return swt_error(err, SWT_ENOENT, "'%s': no such file, and no '%s.blktrace.0'", input,
				 input);
	{
		long beyond = set_file_beyond(input, (unsigned)count);

		if (beyond >= 0) {
			swt_blktrace_paths_free(list);
			return swt_error(err, SWT_EFORMAT,
					 "'%s.blktrace.%zu' is missing but '%s.blktrace.%ld' is there: "
					 "a CPU's file of the set was lost or renamed; give the files "
					 "one by one to read the others", input, count, input, beyond);
		}
	}
	*paths = list;
	*n = count;
	return 0;
nomem:
	swt_blktrace_paths_free(list);
	return swt_error(err, SWT_ENOMEM, "out of memory");
}

/* One per-CPU stream with its next event ready. */
struct stream {
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_event ev;
	int have;		/* ev holds the next event */
	int64_t last_seq;
	int64_t jump_from;	/* last_seq before a forward jump not yet confirmed, -1 */
	const char *path;
};

/*
 * Count the sequence gap a record's number shows.  A gap is events the
 * kernel lost; a number that goes back is this record's own number
 * damaged, not a restart: it stands for the next one (blkparse counts no
 * skip for it either).  A number damaged upwards looks like a gap until
 * the next record goes on from before it: so a jump is counted only once
 * the next record (or the end of the file) confirms it -- a single damaged
 * number claimed four billion lost events.
 */
static void note_sequence(struct stream *s, uint32_t seq, struct swt_blktrace_stats *stats)
{
	if (s->jump_from >= 0) {
		if (seq > s->last_seq)
			stats->lost = swt_add_sat(stats->lost, s->last_seq - s->jump_from - 1);
		else
			s->last_seq = s->jump_from + 1;	/* the jumped record's, damaged */
		s->jump_from = -1;
	}
	if (s->last_seq >= 0 && seq > s->last_seq + 1)
		s->jump_from = s->last_seq;
	if (s->last_seq >= 0 && seq <= s->last_seq)
		s->last_seq++;
	else
		s->last_seq = seq;
}

/* Advance a stream to its next record that carries an event. */
static int stream_advance(struct stream *s, struct swt_blktrace_stats *stats,
			  swt_event_fn cb, void *ctx, struct swt_err *err)
{
	for (;;) {
		int ret = swt_blk_reader_next(s->r, &s->rec, err);

		if (ret <= 0) {
			/* a jump in the last record: nothing after it says otherwise */
			if (!ret && s->jump_from >= 0)
				stats->lost = swt_add_sat(stats->lost, s->last_seq - s->jump_from - 1);
			s->jump_from = -1;
			s->have = 0;
			return ret;
		}
		stats->records++;
		if (!stats->version)
			stats->version = s->rec.version;
		/*
		 * Times are stored as SQLite's signed 64-bit integers: one past
		 * 2^63 - 1 ns (292 years, no clock's) went in negative, 2^63
		 * itself as NULL, and the capture's span with it
		 */
		if (s->rec.time > (uint64_t)INT64_MAX)
			return swt_error(err, SWT_EFORMAT,
					 "'%s': the record at offset %llu has time %llu ns, past "
					 "2^63 - 1 (292 years): the record is damaged", s->path,
					 (unsigned long long)s->rec.offset,
					 (unsigned long long)s->rec.time);
		note_sequence(s, s->rec.sequence, stats);
		ret = swt_blk_record_to_event(&s->rec, &s->ev);
		if (ret < 0)
			return swt_error(err, SWT_EFORMAT,
					 "'%s': unknown blktrace action 0x%llx at offset %llu", s->path,
					 (unsigned long long)s->rec.action,
					 (unsigned long long)s->rec.offset);
		if (ret == 0)
			continue;
		if (s->ev.type == SWT_EV_COMM) {
			/* process names apply from now on: hand them over at once */
			ret = cb(ctx, &s->ev);
			if (ret < 0)
				return ret;
			continue;
		}
		s->have = 1;
		return 1;
	}
}

int swt_blktrace_decode(char *const *paths, size_t n, size_t bufsize, swt_event_fn cb, void *ctx,
			struct swt_blktrace_stats *stats, struct swt_err *err)
{
	struct stream *streams = calloc(n ? n : 1, sizeof(*streams));
	size_t i;
	int ret = 0, seen_big = 0, seen_little = 0;

	memset(stats, 0, sizeof(*stats));
	if (!streams)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		streams[i].path = paths[i];
		streams[i].last_seq = streams[i].jump_from = -1;
		ret = swt_blk_reader_open_file(paths[i], bufsize, &streams[i].r, err);
		if (ret)
			goto out;
		ret = stream_advance(&streams[i], stats, cb, ctx, err);
		if (ret < 0)
			goto out;
		/* an idle CPU's empty file has no order and is no CPU with data */
		if (streams[i].r->big_endian > 0)
			seen_big = 1;
		else if (streams[i].r->big_endian == 0)
			seen_little = 1;
		stats->cpus += streams[i].r->big_endian >= 0;
	}
	stats->big_endian = seen_big;
	stats->mixed_endian = seen_big && seen_little;
	for (;;) {
		struct stream *next = NULL;

		/* few CPUs: a linear scan beats a heap's bookkeeping */
		for (i = 0; i < n; i++)
			if (streams[i].have && (!next || streams[i].ev.ts < next->ev.ts))
				next = &streams[i];
		if (!next)
			break;
		ret = cb(ctx, &next->ev);
		if (ret < 0)
			goto out;
		ret = stream_advance(next, stats, cb, ctx, err);
		if (ret < 0)
			goto out;
	}
	ret = 0;
out:
	for (i = 0; i < n; i++)
		swt_blk_reader_free(streams[i].r);
	free(streams);
	return ret;
}
