/*
 * swaptrace info: what a blkparse user expects to see first -- per-device
 * queued/dispatched/completed/merged counts and KiB -- plus event counts,
 * the swap page streams next to the kernel's own counters, the time span
 * and lost events, and whether replay can take the capture as it is.
 * --latency adds btt's per-device latency and merge tables.  --json prints
 * a fixed set of keys for scripts.  The block tables are read by
 * info-block.c; this file asks for the rest and prints it all.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "info-block.h"
#include "replay.h"
#include "store.h"
#include "strbuf.h"
#include "util.h"

const char cmd_info_usage[] =
	"usage: swaptrace info [-j|--json] [-l|--latency] DB\n"
	"\n"
	"Summarise an ingested capture: per device, reads and writes queued, dispatched\n"
	"(issued), requeued, completed and merged, with KiB (blkparse's totals), and\n"
	"blkparse's PC lines when there were passthrough requests; events\n"
	"by name (as trace-cmd report names them); swap-in and swap-out pages next to\n"
	"the kernel's pswpin/pswpout; time span; lost events; memory maps, if recorded;\n"
	"whether replay takes it as it is or must approximate its demand stream.\n"
	"\n"
	"  -l, --latency  add, per device, btt's latency table (Q2Q, Q2G, G2I, Q2M, I2D,\n"
	"                 M2D, D2C, Q2C: min, avg, max seconds and count, per bio as btt\n"
	"                 counts them; Q2Qdm and Q2Cdm in place of Q2Q and Q2C for the\n"
	"                 devices btt takes for remappers, majors 9, 253 and 254) and\n"
	"                 its merge table (#Q, #D, ratio, request sectors\n"
	"                 min/avg/max/total, counted at completion as btt does)\n"
	"  -j, --json     print {\"devices\":[{\"dev\",\"reads_queued\",\n"
	"                 \"reads_dispatched\",\"reads_completed\",\"read_merges\",\n"
	"                 \"writes_queued\",\"writes_dispatched\",\"writes_completed\",\n"
	"                 \"write_merges\"}],\"events\":{NAME:N},\"swap_in_pages\":N,\n"
	"                 \"swap_out_pages\":N,\"lost_events\":N|null}; with --latency\n"
	"                 each device also has \"latency\":{\"Q2C\":{\"min\",\"avg\",\"max\",\n"
	"                 \"n\"},...} (seconds; stages with no count left out) and,\n"
	"                 when it queued and issued any, \"merges\":{\"queued\",\n"
	"                 \"dispatched\",\"blk_min\",\"blk_avg\",\"blk_max\",\n"
	"                 \"blk_total\"}, and a top-level \"latency\" holds\n"
	"                 btt's all-devices table.  The text's other facts are\n"
	"                 keys too: each device has \"path\" (null: none),\n"
	"                 \"reads_requeued\", \"writes_requeued\", the KiB of each count\n"
	"                 (\"reads_queued_kib\", ..., \"write_merges_kib\"; dispatched\n"
	"                 KiB less the requeued, as blkparse's) and\n"
	"                 \"average_read_request_kib\" (null: no read issued), the PC\n"
	"                 lines' \"pc_reads_queued\", \"pc_reads_dispatched\",\n"
	"                 \"pc_reads_requeued\", \"pc_reads_completed\" (and writes),\n"
	"                 \"pc_reads_queued_kib\", \"pc_reads_dispatched_kib\" (and writes;\n"
	"                 as blkparse, a PC read's queued KiB are in \"reads_queued_kib\");\n"
	"                 then\n"
	"                 \"capture\":{\"name\",\"kernel\",\"page_cluster\",\n"
	"                 \"vma_ra_enabled\",\"multigen_lru\" (the traced kernel's\n"
	"                 multi-gen LRU on; null: not recorded),\"swap_areas\",\n"
	"                 \"layout_source\"} (null: no capture row),\n"
	"                 \"span\":{\"first_ns\",\"last_ns\",\"seconds\"}\n"
	"                 (null: no event times), \"total_events\", \"ended_on_error\",\n"
	"                 \"events_by_system\":{SYSTEM:{NAME:N}}, \"vmstat\":{\"pswpin\",\n"
	"                 \"pswpout\",\"pgmajfault\",\"swap_ra\",\"swap_ra_hit\",\n"
	"                 \"swpin_zero\",\"zswpin\"} (swap-ins without block I/O; null:\n"
	"                 not recorded), \"oom\":{\"kills\" (vmstat's oom_kill),\n"
	"                 \"victims_recorded\" (\"all\", \"followed\" or null),\n"
	"                 \"victims\":[{\"pid\",\"comm\",\"ts_ns\",\"faults\"}]},\n"
	"                 \"swapin_processes\":[{\"pid\",\"comm\",\"pages\",\"threads\"}]\n"
	"                 (all of them, most pages first), \"memory_maps\":\n"
	"                 {\"mappings\",\"tasks\",\"threads\"} and \"replay\":{\"verdict\"\n"
	"                 (\"exact\" or \"probes\": an exact demand stream;\n"
	"                 \"approximate\": replay needs --approximate;\n"
	"                 \"nothing_to_replay\"; \"no_capture\"), \"nothing_to_replay\"\n"
	"                 (why, or null), \"fault_events\" (whether --approximate\n"
	"                 has faults to reconstruct from), \"swapoff_pages\"}\n";

/* btt's integer request-size average, so the tables read alike */
static int64_t blk_avg(const struct dev_counts *d)
{
	return d->blk_dispatched ? d->blk_total / d->blk_dispatched : 0;
}

static void print_stages_text(FILE *out, const struct stage_stats *stage)
{
	int any = 0;

	for (int k = 0; k < NR_STAGES; k++) {
		const struct stage_stats *t = &stage[k];

		if (!t->n)
			continue;
		if (!any)
			fprintf(out, " Latency (as btt, s)     MIN           AVG           MAX           N\n");
		any = 1;
		fprintf(out, "  %-13s %13.9f %13.9f %13.9f %11lld\n", info_stage_names[k], t->min,
			t->avg, t->max, (long long)t->n);
	}
}

