/*
 * swt_report_write() as a library: the run_defaults callback is called
 * exactly when no run is stored and its runs are drawn; its error stops
 * the report; an empty database (no capture, no devices) gives charts that
 * say so; unknown --run ids and policies are errors naming them.
 */
#include <cairo.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "report.h"
#include "report-int.h"

struct fixture {
	char db[64], dir[64];
	struct swt_store *st;
};

/* An empty database as ingest creates it, reopened writable. */
static void setup(struct fixture *f)
{
	struct swt_err err = { 0 };
	struct swt_store *st;

	snprintf(f->db, sizeof(f->db), "/tmp/swt-test-report-%d.db", (int)getpid());
	snprintf(f->dir, sizeof(f->dir), "/tmp/swt-test-report-%d", (int)getpid());
	CHECK_INT(swt_store_create(f->db, &st, &err), 0);
	CHECK_INT(swt_store_commit(st, &err), 0);
	swt_store_destroy(st);
	f->st = NULL;
	CHECK_INT(swt_store_open(f->db, 1, &f->st, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
}

static void teardown(struct fixture *f)
{
	static const char *const names[] = {
		"policy", "sweep", "request-sizes", "timeline", "heatmap", "ra-window", "layout",
	};
	char path[128];

	swt_store_destroy(f->st);
	unlink(f->db);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		static const char *const ext[] = { "png", "svg", "json" };

		for (int e = 0; e < 3; e++) {
			snprintf(path, sizeof(path), "%s/%s.%s", f->dir, names[i], ext[e]);
			unlink(path);
		}
	}
	snprintf(path, sizeof(path), "%s/index.html", f->dir);
	unlink(path);
	rmdir(f->dir);
}

struct defaults_ctx {
	int calls;
	int fail;
};

/*
 * Stands in for the replay engine: stores one run in a transaction it
 * leaves open (the callback's contract), or fails.
 */
static int store_one_run(struct swt_store *st, void *ctx, struct swt_err *err)
{
	struct defaults_ctx *d = ctx;

	d->calls++;
	/* called outside a transaction: its replaying must lock no one out */
	CHECK(sqlite3_get_autocommit(swt_store_db(st)));
	if (d->fail)
		return swt_error(err, SWT_EPLUGIN, "replay: policy 'x' failed");
	if (swt_store_exec(st, "BEGIN IMMEDIATE", err))
		return -1;
	return swt_store_exec(st,
		"INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults, misses,"
		" hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)"
		" VALUES (7, '2025-01-01T00:00:00Z', 'adaptive', 3, 100, 10, 8, 2, 20, 12, 2, 10,"
		" 9, 11)", err);
}

TEST(defaults_called_when_no_runs)
{
	struct fixture f;
	struct defaults_ctx ctx = { 0 };
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG, .run_defaults = store_one_run,
				     .run_defaults_ctx = &ctx };
	struct swt_report_summary sum;
	struct swt_err err = { 0 };
	char path[128], *json;

	setup(&f);
	o.dir = f.dir;
	CHECK_INT(swt_report_write(f.st, &o, &sum, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(ctx.calls, 1);
	CHECK_INT(sum.ran_defaults, 1);
	CHECK_INT(sum.runs, 1);
	/* one run: no page-cluster sweep; no layout runs: no layout chart */
	CHECK_INT(sum.charts, 5);
	CHECK_INT(sum.files, 5 * 2 + 1);	/* svg + json each, and the index */
	snprintf(path, sizeof(path), "%s/index.html", f.dir);
	CHECK_STR(sum.index, path);
	snprintf(path, sizeof(path), "%s/policy.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "\"name\": \"adaptive\""));
	free(json);

	/* runs stored now: the callback is not called again */
	CHECK_INT(swt_report_write(f.st, &o, &sum, &err), 0);
	CHECK_INT(ctx.calls, 1);
	CHECK_INT(sum.ran_defaults, 0);
	teardown(&f);
}

TEST(defaults_error_stops_the_report)
{
	struct fixture f;
	struct defaults_ctx ctx = { .fail = 1 };
	struct swt_report_opts o = { .run_defaults = store_one_run, .run_defaults_ctx = &ctx };
	struct swt_err err = { 0 };
	struct stat sb;

	setup(&f);
	o.dir = f.dir;
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), -SWT_EPLUGIN);
	CHECK_STR(err.msg, "replay: policy 'x' failed");
	CHECK(stat(f.dir, &sb) != 0);	/* nothing written */
	teardown(&f);
}

