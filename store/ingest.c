/*
 * Ingest: decoded events -> rows.
 *
 * The block resolver follows each bio from queue (Q) into the request it
 * starts (G) or is merged into (M back, F front), and each request through
 * insert (I), issue (D) and completion (C), the way btt does.  A request's
 * row and its bios' rows are written when it completes, so memory holds only
 * what is in flight.  Stages a trace lacks stay NULL; events that do not fit
 * a lifecycle (plugs, requeues, remaps, repeated stages, partial
 * completions) go to block_misc.  Nothing is dropped: the block_event view
 * gives back the exact event stream.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blktrace.h"
#include "facts.h"
#include "ingest.h"
#include "layout.h"
#include "util.h"

#define NONE (-1)

enum { ST_GETRQ, ST_INSERT, ST_ISSUE, ST_COMPLETE, ST__COUNT };

struct bio_state {
	int64_t id;
	uint64_t sector;
	uint32_t nr, dev;
	int64_t queue_ns, merge_ns;
	int32_t cpu, pid;
	int64_t fault_id, fault_addr;	/* the submitter's last user fault, SWT_NULL */
	int32_t req;		/* owning request, NONE */
	int32_t next;		/* free list */
	int32_t chain;		/* next pending bio with the same key */
	uint8_t write, merge, live;
	char rwbs[12];
};

struct req_state {
	int64_t id;
	uint64_t sector;	/* current start */
	uint64_t done;		/* completed so far (partial completions), sectors */
	uint32_t nr, dev, nr_bios;
	int64_t ns[ST__COUNT];
	int32_t cpu[ST__COUNT], pid[ST__COUNT];
	int64_t error;
	int32_t chain_s, chain_e;	/* same-key chains: open-by-start/inflight, open-by-end */
	int32_t next_free;
	uint8_t write, pc, live, where;	/* where: 0 none, 1 open, 2 inflight */
	char rwbs[12];
};

enum { WHERE_NONE, WHERE_OPEN, WHERE_INFLIGHT };

struct name_count {
	char *system, *name;
	int64_t count;
};

struct task_entry {
	int32_t pid;
	char comm[SWT_COMM_LEN];
};

/*
 * Swap-sized I/O on a device that carries a stated swap area, and that of
 * it no stated area holds (off every extent, or off its page boundaries):
 * a layout that does not fit the trace is said at the end, not found out
 * from an empty analysis.
 */
struct dev_use {
	uint32_t dev;
	int64_t pages[2], outside[2];	/* [0] reads, [1] writes */
};

struct swt_ingest {
	struct swt_store *st;
	struct swt_writer *w;
	swt_warn_fn warn;
	void *warn_ctx;
	struct swt_err err;

	/* current source */
	int64_t source_id, nr_sources;
	int in_source;
	int64_t src_events, src_lost;
	int ended_on_error;	/* meta.txt: the recording stopped on an error (a full disk) */
	struct name_count *names;
	size_t cap_names;
	uint32_t max_name_id;

	/* ids */
	int64_t next_bio_id, next_req_id, next_fault_id;

	/* pools */
	struct bio_state *bios;
	size_t cap_bios;
	int32_t free_bio;
	uint32_t used_bios;
	struct req_state *reqs;
	size_t cap_reqs;
	int32_t free_req;
	uint32_t used_reqs;

	struct swt_map pending;		/* (dev, sector) -> bio chain head */
	struct swt_map open_start;	/* (dev, start) -> open request chain */
	struct swt_map open_end;	/* (dev, end) -> open request chain */
	struct swt_map inflight;	/* (dev, sector) -> issued request chain */

	/* plugs waiting for their unplug: (dev, pid << 32 | cpu) -> index in plugs */
	struct swt_map plug_index;
	struct swt_row_block_misc *plugs;
	size_t cap_plugs, nr_plugs;

	/* devices seen carrying block I/O -> source id that brought them */
	struct swt_map devs;
	/* the traced layout, for deriving swap pages */
	struct swt_layout layout;
	int64_t *area_pages;		/* stated layout: pages each area got, by index */
	struct dev_use *uses;		/* stated layout: one per device with an area */
	size_t nr_uses;
	int demand_known;		/* page-cluster 0: every swap read is a demand read */
	/* pid -> index into last_faults: each task's latest user fault */
	struct swt_map fault_index;
	/*
	 * source: the one it came from.  Only a bio of the same source is
	 * linked to it here, in time order; across sources (faults in
	 * trace.dat, reads in blktrace files, read one after the other) the
	 * facts link them by time (attach_faults_across_sources).
	 */
	struct { int64_t id, address, source; } *last_faults;
	size_t cap_last_faults, nr_last_faults;
	int64_t page_mask;
	/* pid -> task index */
	struct swt_map task_index;
	struct task_entry *tasks;
	size_t cap_tasks, nr_tasks;

	uint64_t first_ns, last_ns;
	char clock[32];			/* the first source's that names one */
	uint64_t t_start;		/* swt_ingest_finish_times() count from here */
	uint64_t rows_ns, facts_ns;	/* swt_ingest_finish_times() */
	int64_t lost_total;
	int64_t block_events;
	int64_t swap_in_pages, swap_out_pages;
	int64_t fault_source;		/* source of faults: 0 none, its id, -1 several */
	int64_t block_sources;		/* the same for block events */
	char *source_path;		/* current source */
	char **source_paths;		/* by source id - 1 */
	size_t cap_source_paths;
};

int swt_ingest_quiesce(struct swt_ingest *ing)
{
	/* sync ends the writer thread: a child forked now inherits no locks */
	return ing->w ? swt_writer_sync(ing->w) : 0;
}

void swt_ingest_warn(struct swt_ingest *ing, const char *msg)
{
	if (ing->warn)
		ing->warn(ing->warn_ctx, msg);
}

int64_t swt_ingest_block_events(struct swt_ingest *ing)
{
	return ing->block_events;
}

const struct swt_err *swt_ingest_error(struct swt_ingest *ing)
{
	return &ing->err;
}

void swt_ingest_finish_times(struct swt_ingest *ing, uint64_t *rows_ns, uint64_t *facts_ns)
{
	*rows_ns = ing->rows_ns;
	*facts_ns = ing->facts_ns;
}

int swt_ingest_alloc(struct swt_store *st, const struct swt_meta *meta, swt_warn_fn warn,
		     void *warn_ctx, struct swt_ingest **out, struct swt_err *err)
{
	struct swt_ingest *ing = calloc(1, sizeof(*ing));
	size_t skipped;
	int ret;

	*out = NULL;
	if (!ing)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	ing->st = st;
	ing->warn = warn;
	ing->warn_ctx = warn_ctx;
	ing->free_bio = ing->free_req = NONE;
	ing->first_ns = UINT64_MAX;
	ing->t_start = swt_now_ns();
	if (swt_map_init(&ing->pending, 1024) || swt_map_init(&ing->open_start, 256) ||
	    swt_map_init(&ing->open_end, 256) || swt_map_init(&ing->inflight, 256) ||
	    swt_map_init(&ing->plug_index, 64) || swt_map_init(&ing->devs, 16) ||
	    swt_map_init(&ing->task_index, 256) || swt_map_init(&ing->fault_index, 64) || swt_layout_init(&ing->layout, meta, &skipped)) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_free;
	}
	ing->demand_known = meta && meta->page_cluster == 0;
	ing->ended_on_error = swt_meta_ended_on_error(meta);
	ing->page_mask = (int64_t)ing->layout.sectors_per_page * 512 - 1;
	if (!ing->layout.assumed) {
		size_t na = ing->layout.nr_areas;

		ing->area_pages = calloc(na ? na : 1, sizeof(*ing->area_pages));
		ing->uses = calloc(na ? na : 1, sizeof(*ing->uses));
		if (!ing->area_pages || !ing->uses) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out_free;
		}
		for (size_t i = 0; i < na; i++) {
			size_t u = 0;

			while (u < ing->nr_uses && ing->uses[u].dev != ing->layout.areas[i].dev)
				u++;
			if (u == ing->nr_uses)
				ing->uses[ing->nr_uses++].dev = ing->layout.areas[i].dev;
		}
	}
	for (size_t i = 0; meta && i < meta->nr_areas; i++)
		if (!meta->areas[i].dev && warn) {
			char msg[512];

			snprintf(msg, sizeof(msg),
				 "swap area '%s' has no device number in the metadata; "
				 "its I/O is not attributed (state it with --swap)",
				 meta->areas[i].path ? meta->areas[i].path : "?");
			warn(warn_ctx, msg);
		}
	ret = swt_writer_start(st, &ing->w, err);
	if (ret)
		goto out_free;
	*out = ing;
	return 0;
