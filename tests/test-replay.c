/*
 * The replay engine and the kernel policies pinned to readahead-spec.md:
 * the adaptive window's arithmetic, aligned cluster windows at the edges,
 * VMA window placement and clipping, skipping free and cached slots, plug
 * merging, hits and waste, and the oracle's guarantees.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "replay.h"
#include "util.h"

extern const struct swt_policy swt_policy_none, swt_policy_fixed, swt_policy_adaptive,
	swt_policy_vma, swt_policy_auto, swt_policy_oracle, swt_policy_leap;

TEST(adaptive_window_without_hits)
{
	struct swt_swapin_window w;

	swt_swapin_window_init(&w);
	/* from boot (hits = 4): 8, then halving as misses come with no hits */
	CHECK_INT(swt_swapin_window_pages(&w, 1000, 8), 8);
	CHECK_INT(swt_swapin_window_pages(&w, 5000, 8), 4);
	CHECK_INT(swt_swapin_window_pages(&w, 9000, 8), 2);
	CHECK_INT(swt_swapin_window_pages(&w, 13000, 8), 1);
	CHECK_INT(swt_swapin_window_pages(&w, 17000, 8), 1);
	/* adjacency to the previous miss (slot numbers only) gives 2 */
	CHECK_INT(swt_swapin_window_pages(&w, 17001, 8), 2);
	CHECK_INT(swt_swapin_window_pages(&w, 17000, 8), 2);
	CHECK_INT(swt_swapin_window_pages(&w, 30, 8), 1);
}

TEST(adaptive_window_with_hits)
{
	struct swt_swapin_window w;
	static const struct { unsigned hits, pages; } cases[] = {
		{ 1, 4 }, { 2, 4 }, { 3, 8 }, { 6, 8 }, { 7, 16 }, { 14, 16 }, { 15, 32 },
	};

	for (size_t i = 0; i < SWT_ARRAY_SIZE(cases); i++) {
		swt_swapin_window_init(&w);
		w.last_pages = 0;
		w.hits = cases[i].hits;
		CHECK_INT(swt_swapin_window_pages(&w, 100, 64), cases[i].pages);
		CHECK_INT(w.hits, 0);
	}
	/* capped at 1 << page_cluster */
	swt_swapin_window_init(&w);
	w.hits = 30;
	CHECK_INT(swt_swapin_window_pages(&w, 100, 8), 8);
	/* prev_offset moves only on misses that had no hits */
	swt_swapin_window_init(&w);
	w.prev_offset = 50;
	w.hits = 2;
	swt_swapin_window_pages(&w, 70, 8);
	CHECK_INT(w.prev_offset, 50);
	CHECK_INT(swt_swapin_window_pages(&w, 51, 8), 2);
}

static struct swt_fault_info fault_at(uint64_t slot, uint64_t area_slots, unsigned pc)
{
	struct swt_fault_info f = { 0 };

	f.slot = slot;
	f.area_slots = area_slots;
	f.page_cluster = pc;
	f.page_shift = 12;
	return f;
}

/*
 * The touch draws' brackets decide as the exact test does, at the
 * crossings where a wrong margin would show (each bucket's ends, and the
 * mean at which a draw's probability is the draw, a few ulps either
 * side), and leave few draws to exp().
 */
TEST(touch_brackets_decide_as_exp_does)
{
	struct swt_touch_table t;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	size_t wrong = 0, tried = 0, exact = 0;

	swt_touch_table_init(&t);
	for (uint64_t k = 0; k < SWT_TOUCH_BUCKETS; k++) {
		/* the bucket's first draws, its last, one in the middle */
		uint64_t first = k << (64 - SWT_TOUCH_BUCKET_BITS), step = (uint64_t)1 << 11;
		uint64_t last = first + ((uint64_t)1 << (64 - SWT_TOUCH_BUCKET_BITS)) - step;
		uint64_t draws[4] = { first, first + step, last, first + (last - first) / 2 };

		for (int i = 0; i < 4; i++) {
			double r = swt_draw_fraction(draws[i]);
			double at[5] = { -log1p(-r), t.bucket[k].lo, t.bucket[k].hi,
					 -log1p(-(double)k / SWT_TOUCH_BUCKETS),
					 k + 1 < SWT_TOUCH_BUCKETS
						 ? -log1p(-(double)(k + 1) / SWT_TOUCH_BUCKETS) : 50.0 };

			CHECK_INT(draws[i] >> (64 - SWT_TOUCH_BUCKET_BITS), k);
			for (int j = 0; j < 5; j++) {
				double mean = at[j];

				if (!(mean >= 0) || isinf(mean))
					continue;
				for (int ulps = 0; ulps < 4 && mean > 0; ulps++)
					mean = nextafter(mean, 0.0);
				/* from 4 ulps below the crossing to 4 above */
				for (int ulps = 0; ulps <= 8; ulps++, mean = nextafter(mean, INFINITY)) {
					tried++;
					wrong += swt_touch_decide(&t, mean, draws[i]) !=
						 (r < 1.0 - exp(-mean));
				}
			}
		}
	}
	/* and draws as the engine makes them, against means of any size */
	for (int i = 0; i < 200000; i++) {
		uint64_t draw;
		double r, mean;
		size_t k;

		draw = swt_rand_draw(&rng);
		r = swt_draw_fraction(draw);
		k = (size_t)(r * SWT_TOUCH_BUCKETS);
		mean = (double)(i % 4000) / 400.0 + r * 1e-3;
		tried++;
		wrong += swt_touch_decide(&t, mean, draw) != (r < 1.0 - exp(-mean));
		exact += mean > t.bucket[k].lo && mean < t.bucket[k].hi;
	}
	CHECK(tried > 200000);
	CHECK_INT(wrong, 0);
	/* about one draw in SWT_TOUCH_BUCKETS falls between its bucket's ends */
	CHECK(exact < 200000 / 50);
}

TEST(cluster_window_alignment_and_edges)
{
	uint64_t list[64];
	struct swt_window win = { .capacity = 64, .list = list };
	struct swt_fault_info f = fault_at(13, 1000, 3);

	swt_cluster_window(&f, 8, &win);
	CHECK_INT(win.count, 8);
	CHECK_INT(list[0], 8);
	CHECK_INT(list[7], 15);
	/* slot 0 is the header: the first block starts at 1 */
	f = fault_at(3, 1000, 3);
	swt_cluster_window(&f, 8, &win);
	CHECK_INT(win.count, 7);
	CHECK_INT(list[0], 1);
	/* clipped to the device's last slot */
	f = fault_at(997, 998, 3);
	swt_cluster_window(&f, 8, &win);
	CHECK_INT(win.count, 6);
	CHECK_INT(list[0], 992);
	CHECK_INT(list[5], 997);
	/* a window of 1 is the faulting slot alone, never centred */
	swt_cluster_window(&f, 1, &win);
	CHECK_INT(win.count, 1);
	CHECK_INT(list[0], 997);
}

static void vma_window(struct swt_vma_ra *v, uint64_t vpage, uint64_t vs, uint64_t ve, unsigned pc,
		       uint64_t *first, uint64_t *last, unsigned *count)
{
	uint64_t list[64];
	struct swt_window win = { .capacity = 64, .list = list };
	struct swt_fault_info f = fault_at(5, 1000, pc);

	f.vpage = vpage;
	f.vma_start = vs;
	f.vma_end = ve;
	f.flags = SWT_FAULT_VPAGE_KNOWN;
	CHECK_INT(swt_vma_ra_window(v, &f, &win), 0);
	*count = win.count;
	*first = win.count ? list[0] : 0;
	*last = win.count ? list[win.count - 1] : 0;
}

/* n hits at vpage in the VMA [vs, ve) (a VMA's state is found by its start) */
static void vma_hits(struct swt_vma_ra *v, uint64_t vpage, uint64_t vs, uint64_t ve, int n)
{
	struct swt_fault_info f = fault_at(5, 1000, 3);

	f.vpage = vpage;
	f.vma_start = vs;
	f.vma_end = ve;
	f.flags = SWT_FAULT_VPAGE_KNOWN;
	for (int i = 0; i < n; i++)
		swt_vma_ra_hit(v, &f);
}

TEST(vma_window_placement)
{
	struct swt_vma_ra *v = swt_vma_ra_alloc();
	uint64_t first, last;
	unsigned n;

	/* a fresh VMA reads as 4 hits: window 8, centred ((8-1)/2 = 3 before) */
	vma_window(v, 0x10100, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 8);
	CHECK_INT(first, 0x10100 - 3);
	CHECK_INT(last, 0x10100 + 4);
	/* forward: the next page, window halves to 4 with no hits: [v, v+4) */
	vma_window(v, 0x10101, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 4);
	CHECK_INT(first, 0x10101);
	CHECK_INT(last, 0x10104);
	/* backward: (v-win, v]; 2, from adjacency and from halving the 4 alike */
	vma_window(v, 0x10100, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 2);
	CHECK_INT(first, 0x100ff);
	CHECK_INT(last, 0x10100);
	swt_vma_ra_free(v);
}

/*
 * A miss next to the previous one counts as adjacent in either direction
 * (readahead-spec.md §4, §3: prev ± 1): with the window down to 1, where
 * halving gives no more, a backward step reads 2 as a forward one does.
 */
TEST(vma_adjacency_counts_both_ways)
{
	struct swt_vma_ra *v = swt_vma_ra_alloc();
	uint64_t first, last;
	unsigned n;

	/* misses far apart with no hits: 8, 4, 2, 1 */
	vma_window(v, 0x10100, 0x10000, 0x20000, 3, &first, &last, &n);
	vma_window(v, 0x10180, 0x10000, 0x20000, 3, &first, &last, &n);
	vma_window(v, 0x10120, 0x10000, 0x20000, 3, &first, &last, &n);
	vma_window(v, 0x10160, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 1);
	/* one page down: 2, placed backward */
	vma_window(v, 0x1015f, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 2);
	CHECK_INT(first, 0x1015e);
	CHECK_INT(last, 0x1015f);
	/* down to 1 again (halving the 2), then one page up: 2, placed forward */
	vma_window(v, 0x10170, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 1);
	vma_window(v, 0x10171, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 2);
	CHECK_INT(first, 0x10171);
	CHECK_INT(last, 0x10172);
	swt_vma_ra_free(v);
}

/*
 * A hit rewrites its VMA's previous fault address (readahead-spec.md §4):
 * a miss just past a run of hits continues their stream, placed forward
 * or backward from the miss, where the last miss's address would have
 * left it unadjacent and centred.
 */
