/*
 * Ingest's block resolver and swap-page derivation on crafted event streams:
 * request lifecycles with back/front merges, requeue and re-issue, partial
 * completion, stages missing from the trace, bio-based devices, request
 * merges; slot mapping through a partition start; fault association;
 * duplicate sources; the block_event view giving the stream back.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blktrace.h"
#include "check.h"
#include "ingest.h"
#include "inputs.h"
#include "util.h"

static const uint32_t DEV = (8u << 20) | 2;

struct fixture {
	char path[64];
	struct swt_store *st;
	struct swt_ingest *ing;
	struct swt_meta *meta;
	uint64_t ts;
};

static void setup(struct fixture *f, const char *swap_spec, int page_cluster)
{
	struct swt_err err = { 0 };
	struct swt_source_info info = { .path = "crafted", .format = "test" };

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/swt-test-ingest-%d.db", (int)getpid());
	f->meta = swt_meta_alloc();
	f->meta->page_cluster = page_cluster;
	if (swap_spec)
		CHECK_INT(swt_meta_add_swap_spec(f->meta, swap_spec, &err), 0);
	CHECK_INT(swt_store_create(f->path, &f->st, &err), 0);
	CHECK_INT(swt_ingest_alloc(f->st, f->meta, NULL, NULL, &f->ing, &err), 0);
	CHECK_INT(swt_ingest_begin_source(f->ing, &info, &err), 0);
	f->ts = 1000;
}

static int blk_on(struct fixture *f, uint32_t dev, int cpu, int action, uint64_t sector,
		  uint32_t nr, const char *rwbs, int pid)
{
	struct swt_event ev = { .type = SWT_EV_BLOCK, .cpu = cpu, .pid = pid };

	ev.ts = f->ts += 10;
	ev.system = "block";
	ev.name = swt_block_action_event_name(action);
	ev.name_id = (uint32_t)action;
	ev.block.action = (uint8_t)action;
	ev.block.dev = dev;
	ev.block.sector = sector;
	ev.block.nr_sectors = nr;
	if (action == SWT_BA_UNPLUG)
		ev.block.arg = 1;	/* requests the unplug let go */
	snprintf(ev.block.rwbs, sizeof(ev.block.rwbs), "%s", rwbs);
	ev.block.write = (uint8_t)swt_rwbs_is_write(rwbs);
	return swt_ingest_event(f->ing, &ev);
}

static int blk(struct fixture *f, int action, uint64_t sector, uint32_t nr, const char *rwbs,
	       int pid)
{
	return blk_on(f, DEV, 0, action, sector, nr, rwbs, pid);
}

/* The block_event view's actions in time order, as one string. */
static void check_stream(struct fixture *f, const char *expected)
{
	sqlite3_stmt *s;

	sqlite3_prepare_v2(swt_store_db(f->st),
			   "SELECT group_concat(action, '') FROM (SELECT action FROM block_event ORDER BY ts)",
			   -1, &s, NULL);
	CHECK_INT(sqlite3_step(s), SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(s, 0), expected);
	sqlite3_finalize(s);
}

static void fault(struct fixture *f, int pid, uint64_t address)
{
	struct swt_event ev = { .type = SWT_EV_FAULT, .cpu = 0, .pid = pid };

	ev.ts = f->ts += 10;
	ev.system = "exceptions";
	ev.name = "page_fault_user";
	ev.name_id = 500;
	ev.fault.address = address;
	ev.fault.error_code = 4;
	CHECK_INT(swt_ingest_event(f->ing, &ev), 0);
}

