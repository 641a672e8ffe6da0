/*
 * swaptrace info's block tables: blkparse's per-device counts and, with
 * --latency, btt's latency and merge tables, read from a database's bio,
 * request and block_misc tables (info-block.c).  cmd-info.c prints them.
 */
#ifndef SWT_CLI_INFO_BLOCK_H
#define SWT_CLI_INFO_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "util.h"

/* btt's stages, in the order btt prints them */
enum { Q2QDM, Q2CDM, Q2Q, Q2G, G2I, Q2M, I2D, M2D, D2C, Q2C, NR_STAGES };
extern const char *const info_stage_names[NR_STAGES];

struct stage_stats {
	int64_t n;
	double min, avg, max;	/* seconds (ns while they are summed) */
	double sum_ns;		/* while they are summed */
};

/* [dir][kind]: dir 0 read, 1 write; kind queued, dispatched, completed, merges, requeues */
struct io_counts {
	int64_t n[2][5], sectors[2][5];
};

enum { QUEUED, DISPATCHED, COMPLETED, MERGES, REQUEUES };

struct dev_counts {
	uint32_t dev;
	char name[32];
	char path[256];
	/* blkparse's two summaries: file-system I/O, and passthrough (PC) requests */
	struct io_counts fs, pc;
	/* --latency: btt's tables */
	struct stage_stats stage[NR_STAGES];
	int64_t blk_queued, blk_dispatched, blk_min, blk_max, blk_total;
};

/*
 * The devices with block events, in device order, with their counts; with
 * latency, btt's tables too: each device's, and all[NR_STAGES], btt's
 * all-devices table.  *devs is the caller's to free.
 */
int info_block_load(struct swt_store *st, int latency, struct dev_counts **devs, size_t *nr,
		    struct stage_stats *all, struct swt_err *err);

#endif
