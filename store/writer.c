/*
 * The bulk row writer: ingest appends rows to fixed-size chunks, a writer
 * thread binds them to prepared INSERTs inside one transaction.  Decoding
 * and SQLite thus use both cores, and memory stays bounded by the number of
 * chunks in flight, whatever the trace size.  The thread lives only while
 * rows stream in (see thread_start()).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "util.h"

#define CHUNK_BYTES (512 * 1024)
#define CHUNKS_IN_FLIGHT 8

struct chunk {
	struct chunk *next;
	size_t len;
	char data[CHUNK_BYTES];
};

/* Record header inside a chunk; payload follows, 8-byte aligned. */
struct rec_head {
	uint16_t kind;
	uint16_t pad;
	uint32_t size;	/* payload bytes */
};

/* Rows of one kind are inserted BATCH at a time: one multi-row INSERT
 * costs about half as much per row as single-row statements. */
#define BATCH 32

struct row_table {
	const char *table;
	const char *columns;
	int ncols;
	size_t size;
};

static const struct row_table tables[SWT_ROW__COUNT] = {
	[SWT_ROW_BIO] = { "bio", "id, source_id, request_id, dev, write, rwbs, sector, nr_sectors,"
			  " queue_ns, cpu, pid, merge, merge_ns", 13, sizeof(struct swt_row_bio) },
	[SWT_ROW_REQUEST] = { "request", "id, source_id, dev, write, rwbs, sector, nr_sectors,"
			      " nr_bios, getrq_ns, getrq_cpu, getrq_pid, insert_ns, insert_cpu,"
			      " insert_pid, issue_ns, issue_cpu, issue_pid, complete_ns,"
			      " complete_cpu, complete_pid, error, pc", 22,
			      sizeof(struct swt_row_request) },
	[SWT_ROW_BLOCK_MISC] = { "block_misc", "source_id, ts, cpu, pid, dev, action, write, rwbs,"
				 " sector, nr_sectors, arg, arg_dev, error, request_id, pc,"
				 " unplug_ns", 16,
				 sizeof(struct swt_row_block_misc) },
	[SWT_ROW_FAULT] = { "fault", "id, ts, cpu, pid, address, ip, error_code", 7,
			    sizeof(struct swt_row_fault) },
	[SWT_ROW_RECLAIM] = { "reclaim_write", "ts, cpu, pid, pfn, flags", 5,
			      sizeof(struct swt_row_reclaim) },
	[SWT_ROW_PROBE] = { "swap_probe", "ts, cpu, pid, kind, area_id, slot, address", 7,
			    sizeof(struct swt_row_probe) },
	[SWT_ROW_EVENT] = { "event", "source_id, ts, cpu, pid, system, name, info", 7,
			    sizeof(struct swt_row_event) },
	[SWT_ROW_SWAP_IN] = { "swap_in", "ts, area_id, slot, dev, pid, bio_id, request_id,"
			      " fault_id, address, demand", 10, sizeof(struct swt_row_swap) },
	[SWT_ROW_SWAP_OUT] = { "swap_out", "ts, area_id, slot, dev, pid, bio_id, request_id", 7,
			       sizeof(struct swt_row_swap) },
};

struct swt_writer {
	struct swt_store *st;
	sqlite3_stmt *one[SWT_ROW__COUNT];	/* single-row INSERT */
	sqlite3_stmt *many[SWT_ROW__COUNT];	/* BATCH-row INSERT */
	const void *pending[SWT_ROW__COUNT][BATCH];	/* rows not yet bound, in the chunk */
	int npending[SWT_ROW__COUNT];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct chunk *queue_head, *queue_tail;	/* filled, waiting for the thread */
	struct chunk *free_list;
	int chunks;		/* allocated */
	int running;		/* the thread exists (only the producer reads this) */
	int stopping;
	/*
	 * First error, negative; set under lock after err is filled in, read
	 * without the lock by every swt_writer_put(), hence atomic.
	 */
	atomic_int error;
	struct swt_err err;
	struct chunk *cur;	/* being filled by the producer */
};

