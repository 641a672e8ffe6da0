/*
 * The swaptrace database: creating it (atomically: a temporary file renamed
 * into place on success, so a failed ingest never leaves a half-written
 * database), opening it, and the bulk row writer ingest feeds.
 *
 * Schema: store/schema.sql, documented in docs/schema.md.
 */
#ifndef SWT_STORE_H
#define SWT_STORE_H

#include <stdint.h>
#include <sqlite3.h>

#include "swaptrace/error.h"

#define SWT_SCHEMA_VERSION 6
/* The schema version that added task.tgid (a reader of an older one does without) */
#define SWT_SCHEMA_TASK_TGID 5

/*
 * The largest read request, where a capture does not record its swap
 * devices' queue limits: max_sectors_kb's usual value (1280 KiB), or
 * BLK_MAX_SEGMENTS (128) segments -- each swap page is a bio of one
 * segment -- whichever is smaller: 512 KiB on 4 KiB pages.
 */
#define SWT_DEFAULT_MAX_SECTORS_KB 1280
#define SWT_DEFAULT_MAX_SEGMENTS 128

/* NULL marker for integer columns in the row structs below. */
#define SWT_NULL INT64_MIN

/*
 * A swap_in row's condition for standing for a fault: swapoff(8) reads
 * every page back (try_to_unuse, through the same readahead), and pswpin
 * counts those reads, but no task faulted on them.  Told by the reading
 * task's name, as the trace records it.  Replay leaves these reads out of
 * its faults, and the report out of its traced swap-in reads.
 */
#define SWT_NOT_SWAPOFF_SQL "(pid IS NULL OR pid NOT IN (SELECT pid FROM task WHERE comm = 'swapoff'))"

/*
 * Slots per swap area the replay indexes (its slot words are 32-bit):
 * 2^32 pages of 4 KiB is 16 TiB, past any swap area in use.  A slot at or
 * beyond it is refused where it enters, before anything is sized by it.
 */
#define SWT_SLOT_LIMIT ((uint64_t)1 << 32)

struct swt_store;

/*
 * Create a new, empty database that will appear at `path` only when
 * swt_store_commit() succeeds.  Fails when the directory is not writable.
 * An existing swaptrace database (any schema version) or empty file at
 * path is replaced on commit; any other file there is refused, naming it.
 * A symbolic link at path is written through: the file it leads to (one a
 * dangling link names) is replaced, the link stays.
 */
int swt_store_create(const char *path, struct swt_store **out, struct swt_err *err);
/*
 * The replay runs stored in the swaptrace database at path, which a
 * create there will replace: 0 when there is none (or no database).
 */
int64_t swt_store_runs_at(const char *path);

/* How swt_store_open opens a database. */
enum swt_store_mode {
	/*
	 * read-only, of this build's schema version, or of an older one that
	 * differs by its views alone: read through this version's views, made
	 * TEMP over the stored ones for the connection (the file not written)
	 */
	SWT_STORE_READ = 0,
	/* read-write: an older schema version it can upgrade is upgraded in place */
	SWT_STORE_WRITE = 1,
	/*
	 * Read-only, an older schema version it could upgrade read as it is
	 * (not upgraded: the file is not written), for a reader that reads
	 * nothing the upgrades add, or asks swt_store_schema_version first
	 */
	SWT_STORE_READ_OLDER = 2,
};

/* Open an existing database; checks the schema version (see the modes). */
int swt_store_open(const char *path, enum swt_store_mode mode, struct swt_store **out,
		   struct swt_err *err);

/*
 * The schema version of the open database: SWT_SCHEMA_VERSION, or an
 * older one opened with SWT_STORE_READ_OLDER.
 */
int swt_store_schema_version(struct swt_store *st);

/* Make a created database durable and move it into place. */
int swt_store_commit(struct swt_store *st, struct swt_err *err);

/*
 * Close; a created-but-uncommitted database is deleted.  A database opened
 * read-only in WAL mode is left as it was found: the -wal and -shm files
 * its connection made go, unless another connection has it open (those it
 * found stay).  NULL is a no-op.
 */
void swt_store_destroy(struct swt_store *st);

sqlite3 *swt_store_db(struct swt_store *st);
const char *swt_store_path(struct swt_store *st);
/*
 * Can rows be stored in st?  0; or -SWT_EIO with "'PATH': a readonly
 * database", or "'PATH': its directory cannot be written, where SQLite
 * keeps the database's journal" (SQLite makes it there at the first
 * insert).  For commands to say so before work whose rows would be lost.
 */
