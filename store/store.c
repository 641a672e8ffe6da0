/*
 * Database lifecycle: create (into a temporary file, renamed on commit),
 * open with a schema check, and small SQL helpers shared by every area.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "util.h"

extern const char swt_schema_sql[];
extern const char swt_block_event_sql[];

struct swt_store {
	sqlite3 *db;
	char *path;		/* final path, as given (named in messages) */
	/*
	 * While creating: the file the commit replaces, path with the symbolic
	 * links it names followed (resolve_target); else NULL
	 */
	char *target;
	char *tmp_path;		/* temporary file while creating, else NULL */
	int committed;
	int version;		/* schema version: older only as SWT_STORE_READ_OLDER opened it */
	/*
	 * PATH-wal and PATH-shm, where a read-only open found neither: what
	 * its connection makes of them goes at destroy (remove_made_wal_files)
	 */
	char *made_sides[2];
	/*
	 * The first query that failed since the last swt_store_clear_query_error
	 * (code 0: none), where its reader took a default for its answer
	 */
	struct swt_err query_err;
};

sqlite3 *swt_store_db(struct swt_store *st)
{
	return st->db;
}

const char *swt_store_path(struct swt_store *st)
{
	return st->path;
}

int swt_store_check_writable(struct swt_store *st, struct swt_err *err)
{
	char *dir;
	int ok;

	if (sqlite3_db_readonly(st->db, "main") == 1)
		return swt_error(err, SWT_EIO, "'%s': a readonly database", st->path);
	dir = swt_dirname(st->path);
	if (!dir)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	/* EACCES by mode, EPERM immutable, EROFS a read-only mount; anything else: cannot tell */
	ok = access(dir[0] ? dir : "/", W_OK | X_OK) == 0 ||
	     (errno != EACCES && errno != EPERM && errno != EROFS);
	free(dir);
	if (!ok)
		return swt_error(err, SWT_EIO, "'%s': its directory cannot be written, where SQLite "
				 "keeps the database's journal", st->path);
	/*
	 * a writer holding it now: said before a sweep computes for minutes,
	 * where its store found it locked at the end and lost the work
	 */
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		if ((sqlite3_errcode(st->db) & 0xff) == SQLITE_BUSY)
			return swt_error(err, SWT_EIO, "'%s': the database is locked: another "
					 "process has been writing it for more than 5 s; try again "
					 "when it is done", st->path);
		return swt_store_sql_error(st, err, "starting a write");
	}
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return 0;
}

const char *swt_store_pending_path(struct swt_store *st)
{
	return st->tmp_path;
}

int swt_store_schema_version(struct swt_store *st)
{
	return st->version;
}

/*
 * Make the block_event view, this version's (block-event.sql), in schema
 * "main" (anew: when a database is created or upgraded) or "temp" (over
 * the stored one, for this connection only: a database read as it is).
 */
static int make_block_event_view(struct swt_store *st, const char *schema, struct swt_err *err)
{
	char *sql = sqlite3_mprintf("DROP VIEW IF EXISTS %s.block_event;"
				    "CREATE VIEW %s.block_event AS\n%s", schema, schema,
				    swt_block_event_sql);
	int ret;

	if (!sql)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	ret = swt_store_exec(st, sql, err);
	sqlite3_free(sql);
	return ret;
}

/*
 * The system error behind the connection's last I/O error (EFBIG, EIO...),
 * 0 when it is not one or unknown.  The errno SQLite took when it reported
 * the error is gone where a failed COMMIT rolled back first; the database
 * file keeps the one its write failed with.
 */
static int io_errno(sqlite3 *db)
{
	int sys;

	if (!db || (sqlite3_errcode(db) & 0xff) != SQLITE_IOERR)
		return 0;
	sys = sqlite3_system_errno(db);
	if (!sys && sqlite3_file_control(db, "main", SQLITE_FCNTL_LAST_ERRNO, &sys) != SQLITE_OK)
		sys = 0;
	return sys;
}

int swt_store_sql_error(struct swt_store *st, struct swt_err *err, const char *what)
{
	int sys = io_errno(st->db);

	/* "disk I/O error" alone does not say which: a file too large, EIO... */
	if (sys)
		return swt_error(err, SWT_EDB, "'%s': %s: %s (%s)", st->path, what,
				 sqlite3_errmsg(st->db), strerror(sys));
	return swt_error(err, SWT_EDB, "'%s': %s: %s", st->path, what,
			 st->db ? sqlite3_errmsg(st->db) : "no database");
}

/*
 * SQLite opens no database whose absolute path, with "-journal" after it,
 * is longer than its VFS allows (512 bytes in Debian's build): relative
 * paths in a deep directory too.  It says only "unable to open database
 * file".  The length path has as an absolute one.
 */
static size_t absolute_len(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return strlen(path);
	if (getcwd(cwd, sizeof(cwd)))
		return strlen(path) + strlen(cwd) + 1;
	/*
	 * A directory longer than PATH_MAX is at least that long; one that was
	 * removed (ENOENT) has no length: the open says what is wrong, not
	 * "too long"
	 */
	return strlen(path) + (errno == ERANGE ? sizeof(cwd) : 0);
}

/* The longest absolute path SQLite opens a database at (SIZE_MAX: unknown). */
static size_t sqlite_path_limit(void)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
	size_t journal = strlen("-journal");

	return vfs && (size_t)vfs->mxPathname > journal ? (size_t)vfs->mxPathname - journal : SIZE_MAX;
}

