/*
 * What every chart of the report needs, read once: the capture's facts and
 * kernel counters, the traced swap areas (partitions), the replay runs
 * with legend names that tell them apart, and the page-cluster and run
 * that the one-setting charts show.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "strbuf.h"
#include "swaptrace/policy.h"
#include "util.h"

double swt_report_ratio(int64_t num, int64_t den)
{
	if (num == SWT_NULL || den == SWT_NULL || den <= 0)
		return NAN;
	return (double)num / (double)den;
}

struct swt_chart_legend_item swt_report_reference_item(struct swt_chart *c, const char *label,
							enum swt_chart_mark_kind mark,
							const double *ref, size_t n)
{
	int64_t points = 0;

	for (size_t m = 0; m < n; m++)
		points += !isnan(ref[m]);
	swt_chart_meta_series(c, label, points);
	return (struct swt_chart_legend_item){ label, SWT_RGB_BLACK, mark };
}

void swt_report_no_events_message(const struct swt_report_ctx *rc, int have_parts,
				  const char *why_not, char *msg, size_t size)
{
	if (!rc->swap_ins && !rc->swap_outs)
		snprintf(msg, size, "no swap-ins or swap-outs in this capture");
	else if (!have_parts)
		snprintf(msg, size, "no swap devices in this capture");
	else
		snprintf(msg, size, rc->swap_ins + rc->swap_outs == 1 ?
			 "only one swap event in this capture: %s" :
			 "all swap events of this capture at one instant: %s", why_not);
}

const char *swt_report_no_runs(const struct swt_report_ctx *rc)
{
	if (rc->nr_runs)
		return SWT_REPORT_NO_TRACED_RUNS;
	/* replay would refuse: pointing at it would not help */
	return rc->nothing_to_replay[0] ? rc->nothing_to_replay : SWT_REPORT_NO_RUNS;
}

struct swt_report_time_axis swt_report_time_axis(int64_t span_ns)
{
	/* a day of swapping read in seconds is 86 400 of them: not a scale anyone reads */
	if (span_ns > 5 * 3600 * 1000000000LL)
		return (struct swt_report_time_axis){ 3600, "time since capture start (h)" };
	if (span_ns > 20 * 60 * 1000000000LL)
		return (struct swt_report_time_axis){ 60, "time since capture start (min)" };
	return (struct swt_report_time_axis){ 1, "time since capture start (s)" };
}

char *swt_report_run_desc(const struct swt_report_run *r)
{
	char *desc;

	if (asprintf(&desc, "%s at page-cluster %d (run #%lld)", r->label, r->page_cluster,
		     (long long)r->id) < 0)
		return NULL;
	return desc;
}

void swt_report_series_colors(const size_t *key_colors, size_t n, struct swt_chart_rgb *out)
{
	int taken[SWT_PALETTE_SIZE] = { 0 };

	for (size_t k = 0; k < n; k++) {
		size_t c = key_colors[k] % SWT_PALETTE_SIZE;

		for (size_t free = 0; taken[c] && free < SWT_PALETTE_SIZE; free++)
			c = free;
		taken[c] = 1;
		out[k] = swt_chart_color(c);
	}
}

int swt_report_keys_have(const struct swt_report_keys *k, const char *key)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->keys[i], key))
			return 1;
	return 0;
}

void swt_report_pick_keys(const struct swt_report_ctx *rc,
			  int (*keep)(const void *arg, const struct swt_report_run *r),
			  const void *arg, const char *where, struct swt_report_keys *k)
{
	char names[300] = "";
	size_t at = 0;

	memset(k, 0, sizeof(*k));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < rc->nr_runs; i++) {
			const struct swt_report_run *r = &rc->runs[i];
			size_t j;

			if (!keep(arg, r) || (!pass && !r->key_cited) ||
			    swt_report_keys_have(k, r->key))
				continue;
			if (k->n < SWT_REPORT_MAX_SERIES) {
				k->keys[k->n++] = r->key;
				continue;
			}
			/* a key left out: counted and named once */
			for (j = 0; j < i && !(keep(arg, &rc->runs[j]) &&
					       !strcmp(rc->runs[j].key, r->key)); j++)
				;
			if (j < i)
				continue;
			k->more++;
			if (at < sizeof(names))
				at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s",
						       at ? ", " : "", r->key);
		}
	}
	if (at >= sizeof(names))
		memcpy(names + sizeof(names) - 4, "...", 4);
	if (k->more)
		snprintf(k->note, sizeof(k->note), "%zu more polic%s%s %s not shown (%s); pick runs "
			 "with --run", k->more, k->more == 1 ? "y" : "ies", where,
			 k->more == 1 ? "is" : "are", names);
}

const struct swt_report_part *swt_report_part(const struct swt_report_ctx *rc, int64_t id)
{
	for (size_t i = 0; i < rc->nr_parts; i++)
		if (rc->parts[i].id == id)
			return &rc->parts[i];
	return NULL;
}

static void copy_text(char *dst, size_t size, sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	snprintf(dst, size, "%s", t ? (const char *)t : "");
}

static char *dup_text(sqlite3_stmt *s, int col, int *oom)
{
	const unsigned char *t = sqlite3_column_text(s, col);
	char *d;

	if (!t)
		return NULL;
	d = swt_strdup((const char *)t);
	if (!d)
		*oom = 1;
	return d;
}

