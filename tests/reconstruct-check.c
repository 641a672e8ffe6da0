/*
 * How well --approximate's reconstruction (replay/reconstruct.c) answers
 * what-if questions, in a world where the truth is known: the replay
 * itself.  A page-cluster 0 capture's exact demand stream is replayed with
 * auto at page-cluster 3, and what that run read and hit is written as a
 * readahead capture (its reads, each with the fault that queued it; the
 * faults that hit do no I/O).  Its reconstructed stream and the exact one
 * are then replayed through every kernel policy and the oracle at
 * page-cluster 1-5, and their coverage and accuracy compared.
 *
 *   reconstruct-check PC0.DB COPY.DB    (COPY.DB: a copy of PC0.DB, rewritten)
 *
 * Prints one line; exits 1 when the errors pass their bounds (below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay.h"
#include "util.h"

/* Bounds on the relative errors over the 25 what-if runs (docs/replay-model.md). */
#define MAX_MEAN_COVERAGE_ERROR 0.08
#define MAX_COVERAGE_ERROR 0.20
#define MAX_MEAN_ACCURACY_ERROR 0.10
#define MAX_FAULTS_ERROR 0.03

struct synth_read {
	size_t fault;
	uint32_t area;
	uint64_t slot;
};

struct synth {
	struct synth_read *reads;
	size_t nr_reads, cap_reads;
	unsigned char *hit;	/* per fault */
	int failed;
};

static void on_read(void *ctx, size_t fault, uint32_t area, uint64_t slot, int demand)
{
	struct synth *s = ctx;

	(void)demand;
	if (swt_grow((void **)&s->reads, &s->cap_reads, s->nr_reads + 1, sizeof(*s->reads))) {
		s->failed = 1;
		return;
	}
	s->reads[s->nr_reads++] = (struct synth_read){ .fault = fault, .area = area, .slot = slot };
}

static void on_hit(void *ctx, size_t fault)
{
	((struct synth *)ctx)->hit[fault] = 1;
}

static int run(const struct swt_replay_input *in, const char *policy, unsigned pc,
	       const struct swt_replay_observer *obs, struct swt_replay_metrics *m)
{
	/* the built-ins with their defaults, as replay/sweep.c runs them */
	struct swt_replay_config cfg = {
		.policy = swt_policy_find(policy),
		.policy_spec = policy,
		.page_cluster = pc,
		.cache_pages = (uint64_t)swt_replay_default_cache_pages(in),
		.max_request_pages = (unsigned)((in->request_limit_kib * 1024) >> in->page_shift),
		.layout_name = "traced",
		.observer = obs,
	};
	struct swt_replay_result *res = NULL;
	struct swt_err err = { 0 };
	int ret = swt_replay_run(in, &cfg, &res, &err);

	if (!ret)
		*m = res->total;
	else
		fprintf(stderr, "reconstruct-check: %s at page-cluster %u: %s\n", policy, pc, err.msg);
	swt_replay_result_free(res);
	return ret;
}

