/*
 * Chart 7, "layout": the same policy replayed with the swap slots placed
 * on 1 device and on N devices (runs whose layout is not 'traced') --
 * readahead hits, read merges and read requests, stacked per device, so
 * the "more swap targets, slower swap-in" effect shows as fewer hits and
 * merges and more requests.  Runs of one layout at several device offsets
 * (names that differ only in "used=", as "--layout 4:spread" makes) share
 * a stack: the mean, with a whisker from the lowest total to the highest,
 * because on several devices readahead depends on those offsets.  Drawn
 * only when such runs exist.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "util.h"

#define MAX_LAYOUTS 8
#define MAX_HIDDEN 32		/* layouts not shown that the note can name */
#define MAX_SEGMENTS SWT_PALETTE_SIZE	/* devices beyond this stack as "other devices" */

enum { HITS, MERGES, REQUESTS, NR_METRICS };

struct layout_col {
	const struct swt_report_run *run;	/* the first run of the column */
	char key[200];		/* its layout without "used=" */
	size_t nr_devs;
	size_t members;		/* runs: several for one layout at several device offsets */
	double v[NR_METRICS][MAX_SEGMENTS + 1];	/* mean per device; last: other devices */
	double lo[NR_METRICS], hi[NR_METRICS];	/* lowest and highest total of the runs */
	char label[300];	/* axis: "spread4\n4 devices" */
	char name[400];		/* metadata: "spread4: 4 devices" */
};

struct layout_data {
	const struct swt_report_ctx *rc;
	const struct swt_report_run *anchor;
	struct layout_col cols[MAX_LAYOUTS];
	size_t nr_cols, more;	/* more: layouts not shown, each once */
	char hidden[MAX_HIDDEN][sizeof(((struct layout_col *)0)->key)];	/* the first of them */
	size_t max_devs;
	int other;		/* some layout has more than MAX_SEGMENTS devices */
};

/*
 * One setting: the same policy and parameters, page-cluster, memory and
 * model settings (a plain replay's traced column beside a --max-request-kib
 * 4 run's simulated one showed 2 devices turning 133k requests into 57k).
 */
static int same_setting(const struct swt_report_run *a, const struct swt_report_run *b)
{
	return !strcmp(a->policy, b->policy) && a->page_cluster == b->page_cluster &&
	       a->cache_pages == b->cache_pages &&
	       ((!a->params && !b->params) ||
		(a->params && b->params && !strcmp(a->params, b->params))) &&
	       !strcmp(a->model_settings ? a->model_settings : "",
		       b->model_settings ? b->model_settings : "");
}

/* One run's per-device hits, merges and requests, added into v; its device count. */
static int load_run(struct layout_data *d, const struct swt_report_run *run,
		    double v[NR_METRICS][MAX_SEGMENTS + 1], size_t *nr_devs, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, step;

	*nr_devs = 0;
	ret = swt_store_prepare(d->rc->st,
		"SELECT hits, read_merges, read_requests FROM run_partition WHERE run_id = ?1"
		" ORDER BY partition", &s, err);
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, run->id);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		size_t seg = SWT_MIN(*nr_devs, (size_t)MAX_SEGMENTS);

		for (int m = 0; m < NR_METRICS; m++)
			v[m][seg] += (double)sqlite3_column_int64(s, m);
		(*nr_devs)++;
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return swt_store_sql_error(d->rc->st, err, "reading run partitions");
	if (!*nr_devs) {
		/* totals only: one segment for the whole layout */
		v[HITS][0] += (double)run->hits;
		v[MERGES][0] += (double)run->read_merges;
		v[REQUESTS][0] += (double)run->read_requests;
	}
	return 0;
}

