/*
 * What-if swap layouts: a model of the kernel's swap-slot allocator by
 * kernel era (allocator.c), layout specs such as "4" or "2:ssd:era=4.11",
 * and the re-placement of a capture's swapped-out pages onto such a layout
 * (relayout.c).  The result is an ordinary struct swt_replay_input that
 * swt_replay_run() replays unchanged.  docs/layouts.md describes the model.
 */
#ifndef SWT_SWAPSIM_H
#define SWT_SWAPSIM_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"

/* ---- the slot allocator ------------------------------------------------- */

/* How the kernel spreads allocations over equal-priority devices. */
enum swt_swapsim_era {
	SWT_SWAPSIM_ERA_3_16,	/* 3.16-4.10: the next device on every page */
	SWT_SWAPSIM_ERA_4_11,	/* 4.11-6.14: per-CPU caches of 64 slots from one device */
	SWT_SWAPSIM_ERA_6_15,	/* >= 6.15: SSD per-CPU cluster until used up; HDD every page */
};

#define SWT_SWAPSIM_BATCH 64		/* SWAP_BATCH: the 4.11-6.14 per-CPU slot cache */
#define SWT_SWAPSIM_CLUSTER 512		/* SWAPFILE_CLUSTER with THP swap (else 256) */

struct swt_swapsim_device {
	uint64_t slots;		/* pages incl. the header slot 0; at least 2 */
	int64_t priority;	/* higher is used first; equal ones round-robin */
	int rotational;		/* 1: HDD, 0: SSD (non-rotational) */
	uint64_t used_at_start;	/* pages it already holds: slots 1..used_at_start are taken */
};

struct swt_swapsim_config {
	enum swt_swapsim_era era;
	unsigned cluster_slots;	/* slots per cluster, a power of two >= 2 */
	unsigned batch;		/* 4.11-6.14 slot cache size; 0 means SWT_SWAPSIM_BATCH */
	unsigned ncpus;		/* CPUs that evict (per-CPU caches and clusters); >= 1 */
	const struct swt_swapsim_device *devs;	/* copied by swt_swapsim_alloc() */
	size_t ndevs;
};

struct swt_swapsim;

/*
 * A fresh allocator: every slot free, devices in swapon order (index order)
 * within each priority.  All memory is taken here; slot_get/slot_put never
 * allocate.  Freed with swt_swapsim_free() (NULL is a no-op).
 */
int swt_swapsim_alloc(const struct swt_swapsim_config *cfg, struct swt_swapsim **out,
		      struct swt_err *err);
void swt_swapsim_free(struct swt_swapsim *s);

/*
 * Allocate one slot for a page evicted on cpu (taken modulo ncpus): 0 and
 * *dev (device index) and *slot set, or -SWT_ESTATE when every device is full.
 */
int swt_swapsim_slot_get(struct swt_swapsim *s, unsigned cpu, uint32_t *dev, uint64_t *slot);

/* Free a slot handed out by slot_get: 0, or -SWT_EUSAGE when it was not allocated. */
int swt_swapsim_slot_put(struct swt_swapsim *s, uint32_t dev, uint64_t slot);

/* Slots of device dev in use (handed out, or held in a per-CPU cache). */
uint64_t swt_swapsim_used(const struct swt_swapsim *s, uint32_t dev);

/*
 * The era of a kernel release ("6.18.44-fc-v657", "5.10", "4.11"): 0, or
 * -SWT_EUSAGE when text is not a release.  Releases before 3.16 map to the
 * 3.16 era (they too rotate on every page).
 */
int swt_swapsim_era_parse(const char *text, enum swt_swapsim_era *era);
/*
 * The same for an era the user names (--layout era=REL): a release before
 * 3.16, whose allocator was not read, is -SWT_EUSAGE too rather than
 * quietly the 3.16 one.
 */
int swt_swapsim_era_parse_given(const char *text, enum swt_swapsim_era *era);
const char *swt_swapsim_era_name(enum swt_swapsim_era era);	/* "3.16-4.10"... */

/* ---- layouts ------------------------------------------------------------ */