static double column_real(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

/*
 * What makes a run a parameter set, as its legend names it: its parameters
 * (r->tuned) and the model's settings other than a plain replay's, named
 * as the replay options that set them (r->model_settings, "" when none).
 * 0, or -1 out of memory.
 */
static int run_settings(const struct swt_report_ctx *rc, struct swt_report_run *r)
{
	char inactive[48] = "", request[48] = "";

	if (!isnan(r->inactive_fraction))
		snprintf(inactive, sizeof(inactive), "--inactive-fraction %g", r->inactive_fraction);
	if (r->max_request_kib != rc->request_limit_kib)
		snprintf(request, sizeof(request), "--max-request-kib %lld",
			 (long long)r->max_request_kib);
	if (asprintf(&r->model_settings, "%s%s%s", inactive, inactive[0] && request[0] ? ", " : "",
		     request) < 0) {
		r->model_settings = NULL;
		return -1;
	}
	if (asprintf(&r->settings, "%s%s%s", r->tuned ? r->params : "",
		     r->tuned && r->model_settings[0] ? ", " : "", r->model_settings) < 0) {
		r->settings = NULL;
		return -1;
	}
	return 0;
}

static int64_t vmstat(struct swt_store *st, const char *name)
{
	char sql[128];
	int64_t v;

	snprintf(sql, sizeof(sql), "SELECT delta FROM vmstat WHERE name = '%s'", name);
	v = swt_store_query_int(st, sql, SWT_NULL);
	/*
	 * A delta below 0 or past 2^62 is no counter's over a capture (an
	 * edited row): not recorded, so that the charts' sums of two deltas
	 * (pgmajfault + swap_ra_hit) cannot overflow
	 */
	return v < 0 || v > ((int64_t)1 << 62) ? SWT_NULL : v;
}

static int load_capture(struct swt_report_ctx *rc, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc_step;

	rc->page_cluster = -1;
	rc->first_ns = rc->last_ns = SWT_NULL;
	ret = swt_store_prepare(rc->st,
				"SELECT coalesce(name, ''), coalesce(kernel, ''), page_cluster,"
				" first_ns, last_ns FROM capture", &s, err);
	if (ret)
		return ret;
	rc_step = sqlite3_step(s);
	if (rc_step == SQLITE_ROW) {
		copy_text(rc->name, sizeof(rc->name), s, 0);
		copy_text(rc->kernel, sizeof(rc->kernel), s, 1);
		/* the kernel takes 0..31; read whole, 2^32 + 3 is not page-cluster 3 */
		if (sqlite3_column_type(s, 2) != SQLITE_NULL && sqlite3_column_int64(s, 2) >= 0 &&
		    sqlite3_column_int64(s, 2) <= 31)
			rc->page_cluster = sqlite3_column_int(s, 2);
		if (sqlite3_column_type(s, 3) != SQLITE_NULL)
			rc->first_ns = sqlite3_column_int64(s, 3);
		if (sqlite3_column_type(s, 4) != SQLITE_NULL)
			rc->last_ns = sqlite3_column_int64(s, 4);
	}
	sqlite3_finalize(s);
	if (rc_step != SQLITE_ROW && rc_step != SQLITE_DONE)
		return swt_store_sql_error(rc->st, err, "reading the capture");
	/* a capture row without times: take them from the swap events */
	if (rc->first_ns == SWT_NULL)
		rc->first_ns = swt_store_query_int(rc->st,
			"SELECT min(t) FROM (SELECT min(ts) AS t FROM swap_in"
			" UNION ALL SELECT min(ts) FROM swap_out)", SWT_NULL);
	if (rc->last_ns == SWT_NULL)
		rc->last_ns = swt_store_query_int(rc->st,
			"SELECT max(t) FROM (SELECT max(ts) AS t FROM swap_in"
			" UNION ALL SELECT max(ts) FROM swap_out)", SWT_NULL);
	/* trace clocks count up from boot: anything else is a hand-edited capture row */
	if (rc->first_ns < 0 || rc->last_ns < 0 || rc->last_ns < rc->first_ns)
		rc->first_ns = rc->last_ns = SWT_NULL;
	rc->multigen_lru = rc->opts->multigen_lru ?
			   rc->opts->multigen_lru(rc->st, rc->lru_gen, sizeof(rc->lru_gen)) : -1;
	rc->swap_ins = swt_store_query_int(rc->st, "SELECT count(*) FROM swap_in", 0);
	rc->swap_outs = swt_store_query_int(rc->st, "SELECT count(*) FROM swap_out", 0);
	if (rc->opts->nothing_to_replay) {
		const char *why = rc->opts->nothing_to_replay(rc->st);

		if (why)
			snprintf(rc->nothing_to_replay, sizeof(rc->nothing_to_replay),
				 "%s: nothing to replay", why);
	} else if (!rc->swap_ins) {
		snprintf(rc->nothing_to_replay, sizeof(rc->nothing_to_replay), "%s",
			 SWT_REPORT_NOTHING_TO_REPLAY);
	}
	rc->no_fault_addresses = rc->swap_ins > 0 &&
		!swt_store_query_int(rc->st, "SELECT EXISTS (SELECT 1 FROM swap_in"
				     " WHERE address IS NOT NULL)", 1);
	/*
	 * auto as replay/policy-auto.c decides it: VMA readahead unless an area
	 * is rotational, or not known not to be
	 */
	rc->auto_takes_vma = swt_store_query_int(rc->st,
		"SELECT (SELECT vma_ra_enabled FROM capture) = 1 AND EXISTS (SELECT 1 FROM swap_area)"
		" AND NOT EXISTS (SELECT 1 FROM swap_area WHERE rotational IS NOT 0)", 0) == 1;
	/* as swt_replay_default_cache_pages: the limit, else the working set, in whole pages */
	rc->page_size = swt_store_query_int(rc->st, "SELECT page_size FROM capture", 4096);
	if (rc->page_size < 512 || rc->page_size > (1 << 24))
		rc->page_size = 4096;
	if (rc->page_size >= 1048576)
		snprintf(rc->page_unit, sizeof(rc->page_unit), "%lld MiB",
			 (long long)(rc->page_size >> 20));
	else if (rc->page_size >= 1024)
		snprintf(rc->page_unit, sizeof(rc->page_unit), "%lld KiB",
			 (long long)(rc->page_size >> 10));
	else
		snprintf(rc->page_unit, sizeof(rc->page_unit), "%lld B", (long long)rc->page_size);
	{
		int recorded;

		/* replay's default, as swt_replay_input_load takes it */
		rc->request_limit_kib = swt_store_request_limit_kib(rc->st, &recorded);
	}
	rc->default_cache_pages = swt_store_query_int(rc->st,
		"SELECT CASE WHEN mem_limit_bytes > 0 THEN mem_limit_bytes"
		" WHEN working_set_bytes > 0 THEN working_set_bytes END / page_size FROM capture", -1);
	if (rc->default_cache_pages == SWT_NULL || rc->default_cache_pages <= 0)
		rc->default_cache_pages = -1;
	rc->vm_pswpin = vmstat(rc->st, "pswpin");
	rc->vm_pgmajfault = vmstat(rc->st, "pgmajfault");
	rc->vm_swap_ra = vmstat(rc->st, "swap_ra");
	rc->vm_swap_ra_hit = vmstat(rc->st, "swap_ra_hit");
	rc->vm_swpin_zero = vmstat(rc->st, "swpin_zero");
	rc->vm_zswpin = vmstat(rc->st, "zswpin");
	return 0;
}

static int load_parts(struct swt_report_ctx *rc, struct swt_err *err)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int ret, step;

	/* swap areas as ingested; without any, the areas the swap events name */
	ret = swt_store_prepare(rc->st,
		"SELECT a.id, a.dev, d.name, coalesce(a.path, d.path), a.slots FROM swap_area a"
		"  LEFT JOIN device d ON d.dev = a.dev"
		" UNION ALL"
		" SELECT e.area_id, min(e.dev), NULL, NULL, NULL FROM"
		"  (SELECT area_id, dev FROM swap_in UNION SELECT area_id, dev FROM swap_out) e"
		" WHERE NOT EXISTS (SELECT 1 FROM swap_area) GROUP BY e.area_id"
		" ORDER BY 1", &s, err);
	if (ret)
		return ret;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct swt_report_part *p;
		if (swt_grow((void **)&rc->parts, &cap, rc->nr_parts + 1, sizeof(*rc->parts))) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		p = &rc->parts[rc->nr_parts++];
		p->id = sqlite3_column_int64(s, 0);
		p->dev = sqlite3_column_int64(s, 1);
		if (sqlite3_column_type(s, 2) != SQLITE_NULL)
			copy_text(p->name, sizeof(p->name), s, 2);
		else
			swt_dev_format((uint32_t)p->dev, p->name, sizeof(p->name));
		copy_text(p->path, sizeof(p->path), s, 3);
		p->slots = swt_column_int(s, 4, SWT_NULL);
		snprintf(p->label, sizeof(p->label), "%s%s%s", p->name, p->path[0] ? " " : "",
			 p->path);
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return swt_store_sql_error(rc->st, err, "reading swap areas");
	/* areas sharing a device (partitions given with --swap, files on one disk): by id too */
	for (size_t i = 0; i < rc->nr_parts; i++) {
		struct swt_report_part *p = &rc->parts[i];
		int shared = 0;

		for (size_t j = 0; j < rc->nr_parts; j++)
			shared |= j != i && rc->parts[j].dev == p->dev;
		if (!shared)
			continue;
		snprintf(p->name + strlen(p->name), sizeof(p->name) - strlen(p->name), " area %lld",
			 (long long)p->id);
		snprintf(p->label, sizeof(p->label), "%s%s%s", p->name, p->path[0] ? " " : "",
			 p->path);
	}
	return 0;
}

