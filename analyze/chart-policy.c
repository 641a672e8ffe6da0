/*
 * Chart 1, "policy": readahead policies compared per swap device at one
 * page-cluster -- accuracy, coverage and pages read per fault as grouped
 * bars (a group per device, a bar per policy), with the traced kernel's own
 * counters as a dashed reference line.  Those counters are machine-wide
 * /proc/vmstat deltas at the traced page-cluster, and say so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "strbuf.h"
#include "util.h"

enum { ACCURACY, COVERAGE, PAGES_PER_FAULT, NR_METRICS };

static const char *const titles[NR_METRICS] = {
	"Accuracy", "Coverage", "Pages read per fault"
};
static const char *const ylabels[NR_METRICS] = {
	"readahead pages used (%)", "faults served by readahead (%)", "pages read per swap fault",
};

/*
 * Staggered rows of device letters at most: two hold them at 64 devices;
 * past about 100 the chart runs out of height before width.
 */
#define MAX_LABEL_ROWS 4

struct group {
	int64_t partition;	/* -1: runs' totals over several devices (no partition rows) */
	char label[320];	/* "7:0 /dev/loop0" */
	char name[320];		/* "7:0", for narrow groups */
};

struct policy_data {
	const struct swt_report_ctx *rc;
	const struct swt_report_run **runs;
	size_t nr_runs;
	struct swt_report_keys keys;	/* the policies drawn, and the note on those left out */
	int approximate;	/* a run drawn replayed an approximated demand stream */
	int no_addresses;	/* swt_report_run_lacks_addresses() bits of the drawn runs */
	struct group *groups;
	size_t nr_groups;
	double *v;		/* [run][group][metric], NaN: not defined */
	double ref[NR_METRICS];	/* the traced kernel's, NaN: not available */
	char ref_note[NR_METRICS][160];	/* the kernel's value, or why there is none */
};

static double *value(const struct policy_data *d, size_t run, size_t group, int metric)
{
	return &d->v[(run * d->nr_groups + group) * NR_METRICS + (size_t)metric];
}

/* Add the group for a partition unless known.  0 or -SWT_ENOMEM. */
static int add_group(struct policy_data *d, size_t *cap, int64_t partition, const char *dev,
		       struct swt_err *err)
{
	const struct swt_report_part *part;
	size_t i;

	for (i = 0; i < d->nr_groups; i++)
		if (d->groups[i].partition == partition)
			return 0;
	if (swt_grow((void **)&d->groups, cap, d->nr_groups + 1, sizeof(*d->groups)))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	/* keep groups in partition order whatever order runs list them in */
	for (i = d->nr_groups; i > 0 && d->groups[i - 1].partition > partition; i--)
		d->groups[i] = d->groups[i - 1];
	d->groups[i].partition = partition;
	part = partition >= 0 ? swt_report_part(d->rc, partition) : NULL;
	/* the area's own names: "7:0 area 3" where areas share a device */
	if (partition < 0)
		snprintf(d->groups[i].label, sizeof(d->groups[i].label), "all devices");
	else
		snprintf(d->groups[i].label, sizeof(d->groups[i].label), "%s", part ? part->label : dev);
	snprintf(d->groups[i].name, sizeof(d->groups[i].name), "%s", partition < 0 ? "all devices" :
		 part ? part->name : dev);
	d->nr_groups++;
	return 0;
}

static void set_metrics(double *m, int64_t faults, int64_t hits, int64_t pages_read,
			int64_t ra_pages, int64_t ra_hits)
{
	m[ACCURACY] = swt_report_ratio(ra_hits, ra_pages);
	m[COVERAGE] = swt_report_ratio(hits, faults);
	m[PAGES_PER_FAULT] = swt_report_ratio(pages_read, faults);
}

