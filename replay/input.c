/*
 * Loading what a replay needs from an ingested capture: swap areas, the
 * demand fault stream, the swap-out stream, VMAs and capture facts.
 *
 * The demand stream is exact when the capture was taken with page-cluster
 * 0 (every swap read is the faulting page) or on a synchronous device;
 * swap_in.demand says so.  Otherwise block reads mix demand and readahead
 * and no trace can tell them apart: the caller must ask for the documented
 * approximation, a stream reconstructed from the reads and the faults
 * (reconstruct.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

/* A VMA boundary is guessed where fault addresses leave a gap this wide. */
#define VMA_GAP_PAGES 512

void swt_replay_input_free(struct swt_replay_input *in)
{
	if (!in)
		return;
	swt_replay_input_unprepare(in);
	free(in->areas);
	free(in->faults);
	free(in->outs);
	free(in->vmas);
	free(in->frees);
	swt_map_release(&in->processes);
	free(in);
}

int32_t swt_replay_process_of(const struct swt_replay_input *in, int64_t pid)
{
	uint64_t tgid;

	if (in->processes.len && pid > 0 && swt_map_get(&in->processes, (uint64_t)pid, 0, &tgid))
		return (int32_t)tgid;
	return pid < INT32_MIN || pid > INT32_MAX ? -1 : (int32_t)pid;
}

/* task.tgid of the threads a capture listed (meta.txt threads lines). */
static int load_processes(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc;

	/*
	 * A database older than task.tgid (version 4, read as it is by replay
	 * --no-store) records no thread's process: every task is its own, as
	 * the NULL tgid its upgrade would add says
	 */
	if (swt_store_schema_version(st) < SWT_SCHEMA_TASK_TGID)
		return 0;
	ret = swt_store_prepare(st, "SELECT pid, tgid FROM task WHERE tgid IS NOT NULL AND tgid != pid"
				" AND pid > 0 AND tgid > 0 AND tgid <= 2147483647", &s, err);
	if (ret)
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if ((!in->processes.slots && swt_map_init(&in->processes, 64)) ||
		    swt_map_put(&in->processes, (uint64_t)sqlite3_column_int64(s, 0), 0,
				(uint64_t)sqlite3_column_int64(s, 1))) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : swt_store_sql_error(st, err, "reading the tasks' processes");
}

int64_t swt_replay_default_cache_pages(const struct swt_replay_input *in)
{
	if (in->mem_limit_bytes > 0)
		return in->mem_limit_bytes >> in->page_shift;
	if (in->working_set_bytes > 0)
		return in->working_set_bytes >> in->page_shift;
	return -1;
}