static int too_long_error(struct swt_store *st, const char *opened, struct swt_err *err,
			  const char *what)
{
	return swt_error(err, SWT_EDB, "'%s': %s: %s %zu bytes long as an absolute path, "
			 "and SQLite opens up to %zu: use a shorter one", st->path, what,
			 opened == st->path ? "the path is" : "its temporary file's path is",
			 absolute_len(opened), sqlite_path_limit());
}

/*
 * A failed open, said as too long where it is.  opened is the path given to
 * SQLite: st->path, or the temporary file a new database is written to.
 */
static int open_error(struct swt_store *st, const char *opened, struct swt_err *err,
		      const char *what)
{
	if (absolute_len(opened) > sqlite_path_limit())
		return too_long_error(st, opened, err, what);
	return swt_store_sql_error(st, err, what);
}

int swt_store_exec(struct swt_store *st, const char *sql, struct swt_err *err)
{
	char *msg = NULL;
	int ret, sys;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	/* as swt_store_sql_error says it: a COMMIT's "disk I/O error" alone does not say which */
	sys = io_errno(st->db);
	if (sys)
		ret = swt_error(err, SWT_EDB, "'%s': %s (%s)", st->path, msg ? msg : "SQL error",
				strerror(sys));
	else
		ret = swt_error(err, SWT_EDB, "'%s': %s", st->path, msg ? msg : "SQL error");
	sqlite3_free(msg);
	return ret;
}

int swt_store_prepare(struct swt_store *st, const char *sql, sqlite3_stmt **stmt,
		      struct swt_err *err)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, stmt, NULL) == SQLITE_OK)
		return 0;
	return swt_store_sql_error(st, err, "prepare");
}

int swt_store_query_prepare(struct swt_store *st, const char *sql, sqlite3_stmt **s)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) == SQLITE_OK)
		return 1;
	swt_store_sql_error(st, &st->query_err, "query");
	return 0;
}

int swt_store_query_step(struct swt_store *st, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc != SQLITE_DONE)
		swt_store_sql_error(st, &st->query_err, "query");
	return 0;
}

int swt_store_query_error(struct swt_store *st, struct swt_err *err)
{
	if (!st->query_err.code)
		return 0;
	return swt_error(err, st->query_err.code, "%s", st->query_err.msg);
}

void swt_store_clear_query_error(struct swt_store *st)
{
	swt_err_clear(&st->query_err);
}

int64_t swt_store_query_int(struct swt_store *st, const char *sql, int64_t def)
{
	sqlite3_stmt *s;
	int64_t v = def;

	if (!swt_store_query_prepare(st, sql, &s))
		return def;
	if (swt_store_query_step(st, s) && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

size_t swt_store_table_rows(struct swt_store *st, const char *table)
{
	char sql[64];
	int64_t rows;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	rows = swt_store_query_int(st, sql, 0);
	return rows > 0 ? (size_t)rows : 0;
}

/*
 * Why the slot of row id of table is refused (swt_store_check_slots), in
 * one line naming the row and its value as SQL quotes it.  Only on the way
 * out, so it may query.
 */
static int bad_slot_error(struct swt_store *st, const char *table, int64_t id, struct swt_err *err)
{
	char sql[192], shown[48] = "?", why[96] = "is not a whole number";
	sqlite3_stmt *q;

	snprintf(sql, sizeof(sql), "SELECT quote(t.slot), typeof(t.slot) = 'integer', t.slot, "
		 "a.slots, a.dev FROM %s t LEFT JOIN swap_area a ON a.id = t.area_id WHERE t.id = ?1",
		 table);
	if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(q, 1, id);
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0)) {
			const char *v = (const char *)sqlite3_column_text(q, 0);
			int64_t slot = sqlite3_column_int64(q, 2);

			snprintf(shown, sizeof(shown), "%.40s%s", v, strlen(v) > 40 ? "..." : "");
			if (sqlite3_column_int(q, 1) && slot >= 1) {
				char dev[32];

				/* as replay names its areas: major:minor */
				swt_dev_format((uint32_t)sqlite3_column_int64(q, 4), dev, sizeof(dev));
				snprintf(why, sizeof(why), "is past the end of swap area %s (%lld slots)",
					 dev, (long long)sqlite3_column_int64(q, 3));
			} else if (sqlite3_column_int(q, 1)) {
				snprintf(why, sizeof(why), "%s", slot ? "is below the swap area"
						: "is the swap area's header, never a page");
			}
		}
		sqlite3_finalize(q);
	}
	return swt_error(err, SWT_EFORMAT, "'%s': %s row %lld: slot %s %s: not a database ingest "
			 "wrote", st->path, table, (long long)id, shown, why);
}

void swt_store_slot_census_free(struct swt_store_slot_census *c)
{
	free(c->area_ids);
	free(c->top);
	*c = (struct swt_store_slot_census){ 0 };
}

/*
 * The swap areas' ids, ascending, and the least slot each refuses as past
 * its end, as SQL compares a whole number with its recorded size: a size
 * above 0, INTEGER or REAL from a hand edit (a slot is past 99.5 from 100
 * on); else 0, none (NULL, and text and blobs, which SQL orders above
 * every number).
 */
static int area_sizes(struct swt_store *st, struct swt_store_slot_census *c, int64_t **sizes,
		      struct swt_err *err)
{
	size_t cap = 0, scap = 0;
	sqlite3_stmt *q;
	int rc;

	if (sqlite3_prepare_v2(st->db, "SELECT id, slots FROM swap_area ORDER BY id", -1, &q, NULL) !=
	    SQLITE_OK)
		return swt_store_sql_error(st, err, "checking the streams' slots");
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int type = sqlite3_column_type(q, 1);
		int64_t size = 0;

