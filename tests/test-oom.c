/*
 * Replays, re-placements, policy choices, meta.txt parsing and an ingest
 * when memory runs out: each allocation the libraries make is failed in
 * turn (the test is linked with --wrap=malloc, calloc and realloc, so only
 * swaptrace's own calls are counted, not libc's or SQLite's).  Every
 * attempt must end in an error with its message and no output, or, where
 * the code works around the failure, in the right output -- no crash,
 * nothing leaked (the sanitizer build's leak check) -- until one needs
 * fewer allocations than the one failed.
 */
#include <glob.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "ingest.h"
#include "meta.h"
#include "replay.h"
#include "report.h"
#include "swapsim.h"
#include "util.h"

extern const struct swt_policy swt_policy_fixed, swt_policy_vma;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

/* the allocation to fail, counted from 1 while armed; 0: none */
static unsigned long fail_at, nr_allocs;

/* atomic: the ingest's writer thread allocates too */
static int fails_now(void)
{
	unsigned long at = __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST);

	return at && __atomic_add_fetch(&nr_allocs, 1, __ATOMIC_SEQ_CST) == at;
}

void *__wrap_malloc(size_t size)
{
	return fails_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fails_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fails_now() ? NULL : __real_realloc(p, size);
}

/*
 * Two areas, a VMA, swap-outs and the faults on their pages, and as many
 * faults on pages written before the trace: every table the replay and a
 * re-placement size.
 */
struct oom_input {
	struct swt_replay_input in;
	struct swt_replay_area areas[2];
	struct swt_replay_swapout outs[16];
	struct swt_replay_fault faults[32];
	struct swt_replay_vma vma;
};

static void build_input(struct oom_input *x)
{
	const size_t n = SWT_ARRAY_SIZE(x->outs);
	uint64_t ts = 1000;

	memset(x, 0, sizeof(*x));
	for (uint32_t a = 0; a < 2; a++) {
		x->areas[a].id = a;
		snprintf(x->areas[a].dev, sizeof(x->areas[a].dev), "8:%u", a * 16);
		x->areas[a].slots = 1000;
		x->areas[a].rotational = 1;
	}
	x->vma = (struct swt_replay_vma){ .pid = 1, .start = 0x1000, .end = 0x1100 };
	for (size_t i = 0; i < n; i++)
		x->outs[i] = (struct swt_replay_swapout){
			.ts = ts += 1000, .slot = 8 + i, .area = (uint32_t)(i & 1), .pid = 1,
		};
	for (size_t i = 0; i < 2 * n; i++)
		x->faults[i] = (struct swt_replay_fault){
			.ts = ts += 1000, .slot = i < n ? 8 + i : 200 + i,
			.area = (uint32_t)(i & 1), .pid = 1, .vpage = 0x1000 + i, .vma = 0,
			.out = i < n ? (int32_t)i : -1,
		};
	x->in = (struct swt_replay_input){
		.areas = x->areas, .nr_areas = 2, .faults = x->faults, .nr_faults = 2 * n,
		.outs = x->outs, .nr_outs = n, .vmas = &x->vma, .nr_vmas = 1, .page_shift = 12,
		.vma_ra_enabled = 1,
	};
}

/*
 * Fail allocation 1, 2, ... of attempt() until it needs fewer.  An attempt
 * that fails must return an error with its message; one that succeeds
 * anyway (a failure worked around, as the ingest's writer waits for a
 * buffer) must give the right output.  attempt() frees what it was given
 * and sets *ok: on success, whether its output is right; on an error,
 * whether it was handed nothing.
 */
static void fail_each_allocation(const char *what, const struct oom_input *x,
				 int (*attempt)(const struct oom_input *x, int *ok,
						struct swt_err *err))
{
	unsigned long k, failed = 0;

