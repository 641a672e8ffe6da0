/*
 * swaptrace info's block tables (info-block.h): blkparse's per-device
 * counts and btt's latency and merge tables, from the bio, request and
 * block_misc tables.  Each table is read once: the scans that count events
 * also keep, for --latency, what btt's stages need of each bio and
 * request, so the common capture's latencies are joined in C.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info-block.h"

const char *const info_stage_names[NR_STAGES] = {
	"Q2Qdm", "Q2Cdm", "Q2Q", "Q2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C",
};

/*
 * btt's remapper devices (md 9, device-mapper 253, 254): their bios'
 * Q2Q and Q2C go to its "dm" rows.  By major number only, as btt tells
 * them, so a zram or other device that was given 253 or 254 is one too.
 */
static int is_remapper(uint32_t dev)
{
	uint32_t major = dev >> 20;

	return major == 9 || major == 253 || major == 254;
}

/* The index of dev's counts in devs (nr if none); *last, the one found before, is tried first. */
static size_t dev_index(const struct dev_counts *devs, size_t nr, uint32_t dev, size_t *last)
{
	size_t i = *last;

	if (i >= nr || devs[i].dev != dev)
		for (i = 0; i < nr && devs[i].dev != dev; i++)
			;
	if (i < nr)
		*last = i;
	return i;
}

/*
 * What block_event holds, counted from its tables one scan each: through
 * the view, every row of every branch went by (3x the time; 150 s of a
 * 12 GB capture's database), and as one query of a branch per event kind
 * the bio and request tables were read twice each.  An event's group key
 * (device, action, write, passthrough) and what it adds (count_group) are
 * summed in C: with a GROUP BY per branch, SQLite sorted every row of each.
 *
 * blkparse's KiB are the events' own: a request completed in parts
 * completed at the end only what its partial completions (block_misc)
 * left, not its whole extent again ('c', which counts no event).  Requeues
 * ('R') are counted for blkparse's "Requeued" line, whose sectors it takes
 * back from the dispatched KiB.  Passthrough (pc) requests are counted
 * apart, for blkparse's PC lines, which have no merges nor completed KiB.
 *
 * With --latency, the same scans count btt's merge table (bn: an
 * event btt counts, b: its request sectors): #Q the queued I/O with
 * sectors and the requeues, #D the issues with sectors, and the request
 * sectors of each completion (a request completed in parts: its last one
 * what the others left), none of a device's events before its first queue
 * (or remap), which btt cannot follow (btt drops passthrough events
 * unread), as btt counts them.  An event gives bn and b as they are when
 * its time t is not before its device's first queue (a bio's and a
 * queue's are their device's first queues at the latest).
 */
static const char count_bios_sql[] =
	/* 0 dev, write, nr_sectors, nr_sectors > 0, queue_ns,
	   5 a merge event, merge, request_id, merged, merge_ns */
	"SELECT dev, write, nr_sectors, nr_sectors > 0, queue_ns, merge IN ('M', 'F', 'm'), merge,"
	"       request_id, merge IS NOT NULL, merge_ns"
	"  FROM bio ORDER BY id";

/*
 * A request's issue, then its completion, with b (NULL: none), then what
 * latency_joined needs.  b is what partial completions left (done), and
 * with none (no --latency, or no block_misc completion names a request)
 * the join that sums them, a search per request, is left out.
 */
#define REQUEST_COLUMNS(done)									\
	/* 0 dev, write, pc, nr_sectors, nr_sectors > 0, 5 issue_ns, complete_ns, b, id, fs,	\
	   10 getrq_ns, insert_ns */								\
	"SELECT r.dev, r.write, r.pc, r.nr_sectors, r.nr_sectors > 0, r.issue_ns, r.complete_ns,"	\
	"       CASE WHEN r.nr_sectors - " done " > 0 THEN r.nr_sectors - " done " END,"		\
	"       r.id, r.pc = 0, r.getrq_ns, r.insert_ns"
static const char count_requests_sql[] =
	REQUEST_COLUMNS("0") "  FROM request r ORDER BY r.id";
static const char count_requests_partial_sql[] =
	REQUEST_COLUMNS("coalesce(p.done, 0)")
	"  FROM request r"
	"  LEFT JOIN (SELECT request_id, sum(nr_sectors) AS done FROM block_misc"
	"              WHERE action = 'C' AND request_id IS NOT NULL"
	"              GROUP BY request_id) p ON p.request_id = r.id"
	" ORDER BY r.id";
#undef REQUEST_COLUMNS

/* the events of block_misc, and what partial completions take back */
static const char count_misc_sql[] =
	/* dev, action, write, pc, events, sectors, bn, b, t */
	"SELECT dev, action, write, pc, 1, nr_sectors, b IS NOT NULL, b, ts"
	"  FROM (SELECT dev, action, write, pc, nr_sectors, ts,"
	"               CASE WHEN action = 'R' OR nr_sectors > 0 THEN nr_sectors END AS b"
	"          FROM block_misc WHERE action IN ('Q', 'D', 'C', 'M', 'F', 'm', 'R'))"
	" UNION ALL"
	" SELECT m.dev, 'c', m.write, 0, 0, -m.nr_sectors, 0, NULL, NULL"
	"   FROM block_misc m JOIN request r ON r.id = m.request_id"
	"  WHERE m.pc = 0 AND m.action = 'C' AND r.complete_ns IS NOT NULL";

