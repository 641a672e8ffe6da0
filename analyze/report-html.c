/*
 * index.html: the charts in one page with what each answers, and the
 * table of replay runs they were drawn from.  Self-contained (inline CSS,
 * relative links), so it reads offline; well-formed XML, so tests can parse
 * it; nothing time-dependent, so it is reproducible.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report-int.h"
#include "strbuf.h"
#include "swaptrace/version.h"
#include "util.h"

static const char style[] =
	"body{font-family:'DejaVu Sans',sans-serif;margin:24px auto;max-width:1240px;"
	"color:#222;line-height:1.45}\n"
	"h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin:1.8em 0 .3em}\n"
	".facts,.sub,.files,footer{color:#555}.q{font-style:italic;margin:.2em 0}\n"
	".msg{background:#f6f6f6;border:1px dashed #888;padding:.4em .8em}\n"
	"img{max-width:100%;height:auto;border:1px solid #ddd}\n"
	".wide{overflow-x:auto}table{border-collapse:collapse;font-size:.8em}\n"
	"th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}\n"
	"th{background:#f0f0f0}td.t{text-align:left}tr.chosen{background:#eef5fb}\n";

static void html_int(struct swt_sbuf *b, int64_t v)
{
	char buf[48];

	swt_chart_format_int(v, buf, sizeof(buf));
	swt_sbuf_puts(b, buf);
}

static void facts(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	swt_sbuf_puts(b, "<p class=\"facts\">Kernel ");
	swt_sbuf_xml(b, rc->kernel[0] ? rc->kernel : "unknown");
	if (rc->page_cluster >= 0)
		swt_sbuf_printf(b, " &#183; page-cluster %d while tracing", rc->page_cluster);
	swt_sbuf_printf(b, " &#183; %zu swap device%s", rc->nr_parts, rc->nr_parts == 1 ? "" : "s");
	for (size_t i = 0; i < rc->nr_parts; i++) {
		swt_sbuf_puts(b, i ? ", " : " (");
		swt_sbuf_xml(b, rc->parts[i].label);
	}
	swt_sbuf_puts(b, rc->nr_parts ? ")" : "");
	if (rc->first_ns != SWT_NULL && rc->last_ns != SWT_NULL)
		swt_sbuf_printf(b, " &#183; %.1f s traced",
				(double)(rc->last_ns - rc->first_ns) / 1e9);
	swt_sbuf_puts(b, " &#183; ");
	html_int(b, rc->swap_ins);
	swt_sbuf_puts(b, " pages swapped in, ");
	html_int(b, rc->swap_outs);
	swt_sbuf_printf(b, " swapped out &#183; %zu replay run%s.</p>\n", rc->nr_runs,
			rc->nr_runs == 1 ? "" : "s");
}

/* ---- the answer in words, above the charts ---- */

static int is_kernel_policy(const struct swt_report_run *r)
{
	static const char *const names[] = { "none", "fixed", "adaptive", "vma", "auto" };

	if (r->params && *r->params)
		return 0;
	for (size_t i = 0; i < SWT_ARRAY_SIZE(names); i++)
		if (!strcmp(r->policy, names[i]))
			return 1;
	return 0;
}

enum run_group { KERNEL_AUTO, KERNEL_ANY, OTHER, ORACLE };

static int in_group(const struct swt_report_run *r, enum run_group g)
{
	switch (g) {
	case KERNEL_AUTO:
		return is_kernel_policy(r) && !strcmp(r->policy, "auto");
	case KERNEL_ANY:
		return is_kernel_policy(r);
	case ORACLE:
		return !strcmp(r->policy, "oracle");
	case OTHER:
		break;
	}
	return !is_kernel_policy(r) && strcmp(r->policy, "oracle");
}

/*
 * The compared run of a group with the fewest waits (misses: faults that
 * read from swap and waited for it), then the fewest pages read, the
 * lowest page-cluster, the first stored; among runs reading at most
 * max_pages pages.
 */
static const struct swt_report_run *fewest_waits(const struct swt_report_ctx *rc, enum run_group g,
						 int64_t max_pages)
{
	const struct swt_report_run *best = NULL;

	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (!swt_report_run_compared(rc, r) || !in_group(r, g) || r->faults <= 0 ||
		    r->pages_read > max_pages)
			continue;
		if (!best || r->misses < best->misses ||
		    (r->misses == best->misses &&
		     (r->pages_read < best->pages_read ||
		      (r->pages_read == best->pages_read && r->page_cluster < best->page_cluster))))
			best = r;
	}
	return best;
}

