/*
 * The chart kit on its own: nice ticks (including the degenerate ranges a
 * one-event capture gives), number formats, the SVG finishing that makes
 * output reproducible and readable, metadata escaping, default report
 * directories, and rendering a figure with empty and degenerate panels to
 * files.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chart.h"
#include "check.h"
#include "report.h"
#include "strbuf.h"
#include "util.h"

static int count_ticks(const struct swt_chart_axis *a)
{
	int n = 0;

	for (double v = ceil(a->min / a->step - 1e-9) * a->step; v <= a->max + a->step * 1e-6;
	     v += a->step)
		n++;
	return n;
}

TEST(ticks_nice_steps)
{
	struct swt_chart_axis a = { .lo = 0, .hi = 0.97, .zero = 1 };

	swt_chart_axis_ticks(&a, 6);
	CHECK_NEAR(a.min, 0, 1e-12);
	CHECK(a.max >= 0.97 && a.max <= 1.0 + 1e-12);
	CHECK_NEAR(a.step, 0.2, 1e-12);
	CHECK(count_ticks(&a) <= 7);

	a = (struct swt_chart_axis){ .lo = 3, .hi = 75047, .zero = 1, .integer = 1 };
	swt_chart_axis_ticks(&a, 8);
	CHECK_NEAR(a.step, 10000, 1e-9);
	CHECK_NEAR(a.max, 80000, 1e-9);

	/* integer axes never get fractional steps */
	a = (struct swt_chart_axis){ .lo = 0, .hi = 3, .integer = 1 };
	swt_chart_axis_ticks(&a, 12);
	CHECK_NEAR(a.step, 1, 1e-12);

	/* 2.5 is nice on real axes */
	a = (struct swt_chart_axis){ .lo = 0, .hi = 0.1, .zero = 1 };
	swt_chart_axis_ticks(&a, 4);
	CHECK_NEAR(a.step, 0.025, 1e-12);
}

TEST(ticks_degenerate_ranges)
{
	struct swt_chart_axis a = { .lo = 0, .hi = 0, .zero = 1 };

	swt_chart_axis_ticks(&a, 5);
	CHECK_NEAR(a.min, 0, 1e-12);
	CHECK_NEAR(a.max, 1, 1e-12);

	/* one value: widened around it, not below zero */
	a = (struct swt_chart_axis){ .lo = 5, .hi = 5 };
	swt_chart_axis_ticks(&a, 5);
	CHECK(a.min < 5 && a.max > 5 && a.min >= 0);
	CHECK(a.step > 0);

	a = (struct swt_chart_axis){ .lo = NAN, .hi = INFINITY };
	swt_chart_axis_ticks(&a, 5);
	CHECK(isfinite(a.min) && isfinite(a.max) && a.max > a.min && a.step > 0);

	/* reversed input is still a range */
	a = (struct swt_chart_axis){ .lo = 10, .hi = 2 };
	swt_chart_axis_ticks(&a, 5);
	CHECK(a.min <= 2 && a.max >= 10);

	/* max_ticks below 2 still gives an axis */
	a = (struct swt_chart_axis){ .lo = 0, .hi = 100 };
	swt_chart_axis_ticks(&a, 0);
	CHECK(a.max >= 100 && count_ticks(&a) >= 2);
}

TEST(ticks_exact_and_log)
{
	struct swt_chart_axis a = { .lo = -0.4, .hi = 8.4, .exact = 1, .integer = 1 };

	swt_chart_axis_ticks(&a, 12);
	CHECK_NEAR(a.min, -0.4, 1e-12);
	CHECK_NEAR(a.max, 8.4, 1e-12);
	CHECK_NEAR(a.step, 1, 1e-12);
	CHECK_INT(count_ticks(&a), 9);	/* 0..8, never -0.4 + k */

	a = (struct swt_chart_axis){ .lo = 0.5, .hi = 82000, .log = 1 };
	swt_chart_axis_ticks(&a, 10);
	CHECK_NEAR(a.min, 0.5, 1e-12);
	CHECK_NEAR(a.max, 100000, 1e-6);
	CHECK_NEAR(a.step, 1, 1e-12);

	/* many decades in little room: every other decade */
	a = (struct swt_chart_axis){ .lo = 1, .hi = 1e12, .log = 1 };
	swt_chart_axis_ticks(&a, 3);
	CHECK(a.step >= 2);

	/* a log axis with nothing to show */
	a = (struct swt_chart_axis){ .lo = 0, .hi = 0, .log = 1 };
	swt_chart_axis_ticks(&a, 5);
	CHECK(a.min > 0 && a.max > a.min);
}