/* A device's first queue (or remap) time: btt follows its events from there on. */
struct first_queue {
	int64_t dev, ts;
};

/* The events of one device, action, direction and kind (fs or pc), summed. */
struct count_group {
	int64_t dev;
	char action;
	int write, pc;
	int64_t n, sectors, bn;
	int64_t nr_b, bmin, bmax, bsum;	/* the b that are not NULL */
};

/* A bio's times, for latency_joined */
struct bio_times {
	int64_t request_id, queue, merge;
	uint32_t dev;
	int merged, has_merge;
};

/* A request's times, for latency_joined (has: which of them are not NULL, by bit) */
struct request_times {
	int64_t id, getrq, insert, issue, complete;
	unsigned has;
};

enum { HAS_GETRQ = 1, HAS_INSERT = 2, HAS_ISSUE = 4, HAS_COMPLETE = 8 };

/*
 * The most bios --latency keeps in memory (some 100 bytes each with
 * their requests): past it, SQLite's joins and sorts, in temporary files, take
 * a capture of millions of bios as they took every capture before.
 */
#define KEEP_MAX_BIOS ((size_t)1 << 22)

/* What the scans found: the groups counted, and what --latency keeps for later. */
struct block_scan {
	int latency;
	struct count_group *groups;
	size_t nr_groups, cap_groups, last_group;
	struct first_queue *firsts;
	size_t nr_firsts, cap_firsts, last_first;
	/* the queued bios with sectors, in id order: time (sign bit flipped: see q2q_latency), device */
	struct swt_key_value *queued;
	size_t nr_queued, cap_queued;
	int queued_sorted;	/* their times in order as read */
	int queued_kept;	/* all of them, every time an integer: else q2q_latency asks SQL */
	/* the queued bios with sectors and a request, and the fs requests, by id */
	struct bio_times *bios;
	size_t nr_bios, cap_bios;
	struct request_times *reqs;
	size_t nr_reqs, cap_reqs;
	int joinable;		/* every value an integer, the requests in id order */
	/* block_misc names requests: completed in parts, or requeued, re-inserted or re-issued */
	int partial, redone;
};

static void block_scan_free(struct block_scan *b)
{
	free(b->groups);
	free(b->firsts);
	free(b->queued);
	free(b->bios);
	free(b->reqs);
}

/* The index of dev's first queue in q (n if none); *last, the one found before, is tried first. */
static size_t first_queue_index(const struct first_queue *q, size_t n, int64_t dev, size_t *last)
{
	size_t i = *last;

	if (i >= n || q[i].dev != dev)
		for (i = 0; i < n && q[i].dev != dev; i++)
			;
	if (i < n)
		*last = i;
	return i;
}

/* A queue at ts on dev: its first queue, if none was earlier; 0 or -1 (no memory). */
static int note_first_queue(struct block_scan *b, int64_t dev, int64_t ts)
{
	size_t i = first_queue_index(b->firsts, b->nr_firsts, dev, &b->last_first);

	if (i < b->nr_firsts) {
		if (ts < b->firsts[i].ts)
			b->firsts[i].ts = ts;
		return 0;
	}
	if (swt_grow((void **)&b->firsts, &b->cap_firsts, b->nr_firsts + 1, sizeof(*b->firsts)))
		return -1;
	b->firsts[b->nr_firsts++] = (struct first_queue){ .dev = dev, .ts = ts };
	return 0;
}

static int same_group(const struct count_group *a, const struct count_group *b)
{
	return a->dev == b->dev && a->action == b->action && a->write == b->write && a->pc == b->pc;
}

/* key's group, added if new (NULL: no memory) */
static struct count_group *group_of(struct block_scan *b, const struct count_group *key)
{
	size_t i = b->last_group;

	/* events come a table's, then a device's at a time, mostly */
	if (i >= b->nr_groups || !same_group(&b->groups[i], key))
		for (i = 0; i < b->nr_groups && !same_group(&b->groups[i], key); i++)
			;
	if (i == b->nr_groups) {
		if (swt_grow((void **)&b->groups, &b->cap_groups, b->nr_groups + 1,
			     sizeof(*b->groups)))
			return NULL;
		b->groups[b->nr_groups++] = *key;
	}
	b->last_group = i;
	return &b->groups[i];
}

/*
 * One event (or, events 0, a correction) into its group: bn and its b,
 * bsec (has_b 0: NULL), only when its time t is not before its device's first queue
 * (has_t 0: a time that does not matter).  0 or -1 (no memory).
 */
static int count_event(struct block_scan *b, const struct count_group *key, int64_t events,
		       int64_t sectors, int bn, int has_b, int64_t bsec, int has_t, int64_t t)
{
	struct count_group *g = group_of(b, key);

	if (!g)
		return -1;
	g->n += events;
	g->sectors += sectors;
	if (has_t) {
		/* before its device's first queue, or with none: btt counts nothing of it */
		size_t f = first_queue_index(b->firsts, b->nr_firsts, key->dev, &b->last_first);

		if (f == b->nr_firsts || t < b->firsts[f].ts)
			return 0;
	}
	g->bn += bn;
	if (has_b) {
		g->bmin = g->nr_b ? SWT_MIN(g->bmin, bsec) : bsec;
		g->bmax = g->nr_b ? SWT_MAX(g->bmax, bsec) : bsec;
		g->bsum += bsec;
		g->nr_b++;
	}
	return 0;
}

