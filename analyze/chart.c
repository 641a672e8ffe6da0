/*
 * The drawing kit shared by every chart: palette, text through pango,
 * header and footnote, legends, nice axis ticks and number formats, panels
 * (fitting the plot area around its labels, grid, axes), bars, lines,
 * markers and "no data" messages.  Rendering to files is chart-render.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "util.h"

/* Okabe & Ito (2008), "Color Universal Design": safe for the common colour-vision deficiencies. */
static const struct swt_chart_rgb palette[SWT_PALETTE_SIZE] = {
	{ 0.000, 0.447, 0.698 },	/* blue */
	{ 0.902, 0.624, 0.000 },	/* orange */
	{ 0.000, 0.620, 0.451 },	/* bluish green */
	{ 0.835, 0.369, 0.000 },	/* vermillion */
	{ 0.800, 0.475, 0.655 },	/* reddish purple */
	{ 0.337, 0.706, 0.914 },	/* sky blue */
	{ 0.941, 0.894, 0.259 },	/* yellow */
	{ 0.000, 0.000, 0.000 },	/* black */
};

const struct swt_chart_rgb SWT_RGB_BLACK = { 0, 0, 0 };
const struct swt_chart_rgb SWT_RGB_TEXT = { 0.13, 0.13, 0.13 };
const struct swt_chart_rgb SWT_RGB_MUTED = { 0.40, 0.40, 0.40 };
const struct swt_chart_rgb SWT_RGB_GRID = { 0.88, 0.88, 0.88 };
const struct swt_chart_rgb SWT_RGB_WHITE = { 1, 1, 1 };

struct swt_chart_rgb swt_chart_color(size_t i)
{
	return palette[i % SWT_PALETTE_SIZE];
}

static void set_color(struct swt_chart *c, struct swt_chart_rgb col, double alpha)
{
	cairo_set_source_rgba(c->cr, col.r, col.g, col.b, alpha);
}

/* ---- metadata recording ---- */

static char *meta_strdup(struct swt_chart *c, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = swt_strdup(s);
	if (!d)
		c->meta->oom = 1;
	return d;
}

static int meta_grow(struct swt_chart *c, void **arr, size_t *cap, size_t need, size_t elem)
{
	if (swt_grow(arr, cap, need, elem)) {
		c->meta->oom = 1;
		return -1;
	}
	return 0;
}

void swt_chart_meta_series(struct swt_chart *c, const char *name, int64_t points)
{
	struct swt_chart_meta *m = c->meta;

	if (!c->record || meta_grow(c, (void **)&m->series, &m->cap_series, m->nr_series + 1,
				    sizeof(*m->series)))
		return;
	m->series[m->nr_series].name = meta_strdup(c, name);
	m->series[m->nr_series].points = points;
	m->nr_series++;
}

static void meta_add_string(struct swt_chart *c, char ***arr, size_t *nr, size_t *cap,
			    const char *text)
{
	if (!c->record || meta_grow(c, (void **)arr, cap, *nr + 1, sizeof(**arr)))
		return;
	(*arr)[(*nr)++] = meta_strdup(c, text);
}

void swt_chart_meta_note(struct swt_chart *c, const char *text)
{
	meta_add_string(c, &c->meta->notes, &c->meta->nr_notes, &c->meta->cap_notes, text);
}

void swt_chart_meta_message(struct swt_chart *c, const char *text)
{
	meta_add_string(c, &c->meta->messages, &c->meta->nr_messages, &c->meta->cap_messages,
			text);
}

static void meta_panel(struct swt_chart *c, const struct swt_chart_panel *pn, int axes)
{
	struct swt_chart_meta *m = c->meta;
	struct swt_chart_panel_meta *p;

	if (!c->record || meta_grow(c, (void **)&m->panels, &m->cap_panels, m->nr_panels + 1,
				    sizeof(*m->panels)))
		return;
	p = &m->panels[m->nr_panels++];
	memset(p, 0, sizeof(*p));
	p->title = meta_strdup(c, pn->title);
	if (!axes)
		return;
	p->x_label = meta_strdup(c, pn->xa.label);
	p->y_label = meta_strdup(c, pn->ya.label);
	if (pn->xa.ncats) {
		size_t len = 1;
		char *cats;

		for (size_t i = 0; i < pn->xa.ncats; i++)
			len += strlen(pn->xa.cats[i]) + 1;
		cats = calloc(1, len);
		if (!cats) {
			m->oom = 1;
			return;
		}
		p->categories = cats;
		for (size_t i = 0; i < pn->xa.ncats; i++) {
			/*
			 * labels wrapped with '\n' read as one line in the metadata,
			 * without the zero-width spaces that let them wrap
			 */
			for (const char *s = pn->xa.cats[i]; *s; s++) {
				if (!strncmp(s, SWT_CHART_BREAK, SWT_CHART_BREAK_LEN)) {
					s += SWT_CHART_BREAK_LEN - 1;
					continue;
				}
				*cats++ = *s == '\n' ? ' ' : *s;
			}
			if (i + 1 < pn->xa.ncats)
				*cats++ = '|';
		}
		*cats = '\0';
	}
}

/* ---- text ---- */

static PangoLayout *layout_text(struct swt_chart *c, enum swt_chart_font f, double max_width,
				double ax, const char *text)
{
	PangoLayout *l = c->layout;
	gchar *valid = NULL;

	pango_layout_set_font_description(l, c->fonts[f]);
	pango_layout_set_width(l, max_width > 0 ? (int)(max_width * PANGO_SCALE) : -1);
	pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
	pango_layout_set_alignment(l, ax > 0.25 && ax < 0.75 ? PANGO_ALIGN_CENTER :
				      ax >= 0.75 ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT);
	/* pango rejects bad UTF-8 with a warning on stderr: names from a database may be */
	if (!g_utf8_validate(text, -1, NULL))
		text = valid = g_utf8_make_valid(text, -1);
	pango_layout_set_text(l, text, -1);
	g_free(valid);
	return l;
}