TEST(vma_hit_moves_the_previous_address)
{
	struct swt_vma_ra *v = swt_vma_ra_alloc();
	uint64_t first, last;
	unsigned n;

	vma_window(v, 0x10100, 0x10000, 0x20000, 3, &first, &last, &n);
	for (uint64_t vp = 0x10101; vp <= 0x10104; vp++)
		vma_hits(v, vp, 0x10000, 0x20000, 1);
	/* 4 hits: window 8, forward from the last hit: [v, v+8) */
	vma_window(v, 0x10105, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 8);
	CHECK_INT(first, 0x10105);
	CHECK_INT(last, 0x1010c);
	for (uint64_t vp = 0x10104; vp >= 0x10101; vp--)
		vma_hits(v, vp, 0x10000, 0x20000, 1);
	/* and coming down: (v-8, v] */
	vma_window(v, 0x10100, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(n, 8);
	CHECK_INT(first, 0x100f9);
	CHECK_INT(last, 0x10100);
	swt_vma_ra_free(v);
}

TEST(vma_window_clipping)
{
	struct swt_vma_ra *v = swt_vma_ra_alloc();
	uint64_t first, last;
	unsigned n;

	/* clipped to the VMA start, not shifted */
	vma_window(v, 0x10001, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(first, 0x10000);
	CHECK_INT(last, 0x10005);
	CHECK_INT(n, 6);
	swt_vma_ra_free(v);

	/* clipped to the 2 MiB region (512 pages) around the fault */
	v = swt_vma_ra_alloc();
	vma_window(v, 0x10200, 0x10000, 0x20000, 3, &first, &last, &n);
	CHECK_INT(first, 0x10200);
	CHECK_INT(last, 0x10204);
	swt_vma_ra_free(v);

	/*
	 * the window is at most 1 << min(page_cluster, 5): at page-cluster 8,
	 * 40 hits ask for 64 pages (room for them in the list) and get 32
	 */
	v = swt_vma_ra_alloc();
	vma_window(v, 0x10100, 0x10000, 0x20000, 8, &first, &last, &n);
	CHECK_INT(n, 8);	/* fresh: hits 4 -> 8, below the cap of 32 */
	vma_hits(v, 0x10180, 0x10000, 0x20000, 40);
	vma_window(v, 0x10100, 0x10000, 0x20000, 8, &first, &last, &n);
	CHECK_INT(n, 32);
	CHECK_INT(first, 0x10100 - 15);
	CHECK_INT(last, 0x10100 + 16);
	swt_vma_ra_free(v);

	/* page-cluster 0: the faulting page only */
	v = swt_vma_ra_alloc();
	vma_window(v, 0x10100, 0x10000, 0x20000, 0, &first, &last, &n);
	CHECK_INT(n, 1);
	swt_vma_ra_free(v);
}

/*
 * Near page 0 (no VMA bounds known) a window that would start below it
 * loses those pages and keeps its end, as the kernel places both ends
 * before clipping: it is not shifted up.
 */
TEST(vma_window_clipped_at_page_zero)
{
	struct swt_vma_ra *v = swt_vma_ra_alloc();
	uint64_t first, last;
	unsigned n;

	/* centred, window 8 (3 before): [2-3, 2+5) -> [0, 7), not [0, 8) */
	vma_window(v, 2, 0, 0, 3, &first, &last, &n);
	CHECK_INT(first, 0);
	CHECK_INT(last, 6);
	CHECK_INT(n, 7);
	/* backward from 1 (previous fault at 2, adjacent: window 2): (1-2, 1] -> [0, 1] */
	vma_window(v, 1, 0, 0, 3, &first, &last, &n);
	CHECK_INT(first, 0);
	CHECK_INT(last, 1);
	CHECK_INT(n, 2);
	swt_vma_ra_free(v);

	/* backward with a wide window: 15 hits then a miss at 5 coming down from 6 */
	v = swt_vma_ra_alloc();
	vma_window(v, 6, 0, 0, 5, &first, &last, &n);
	vma_hits(v, 6, 0, 0, 15);
	vma_window(v, 5, 0, 0, 5, &first, &last, &n);
	/* window 32 (hits 15: next power of two of 17), (5-32, 5] -> [0, 5] */
	CHECK_INT(first, 0);
	CHECK_INT(last, 5);
	CHECK_INT(n, 6);
	swt_vma_ra_free(v);
}

/* ---- the engine on crafted streams -------------------------------------- */

struct scenario {
	struct swt_replay_input in;
	struct swt_replay_area area;
	struct swt_replay_fault faults[1024];
	struct swt_replay_swapout outs[1024];
	struct swt_replay_vma vma;
	uint64_t ts;
};

static void scenario_init(struct scenario *s, int rotational)
{
	memset(s, 0, sizeof(*s));
	s->area.id = 0;
	snprintf(s->area.dev, sizeof(s->area.dev), "8:0");
	s->area.slots = 1000;
	s->area.rotational = rotational;
	s->in.areas = &s->area;
	s->in.nr_areas = 1;
	s->in.faults = s->faults;
	s->in.outs = s->outs;
	s->in.page_shift = 12;
	s->in.first_ns = 0;
	s->in.vma_ra_enabled = 1;
	s->vma.pid = 1;
	s->vma.start = 0x1000;
	s->vma.end = 0x2000;
	s->in.vmas = &s->vma;
	s->in.nr_vmas = 1;
	s->ts = 1000;
}

static void out(struct scenario *s, uint64_t slot)
{
	struct swt_replay_swapout *o = &s->outs[s->in.nr_outs++];

	o->ts = s->ts += 1000;
	o->slot = slot;
	o->area = 0;
	o->pid = 1;
}

static void fault(struct scenario *s, uint64_t slot, uint64_t vpage)
{
	struct swt_replay_fault *f = &s->faults[s->in.nr_faults++];

	f->ts = s->ts += 1000;
	f->slot = slot;
	f->vpage = vpage;
	f->area = 0;
	f->pid = 1;
	f->vma = vpage ? 0 : -1;
	f->out = -1;
}

/* The settings of a run with the defaults of these tests, for a test to change. */
static struct swt_replay_config config(const struct swt_policy *p, unsigned pc, uint64_t cache)
{
	return (struct swt_replay_config){
		.policy = p, .policy_spec = p->name, .page_cluster = pc, .cache_pages = cache,
		.inactive_fraction = 0.5, .max_request_pages = 320, .layout_name = "traced",
	};
}

/* A run with one parameter (key NULL: none). */
static struct swt_replay_result *run_with(struct scenario *s, const struct swt_policy *p,
					  unsigned pc, uint64_t cache, const char *key,
					  const char *value)
{
	const char *const keys[] = { key }, *const values[] = { value };
	struct swt_replay_config cfg = config(p, pc, cache);
	struct swt_replay_result *r = NULL;
	struct swt_err err = { 0 };

	if (key) {
		cfg.keys = keys;
		cfg.values = values;
		cfg.nparams = 1;
	}
	CHECK_INT(swt_replay_run(&s->in, &cfg, &r, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	return r;
}

static struct swt_replay_result *run(struct scenario *s, const struct swt_policy *p, unsigned pc,
				     uint64_t cache)
{
	return run_with(s, p, pc, cache, NULL, NULL);
}

/* run(), or with general through on_miss/on_hit as plugins go (SWT_TEST_NO_FAST_PATH) */
static struct swt_replay_result *run_path(struct scenario *s, const struct swt_policy *p,
					  unsigned pc, uint64_t cache, int general)
{
	struct swt_replay_result *r;

	if (general)
		setenv("SWT_TEST_NO_FAST_PATH", "1", 1);
	r = run(s, p, pc, cache);
	unsetenv("SWT_TEST_NO_FAST_PATH");
	return r;
}

/*
 * The per-second series hold the seconds with faults only, in order, one
 * point each, whatever the span (a day and more) and whatever order the
 * input's faults come in; their sums are the run's counts.
 */
TEST(series_hold_the_seconds_with_faults)
{
	static const uint64_t seconds[][6] = {
		{ 0, 0, 5, 100000, 100000, 3000000 },	/* in time order, over a month */
		{ 7, 3, 7, 3, 9, 3 },			/* out of order (an input built so) */
	};
	static const uint64_t want_second[][3] = { { 0, 5, 100000 }, { 3, 7, 9 } };
	static const uint64_t want_faults[][3] = { { 2, 1, 2 }, { 3, 2, 1 } };

	for (size_t c = 0; c < SWT_ARRAY_SIZE(seconds); c++) {
		struct scenario s;
		struct swt_replay_result *r;
		uint64_t faults = 0, hits = 0, pages_read = 0;

		scenario_init(&s, 1);
		for (uint64_t slot = 8; slot <= 15; slot++)
			out(&s, slot);
		for (size_t i = 0; i < 6; i++) {
			fault(&s, 8 + i, 0);
			s.faults[i].ts = seconds[c][i] * 1000000000ull + 100000 + i;
		}
		r = run(&s, &swt_policy_fixed, 3, 1000);
		CHECK_INT(r->total.faults, 6);
		CHECK_INT(r->total.hits, 5);
		/* the last second's fault alone in a month: the series did not take a point a second */
		CHECK_INT(r->parts[0].nr_seconds, 3 + (c == 0));
		for (size_t k = 0; k < 3; k++) {
			CHECK_INT(r->parts[0].series[k].second, want_second[c][k]);
			CHECK_INT(r->parts[0].series[k].faults, want_faults[c][k]);
		}
		for (size_t k = 0; k < r->parts[0].nr_seconds; k++) {
			const struct swt_replay_series_point *pt = &r->parts[0].series[k];

			CHECK_INT(pt->misses, pt->faults - pt->hits);
			faults += pt->faults;
			hits += pt->hits;
			pages_read += pt->pages_read;
		}
		CHECK_INT(faults, r->total.faults);
		CHECK_INT(hits, r->total.hits);
		CHECK_INT(pages_read, r->total.pages_read);
		swt_replay_result_free(r);
	}
}

/*
 * A cluster window reads the allocated slots that are not cached (§2.3):
 * a free slot is skipped and splits the run, and a second miss in the
 * block reads past pages cached by the first -- read ahead and unused,
 * or mapped -- without reading them again.  At page-cluster 3 the block
 * is read from its bit mask, at 7 (128 slots) slot by slot; with the fast
 * paths and through on_miss.
 */
TEST(fixed_skips_free_and_cached_slots)
{
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 1);
	out(&s, 200);	/* never read: the slot table reaches past the 128-slot block */
	/* slots 8..15 form one aligned block; 11 is written only after the first miss */
	for (uint64_t slot = 8; slot <= 15; slot++)
		if (slot != 11)
			out(&s, slot);
	fault(&s, 13, 0);	/* miss: reads 8-10, 12-15 (11 free) */
	fault(&s, 9, 0);	/* hit */
	fault(&s, 15, 0);	/* hit */
	out(&s, 11);
	fault(&s, 11, 0);	/* miss: 8, 10, 12, 14 read ahead, 9, 13, 15 mapped: 11 alone */
	for (unsigned pc = 3; pc <= 7; pc += 4)
		for (int general = 0; general <= 1; general++) {
			r = run_path(&s, &swt_policy_fixed, pc, 1000, general);
			CHECK_INT(r->total.faults, 4);
			CHECK_INT(r->total.misses, 2);
			CHECK_INT(r->total.hits, 2);
			CHECK_INT(r->total.pages_read, 8);
			CHECK_INT(r->total.ra_pages, 6);
			CHECK_INT(r->total.ra_hits, 2);
			/* the free slot splits the run: 8-10 and 12-15, two requests; then 11 */
			CHECK_INT(r->total.read_requests, 3);
			CHECK_INT(r->total.read_merges, 5);
			CHECK_INT(r->parts[0].request_hist[3], 1);
			CHECK_INT(r->parts[0].request_hist[4], 1);
			CHECK_INT(r->parts[0].request_hist[1], 1);
			CHECK_INT(r->parts[0].window_hist[1u << pc], 2);
			CHECK_INT(r->ra_unused_at_end, 4);
			swt_replay_result_free(r);
		}

	/* none reads the faulting page alone, even where a fault comes first */
	scenario_init(&s, 1);
	for (uint64_t slot = 8; slot <= 15; slot++)
		out(&s, slot);
	fault(&s, 13, 0);
	fault(&s, 200, 0);	/* elsewhere */
	r = run(&s, &swt_policy_none, 3, 1000);
	CHECK_INT(r->total.pages_read, 2);
	CHECK_INT(r->total.ra_pages, 0);
	CHECK_INT(r->total.read_requests, 2);
	CHECK_INT(r->total.read_merges, 0);
	swt_replay_result_free(r);
}

TEST(none_reads_demand_pages_only)
{
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 1);
	for (uint64_t slot = 1; slot <= 40; slot++)
		out(&s, slot);
	for (uint64_t slot = 1; slot <= 40; slot += 3)
		fault(&s, slot, 0);
	r = run(&s, &swt_policy_none, 3, 1000);
	CHECK_INT(r->total.pages_read, r->total.faults);
	CHECK_INT(r->total.ra_pages, 0);
	CHECK_INT(r->total.hits, 0);
	CHECK_INT(r->total.read_requests, r->total.faults);
	swt_replay_result_free(r);
}

TEST(unused_readahead_is_evicted_and_counted_wasted)
{
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 1);
	for (uint64_t slot = 1; slot <= 64; slot++)
		out(&s, slot);
	/* each miss reads an 8-slot block; memory of 8 pages keeps 4 inactive */
	for (uint64_t slot = 8; slot <= 56; slot += 8)
		fault(&s, slot, 0);
	r = run(&s, &swt_policy_fixed, 3, 8);
	CHECK_INT(r->total.misses, 7);
	CHECK_INT(r->total.ra_pages, 49);
	CHECK_INT(r->total.ra_hits, 0);
	CHECK(r->total.ra_wasted >= 40);
	CHECK_INT(r->total.ra_wasted + r->ra_unused_at_end, 49);
	swt_replay_result_free(r);
}

/*
 * A page the trace shows faulting again (same slot, no write between) was
 * evicted again before that fault: once activated, the model lets it go at
 * a drawn time before the fault, so that readahead around it can read it
 * back -- where it used to stay mapped until the fault.
 */
TEST(activated_page_that_faults_again_is_evicted_before)
{
	struct scenario s;
	struct swt_replay_config cfg = config(&swt_policy_fixed, 1, 500);
	struct swt_replay_result *r = NULL;
	struct swt_err err = { 0 };

	cfg.inactive_fraction = 0.1;
	scenario_init(&s, 1);
	out(&s, 100);		/* the page */
	out(&s, 101);		/* its neighbour in the 2-slot window */
	fault(&s, 100, 0);	/* mapped; 101 read ahead, later evicted unused */
	/*
	 * 400 pages, each written and faulted at once (their window
	 * neighbours are never written): the inactive list of 50 pages turns
	 * over 8 times, so the page is spared, then found touched (the swapped
	 * out pages are few: the drawn touch rate is high) and activated.  The
	 * active list (450) never fills.
	 */
	for (uint64_t i = 0; i < 400; i++) {
		out(&s, 200 + 2 * i);
		fault(&s, 200 + 2 * i, 0);
	}
	fault(&s, 101, 0);	/* a miss; its window reads 100 if it was evicted */
	fault(&s, 100, 0);	/* the page again */
	CHECK_INT(swt_replay_run(&s.in, &cfg, &r, &err), 0);
	CHECK_INT(r->total.faults, 403);
	/* the page left memory before its fault, and 101's miss read it back */
	CHECK_INT(r->total.hits, 1);
	CHECK_INT(r->total.misses, 402);
	swt_replay_result_free(r);
}

/*
 * A page that leaves the middle of an LRU list leaves a dead node in its
 * ring, and a ring full of dead nodes is compacted: the live pages move,
 * and their slot words must follow them, or a later hit marks the wrong
 * node and the page it hit stays "unused".
 */
TEST(lru_ring_compaction_keeps_pages_and_their_slots)
{
	for (int wide = 0; wide <= 1; wide++) {
		struct scenario s;
		struct swt_replay_result *r;

		if (wide)
			setenv("SWT_TEST_WIDE_NODES", "1", 1);
		scenario_init(&s, 1);
		/* a page written, faulted and written again: cached, then a dead node */
		for (uint64_t i = 0; i < 10; i++) {
			out(&s, 600 + 2 * i);
			fault(&s, 600 + 2 * i, 0);
			out(&s, 600 + 2 * i);
		}
		out(&s, 100);
		out(&s, 101);
		fault(&s, 100, 0);	/* mapped; 101 read ahead, behind 10 dead nodes */
		/* 400 more dead nodes: the inactive ring (at most a few hundred) compacts */
		for (uint64_t i = 0; i < 400; i++) {
			out(&s, 600 + 2 * (i % 100));
			fault(&s, 600 + 2 * (i % 100), 0);
			out(&s, 600 + 2 * (i % 100));
		}
		fault(&s, 101, 0);	/* the page read ahead: a hit */
		/* memory of 40 pages, 20 inactive: nothing is ever evicted */
		r = run(&s, &swt_policy_fixed, 1, 40);
		CHECK_INT(r->total.faults, 412);
		CHECK_INT(r->total.hits, 1);
		CHECK_INT(r->total.ra_pages, 1);
		CHECK_INT(r->total.ra_wasted, 0);
		CHECK_INT(r->ra_unused_at_end, 0);
		swt_replay_result_free(r);
		unsetenv("SWT_TEST_WIDE_NODES");
	}
}

/*
 * The hits of a sequential stream keep the adaptive window at its full
 * size (§3).  auto on a rotational area is the same cluster readahead, its
 * hits feeding the same counter: it reads the same, with the fast paths
 * (quick_hit) and through on_hit alike.
 */
TEST(adaptive_and_auto_grow_with_hits_in_a_sequential_stream)
{
	const struct swt_policy *policies[] = { &swt_policy_adaptive, &swt_policy_auto };
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 1);
	for (uint64_t slot = 1; slot <= 60; slot++)
		out(&s, slot);
	for (uint64_t slot = 1; slot <= 60; slot++)
		fault(&s, slot, 0x1100 + slot);
	for (size_t p = 0; p < SWT_ARRAY_SIZE(policies); p++)
		for (int general = 0; general <= 1; general++) {
			r = run_path(&s, policies[p], 3, 1000, general);
			/* boot window 8 at slot 1 reads 1..7, hits keep the window at 8 */
			CHECK_INT(r->total.faults, 60);
			CHECK_INT(r->total.misses, 8);
			CHECK_INT(r->total.hits, 52);
			CHECK_INT(r->parts[0].window_hist[8], 8);
			CHECK_NEAR(swt_metrics_accuracy(&r->total), 1.0, 1e-9);
			swt_replay_result_free(r);
		}
}

