/*
 * Chart 8, "memory": what memory does to the answer -- coverage, accuracy
 * and pages read per fault against the memory the replay gave the traced
 * task (--cache-pages), one line per policy at the comparisons'
 * page-cluster.  Unused readahead pages age out of the inactive list, so a
 * replay's answer depends on that memory, a parameter of the model
 * (docs/replay-model.md); the chart shows how much, around the memory the
 * other charts use.  Drawn only when a policy was replayed at two memory
 * sizes or more on the traced layout, at the comparisons' page-cluster when
 * such runs exist there, else at the nearest page-cluster where they do.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "util.h"

enum { COVERAGE, ACCURACY, PAGES_PER_FAULT, NR_METRICS };

/* Memory sizes per policy line: a sweep of a few sizes, not a curve of hundreds. */
#define MAX_POINTS 32

struct memory_series {
	const char *key;
	size_t color;		/* the key's palette colour */
	size_t n;
	int64_t pages[MAX_POINTS];	/* memory, ascending */
	double v[MAX_POINTS][NR_METRICS];
	int approximate, lacks;	/* of its runs: any approximate; lacks-addresses bits */
};

struct memory_data {
	const struct swt_report_ctx *rc;
	struct memory_series series[SWT_REPORT_MAX_SERIES];
	size_t nr_series, dropped_points;
	struct swt_report_keys keys;	/* the policies drawn, and the note on those left out */
	int64_t page_size;
	double limit_mib;	/* the capture's cgroup limit; NaN: not recorded */
	int compared_is_limit;	/* the other charts' memory is that limit (the default) */
	int pc;			/* the page-cluster drawn */
	double ref[NR_METRICS];	/* the traced kernel at pc; NaN: not comparable */
	int approximate, no_addresses;
};

static int on_chart(const struct memory_data *d, const struct swt_report_run *r)
{
	return swt_report_run_traced(r) && r->page_cluster == d->pc &&
	       r->cache_pages > 0;
}

/* A run of a line: its policy is on the chart at another memory size too. */
static int on_line(const void *arg, const struct swt_report_run *r)
{
	const struct memory_data *d = arg;

	if (!on_chart(d, r))
		return 0;
	for (size_t j = 0; j < d->rc->nr_runs; j++) {
		const struct swt_report_run *o = &d->rc->runs[j];

		if (o->cache_pages != r->cache_pages && on_chart(d, o) && !strcmp(o->key, r->key))
			return 1;
	}
	return 0;
}

static double mib(const struct memory_data *d, int64_t pages)
{
	return (double)pages * (double)d->page_size / 1048576.0;
}

/* Insert one run's point, kept in memory order; the first run of a size stands for it. */
static void add_point(struct memory_data *d, struct memory_series *s, const struct swt_report_run *r)
{
	size_t at = 0;

	while (at < s->n && s->pages[at] < r->cache_pages)
		at++;
	if (at < s->n && s->pages[at] == r->cache_pages)
		return;
	if (s->n == MAX_POINTS) {
		d->dropped_points++;
		return;
	}
	memmove(&s->pages[at + 1], &s->pages[at], (s->n - at) * sizeof(s->pages[0]));
	memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof(s->v[0]));
	s->pages[at] = r->cache_pages;
	s->v[at][COVERAGE] = swt_report_ratio(r->hits, r->faults);
	s->v[at][ACCURACY] = swt_report_ratio(r->ra_hits, r->ra_pages);
	s->v[at][PAGES_PER_FAULT] = swt_report_ratio(r->pages_read, r->faults);
	s->n++;
	s->approximate |= r->approximate;
	s->lacks |= swt_report_run_lacks_addresses(d->rc, r);
}

/* The capture's page size and cgroup limit, and what the traced kernel's counters say. */
static void load_capture(struct memory_data *d)
{
	const struct swt_report_ctx *rc = d->rc;
	int64_t limit = swt_store_query_int(rc->st, "SELECT mem_limit_bytes FROM capture", SWT_NULL);

	d->page_size = rc->page_size;	/* checked there against a damaged capture row */
	d->limit_mib = limit > 0 && limit != SWT_NULL ? (double)limit / 1048576.0 : NAN;
	/* the default memory is the limit in whole pages (swt_replay_default_cache_pages) */
	d->compared_is_limit = limit > 0 && limit != SWT_NULL &&
			       rc->cache_pages == limit / d->page_size;
}

