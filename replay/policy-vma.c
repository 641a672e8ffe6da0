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

struct swt_vma_ra_state *swt_vma_ra_lookup(struct swt_vma_ra *v, int32_t pid, uint64_t vma_start)
{
	uint64_t idx;

	if (!swt_map_get(&v->index, (uint64_t)(uint32_t)pid, vma_start, &idx)) {
		if (swt_grow((void **)&v->states, &v->cap, v->nr + 1, sizeof(*v->states)) ||
		    swt_map_put(&v->index, (uint64_t)(uint32_t)pid, vma_start, v->nr))
			return NULL;
		/* a fresh VMA reads as four hits: its first miss gets a full window */
		v->states[v->nr].hits = 4;
		idx = v->nr++;
	}
	v->last_pid = pid;
	v->last_start = vma_start;
	v->last_idx = idx;
	return &v->states[idx];
}

/*
 * The window of a fault as the block of virtual pages [b->first,
 * b->first + b->count) it lists into a window of this capacity: 0, or
 * -SWT_ENOMEM.
 */
int swt_vma_ra_block(struct swt_vma_ra *v, const struct swt_fault_info *f, uint32_t capacity,
		     struct swt_window_block *b)
{
	unsigned pc = f->page_cluster < 5 ? f->page_cluster : 5;
	struct swt_vma_ra_state *s;

	b->kind = SWT_WINDOW_VPAGES;
	b->first = f->vpage;
	b->count = 1;
	b->size = 1;
	if (pc == 0)
		return 0;	/* no readahead: the state is left alone */
	s = swt_vma_ra_state_of(v, f->pid, f->vma_start);
	if (!s)
		return -SWT_ENOMEM;
	swt_vma_ra_place(s, f->vpage, 1u << pc, f->vma_start, f->vma_end, f->page_shift, capacity, b);
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
	struct swt_vma_ra_state *s = swt_vma_ra_state_of(v, f->pid, f->vma_start);

	if (s)
		swt_vma_ra_note_hit(s, f->vpage);
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

const struct swt_policy swt_policy_vma = {
	.abi_version = SWT_POLICY_ABI,
	.name = "vma",
	.summary = "4.14+ VMA readahead: per-VMA window of virtual pages following the fault direction",
	.create = vma_create,
	.destroy = vma_destroy,
	.on_miss = vma_on_miss,
	.on_hit = vma_on_hit,
};

/* The engine's fast path (replay.h): it places the windows itself, from the state. */
static struct swt_vma_ra *vma_ra_of(void *inst)
{
	return inst;
}

const struct swt_policy_fast swt_fast_vma = {
	.policy = &swt_policy_vma,
	.full_info = SWT_FAST_FULL_INFO,
	.vma_ra = vma_ra_of,
};