TEST(vma_reads_virtual_neighbours_on_any_slot)
{
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 0);
	/* pages 0x1100.. were swapped to scattered slots */
	static const uint64_t slots[] = { 500, 20, 301, 77, 640, 12, 90, 3 };

	for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
		out(&s, slots[i]);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
		fault(&s, slots[i], 0x1100 + i);
	r = run(&s, &swt_policy_vma, 3, 1000);
	/* a fresh VMA: window 8 centred on 0x1100, clipped to the VMA? no: 0x10fd..0x1104 */
	CHECK_INT(r->total.misses, 2);
	CHECK_INT(r->total.hits, 6);
	/* virtually adjacent but physically scattered pages do not merge */
	CHECK_INT(r->total.read_merges, 0);
	swt_replay_result_free(r);
	/* on a rotational device auto uses cluster readahead instead */
	scenario_init(&s, 1);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
		out(&s, slots[i]);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
		fault(&s, slots[i], 0x1100 + i);
	r = run(&s, &swt_policy_auto, 3, 1000);
	CHECK(r->total.hits < 6);
	swt_replay_result_free(r);
}

/*
 * Shared memory (shmem, tmpfs, memfd: 's' in the maps) swaps in by cluster
 * readahead whatever vma_ra_enabled says: auto reads the scattered pages
 * of the test above by slot there, as vma reads them by address
 * elsewhere, through the fast paths and without them alike.
 */
TEST(auto_reads_shared_memory_by_cluster)
{
	static const uint64_t slots[] = { 500, 20, 301, 77, 640, 12, 90, 3 };
	struct scenario s;
	struct swt_replay_result *r;

	for (int shared = 0; shared <= 1; shared++)
		for (int general = 0; general <= 1; general++) {
			scenario_init(&s, 0);
			s.vma.shared = shared;
			/* and a run of slots next to the first fault's, never faulted by address */
			for (uint64_t slot = 496; slot < 504; slot++)
				out(&s, slot);
			for (size_t i = 1; i < SWT_ARRAY_SIZE(slots); i++)
				out(&s, slots[i]);
			for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
				fault(&s, slots[i], 0x1100 + i);
			for (uint64_t slot = 497; slot < 504; slot++)
				if (slot != 500)
					fault(&s, slot, 0x1200 + slot);
			r = run_path(&s, &swt_policy_auto, 3, 1000, general);
			if (!shared) {
				/* VMA: the first window reads the virtual neighbours 0x1101..0x1104 */
				CHECK(r->parts[0].vpage_window_hist[8] >= 1);
				CHECK(r->total.hits >= 4);
			} else {
				/* cluster: slot 500's aligned block 496..503 holds the later faults 497..503 */
				CHECK_INT(r->parts[0].vpage_window_hist[8], 0);
				CHECK_INT(r->parts[0].window_hist[8], 1);
				CHECK_INT(r->total.hits, 6);
			}
			swt_replay_result_free(r);
		}
}

/*
 * One rotational swap area switches the whole system to cluster readahead
 * (§1): auto reads the scattered pages of the test
 * vma_reads_virtual_neighbours_on_any_slot by slot on an SSD when another
 * area is rotational -- its own area's kind does not decide -- and by
 * address when none is.
 */
TEST(auto_takes_cluster_readahead_when_any_area_is_rotational)
{
	static const uint64_t slots[] = { 500, 20, 301, 77, 640, 12, 90, 3 };
	struct scenario s;
	struct swt_replay_area areas[2];
	struct swt_replay_result *r;

	for (int other_rotational = 0; other_rotational <= 1; other_rotational++)
		for (int general = 0; general <= 1; general++) {
			scenario_init(&s, 0);
			/* a second area, no page on it: the faults are all on the SSD */
			areas[0] = areas[1] = s.area;
			areas[1].id = 1;
			snprintf(areas[1].dev, sizeof(areas[1].dev), "8:16");
			areas[1].rotational = other_rotational;
			s.in.areas = areas;
			s.in.nr_areas = 2;
			for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
				out(&s, slots[i]);
			for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
				fault(&s, slots[i], 0x1100 + i);
			r = run_path(&s, &swt_policy_auto, 3, 1000, general);
			if (other_rotational) {
				/* cluster: no two of the slots share an aligned block of 8 */
				CHECK_INT(r->parts[0].vpage_window_hist[8], 0);
				CHECK_INT(r->parts[0].window_hist[8], 1);
				CHECK_INT(r->total.hits, 0);
			} else {
				/* VMA: two misses, windows of 8 by address */
				CHECK_INT(r->parts[0].vpage_window_hist[8], 2);
				CHECK_INT(r->total.hits, 6);
			}
			swt_replay_result_free(r);
		}
}

/*
 * On a synchronous device (zram, pmem, brd) a fault skips the swap cache
 * and readahead (§1): auto reads the faulting page alone, whether it
 * would have taken VMA or cluster readahead, where vma and adaptive, which
 * do not model the bypass, read ahead on the same stream.
 */
TEST(auto_reads_the_faulting_page_alone_on_synchronous_devices)
{
	struct scenario s;
	struct swt_replay_result *r;

	for (int rotational = 0; rotational <= 1; rotational++) {
		scenario_init(&s, rotational);
		s.area.synchronous = 1;
		for (uint64_t slot = 1; slot <= 16; slot++)
			out(&s, slot);
		for (uint64_t slot = 1; slot <= 16; slot++)
			fault(&s, slot, 0x1100 + slot);
		for (int general = 0; general <= 1; general++) {
			r = run_path(&s, &swt_policy_auto, 3, 1000, general);
			CHECK_INT(r->total.misses, 16);
			CHECK_INT(r->total.ra_pages, 0);
			CHECK_INT(r->total.pages_read, 16);
			CHECK_INT(r->total.read_requests, 16);
			CHECK_INT(r->parts[0].window_hist[1], 16);
			swt_replay_result_free(r);
		}
		r = run(&s, rotational ? &swt_policy_adaptive : &swt_policy_vma, 3, 1000);
		CHECK(r->total.hits > 0);
		swt_replay_result_free(r);
	}
}

/*
 * In auto, a hit in VMA mode counts for its VMA only; the cluster counter
 * (swapin_nr_pages' global hits, §3) counts the hits of cluster-mode
 * faults, here on shared memory.  Cluster misses with no hits bring its
 * window down to 1; VMA hits in between must not open it again.
 */
TEST(auto_vma_hits_leave_the_cluster_counter_alone)
{
	struct scenario s;
	struct swt_replay_vma vmas[2];
	struct swt_replay_result *r;

	scenario_init(&s, 0);
	vmas[0] = s.vma;
	vmas[1] = (struct swt_replay_vma){ .pid = 1, .shared = 1, .start = 0x3000, .end = 0x4000 };
	s.in.vmas = vmas;
	s.in.nr_vmas = 2;
	/* shared memory, cluster misses far apart: windows 8, 4, 2, 1 over lone slots */
	for (uint64_t slot = 100; slot <= 400; slot += 100) {
		out(&s, slot);
		fault(&s, slot, 0x3000 + slot);
		s.faults[s.in.nr_faults - 1].vma = 1;
	}
	/* private memory: a VMA miss at 0x1100 reads 0x1101..0x1104, four VMA hits */
	for (uint64_t i = 0; i < 5; i++)
		out(&s, 520 + 10 * i);
	for (uint64_t i = 0; i < 5; i++)
		fault(&s, 520 + 10 * i, 0x1100 + i);
	/* shared memory again, its block's other slots swapped out: still window 1 */
	for (uint64_t slot = 600; slot <= 607; slot++)
		out(&s, slot);
	fault(&s, 600, 0x3600);
	s.faults[s.in.nr_faults - 1].vma = 1;
	for (int general = 0; general <= 1; general++) {
		r = run_path(&s, &swt_policy_auto, 3, 1000, general);
		CHECK_INT(r->total.hits, 4);
		CHECK_INT(r->parts[0].vpage_window_hist[8], 1);
		CHECK_INT(r->parts[0].window_hist[1], 2);
		CHECK_INT(r->total.ra_pages, 4);
		CHECK_INT(r->total.pages_read, 10);
		swt_replay_result_free(r);
	}
}

/*
 * The faulting page's PTE holds the entry it faults on, not the one it had
 * at its previous fault: a page swapped in, evicted, written to another
 * slot and faulted again once had its old slot read ahead as well.
 */
TEST(vma_faulting_page_reads_its_own_entry)
{
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 0);
	out(&s, 10);
	fault(&s, 10, 0x1100);
	out(&s, 10);		/* slot 10 now holds another page */
	out(&s, 50);		/* 0x1100 evicted dirty to slot 50 */
	fault(&s, 50, 0x1100);
	for (unsigned pc = 0; pc <= 3; pc += 3) {
		r = run(&s, &swt_policy_vma, pc, 1000);
		CHECK_INT(r->total.misses, 2);
		CHECK_INT(r->total.pages_read, 2);
		CHECK_INT(r->total.ra_pages, 0);
		swt_replay_result_free(r);
	}
}

/* Two results alike in every count a VMA window's reads decide. */
static void check_same_reads(const struct swt_replay_result *a, const struct swt_replay_result *b)
{
	CHECK_INT(a->total.misses, b->total.misses);
	CHECK_INT(a->total.hits, b->total.hits);
	CHECK_INT(a->total.pages_read, b->total.pages_read);
	CHECK_INT(a->total.ra_wasted, b->total.ra_wasted);
	CHECK_INT(a->total.read_requests, b->total.read_requests);
	CHECK_INT(a->total.ra_pages, b->total.ra_pages);
	CHECK_INT(a->total.ra_hits, b->total.ra_hits);
	CHECK_INT(a->total.read_merges, b->total.read_merges);
	for (unsigned k = 0; k <= a->max_request_pages && k <= b->max_request_pages; k++)
		CHECK_INT(a->parts[0].request_hist[k], b->parts[0].request_hist[k]);
	for (unsigned k = 0; k <= SWT_REPLAY_MAX_WINDOW; k++) {
		CHECK_INT(a->parts[0].window_hist[k], b->parts[0].window_hist[k]);
		CHECK_INT(a->parts[0].vpage_window_hist[k], b->parts[0].vpage_window_hist[k]);
	}
}

/*
 * The run keeps a VMA's PTEs side by side (one pass over a window's
 * entries) when its table is at most four times its faulted pages and
 * none of them is faulted in another VMA; otherwise a window's pages are
 * looked up one by one.  A random stream of swap-outs and faults on 24
 * pages replays alike: in a VMA of 24 pages (side by side), of 4 096
 * (looked up), the same pages under two VMAs of one range (looked up:
 * a page is in both), and through on_miss (the listed windows); with
 * vma and with auto, whose VMA path has a fast path of its own.
 */
TEST(vma_ptes_side_by_side_read_as_looked_up)
{
	struct scenario s;
	struct swt_replay_vma two[2] = { { .pid = 1, .start = 0x1000, .end = 0x1018 },
					 { .pid = 1, .start = 0x1000, .end = 0x1018 } };
	int64_t slot_of[24];	/* -1: in memory */
	int taken[256] = { 0 };
	uint32_t x = 2463534242u;
	uint64_t last = 0;

	scenario_init(&s, 0);
	for (int i = 0; i < 24; i++)
		slot_of[i] = -1;
	while (s.in.nr_faults < 600 && s.in.nr_outs < 600) {
		int page, tries;

		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		page = (int)(x >> 8) % 24;
		if (x & 1) {
			/* evicted: to the slot after the last one written if free, else anywhere free */
			uint64_t slot = last + 1 < 256 && !taken[last + 1] ? last + 1 : (x >> 16) % 256;

			for (tries = 0; slot_of[page] >= 0 && tries < 24; tries++)
				page = (page + 1) % 24;
			for (tries = 0; taken[slot] && tries < 256; tries++)
				slot = (slot + 1) % 256;
			if (slot_of[page] >= 0 || taken[slot])
				continue;
			out(&s, slot);
			taken[slot] = 1;
			slot_of[page] = (int64_t)slot;
			last = slot;
		} else if (slot_of[page] >= 0) {
			fault(&s, (uint64_t)slot_of[page], 0x1000 + (uint64_t)page);
			taken[slot_of[page]] = 0;
			slot_of[page] = -1;
		}
	}
	CHECK(s.in.nr_faults > 200);
	for (unsigned k = 0; k < 2 * 6; k++) {
		/* auto takes VMA windows here: not rotational, vma_ra_enabled */
		const struct swt_policy *p = k < 6 ? &swt_policy_vma : &swt_policy_auto;
		unsigned pc = k % 6;
		struct swt_replay_result *side, *other;

		s.vma.start = 0x1000;
		s.vma.end = 0x1018;
		side = run(&s, p, pc, 16);
		CHECK(side->total.hits > 0 || pc == 0);
		other = run_path(&s, p, pc, 16, 1);
		check_same_reads(side, other);
		swt_replay_result_free(other);
		/* clipped to the VMA or not, no window finds a PTE past page 24 */
		s.vma.end = 0x2000;
		other = run(&s, p, pc, 16);
		check_same_reads(side, other);
		swt_replay_result_free(other);
		s.in.vmas = two;
		s.in.nr_vmas = 2;
		for (size_t i = 0; i < s.in.nr_faults; i++)
			s.faults[i].vma = (int32_t)(i % 2);
		other = run(&s, p, pc, 16);
		check_same_reads(side, other);
		swt_replay_result_free(other);
		s.in.vmas = &s.vma;
		s.in.nr_vmas = 1;
		for (size_t i = 0; i < s.in.nr_faults; i++)
			s.faults[i].vma = 0;
		swt_replay_result_free(side);
	}
}

