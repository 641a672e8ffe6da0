/*
 * Chart 2, "sweep": what page-cluster buys -- coverage, pages read and read
 * requests against page-cluster 0..8, one line per policy, with what the
 * traced kernel did at its own page-cluster as a reference point.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "util.h"

enum { COVERAGE, PAGES_READ, READ_REQUESTS, NR_METRICS };

#define SWEEP_MIN_PC 8	/* the x axis always shows 0..8, the range worth sweeping */

struct series {
	const char *key;
	size_t color;		/* the key's palette colour */
	double *v;		/* [pc][metric], NaN: not replayed */
	size_t points;
};

struct sweep_data {
	const struct swt_report_ctx *rc;
	struct series series[SWT_REPORT_MAX_SERIES];
	size_t nr_series;
	struct swt_report_keys keys;	/* the policies drawn, and the note on those left out */
	int max_pc;
	int approximate;	/* a run drawn replayed an approximated demand stream */
	int no_addresses;	/* swt_report_run_lacks_addresses() bits of the drawn runs */
	double ref[NR_METRICS];	/* traced kernel at rc->page_cluster; NaN: unknown */
};

/* Lines closer than this, relative, at every point are drawn one over the other. */
#define SWEEP_OVERLAP 0.005

/*
 * Whether b's line covers a's in panel m: at every page-cluster a has a
 * point, b has one -- 2: the same value; 1: within SWEEP_OVERLAP, which the
 * lines cannot show apart (leap falls back to adaptive on a random stream,
 * a page or two apart); 0: a shows somewhere (apart, or a point b lacks).
 * Points only b has leave a hidden: auto replayed at one page-cluster more
 * still covers adaptive.
 */
static int covers(const struct series *a, const struct series *b, int max_pc, int m)
{
	int same = 2, points = 0;

	for (int pc = 0; pc <= max_pc; pc++) {
		double x = a->v[pc * NR_METRICS + m], y = b->v[pc * NR_METRICS + m];

		if (isnan(x))
			continue;
		points++;
		if (isnan(y))
			return 0;
		if (x != y) {
			if (fabs(x - y) > SWEEP_OVERLAP * SWT_MAX(fabs(x), fabs(y)))
				return 0;
			same = 1;
		}
	}
	return points ? same : 0;
}

static const char *const panel_names[NR_METRICS] = { "Coverage", "Pages read", "Read requests" };

static int sweep_covers(const void *arg, size_t a, size_t b, int m)
{
	const struct sweep_data *d = arg;

	return covers(&d->series[a], &d->series[b], d->max_pc, m);
}

static int on_sweep(const void *arg, const struct swt_report_run *r)
{
	return swt_report_run_compared(arg, r) && r->page_cluster >= 0;
}

