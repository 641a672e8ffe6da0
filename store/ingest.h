/*
 * Ingest: turns decoded events into database rows.
 *
 * Block events are resolved into request lifecycles (queue -> get-request
 * -> insert -> issue -> complete, with the bios merged into each request),
 * tolerant of stages a trace lacks; faults, reclaim writes, probes and any
 * other event become rows of their own.  Swap-in and swap-out pages are
 * derived as bios are written; at the end the host facts are stored.
 *
 * Usage: swt_ingest_alloc(); for each input: swt_ingest_begin_source(),
 * a decoder calling swt_ingest_event(), swt_ingest_end_source(); then
 * swt_ingest_finish(); swt_ingest_free().
 */
#ifndef SWT_INGEST_H
#define SWT_INGEST_H

#include "event.h"
#include "meta.h"
#include "store.h"

struct swt_ingest;

struct swt_source_info {
	const char *path;
	const char *format;	/* "trace.dat", "blktrace" */
	int version;
	const char *byte_order;	/* "little", "big" */
	int cpus;
	const char *clock;	/* trace clock ("local", ...), NULL when the file does not say */
};

/* Warnings go through this callback (the CLI prints them); may be NULL. */
typedef void (*swt_warn_fn)(void *ctx, const char *msg);

/* meta (may be NULL) gives the swap layout, page size and page-cluster. */
int swt_ingest_alloc(struct swt_store *st, const struct swt_meta *meta, swt_warn_fn warn,
		     void *warn_ctx, struct swt_ingest **out, struct swt_err *err);
void swt_ingest_free(struct swt_ingest *ing);

int swt_ingest_begin_source(struct swt_ingest *ing, const struct swt_source_info *info,
			    struct swt_err *err);
/* An swt_event_fn: ctx is the struct swt_ingest. */
int swt_ingest_event(void *ctx, const struct swt_event *ev);
/* 1 when the metadata says the recording stopped on an error (end error). */
int swt_ingest_ended_on_error(const struct swt_ingest *ing);
/* Update the source row once a decoder knows more (version, byte order, cpus, clock). */
int swt_ingest_update_source(struct swt_ingest *ing, const struct swt_source_info *info,
			     struct swt_err *err);
int swt_ingest_end_source(struct swt_ingest *ing, struct swt_err *err);

/*
 * Store host facts (meta may be NULL; without stated swap areas every
 * device with I/O was taken as a swap area starting at sector 0, with a
 * warning), build indexes, commit.  capture_name names the capture row.
 * Stated areas that do not fit the trace (an area with no I/O, swap-sized
 * I/O on an area's device outside every area there) are warned about.
 */
int swt_ingest_finish(struct swt_ingest *ing, const struct swt_meta *meta,
		      const char *capture_name, struct swt_err *err);

/*
 * When swt_ingest_finish() had written every row, and then the facts and
 * indexes, in ns since swt_ingest_alloc(); 0 for a stage it did not reach.
 * For the command line's SWT_TIMING report: the library prints nothing.
 */
void swt_ingest_finish_times(struct swt_ingest *ing, uint64_t *rows_ns, uint64_t *facts_ns);

/* No other thread runs until the next event: call before fork(). */
int swt_ingest_quiesce(struct swt_ingest *ing);

/* Pass a warning to the callback given to swt_ingest_alloc(). */
void swt_ingest_warn(struct swt_ingest *ing, const char *msg);

/* Block events ingested so far, over all sources. */
int64_t swt_ingest_block_events(struct swt_ingest *ing);

/* The error recorded by swt_ingest_event() when it returned < 0. */
const struct swt_err *swt_ingest_error(struct swt_ingest *ing);

#endif