	for (k = 1; k < 10000; k++) {
		struct swt_err err = { 0 };
		int ret, ok = 0;

		nr_allocs = 0;
		fail_at = k;
		ret = attempt(x, &ok, &err);
		fail_at = 0;
		if (nr_allocs < k) {	/* it needed fewer: nothing failed */
			if (ret)
				fprintf(stderr, "%s: %s\n", what, err.msg);
			CHECK_INT(ret, 0);
			CHECK(ok);
			break;
		}
		/* a policy's create() or on_miss() says only that it failed, not why */
		if (ret > 0 || !ok || (ret < 0 && !err.msg[0])) {
			fprintf(stderr, "%s: allocation %lu failed: returned %d, %s, '%s'\n", what, k,
				ret, ok ? "right output" : ret ? "an output" : "wrong output",
				err.msg);
			check_failures++;
		}
		failed++;
	}
	/* it reached a run that succeeded, past allocations it did fail */
	CHECK(k < 10000);
	CHECK(failed > 10);
}

static int run_policy(const struct oom_input *x, const struct swt_policy *p, int *ok,
		      struct swt_err *err)
{
	struct swt_replay_config cfg = {
		.policy = p, .policy_spec = p->name, .page_cluster = 3, .cache_pages = 8,
		.inactive_fraction = 0.5, .max_request_pages = 320, .layout_name = "traced",
	};
	struct swt_replay_result *r = NULL;
	int ret = swt_replay_run(&x->in, &cfg, &r, err);

	*ok = ret ? !r : r && r->total.faults == x->in.nr_faults;
	swt_replay_result_free(r);
	return ret;
}

static int run_fixed(const struct oom_input *x, int *ok, struct swt_err *err)
{
	return run_policy(x, &swt_policy_fixed, ok, err);
}

static int run_vma(const struct oom_input *x, int *ok, struct swt_err *err)
{
	return run_policy(x, &swt_policy_vma, ok, err);
}

/* A layout parsed and applied: a new input with its pages re-placed. */
static int replace_pages(const struct oom_input *x, int *ok, struct swt_err *err)
{
	struct swt_placement p;
	struct swt_replay_input *o = NULL;
	int ret = swt_placement_init(&p, "2:cluster=8", &x->in, err);

	if (!ret) {
		ret = swt_placement_apply(&x->in, &p, &o, NULL, err);
		swt_placement_release(&p);
	}
	*ok = ret ? !o : o && o->nr_faults == x->in.nr_faults && o->nr_outs == x->in.nr_outs;
	swt_replay_input_free(o);
	return ret;
}

