/*
 * swaptrace report: draw the charts of a database (ingested capture and
 * stored replay runs) as PNG and SVG, with index.html, and say where they
 * are.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "replay.h"
#include "report.h"
#include "swapsim.h"
#include "util.h"

const char cmd_report_usage[] =
	"usage: swaptrace report [-o DIR] [--format png,svg] [--run ID,...]\n"
	"                        [--policy NAME[:key=val,...]] [--no-replay] DB\n"
	"\n"
	"Draw what the capture and the stored replay runs say, as charts of 1200x700 px:\n"
	"  policy         accuracy, coverage and pages read per fault, per policy and\n"
	"                 swap device, with the traced kernel's counters for reference\n"
	"  sweep          coverage, pages read and read requests vs page-cluster 0..8\n"
	"  request-sizes  read request sizes, traced vs simulated, per swap device\n"
	"  timeline       swap-in and swap-out pages per second per device, shaded with\n"
	"                 a run's simulated hits and misses\n"
	"  heatmap        swap slot vs time of swap-outs and swap-ins per device\n"
	"  ra-window      readahead window sizes chosen per policy\n"
	"  layout         hits and merges on 1 vs N devices (when layout runs exist)\n"
	"  memory         coverage, accuracy and pages read vs the replay's memory\n"
	"                 (when a policy was replayed at several memory sizes)\n"
	"Each chart is written as NAME.png and/or NAME.svg plus NAME.json (its title,\n"
	"axes, series and messages); DIR/index.html shows them with the table of runs,\n"
	"under the answer in words, which is also printed: how many swap faults wait\n"
	"for a read as traced, with each policy's best setting, on other layouts.\n"
	"A database without replay runs is first replayed with the default set (none,\n"
	"fixed, adaptive, vma, auto and oracle at page-cluster 0-8; auto, fixed and\n"
	"oracle also at 50, 75, 125 and 150 % of the memory), which is stored\n"
	"once the whole report is written (a failed report leaves DB as it was).\n"
	"\n"
	"options:\n"
	"  -o, --output DIR     where to write (default: DB without .db, plus -report)\n"
	"  -f, --format LIST    png, svg or png,svg (default)\n"
	"  -r, --run ID,...     draw only these replay runs (repeatable)\n"
	"  -p, --policy NAME    the policy of the one-run charts (request sizes, timeline\n"
	"                       shading, layouts), a plugin by its path or file name;\n"
	"                       NAME:key=val,... one parameter set of it, as replay\n"
	"                       takes it; default: the first run that read ahead\n"
	"  -n, --no-replay      draw what is stored; do not replay the default set\n";

static int parse_formats(const char *text, unsigned *out)
{
	char *copy = swt_strdup(text), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	*out = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "png"))
			*out |= SWT_REPORT_PNG;
		else if (!strcmp(tok, "svg"))
			*out |= SWT_REPORT_SVG;
		else
			ret = -1;
	}
	free(copy);
	return ret || !*out ? -1 : 0;
}

/* Append the ids of "3,4,7" to *ids; -1 on a bad id or no memory. */
static int parse_runs(const char *text, int64_t **ids, size_t *nr, size_t *cap)
{
	char *copy = swt_strdup(text), *tok, *save = NULL;
	int ret = copy ? 0 : -1;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		int64_t id;

		if (swt_parse_i64(tok, &id) || id < 1 || swt_grow((void **)ids, cap, *nr + 1,
								   sizeof(**ids)))
			ret = -1;
		else
			(*ids)[(*nr)++] = id;
	}
	free(copy);
	return ret || !*nr ? -1 : 0;
}

/*
 * --policy NAME, or NAME:key=val,... as replay takes it: then its
 * parameters as replay stores them in run.params (defaults filled in, in
 * the policy's order, numbers in decimal), which the runs must have.
 */
static int policy_spec(const char *spec, char **name, char **params, int *given,
		       struct swt_err *err)
{
	size_t len = swt_policy_spec_name_len(spec);
	struct swt_policy_choice choice;
	char text[1024];
	int ret;

	*name = strndup(spec, len);
	if (!*name)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (!spec[len])
		return 0;
	/*
	 * A plugin's parameters are matched as given, each against its
	 * runs' stored ones: drawing stored runs needs no plugin file, and
	 * loading one would run its code.
	 */
	*given = !swt_policy_find(*name);
	if (*given) {
		if (swt_list_has_empty(spec + len + 1))
			return swt_error(err, SWT_EUSAGE, "policy '%s': an empty item in the "
					 "parameter list", spec);
		for (const char *item = spec + len + 1; *item;) {
			size_t n = strcspn(item, ",");
			const char *eq = memchr(item, '=', n);

			if (!eq || eq == item)
				return swt_error(err, SWT_EUSAGE, "policy '%s': parameter '%.*s' is "
						 "not key=value", spec, (int)n, item);
			item += n + (item[n] == ',');
		}
		*params = swt_strdup(spec + len + 1);
		return *params ? 0 : swt_error(err, SWT_ENOMEM, "out of memory");
	}
	ret = swt_policy_choose(spec, &choice, err);
	if (ret)
		return ret;
	swt_policy_params_text((const char *const *)choice.keys, (const char *const *)choice.values,
			       choice.nparams, text, sizeof(text));
	swt_policy_choice_release(&choice);
	*params = swt_strdup(text);
	return *params ? 0 : swt_error(err, SWT_ENOMEM, "out of memory");
}

