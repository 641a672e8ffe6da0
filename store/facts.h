/*
 * Final ingest step: host facts and indexes (facts.c).
 */
#ifndef SWT_FACTS_H
#define SWT_FACTS_H

#include "ingest.h"
#include "layout.h"

/* What ingest learnt from the events, for the capture row and devices. */
struct swt_capture_facts {
	const char *name;
	const char *clock;
	const char *layout_source;	/* "meta", "cmdline", "assumed" */
	int64_t page_size;		/* bytes; 4096 when unknown */
	uint64_t first_ns, last_ns;	/* first > last: no events */
	int64_t lost_events;
	const struct swt_layout *layout;	/* swap areas as ingest used them */
	int faults_elsewhere;		/* faults and block I/O came from different sources */
	const uint32_t *devs;		/* devices that carried block I/O, ascending */
	size_t nr_devs;
	const int32_t *task_pids;
	const char *const *task_comms;
	size_t nr_tasks;
};

/* Write capture, meta tables, devices, swap areas, tasks; build indexes. */
int swt_store_write_facts(struct swt_store *st, const struct swt_capture_facts *cf,
			  const struct swt_meta *meta, swt_warn_fn warn, void *warn_ctx,
			  struct swt_err *err);

/*
 * The target's memory maps the capture recorded (meta.txt's "maps" lines,
 * files relative to meta.txt) into table vma; a missing file is a warning.
 */
int swt_store_write_maps(struct swt_store *st, const struct swt_meta *meta, swt_warn_fn warn,
			 void *warn_ctx, struct swt_err *err);
/*
 * The process of each mapped process and of the threads meta.txt's
 * "threads" lines name, into task.tgid (after the trace's task rows).
 */
int swt_store_write_threads(struct swt_store *st, const struct swt_meta *meta,
			    struct swt_err *err);
/*
 * The process of each thread a task:task_newtask event with CLONE_THREAD
 * shows starting (table event), where task.tgid does not say already: the
 * process of the task that started it.
 */
int swt_store_write_thread_events(struct swt_store *st, struct swt_err *err);

#endif
