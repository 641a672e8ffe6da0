/*
 * The replay engine: the swap-in stream of an ingested capture replayed
 * offline through a readahead policy, with a model of the swap cache and
 * of memory, giving what-if hit rates, pages read, wasted readahead and
 * read requests per swap partition.  The model is described in
 * docs/replay-model.md.
 */
#ifndef SWT_REPLAY_H
#define SWT_REPLAY_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"
#include "swaptrace/policy.h"
#include "util.h"

/* ---- input: what the engine replays ------------------------------------ */

struct swt_replay_area {
	int64_t id;		/* swap area id (traced) or simulated device index */
	char dev[32];		/* "7:0", or "sim0"... */
	uint64_t slots;		/* incl. header slot 0 */
	int slots_guessed;	/* size not recorded: slots is the highest used + 1 */
	uint64_t slots_top;	/* the highest slot the streams use (loaded inputs) */
	int rotational;		/* 1, 0, or -1 not recorded (taken as rotational) */
	int synchronous;
	int64_t priority;
};

/* A demand swap fault: a page that had to be brought back. */
struct swt_replay_fault {
	uint64_t ts;
	uint64_t slot;
	uint64_t vpage;		/* 0 when unknown */
	uint32_t area;		/* index into areas[] */
	int32_t pid;
	int32_t vma;		/* index into vmas[], -1 unknown */
	int32_t out;		/* the swap-out that put the page there, -1 unknown (layouts) */
};

/* A page written to swap (an eviction that needed I/O). */
struct swt_replay_swapout {
	uint64_t ts;
	uint64_t slot;
	uint32_t area;
	int32_t pid;
	int32_t cpu;		/* CPU that queued the write (its bio's), -1 unknown */
};

/*
 * A swap slot freed while its page stayed in memory (mm/memory.c:
 * do_swap_page frees the swap entry of a page a write fault swaps in, or
 * of any page it swaps in once swap is over half full; do_wp_page that of
 * a page mapped read-only when the task writes it): the page stays in
 * memory, dirty, and goes to a new slot at its next eviction.  Time order.
 */
struct swt_replay_free {
	uint32_t after;		/* replayed after this fault (and before the next one) */
	uint32_t fault;		/* the fault that mapped the page: its area and slot are freed */
	uint32_t outs_at;	/* swap-outs replayed before it: outs_before[after] to outs_before[after + 1] */
	int32_t evict_out;	/* the swap-out that wrote the page elsewhere (its next fault's), -1 */
};

struct swt_replay_vma {
	int32_t pid;
	int32_t shared;		/* a shared mapping (maps perms 's'): SWT_FAULT_SHARED */
	uint64_t start, end;	/* pages, [start, end) */
};

struct swt_replay_input {
	struct swt_replay_area *areas;
	size_t nr_areas;
	struct swt_replay_fault *faults;	/* time order */
	size_t nr_faults;
	struct swt_replay_swapout *outs;	/* time order */
	size_t nr_outs;
	struct swt_replay_vma *vmas;
	size_t nr_vmas;
	struct swt_replay_free *frees;	/* slots freed under their pages, time order */
	size_t nr_frees;
	size_t nr_frees_moved;		/* of which found as pages back from another slot */
	size_t nr_frees_full;		/* and at swap-ins while swap was over half full */
	uint64_t first_ns;		/* capture.first_ns: second 0 of the per-second series */
	int traced_page_cluster;	/* -1 unknown */
	int vma_ra_enabled;		/* -1 unknown */
	uint32_t page_shift;
	/*
	 * The largest read request, KiB: the capture's swap devices' queue
	 * limits (swt_store_request_limit_kib), at least a page; replay's
	 * --max-request-kib default.
	 */
	int64_t request_limit_kib;
	int64_t mem_limit_bytes;	/* -1 unknown */
	int64_t working_set_bytes;	/* -1 unknown */
	int approximate;	/* demand stream reconstructed from a readahead-mixed trace */
	size_t approx_misses;	/* of which faults that read (one per fault or read) */
	size_t approx_hits;	/* and faults that took a page read ahead */
	size_t no_area;		/* swap-ins naming no swap area of the database: left out */
	size_t no_area_outs;	/* and swap-outs */
	size_t swapoff_reads;	/* swap-ins swapoff read (SWT_NOT_SWAPOFF_SQL): left out */
	size_t faults_in_maps;	/* faults placed in a VMA of the capture's memory maps */
	size_t faults_inferred;	/* faults whose VMA was guessed from fault addresses */
	/* thread -> its process (task.tgid), where a capture said; empty: none did */
	struct swt_map processes;
	char kernel[64];	/* the traced kernel's release, "" unknown */
	unsigned ncpus;		/* capture.ncpus, else 1 + the highest CPU that wrote swap */
	void *prep;		/* engine tables shared by runs (swt_replay_prepare) */
};