static int load_capture(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	sqlite3_stmt *s;
	int64_t first_ns;
	int ret;

	ret = swt_store_prepare(st,
		"SELECT page_size, page_cluster, vma_ra_enabled, mem_limit_bytes,"
		" working_set_bytes, first_ns, kernel, ncpus FROM capture", &s, err);
	if (ret)
		return ret;
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite3_finalize(s);
		return swt_error(err, SWT_EFORMAT, "'%s': no capture row: not an ingested database",
				 swt_store_path(st));
	}
	{
		int64_t ps = swt_column_int(s, 0, 4096), vra = swt_column_int(s, 2, -1);

		/*
		 * what ingest stores (a power of two, 512 B..1 GiB, as meta.txt
		 * takes it; a flag 0, 1 or unknown): 0, 3000 and -4096 were taken
		 * as 4 KiB, 2^40 and 2 MiB as 1 MiB, and a vma_ra_enabled of 2^32
		 * cut to 0, which chose auto's mode
		 */
		if (ps < 512 || ps > (1 << 30) || (ps & (ps - 1)) ||
		    (sqlite3_column_type(s, 0) != SQLITE_INTEGER &&
		     sqlite3_column_type(s, 0) != SQLITE_NULL) || vra < -1 || vra > 1) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_EFORMAT, "'%s': its capture row's %s is not a "
					 "database ingest wrote", swt_store_path(st),
					 vra < -1 || vra > 1 ? "vma_ra_enabled" : "page_size");
		}
		/*
		 * VMA windows are clipped to the 2 MiB a page table covers, and a
		 * request to --max-request-kib's 1280 KiB: pages no larger than 1 MiB
		 */
		if (ps > (1 << 20)) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_EUSAGE, "'%s': pages of %lld KiB: replay models "
					 "pages of 1 MiB at most", swt_store_path(st),
					 (long long)(ps >> 10));
		}
		in->page_shift = 9;
		while ((1ll << in->page_shift) < ps)
			in->page_shift++;
		in->vma_ra_enabled = (int)vra;
	}
	{
		/* the kernel takes 0..31; read whole, an edited 2^32 + 3 is not page-cluster 3 */
		int64_t pc = swt_column_int(s, 1, -1);

		in->traced_page_cluster = pc >= 0 && pc <= 31 ? (int)pc : -1;
	}
	in->mem_limit_bytes = swt_column_int(s, 3, -1);
	in->working_set_bytes = swt_column_int(s, 4, -1);
	first_ns = swt_column_int(s, 5, -1);
	if (sqlite3_column_type(s, 6) == SQLITE_TEXT)
		snprintf(in->kernel, sizeof(in->kernel), "%s", (const char *)sqlite3_column_text(s, 6));
	{
		int64_t ncpus = swt_column_int(s, 7, 0);

		if (ncpus < 0 || ncpus > SWT_MAX_CPUS) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_EFORMAT, "'%s': capture.ncpus is %lld (0 to %d): not "
					 "a database ingest wrote", swt_store_path(st),
					 (long long)ncpus, SWT_MAX_CPUS);
		}
		in->ncpus = (unsigned)ncpus;
	}
	sqlite3_finalize(s);
	/* the series' second 0: as the report takes it when the capture row has no times */
	if (first_ns < 0)
		first_ns = swt_store_query_int(st, "SELECT min(t) FROM (SELECT min(ts) AS t FROM swap_in"
					       " UNION ALL SELECT min(ts) FROM swap_out)", 0);
	in->first_ns = first_ns > 0 ? (uint64_t)first_ns : 0;
	return 0;
}

/*
 * The areas, each with its highest slot in either stream: a slot the replay
 * cannot index is refused here, once for every row, before anything is
 * sized by it (an area of unknown size is as big as its slots, and the
 * tables below and the engine's as big as that).
 */
static int load_areas(struct swt_store *st, struct swt_replay_input *in,
		      const struct swt_store_slot_census *census, struct swt_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t cap = 0;
	uint64_t *nslots;
	struct swt_err why = { 0 };
	int ret, rc;

	ret = swt_store_prepare(st,
		"SELECT a.id, coalesce(d.name, a.dev), a.slots, a.rotational, a.synchronous,"
		"       a.priority FROM swap_area a LEFT JOIN device d ON d.dev = a.dev"
		"  ORDER BY a.id", &s, err);
	if (ret)
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct swt_replay_area *a;
		int64_t slots, top, rotational, synchronous;
		int idx;

		if (swt_grow((void **)&in->areas, &cap, in->nr_areas + 1, sizeof(*in->areas))) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		a = &in->areas[in->nr_areas++];
		a->id = sqlite3_column_int64(s, 0);
		snprintf(a->dev, sizeof(a->dev), "%s", (const char *)sqlite3_column_text(s, 1));
		idx = swt_store_census_area(census, a->id);
		top = idx >= 0 ? census->top[idx] : 0;
		if (top > 0 && (uint64_t)top >= SWT_SLOT_LIMIT) {
			/* the engine's words (engine.c), which checks inputs built otherwise */
			ret = swt_error(err, SWT_EUSAGE, "'%s': swap area %s: slot %lld is beyond what "
					"the replay handles (2^32)", swt_store_path(st), a->dev,
					(long long)top);
			goto out;
		}
		/* a slot past an area of known size: refused before, by swt_store_check_slots */
		slots = swt_column_int(s, 2, 0);
		a->slots_guessed = !(slots > 0 && slots < ((int64_t)1 << 40));
		a->slots = a->slots_guessed ? (uint64_t)top + 1 : (uint64_t)slots;
		a->slots_top = (uint64_t)(top > 0 ? top : 0);
		rotational = swt_column_int(s, 3, -1);
		synchronous = swt_column_int(s, 4, 0);
		/* flags cut to an int: a rotational of 2^32 read as 0 made auto take VMA readahead */
		if (rotational < -1 || rotational > 1 || synchronous < -1 || synchronous > 1) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': swap area %s: rotational or "
					"synchronous is not 0 or 1: not a database ingest wrote",
					swt_store_path(st), a->dev);
			goto out;
		}
		a->rotational = (int)rotational;
		a->synchronous = (int)synchronous;
		a->priority = swt_column_int(s, 5, 0);
	}
	if (rc != SQLITE_DONE)
		ret = swt_store_sql_error(st, err, "swap areas");