out_free:
	swt_ingest_free(ing);
	return ret;
}

void swt_ingest_free(struct swt_ingest *ing)
{
	size_t i;

	if (!ing)
		return;
	if (ing->w)
		swt_writer_finish(ing->w, NULL);
	swt_map_release(&ing->pending);
	swt_map_release(&ing->open_start);
	swt_map_release(&ing->open_end);
	swt_map_release(&ing->inflight);
	swt_map_release(&ing->plug_index);
	free(ing->plugs);
	swt_map_release(&ing->devs);
	swt_map_release(&ing->task_index);
	swt_map_release(&ing->fault_index);
	swt_layout_release(&ing->layout);
	free(ing->area_pages);
	free(ing->uses);
	free(ing->last_faults);
	for (i = 0; i < ing->cap_names; i++) {
		free(ing->names[i].system);
		free(ing->names[i].name);
	}
	free(ing->names);
	for (i = 0; i < (size_t)ing->nr_sources && ing->source_paths; i++)
		free(ing->source_paths[i]);
	free(ing->source_paths);
	free(ing->bios);
	free(ing->reqs);
	free(ing->tasks);
	free(ing);
}

/* A failure the writer reported: its own message when it has one. */
static int writer_failed(struct swt_ingest *ing, struct swt_err *err, int ret)
{
	const struct swt_err *werr = swt_writer_error(ing->w);

	if (werr->code)
		return swt_error(err, werr->code, "%s", werr->msg);
	return swt_error(err, -ret, "database writer: %s", swt_strerror(ret));
}

/* ---- pools ---------------------------------------------------------- */

static int32_t bio_new(struct swt_ingest *ing)
{
	int32_t i;

	if (ing->free_bio != NONE) {
		i = ing->free_bio;
		ing->free_bio = ing->bios[i].next;
	} else {
		if (swt_grow((void **)&ing->bios, &ing->cap_bios, ing->used_bios + 1,
			     sizeof(*ing->bios)))
			return NONE;
		i = (int32_t)ing->used_bios++;
	}
	memset(&ing->bios[i], 0, sizeof(ing->bios[i]));
	ing->bios[i].req = ing->bios[i].next = ing->bios[i].chain = NONE;
	ing->bios[i].queue_ns = ing->bios[i].merge_ns = SWT_NULL;
	ing->bios[i].fault_id = ing->bios[i].fault_addr = SWT_NULL;
	ing->bios[i].live = 1;
	return i;
}

static void bio_release(struct swt_ingest *ing, int32_t i)
{
	ing->bios[i].live = 0;
	ing->bios[i].next = ing->free_bio;
	ing->free_bio = i;
}

static int32_t req_new(struct swt_ingest *ing)
{
	struct req_state *r;
	int32_t i, s;

	if (ing->free_req != NONE) {
		i = ing->free_req;
		ing->free_req = ing->reqs[i].next_free;
	} else {
		if (swt_grow((void **)&ing->reqs, &ing->cap_reqs, ing->used_reqs + 1,
			     sizeof(*ing->reqs)))
			return NONE;
		i = (int32_t)ing->used_reqs++;
	}
	r = &ing->reqs[i];
	memset(r, 0, sizeof(*r));
	r->id = ++ing->next_req_id;
	for (s = 0; s < ST__COUNT; s++) {
		r->ns[s] = SWT_NULL;
		r->cpu[s] = r->pid[s] = -1;
	}
	r->error = SWT_NULL;
	r->chain_s = r->chain_e = NONE;
	r->live = 1;
	return i;
}

static void req_release(struct swt_ingest *ing, int32_t i)
{
	ing->reqs[i].live = 0;
	ing->reqs[i].next_free = ing->free_req;
	ing->free_req = i;
}

/* ---- same-key chains over swt_map --------------------------------------- */

static int32_t *bio_chain(struct swt_ingest *ing, int32_t i) { return &ing->bios[i].chain; }
static int32_t *req_chain_s(struct swt_ingest *ing, int32_t i) { return &ing->reqs[i].chain_s; }
static int32_t *req_chain_e(struct swt_ingest *ing, int32_t i) { return &ing->reqs[i].chain_e; }

typedef int32_t *(*chain_fn)(struct swt_ingest *, int32_t);

/*
 * Same-key chains run newest first, and the events that move an object on
 * take the newest of their direction (find_open, on_complete...).  Two
 * objects at one key mean, on a swap device, that the older one lost the
 * event that would have moved it on (a ring buffer that overran): swap
 * never has two I/Os for one slot in flight.  Taking the oldest would pair
 * every later event at that key with its predecessor's (a completion with
 * the request before, for a latency of the gap between them).  A chain
 * keeps CHAIN_MAX objects: adding one more hands back the oldest, which
 * the caller writes out as far as it got, so a trace that lost events
 * costs neither time nor memory that grows with it.
 */
#define CHAIN_MAX 4

/* Add idx at the head of the chain for key; *evicted: the oldest, cut off, or NONE. */
static int chain_add(struct swt_ingest *ing, struct swt_map *m, chain_fn link,
		     uint64_t dev, uint64_t key, int32_t idx, int32_t *evicted)
{
	uint64_t head;
	int32_t prev = idx, n = 1;

	*evicted = NONE;
	*link(ing, idx) = swt_map_get(m, dev, key, &head) ? (int32_t)head : NONE;
	if (swt_map_put(m, dev, key, (uint64_t)idx))
		return -SWT_ENOMEM;
	for (int32_t i = *link(ing, idx); i != NONE; prev = i, i = *link(ing, i)) {
		if (++n > CHAIN_MAX) {
			*link(ing, prev) = NONE;
			*evicted = i;	/* the last: the chain was CHAIN_MAX long */
			break;
		}
	}
	return 0;
}

/* Remove idx from the chain for key; 1 when it was there. */
static int chain_del(struct swt_ingest *ing, struct swt_map *m, chain_fn link,
		     uint64_t dev, uint64_t key, int32_t idx)
{
	uint64_t head;
	int32_t prev = NONE;

	if (!swt_map_get(m, dev, key, &head))
		return 0;
	for (int32_t i = (int32_t)head; i != NONE; prev = i, i = *link(ing, i)) {
		if (i != idx)
			continue;
		if (prev != NONE)
			*link(ing, prev) = *link(ing, i);
		else if (*link(ing, i) == NONE)
			swt_map_del(m, dev, key);
		else
			swt_map_put(m, dev, key, (uint64_t)*link(ing, i));
		*link(ing, i) = NONE;
		return 1;
	}
	return 0;
}

static int32_t chain_head(struct swt_map *m, uint64_t dev, uint64_t key)
{
	uint64_t head;

	return swt_map_get(m, dev, key, &head) ? (int32_t)head : NONE;
}

/* ---- rows ------------------------------------------------------------- */

/* The op letter of an rwbs, after an optional preflush 'F'. */
static char rwbs_op(const char *rwbs)
{
	if (rwbs[0] == 'F' && rwbs[1] && strchr("WDRNZ", rwbs[1]))
		return rwbs[1];
	return rwbs[0];
}

/* The stated-layout tally of dev, NULL when no stated area is on it. */
static struct dev_use *dev_use(struct swt_ingest *ing, uint32_t dev)
{
	for (size_t i = 0; i < ing->nr_uses; i++)
		if (ing->uses[i].dev == dev)
			return &ing->uses[i];
	return NULL;
}