/*
 * What a capture's swap reads give replay: each the faulting page's own (an
 * exact demand stream, also with no reads at all), swap-entry probes that
 * name every fault (exact at any page-cluster), or demand and readahead
 * mixed, which only an approximation can take.
 */
enum swt_stream_kind { SWT_STREAM_EXACT, SWT_STREAM_PROBES, SWT_STREAM_MIXED };
enum swt_stream_kind swt_replay_stream_kind(struct swt_store *st);

/*
 * Why replay plainly has nothing to take from an ingested capture, from
 * the tables alone: "no swap areas", "no swap-in faults in this capture"
 * or "every swap-in was read by swapoff, none faulted"; NULL when it has
 * faults to load (loading can still find none to replay, as when an
 * approximation leaves none).  Cheap: for report --no-replay and info,
 * which do not load the stream.
 */
const char *swt_replay_nothing_to_replay(struct swt_store *st);

/*
 * Whether the traced kernel ran the multi-gen LRU, from the capture's
 * lru_gen fact (/sys/kernel/mm/lru_gen/enabled, "absent" where the kernel
 * was built without it): 1 on, 0 off, -1 not recorded (or not readable:
 * a failed read is kept for swt_store_query_error).
 * The fact's text goes to value.  Replay models the two-list LRU.
 */
int swt_replay_multigen_lru(struct swt_store *st, char *value, size_t len);

/*
 * Swap-ins on the traced host that took no block I/O, so that no block
 * trace shows them nor the swap-outs before them: the capture's /proc/vmstat
 * deltas of swpin_zero (zero-filled pages, kernels 6.12+) into *zero and
 * zswpin (pages zswap held) into *zswap, -1 each where not recorded.
 * Machine-wide.  Returns the sum of those above 0.
 */
int64_t swt_replay_unseen_swapins(struct swt_store *st, int64_t *zero, int64_t *zswap);

/*
 * Load the demand stream and swap-outs of an ingested capture.  A capture
 * whose reads mix demand and readahead (page-cluster > 0, no swap-entry
 * probes) is refused unless approximate is set: then the stream is
 * reconstructed from its reads and faults (swt_replay_reconstruct).
 */
int swt_replay_input_load(struct swt_store *st, int approximate, struct swt_replay_input **out,
			  struct swt_err *err);
void swt_replay_input_free(struct swt_replay_input *in);

/*
 * A kernel release's major and minor ("6.18.44-fc", "5.10.0-23-amd64",
 * "6.1+"): 0, or -SWT_EUSAGE when the text names none (allocator.c).
 */
int swt_kernel_release_parse(const char *text, unsigned long *major, unsigned long *minor);

/*
 * The slots freed under their pages (write-frees.c): by write faults, from
 * the capture's fault events, and at the swap-in of a page the trace shows
 * back from another slot with no write: in->frees.  The faults must be loaded and linked to their
 * swap-outs (fault.out) and VMAs.
 */
int swt_replay_find_frees(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err);

/*
 * The demand stream of a capture whose reads mix demand and readahead,
 * reconstructed from its reads, faults and swap-outs (in->areas and
 * in->outs loaded): fills in->faults (reconstruct.c).
 */
int swt_replay_reconstruct(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err);
/*
 * The exact demand stream of a capture with swap-entry probes, whatever its
 * page-cluster (swap_probe 'fault' and readahead 'ra_hit' rows): fills
 * in->faults (reconstruct.c).
 */
int swt_replay_probe_stream(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err);
/*
 * The process (address space) of the task an event names: the kernel's
 * pid is a thread's, and maps, page tables and VMA readahead state are
 * the process's.  The task itself where the capture did not say.
 */
int32_t swt_replay_process_of(const struct swt_replay_input *in, int64_t pid);
/* The index in in->areas of swap area id, -1 when it is not one. */
int swt_replay_area_index(const struct swt_replay_input *in, int64_t id);
/* Whether a swap area is rotational: the traced kernel then took cluster, not VMA, readahead. */
int swt_replay_any_rotational(const struct swt_replay_input *in);

/*
 * Compute once what every run of this input shares (futures, page tables);
 * swt_replay_input_load() does it.  An unprepared input still replays, at
 * the cost of computing them per run.  Changing the input afterwards needs
 * swt_replay_input_unprepare() first.
 */