/*
 * vma's and auto's VMA windows placed by the engine from the policy's
 * state (their fast paths) and through on_miss/on_hit (as a plugin's)
 * give the same run on a random stream of two tasks' VMAs (the second
 * shared memory, which auto reads by cluster), pages with an address and
 * no VMA known, and pages faulted without an address; auto on a
 * synchronous device too (no readahead): every count, and each histogram.
 */
TEST(vma_inline_windows_as_on_miss)
{
	struct scenario s;
	struct swt_replay_vma vmas[2] = { { .pid = 1, .start = 0x1000, .end = 0x1010 },
					  { .pid = 2, .start = 0x5000, .end = 0x5008, .shared = 1 } };
	int64_t slot_of[32];	/* -1: in memory */
	int taken[256] = { 0 };
	uint32_t x = 88675123u;
	uint64_t last = 0;

	scenario_init(&s, 0);
	s.in.vmas = vmas;
	s.in.nr_vmas = 2;
	for (int i = 0; i < 32; i++)
		slot_of[i] = -1;
	while (s.in.nr_faults < 700 && s.in.nr_outs < 700) {
		int page;

		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		page = (int)(x >> 8) % 32;
		if (x & 1) {
			/*
			 * Written after the last one when free, as the allocator
			 * does; the shared VMA's pages to slots 200-207 in page
			 * order, so that its cluster windows hit.
			 */
			uint64_t slot = page >= 16 && page < 24 ? 200 + (uint64_t)page - 16
					: last + 1 < 200 && !taken[last + 1] ? last + 1
					: (x >> 16) % 200;

			if (slot_of[page] >= 0 || taken[slot])
				continue;
			out(&s, slot);
			s.outs[s.in.nr_outs - 1].pid = page >= 16 && page < 24 ? 2 : 1;
			taken[slot] = 1;
			slot_of[page] = (int64_t)slot;
			last = slot < 200 ? slot : last;
		} else if (slot_of[page] >= 0) {
			struct swt_replay_fault *f;

			/* pages 0-15 in the first VMA, 16-23 the second, 24-27 none known, 28-31 no address */
			fault(&s, (uint64_t)slot_of[page],
			      page < 16 ? 0x1000 + (uint64_t)page
			      : page < 24 ? 0x5000 + (uint64_t)page - 16
			      : page < 28 ? 0x9000 + (uint64_t)page : 0);
			f = &s.faults[s.in.nr_faults - 1];
			f->pid = page >= 16 && page < 24 ? 2 : 1;
			f->vma = page < 16 ? 0 : page < 24 ? 1 : -1;
			taken[slot_of[page]] = 0;
			slot_of[page] = -1;
		}
	}
	CHECK(s.in.nr_faults > 250);
	for (unsigned k = 0; k < 3 * 6; k++) {
		const struct swt_policy *p = k < 6 ? &swt_policy_vma : &swt_policy_auto;
		unsigned pc = k % 6;
		struct swt_replay_result *fast, *general;

		s.area.synchronous = k >= 12;
		fast = run(&s, p, pc, 24);
		general = run_path(&s, p, pc, 24, 1);
		CHECK((fast->total.hits > 0) == (pc > 0 && k < 12));
		check_same_reads(fast, general);
		swt_replay_result_free(fast);
		swt_replay_result_free(general);
	}
}

/*
 * A VMA window reads the pages whose entries are allocated and not cached
 * (§4): a page mapped by an earlier fault in the window is not read again;
 * with the fast paths (a block of pages read in one pass) and through
 * on_miss (a listed window) alike.
 */
TEST(vma_skips_cached_pages)
{
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 0);
	out(&s, 23);
	out(&s, 24);
	fault(&s, 23, 0x1103);	/* miss: window 0x1100..0x1107 reads 23 and 24 (0x1104) */
	for (uint64_t slot = 20; slot <= 22; slot++)
		out(&s, slot);	/* 0x1100..0x1102, swapped out since */
	/* miss, not adjacent: window 4 (halving the 8), 0x1100..0x1103, where 0x1103 is mapped */
	fault(&s, 21, 0x1101);
	fault(&s, 20, 0x1100);	/* hits */
	fault(&s, 22, 0x1102);
	fault(&s, 24, 0x1104);
	for (int general = 0; general <= 1; general++) {
		r = run_path(&s, &swt_policy_vma, 3, 1000, general);
		CHECK_INT(r->total.misses, 2);
		CHECK_INT(r->total.hits, 3);
		CHECK_INT(r->total.pages_read, 5);
		CHECK_INT(r->total.ra_pages, 3);
		CHECK_INT(r->parts[0].vpage_window_hist[4], 1);
		swt_replay_result_free(r);
	}
}

TEST(plug_merges_front_and_back)
{
	struct scenario s;
	struct swt_replay_result *r;

	scenario_init(&s, 1);
	for (uint64_t slot = 1; slot <= 300; slot++)
		out(&s, slot);
	fault(&s, 100, 0);
	r = run(&s, &swt_policy_fixed, 8, 1000);
	/* a 256-slot aligned block 0..255 without slot 0: 255 pages, one request */
	CHECK_INT(r->total.pages_read, 255);
	CHECK_INT(r->total.read_requests, 1);
	CHECK_INT(r->total.read_merges, 254);
	swt_replay_result_free(r);

	/* split at the request size limit */
	{
		struct swt_replay_config cfg = config(&swt_policy_fixed, 8, 1000);
		struct swt_err err = { 0 };

		cfg.max_request_pages = 32;
		CHECK_INT(swt_replay_run(&s.in, &cfg, &r, &err), 0);
		CHECK_INT(r->total.read_requests, 8);
		CHECK_INT(r->parts[0].request_hist[32], 7);
		CHECK_INT(r->parts[0].request_hist[31], 1);
		swt_replay_result_free(r);
	}
}

/*
 * With requests of several devices plugged, a bio tries the latest request
 * first when it is its device's, else the device's first (6.18's
 * blk_attempt_plug_merge): a VMA window over pages on A:10, B:5, A:20 and
 * A:21 makes three requests, A:21 joining A:20, where trying A's first
 * request alone made four.
 */
TEST(plug_merges_with_the_latest_request_across_devices)
{
	static const struct { uint32_t area; uint64_t slot; } pages[] = {
		{ 0, 10 }, { 1, 5 }, { 0, 20 }, { 0, 21 },
	};
	struct scenario s;
	struct swt_replay_area areas[2];
	struct swt_replay_result *r;

	scenario_init(&s, 0);
	areas[0] = s.area;
	areas[1] = s.area;
	areas[1].id = 1;
	snprintf(areas[1].dev, sizeof(areas[1].dev), "8:16");
	s.in.areas = areas;
	s.in.nr_areas = 2;
	for (size_t i = 0; i < SWT_ARRAY_SIZE(pages); i++) {
		out(&s, pages[i].slot);
		s.outs[s.in.nr_outs - 1].area = pages[i].area;
	}
	for (size_t i = 0; i < SWT_ARRAY_SIZE(pages); i++) {
		fault(&s, pages[i].slot, 0x1100 + i);
		s.faults[s.in.nr_faults - 1].area = pages[i].area;
	}
	for (int general = 0; general <= 1; general++) {
		r = run_path(&s, &swt_policy_vma, 3, 1000, general);
		CHECK_INT(r->total.misses, 1);
		CHECK_INT(r->total.pages_read, 4);
		CHECK_INT(r->total.read_requests, 3);
		CHECK_INT(r->total.read_merges, 1);
		swt_replay_result_free(r);
	}
}

/*
 * VMA readahead submits its reads in address order, whatever their
 * slots: a page whose slot is just below the request before front-merges
 * into it, as one just above back-merges (§2.4), up to the request size
 * limit.  Cluster windows, in ascending slots, only ever back-merge.
 * With the fast paths (pages plugged as found) and through on_miss (a
 * listed window) alike.
 */
TEST(plug_merges_vma_reads_at_either_end_up_to_the_limit)
{
	/* pages 0x1100..0x1104, the fault's window (8, centred on 0x1100) */
	static const uint64_t slots[] = { 12, 13, 11, 10, 14 };
	struct scenario s;
	struct swt_replay_result *r;
	struct swt_replay_config limited = config(&swt_policy_vma, 3, 1000);
	struct swt_err err = { 0 };

	limited.max_request_pages = 2;
	scenario_init(&s, 0);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
		out(&s, slots[i]);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(slots); i++)
		fault(&s, slots[i], 0x1100 + i);
	for (int general = 0; general <= 1; general++) {
		if (general)
			setenv("SWT_TEST_NO_FAST_PATH", "1", 1);
		/* 12, then 13 at its end, 11 and 10 at its start, 14 at its end: one request */
		r = run(&s, &swt_policy_vma, 3, 1000);
		CHECK_INT(r->total.misses, 1);
		CHECK_INT(r->total.pages_read, 5);
		CHECK_INT(r->total.read_requests, 1);
		CHECK_INT(r->total.read_merges, 4);
		CHECK_INT(r->parts[0].request_hist[5], 1);
		swt_replay_result_free(r);
		/* at most 2 pages a request: 12-13, then 11 and 10 in front of it, then 14 */
		CHECK_INT(swt_replay_run(&s.in, &limited, &r, &err), 0);
		unsetenv("SWT_TEST_NO_FAST_PATH");
		CHECK_INT(r->total.pages_read, 5);
		CHECK_INT(r->total.read_requests, 3);
		CHECK_INT(r->parts[0].request_hist[2], 2);
		CHECK_INT(r->parts[0].request_hist[1], 1);
		swt_replay_result_free(r);
	}
}

/*
 * Windows of up to 64 slots are read from a bit mask of their slots: a
 * free slot ends a request, runs are cut at the size limit, and a run
 * may reach the window's last slot or fill the window.
 */
TEST(block_window_requests)
{
	struct scenario s;
	struct swt_replay_result *r;
	struct swt_replay_config cfg = config(&swt_policy_fixed, 6, 1000);
	struct swt_err err = { 0 };

	cfg.max_request_pages = 5;
	scenario_init(&s, 1);
	for (uint64_t slot = 1; slot <= 127; slot++)
		if (slot != 70)
			out(&s, slot);
	fault(&s, 100, 0);
	/* the block 64..127 without slot 70: runs 64..69 (5 + 1) and 71..127 (11 x 5 + 2) */
	CHECK_INT(swt_replay_run(&s.in, &cfg, &r, &err), 0);
	CHECK_INT(r->total.pages_read, 63);
	CHECK_INT(r->total.ra_pages, 62);
	CHECK_INT(r->total.read_requests, 14);
	CHECK_INT(r->parts[0].request_hist[5], 12);
	CHECK_INT(r->parts[0].request_hist[1], 1);
	CHECK_INT(r->parts[0].request_hist[2], 1);
	CHECK_INT(r->total.read_merges, 63 - 14);
	swt_replay_result_free(r);

	/* every slot of the block: one run of 64, cut at 5, and uncut at the default limit */
	scenario_init(&s, 1);
	for (uint64_t slot = 64; slot <= 127; slot++)
		out(&s, slot);
	fault(&s, 64, 0);
	CHECK_INT(swt_replay_run(&s.in, &cfg, &r, &err), 0);
	CHECK_INT(r->total.pages_read, 64);
	CHECK_INT(r->total.read_requests, 13);
	CHECK_INT(r->parts[0].request_hist[5], 12);
	CHECK_INT(r->parts[0].request_hist[4], 1);
	swt_replay_result_free(r);
	r = run(&s, &swt_policy_fixed, 6, 1000);
	CHECK_INT(r->total.read_requests, 1);
	CHECK_INT(r->parts[0].request_hist[64], 1);
	swt_replay_result_free(r);

	/* the faulting slot as the block's last, one other slot apart: two requests */
	scenario_init(&s, 1);
	out(&s, 127);
	out(&s, 125);
	fault(&s, 127, 0);
	r = run(&s, &swt_policy_fixed, 6, 1000);
	CHECK_INT(r->total.pages_read, 2);
	CHECK_INT(r->total.read_requests, 2);
	CHECK_INT(r->parts[0].request_hist[1], 2);
	swt_replay_result_free(r);
}

/* Windows above 4096 pages are read whole (they were cut to 4096 from the aligned start). */
TEST(large_page_cluster_windows_are_whole)
{
	static struct scenario s;	/* static: the windows want room */
	struct swt_replay_result *r;
	struct swt_replay_config cfg = config(&swt_policy_fixed, 13, 20000);
	struct swt_err err = { 0 };

	scenario_init(&s, 1);
	s.area.slots = 20000;
	s.in.outs = malloc(9000 * sizeof(*s.in.outs));
	for (uint64_t slot = 1; slot <= 9000; slot++)
		s.in.outs[s.in.nr_outs++] = (struct swt_replay_swapout){ .ts = slot, .slot = slot,
									  .pid = 1 };
	s.ts = 10000;
	fault(&s, 8000, 0);	/* in the aligned block 0..8191 */
	CHECK_INT(swt_replay_run(&s.in, &cfg, &r, &err), 0);
	CHECK_INT(r->total.pages_read, 8191);
	swt_replay_result_free(r);
	cfg.page_cluster = SWT_MAX_PAGE_CLUSTER + 1;
	CHECK_INT(swt_replay_run(&s.in, &cfg, &r, &err), -SWT_EUSAGE);
	free(s.in.outs);
}

