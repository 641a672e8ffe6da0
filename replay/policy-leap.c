/*
 * Policy "leap": the majority-trend prefetcher of Leap (Al Maruf and
 * Chowdhury, "Effectively Prefetching Remote Memory with Leap", USENIX
 * ATC'20), as the authors implemented it in their kernel (GitHub
 * SymbioticLab/Leap, mm/swap_state.c, prefetching enabled as their
 * example/leap_functionality.c does: init_swap_trend(32), then
 * set_custom_prefetch(1)).  The rules, and where each comes from:
 *
 *  - History (log_swap_trend, called from lookup_swap_cache): every swap
 *    fault logs the delta of its slot offset from the previous fault's,
 *    swap-cache hits included (do_swap_page looks the entry up once per
 *    fault, before deciding whether it missed).  The offset alone, as
 *    swp_offset gives it: a fault on another swap area logs the difference
 *    of the two offsets.  The first fault logs delta 0.  The history is a
 *    ring of `history` deltas (32), zero-filled when it is made
 *    (init_swap_trend's kzalloc): slots not yet written vote as deltas of 0.
 *
 *  - Trend (find_trend, find_trend_in_region): at a miss, a Boyer-Moore
 *    majority vote over the newest history/4 deltas, then twice as many,
 *    up to the whole history (4 times the first window: a history of 30
 *    votes over 7, 14, 28), stopping at the first window where one delta
 *    is more than half of it.  A majority delta of 0 counts as a trend: the
 *    prefetch loop then reads the faulting page alone (and skips the
 *    fallback), which is what the zero-filled history gives after a start.
 *
 *  - Window size (swapin_nr_pages, called by swapin_readahead on every
 *    miss, before the trend is looked for): the kernel's hit-counter
 *    window, the counter fed by every readahead hit -- except that with
 *    custom prefetch on, the adjacency test is skipped, so a miss with no
 *    hits reads 4 pages (the minimum roundup), not 1 or 2.  Capped at
 *    1 << page-cluster, halving at most from one miss to the next; at
 *    page-cluster 0 the faulting page alone.  The arithmetic is the
 *    kernel's (swt_ra_window_size, replay.h), shared with adaptive.
 *
 *  - Prefetch (swapin_readahead): with a trend d, the pages slot, slot + d,
 *    ... slot + (pages - 1) d (those outside the area are skipped); with
 *    none, the aligned cluster window of that size, as adaptive reads it.
 *
 * Where the paper's description differs, this follows the code.  The
 * paper sizes the prefetch window from the prefetch hits since the last
 * prefetch plus one, rounded up to a power of two and halving at most
 * (the rule this policy had before), where the code takes the kernel's
 * counter as above, + 2 and at least 4; and the code logs hits into the
 * history and votes from history/4 as said.  Not modelled: the prefetch
 * buffer and the eager freeing of swap-cache pages (add_page_to_buffer,
 * do_swap_page's try_to_free_swap), which manage the cache, not what is
 * read; the trend reads going out unplugged (blk_start_plug commented
 * out), which changes requests, not pages.  Leap's kernel (4.4) has no
 * synchronous-device bypass, and neither has this policy.
 *
 * Parameters: history (the ring, 32) and min_window, the first vote
 * window, by default history/4 as find_trend has it (at least 1: below a
 * history of 4 the authors' loop would start at 0 and never end).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

#define LEAP_MAX_HISTORY 256

struct leap_state {
	/*
	 * The ring twice over: delta i is at i and i + history, so that the
	 * newest w deltas are one run, ring[head + history - w, head + history).
	 */
	int64_t ring[2 * LEAP_MAX_HISTORY];
	unsigned history, min_window;
	unsigned head;			/* next write, 0..history-1 */
	int logged;			/* a fault was logged: last_slot holds */
	uint64_t last_slot;
	struct swt_swapin_window ra;	/* swapin_nr_pages' hits and last window */
};

static const struct swt_policy_param leap_params[] = {
	{ "history", "32", "deltas kept for the majority vote, faults and hits (2..256)" },
	{ "min_window", "auto", "newest deltas the vote starts with, doubled up to history; "
	  "auto: history/4, as Leap's find_trend" },
	{ NULL, NULL, NULL },
};

