/*
 * Chart 4, "timeline": swap-in and swap-out pages per second on each swap
 * device over the capture, from the traced swap_in/swap_out rows, with the
 * chosen run's simulated hits and misses per second (run_series) shaded
 * underneath -- when the workload swapped and when readahead would have
 * paid off.
 *
 * Time counts from capture.first_ns (run_series' seconds do), up to the
 * last swap event drawn; every table here has about TARGET_BINS cells
 * whatever that span, so no timestamp can size one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "util.h"

#define TARGET_BINS 200
#define MIN_BIN_NS 1000000LL	/* 1 ms: finer than this the rate is noise */

struct part_series {
	const struct swt_report_part *part;
	int64_t *in, *out;		/* pages per bin */
	int64_t *hits, *misses;		/* simulated faults per shading cell; NULL: none */
	int64_t total_in, total_out;
};

struct timeline_data {
	const struct swt_report_ctx *rc;
	const struct swt_report_run *run;
	struct part_series parts[SWT_REPORT_MAX_PANELS];
	size_t nr_parts, more;
	int64_t span_ns, bin_ns;
	size_t nr_bins;
	int64_t last_bin_ns;	/* time the last bin covers, up to span_ns (bin_span_s) */
	int64_t shade_s;	/* seconds a shading cell covers: 1, or a bin's when longer */
	size_t nr_shades;
	int64_t last_shade_ns;	/* time the last shading cell covers */
	int have_series;	/* the run stored per-second series */
};

/* The smallest 1-2-5 step of at least raw ns, never below MIN_BIN_NS. */
static int64_t nice_bin(int64_t raw)
{
	int64_t mag = 1;

	if (raw <= MIN_BIN_NS)
		return MIN_BIN_NS;
	while (mag <= raw / 10)
		mag *= 10;
	if (mag >= raw)
		return mag;
	if (2 * mag >= raw)
		return 2 * mag;
	if (5 * mag >= raw)
		return 5 * mag;
	return 10 * mag;
}

static struct part_series *part_for(struct timeline_data *d, int64_t area)
{
	if (area == -1 && d->nr_parts == 1)
		return &d->parts[0];
	for (size_t i = 0; i < d->nr_parts; i++)
		if (d->parts[i].part->id == area)
			return &d->parts[i];
	return NULL;
}

static int load_events(struct timeline_data *d, int out, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, step;

	/* counted here, not by GROUP BY: its sorter's allocations cost more than the rows */
	ret = swt_store_prepare(d->rc->st, out ?
		"SELECT area_id, (ts - ?1) / ?2 FROM swap_out WHERE ts >= ?1" :
		"SELECT area_id, (ts - ?1) / ?2 FROM swap_in WHERE ts >= ?1", &s, err);
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, d->rc->first_ns);
	sqlite3_bind_int64(s, 2, d->bin_ns);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct part_series *p = part_for(d, sqlite3_column_int64(s, 0));
		int64_t bin = sqlite3_column_int64(s, 1);

		if (!p)
			continue;
		bin = SWT_MIN(bin, (int64_t)d->nr_bins - 1);
		(out ? p->out : p->in)[bin]++;
		(*(out ? &p->total_out : &p->total_in))++;
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return swt_store_sql_error(d->rc->st, err, "reading swap events");
	return 0;
}

static int load_run_series(struct timeline_data *d, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, step;

	ret = swt_store_prepare(d->rc->st,
		"SELECT partition, second, hits, misses FROM run_series WHERE run_id = ?1"
		" AND (partition >= 0 OR NOT EXISTS (SELECT 1 FROM run_series WHERE run_id = ?1"
		"  AND partition >= 0))", &s, err);
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, d->run->id);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct part_series *p = part_for(d, sqlite3_column_int64(s, 0));
		int64_t sec = sqlite3_column_int64(s, 1), cell;

		if (!p || sec < 0)
			continue;
		cell = sec / d->shade_s;
		if (cell >= (int64_t)d->nr_shades)
			continue;
		p->hits[cell] += sqlite3_column_int64(s, 2);
		p->misses[cell] += sqlite3_column_int64(s, 3);
		d->have_series = 1;
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return swt_store_sql_error(d->rc->st, err, "reading run series");
	return 0;
}