/*
 * Request row q is a read on device ?1 with an issue and a completion
 * traced.  Swap-ins' requests are reached from swap_in's rows, by key,
 * rather than tested against a list of its keys: SQLite builds such a list
 * as a temporary index, which was most of a report's allocations (and,
 * under the sanitizers, of its time).
 */
#define READ_REQUEST(q) \
	q ".dev = ?1 AND " q ".write = 0 AND " q ".pc = 0" \
	" AND " q ".issue_ns IS NOT NULL AND " q ".complete_ns IS NOT NULL"

/* A row of either query: a key and two values. */
struct read_row {
	int64_t id, a, b;
};

static int cmp_read_row(const void *x, const void *y)
{
	int64_t a = ((const struct read_row *)x)->id, b = ((const struct read_row *)y)->id;

	return (a > b) - (a < b);
}

static int cmp_read_row_b(const void *x, const void *y)
{
	int64_t a = ((const struct read_row *)x)->b, b = ((const struct read_row *)y)->b;

	return (a > b) - (a < b);
}

/*
 * The rows of a query on device dev, sorted by key, one a key; rows whose
 * b is NULL (a bio queued before the trace: no Q2C) left out, as SQL's
 * avg leaves them.  0, or an error.
 */
static int read_rows(struct swt_report_ctx *rc, const char *sql, int64_t dev,
		     struct read_row **rows, size_t *nr, struct swt_err *err)
{
	sqlite3_stmt *s;
	size_t n = 0, cap = 0, kept = 0;
	int ret, step;

	*rows = NULL;
	ret = swt_store_prepare(rc->st, sql, &s, err);
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, dev);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);

		/* a request's (bio's) pages mostly come one after another: kept once */
		if (sqlite3_column_type(s, 2) == SQLITE_NULL || (n && (*rows)[n - 1].id == id))
			continue;
		if (swt_grow((void **)rows, &cap, n + 1, sizeof(**rows))) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		(*rows)[n++] = (struct read_row){ id, sqlite3_column_int64(s, 1),
						  sqlite3_column_int64(s, 2) };
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return swt_store_sql_error(rc->st, err, "reading traced swap-in reads");
	if (n)
		qsort(*rows, n, sizeof(**rows), cmp_read_row);
	for (size_t i = 0; i < n; i++)
		if (!kept || (*rows)[i].id != (*rows)[kept - 1].id)
			(*rows)[kept++] = (*rows)[i];
	*nr = kept;
	return 0;
}

/*
 * A device's swap-in reads: count, size, D2C average, median, p99 and Q2C,
 * of the requests that carried a page a task faulted on (swapoff's reads
 * wait for no fault).  The averages sum in key order, as SQL's avg did
 * when these were one query.
 */
static int load_device_reads(struct swt_report_ctx *rc, struct swt_report_reads *r,
			     struct swt_err *err)
{
	static const char reads_sql[] =
		"SELECT q.id, q.nr_sectors, q.complete_ns - q.issue_ns"
		" FROM (SELECT request_id FROM swap_in WHERE " SWT_NOT_SWAPOFF_SQL ") s"
		" JOIN request q ON q.id = s.request_id WHERE " READ_REQUEST("q");
	/* Q2C per bio, as btt counts it, of the bios that carried a fault's page */
	static const char bios_sql[] =
		"SELECT b.id, q.id, q.complete_ns - b.queue_ns"
		" FROM (SELECT bio_id FROM swap_in WHERE " SWT_NOT_SWAPOFF_SQL ") s"
		" JOIN bio b ON b.id = s.bio_id JOIN request q ON q.id = b.request_id"
		" WHERE " READ_REQUEST("q");
	int64_t dev = rc->parts[r->part].dev;
	struct read_row *reads = NULL, *bios = NULL;
	size_t nr_reads = 0, nr_bios = 0, nr_q2c = 0;
	double sectors = 0, d2c_ms = 0, q2c_ms = 0;
	int ret;

	r->requests = 0;
	r->avg_kib = r->d2c_avg_ms = r->d2c_median_ms = r->d2c_p99_ms = r->q2c_avg_ms = NAN;
	ret = read_rows(rc, reads_sql, dev, &reads, &nr_reads, err);
	if (ret)
		goto out;
	ret = read_rows(rc, bios_sql, dev, &bios, &nr_bios, err);
	if (ret || !nr_reads)
		goto out;
	for (size_t i = 0; i < nr_reads; i++) {
		sectors += (double)reads[i].a;
		d2c_ms += (double)reads[i].b / 1e6;
	}
	r->requests = (int64_t)nr_reads;
	r->avg_kib = sectors / (double)nr_reads / 2.0;
	r->d2c_avg_ms = d2c_ms / (double)nr_reads;
	for (size_t i = 0; i < nr_bios; i++) {
		struct read_row key = { .id = bios[i].a };

		if (!bsearch(&key, reads, nr_reads, sizeof(*reads), cmp_read_row))
			continue;	/* its request carried no fault's page */
		q2c_ms += (double)bios[i].b / 1e6;
		nr_q2c++;
	}
	if (nr_q2c)
		r->q2c_avg_ms = q2c_ms / (double)nr_q2c;
	/*
	 * Nearest rank: the smallest time that half (99 %) of the requests do
	 * not exceed, at rank ceil(n / 2) (ceil(0.99 n)).  The reads, no
	 * longer searched by key, are sorted by their D2C for it.
	 */
	qsort(reads, nr_reads, sizeof(*reads), cmp_read_row_b);
	r->d2c_median_ms = (double)reads[(nr_reads + 1) / 2 - 1].b / 1e6;
	r->d2c_p99_ms = (double)reads[(99 * nr_reads + 99) / 100 - 1].b / 1e6;
out:
	free(reads);
	free(bios);
	return ret;
}

/* The traced reads of each device of the swap areas, once per device. */
static int load_reads(struct swt_report_ctx *rc, struct swt_err *err)
{
	int ret;

	rc->reads = calloc(rc->nr_parts ? rc->nr_parts : 1, sizeof(*rc->reads));
	if (!rc->reads)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < rc->nr_parts; i++) {
		int seen = 0;

		/* partitions of one device share its I/O: one row */
		for (size_t j = 0; j < i; j++)
			seen |= rc->parts[j].dev == rc->parts[i].dev;
		if (seen)
			continue;
		rc->reads[rc->nr_reads].part = i;
		ret = load_device_reads(rc, &rc->reads[rc->nr_reads], err);
		if (ret)
			return ret;
		rc->nr_reads++;
	}
	return 0;
}

static int selected(const struct swt_report_opts *o, int64_t id)
{
	if (!o->run_ids)
		return 1;
	for (size_t i = 0; i < o->nr_run_ids; i++)
		if (o->run_ids[i] == id)
			return 1;
	return 0;
}

/*
 * What no run replay stores can be: a run row edited by hand, or written by
 * something else, would be drawn as if replayed.  Every fault is a hit or a
 * miss, every miss reads its page, the rest of the pages read are
 * readahead, and each request holds at least a page.  The counts are
 * checked non-negative first, so that the differences cannot overflow
 * (a sum of two counts near 2^63 would).  The same holds for a run's
 * per-partition rows, which the policy chart draws.
 */