		if (type == SQLITE_INTEGER) {
			size = sqlite3_column_int64(q, 1);
		} else if (type == SQLITE_FLOAT) {
			double d = sqlite3_column_double(q, 1);

			if (d > 0 && d < 9223372036854775808.0) {
				size = (int64_t)d;
				size += (double)size < d;	/* rounded up */
			}
		}
		if (swt_grow((void **)&c->area_ids, &cap, c->nr_areas + 1, sizeof(*c->area_ids)) ||
		    swt_grow((void **)sizes, &scap, c->nr_areas + 1, sizeof(**sizes))) {
			sqlite3_finalize(q);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		c->area_ids[c->nr_areas] = sqlite3_column_int64(q, 0);
		(*sizes)[c->nr_areas++] = size > 0 ? size : 0;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(st, err, "checking the streams' slots");
	c->top = calloc(c->nr_areas ? c->nr_areas : 1, sizeof(*c->top));
	return c->top ? 0 : swt_error(err, SWT_ENOMEM, "out of memory");
}

int swt_store_census_area(const struct swt_store_slot_census *c, int64_t id)
{
	size_t lo = 0, hi = c->nr_areas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->area_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nr_areas && c->area_ids[lo] == id ? (int)lo : -1;
}

/*
 * The index of the area a row's area_id names, or -1.  The column is an
 * INTEGER one: a value SQLite keeps as anything else (text that does not
 * read as a number, a fraction, a blob) equals no id.
 */
static int row_area(sqlite3_stmt *q, int col, const struct swt_store_slot_census *c)
{
	if (sqlite3_column_type(q, col) != SQLITE_INTEGER)
		return -1;
	return swt_store_census_area(c, sqlite3_column_int64(q, col));
}

/*
 * The first row of table in id order whose slot ingest never stores (*bad
 * its id, else -1); with no_area (the streams', not the probes'), its
 * area's highest slot into c->top and the rows of no area into *no_area as
 * it goes.  Read in C: SQL's per-row subqueries and replay's max() per
 * area took a scan each.
 */
static int scan_slots(struct swt_store *st, const char *table, struct swt_store_slot_census *c,
		      const int64_t *sizes, size_t *no_area, int64_t *bad, struct swt_err *err)
{
	char sql[64];
	sqlite3_stmt *q;
	int rc;

	*bad = -1;
	snprintf(sql, sizeof(sql), "SELECT id, area_id, slot FROM %s ORDER BY id", table);
	if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
		return swt_store_sql_error(st, err, "checking the streams' slots");
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int type = sqlite3_column_type(q, 2), idx = row_area(q, 1, c);
		int64_t slot = sqlite3_column_int64(q, 2);

		if (type == SQLITE_NULL)
			continue;	/* a probe's: none */
		if (type != SQLITE_INTEGER || slot < 1 ||
		    (idx >= 0 && sizes[idx] > 0 && slot >= sizes[idx])) {
			*bad = sqlite3_column_int64(q, 0);
			break;
		}
		if (!no_area)
			continue;
		if (idx < 0)
			(*no_area)++;
		else if (slot > c->top[idx])
			c->top[idx] = slot;
	}
	sqlite3_finalize(q);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	       swt_store_sql_error(st, err, "checking the streams' slots");
}

int swt_store_check_slots(struct swt_store *st, struct swt_store_slot_census *census,
			  struct swt_err *err)
{
	static const char *const tables[] = { "swap_in", "swap_out", "swap_probe" };
	struct swt_store_slot_census c = { 0 };
	size_t no_area[2] = { 0 };	/* the streams', the first two tables */
	int64_t *sizes = NULL;
	int ret = area_sizes(st, &c, &sizes, err);

	for (size_t i = 0; !ret && i < SWT_ARRAY_SIZE(tables); i++) {
		int64_t bad;

		/*
		 * Slot 0 is the area's header and ingest never stores it, nor a
		 * slot below it, nor one past its area's end (an area of no
		 * recorded size has none): replay would take any of them as a
		 * page, and the report would draw it
		 */
		ret = scan_slots(st, tables[i], &c, sizes, i < SWT_ARRAY_SIZE(no_area) ? &no_area[i] : NULL, &bad, err);
		if (!ret && bad >= 0)
			ret = bad_slot_error(st, tables[i], bad, err);
	}
	free(sizes);
	if (ret || !census) {
		swt_store_slot_census_free(&c);
		return ret;
	}
	c.no_area_in = no_area[0];
	c.no_area_out = no_area[1];
	*census = c;
	return 0;
}

/*
 * The value of word KEY=N in a fact line's value, or -1.  Words are parted
 * by spaces or tabs, as ingest reads the line (meta.c), which is kept as
 * written.
 */
static int64_t fact_word_int(const char *line, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = line; (p = strstr(p, key)) != NULL; p += klen) {
		char *end;
		long long v;

		if ((p != line && p[-1] != ' ' && p[-1] != '\t') || p[klen] != '=')
			continue;
		v = strtoll(p + klen + 1, &end, 10);
		if (end != p + klen + 1 && (*end == ' ' || *end == '\t' || !*end) && v > 0)
			return v;
	}
	return -1;
}

static int64_t request_limit_kib(int64_t max_sectors_kb, int64_t max_segments, unsigned page_shift)
{
	int64_t segments_kib = (max_segments << page_shift) >> 10;

	return max_sectors_kb < segments_kib ? max_sectors_kb : segments_kib;
}

