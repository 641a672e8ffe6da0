/*
 * What-if swap layouts: parsing a layout spec against a capture, and
 * re-placing the capture's swapped-out pages onto the simulated devices
 * with the era's slot allocator (allocator.c), so that the replay engine
 * computes readahead windows and plug merges on the new placement.
 *
 * Rules (docs/layouts.md):
 *  - the swap-out stream in time order is the allocation order; each
 *    swap-out takes a slot on the CPU whose bio wrote it;
 *  - every fault moves with the page it faults on (fault.out, the latest
 *    swap-out to its traced slot), so a page read back and evicted clean
 *    keeps its simulated slot, as it kept its real one;
 *  - the trace does not show when a slot is freed, only that it was free
 *    again when a later swap-out wrote the same traced slot: the page's
 *    simulated slot is freed then, just before that swap-out allocates --
 *    unless the faults on both name the same page: a page faulted in by a
 *    read keeps its slot in the swap cache, and when it is dirtied without
 *    a fault (the PTE was mapped writable) it is written back to that slot,
 *    with no allocation (shrink_folio_list allocates only outside the swap
 *    cache), so it keeps its simulated slot too;
 *  - a slot a write fault freed (in->frees) is free for readahead from
 *    then on, but is handed out again as the trace shows it was: when a
 *    later swap-out writes the traced slot (the allocator freed it then, in
 *    the rule above); freeing it at once, the allocator reused it sooner
 *    than the kernel's did, and the identical layout of rnd-1ssd-vma-pc3
 *    lost two thirds of its slots (31.92 % where the rule keeps 100 %);
 *  - pages faulted but never written in the trace (swapped out before it
 *    began) are placed before the first swap-out, in ascending traced slot
 *    order (slot, then area), from CPU 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta.h"
#include "swapsim.h"
#include "util.h"

#define MAX_LAYOUT_DEVICES 32	/* MAX_SWAPFILES is about this */

/* ---- spec parsing ------------------------------------------------------- */

struct dev_spec {
	uint64_t pages;		/* 0: default */
	int64_t prio;
	int has_prio;
	int kind;		/* -1 default, 0 ssd, 1 hdd */
};

/* "512M", "1G", "262144K", "65536p" (pages) into pages; 0 or -SWT_EUSAGE. */
static int parse_size(const char *text, uint32_t page_shift, uint64_t *pages)
{
	size_t n = strlen(text);
	char num[32];
	uint64_t v;
	unsigned shift;

	if (n < 2 || n >= sizeof(num))
		return -SWT_EUSAGE;
	memcpy(num, text, n - 1);
	num[n - 1] = '\0';
	if (swt_parse_u64(num, &v))
		return -SWT_EUSAGE;
	switch (text[n - 1]) {
	case 'p':
		*pages = v;
		return v ? 0 : -SWT_EUSAGE;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	default:
		return -SWT_EUSAGE;
	}
	if (v > (UINT64_MAX >> shift))
		return -SWT_EUSAGE;
	*pages = (v << shift) >> page_shift;
	return *pages ? 0 : -SWT_EUSAGE;
}

static void format_size(uint64_t pages, uint32_t page_shift, char *buf, size_t size)
{
	uint64_t bytes = pages << page_shift;

	if (bytes && !(bytes & ((1ull << 30) - 1)))
		snprintf(buf, size, "%llu GiB", (unsigned long long)(bytes >> 30));
	else if (bytes && !(bytes & ((1ull << 20) - 1)))
		snprintf(buf, size, "%llu MiB", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, size, "%llu KiB", (unsigned long long)(bytes >> 10));
}

static int parse_kind(const char *text)
{
	if (!strcmp(text, "hdd"))
		return 1;
	if (!strcmp(text, "ssd"))
		return 0;
	return -1;
}

/* "SIZE[@PRIO][/hdd|/ssd]" */
static int parse_device(char *text, uint32_t page_shift, struct dev_spec *d)
{
	char *slash = strchr(text, '/'), *at;

	d->kind = -1;
	d->has_prio = 0;
	if (slash) {
		*slash = '\0';
		d->kind = parse_kind(slash + 1);
		if (d->kind < 0)
			return -SWT_EUSAGE;
	}
	at = strchr(text, '@');
	if (at) {
		*at = '\0';
		if (swt_parse_i64(at + 1, &d->prio) || d->prio < SWT_MIN_SWAP_PRIO ||
		    d->prio > SWT_MAX_SWAP_PRIO)
			return -SWT_EUSAGE;
		d->has_prio = 1;
	}
	return parse_size(text, page_shift, &d->pages);
}

/*
 * The kind of the traced areas: rotational when any is, or is not known
 * not to be (swt_replay_any_rotational), or with no areas at all.
 */
static int traced_kind(const struct swt_replay_input *in)
{
	return !in->nr_areas || swt_replay_any_rotational(in);
}

static void describe(struct swt_placement *p, const struct swt_replay_input *in, int era_given)
{
	char *buf = p->description, size[32];
	size_t cap = sizeof(p->description), len = 0;
	int uniform = 1;

	for (size_t i = 1; i < p->ndevs; i++)
		if (p->devs[i].slots != p->devs[0].slots || p->devs[i].priority != p->devs[0].priority ||
		    p->devs[i].rotational != p->devs[0].rotational)
			uniform = 0;
	if (uniform) {
		format_size(p->devs[0].slots, in->page_shift, size, sizeof(size));
		len += (size_t)snprintf(buf + len, cap - len, "%zu x %s %s at priority %lld", p->ndevs,
					size, p->devs[0].rotational ? "hdd" : "ssd",
					(long long)p->devs[0].priority);
	} else {
		for (size_t i = 0; i < p->ndevs && len < cap; i++) {
			format_size(p->devs[i].slots, in->page_shift, size, sizeof(size));
			len += (size_t)snprintf(buf + len, cap - len, "%s%s %s@%lld", i ? ", " : "", size,
						p->devs[i].rotational ? "hdd" : "ssd",
						(long long)p->devs[i].priority);
		}
	}
	for (size_t i = 0; i < p->ndevs && len < cap; i++)
		if (p->devs[i].used_at_start) {
			len += (size_t)snprintf(buf + len, cap - len, "; pages there at start:");
			for (size_t k = 0; k < p->ndevs && len < cap; k++)
				len += (size_t)snprintf(buf + len, cap - len, "%s%llu", k ? "," : " ",
							(unsigned long long)p->devs[k].used_at_start);
			break;
		}
	if (len >= cap)
		return;
	if (era_given || p->era_assumed)
		snprintf(buf + len, cap - len, "; allocator %s%s, clusters of %u",
			 swt_swapsim_era_name(p->era), era_given ? "" : " (kernel unknown)",
			 p->cluster_slots);
	else
		snprintf(buf + len, cap - len, "; allocator %s (kernel %s), clusters of %u",
			 swt_swapsim_era_name(p->era), in->kernel, p->cluster_slots);
}

