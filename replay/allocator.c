/*
 * The kernel's swap-slot allocator, modelled by era (readahead-spec.md §6;
 * mm/swapfile.c, mm/swap_slots.c): which device an evicted page goes to,
 * and which slot it takes there.
 *
 * Between devices: the kernel keeps the usable devices on a list sorted by
 * priority (swap_avail_head); taking from the head requeues that device
 * behind the others of its priority, so equal priorities round-robin and a
 * lower priority is used only when every higher one is full.  Since 4.14
 * the list holds the default (negative) priorities of a node's devices as
 * one, below every priority given (setup_swap_info: avail_lists' prio 1),
 * so on a one-node machine they round-robin too; modelled from the 4.11
 * era on (4.11-4.13 still ordered them -2, -3, ...).  How often
 * the head is taken depends on the era:
 *   3.16-4.10  for every page;
 *   4.11-6.14  for every 64 pages per CPU: a CPU's slot cache is refilled
 *              with up to 64 slots from one device (off while free swap is
 *              below 2 x 64 x CPUs, back on above 5 x 64 x CPUs);
 *   >= 6.15    SSD: a CPU keeps allocating in its current cluster and goes
 *              back to the head only when the cluster is used up; HDD
 *              (rotational): for every page.
 *
 * Within a device: slots are grouped in clusters (512 with THP swap, else
 * 256), each on one list: free (empty), nonfull (a slot was freed in it),
 * frag (in use, not full), or none (full).  A cursor -- one per device for
 * rotational devices, one per CPU per device for SSDs -- hands out
 * ascending free slots from where it stopped in its cluster, and goes
 * invalid when it runs past the end or the cluster fills.  A new cluster
 * comes from the nonfull list, then the free list, then the frag list, and
 * is scanned from its first slot.  After every allocation a cluster that is
 * not full moves to the frag list; freeing a slot moves its cluster to the
 * nonfull list, or to the free list when it empties -- even when a cursor
 * still points into it, so another CPU may pick it up and both then
 * allocate in it, as in the kernel.  A cursor whose cluster was emptied
 * restarts at its first slot.  At swapon, clusters holding an unusable slot
 * (cluster 0 with the header, a partial last cluster) start on the nonfull
 * list and the rest on the free list, both ascending.
 *
 * Simplifications (docs/layouts.md): no swap-cache reclaim inside the
 * allocator (vm_swap_full), no discard, no large folios, no 4.11-6.14
 * return cache for freed slots, and the same cluster model for rotational
 * devices in the older eras, which scanned linearly from a per-device
 * cursor instead (the same ascending order while nothing is freed).
 *
 * Everything is sized in swt_swapsim_alloc(); allocating and freeing a
 * slot never allocate memory.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "swapsim.h"
#include "util.h"

#define NIL (-1)

/* The list a cluster is on (the kernel's cluster flags). */
enum { ON_FREE = 0, ON_NONFULL, ON_FRAG, NR_LISTS, ON_FULL = NR_LISTS };

struct cluster {
	uint32_t used;		/* slots handed out */
	uint32_t usable;	/* slots that can be: header and slots past the end excluded */
	int32_t prev, next;	/* links in its list */
	uint8_t on;		/* ON_FREE, ON_NONFULL, ON_FRAG or ON_FULL (on no list) */
};

struct clist {
	int32_t head, tail;
};

struct device {
	uint64_t slots, usable, used;
	int64_t prio;
	int64_t rank;		/* prio as the avail list orders it */
	int rotational;
	uint64_t *map;		/* one bit per slot: taken (slot 0, the header, always) */
	struct cluster *cl;
	uint32_t ncl;
	struct clist lists[NR_LISTS];
	uint64_t *cur;		/* cursors, next slot to try (0: none); rotational: [1], SSD: [ncpus] */
};

struct cached {
	uint32_t dev;
	uint64_t slot;
};

