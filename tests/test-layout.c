/*
 * What-if swap layouts: the slot allocator of each kernel era on small
 * eviction sequences (which device and slot each page gets, rotation,
 * per-CPU batches and clusters, cluster switches, priorities, slot reuse),
 * layout spec parsing, and the re-placement of a crafted capture.
 */
#include <stdlib.h>

#include "check.h"
#include "swapsim.h"
#include "util.h"

/* ---- the allocator ------------------------------------------------------ */

struct sim {
	struct swt_swapsim *s;
	struct swt_swapsim_device devs[4];
	struct swt_swapsim_config cfg;
};

/* ndev equal devices of `slots` slots, clusters of 8 to see switches early. */
static void sim_init(struct sim *m, enum swt_swapsim_era era, size_t ndev, uint64_t slots,
		     int rotational, unsigned ncpus)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < ndev; i++) {
		m->devs[i].slots = slots;
		m->devs[i].priority = 5;
		m->devs[i].rotational = rotational;
	}
	m->cfg.era = era;
	m->cfg.cluster_slots = 8;
	m->cfg.ncpus = ncpus;
	m->cfg.devs = m->devs;
	m->cfg.ndevs = ndev;
}

static void sim_start(struct sim *m)
{
	struct swt_err err = { 0 };

	CHECK_INT(swt_swapsim_alloc(&m->cfg, &m->s, &err), 0);
	if (err.code)
		fprintf(stderr, "%s\n", err.msg);
}

/* Allocate on cpu and check the device and slot the page gets. */
#define EXPECT(m, cpu, dev, slot)                                               \
	do {                                                                    \
		uint32_t _d = 99;                                               \
		uint64_t _s = 0;                                                \
		CHECK_INT(swt_swapsim_slot_get((m)->s, (cpu), &_d, &_s), 0);    \
		CHECK_INT(_d, (dev));                                           \
		CHECK_INT(_s, (slot));                                          \
	} while (0)

TEST(era_3_16_rotates_every_page)
{
	struct sim m;

	sim_init(&m, SWT_SWAPSIM_ERA_3_16, 2, 64, 1, 1);
	sim_start(&m);
	for (uint64_t slot = 1; slot <= 10; slot++) {
		EXPECT(&m, 0, 0, slot);	/* across the cluster 0 -> 1 switch at slot 8 */
		EXPECT(&m, 0, 1, slot);
	}
	swt_swapsim_free(m.s);

	/* SSDs rotate too, but each CPU fills its own cluster on each device */
	sim_init(&m, SWT_SWAPSIM_ERA_3_16, 2, 64, 0, 2);
	sim_start(&m);
	EXPECT(&m, 0, 0, 1);
	EXPECT(&m, 1, 1, 1);
	EXPECT(&m, 1, 0, 8);	/* CPU 1's first cluster on device 0: the next free one */
	EXPECT(&m, 0, 1, 8);
	EXPECT(&m, 0, 0, 2);	/* CPU 0 goes on in its cluster 0 */
	EXPECT(&m, 1, 1, 2);
	swt_swapsim_free(m.s);
}

TEST(era_4_11_per_cpu_batches_of_64)
{
	struct sim m;

	sim_init(&m, SWT_SWAPSIM_ERA_4_11, 2, 4096, 1, 2);
	sim_start(&m);
	/* CPU 0 takes a batch of 64 from device 0, CPU 1 the next batch from device 1 */
	EXPECT(&m, 0, 0, 1);
	EXPECT(&m, 1, 1, 1);
	for (uint64_t slot = 2; slot <= 64; slot++) {
		EXPECT(&m, 0, 0, slot);
		EXPECT(&m, 1, 1, slot);
	}
	/* batches used up: refills rotate, device 0 then device 1 */
	EXPECT(&m, 1, 0, 65);
	EXPECT(&m, 0, 1, 65);
	EXPECT(&m, 1, 0, 66);
	swt_swapsim_free(m.s);
}

TEST(era_4_11_cache_off_when_swap_runs_low)
{
	struct sim m;
	uint32_t dev;
	uint64_t slot;

	/* 2 x 199 usable slots, one CPU: caches on above 320 free, off below 128 */
	sim_init(&m, SWT_SWAPSIM_ERA_4_11, 2, 200, 1, 1);
	sim_start(&m);
	for (int batch = 0; batch < 4; batch++)
		for (uint64_t k = 1; k <= 64; k++)
			EXPECT(&m, 0, (uint32_t)(batch & 1), (uint64_t)(batch / 2) * 64 + k);
	/* 142 free: one more batch (129..192), leaving 78 */
	EXPECT(&m, 0, 0, 129);
	/*
	 * Below 128 the cache goes off and gives back its 63 unused slots;
	 * pages alternate, and device 0's cursor, whose cluster (192..199)
	 * was emptied, starts it over.
	 */
	EXPECT(&m, 0, 1, 129);
	EXPECT(&m, 0, 0, 192);
	EXPECT(&m, 0, 1, 130);
	EXPECT(&m, 0, 0, 193);
	CHECK_INT(swt_swapsim_used(m.s, 0), 131);
	/* until both are full */
	while (swt_swapsim_slot_get(m.s, 0, &dev, &slot) == 0)
		;
	CHECK_INT(swt_swapsim_used(m.s, 0) + swt_swapsim_used(m.s, 1), 2 * 199);
	swt_swapsim_free(m.s);
}

TEST(era_6_15_ssd_uses_up_a_cluster_per_cpu)
{
	struct sim m;

	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 2, 64, 0, 1);
	sim_start(&m);
	for (uint64_t slot = 1; slot <= 7; slot++)	/* cluster 0 holds slots 1..7 */
		EXPECT(&m, 0, 0, slot);
	for (uint64_t slot = 1; slot <= 7; slot++)
		EXPECT(&m, 0, 1, slot);
	for (uint64_t slot = 8; slot <= 15; slot++)
		EXPECT(&m, 0, 0, slot);
	EXPECT(&m, 0, 1, 8);
	swt_swapsim_free(m.s);

	/* two CPUs: each keeps its own cluster, on its own device */
	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 2, 64, 0, 2);
	sim_start(&m);
	EXPECT(&m, 0, 0, 1);
	EXPECT(&m, 1, 1, 1);
	EXPECT(&m, 0, 0, 2);
	EXPECT(&m, 1, 1, 2);
	for (uint64_t slot = 3; slot <= 7; slot++)
		EXPECT(&m, 0, 0, slot);
	EXPECT(&m, 0, 0, 8);	/* device 0 again: device 1 was requeued after it */
	swt_swapsim_free(m.s);
}