void swt_placement_release(struct swt_placement *p)
{
	free(p->spec);
	free(p->devs);
	memset(p, 0, sizeof(*p));
}

static int bad_spec(struct swt_err *err, const char *spec, const char *what, const char *tok)
{
	return swt_error(err, SWT_EUSAGE, "layout '%s': %s '%s'", spec, what, tok);
}

/* The options of a layout spec, each given once at most (struct layout_spec.seen). */
enum { OPT_KIND, OPT_ERA, OPT_PRIO, OPT_SIZE, OPT_USED, OPT_CLUSTER, NR_OPTS };
static const char *const option_names[NR_OPTS] = { "hdd/ssd", "era=", "prio=", "size=", "used=",
						   "cluster=" };

/*
 * A layout spec as written, before the capture fills in what it leaves
 * out: its devices and the options that apply to every device unless it
 * says otherwise.  Read with the capture's page size alone (sizes in
 * pages), so that a stored layout name reads back without the capture's
 * areas (swt_layout_canonical).
 */
struct layout_spec {
	struct dev_spec devs[MAX_LAYOUT_DEVICES];
	size_t n;
	int listed;			/* devices=...; else N equal devices */
	int kind;			/* hdd/ssd when given: 1 hdd, 0 ssd */
	int64_t prio;			/* prio= when given */
	uint64_t size;			/* pages of each device, 0: the traced total shared */
	uint64_t used[MAX_LAYOUT_DEVICES];	/* pages held at start */
	size_t nused;			/* 0, 1 (all devices) or one per device */
	enum swt_swapsim_era era;	/* era= when era_given */
	int era_given;			/* era=REL; era=traced is the default, not one given */
	unsigned cluster;		/* cluster= slots, 0: the era's */
	unsigned seen;			/* options given: 1 << OPT_..., a repeat is refused */
};

/* "N" or "N1,N2,..." */
static int parse_used(char *text, struct layout_spec *ls)
{
	char *save = NULL, *tok;

	ls->nused = 0;
	for (tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (ls->nused == MAX_LAYOUT_DEVICES || swt_parse_u64(tok, &ls->used[ls->nused]))
			return -SWT_EUSAGE;
		ls->nused++;
	}
	return ls->nused ? 0 : -SWT_EUSAGE;
}

static int parse_options(const char *spec, char *save, uint32_t page_shift, struct layout_spec *ls,
			 struct swt_err *err)
{
	char *tok;

	while ((tok = strtok_r(NULL, ":", &save))) {
		unsigned opt = parse_kind(tok) >= 0 ? OPT_KIND : NR_OPTS;

		for (unsigned i = OPT_ERA; i < NR_OPTS && opt == NR_OPTS; i++)
			if (!strncmp(tok, option_names[i], strlen(option_names[i])))
				opt = i;
		/* the last of two would win without a word */
		if (opt < NR_OPTS && (ls->seen & (1u << opt)))
			return bad_spec(err, spec, "option given twice", option_names[opt]);
		if (opt < NR_OPTS)
			ls->seen |= 1u << opt;
		if (parse_kind(tok) >= 0) {
			ls->kind = parse_kind(tok);
		} else if (!strncmp(tok, "era=", 4)) {
			if (!strcmp(tok + 4, "traced"))
				continue;
			if (swt_swapsim_era_parse_given(tok + 4, &ls->era))
				return bad_spec(err, spec, "bad era (3.16, 4.11, 6.15, a later "
						"release such as 5.10.0-23-amd64, or traced)", tok + 4);
			ls->era_given = 1;
		} else if (!strncmp(tok, "prio=", 5)) {
			if (swt_parse_i64(tok + 5, &ls->prio) || ls->prio < SWT_MIN_SWAP_PRIO ||
			    ls->prio > SWT_MAX_SWAP_PRIO)
				return bad_spec(err, spec, "bad priority", tok + 5);
		} else if (!strncmp(tok, "size=", 5)) {
			if (parse_size(tok + 5, page_shift, &ls->size))
				return bad_spec(err, spec, "bad size (e.g. 256M, 1G, 65536p)", tok + 5);
		} else if (!strncmp(tok, "used=", 5)) {
			if (parse_used(tok + 5, ls))
				return bad_spec(err, spec, "bad page counts (N, or N1,N2,... per device)",
						tok + 5);
		} else if (!strncmp(tok, "cluster=", 8)) {
			int64_t c;

			/* SWAPFILE_CLUSTER: 256, or HPAGE_PMD_NR with THP swap (512 on x86-64, 2048 or 8192 on arm64's 16K or 64K pages) */
			if (swt_parse_i64(tok + 8, &c) || c < 8 || c > 8192 || (c & (c - 1)))
				return bad_spec(err, spec,
						"bad cluster size (a power of two from 8 to 8192 slots: 256, "
						"or the architecture's huge page in pages with THP swap)",
						tok + 8);
			ls->cluster = (unsigned)c;
		} else {
			return bad_spec(err, spec,
					"unknown option (hdd, ssd, era=, prio=, size=, used=, cluster=, spread)",
					tok);
		}
	}
	return 0;
}

/*
 * Whether the spec has an empty option or list item ("4:", "4::ssd",
 * "devices=1G,"), which strtok would skip: another spelling of a layout,
 * stored and run as another, where a policy's parameters and the
 * --page-cluster list refuse one.  An empty value ("used=") is left to
 * the option's own check.
 */