static void change(struct swt_sbuf *b, int64_t v, int64_t base)
{
	if (base > 0)
		swt_sbuf_printf(b, " (%+.1f%%)", 100.0 * (double)(v - base) / (double)base);
}

/* "W waits (−x %), X pages read per fault (+y %), R read requests (−z %)" */
static void run_outcome(struct swt_sbuf *b, const struct swt_report_run *r,
			const struct swt_report_run *base)
{
	html_int(b, r->misses);
	swt_sbuf_puts(b, " of ");
	html_int(b, r->faults);
	swt_sbuf_puts(b, " faults waited for a read");
	if (base && base != r)
		change(b, r->misses, base->misses);
	swt_sbuf_printf(b, ", %.1f%% served by readahead, %.2f pages read per fault",
			100.0 * (double)r->hits / (double)r->faults,
			(double)r->pages_read / (double)r->faults);
	if (base && base != r)
		change(b, r->pages_read, base->pages_read);
	swt_sbuf_puts(b, ", ");
	html_int(b, r->read_requests);
	swt_sbuf_puts(b, " read requests");
	if (base && base != r)
		change(b, r->read_requests, base->read_requests);
}

static void answer_line(struct swt_sbuf *b, const char *what, const struct swt_report_run *r,
			const struct swt_report_run *base)
{
	swt_sbuf_puts(b, "<li>");
	swt_sbuf_puts(b, what);
	swt_sbuf_puts(b, " <b>");
	swt_sbuf_xml(b, r->label);
	swt_sbuf_printf(b, " at page-cluster %d</b> (run #%lld): ", r->page_cluster,
			(long long)r->id);
	run_outcome(b, r, base);
	swt_sbuf_puts(b, r->approximate ? " *.</li>\n" : ".</li>\n");
}

/*
 * The layouts the chosen run's setting was replayed on, one line each: the
 * mean waits of a layout's runs (several for "N:spread") against the
 * traced layout's.
 */
/* Whether r replays anchor's setting on a simulated layout of group `group`. */
static int in_layout_group(const struct swt_report_run *r, const struct swt_report_run *anchor,
			   const char *group)
{
	char g[200];

	if (!strcmp(r->layout, "traced") || strcmp(r->key, anchor->key) ||
	    r->page_cluster != anchor->page_cluster || r->cache_pages != anchor->cache_pages)
		return 0;
	swt_report_layout_group(r->layout, g, sizeof(g));
	return !group || !strcmp(g, group);
}

static void answer_layouts(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	const struct swt_report_run *anchor = rc->chosen;

	if (!anchor)
		return;
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];
		double sum = 0, lo = INFINITY, hi = 0;
		size_t n = 0, first = 1;
		char group[200];

		if (!in_layout_group(r, anchor, NULL))
			continue;
		/* a layout at several device offsets ("4:spread") is one line, at its first run */
		swt_report_layout_group(r->layout, group, sizeof(group));
		for (size_t j = 0; j < i && first; j++)
			first = !in_layout_group(&rc->runs[j], anchor, group);
		if (!first)
			continue;
		for (size_t j = i; j < rc->nr_runs; j++) {
			const struct swt_report_run *o = &rc->runs[j];
			int again = 0;

			if (!in_layout_group(o, anchor, group))
				continue;
			/* a placement replayed again ("2" is "2:used=0,0") counts once, as in the chart */
			for (size_t k = i; k < j && !again; k++)
				again = in_layout_group(&rc->runs[k], anchor, group) &&
					swt_report_same_layout(rc->runs[k].layout, o->layout);
			if (again)
				continue;
			sum += (double)o->misses;
			lo = SWT_MIN(lo, (double)o->misses);
			hi = SWT_MAX(hi, (double)o->misses);
			n++;
		}
		swt_sbuf_puts(b, "<li><b>");
		swt_sbuf_xml(b, anchor->label);
		swt_sbuf_printf(b, " at page-cluster %d on the simulated layout ", anchor->page_cluster);
		swt_sbuf_xml(b, n > 1 ? group : r->layout);
		swt_sbuf_puts(b, "</b>: ");
		html_int(b, (int64_t)llround(sum / (double)n));
		swt_sbuf_puts(b, " faults waited for a read");
		if (n > 1) {
			swt_sbuf_printf(b, " on average over %zu device offsets (", n);
			html_int(b, (int64_t)lo);
			swt_sbuf_puts(b, " to ");
			html_int(b, (int64_t)hi);
			swt_sbuf_puts(b, ")");
		}
		if (anchor->misses > 0) {
			swt_sbuf_printf(b, ", %+.1f%% against the traced layout's ",
					100.0 * (sum / (double)n - (double)anchor->misses) /
						(double)anchor->misses);
			html_int(b, anchor->misses);
		}
		swt_sbuf_puts(b, ".</li>\n");
	}
}

