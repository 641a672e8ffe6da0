/*
 * The undo log of a capture: every host setting it changes (a tracefs or
 * sysfs file) is recorded with its original value before the first write,
 * and everything is written back in reverse order on every exit path.
 * Only values we actually changed are restored, so a knob nobody touched
 * stays byte-for-byte what it was.
 */
#ifndef SWT_CAPTURE_KNOBS_H
#define SWT_CAPTURE_KNOBS_H

#include <stddef.h>

#include "swaptrace/error.h"

struct swt_knob {
	char *path;		/* absolute path of the file */
	char *orig;		/* value to write back */
	int changed;		/* written by us: restore it */
};

struct swt_knobs {
	struct swt_knob *v;
	size_t n, cap;
};

void swt_knobs_init(struct swt_knobs *k);
/* Frees the log without restoring anything (after swt_knobs_restore). */
void swt_knobs_release(struct swt_knobs *k);

/*
 * Write value to path, remembering the original value the first time the
 * path is set.  A value equal to the current one is not written (and needs
 * no restore).  Errors name the file and the kernel's reason.
 */
int swt_knobs_set(struct swt_knobs *k, const char *path, const char *value,
		  struct swt_err *err);

/*
 * Restore every changed knob, newest first.  Files that vanished (a device
 * removed meanwhile) have nothing left to restore and are skipped.  Goes on
 * after a failure and returns the first one.
 */
int swt_knobs_restore(struct swt_knobs *k, struct swt_err *err);

/*
 * The value a tracefs file should be restored to, from what reading it
 * returned: the trailing newline dropped, current_tracer and trace_clock
 * style lists reduced to the selected word ("[local] global" -> "local"),
 * and an unexpanded buffer size "7 (expanded: 1408)" taken as the size
 * it expands to (1408), since the kernel cannot shrink a buffer back to
 * unexpanded.  Pure; returns a new string (caller frees) or NULL.
 */
char *swt_knob_restore_value(const char *text);

/* Read a whole small file into a NUL-terminated string (caller frees); NULL + errno. */
char *swt_read_text(const char *path, size_t *len);

#endif
