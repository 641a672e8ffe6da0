/*
 * Host facts of a capture: the metadata file (meta.txt) that swaptrace
 * capture writes and that the shared captures carry, and the --swap
 * command-line statements of a swap layout.  Format: docs/capture-format.md.
 */
#ifndef SWT_META_H
#define SWT_META_H

#include <stdint.h>
#include <stdio.h>

#include "swaptrace/error.h"

#define SWT_META_UNKNOWN INT64_MIN

/* the kernel's swap priorities (swap_info_struct.prio, a signed short) */
#define SWT_MIN_SWAP_PRIO (-32768)
#define SWT_MAX_SWAP_PRIO 32767

struct swt_meta_extent {
	uint64_t first_slot, nr_slots, start_sector;
};

struct swt_meta_area {
	char *path;
	uint32_t dev;		/* kernel dev_t; 0 when unknown */
	char *type;		/* "partition", "file" */
	int64_t priority;
	int64_t rotational;	/* 0/1, SWT_META_UNKNOWN */
	int64_t synchronous;
	uint64_t start_sector;
	int64_t slots;		/* incl. header slot 0 */
	int64_t size_kib, used_kib;
	struct swt_meta_extent *extents;
	size_t nr_extents;
	uint64_t extents_end;	/* past the highest slot of the extents so far */
	int64_t swap_type;	/* its place in /proc/swaps, swap_unmapped lines counted; -1 unknown */
	unsigned line;		/* the metadata file's swap_device line that gave it; 0 for others */
	unsigned dev_line;	/* its "dev PATH MAJ:MIN" line (the shared captures'); 0 for none */
};

struct swt_meta_vmstat {
	char *name;
	int64_t before, after, delta;	/* SWT_META_UNKNOWN where absent */
	unsigned before_line, after_line, delta_line;	/* where the file gave them; 0: not given */
};

struct swt_meta_fact {
	char *section, *key, *value;
	unsigned line;		/* in the metadata file, for errors found after its parse */
};

struct swt_meta {
	char *path;			/* file it came from, NULL for cmdline only */
	char *kernel;
	int64_t page_size, ncpus, page_cluster, vma_ra_enabled;
	int64_t mem_total_kib, mem_limit_bytes, working_set_bytes;
	char *workload, *command, *clock, *probes;
	int64_t lost_events;		/* sum over CPUs, SWT_META_UNKNOWN if absent */
	struct swt_meta_area *areas;
	size_t nr_areas;
	int64_t swap_lines;	/* swap_device and swap_unmapped lines read so far */
	struct swt_meta_vmstat *vmstat;
	size_t nr_vmstat;
	struct swt_meta_fact *facts;
	size_t nr_facts, cap_facts;
	int from_cmdline;		/* areas were stated with --swap */
};

/* Allocate an empty meta (all unknown).  Free with swt_meta_free(). */
struct swt_meta *swt_meta_alloc(void);
void swt_meta_free(struct swt_meta *m);

/* Parse a metadata file into m (adding to what it holds). */
int swt_meta_parse_file(struct swt_meta *m, const char *path, struct swt_err *err);
int swt_meta_parse_stream(struct swt_meta *m, FILE *f, const char *name, struct swt_err *err);

/*
 * Add or replace a swap area from a --swap statement:
 *   MAJ:MIN[,start=SECTOR][,slots=N][,size=KIB][,prio=N][,rotational=0|1]
 *          [,sync=0|1][,path=P]
 * Areas stated on the command line replace all areas from files.  Slots
 * from size= (and the check of slots= against it) take m->page_size, 4 KiB
 * when unknown: set it to the metadata file's first.
 */
int swt_meta_add_swap_spec(struct swt_meta *m, const char *spec, struct swt_err *err);

/*
 * If src's areas were stated on the command line, move them into dst,
 * replacing dst's own; otherwise leave both alone.
 */
void swt_meta_move_areas(struct swt_meta *dst, struct swt_meta *src);

/* vmstat delta by name, or SWT_META_UNKNOWN. */
int64_t swt_meta_vmstat_delta(const struct swt_meta *m, const char *name);

/* 1 when the capture says its recording stopped on an error ("end error": a full disk). */
int swt_meta_ended_on_error(const struct swt_meta *m);

#endif