static void bind_text(sqlite3_stmt *s, int col, const char *text)
{
	if (text && *text)
		sqlite3_bind_text(s, col, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, col);
}

/* Bind one row's values to parameters base+1 .. base+ncols. */
static void bind_row(sqlite3_stmt *s, int base, int kind, const void *payload)
{
	/* letters live in a static table so SQLITE_STATIC stays valid */
	static const char letters[256][2] = {
		['M'] = "M", ['F'] = "F", ['Q'] = "Q", ['G'] = "G", ['S'] = "S", ['I'] = "I",
		['D'] = "D", ['C'] = "C", ['R'] = "R", ['P'] = "P", ['U'] = "U", ['T'] = "T",
		['X'] = "X", ['B'] = "B", ['A'] = "A", ['K'] = "K", ['d'] = "d", ['m'] = "m",
		['z'] = "z", ['Z'] = "Z",
	};
	int c = base;

	switch (kind) {
	case SWT_ROW_BIO: {
		const struct swt_row_bio *r = payload;

		sqlite3_bind_int64(s, ++c, r->id);
		sqlite3_bind_int64(s, ++c, r->source_id);
		swt_bind_int(s, ++c, r->request_id);
		sqlite3_bind_int64(s, ++c, r->dev);
		sqlite3_bind_int64(s, ++c, r->write);
		bind_text(s, ++c, r->rwbs);
		sqlite3_bind_int64(s, ++c, r->sector);
		sqlite3_bind_int64(s, ++c, r->nr_sectors);
		swt_bind_int(s, ++c, r->queue_ns);
		swt_bind_int(s, ++c, r->cpu);
		swt_bind_int(s, ++c, r->pid);
		bind_text(s, ++c, letters[r->merge & 0xff]);
		swt_bind_int(s, ++c, r->merge_ns);
		break;
	}
	case SWT_ROW_REQUEST: {
		const struct swt_row_request *r = payload;

		sqlite3_bind_int64(s, ++c, r->id);
		sqlite3_bind_int64(s, ++c, r->source_id);
		sqlite3_bind_int64(s, ++c, r->dev);
		sqlite3_bind_int64(s, ++c, r->write);
		bind_text(s, ++c, r->rwbs);
		sqlite3_bind_int64(s, ++c, r->sector);
		sqlite3_bind_int64(s, ++c, r->nr_sectors);
		sqlite3_bind_int64(s, ++c, r->nr_bios);
		swt_bind_int(s, ++c, r->getrq_ns);
		swt_bind_int(s, ++c, r->getrq_cpu);
		swt_bind_int(s, ++c, r->getrq_pid);
		swt_bind_int(s, ++c, r->insert_ns);
		swt_bind_int(s, ++c, r->insert_cpu);
		swt_bind_int(s, ++c, r->insert_pid);
		swt_bind_int(s, ++c, r->issue_ns);
		swt_bind_int(s, ++c, r->issue_cpu);
		swt_bind_int(s, ++c, r->issue_pid);
		swt_bind_int(s, ++c, r->complete_ns);
		swt_bind_int(s, ++c, r->complete_cpu);
		swt_bind_int(s, ++c, r->complete_pid);
		swt_bind_int(s, ++c, r->error);
		sqlite3_bind_int64(s, ++c, r->pc);
		break;
	}
	case SWT_ROW_BLOCK_MISC: {
		const struct swt_row_block_misc *r = payload;

		sqlite3_bind_int64(s, ++c, r->source_id);
		sqlite3_bind_int64(s, ++c, r->ts);
		swt_bind_int(s, ++c, r->cpu);
		swt_bind_int(s, ++c, r->pid);
		swt_bind_int(s, ++c, r->dev);
		bind_text(s, ++c, letters[r->action & 0xff]);
		swt_bind_int(s, ++c, r->write);
		bind_text(s, ++c, r->rwbs);
		swt_bind_int(s, ++c, r->sector);
		swt_bind_int(s, ++c, r->nr_sectors);
		swt_bind_int(s, ++c, r->arg);
		swt_bind_int(s, ++c, r->arg_dev);
		swt_bind_int(s, ++c, r->error);
		swt_bind_int(s, ++c, r->request_id);
		sqlite3_bind_int64(s, ++c, r->pc);
		swt_bind_int(s, ++c, r->unplug_ns);
		break;
	}
	case SWT_ROW_FAULT: {
		const struct swt_row_fault *r = payload;

		sqlite3_bind_int64(s, ++c, r->id);
		sqlite3_bind_int64(s, ++c, r->ts);
		swt_bind_int(s, ++c, r->cpu);
		swt_bind_int(s, ++c, r->pid);
		sqlite3_bind_int64(s, ++c, r->address);
		swt_bind_int(s, ++c, r->ip);
		swt_bind_int(s, ++c, r->error_code);
		break;
	}
	case SWT_ROW_RECLAIM: {
		const struct swt_row_reclaim *r = payload;

		sqlite3_bind_int64(s, ++c, r->ts);
		swt_bind_int(s, ++c, r->cpu);
		swt_bind_int(s, ++c, r->pid);
		swt_bind_int(s, ++c, r->pfn);
		swt_bind_int(s, ++c, r->flags);
		break;
	}
	case SWT_ROW_PROBE: {
		const struct swt_row_probe *r = payload;

		sqlite3_bind_int64(s, ++c, r->ts);
		swt_bind_int(s, ++c, r->cpu);
		swt_bind_int(s, ++c, r->pid);
		bind_text(s, ++c, r->kind);
		swt_bind_int(s, ++c, r->area_id);
		swt_bind_int(s, ++c, r->slot);
		swt_bind_int(s, ++c, r->address);
		break;
	}
	case SWT_ROW_EVENT: {
		const struct swt_row_event *r = payload;
		/* strings were copied right behind the struct */
		const char *system = (const char *)(r + 1);
		const char *name = system + strlen(system) + 1;
		const char *info = name + strlen(name) + 1;

		sqlite3_bind_int64(s, ++c, r->source_id);
		sqlite3_bind_int64(s, ++c, r->ts);
		swt_bind_int(s, ++c, r->cpu);
		swt_bind_int(s, ++c, r->pid);
		bind_text(s, ++c, system);
		bind_text(s, ++c, name);
		bind_text(s, ++c, info);
		break;
	}
	case SWT_ROW_SWAP_IN:
	case SWT_ROW_SWAP_OUT: {
		const struct swt_row_swap *r = payload;

		sqlite3_bind_int64(s, ++c, r->ts);
		sqlite3_bind_int64(s, ++c, r->area_id);
		sqlite3_bind_int64(s, ++c, r->slot);
		sqlite3_bind_int64(s, ++c, r->dev);
		swt_bind_int(s, ++c, r->pid);
		sqlite3_bind_int64(s, ++c, r->bio_id);
		swt_bind_int(s, ++c, r->request_id);
		if (kind == SWT_ROW_SWAP_IN) {
			swt_bind_int(s, ++c, r->fault_id);
			swt_bind_int(s, ++c, r->address);
			swt_bind_int(s, ++c, r->demand);
		}
		break;
	}
	default:
		break;
	}
}