/*
 * A Ctrl-C or kill while the report replays or draws: taken note of here,
 * and the report stops at its next run or chart and cleans up as any
 * failed one does (no staging directory, no directory it made, no runs
 * stored); then swaptrace dies of the same signal.  Killed at once it left
 * a staging directory of half-written charts behind each time.
 */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static int report_interrupted(void)
{
	return stop_signal != 0;
}

/* Die of the signal that stopped the report, so the exit status says so. */
static void die_of_stop_signal(void)
{
	int sig = stop_signal;

	if (!sig)
		return;
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * The end of a report that completed: a stop that came after its last
 * check (the report was moved into place whole all the same) still ends
 * it with that signal's status, said in a line, not 0.  The stop signals
 * get their default action back first, held off meanwhile, so that one
 * arriving after the flag is read ends it too.
 */
static void end_completed_report(const sigset_t *caught, const char *index)
{
	sigset_t block = *caught;

	/* what is taken note of before the default comes back is asked below */
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&block, sig) == 1)
			signal(sig, SIG_DFL);
	if (stop_signal) {
		fflush(stdout);
		cli_notef("report", "interrupted after the report was moved into place: '%s' "
			  "is complete", index);
		/* delivered with its default action as it is unblocked */
		raise(stop_signal);
	}
	pthread_sigmask(SIG_UNBLOCK, &block, NULL);
}

/* What the default sweep did: runs stored, or a capture with nothing to replay. */
struct default_sweep {
	size_t nr_runs;
	unsigned memory_percent;	/* the largest share of the memory replayed */
	int nothing_to_replay;
	int unwritable;			/* the database cannot take the runs */
};

/*
 * No runs stored yet: replay the default set so the charts have something
 * to say.  A capture with nothing to replay still gets its capture charts.
 */
