/*
 * swaptrace ingest: decode traces into a new database.  The database is
 * built in a temporary file next to the target and moved into place only
 * when everything succeeded.
 */
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "ingest.h"
#include "inputs.h"
#include "meta.h"
#include "util.h"

/*
 * A Ctrl-C or kill during a long ingest must not leave the half-built
 * temporary database behind: the handler removes it and dies of the same
 * signal, so the exit status still says what happened.  The path is copied
 * here because the store frees its own copy at commit; the pid check keeps
 * the forked trace.dat decoder, which inherits the handler, away from it.
 */
static char pending_db[PATH_MAX];
static volatile sig_atomic_t pending_db_set;
static pid_t ingest_pid;

static void drop_pending_db(int sig)
{
	if (pending_db_set && getpid() == ingest_pid)
		unlink(pending_db);
	raise(sig);	/* SA_RESETHAND: delivered with the default action on return */
}

/*
 * Handlers first, then the signals held off while the file is made and its
 * name recorded: a signal that arrives in between is delivered at
 * guard_pending_db() and finds the name.  Threads started meanwhile (the
 * database writer) keep them blocked, so they reach the main thread.
 */
static void guard_signals(sigset_t *saved)
{
	sigset_t block;

	ingest_pid = getpid();
	/* past ulimit -f, killed, it left its half-built temporary database */
	cli_ignore_file_size_limit();
	sigemptyset(&block);
	cli_catch_stop_signals(drop_pending_db, SA_RESETHAND, &block);
	pthread_sigmask(SIG_BLOCK, &block, saved);
}

