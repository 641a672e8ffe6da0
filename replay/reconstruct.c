/*
 * The demand stream of a capture taken with readahead on, reconstructed
 * from its faults (the --approximate replay; docs/replay-model.md, Input).
 *
 * A block trace cannot tell a fault's own page from the pages read ahead
 * with it, and a fault that finds a page read ahead does no I/O at all.
 * What the fault events add: which reads one fault queued (ingest's
 * swap_in.fault_id), and the faults on pages the task had (an address it
 * had faulted before, or any after its first read fault) -- a readahead
 * hit when it did no I/O.  Neither says
 * which slot the fault wanted, so the slots are chosen by what the rest of
 * the trace says of the same address:
 *
 *  - a fault that read pages wanted the first of them that the address's
 *    next read fault reads again (a page keeps its slot while it is only
 *    read), else the first (the window's lowest slot or address);
 *  - a fault that did no I/O took a page read ahead and not yet taken: the
 *    slot its address had before if that is waiting; where the kernel
 *    read ahead by virtual address, the read its place in a window points
 *    at (vma_window_read); else the latest waiting one its address's next
 *    read fault reads again, else the first waiting one of the latest
 *    fault that has any (a random workload's cluster-readahead hits carry
 *    no other clue); with none waiting it was no readahead hit (a page
 *    still in the swap cache after reclaim unmapped it) and is dropped.
 *
 * A page waits from its read until a fault takes it or its slot is
 * written again.  Without fault events every read stands for a fault.
 *
 * Swap-entry probes, where a capture had them, name every fault's entry:
 * swt_replay_probe_stream (at the end) reads the exact stream from them.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

#define NONE UINT32_MAX

/* Re-faults this far from every read fault of their task are not in a swapped VMA. */
#define HIT_REACH_PAGES 512

/* how far a page's place in its window may be from where its read puts it */
#define VMA_RA_SLACK 3

struct rc_read {
	uint32_t area;
	uint32_t group;		/* index into groups[] */
	uint64_t slot;
};

/* The reads one fault queued (or one read no fault explains). */
struct rc_group {
	uint64_t ts;		/* its first read */
	uint64_t vpage;		/* the fault's page, 0 unknown */
	int32_t pid;
	uint32_t first, nr;	/* into reads[] */
	int32_t next;		/* the next group of the same address, -1 none */
	uint32_t demand;	/* chosen: index into reads[] */
};

/* A fault that did no I/O on a page its task had faulted before. */
struct rc_hit {
	uint64_t ts;
	uint64_t vpage;
	int32_t pid;
	int32_t next;		/* the next group of the same address, -1 none */
	int64_t prev;		/* the address's previous event: group g, or -2 - hit; -1 none */
	uint32_t read;		/* the read whose page it took, NONE */
};

struct rc_addr_event {
	int32_t pid;
	uint64_t vpage, ts;
	int64_t ref;		/* group g, or -2 - hit */
};

struct rc_pending {
	uint32_t read;		/* index into reads[] */
	uint32_t seq;
};

struct rc {
	struct swt_replay_input *in;
	struct rc_read *reads;
	size_t nr_reads, cap_reads;
	struct rc_group *groups;
	size_t nr_groups, cap_groups;
	struct swt_map read_faults;	/* fault id -> its group, for every fault that read */
	struct rc_hit *hits;
	size_t nr_hits;
	uint64_t *area_base;	/* words: area_base[area] + slot */
	uint64_t *area_slots;	/* slots each area's words cover */
	uint64_t nr_words;
	uint32_t *pend_seq;	/* per word: the seq of its waiting read, 0 none */
	struct rc_pending *stack;	/* waiting reads in read order, stale entries skipped */
	size_t nr_stack, cap_stack;
	uint32_t seq;
	size_t cap_faults;
	int vma_ra;		/* the traced kernel read ahead by virtual address */
	struct swt_map at_vpage;	/* VMA readahead: (pid, vpage) -> latest read placed there */
	int32_t *placed_prev;	/* per read: the previous read placed at the same vpage, -1 */
};

static int cmp_addr_event(const void *a, const void *b)
{
	const struct rc_addr_event *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->vpage != y->vpage)
		return x->vpage < y->vpage ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