/* Add a run to its column: a new one, or the column of the same layout at other offsets. */
static int add_run(struct layout_data *d, const struct swt_report_run *r, struct swt_err *err)
{
	double v[NR_METRICS][MAX_SEGMENTS + 1] = { { 0 } };
	struct layout_col *col = NULL;
	char key[sizeof(col->key)];
	size_t nr_devs;
	int ret;

	swt_report_layout_group(r->layout, key, sizeof(key));
	for (size_t i = 0; i < d->nr_cols && !col; i++)
		if (!swt_report_run_traced(d->cols[i].run) && !swt_report_run_traced(r) &&
		    !strcmp(d->cols[i].key, key))
			col = &d->cols[i];
	if (!col) {
		if (d->nr_cols == MAX_LAYOUTS) {
			/* a layout, not a run: its runs at other offsets or settings come too */
			for (size_t i = 0; i < SWT_MIN(d->more, (size_t)MAX_HIDDEN); i++)
				if (!strcmp(d->hidden[i], key))
					return 0;
			if (d->more < MAX_HIDDEN)
				snprintf(d->hidden[d->more], sizeof(d->hidden[d->more]), "%s", key);
			d->more++;
			return 0;
		}
		col = &d->cols[d->nr_cols++];
		col->run = r;
		snprintf(col->key, sizeof(col->key), "%s", key);
	}
	ret = load_run(d, r, v, &nr_devs, err);
	if (ret)
		return ret;
	col->nr_devs = SWT_MAX(col->nr_devs, nr_devs);
	for (int m = 0; m < NR_METRICS; m++) {
		double total = 0;

		for (size_t k = 0; k <= MAX_SEGMENTS; k++) {
			col->v[m][k] += v[m][k];
			total += v[m][k];
		}
		col->lo[m] = col->members ? SWT_MIN(col->lo[m], total) : total;
		col->hi[m] = col->members ? SWT_MAX(col->hi[m], total) : total;
	}
	col->members++;
	return 0;
}

/* A column's stack height for a metric: its (mean) total over the devices. */
static double col_total(const struct layout_col *col, int m)
{
	double total = 0;

	for (size_t k = 0; k <= MAX_SEGMENTS; k++)
		total += col->v[m][k];
	return total;
}

/*
 * A layout spec for the axis: a zero-width space after each ',' and ':'
 * lets a narrow column wrap "devices=512M@10,512M@5" between its devices
 * rather than inside "512M".
 */
static void breakable_spec(const char *spec, char *out, size_t size)
{
	size_t at = 0;

	for (; *spec && at + 1 + SWT_CHART_BREAK_LEN < size; spec++) {
		out[at++] = *spec;
		if (*spec == ',' || *spec == ':') {
			memcpy(out + at, SWT_CHART_BREAK, SWT_CHART_BREAK_LEN);
			at += SWT_CHART_BREAK_LEN;
		}
	}
	out[at] = '\0';
}

/* Sums into means, and the column's labels. */
static void finish_col(struct layout_data *d, struct layout_col *col)
{
	size_t devs = col->nr_devs ? col->nr_devs : 1;
	const char *name = col->members > 1 ? col->key : col->run->layout;
	char offsets[80] = "", mean_of[48] = "", axis_name[200];

	for (int m = 0; m < NR_METRICS; m++)
		for (size_t k = 0; k <= MAX_SEGMENTS; k++)
			col->v[m][k] /= (double)col->members;
	if (col->members > 1) {
		snprintf(offsets, sizeof(offsets), ", mean of %zu device offsets", col->members);
		snprintf(mean_of, sizeof(mean_of), "\nmean of %zu", col->members);
	}
	/*
	 * Plain spaces: a narrow column wraps "16 devices" between its words;
	 * kept together, it was cut inside "devices"
	 */
	breakable_spec(name, axis_name, sizeof(axis_name));
	snprintf(col->label, sizeof(col->label), "%s\n%zu device%s%s%s", axis_name, devs,
		 devs == 1 ? "" : "s", mean_of, col->run->approximate ? " (approximate)" : "");
	snprintf(col->name, sizeof(col->name), "%.160s: %zu device%s%s%s", name, devs,
		 devs == 1 ? "" : "s", offsets, col->run->approximate ? " (approximate)" : "");
	if (col->nr_devs > MAX_SEGMENTS)
		d->other = 1;
	d->max_devs = SWT_MAX(d->max_devs, SWT_MIN(col->nr_devs, (size_t)MAX_SEGMENTS));
}

/* The same setting on the same layout replayed again (runs are deterministic): drawn once. */
static int repeated(const struct swt_report_ctx *rc, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (same_setting(&rc->runs[j], &rc->runs[i]) &&
		    swt_report_same_layout(rc->runs[j].layout, rc->runs[i].layout))
			return 1;
	return 0;
}

