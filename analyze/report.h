/*
 * swaptrace report: the charts that answer "would swap-in have been faster
 * with another readahead policy, page-cluster value or swap layout?" at a
 * glance, drawn from a database's ingested events and stored replay runs,
 * written as PNG and/or SVG with a JSON metadata file per chart, and an
 * index.html that puts them together with the table of runs.
 */
#ifndef SWT_REPORT_H
#define SWT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "swaptrace/error.h"

enum swt_report_format {
	SWT_REPORT_PNG = 1u << 0,
	SWT_REPORT_SVG = 1u << 1,
};

struct swt_report_opts {
	const char *dir;		/* output directory; created (with parents) if missing */
	unsigned formats;		/* enum swt_report_format bits; 0 means both */
	const int64_t *run_ids;		/* draw only these runs; NULL: every stored run */
	size_t nr_run_ids;
	/*
	 * Policy for the charts that show one run (request sizes, timeline
	 * shading, layouts); NULL: the lowest-numbered run on the traced
	 * layout, at the page-cluster the policy charts show, that read ahead.
	 */
	const char *policy;
	/*
	 * With policy: the run.params its runs must have (--policy
	 * leap:history=64 names one parameter set of several), as replay
	 * stores them; NULL: any.
	 */
	const char *policy_params;
	/*
	 * 1: policy_params are a plugin's, as given (the report loads no
	 * plugin to fill in its defaults): a run matches when its run.params
	 * hold each of them.
	 */
	int policy_params_given;
	/*
	 * Called when the database holds no replay run, to store a default
	 * replay set in st (which the caller opened writable).  It is called
	 * outside a transaction and stores its runs in one it begins and
	 * leaves open (so that the replaying, which can be long, locks no
	 * one out): swt_report_write commits it only when the whole report is
	 * written, and rolls it back when the report fails.  Returning 0
	 * with no transaction open: nothing stored.  NULL: the report draws
	 * what needs no runs and the run charts say so.
	 */
	int (*run_defaults)(struct swt_store *st, void *ctx, struct swt_err *err);
	void *run_defaults_ctx;
	/*
	 * 1 when a run's run.params are its built-in policy's defaults (a
	 * plain --policy NAME): such a run is named and coloured as the
	 * built-in.  NULL: a run with any params is a parameter set.
	 */
	int (*params_are_defaults)(const char *policy, const char *params);
	/*
	 * A stored layout name in its canonical spelling, in *out (malloc'd),
	 * as replay stores names (swt_layout_canonical): runs stored by an
	 * older replay, which stored them as given ("04", "4:prio=-2:ssd"),
	 * then group with the same layout's runs stored since ("4",
	 * "4:ssd:prio=-2"), and a repeat is drawn once.  A name it does not
	 * read (non-zero but -SWT_ENOMEM) stays as stored.  NULL: every name
	 * as stored.
	 */
	int (*layout_canonical)(const char *layout, uint32_t page_shift, char **out,
				struct swt_err *err);
	/*
	 * Why replay has nothing to take from the capture, NULL when it has
	 * (swt_replay_nothing_to_replay): the run charts then say so instead
	 * of pointing at replay.  NULL callback: a capture without swap-ins
	 * has nothing to replay.
	 */
	const char *(*nothing_to_replay)(struct swt_store *st);
	/*
	 * Whether the traced kernel ran the multi-gen LRU, which replay does
	 * not model (swt_replay_multigen_lru: 1 on, 0 off, -1 not recorded;
	 * its fact's text in value): the answer says so.  NULL: not asked.
	 */
	int (*multigen_lru)(struct swt_store *st, char *value, size_t len);
	/*
	 * 1 once the user asked to stop (a signal the caller caught): asked
	 * between charts, last before the runs are committed and the files
	 * moved in, and passed to run_defaults' sweep between runs; the
	 * report then fails with SWT_EINTR and, as any failed report, leaves
	 * no staging directory, no directory it made and no runs stored.
	 * Past that last question the report completes: a caller asked to
	 * stop then must still say so.  NULL: never.
	 */
	int (*interrupted)(void);
};

/* What swt_report_write() produced. */
struct swt_report_summary {
	size_t charts;		/* charts drawn */
	size_t files;		/* files written, index.html included */
	size_t runs;		/* replay runs the charts drew from */
	/* "WHY: nothing to replay" as the run charts say it, "" when replay has faults */
	char nothing_to_replay[160];
	size_t approximate_runs;	/* of them, replays of an approximated demand stream */
	size_t vma_runs_without_addresses;	/* of them, vma on a capture without fault addresses */
	/* of them, auto there, where the traced kernel took VMA readahead */
	size_t auto_runs_without_addresses;
	int ran_defaults;	/* 1: run_defaults was called */
	char index[4096];	/* path of index.html */
	/*
	 * The answer index.html opens with, as plain lines ("" when there is
	 * none); cut at a line end when longer.
	 */
	char answer[8192];
};

/*
 * Draw every chart that applies and write DIR/index.html; chart files of
 * an earlier report in DIR that this one does not write are removed.  Fails with
 * SWT_EUSAGE for an unknown --run id or policy, SWT_EIO when DIR cannot
 * be written (or a directory stands where a file of the report goes),
 * SWT_EDB on database errors; after a failure the database is as it was.
 * sum may be NULL.
 */
int swt_report_write(struct swt_store *st, const struct swt_report_opts *opts,
		     struct swt_report_summary *sum, struct swt_err *err);

/*
 * The default output directory for a database: "cap.db" -> "cap-report",
 * "dir/x" -> "dir/x-report".  Returns a malloc'ed string, NULL on ENOMEM.
 */
char *swt_report_default_dir(const char *db_path);

#endif