TEST(axis_formats)
{
	struct swt_chart_axis a = { .fmt = SWT_FMT_PERCENT, .min = 0, .max = 1, .step = 0.25 };
	char buf[64];

	swt_chart_axis_format(&a, 0.25, buf, sizeof(buf));
	CHECK_STR(buf, "25%");
	a.step = 0.025;
	swt_chart_axis_format(&a, 0.075, buf, sizeof(buf));
	CHECK_STR(buf, "7.5%");
	a = (struct swt_chart_axis){ .fmt = SWT_FMT_COUNT, .min = 0, .max = 80000, .step = 20000 };
	swt_chart_axis_format(&a, 20000, buf, sizeof(buf));
	CHECK_STR(buf, "20k");
	swt_chart_axis_format(&a, 0, buf, sizeof(buf));
	CHECK_STR(buf, "0");
	a = (struct swt_chart_axis){ .fmt = SWT_FMT_COUNT, .min = 0, .max = 2.5e7, .step = 5e6 };
	swt_chart_axis_format(&a, 1.5e7, buf, sizeof(buf));
	CHECK_STR(buf, "15M");
	/* past G ("2500000000G" on an axis to 2.5e18) */
	a = (struct swt_chart_axis){ .fmt = SWT_FMT_COUNT, .min = 0, .max = 2.5e18, .step = 5e17 };
	swt_chart_axis_format(&a, 2.5e18, buf, sizeof(buf));
	CHECK_STR(buf, "2.5E");
	a = (struct swt_chart_axis){ .fmt = SWT_FMT_COUNT, .min = 0, .max = 4e12, .step = 1e12 };
	swt_chart_axis_format(&a, 3e12, buf, sizeof(buf));
	CHECK_STR(buf, "3T");
	/* millions from the first million, halves with their decimal, wholes without */
	a = (struct swt_chart_axis){ .fmt = SWT_FMT_COUNT, .min = 0, .max = 3.5e6, .step = 5e5 };
	swt_chart_axis_format(&a, 3.5e6, buf, sizeof(buf));
	CHECK_STR(buf, "3.5M");
	swt_chart_axis_format(&a, 1e6, buf, sizeof(buf));
	CHECK_STR(buf, "1M");
	a = (struct swt_chart_axis){ .fmt = SWT_FMT_COUNT, .min = 0, .max = 12500, .step = 2500 };
	swt_chart_axis_format(&a, 5000, buf, sizeof(buf));
	CHECK_STR(buf, "5k");
	swt_chart_axis_format(&a, 7500, buf, sizeof(buf));
	CHECK_STR(buf, "7.5k");
	swt_chart_axis_format(&a, 0, buf, sizeof(buf));
	CHECK_STR(buf, "0");
	a = (struct swt_chart_axis){ .fmt = SWT_FMT_NUMBER, .min = -1, .max = 2, .step = 0.5 };
	swt_chart_axis_format(&a, 1.5, buf, sizeof(buf));
	CHECK_STR(buf, "1.5");
	swt_chart_axis_format(&a, -1e-17, buf, sizeof(buf));
	CHECK_STR(buf, "0");	/* never "-0" */
	a = (struct swt_chart_axis){ .log = 1, .min = 0.5, .max = 1e5, .step = 1 };
	swt_chart_axis_format(&a, 1000, buf, sizeof(buf));
	CHECK_STR(buf, "1k");
	swt_chart_axis_format(&a, 1, buf, sizeof(buf));
	CHECK_STR(buf, "1");
}

/* A log axis ticked at given values (a memory sweep's sizes): its range as given, whole labels. */
TEST(log_axis_at_given_values)
{
	static const double at[] = { 51.25, 102.5, 205, 410, 820 };
	struct swt_chart_axis a = { .log = 1, .lo = 46.6, .hi = 902, .at = at, .nat = 5 };
	char buf[64];

	swt_chart_axis_ticks(&a, 5);
	CHECK(fabs(a.min - 46.6) < 1e-9 && fabs(a.max - 902) < 1e-9);
	swt_chart_axis_format(&a, at[0], buf, sizeof(buf));
	CHECK_STR(buf, "51");
	swt_chart_axis_format(&a, 820, buf, sizeof(buf));
	CHECK_STR(buf, "820");
	swt_chart_axis_format(&a, 6.5, buf, sizeof(buf));
	CHECK_STR(buf, "6.5");
}