int swt_chart_words_fit(struct swt_chart *c, const char *const *labels, size_t n, double band)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = labels[i];

		while (*s) {
			char word[400];
			size_t len = 0;
			double w;

			while (*s && *s != ' ' && *s != '\n' &&
			       strncmp(s, SWT_CHART_BREAK, SWT_CHART_BREAK_LEN) && len + 1 < sizeof(word))
				word[len++] = *s++;
			word[len] = '\0';
			swt_chart_text_size(c, SWT_FONT_TICK, 0, word, &w, NULL);
			if (w > band)
				return 0;
			s += !strncmp(s, SWT_CHART_BREAK, SWT_CHART_BREAK_LEN) ? SWT_CHART_BREAK_LEN
									  : *s != '\0';
		}
	}
	return 1;
}

void swt_chart_text_size(struct swt_chart *c, enum swt_chart_font f, double max_width,
			 const char *text, double *w, double *h)
{
	PangoRectangle r;

	pango_layout_get_extents(layout_text(c, f, max_width, 0, text), NULL, &r);
	if (w)
		*w = (double)r.width / PANGO_SCALE;
	if (h)
		*h = (double)r.height / PANGO_SCALE;
}

void swt_chart_text(struct swt_chart *c, enum swt_chart_font f, double x, double y, double ax,
		    double ay, double angle, struct swt_chart_rgb color, double max_width,
		    const char *text)
{
	PangoLayout *l;
	PangoRectangle r;
	double w, h;

	if (!text || !*text)
		return;
	cairo_save(c->cr);
	cairo_translate(c->cr, x, y);
	if (angle != 0)
		cairo_rotate(c->cr, -angle);
	pango_cairo_update_context(c->cr, c->pango);
	l = layout_text(c, f, max_width, ax, text);
	pango_layout_context_changed(l);
	pango_layout_get_extents(l, NULL, &r);
	w = (double)r.width / PANGO_SCALE;
	h = (double)r.height / PANGO_SCALE;
	/* the logical box may start right of the layout origin (centred, wrapped text) */
	cairo_move_to(c->cr, -ax * w - (double)r.x / PANGO_SCALE,
		      -ay * h - (double)r.y / PANGO_SCALE);
	set_color(c, color, 1);
	pango_cairo_show_layout(c->cr, l);
	cairo_restore(c->cr);
}

double swt_chart_header(struct swt_chart *c, const char *title, const char *subtitle)
{
	double y = SWT_CHART_MARGIN - 6, h, maxw = c->width - 2 * SWT_CHART_MARGIN;

	set_color(c, SWT_RGB_WHITE, 1);
	cairo_paint(c->cr);
	if (c->record) {
		free(c->meta->title);
		free(c->meta->subtitle);
		c->meta->title = meta_strdup(c, title);
		c->meta->subtitle = meta_strdup(c, subtitle);
	}
	swt_chart_text_size(c, SWT_FONT_TITLE, maxw, title, NULL, &h);
	swt_chart_text(c, SWT_FONT_TITLE, SWT_CHART_MARGIN, y, 0, 0, 0, SWT_RGB_TEXT, maxw, title);
	y += h + 2;
	if (subtitle && *subtitle) {
		swt_chart_text_size(c, SWT_FONT_SUBTITLE, maxw, subtitle, NULL, &h);
		swt_chart_text(c, SWT_FONT_SUBTITLE, SWT_CHART_MARGIN, y, 0, 0, 0, SWT_RGB_MUTED,
			       maxw, subtitle);
		y += h;
	}
	return y + 10;
}

double swt_chart_footnote(struct swt_chart *c, const char *text)
{
	double h, maxw = c->width - 2 * SWT_CHART_MARGIN, y;

	if (!text || !*text)
		return c->height - SWT_CHART_MARGIN / 2.0;
	swt_chart_meta_note(c, text);
	swt_chart_text_size(c, SWT_FONT_NOTE, maxw, text, NULL, &h);
	y = c->height - SWT_CHART_MARGIN / 2.0 - h;
	swt_chart_text(c, SWT_FONT_NOTE, SWT_CHART_MARGIN, y, 0, 0, 0, SWT_RGB_MUTED, maxw, text);
	return y - 8;
}

double swt_chart_note_line(struct swt_chart *c, double y, const char *text)
{
	double h, maxw = c->width - 2 * SWT_CHART_MARGIN;

	swt_chart_meta_note(c, text);
	/* a long note (policy names) wraps rather than run off the canvas */
	swt_chart_text_size(c, SWT_FONT_NOTE, maxw, text, NULL, &h);
	swt_chart_text(c, SWT_FONT_NOTE, SWT_CHART_MARGIN, y, 0, 0, 0, SWT_RGB_MUTED, maxw, text);
	return y + SWT_MAX(18.0, h + 4);
}

/* ---- legends ---- */

