/*
 * Inside the report: what every chart needs to know about the capture and
 * the runs (loaded once by report-data.c), and the chart entry points, one
 * file each (chart-*.c).
 */
#ifndef SWT_REPORT_INT_H
#define SWT_REPORT_INT_H

#include <string.h>

#include "chart.h"
#include "report.h"

#define SWT_REPORT_NO_RUNS "no replay runs stored \xe2\x80\x94 run swaptrace replay"
#define SWT_REPORT_NOTHING_TO_REPLAY "no swap-in faults in this capture: nothing to replay"
#define SWT_REPORT_NO_TRACED_RUNS \
	"no replay runs on the traced swap layout \xe2\x80\x94 run swaptrace replay"
/*
 * The note line of a chart drawn from runs that replayed an approximated
 * demand stream (a readahead capture): they are not exact replays.
 */
#define SWT_REPORT_APPROX_NOTE \
	"approximate demand stream (the capture's reads mix demand and readahead): " \
	"see docs/replay-model.md"

/*
 * The note lines of a chart that draws vma, or auto where the traced kernel
 * took VMA readahead, on a capture without fault addresses (block events
 * only): vma's empty bars are not a verdict, and auto is not what the
 * kernel ran.
 */
#define SWT_REPORT_NO_ADDRESS_NOTE \
	"no fault addresses (block events only): vma reads nothing ahead; see docs/replay-model.md"
#define SWT_REPORT_NO_ADDRESS_AUTO_NOTE \
	"no fault addresses (block events only): auto uses cluster readahead where the traced " \
	"kernel used VMA readahead; see docs/replay-model.md"


/* At most this many policies side by side; more would not be readable. */
#define SWT_REPORT_MAX_SERIES SWT_PALETTE_SIZE
/* At most this many devices get their own panel in one figure. */
#define SWT_REPORT_MAX_PANELS 8

/* A traced swap area: a partition of the traced layout. */
struct swt_report_part {
	int64_t id;		/* swap area id = partition number in traced-layout runs */
	int64_t dev;		/* kernel dev_t carrying its I/O */
	char name[32];		/* "7:0" */
	char path[256];		/* "/dev/loop0", "" when unknown */
	char label[300];	/* "7:0 /dev/loop0" */
	int64_t slots;		/* SWT_NULL when unknown */
};

/*
 * What swap-in reads cost on one swap device as traced (index.html's
 * "Traced swap-in reads"): read requests carrying pages a task faulted on,
 * not swapoff's reads nor other reads of the disk.  NaN: no such reads.
 */
struct swt_report_reads {
	size_t part;			/* the device's first area in parts[] */
	int64_t requests;		/* with an issue and a completion traced */
	double avg_kib;
	double d2c_avg_ms, d2c_median_ms, d2c_p99_ms;	/* per request */
	double q2c_avg_ms;		/* per bio, as btt counts it */
};

/* A stored replay run (the run table), with its names for legends. */
struct swt_report_run {
	int64_t id;
	char *policy, *params, *layout, *created;	/* params may be NULL */
	/*
	 * params other than a built-in's defaults, or the model's settings
	 * other than a plain replay's (model_tuned): a parameter set
	 */
	int tuned;
	int model_tuned;
	double inactive_fraction;	/* --inactive-fraction; NaN: the kernel's share */
	int64_t max_request_kib;	/* the default when not recorded */
	/* what makes it a parameter set, for its legend name: "history=64, --inactive-fraction 0.4" */
	char *settings;
	char *model_settings;	/* of them, the model's ("" when its settings are a plain replay's) */
	int page_cluster;
	int64_t cache_pages;
	int approximate;
	int64_t faults, misses, hits, pages_read, ra_pages, ra_hits, ra_wasted;
	int64_t read_requests, read_merges, replay_ns;
	double accuracy, coverage, avg_request_kib;	/* NaN when NULL */
	/* misses whose window went by virtual address: VMA readahead ('ra_window_vma') */
	int64_t vma_windows;
	/* legend name of the run's series across page-cluster values (owned) */
	char *key;
	/* the key's palette colour, the same in every chart (name_runs) */
	size_t key_color;
	/* legend name of this run, unique among runs at its page-cluster and layout (owned) */
	char *label;
	/* the answer names a run of this key: charts with too many policies keep it */
	int key_cited;
};

struct swt_report_ctx {
	struct swt_store *st;
	const struct swt_report_opts *opts;
	struct swt_chart_out out;

	/* the capture */
	char name[256], kernel[128];
	int page_cluster;		/* at capture; -1 unknown */
	int64_t first_ns, last_ns;	/* trace clock; span of all events */
	int64_t swap_ins, swap_outs;	/* traced pages */
	char nothing_to_replay[160];	/* "... : nothing to replay", "" when replay has faults */
	int no_fault_addresses;		/* swap-ins, none with the address of its fault */
	int auto_takes_vma;		/* the traced kernel took VMA readahead (auto does too) */
	int multigen_lru;		/* the traced kernel ran the multi-gen LRU: 1, else 0 or -1 */
	char lru_gen[32];		/* its lru_gen fact, as recorded */
	/* /proc/vmstat deltas over the capture (machine-wide); SWT_NULL when absent */
	int64_t vm_pswpin, vm_pgmajfault, vm_swap_ra, vm_swap_ra_hit;
	/* swap-ins without block I/O: zero-filled pages, and pages zswap held */
	int64_t vm_swpin_zero, vm_zswpin;