/* The chosen policy's runs at other memory sizes: the range of its waits. */
static void answer_memory(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	const struct swt_report_run *anchor = rc->chosen, *lo = NULL, *hi = NULL;

	if (!anchor)
		return;
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (strcmp(r->layout, "traced") || strcmp(r->key, anchor->key) ||
		    r->page_cluster != anchor->page_cluster || r->cache_pages <= 0 || r->faults <= 0)
			continue;
		if (!lo || r->cache_pages < lo->cache_pages)
			lo = r;
		if (!hi || r->cache_pages > hi->cache_pages)
			hi = r;
	}
	if (!lo || lo->cache_pages == hi->cache_pages)
		return;
	swt_sbuf_puts(b, "<li>With memory from ");
	html_int(b, lo->cache_pages);
	swt_sbuf_puts(b, " to ");
	html_int(b, hi->cache_pages);
	swt_sbuf_puts(b, " pages (the model's memory, chart <a href=\"#memory\">Memory</a>), ");
	swt_sbuf_xml(b, anchor->label);
	swt_sbuf_printf(b, " at page-cluster %d serves %.1f%% to %.1f%% of the faults from "
			   "readahead.</li>\n", anchor->page_cluster,
			100.0 * swt_report_ratio(lo->hits, lo->faults),
			100.0 * swt_report_ratio(hi->hits, hi->faults));
}

static void answer(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	const struct swt_report_run *base = NULL, *r;
	int64_t max_pages = INT64_MAX, least_read = INT64_MAX;

	if (rc->cache_pages < 0)
		return;	/* no run on the traced layout: nothing to answer with */
	for (size_t i = 0; i < rc->nr_runs && rc->page_cluster >= 0; i++) {
		r = &rc->runs[i];
		if (swt_report_run_compared(rc, r) && in_group(r, KERNEL_AUTO) &&
		    r->page_cluster == rc->page_cluster && r->faults > 0) {
			base = r;
			break;
		}
	}
	/*
	 * More readahead always saves some waits: the best settings are sought
	 * among those reading at most twice the pages of the traced setting (or
	 * of the run reading fewest), not at any price.
	 */
	for (size_t i = 0; i < rc->nr_runs; i++) {
		r = &rc->runs[i];
		if (swt_report_run_compared(rc, r) && r->faults > 0)
			least_read = SWT_MIN(least_read, r->pages_read);
	}
	if (base)
		least_read = base->pages_read;
	if (least_read < INT64_MAX / 2)
		max_pages = 2 * least_read;
	swt_sbuf_puts(b, "<div id=\"answer\">\n<h2>Answer</h2>\n<p class=\"sub\">A swap "
			 "fault that finds its page read ahead goes on at once; any other waits for "
			 "a read. Fewer waits for a few more pages read is what readahead trades: "
			 "the best settings below are sought among those reading at most twice the "
			 "pages ");
	swt_sbuf_puts(b, base ? "of the first line, the traced kernel's own setting replayed, "
				"against which the changes are given" : "of the run reading fewest");
	swt_sbuf_puts(b, ". Replayed on the traced swap layout with ");
	html_int(b, rc->cache_pages);
	swt_sbuf_puts(b, " pages of memory (docs/replay-model.md).</p>\n<ul>\n");
	if (base)
		answer_line(b, "As traced:", base, NULL);
	if ((r = fewest_waits(rc, KERNEL_AUTO, max_pages)) && r != base)
		answer_line(b, "The kernel's policy at its best page-cluster:", r, base);
	if ((r = fewest_waits(rc, KERNEL_ANY, max_pages)) && r != base && !in_group(r, KERNEL_AUTO))
		answer_line(b, "Fewest waits of the kernel's policies:", r, base);
	if ((r = fewest_waits(rc, OTHER, max_pages)))
		answer_line(b, "Fewest waits of the other policies:", r, base);
	if ((r = fewest_waits(rc, ORACLE, INT64_MAX)))
		answer_line(b, "The bound (oracle: reads only pages that will be used, in the "
			       "kernel's windows):", r, base);
	answer_layouts(b, rc);
	answer_memory(b, rc);
	swt_sbuf_puts(b, "</ul>\n</div>\n");
}

