/*
 * Chart 5, "heatmap": swap slot (y) against time (x) for swap-outs and
 * swap-ins on each device, like iowatcher's seek plot: pages written
 * together land on neighbouring slots, and whether they are read back
 * together shows here as locality (bands and diagonals) or its absence
 * (uniform noise).  Cells are coloured by how many pages fell in them, on
 * a log scale shared by all panels.  Time runs from capture.first_ns to
 * the last swap event drawn, in a fixed number of cells.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "util.h"

#define NT 240		/* time cells */
#define NS 120		/* slot cells */
#define MAX_DEVICES 4	/* columns; more would make the panels unreadably small */

enum { OUT, IN, NR_STREAMS };

struct part_map {
	const struct swt_report_part *part;
	int64_t max_slot;		/* highest slot used, either stream */
	uint32_t cells[NR_STREAMS][NT * NS];	/* [t * NS + s] pages */
	int64_t total[NR_STREAMS];
};

struct heat_data {
	const struct swt_report_ctx *rc;
	struct part_map *parts;
	size_t nr_parts, more;
	int64_t span_ns;	/* to one past the last event drawn; 0: too little to draw */
	uint32_t max_cell;
};

/* A sequential ramp, light to dark, monotonic in lightness (readable in grey too). */
static struct swt_chart_rgb ramp(double t)
{
	static const struct swt_chart_rgb stops[] = {
		{ 0.996, 0.929, 0.690 }, { 0.988, 0.682, 0.353 }, { 0.890, 0.396, 0.239 },
		{ 0.647, 0.145, 0.345 }, { 0.290, 0.047, 0.353 }, { 0.075, 0.020, 0.180 },
	};
	const size_t n = SWT_ARRAY_SIZE(stops) - 1;
	double f;
	size_t i;

	t = SWT_MAX(0.0, SWT_MIN(1.0, t));
	i = SWT_MIN((size_t)(t * (double)n), n - 1);
	f = t * (double)n - (double)i;
	return (struct swt_chart_rgb){ stops[i].r + (stops[i + 1].r - stops[i].r) * f,
				 stops[i].g + (stops[i + 1].g - stops[i].g) * f,
				 stops[i].b + (stops[i + 1].b - stops[i].b) * f };
}

static double shade_of(const struct heat_data *d, uint32_t n)
{
	/* log scale: one page is visible next to thousands */
	return d->max_cell > 1 ? log((double)n) / log((double)d->max_cell) : 1.0;
}

static struct part_map *part_for(struct heat_data *d, int64_t area)
{
	for (size_t i = 0; i < d->nr_parts; i++)
		if (d->parts[i].part->id == area)
			return &d->parts[i];
	return NULL;
}

static int scan(struct heat_data *d, int pass, struct swt_err *err)
{
	static const char *const sql[NR_STREAMS] = {
		[OUT] = "SELECT area_id, ts, slot FROM swap_out WHERE ts >= ?1 AND slot >= 0",
		[IN] = "SELECT area_id, ts, slot FROM swap_in WHERE ts >= ?1 AND slot >= 0",
	};
	sqlite3_stmt *s;
	int ret, step;

	for (int k = 0; k < NR_STREAMS; k++) {
		ret = swt_store_prepare(d->rc->st, sql[k], &s, err);
		if (ret)
			return ret;
		sqlite3_bind_int64(s, 1, d->rc->first_ns);
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			struct part_map *p = part_for(d, sqlite3_column_int64(s, 0));
			int64_t t = sqlite3_column_int64(s, 1) - d->rc->first_ns;
			int64_t slot = sqlite3_column_int64(s, 2), ti, si;
			uint32_t *cell;

			if (!p || slot < 0 || t < 0)
				continue;	/* not from ingest: a database edited by hand */
			if (pass == 0) {
				p->max_slot = SWT_MAX(p->max_slot, slot);
				/* one past the last event, so the last one lands in the last cell */
				d->span_ns = SWT_MAX(d->span_ns, t < INT64_MAX ? t + 1 : t);
				continue;
			}
			ti = (int64_t)((double)t / (double)d->span_ns * NT);
			si = (int64_t)((double)slot / ((double)p->max_slot + 1.0) * NS);
			cell = &p->cells[k][SWT_MIN(ti, NT - 1) * NS + SWT_MIN(si, NS - 1)];
			(*cell)++;
			d->max_cell = SWT_MAX(d->max_cell, *cell);
			p->total[k]++;
		}
		sqlite3_finalize(s);
		if (step != SQLITE_DONE)
			return swt_store_sql_error(d->rc->st, err, "reading swap slots");
	}
	return 0;
}