static int step(struct swt_writer *w, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return swt_store_sql_error(w->st, &w->err, "insert");
	return 0;
}

/* Insert what is pending for one kind: full batches, then leftovers one by one. */
static int flush_kind(struct swt_writer *w, int kind)
{
	int n = w->npending[kind], ret = 0;

	w->npending[kind] = 0;
	if (n == BATCH) {
		for (int i = 0; i < BATCH; i++)
			bind_row(w->many[kind], i * tables[kind].ncols, kind, w->pending[kind][i]);
		return step(w, w->many[kind]);
	}
	for (int i = 0; i < n && !ret; i++) {
		bind_row(w->one[kind], 0, kind, w->pending[kind][i]);
		ret = step(w, w->one[kind]);
	}
	return ret;
}

static int write_chunk(struct swt_writer *w, struct chunk *c)
{
	size_t off = 0;
	int ret = 0;

	while (off < c->len && !ret) {
		const struct rec_head *h = (const void *)(c->data + off);

		if (h->kind == 0 || h->kind >= SWT_ROW__COUNT)
			return swt_error(&w->err, SWT_ESTATE, "writer: bad row kind %u", h->kind);
		w->pending[h->kind][w->npending[h->kind]++] = h + 1;
		if (w->npending[h->kind] == BATCH)
			ret = flush_kind(w, h->kind);
		off += sizeof(*h) + h->size;
	}
	/* the chunk is about to be reused: nothing may point into it */
	for (int k = 1; k < SWT_ROW__COUNT && !ret; k++)
		ret = flush_kind(w, k);
	return ret;
}