/* an integer or NULL: what latency_joined's C arithmetic computes as SQL does */
static int int_or_null(sqlite3_stmt *s, int col)
{
	int type = sqlite3_column_type(s, col);

	return type == SQLITE_INTEGER || type == SQLITE_NULL;
}

/* A queued bio for q2q_latency and latency_joined; 0 or -1 (no memory). */
static int keep_bio(struct block_scan *b, sqlite3_stmt *s, uint32_t dev, int64_t queue)
{
	struct bio_times *bio;
	uint64_t key = (uint64_t)queue ^ ((uint64_t)1 << 63);

	if (!b->queued_kept)
		return 0;
	if (swt_grow((void **)&b->queued, &b->cap_queued, b->nr_queued + 1, sizeof(*b->queued)))
		return -1;
	if (b->nr_queued && key < b->queued[b->nr_queued - 1].key)
		b->queued_sorted = 0;
	b->queued[b->nr_queued++] = (struct swt_key_value){ .key = key, .value = dev };
	if (sqlite3_column_type(s, 7) == SQLITE_NULL || !b->joinable)
		return 0;
	if (sqlite3_column_type(s, 7) != SQLITE_INTEGER || !int_or_null(s, 9)) {
		b->joinable = 0;
		return 0;
	}
	if (swt_grow((void **)&b->bios, &b->cap_bios, b->nr_bios + 1, sizeof(*b->bios)))
		return -1;
	bio = &b->bios[b->nr_bios++];
	*bio = (struct bio_times){ .request_id = sqlite3_column_int64(s, 7), .queue = queue,
				   .dev = dev, .merged = sqlite3_column_int(s, 8) };
	bio->has_merge = sqlite3_column_type(s, 9) != SQLITE_NULL;
	bio->merge = sqlite3_column_int64(s, 9);
	return 0;
}

/* A counting scan's end: s finalized, and what stopped it (nomem: no memory), if anything. */
static int scan_end(struct swt_store *st, sqlite3_stmt *s, int rc, int nomem, struct swt_err *err)
{
	sqlite3_finalize(s);
	if (nomem)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(st, err, "block counts");
	return 0;
}

/* The bios' queues and merges; with latency, each device's first queue, and keep_bio. */
static int count_bios(struct swt_store *st, struct block_scan *b, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc;

	ret = swt_store_prepare(st, count_bios_sql, &s, err);
	if (ret)
		return ret;
	if (b->latency && b->queued_kept) {
		/* room for every bio, or none kept past the bound */
		size_t rows = swt_store_table_rows(st, "bio");

		if (rows > KEEP_MAX_BIOS) {
			b->queued_kept = b->joinable = 0;
		} else {
			swt_reserve((void **)&b->queued, &b->cap_queued, rows, sizeof(*b->queued));
			swt_reserve((void **)&b->bios, &b->cap_bios, rows, sizeof(*b->bios));
		}
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct count_group key;
		int64_t sectors;
		int queued;

		if (sqlite3_column_type(s, 0) == SQLITE_NULL)
			continue;	/* no device row names it */
		/* types first: reading a column may convert it */
		queued = sqlite3_column_type(s, 4) != SQLITE_NULL;
		if (b->latency && queued && sqlite3_column_type(s, 4) != SQLITE_INTEGER)
			b->queued_kept = b->joinable = 0;
		key = (struct count_group){ .dev = sqlite3_column_int64(s, 0),
					    .write = sqlite3_column_int(s, 1) ? 1 : 0 };
		sectors = sqlite3_column_int64(s, 2);
		if (queued) {
			int64_t queue = sqlite3_column_int64(s, 4);

			key.action = 'Q';
			if (count_event(b, &key, 1, sectors, sqlite3_column_int(s, 3), 0, 0, 0, 0))
				goto nomem;
			if (b->latency &&
			    (note_first_queue(b, key.dev, queue) ||
			     (sqlite3_column_int(s, 3) && keep_bio(b, s, (uint32_t)key.dev, queue))))
				goto nomem;
		}
		if (sqlite3_column_int(s, 5)) {
			key.action = (char)sqlite3_column_text(s, 6)[0];
			if (count_event(b, &key, 1, sectors, 0, 0, 0, 0, 0))
				goto nomem;
		}
	}
	return scan_end(st, s, rc, 0, err);
nomem:
	return scan_end(st, s, rc, 1, err);
}

/* block_misc's queues and remaps (fs, not passthrough): first queues as the bios' are */
static int misc_first_queues(struct swt_store *st, struct block_scan *b, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc;

	ret = swt_store_prepare(st, "SELECT dev, ts FROM block_misc WHERE action IN ('Q', 'A')"
				" AND pc = 0 AND dev IS NOT NULL AND ts IS NOT NULL", &s, err);
	if (ret)
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (note_first_queue(b, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1)))
			return scan_end(st, s, rc, 1, err);
	return scan_end(st, s, rc, 0, err);
}

