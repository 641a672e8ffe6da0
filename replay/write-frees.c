/*
 * Swap slots that write faults freed, found in the capture's fault events.
 *
 * A page swapped in keeps its slot while it stays clean: evicted again, it
 * is dropped without a write, and the slot still holds it.  A write frees
 * the slot (readahead-spec.md §6; mm/memory.c): do_swap_page frees the
 * swap entry of a page a write fault swaps in, and do_wp_page that of a
 * page mapped read-only when the task writes it (before 5.19; below).
 * The page then goes to
 * a new slot at its next eviction, and its old slot is free: readahead
 * skips it, and the allocator may hand it out again.
 *
 * The x86 page-fault error code (exceptions:page_fault_user and _kernel)
 * says which faults wrote: bit 1, with bit 0 set when the page was present
 * (a write-protect fault on a mapped page).  A swap-in's own fault is the
 * task's latest on the page before the read and after the write that put
 * the page in its slot (an older one, the first touch say, is not its own:
 * a swap-in the trace shows no fault for frees nothing).  Write-protect
 * faults free a slot only on kernels before 5.19: since then a page a read
 * swapped in is exclusive (PageAnonExclusive), and do_wp_page reuses it
 * without freeing its swap entry.  The trace overrules the rule where it
 * shows the kernel kept the slot: the same slot faulted again with no
 * write to it in between, or by two pages (a swap entry shared after fork,
 * which cannot be freed while another page holds it).  Shared mappings
 * (shmem) are left out: they free their slot at every swap-in, whatever
 * the fault.
 *
 * A page can also lose its slot with no write: do_swap_page frees the
 * entry of any page it swaps in while swap is over half full
 * (should_try_to_free_swap: vm_swap_full; also a memory cgroup's swap
 * limit, mlock).  The walk follows how full swap was: the pages on it when
 * the capture began (swap_area.used_kib), one more for each swap-out to a
 * slot the trace does not show holding a page, one less for each free; at
 * a swap-in while more than half the usable slots are taken, the slot is
 * freed (FREE_FULL).  That needs the areas' sizes, so a capture without
 * them gets no such frees.  The trace also shows the effect directly, on
 * each such page that faults again: it comes back from another slot,
 * written there after its swap-in (a clean page keeps its slot and comes
 * back from it; a page dirtied without a fault is written back to its own
 * slot).  Such a page's slot is taken as freed at its swap-in when nothing
 * else freed it (FREE_MOVED: swap fuller than the walk thought, or a limit
 * it cannot see), and a slot the trace shows faulted again from the same
 * write overrules any free, as above.
 */
#include <stdlib.h>

#include "replay.h"
#include "util.h"

/* what the walk learnt of a free */
#define FREE_CANCELLED 1	/* the trace shows the kernel kept the slot */
#define FREE_MOVED 2		/* found as its page back from another slot */
#define FREE_FULL 4		/* at a swap-in while swap was over half full */

/* the most pages on swap the walk counts from: room for every swap-out on top, and twice it */
#define USED_MAX (UINT64_MAX >> 2)

/* x86 page-fault error code bits */
#define PF_PRESENT 1
#define PF_WRITE 2

struct fault_event {
	uint64_t ts, vpage;
	int32_t pid;		/* the process (replay_process_of) */
	uint32_t code;
};

/* What the walk knows of a page (a process's virtual page). */
struct page_state {
	int32_t fault;		/* the latest stream fault on it, -1 none yet */
	uint32_t fault_outs_at;	/* swap-outs before that fault */
	int32_t free;		/* the free of that fault's slot, -1 none */
	int write;		/* its latest fault event wrote, and no stream fault took it yet */
	uint64_t write_ts;	/* that event's time */
};