/*
 * Write a bio's row and, when it moved swap pages, one swap_in or swap_out
 * row per page (pswpin/pswpout count pages), then forget the bio.
 */
static int emit_bio(struct swt_ingest *ing, int32_t bi, int64_t request_id)
{
	struct bio_state *b = &ing->bios[bi];
	struct swt_row_bio row = {
		.id = b->id, .source_id = ing->source_id, .request_id = request_id,
		.dev = b->dev, .write = b->write, .sector = (int64_t)b->sector,
		.nr_sectors = b->nr, .queue_ns = b->queue_ns,
		.cpu = b->cpu < 0 ? SWT_NULL : b->cpu, .pid = b->pid < 0 ? SWT_NULL : b->pid,
		.merge = b->merge, .merge_ns = b->merge_ns,
	};
	uint32_t spp = ing->layout.sectors_per_page, pages = b->nr / spp;
	char op = rwbs_op(b->rwbs);
	int ret;

	memcpy(row.rwbs, b->rwbs, sizeof(row.rwbs));
	ret = swt_writer_put(ing->w, SWT_ROW_BIO, &row);
	if (!ret && pages && ((op == 'R' && !b->write) || op == 'W')) {
		struct dev_use *use = dev_use(ing, b->dev);
		struct swt_row_swap sw = {
			.ts = b->queue_ns != SWT_NULL ? b->queue_ns : b->merge_ns, .dev = b->dev,
			.pid = row.pid, .bio_id = b->id, .request_id = request_id,
			.fault_id = SWT_NULL, .address = SWT_NULL, .demand = SWT_NULL,
		};
		int kind = op == 'W' ? SWT_ROW_SWAP_OUT : SWT_ROW_SWAP_IN;

		if (kind == SWT_ROW_SWAP_IN) {
			sw.fault_id = b->fault_id;
			if (b->fault_addr != SWT_NULL)
				sw.address = b->fault_addr & ~ing->page_mask;
		}
		for (uint32_t pg = 0; pg < pages && !ret; pg++) {
			const struct swt_layout_area *area = NULL;
			int hit = swt_layout_map(&ing->layout, b->dev, b->sector + (uint64_t)pg * spp,
						 &area, &sw.slot);

			if (hit < 0) {
				ret = hit;
				break;
			}
			if (use) {
				use->pages[kind == SWT_ROW_SWAP_OUT]++;
				/* a header page (slot 0) is the area's: its area is set */
				if (!area)
					use->outside[kind == SWT_ROW_SWAP_OUT]++;
				else if (hit)
					ing->area_pages[area - ing->layout.areas]++;
			}
			if (!hit)
				continue;
			sw.area_id = area->id;
			/* synchronous devices bypass readahead: their reads are demand too */
			if (kind == SWT_ROW_SWAP_IN)
				sw.demand = ing->demand_known || area->synchronous ? 1 : SWT_NULL;
			ret = swt_writer_put(ing->w, kind, &sw);
			if (kind == SWT_ROW_SWAP_IN)
				ing->swap_in_pages++;
			else
				ing->swap_out_pages++;
		}
	}
	bio_release(ing, bi);
	return ret;
}

static inline int64_t or_null(int32_t v)
{
	return v < 0 ? SWT_NULL : v;
}

/* Write a request and its bios, then forget them. */
static int emit_request(struct swt_ingest *ing, int32_t ri)
{
	struct req_state *r = &ing->reqs[ri];
	struct swt_row_request row = {
		.id = r->id, .source_id = ing->source_id, .dev = r->dev, .write = r->write,
		.sector = (int64_t)r->sector, .nr_sectors = r->nr, .nr_bios = r->nr_bios,
		.getrq_ns = r->ns[ST_GETRQ], .getrq_cpu = or_null(r->cpu[ST_GETRQ]),
		.getrq_pid = or_null(r->pid[ST_GETRQ]),
		.insert_ns = r->ns[ST_INSERT], .insert_cpu = or_null(r->cpu[ST_INSERT]),
		.insert_pid = or_null(r->pid[ST_INSERT]),
		.issue_ns = r->ns[ST_ISSUE], .issue_cpu = or_null(r->cpu[ST_ISSUE]),
		.issue_pid = or_null(r->pid[ST_ISSUE]),
		.complete_ns = r->ns[ST_COMPLETE], .complete_cpu = or_null(r->cpu[ST_COMPLETE]),
		.complete_pid = or_null(r->pid[ST_COMPLETE]),
		.error = r->error, .pc = r->pc,
	};
	int ret;

	memcpy(row.rwbs, r->rwbs, sizeof(row.rwbs));
	ret = swt_writer_put(ing->w, SWT_ROW_REQUEST, &row);
	req_release(ing, ri);
	return ret;
}

static void misc_row(struct swt_ingest *ing, const struct swt_event *ev, int64_t request_id,
		     struct swt_row_block_misc *row)
{
	const struct swt_block_event *b = &ev->block;

	*row = (struct swt_row_block_misc){
		.source_id = ing->source_id, .ts = (int64_t)ev->ts, .cpu = or_null(ev->cpu),
		.pid = or_null(ev->pid), .dev = b->dev, .action = b->action, .write = b->write,
		.sector = (int64_t)b->sector, .nr_sectors = b->nr_sectors, .arg = SWT_NULL,
		.arg_dev = SWT_NULL, .error = b->error ? b->error : SWT_NULL,
		.request_id = request_id, .pc = b->pc, .unplug_ns = SWT_NULL,
	};
	switch (b->action) {
	case SWT_BA_UNPLUG:
	case SWT_BA_UNPLUG_TIMER:
	case SWT_BA_SPLIT:
		row->arg = (int64_t)b->arg;
		break;
	case SWT_BA_REMAP:
		row->arg = (int64_t)b->arg;
		row->arg_dev = b->arg_dev;
		break;
	default:
		break;
	}
	if (b->action == SWT_BA_PLUG || b->action == SWT_BA_UNPLUG ||
	    b->action == SWT_BA_UNPLUG_TIMER) {
		row->sector = row->nr_sectors = SWT_NULL;
		row->write = SWT_NULL;
	}
	memcpy(row->rwbs, b->rwbs, SWT_RWBS_LEN);
}

static int put_misc(struct swt_ingest *ing, const struct swt_event *ev, int64_t request_id)
{
	struct swt_row_block_misc row;

	misc_row(ing, ev, request_id, &row);
	return swt_writer_put(ing->w, SWT_ROW_BLOCK_MISC, &row);
}

/* ---- plugs -------------------------------------------------------------- */

/*
 * A plug (P) and the unplug (U) that ends it -- same device, task and CPU,
 * nothing else differing -- share one block_misc row: the plug's, with the
 * unplug's time in unplug_ns and its request count in arg.  blktrace files
 * hold one such pair per batch of I/O, so this removes a row per batch;
 * the block_event view gives both events back.
 */
static uint64_t plug_key(int64_t pid, int64_t cpu)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)cpu;
}

/* Remove pending plug idx from the table, into *row; the last one moves into its place. */
static int plug_take(struct swt_ingest *ing, uint64_t idx, struct swt_row_block_misc *row)
{
	struct swt_row_block_misc *last = &ing->plugs[ing->nr_plugs - 1];
	int ret = 0;

	*row = ing->plugs[idx];
	swt_map_del(&ing->plug_index, (uint64_t)row->dev, plug_key(row->pid, row->cpu));
	if (idx != ing->nr_plugs - 1) {
		ing->plugs[idx] = *last;
		ret = swt_map_put(&ing->plug_index, (uint64_t)last->dev,
				  plug_key(last->pid, last->cpu), idx);
	}
	ing->nr_plugs--;
	return ret;
}