static int has_empty_item(const char *spec)
{
	const char *item = spec;

	for (;;) {
		size_t len = strcspn(item, ":");
		const char *eq = memchr(item, '=', len);
		const char *list = eq ? eq + 1 : item;
		size_t llen = len - (size_t)(list - item);

		if (!len)
			return 1;
		if (llen && (list[0] == ',' || list[llen - 1] == ','))
			return 1;
		for (size_t k = 1; k < llen; k++)
			if (list[k] == ',' && list[k - 1] == ',')
				return 1;
		if (!item[len])
			return 0;
		item += len + 1;
	}
}

/*
 * Read a spec other than "traced" into ls, named in messages as name:
 * everything that can be refused without the capture's areas is refused
 * here.
 */
static int parse_spec(const char *spec, const char *name, uint32_t page_shift,
		      struct layout_spec *ls, struct swt_err *err)
{
	char *copy = NULL, *save = NULL, *head;
	size_t i;
	int ret = 0;

	memset(ls, 0, sizeof(*ls));
	if (spec[0] && has_empty_item(spec))
		return swt_error(err, SWT_EUSAGE, "layout '%s': an empty option or list item", name);
	copy = swt_strdup(spec);
	if (!copy)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	head = strtok_r(copy, ":", &save);
	if (!head) {
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': empty", name);
		goto out;
	}
	if (!strncmp(head, "devices=", 8)) {
		char *dsave = NULL, *d;

		ls->listed = 1;
		for (d = strtok_r(head + 8, ",", &dsave); d; d = strtok_r(NULL, ",", &dsave)) {
			char as_given[64];

			snprintf(as_given, sizeof(as_given), "%s", d);	/* parsing cuts it */
			if (ls->n == MAX_LAYOUT_DEVICES) {
				ret = swt_error(err, SWT_EUSAGE, "layout '%s': more than %d devices", name,
						MAX_LAYOUT_DEVICES);
				goto out;
			}
			if (parse_device(d, page_shift, &ls->devs[ls->n])) {
				ret = bad_spec(err, name, "bad device (SIZE[@PRIO][/hdd|/ssd], e.g. 512M@5)",
					       as_given);
				goto out;
			}
			ls->n++;
		}
		if (!ls->n) {
			ret = swt_error(err, SWT_EUSAGE, "layout '%s': no devices", name);
			goto out;
		}
	} else {
		int64_t count;

		if (swt_parse_i64(head, &count) || count < 1 || count > MAX_LAYOUT_DEVICES) {
			ret = swt_error(err, SWT_EUSAGE,
					"layout '%s': expected 'traced', a device count (1 to %d) or "
					"devices=SIZE[@PRIO],...", name, MAX_LAYOUT_DEVICES);
			goto out;
		}
		ls->n = (size_t)count;
		for (i = 0; i < ls->n; i++)
			ls->devs[i].kind = -1;
	}
	ret = parse_options(name, save, page_shift, ls, err);
	if (ret)
		goto out;
	{
		/* a default every device overrides would be ignored without a word */
		static const unsigned order[] = { OPT_SIZE, OPT_PRIO, OPT_KIND };
		size_t own[NR_OPTS] = { 0 };	/* devices that give it themselves */

		for (i = 0; i < ls->n; i++) {
			own[OPT_SIZE] += ls->devs[i].pages > 0;
			own[OPT_PRIO] += ls->devs[i].has_prio;
			own[OPT_KIND] += ls->devs[i].kind >= 0;
		}

		for (size_t k = 0; k < SWT_ARRAY_SIZE(order) && !ret; k++) {
			unsigned o = order[k];

			if (own[o] == ls->n && (ls->seen & (1u << o)))
				ret = swt_error(err, SWT_EUSAGE, "layout '%s': %s applies to devices "
						"that do not give their own, and every device gives one",
						name, option_names[o]);
		}
		if (ret)
			goto out;
	}
	if (ls->nused > 1 && ls->nused != ls->n)
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': used= gives %zu counts for %zu devices",
				name, ls->nused, ls->n);
out:
	free(copy);
	return ret;
}

/*
 * A size as the canonical spelling gives it: in the largest of K, M, G, T
 * that holds it whole, from the pages it comes to (so 131072p, 524288K and
 * 512M are all 512M on 4 KiB pages); in pages when the bytes do not fit.
 */
static void spec_size(uint64_t pages, uint32_t page_shift, char *buf, size_t size)
{
	static const char units[] = "KMGT";
	uint64_t bytes;
	unsigned u = 0;

	if (pages > (UINT64_MAX >> page_shift) || ((pages << page_shift) & 1023)) {
		snprintf(buf, size, "%llup", (unsigned long long)pages);
		return;
	}
	bytes = pages << page_shift;
	while (u + 1 < sizeof(units) - 1 && !(bytes & ((1ull << (10 * (u + 2))) - 1)))
		u++;
	snprintf(buf, size, "%llu%c", (unsigned long long)(bytes >> (10 * (u + 1))), units[u]);
}

/* An era as era= names it in the canonical spelling: the first release of its allocator. */
static const char *era_release(enum swt_swapsim_era era)
{
	switch (era) {
	case SWT_SWAPSIM_ERA_3_16:
		return "3.16";
	case SWT_SWAPSIM_ERA_4_11:
		return "4.11";
	case SWT_SWAPSIM_ERA_6_15:
		break;
	}
	return "6.15";
}

/* The slots per cluster of an era that cluster= does not override. */
static unsigned era_cluster(enum swt_swapsim_era era)
{
	/* SWAPFILE_CLUSTER was 256 until THP swap (4.13) made it a huge page's */
	return era == SWT_SWAPSIM_ERA_3_16 ? 256 : SWT_SWAPSIM_CLUSTER;
}

/*
 * A devices= spec with what it gives every device said once, for its
 * canonical spelling: placement_parse gives a device its own priority, else
 * prio=, else the capture's, and its own kind, else hdd/ssd, else the
 * capture's.  So where the spec decides one for every device (each gives
 * its own, or the option is given), the devices' values are the layout and
 * how they were written is not: the option when they are all equal
 * (devices=1G@5,1G@5 is devices=1G,1G:prio=5), each device's own when they
 * differ (devices=1G@10,1G:prio=5 is devices=1G@10,1G@5).  Where a device
 * is left to the capture (devices=1G@5,1G: the second gets the traced
 * priority, or -3 after a negative one), the spec is kept as written.  Then
 * devices of one size and nothing of their own are N equal devices of that
 * size (devices=1G,1G:prio=5 is 2:prio=5:size=1G).
 */
