/*
 * Policy "leap": the majority-trend prefetcher of Leap (Al Maruf and
 * Chowdhury, USENIX ATC'20).  It keeps the deltas between successive
 * faulting slots; a Boyer-Moore majority vote over the most recent ones
 * (a short window first, doubling up to the whole history) finds the
 * trend, and it prefetches along it: slot + d, slot + 2d, ...  The window
 * grows with the hits its last prefetch earned and halves without them.
 * With no majority it falls back to the kernel's adaptive readahead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

#define LEAP_MAX_HISTORY 256

struct leap_state {
	int64_t deltas[LEAP_MAX_HISTORY];
	unsigned history, min_window;
	unsigned n, head;		/* entries, next write */
	uint32_t last_area;
	uint64_t last_slot;
	int have_last;
	unsigned hits;			/* earned by the last trend prefetch */
	unsigned last_window;
	struct swt_swapin_window fallback;
};

static const struct swt_policy_param leap_params[] = {
	{ "history", "32", "deltas kept for the majority vote (2..256, min_window at least)" },
	{ "min_window", "4", "most recent deltas the vote starts with; doubled up to history" },
	{ NULL, NULL, NULL },
};

static void *leap_create(const struct swt_policy_env *env, const char *const *keys,
			 const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	struct leap_state *l = calloc(1, sizeof(*l));
	int history = 32, min_window = 4;

	if (!l)
		return NULL;
	for (unsigned i = 0; i < nparams; i++) {
		int *dst = !strcmp(keys[i], "history") ? &history : &min_window;

		if (swt_parse_int(values[i], dst)) {
			snprintf(err, errlen, "%s: not a number: '%s'", keys[i], values[i]);
			free(l);
			return NULL;
		}
	}
	if (history < 2 || history > LEAP_MAX_HISTORY || min_window < 1) {
		snprintf(err, errlen, "history must be 2..%d and min_window 1..history",
			 LEAP_MAX_HISTORY);
		free(l);
		return NULL;
	}
	/* history=2 alone met the default min_window of 4 */
	if (min_window > history) {
		snprintf(err, errlen, "min_window %d is above history %d: min_window must be "
			 "1..history (give a smaller min_window too)", min_window, history);
		free(l);
		return NULL;
	}
	l->history = (unsigned)history;
	l->min_window = (unsigned)min_window;
	swt_swapin_window_init(&l->fallback);
	return l;
}

static void leap_destroy(void *inst)
{
	free(inst);
}

/* The ring index before idx (no division: this runs for every delta voted on). */
static unsigned ring_prev(const struct leap_state *l, unsigned idx)
{
	return idx ? idx - 1 : l->history - 1;
}

/* Majority delta of the last w entries, or 0 when there is none. */
static int64_t majority(const struct leap_state *l, unsigned w)
{
	int64_t cand = 0;
	unsigned count = 0, i, votes = 0, idx;

	for (i = 0, idx = ring_prev(l, l->head); i < w; i++, idx = ring_prev(l, idx)) {
		int64_t d = l->deltas[idx];

		if (!count) {
			cand = d;
			count = 1;
		} else if (d == cand) {
			count++;
		} else {
			count--;
		}
	}
	for (i = 0, idx = ring_prev(l, l->head); i < w; i++, idx = ring_prev(l, idx))
		votes += l->deltas[idx] == cand;
	return votes * 2 > w ? cand : 0;
}

/* Windows are short: insertion sort, and no allocation per fault (qsort may). */
static void sort_slots(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		uint64_t x = v[i];
		unsigned j = i;

		while (j && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static int leap_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	struct leap_state *l = inst;
	unsigned max = 1u << f->page_cluster, w, pages;
	int64_t trend = 0;

	/* record the delta; across areas there is no meaningful one */
	if (l->have_last) {
		int64_t d = l->last_area == f->area ? (int64_t)(f->slot - l->last_slot) : 0;

		l->deltas[l->head] = d;
		l->head = l->head + 1 < l->history ? l->head + 1 : 0;
		if (l->n < l->history)
			l->n++;
	}
	l->have_last = 1;
	l->last_area = f->area;
	l->last_slot = f->slot;
	for (w = l->min_window; w <= l->n && !trend; w *= 2)
		trend = majority(l, w);

	if (max <= 1 || !trend) {
		l->hits = 0;
		swt_cluster_window(f, max > 1 ? swt_swapin_window_pages(&l->fallback, f->slot, max) : 1,
				   win);
		return 0;
	}
	/* prefetch window: grows with the last prefetch's hits, halves without */
	if (l->hits)
		pages = swt_roundup_pow2(l->hits + 1);
	else
		pages = l->last_window / 2;
	if (pages < 2)
		pages = 2;
	if (pages > max)
		pages = max;
	l->last_window = pages;
	l->hits = 0;
	win->kind = SWT_WINDOW_SLOTS;
	win->size = pages;
	win->count = 0;
	win->list[win->count++] = f->slot;
	for (unsigned i = 1; i < pages && win->count < win->capacity; i++) {
		int64_t s = (int64_t)f->slot + trend * (int64_t)i;

		if (s <= 0 || (f->area_slots && (uint64_t)s >= f->area_slots))
			break;
		win->list[win->count++] = (uint64_t)s;
	}
	sort_slots(win->list, win->count);
	return 0;
}

static void leap_on_hit(void *inst, const struct swt_fault_info *f)
{
	struct leap_state *l = inst;

	l->hits++;
	l->fallback.hits++;
}

const struct swt_policy swt_policy_leap = {
	.abi_version = SWT_POLICY_ABI,
	.name = "leap",
	.summary = "Leap (ATC'20): majority-vote trend over recent slot deltas, adaptive fallback",
	.params = leap_params,
	.create = leap_create,
	.destroy = leap_destroy,
	.on_miss = leap_on_miss,
	.on_hit = leap_on_hit,
};
