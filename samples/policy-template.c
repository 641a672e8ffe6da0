/*
 * A copy-me readahead policy plugin for swaptrace: "forward" reads the
 * `pages` slots after the faulting one (no aligned block, no going back).
 *
 * Build it as a shared object against include/swaptrace/policy.h
 * (CMake builds this one as samples/libswt-policy-forward.so):
 *
 *	cc -shared -fPIC -I include -o libmine.so samples/policy-template.c
 *
 * and replay with it:
 *
 *	swaptrace replay --policy ./libmine.so:pages=8 cap.db
 *
 * The engine calls create() once per run, on_miss() on every fault that
 * missed the simulated swap cache, on_hit() when a fault used a page this
 * policy read ahead, and destroy() at the end.  swaptrace also tries
 * create() once before the runs, to refuse bad parameters up front, so a
 * side effect of it outside the process (a file written) happens once
 * more than there are runs (include/swaptrace/policy.h).  A plugin runs
 * in a child process: if it crashes, exits or stops that process
 * (SIGSTOP, or SIGTSTP left to its default action), swaptrace reports it,
 * killing a stopped one, and goes on unharmed; one that never returns
 * holds the replay until it is stopped (Ctrl-C), and its process ends
 * with swaptrace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swaptrace/policy.h"

struct forward {
	unsigned pages;		/* slots to read after the faulting one */
	unsigned long hits;	/* kept to show where per-run state lives */
};

static const struct swt_policy_param forward_params[] = {
	{ "pages", "4", "slots read after the faulting slot (1..63)" },
	{ NULL, NULL, NULL },
};

static void *forward_create(const struct swt_policy_env *env, const char *const *keys,
			    const char *const *values, unsigned nparams, char *err, size_t errlen)
{
	struct forward *f = calloc(1, sizeof(*f));
	char *end;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->pages = 4;
	for (unsigned i = 0; i < nparams; i++) {
		if (!strcmp(keys[i], "pages")) {
			unsigned long v = strtoul(values[i], &end, 10);

			/*
			 * The window lists the faulting slot and the pages after
			 * it, and holds 64 entries at least (policy.h): more
			 * would be cut at low page-cluster values only.
			 */
			if (*end || v < 1 || v > 63) {
				snprintf(err, errlen, "pages must be 1..63, not '%s'", values[i]);
				free(f);
				return NULL;
			}
			f->pages = (unsigned)v;
		}
	}
	return f;
}

static void forward_destroy(void *inst)
{
	free(inst);
}

static int forward_on_miss(void *inst, const struct swt_fault_info *fault, struct swt_window *win)
{
	struct forward *f = inst;

	win->kind = SWT_WINDOW_SLOTS;	/* slots on the faulting swap area */
	win->size = f->pages + 1;
	win->count = 0;
	for (unsigned i = 0; i <= f->pages && win->count < win->capacity; i++) {
		uint64_t slot = fault->slot + i;

		if (fault->area_slots && slot >= fault->area_slots)
			break;
		win->list[win->count++] = slot;
	}
	return 0;
}

static void forward_on_hit(void *inst, const struct swt_fault_info *fault)
{
	struct forward *f = inst;

	f->hits++;
}

const struct swt_policy swt_policy_plugin = {
	.abi_version = SWT_POLICY_ABI,
	.name = "forward",
	.summary = "read the next N slots after the faulting one",
	.params = forward_params,
	.create = forward_create,
	.destroy = forward_destroy,
	.on_miss = forward_on_miss,
	.on_hit = forward_on_hit,
};
