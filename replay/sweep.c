/*
 * The default sweep: the replay runs a report draws when the user stored
 * none — the kernel's policies, no readahead and the oracle over
 * page-cluster 0..8 on the traced layout, and a few of them at other
 * memory sizes (how much the answer depends on the model's memory), stored
 * in one transaction (the caller's when it holds one).
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "replay.h"

static const char *const default_policies[] = { "none", "fixed", "adaptive", "vma", "auto",
						 "oracle" };

#define DEFAULT_MAX_PAGE_CLUSTER 8

/*
 * Replayed again at these shares of the default memory, at the traced
 * page-cluster (3 when it was 0): the policy the kernel ran, the full
 * window and the bound.
 */
static const char *const memory_policies[] = { "auto", "fixed", "oracle" };
static const unsigned memory_percents[] = { 50, 75, 125, 150 };

/* One run of the default set, stored. */
static int sweep_run(struct swt_store *st, const struct swt_replay_input *in, const char *policy,
		     unsigned pc, uint64_t cache_pages, struct swt_err *err)
{
	struct swt_replay_config cfg = {
		.policy = swt_policy_find(policy),
		.policy_spec = policy,
		.page_cluster = pc,
		.cache_pages = cache_pages,
		.max_request_pages =
			(unsigned)(((uint64_t)SWT_REPLAY_DEFAULT_MAX_REQUEST_KIB * 1024) >> in->page_shift),
		.layout_name = "traced",
	};
	struct swt_replay_result *res = NULL;
	int64_t run_id;
	int ret;

	ret = swt_replay_run(in, &cfg, &res, err);
	if (!ret)
		ret = swt_replay_store(st, in, &cfg, res, &run_id, err);
	swt_replay_result_free(res);
	return ret;
}

int swt_replay_default_sweep(struct swt_store *st, size_t *nr_runs, struct swt_err *err)
{
	const size_t nr_policies = sizeof(default_policies) / sizeof(default_policies[0]);
	struct swt_replay_input *in = NULL;
	int in_transaction = 0, ret;
	unsigned memory_pc;
	int64_t cache_pages;

	*nr_runs = 0;
	/* a report of a readahead capture still wants charts: approximate it */
	ret = swt_replay_input_load(st, 1, &in, err);
	if (ret)
		goto out;
	if (!in->nr_faults) {
		ret = swt_error(err, SWT_EUSAGE, "'%s': no swap-in faults: nothing to replay",
				swt_store_path(st));
		goto out;
	}
	cache_pages = swt_replay_default_cache_pages(in);
	if (cache_pages <= 0) {
		ret = swt_error(err, SWT_EUSAGE,
				"'%s': the capture records no memory limit or working set (of a page or "
				"more) to replay "
				"against; run swaptrace replay --cache-pages first",
				swt_store_path(st));
		goto out;
	}
	/*
	 * One transaction of its own, or the caller's when one is open (the
	 * report's, committed only once its charts are written).
	 */
	if (sqlite3_get_autocommit(swt_store_db(st))) {
		ret = swt_store_exec(st, "BEGIN IMMEDIATE", err);
		if (ret)
			goto out;
		in_transaction = 1;
	}
	for (size_t p = 0; p < nr_policies; p++) {
		for (unsigned pc = 0; pc <= DEFAULT_MAX_PAGE_CLUSTER; pc++) {
			ret = sweep_run(st, in, default_policies[p], pc, (uint64_t)cache_pages, err);
			if (ret)
				goto out;
			(*nr_runs)++;
		}
	}
	memory_pc = in->traced_page_cluster > 0 && in->traced_page_cluster <= DEFAULT_MAX_PAGE_CLUSTER
			    ? (unsigned)in->traced_page_cluster : 3;
	for (size_t p = 0; p < sizeof(memory_policies) / sizeof(memory_policies[0]); p++) {
		for (size_t m = 0; m < sizeof(memory_percents) / sizeof(memory_percents[0]); m++) {
			uint64_t pages = ((uint64_t)cache_pages * memory_percents[m] + 50) / 100;

			ret = sweep_run(st, in, memory_policies[p], memory_pc, pages ? pages : 1, err);
			if (ret)
				goto out;
			(*nr_runs)++;
		}
	}
	if (in_transaction) {
		ret = swt_store_exec(st, "COMMIT", err);
		if (!ret)
			in_transaction = 0;
	}
out:
	if (in_transaction)
		sqlite3_exec(swt_store_db(st), "ROLLBACK", NULL, NULL, NULL);
	if (ret)
		*nr_runs = 0;
	swt_replay_input_free(in);
	return ret;
}