static void spell_devices(struct layout_spec *ls)
{
	size_t i, own_prio = 0, own_kind = 0;
	int same_prio = 1, same_kind = 1, equal = 1;

	if (!ls->listed)
		return;
	for (i = 0; i < ls->n; i++) {
		own_prio += ls->devs[i].has_prio;
		own_kind += ls->devs[i].kind >= 0;
	}
	if (own_prio == ls->n || (ls->seen & (1u << OPT_PRIO))) {
		for (i = 0; i < ls->n; i++) {
			struct dev_spec *d = &ls->devs[i];

			if (!d->has_prio)
				d->prio = ls->prio;
			same_prio &= d->prio == ls->devs[0].prio;
		}
		for (i = 0; i < ls->n; i++)
			ls->devs[i].has_prio = !same_prio;
		ls->prio = ls->devs[0].prio;
		ls->seen = same_prio ? ls->seen | (1u << OPT_PRIO) : ls->seen & ~(1u << OPT_PRIO);
	}
	if (own_kind == ls->n || (ls->seen & (1u << OPT_KIND))) {
		for (i = 0; i < ls->n; i++) {
			struct dev_spec *d = &ls->devs[i];

			if (d->kind < 0)
				d->kind = ls->kind;
			same_kind &= d->kind == ls->devs[0].kind;
		}
		ls->kind = ls->devs[0].kind;
		for (i = 0; i < ls->n && same_kind; i++)
			ls->devs[i].kind = -1;
		ls->seen = same_kind ? ls->seen | (1u << OPT_KIND) : ls->seen & ~(1u << OPT_KIND);
	}
	for (i = 0; i < ls->n; i++)
		equal &= !ls->devs[i].has_prio && ls->devs[i].kind < 0 &&
			 ls->devs[i].pages == ls->devs[0].pages;
	if (equal) {
		/* no size= to clash with: beside devices that all give theirs, it was refused */
		ls->listed = 0;
		ls->size = ls->devs[0].pages;
		ls->seen |= 1u << OPT_SIZE;
		for (i = 0; i < ls->n; i++)
			ls->devs[i].pages = 0;
	}
}

/*
 * The canonical spelling of a parsed spec (docs/layouts.md), with suffix
 * appended, into *out (malloc'd): one spelling per layout, so that a
 * layout given twice, or replayed again in another spelling, is known as
 * the same one.  The options in one order, numbers without leading zeros,
 * sizes as spec_size gives them, an era by its allocator's first release;
 * era=traced, and cluster= at an era's own default, are left out, as they
 * change nothing whatever the capture.  Options whose default comes from
 * the capture (hdd/ssd, prio=, size=, an era given) are written when given
 * and left out when not: whether "4:ssd" is "4" depends on the capture.
 * used= is written with one count per device, as spread names its offsets.
 * A priority or kind every device of devices= has is written once, and
 * such devices of one size as N of them (spell_devices).
 */
static int format_spec(const struct layout_spec *given, uint32_t page_shift, const char *suffix,
		       char **out, struct swt_err *err)
{
	/* 32 devices of 20-digit sizes and priorities, 32 20-digit counts: under 3 KiB */
	char buf[4096], size[32];
	size_t cap = sizeof(buf), len = 0;
	struct layout_spec spelt = *given;	/* the placement reads the spec as given */
	const struct layout_spec *ls = &spelt;

	spell_devices(&spelt);
	if (ls->listed) {
		len += (size_t)snprintf(buf + len, cap - len, "devices=");
		for (size_t i = 0; i < ls->n && len < cap; i++) {
			const struct dev_spec *d = &ls->devs[i];

			spec_size(d->pages, page_shift, size, sizeof(size));
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? "," : "", size);
			if (d->has_prio && len < cap)
				len += (size_t)snprintf(buf + len, cap - len, "@%lld", (long long)d->prio);
			if (d->kind >= 0 && len < cap)
				len += (size_t)snprintf(buf + len, cap - len, "/%s", d->kind ? "hdd" : "ssd");
		}
	} else {
		len += (size_t)snprintf(buf + len, cap - len, "%zu", ls->n);
	}
	if ((ls->seen & (1u << OPT_KIND)) && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, ":%s", ls->kind ? "hdd" : "ssd");
	if ((ls->seen & (1u << OPT_PRIO)) && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, ":prio=%lld", (long long)ls->prio);
	if ((ls->seen & (1u << OPT_SIZE)) && len < cap) {
		spec_size(ls->size, page_shift, size, sizeof(size));
		len += (size_t)snprintf(buf + len, cap - len, ":size=%s", size);
	}
	if (ls->era_given && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, ":era=%s", era_release(ls->era));
	if (ls->cluster && !(ls->era_given && ls->cluster == era_cluster(ls->era)) && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, ":cluster=%u", ls->cluster);
	if (ls->nused && len < cap) {
		len += (size_t)snprintf(buf + len, cap - len, ":used=");
		for (size_t i = 0; i < ls->n && len < cap; i++)
			len += (size_t)snprintf(buf + len, cap - len, "%s%llu", i ? "," : "",
						(unsigned long long)ls->used[ls->nused > 1 ? i : 0]);
	}
	if (len < cap)
		len += (size_t)snprintf(buf + len, cap - len, "%s", suffix);
	if (len >= cap)	/* not with the limits above */
		return swt_error(err, SWT_EUSAGE, "layout '%s...': too long", buf);
	*out = swt_strdup(buf);
	return *out ? 0 : swt_error(err, SWT_ENOMEM, "out of memory");
}

