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
	int on_tracefs;		/* a tracefs file: gone means unmounted, not removed */
};

struct swt_knobs {
	struct swt_knob *v;
	size_t n, cap;
	int journal_fd;		/* crash journal, or -1 */
	char *journal_path;
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
 * removed meanwhile) have nothing left to restore and are skipped, but for
 * tracefs files: tracefs unmounted under us, the kernel still holds the
 * value, and that is a failure.  Goes on after a failure and returns the
 * first one.
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

/*
 * The crash journal.  A capture killed by SIGKILL or the OOM killer runs no
 * restore at all, and what it leaves is not harmless: its instances keep
 * recording (every page fault and block I/O of the host pays for it) and a
 * blk tracer keeps the top-level buffer.  So every change is also appended
 * to DIR/capture-PID.undo before it is made -- each knob's original value,
 * each tracefs instance directory about to be created -- and the capture
 * holds the file flock()ed while it lives.  The lock dies with the
 * process, which is how the next capture tells a dead owner's journal
 * from a running capture's (swt_knobs_recover).
 */
#define SWT_UNDO_DIR "/run/swaptrace"

/* Start journaling to DIR/capture-PID.undo (DIR made 0700 if missing). */
int swt_knobs_journal_open(struct swt_knobs *k, const char *dir, struct swt_err *err);
/* Journal a directory about to be made (a tracefs instance): recovery removes it. */
int swt_knobs_journal_mkdir(struct swt_knobs *k, const char *path, struct swt_err *err);
/* Journal tracefs mounted at path by this capture: recovery unmounts it, once unused. */
int swt_knobs_journal_mount(struct swt_knobs *k, const char *path, struct swt_err *err);
/* Everything was put back: delete the journal.  No-op without one. */
void swt_knobs_journal_close(struct swt_knobs *k);
/*
 * Some of it could not be put back: leave the journal, unlocked, for the
 * next capture to replay as a dead capture's.  No-op without one.
 */
void swt_knobs_journal_keep(struct swt_knobs *k);

/*
 * A tracefs mounted by a capture, shared.  Captures run side by side, and
 * the one that mounted tracefs may end while others still use it: it was
 * unmounted under them (or, busy, left mounted for good).  Every capture
 * holds DIR/tracefs.users shared while it uses tracefs; DIR/tracefs.mounted
 * names a tracefs a capture mounted; the capture that finds no other user
 * when it is done unmounts it.  Checks and mounts are made under
 * DIR/tracefs.mutex.  The calls return -1 where DIR cannot be used (the
 * caller goes on alone, as before).
 */
int swt_tracefs_mutex_lock(const char *dir);		/* fd to close, or -1 */
int swt_tracefs_users_join(const char *dir);		/* fd held while tracefs is used, or -1 */
void swt_tracefs_mark_mounted(const char *dir, const char *path);
/*
 * With the mutex held: leave (users_fd closed; -1: none held) and, when no
 * capture uses tracefs any more, unmount the one a capture mounted (the
 * mark names the mount; path when there is no mark).  1 unmounted, 2 a
 * capture still uses it, 0 nothing of ours to unmount, -1 umount failed
 * (errno; EBUSY: in use outside swaptrace, the mark kept for a later
 * capture to try again).
 */
int swt_tracefs_leave(const char *dir, int users_fd, const char *path);

/*
 * Replay the journals in DIR whose capture is gone: knobs written back and
 * directories removed, newest first, then the journal deleted.  A knob
 * that no longer holds a value the dead capture wrote is someone's since
 * and is left as it is; while someone else's blk trace runs (a disk the
 * dead capture did not trace is traced), the top-level tracing knobs are
 * theirs to use, and the journal keeps them for a later capture.  A journal
 * with knobs is replayed only while holding the flock on `shared_lock`
 * (the blk tracer's lock: its knobs are the top-level ones, and a live
 * --blktrace capture must not have them reset under it); when that is
 * busy the journal is left for later.  Each journal handled (or left) is
 * described to `note`.  Returns the number of journals replayed.
 */
typedef void (*swt_knobs_note_fn)(void *ctx, int warning, const char *msg);
int swt_knobs_recover(const char *dir, const char *shared_lock, swt_knobs_note_fn note,
		      void *ctx);

/* Read a whole small file into a NUL-terminated string (caller frees); NULL + errno. */
char *swt_read_text(const char *path, size_t *len);

#endif