static const char *counts_problem(const struct swt_report_run *r)
{
	if (r->faults < 0 || r->misses < 0 || r->hits < 0 || r->pages_read < 0 ||
	    r->ra_pages < 0 || r->ra_hits < 0 || r->ra_wasted < 0 || r->read_requests < 0 ||
	    r->read_merges < 0)
		return "a negative count";
	if (r->faults - r->hits != r->misses)
		return "faults are not misses + hits";
	if (r->ra_pages != r->pages_read - r->misses)
		return "ra_pages are not pages_read - misses";
	if (r->ra_hits > r->ra_pages || r->ra_wasted > r->ra_pages - r->ra_hits)
		return "more readahead hits and waste than readahead pages";
	if (r->read_requests > r->pages_read || (r->pages_read > 0 && !r->read_requests))
		return "read_requests do not fit pages_read";
	return NULL;
}

static const char *run_row_problem(const struct swt_report_run *r)
{
	if (!r->policy[0] || !r->layout[0])
		return "an empty policy or layout name";
	if (r->page_cluster < 0 || r->page_cluster > SWT_MAX_PAGE_CLUSTER)
		return "page_cluster outside 0..16";
	if (r->cache_pages <= 0)
		return "cache_pages not positive";
	return counts_problem(r);
}

/*
 * The first drawn run whose histograms or per-second series no replay
 * stores: counts that are no numbers or negative, request sizes that do
 * not add up to the run's requests, seconds whose faults are not hits +
 * misses or that hold more than the whole run.  The charts draw these rows
 * (a negative count took a bar off, a huge second flattened the timeline),
 * so they are checked as the run rows are.  total() adds in floating point,
 * where sum() fails on an overflow.  0, or 1 with *id, *problem set.
 */
static int detail_problem(struct swt_report_ctx *rc, int64_t *id, const char **problem,
			  struct swt_err *err)
{
	static const struct {
		const char *sql, *problem;
	} checks[] = {
		{ "SELECT run_id FROM run_histogram WHERE typeof(count) != 'integer' OR count < 0"
		  " OR typeof(bucket) != 'integer' OR typeof(partition) != 'integer'",
		  "a histogram count that is no count" },
		/* a partition's against its row's; -1, all partitions', against the run's */
		{ "SELECT h.run_id FROM (SELECT run_id, partition, total(count) AS n"
		  " FROM run_histogram WHERE kind = 'request_pages' GROUP BY run_id, partition) h"
		  " JOIN run r ON r.id = h.run_id LEFT JOIN run_partition p"
		  " ON p.run_id = h.run_id AND p.partition = h.partition"
		  " WHERE (h.partition = -1 AND h.n != r.read_requests)"
		  " OR (h.partition >= 0 AND p.run_id IS NOT NULL AND h.n != p.read_requests)",
		  "its request sizes do not add up to its read requests" },
		{ "SELECT run_id FROM run_series WHERE typeof(faults) != 'integer'"
		  " OR typeof(hits) != 'integer' OR typeof(misses) != 'integer'"
		  " OR typeof(pages_read) != 'integer' OR typeof(second) != 'integer'"
		  " OR hits < 0 OR misses < 0 OR pages_read < 0 OR second < 0"
		  " OR faults != hits + misses",
		  "a second whose faults are not hits + misses" },
		{ "SELECT r.id FROM run r JOIN run_series s ON s.run_id = r.id"
		  " WHERE s.faults > r.faults OR s.hits > r.hits OR s.pages_read > r.pages_read",
		  "a second with more faults, hits or pages read than the whole run" },
	};
	int ret, step = SQLITE_DONE;

	*problem = NULL;
	for (size_t i = 0; i < SWT_ARRAY_SIZE(checks) && !*problem; i++) {
		sqlite3_stmt *s;

		ret = swt_store_prepare(rc->st, checks[i].sql, &s, err);
		if (ret)
			return ret;
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			if (!selected(rc->opts, sqlite3_column_int64(s, 0)))
				continue;
			*id = sqlite3_column_int64(s, 0);
			*problem = checks[i].problem;
			break;
		}
		sqlite3_finalize(s);
		if (!*problem && step != SQLITE_DONE)
			return swt_store_sql_error(rc->st, err, "reading run histograms and series");
	}
	return 0;
}

/* The first per-partition row of a drawn run that no replay stores: 0, or 1 with *id, *problem set. */
static int partition_problem(struct swt_report_ctx *rc, int64_t *id, const char **problem,
			     struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, step = SQLITE_DONE;

	*problem = NULL;
	/* rows of a run deleted alone are no run's (schema.md): left out */
	ret = swt_store_prepare(rc->st,
		"SELECT run_id, faults, misses, hits, pages_read, ra_pages, ra_hits, ra_wasted,"
		" read_requests, read_merges FROM run_partition"
		" WHERE run_id IN (SELECT id FROM run) ORDER BY run_id, partition", &s, err);
	if (ret)
		return ret;
	while (!*problem && (step = sqlite3_step(s)) == SQLITE_ROW) {
		struct swt_report_run p = { .id = sqlite3_column_int64(s, 0) };

		if (!selected(rc->opts, p.id))
			continue;
		p.faults = sqlite3_column_int64(s, 1);
		p.misses = sqlite3_column_int64(s, 2);
		p.hits = sqlite3_column_int64(s, 3);
		p.pages_read = sqlite3_column_int64(s, 4);
		p.ra_pages = sqlite3_column_int64(s, 5);
		p.ra_hits = sqlite3_column_int64(s, 6);
		p.ra_wasted = sqlite3_column_int64(s, 7);
		p.read_requests = sqlite3_column_int64(s, 8);
		p.read_merges = sqlite3_column_int64(s, 9);
		*problem = counts_problem(&p);
		*id = p.id;
	}
	sqlite3_finalize(s);
	if (!*problem && step != SQLITE_DONE)
		return swt_store_sql_error(rc->st, err, "reading run partitions");
	return 0;
}

/* A run (or what of it: "a run_partition row of ") no replay stores, as an error. */
static int not_as_stored(const struct swt_report_ctx *rc, const char *what, int64_t id,
			 const char *problem, struct swt_err *err)
{
	return swt_error(err, SWT_EFORMAT, "'%s': %srun %lld is not as replay stores runs (%s); "
			 "replay it again or leave it out with --run", swt_store_path(rc->st), what,
			 (long long)id, problem);
}

