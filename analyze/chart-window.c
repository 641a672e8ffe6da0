/*
 * Chart 6, "ra-window": how often each readahead window size was chosen on
 * a miss, per policy (run_histogram 'ra_window') -- the histogram kernel
 * developers draw with bpftrace on swapin_nr_pages.  Shares rather than
 * counts, so policies that saw different numbers of misses compare.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "util.h"

#define MAX_WINDOWS 32	/* distinct window sizes shown */

struct window_data {
	const struct swt_report_ctx *rc;
	const struct swt_report_run **runs;
	size_t nr_runs;
	struct swt_report_keys keys;	/* the policies drawn, and the note on those left out */
	int64_t sizes[MAX_WINDOWS];	/* window sizes seen, ascending, pages */
	size_t nr_sizes;
	int64_t *counts;		/* [run][size] */
	int64_t totals[SWT_REPORT_MAX_SERIES];
	int truncated;			/* more sizes than MAX_WINDOWS */
	char labels[MAX_WINDOWS][24];
};

/* All-partition rows (-1) when the run stored them, else the sum over partitions. */
static const char window_sql[] =
	"SELECT bucket, sum(count) FROM run_histogram WHERE run_id = ?1 AND kind = 'ra_window'"
	" AND (partition = -1 OR NOT EXISTS (SELECT 1 FROM run_histogram WHERE run_id = ?1"
	"  AND kind = 'ra_window' AND partition = -1))"
	" GROUP BY bucket HAVING sum(count) > 0 ORDER BY bucket";

static void add_size(struct window_data *d, int64_t size)
{
	size_t i;

	for (i = 0; i < d->nr_sizes; i++)
		if (d->sizes[i] >= size)
			break;
	if (i < d->nr_sizes && d->sizes[i] == size)
		return;
	if (d->nr_sizes == MAX_WINDOWS) {
		d->truncated = 1;
		return;
	}
	memmove(&d->sizes[i + 1], &d->sizes[i], (d->nr_sizes - i) * sizeof(d->sizes[0]));
	d->sizes[i] = size;
	d->nr_sizes++;
}

static int scan(struct window_data *d, int pass, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, step = SQLITE_DONE;

	ret = swt_store_prepare(d->rc->st, window_sql, &s, err);
	if (ret)
		return ret;
	for (size_t r = 0; r < d->nr_runs; r++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, d->runs[r]->id);
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			int64_t size = sqlite3_column_int64(s, 0), n = sqlite3_column_int64(s, 1);

			if (pass == 0) {
				add_size(d, size);
				continue;
			}
			for (size_t i = 0; i < d->nr_sizes; i++)
				if (d->sizes[i] == size)
					d->counts[r * d->nr_sizes + i] += n;
			d->totals[r] += n;
		}
		if (step != SQLITE_DONE)
			break;
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return swt_store_sql_error(d->rc->st, err, "reading readahead windows");
	return 0;
}

static int load(struct window_data *d, struct swt_err *err)
{
	int ret;

	ret = swt_report_runs_at(d->rc, d->rc->chosen_pc, &d->runs, &d->nr_runs, &d->keys, err);
	if (!ret)
		ret = scan(d, 0, err);
	if (ret || !d->nr_sizes)
		return ret;
	d->counts = calloc(d->nr_runs * d->nr_sizes, sizeof(*d->counts));
	if (!d->counts)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < d->nr_sizes; i++)
		snprintf(d->labels[i], sizeof(d->labels[i]), "%lld", (long long)d->sizes[i]);
	return scan(d, 1, err);
}