TEST(empty_database_says_so)
{
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_PNG | SWT_REPORT_SVG };
	struct swt_report_summary sum;
	struct swt_err err = { 0 };
	char path[128], *json;

	setup(&f);
	o.dir = f.dir;
	CHECK_INT(swt_report_write(f.st, &o, &sum, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(sum.charts, 6);
	CHECK_INT(sum.runs, 0);
	CHECK_INT(sum.ran_defaults, 0);
	snprintf(path, sizeof(path), "%s/timeline.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "no swap-ins or swap-outs in this capture"));
	free(json);
	snprintf(path, sizeof(path), "%s/request-sizes.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "no swap devices in this capture"));
	free(json);
	snprintf(path, sizeof(path), "%s/policy.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "no swap-in faults in this capture: nothing to replay"));
	free(json);
	teardown(&f);
}

TEST(unknown_run_and_policy)
{
	struct fixture f;
	struct defaults_ctx ctx = { 0 };
	const int64_t ids[] = { 7, 8 };
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG };
	struct swt_err err = { 0 };

	setup(&f);
	o.dir = f.dir;
	CHECK_INT(store_one_run(f.st, &ctx, &err), 0);
	o.run_ids = ids;
	o.nr_run_ids = 2;
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), -SWT_EUSAGE);
	CHECK(strstr(err.msg, "run 8 is not in") != NULL);
	swt_err_clear(&err);
	o.nr_run_ids = 1;
	o.policy = "vma";
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), -SWT_EUSAGE);
	CHECK(strstr(err.msg, "policy 'vma' has no selected replay run") != NULL);
	swt_err_clear(&err);
	o.policy = "adaptive";
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
	teardown(&f);
}

TEST(one_run_charts_show_a_run_that_read_ahead)
{
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG };
	struct swt_err err = { 0 };
	char path[128], *html, *json;

	setup(&f);
	o.dir = f.dir;
	/* 'none' comes first but reads no readahead page; 'auto' does */
	CHECK_INT(swt_store_exec(f.st,
		"INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults, misses,"
		" hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges) VALUES"
		" (3, 'x', 'none', 3, 100, 10, 10, 0, 10, 0, 0, 0, 10, 0),"
		" (4, 'x', 'auto', 3, 100, 10, 8, 2, 20, 12, 2, 10, 9, 11),"
		" (5, 'x', 'fixed', 3, 100, 10, 7, 3, 30, 23, 3, 20, 9, 21)", &err), 0);
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/index.html", f.dir);
	html = check_read_file(path, NULL);
	CHECK(html && strstr(html, "<tr class=\"chosen\"><td>4</td>"));
	free(html);
	snprintf(path, sizeof(path), "%s/request-sizes.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "traced vs simulated (auto, page-cluster 3)"));
	free(json);

	/* --policy wins, even for a policy without readahead */
	o.policy = "none";
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "traced vs simulated (none, page-cluster 3)"));
	free(json);
	teardown(&f);
}

/*
 * A plugin of a long file name with long parameters: request-sizes still
 * says which page-cluster it shows, and ra-window how many decisions, after
 * the name.
 */