/* Every read, grouped by the fault that queued it, groups in the order of their first read. */
static int load_reads(struct swt_store *st, struct rc *rc, struct swt_err *err)
{
	struct swt_replay_input *in = rc->in;
	uint32_t *group_of = NULL, *fill = NULL;
	struct rc_read *sorted = NULL;
	sqlite3_stmt *s;
	size_t cap_group_of = 0;
	int ret, rc_step;

	ret = swt_store_prepare(st, "SELECT ts, area_id, slot, address, pid, fault_id, id FROM swap_in"
				" WHERE " SWT_NOT_SWAPOFF_SQL " ORDER BY ts, id", &s, err);
	if (ret)
		return ret;
	while ((rc_step = sqlite3_step(s)) == SQLITE_ROW) {
		int area = swt_replay_area_index(in, sqlite3_column_int64(s, 1));
		int64_t slot = sqlite3_column_int64(s, 2);
		uint64_t g = UINT64_MAX;

		if (area < 0)
			continue;
		/*
		 * every slot a whole number from 1 up (swt_store_check_slots) and
		 * below the engine's limit (load_areas), in every row
		 */
		if (rc->nr_reads >= NONE) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': more swap-ins than replay handles (2^32)",
					swt_store_path(st));
			goto out;
		}
		if (sqlite3_column_type(s, 5) != SQLITE_NULL &&
		    swt_map_get(&rc->read_faults, (uint64_t)sqlite3_column_int64(s, 5), 0, &g) == 0)
			g = UINT64_MAX;
		if (g == UINT64_MAX) {
			struct rc_group *grp;

			if (rc->nr_groups >= INT32_MAX) {	/* groups link by int32_t */
				ret = swt_error(err, SWT_EFORMAT, "'%s': more swap-in faults than "
						"replay handles (2^31)", swt_store_path(st));
				goto out;
			}

			if (swt_grow((void **)&rc->groups, &rc->cap_groups, rc->nr_groups + 1,
				     sizeof(*rc->groups))) {
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				goto out;
			}
			g = rc->nr_groups;
			grp = &rc->groups[rc->nr_groups++];
			grp->ts = (uint64_t)sqlite3_column_int64(s, 0);
			grp->vpage = (uint64_t)swt_column_int(s, 3, 0) >> in->page_shift;
			grp->pid = swt_replay_process_of(in, swt_column_int(s, 4, -1));
			grp->nr = 0;
			grp->next = -1;
			if (sqlite3_column_type(s, 5) != SQLITE_NULL &&
			    swt_map_put(&rc->read_faults, (uint64_t)sqlite3_column_int64(s, 5), 0, g)) {
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				goto out;
			}
		}
		if (swt_grow((void **)&rc->reads, &rc->cap_reads, rc->nr_reads + 1, sizeof(*rc->reads)) ||
		    swt_grow((void **)&group_of, &cap_group_of, rc->nr_reads + 1, sizeof(*group_of))) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		group_of[rc->nr_reads] = (uint32_t)g;
		rc->reads[rc->nr_reads++] = (struct rc_read){ .area = (uint32_t)area, .slot = (uint64_t)slot };
		rc->groups[g].nr++;
	}
	if (rc_step != SQLITE_DONE) {
		ret = swt_store_sql_error(st, err, "swap-in stream");
		goto out;
	}
	/* each group's reads together, in read order (a fault's reads may interleave another's) */
	sorted = malloc((rc->nr_reads ? rc->nr_reads : 1) * sizeof(*sorted));
	fill = calloc(rc->nr_groups ? rc->nr_groups : 1, sizeof(*fill));
	if (!sorted || !fill) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t g = 0, at = 0; g < rc->nr_groups; g++) {
		rc->groups[g].first = (uint32_t)at;
		at += rc->groups[g].nr;
	}
	for (size_t i = 0; i < rc->nr_reads; i++) {
		struct rc_read *r = &sorted[rc->groups[group_of[i]].first + fill[group_of[i]]++];

		*r = rc->reads[i];
		r->group = group_of[i];
	}
	free(rc->reads);
	rc->reads = sorted;
	sorted = NULL;
out:
	sqlite3_finalize(s);
	free(group_of);
	free(fill);
	free(sorted);
	return ret;
}