/* Two passes over run_partition: the groups first, then the values. */
static int load_values(struct policy_data *d, int fill, size_t *cap, struct swt_err *err)
{
	sqlite3_stmt *s = NULL;
	int64_t totals_part = d->rc->nr_parts == 1 ? d->rc->parts[0].id : -1;
	const char *totals_dev = d->rc->nr_parts == 1 ? d->rc->parts[0].name : "";
	int ret, step;

	ret = swt_store_prepare(d->rc->st,
		"SELECT partition, dev, faults, hits, pages_read, ra_pages, ra_hits"
		"  FROM run_partition WHERE run_id = ?1 ORDER BY partition", &s, err);
	if (ret)
		return ret;
	for (size_t r = 0; r < d->nr_runs && !ret; r++) {
		const struct swt_report_run *run = d->runs[r];
		int rows = 0;

		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, run->id);
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			int64_t part = sqlite3_column_int64(s, 0);
			const char *dev = (const char *)sqlite3_column_text(s, 1);

			rows++;
			if (!fill) {
				int gi = add_group(d, cap, part, dev ? dev : "?", err);

				if (gi < 0) {
					ret = gi;
					break;
				}
				continue;
			}
			for (size_t g = 0; g < d->nr_groups; g++)
				if (d->groups[g].partition == part)
					set_metrics(value(d, r, g, 0), sqlite3_column_int64(s, 2),
						    sqlite3_column_int64(s, 3),
						    sqlite3_column_int64(s, 4),
						    sqlite3_column_int64(s, 5),
						    sqlite3_column_int64(s, 6));
		}
		if (!ret && step != SQLITE_DONE)
			ret = swt_store_sql_error(d->rc->st, err, "reading run partitions");
		if (ret || rows)
			continue;
		/*
		 * A run without per-partition rows still has its totals: those of
		 * the one device when there is one, else of "all devices".
		 */
		if (!fill) {
			ret = add_group(d, cap, totals_part, totals_dev, err);
			continue;
		}
		for (size_t g = 0; g < d->nr_groups; g++)
			if (d->groups[g].partition == totals_part)
				set_metrics(value(d, r, g, 0), run->faults, run->hits,
					    run->pages_read, run->ra_pages, run->ra_hits);
	}
	sqlite3_finalize(s);
	return ret;
}

static void fmt_value(int metric, double v, char *buf, size_t size)
{
	if (metric == PAGES_PER_FAULT)
		snprintf(buf, size, "%.2f", v);
	else	/* small shares need a decimal: "0.4%", not "0%" */
		snprintf(buf, size, "%.*f%%", v < 0.0995 ? 1 : 0, v * 100);
}

static void load_reference(struct policy_data *d)
{
	const struct swt_report_ctx *rc = d->rc;
	int64_t faults = SWT_NULL;

	for (int m = 0; m < NR_METRICS; m++)
		d->ref[m] = NAN;
	if (rc->vm_pgmajfault != SWT_NULL && rc->vm_swap_ra_hit != SWT_NULL)
		faults = rc->vm_pgmajfault + rc->vm_swap_ra_hit;
	d->ref[ACCURACY] = swt_report_ratio(rc->vm_swap_ra_hit, rc->vm_swap_ra);
	d->ref[COVERAGE] = swt_report_ratio(rc->vm_swap_ra_hit, faults);
	d->ref[PAGES_PER_FAULT] = swt_report_ratio(rc->vm_pswpin, faults);
	for (int m = 0; m < NR_METRICS; m++) {
		char v[32];

		if (!isnan(d->ref[m])) {
			fmt_value(m, d->ref[m], v, sizeof(v));
			snprintf(d->ref_note[m], sizeof(d->ref_note[m]), "dashed: traced kernel %s",
				 v);
			continue;
		}
		if (m == ACCURACY && rc->vm_swap_ra == 0)
			snprintf(d->ref_note[m], sizeof(d->ref_note[m]),
				 "traced kernel: no readahead pages (swap_ra = 0)");
		else
			snprintf(d->ref_note[m], sizeof(d->ref_note[m]),
				 "traced kernel's counters not recorded");
	}
}

/*
 * The panels side by side (cols = NR_METRICS), or one above another
 * (cols = 1) when even lettered devices would not fit beside each other.
 */
static void panel_place(struct swt_chart *c, struct swt_chart_panel *p, int cols, double top,
			double bottom, int i)
{
	swt_chart_panel_grid(p, SWT_CHART_MARGIN, top + 6, c->width - 2 * SWT_CHART_MARGIN,
			     bottom - top - 6, cols, NR_METRICS / cols, 28, 16, i);
}

