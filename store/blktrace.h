/*
 * blktrace binary files: the record layouts (struct blk_io_trace, version 7,
 * 48 bytes; struct blk_io_trace2, version 8, 64 bytes, Linux 6.19) in either
 * byte order, a reader that decodes them from a file or a memory buffer, and
 * a decoder that merges the per-CPU files of a trace in time order.
 */
#ifndef SWT_BLKTRACE_H
#define SWT_BLKTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "swaptrace/error.h"

#define SWT_BLK_MAGIC		0x65617400u
#define SWT_BLK_MAGIC_MASK	0xffffff00u
#define SWT_BLK_V7		7
#define SWT_BLK_V8		8
#define SWT_BLK_V7_SIZE		48
#define SWT_BLK_V8_SIZE		64

/* Category bits (action >> 16) and basic actions (action & 0xff). */
enum {
	SWT_BLK_TC_READ = 1 << 0,
	SWT_BLK_TC_WRITE = 1 << 1,
	SWT_BLK_TC_FLUSH = 1 << 2,
	SWT_BLK_TC_SYNC = 1 << 3,
	SWT_BLK_TC_QUEUE = 1 << 4,
	SWT_BLK_TC_REQUEUE = 1 << 5,
	SWT_BLK_TC_ISSUE = 1 << 6,
	SWT_BLK_TC_COMPLETE = 1 << 7,
	SWT_BLK_TC_FS = 1 << 8,
	SWT_BLK_TC_PC = 1 << 9,
	SWT_BLK_TC_NOTIFY = 1 << 10,
	SWT_BLK_TC_AHEAD = 1 << 11,
	SWT_BLK_TC_META = 1 << 12,
	SWT_BLK_TC_DISCARD = 1 << 13,
	SWT_BLK_TC_DRV_DATA = 1 << 14,
	SWT_BLK_TC_FUA = 1 << 15,
	/* version 8 only */
	SWT_BLK_TC_ZONE_APPEND = 1 << 16,
	SWT_BLK_TC_ZONE_RESET = 1 << 17,
	SWT_BLK_TC_ZONE_RESET_ALL = 1 << 18,
	SWT_BLK_TC_ZONE_FINISH = 1 << 19,
	SWT_BLK_TC_ZONE_OPEN = 1 << 20,
	SWT_BLK_TC_ZONE_CLOSE = 1 << 21,
	SWT_BLK_TC_WRITE_ZEROES = 1 << 22,
};

enum {
	SWT_BLK_TA_QUEUE = 1, SWT_BLK_TA_BACKMERGE, SWT_BLK_TA_FRONTMERGE, SWT_BLK_TA_GETRQ,
	SWT_BLK_TA_SLEEPRQ, SWT_BLK_TA_REQUEUE, SWT_BLK_TA_ISSUE, SWT_BLK_TA_COMPLETE,
	SWT_BLK_TA_PLUG, SWT_BLK_TA_UNPLUG_IO, SWT_BLK_TA_UNPLUG_TIMER, SWT_BLK_TA_INSERT,
	SWT_BLK_TA_SPLIT, SWT_BLK_TA_BOUNCE, SWT_BLK_TA_REMAP, SWT_BLK_TA_ABORT,
	SWT_BLK_TA_DRV_DATA, SWT_BLK_TA_ZONE_PLUG, SWT_BLK_TA_ZONE_UNPLUG,
	SWT_BLK_TA_CGROUP = 1 << 8,	/* flag: an 8-byte cgroup id leads the PDU */
};

enum { SWT_BLK_TN_PROCESS = 0, SWT_BLK_TN_TIMESTAMP, SWT_BLK_TN_MESSAGE };

/* One record as decoded, in host byte order. */
struct swt_blk_record {
	int version;
	uint32_t sequence;
	uint64_t time, sector;
	uint32_t bytes, pid, device, cpu;
	uint64_t action;	/* v7 values widened */
	uint16_t error, pdu_len;
	const unsigned char *pdu;	/* pdu_len bytes, valid until the next read */
	uint64_t offset;	/* of the record in its file */
};

/*
 * Encode a record (without PDU) in the given byte order; returns its size.
 * Used by capture (writing blktrace files) and by tests.
 */
size_t swt_blk_encode(const struct swt_blk_record *rec, int big_endian, unsigned char *out);

struct swt_blk_reader;

/*
 * Open a reader on a file (bufsize: read granularity, 0 for the default)
 * or on a memory buffer (not copied; must outlive the reader).  name is
 * used in error messages.
 */
int swt_blk_reader_open_file(const char *path, size_t bufsize, struct swt_blk_reader **out,
			     struct swt_err *err);
int swt_blk_reader_open_mem(const void *buf, size_t len, const char *name,
			    struct swt_blk_reader **out, struct swt_err *err);
void swt_blk_reader_free(struct swt_blk_reader *r);

/* Next raw record: 1, 0 at a clean end of file, or a negative error. */
int swt_blk_reader_next(struct swt_blk_reader *r, struct swt_blk_record *rec,
			struct swt_err *err);
int swt_blk_reader_big_endian(const struct swt_blk_reader *r);

/* Translate a record into an event; 0 when the record carries no event. */
int swt_blk_record_to_event(const struct swt_blk_record *rec, struct swt_event *ev);

/*
 * Expand an input into its per-CPU files: an existing file stands for
 * itself; NAME stands for NAME.blktrace.0, .1, ... (as blkparse -i NAME).
 * *paths is a NULL-terminated array; free with swt_blktrace_paths_free().
 */
int swt_blktrace_expand(const char *input, char ***paths, size_t *n, struct swt_err *err);
void swt_blktrace_paths_free(char **paths);

/*
 * A per-CPU file named NAME.blktrace.N (N a CPU number): the length of
 * NAME in path, the blktrace set it belongs to; 0 for any other name.
 */
size_t swt_blktrace_set_name_len(const char *path);

/* Is this file a blktrace file (by its first record's magic)? */
int swt_blktrace_probe(const char *path);

struct swt_blktrace_stats {
	int version;
	int big_endian;		/* some file is big-endian */
	int mixed_endian;	/* and some other little-endian */
	int cpus;		/* files with records */
	uint64_t records;
	int64_t lost;		/* sequence gaps */
};

/*
 * Decode per-CPU files merged in time order, calling cb per event.
 * bufsize as for swt_blk_reader_open_file().
 */
int swt_blktrace_decode(char *const *paths, size_t n, size_t bufsize, swt_event_fn cb, void *ctx,
			struct swt_blktrace_stats *stats, struct swt_err *err);

#endif