/*
 * The oracle's masks of pages used within a horizon (one call per window,
 * engine.c) against the per-page services plugins call, at every fault of
 * a stream with repeated slots and pages, in and out of the VMA, and over
 * the slot table's end: a policy that only compares them.
 */
static const uint64_t mask_horizons[] = { 0, 1, 3, 40, UINT64_MAX - 1, UINT64_MAX };
static int mask_checks, mask_errors;

static void *mask_create(const struct swt_policy_env *env, const char *const *keys,
			 const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	(void)keys, (void)values, (void)nparams, (void)err, (void)errlen;
	return (void *)env;
}

static void mask_destroy(void *inst)
{
	(void)inst;
}

static int mask_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	const struct swt_policy_env *env = inst;
	uint64_t first = f->slot > 70 ? f->slot - 70 : 0, vfirst = f->vpage > 70 ? f->vpage - 70 : 0;

	for (size_t h = 0; h < SWT_ARRAY_SIZE(mask_horizons); h++) {
		for (uint64_t at = first; at < f->slot + 70; at += 64) {
			uint64_t m = swt_replay_slots_used_within(env, f->area, at, 64, mask_horizons[h]);

			for (unsigned i = 0; i < 64; i++, mask_checks++)
				mask_errors += (m >> i & 1) !=
					       (env->faults_until_use(env, f->area, at + i) <=
						mask_horizons[h]);
		}
		for (uint64_t at = vfirst; f->vpage && at < f->vpage + 70; at += 37) {
			uint64_t m = swt_replay_vpages_used_within(env, f->pid, at, 37,
								   mask_horizons[h]);

			for (unsigned i = 0; i < 37; i++, mask_checks++)
				mask_errors += (m >> i & 1) !=
					       (env->faults_until_vpage_use(env, f->pid, at + i) <=
						mask_horizons[h]);
		}
	}
	win->kind = SWT_WINDOW_SLOTS;
	win->size = 1;
	win->list[0] = f->slot;
	win->count = 1;
	return 0;
}

TEST(oracle_masks_agree_with_the_future_services)
{
	static const struct swt_policy mask_policy = {
		.abi_version = SWT_POLICY_ABI, .name = "masks", .summary = "test",
		.create = mask_create, .destroy = mask_destroy, .on_miss = mask_on_miss,
	};
	struct scenario s;
	struct swt_replay_result *r;
	uint64_t x = 12345;

	scenario_init(&s, 1);
	s.area.slots = 400;
	for (uint64_t slot = 1; slot < 200; slot++)
		out(&s, slot);
	for (int i = 0; i < 600; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* pages up to the VMA's end (0x2000) and past it (no VMA), some unknown */
		fault(&s, 1 + (x >> 33) % 199, (x >> 20) % 5 ? 0x1f00 + (x >> 40) % 300 : 0);
		if (s.faults[i].vpage >= s.vma.end)
			s.faults[i].vma = -1;
	}
	mask_checks = mask_errors = 0;
	r = run(&s, &mask_policy, 3, 50);
	CHECK(r != NULL);
	CHECK(mask_checks > 100000);
	CHECK_INT(mask_errors, 0);
	swt_replay_result_free(r);
}

TEST(oracle_is_exact_and_bounds_the_others)
{
	struct scenario s;
	struct swt_replay_result *r, *o;

	scenario_init(&s, 1);
	for (uint64_t slot = 1; slot <= 63; slot++)
		out(&s, slot);
	/* a stride of 3 inside aligned blocks: fixed wastes two in three */
	for (uint64_t slot = 1; slot <= 63; slot += 3)
		fault(&s, slot, 0);
	r = run(&s, &swt_policy_fixed, 3, 1000);
	o = run(&s, &swt_policy_oracle, 3, 1000);
	CHECK_NEAR(swt_metrics_accuracy(&o->total), 1.0, 1e-9);
	CHECK(o->total.hits >= r->total.hits);
	CHECK(o->total.pages_read < r->total.pages_read);
	CHECK_INT(o->total.ra_wasted + o->ra_unused_at_end, 0);
	swt_replay_result_free(r);
	swt_replay_result_free(o);
}

/*
 * Reading at misses only, the oracle's own hit spares it a miss, and the
 * window that miss would open over pages swapped out since: a policy whose
 * readahead page was evicted misses there and gains those pages.  Here
 * that only ties (the oracle's next miss reads the rest); on seq-1dev at
 * page-cluster 4, 5 and 8 fixed gains more (test-replay-fidelity).  Reading
 * at every fault (the default) it gains them all, and stays the bound.
 */
TEST(oracle_reads_at_hits_to_stay_the_bound)
{
	struct scenario s;
	struct swt_replay_result *fixed, *at_misses, *at_faults;

	scenario_init(&s, 1);
	out(&s, 8);
	out(&s, 9);
	for (uint64_t slot = 64; slot < 96; slot++)
		out(&s, slot);
	fault(&s, 8, 0);	/* a miss for all: 9 is read ahead */
	/* fixed reads whole blocks here, and its page 9 is evicted unused */
	for (uint64_t slot = 64; slot < 96; slot += 8)
		fault(&s, slot, 0);
	for (uint64_t slot = 12; slot <= 14; slot++)
		out(&s, slot);	/* swapped out into 9's block since */
	fault(&s, 9, 0);
	for (uint64_t slot = 12; slot <= 14; slot++)
		fault(&s, slot, 0);
	fixed = run(&s, &swt_policy_fixed, 3, 16);
	at_misses = run_with(&s, &swt_policy_oracle, 3, 16, "at", "misses");
	at_faults = run_with(&s, &swt_policy_oracle, 3, 16, "at", "faults");
	/* fixed: 9 a miss that reads 12-14, then three hits */
	CHECK_INT(fixed->total.hits, 3);
	CHECK_INT(fixed->total.misses, 6);
	/* at misses: 9 a hit, no window; 12 a miss that reads 13 and 14 */
	CHECK_INT(at_misses->total.hits, 3);
	CHECK_INT(at_misses->total.misses, 6);
	/* at faults: the hit on 9 reads 12-14, in a request of their own */
	CHECK_INT(at_faults->total.hits, 4);
	CHECK_INT(at_faults->total.misses, 5);
	CHECK_NEAR(swt_metrics_accuracy(&at_faults->total), 1.0, 1e-9);
	CHECK_INT(at_faults->total.ra_pages, 4);
	CHECK_INT(at_faults->total.read_requests, 6);
	CHECK_INT(at_faults->total.pages_read, at_misses->total.pages_read);
	swt_replay_result_free(fixed);
	swt_replay_result_free(at_misses);
	swt_replay_result_free(at_faults);
}

