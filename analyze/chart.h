/*
 * The drawing kit every chart of the report uses: a figure (struct
 * swt_chart) drawn with cairo, text laid out by pango, panels with nice
 * axes, legends, messages for missing data, the Okabe-Ito palette, and
 * rendering one drawing function to PNG and SVG with machine-readable
 * metadata beside it.
 *
 * A chart is a function that draws the whole figure on a struct swt_chart.
 * swt_chart_render() calls it once per output format; on the first call
 * the chart's title, panels, series and messages are recorded
 * (struct swt_chart_meta), and written as NAME.json and as the SVG's
 * <title>/<desc>/<metadata>, because cairo draws SVG text as glyph
 * outlines that nothing can read back.
 *
 * Output is deterministic: fixed size, fixed fonts, hinting off (so PNG and
 * SVG lay text out alike), no time stamps, and the SVG surface ids that
 * cairo numbers per process are renumbered.
 */
#ifndef SWT_CHART_H
#define SWT_CHART_H

#include <stddef.h>
#include <stdint.h>

#include <cairo.h>
#include <pango/pangocairo.h>

#include "swaptrace/error.h"

#define SWT_CHART_WIDTH 1200	/* px, PNG and SVG alike */
#define SWT_CHART_HEIGHT 700
#define SWT_CHART_MARGIN 24	/* px around the figure */

enum swt_chart_format {
	SWT_CHART_PNG = 1u << 0,
	SWT_CHART_SVG = 1u << 1,
};

struct swt_chart_rgb {
	double r, g, b;
};

/* Okabe-Ito, reordered so the first colours are the most distinct. */
#define SWT_PALETTE_SIZE 8
/*
 * U+200B ZERO WIDTH SPACE: where a label may wrap without a space (after
 * "," and ":" of a layout spec); the metadata leaves it out.
 */
#define SWT_CHART_BREAK "\xe2\x80\x8b"
#define SWT_CHART_BREAK_LEN 3
struct swt_chart_rgb swt_chart_color(size_t i);	/* series i, cycling */
extern const struct swt_chart_rgb SWT_RGB_BLACK, SWT_RGB_TEXT, SWT_RGB_MUTED, SWT_RGB_GRID,
	SWT_RGB_WHITE;

/* Roles, not sizes: sizes live in one table in chart.c. */
enum swt_chart_font {
	SWT_FONT_TITLE,
	SWT_FONT_SUBTITLE,
	SWT_FONT_PANEL,		/* panel titles */
	SWT_FONT_LABEL,		/* axis labels */
	SWT_FONT_TICK,		/* tick labels, category labels */
	SWT_FONT_LEGEND,
	SWT_FONT_NOTE,		/* small grey explanations */
	SWT_FONT_MESSAGE,	/* "no data" messages */
	SWT_FONT_VALUE,		/* numbers printed on bars */
	SWT_FONT__COUNT
};

/* What was drawn, for tests and readers of the SVG. */
struct swt_chart_panel_meta {
	char *title, *x_label, *y_label;
	char *categories;	/* category axis labels joined by '|', NULL: numeric axis */
};

struct swt_chart_series_meta {
	char *name;
	int64_t points;		/* values drawn for this series (bars, line points, cells) */
};

/* A legend entry as drawn: its text and its colour, "#rrggbb". */
struct swt_chart_legend_meta {
	char *name;
	char color[8];
};

struct swt_chart_meta {
	char *name;		/* file stem: NAME.png, NAME.svg, NAME.json */
	char *title, *subtitle;
	struct swt_chart_panel_meta *panels;
	size_t nr_panels, cap_panels;
	struct swt_chart_series_meta *series;
	size_t nr_series, cap_series;
	struct swt_chart_legend_meta *legend;
	size_t nr_legend, cap_legend;
	char **notes;		/* explanations drawn in the figure */
	size_t nr_notes, cap_notes;
	char **messages;	/* "no data" messages drawn in the figure */
	size_t nr_messages, cap_messages;
	unsigned formats;	/* files written: enum swt_chart_format bits */
	int oom;		/* recording ran out of memory */
};

/* Free the metadata swt_chart_render() handed out.  NULL is a no-op. */
void swt_chart_meta_free(struct swt_chart_meta *m);