void swt_chart_mark(struct swt_chart *c, enum swt_chart_mark_kind mark, struct swt_chart_rgb color,
		    double x, double y, double w, double h)
{
	cairo_t *cr = c->cr;
	double cy = y + h / 2, dash[] = { 5, 3 };

	cairo_save(cr);
	switch (mark) {
	case SWT_MARK_BOX:
		set_color(c, color, 1);
		cairo_rectangle(cr, x + 2, y + 1, w - 4, h - 2);
		cairo_fill(cr);
		break;
	case SWT_MARK_AREA:
		set_color(c, color, 0.35);
		cairo_rectangle(cr, x + 2, y + 1, w - 4, h - 2);
		cairo_fill(cr);
		break;
	case SWT_MARK_LINE:
	case SWT_MARK_LINE_DOT:
		set_color(c, color, 1);
		cairo_set_line_width(cr, 2.2);
		cairo_move_to(cr, x, cy);
		cairo_line_to(cr, x + w, cy);
		cairo_stroke(cr);
		if (mark == SWT_MARK_LINE)
			break;
		cairo_arc(cr, x + w / 2, cy, 3.5, 0, 2 * M_PI);
		cairo_fill(cr);
		break;
	case SWT_MARK_DASH:
		set_color(c, color, 1);
		cairo_set_line_width(cr, 2);
		cairo_set_dash(cr, dash, 2, 0);
		cairo_move_to(cr, x, cy);
		cairo_line_to(cr, x + w, cy);
		cairo_stroke(cr);
		break;
	case SWT_MARK_DIAMOND:
		set_color(c, color, 1);
		cairo_move_to(cr, x + w / 2, cy - 6);
		cairo_line_to(cr, x + w / 2 + 6, cy);
		cairo_line_to(cr, x + w / 2, cy + 6);
		cairo_line_to(cr, x + w / 2 - 6, cy);
		cairo_close_path(cr);
		cairo_fill(cr);
		break;
	}
	cairo_restore(cr);
}

static void meta_legend(struct swt_chart *c, const struct swt_chart_legend_item *item)
{
	struct swt_chart_meta *m = c->meta;
	struct swt_chart_legend_meta *l;

	if (!c->record || meta_grow(c, (void **)&m->legend, &m->cap_legend, m->nr_legend + 1,
				    sizeof(*m->legend)))
		return;
	l = &m->legend[m->nr_legend++];
	l->name = meta_strdup(c, item->label);
	snprintf(l->color, sizeof(l->color), "#%02x%02x%02x", (unsigned)lround(item->color.r * 255),
		 (unsigned)lround(item->color.g * 255), (unsigned)lround(item->color.b * 255));
}

/*
 * Items flow left to right in rows; a label too long for a row wraps, and
 * its row is as tall as its tallest label, so nothing is drawn over the
 * next row.
 */
double swt_chart_legend(struct swt_chart *c, double x, double y, double max_w,
			const struct swt_chart_legend_item *items, size_t n)
{
	const double mark_w = 24, mark_gap = 6, item_gap = 22;
	double line_h, y0 = y;
	size_t first = 0;

	if (!n)
		return 0;
	swt_chart_text_size(c, SWT_FONT_LEGEND, 0, "Ag", NULL, &line_h);
	while (first < n) {
		double cx = x, row_h = line_h, tw, th;
		size_t end = first;

		/* the row: as many items as fit, at least one */
		for (; end < n; end++) {
			swt_chart_text_size(c, SWT_FONT_LEGEND, max_w - mark_w - mark_gap,
					    items[end].label, &tw, &th);
			if (end > first && cx + mark_w + mark_gap + tw > x + max_w)
				break;
			row_h = SWT_MAX(row_h, th);
			cx += mark_w + mark_gap + tw + item_gap;
		}
		cx = x;
		for (size_t i = first; i < end; i++) {
			swt_chart_text_size(c, SWT_FONT_LEGEND, max_w - mark_w - mark_gap,
					    items[i].label, &tw, &th);
			swt_chart_mark(c, items[i].mark, items[i].color, cx,
				       y + (line_h - 12) / 2, mark_w, 12);
			swt_chart_text(c, SWT_FONT_LEGEND, cx + mark_w + mark_gap, y, 0, 0, 0,
				       SWT_RGB_TEXT, max_w - mark_w - mark_gap, items[i].label);
			meta_legend(c, &items[i]);
			cx += mark_w + mark_gap + tw + item_gap;
		}
		y += row_h + 6;
		first = end;
	}
	return y - y0 + 4;
}

/* ---- axes ---- */

static int is_integral(double v)
{
	return fabs(v - round(v)) < 1e-9 * SWT_MAX(1.0, fabs(v));
}

/* Decades on a log axis: the floor as given, the top rounded up to a power of ten. */
static void log_ticks(struct swt_chart_axis *a, int max_ticks)
{
	double lo = isfinite(a->lo) && a->lo > 0 ? a->lo : 1, hi = a->hi, decades;

	if (!isfinite(hi) || hi <= lo)
		hi = lo * 10;
	if (a->nat) {
		/* ticks given: the range as given too */
		a->min = lo;
		a->max = hi;
		a->step = 1;
		return;
	}
	a->min = lo;
	a->max = pow(10, ceil(log10(hi) - 1e-9));
	if (a->max <= a->min)
		a->max = a->min * 10;
	decades = log10(a->max) - ceil(log10(a->min) - 1e-9);
	/* decade labels are short: they can sit closer than linear ones */
	a->step = SWT_MAX(1.0, ceil(decades / (max_ticks + 2)));
}