static int draw_window(struct swt_chart *c, const void *data, struct swt_err *err)
{
	const struct window_data *d = data;
	const struct swt_report_ctx *rc = d->rc;
	struct swt_chart_legend_item items[SWT_REPORT_MAX_SERIES];
	struct swt_chart_rgb colors[SWT_REPORT_MAX_SERIES];
	size_t key_colors[SWT_REPORT_MAX_SERIES];
	char *names[SWT_REPORT_MAX_SERIES] = { NULL }, title[200], xlabel[64];
	const char *cats[MAX_WINDOWS];
	struct swt_chart_panel p = { 0 };
	double top, bottom, hi = 0;
	size_t ni = 0;
	int ret = 0;

	if (rc->chosen_pc >= 0)
		snprintf(title, sizeof(title), "Readahead window sizes chosen on swap faults, per "
			 "policy, at page-cluster %d", rc->chosen_pc);
	else
		snprintf(title, sizeof(title), "Readahead window sizes chosen on swap faults, per "
			 "policy");
	top = swt_chart_header(c, title,
			       "On each miss a policy decides how many pages to read: the window, "
			       "at most 2\xe2\x81\xbf pages at page-cluster n. Share of each "
			       "policy's decisions per window size; 1 means no readahead.");
	bottom = swt_chart_footnote(c, "From the replay's 'ra_window' histograms, all swap "
				    "devices together. The number of decisions per policy is in "
				    "the legend.");
	if (!d->nr_runs || !d->nr_sizes) {
		swt_chart_body_message(c, top, bottom,
				       !d->nr_runs ? swt_report_no_runs(rc) :
				       "the replay runs at this page-cluster stored no "
				       "readahead-window histogram");
		goto out;
	}
	for (size_t r = 0; r < d->nr_runs; r++)
		key_colors[r] = d->runs[r]->key_color;
	swt_report_series_colors(key_colors, d->nr_runs, colors);
	for (size_t r = 0; r < d->nr_runs; r++) {
		char num[32];
		int64_t pts = 0;

		swt_chart_format_int(d->totals[r], num, sizeof(num));
		/* a plugin's name and parameters are as long as its user made them */
		if (asprintf(&names[r], "%s (%s decisions)", d->runs[r]->label, num) < 0) {
			names[r] = NULL;
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		items[ni++] =
			(struct swt_chart_legend_item){names[r], colors[r], SWT_MARK_BOX};
		for (size_t i = 0; i < d->nr_sizes; i++)
			pts += d->counts[r * d->nr_sizes + i] > 0;
		swt_chart_meta_series(c, d->runs[r]->label, pts);
	}
	top += swt_chart_legend(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, items,
				ni);
	if (d->keys.note[0])
		top = swt_chart_note_line(c, top, d->keys.note);
	if (d->truncated)
		top = swt_chart_note_line(c, top, "Only the 32 smallest window sizes are shown.");
	for (size_t r = 0; r < d->nr_runs; r++) {
		if (d->runs[r]->approximate) {
			top = swt_chart_note_line(c, top, SWT_REPORT_APPROX_NOTE);
			break;
		}
	}
	if (d->nr_runs)
		top = swt_report_memory_note(d->rc, c, top);
	for (size_t i = 0; i < d->nr_sizes; i++)
		cats[i] = d->labels[i];
	for (size_t r = 0; r < d->nr_runs; r++)
		for (size_t i = 0; i < d->nr_sizes; i++)
			hi = SWT_MAX(hi, swt_report_ratio(d->counts[r * d->nr_sizes + i],
							  d->totals[r]));
	p.x = SWT_CHART_MARGIN;
	p.y = top + 6;
	p.w = c->width - 2 * SWT_CHART_MARGIN;
	p.h = bottom - top - 6;
	snprintf(xlabel, sizeof(xlabel), "readahead window (pages of %s)", d->rc->page_unit);
	p.xa.label = xlabel;
	p.xa.cats = cats;
	p.xa.ncats = d->nr_sizes;
	p.ya.label = "share of the policy's decisions (%)";
	p.ya.fmt = SWT_FMT_PERCENT;
	p.ya.zero = 1;
	/* room for the value labels, above the 100 % tick for a bar that reaches it */
	p.ya.hi = SWT_MIN(1.0, hi * 1.12);
	p.ya.headroom = hi * 1.12 > 1.0;
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	/* two passes: labels on every bar, or on none */
	for (int pass = 0, labels = 1; pass < 2; pass++) {
		for (size_t r = 0; r < d->nr_runs; r++) {
			for (size_t i = 0; i < d->nr_sizes; i++) {
				double v = swt_report_ratio(d->counts[r * d->nr_sizes + i],
							    d->totals[r]);
				char label[32];

				if (!(v > 0))
					continue;
				snprintf(label, sizeof(label), v < 0.01 ? "%.1f%%" : "%.0f%%",
					 v * 100);
				if (!pass)
					labels &= swt_chart_bar_label_fits(c, &p, d->nr_runs, label);
				else
					swt_chart_panel_bar(c, &p, i, r, d->nr_runs, v, colors[r],
							    labels ? label : NULL);
			}
		}
	}
	swt_chart_panel_frame(c, &p);
out:
	for (size_t r = 0; r < SWT_REPORT_MAX_SERIES; r++)
		free(names[r]);
	return ret;
}

int swt_chart_window_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err)
{
	struct window_data d = { .rc = rc };
	int ret;

	ret = load(&d, err);
	if (!ret)
		ret = swt_chart_render(&rc->out, "ra-window", draw_window, &d, meta, err);
	free(d.counts);
	free(d.runs);
	return ret;
}