/* btt leaves a device out of its merge table when nothing was queued or issued on it */
static int has_merge_row(const struct dev_counts *d)
{
	return d->blk_queued && d->blk_dispatched;
}

static void print_latency_text(FILE *out, const struct dev_counts *d)
{
	print_stages_text(out, d->stage);
	if (!has_merge_row(d))
		return;
	fprintf(out, " Merges (as btt): #Q %lld, #D %lld, ratio %.1f; request sectors min %lld, "
		"avg %lld, max %lld, total %lld\n", (long long)d->blk_queued,
		(long long)d->blk_dispatched,
		d->blk_dispatched ? (double)d->blk_queued / (double)d->blk_dispatched : 0.0,
		(long long)d->blk_min, (long long)blk_avg(d), (long long)d->blk_max,
		(long long)d->blk_total);
}

static void print_stages_json(FILE *out, const struct stage_stats *stage)
{
	int any = 0;

	fprintf(out, "\"latency\":{");
	for (int k = 0; k < NR_STAGES; k++) {
		const struct stage_stats *t = &stage[k];

		if (!t->n)
			continue;
		fprintf(out, "%s\"%s\":{\"min\":%.9f,\"avg\":%.9f,\"max\":%.9f,\"n\":%lld}",
			any ? "," : "", info_stage_names[k], t->min, t->avg, t->max, (long long)t->n);
		any = 1;
	}
	fprintf(out, "}");
}

static void print_latency_json(FILE *out, const struct dev_counts *d)
{
	fprintf(out, ",");
	print_stages_json(out, d->stage);
	if (!has_merge_row(d))
		return;
	fprintf(out, ",\"merges\":{\"queued\":%lld,\"dispatched\":%lld,\"blk_min\":%lld,"
		"\"blk_avg\":%lld,\"blk_max\":%lld,\"blk_total\":%lld}",
		(long long)d->blk_queued, (long long)d->blk_dispatched, (long long)d->blk_min,
		(long long)blk_avg(d), (long long)d->blk_max, (long long)d->blk_total);
}

/* The capture's lost events: 1 with *n, or 0 when unknown (NULL: not traced, schema.md) -- not 0. */
static int lost_events(struct swt_store *st, int64_t *n)
{
	if (swt_store_query_int(st, "SELECT lost_events IS NULL FROM capture", 1))
		return 0;
	*n = swt_store_query_int(st, "SELECT lost_events FROM capture", 0);
	return 1;
}

/* what the text and --json both show, asked one way */
#define NO_SPAN_SQL "SELECT first_ns IS NULL OR last_ns IS NULL FROM capture"
#define TOTAL_EVENTS_SQL "SELECT coalesce(sum(events), 0) FROM source"
#define ENDED_ON_ERROR_SQL "SELECT EXISTS (SELECT 1 FROM capture_fact WHERE section = ''" \
	" AND key = 'end' AND value = 'error')"
#define EVENTS_BY_SYSTEM_SQL "SELECT system, name, sum(count) FROM event_count" \
	" GROUP BY system, name ORDER BY system, name"
#define MAPPINGS_SQL "SELECT count(*) FROM vma"
#define MAPPED_TASKS_SQL "SELECT count(DISTINCT pid) FROM vma"
#define MAPPED_THREADS_SQL "SELECT count(*) FROM task WHERE tgid != pid" \
	" AND tgid IN (SELECT pid FROM vma)"

/* a count's KiB as blkparse prints it: the dispatched less what was requeued */
static int64_t count_kib(const struct io_counts *c, int write, int kind)
{
	return (c->sectors[write][kind] - (kind == DISPATCHED ? c->sectors[write][REQUEUES] : 0)) / 2;
}

/* a device's facts in the text beyond blkparse's counts: its path, requeues and KiB */
static void print_device_json_text_facts(FILE *out, const struct dev_counts *d)
{
	static const char *const kib_keys[2][4] = {
		{ "reads_queued_kib", "reads_dispatched_kib", "reads_completed_kib", "read_merges_kib" },
		{ "writes_queued_kib", "writes_dispatched_kib", "writes_completed_kib",
		  "write_merges_kib" },
	};

	fprintf(out, ",\"path\":");
	cli_json_string_to(out, d->path[0] ? d->path : NULL);
	fprintf(out, ",\"reads_requeued\":%" PRId64 ",\"writes_requeued\":%" PRId64,
		d->fs.n[0][REQUEUES], d->fs.n[1][REQUEUES]);
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 4; k++)
			fprintf(out, ",\"%s\":%" PRId64, kib_keys[w][k], count_kib(&d->fs, w, k));
	if (d->fs.n[0][DISPATCHED])
		fprintf(out, ",\"average_read_request_kib\":%.1f",
			(double)(d->fs.sectors[0][DISPATCHED] / 2) /
			(double)d->fs.n[0][DISPATCHED]);
	else
		fprintf(out, ",\"average_read_request_kib\":null");
}

/* blkparse's PC lines' counts and KiB, zero where the device had no passthrough request */
static void print_device_json_pc(FILE *out, const struct dev_counts *d)
{
	static const char *const dirs[2] = { "reads", "writes" };
	static const char *const kinds[] = {
		[QUEUED] = "queued", [DISPATCHED] = "dispatched", [REQUEUES] = "requeued",
		[COMPLETED] = "completed",
	};
	static const int shown[] = { QUEUED, DISPATCHED, REQUEUES, COMPLETED };

	for (int w = 0; w < 2; w++) {
		for (size_t i = 0; i < SWT_ARRAY_SIZE(shown); i++)
			fprintf(out, ",\"pc_%s_%s\":%" PRId64, dirs[w], kinds[shown[i]],
				d->pc.n[w][shown[i]]);
		for (int k = QUEUED; k <= DISPATCHED; k++)
			fprintf(out, ",\"pc_%s_%s_kib\":%" PRId64, dirs[w], kinds[k], count_kib(&d->pc, w, k));
	}
}