static int load(struct sweep_data *d, struct swt_err *err)
{
	const struct swt_report_ctx *rc = d->rc;
	int64_t faults = SWT_NULL;

	swt_report_pick_keys(rc, on_sweep, rc, "", &d->keys);
	d->max_pc = SWEEP_MIN_PC;
	for (size_t i = 0; i < rc->nr_runs; i++)
		if (swt_report_run_compared(rc, &rc->runs[i]))
			d->max_pc = SWT_MAX(d->max_pc, rc->runs[i].page_cluster);
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];
		struct series *s = NULL;
		double *v;

		if (!swt_report_run_compared(rc, r) || r->page_cluster < 0)
			continue;
		for (size_t k = 0; k < d->nr_series; k++)
			if (!strcmp(d->series[k].key, r->key))
				s = &d->series[k];
		if (!s) {
			if (!swt_report_keys_have(&d->keys, r->key))
				continue;
			s = &d->series[d->nr_series++];
			s->key = r->key;
			s->color = r->key_color;
			s->v = malloc((size_t)(d->max_pc + 1) * NR_METRICS * sizeof(*s->v));
			if (!s->v)
				return swt_error(err, SWT_ENOMEM, "out of memory");
			for (int k = 0; k < (d->max_pc + 1) * NR_METRICS; k++)
				s->v[k] = NAN;
		}
		v = &s->v[r->page_cluster * NR_METRICS];
		if (!isnan(v[PAGES_READ]))
			continue;	/* runs come by id: the first one stands for its setting */
		v[COVERAGE] = swt_report_ratio(r->hits, r->faults);
		v[PAGES_READ] = (double)r->pages_read;
		v[READ_REQUESTS] = (double)r->read_requests;
		s->points++;
		d->approximate |= r->approximate;
		d->no_addresses |= swt_report_run_lacks_addresses(rc, r);
	}

	for (int m = 0; m < NR_METRICS; m++)
		d->ref[m] = NAN;
	if (rc->page_cluster < 0)
		return 0;
	if (rc->vm_pgmajfault != SWT_NULL && rc->vm_swap_ra_hit != SWT_NULL)
		faults = rc->vm_pgmajfault + rc->vm_swap_ra_hit;
	d->ref[COVERAGE] = swt_report_ratio(rc->vm_swap_ra_hit, faults);
	d->ref[PAGES_READ] = (double)rc->swap_ins;
	d->ref[READ_REQUESTS] = (double)swt_store_query_int(rc->st,
		"SELECT count(*) FROM request WHERE write = 0 AND pc = 0 AND"
		" (dev IN (SELECT dev FROM swap_area) OR NOT EXISTS (SELECT 1 FROM swap_area))", 0);
	return 0;
}