/* swt_placement_init, with the spec named in messages as name. */
static int placement_parse(struct swt_placement *p, const char *spec, const char *name,
			   const struct swt_replay_input *traced, struct swt_err *err)
{
	struct layout_spec ls;
	uint64_t total = 0;
	int64_t prio;
	size_t n, i;
	int kind, ret = 0;

	memset(p, 0, sizeof(*p));
	if (!strcmp(spec, "traced")) {
		p->traced = 1;
		p->spec = swt_strdup(spec);
		if (!p->spec)
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
		snprintf(p->description, sizeof(p->description), "the recorded placement");
		goto out;
	}
	p->ncpus = traced->ncpus ? traced->ncpus : 1;
	if (swt_swapsim_era_parse(traced->kernel, &p->era)) {
		p->era = SWT_SWAPSIM_ERA_6_15;
		p->era_assumed = 1;
	}
	ret = parse_spec(spec, name, traced->page_shift, &ls, err);
	if (!ret)
		/* the run's name: the same layout is stored and printed alike however given */
		ret = format_spec(&ls, traced->page_shift, "", &p->spec, err);
	if (ret)
		goto out;
	n = ls.n;
	if (ls.era_given)
		p->era = ls.era;
	p->cluster_slots = ls.cluster ? ls.cluster : era_cluster(p->era);
	if (!ls.era_given && !p->era_assumed &&
	    swt_swapsim_era_parse_given(traced->kernel, &(enum swt_swapsim_era){ 0 })) {
		/* taken as the oldest era modelled, its allocator would be another kernel's */
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': the traced kernel %s is older than the "
				"slot allocators modelled (3.16 on): give one, e.g. '%s:era=3.16'",
				name, traced->kernel, name);
		goto out;
	}
	kind = ls.seen & (1u << OPT_KIND) ? ls.kind : traced_kind(traced);
	prio = ls.seen & (1u << OPT_PRIO) ? ls.prio : traced->nr_areas ? traced->areas[0].priority : -2;

	/* default size: the traced areas' total (headers included) shared equally */
	for (i = 0; i < traced->nr_areas; i++) {
		total += traced->areas[i].slots;
		for (size_t k = 0; k < n && !ls.size && traced->areas[i].slots_guessed; k++)
			if (!ls.devs[k].pages) {
				/* the pages would fill the devices to the brim: no answer */
				ret = swt_error(err, SWT_EUSAGE, "layout '%s': the capture records no "
						"size of swap area %s (a block trace alone?), so the "
						"devices need one: e.g. '%s:size=1G' or 'devices=1G,...'",
						name, traced->areas[i].dev, name);
				goto out;
			}
	}
	p->devs = calloc(n, sizeof(*p->devs));
	if (!p->devs) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	p->ndevs = n;
	for (i = 0; i < n; i++) {
		struct swt_swapsim_device *d = &p->devs[i];
		const struct dev_spec *ds = &ls.devs[i];

		d->slots = ds->pages ? ds->pages : ls.size ? ls.size : total / n;
		d->priority = ds->has_prio ? ds->prio : prio;
		if (!ds->has_prio && !(ls.seen & (1u << OPT_PRIO)) && prio < 0)
			/* swapped on without one, as the traced areas were: the kernel's -2, -3, ... */
			d->priority = -2 - (int64_t)i;
		d->rotational = ds->kind >= 0 ? ds->kind : kind;
		d->used_at_start = ls.nused ? ls.used[ls.nused > 1 ? i : 0] : 0;
		if (d->slots < 2 || d->used_at_start >= d->slots - 1) {
			ret = swt_error(err, SWT_EUSAGE, "layout '%s': device %zu would hold %llu pages "
					"(at least 2), %llu of them used at start", name, i,
					(unsigned long long)d->slots,
					(unsigned long long)d->used_at_start);
			goto out;
		}
	}
	{
		/* the allocator's bitmap and clusters are as big as the devices */
		double bytes = 0;
		int64_t avail_kib = swt_mem_available_kib();

		/*
		 * and the replay's slot tables (swt_replay_slot_tables_fit) as
		 * high as the pages can reach: past the used= ones by every
		 * page of the trace and a cluster at most
		 */
		for (i = 0; i < n; i++) {
			double reach = (double)p->devs[i].used_at_start + (double)traced->nr_outs +
				       (double)traced->nr_faults + (double)p->cluster_slots;

			bytes += (double)p->devs[i].slots * (1.0 / 8 + 16.0 / p->cluster_slots) +
				 SWT_MIN(reach, (double)p->devs[i].slots) * SWT_SLOT_TABLE_BYTES;
		}
		if (avail_kib >= 0 && bytes > (double)avail_kib * 1024) {
			ret = swt_error(err, SWT_EUSAGE, "layout '%s': devices this big take %.1f GiB "
					"to simulate, more than the %.1f GiB of memory available",
					name, bytes / (1 << 30), (double)avail_kib / (1 << 20));
			goto out;
		}
	}
	describe(p, traced, ls.era_given);
out:
	if (ret)
		swt_placement_release(p);
	return ret;
}

int swt_placement_init(struct swt_placement *p, const char *spec,
		       const struct swt_replay_input *traced, struct swt_err *err)
{
	return placement_parse(p, spec, spec, traced, err);
}

void swt_layout_specs_free(char **specs, size_t n)
{
	for (size_t i = 0; specs && i < n; i++)
		free(specs[i]);
	free(specs);
}

/*
 * spec without its option "spread" into *base (malloc'd): *spread set when
 * it had it (not as its head: "spread" alone is no layout), *used when it
 * gives used= too.
 */
static int strip_spread(const char *spec, char **base, int *spread, int *used, struct swt_err *err)
{
	char *copy = swt_strdup(spec), *save = NULL, *tok;
	int ret = 0;

	*spread = *used = 0;
	*base = calloc(1, strlen(spec) + 1);
	if (!copy || !*base) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	/* "4:spread:" is "4:spread" to strtok, below */
	if (spec[0] && has_empty_item(spec)) {
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': an empty option or list item", spec);
		goto out;
	}
	for (tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (!strcmp(tok, "spread") && **base) {
			if (*spread) {
				ret = swt_error(err, SWT_EUSAGE, "layout '%s': option given twice "
						"'spread'", spec);
				goto out;
			}
			*spread = 1;
			continue;
		}
		*used |= !strncmp(tok, "used=", 5);
		if (**base)
			strcat(*base, ":");
		strcat(*base, tok);
	}
out:
	free(copy);
	if (ret) {
		free(*base);
		*base = NULL;
	}
	return ret;
}

