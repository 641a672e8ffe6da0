/*
 * Policy "auto": what the traced kernel would have done.  Synchronous
 * devices (zram, pmem, brd) skip the swap cache and readahead entirely;
 * otherwise VMA readahead when vma_ra_enabled was set and no swap area is
 * rotational, else the adaptive cluster readahead (readahead-spec.md §1).
 * Shared memory (shmem) always takes the cluster path, as in the kernel.
 */
#include <stdlib.h>

#include "replay.h"

struct auto_state {
	struct swt_swapin_window cluster;
	struct swt_vma_ra *vma;
};

static void *auto_create(const struct swt_policy_env *env, const char *const *keys,
			 const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	struct auto_state *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	swt_swapin_window_init(&a->cluster);
	a->vma = swt_vma_ra_alloc();
	if (!a->vma) {
		free(a);
		return NULL;
	}
	return a;
}

static void auto_destroy(void *inst)
{
	struct auto_state *a = inst;

	swt_vma_ra_free(a->vma);
	free(a);
}

static int auto_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	struct auto_state *a = inst;
	unsigned max = 1u << f->page_cluster;

	if (swt_auto_takes_vma_ra(f->flags))
		return swt_vma_ra_window(a->vma, f, win);
	if (f->flags & SWT_FAULT_SYNCHRONOUS) {
		win->kind = SWT_WINDOW_SLOTS;
		win->size = 1;
		win->count = 1;
		win->list[0] = f->slot;
		return 0;
	}
	swt_cluster_window(f, max > 1 ? swt_swapin_window_pages(&a->cluster, f->slot, max) : 1, win);
	return 0;
}

static void auto_on_hit(void *inst, const struct swt_fault_info *f)
{
	struct auto_state *a = inst;

	if (swt_flags_use_vma_ra(f->flags))
		swt_vma_ra_hit(a->vma, f);
	else
		a->cluster.hits++;
}

/*
 * The engine's fast paths (replay.h): the windows as blocks (the VMA ones
 * with the whole fault info, which the engine fills at misses when any
 * fault may take them), cluster hits; and the VMA state, from which the
 * engine places the windows of the faults it takes VMA readahead for
 * (swt_auto_takes_vma_ra) and notes their hits, itself.
 */
static int auto_block_miss(void *inst, const struct swt_fault_info *f, uint32_t capacity,
			   struct swt_window_block *b)
{
	struct auto_state *a = inst;
	unsigned max = 1u << f->page_cluster;

	if (swt_auto_takes_vma_ra(f->flags)) {
		int ret = swt_vma_ra_block(a->vma, f, capacity, b);

		return ret ? ret : 1;
	}
	if (f->flags & SWT_FAULT_SYNCHRONOUS) {
		swt_cluster_window_block(f, 1, capacity, b);
		return 1;
	}
	swt_cluster_window_block(f, max > 1 ? swt_swapin_window_pages(&a->cluster, f->slot, max) : 1,
				 capacity, b);
	return 1;
}

static int auto_quick_hit(void *inst, const struct swt_fault_info *f)
{
	struct auto_state *a = inst;

	if (swt_flags_use_vma_ra(f->flags))
		return 0;
	a->cluster.hits++;
	return 1;
}

const struct swt_policy swt_policy_auto = {
	.abi_version = SWT_POLICY_ABI,
	.name = "auto",
	.summary = "what the traced kernel uses: vma or adaptive by vma_ra_enabled and rotational "
		   "devices; synchronous devices bypass readahead; shared memory by cluster",
	.create = auto_create,
	.destroy = auto_destroy,
	.on_miss = auto_on_miss,
	.on_hit = auto_on_hit,
};

static struct swt_vma_ra *auto_vma_ra(void *inst)
{
	return ((struct auto_state *)inst)->vma;
}

const struct swt_policy_fast swt_fast_auto = {
	.policy = &swt_policy_auto,
	.full_info = SWT_FAST_FULL_INFO_VMA,
	.block_miss = auto_block_miss,
	.quick_hit = auto_quick_hit,
	.auto_vma_ra = auto_vma_ra,
};