static void print_json_text_facts(FILE *out, struct swt_store *st);

static void print_json(FILE *out, struct swt_store *st, const struct dev_counts *devs, size_t nr,
		       const struct stage_stats *all)
{
	static const char *const keys[2][4] = {
		{ "reads_queued", "reads_dispatched", "reads_completed", "read_merges" },
		{ "writes_queued", "writes_dispatched", "writes_completed", "write_merges" },
	};
	sqlite3_stmt *s;
	int64_t lost;
	size_t i;
	int first = 1;

	fprintf(out, "{\"devices\":[");
	for (i = 0; i < nr; i++) {
		fprintf(out, "%s{\"dev\":", i ? "," : "");
		cli_json_string_to(out, devs[i].name);
		for (int w = 0; w < 2; w++)
			for (int k = 0; k < 4; k++)
				fprintf(out, ",\"%s\":%" PRId64, keys[w][k], devs[i].fs.n[w][k]);
		print_device_json_text_facts(out, &devs[i]);
		print_device_json_pc(out, &devs[i]);
		if (all)
			print_latency_json(out, &devs[i]);
		fprintf(out, "}");
	}
	fprintf(out, "],");
	if (all) {
		print_stages_json(out, all);
		fprintf(out, ",");
	}
	fprintf(out, "\"events\":{");
	if (swt_store_query_prepare(st, "SELECT name, sum(count) FROM event_count GROUP BY name "
				    "ORDER BY name", &s)) {
		while (swt_store_query_step(st, s)) {
			const unsigned char *name = sqlite3_column_text(s, 0);

			fprintf(out, "%s", first ? "" : ",");
			cli_json_string_to(out, name ? (const char *)name : "");
			fprintf(out, ":%lld", (long long)sqlite3_column_int64(s, 1));
			first = 0;
		}
		sqlite3_finalize(s);
	}
	fprintf(out, "},\"swap_in_pages\":%lld,\"swap_out_pages\":%lld,",
		(long long)swt_store_query_int(st, "SELECT count(*) FROM swap_in", 0),
		(long long)swt_store_query_int(st, "SELECT count(*) FROM swap_out", 0));
	if (lost_events(st, &lost))
		fprintf(out, "\"lost_events\":%lld", (long long)lost);
	else
		fprintf(out, "\"lost_events\":null");
	print_json_text_facts(out, st);
	fprintf(out, "}\n");
}

static void print_pair(FILE *out, const char *left, int64_t ln, int64_t lkib, const char *right,
		       int64_t rn, int64_t rkib)
{
	fprintf(out, " %-16s %10" PRId64 ", %10" PRId64 "KiB\t %-17s %10" PRId64 ", %10" PRId64
		"KiB\n", left, ln, lkib, right, rn, rkib);
}

/* a pair of counts without KiB, as blkparse's requeue lines */
static void print_count_pair(FILE *out, const char *left, int64_t ln, const char *right,
			     int64_t rn)
{
	fprintf(out, " %-16s %10" PRId64 "\t\t %-17s %10" PRId64 "\n", left, ln, right, rn);
}

/* blkparse's summary of a device's I/O: its PC lines only when it had passthrough requests */
static void print_counts_text(FILE *out, const struct dev_counts *d)
{
	const struct io_counts *c = &d->fs;
	int pc = 0;

	print_pair(out, "Reads Queued:", c->n[0][QUEUED], count_kib(c, 0, QUEUED),
		   "Writes Queued:", c->n[1][QUEUED], count_kib(c, 1, QUEUED));
	print_pair(out, "Read Dispatches:", c->n[0][DISPATCHED], count_kib(c, 0, DISPATCHED),
		   "Write Dispatches:", c->n[1][DISPATCHED], count_kib(c, 1, DISPATCHED));
	print_count_pair(out, "Reads Requeued:", c->n[0][REQUEUES], "Writes Requeued:",
			 c->n[1][REQUEUES]);
	print_pair(out, "Reads Completed:", c->n[0][COMPLETED], count_kib(c, 0, COMPLETED),
		   "Writes Completed:", c->n[1][COMPLETED], count_kib(c, 1, COMPLETED));
	print_pair(out, "Read Merges:", c->n[0][MERGES], count_kib(c, 0, MERGES),
		   "Write Merges:", c->n[1][MERGES], count_kib(c, 1, MERGES));

	c = &d->pc;
	for (int w = 0; w < 2; w++)
		pc |= c->n[w][QUEUED] || c->n[w][DISPATCHED] || c->n[w][REQUEUES] ||
		      c->n[w][COMPLETED];
	if (!pc)
		return;
	print_pair(out, "PC Reads Queued:", c->n[0][QUEUED], count_kib(c, 0, QUEUED),
		   "PC Writes Queued:", c->n[1][QUEUED], count_kib(c, 1, QUEUED));
	print_pair(out, "PC Read Disp.:", c->n[0][DISPATCHED], count_kib(c, 0, DISPATCHED),
		   "PC Write Disp.:", c->n[1][DISPATCHED], count_kib(c, 1, DISPATCHED));
	print_count_pair(out, "PC Reads Req.:", c->n[0][REQUEUES], "PC Writes Req.:",
			 c->n[1][REQUEUES]);
	print_count_pair(out, "PC Reads Compl.:", c->n[0][COMPLETED], "PC Writes Compl.:",
			 c->n[1][COMPLETED]);
}

/*
 * Whether replay can take the capture as it is: its swap reads are the
 * faults' own (page-cluster 0, or swap-entry probes name every fault), or
 * they mix demand and readahead and replay must be asked to approximate.
 */
#define SWAPOFF_PAGES_SQL "SELECT count(*) FROM swap_in WHERE NOT " SWT_NOT_SWAPOFF_SQL

enum replay_verdict { NO_CAPTURE, NOTHING_TO_REPLAY, EXACT, PROBES, APPROXIMATE };
/* --json's names for them */
static const char *const verdict_names[] = {
	"no_capture", "nothing_to_replay", "exact", "probes", "approximate",
};