static void *writer_thread(void *arg)
{
	struct swt_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct chunk *c = w->queue_head;

		if (!c) {
			if (w->stopping)
				break;
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		w->queue_head = c->next;
		if (!w->queue_head)
			w->queue_tail = NULL;
		pthread_mutex_unlock(&w->lock);

		int ret = w->error ? 0 : write_chunk(w, c);

		pthread_mutex_lock(&w->lock);
		if (ret && !w->error)
			atomic_store(&w->error, ret);
		c->len = 0;
		c->next = w->free_list;
		w->free_list = c;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/*
 * The thread runs only while rows stream in: swt_writer_sync() and
 * swt_writer_finish() let it drain the queue and end, and the next full
 * chunk starts it again.  So between sources the process has a single
 * thread, and a decoder may fork a child that inherits no lock held by
 * another thread (malloc's, a sanitizer allocator's).
 */
static int thread_start(struct swt_writer *w)
{
	int ret;

	if (w->running)
		return 0;
	w->stopping = 0;
	if (pthread_create(&w->thread, NULL, writer_thread, w)) {
		ret = swt_error(&w->err, SWT_ENOMEM, "cannot start the database writer thread");
		atomic_store(&w->error, ret);
		return ret;
	}
	w->running = 1;
	return 0;
}

static void thread_stop(struct swt_writer *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->running = 0;
}

static void free_chunks(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;

		free(c);
		c = next;
	}
}

static int prepare_insert(struct swt_store *st, int kind, int rows, sqlite3_stmt **stmt,
			  struct swt_err *err)
{
	const struct row_table *t = &tables[kind];
	size_t size = strlen(t->table) + strlen(t->columns) + 64 + (size_t)rows * (t->ncols * 2 + 3);
	char *sql = malloc(size), *p;
	int ret;

	if (!sql)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	p = sql + sprintf(sql, "INSERT INTO %s (%s) VALUES ", t->table, t->columns);
	for (int r = 0; r < rows; r++) {
		*p++ = r ? ',' : '(';
		if (r)
			*p++ = '(';
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				*p++ = ',';
			*p++ = '?';
		}
		*p++ = ')';
	}
	*p = '\0';
	ret = swt_store_prepare(st, sql, stmt, err);
	free(sql);
	return ret;
}

int swt_writer_start(struct swt_store *st, struct swt_writer **out, struct swt_err *err)
{
	struct swt_writer *w;
	int i, ret;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	w->st = st;
	for (i = 1; i < SWT_ROW__COUNT; i++) {
		ret = prepare_insert(st, i, 1, &w->one[i], err);
		if (!ret)
			ret = prepare_insert(st, i, BATCH, &w->many[i], err);
		if (ret)
			goto out_free;
	}
	w->cur = malloc(sizeof(*w->cur));
	if (!w->cur) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_free;
	}
	w->cur->len = 0;
	w->cur->next = NULL;
	w->chunks = 1;
	ret = swt_store_exec(st, "BEGIN", err);
	if (ret)
		goto out_free;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	*out = w;
	return 0;