int swt_replay_prepare(struct swt_replay_input *in, struct swt_err *err);
void swt_replay_input_unprepare(struct swt_replay_input *in);

/*
 * The per-second series (run_series) count seconds from in->first_ns.
 * The seconds from the first fault's to the last's (0 for faults within
 * one second, or none), and the first one's in *first_second.
 *
 * Series hold only the seconds with faults, so a long capture costs no
 * more than a short one with as many faults.  The engine counts seconds
 * from the first fault's in 32 bits: a longer span (136 years) is a
 * damaged timestamp, refused.
 */
#define SWT_REPLAY_MAX_SPAN_SECONDS ((uint64_t)UINT32_MAX)
uint64_t swt_replay_fault_span_seconds(const struct swt_replay_input *in, uint64_t *first_second);

/* Default simulated memory, in pages: the cgroup limit, else the working set. */
int64_t swt_replay_default_cache_pages(const struct swt_replay_input *in);

/*
 * The most memory, in pages, a run can replay at any page-cluster and page
 * size with that inactive share (0: the kernel's rule): 357848403 pages
 * (2^28.4) by the kernel's rule, fewer with more of it inactive (180698417
 * at 0.99).
 */
uint64_t swt_replay_max_cache_pages(double inactive_fraction);

/* ---- configuration ---------------------------------------------------- */

/*
 * Bytes per slot up to the highest one used that a replay's slot tables
 * take: those every run of an input shares (8), a run's slot words (4)
 * and, for policies that read the future (oracle, vma), its next uses
 * (4).  A run's refault table (4 more) is written only where faults are,
 * and memory never written is not taken (measured: 12 bytes a slot for
 * none, 16 for oracle).
 */
#define SWT_SLOT_TABLE_BYTES 16

/*
 * 0 when slot tables of nslots[area] slots (the highest slot used + 1) fit
 * in the memory available (the host's, or a memory cgroup's); else an
 * error naming the widest area.
 */
int swt_replay_slot_tables_fit(const struct swt_replay_input *in, const uint64_t *nslots,
			       struct swt_err *err);
/*
 * nslots[area] (nr_areas of them): the highest slot the input's faults and
 * swap-outs use in the area, + 1, at least 1; 0, or an error where a slot
 * is past what the replay handles (2^32) or the tables would not fit
 * (swt_replay_slot_tables_fit).
 */
int swt_replay_stream_slots(const struct swt_replay_input *in, uint64_t *nslots,
			    struct swt_err *err);

/* CPUs a capture may have (the layouts' allocator has per-CPU state) */
#define SWT_MAX_CPUS 65536


/*
 * What a run did page by page, for tools that need more than its counts
 * (tests/reconstruct-check.c builds a readahead capture from it).  Called
 * only by the library built for it, swt_replay_observed (the swaptrace
 * command's runs do not pay for it), and by swt_replay_run only (an
 * isolated plugin run would call it in its child); NULL members are not
 * called.
 */
struct swt_replay_observer {
	void *ctx;
	/* fault (index into in->faults) read (area, slot); demand: its own page */
	void (*read)(void *ctx, size_t fault, uint32_t area, uint64_t slot, int demand);
	/* fault found its page read ahead */
	void (*hit)(void *ctx, size_t fault);
};

struct swt_replay_config {
	const struct swt_policy *policy;
	const char *policy_spec;	/* canonical (swt_policy_choose): printed; its name, the run row's */
	const char *const *keys;	/* parameters, defaults filled in */
	const char *const *values;
	unsigned nparams;
	unsigned page_cluster;
	uint64_t cache_pages;		/* simulated memory for the traced task, pages */
	double inactive_fraction;	/* share of it on the inactive list; 0: kernel's rule */
	unsigned max_request_pages;	/* requests split here (max_sectors_kb / page KiB) */
	const char *layout_name;	/* "traced" unless the input was re-placed */
	const struct swt_replay_observer *observer;	/* NULL: none */
};

/* ---- results ---------------------------------------------------------- */

struct swt_replay_metrics {
	uint64_t faults, misses, hits;
	uint64_t pages_read, ra_pages, ra_hits, ra_wasted;
	uint64_t read_requests, read_merges;
};

#define SWT_REPLAY_MAX_WINDOW 1024	/* histogram buckets; larger windows share the last */

struct swt_replay_series_point {
	uint64_t second;	/* from in->first_ns */
	uint64_t faults, hits, misses, pages_read;
};

