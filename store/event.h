/*
 * The decoded trace event: what every decoder (blktrace files, trace.dat,
 * swaptrace captures) hands to ingest, one at a time, in time order per
 * source.  It is deliberately flat and fixed-size so that a decoder running
 * in a child process can stream it through a pipe unchanged.
 */
#ifndef SWT_EVENT_H
#define SWT_EVENT_H

#include <stdint.h>

enum swt_event_type {
	SWT_EV_BLOCK = 1,	/* block layer: blktrace record or block:* tracepoint */
	SWT_EV_FAULT,		/* exceptions:page_fault_user */
	SWT_EV_RECLAIM_WRITE,	/* vmscan:mm_vmscan_write_folio (or _writepage) */
	SWT_EV_SWAP_PROBE,	/* a swap-entry probe (kprobe/fprobe event), see probe_kind */
	SWT_EV_OTHER,		/* any other event: kept by name with its printed fields */
	SWT_EV_COMM,		/* pid -> comm mapping (blktrace notify records) */
	SWT_EV_LOST,		/* lost events on a CPU (count in lost.count) */
};

/*
 * Block actions, named by the letters blkparse prints.  Values are the
 * letters themselves so rows stay readable in sqlite3.
 */
enum swt_block_action {
	SWT_BA_QUEUE = 'Q',
	SWT_BA_BACKMERGE = 'M',
	SWT_BA_FRONTMERGE = 'F',
	SWT_BA_GETRQ = 'G',
	SWT_BA_SLEEPRQ = 'S',
	SWT_BA_INSERT = 'I',
	SWT_BA_ISSUE = 'D',
	SWT_BA_COMPLETE = 'C',
	SWT_BA_REQUEUE = 'R',
	SWT_BA_PLUG = 'P',
	SWT_BA_UNPLUG = 'U',
	SWT_BA_UNPLUG_TIMER = 'T',	/* blkparse prints "UT" */
	SWT_BA_SPLIT = 'X',
	SWT_BA_BOUNCE = 'B',
	SWT_BA_REMAP = 'A',
	SWT_BA_ABORT = 'K',		/* no blkparse letter; rare */
	SWT_BA_DRV_DATA = 'd',		/* driver data; kept, never accounted */
	SWT_BA_RQ_MERGE = 'm',		/* request merged into another (block_rq_merge);
					 * blkparse counts it as a back merge */
	SWT_BA_ZONE_PLUG = 'z',
	SWT_BA_ZONE_UNPLUG = 'Z',
};

enum swt_probe_kind {
	SWT_PROBE_FAULT = 1,	/* do_swap_page: address + swap entry */
	SWT_PROBE_READ,		/* swap_read_folio: swap entry read from a device */
	SWT_PROBE_RA_HIT,	/* readahead-marked page used */
	SWT_PROBE_SWAPOUT,	/* swap entry allocated for a page */
};

#define SWT_RWBS_LEN 10
#define SWT_COMM_LEN 16

struct swt_block_event {
	uint8_t action;		/* enum swt_block_action */
	uint8_t write;		/* blkparse's classification: write category bit */
	uint8_t pc;		/* passthrough (SCSI pc) request: never accounted */
	uint8_t pad;
	int32_t error;
	uint32_t dev;		/* kernel dev_t, major << 20 | minor */
	uint32_t nr_sectors;	/* 512-byte sectors */
	uint64_t sector;
	uint64_t arg;		/* unplug: requests; remap: source sector; split: new sector */
	uint32_t arg_dev;	/* remap: source device */
	char rwbs[SWT_RWBS_LEN];	/* NUL-terminated, e.g. "R", "WS", "FF" */
};

struct swt_fault_event {
	uint64_t address;
	uint64_t ip;
	uint64_t error_code;
};

struct swt_reclaim_event {
	uint64_t pfn;
	int64_t flags;
};

struct swt_probe_event {
	uint32_t kind;		/* enum swt_probe_kind */
	uint32_t swap_type;	/* swap area index (swp_type) */
	uint64_t offset;	/* slot (swp_offset) */
	uint64_t address;	/* virtual address when the probe has one, else 0 */
};

struct swt_lost_event {
	int64_t count;		/* -1 when the number is unknown */
};

/*
 * One event.  ts is nanoseconds on the trace clock (absolute, as recorded);
 * cpu and pid are -1 when unknown.  name points at the bare event name
 * ("block_bio_queue") and system at its system ("block"); both are owned by
 * the decoder and stay valid for the decoder's whole run.  comm, when not
 * empty, is the process name the event itself carries.
 */
struct swt_event {
	uint64_t ts;
	int32_t cpu;
	int32_t pid;
	uint32_t type;		/* enum swt_event_type */
	uint32_t name_id;	/* decoder's id for (system, name); stable per run */
	const char *system;
	const char *name;
	char comm[SWT_COMM_LEN];
	union {
		struct swt_block_event block;
		struct swt_fault_event fault;
		struct swt_reclaim_event reclaim;
		struct swt_probe_event probe;
		struct swt_lost_event lost;
	};
	/* SWT_EV_OTHER: the event's fields as trace-cmd prints them (may be NULL) */
	const char *info;
};

/* Called by a decoder for each event; a negative return stops decoding. */
typedef int (*swt_event_fn)(void *ctx, const struct swt_event *ev);

/* The tracepoint name a blktrace action corresponds to ("block_bio_queue"). */
const char *swt_block_action_event_name(int action);

/* Is the rwbs string of a tracepoint a write for blkparse's accounting? */
int swt_rwbs_is_write(const char *rwbs);

#endif