static int load(struct layout_data *d, struct swt_err *err)
{
	const struct swt_report_ctx *rc = d->rc;
	int ret;

	d->anchor = swt_report_layout_anchor(rc);
	if (!d->anchor)
		return 0;
	/* the traced layout first, then the simulated ones by id */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < rc->nr_runs; i++) {
			const struct swt_report_run *r = &rc->runs[i];

			if (swt_report_run_traced(r) != !pass || !same_setting(r, d->anchor) || repeated(rc, i))
				continue;
			ret = add_run(d, r, err);
			if (ret)
				return ret;
		}
	}
	for (size_t i = 0; i < d->nr_cols; i++)
		finish_col(d, &d->cols[i]);
	return 0;
}

/*
 * Whether every word of the axis labels fits its column: a layout spec
 * broken inside a word ("512M" as "5" / "12M") misreads.
 */
static int labels_fit(struct swt_chart *c, const struct layout_data *d, const char *const *cats,
		      double top, double bottom)
{
	struct swt_chart_panel p = { 0 };
	double band;

	swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top + 6, c->width - 2 * SWT_CHART_MARGIN,
			     bottom - top - 6, NR_METRICS, 1, 28, 0, 0);
	p.xa.label = "swap layout";
	p.ya.label = "faults served by readahead";
	p.ya.fmt = SWT_FMT_COUNT;
	p.ya.hi = 1e6;
	swt_chart_panel_fit(c, &p);
	band = p.pw / (double)(d->nr_cols ? d->nr_cols : 1) - 8;
	return swt_chart_words_fit(c, cats, d->nr_cols, band);
}

/* Did the run read ahead by virtual address (VMA readahead) on most of its misses? */
static int took_vma_readahead(const struct swt_report_run *r)
{
	return r->vma_windows > 0 && r->vma_windows * 2 >= r->misses;
}

/* The keys of the columns that did (vma 1) or did not read ahead by address, "a, b and c". */
static size_t list_layouts(const struct layout_data *d, int vma, char *out, size_t size)
{
	size_t n = 0, at = 0;

	for (size_t i = 0; i < d->nr_cols; i++)
		n += took_vma_readahead(d->cols[i].run) == vma;
	out[0] = '\0';
	for (size_t i = 0, k = 0; i < d->nr_cols && at < size; i++) {
		if (took_vma_readahead(d->cols[i].run) != vma)
			continue;
		k++;
		at += (size_t)snprintf(out + at, size - at, "%s%s",
				       k == 1 ? "" : k == n ? " and " : ", ", d->cols[i].key);
	}
	return n;
}

/*
 * auto takes VMA readahead only where no device is rotational, so its
 * layouts may differ in mechanism more than in placement: say which took
 * which.  Nothing to say for a policy that always reads the same way.
 */
static void mechanism_note(const struct layout_data *d, char *note, size_t size)
{
	char by_address[MAX_LAYOUTS * 210], by_slot[MAX_LAYOUTS * 210];
	size_t nvma = list_layouts(d, 1, by_address, sizeof(by_address));

	list_layouts(d, 0, by_slot, sizeof(by_slot));
	note[0] = '\0';
	if (!nvma || !strcmp(d->anchor->policy, "vma"))
		return;
	if (nvma == d->nr_cols)
		snprintf(note, size, "%s read ahead by virtual address (VMA readahead) on every "
			 "layout here.", d->anchor->label);
	else
		snprintf(note, size, "%s read ahead by virtual address (VMA readahead) on %s, where "
			 "no device is rotational, and by swap slot (cluster readahead) on %s.",
			 d->anchor->label, by_address, by_slot);
}