/* A capture's meta.txt parsed, with a --swap statement over its areas. */
static int parse_meta(const struct oom_input *x, int *ok, struct swt_err *err)
{
	static const char text[] =
		"swaptrace-capture 1\n"
		"kernel 6.19.0\n"
		"page_size 4096\n"
		"ncpus 2\n"
		"workload ws_mb=256 limit_mb=205 mode=rnd accesses=120000 seed=21\n"
		"command /bin/true x\n"
		"swap_device path=/dev/sda2 dev=8:2 type=partition prio=-2 rotational=1 sync=0 "
		"start=2048 slots=1000 size_kib=3996 used_kib=0\n"
		"swap_device path=/swap\\040files/a dev=8:1 type=file prio=-3 rotational=0 "
		"sync=0 start=0 slots=300\n"
		"extent area=1 first_slot=1 nr_slots=100 start_sector=80000\n"
		"extent area=1 first_slot=101 nr_slots=199 start_sector=90000\n"
		"# /proc/swaps at end\n"
		"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		"/dev/loop0                              partition\t262140\t\t8\t\t5\n"
		"dev /dev/loop0 7:0 rotational=1\n"
		"# vmstat before\n"
		"pswpin 10\n"
		"# vmstat after\n"
		"pswpin 25\n"
		"# lost events\n"
		"cpu0 3\n";
	struct swt_meta *m = swt_meta_alloc();
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	(void)x;
	*ok = 1;
	if (!m || !f) {
		swt_meta_free(m);
		if (f)
			fclose(f);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	ret = swt_meta_parse_stream(m, f, "meta.txt", err);
	if (!ret)
		ret = swt_meta_add_swap_spec(m, "8:2,rotational=0", err);
	fclose(f);
	/* the stated area replaces the file's two, a partition unless it says */
	*ok = ret || (m->nr_areas == 1 && m->areas[0].type &&
		      !strcmp(m->areas[0].type, "partition") && m->areas[0].rotational == 0);
	swt_meta_free(m);
	return ret;
}

TEST(meta_parse_fails_cleanly_at_each_allocation)
{
	fail_each_allocation("meta.txt", NULL, parse_meta);
}

/* A policy chosen by a spec with parameters, and run through them. */
static int choose_policy(const struct oom_input *x, int *ok, struct swt_err *err)
{
	struct swt_policy_choice c = { 0 };
	int ret = swt_policy_choose("leap:history=64,min_window=8", &c, err);

	*ok = 1;
	if (!ret) {
		struct swt_replay_config cfg = {
			.policy = c.policy, .policy_spec = c.spec, .page_cluster = 3,
			.cache_pages = 8, .inactive_fraction = 0.5, .max_request_pages = 320,
			.layout_name = "traced", .keys = (const char *const *)c.keys,
			.values = (const char *const *)c.values, .nparams = c.nparams,
		};
		struct swt_replay_result *r = NULL;

		ret = swt_replay_run(&x->in, &cfg, &r, err);
		*ok = ret ? !r : r && r->total.faults == x->in.nr_faults;
		swt_replay_result_free(r);
	}
	swt_policy_choice_release(&c);
	return ret;
}

TEST(chosen_policy_fails_cleanly_at_each_allocation)
{
	struct oom_input x;

	build_input(&x);
	fail_each_allocation("leap:history=64,min_window=8", &x, choose_policy);
}

static int ingest_event(struct swt_ingest *ing, struct swt_event *ev, uint64_t *ts)
{
	ev->ts = *ts += 10;
	return swt_ingest_event(ing, ev);
}

/* Swap-in reads, each behind a fault, of 8:2: its requests, pages and facts. */
static int ingest_events(struct swt_ingest *ing, struct swt_err *err)
{
	const struct swt_source_info info = { .path = "crafted", .format = "test" };
	static const char actions[] = "QGIDC";
	uint64_t ts = 1000;
	int ret = swt_ingest_begin_source(ing, &info, err);

	for (unsigned i = 0; !ret && i < 8; i++) {
		struct swt_event ev = {
			.type = SWT_EV_FAULT, .pid = 10, .system = "exceptions",
			.name = "page_fault_user", .name_id = 500,
			.fault = { .address = 0x7f0000000000ull + i * 4096, .error_code = 4 },
		};

		ret = ingest_event(ing, &ev, &ts);
		for (const char *a = actions; ret >= 0 && *a; a++) {
			ev = (struct swt_event){
				.type = SWT_EV_BLOCK, .pid = 10, .system = "block",
				.name = swt_block_action_event_name(*a), .name_id = (uint32_t)*a,
				.block = { .action = (uint8_t)*a, .dev = (8u << 20) | 2,
					   .sector = 2048 + 8 + i * 8, .nr_sectors = 8, .rwbs = "R" },
			};
			ret = ingest_event(ing, &ev, &ts);
		}
		if (ret < 0)
			*err = *swt_ingest_error(ing);
	}
	return ret < 0 ? ret : swt_ingest_end_source(ing, err);
}

/* The database the ingest writes: this process's own. */
static const char *db_path(void)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/swt-test-oom-%d.db", (int)getpid());
	return path;
}

/* A crafted trace ingested into a new database at db_path(), up to its commit. */
static int ingest(const struct oom_input *x, int *ok, struct swt_err *err)
{
	const char *path = db_path();
	char tmp[80];
	glob_t left;
	struct swt_meta *m = swt_meta_alloc();
	struct swt_store *st = NULL;
	struct swt_ingest *ing = NULL;
	int ret;

	(void)x;
	*ok = 1;
	unlink(path);
	if (!m)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	m->page_cluster = 3;
	ret = swt_meta_add_swap_spec(m, "8:2,start=2048", err);
	if (!ret)
		ret = swt_store_create(path, &st, err);
	if (!ret)
		ret = swt_ingest_alloc(st, m, NULL, NULL, &ing, err);
	if (!ret)
		ret = ingest_events(ing, err);
	if (!ret)
		ret = swt_ingest_finish(ing, m, "crafted", err);
	if (!ret)
		ret = swt_store_commit(st, err);
	if (!ret)
		*ok = swt_store_query_int(st, "SELECT count(*) FROM swap_in", -1) == 8;
	swt_ingest_free(ing);
	swt_store_destroy(st);
	swt_meta_free(m);
	/* a failed ingest leaves no database behind, nor the file it was writing */
	snprintf(tmp, sizeof(tmp), "%s.tmp-*", path);
	if (glob(tmp, 0, NULL, &left) != GLOB_NOMATCH || (ret && access(path, F_OK) == 0))
		*ok = 0;
	globfree(&left);
	return ret;
}