struct swt_swapsim {
	enum swt_swapsim_era era;
	unsigned csize, batch, ncpus;
	struct device *dev;
	size_t ndev;
	uint32_t *order;	/* swap_avail_head: devices by priority, rotating */
	uint64_t nfree;		/* usable slots not taken, all devices */
	int32_t *cpu_dev;	/* >= 6.15: device of each CPU's SSD cluster, NIL none */
	struct cached *cache;	/* 4.11-6.14: [ncpus][batch] slot caches */
	unsigned *cache_len, *cache_pos;
	int cache_active;
};

/* ---- bitmap ------------------------------------------------------------- */

static int bit_test(const uint64_t *m, uint64_t i)
{
	return (int)((m[i >> 6] >> (i & 63)) & 1);
}

static void bit_set(uint64_t *m, uint64_t i)
{
	m[i >> 6] |= 1ull << (i & 63);
}

static void bit_clear(uint64_t *m, uint64_t i)
{
	m[i >> 6] &= ~(1ull << (i & 63));
}

/* The first clear bit in [from, end), or end. */
static uint64_t find_free(const uint64_t *m, uint64_t from, uint64_t end)
{
	while (from < end) {
		uint64_t w = ~m[from >> 6] & (~0ull << (from & 63));

		if (w) {
			uint64_t i = (from & ~63ull) + (uint64_t)__builtin_ctzll(w);

			return i < end ? i : end;
		}
		from = (from | 63) + 1;
	}
	return end;
}

/* ---- cluster lists ------------------------------------------------------ */

static void list_unlink(struct device *d, int32_t ci)
{
	struct cluster *c = &d->cl[ci];
	struct clist *l;

	if (c->on == ON_FULL)
		return;
	l = &d->lists[c->on];
	if (c->prev != NIL)
		d->cl[c->prev].next = c->next;
	else
		l->head = c->next;
	if (c->next != NIL)
		d->cl[c->next].prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NIL;
	c->on = ON_FULL;
}

/* Move a cluster to the tail of list `on` (or off every list for ON_FULL). */
static void list_move_tail(struct device *d, int32_t ci, uint8_t on)
{
	struct cluster *c = &d->cl[ci];
	struct clist *l;

	list_unlink(d, ci);
	c->on = on;
	if (on == ON_FULL)
		return;
	l = &d->lists[on];
	c->prev = l->tail;
	if (l->tail != NIL)
		d->cl[l->tail].next = ci;
	else
		l->head = ci;
	l->tail = ci;
}

/* After an allocation: full clusters leave the lists, others go to frag (relocate_cluster). */
static void relocate(struct device *d, int32_t ci)
{
	const struct cluster *c = &d->cl[ci];
	uint8_t want = c->used == c->usable ? ON_FULL : ON_FRAG;

	if (c->on != want)
		list_move_tail(d, ci, want);
}

/* ---- one device --------------------------------------------------------- */

static uint64_t cluster_start(const struct swt_swapsim *s, int32_t ci)
{
	return (uint64_t)ci * s->csize;
}

static uint64_t cluster_end(const struct swt_swapsim *s, const struct device *d, int32_t ci)
{
	return SWT_MIN(cluster_start(s, ci) + s->csize, d->slots);
}

/*
 * Take the first free slot at or past `from` in cluster ci and point the
 * cursor past it, or at nothing when the cluster is full or ends there
 * (alloc_swap_scan_cluster).  Returns the slot, 0 when none was free.
 */
static uint64_t scan_cluster(struct swt_swapsim *s, struct device *d, int32_t ci, uint64_t from,
			     uint64_t *cur)
{
	struct cluster *c = &d->cl[ci];
	uint64_t end = cluster_end(s, d, ci), slot = end;

	*cur = 0;
	if (c->used < c->usable)
		slot = find_free(d->map, from, end);
	if (slot < end) {
		bit_set(d->map, slot);
		c->used++;
		d->used++;
		s->nfree--;
		if (c->used < c->usable && slot + 1 < end)
			*cur = slot + 1;
	}
	relocate(d, ci);
	return slot < end ? slot : 0;
}