int swt_layout_canonical(const char *spec, uint32_t page_shift, char **out, struct swt_err *err)
{
	struct layout_spec ls;
	char *base = NULL;
	int spread, used, ret;

	*out = NULL;
	ret = strip_spread(spec, &base, &spread, &used, err);
	if (ret)
		return ret;
	if (spread && used) {
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': spread sets used= itself; give one "
				"or the other", spec);
	} else if (!spread && !strcmp(base, "traced")) {
		*out = swt_strdup(base);
		if (!*out)
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
	} else {
		ret = parse_spec(base, spec, page_shift, &ls, err);
		/* spread last: it stands for the layout at each used= (swt_layout_expand) */
		if (!ret)
			ret = format_spec(&ls, page_shift, spread ? ":spread" : "", out, err);
	}
	free(base);
	return ret;
}

int swt_layout_expand(const char *spec, const struct swt_replay_input *traced, char ***specs,
		      size_t *n, struct swt_err *err)
{
	struct swt_placement p = { 0 };
	char *base = NULL, **out = NULL;
	size_t count = 0, ndevs;
	int spread, used, ret;

	*specs = NULL;
	*n = 0;
	ret = strip_spread(spec, &base, &spread, &used, err);
	if (ret)
		goto out;
	if (!spread) {
		count = 1;
		out = calloc(1, sizeof(*out));
		if (!out) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		ret = swt_layout_canonical(spec, traced->page_shift, &out[0], err);
		goto out;
	}
	if (used) {
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': spread sets used= itself; give one "
				"or the other", spec);
		goto out;
	}
	/* parsed without "spread", named as given; p.spec is its canonical spelling */
	ret = placement_parse(&p, base, spec, traced, err);
	if (ret)
		goto out;
	ndevs = p.ndevs;
	if (!ndevs) {
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': spread needs simulated devices, not "
				"the traced placement", spec);
		goto out;
	}
	if (ndevs > SWT_LAYOUT_SPREAD_MAX_DEVICES) {
		ret = swt_error(err, SWT_EUSAGE, "layout '%s': spread takes at most %d devices "
				"(2^N layouts)", spec, SWT_LAYOUT_SPREAD_MAX_DEVICES);
		goto out;
	}
	out = calloc((size_t)1 << ndevs, sizeof(*out));
	if (!out) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t mask = 0; mask < (size_t)1 << ndevs; mask++) {
		/*
		 * "BASE:used=" and one "0," or "1," per device: canonical, as
		 * used= is the last option and gives a count per device there
		 */
		char *s = malloc(strlen(p.spec) + 8 + 2 * ndevs);
		size_t at;

		if (!s) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		at = (size_t)sprintf(s, "%s:used=", p.spec);
		for (size_t d = 0; d < ndevs; d++)
			at += (size_t)sprintf(s + at, "%s%zu", d ? "," : "", (mask >> d) & 1);
		out[count++] = s;
	}
out:
	swt_placement_release(&p);
	free(base);
	if (ret) {
		swt_layout_specs_free(out, count);
		return ret;
	}
	*specs = out;
	*n = count;
	return 0;
}

/* ---- re-placement ------------------------------------------------------- */

struct pre_page {
	uint64_t slot;
	uint32_t area;
};

static int cmp_pre(const void *a, const void *b)
{
	const struct pre_page *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->area < y->area ? -1 : x->area > y->area;
}

/* A page named by a fault: vpage 0 when no fault says. */
struct page_id {
	uint64_t vpage;
	int32_t pid;
};

/* Where each page of the capture lands: index k < nr_outs is swap-out k, else a pre-trace page. */
struct replacer {
	const struct swt_replay_input *in;
	struct swt_swapsim *sim;
	uint32_t *dev;		/* [nr_outs + npre] */
	uint64_t *slot;
	/* [nr_outs + npre]: the page its first fault and its last fault name */
	struct page_id *first, *last;
	struct pre_page *pre;	/* pre-trace pages, placement order */
	size_t npre;
	size_t nunseen;		/* of which held slots no fault names (add_unseen_pages) */
	struct swt_map pre_index;	/* (area, slot) -> index into pre */
	int32_t **occupant;	/* per traced area and slot: page there now, -1 none */
	uint64_t *occ_slots;	/* per traced area: entries in occupant[] */
	uint64_t in_use;	/* simulated slots holding a page (used= ones included) */
};

static void replacer_release(struct replacer *r)
{
	for (size_t i = 0; r->occupant && i < r->in->nr_areas; i++)
		free(r->occupant[i]);
	free(r->occupant);
	free(r->occ_slots);
	free(r->dev);
	free(r->slot);
	free(r->first);
	free(r->last);
	free(r->pre);
	swt_map_release(&r->pre_index);
	swt_swapsim_free(r->sim);
}

/*
 * The slots below an area's highest pre-trace page that no fault of the
 * trace names held pages too, never faulted while it ran (or were free:
 * no trace tells): taken as held, they join the pre-trace pages, so that
 * these keep their neighbours as placed (on the identical layout, their
 * devices and slots) instead of being packed together.  A later write to
 * such a slot frees it, as for any page.  r->pre holds the *n seen pages;
 * the unseen ones are appended.
 */
