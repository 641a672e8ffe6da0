/*
 * The report: make sure runs exist (the caller's default replay set), load
 * what the charts share, draw every chart that applies in the chosen
 * formats, and write the index page that puts them together.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report-int.h"
#include "strbuf.h"
#include "util.h"

static const struct {
	const char *name;	/* file stem: NAME.png, NAME.svg, NAME.json */
	const char *heading;	/* short name in the index */
	const char *what;	/* the question the chart answers, for the index */
	int (*write)(struct swt_report_ctx *rc, struct swt_chart_meta **meta, struct swt_err *err);
	const char *skipped;	/* why, when the chart does not apply */
} charts[] = {
	{ "policy", "Policy comparison",
	  "Which readahead policy reads least and hits most on each swap device?",
	  swt_chart_policy_write, NULL },
	{ "sweep", "page-cluster sweep",
	  "How do coverage, pages read and read requests change with page-cluster?",
	  swt_chart_sweep_write,
	  "Not drawn: the compared runs are all at one page-cluster, which draws no trend "
	  "(swaptrace replay -c 0-8)." },
	{ "request-sizes", "Read request sizes",
	  "Which read request sizes did the kernel issue, and which would the replayed policy?",
	  swt_chart_reqsize_write, NULL },
	{ "timeline", "Timeline",
	  "When did the capture swap, and when would readahead have hit?",
	  swt_chart_timeline_write, NULL },
	{ "heatmap", "Slot heat map",
	  "Where on each device were pages written and read back (locality)?",
	  swt_chart_heatmap_write, NULL },
	{ "ra-window", "Readahead windows",
	  "Which readahead window sizes does each policy choose?",
	  swt_chart_window_write, NULL },
	{ "layout", "Layout comparison",
	  "Does spreading swap over more devices cost hits and merges?",
	  swt_chart_layout_write,
	  "Not drawn: no replay run on a simulated swap layout (a layout other than "
	  "'traced') is stored." },
	{ "memory", "Memory",
	  "How much do the answers depend on the memory the replay gives the traced task?",
	  swt_chart_memory_write,
	  "Not drawn: no policy was replayed at several memory sizes on the traced layout "
	  "(swaptrace replay --cache-pages 50%,100%,150%)." },
};

char *swt_report_default_dir(const char *db_path)
{
	size_t len = strlen(db_path);
	char *dir;

	while (len > 1 && db_path[len - 1] == '/')
		len--;
	if (len > 3 && !strncmp(db_path + len - 3, ".db", 3) && db_path[len - 4] != '/')
		len -= 3;
	dir = malloc(len + sizeof("-report"));
	if (!dir)
		return NULL;
	memcpy(dir, db_path, len);
	memcpy(dir + len, "-report", sizeof("-report"));
	return dir;
}

/*
 * The directories make_dir made, each as the length of the output path's
 * prefix that names it, shallowest first: a report that fails removes
 * them and only them.  Not "every component below the first one made":
 * in a/../old/new, old existed before.
 */
struct made_dirs {
	size_t *lens;
	size_t nr, cap;
};

/* mkdir -p, noting in *made each directory made here. */
static int make_dir(const char *dir, struct made_dirs *made, struct swt_err *err)
{
	char *path = swt_strdup(dir);
	struct stat sb;
	int ret = 0;

	if (!path)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (char *p = path + 1;; p++) {
		char saved = *p;

		if (*p != '/' && *p != '\0')
			continue;
		*p = '\0';
		if (!mkdir(path, 0755)) {
			if (swt_grow((void **)&made->lens, &made->cap, made->nr + 1,
				     sizeof(*made->lens))) {
				rmdir(path);
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				break;
			}
			made->lens[made->nr++] = (size_t)(p - path);
		} else if (errno != EEXIST) {
			ret = swt_error(err, errno == EACCES ? SWT_EPERM : SWT_EIO,
					"'%s': cannot create directory: %s", path, strerror(errno));
			break;
		}
		*p = saved;
		if (!saved)
			break;
	}
	if (!ret && (stat(dir, &sb) || !S_ISDIR(sb.st_mode)))
		ret = swt_error(err, SWT_EIO, "'%s': not a directory", dir);
	free(path);
	return ret;
}

/*
 * After a report that failed: remove the directories make_dir made, the
 * deepest first.  rmdir leaves one that is not empty (something else wrote
 * there meanwhile), and its parents with it.
 */
static void remove_made_dirs(const char *dir, const struct made_dirs *made)
{
	char *path = swt_strdup(dir);

	for (size_t i = made->nr; path && i-- > 0;) {
		path[made->lens[i]] = '\0';
		rmdir(path);
	}
	free(path);
}