/* Continue where the cursor stopped; 0 when it points nowhere or its cluster has no room left. */
static uint64_t cursor_take(struct swt_swapsim *s, struct device *d, uint64_t *cur)
{
	int32_t ci;

	if (!*cur)
		return 0;
	ci = (int32_t)(*cur / s->csize);
	if (d->cl[ci].on == ON_FULL) {
		*cur = 0;
		return 0;
	}
	/* an emptied cluster is scanned from its start again (cluster_is_empty) */
	return scan_cluster(s, d, ci, d->cl[ci].used ? *cur : cluster_start(s, ci), cur);
}

/* A new cluster: the nonfull ones (each scanned in turn), then one free, then one frag cluster. */
static uint64_t new_cluster(struct swt_swapsim *s, struct device *d, uint64_t *cur)
{
	static const uint8_t from[] = { ON_NONFULL, ON_FREE, ON_FRAG };

	for (size_t i = 0; i < SWT_ARRAY_SIZE(from); i++) {
		int32_t ci;

		while ((ci = d->lists[from[i]].head) != NIL) {
			uint64_t slot;

			list_unlink(d, ci);
			slot = scan_cluster(s, d, ci, cluster_start(s, ci), cur);
			if (slot)
				return slot;
			if (from[i] != ON_NONFULL)
				break;
		}
	}
	return 0;
}

/*
 * One slot of device d through cursor cur, or 0 when d is full.  fresh:
 * go straight to a new cluster (the >= 6.15 SSD slow path).
 */
static uint64_t device_take(struct swt_swapsim *s, struct device *d, uint64_t *cur, int fresh)
{
	uint64_t slot;

	if (d->used == d->usable)
		return 0;
	if (!fresh && (slot = cursor_take(s, d, cur)))
		return slot;
	return new_cluster(s, d, cur);
}

static uint64_t *cursor_for(struct device *d, unsigned cpu)
{
	return &d->cur[d->rotational ? 0 : cpu];
}

/* ---- between devices ---------------------------------------------------- */

static size_t order_pos(const struct swt_swapsim *s, uint32_t dev)
{
	size_t i = 0;

	while (s->order[i] != dev)
		i++;
	return i;
}

/* Move order[pos] behind the other devices of its priority (plist_requeue). */
static void requeue(struct swt_swapsim *s, size_t pos)
{
	uint32_t d = s->order[pos];

	for (; pos + 1 < s->ndev && s->dev[s->order[pos + 1]].rank == s->dev[d].rank; pos++)
		s->order[pos] = s->order[pos + 1];
	s->order[pos] = d;
}

/* The head of the list: the first device with room, or NIL. */
static int32_t first_avail(const struct swt_swapsim *s)
{
	for (size_t i = 0; i < s->ndev; i++)
		if (s->dev[s->order[i]].used < s->dev[s->order[i]].usable)
			return (int32_t)i;
	return NIL;
}

/* Take the head device, requeue it, and take one slot there. */
static int rotate_take(struct swt_swapsim *s, unsigned cpu, uint32_t *dev, uint64_t *slot)
{
	int32_t pos = first_avail(s);
	struct device *d;

	if (pos == NIL)
		return -SWT_ESTATE;
	*dev = s->order[pos];
	requeue(s, (size_t)pos);
	d = &s->dev[*dev];
	*slot = device_take(s, d, cursor_for(d, cpu),
			    s->era == SWT_SWAPSIM_ERA_6_15 && !d->rotational);
	return *slot ? 0 : -SWT_ESTATE;
}

static void release(struct swt_swapsim *s, uint32_t dev, uint64_t slot)
{
	struct device *d = &s->dev[dev];
	int was_full = d->used == d->usable;
	int32_t ci = (int32_t)(slot / s->csize);
	struct cluster *c = &d->cl[ci];

	bit_clear(d->map, slot);
	c->used--;
	d->used--;
	s->nfree++;
	/* free_cluster / partial_free_cluster, whoever points into it */
	if (!c->used && c->on != ON_FREE)
		list_move_tail(d, ci, ON_FREE);
	else if (c->used && c->on != ON_NONFULL)
		list_move_tail(d, ci, ON_NONFULL);
	/* a full device left the list; it comes back behind its equals (plist_add) */
	if (was_full)
		requeue(s, order_pos(s, dev));
}