static int draw_layout(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const titles[NR_METRICS] = {
		"Readahead hits", "Read merges", "Read requests"
	};
	static const char *const ylabels[NR_METRICS] = {
		"faults served by readahead", "bios merged into requests", "read requests",
	};
	const struct layout_data *d = data;
	struct swt_chart_legend_item items[MAX_SEGMENTS + 1];
	char title[400], names[MAX_SEGMENTS][48], note[400], mechanism[MAX_LAYOUTS * 440];
	const char *cats[MAX_LAYOUTS];
	double top, bottom;
	static const char *const lower_titles[NR_METRICS] = {
		"readahead hits", "read merges", "read requests"
	};
	size_t ni = 0, nseg = SWT_MAX(d->max_devs, (size_t)1);
	int spread = 0;

	(void)err;
	snprintf(title, sizeof(title), "Swap layout: hits, merges and read requests on 1 vs N "
		 "devices, %s at page-cluster %d", d->anchor->label, d->anchor->page_cluster);
	top = swt_chart_header(c, title,
			       "The same swap faults replayed with the same policy, the slots "
			       "placed on the traced devices or spread over simulated ones. One "
			       "stack per layout, one segment per device; totals on top.");
	/*
	 * The mechanism, not a verdict the bars might contradict: VMA
	 * readahead (auto on simulated SSDs) goes by address, not slot.
	 */
	bottom = swt_chart_footnote(c,
		"Why more devices can cost hits: pages evicted together are spread over the "
		"devices, so a cluster readahead window (slots next to the fault's) finds fewer "
		"of them; VMA readahead, by address, does not depend on the layout.");
	for (size_t k = 0; k < nseg; k++) {
		snprintf(names[k], sizeof(names[k]), "device %zu of the layout", k + 1);
		items[ni++] =
			(struct swt_chart_legend_item){names[k], swt_chart_color(k), SWT_MARK_BOX};
	}
	if (d->other)
		items[ni++] = (struct swt_chart_legend_item){ "further devices",
							{ 0.6, 0.6, 0.6 }, SWT_MARK_BOX };
	for (size_t i = 0; i < d->nr_cols; i++) {
		spread |= d->cols[i].members > 1;
		cats[i] = d->cols[i].label;
		swt_chart_meta_series(c, d->cols[i].name, NR_METRICS);
	}
	top += swt_chart_legend(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, items,
				ni);
	if (d->more) {
		char hidden[240] = "";
		size_t at = 0;

		for (size_t i = 0; i < SWT_MIN(d->more, (size_t)MAX_HIDDEN) && at < sizeof(hidden); i++)
			at += (size_t)snprintf(hidden + at, sizeof(hidden) - at, "%s%s", i ? ", " : "",
					       d->hidden[i]);
		if (at >= sizeof(hidden))
			memcpy(hidden + sizeof(hidden) - 4, "...", 4);
		else if (d->more > MAX_HIDDEN)
			snprintf(hidden + at, sizeof(hidden) - at, ", ...");
		snprintf(note, sizeof(note), "%zu more layout%s %s not shown (%s); pick runs with "
			 "--run", d->more, d->more == 1 ? "" : "s", d->more == 1 ? "is" : "are", hidden);
		top = swt_chart_note_line(c, top, note);
	}
	if (spread) {
		top = swt_chart_note_line(c, top, "A stack marked \"mean\" is one layout at several "
					  "device offsets (--layout N:spread): its mean, with a whisker "
					  "from the lowest total to the highest.");
		for (size_t i = 0; i < d->nr_cols; i++) {
			const struct layout_col *col = &d->cols[i];

			if (col->members < 2)
				continue;
			for (int m = 0; m < NR_METRICS; m++) {
				snprintf(note, sizeof(note), "%s, %s: mean %.1f, %.0f to %.0f over %zu "
					 "device offsets", col->key, lower_titles[m], col_total(col, m),
					 col->lo[m], col->hi[m], col->members);
				swt_chart_meta_note(c, note);
			}
		}
	}
	for (size_t i = 0; i < d->nr_cols; i++) {
		if (d->cols[i].run->approximate) {
			top = swt_chart_note_line(c, top, SWT_REPORT_APPROX_NOTE);
			break;
		}
	}
	mechanism_note(d, mechanism, sizeof(mechanism));
	if (mechanism[0])
		top = swt_chart_note_line(c, top, mechanism);
	if (!labels_fit(c, d, cats, top, bottom)) {
		/* letters on the axis, the layouts spelled out above the panels */
		static const char *const letters[MAX_LAYOUTS] = { "A", "B", "C", "D", "E", "F",
								  "G", "H" };
		char key[MAX_LAYOUTS * 420] = "Layouts: ";
		size_t at = strlen(key);

		for (size_t i = 0; i < d->nr_cols; i++) {
			cats[i] = letters[i];
			at += (size_t)snprintf(key + at, sizeof(key) - at, "%s%s = %s", i ? "; " : "",
					       letters[i], d->cols[i].name);
		}
		top = swt_chart_note_line(c, top, key);
	}
	for (int m = 0; m < NR_METRICS; m++) {
		struct swt_chart_panel p = { 0 };
		double hi = 0;

		swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top + 6, c->width - 2 * SWT_CHART_MARGIN,
			       bottom - top - 6, NR_METRICS, 1, 28, 0, m);
		p.title = titles[m];
		p.xa.label = "swap layout";
		p.xa.cats = cats;
		p.xa.ncats = d->nr_cols;
		p.ya.label = ylabels[m];
		p.ya.fmt = SWT_FMT_COUNT;
		p.ya.integer = 1;
		p.ya.zero = 1;
		for (size_t i = 0; i < d->nr_cols; i++)
			hi = SWT_MAX(hi, SWT_MAX(col_total(&d->cols[i], m), d->cols[i].hi[m]));
		p.ya.hi = hi * 1.1;
		swt_chart_panel_fit(c, &p);
		swt_chart_panel_axes(c, &p);
		for (size_t i = 0; i < d->nr_cols; i++) {
			const struct layout_col *lc = &d->cols[i];
			double x0, x1, w, base = 0, sum = 0, label_at;
			char total[32];

			swt_chart_panel_band(&p, i, &x0, &x1);
			w = (x1 - x0) * 0.55;
			x0 += (x1 - x0 - w) / 2;
			for (size_t k = 0; k <= MAX_SEGMENTS; k++) {
				double v = lc->v[m][k], y0, y1;
				struct swt_chart_rgb col = k < MAX_SEGMENTS ? swt_chart_color(k) :
						     (struct swt_chart_rgb){ 0.6, 0.6, 0.6 };

				if (v <= 0)
					continue;
				y0 = swt_chart_panel_y(&p, base);
				y1 = swt_chart_panel_y(&p, base + v);
				cairo_set_source_rgb(c->cr, col.r, col.g, col.b);
				cairo_rectangle(c->cr, x0, y1, w, y0 - y1);
				cairo_fill(c->cr);
				/* a white seam keeps neighbouring segments apart */
				cairo_set_source_rgb(c->cr, 1, 1, 1);
				cairo_rectangle(c->cr, x0, y1, w, 1);
				cairo_fill(c->cr);
				base += v;
				sum += v;
			}
			label_at = sum;
			if (lc->members > 1) {
				double xm = x0 + w / 2, ylo = swt_chart_panel_y(&p, lc->lo[m]);
				double yhi = swt_chart_panel_y(&p, lc->hi[m]);

				/* the whisker: lowest to highest total over the offsets */
				cairo_set_source_rgb(c->cr, 0.15, 0.15, 0.15);
				cairo_set_line_width(c->cr, 1.2);
				cairo_move_to(c->cr, xm, ylo);
				cairo_line_to(c->cr, xm, yhi);
				cairo_move_to(c->cr, xm - w / 6, ylo);
				cairo_line_to(c->cr, xm + w / 6, ylo);
				cairo_move_to(c->cr, xm - w / 6, yhi);
				cairo_line_to(c->cr, xm + w / 6, yhi);
				cairo_stroke(c->cr);
				label_at = SWT_MAX(sum, lc->hi[m]);
			}
			swt_chart_format_short(llround(sum), total, sizeof(total));
			swt_chart_text(c, SWT_FONT_VALUE, x0 + w / 2,
				       swt_chart_panel_y(&p, label_at) - 2, 0.5, 1, 0, SWT_RGB_TEXT, 0,
				       total);
		}
		swt_chart_panel_frame(c, &p);
	}
	return 0;
}

int swt_chart_layout_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err)
{
	struct layout_data d = { .rc = rc };
	int ret;

	*meta = NULL;
	ret = load(&d, err);
	if (ret || !d.anchor)
		return ret;
	return swt_chart_render(&rc->out, "layout", draw_layout, &d, meta, err);
}