int swt_store_check_writable(struct swt_store *st, struct swt_err *err);
/* The temporary file a created database is built in until commit, else NULL. */
const char *swt_store_pending_path(struct swt_store *st);

/* Run SQL with no result rows; errors name the database. */
int swt_store_exec(struct swt_store *st, const char *sql, struct swt_err *err);
/* Prepare a statement; errors name the database and the SQLite message. */
int swt_store_prepare(struct swt_store *st, const char *sql, sqlite3_stmt **stmt,
		      struct swt_err *err);
/* Report a SQLite failure on st as an swt_err. */
int swt_store_sql_error(struct swt_store *st, struct swt_err *err, const char *what);

/*
 * The largest read request on the capture's swap devices, KiB: per device
 * the smaller of max_sectors_kb and max_segments pages, as its swap_device
 * fact records them (the SWT_DEFAULT_ values where it does not), the
 * smallest over the devices, in whole pages of the capture (at least one)
 * as a run stores it.  *recorded: how many devices recorded either.  A
 * failed read is kept for swt_store_query_error.
 */
int64_t swt_store_request_limit_kib(struct swt_store *st, int *recorded);

/*
 * Single integer result of a query (first column of first row); def if no
 * row.  A query that fails (a damaged page, an I/O error, no memory...) is
 * def too: the failure is kept for swt_store_query_error.
 */
int64_t swt_store_query_int(struct swt_store *st, const char *sql, int64_t def);
/*
 * count(*) of a table (a constant name), the bound of what a reader will
 * read from it (swt_reserve); 0 when unknown (a failed count is kept for
 * swt_store_query_error, as other counts are).
 */
size_t swt_store_table_rows(struct swt_store *st, const char *table);
/*
 * The first query on st that failed, where its reader went on with a
 * default (swt_store_query_int, or a reader of swt_store_query_prepare
 * and swt_store_query_step), since st was opened or the last
 * swt_store_clear_query_error: 0 when none did, else -SWT_EDB with
 * "'PATH': query: SQLite's message" in err.  For a command that reads many
 * answers before it prints them, to print none of them when one was lost.
 */
int swt_store_query_error(struct swt_store *st, struct swt_err *err);
void swt_store_clear_query_error(struct swt_store *st);
/*
 * For readers that go on with a default when a query fails: 1 when sql
 * was prepared into *s, 0 when it failed; and 1 at a row of s, 0 at the
 * end of its rows or at a failure.  A failure is kept for
 * swt_store_query_error (the first one kept wins), so that a loop that
 * stopped on one is told from one that ran to the end.
 */
int swt_store_query_prepare(struct swt_store *st, const char *sql, sqlite3_stmt **s);
int swt_store_query_step(struct swt_store *st, sqlite3_stmt *s);

/*
 * The first row of swap_in, else of swap_out, else of swap_probe, in any
 * swap area, listed in swap_area or not, whose slot ingest never stores:
 * no whole number (SQLite keeps what a hand edit gives an INTEGER column
 * when it does not read as one, '7abc', 1.5, a blob, and reads it back as
 * 0 or as the number it starts with), below 1 (slot 0 is the swap area's
 * header), or past the end of an area of recorded size.  A probe's NULL
 * slot is none: replay leaves such a row out.  -SWT_EFORMAT, "'PATH':
 * TABLE row ID: slot VALUE is not a whole number: not a database ingest
 * wrote" (or "is the swap area's header, never a page", "is below the
 * swap area", "is past the end of swap area DEV (N slots)"), the value as
 * SQL quotes it; 0 when there is none.  One scan of each table in id
 * order.  For the readers of the streams' slots (info, report, replay),
 * before they take one for a page or say anything: each refuses the same
 * database with the same line.  census (NULL: not wanted) gets what the
 * scans saw of the streams besides, for replay, which would otherwise
 * scan them again; swt_store_slot_census_free() frees it.
 */
struct swt_store_slot_census {
	size_t nr_areas;
	int64_t *area_ids;	/* swap_area's ids, ascending */
	/* per area: the highest slot of its swap_in and swap_out rows, 0 none */
	int64_t *top;
	/* swap_in and swap_out rows whose area_id names no row of swap_area */
	size_t no_area_in, no_area_out;
};
int swt_store_check_slots(struct swt_store *st, struct swt_store_slot_census *census,
			  struct swt_err *err);
