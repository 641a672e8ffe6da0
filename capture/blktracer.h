/*
 * --blktrace: the kernel's `blk` tracer, written as blktrace files.
 *
 * Where debugfs blktrace is locked down, the ftrace `blk` tracer still
 * works, but only in the top-level buffer and without an event format:
 * with options/bin its per-CPU trace_pipe yields, per record, the ftrace
 * context (u32 pid, u32 cpu, u64 ts) followed by the kernel's struct
 * blk_io_trace (+ PDU), its sequence zero and its time the ring-buffer
 * timestamp.  A lost-events notice comes as the text line
 * "CPU:N [LOST M EVENTS]".  The converter strips the context, numbers each
 * CPU's records 1, 2, ... as blktrace's relay does (skipping M on a loss,
 * so blkparse and ingest see the gap), keeps only the traced devices, and
 * writes standard per-CPU files NAME.blktrace.N that blkparse reads.
 *
 * The top-level buffer is shared by the whole host, so a session takes an
 * exclusive lock first and refuses to start while the buffer is in use
 * (another tracer or events enabled there).
 */
#ifndef SWT_CAPTURE_BLKTRACER_H
#define SWT_CAPTURE_BLKTRACER_H

#include <stddef.h>
#include <stdint.h>

#include "knobs.h"
#include "swaptrace/error.h"

/* Per-CPU conversion state. */
struct swt_blktracer_conv {
	uint32_t seq;		/* last sequence number written */
	int64_t lost;		/* events the kernel reported lost, and records not written */
	uint64_t records;	/* records written */
	uint64_t foreign;	/* records skipped: other devices, other tracers */
};

/*
 * Convert complete input (bin-mode trace_pipe bytes of one CPU) into
 * blktrace records appended to out (room for len bytes suffices: output
 * never grows).  Records of devices not in devs are dropped.  Returns the
 * bytes consumed; an incomplete record at the end is left for the next
 * call.  Returns -SWT_EFORMAT when the input is not blk tracer output.
 * Pure.
 */
long swt_blktracer_convert(struct swt_blktracer_conv *cv, unsigned cpu, const unsigned char *in,
			   size_t len, const uint32_t *devs, size_t ndev, unsigned char *out,
			   size_t *out_len);

struct swt_blktracer;

struct swt_blktracer_opts {
	const char *tracing_dir;
	const char *lock_path;	/* e.g. /run/swaptrace-blktrace.lock */
	const uint32_t *devs;	/* dev_t of each traced disk */
	const char *const *disks;	/* its /sys/block name */
	size_t ndev;
	unsigned ncpus;
	unsigned buffer_kb;	/* per CPU, top-level buffer (grown, never shrunk) */
	const char *out_prefix;	/* files OUT_PREFIX.blktrace.N */
	/*
	 * The top-level trace_clock blk records are to carry (the task
	 * instance's), set under the lock once the top level is found idle;
	 * NULL: as it is
	 */
	const char *trace_clock;
};

/*
 * Lock, check, configure (every change recorded in knobs) and open the
 * per-CPU pipes and output files (0600).  On failure nothing stays open,
 * and knobs are restored (all of them: the caller is giving up) before
 * the lock is released, so that no other capture takes the top level
 * with this one's settings still on it; what could not be put back stays
 * changed in knobs, for the caller's restore to retry and report.
 */
int swt_blktracer_create(const struct swt_blktracer_opts *o, struct swt_knobs *knobs,
			 struct swt_blktracer **out, struct swt_err *err);
/* Convert whatever the pipes hold now; 0 or an error (a write failure). */
int swt_blktracer_drain(struct swt_blktracer *s, uint64_t *bytes, struct swt_err *err);
/*
 * Stop tracing the devices, drain the rest and close the pipes, so the
 * tracer can be switched back; the knobs themselves are restored by the
 * caller.
 */
int swt_blktracer_stop(struct swt_blktracer *s, struct swt_knobs *knobs, uint64_t *bytes,
		       struct swt_err *err);
/* Per-CPU state (lost events, records) after stop. */
const struct swt_blktracer_conv *swt_blktracer_cpu(const struct swt_blktracer *s, unsigned cpu);
/* Close everything and release the lock.  NULL is a no-op. */
void swt_blktracer_destroy(struct swt_blktracer *s);
/*
 * Grow the top-level ring buffer of the tracefs at dir to kb per CPU
 * (never shrink it), through knobs; create() does it (exposed for tests).
 */
/*
 * The smallest per-CPU buffer of the top-level ring buffer, in KiB, as the
 * kernel sized it: at least what was asked, more when someone had it
 * larger.  0 when it cannot be read.
 */
unsigned swt_blktracer_buffer_kb(const char *dir, unsigned ncpus);
int swt_blktracer_grow_buffers(struct swt_knobs *k, const char *dir, unsigned ncpus, unsigned kb,
			       struct swt_err *err);

#endif
