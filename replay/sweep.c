/*
 * The default sweep: the replay runs a report draws when the user stored
 * none — the kernel's policies, no readahead and the oracle over
 * page-cluster 0..8 on the traced layout, stored in one transaction (the
 * caller's when it holds one).
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "replay.h"

static const char *const default_policies[] = { "none", "fixed", "adaptive", "vma", "auto",
						 "oracle" };

#define DEFAULT_MAX_PAGE_CLUSTER 8

int swt_replay_default_sweep(struct swt_store *st, size_t *nr_runs, struct swt_err *err)
{
	const size_t nr_policies = sizeof(default_policies) / sizeof(default_policies[0]);
	struct swt_replay_input *in = NULL;
	struct swt_replay_result *res = NULL;
	int in_transaction = 0, ret;
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
				"'%s': the capture records no memory limit or working set to replay "
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
			struct swt_replay_config cfg = {
				.policy = swt_policy_find(default_policies[p]),
				.policy_spec = default_policies[p],
				.page_cluster = pc,
				.cache_pages = (uint64_t)cache_pages,
				.max_request_pages =
					(unsigned)(((uint64_t)SWT_REPLAY_DEFAULT_MAX_REQUEST_KIB * 1024) >> in->page_shift),
				.layout_name = "traced",
			};
			int64_t run_id;

			ret = swt_replay_run(in, &cfg, &res, err);
			if (!ret)
				ret = swt_replay_store(st, in, &cfg, res, &run_id, err);
			swt_replay_result_free(res);
			res = NULL;
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