static int load_runs(struct swt_report_ctx *rc, struct swt_err *err)
{
	sqlite3_stmt *s;
	const char *problem;
	size_t cap = 0;
	int64_t id;
	uint32_t page_shift = 0;
	int ret, step, oom = 0;

	/* a page size of no power of two (a damaged capture row) reads no size in pages */
	while (!(rc->page_size & (rc->page_size - 1)) && ((int64_t)1 << page_shift) < rc->page_size)
		page_shift++;
	ret = swt_store_prepare(rc->st,
		"SELECT id, policy, params, page_cluster, cache_pages, layout, approximate,"
		" faults, misses, hits, pages_read, ra_pages, ra_hits, ra_wasted,"
		" read_requests, read_merges, accuracy, coverage, avg_request_kib,"
		" coalesce(replay_ns, -1), created,"
		" (SELECT coalesce(sum(count), 0) FROM run_histogram h WHERE h.run_id = run.id"
		"  AND h.partition = -1 AND h.kind = 'ra_window_vma'),"
		" inactive_fraction, max_request_kib,"
		" (SELECT max(bucket) FROM run_histogram h WHERE h.run_id = run.id"
		"  AND h.kind = 'request_pages' AND h.count > 0)"
		" FROM run ORDER BY id", &s, err);
	if (ret)
		return ret;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct swt_report_run *r;
		int64_t pc;
		int not_integer = 0;

		if (!selected(rc->opts, sqlite3_column_int64(s, 0)))
			continue;
		if (swt_grow((void **)&rc->runs, &cap, rc->nr_runs + 1, sizeof(*rc->runs))) {
			oom = 1;
			break;
		}
		r = &rc->runs[rc->nr_runs++];
		memset(r, 0, sizeof(*r));
		/* a text or real where replay stores an integer was read as 0 or cut */
		for (int col = 3; col <= 15 && !not_integer; col++)
			not_integer = col != 5 && sqlite3_column_type(s, col) != SQLITE_INTEGER;
		not_integer |= sqlite3_column_type(s, 23) != SQLITE_NULL &&
			       sqlite3_column_type(s, 23) != SQLITE_INTEGER;
		r->id = sqlite3_column_int64(s, 0);
		r->policy = dup_text(s, 1, &oom);
		r->params = dup_text(s, 2, &oom);
		/* not cut to an int: 2^32 + 3 would pass as page-cluster 3 */
		pc = sqlite3_column_int64(s, 3);
		r->page_cluster = pc < 0 || pc > SWT_MAX_PAGE_CLUSTER ? -1 : (int)pc;
		r->cache_pages = sqlite3_column_int64(s, 4);
		r->layout = dup_text(s, 5, &oom);
		if (r->layout && rc->opts->layout_canonical && page_shift) {
			char *canon = NULL;
			int why = rc->opts->layout_canonical(r->layout, page_shift, &canon, NULL);

			oom |= why == -SWT_ENOMEM;
			if (!why) {
				free(r->layout);
				r->layout = canon;
			}
		}
		r->approximate = sqlite3_column_int(s, 6);
		r->faults = sqlite3_column_int64(s, 7);
		r->misses = sqlite3_column_int64(s, 8);
		r->hits = sqlite3_column_int64(s, 9);
		r->pages_read = sqlite3_column_int64(s, 10);
		r->ra_pages = sqlite3_column_int64(s, 11);
		r->ra_hits = sqlite3_column_int64(s, 12);
		r->ra_wasted = sqlite3_column_int64(s, 13);
		r->read_requests = sqlite3_column_int64(s, 14);
		r->read_merges = sqlite3_column_int64(s, 15);
		/*
		 * derived from the counts, as the charts derive them: the stored
		 * columns are only what replay computed from the same counts, and
		 * a table showing stored ones would disagree with the charts
		 */
		r->accuracy = r->ra_pages > 0 ? (double)r->ra_hits / (double)r->ra_pages : NAN;
		r->coverage = r->faults > 0 ? (double)r->hits / (double)r->faults : NAN;
		r->avg_request_kib = r->read_requests > 0 ?
			(double)r->pages_read * (double)rc->page_size / 1024.0 /
			(double)r->read_requests : NAN;
		r->replay_ns = sqlite3_column_int64(s, 19);
		r->created = dup_text(s, 20, &oom);
		r->vma_windows = sqlite3_column_int64(s, 21);
		r->tuned = r->params && *r->params &&
			   !(rc->opts->params_are_defaults &&
			     rc->opts->params_are_defaults(r->policy, r->params));
		r->inactive_fraction = column_real(s, 22);
		/*
		 * not recorded (schema 3): taken as replayed with the default
		 * settings, as such runs nearly all were (the default was 1280
		 * KiB then, which gives the same numbers below page-cluster 8)
		 */
		r->max_request_kib = sqlite3_column_type(s, 23) == SQLITE_NULL ?
					     rc->request_limit_kib : sqlite3_column_int64(s, 23);
		if (r->max_request_kib != rc->request_limit_kib && page_shift >= 9 &&
		    sqlite3_column_type(s, 24) == SQLITE_INTEGER && r->max_request_kib > 0 &&
		    r->max_request_kib <= 65536) {
			/*
			 * A limit that split no request gives the numbers the
			 * default would have: its largest request below its own
			 * limit (the last bucket holds the requests it cut) and no
			 * larger than the default's.  So runs an older replay
			 * stored at its default of 1280 KiB stay default runs
			 * below page-cluster 8.
			 */
			int64_t largest = sqlite3_column_int64(s, 24);

			if (largest < (r->max_request_kib << 10) >> page_shift &&
			    largest <= (rc->request_limit_kib << 10) >> page_shift)
				r->max_request_kib = rc->request_limit_kib;
		}
		if (!oom && run_settings(rc, r))
			oom = 1;
		r->model_tuned = r->model_settings && r->model_settings[0];
		r->tuned |= r->model_tuned;
		if (!r->policy || !r->layout)
			oom = 1;	/* NOT NULL columns: only allocation can fail */
		problem = oom ? NULL : not_integer ? "a count or setting that is no integer" :
					   run_row_problem(r);
		if (problem) {
			sqlite3_finalize(s);
			return not_as_stored(rc, "", r->id, problem, err);
		}
	}
	sqlite3_finalize(s);
	if (oom)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (step != SQLITE_DONE && step != SQLITE_ROW)
		return swt_store_sql_error(rc->st, err, "reading runs");
	ret = partition_problem(rc, &id, &problem, err);
	if (ret)
		return ret;
	if (problem)
		return not_as_stored(rc, "a run_partition row of ", id, problem, err);
	ret = detail_problem(rc, &id, &problem, err);
	if (ret)
		return ret;
	if (problem)
		return not_as_stored(rc, "", id, problem, err);
	for (size_t i = 0; rc->opts->run_ids && i < rc->opts->nr_run_ids; i++) {
		int found = 0;

		for (size_t j = 0; j < rc->nr_runs; j++)
			found |= rc->runs[j].id == rc->opts->run_ids[i];
		if (!found)
			return swt_error(err, SWT_EUSAGE, "run %lld is not in '%s'",
					 (long long)rc->opts->run_ids[i], swt_store_path(rc->st));
	}
	return 0;
}

/* A run's strings, which ctx_release frees. */
static void free_run(struct swt_report_run *r)
{
	free(r->settings);
	free(r->model_settings);
	free(r->policy);
	free(r->params);
	free(r->layout);
	free(r->created);
	free(r->key);
	free(r->label);
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * The same parameters: the same text, or a built-in's defaults both (NULL
 * is how the default set stored them before it filled them in, as replay
 * does).
 */
static int same_params(const struct swt_report_ctx *rc, const char *policy, const char *a,
		       const char *b)
{
	return same_text(a, b) ||
	       (rc->opts->params_are_defaults && rc->opts->params_are_defaults(policy, a) &&
		rc->opts->params_are_defaults(policy, b));
}

/*
 * The same settings replayed twice (replay run again, or report's own
 * default sweep after a user's) give the same numbers: one run stands for
 * them, the latest.  Runs whose numbers differ (another swaptrace, a
 * changed model) stay, and their labels tell them apart by id.
 */
static int same_run(const struct swt_report_ctx *rc, const struct swt_report_run *a,
		    const struct swt_report_run *b)
{
	return !strcmp(a->policy, b->policy) && same_params(rc, a->policy, a->params, b->params) &&
	       !strcmp(a->layout, b->layout) && a->page_cluster == b->page_cluster &&
	       a->cache_pages == b->cache_pages && a->approximate == b->approximate &&
	       (a->inactive_fraction == b->inactive_fraction ||
		(isnan(a->inactive_fraction) && isnan(b->inactive_fraction))) &&
	       a->max_request_kib == b->max_request_kib &&
	       a->faults == b->faults && a->misses == b->misses && a->hits == b->hits &&
	       a->pages_read == b->pages_read && a->ra_pages == b->ra_pages &&
	       a->ra_hits == b->ra_hits && a->ra_wasted == b->ra_wasted &&
	       a->read_requests == b->read_requests && a->read_merges == b->read_merges;
}