out:
	sqlite3_finalize(s);
	if (ret)
		return ret;
	/*
	 * The slot tables are as long as the highest slot used, not as the
	 * slots used: a few pages at the far end of a huge area would take
	 * more memory than the host has.  Said before anything is sized.
	 */
	nslots = calloc(in->nr_areas ? in->nr_areas : 1, sizeof(*nslots));
	if (!nslots)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < in->nr_areas; i++)
		nslots[i] = in->areas[i].slots_top + 1;
	ret = swt_replay_slot_tables_fit(in, nslots, &why);
	free(nslots);
	return ret ? swt_error(err, why.code, "'%s': %s", swt_store_path(st), why.msg) : 0;
}

/*
 * The engine counts the faults' seconds in 32 bits: a span beyond them is a
 * damaged timestamp, refused here, naming the database.
 */
static int check_span(struct swt_store *st, const struct swt_replay_input *in, struct swt_err *err)
{
	uint64_t first_second;

	if (swt_replay_fault_span_seconds(in, &first_second) <= SWT_REPLAY_MAX_SPAN_SECONDS)
		return 0;
	/* faults come in time order (ORDER BY ts) */
	return swt_error(err, SWT_EFORMAT, "'%s': the swap faults span %.0f years (%llu to %llu ns), "
			 "more than the replay counts (136): a damaged timestamp?", swt_store_path(st),
			 (double)(in->faults[in->nr_faults - 1].ts - in->faults[0].ts) / 31557600e9,
			 (unsigned long long)in->faults[0].ts,
			 (unsigned long long)in->faults[in->nr_faults - 1].ts);
}

/* Times are nanoseconds of the trace clock, never negative from ingest. */
static int check_times(struct swt_store *st, struct swt_err *err)
{
	static const char *const tables[] = { "swap_in", "swap_out", "fault", "swap_probe" };

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char sql[128];
		int64_t ts;

		snprintf(sql, sizeof(sql), "SELECT min(ts) FROM %s", tables[i]);
		ts = swt_store_query_int(st, sql, 0);
		if (ts < 0)
			return swt_error(err, SWT_EFORMAT, "'%s': a %s row at time %lld ns: not a "
					 "database ingest wrote", swt_store_path(st), tables[i],
					 (long long)ts);
	}
	return 0;
}

int swt_replay_area_index(const struct swt_replay_input *in, int64_t id)
{
	for (size_t i = 0; i < in->nr_areas; i++)
		if (in->areas[i].id == id)
			return (int)i;
	return -1;
}

/*
 * An area whose kind was not recorded (-1: ingested without metadata)
 * counts as rotational, as the loop and virtio disks swap is most often
 * tested on report themselves, and as the layouts take it.
 */
int swt_replay_any_rotational(const struct swt_replay_input *in)
{
	for (size_t i = 0; i < in->nr_areas; i++)
		if (in->areas[i].rotational != 0)
			return 1;
	return 0;
}

