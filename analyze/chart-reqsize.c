/*
 * Chart 3, "request-sizes": read request sizes per swap device, what the
 * traced kernel issued (the request table) next to what the replayed
 * policy would issue (run_histogram 'request_pages').  Sizes in the
 * capture's pages, as replay counts them; above 16 pages the bins double
 * (3-4, 5-8, ...) to stay readable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "util.h"

#define MAX_BINS 24
#define LINEAR_MAX 16	/* sizes up to this get a bin each */

struct part_hist {
	const struct swt_report_part *part;
	int64_t traced[MAX_BINS], sim[MAX_BINS];
	int64_t traced_n, traced_pages, sim_n, sim_pages;
};

struct reqsize_data {
	const struct swt_report_ctx *rc;
	const struct swt_report_run *run;	/* simulated; NULL: none */
	struct part_hist parts[SWT_REPORT_MAX_PANELS];
	size_t nr_parts, more;
	int log_bins;		/* 1: doubling bins */
	size_t nr_bins;
	char bin_labels[MAX_BINS][48];
};

static int ceil_log2(int64_t v)
{
	int b = 0;

	while (b < 62 && ((int64_t)1 << b) < v)
		b++;
	return b;
}

static size_t bin_of(const struct reqsize_data *d, int64_t pages)
{
	size_t b;

	if (pages < 1)
		pages = 1;
	b = d->log_bins ? (size_t)ceil_log2(pages) : (size_t)(pages - 1);
	return SWT_MIN(b, (size_t)MAX_BINS - 1);
}

static struct part_hist *hist_for_dev(struct reqsize_data *d, int64_t dev)
{
	for (size_t i = 0; i < d->nr_parts; i++)
		if (d->parts[i].part->dev == dev)
			return &d->parts[i];	/* swap files sharing a device: the first */
	return NULL;
}

static struct part_hist *hist_for_partition(struct reqsize_data *d, int64_t partition)
{
	if (partition == -1 && d->nr_parts == 1)
		return &d->parts[0];	/* one device: "all" is that device */
	for (size_t i = 0; i < d->nr_parts; i++)
		if (d->parts[i].part->id == partition)
			return &d->parts[i];
	return NULL;
}

/* pass 0 finds the largest size, pass 1 counts into bins */
static int scan(struct reqsize_data *d, int pass, int64_t *max_pages, struct swt_err *err)
{
	/* counted here, not by GROUP BY: its sorter's allocations cost more than the rows */
	static const char traced_sql[] =
		"SELECT dev, (nr_sectors + ?1 - 1) / ?1 FROM request"
		" WHERE write = 0 AND pc = 0 AND nr_sectors > 0";
	static const char sim_sql[] =
		"SELECT partition, bucket, count FROM run_histogram"
		" WHERE run_id = ?1 AND kind = 'request_pages' AND count > 0"
		" AND (partition >= 0 OR NOT EXISTS (SELECT 1 FROM run_histogram WHERE run_id = ?1"
		"  AND kind = 'request_pages' AND partition >= 0))";
	sqlite3_stmt *s;
	int ret, step;

	for (int which = 0; which < 2; which++) {
		if (which == 1 && !d->run)
			break;
		ret = swt_store_prepare(d->rc->st, which ? sim_sql : traced_sql, &s, err);
		if (ret)
			return ret;
		/* the traced requests in the capture's pages, as replay counts its own */
		sqlite3_bind_int64(s, 1, which ? d->run->id : SWT_MAX(d->rc->page_size / 512, 1));
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			int64_t key = sqlite3_column_int64(s, 0),
				pages = sqlite3_column_int64(s, 1);
			int64_t n = which ? sqlite3_column_int64(s, 2) : 1;
			struct part_hist *h =
				which ? hist_for_partition(d, key) : hist_for_dev(d, key);

			if (!h)
				continue;
			if (pass == 0) {
				*max_pages = SWT_MAX(*max_pages, pages);
				continue;
			}
			if (which) {
				h->sim[bin_of(d, pages)] += n;
				h->sim_n += n;
				h->sim_pages += n * pages;
			} else {
				h->traced[bin_of(d, pages)] += n;
				h->traced_n += n;
				h->traced_pages += n * pages;
			}
		}
		sqlite3_finalize(s);
		if (step != SQLITE_DONE)
			return swt_store_sql_error(d->rc->st, err, "reading request sizes");
	}
	return 0;
}

