/*
 * The report: make sure runs exist (the caller's default replay set), load
 * what the charts share, draw every chart that applies in the chosen
 * formats, and write the index page that puts them together.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report-int.h"
#include "util.h"

static const struct {
	const char *heading;	/* short name in the index */
	const char *what;	/* the question the chart answers, for the index */
	int (*write)(struct swt_report_ctx *rc, struct swt_chart_meta **meta, struct swt_err *err);
	const char *skipped;	/* why, when the chart does not apply */
} charts[] = {
	{ "Policy comparison",
	  "Which readahead policy reads least and hits most on each swap device?",
	  swt_chart_policy_write, NULL },
	{ "page-cluster sweep",
	  "How do coverage, pages read and read requests change with page-cluster?",
	  swt_chart_sweep_write, NULL },
	{ "Read request sizes",
	  "Which read request sizes did the kernel issue, and which would the replayed policy?",
	  swt_chart_reqsize_write, NULL },
	{ "Timeline",
	  "When did the capture swap, and when would readahead have hit?",
	  swt_chart_timeline_write, NULL },
	{ "Slot heat map",
	  "Where on each device were pages written and read back (locality)?",
	  swt_chart_heatmap_write, NULL },
	{ "Readahead windows",
	  "Which readahead window sizes does each policy choose?",
	  swt_chart_window_write, NULL },
	{ "Layout comparison",
	  "Does spreading swap over more devices cost hits and merges?",
	  swt_chart_layout_write,
	  "Not drawn: no replay run on a simulated swap layout (a layout other than "
	  "'traced') is stored." },
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

/* mkdir -p */
static int make_dir(const char *dir, struct swt_err *err)
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
		if (mkdir(path, 0755) && errno != EEXIST) {
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

int swt_report_write(struct swt_store *st, const struct swt_report_opts *opts,
		     struct swt_report_summary *sum, struct swt_err *err)
{
	struct swt_report_entry entries[SWT_ARRAY_SIZE(charts)];
	struct swt_report_ctx rc;
	struct swt_report_summary local;
	unsigned formats = opts->formats ? opts->formats : SWT_REPORT_PNG | SWT_REPORT_SVG;
	int64_t runs;
	int ret;

	if (!sum)
		sum = &local;
	memset(sum, 0, sizeof(*sum));
	memset(entries, 0, sizeof(entries));
	if (!opts->dir)
		return swt_error(err, SWT_EUSAGE, "no output directory given");
	runs = swt_store_query_int(st, "SELECT count(*) FROM run", -1);
	if (runs < 0)
		return swt_error(err, SWT_EDB, "'%s': cannot read the run table",
				 swt_store_path(st));
	if (runs == 0 && opts->run_defaults) {
		ret = opts->run_defaults(st, opts->run_defaults_ctx, err);
		if (ret)
			return ret;
		sum->ran_defaults = 1;
	}
	/* unknown --run ids or policies fail before anything is written */
	ret = swt_report_ctx_init(&rc, st, opts, err);
	if (ret)
		goto out;
	ret = make_dir(opts->dir, err);
	if (ret)
		goto out;
	ret = swt_chart_out_init(&rc.out, opts->dir,
				 ((formats & SWT_REPORT_PNG) ? SWT_CHART_PNG : 0) |
				 ((formats & SWT_REPORT_SVG) ? SWT_CHART_SVG : 0), err);
	if (ret)
		goto out;
	for (size_t i = 0; i < SWT_ARRAY_SIZE(charts); i++) {
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
	ret = swt_report_html_write(&rc, entries, SWT_ARRAY_SIZE(charts), sum->index,
				    sizeof(sum->index), err);
	if (ret)
		goto out;
	sum->files++;
	sum->runs = rc.nr_runs;
out:
	for (size_t i = 0; i < SWT_ARRAY_SIZE(charts); i++)
		swt_chart_meta_free(entries[i].meta);
	swt_report_ctx_release(&rc);
	swt_chart_out_release(&rc.out);
	return ret;
}
