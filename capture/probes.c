/*
 * Planning the swap-entry probes (probes.h).
 *
 * The fetch arguments read the swap entry where each function has it:
 * swapin_readahead(swp_entry_t entry, gfp_t, struct vm_fault *vmf) gets it
 * as its first argument, with the faulting address at vmf->address
 * (offset 24 since the vm_fault fields were grouped in 5.14); the folio
 * and page functions find it in folio->swap / page->private (offset 40 on
 * 64-bit).  Offsets are x86_64's; other architectures get no probes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "util.h"

struct probe_choice {
	const char *event;
	const char *functions[2];	/* newest name first */
	const char *args;
};

static const struct probe_choice choices[] = {
	{ "swt_fault", { "swapin_readahead", NULL }, "entry=$arg1:x64 address=+24($arg3):x64" },
	{ "swt_read", { "swap_read_folio", "swap_readpage" }, "entry=+40($arg1):x64" },
	{ "swt_ra_hit", { "swap_update_readahead", NULL }, "entry=+40($arg1):x64 address=$arg3:x64" },
	{ "swt_swapout", { "swap_writeout", "swap_writepage" }, "entry=+40($arg1):x64" },
};

/* Every function name in choices, for the kallsyms scan. */
static const char *candidate(unsigned i)
{
	unsigned k = 0;

	for (size_t c = 0; c < SWT_ARRAY_SIZE(choices); c++)
		for (size_t f = 0; f < 2; f++)
			if (choices[c].functions[f] && k++ == i)
				return choices[c].functions[f];
	return NULL;
}

void swt_ksyms_scan(const char *text, size_t len, struct swt_ksyms *k)
{
	const char *p = text, *end = text + len;

	k->found = 0;
	while (p < end) {
		/* "ffffffff815ea4a0 T do_swap_page" (modules add "\t[mod]") */
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *sp, *name;
		size_t nlen;

		if (!eol)
			eol = end;
		sp = memchr(p, ' ', (size_t)(eol - p));
		if (sp && eol - sp > 3 && (sp[1] == 'T' || sp[1] == 't') && sp[2] == ' ') {
			name = sp + 3;
			nlen = strcspn(name, " \t\n");
			if (name + nlen > eol)
				nlen = (size_t)(eol - name);
			for (unsigned i = 0; candidate(i); i++)
				if (strlen(candidate(i)) == nlen && !memcmp(name, candidate(i), nlen))
					k->found |= 1u << i;
		}
		p = eol + 1;
	}
}

int swt_ksyms_has(const char *name, void *ctx)
{
	const struct swt_ksyms *k = ctx;

	for (unsigned i = 0; candidate(i); i++)
		if (!strcmp(name, candidate(i)))
			return !!(k->found & (1u << i));
	return 0;
}

/* "uprobe and eprobe": what the README says dynamic_events does accept. */
static void accepted(const char *readme, char *out, size_t size)
{
	int u = strstr(readme, "place (uprobe)") != NULL;
	int e = strstr(readme, "e[:[<group>/][<event>]]") != NULL;

	if (u && e)
		snprintf(out, size, "dynamic_events accepts uprobe and eprobe definitions only");
	else if (u)
		snprintf(out, size, "dynamic_events accepts uprobe definitions only");
	else if (e)
		snprintf(out, size, "dynamic_events accepts eprobe definitions only");
	else
		snprintf(out, size, "this kernel has no kprobe or fprobe events");
}

void swt_probes_plan(const char *readme, const char *machine,
		     int (*has_function)(const char *name, void *ctx), void *ctx,
		     struct swt_probe_plan *plan)
{
	char missing[160] = "";

	memset(plan, 0, sizeof(*plan));
	if (!strstr(readme, "place (kprobe)") && !strstr(readme, "kprobe_events")) {
		char why[128];

		accepted(readme, why, sizeof(why));
		snprintf(plan->reason, sizeof(plan->reason), "no kprobe events: %s", why);
		return;
	}
	if (strcmp(machine, "x86_64")) {
		snprintf(plan->reason, sizeof(plan->reason),
			 "probe arguments are defined for x86_64 only, not %s", machine);
		return;
	}
	if (!strstr(readme, "$arg<N>")) {
		snprintf(plan->reason, sizeof(plan->reason),
			 "kprobe events here cannot fetch function arguments ($arg<N>)");
		return;
	}
	for (size_t c = 0; c < SWT_ARRAY_SIZE(choices); c++) {
		const char *fn = NULL;

		for (size_t f = 0; f < 2 && !fn; f++)
			if (choices[c].functions[f] && has_function(choices[c].functions[f], ctx))
				fn = choices[c].functions[f];
		if (!fn) {
			size_t len = strlen(missing);

			snprintf(missing + len, sizeof(missing) - len, "%s%s", len ? ", " : "",
				 choices[c].event);
			continue;
		}
		plan->defs[plan->nr].event = choices[c].event;
		plan->defs[plan->nr].function = fn;
		plan->defs[plan->nr].args = choices[c].args;
		plan->nr++;
	}
	if (!plan->nr)
		snprintf(plan->reason, sizeof(plan->reason),
			 "none of the probed swap functions is in /proc/kallsyms");
	else if (missing[0])
		snprintf(plan->reason, sizeof(plan->reason), "no function in /proc/kallsyms for %s",
			 missing);
}