/* 4.11-6.14: the slot caches switch off when free swap runs low, and drain. */
static void cache_check(struct swt_swapsim *s)
{
	uint64_t per = (uint64_t)s->ncpus * s->batch;

	if (!s->cache_active) {
		if (s->nfree > 5 * per)
			s->cache_active = 1;
		return;
	}
	if (s->nfree >= 2 * per)
		return;
	s->cache_active = 0;
	for (unsigned c = 0; c < s->ncpus; c++) {
		for (unsigned i = s->cache_pos[c]; i < s->cache_len[c]; i++) {
			const struct cached *e = &s->cache[(size_t)c * s->batch + i];

			release(s, e->dev, e->slot);
		}
		s->cache_pos[c] = s->cache_len[c] = 0;
	}
}

static int cache_take(struct swt_swapsim *s, unsigned cpu, uint32_t *dev, uint64_t *slot)
{
	struct cached *c = &s->cache[(size_t)cpu * s->batch];

	cache_check(s);
	if (!s->cache_active)
		return rotate_take(s, cpu, dev, slot);
	if (s->cache_pos[cpu] == s->cache_len[cpu]) {
		/* refill: up to a batch from the head device only (get_swap_pages) */
		int32_t pos = first_avail(s);
		struct device *d;
		unsigned n = 0;
		uint32_t di;

		if (pos == NIL)
			return -SWT_ESTATE;
		di = s->order[pos];
		requeue(s, (size_t)pos);
		d = &s->dev[di];
		while (n < s->batch) {
			uint64_t sl = device_take(s, d, cursor_for(d, cpu), 0);

			if (!sl)
				break;
			c[n].dev = di;
			c[n].slot = sl;
			n++;
		}
		s->cache_len[cpu] = n;
		s->cache_pos[cpu] = 0;
		if (!n)
			return -SWT_ESTATE;
	}
	*dev = c[s->cache_pos[cpu]].dev;
	*slot = c[s->cache_pos[cpu]].slot;
	s->cache_pos[cpu]++;
	return 0;
}

/* >= 6.15: the CPU's SSD cluster first (swap_alloc_fast), else rotate (swap_alloc_slow). */
static int cluster_take(struct swt_swapsim *s, unsigned cpu, uint32_t *dev, uint64_t *slot)
{
	int32_t cd = s->cpu_dev[cpu];
	int ret;

	if (cd != NIL && (*slot = cursor_take(s, &s->dev[cd], &s->dev[cd].cur[cpu]))) {
		*dev = (uint32_t)cd;
		return 0;
	}
	ret = rotate_take(s, cpu, dev, slot);
	if (!ret && !s->dev[*dev].rotational)
		s->cpu_dev[cpu] = (int32_t)*dev;
	return ret;
}

int swt_swapsim_slot_get(struct swt_swapsim *s, unsigned cpu, uint32_t *dev, uint64_t *slot)
{
	cpu %= s->ncpus;
	switch (s->era) {
	case SWT_SWAPSIM_ERA_3_16:
		return rotate_take(s, cpu, dev, slot);
	case SWT_SWAPSIM_ERA_4_11:
		return cache_take(s, cpu, dev, slot);
	case SWT_SWAPSIM_ERA_6_15:
		return cluster_take(s, cpu, dev, slot);
	}
	return -SWT_ESTATE;
}

int swt_swapsim_slot_put(struct swt_swapsim *s, uint32_t dev, uint64_t slot)
{
	if (dev >= s->ndev || slot == 0 || slot >= s->dev[dev].slots ||
	    !bit_test(s->dev[dev].map, slot))
		return -SWT_EUSAGE;
	release(s, dev, slot);
	return 0;
}

uint64_t swt_swapsim_used(const struct swt_swapsim *s, uint32_t dev)
{
	return dev < s->ndev ? s->dev[dev].used : 0;
}