	struct swt_report_part *parts;
	size_t nr_parts;
	struct swt_report_reads *reads;	/* one per device of parts, in their order */
	size_t nr_reads;
	struct swt_report_run *runs;	/* the runs drawn (all, or --run), by id */
	size_t nr_runs;
	/*
	 * Memory of the comparisons (cache pages): the one most traced-layout
	 * runs share.  Runs at other memory sizes are drawn only by the memory
	 * chart, which compares memory sizes.  -1: no run on the traced layout.
	 */
	int64_t cache_pages;
	/* replay's default memory for this capture (its cgroup limit); -1: none known */
	int64_t default_cache_pages;
	int64_t page_size;
	int64_t request_limit_kib;	/* replay's --max-request-kib default for this capture */
	/* the page size as the charts name their pages: "4 KiB", "64 KiB" */
	char page_unit[32];
	/* page-cluster of the policy comparisons; -1: no run on the traced layout */
	int chosen_pc;
	/* the run the one-run charts show; NULL: none on the traced layout */
	const struct swt_report_run *chosen;
};

/* Whether a run replayed the traced layout (not a simulated one). */
static inline int swt_report_run_traced(const struct swt_report_run *r)
{
	return !strcmp(r->layout, "traced");
}

/*
 * A layout name without its "used=" option when that gives one-page
 * offsets (0 or 1 per device), into key: what the runs of one layout at
 * several device offsets ("--layout 4:spread") share.  Other counts stay:
 * "4:used=30000,0,0,0" is a layout of its own, not an offset of "4".
 */
void swt_report_layout_group(const char *layout, char *key, size_t size);
/* Do two layout names place pages alike ("4", "4:used=0" and "4:used=0,0,0,0" do)? */
int swt_report_same_layout(const char *a, const char *b);

/* Whether a run is on the traced layout at the memory of the comparisons. */
int swt_report_run_compared(const struct swt_report_ctx *rc, const struct swt_report_run *r);

/*
 * The run whose setting the layout chart and the answer's layout lines
 * compare: a simulated-layout run of the chosen run's setting, else of its
 * policy, else the first simulated-layout run; NULL when there is none.
 */
const struct swt_report_run *swt_report_layout_anchor(const struct swt_report_ctx *rc);

/*
 * Whether a drawn run lacks the fault addresses VMA readahead needs:
 * SWT_REPORT_VMA_NO_ADDRESSES for vma, SWT_REPORT_AUTO_NO_ADDRESSES for
 * auto where the traced kernel took VMA readahead, else 0.
 */
enum { SWT_REPORT_VMA_NO_ADDRESSES = 1, SWT_REPORT_AUTO_NO_ADDRESSES = 2 };
int swt_report_run_lacks_addresses(const struct swt_report_ctx *rc, const struct swt_report_run *r);
/* The note lines for a mask of swt_report_run_lacks_addresses() values, from y; the next y. */
double swt_report_address_notes(struct swt_chart *c, double y, int mask);
/*
 * Under a chart's legend, when the runs it compares were replayed at a
 * memory other than replay's default: which one.  Returns the next y.
 */
double swt_report_memory_note(const struct swt_report_ctx *rc, struct swt_chart *c, double y);

/*
 * Load the capture facts, partitions and runs of st (the runs opts
 * selects); choose the page-cluster and run.  rc->out is left to the
 * caller.  swt_report_ctx_release() undoes it, also after a failure.
 */
int swt_report_ctx_init(struct swt_report_ctx *rc, struct swt_store *st,
			const struct swt_report_opts *opts, struct swt_err *err);
void swt_report_ctx_release(struct swt_report_ctx *rc);

/*
 * The policies (keys) a chart draws among the runs keep() takes: at most
 * SWT_REPORT_MAX_SERIES, those the answer names first, then in run order.
 * note says which were left out ("" when none): "2 more policies at this
 * page-cluster are not shown (p7, p8); pick runs with --run", with where
 * (" at this page-cluster", or "") after "policies".
 */
struct swt_report_keys {
	const char *keys[SWT_REPORT_MAX_SERIES];
	size_t n, more;
	char note[400];
};
void swt_report_pick_keys(const struct swt_report_ctx *rc,
			  int (*keep)(const void *arg, const struct swt_report_run *r),
			  const void *arg, const char *where, struct swt_report_keys *k);
int swt_report_keys_have(const struct swt_report_keys *k, const char *key);

/*
 * The compared runs (swt_report_run_compared) at page-cluster pc, by id, of
 * the policies swt_report_pick_keys() keeps (*keys says which were left
 * out).  *out is malloc'ed (free it); NULL with *n == 0 when there are none.
 */