const char *swt_replay_nothing_to_replay(struct swt_store *st)
{
	/* the checks swt_replay_input_load and the sweep make, in their order */
	if (!swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM swap_area)", 0))
		return "no swap areas";
	if (!swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM swap_in)", 0))
		return "no swap-in faults in this capture";
	if (!swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM swap_in WHERE "
				 SWT_NOT_SWAPOFF_SQL ")", 0))
		return "every swap-in was read by swapoff, none faulted";
	/* load_faults leaves out a swap-in of an area the database does not list */
	if (!swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM swap_in WHERE area_id IN"
				 " (SELECT id FROM swap_area) AND " SWT_NOT_SWAPOFF_SQL ")", 0))
		return "every swap-in names a swap area the database does not list (swap_area rows "
		       "missing)";
	return NULL;
}

int swt_replay_multigen_lru(struct swt_store *st, char *value, size_t len)
{
	sqlite3_stmt *s;
	int on = -1;

	if (len)
		value[0] = '\0';
	if (!swt_store_query_prepare(st, "SELECT value FROM capture_fact WHERE section = '' AND "
				     "key = 'lru_gen' ORDER BY seq DESC LIMIT 1", &s))
		return -1;
	if (swt_store_query_step(st, s) && sqlite3_column_type(s, 0) == SQLITE_TEXT) {
		const char *text = (const char *)sqlite3_column_text(s, 0);
		char *end;
		unsigned long long bits;

		snprintf(value, len, "%s", text);
		errno = 0;
		bits = strtoull(text, &end, 0);
		if (!strcmp(text, "absent"))
			on = 0;
		else if (end != text && !*end && !errno && text[0] != '-')
			on = bits & 1;	/* bit 0: the main switch */
	}
	sqlite3_finalize(s);
	return on;
}

int64_t swt_replay_unseen_swapins(struct swt_store *st, int64_t *zero, int64_t *zswap)
{
	*zero = swt_store_query_int(st, "SELECT delta FROM vmstat WHERE name = 'swpin_zero'", -1);
	*zswap = swt_store_query_int(st, "SELECT delta FROM vmstat WHERE name = 'zswpin'", -1);
	/* past 2^62 is no counter's delta over a capture (an edited row), as report takes it */
	if (*zero > ((int64_t)1 << 62))
		*zero = -1;
	if (*zswap > ((int64_t)1 << 62))
		*zswap = -1;
	return (*zero > 0 ? *zero : 0) + (*zswap > 0 ? *zswap : 0);
}

enum swt_stream_kind swt_replay_stream_kind(struct swt_store *st)
{
	int64_t total = swt_store_query_int(st, "SELECT count(*) FROM swap_in", 0);
	int64_t demand = swt_store_query_int(st, "SELECT count(*) FROM swap_in WHERE demand = 1", 0);

	if (total <= demand)
		return SWT_STREAM_EXACT;
	/* swap-entry probes name every fault's entry: exact at any page-cluster */
	if (swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM swap_probe WHERE kind = 'fault')", 0))
		return SWT_STREAM_PROBES;
	return SWT_STREAM_MIXED;
}

/*
 * The demand faults in time order, by id on a tie.  Read in id order first,
 * which needs no sort (ingest writes them in time order); a database
 * written otherwise (in_order 0) is read again, sorted by SQLite.
 */