/* ---- setup -------------------------------------------------------------- */

void swt_swapsim_free(struct swt_swapsim *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->dev && i < s->ndev; i++) {
		free(s->dev[i].map);
		free(s->dev[i].cl);
		free(s->dev[i].cur);
	}
	free(s->dev);
	free(s->order);
	free(s->cpu_dev);
	free(s->cache);
	free(s->cache_len);
	free(s->cache_pos);
	free(s);
}

static int device_init(struct swt_swapsim *s, struct device *d, const struct swt_swapsim_device *spec)
{
	uint64_t words = (spec->slots + 63) / 64;

	d->slots = spec->slots;
	d->usable = spec->slots - 1;
	d->prio = spec->priority;
	d->rank = s->era != SWT_SWAPSIM_ERA_3_16 && d->prio < 0 ? -1 : d->prio;
	d->rotational = !!spec->rotational;
	d->ncl = (uint32_t)((spec->slots + s->csize - 1) / s->csize);
	d->map = calloc(words, sizeof(*d->map));
	d->cl = calloc(d->ncl, sizeof(*d->cl));
	d->cur = calloc(d->rotational ? 1 : s->ncpus, sizeof(*d->cur));
	if (!d->map || !d->cl || !d->cur)
		return -SWT_ENOMEM;
	bit_set(d->map, 0);
	for (int l = 0; l < NR_LISTS; l++)
		d->lists[l].head = d->lists[l].tail = NIL;
	for (uint32_t i = 0; i < d->ncl; i++) {
		struct cluster *c = &d->cl[i];
		uint64_t span = cluster_end(s, d, (int32_t)i) - cluster_start(s, (int32_t)i);

		c->usable = (uint32_t)(i == 0 ? span - 1 : span);
		c->prev = c->next = NIL;
		c->on = ON_FULL;
		/* clusters with an unusable slot start on the nonfull list (setup_clusters) */
		list_move_tail(d, (int32_t)i, c->usable < s->csize ? ON_NONFULL : ON_FREE);
	}
	s->nfree += d->usable;
	/* pages already there: the lowest slots, taken as the device's cursor would */
	for (uint64_t k = 0; k < spec->used_at_start; k++)
		if (!device_take(s, d, cursor_for(d, 0), 0))
			return -SWT_EUSAGE;
	return 0;
}

int swt_swapsim_alloc(const struct swt_swapsim_config *cfg, struct swt_swapsim **out,
		      struct swt_err *err)
{
	struct swt_swapsim *s;
	size_t i;
	int ret;