/* The metadata as one JSON object (NAME.json); free() the result.  NULL on ENOMEM. */
char *swt_chart_meta_json(const struct swt_chart_meta *m);

/* A figure being drawn: valid only inside a draw callback. */
struct swt_chart {
	cairo_t *cr;
	PangoContext *pango;
	PangoLayout *layout;
	PangoFontDescription *fonts[SWT_FONT__COUNT];
	double width, height;	/* px */
	int record;		/* 1 on the pass whose metadata is kept */
	struct swt_chart_meta *meta;
};

/*
 * Draws the whole figure; data is the chart's own.  Returns 0 or a negative
 * SWT_E* (with err filled); cairo errors are checked by the caller.
 */
typedef int (*swt_chart_draw_fn)(struct swt_chart *c, const void *data, struct swt_err *err);

/* Where charts go and what is shared between them.  Embedded: _init/_release. */
struct swt_chart_out {
	char *dir;		/* output directory (exists) */
	unsigned formats;	/* enum swt_chart_format bits, at least one */
	PangoFontMap *fonts;	/* one font map for every chart of a report */
};

int swt_chart_out_init(struct swt_chart_out *o, const char *dir, unsigned formats,
		       struct swt_err *err);
void swt_chart_out_release(struct swt_chart_out *o);

/*
 * Draw `name` in every format of o and write DIR/NAME.png, DIR/NAME.svg
 * and DIR/NAME.json.  On success *meta (if meta is not NULL) receives the
 * recorded metadata, which the caller frees with swt_chart_meta_free().
 */
int swt_chart_render(struct swt_chart_out *o, const char *name, swt_chart_draw_fn draw,
		     const void *data, struct swt_chart_meta **meta, struct swt_err *err);

/*
 * Finish an SVG cairo wrote: insert <title>, <desc> and <metadata> (the
 * JSON) after the opening <svg> tag and renumber "surfaceN" ids in order of
 * appearance, so two processes write the same bytes.  *out is malloc'ed.
 */
int swt_chart_svg_finish(const char *svg, size_t len, const struct swt_chart_meta *m,
			 char **out, size_t *out_len, struct swt_err *err);

/* ---- metadata recording (no-ops outside the recording pass) ---- */
void swt_chart_meta_series(struct swt_chart *c, const char *name, int64_t points);
void swt_chart_meta_note(struct swt_chart *c, const char *text);
/* A "no data" message drawn some other way than swt_chart_message(). */
void swt_chart_meta_message(struct swt_chart *c, const char *text);

/* ---- text ---- */

/*
 * Draw text with its box anchored at (x, y): ax 0 left, 0.5 centre, 1
 * right; ay 0 top, 0.5 middle, 1 bottom.  angle in radians, counter-
 * clockwise positive (pi/2 for y-axis labels).  max_width > 0 wraps at
 * word boundaries (and centres lines when ax is 0.5).
 */
void swt_chart_text(struct swt_chart *c, enum swt_chart_font f, double x, double y, double ax,
		    double ay, double angle, struct swt_chart_rgb color, double max_width,
		    const char *text);
/* Size of the text's box as swt_chart_text() would lay it out. */
void swt_chart_text_size(struct swt_chart *c, enum swt_chart_font f, double max_width,
			 const char *text, double *w, double *h);

/*
 * Does every word of the n category labels fit a band of `band` px at the
 * tick font?  swt_chart_text() breaks a wider word inside it ("512M" as
 * "5" / "12M", "7:10" a character to a line).  Words end at spaces, line
 * breaks and SWT_CHART_BREAK; labels are read up to 399 bytes.
 */
int swt_chart_words_fit(struct swt_chart *c, const char *const *labels, size_t n, double band);

/*
 * White background, title and subtitle at the top left (recorded).
 * Returns the y below them.
 */
double swt_chart_header(struct swt_chart *c, const char *title, const char *subtitle);

/*
 * A note in small grey text at the bottom of the figure (recorded).
 * Returns the y above it (the bottom of the space left for panels).
 */
double swt_chart_footnote(struct swt_chart *c, const char *text);

/*
 * A one-line note in small grey text at the left, below what is above y
 * (recorded).  Returns the y below it.
 */
