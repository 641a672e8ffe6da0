/*
 * The replay when memory runs out: each allocation the replay library
 * makes is failed in turn (the test is linked with --wrap=malloc, calloc
 * and realloc, so only swaptrace's own calls are counted, not libc's), and
 * every run must end in an error with its message -- no crash, no result,
 * nothing leaked (the sanitizer build's leak check) -- until a run needs
 * fewer allocations than the one failed, and succeeds.
 */
#include <stdlib.h>

#include "check.h"
#include "replay.h"
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

/* Two areas, a VMA, swap-outs and faults on both: every table prep_build sizes. */
static void build_input(struct swt_replay_input *in, struct swt_replay_area *areas,
			struct swt_replay_fault *faults, struct swt_replay_swapout *outs,
			struct swt_replay_vma *vma, size_t n)
{
	uint64_t ts = 1000;

	for (uint32_t a = 0; a < 2; a++) {
		areas[a].id = a;
		snprintf(areas[a].dev, sizeof(areas[a].dev), "8:%u", a * 16);
		areas[a].slots = 1000;
		areas[a].rotational = 1;
	}
	*vma = (struct swt_replay_vma){ .pid = 1, .start = 0x1000, .end = 0x1100 };
	for (size_t i = 0; i < n; i++)
		outs[i] = (struct swt_replay_swapout){
			.ts = ts += 1000, .slot = 8 + i, .area = (uint32_t)(i & 1), .pid = 1,
		};
	for (size_t i = 0; i < n; i++)
		faults[i] = (struct swt_replay_fault){
			.ts = ts += 1000, .slot = 8 + i, .area = (uint32_t)(i & 1), .pid = 1,
			.vpage = 0x1000 + i, .vma = 0, .out = -1,
		};
	*in = (struct swt_replay_input){
		.areas = areas, .nr_areas = 2, .faults = faults, .nr_faults = n,
		.outs = outs, .nr_outs = n, .vmas = vma, .nr_vmas = 1, .page_shift = 12,
		.vma_ra_enabled = 1,
	};
}

/* Fail allocation 1, 2, ... of one run until a run needs fewer; each must fail cleanly. */
static void fail_each_allocation(const struct swt_policy *p)
{
	struct swt_replay_area areas[2];
	struct swt_replay_fault faults[16];
	struct swt_replay_swapout outs[16];
	struct swt_replay_vma vma;
	struct swt_replay_input in;
	struct swt_replay_config cfg = {
		.policy = p, .policy_spec = p->name, .page_cluster = 3, .cache_pages = 8,
		.inactive_fraction = 0.5, .max_request_pages = 320, .layout_name = "traced",
	};
	unsigned long k, failed = 0;

	build_input(&in, areas, faults, outs, &vma, SWT_ARRAY_SIZE(faults));
	for (k = 1; k < 10000; k++) {
		struct swt_replay_result *r = NULL;
		struct swt_err err = { 0 };
		int ret;

		nr_allocs = 0;
		fail_at = k;
		ret = swt_replay_run(&in, &cfg, &r, &err);
		fail_at = 0;
		if (nr_allocs < k) {	/* the run needed fewer: it failed nothing */
			CHECK_INT(ret, 0);
			CHECK(r != NULL);
			swt_replay_result_free(r);
			break;
		}
		/* a policy's create() or on_miss() says only that it failed, not why */
		if (ret >= 0 || r || !err.msg[0]) {
			fprintf(stderr, "%s: allocation %lu failed: returned %d, %s, '%s'\n", p->name,
				k, ret, r ? "a result" : "no result", err.msg);
			check_failures++;
		}
		swt_replay_result_free(r);
		failed++;
	}
	/* the loop reached a run that succeeded, past allocations it did fail */
	CHECK(k < 10000);
	CHECK(failed > 10);
}

TEST(fixed_run_fails_cleanly_at_each_allocation)
{
	fail_each_allocation(&swt_policy_fixed);
}

TEST(vma_run_fails_cleanly_at_each_allocation)
{
	fail_each_allocation(&swt_policy_vma);
}

CHECK_MAIN
