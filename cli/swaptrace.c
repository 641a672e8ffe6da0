/*
 * swaptrace: the command-line entry point.  A thin dispatcher, git style:
 * `swaptrace VERB ARGS...` runs the command named VERB from the table;
 * each command lives in its own cmd-VERB.c and returns the exit status.
 */
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <unistd.h>

#include "cmd.h"
#include "strbuf.h"
#include "swaptrace/version.h"

static const struct swt_cmd commands[] = {
	{ "capture", cmd_capture, SWT_CMD_NEEDS_ROOT, "record swap activity on this host",
	  cmd_capture_usage },
	{ "ingest", cmd_ingest, 0, "decode blktrace/trace.dat files into a database",
	  cmd_ingest_usage },
	{ "info", cmd_info, 0, "summarise an ingested capture (blkparse-style)", cmd_info_usage },
	{ "replay", cmd_replay, 0, "replay swap-ins through readahead policies", cmd_replay_usage },
	{ "policies", cmd_policies, 0, "list readahead policies and their parameters",
	  cmd_policies_usage },
	{ "report", cmd_report, 0, "draw the charts (PNG, SVG) and index.html", cmd_report_usage },
};

static const struct swt_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * A message on one line whatever it quotes: a newline or other control
 * character in a path or name is written as \n, \t or \ooo.
 */
static void put_line(const char *verb, const char *msg)
{
	fprintf(stderr, "swaptrace: %s: ", verb);
	for (const char *p = msg; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == '\n')
			fputs("\\n", stderr);
		else if (ch == '\t')
			fputs("\\t", stderr);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(stderr, "\\%03o", ch);
		else
			fputc(ch, stderr);
	}
	fputc('\n', stderr);
}

int cli_fail(const char *verb, const struct swt_err *err)
{
	put_line(verb, err && err->code ? err->msg : swt_strerror(err ? err->code : SWT_EIO));
	return SWT_EXIT_FAIL;
}

/* "swaptrace: VERB: message" on stderr, whole however long the paths it names. */
static void say(const char *verb, const char *fmt, va_list ap)
{
	char small[512], *msg = small;
	va_list again;
	int len;

	va_copy(again, ap);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	if (len >= (int)sizeof(small)) {
		msg = malloc((size_t)len + 1);
		if (msg)
			vsnprintf(msg, (size_t)len + 1, fmt, again);
		else
			msg = small;	/* cut, rather than nothing */
	}
	va_end(again);
	put_line(verb, msg);
	if (msg != small)
		free(msg);
}

int cli_failf(const char *verb, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(verb, fmt, ap);
	va_end(ap);
	return status;
}

void cli_json_string(const char *s)
{
	cli_json_string_to(stdout, s);
}

void cli_json_string_to(FILE *f, const char *s)
{
	struct swt_sbuf b;

	swt_sbuf_init(&b);
	swt_sbuf_json(&b, s);
	fputs(b.oom ? "null" : b.s, f);
	swt_sbuf_release(&b);
}

void cli_unseen_swapins(char *buf, size_t len, int64_t zero, int64_t zswap)
{
	int n = 0;

	if (len)
		buf[0] = '\0';
	if (zero > 0)
		n = snprintf(buf, len, "swpin_zero %lld zero-filled page%s", (long long)zero,
			     zero == 1 ? "" : "s");
	if (zswap > 0 && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%szswpin %lld from zswap", n ? ", " : "",
			 (long long)zswap);
}

void cli_catch_stop_signals(void (*handler)(int), int flags, sigset_t *caught)
{
	static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		struct sigaction old;

		if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(stop_signals[i], &sa, NULL);
		if (caught)
			sigaddset(caught, stop_signals[i]);
	}
}

void cli_ignore_file_size_limit(void)
{
	signal(SIGXFSZ, SIG_IGN);
}

void cli_notef(const char *verb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(verb, fmt, ap);
	va_end(ap);
}

