/*
 * swaptrace capture: record swap activity on this host into a capture
 * directory (trace.dat, meta.txt, maps, blktrace files), for `swaptrace
 * ingest` here or elsewhere.  The signal handler only records the request;
 * the capture library decides what a stop means (see capture.h).
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "capture.h"
#include "cmd.h"
#include "util.h"

const char cmd_capture_usage[] =
	"usage: swaptrace capture -o DIR [--duration SECONDS] [--pid PID | --cgroup PATH]\n"
	"                         [--blktrace] [--buffer-kb KB] [-q] [-- COMMAND ARGS...]\n"
	"\n"
	"Record what swap does on this host (root): block I/O on the swap devices,\n"
	"the target's page faults and reclaim writes, swap-entry probes where the\n"
	"kernel has kprobes, the swap layout and the kernel's swap counters.\n"
	"\n"
	"With COMMAND, run it and record for its life; the exit status is the\n"
	"command's (127 or 126 when it cannot be run, as in a shell).  A first\n"
	"Ctrl-C/SIGTERM is passed on to the command and the tasks it started (once\n"
	"per process; a Ctrl-C at the terminal reached those in swaptrace's process\n"
	"group already), and recording goes on until it exits; a second one kills\n"
	"them and stops at once.  If an error stops the recording, the capture is\n"
	"written at once and the command goes on, as with --duration.\n"
	"Without COMMAND, record until SIGINT/SIGTERM or --duration.\n"
	"SIGHUP does the same, unless swaptrace was started ignoring it (nohup): then\n"
	"it and the command go on.\n"
	"\n"
	"options:\n"
	"  -o, --output DIR     capture directory (created; must not hold a capture)\n"
	"  -d, --duration S     stop recording after S seconds and write the capture; a\n"
	"                       command keeps running, and swaptrace waits for it\n"
	"  -p, --pid PID        follow this process and its children (those it\n"
	"                       has, and those it starts)\n"
	"  -c, --cgroup PATH    follow the tasks of this cgroup until it is removed\n"
	"                       (v1 or v2; absolute, or relative to the memory\n"
	"                       controller's mount)\n"
	"  -b, --blktrace       block I/O through the kernel's blk tracer, written as\n"
	"                       blktrace files DIR/blk/swap.blktrace.N (blkparse reads\n"
	"                       them); one such capture per host\n"
	"      --buffer-kb KB   ring buffer per CPU, for each of the two buffers (task\n"
	"                       events, block I/O): 64 or more, and at most half the\n"
	"                       memory available in all\n"
	"                       (default: sized for the swap rate)\n"
	"  -q, --quiet          no summary\n"
	"\n"
	"Nothing is left behind: tracing settings are restored and the private tracefs\n"
	"instances removed on every exit path.  What cannot be (an instance held open,\n"
	"tracefs unmounted while recording) is named and fails the capture: exit 1,\n"
	"whatever the command's status; the next capture puts it back.\n"
	"Open a capture with `swaptrace ingest -o cap.db DIR` or\n"
	"`trace-cmd report -i DIR/trace.dat`; the directory is described in\n"
	"docs/capture-format.md.\n";

static struct swt_capture_stop stop_request;

static void on_stop_signal(int sig, siginfo_t *info, void *context)
{
	(void)context;
	stop_request.signo = sig;
	stop_request.from_terminal = info && info->si_code == SI_KERNEL;
	stop_request.count++;
}

static void capture_note(void *ctx, int warning, const char *msg)
{
	int *quiet = ctx;

	if (warning)
		cli_warn("capture", msg);
	else if (!*quiet)
		fprintf(stderr, "swaptrace: capture: %s\n", msg);
}

static const char *end_text(enum swt_capture_end end, const struct swt_capture_opts *o)
{
	switch (end) {
	case SWT_CAPTURE_END_COMMAND: return "the command exited";
	case SWT_CAPTURE_END_DURATION: return "the duration elapsed";
	case SWT_CAPTURE_END_SIGNAL: return "stopped by a signal";
	case SWT_CAPTURE_END_TARGET: return o->cgroup ? "the cgroup was removed" : "the process exited";
	default: return "stopped by an error";
	}
}

static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	/* no SA_RESTART: a signal should cut a wait short */
	sa.sa_sigaction = on_stop_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/*
	 * SIGINT and SIGTERM stop a capture even where they came in ignored
	 * (a script's background job: 'kill -INT' is how it stops one); a
	 * SIGHUP that came in ignored (nohup) stays ignored, for the command too.
	 */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	{
		struct sigaction was;

		if (sigaction(SIGHUP, NULL, &was) < 0 || was.sa_handler != SIG_IGN)
			sigaction(SIGHUP, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
}

/*
 * What to do with the capture: ingest and report it -- or, when nothing was
 * swapped in while recording, why there is nothing to replay.
 */
static void say_next(const char *dir, long long pswpin)
{
	size_t len = strlen(dir);
	char *real = NULL;
	const char *base;

	if (pswpin <= 0) {
		cli_warn("capture", "nothing was swapped in while recording, so replay has nothing to "
				    "work with: give the workload less memory than it touches (a memory "
				    "cgroup limit) and capture again");
		return;
	}
	while (len > 1 && dir[len - 1] == '/')
		len--;
	/* "-o ." would suggest a database '..db' inside the capture: name it by its real path */
	for (base = dir + len; base > dir && base[-1] != '/'; base--)
		;
	if (((size_t)(dir + len - base) == 1 && base[0] == '.') ||
	    ((size_t)(dir + len - base) == 2 && !strncmp(base, "..", 2))) {
		real = realpath(dir, NULL);
		if (real) {
			dir = real;
			len = strlen(dir);
		}
	}
	/* a path the shell would need more than single quotes for is left to the user */
	if (!strchr(dir, '\'') && !strchr(dir, '\n'))
		fprintf(stderr, "swaptrace: capture: next: swaptrace ingest -o '%.*s.db' '%.*s' && "
			"swaptrace report '%.*s.db'\n", (int)len, dir, (int)len, dir, (int)len, dir);
	free(real);
}

int cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "blktrace", no_argument, NULL, 'b' },
		{ "buffer-kb", required_argument, NULL, 'B' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct swt_capture_opts o = { 0 };
	struct swt_capture_result res;
	struct swt_capture *cap = NULL;
	struct swt_err err = { 0 }, ferr = { 0 };
	int quiet = 0, c, run_ret, fin_ret, status;

	optind = 1;
	opterr = 0;
	/* '+': the command's own options are not ours */
	while ((c = getopt_long(argc, argv, "+:o:d:p:c:bq", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_failf("capture", SWT_EXIT_USAGE, "bad --output '': an empty path");
			o.out_dir = optarg;
			break;
		case 'd':
			/* a year at most: beyond 2^64 ns the deadline would wrap */
			if (swt_parse_double(optarg, &o.duration_s) || o.duration_s <= 0 ||
			    o.duration_s > 366.0 * 86400)
				return cli_failf("capture", SWT_EXIT_USAGE,
						 "bad --duration '%s': expected seconds > 0, a year at most",
						 optarg);
			break;
		case 'p':
			if (swt_parse_int(optarg, &o.pid) || o.pid <= 0)
				return cli_failf("capture", SWT_EXIT_USAGE, "bad --pid '%s'", optarg);
			break;
		case 'c':
			/* relative to the controller's mount, '' is its root: a script's unset variable */
			if (!optarg[0])
				return cli_failf("capture", SWT_EXIT_USAGE,
						 "bad --cgroup '': expected a cgroup's path");
			o.cgroup = optarg;
			break;
		case 'b':
			o.blktrace = 1;
			break;
		case 'B': {
			uint64_t kb;

			/* past what an int (and then 64 bits) holds, it is too large, not too small */
			if (optarg[0] && optarg[strspn(optarg, "0123456789")] == '\0' &&
			    (swt_parse_u64(optarg, &kb) || kb > UINT_MAX))
				return cli_failf("capture", SWT_EXIT_USAGE,
						 "bad --buffer-kb '%s': too large (KiB per CPU and buffer, "
						 "all of it pinned: at most half the memory available in all)",
						 optarg);
			if (swt_parse_u64(optarg, &kb) || kb < 64)
				return cli_failf("capture", SWT_EXIT_USAGE,
						 "bad --buffer-kb '%s': expected KiB >= 64", optarg);
			/* the capture says whether it is more than this host can pin */
			o.buffer_kb = (unsigned)kb;
			break;
		}
		case 'q':
			quiet = 1;
			break;
		default:
			return cli_bad_option("capture", c, argv);
		}
	}
	if (!o.out_dir)
		return cli_usage_error("capture", "no output directory given (-o DIR)");
	if (optind < argc)
		o.argv = argv + optind;
	if ((o.pid > 0) + (o.cgroup != NULL) + (o.argv != NULL) > 1)
		return cli_failf("capture", SWT_EXIT_USAGE,
				 "give one target: a COMMAND, --pid or --cgroup");
	o.note = capture_note;
	o.note_ctx = &quiet;

	install_handlers();
	if (swt_capture_create(&o, &cap, &err)) {
		cli_fail("capture", &err);
		/* as a shell says it: 127 not found, 126 found but not runnable */
		if (err.code == SWT_ENOCMD)
			return 127;
		if (err.code == SWT_ENOEXEC)
			return 126;
		return SWT_EXIT_FAIL;
	}
	if (!quiet)
		fprintf(stderr, "swaptrace: capture: recording into '%s'%s\n", o.out_dir,
			o.argv ? "" : o.duration_s > 0 ? "" : "; stop with Ctrl-C");
	run_ret = swt_capture_run(cap, &stop_request, &err);
	if (run_ret)
		cli_fail("capture", &err);
	/* said before the summary: the capture is written while the command goes on */
	if (swt_capture_command_running(cap) && !quiet)
		fprintf(stderr, "swaptrace: capture: recording stopped (%s); the command goes on "
			"while the capture is written\n", run_ret ? "an error" : "--duration");
	/* whatever stopped it, keep what was recorded */
	fin_ret = swt_capture_finish(cap, &res, &ferr);
	if (fin_ret)
		cli_fail("capture", &ferr);
	if (!quiet && (res.trace_dat_ok || !fin_ret)) {
		struct rusage ru;
		double cpu = 0;

		/* what recording cost this process (the command's time is its own) */
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		/* events read but not written are known only by decoding what was */
		fprintf(stderr, "swaptrace: capture: wrote '%s': %.2f s (%s), %.1f MiB of trace data, "
			"pswpin %lld, pswpout %lld, %lld lost events%s; swaptrace used %.2f s of CPU\n",
			o.out_dir, res.seconds, end_text(res.end, &o), (double)res.data_bytes / 1048576.0,
			(long long)res.pswpin, (long long)res.pswpout, (long long)res.lost_events,
			/* "0 lost events and those it could not write" read as if none were missing */
			res.end == SWT_CAPTURE_END_ERROR ?
				" (ingest also counts any it read but could not write)" : "",
			cpu);
	}
	if (!quiet && res.trace_dat_ok && !run_ret && !fin_ret)
		say_next(o.out_dir, res.pswpin);
	/* after a write error the count holds the blk records that could not be written */
	if (res.lost_events > 0 && res.end == SWT_CAPTURE_END_ERROR)
		cli_warnf("capture", "%lld events were lost (the ring buffers overflowed, "
			  "or they could not be written)", (long long)res.lost_events);
	else if (res.lost_events > 0)
		cli_warnf("capture", "%lld events were lost (the ring buffers overflowed); "
			  "try a larger --buffer-kb", (long long)res.lost_events);
	/*
	 * A --cgroup or --pid target the OOM killer ended just stops faulting,
	 * and the summary above reads like a quiet workload's.  The counter is
	 * machine-wide: a kill elsewhere is named as a possibility only.
	 */
	if (res.oom_kills > 0)
		cli_warnf("capture", "the kernel's OOM killer ended %lld task%s on this host while "
			  "recording (oom_kill in /proc/vmstat): if the workload was one, it stopped "
			  "swapping early%s", (long long)res.oom_kills, res.oom_kills == 1 ? "" : "s",
			  res.oom_victims_recorded ? " (swaptrace info names the victims)" : "");
	/*
	 * Zero-filled pages (6.12+) and pages zswap held come back without
	 * block I/O: no block trace shows them, so replay would lack them.
	 * Machine-wide counters: said as this host's, not the workload's.
	 */
	if (res.zero_swapins > 0 || res.zswap_swapins > 0) {
		char unseen[128];

		cli_unseen_swapins(unseen, sizeof(unseen), res.zero_swapins, res.zswap_swapins);
		cli_warnf("capture", "swap-ins on this host took no block I/O while recording "
			  "(/proc/vmstat: %s): the block trace shows none of them, so a replay of "
			  "this capture lacks those of the workload", unseen);
	}
	/* written while it runs: usable now, and safe from what happens to it */
	if (swt_capture_command_running(cap) && !quiet)
		fprintf(stderr, "swaptrace: capture: waiting for the command to exit (Ctrl-C passes "
			"on to it)\n");
	/* its status once it ends (it may have ended while the capture was written) */
	status = o.argv ? swt_capture_wait_command(cap, &stop_request) : -1;
	/* meta.txt, written before it ended, gets how it ended (its own error: the first one wins) */
	swt_err_clear(&ferr);
	if (o.argv && swt_capture_record_exit(cap, &ferr))
		cli_warnf("capture", "meta.txt does not say how the command ended: %s", ferr.msg);
	swt_capture_destroy(cap);
	if (run_ret || fin_ret)
		return SWT_EXIT_FAIL;
	if (status < 0)
		return SWT_EXIT_OK;
	/* as a shell reports it */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return SWT_EXIT_FAIL;
}