static void chart_section(struct swt_sbuf *b, const struct swt_report_ctx *rc,
			  const struct swt_report_entry *e)
{
	const struct swt_chart_meta *m = e->meta;
	const char *img_ext = (rc->out.formats & SWT_CHART_SVG) ? "svg" : "png";

	swt_sbuf_printf(b, "<section id=\"%s\">\n<h2>", m->name);
	swt_sbuf_xml(b, e->heading);
	swt_sbuf_puts(b, "</h2>\n<p class=\"q\">");
	swt_sbuf_xml(b, e->what);
	swt_sbuf_puts(b, "</p>\n");
	for (size_t i = 0; i < m->nr_messages; i++) {
		swt_sbuf_puts(b, "<p class=\"msg\">");
		swt_sbuf_xml(b, m->messages[i]);
		swt_sbuf_puts(b, "</p>\n");
	}
	swt_sbuf_printf(b, "<img src=\"%s.%s\" width=\"%d\" height=\"%d\" alt=\"", m->name, img_ext,
			SWT_CHART_WIDTH, SWT_CHART_HEIGHT);
	swt_sbuf_xml(b, m->title ? m->title : m->name);
	swt_sbuf_puts(b, "\"/>\n<p class=\"files\">Files:");
	if (rc->out.formats & SWT_CHART_SVG)
		swt_sbuf_printf(b, " <a href=\"%s.svg\">SVG</a> &#183;", m->name);
	if (rc->out.formats & SWT_CHART_PNG)
		swt_sbuf_printf(b, " <a href=\"%s.png\">PNG</a> &#183;", m->name);
	swt_sbuf_printf(b, " <a href=\"%s.json\">metadata</a></p>\n</section>\n", m->name);
}

static void cell_real(struct swt_sbuf *b, double v, const char *fmt_pct_or_num)
{
	if (isnan(v))
		swt_sbuf_puts(b, "<td>&#8211;</td>");
	else if (!strcmp(fmt_pct_or_num, "%"))
		swt_sbuf_printf(b, "<td>%.1f%%</td>", v * 100);
	else
		swt_sbuf_printf(b, "<td>%.1f</td>", v);
}

static void runs_table(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	static const char *const heads[] = {
		"run",         "policy",          "params",          "page-cluster",
		"cache pages", "layout",          "faults",          "hits",
		"misses",      "pages read",      "readahead pages", "readahead hits",
		"wasted",      "read requests",   "read merges",     "accuracy",
		"coverage",    "avg request KiB",
	};

	swt_sbuf_puts(b, "<section id=\"runs\">\n<h2>Replay runs</h2>\n");
	if (!rc->nr_runs) {
		swt_sbuf_puts(b, "<p class=\"msg\">");
		swt_sbuf_xml(b, SWT_REPORT_NO_RUNS);
		swt_sbuf_puts(b, ".</p>\n</section>\n");
		return;
	}
	swt_sbuf_puts(b, "<p class=\"sub\">Totals over all swap devices, as swaptrace replay "
			 "stored them. ");
	if (rc->chosen) {
		swt_sbuf_printf(b, "The highlighted run #%lld is the one shown where a chart "
				   "shows a single run (choose with --policy or --run). ",
				(long long)rc->chosen->id);
	}
	swt_sbuf_puts(b, "Runs marked * replayed an approximated demand stream.</p>\n"
			 "<div class=\"wide\">\n<table>\n<tr>");
	for (size_t i = 0; i < SWT_ARRAY_SIZE(heads); i++)
		swt_sbuf_printf(b, "<th>%s</th>", heads[i]);
	swt_sbuf_puts(b, "</tr>\n");
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];
		const int64_t counts[] = {r->faults,     r->hits,          r->misses,
					  r->pages_read, r->ra_pages,      r->ra_hits,
					  r->ra_wasted,  r->read_requests, r->read_merges};

		swt_sbuf_printf(b, "<tr%s><td>%lld%s</td><td class=\"t\">",
				r == rc->chosen ? " class=\"chosen\"" : "", (long long)r->id,
				r->approximate ? "*" : "");
		swt_sbuf_xml(b, r->policy);
		swt_sbuf_puts(b, "</td><td class=\"t\">");
		swt_sbuf_xml(b, r->params ? r->params : "");
		swt_sbuf_printf(b, "</td><td>%d</td><td>", r->page_cluster);
		html_int(b, r->cache_pages);
		swt_sbuf_puts(b, "</td><td class=\"t\">");
		swt_sbuf_xml(b, r->layout);
		swt_sbuf_puts(b, "</td>");
		for (size_t k = 0; k < SWT_ARRAY_SIZE(counts); k++) {
			swt_sbuf_puts(b, "<td>");
			html_int(b, counts[k]);
			swt_sbuf_puts(b, "</td>");
		}
		cell_real(b, r->accuracy, "%");
		cell_real(b, r->coverage, "%");
		cell_real(b, r->avg_request_kib, "n");
		swt_sbuf_puts(b, "</tr>\n");
	}
	swt_sbuf_puts(b, "</table>\n</div>\n</section>\n");
}