/* Whether (pid, vpage) lies within HIT_REACH_PAGES of a read fault of its task (sorted). */
static int near_read_fault(const struct rc_addr_event *v, size_t n, int32_t pid, uint64_t vpage)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].pid < pid || (v[mid].pid == pid && v[mid].vpage < vpage))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].pid == pid && v[lo].vpage - vpage <= HIT_REACH_PAGES)
		return 1;
	return lo > 0 && v[lo - 1].pid == pid && vpage - v[lo - 1].vpage <= HIT_REACH_PAGES;
}

static int cmp_hit_time(const void *a, const void *b)
{
	const struct rc_addr_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

/*
 * The task's first read fault, per task (first_read: pid -> ts): a task
 * touches its memory before it swaps any in, so its faults that did no I/O
 * after then are on pages it had before, even when the trace began too
 * late to show their earlier faults.
 */
static int map_first_reads(const struct rc *rc, struct swt_map *first_read, struct swt_err *err)
{
	if (swt_map_init(first_read, 16))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t g = 0; g < rc->nr_groups; g++) {
		uint64_t key = (uint64_t)(uint32_t)rc->groups[g].pid, ts;

		if (!rc->groups[g].vpage ||
		    (swt_map_get(first_read, key, 0, &ts) && ts <= rc->groups[g].ts))
			continue;
		if (swt_map_put(first_read, key, 0, rc->groups[g].ts))
			return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * The faults that did no I/O on a page their task had before (one it had
 * faulted before, or any after its first read fault), near its read faults.
 */
static int load_hits(struct swt_store *st, struct rc *rc, struct swt_err *err)
{
	struct swt_replay_input *in = rc->in;
	struct rc_addr_event *v = NULL, *f = NULL;
	struct swt_map first_read = { 0 };
	size_t n = 0, nf = 0, cap_f = 0, nh = 0;
	sqlite3_stmt *s = NULL;
	int ret = 0, rc_step;

	v = malloc((rc->nr_groups ? rc->nr_groups : 1) * sizeof(*v));
	if (!v)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t g = 0; g < rc->nr_groups; g++)
		if (rc->groups[g].vpage)
			v[n++] = (struct rc_addr_event){ .pid = rc->groups[g].pid,
							 .vpage = rc->groups[g].vpage };
	if (!n)
		goto out;	/* no fault addresses: no way to tell a hit */
	ret = map_first_reads(rc, &first_read, err);
	if (ret)
		goto out;
	qsort(v, n, sizeof(*v), cmp_addr_event);	/* ts and ref 0: by address */
	ret = swt_store_prepare(st, "SELECT id, ts, pid, address FROM fault", &s, err);
	if (ret)
		goto out;
	while ((rc_step = sqlite3_step(s)) == SQLITE_ROW) {
		if (swt_grow((void **)&f, &cap_f, nf + 1, sizeof(*f))) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		f[nf++] = (struct rc_addr_event){
			.ref = sqlite3_column_int64(s, 0), .ts = (uint64_t)sqlite3_column_int64(s, 1),
			.pid = swt_replay_process_of(in, swt_column_int(s, 2, -1)),
			.vpage = (uint64_t)sqlite3_column_int64(s, 3) >> in->page_shift,
		};
	}
	if (rc_step != SQLITE_DONE) {
		ret = swt_store_sql_error(st, err, "faults");
		goto out;
	}
	/*
	 * A fault on a page its task had, which queued no read: the address
	 * faulted before, or the fault came after the task's first read fault
	 * (a trace that began mid-run shows no earlier fault of most pages).
	 */
	if (nf)
		qsort(f, nf, sizeof(*f), cmp_addr_event);
	for (size_t i = 0; i < nf; i++) {
		uint64_t g, first_ts;
		int had_page = (i > 0 && f[i].pid == f[i - 1].pid && f[i].vpage == f[i - 1].vpage) ||
			       (swt_map_get(&first_read, (uint64_t)(uint32_t)f[i].pid, 0, &first_ts) &&
				f[i].ts > first_ts);

		if (!had_page || !f[i].vpage ||
		    swt_map_get(&rc->read_faults, (uint64_t)f[i].ref, 0, &g) ||
		    !near_read_fault(v, n, f[i].pid, f[i].vpage))
			continue;
		f[nh++] = f[i];	/* nh < i: compacting in place */
	}
	if (nh)
		qsort(f, nh, sizeof(*f), cmp_hit_time);
	rc->hits = malloc((nh ? nh : 1) * sizeof(*rc->hits));
	if (!rc->hits) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nh; i++)
		rc->hits[i] = (struct rc_hit){ .ts = f[i].ts, .vpage = f[i].vpage, .pid = f[i].pid,
					       .next = -1, .prev = -1, .read = NONE };
	rc->nr_hits = nh;
out:
	sqlite3_finalize(s);
	swt_map_release(&first_read);
	free(v);
	free(f);
	return ret;
}