int64_t swt_store_request_limit_kib(struct swt_store *st, int *recorded)
{
	int64_t limit = INT64_MAX;
	int64_t page_size = swt_store_query_int(st, "SELECT page_size FROM capture", 4096);
	unsigned page_shift = 9;
	sqlite3_stmt *s;

	*recorded = 0;
	/* the page as replay takes it (its input's page_shift): 512 B to 1 MiB, rounded up */
	while (page_shift < 20 && (INT64_C(1) << page_shift) < page_size)
		page_shift++;
	/* in any section, as ingest reads swap_device lines (meta.c) */
	if (swt_store_query_prepare(st, "SELECT value FROM capture_fact WHERE key = 'swap_device'",
				    &s)) {
		while (swt_store_query_step(st, s)) {
			const char *line = (const char *)sqlite3_column_text(s, 0);
			int64_t sectors = line ? fact_word_int(line, "max_sectors_kb") : -1;
			int64_t segments = line ? fact_word_int(line, "max_segments") : -1;
			int64_t kib;

			if (sectors < 0 && segments < 0)
				continue;
			++*recorded;
			/*
			 * one not recorded is the default's; one past replay's
			 * largest request (65536 KiB) binds there, as ingest
			 * takes up to 2^31 - 1 (a stacked device's)
			 */
			kib = request_limit_kib(sectors < 0 ? SWT_DEFAULT_MAX_SECTORS_KB :
						SWT_MIN(sectors, 65536),
						segments < 0 ? SWT_DEFAULT_MAX_SEGMENTS :
						SWT_MIN(segments, 65536), page_shift);
			if (kib < limit)
				limit = kib;
		}
		sqlite3_finalize(s);
	}
	if (!*recorded)
		limit = request_limit_kib(SWT_DEFAULT_MAX_SECTORS_KB, SWT_DEFAULT_MAX_SEGMENTS,
					  page_shift);
	/*
	 * Requests are of whole pages, and a run stores the limit it split at
	 * as its pages' KiB (127 KiB splits at 31 pages, stored as 124; 1280
	 * KiB on 512 KiB pages at 2, stored as 1024): the limit as those, at
	 * least a page, so that a run at the default is known as one
	 */
	if (page_shift > 10)
		limit &= ~((INT64_C(1) << (page_shift - 10)) - 1);
	if (limit < ((INT64_C(1) << page_shift) >> 10))
		limit = (INT64_C(1) << page_shift) >> 10;
	return limit < 1 ? 1 : limit;
}

/*
 * PATH-wal and PATH-shm, made once (*sides, two strings, freed by the
 * caller) so that looking for them, or removing them again after a
 * commit's move, allocates nothing and cannot fail half-way.
 */
static int wal_file_names(const char *path, char *sides[2], struct swt_err *err)
{
	static const char *const suffixes[] = { "-wal", "-shm" };

	for (size_t i = 0; i < 2; i++) {
		size_t len = strlen(path) + strlen(suffixes[i]) + 1;

		sides[i] = malloc(len);
		if (!sides[i])
			return swt_error(err, SWT_ENOMEM, "out of memory");
		snprintf(sides[i], len, "%s%s", path, suffixes[i]);
	}
	return 0;
}

/* Is either there?  (A name too long for -wal, of 252 bytes, has neither.) */
static int wal_files_exist(char *const sides[2])
{
	return access(sides[0], F_OK) == 0 || access(sides[1], F_OK) == 0;
}

/*
 * Remove the -wal and -shm files a read-only connection to a database in
 * WAL mode made at its first read and left at its close: SQLite removes
 * them at the close of the last connection, after a checkpoint, which a
 * read-only one may not run.  Removed here the way SQLite does it, by a
 * read-write connection that reads and closes: its close removes them
 * only while it holds the database's exclusive lock, so only when no
 * connection of any process has the database open (one that opened it
 * meanwhile keeps them, as it needs them), and only after checkpointing
 * what another process wrote to the -wal since, as that one's own close
 * would have done.  A database file this process cannot write opens
 * read-only again, and its files stay: nothing else can tell safely that
 * no other process uses them.
 */
static void remove_made_wal_files(struct swt_store *st)
{
	sqlite3 *db = NULL;

	if (!wal_files_exist(st->made_sides))
		return;
	if (sqlite3_open_v2(st->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    NULL) == SQLITE_OK && sqlite3_db_readonly(db, "main") == 0)
		sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	sqlite3_close(db);
}

static struct swt_store *store_alloc(const char *path)
{
	struct swt_store *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->path = swt_strdup(path);
	if (!st->path) {
		free(st);
		return NULL;
	}
	return st;
}

/*
 * Open the database at path read-only for a look before ingest replaces
 * it.  A read-only connection to a database in WAL mode creates its -wal
 * and -shm files and, not allowed to checkpoint, leaves them behind at
 * close: an ingest that then failed left two new files beside the old
 * database.  Where no -wal file exists the database holds nothing beyond
 * its own file, and SQLite's immutable open reads it without either.
 */
static int open_to_look(const char *path, sqlite3 **db)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(path), k = 0;
	char *wal = malloc(len + 5), *uri;
	int has_wal, ret;

	if (!wal)
		return SQLITE_NOMEM;
	snprintf(wal, len + 5, "%s-wal", path);
	has_wal = access(wal, F_OK) == 0;
	free(wal);
	if (has_wal)
		return sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	/* "file:" and the path, every byte but [A-Za-z0-9/._~-] as %XX, and "?immutable=1" */
	uri = malloc(5 + 3 * len + 13);
	if (!uri)
		return SQLITE_NOMEM;
	memcpy(uri, "file:", 5);
	k = 5;
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    strchr("/._~-", *c)) {
			uri[k++] = (char)*c;
		} else {
			uri[k++] = '%';
			uri[k++] = hex[*c >> 4];
			uri[k++] = hex[*c & 15];
		}
	}
	memcpy(uri + k, "?immutable=1", 13);
	ret = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
			      NULL);
	free(uri);
	return ret;
}