static void drop_repeated_runs(struct swt_report_ctx *rc)
{
	size_t kept = 0;

	for (size_t i = 0; i < rc->nr_runs; i++) {
		size_t j;

		for (j = i + 1; j < rc->nr_runs && !same_run(rc, &rc->runs[i], &rc->runs[j]); j++)
			;
		if (j < rc->nr_runs) {
			free_run(&rc->runs[i]);	/* runs[j], later, stands for it */
			continue;
		}
		rc->runs[kept++] = rc->runs[i];
	}
	rc->nr_runs = kept;
}

/*
 * The built-in policies, run with their defaults, each have a colour of
 * their own in every report (the order `swaptrace policies` lists them);
 * other policies and parameter sets take the colours left, in run order.
 */
static const char *const builtin_colors[] = {
	"none", "fixed", "adaptive", "vma", "auto", "oracle", "leap",
};

static size_t builtin_color(const struct swt_report_run *r)
{
	if (r->tuned)
		return SIZE_MAX;
	for (size_t k = 0; k < sizeof(builtin_colors) / sizeof(builtin_colors[0]); k++)
		if (!strcmp(r->policy, builtin_colors[k]))
			return k;
	return SIZE_MAX;
}

/*
 * A policy as legends name it: a plugin by its file name, unless another
 * plugin of the report has the same file name in another directory (or a
 * policy is named so).
 */
static const char *policy_name(const struct swt_report_ctx *rc, const char *policy)
{
	const char *base = strrchr(policy, '/');

	if (!base)
		return policy;
	base++;
	for (size_t j = 0; j < rc->nr_runs; j++) {
		const char *other = rc->runs[j].policy, *ob = strrchr(other, '/');

		if ((ob && !strcmp(ob + 1, base) && strcmp(other, policy)) || !strcmp(other, base))
			return policy;
	}
	return base;
}

/*
 * Legend names: the policy, its parameters when given, and the run id when
 * still ambiguous among runs of one page-cluster, layout and memory; and
 * each name's colour.
 */
static int name_runs(struct swt_report_ctx *rc, struct swt_err *err)
{
	int taken[SWT_PALETTE_SIZE] = { 0 };
	size_t next_free = 0;

	for (size_t i = 0; i < rc->nr_runs; i++) {
		struct swt_report_run *r = &rc->runs[i];
		const char *name = policy_name(rc, r->policy);

		if (r->tuned ? asprintf(&r->key, "%s (%s)", name, r->settings) < 0
					    : !(r->key = swt_strdup(name))) {
			r->key = NULL;
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		r->key_color = builtin_color(r);
		if (r->key_color != SIZE_MAX)
			taken[r->key_color] = 1;
	}
	for (size_t i = 0; i < rc->nr_runs; i++) {
		struct swt_report_run *r = &rc->runs[i];
		size_t j;

		if (r->key_color != SIZE_MAX)
			continue;
		for (j = 0; j < i && strcmp(rc->runs[j].key, r->key); j++)
			;
		if (j < i) {
			r->key_color = rc->runs[j].key_color;
			continue;
		}
		/*
		 * those of built-ins not in the report, then the last (black, as
		 * the traced kernel's marks are drawn), then cycle
		 */
		for (r->key_color = 0; r->key_color < SWT_PALETTE_SIZE && taken[r->key_color];
		     r->key_color++)
			;
		if (r->key_color == SWT_PALETTE_SIZE)
			r->key_color = next_free++ % SWT_PALETTE_SIZE;
		taken[r->key_color] = 1;
	}
	for (size_t i = 0; i < rc->nr_runs; i++) {
		struct swt_report_run *r = &rc->runs[i];
		int twin = 0;

		for (size_t j = 0; j < rc->nr_runs; j++) {
			const struct swt_report_run *o = &rc->runs[j];

			if (j != i && !strcmp(o->key, r->key) && !strcmp(o->layout, r->layout) &&
			    o->page_cluster == r->page_cluster && o->cache_pages == r->cache_pages)
				twin = 1;
		}
		if (twin ? asprintf(&r->label, "%s #%lld", r->key, (long long)r->id) < 0
			 : !(r->label = swt_strdup(r->key))) {
			r->label = NULL;
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
	}
	return 0;
}

/*
 * The memory the comparisons show: the one most traced-layout runs share
 * (a sweep over page-cluster and policies at one memory, with a few runs at
 * other sizes for the memory chart); on a tie (a memory sweep of the same
 * runs at each size) replay's default, the capture's own memory, else the
 * earlier one.
 */
static void choose_memory(struct swt_report_ctx *rc)
{
	size_t best = 0;

	rc->cache_pages = -1;
	for (size_t i = 0; i < rc->nr_runs; i++) {
		size_t n = 0;

		if (!swt_report_run_traced(&rc->runs[i]))
			continue;
		for (size_t j = 0; j < rc->nr_runs; j++)
			n += swt_report_run_traced(&rc->runs[j]) &&
			     rc->runs[j].cache_pages == rc->runs[i].cache_pages;
		if (n > best || (n == best && rc->runs[i].cache_pages == rc->default_cache_pages)) {
			best = n;
			rc->cache_pages = rc->runs[i].cache_pages;
		}
	}
}

/*
 * Is a used= list of n characters counts of 0 or 1 only?  Such offsets are
 * what --layout N:spread runs; other counts were chosen for their own sake.
 */
static int one_page_offsets(const char *list, size_t n)
{
	for (size_t i = 0; i < n; i += 2)
		if ((list[i] != '0' && list[i] != '1') || (i + 1 < n && list[i + 1] != ','))
			return 0;
	return n > 0;
}

void swt_report_layout_group(const char *layout, char *key, size_t size)
{
	const char *p = layout;
	size_t at = 0;

	while (*p && at + 1 < size) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (!(len >= 5 && !strncmp(p, "used=", 5) && one_page_offsets(p + 5, len - 5))) {
			if (at && at + 1 < size)
				key[at++] = ':';
			len = SWT_MIN(len, size - 1 - at);
			memcpy(key + at, p, len);
			at += len;
		}
		p += end ? (size_t)(end - p) + 1 : strlen(p);
	}
	key[at] = '\0';
}

/* The counts of a layout's "used=" option (none: 0 for every device); how many, at most max. */
static size_t layout_used(const char *layout, unsigned long long *used, size_t max)
{
	const char *p = strstr(layout, ":used=");
	size_t n = 0;

	if (!p) {
		used[0] = 0;
		return 1;
	}
	p += 6;
	while (n < max) {
		char *end;

		used[n++] = strtoull(p, &end, 10);
		if (*end != ',')
			break;
		p = end + 1;
	}
	return n;
}

int swt_report_same_layout(const char *a, const char *b)
{
	unsigned long long ua[64], ub[64];
	char ka[200], kb[200];
	size_t na, nb;

	swt_report_layout_group(a, ka, sizeof(ka));
	swt_report_layout_group(b, kb, sizeof(kb));
	if (strcmp(ka, kb))
		return 0;
	na = layout_used(a, ua, 64);
	nb = layout_used(b, ub, 64);
	/* one count stands for every device */
	for (size_t i = 0; i < SWT_MAX(na, nb); i++)
		if (ua[na == 1 ? 0 : SWT_MIN(i, na - 1)] != ub[nb == 1 ? 0 : SWT_MIN(i, nb - 1)])
			return 0;
	return 1;
}

int swt_report_run_compared(const struct swt_report_ctx *rc, const struct swt_report_run *r)
{
	return swt_report_run_traced(r) && r->cache_pages == rc->cache_pages;
}

const struct swt_report_run *swt_report_layout_anchor(const struct swt_report_ctx *rc)
{
	const struct swt_report_run *first = NULL, *same_policy = NULL;

	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (swt_report_run_traced(r))
			continue;
		if (!first)
			first = r;
		if (rc->chosen && !strcmp(r->policy, rc->chosen->policy)) {
			/* the key names the parameters and model settings too */
			if (r->page_cluster == rc->chosen->page_cluster &&
			    r->cache_pages == rc->chosen->cache_pages && !strcmp(r->key, rc->chosen->key))
				return r;
			if (!same_policy)
				same_policy = r;
		}
	}
	return same_policy ? same_policy : first;
}

