/*
 * The replay engine (model: docs/replay-model.md).
 *
 * Swap-outs and demand faults are merged in time order.  Each swap slot is
 * free, allocated (holds a swapped-out page), or cached: its page is in
 * memory, either mapped by a fault or read ahead (marked, unmapped,
 * waiting for a fault).
 *
 * Memory follows the kernel's anon LRU lists for the traced cgroup.  Every
 * page read enters the head of the inactive list, which holds its share of
 * the memory (the kernel's inactive_ratio rule: half, below 1 GiB), and
 * turns over in rounds of reclaim (RECLAIM_ROUND_PAGES).  At the
 * inactive tail an unmapped readahead page is reclaimed (wasted); a mapped
 * page carries the accessed bit of the fault that mapped it, so it is
 * spared once and goes round again; at its second visit it is activated
 * if the task touched it meanwhile, else reclaimed.  The trace shows only
 * faults, so touches of resident pages are drawn from a Poisson process at
 * the rate the task faults on its swapped-out pages, per page (a seeded
 * generator keeps runs reproducible).  Active pages stay until the active
 * list is full, or until the trace shows the page faulting again -- the
 * real kernel had evicted it then, whatever the model said.  A page whose
 * next fault the trace shows (with no write to its slot in between) was
 * evicted again by the traced kernel, clean and unseen, before that fault:
 * if the model activates it, it leaves the active list at a time drawn
 * uniformly before the fault, as the kernel's deactivation would have
 * taken it, instead of staying until the fault.
 *
 * On a miss the policy lists a window; the engine reads the faulting page
 * and every listed page that is allocated and not cached, in list order,
 * through a model of the block plug (back/front merges with the latest
 * request when it is the device's, else with the device's first one when
 * several devices are plugged; split at the request size limit) and counts
 * requests and merges.
 * Built-in policies with a fast path (replay.h) hand a cluster window over
 * as its block of slots instead: no list to write and check again.
 *
 * No allocation happens per fault: every table is sized up front.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

/*
 * A slot's state and its cached page in one word, so that the hot checks
 * ("allocated and not cached?", "read ahead?") read 4 bytes per slot:
 *
 *	SLOT_FREE	nothing on swap
 *	SLOT_ALLOC	holds a swapped-out page that is not cached
 *	>= 0		cached: node index << 1, | 1 while read ahead and unused
 */
#define SLOT_FREE (-2)
#define SLOT_ALLOC (-1)
#define SLOT_FIRST_WRITTEN (-3)	/* prep only: first event on the slot is a swap-out */
#define SLOT_LISTED (-4)	/* allocated, already in this miss's reads (cache_page comes next) */

#define NIL (-1)

/*
 * Reclaim frees pages in rounds: a cgroup over its limit reclaims at least
 * SWAP_CLUSTER_MAX (32) pages (try_to_free_mem_cgroup_pages), so the
 * inactive list, once over its size, turns until it is a round below it.
 * Memories of a few rounds turn page by page (the unit tests' tiny ones).
 */
#define RECLAIM_ROUND_PAGES 32

/*
 * A node's stamp: the page-in count when the page was spared at the
 * inactive tail (its accessed bit looked at, PG_referenced set), or one of
 * these, above every stamp (a run whose page-ins could reach them keeps
 * its stamps in a side table: struct wide_node).
 */
#define STAMP_DEAD (UINT32_MAX - 3)	/* its page left from the middle of a list */
#define STAMP_ACTIVE (UINT32_MAX - 2)	/* on the active list */
#define STAMP_RA (UINT32_MAX - 1)	/* inactive, read ahead and not used yet: never scanned */
#define NEVER_SCANNED UINT32_MAX	/* inactive, mapped, not yet spared at the tail */
_Static_assert(STAMP_RA == NEVER_SCANNED - 1, "cache_page stamps NEVER_SCANNED - ra");

/*
 * A cached page, a place in one of the LRU rings (below).  8 bytes, so
 * that more of the rings stays in cache: its slot word is named by its
 * index in the run's one table of slot words (the area, needed only for
 * counts, is found at the end), and whether it is active or was read ahead
 * are stamps no page-in count reaches.  Both fit 32 bits when the run's
 * slots and page-ins do (checked per run; else struct wide_node holds them).
 */
struct node {
	uint32_t word;		/* index into engine.words */
	uint32_t stamp;		/* STAMP_*, NEVER_SCANNED or the page-ins when spared */
};

_Static_assert(sizeof(struct node) == 8, "struct node grew: keep it small for the cache");

/*
 * A node's word index and page-in stamp in full, for runs whose slots or
 * page-ins could outgrow 32 bits (the node's stamp then says only
 * "spared", as 0, or holds its STAMP_* state).
 */
struct wide_node {
	uint64_t word, stamp;
};

struct area_state {
	int32_t *slots;		/* per slot: SLOT_FREE, SLOT_ALLOC or the cached node (above) */
	uint64_t base;		/* index of slots[0] in engine.words */
	int32_t *next_use;	/* fault index of the slot's next fault, NIL never (filled on demand) */
	uint64_t nslots;
	uint64_t area_slots;	/* what policies are told (swt_fault_info.area_slots) */
	uint32_t fault_flags;	/* swt_fault_info.flags but SWT_FAULT_VPAGE_KNOWN */
};

/*
 * An LRU list as a ring of nodes: pages enter at the head and are scanned
 * at the tail, in memory order, with no links to follow or keep.  A page
 * that leaves from the middle (a fault, a write to its slot, a due
 * eviction) leaves its node dead, and the tail steps over it.  A ring has
 * a power of two nodes, at least half as many again as its list can hold
 * pages, so that compacting it (in place, order kept) when dead nodes
 * fill it is rare.  Head and tail count on and are masked: the nodes in
 * use are head - tail.  (64-bit members: stores to the nodes' 32-bit ones
 * cannot alias them, so they stay in registers.)
 */
struct ring {
	uint64_t base;		/* its first node's index in engine.nodes */
	uint64_t mask;		/* nodes - 1 */
	uint64_t limit;		/* nodes in use beyond which a push compacts first (mask) */
	uint64_t head;		/* where the next page enters */
	uint64_t tail;		/* the oldest node, live or dead */
	uint64_t len;		/* pages on the list */
};

/*
 * A swap entry as the VMA windows resolve it: area << 32 | slot (areas fit
 * 16 bits and slots 32), or PTE_NONE.
 */
#define PTE_NONE UINT64_MAX
#define PTE_NOWHERE UINT32_MAX

static inline uint64_t pte_of(const struct swt_replay_fault *f)
{
	return (uint64_t)f->area << 32 | f->slot;
}

struct vpage_info {
	int32_t last, next;	/* fault indexes: latest processed, next to come */
};

struct read {
	uint64_t slot;
	uint32_t area;
	uint32_t target;
};

struct plug_rq {
	uint32_t area;
	uint64_t start, end;	/* slots [start, end) */
};

/*
 * An activated page the trace shows faulting again, to be evicted before
 * that fault.  Until then no fault maps a page of its slot, and only a
 * mapped page is ever activated, so if the slot's page is on the active
 * list then, it is still that page.
 */
struct due_eviction {
	uint64_t word;
	int32_t next;		/* the next eviction due in the same bucket, then at the same fault */
	uint32_t at;		/* the fault it is due before */
};

/*
 * Due evictions wait in buckets of DUE_BUCKET faults and are sorted into
 * their faults as their bucket begins: scheduling one then writes a small
 * table of bucket heads, not a random entry of a per-fault table as large
 * as the trace (a load the loop waited on).
 */
#define DUE_BUCKET_SHIFT 6
#define DUE_BUCKET (1u << DUE_BUCKET_SHIFT)

struct prep;
static void prep_free(struct prep *pr, size_t nr_areas, size_t nr_vmas);

struct engine {
	const struct swt_replay_input *in;
	const struct swt_replay_config *cfg;
	const struct swt_replay_observer *observer;	/* cfg's, NULL mostly */
	struct swt_replay_result *res;
	struct area_state *areas;
	uint64_t any_rotational;

	struct swt_arena arena;		/* the big tables below (engine_init) */
	int32_t *words;			/* every area's slot words, one after another */
	/*
	 * words[slot_words + k]: the word of the page whose slot free k
	 * (in->frees) took, which stays in memory without one; moves of its
	 * node and its eviction write there, and count no swapped-out slot
	 */
	uint64_t slot_words;
	/* the oldest free whose page may still be in memory; frees replayed so far */
	size_t sink_oldest, sink_end;
	size_t sinks_held;		/* frees whose page was in memory then */
	int32_t *next_use;		/* per slot word: areas[].next_use */
	struct node *nodes;		/* the inactive ring's, then the active ring's */
	struct wide_node *wide;		/* per node, for runs 32 bits do not hold; else NULL */
	struct ring inactive, active;
	int tight_rings;		/* SWT_TEST_TIGHT_RINGS (engine_init) */
	uint64_t cap_inactive, cap_total;
	uint64_t shrink_to;		/* the inactive list's length after a round of reclaim */

	const struct swt_policy *policy;
	const struct swt_policy_fast *fast;	/* a built-in's fast path (replay.h), or NULL */
	int full_info;				/* its misses fill the whole fault info (a VMA window may follow) */
	void *inst;
	struct swt_policy_env env;
	/* the fault as policies see it; the per-run members are filled once */
	struct swt_fault_info info;
	uint64_t *win_list;
	uint32_t win_cap;
	unsigned vma_ra_max;		/* vma_ra's window limit, 1 << page_cluster (at most 5) */
	struct read *reads;
	struct plug_rq *plug;

	const struct prep *prep;	/* shared by every run of the input */
	struct prep *own_prep;		/* built for this run when the input had none */
	size_t cur;			/* fault being processed */

	/*
	 * The futures only oracle-like policies and VMA windows read: kept up
	 * to date lazily (caught up to cur when read), so runs that never
	 * read them pay nothing; the PTEs, by runs that read VMA windows
	 * through a fast path (full_info), at every fault (on_fault).
	 */
	struct vpage_info *vpages;	/* per page entry of prep */
	size_t vpages_synced;		/* faults applied to vpages; SIZE_MAX before it is set up */
	uint64_t *ptes;			/* per page entry: the swap entry its PTE holds (PTE_*) */
	size_t ptes_synced;		/* faults applied to ptes; SIZE_MAX before it is set up */
	size_t next_use_synced;		/* the same for areas[].next_use */

	/*
	 * Evictions of activated pages the trace shows faulting again: per
	 * slot word, the next fault of the page its latest fault mapped (NIL
	 * none); per bucket of faults, the first of the evictions due in it,
	 * and per fault of the current bucket, the first due then, chained
	 * through a pool with one entry per mapping at most.
	 */
	int32_t *word_refault;
	int32_t *due_bucket;
	int32_t due_now[DUE_BUCKET];
	size_t due_bucket_now;		/* the bucket sorted into due_now */
	struct due_eviction *due;
	size_t nr_due, cap_due;

	uint64_t pageins;
	uint64_t nr_alloc;		/* slots holding a page that is not cached */
	uint64_t rng;			/* xorshift state for the touches of resident pages */

	/* oracle runs: its readahead pages stay cached until the fault that uses them */
	int pin_readahead;
	int reads_at_hits;		/* SWT_POLICY_READS_AT_HITS */

	char why[200];			/* what failed in the event loop, for swt_replay_run */

	/*
	 * The per-second series grow as seconds come (series_at); a growth
	 * that failed counts into the scratch point and fails the run at its
	 * end.  Unsorted: a fault's second was earlier than one before it (an
	 * input built out of time order), sorted out at the end.
	 */
	struct swt_replay_series_point series_scratch;
	int series_nomem, series_unsorted;

	struct swt_touch_table touch;	/* sample_touched's brackets */
	/*
	 * vma's state, or auto's VMA state, its windows placed inline
	 * (swt_policy_fast); last, so that the members every run reads keep
	 * their places (lines).
	 */
	struct swt_vma_ra *vma_ra;
	int vma_ra_auto;		/* vma_ra is auto's: for the faults it sends there */
};

/* ---- lists --------------------------------------------------------------- */

#define TIGHT_RING_PUSHES 1024

/* The index of a node's slot word in engine.words. */
static inline uint64_t node_word(const struct engine *e, int32_t n)
{
	return e->wide ? e->wide[n].word : e->nodes[n].word;
}

/* The node at a ring position. */
static inline int32_t ring_node(const struct ring *r, uint64_t pos)
{
	return (int32_t)(r->base + (pos & r->mask));
}

/* A node moved: its page's slot word follows it (the readahead bit kept). */
static inline void follow_node(struct engine *e, int32_t n)
{
	int32_t *word = &e->words[node_word(e, n)];

	*word = (int32_t)((uint32_t)n << 1 | ((uint32_t)*word & 1));
}

/* Move the ring's live nodes together from its tail on, in order: the dead ones are freed. */
static __attribute__((noinline)) void ring_compact(struct engine *e, struct ring *r)
{
	uint64_t to = r->tail;

	for (uint64_t from = r->tail; from != r->head; from++) {
		int32_t nf = ring_node(r, from), nt = ring_node(r, to);

		if (e->nodes[nf].stamp == STAMP_DEAD)
			continue;
		if (nf != nt) {
			e->nodes[nt] = e->nodes[nf];
			if (e->wide)
				e->wide[nt] = e->wide[nf];
			follow_node(e, nt);
		}
		to++;
	}
	r->head = to;
	if (e->tight_rings)
		r->limit = SWT_MIN(r->mask, r->len + TIGHT_RING_PUSHES);
}

/*
 * Room for k (>= 1) pages to enter the head of a ring: it is compacted
 * first if they would not fit.  Sizes keep a ring from filling with live
 * nodes, whatever one miss reads.
 */
static inline void ring_make_room(struct engine *e, struct ring *r, uint64_t k)
{
	if (r->head - r->tail + (k - 1) > r->limit)
		ring_compact(e, r);
}

/* A page enters the head of a ring with room: its node, whose slot word the caller points at it. */
static inline int32_t ring_put(struct engine *e, struct ring *r, uint32_t word, uint32_t stamp)
{
	int32_t n = ring_node(r, r->head++);

	e->nodes[n] = (struct node){ .word = word, .stamp = stamp };
	r->len++;
	return n;
}

/* The same, making room first. */
static inline int32_t ring_push(struct engine *e, struct ring *r, uint32_t word, uint32_t stamp)
{
	ring_make_room(e, r, 1);
	return ring_put(e, r, word, stamp);
}

/* The oldest page of a ring with pages (dead nodes before it are dropped). */
static inline int32_t ring_tail(struct engine *e, struct ring *r)
{
	while (e->nodes[ring_node(r, r->tail)].stamp == STAMP_DEAD)
		r->tail++;
	return ring_node(r, r->tail);
}