/* the verdicts replay itself would give (replay/input.c); *nothing says why for NOTHING_TO_REPLAY */
static enum replay_verdict replay_verdict(struct swt_store *st, const char **nothing)
{
	enum swt_stream_kind kind;

	*nothing = NULL;
	if (!swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM capture)", 0))
		return NO_CAPTURE;
	if ((*nothing = swt_replay_nothing_to_replay(st)))
		return NOTHING_TO_REPLAY;
	kind = swt_replay_stream_kind(st);
	if (kind == SWT_STREAM_EXACT)
		return EXACT;
	return kind == SWT_STREAM_PROBES ? PROBES : APPROXIMATE;
}

static int has_fault_events(struct swt_store *st)
{
	return swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM swap_in"
				   " WHERE fault_id IS NOT NULL)", 0) != 0;
}

/*
 * Zero-filled pages and pages zswap held come back without block I/O: the
 * kernel counted them (machine-wide), no block trace shows them.
 */
static void print_unseen_swapins(FILE *out, struct swt_store *st)
{
	int64_t zero, zswap;
	char unseen[128];

	if (swt_replay_unseen_swapins(st, &zero, &zswap) <= 0)
		return;
	cli_unseen_swapins(unseen, sizeof(unseen), zero, zswap);
	fprintf(out, "  Swap-ins without block I/O (%s, machine-wide): the block\n"
		"  trace shows neither them nor their swap-outs, so replay lacks the workload's.\n",
		unseen);
}

static void print_replay_hint(FILE *out, struct swt_store *st)
{
	const char *nothing;
	enum replay_verdict verdict = replay_verdict(st, &nothing);
	int64_t pc = swt_store_query_int(st, "SELECT page_cluster FROM capture", -1);
	int64_t swapoff;
	char lru[64];

	fprintf(out, "\nReplay: ");
	/* each verdict a sentence */
	if (verdict == NO_CAPTURE) {
		fprintf(out, "no capture row: not an ingested database.\n");
		return;
	} else if (verdict == NOTHING_TO_REPLAY) {
		fprintf(out, "%s: nothing to replay.\n", nothing);
		print_unseen_swapins(out, st);	/* perhaps why */
		return;
	} else if (verdict == EXACT) {
		fprintf(out, "every swap read is its fault's own page: an exact demand stream.\n");
	} else if (verdict == PROBES) {
		fprintf(out, "swap-entry probes name every fault: an exact demand stream.\n");
	} else {
		if (pc >= 0)
			fprintf(out, "captured at page-cluster %lld, so the swap reads mix demand "
				"and readahead.\n", (long long)pc);
		else
			fprintf(out, "no page-cluster recorded, so the swap reads may mix demand "
				"and readahead.\n");
		if (has_fault_events(st))
			fprintf(out, "  replay --approximate reconstructs the demand stream from the reads and\n"
				"  the fault events (docs/replay-model.md); report does so by itself.\n");
		else
			fprintf(out, "  Without fault events, replay --approximate can only let each read stand\n"
				"  for a fault, which counts wasted readahead as hits (docs/replay-model.md).\n");
	}
	print_unseen_swapins(out, st);
	if (swt_replay_multigen_lru(st, lru, sizeof(lru)) == 1)
		fprintf(out, "  The traced kernel ran the multi-gen LRU (lru_gen %s); replay models "
			"the\n  two-list LRU, so its readahead accuracy and waste are less "
			"certain.\n", lru);
	{
		/* the limit a reader of request sizes needs, when the capture says it */
		int recorded;
		int64_t kib = swt_store_request_limit_kib(st, &recorded);

		if (recorded)
			fprintf(out, "  Read requests split at %lld KiB: the swap devices' max_sectors_kb or\n"
				"  max_segments pages, whichever is smaller, as captured.\n", (long long)kib);
	}
	/* past the checks above: swap areas, and faults to replay */
	swapoff = swt_store_query_int(st, SWAPOFF_PAGES_SQL, 0);
	if (swapoff > 0)
		fprintf(out, "  %lld swap-in page%s read by swapoff, not faulted: replay leaves %s out.\n",
			(long long)swapoff, swapoff == 1 ? " was" : "s were", swapoff == 1 ? "it" : "them");
}

/*
 * Who swapped in: the processes whose faults read the most pages (threads
 * counted with their process, task.tgid), as blkparse's per-process
 * summary answers it for I/O.  Only when some swap-in names a task.
 */
/*
 * A task's name as the trace holds it, for the terminal: the task sets it
 * itself (prctl), so its control characters become blanks and no escape
 * sequence of a workload's reaches the user's terminal.  b holds the text
 * until released.
 */
static const char *comm_for_terminal(struct swt_sbuf *b, const char *comm, int len)
{
	char copy[64];

	snprintf(copy, sizeof(copy), "%.*s", len, comm ? comm : "");
	swt_sbuf_release(b);
	swt_sbuf_text(b, copy);
	return b->len && !b->oom ? b->s : "";
}

#define SWAPIN_PROCESSES_SQL \
	"WITH p AS (SELECT coalesce(t.tgid, s.pid) AS proc, s.pid AS tid FROM swap_in s" \
	" LEFT JOIN task t ON t.pid = s.pid WHERE s.pid IS NOT NULL)" \
	" SELECT proc, coalesce((SELECT comm FROM task WHERE pid = proc AND comm != '')," \
	" (SELECT comm FROM task WHERE tgid = proc AND comm != '' LIMIT 1), '?')," \
	" count(*), count(DISTINCT tid), count(*) OVER () FROM p GROUP BY proc" \
	" ORDER BY count(*) DESC, proc LIMIT ?"

