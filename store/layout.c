/*
 * Sector -> swap slot mapping for ingest (see layout.h).
 */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "util.h"

#define WHOLE_DEVICE ((uint64_t)1 << 40)	/* slots when an area's size is unknown */

static int cmp_extent(const void *a, const void *b)
{
	const struct swt_meta_extent *x = a, *y = b;

	return x->start_sector < y->start_sector ? -1 : x->start_sector > y->start_sector;
}

static struct swt_layout_area *add_area(struct swt_layout *l, uint32_t dev,
					const struct swt_meta_area *m, uint64_t start,
					uint64_t slots)
{
	struct swt_layout_area *a;

	if (swt_grow((void **)&l->areas, &l->cap_areas, l->nr_areas + 1, sizeof(*l->areas)))
		return NULL;
	a = &l->areas[l->nr_areas];
	memset(a, 0, sizeof(*a));
	a->id = (int64_t)l->nr_areas;
	a->dev = dev;
	a->meta = m;
	if (m && m->nr_extents) {
		a->extents = malloc(m->nr_extents * sizeof(*a->extents));
		if (!a->extents)
			return NULL;
		memcpy(a->extents, m->extents, m->nr_extents * sizeof(*a->extents));
		a->nr_extents = m->nr_extents;
		qsort(a->extents, a->nr_extents, sizeof(*a->extents), cmp_extent);
	} else {
		a->extents = malloc(sizeof(*a->extents));
		if (!a->extents)
			return NULL;
		a->extents[0].first_slot = 0;
		a->extents[0].nr_slots = slots;
		a->extents[0].start_sector = start;
		a->nr_extents = 1;
	}
	a->synchronous = m && m->synchronous == 1;
	l->nr_areas++;
	return a;
}

/*
 * An area of unknown size ends where the next area on its device begins:
 * two partitions stated on the whole disk (--swap 8:0,start=A --swap
 * 8:0,start=B, no slots=) otherwise gave the second's I/O to the first
 * when the first was stated first, and the second got nothing.
 */
static void clip_unsized(struct swt_layout *l)
{
	for (size_t i = 0; i < l->nr_areas; i++) {
		struct swt_layout_area *a = &l->areas[i];
		uint64_t start = a->extents[0].start_sector, next = UINT64_MAX;

		if (a->extents[0].nr_slots != WHOLE_DEVICE)
			continue;
		for (size_t j = 0; j < l->nr_areas; j++) {
			uint64_t s = l->areas[j].extents[0].start_sector;

			if (j != i && l->areas[j].dev == a->dev && s > start && s < next)
				next = s;
		}
		if (next != UINT64_MAX)
			a->extents[0].nr_slots = SWT_MIN(WHOLE_DEVICE,
							 (next - start) / l->sectors_per_page);
	}
}

int swt_layout_init(struct swt_layout *l, const struct swt_meta *meta, size_t *skipped)
{
	int64_t next_id = 0;
	size_t i;

	memset(l, 0, sizeof(*l));
	*skipped = 0;
	l->sectors_per_page = meta && meta->page_size > 0 ? (uint32_t)(meta->page_size / 512) : 8;
	if (!meta || !meta->nr_areas) {
		l->assumed = 1;
		return 0;
	}
	/*
	 * Areas of swap_device lines carry their swap type; those of /proc/swaps
	 * rows and dev lines are numbered in list order.  A file with both
	 * numbers the latter after the largest swap type, so that no two share
	 * an id.
	 */
	for (i = 0; i < meta->nr_areas; i++)
		if (meta->areas[i].swap_type >= next_id)
			next_id = meta->areas[i].swap_type + 1;
	for (i = 0; i < meta->nr_areas; i++) {
		const struct swt_meta_area *m = &meta->areas[i];
		uint64_t slots = m->slots > 0 ? (uint64_t)m->slots : WHOLE_DEVICE;

		if (!m->dev) {
			(*skipped)++;
			continue;
		}
		if (!add_area(l, m->dev, m, m->start_sector, slots))
			return -SWT_ENOMEM;
		/* ids are swap types: /proc/swaps order, holes and unmapped areas included */
		l->areas[l->nr_areas - 1].id = m->swap_type >= 0 ? m->swap_type :
					       next_id ? next_id++ : (int64_t)i;
	}
	clip_unsized(l);
	return 0;
}

void swt_layout_release(struct swt_layout *l)
{
	for (size_t i = 0; i < l->nr_areas; i++)
		free(l->areas[i].extents);
	free(l->areas);
	memset(l, 0, sizeof(*l));
}

int swt_layout_map(struct swt_layout *l, uint32_t dev, uint64_t sector,
		   const struct swt_layout_area **area, int64_t *slot)
{
	uint32_t spp = l->sectors_per_page;
	size_t i;
	int found_dev = 0;

	for (i = 0; i < l->nr_areas; i++) {
		const struct swt_layout_area *a = &l->areas[i];
		size_t lo = 0, hi = a->nr_extents;

		if (a->dev != dev)
			continue;
		found_dev = 1;
		/* last extent starting at or before sector */
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (a->extents[mid].start_sector <= sector)
				lo = mid;
			else
				hi = mid;
		}
		{
			const struct swt_meta_extent *e = &a->extents[lo];
			uint64_t rel;

			if (sector < e->start_sector)
				continue;
			rel = sector - e->start_sector;
			if (rel % spp || rel / spp >= e->nr_slots)
				continue;
			*area = a;
			*slot = (int64_t)(e->first_slot + rel / spp);
			return *slot > 0;
		}
	}
	if (found_dev || !l->assumed)
		return 0;
	if (!add_area(l, dev, NULL, 0, WHOLE_DEVICE))
		return -SWT_ENOMEM;
	return swt_layout_map(l, dev, sector, area, slot);
}