static int add_unseen_pages(struct replacer *r, size_t *n, struct swt_err *err)
{
	const struct swt_replay_input *in = r->in;
	uint64_t *top = calloc(in->nr_areas ? in->nr_areas : 1, sizeof(*top));
	size_t seen = *n, unseen = 0, at;
	struct pre_page *grown;
	int ret = 0;

	if (!top)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < seen; i++)
		top[r->pre[i].area] = SWT_MAX(top[r->pre[i].area], r->pre[i].slot);
	/* slot 0 is the header's; each seen page is one of 1..top */
	for (size_t a = 0; a < in->nr_areas; a++)
		unseen += top[a];
	unseen -= seen;
	if (!unseen)
		goto out;
	if (seen + unseen > (size_t)INT32_MAX) {
		ret = swt_error(err, SWT_EUSAGE, "too many swapped-out pages to re-place");
		goto out;
	}
	{
		/* each held slot is a page to place: its entry here and its placement (replacer_init) */
		double bytes = (double)(in->nr_outs + seen + unseen) *
			       (double)(sizeof(*r->pre) + sizeof(*r->dev) + sizeof(*r->slot) +
					2 * sizeof(*r->first));
		int64_t avail_kib = swt_mem_available_kib();

		if (avail_kib >= 0 && bytes > (double)avail_kib * 1024) {
			ret = swt_error(err, SWT_ENOMEM, "re-placing %zu pages swapped out before the "
					"trace, with the %zu slots below them that no fault names, "
					"takes %.1f GiB, more than the %.1f GiB of memory available",
					seen, unseen, bytes / (1 << 30), (double)avail_kib / (1 << 20));
			goto out;
		}
	}
	grown = realloc(r->pre, (seen + unseen) * sizeof(*r->pre));
	if (!grown) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	r->pre = grown;
	at = seen;
	for (size_t a = 0; a < in->nr_areas; a++)
		for (uint64_t slot = 1; slot <= top[a]; slot++)
			if (!swt_map_get(&r->pre_index, a, slot, &(uint64_t){ 0 }))
				r->pre[at++] = (struct pre_page){ .slot = slot, .area = (uint32_t)a };
	r->nunseen = unseen;
	*n = at;
out:
	free(top);
	return ret;
}

/* Size every table: per-area occupancy, the pre-trace pages, the placements. */
static int replacer_init(struct replacer *r, const struct swt_replay_input *in, struct swt_err *err)
{
	size_t i, n = 0;
	int ret;

	r->in = in;
	r->occupant = calloc(in->nr_areas ? in->nr_areas : 1, sizeof(*r->occupant));
	r->occ_slots = calloc(in->nr_areas ? in->nr_areas : 1, sizeof(*r->occ_slots));
	r->pre = malloc((in->nr_faults ? in->nr_faults : 1) * sizeof(*r->pre));
	if (!r->occupant || !r->occ_slots || !r->pre ||
	    swt_map_init(&r->pre_index, in->nr_faults / 4 + 16))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	/*
	 * Occupancy of the traced slots the streams touch (only they are
	 * placed), not of the device: a slot the replay cannot index is
	 * refused, so that no table size wraps (an input not loaded from a
	 * database is checked here first).
	 */
	for (i = 0; i < in->nr_areas; i++)
		r->occ_slots[i] = 1;
	for (i = 0; i < in->nr_outs + in->nr_faults; i++) {
		uint32_t area = i < in->nr_outs ? in->outs[i].area : in->faults[i - in->nr_outs].area;
		uint64_t slot = i < in->nr_outs ? in->outs[i].slot : in->faults[i - in->nr_outs].slot;

		if (slot >= SWT_SLOT_LIMIT)
			return swt_error(err, SWT_EUSAGE, "swap area %s: slot %llu is beyond what the "
					 "replay handles (2^32)", in->areas[area].dev,
					 (unsigned long long)slot);
		if (slot >= r->occ_slots[area])
			r->occ_slots[area] = slot + 1;
	}
	for (i = 0; i < in->nr_areas; i++) {
		r->occupant[i] = malloc(r->occ_slots[i] * sizeof(int32_t));
		if (!r->occupant[i])
			return swt_error(err, SWT_ENOMEM, "out of memory");
		memset(r->occupant[i], 0xff, r->occ_slots[i] * sizeof(int32_t));
	}
	/* pre-trace pages: faulted with no swap-out before them, one per traced slot */
	for (i = 0; i < in->nr_faults; i++) {
		const struct swt_replay_fault *f = &in->faults[i];

		if (f->out >= 0 || swt_map_get(&r->pre_index, f->area, f->slot, &(uint64_t){ 0 }))
			continue;
		if (swt_map_put(&r->pre_index, f->area, f->slot, 0))
			return swt_error(err, SWT_ENOMEM, "out of memory");
		r->pre[n].area = f->area;
		r->pre[n].slot = f->slot;
		n++;
	}
	ret = add_unseen_pages(r, &n, err);
	if (ret)
		return ret;
	qsort(r->pre, n, sizeof(*r->pre), cmp_pre);
	for (i = 0; i < n; i++)
		if (swt_map_put(&r->pre_index, r->pre[i].area, r->pre[i].slot, i))
			return swt_error(err, SWT_ENOMEM, "out of memory");
	r->npre = n;
	if (in->nr_outs + n > (size_t)INT32_MAX)
		return swt_error(err, SWT_EUSAGE, "too many swapped-out pages to re-place");
	r->dev = malloc((in->nr_outs + n + 1) * sizeof(*r->dev));
	r->slot = malloc((in->nr_outs + n + 1) * sizeof(*r->slot));
	r->first = calloc(in->nr_outs + n + 1, sizeof(*r->first));
	r->last = calloc(in->nr_outs + n + 1, sizeof(*r->last));
	if (!r->dev || !r->slot || !r->first || !r->last)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (i = 0; i < in->nr_faults; i++) {
		const struct swt_replay_fault *f = &in->faults[i];
		uint64_t k;

		if (f->out >= 0)
			k = (uint64_t)f->out;
		else if (!swt_map_get(&r->pre_index, f->area, f->slot, &k))
			continue;
		else
			k += in->nr_outs;
		if (!f->vpage)
			continue;
		if (!r->first[k].vpage)
			r->first[k] = (struct page_id){ f->vpage, f->pid };
		r->last[k] = (struct page_id){ f->vpage, f->pid };
	}
	return 0;
}

static int too_small(struct swt_err *err, const struct swt_placement *p, const char *what, size_t k,
		     size_t n)
{
	return swt_error(err, SWT_EUSAGE,
			 "layout '%s' is too small: no free slot for %s %zu of %zu", p->spec, what,
			 k + 1, n);
}

/* Give the page index k (traced area, slot) a simulated slot on cpu. */
static int place(struct replacer *r, size_t k, uint32_t area, uint64_t slot, unsigned cpu,
		 struct swt_placement_stats *st)
{
	int32_t *occ = slot < r->occ_slots[area] ? &r->occupant[area][slot] : NULL;

