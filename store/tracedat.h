/*
 * trace-cmd trace.dat decoder (file versions 6 and 7, compressed or not),
 * built on libtracecmd and libtraceevent.
 *
 * The file is first checked structurally by swaptrace itself (sections and
 * per-CPU data must lie inside the file), then decoded in a child process:
 * libtracecmd can crash on a damaged file, and a crash must not take
 * swaptrace down.  libtracecmd opens the file and parses its formats;
 * compressed (zstd) event data is decompressed a chunk at a time by
 * tracedat-stream.c, because libtracecmd 3.1.6 keeps every chunk it
 * decompresses until the file is closed (memory would grow with the trace),
 * and uncompressed data is iterated by libtracecmd, which maps it from the
 * file.  The child streams events through a pipe while the parent
 * stores them, so decoding and SQLite run on two cores.  Finally what was
 * decoded is checked against what the file declares (per-CPU data pages,
 * CPUSTAT event counts), so a damaged file never yields a silently short
 * database.
 */
#ifndef SWT_TRACEDAT_H
#define SWT_TRACEDAT_H

#include <stdint.h>

#include "event.h"
#include "swaptrace/error.h"

#define SWT_TRACEDAT_MAX_CPUS 4096

struct swt_tracedat_stats {
	int version;		/* 6 or 7 */
	int big_endian;
	int cpus;		/* CPUs with data, over all buffers */
	int buffers;		/* instance buffers holding data (incl. top level) */
	uint64_t events;
	int64_t lost;		/* from missed-event markers */
	int64_t unwritten;	/* events read from CPUs whose data the file does not hold */
	char clock[32];
	char compression[32];	/* "none", "zstd", "zlib" */
	char warning[512];	/* for the user, when not empty: a doubt that is no error */
	/*
	 * The warning is of a CPU holding fewer events than its statistics
	 * declare, without the causes: the caller knows whether the capture
	 * ended on a write error, the decoder does not.
	 */
	int short_count;
};

/* 1 when the file starts with the trace.dat magic. */
int swt_tracedat_probe(const char *path);

/* Structural check only (no libtracecmd); fills version/compression/clock. */
int swt_tracedat_check(const char *path, struct swt_tracedat_stats *stats, struct swt_err *err);

/*
 * Decode every event of every buffer in time order, calling cb in the
 * calling process.  Errors name the file (and the offset where known).
 *
 * The decoder runs in a forked child: call this while the process has a
 * single thread (ingest's row writer has none between sources), or the
 * child may inherit a lock another thread held.
 *
 * Test seam: with SWT_TEST_DECODER_CRASH=N in the environment, the decoder
 * process raises SIGSEGV after N events, as a libtracecmd crash would.
 */
int swt_tracedat_decode(const char *path, swt_event_fn cb, void *ctx,
			struct swt_tracedat_stats *stats, struct swt_err *err);

/*
 * The same, calling before_fork(ctx) first: the caller stops its other
 * threads there (a child forked while another thread holds a lock -- in
 * malloc, say -- deadlocks).
 */
int swt_tracedat_decode_ex(const char *path, swt_event_fn cb, void *ctx,
			   void (*before_fork)(void *ctx), struct swt_tracedat_stats *stats,
			   struct swt_err *err);

#endif
