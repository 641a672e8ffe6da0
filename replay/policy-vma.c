/*
 * Policy "vma": VMA-based swap readahead (kernel 4.14+, readahead-spec.md
 * §4).  Per-VMA state -- previous fault address, previous window, hits --
 * sizes a window of virtual pages that follows the direction of the
 * faults, clipped to the VMA and to the 2 MiB region around the fault.
 *
 * What a trace cannot show: page-table entries of pages the trace never
 * saw faulted.  The engine resolves a virtual page to its swap slot only
 * from faults (past or future) on that page; neighbours that were never
 * faulted are not read, where the kernel would read them (and likely
 * waste them).  VMA bounds come from the capture's memory maps, or are
 * inferred from fault addresses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

struct vma_state {
	uint64_t prev;		/* previous fault's virtual page */
	unsigned win;		/* previous window */
	unsigned hits;		/* since the last miss, 0..63 */
};

struct swt_vma_ra {
	struct swt_map index;	/* (pid, vma_start) -> states[] */
	struct vma_state *states;
	size_t nr, cap;
	/* the latest lookup: faults come in runs on one VMA, so most skip the hash */
	int32_t last_pid;
	uint64_t last_start;
	size_t last_idx;	/* SIZE_MAX: none yet */
};

struct swt_vma_ra *swt_vma_ra_alloc(void)
{
	struct swt_vma_ra *v = calloc(1, sizeof(*v));

	if (v && swt_map_init(&v->index, 16)) {
		free(v);
		v = NULL;
	}
	if (v)
		v->last_idx = SIZE_MAX;
	return v;
}

void swt_vma_ra_free(struct swt_vma_ra *v)
{
	if (!v)
		return;
	swt_map_release(&v->index);
	free(v->states);
	free(v);
}

/* A VMA's state, made on its first fault; NULL when out of memory. */
static struct vma_state *vma_state_lookup(struct swt_vma_ra *v, const struct swt_fault_info *f)
{
	uint64_t idx;

	if (!swt_map_get(&v->index, (uint64_t)(uint32_t)f->pid, f->vma_start, &idx)) {
		if (swt_grow((void **)&v->states, &v->cap, v->nr + 1, sizeof(*v->states)) ||
		    swt_map_put(&v->index, (uint64_t)(uint32_t)f->pid, f->vma_start, v->nr))
			return NULL;
		/* a fresh VMA reads as four hits: its first miss gets a full window */
		v->states[v->nr].hits = 4;
		idx = v->nr++;
	}
	v->last_pid = f->pid;
	v->last_start = f->vma_start;
	v->last_idx = idx;
	return &v->states[idx];
}

static inline struct vma_state *vma_state(struct swt_vma_ra *v, const struct swt_fault_info *f)
{
	if (v->last_idx != SIZE_MAX && v->last_pid == f->pid && v->last_start == f->vma_start)
		return &v->states[v->last_idx];
	return vma_state_lookup(v, f);
}

/*
 * The window of a fault as the block of virtual pages [b->first,
 * b->first + b->count) it lists into a window of this capacity: 0, or
 * -SWT_ENOMEM.
 */
int swt_vma_ra_block(struct swt_vma_ra *v, const struct swt_fault_info *f, uint32_t capacity,
		     struct swt_window_block *b)
{
	unsigned pc = f->page_cluster < 5 ? f->page_cluster : 5, max = 1u << pc, h, pages;
	uint64_t vp = f->vpage, start, end, lo, hi, pmd_pages, prev;
	struct vma_state *s;

	b->kind = SWT_WINDOW_VPAGES;
	b->first = vp;
	b->count = 1;
	b->size = 1;
	if (max == 1)
		return 0;	/* no readahead: the state is left alone */
	s = vma_state(v, f);
	if (!s)
		return -SWT_ENOMEM;
	h = s->hits;
	prev = s->prev;
	pages = swt_ra_window_size(h, vp == prev + 1 || vp + 1 == prev, max, s->win);
	s->prev = vp;
	s->win = pages;
	s->hits = 0;
	b->size = pages;
	if (pages == 1)
		return 0;
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
	pmd_pages = (uint64_t)1 << (21 - f->page_shift);
	lo = vp & ~(pmd_pages - 1);
	hi = lo + pmd_pages;
	if (f->vma_end > f->vma_start) {
		if (lo < f->vma_start)
			lo = f->vma_start;
		if (hi > f->vma_end)
			hi = f->vma_end;
	}
	if (start < lo)
		start = lo;
	if (end > hi)
		end = hi;
	b->first = start;
	b->count = 0;
	if (end > start)
		b->count = end - start > capacity ? capacity : (uint32_t)(end - start);
	return 0;
}

int swt_vma_ra_window(struct swt_vma_ra *v, const struct swt_fault_info *f, struct swt_window *win)
{
	struct swt_window_block b;
	int ret = swt_vma_ra_block(v, f, win->capacity, &b);

	win->kind = SWT_WINDOW_VPAGES;
	win->count = 0;
	win->size = 1;
	if (ret)
		return ret;
	win->size = b.size;
	for (uint32_t i = 0; i < b.count; i++)
		win->list[i] = b.first + i;
	win->count = b.count;
	return 0;
}

void swt_vma_ra_hit(struct swt_vma_ra *v, const struct swt_fault_info *f)
{
	struct vma_state *s = vma_state(v, f);

	if (!s)
		return;
	s->prev = f->vpage;
	if (s->hits < 63)
		s->hits++;
}

static void *vma_create(const struct swt_policy_env *env, const char *const *keys,
			const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	return swt_vma_ra_alloc();
}

static void vma_destroy(void *inst)
{
	swt_vma_ra_free(inst);
}

static int vma_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	if (!(f->flags & SWT_FAULT_VPAGE_KNOWN)) {
		/* no fault address: nothing to place a window around */
		win->kind = SWT_WINDOW_SLOTS;
		win->size = 1;
		win->count = 1;
		win->list[0] = f->slot;
		return 0;
	}
	return swt_vma_ra_window(inst, f, win);
}

static void vma_on_hit(void *inst, const struct swt_fault_info *f)
{
	if (f->flags & SWT_FAULT_VPAGE_KNOWN)
		swt_vma_ra_hit(inst, f);
}

/* The engine's fast path (replay.h): the same window as a block. */
static int vma_block_miss(void *inst, const struct swt_fault_info *f, uint32_t capacity,
			  struct swt_window_block *b)
{
	int ret;

	if (!(f->flags & SWT_FAULT_VPAGE_KNOWN)) {
		swt_cluster_window_block(f, 1, capacity, b);	/* the faulting slot alone */
		return 1;
	}
	ret = swt_vma_ra_block(inst, f, capacity, b);
	return ret ? ret : 1;
}

const struct swt_policy swt_policy_vma = {
	.abi_version = SWT_POLICY_ABI,
	.name = "vma",
	.summary = "4.14+ VMA readahead: per-VMA window of virtual pages following the fault direction",
	.create = vma_create,
	.destroy = vma_destroy,
	.on_miss = vma_on_miss,
	.on_hit = vma_on_hit,
};

const struct swt_policy_fast swt_fast_vma = {
	.policy = &swt_policy_vma,
	.full_info = SWT_FAST_FULL_INFO,
	.block_miss = vma_block_miss,
};