static int run_default_sweep(struct swt_store *st, void *ctx, struct swt_err *err)
{
	struct default_sweep *ds = ctx;
	int ret = swt_store_check_writable(st, err);

	/* said before the sweep, not at its first insert */
	if (ret) {
		ds->unwritable = 1;
		return ret;
	}
	ret = swt_replay_default_sweep(st, &ds->nr_runs, &ds->memory_percent, report_interrupted,
				       err);

	if (ret && err->code == SWT_EUSAGE) {
		cli_warn("report", err->msg);
		ds->nothing_to_replay = 1;
		return 0;
	}
	return ret;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "run", required_argument, NULL, 'r' },
		{ "policy", required_argument, NULL, 'p' },
		{ "no-replay", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct swt_report_opts ro = { 0 };
	struct swt_report_summary sum;
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	int64_t *ids = NULL;
	size_t nr_ids = 0, cap_ids = 0;
	struct default_sweep defaults = { 0 };
	char *dir = NULL, *policy_name = NULL, *policy_params = NULL;
	int c, no_replay = 0, status = SWT_EXIT_FAIL;
	sigset_t caught;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:f:r:p:n", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				status = cli_failf("report", SWT_EXIT_USAGE, "bad --output '': an empty path");
				goto out;
			}
			ro.dir = optarg;
			break;
		case 'f':
			if (swt_list_has_empty(optarg)) {
				status = cli_failf("report", SWT_EXIT_USAGE,
						   "'%s': an empty item in the format list", optarg);
				goto out;
			}
			if (parse_formats(optarg, &ro.formats)) {
				status = cli_failf("report", SWT_EXIT_USAGE,
						   "'%s': formats are png, svg or png,svg", optarg);
				goto out;
			}
			break;
		case 'r':
			if (swt_list_has_empty(optarg)) {
				status = cli_failf("report", SWT_EXIT_USAGE,
						   "'%s': an empty item in the run list", optarg);
				goto out;
			}
			if (parse_runs(optarg, &ids, &nr_ids, &cap_ids)) {
				status = cli_failf("report", SWT_EXIT_USAGE,
						   "'%s': expected run ids like 3,4,7", optarg);
				goto out;
			}
			break;
		case 'p':
			free(policy_name);
			free(policy_params);
			policy_name = policy_params = NULL;
			ro.policy_params_given = 0;
			if (policy_spec(optarg, &policy_name, &policy_params, &ro.policy_params_given,
					&err)) {
				status = err.code == SWT_EUSAGE
						 ? cli_failf("report", SWT_EXIT_USAGE, "%s", err.msg)
						 : cli_fail("report", &err);
				goto out;
			}
			ro.policy = policy_name;
			ro.policy_params = policy_params;
			break;
		case 'n':
			no_replay = 1;
			break;
		default:
			status = cli_bad_option("report", c, argv);
			goto out;
		}
	}
	if (optind != argc - 1) {
		status = cli_usage_error("report", optind == argc ? "no DB given"
								  : "more than one DB given");
		goto out;
	}
	if (!ro.dir) {
		dir = swt_report_default_dir(argv[optind]);
		if (!dir) {
			status = cli_failf("report", SWT_EXIT_FAIL, "out of memory");
			goto out;
		}
		ro.dir = dir;
	}
	if (!nr_ids && !no_replay) {
		ro.run_defaults = run_default_sweep;
		ro.run_defaults_ctx = &defaults;
	}
	ro.params_are_defaults = swt_policy_params_are_defaults;
	ro.layout_canonical = swt_layout_canonical;
	ro.nothing_to_replay = swt_replay_nothing_to_replay;
	ro.multigen_lru = swt_replay_multigen_lru;
	ro.interrupted = report_interrupted;
	sigemptyset(&caught);
	cli_catch_stop_signals(on_stop_signal, SA_RESTART, &caught);
	/*
	 * past ulimit -f, killed, a report left its staging directory of
	 * half-written charts and the default runs' journal; failed, it
	 * removes the one and rolls back the other
	 */
	cli_ignore_file_size_limit();
	ro.run_ids = nr_ids ? ids : NULL;
	ro.nr_run_ids = nr_ids;
	/* the default replay set is stored in the database: open it writable then */
	if (swt_store_open(argv[optind], ro.run_defaults ? SWT_STORE_WRITE : SWT_STORE_READ, &st,
			   &err) && ro.run_defaults) {
		struct swt_err read_err = { 0 };

		/*
		 * Opening writable upgrades an older schema in place, which a
		 * file that cannot be written refuses; read, it may still draw
		 * its stored runs, and without runs --no-replay still works
		 */
		if (!swt_store_open(argv[optind], SWT_STORE_READ, &st, &read_err)) {
			if (swt_store_query_int(st, "SELECT count(*) FROM run", 0) > 0)
				err = (struct swt_err){ 0 };
			else
				defaults.unwritable = 1;
		}
	}
	if (err.code || swt_report_write(st, &ro, &sum, &err)) {
		/*
		 * the default runs are stored: a database that cannot take them
		 * has another way, said after the message, not inside err.msg,
		 * which a long path fills and the advice was cut from
		 */
		if (defaults.unwritable)
			status = cli_failf("report", SWT_EXIT_FAIL, "%s (the default runs are stored "
					   "in it: --no-replay draws without them)", err.msg);
		else
			status = cli_fail("report", &err);
		goto out;
	}
	/* the memory sizes the replay handles: 125 and 150 % of a large memory may not be */
	if (defaults.nr_runs)
		printf("swaptrace: report: no replay runs were stored: replayed and stored the "
		       "default set (%zu runs: none, fixed, adaptive, vma, auto, oracle at "
		       "page-cluster 0-8; auto, fixed, oracle at 50-%u %% of the memory%s)\n",
		       defaults.nr_runs, defaults.memory_percent,
		       defaults.memory_percent < 150 ? ", larger sizes being more than the replay "
						       "handles" : "");
	/* replay would refuse it as the default sweep did, which said why */
	if (!sum.runs && !defaults.nothing_to_replay) {
		/* the reason the run charts give, from swt_replay_nothing_to_replay */
		if (sum.nothing_to_replay[0])
			cli_warnf("report", "no replay runs stored, and %s", sum.nothing_to_replay);
		else
			cli_warn("report", "no replay runs stored: the policy charts say so "
					   "(run swaptrace replay first)");
	}
	/* as replay --approximate warns; the charts drawn from them carry a note */
	if (sum.approximate_runs)
		cli_warnf("report", "%zu of %zu runs replayed an approximate demand stream "
			  "(the capture's reads mix demand and readahead): see "
			  "docs/replay-model.md", sum.approximate_runs, sum.runs);
	/* as replay warns; the policy charts carry a note */
	if (sum.vma_runs_without_addresses)
		cli_warnf("report", "%zu vma run%s on a capture without fault addresses "
			  "(block events only): vma reads nothing ahead there",
			  sum.vma_runs_without_addresses, sum.vma_runs_without_addresses == 1 ? "" : "s");
	if (sum.auto_runs_without_addresses)
		cli_warnf("report", "%zu auto run%s on a capture without fault addresses "
			  "(block events only): auto uses cluster readahead there, where the traced "
			  "kernel used VMA readahead", sum.auto_runs_without_addresses,
			  sum.auto_runs_without_addresses == 1 ? "" : "s");
	/* the answer index.html opens with, for the terminal */
	if (sum.answer[0])
		printf("swaptrace: report: %s", sum.answer);
	printf("swaptrace: report: %zu charts from %zu replay run%s in '%s': open '%s'\n",
	       sum.charts, sum.runs, sum.runs == 1 ? "" : "s", ro.dir, sum.index);
	end_completed_report(&caught, sum.index);
	status = SWT_EXIT_OK;
out:
	swt_store_destroy(st);
	free(policy_name);
	free(policy_params);
	free(ids);
	free(dir);
	if (status != SWT_EXIT_OK)
		die_of_stop_signal();
	return status;
}