struct swt_replay_part {
	struct swt_replay_metrics m;
	uint64_t *request_hist;		/* [max_request_pages + 1], pages per read request */
	uint64_t window_hist[SWT_REPLAY_MAX_WINDOW + 1];
	/* of those, the windows by virtual page (VMA readahead), by size */
	uint64_t vpage_window_hist[SWT_REPLAY_MAX_WINDOW + 1];
	/* the seconds with a fault or a read here, in order: [nr_seconds] of [series_cap] */
	struct swt_replay_series_point *series;
	size_t nr_seconds, series_cap;
};

struct swt_replay_result {
	struct swt_replay_metrics total;
	struct swt_replay_part *parts;	/* one per area of the input */
	size_t nr_parts;
	unsigned max_request_pages;
	uint64_t ra_unused_at_end;	/* read ahead, still cached unused when the trace ended */
	/*
	 * Pages whose slot a write fault freed (in->frees), by how they left
	 * memory: written where their next fault says, written as the oldest
	 * such page at a write to a free slot, or evicted by the model's lists
	 */
	uint64_t freed_left_traced, freed_left_oldest, freed_left_lists;
	uint64_t cache_pages, inactive_pages;
	uint64_t elapsed_ns;		/* the whole run */
	uint64_t loop_ns;		/* of which the event loop */
};

/*
 * Replay in->faults through cfg->policy.  The result is freed with
 * swt_replay_result_free().
 */
int swt_replay_run(const struct swt_replay_input *in, const struct swt_replay_config *cfg,
		   struct swt_replay_result **out, struct swt_err *err);
void swt_replay_result_free(struct swt_replay_result *r);
/*
 * Free a result's per-second series and request histograms, keeping its
 * counts: for a caller that has stored the run (swt_replay_store needs
 * them) and only prints it from here on.
 */
void swt_replay_result_shed(struct swt_replay_result *r);

/*
 * A result, series and histograms included, written to fd (0, or -errno)
 * and read back (NULL on a short read or no memory): how an
 * isolated run hands its result over, and how a sweep keeps the results it
 * will store out of memory.
 */
int swt_replay_result_write(int fd, const struct swt_replay_result *r);
struct swt_replay_result *swt_replay_result_read(int fd);

/*
 * A sweep's results waiting to be stored: each run's is put in a temporary
 * file as the run ends (so that its series can be freed), and got back in
 * the same order once the database is locked for them.  Errors say so in
 * err; swt_replay_spill_get returns NULL on one.  Close with fclose().
 */
FILE *swt_replay_spill_open(struct swt_err *err);
int swt_replay_spill_put(FILE *spill, const struct swt_replay_result *r, struct swt_err *err);
int swt_replay_spill_rewind(FILE *spill, struct swt_err *err);
struct swt_replay_result *swt_replay_spill_get(FILE *spill, struct swt_err *err);

/* The same in a child process, so that a crashing plugin is only an error. */
int swt_replay_run_isolated(const struct swt_replay_input *in, const struct swt_replay_config *cfg,
			    struct swt_replay_result **out, struct swt_err *err);

/*
 * In a child forked to run plugin code, before it runs: a fault there
 * kills the child by its signal (for the parent to name), and the child
 * dies with its parent.  0, or -1 when parent is gone already.
 */
int swt_plugin_child_setup(pid_t parent);

/*
 * In its parent: up to len bytes from the pipe fd that child pid writes
 * to, fewer at its end or an error; how many.  A child the plugin stopped
 * for good (SIGSTOP, or SIGTSTP and the like) would never write: reading
 * ends, and *stop_sig is the signal (0 before: a stop seen once ends every
 * later read at once), the caller kills it.  A stop of the whole process
 * group (Ctrl-Z) is no such stop.
 */
size_t swt_plugin_child_read(int fd, pid_t pid, void *buf, size_t len, int *stop_sig);

double swt_metrics_accuracy(const struct swt_replay_metrics *m);	/* -1: undefined */
double swt_metrics_coverage(const struct swt_replay_metrics *m);
double swt_metrics_avg_request_kib(const struct swt_replay_metrics *m, uint32_t page_shift);

/*
 * Store a run and its partitions, histograms and series; *run_id set.
 * A run that repeats one stored before (every column of run the same but
 * id, created, replay_ns and loop_ns, and the same rows in run_partition,
 * run_histogram and run_series) is not stored again: *repeated is then 1
 * and *run_id that run's, the latest such.  The caller wraps a batch of
 * runs in one transaction; a failure leaves it as it was before the call.
 */
int swt_replay_store(struct swt_store *st, const struct swt_replay_input *in,
		     const struct swt_replay_config *cfg, const struct swt_replay_result *r,
		     int64_t *run_id, int *repeated, struct swt_err *err);

