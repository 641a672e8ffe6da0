/*
 * Swap-entry probes: kprobe events in the group "swaptrace" that give the
 * swap entry per fault (swt_fault), per swap read (swt_read), per swap
 * cache hit (swt_ra_hit) and per swap-out (swt_swapout), with the field
 * names the trace.dat decoder looks for (`entry`, the swp_entry_t value as
 * u64, and `address`).  readahead-spec.md §8.
 *
 * Planning is pure: from the tracing README (does dynamic_events accept
 * kprobes?), the architecture and the kernel's function names (they move
 * between versions: swap_read_folio was swap_readpage, swap_writeout was
 * swap_writepage) it yields the definitions to create, or the reason there
 * are none, which the capture records in its metadata as
 * `probes none (<reason>)`.
 */
#ifndef SWT_CAPTURE_PROBES_H
#define SWT_CAPTURE_PROBES_H

#include <stddef.h>

#include "swaptrace/error.h"

#define SWT_PROBE_GROUP "swaptrace"
#define SWT_PROBES_MAX 4

struct swt_probe_def {
	const char *event;	/* "swt_fault", ... (static) */
	const char *function;	/* the kernel function probed (static) */
	const char *args;	/* fetch arguments (static) */
};

struct swt_probe_plan {
	struct swt_probe_def defs[SWT_PROBES_MAX];
	size_t nr;
	char reason[256];	/* why nr == 0, or which probes were left out */
};

/*
 * Plan the probes.  readme: the tracing README text; machine: uname's
 * machine ("x86_64"); has_function(name, ctx): whether /proc/kallsyms
 * lists the function.  Pure.
 */
void swt_probes_plan(const char *readme, const char *machine,
		     int (*has_function)(const char *name, void *ctx), void *ctx,
		     struct swt_probe_plan *plan);

/*
 * Which of the functions the plan may probe a kallsyms text lists (one
 * pass over /proc/kallsyms as read, or a fixture); swt_ksyms_has() is the
 * has_function callback with ctx pointing at it.  Pure.
 */
struct swt_ksyms {
	unsigned found;		/* bit per candidate function */
};
void swt_ksyms_scan(const char *text, size_t len, struct swt_ksyms *k);
int swt_ksyms_has(const char *name, void *ctx);

#endif
