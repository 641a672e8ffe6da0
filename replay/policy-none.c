/*
 * Policy "none": no readahead, as with page-cluster 0.  Every fault reads
 * its own page only.
 */
#include "replay.h"

static void *none_create(const struct swt_policy_env *env, const char *const *keys,
			 const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	static int instance;

	return &instance;
}

static void none_destroy(void *inst)
{
}

static int none_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	win->kind = SWT_WINDOW_SLOTS;
	win->size = 1;
	win->count = 1;
	win->list[0] = f->slot;
	return 0;
}

/* The engine's fast path (replay.h): the faulting slot alone. */
static int none_block_miss(void *inst, const struct swt_fault_info *f, uint32_t capacity,
			   struct swt_window_block *b)
{
	swt_cluster_window_block(f, 1, capacity, b);
	return 1;
}

const struct swt_policy swt_policy_none = {
	.abi_version = SWT_POLICY_ABI,
	.name = "none",
	.summary = "no readahead (page-cluster 0): read the faulting page only",
	.create = none_create,
	.destroy = none_destroy,
	.on_miss = none_on_miss,
};

const struct swt_policy_fast swt_fast_none = {
	.policy = &swt_policy_none,
	.block_miss = none_block_miss,
};