/* Does a run.params list (k=v,...) hold every k=v item of given? */
static int params_hold(const char *params, const char *given)
{
	for (const char *g = given; *g;) {
		size_t len = strcspn(g, ",");
		int found = 0;

		for (const char *p = params; p && *p && !found;) {
			size_t n = strcspn(p, ",");

			found = n == len && !strncmp(p, g, len);
			p += n + (p[n] == ',');
		}
		if (!found)
			return 0;
		g += len + (g[len] == ',');
	}
	return 1;
}

/*
 * Whether a run's policy is --policy's: by name, and a plugin by its path
 * or, given without a '/', by its file name, as the legends name it (when
 * no run's policy is that very name: a built-in's, say).
 */
static int policy_is(const struct swt_report_ctx *rc, const struct swt_report_run *r,
		     const char *policy)
{
	const char *base = strrchr(r->policy, '/');
	const char *params = rc->opts->policy_params;

	if (params && (rc->opts->policy_params_given ? !params_hold(r->params, params)
						     : !same_params(rc, r->policy, r->params, params)))
		return 0;
	if (!strcmp(r->policy, policy))
		return 1;
	if (!base || strchr(policy, '/') || strcmp(base + 1, policy))
		return 0;
	for (size_t i = 0; i < rc->nr_runs; i++)
		if (!strcmp(rc->runs[i].policy, policy))
			return 0;
	return 1;
}

/*
 * The page-cluster the policy comparisons show: the traced one when runs
 * exist there and it allows readahead, else the kernel default 3, else the
 * nearest replayed value.  The run shown alone: --policy's at that
 * page-cluster (else at its nearest); without --policy the first run there
 * that read ahead at all, since those charts are about what readahead did
 * (a policy that never reads ahead makes them say nothing).
 */
static void choose_run(struct swt_report_ctx *rc, const char *policy, int model_tuned_too)
{
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if ((r->model_tuned && !model_tuned_too) || !swt_report_run_compared(rc, r) ||
		    (policy && !policy_is(rc, r, policy)))
			continue;
		if (!policy && r->page_cluster != rc->chosen_pc)
			continue;
		if (!policy && rc->chosen && (rc->chosen->ra_pages > 0 || r->ra_pages <= 0))
			continue;
		if (!rc->chosen || !policy ||
		    abs(r->page_cluster - rc->chosen_pc) <
			    abs(rc->chosen->page_cluster - rc->chosen_pc))
			rc->chosen = r;
	}
}

/* --policy names a file name that plugins in several directories have: each path, once. */
static int plugins_of_one_name(const struct swt_report_ctx *rc, const char *policy,
			       struct swt_err *err)
{
	struct swt_sbuf paths;
	size_t n = 0, said = 0;
	int ret;

	swt_sbuf_init(&paths);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < rc->nr_runs; i++) {
			const struct swt_report_run *r = &rc->runs[i];
			size_t j;

			if (!policy_is(rc, r, policy))
				continue;
			for (j = 0; j < i && !(policy_is(rc, &rc->runs[j], policy) &&
					       !strcmp(rc->runs[j].policy, r->policy)); j++)
				;
			if (j < i)
				continue;	/* a path met before */
			if (!pass) {
				n++;
				continue;
			}
			swt_sbuf_printf(&paths, "%s'%s'", !said ? "" : said + 1 == n ? " or " : ", ",
					r->policy);
			said++;
		}
	ret = swt_error(err, SWT_EUSAGE, "policy '%s' names %zu plugins in '%s', give its path: %s",
			policy, n, swt_store_path(rc->st),
			paths.oom || !paths.s ? "(out of memory)" : paths.s);
	swt_sbuf_release(&paths);
	return ret;
}

static int choose(struct swt_report_ctx *rc, struct swt_err *err)
{
	int pref = rc->page_cluster > 0 ? rc->page_cluster : 3;
	const char *policy = rc->opts->policy;

	rc->chosen_pc = -1;
	rc->chosen = NULL;
	for (size_t i = 0; i < rc->nr_runs; i++) {
		int pc = rc->runs[i].page_cluster, best = rc->chosen_pc;

		if (!swt_report_run_compared(rc, &rc->runs[i]))
			continue;
		if (best < 0 || abs(pc - pref) < abs(best - pref) ||
		    (abs(pc - pref) == abs(best - pref) && pc < best))
			rc->chosen_pc = pc;
	}
	if (policy) {
		int found = 0, compared = 0;
		const char *first = NULL;

		for (size_t i = 0; i < rc->nr_runs; i++) {
			const struct swt_report_run *r = &rc->runs[i];

			if (!policy_is(rc, r, policy))
				continue;
			/* plugins of one file name in several directories: the path says which */
			if (first && strcmp(first, r->policy))
				return plugins_of_one_name(rc, policy, err);
			first = r->policy;
			found = 1;
			compared |= swt_report_run_compared(rc, r);
		}
		const char *params = rc->opts->policy_params;

		if (!found)
			return swt_error(err, SWT_EUSAGE, "policy '%s%s%s' has no %sreplay run in '%s'",
					 policy, params ? ":" : "", params ? params : "",
					 rc->opts->run_ids ? "selected " : "", swt_store_path(rc->st));
		if (!compared && rc->cache_pages < 0)
			/* no run (of any policy) on the traced layout: no memory compared */
			return swt_error(err, SWT_EUSAGE,
					 "policy '%s%s%s' has no %sreplay run on the traced layout in "
					 "'%s'", policy, params ? ":" : "", params ? params : "",
					 rc->opts->run_ids ? "selected " : "", swt_store_path(rc->st));
		if (!compared)
			return swt_error(err, SWT_EUSAGE,
					 "policy '%s%s%s' has no %sreplay run on the traced layout with "
					 "the memory the charts compare (%lld pages, the size most runs "
					 "share) in '%s'", policy, params ? ":" : "", params ? params : "",
					 rc->opts->run_ids ? "selected " : "", (long long)rc->cache_pages,
					 swt_store_path(rc->st));
	}
	/* a run of the plain model first: the answer and the other charts are about those */
	choose_run(rc, policy, 0);
	if (!rc->chosen)
		choose_run(rc, policy, 1);
	return 0;
}