static int on_plug(struct swt_ingest *ing, const struct swt_event *ev)
{
	struct swt_row_block_misc *row;
	uint64_t key = plug_key(or_null(ev->pid), or_null(ev->cpu)), idx;

	if (swt_map_get(&ing->plug_index, ev->block.dev, key, &idx)) {
		/* plugged again with no unplug between: the first stands alone */
		struct swt_row_block_misc alone;
		int ret = plug_take(ing, idx, &alone);

		if (!ret)
			ret = swt_writer_put(ing->w, SWT_ROW_BLOCK_MISC, &alone);
		if (ret)
			return ret;
	}
	if (swt_grow((void **)&ing->plugs, &ing->cap_plugs, ing->nr_plugs + 1, sizeof(*ing->plugs)))
		return -SWT_ENOMEM;
	row = &ing->plugs[ing->nr_plugs];
	misc_row(ing, ev, SWT_NULL, row);
	if (swt_map_put(&ing->plug_index, ev->block.dev, key, ing->nr_plugs))
		return -SWT_ENOMEM;
	ing->nr_plugs++;
	return 0;
}

static int on_unplug(struct swt_ingest *ing, const struct swt_event *ev)
{
	const struct swt_block_event *b = &ev->block;
	struct swt_row_block_misc row;
	uint64_t idx;

	if (!swt_map_get(&ing->plug_index, b->dev, plug_key(or_null(ev->pid), or_null(ev->cpu)),
			 &idx) || b->error || b->pc != ing->plugs[idx].pc ||
	    strncmp(b->rwbs, ing->plugs[idx].rwbs, SWT_RWBS_LEN))
		return put_misc(ing, ev, SWT_NULL);
	if (plug_take(ing, idx, &row))
		return -SWT_ENOMEM;
	row.unplug_ns = (int64_t)ev->ts;
	row.arg = (int64_t)b->arg;
	return swt_writer_put(ing->w, SWT_ROW_BLOCK_MISC, &row);
}

/* ---- the lifecycle ------------------------------------------------------ */

static void req_set_stage(struct req_state *r, int stage, const struct swt_event *ev)
{
	r->ns[stage] = (int64_t)ev->ts;
	r->cpu[stage] = ev->cpu;
	r->pid[stage] = ev->pid;
}

static void req_take_event_shape(struct req_state *r, const struct swt_event *ev)
{
	r->dev = ev->block.dev;
	r->write = ev->block.write;
	r->pc = ev->block.pc;
	r->sector = ev->block.sector;
	r->nr = ev->block.nr_sectors;
	memcpy(r->rwbs, ev->block.rwbs, SWT_RWBS_LEN);
}

/* The bio now belongs to the request: count it and write it out. */
static int req_attach_bio(struct swt_ingest *ing, int32_t ri, int32_t bi)
{
	ing->reqs[ri].nr_bios++;
	return emit_bio(ing, bi, ing->reqs[ri].id);
}

static void open_del(struct swt_ingest *ing, int32_t ri)
{
	struct req_state *r = &ing->reqs[ri];

	chain_del(ing, &ing->open_start, req_chain_s, r->dev, r->sector, ri);
	chain_del(ing, &ing->open_end, req_chain_e, r->dev, r->sector + r->nr, ri);
	r->where = WHERE_NONE;
}

/*
 * An open request cut off one of its chains (chain_add): off the other
 * one too (open_del finds it in only that one), and written out as it
 * stands, never issued in the trace.
 */
static int open_evicted(struct swt_ingest *ing, int32_t ri)
{
	open_del(ing, ri);
	return emit_request(ing, ri);
}

static int open_add(struct swt_ingest *ing, int32_t ri)
{
	struct req_state *r = &ing->reqs[ri];
	int32_t old;
	int ret;

	r->where = WHERE_OPEN;
	ret = chain_add(ing, &ing->open_start, req_chain_s, r->dev, r->sector, ri, &old);
	if (!ret && old != NONE)
		ret = open_evicted(ing, old);
	if (!ret)
		ret = chain_add(ing, &ing->open_end, req_chain_e, r->dev, r->sector + r->nr, ri, &old);
	if (!ret && old != NONE)
		ret = open_evicted(ing, old);
	return ret;
}

static int inflight_add(struct swt_ingest *ing, int32_t ri)
{
	struct req_state *r = &ing->reqs[ri];
	int32_t old;
	int ret;

	r->where = WHERE_INFLIGHT;
	ret = chain_add(ing, &ing->inflight, req_chain_s, r->dev, r->sector + r->done, ri, &old);
	if (!ret && old != NONE) {
		/* issued, its completion never seen */
		ing->reqs[old].where = WHERE_NONE;
		ret = emit_request(ing, old);
	}
	return ret;
}

static void inflight_del(struct swt_ingest *ing, int32_t ri)
{
	struct req_state *r = &ing->reqs[ri];

	chain_del(ing, &ing->inflight, req_chain_s, r->dev, r->sector + r->done, ri);
	r->where = WHERE_NONE;
}

/* The newest request of the direction in a chain of requests, NONE (see chain_add). */
static int32_t newest_of(struct swt_ingest *ing, struct swt_map *m, chain_fn link,
			 uint32_t dev, uint64_t key, uint8_t write)
{
	for (int32_t i = chain_head(m, dev, key); i != NONE; i = *link(ing, i))
		if (ing->reqs[i].write == write)
			return i;
	return NONE;
}

/* Open request at (dev, key), preferring the newest of the same direction. */
static int32_t find_open(struct swt_ingest *ing, struct swt_map *m, chain_fn link,
			 uint32_t dev, uint64_t key, uint8_t write)
{
	int32_t ri = newest_of(ing, m, link, dev, key, write);

	return ri != NONE ? ri : chain_head(m, dev, key);
}

static int32_t pending_take(struct swt_ingest *ing, uint32_t dev, uint64_t sector)
{
	int32_t head = chain_head(&ing->pending, dev, sector);

	if (head != NONE)
		chain_del(ing, &ing->pending, bio_chain, dev, sector, head);
	return head;
}

/* A bio for an event whose Q the trace does not hold. */
static int32_t orphan_bio(struct swt_ingest *ing, const struct swt_event *ev)
{
	int32_t bi = bio_new(ing);
	struct bio_state *b;

	if (bi == NONE)
		return NONE;
	b = &ing->bios[bi];
	b->id = ++ing->next_bio_id;
	b->dev = ev->block.dev;
	b->sector = ev->block.sector;
	b->nr = ev->block.nr_sectors;
	b->write = ev->block.write;
	b->cpu = ev->cpu;
	b->pid = ev->pid;
	memcpy(b->rwbs, ev->block.rwbs, SWT_RWBS_LEN);
	return bi;
}

static int on_queue(struct swt_ingest *ing, const struct swt_event *ev)
{
	int32_t bi = orphan_bio(ing, ev), old;
	int ret;

	if (bi == NONE)
		return -SWT_ENOMEM;
	ing->bios[bi].queue_ns = (int64_t)ev->ts;
	if (ev->pid >= 0) {
		uint64_t fi;

		if (swt_map_get(&ing->fault_index, (uint64_t)ev->pid, 0, &fi) &&
		    ing->last_faults[fi].source == ing->source_id) {
			ing->bios[bi].fault_id = ing->last_faults[fi].id;
			ing->bios[bi].fault_addr = ing->last_faults[fi].address;
		}
	}
	ret = chain_add(ing, &ing->pending, bio_chain, ev->block.dev, ev->block.sector, bi, &old);
	if (!ret && old != NONE) {
		/* queued, never seen reaching a request */
		ret = emit_bio(ing, old, SWT_NULL);
	}
	return ret;
}

static int on_getrq(struct swt_ingest *ing, const struct swt_event *ev)
{
	int32_t ri = req_new(ing), bi;
	struct req_state *r;

	if (ri == NONE)
		return -SWT_ENOMEM;
	r = &ing->reqs[ri];
	req_take_event_shape(r, ev);
	req_set_stage(r, ST_GETRQ, ev);
	bi = pending_take(ing, ev->block.dev, ev->block.sector);
	if (bi != NONE) {
		int ret;

		/* the request is as big as its first bio */
		r->nr = ing->bios[bi].nr;
		ret = req_attach_bio(ing, ri, bi);
		if (ret)
			return ret;
	}
	return open_add(ing, ri);
}