static void print_swapin_processes(FILE *out, struct swt_store *st)
{
	enum { TOP = 5 };
	struct swt_sbuf comm;
	sqlite3_stmt *s;
	int header = 0;

	swt_sbuf_init(&comm);
	/* one pass: the processes' count (column 4) over the grouped rows */
	if (!swt_store_query_prepare(st, SWAPIN_PROCESSES_SQL, &s))
		return;
	sqlite3_bind_int(s, 1, TOP);
	while (swt_store_query_step(st, s)) {
		int64_t threads = sqlite3_column_int64(s, 3), procs = sqlite3_column_int64(s, 4);

		if (!header++)
			fprintf(out, "  swapped in for %lld process%s%s:\n", (long long)procs,
				procs == 1 ? "" : "es", procs > TOP ? ", the most" : "");

		fprintf(out, "    %8lld %-16s %10lld page%s", (long long)sqlite3_column_int64(s, 0),
			comm_for_terminal(&comm, (const char *)sqlite3_column_text(s, 1), 63),
			(long long)sqlite3_column_int64(s, 2),
			sqlite3_column_int64(s, 2) == 1 ? "" : "s");
		if (threads > 1)
			fprintf(out, " (%lld threads)", (long long)threads);
		fprintf(out, "\n");
	}
	sqlite3_finalize(s);
	swt_sbuf_release(&comm);
}

#define OOM_KILLS_SQL "SELECT delta FROM vmstat WHERE name = 'oom_kill'"
#define OOM_VICTIMS_SQL "SELECT ts, info FROM event WHERE system = 'oom' AND name = 'mark_victim'" \
	" ORDER BY ts, id"
/* a victim's faults in the trace, its threads' too (?1: its pid) */
#define VICTIM_FAULTS_SQL "SELECT count(*) FROM fault WHERE pid = ?1 OR pid IN" \
	" (SELECT pid FROM task WHERE tgid = ?1)"
/* which victims the capture recorded (meta.txt's oom_victims), numbered as the enum below */
#define OOM_SCOPE_SQL "SELECT CASE value WHEN 'all' THEN 2 WHEN 'followed' THEN 1 ELSE 0 END" \
	" FROM capture_fact WHERE section = '' AND key = 'oom_victims'"
enum { UNRECORDED = 0, FOLLOWED = 1, ALL = 2 };

/*
 * An oom:mark_victim event's pid and comm (not NUL-terminated: comm_len
 * bytes) from its text, "pid=%d comm=%s total-vm=...", the kernel's print
 * format; 0 when the text is not that.
 */
static int parse_victim(const char *info, int *pid, const char **comm, int *comm_len)
{
	const char *c = info ? strstr(info, "comm=") : NULL;

	*comm = NULL;
	*comm_len = 0;
	if (!info || sscanf(info, "pid=%d", pid) != 1)
		return 0;
	if (c) {
		const char *end = strstr(c, " total-vm=");

		c += 5;
		*comm = c;
		*comm_len = (int)(end ? (size_t)(end - c) : strlen(c));
	}
	return 1;
}

static long long victim_faults(struct swt_store *st, sqlite3_stmt *f, int pid)
{
	long long faults = 0;

	sqlite3_reset(f);
	sqlite3_bind_int(f, 1, pid);
	if (swt_store_query_step(st, f))
		faults = sqlite3_column_int64(f, 0);
	return faults;
}

/*
 * A workload the OOM killer ended just stops faulting: say who was killed.
 * /proc/vmstat's oom_kill counts the host's kills; oom:mark_victim, where
 * the capture recorded it (meta.txt's oom_victims) or a trace-cmd user
 * did, names each victim, and the victim's own faults in the trace say
 * whether it was the workload.
 */
static void print_oom_kills(FILE *out, struct swt_store *st)
{
	enum { MAX_NAMED = 5 };
	long long kills = swt_store_query_int(st, OOM_KILLS_SQL, 0);
	long long named = swt_store_query_int(st, "SELECT count(*) FROM event WHERE system = 'oom'"
					      " AND name = 'mark_victim'", 0);
	int64_t scope = swt_store_query_int(st, OOM_SCOPE_SQL, UNRECORDED);
	sqlite3_stmt *s = NULL, *f = NULL;
	struct swt_sbuf safe;
	long long shown = 0;

	swt_sbuf_init(&safe);
	if (kills <= 0 && named <= 0)
		return;
	/* no victim named where not all were recorded: the workload may have been one */
	if (kills > 0)
		fprintf(out, "  OOM killer: %lld kill%s on the host while recording (oom_kill)%s\n", kills,
			kills == 1 ? "" : "s", named > 0 ? ":" : scope == ALL ? "" :
			": if one ended the workload, its trace stops early");
	else
		fprintf(out, "  OOM killer: %lld victim%s in the trace:\n", named,
			named == 1 ? "" : "s");
	if (named <= 0 && scope != ALL)
		return;
	if (!swt_store_query_prepare(st, OOM_VICTIMS_SQL, &s) ||
	    !swt_store_query_prepare(st, VICTIM_FAULTS_SQL, &f))
		goto out;
	while (shown < MAX_NAMED && swt_store_query_step(st, s)) {
		const char *comm;
		int comm_len, pid;
		long long faults;

		if (!parse_victim((const char *)sqlite3_column_text(s, 1), &pid, &comm, &comm_len))
			continue;
		faults = victim_faults(st, f, pid);
		fprintf(out, "    pid %d (%s) at %.6f s: ", pid,
			comm_for_terminal(&safe, comm, comm_len),
			(double)sqlite3_column_int64(s, 0) / 1e9);
		if (faults > 0)
			fprintf(out, "%lld of its faults are in the trace, which ends there for it\n", faults);
		else
			fprintf(out, "no fault of it is in the trace\n");
		shown++;
	}
	if (named > shown)
		fprintf(out, "    and %lld more victim%s\n", named - shown, named - shown == 1 ? "" : "s");
	if (kills > named)
		fprintf(out, "    %lld kill%s not named: %s\n", kills - named, kills - named == 1 ? "" : "s",
			scope == FOLLOWED ? "only kills that a followed task made are recorded (--blktrace "
					"with a target)"
				      : "outside the recording's span, or their events were lost");
out:
	sqlite3_finalize(s);
	sqlite3_finalize(f);
	swt_sbuf_release(&safe);
}