TEST(ingest_fails_cleanly_at_each_allocation)
{
	fail_each_allocation("ingest", NULL, ingest);
	unlink(db_path());
}

/*
 * The ingested database read for a replay: at page-cluster 3 its reads
 * mix demand and readahead, so the faults are reconstructed (--approximate),
 * then the replay's tables sized.
 */
static int load(const struct oom_input *x, int *ok, struct swt_err *err)
{
	struct swt_store *st = NULL;
	struct swt_replay_input *in = NULL;
	int ret = swt_store_open(db_path(), SWT_STORE_READ, &st, err);

	(void)x;
	if (!ret)
		ret = swt_replay_input_load(st, 1, &in, err);
	if (!ret)
		ret = swt_replay_prepare(in, err);
	*ok = ret || (in->approximate && in->nr_faults == 8);
	swt_replay_input_free(in);
	swt_store_destroy(st);
	return ret;
}

TEST(load_fails_cleanly_at_each_allocation)
{
	struct swt_err err = { 0 };
	int ok = 0;

	CHECK_INT(ingest(NULL, &ok, &err), 0);
	CHECK(ok);
	fail_each_allocation("load --approximate", NULL, load);
	unlink(db_path());
}

/* The report's directory: this process's own. */
static const char *report_dir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/swt-test-oom-%d-report", (int)getpid());
	return dir;
}

/* The report of the ingested database with three runs, its charts as SVG. */
static int report(const struct oom_input *x, int *ok, struct swt_err *err)
{
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG, .dir = report_dir() };
	struct swt_report_summary sum = { 0 };
	struct swt_store *st = NULL;
	int ret = swt_store_open(db_path(), SWT_STORE_WRITE, &st, err);

	(void)x;
	if (!ret)
		ret = swt_report_write(st, &o, &sum, err);
	*ok = ret || (sum.runs == 3 && sum.charts > 0);
	swt_store_destroy(st);
	return ret;
}

TEST(report_fails_cleanly_at_each_allocation)
{
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	char cmd[128];
	int ok = 0;

	CHECK_INT(ingest(NULL, &ok, &err), 0);
	CHECK(ok);
	CHECK_INT(swt_store_open(db_path(), SWT_STORE_WRITE, &st, &err), 0);
	CHECK_INT(swt_store_exec(st,
		"INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults, misses,"
		" hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges) VALUES"
		" (3, 'x', 'none', 3, 100, 10, 10, 0, 10, 0, 0, 0, 10, 0),"
		" (4, 'x', 'auto', 3, 100, 10, 8, 2, 20, 12, 2, 10, 9, 11),"
		" (5, 'x', 'fixed', 3, 100, 10, 7, 3, 30, 23, 3, 20, 9, 21)", &err), 0);
	swt_store_destroy(st);
	fail_each_allocation("report", NULL, report);
	unlink(db_path());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", report_dir());
	CHECK_INT(system(cmd), 0);
}

TEST(fixed_run_fails_cleanly_at_each_allocation)
{
	struct oom_input x;

	build_input(&x);
	fail_each_allocation("fixed", &x, run_fixed);
}

TEST(vma_run_fails_cleanly_at_each_allocation)
{
	struct oom_input x;

	build_input(&x);
	fail_each_allocation("vma", &x, run_vma);
}

TEST(replacement_fails_cleanly_at_each_allocation)
{
	struct oom_input x;

	build_input(&x);
	fail_each_allocation("layout 2:cluster=8", &x, replace_pages);
}

CHECK_MAIN