TEST(era_6_15_hdd_rotates_on_every_allocation)
{
	struct sim m;

	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 3, 64, 1, 2);
	sim_start(&m);
	for (uint64_t slot = 1; slot <= 9; slot++)
		for (uint32_t dev = 0; dev < 3; dev++)
			EXPECT(&m, (unsigned)(slot + dev) & 1, dev, slot);	/* the CPU does not matter */
	swt_swapsim_free(m.s);
}

TEST(priorities_higher_first_equal_round_robin)
{
	struct sim m;

	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 3, 64, 1, 1);
	m.devs[0].slots = 4;	/* 3 usable */
	m.devs[0].priority = 10;
	m.devs[2].priority = 4;
	sim_start(&m);
	EXPECT(&m, 0, 0, 1);
	EXPECT(&m, 0, 0, 2);
	EXPECT(&m, 0, 0, 3);
	EXPECT(&m, 0, 1, 1);	/* device 0 full: the next priority, alone at 5 */
	EXPECT(&m, 0, 1, 2);
	CHECK_INT(swt_swapsim_slot_put(m.s, 0, 2), 0);
	EXPECT(&m, 0, 0, 2);	/* room again at priority 10 */
	EXPECT(&m, 0, 1, 3);
	CHECK_INT(swt_swapsim_used(m.s, 2), 0);
	swt_swapsim_free(m.s);

	/* swapon order decides among equals; a lower priority given later waits */
	sim_init(&m, SWT_SWAPSIM_ERA_3_16, 3, 64, 1, 1);
	m.devs[0].priority = 1;
	sim_start(&m);
	EXPECT(&m, 0, 1, 1);
	EXPECT(&m, 0, 2, 1);
	EXPECT(&m, 0, 1, 2);
	CHECK_INT(swt_swapsim_used(m.s, 0), 0);
	swt_swapsim_free(m.s);
}

TEST(freed_slots_are_reused_from_partial_clusters_first)
{
	struct sim m;
	uint64_t slot;

	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 1, 64, 1, 1);
	sim_start(&m);
	for (slot = 1; slot <= 20; slot++)
		EXPECT(&m, 0, 0, slot);
	CHECK_INT(swt_swapsim_slot_put(m.s, 0, 3), 0);
	CHECK_INT(swt_swapsim_slot_put(m.s, 0, 10), 0);
	CHECK_INT(swt_swapsim_slot_put(m.s, 0, 10), -SWT_EUSAGE);	/* not allocated */
	CHECK_INT(swt_swapsim_slot_put(m.s, 0, 0), -SWT_EUSAGE);	/* the header */
	/* the cursor finishes its cluster (16..23), then partial clusters in freeing order */
	for (slot = 21; slot <= 23; slot++)
		EXPECT(&m, 0, 0, slot);
	EXPECT(&m, 0, 0, 3);
	EXPECT(&m, 0, 0, 10);
	EXPECT(&m, 0, 0, 24);	/* then free clusters, ascending */
	/* a cluster emptied entirely goes to the back of the free list */
	for (slot = 8; slot <= 15; slot++)
		CHECK_INT(swt_swapsim_slot_put(m.s, 0, slot), 0);
	for (slot = 25; slot <= 63; slot++)
		EXPECT(&m, 0, 0, slot);
	EXPECT(&m, 0, 0, 8);
	swt_swapsim_free(m.s);
}

TEST(holes_in_a_cluster_in_use)
{
	struct sim m;
	uint64_t slot;

	/*
	 * A slot freed behind the cursor is not seen by it; allocating again
	 * moves the cluster back to the frag list, where its hole waits until
	 * no free cluster is left.
	 */
	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 1, 64, 1, 1);
	sim_start(&m);
	for (slot = 1; slot <= 5; slot++)
		EXPECT(&m, 0, 0, slot);
	CHECK_INT(swt_swapsim_slot_put(m.s, 0, 2), 0);
	EXPECT(&m, 0, 0, 6);
	EXPECT(&m, 0, 0, 7);
	for (slot = 8; slot <= 63; slot++)
		EXPECT(&m, 0, 0, slot);
	EXPECT(&m, 0, 0, 2);
	swt_swapsim_free(m.s);

	/* another CPU's SSD cluster with a freed slot is shared (the kernel's nonfull list) */
	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 1, 64, 0, 2);
	sim_start(&m);
	EXPECT(&m, 0, 0, 1);
	EXPECT(&m, 0, 0, 2);
	EXPECT(&m, 0, 0, 3);
	CHECK_INT(swt_swapsim_slot_put(m.s, 0, 1), 0);
	EXPECT(&m, 1, 0, 1);	/* CPU 1's new cluster: the nonfull one, from its start */
	EXPECT(&m, 1, 0, 4);
	EXPECT(&m, 0, 0, 5);	/* CPU 0 goes on past them */
	swt_swapsim_free(m.s);
}

TEST(default_priorities_round_robin_from_4_14)
{
	struct sim m;

	/* swapon without -p: -2, -3 -- one class on a one-node machine (4.14+) */
	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 3, 64, 1, 1);
	m.devs[0].priority = -2;
	m.devs[1].priority = -3;
	m.devs[2].priority = 0;	/* any priority given comes first */
	sim_start(&m);
	EXPECT(&m, 0, 2, 1);
	EXPECT(&m, 0, 2, 2);
	swt_swapsim_free(m.s);
	m.devs[2].priority = -4;
	sim_start(&m);
	EXPECT(&m, 0, 0, 1);
	EXPECT(&m, 0, 1, 1);
	EXPECT(&m, 0, 2, 1);
	EXPECT(&m, 0, 0, 2);
	swt_swapsim_free(m.s);

	/* before, they were strictly ordered */
	sim_init(&m, SWT_SWAPSIM_ERA_3_16, 2, 64, 1, 1);
	m.devs[0].priority = -3;
	m.devs[1].priority = -2;
	sim_start(&m);
	EXPECT(&m, 0, 1, 1);
	EXPECT(&m, 0, 1, 2);
	CHECK_INT(swt_swapsim_used(m.s, 0), 0);
	swt_swapsim_free(m.s);
}