/* A path the report writes must be a regular file, or nothing yet. */
static int check_target(const char *path, struct swt_err *err)
{
	struct stat sb;

	if (stat(path, &sb))
		return 0;	/* absent (or unreadable: writing it will say) */
	if (S_ISDIR(sb.st_mode))
		return swt_error(err, SWT_EIO, "'%s': is a directory, where the report writes a "
				 "file", path);
	if (!S_ISREG(sb.st_mode))
		return swt_error(err, SWT_EIO, "'%s': not a regular file, where the report writes "
				 "one", path);
	return 0;
}

/*
 * A name the report writes, or removes as an earlier report's, must not be
 * the database itself (db: its stat, NULL when unknown): a database named
 * index.html reported into its own directory was replaced by the page, and
 * one named sweep.svg, drawn as PNG only, removed as a stale chart.  A
 * symbolic link to it is safe: the rename replaces the link, and the stale
 * files removed are regular files only.
 */
static int check_not_db(const char *path, const struct stat *db, struct swt_err *err)
{
	struct stat sb;

	if (!db || lstat(path, &sb) || sb.st_dev != db->st_dev || sb.st_ino != db->st_ino)
		return 0;
	return swt_error(err, SWT_EUSAGE, "'%s': is the database, where the report writes or "
			 "removes a file of its own: give another --output", path);
}

/*
 * Before anything is replayed or drawn: the directory can be written, and
 * no file the report writes there is in the way (a directory named
 * sweep.png would only fail after the replay and half the charts), nor is
 * the database (db) one of the report's names, in any format.
 */
static int check_dir(const char *dir, unsigned formats, const struct stat *db,
		     struct swt_err *err)
{
	static const struct {
		const char *ext;
		unsigned format;	/* 0: always written */
	} exts[] = { { "png", SWT_REPORT_PNG }, { "svg", SWT_REPORT_SVG }, { "json", 0 } };
	char path[4096];
	int ret;

	if (access(dir, W_OK | X_OK))
		return swt_error(err, errno == EACCES ? SWT_EPERM : SWT_EIO,
				 "'%s': cannot write there: %s", dir, strerror(errno));
	for (size_t i = 0; i < SWT_ARRAY_SIZE(charts); i++) {
		for (size_t e = 0; e < SWT_ARRAY_SIZE(exts); e++) {
			snprintf(path, sizeof(path), "%s/%s.%s", dir, charts[i].name, exts[e].ext);
			/* a format not drawn now is removed as stale (remove_stale) */
			ret = check_not_db(path, db, err);
			if (!ret && (!exts[e].format || (formats & exts[e].format)))
				ret = check_target(path, err);
			if (ret)
				return ret;
		}
	}
	snprintf(path, sizeof(path), "%s/index.html", dir);
	ret = check_not_db(path, db, err);
	return ret ? ret : check_target(path, err);
}

/*
 * After a report into a directory that held an earlier one: remove the
 * chart files this report did not write (a chart not drawn now, a format
 * not chosen now), which index.html no longer shows but a reader would
 * take for current.  Only the report's own names, only regular files.
 */
static int remove_stale(const char *dir, const struct swt_report_entry *entries,
			struct swt_err *err)
{
	static const struct {
		const char *ext;
		unsigned format;	/* 0: JSON, written with every chart drawn */
	} exts[] = { { "png", SWT_CHART_PNG }, { "svg", SWT_CHART_SVG }, { "json", 0 } };
	char path[4096];
	struct stat sb;

	for (size_t i = 0; i < SWT_ARRAY_SIZE(charts); i++) {
		const struct swt_chart_meta *m = entries[i].meta;

		for (size_t e = 0; e < SWT_ARRAY_SIZE(exts); e++) {
			if (m && (!exts[e].format || (m->formats & exts[e].format)))
				continue;	/* written now */
			snprintf(path, sizeof(path), "%s/%s.%s", dir, charts[i].name, exts[e].ext);
			if (lstat(path, &sb) || !S_ISREG(sb.st_mode))
				continue;
			if (unlink(path) && errno != ENOENT)
				return swt_error(err, SWT_EIO, "'%s': cannot remove the earlier "
						 "report's file: %s", path, strerror(errno));
		}
	}
	return 0;
}

/*
 * A report is written into a staging directory inside its own and moved
 * in only once every file is written and the default runs are committed:
 * a report that fails (a full disk, a locked database) leaves the earlier
 * one whole, not new charts beside an old index.html, nor charts citing
 * runs that were never stored.
 */
