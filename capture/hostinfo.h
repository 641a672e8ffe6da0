/*
 * Host facts a capture records in meta.txt: the /proc/vmstat swap
 * counters before and after, the readahead knobs, memory, kernel, and the
 * writer of the metadata file itself (format: docs/capture-format.md).
 */
#ifndef SWT_CAPTURE_HOSTINFO_H
#define SWT_CAPTURE_HOSTINFO_H

#include <stdint.h>
#include <stdio.h>

#include "swaptrace/error.h"

/*
 * The counters kept, in this order.  oom_kill: a workload the OOM killer
 * ended stopped swapping early, which the trace alone does not tell.
 */
#define SWT_VMSTAT_NAMES \
	{ "pswpin", "pswpout", "swap_ra", "swap_ra_hit", "pgmajfault", "pgfault", \
	  "swpin_zero", "swpout_zero", "zswpin", "zswpout", "oom_kill" }
#define SWT_VMSTAT_COUNT 11
#define SWT_VMSTAT_SWPIN_ZERO 6
#define SWT_VMSTAT_ZSWPIN 8
#define SWT_VMSTAT_OOM_KILL 10

struct swt_vmstat {
	int64_t v[SWT_VMSTAT_COUNT];	/* -1 when the kernel has no such counter */
};

/* Pick the counters out of /proc/vmstat text.  Pure. */
void swt_vmstat_parse(const char *text, struct swt_vmstat *vs);
/* Read /proc/vmstat (root prefix for tests: "" on a live host). */
int swt_vmstat_read(const char *root, struct swt_vmstat *vs, struct swt_err *err);
const char *swt_vmstat_name(unsigned i);

/* A number from a one-value file (sysctl, sysfs); -1 when unreadable. */
int64_t swt_read_number(const char *path);

/* Quote an argv for a shell, one line (caller frees). */
char *swt_shell_join(char *const *argv);

#endif