/* An fs request for latency_joined; 0 or -1 (no memory). */
static int keep_request(struct block_scan *b, sqlite3_stmt *s)
{
	struct request_times *r;
	static const int cols[] = { 10, 11, 5, 6 };	/* getrq, insert, issue, complete */

	if (!b->joinable)
		return 0;
	if (sqlite3_column_type(s, 8) != SQLITE_INTEGER ||
	    (b->nr_reqs && sqlite3_column_int64(s, 8) <= b->reqs[b->nr_reqs - 1].id)) {
		b->joinable = 0;
		return 0;
	}
	if (swt_grow((void **)&b->reqs, &b->cap_reqs, b->nr_reqs + 1, sizeof(*b->reqs)))
		return -1;
	r = &b->reqs[b->nr_reqs++];
	r->id = sqlite3_column_int64(s, 8);
	r->has = 0;
	for (int k = 0; k < 4; k++) {
		if (!int_or_null(s, cols[k])) {
			b->joinable = 0;
			return 0;
		}
		if (sqlite3_column_type(s, cols[k]) != SQLITE_NULL)
			r->has |= 1u << k;
	}
	r->getrq = sqlite3_column_int64(s, 10);
	r->insert = sqlite3_column_int64(s, 11);
	r->issue = sqlite3_column_int64(s, 5);
	r->complete = sqlite3_column_int64(s, 6);
	return 0;
}

/* The requests' issues and completions; with latency, keep_request. */
static int count_requests(struct swt_store *st, struct block_scan *b, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc;

	ret = swt_store_prepare(st, b->partial ? count_requests_partial_sql : count_requests_sql, &s,
				err);
	if (ret)
		return ret;
	if (b->latency && b->joinable)
		swt_reserve((void **)&b->reqs, &b->cap_reqs, swt_store_table_rows(st, "request"),
			    sizeof(*b->reqs));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct count_group key;
		int64_t sectors;
		int has_b;

		if (b->latency && sqlite3_column_int(s, 9) && keep_request(b, s))
			goto nomem;
		if (sqlite3_column_type(s, 0) == SQLITE_NULL)
			continue;
		key = (struct count_group){ .dev = sqlite3_column_int64(s, 0),
					    .write = sqlite3_column_int(s, 1) ? 1 : 0,
					    .pc = sqlite3_column_int(s, 2) ? 1 : 0 };
		sectors = sqlite3_column_int64(s, 3);
		has_b = sqlite3_column_type(s, 7) != SQLITE_NULL;
		key.action = 'D';
		if (sqlite3_column_type(s, 5) != SQLITE_NULL &&
		    count_event(b, &key, 1, sectors, sqlite3_column_int(s, 4), 0, 0, 1,
				sqlite3_column_int64(s, 5)))
			goto nomem;
		key.action = 'C';
		if (sqlite3_column_type(s, 6) != SQLITE_NULL &&
		    count_event(b, &key, 1, sectors, has_b, has_b, sqlite3_column_int64(s, 7), 1,
				sqlite3_column_int64(s, 6)))
			goto nomem;
	}
	return scan_end(st, s, rc, 0, err);
nomem:
	return scan_end(st, s, rc, 1, err);
}

/* block_misc's events (count_misc_sql's rows), of a device */
static int count_misc(struct swt_store *st, struct block_scan *b, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc;

	ret = swt_store_prepare(st, count_misc_sql, &s, err);
	if (ret)
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *action = sqlite3_column_text(s, 1);
		struct count_group key;

		if (sqlite3_column_type(s, 0) == SQLITE_NULL || !action)
			continue;
		key = (struct count_group){ .dev = sqlite3_column_int64(s, 0), .action = (char)action[0],
					    .write = sqlite3_column_int(s, 2) ? 1 : 0,
					    .pc = sqlite3_column_int(s, 3) ? 1 : 0 };
		/* sectors NULL: none, as sum() skips it */
		if (count_event(b, &key, sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5),
				sqlite3_column_int(s, 6), sqlite3_column_type(s, 7) != SQLITE_NULL,
				sqlite3_column_int64(s, 7), sqlite3_column_type(s, 8) != SQLITE_NULL,
				sqlite3_column_int64(s, 8)))
			return scan_end(st, s, rc, 1, err);
	}
	return scan_end(st, s, rc, 0, err);
}

static int cmp_count_group(const void *a, const void *b)
{
	int64_t x = ((const struct count_group *)a)->dev, y = ((const struct count_group *)b)->dev;

	return (x > y) - (x < y);
}

