/*
 * Policy "oracle": an upper bound.  Within the window limits of the
 * kernel's readahead modes (the aligned 1 << page-cluster block of cluster
 * readahead and, where the fault's address is known, a window of up to
 * 1 << min(page-cluster, 5) virtual pages inside the VMA and the 2 MiB
 * region, whichever of the two holds more pages a fault will use -- the
 * built-in policies may use either mode on any capture, and read ahead on
 * synchronous devices too) it reads exactly the pages a fault will use,
 * looking into the future through the engine, and the engine keeps those
 * pages cached until that fault: accuracy 1.0.  Its horizon is the
 * expected life of a readahead page (twice that at misses only), so pages
 * used far later -- which no real policy could keep -- are not counted.
 *
 * It reads at every fault, hits too (SWT_POLICY_READS_AT_HITS).  Reading
 * at misses only, as the kernel does (at=misses), it is no bound: its own
 * hits spare it misses, and with them the windows a later miss would have
 * read over pages swapped out since, so a policy that reads whole windows
 * can gain a few hits more (docs/replay-model.md, Policies).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

struct oracle_state {
	const struct swt_policy_env *env;
	int at_misses;		/* at=misses: no reads at hits */
};

static const struct swt_policy_param oracle_params[] = {
	{ "at", "faults", "faults: read at every fault, the bound; misses: only at misses, as the "
			  "kernel (no bound: a policy with more misses can gain a few hits)" },
	{ NULL, NULL, NULL },
};

static void *oracle_create(const struct swt_policy_env *env, const char *const *keys,
			   const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	struct oracle_state *o;
	int at_misses = 0;

	for (unsigned i = 0; i < nparams; i++) {
		if (strcmp(keys[i], "at"))
			continue;
		if (!strcmp(values[i], "misses")) {
			at_misses = 1;
		} else if (strcmp(values[i], "faults")) {
			snprintf(err, errlen, "at must be faults or misses, not '%s'", values[i]);
			return NULL;
		}
	}
	o = calloc(1, sizeof(*o));
	if (o) {
		o->env = env;
		o->at_misses = at_misses;
	}
	return o;
}

static void oracle_destroy(void *inst)
{
	free(inst);
}

static int oracle_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	const struct oracle_state *o = inst;
	/*
	 * How far ahead a page is worth reading.  Reading at every fault, a
	 * page whose use is further away than one life of a readahead page
	 * can be read by a later fault nearer it; reading at misses only,
	 * there may be no such fault, and it looks twice as far.  (Twice as
	 * far at every fault outgrows the inactive list at half the memory:
	 * the waiting pages are dropped unused, accuracy 0.63--0.88.)
	 */
	uint64_t lifetime = (o->at_misses ? 2 : 1) * o->env->readahead_lifetime(o->env);
	unsigned max = 1u << f->page_cluster, n, count;
	uint64_t block;

	win->count = 0;
	if (o->at_misses && (f->flags & SWT_FAULT_HIT))
		return 0;
	if (max <= 1) {
		win->kind = SWT_WINDOW_SLOTS;
		win->size = 1;
		win->list[win->count++] = f->slot;
		return 0;
	}
	/* the cluster window's pages a fault will use, the faulting one too */
	count = swt_cluster_block(f->slot, f->area_slots, max, win->capacity, &block);
	win->kind = SWT_WINDOW_SLOTS;
	n = 0;
	for (unsigned i = 0; i < count; i += 64) {
		uint64_t first = block + i;
		unsigned k = count - i < 64 ? count - i : 64;
		uint64_t used = swt_replay_slots_used_within(o->env, f->area, first, k, lifetime);

		if (f->slot - first < k)
			used |= (uint64_t)1 << (f->slot - first);
		for (; used; used &= used - 1)
			win->list[n++] = first + (uint64_t)__builtin_ctzll(used);
	}
	win->count = n;
	/*
	 * The window size it records is what it chose to read: its limit is
	 * the same on every miss, and a histogram of it said "8 pages, always"
	 * of a policy that reads a few.
	 */
	win->size = n;
	if (f->flags & SWT_FAULT_VPAGE_KNOWN) {
		/* any placement the kernel could choose: the best window of max pages */
		uint64_t pmd = (uint64_t)1 << (21 - f->page_shift), lo, hi, best, start, end, used;
		unsigned best_n = 0, cluster_n = n;

		if (max > 32)
			max = 32;
		lo = f->vpage & ~(pmd - 1);
		hi = lo + pmd;
		if (f->vma_end > f->vma_start) {
			if (lo < f->vma_start)
				lo = f->vma_start;
			if (hi > f->vma_end)
				hi = f->vma_end;
		}
		start = f->vpage + 1 >= max ? f->vpage + 1 - max : 0;
		if (start < lo)
			start = lo;
		/*
		 * Every start from `start` to the faulting page covers
		 * [start, f->vpage + max) at most, under 64 pages: each page's
		 * use is looked up once, into a mask, and each window counted
		 * off it.  The faulting page is not counted: it is read anyway.
		 */
		end = f->vpage + max < hi ? f->vpage + max : hi;
		used = end > start ? swt_replay_vpages_used_within(o->env, f->pid, start,
								   (unsigned)(end - start), lifetime) : 0;
		if (f->vpage - start < 64)
			used &= ~((uint64_t)1 << (f->vpage - start));
		if (!used && cluster_n >= 1)
			return 0;	/* no window holds more than the faulting page: as below */
		best = start;
		for (unsigned k = 0; k < max; k++)
			best_n += used >> k & 1;
		for (uint64_t from = start + 1, c = best_n; from <= f->vpage; from++) {
			/* slid by a page: the one left behind out, the one reached in */
			c += (used >> (from - start + max - 1) & 1) - (used >> (from - start - 1) & 1);
			if (c > best_n) {
				best_n = (unsigned)c;
				best = from;
			}
		}
		/* the cluster window's count includes the faulting page; a tie keeps it */
		if (cluster_n >= best_n + 1)
			return 0;
		win->kind = SWT_WINDOW_VPAGES;
		win->count = 0;
		for (uint64_t vp = best; vp < best + max && vp < end && win->count < win->capacity; vp++)
			if (vp == f->vpage || (used >> (vp - start) & 1))
				win->list[win->count++] = vp;
		win->size = win->count;
	}
	return 0;
}

const struct swt_policy swt_policy_oracle = {
	.abi_version = SWT_POLICY_ABI,
	.flags = SWT_POLICY_ORACLE | SWT_POLICY_READS_AT_HITS,
	.name = "oracle",
	.summary = "bound: within the kernel's window limits, read at every fault (hits too) only "
		   "pages faulted before they would be evicted",
	.params = oracle_params,
	.create = oracle_create,
	.destroy = oracle_destroy,
	.on_miss = oracle_on_miss,
};