struct walk {
	struct swt_replay_input *in;
	struct page_state *pages;
	size_t nr_pages, cap_pages;
	struct swt_map page_index;	/* (pid, vpage) -> index into pages */
	/*
	 * Per slot of every area, one after another from base[area] up to the
	 * highest slot the streams use: a slot's latest swap-out + 1 (low 32
	 * bits) and the free of its page + 1 (high); the first stream fault on
	 * it since that swap-out, + 1; whether it holds a page, as far as the
	 * trace shows.  Tables, not maps: every swap-out and stream fault
	 * looks its slot up several times, and the tables of a capture's used
	 * slots fit in a cache where maps of them did not.
	 */
	uint64_t *base;
	uint64_t *slot_state;
	uint32_t *first_fault;
	uint8_t *held;
	/* (area, slot) -> 1 + the swap-out after which two pages faulted it (shared) */
	struct swt_map shared;
	uint8_t *flags;			/* per free: FREE_CANCELLED, FREE_MOVED, FREE_FULL */
	/* pages on swap and the usable slots of every area (0: a size unknown): vm_swap_full */
	uint64_t used, usable;
	size_t cap_frees, cap_flags;
	int wp_frees;			/* write-protect faults free (kernels before 5.19) */
};

/*
 * The fault events in time order, by id on a tie.  Read in id order first,
 * which needs no sort: ingest writes them in time order, and only a
 * database written otherwise pays for SQLite's sort (in_order 0).  Room
 * is reserved for the table's rows (a bound: the query leaves some out).
 */
static int load_events_in(struct swt_store *st, struct swt_replay_input *in, int by_id, size_t rows,
			  struct fault_event **out, size_t *n, int *in_order, struct swt_err *err)
{
	size_t cap;
	sqlite3_stmt *s;
	int ret, rc;

	swt_reserve((void **)out, &cap, rows, sizeof(**out));
	*n = 0;
	*in_order = 1;
#define EVENTS_SQL "SELECT ts, pid, address, error_code FROM fault" \
		   " WHERE error_code IS NOT NULL AND pid > 0 ORDER BY "
	ret = swt_store_prepare(st, by_id ? EVENTS_SQL "id" : EVENTS_SQL "ts, id", &s, err);
#undef EVENTS_SQL
	if (ret)
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct fault_event *ev;

		if (swt_grow((void **)out, &cap, *n + 1, sizeof(**out))) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		ev = &(*out)[(*n)++];
		ev->ts = (uint64_t)sqlite3_column_int64(s, 0);
		ev->pid = swt_replay_process_of(in, sqlite3_column_int64(s, 1));
		ev->vpage = (uint64_t)sqlite3_column_int64(s, 2) >> in->page_shift;
		ev->code = (uint32_t)sqlite3_column_int64(s, 3);
		if (*n > 1 && ev->ts < ev[-1].ts)
			*in_order = 0;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(st, err, "fault events");
	return 0;
}

static int load_events(struct swt_store *st, struct swt_replay_input *in, struct fault_event **out,
		       size_t *n, struct swt_err *err)
{
	size_t bound = swt_store_table_rows(st, "fault");
	int in_order, ret = load_events_in(st, in, 1, bound, out, n, &in_order, err);

	if (ret || in_order)
		return ret;
	free(*out);
	return load_events_in(st, in, 0, bound, out, n, &in_order, err);
}

static struct page_state *page_of(struct walk *w, int32_t pid, uint64_t vpage)
{
	uint64_t k;

	if (swt_map_get(&w->page_index, (uint64_t)(uint32_t)pid, vpage, &k))
		return &w->pages[k];
	if (swt_grow((void **)&w->pages, &w->cap_pages, w->nr_pages + 1, sizeof(*w->pages)) ||
	    swt_map_put(&w->page_index, (uint64_t)(uint32_t)pid, vpage, w->nr_pages))
		return NULL;
	w->pages[w->nr_pages] = (struct page_state){ .fault = -1, .free = -1 };
	return &w->pages[w->nr_pages++];
}

/* a slot's place in the walk's slot tables */
static uint64_t slot_at(const struct walk *w, uint32_t area, uint64_t slot)
{
	return w->base[area] + slot;
}

static int shared_fault(const struct swt_replay_input *in, const struct swt_replay_fault *f)
{
	return f->vma >= 0 && in->vmas[f->vma].shared;
}

/*
 * Free the slot of stream fault fault's page, after stream fault after
 * (flags: FREE_MOVED or 0; evict_out: where the page was written, -1).
 */