/* A group's sums into its device's counts, as blkparse and btt count them. */
static void count_into(struct dev_counts *d, const struct count_group *g, int latency)
{
	int w = g->write, kind;

	switch (g->action) {
	case 'Q': kind = QUEUED; break;
	case 'D': kind = DISPATCHED; break;
	case 'C': case 'c': kind = COMPLETED; break;
	case 'R': kind = REQUEUES; break;
	default: kind = MERGES; break;
	}
	if (g->pc) {
		d->pc.n[w][kind] += g->n;
		/*
		 * blkparse adds a passthrough read's queued KiB to the
		 * file-system reads' (its __account_pc_queue): so do we,
		 * for the summaries to read alike
		 */
		if (kind == QUEUED && !w)
			d->fs.sectors[0][QUEUED] += g->sectors;
		else
			d->pc.sectors[w][kind] += g->sectors;
		return;
	}
	d->fs.n[w][kind] += g->n;
	d->fs.sectors[w][kind] += g->sectors;
	if (!latency || g->action == 'c')
		return;
	if (kind == QUEUED || kind == REQUEUES) {
		d->blk_queued += g->bn;
	} else if (kind == DISPATCHED) {
		d->blk_dispatched += g->bn;
	} else if (kind == COMPLETED && g->bn) {
		d->blk_min = d->blk_total ? SWT_MIN(d->blk_min, g->bmin) : g->bmin;
		d->blk_max = SWT_MAX(d->blk_max, g->bmax);
		d->blk_total += g->bsum;
	}
}

/* With latency: whether block_misc names requests (partial, redone). */
static int misc_request_events(struct swt_store *st, struct block_scan *b, struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret, rc;

	ret = swt_store_prepare(st, "SELECT count(CASE WHEN action = 'C' THEN 1 END), count(*)"
				" FROM block_misc WHERE action IN ('C', 'D', 'R', 'I')"
				" AND request_id IS NOT NULL", &s, err);
	if (ret)
		return ret;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		b->partial = sqlite3_column_int64(s, 0) > 0;
		b->redone = sqlite3_column_int64(s, 1) > 0;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return swt_store_sql_error(st, err, "block counts");
	return 0;
}

/*
 * Every block event counted into groups, and what --latency keeps.  The
 * bios first: with the block_misc queues, they give each device's first
 * queue, which the requests' and block_misc's events are compared with.
 */
static int scan_blocks(struct swt_store *st, struct block_scan *b, struct swt_err *err)
{
	/* the test suite's check that SQL's way gives the same tables: SQL throughout */
	int sql_only = getenv("SWT_TEST_INFO_SQL") != NULL, ret;

	b->queued_sorted = 1;
	b->queued_kept = b->joinable = !sql_only;
	ret = b->latency ? misc_request_events(st, b, err) : 0;
	b->partial |= b->latency && sql_only;
	if (!ret)
		ret = count_bios(st, b, err);
	if (!ret && b->latency)
		ret = misc_first_queues(st, b, err);
	if (!ret)
		ret = count_requests(st, b, err);
	if (!ret)
		ret = count_misc(st, b, err);
	if (!ret && b->nr_groups)
		qsort(b->groups, b->nr_groups, sizeof(*b->groups), cmp_count_group);
	return ret;
}

/*
 * The devices with events, in order, as the device table names them; the
 * groups of a device with no row are left out.
 */
static int load_devices(struct swt_store *st, const struct block_scan *b, struct dev_counts **out,
			size_t *nr, struct swt_err *err)
{
	struct dev_counts *devs = NULL;
	size_t cap = 0, n = 0, g = 0;
	sqlite3_stmt *s = NULL;
	int ret, rc = SQLITE_DONE;

	ret = swt_store_prepare(st, "SELECT dev, name, coalesce(path, '') FROM device ORDER BY dev",
				&s, err);
	if (ret)
		return ret;
	while (g < b->nr_groups && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(s, 0);
		struct dev_counts *d;

		while (g < b->nr_groups && b->groups[g].dev < dev)
			g++;	/* no device row: left out */
		if (g == b->nr_groups || b->groups[g].dev != dev)
			continue;
		if (swt_grow((void **)&devs, &cap, n + 1, sizeof(*devs))) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		d = &devs[n++];
		memset(d, 0, sizeof(*d));
		d->dev = (uint32_t)dev;
		snprintf(d->name, sizeof(d->name), "%s", sqlite3_column_text(s, 1));
		snprintf(d->path, sizeof(d->path), "%s", sqlite3_column_text(s, 2));
		for (; g < b->nr_groups && b->groups[g].dev == dev; g++)
			count_into(d, &b->groups[g], b->latency);
	}
	if (g < b->nr_groups && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		ret = swt_store_sql_error(st, err, "block counts");
		goto out;
	}
	*out = devs;
	*nr = n;
	devs = NULL;
out:
	sqlite3_finalize(s);
	free(devs);
	return ret;
}

/*
 * btt's latencies, per device, from the bio and request tables.  btt counts
 * per bio ("IO"): a merged bio has its own Q2M and M2D and shares its
 * request's D2C; Q2G and G2I belong to the bio that started the request;
 * Q2Q spans consecutive queued bios of the device, reads and writes alike.
 * A span of no time (two events in one nanosecond), or one that goes back
 * (CPUs' clocks apart), is 1 ns, as btt takes it (its tdelta()).  A row
 * a bio, or a bio and a requeue, with its stages as columns, and the
 * statistics kept in C: with a GROUP BY per stage, SQLite sorted every bio
 * once per stage, most of --latency's time.  Q2Q is q2q_latency's.  A
 * capture with nothing of the paragraph below, the common one, has its
 * stages computed in C by latency_joined instead, to the same numbers.
 *
 * A requeued request goes through its stages again, and btt counts each
 * time (again: the re-inserts and re-issues of block_misc): a re-insert
 * is a G2I of its first bio, a re-issue an I2D of it (from the latest
 * insert; none when the request was never inserted before it) and an M2D
 * of each merged bio, and D2C runs from the last issue.  A bio completes
 * at the first completion whose extent holds it, so a request completed in
 * parts completes its bios one part at a time, and a bio no part holds
 * whole has no D2C or Q2C (btt finds a completion's bios by their extent).
 * btt leaves out bios of no sectors (flushes) and bios it never saw queued.
 * btt's merge table is counted with the per-device counts (scan_blocks).
 * Checked against btt on the shared captures (test-ingest-blkparse).
 */