TEST(integer_formats)
{
	char buf[48];

	swt_chart_format_int(75047, buf, sizeof(buf));
	CHECK_STR(buf, "75\xc2\xa0" "047");
	swt_chart_format_int(1234, buf, sizeof(buf));
	CHECK_STR(buf, "1234");
	swt_chart_format_int(-1234567, buf, sizeof(buf));
	CHECK_STR(buf, "-1\xc2\xa0" "234\xc2\xa0" "567");
	swt_chart_format_int(0, buf, sizeof(buf));
	CHECK_STR(buf, "0");
	swt_chart_format_short(950, buf, sizeof(buf));
	CHECK_STR(buf, "950");
	swt_chart_format_short(75047, buf, sizeof(buf));
	CHECK_STR(buf, "75k");
	swt_chart_format_short(1520000, buf, sizeof(buf));
	CHECK_STR(buf, "1.5M");
	swt_chart_format_short(2000000, buf, sizeof(buf));
	CHECK_STR(buf, "2M");
	/* past G: T, P, E (a count of 10^12 was "1000G") */
	swt_chart_format_short(INT64_C(2500000000000), buf, sizeof(buf));
	CHECK_STR(buf, "2.5T");
	swt_chart_format_short(INT64_C(3000000000000000), buf, sizeof(buf));
	CHECK_STR(buf, "3P");
	swt_chart_format_short(INT64_MAX, buf, sizeof(buf));
	CHECK_STR(buf, "9.2E");
}

TEST(svg_finish_renumbers_and_describes)
{
	static const char svg[] =
		"<?xml version=\"1.0\"?>\n<svg width=\"1200px\">\n"
		"<g id=\"surface17\"><image id=\"image558\"/><use xlink:href=\"#image558\"/>"
		"<use xlink:href=\"#surface17\"/><g id=\"surface20\"/></g>\n</svg>\n";
	struct swt_chart_meta m = { .name = "t", .title = "A & <B>", .subtitle = "sub." };
	struct swt_chart_series_meta series[] = { { .name = "s\"1", .points = 3 } };
	struct swt_err err = { 0 };
	char *out = NULL;
	size_t len = 0;

	m.series = series;
	m.nr_series = 1;
	CHECK_INT(swt_chart_svg_finish(svg, sizeof(svg) - 1, &m, &out, &len, &err), 0);
	CHECK(out && strlen(out) == len);
	if (!out)
		return;
	CHECK(strstr(out, "<svg width=\"1200px\">\n<title>A &amp; &lt;B&gt;</title>\n<desc>sub. "));
	CHECK(strstr(out, "Series: s&quot;1 (3)."));
	CHECK(strstr(out, "<metadata id=\"swaptrace-chart\">{"));
	CHECK(strstr(out, "&quot;name&quot;: &quot;s\\&quot;1&quot;, &quot;points&quot;: 3"));
	CHECK(strstr(out, "<g id=\"surface1\"><image id=\"image1\"/><use xlink:href=\"#image1\"/>"
			  "<use xlink:href=\"#surface1\"/><g id=\"surface2\"/>"));
	CHECK(!strstr(out, "surface17") && !strstr(out, "image558"));
	free(out);

	out = NULL;
	CHECK_INT(swt_chart_svg_finish("<html></html>", 13, &m, &out, &len, &err), -SWT_EFORMAT);
	CHECK(strstr(err.msg, "chart 't'") != NULL);
	CHECK(out == NULL);
}

TEST(meta_json_escapes)
{
	struct swt_chart_meta m = {.name = "n", .title = "say \"hi\"\n", .formats = SWT_CHART_SVG};
	char *notes[] = { "a\\b" };
	char *json;

	m.notes = notes;
	m.nr_notes = 1;
	json = swt_chart_meta_json(&m);
	CHECK(json != NULL);
	if (!json)
		return;
	CHECK(strstr(json, "\"title\": \"say \\\"hi\\\"\\n\""));
	CHECK(strstr(json, "\"subtitle\": null"));
	CHECK(strstr(json, "\"formats\": [\"svg\"]"));
	CHECK(strstr(json, "\"notes\": [\"a\\\\b\"]"));
	CHECK(strstr(json, "\"messages\": []"));
	free(json);
}