static int make_staging(const char *dir, char **staging, struct swt_err *err)
{
	if (asprintf(staging, "%s/.swaptrace-report-XXXXXX", dir) < 0) {
		*staging = NULL;
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	if (!mkdtemp(*staging)) {
		int e = errno;

		free(*staging);
		*staging = NULL;
		return swt_error(err, e == EACCES ? SWT_EPERM : SWT_EIO,
				 "'%s': cannot write there: %s", dir, strerror(e));
	}
	return 0;
}

/* Move the staged files into dir (to = dir), or drop them (to = NULL); then the staging directory. */
static int unstage(const char *staging, const char *to, struct swt_err *err)
{
	DIR *d = opendir(staging);
	struct dirent *de;
	char from[4096], dest[4096];
	int ret = 0;

	if (!d)
		return to ? swt_error(err, SWT_EIO, "'%s': %s", staging, strerror(errno)) : 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(from, sizeof(from), "%s/%s", staging, de->d_name);
		if (to && !ret) {
			snprintf(dest, sizeof(dest), "%s/%s", to, de->d_name);
			if (rename(from, dest))
				ret = swt_error(err, SWT_EIO, "'%s': %s", dest, strerror(errno));
		}
		if (!to || ret)
			unlink(from);
	}
	closedir(d);
	rmdir(staging);
	return ret;
}

/* The answer as plain lines into sum->answer, cut at a line end when too long. */
static int answer_text(const struct swt_report_ctx *rc, struct swt_report_summary *sum,
		       struct swt_err *err)
{
	struct swt_sbuf b;
	size_t len;

	swt_sbuf_init(&b);
	swt_report_answer_text(&b, rc);
	if (b.oom) {
		swt_sbuf_release(&b);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	len = b.len;
	if (len >= sizeof(sum->answer)) {
		len = sizeof(sum->answer) - 1;
		while (len && b.s[len - 1] != '\n')
			len--;
	}
	if (len)
		memcpy(sum->answer, b.s, len);
	sum->answer[len] = '\0';
	swt_sbuf_release(&b);
	return 0;
}

/* -SWT_EINTR once the caller was asked to stop (opts->interrupted), else 0. */
static int check_interrupted(const struct swt_report_opts *opts, struct swt_err *err)
{
	return opts->interrupted && opts->interrupted() ? swt_error(err, SWT_EINTR, "interrupted") : 0;
}

/*
 * For the tests: stop (SIGSTOP) at the named point of the report, for a
 * signal to arrive there: "replay", as the default runs begin; "commit",
 * before the last check; "move", once the runs are committed, before the
 * files are moved in.
 */
static void test_stop_at(const char *point)
{
	const char *at = getenv("SWT_TEST_REPORT_STOP");

	if (at && !strcmp(at, point))
		raise(SIGSTOP);
}

int swt_report_write(struct swt_store *st, const struct swt_report_opts *opts,
		     struct swt_report_summary *sum, struct swt_err *err)
{
	struct swt_report_entry entries[SWT_ARRAY_SIZE(charts)];
	struct swt_report_ctx rc;
	struct swt_report_summary local;
	unsigned formats = opts->formats ? opts->formats : SWT_REPORT_PNG | SWT_REPORT_SVG;
	int64_t runs;
	struct made_dirs made = { 0 };
	int ret, dir_checked = 0, in_transaction = 0;
	char *staging = NULL;
	struct stat db_sb;
	const struct stat *db = NULL;