static int load_exact_faults(struct swt_store *st, struct swt_replay_input *in, int by_id,
			     size_t rows, int *in_order, struct swt_err *err)
{
#define EXACT_SQL "SELECT ts, area_id, slot, address, pid FROM swap_in WHERE demand = 1" \
		  " AND " SWT_NOT_SWAPOFF_SQL " ORDER BY "
	sqlite3_stmt *s;
	size_t cap;
	int ret, rc;

	*in_order = 1;
	ret = swt_store_prepare(st, by_id ? EXACT_SQL "id" : EXACT_SQL "ts, id", &s, err);
#undef EXACT_SQL
	if (ret)
		return ret;
	free(in->faults);
	in->nr_faults = 0;
	swt_reserve((void **)&in->faults, &cap, rows, sizeof(*in->faults));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct swt_replay_fault *f;
		int idx = swt_replay_area_index(in, sqlite3_column_int64(s, 1));

		if (idx < 0)
			continue;
		if (swt_grow((void **)&in->faults, &cap, in->nr_faults + 1, sizeof(*in->faults))) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		f = &in->faults[in->nr_faults++];
		f->ts = (uint64_t)sqlite3_column_int64(s, 0);
		if (in->nr_faults > 1 && f->ts < f[-1].ts)
			*in_order = 0;
		f->area = (uint32_t)idx;
		f->slot = (uint64_t)sqlite3_column_int64(s, 2);
		f->vpage = (uint64_t)swt_column_int(s, 3, 0) >> in->page_shift;
		f->pid = swt_replay_process_of(in, swt_column_int(s, 4, -1));
		f->vma = -1;
		f->out = -1;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(st, err, "swap-in stream");
	return 0;
}

static int load_faults(struct swt_store *st, struct swt_replay_input *in, int approximate,
		       struct swt_err *err)
{
	enum swt_stream_kind kind = swt_replay_stream_kind(st);
	size_t rows;
	int ret, in_order;

	if (kind == SWT_STREAM_PROBES)
		return swt_replay_probe_stream(st, in, err);
	if (kind == SWT_STREAM_MIXED) {
		/* at page-cluster 0 every read is a demand read: ingest marks them all */
		if (in->traced_page_cluster == 0)
			return swt_error(err, SWT_EFORMAT,
					 "'%s': captured with page-cluster 0, yet some of its swap-ins "
					 "are not marked demand reads (swap_in.demand): not a database "
					 "ingest wrote", swt_store_path(st));
		if (!approximate && in->traced_page_cluster < 0)
			return swt_error(err, SWT_EUSAGE,
					 "'%s': the capture records no page-cluster (ingest it with --meta "
					 "FILE), so its swap reads may mix demand and readahead, which a "
					 "block trace cannot tell apart; or pass --approximate",
					 swt_store_path(st));
		if (!approximate)
			return swt_error(err, SWT_EUSAGE,
					 "'%s': captured with page-cluster %d: its swap reads mix demand "
					 "and readahead, which a block trace cannot tell apart; replay a "
					 "page-cluster 0 capture, or pass --approximate",
					 swt_store_path(st), in->traced_page_cluster);
		in->approximate = 1;
		return swt_replay_reconstruct(st, in, err);
	}
	rows = swt_store_table_rows(st, "swap_in");
	ret = load_exact_faults(st, in, 1, rows, &in_order, err);
	if (ret || in_order)
		return ret;
	return load_exact_faults(st, in, 0, rows, &in_order, err);
}

/*
 * The swap-outs in time order, by id on a tie: read in id order first, and
 * again sorted by SQLite only where the rows are not in time order (as
 * load_exact_faults).
 */
