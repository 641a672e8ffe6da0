/*
 * The last steps of ingest: host facts (capture row, vmstat, devices, swap
 * areas and their extents, process names) and the indexes users query by.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "util.h"

static void bind_meta_int(sqlite3_stmt *s, int col, int64_t v)
{
	if (v == SWT_META_UNKNOWN)
		sqlite3_bind_null(s, col);
	else
		sqlite3_bind_int64(s, col, v);
}

static void bind_opt_text(sqlite3_stmt *s, int col, const char *v)
{
	if (v)
		sqlite3_bind_text(s, col, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, col);
}

static int step_done(struct swt_store *st, sqlite3_stmt *s, struct swt_err *err,
		     const char *what)
{
	int ret = 0;

	if (sqlite3_step(s) != SQLITE_DONE)
		ret = swt_store_sql_error(st, err, what);
	sqlite3_reset(s);
	return ret;
}

static int write_capture(struct swt_store *st, const struct swt_capture_facts *cf,
			 const struct swt_meta *m, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret;

	ret = swt_store_prepare(st,
		"INSERT INTO capture (id, name, kernel, page_size, ncpus, page_cluster,"
		" vma_ra_enabled, mem_total_kib, mem_limit_bytes, working_set_bytes, workload,"
		" command, clock, probes, layout_source, first_ns, last_ns, lost_events)"
		" VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &s, err);
	if (ret)
		return ret;
	bind_opt_text(s, 1, cf->name);
	bind_opt_text(s, 2, m ? m->kernel : NULL);
	bind_meta_int(s, 3, cf->page_size);
	bind_meta_int(s, 4, m ? m->ncpus : SWT_META_UNKNOWN);
	bind_meta_int(s, 5, m ? m->page_cluster : SWT_META_UNKNOWN);
	bind_meta_int(s, 6, m ? m->vma_ra_enabled : SWT_META_UNKNOWN);
	bind_meta_int(s, 7, m ? m->mem_total_kib : SWT_META_UNKNOWN);
	bind_meta_int(s, 8, m ? m->mem_limit_bytes : SWT_META_UNKNOWN);
	bind_meta_int(s, 9, m ? m->working_set_bytes : SWT_META_UNKNOWN);
	bind_opt_text(s, 10, m ? m->workload : NULL);
	bind_opt_text(s, 11, m ? m->command : NULL);
	bind_opt_text(s, 12, cf->clock ? cf->clock : (m ? m->clock : NULL));
	bind_opt_text(s, 13, m && m->probes ? m->probes : "none");
	bind_opt_text(s, 14, cf->layout_source);
	if (cf->first_ns <= cf->last_ns) {
		sqlite3_bind_int64(s, 15, (int64_t)cf->first_ns);
		sqlite3_bind_int64(s, 16, (int64_t)cf->last_ns);
	}
	sqlite3_bind_int64(s, 17, cf->lost_events);
	ret = step_done(st, s, err, "insert capture");
	sqlite3_finalize(s);
	return ret;
}

static int write_meta_tables(struct swt_store *st, const struct swt_meta *m, struct swt_err *err)
{
	sqlite3_stmt *s;
	size_t i;
	int ret;

	ret = swt_store_prepare(st, "INSERT INTO capture_fact (section, key, value) VALUES (?,?,?)",
				&s, err);
	for (i = 0; !ret && i < m->nr_facts; i++) {
		sqlite3_bind_text(s, 1, m->facts[i].section, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, m->facts[i].key, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, m->facts[i].value, -1, SQLITE_STATIC);
		ret = step_done(st, s, err, "insert capture_fact");
	}
	sqlite3_finalize(s);
	if (ret)
		return ret;
	ret = swt_store_prepare(st, "INSERT INTO vmstat (name, before, after, delta) VALUES (?,?,?,?)",
				&s, err);
	for (i = 0; !ret && i < m->nr_vmstat; i++) {
		const struct swt_meta_vmstat *v = &m->vmstat[i];

		if (v->delta == SWT_META_UNKNOWN)
			continue;
		sqlite3_bind_text(s, 1, v->name, -1, SQLITE_STATIC);
		bind_meta_int(s, 2, v->before);
		bind_meta_int(s, 3, v->after);
		sqlite3_bind_int64(s, 4, v->delta);
		ret = step_done(st, s, err, "insert vmstat");
	}
	sqlite3_finalize(s);
	return ret;
}

static int write_device(struct swt_store *st, sqlite3_stmt *s, uint32_t dev, const char *path,
			int64_t rotational, struct swt_err *err)
{
	char name[32];

	sqlite3_bind_int64(s, 1, dev);
	sqlite3_bind_int64(s, 2, swt_dev_major(dev));
	sqlite3_bind_int64(s, 3, swt_dev_minor(dev));
	sqlite3_bind_text(s, 4, swt_dev_format(dev, name, sizeof(name)), -1, SQLITE_TRANSIENT);
	bind_opt_text(s, 5, path);
	bind_meta_int(s, 6, rotational);
	return step_done(st, s, err, "insert device");
}


/* Devices, and the swap areas as ingest used them (stated or assumed). */
static int write_layout(struct swt_store *st, const struct swt_capture_facts *cf,
			const struct swt_meta *meta, swt_warn_fn warn, void *warn_ctx,
			struct swt_err *err)
{
	const struct swt_layout *l = cf->layout;
	sqlite3_stmt *dev_stmt = NULL, *area = NULL, *ext = NULL;
	size_t i;
	int ret;