int swt_report_runs_at(const struct swt_report_ctx *rc, int pc, const struct swt_report_run ***out,
		       size_t *n, struct swt_report_keys *keys, struct swt_err *err);

/*
 * Lines drawn later cover identical or nearly identical earlier ones (auto
 * is adaptive on a rotational device; none and oracle read the same
 * pages): which lines are hidden, in every panel ("a lies under b, the same
 * results at every EVERY") or in which ("a lies under b in Coverage"), or a
 * reader looks for a legend entry's line in vain.  covers(arg, a, b, m):
 * 2 when series b has a's values in panel m, 1 when within what the lines
 * cannot show apart, 0 when a shows.  "" when none is hidden.
 */
void swt_report_hidden_note(size_t nr_series, const char *const *keys, int nr_panels,
			    const char *const *panel_names,
			    int (*covers)(const void *arg, size_t a, size_t b, int m),
			    const void *arg, const char *every, char *out, size_t size);

/*
 * The runs the answer names (report-answer.c): as traced, the kernel's
 * policy at its best, the best of the kernel's policies, of the others,
 * and the oracle; NULL where there is none.
 */
struct swt_report_picks {
	const struct swt_report_run *base, *best_auto, *best_kernel, *best_other, *oracle;
	int64_t max_pages;	/* the most pages a best setting may read */
};
void swt_report_answer_picks(const struct swt_report_ctx *rc, struct swt_report_picks *p);

/*
 * The colours of a chart's n series (n <= SWT_REPORT_MAX_SERIES) from each
 * one's key_color, so that a policy keeps its colour from chart to chart; a
 * series whose colour an earlier one of the chart took (a report of more
 * policies than colours) gets the first one free.
 */
void swt_report_series_colors(const size_t *key_colors, size_t n, struct swt_chart_rgb *out);


/* The partition with swap area id `id`, or NULL. */
const struct swt_report_part *swt_report_part(const struct swt_report_ctx *rc, int64_t id);

/* Why a run chart is empty: no runs at all, or none on the traced layout. */
const char *swt_report_no_runs(const struct swt_report_ctx *rc);
/*
 * Why a chart of swap events over time has nothing to draw: no events, no
 * swap device (have_parts 0), or one event or one instant, "...: why_not"
 * (what the chart cannot do with so little).
 */
void swt_report_no_events_message(const struct swt_report_ctx *rc, int have_parts,
				  const char *why_not, char *msg, size_t size);

/*
 * The unit of a time axis over span_ns (seconds, minutes past 20 minutes,
 * hours past 5 hours), in seconds, and its axis label.
 */
struct swt_report_time_axis {
	double unit_s;
	const char *label;
};
struct swt_report_time_axis swt_report_time_axis(int64_t span_ns);

/*
 * "policy at page-cluster N (run #id)" for the chosen run, allocated (a
 * plugin's name and parameters are as long as its user made them): the
 * caller frees it.  NULL when out of memory.
 */
char *swt_report_run_desc(const struct swt_report_run *r);

/* NaN-safe ratio: NaN when the denominator is not positive or a value is unknown. */
double swt_report_ratio(int64_t num, int64_t den);

/*
 * The traced kernel's legend item, labelled label and drawn as mark, with
 * its points in the chart's metadata: the metrics of ref[0..n) it has
 * (not NaN).
 */
struct swt_chart_legend_item swt_report_reference_item(struct swt_chart *c, const char *label,
							enum swt_chart_mark_kind mark,
							const double *ref, size_t n);

/*
 * The charts, in the order of the report.  Each loads what it draws,
 * renders it through rc->out and hands back its metadata; *meta is NULL
 * when the chart does not apply to this database (no layout runs).
 */
int swt_chart_policy_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err);
int swt_chart_sweep_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			  struct swt_err *err);
int swt_chart_reqsize_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			    struct swt_err *err);
int swt_chart_timeline_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			     struct swt_err *err);
int swt_chart_heatmap_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			    struct swt_err *err);
int swt_chart_window_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err);
int swt_chart_layout_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err);
int swt_chart_memory_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err);

/* A chart drawn, for the index page. */
struct swt_report_entry {
	const char *heading;		/* short name: "Policy comparison" */
	const char *what;		/* one line: what the chart answers */
	struct swt_chart_meta *meta;	/* NULL: not drawn, skipped says why */
	const char *skipped;
};

/*
 * The answer in words (report-answer.c), appended to b: as index.html's
 * section, or as plain lines for the terminal (nothing without runs on the
 * traced layout).
 */
struct swt_sbuf;
void swt_report_answer_html(struct swt_sbuf *b, const struct swt_report_ctx *rc);
void swt_report_answer_text(struct swt_sbuf *b, const struct swt_report_ctx *rc);

/* Write DIR/index.html; path receives its path. */
int swt_report_html_write(const struct swt_report_ctx *rc, const struct swt_report_entry *entries,
			  size_t n, char *path, size_t path_size, struct swt_err *err);

#endif