void cli_warn(const char *verb, const char *msg)
{
	cli_warnf(verb, "%s", msg);
}

void cli_warnf(const char *verb, const char *fmt, ...)
{
	char label[64];
	va_list ap;

	snprintf(label, sizeof(label), "%s: warning", verb);
	va_start(ap, fmt);
	say(label, fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
	const struct swt_cmd *c = find_cmd(verb);
	va_list ap;

	va_start(ap, fmt);
	say(verb, fmt, ap);
	va_end(ap);
	if (c)	/* the synopsis is the usage's first line */
		fprintf(stderr, "%.*s\n", (int)strcspn(c->usage, "\n"), c->usage);
	fprintf(stderr, "See 'swaptrace help %s'.\n", verb);
	return SWT_EXIT_USAGE;
}

int cli_bad_option(const char *verb, int c, char **argv)
{
	const char *opt = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':')
		return cli_usage_error(verb, "option '%s' needs a value", opt);
	if (!strncmp(opt, "--", 2)) {
		const char *eq = strchr(opt, '=');

		/* getopt_long sets optopt to the known option given a value it takes none of */
		if (eq && optopt)
			return cli_usage_error(verb, "option '%.*s' takes no value", (int)(eq - opt),
					       opt);
		return cli_usage_error(verb, "unknown option '%s'", opt);
	}
	if (optopt > 0 && optopt < 128)
		return cli_usage_error(verb, "unknown option '-%c'", optopt);
	return cli_usage_error(verb, "unknown option '%s'", opt);
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: swaptrace [--version] [--help] <command> [<args>]\n\n"
		   "Would swap-in have been faster with another readahead policy,\n"
		   "page-cluster value or swap layout?  Answered from real traces.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'swaptrace help <command>' or 'swaptrace <command> --help' for details.\n"
		   "Typical run:\n"
		   "   swaptrace capture -o capture-dir/ -- COMMAND ARGS...\n"
		   "   swaptrace ingest -o cap.db capture-dir/\n"
		   "   swaptrace info cap.db\n"
		   "   swaptrace replay --policy auto --policy oracle --page-cluster 0-5 cap.db\n"
		   "   swaptrace report cap.db\n");
}

int main(int argc, char **argv)
{
	const struct swt_cmd *c;
	int status;

	if (argc < 2) {
		usage(stderr);
		return SWT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return SWT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("swaptrace %s\n", SWT_VERSION);
		return SWT_EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		c = argc < 3 ? NULL : find_cmd(argv[2]);
		if (argc >= 3 && !c && strcmp(argv[2], "help"))
			return cli_failf("help", SWT_EXIT_USAGE, "'%s' is not a swaptrace command",
					 argv[2]);
		if (argc > 3)
			return cli_failf("help", SWT_EXIT_USAGE, "one command at a time ('%s' after "
					 "'%s')", argv[3], argv[2]);
		/* "help help" asks how help works: the general help says */
		if (!c) {
			usage(stdout);
			return SWT_EXIT_OK;
		}
		fputs(c->usage, stdout);
		return SWT_EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "swaptrace: '%s' is not a swaptrace command. See 'swaptrace --help'.\n",
			argv[1]);
		return SWT_EXIT_USAGE;
	}
	if (cli_wants_help(argc - 1, argv + 1)) {
		fputs(c->usage, stdout);
		return SWT_EXIT_OK;
	}
	if ((c->flags & SWT_CMD_NEEDS_ROOT) && geteuid() != 0)
		return cli_failf(c->name, SWT_EXIT_FAIL, "must be run as root");
	status = c->fn(argc - 1, argv + 1);
	/* output lost (a full disk) is a failure, not a silent success */
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		status = cli_failf(c->name, SWT_EXIT_FAIL, "cannot write the standard output: %s",
				   errno ? strerror(errno) : "write error");
	}
	return status;
}