/*
 * Is the file at path a swaptrace database, of any schema version (the
 * version message says "ingest again", which must be able to replace it)?
 */
static int is_swaptrace_db(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s;
	int found = 0;

	if (open_to_look(path, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT 1 FROM swt_meta WHERE key = 'schema_version'", -1, &s,
			       NULL) == SQLITE_OK) {
		found = sqlite3_step(s) == SQLITE_ROW;
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return found;
}

int64_t swt_store_runs_at(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s;
	struct stat sb;
	int64_t runs = 0;

	/* opening a FIFO there would wait for a writer: only a file can be one */
	if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode) || !sb.st_size)
		return 0;
	/*
	 * Any schema version: a run table from before version 2 counts the
	 * same.  Asked of a swaptrace database only (is_swaptrace_db's test),
	 * in the one open: no swt_meta or run table, no count.
	 */
	if (open_to_look(path, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT count(*) FROM run WHERE EXISTS (SELECT 1 FROM swt_meta"
			       " WHERE key = 'schema_version')", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			runs = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return runs;
}

/*
 * What may be at path before a database is created there: nothing, a
 * swaptrace database (re-ingested) or an empty file (mktemp's), all of
 * which the commit replaces.  Anything else would be lost to the rename,
 * so it is refused now, before the whole ingest rather than after.
 */
static int check_replaceable(const char *path, struct swt_err *err)
{
	struct stat sb;

	if (stat(path, &sb) < 0)
		return 0;
	if (S_ISDIR(sb.st_mode))
		return swt_error(err, SWT_EUSAGE, "'%s': cannot create database: Is a directory",
				 path);
	if (!S_ISREG(sb.st_mode))
		return swt_error(err, SWT_EUSAGE, "'%s': exists and is not a regular file: not "
				 "replaced by a database", path);
	if (sb.st_size > 0 && !is_swaptrace_db(path))
		return swt_error(err, SWT_EUSAGE, "'%s': exists and is not a swaptrace database: "
				 "not replaced", path);
	return 0;
}

/*
 * The file a database created at path is written to: path, or the file the
 * symbolic link there leads to, through every link on the way, as cp and
 * sqlite3 write through a link.  Renamed over path, the database replaced
 * the link and left the file it named as it was; a dangling link leads to
 * the file to create.  Only the last component: the rename follows links
 * in the directories itself.  *target is malloc'd.
 */
static int resolve_target(const char *path, char **target, struct swt_err *err)
{
	char *cur = swt_strdup(path), link[PATH_MAX];
	struct stat sb;
	int ret = 0;

	for (int hops = 0; cur; hops++) {
		const char *base = swt_basename(cur);
		char *next;
		ssize_t n;

		/* anything but a link (or nothing) is the target: its create says what is wrong */
		if (lstat(cur, &sb) < 0 || !S_ISLNK(sb.st_mode)) {
			*target = cur;
			return 0;
		}
		/* the kernel's limit on links followed in one lookup (MAXSYMLINKS) */
		if (hops == 40) {
			ret = swt_error(err, SWT_EUSAGE, "'%s': cannot create database: %s", path,
					strerror(ELOOP));
			break;
		}
		n = readlink(cur, link, sizeof(link));
		if (n < 0 || (size_t)n >= sizeof(link)) {
			ret = swt_error(err, SWT_EIO, "'%s': cannot create database: %s", path,
					strerror(n < 0 ? errno : ENAMETOOLONG));
			break;
		}
		link[n] = '\0';
		/* a relative target is relative to the directory the link is in */
		if (link[0] == '/' || base == cur)
			next = swt_strdup(link);
		else if (asprintf(&next, "%.*s%s", (int)(base - cur), cur, link) < 0)
			next = NULL;
		free(cur);
		cur = next;
	}
	free(cur);
	return ret ? ret : swt_error(err, SWT_ENOMEM, "out of memory");
}

/*
 * A new file in the directory tmp holds (its first dir_len bytes), named
 * with at most len (1 to 6) characters, for where mkstemp's six do not fit
 * under SQLite's limit: a path of 504 bytes ending in a short name.
 */
static int create_short_temp(char *tmp, size_t dir_len, size_t len)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned seed = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);

	if (len > 6)
		len = 6;
	for (unsigned attempt = 0; attempt < 1000; attempt++) {
		int fd;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			tmp[dir_len + i] = chars[(seed >> 16) % (sizeof(chars) - 1)];
		}
		tmp[dir_len + len] = '\0';
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/*
 * The temporary file a new database at path is written to, in tmp (n
 * bytes): in the same directory, so the final rename is atomic; path's
 * name and ".tmp-XXXXXX", or, where that name or the path would be too
 * long (NAME_MAX; SQLite's limit, which path itself is within), a
 * shorter name there.
 */
static int create_temp_beside(const char *path, char *tmp, size_t n)
{
	size_t dir_len = (size_t)(swt_basename(path) - path), base_len = strlen(path) - dir_len;
	size_t abs_dir = absolute_len(path) - base_len, limit = sqlite_path_limit();

	if (base_len + 11 <= NAME_MAX && abs_dir + base_len + 11 <= limit)
		snprintf(tmp, n, "%s.tmp-XXXXXX", path);
	else if (abs_dir + 15 <= limit)
		snprintf(tmp, n, "%.*s.swt-tmp-XXXXXX", (int)dir_len, path);
	else if (abs_dir + 7 <= limit)
		snprintf(tmp, n, "%.*s.XXXXXX", (int)dir_len, path);
	else {
		/* no room for mkstemp's six: a name no longer than the target's */
		snprintf(tmp, n, "%.*s", (int)dir_len, path);
		return create_short_temp(tmp, dir_len, limit - abs_dir);
	}
	return mkstemp(tmp);
}

int swt_store_create(const char *path, struct swt_store **out, struct swt_err *err)
{
	struct swt_store *st;
	size_t n;
	int fd, ret;

	*out = NULL;
	ret = check_replaceable(path, err);
	if (ret)
		return ret;
	st = store_alloc(path);
	if (!st)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	st->version = SWT_SCHEMA_VERSION;
	ret = resolve_target(path, &st->target, err);
	if (ret)
		goto out_free;
	/* beside the target, so that the rename over it is atomic */
	n = strlen(st->target) + 16;
	st->tmp_path = malloc(n);
	if (!st->tmp_path) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_free;
	}
	/* a database SQLite could not open once there: refused before it is written */
	if (absolute_len(path) > sqlite_path_limit()) {
		ret = too_long_error(st, st->path, err, "cannot create database");
		goto out_free;
	}
	fd = create_temp_beside(st->target, st->tmp_path, n);
	if (fd < 0) {
		ret = swt_error(err, errno == ENOENT ? SWT_ENOENT : SWT_EIO,
				"'%s': cannot create database: %s", path, strerror(errno));
		goto out_free;
	}
	close(fd);
	/* no mutexing: ingest hands the connection between threads explicitly */
	if (sqlite3_open_v2(st->tmp_path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		ret = open_error(st, st->tmp_path, err, "cannot create database");
		goto out_destroy;
	}
	/*
	 * The temporary file is thrown away on any failure, so there is nothing
	 * for a journal or fsync to protect until commit.  Memory stays flat
	 * whatever the trace size: a small page cache (inserts append, nothing
	 * is re-read) and small pages; insert speed hardly depends on either.
	 */
	ret = swt_store_exec(st,
			     "PRAGMA page_size = 4096;"
			     "PRAGMA journal_mode = OFF;"
			     "PRAGMA synchronous = OFF;"
			     "PRAGMA locking_mode = EXCLUSIVE;"
			     "PRAGMA cache_size = -8192;"
			     "PRAGMA temp_store = FILE;", err);
	if (ret)
		goto out_destroy;
	ret = swt_store_exec(st, swt_schema_sql, err);
	/*
	 * Only the indexes the block_event view and time-window queries
	 * need: each one costs ingest time, and users add their own
	 * (docs/schema.md).  They grow with the rows, on the writer thread
	 * while the decoder runs, mostly at their right edge (rows come in
	 * time order, bios mostly in their requests' order): built after the
	 * last row, they were a sort of every row, 0.1 s of a 0.65 s ingest
	 * that waited for it
	 */
	if (!ret)
		ret = swt_store_exec(st, "CREATE INDEX bio_request ON bio (request_id);"
				     "CREATE INDEX swap_in_ts ON swap_in (ts);"
				     "CREATE INDEX swap_out_ts ON swap_out (ts);", err);
	if (!ret)
		ret = make_block_event_view(st, "main", err);
	if (ret)
		goto out_destroy;
	{
		char sql[128];

		snprintf(sql, sizeof(sql),
			 "PRAGMA user_version = %d;"
			 "INSERT INTO swt_meta VALUES ('schema_version', '%d');",
			 SWT_SCHEMA_VERSION, SWT_SCHEMA_VERSION);
		ret = swt_store_exec(st, sql, err);
		if (ret)
			goto out_destroy;
	}
	*out = st;
	return 0;

out_destroy:
	swt_store_destroy(st);
	return ret;
out_free:
	free(st->tmp_path);
	free(st->target);
	free(st->path);
	free(st);
	return ret;
}

/*
 * The in-place upgrades, by the version they start from; each adds
 * columns, whose values are NULL (not recorded) in what was stored before,
 * or changes only the views, which every upgrade makes anew.
 *   3 to 4: the run table records the replay's model settings.
 *   4 to 5: a task's process (task.tgid), from a capture's threads lines.
 *   5 to 6: block_event's last completion of a request completed in parts
 *           has what the parts left, not the whole extent.
 * From OLDEST_VIEWS_ONLY on, only the views changed: a read-only open
 * makes this version's as TEMP views over the stored ones, the file as
 * it is.
 */
#define OLDEST_UPGRADABLE 3
#define OLDEST_VIEWS_ONLY 5
static const char *const upgrade_sql[SWT_SCHEMA_VERSION] = {
	[3] = "ALTER TABLE run ADD COLUMN inactive_fraction REAL;"
	      "ALTER TABLE run ADD COLUMN max_request_kib INTEGER;",
	[4] = "ALTER TABLE task ADD COLUMN tgid INTEGER;",
	[5] = "",
};

static int upgrade_in_place(struct swt_store *st, struct swt_err *err)
{
	int64_t version;
	char set[128];
	int ret = swt_store_exec(st, "BEGIN IMMEDIATE", err);

	if (ret)
		return ret;
	/* another writer may have upgraded it since it was read */
	version = swt_store_query_int(st, "SELECT value FROM swt_meta WHERE key = 'schema_version'", -1);
	if (version != SWT_SCHEMA_VERSION &&
	    (version < OLDEST_UPGRADABLE || version > SWT_SCHEMA_VERSION)) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return swt_error(err, SWT_EVERSION, "'%s': database schema version %lld changed while "
				 "it was opened: ingest again", st->path, (long long)version);
	}
	/* the views made anew after the upgrades, none when another writer did it all */
	if (version < SWT_SCHEMA_VERSION) {
		for (; !ret && version < SWT_SCHEMA_VERSION; version++)
			ret = upgrade_sql[version] ? swt_store_exec(st, upgrade_sql[version], err) :
			      swt_error(err, SWT_EVERSION, "'%s': no upgrade from schema version %lld: "
					"ingest again", st->path, (long long)version);
		if (!ret)
			ret = make_block_event_view(st, "main", err);
	}
	snprintf(set, sizeof(set), "UPDATE swt_meta SET value = '%d' WHERE key = 'schema_version';"
		 "PRAGMA user_version = %d;", SWT_SCHEMA_VERSION, SWT_SCHEMA_VERSION);
	if (!ret)
		ret = swt_store_exec(st, set, err);
	if (!ret)
		ret = swt_store_exec(st, "COMMIT", err);
	if (ret)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

/*
 * The schema_version of swt_meta (the result: -1 where there is none, or
 * the read failed, sqlite3_errcode saying why) and PRAGMA user_version.
 */
static int64_t read_versions(struct swt_store *st, int64_t *user_version)
{
	sqlite3_stmt *s;
	int64_t version = -1;

	*user_version = -1;
	if (sqlite3_prepare_v2(st->db, "SELECT (SELECT value FROM swt_meta WHERE key = "
			       "'schema_version'), user_version FROM pragma_user_version", -1, &s,
			       NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW) {
		if (sqlite3_column_type(s, 0) != SQLITE_NULL)
			version = sqlite3_column_int64(s, 0);
		*user_version = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	return version;
}

/*
 * A write that was interrupted (a replay or report killed while it stored
 * its runs) leaves a hot journal, which must be rolled back before anything
 * is read: a read-only connection may not, and the read failed, said as
 * "not a swaptrace database" of a database that was fine.  Rolled back as
 * a writer's first read rolls it back (sqlite3's, replay's), by a
 * read-write connection that reads and closes: the database is as its last
 * commit left it, as every writer would see it.  0, or why it cannot be
 * (the file or its directory not writable by this user).
 */
static int roll_back_hot_journal(const char *path, struct swt_err *err)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);

	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 5000);
		rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	}
	if (rc != SQLITE_OK)
		rc = swt_error(err, SWT_EIO, "'%s': a write to it was interrupted, and its journal "
			       "must be rolled back before it is read, which this user cannot do "
			       "here: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	sqlite3_close(db);
	return rc;
}