out_free:
	for (i = 1; i < SWT_ROW__COUNT; i++) {
		sqlite3_finalize(w->one[i]);
		sqlite3_finalize(w->many[i]);
	}
	free(w->cur);
	free(w);
	return ret;
}

/* Hand the current chunk to the thread and get an empty one. */
static int writer_flush(struct swt_writer *w)
{
	struct chunk *c = w->cur;
	int ret = thread_start(w);

	if (ret)
		return ret;
	pthread_mutex_lock(&w->lock);
	c->next = NULL;
	if (w->queue_tail)
		w->queue_tail->next = c;
	else
		w->queue_head = c;
	w->queue_tail = c;
	pthread_cond_broadcast(&w->cond);
	while (!w->free_list && w->chunks >= CHUNKS_IN_FLIGHT && !w->error)
		pthread_cond_wait(&w->cond, &w->lock);
	ret = w->error;
	if (!w->free_list) {
		c = malloc(sizeof(*c));
		if (c) {
			c->next = NULL;
			w->free_list = c;
			w->chunks++;
		}
	}
	/*
	 * Out of memory: the chunk just queued comes back, written or not
	 * (the thread returns every chunk, also after an error), so the
	 * writer always holds a chunk to fill, and only goes slower.
	 */
	while (!w->free_list)
		pthread_cond_wait(&w->cond, &w->lock);
	w->cur = w->free_list;
	w->free_list = w->cur->next;
	pthread_mutex_unlock(&w->lock);
	w->cur->len = 0;
	w->cur->next = NULL;
	return ret;
}

int swt_writer_put(struct swt_writer *w, enum swt_row_kind kind, const void *row)
{
	size_t size = tables[kind].size, extra = 0, need;
	const struct swt_row_event *ev = NULL;
	struct rec_head *h;
	char *p;

	if (kind == SWT_ROW_EVENT) {
		ev = row;
		extra = strlen(ev->system ? ev->system : "") + 1 +
			strlen(ev->name ? ev->name : "") + 1 +
			strlen(ev->info ? ev->info : "") + 1;
		if (extra > CHUNK_BYTES / 2)
			extra = CHUNK_BYTES / 2;	/* info is truncated below */
	}
	need = sizeof(*h) + ((size + extra + 7) & ~(size_t)7);
	if (w->cur->len + need > CHUNK_BYTES) {
		int ret = writer_flush(w);

		if (ret)
			return ret;
	}
	h = (void *)(w->cur->data + w->cur->len);
	h->kind = (uint16_t)kind;
	h->size = (uint32_t)(need - sizeof(*h));
	p = (char *)(h + 1);
	memcpy(p, row, size);
	if (ev) {
		char *s = p + size, *end = s + extra;
		const char *parts[3] = { ev->system, ev->name, ev->info };

		for (int i = 0; i < 3; i++) {
			size_t n = strlen(parts[i] ? parts[i] : "");

			if (n > (size_t)(end - s) - 1)
				n = (size_t)(end - s) - 1;
			memcpy(s, parts[i] ? parts[i] : "", n);
			s[n] = '\0';
			s += n + 1;
			if (s >= end)
				break;
		}
	}
	w->cur->len += need;
	return w->error;
}

const struct swt_err *swt_writer_error(struct swt_writer *w)
{
	return &w->err;
}

int swt_writer_sync(struct swt_writer *w)
{
	int ret = w->cur->len ? writer_flush(w) : 0;

	thread_stop(w);
	return ret ? ret : w->error;
}

int swt_writer_finish(struct swt_writer *w, struct swt_err *err)
{
	int ret, i;

	if (w->cur->len)
		writer_flush(w);
	thread_stop(w);
	ret = w->error;
	if (ret && err && !err->code)
		*err = w->err;
	for (i = 1; i < SWT_ROW__COUNT; i++) {
		sqlite3_finalize(w->one[i]);
		sqlite3_finalize(w->many[i]);
	}
	free_chunks(w->queue_head);
	free_chunks(w->free_list);
	free(w->cur);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
	return ret;
}