TEST(ssd_pages_at_start_leave_cpu_0_in_their_cluster)
{
	struct sim m;

	/* 6.15+ SSD: the next page follows the one already there, not the next cluster */
	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 1, 64, 0, 2);
	m.devs[0].used_at_start = 1;
	sim_start(&m);
	EXPECT(&m, 0, 0, 2);
	EXPECT(&m, 0, 0, 3);
	EXPECT(&m, 1, 0, 8);	/* another CPU: a cluster of its own */
	swt_swapsim_free(m.s);
	m.devs[0].used_at_start = 3;
	sim_start(&m);
	EXPECT(&m, 0, 0, 4);
	swt_swapsim_free(m.s);
}

TEST(full_devices_and_pages_there_at_start)
{
	struct sim m;
	uint32_t dev;
	uint64_t slot;
	struct swt_err err = { 0 };

	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 2, 3, 1, 1);
	m.devs[0].used_at_start = 1;
	sim_start(&m);
	EXPECT(&m, 0, 0, 2);
	EXPECT(&m, 0, 1, 1);
	EXPECT(&m, 0, 1, 2);
	CHECK_INT(swt_swapsim_slot_get(m.s, 0, &dev, &slot), -SWT_ESTATE);
	CHECK_INT(swt_swapsim_used(m.s, 0), 2);
	swt_swapsim_free(m.s);

	sim_init(&m, SWT_SWAPSIM_ERA_6_15, 1, 3, 1, 1);
	m.devs[0].used_at_start = 3;
	CHECK_INT(swt_swapsim_alloc(&m.cfg, &m.s, &err), -SWT_EUSAGE);
	m.devs[0].used_at_start = 0;
	m.cfg.cluster_slots = 12;
	CHECK_INT(swt_swapsim_alloc(&m.cfg, &m.s, &err), -SWT_EUSAGE);
	CHECK(m.s == NULL);
	swt_swapsim_free(NULL);
}