TEST(long_policy_names_are_drawn_whole)
{
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG };
	struct swt_err err = { 0 };
	char path[128], *json;

	setup(&f);
	o.dir = f.dir;
	CHECK_INT(swt_store_exec(f.st,
		"INSERT INTO run (id, created, policy, params, page_cluster, cache_pages, faults,"
		" misses, hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests,"
		" read_merges) VALUES (4, 'x', '/p/' || printf('%.250c', 'L')"
		" || '.so', 'k=' || printf('%.300c', 'v'), 3, 100, 10, 8, 2, 20, 12, 2, 10, 9, 11);"
		" INSERT INTO run_histogram (run_id, partition, kind, bucket, count)"
		" VALUES (4, 0, 'ra_window', 8, 8)", &err), 0);
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/request-sizes.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "vvv), page-cluster 3)\""));
	free(json);
	snprintf(path, sizeof(path), "%s/ra-window.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "vvv) (8 decisions)\""));
	free(json);
	teardown(&f);
}

/*
 * The many-device charts' set-up: a 'fixed' run over n swap devices, 7:0
 * to 7:(n-1), each with the same counts, and its totals their sum.
 */
static void store_devices(struct fixture *f, int n)
{
	static const char runs[] =
		"INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults, misses,"
		" hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)"
		" VALUES (4, 'x', 'fixed', 3, 100, %d, %d, %d, %d, %d, %d, %d, %d, %d);"
		" WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d)"
		" INSERT INTO run_partition (run_id, partition, dev, faults, misses, hits,"
		" pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)"
		" SELECT 4, i, '7:' || i, 10, 8, 2, 20, 12, 2, 10, 9, 11 FROM n";
	struct swt_err err = { 0 };
	char sql[sizeof(runs) + 128];

	snprintf(sql, sizeof(sql), runs, 10 * n, 8 * n, 2 * n, 20 * n, 12 * n, 2 * n, 10 * n,
		 9 * n, 11 * n, n - 1);
	CHECK_INT(swt_store_exec(f->st, sql, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
}

/*
 * Sixteen devices: "7:10" is wider than its group, and was drawn a
 * character to a line.  The groups are lettered, the devices named in a
 * key above the panels; three devices keep their names.
 */
TEST(many_devices_are_lettered_with_a_key)
{
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG };
	struct swt_err err = { 0 };
	char path[128], *json;

	setup(&f);
	o.dir = f.dir;
	store_devices(&f, 16);
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/policy.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "\"A|B|C|D|E|F|G|H|I|J|K|L|M|N|O|P\""));
	CHECK(json && strstr(json, "\"Devices: A = 7:0; B = 7:1; C = 7:2; D = 7:3; E = 7:4; "
				   "F = 7:5; G = 7:6; H = 7:7; I = 7:8; J = 7:9; K = 7:10; "
				   "L = 7:11; M = 7:12; N = 7:13; O = 7:14; P = 7:15\""));
	free(json);
	teardown(&f);

	setup(&f);
	o.dir = f.dir;
	store_devices(&f, 3);
	CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/policy.json", f.dir);
	json = check_read_file(path, NULL);
	CHECK(json && strstr(json, "\"7:0|7:1|7:2\""));
	CHECK(json && !strstr(json, "Devices: "));
	free(json);
	teardown(&f);
}

/*
 * The bands of rows of a PNG that hold a pixel of colour rgb (0xRRGGBB):
 * a bar chart's panels side by side share one band of bars, panels one
 * above another have one each.  -1 when the PNG cannot be read.
 */
static int row_bands_with(const char *path, uint32_t rgb)
{
	cairo_surface_t *img = cairo_image_surface_create_from_png(path);
	int bands = -1, in_band = 0;

	if (cairo_surface_status(img) == CAIRO_STATUS_SUCCESS) {
		const unsigned char *data = cairo_image_surface_get_data(img);
		int stride = cairo_image_surface_get_stride(img);

		bands = 0;
		for (int y = 0; y < cairo_image_surface_get_height(img); y++) {
			const uint32_t *row = (const uint32_t *)(const void *)(data + y * stride);
			int has = 0;

			for (int x = 0; x < cairo_image_surface_get_width(img) && !has; x++)
				has = (row[x] & 0xffffff) == rgb;
			bands += has && !in_band;
			in_band = has;
		}
	}
	cairo_surface_destroy(img);
	return bands;
}