static int load(struct heat_data *d, struct swt_err *err)
{
	const struct swt_report_ctx *rc = d->rc;
	size_t n = SWT_MIN(rc->nr_parts, (size_t)MAX_DEVICES);
	int ret;

	d->more = rc->nr_parts - n;
	if (rc->first_ns == SWT_NULL || rc->swap_ins + rc->swap_outs < 2 || !n)
		return 0;
	d->parts = calloc(n, sizeof(*d->parts));
	if (!d->parts)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	d->nr_parts = n;
	for (size_t i = 0; i < n; i++)
		d->parts[i].part = &rc->parts[i];
	/*
	 * Spanned by the events drawn, found in the first pass, not by
	 * capture.last_ns, which every event sets: one damaged time there
	 * pressed every page into the first column.
	 */
	ret = scan(d, 0, err);
	if (ret)
		return ret;
	if (d->span_ns == 1) {
		/* all at the capture's first instant: nothing to map over time */
		free(d->parts);
		d->parts = NULL;
		d->nr_parts = 0;
		d->span_ns = 0;
		return 0;
	}
	return scan(d, 1, err);
}

/*
 * Paint the cells as an image the size of the plot area, so the SVG holds
 * one picture with hard cell edges rather than tens of thousands of
 * rectangles, and no viewer smooths the cells into each other.
 */
static int paint_cells(struct swt_chart *c, const struct swt_chart_panel *p,
		       const struct heat_data *d, const uint32_t *cells)
{
	int w = (int)floor(p->pw), h = (int)floor(p->ph), stride;
	cairo_surface_t *img;
	unsigned char *px;

	img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
	if (cairo_surface_status(img)) {
		cairo_surface_destroy(img);
		return -SWT_ENOMEM;
	}
	cairo_surface_flush(img);
	px = cairo_image_surface_get_data(img);
	stride = cairo_image_surface_get_stride(img);
	for (int y = 0; y < h; y++) {
		/* slot 0 at the bottom */
		int si = SWT_MIN((int)((double)(h - 1 - y) / h * NS), NS - 1);
		uint32_t *row = (uint32_t *)(void *)(px + (size_t)y * (size_t)stride);

		for (int x = 0; x < w; x++) {
			int ti = SWT_MIN((int)((double)x / w * NT), NT - 1);
			uint32_t n = cells[ti * NS + si];
			struct swt_chart_rgb col;

			if (!n) {
				row[x] = 0;	/* transparent: the white plot shows */
				continue;
			}
			col = ramp(0.12 + 0.88 * shade_of(d, n));
			row[x] = 0xff000000u | (uint32_t)lround(col.r * 255) << 16 |
				 (uint32_t)lround(col.g * 255) << 8 | (uint32_t)lround(col.b * 255);
		}
	}
	cairo_surface_mark_dirty(img);
	cairo_save(c->cr);
	cairo_set_source_surface(c->cr, img, floor(p->px) + 1, floor(p->py));
	cairo_pattern_set_filter(cairo_get_source(c->cr), CAIRO_FILTER_NEAREST);
	cairo_paint(c->cr);
	cairo_restore(c->cr);
	cairo_surface_destroy(img);
	return 0;
}

/* The colour scale with ticks at powers of ten, and what one cell covers. */
static double colorbar(struct swt_chart *c, const struct heat_data *d, double x, double y)
{
	const double w = 240, h = 12;
	const char *intro = "pages per cell (log scale)";
	char buf[48], cell[200], slots[64];
	double tw, lh, last_x = -1e9, cell_s = (double)d->span_ns / 1e9 / NT;
	cairo_pattern_t *g;
	int same = 1;

	swt_chart_text_size(c, SWT_FONT_LEGEND, 0, intro, &tw, &lh);
	swt_chart_text(c, SWT_FONT_LEGEND, x, y + h / 2, 0, 0.5, 0, SWT_RGB_TEXT, 0, intro);
	x += tw + 12;
	g = cairo_pattern_create_linear(x, 0, x + w, 0);
	for (int i = 0; i <= 10; i++) {
		struct swt_chart_rgb col = ramp(0.12 + 0.88 * i / 10.0);

		cairo_pattern_add_color_stop_rgb(g, i / 10.0, col.r, col.g, col.b);
	}
	cairo_rectangle(c->cr, x, y, w, h);
	cairo_set_source(c->cr, g);
	cairo_fill(c->cr);
	cairo_pattern_destroy(g);
	for (double v = 1;; v *= 10) {
		int is_max = v >= (double)d->max_cell;
		double pos = x + w * (is_max ? 1.0 : shade_of(d, (uint32_t)v));

		if (is_max)
			v = (double)d->max_cell;
		/* the maximum's label wins over a power of ten right next to it */
		if (is_max || x + w - pos > 36) {
			swt_chart_format_int((int64_t)v, buf, sizeof(buf));
			cairo_set_source_rgb(c->cr, 0.3, 0.3, 0.3);
			cairo_rectangle(c->cr, floor(pos) - (is_max ? 1 : 0), y + h, 1, 4);
			cairo_fill(c->cr);
			if (pos - last_x > 30 || is_max)
				swt_chart_text(c, SWT_FONT_TICK, pos, y + h + 4, 0.5, 0, 0,
					       SWT_RGB_TEXT, 0, buf);
			last_x = pos;
		}
		if (is_max)
			break;
	}
	for (size_t i = 1; i < d->nr_parts; i++)
		same &= d->parts[i].max_slot == d->parts[0].max_slot;
	if (same)
		snprintf(slots, sizeof(slots), "%.0f slots",
			 ((double)d->parts[0].max_slot + 1.0) / NS);
	else
		/* each panel's axis ends at its own highest slot used, not at the device's end */
		snprintf(slots, sizeof(slots), "1/%d of the slots up to the highest used", NS);
	if (cell_s < 1)
		snprintf(cell, sizeof(cell), "one cell: %.3g ms \xc3\x97 %s", cell_s * 1e3, slots);
	else if (cell_s < 120)
		snprintf(cell, sizeof(cell), "one cell: %.3g s \xc3\x97 %s", cell_s, slots);
	else	/* in the unit the axis reads */
		snprintf(cell, sizeof(cell), "one cell: %.3g %s \xc3\x97 %s", cell_s / (cell_s < 7200 ? 60 : 3600),
			 cell_s < 7200 ? "min" : "h", slots);
	swt_chart_text(c, SWT_FONT_LEGEND, x + w + 28, y + h / 2, 0, 0.5, 0, SWT_RGB_MUTED, 0,
		       cell);
	return h + 4 + lh + 8;
}

