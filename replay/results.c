/*
 * Storing replay results: the run row, per-partition rows, histograms and
 * the per-second series that reports draw.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replay.h"
#include "swapsim.h"
#include "util.h"

FILE *swt_replay_spill_open(struct swt_err *err)
{
	FILE *spill = tmpfile();

	if (!spill)
		swt_error(err, SWT_EIO, "cannot create a temporary file for the runs' results: %s",
			  strerror(errno));
	return spill;
}

int swt_replay_spill_put(FILE *spill, const struct swt_replay_result *r, struct swt_err *err)
{
	int ret = swt_replay_result_write(fileno(spill), r);

	return ret ? swt_error(err, SWT_EIO, "writing the runs' results to a temporary file: %s",
			       strerror(-ret)) : 0;
}

int swt_replay_spill_rewind(FILE *spill, struct swt_err *err)
{
	return lseek(fileno(spill), 0, SEEK_SET) < 0
		       ? swt_error(err, SWT_EIO, "reading the runs' results back: %s", strerror(errno))
		       : 0;
}

struct swt_replay_result *swt_replay_spill_get(FILE *spill, struct swt_err *err)
{
	struct swt_replay_result *r = swt_replay_result_read(fileno(spill));

	if (!r)
		swt_error(err, SWT_EIO, "reading the runs' results back from a temporary file failed");
	return r;
}

static void bind_metrics(sqlite3_stmt *s, int col, const struct swt_replay_metrics *m,
			 uint32_t page_shift)
{
	double acc = swt_metrics_accuracy(m), cov = swt_metrics_coverage(m);
	double kib = swt_metrics_avg_request_kib(m, page_shift);

	sqlite3_bind_int64(s, col++, (int64_t)m->faults);
	sqlite3_bind_int64(s, col++, (int64_t)m->misses);
	sqlite3_bind_int64(s, col++, (int64_t)m->hits);
	sqlite3_bind_int64(s, col++, (int64_t)m->pages_read);
	sqlite3_bind_int64(s, col++, (int64_t)m->ra_pages);
	sqlite3_bind_int64(s, col++, (int64_t)m->ra_hits);
	sqlite3_bind_int64(s, col++, (int64_t)m->ra_wasted);
	sqlite3_bind_int64(s, col++, (int64_t)m->read_requests);
	sqlite3_bind_int64(s, col++, (int64_t)m->read_merges);
	acc < 0 ? sqlite3_bind_null(s, col) : sqlite3_bind_double(s, col, acc);
	col++;
	cov < 0 ? sqlite3_bind_null(s, col) : sqlite3_bind_double(s, col, cov);
	col++;
	kib < 0 ? sqlite3_bind_null(s, col) : sqlite3_bind_double(s, col, kib);
}

static int step(struct swt_store *st, sqlite3_stmt *s, struct swt_err *err, const char *what)
{
	int ret = sqlite3_step(s) == SQLITE_DONE ? 0 : swt_store_sql_error(st, err, what);

	sqlite3_reset(s);
	return ret;
}

static int put_hist(struct swt_store *st, sqlite3_stmt *s, int64_t run, int64_t part,
		    const char *kind, const uint64_t *hist, size_t n, struct swt_err *err)
{
	int ret = 0;

	for (size_t b = 0; b < n && !ret; b++) {
		if (!hist[b])
			continue;
		sqlite3_bind_int64(s, 1, run);
		sqlite3_bind_int64(s, 2, part);
		sqlite3_bind_text(s, 3, kind, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, (int64_t)b);
		sqlite3_bind_int64(s, 5, (int64_t)hist[b]);
		ret = step(st, s, err, "insert run_histogram");
	}
	return ret;
}

/*
 * A table's columns but those in skip (NULL-terminated) in *cols, to be
 * sqlite3_free'd: a select list, or with pairs, each as a test of rows o
 * and n (' AND o."c" IS n."c"').  Read from the schema, so that a column
 * added later counts: a new setting is never taken for a repeat of a run
 * made without it.
 */