static void *leap_create(const struct swt_policy_env *env, const char *const *keys,
			 const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	struct leap_state *l;
	int history = 32, min_window = 1, min_auto = 1;

	for (unsigned i = 0; i < nparams; i++) {
		int min = !strcmp(keys[i], "min_window");

		if (min)
			min_auto = !strcmp(values[i], "auto");
		if (min && min_auto)
			continue;
		if (swt_parse_int(values[i], min ? &min_window : &history)) {
			snprintf(err, errlen, "%s: not a number%s: '%s'", keys[i],
				 min ? " or auto" : "", values[i]);
			return NULL;
		}
	}
	if (history < 2 || history > LEAP_MAX_HISTORY || min_window < 1) {
		snprintf(err, errlen, "history must be 2..%d and min_window auto or 1..history",
			 LEAP_MAX_HISTORY);
		return NULL;
	}
	if (min_window > history) {
		snprintf(err, errlen, "min_window %d is above history %d: min_window must be "
			 "auto or 1..history", min_window, history);
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->history = (unsigned)history;
	l->min_window = !min_auto ? (unsigned)min_window : history >= 4 ? (unsigned)history / 4 : 1;
	swt_swapin_window_init(&l->ra);
	return l;
}

static void leap_destroy(void *inst)
{
	free(inst);
}

/* log_swap_trend: every fault, hit or miss, logs its offset's delta. */
static inline void leap_log(struct leap_state *l, uint64_t slot)
{
	int64_t d = l->logged ? (int64_t)(slot - l->last_slot) : 0;

	l->ring[l->head] = d;
	l->ring[l->head + l->history] = d;
	l->head = l->head + 1 < l->history ? l->head + 1 : 0;
	l->last_slot = slot;
	l->logged = 1;
}

/*
 * find_trend_in_region: the delta that is more than half of the newest w,
 * if one is (*d set, 1), by Boyer-Moore's vote and a count.  The authors'
 * variant of the vote walks from the newest and restarts at the delta
 * that empties the count; for the one question asked -- is there a strict
 * majority, and which -- every order and variant answers alike.
 */
static int leap_majority(const struct leap_state *l, unsigned w, int64_t *d)
{
	const int64_t *v = l->ring + l->head + l->history - w;
	int64_t cand = v[0];
	unsigned count = 0, votes = 0, i;

	for (i = 0; i < w; i++) {
		if (!count) {
			cand = v[i];
			count = 1;
		} else if (v[i] == cand) {
			count++;
		} else {
			count--;
		}
	}
	for (i = 0; i < w; i++)
		votes += v[i] == cand;
	*d = cand;
	return votes * 2 > w;
}

/* find_trend: windows from min_window, doubling while within the history. */
static int leap_find_trend(const struct leap_state *l, int64_t *d)
{
	for (unsigned w = l->min_window; w <= l->history; w *= 2)
		if (leap_majority(l, w, d))
			return 1;
	return 0;
}

/*
 * Leap's swapin_nr_pages with custom prefetch on: no adjacency test, so no
 * hits give the 4 pages that 1 or 2 hits give (max > 1).
 */
static inline unsigned leap_nr_pages(struct leap_state *l, unsigned max)
{
	unsigned h = l->ra.hits;

	l->ra.hits = 0;
	l->ra.last_pages = swt_ra_window_size(h ? h : 1, 0, max, l->ra.last_pages);
	return l->ra.last_pages;
}

static int leap_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	struct leap_state *l = inst;
	unsigned max = 1u << f->page_cluster, pages, n;
	int64_t d;

	leap_log(l, f->slot);
	win->kind = SWT_WINDOW_SLOTS;
	if (max <= 1) {
		/* swapin_nr_pages returns 1 before touching its hits */
		win->size = 1;
		win->count = 1;
		win->list[0] = f->slot;
		return 0;
	}
	pages = leap_nr_pages(l, max);
	if (!leap_find_trend(l, &d)) {
		swt_cluster_window(f, pages, win);
		return 0;
	}
	if (d == 0) {
		/* the prefetch loop reads the faulting page pages times over */
		win->size = 1;
		win->count = 1;
		win->list[0] = f->slot;
		return 0;
	}
	/* slot + i d for i < pages, up to the first outside the area (all later are too) */
	for (n = 1; n < pages && n < win->capacity; n++) {
		int64_t s = (int64_t)f->slot + d * (int64_t)n;

		if (s <= 0 || (f->area_slots && (uint64_t)s >= f->area_slots))
			break;
	}
	win->size = pages;
	win->count = n;
	/* ascending: a falling trend is listed from its far end */
	for (unsigned i = 0; i < n; i++)
		win->list[i] = (uint64_t)((int64_t)f->slot + d * (d > 0 ? (int64_t)i
							  : (int64_t)(n - 1 - i)));
	return 0;
}

static void leap_on_hit(void *inst, const struct swt_fault_info *f)
{
	struct leap_state *l = inst;

	/* lookup_swap_cache: logged, and a readahead hit for swapin_nr_pages */
	leap_log(l, f->slot);
	l->ra.hits++;
}

const struct swt_policy swt_policy_leap = {
	.abi_version = SWT_POLICY_ABI,
	.name = "leap",
	.summary = "Leap (ATC'20), as its kernel code: majority-vote trend over the slot deltas "
		   "of recent faults, else cluster readahead",
	.params = leap_params,
	.create = leap_create,
	.destroy = leap_destroy,
	.on_miss = leap_on_miss,
	.on_hit = leap_on_hit,
};