static int draw_heatmap(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const stream_name[NR_STREAMS] = { "swap-outs", "swap-ins" };
	const struct heat_data *d = data;
	const struct swt_report_ctx *rc = d->rc;
	const struct swt_report_time_axis axis = swt_report_time_axis(d->span_ns);
	double top, bottom;
	char msg[200];
	int cols = (int)d->nr_parts;

	top = swt_chart_header(c, "Where pages went and came back: swap slot vs time per device",
			       "Top row: slots written by swap-out; bottom row: slots read by "
			       "swap-in. Bands and diagonals mean pages that left together come "
			       "back together (readahead can help); uniform noise means they do "
			       "not.");
	bottom = swt_chart_footnote(c, d->more ? "Only the first 4 swap devices are shown." :
				    "Time counts from the capture's first event; slot 0 is the "
				    "swap header, never used for pages.");
	if (!d->nr_parts) {
		swt_report_no_events_message(rc, rc->nr_parts > 0, "nothing to map over time", msg,
					     sizeof(msg));
		swt_chart_body_message(c, top, bottom, msg);
		return 0;
	}
	top += colorbar(c, d, SWT_CHART_MARGIN, top);
	for (int k = 0; k < NR_STREAMS; k++) {
		int64_t cells = 0;

		for (size_t i = 0; i < d->nr_parts; i++)
			for (size_t j = 0; j < NT * NS; j++)
				cells += d->parts[i].cells[k][j] > 0;
		swt_chart_meta_series(c, stream_name[k], cells);
	}
	for (int k = 0; k < NR_STREAMS; k++) {
		for (size_t i = 0; i < d->nr_parts; i++) {
			const struct part_map *m = &d->parts[i];
			struct swt_chart_panel p = { 0 };
			char title[360], num[32];

			swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top,
					     c->width - 2 * SWT_CHART_MARGIN, bottom - top, cols,
					     NR_STREAMS, 24, 14, k * cols + (int)i);
			swt_chart_format_int(m->total[k], num, sizeof(num));
			snprintf(title, sizeof(title), "%s: %s (%s page%s)",
				 cols > 2 ? m->part->name : m->part->label,
				 stream_name[k], num, m->total[k] == 1 ? "" : "s");
			p.title = title;
			if (!m->total[k]) {
				snprintf(msg, sizeof(msg), "no %s on %s", stream_name[k],
					 m->part->name);
				swt_chart_panel_message(c, &p, msg);
				continue;
			}
			p.xa.label = k == IN ? axis.label : NULL;
			p.xa.hide_ticks = k != IN;
			p.xa.lo = 0;
			p.xa.hi = (double)d->span_ns / 1e9 / axis.unit_s;
			p.xa.exact = 1;
			p.ya.label = "swap slot";
			p.ya.fmt = SWT_FMT_COUNT;
			p.ya.integer = 1;
			p.ya.exact = 1;
			p.ya.lo = 0;
			p.ya.hi = (double)m->max_slot + 1.0;
			swt_chart_panel_fit(c, &p);
			swt_chart_panel_axes(c, &p);
			if (paint_cells(c, &p, d, m->cells[k]))
				return swt_error(err, SWT_ENOMEM, "out of memory");
			swt_chart_panel_frame(c, &p);
		}
	}
	return 0;
}

int swt_chart_heatmap_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			    struct swt_err *err)
{
	struct heat_data d = { .rc = rc };
	int ret;

	ret = load(&d, err);
	if (!ret)
		ret = swt_chart_render(&rc->out, "heatmap", draw_heatmap, &d, meta, err);
	free(d.parts);
	return ret;
}
