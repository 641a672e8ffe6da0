/*
 * Error codes and the error report every swaptrace library fills in.
 *
 * Libraries never print or exit: they return a negative swt_errno and, when
 * the caller passed a struct swt_err, a one-line message that names the
 * subject (file, offset, device...).  The command line decides how to tell
 * the user.  The list below is the single source of codes and their generic
 * descriptions (swt_strerror()).
 */
#ifndef SWAPTRACE_ERROR_H
#define SWAPTRACE_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWT_ERRORS(E)                                                        \
	E(OK, "success")                                                     \
	E(NOMEM, "out of memory")                                            \
	E(IO, "input/output error")                                          \
	E(NOENT, "no such file or device")                                   \
	E(USAGE, "invalid argument")                                         \
	E(FORMAT, "corrupt or truncated input")                              \
	E(VERSION, "unsupported format version")                             \
	E(DB, "database error")                                              \
	E(CRASH, "decoder crashed")                                          \
	E(PLUGIN, "policy plugin error")                                     \
	E(PERM, "permission denied")                                         \
	E(NOTSUP, "not supported by this kernel or build")                   \
	E(BUSY, "resource busy")                                             \
	E(STATE, "invalid state")                                            \
	E(INTR, "interrupted")                                               \
	E(NOCMD, "command not found")                                        \
	E(NOEXEC, "command found but not runnable")

#define SWT_ERRNO_ENUM(name, text) SWT_E##name,
enum swt_errno { SWT_ERRORS(SWT_ERRNO_ENUM) SWT_E__COUNT };
#undef SWT_ERRNO_ENUM

/* Generic description of a code (positive or negative); never NULL. */
const char *swt_strerror(int code);

/*
 * A filled-in error: code is positive (an enum swt_errno), msg is one line.
 * Room for a few full paths: a message that names a database and two
 * plugins under deep directories must still reach its advice.
 */
struct swt_err {
	int code;
	char msg[4096];
};

/*
 * Record an error in err (which may be NULL) and return -code, so library
 * code can write `return swt_error(err, SWT_EFORMAT, "'%s': ...", path);`.
 * The first error recorded wins: a later call on a filled report only
 * returns -code, so the root cause is what the user sees.  A message
 * longer than msg keeps its start and its end (the cause), with U+2026 in
 * UTF-8 for the middle.
 */
int swt_error(struct swt_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int swt_verror(struct swt_err *err, int code, const char *fmt, va_list ap);

/* Forget a recorded error (before retrying an operation, say). */
void swt_err_clear(struct swt_err *err);

#ifdef __cplusplus
}
#endif

#endif