static int add_free(struct walk *w, struct page_state *p, uint32_t after, int32_t fault,
		    uint32_t outs_at, uint8_t flags, int32_t evict_out)
{
	struct swt_replay_input *in = w->in;
	const struct swt_replay_fault *f = &in->faults[fault];
	uint64_t at = slot_at(w, f->area, f->slot), v, shared_out;

	/* a swap entry two pages faulted: the kernel cannot free it */
	if (swt_map_get(&w->shared, f->area, f->slot, &shared_out) &&
	    (int64_t)shared_out - 1 == f->out)
		return 0;
	if (swt_grow((void **)&in->frees, &w->cap_frees, in->nr_frees + 1, sizeof(*in->frees)) ||
	    swt_grow((void **)&w->flags, &w->cap_flags, in->nr_frees + 1, 1))
		return -1;
	in->frees[in->nr_frees] = (struct swt_replay_free){
		.after = after, .fault = (uint32_t)fault, .outs_at = outs_at, .evict_out = evict_out,
	};
	w->flags[in->nr_frees] = flags;
	if (p)
		p->free = (int32_t)in->nr_frees;
	in->nr_frees++;
	/*
	 * the slot, while it still holds that write, remembers the free: a
	 * fault on the same write overrules it (on_stream_fault); a free found
	 * after another page took the slot leaves that page's entry alone
	 */
	v = w->slot_state[at];
	if ((int64_t)(v & UINT32_MAX) - 1 != f->out)
		return 0;
	if (w->held[at] && w->used)
		w->used--;
	w->held[at] = 0;
	w->slot_state[at] = (v & UINT32_MAX) | (uint64_t)in->nr_frees << 32;
	return 0;
}

/* A swap-in while more than half of swap is taken frees its slot (should_try_to_free_swap). */
static int free_if_full(struct walk *w, struct page_state *p, uint32_t fi, uint32_t outs_at)
{
	if (!w->usable || w->used * 2 <= w->usable || (p && p->free >= 0))
		return 0;
	return add_free(w, p, fi, (int32_t)fi, outs_at, FREE_FULL, -1);
}

static int on_stream_fault(struct walk *w, uint32_t fi, uint32_t outs_at)
{
	struct swt_replay_input *in = w->in;
	const struct swt_replay_fault *f = &in->faults[fi];
	uint64_t at = slot_at(w, f->area, f->slot), v = w->slot_state[at];
	struct page_state *p;

	if (v >> 32) {
		/* the slot faults again: if with the page a write freed, the kernel had kept it */
		size_t k = (size_t)(v >> 32) - 1;

		if (in->faults[in->frees[k].fault].out == f->out) {
			w->flags[k] |= FREE_CANCELLED;
			w->used += !w->held[at];	/* held after all */
		}
		w->slot_state[at] = v & UINT32_MAX;
	}
	/* a slot faulted before the trace shows it written: on swap when the capture began */
	w->held[at] = 1;
	if (!w->first_fault[at]) {
		w->first_fault[at] = fi + 1;
	} else {
		const struct swt_replay_fault *g = &in->faults[w->first_fault[at] - 1];

		/* another page on the same swap entry: shared, never freed (below, add_free) */
		if (g->out == f->out && (g->pid != f->pid || g->vpage != f->vpage) &&
		    swt_map_put(&w->shared, f->area, f->slot, (uint64_t)((int64_t)f->out + 1)))
			return -1;
	}
	if (!f->vpage)
		return free_if_full(w, NULL, fi, outs_at);
	p = page_of(w, f->pid, f->vpage);
	if (!p)
		return -1;
	if (p->free >= 0 && !(w->flags[p->free] & FREE_CANCELLED) &&
	    in->frees[p->free].evict_out < 0 && f->out >= 0 &&
	    (uint32_t)f->out >= in->frees[p->free].outs_at)
		in->frees[p->free].evict_out = f->out;	/* where its dirty page went */
	if (p->fault >= 0 && p->free < 0 && f->out >= 0 && (uint32_t)f->out >= p->fault_outs_at) {
		const struct swt_replay_fault *prev = &in->faults[p->fault];

		/* back from another slot, written after its last swap-in: freed then */
		if ((prev->area != f->area || prev->slot != f->slot) &&
		    add_free(w, p, (uint32_t)p->fault, p->fault, p->fault_outs_at, FREE_MOVED, f->out))
			return -1;
	}
	p->fault = (int32_t)fi;
	p->fault_outs_at = outs_at;
	p->free = -1;
	/* its own fault wrote: later than the write that put the page in the slot */
	if (p->write && (f->out < 0 || p->write_ts > in->outs[f->out].ts) && !shared_fault(in, f) &&
	    add_free(w, p, fi, (int32_t)fi, outs_at, 0, -1))
		return -1;
	p->write = 0;
	return free_if_full(w, p, fi, outs_at);
}