void swt_chart_axis_ticks(struct swt_chart_axis *a, int max_ticks)
{
	static const double mult[] = { 1, 2, 2.5, 5 };
	double lo = a->lo, hi = a->hi, mag, step = 1;
	int found = 0;

	if (a->ncats) {
		a->min = -0.5;
		a->max = (double)a->ncats - 0.5;
		a->step = 1;
		return;
	}
	if (max_ticks < 2)
		max_ticks = 2;
	if (a->log) {
		log_ticks(a, max_ticks);
		return;
	}
	if (!isfinite(lo) || !isfinite(hi)) {
		lo = 0;
		hi = 1;
	}
	if (lo > hi) {
		double t = lo;

		lo = hi;
		hi = t;
	}
	if (a->zero) {
		lo = SWT_MIN(lo, 0.0);
		hi = SWT_MAX(hi, 0.0);
	}
	if (hi - lo <= 1e-12 * SWT_MAX(1.0, fabs(hi))) {
		/* one value: widen around it, never below zero for non-negative data */
		double pad = a->integer ? 1 : (hi != 0 ? fabs(hi) * 0.5 : 1);

		if (hi == 0 && lo == 0) {
			hi = 1;
		} else {
			hi += pad;
			lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
		}
	}
	mag = pow(10, floor(log10((hi - lo) / max_ticks)));
	for (int tries = 0; tries < 4 && !found; tries++, mag *= 10) {
		for (size_t i = 0; i < SWT_ARRAY_SIZE(mult); i++) {
			double s = mult[i] * mag, n;

			if (a->integer && (s < 1 || !is_integral(s)))
				continue;
			/* intervals between ticks: inside an exact range, over a rounded one */
			if (a->exact)
				n = floor(hi / s + 1e-9) - ceil(lo / s - 1e-9);
			else
				n = ceil(hi / s - 1e-9) - floor(lo / s + 1e-9);
			if (n <= max_ticks) {
				step = s;
				found = 1;
				break;
			}
		}
	}
	if (!found)
		step = (hi - lo) / max_ticks;
	a->step = step;
	if (a->exact) {
		a->min = lo;
		a->max = hi;
	} else {
		a->min = floor(lo / step + 1e-9) * step;
		a->max = ceil(hi / step - 1e-9) * step;
	}
	if (a->max <= a->min)
		a->max = a->min + step;
	/* tick_values() stops half a step below max: no tick in the head room */
	if (a->headroom && !a->exact)
		a->max += step / 2;
}

static int decimals_for(double step)
{
	int d = 0;

	while (d < 6 && !is_integral(step * pow(10, d)))
		d++;
	return d;
}

/*
 * A tick value with the decimals its step needs, less trailing zeros:
 * "0, 2.5k, 5k, 7.5k" rather than "0.0, 2.5k, 5.0k".
 */
static void format_tick(char *buf, size_t size, int decimals, double v, const char *suffix)
{
	char num[64];
	size_t len;

	snprintf(num, sizeof(num), "%.*f", decimals, v);
	len = strlen(num);
	if (strchr(num, '.')) {
		while (len && num[len - 1] == '0')
			num[--len] = '\0';
		if (len && num[len - 1] == '.')
			num[--len] = '\0';
	}
	snprintf(buf, size, "%s%s", strcmp(num, "-0") ? num : "0", suffix);
}