TEST(eras_from_kernel_releases)
{
	enum swt_swapsim_era e;

	CHECK_INT(swt_swapsim_era_parse("6.18.44-fc-v657", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_6_15);
	CHECK_INT(swt_swapsim_era_parse("6.15", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_6_15);
	CHECK_INT(swt_swapsim_era_parse("6.14.2", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_4_11);
	CHECK_INT(swt_swapsim_era_parse("5.10.0-23-amd64", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_4_11);
	CHECK_INT(swt_swapsim_era_parse("4.10", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_3_16);
	CHECK_INT(swt_swapsim_era_parse("3.2", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_3_16);
	CHECK_INT(swt_swapsim_era_parse("7", &e), -SWT_EUSAGE);
	CHECK_INT(swt_swapsim_era_parse("6.x", &e), -SWT_EUSAGE);
	CHECK_INT(swt_swapsim_era_parse("", &e), -SWT_EUSAGE);
	/* an era given by the user must be one modelled: 3.16 on */
	CHECK_INT(swt_swapsim_era_parse_given("3.16", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_3_16);
	CHECK_INT(swt_swapsim_era_parse_given("5.10.0-23-amd64", &e), 0);
	CHECK_INT(e, SWT_SWAPSIM_ERA_4_11);
	CHECK_INT(swt_swapsim_era_parse_given("2.6", &e), -SWT_EUSAGE);
	CHECK_INT(swt_swapsim_era_parse_given("3.15", &e), -SWT_EUSAGE);
	CHECK_INT(swt_swapsim_era_parse_given("x", &e), -SWT_EUSAGE);
	CHECK_STR(swt_swapsim_era_name(SWT_SWAPSIM_ERA_4_11), "4.11-6.14");
}

/* ---- layout specs ------------------------------------------------------- */

static struct swt_replay_area traced_areas[2];

static struct swt_replay_input traced_input(size_t nareas)
{
	struct swt_replay_input in = { 0 };

	for (size_t i = 0; i < 2; i++) {
		memset(&traced_areas[i], 0, sizeof(traced_areas[i]));
		traced_areas[i].id = (int64_t)i;
		snprintf(traced_areas[i].dev, sizeof(traced_areas[i].dev), "7:%zu", i);
		traced_areas[i].slots = 65536;
		traced_areas[i].rotational = 1;
		traced_areas[i].priority = 5;
	}
	in.areas = traced_areas;
	in.nr_areas = nareas;
	in.page_shift = 12;
	in.ncpus = 2;
	snprintf(in.kernel, sizeof(in.kernel), "6.18.44-fc-v657");
	return in;
}

TEST(layout_specs)
{
	struct swt_replay_input in = traced_input(2);
	struct swt_placement p;
	struct swt_err err = { 0 };

	CHECK_INT(swt_placement_init(&p, "traced", &in, &err), 0);
	CHECK(p.traced);
	CHECK_STR(p.spec, "traced");
	swt_placement_release(&p);

	/* N equal devices share the traced total, like the traced ones */
	CHECK_INT(swt_placement_init(&p, "4", &in, &err), 0);
	CHECK(!p.traced);
	CHECK_INT(p.ndevs, 4);
	CHECK_INT(p.devs[3].slots, 32768);
	CHECK_INT(p.devs[3].priority, 5);
	CHECK_INT(p.devs[3].rotational, 1);
	CHECK_INT(p.era, SWT_SWAPSIM_ERA_6_15);
	CHECK_INT(p.cluster_slots, 512);
	CHECK_INT(p.ncpus, 2);
	CHECK_STR(p.description, "4 x 128 MiB hdd at priority 5; allocator 6.15+ "
				 "(kernel 6.18.44-fc-v657), clusters of 512");
	swt_placement_release(&p);

	CHECK_INT(swt_placement_init(&p, "2:ssd:era=4.11:prio=-2:size=1G:cluster=256", &in, &err), 0);
	CHECK_INT(p.ndevs, 2);
	CHECK_INT(p.devs[1].slots, 262144);
	CHECK_INT(p.devs[1].priority, -2);
	CHECK_INT(p.devs[1].rotational, 0);
	CHECK_INT(p.era, SWT_SWAPSIM_ERA_4_11);
	CHECK_INT(p.cluster_slots, 256);
	CHECK_STR(p.description, "2 x 1 GiB ssd at priority -2; allocator 4.11-6.14, clusters of 256");
	swt_placement_release(&p);

	CHECK_INT(swt_placement_init(&p, "devices=512M@5,256M/ssd,1024p@7:era=3.16:used=1,0,2", &in,
				     &err), 0);
	CHECK_INT(p.ndevs, 3);
	CHECK_INT(p.devs[0].slots, 131072);
	CHECK_INT(p.devs[1].slots, 65536);
	CHECK_INT(p.devs[1].priority, 5);	/* the traced one's */
	CHECK_INT(p.devs[1].rotational, 0);
	CHECK_INT(p.devs[2].slots, 1024);
	CHECK_INT(p.devs[2].priority, 7);
	CHECK_INT(p.devs[2].used_at_start, 2);
	CHECK_INT(p.era, SWT_SWAPSIM_ERA_3_16);
	CHECK_INT(p.cluster_slots, 256);	/* before THP swap (4.13) */
	swt_placement_release(&p);
	CHECK_INT(swt_placement_init(&p, "2:era=3.16:cluster=512", &in, &err), 0);
	CHECK_INT(p.cluster_slots, 512);
	swt_placement_release(&p);

	/*
	 * Traced areas swapped on without a priority (negative): new devices
	 * get the kernel's defaults, -2, -3, ..., which the 3.16 allocator
	 * fills one at a time; a priority given applies to all.
	 */
	traced_areas[0].priority = -2;
	traced_areas[1].priority = -3;
	CHECK_INT(swt_placement_init(&p, "3:era=3.16", &in, &err), 0);
	CHECK_INT(p.devs[0].priority, -2);
	CHECK_INT(p.devs[1].priority, -3);
	CHECK_INT(p.devs[2].priority, -4);
	swt_placement_release(&p);
	CHECK_INT(swt_placement_init(&p, "devices=1G,1G@-7:prio=-2", &in, &err), 0);
	CHECK_INT(p.devs[0].priority, -2);
	CHECK_INT(p.devs[1].priority, -7);
	swt_placement_release(&p);
	traced_areas[0].priority = traced_areas[1].priority = 5;

	CHECK_INT(swt_placement_init(&p, "2:era=traced", &in, &err), 0);
	CHECK_INT(p.era, SWT_SWAPSIM_ERA_6_15);
	swt_placement_release(&p);
	CHECK_INT(swt_placement_init(&p, "devices=1G@x", &in, &err), -SWT_EUSAGE);
	CHECK(strstr(err.msg, "'1G@x'") != NULL);
	swt_err_clear(&err);

	/* a traced kernel older than the allocators modelled: an era must be given */
	snprintf(in.kernel, sizeof(in.kernel), "3.10.0-1160.el7.x86_64");
	CHECK_INT(swt_placement_init(&p, "2", &in, &err), -SWT_EUSAGE);
	CHECK_STR(err.msg, "layout '2': the traced kernel 3.10.0-1160.el7.x86_64 is older than the "
			   "slot allocators modelled (3.16 on): give one, e.g. '2:era=3.16'");
	swt_err_clear(&err);
	CHECK_INT(swt_placement_init(&p, "2:era=traced", &in, &err), -SWT_EUSAGE);
	swt_err_clear(&err);
	CHECK_INT(swt_placement_init(&p, "2:era=3.16", &in, &err), 0);
	CHECK_INT(p.era, SWT_SWAPSIM_ERA_3_16);
	swt_placement_release(&p);
	snprintf(in.kernel, sizeof(in.kernel), "6.18.44-fc-v657");

	/* no kernel in the capture: the newest allocator, said so */
	in.kernel[0] = '\0';
	CHECK_INT(swt_placement_init(&p, "1", &in, &err), 0);
	CHECK(p.era_assumed);
	CHECK_INT(p.devs[0].slots, 131072);
	swt_placement_release(&p);
	in.kernel[0] = '6';

	static const char *const bad[] = {
		"", "0", "33", "4x", "-1", "4:foo", "4:era=6", "4:era=2.6", "4:prio=x", "4:size=12", "4:size=0M",
		"4:cluster=100", "4:used=1,2", "devices=", "devices=12Q", "devices=1G@x",
		"devices=1G/tape", "2:size=4096", "2:used=70000",
		/* a repeat, or a default every device overrides, would be ignored */
		"4:hdd:ssd", "4:era=3.16:era=traced", "4:used=1:used=0", "4:size=1G:size=2G",
		"4:prio=1:prio=2", "4:cluster=256:cluster=512", "devices=1G,1G:size=2G",
		"devices=1G@3,1G@4:prio=2", "devices=1G/ssd:hdd",
		/* an empty item, another spelling of a layout that runs as another */
		"4:", ":4", "4::ssd", "devices=1G,", "devices=,1G", "devices=1G,,1G",
		"4:used=1,0,,0,0", "4:used=,1",
	};
	for (size_t i = 0; i < SWT_ARRAY_SIZE(bad); i++) {
		swt_err_clear(&err);
		if (swt_placement_init(&p, bad[i], &in, &err) != -SWT_EUSAGE)
			fprintf(stderr, "spec '%s' accepted\n", bad[i]), check_failures++;
		else if (!strstr(err.msg, "layout '"))
			fprintf(stderr, "spec '%s': message '%s'\n", bad[i], err.msg), check_failures++;
	}
}

/*
 * The captures a layout's defaults come from, differing in each: 0 two
 * rotational areas of 256 MiB at priority 5 (traced_input), 1 at -2 and -3
 * (swapped on without one), 2 SSDs, 3 one area.
 */
enum { NR_CAPTURES = 4 };

static struct swt_replay_input capture_variant(int v)
{
	struct swt_replay_input in = traced_input(v == 3 ? 1 : 2);

	if (v == 1) {
		traced_areas[0].priority = -2;
		traced_areas[1].priority = -3;
	}
	if (v == 2)
		traced_areas[0].rotational = traced_areas[1].rotational = 0;
	return in;
}

/* Whether two specs are one layout on the capture: the same devices, allocator and offsets. */
static int same_placement(const char *a, const char *b, const struct swt_replay_input *in)
{
	struct swt_placement pa, pb;
	struct swt_err err = { 0 };
	int same;

	if (swt_placement_init(&pa, a, in, &err))
		return 0;
	if (swt_placement_init(&pb, b, in, &err)) {
		swt_placement_release(&pa);
		return 0;
	}
	same = pa.ndevs == pb.ndevs && pa.era == pb.era && pa.cluster_slots == pb.cluster_slots &&
	       pa.ncpus == pb.ncpus && !strcmp(pa.description, pb.description);
	for (size_t i = 0; same && i < pa.ndevs; i++)
		same = pa.devs[i].slots == pb.devs[i].slots &&
		       pa.devs[i].priority == pb.devs[i].priority &&
		       pa.devs[i].rotational == pb.devs[i].rotational &&
		       pa.devs[i].used_at_start == pb.devs[i].used_at_start;
	swt_placement_release(&pa);
	swt_placement_release(&pb);
	return same;
}

/*
 * One spelling per layout: the same layout given otherwise is stored and
 * printed alike (docs/layouts.md), and a repeat is known as one; each
 * was a layout of its own ("4" and "04" both stored).
 */
TEST(layout_canonical)
{
	static const char *const same[][2] = {
		/* already canonical: as replay stored them before */
		{ "traced", "traced" },
		{ "4", "4" },
		{ "4:spread", "4:spread" },
		{ "4:ssd", "4:ssd" },
		{ "2:hdd:era=4.11", "2:hdd:era=4.11" },
		{ "devices=512M@10,512M@5", "devices=512M@10,512M@5" },
		{ "4:used=1,0,0,0", "4:used=1,0,0,0" },
		{ "1:size=4T:used=100", "1:size=4T:used=100" },
		/* numbers without leading zeros */
		{ "04", "4" },
		{ "4:prio=-02", "4:prio=-2" },
		{ "4:prio=-0", "4:prio=0" },
		{ "2:cluster=0256", "2:cluster=256" },
		{ "4:used=01,0,0,00", "4:used=1,0,0,0" },
		/* options in one order: hdd/ssd, prio, size, era, cluster, used; spread last */
		{ "4:prio=-2:ssd", "4:ssd:prio=-2" },
		{ "2:used=0,1:cluster=256:era=4.11:size=1G:prio=3:hdd",
		  "2:hdd:prio=3:size=1G:era=4.11:cluster=256:used=0,1" },
		{ "4:spread:ssd", "4:ssd:spread" },
		{ "devices=1G,1G@3:spread", "devices=1G,1G@3:spread" },
		/* sizes in the largest unit that holds them whole (4 KiB pages) */
		{ "devices=131072p@05,524288K@10", "devices=512M@5,512M@10" },
		{ "2:size=1024M", "2:size=1G" },
		{ "2:size=1536m", "2:size=1536M" },
		{ "devices=3p/ssd,10K", "devices=12K/ssd,8K" },
		/* an era by its allocator; era=traced and an era's own cluster size say nothing */
		{ "2:era=5.10.0-23-amd64", "2:era=4.11" },
		{ "2:era=6.18", "2:era=6.15" },
		{ "2:era=3.16:cluster=256", "2:era=3.16" },
		{ "2:era=4.11:cluster=512", "2:era=4.11" },
		{ "2:era=4.11:cluster=256", "2:era=4.11:cluster=256" },
		{ "2:era=traced", "2" },
		/* one count per device, as spread names the offsets */
		{ "4:used=1", "4:used=1,1,1,1" },
		{ "4:used=0", "4:used=0,0,0,0" },
		{ "devices=1G,2G:used=3", "devices=1G,2G:used=3,3" },
		/*
		 * what devices= gives every device, once: a priority or kind the
		 * spec sets for every device is the option when all are equal,
		 * each device's own when not; devices of one size and nothing of
		 * their own are N of that size (each stored apart before)
		 */
		{ "devices=512M,512M", "2:size=512M" },
		{ "devices=131072p,524288K,512M:ssd:used=1", "3:ssd:size=512M:used=1,1,1" },
		{ "devices=1G", "1:size=1G" },
		{ "devices=512M@5,512M@5", "2:prio=5:size=512M" },
		{ "devices=131072p@05,524288K@5", "2:prio=5:size=512M" },
		{ "devices=512M@-2,512M:prio=-2", "2:prio=-2:size=512M" },
		{ "devices=512M/ssd,512M/ssd", "2:ssd:size=512M" },
		{ "devices=512M@5/hdd,512M/hdd:prio=5:era=3.16", "2:hdd:prio=5:size=512M:era=3.16" },
		{ "devices=512M@5,1G@5", "devices=512M,1G:prio=5" },
		{ "devices=512M,1G@5:prio=5", "devices=512M,1G:prio=5" },
		{ "devices=512M/ssd,1G:ssd", "devices=512M,1G:ssd" },
		{ "devices=512M@10,512M:prio=5", "devices=512M@10,512M@5" },
		{ "devices=1G,1G@-7:prio=-2", "devices=1G@-2,1G@-7" },
		{ "devices=512M/hdd,512M:ssd", "devices=512M/hdd,512M/ssd" },
		{ "devices=512M@5/ssd,512M@5", "devices=512M/ssd,512M:prio=5" },
		{ "devices=512M@5,512M@5:spread", "2:prio=5:size=512M:spread" },
		/* a device left to the capture: kept as given (apart[] below) */
		{ "devices=512M@5,512M", "devices=512M@5,512M" },
		{ "devices=512M/ssd,512M", "devices=512M/ssd,512M" },
	};
	/*
	 * Spellings of one layout on some captures only, as a device left to
	 * the capture takes its priority (-2, -3, ... after negative traced
	 * ones) or kind, or N devices its size: not one spelling
	 */
	static const char *const apart[][2] = {
		{ "devices=512M,512M", "devices=512M@5,512M@5" },
		{ "devices=512M@5,512M", "devices=512M@5,512M@5" },
		{ "2:size=512M", "2:prio=5:size=512M" },
		{ "devices=512M,512M", "devices=512M/hdd,512M/hdd" },
		{ "devices=256M,256M", "2" },
	};
	struct swt_replay_input in = traced_input(2);
	struct swt_err err = { 0 };

	for (size_t i = 0; i < SWT_ARRAY_SIZE(same); i++) {
		char *canon = NULL, *again = NULL;

		CHECK_INT(swt_layout_canonical(same[i][0], 12, &canon, &err), 0);
		if (!canon)
			continue;
		if (strcmp(canon, same[i][1]))
			fprintf(stderr, "'%s' spelt '%s', not '%s'\n", same[i][0], canon, same[i][1]),
				check_failures++;
		/* the canonical spelling is its own */
		CHECK_INT(swt_layout_canonical(canon, 12, &again, &err), 0);
		if (again && strcmp(again, canon))
			fprintf(stderr, "'%s' spelt '%s'\n", canon, again), check_failures++;
		free(canon);
		free(again);
		if (!strstr(same[i][0], "spread")) {
			struct swt_placement p;

			/* the placement's name, which runs are stored and printed under */
			CHECK_INT(swt_placement_init(&p, same[i][0], &in, &err), 0);
			CHECK_STR(p.spec, same[i][1]);
			swt_placement_release(&p);
			/* and the layout it names, whatever the capture */
			for (int v = 0; v < NR_CAPTURES; v++) {
				struct swt_replay_input other = capture_variant(v);

				if (!same_placement(same[i][0], same[i][1], &other))
					fprintf(stderr, "'%s' and '%s' differ on capture %d\n", same[i][0],
						same[i][1], v), check_failures++;
			}
		}
	}
	for (size_t i = 0; i < SWT_ARRAY_SIZE(apart); i++) {
		char *a = NULL, *b = NULL;
		int differ = 0;

		CHECK_INT(swt_layout_canonical(apart[i][0], 12, &a, &err), 0);
		CHECK_INT(swt_layout_canonical(apart[i][1], 12, &b, &err), 0);
		if (a && b && !strcmp(a, b))
			fprintf(stderr, "'%s' and '%s' both spelt '%s'\n", apart[i][0], apart[i][1], a),
				check_failures++;
		free(a);
		free(b);
		for (int v = 0; v < NR_CAPTURES; v++) {
			struct swt_replay_input other = capture_variant(v);
			int one = same_placement(apart[i][0], apart[i][1], &other);

			if (!v)
				CHECK(one);	/* one layout on the first */
			differ |= !one;
		}
		if (!differ)
			fprintf(stderr, "'%s' and '%s' are one layout on every capture\n", apart[i][0],
				apart[i][1]), check_failures++;
	}
	swt_err_clear(&err);

	/* sizes in pages by the capture's page size: 64 KiB pages */
	{
		char *canon = NULL;

		CHECK_INT(swt_layout_canonical("devices=16384p,2G", 16, &canon, &err), 0);
		CHECK_STR(canon, "devices=1G,2G");
		free(canon);
	}

	/* what no capture takes is refused, named as given */
	static const char *const bad[] = {
		"", "0", "33", "04x", "4:hdd:ssd", "4:", "4:spread:used=1", "4:used=1,2", "4:bogus",
		"devices=1G,1G:size=2G", "4:era=2.6",
	};
	for (size_t i = 0; i < SWT_ARRAY_SIZE(bad); i++) {
		char *canon = NULL, named[64];

		swt_err_clear(&err);
		snprintf(named, sizeof(named), "layout '%s'", bad[i]);
		if (swt_layout_canonical(bad[i], 12, &canon, &err) != -SWT_EUSAGE)
			fprintf(stderr, "spec '%s' spelt '%s'\n", bad[i], canon ? canon : "?"),
				check_failures++;
		else if (!strstr(err.msg, named) || canon)
			fprintf(stderr, "spec '%s': message '%s'\n", bad[i], err.msg), check_failures++;
		free(canon);
	}
}

/* "spread": one layout at every combination of 0 or 1 pages used per device */
TEST(layout_spread)
{
	struct swt_replay_input in = traced_input(2);
	struct swt_err err = { 0 };
	char **specs = NULL;
	size_t n = 0;

	CHECK_INT(swt_layout_expand("4:spread", &in, &specs, &n, &err), 0);
	CHECK_INT(n, 16);
	if (n == 16) {
		CHECK_STR(specs[0], "4:used=0,0,0,0");
		CHECK_STR(specs[1], "4:used=1,0,0,0");	/* device 0's bit lowest */
		CHECK_STR(specs[6], "4:used=0,1,1,0");
		CHECK_STR(specs[15], "4:used=1,1,1,1");
		/* every one is a layout spec of its own */
		for (size_t i = 0; i < n; i++) {
			struct swt_placement p;

			CHECK_INT(swt_placement_init(&p, specs[i], &in, &err), 0);
			CHECK_INT(p.ndevs, 4);
			CHECK_INT(p.devs[2].used_at_start, (i >> 2) & 1);
			swt_placement_release(&p);
		}
	}
	swt_layout_specs_free(specs, n);

	/* the option may stand anywhere after the head; the others in the canonical order */
	CHECK_INT(swt_layout_expand("2:ssd:spread:era=4.11", &in, &specs, &n, &err), 0);
	CHECK_INT(n, 4);
	if (n == 4)
		CHECK_STR(specs[2], "2:ssd:era=4.11:used=0,1");
	swt_layout_specs_free(specs, n);
	CHECK_INT(swt_layout_expand("02:era=4.11:spread:ssd", &in, &specs, &n, &err), 0);
	CHECK_INT(n, 4);
	if (n == 4)
		CHECK_STR(specs[2], "2:ssd:era=4.11:used=0,1");
	swt_layout_specs_free(specs, n);
	CHECK_INT(swt_layout_expand("devices=1G,1G@3:spread", &in, &specs, &n, &err), 0);
	CHECK_INT(n, 4);
	swt_layout_specs_free(specs, n);

	/* anything else is itself */
	CHECK_INT(swt_layout_expand("4:era=3.16", &in, &specs, &n, &err), 0);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(specs[0], "4:era=3.16");
	swt_layout_specs_free(specs, n);
	CHECK_INT(swt_layout_expand("traced", &in, &specs, &n, &err), 0);
	CHECK_INT(n, 1);
	swt_layout_specs_free(specs, n);

	static const char *const bad[] = {
		"traced:spread", "4:spread:used=1", "4:used=0,1,0,0:spread", "7:spread",
		"4:spread:foo", "0:spread", "4:spread:spread", "4:spread:", "4::spread",
	};
	for (size_t i = 0; i < SWT_ARRAY_SIZE(bad); i++) {
		swt_err_clear(&err);
		specs = NULL;
		char named[64];

		snprintf(named, sizeof(named), "layout '%s'", bad[i]);
		if (swt_layout_expand(bad[i], &in, &specs, &n, &err) != -SWT_EUSAGE)
			fprintf(stderr, "spec '%s' accepted\n", bad[i]), check_failures++;
		else if (!strstr(err.msg, named) || specs)
			fprintf(stderr, "spec '%s': message '%s'\n", bad[i], err.msg), check_failures++;
	}
}

/* ---- re-placement ------------------------------------------------------- */

struct capture {
	struct swt_replay_input in;
	struct swt_replay_area area;
	struct swt_replay_fault faults[64];
	struct swt_replay_swapout outs[64];
	uint64_t ts;
	int32_t last_out[64];	/* per traced slot */
};

static void capture_init(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->area.id = 0;
	snprintf(c->area.dev, sizeof(c->area.dev), "7:0");
	c->area.slots = 64;
	c->area.rotational = 1;
	c->area.priority = 5;
	c->in.areas = &c->area;
	c->in.nr_areas = 1;
	c->in.faults = c->faults;
	c->in.outs = c->outs;
	c->in.page_shift = 12;
	c->in.ncpus = 1;
	snprintf(c->in.kernel, sizeof(c->in.kernel), "6.18.1");
	memset(c->last_out, 0xff, sizeof(c->last_out));
}

static void cap_out(struct capture *c, uint64_t slot)
{
	struct swt_replay_swapout *o = &c->outs[c->in.nr_outs];

	o->ts = c->ts += 1000;
	o->slot = slot;
	o->cpu = 0;
	c->last_out[slot] = (int32_t)c->in.nr_outs++;
}

static void cap_fault(struct capture *c, uint64_t slot)
{
	struct swt_replay_fault *f = &c->faults[c->in.nr_faults++];

	f->ts = c->ts += 1000;
	f->slot = slot;
	f->vma = -1;
	f->out = c->last_out[slot];	/* what input.c's link_outs computes */
}

TEST(replacement_follows_pages_and_frees_rewritten_slots)
{
	struct capture c;
	struct swt_placement p;
	struct swt_placement_stats st;
	struct swt_replay_input *o = NULL;
	struct swt_err err = { 0 };

	capture_init(&c);
	cap_fault(&c, 40);	/* a page swapped out before the trace */
	for (uint64_t s = 1; s <= 6; s++)
		cap_out(&c, s);
	cap_fault(&c, 3);
	cap_fault(&c, 40);
	cap_out(&c, 2);		/* slot 2 written again: its old page had left */
	cap_fault(&c, 2);
	cap_fault(&c, 5);

	CHECK_INT(swt_placement_init(&p, "2:cluster=8", &c.in, &err), 0);
	CHECK_INT(p.devs[0].slots, 32);
	CHECK_INT(swt_placement_apply(&c.in, &p, &o, &st, &err), 0);
	if (!o)
		return;
	CHECK_INT(o->nr_areas, 2);
	CHECK_STR(o->areas[1].dev, "sim1");
	CHECK_INT(o->areas[1].id, 1);
	CHECK_INT(o->areas[1].slots, 32);
	CHECK_INT(o->areas[1].rotational, 1);
	CHECK_INT(o->nr_outs, 7);
	CHECK_INT(o->nr_faults, 5);
	/*
	 * The pre-trace page goes first, after the 39 slots below it that no
	 * fault names, taken as held: it is the 40th page placed (sim1:20);
	 * then the swap-outs rotate, each freeing the unseen page of the slot
	 * it writes.
	 */
	CHECK_INT(o->faults[0].area, 1);
	CHECK_INT(o->faults[0].slot, 20);
	CHECK_INT(o->outs[0].area, 0);	/* traced slot 1 */
	CHECK_INT(o->outs[0].slot, 21);
	CHECK_INT(o->outs[1].area, 1);	/* traced slot 2 */
	CHECK_INT(o->outs[1].slot, 21);
	CHECK_INT(o->outs[2].area, 0);	/* traced slot 3 */
	CHECK_INT(o->outs[2].slot, 22);
	CHECK_INT(o->outs[5].area, 1);	/* traced slot 6 */
	CHECK_INT(o->outs[5].slot, 23);
	/* faults move with their pages */
	CHECK_INT(o->faults[1].area, 0);	/* traced slot 3 */
	CHECK_INT(o->faults[1].slot, 22);
	CHECK_INT(o->faults[2].area, 1);	/* the pre-trace page again */
	CHECK_INT(o->faults[2].slot, 20);
	CHECK_INT(o->faults[4].area, 0);	/* traced slot 5 */
	CHECK_INT(o->faults[4].slot, 23);
	/*
	 * slot 2's old page (sim1:21) is freed; sim0's cluster 16-23 is used
	 * up, and the next one comes from the nonfull list: cluster 0, whose
	 * slot 1 the first swap-out freed
	 */
	CHECK_INT(o->outs[6].area, 0);
	CHECK_INT(o->outs[6].slot, 1);
	CHECK_INT(o->faults[3].area, 0);
	CHECK_INT(o->faults[3].slot, 1);
	CHECK_INT(o->faults[3].out, 6);
	CHECK_INT(st.outs, 7);
	CHECK_INT(st.pretrace, 1);
	CHECK_INT(st.unseen, 39);
	CHECK_INT(st.freed, 7);		/* six unseen pages and slot 2's first */
	CHECK_INT(st.same_device, 4);	/* outs 0, 2, 4 and 6 on device 0 */
	CHECK_INT(st.same_slot, 0);
	swt_replay_input_free(o);
	swt_placement_release(&p);

	/* the identical layout reproduces the recorded placement (no pre-trace page here) */
	capture_init(&c);
	for (uint64_t s = 1; s <= 9; s++)
		cap_out(&c, s);
	cap_fault(&c, 4);
	CHECK_INT(swt_placement_init(&p, "1", &c.in, &err), 0);
	CHECK_INT(swt_placement_apply(&c.in, &p, &o, &st, &err), 0);
	CHECK_INT(st.same_slot, 9);
	CHECK_INT(o->faults[0].slot, 4);
	swt_replay_input_free(o);
	swt_placement_release(&p);

	/*
	 * A trace begun mid-run: pages faulted at scattered slots with no
	 * swap-out before, the slots between them unseen.  The identical
	 * layout puts every page back on its traced slot (packing the seen
	 * pages together had put slot 9's page at 3, next to slot 5's).
	 */
	capture_init(&c);
	cap_fault(&c, 2);
	cap_fault(&c, 5);
	cap_fault(&c, 9);
	cap_out(&c, 10);
	cap_fault(&c, 9);
	cap_fault(&c, 10);
	CHECK_INT(swt_placement_init(&p, "1", &c.in, &err), 0);
	CHECK_INT(swt_placement_apply(&c.in, &p, &o, &st, &err), 0);
	CHECK_INT(st.pretrace, 3);
	CHECK_INT(st.unseen, 6);
	CHECK_INT(st.peak_used, 10);
	CHECK_INT(st.usable, 63);
	CHECK_INT(o->faults[1].slot, 5);
	CHECK_INT(o->faults[2].slot, 9);
	CHECK_INT(o->faults[3].slot, 9);
	CHECK_INT(st.same_slot, 1);	/* the swap-out to slot 10 */
	swt_replay_input_free(o);
	swt_placement_release(&p);

	/* a layout too small for the pages is an error naming it */
	CHECK_INT(swt_placement_init(&p, "devices=4p", &c.in, &err), 0);
	CHECK_INT(swt_placement_apply(&c.in, &p, &o, &st, &err), -SWT_EUSAGE);
	CHECK(o == NULL);
	CHECK(strstr(err.msg, "too small") != NULL);
	swt_placement_release(&p);
}

TEST(replacement_keeps_a_page_rewritten_to_its_own_slot)
{
	struct capture c;
	struct swt_placement p;
	struct swt_placement_stats st;
	struct swt_replay_input *o = NULL;
	struct swt_err err = { 0 };

	/*
	 * Slot 2's page is read back (it keeps the slot), dirtied without a
	 * fault and written back there: the same page, the same slot, no
	 * allocation.  Slot 3 is written again by another page: a new slot.
	 */
	capture_init(&c);
	for (uint64_t s = 1; s <= 4; s++)
		cap_out(&c, s);
	cap_fault(&c, 2);
	c.faults[0].vpage = 0x1000;
	cap_fault(&c, 3);
	c.faults[1].vpage = 0x2000;
	cap_out(&c, 2);
	cap_out(&c, 3);
	cap_fault(&c, 2);
	c.faults[2].vpage = 0x1000;
	cap_fault(&c, 3);
	c.faults[3].vpage = 0x3000;
	CHECK_INT(swt_placement_init(&p, "1", &c.in, &err), 0);
	CHECK_INT(swt_placement_apply(&c.in, &p, &o, &st, &err), 0);
	if (!o)
		return;
	CHECK_INT(st.in_place, 1);
	CHECK_INT(st.freed, 1);
	CHECK_INT(o->outs[4].slot, 2);		/* back to its slot */
	CHECK_INT(o->faults[2].slot, 2);
	CHECK_INT(o->outs[5].slot, 5);		/* slot 3 freed, a fresh slot taken */
	CHECK_INT(o->faults[3].slot, 5);
	CHECK_INT(st.same_slot, 5);
	swt_replay_input_free(o);
	swt_placement_release(&p);
}

TEST(replacement_uses_the_writing_cpu)
{
	struct capture c;
	struct swt_placement p;
	struct swt_replay_input *o = NULL;
	struct swt_err err = { 0 };

	capture_init(&c);
	c.in.ncpus = 2;
	c.area.rotational = 0;
	for (uint64_t s = 1; s <= 4; s++) {
		cap_out(&c, s);
		c.outs[s - 1].cpu = (int32_t)(s & 1);
	}
	CHECK_INT(swt_placement_init(&p, "2:cluster=8", &c.in, &err), 0);
	CHECK_INT(p.devs[0].rotational, 0);
	CHECK_INT(swt_placement_apply(&c.in, &p, &o, NULL, &err), 0);
	/* CPU 1 gets a cluster on sim0, CPU 0 one on sim1; each stays in its own */
	CHECK_INT(o->outs[0].area, 0);
	CHECK_INT(o->outs[1].area, 1);
	CHECK_INT(o->outs[2].area, 0);
	CHECK_INT(o->outs[2].slot, 2);
	CHECK_INT(o->outs[3].area, 1);
	CHECK_INT(o->outs[3].slot, 2);
	swt_replay_input_free(o);
	swt_placement_release(&p);
}

CHECK_MAIN