/*
 * Replay the default set (none, fixed, adaptive, vma, auto and oracle at
 * page-cluster 0..8, traced layout, default memory; auto, fixed and oracle
 * at 50..150 % of it, those the replay handles) and store it; *nr_runs
 * set, and *memory_percent to the largest share of the default memory
 * replayed (150, less when larger sizes are more than the replay handles;
 * SWT_TEST_MAX_CACHE_PAGES in the environment lowers that limit, for the
 * tests).  A default memory the replay cannot handle is -SWT_ENOTSUP.  What swaptrace report
 * draws when the database holds no runs.  Called outside a transaction:
 * the runs are computed with no lock held, then stored in a transaction
 * (BEGIN IMMEDIATE) that is left open on success, for the caller to
 * commit or roll back; *nr_runs counts those stored (a setting another
 * report stored meanwhile is not stored twice).  On failure nothing is
 * stored or left open.  interrupted (NULL: never) is asked between runs:
 * 1 stops the sweep with -SWT_EINTR, nothing stored.
 */
int swt_replay_default_sweep(struct swt_store *st, size_t *nr_runs, unsigned *memory_percent,
			     int (*interrupted)(void), struct swt_err *err);

/* ---- policies ---------------------------------------------------------- */

/* Built-in policies, NULL-terminated. */
extern const struct swt_policy *const swt_builtin_policies[];

const struct swt_policy *swt_policy_find(const char *name);

/*
 * A policy chosen on the command line: "name[:key=val,...]" for a built-in,
 * "./path.so[:key=val,...]" (anything with a '/') for a plugin.  Parameters
 * are checked against the policy's list and defaults filled in.
 */
struct swt_policy_choice {
	char *spec;		/* in one spelling: name, then the parameters not at their defaults */
	const struct swt_policy *policy;
	void *dl_handle;	/* plugin */
	char **keys, **values;
	unsigned nparams;
};

int swt_policy_choose(const char *spec, struct swt_policy_choice *choice, struct swt_err *err);
void swt_policy_choice_release(struct swt_policy_choice *choice);
/*
 * 1 when name is a built-in and params ("key=val,..." as run.params
 * stores them; NULL or "" for none) are its defaults: a run as plain
 * --policy NAME makes it.  0 for plugins, other values, unknown keys.
 */
int swt_policy_params_are_defaults(const char *name, const char *params);
/*
 * A policy's parameters as run.params stores them: "key=val,..." in the
 * order given (swt_policy_choose's: the policy's own), "" for none.
 */
void swt_policy_params_text(const char *const *keys, const char *const *values, unsigned n,
			    char *buf, size_t size);
/* Length of a spec's name or plugin path, before its ":key=val,..." (run.policy stores it). */
size_t swt_policy_spec_name_len(const char *spec);

/* Shared by the cluster policies: the kernel's adaptive window (spec §3). */
struct swt_swapin_window {
	unsigned hits;
	uint64_t prev_offset;
	unsigned last_pages;
};

void swt_swapin_window_init(struct swt_swapin_window *w);
/* Window size in pages for a miss at off with max = 1 << page_cluster (> 1); below. */
static inline unsigned swt_swapin_window_pages(struct swt_swapin_window *w, uint64_t off,
					       unsigned max);
/* The aligned cluster window of pages around off, slot 0 and slots past the area dropped. */
void swt_cluster_window(const struct swt_fault_info *f, unsigned pages, struct swt_window *win);

/*
 * VMA readahead state (policy-vma.c), shared with auto and oracle; its
 * members are here for the engine's inline path for vma (below).
 */
struct swt_vma_ra_state {
	uint64_t prev;		/* previous fault's virtual page */
	unsigned win;		/* previous window */
	unsigned hits;		/* since the last miss, 0..63 */
};

struct swt_vma_ra {
	struct swt_map index;	/* (pid, vma_start) -> states[] */
	struct swt_vma_ra_state *states;
	size_t nr, cap;
	/* the latest lookup: faults come in runs on one VMA, so most skip the hash */
	int32_t last_pid;
	uint64_t last_start;
	size_t last_idx;	/* SIZE_MAX: none yet */
};

struct swt_vma_ra *swt_vma_ra_alloc(void);
void swt_vma_ra_free(struct swt_vma_ra *v);
int swt_vma_ra_window(struct swt_vma_ra *v, const struct swt_fault_info *f, struct swt_window *win);
struct swt_window_block;
/* The same window as a block of virtual pages (the fast paths): 0, or -SWT_ENOMEM. */
int swt_vma_ra_block(struct swt_vma_ra *v, const struct swt_fault_info *f, uint32_t capacity,
		     struct swt_window_block *b);