	if (occ && *occ >= 0 && r->first[k].vpage && r->first[k].vpage == r->last[*occ].vpage &&
	    r->first[k].pid == r->last[*occ].pid) {
		/* the page last read from the slot is written back to it, and read again */
		r->dev[k] = r->dev[*occ];
		r->slot[k] = r->slot[*occ];
		*occ = (int32_t)k;
		st->in_place++;
		return 0;
	}
	if (occ && *occ >= 0) {
		/* the traced slot is written again: its previous page had left it */
		if (swt_swapsim_slot_put(r->sim, r->dev[*occ], r->slot[*occ]))
			return -SWT_ESTATE;
		st->freed++;
		r->in_use--;
	}
	if (swt_swapsim_slot_get(r->sim, cpu, &r->dev[k], &r->slot[k]))
		return -SWT_EUSAGE;
	r->in_use++;
	st->peak_used = SWT_MAX(st->peak_used, r->in_use);
	if (occ)
		*occ = (int32_t)k;
	return 0;
}

static int build_output(const struct replacer *r, const struct swt_placement *p,
			struct swt_replay_input **out, struct swt_err *err)
{
	const struct swt_replay_input *in = r->in;
	struct swt_replay_input *o = calloc(1, sizeof(*o));
	size_t i;
	int ret;

	if (!o)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	*o = *in;
	o->prep = NULL;		/* the engine's tables hold traced slots: prepared anew below */
	o->processes = (struct swt_map){ 0 };	/* the traced input's: its faults name processes already */
	o->areas = calloc(p->ndevs, sizeof(*o->areas));
	o->faults = malloc((in->nr_faults ? in->nr_faults : 1) * sizeof(*o->faults));
	o->outs = malloc((in->nr_outs ? in->nr_outs : 1) * sizeof(*o->outs));
	o->vmas = malloc((in->nr_vmas ? in->nr_vmas : 1) * sizeof(*o->vmas));
	/* the same faults and swap-outs, in the same order: the frees name them alike */
	o->frees = malloc((in->nr_frees ? in->nr_frees : 1) * sizeof(*o->frees));
	if (!o->areas || !o->faults || !o->outs || !o->vmas || !o->frees) {
		swt_replay_input_free(o);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	o->nr_areas = p->ndevs;
	for (i = 0; i < p->ndevs; i++) {
		struct swt_replay_area *a = &o->areas[i];

		a->id = (int64_t)i;
		snprintf(a->dev, sizeof(a->dev), "sim%zu", i);
		a->slots = p->devs[i].slots;
		a->rotational = p->devs[i].rotational;
		a->synchronous = 0;
		a->priority = p->devs[i].priority;
	}
	for (i = 0; i < in->nr_outs; i++) {
		o->outs[i] = in->outs[i];
		o->outs[i].area = r->dev[i];
		o->outs[i].slot = r->slot[i];
	}
	for (i = 0; i < in->nr_faults; i++) {
		const struct swt_replay_fault *f = &in->faults[i];
		uint64_t k;

		o->faults[i] = *f;
		if (f->out >= 0) {
			k = (uint64_t)f->out;
		} else {
			swt_map_get(&r->pre_index, f->area, f->slot, &k);
			k += in->nr_outs;
		}
		o->faults[i].area = r->dev[k];
		o->faults[i].slot = r->slot[k];
	}
	if (in->nr_vmas)
		memcpy(o->vmas, in->vmas, in->nr_vmas * sizeof(*o->vmas));
	if (in->nr_frees)
		memcpy(o->frees, in->frees, in->nr_frees * sizeof(*o->frees));
	{
		struct swt_err why = { 0 };

		/* the re-placed pages' slots size the tables: say which layout put them there */
		ret = swt_replay_prepare(o, &why);
		if (ret) {
			swt_replay_input_free(o);
			return swt_error(err, why.code, "layout '%s': %s%s", p->spec, why.msg,
					 why.code == SWT_ENOMEM && strstr(why.msg, "highest slot") ?
					 "; give it smaller devices (devices=SIZE,...)" : "");
		}
	}
	*out = o;
	return 0;
}

int swt_placement_apply(const struct swt_replay_input *in, const struct swt_placement *p,
			struct swt_replay_input **out, struct swt_placement_stats *stats,
			struct swt_err *err)
{
	struct swt_swapsim_config cfg = {
		.era = p->era,
		.cluster_slots = p->cluster_slots,
		.ncpus = p->ncpus ? p->ncpus : 1,
		.devs = p->devs,
		.ndevs = p->ndevs,
	};
	struct swt_placement_stats st = { 0 };
	struct replacer r;
	size_t i;
	int ret;

	*out = NULL;
	if (p->traced)
		return swt_error(err, SWT_EUSAGE, "layout 'traced' needs no re-placement");
	memset(&r, 0, sizeof(r));
	ret = replacer_init(&r, in, err);
	if (!ret)
		ret = swt_swapsim_alloc(&cfg, &r.sim, err);
	if (ret)
		goto out;
	for (i = 0; i < p->ndevs; i++) {
		st.usable += p->devs[i].slots - 1;	/* the header's slot is never handed out */
		r.in_use += p->devs[i].used_at_start;
	}
	st.peak_used = r.in_use;
	for (i = 0; i < r.npre; i++) {
		ret = place(&r, in->nr_outs + i, r.pre[i].area, r.pre[i].slot, 0, &st);
		if (ret) {
			ret = too_small(err, p, "page swapped out before the trace", i, r.npre);
			goto out;
		}
	}
	for (i = 0; i < in->nr_outs; i++) {
		const struct swt_replay_swapout *o = &in->outs[i];

		ret = place(&r, i, o->area, o->slot, o->cpu >= 0 ? (unsigned)o->cpu : 0, &st);
		if (ret) {
			ret = ret == -SWT_EUSAGE ? too_small(err, p, "swap-out", i, in->nr_outs)
						 : swt_error(err, SWT_ESTATE, "layout '%s': slot "
							     "bookkeeping failed", p->spec);
			goto out;
		}
		if (r.dev[i] == o->area) {
			st.same_device++;
			if (r.slot[i] == o->slot)
				st.same_slot++;
		}
	}
	st.outs = in->nr_outs;
	st.pretrace = r.npre - r.nunseen;
	st.unseen = r.nunseen;
	ret = build_output(&r, p, out, err);
	if (!ret && stats)
		*stats = st;
out:
	replacer_release(&r);
	return ret;
}