/* The lines at page-cluster d->pc: the policies replayed there at two memory sizes or more. */
static void load_series(struct memory_data *d)
{
	const struct swt_report_ctx *rc = d->rc;
	size_t kept = 0;

	d->nr_series = d->dropped_points = 0;
	swt_report_pick_keys(rc, on_line, d, "", &d->keys);
	d->approximate = d->no_addresses = 0;
	memset(d->series, 0, sizeof(d->series));
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];
		struct memory_series *s = NULL;

		if (!on_chart(d, r))
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
		}
		add_point(d, s, r);
	}
	/* a policy replayed at one memory size draws no line: leave it out */
	for (size_t k = 0; k < d->nr_series; k++) {
		if (d->series[k].n < 2)
			continue;
		d->series[kept++] = d->series[k];
		d->approximate |= d->series[k].approximate;
		d->no_addresses |= d->series[k].lacks;
	}
	d->nr_series = kept;

	for (int m = 0; m < NR_METRICS; m++)
		d->ref[m] = NAN;
	/* the kernel's counters describe its own page-cluster at its own memory */
	if (rc->page_cluster == d->pc && rc->page_cluster > 0 && !isnan(d->limit_mib) &&
	    rc->vm_pgmajfault != SWT_NULL && rc->vm_swap_ra_hit != SWT_NULL) {
		int64_t faults = rc->vm_pgmajfault + rc->vm_swap_ra_hit;

		d->ref[COVERAGE] = swt_report_ratio(rc->vm_swap_ra_hit, faults);
		d->ref[ACCURACY] = swt_report_ratio(rc->vm_swap_ra_hit, rc->vm_swap_ra);
		d->ref[PAGES_PER_FAULT] = swt_report_ratio(rc->vm_pswpin, faults);
	}
}

/* As the sweep's lines: closer than this, relative, at every point is one over the other. */
#define MEMORY_OVERLAP 0.005

static const char *const titles[NR_METRICS] = {
	"Coverage", "Accuracy", "Pages read per fault"
};

/* swt_report_hidden_note()'s covers: at every memory size line a has, line b has its value. */
static int memory_covers(const void *arg, size_t a, size_t b, int m)
{
	const struct memory_data *d = arg;
	const struct memory_series *sa = &d->series[a], *sb = &d->series[b];
	int same = 2, points = 0;

	for (size_t x = 0; x < sa->n; x++) {
		double va = sa->v[x][m], vb = NAN;

		if (isnan(va))
			continue;
		points++;
		for (size_t y = 0; y < sb->n; y++)
			if (sb->pages[y] == sa->pages[x])
				vb = sb->v[y][m];
		if (isnan(vb))
			return 0;
		if (va != vb) {
			if (fabs(va - vb) > MEMORY_OVERLAP * SWT_MAX(fabs(va), fabs(vb)))
				return 0;
			same = 1;
		}
	}
	return points ? same : 0;
}

#define MAX_MEMORY_TICKS 12

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Memory sweeps double and halve (25 %, 50 %, 100 %, 200 %): over a span
 * of 4 times or more a linear axis crowds the small sizes into a corner.
 * Then the axis is logarithmic, ticked at the sizes drawn (the same in
 * every panel), those within a quarter of a kept one left out.  Returns
 * how many ticks, 0 for a linear axis.
 */
static size_t log_ticks(const struct memory_data *d, double lo, double hi, double *out)
{
	double all[SWT_REPORT_MAX_SERIES * MAX_POINTS + 2];
	size_t n = 0, kept = 0;

	if (!(lo > 0) || hi / lo < 4)
		return 0;
	for (size_t k = 0; k < d->nr_series; k++)
		for (size_t x = 0; x < d->series[k].n; x++)
			all[n++] = mib(d, d->series[k].pages[x]);
	if (d->rc->cache_pages > 0)
		all[n++] = mib(d, d->rc->cache_pages);
	qsort(all, n, sizeof(*all), cmp_double);
	for (size_t i = 0; i < n && kept < MAX_MEMORY_TICKS; i++)
		if (!kept || all[i] >= out[kept - 1] * 1.25)
			out[kept++] = all[i];
	return kept;
}

