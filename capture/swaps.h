/*
 * The host's swap areas as a capture records them: the rows of /proc/swaps
 * resolved to the block device whose I/O the block tracepoints show (the
 * whole disk, with the partition's start sector), and for swap files the
 * slot -> sector extents from FIEMAP.  readahead-spec.md §7 gives the
 * mapping rules.
 *
 * Lookups under /proc and /sys go through a root prefix ("" on a live
 * host) so tests can point them at a fixture tree.
 */
#ifndef SWT_CAPTURE_SWAPS_H
#define SWT_CAPTURE_SWAPS_H

#include <stddef.h>
#include <stdint.h>

#include "meta.h"
#include "swaptrace/error.h"

struct swt_swap_area {
	char *path;		/* /proc/swaps Filename, unescaped */
	char *type;		/* "partition" or "file" */
	int64_t size_kib, used_kib, priority;
	/* resolved by swt_swap_resolve(); dev 0 when it could not be */
	uint32_t dev;		/* whole-disk dev_t the block layer reports */
	char disk[64];		/* its name under /sys/block ("loop0", "sda") */
	uint64_t start_sector;	/* partition start; 0 for whole disks and files */
	int rotational, synchronous;	/* -1 unknown */
	/* the disk's queue limits: a read request's largest size and segments; -1 unknown */
	int64_t max_sectors_kb, max_segments;
	int64_t slots;		/* usable pages + the header slot 0 */
	struct swt_meta_extent *extents;	/* swap files only */
	size_t nr_extents;
	char *unresolved;	/* why dev is 0, or NULL */
};

/*
 * Parse /proc/swaps text into areas (in swap-type order, the header line
 * skipped).  Pure.  Free with swt_swap_areas_free().
 */
int swt_swap_parse(const char *text, struct swt_swap_area **out, size_t *n,
		   struct swt_err *err);
void swt_swap_areas_free(struct swt_swap_area *a, size_t n);

/*
 * Resolve an area: device numbers from stat(), partition start, rotational
 * and synchronous I/O from sysfs under root, extents for files.  A swap
 * file on a filesystem without one backing block device (btrfs, overlay)
 * is left unresolved with the reason in a->unresolved: returns 0 then.
 */
int swt_swap_resolve(const char *root, struct swt_swap_area *a, unsigned page_size,
		     struct swt_err *err);

/* A FIEMAP extent, bytes. */
struct swt_fiemap_extent {
	uint64_t logical, physical, length;
};

/*
 * Swap slots of a swap file from its extents (sorted by logical offset),
 * as the kernel's swap activation lays them out: extents that continue
 * each other on disk are merged, the file is cut at its size rounded down
 * to a page, each extent is rounded inward to page boundaries on disk, and
 * the usable pages are numbered consecutively from slot 0 (the header),
 * up to max_slots.  Sectors are 512-byte units plus sector_offset (the
 * partition start).  Pure.  *out is malloc'ed (caller frees); returns the
 * number of slots laid out, or a negative error.
 */
int64_t swt_swap_file_extents(const struct swt_fiemap_extent *in, size_t n, uint64_t file_size,
			      unsigned page_size, uint64_t max_slots, uint64_t sector_offset,
			      struct swt_meta_extent **out, size_t *nout);

#endif