	ret = swt_store_prepare(st,
		"INSERT INTO device (dev, major, minor, name, path, rotational) VALUES (?,?,?,?,?,?)"
		" ON CONFLICT (dev) DO UPDATE SET path = coalesce(excluded.path, path),"
		" rotational = coalesce(excluded.rotational, rotational)", &dev_stmt, err);
	if (!ret)
		ret = swt_store_prepare(st,
			"INSERT INTO swap_area (id, dev, path, type, priority, rotational, synchronous,"
			" start_sector, slots, size_kib, used_kib, assumed) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
			&area, err);
	if (!ret)
		ret = swt_store_prepare(st,
			"INSERT INTO swap_extent (area_id, first_slot, nr_slots, start_sector)"
			" VALUES (?,?,?,?)", &ext, err);
	if (ret)
		goto out;

	for (i = 0; i < cf->nr_devs && !ret; i++)
		ret = write_device(st, dev_stmt, cf->devs[i], NULL, SWT_META_UNKNOWN, err);
	for (i = 0; i < l->nr_areas && !ret; i++) {
		const struct swt_layout_area *a = &l->areas[i];
		const struct swt_meta_area *m = a->meta;
		int is_file = m && m->type && !strcmp(m->type, "file");

		ret = write_device(st, dev_stmt, a->dev, m && !is_file ? m->path : NULL,
				   m ? m->rotational : SWT_META_UNKNOWN, err);
		if (ret)
			break;
		sqlite3_bind_int64(area, 1, a->id);
		sqlite3_bind_int64(area, 2, a->dev);
		bind_opt_text(area, 3, m ? m->path : NULL);
		bind_opt_text(area, 4, m && m->type ? m->type : "partition");
		bind_meta_int(area, 5, m ? m->priority : SWT_META_UNKNOWN);
		bind_meta_int(area, 6, m ? m->rotational : SWT_META_UNKNOWN);
		bind_meta_int(area, 7, m ? m->synchronous : SWT_META_UNKNOWN);
		sqlite3_bind_int64(area, 8, (int64_t)(m ? m->start_sector : 0));
		bind_meta_int(area, 9, m ? m->slots : SWT_META_UNKNOWN);
		bind_meta_int(area, 10, m ? m->size_kib : SWT_META_UNKNOWN);
		bind_meta_int(area, 11, m ? m->used_kib : SWT_META_UNKNOWN);
		sqlite3_bind_int64(area, 12, !m);
		ret = step_done(st, area, err, "insert swap_area");
		for (size_t e = 0; e < a->nr_extents && !ret; e++) {
			sqlite3_bind_int64(ext, 1, a->id);
			sqlite3_bind_int64(ext, 2, (int64_t)a->extents[e].first_slot);
			sqlite3_bind_int64(ext, 3, (int64_t)a->extents[e].nr_slots);
			sqlite3_bind_int64(ext, 4, (int64_t)a->extents[e].start_sector);
			ret = step_done(st, ext, err, "insert swap_extent");
		}
	}
	if (!ret && l->assumed && l->nr_areas && warn) {
		char why[PATH_MAX + 64] = "no metadata file", msg[PATH_MAX + 200];

		/* a metadata file was read: say it had no areas, not that there was none */
		if (meta && meta->path)
			snprintf(why, sizeof(why), "'%s' holds no swap area%s", meta->path,
				 meta->swap_lines ? " on a block device" : "s");
		snprintf(msg, sizeof(msg), "no swap layout given (%s, no --swap): every device with "
			 "I/O is taken as a swap area starting at sector 0", why);
		warn(warn_ctx, msg);
	}
out:
	sqlite3_finalize(dev_stmt);
	sqlite3_finalize(area);
	sqlite3_finalize(ext);
	return ret;
}

