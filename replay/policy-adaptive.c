/*
 * Policy "adaptive": the kernel's cluster readahead from 3.14 to 6.18.  The
 * window comes from swapin_nr_pages' hit detector -- global state shared by
 * every process and device -- and is the aligned block around the faulting
 * slot (readahead-spec.md §2, §3).
 */
#include <stdlib.h>

#include "replay.h"

static void *adaptive_create(const struct swt_policy_env *env, const char *const *keys,
			     const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	struct swt_swapin_window *w = malloc(sizeof(*w));

	if (w)
		swt_swapin_window_init(w);
	return w;
}

static void adaptive_destroy(void *inst)
{
	free(inst);
}

static int adaptive_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	unsigned max = 1u << f->page_cluster;

	/* page-cluster 0: the detector is not consulted at all */
	swt_cluster_window(f, max > 1 ? swt_swapin_window_pages(inst, f->slot, max) : 1, win);
	return 0;
}

static void adaptive_on_hit(void *inst, const struct swt_fault_info *f)
{
	struct swt_swapin_window *w = inst;

	w->hits++;
}

/* The engine's fast paths (replay.h): the same window as a block; hits need no fault info. */
static int adaptive_block_miss(void *inst, const struct swt_fault_info *f, uint32_t capacity,
			       struct swt_window_block *b)
{
	unsigned max = 1u << f->page_cluster;

	swt_cluster_window_block(f, max > 1 ? swt_swapin_window_pages(inst, f->slot, max) : 1,
				 capacity, b);
	return 1;
}

static int adaptive_quick_hit(void *inst, const struct swt_fault_info *f)
{
	adaptive_on_hit(inst, f);
	return 1;
}

const struct swt_policy swt_policy_adaptive = {
	.abi_version = SWT_POLICY_ABI,
	.name = "adaptive",
	.summary = "3.14-6.18 cluster readahead: aligned window sized by the swapin_nr_pages hit detector",
	.create = adaptive_create,
	.destroy = adaptive_destroy,
	.on_miss = adaptive_on_miss,
	.on_hit = adaptive_on_hit,
};

const struct swt_policy_fast swt_fast_adaptive = {
	.policy = &swt_policy_adaptive,
	.block_miss = adaptive_block_miss,
	.quick_hit = adaptive_quick_hit,
};