static int on_merge(struct swt_ingest *ing, const struct swt_event *ev)
{
	const struct swt_block_event *b = &ev->block;
	int front = b->action == SWT_BA_FRONTMERGE;
	int32_t bi = pending_take(ing, b->dev, b->sector), ri;
	struct req_state *r;

	if (bi == NONE && !front && b->action == SWT_BA_BACKMERGE) {
		/*
		 * blktrace logs a request merged into another (block_rq_merge)
		 * as a back merge carrying the whole request: recognise it by
		 * an open request starting here with that size.
		 */
		int32_t victim = find_open(ing, &ing->open_start, req_chain_s, b->dev, b->sector,
					   b->write);

		if (victim != NONE && ing->reqs[victim].nr == b->nr_sectors) {
			struct swt_event m = *ev;

			m.block.action = SWT_BA_RQ_MERGE;
			return put_misc(ing, &m, ing->reqs[victim].id);
		}
	}
	if (bi == NONE) {
		bi = orphan_bio(ing, ev);
		if (bi == NONE)
			return -SWT_ENOMEM;
	}
	ing->bios[bi].merge = front ? 'F' : 'M';
	ing->bios[bi].merge_ns = (int64_t)ev->ts;
	if (front)
		ri = find_open(ing, &ing->open_start, req_chain_s, b->dev, b->sector + b->nr_sectors,
			       b->write);
	else
		ri = find_open(ing, &ing->open_end, req_chain_e, b->dev, b->sector, b->write);
	if (ri == NONE) {
		/* merged into a request created before the trace began */
		return emit_bio(ing, bi, SWT_NULL);
	}
	r = &ing->reqs[ri];
	open_del(ing, ri);
	if (front)
		r->sector = b->sector;
	r->nr += b->nr_sectors;
	{
		int ret = req_attach_bio(ing, ri, bi);

		if (ret)
			return ret;
	}
	return open_add(ing, ri);
}

/* A request known to the resolver at (dev, sector), else a new one. */
static int32_t request_for_stage(struct swt_ingest *ing, const struct swt_event *ev,
				 int *created)
{
	int32_t ri = find_open(ing, &ing->open_start, req_chain_s, ev->block.dev,
			       ev->block.sector, ev->block.write);

	*created = 0;
	if (ri != NONE)
		return ri;
	ri = req_new(ing);
	if (ri != NONE) {
		req_take_event_shape(&ing->reqs[ri], ev);
		*created = 1;
	}
	return ri;
}

static int on_insert(struct swt_ingest *ing, const struct swt_event *ev)
{
	int created;
	int32_t ri = request_for_stage(ing, ev, &created);
	struct req_state *r;

	if (ri == NONE)
		return -SWT_ENOMEM;
	r = &ing->reqs[ri];
	if (r->ns[ST_INSERT] != SWT_NULL)
		return put_misc(ing, ev, r->id);	/* re-insert after requeue */
	req_set_stage(r, ST_INSERT, ev);
	return created ? open_add(ing, ri) : 0;
}

static int on_issue(struct swt_ingest *ing, const struct swt_event *ev)
{
	int created;
	int32_t ri = request_for_stage(ing, ev, &created);
	struct req_state *r;
	int ret = 0;

	if (ri == NONE)
		return -SWT_ENOMEM;
	r = &ing->reqs[ri];
	if (!created)
		open_del(ing, ri);
	if (r->ns[ST_ISSUE] != SWT_NULL) {
		ret = put_misc(ing, ev, r->id);	/* re-issue after requeue */
	} else {
		req_set_stage(r, ST_ISSUE, ev);
		/* the issued extent is authoritative (merges may be untraced) */
		r->sector = ev->block.sector;
		r->nr = ev->block.nr_sectors;
		memcpy(r->rwbs, ev->block.rwbs, SWT_RWBS_LEN);
	}
	return ret ? ret : inflight_add(ing, ri);
}

/* When the request entered the resolver: its first stage seen. */
static int64_t req_first_ns(const struct req_state *r)
{
	for (int s = 0; s < ST__COUNT; s++)
		if (r->ns[s] != SWT_NULL)
			return r->ns[s];
	return SWT_NULL;
}

static int on_complete(struct swt_ingest *ing, const struct swt_event *ev)
{
	const struct swt_block_event *b = &ev->block;
	int32_t ri = newest_of(ing, &ing->inflight, req_chain_s, b->dev, b->sector, b->write), bi;
	int32_t oi = newest_of(ing, &ing->open_start, req_chain_s, b->dev, b->sector, b->write);
	int32_t qi = chain_head(&ing->pending, b->dev, b->sector);
	int64_t issued = ri != NONE ? ing->reqs[ri].ns[ST_ISSUE] : INT64_MIN;
	int64_t opened = oi != NONE ? req_first_ns(&ing->reqs[oi]) : INT64_MIN;
	int64_t queued = qi != NONE && ing->bios[qi].write == b->write ?
			 SWT_MAX(ing->bios[qi].queue_ns, ing->bios[qi].merge_ns) : INT64_MIN;
	struct req_state *r;

	/*
	 * The completion is the newest I/O's at this sector (see chain_add):
	 * a request created, or a bio queued, after the newest one issued here
	 * lost its later events.
	 */
	if (oi != NONE && opened > issued && opened >= queued) {
		r = &ing->reqs[oi];
		open_del(ing, oi);
		req_set_stage(r, ST_COMPLETE, ev);
		r->error = b->error ? b->error : SWT_NULL;
		return emit_request(ing, oi);
	}
	if (ri == NONE || queued > issued) {
		/* a bio-based device completes the bio itself (or the request's events were lost) */
		bi = pending_take(ing, b->dev, b->sector);
		ri = req_new(ing);
		if (ri == NONE)
			return -SWT_ENOMEM;
		r = &ing->reqs[ri];
		req_take_event_shape(r, ev);
		if (bi != NONE) {
			int ret = req_attach_bio(ing, ri, bi);

			if (ret)
				return ret;
		}
		req_set_stage(r, ST_COMPLETE, ev);
		r->error = b->error ? b->error : SWT_NULL;
		return emit_request(ing, ri);
	}
	r = &ing->reqs[ri];
	inflight_del(ing, ri);
	if (b->nr_sectors && r->done + b->nr_sectors < r->nr) {
		/* partial completion: the rest completes further on */
		int ret;

		r->done += b->nr_sectors;
		ret = put_misc(ing, ev, r->id);
		return ret ? ret : inflight_add(ing, ri);
	}
	req_set_stage(r, ST_COMPLETE, ev);
	r->error = b->error ? b->error : SWT_NULL;
	return emit_request(ing, ri);
}

static int on_requeue(struct swt_ingest *ing, const struct swt_event *ev)
{
	const struct swt_block_event *b = &ev->block;
	int32_t ri = chain_head(&ing->inflight, b->dev, b->sector);
	int ret;

	if (ri == NONE)
		return put_misc(ing, ev, SWT_NULL);
	inflight_del(ing, ri);
	ing->reqs[ri].done = 0;
	ret = put_misc(ing, ev, ing->reqs[ri].id);
	return ret ? ret : open_add(ing, ri);
}

static int on_rq_merge(struct swt_ingest *ing, const struct swt_event *ev)
{
	int32_t ri = find_open(ing, &ing->open_start, req_chain_s, ev->block.dev,
			       ev->block.sector, ev->block.write);

	return put_misc(ing, ev, ri == NONE ? SWT_NULL : ing->reqs[ri].id);
}

/* Are two source paths files, or the NAME, of one blktrace set (NAME.blktrace.N)? */
static int same_blktrace_set(const char *a, const char *b)
{
	size_t la = swt_blktrace_set_name_len(a), lb = swt_blktrace_set_name_len(b);

	la = la ? la : strlen(a);
	lb = lb ? lb : strlen(b);
	return la == lb && !strncmp(a, b, la);
}