/*
 * Thirty devices: past Z the groups are AA, AB..., which beside two other
 * panels were wider than their groups and drawn a letter to a line ("A"
 * over "A", read as two devices).  The panels then stand one above another,
 * each the chart's width: fixed's orange bars are in three bands of rows
 * (and the legend's swatch in a fourth), not in one.
 */
TEST(devices_past_z_are_lettered_aa_and_fit)
{
	static const struct {
		int devices, bands;
	} cases[] = { { 30, 4 }, { 16, 2 } };
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_PNG };
	struct swt_err err = { 0 };
	char path[128], *json;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = cases[i].devices;

		setup(&f);
		o.dir = f.dir;
		store_devices(&f, n);
		CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
		if (err.code)
			fprintf(stderr, "%s\n", err.msg);
		snprintf(path, sizeof(path), "%s/policy.json", f.dir);
		json = check_read_file(path, NULL);
		CHECK(json != NULL);
		if (n == 30) {
			CHECK(json && strstr(json, "|X|Y|Z|AA|AB|AC|AD\""));
			CHECK(json && strstr(json, "; Z = 7:25; AA = 7:26; AB = 7:27; AC = 7:28; "
						   "AD = 7:29\""));
		}
		free(json);
		snprintf(path, sizeof(path), "%s/policy.png", f.dir);
		CHECK_INT(row_bands_with(path, 0xe69f00), cases[i].bands);
		teardown(&f);
	}
}

/*
 * A pixel of text, its edges included (a stem half a pixel off the grid
 * is mid grey); grid lines are lighter, bars coloured.
 */
static int is_ink(const unsigned char *data, int stride, int x, int y)
{
	uint32_t px;

	memcpy(&px, data + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
	return ((px >> 16) & 0xff) < 160 && ((px >> 8) & 0xff) < 160 && (px & 0xff) < 160;
}

static int is_rgb(const unsigned char *data, int stride, int x, int y, uint32_t rgb)
{
	uint32_t px;

	memcpy(&px, data + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
	return (px & 0xffffff) == rgb;
}

/*
 * Under each bar of the PNG's lowest bars of colour rgb (the bottom
 * panel's), the lines of text within the bar's width less 2 px a side,
 * down to depth px below the bars' foot: a label standing whole is one
 * line, a label wrapped a letter a line two.  Bars under the middle third,
 * where the x label is, are left out.  Into *bars the bars looked at,
 * *missing those with no line of text, *split those with more than one.
 */
#define LINE_GAP 3	/* px without ink inside a letter; wrapped lines are further apart */

static void label_lines_under_bars(const char *path, uint32_t rgb, int depth, int *bars,
				   int *missing, int *split)
{
	cairo_surface_t *img = cairo_image_surface_create_from_png(path);
	const unsigned char *data;
	int stride, w, h, foot = -1;

	*bars = *missing = *split = 0;
	if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS)
		goto out;
	data = cairo_image_surface_get_data(img);
	stride = cairo_image_surface_get_stride(img);
	w = cairo_image_surface_get_width(img);
	h = cairo_image_surface_get_height(img);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w && foot < y; x++)
			if (is_rgb(data, stride, x, y, rgb))
				foot = y;
	for (int x = 0; foot >= 0 && x < w; x++) {
		int x0 = x, lines = 0, last_ink = -100;

		if (!is_rgb(data, stride, x, foot, rgb))
			continue;
		while (x < w && is_rgb(data, stride, x, foot, rgb))
			x++;
		if (x0 > w / 3 && x < 2 * w / 3)
			continue;
		/* below the axis line */
		for (int y = foot + 3; y <= foot + depth && y < h; y++) {
			int ink = 0;

			for (int ix = x0 + 2; ix < x - 2 && !ink; ix++)
				ink = is_ink(data, stride, ix, y);
			/* a line of text, less than a line's gap inside a letter (G, S) */
			lines += ink && y - last_ink > LINE_GAP;
			if (ink)
				last_ink = y;
		}
		(*bars)++;
		*missing += lines == 0;
		*split += lines > 1;
	}
out:
	cairo_surface_destroy(img);
}