TEST(policy_choice_and_params)
{
	struct swt_policy_choice c;
	struct swt_err err = { 0 };

	CHECK_INT(swt_policy_choose("leap:history=16", &c, &err), 0);
	CHECK_STR(c.policy->name, "leap");
	CHECK_INT(c.nparams, 2);
	CHECK_STR(c.keys[0], "history");
	CHECK_STR(c.values[0], "16");
	CHECK_STR(c.keys[1], "min_window");
	CHECK_STR(c.values[1], "auto");
	swt_policy_choice_release(&c);
	/* given in another order: stored in the policy's, one text per setting */
	CHECK_INT(swt_policy_choose("leap:min_window=8,history=64", &c, &err), 0);
	CHECK_STR(c.keys[0], "history");
	CHECK_STR(c.values[0], "64");
	CHECK_STR(c.keys[1], "min_window");
	CHECK_STR(c.values[1], "8");
	swt_policy_choice_release(&c);
	/* a value the built-in refuses: a usage error when chosen, before any run */
	CHECK_INT(swt_policy_choose("leap:history=1", &c, &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "policy 'leap': history must be 2..256 and min_window auto or 1..history");
	swt_err_clear(&err);
	CHECK_INT(swt_policy_choose("leap:min_window=0", &c, &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "policy 'leap': history must be 2..256 and min_window auto or 1..history");
	swt_err_clear(&err);
	CHECK_INT(swt_policy_choose("leap:min_window=64,history=32", &c, &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "policy 'leap': min_window 64 is above history 32: min_window must be "
		  "auto or 1..history");
	swt_err_clear(&err);
	CHECK_INT(swt_policy_choose("leap:min_window=half", &c, &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "policy 'leap': min_window: not a number or auto: 'half'");
	swt_err_clear(&err);
	CHECK_INT(swt_policy_choose("leap:min_window=2,history=2", &c, &err), 0);
	swt_policy_choice_release(&c);
	/* auto is history/4, and at least 1: history 2 alone is taken */
	CHECK_INT(swt_policy_choose("leap:history=2", &c, &err), 0);
	swt_policy_choice_release(&c);
	/* what the report names and colours as the plain built-in */
	CHECK_INT(swt_policy_params_are_defaults("leap", "history=32,min_window=auto"), 1);
	CHECK_INT(swt_policy_params_are_defaults("leap", "min_window=auto,history=32"), 1);
	CHECK_INT(swt_policy_params_are_defaults("leap", "history=32"), 1);
	CHECK_INT(swt_policy_params_are_defaults("leap", "min_window=auto"), 1);
	/* min_window=4 was the default before it became history/4 */
	CHECK_INT(swt_policy_params_are_defaults("leap", "history=32,min_window=4"), 0);
	CHECK_INT(swt_policy_params_are_defaults("leap", "history=32,min_window=8"), 0);
	CHECK_INT(swt_policy_params_are_defaults("leap", "history=64,min_window=auto"), 0);
	CHECK_INT(swt_policy_params_are_defaults("leap", "history=320,min_window=auto"), 0);
	CHECK_INT(swt_policy_params_are_defaults("leap", "history=3,min_window=auto"), 0);
	CHECK_INT(swt_policy_params_are_defaults("leap", "colour=red"), 0);
	CHECK_INT(swt_policy_params_are_defaults("leap", "history"), 0);
	CHECK_INT(swt_policy_params_are_defaults("fixed", NULL), 1);
	CHECK_INT(swt_policy_params_are_defaults("fixed", ""), 1);
	CHECK_INT(swt_policy_params_are_defaults("./libmine.so", ""), 0);
	CHECK_INT(swt_policy_choose("leap:colour=red", &c, &err), -SWT_EUSAGE);
	CHECK(strstr(err.msg, "has no parameter 'colour'") != NULL);
	swt_err_clear(&err);
	CHECK_INT(swt_policy_choose("nonesuch", &c, &err), -SWT_EUSAGE);
	swt_err_clear(&err);
	/* a path to nothing is a usage error; a file that is no plugin, a plugin error */
	CHECK_INT(swt_policy_choose("./no-such-plugin.so", &c, &err), -SWT_EUSAGE);
	CHECK(strstr(err.msg, "cannot load: no such file") != NULL);
	swt_err_clear(&err);
	CHECK_INT(swt_policy_choose("/etc/passwd", &c, &err), -SWT_EPLUGIN);
	CHECK(strstr(err.msg, "cannot load") != NULL);
	swt_err_clear(&err);
	CHECK_INT(swt_policy_choose("auto:x", &c, &err), -SWT_EUSAGE);
}

/* ---- leap, as its authors' kernel code has it (policy-leap.c) ----------- */

/* An instance with these parameters (NULL: the default), page-cluster 3. */
static void *leap_make(const char *history, const char *min_window)
{
	const struct swt_policy_env env = { .page_cluster = 3, .nr_areas = 1, .page_shift = 12 };
	const char *keys[2], *values[2];
	unsigned n = 0;
	char err[256] = "";
	void *inst;

	if (history) {
		keys[n] = "history";
		values[n++] = history;
	}
	if (min_window) {
		keys[n] = "min_window";
		values[n++] = min_window;
	}
	inst = swt_policy_leap.create(&env, keys, values, n, err, sizeof(err));
	CHECK(inst != NULL);
	if (!inst)
		fprintf(stderr, "leap: %s\n", err);
	return inst;
}

/* A miss at slot: its window into list (64 entries), the count returned. */
static unsigned leap_miss(void *inst, uint64_t slot, uint64_t *list)
{
	struct swt_window win = { .capacity = 64, .list = list };
	struct swt_fault_info f = fault_at(slot, 1u << 20, 3);

	CHECK_INT(swt_policy_leap.on_miss(inst, &f, &win), 0);
	CHECK_INT(win.kind, SWT_WINDOW_SLOTS);
	return win.count;
}

/* Misses stepping by deltas from *slot (moved along), the last one's window into list. */
static unsigned leap_misses(void *inst, uint64_t *slot, const int64_t *deltas, size_t n,
			    uint64_t *list)
{
	unsigned count = 0;

	for (size_t i = 0; i < n; i++) {
		*slot += (uint64_t)deltas[i];
		count = leap_miss(inst, *slot, list);
	}
	return count;
}

/* Deltas that never repeat, nor equal a trend of these tests: no majority among them. */
static int64_t leap_noise(size_t i)
{
	return 1000 + 37 * (int64_t)i;
}

/* Is list[0, n) the window of a trend d from slot (ascending)? */
static int leap_is_trend(const uint64_t *list, unsigned n, uint64_t slot, int64_t d, unsigned pages)
{
	if (n != pages)
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (list[i] != (uint64_t)((int64_t)slot + d * (int64_t)(d > 0 ? i : n - 1 - i)))
			return 0;
	return 1;
}

/* Is list[0, n) the aligned block of pages slots around slot? */
static int leap_is_block(const uint64_t *list, unsigned n, uint64_t slot, unsigned pages)
{
	if (n != pages)
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (list[i] != (slot & ~(uint64_t)(pages - 1)) + i)
			return 0;
	return 1;
}

/*
 * The vote (find_trend): over the newest history/4 deltas first (8 of 32,
 * not 4), then 16, then the whole history, the first strict majority
 * winning; the history starts zero-filled, and a majority of 0 reads the
 * faulting page alone.  Misses here have no hits between them: after the
 * first (8 pages, the hit counter's boot value) every window is 4 pages.
 */
TEST(leap_vote_grows_from_a_quarter_of_the_history)
{
	uint64_t list[64], slot;
	int64_t d[40];
	unsigned n;
	void *l;

	/* a fresh history is 32 zeros: trend 0, the faulting page alone */
	l = leap_make(NULL, NULL);
	slot = 5000;
	n = leap_miss(l, slot, list);
	CHECK_INT(n, 1);
	CHECK_INT(list[0], 5000);
	/* four +3s: 4 of the newest 8 and zeros around them (12 of 16): still 0 */
	for (size_t i = 0; i < 4; i++)
		d[i] = 3;
	n = leap_misses(l, &slot, d, 4, list);
	CHECK_INT(n, 1);
	CHECK_INT(list[0], slot);
	/* a fifth: 5 of the newest 8, the trend +3 */
	n = leap_misses(l, &slot, d, 1, list);
	CHECK(leap_is_trend(list, n, slot, 3, 4));
	swt_policy_leap.destroy(l);

	/* 28 deltas without a majority, then four +5s: no majority in 8, 16 or 32 */
	for (size_t i = 0; i < 28; i++)
		d[i] = leap_noise(i);
	for (size_t i = 28; i < 33; i++)
		d[i] = 5;
	l = leap_make(NULL, NULL);
	slot = 5000;
	leap_miss(l, slot, list);	/* the first fault logs 0 */
	n = leap_misses(l, &slot, d, 32, list);
	CHECK(leap_is_block(list, n, slot, 4));
	/* a fifth +5 makes 5 of the newest 8 */
	n = leap_misses(l, &slot, d + 32, 1, list);
	CHECK(leap_is_trend(list, n, slot, 5, 4));
	swt_policy_leap.destroy(l);
	/* min_window=4 starts the vote at 4: the four +5s are a trend */
	l = leap_make(NULL, "4");
	slot = 5000;
	leap_miss(l, slot, list);	/* the first fault logs 0 */
	n = leap_misses(l, &slot, d, 32, list);
	CHECK(leap_is_trend(list, n, slot, 5, 4));
	swt_policy_leap.destroy(l);

	/* the newest 8 hold 4 +7s, the newest 16 ten: found at 16 */
	for (size_t i = 0; i < 16; i++)
		d[i] = leap_noise(i);
	for (size_t i = 16; i < 32; i++)
		d[i] = i < 24 ? (i % 4 == 3 ? leap_noise(i) : 7) : (i % 2 ? leap_noise(i) : 7);
	l = leap_make(NULL, NULL);
	slot = 5000;
	leap_miss(l, slot, list);	/* the first fault logs 0 */
	n = leap_misses(l, &slot, d, 32, list);
	CHECK(leap_is_trend(list, n, slot, 7, 4));
	swt_policy_leap.destroy(l);

	/* the newest 16 hold 8 +11s, all 32 seventeen: found at 32, the whole history */
	for (size_t i = 0; i < 32; i++)
		d[i] = i < 16 ? (i < 9 ? 11 : leap_noise(i)) : (i % 2 ? leap_noise(i) : 11);
	l = leap_make(NULL, NULL);
	slot = 5000;
	leap_miss(l, slot, list);	/* the first fault logs 0 */
	n = leap_misses(l, &slot, d, 32, list);
	CHECK(leap_is_trend(list, n, slot, 11, 4));
	swt_policy_leap.destroy(l);
	/* ... and not with a history of 16 (votes over 4, 8, 16) */
	l = leap_make("16", NULL);
	slot = 5000;
	leap_miss(l, slot, list);	/* the first fault logs 0 */
	n = leap_misses(l, &slot, d, 32, list);
	CHECK(leap_is_block(list, n, slot, 4));
	swt_policy_leap.destroy(l);
}

/*
 * A purely sequential stream: hits are logged too, so the trend is the
 * access stride +1 (at misses alone it would be the window's), and the
 * window is the kernel's hit-counter size, asked at every miss.  The
 * zero-filled history reads faults 1-5 alone; fault 6 finds +1 with no
 * hits behind it (4 pages: 6-9), fault 10 has 3 (8 pages), and every 8th
 * after.  From the first trend window on it misses no more than adaptive.
 */
TEST(leap_follows_a_sequential_stream_by_its_hits)
{
	struct swt_replay_result *r[2];
	const struct swt_policy *p[2] = { &swt_policy_leap, &swt_policy_adaptive };
	struct scenario s;

	scenario_init(&s, 1);
	for (uint64_t slot = 1; slot <= 400; slot++)
		out(&s, slot);
	for (uint64_t slot = 1; slot <= 400; slot++) {
		fault(&s, slot, 0);
		/* faults 1-8 in second 0, the rest in second 1 */
		s.faults[slot - 1].ts = (slot <= 8 ? 0 : 1000000000ull) + 500000 + slot;
	}
	for (int k = 0; k < 2; k++)
		r[k] = run(&s, p[k], 3, 1000);
	CHECK_INT(r[0]->total.misses, 55);
	CHECK_INT(r[0]->parts[0].window_hist[1], 5);
	CHECK_INT(r[0]->parts[0].window_hist[4], 1);
	CHECK_INT(r[0]->parts[0].window_hist[8], 49);
	CHECK_NEAR(swt_metrics_accuracy(&r[0]->total), 1.0, 1e-9);
	CHECK_INT(r[1]->total.misses, 51);
	/* faults 9-400: 49 misses each */
	CHECK_INT(r[0]->parts[0].nr_seconds, 2);
	CHECK_INT(r[1]->parts[0].nr_seconds, 2);
	CHECK_INT(r[0]->parts[0].series[1].misses, 49);
	CHECK(r[0]->parts[0].series[1].misses <= r[1]->parts[0].series[1].misses);
	for (int k = 0; k < 2; k++)
		swt_replay_result_free(r[k]);
}

/*
 * Strides of 3, up and down, which adaptive's aligned windows cannot
 * follow (its adjacency rule sees no neighbour, its blocks hold two or
 * three of the stream's slots, its window shrinks to 1: all but 2 of 300
 * faults miss) and leap's trend does: warm-up as above, then a miss in 8.
 */
TEST(leap_follows_strided_streams)
{
	static const int64_t strides[] = { 3, -3 };

	for (size_t c = 0; c < SWT_ARRAY_SIZE(strides); c++) {
		struct swt_replay_result *leap, *adaptive;
		struct scenario s;
		uint64_t first = strides[c] > 0 ? 1 : 999;

		scenario_init(&s, 1);
		for (int i = 0; i < 300; i++)
			out(&s, (uint64_t)((int64_t)first + strides[c] * i));
		for (int i = 0; i < 300; i++)
			fault(&s, (uint64_t)((int64_t)first + strides[c] * i), 0);
		leap = run(&s, &swt_policy_leap, 3, 1000);
		adaptive = run(&s, &swt_policy_adaptive, 3, 1000);
		CHECK_INT(leap->total.misses, 43);
		CHECK_NEAR(swt_metrics_accuracy(&leap->total), 1.0, 1e-9);
		CHECK_INT(adaptive->total.misses, 298);
		swt_replay_result_free(leap);
		swt_replay_result_free(adaptive);
	}
}

/*
 * No trend: leap falls back to the aligned cluster window, sized as Leap's
 * swapin_nr_pages sizes it -- adaptive's rule without its adjacency test
 * (custom prefetch skips it), so a miss after no hits reads 4 pages where
 * adaptive reads 1 or 2, and after hits the two read alike.  Random
 * 8-slot blocks; the first 16 faults read alone (the zero-filled history
 * votes 0 until 17 deltas are in).
 */
TEST(leap_falls_back_to_cluster_readahead)
{
	uint64_t perm[120], x = 88172645463325252ull;

	for (size_t i = 0; i < 120; i++)
		perm[i] = i;
	for (size_t i = 119; i > 0; i--) {
		size_t j;
		uint64_t t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (size_t)(x % (i + 1));
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	/* one slot per block, no hits: adaptive 8, 4, 2, then 1; leap 4 */
	for (int pairs = 0; pairs < 2; pairs++) {
		struct swt_replay_result *leap, *adaptive;
		struct scenario s;
		size_t n = pairs ? 60 : 120;

		scenario_init(&s, 1);
		for (size_t i = 0; i < n; i++) {
			out(&s, 8 * perm[i] + 1);
			if (pairs)
				out(&s, 8 * perm[i] + 2);
		}
		for (size_t i = 0; i < n; i++) {
			fault(&s, 8 * perm[i] + 1, 0);
			if (pairs)
				fault(&s, 8 * perm[i] + 2, 0);
		}
		leap = run(&s, &swt_policy_leap, 3, 1000);
		adaptive = run(&s, &swt_policy_adaptive, 3, 1000);
		if (!pairs) {
			CHECK_INT(adaptive->total.hits, 0);
			CHECK_INT(adaptive->parts[0].window_hist[8], 1);
			CHECK_INT(adaptive->parts[0].window_hist[4], 1);
			CHECK_INT(adaptive->parts[0].window_hist[2], 1);
			CHECK_INT(adaptive->parts[0].window_hist[1], 117);
			CHECK_INT(leap->total.hits, 0);
			CHECK_INT(leap->parts[0].window_hist[1], 16);
			CHECK_INT(leap->parts[0].window_hist[4], 104);
		} else {
			/* each block's second fault a hit on both, once leap's warm-up is over */
			CHECK_INT(adaptive->total.misses, 60);
			CHECK_INT(adaptive->parts[0].window_hist[8], 1);
			CHECK_INT(adaptive->parts[0].window_hist[4], 59);
			CHECK_INT(leap->total.misses, 16 + 52);
			CHECK_INT(leap->parts[0].window_hist[1], 16);
			CHECK_INT(leap->parts[0].window_hist[4], 52);
		}
		swt_replay_result_free(leap);
		swt_replay_result_free(adaptive);
	}
}

CHECK_MAIN

struct want_fault {
	uint64_t ts, slot, vpage;
};

/*
 * Load a demand stream with load from a scratch database holding rows and
 * check it against want: every fault on area 0 by task 42, the tests' one
 * area and task.
 */
static void check_stream(int (*load)(struct swt_store *, struct swt_replay_input *,
				     struct swt_err *),
			 const char *rows, struct swt_replay_input *in,
			 const struct want_fault *want, size_t nr_want)
{
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/swt-test-stream-%d.db", (int)getpid());
	CHECK_INT(swt_store_create(path, &st, &err), 0);
	CHECK_INT(swt_store_exec(st, rows, &err), 0);
	CHECK_INT(load(st, in, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(in->nr_faults, nr_want);
	for (size_t i = 0; i < in->nr_faults && i < nr_want; i++) {
		CHECK_INT(in->faults[i].ts, want[i].ts);
		CHECK_INT(in->faults[i].slot, want[i].slot);
		CHECK_INT(in->faults[i].vpage, want[i].vpage);
		CHECK_INT(in->faults[i].area, 0);
		CHECK_INT(in->faults[i].pid, 42);
	}
	swt_store_destroy(st);	/* never committed: the file goes */
}

/*
 * The demand stream of a readahead capture, reconstructed from its reads
 * and faults (reconstruct.c): a read fault's page is the one its address's
 * next read fault reads again; a fault that did no I/O takes a waiting
 * page -- the one its address's next read fault reads, else the first
 * waiting one of the latest fault that has any -- a write to a slot ends
 * its wait, and with none waiting the fault is no readahead hit.
 */
TEST(reconstruct_readahead_capture)
{
	static const char rows[] =
		/* first touches of B, C, D: never swap faults */
		"INSERT INTO fault (id, ts, pid, address) VALUES"
		" (1, 10, 42, 8192), (2, 20, 42, 20480), (3, 30, 42, 24576),"
		/* A reads slots 8-11 */
		" (11, 100, 42, 4096),"
		/* B, C, D fault again with no I/O */
		" (12, 200, 42, 8192), (13, 300, 42, 20480), (14, 400, 42, 24576),"
		/* C and A read again */
		" (15, 500, 42, 20480), (16, 600, 42, 4096);"
		"INSERT INTO swap_in (ts, area_id, slot, dev, pid, bio_id, fault_id, address) VALUES"
		" (101, 1, 8, 7340032, 42, 1, 11, 4096), (102, 1, 9, 7340032, 42, 2, 11, 4096),"
		" (103, 1, 10, 7340032, 42, 3, 11, 4096), (104, 1, 11, 7340032, 42, 4, 11, 4096),"
		" (501, 1, 10, 7340032, 42, 5, 15, 20480), (502, 1, 13, 7340032, 42, 6, 15, 20480),"
		" (601, 1, 9, 7340032, 42, 7, 16, 4096), (602, 1, 12, 7340032, 42, 8, 16, 4096);"
		/* slot 11 written again: its read-ahead page is gone */
		"INSERT INTO swap_out (ts, area_id, slot, dev, pid, bio_id) VALUES (350, 1, 11, 7340032, 42, 9);";
	static const struct want_fault want[] = {
		{ 101, 9, 1 },	/* A's page: the slot its next read fault reads again */
		{ 200, 8, 2 },	/* B: the first waiting page of the latest fault with any */
		{ 300, 10, 5 },	/* C: the waiting page its next read fault reads */
		/* D at 400: 8 and 10 taken, 11 written: no readahead hit */
		{ 501, 10, 5 },
		{ 601, 9, 1 },
	};
	struct swt_replay_area area = { .id = 1, .dev = "7:0", .slots = 1000 };
	struct swt_replay_swapout out = { .ts = 350, .slot = 11, .area = 0, .pid = 42, .cpu = -1 };
	struct swt_replay_input in = {
		.areas = &area, .nr_areas = 1, .outs = &out, .nr_outs = 1, .page_shift = 12,
	};

	check_stream(swt_replay_reconstruct, rows, &in, want, SWT_ARRAY_SIZE(want));
	CHECK_INT(in.approx_misses, 3);
	CHECK_INT(in.approx_hits, 2);
	free(in.faults);
}

/*
 * A trace that began mid-run shows no earlier fault of most pages: a fault
 * that did no I/O after its task's first read fault is a readahead hit all
 * the same.
 */
TEST(reconstruct_trace_begun_mid_run)
{
	static const char rows[] =
		/* A reads slots 8-11 */
		"INSERT INTO fault (id, ts, pid, address) VALUES (11, 100, 42, 4096),"
		/* B and C, never faulted before in the trace, fault with no I/O */
		" (12, 200, 42, 8192), (13, 300, 42, 20480);"
		"INSERT INTO swap_in (ts, area_id, slot, dev, pid, bio_id, fault_id, address) VALUES"
		" (101, 1, 8, 7340032, 42, 1, 11, 4096), (102, 1, 9, 7340032, 42, 2, 11, 4096),"
		" (103, 1, 10, 7340032, 42, 3, 11, 4096), (104, 1, 11, 7340032, 42, 4, 11, 4096);";
	static const struct want_fault want[] = {
		{ 101, 8, 1 },	/* A's page: the first read (no later read fault says otherwise) */
		{ 200, 9, 2 },	/* B and C: the first waiting pages of A's reads */
		{ 300, 10, 5 },
	};
	struct swt_replay_area area = { .id = 1, .dev = "7:0", .slots = 1000 };
	struct swt_replay_input in = { .areas = &area, .nr_areas = 1, .page_shift = 12 };

	check_stream(swt_replay_reconstruct, rows, &in, want, SWT_ARRAY_SIZE(want));
	CHECK_INT(in.approx_misses, 1);
	CHECK_INT(in.approx_hits, 2);
	free(in.faults);
}

/*
 * With swap-entry probes the demand stream is exact at any page-cluster:
 * every swap-cache miss, and every swap-cache hit on a page read ahead
 * since its slot was last faulted -- not one on a page that was only
 * unmapped, nor the faulting page's own read taken for readahead.
 */
TEST(probe_stream_is_exact)
{
	static const char rows[] =
		/* fault on slot 5 reads 4-7 (5 its own); hit on 6; minor fault on 5 */
		"INSERT INTO swap_probe (ts, pid, kind, area_id, slot, address) VALUES"
		" (100, 42, 'fault', 1, 5, 20480), (200, 42, 'ra_hit', 1, 6, 24576),"
		" (300, 42, 'ra_hit', 1, 5, 20480),"
		/* slot 9 was never read: a minor fault; slot 4 read at 101, hit at 400 */
		" (350, 42, 'ra_hit', 1, 9, 36864), (400, 42, 'ra_hit', 1, 4, 16384),"
		/* a second hit on 6 with no read since its first: minor */
		" (500, 42, 'ra_hit', 1, 6, 24576);"
		"INSERT INTO swap_in (ts, area_id, slot, dev, pid, bio_id) VALUES"
		" (101, 1, 4, 7340032, 42, 1), (102, 1, 5, 7340032, 42, 2),"
		" (103, 1, 6, 7340032, 42, 3), (104, 1, 7, 7340032, 42, 4);";
	static const struct want_fault want[] = {
		{ 100, 5, 5 }, { 200, 6, 6 }, { 400, 4, 4 },
	};
	struct swt_replay_area area = { .id = 1, .dev = "7:0", .slots = 1000 };
	struct swt_replay_input in = { .areas = &area, .nr_areas = 1, .page_shift = 12 };

	check_stream(swt_replay_probe_stream, rows, &in, want, SWT_ARRAY_SIZE(want));
	free(in.faults);
}

/*
 * A write fault frees its page's slot (write-frees.c): in the engine, a
 * freed slot is free for readahead whether the page is still in memory or
 * not, and stays free when the page leaves, by the LRU or where the trace
 * shows it written to a new slot.  Through the fast paths and on_miss,
 * with the rings checked against the slot words (SWT_TEST_TIGHT_RINGS).
 */
TEST(write_freed_slots_are_not_read_ahead)
{
	struct swt_replay_free frees[2];
	struct scenario s;
	struct swt_replay_result *r;

	setenv("SWT_TEST_TIGHT_RINGS", "1", 1);
	for (int freed = 0; freed <= 1; freed++)
		for (int general = 0; general <= 1; general++) {
			/* the page of slot 13 written back to it (dirtied by its PTE): not cached */
			scenario_init(&s, 1);
			fault(&s, 13, 0x1005);	/* the slot's only page: read alone */
			out(&s, 13);
			fault(&s, 200, 0);
			for (uint64_t slot = 8; slot <= 15; slot++)
				if (slot != 13)
					out(&s, slot);
			fault(&s, 10, 0);	/* 8-15, but 13 if a write freed it */
			frees[0] = (struct swt_replay_free){ .after = 1, .fault = 0, .outs_at = 1,
							     .evict_out = -1 };
			s.in.frees = frees;
			s.in.nr_frees = (size_t)freed;
			r = run_path(&s, &swt_policy_fixed, 3, 1000, general);
			CHECK_INT(r->total.misses, 3);
			CHECK_INT(r->total.pages_read, freed ? 9 : 10);
			CHECK_INT(r->total.read_requests, freed ? 4 : 3);
			swt_replay_result_free(r);

			/*
			 * still in memory, then written out: at the first write to a free
			 * slot (8, before its own to 30), as the oldest freed page held.
			 * That leaves room for a readahead page (15) in a memory of 4
			 * pages, 2 inactive; without the free 13 stays mapped
			 */
			scenario_init(&s, 1);
			fault(&s, 13, 0x1005);
			for (uint64_t slot = 8; slot <= 15; slot++)
				if (slot != 13)
					out(&s, slot);
			out(&s, 30);
			fault(&s, 10, 0);	/* 8-15 but 13; the tail's readahead pages go, 15 last */
			fault(&s, 15, 0);
			frees[0] = (struct swt_replay_free){ .after = 0, .fault = 0, .outs_at = 0,
							     .evict_out = 7 };
			s.in.frees = frees;
			s.in.nr_frees = (size_t)freed;
			r = run_path(&s, &swt_policy_fixed, 3, 4, general);
			CHECK_INT(r->total.hits, freed ? 1 : 0);
			/* 13 skipped either way: free, or cached and mapped */
			CHECK_INT(r->total.pages_read, freed ? 1 + 7 : 1 + 7 + 6);
			CHECK_INT(r->total.read_requests, freed ? 1 + 2 : 1 + 2 + 3);	/* Z: 8-9, 11-12, 14-15 */
			swt_replay_result_free(r);

			/* a memory of 2 pages: the freed page ages out like any, its slot stays free */
			scenario_init(&s, 1);
			fault(&s, 13, 0x1005);
			for (uint64_t slot = 1; slot <= 6; slot++)
				fault(&s, 100 + 8 * slot, 0);	/* pre-trace pages, one per block */
			for (uint64_t slot = 8; slot <= 15; slot++)
				if (slot != 13)
					out(&s, slot);
			fault(&s, 10, 0);
			frees[0] = (struct swt_replay_free){ .after = 0, .fault = 0, .outs_at = 0,
							     .evict_out = -1 };
			s.in.frees = frees;
			s.in.nr_frees = (size_t)freed;
			r = run_path(&s, &swt_policy_fixed, 3, 2, general);
			CHECK_INT(r->total.misses, 8);
			CHECK_INT(r->total.pages_read, freed ? 7 + 7 : 7 + 8);
			swt_replay_result_free(r);
		}

	/*
	 * A write to a free slot is a dirty page leaving memory: the one whose
	 * next fault names that write, else the oldest freed page still held;
	 * a write-back to a cached page's own slot is not one
	 */
	for (int general = 0; general <= 1; general++) {
		struct swt_replay_free three[3];

		scenario_init(&s, 1);
		fault(&s, 103, 0x1001);	/* A, B, C: freed by their write faults */
		fault(&s, 111, 0x1002);
		fault(&s, 119, 0x1003);
		fault(&s, 130, 0x1004);	/* D: a read, keeps its slot */
		out(&s, 130);		/* D written back to its slot */
		out(&s, 40);		/* B, as its next fault says */
		out(&s, 41);		/* the oldest held: A */
		out(&s, 42);		/* then C */
		out(&s, 43);		/* none left */
		for (uint32_t k = 0; k < 3; k++)
			three[k] = (struct swt_replay_free){ .after = k, .fault = k, .evict_out = -1 };
		three[1].evict_out = 1;
		s.in.frees = three;
		s.in.nr_frees = 3;
		r = run_path(&s, &swt_policy_none, 3, 1000, general);
		CHECK_INT(r->freed_left_traced, 1);
		CHECK_INT(r->freed_left_oldest, 2);
		CHECK_INT(r->freed_left_lists, 0);
		swt_replay_result_free(r);
		/* without the link, the oldest go first: A, B, C */
		three[1].evict_out = -1;
		r = run_path(&s, &swt_policy_none, 3, 1000, general);
		CHECK_INT(r->freed_left_traced, 0);
		CHECK_INT(r->freed_left_oldest, 3);
		swt_replay_result_free(r);
		/* a page whose own write the trace names is not taken for the oldest at another */
		three[0].evict_out = 4;	/* A: out 43 */
		r = run_path(&s, &swt_policy_none, 3, 1000, general);
		CHECK_INT(r->freed_left_traced, 1);	/* A at 43 */
		CHECK_INT(r->freed_left_oldest, 2);	/* B at 40, C at 41 */
		swt_replay_result_free(r);
		three[0].evict_out = -1;
		/* one page of memory: the lists evict them first, as any page */
		r = run_path(&s, &swt_policy_none, 3, 1, general);
		CHECK_INT(r->freed_left_traced + r->freed_left_oldest + r->freed_left_lists, 3);
		CHECK(r->freed_left_lists >= 2);
		swt_replay_result_free(r);
	}

	/*
	 * A write-protect fault's free comes after the swap-outs before it,
	 * even those after the fault before it: a write to a free slot there
	 * is not its page leaving
	 */
	for (int general = 0; general <= 1; general++) {
		scenario_init(&s, 1);
		fault(&s, 103, 0x1001);
		out(&s, 50);	/* before the write-protect fault */
		fault(&s, 200, 0);
		frees[0] = (struct swt_replay_free){ .after = 0, .fault = 0, .outs_at = 1,
						     .evict_out = -1 };
		s.in.frees = frees;
		s.in.nr_frees = 1;
		r = run_path(&s, &swt_policy_none, 3, 1000, general);
		CHECK_INT(r->freed_left_oldest, 0);	/* still held at the end */
		swt_replay_result_free(r);
		out(&s, 51);	/* after it: its page leaving */
		r = run_path(&s, &swt_policy_none, 3, 1000, general);
		CHECK_INT(r->freed_left_oldest, 1);
		swt_replay_result_free(r);
	}
	unsetenv("SWT_TEST_TIGHT_RINGS");

	/* an input whose frees name faults it does not have is refused */
	{
		struct swt_replay_config cfg = config(&swt_policy_fixed, 3, 1000);
		struct swt_err err = { 0 };

		scenario_init(&s, 1);
		fault(&s, 13, 0);
		frees[0] = (struct swt_replay_free){ .after = 1, .fault = 0, .evict_out = -1 };
		s.in.frees = frees;
		s.in.nr_frees = 1;
		r = NULL;
		CHECK(swt_replay_run(&s.in, &cfg, &r, &err) != 0);
		CHECK(strstr(err.msg, "slot free 1 of 1") != NULL);
		CHECK(r == NULL);
	}
}

/*
 * Which write faults free a slot (write-frees.c): the swap-in's own fault
 * when it wrote (x86 error code bit 1), or, on kernels before 5.19, a later
 * write-protect fault (bits 0 and 1) on the page still in its slot -- not a
 * read, not a write older than the swap-out that put the page there, not a
 * page on a shared mapping, and not where the trace shows the kernel kept
 * the slot (faulted again from it with no write between, or by two pages);
 * the swap-out that wrote the freed page elsewhere is the one its next
 * fault names.
 */
TEST(write_faults_free_their_slots)
{
	static const char rows[] =
		"INSERT INTO fault (id, ts, pid, address, error_code) VALUES"
		/* page A: a first touch (a write long before), then swapped in by a read */
		" (1, 10, 42, 4096, 6), (2, 100, 42, 4096, 4),"
		/* page E: a first touch, swapped out at 60, swapped in at 901 with no fault event */
		" (9, 20, 42, 16384, 6),"
		/* page B: swapped in by a write */
		" (3, 200, 42, 8192, 6),"
		/* A written while mapped read-only */
		" (4, 300, 42, 4096, 7),"
		/* page C: a write swap-in, then its slot faulted again (the page was shared) */
		" (5, 400, 42, 12288, 6), (6, 500, 42, 12288, 4),"
		/* page D on a shared mapping: a write swap-in */
		" (7, 600, 42, 1048576, 6),"
		/* B faulted again, from the slot it was written to at 700 */
		" (8, 800, 42, 8192, 4),"
		/* F and G, two processes' pages on one swap entry: a read, then a write swap-in */
		" (10, 950, 42, 20480, 4), (11, 960, 43, 20480, 6);";
	struct swt_replay_area area = { .id = 1, .dev = "7:0", .slots = 1000 };
	struct swt_replay_vma vmas[] = {
		{ .pid = 42, .start = 1, .end = 16 },
		{ .pid = 42, .shared = 1, .start = 256, .end = 512 },
	};
	struct swt_replay_swapout outs[] = {
		{ .ts = 50, .slot = 8, .pid = 42, .cpu = -1 },
		{ .ts = 60, .slot = 12, .pid = 42, .cpu = -1 },
		{ .ts = 700, .slot = 30, .pid = 42, .cpu = -1 },
	};
	struct swt_replay_fault faults[] = {
		{ .ts = 101, .slot = 8, .vpage = 1, .pid = 42, .vma = 0, .out = 0 },	/* A */
		{ .ts = 201, .slot = 9, .vpage = 2, .pid = 42, .vma = 0, .out = -1 },	/* B */
		{ .ts = 401, .slot = 10, .vpage = 3, .pid = 42, .vma = 0, .out = -1 },	/* C */
		{ .ts = 501, .slot = 10, .vpage = 3, .pid = 42, .vma = 0, .out = -1 },	/* C again */
		{ .ts = 601, .slot = 11, .vpage = 256, .pid = 42, .vma = 1, .out = -1 },	/* D */
		{ .ts = 801, .slot = 30, .vpage = 2, .pid = 42, .vma = 0, .out = 2 },	/* B again */
		{ .ts = 901, .slot = 12, .vpage = 4, .pid = 42, .vma = 0, .out = 1 },	/* E */
		{ .ts = 951, .slot = 13, .vpage = 5, .pid = 42, .vma = 0, .out = -1 },	/* F */
		{ .ts = 961, .slot = 13, .vpage = 5, .pid = 43, .vma = -1, .out = -1 },	/* G */
	};
	struct swt_replay_input in = {
		.areas = &area, .nr_areas = 1, .faults = faults, .nr_faults = SWT_ARRAY_SIZE(faults),
		.outs = outs, .nr_outs = SWT_ARRAY_SIZE(outs), .vmas = vmas, .nr_vmas = 2,
		.page_shift = 12,
	};
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/swt-test-frees-%d.db", (int)getpid());
	CHECK_INT(swt_store_create(path, &st, &err), 0);
	CHECK_INT(swt_store_exec(st, rows, &err), 0);
	for (int old = 0; old <= 1; old++) {
		snprintf(in.kernel, sizeof(in.kernel), "%s", old ? "5.10.0-23-amd64" : "6.18.44");
		CHECK_INT(swt_replay_find_frees(st, &in, &err), 0);
		if (err.code)
			fprintf(stderr, "%s\n", err.msg);
		CHECK_INT(in.nr_frees, old ? 2 : 1);
		if (in.nr_frees >= 1) {
			/* B's swap-in, freed at once; written to slot 30 by swap-out 2 */
			CHECK_INT(in.frees[0].fault, 1);
			CHECK_INT(in.frees[0].after, 1);
			CHECK_INT(in.frees[0].outs_at, 2);
			CHECK_INT(in.frees[0].evict_out, 2);
		}
		if (old && in.nr_frees == 2) {
			/* A's, at its write-protect fault (after B's swap-in); never faulted again */
			CHECK_INT(in.frees[1].fault, 0);
			CHECK_INT(in.frees[1].after, 1);
			CHECK_INT(in.frees[1].outs_at, 2);
			CHECK_INT(in.frees[1].evict_out, -1);
		}
		free(in.frees);
		in.frees = NULL;
	}
	swt_store_destroy(st);
}

/*
 * A page back from another slot, written there after its swap-in and with
 * no write fault to explain it, lost its slot at that swap-in (swap over
 * half full: should_try_to_free_swap): not a page written back to its own
 * slot, not one on a swap entry two processes faulted (the kernel cannot
 * free that), and a free found late neither disturbs the slot's next page
 * nor comes out of time order.
 */
TEST(pages_back_from_another_slot_freed_theirs)
{
	static const char rows[] =
		"INSERT INTO fault (id, ts, pid, address, error_code) VALUES"
		" (1, 100, 42, 4096, 4), (2, 110, 42, 8192, 4), (3, 120, 42, 12288, 4),"
		" (4, 130, 43, 12288, 4), (5, 160, 42, 16384, 4), (6, 400, 42, 4096, 4),"
		" (7, 410, 42, 8192, 4), (8, 420, 42, 12288, 4), (9, 450, 42, 24576, 6),"
		" (10, 500, 42, 16384, 4), (11, 600, 42, 20480, 4);";
	struct swt_replay_area area = { .id = 1, .dev = "7:0", .slots = 1000 };
	struct swt_replay_vma vmas[] = { { .pid = 42, .start = 1, .end = 16 } };
	struct swt_replay_swapout outs[] = {
		{ .ts = 50, .slot = 8, .pid = 42, .cpu = -1 },	/* H */
		{ .ts = 51, .slot = 9, .pid = 42, .cpu = -1 },	/* J */
		{ .ts = 52, .slot = 10, .pid = 42, .cpu = -1 },	/* K */
		{ .ts = 53, .slot = 11, .pid = 42, .cpu = -1 },	/* L */
		{ .ts = 54, .slot = 12, .pid = 42, .cpu = -1 },	/* N */
		{ .ts = 300, .slot = 20, .pid = 42, .cpu = -1 },	/* H, anew */
		{ .ts = 310, .slot = 9, .pid = 42, .cpu = -1 },	/* J, back to its own slot */
		{ .ts = 320, .slot = 11, .pid = 42, .cpu = -1 },	/* M, in L's old slot */
		{ .ts = 330, .slot = 22, .pid = 42, .cpu = -1 },	/* L, anew */
		{ .ts = 340, .slot = 21, .pid = 42, .cpu = -1 },	/* K, anew */
	};
	struct swt_replay_fault faults[] = {
		{ .ts = 101, .slot = 8, .vpage = 1, .pid = 42, .vma = 0, .out = 0 },	/* H */
		{ .ts = 111, .slot = 9, .vpage = 2, .pid = 42, .vma = 0, .out = 1 },	/* J */
		{ .ts = 121, .slot = 10, .vpage = 3, .pid = 42, .vma = 0, .out = 2 },	/* K */
		{ .ts = 131, .slot = 10, .vpage = 3, .pid = 43, .vma = -1, .out = 2 },	/* K's entry, shared */
		{ .ts = 161, .slot = 11, .vpage = 4, .pid = 42, .vma = 0, .out = 3 },	/* L */
		{ .ts = 401, .slot = 20, .vpage = 1, .pid = 42, .vma = 0, .out = 5 },	/* H again */
		{ .ts = 411, .slot = 9, .vpage = 2, .pid = 42, .vma = 0, .out = 6 },	/* J again */
		{ .ts = 421, .slot = 21, .vpage = 3, .pid = 42, .vma = 0, .out = 9 },	/* K again */
		{ .ts = 451, .slot = 12, .vpage = 6, .pid = 42, .vma = 0, .out = 4 },	/* N, a write */
		{ .ts = 501, .slot = 22, .vpage = 4, .pid = 42, .vma = 0, .out = 8 },	/* L again */
		{ .ts = 601, .slot = 11, .vpage = 5, .pid = 42, .vma = 0, .out = 7 },	/* M */
	};
	struct swt_replay_input in = {
		.areas = &area, .nr_areas = 1, .faults = faults, .nr_faults = SWT_ARRAY_SIZE(faults),
		.outs = outs, .nr_outs = SWT_ARRAY_SIZE(outs), .vmas = vmas, .nr_vmas = 1,
		.page_shift = 12,
	};
	struct swt_replay_config cfg = { .policy = &swt_policy_none, .cache_pages = 1000,
					 .max_request_pages = 32 };
	struct swt_replay_result *r = NULL;
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/swt-test-moved-%d.db", (int)getpid());
	CHECK_INT(swt_store_create(path, &st, &err), 0);
	CHECK_INT(swt_store_exec(st, rows, &err), 0);
	snprintf(in.kernel, sizeof(in.kernel), "%s", "6.18.44");
	CHECK_INT(swt_replay_find_frees(st, &in, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(in.nr_frees, 3);
	CHECK_INT(in.nr_frees_moved, 2);
	if (in.nr_frees == 3) {
		/* H's swap-in, found at its next fault; written to slot 20 by swap-out 5 */
		CHECK_INT(in.frees[0].fault, 0);
		CHECK_INT(in.frees[0].after, 0);
		CHECK_INT(in.frees[0].outs_at, 5);
		CHECK_INT(in.frees[0].evict_out, 5);
		/* L's, found after N's write free but before it in time */
		CHECK_INT(in.frees[1].fault, 4);
		CHECK_INT(in.frees[1].after, 4);
		CHECK_INT(in.frees[1].outs_at, 5);
		CHECK_INT(in.frees[1].evict_out, 8);
		CHECK_INT(in.frees[2].fault, 8);
		CHECK_INT(in.frees[2].after, 8);
		CHECK_INT(in.frees[2].evict_out, -1);
	}
	/* the engine takes them: H and L leave memory at the writes their next faults name */
	CHECK_INT(swt_replay_prepare(&in, &err), 0);
	CHECK_INT(swt_replay_run(&in, &cfg, &r, &err), 0);
	if (r) {
		CHECK_INT(r->freed_left_traced, 2);
		CHECK_INT(r->total.faults, SWT_ARRAY_SIZE(faults));
	}
	swt_replay_result_free(r);
	swt_replay_input_unprepare(&in);
	free(in.frees);
	swt_store_destroy(st);
}

/*
 * Swap over half full frees a slot at every swap-in (vm_swap_full, in
 * should_try_to_free_swap): the walk counts the pages on swap -- those of
 * the capture's start (swap_area.used_kib), each swap-out to a slot not
 * holding one, less each free -- against the areas' usable slots, frees
 * a fault's slot while more than half are taken (with or without its page
 * known), and gives way where the trace shows the kernel kept the slot.
 */
TEST(swap_over_half_full_frees_at_swap_in)
{
	static const char rows[] =
		"INSERT INTO device (dev, major, minor, name) VALUES (1792, 7, 0, 'loop0');"
		"INSERT INTO swap_area (id, dev, start_sector, slots, used_kib) VALUES (0, 1792, 0, 11, 8);"
		"INSERT INTO fault (id, ts, pid, address, error_code) VALUES"
		" (1, 99, 42, 4096, 4), (2, 199, 42, 8192, 4), (3, 299, 42, 12288, 4),"
		" (4, 399, 42, 16384, 4), (5, 499, 42, 16384, 4);";
	struct swt_replay_area area = { .id = 0, .dev = "7:0", .slots = 11 };
	struct swt_replay_vma vmas[] = { { .pid = 42, .start = 1, .end = 16 } };
	struct swt_replay_swapout outs[] = {
		{ .ts = 10, .slot = 1, .pid = 42, .cpu = -1 },	/* A: 3 pages on swap */
		{ .ts = 11, .slot = 2, .pid = 42, .cpu = -1 },	/* B: 4 */
		{ .ts = 12, .slot = 3, .pid = 42, .cpu = -1 },	/* C: 5, half of the 10 usable */
		{ .ts = 150, .slot = 4, .pid = 42, .cpu = -1 },	/* D: 6 */
		{ .ts = 350, .slot = 5, .pid = 42, .cpu = -1 },	/* E */
		{ .ts = 550, .slot = 6, .pid = 42, .cpu = -1 },	/* F */
	};
	struct swt_replay_fault faults[] = {
		{ .ts = 100, .slot = 1, .vpage = 1, .pid = 42, .vma = 0, .out = 0 },	/* A: half, kept */
		{ .ts = 200, .slot = 2, .vpage = 2, .pid = 42, .vma = 0, .out = 1 },	/* B: 6, freed */
		{ .ts = 300, .slot = 3, .vpage = 3, .pid = 42, .vma = 0, .out = 2 },	/* C: 5, kept */
		{ .ts = 400, .slot = 4, .vpage = 4, .pid = 42, .vma = 0, .out = 3 },	/* D: 6, freed... */
		{ .ts = 500, .slot = 4, .vpage = 4, .pid = 42, .vma = 0, .out = 3 },	/* ...but kept: 6 */
		{ .ts = 600, .slot = 5, .pid = 42, .vma = -1, .out = 4 },	/* E, page unknown: 6 */
	};
	struct swt_replay_input in = {
		.areas = &area, .nr_areas = 1, .faults = faults, .nr_faults = SWT_ARRAY_SIZE(faults),
		.outs = outs, .nr_outs = SWT_ARRAY_SIZE(outs), .vmas = vmas, .nr_vmas = 1,
		.page_shift = 12,
	};
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/swt-test-full-%d.db", (int)getpid());
	CHECK_INT(swt_store_create(path, &st, &err), 0);
	CHECK_INT(swt_store_exec(st, rows, &err), 0);
	snprintf(in.kernel, sizeof(in.kernel), "%s", "6.18.44");
	for (int known = 1; known >= 0; known--) {
		area.slots_guessed = !known;
		CHECK_INT(swt_replay_find_frees(st, &in, &err), 0);
		if (err.code)
			fprintf(stderr, "%s\n", err.msg);
		if (!known) {
			/* no size, no vm_swap_full */
			CHECK_INT(in.nr_frees, 0);
			free(in.frees);
			break;
		}
		CHECK_INT(in.nr_frees, 3);
		CHECK_INT(in.nr_frees_full, 3);
		CHECK_INT(in.nr_frees_moved, 0);
		if (in.nr_frees == 3) {
			/* B's, D's second swap-in (its first was overruled), E's */
			CHECK_INT(in.frees[0].fault, 1);
			CHECK_INT(in.frees[0].outs_at, 4);
			CHECK_INT(in.frees[1].fault, 4);
			CHECK_INT(in.frees[1].outs_at, 5);
			CHECK_INT(in.frees[2].fault, 5);
			CHECK_INT(in.frees[2].outs_at, 6);
			CHECK_INT(in.frees[2].evict_out, -1);
		}
		free(in.frees);
		in.frees = NULL;
	}
	/* nothing on swap at the start: over half full at E's swap-in only */
	CHECK_INT(swt_store_exec(st, "UPDATE swap_area SET used_kib = 0", &err), 0);
	area.slots_guessed = 0;
	CHECK_INT(swt_replay_find_frees(st, &in, &err), 0);
	CHECK_INT(in.nr_frees, 1);
	if (in.nr_frees == 1)
		CHECK_INT(in.frees[0].fault, 5);
	free(in.frees);
	in.frees = NULL;
	/* counts past what SQL sums (a damaged row): full from the start, not an error */
	CHECK_INT(swt_store_exec(st, "UPDATE swap_area SET used_kib = 4611686018427387904;"
				 "INSERT INTO swap_area (id, dev, start_sector, slots, used_kib)"
				 " VALUES (1, 1792, 0, 11, 4611686018427387904);", &err), 0);
	CHECK_INT(swt_replay_find_frees(st, &in, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	/* A, B, C, D's first (overruled) and second, E */
	CHECK_INT(in.nr_frees, 5);
	CHECK_INT(in.nr_frees_full, 5);
	free(in.frees);
	swt_store_destroy(st);
}
