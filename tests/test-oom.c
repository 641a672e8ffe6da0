/*
 * Replays, re-placements and meta.txt parsing when memory runs out: each
 * allocation the libraries make is failed in turn (the test is linked
 * with --wrap=malloc, calloc and realloc, so only swaptrace's own calls
 * are counted, not libc's or SQLite's), and every attempt must end in an
 * error with its message -- no crash, no output, nothing leaked (the
 * sanitizer build's leak check) -- until one needs fewer allocations than
 * the one failed, and succeeds.
 */
#include <stdlib.h>

#include "check.h"
#include "meta.h"
#include "replay.h"
#include "swapsim.h"
#include "util.h"

extern const struct swt_policy swt_policy_fixed, swt_policy_vma;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

/* the allocation to fail, counted from 1 while armed; 0: none */
static unsigned long fail_at, nr_allocs;

static int fails_now(void)
{
	return fail_at && ++nr_allocs == fail_at;
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
 * Fail allocation 1, 2, ... of attempt() until it needs fewer; each failed
 * attempt must return an error with its message.  attempt() frees what it
 * got and says whether it was handed anything on an error (it must not be).
 */
static void fail_each_allocation(const char *what, const struct oom_input *x,
				 int (*attempt)(const struct oom_input *x, int *got,
						struct swt_err *err))
{
	unsigned long k, failed = 0;

	for (k = 1; k < 10000; k++) {
		struct swt_err err = { 0 };
		int ret, got = 0;

		nr_allocs = 0;
		fail_at = k;
		ret = attempt(x, &got, &err);
		fail_at = 0;
		if (nr_allocs < k) {	/* it needed fewer: nothing failed */
			if (ret)
				fprintf(stderr, "%s: %s\n", what, err.msg);
			CHECK_INT(ret, 0);
			CHECK(got);
			break;
		}
		/* a policy's create() or on_miss() says only that it failed, not why */
		if (ret >= 0 || got || !err.msg[0]) {
			fprintf(stderr, "%s: allocation %lu failed: returned %d, %s, '%s'\n", what, k,
				ret, got ? "an output" : "no output", err.msg);
			check_failures++;
		}
		failed++;
	}
	/* it reached a run that succeeded, past allocations it did fail */
	CHECK(k < 10000);
	CHECK(failed > 10);
}

static int run_policy(const struct oom_input *x, const struct swt_policy *p, int *got,
		      struct swt_err *err)
{
	struct swt_replay_config cfg = {
		.policy = p, .policy_spec = p->name, .page_cluster = 3, .cache_pages = 8,
		.inactive_fraction = 0.5, .max_request_pages = 320, .layout_name = "traced",
	};
	struct swt_replay_result *r = NULL;
	int ret = swt_replay_run(&x->in, &cfg, &r, err);

	*got = r != NULL;
	swt_replay_result_free(r);
	return ret;
}

static int run_fixed(const struct oom_input *x, int *got, struct swt_err *err)
{
	return run_policy(x, &swt_policy_fixed, got, err);
}

static int run_vma(const struct oom_input *x, int *got, struct swt_err *err)
{
	return run_policy(x, &swt_policy_vma, got, err);
}

/* A layout parsed and applied: a new input with its pages re-placed. */
static int replace_pages(const struct oom_input *x, int *got, struct swt_err *err)
{
	struct swt_placement p;
	struct swt_replay_input *o = NULL;
	int ret = swt_placement_init(&p, "2:cluster=8", &x->in, err);

	if (!ret) {
		ret = swt_placement_apply(&x->in, &p, &o, NULL, err);
		swt_placement_release(&p);
	}
	*got = o != NULL;
	swt_replay_input_free(o);
	return ret;
}

/* A capture's meta.txt parsed, with a --swap statement over its areas. */
static int parse_meta(const struct oom_input *x, int *got, struct swt_err *err)
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
	*got = !ret;	/* the parsed metadata, freed here either way */
	swt_meta_free(m);
	return ret;
}

TEST(meta_parse_fails_cleanly_at_each_allocation)
{
	fail_each_allocation("meta.txt", NULL, parse_meta);
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