static int load_outs_in(struct swt_store *st, struct swt_replay_input *in, int by_id, size_t rows,
			int *in_order, struct swt_err *err)
{
	/* the CPU of the write (bio.cpu) picks the per-CPU caches and clusters of layouts */
#define OUTS_SQL "SELECT o.ts, o.area_id, o.slot, o.pid, b.cpu FROM swap_out o" \
		 " LEFT JOIN bio b ON b.id = o.bio_id ORDER BY "
	int ncpus_known = in->ncpus > 0;
	unsigned ncpus = in->ncpus;
	sqlite3_stmt *s;
	size_t cap;
	int ret, rc;

	*in_order = 1;
	ret = swt_store_prepare(st, by_id ? OUTS_SQL "o.id" : OUTS_SQL "o.ts, o.id", &s, err);
#undef OUTS_SQL
	if (ret)
		return ret;
	free(in->outs);
	in->nr_outs = 0;
	swt_reserve((void **)&in->outs, &cap, rows, sizeof(*in->outs));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct swt_replay_swapout *o;
		int idx = swt_replay_area_index(in, sqlite3_column_int64(s, 1));

		if (idx < 0)
			continue;
		if (swt_grow((void **)&in->outs, &cap, in->nr_outs + 1, sizeof(*in->outs))) {
			sqlite3_finalize(s);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		o = &in->outs[in->nr_outs++];
		o->ts = (uint64_t)sqlite3_column_int64(s, 0);
		if (in->nr_outs > 1 && o->ts < o[-1].ts)
			*in_order = 0;
		o->area = (uint32_t)idx;
		o->slot = (uint64_t)sqlite3_column_int64(s, 2);
		o->pid = (int32_t)swt_column_int(s, 3, -1);
		if (swt_column_int(s, 4, -1) >= SWT_MAX_CPUS) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': a swap-out's bio is on CPU %lld (below "
					"%d): not a database ingest wrote", swt_store_path(st),
					(long long)swt_column_int(s, 4, -1), SWT_MAX_CPUS);
			sqlite3_finalize(s);
			return ret;
		}
		o->cpu = (int32_t)swt_column_int(s, 4, -1);
		if (!ncpus_known && o->cpu >= 0 && (unsigned)o->cpu >= ncpus)
			ncpus = (unsigned)o->cpu + 1;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(st, err, "swap-out stream");
	in->ncpus = ncpus ? ncpus : 1;
	return 0;
}

static int load_outs(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	size_t rows = swt_store_table_rows(st, "swap_out");
	int in_order, ret = load_outs_in(st, in, 1, rows, &in_order, err);

	if (ret || in_order)
		return ret;
	return load_outs_in(st, in, 0, rows, &in_order, err);
}

/*
 * Each fault's page got its slot from the latest swap-out to that slot.
 * The tables are as big as the slots the streams touch, not the device (a
 * terabyte device would need a gigabyte each); a slot past the area's size
 * links to nothing.
 */
static int link_outs(struct swt_replay_input *in, struct swt_err *err)
{
	size_t na = in->nr_areas ? in->nr_areas : 1;
	int32_t **last = calloc(na, sizeof(*last));
	uint64_t *nslots = calloc(na, sizeof(*nslots));
	size_t fi = 0, oi = 0, i;
	int ret = 0;

	if (!last || !nslots) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < in->nr_areas; i++)
		nslots[i] = 1;
	for (i = 0; i < in->nr_faults; i++) {
		const struct swt_replay_fault *f = &in->faults[i];

		if (f->slot <= in->areas[f->area].slots && f->slot >= nslots[f->area])
			nslots[f->area] = f->slot + 1;
	}
	for (i = 0; i < in->nr_outs; i++) {
		const struct swt_replay_swapout *o = &in->outs[i];

		if (o->slot <= in->areas[o->area].slots && o->slot >= nslots[o->area])
			nslots[o->area] = o->slot + 1;
	}
	for (i = 0; i < in->nr_areas; i++) {
		last[i] = malloc(nslots[i] * sizeof(int32_t));
		if (!last[i]) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		memset(last[i], 0xff, nslots[i] * sizeof(int32_t));
	}
	while (fi < in->nr_faults) {
		if (oi < in->nr_outs && in->outs[oi].ts <= in->faults[fi].ts) {
			const struct swt_replay_swapout *o = &in->outs[oi];

			if (o->slot < nslots[o->area])
				last[o->area][o->slot] = (int32_t)oi;
			oi++;
			continue;
		}
		if (in->faults[fi].slot < nslots[in->faults[fi].area])
			in->faults[fi].out = last[in->faults[fi].area][in->faults[fi].slot];
		fi++;
	}
out:
	for (i = 0; last && i < in->nr_areas; i++)
		free(last[i]);
	free(last);
	free(nslots);
	return ret;
}

/* A mapping of table vma, in pages; which copy of the maps it comes from ranks it. */
struct map_vma {
	int32_t pid;
	int rank;		/* 0: the last copy of the maps, 1: the first */
	int shared;		/* perms hold 's' */
	uint64_t start, end;	/* pages, [start, end) */
	int32_t used;		/* its index in in->vmas, -1 until a fault falls in it */
};