TEST(strbuf_escapes)
{
	struct swt_sbuf b;

	swt_sbuf_init(&b);
	swt_sbuf_xml(&b, "<a href='x'>&\x01</a>");
	CHECK_STR(b.s, "&lt;a href=&#39;x&#39;&gt;&amp; &lt;/a&gt;");
	swt_sbuf_release(&b);
	/* U+FFFE and U+FFFF are well-formed UTF-8 but no XML characters */
	swt_sbuf_xml(&b, "a\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd");
	CHECK_STR(b.s, "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	swt_sbuf_release(&b);
	swt_sbuf_json(&b, "\xef\xbf\xbf");
	CHECK_STR(b.s, "\"\xef\xbf\xbd\"");
	swt_sbuf_release(&b);
	swt_sbuf_json(&b, "\t\x1f");
	CHECK_STR(b.s, "\"\\u0009\\u001f\"");
	swt_sbuf_release(&b);
	swt_sbuf_json(&b, "caf\xc3\xa9 \xff\xc3(\xe2\x80\x94\xed\xa0\x80");
	CHECK_STR(b.s, "\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd(\xe2\x80\x94"
		       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	swt_sbuf_release(&b);
	/* for the terminal: no escape sequence from a plugin's name gets through (ESC, DEL, C1 CSI) */
	swt_sbuf_text(&b, "a\x1b[2J\tb\x7f\xc2\x9b" "1m\xc3\xa9\xc2\xa0\xff\n");
	CHECK_STR(b.s, "a [2J\tb  1m\xc3\xa9\xc2\xa0\xef\xbf\xbd\n");
	swt_sbuf_release(&b);
	swt_sbuf_printf(&b, "%d-%s", 42, "x");
	CHECK_INT(b.len, 4);
	CHECK_STR(b.s, "42-x");
	swt_sbuf_release(&b);
}

TEST(default_report_dir)
{
	const char *cases[][2] = {
		{ "cap.db", "cap-report" },
		{ "out/demo/sample.db", "out/demo/sample-report" },
		{ "dir/x", "dir/x-report" },
		{ "x.db/", "x-report" },
		{ "a/.db", "a/.db-report" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = swt_report_default_dir(cases[i][0]);

		CHECK_STR(d, cases[i][1]);
		free(d);
	}
}

/* A figure with every degenerate thing a report can meet. */
static int draw_degenerate(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const cats[] = { "only" };
	const int *calls = data;
	struct swt_chart_panel p = { 0 };
	double top, xs[] = { 0, 1, NAN, 3 }, ys[] = { NAN, NAN, 2, INFINITY };

	(void)err;
	(void)calls;
	top = swt_chart_header(c, "Degenerate", "nothing to see");
	swt_chart_legend(c, SWT_CHART_MARGIN, top, 400, NULL, 0);
	swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top, 500, 300, 2, 1, 10, 0, 0);
	p.title = "empty range";
	p.xa.label = "x";
	p.xa.lo = p.xa.hi = 7;
	p.ya.label = "y";
	p.ya.lo = p.ya.hi = NAN;
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	swt_chart_panel_line(c, &p, xs, ys, 4, swt_chart_color(0), 1, 1);
	swt_chart_panel_bar(c, &p, 0, 0, 0, 1, swt_chart_color(1), "x"); /* no bars in the group */
	swt_chart_panel_frame(c, &p);
	swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top, 500, 300, 2, 1, 10, 0, 1);
	p.title = "one category";
	p.xa = (struct swt_chart_axis){ .label = "c", .cats = cats, .ncats = 1 };
	p.ya = (struct swt_chart_axis){ .label = "v", .log = 1, .lo = 0.5, .hi = 0.5 };
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	swt_chart_panel_bar(c, &p, 0, 0, 1, 0.7, swt_chart_color(2), "0.7");
	swt_chart_panel_bar(c, &p, 0, 0, 1, NAN, swt_chart_color(2), "nan");
	swt_chart_meta_series(c, "s", 1);
	swt_chart_message(c, 600, 400, 5, 5, "a message in a box too small for it");
	swt_chart_footnote(c, "");
	return 0;
}

static int draw_failing(struct swt_chart *c, const void *data, struct swt_err *err)
{
	(void)data;
	swt_chart_header(c, "Fails", NULL);
	return swt_error(err, SWT_EDB, "the data went away");
}

TEST(render_degenerate_figure)
{
	struct swt_chart_out out;
	struct swt_chart_meta *meta = NULL;
	struct swt_err err = { 0 };
	char dir[64], path[128];
	struct stat sb;
	int calls = 0;

	snprintf(dir, sizeof(dir), "/tmp/swt-test-chart-%d", (int)getpid());
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK_INT(swt_chart_out_init(&out, dir, SWT_CHART_PNG | SWT_CHART_SVG, &err), 0);
	CHECK_INT(swt_chart_render(&out, "deg", draw_degenerate, &calls, &meta, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	CHECK(meta != NULL);
	if (meta) {
		CHECK_STR(meta->title, "Degenerate");
		CHECK_INT(meta->nr_panels, 2);
		CHECK_INT(meta->nr_series, 1);	/* recorded once, not once per format */
		CHECK_INT(meta->nr_messages, 1);
		CHECK(meta->nr_panels == 2 && meta->panels[1].categories &&
		      !strcmp(meta->panels[1].categories, "only"));
	}
	swt_chart_meta_free(meta);
	for (int i = 0; i < 3; i++) {
		static const char *const ext[] = { "png", "svg", "json" };

		snprintf(path, sizeof(path), "%s/deg.%s", dir, ext[i]);
		CHECK(stat(path, &sb) == 0 && sb.st_size > 100);
		unlink(path);
	}

	/* a failing chart reports its error and hands back nothing */
	meta = NULL;
	CHECK_INT(swt_chart_render(&out, "fail", draw_failing, NULL, &meta, &err), -SWT_EDB);
	CHECK_STR(err.msg, "the data went away");
	CHECK(meta == NULL);
	swt_chart_out_release(&out);

	/* an output directory that does not exist is an error naming the file */
	swt_err_clear(&err);
	CHECK_INT(swt_chart_out_init(&out, "/nonexistent/dir", SWT_CHART_SVG, &err), 0);
	CHECK_INT(swt_chart_render(&out, "deg", draw_degenerate, &calls, NULL, &err), -SWT_ENOENT);
	CHECK(strstr(err.msg, "'/nonexistent/dir/deg.svg'") != NULL);
	swt_chart_out_release(&out);
	CHECK_INT(swt_chart_out_init(&out, dir, 0, &err), -SWT_EUSAGE);
	rmdir(dir);
}

/*
 * Six bars over a third of the figure, as the policy chart draws them, the
 * last at 100 % on a share axis capped there: where its label goes.
 */
static struct {
	double x0, x1, top;	/* the 100 % bar's box (x extent, top edge) */
	double last_tick, max;	/* the y axis after fitting */
} capped;

static int draw_capped(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const cats[] = { "7:0 /dev/loop0" };
	static const double v[] = { 0.45, 0.59, 0.70, 0.59, 0.30, 1.0 };
	struct swt_chart_panel p = { 0 };
	double top, x0, x1, group, bw;

	(void)data;
	(void)err;
	top = swt_chart_header(c, "Capped", NULL);
	swt_chart_panel_grid(&p, SWT_CHART_MARGIN, top, c->width - 2 * SWT_CHART_MARGIN,
			     c->height - top - SWT_CHART_MARGIN, 3, 1, 28, 0, 0);
	p.title = "Accuracy";
	p.note = "dashed: traced kernel 40%";
	p.xa = (struct swt_chart_axis){ .label = "swap device", .cats = cats, .ncats = 1 };
	p.ya = (struct swt_chart_axis){ .label = "readahead pages used (%)", .fmt = SWT_FMT_PERCENT,
					.zero = 1, .hi = 1, .headroom = 1 };
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	for (size_t k = 0; k < 6; k++) {
		char label[16];

		snprintf(label, sizeof(label), "%.0f%%", v[k] * 100);
		swt_chart_panel_bar(c, &p, 0, k, 6, v[k], swt_chart_color(k), label);
	}
	swt_chart_panel_frame(c, &p);
	/* the last bar's box, as swt_chart_panel_bar() places it */
	swt_chart_panel_band(&p, 0, &x0, &x1);
	group = SWT_MIN((x1 - x0) * 0.8, 6.0 * 90);
	bw = group / 6;
	capped.x0 = x0 + (x1 - x0 - group) / 2 + bw * 5;
	capped.x1 = capped.x0 + bw;
	capped.top = swt_chart_panel_y(&p, 1.0);
	capped.last_tick = floor(p.ya.max / p.ya.step + 1e-9) * p.ya.step;
	capped.max = p.ya.max;
	return 0;
}

TEST(bar_label_at_capped_top)
{
	struct swt_chart_out out;
	struct swt_err err = { 0 };
	char dir[64], path[128];
	cairo_surface_t *s;
	size_t dark = 0;

	snprintf(dir, sizeof(dir), "/tmp/swt-test-chart-cap-%d", (int)getpid());
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK_INT(swt_chart_out_init(&out, dir, SWT_CHART_PNG, &err), 0);
	CHECK_INT(swt_chart_render(&out, "capped", draw_capped, NULL, NULL, &err), 0);
	swt_chart_out_release(&out);
	/* room above 100 %, but no tick past it */
	CHECK(capped.max > 1.0 + 1e-9);
	CHECK(capped.max - 1.0 < capped.last_tick);
	snprintf(path, sizeof(path), "%s/capped.png", dir);
	s = cairo_image_surface_create_from_png(path);
	CHECK_INT(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
		const unsigned char *px = cairo_image_surface_get_data(s);
		int stride = cairo_image_surface_get_stride(s);

		/* "100%" in dark text just above the bar (grid lines are light) */
		for (int y = (int)capped.top - 15; y < (int)capped.top - 2; y++) {
			for (int x = (int)capped.x0; x < (int)capped.x1; x++) {
				uint32_t p;

				if (y < 0)
					continue;
				memcpy(&p, px + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
				dark += ((p >> 16) & 0xff) < 100 && ((p >> 8) & 0xff) < 100 &&
					(p & 0xff) < 100;
			}
		}
		CHECK(dark > 20);
	}
	cairo_surface_destroy(s);
	unlink(path);
	snprintf(path, sizeof(path), "%s/capped.json", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * A panel as short as the policy chart's under a legend of long plugin
 * names: its y label wraps to fit the plot's height, and the room left of
 * the plot holds the wrapped label and the ticks side by side.  A panel as
 * narrow as one of request-sizes' eight: its x label wraps to the plot's
 * width, and the room below the plot holds the ticks and every line.
 */
static struct {
	double room;		/* from the panel's left edge to the plot's */
	double label_h;		/* the y label, wrapped as drawn */
	double line_h;		/* the y label on one line */
	double tick_w;		/* the widest y tick label */
	double below;		/* a narrow panel: from its plot's bottom to its own */
	double x_label_h;	/* its x label, wrapped as drawn */
	double tick_h;		/* its x tick labels */
} short_panel;

static int draw_short_panel(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const cats[] = { "7:0 /dev/loop0" };
	static const char *const sizes[] = { "1", "2", "3", "4", "5", "6", "7", "8" };
	struct swt_chart_panel p = { 0 };
	char buf[64];

	(void)data;
	(void)err;
	swt_chart_header(c, "Short", NULL);
	swt_chart_panel_grid(&p, SWT_CHART_MARGIN, 420, c->width - 2 * SWT_CHART_MARGIN, 240, 3,
			     1, 28, 0, 1);
	p.title = "Coverage";
	p.note = "dashed: traced kernel 0.0%";
	p.xa = (struct swt_chart_axis){ .label = "swap device", .cats = cats, .ncats = 1 };
	p.ya = (struct swt_chart_axis){ .label = "faults served by readahead (%)",
					.fmt = SWT_FMT_PERCENT, .zero = 1, .hi = 0.045 };
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	swt_chart_panel_frame(c, &p);
	short_panel.room = p.px - p.x;
	swt_chart_text_size(c, SWT_FONT_LABEL, p.ph, p.ya.label, NULL, &short_panel.label_h);
	swt_chart_text_size(c, SWT_FONT_LABEL, 0, p.ya.label, NULL, &short_panel.line_h);
	short_panel.tick_w = 0;
	for (double v = p.ya.min; v <= p.ya.max + p.ya.step * 1e-6; v += p.ya.step) {
		double w;

		swt_chart_axis_format(&p.ya, v, buf, sizeof(buf));
		swt_chart_text_size(c, SWT_FONT_TICK, 0, buf, &w, NULL);
		short_panel.tick_w = SWT_MAX(short_panel.tick_w, w);
	}
	/* one of eight panels of request-sizes, four to a row */
	memset(&p, 0, sizeof(p));
	swt_chart_panel_grid(&p, SWT_CHART_MARGIN, 100, c->width - 2 * SWT_CHART_MARGIN, 280, 4, 1,
			     32, 16, 0);
	p.title = "7:0 /dev/loop0";
	p.xa = (struct swt_chart_axis){ .label = "read request size (pages of 4 KiB)",
					.cats = sizes, .ncats = 8 };
	p.ya = (struct swt_chart_axis){ .label = "read requests", .log = 1, .lo = 0.5,
					.hi = 20000 };
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	swt_chart_panel_frame(c, &p);
	short_panel.below = p.y + p.h - (p.py + p.ph);
	swt_chart_text_size(c, SWT_FONT_LABEL, p.pw, p.xa.label, NULL, &short_panel.x_label_h);
	swt_chart_text_size(c, SWT_FONT_TICK, 0, "8", NULL, &short_panel.tick_h);
	return 0;
}

TEST(wrapped_axis_labels_clear_the_ticks)
{
	struct swt_chart_out out;
	struct swt_err err = { 0 };
	char dir[64], path[128];

	snprintf(dir, sizeof(dir), "/tmp/swt-test-chart-ylabel-%d", (int)getpid());
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK_INT(swt_chart_out_init(&out, dir, SWT_CHART_PNG, &err), 0);
	CHECK_INT(swt_chart_render(&out, "short", draw_short_panel, NULL, NULL, &err), 0);
	swt_chart_out_release(&out);
	/* the case at hand: the label does not fit on one line */
	CHECK(short_panel.label_h > 1.5 * short_panel.line_h);
	/* the ticks end 7 px left of the plot, as swt_chart_panel_axes() draws them */
	CHECK(short_panel.room >= short_panel.label_h + short_panel.tick_w + 7);
	/* and below a narrow plot, its ticks 6 px down, then the x label on its lines */
	CHECK(short_panel.below >= 6 + short_panel.tick_h + short_panel.x_label_h);
	snprintf(path, sizeof(path), "%s/short.png", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/short.json", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * A panel as short as the policy chart's three stacked under thirty
 * devices (about 60 px of plot): "readahead" is longer than the plot is
 * tall, and the y label was left out.  It stands across, after the title:
 * the figure drawn with it has more ink than the one without, by the
 * label's.  ya.across asks for that in a panel tall enough for the label
 * along it, which otherwise has it along, as before.
 */
struct titled_panel {
	const char *label;
	int across, tall;
	int drawn_across;	/* the panel's y_label_across, once fitted */
};

static int draw_titled_panel(struct swt_chart *c, const void *data, struct swt_err *err)
{
	static const char *const cats[] = { "A", "B", "C" };
	struct titled_panel *t = (struct titled_panel *)data;
	struct swt_chart_panel p = { 0 };

	(void)err;
	swt_chart_header(c, "Titled", NULL);
	swt_chart_panel_grid(&p, SWT_CHART_MARGIN, 100, c->width - 2 * SWT_CHART_MARGIN,
			     t->tall ? 400 : 150, 1, 1, 28, 16, 0);
	p.title = "Accuracy";
	p.note = "traced kernel: no readahead pages (swap_ra = 0)";
	p.xa = (struct swt_chart_axis){ .label = "swap device", .cats = cats, .ncats = 3 };
	p.ya = (struct swt_chart_axis){ .label = t->label, .fmt = SWT_FMT_PERCENT, .zero = 1,
					.hi = 0.2, .across = t->across };
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	swt_chart_panel_frame(c, &p);
	t->drawn_across = p.y_label_across;
	return 0;
}

/* Dark pixels of a PNG (text; grid lines and axes are lighter); -1 when unreadable. */
static long dark_pixels(const char *path)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	long dark = -1;

	if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
		const unsigned char *px = cairo_image_surface_get_data(s);
		int stride = cairo_image_surface_get_stride(s);

		dark = 0;
		for (int y = 0; y < cairo_image_surface_get_height(s); y++) {
			for (int x = 0; x < cairo_image_surface_get_width(s); x++) {
				uint32_t p;

				memcpy(&p, px + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
				dark += ((p >> 16) & 0xff) < 100 && ((p >> 8) & 0xff) < 100 &&
					(p & 0xff) < 100;
			}
		}
	}
	cairo_surface_destroy(s);
	return dark;
}

TEST(short_panel_y_label_stands_across)
{
	static const char label[] = "readahead pages used (%)";
	/* short, short without the label, tall asked across, the same without, tall */
	struct titled_panel t[] = {
		{ label, 0, 0, -1 }, { NULL, 0, 0, -1 }, { label, 1, 1, -1 }, { NULL, 1, 1, -1 },
		{ label, 0, 1, -1 },
	};
	struct swt_chart_out out;
	struct swt_err err = { 0 };
	char dir[64], path[128];
	long dark[5];

	snprintf(dir, sizeof(dir), "/tmp/swt-test-chart-across-%d", (int)getpid());
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK_INT(swt_chart_out_init(&out, dir, SWT_CHART_PNG, &err), 0);
	for (size_t i = 0; i < 5; i++) {
		CHECK_INT(swt_chart_render(&out, "titled", draw_titled_panel, &t[i], NULL, &err), 0);
		snprintf(path, sizeof(path), "%s/titled.png", dir);
		dark[i] = dark_pixels(path);
		CHECK(dark[i] > 0);
		unlink(path);
		snprintf(path, sizeof(path), "%s/titled.json", dir);
		unlink(path);
	}
	swt_chart_out_release(&out);
	/* "readahead pages used (%)" is a few hundred dark pixels */
	CHECK(dark[0] - dark[1] > 100);
	CHECK(dark[2] - dark[3] > 100);
	CHECK_INT(t[0].drawn_across, 1);
	CHECK_INT(t[2].drawn_across, 1);
	CHECK_INT(t[4].drawn_across, 0);
	rmdir(dir);
}

/*
 * A timeline panel of sixteen devices' (about 20 px of plot): its y ticks
 * 0, 500 and 1000 are 10 px apart, and their labels overlapped.  The labels
 * drawn keep the top value and stand a label's height apart; a tall panel
 * keeps every one.
 */
static struct {
	double short_labels[SWT_CHART_MAX_TICKS], short_y[SWT_CHART_MAX_TICKS];
	double short_top, tick_h;
	size_t nr_short, nr_short_ticks, nr_tall, nr_tall_ticks;
} stacked;

static int draw_stacked_panels(struct swt_chart *c, const void *data, struct swt_err *err)
{
	struct swt_chart_panel p = { 0 };
	double labels[SWT_CHART_MAX_TICKS];

	(void)data;
	(void)err;
	swt_chart_header(c, "Stacked", NULL);
	p.x = SWT_CHART_MARGIN;
	p.y = 100;
	p.w = c->width - 2 * SWT_CHART_MARGIN;
	p.h = 44;
	p.title = "7:0 /dev/loop0";
	p.xa = (struct swt_chart_axis){ .hi = 10, .hide_ticks = 1 };
	p.ya = (struct swt_chart_axis){ .label = "pages/s", .fmt = SWT_FMT_COUNT, .zero = 1,
					.hi = 1050 };
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	stacked.nr_short_ticks = (size_t)count_ticks(&p.ya);
	stacked.short_top = p.ya.max;
	stacked.nr_short = swt_chart_y_tick_labels(c, &p, stacked.short_labels);
	for (size_t i = 0; i < stacked.nr_short; i++)
		stacked.short_y[i] = swt_chart_panel_y(&p, stacked.short_labels[i]);
	swt_chart_text_size(c, SWT_FONT_TICK, 0, "0", NULL, &stacked.tick_h);
	p.y = 200;
	p.h = 400;
	swt_chart_panel_fit(c, &p);
	swt_chart_panel_axes(c, &p);
	stacked.nr_tall_ticks = (size_t)count_ticks(&p.ya);
	stacked.nr_tall = swt_chart_y_tick_labels(c, &p, labels);
	return 0;
}

TEST(stacked_panel_ticks_never_overlap)
{
	struct swt_chart_out out;
	struct swt_err err = { 0 };
	char dir[64], path[128];

	snprintf(dir, sizeof(dir), "/tmp/swt-test-chart-stacked-%d", (int)getpid());
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK_INT(swt_chart_out_init(&out, dir, SWT_CHART_PNG, &err), 0);
	CHECK_INT(swt_chart_render(&out, "stacked", draw_stacked_panels, NULL, NULL, &err), 0);
	swt_chart_out_release(&out);
	/* the case at hand: more ticks than labels fit */
	CHECK(stacked.nr_short_ticks >= 3);
	CHECK(stacked.nr_short >= 1);
	CHECK(stacked.nr_short < stacked.nr_short_ticks);
	CHECK(fabs(stacked.short_labels[0] - stacked.short_top) < 1e-9);
	for (size_t i = 1; i < stacked.nr_short; i++)
		CHECK(stacked.short_y[i] - stacked.short_y[i - 1] >= stacked.tick_h);
	CHECK_INT((int)stacked.nr_tall, (int)stacked.nr_tall_ticks);
	snprintf(path, sizeof(path), "%s/stacked.png", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stacked.json", dir);
	unlink(path);
	rmdir(dir);
}

CHECK_MAIN