static void finish(struct fixture *f)
{
	struct swt_err err = { 0 };

	CHECK_INT(swt_ingest_end_source(f->ing, &err), 0);
	CHECK_INT(swt_ingest_finish(f->ing, f->meta, "crafted", &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(swt_store_commit(f->st, &err), 0);
}

static void teardown(struct fixture *f)
{
	swt_ingest_free(f->ing);
	swt_store_destroy(f->st);
	swt_meta_free(f->meta);
	unlink(f->path);
}

static int64_t q(struct fixture *f, const char *sql)
{
	return swt_store_query_int(f->st, sql, -999);
}

TEST(lifecycle_with_merges)
{
	struct fixture f;

	setup(&f, "8:2,start=2048", 3);
	/* bio at 2056 starts a request; 2064 back-merges; 2048 front-merges */
	CHECK_INT(blk(&f, 'Q', 2056, 8, "R", 7), 0);
	CHECK_INT(blk(&f, 'G', 2056, 8, "R", 7), 0);
	CHECK_INT(blk(&f, 'Q', 2064, 8, "R", 7), 0);
	CHECK_INT(blk(&f, 'M', 2064, 8, "R", 7), 0);
	CHECK_INT(blk(&f, 'Q', 2048, 8, "R", 7), 0);
	CHECK_INT(blk(&f, 'F', 2048, 8, "R", 7), 0);
	CHECK_INT(blk(&f, 'P', 0, 0, "N", 7), 0);
	CHECK_INT(blk(&f, 'U', 0, 0, "N", 7), 0);
	CHECK_INT(blk(&f, 'D', 2048, 24, "R", 7), 0);
	CHECK_INT(blk(&f, 'C', 2048, 24, "R", 0), 0);
	finish(&f);

	CHECK_INT(q(&f, "SELECT count(*) FROM request"), 1);
	CHECK_INT(q(&f, "SELECT nr_bios FROM request"), 3);
	CHECK_INT(q(&f, "SELECT sector FROM request"), 2048);
	CHECK_INT(q(&f, "SELECT nr_sectors FROM request"), 24);
	CHECK_INT(q(&f, "SELECT complete_ns - issue_ns FROM request"), 10);
	CHECK_INT(q(&f, "SELECT insert_ns IS NULL FROM request"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM bio WHERE request_id = 1"), 3);
	CHECK_INT(q(&f, "SELECT count(*) FROM bio WHERE merge = 'M'"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM bio WHERE merge = 'F'"), 1);
	/* the plug and its unplug share a row */
	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc"), 1);
	CHECK_INT(q(&f, "SELECT unplug_ns - ts FROM block_misc WHERE action = 'P'"), 10);
	CHECK_INT(q(&f, "SELECT arg FROM block_misc WHERE action = 'P'"), 1);
	/* the view gives back every event, in order */
	CHECK_INT(q(&f, "SELECT count(*) FROM block_event"), 10);
	check_stream(&f, "QGQMQFPUDC");
	/* slots through the partition start: (sector - 2048) / 8; slot 0 is the header */
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_in"), 2);
	CHECK_INT(q(&f, "SELECT min(slot) FROM swap_in"), 1);
	CHECK_INT(q(&f, "SELECT max(slot) FROM swap_in"), 2);
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_in WHERE demand IS NULL"), 2);
	teardown(&f);
}

TEST(plugs_pair_with_their_unplug_only)
{
	const uint32_t other = DEV + 1;
	struct fixture f;

	setup(&f, "8:2", 3);
	CHECK_INT(blk_on(&f, DEV, 0, 'P', 0, 0, "N", 7), 0);	/* ended by the U below */
	CHECK_INT(blk_on(&f, other, 0, 'U', 0, 0, "N", 7), 0);	/* other device: alone */
	CHECK_INT(blk_on(&f, DEV, 1, 'U', 0, 0, "N", 7), 0);	/* other CPU: alone */
	CHECK_INT(blk_on(&f, DEV, 0, 'U', 0, 0, "N", 8), 0);	/* other task: alone */
	CHECK_INT(blk_on(&f, DEV, 0, 'U', 0, 0, "N", 7), 0);
	CHECK_INT(blk_on(&f, DEV, 0, 'U', 0, 0, "N", 7), 0);	/* nothing left to end */
	CHECK_INT(blk_on(&f, DEV, 1, 'P', 0, 0, "N", 9), 0);	/* plugged twice: the first alone */
	CHECK_INT(blk_on(&f, DEV, 1, 'P', 0, 0, "N", 9), 0);	/* never unplugged in the trace */
	finish(&f);

	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc"), 7);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc WHERE unplug_ns IS NOT NULL"), 1);
	CHECK_INT(q(&f, "SELECT unplug_ns - ts FROM block_misc WHERE unplug_ns IS NOT NULL"), 40);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc WHERE action = 'U'"), 4);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_event"), 8);
	check_stream(&f, "PUUUUUPP");
	/* the unplug given back is the one recorded: its device, CPU, task, count */
	CHECK_INT(q(&f, "SELECT count(*) FROM block_event WHERE action = 'U' AND dev = 8388610"
		       " AND cpu = 0 AND pid = 7 AND ts = 1050"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_event WHERE action = 'P' AND pid = 9"), 2);
	teardown(&f);
}

TEST(requeue_partial_and_missing_stages)
{
	struct fixture f;

	setup(&f, "8:2", 0);
	/* a complete with no request known: the trace began mid-flight */
	CHECK_INT(blk(&f, 'C', 800, 8, "W", 0), 0);
	/* issued, requeued, re-issued, completed in two parts */
	CHECK_INT(blk(&f, 'Q', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'G', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'I', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'D', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'R', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'D', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'C', 80, 8, "W", 0), 0);
	CHECK_INT(blk(&f, 'C', 88, 8, "W", 0), 0);
	/* issued with no Q or G in the trace */
	CHECK_INT(blk(&f, 'D', 400, 8, "R", 3), 0);
	CHECK_INT(blk(&f, 'C', 400, 8, "R", 0), 0);
	finish(&f);

	CHECK_INT(q(&f, "SELECT count(*) FROM request"), 3);
	CHECK_INT(q(&f, "SELECT count(*) FROM request WHERE getrq_ns IS NULL AND issue_ns IS NULL"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc WHERE action = 'R'"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc WHERE action = 'D'"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc WHERE action = 'C'"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_event WHERE action = 'D'"), 3);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_event WHERE action = 'C'"), 4);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_event"), 11);
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_out"), 2);
	/* the read at 400 has no bio in the trace, so it yields no swap-in page */
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_in"), 0);
	teardown(&f);
}

TEST(bio_based_device_and_request_merge)
{
	struct fixture f;

	setup(&f, NULL, 3);
	/* zram-like: Q then C on the bio itself */
	CHECK_INT(blk(&f, 'Q', 64, 8, "R", 5), 0);
	CHECK_INT(blk(&f, 'C', 64, 8, "R", 5), 0);
	/* request 2 (at 208) merged into request 1 (ending at 208) */
	CHECK_INT(blk(&f, 'Q', 200, 8, "W", 5), 0);
	CHECK_INT(blk(&f, 'G', 200, 8, "W", 5), 0);
	CHECK_INT(blk(&f, 'Q', 208, 8, "W", 5), 0);
	CHECK_INT(blk(&f, 'G', 208, 8, "W", 5), 0);
	CHECK_INT(blk(&f, 'm', 208, 8, "W", 5), 0);
	finish(&f);
	CHECK_INT(q(&f, "SELECT count(*) FROM request WHERE complete_ns IS NOT NULL AND nr_bios = 1 AND getrq_ns IS NULL"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM block_misc WHERE action = 'm' AND request_id = 3"), 1);
	/* no layout stated: every device is an assumed area from sector 0 */
	CHECK_INT(q(&f, "SELECT assumed FROM swap_area"), 1);
	CHECK_INT(q(&f, "SELECT layout_source = 'assumed' FROM capture"), 1);
	CHECK_INT(q(&f, "SELECT slot FROM swap_in"), 8);
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_out"), 2);
	teardown(&f);
}

TEST(fault_association_and_demand)
{
	struct fixture f;

	setup(&f, "8:2", 0);
	fault(&f, 11, 0x7f0000001234);
	fault(&f, 12, 0x7f0000009000);
	CHECK_INT(blk(&f, 'Q', 80, 8, "R", 11), 0);
	CHECK_INT(blk(&f, 'G', 80, 8, "R", 11), 0);
	CHECK_INT(blk(&f, 'Q', 160, 16, "R", 12), 0);	/* a two-page read */
	CHECK_INT(blk(&f, 'G', 160, 16, "R", 12), 0);
	CHECK_INT(blk(&f, 'Q', 320, 8, "R", 13), 0);	/* no fault by pid 13 */
	CHECK_INT(blk(&f, 'G', 320, 8, "R", 13), 0);
	finish(&f);
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_in"), 4);
	CHECK_INT(q(&f, "SELECT address FROM swap_in WHERE slot = 10"), 0x7f0000001000);
	CHECK_INT(q(&f, "SELECT fault_id FROM swap_in WHERE slot = 10"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_in WHERE fault_id = 2"), 2);
	CHECK_INT(q(&f, "SELECT fault_id IS NULL FROM swap_in WHERE slot = 40"), 1);
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_in WHERE demand = 1"), 4);
	CHECK_INT(q(&f, "SELECT count(*) FROM fault"), 2);
	teardown(&f);
}

/*
 * Faults in one source (trace.dat), reads in another (blktrace files, read
 * after it): each read goes to its task's latest fault before it, by time
 * -- not to the last fault the first source left (every read of a
 * --blktrace capture went to the trace's last fault).
 */
TEST(faults_from_another_source_by_time)
{
	struct fixture f;
	struct swt_err err = { 0 };
	struct swt_source_info info = { .path = "blk", .format = "test" };
	uint64_t end;

	setup(&f, "8:2", 0);
	fault(&f, 11, 0x7f0000001234);			/* ts 1010 */
	fault(&f, 11, 0x7f0000005000);			/* ts 1020 */
	f.ts = 1100;
	fault(&f, 11, 0x7f0000009000);			/* ts 1110 */
	CHECK_INT(swt_ingest_end_source(f.ing, &err), 0);
	CHECK_INT(swt_ingest_begin_source(f.ing, &info, &err), 0);
	end = f.ts;
	f.ts = 1010;
	CHECK_INT(blk(&f, 'Q', 80, 8, "R", 11), 0);	/* ts 1020: after the second fault */
	CHECK_INT(blk(&f, 'G', 80, 8, "R", 11), 0);
	f.ts = end;
	CHECK_INT(blk(&f, 'Q', 160, 8, "R", 11), 0);	/* after the third */
	CHECK_INT(blk(&f, 'G', 160, 8, "R", 11), 0);
	finish(&f);
	CHECK_INT(q(&f, "SELECT fault_id FROM swap_in WHERE slot = 10"), 2);
	CHECK_INT(q(&f, "SELECT address FROM swap_in WHERE slot = 10"), 0x7f0000005000);
	CHECK_INT(q(&f, "SELECT fault_id FROM swap_in WHERE slot = 20"), 3);
	teardown(&f);
}

TEST(misaligned_and_outside_area_io_is_not_swap)
{
	struct fixture f;

	setup(&f, "8:2,start=1000,slots=10", 3);
	CHECK_INT(blk(&f, 'Q', 1004, 8, "R", 1), 0);	/* not page-aligned in the area */
	CHECK_INT(blk(&f, 'Q', 1000, 8, "R", 1), 0);	/* header slot 0 */
	CHECK_INT(blk(&f, 'Q', 1080, 8, "R", 1), 0);	/* slot 10: past the area */
	CHECK_INT(blk(&f, 'Q', 1072, 8, "R", 1), 0);	/* slot 9: the last one */
	CHECK_INT(blk(&f, 'Q', 1008, 8, "FF", 1), 0);	/* a flush is no swap read */
	finish(&f);
	CHECK_INT(q(&f, "SELECT count(*) FROM swap_in"), 1);
	CHECK_INT(q(&f, "SELECT slot FROM swap_in"), 9);
	CHECK_INT(q(&f, "SELECT count(*) FROM bio WHERE request_id IS NULL"), 5);
	teardown(&f);
}

TEST(same_device_from_two_sources_is_refused)
{
	struct fixture f;
	struct swt_err err = { 0 };
	struct swt_source_info info = { .path = "second", .format = "test" };

	setup(&f, "8:2", 3);
	CHECK_INT(blk(&f, 'Q', 80, 8, "R", 1), 0);
	CHECK_INT(swt_ingest_end_source(f.ing, &err), 0);
	CHECK_INT(swt_ingest_begin_source(f.ing, &info, &err), 0);
	CHECK(blk(&f, 'Q', 88, 8, "R", 1) < 0);
	CHECK(strstr(swt_ingest_error(f.ing)->msg,
		     "'second': block events for device 8:2 also come from 'crafted'") != NULL);
	teardown(&f);
}

/*
 * The source row's update once the decoder knows the file's version and
 * CPUs (here refused by a trigger, as a full disk would) fails the input,
 * naming the database (it was ignored, and its own failure had no message).
 */
TEST(source_update_failure_fails_the_input)
{
	struct fixture f;
	struct swt_err err = { 0 };
	struct swt_blk_record rec = {
		.version = 7, .sequence = 1, .time = 2000, .sector = 80, .bytes = 4096,
		.action = (uint64_t)(SWT_BLK_TC_READ | SWT_BLK_TC_QUEUE) << 16 | SWT_BLK_TA_QUEUE,
		.pid = 1, .device = DEV,
	};
	unsigned char buf[128];
	char path[64];
	size_t n = swt_blk_encode(&rec, 0, buf);
	FILE *out;

	snprintf(path, sizeof(path), "/tmp/swt-test-ingest-%d.blktrace.0", (int)getpid());
	out = fopen(path, "wb");
	CHECK(out && fwrite(buf, 1, n, out) == n);
	if (out)
		fclose(out);
	setup(&f, "8:2", 0);
	CHECK_INT(swt_ingest_end_source(f.ing, &err), 0);
	/* (the end of a source updates other columns: events, lost_events) */
	CHECK_INT(swt_store_exec(f.st, "CREATE TEMP TRIGGER no_update BEFORE UPDATE OF version"
				 " ON main.source BEGIN SELECT RAISE(ABORT, 'versions are read-only');"
				 " END", &err), 0);
	CHECK(swt_ingest_input(f.ing, path, &err) < 0);
	if (!strstr(err.msg, f.path) ||
	    !strstr(err.msg, "update source version: versions are read-only")) {
		fprintf(stderr, "message '%s' does not name the database and the failure\n", err.msg);
		check_failures++;
	}
	teardown(&f);
	unlink(path);
}

/*
 * A source whose row cannot be inserted (a full disk, here a trigger) is
 * not counted: freeing the ingest frees the paths of the sources counted,
 * and it once read one past the table of 16 (under the sanitizers, a
 * heap overflow).
 */
TEST(failed_source_is_not_counted)
{
	struct fixture f;
	struct swt_err err = { 0 };
	struct swt_source_info info = { .path = "another", .format = "test" };

	setup(&f, "8:2", 0);
	CHECK_INT(swt_ingest_end_source(f.ing, &err), 0);
	for (int i = 2; i <= 16; i++) {
		CHECK_INT(swt_ingest_begin_source(f.ing, &info, &err), 0);
		CHECK_INT(swt_ingest_end_source(f.ing, &err), 0);
	}
	CHECK_INT(swt_store_exec(f.st, "CREATE TEMP TRIGGER no_insert BEFORE INSERT ON main.source"
				 " BEGIN SELECT RAISE(ABORT, 'no more sources'); END", &err), 0);
	CHECK(swt_ingest_begin_source(f.ing, &info, &err) < 0);
	CHECK(strstr(err.msg, "insert source: no more sources") != NULL);
	teardown(&f);
}

/*
 * Under SWT_TIMING the library prints nothing (it once wrote its stages'
 * times to stderr): it records them, and the command line reports them.
 */
TEST(finish_prints_nothing_and_records_its_times)
{
	struct fixture f;
	char path[64];
	uint64_t rows_ns = 0, facts_ns = 0;
	int saved, fd;
	struct stat sb;

	snprintf(path, sizeof(path), "/tmp/swt-test-ingest-%d.stderr", (int)getpid());
	setup(&f, "8:2", 0);
	CHECK_INT(blk(&f, 'Q', 80, 8, "R", 1), 0);
	setenv("SWT_TIMING", "1", 1);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	finish(&f);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	unsetenv("SWT_TIMING");
	CHECK_INT(stat(path, &sb), 0);
	CHECK_INT(sb.st_size, 0);
	swt_ingest_finish_times(f.ing, &rows_ns, &facts_ns);
	CHECK(rows_ns > 0 && facts_ns >= rows_ns);
	teardown(&f);
	unlink(path);
}

static void newtask(struct fixture *f, int parent, const char *info)
{
	struct swt_event ev = { .type = SWT_EV_OTHER, .cpu = 0, .pid = parent };

	ev.ts = f->ts += 10;
	ev.system = "task";
	ev.name = "task_newtask";
	ev.name_id = 600;
	ev.info = info;
	CHECK_INT(swt_ingest_event(f->ing, &ev), 0);
}

/*
 * task:task_newtask with CLONE_THREAD gives the new thread its starter's
 * process (also a thread's thread, and with a comm holding spaces); a
 * fork (no CLONE_THREAD) and an unreadable line give nothing.
 */
TEST(threads_from_task_newtask)
{
	struct fixture f;

	setup(&f, "8:2", 0);
	newtask(&f, 100, "pid=101 comm=worker clone_flags=3d0f00 oom_score_adj=0");
	newtask(&f, 101, "pid=102 comm=Web Content clone_flags=3d0f00 oom_score_adj=0");
	newtask(&f, 100, "pid=103 comm=child clone_flags=1200011 oom_score_adj=0");
	newtask(&f, 100, "pid=104 comm=odd clone_flags=zz oom_score_adj=0");
	newtask(&f, 103, "pid=105 comm=w clone_flags=0x3d0f00 oom_score_adj=0");
	fault(&f, 102, 0x7f0000001000ull);
	finish(&f);
	CHECK_INT(q(&f, "SELECT tgid FROM task WHERE pid = 101"), 100);
	CHECK_INT(q(&f, "SELECT tgid FROM task WHERE pid = 102"), 100);
	CHECK_INT(q(&f, "SELECT tgid FROM task WHERE pid = 105"), 103);
	CHECK_INT(q(&f, "SELECT count(*) FROM task WHERE pid IN (103, 104) AND tgid IS NOT NULL"), 0);
	CHECK_INT(q(&f, "SELECT count(*) FROM task WHERE tgid IS NOT NULL"), 3);
	teardown(&f);
}

/*
 * A database of schema version 5, whose block_event view gave a request
 * completed in parts its whole extent at the end (a stand-in here), opened
 * read-only: read through this version's view, the file unchanged, and
 * version 4 still refused.
 */
TEST(version_5_read_through_this_versions_view)
{
	struct fixture f;
	struct swt_store *st = NULL;
	struct swt_err err = { 0 };
	char *before, *after;
	long len_before, len_after;
	sqlite3_stmt *s;

	setup(&f, "8:2", 0);
	CHECK_INT(blk(&f, 'Q', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'G', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'I', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'D', 80, 16, "W", 9), 0);
	CHECK_INT(blk(&f, 'C', 80, 8, "W", 0), 0);
	CHECK_INT(blk(&f, 'C', 88, 8, "W", 0), 0);
	finish(&f);
	CHECK_INT(sqlite3_exec(swt_store_db(f.st),
			       "DROP VIEW block_event;"
			       "CREATE VIEW block_event AS SELECT 'C' AS action, 80 AS sector,"
			       " 16 AS nr_sectors, 0 AS ts;"
			       "UPDATE swt_meta SET value = '5' WHERE key = 'schema_version';"
			       "PRAGMA user_version = 5;", NULL, NULL, NULL), SQLITE_OK);
	swt_store_destroy(f.st);
	f.st = NULL;
	before = check_read_file(f.path, &len_before);
	CHECK(before != NULL);

	CHECK_INT(swt_store_open(f.path, SWT_STORE_READ, &st, &err), 0);
	if (st) {
		CHECK_INT(swt_store_schema_version(st), SWT_SCHEMA_VERSION);
		CHECK_INT(sqlite3_prepare_v2(swt_store_db(st),
					     "SELECT group_concat(sector || '+' || nr_sectors, ' ') FROM"
					     " (SELECT sector, nr_sectors FROM block_event"
					     "   WHERE action = 'C' ORDER BY ts)", -1, &s, NULL), SQLITE_OK);
		CHECK_INT(sqlite3_step(s), SQLITE_ROW);
		CHECK_STR((const char *)sqlite3_column_text(s, 0), "80+8 88+8");
		sqlite3_finalize(s);
		swt_store_destroy(st);
	}
	after = check_read_file(f.path, &len_after);
	CHECK(after != NULL && len_after == len_before && !memcmp(before, after, (size_t)len_before));
	free(before);
	free(after);

	{
		sqlite3 *db = NULL;

		CHECK_INT(sqlite3_open(f.path, &db), SQLITE_OK);
		CHECK_INT(sqlite3_exec(db, "UPDATE swt_meta SET value = '4' WHERE key = 'schema_version';"
				       "PRAGMA user_version = 4;", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	st = NULL;
	CHECK_INT(swt_store_open(f.path, SWT_STORE_READ, &st, &err), -SWT_EVERSION);
	CHECK(st == NULL);
	teardown(&f);
}

/*
 * The largest read request as the capture's swap_device facts give it
 * (swt_store_request_limit_kib): per device the smaller of max_sectors_kb
 * and max_segments pages, the smallest over the devices.
 */
static int64_t limit_of_in(const char *section, const char *const *lines, size_t n,
			   unsigned page_shift, int *recorded)
{
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	char path[64];
	int64_t kib = -1;

	snprintf(path, sizeof(path), "/tmp/swt-test-limit-%d.db", (int)getpid());
	CHECK_INT(swt_store_create(path, &st, &err), 0);
	if (st) {
		/* the page size it reads the limits in, as replay does: the capture's */
		char sql[80];

		snprintf(sql, sizeof(sql), "INSERT INTO capture (page_size) VALUES (%lld)",
			 (long long)1 << page_shift);
		CHECK_INT(sqlite3_exec(swt_store_db(st), sql, NULL, NULL, NULL), SQLITE_OK);
	}
	for (size_t i = 0; st && i < n; i++) {
		sqlite3_stmt *s = NULL;

		CHECK_INT(sqlite3_prepare_v2(swt_store_db(st), "INSERT INTO capture_fact (section, key,"
					     " value) VALUES (?, 'swap_device', ?)", -1, &s, NULL),
			  SQLITE_OK);
		sqlite3_bind_text(s, 1, section, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, lines[i], -1, SQLITE_STATIC);
		CHECK_INT(sqlite3_step(s), SQLITE_DONE);
		sqlite3_finalize(s);
	}
	if (st)
		kib = swt_store_request_limit_kib(st, recorded);
	swt_store_destroy(st);
	unlink(path);
	return kib;
}

static int64_t limit_of(const char *const *lines, size_t n, unsigned page_shift, int *recorded)
{
	return limit_of_in("", lines, n, page_shift, recorded);
}

TEST(request_limit_from_swap_device_facts)
{
	int recorded = -1;

	/* what capture writes, spaces between the words */
	{
		static const char *const l[] = {
			"path=/dev/loop0 dev=7:0 type=partition max_sectors_kb=1280 max_segments=33 start=0",
		};

		CHECK_INT(limit_of(l, 1, 12, &recorded), 132);
		CHECK_INT(recorded, 1);
	}
	/*
	 * a meta.txt may part them with tabs, as ingest reads them (and checks
	 * the limits): the line is kept as written (they were not read, and
	 * requests split at the default 512 KiB)
	 */
	{
		static const char *const l[] = {
			"path=/dev/loop0\tdev=7:0\ttype=partition\tmax_sectors_kb=64\tmax_segments=128\tstart=0",
			"path=/dev/loop1 dev=7:1\tmax_segments=8",
		};

		CHECK_INT(limit_of(l, 1, 12, &recorded), 64);
		CHECK_INT(recorded, 1);
		CHECK_INT(limit_of(l + 1, 1, 12, &recorded), 32);
		CHECK_INT(recorded, 1);
	}
	/*
	 * limits past replay's largest request (65536 KiB, --max-request-kib's
	 * most), which ingest takes (whole numbers to 2^31 - 1), bind there:
	 * they were taken as not recorded, the defaults' 1280 KiB or 128
	 * segments, a smaller limit than the device's
	 */
	{
		static const char *const l[] = {
			"path=/dev/dm-0 dev=253:0 max_sectors_kb=131072 max_segments=128",
			"path=/dev/dm-0 dev=253:0 max_sectors_kb=2147483647 max_segments=2147483647",
			"path=/dev/dm-0 dev=253:0 max_sectors_kb=4096 max_segments=100000",
		};

		CHECK_INT(limit_of(l, 1, 16, &recorded), 8192);	/* 64 KiB pages: 128 segments */
		CHECK_INT(limit_of(l + 1, 1, 12, &recorded), 65536);
		CHECK_INT(limit_of(l + 2, 1, 12, &recorded), 4096);
		CHECK_INT(limit_of(l, 3, 16, &recorded), 4096);
		CHECK_INT(recorded, 3);
	}
	/*
	 * a swap_device line under a section header is a swap area to ingest
	 * as at the top (meta.c), its limits checked; the fact keeps the
	 * section (its limits were not read: the default 512 KiB)
	 */
	{
		static const char *const l[] = { "path=/dev/loop0 dev=7:0 max_sectors_kb=64" };

		CHECK_INT(limit_of_in("/proc/swaps at end", l, 1, 12, &recorded), 64);
		CHECK_INT(recorded, 1);
	}
}

CHECK_MAIN
