/*
 * Arithmetic shared by the cluster-readahead policies: the kernel's
 * adaptive window size (swapin_nr_pages, readahead-spec.md §3; its
 * per-miss step is inline in replay.h) and the aligned cluster window
 * (§2) as a list.
 */
#include "replay.h"

void swt_swapin_window_init(struct swt_swapin_window *w)
{
	/* from boot: the first miss reads a full window */
	w->hits = 4;
	w->prev_offset = 0;
	w->last_pages = 0;
}

void swt_cluster_window(const struct swt_fault_info *f, unsigned pages, struct swt_window *win)
{
	uint64_t first;
	uint32_t n = swt_cluster_block(f->slot, f->area_slots, pages, win->capacity, &first);

	win->kind = SWT_WINDOW_SLOTS;
	win->size = pages;
	/* a plain fill: the engine's fast path takes the block itself (replay.h) */
	for (uint32_t i = 0; i < n; i++)
		win->list[i] = first + i;
	win->count = n;
}