/*
 * Past about 44 devices two letters were wider than a group even of the
 * chart's whole width, and wrapped a letter a line again ("A" over "B"
 * for AB).  Up to 64 devices every letter stands whole under its bar, in
 * staggered rows: one line of text under each bar, none missing.
 */
TEST(two_letter_devices_stand_whole_up_to_64)
{
	static const int devices[] = { 30, 50, 64 };
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_PNG };
	struct swt_err err = { 0 };
	char path[128];

	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		int bars, missing, split;

		setup(&f);
		o.dir = f.dir;
		store_devices(&f, devices[i]);
		CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
		if (err.code)
			fprintf(stderr, "%s\n", err.msg);
		snprintf(path, sizeof(path), "%s/policy.png", f.dir);
		/* the device letters, above the footnote */
		label_lines_under_bars(path, 0xe69f00, 44, &bars, &missing, &split);
		CHECK(bars > devices[i] / 2);
		CHECK_INT(missing, 0);
		CHECK_INT(split, 0);
		teardown(&f);
	}
}

/*
 * A run that replayed no faults: its bars say n/a, and a note says why
 * (nothing did); a run with faults has no such note.
 */
TEST(zero_fault_runs_say_why_they_are_na)
{
	static const char runs[] =
		"INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults, misses,"
		" hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)"
		" VALUES (4, 'x', 'fixed', 3, 100, %d, 0, %d, 0, 0, 0, 0, 0, 0)";
	static const char note[] = "\"n/a: no swap faults replayed on that device by that "
				   "policy, so no accuracy, coverage or pages read per fault\"";
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG };
	struct swt_err err = { 0 };
	char path[128], sql[sizeof(runs) + 32], *json;

	for (int faults = 0; faults <= 5; faults += 5) {
		setup(&f);
		o.dir = f.dir;
		snprintf(sql, sizeof(sql), runs, faults, faults);
		CHECK_INT(swt_store_exec(f.st, sql, &err), 0);
		CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
		snprintf(path, sizeof(path), "%s/policy.json", f.dir);
		json = check_read_file(path, NULL);
		CHECK(json != NULL);
		CHECK_INT(json && strstr(json, note) != NULL, faults == 0);
		free(json);
		teardown(&f);
	}
}

/*
 * A run that read nothing ahead (none, or any policy at page-cluster 0)
 * has coverage but no accuracy: its accuracy bar says n/a, and a note says
 * why; a run that read ahead, or one over no faults (which has its own
 * note), has no such note.
 */
TEST(runs_reading_nothing_ahead_say_why_accuracy_is_na)
{
	static const struct {
		const char *policy;
		int pc, faults, misses, pages_read, ra_pages, ra_hits, noted;
	} cases[] = {
		{ "none", 3, 10, 10, 10, 0, 0, 1 },
		{ "fixed", 0, 10, 10, 10, 0, 0, 1 },
		{ "fixed", 3, 10, 8, 20, 12, 2, 0 },
		{ "fixed", 3, 0, 0, 0, 0, 0, 0 },
	};
	static const char runs[] =
		"INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults, misses,"
		" hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)"
		" VALUES (4, 'x', '%s', %d, 100, %d, %d, %d, %d, %d, %d, %d, %d, 0)";
	static const char note[] = "\"Accuracy n/a: no pages read ahead on that device by that "
				   "policy (none reads none, nor does any policy at page-cluster "
				   "0), so no accuracy\"";
	struct fixture f;
	struct swt_report_opts o = { .formats = SWT_REPORT_SVG };
	struct swt_err err = { 0 };
	char path[128], sql[sizeof(runs) + 128], *json;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(&f);
		o.dir = f.dir;
		snprintf(sql, sizeof(sql), runs, cases[i].policy, cases[i].pc, cases[i].faults,
			 cases[i].misses, cases[i].faults - cases[i].misses, cases[i].pages_read,
			 cases[i].ra_pages, cases[i].ra_hits, cases[i].ra_pages - cases[i].ra_hits,
			 cases[i].misses);
		CHECK_INT(swt_store_exec(f.st, sql, &err), 0);
		CHECK_INT(swt_report_write(f.st, &o, NULL, &err), 0);
		if (err.code)
			fprintf(stderr, "%s\n", err.msg);
		snprintf(path, sizeof(path), "%s/policy.json", f.dir);
		json = check_read_file(path, NULL);
		CHECK(json != NULL);
		CHECK_INT(json && strstr(json, note) != NULL, cases[i].noted);
		free(json);
		teardown(&f);
	}
}