int swt_store_open(const char *path, enum swt_store_mode mode, struct swt_store **out,
		   struct swt_err *err)
{
	struct swt_store *st;
	int flags = mode == SWT_STORE_WRITE ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
	int64_t version, user_version = -1;
	struct stat sb;
	int ret;

	*out = NULL;
	if (stat(path, &sb) < 0)
		return swt_error(err, SWT_ENOENT, "'%s': %s", path, strerror(errno));
	/* SQLite would open it and fail later with "disk I/O error" */
	if (S_ISDIR(sb.st_mode))
		return swt_error(err, SWT_EFORMAT, "'%s': is a directory, not a swaptrace database",
				 path);
	st = store_alloc(path);
	if (!st)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (sqlite3_open_v2(path, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		ret = open_error(st, st->path, err, "open");
		goto out_destroy;
	}
	/*
	 * A reader leaves the directory as it found it: the -wal and -shm
	 * files its connection makes, where there were none, go at destroy;
	 * any it found are another connection's, or hold a writer's rows.
	 * Looked for before the first read (which makes them), beside the
	 * file SQLite opened: a symbolic link's target's, not the link's.
	 */
	if (mode != SWT_STORE_WRITE) {
		const char *file = sqlite3_db_filename(st->db, "main");

		ret = wal_file_names(file && *file ? file : path, st->made_sides, err);
		if (ret)
			goto out_destroy;
		if (wal_files_exist(st->made_sides)) {
			free(st->made_sides[0]);
			free(st->made_sides[1]);
			st->made_sides[0] = st->made_sides[1] = NULL;
		}
	}
	sqlite3_busy_timeout(st->db, 5000);
	/*
	 * Pages read from a map of the file, not copied into buffers malloc'd
	 * for them (a replay's or info's scans of the streams: a tenth of the
	 * command).  Advice: a build without memory-mapped I/O reads as before.
	 */
	sqlite3_exec(st->db, "PRAGMA mmap_size = 1073741824", NULL, NULL, NULL);
	/*
	 * Both versions in one statement, so one read transaction: read apart,
	 * a writer upgrading the file in between gave an old schema_version
	 * and a new user_version, "ingest again" for a file that was fine.
	 */
	version = read_versions(st, &user_version);
	/* a read-write connection rolls a hot journal back itself; a read-only one cannot */
	if (version < 0 && sqlite3_extended_errcode(st->db) == SQLITE_READONLY_ROLLBACK) {
		ret = roll_back_hot_journal(path, err);
		if (ret)
			goto out_destroy;
		version = read_versions(st, &user_version);
	}
	/* a lock held past the timeout is not "not a swaptrace database" */
	if (version < 0 && (sqlite3_errcode(st->db) & 0xff) == SQLITE_BUSY) {
		ret = swt_error(err, SWT_EIO, "'%s': the database is locked: another process has "
				"been writing it for more than 5 s; try again when it is done", path);
		goto out_destroy;
	}
	/* nor is a file cut short (a copy interrupted): SQLite can tell that one */
	if (version < 0 && (sqlite3_errcode(st->db) & 0xff) == SQLITE_CORRUPT) {
		ret = swt_error(err, SWT_EFORMAT, "'%s': a damaged database: %s", path,
				sqlite3_errmsg(st->db));
		goto out_destroy;
	}
	if (version < 0) {
		ret = swt_error(err, SWT_EFORMAT, "'%s': not a swaptrace database", path);
		goto out_destroy;
	}
	if (version >= OLDEST_UPGRADABLE && version < SWT_SCHEMA_VERSION && user_version == version) {
		/* what an older writer left: upgraded in place, its runs kept */
		if (mode != SWT_STORE_WRITE && version >= OLDEST_VIEWS_ONLY) {
			/* read as this version's: its views over the stored ones */
			ret = make_block_event_view(st, "temp", err);
			if (ret)
				goto out_destroy;
			st->version = SWT_SCHEMA_VERSION;
			*out = st;
			return 0;
		}
		if (mode == SWT_STORE_READ_OLDER) {
			/*
			 * Read as it is, the file untouched: its reader copes with
			 * the columns the upgrades would add (NULL in what an
			 * upgrade keeps)
			 */
			st->version = (int)version;
			*out = st;
			return 0;
		}
		if (mode != SWT_STORE_WRITE) {
			ret = swt_error(err, SWT_EVERSION,
					"'%s': database schema version %lld, this swaptrace reads %d: a "
					"command that writes it (replay without --no-store; report without "
					"--run or --no-replay) upgrades it in place, or ingest again", path,
					(long long)version, SWT_SCHEMA_VERSION);
			goto out_destroy;
		}
		ret = upgrade_in_place(st, err);
		if (ret)
			goto out_destroy;
		/* upgrade_in_place set both */
		version = user_version = SWT_SCHEMA_VERSION;
	}
	if (version != SWT_SCHEMA_VERSION) {
		ret = swt_error(err, SWT_EVERSION,
				"'%s': database schema version %lld, this swaptrace reads %d; ingest again",
				path, (long long)version, SWT_SCHEMA_VERSION);
		goto out_destroy;
	}
	/* ingest writes both; docs/schema.md promises that either is checked */
	if (user_version != SWT_SCHEMA_VERSION) {
		ret = swt_error(err, SWT_EVERSION,
				"'%s': database schema version %lld (PRAGMA user_version), this "
				"swaptrace reads %d; ingest again",
				path, (long long)user_version, SWT_SCHEMA_VERSION);
		goto out_destroy;
	}
	st->version = SWT_SCHEMA_VERSION;
	*out = st;
	return 0;

out_destroy:
	swt_store_destroy(st);
	return ret;
}

/* Remove them if they are there: 0, or an error when strict. */
static int remove_wal_files(char *const sides[2], int strict, struct swt_err *err)
{
	for (size_t i = 0; i < 2; i++)
		/* a name too long for -wal (a 252-byte database name) has none */
		if (unlink(sides[i]) < 0 && errno != ENOENT && errno != ENAMETOOLONG && strict)
			return swt_error(err, SWT_EIO, "'%s': cannot remove the replaced database's "
					 "file: %s", sides[i], strerror(errno));
	return 0;
}

int swt_store_commit(struct swt_store *st, struct swt_err *err)
{
	char *sides[2] = { NULL, NULL };
	int fd, ret;

	if (!st->tmp_path)
		return 0;
	if (sqlite3_close(st->db) != SQLITE_OK)
		return swt_store_sql_error(st, err, "close");
	st->db = NULL;
	fd = open(st->tmp_path, O_RDONLY);
	if (fd >= 0) {
		ret = fsync(fd);
		close(fd);
		if (ret < 0)
			return swt_error(err, SWT_EIO, "'%s': %s", st->path, strerror(errno));
	}
	/* mkstemp made it 0600; give the database the mode a plain create would */
	{
		mode_t mask = umask(0);

		umask(mask);
		if (chmod(st->tmp_path, 0666 & ~mask) < 0)
			return swt_error(err, SWT_EIO, "'%s': %s", st->path, strerror(errno));
	}
	/* what the start found replaceable may have been replaced meanwhile */
	ret = check_replaceable(st->target, err);
	if (ret)
		return ret;
	/*
	 * A database replaced in WAL mode leaves its -wal and -shm files,
	 * which SQLite would apply to the new one at its next open (rows of
	 * the old database in the new): gone, before the move and, as far as
	 * can be, after it (an opener of the old one in between made them
	 * again).
	 */
	ret = wal_file_names(st->target, sides, err);
	if (!ret)
		ret = remove_wal_files(sides, 1, err);
	if (!ret && rename(st->tmp_path, st->target) < 0)
		ret = swt_error(err, SWT_EIO, "'%s': cannot move database into place: %s",
				st->path, strerror(errno));
	if (!ret)
		remove_wal_files(sides, 0, err);
	free(sides[0]);
	free(sides[1]);
	if (ret)
		return ret;
	free(st->tmp_path);
	st->tmp_path = NULL;
	free(st->target);
	st->target = NULL;
	st->committed = 1;
	/* reopen so the caller may keep reading */
	if (sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return open_error(st, st->path, err, "reopen");
	return 0;
}

void swt_store_destroy(struct swt_store *st)
{
	if (!st)
		return;
	if (st->db)
		sqlite3_close(st->db);
	/* after the close: the files go only with the last connection */
	if (st->made_sides[0] && st->made_sides[1])
		remove_made_wal_files(st);
	free(st->made_sides[0]);
	free(st->made_sides[1]);
	if (st->tmp_path) {
		unlink(st->tmp_path);
		free(st->tmp_path);
	}
	free(st->target);
	free(st->path);
	free(st);
}