void swt_store_slot_census_free(struct swt_store_slot_census *c);
/* The index of area id in a census, -1 when the database has no such area. */
int swt_store_census_area(const struct swt_store_slot_census *c, int64_t id);

/* Bind an int64 that may be SWT_NULL. */
static inline int swt_bind_int(sqlite3_stmt *s, int col, int64_t v)
{
	return v == SWT_NULL ? sqlite3_bind_null(s, col) : sqlite3_bind_int64(s, col, v);
}

/* A result column's int64, or def where it is NULL. */
static inline int64_t swt_column_int(sqlite3_stmt *s, int col, int64_t def)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? def : sqlite3_column_int64(s, col);
}

/*
 * Bulk writer: rows are queued from the ingest thread and inserted by a
 * writer thread inside one transaction, so decoding and SQLite run on two
 * cores.  Row structs are copied; strings are copied.  While the writer
 * runs, the caller touches the connection only after swt_writer_sync().
 */
enum swt_row_kind {
	SWT_ROW_BIO = 1,
	SWT_ROW_REQUEST,
	SWT_ROW_BLOCK_MISC,
	SWT_ROW_FAULT,
	SWT_ROW_RECLAIM,
	SWT_ROW_PROBE,
	SWT_ROW_EVENT,
	SWT_ROW_SWAP_IN,
	SWT_ROW_SWAP_OUT,
	SWT_ROW__COUNT
};

struct swt_row_bio {
	int64_t id, source_id, request_id;
	int64_t dev, write;
	int64_t sector, nr_sectors;
	int64_t queue_ns, cpu, pid;
	int64_t merge;		/* 0, 'M' or 'F' */
	int64_t merge_ns;
	char rwbs[12];
};

struct swt_row_request {
	int64_t id, source_id, dev, write;
	int64_t sector, nr_sectors, nr_bios;
	int64_t getrq_ns, getrq_cpu, getrq_pid;
	int64_t insert_ns, insert_cpu, insert_pid;
	int64_t issue_ns, issue_cpu, issue_pid;
	int64_t complete_ns, complete_cpu, complete_pid;
	int64_t error, pc;
	char rwbs[12];
};

struct swt_row_block_misc {
	int64_t source_id, ts, cpu, pid, dev;
	int64_t action;		/* letter */
	int64_t write, sector, nr_sectors, arg, arg_dev, error, request_id, pc;
	int64_t unplug_ns;	/* a plug: when the unplug that ended it came, or SWT_NULL */
	char rwbs[12];
};

struct swt_row_fault {
	int64_t id, ts, cpu, pid, address, ip, error_code;
};

struct swt_row_reclaim {
	int64_t ts, cpu, pid, pfn, flags;
};

struct swt_row_probe {
	int64_t ts, cpu, pid, area_id, slot, address;
	const char *kind;	/* static string */
};

struct swt_row_event {
	int64_t source_id, ts, cpu, pid;
	const char *system, *name, *info;	/* copied by the writer */
};

/* swap_in (all fields) and swap_out (no fault_id, address, demand) */
struct swt_row_swap {
	int64_t ts, area_id, slot, dev, pid, bio_id, request_id;
	int64_t fault_id, address, demand;
};

struct swt_writer;

/*
 * Prepare the writer and open a transaction on st; the thread starts with
 * the first full chunk of rows.
 */
int swt_writer_start(struct swt_store *st, struct swt_writer **out, struct swt_err *err);
/* Queue one row (struct matching kind).  Returns the writer's first error. */
int swt_writer_put(struct swt_writer *w, enum swt_row_kind kind, const void *row);
/*
 * Wait until every queued row is in the database, so the caller may use the
 * connection itself (it is not shared concurrently: no SQLite mutexing).
 * The writer thread ends until rows are queued again: until then the
 * process has no other thread, and may fork.
 */
int swt_writer_sync(struct swt_writer *w);
/*
 * The message of the writer's first error, once a call above returned one
 * (code 0 when the failure had no message of its own, as out of memory).
 */
const struct swt_err *swt_writer_error(struct swt_writer *w);
/*
 * Drain the queue and stop the thread, leaving the transaction open for the
 * caller's derivations.  Returns the first insert error.  Always frees w.
 */
int swt_writer_finish(struct swt_writer *w, struct swt_err *err);

#endif