static const char latency_sql[] =
	"WITH rq AS (SELECT request_id, sum(CASE WHEN action = 'C' THEN nr_sectors END) AS done,"
	"                   max(CASE WHEN action = 'D' THEN ts END) AS last_issue_ns,"
	"                   count(CASE WHEN action = 'R' THEN 1 END) AS requeues"
	"              FROM block_misc WHERE action IN ('C', 'D', 'R') AND request_id IS NOT NULL"
	"             GROUP BY request_id),"
	"     part_c AS (SELECT b.id, min(m.ts) AS ts FROM block_misc m"
	"                  CROSS JOIN bio b ON b.request_id = m.request_id"
	"                 WHERE m.action = 'C' AND m.request_id IS NOT NULL"
	"                   AND m.sector <= b.sector"
	"                   AND b.sector + b.nr_sectors <= m.sector + m.nr_sectors GROUP BY b.id),"
	"     b AS (SELECT b.dev, b.request_id, b.queue_ns, b.merge, b.merge_ns, r.getrq_ns,"
	"                  r.insert_ns, r.issue_ns, coalesce(q.last_issue_ns, r.issue_ns) AS last_issue_ns,"
	"                  CASE WHEN q.done IS NULL THEN r.complete_ns"
	"                       ELSE coalesce((SELECT ts FROM part_c p WHERE p.id = b.id),"
	"                                 CASE WHEN r.sector + q.done <= b.sector AND"
	"                                 b.sector + b.nr_sectors <= r.sector + r.nr_sectors"
	"                                 THEN r.complete_ns END) END AS complete_ns,"
	"                  coalesce(q.requeues, 0) AS requeues"
	"             FROM bio b JOIN request r ON r.id = b.request_id"
	"             LEFT JOIN rq q ON q.request_id = r.id"
	"            WHERE r.pc = 0 AND b.queue_ns IS NOT NULL AND b.nr_sectors > 0),"
	"     again AS (SELECT request_id, action, ts FROM block_misc"
	"                WHERE action IN ('I', 'D') AND request_id IS NOT NULL AND pc = 0),"
	"     ba AS (SELECT b.dev, b.request_id, b.merge, b.merge_ns, r.getrq_ns, r.insert_ns,"
	"                   a.action, a.ts"
	"              FROM again a CROSS JOIN bio b ON b.request_id = a.request_id"
	"              JOIN request r ON r.id = b.request_id"
	"             WHERE b.queue_ns IS NOT NULL AND b.nr_sectors > 0)"
	/* a row a bio: its stages, in row_stages' order (NULL: none) */
	" SELECT dev,"
	"        CASE WHEN merge IS NULL THEN max(getrq_ns - queue_ns, 1) END,"
	"        CASE WHEN merge IS NULL THEN max(insert_ns - getrq_ns, 1) END,"
	"        CASE WHEN merge IS NOT NULL THEN max(merge_ns - queue_ns, 1) END,"
	/* an insert after the first issue is a requeued request's first insert */
	"        CASE WHEN merge IS NULL AND (requeues = 0 OR insert_ns <= issue_ns)"
	"             THEN max(issue_ns - insert_ns, 1) END,"
	"        CASE WHEN merge IS NOT NULL THEN max(issue_ns - merge_ns, 1) END,"
	"        max(complete_ns - last_issue_ns, 1), max(complete_ns - queue_ns, 1)"
	"   FROM b"
	/* then a row a bio and re-insert or re-issue of its request */
	" UNION ALL SELECT dev, NULL,"
	"        CASE WHEN action = 'I' AND merge IS NULL THEN max(ts - getrq_ns, 1) END, NULL,"
	"        CASE WHEN action = 'D' AND merge IS NULL"
	"             THEN max(ts - coalesce((SELECT max(i.ts) FROM again i"
	"                                     WHERE i.request_id = ba.request_id"
	"                                       AND i.action = 'I' AND i.ts <= ba.ts),"
	"                                    insert_ns), 1) END,"
	"        CASE WHEN action = 'D' AND merge IS NOT NULL THEN max(ts - merge_ns, 1) END,"
	"        NULL, NULL"
	"   FROM ba";

/* latency_sql's columns after the device; Q2C is Q2Cdm on a remapper */
static const int row_stages[] = { Q2G, G2I, Q2M, I2D, M2D, D2C, Q2C };

/*
 * A stage's span (ns) into its statistics, in ns until stage_stats_done.
 * The double sum is the one SQL's avg kept, when these were GROUP BY
 * aggregates, and exact while it stays below 2^53 ns.
 */
static void stage_add_ns(struct stage_stats *t, int64_t ns)
{
	double d = (double)ns;

	t->min = t->n ? SWT_MIN(t->min, d) : d;
	t->max = t->n ? SWT_MAX(t->max, d) : d;
	t->sum_ns += d;
	t->n++;
}