/*
 * The last swap event drawn, in ns from capture.first_ns; -1 when none.
 * It ends the time axis rather than capture.last_ns, which every event
 * sets: one damaged time there made tens of millions of seconds of
 * shading (a minute, or "out of memory", for a few seconds of swapping).
 */
static int drawn_span(struct timeline_data *d, int64_t *span_ns, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, step;

	*span_ns = -1;
	ret = swt_store_prepare(d->rc->st,
		"SELECT area_id, max(ts) - ?1 FROM (SELECT area_id, ts FROM swap_in WHERE ts >= ?1"
		" UNION ALL SELECT area_id, ts FROM swap_out WHERE ts >= ?1) GROUP BY 1", &s, err);
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, d->rc->first_ns);
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		if (part_for(d, sqlite3_column_int64(s, 0)))
			*span_ns = SWT_MAX(*span_ns, sqlite3_column_int64(s, 1));
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return swt_store_sql_error(d->rc->st, err, "reading swap events");
	return 0;
}

/*
 * The last bin ends at the last event drawn, not a whole bin on: its rate
 * is over the time it covers (per bin, the last second of rnd-4dev-pc3's
 * 0.36 s shaded a third of its rate: a drop that never was).  One covering
 * less than half a bin joins the bin before it, as a few events over a
 * sliver of time make no rate.  The new count of cells; *last_ns the time
 * the last one covers.
 */
static size_t fold_last(int64_t *const *v, size_t nv, size_t n, int64_t cell_ns, int64_t span_ns,
			int64_t *last_ns)
{
	*last_ns = span_ns - (int64_t)(n - 1) * cell_ns;
	if (n < 2 || 2 * *last_ns >= cell_ns)
		return n;
	for (size_t i = 0; i < nv; i++)
		if (v[i])
			v[i][n - 2] += v[i][n - 1];
	*last_ns += cell_ns;
	return n - 1;
}

/*
 * Seconds bin b covers: a bin's, but for the last one (fold_last) -- unless
 * it is the only one, of a span under a bin's 1 ms floor, and none joined it.
 */
static double bin_span_s(const struct timeline_data *d, size_t b)
{
	int last = b + 1 == d->nr_bins && (d->nr_bins > 1 || d->last_bin_ns > d->bin_ns);

	return (double)(last ? d->last_bin_ns : d->bin_ns) / 1e9;
}

/* Seconds shading cell i covers, the same way. */
static double shade_span_s(const struct timeline_data *d, size_t i)
{
	return i + 1 == d->nr_shades ? (double)d->last_shade_ns / 1e9 : (double)d->shade_s;
}