/* The runs of the keys the answer names: kept when a chart has more policies than colours. */
static void cite_keys(struct swt_report_ctx *rc)
{
	struct swt_report_picks p;
	const struct swt_report_run *cited[5];

	swt_report_answer_picks(rc, &p);
	cited[0] = p.base;
	cited[1] = p.best_auto;
	cited[2] = p.best_kernel;
	cited[3] = p.best_other;
	cited[4] = p.oracle;
	for (size_t i = 0; i < rc->nr_runs; i++)
		for (size_t k = 0; k < SWT_ARRAY_SIZE(cited); k++)
			if (cited[k] && !strcmp(cited[k]->key, rc->runs[i].key))
				rc->runs[i].key_cited = 1;
}

int swt_report_ctx_init(struct swt_report_ctx *rc, struct swt_store *st,
			const struct swt_report_opts *opts, struct swt_err *err)
{
	int ret;

	memset(rc, 0, sizeof(*rc));
	rc->st = st;
	rc->opts = opts;
	/* the heatmap draws every slot: one a hand edit made text would be drawn at slot 0 */
	ret = swt_store_check_slots(st, NULL, err);
	if (!ret)
		ret = load_capture(rc, err);
	if (!ret)
		ret = load_parts(rc, err);
	if (!ret)
		ret = load_reads(rc, err);
	if (!ret)
		ret = load_runs(rc, err);
	if (ret)
		return ret;
	drop_repeated_runs(rc);
	ret = name_runs(rc, err);
	if (ret)
		return ret;
	choose_memory(rc);
	ret = choose(rc, err);
	if (!ret)
		cite_keys(rc);
	return ret;
}

void swt_report_ctx_release(struct swt_report_ctx *rc)
{
	for (size_t i = 0; i < rc->nr_runs; i++)
		free_run(&rc->runs[i]);
	free(rc->runs);
	free(rc->parts);
	free(rc->reads);
	rc->runs = NULL;
	rc->parts = NULL;
	rc->reads = NULL;
	rc->nr_runs = rc->nr_parts = rc->nr_reads = 0;
}

struct at_pc {
	const struct swt_report_ctx *rc;
	int pc;
};

static int compared_at(const void *arg, const struct swt_report_run *r)
{
	const struct at_pc *a = arg;

	return swt_report_run_compared(a->rc, r) && r->page_cluster == a->pc;
}

int swt_report_runs_at(const struct swt_report_ctx *rc, int pc, const struct swt_report_run ***out,
		       size_t *n, struct swt_report_keys *keys, struct swt_err *err)
{
	const struct swt_report_run **v = NULL;
	struct at_pc a = { rc, pc };
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	swt_report_pick_keys(rc, compared_at, &a, " at this page-cluster", keys);
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		/* twins of a key (same setting, other numbers) each have a bar, to the cap */
		if (!compared_at(&a, r) || !swt_report_keys_have(keys, r->key) ||
		    *n == SWT_REPORT_MAX_SERIES)
			continue;
		if (swt_grow((void **)&v, &cap, *n + 1, sizeof(*v))) {
			free(v);
			*n = 0;
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		v[(*n)++] = r;
	}
	*out = v;
	return 0;
}

int swt_report_run_lacks_addresses(const struct swt_report_ctx *rc, const struct swt_report_run *r)
{
	if (!rc->no_fault_addresses)
		return 0;
	if (!strcmp(r->policy, "vma"))
		return SWT_REPORT_VMA_NO_ADDRESSES;
	if (!strcmp(r->policy, "auto") && rc->auto_takes_vma)
		return SWT_REPORT_AUTO_NO_ADDRESSES;
	return 0;
}

double swt_report_address_notes(struct swt_chart *c, double y, int mask)
{
	if (mask & SWT_REPORT_VMA_NO_ADDRESSES)
		y = swt_chart_note_line(c, y, SWT_REPORT_NO_ADDRESS_NOTE);
	if (mask & SWT_REPORT_AUTO_NO_ADDRESSES)
		y = swt_chart_note_line(c, y, SWT_REPORT_NO_ADDRESS_AUTO_NOTE);
	return y;
}

double swt_report_memory_note(const struct swt_report_ctx *rc, struct swt_chart *c, double y)
{
	char note[300];

	if (rc->cache_pages < 0 || rc->cache_pages == rc->default_cache_pages)
		return y;
	if (rc->default_cache_pages > 0)
		snprintf(note, sizeof(note), "Replayed with %.0f MiB of memory (%.0f%% of the "
			 "capture's %.0f MiB): the memory most of the runs share.",
			 (double)rc->cache_pages * (double)rc->page_size / 1048576.0,
			 100.0 * (double)rc->cache_pages / (double)rc->default_cache_pages,
			 (double)rc->default_cache_pages * (double)rc->page_size / 1048576.0);
	else
		snprintf(note, sizeof(note), "Replayed with %.0f MiB of memory: the memory most "
			 "of the runs share.",
			 (double)rc->cache_pages * (double)rc->page_size / 1048576.0);
	return swt_chart_note_line(c, y, note);
}

#define MAX_PANELS 8

void swt_report_hidden_note(size_t nr_series, const char *const *keys, int nr_panels,
			    const char *const *panel_names,
			    int (*covers)(const void *arg, size_t a, size_t b, int m),
			    const void *arg, const char *every, char *out, size_t size)
{
	/* room kept for the count of lines the note has no room to name */
	static const char more_fmt[] = "; %zu more line%s lie%s under others (--run chooses runs)";
	size_t len = 0, more = 0, room = size > sizeof(more_fmt) + 20 ? size - sizeof(more_fmt) - 20 : 0;

	out[0] = '\0';
	nr_panels = SWT_MIN(nr_panels, MAX_PANELS);
	for (size_t j = 0; j < nr_series; j++) {
		int shown[MAX_PANELS], counted = 0;

		for (int m = 0; m < nr_panels; m++)
			shown[m] = 1;
		for (size_t k = nr_series; k-- > j + 1;) {
			int how[MAX_PANELS], all = 1, worst = 2, n = 0;
			char panels[160] = "";

			for (int m = 0; m < nr_panels; m++) {
				how[m] = shown[m] ? covers(arg, j, k, m) : 0;
				all &= how[m] > 0;
				if (how[m])
					worst = SWT_MIN(worst, how[m]);
			}
			if (!all) {
				for (int m = 0; m < nr_panels; m++)
					if (how[m])
						snprintf(panels + strlen(panels), sizeof(panels) - strlen(panels),
							 "%s%s", panels[0] ? " and " : "", panel_names[m]);
				if (!panels[0])
					continue;
			}
			/* once one does not fit, the rest are counted, not named: the note keeps its order */
			if (!more && len < room) {
				if (all)
					n = snprintf(out + len, room - len, "%s%s lies under %s, %s at every "
						     "%s", len ? "; " : "", keys[j], keys[k], worst == 2 ?
						     "the same results" : "within 0.5 %", every);
				else
					n = snprintf(out + len, room - len, "%s%s lies under %s in %s",
						     len ? "; " : "", keys[j], keys[k], panels);
			} else {
				n = -1;
			}
			if (n < 0 || (size_t)n >= room - len) {
				out[len] = '\0';
				more += !counted;	/* a line, however many cover it */
				counted = 1;
			} else {
				len += (size_t)n;
			}
			for (int m = 0; m < nr_panels; m++)
				shown[m] &= !how[m];
			if (all)
				break;
		}
	}
	if (more && size > len)
		snprintf(out + len, size - len, more_fmt + (len ? 0 : 2), more, more == 1 ? "" : "s",
			 more == 1 ? "s" : "");
}