static int on_event(struct walk *w, const struct fault_event *ev, size_t faults_done,
		    uint32_t outs_at)
{
	struct swt_replay_input *in = w->in;
	struct page_state *p = page_of(w, ev->pid, ev->vpage);
	const struct swt_replay_fault *f;

	if (!p)
		return -1;
	p->write = !!(ev->code & PF_WRITE);
	p->write_ts = ev->ts;
	if (!w->wp_frees || (ev->code & (PF_PRESENT | PF_WRITE)) != (PF_PRESENT | PF_WRITE) ||
	    p->fault < 0 || p->free >= 0)
		return 0;
	/* a write to the page mapped read-only, still the one the slot holds */
	f = &in->faults[p->fault];
	p->write = 0;
	if (shared_fault(in, f))
		return 0;
	if ((int64_t)(w->slot_state[slot_at(w, f->area, f->slot)] & UINT32_MAX) - 1 != f->out)
		return 0;
	return add_free(w, p, (uint32_t)(faults_done - 1), p->fault, outs_at, 0, -1);
}

static void on_swapout(struct walk *w, uint32_t oi)
{
	const struct swt_replay_swapout *o = &w->in->outs[oi];
	uint64_t at = slot_at(w, o->area, o->slot);

	/* a new page in the slot: no free of the old one can be overruled now */
	w->first_fault[at] = 0;
	/* one more page on swap, unless the slot held one already (written back to it) */
	w->used += !w->held[at];
	w->held[at] = 1;
	w->slot_state[at] = (uint64_t)oi + 1;
}

/*
 * How full swap was when the capture began, and how large: every area's
 * usable slots (slot 0 holds the header), and the pages on them then.  An
 * area of unknown size leaves usable at 0, and vm_swap_full unknown.
 */
static int swap_fullness(struct swt_store *st, const struct swt_replay_input *in, struct walk *w,
			 struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc;

	w->used = w->usable = 0;
	for (size_t i = 0; i < in->nr_areas; i++) {
		if (in->areas[i].slots_guessed || in->areas[i].slots < 2)
			return 0;
		w->usable += in->areas[i].slots - 1;
	}
	/* summed here, saturating: sum() in SQL fails on a damaged row's huge count */
	ret = swt_store_prepare(st, "SELECT used_kib FROM swap_area WHERE used_kib > 0", &s, err);
	if (ret)
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t pages = in->page_shift >= 10 ?
			(uint64_t)sqlite3_column_int64(s, 0) >> (in->page_shift - 10) : 0;

		w->used = pages > USED_MAX - w->used ? USED_MAX : w->used + pages;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(st, err, "swap areas");
	return 0;
}

/*
 * The slot tables, each area's as long as the highest slot its streams use,
 * as the engine's are (loading a database checked that those fit).
 */
static int slot_tables(struct walk *w, struct swt_err *err)
{
	const struct swt_replay_input *in = w->in;
	size_t na = in->nr_areas ? in->nr_areas : 1;
	uint64_t *top = calloc(na, sizeof(*top)), nr_slots = 0;
	int ret;

	w->base = malloc(na * sizeof(*w->base));
	if (!top || !w->base) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	ret = swt_replay_stream_slots(in, top, err);
	if (ret)
		goto out;
	for (size_t i = 0; i < in->nr_areas; i++) {
		w->base[i] = nr_slots;
		nr_slots += top[i];
	}
	if (!nr_slots)
		nr_slots = 1;
	w->slot_state = swt_alloc_written(nr_slots, sizeof(*w->slot_state));
	w->first_fault = swt_alloc_written(nr_slots, sizeof(*w->first_fault));
	w->held = swt_alloc_written(nr_slots, 1);
	if (!w->slot_state || !w->first_fault || !w->held)
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
out:
	free(top);
	return ret;
}