/* The readahead capture: copy's swap_in holds what the run read, by the fault that read it. */
static int write_capture(struct swt_store *st, const struct swt_replay_input *in,
			 const struct synth *s, struct swt_err *err)
{
	sqlite3_stmt *q = NULL, *ins = NULL;
	int64_t *fault_id = calloc(in->nr_faults ? in->nr_faults : 1, sizeof(*fault_id));
	int64_t *dev = calloc(in->nr_areas ? in->nr_areas : 1, sizeof(*dev));
	size_t n = 0;
	int ret = -1;

	if (!fault_id || !dev) {
		swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	/* the faults' ids in the order swt_replay_input_load read them */
	if (swt_store_prepare(st, "SELECT fault_id FROM swap_in WHERE demand = 1 ORDER BY ts, id",
			      &q, err))
		goto out;
	while (sqlite3_step(q) == SQLITE_ROW && n < in->nr_faults)
		fault_id[n++] = sqlite3_column_int64(q, 0);
	if (n != in->nr_faults) {
		swt_error(err, SWT_EFORMAT, "%zu demand reads for %zu faults", n, in->nr_faults);
		goto out;
	}
	for (size_t a = 0; a < in->nr_areas; a++) {
		char sql[96];

		snprintf(sql, sizeof(sql), "SELECT dev FROM swap_area WHERE id = %lld",
			 (long long)in->areas[a].id);
		dev[a] = swt_store_query_int(st, sql, 0);
	}
	/* a capture taken at page-cluster 3, as the run was */
	if (swt_store_exec(st, "BEGIN; DELETE FROM swap_in; UPDATE capture SET page_cluster = 3", err) ||
	    swt_store_prepare(st, "INSERT INTO swap_in (ts, area_id, slot, dev, pid, bio_id, fault_id,"
			      " address, demand) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)", &ins, err))
		goto out;
	for (size_t i = 0, k = 0; i < s->nr_reads; i++) {
		const struct swt_replay_fault *f = &in->faults[s->reads[i].fault];

		k = i && s->reads[i - 1].fault == s->reads[i].fault ? k + 1 : 0;
		sqlite3_bind_int64(ins, 1, (int64_t)(f->ts + k));	/* a fault's reads in order */
		sqlite3_bind_int64(ins, 2, in->areas[s->reads[i].area].id);
		sqlite3_bind_int64(ins, 3, (int64_t)s->reads[i].slot);
		sqlite3_bind_int64(ins, 4, dev[s->reads[i].area]);
		sqlite3_bind_int64(ins, 5, f->pid);
		sqlite3_bind_int64(ins, 6, (int64_t)i + 1);
		sqlite3_bind_int64(ins, 7, fault_id[s->reads[i].fault]);
		sqlite3_bind_int64(ins, 8, (int64_t)(f->vpage << in->page_shift));
		if (sqlite3_step(ins) != SQLITE_DONE) {
			swt_store_sql_error(st, err, "writing the readahead capture");
			goto out;
		}
		sqlite3_reset(ins);
	}
	if (swt_store_exec(st, "COMMIT", err))
		goto out;
	ret = 0;
out:
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	free(fault_id);
	free(dev);
	return ret;
}

static double rel(double got, double want)
{
	return want ? fabs(got - want) / want : fabs(got);
}

int main(int argc, char **argv)
{
	static const char *const policies[] = { "fixed", "adaptive", "vma", "auto", "oracle" };
	struct swt_replay_input *exact = NULL, *recon = NULL;
	struct swt_store *st = NULL, *copy = NULL;
	struct swt_err err = { 0 };
	struct synth s = { 0 };
	struct swt_replay_observer obs = { .ctx = &s, .read = on_read, .hit = on_hit };
	struct swt_replay_metrics m;
	double cov_sum = 0, cov_max = 0, acc_sum = 0, faults_err;
	const char *worst = "";
	unsigned worst_pc = 0;
	int nruns = 0, status = 2;

	if (argc != 3) {
		fprintf(stderr, "usage: reconstruct-check PC0.DB COPY.DB\n");
		return 2;
	}
	if (swt_store_open(argv[1], 0, &st, &err) || swt_replay_input_load(st, 0, &exact, &err))
		goto fail;
	s.hit = calloc(exact->nr_faults ? exact->nr_faults : 1, 1);
	if (!s.hit || run(exact, "auto", 3, &obs, &m) || s.failed)
		goto out;
	if (swt_store_open(argv[2], 1, &copy, &err) || write_capture(copy, exact, &s, &err) ||
	    swt_replay_input_load(copy, 1, &recon, &err))
		goto fail;
	for (size_t p = 0; p < SWT_ARRAY_SIZE(policies); p++) {
		for (unsigned pc = 1; pc <= 5; pc++) {
			struct swt_replay_metrics a, b;
			double ce, ae;

			if (run(exact, policies[p], pc, NULL, &a) || run(recon, policies[p], pc, NULL, &b))
				goto out;
			ce = rel((double)b.hits / (double)b.faults, (double)a.hits / (double)a.faults);
			ae = rel(b.ra_pages ? (double)b.ra_hits / (double)b.ra_pages : 0,
				 a.ra_pages ? (double)a.ra_hits / (double)a.ra_pages : 0);
			cov_sum += ce;
			acc_sum += ae;
			if (ce > cov_max) {
				cov_max = ce;
				worst = policies[p];
				worst_pc = pc;
			}
			nruns++;
		}
	}
	faults_err = rel((double)recon->nr_faults, (double)exact->nr_faults);
	printf("faults %zu of %zu (%+.1f %%), %zu readahead hits of %zu; what-if coverage error "
	       "mean %.1f %% max %.1f %% (%s at page-cluster %u), accuracy error mean %.1f %%\n",
	       recon->nr_faults, exact->nr_faults, 100 * faults_err, recon->approx_hits,
	       (size_t)m.hits, 100 * cov_sum / nruns, 100 * cov_max, worst, worst_pc,
	       100 * acc_sum / nruns);
	status = cov_sum / nruns > MAX_MEAN_COVERAGE_ERROR || cov_max > MAX_COVERAGE_ERROR ||
		 acc_sum / nruns > MAX_MEAN_ACCURACY_ERROR || faults_err > MAX_FAULTS_ERROR;
	goto out;
fail:
	fprintf(stderr, "reconstruct-check: %s\n", err.msg);
out:
	swt_replay_input_free(exact);
	swt_replay_input_free(recon);
	swt_store_destroy(st);
	swt_store_destroy(copy);
	free(s.reads);
	free(s.hit);
	return status;
}