/* Decimal unit suffixes, largest first, for the axes and short counts. */
static const struct {
	double div;
	const char *suffix;
} si_units[] = { { 1e18, "E" }, { 1e15, "P" }, { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" },
		 { 1e3, "k" } };

void swt_chart_axis_format(const struct swt_chart_axis *a, double v, char *buf, size_t size)
{
	double top = SWT_MAX(fabs(a->min), fabs(a->max)), div = 1;
	const char *suffix = "";

	if (a->ncats) {
		size_t i = (size_t)llround(v);

		snprintf(buf, size, "%s", i < a->ncats && a->cats ? a->cats[i] : "");
		return;
	}
	if (a->log && a->nat) {
		/* given values (MiB of memory): whole from 10 on */
		format_tick(buf, size, v >= 10 ? 0 : 1, v, "");
		return;
	}
	if (a->log) {
		/* powers of ten: 1, 10, 100, 1k, 10k ... */
		for (size_t i = 0; i < SWT_ARRAY_SIZE(si_units); i++)
			if (v >= si_units[i].div) {
				snprintf(buf, size, "%g%s", v / si_units[i].div, si_units[i].suffix);
				return;
			}
		snprintf(buf, size, "%g", v);
		return;
	}
	if (fabs(v) < a->step * 1e-6)
		v = 0;	/* no "-0" */
	switch (a->fmt) {
	case SWT_FMT_PERCENT:
		format_tick(buf, size, decimals_for(a->step * 100), v * 100, "%");
		return;
	case SWT_FMT_COUNT:
		/* 3.5M, not 3500k: a suffix from the first thousand of its unit; k from 10k */
		for (size_t i = 0; i < SWT_ARRAY_SIZE(si_units); i++)
			if (top >= SWT_MAX(si_units[i].div, 1e4)) {
				div = si_units[i].div;
				suffix = si_units[i].suffix;
				break;
			}
		format_tick(buf, size, decimals_for(a->step / div), v / div, v == 0 ? "" : suffix);
		return;
	case SWT_FMT_NUMBER:
		break;
	}
	format_tick(buf, size, decimals_for(a->step), v, "");
}

void swt_chart_format_int(int64_t n, char *buf, size_t size)
{
	char digits[32], out[48];
	size_t len, j = 0;
	int neg = n < 0;
	uint64_t u = neg ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;

	snprintf(digits, sizeof(digits), "%llu", (unsigned long long)u);
	len = strlen(digits);
	if (neg)
		out[j++] = '-';
	for (size_t i = 0; i < len; i++) {
		/* groups of three only from 10 000 up, as style guides write numbers */
		if (i && len > 4 && (len - i) % 3 == 0) {
			/* U+00A0: a number never breaks across lines */
			out[j++] = '\xc2';
			out[j++] = '\xa0';
		}
		out[j++] = digits[i];
	}
	out[j] = '\0';
	snprintf(buf, size, "%s", out);
}

void swt_chart_format_short(int64_t n, char *buf, size_t size)
{
	double v = (double)n;

	for (size_t i = 0; i < SWT_ARRAY_SIZE(si_units); i++) {
		double q = fabs(v) / si_units[i].div;

		if (fabs(v) < 10000 || q < 1)
			continue;
		snprintf(buf, size, "%.*f%s", q < 10 && !is_integral(round(q * 10) / 10) ? 1 : 0,
			 v / si_units[i].div, si_units[i].suffix);
		return;
	}
	swt_chart_format_int(n, buf, size);
}

/* ---- panels ---- */

void swt_chart_grid_shape(size_t n, int max_cols, int *cols, int *rows)
{
	int c;

	if (max_cols < 1)
		max_cols = 1;
	if (n <= 1)
		c = 1;
	else if (n <= 2)
		c = 2;
	else if (n <= 4)
		c = 2;
	else if (n <= 6)
		c = 3;
	else
		c = 4;
	c = SWT_MIN(c, max_cols);
	*cols = c;
	*rows = n ? (int)((n + (size_t)c - 1) / (size_t)c) : 1;
}

void swt_chart_panel_grid(struct swt_chart_panel *p, double x, double y, double w, double h,
			  int cols, int rows, double gap_x, double gap_y, int i)
{
	double cw, ch;

	if (cols < 1)
		cols = 1;
	if (rows < 1)
		rows = 1;
	cw = (w - gap_x * (cols - 1)) / cols;
	ch = (h - gap_y * (rows - 1)) / rows;
	p->x = x + (i % cols) * (cw + gap_x);
	p->y = y + (i / cols) * (ch + gap_y);
	p->w = cw;
	p->h = ch;
}

#define MAX_TICKS SWT_CHART_MAX_TICKS

/*
 * The tick values of a numeric axis: multiples of the step inside the range
 * (also when the range is exact rather than rounded out), powers of ten
 * on a log axis.  Each computed from its index, so no error accumulates.
 */
static size_t tick_values(const struct swt_chart_axis *a, double *out)
{
	size_t n = 0;

	if (a->log && a->nat) {
		for (size_t i = 0; i < a->nat && n < MAX_TICKS; i++)
			if (a->at[i] >= a->min * (1 - 1e-9) && a->at[i] <= a->max * (1 + 1e-9))
				out[n++] = a->at[i];
		return n;
	}
	if (a->log) {
		double e = ceil(log10(a->min) - 1e-9);

		for (; n < MAX_TICKS; n++) {
			double v = pow(10, e + a->step * (double)n);

			if (v > a->max * (1 + 1e-9))
				break;
			out[n] = v;
		}
		return n;
	}
	for (double first = ceil(a->min / a->step - 1e-9); n < MAX_TICKS; n++) {
		double v = (first + (double)n) * a->step;

		if (v > a->max - (a->headroom && !a->exact ? a->step / 2 : 0) + a->step * 1e-6)
			break;
		out[n] = v;
	}
	return n;
}

static double widest_tick(struct swt_chart *c, const struct swt_chart_axis *a)
{
	char buf[64];
	double w, widest = 0, ticks[MAX_TICKS];
	size_t n = tick_values(a, ticks);

	for (size_t i = 0; i < n; i++) {
		double v = ticks[i];

		swt_chart_axis_format(a, v, buf, sizeof(buf));
		swt_chart_text_size(c, SWT_FONT_TICK, 0, buf, &w, NULL);
		widest = SWT_MAX(widest, w);
	}
	return widest;
}

static double panel_top_of_plot(struct swt_chart *c, const struct swt_chart_panel *p)
{
	double top = p->y, h;

	if (p->title) {
		swt_chart_text_size(c, SWT_FONT_PANEL, p->w, p->title, NULL, &h);
		top += h + 4;
	}
	if (p->note) {
		swt_chart_text_size(c, SWT_FONT_NOTE, p->w, p->note, NULL, &h);
		top += h + 2;
	}
	return top;
}

/* px between a panel's title and a y label standing across after it */
#define Y_LABEL_GAP 12

static double longest_word_width(struct swt_chart *c, enum swt_chart_font f, const char *text)
{
	double widest = 0;

	while (*text) {
		size_t n = strcspn(text, " ");
		char word[128];
		double w;

		snprintf(word, sizeof(word), "%.*s", (int)SWT_MIN(n, sizeof(word) - 1), text);
		swt_chart_text_size(c, f, 0, word, &w, NULL);
		widest = SWT_MAX(widest, w);
		text += n + (text[n] == ' ');
	}
	return widest;
}

/*
 * Whether the y label of a plot plot_h tall stands across, after the
 * title: asked for, or a word of it is longer than the plot is tall; and
 * the title line has room for it.  A panel without a title, or without
 * that room, goes without a label too long (swt_chart_panel_axes()).
 */
static int y_label_goes_across(struct swt_chart *c, const struct swt_chart_panel *p,
			       double plot_h)
{
	double title_w, label_w;

	if (!p->ya.label || !p->title ||
	    (!p->ya.across && longest_word_width(c, SWT_FONT_LABEL, p->ya.label) <= plot_h))
		return 0;
	swt_chart_text_size(c, SWT_FONT_PANEL, 0, p->title, &title_w, NULL);
	swt_chart_text_size(c, SWT_FONT_LABEL, 0, p->ya.label, &label_w, NULL);
	return title_w + Y_LABEL_GAP + label_w <= p->w;
}

/*
 * The y label runs along a plot plot_h tall and wraps there, as
 * swt_chart_panel_axes() draws it: a short panel (under a long legend)
 * needs room for its every line, or the second is drawn over the ticks.
 * Standing across, it needs none.
 */
static double y_label_space(struct swt_chart *c, const struct swt_chart_panel *p, double plot_h)
{
	double lh = 0;

	if (y_label_goes_across(c, p, plot_h))
		return 0;
	if (p->ya.label)
		swt_chart_text_size(c, SWT_FONT_LABEL,
				    longest_word_width(c, SWT_FONT_LABEL, p->ya.label) <= plot_h ?
				    plot_h : 0, p->ya.label, NULL, &lh);
	return p->ya.label ? lh + 8 : 0;
}

static int label_rows(const struct swt_chart_axis *a)
{
	return a->cat_rows > 1 ? a->cat_rows : 1;
}

/*
 * The tallest category label under a plot pw wide, each wrapped inside
 * its band (cat_rows bands, staggered), as swt_chart_panel_axes() draws
 * them; at least a tick label's height.
 */
static double cat_label_height(struct swt_chart *c, const struct swt_chart_axis *a, double pw)
{
	double band = pw / (double)a->ncats * label_rows(a), hmax, h;

	swt_chart_text_size(c, SWT_FONT_TICK, 0, "0", NULL, &hmax);
	for (size_t i = 0; i < a->ncats; i++) {
		swt_chart_text_size(c, SWT_FONT_TICK, band - 8, a->cats[i], NULL, &h);
		hmax = SWT_MAX(hmax, h);
	}
	return hmax;
}

static double x_labels_height(struct swt_chart *c, const struct swt_chart_panel *p, double left,
			      double right)
{
	double tick_h, label_h = 0, hmax;

	swt_chart_text_size(c, SWT_FONT_TICK, 0, "0", NULL, &tick_h);
	if (p->xa.label)
		/* wrapped at the plot's width, as swt_chart_panel_axes() draws it */
		swt_chart_text_size(c, SWT_FONT_LABEL, right - left, p->xa.label, NULL, &label_h);
	hmax = tick_h;
	if (p->xa.ncats)
		hmax = label_rows(&p->xa) * cat_label_height(c, &p->xa, right - left);
	return (p->xa.hide_ticks ? 0 : hmax + 8) + (p->xa.label ? label_h + 6 : 0);
}

void swt_chart_panel_fit(struct swt_chart *c, struct swt_chart_panel *p)
{
	double top = panel_top_of_plot(c, p) + 8, right = p->x + p->w - 10, left, bottom, tick_h;
	double xtw;
	int max_x;

	/* y ticks need the plot height, which needs the x labels, which need the width */
	swt_chart_text_size(c, SWT_FONT_TICK, 0, "0", NULL, &tick_h);
	swt_chart_axis_ticks(&p->ya, (int)SWT_MAX(2.0, (p->y + p->h - top - 3 * tick_h) / 42));
	left = p->x + y_label_space(c, p, p->y + p->h - top) + widest_tick(c, &p->ya) + 8;
	bottom = p->y + p->h - x_labels_height(c, p, left, right);
	swt_chart_axis_ticks(&p->ya, (int)SWT_MAX(2.0, (bottom - top) / 42));
	left = p->x + y_label_space(c, p, SWT_MAX(10.0, bottom - top)) + widest_tick(c, &p->ya) + 8;
	/* as the room left of the plot was reserved, whatever the final height */
	p->y_label_across = y_label_goes_across(c, p, SWT_MAX(10.0, bottom - top));
	/* a wider y label leaves the x label less width: more lines, perhaps */
	bottom = p->y + p->h - x_labels_height(c, p, left, right);
	p->px = left;
	p->py = top;
	p->pw = SWT_MAX(10.0, right - left);
	p->ph = SWT_MAX(10.0, bottom - top);
	if (p->xa.ncats) {
		swt_chart_axis_ticks(&p->xa, 0);
		return;
	}
	/* as many x ticks as fit with their labels a comfortable gap apart */
	max_x = 12;
	for (int tries = 0; tries < 6; tries++) {
		int fits;

		swt_chart_axis_ticks(&p->xa, max_x);
		xtw = widest_tick(c, &p->xa);
		fits = (int)(p->pw / (xtw + 28));
		if (fits >= max_x || max_x <= 2)
			break;
		max_x = SWT_MAX(2, fits);
	}
}

/* Where v falls on the axis, 0..1, clamped. */
static double axis_frac(const struct swt_chart_axis *a, double v)
{
	double f;

	if (a->log)
		f = (log10(SWT_MAX(v, a->min)) - log10(a->min)) / (log10(a->max) - log10(a->min));
	else
		f = (v - a->min) / (a->max - a->min);
	if (!isfinite(f))
		f = 0;
	return SWT_MAX(0.0, SWT_MIN(1.0, f));
}

double swt_chart_panel_x(const struct swt_chart_panel *p, double v)
{
	return p->px + axis_frac(&p->xa, v) * p->pw;
}

double swt_chart_panel_y(const struct swt_chart_panel *p, double v)
{
	return p->py + p->ph - axis_frac(&p->ya, v) * p->ph;
}

void swt_chart_panel_band(const struct swt_chart_panel *p, size_t i, double *x0, double *x1)
{
	double band = p->pw / (double)(p->xa.ncats ? p->xa.ncats : 1);

	*x0 = p->px + band * (double)i;
	*x1 = *x0 + band;
}

void swt_chart_panel_clip(struct swt_chart *c, const struct swt_chart_panel *p)
{
	cairo_save(c->cr);
	cairo_rectangle(c->cr, p->px, p->py, p->pw, p->ph);
	cairo_clip(c->cr);
}

/* Crisp 1 px lines: centre them on pixel centres. */
static double crisp(double v)
{
	return floor(v) + 0.5;
}

static void panel_titles(struct swt_chart *c, const struct swt_chart_panel *p)
{
	double y = p->y, h;

	if (p->title) {
		swt_chart_text_size(c, SWT_FONT_PANEL, p->w, p->title, NULL, &h);
		swt_chart_text(c, SWT_FONT_PANEL, p->x, y, 0, 0, 0, SWT_RGB_TEXT, p->w, p->title);
		y += h + 4;
	}
	if (p->note)
		swt_chart_text(c, SWT_FONT_NOTE, p->x, y, 0, 0, 0, SWT_RGB_MUTED, p->w, p->note);
}

size_t swt_chart_y_tick_labels(struct swt_chart *c, const struct swt_chart_panel *p,
			       double *out)
{
	double yt[MAX_TICKS], tick_h, last_y = 0;
	size_t ny = tick_values(&p->ya, yt), n = 0;

	swt_chart_text_size(c, SWT_FONT_TICK, 0, "0", NULL, &tick_h);
	/* from the top: the scale's largest value says most about a short panel */
	for (size_t i = ny; i-- > 0;) {
		double y = swt_chart_panel_y(p, yt[i]);

		if (n && y - last_y < tick_h + 2)
			continue;
		out[n++] = yt[i];
		last_y = y;
	}
	return n;
}

void swt_chart_panel_axes(struct swt_chart *c, const struct swt_chart_panel *p)
{
	cairo_t *cr = c->cr;
	char buf[64];
	double x, y, xt[MAX_TICKS], yt[MAX_TICKS];
	size_t nx, ny;

	meta_panel(c, p, 1);
	panel_titles(c, p);

	cairo_save(cr);
	cairo_set_line_width(cr, 1);
	set_color(c, SWT_RGB_GRID, 1);
	nx = p->xa.ncats ? 0 : tick_values(&p->xa, xt);
	ny = tick_values(&p->ya, yt);
	for (size_t i = 0; i < ny; i++) {
		y = crisp(swt_chart_panel_y(p, yt[i]));
		cairo_move_to(cr, p->px, y);
		cairo_line_to(cr, p->px + p->pw, y);
	}
	if (!p->xa.ncats) {
		for (size_t i = 0; i < nx; i++) {
			x = crisp(swt_chart_panel_x(p, xt[i]));
			cairo_move_to(cr, x, p->py);
			cairo_line_to(cr, x, p->py + p->ph);
		}
	}
	cairo_stroke(cr);
	cairo_restore(cr);

	ny = swt_chart_y_tick_labels(c, p, yt);
	for (size_t i = 0; i < ny; i++) {
		swt_chart_axis_format(&p->ya, yt[i], buf, sizeof(buf));
		swt_chart_text(c, SWT_FONT_TICK, p->px - 7, swt_chart_panel_y(p, yt[i]), 1, 0.5, 0,
			       SWT_RGB_TEXT, 0, buf);
	}
	if (!p->xa.hide_ticks) {
		if (p->xa.ncats) {
			int rows = label_rows(&p->xa);
			double row_h = rows > 1 ? cat_label_height(c, &p->xa, p->pw) : 0;

			for (size_t i = 0; i < p->xa.ncats; i++) {
				double x0, x1;

				swt_chart_panel_band(p, i, &x0, &x1);
				swt_chart_text(c, SWT_FONT_TICK, (x0 + x1) / 2,
					       p->py + p->ph + 6 + row_h * (double)(i % (size_t)rows),
					       0.5, 0, 0, SWT_RGB_TEXT, (x1 - x0) * rows - 8,
					       p->xa.cats[i]);
			}
		} else {
			for (size_t i = 0; i < nx; i++) {
				swt_chart_axis_format(&p->xa, xt[i], buf, sizeof(buf));
				swt_chart_text(c, SWT_FONT_TICK, swt_chart_panel_x(p, xt[i]),
					       p->py + p->ph + 6, 0.5, 0, 0, SWT_RGB_TEXT, 0, buf);
			}
		}
	}
	/*
	 * A panel too short for the label's longest word (eight devices
	 * stacked) has it across, after its title; without a title, or room
	 * there, it goes without rather than show "pa- ge- s/": its units
	 * are in the legend or title too
	 */
	if (p->y_label_across) {
		double title_w, title_h;

		swt_chart_text_size(c, SWT_FONT_PANEL, 0, p->title, &title_w, &title_h);
		swt_chart_text(c, SWT_FONT_LABEL, p->x + title_w + Y_LABEL_GAP, p->y + title_h,
			       0, 1, 0, SWT_RGB_TEXT, 0, p->ya.label);
	} else if (p->ya.label && longest_word_width(c, SWT_FONT_LABEL, p->ya.label) <= p->ph) {
		swt_chart_text(c, SWT_FONT_LABEL, p->x, p->py + p->ph / 2, 0.5, 0, M_PI / 2,
			       SWT_RGB_TEXT, p->ph, p->ya.label);
	}
	if (p->xa.label)
		swt_chart_text(c, SWT_FONT_LABEL, p->px + p->pw / 2, p->y + p->h, 0.5, 1, 0,
			       SWT_RGB_TEXT, p->pw, p->xa.label);
}

void swt_chart_panel_frame(struct swt_chart *c, const struct swt_chart_panel *p)
{
	cairo_t *cr = c->cr;
	double x = crisp(p->px), y = crisp(p->py + p->ph);

	cairo_save(cr);
	cairo_set_line_width(cr, 1);
	set_color(c, SWT_RGB_MUTED, 1);
	cairo_move_to(cr, x, p->py);
	cairo_line_to(cr, x, y);
	cairo_line_to(cr, p->px + p->pw, y);
	cairo_stroke(cr);
	cairo_restore(cr);
}

void swt_chart_message(struct swt_chart *c, double x, double y, double w, double h,
		       const char *text)
{
	cairo_t *cr = c->cr;
	double dash[] = { 6, 4 };

	swt_chart_meta_message(c, text);
	cairo_save(cr);
	cairo_rectangle(cr, crisp(x), crisp(y), floor(w), floor(h));
	cairo_set_source_rgb(cr, 0.965, 0.965, 0.965);
	cairo_fill_preserve(cr);
	cairo_set_line_width(cr, 1);
	cairo_set_dash(cr, dash, 2, 0);
	set_color(c, SWT_RGB_MUTED, 1);
	cairo_stroke(cr);
	cairo_restore(cr);
	swt_chart_text(c, SWT_FONT_MESSAGE, x + w / 2, y + h / 2, 0.5, 0.5, 0, SWT_RGB_MUTED,
		       SWT_MAX(40.0, w - 40), text);
}

void swt_chart_body_message(struct swt_chart *c, double top, double bottom, const char *text)
{
	swt_chart_message(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, bottom - top,
			  text);
}

void swt_chart_panel_message(struct swt_chart *c, const struct swt_chart_panel *p, const char *text)
{
	double top = panel_top_of_plot(c, p) + 4;

	meta_panel(c, p, 0);
	panel_titles(c, p);
	swt_chart_message(c, p->x, top, p->w - 10, p->y + p->h - top, text);
}

/* Bar k of nk in category cat: its left edge and width. */
static void bar_geometry(const struct swt_chart_panel *p, size_t cat, size_t k, size_t nk,
			 double *bx, double *bw)
{
	double x0, x1, group;

	swt_chart_panel_band(p, cat, &x0, &x1);
	/* wide bands (few categories) would give slabs, not bars */
	group = SWT_MIN((x1 - x0) * 0.8, (double)nk * 90);
	*bw = group / (double)nk;
	*bx = x0 + (x1 - x0 - group) / 2 + *bw * (double)k;
}

/*
 * Labels of neighbouring bars would run together: each keeps 2 px of its
 * bar's slot on either side ("100%" fits over a bar as narrow as 36 px, as
 * over six bars in a third of the figure).
 */
static int label_fits(struct swt_chart *c, double bw, const char *label, double *lw, double *lh)
{
	swt_chart_text_size(c, SWT_FONT_VALUE, 0, label, lw, lh);
	return *lw <= bw - 4;
}

int swt_chart_bar_label_fits(struct swt_chart *c, const struct swt_chart_panel *p, size_t nk,
			     const char *label)
{
	double bx, bw, lw, lh;

	if (!nk)
		return 0;
	bar_geometry(p, 0, 0, nk, &bx, &bw);
	return label_fits(c, bw, label, &lw, &lh);
}

void swt_chart_panel_bar(struct swt_chart *c, const struct swt_chart_panel *p, size_t cat, size_t k,
		   size_t nk, double v, struct swt_chart_rgb color, const char *label)
{
	double bw, bx, top, base, lw, lh;

	if (!isfinite(v) || !nk)
		return;
	bar_geometry(p, cat, k, nk, &bx, &bw);
	base = swt_chart_panel_y(p, p->ya.log ? p->ya.min : SWT_MAX(p->ya.min, 0.0));
	top = swt_chart_panel_y(p, v);
	set_color(c, color, 1);
	/* a hairline gap between neighbouring bars keeps them apart */
	cairo_rectangle(c->cr, bx + (bw > 6 ? 0.75 : 0), top, bw - (bw > 6 ? 1.5 : 0), base - top);
	cairo_fill(c->cr);
	if (!label)
		return;
	if (!label_fits(c, bw, label, &lw, &lh))
		return;
	if (top - lh - 2 >= p->py)
		swt_chart_text(c, SWT_FONT_VALUE, bx + bw / 2, top - 2, 0.5, 1, 0, SWT_RGB_TEXT, 0,
			       label);
	else if (base - top > lh + 6)	/* no room above: inside the top of the bar */
		swt_chart_text(c, SWT_FONT_VALUE, bx + bw / 2, top + 3, 0.5, 0, 0, SWT_RGB_WHITE, 0,
			       label);
}

void swt_chart_panel_line(struct swt_chart *c, const struct swt_chart_panel *p, const double *xs,
		    const double *ys, size_t n, struct swt_chart_rgb color, int dashed, int dots)
{
	cairo_t *cr = c->cr;
	double dash[] = { 7, 4 };
	int pen = 0;

	cairo_save(cr);
	set_color(c, color, 1);
	cairo_set_line_width(cr, 2.2);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	if (dashed)
		cairo_set_dash(cr, dash, 2, 0);
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(xs[i]) || !isfinite(ys[i])) {
			pen = 0;
			continue;
		}
		if (pen)
			cairo_line_to(cr, swt_chart_panel_x(p, xs[i]), swt_chart_panel_y(p, ys[i]));
		else
			cairo_move_to(cr, swt_chart_panel_x(p, xs[i]), swt_chart_panel_y(p, ys[i]));
		pen = 1;
	}
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	for (size_t i = 0; dots && i < n; i++) {
		if (!isfinite(xs[i]) || !isfinite(ys[i]))
			continue;
		cairo_arc(cr, swt_chart_panel_x(p, xs[i]), swt_chart_panel_y(p, ys[i]), 4, 0,
			  2 * M_PI);
		cairo_close_path(cr);
		set_color(c, color, 1);
		cairo_fill_preserve(cr);
		set_color(c, SWT_RGB_WHITE, 1);
		cairo_set_line_width(cr, 1.2);
		cairo_stroke(cr);
	}
	cairo_restore(cr);
}

void swt_chart_panel_diamond(struct swt_chart *c, const struct swt_chart_panel *p, double x,
			     double y, struct swt_chart_rgb color)
{
	double cx = swt_chart_panel_x(p, x), cy = swt_chart_panel_y(p, y);

	if (!isfinite(x) || !isfinite(y))
		return;
	cairo_save(c->cr);
	cairo_move_to(c->cr, cx, cy - 7);
	cairo_line_to(c->cr, cx + 7, cy);
	cairo_line_to(c->cr, cx, cy + 7);
	cairo_line_to(c->cr, cx - 7, cy);
	cairo_close_path(c->cr);
	set_color(c, color, 1);
	cairo_fill_preserve(c->cr);
	set_color(c, SWT_RGB_WHITE, 1);
	cairo_set_line_width(c->cr, 1.2);
	cairo_stroke(c->cr);
	cairo_restore(c->cr);
}
