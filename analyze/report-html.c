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

/* Milliseconds to the microsecond, a dash for none. */
static void cell_ms(struct swt_sbuf *b, double ms)
{
	if (isnan(ms))
		swt_sbuf_puts(b, "<td>&#8211;</td>");
	else
		swt_sbuf_printf(b, "<td>%.3f</td>", ms);
}

/*
 * What a swap-in read cost as traced, per swap device: the price of each
 * wait the charts count (report-data.c loads it).
 */
static void reads_table(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	static const char *const heads[] = {
		"device", "read requests", "avg request KiB", "D2C avg ms", "D2C median ms",
		"D2C p99 ms", "Q2C avg ms (per page read)",
	};

	swt_sbuf_puts(b, "<section id=\"reads\">\n<h2>Traced swap-in reads</h2>\n"
			 "<p class=\"sub\">What a read from swap cost as traced, per swap "
			 "device: the price of each wait above. D2C is the device's time per "
			 "read request; Q2C a page read's wait, from its queueing to its "
			 "request's completion (as btt counts them; swaptrace info --latency "
			 "prints btt's full tables, of all the devices' I/O). Only the reads "
			 "of pages a task faulted on count: not swapoff's.</p>\n");
	if (!rc->nr_reads) {
		swt_sbuf_puts(b, "<p class=\"msg\">No swap devices in this capture.</p>\n"
				 "</section>\n");
		return;
	}
	swt_sbuf_puts(b, "<div class=\"wide\">\n<table>\n<tr>");
	for (size_t k = 0; k < SWT_ARRAY_SIZE(heads); k++)
		swt_sbuf_printf(b, "<th>%s</th>", heads[k]);
	swt_sbuf_puts(b, "</tr>\n");
	for (size_t i = 0; i < rc->nr_reads; i++) {
		const struct swt_report_reads *r = &rc->reads[i];
		const struct swt_report_part *p = &rc->parts[r->part];

		swt_sbuf_puts(b, "<tr><td class=\"t\">");
		swt_sbuf_xml(b, p->path[0] ? p->path : p->name);
		swt_sbuf_puts(b, " (");
		swt_sbuf_xml(b, p->name);
		swt_sbuf_puts(b, ")</td><td>");
		html_int(b, r->requests);
		swt_sbuf_puts(b, "</td>");
		cell_real(b, r->avg_kib, "n");
		cell_ms(b, r->d2c_avg_ms);
		cell_ms(b, r->d2c_median_ms);
		cell_ms(b, r->d2c_p99_ms);
		cell_ms(b, r->q2c_avg_ms);
		swt_sbuf_puts(b, "</tr>\n");
	}
	swt_sbuf_puts(b, "</table>\n</div>\n</section>\n");
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
		swt_sbuf_xml(b, swt_report_no_runs(rc));
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
		/* the model's settings too, or two runs would look the same */
		if (r->model_settings && r->model_settings[0]) {
			swt_sbuf_puts(b, r->params && *r->params ? ", " : "");
			swt_sbuf_xml(b, r->model_settings);
		}
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
	swt_sbuf_puts(&b, "<li><a href=\"#reads\">Traced swap-in reads</a></li>\n"
			  "<li><a href=\"#runs\">Replay runs</a></li>\n</ol>\n</nav>\n");
	swt_report_answer_html(&b, rc);
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
	reads_table(&b, rc);
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