static int draw_sweep(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const ylabels[NR_METRICS] = {
		"faults served by readahead (%)", NULL /* pages read from swap (the page size) */,
		"read requests to the swap devices",
	};
	const struct sweep_data *d = data;
	const struct swt_report_ctx *rc = d->rc;
	struct swt_chart_legend_item items[SWT_REPORT_MAX_SERIES + 1];
	struct swt_chart_rgb colors[SWT_REPORT_MAX_SERIES];
	size_t key_colors[SWT_REPORT_MAX_SERIES];
	char ref_label[160], note[400], ylabel[64];
	size_t ni = 0;
	double top, bottom, xs[64];
	int have_ref = rc->page_cluster >= 0 && rc->page_cluster <= d->max_pc;

	(void)err;
	top = swt_chart_header(c, "What page-cluster buys: coverage, pages read and read "
				  "requests vs page-cluster, per policy",
		"Each point is one replay on the traced swap layout; at page-cluster n "
		"the window is at most 2\xe2\x81\xbf pages (0: no readahead). More "
		"coverage for fewer pages and requests is better.");
	bottom = swt_chart_footnote(c,
		"coverage = swap faults found in the swap cache / all swap faults. Reference "
		"point: the traced kernel's coverage from /proc/vmstat (machine-wide), its traced "
		"swap-in pages and read requests.");
	if (!d->nr_series) {
		swt_chart_body_message(c, top, bottom, swt_report_no_runs(rc));
		return 0;
	}
	for (size_t k = 0; k < d->nr_series; k++)
		key_colors[k] = d->series[k].color;
	swt_report_series_colors(key_colors, d->nr_series, colors);
	for (size_t k = 0; k < d->nr_series; k++) {
		items[ni++] = (struct swt_chart_legend_item){ d->series[k].key, colors[k],
							SWT_MARK_LINE_DOT };
		swt_chart_meta_series(c, d->series[k].key, (int64_t)d->series[k].points);
	}
	if (have_ref) {
		snprintf(ref_label, sizeof(ref_label), "traced kernel at page-cluster %d",
			 rc->page_cluster);
		items[ni++] = swt_report_reference_item(c, ref_label, SWT_MARK_DIAMOND, d->ref,
							NR_METRICS);
	}
	top += swt_chart_legend(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, items,
				ni);
	if (d->keys.note[0])
		top = swt_chart_note_line(c, top, d->keys.note);
	{
		const char *keys[SWT_REPORT_MAX_SERIES];

		for (size_t k = 0; k < d->nr_series; k++)
			keys[k] = d->series[k].key;
		swt_report_hidden_note(d->nr_series, keys, NR_METRICS, panel_names, sweep_covers, d,
				       "page-cluster", note, sizeof(note));
	}
	if (note[0]) {
		top = swt_chart_note_line(c, top, note);
	}
	if (d->approximate)
		top = swt_chart_note_line(c, top, SWT_REPORT_APPROX_NOTE);
	top = swt_report_address_notes(c, top, d->no_addresses);
	top = swt_report_memory_note(rc, c, top);
	for (int x = 0; x <= d->max_pc && x < (int)SWT_ARRAY_SIZE(xs); x++)
		xs[x] = x;
	for (int m = 0; m < NR_METRICS; m++) {
		struct swt_chart_panel p = { 0 };
		double hi = 0, ys[64];
		size_t n = (size_t)SWT_MIN(d->max_pc + 1, (int)SWT_ARRAY_SIZE(xs));

		swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top + 6, c->width - 2 * SWT_CHART_MARGIN,
			       bottom - top - 6, NR_METRICS, 1, 28, 0, m);
		p.title = panel_names[m];
		p.xa.label = "page-cluster";
		p.xa.integer = 1;
		p.xa.exact = 1;
		/* half a step of margin keeps the end points off the axes */
		p.xa.lo = -0.4;
		p.xa.hi = d->max_pc + 0.4;
		/* pages of the capture's size, as replay counts them */
		snprintf(ylabel, sizeof(ylabel), "pages read from swap (%s)", rc->page_unit);
		p.ya.label = ylabels[m] ? ylabels[m] : ylabel;
		p.ya.fmt = m == COVERAGE ? SWT_FMT_PERCENT : SWT_FMT_COUNT;
		p.ya.zero = 1;
		p.ya.integer = m != COVERAGE;
		for (size_t k = 0; k < d->nr_series; k++)
			for (size_t x = 0; x < n; x++)
				if (!isnan(d->series[k].v[x * NR_METRICS + (size_t)m]))
					hi = SWT_MAX(hi,
						     d->series[k].v[x * NR_METRICS + (size_t)m]);
		if (have_ref && !isnan(d->ref[m]))
			hi = SWT_MAX(hi, d->ref[m]);
		p.ya.hi = m == COVERAGE ? SWT_MIN(1.0, hi * 1.05) : hi * 1.05;
		if (m == COVERAGE && isnan(d->ref[m]) && have_ref)
			p.note = "traced kernel's counters not recorded";
		swt_chart_panel_fit(c, &p);
		swt_chart_panel_axes(c, &p);
		for (size_t k = 0; k < d->nr_series; k++) {
			double px[64];
			size_t np = 0;

			/*
			 * the page-clusters replayed, joined: one left out (-c 0,1,2,3,5,8)
			 * broke the line into dots at 5 and 8
			 */
			for (size_t x = 0; x < n; x++) {
				double y = d->series[k].v[x * NR_METRICS + (size_t)m];

				if (isfinite(y)) {
					px[np] = xs[x];
					ys[np++] = y;
				}
			}
			swt_chart_panel_line(c, &p, px, ys, np, colors[k], 0, 1);
		}
		if (have_ref)
			swt_chart_panel_diamond(c, &p, rc->page_cluster, d->ref[m], SWT_RGB_BLACK);
		swt_chart_panel_frame(c, &p);
	}
	return 0;
}

int swt_chart_sweep_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			  struct swt_err *err)
{
	struct sweep_data d = { .rc = rc };
	int first_pc = -1, several = 0, ret;

	/* runs at one page-cluster make dots, no trend: the chart is left out, as memory's */
	for (size_t i = 0; i < rc->nr_runs && !several; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (!swt_report_run_compared(rc, r))
			continue;
		if (first_pc < 0)
			first_pc = r->page_cluster;
		several = r->page_cluster != first_pc;
	}
	*meta = NULL;
	if (first_pc >= 0 && !several)
		return 0;
	ret = load(&d, err);
	if (!ret)
		ret = swt_chart_render(&rc->out, "sweep", draw_sweep, &d, meta, err);
	for (size_t k = 0; k < d.nr_series; k++)
		free(d.series[k].v);
	return ret;
}