/*
 * Do the device names stand whole under their groups, drawn in `rows`
 * staggered rows?  A category's word wider than its band is drawn a
 * character to a line ("7:10" as 7, 1, 0 with sixteen devices).
 */
static int names_fit(struct swt_chart *c, const struct policy_data *d, const char *const *cats,
		     int cols, int rows, double top, double bottom)
{
	struct swt_chart_panel p = { 0 };
	double band;

	panel_place(c, &p, cols, top, bottom, 0);
	/* the accuracy panel, as draw_policy() fits it */
	p.title = titles[ACCURACY];
	p.ya.across = cols == 1;
	p.xa.label = "swap device";
	p.ya.label = ylabels[ACCURACY];
	p.ya.fmt = SWT_FMT_PERCENT;
	p.ya.zero = 1;
	p.ya.hi = 1;
	swt_chart_panel_fit(c, &p);
	/* as swt_chart_panel_axes() draws a category: its band(s) less 8 px */
	band = p.pw / (double)d->nr_groups * rows - 8;
	return swt_chart_words_fit(c, cats, d->nr_groups, band);
}

static int draw_policy(struct swt_chart *c, const void *data, struct swt_err *err)
{
	const struct policy_data *d = data;
	const struct swt_report_ctx *rc = d->rc;
	struct swt_chart_legend_item items[SWT_REPORT_MAX_SERIES + 1];
	struct swt_chart_rgb colors[SWT_REPORT_MAX_SERIES];
	size_t key_colors[SWT_REPORT_MAX_SERIES];
	const char **cats = NULL;
	char (*letters)[4] = NULL;
	struct swt_sbuf key;
	char title[200], subtitle[600], ref_label[200];
	size_t ni = 0;
	double top, bottom;
	int any_ref = 0, cols = NR_METRICS, rows = 1, ret = 0;

	if (rc->chosen_pc >= 0)
		snprintf(title, sizeof(title), "Readahead policies compared per swap device, "
			 "page-cluster %d", rc->chosen_pc);
	else
		snprintf(title, sizeof(title), "Readahead policies compared per swap device");
	snprintf(subtitle, sizeof(subtitle),
		 "Accuracy, coverage and pages read per fault when the swap faults of '%s' are "
		 "replayed on the traced layout; one bar per policy, one group per device. Higher "
		 "accuracy and coverage are better; fewer pages per fault means less I/O.",
		 rc->name);
	top = swt_chart_header(c, title, subtitle);
	bottom = swt_chart_footnote(c,
		"accuracy = readahead pages later used / readahead pages read; coverage = swap "
		"faults found in the swap cache / all swap faults; pages read per fault = pages "
		"read from swap (demand + readahead) / swap faults.");
	if (!d->nr_runs) {
		swt_chart_body_message(c, top, bottom, swt_report_no_runs(rc));
		return 0;
	}

	for (size_t r = 0; r < d->nr_runs; r++)
		key_colors[r] = d->runs[r]->key_color;
	swt_report_series_colors(key_colors, d->nr_runs, colors);
	for (size_t r = 0; r < d->nr_runs; r++) {
		items[ni++] = (struct swt_chart_legend_item){ d->runs[r]->label, colors[r],
							SWT_MARK_BOX };
		swt_chart_meta_series(c, d->runs[r]->label, (int64_t)(d->nr_groups * NR_METRICS));
	}
	for (int m = 0; m < NR_METRICS; m++)
		any_ref |= !isnan(d->ref[m]);
	if (any_ref) {
		if (rc->page_cluster >= 0)
			snprintf(ref_label, sizeof(ref_label),
				 "traced kernel at page-cluster %d (machine-wide /proc/vmstat)",
				 rc->page_cluster);
		else
			snprintf(ref_label, sizeof(ref_label),
				 "traced kernel (machine-wide /proc/vmstat)");
		items[ni++] = swt_report_reference_item(c, ref_label, SWT_MARK_DASH, d->ref,
							NR_METRICS);
	}
	top += swt_chart_legend(c, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN, items,
				ni);
	if (d->keys.note[0])
		top = swt_chart_note_line(c, top, d->keys.note);
	if (d->approximate)
		top = swt_chart_note_line(c, top, SWT_REPORT_APPROX_NOTE);
	top = swt_report_address_notes(c, top, d->no_addresses);
	top = swt_report_memory_note(d->rc, c, top);
	/*
	 * A run that replayed no fault on a device has nothing to divide by
	 * there: its bars say n/a, and without this a reader could not tell
	 * why (a run over no faults, or a device none of them reached).
	 */
	for (size_t i = 0; i < d->nr_runs * d->nr_groups; i++) {
		if (isnan(d->v[i * NR_METRICS + COVERAGE])) {
			top = swt_chart_note_line(c, top, "n/a: no swap faults replayed on that "
					"device by that policy, so no accuracy, coverage or pages "
					"read per fault");
			break;
		}
	}
	/*
	 * Faults but no page read ahead (none, any policy at page-cluster 0):
	 * accuracy is 0 of 0 there, an n/a bar beside real coverage that
	 * would otherwise read as a missing run.
	 */
	for (size_t i = 0; i < d->nr_runs * d->nr_groups; i++) {
		if (isnan(d->v[i * NR_METRICS + ACCURACY]) &&
		    !isnan(d->v[i * NR_METRICS + COVERAGE])) {
			top = swt_chart_note_line(c, top, "Accuracy n/a: no pages read ahead on "
					"that device by that policy (none reads none, nor does any "
					"policy at page-cluster 0), so no accuracy");
			break;
		}
	}

	cats = calloc(d->nr_groups, sizeof(*cats));
	if (!cats)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	/* device paths while the groups are wide enough for them ("/dev/" would wrap) */
	for (size_t g = 0; g < d->nr_groups; g++)
		cats[g] = d->nr_groups > 2 ? d->groups[g].name : d->groups[g].label;
	if (!names_fit(c, d, cats, cols, 1, top, bottom)) {
		/* letters on the axis, the devices spelled out above the panels, as layout does */
		letters = calloc(d->nr_groups, sizeof(*letters));
		if (!letters) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		swt_sbuf_init(&key);
		swt_sbuf_puts(&key, "Devices: ");
		for (size_t g = 0; g < d->nr_groups; g++) {
			if (g < 26)
				snprintf(letters[g], sizeof(letters[g]), "%c", (int)('A' + g));
			else
				snprintf(letters[g], sizeof(letters[g]), "%c%c",
					 (int)('A' + g / 26 - 1), (int)('A' + g % 26));
			cats[g] = letters[g];
			/* the device numbers: a key of paths would push the panels off */
			swt_sbuf_printf(&key, "%s%s = %s", g ? "; " : "", letters[g],
					d->groups[g].name);
		}
		if (key.oom) {
			swt_sbuf_release(&key);
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		top = swt_chart_note_line(c, top, key.s);
		swt_sbuf_release(&key);
		/*
		 * Past 26 devices two letters ("AA") are wider than a group in
		 * a third of the width, and wrapped to a letter a line they
		 * read as two devices: the panels take the whole width each.
		 * One letter never wraps, however narrow its group.
		 */
		if (d->nr_groups > 26 && !names_fit(c, d, cats, cols, 1, top, bottom))
			cols = 1;
		/*
		 * Past about 44 devices two letters are wider than a group
		 * of the whole width too: the letters stand in staggered
		 * rows, each over the width of as many groups as rows.
		 */
		while (cols == 1 && rows < MAX_LABEL_ROWS &&
		       !names_fit(c, d, cats, cols, rows, top, bottom))
			rows++;
	}
	for (int m = 0; m < NR_METRICS; m++) {
		struct swt_chart_panel p = { 0 };
		double hi = 0;
		char label[32];
		int labels;

		panel_place(c, &p, cols, top, bottom, m);
		p.title = titles[m];
		p.note = d->ref_note[m];
		/* one above another, the panels' labels alike, and their plots as wide */
		p.ya.across = cols == 1;
		p.xa.label = "swap device";
		p.xa.cats = cats;
		p.xa.ncats = d->nr_groups;
		p.xa.cat_rows = rows;
		p.ya.label = ylabels[m];
		p.ya.fmt = m == PAGES_PER_FAULT ? SWT_FMT_NUMBER : SWT_FMT_PERCENT;
		p.ya.zero = 1;
		for (size_t r = 0; r < d->nr_runs; r++)
			for (size_t g = 0; g < d->nr_groups; g++)
				if (!isnan(*value(d, r, g, m)))
					hi = SWT_MAX(hi, *value(d, r, g, m));
		if (!isnan(d->ref[m]))
			hi = SWT_MAX(hi, d->ref[m]);
		/*
		 * Head room for the value labels; percentages stop at 100 %, and
		 * a bar that reaches it gets its room above the last tick.
		 */
		p.ya.hi = hi * 1.15;
		if (m != PAGES_PER_FAULT && p.ya.hi > 1) {
			p.ya.hi = 1;
			p.ya.headroom = 1;
		}
		swt_chart_panel_fit(c, &p);
		swt_chart_panel_axes(c, &p);
		labels = 1;
		for (size_t r = 0; r < d->nr_runs && labels; r++) {
			for (size_t g = 0; g < d->nr_groups && labels; g++) {
				double v = *value(d, r, g, m);

				if (isnan(v))
					continue;
				fmt_value(m, v, label, sizeof(label));
				labels = swt_chart_bar_label_fits(c, &p, d->nr_runs, label);
			}
		}
		for (size_t r = 0; r < d->nr_runs; r++) {
			for (size_t g = 0; g < d->nr_groups; g++) {
				double v = *value(d, r, g, m);

				if (isnan(v)) {
					double x0, x1, bw;

					/* say "not defined" rather than draw a zero bar */
					swt_chart_panel_band(&p, g, &x0, &x1);
					bw = (x1 - x0) * 0.8 / (double)d->nr_runs;
					if (bw >= 20)
						swt_chart_text(c, SWT_FONT_VALUE,
							       x0 + (x1 - x0) * 0.1 +
								       bw * ((double)r + 0.5),
							       p.py + p.ph - 3, 0.5, 1, 0,
							       SWT_RGB_MUTED, 0, "n/a");
					continue;
				}
				fmt_value(m, v, label, sizeof(label));
				swt_chart_panel_bar(c, &p, g, r, d->nr_runs, v, colors[r],
						    labels ? label : NULL);
			}
		}
		if (!isnan(d->ref[m])) {
			double y = swt_chart_panel_y(&p, d->ref[m]), dash[] = { 8, 4 };

			cairo_save(c->cr);
			cairo_set_source_rgb(c->cr, 0, 0, 0);
			cairo_set_line_width(c->cr, 2);
			cairo_set_dash(c->cr, dash, 2, 0);
			cairo_move_to(c->cr, p.px, y);
			cairo_line_to(c->cr, p.px + p.pw, y);
			cairo_stroke(c->cr);
			cairo_restore(c->cr);
		}
		swt_chart_panel_frame(c, &p);
	}
out:
	free(letters);
	free(cats);
	return ret;
}

int swt_chart_policy_write(struct swt_report_ctx *rc, struct swt_chart_meta **meta,
			   struct swt_err *err)
{
	struct policy_data d = { .rc = rc };
	size_t cap = 0;
	int ret;

	ret = swt_report_runs_at(rc, rc->chosen_pc, &d.runs, &d.nr_runs, &d.keys, err);
	if (ret)
		return ret;
	for (size_t r = 0; r < d.nr_runs; r++) {
		d.approximate |= d.runs[r]->approximate;
		d.no_addresses |= swt_report_run_lacks_addresses(rc, d.runs[r]);
	}
	load_reference(&d);
	ret = load_values(&d, 0, &cap, err);
	if (ret)
		goto out;
	if (d.nr_groups) {
		d.v = malloc(d.nr_runs * d.nr_groups * NR_METRICS * sizeof(*d.v));
		if (!d.v) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < d.nr_runs * d.nr_groups * NR_METRICS; i++)
			d.v[i] = NAN;
		ret = load_values(&d, 1, &cap, err);
		if (ret)
			goto out;
	}
	ret = swt_chart_render(&rc->out, "policy", draw_policy, &d, meta, err);
out:
	free(d.v);
	free(d.groups);
	free(d.runs);
	return ret;
}
