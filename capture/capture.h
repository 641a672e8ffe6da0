/*
 * swaptrace capture: record what swap does on a live host, cheaply and
 * without leaving a trace of the recording behind.
 *
 * A capture directory holds trace.dat (trace-cmd format, version 6: the
 * per-CPU ring-buffer pages of private tracefs instances, streamed to disk
 * with splice while recording and assembled with the saved event formats
 * at the end), meta.txt (host facts: swap layout, vmstat counters, lost
 * events), the target's memory maps, and with --blktrace blktrace per-CPU
 * files in blk/.  Layout and metadata format: docs/capture-format.md.
 *
 * Lifecycle (rtla style): swt_capture_create() configures tracing and
 * starts recording (and the command, if any); swt_capture_run() records
 * until the command exits, the duration passes, a stop is requested or an
 * error happens, then stops recording and restores every tracefs setting
 * it changed; swt_capture_finish() writes the capture files;
 * swt_capture_destroy() releases everything and restores whatever is still
 * changed, so it is safe on every exit path.
 */
#ifndef SWT_CAPTURE_H
#define SWT_CAPTURE_H

#include <signal.h>
#include <stdint.h>

#include "swaptrace/error.h"

struct swt_capture;

/* Progress notes and warnings for the user (the CLI prints them); may be NULL. */
typedef void (*swt_capture_note_fn)(void *ctx, int warning, const char *msg);

struct swt_capture_opts {
	const char *out_dir;	/* created 0700 if missing; must be empty */
	double duration_s;	/* stop recording after this long; 0: no limit */
	int pid;		/* follow this process (and its children); 0: none */
	const char *cgroup;	/* follow the tasks of this cgroup (v1 or v2); NULL: none */
	char *const *argv;	/* run this command and follow it; NULL: none */
	int blktrace;		/* block I/O through the kernel's blk tracer, not tracepoints */
	unsigned buffer_kb;	/* ring buffer per CPU and instance; 0: sized for the rate */
	const char *tracing_dir;	/* NULL: the mounted tracefs (mounted if needed) */
	swt_capture_note_fn note;
	void *note_ctx;
};

/*
 * Stop requests from a signal handler: the handler only stores the signal
 * number and counts (async-signal-safe).  A first request on a capture with
 * a command is forwarded to the command and recording goes on until it
 * exits; a second one kills the command and stops at once.
 */
struct swt_capture_stop {
	volatile sig_atomic_t signo;
	volatile sig_atomic_t count;
	/*
	 * The latest came from the terminal (si_code SI_KERNEL: Ctrl-C),
	 * which gave it to swaptrace's whole process group, the command
	 * included: passed on only to tasks outside that group
	 */
	volatile sig_atomic_t from_terminal;
};

enum swt_capture_end {
	SWT_CAPTURE_END_COMMAND = 1,	/* the command exited */
	SWT_CAPTURE_END_DURATION,	/* --duration elapsed */
	SWT_CAPTURE_END_SIGNAL,		/* stopped by a signal */
	SWT_CAPTURE_END_TARGET,		/* the followed process exited, or its cgroup was removed */
	SWT_CAPTURE_END_ERROR,		/* an error stopped the recording */
};

struct swt_capture_result {
	enum swt_capture_end end;
	int command_status;	/* wait status of the command, -1 when none ran */
	double seconds;		/* recording time */
	uint64_t data_bytes;	/* ring-buffer pages and blktrace records written */
	int64_t lost_events;	/* over all buffers and CPUs */
	int64_t pswpin, pswpout;	/* /proc/vmstat deltas over the recording */
	int64_t oom_kills;	/* OOM kills on the host meanwhile; -1: no such counter */
	/*
	 * Swap-ins on the host meanwhile that took no block I/O, so that no
	 * block trace shows them: zero-filled pages (swpin_zero, 6.12+) and
	 * pages zswap held (zswpin); -1: no such counter.
	 */
	int64_t zero_swapins, zswap_swapins;
	int oom_victims_recorded;	/* trace.dat has oom:mark_victim: ingest and info name them */
	int trace_dat_ok;	/* trace.dat was assembled */
};

/*
 * Check the host, configure tracing and start recording (and the command).
 * On failure everything done so far is undone.  *out is freed with
 * swt_capture_destroy().
 */
int swt_capture_create(const struct swt_capture_opts *opts, struct swt_capture **out,
		       struct swt_err *err);

/*
 * Record until the end (see above), stop recording, restore the host's
 * tracing settings, and wait for a command that was stopped or killed
 * (signals are still forwarded).  A command that --duration outlived, or
 * that was running when an error stopped the recording, goes on:
 * swt_capture_wait_command() waits for it, once the capture is written.
 * Returns 0, or the error that stopped recording; either way
 * swt_capture_finish() keeps what was recorded.
 */
int swt_capture_run(struct swt_capture *c, struct swt_capture_stop *stop, struct swt_err *err);

/* 1 while the command runs on after recording. */
int swt_capture_command_running(struct swt_capture *c);

/*
 * Wait for the command, passing stop signals on as while recording (a
 * second one kills it).  Its wait status, or -1 without a command.
 */
int swt_capture_wait_command(struct swt_capture *c, struct swt_capture_stop *stop);

/*
 * After swt_capture_finish() and swt_capture_wait_command(): a command
 * that outlived recording ended after meta.txt was written, which then
 * lacks its command_exit (or command_signal); write meta.txt again with
 * it.  0 also when there is nothing to add.
 */
int swt_capture_record_exit(struct swt_capture *c, struct swt_err *err);

/* Write meta.txt, trace.dat and the blktrace files; fill *res. */
int swt_capture_finish(struct swt_capture *c, struct swt_capture_result *res,
		       struct swt_err *err);

/* Restore anything still changed, remove our instances, free.  NULL is a no-op. */
void swt_capture_destroy(struct swt_capture *c);

#endif