void swt_vma_ra_hit(struct swt_vma_ra *v, const struct swt_fault_info *f);

/*
 * Does the traced kernel use VMA readahead for a fault of these flags
 * (auto's rule)?  Shared memory never does (shmem swaps in by cluster
 * readahead); the fast paths' brief fault info lacks SWT_FAULT_SHARED, so
 * a hook that gets it leaves a fault it would call VMA to on_hit, which
 * sees it.
 */
static inline int swt_flags_use_vma_ra(uint32_t flags)
{
	return (flags & SWT_FAULT_VMA_RA_ENABLED) && !(flags & SWT_FAULT_ANY_ROTATIONAL) &&
	       (flags & SWT_FAULT_VPAGE_KNOWN) && !(flags & SWT_FAULT_SHARED);
}

/*
 * Does auto take VMA readahead for a fault of these flags (whole: with
 * SWT_FAULT_SHARED)?  A synchronous device bypasses readahead first.
 */
static inline int swt_auto_takes_vma_ra(uint32_t flags)
{
	return !(flags & SWT_FAULT_SYNCHRONOUS) && swt_flags_use_vma_ra(flags);
}

/* next power of two >= x (1 <= x <= 2^31) */
static inline unsigned swt_roundup_pow2(unsigned x)
{
	return x <= 1 ? 1 : 1u << (32 - __builtin_clz(x - 1));
}

/*
 * The kernel's __swapin_nr_pages(): the window after `hits` readahead hits
 * (adjacent: the miss is next to the previous one), at most max, at least
 * half the previous window.  Shared by the cluster and VMA paths; inline,
 * as it runs on every miss.
 */
static inline unsigned swt_ra_window_size(unsigned hits, int adjacent, unsigned max,
					  unsigned prev_pages)
{
	unsigned pages;

	if (hits == 0) {
		pages = adjacent ? 2 : 1;
	} else {
		pages = swt_roundup_pow2(hits + 2);
		if (pages < 4)
			pages = 4;
	}
	if (pages > max)
		pages = max;
	/* the window may at most halve from one miss to the next */
	if (pages < prev_pages / 2)
		pages = prev_pages / 2;
	return pages;
}

/*
 * The kernel's swapin_nr_pages() hit detector (readahead-spec.md §3).
 * Inline: it runs on every miss of adaptive and auto.
 */
static inline unsigned swt_swapin_window_pages(struct swt_swapin_window *w, uint64_t off,
					       unsigned max)
{
	unsigned h = w->hits, pages;

	w->hits = 0;
	/* slot numbers only: the device is not part of the adjacency test */
	pages = swt_ra_window_size(h, off == w->prev_offset + 1 || off + 1 == w->prev_offset, max,
				   w->last_pages);
	if (h == 0)
		w->prev_offset = off;
	w->last_pages = pages;
	return pages;
}

/*
 * The aligned cluster window of pages around slot as the block of slots
 * [*first, *first + count) it lists, count returned: what
 * swt_cluster_window lists into a window of the given capacity.
 */
static inline uint32_t swt_cluster_block(uint64_t slot, uint64_t area_slots, unsigned pages,
					 uint32_t capacity, uint64_t *first)
{
	uint64_t mask, last, n;

	*first = slot;
	if (pages <= 1)
		return 1;
	mask = (uint64_t)pages - 1;
	*first = slot & ~mask;
	last = slot | mask;
	if (*first == 0)
		*first = 1;	/* slot 0 is the swap header */
	if (area_slots && last >= area_slots)
		last = area_slots - 1;
	if (last < *first)
		return 0;
	n = last - *first + 1;
	return n > capacity ? capacity : (uint32_t)n;
}

/*
 * The replay's touch draws (engine.c, sample_touched): a page is touched
 * with probability p = 1 - exp(-mean), so a draw r uniform in [0, 1)
 * touches when r < p, that is when mean > -ln(1 - r).  exp() is the
 * dearest step of the event loop, and the branch on its answer, which no
 * predictor learns, waits for it; so each bucket of draws, [k, k + 1) /
 * SWT_TOUCH_BUCKETS, carries the means at its two ends, and a mean at or
 * past them decides the draw with one compare; only draws whose mean falls
 * between their bucket's ends need exp() (on rnd-4dev-pc0 about one in
 * SWT_TOUCH_BUCKETS: 221 of 57 000 draws with fixed, 184 of 45 000 with
 * vma).  It decides as the exact test computed
 * in doubles does: at a bucket's upper end (below 1 by at least one
 * bucket) a mean 2^-30 above it raises p by more than 2^-38, where exp()
 * and the subtraction err by a few 2^-53, and alike at the lower end.
 */