/*
 * A layout spec parsed against the capture it will be applied to (the
 * grammar is in docs/layouts.md and `swaptrace replay --help`).  Embedded by
 * value: swt_placement_init() / swt_placement_release().
 */
struct swt_placement {
	char *spec;			/* canonical spelling (owned); the run's layout name */
	int traced;			/* 1: the recorded placement, nothing re-placed */
	struct swt_swapsim_device *devs;	/* owned; NULL when traced */
	size_t ndevs;
	enum swt_swapsim_era era;
	int era_assumed;		/* the capture names no kernel: newest era taken */
	unsigned cluster_slots;
	unsigned ncpus;
	char description[256];		/* one line for people */
};

int swt_placement_init(struct swt_placement *p, const char *spec,
		       const struct swt_replay_input *traced, struct swt_err *err);
void swt_placement_release(struct swt_placement *p);

/*
 * The canonical spelling of a layout spec into *out (malloc'd): the one
 * spelling replay stores as run.layout and prints, so that the same layout
 * given in other spellings ("04", "4:prio=-2:ssd" for "4:ssd:prio=-2",
 * "131072p" for "512M", "devices=1G,1G" for "2:size=1G") is known as the
 * same one (docs/layouts.md).  Only the capture's page size is needed
 * (sizes in pages), so a stored name reads back without the capture; a
 * spec with "spread" keeps it, last.
 * -SWT_EUSAGE for a spec that does not parse (whatever the capture).
 */
int swt_layout_canonical(const char *spec, uint32_t page_shift, char **out, struct swt_err *err);

/*
 * Readahead on several equal-priority devices depends on the devices'
 * relative slot offsets, which incidental events set (docs/layouts.md).  A
 * spec with the option "spread" ("4:spread", "2:ssd:spread") stands for
 * the same layout at every combination of 0 or 1 pages already used per
 * device: 2^N specs "BASE:used=b0,b1,...", in counting order (device 0's
 * bit lowest).  Any other spec expands to itself.  Each in its canonical
 * spelling (swt_layout_canonical).  *specs (n entries) is freed with
 * swt_layout_specs_free().  -SWT_EUSAGE for spread with used=,
 * on the traced layout, or on more than SWT_LAYOUT_SPREAD_MAX_DEVICES.
 */
#define SWT_LAYOUT_SPREAD_MAX_DEVICES 6
int swt_layout_expand(const char *spec, const struct swt_replay_input *traced, char ***specs,
		      size_t *n, struct swt_err *err);
void swt_layout_specs_free(char **specs, size_t n);

/* How a re-placement went, and how close it came to the recorded placement. */
struct swt_placement_stats {
	uint64_t outs;		/* swap-outs placed */
	uint64_t pretrace;	/* pages faulted but written before the trace began */
	uint64_t unseen;	/* slots below them no fault names, taken as held */
	uint64_t freed;		/* simulated slots freed (their traced slot was written again) */
	uint64_t in_place;	/* swap-outs of a page back to the slot it kept */
	uint64_t same_device;	/* swap-outs on the device whose index is the traced area's */
	uint64_t same_slot;	/* ... and on the traced slot number */
	uint64_t usable;	/* the devices' slots that can hold a page */
	uint64_t peak_used;	/* the most of them holding a page at once, used= ones included */
};

/*
 * Re-place the swapped-out pages of in onto layout p (not traced): the
 * swap-out stream in time order is the allocation order; each swap-out
 * takes a slot from the era's allocator on the CPU that wrote it, every
 * fault on that page (fault.out) moves with it, and a simulated slot is
 * freed when the page's traced slot is written again.  Pages faulted with
 * no swap-out in the trace (written before it began) are placed first, in
 * ascending traced slot order.  *out is a new input with one area per
 * simulated device ("sim0"...), freed with swt_replay_input_free(); stats
 * may be NULL.  -SWT_EUSAGE when the layout is too small for the pages.
 */
int swt_placement_apply(const struct swt_replay_input *in, const struct swt_placement *p,
			struct swt_replay_input **out, struct swt_placement_stats *stats,
			struct swt_err *err);

#endif