static int load(struct timeline_data *d, struct swt_err *err)
{
	const struct swt_report_ctx *rc = d->rc;
	int64_t span_ns;
	int ret;

	for (size_t i = 0; i < rc->nr_parts; i++) {
		if (d->nr_parts == SWT_REPORT_MAX_PANELS)
			d->more++;
		else
			d->parts[d->nr_parts++].part = &rc->parts[i];
	}
	if (rc->first_ns == SWT_NULL || rc->swap_ins + rc->swap_outs < 2 || !d->nr_parts)
		return 0;	/* nothing to draw a rate from; the chart says so */
	ret = drawn_span(d, &span_ns, err);
	if (ret || span_ns <= 0)
		return ret;	/* all at one instant, or none after the capture's start */
	d->span_ns = span_ns;
	d->bin_ns = nice_bin(d->span_ns / TARGET_BINS);
	d->nr_bins = (size_t)(d->span_ns / d->bin_ns) + 1;
	/* run_series holds seconds: a bin of a second or more (1-2-5 s) shades whole bins */
	d->shade_s = d->bin_ns >= 1000000000LL ? d->bin_ns / 1000000000LL : 1;
	d->nr_shades = (size_t)(d->span_ns / 1000000000LL / d->shade_s) + 1;
	for (size_t i = 0; i < d->nr_parts; i++) {
		struct part_series *p = &d->parts[i];

		p->in = calloc(d->nr_bins, sizeof(*p->in));
		p->out = calloc(d->nr_bins, sizeof(*p->out));
		if (d->run) {
			p->hits = calloc(d->nr_shades, sizeof(*p->hits));
			p->misses = calloc(d->nr_shades, sizeof(*p->misses));
		}
		if (!p->in || !p->out || (d->run && (!p->hits || !p->misses)))
			return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	ret = load_events(d, 0, err);
	if (!ret)
		ret = load_events(d, 1, err);
	if (!ret && d->run)
		ret = load_run_series(d, err);
	if (ret)
		return ret;
	{
		int64_t *bins[2 * SWT_REPORT_MAX_PANELS], *cells[2 * SWT_REPORT_MAX_PANELS];
		size_t nr_bins = d->nr_bins, nr_shades = d->nr_shades;

		for (size_t i = 0; i < d->nr_parts; i++) {
			bins[2 * i] = d->parts[i].in;
			bins[2 * i + 1] = d->parts[i].out;
			cells[2 * i] = d->parts[i].hits;
			cells[2 * i + 1] = d->parts[i].misses;
		}
		d->nr_bins = fold_last(bins, 2 * d->nr_parts, nr_bins, d->bin_ns, d->span_ns,
				       &d->last_bin_ns);
		d->nr_shades = fold_last(cells, 2 * d->nr_parts, nr_shades,
					 d->shade_s * 1000000000LL, d->span_ns, &d->last_shade_ns);
	}
	return 0;
}

static void draw_shading(struct swt_chart *c, const struct swt_chart_panel *p,
			 const struct timeline_data *d, const struct part_series *s)
{
	struct swt_chart_rgb hit = swt_chart_color(2), miss = { 0.55, 0.55, 0.55 };
	double cell_s = (double)d->shade_s;
	double unit_s = swt_report_time_axis(d->span_ns).unit_s;

	swt_chart_panel_clip(c, p);
	for (size_t i = 0; i < d->nr_shades; i++) {
		double t0 = (double)i * cell_s, w = shade_span_s(d, i);
		double x0 = swt_chart_panel_x(p, t0 / unit_s), x1 = swt_chart_panel_x(p, (t0 + w) / unit_s);
		/* per second, as the lines: the counts are per cell, over the time it covers */
		double ym = swt_chart_panel_y(p, (double)s->misses[i] / w);
		double yh = swt_chart_panel_y(p, (double)(s->misses[i] + s->hits[i]) / w);
		double y0 = swt_chart_panel_y(p, 0);

		cairo_set_source_rgba(c->cr, miss.r, miss.g, miss.b, 0.30);
		cairo_rectangle(c->cr, x0, ym, x1 - x0, y0 - ym);
		cairo_fill(c->cr);
		cairo_set_source_rgba(c->cr, hit.r, hit.g, hit.b, 0.35);
		cairo_rectangle(c->cr, x0, yh, x1 - x0, ym - yh);
		cairo_fill(c->cr);
	}
	cairo_restore(c->cr);
}

/* Swap-outs beyond this many times the swap-in scale go off it (draw_timeline). */
#define OUT_OFF_SCALE 4

static int draw_timeline(struct swt_chart *c, const void *data, struct swt_err *err)
{
	const struct timeline_data *d = data;
	const struct swt_report_ctx *rc = d->rc;
	const struct swt_report_time_axis axis = swt_report_time_axis(d->span_ns);
	struct swt_chart_legend_item items[4];
	char title[300], miss_label[80], msg[300], out_note[200] = "";
	char *desc = NULL, *hit_label = NULL;
	double top, bottom, hi = 0, hi_out = 0, bin_s = (double)d->bin_ns / 1e9, *xs = NULL, *ys = NULL;
	double tick_h, label_h, axis_h, panel_h, y, gap = 12;
	size_t ni = 0;
	int64_t pts_in = 0, pts_out = 0, pts_sim = 0, total_in = 0;
	int shade = d->run && d->have_series, ret = 0;

	if (shade) {
		desc = swt_report_run_desc(d->run);
		if (desc && asprintf(&hit_label, "simulated hits/s: %s", desc) < 0)
			hit_label = NULL;
		if (!hit_label) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		snprintf(title, sizeof(title), "Swap traffic per device over the capture, shaded "
			 "with simulated readahead hits and misses");
	} else {
		snprintf(title, sizeof(title), "Swap traffic per device over the capture");
	}
	top = swt_chart_header(c, title,
			       "Pages swapped in and out per second, from the traced block I/O. "
			       "Shading: swap faults per second in the replay, split into hits "
			       "(found in the swap cache) and misses (read from the device).");
	/* whole seconds as such: "1000 s", not "1e+03 s" */
	snprintf(msg, sizeof(msg), bin_s >= 1 ? "Rates over %.0f s bins%s. Time counts from the "
		 "capture's first event." : "Rates over %.3g s bins%s. Time counts from the "
		 "capture's first event.", bin_s, !shade ? "" : d->shade_s > 1 ? ", the shading's too" :
		 " (each second for the shading)");
	bottom = swt_chart_footnote(c, d->nr_bins ? msg : NULL);
	if (!d->nr_bins) {
		swt_report_no_events_message(rc, d->nr_parts > 0, "too few for a rate over time", msg,
					     sizeof(msg));
		swt_chart_body_message(c, top, bottom, msg);
		goto out;
	}

	for (size_t i = 0; i < d->nr_parts; i++) {
		const struct part_series *s = &d->parts[i];

		total_in += s->total_in;
		for (size_t b = 0; b < d->nr_bins; b++) {
			hi = SWT_MAX(hi, (double)s->in[b] / bin_span_s(d, b));
			hi_out = SWT_MAX(hi_out, (double)s->out[b] / bin_span_s(d, b));
			pts_in += s->total_in ? 1 : 0;
			pts_out += s->total_out ? 1 : 0;
		}
		for (size_t sc = 0; shade && sc < d->nr_shades; sc++) {
			hi = SWT_MAX(hi, (double)(s->hits[sc] + s->misses[sc]) / shade_span_s(d, sc));
			pts_sim += s->hits[sc] + s->misses[sc] > 0;
		}
	}
	/*
	 * The question is when swap-ins would have hit: a burst of swap-outs
	 * (the workload filling its memory) many times the swap-in rate would
	 * flatten them and the shading into a strip.  Then the scale follows
	 * the swap-ins, and the swap-out line is clipped, with a note.
	 */
	if (hi > 0 && hi_out > OUT_OFF_SCALE * hi) {
		char peak[32];

		swt_chart_format_int((int64_t)llround(hi_out), peak, sizeof(peak));
		snprintf(out_note, sizeof(out_note), "Swap-outs peak at %s pages/s, off the scale: "
			 "the panels are scaled to the swap-ins%s.", peak,
			 shade ? " and the shading" : "");
	} else {
		hi = SWT_MAX(hi, hi_out);
	}
	items[ni++] = (struct swt_chart_legend_item){ "swap-in pages/s", swt_chart_color(0),
						SWT_MARK_LINE };
	items[ni++] = (struct swt_chart_legend_item){ "swap-out pages/s", swt_chart_color(3),
						SWT_MARK_LINE };
	swt_chart_meta_series(c, "swap-in pages/s", pts_in);
	swt_chart_meta_series(c, "swap-out pages/s", pts_out);
	if (shade) {
		snprintf(miss_label, sizeof(miss_label), "simulated misses/s");
		items[ni++] = (struct swt_chart_legend_item){hit_label, swt_chart_color(2),
							     SWT_MARK_AREA};
		items[ni++] = (struct swt_chart_legend_item){
			miss_label, (struct swt_chart_rgb){0.55, 0.55, 0.55}, SWT_MARK_AREA};
		swt_chart_meta_series(c, "simulated hits/s", pts_sim);
		swt_chart_meta_series(c, "simulated misses/s", pts_sim);
	}
	top += swt_chart_legend(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, items,
				ni);
	/* what is missing, one line each, above the panels */
	for (int line = 0; line < 3; line++) {
		msg[0] = '\0';
		if (line == 0 && !total_in)
			snprintf(msg, sizeof(msg), "no swap-ins in this capture");
		else if (line == 1 && !d->run)
			snprintf(msg, sizeof(msg), "no hit/miss shading: %s",
				 swt_report_no_runs(rc));
		else if (line == 1 && !shade)
			snprintf(msg, sizeof(msg), "no hit/miss shading: run #%lld stored no "
				 "per-second series", (long long)d->run->id);
		else if (line == 2 && d->more)
			snprintf(msg, sizeof(msg), "%zu more swap areas are not shown", d->more);
		if (!msg[0])
			continue;
		if (line < 2)
			swt_chart_meta_message(c, msg);
		else
			swt_chart_meta_note(c, msg);
		swt_chart_text(c, SWT_FONT_NOTE, SWT_CHART_MARGIN, top, 0, 0, 0, SWT_RGB_MUTED, 0,
			       msg);
		top += 18;
	}
	if (out_note[0])
		top = swt_chart_note_line(c, top, out_note);
	if (shade && d->run->approximate)
		top = swt_chart_note_line(c, top, SWT_REPORT_APPROX_NOTE);
	if (shade)
		top = swt_report_memory_note(d->rc, c, top);

	xs = malloc(d->nr_bins * sizeof(*xs));
	ys = malloc(d->nr_bins * sizeof(*ys));
	if (!xs || !ys) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	/* each point in the middle of the time its bin covers */
	for (size_t b = 0; b < d->nr_bins; b++)
		xs[b] = ((double)b * bin_s + bin_span_s(d, b) / 2) / axis.unit_s;
	/* stacked panels share the time axis: only the last one carries it, and gets its height */
	swt_chart_text_size(c, SWT_FONT_TICK, 0, "0", NULL, &tick_h);
	swt_chart_text_size(c, SWT_FONT_LABEL, 0, "time", NULL, &label_h);
	axis_h = tick_h + 8 + label_h + 6;
	panel_h =
		(bottom - top - 2 - axis_h - gap * (double)(d->nr_parts - 1)) / (double)d->nr_parts;
	y = top + 2;
	for (size_t i = 0; i < d->nr_parts; i++) {
		const struct part_series *s = &d->parts[i];
		struct swt_chart_panel p = { 0 };
		int last = i + 1 == d->nr_parts;
		char ptitle[400], nin[32], nout[32];

		p.x = SWT_CHART_MARGIN;
		p.y = y;
		p.w = c->width - 2 * SWT_CHART_MARGIN;
		p.h = panel_h + (last ? axis_h : 0);
		y += p.h + gap;
		swt_chart_format_int(s->total_in, nin, sizeof(nin));
		swt_chart_format_int(s->total_out, nout, sizeof(nout));
		snprintf(ptitle, sizeof(ptitle), "%s \xc2\xb7 %s pages swapped in, %s swapped out",
			 s->part->label, nin, nout);
		p.title = ptitle;
		if (!s->total_in && !s->total_out) {
			char m[120];

			snprintf(m, sizeof(m), "no swap-ins or swap-outs on %s", s->part->name);
			swt_chart_panel_message(c, &p, m);
			continue;
		}
		p.xa.label = last ? axis.label : NULL;
		p.xa.hide_ticks = !last;
		p.xa.lo = 0;
		p.xa.hi = (double)d->span_ns / 1e9 / axis.unit_s;
		p.xa.exact = 1;
		p.ya.label = d->nr_parts > 2 ? "pages/s" : "pages per second";
		p.ya.fmt = SWT_FMT_COUNT;
		p.ya.zero = 1;
		p.ya.hi = hi * 1.05;
		swt_chart_panel_fit(c, &p);
		swt_chart_panel_axes(c, &p);
		if (shade)
			draw_shading(c, &p, d, s);
		for (size_t b = 0; b < d->nr_bins; b++)
			ys[b] = (double)s->out[b] / bin_span_s(d, b);
		swt_chart_panel_clip(c, &p);
		swt_chart_panel_line(c, &p, xs, ys, d->nr_bins, swt_chart_color(3), 0,
				     d->nr_bins < 30);
		cairo_restore(c->cr);
		for (size_t b = 0; b < d->nr_bins; b++)
			ys[b] = (double)s->in[b] / bin_span_s(d, b);
		swt_chart_panel_line(c, &p, xs, ys, d->nr_bins, swt_chart_color(0), 0,
				     d->nr_bins < 30);
		swt_chart_panel_frame(c, &p);
	}
out:
	free(xs);
	free(ys);
	free(hit_label);
	free(desc);
	return ret;
}

int swt_chart_timeline_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			     struct swt_err *err)
{
	struct timeline_data d = { .rc = rc, .run = rc->chosen };
	int ret;

	ret = load(&d, err);
	if (!ret)
		ret = swt_chart_render(&rc->out, "timeline", draw_timeline, &d, meta, err);
	for (size_t i = 0; i < d.nr_parts; i++) {
		free(d.parts[i].in);
		free(d.parts[i].out);
		free(d.parts[i].hits);
		free(d.parts[i].misses);
	}
	return ret;
}
