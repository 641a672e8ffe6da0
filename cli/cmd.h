/*
 * The command table shared by the dispatcher (swaptrace.c) and the
 * commands (cmd-*.c), plus the few output helpers every command uses.
 */
#ifndef SWT_CMD_H
#define SWT_CMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "swaptrace/error.h"

/* Exit statuses: distinct so scripts can tell a usage slip from bad data. */
enum {
	SWT_EXIT_OK = 0,
	SWT_EXIT_FAIL = 1,	/* bad input, failed operation */
	SWT_EXIT_USAGE = 2,	/* bad command line */
};

enum {
	SWT_CMD_NEEDS_ROOT = 1 << 0,
};

struct swt_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const char *summary;
	const char *usage;	/* full help text */
};

int cmd_capture(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_policies(int argc, char **argv);
int cmd_report(int argc, char **argv);

extern const char cmd_capture_usage[];
extern const char cmd_ingest_usage[];
extern const char cmd_info_usage[];
extern const char cmd_replay_usage[];
extern const char cmd_policies_usage[];
extern const char cmd_report_usage[];

/* "swaptrace: VERB: message" on stderr; returns SWT_EXIT_FAIL. */
int cli_fail(const char *verb, const struct swt_err *err);
/* "swaptrace: VERB: printf-message" on stderr; returns status. */
int cli_failf(const char *verb, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "swaptrace: VERB: printf-message" on stderr: a note, no failure. */
void cli_notef(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "swaptrace: VERB: warning: message" on stderr. */
void cli_warn(const char *verb, const char *msg);
void cli_warnf(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * A command-line slip: "swaptrace: VERB: message", then the verb's synopsis
 * and where the full help is, on stderr; returns SWT_EXIT_USAGE.
 */
int cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The same for what getopt_long() returned on a bad option (c is '?' or
 * ':', with opterr = 0 and optstring starting with ':').
 */
int cli_bad_option(const char *verb, int c, char **argv);
/* True when argv holds -h or --help before any "--". */
int cli_wants_help(int argc, char **argv);
/* s as a JSON string, quoted and escaped, on stdout; on f. */
void cli_json_string(const char *s);
void cli_json_string_to(FILE *f, const char *s);
/*
 * The swap-ins no block trace shows (/proc/vmstat deltas; -1 or 0: none
 * said), as "swpin_zero N zero-filled pages, zswpin N from zswap" into buf.
 */
void cli_unseen_swapins(char *buf, size_t len, int64_t zero, int64_t zswap);

/*
 * Catch the signals that ask a command to stop (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT) with handler and sa_flags flags, but those the caller ignores
 * (nohup, a background job), which stay ignored; those caught are added
 * to *caught when it is given.
 */
void cli_catch_stop_signals(void (*handler)(int), int flags, sigset_t *caught);

/*
 * Ignore SIGXFSZ, so that a write past the file-size limit (ulimit -f)
 * fails with EFBIG, reported and cleaned up like a full disk, instead of
 * killing the command with its temporary files and journal left behind.
 * For the commands that write files; a child exec'd afterwards inherits it.
 */
void cli_ignore_file_size_limit(void);

#endif