double swt_chart_note_line(struct swt_chart *c, double y, const char *text);

/* ---- legends ---- */
enum swt_chart_mark_kind {
	SWT_MARK_BOX,		/* filled swatch: bars */
	SWT_MARK_AREA,		/* translucent swatch: shaded areas */
	SWT_MARK_LINE,		/* a line: line series without markers */
	SWT_MARK_LINE_DOT,	/* a line with a dot: line series with markers */
	SWT_MARK_DASH,		/* dashed line: reference values */
	SWT_MARK_DIAMOND,	/* a marker alone: reference points */
};

struct swt_chart_legend_item {
	const char *label;
	struct swt_chart_rgb color;
	enum swt_chart_mark_kind mark;
};

/*
 * One row of legend entries from x across max_w, wrapping to further rows
 * when needed; never over the data because panels start below it.
 * Returns the height used.
 */
double swt_chart_legend(struct swt_chart *c, double x, double y, double max_w,
			const struct swt_chart_legend_item *items, size_t n);
/* Draw the legend mark of an item in the box (x, y, w, h). */
void swt_chart_mark(struct swt_chart *c, enum swt_chart_mark_kind mark, struct swt_chart_rgb color,
		    double x, double y, double w, double h);

/* ---- axes and panels ---- */
enum swt_chart_axis_fmt {
	SWT_FMT_NUMBER,		/* plain, decimals from the tick step */
	SWT_FMT_PERCENT,	/* a fraction 0..1 shown as "25%" */
	SWT_FMT_COUNT,		/* large counts shortened: 20k, 1.5M */
};

struct swt_chart_axis {
	const char *label;	/* with its unit, e.g. "time since capture start (s)" */
	enum swt_chart_axis_fmt fmt;
	int integer;		/* ticks only at whole numbers */
	int zero;		/* the range includes 0 */
	int exact;		/* keep lo..hi as given, no rounding out to ticks */
	int log;		/* log10 scale: lo (> 0) is the floor, ticks at powers of ten */
	/*
	 * Blank room of half a tick step above the last tick (rounded-out
	 * linear axes only), so that a bar reaching a capped top (100 %)
	 * keeps its value label above it without a tick past the cap.
	 */
	int headroom;
	double lo, hi;		/* data range to show */
	double min, max, step;	/* chosen by swt_chart_axis_ticks(): range and tick step */
	const char *const *cats;	/* category axis when ncats > 0 */
	size_t ncats;
	/*
	 * Category labels in this many rows (0: one), label i in row
	 * i % cat_rows and as wide as cat_rows bands: labels wider than
	 * their band ("AA" under 64 groups) stand whole, staggered, instead
	 * of a letter to a line.
	 */
	int cat_rows;
	int hide_ticks;		/* draw no tick labels (shared with a panel below) */
	/* a y label across, after the panel's title, where it has room (panels stacked, alike) */
	int across;
	/*
	 * Ticks at these values (ascending) instead of chosen ones, on a log
	 * axis whose range is then lo..hi as given: the sizes a sweep
	 * replayed, say.  NULL: chosen.
	 */
	const double *at;
	size_t nat;
};

/*
 * Choose a "nice" tick step (1, 2, 2.5 or 5 times a power of ten; no 2.5
 * on integer axes) giving at most max_ticks ticks over lo..hi, and the
 * range rounded out to it; on a log axis the step counts decades.  Handles
 * lo == hi and non-finite input by widening to a sensible range, so no
 * axis is ever degenerate.
 */
void swt_chart_axis_ticks(struct swt_chart_axis *a, int max_ticks);

/* Tick label text for v on axis a (after swt_chart_axis_ticks()). */
void swt_chart_axis_format(const struct swt_chart_axis *a, double v, char *buf, size_t size);

/* Format n grouped by a no-break space (UTF-8) from 10 000 up: 75047 -> "75 047". */
void swt_chart_format_int(int64_t n, char *buf, size_t size);
/* Format n briefly, for labels on bars: 950 -> "950", 75047 -> "75k", 1520000 -> "1.5M". */
void swt_chart_format_short(int64_t n, char *buf, size_t size);