/* The same from a column; NULL, no span, is skipped, as SQL's aggregates skip it. */
static void stage_add(struct stage_stats *t, sqlite3_stmt *s, int col)
{
	if (sqlite3_column_type(s, col) != SQLITE_NULL)
		stage_add_ns(t, sqlite3_column_int64(s, col));
}

/* Statistics in ns to seconds. */
static void stage_stats_done(struct stage_stats *t)
{
	if (!t->n)
		return;
	t->avg = t->sum_ns / (double)t->n / 1e9;
	t->min /= 1e9;
	t->max /= 1e9;
}

/*
 * Q2Q, per device and over every device's bios together (btt's
 * all-devices table, where it spans consecutive queued bios of any device,
 * in Q2Qdm when the later one is a remapper's): both from one pass over
 * the queued bios with sectors in time order, by id on a tie.  The scan
 * kept them in id order, which ingest writes in time order, so they are
 * sorted (stably) only when they are not.  Times that are not all
 * integers (a hand-edited database), whose order of mixed types the radix
 * sort does not follow, and bios too many to keep are read in SQLite's
 * ORDER BY instead, which sorts in temporary files.
 */
/*
 * A stage's span a - b, at least 1 ns: a span of no time (two events in
 * one nanosecond), or one that goes back (CPUs' clocks apart), is 1 ns, as
 * btt takes it (its tdelta()).  As latency_sql's max(a - b, 1): a
 * difference that overflows is a REAL in SQLite, read back clamped to the
 * int64 range.
 */
static int64_t span_ns(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return a > b ? INT64_MAX : 1;
	return SWT_MAX(d, 1);
}

/* Q2Q's pass: the device's latest queue time (SWT_NULL before its first), and any device's */
struct q2q_pass {
	struct dev_counts *devs;
	size_t nr, last;
	struct stage_stats *all;
	int64_t *prev, prev_any;
	int any;
};

/* The next queued bio in time order. */
static void q2q_step(struct q2q_pass *p, uint32_t dev, int64_t t)
{
	int stage = is_remapper(dev) ? Q2QDM : Q2Q;
	size_t i = dev_index(p->devs, p->nr, dev, &p->last);

	if (p->any)
		stage_add_ns(&p->all[stage], span_ns(t, p->prev_any));
	p->any = 1;
	p->prev_any = t;
	if (i == p->nr)
		return;
	if (p->prev[i] != SWT_NULL)
		stage_add_ns(&p->devs[i].stage[stage], span_ns(t, p->prev[i]));
	p->prev[i] = t;
}

static int q2q_latency(struct swt_store *st, struct block_scan *b, struct dev_counts *devs,
		       size_t nr, struct stage_stats *all, struct swt_err *err)
{
	struct q2q_pass p = { .devs = devs, .nr = nr, .all = all };
	struct swt_key_value *tmp = NULL;
	sqlite3_stmt *s = NULL;
	int ret = 0, rc;

	p.prev = malloc((nr ? nr : 1) * sizeof(*p.prev));
	if (!p.prev)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++)
		p.prev[i] = SWT_NULL;
	if (b->queued_kept) {
		if (!b->queued_sorted) {
			tmp = malloc(b->nr_queued * sizeof(*tmp));
			if (!tmp) {
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				goto out;
			}
			swt_sort_key_values(b->queued, tmp, b->nr_queued);
		}
		for (size_t k = 0; k < b->nr_queued; k++)
			q2q_step(&p, (uint32_t)b->queued[k].value,
				 (int64_t)(b->queued[k].key ^ ((uint64_t)1 << 63)));
		goto out;
	}
	ret = swt_store_prepare(st,
		"SELECT dev, queue_ns FROM bio WHERE queue_ns IS NOT NULL AND nr_sectors > 0"
		" ORDER BY queue_ns, id", &s, err);
	if (ret)
		goto out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		q2q_step(&p, (uint32_t)sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
	if (rc != SQLITE_DONE)
		ret = swt_store_sql_error(st, err, "latencies");
out:
	sqlite3_finalize(s);
	free(p.prev);
	free(tmp);
	return ret;
}

/*
 * btt's all-devices table: each stage over every device's bios together,
 * but Q2Q (q2q_latency, given in all[Q2Q], all[Q2QDM]).
 */
static void all_devices_latency(const struct dev_counts *devs, size_t nr, struct stage_stats *all)
{
	for (int k = 0; k < NR_STAGES; k++) {
		double sum = 0;

		if (k == Q2Q || k == Q2QDM)
			continue;
		all[k] = (struct stage_stats){ 0 };
		for (size_t i = 0; i < nr; i++) {
			const struct stage_stats *t = &devs[i].stage[k];

			if (!t->n)
				continue;
			all[k].min = all[k].n ? SWT_MIN(all[k].min, t->min) : t->min;
			all[k].max = all[k].n ? SWT_MAX(all[k].max, t->max) : t->max;
			all[k].n += t->n;
			sum += t->avg * (double)t->n;
		}
		if (all[k].n)
			all[k].avg = sum / (double)all[k].n;
	}
}

/*
 * The request of id in r (sorted by id), or NULL: at *hint or the next one
 * (bios in id order name the same request, or the next, mostly), else
 * found by a binary search; *hint is where it was.
 */