static void guard_pending_db(const char *path, const sigset_t *saved)
{
	if (path && strlen(path) < sizeof(pending_db)) {
		memcpy(pending_db, path, strlen(path) + 1);
		pending_db_set = 1;
	}
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

const char cmd_ingest_usage[] =
	"usage: swaptrace ingest -o DB [--meta FILE] [--swap SPEC]... [--name NAME]\n"
	"                        INPUT...\n"
	"\n"
	"Decode swap traces into the SQLite database DB.  An existing swaptrace database\n"
	"(or empty file) at DB is replaced, with the replay runs stored in it (a warning\n"
	"says how many); any other file, or one of the inputs, is not.\n"
	"\n"
	"INPUT is any of:\n"
	"  DIR          a capture directory: its trace.dat, and blktrace files in it or\n"
	"               in DIR/blk when trace.dat holds no block events\n"
	"  FILE         a trace-cmd trace.dat (version 6 or 7, compressed or not), or a\n"
	"               blktrace binary file (record version 7 or 8, either byte order)\n"
	"  NAME         blktrace per-CPU files NAME.blktrace.0, .1, ... (as blkparse -i);\n"
	"               such files given one by one are read together, as their NAME\n"
	"\n"
	"options:\n"
	"  -o, --output DB      database to write\n"
	"  -m, --meta FILE      host facts (default: meta.txt in or beside the first\n"
	"                       INPUT, DIR's for DIR/blk/NAME); format in\n"
	"                       docs/capture-format.md\n"
	"  -s, --swap SPEC      state a swap area, replacing the metadata's; repeatable:\n"
	"                       MAJ:MIN[,start=SECTOR][,slots=N][,size=KIB][,prio=N]\n"
	"                       [,rotational=0|1][,sync=0|1][,path=P]\n"
	"                       start= is the partition's first sector when the trace\n"
	"                       shows the whole disk; rotational and sync left out\n"
	"                       are the metadata's for that device\n"
	"                       size= is /proc/swaps' Size; given with slots=, it\n"
	"                       must agree: slots = size / P + 1 (the header page),\n"
	"                       P the metadata's page_size in KiB, 4 without one\n"
	"  -n, --name NAME      capture name (default: the name of the directory the\n"
	"                       first input is or lies in, DIR for DIR/blk/NAME; a\n"
	"                       file given without a directory: its own name)\n"
	"  -q, --quiet          no summary line\n"
	"\n"
	"Without metadata or --swap, every device that carries I/O is taken as a swap\n"
	"area starting at sector 0, with a warning.  A stated area that gets no I/O, and\n"
	"swap-sized I/O on a stated area's device outside every area there, are warned\n"
	"about (with the devices that had I/O, and the pages outside); ingest goes on.\n";

static void ingest_warn(void *ctx, const char *msg)
{
	(void)ctx;
	cli_warn("ingest", msg);
}

/* SWT_TIMING: when ingest's last stages ended (the decoding's is timed here). */
static void report_finish_times(struct swt_ingest *ing)
{
	uint64_t rows_ns, facts_ns;

	swt_ingest_finish_times(ing, &rows_ns, &facts_ns);
	if (rows_ns)
		fprintf(stderr, "swaptrace: ingest: rows written at %.3f s\n", (double)rows_ns / 1e9);
	if (facts_ns)
		fprintf(stderr, "swaptrace: ingest: facts and indexes at %.3f s\n",
			(double)facts_ns / 1e9);
}

int cmd_ingest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "meta", required_argument, NULL, 'm' },
		{ "swap", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *meta_path = NULL, *name = NULL;
	char *found_meta = NULL, *default_name = NULL;
	const char **specs = NULL;
	size_t nr_specs = 0;
	struct swt_err err = { 0 };
	struct swt_meta *meta = NULL, *file_meta = NULL;
	struct swt_store *st = NULL;
	struct swt_ingest *ing = NULL;
	int quiet = 0, c, i, ret, status = SWT_EXIT_FAIL;
	int64_t old_runs;
	uint64_t t0 = swt_now_ns();
	sigset_t saved_mask;

	meta = swt_meta_alloc();
	specs = calloc((size_t)argc, sizeof(*specs));
	if (!meta || !specs) {
		swt_meta_free(meta);
		free(specs);
		return cli_failf("ingest", SWT_EXIT_FAIL, "out of memory");
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:m:s:n:q", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				status = cli_failf("ingest", SWT_EXIT_USAGE, "bad --output '': an empty path");
				goto out;
			}
			out = optarg;
			break;
		case 'm':
			meta_path = optarg;
			break;
		case 's':
			/* read once the metadata file is: its page_size sizes slots */
			specs[nr_specs++] = optarg;
			break;
		case 'n':
			/* the capture's name is what info and report call it by */
			if (!*optarg) {
				status = cli_failf("ingest", SWT_EXIT_USAGE,
						   "bad --name '': an empty capture name");
				goto out;
			}
			name = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			status = cli_bad_option("ingest", c, argv);
			goto out;
		}
	}
	if (!out) {
		status = cli_usage_error("ingest", "no output database given (-o DB)");
		goto out;
	}
	if (optind >= argc) {
		status = cli_usage_error("ingest", "no INPUT given");
		goto out;
	}
	if (!meta_path)
		meta_path = found_meta = swt_input_find_meta(argv[optind]);
	if (meta_path) {
		file_meta = swt_meta_alloc();
		if (!file_meta || swt_meta_parse_file(file_meta, meta_path, &err)) {
			status = cli_fail("ingest", &err);
			goto out;
		}
		/* a recording cut short says so where it is read, not only in meta.txt */
		if (swt_meta_ended_on_error(file_meta))
			cli_warnf("ingest", "'%s' says the capture ended on an error "
				  "(end error: a full disk, a device gone): the recording "
				  "stops early, and what it had read but not written is missing",
				  meta_path);
		meta->page_size = file_meta->page_size;
	}
	for (size_t k = 0; k < nr_specs; k++) {
		if (swt_meta_add_swap_spec(meta, specs[k], &err)) {
			status = cli_failf("ingest", SWT_EXIT_USAGE, "%s", err.msg);
			goto out;
		}
	}
	if (file_meta) {
		/* areas stated with --swap win over the file's */
		swt_meta_move_areas(file_meta, meta);
		swt_meta_free(meta);
		meta = file_meta;
		file_meta = NULL;
	}
	if (!name)
		name = default_name = swt_input_capture_name(argv[optind]);
	/* the database is renamed over its path at the end: never over what was read */
	for (i = optind; i < argc; i++) {
		if (swt_input_check_output(argv[i], out, &err)) {
			status = cli_fail("ingest", &err);
			goto out;
		}
	}
	if (meta_path && swt_input_check_output(meta_path, out, &err)) {
		status = cli_fail("ingest", &err);
		goto out;
	}

	/* replacing a database replaces the sweeps replayed into it: said, not silent */
	old_runs = swt_store_runs_at(out);
	guard_signals(&saved_mask);
	if (swt_store_create(out, &st, &err) || swt_ingest_alloc(st, meta, ingest_warn, NULL, &ing, &err)) {
		guard_pending_db(st ? swt_store_pending_path(st) : NULL, &saved_mask);
		status = cli_fail("ingest", &err);
		goto out;
	}
	guard_pending_db(swt_store_pending_path(st), &saved_mask);
	if (swt_ingest_inputs(ing, argv + optind, (size_t)(argc - optind), &err)) {
		status = cli_fail("ingest", &err);
		goto out;
	}
	if (getenv("SWT_TIMING"))
		fprintf(stderr, "swaptrace: ingest: decoded in %.3f s\n",
			(double)(swt_now_ns() - t0) / 1e9);
	ret = swt_ingest_finish(ing, meta, name, &err);
	if (getenv("SWT_TIMING"))
		report_finish_times(ing);
	if (ret || swt_store_commit(st, &err)) {
		status = cli_fail("ingest", &err);
		goto out;
	}
	pending_db_set = 0;
	if (old_runs > 0)
		cli_warnf("ingest", "replaced '%s', and with it the %lld replay run%s stored there",
			  out, (long long)old_runs, old_runs == 1 ? "" : "s");
	if (!quiet) {
		int64_t requests = swt_store_query_int(st, "SELECT count(*) FROM request", 0);
		int64_t events = swt_store_query_int(st, "SELECT sum(events) FROM source", 0);
		int64_t in = swt_store_query_int(st, "SELECT count(*) FROM swap_in", 0);
		int64_t outp = swt_store_query_int(st, "SELECT count(*) FROM swap_out", 0);

		printf("swaptrace: ingest: wrote '%s': %lld events, %lld requests, "
		       "%lld swap-in and %lld swap-out pages (%.2f s)\n", out, (long long)events,
		       (long long)requests, (long long)in, (long long)outp,
		       (double)(swt_now_ns() - t0) / 1e9);
	}
	status = SWT_EXIT_OK;
out:
	swt_ingest_free(ing);
	swt_store_destroy(st);
	swt_meta_free(meta);
	swt_meta_free(file_meta);
	free(specs);
	free(found_meta);
	free(default_name);
	return status;
}