/* The oldest page (ring_tail) leaves the ring. */
static inline void ring_drop_tail(struct ring *r)
{
	r->tail++;
	r->len--;
}

/*
 * The oldest page (ring_tail, node n) goes round to the head of its ring
 * with a new stamp.  Dropping it made room: no compaction.
 */
static inline void ring_requeue_tail(struct engine *e, struct ring *r, int32_t n, uint32_t stamp)
{
	int32_t m = ring_node(r, r->head);

	e->nodes[m] = (struct node){ .word = e->nodes[n].word, .stamp = stamp };
	if (e->wide)
		e->wide[m] = e->wide[n];
	r->tail++;
	r->head++;
	follow_node(e, m);
}

static inline struct ring *ring_of(struct engine *e, int32_t n)
{
	return (uint64_t)n < e->active.base ? &e->inactive : &e->active;
}

/*
 * For the tests (SWT_TEST_TIGHT_RINGS): do the rings and the slot words
 * agree?  Every live node's slot word points back at it, with the
 * readahead bit its stamp says, active stamps only on the active ring;
 * the lists' lengths count the live nodes; every cached slot word is one
 * of them; nr_alloc counts the swapped-out slots.
 */
static int rings_consistent(const struct engine *e)
{
	const struct ring *rings[] = { &e->inactive, &e->active };
	uint64_t nr_words, live = 0, cached = 0, alloc = 0;

	if (!e->in->nr_areas)
		return 1;
	nr_words = e->slot_words + e->in->nr_frees;

	for (int k = 0; k < 2; k++) {
		const struct ring *r = rings[k];
		uint64_t len = 0;

		if (r->head - r->tail > r->mask + 1)
			return 0;
		for (uint64_t pos = r->tail; pos != r->head; pos++) {
			int32_t n = ring_node(r, pos);
			uint32_t stamp = e->nodes[n].stamp;
			uint64_t w = node_word(e, n);

			if (stamp == STAMP_DEAD)
				continue;
			len++;
			if (w >= nr_words || e->words[w] < 0 || e->words[w] >> 1 != n ||
			    (e->words[w] & 1) != (stamp == STAMP_RA) || (stamp == STAMP_ACTIVE) != (k == 1))
				return 0;
		}
		if (len != r->len)
			return 0;
		live += len;
	}
	for (uint64_t w = 0; w < nr_words; w++) {
		cached += e->words[w] >= 0;
		alloc += e->words[w] == SLOT_ALLOC && w < e->slot_words;
	}
	return cached == live && alloc == e->nr_alloc;
}

/*
 * The page of node n leaves memory: the slot keeps its page on swap.  A
 * page read ahead and not used is wasted; run_pass counts those at the
 * end (read ahead, less hit, less still cached), where the area is looked
 * up once.  The caller takes the node off its ring.
 */
static void forget_node(struct engine *e, int32_t n)
{
	uint64_t w = node_word(e, n);

	e->words[w] = SLOT_ALLOC;
	e->nr_alloc += w < e->slot_words;	/* a page without a slot (a write freed it) leaves none */
}

/*
 * Forget a cached page, wherever it is on its list: node n, found in slot
 * word w.  The caller knows w, so the node is only written: loading its
 * word back (forget_node) was a random load the loop waited on.
 */
static void uncache(struct engine *e, int32_t n, uint64_t w)
{
	e->words[w] = SLOT_ALLOC;
	e->nr_alloc += w < e->slot_words;	/* as forget_node */
	ring_of(e, n)->len--;
	e->nodes[n].stamp = STAMP_DEAD;
}

/*
 * Memory pressure as the kernel's anon LRU handles it: keep the inactive
 * list no smaller than its share (deactivating from the active tail), and
 * reclaim from the inactive tail: a page accessed since the last scan is
 * spared once (set referenced, back to the head) and activated when found
 * accessed again; anything else is evicted.
 */
static double rand01(struct engine *e)
{
	return swt_draw_fraction(swt_rand_draw(&e->rng));
}

void swt_touch_table_init(struct swt_touch_table *t)
{
	for (size_t k = 0; k < SWT_TOUCH_BUCKETS; k++) {
		/* -ln(1 - r) at the bucket's ends: the mean at which p is r */
		t->bucket[k].lo = -log1p(-(double)k / SWT_TOUCH_BUCKETS) - SWT_TOUCH_MARGIN;
		t->bucket[k].hi = k + 1 < SWT_TOUCH_BUCKETS
			? -log1p(-(double)(k + 1) / SWT_TOUCH_BUCKETS) + SWT_TOUCH_MARGIN : INFINITY;
	}
}

/*
 * Was a mapped page touched since it was last looked at?  The trace shows
 * only faults; touches of resident pages are taken to come at the rate the
 * task faults on its swapped-out pages, per page: faults per page read,
 * over the pages swapped out now.
 */
static inline __attribute__((always_inline)) int sample_touched(struct engine *e, uint64_t since,
								 double per_pagein)
{
	double lambda, mean;

	if (!e->nr_alloc || !e->pageins)
		return 0;
	/*
	 * per_pagein is cur / pageins, divided once per shrink (shrink_lists).
	 * Counts below 2^63 convert the same through int64_t, in fewer
	 * instructions.
	 */
	lambda = per_pagein / (double)(int64_t)e->nr_alloc;
	/* touches expected over the page-ins since it was spared */
	mean = lambda * (double)(int64_t)since;
	return swt_touch_decide(&e->touch, mean, swt_rand_draw(&e->rng));
}

/*
 * An activated page the trace shows faulting again: the traced kernel had
 * evicted it by then, clean and unseen (deactivated, then reclaimed at the
 * inactive tail), where the model's active list would keep it.  When is
 * not known; the time is drawn uniformly between now and that fault.
 */
static void schedule_eviction(struct engine *e, uint64_t w)
{
	int32_t refault = e->word_refault[w];
	size_t gap, at;
	int32_t *head;

	if (refault == NIL || (size_t)refault <= e->cur + 1 || e->nr_due >= e->cap_due)
		return;		/* none, or no fault in between: it goes at the refault */
	gap = (size_t)refault - e->cur - 1;
	at = e->cur + 1 + (size_t)(rand01(e) * (double)gap);
	if (at >= (size_t)refault)
		return;		/* a draw near 1, rounded up */
	head = (at >> DUE_BUCKET_SHIFT) == e->due_bucket_now ? &e->due_now[at & (DUE_BUCKET - 1)]
							     : &e->due_bucket[at >> DUE_BUCKET_SHIFT];
	e->due[e->nr_due] = (struct due_eviction){ .word = w, .next = *head, .at = (uint32_t)at };
	*head = (int32_t)e->nr_due++;
}

/* Bucket b begins: its due evictions, by fault. */
static inline void due_sort(struct engine *e, size_t b)
{
	int32_t k = e->due_bucket[b], next;

	e->due_bucket_now = b;
	for (; k != NIL; k = next) {
		int32_t *head = &e->due_now[e->due[k].at & (DUE_BUCKET - 1)];

		next = e->due[k].next;
		e->due[k].next = *head;
		*head = k;
	}
}

/* Before fault fi: the evictions due now, of pages still active. */
static __attribute__((noinline)) void evict_due(struct engine *e, int32_t k)
{
	for (; k != NIL; k = e->due[k].next) {
		int32_t word = e->words[e->due[k].word];

		if (word >= 0 && (uint64_t)(word >> 1) >= e->active.base)
			uncache(e, word >> 1, e->due[k].word);
	}
}

/*
 * Memory pressure: the inactive list turns over.  At its tail an unmapped
 * readahead page is reclaimed; a mapped page is spared once, then
 * activated if it was touched since, else reclaimed.  An overfull active
 * list gives up its oldest pages.
 */
static inline __attribute__((always_inline)) void shrink_body(struct engine *e, int wide, int pin,
								double per_pagein)
{
	struct ring *in = &e->inactive, *act = &e->active;
	uint64_t spins = 0;

	while (in->len > e->shrink_to) {
		int32_t n = ring_tail(e, in);
		uint32_t stamp = e->nodes[n].stamp;

		if (stamp == NEVER_SCANNED) {
			/* spared once: PG_referenced */
			if (wide)
				e->wide[n].stamp = e->pageins;
			ring_requeue_tail(e, in, n, wide ? 0 : (uint32_t)e->pageins);
		} else if (pin && stamp == STAMP_RA && spins++ < in->len) {
			/* the oracle read it because a fault will use it: it waits */
			ring_requeue_tail(e, in, n, STAMP_RA);
		} else if (stamp != STAMP_RA &&
			   sample_touched(e, e->pageins - (wide ? e->wide[n].stamp : stamp), per_pagein)) {
			int32_t m;

			ring_drop_tail(in);
			m = ring_push(e, act, e->nodes[n].word, STAMP_ACTIVE);
			if (wide)
				e->wide[m] = e->wide[n];
			follow_node(e, m);
			schedule_eviction(e, node_word(e, m));
		} else {
			forget_node(e, n);	/* an unused readahead page (wasted), or a mapped one not touched */
			ring_drop_tail(in);
		}
	}
	while (in->len + act->len > e->cap_total && act->len) {
		forget_node(e, ring_tail(e, act));
		ring_drop_tail(act);
	}
}

/*
 * shrink_body for the common run: 32-bit nodes, no pinned readahead.  At
 * the inactive tail, which page comes next (a readahead page never used,
 * a mapped page not yet spared, one spared before) follows no pattern a
 * branch predictor learns, so the first two, which only move or drop the
 * node, share one path of selects: the node is copied to the head either
 * way (outside the ring's nodes in use when dropped; the ring may be full,
 * but then the head's node is the tail's own, which is read first).
 */
static inline __attribute__((always_inline)) void shrink_plain(struct engine *e, double per_pagein)
{
	struct ring *in = &e->inactive, *act = &e->active;
	uint32_t spared_stamp = (uint32_t)e->pageins;

	while (in->len > e->shrink_to) {
		int32_t n = ring_tail(e, in);
		struct node node = e->nodes[n];

		if (node.stamp >= STAMP_RA) {
			/* NEVER_SCANNED: spared once (PG_referenced); STAMP_RA: wasted */
			uint64_t spared = node.stamp == NEVER_SCANNED;
			int32_t m = ring_node(in, in->head);

			e->nodes[m] = (struct node){ .word = node.word, .stamp = spared_stamp };
			e->words[node.word] = spared ? (int32_t)((uint32_t)m << 1) : SLOT_ALLOC;
			in->head += spared;
			in->tail++;
			in->len -= 1 - spared;
			e->nr_alloc += (1 - spared) & (uint64_t)(node.word < e->slot_words);
		} else if (sample_touched(e, e->pageins - node.stamp, per_pagein)) {
			int32_t m;

			ring_drop_tail(in);
			m = ring_push(e, act, node.word, STAMP_ACTIVE);
			follow_node(e, m);
			schedule_eviction(e, node.word);
		} else {
			forget_node(e, n);	/* not touched since it was spared */
			ring_drop_tail(in);
		}
	}
	while (in->len + act->len > e->cap_total && act->len) {
		forget_node(e, ring_tail(e, act));
		ring_drop_tail(act);
	}
}

/*
 * Out of line: shrink() runs on every miss, but shrink_lists only when a
 * list is over its size; inlined, its register saves would cost every call.
 * The common run (32-bit nodes, no pinned readahead) has a body of its own,
 * free of the checks for the others.
 */
static __attribute__((noinline)) void shrink_lists(struct engine *e)
{
	/* cur and page-ins stay put while the lists shrink: the touch draws' ratio, once */
	double per_pagein = e->pageins ? (double)(int64_t)e->cur / (double)(int64_t)e->pageins : 0;

	if (!e->wide && !e->pin_readahead)
		shrink_plain(e, per_pagein);
	else
		shrink_body(e, e->wide != NULL, e->pin_readahead, per_pagein);
}

/* After pages were read: shrink the lists if they are over their sizes (not while memory fills). */
static inline void shrink(struct engine *e)
{
	const struct ring *in = &e->inactive, *act = &e->active;

	if (in->len > e->cap_inactive || (in->len + act->len > e->cap_total && act->len))
		shrink_lists(e);
}

/* ---- the futures, caught up on demand ------------------------------------ */

static void vpages_sync(struct engine *e);
static void next_use_sync(struct engine *e);

/* ---- policy services ---------------------------------------------------- */

static uint64_t env_faults_until_use(const struct swt_policy_env *env, uint32_t area, uint64_t slot)
{
	struct engine *e = env->engine;
	int32_t next;

	if (area >= e->in->nr_areas || slot >= e->areas[area].nslots)
		return UINT64_MAX;
	if (e->next_use_synced != e->cur)
		next_use_sync(e);
	next = e->areas[area].next_use[slot];
	return next == NIL || (size_t)next < e->cur ? UINT64_MAX : (uint64_t)next - e->cur;
}

/*
 * Whether a page next faulted at fault index next is used within horizon
 * faults, horizon at most INT32_MAX (fault indexes fit 31 bits: beyond
 * that is "ever").  A fault before this one, or NIL (-1), is a negative
 * distance that, unsigned, lies past any such horizon: one compare, no
 * branch.
 */
static inline uint64_t used_within(const struct engine *e, int32_t next, uint64_t horizon)
{
	return (uint64_t)((int64_t)next - (int64_t)e->cur) <= horizon;
}