/* every pair: b covers a in every panel */
static int covers_all(const void *arg, size_t a, size_t b, int m)
{
	(void)arg;
	(void)a;
	(void)b;
	(void)m;
	return 2;
}

/*
 * A note with more hidden lines than its buffer names ends with how many
 * more there are: it stopped at the first that did not fit, and the lines
 * after it went unmentioned (leap's, under leap (history=128), with two
 * long plugin paths before it).
 */
TEST(hidden_note_counts_what_it_cannot_name)
{
	static const char *const panels[] = { "Coverage" };
	const char *keys[6];
	char names[6][120], note[400];

	for (int i = 0; i < 6; i++) {
		snprintf(names[i], sizeof(names[i]), "/a/long/directory/for/plugins/number-%d/"
			 "libswt-policy-with-a-long-name-%d.so", i, i);
		keys[i] = names[i];
	}
	swt_report_hidden_note(6, keys, 1, panels, covers_all, NULL, "page-cluster", note,
			       sizeof(note));
	CHECK(strlen(note) < sizeof(note));
	/* 5 lines lie under the last: the first is named, 4 are counted */
	CHECK(!strncmp(note, keys[0], strlen(keys[0])));
	CHECK(strstr(note, " lies under /a/long/directory/for/plugins/number-5/") != NULL);
	CHECK(strstr(note, "number-1") == NULL);
	CHECK(strstr(note, "; 4 more lines lie under others (--run chooses runs)") != NULL);
	/* a buffer too small to name any: the count alone */
	swt_report_hidden_note(2, keys, 1, panels, covers_all, NULL, "page-cluster", note, 90);
	CHECK_STR(note, "1 more line lies under others (--run chooses runs)");
	/* none hidden: "" */
	swt_report_hidden_note(1, keys, 1, panels, covers_all, NULL, "page-cluster", note,
			       sizeof(note));
	CHECK_STR(note, "");
}

CHECK_MAIN

/*
 * Runs of one layout at one-page device offsets (what --layout N:spread
 * stores) group as that layout; a used= count of the user's own choice
 * makes a layout of its own (it was averaged in as one more "offset").
 */
TEST(layout_groups_are_one_page_offsets_only)
{
	char key[64];

	swt_report_layout_group("4:used=0,1,0,1", key, sizeof(key));
	CHECK_STR(key, "4");
	swt_report_layout_group("4:ssd:used=1", key, sizeof(key));
	CHECK_STR(key, "4:ssd");
	swt_report_layout_group("4:used=30000,0,0,0", key, sizeof(key));
	CHECK_STR(key, "4:used=30000,0,0,0");
	swt_report_layout_group("4:used=10,0,0,0:ssd", key, sizeof(key));
	CHECK_STR(key, "4:used=10,0,0,0:ssd");
	CHECK(!swt_report_same_layout("4", "4:used=30000,0,0,0"));
	CHECK(swt_report_same_layout("4", "4:used=0,0,0,0"));
}