	if (!sum)
		sum = &local;
	memset(sum, 0, sizeof(*sum));
	memset(entries, 0, sizeof(entries));
	memset(&rc, 0, sizeof(rc));
	if (!opts->dir)
		return swt_error(err, SWT_EUSAGE, "no output directory given");
	/* before anything is made or written: the summary must name index.html */
	if ((size_t)snprintf(sum->index, sizeof(sum->index), "%s/index.html", opts->dir) >=
	    sizeof(sum->index))
		return swt_error(err, SWT_EUSAGE, "'%s': path too long", opts->dir);
	sum->index[0] = '\0';
	/* the database, which no file of the report may be (check_dir) */
	if (!stat(swt_store_path(st), &db_sb))
		db = &db_sb;
	runs = swt_store_query_int(st, "SELECT count(*) FROM run", -1);
	if (runs < 0)
		return swt_error(err, SWT_EDB, "'%s': cannot read the run table",
				 swt_store_path(st));
	if (runs == 0 && opts->run_defaults) {
		/*
		 * The default runs come stored in a transaction the callback
		 * leaves open, committed only once every file is written: a
		 * report that fails leaves the database as it was.  The
		 * directory is checked first, so that an unwritable one fails
		 * before the replay, not after.
		 */
		ret = make_dir(opts->dir, &made, err);
		if (!ret)
			ret = check_dir(opts->dir, formats, db, err);
		if (ret)
			goto out;
		dir_checked = 1;
		test_stop_at("replay");
		ret = opts->run_defaults(st, opts->run_defaults_ctx, err);
		in_transaction = !sqlite3_get_autocommit(swt_store_db(st));
		if (ret)
			goto out;
		sum->ran_defaults = 1;
	}
	/* unknown --run ids or policies fail before anything is written */
	ret = swt_report_ctx_init(&rc, st, opts, err);
	if (ret)
		goto out;
	if (!dir_checked) {
		ret = make_dir(opts->dir, &made, err);
		if (!ret)
			ret = check_dir(opts->dir, formats, db, err);
		if (ret)
			goto out;
	}
	ret = make_staging(opts->dir, &staging, err);
	if (ret)
		goto out;
	ret = swt_chart_out_init(&rc.out, staging,
				 ((formats & SWT_REPORT_PNG) ? SWT_CHART_PNG : 0) |
				 ((formats & SWT_REPORT_SVG) ? SWT_CHART_SVG : 0), err);
	if (ret)
		goto out;
	for (size_t i = 0; i < SWT_ARRAY_SIZE(charts); i++) {
		ret = check_interrupted(opts, err);
		if (ret)
			goto out;
		entries[i].heading = charts[i].heading;
		entries[i].what = charts[i].what;
		ret = charts[i].write(&rc, &entries[i].meta, err);
		if (ret)
			goto out;
		if (!entries[i].meta) {
			entries[i].skipped = charts[i].skipped;
			continue;
		}
		sum->charts++;
		sum->files += 1 + !!(formats & SWT_REPORT_PNG) + !!(formats & SWT_REPORT_SVG);
	}
	ret = check_interrupted(opts, err);
	if (ret)
		goto out;
	ret = swt_report_html_write(&rc, entries, SWT_ARRAY_SIZE(charts), sum->index,
				    sizeof(sum->index), err);
	if (ret)
		goto out;
	sum->files++;
	ret = answer_text(&rc, sum, err);
	if (ret)
		goto out;
	sum->runs = rc.nr_runs;
	snprintf(sum->nothing_to_replay, sizeof(sum->nothing_to_replay), "%s", rc.nothing_to_replay);
	for (size_t i = 0; i < rc.nr_runs; i++) {
		int lacks = swt_report_run_lacks_addresses(&rc, &rc.runs[i]);

		sum->approximate_runs += rc.runs[i].approximate != 0;
		sum->vma_runs_without_addresses += lacks == SWT_REPORT_VMA_NO_ADDRESSES;
		sum->auto_runs_without_addresses += lacks == SWT_REPORT_AUTO_NO_ADDRESSES;
	}
	/*
	 * The last point where a stop undoes everything: past it the runs are
	 * stored and the files moved in, whatever arrives meanwhile (the
	 * caller's handler only takes note), and the caller says so after.
	 * Asked only before index.html, a stop while it and the answer were
	 * written was a report that completed and exited 0.
	 */
	test_stop_at("commit");
	ret = check_interrupted(opts, err);
	if (ret)
		goto out;
	/*
	 * A read that went on with its default (the traced kernel's vmstat,
	 * the devices' request limits) lost an answer a chart or the answer
	 * was drawn without: a damaged database, and no report of it
	 */
	ret = swt_store_query_error(st, err);
	if (ret)
		goto out;
	if (in_transaction) {
		ret = swt_store_exec(st, "COMMIT", err);
		if (ret)
			goto out;
		in_transaction = 0;
	}
	test_stop_at("move");
	/* the runs are stored: the report they make goes in place of the earlier one */
	ret = unstage(staging, opts->dir, err);
	free(staging);
	staging = NULL;
	if (!ret)
		ret = remove_stale(opts->dir, entries, err);
	if (!ret && (size_t)snprintf(sum->index, sizeof(sum->index), "%s/index.html", opts->dir) >=
		    sizeof(sum->index))
		ret = swt_error(err, SWT_EUSAGE, "'%s': path too long", opts->dir);
out:
	if (staging) {
		unstage(staging, NULL, NULL);
		free(staging);
	}
	if (in_transaction && !sqlite3_get_autocommit(swt_store_db(st)))
		sqlite3_exec(swt_store_db(st), "ROLLBACK", NULL, NULL, NULL);
	/* a report that failed leaves no directory it made (mkdir -p's parents too) */
	if (ret) {
		remove_made_dirs(opts->dir, &made);
		sum->ran_defaults = 0;
	}
	free(made.lens);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(charts); i++)
		swt_chart_meta_free(entries[i].meta);
	swt_report_ctx_release(&rc);
	swt_chart_out_release(&rc.out);
	return ret;
}