static inline uint64_t all_bits(unsigned n)
{
	return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

uint64_t swt_replay_slots_used_within(const struct swt_policy_env *env, uint32_t area,
				      uint64_t first, unsigned n, uint64_t horizon)
{
	struct engine *e = env->engine;
	const int32_t *next_use;
	uint64_t mask = 0, nslots;

	/* a slot never faulted (past the table too) is "used within" only an endless horizon */
	if (horizon == UINT64_MAX)
		return all_bits(n);
	if (area >= e->in->nr_areas)
		return 0;
	if (e->next_use_synced != e->cur)
		next_use_sync(e);
	next_use = e->areas[area].next_use;
	nslots = e->areas[area].nslots;
	if (first >= nslots)
		return 0;
	if (n > nslots - first)
		n = (unsigned)(nslots - first);
	if (horizon > INT32_MAX)
		horizon = INT32_MAX;
	for (unsigned i = 0; i < n; i++)
		mask |= used_within(e, next_use[first + i], horizon) << i;
	return mask;
}

static int32_t vpage_entry(const struct engine *e, int32_t pid, int32_t vma, uint64_t vpage);

static const struct vpage_info *vpage_lookup(struct engine *e, int32_t pid, int32_t vma,
					     uint64_t vpage)
{
	int32_t idx = vpage_entry(e, pid, vma, vpage);

	if (idx == NIL)
		return NULL;
	if (e->vpages_synced != e->cur)
		vpages_sync(e);
	return &e->vpages[idx];
}

static uint64_t env_faults_until_vpage_use(const struct swt_policy_env *env, int32_t pid,
					   uint64_t vpage)
{
	struct engine *e = env->engine;
	const struct vpage_info *v = vpage_lookup(e, pid, e->in->faults[e->cur].vma, vpage);

	if (!v || v->next == NIL || (size_t)v->next < e->cur)
		return UINT64_MAX;
	return (uint64_t)v->next - e->cur;
}

static uint64_t env_readahead_lifetime(const struct swt_policy_env *env)
{
	const struct engine *e = env->engine;
	/* page-ins per fault so far: how fast the inactive list turns over */
	double rate = e->cur ? (double)e->pageins / (double)e->cur : 1.0;

	if (rate < 1.0)
		rate = 1.0;
	return (uint64_t)((double)e->cap_inactive / rate);
}

/* ---- setup --------------------------------------------------------------- */

/* The built-ins with a fast path; plugins never match and take the general one. */
static const struct swt_policy_fast *const fast_paths[] = {
	&swt_fast_none, &swt_fast_fixed, &swt_fast_adaptive, &swt_fast_auto, &swt_fast_vma,
};

static const struct swt_policy_fast *fast_path_of(const struct swt_policy *p)
{
	for (size_t i = 0; i < sizeof(fast_paths) / sizeof(fast_paths[0]); i++)
		if (fast_paths[i]->policy == p)
			return fast_paths[i];
	return NULL;
}

static uint64_t inactive_pages(uint64_t cache_pages, uint32_t page_shift, double fraction)
{
	uint64_t gb = (cache_pages << page_shift) >> 30, ratio;

	if (fraction > 0 && fraction < 1)
		return (uint64_t)((double)cache_pages * fraction);
	/* the kernel's inactive_ratio for anon LRU lists: int_sqrt(10 * GB), at least 1 */
	ratio = gb ? (uint64_t)sqrt(10.0 * (double)gb) : 1;
	if (!ratio)
		ratio = 1;
	return cache_pages / (ratio + 1);
}

/* A fault's second from in->first_ns; one before it counts in second 0. */
static uint64_t series_second(const struct swt_replay_input *in, uint64_t ts)
{
	return ts > in->first_ns ? (ts - in->first_ns) / 1000000000ull : 0;
}

/*
 * From the faults, not the capture's span: every event sets that, and one
 * damaged timestamp would stretch it.
 */
uint64_t swt_replay_fault_span_seconds(const struct swt_replay_input *in, uint64_t *first_second)
{
	uint64_t first = UINT64_MAX, last = 0;

	/* all of them, not the first and last: an input built otherwise may be out of order */
	for (size_t i = 0; i < in->nr_faults; i++) {
		first = SWT_MIN(first, in->faults[i].ts);
		last = SWT_MAX(last, in->faults[i].ts);
	}
	*first_second = 0;
	if (!in->nr_faults)
		return 0;
	*first_second = series_second(in, first);
	return series_second(in, last) - *first_second;
}

int swt_replay_stream_slots(const struct swt_replay_input *in, uint64_t *nslots,
			    struct swt_err *err)
{
	size_t n = in->nr_faults;

	for (size_t i = 0; i < in->nr_areas; i++)
		nslots[i] = 1;
	for (size_t i = 0; i < n + in->nr_outs; i++) {
		uint32_t area = i < n ? in->faults[i].area : in->outs[i - n].area;
		uint64_t slot = i < n ? in->faults[i].slot : in->outs[i - n].slot;

		/* each slot, not the highest: slot 2^64 - 1 would wrap the size to 0 */
		if (slot >= SWT_SLOT_LIMIT)
			return swt_error(err, SWT_EUSAGE, "swap area %s: slot %llu is beyond what the "
					 "replay handles (2^32)", in->areas[area].dev,
					 (unsigned long long)slot);
		if (slot >= nslots[area])
			nslots[area] = slot + 1;
	}
	/*
	 * Loading a database checks this first, naming it; here for every
	 * input, re-placed ones too: a what-if layout can put pages at the far
	 * end of a device (the kernel fills a partial last cluster first).
	 */
	return swt_replay_slot_tables_fit(in, nslots, err);
}

int swt_replay_slot_tables_fit(const struct swt_replay_input *in, const uint64_t *nslots,
			       struct swt_err *err)
{
	int64_t avail_kib = swt_mem_available_kib();
	uint64_t table_slots = 0;
	size_t widest = 0;

	for (size_t i = 0; i < in->nr_areas; i++) {
		table_slots += nslots[i];
		if (nslots[i] > nslots[widest])
			widest = i;
	}
	if (avail_kib < 0 || table_slots <= (uint64_t)avail_kib * 1024 / SWT_SLOT_TABLE_BYTES)
		return 0;
	return swt_error(err, SWT_ENOMEM, "swap area %s: its highest slot used, %llu, makes the "
			 "replay's slot tables %.1f GiB, more than the %.1f GiB of memory available "
			 "(they are as long as the highest slot)", in->areas[widest].dev,
			 (unsigned long long)(nslots[widest] - 1),
			 (double)table_slots * SWT_SLOT_TABLE_BYTES / (1 << 30),
			 (double)avail_kib / (1 << 20));
}

void swt_replay_result_free(struct swt_replay_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->parts && i < r->nr_parts; i++) {
		free(r->parts[i].request_hist);
		free(r->parts[i].series);
	}
	free(r->parts);
	free(r);
}

void swt_replay_result_shed(struct swt_replay_result *r)
{
	for (size_t i = 0; r && r->parts && i < r->nr_parts; i++) {
		free(r->parts[i].request_hist);
		r->parts[i].request_hist = NULL;
		free(r->parts[i].series);
		r->parts[i].series = NULL;
		r->parts[i].nr_seconds = r->parts[i].series_cap = 0;
	}
}

static void engine_release(struct engine *e)
{
	if (e->inst && e->policy->destroy)
		e->policy->destroy(e->inst);
	free(e->areas);
	swt_arena_release(&e->arena);
	free(e->win_list);
	free(e->reads);
	free(e->plug);
	prep_free(e->own_prep, e->in->nr_areas, e->in->nr_vmas);
	swt_replay_result_free(e->res);
}

/*
 * What every run of an input shares, computed once: the futures (each
 * fault's next fault on the same slot and on the same page), the virtual
 * page table, slot table sizes and the slots allocated before the trace;
 * the order of swap-outs and faults, each fault's second, and the fault
 * counts per partition and second, which no policy changes.
 */
struct prep {
	uint64_t *nslots;		/* per area */
	int32_t **init_slots;		/* per area: SLOT_FREE or SLOT_ALLOC at the start */
	int32_t **first_use;		/* per area: first fault on each slot */
	uint64_t nr_alloc;
	int32_t *next_same_slot;	/* per fault */
	int32_t *refault;		/* per fault: the next fault on its slot with no write between, NIL */
	int32_t *next_same_vpage;	/* per fault */
	int32_t *vp_idx;		/* per fault: its page's entry, NIL */
	int32_t *vp_first;		/* per page: first fault */
	size_t nr_vpages;
	/*
	 * What a page's PTE holds (the swap entry it is faulted with next,
	 * else the one it was last faulted with), resolved so that a VMA
	 * window entry is one lookup: at the start and after each fault on
	 * the page (so that, caught up to a fault, the faulting page's PTE
	 * holds that fault's entry).  The run's PTEs (engine.ptes) are kept
	 * by position: a VMA's pages side by side at its base, in address
	 * order, so that a window's entries share a cache line or two and
	 * are read with no page entry between; other pages after them.
	 */
	uint64_t *pte_after;		/* per fault on a known page */
	uint64_t *pte_first;		/* per position (PTE_NONE where no page) */
	size_t nr_ptes;			/* positions */
	uint32_t *pte_pos;		/* per page: its position */
	uint32_t *pte_at;		/* per fault: its page's position, PTE_NOWHERE */
	uint32_t *vma_ptes;		/* per VMA: its base, or PTE_NOWHERE (not side by side) */
	struct swt_map vpage_index;	/* (pid, vpage) -> page entry, for sparse VMAs */
	int32_t **vma_pages;		/* per VMA: dense vpage - start -> page entry, or NULL */
	uint64_t any_rotational;
	uint32_t *outs_before;		/* per fault: swap-outs replayed before it (time order) */
	/* the frees whose page a swap-out wrote elsewhere, by it: out << 32 | free */
	uint64_t *free_by_out;
	size_t nr_free_by_out;
	uint32_t *fault_sec;		/* per fault: its second, from first_second */
	uint64_t first_second;		/* swt_replay_fault_span_seconds() */
	uint64_t *area_faults;		/* per area */
	size_t *series_seconds;		/* per area: the seconds its faults fall in */
};

static void prep_free(struct prep *pr, size_t nr_areas, size_t nr_vmas)
{
	if (!pr)
		return;
	/* each on its own: out of memory, one table can be there without the other */
	for (size_t i = 0; pr->init_slots && i < nr_areas; i++)
		free(pr->init_slots[i]);
	for (size_t i = 0; pr->first_use && i < nr_areas; i++)
		free(pr->first_use[i]);
	for (size_t i = 0; pr->vma_pages && i < nr_vmas; i++)
		free(pr->vma_pages[i]);
	free(pr->nslots);
	free(pr->init_slots);
	free(pr->first_use);
	free(pr->series_seconds);
	free(pr->area_faults);
	free(pr->next_same_slot);
	free(pr->refault);
	free(pr->next_same_vpage);
	free(pr->vp_idx);
	free(pr->vp_first);
	free(pr->pte_first);
	free(pr->pte_after);
	free(pr->pte_pos);
	free(pr->pte_at);
	free(pr->vma_ptes);
	free(pr->outs_before);
	free(pr->free_by_out);
	free(pr->fault_sec);
	free(pr->vma_pages);
	swt_map_release(&pr->vpage_index);
	free(pr);
}