struct swt_chart_panel {
	double x, y, w, h;	/* the box given to the panel, labels included */
	double px, py, pw, ph;	/* the plot area, set by swt_chart_panel_fit() */
	struct swt_chart_axis xa, ya;
	const char *title;	/* above the plot area; NULL: none */
	const char *note;	/* small grey line under the title; NULL: none */
	/*
	 * Set by swt_chart_panel_fit(): the y label stands across, after the
	 * title, instead of along the plot -- asked for (ya.across), or a
	 * word of it is longer than the plot is tall, which would leave it
	 * out; and the title line has room for it.
	 */
	int y_label_across;
};

/* Columns and rows for n small multiples: wide figures, at most max_cols across. */
void swt_chart_grid_shape(size_t n, int max_cols, int *cols, int *rows);

/* Place the panel's box: cell i of a cols x rows grid over (x, y, w, h). */
void swt_chart_panel_grid(struct swt_chart_panel *p, double x, double y, double w, double h,
			  int cols, int rows, double gap_x, double gap_y, int i);

/*
 * Choose ticks for both axes and the plot area so that tick labels, axis
 * labels, title and note fit in the box without overlapping.
 */
void swt_chart_panel_fit(struct swt_chart *c, struct swt_chart_panel *p);

/*
 * The y ticks whose labels swt_chart_panel_axes() draws, top first, into
 * out (room for SWT_CHART_MAX_TICKS); their count.  A panel too short for
 * every label (eight devices stacked) keeps the top one and those clear of
 * the last kept, so that labels never overlap.
 */
#define SWT_CHART_MAX_TICKS 64
size_t swt_chart_y_tick_labels(struct swt_chart *c, const struct swt_chart_panel *p,
			       double *out);

/* Grid lines, tick labels, axis labels, title and note (recorded). */
void swt_chart_panel_axes(struct swt_chart *c, const struct swt_chart_panel *p);
/* The axis lines, drawn after the data so bars do not cover them. */
void swt_chart_panel_frame(struct swt_chart *c, const struct swt_chart_panel *p);

/* Title and a framed message in place of the plot (recorded). */
void swt_chart_panel_message(struct swt_chart *c, const struct swt_chart_panel *p,
			     const char *text);
/* A framed message over an arbitrary box (recorded). */
void swt_chart_message(struct swt_chart *c, double x, double y, double w, double h,
		       const char *text);
/* The same across the chart's body: margin to margin, from top (below the header) to bottom. */
void swt_chart_body_message(struct swt_chart *c, double top, double bottom, const char *text);

/* Data to device coordinates; values outside the range are clamped. */
double swt_chart_panel_x(const struct swt_chart_panel *p, double v);
double swt_chart_panel_y(const struct swt_chart_panel *p, double v);
/* The x extent of category i's band. */
void swt_chart_panel_band(const struct swt_chart_panel *p, size_t i, double *x0, double *x1);
/* Restrict drawing to the plot area (cairo_save); undo with cairo_restore. */
void swt_chart_panel_clip(struct swt_chart *c, const struct swt_chart_panel *p);

/*
 * Grouped bars in category band `cat`: bar `k` of `nk`, value v from the
 * axis floor; NaN draws nothing.  When the value's label fits above the
 * bar it is printed (label may be NULL for none).
 */
/*
 * Whether label fits over a bar of a group of nk: a panel whose labels do
 * not all fit shows none, lest the unlabelled bars look special.
 */
int swt_chart_bar_label_fits(struct swt_chart *c, const struct swt_chart_panel *p, size_t nk,
			     const char *label);
void swt_chart_panel_bar(struct swt_chart *c, const struct swt_chart_panel *p, size_t cat, size_t k,
		   size_t nk, double v, struct swt_chart_rgb color, const char *label);

/* A polyline through (xs[i], ys[i]) skipping NaN values; dots at points when dots. */
void swt_chart_panel_line(struct swt_chart *c, const struct swt_chart_panel *p, const double *xs,
		    const double *ys, size_t n, struct swt_chart_rgb color, int dashed, int dots);

/* A diamond marker at data (x, y). */
void swt_chart_panel_diamond(struct swt_chart *c, const struct swt_chart_panel *p, double x,
			     double y, struct swt_chart_rgb color);

#endif
