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
 */
#include <stdlib.h>

#include "replay.h"
#include "util.h"

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
	int32_t free;		/* the free of that fault's slot, -1 none */
	int write;		/* its latest fault event wrote, and no stream fault took it yet */
	uint64_t write_ts;	/* that event's time */
};

struct walk {
	struct swt_replay_input *in;
	struct page_state *pages;
	size_t nr_pages, cap_pages;
	struct swt_map page_index;	/* (pid, vpage) -> index into pages */
	/* (area, slot) -> latest swap-out + 1 (low 32 bits), free of its page + 1 (high) */
	struct swt_map slots;
	/* (area, slot) -> the first stream fault on it since its latest swap-out, + 1 */
	struct swt_map first_fault;
	/* (area, slot) -> 1 + the swap-out after which two pages faulted it (shared) */
	struct swt_map shared;
	uint8_t *cancelled;		/* per free */
	size_t cap_frees, cap_cancelled;
	int wp_frees;			/* write-protect faults free (kernels before 5.19) */
};

static int load_events(struct swt_store *st, struct swt_replay_input *in, struct fault_event **out,
		       size_t *n, struct swt_err *err)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int ret, rc;

	*out = NULL;
	*n = 0;
	ret = swt_store_prepare(st, "SELECT ts, pid, address, error_code FROM fault"
				" WHERE error_code IS NOT NULL AND pid > 0 ORDER BY ts, id", &s, err);
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
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(st, err, "fault events");
	return 0;
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

static int shared_fault(const struct swt_replay_input *in, const struct swt_replay_fault *f)
{
	return f->vma >= 0 && in->vmas[f->vma].shared;
}

/* Free the slot of stream fault fault's page, after stream fault after. */
static int add_free(struct walk *w, struct page_state *p, uint32_t after, int32_t fault,
		    uint32_t outs_at)
{
	struct swt_replay_input *in = w->in;
	const struct swt_replay_fault *f = &in->faults[fault];
	uint64_t v = 0, shared_out;

	/* a swap entry two pages faulted: the kernel cannot free it */
	if (swt_map_get(&w->shared, f->area, f->slot, &shared_out) &&
	    (int64_t)shared_out - 1 == f->out)
		return 0;
	if (swt_grow((void **)&in->frees, &w->cap_frees, in->nr_frees + 1, sizeof(*in->frees)) ||
	    swt_grow((void **)&w->cancelled, &w->cap_cancelled, in->nr_frees + 1, 1))
		return -1;
	in->frees[in->nr_frees] = (struct swt_replay_free){
		.after = after, .fault = (uint32_t)fault, .outs_at = outs_at, .evict_out = -1,
	};
	w->cancelled[in->nr_frees] = 0;
	p->free = (int32_t)in->nr_frees;
	swt_map_get(&w->slots, f->area, f->slot, &v);
	v = (v & UINT32_MAX) | (uint64_t)(in->nr_frees + 1) << 32;
	in->nr_frees++;
	return swt_map_put(&w->slots, f->area, f->slot, v) ? -1 : 0;
}

