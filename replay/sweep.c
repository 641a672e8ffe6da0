/*
 * The default sweep: the replay runs a report draws when the user stored
 * none — the kernel's policies, no readahead and the oracle over
 * page-cluster 0..8 on the traced layout, and a few of them at other
 * memory sizes (how much the answer depends on the model's memory).  The
 * runs are computed first, each spilled to a temporary file as it ends,
 * and stored only then, in a transaction left open for the caller.
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

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

#define NR_DEFAULT_RUNS                                                                    \
	(SWT_ARRAY_SIZE(default_policies) * (DEFAULT_MAX_PAGE_CLUSTER + 1) +              \
	 SWT_ARRAY_SIZE(memory_policies) * SWT_ARRAY_SIZE(memory_percents))

/*
 * The built-ins the set replays, each chosen as replay chooses `-p NAME`:
 * with its parameters' defaults filled in, stored with the run as replay
 * stores them (the run table's params hold them, given or default), so
 * that `replay -p oracle` finds the set's oracle run stored already.
 */
struct sweep_policies {
	struct swt_policy_choice choice[SWT_ARRAY_SIZE(default_policies) +
					SWT_ARRAY_SIZE(memory_policies)];
	size_t n;
};

static const struct swt_policy_choice *sweep_policy(struct sweep_policies *sp, const char *name)
{
	for (size_t i = 0; i < sp->n; i++)
		if (!strcmp(sp->choice[i].spec, name))
			return &sp->choice[i];
	return NULL;
}

static void sweep_policies_release(struct sweep_policies *sp)
{
	for (size_t i = 0; i < sp->n; i++)
		swt_policy_choice_release(&sp->choice[i]);
	sp->n = 0;
}

static int choose_sweep_policies(struct sweep_policies *sp, struct swt_err *err)
{
	const char *const *lists[] = { default_policies, memory_policies };
	size_t sizes[] = { SWT_ARRAY_SIZE(default_policies), SWT_ARRAY_SIZE(memory_policies) };

	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < sizes[l]; i++) {
			int ret;

			if (sweep_policy(sp, lists[l][i]))
				continue;
			ret = swt_policy_choose(lists[l][i], &sp->choice[sp->n], err);
			if (ret)
				return ret;
			sp->n++;
		}
	return 0;
}

static struct swt_replay_config default_config(const struct swt_replay_input *in,
					       const struct swt_policy_choice *policy, unsigned pc,
					       uint64_t cache_pages)
{
	return (struct swt_replay_config){
		.policy = policy->policy,
		.policy_spec = policy->spec,
		.keys = (const char *const *)policy->keys,
		.values = (const char *const *)policy->values,
		.nparams = policy->nparams,
		.page_cluster = pc,
		.cache_pages = cache_pages,
		.max_request_pages =
			(unsigned)(((uint64_t)in->request_limit_kib * 1024) >> in->page_shift),
		.layout_name = "traced",
	};
}

/*
 * The most memory the replay handles; for the tests, SWT_TEST_MAX_CACHE_PAGES
 * lowers it, as a run of hundreds of millions of pages to reach the real one
 * would take them minutes.
 */
static uint64_t max_cache_pages(void)
{
	const char *test = getenv("SWT_TEST_MAX_CACHE_PAGES");
	uint64_t max = swt_replay_max_cache_pages(0), lower;

	if (test && !swt_parse_u64(test, &lower) && lower && lower < max)
		return lower;
	return max;
}

/*
 * The set's configurations, in the order they are stored; *memory_percent
 * the largest share of cache_pages replayed.
 */
static size_t default_configs(const struct swt_replay_input *in, struct sweep_policies *sp,
			      uint64_t cache_pages, struct swt_replay_config *cfgs,
			      unsigned *memory_percent)
{
	uint64_t max_cache = max_cache_pages();
	unsigned memory_pc;
	size_t n = 0;

	for (size_t p = 0; p < SWT_ARRAY_SIZE(default_policies); p++)
		for (unsigned pc = 0; pc <= DEFAULT_MAX_PAGE_CLUSTER; pc++)
			cfgs[n++] = default_config(in, sweep_policy(sp, default_policies[p]), pc,
						   cache_pages);
	memory_pc = in->traced_page_cluster > 0 && in->traced_page_cluster <= DEFAULT_MAX_PAGE_CLUSTER
			    ? (unsigned)in->traced_page_cluster : 3;
	for (size_t p = 0; p < SWT_ARRAY_SIZE(memory_policies); p++) {
		for (size_t m = 0; m < SWT_ARRAY_SIZE(memory_percents); m++) {
			uint64_t pages = (cache_pages * memory_percents[m] + 50) / 100;

			/* a default that just fits still gets its smaller sizes, not a refusal */
			if (pages > max_cache)
				continue;
			cfgs[n++] = default_config(in, sweep_policy(sp, memory_policies[p]),
						   memory_pc, pages ? pages : 1);
			*memory_percent = SWT_MAX(*memory_percent, memory_percents[m]);
		}
	}
	return n;
}