/* Link each group and hit to its address's next group, each hit to its address's previous event. */
static int link_addresses(struct rc *rc, struct swt_err *err)
{
	size_t n = 0, i;
	struct rc_addr_event *ev = malloc((rc->nr_groups + rc->nr_hits + 1) * sizeof(*ev));

	if (!ev)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (i = 0; i < rc->nr_groups; i++)
		if (rc->groups[i].vpage)
			ev[n++] = (struct rc_addr_event){ .pid = rc->groups[i].pid,
				.vpage = rc->groups[i].vpage, .ts = rc->groups[i].ts, .ref = (int64_t)i };
	for (i = 0; i < rc->nr_hits; i++)
		ev[n++] = (struct rc_addr_event){ .pid = rc->hits[i].pid, .vpage = rc->hits[i].vpage,
			.ts = rc->hits[i].ts, .ref = -2 - (int64_t)i };
	qsort(ev, n, sizeof(*ev), cmp_addr_event);
	for (i = n; i-- > 0;) {
		int same = i + 1 < n && ev[i + 1].pid == ev[i].pid && ev[i + 1].vpage == ev[i].vpage;
		int32_t next = -1;

		if (same)	/* the next event's own next group, or itself if a group */
			next = ev[i + 1].ref >= 0 ? (int32_t)ev[i + 1].ref :
				rc->hits[-2 - ev[i + 1].ref].next;
		if (ev[i].ref >= 0) {
			rc->groups[ev[i].ref].next = next;
		} else {
			struct rc_hit *h = &rc->hits[-2 - ev[i].ref];

			h->next = next;
			if (i > 0 && ev[i - 1].pid == ev[i].pid && ev[i - 1].vpage == ev[i].vpage)
				h->prev = ev[i - 1].ref;
		}
	}
	free(ev);
	return 0;
}

/* Slot words: one per slot the reads touch, every area's in one table. */
static int size_words(struct rc *rc, struct swt_err *err)
{
	struct swt_replay_input *in = rc->in;
	uint64_t *top = rc->area_slots = calloc(in->nr_areas, sizeof(*top));

	rc->area_base = calloc(in->nr_areas, sizeof(*rc->area_base));
	if (!top || !rc->area_base)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < rc->nr_reads; i++)
		if (rc->reads[i].slot + 1 > top[rc->reads[i].area])
			top[rc->reads[i].area] = rc->reads[i].slot + 1;
	for (size_t a = 0; a < in->nr_areas; a++) {
		rc->area_base[a] = rc->nr_words;
		rc->nr_words += top[a];
	}
	rc->pend_seq = calloc(rc->nr_words ? rc->nr_words : 1, sizeof(*rc->pend_seq));
	if (!rc->pend_seq)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	return 0;
}

static uint64_t word_of(const struct rc *rc, uint32_t read)
{
	return rc->area_base[rc->reads[read].area] + rc->reads[read].slot;
}

/* The read's page waits for a fault (a later read of its slot stands for it). */
static int set_pending(struct rc *rc, uint32_t read, struct swt_err *err)
{
	if (swt_grow((void **)&rc->stack, &rc->cap_stack, rc->nr_stack + 1, sizeof(*rc->stack)))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	rc->pend_seq[word_of(rc, read)] = ++rc->seq;
	rc->stack[rc->nr_stack++] = (struct rc_pending){ .read = read, .seq = rc->seq };
	return 0;
}