static int alloc_result(struct engine *e, struct swt_err *err)
{
	const struct swt_replay_input *in = e->in;
	struct swt_replay_result *r = calloc(1, sizeof(*r));
	size_t i;

	if (!r)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	e->res = r;
	r->nr_parts = in->nr_areas;
	r->max_request_pages = e->cfg->max_request_pages;
	r->parts = calloc(in->nr_areas ? in->nr_areas : 1, sizeof(*r->parts));
	if (!r->parts)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (i = 0; i < in->nr_areas; i++) {
		struct swt_replay_part *p = &r->parts[i];

		/* the seconds its own faults fall in; a read from another area's fault may add some */
		p->series_cap = SWT_MAX(e->prep->series_seconds[i], 1);
		p->request_hist = calloc(r->max_request_pages + 1, sizeof(uint64_t));
		p->series = malloc(p->series_cap * sizeof(*p->series));
		if (!p->request_hist || !p->series)
			return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	return 0;
}

void swt_replay_input_unprepare(struct swt_replay_input *in)
{
	prep_free(in->prep, in->nr_areas, in->nr_vmas);
	in->prep = NULL;
}

static int32_t vpage_entry(const struct engine *e, int32_t pid, int32_t vma, uint64_t vpage)
{
	const struct prep *pr = e->prep;
	uint64_t idx;

	if (vma >= 0 && pr->vma_pages[vma]) {
		const struct swt_replay_vma *v = &e->in->vmas[vma];

		return vpage >= v->start && vpage < v->end ? pr->vma_pages[vma][vpage - v->start] : NIL;
	}
	return swt_map_get(&pr->vpage_index, (uint64_t)(uint32_t)pid, vpage, &idx) ? (int32_t)idx : NIL;
}

uint64_t swt_replay_vpages_used_within(const struct swt_policy_env *env, int32_t pid,
				       uint64_t first, unsigned n, uint64_t horizon)
{
	struct engine *e = env->engine;
	int32_t vma = e->in->faults[e->cur].vma;
	const int32_t *dense = vma >= 0 ? e->prep->vma_pages[vma] : NULL;
	uint64_t mask = 0;

	/* a page never faulted is "used within" only an endless horizon */
	if (horizon == UINT64_MAX)
		return all_bits(n);
	if (horizon > INT32_MAX)
		horizon = INT32_MAX;
	if (e->vpages_synced != e->cur)
		vpages_sync(e);
	if (dense) {
		/* the fault's VMA, as vpage_entry looks it up: the pages inside it */
		const struct swt_replay_vma *v = &e->in->vmas[vma];
		uint64_t from = first > v->start ? first : v->start;
		uint64_t to = first + n < v->end ? first + n : v->end;

		for (uint64_t vp = from; vp < to; vp++) {
			int32_t idx = dense[vp - v->start];

			if (idx != NIL)
				mask |= used_within(e, e->vpages[idx].next, horizon) << (vp - first);
		}
		return mask;
	}
	for (unsigned i = 0; i < n; i++) {
		int32_t idx = vpage_entry(e, pid, vma, first + i);

		if (idx != NIL)
			mask |= used_within(e, e->vpages[idx].next, horizon) << i;
	}
	return mask;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Positions for the PTEs (prep.pte_first).  A VMA with a dense table gets
 * its pages side by side when the table is at most four times its pages
 * (so the run's copy stays near the pages' size) and no page of it is
 * also faulted in another VMA (a page has one position); the pages of the
 * others follow.  0, or -SWT_ENOMEM.
 */
static int place_ptes(const struct swt_replay_input *in, struct prep *pr)
{
	size_t n = in->nr_faults, nv = in->nr_vmas, i;
	uint64_t *pages = calloc(nv ? nv : 1, sizeof(uint64_t));
	uint64_t next = 0;

	if (!pages)
		return -SWT_ENOMEM;
	for (i = 0; i < nv; i++)
		pr->vma_ptes[i] = pr->vma_pages[i] ? 0 : PTE_NOWHERE;	/* 0: a candidate */
	/* pages per VMA (by their first fault), and VMAs that share a page with another */
	for (i = 0; i < n; i++) {
		int32_t idx = pr->vp_idx[i], fv;

		if (idx == NIL)
			continue;
		fv = in->faults[pr->vp_first[idx]].vma;
		if ((int32_t)i == pr->vp_first[idx]) {
			if (fv >= 0)
				pages[fv]++;
		} else if (in->faults[i].vma != fv) {
			if (in->faults[i].vma >= 0)
				pr->vma_ptes[in->faults[i].vma] = PTE_NOWHERE;
			if (fv >= 0)
				pr->vma_ptes[fv] = PTE_NOWHERE;
		}
	}
	for (i = 0; i < nv; i++) {
		uint64_t span = in->vmas[i].end - in->vmas[i].start;

		if (pr->vma_ptes[i] == PTE_NOWHERE || span > 4 * pages[i] + 64 ||
		    next + span + pr->nr_vpages >= PTE_NOWHERE) {
			pr->vma_ptes[i] = PTE_NOWHERE;
			continue;
		}
		pr->vma_ptes[i] = (uint32_t)next;
		next += span;
	}
	for (i = 0; i < pr->nr_vpages; i++) {
		const struct swt_replay_fault *f = &in->faults[pr->vp_first[i]];

		if (f->vma >= 0 && pr->vma_ptes[f->vma] != PTE_NOWHERE)
			pr->pte_pos[i] = pr->vma_ptes[f->vma] + (uint32_t)(f->vpage - in->vmas[f->vma].start);
		else
			pr->pte_pos[i] = (uint32_t)next++;
	}
	free(pages);
	pr->nr_ptes = next;
	pr->pte_first = malloc((next ? next : 1) * sizeof(uint64_t));
	if (!pr->pte_first)
		return -SWT_ENOMEM;
	for (i = 0; i < next; i++)
		pr->pte_first[i] = PTE_NONE;
	for (i = 0; i < pr->nr_vpages; i++)
		pr->pte_first[pr->pte_pos[i]] = pte_of(&in->faults[pr->vp_first[i]]);
	for (i = 0; i < n; i++)
		pr->pte_at[i] = pr->vp_idx[i] == NIL ? PTE_NOWHERE : pr->pte_pos[pr->vp_idx[i]];
	return 0;
}

static int prep_build(const struct swt_replay_input *in, struct prep **out, struct swt_err *err)
{
	struct prep *pr;
	size_t i, n = in->nr_faults, na = in->nr_areas ? in->nr_areas : 1;
	int ret;

	/* the engine's compact tables: fault indexes in 31 bits, areas in 16, slots in 32 */
	if (n > INT32_MAX || in->nr_outs > UINT32_MAX || in->nr_frees > INT32_MAX)
		return swt_error(err, SWT_EUSAGE, "%zu faults and %zu swap-outs: more than the replay "
				 "handles (2^31 and 2^32)", n, in->nr_outs);
	if (in->nr_areas > (size_t)UINT16_MAX + 1)
		return swt_error(err, SWT_EUSAGE, "%zu swap areas: more than the replay handles (65536)",
				 in->nr_areas);
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	/* checked with the database's name at load (input.c), for inputs built otherwise */
	if (swt_replay_fault_span_seconds(in, &pr->first_second) > SWT_REPLAY_MAX_SPAN_SECONDS) {
		free(pr);
		return swt_error(err, SWT_EUSAGE, "the swap faults span more than 2^32 seconds (136 "
				 "years): a damaged timestamp?");
	}
	pr->nslots = calloc(na, sizeof(*pr->nslots));
	pr->init_slots = calloc(na, sizeof(*pr->init_slots));
	pr->first_use = calloc(na, sizeof(*pr->first_use));
	pr->series_seconds = calloc(na, sizeof(*pr->series_seconds));
	pr->area_faults = calloc(na, sizeof(*pr->area_faults));
	pr->next_same_slot = malloc((n ? n : 1) * sizeof(int32_t));
	pr->refault = malloc((n ? n : 1) * sizeof(int32_t));
	pr->next_same_vpage = malloc((n ? n : 1) * sizeof(int32_t));
	pr->vp_idx = malloc((n ? n : 1) * sizeof(int32_t));
	pr->vp_first = malloc((n ? n : 1) * sizeof(int32_t));
	pr->pte_after = malloc((n ? n : 1) * sizeof(uint64_t));
	pr->pte_pos = malloc((n ? n : 1) * sizeof(uint32_t));
	pr->pte_at = malloc((n ? n : 1) * sizeof(uint32_t));
	pr->vma_ptes = malloc((in->nr_vmas ? in->nr_vmas : 1) * sizeof(uint32_t));
	pr->outs_before = malloc((n ? n : 1) * sizeof(uint32_t));
	pr->fault_sec = malloc((n ? n : 1) * sizeof(uint32_t));
	pr->vma_pages = calloc(in->nr_vmas ? in->nr_vmas : 1, sizeof(*pr->vma_pages));
	if (!pr->nslots || !pr->init_slots || !pr->first_use || !pr->series_seconds ||
	    !pr->area_faults || !pr->next_same_slot || !pr->refault || !pr->next_same_vpage || !pr->vp_idx ||
	    !pr->vp_first || !pr->pte_after || !pr->pte_pos || !pr->pte_at || !pr->vma_ptes ||
	    !pr->outs_before || !pr->fault_sec || !pr->vma_pages ||
	    swt_map_init(&pr->vpage_index, n / 2 + 16))
		goto nomem;

	/*
	 * Slot tables: as big as the slots the streams touch, not the device
	 * (a what-if layout of terabyte devices would otherwise need tables
	 * of gigabytes).  A slot past them is free throughout -- nothing is
	 * written there -- which is what a window reaching it finds: no page.
	 */
	pr->any_rotational = (uint64_t)swt_replay_any_rotational(in);
	ret = swt_replay_stream_slots(in, pr->nslots, err);
	if (ret) {
		prep_free(pr, in->nr_areas, in->nr_vmas);
		return ret;
	}
	for (i = 0; i < in->nr_areas; i++) {
		pr->init_slots[i] = malloc(pr->nslots[i] * sizeof(int32_t));
		pr->first_use[i] = malloc(pr->nslots[i] * sizeof(int32_t));
		if (!pr->init_slots[i] || !pr->first_use[i])
			goto nomem;
		for (uint64_t sl = 0; sl < pr->nslots[i]; sl++)
			pr->init_slots[i][sl] = SLOT_FREE;
		memset(pr->first_use[i], 0xff, pr->nslots[i] * sizeof(int32_t));
	}
	for (i = n; i-- > 0;) {
		const struct swt_replay_fault *f = &in->faults[i];

		/* refault: unless the merge below finds a write first */
		pr->refault[i] = pr->next_same_slot[i] = pr->first_use[f->area][f->slot];
		pr->first_use[f->area][f->slot] = (int32_t)i;
	}
	/*
	 * The replay order: swap-outs and faults merged by time, a swap-out
	 * first on a tie.  A slot whose first event is a fault held a page
	 * before the trace began.  A fault's refault is the slot's next fault
	 * unless a write comes first (then another page was written there).
	 */
	{
		size_t fi = 0, oi = 0;
		/* per slot of every area, one after another (from base): its latest fault */
		uint64_t *base = malloc(na * sizeof(*base)), nr_slots = 0;
		int32_t *last_fault;

		for (i = 0; base && i < in->nr_areas; i++) {
			base[i] = nr_slots;
			nr_slots += pr->nslots[i];
		}
		last_fault = base ? malloc((nr_slots ? nr_slots : 1) * sizeof(*last_fault)) : NULL;
		if (!last_fault) {
			free(base);
			goto nomem;
		}
		memset(last_fault, 0xff, nr_slots * sizeof(*last_fault));

		while (fi < n || oi < in->nr_outs) {
			int take_out = oi < in->nr_outs &&
				       (fi >= n || in->outs[oi].ts <= in->faults[fi].ts);
			uint32_t area = take_out ? in->outs[oi].area : in->faults[fi].area;
			uint64_t slot = take_out ? in->outs[oi].slot : in->faults[fi].slot;
			int32_t *st = &pr->init_slots[area][slot];

			if (*st == SLOT_FREE) {
				*st = take_out ? SLOT_FIRST_WRITTEN : SLOT_ALLOC;
				if (!take_out)
					pr->nr_alloc++;
			}
			if (take_out) {
				/* the slot's latest fault, if any, before this write */
				int32_t *last = &last_fault[base[area] + slot];

				if (*last != NIL)
					pr->refault[*last] = NIL;
				*last = NIL;
			} else {
				last_fault[base[area] + slot] = (int32_t)fi;
			}
			if (!take_out)
				pr->outs_before[fi] = (uint32_t)oi;
			take_out ? oi++ : fi++;
		}
		for (i = 0; i < in->nr_areas; i++)
			for (uint64_t sl = 0; sl < pr->nslots[i]; sl++)
				if (pr->init_slots[i][sl] == SLOT_FIRST_WRITTEN)
					pr->init_slots[i][sl] = SLOT_FREE;
		free(last_fault);
		free(base);
	}
	/*
	 * Each fault's second, faults per partition, and the seconds each
	 * partition's faults fall in (counted as changes: exact for faults in
	 * time order, more than enough otherwise), which size its series.
	 */
	{
		uint32_t *last_sec = calloc(na, sizeof(*last_sec));

		if (!last_sec)
			goto nomem;
		for (i = 0; i < n; i++) {
			const struct swt_replay_fault *f = &in->faults[i];
			uint32_t sec = (uint32_t)(series_second(in, f->ts) - pr->first_second);

			pr->fault_sec[i] = sec;
			if (!pr->area_faults[f->area]++ || sec != last_sec[f->area])
				pr->series_seconds[f->area]++;
			last_sec[f->area] = sec;
		}
		free(last_sec);
	}
	/* virtual pages: entries, and each fault's next fault on its page */
	for (i = n; i-- > 0;) {
		const struct swt_replay_fault *f = &in->faults[i];
		uint64_t idx;

		pr->next_same_vpage[i] = NIL;
		pr->vp_idx[i] = NIL;
		if (!f->vpage)
			continue;
		if (!swt_map_get(&pr->vpage_index, (uint64_t)(uint32_t)f->pid, f->vpage, &idx)) {
			idx = pr->nr_vpages++;
			pr->vp_first[idx] = NIL;
			if (swt_map_put(&pr->vpage_index, (uint64_t)(uint32_t)f->pid, f->vpage, idx))
				goto nomem;
		}
		pr->vp_idx[i] = (int32_t)idx;
		pr->next_same_vpage[i] = pr->vp_first[idx];
		pr->vp_first[idx] = (int32_t)i;
	}
	/* the PTEs, resolved */
	for (i = 0; i < n; i++) {
		int32_t next = pr->next_same_vpage[i];

		if (pr->vp_idx[i] == NIL)
			continue;
		pr->pte_after[i] = pte_of(&in->faults[next != NIL ? next : (int32_t)i]);
	}
	/* slots write faults freed: in order, and the swap-outs that took their pages */
	pr->free_by_out = malloc((in->nr_frees ? in->nr_frees : 1) * sizeof(uint64_t));
	if (!pr->free_by_out)
		goto nomem;
	for (i = 0; i < in->nr_frees; i++) {
		const struct swt_replay_free *fr = &in->frees[i];

		if (fr->after >= n || fr->fault > fr->after || fr->outs_at > in->nr_outs ||
		    fr->outs_at < pr->outs_before[fr->after] ||
		    (fr->after + 1 < n && fr->outs_at > pr->outs_before[fr->after + 1]) ||
		    (i && fr->after == in->frees[i - 1].after && fr->outs_at < in->frees[i - 1].outs_at) ||
		    (fr->evict_out >= 0 && ((size_t)fr->evict_out >= in->nr_outs ||
					    (uint32_t)fr->evict_out < fr->outs_at)) ||
		    (i && fr->after < in->frees[i - 1].after)) {
			prep_free(pr, in->nr_areas, in->nr_vmas);
			return swt_error(err, SWT_EUSAGE, "slot free %zu of %zu names faults or swap-outs "
					 "it cannot (an input built out of order)", i + 1, in->nr_frees);
		}
		if (fr->evict_out >= 0)
			pr->free_by_out[pr->nr_free_by_out++] = (uint64_t)fr->evict_out << 32 | i;
	}
	qsort(pr->free_by_out, pr->nr_free_by_out, sizeof(uint64_t), cmp_u64);
	/* dense VMAs get a direct table: window lookups without hashing */
	for (i = 0; i < n; i++) {
		const struct swt_replay_fault *f = &in->faults[i];
		const struct swt_replay_vma *v;
		uint64_t span;

		if (f->vma < 0 || pr->vp_idx[i] == NIL)
			continue;
		v = &in->vmas[f->vma];
		span = v->end - v->start;
		if (!pr->vma_pages[f->vma]) {
			if (span > ((uint64_t)1 << 24))
				continue;
			pr->vma_pages[f->vma] = malloc(span * sizeof(int32_t));
			if (!pr->vma_pages[f->vma])
				goto nomem;
			memset(pr->vma_pages[f->vma], 0xff, span * sizeof(int32_t));
		}
		pr->vma_pages[f->vma][f->vpage - v->start] = pr->vp_idx[i];
	}
	if (place_ptes(in, pr))
		goto nomem;
	*out = pr;
	return 0;
nomem:
	prep_free(pr, in->nr_areas, in->nr_vmas);
	return swt_error(err, SWT_ENOMEM, "out of memory");
}

int swt_replay_prepare(struct swt_replay_input *in, struct swt_err *err)
{
	struct prep *pr;
	int ret;

	if (in->prep)
		return 0;
	ret = prep_build(in, &pr, err);
	if (!ret)
		in->prep = pr;
	return ret;
}

/* Catch the virtual page table up with the faults before the current one. */
static void vpages_sync(struct engine *e)
{
	const struct prep *pr = e->prep;
	size_t j = e->vpages_synced;

	if (j == SIZE_MAX) {
		for (size_t i = 0; i < pr->nr_vpages; i++) {
			e->vpages[i].last = NIL;
			e->vpages[i].next = pr->vp_first[i];
		}
		j = 0;
	}
	for (; j < e->cur; j++) {
		if (pr->vp_idx[j] != NIL) {
			struct vpage_info *v = &e->vpages[pr->vp_idx[j]];

			v->last = (int32_t)j;
			v->next = pr->next_same_vpage[j];
		}
	}
	e->vpages_synced = j;
}

/* The resolved PTEs as the run's first read of them finds them. */
static __attribute__((noinline, cold)) void ptes_start(struct engine *e)
{
	memcpy(e->ptes, e->prep->pte_first, e->prep->nr_ptes * sizeof(*e->ptes));
	e->ptes_synced = 0;
}

/*
 * The same for the resolved PTEs.  Inline: VMA windows catch up on every
 * miss, a fault or two each time, and a call cost more than the walk.
 */
static inline void ptes_sync(struct engine *e)
{
	const struct prep *pr = e->prep;
	size_t j;

	if (e->ptes_synced == SIZE_MAX)
		ptes_start(e);
	for (j = e->ptes_synced; j < e->cur; j++)
		if (pr->pte_at[j] != PTE_NOWHERE)
			e->ptes[pr->pte_at[j]] = pr->pte_after[j];
	e->ptes_synced = j;
}

/* The same for the slots' next faults. */
static void next_use_sync(struct engine *e)
{
	const struct prep *pr = e->prep;
	const struct swt_replay_fault *faults = e->in->faults;
	size_t j = e->next_use_synced;

	if (j == SIZE_MAX) {
		for (size_t i = 0; i < e->in->nr_areas; i++)
			memcpy(e->areas[i].next_use, pr->first_use[i],
			       e->areas[i].nslots * sizeof(*e->areas[i].next_use));
		j = 0;
	}
	for (; j < e->cur; j++)
		e->areas[faults[j].area].next_use[faults[j].slot] = pr->next_same_slot[j];
	e->next_use_synced = j;
}

/* Nodes for a ring whose list holds up to pages pages (struct ring). */
static uint64_t ring_nodes(uint64_t pages)
{
	uint64_t n = 2;

	while (n < pages + pages / 2 + 1)
		n <<= 1;
	return n;
}

/* The rings' nodes are indexed in 31 bits, shifted left once in the slot words. */
#define MAX_RING_NODES ((uint64_t)INT32_MAX >> 1)

uint64_t swt_replay_max_cache_pages(double inactive_fraction)
{
	/* the widest window any policy may list, and the faulting page (engine_init's reads_max) */
	uint64_t reads = ((uint64_t)1 << SWT_MAX_PAGE_CLUSTER) + 2, lo = 1, hi = UINT32_MAX;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2, inactive;

		/* the kernel's rule keeps the most inactive with the smallest pages ingest takes */
		inactive = inactive_pages(mid, 9, inactive_fraction);
		if (ring_nodes(inactive + reads) + ring_nodes(mid + reads) <= MAX_RING_NODES)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int engine_init(struct engine *e, const struct swt_replay_input *in,
		       const struct swt_replay_config *cfg, struct swt_err *err)
{
	struct prep *pr;
	char perr[256] = "";
	size_t i;
	uint64_t nr_words = 0, in_nodes = 0, nr_nodes = 0, reads_max = 0;
	int ret, wide;

	memset(e, 0, sizeof(*e));
	e->in = in;
	e->cfg = cfg;
	e->observer = cfg->observer;
	e->policy = cfg->policy;
	/*
	 * SWT_TEST_NO_FAST_PATH sends the built-ins through on_miss/on_hit
	 * like plugins, so that a test can check both paths give the same.
	 */
	e->fast = getenv("SWT_TEST_NO_FAST_PATH") ? NULL : fast_path_of(cfg->policy);
	if (in->prep) {
		pr = in->prep;
	} else {
		/* an input nobody prepared: tables for this run only */
		ret = prep_build(in, &pr, err);
		if (ret)
			return ret;
		e->own_prep = pr;
	}
	e->prep = pr;
	ret = alloc_result(e, err);
	if (ret)
		return ret;
	e->rng = 0x9e3779b97f4a7c15ull;	/* fixed seed: the same input gives the same run */
	swt_touch_table_init(&e->touch);
	e->cap_total = cfg->cache_pages ? cfg->cache_pages : 1;
	e->cap_inactive = inactive_pages(e->cap_total, in->page_shift, cfg->inactive_fraction);
	if (!e->cap_inactive)
		e->cap_inactive = 1;
	e->shrink_to = e->cap_inactive;
	if (e->cap_inactive >= 2 * RECLAIM_ROUND_PAGES)
		e->shrink_to -= RECLAIM_ROUND_PAGES - 1;
	e->res->cache_pages = e->cap_total;
	e->res->inactive_pages = e->cap_inactive;
	e->any_rotational = pr->any_rotational;
	e->nr_alloc = pr->nr_alloc;

	/* window and plug buffers: the largest window any policy may list */
	if (cfg->page_cluster > SWT_MAX_PAGE_CLUSTER)
		return swt_error(err, SWT_EUSAGE, "page-cluster %u: the replay handles 0..%d",
				 cfg->page_cluster, SWT_MAX_PAGE_CLUSTER);
	e->win_cap = 1u << cfg->page_cluster;
	if (e->win_cap < 64)
		e->win_cap = 64;
	/*
	 * The rings (struct ring): shrink runs after every fault, so the
	 * inactive list holds at most its share and one miss's reads (a
	 * window and the faulting page), the active list at most the memory
	 * and those.  Slot words hold a node's index << 1.
	 */
	if (e->cap_total <= UINT32_MAX) {
		reads_max = e->win_cap + 2;
		in_nodes = ring_nodes(e->cap_inactive + reads_max);
		nr_nodes = in_nodes + ring_nodes(e->cap_total + reads_max);
	}
	if (e->cap_total > UINT32_MAX || nr_nodes > MAX_RING_NODES)
		return swt_error(err, SWT_EUSAGE, "%llu pages of memory: more than the replay handles "
				 "(about 2^28 pages; the exact bound depends on the inactive share)",
				 (unsigned long long)e->cap_total);
	e->inactive = (struct ring){ .base = 0, .mask = in_nodes - 1, .limit = in_nodes - 1 };
	e->active = (struct ring){ .base = in_nodes, .mask = nr_nodes - in_nodes - 1,
				   .limit = nr_nodes - in_nodes - 1 };
	/*
	 * SWT_TEST_TIGHT_RINGS compacts each ring at least every
	 * TIGHT_RING_PUSHES pushes, and checks the rings against the slot
	 * words at the end: a test requires the same results.
	 */
	e->tight_rings = getenv("SWT_TEST_TIGHT_RINGS") != NULL;
	if (e->tight_rings) {
		e->inactive.limit = SWT_MIN(e->inactive.mask, TIGHT_RING_PUSHES);
		e->active.limit = SWT_MIN(e->active.mask, TIGHT_RING_PUSHES);
	}
	e->env.flags = (e->any_rotational ? SWT_FAULT_ANY_ROTATIONAL : 0) |
		       (in->vma_ra_enabled > 0 ? SWT_FAULT_VMA_RA_ENABLED : 0);
	/* SWT_FAST_FULL_INFO_VMA: swt_flags_use_vma_ra's run-wide half, on the flags it reads */
	e->full_info = e->fast && (e->fast->full_info == SWT_FAST_FULL_INFO ||
				   (e->fast->full_info == SWT_FAST_FULL_INFO_VMA &&
				    (e->env.flags & SWT_FAULT_VMA_RA_ENABLED) &&
				    !(e->env.flags & SWT_FAULT_ANY_ROTATIONAL)));

	e->areas = calloc(in->nr_areas ? in->nr_areas : 1, sizeof(*e->areas));
	if (!e->areas)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (i = 0; i < in->nr_areas; i++)
		nr_words += pr->nslots[i];
	e->slot_words = nr_words;
	nr_words += in->nr_frees;	/* the freed slots' pages' words (engine.slot_words) */
	/*
	 * A miss reads at most a window and the faulting page (win_cap + 2,
	 * as e->reads is sized; a fast path's block is at most win_cap), so
	 * this bounds the run's page-ins: below the stamps' STAMP_* values,
	 * and the slot words within 32 bits, the nodes hold both.
	 * SWT_TEST_WIDE_NODES takes the side table anyway, for the tests.
	 */
	wide = (uint64_t)in->nr_faults * (e->win_cap + 2) >= STAMP_DEAD ||
	       nr_words > (uint64_t)UINT32_MAX + 1 || getenv("SWT_TEST_WIDE_NODES");
	/* a mapping is activated once at most: one due eviction per fault */
	e->cap_due = in->nr_faults;
	{
		/*
		 * The run's big tables, in one arena (util.h says why).  Those
		 * the event loop writes from its start, left to its first
		 * touches, would have their page faults timed as the loop's:
		 * they are mapped in here.  The futures (next_use, vpages,
		 * ptes) only some policies read, and the others are written
		 * here anyway.
		 */
		const struct swt_arena_part parts[] = {
			{ (void **)&e->words, nr_words * sizeof(*e->words), 0 },
			/* written by each fault before any read: no initialisation */
			{ (void **)&e->word_refault, nr_words * sizeof(*e->word_refault), 1 },
			{ (void **)&e->next_use, nr_words * sizeof(*e->next_use), 0 },
			{ (void **)&e->vpages, pr->nr_vpages * sizeof(*e->vpages), 0 },
			{ (void **)&e->ptes, pr->nr_ptes * sizeof(*e->ptes), 0 },
			{ (void **)&e->nodes, nr_nodes * sizeof(*e->nodes), 1 },
			{ (void **)&e->wide, wide ? nr_nodes * sizeof(*e->wide) : 0, 1 },
			{ (void **)&e->due, e->cap_due * sizeof(*e->due), 1 },
			{ (void **)&e->due_bucket,
			  ((in->nr_faults >> DUE_BUCKET_SHIFT) + 1) * sizeof(*e->due_bucket), 0 },
		};

		if (swt_arena_carve(&e->arena, parts, SWT_ARRAY_SIZE(parts)))
			return swt_error(err, SWT_ENOMEM, "out of memory");
		if (!wide)
			e->wide = NULL;
	}
	for (i = 0, nr_words = 0; i < in->nr_areas; i++) {
		struct area_state *a = &e->areas[i];
		const struct swt_replay_area *ra = &in->areas[i];

		a->nslots = pr->nslots[i];
		a->area_slots = ra->slots ? ra->slots : a->nslots;
		a->fault_flags = e->env.flags | (ra->rotational != 0 ? SWT_FAULT_ROTATIONAL : 0) |
				 (ra->synchronous > 0 ? SWT_FAULT_SYNCHRONOUS : 0);
		a->base = nr_words;
		a->slots = e->words + nr_words;
		a->next_use = e->next_use + a->base;
		nr_words += a->nslots;
		memcpy(a->slots, pr->init_slots[i], a->nslots * sizeof(*a->slots));
	}
	for (i = 0; i < in->nr_frees; i++) {
		e->words[e->slot_words + i] = SLOT_FREE;
		e->word_refault[e->slot_words + i] = NIL;	/* no fault maps it: never due */
	}
	e->vpages_synced = SIZE_MAX;
	e->ptes_synced = SIZE_MAX;
	e->next_use_synced = SIZE_MAX;

	e->win_list = malloc(e->win_cap * sizeof(*e->win_list));
	/* room for a window's reads after one for a faulting page the policy left out */
	e->reads = malloc((e->win_cap + 2) * sizeof(*e->reads));
	e->plug = malloc((e->win_cap + 1) * sizeof(*e->plug));
	if (!e->win_list || !e->reads || !e->plug)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t k = 0; k <= in->nr_faults >> DUE_BUCKET_SHIFT; k++)
		e->due_bucket[k] = NIL;
	for (size_t k = 0; k < DUE_BUCKET; k++)
		e->due_now[k] = NIL;
	e->due_bucket_now = 0;

	/* what every fault of the run tells the policy alike */
	e->info.nr_areas = (uint32_t)in->nr_areas;
	e->info.page_cluster = cfg->page_cluster;
	e->info.page_shift = in->page_shift;

	e->pin_readahead = !!(cfg->policy->flags & SWT_POLICY_ORACLE);
	e->reads_at_hits = !!(cfg->policy->flags & SWT_POLICY_READS_AT_HITS);
	if (e->pin_readahead)
		next_use_sync(e);	/* the oracle reads the futures on every miss */

	e->env.page_cluster = cfg->page_cluster;
	e->env.nr_areas = (uint32_t)in->nr_areas;
	e->env.page_shift = in->page_shift;
	e->env.faults_until_use = env_faults_until_use;
	e->env.faults_until_vpage_use = env_faults_until_vpage_use;
	e->env.readahead_lifetime = env_readahead_lifetime;
	e->env.engine = e;
	e->inst = e->policy->create(&e->env, cfg->keys, cfg->values, cfg->nparams, perr, sizeof(perr));
	perr[sizeof(perr) - 1] = '\0';	/* a plugin may fill it to the end, with no NUL */
	if (!e->inst)
		return swt_error(err, SWT_EPLUGIN, "policy '%s': %s", e->policy->name,
				 perr[0] ? perr : "cannot create an instance");
	if (e->fast && (e->fast->vma_ra || e->fast->auto_vma_ra) && e->full_info) {
		e->vma_ra_auto = !e->fast->vma_ra;
		e->vma_ra = e->vma_ra_auto ? e->fast->auto_vma_ra(e->inst) : e->fast->vma_ra(e->inst);
		e->vma_ra_max = 1u << (cfg->page_cluster < 5 ? cfg->page_cluster : 5);
	}
	return 0;
}

/* ---- the replay ---------------------------------------------------------- */

/* Inlined into the event loop: a call per swap-out costs more than its body. */
static inline __attribute__((always_inline)) int on_swapout(struct engine *e,
							    const struct swt_replay_swapout *o)
{
	int32_t *word = &e->areas[o->area].slots[o->slot];
	int fresh = *word == SLOT_FREE;

	/* the slot holds a newly written page: whatever we cached for it is stale */
	if (*word >= 0)
		uncache(e, *word >> 1, (uint64_t)(word - e->words));	/* leaves it allocated; wasted if read ahead */
	e->nr_alloc += (uint64_t)fresh;
	*word = SLOT_ALLOC;
	return fresh;
}

/*
 * The observer (replay.h) is a test's: only the library built with
 * SWT_REPLAY_OBSERVER (swt_replay_observed) calls it, so that the runs of
 * swaptrace do not pay its branch per page read (7 instructions per fault).
 */
#ifdef SWT_REPLAY_OBSERVER
#define OBSERVED(e) __builtin_expect((e)->observer != NULL, 0)
#else
#define OBSERVED(e) 0
#endif

static size_t area_of_word(const struct engine *e, uint64_t w);

static __attribute__((noinline, cold)) void observe_read(const struct engine *e, uint64_t w, int ra)
{
	size_t a = area_of_word(e, w);

	if (e->observer->read)
		e->observer->read(e->observer->ctx, e->cur, (uint32_t)a, w - e->areas[a].base, !ra);
}

/*
 * Cache the page of slot word w (engine.words), read ahead or not, on an
 * inactive ring with room for it (ring_make_room).
 */
static inline void cache_page_in_room(struct engine *e, uint64_t w, int ra)
{
	int32_t *word = &e->words[w];
	int32_t n = ring_put(e, &e->inactive, (uint32_t)w, NEVER_SCANNED - (uint32_t)ra);	/* or STAMP_RA */

	if (OBSERVED(e))
		observe_read(e, w, ra);
	if (e->wide)
		e->wide[n].word = w;
	e->nr_alloc -= *word == SLOT_ALLOC;	/* (add_read counted a SLOT_LISTED one) */
	*word = (int32_t)((uint32_t)n << 1 | (uint32_t)ra);
	e->pageins++;
}

/* The same, making room first. */
static inline void cache_page(struct engine *e, uint64_t w, int ra)
{
	ring_make_room(e, &e->inactive, 1);
	cache_page_in_room(e, w, ra);
}

/*
 * Add a read of (area, slot) unless it is not to be read: the faulting
 * page once, any other page only while swapped out and not cached.  0, or
 * 1 when the read list is full.
 */
static inline int add_read(struct engine *e, const struct swt_replay_fault *f, uint32_t area,
			   uint64_t slot, size_t *nreads, int *target_done)
{
	int target = area == f->area && slot == f->slot;

	if (target) {
		if (*target_done)
			return 0;
		*target_done = 1;
	} else if (e->areas[area].slots[slot] != SLOT_ALLOC) {
		return 0;	/* free, already cached, or already listed */
	} else {
		/* a plugin may list a slot twice, two PTEs may hold it: it is read once */
		e->areas[area].slots[slot] = SLOT_LISTED;
		e->nr_alloc--;
	}
	e->reads[1 + *nreads].area = area;
	e->reads[1 + *nreads].slot = slot;
	e->reads[1 + *nreads].target = (uint32_t)target;
	return ++*nreads > e->win_cap;
}

/*
 * add_read for the virtual page at page-table entry idx (NIL: none): the
 * swap entry its PTE holds (for the faulting page, own, the one it faults
 * on), unless it holds none.  0, or 1 when the read list is full.
 */
static inline int add_vpage_read(struct engine *e, const struct swt_replay_fault *f,
				 int32_t own, int32_t idx, size_t *nreads, int *target_done)
{
	uint64_t pte;

	if (idx == NIL)
		return 0;
	pte = idx == own ? pte_of(f) : e->ptes[e->prep->pte_pos[idx]];
	if (pte == PTE_NONE)
		return 0;
	return add_read(e, f, (uint32_t)(pte >> 32), (uint32_t)pte, nreads, target_done);
}

/*
 * The reads of virtual pages of the faulting page's VMA whose PTEs lie side
 * by side (prep.vma_ptes), caught up to this fault: the listed ones, or
 * (list NULL) the block [first, first + count).  Pages outside the VMA
 * have no entry.  Caught up, the faulting page's PTE holds this fault's
 * entry, as add_vpage_read finds it.
 */
static size_t collect_side_by_side(struct engine *e, const struct swt_replay_fault *f,
				   const uint64_t *list, uint32_t count, uint64_t first,
				   int *target_done)
{
	const uint64_t *ptes = e->ptes + e->prep->vma_ptes[f->vma];
	uint64_t start = e->in->vmas[f->vma].start, span = e->in->vmas[f->vma].end - start;
	size_t nreads = 0;

	for (uint32_t i = 0; i < count; i++) {
		uint64_t v = list ? list[i] : first + i, pte;

		if (v - start >= span)
			continue;
		pte = ptes[v - start];
		if (pte != PTE_NONE &&
		    add_read(e, f, (uint32_t)(pte >> 32), (uint32_t)pte, &nreads, target_done))
			break;
	}
	return nreads;
}

/*
 * The reads of a window, in list order.  A slot entry names a slot of the
 * faulting area.  A virtual page's PTE holds the swap entry it will be
 * faulted with next, or, if never again, the one it was last faulted
 * with; the faulting page's, the entry of this fault.  Entries naming no
 * known swapped page are skipped.
 */
static size_t collect_reads(struct engine *e, size_t fi, const struct swt_replay_fault *f,
			    const struct swt_window *w, int *target_done)
{
	const struct prep *pr = e->prep;
	size_t nreads = 0;

	if (w->kind == SWT_WINDOW_SLOTS) {
		uint64_t nslots = e->areas[f->area].nslots;

		for (uint32_t i = 0; i < w->count; i++)
			if (w->list[i] < nslots &&
			    add_read(e, f, f->area, w->list[i], &nreads, target_done))
				break;
	} else {
		const int32_t *dense = NULL;
		uint64_t start = 0, span = 0;
		int32_t own = pr->vp_idx[fi];

		if (e->ptes_synced != fi)
			ptes_sync(e);
		if (f->vma >= 0 && pr->vma_ptes[f->vma] != PTE_NOWHERE && own != NIL)
			return collect_side_by_side(e, f, w->list, w->count, 0, target_done);
		if (f->vma >= 0 && pr->vma_pages[f->vma]) {
			dense = pr->vma_pages[f->vma];
			start = e->in->vmas[f->vma].start;
			span = e->in->vmas[f->vma].end - start;
		}
		for (uint32_t i = 0; i < w->count; i++) {
			uint64_t v = w->list[i];
			/* the dense table inline: this runs per listed page */
			int32_t idx = dense ? (v - start < span ? dense[v - start] : NIL)
					    : vpage_entry(e, f->pid, f->vma, v);

			if (add_vpage_read(e, f, own, idx, &nreads, target_done))
				break;
		}
	}
	return nreads;
}

/*
 * The reads of a block of virtual pages [first, first + count), as
 * collect_reads lists them: on a dense VMA the block is clipped to the
 * VMA's table once and walked there (pages outside it are in no table).
 */
static size_t collect_vpage_block(struct engine *e, size_t fi, const struct swt_replay_fault *f,
				  uint64_t first, uint32_t count, int *target_done)
{
	const struct prep *pr = e->prep;
	size_t nreads = 0;
	int32_t own = pr->vp_idx[fi];
	uint64_t end = first + count;

	if (e->ptes_synced != fi)
		ptes_sync(e);
	if (f->vma >= 0 && pr->vma_ptes[f->vma] != PTE_NOWHERE && own != NIL)
		return collect_side_by_side(e, f, NULL, count, first, target_done);
	if (f->vma >= 0 && pr->vma_pages[f->vma]) {
		const int32_t *dense = pr->vma_pages[f->vma];
		uint64_t start = e->in->vmas[f->vma].start, vend = e->in->vmas[f->vma].end;

		if (first < start)
			first = start;
		if (end > vend)
			end = vend;
		for (uint64_t v = first; v < end; v++)
			if (add_vpage_read(e, f, own, dense[v - start], &nreads, target_done))
				break;
		return nreads;
	}
	for (uint64_t v = first; v < end; v++)
		if (add_vpage_read(e, f, own, vpage_entry(e, f->pid, f->vma, v), &nreads,
				   target_done))
			break;
	return nreads;
}

static uint64_t request_bucket(const struct swt_replay_result *r, uint64_t pages)
{
	return pages <= r->max_request_pages ? pages : r->max_request_pages;
}

/*
 * The plug as reads come, one at a time, in submission order: the read
 * joins a request of its area it extends at either end, or starts one.
 * The request it may join is the latest when that is of its area, else,
 * once requests of several areas are plugged, the area's first (6.12+
 * blk_attempt_plug_merge: the plug's tail, else the first request of the
 * bio's queue).  *nrq and *multi (requests on more than one area) start
 * at 0.
 */
static inline void plug_add(struct engine *e, size_t *nrq, int *multi, uint64_t max,
			    uint32_t area, uint64_t slot)
{
	struct plug_rq *rq = NULL;

	if (*nrq) {
		rq = &e->plug[*nrq - 1];
		if (rq->area != area) {
			rq = NULL;
			for (size_t j = 0; *multi && j < *nrq; j++)
				if (e->plug[j].area == area) {
					rq = &e->plug[j];
					break;
				}
		}
	}
	if (rq && rq->end - rq->start < max && slot == rq->end) {
		rq->end++;
	} else if (rq && rq->end - rq->start < max && slot + 1 == rq->start) {
		rq->start--;
	} else {
		if (*nrq && e->plug[0].area != area)
			*multi = 1;
		e->plug[*nrq].area = area;
		e->plug[*nrq].start = slot;
		e->plug[*nrq].end = slot + 1;
		++*nrq;
	}
}

/* The plug's requests, into the request histograms (requests and merges are summed at the end). */
static inline void plug_count(struct engine *e, size_t nrq)
{
	struct swt_replay_result *r = e->res;

	for (size_t j = 0; j < nrq; j++)
		r->parts[e->plug[j].area].request_hist[request_bucket(r, e->plug[j].end - e->plug[j].start)]++;
}

static inline uint64_t plug_max(const struct engine *e)
{
	return e->cfg->max_request_pages ? e->cfg->max_request_pages : 1;
}

/* Count the requests of the reads, in submission order, in the request histograms. */
static void plug_reads(struct engine *e, const struct read *reads, size_t nreads)
{
	struct swt_replay_result *r = e->res;
	uint64_t max = plug_max(e);
	size_t nrq = 0;
	int multi = 0;

	if (nreads == 1) {
		/* no readahead: one request of one page */
		r->parts[reads[0].area].request_hist[request_bucket(r, 1)]++;
		return;
	}
	for (size_t i = 0; i < nreads; i++)
		plug_add(e, &nrq, &multi, max, reads[i].area, reads[i].slot);
	plug_count(e, nrq);
}

/*
 * Does a slot window list a block of consecutive slots holding the
 * faulting one (what every cluster window is)?  Then *first is its start.
 */
static int window_is_block(const struct swt_window *w, uint64_t target, uint64_t *first)
{
	uint64_t start;

	if (w->kind != SWT_WINDOW_SLOTS || !w->count)
		return 0;
	start = w->list[0];
	if (target < start || target - start >= w->count)
		return 0;
	for (uint32_t i = 1; i < w->count; i++)
		if (w->list[i] != start + i)
			return 0;
	*first = start;
	return 1;
}

/*
 * read_block for a block of at most 64 slots holding the faulting one.
 * Which slots are read is data no branch predictor learns (about one
 * mispredicted branch per slot, walked one by one), so the block's slots
 * become a bit mask first: the pages are cached bit by bit, and the
 * requests are its runs of set bits, cut at the size limit.  Every
 * word is read before any page is cached, which reads the same: caching
 * a slot changes only its own word.
 */
static inline void read_block_mask(struct engine *e, const struct swt_replay_fault *f,
				   struct swt_replay_part *part, struct swt_replay_series_point *pt,
				   uint64_t first, uint64_t n, uint64_t max)
{
	const struct swt_replay_result *r = e->res;
	const int32_t *words = e->areas[f->area].slots + first;
	uint64_t base = e->areas[f->area].base + first, target = f->slot - first;
	uint64_t mask = (uint64_t)1 << target, m, nreads = 0;

	for (uint64_t i = 0; i < n; i++)
		mask |= (uint64_t)(words[i] == SLOT_ALLOC) << i;
	for (m = mask; m; m &= m - 1) {
		uint64_t i = (uint64_t)__builtin_ctzll(m);

		cache_page_in_room(e, base + i, i != target);
		nreads++;
	}
	pt->pages_read += nreads;
	for (m = mask; m;) {
		uint64_t start = (uint64_t)__builtin_ctzll(m), rest = ~(m >> start), run;

		run = rest ? (uint64_t)__builtin_ctzll(rest) : 64 - start;
		m = start + run >= 64 ? 0 : m & (~(uint64_t)0 << (start + run));
		for (; run > max; run -= max)
			part->request_hist[request_bucket(r, max)]++;
		part->request_hist[request_bucket(r, run)]++;
	}
}

/*
 * Read a block window [first, first + count) on the faulting area: what
 * the general walk (resolve, plug_reads) does for ascending slots of one
 * area, in one pass.  The eligible slots come in ascending order, so the
 * plug holds one request at a time, which grows while slots are
 * consecutive and below the size limit; each slot's word is read before
 * any later slot is cached, as in the general walk.
 */
static void read_block(struct engine *e, const struct swt_replay_fault *f,
		       struct swt_replay_part *part, struct swt_replay_series_point *pt,
		       uint64_t first, uint64_t count)
{
	const struct swt_replay_result *r = e->res;
	const int32_t *words = e->areas[f->area].slots;
	uint64_t base = e->areas[f->area].base;
	uint64_t end = first + count, rq_start = 0, rq_len = 0, nreads = 0;
	uint64_t max = e->cfg->max_request_pages ? e->cfg->max_request_pages : 1;

	if (end > e->areas[f->area].nslots)
		end = e->areas[f->area].nslots;	/* slots past the table name no page */
	/* room for the whole block at once: one check, not one per page */
	if (end > first)
		ring_make_room(e, &e->inactive, end - first);
	if (end - first <= 64 && f->slot - first < end - first) {
		read_block_mask(e, f, part, pt, first, end - first, max);
		return;
	}
	for (uint64_t s = first; s < end; s++) {
		int target = s == f->slot;

		if (!target && words[s] != SLOT_ALLOC)
			continue;	/* free, or already cached */
		if (rq_len && s == rq_start + rq_len && rq_len < max) {
			rq_len++;
		} else {
			if (rq_len)
				part->request_hist[request_bucket(r, rq_len)]++;
			rq_start = s;
			rq_len = 1;
		}
		cache_page_in_room(e, base + s, !target);
		nreads++;
	}
	part->request_hist[request_bucket(r, rq_len)]++;
	pt->pages_read += nreads;
}

/*
 * A window the policy chose, by size, into the partition's histogram; a
 * window by virtual page into the VMA one too, which tells a report what
 * auto took on each layout.
 */
static inline void count_window(struct swt_replay_part *part, uint32_t size, uint32_t kind)
{
	size_t bucket = size < SWT_REPLAY_MAX_WINDOW ? size : SWT_REPLAY_MAX_WINDOW;

	part->window_hist[bucket]++;
	if (kind == SWT_WINDOW_VPAGES)
		part->vpage_window_hist[bucket]++;
}

/*
 * A fault's flags are built from these two only: its area's and whether
 * its address is known, then what its VMA adds (the whole word is
 * fault_flags, below).
 */
static inline uint32_t brief_fault_flags(const struct swt_replay_fault *f,
					 const struct area_state *a)
{
	return a->fault_flags | (f->vpage ? SWT_FAULT_VPAGE_KNOWN : 0);
}

static inline uint32_t vma_fault_flags(const struct swt_replay_vma *vma)
{
	return vma->shared ? SWT_FAULT_SHARED : 0;
}

/* What a fast path (replay.h) reads of the fault: slot, area_slots, flags. */
static inline void fill_fault_brief(struct engine *e, const struct swt_replay_fault *f,
				    const struct area_state *a)
{
	e->info.slot = f->slot;
	e->info.area_slots = a->area_slots;
	e->info.flags = brief_fault_flags(f, a);
}

/*
 * The fault as policies see it; the per-run members were set by
 * engine_init.  Inlined: vma fills it on every fault, miss or hit, and the
 * call (register saves and all) cost 14 instructions per fault there.
 */
static inline __attribute__((always_inline)) void fill_fault_info(struct engine *e,
								  const struct swt_replay_fault *f,
								  const struct area_state *a)
{
	struct swt_fault_info *info = &e->info;

	fill_fault_brief(e, f, a);
	info->time_ns = f->ts;
	info->vpage = f->vpage;
	if (f->vma >= 0) {
		info->vma_start = e->in->vmas[f->vma].start;
		info->vma_end = e->in->vmas[f->vma].end;
		info->flags |= vma_fault_flags(&e->in->vmas[f->vma]);
	} else {
		info->vma_start = info->vma_end = 0;
	}
	info->area = f->area;
	info->pid = f->pid;
}

/* A policy's on_miss failed: why, for the run's error message. */
static __attribute__((noinline, cold)) int miss_failed(struct engine *e, size_t fi, int ret)
{
	const struct swt_replay_fault *f = &e->in->faults[fi];

	snprintf(e->why, sizeof(e->why), "on_miss returned %d at swap fault %zu (%s slot %llu)", ret,
		 fi + 1, e->in->areas[f->area].dev, (unsigned long long)f->slot);
	return -SWT_EPLUGIN;
}

/* A policy's on_miss returned a window kind the ABI does not define. */
static __attribute__((noinline, cold)) int bad_window_kind(struct engine *e, size_t fi, uint32_t kind)
{
	snprintf(e->why, sizeof(e->why), "on_miss returned a window of unknown kind %u at swap "
		 "fault %zu", kind, fi + 1);
	return -SWT_EPLUGIN;
}

/*
 * A policy's on_miss pointed the window at a list of its own or changed its
 * capacity: the engine's buffers and rings are sized for the window it
 * handed out, so reading more would overrun them.
 */
static __attribute__((noinline, cold)) int bad_window_buffer(struct engine *e, size_t fi)
{
	snprintf(e->why, sizeof(e->why), "on_miss changed the window's list or capacity at swap "
		 "fault %zu (the engine's list holds %u entries: write into it)", fi + 1, e->win_cap);
	return -SWT_EPLUGIN;
}

/*
 * A policy's on_miss said it listed more entries than the list holds: the
 * ones past it were never written (it read stale or no entries).
 */
static __attribute__((noinline, cold)) int bad_window_count(struct engine *e, size_t fi,
							    uint32_t count)
{
	snprintf(e->why, sizeof(e->why), "on_miss listed %u entries at swap fault %zu, past the "
		 "window's capacity of %u", count, fi + 1, e->win_cap);
	return -SWT_EPLUGIN;
}

/*
 * A policy's on_miss listed its window out of order: the plug merges
 * requests in the order pages come, so another order is other I/O than
 * the ascending one policy.h asks for (and the kernel issues).
 */
static __attribute__((noinline, cold)) int bad_window_order(struct engine *e, size_t fi,
							    const struct swt_window *w, uint32_t k)
{
	snprintf(e->why, sizeof(e->why), "on_miss listed %s %llu after %llu at swap fault %zu: "
		 "windows are listed in ascending order", w->kind == SWT_WINDOW_SLOTS ? "slot" :
		 "virtual page", (unsigned long long)w->list[k], (unsigned long long)w->list[k - 1],
		 fi + 1);
	return -SWT_EPLUGIN;
}

static __attribute__((noinline)) struct swt_replay_series_point *
series_append(struct engine *e, struct swt_replay_part *p, uint64_t second)
{
	struct swt_replay_series_point *pt;

	if (p->nr_seconds && second < p->series[p->nr_seconds - 1].second)
		e->series_unsorted = 1;
	if (p->nr_seconds == p->series_cap) {
		size_t cap = p->series_cap * 2;
		void *grown = cap > p->series_cap ? realloc(p->series, cap * sizeof(*pt)) : NULL;

		if (!grown) {
			e->series_nomem = 1;
			return &e->series_scratch;
		}
		p->series = grown;
		p->series_cap = cap;
	}
	pt = &p->series[p->nr_seconds++];
	*pt = (struct swt_replay_series_point){ .second = second };
	return pt;
}

/* The point of a partition's series for this second: its last one, but for a new second. */
static inline struct swt_replay_series_point *series_at(struct engine *e, struct swt_replay_part *p,
							uint64_t second)
{
	if (p->nr_seconds && p->series[p->nr_seconds - 1].second == second)
		return &p->series[p->nr_seconds - 1];
	return series_append(e, p, second);
}

static int cmp_series_point(const void *a, const void *b)
{
	const struct swt_replay_series_point *x = a, *y = b;

	return x->second < y->second ? -1 : x->second > y->second;
}

/* A series from faults out of time order: by second, one point per second. */
static void series_tidy(struct swt_replay_part *p)
{
	size_t kept = 0;

	if (!p->nr_seconds)
		return;
	qsort(p->series, p->nr_seconds, sizeof(*p->series), cmp_series_point);
	for (size_t s = 1; s < p->nr_seconds; s++) {
		struct swt_replay_series_point *k = &p->series[kept];

		if (p->series[s].second == k->second) {
			k->faults += p->series[s].faults;
			k->hits += p->series[s].hits;
			k->pages_read += p->series[s].pages_read;
		} else {
			p->series[++kept] = p->series[s];
		}
	}
	p->nr_seconds = kept + 1;
}

/* The policy's window for fault fi (e->info filled), checked against the ABI: 0 or the error. */
static int ask_window(struct engine *e, size_t fi, struct swt_window *win)
{
	int ret = e->policy->on_miss(e->inst, &e->info, win);

	if (ret < 0)
		return miss_failed(e, fi, ret);
	if (win->kind != SWT_WINDOW_SLOTS && win->kind != SWT_WINDOW_VPAGES)
		return bad_window_kind(e, fi, win->kind);
	if (win->list != e->win_list || win->capacity != e->win_cap)
		return bad_window_buffer(e, fi);
	if (win->count > win->capacity)
		return bad_window_count(e, fi, win->count);
	for (uint32_t k = 1; k < win->count; k++)
		if (win->list[k] < win->list[k - 1])
			return bad_window_order(e, fi, win, k);
	return 0;
}

/*
 * Read the listed pages in one plug and cache them, the faulting page as
 * mapped and the others as readahead, counted in their areas' seconds.
 */
static inline void read_listed(struct engine *e, const struct read *reads, size_t nreads,
			       struct swt_replay_part *part, struct swt_replay_series_point *pt,
			       uint64_t second)
{
	plug_reads(e, reads, nreads);
	for (size_t i = 0; i < nreads; i++) {
		const struct read *rd = &reads[i];
		struct swt_replay_part *p = &e->res->parts[rd->area];

		cache_page(e, e->areas[rd->area].base + rd->slot, !rd->target);
		/* p is part (pt, its last point) or another area's, whose series may grow */
		(p == part ? pt : series_at(e, p, second))->pages_read++;
	}
	shrink(e);
}

/*
 * A block of virtual pages [first, first + count) read as collect_vpage_block
 * and read_listed would read it, in one pass: each page is plugged and
 * cached as it is found, with no read list between.  That gives the same
 * reads only when the faulting page is in the block (the general walk
 * reads a page left out first), so it is done only when the block holds
 * the faulting page and its VMA's PTEs lie side by side (prep.vma_ptes):
 * 1 then, else 0 with nothing done.  The
 * order of the checks is the general walk's: a slot already cached in
 * this pass reads as cached, where the walk had marked it SLOT_LISTED,
 * and the faulting slot is read once however many PTEs hold it.  The
 * block fits the read list's capacity (block_miss clips it), so no entry
 * is cut off as a full list would.
 */
static inline int read_vpage_block(struct engine *e, size_t fi, const struct swt_replay_fault *f,
				   struct swt_replay_part *part, struct swt_replay_series_point *pt,
				   uint64_t second, uint64_t first, uint32_t count)
{
	const struct prep *pr = e->prep;
	const uint64_t *ptes;
	uint64_t start, end, max = plug_max(e);
	size_t nrq = 0;
	int multi = 0, target_done = 0;

	if (f->vma < 0 || pr->vma_ptes[f->vma] == PTE_NOWHERE || pr->vp_idx[fi] == NIL)
		return 0;
	start = e->in->vmas[f->vma].start;
	end = first + count;
	/* clipped to the VMA's table as collect_vpage_block clips it */
	if (first < start)
		first = start;
	if (end > e->in->vmas[f->vma].end)
		end = e->in->vmas[f->vma].end;
	if (f->vpage < first || f->vpage >= end)
		return 0;
	if (e->ptes_synced != fi)
		ptes_sync(e);
	/* caught up to this fault, the faulting page's PTE holds its entry */
	ptes = e->ptes + pr->vma_ptes[f->vma];
	for (uint64_t v = first; v < end; v++) {
		uint64_t pte = ptes[v - start];
		uint32_t area;
		int target;

		if (pte == PTE_NONE)
			continue;
		area = (uint32_t)(pte >> 32);
		target = area == f->area && (uint32_t)pte == f->slot;
		if (target) {
			if (target_done)
				continue;
			target_done = 1;
		} else if (e->areas[area].slots[(uint32_t)pte] != SLOT_ALLOC) {
			continue;	/* free, already cached (before or in this pass) */
		}
		plug_add(e, &nrq, &multi, max, area, (uint32_t)pte);
		cache_page(e, e->areas[area].base + (uint32_t)pte, !target);
		(area == f->area ? pt : series_at(e, &e->res->parts[area], second))->pages_read++;
	}
	plug_count(e, nrq);
	shrink(e);
	return 1;
}

/*
 * vma's miss (or one auto takes VMA readahead for), placed inline from
 * its state (e->vma_ra): its on_miss's window as a block, without the
 * fault info, nor a call whose register saves cost as much as the
 * placing.
 */
static inline int vma_ra_miss(struct engine *e, const struct swt_replay_fault *f,
			      const struct area_state *a, struct swt_window_block *b)
{
	uint64_t vma_start = 0, vma_end = 0;
	struct swt_vma_ra_state *s;

	if (!f->vpage) {
		/* no fault address: the faulting slot alone */
		b->kind = SWT_WINDOW_SLOTS;
		b->size = 1;
		b->count = swt_cluster_block(f->slot, a->area_slots, 1, e->win_cap, &b->first);
		return 1;
	}
	b->kind = SWT_WINDOW_VPAGES;
	b->first = f->vpage;
	b->count = 1;
	b->size = 1;
	if (e->vma_ra_max == 1)
		return 1;	/* no readahead: the state is left alone */
	if (f->vma >= 0) {
		vma_start = e->in->vmas[f->vma].start;
		vma_end = e->in->vmas[f->vma].end;
	}
	s = swt_vma_ra_state_of(e->vma_ra, f->pid, vma_start);
	if (!s)
		return -SWT_ENOMEM;
	swt_vma_ra_place(s, f->vpage, e->vma_ra_max, vma_start, vma_end, e->in->page_shift,
			 e->win_cap, b);
	return 1;
}

/* The fault's whole flags, as fill_fault_info leaves them. */
static inline uint32_t fault_flags(const struct engine *e, const struct swt_replay_fault *f,
				   const struct area_state *a)
{
	return brief_fault_flags(f, a) | (f->vma >= 0 ? vma_fault_flags(&e->in->vmas[f->vma]) : 0);
}

/* vma's hit (or auto's on a page it read by VMA), noted inline (vma_ra_miss). */
static inline void vma_ra_hit(struct engine *e, const struct swt_replay_fault *f)
{
	struct swt_vma_ra_state *s;

	if (!f->vpage)
		return;
	s = swt_vma_ra_state_of(e->vma_ra, f->pid, f->vma >= 0 ? e->in->vmas[f->vma].start : 0);
	if (s)
		swt_vma_ra_note_hit(s, f->vpage);
}

/* A hit on a page the policy read ahead: on_hit, or its fast path's quick_hit when that suffices. */
static inline void tell_hit(struct engine *e, const struct swt_replay_fault *f,
			    const struct area_state *a)
{
	if (e->fast && e->fast->quick_hit) {
		fill_fault_brief(e, f, a);
		if (e->fast->quick_hit(e->inst, &e->info))
			return;
	}
	fill_fault_info(e, f, a);
	e->policy->on_hit(e->inst, &e->info);
}

/*
 * A hit, for a policy that reads at hits too (SWT_POLICY_READS_AT_HITS):
 * the pages its window lists beside the cached faulting one are read
 * ahead, in one plug.
 */
static __attribute__((noinline)) int read_at_hit(struct engine *e, size_t fi,
						 const struct swt_replay_fault *f,
						 const struct area_state *a,
						 struct swt_replay_part *part,
						 struct swt_replay_series_point *pt, uint64_t second)
{
	struct swt_window win = { .kind = SWT_WINDOW_SLOTS, .capacity = e->win_cap, .size = 1,
				  .list = e->win_list };
	int target_done = 1;	/* cached: not read again */
	size_t nreads;
	int ret;

	fill_fault_info(e, f, a);
	e->info.flags |= SWT_FAULT_HIT;
	ret = ask_window(e, fi, &win);
	if (ret)
		return ret;
	nreads = collect_reads(e, fi, f, &win, &target_done);
	if (nreads)
		read_listed(e, e->reads + 1, nreads, part, pt, second);
	return 0;
}

/*
 * One fault.  Only what depends on the policy is counted here: faults,
 * hits, readahead pages, requests and pages read per second; misses and
 * the totals follow from them at the end (finish_result).
 */
static int on_fault(struct engine *e, size_t fi)
{
	const struct swt_replay_fault *f = &e->in->faults[fi];
	struct area_state *a = &e->areas[f->area];
	struct swt_replay_result *r = e->res;
	struct swt_replay_part *part = &r->parts[f->area];
	int32_t *word = &a->slots[f->slot];
	uint64_t second = e->prep->first_second + e->prep->fault_sec[fi];
	struct swt_replay_series_point *pt = series_at(e, part, second);
	struct swt_window win;
	struct swt_window_block b;
	size_t nreads = 0;
	const struct read *reads;
	uint64_t first = 0, count;
	int ret = 0, is_block, target_done = 0;

	e->cur = fi;
	if (e->full_info) {
		/*
		 * Runs that read VMA windows keep the PTEs caught up fault by
		 * fault: the previous fault's entry now, whose line was
		 * prefetched with its window's.  Caught up at a miss instead,
		 * the walk's trip count (one, two or more faults) was a
		 * branch mispredicted on every third miss or so.
		 */
		const struct prep *pr = e->prep;

		if (!fi)
			ptes_sync(e);
		else if (pr->pte_at[fi - 1] != PTE_NOWHERE)
			e->ptes[pr->pte_at[fi - 1]] = pr->pte_after[fi - 1];
		e->ptes_synced = fi;
		/*
		 * A VMA window's PTEs are one random line that its walk
		 * then waits on, and so is the faulting slot's word (below);
		 * two faults ahead the lines arrive in time (one ahead is too
		 * late, four or eight ahead are evicted as often;
		 * replay-notes.md).
		 */
		if (fi + 2 < e->in->nr_faults && pr->pte_at[fi + 2] != PTE_NOWHERE)
			__builtin_prefetch(&e->ptes[pr->pte_at[fi + 2]]);
	}
	if (fi + 2 < e->in->nr_faults) {
		const struct swt_replay_fault *ahead = f + 2;

		__builtin_prefetch(&e->areas[ahead->area].slots[ahead->slot]);
	}
	pt->faults++;
	e->word_refault[a->base + f->slot] = e->prep->refault[fi];	/* the page this fault maps */
	if (*word >= 0 && (*word & 1)) {
		/* the page was read ahead: a hit; the fault maps it, it ages as a mapped page now */
		if (OBSERVED(e) && e->observer->hit)
			e->observer->hit(e->observer->ctx, fi);
		e->nodes[*word >> 1].stamp = NEVER_SCANNED;
		*word &= ~1;
		pt->hits++;
		if (e->policy->on_hit) {
			if (e->vma_ra && (!e->vma_ra_auto || swt_flags_use_vma_ra(fault_flags(e, f, a))))
				vma_ra_hit(e, f);
			else
				tell_hit(e, f, a);
		}
		return e->reads_at_hits ? read_at_hit(e, fi, f, a, part, pt, second) : 0;
	}
	if (*word >= 0)
		uncache(e, *word >> 1, a->base + f->slot);	/* the real kernel had evicted it, when unknown */

	win.kind = SWT_WINDOW_SLOTS;
	win.count = 0;
	win.capacity = e->win_cap;
	win.size = 1;
	win.list = e->win_list;
	if (e->fast) {
		if (!e->full_info) {
			fill_fault_brief(e, f, a);
			ret = e->fast->block_miss(e->inst, &e->info, win.capacity, &b);
		} else if (e->vma_ra &&
			   (!e->vma_ra_auto || swt_auto_takes_vma_ra(fault_flags(e, f, a)))) {
			ret = vma_ra_miss(e, f, a, &b);
		} else {
			fill_fault_info(e, f, a);
			ret = e->fast->block_miss(e->inst, &e->info, win.capacity, &b);
		}
		if (ret < 0)
			return miss_failed(e, fi, ret);
	}
	if (e->fast && ret) {
		/* the window as a block: what window_is_block would find in its list */
		count_window(part, b.size, b.kind);
		first = b.first;
		count = b.count;
		if (b.kind == SWT_WINDOW_VPAGES && (count == 0 || (count == 1 && first == f->vpage))) {
			/*
			 * The faulting page alone (the commonest VMA window):
			 * its own PTE holds this fault's entry, so the
			 * walk would read just its slot, as below.
			 */
			is_block = 1;
			count = 1;
		} else if (b.kind == SWT_WINDOW_VPAGES) {
			if (read_vpage_block(e, fi, f, part, pt, second, first, b.count))
				return 0;
			/* the general walk, unlisted */
			nreads = collect_vpage_block(e, fi, f, first, b.count, &target_done);
			goto collected;
		} else {
			is_block = f->slot - first < count;	/* wraps when below */
		}
		if (!is_block) {
			/* without the faulting slot: the general walk, listed */
			for (uint32_t k = 0; k < count; k++)
				win.list[k] = first + k;
			win.count = (uint32_t)count;
			win.size = b.size;
		}
	} else {
		fill_fault_info(e, f, a);
		ret = ask_window(e, fi, &win);
		if (ret)
			return ret;
		count_window(part, win.size, win.kind);
		is_block = window_is_block(&win, f->slot, &first);
		count = win.count;
	}

	if (is_block && count == 1) {
		/* no readahead (the commonest window): the faulting page, one request */
		part->request_hist[request_bucket(r, 1)]++;
		cache_page(e, a->base + f->slot, 0);
		pt->pages_read++;
		shrink(e);
		return 0;
	}
	if (is_block) {
		read_block(e, f, part, pt, first, count);
		shrink(e);
		return 0;
	}
	/* collected after reads[0], which stays free for the faulting page */
	nreads = collect_reads(e, fi, f, &win, &target_done);
collected:
	reads = e->reads + 1;
	if (!target_done) {
		/* the policy left the faulting page out: it is read all the same, first */
		reads = e->reads;
		e->reads[0].area = f->area;
		e->reads[0].slot = f->slot;
		e->reads[0].target = 1;
		nreads++;
	}
	read_listed(e, reads, nreads, part, pt, second);
	return 0;
}

/* The area whose slot words hold engine.words[w]. */
static size_t area_of_word(const struct engine *e, uint64_t w)
{
	size_t lo = 0, hi = e->in->nr_areas - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (e->areas[mid].base <= w)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * The counts the loop leaves out, from the ones it keeps (hits and pages
 * read per second, requests): every fault is a hit or a miss, every hit
 * is a readahead hit, every miss reads its own page, every page read is
 * in exactly one request, and every page read ahead was hit, wasted
 * (evicted or overwritten unused), or is still unused at the end.
 */
static void finish_result(struct engine *e)
{
	struct swt_replay_result *r = e->res;
	const struct prep *pr = e->prep;
	struct swt_replay_metrics *t = &r->total;

	for (size_t i = 0; i < r->nr_parts; i++) {
		struct swt_replay_part *p = &r->parts[i];
		struct swt_replay_metrics *m = &p->m;

		if (e->series_unsorted)
			series_tidy(p);
		for (size_t s = 0; s < p->nr_seconds; s++) {
			m->hits += p->series[s].hits;
			m->pages_read += p->series[s].pages_read;
			p->series[s].misses = p->series[s].faults - p->series[s].hits;
		}
		m->faults = pr->area_faults[i];
		m->misses = m->faults - m->hits;
		m->ra_hits = m->hits;
		m->ra_pages = m->pages_read - m->misses;
		m->ra_wasted = m->ra_pages - m->hits;
	}
	/* freed pages the lists evicted: neither written as the trace says nor still held */
	r->freed_left_lists = e->sinks_held - r->freed_left_traced - r->freed_left_oldest;
	for (size_t k = 0; k < e->sink_end; k++)
		r->freed_left_lists -= e->words[e->slot_words + k] >= 0;
	/* the pages still unused at the end: the inactive ring's nodes stamped STAMP_RA */
	for (uint64_t pos = e->inactive.tail; pos != e->inactive.head; pos++) {
		int32_t n = ring_node(&e->inactive, pos);

		if (e->nodes[n].stamp == STAMP_RA) {
			r->parts[area_of_word(e, node_word(e, n))].m.ra_wasted--;
			r->ra_unused_at_end++;
		}
	}
	for (size_t i = 0; i < r->nr_parts; i++) {
		struct swt_replay_part *p = &r->parts[i];
		struct swt_replay_metrics *m = &p->m;

		m->read_requests = 0;
		for (size_t b = 0; b <= r->max_request_pages; b++)
			m->read_requests += p->request_hist[b];
		m->read_merges = m->pages_read - m->read_requests;
		t->faults += m->faults;
		t->misses += m->misses;
		t->hits += m->hits;
		t->pages_read += m->pages_read;
		t->ra_pages += m->ra_pages;
		t->ra_hits += m->ra_hits;
		t->ra_wasted += m->ra_wasted;
		t->read_requests += m->read_requests;
		t->read_merges += m->read_merges;
	}
}

/*
 * A write fault freed the slot of free k's page (in->frees).  Still in
 * memory, the page keeps its node, which now names a word of its own
 * (engine.slot_words): it ages as any page, but leaves its slot free.  It
 * is dirty, so the trace shows when it left memory -- a write to a free
 * slot -- though not always which write was its own (free_page_written,
 * free_oldest_written).  A page the model had evicted leaves the slot
 * free all the same; one it had read ahead again, unused, is dropped.
 */
static __attribute__((noinline)) void free_slot(struct engine *e, size_t k)
{
	const struct swt_replay_fault *f = &e->in->faults[e->in->frees[k].fault];
	uint64_t w = e->areas[f->area].base + f->slot, sink = e->slot_words + k;
	int32_t word = e->words[w];

	if (word >= 0 && (word & 1))
		uncache(e, word >> 1, w);
	word = e->words[w];
	if (word >= 0) {
		int32_t n = word >> 1;

		if (e->wide)
			e->wide[n].word = sink;
		else
			e->nodes[n].word = (uint32_t)sink;
		e->words[sink] = word;
		e->sinks_held++;
	} else if (word == SLOT_ALLOC) {
		e->nr_alloc--;
	}
	e->words[w] = SLOT_FREE;
	e->sink_end = k + 1;
}

/* The trace shows where free k's page was written: it left memory then. */
static __attribute__((noinline)) void free_page_written(struct engine *e, size_t k)
{
	int32_t word = e->words[e->slot_words + k];

	if (word >= 0) {
		uncache(e, word >> 1, e->slot_words + k);
		e->res->freed_left_traced++;
	}
}

/*
 * A page written to a free slot left memory then: a dirty page without a
 * slot (a page that already had one, and was clean, is written back to it
 * or dropped).  Unless the trace says which (free_page_written), it is
 * taken to be the oldest page a write fault freed that the model still
 * holds: reclaim writes them in LRU order, roughly the order they were
 * freed in.
 */
static __attribute__((noinline)) void free_oldest_written(struct engine *e)
{
	for (; e->sink_oldest < e->sink_end; e->sink_oldest++) {
		int32_t word = e->words[e->slot_words + e->sink_oldest];

		/* one whose own write the trace names leaves at that write */
		if (word >= 0 && e->in->frees[e->sink_oldest].evict_out < 0) {
			uncache(e, word >> 1, e->slot_words + e->sink_oldest);
			e->sink_oldest++;
			e->res->freed_left_oldest++;
			return;
		}
	}
}

static int run_pass(struct engine *e)
{
	const struct swt_replay_input *in = e->in;
	const struct swt_replay_free *frees = in->frees;
	const uint32_t *outs_before = e->prep->outs_before;
	const uint64_t *by_out = e->prep->free_by_out;
	size_t fi, oi = 0, fr = 0, bo = 0, nbo = e->prep->nr_free_by_out;
	const size_t nr_frees = in->nr_frees, nr_faults = in->nr_faults;
	/*
	 * free_after: the fault the next free comes after (SIZE_MAX: none
	 * left), kept in a local so that a fault with no free due costs one
	 * compare.  The next free is due after its fault and once its
	 * swap-outs were replayed (a write-protect fault can come after
	 * swap-outs that follow the fault before it): due_out is its outs_at
	 * while its fault is past, SIZE_MAX else.  out_writes: the next
	 * swap-out that writes a freed page.
	 */
	size_t free_after = nr_frees ? frees[0].after : SIZE_MAX;
	size_t due_out = SIZE_MAX;
	size_t out_writes = nbo ? (size_t)(by_out[0] >> 32) : SIZE_MAX;
	int ret;

	for (fi = 0; fi <= nr_faults; fi++) {
		size_t end = fi < nr_faults ? outs_before[fi] : in->nr_outs;

		for (; oi < end; oi++) {
			int fresh;

			while (oi >= due_out) {
				free_slot(e, fr++);
				free_after = fr < nr_frees ? frees[fr].after : SIZE_MAX;
				due_out = free_after < fi ? frees[fr].outs_at : SIZE_MAX;
			}
			fresh = on_swapout(e, &in->outs[oi]);
			if (oi == out_writes) {
				for (; oi == out_writes;
				     out_writes = ++bo < nbo ? (size_t)(by_out[bo] >> 32) : SIZE_MAX)
					free_page_written(e, (uint32_t)by_out[bo]);
			} else if (fresh && e->sink_oldest < e->sink_end) {
				free_oldest_written(e);
			}
		}
		/* the rest of the frees due before this fault */
		while (free_after < fi) {
			free_slot(e, fr++);
			free_after = fr < nr_frees ? frees[fr].after : SIZE_MAX;
		}
		if (fi == nr_faults)
			break;
		if (!(fi & (DUE_BUCKET - 1)))
			due_sort(e, fi >> DUE_BUCKET_SHIFT);
		if (e->due_now[fi & (DUE_BUCKET - 1)] != NIL) {
			evict_due(e, e->due_now[fi & (DUE_BUCKET - 1)]);
			e->due_now[fi & (DUE_BUCKET - 1)] = NIL;
		}
		ret = on_fault(e, fi);
		if (ret)
			return ret;
		due_out = SIZE_MAX;
		if (free_after == fi) {
			/* this fault's frees with no swap-out between: now; the others wait for theirs */
			while (free_after == fi && frees[fr].outs_at <= oi) {
				free_slot(e, fr++);
				free_after = fr < nr_frees ? frees[fr].after : SIZE_MAX;
			}
			if (free_after == fi)
				due_out = frees[fr].outs_at;
		}
	}
	if (e->series_nomem) {
		snprintf(e->why, sizeof(e->why), "out of memory for the per-second series");
		return -SWT_ENOMEM;
	}
	if (e->tight_rings && !rings_consistent(e)) {
		snprintf(e->why, sizeof(e->why), "LRU rings and slot words disagree (an engine bug)");
		return -SWT_ESTATE;
	}
	finish_result(e);
	return 0;
}

int swt_replay_run(const struct swt_replay_input *in, const struct swt_replay_config *cfg,
		   struct swt_replay_result **out, struct swt_err *err)
{
	struct engine e;
	uint64_t t0 = swt_now_ns();
	int ret;

	*out = NULL;
	ret = engine_init(&e, in, cfg, err);
	if (!ret) {
		uint64_t t1 = swt_now_ns();

		ret = run_pass(&e);
		if (e.res)
			e.res->loop_ns = swt_now_ns() - t1;
		if (ret)
			swt_error(err, -ret, "replay with '%s' failed%s%s", cfg->policy->name,
				  e.why[0] ? ": " : "", e.why);
	}
	if (!ret) {
		e.res->elapsed_ns = swt_now_ns() - t0;
		*out = e.res;
		e.res = NULL;
	}
	engine_release(&e);
	return ret;
}

double swt_metrics_accuracy(const struct swt_replay_metrics *m)
{
	return m->ra_pages ? (double)m->ra_hits / (double)m->ra_pages : -1.0;
}

double swt_metrics_coverage(const struct swt_replay_metrics *m)
{
	return m->faults ? (double)m->hits / (double)m->faults : -1.0;
}

double swt_metrics_avg_request_kib(const struct swt_replay_metrics *m, uint32_t page_shift)
{
	return m->read_requests ?
		       (double)m->pages_read * (double)(1u << page_shift) / 1024.0 /
			       (double)m->read_requests : -1.0;
}