static int load(struct reqsize_data *d, struct swt_err *err)
{
	int64_t max_pages = 1;
	int ret;

	for (size_t i = 0; i < d->rc->nr_parts; i++) {
		if (d->nr_parts == SWT_REPORT_MAX_PANELS) {
			d->more++;
			continue;
		}
		d->parts[d->nr_parts++].part = &d->rc->parts[i];
	}
	ret = scan(d, 0, &max_pages, err);
	if (ret)
		return ret;
	d->log_bins = max_pages > LINEAR_MAX;
	d->nr_bins = d->log_bins ? (size_t)ceil_log2(max_pages) + 1 : (size_t)max_pages;
	d->nr_bins = SWT_MIN(d->nr_bins, (size_t)MAX_BINS);
	for (size_t b = 0; b < d->nr_bins; b++) {
		int64_t hi = d->log_bins ? (int64_t)1 << b : (int64_t)b + 1, lo = hi / 2 + 1;

		if (!d->log_bins || b < 2)
			snprintf(d->bin_labels[b], sizeof(d->bin_labels[b]), "%lld", (long long)hi);
		else
			snprintf(d->bin_labels[b], sizeof(d->bin_labels[b]), "%lld\xe2\x80\x93%lld",
				 (long long)lo, (long long)hi);
	}
	return scan(d, 1, &max_pages, err);
}

static void mean_text(char *buf, size_t size, const char *what, int64_t n, int64_t pages)
{
	char num[32];

	swt_chart_format_int(n, num, sizeof(num));
	if (n)
		snprintf(buf, size, "%s %s requests, mean %.2f pages", what, num,
			 (double)pages / (double)n);
	else
		snprintf(buf, size, "%s no requests", what);
}

/*
 * The kernel's own reads in grey, as the traced kernel is drawn in black
 * elsewhere: the policy colours stay the policies'.
 */
static const struct swt_chart_rgb traced_rgb = { 0.62, 0.62, 0.62 };