static int on_block(struct swt_ingest *ing, const struct swt_event *ev)
{
	uint64_t owner;

	if (!swt_map_get(&ing->devs, ev->block.dev, 0, &owner)) {
		if (swt_map_put(&ing->devs, ev->block.dev, 0, (uint64_t)ing->source_id))
			return -SWT_ENOMEM;
	} else if ((int64_t)owner != ing->source_id) {
		/* two views of the same I/O would count every request twice */
		const char *other = ing->source_paths[owner - 1];
		char name[32];

		swt_dev_format(ev->block.dev, name, sizeof(name));
		/* never advise dropping I/O: per-CPU files of one set are one trace */
		if (same_blktrace_set(ing->source_path, other))
			return swt_error(&ing->err, SWT_EUSAGE,
					 "'%s': block events for device %s already come from '%s', of the "
					 "same blktrace set: give each of its per-CPU files once",
					 ing->source_path, name, other);
		return swt_error(&ing->err, SWT_EUSAGE,
				 "'%s': block events for device %s also come from '%s' (a database "
				 "holds one trace of a device's I/O); ingest one of them if both trace "
				 "the same I/O, else each into its own database",
				 ing->source_path, name, other);
	}
	ing->block_events++;
	if (ing->block_sources != ing->source_id)
		ing->block_sources = ing->block_sources ? -1 : ing->source_id;
	switch (ev->block.action) {
	case SWT_BA_QUEUE:
		/*
		 * bio rows are file-system I/O, swap pages among them: a
		 * passthrough request's queue event is its own, in block_misc
		 */
		if (ev->block.pc)
			return put_misc(ing, ev, SWT_NULL);
		return on_queue(ing, ev);
	case SWT_BA_GETRQ:
		return on_getrq(ing, ev);
	case SWT_BA_BACKMERGE:
	case SWT_BA_FRONTMERGE:
		return on_merge(ing, ev);
	case SWT_BA_INSERT:
		return on_insert(ing, ev);
	case SWT_BA_ISSUE:
		return on_issue(ing, ev);
	case SWT_BA_COMPLETE:
		return on_complete(ing, ev);
	case SWT_BA_REQUEUE:
		return on_requeue(ing, ev);
	case SWT_BA_RQ_MERGE:
		return on_rq_merge(ing, ev);
	case SWT_BA_PLUG:
		return on_plug(ing, ev);
	case SWT_BA_UNPLUG:
		return on_unplug(ing, ev);
	default:
		return put_misc(ing, ev, SWT_NULL);
	}
}

/* ---- other event kinds ---------------------------------------------------- */

static int note_task(struct swt_ingest *ing, int32_t pid, const char *comm)
{
	uint64_t idx;

	if (pid < 0 || !comm || !comm[0])
		return 0;
	if (swt_map_get(&ing->task_index, (uint64_t)pid, 0, &idx)) {
		if (strncmp(ing->tasks[idx].comm, comm, SWT_COMM_LEN))
			snprintf(ing->tasks[idx].comm, SWT_COMM_LEN, "%s", comm);
		return 0;
	}
	if (swt_grow((void **)&ing->tasks, &ing->cap_tasks, ing->nr_tasks + 1, sizeof(*ing->tasks)))
		return -SWT_ENOMEM;
	ing->tasks[ing->nr_tasks].pid = pid;
	snprintf(ing->tasks[ing->nr_tasks].comm, SWT_COMM_LEN, "%.*s", SWT_COMM_LEN - 1, comm);
	return swt_map_put(&ing->task_index, (uint64_t)pid, 0, ing->nr_tasks++);
}

static int note_fault(struct swt_ingest *ing, int32_t pid, int64_t id, int64_t address)
{
	uint64_t fi;

	if (!swt_map_get(&ing->fault_index, (uint64_t)pid, 0, &fi)) {
		if (swt_grow((void **)&ing->last_faults, &ing->cap_last_faults,
			     ing->nr_last_faults + 1, sizeof(*ing->last_faults)))
			return -SWT_ENOMEM;
		fi = ing->nr_last_faults++;
		if (swt_map_put(&ing->fault_index, (uint64_t)pid, 0, fi))
			return -SWT_ENOMEM;
	}
	ing->last_faults[fi].id = id;
	ing->last_faults[fi].address = address;
	ing->last_faults[fi].source = ing->source_id;
	return 0;
}

static int count_name(struct swt_ingest *ing, const struct swt_event *ev)
{
	struct name_count *n;

	if (!ev->name)
		return 0;
	if (swt_grow((void **)&ing->names, &ing->cap_names, (size_t)ev->name_id + 1,
		     sizeof(*ing->names)))
		return -SWT_ENOMEM;
	n = &ing->names[ev->name_id];
	if (!n->name) {
		n->system = swt_strdup(ev->system ? ev->system : "");
		n->name = swt_strdup(ev->name);
		if (!n->system || !n->name)
			return -SWT_ENOMEM;
	}
	if (ev->name_id >= ing->max_name_id)
		ing->max_name_id = ev->name_id + 1;
	n->count++;
	return 0;
}

static const char *probe_kind_name(uint32_t kind)
{
	switch (kind) {
	case SWT_PROBE_FAULT: return "fault";
	case SWT_PROBE_READ: return "read";
	case SWT_PROBE_RA_HIT: return "ra_hit";
	case SWT_PROBE_SWAPOUT: return "swapout";
	default: return "unknown";
	}
}

int swt_ingest_ended_on_error(const struct swt_ingest *ing)
{
	return ing->ended_on_error;
}

int swt_ingest_event(void *ctx, const struct swt_event *ev)
{
	struct swt_ingest *ing = ctx;
	int ret = 0;

	if (ev->type == SWT_EV_COMM)
		return note_task(ing, ev->pid, ev->comm) ? swt_error(&ing->err, SWT_ENOMEM, "out of memory") : 0;
	if (ev->type == SWT_EV_LOST) {
		ing->src_lost = swt_add_sat(ing->src_lost, ev->lost.count > 0 ? ev->lost.count : 1);
		return 0;
	}
	ing->src_events++;
	if (ev->ts < ing->first_ns)
		ing->first_ns = ev->ts;
	if (ev->ts > ing->last_ns)
		ing->last_ns = ev->ts;
	if (count_name(ing, ev) || note_task(ing, ev->pid, ev->comm))
		return swt_error(&ing->err, SWT_ENOMEM, "out of memory");

	switch (ev->type) {
	case SWT_EV_BLOCK:
		ret = on_block(ing, ev);
		if (ret < 0 && ing->err.code)
			return ret;
		break;
	case SWT_EV_FAULT: {
		struct swt_row_fault row = {
			.id = ++ing->next_fault_id, .ts = (int64_t)ev->ts, .cpu = or_null(ev->cpu),
			.pid = or_null(ev->pid), .address = (int64_t)ev->fault.address,
			.ip = (int64_t)ev->fault.ip, .error_code = (int64_t)ev->fault.error_code,
		};
		ret = swt_writer_put(ing->w, SWT_ROW_FAULT, &row);
		if (!ret && ev->pid >= 0)
			ret = note_fault(ing, ev->pid, row.id, row.address);
		if (ing->fault_source != ing->source_id)
			ing->fault_source = ing->fault_source ? -1 : ing->source_id;
		break;
	}
	case SWT_EV_RECLAIM_WRITE: {
		struct swt_row_reclaim row = {
			.ts = (int64_t)ev->ts, .cpu = or_null(ev->cpu), .pid = or_null(ev->pid),
			.pfn = (int64_t)ev->reclaim.pfn, .flags = ev->reclaim.flags,
		};
		ret = swt_writer_put(ing->w, SWT_ROW_RECLAIM, &row);
		break;
	}
	case SWT_EV_SWAP_PROBE: {
		struct swt_row_probe row = {
			.ts = (int64_t)ev->ts, .cpu = or_null(ev->cpu), .pid = or_null(ev->pid),
			.area_id = ev->probe.swap_type, .slot = (int64_t)ev->probe.offset,
			.address = ev->probe.address ? (int64_t)ev->probe.address : SWT_NULL,
			.kind = probe_kind_name(ev->probe.kind),
		};
		ret = swt_writer_put(ing->w, SWT_ROW_PROBE, &row);
		break;
	}
	default: {
		struct swt_row_event row = {
			.source_id = ing->source_id, .ts = (int64_t)ev->ts, .cpu = or_null(ev->cpu),
			.pid = or_null(ev->pid), .system = ev->system ? ev->system : "",
			.name = ev->name ? ev->name : "", .info = ev->info,
		};
		ret = swt_writer_put(ing->w, SWT_ROW_EVENT, &row);
		break;
	}
	}
	if (ret < 0 && !ing->err.code) {
		if (ret == -SWT_ENOMEM)
			swt_error(&ing->err, SWT_ENOMEM, "out of memory");
		else
			writer_failed(ing, &ing->err, ret);
	}
	return ret;
}