int swt_report_html_write(const struct swt_report_ctx *rc, const struct swt_report_entry *entries,
			  size_t n, char *path, size_t path_size, struct swt_err *err)
{
	struct swt_sbuf b;
	int fd, ret = 0;

	if ((size_t)snprintf(path, path_size, "%s/index.html", rc->out.dir) >= path_size)
		return swt_error(err, SWT_EUSAGE, "'%s': path too long", rc->out.dir);
	swt_sbuf_init(&b);
	swt_sbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
			  "<title>swaptrace report: ");
	swt_sbuf_xml(&b, rc->name);
	swt_sbuf_printf(&b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n"
			"<h1>swaptrace report: ", style);
	swt_sbuf_xml(&b, rc->name);
	swt_sbuf_puts(&b, "</h1>\n");
	facts(&b, rc);
	swt_sbuf_puts(&b, "<p class=\"q\">Would swap-in have been faster with another readahead "
			  "policy, page-cluster value or swap layout?</p>\n<nav>\n<ol>\n");
	for (size_t i = 0; i < n; i++) {
		if (!entries[i].meta)
			continue;
		swt_sbuf_printf(&b, "<li><a href=\"#%s\">", entries[i].meta->name);
		swt_sbuf_xml(&b, entries[i].heading);
		swt_sbuf_puts(&b, "</a>: ");
		swt_sbuf_xml(&b, entries[i].meta->title ? entries[i].meta->title : "");
		swt_sbuf_puts(&b, "</li>\n");
	}
	swt_sbuf_puts(&b, "<li><a href=\"#runs\">Replay runs</a></li>\n</ol>\n</nav>\n");
	answer(&b, rc);
	for (size_t i = 0; i < n; i++) {
		if (entries[i].meta) {
			chart_section(&b, rc, &entries[i]);
		} else if (entries[i].skipped) {
			swt_sbuf_puts(&b, "<section>\n<h2>");
			swt_sbuf_xml(&b, entries[i].heading);
			swt_sbuf_puts(&b, "</h2>\n<p class=\"q\">");
			swt_sbuf_xml(&b, entries[i].what);
			swt_sbuf_puts(&b, "</p>\n<p class=\"msg\">");
			swt_sbuf_xml(&b, entries[i].skipped);
			swt_sbuf_puts(&b, "</p>\n</section>\n");
		}
	}
	runs_table(&b, rc);
	swt_sbuf_puts(&b, "<footer><p>Drawn by swaptrace " SWT_VERSION " from '");
	swt_sbuf_xml(&b, swt_basename(swt_store_path(rc->st)));
	swt_sbuf_puts(&b, "'.</p></footer>\n</body>\n</html>\n");
	if (b.oom) {
		swt_sbuf_release(&b);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
		goto out;
	}
	ret = swt_write_all(fd, b.s, b.len);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(-ret));
out:
	swt_sbuf_release(&b);
	return ret;
}