	*out = NULL;
	if (!cfg->ndevs || cfg->ndevs > 1024)
		return swt_error(err, SWT_EUSAGE, "swap layout: %zu devices (1 to 1024)", cfg->ndevs);
	if (cfg->cluster_slots < 2 || (cfg->cluster_slots & (cfg->cluster_slots - 1)) ||
	    cfg->cluster_slots > (1u << 20))
		return swt_error(err, SWT_EUSAGE, "swap layout: cluster of %u slots: a power of two",
				 cfg->cluster_slots);
	if (!cfg->ncpus || cfg->ncpus > SWT_MAX_CPUS)
		return swt_error(err, SWT_EUSAGE, "swap layout: %u CPUs", cfg->ncpus);
	for (i = 0; i < cfg->ndevs; i++)
		if (cfg->devs[i].slots < 2 || cfg->devs[i].slots > ((uint64_t)1 << 40))
			return swt_error(err, SWT_EUSAGE,
					 "swap layout: device %zu has %llu slots (2 to 2^40)", i,
					 (unsigned long long)cfg->devs[i].slots);
	s = calloc(1, sizeof(*s));
	if (!s)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	s->era = cfg->era;
	s->csize = cfg->cluster_slots;
	s->batch = cfg->batch ? cfg->batch : SWT_SWAPSIM_BATCH;
	s->ncpus = cfg->ncpus;
	s->ndev = cfg->ndevs;
	s->dev = calloc(s->ndev, sizeof(*s->dev));
	s->order = malloc(s->ndev * sizeof(*s->order));
	s->cpu_dev = malloc(s->ncpus * sizeof(*s->cpu_dev));
	s->cache = malloc((size_t)s->ncpus * s->batch * sizeof(*s->cache));
	s->cache_len = calloc(s->ncpus, sizeof(*s->cache_len));
	s->cache_pos = calloc(s->ncpus, sizeof(*s->cache_pos));
	if (!s->dev || !s->order || !s->cpu_dev || !s->cache || !s->cache_len || !s->cache_pos) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_free;
	}
	for (i = 0; i < s->ndev; i++) {
		ret = device_init(s, &s->dev[i], &cfg->devs[i]);
		if (ret) {
			if (ret == -SWT_ENOMEM)
				swt_error(err, SWT_ENOMEM, "out of memory");
			else
				swt_error(err, SWT_EUSAGE,
					  "swap layout: device %zu cannot hold %llu pages at start", i,
					  (unsigned long long)cfg->devs[i].used_at_start);
			goto out_free;
		}
	}
	/* swapon order within each priority, higher priorities first (insertion sort: stable) */
	for (i = 0; i < s->ndev; i++) {
		size_t j = i;

		while (j > 0 && s->dev[s->order[j - 1]].rank < s->dev[i].rank) {
			s->order[j] = s->order[j - 1];
			j--;
		}
		s->order[j] = (uint32_t)i;
	}
	for (i = 0; i < s->ncpus; i++)
		s->cpu_dev[i] = NIL;
	/*
	 * >= 6.15: the pages already there were taken through CPU 0's
	 * cursors, so CPU 0 goes on in the SSD cluster it filled last, as the
	 * kernel's per-CPU cluster would (a one-page offset then moves its
	 * next pages, not a whole cluster).
	 */
	for (i = 0; s->era == SWT_SWAPSIM_ERA_6_15 && i < s->ndev; i++)
		if (cfg->devs[i].used_at_start && !s->dev[i].rotational)
			s->cpu_dev[0] = (int32_t)i;
	*out = s;
	return 0;
out_free:
	swt_swapsim_free(s);
	return ret;
}

/* "6.18", "6.18.44-fc-v657", "5.10.0-23-amd64", "6.1+": major and minor */
int swt_kernel_release_parse(const char *text, unsigned long *major, unsigned long *minor)
{
	char *end;

	if (!text || !isdigit((unsigned char)text[0]))
		return -SWT_EUSAGE;
	*major = strtoul(text, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -SWT_EUSAGE;
	*minor = strtoul(end + 1, &end, 10);
	if (*end && *end != '.' && *end != '-' && *end != '+' && *end != '_')
		return -SWT_EUSAGE;
	return 0;
}

int swt_swapsim_era_parse_given(const char *text, enum swt_swapsim_era *era)
{
	unsigned long major, minor;

	if (swt_kernel_release_parse(text, &major, &minor) || major < 3 || (major == 3 && minor < 16))
		return -SWT_EUSAGE;
	return swt_swapsim_era_parse(text, era);
}

int swt_swapsim_era_parse(const char *text, enum swt_swapsim_era *era)
{
	unsigned long major, minor;

	if (swt_kernel_release_parse(text, &major, &minor))
		return -SWT_EUSAGE;
	if (major > 6 || (major == 6 && minor >= 15))
		*era = SWT_SWAPSIM_ERA_6_15;
	else if (major > 4 || (major == 4 && minor >= 11))
		*era = SWT_SWAPSIM_ERA_4_11;
	else
		*era = SWT_SWAPSIM_ERA_3_16;
	return 0;
}

const char *swt_swapsim_era_name(enum swt_swapsim_era era)
{
	switch (era) {
	case SWT_SWAPSIM_ERA_3_16:
		return "3.16-4.10";
	case SWT_SWAPSIM_ERA_4_11:
		return "4.11-6.14";
	case SWT_SWAPSIM_ERA_6_15:
		return "6.15+";
	}
	return "?";
}