static int on_stream_fault(struct walk *w, uint32_t fi, uint32_t outs_at)
{
	struct swt_replay_input *in = w->in;
	const struct swt_replay_fault *f = &in->faults[fi];
	struct page_state *p;
	uint64_t v = 0, first;

	swt_map_get(&w->slots, f->area, f->slot, &v);
	if (v >> 32) {
		/* the slot faults again: if with the page a write freed, the kernel had kept it */
		size_t k = (size_t)(v >> 32) - 1;

		if (in->faults[in->frees[k].fault].out == f->out)
			w->cancelled[k] = 1;
		if (swt_map_put(&w->slots, f->area, f->slot, v & UINT32_MAX))
			return -1;
	}
	if (!swt_map_get(&w->first_fault, f->area, f->slot, &first)) {
		if (swt_map_put(&w->first_fault, f->area, f->slot, (uint64_t)fi + 1))
			return -1;
	} else {
		const struct swt_replay_fault *g = &in->faults[first - 1];

		/* another page on the same swap entry: shared, never freed (below, add_free) */
		if (g->out == f->out && (g->pid != f->pid || g->vpage != f->vpage) &&
		    swt_map_put(&w->shared, f->area, f->slot, (uint64_t)((int64_t)f->out + 1)))
			return -1;
	}
	if (!f->vpage)
		return 0;
	p = page_of(w, f->pid, f->vpage);
	if (!p)
		return -1;
	if (p->free >= 0 && !w->cancelled[p->free] && in->frees[p->free].evict_out < 0 &&
	    f->out >= 0 && (uint32_t)f->out >= in->frees[p->free].outs_at)
		in->frees[p->free].evict_out = f->out;	/* where its dirty page went */
	p->fault = (int32_t)fi;
	p->free = -1;
	/* its own fault wrote: later than the write that put the page in the slot */
	if (p->write && (f->out < 0 || p->write_ts > in->outs[f->out].ts) && !shared_fault(in, f) &&
	    add_free(w, p, fi, (int32_t)fi, outs_at))
		return -1;
	p->write = 0;
	return 0;
}

static int on_event(struct walk *w, const struct fault_event *ev, size_t faults_done,
		    uint32_t outs_at)
{
	struct swt_replay_input *in = w->in;
	struct page_state *p = page_of(w, ev->pid, ev->vpage);
	const struct swt_replay_fault *f;
	uint64_t v = 0;

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
	swt_map_get(&w->slots, f->area, f->slot, &v);
	if ((int64_t)(v & UINT32_MAX) - 1 != f->out)
		return 0;
	return add_free(w, p, (uint32_t)(faults_done - 1), p->fault, outs_at);
}

static int on_swapout(struct walk *w, uint32_t oi)
{
	const struct swt_replay_swapout *o = &w->in->outs[oi];

	/* a new page in the slot: no free of the old one can be overruled now */
	swt_map_del(&w->first_fault, o->area, o->slot);
	return swt_map_put(&w->slots, o->area, o->slot, (uint64_t)oi + 1) ? -1 : 0;
}

int swt_replay_find_frees(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	struct fault_event *evs = NULL;
	struct walk w = { .in = in };
	size_t nev = 0, ei = 0, fi = 0, oi = 0, kept = 0;
	int ret;

	in->frees = NULL;
	in->nr_frees = 0;
	if (!in->nr_faults)
		return 0;
	ret = load_events(st, in, &evs, &nev, err);
	if (ret || !nev)
		goto out;
	{
		unsigned long major, minor;

		w.wp_frees = !swt_kernel_release_parse(in->kernel, &major, &minor) &&
			     (major < 5 || (major == 5 && minor < 19));
	}
	if (swt_map_init(&w.page_index, nev / 2 + 16) || swt_map_init(&w.slots, in->nr_outs / 2 + 16) ||
	    swt_map_init(&w.first_fault, in->nr_faults / 2 + 16) || swt_map_init(&w.shared, 16)) {
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
		int r;

		if (ei < nev && evs[ei].ts < next)
			next = evs[ei].ts;
		if (oi < in->nr_outs && in->outs[oi].ts <= next) {
			r = on_swapout(&w, (uint32_t)oi);
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
	for (size_t k = 0; k < in->nr_frees; k++)
		if (!w.cancelled[k])
			in->frees[kept++] = in->frees[k];
	in->nr_frees = kept;
out:
	if (ret) {
		free(in->frees);
		in->frees = NULL;
		in->nr_frees = 0;
	}
	free(evs);
	free(w.pages);
	free(w.cancelled);
	swt_map_release(&w.page_index);
	swt_map_release(&w.slots);
	swt_map_release(&w.first_fault);
	swt_map_release(&w.shared);
	return ret;
}