static int draw_reqsize(struct swt_chart *c, const void *data, struct swt_err *err)
{
	const struct reqsize_data *d = data;
	const struct swt_report_ctx *rc = d->rc;
	const char *cats[MAX_BINS];
	struct swt_chart_legend_item items[2];
	char *title = NULL, *sim_label = NULL, *desc = NULL;
	char subtitle[400], traced_label[120], xlabel[64];
	struct swt_chart_rgb sim_rgb = swt_chart_color(0);
	int cols, rows, ret = 0;
	size_t ni = 0;
	double top, bottom;
	int64_t traced_pts = 0, sim_pts = 0;

	if (d->run) {
		swt_report_series_colors(&d->run->key_color, 1, &sim_rgb);
		desc = swt_report_run_desc(d->run);
		if (asprintf(&title, "Read request sizes per swap device: traced vs simulated "
			     "(%s, page-cluster %d)", d->run->label, d->run->page_cluster) < 0)
			title = NULL;
		if (desc && asprintf(&sim_label, "simulated: %s", desc) < 0)
			sim_label = NULL;
		if (!title || !sim_label) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (rc->page_cluster >= 0)
		snprintf(traced_label, sizeof(traced_label),
			 "traced: the kernel's reads at page-cluster %d", rc->page_cluster);
	else
		snprintf(traced_label, sizeof(traced_label), "traced: the kernel's reads");
	snprintf(xlabel, sizeof(xlabel), "read request size (pages of %s)", rc->page_unit);
	snprintf(subtitle, sizeof(subtitle),
		 "Block-layer read requests to swap, counted by size in %s pages. Bigger "
		 "requests mean readahead pages arrived together with the faulting page.",
		 rc->page_unit);
	top = swt_chart_header(c, title ? title : "Read request sizes per swap device, as traced",
			       subtitle);
	bottom = swt_chart_footnote(c, d->log_bins ?
		"Sizes above 2 pages are binned by powers of two (3\xe2\x80\x93" "4 pages, "
		"5\xe2\x80\x93" "8 pages, ...)." :
		"A request is one I/O to the device; merged bios count once.");
	if (!d->nr_parts) {
		swt_chart_body_message(c, top, bottom, "no swap devices in this capture");
		goto out;
	}
	for (size_t i = 0; i < d->nr_parts; i++) {
		for (size_t b = 0; b < d->nr_bins; b++) {
			traced_pts += d->parts[i].traced[b] > 0;
			sim_pts += d->parts[i].sim[b] > 0;
		}
	}
	items[ni++] =
		(struct swt_chart_legend_item){traced_label, traced_rgb, SWT_MARK_BOX};
	swt_chart_meta_series(c, "traced", traced_pts);
	if (d->run) {
		items[ni++] =
			(struct swt_chart_legend_item){sim_label, sim_rgb, SWT_MARK_BOX};
		swt_chart_meta_series(c, "simulated", sim_pts);
	}
	top += swt_chart_legend(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, items,
				ni);
	if (!d->run) {
		char msg[200];

		snprintf(msg, sizeof(msg), "simulated: %s", swt_report_no_runs(rc));
		swt_chart_meta_message(c, swt_report_no_runs(rc));
		swt_chart_text(c, SWT_FONT_MESSAGE, SWT_CHART_MARGIN, top, 0, 0, 0, SWT_RGB_MUTED,
			       0, msg);
		top += 24;
	}
	if (d->more) {
		char note[160];

		snprintf(note, sizeof(note), "%zu more swap areas are not shown", d->more);
		top = swt_chart_note_line(c, top, note);
	}
	if (d->run && d->run->approximate)
		top = swt_chart_note_line(c, top, SWT_REPORT_APPROX_NOTE);
	if (d->run)
		top = swt_report_memory_note(rc, c, top);
	for (size_t b = 0; b < d->nr_bins; b++)
		cats[b] = d->bin_labels[b];
	swt_chart_grid_shape(d->nr_parts, 4, &cols, &rows);
	for (size_t i = 0; i < d->nr_parts; i++) {
		const struct part_hist *h = &d->parts[i];
		struct swt_chart_panel p = { 0 };
		char note[300], t1[140], t2[140];
		double hi = 0;
		size_t nk = d->run ? 2 : 1;

		swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top + 4, c->width - 2 * SWT_CHART_MARGIN,
			       bottom - top - 4, cols, rows, 32, 16, (int)i);
		p.title = h->part->label;
		mean_text(t1, sizeof(t1), "traced:", h->traced_n, h->traced_pages);
		if (d->run) {
			mean_text(t2, sizeof(t2), "simulated:", h->sim_n, h->sim_pages);
			snprintf(note, sizeof(note), "%s; %s", t1, t2);
		} else {
			snprintf(note, sizeof(note), "%s", t1);
		}
		p.note = note;
		if (!h->traced_n && !h->sim_n) {
			char msg[160];

			snprintf(msg, sizeof(msg), "no read requests on %s", h->part->name);
			p.note = NULL;
			swt_chart_panel_message(c, &p, msg);
			continue;
		}
		p.xa.label = xlabel;
		p.xa.cats = cats;
		p.xa.ncats = d->nr_bins;
		/*
		 * Single-page requests outnumber the rest by orders of magnitude: a
		 * log scale keeps the tail visible.  The floor sits below 1 so that a
		 * bin with one request still shows a bar.
		 */
		p.ya.label = "read requests (log scale)";
		p.ya.log = 1;
		p.ya.lo = 0.5;
		for (size_t b = 0; b < d->nr_bins; b++)
			hi = SWT_MAX(hi, (double)SWT_MAX(h->traced[b], h->sim[b]));
		p.ya.hi = hi;
		swt_chart_panel_fit(c, &p);
		swt_chart_panel_axes(c, &p);
		for (size_t b = 0; b < d->nr_bins; b++) {
			if (h->traced[b])
				swt_chart_panel_bar(c, &p, b, 0, nk, (double)h->traced[b],
						    traced_rgb, NULL);
			if (d->run && h->sim[b])
				swt_chart_panel_bar(c, &p, b, 1, nk, (double)h->sim[b],
						    sim_rgb, NULL);
		}
		swt_chart_panel_frame(c, &p);
	}
out:
	free(sim_label);
	free(desc);
	free(title);
	return ret;
}

int swt_chart_reqsize_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			    struct swt_err *err)
{
	struct reqsize_data *d;
	int ret;

	/* the histograms are big enough not to live on the stack */
	d = calloc(1, sizeof(*d));
	if (!d)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	d->rc = rc;
	d->run = rc->chosen;
	ret = load(d, err);
	if (!ret)
		ret = swt_chart_render(&rc->out, "request-sizes", draw_reqsize, d, meta, err);
	free(d);
	return ret;
}