static int pending(const struct rc *rc, uint32_t read)
{
	return rc->pend_seq[word_of(rc, read)] != 0;
}

/*
 * Of the latest fault whose reads still wait, the first waiting read, NONE:
 * a task that runs through its pages takes them in the order they were
 * read (a random one in no order a trace could tell).
 */
static uint32_t latest_pending(struct rc *rc)
{
	while (rc->nr_stack) {
		const struct rc_pending *p = &rc->stack[rc->nr_stack - 1];

		if (rc->pend_seq[word_of(rc, p->read)] == p->seq) {
			const struct rc_group *g = &rc->groups[rc->reads[p->read].group];

			for (uint32_t j = g->first; j < p->read; j++)
				if (pending(rc, j))
					return j;
			return p->read;
		}
		rc->nr_stack--;
	}
	return NONE;
}

static int emit(struct rc *rc, uint64_t ts, uint32_t read, int32_t pid, uint64_t vpage,
		struct swt_err *err)
{
	struct swt_replay_input *in = rc->in;

	if (swt_grow((void **)&in->faults, &rc->cap_faults, in->nr_faults + 1, sizeof(*in->faults)))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	in->faults[in->nr_faults++] = (struct swt_replay_fault){
		.ts = ts, .slot = rc->reads[read].slot, .vpage = vpage, .area = rc->reads[read].area,
		.pid = pid, .vma = -1, .out = -1,
	};
	return 0;
}

static int same_slot(const struct rc *rc, uint32_t a, uint32_t b)
{
	return rc->reads[a].area == rc->reads[b].area && rc->reads[a].slot == rc->reads[b].slot;
}

/*
 * VMA readahead reads a window of virtual pages around the fault in
 * address order, skipping pages without a swap entry or in the cache: the
 * read k places after the fault's own was of a page at least k pages
 * after the fault's, likely k (before it, the same).  Each read is placed
 * there, so that a later hit on that page can find it.
 */