/* ---- sources -------------------------------------------------------------- */

int swt_ingest_begin_source(struct swt_ingest *ing, const struct swt_source_info *info,
			    struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret;

	/* the writer thread owns the connection until it has caught up */
	ret = swt_writer_sync(ing->w);
	if (ret)
		return writer_failed(ing, err, ret);
	/*
	 * nr_sources counts only sources whose row and path slot exist:
	 * swt_ingest_free() frees that many paths.
	 */
	if (swt_grow((void **)&ing->source_paths, &ing->cap_source_paths,
		     (size_t)ing->nr_sources + 1, sizeof(char *)))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	ret = swt_store_prepare(ing->st,
				"INSERT INTO source (id, path, format, version, byte_order, cpus)"
				" VALUES (?,?,?,?,?,?)", &s, err);
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, ing->nr_sources + 1);
	sqlite3_bind_text(s, 2, info->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, info->format, -1, SQLITE_TRANSIENT);
	swt_bind_int(s, 4, info->version ? info->version : SWT_NULL);
	if (info->byte_order)
		sqlite3_bind_text(s, 5, info->byte_order, -1, SQLITE_TRANSIENT);
	swt_bind_int(s, 6, info->cpus ? info->cpus : SWT_NULL);
	if (sqlite3_step(s) != SQLITE_DONE)
		ret = swt_store_sql_error(ing->st, err, "insert source");
	sqlite3_finalize(s);
	if (ret)
		return ret;
	ing->source_id = ++ing->nr_sources;
	ing->source_paths[ing->nr_sources - 1] = swt_strdup(info->path);
	ing->source_path = ing->source_paths[ing->nr_sources - 1];
	if (!ing->source_path)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	ing->in_source = 1;
	ing->src_events = ing->src_lost = 0;
	ing->max_name_id = 0;
	for (size_t i = 0; i < ing->cap_names; i++) {
		free(ing->names[i].system);
		free(ing->names[i].name);
		ing->names[i].system = ing->names[i].name = NULL;
		ing->names[i].count = 0;
	}
	return 0;
}

int swt_ingest_update_source(struct swt_ingest *ing, const struct swt_source_info *info,
			     struct swt_err *err)
{
	sqlite3_stmt *s;
	int ret = swt_writer_sync(ing->w);

	if (info->clock && info->clock[0] && !ing->clock[0])
		snprintf(ing->clock, sizeof(ing->clock), "%s", info->clock);
	if (ret)
		return writer_failed(ing, err, ret);
	ret = swt_store_prepare(ing->st,
				"UPDATE source SET version = ?, byte_order = ?, cpus = ? WHERE id = ?",
				&s, err);
	if (ret)
		return ret;
	swt_bind_int(s, 1, info->version ? info->version : SWT_NULL);
	if (info->byte_order)
		sqlite3_bind_text(s, 2, info->byte_order, -1, SQLITE_TRANSIENT);
	swt_bind_int(s, 3, info->cpus ? info->cpus : SWT_NULL);
	sqlite3_bind_int64(s, 4, ing->source_id);
	if (sqlite3_step(s) != SQLITE_DONE)
		ret = swt_store_sql_error(ing->st, err, "update source version");
	sqlite3_finalize(s);
	return ret;
}

/* Write out everything still in flight at the end of a source. */
static int flush_in_flight(struct swt_ingest *ing)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < ing->used_reqs && !ret; i++)
		if (ing->reqs[i].live)
			ret = emit_request(ing, (int32_t)i);
	for (i = 0; i < ing->used_bios && !ret; i++)
		if (ing->bios[i].live)
			ret = emit_bio(ing, (int32_t)i, SWT_NULL);
	while (ing->nr_plugs && !ret) {
		struct swt_row_block_misc row;

		ret = plug_take(ing, ing->nr_plugs - 1, &row);
		if (!ret)
			ret = swt_writer_put(ing->w, SWT_ROW_BLOCK_MISC, &row);
	}
	swt_map_release(&ing->pending);
	swt_map_release(&ing->open_start);
	swt_map_release(&ing->open_end);
	swt_map_release(&ing->inflight);
	if (swt_map_init(&ing->pending, 1024) || swt_map_init(&ing->open_start, 256) ||
	    swt_map_init(&ing->open_end, 256) || swt_map_init(&ing->inflight, 256))
		return -SWT_ENOMEM;
	ing->used_bios = ing->used_reqs = 0;
	ing->free_bio = ing->free_req = NONE;
	return ret;
}