static int draw_memory(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const ylabels[NR_METRICS] = {
		"faults served by readahead (%)", "readahead pages used (%)",
		"pages read per swap fault",
	};
	const struct memory_data *d = data;
	const struct swt_report_ctx *rc = d->rc;
	struct swt_chart_legend_item items[SWT_REPORT_MAX_SERIES + 2];
	struct swt_chart_rgb colors[SWT_REPORT_MAX_SERIES];
	size_t key_colors[SWT_REPORT_MAX_SERIES];
	char title[200], mark_label[200], ref_label[200], note[600];
	const char *keys[SWT_REPORT_MAX_SERIES];
	double ticks[MAX_MEMORY_TICKS];
	size_t nticks;
	size_t ni = 0;
	double top, bottom, lo = INFINITY, hi = 0;
	int have_ref = !isnan(d->ref[COVERAGE]) || !isnan(d->ref[ACCURACY]);

	(void)err;
	snprintf(title, sizeof(title),
		 "What memory does to the answer: readahead vs the task's memory, page-cluster %d",
		 d->pc);
	top = swt_chart_header(c, title,
		"Each point is one replay on the traced swap layout with that much memory for the "
		"traced task (--cache-pages). Unused readahead pages age out of the inactive list, "
		"so more memory lets more of them be used; the other charts use the marked size.");
	bottom = swt_chart_footnote(c,
		"coverage = swap faults found in the swap cache / all swap faults; accuracy = "
		"readahead pages later used / readahead pages read. Memory is a parameter of the "
		"model (docs/replay-model.md), by default the capture's cgroup limit.");
	for (size_t k = 0; k < d->nr_series; k++)
		key_colors[k] = d->series[k].color;
	swt_report_series_colors(key_colors, d->nr_series, colors);
	for (size_t k = 0; k < d->nr_series; k++) {
		items[ni++] = (struct swt_chart_legend_item){ d->series[k].key, colors[k],
							SWT_MARK_LINE_DOT };
		swt_chart_meta_series(c, d->series[k].key, (int64_t)d->series[k].n);
		lo = SWT_MIN(lo, mib(d, d->series[k].pages[0]));
		hi = SWT_MAX(hi, mib(d, d->series[k].pages[d->series[k].n - 1]));
	}
	if (rc->cache_pages > 0) {
		snprintf(mark_label, sizeof(mark_label), "memory of the other charts: %.0f MiB%s",
			 mib(d, rc->cache_pages), d->compared_is_limit ? " (the cgroup limit)" : "");
		items[ni++] = (struct swt_chart_legend_item){ mark_label, SWT_RGB_MUTED, SWT_MARK_DASH };
		swt_chart_meta_series(c, mark_label, 1);
		lo = SWT_MIN(lo, mib(d, rc->cache_pages));
		hi = SWT_MAX(hi, mib(d, rc->cache_pages));
	}
	if (have_ref) {
		snprintf(ref_label, sizeof(ref_label),
			 "traced kernel at page-cluster %d, cgroup limit (machine-wide /proc/vmstat)",
			 rc->page_cluster);
		items[ni++] = swt_report_reference_item(c, ref_label, SWT_MARK_DIAMOND, d->ref,
							NR_METRICS);
		lo = SWT_MIN(lo, d->limit_mib);
		hi = SWT_MAX(hi, d->limit_mib);
	}
	top += swt_chart_legend(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, items,
				ni);
	if (d->keys.note[0])
		top = swt_chart_note_line(c, top, d->keys.note);
	if (d->dropped_points) {
		snprintf(note, sizeof(note), "%zu more memory sizes are not shown (%d per policy at most)",
			 d->dropped_points, MAX_POINTS);
		top = swt_chart_note_line(c, top, note);
	}
	for (size_t k = 0; k < d->nr_series; k++)
		keys[k] = d->series[k].key;
	swt_report_hidden_note(d->nr_series, keys, NR_METRICS, titles, memory_covers, d,
			       "memory size", note, sizeof(note));
	if (note[0])
		top = swt_chart_note_line(c, top, note);
	if (d->approximate)
		top = swt_chart_note_line(c, top, SWT_REPORT_APPROX_NOTE);
	top = swt_report_address_notes(c, top, d->no_addresses);
	nticks = log_ticks(d, lo, hi, ticks);
	for (int m = 0; m < NR_METRICS; m++) {
		struct swt_chart_panel p = { 0 };
		double ymax = 0;

		swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top + 6, c->width - 2 * SWT_CHART_MARGIN,
				     bottom - top - 6, NR_METRICS, 1, 28, 0, m);
		p.title = titles[m];
		p.xa.label = "memory of the traced task (MiB)";
		if (nticks) {
			/* a doubling sweep: log scale, ticks at the sizes drawn */
			p.xa.log = 1;
			p.xa.at = ticks;
			p.xa.nat = nticks;
			p.xa.lo = lo / 1.1;
			p.xa.hi = hi * 1.1;
		} else {
			/* a little margin keeps the end points off the axes */
			p.xa.lo = lo - 0.04 * (hi - lo);
			p.xa.hi = hi + 0.04 * (hi - lo);
		}
		p.ya.label = ylabels[m];
		p.ya.fmt = m == PAGES_PER_FAULT ? SWT_FMT_NUMBER : SWT_FMT_PERCENT;
		p.ya.zero = 1;
		for (size_t k = 0; k < d->nr_series; k++)
			for (size_t x = 0; x < d->series[k].n; x++)
				if (!isnan(d->series[k].v[x][m]))
					ymax = SWT_MAX(ymax, d->series[k].v[x][m]);
		if (!isnan(d->ref[m]))
			ymax = SWT_MAX(ymax, d->ref[m]);
		p.ya.hi = m == PAGES_PER_FAULT ? SWT_MAX(ymax * 1.05, 1.0) : SWT_MIN(1.0, ymax * 1.05);
		p.ya.headroom = m != PAGES_PER_FAULT;
		if (have_ref && isnan(d->ref[m]))
			p.note = "traced kernel: no readahead pages";
		swt_chart_panel_fit(c, &p);
		swt_chart_panel_axes(c, &p);
		if (rc->cache_pages > 0) {
			double xs[2] = { mib(d, rc->cache_pages), mib(d, rc->cache_pages) };
			double ys[2] = { p.ya.min, p.ya.max };

			swt_chart_panel_line(c, &p, xs, ys, 2, SWT_RGB_MUTED, 1, 0);
		}
		for (size_t k = 0; k < d->nr_series; k++) {
			double xs[MAX_POINTS], ys[MAX_POINTS];

			for (size_t x = 0; x < d->series[k].n; x++) {
				xs[x] = mib(d, d->series[k].pages[x]);
				ys[x] = d->series[k].v[x][m];
			}
			swt_chart_panel_line(c, &p, xs, ys, d->series[k].n, colors[k], 0, 1);
		}
		if (!isnan(d->ref[m]))
			swt_chart_panel_diamond(c, &p, d->limit_mib, d->ref[m], SWT_RGB_BLACK);
		swt_chart_panel_frame(c, &p);
	}
	return 0;
}

int swt_chart_memory_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err)
{
	struct memory_data *d;
	int ret = 0, max_dist = 0;

	*meta = NULL;
	if (rc->chosen_pc < 0)
		return 0;
	/* MAX_POINTS per line makes this too big for the stack */
	d = calloc(1, sizeof(*d));
	if (!d)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	d->rc = rc;
	load_capture(d);
	for (size_t i = 0; i < rc->nr_runs; i++)
		if (swt_report_run_traced(&rc->runs[i]))
			max_dist = SWT_MAX(max_dist, abs(rc->runs[i].page_cluster - rc->chosen_pc));
	/*
	 * The comparisons' page-cluster, else the nearest (the lower on a tie)
	 * with a policy replayed at several memory sizes.
	 */
	for (int dist = 0; dist <= max_dist && !d->nr_series; dist++) {
		d->pc = rc->chosen_pc - dist;
		if (d->pc >= 0)
			load_series(d);
		if (!d->nr_series && dist) {
			d->pc = rc->chosen_pc + dist;
			load_series(d);
		}
	}
	if (d->nr_series)
		ret = swt_chart_render(&rc->out, "memory", draw_memory, d, meta, err);
	free(d);
	return ret;
}