static int place_reads(struct rc *rc, const struct rc_group *g, struct swt_err *err)
{
	for (uint32_t i = g->first; i < g->first + g->nr; i++) {
		int64_t at = (int64_t)g->vpage + ((int64_t)i - (int64_t)g->demand);
		uint64_t prev;

		if (i == g->demand || at <= 0)
			continue;
		rc->placed_prev[i] = swt_map_get(&rc->at_vpage, (uint64_t)(uint32_t)g->pid,
						 (uint64_t)at, &prev) ? (int32_t)prev : -1;
		if (swt_map_put(&rc->at_vpage, (uint64_t)(uint32_t)g->pid, (uint64_t)at, i))
			return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * The waiting read of a VMA readahead window that most likely holds the
 * hit's page: one placed at its vpage, else at a neighbour, on the side of
 * its own fault's page where holes would have pushed it (a read placed at
 * vpage - s after its fault's page, or vpage + s before it).  NONE if none.
 */
static uint32_t vma_window_read(struct rc *rc, const struct rc_hit *h)
{
	for (int64_t s = 0; s <= VMA_RA_SLACK; s++) {
		for (int side = s ? -1 : 1; side <= 1; side += 2) {
			int64_t at = (int64_t)h->vpage + side * s;
			uint64_t r;

			if (at <= 0 || !swt_map_get(&rc->at_vpage, (uint64_t)(uint32_t)h->pid,
						    (uint64_t)at, &r))
				continue;
			for (int32_t i = (int32_t)r; i >= 0; i = rc->placed_prev[i]) {
				const struct rc_group *g = &rc->groups[rc->reads[i].group];
				int after = (uint32_t)i > g->demand;

				/* holes push a page away from its fault's: placed short of it */
				if (s && (after ? side > 0 : side < 0))
					continue;
				if (pending(rc, (uint32_t)i))
					return (uint32_t)i;
			}
		}
	}
	return NONE;
}

/* A read fault: its demand page, the others wait for faults. */
static int replay_group(struct rc *rc, struct rc_group *g, struct swt_err *err)
{
	const struct rc_group *n = g->next >= 0 ? &rc->groups[g->next] : NULL;
	int ret;

	g->demand = g->first;
	for (uint32_t i = g->first; n && i < g->first + g->nr; i++)
		for (uint32_t j = n->first; j < n->first + n->nr; j++)
			if (same_slot(rc, i, j)) {
				g->demand = i;
				n = NULL;
				break;
			}
	if (rc->vma_ra && g->vpage) {
		ret = place_reads(rc, g, err);
		if (ret)
			return ret;
	}
	for (uint32_t i = g->first; i < g->first + g->nr; i++) {
		if (i == g->demand) {
			rc->pend_seq[word_of(rc, i)] = 0;
			continue;
		}
		ret = set_pending(rc, i, err);
		if (ret)
			return ret;
	}
	rc->in->approx_misses++;
	return emit(rc, g->ts, g->demand, g->pid, g->vpage, err);
}

/* A fault that did no I/O: the waiting page it took, if any. */
static int replay_hit(struct rc *rc, struct rc_hit *h, struct swt_err *err)
{
	uint32_t took = NONE;

	/* the slot its page had before */
	if (h->prev >= 0 && pending(rc, rc->groups[h->prev].demand))
		took = rc->groups[h->prev].demand;
	else if (h->prev <= -2 && rc->hits[-2 - h->prev].read != NONE &&
		 pending(rc, rc->hits[-2 - h->prev].read))
		took = rc->hits[-2 - h->prev].read;
	/* VMA readahead: the read its place in a window points at */
	if (took == NONE && rc->vma_ra)
		took = vma_window_read(rc, h);
	/* the latest waiting one of the slots its next read fault reads */
	if (took == NONE && h->next >= 0) {
		const struct rc_group *n = &rc->groups[h->next];
		uint32_t best = 0;

		for (uint32_t j = n->first; j < n->first + n->nr; j++)
			if (rc->pend_seq[word_of(rc, j)] > best) {
				best = rc->pend_seq[word_of(rc, j)];
				took = j;
			}
	}
	if (took == NONE)
		took = latest_pending(rc);
	if (took == NONE)
		return 0;	/* nothing read ahead is waiting: no readahead hit */
	rc->pend_seq[word_of(rc, took)] = 0;
	h->read = took;
	rc->in->approx_hits++;
	return emit(rc, h->ts, took, h->pid, h->vpage, err);
}

int swt_replay_reconstruct(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	struct rc rc = { .in = in };
	size_t gi = 0, hi = 0, oi = 0;
	int ret;

	if (swt_map_init(&rc.read_faults, 1024))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (swt_map_init(&rc.at_vpage, 1024)) {
		swt_map_release(&rc.read_faults);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	/* auto's rule (swt_flags_use_vma_ra): VMA readahead unless an area is rotational */
	rc.vma_ra = in->vma_ra_enabled > 0 && !swt_replay_any_rotational(in);
	ret = load_reads(st, &rc, err);
	if (!ret)
		ret = load_hits(st, &rc, err);
	if (!ret)
		ret = link_addresses(&rc, err);
	if (!ret)
		ret = size_words(&rc, err);
	if (!ret && rc.vma_ra) {
		rc.placed_prev = malloc((rc.nr_reads ? rc.nr_reads : 1) * sizeof(*rc.placed_prev));
		if (!rc.placed_prev)
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
	}
	while (!ret && (gi < rc.nr_groups || hi < rc.nr_hits)) {
		uint64_t next = gi < rc.nr_groups ? rc.groups[gi].ts : UINT64_MAX;

		if (hi < rc.nr_hits && rc.hits[hi].ts < next)
			next = rc.hits[hi].ts;
		/* a slot written again holds another page: what was read of it is stale */
		if (oi < in->nr_outs && in->outs[oi].ts <= next) {
			const struct swt_replay_swapout *o = &in->outs[oi++];

			if (o->slot < rc.area_slots[o->area])
				rc.pend_seq[rc.area_base[o->area] + o->slot] = 0;
			continue;
		}
		if (gi < rc.nr_groups && rc.groups[gi].ts == next)
			ret = replay_group(&rc, &rc.groups[gi++], err);
		else
			ret = replay_hit(&rc, &rc.hits[hi++], err);
	}
	free(rc.reads);
	free(rc.groups);
	free(rc.hits);
	free(rc.area_base);
	free(rc.area_slots);
	free(rc.pend_seq);
	free(rc.stack);
	swt_map_release(&rc.read_faults);
	swt_map_release(&rc.at_vpage);
	free(rc.placed_prev);
	return ret;
}

/*
 * With swap-entry probes (docs/capture-format.md) the stream needs no
 * reconstruction: a fault that missed the swap cache names its entry
 * (swt_fault, in swapin_readahead), and so does one that found its page
 * there (swt_ra_hit, in swap_update_readahead).  A swap-cache hit is a
 * readahead hit when its slot was read since the slot's previous fault;
 * otherwise reclaim had unmapped the page and not yet freed it, which is
 * no swap fault in the page-cluster 0 sense (no page was brought back),
 * and it is left out as the exact stream leaves it out.
 */
int swt_replay_probe_stream(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	/* per slot: when it was last read ahead, last faulted, and whether its own read is due */
	struct swt_map read_ahead, faulted, own_read_due;
	sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int ret, rc;

	ret = swt_map_init(&read_ahead, 1024) | swt_map_init(&faulted, 1024) |
	      swt_map_init(&own_read_due, 64);
	if (ret) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	/* probes before reads of the same instant: a probe fires before its fault's reads */
	ret = swt_store_prepare(st,
		"SELECT ts, area_id, slot, address, pid, 2 AS kind, id FROM swap_in"
		"  WHERE " SWT_NOT_SWAPOFF_SQL
		" UNION ALL SELECT ts, area_id, slot, address, pid,"
		"        CASE kind WHEN 'fault' THEN 0 ELSE 1 END, id FROM swap_probe"
		"  WHERE kind IN ('fault', 'ra_hit') AND area_id IS NOT NULL AND slot IS NOT NULL"
		"    AND " SWT_NOT_SWAPOFF_SQL
		" ORDER BY 1, 6, 7", &s, err);
	if (ret)
		goto out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t ts = (uint64_t)sqlite3_column_int64(s, 0), read_at, faulted_at;
		int area = swt_replay_area_index(in, sqlite3_column_int64(s, 1));
		uint64_t slot = (uint64_t)sqlite3_column_int64(s, 2);
		int kind = sqlite3_column_int(s, 5);	/* 0 fault, 1 swap-cache hit, 2 read */

		if (area < 0)
			continue;
		/* load_areas refused swap-ins past the limit; probes it did not read */
		if (kind != 2 && slot >= SWT_SLOT_LIMIT) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': a swap-entry probe at slot %llu: "
					"beyond what the replay handles (2^32)", swt_store_path(st),
					(unsigned long long)slot);
			goto out;
		}
		if (kind == 2) {
			/* the faulting page's own read is no readahead */
			if (!swt_map_del(&own_read_due, (uint64_t)area, slot) &&
			    swt_map_put(&read_ahead, (uint64_t)area, slot, ts))
				goto oom;
			continue;
		}
		if (kind == 1 && (!swt_map_get(&read_ahead, (uint64_t)area, slot, &read_at) ||
				  (swt_map_get(&faulted, (uint64_t)area, slot, &faulted_at) &&
				   read_at <= faulted_at)))
			continue;	/* not read ahead since its page was last mapped */
		if (swt_map_put(&faulted, (uint64_t)area, slot, ts) ||
		    (kind == 0 && swt_map_put(&own_read_due, (uint64_t)area, slot, 1)) ||
		    swt_grow((void **)&in->faults, &cap, in->nr_faults + 1, sizeof(*in->faults)))
			goto oom;
		in->faults[in->nr_faults++] = (struct swt_replay_fault){
			.ts = ts, .slot = slot, .area = (uint32_t)area,
			.vpage = (uint64_t)swt_column_int(s, 3, 0) >> in->page_shift,
			.pid = swt_replay_process_of(in, swt_column_int(s, 4, -1)),
			.vma = -1, .out = -1,
		};
	}
	if (rc != SQLITE_DONE)
		ret = swt_store_sql_error(st, err, "swap-entry probes");
	goto out;
oom:
	ret = swt_error(err, SWT_ENOMEM, "out of memory");
out:
	sqlite3_finalize(s);
	swt_map_release(&read_ahead);
	swt_map_release(&faulted);
	swt_map_release(&own_read_due);
	return ret;
}