int swt_ingest_end_source(struct swt_ingest *ing, struct swt_err *err)
{
	sqlite3_stmt *s = NULL;
	uint32_t i;
	int ret;

	ret = flush_in_flight(ing);
	if (ret == -SWT_ENOMEM)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (!ret)
		ret = swt_writer_sync(ing->w);
	if (ret)
		return writer_failed(ing, err, ret);
	ret = swt_store_prepare(ing->st,
				"INSERT INTO event_count (source_id, system, name, count) VALUES (?,?,?,?)"
				" ON CONFLICT DO UPDATE SET count = count + excluded.count", &s, err);
	if (ret)
		return ret;
	for (i = 0; i < ing->max_name_id && !ret; i++) {
		struct name_count *n = &ing->names[i];

		if (!n->name || !n->count)
			continue;
		sqlite3_bind_int64(s, 1, ing->source_id);
		sqlite3_bind_text(s, 2, n->system, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, n->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, n->count);
		if (sqlite3_step(s) != SQLITE_DONE)
			ret = swt_store_sql_error(ing->st, err, "insert event_count");
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	if (ret)
		return ret;
	ret = swt_store_prepare(ing->st, "UPDATE source SET events = ?, lost_events = ? WHERE id = ?",
				&s, err);
	if (ret)
		return ret;
	sqlite3_bind_int64(s, 1, ing->src_events);
	sqlite3_bind_int64(s, 2, ing->src_lost);
	sqlite3_bind_int64(s, 3, ing->source_id);
	if (sqlite3_step(s) != SQLITE_DONE)
		ret = swt_store_sql_error(ing->st, err, "update source");
	sqlite3_finalize(s);
	ing->lost_total = swt_add_sat(ing->lost_total, ing->src_lost);
	ing->in_source = 0;
	return ret;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* "swap area PATH (MAJ:MIN)", or "swap area MAJ:MIN" when it has no path. */
static void area_name(const struct swt_layout_area *a, char *buf, size_t len)
{
	char dev[32];

	swt_dev_format(a->dev, dev, sizeof(dev));
	if (a->meta && a->meta->path)
		snprintf(buf, len, "swap area %s (%s)", a->meta->path, dev);
	else
		snprintf(buf, len, "swap area %s", dev);
}

/* Where the stated areas on dev lie, for a message. */
static void dev_extent(const struct swt_layout *l, uint32_t dev, char *buf, size_t len)
{
	const struct swt_layout_area *one = NULL;
	size_t areas = 0, extents = 0;

	for (size_t i = 0; i < l->nr_areas; i++)
		if (l->areas[i].dev == dev) {
			one = &l->areas[i];
			areas++;
			extents += one->nr_extents;
		}
	if (areas == 1 && extents == 1) {
		const struct swt_meta_extent *e = &one->extents[0];

		/* an area of unknown size reaches to the device's end */
		if (one->meta && one->meta->slots <= 0 && !one->meta->nr_extents)
			snprintf(buf, len, "from sector %llu", (unsigned long long)e->start_sector);
		else
			snprintf(buf, len, "sectors %llu-%llu", (unsigned long long)e->start_sector,
				 (unsigned long long)(e->start_sector +
						      e->nr_slots * l->sectors_per_page - 1));
	} else if (areas == 1) {
		snprintf(buf, len, "%zu extents", extents);
	} else {
		snprintf(buf, len, "%zu areas, %zu extents", areas, extents);
	}
}

/*
 * A stated layout that does not fit the trace is said, not failed: the
 * user may know better, but an analysis of nothing is no answer.  A stated
 * area whose device had no swap-sized I/O, with the devices that had some
 * and no stated area (--swap 8:0 for a trace of 7:0); swap-sized I/O on an
 * area's device that no area there holds (slots= too small, start= past
 * it), counted.
 */
/* Devices with I/O, those with no stated area or all, as "7:0, 8:16": how many. */
static size_t dev_list(struct swt_ingest *ing, const uint32_t *devs, size_t nr_devs,
		       int unstated_only, char *buf, size_t len)
{
	size_t n = 0, count = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nr_devs; i++) {
		char dev[32];

		if (unstated_only && dev_use(ing, devs[i]))
			continue;
		swt_dev_format(devs[i], dev, sizeof(dev));
		if (count++ < 4)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", dev);
		else if (count == 5)
			snprintf(buf + n, len - n, " and more");
		n = SWT_MIN(n, len - 1);
	}
	return count;
}

static void warn_layout_fit(struct swt_ingest *ing, const uint32_t *devs, size_t nr_devs)
{
	const struct swt_layout *l = &ing->layout;
	char msg[1024], name[300], unstated[200], all[200];
	int unstated_said = 0;
	size_t j, nr_unstated;

	if (!ing->warn || l->assumed)
		return;
	dev_list(ing, devs, nr_devs, 0, all, sizeof(all));
	nr_unstated = dev_list(ing, devs, nr_devs, 1, unstated, sizeof(unstated));
	for (size_t i = 0; i < l->nr_areas; i++) {
		const struct dev_use *d = dev_use(ing, l->areas[i].dev);

		/* I/O on its device that it did not get is counted below */
		if (ing->area_pages[i] || d->pages[0] || d->pages[1])
			continue;
		area_name(&l->areas[i], name, sizeof(name));
		for (j = 0; j < nr_devs && devs[j] != l->areas[i].dev; j++)
			;
		if (j < nr_devs)
			/* its device had I/O, none of it a page: "got no I/O ... is on 7:0" said both */
			snprintf(msg, sizeof(msg), "%s got no swap I/O: the block I/O on its device is "
				 "not in pages of %u bytes (the capture's page size: is it right?)", name,
				 l->sectors_per_page * 512);
		else if (nr_unstated)
			snprintf(msg, sizeof(msg), "%s got no I/O; the trace's block I/O is on %s, "
				 "where no swap area is stated", name, unstated);
		else if (nr_devs)
			snprintf(msg, sizeof(msg), "%s got no I/O (the trace's block I/O is on %s)",
				 name, all);
		else
			snprintf(msg, sizeof(msg), "%s got no I/O: the trace holds no block I/O", name);
		unstated_said |= j == nr_devs && nr_unstated;
		ing->warn(ing->warn_ctx, msg);
	}
	/*
	 * Block I/O on a device no area is stated on is not swap: said when
	 * every stated area got its own (else said above), as one device
	 * left out of a multi-device capture's metadata loses its swap-ins
	 */
	if (!unstated_said && nr_unstated) {
		snprintf(msg, sizeof(msg), "the block I/O on %s, where no swap area is stated, is "
			 "not counted as swap (a swap device the metadata leaves out?)", unstated);
		ing->warn(ing->warn_ctx, msg);
	}
	for (size_t u = 0; u < ing->nr_uses; u++) {
		const struct dev_use *d = &ing->uses[u];
		char dev[32], where[80], in[80] = "", out[80] = "";
		size_t areas = 0;

		if (!d->outside[0] && !d->outside[1])
			continue;
		for (size_t i = 0; i < l->nr_areas; i++)
			areas += l->areas[i].dev == d->dev;
		swt_dev_format(d->dev, dev, sizeof(dev));
		dev_extent(l, d->dev, where, sizeof(where));
		if (d->pages[0])
			snprintf(in, sizeof(in), "%lld of %lld pages read", (long long)d->outside[0],
				 (long long)d->pages[0]);
		if (d->pages[1])
			snprintf(out, sizeof(out), "%lld of %lld %s", (long long)d->outside[1],
				 (long long)d->pages[1], in[0] ? "written" : "pages written");
		snprintf(msg, sizeof(msg), "%s%s%s on %s lie outside its stated swap area%s (%s), so "
			 "are not counted as swap: other I/O on the device, or a wrong start or size?",
			 in, in[0] && out[0] ? " and " : "", out, dev, areas > 1 ? "s" : "", where);
		ing->warn(ing->warn_ctx, msg);
	}
}

int swt_ingest_finish(struct swt_ingest *ing, const struct swt_meta *meta,
		      const char *capture_name, struct swt_err *err)
{
	struct swt_capture_facts cf = { 0 };
	uint32_t *devs = NULL;
	int32_t *pids = NULL;
	const char **comms = NULL;
	size_t nr = 0, i;
	int ret;

	if (ing->in_source) {
		ret = swt_ingest_end_source(ing, err);
		if (ret)
			return ret;
	}
	ret = swt_writer_finish(ing->w, err);
	ing->w = NULL;
	if (ret)
		return ret;
	ing->rows_ns = swt_now_ns() - ing->t_start;

	devs = calloc(ing->devs.len + 1, sizeof(*devs));
	pids = calloc(ing->nr_tasks + 1, sizeof(*pids));
	comms = calloc(ing->nr_tasks + 1, sizeof(*comms));
	if (!devs || !pids || !comms) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < ing->devs.cap; i++)
		if (ing->devs.slots[i].used)
			devs[nr++] = (uint32_t)ing->devs.slots[i].a;
	qsort(devs, nr, sizeof(*devs), cmp_u32);
	warn_layout_fit(ing, devs, nr);
	for (i = 0; i < ing->nr_tasks; i++) {
		pids[i] = ing->tasks[i].pid;
		comms[i] = ing->tasks[i].comm;
	}
	cf.name = capture_name;
	cf.clock = ing->clock[0] ? ing->clock : NULL;
	cf.layout_source = ing->layout.assumed ? "assumed" :
			   meta && meta->from_cmdline ? "cmdline" : "meta";
	cf.layout = &ing->layout;
	cf.faults_elsewhere = ing->fault_source && ing->block_sources &&
			      ing->block_sources != ing->fault_source;
	cf.page_size = (int64_t)ing->layout.sectors_per_page * 512;
	cf.first_ns = ing->first_ns;
	cf.last_ns = ing->last_ns;
	cf.lost_events = ing->lost_total;
	cf.devs = devs;
	cf.nr_devs = nr;
	cf.task_pids = pids;
	cf.task_comms = comms;
	cf.nr_tasks = ing->nr_tasks;
	ret = swt_store_write_facts(ing->st, &cf, meta, ing->warn, ing->warn_ctx, err);
	ing->facts_ns = swt_now_ns() - ing->t_start;
	if (!ret)
		ret = swt_store_exec(ing->st, "COMMIT", err);
out:
	free(devs);
	free(pids);
	free(comms);
	return ret;
}