/* ,"key":N, or null for SWT_NULL (not recorded) */
static void print_json_int(FILE *out, const char *key, int64_t v)
{
	if (v == SWT_NULL)
		fprintf(out, ",\"%s\":null", key);
	else
		fprintf(out, ",\"%s\":%lld", key, (long long)v);
}

/* ,"key":"text" from a column, or null */
static void print_json_column(FILE *out, const char *key, sqlite3_stmt *s, int col)
{
	fprintf(out, ",\"%s\":", key);
	cli_json_string_to(out, (const char *)sqlite3_column_text(s, col));
}

/* What the text shows past the block counts, for print_json: each key with a leading ',' */
static void print_json_text_facts(FILE *out, struct swt_store *st)
{
	static const char *const vmstat_names[] = {
		"pswpin", "pswpout", "pgmajfault", "swap_ra", "swap_ra_hit", "swpin_zero", "zswpin",
	};
	static const char *const scope_names[] = { [FOLLOWED] = "followed", [ALL] = "all" };
	sqlite3_stmt *s = NULL, *f = NULL;
	struct swt_sbuf comm;
	const char *nothing;
	enum replay_verdict verdict;
	int64_t scope;
	int first;

	swt_sbuf_init(&comm);
	fprintf(out, ",\"capture\":");
	if (swt_store_query_prepare(st, "SELECT name, kernel, page_cluster, vma_ra_enabled, "
				    "layout_source, (SELECT count(*) FROM swap_area) FROM capture", &s) &&
	    swt_store_query_step(st, s)) {
		fprintf(out, "{\"name\":");
		cli_json_string_to(out, (const char *)sqlite3_column_text(s, 0));
		print_json_column(out, "kernel", s, 1);
		print_json_int(out, "page_cluster",
			       sqlite3_column_type(s, 2) == SQLITE_NULL ? SWT_NULL :
			       sqlite3_column_int64(s, 2));
		if (sqlite3_column_type(s, 3) == SQLITE_NULL)
			fprintf(out, ",\"vma_ra_enabled\":null");
		else
			fprintf(out, ",\"vma_ra_enabled\":%s", sqlite3_column_int(s, 3) ? "true" : "false");
		{
			char value[64];
			int lru = swt_replay_multigen_lru(st, value, sizeof(value));

			fprintf(out, ",\"multigen_lru\":%s",
				lru < 0 ? "null" : lru ? "true" : "false");
		}
		fprintf(out, ",\"swap_areas\":%lld", (long long)sqlite3_column_int64(s, 5));
		print_json_column(out, "layout_source", s, 4);
		fprintf(out, "}");
	} else {
		fprintf(out, "null");
	}
	sqlite3_finalize(s);
	s = NULL;

	/* a capture of no events has no times (NULL): no span, as the text says */
	fprintf(out, ",\"span\":");
	if (swt_store_query_int(st, NO_SPAN_SQL, 1)) {
		fprintf(out, "null");
	} else {
		int64_t first_ns = swt_store_query_int(st, "SELECT first_ns FROM capture", 0);
		int64_t last_ns = swt_store_query_int(st, "SELECT last_ns FROM capture", 0);

		fprintf(out, "{\"first_ns\":%lld,\"last_ns\":%lld,\"seconds\":%.9f}",
			(long long)first_ns, (long long)last_ns,
			last_ns > first_ns ? ((double)last_ns - (double)first_ns) / 1e9 : 0.0);
	}
	fprintf(out, ",\"total_events\":%lld",
		(long long)swt_store_query_int(st, TOTAL_EVENTS_SQL, 0));
	fprintf(out, ",\"ended_on_error\":%s",
		swt_store_query_int(st, ENDED_ON_ERROR_SQL, 0) ? "true" : "false");

	fprintf(out, ",\"events_by_system\":{");
	if (swt_store_query_prepare(st, EVENTS_BY_SYSTEM_SQL, &s)) {
		const char *system = NULL;

		while (swt_store_query_step(st, s)) {
			const char *sys = (const char *)sqlite3_column_text(s, 0);
			const char *name = (const char *)sqlite3_column_text(s, 1);

			sys = sys ? sys : "";
			if (!system || strcmp(system, sys)) {
				fprintf(out, "%s", system ? "}," : "");
				cli_json_string_to(out, sys);
				fprintf(out, ":{");
			} else {
				fprintf(out, ",");
			}
			/* the row's text lives until the next step: keep the system's */
			swt_sbuf_release(&comm);
			swt_sbuf_puts(&comm, sys);
			system = comm.oom || !comm.s ? "" : comm.s;
			cli_json_string_to(out, name ? name : "");
			fprintf(out, ":%lld", (long long)sqlite3_column_int64(s, 2));
		}
		if (system)
			fprintf(out, "}");
	}
	sqlite3_finalize(s);
	s = NULL;
	fprintf(out, "}");

	/* the kernel's /proc/vmstat deltas the text shows; null where not recorded */
	fprintf(out, ",\"vmstat\":{");
	for (size_t i = 0; i < SWT_ARRAY_SIZE(vmstat_names); i++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT delta FROM vmstat WHERE name = '%s'",
			 vmstat_names[i]);
		fprintf(out, "%s\"%s\":", i ? "," : "", vmstat_names[i]);
		if (swt_store_query_int(st, sql, SWT_NULL) == SWT_NULL)
			fprintf(out, "null");
		else
			fprintf(out, "%lld", (long long)swt_store_query_int(st, sql, 0));
	}
	fprintf(out, "}");

	/* every victim, where the text names the first few */
	scope = swt_store_query_int(st, OOM_SCOPE_SQL, UNRECORDED);
	fprintf(out, ",\"oom\":{\"kills\":");
	if (swt_store_query_int(st, OOM_KILLS_SQL, SWT_NULL) == SWT_NULL)
		fprintf(out, "null");
	else
		fprintf(out, "%lld", (long long)swt_store_query_int(st, OOM_KILLS_SQL, 0));
	fprintf(out, ",\"victims_recorded\":");
	if (scope == UNRECORDED)
		fprintf(out, "null");
	else
		fprintf(out, "\"%s\"", scope_names[scope]);
	fprintf(out, ",\"victims\":[");
	first = 1;
	if (swt_store_query_prepare(st, OOM_VICTIMS_SQL, &s) &&
	    swt_store_query_prepare(st, VICTIM_FAULTS_SQL, &f)) {
		while (swt_store_query_step(st, s)) {
			const char *victim_comm;
			int comm_len, pid;

			if (!parse_victim((const char *)sqlite3_column_text(s, 1), &pid, &victim_comm,
					  &comm_len))
				continue;
			swt_sbuf_release(&comm);
			swt_sbuf_add(&comm, victim_comm ? victim_comm : "", (size_t)comm_len);
			fprintf(out, "%s{\"pid\":%d,\"comm\":", first ? "" : ",", pid);
			cli_json_string_to(out, comm.oom || !comm.s ? "" : comm.s);
			fprintf(out, ",\"ts_ns\":%lld,\"faults\":%lld}",
				(long long)sqlite3_column_int64(s, 0), victim_faults(st, f, pid));
			first = 0;
		}
	}
	sqlite3_finalize(s);
	sqlite3_finalize(f);
	s = NULL;
	fprintf(out, "]}");

	/* every process swapped in for, where the text lists the first few */
	fprintf(out, ",\"swapin_processes\":[");
	first = 1;
	if (swt_store_query_prepare(st, SWAPIN_PROCESSES_SQL, &s)) {
		sqlite3_bind_int(s, 1, -1);	/* no limit */
		while (swt_store_query_step(st, s)) {
			fprintf(out, "%s{\"pid\":%lld,\"comm\":", first ? "" : ",",
				(long long)sqlite3_column_int64(s, 0));
			cli_json_string_to(out, (const char *)sqlite3_column_text(s, 1));
			fprintf(out, ",\"pages\":%lld,\"threads\":%lld}", (long long)sqlite3_column_int64(s, 2),
				(long long)sqlite3_column_int64(s, 3));
			first = 0;
		}
	}
	sqlite3_finalize(s);
	fprintf(out, "]");

	fprintf(out, ",\"memory_maps\":{\"mappings\":%lld,\"tasks\":%lld,\"threads\":%lld}",
		(long long)swt_store_query_int(st, MAPPINGS_SQL, 0),
		(long long)swt_store_query_int(st, MAPPED_TASKS_SQL, 0),
		(long long)swt_store_query_int(st, MAPPED_THREADS_SQL, 0));

	verdict = replay_verdict(st, &nothing);
	fprintf(out, ",\"replay\":{\"verdict\":\"%s\",\"nothing_to_replay\":",
		verdict_names[verdict]);
	if (nothing)
		cli_json_string_to(out, nothing);
	else
		fprintf(out, "null");
	fprintf(out, ",\"fault_events\":%s,\"swapoff_pages\":%lld}",
		has_fault_events(st) ? "true" : "false",
		(long long)swt_store_query_int(st, SWAPOFF_PAGES_SQL, 0));
	swt_sbuf_release(&comm);
}