static const struct request_times *request_by_id(const struct request_times *r, size_t n,
						 int64_t id, size_t *hint)
{
	size_t lo = 0, hi = n;

	if (*hint < n && r[*hint].id == id)
		return &r[*hint];
	if (*hint + 1 < n && r[*hint + 1].id == id)
		return &r[++*hint];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || r[lo].id != id)
		return NULL;
	*hint = lo;
	return &r[lo];
}

/*
 * latency_sql's answer for the common capture, in C, from the bios and
 * requests the scans kept: no request requeued, re-inserted, re-issued or
 * completed in parts (block_misc holds none of those), so each bio's
 * stages come from it and its request alone.  Each bio finds its request
 * by a binary search, where SQLite's join searched a B-tree per bio (most
 * of --latency's time).  0: a capture this does not cover, nothing added.
 */
static int latency_joined(const struct block_scan *b,
			  struct dev_counts *devs, size_t nr)
{
	size_t last = 0, hint = 0;

	if (!b->joinable || b->redone)
		return 0;
	for (size_t k = 0; k < b->nr_bios; k++) {
		const struct bio_times *bio = &b->bios[k];
		const struct request_times *r = request_by_id(b->reqs, b->nr_reqs, bio->request_id, &hint);
		/* bios come a device's at a time, mostly */
		size_t i = dev_index(devs, nr, bio->dev, &last);
		struct stage_stats *t;

		if (!r || i == nr)
			continue;
		t = devs[i].stage;
		if (!bio->merged) {
			if (r->has & HAS_GETRQ)
				stage_add_ns(&t[Q2G], span_ns(r->getrq, bio->queue));
			if ((r->has & (HAS_GETRQ | HAS_INSERT)) == (HAS_GETRQ | HAS_INSERT))
				stage_add_ns(&t[G2I], span_ns(r->insert, r->getrq));
			if ((r->has & (HAS_INSERT | HAS_ISSUE)) == (HAS_INSERT | HAS_ISSUE))
				stage_add_ns(&t[I2D], span_ns(r->issue, r->insert));
		} else if (bio->has_merge) {
			stage_add_ns(&t[Q2M], span_ns(bio->merge, bio->queue));
			if (r->has & HAS_ISSUE)
				stage_add_ns(&t[M2D], span_ns(r->issue, bio->merge));
		}
		if ((r->has & (HAS_ISSUE | HAS_COMPLETE)) == (HAS_ISSUE | HAS_COMPLETE))
			stage_add_ns(&t[D2C], span_ns(r->complete, r->issue));
		if (r->has & HAS_COMPLETE)
			stage_add_ns(&t[is_remapper(bio->dev) ? Q2CDM : Q2C],
				     span_ns(r->complete, bio->queue));
	}
	return 1;
}

/* btt's latency tables (the merge table was counted with the devices) */
static int load_latency(struct swt_store *st, struct block_scan *b, struct dev_counts *devs,
			size_t nr, struct stage_stats *all, struct swt_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t last = 0;
	int ret, rc;

	if (!latency_joined(b, devs, nr)) {
		ret = swt_store_prepare(st, latency_sql, &s, err);
		if (ret)
			return ret;
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			uint32_t dev = (uint32_t)sqlite3_column_int64(s, 0);
			/* rows come a device's at a time, mostly */
			size_t i = dev_index(devs, nr, dev, &last);

			if (i == nr)
				continue;
			for (size_t c = 0; c < SWT_ARRAY_SIZE(row_stages); c++) {
				int k = row_stages[c] == Q2C && is_remapper(dev) ? Q2CDM : row_stages[c];

				stage_add(&devs[i].stage[k], s, 1 + (int)c);
			}
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE)
			return swt_store_sql_error(st, err, "latencies");
	}
	all[Q2Q] = all[Q2QDM] = (struct stage_stats){ 0 };
	ret = q2q_latency(st, b, devs, nr, all, err);
	if (ret)
		return ret;
	for (size_t i = 0; i < nr; i++)
		for (int k = 0; k < NR_STAGES; k++)
			stage_stats_done(&devs[i].stage[k]);
	stage_stats_done(&all[Q2Q]);
	stage_stats_done(&all[Q2QDM]);
	/* btt's #Q is never fewer than its #D, on a device that has both */
	for (size_t i = 0; i < nr; i++)
		if (devs[i].blk_queued)
			devs[i].blk_queued = SWT_MAX(devs[i].blk_queued, devs[i].blk_dispatched);
	all_devices_latency(devs, nr, all);
	return 0;
}

int info_block_load(struct swt_store *st, int latency, struct dev_counts **devs, size_t *nr,
		    struct stage_stats *all, struct swt_err *err)
{
	struct block_scan b = { .latency = latency };
	int ret;

	*devs = NULL;
	*nr = 0;
	ret = scan_blocks(st, &b, err);
	if (!ret)
		ret = load_devices(st, &b, devs, nr, err);
	if (!ret && latency)
		ret = load_latency(st, &b, *devs, *nr, all, err);
	if (ret) {
		free(*devs);
		*devs = NULL;
		*nr = 0;
	}
	block_scan_free(&b);
	return ret;
}
