/*
 * The traced swap layout, as ingest uses it: which device sectors are which
 * swap slots.  Built from the capture metadata or --swap statements; with
 * neither, every device that shows I/O becomes a whole-device area from
 * sector 0 (areas numbered in order of first appearance).
 */
#ifndef SWT_LAYOUT_H
#define SWT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "meta.h"

struct swt_layout_area {
	int64_t id;		/* swap type: index in /proc/swaps order */
	uint32_t dev;
	const struct swt_meta_area *meta;	/* NULL for an assumed area */
	struct swt_meta_extent *extents;	/* ascending start_sector */
	size_t nr_extents;
	int synchronous;
};

struct swt_layout {
	struct swt_layout_area *areas;
	size_t nr_areas, cap_areas;
	int assumed;		/* no areas were stated */
	uint32_t sectors_per_page;
};

/* meta may be NULL.  Areas without a device number are skipped (warn_skipped counts them). */
int swt_layout_init(struct swt_layout *l, const struct swt_meta *meta, size_t *skipped);
void swt_layout_release(struct swt_layout *l);

/*
 * Map a page-sized I/O at (dev, sector) to its swap area and slot.
 * Returns 1 when it is swap traffic (aligned, inside an area, not the
 * header slot 0), 0 otherwise, -SWT_ENOMEM when an assumed area could not
 * be added.
 */
int swt_layout_map(struct swt_layout *l, uint32_t dev, uint64_t sector,
		   const struct swt_layout_area **area, int64_t *slot);

#endif