static void print_text(FILE *out, struct swt_store *st, const struct dev_counts *devs, size_t nr,
		       const struct stage_stats *all)
{
	sqlite3_stmt *s;
	int64_t first = swt_store_query_int(st, "SELECT first_ns FROM capture", 0);
	int64_t last = swt_store_query_int(st, "SELECT last_ns FROM capture", 0), lost;
	long long mappings;

	if (swt_store_query_prepare(st, "SELECT coalesce(name, '?'), coalesce(kernel, '?'), "
				    "page_cluster, vma_ra_enabled, layout_source, (SELECT count(*) "
				    "FROM swap_area) FROM capture", &s)) {
		if (swt_store_query_step(st, s)) {
			struct swt_sbuf name, kernel;

			/* as process names are: a name or release given by hand may hold anything */
			swt_sbuf_init(&name);
			swt_sbuf_init(&kernel);
			swt_sbuf_text(&name, (const char *)sqlite3_column_text(s, 0));
			swt_sbuf_text(&kernel, (const char *)sqlite3_column_text(s, 1));
			fprintf(out, "Capture '%s': kernel %s", name.oom || !name.s ? "?" : name.s,
				kernel.oom || !kernel.s ? "?" : kernel.s);
			swt_sbuf_release(&name);
			swt_sbuf_release(&kernel);
			if (sqlite3_column_type(s, 2) != SQLITE_NULL)
				fprintf(out, ", page-cluster %lld", (long long)sqlite3_column_int64(s, 2));
			if (sqlite3_column_type(s, 3) != SQLITE_NULL)
				fprintf(out, ", vma_ra_enabled %s", sqlite3_column_int(s, 3) ? "true" : "false");
			{
				char value[64];
				int lru = swt_replay_multigen_lru(st, value, sizeof(value));

				if (lru >= 0)
					fprintf(out, ", multi-gen LRU %s", lru ? "on" : "off");
			}
			fprintf(out, ", %d swap area%s (%s)\n", sqlite3_column_int(s, 5),
				sqlite3_column_int(s, 5) == 1 ? "" : "s",
				sqlite3_column_text(s, 4));
		}
		sqlite3_finalize(s);
	}
	/* a capture of no events has no times (NULL): not a span at time 0 */
	if (swt_store_query_int(st, NO_SPAN_SQL, 1))
		fprintf(out, "Span: none (no event times), ");
	else
		fprintf(out, "Span: %.6f s (%.6f .. %.6f), ",
			last > first ? ((double)last - (double)first) / 1e9 : 0.0,
			(double)first / 1e9, (double)last / 1e9);
	fprintf(out, "%lld events, ",
		(long long)swt_store_query_int(st, TOTAL_EVENTS_SQL, 0));
	if (swt_store_query_int(st, ENDED_ON_ERROR_SQL, 0))
		fprintf(out, "recording ended on an error (incomplete), ");
	if (lost_events(st, &lost))
		fprintf(out, "%lld lost\n", (long long)lost);
	else
		fprintf(out, "lost events unknown\n");

	for (size_t i = 0; i < nr; i++) {
		const struct dev_counts *d = &devs[i];
		int64_t rreq = d->fs.n[0][DISPATCHED], rkib = d->fs.sectors[0][DISPATCHED] / 2;

		fprintf(out, "\nDevice %s%s%s%s\n", d->name, d->path[0] ? " (" : "", d->path,
			d->path[0] ? ")" : "");
		print_counts_text(out, d);
		if (rreq)
			fprintf(out, " Average read request: %.1f KiB\n",
				(double)rkib / (double)rreq);
		if (all)
			print_latency_text(out, d);
	}
	if (all && nr > 1) {
		fprintf(out, "\nAll devices\n");
		print_stages_text(out, all);
	}

	fprintf(out, "\nEvents:\n");
	if (swt_store_query_prepare(st, EVENTS_BY_SYSTEM_SQL, &s)) {
		while (swt_store_query_step(st, s))
			fprintf(out, "  %-12s %-28s %10lld\n", sqlite3_column_text(s, 0),
				sqlite3_column_text(s, 1), (long long)sqlite3_column_int64(s, 2));
		sqlite3_finalize(s);
	}

	fprintf(out, "\nSwap (traced, and the kernel's /proc/vmstat delta where recorded):\n");
	{
		static const char *const rows[][3] = {
			{ "swap-in pages", "SELECT count(*) FROM swap_in", "pswpin" },
			{ "swap-out pages", "SELECT count(*) FROM swap_out", "pswpout" },
		};

		for (size_t r = 0; r < SWT_ARRAY_SIZE(rows); r++) {
			char sql[128];
			int64_t v;

			snprintf(sql, sizeof(sql), "SELECT delta FROM vmstat WHERE name = '%s'",
				 rows[r][2]);
			v = swt_store_query_int(st, sql, SWT_NULL);
			fprintf(out, "  %-15s %10lld", rows[r][0],
				(long long)swt_store_query_int(st, rows[r][1], 0));
			if (v != SWT_NULL)
				fprintf(out, "   %s %lld", rows[r][2], (long long)v);
			fprintf(out, "\n");
		}
	}
	if (swt_store_query_prepare(st, "SELECT name, delta FROM vmstat WHERE name IN"
				    " ('pgmajfault', 'swap_ra', 'swap_ra_hit', 'swpin_zero', 'zswpin')"
				    " ORDER BY name", &s)) {
		int any = 0;

		while (swt_store_query_step(st, s)) {
			fprintf(out, "%s %s %lld", any ? "," : "  kernel:",
				sqlite3_column_text(s, 0), (long long)sqlite3_column_int64(s, 1));
			any = 1;
		}
		if (any)
			fprintf(out, "\n");
		sqlite3_finalize(s);
	}
	print_oom_kills(out, st);
	print_swapin_processes(out, st);
	mappings = swt_store_query_int(st, MAPPINGS_SQL, 0);
	if (mappings > 0) {
		long long tasks = swt_store_query_int(st, MAPPED_TASKS_SQL, 0);
		long long threads = swt_store_query_int(st, MAPPED_THREADS_SQL, 0);
		char shared[64] = "";

		if (threads > 0)
			snprintf(shared, sizeof(shared), ", whose %lld other thread%s them", threads,
				 threads == 1 ? " shares" : "s share");
		fprintf(out, "\nMemory maps: %lld mappings of %lld task%s%s (table vma; VMA replay "
			"takes its bounds from them)\n", mappings, tasks, tasks == 1 ? "" : "s",
			shared);
	}
	print_replay_hint(out, st);
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "latency", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	struct dev_counts *devs = NULL;
	struct stage_stats all[NR_STAGES];
	size_t nr = 0, len = 0;
	char *text = NULL;
	FILE *mem;
	int json = 0, latency = 0, c, status = SWT_EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jl", opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'l')
			latency = 1;
		else
			return cli_bad_option("info", c, argv);
	}
	if (optind != argc - 1)
		return cli_usage_error("info", optind == argc ? "no DB given" :
					       "one DB at a time");
	/*
	 * SQLite's sorts of the block counts spill into temporary files (not
	 * held in memory: a large capture's would take gigabytes): past
	 * ulimit -f, SIGXFSZ killed info (status 153); ignored, the write
	 * fails with EFBIG and info says so in a line
	 */
	cli_ignore_file_size_limit();
	/*
	 * info counts the streams' rows and says whether replay takes them:
	 * a slot replay refuses (text a hand edit left) is refused here too,
	 * not summarised as a healthy capture
	 */
	if (swt_store_open(argv[optind], SWT_STORE_READ, &st, &err) ||
	    swt_store_check_slots(st, NULL, &err) ||
	    info_block_load(st, latency, &devs, &nr, all, &err)) {
		status = cli_fail("info", &err);
		goto out;
	}
	/*
	 * The summary is written to memory and printed whole only when every
	 * query it asked was answered: one that failed (a damaged page, an
	 * I/O error, a full disk for a sort) left a default in its place, or
	 * ended its rows early, so a summary with it is not the capture's
	 */
	mem = open_memstream(&text, &len);
	if (!mem) {
		status = cli_failf("info", SWT_EXIT_FAIL, "out of memory");
		goto out;
	}
	swt_store_clear_query_error(st);
	if (json)
		print_json(mem, st, devs, nr, latency ? all : NULL);
	else
		print_text(mem, st, devs, nr, latency ? all : NULL);
	if (fclose(mem)) {
		status = cli_failf("info", SWT_EXIT_FAIL, "out of memory");
		goto out;
	}
	if (swt_store_query_error(st, &err)) {
		status = cli_fail("info", &err);
		goto out;
	}
	fwrite(text, 1, len, stdout);
	status = SWT_EXIT_OK;
out:
	free(text);
	free(devs);
	swt_store_destroy(st);
	return status;
}
