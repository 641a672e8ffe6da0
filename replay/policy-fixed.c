/*
 * Policy "fixed": the kernel before 3.14 -- the full aligned window of
 * 1 << page_cluster slots on every miss, whatever happened before.
 */
#include "replay.h"

static void *fixed_create(const struct swt_policy_env *env, const char *const *keys,
			  const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	static int instance;

	return &instance;
}

static void fixed_destroy(void *inst)
{
}

static int fixed_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	swt_cluster_window(f, 1u << f->page_cluster, win);
	return 0;
}

/* The engine's fast path (replay.h): the same window as a block. */
static int fixed_block_miss(void *inst, const struct swt_fault_info *f, uint32_t capacity,
			    struct swt_window_block *b)
{
	swt_cluster_window_block(f, 1u << f->page_cluster, capacity, b);
	return 1;
}

const struct swt_policy swt_policy_fixed = {
	.abi_version = SWT_POLICY_ABI,
	.name = "fixed",
	.summary = "pre-3.14 cluster readahead: the full aligned 1 << page-cluster window on every miss",
	.create = fixed_create,
	.destroy = fixed_destroy,
	.on_miss = fixed_on_miss,
};

const struct swt_policy_fast swt_fast_fixed = {
	.policy = &swt_policy_fixed,
	.block_miss = fixed_block_miss,
};