static int columns_of(struct swt_store *st, const char *table, const char *const *skip,
		      int pairs, char **cols, struct swt_err *err)
{
	sqlite3_str *list = sqlite3_str_new(swt_store_db(st));
	sqlite3_stmt *s = NULL;
	int n = 0, rc, ret;

	*cols = NULL;
	ret = swt_store_prepare(st, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", &s, err);
	if (ret)
		goto out;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		size_t k;

		for (k = 0; skip[k] && strcmp(skip[k], name); k++)
			;
		if (skip[k])
			continue;
		if (pairs)
			sqlite3_str_appendf(list, " AND o.\"%w\" IS n.\"%w\"", name, name);
		else
			sqlite3_str_appendf(list, "%s\"%w\"", n ? ", " : "", name);
		n++;
	}
	if (rc != SQLITE_DONE)
		ret = swt_store_sql_error(st, err, "reading the run tables' columns");
	else if (!n)
		ret = swt_error(err, SWT_EIO, "'%s': no table %s", swt_store_path(st), table);
out:
	*cols = sqlite3_str_finish(list);
	if (!ret && !*cols)
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
	if (ret) {
		sqlite3_free(*cols);
		*cols = NULL;
	}
	sqlite3_finalize(s);
	return ret;
}

/*
 * The query for the earlier runs o that run n (?1) may repeat: every column
 * of run the same (IS: NULLs alike) but its id, when it was stored and how
 * long it took, and the same rows in each table keyed by the run, both
 * ways.  The run rows are compared first, in a join: a scan of thousands
 * of runs then costs a few milliseconds.  The latest first, the one a
 * report draws.  The layouts, o's and n's, are compared by find_repeat:
 * a name stored before replay stored canonical ones is another spelling.
 */
static int prepare_repeat(struct swt_store *st, sqlite3_stmt **stmt, struct swt_err *err)
{
	static const char *const run_skip[] = { "id", "created", "replay_ns", "loop_ns", "layout",
						NULL };
	static const char *const child_skip[] = { "run_id", NULL };
	static const char *const children[] = { "run_partition", "run_histogram", "run_series" };
	sqlite3_str *sql = sqlite3_str_new(swt_store_db(st));
	char *cols = NULL, *text;
	int ret = columns_of(st, "run", run_skip, 1, &cols, err);

	if (!ret)
		sqlite3_str_appendf(sql, "SELECT o.id, o.layout, n.layout FROM run o, run n"
				    " WHERE n.id = ?1 AND o.id <> n.id%s", cols);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(children) && !ret; i++) {
		sqlite3_free(cols);
		ret = columns_of(st, children[i], child_skip, 0, &cols, err);
		if (!ret)
			sqlite3_str_appendf(sql, " AND NOT EXISTS (SELECT %s FROM %s WHERE run_id = o.id"
					    " EXCEPT SELECT %s FROM %s WHERE run_id = n.id)"
					    " AND NOT EXISTS (SELECT %s FROM %s WHERE run_id = n.id"
					    " EXCEPT SELECT %s FROM %s WHERE run_id = o.id)",
					    cols, children[i], cols, children[i],
					    cols, children[i], cols, children[i]);
	}
	sqlite3_str_appendall(sql, " ORDER BY o.id DESC");
	text = sqlite3_str_finish(sql);
	if (!ret && !text)
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
	if (!ret)
		ret = swt_store_prepare(st, text, stmt, err);
	sqlite3_free(cols);
	sqlite3_free(text);
	return ret;
}

/*
 * Whether the run just stored as run_id repeats one stored before: its
 * id in *same, else 0.  page_shift reads sizes in pages of the layouts'
 * names.
 */
static int find_repeat(struct swt_store *st, uint32_t page_shift, int64_t run_id, int64_t *same,
		       struct swt_err *err)
{
	sqlite3_stmt *s = NULL;
	int ret = prepare_repeat(st, &s, err), rc;

	*same = 0;
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, run_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *was = (const char *)sqlite3_column_text(s, 1);
		const char *now = (const char *)sqlite3_column_text(s, 2);
		char *canon = NULL;
		int alike = was && now && !strcmp(was, now), why = 0;

		/*
		 * n's name is canonical (replay stores no other); o's may be an
		 * older replay's spelling of it ("04"), or one this swaptrace
		 * does not read (a later one's), which is then only itself
		 */
		if (!alike && was && now)
			why = swt_layout_canonical(was, page_shift, &canon, NULL);
		alike |= canon && !strcmp(canon, now);
		free(canon);
		if (why == -SWT_ENOMEM) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			break;
		}
		if (alike) {
			*same = sqlite3_column_int64(s, 0);
			break;
		}
	}
	if (!ret && rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = swt_store_sql_error(st, err, "looking for an identical stored run");
	sqlite3_finalize(s);
	return ret;
}