int swt_replay_default_sweep(struct swt_store *st, size_t *nr_runs, unsigned *memory_percent,
			     int (*interrupted)(void), struct swt_err *err)
{
	struct swt_replay_config cfgs[NR_DEFAULT_RUNS];
	struct sweep_policies sp = { .n = 0 };
	struct swt_replay_input *in = NULL;
	struct swt_replay_result *res = NULL;
	sqlite3_stmt *stored = NULL;
	FILE *spill = NULL;
	int in_transaction = 0, ret;
	size_t nr_cfgs;
	int64_t cache_pages;

	*nr_runs = 0;
	*memory_percent = 0;
	/* a report of a readahead capture still wants charts: approximate it */
	ret = swt_replay_input_load(st, 1, &in, err);
	if (ret)
		goto out;
	if (!in->nr_faults) {
		ret = swt_error(err, SWT_EUSAGE, "'%s': no swap-in faults: nothing to replay",
				swt_store_path(st));
		goto out;
	}
	/*
	 * Below, not SWT_EUSAGE, which the report takes for a capture with
	 * nothing to replay and draws without runs: these captures have
	 * faults, and the user has a way to replay them.
	 */
	cache_pages = swt_replay_default_cache_pages(in);
	if (cache_pages <= 0) {
		/* the report approximates by itself; replay, told only --cache-pages, refused */
		ret = swt_error(err, SWT_ENOTSUP,
				"'%s': the capture records no memory limit or working set (of a page or "
				"more) to replay "
				"against; run swaptrace replay --cache-pages PAGES%s first",
				swt_store_path(st), in->approximate ? " --approximate" : "");
		goto out;
	}
	if ((uint64_t)cache_pages > max_cache_pages()) {
		ret = swt_error(err, SWT_ENOTSUP,
				"'%s': the default memory (%lld pages, the capture's %s) is more than "
				"the replay handles, %llu pages at most with the kernel's inactive "
				"share; run swaptrace replay --cache-pages PAGES first",
				swt_store_path(st), (long long)cache_pages,
				in->mem_limit_bytes > 0 ? "memory limit" : "working set",
				(unsigned long long)max_cache_pages());
		goto out;
	}
	ret = choose_sweep_policies(&sp, err);
	if (ret)
		goto out;
	nr_cfgs = default_configs(in, &sp, (uint64_t)cache_pages, cfgs, memory_percent);
	/*
	 * The runs are computed with no lock held: a transaction over the
	 * whole sweep (minutes on a long capture) would lock other writers
	 * out that long.  Each run's result waits in a temporary file, so
	 * the sweep holds one run's series at a time.
	 */
	spill = swt_replay_spill_open(err);
	if (!spill) {
		ret = -SWT_EIO;
		goto out;
	}
	for (size_t i = 0; i < nr_cfgs; i++) {
		if (interrupted && interrupted()) {
			ret = swt_error(err, SWT_EINTR, "interrupted");
			goto out;
		}
		ret = swt_replay_run(in, &cfgs[i], &res, err);
		if (!ret)
			ret = swt_replay_spill_put(spill, res, err);
		swt_replay_result_free(res);
		res = NULL;
		if (ret)
			goto out;
	}
	/* for the tests: the runs are computed, the database not yet locked */
	if (getenv("SWT_TEST_STOP_BEFORE_STORE"))
		raise(SIGSTOP);
	ret = swt_replay_spill_rewind(spill, err);
	if (!ret)
		ret = swt_store_exec(st, "BEGIN IMMEDIATE", err);
	if (ret)
		goto out;
	in_transaction = 1;
	/*
	 * another report may have stored the set meanwhile, or replay a run
	 * of it: a setting is stored once (params NULL: a built-in's defaults,
	 * as the set stored them before they were filled in)
	 */
	ret = swt_store_prepare(st,
		"SELECT 1 FROM run WHERE policy = ?1 AND (params IS ?5 OR params IS NULL)"
		" AND page_cluster = ?2 AND cache_pages = ?3 AND layout = 'traced'"
		" AND inactive_fraction IS NULL AND max_request_kib = ?4", &stored, err);
	if (ret)
		goto out;
	for (size_t i = 0; i < nr_cfgs; i++) {
		int64_t run_id;
		int step, repeated = 0;
		char params[1024];

		res = swt_replay_spill_get(spill, err);
		if (!res) {
			ret = -SWT_EIO;
			goto out;
		}
		sqlite3_reset(stored);
		sqlite3_bind_text(stored, 1, cfgs[i].policy_spec, -1, SQLITE_STATIC);
		sqlite3_bind_int64(stored, 2, cfgs[i].page_cluster);
		sqlite3_bind_int64(stored, 3, (int64_t)cfgs[i].cache_pages);
		sqlite3_bind_int64(stored, 4, (int64_t)(((uint64_t)cfgs[i].max_request_pages <<
							  in->page_shift) >> 10));
		swt_policy_params_text(cfgs[i].keys, cfgs[i].values, cfgs[i].nparams, params,
				       sizeof(params));
		if (params[0])
			sqlite3_bind_text(stored, 5, params, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(stored, 5);
		step = sqlite3_step(stored);
		sqlite3_reset(stored);
		if (step == SQLITE_ROW) {
			swt_replay_result_free(res);
			res = NULL;
			continue;
		}
		ret = step == SQLITE_DONE ? swt_replay_store(st, in, &cfgs[i], res, &run_id, &repeated,
							     err)
					  : swt_store_sql_error(st, err, "looking up stored runs");
		swt_replay_result_free(res);
		res = NULL;
		if (ret)
			goto out;
		*nr_runs += !repeated;
	}
	in_transaction = 0;	/* the caller's now */
out:
	sqlite3_finalize(stored);
	if (in_transaction)
		sqlite3_exec(swt_store_db(st), "ROLLBACK", NULL, NULL, NULL);
	if (ret) {
		*nr_runs = 0;
		*memory_percent = 0;
	}
	swt_replay_result_free(res);
	if (spill)
		fclose(spill);
	swt_replay_input_free(in);
	sweep_policies_release(&sp);
	return ret;
}