static int cmp_map_vma(const void *a, const void *b)
{
	const struct map_vma *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The mapping of (pid, rank) that holds vpage, or NULL (the maps are sorted, disjoint). */
static struct map_vma *find_map_vma(struct map_vma *m, size_t n, int32_t pid, int rank,
				    uint64_t vpage)
{
	size_t lo = 0, hi = n;

	/* the last mapping that starts at or below vpage in (pid, rank) order */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct map_vma *x = &m[mid];

		if (x->pid < pid || (x->pid == pid && (x->rank < rank ||
						       (x->rank == rank && x->start <= vpage))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	m += lo - 1;
	return m->pid == pid && m->rank == rank && vpage < m->end ? m : NULL;
}

/*
 * VMA bounds from the memory maps the capture recorded (table vma): a fault
 * falls in the mapping of its task that holds its address in the last copy
 * of the maps, else in the first (a mapping gone by the end).  Faults in
 * neither keep vma -1, for infer_vmas.
 */
static int map_vmas(struct swt_store *st, struct swt_replay_input *in, struct swt_err *err)
{
	struct map_vma *m = NULL;
	size_t n = 0, cap = 0, vcap = 0;
	sqlite3_stmt *s;
	int ret, rc;

	ret = swt_store_prepare(st, "SELECT pid, snapshot = 'start', start, end,"
				" coalesce(substr(perms, 4, 1) = 's', 0) FROM vma", &s, err);
	if (ret)
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(s, 2), end = sqlite3_column_int64(s, 3);

		if (start < 0 || end <= start)
			continue;	/* not a mapping ingest would have stored */
		if (swt_grow((void **)&m, &cap, n + 1, sizeof(*m))) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		m[n].pid = (int32_t)sqlite3_column_int64(s, 0);
		m[n].rank = sqlite3_column_int(s, 1);
		m[n].shared = sqlite3_column_int(s, 4);
		m[n].start = (uint64_t)start >> in->page_shift;
		m[n].end = ((uint64_t)end + (1u << in->page_shift) - 1) >> in->page_shift;
		m[n].used = -1;
		n++;
	}
	if (rc != SQLITE_DONE) {
		ret = swt_store_sql_error(st, err, "reading the memory maps");
		goto out;
	}
	if (n)
		qsort(m, n, sizeof(*m), cmp_map_vma);
	for (size_t i = 0; n && i < in->nr_faults; i++) {
		struct swt_replay_fault *f = &in->faults[i];
		struct map_vma *x;

		if (!f->vpage)
			continue;
		x = find_map_vma(m, n, f->pid, 0, f->vpage);
		if (!x)
			x = find_map_vma(m, n, f->pid, 1, f->vpage);
		if (!x)
			continue;
		if (x->used < 0) {
			if (swt_grow((void **)&in->vmas, &vcap, in->nr_vmas + 1, sizeof(*in->vmas))) {
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				goto out;
			}
			in->vmas[in->nr_vmas] = (struct swt_replay_vma){
				.pid = x->pid, .shared = x->shared, .start = x->start, .end = x->end,
			};
			x->used = (int32_t)in->nr_vmas++;
		}
		f->vma = x->used;
		in->faults_in_maps++;
	}
out:
	sqlite3_finalize(s);
	free(m);
	return ret;
}

/*
 * VMA bounds of the faults the maps did not place, guessed per task from
 * fault addresses: a run of faulted pages with no gap wider than
 * VMA_GAP_PAGES is taken as one VMA spanning them.
 */
static int infer_vmas(struct swt_replay_input *in, struct swt_err *err)
{
	struct swt_key_value *v = malloc((in->nr_faults ? in->nr_faults : 1) * 2 * sizeof(*v));
	size_t n = 0, i, cap = in->nr_vmas;
	const struct swt_replay_fault *f = in->faults;

	if (!v)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (i = 0; i < in->nr_faults; i++)
		if (f[i].vpage && f[i].vma < 0)
			v[n++] = (struct swt_key_value){ .key = f[i].vpage, .value = i };
	/* by task, then address: by address first, then stably by task (signed, as pids compare) */
	swt_sort_key_values(v, v + n, n);
	for (i = 0; i < n; i++)
		v[i].key = (uint64_t)((int64_t)f[v[i].value].pid - INT32_MIN);
	swt_sort_key_values(v, v + n, n);
	for (i = 0; i < n;) {
		size_t j = i;
		struct swt_replay_vma *vma;

		while (j + 1 < n && f[v[j + 1].value].pid == f[v[i].value].pid &&
		       f[v[j + 1].value].vpage - f[v[j].value].vpage <= VMA_GAP_PAGES)
			j++;
		if (swt_grow((void **)&in->vmas, &cap, in->nr_vmas + 1, sizeof(*in->vmas))) {
			free(v);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		vma = &in->vmas[in->nr_vmas];
		vma->pid = f[v[i].value].pid;
		vma->shared = 0;	/* unknown without maps: taken as private */
		vma->start = f[v[i].value].vpage;
		vma->end = f[v[j].value].vpage + 1;
		for (size_t k = i; k <= j; k++)
			in->faults[v[k].value].vma = (int32_t)in->nr_vmas;
		in->nr_vmas++;
		i = j + 1;
	}
	in->faults_inferred = n;
	free(v);
	return 0;
}

int swt_replay_input_load(struct swt_store *st, int approximate, struct swt_replay_input **out,
			  struct swt_err *err)
{
	struct swt_replay_input *in = calloc(1, sizeof(*in));
	struct swt_store_slot_census census = { 0 };
	int ret;

	*out = NULL;
	if (!in)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	/*
	 * a slot a hand edit made text, or below 1, in any row of the streams
	 * or probes, whether its area is listed or not, refused as info and
	 * report refuse it, before anything else is said of the capture: the
	 * stream readers take every slot as a whole number from 1 up
	 */
	ret = swt_store_check_slots(st, &census, err);
	in->no_area = census.no_area_in;
	in->no_area_outs = census.no_area_out;
	if (!ret)
		ret = load_capture(st, in, err);
	if (!ret) {
		int recorded;

		in->request_limit_kib = swt_store_request_limit_kib(st, &recorded);
	}
	if (!ret)
		ret = check_times(st, err);
	if (!ret)
		ret = load_areas(st, in, &census, err);
	if (!ret && !in->nr_areas)
		ret = swt_error(err, SWT_EUSAGE, "'%s': no swap areas: nothing to replay",
				swt_store_path(st));
	if (!ret)
		ret = load_outs(st, in, err);	/* before the faults: a reconstruction reads them */
	if (!ret)
		ret = load_processes(st, in, err);
	if (!ret)
		ret = load_faults(st, in, approximate, err);
	/*
	 * every stream's loader leaves them out alike: counted once, here
	 * (those of no area by the slot check), with no scan where no swapoff
	 * ran
	 */
	if (!ret && swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM task WHERE comm = 'swapoff')",
					0))
		in->swapoff_reads = (size_t)swt_store_query_int(st, "SELECT count(*) FROM swap_in WHERE"
								" NOT " SWT_NOT_SWAPOFF_SQL, 0);
	if (!ret)
		ret = check_span(st, in, err);
	if (!ret)
		ret = link_outs(in, err);
	if (!ret)
		ret = map_vmas(st, in, err);
	if (!ret)
		ret = infer_vmas(in, err);
	if (!ret)
		ret = swt_replay_find_frees(st, in, err);	/* after the VMAs: shared ones are left out */
	if (!ret)
		ret = swt_replay_prepare(in, err);
	/*
	 * A read that went on with its default (the request limit, the
	 * streams' kind, the counts left out) lost an answer the runs depend
	 * on, and may be why a step above failed: named first, either way
	 */
	if (swt_store_query_error(st, err))
		ret = -SWT_EDB;
	swt_store_slot_census_free(&census);
	if (ret) {
		swt_replay_input_free(in);
		return ret;
	}
	*out = in;
	return 0;
}