/* The run's rows as they come; *run_id set. */
static int put_run(struct swt_store *st, const struct swt_replay_input *in,
		   const struct swt_replay_config *cfg, const struct swt_replay_result *r,
		   int64_t *run_id, struct swt_err *err)
{
	sqlite3_stmt *run = NULL, *part = NULL, *hist = NULL, *series = NULL;
	uint64_t *all_win = NULL, *all_vpage_win = NULL, *all_req = NULL;
	char created[32], params[1024];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	int ret;

	gmtime_r(&now, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	swt_policy_params_text(cfg->keys, cfg->values, cfg->nparams, params, sizeof(params));
	ret = swt_store_prepare(st,
		"INSERT INTO run (created, policy, params, page_cluster, cache_pages, layout,"
		" approximate, faults, misses, hits, pages_read, ra_pages, ra_hits, ra_wasted,"
		" read_requests, read_merges, accuracy, coverage, avg_request_kib, replay_ns, loop_ns,"
		" inactive_fraction, max_request_kib)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &run, err);
	if (!ret)
		ret = swt_store_prepare(st,
			"INSERT INTO run_partition (run_id, partition, dev, faults, misses, hits,"
			" pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges, accuracy,"
			" coverage, avg_request_kib) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &part, err);
	if (!ret)
		ret = swt_store_prepare(st,
			"INSERT INTO run_histogram (run_id, partition, kind, bucket, count)"
			" VALUES (?,?,?,?,?)", &hist, err);
	if (!ret)
		ret = swt_store_prepare(st,
			"INSERT INTO run_series (run_id, partition, second, faults, hits, misses,"
			" pages_read) VALUES (?,?,?,?,?,?,?)", &series, err);
	if (ret)
		goto out;

	sqlite3_bind_text(run, 1, created, -1, SQLITE_TRANSIENT);
	/* the parameters, given or default, are in their own column */
	if (cfg->policy_spec)
		sqlite3_bind_text(run, 2, cfg->policy_spec,
				  (int)swt_policy_spec_name_len(cfg->policy_spec), SQLITE_TRANSIENT);
	else
		sqlite3_bind_text(run, 2, cfg->policy->name, -1, SQLITE_TRANSIENT);
	params[0] ? sqlite3_bind_text(run, 3, params, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(run, 3);
	sqlite3_bind_int64(run, 4, cfg->page_cluster);
	sqlite3_bind_int64(run, 5, (int64_t)cfg->cache_pages);
	sqlite3_bind_text(run, 6, cfg->layout_name ? cfg->layout_name : "traced", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(run, 7, in->approximate);
	bind_metrics(run, 8, &r->total, in->page_shift);
	sqlite3_bind_int64(run, 20, (int64_t)r->elapsed_ns);
	sqlite3_bind_int64(run, 21, (int64_t)r->loop_ns);
	/* the model's settings: a run at other ones is another answer */
	cfg->inactive_fraction > 0 ? sqlite3_bind_double(run, 22, cfg->inactive_fraction)
				   : sqlite3_bind_null(run, 22);
	sqlite3_bind_int64(run, 23, (int64_t)((((uint64_t)(cfg->max_request_pages ?
							  cfg->max_request_pages : 1))
					       << in->page_shift) >> 10));
	ret = step(st, run, err, "insert run");
	if (ret)
		goto out;
	*run_id = sqlite3_last_insert_rowid(swt_store_db(st));
	/*
	 * A run deleted by hand (plain sqlite3 does not enforce the foreign
	 * keys) may have left rows under the id SQLite now hands out again.
	 */
	for (i = 0; i < 3 && !ret; i++) {
		static const char *const children[] = { "run_partition", "run_histogram", "run_series" };
		char sql[96];

		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE run_id = %lld", children[i],
			 (long long)*run_id);
		ret = swt_store_exec(st, sql, err);
	}
	if (ret)
		goto out;

	all_win = calloc(SWT_REPLAY_MAX_WINDOW + 1, sizeof(*all_win));
	all_vpage_win = calloc(SWT_REPLAY_MAX_WINDOW + 1, sizeof(*all_vpage_win));
	all_req = calloc(r->max_request_pages + 1, sizeof(*all_req));
	if (!all_win || !all_vpage_win || !all_req) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < r->nr_parts && !ret; i++) {
		const struct swt_replay_part *p = &r->parts[i];

		sqlite3_bind_int64(part, 1, *run_id);
		sqlite3_bind_int64(part, 2, in->areas[i].id);
		sqlite3_bind_text(part, 3, in->areas[i].dev, -1, SQLITE_STATIC);
		bind_metrics(part, 4, &p->m, in->page_shift);
		ret = step(st, part, err, "insert run_partition");
		if (!ret)
			ret = put_hist(st, hist, *run_id, in->areas[i].id, "ra_window", p->window_hist,
				       SWT_REPLAY_MAX_WINDOW + 1, err);
		if (!ret)
			ret = put_hist(st, hist, *run_id, in->areas[i].id, "ra_window_vma",
				       p->vpage_window_hist, SWT_REPLAY_MAX_WINDOW + 1, err);
		if (!ret)
			ret = put_hist(st, hist, *run_id, in->areas[i].id, "request_pages",
				       p->request_hist, r->max_request_pages + 1, err);
		for (size_t b = 0; b <= SWT_REPLAY_MAX_WINDOW; b++) {
			all_win[b] += p->window_hist[b];
			all_vpage_win[b] += p->vpage_window_hist[b];
		}
		for (size_t b = 0; b <= r->max_request_pages; b++)
			all_req[b] += p->request_hist[b];
		for (size_t sec = 0; sec < p->nr_seconds && !ret; sec++) {
			const struct swt_replay_series_point *pt = &p->series[sec];

			if (!pt->faults && !pt->pages_read)
				continue;
			sqlite3_bind_int64(series, 1, *run_id);
			sqlite3_bind_int64(series, 2, in->areas[i].id);
			sqlite3_bind_int64(series, 3, (int64_t)pt->second);
			sqlite3_bind_int64(series, 4, (int64_t)pt->faults);
			sqlite3_bind_int64(series, 5, (int64_t)pt->hits);
			sqlite3_bind_int64(series, 6, (int64_t)pt->misses);
			sqlite3_bind_int64(series, 7, (int64_t)pt->pages_read);
			ret = step(st, series, err, "insert run_series");
		}
	}
	if (!ret)
		ret = put_hist(st, hist, *run_id, -1, "ra_window", all_win, SWT_REPLAY_MAX_WINDOW + 1, err);
	if (!ret)
		ret = put_hist(st, hist, *run_id, -1, "ra_window_vma", all_vpage_win,
			       SWT_REPLAY_MAX_WINDOW + 1, err);
	if (!ret)
		ret = put_hist(st, hist, *run_id, -1, "request_pages", all_req, r->max_request_pages + 1,
			       err);
out:
	free(all_win);
	free(all_vpage_win);
	free(all_req);
	sqlite3_finalize(run);
	sqlite3_finalize(part);
	sqlite3_finalize(hist);
	sqlite3_finalize(series);
	return ret;
}

int swt_replay_store(struct swt_store *st, const struct swt_replay_input *in,
		     const struct swt_replay_config *cfg, const struct swt_replay_result *r,
		     int64_t *run_id, int *repeated, struct swt_err *err)
{
	int64_t same = 0;
	int ret;

	*repeated = 0;
	/*
	 * Stored, then compared with SQL against what is there, and taken
	 * back if it repeats a run: the database is then as it was, and
	 * the next run takes the id this one had
	 */
	ret = swt_store_exec(st, "SAVEPOINT swt_run", err);
	if (ret)
		return ret;
	ret = put_run(st, in, cfg, r, run_id, err);
	if (!ret)
		ret = find_repeat(st, in->page_shift, *run_id, &same, err);
	if (ret || same) {
		sqlite3_exec(swt_store_db(st), "ROLLBACK TO swt_run", NULL, NULL, NULL);
		if (!ret) {
			*run_id = same;
			*repeated = 1;
		}
	}
	if (!ret)
		ret = swt_store_exec(st, "RELEASE swt_run", err);
	else
		sqlite3_exec(swt_store_db(st), "RELEASE swt_run", NULL, NULL, NULL);
	return ret;
}