/* Replay order: by the fault they follow, then the swap-outs before them (no two free one fault). */
static int cmp_free_time(const void *a, const void *b)
{
	const struct swt_replay_free *x = a, *y = b;

	if (x->after != y->after)
		return x->after < y->after ? -1 : 1;
	if (x->outs_at != y->outs_at)
		return x->outs_at < y->outs_at ? -1 : 1;
	return (x->fault > y->fault) - (x->fault < y->fault);
}

int swt_replay_find_frees(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	struct fault_event *evs = NULL;
	struct walk w = { .in = in };
	size_t nev = 0, ei = 0, fi = 0, oi = 0, kept = 0;
	int ret;

	in->frees = NULL;
	in->nr_frees = 0;
	in->nr_frees_moved = 0;
	in->nr_frees_full = 0;
	if (!in->nr_faults)
		return 0;
	ret = load_events(st, in, &evs, &nev, err);
	if (ret)
		goto out;
	ret = swap_fullness(st, in, &w, err);
	if (ret || (!nev && !w.usable))
		goto out;
	{
		unsigned long major, minor;

		w.wp_frees = !swt_kernel_release_parse(in->kernel, &major, &minor) &&
			     (major < 5 || (major == 5 && minor < 19));
	}
	ret = slot_tables(&w, err);
	if (ret)
		goto out;
	/* at most a page per event and stream fault */
	swt_reserve((void **)&w.pages, &w.cap_pages, nev + in->nr_faults, sizeof(*w.pages));
	if (swt_map_init(&w.page_index, in->nr_faults / 2 + 16) || swt_map_init(&w.shared, 16)) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	/*
	 * Time order; a fault event before the read it led to, a swap-out before
	 * either.  Events after the last stream fault still count: write-protect
	 * faults free slots then too.
	 */
	while (fi < in->nr_faults || ei < nev) {
		uint64_t next = fi < in->nr_faults ? in->faults[fi].ts : UINT64_MAX;
		int r = 0;

		if (ei < nev && evs[ei].ts < next)
			next = evs[ei].ts;
		if (oi < in->nr_outs && in->outs[oi].ts <= next) {
			on_swapout(&w, (uint32_t)oi);
			oi++;
		} else if (ei < nev && (fi == in->nr_faults || evs[ei].ts <= in->faults[fi].ts)) {
			r = on_event(&w, &evs[ei], fi, (uint32_t)oi);
			ei++;
		} else {
			r = on_stream_fault(&w, (uint32_t)fi, (uint32_t)oi);
			fi++;
		}
		if (r) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t k = 0; k < in->nr_frees; k++) {
		if (w.flags[k] & FREE_CANCELLED)
			continue;
		in->nr_frees_moved += !!(w.flags[k] & FREE_MOVED);
		in->nr_frees_full += !!(w.flags[k] & FREE_FULL);
		in->frees[kept++] = in->frees[k];
	}
	in->nr_frees = kept;
	/* a page back from another slot is found at that fault, after frees of later faults */
	if ((in->nr_frees_moved || in->nr_frees_full) && in->nr_frees > 1)
		qsort(in->frees, in->nr_frees, sizeof(*in->frees), cmp_free_time);
out:
	if (ret) {
		free(in->frees);
		in->frees = NULL;
		in->nr_frees = 0;
		in->nr_frees_moved = 0;
		in->nr_frees_full = 0;
	}
	free(evs);
	free(w.pages);
	free(w.flags);
	free(w.base);
	free(w.slot_state);
	free(w.first_fault);
	free(w.held);
	swt_map_release(&w.page_index);
	swt_map_release(&w.shared);
	return ret;
}
