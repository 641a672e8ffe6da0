/*
 * Arithmetic shared by the cluster-readahead policies: the kernel's
 * adaptive window size (swapin_nr_pages, readahead-spec.md §3) and the
 * aligned cluster window (§2).
 */
#include "replay.h"

void swt_swapin_window_init(struct swt_swapin_window *w)
{
	/* from boot: the first miss reads a full window */
	w->hits = 4;
	w->prev_offset = 0;
	w->last_pages = 0;
}

unsigned swt_swapin_window_pages(struct swt_swapin_window *w, uint64_t off, unsigned max)
{
	unsigned h = w->hits, pages;

	w->hits = 0;
	/* slot numbers only: the device is not part of the adjacency test */
	pages = swt_ra_window_size(h, off == w->prev_offset + 1 || off + 1 == w->prev_offset, max,
				   w->last_pages);
	if (h == 0)
		w->prev_offset = off;
	w->last_pages = pages;
	return pages;
}

void swt_cluster_window(const struct swt_fault_info *f, unsigned pages, struct swt_window *win)
{
	uint64_t mask, first, last, n;

	win->kind = SWT_WINDOW_SLOTS;
	win->size = pages;
	win->count = 0;
	if (pages <= 1) {
		win->list[win->count++] = f->slot;
		return;
	}
	mask = (uint64_t)pages - 1;
	first = f->slot & ~mask;
	last = f->slot | mask;
	if (first == 0)
		first = 1;	/* slot 0 is the swap header */
	if (f->area_slots && last >= f->area_slots)
		last = f->area_slots - 1;
	if (last < first)
		return;
	n = last - first + 1;
	if (n > win->capacity)
		n = win->capacity;
	/* a plain fill: this runs on every miss of the cluster policies */
	for (uint64_t i = 0; i < n; i++)
		win->list[i] = first + i;
	win->count = (uint32_t)n;
}