#define SWT_TOUCH_BUCKET_BITS 8
#define SWT_TOUCH_BUCKETS (1u << SWT_TOUCH_BUCKET_BITS)
#define SWT_TOUCH_MARGIN 0x1p-30

struct swt_touch_table {
	struct {
		double lo, hi;	/* a mean at or below lo: not touched; at or above hi: touched */
	} bucket[SWT_TOUCH_BUCKETS];
};

void swt_touch_table_init(struct swt_touch_table *t);

/*
 * The engine's draws (touches, due evictions): xorshift64* on *state,
 * which must not be 0.  Here so that the tests draw as the engine does.
 */
static inline uint64_t swt_rand_draw(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

/* A draw of 64 random bits as the fraction r in [0, 1) of its top 53. */
static inline double swt_draw_fraction(uint64_t draw)
{
	return (double)(draw >> 11) / 9007199254740992.0;
}

/*
 * r < 1 - exp(-mean) as computed in doubles, for the draw's r and mean >=
 * 0.  The bucket is the draw's top bits, r's own (floor(r * buckets)), so
 * that it comes with no conversion: after a branch mispredicted, the mean
 * and the bucket's ends are ready at about the same time.
 */
static inline int swt_touch_decide(const struct swt_touch_table *t, double mean, uint64_t draw)
{
	size_t k = (size_t)(draw >> (64 - SWT_TOUCH_BUCKET_BITS));

	if (mean >= t->bucket[k].hi)
		return 1;
	if (mean <= t->bucket[k].lo)
		return 0;
	return swt_draw_fraction(draw) < 1.0 - exp(-mean);
}

/*
 * Engine-side fast paths of built-in policies; internal, not part of the
 * plugin ABI (plugins, and built-ins without one, take on_miss and
 * on_hit).  The engine finds a policy's by its struct.  It calls these
 * with only the fault info's slot, area_slots and flags (and the per-run
 * members) filled in; whatever else the policy needs it asks for by
 * returning 0, without having changed any state, and the engine then
 * fills the whole info and calls on_miss or on_hit.  A cluster window
 * comes back as its block: the engine neither has it listed nor checks
 * the list.
 */
struct swt_window_block {
	uint32_t kind;		/* enum swt_window_kind */
	uint32_t count;
	uint64_t first;		/* [first, first + count): slots of the faulting area, or vpages */
	uint32_t size;		/* what on_miss sets in swt_window.size */
};

/*
 * *b as the aligned cluster window of pages around the fault (pages <= 1:
 * the faulting slot alone), listed into a window of this capacity.
 */
static inline void swt_cluster_window_block(const struct swt_fault_info *f, unsigned pages,
					    uint32_t capacity, struct swt_window_block *b)
{
	b->kind = SWT_WINDOW_SLOTS;
	b->size = pages;
	b->count = swt_cluster_block(f->slot, f->area_slots, pages, capacity, &b->first);
}

/* A VMA's state, made on its first fault (out of line); NULL when out of memory. */
struct swt_vma_ra_state *swt_vma_ra_lookup(struct swt_vma_ra *v, int32_t pid, uint64_t vma_start);

static inline struct swt_vma_ra_state *swt_vma_ra_state_of(struct swt_vma_ra *v, int32_t pid,
							   uint64_t vma_start)
{
	if (v->last_idx != SIZE_MAX && v->last_pid == pid && v->last_start == vma_start)
		return &v->states[v->last_idx];
	return swt_vma_ra_lookup(v, pid, vma_start);
}

/*
 * A miss on virtual page vp of the VMA [vma_start, vma_end) (0, 0:
 * unknown) with state s, readahead on (max = 1 << page_cluster > 1):
 * the state moves on, and *b is the window (readahead-spec.md §4) as the
 * block of virtual pages it lists into a window of this capacity.
 */
static inline void swt_vma_ra_place(struct swt_vma_ra_state *s, uint64_t vp, unsigned max,
				    uint64_t vma_start, uint64_t vma_end, unsigned page_shift,
				    uint32_t capacity, struct swt_window_block *b)
{
	uint64_t prev = s->prev, start, end, lo, hi, pmd_pages;
	unsigned pages = swt_ra_window_size(s->hits, vp == prev + 1 || vp + 1 == prev, max, s->win);

	s->prev = vp;
	s->win = pages;
	s->hits = 0;
	b->kind = SWT_WINDOW_VPAGES;
	b->size = pages;
	b->first = vp;
	b->count = 1;
	if (pages == 1)
		return;
	/*
	 * The end is placed before the start is clipped at page 0, as the
	 * kernel computes both ends first: a window that would reach below
	 * page 0 loses those pages, it does not move up.
	 */
	if (vp == prev + 1) {			/* forward stream */
		start = vp;
		end = vp + pages;
	} else if (prev == vp + 1) {		/* backward stream */
		start = vp + 1 >= pages ? vp + 1 - pages : 0;
		end = vp + 1;
	} else {				/* no direction: centred */
		start = vp >= (pages - 1) / 2 ? vp - (pages - 1) / 2 : 0;
		end = vp + (pages - (pages - 1) / 2);
	}
	/* clip, never shift: to the VMA and to the 2 MiB region of the fault */
	pmd_pages = (uint64_t)1 << (21 - page_shift);
	lo = vp & ~(pmd_pages - 1);
	hi = lo + pmd_pages;
	if (vma_end > vma_start) {
		if (lo < vma_start)
			lo = vma_start;
		if (hi > vma_end)
			hi = vma_end;
	}
	if (start < lo)
		start = lo;
	if (end > hi)
		end = hi;
	b->first = start;
	b->count = 0;
	if (end > start)
		b->count = end - start > capacity ? capacity : (uint32_t)(end - start);
}

/* A hit on virtual page vp, a page VMA readahead read: the VMA's state notes it. */
static inline void swt_vma_ra_note_hit(struct swt_vma_ra_state *s, uint64_t vp)
{
	s->prev = vp;
	if (s->hits < 63)
		s->hits++;
}

/*
 * For built-in oracles, in-process only (env->engine is the engine): a
 * mask of the n <= 64 slots from first on, or of the fault's task's
 * virtual pages from first on, whose next fault comes within horizon
 * faults -- bit i where faults_until_use (faults_until_vpage_use) would
 * give at most horizon, without a call per page.
 */
uint64_t swt_replay_slots_used_within(const struct swt_policy_env *env, uint32_t area,
				      uint64_t first, unsigned n, uint64_t horizon);
uint64_t swt_replay_vpages_used_within(const struct swt_policy_env *env, int32_t pid,
				       uint64_t first, unsigned n, uint64_t horizon);

#define SWT_FAST_FULL_INFO 1
#define SWT_FAST_FULL_INFO_VMA 2

struct swt_policy_fast {
	const struct swt_policy *policy;
	/*
	 * block_miss reads the whole fault info, filled first: SWT_FAST_FULL_INFO
	 * at every miss, SWT_FAST_FULL_INFO_VMA at those of a capture
	 * whose faults may take VMA readahead (vma_ra_enabled, no rotational
	 * area: swt_flags_use_vma_ra), 0 never (brief: slot, area_slots,
	 * flags without SWT_FAULT_SHARED).
	 */
	int full_info;
	/*
	 * A miss: 1 with *b what on_miss would list into a window of this
	 * capacity, and the same state changes; 0: call on_miss; negative:
	 * abort, as on_miss's.
	 */
	int (*block_miss)(void *inst, const struct swt_fault_info *f, uint32_t capacity,
			  struct swt_window_block *b);
	/* A hit: 1 when done as on_hit would; 0: call on_hit.  NULL: always on_hit. */
	int (*quick_hit)(void *inst, const struct swt_fault_info *f);
	/*
	 * vma's: its state, from which the engine places every window and
	 * notes every hit itself, inline (swt_vma_ra_state_of,
	 * swt_vma_ra_place, swt_vma_ra_note_hit) -- what on_miss and on_hit
	 * do, without a call nor the fault info; block_miss and quick_hit
	 * are then not called (NULL).  With full_info SWT_FAST_FULL_INFO.
	 * NULL: none.
	 */
	struct swt_vma_ra *(*vma_ra)(void *inst);
	/*
	 * auto's: the same, for the misses it sends to VMA readahead
	 * (swt_auto_takes_vma_ra) and the hits it notes there
	 * (swt_flags_use_vma_ra, as auto_on_hit); the others go to
	 * block_miss, with the whole fault info (SWT_FAST_FULL_INFO_VMA), and
	 * to quick_hit/on_hit.
	 */
	struct swt_vma_ra *(*auto_vma_ra)(void *inst);
};

extern const struct swt_policy_fast swt_fast_none, swt_fast_fixed, swt_fast_adaptive,
	swt_fast_auto, swt_fast_vma;

#endif