/*
 * Ingest attaches each swap read to its task's latest user fault while
 * streaming, which needs faults and block events in one time-ordered
 * source.  When they came from different sources (faults in trace.dat,
 * block I/O in blktrace files), attach them here instead.
 */
static int attach_faults_across_sources(struct swt_store *st, int64_t page_size,
					struct swt_err *err)
{
	char sql[1024];

	snprintf(sql, sizeof(sql),
		 "CREATE INDEX fault_pid_ts ON fault (pid, ts);"
		 "UPDATE swap_in SET fault_id = (SELECT f.id FROM fault f WHERE f.pid = swap_in.pid"
		 "                               AND f.ts <= swap_in.ts ORDER BY f.ts DESC LIMIT 1)"
		 " WHERE fault_id IS NULL;"
		 "UPDATE swap_in SET address = (SELECT address & ~%lld FROM fault"
		 "                              WHERE id = swap_in.fault_id)"
		 " WHERE fault_id IS NOT NULL AND address IS NULL;",
		 (long long)(page_size - 1));
	return swt_store_exec(st, sql, err);
}

static int write_tasks(struct swt_store *st, const struct swt_capture_facts *cf,
		       struct swt_err *err)
{
	sqlite3_stmt *s;
	size_t i;
	int ret;

	ret = swt_store_prepare(st, "INSERT OR REPLACE INTO task (pid, comm) VALUES (?,?)", &s, err);
	for (i = 0; !ret && i < cf->nr_tasks; i++) {
		sqlite3_bind_int64(s, 1, cf->task_pids[i]);
		sqlite3_bind_text(s, 2, cf->task_comms[i], -1, SQLITE_STATIC);
		ret = step_done(st, s, err, "insert task");
	}
	sqlite3_finalize(s);
	return ret;
}

int swt_store_write_facts(struct swt_store *st, const struct swt_capture_facts *cf,
			  const struct swt_meta *meta, swt_warn_fn warn, void *warn_ctx,
			  struct swt_err *err)
{
	int ret;

	ret = write_capture(st, cf, meta, err);
	if (!ret && meta)
		ret = write_meta_tables(st, meta, err);
	if (!ret && meta)
		ret = swt_store_write_maps(st, meta, warn, warn_ctx, err);
	if (!ret)
		ret = write_layout(st, cf, meta, warn, warn_ctx, err);
	if (!ret)
		ret = write_tasks(st, cf, err);
	if (!ret && meta)
		ret = swt_store_write_threads(st, meta, err);
	if (!ret)
		ret = swt_store_write_thread_events(st, err);
	if (!ret && cf->faults_elsewhere)
		ret = attach_faults_across_sources(st, cf->page_size, err);
	return ret;
}
