/*
 * swaptrace replay: replay an ingested capture's swap-ins through
 * readahead policies, for one or more page-cluster values, simulated
 * memory sizes and swap layouts (a sweep), print the what-if metrics and
 * store them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "replay.h"
#include "strbuf.h"
#include "swapsim.h"
#include "util.h"

const char cmd_replay_usage[] =
	"usage: swaptrace replay [--policy SPEC]... [--page-cluster LIST]\n"
	"                        [--cache-pages LIST] [--layout SPEC]...\n"
	"                        [--inactive-fraction F] [--max-request-kib N]\n"
	"                        [--approximate] [--json | --csv] [--no-store] DB\n"
	"\n"
	"Replay the capture's swap-in stream through readahead policies: what hit rate,\n"
	"pages read, readahead waste, read requests and merges per swap partition would\n"
	"each policy, page-cluster and swap layout have given?  Every combination is one\n"
	"run; runs are printed and stored in DB (tables run, run_partition,\n"
	"run_histogram, run_series), but for one that repeats a stored run, settings\n"
	"and results alike, which is said and not stored again.\n"
	"\n"
	"  -p, --policy SPEC      a built-in (see 'swaptrace policies') or a plugin\n"
	"                         ./libmine.so, optionally with :key=val,...  Repeatable;\n"
	"                         default: auto.  A plugin's file name ends at its\n"
	"                         first '.so:' (values may hold '/' and ':', its\n"
	"                         directories ':' but not '.so:'); one not named *.so\n"
	"                         at the first ':' after its last '/'.  Printed in one\n"
	"                         spelling: the parameters not at their defaults, in\n"
	"                         the policy's order (leap:history=032 is leap)\n"
	"  -c, --page-cluster LIST  e.g. 3, 0-5 or 1,3,5 (default 3, the kernel default)\n"
	"                         Repeated, -c and -m add up; a setting given twice\n"
	"                         runs once\n"
	"  -m, --cache-pages LIST memory for the traced task, pages, or percentages of\n"
	"                         the default (the capture's cgroup limit, else its\n"
	"                         working set), e.g. 52480 or 50%,100%,150%\n"
	"                         (one kind per list); at most 357848403 pages,\n"
	"                         fewer with more of them inactive\n"
	"      --inactive-fraction F  share of that memory on the inactive list, where\n"
	"                         unused readahead pages age (default: the kernel's\n"
	"                         inactive_ratio rule for that memory size:\n"
	"                         1/2 below 1 GiB)\n"
	"      --max-request-kib N  the largest read request, KiB (4-65536); default:\n"
	"                         the swap devices' max_sectors_kb or max_segments\n"
	"                         pages, whichever is smaller, as the capture\n"
	"                         recorded them, else 1280 KiB or 128 pages (512 KiB\n"
	"                         on 4 KiB pages)\n"
	"  -l, --layout SPEC      the swap layout to replay on; repeatable\n"
	"                         (default: traced)\n"
	"                           traced     the recorded placement, unchanged\n"
	"                           N[:OPT]... N equal devices (1-32) sharing the\n"
	"                                      traced size\n"
	"                           devices=SIZE[@PRIO][/hdd|/ssd],...[:OPT]...\n"
	"                                      these devices, in swapon order\n"
	"                         OPT: hdd|ssd (default: like the traced areas)\n"
	"                              prio=N (default: the traced priority)\n"
	"                              size=SIZE of each device\n"
	"                              era=REL the slot allocator of kernel REL, 3.16 on:\n"
	"                                3.16-4.10 next device every page, 4.11-6.14\n"
	"                                every 64 pages per CPU, 6.15+ every cluster\n"
	"                                per CPU on SSD, every page on HDD\n"
	"                                (default: the traced kernel's)\n"
	"                              cluster=N slots (default 512, x86-64 THP swap;\n"
	"                                256 for era 3.16 and without THP swap; a power\n"
	"                                of two 8..8192)\n"
	"                              used=N[,N...] pages on the devices at start\n"
	"                              spread: the layout at every one-page offset,\n"
	"                                used=0 or 1 per device (2^N layouts, N <= 6),\n"
	"                                summarised as mean, min and max\n"
	"                         SIZE: 512M, 1G, 65536p (pages).  The swapped-out pages\n"
	"                         are re-placed in eviction order by that allocator and\n"
	"                         the faults replayed at their new slots; partitions are\n"
	"                         then sim0, sim1...  e.g. 4, 4:ssd, 2:hdd:era=4.11,\n"
	"                         4:spread, devices=512M@10,512M@5 (docs/layouts.md).\n"
	"                         Printed and stored in one spelling (04 is 4,\n"
	"                         4:prio=-2:ssd is 4:ssd:prio=-2, 131072p is 512M,\n"
	"                         devices=1G@5,1G@5 is 2:prio=5:size=1G);\n"
	"                         given twice, however spelt, a layout runs once\n"
	"  -a, --approximate      replay a capture whose reads mix demand and readahead\n"
	"                         (page-cluster > 0): its demand stream is reconstructed\n"
	"                         from its reads and faults, readahead hits included\n"
	"                         (without fault events each read stands for a fault)\n"
	"  -j, --json             print {\"runs\":[{\"policy\",\"page_cluster\",\"cache_pages\",\n"
	"                         \"totals\":M,\"partitions\":[{\"dev\",...M}]}]}, with\n"
	"                         \"layout\" after cache_pages when --layout is given\n"
	"      --csv              print one CSV row per run and partition\n"
	"  -n, --no-store         do not store the runs (nor upgrade an older database:\n"
	"                         it is read as it is)\n"
	"\n"
	"Metrics M: faults (= misses + hits), misses, hits (found in the simulated swap\n"
	"cache), pages_read, ra_pages (swap_ra), ra_hits (swap_ra_hit), ra_wasted\n"
	"(evicted unused), accuracy (ra_hits/ra_pages), coverage (hits/faults),\n"
	"read_requests, read_merges, avg_request_kib.  The model: docs/replay-model.md.\n";

/* One --layout: its spec, and the input re-placed on it (the loaded one when traced). */
struct layout_run {
	struct swt_placement placement;
	struct swt_replay_input *owned;		/* re-placed input, NULL when traced */
	const struct swt_replay_input *in;
	struct swt_placement_stats stats;
	const char *given;	/* the --layout it came from, canonical ("4:spread" for "4:used=0,1,0,0") */
	size_t group_size;	/* layouts that --layout expanded to (1 but for spread) */
};

struct run_out {
	struct swt_replay_config cfg;
	const struct layout_run *layout;
	struct swt_replay_result *res;
	int64_t run_id;
	int repeated;		/* the same as stored run run_id: not stored again */
};

/* Whether v is among the n values. */
static int has_value(const int64_t *values, int n, int64_t v)
{
	for (int i = 0; i < n; i++)
		if (values[i] == v)
			return 1;
	return 0;
}

/*
 * "3", "0-5", "1,3,5" into values (at most max), each value once, as the
 * lists of repeated options are; returns the count or -1.
 */
static int parse_list(const char *text, int64_t *values, int max, int64_t lo, int64_t hi)
{
	char *copy = swt_strdup(text), *save = NULL, *tok;
	int n = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok + 1, '-');
		int64_t a, b;

		if (dash) {
			*dash = '\0';
			if (swt_parse_i64(tok, &a) || swt_parse_i64(dash + 1, &b) || a > b)
				goto bad;
		} else {
			if (swt_parse_i64(tok, &a))
				goto bad;
			b = a;
		}
		if (a < lo || b > hi)
			goto bad;
		for (int64_t v = a; v <= b; v++) {
			if (has_value(values, n, v))
				continue;
			if (n >= max)
				goto bad;
			values[n++] = v;
		}
	}
	free(copy);
	return n;
bad:
	free(copy);
	return -1;
}

/*
 * Append a list's values to a sweep's, each value once (a sweep replays a
 * setting once: a repeated one was replayed and stored twice).  The new
 * count, or -1 past max.
 */
static int add_values(int64_t *values, int n, const int64_t *add, int nadd, int max)
{
	for (int i = 0; i < nadd; i++) {
		int j;

		for (j = 0; j < n && values[j] != add[i]; j++)
			;
		if (j < n)
			continue;
		if (n >= max)
			return -1;
		values[n++] = add[i];
	}
	return n;
}

/* The same policy with the same parameters, however the specs spelt them. */
static int same_choice(const struct swt_policy_choice *a, const struct swt_policy_choice *b)
{
	size_t la = swt_policy_spec_name_len(a->spec), lb = swt_policy_spec_name_len(b->spec);

	if (la != lb || strncmp(a->spec, b->spec, la) || a->nparams != b->nparams)
		return 0;
	for (unsigned i = 0; i < a->nparams; i++)
		if (strcmp(a->keys[i], b->keys[i]) || strcmp(a->values[i], b->values[i]))
			return 0;
	return 1;
}

/*
 * --cache-pages: page counts (as parse_list), or percentages of the
 * capture's default memory, kept negated until the capture is loaded:
 * "50%,100%,150%" is -50, -100, -150.  The count, or -1.
 */
static int parse_cache_list(const char *text, int64_t *values, int max)
{
	char *copy, *save = NULL, *tok;
	int n = 0;

	if (!strchr(text, '%'))
		return parse_list(text, values, max, 1, (int64_t)1 << 40);
	copy = swt_strdup(text);
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t len = strlen(tok);
		int64_t pct;

		if (len < 2 || tok[len - 1] != '%')
			goto bad;
		tok[len - 1] = '\0';
		if (swt_parse_i64(tok, &pct) || pct < 1 || pct > 1000)
			goto bad;
		if (has_value(values, n, -pct))
			continue;
		if (n >= max)
			goto bad;
		values[n++] = -pct;
	}
	free(copy);
	return n;
bad:
	free(copy);
	return -1;
}

static void json_metrics(const struct swt_replay_metrics *m, uint32_t page_shift)
{
	double acc = swt_metrics_accuracy(m), cov = swt_metrics_coverage(m);
	double kib = swt_metrics_avg_request_kib(m, page_shift);

	printf("\"faults\":%" PRIu64 ",\"misses\":%" PRIu64 ",\"hits\":%" PRIu64
	       ",\"pages_read\":%" PRIu64 ",\"ra_pages\":%" PRIu64 ",\"ra_hits\":%" PRIu64
	       ",\"ra_wasted\":%" PRIu64, m->faults, m->misses, m->hits, m->pages_read, m->ra_pages,
	       m->ra_hits, m->ra_wasted);
	acc < 0 ? printf(",\"accuracy\":null") : printf(",\"accuracy\":%.6f", acc);
	cov < 0 ? printf(",\"coverage\":null") : printf(",\"coverage\":%.6f", cov);
	printf(",\"read_requests\":%" PRIu64 ",\"read_merges\":%" PRIu64, m->read_requests,
	       m->read_merges);
	kib < 0 ? printf(",\"avg_request_kib\":null") : printf(",\"avg_request_kib\":%.4f", kib);
}

/*
 * with_layout: --layout was given.  Without it every run is on the traced
 * layout and the runs keep the documented shape, with no "layout" key.
 */
static void print_json(const struct run_out *runs, size_t n, int with_layout)
{
	printf("{\"runs\":[");
	for (size_t i = 0; i < n; i++) {
		const struct run_out *r = &runs[i];
		const struct swt_replay_input *in = r->layout->in;

		printf("%s{\"policy\":", i ? "," : "");
		cli_json_string(r->cfg.policy_spec);
		printf(",\"page_cluster\":%u,\"cache_pages\":%" PRIu64, r->cfg.page_cluster,
		       r->cfg.cache_pages);
		if (with_layout) {
			printf(",\"layout\":");
			cli_json_string(r->cfg.layout_name);
		}
		printf(",\"totals\":{");
		json_metrics(&r->res->total, in->page_shift);
		printf("},\"partitions\":[");
		for (size_t p = 0; p < r->res->nr_parts; p++) {
			printf("%s{\"dev\":", p ? "," : "");
			cli_json_string(in->areas[p].dev);
			putchar(',');
			json_metrics(&r->res->parts[p].m, in->page_shift);
			putchar('}');
		}
		printf("]}");
	}
	printf("]}\n");
}

/* A CSV field, quoted when it holds a comma or a quote (RFC 4180): specs can. */
static void print_csv_field(const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void print_csv_row(const char *policy, unsigned pc, uint64_t cache, const char *layout,
			  const char *dev, const struct swt_replay_metrics *m, uint32_t page_shift)
{
	double acc = swt_metrics_accuracy(m), cov = swt_metrics_coverage(m);
	double kib = swt_metrics_avg_request_kib(m, page_shift);

	print_csv_field(policy);
	printf(",%u,%" PRIu64 ",", pc, cache);
	print_csv_field(layout);
	putchar(',');
	print_csv_field(dev);
	printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
	       m->faults, m->misses, m->hits, m->pages_read, m->ra_pages, m->ra_hits, m->ra_wasted);
	acc < 0 ? printf(",") : printf("%.6f,", acc);
	cov < 0 ? printf(",") : printf("%.6f,", cov);
	printf("%" PRIu64 ",%" PRIu64 ",", m->read_requests, m->read_merges);
	kib < 0 ? printf("\n") : printf("%.4f\n", kib);
}

static void print_csv(const struct run_out *runs, size_t n)
{
	printf("policy,page_cluster,cache_pages,layout,dev,faults,misses,hits,pages_read,ra_pages,"
	       "ra_hits,ra_wasted,accuracy,coverage,read_requests,read_merges,avg_request_kib\n");
	for (size_t i = 0; i < n; i++) {
		const struct run_out *r = &runs[i];
		const struct swt_replay_input *in = r->layout->in;

		print_csv_row(r->cfg.policy_spec, r->cfg.page_cluster, r->cfg.cache_pages,
			      r->cfg.layout_name, "all", &r->res->total, in->page_shift);
		for (size_t p = 0; p < r->res->nr_parts; p++)
			print_csv_row(r->cfg.policy_spec, r->cfg.page_cluster, r->cfg.cache_pages,
				      r->cfg.layout_name, in->areas[p].dev, &r->res->parts[p].m,
				      in->page_shift);
	}
}

static void fmt_ratio(char *buf, size_t size, double v)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3f", v);
}

static void print_table_row(int width, const char *policy, unsigned pc, const char *dev,
			    const struct swt_replay_metrics *m, uint32_t page_shift)
{
	char acc[16], cov[16], kib[16];

	fmt_ratio(acc, sizeof(acc), swt_metrics_accuracy(m));
	fmt_ratio(cov, sizeof(cov), swt_metrics_coverage(m));
	fmt_ratio(kib, sizeof(kib), swt_metrics_avg_request_kib(m, page_shift));
	printf("%-*s %3u %-6s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %8" PRIu64
	       " %8" PRIu64 " %8" PRIu64 " %6s %6s %9" PRIu64 " %8" PRIu64 " %7s\n", width, policy, pc, dev,
	       m->faults, m->misses, m->hits, m->pages_read, m->ra_pages, m->ra_hits, m->ra_wasted,
	       acc, cov, m->read_requests, m->read_merges, kib);
}

/* A share in percent, rounded down so that only "all" reads 100. */
static double percent_floor(uint64_t part, uint64_t whole)
{
	return whole ? (double)(part * 10000 / whole) / 100.0 : 0.0;
}

/* What a re-placed layout is, and how closely it reproduces the recorded placement. */
static void print_layout_note(const struct layout_run *l)
{
	const struct swt_placement_stats *st = &l->stats;

	printf("# layout %s: %s\n", l->placement.spec, l->placement.description);
	printf("# re-placed %" PRIu64 " swap-outs and %" PRIu64 " pages swapped out before the trace",
	       st->outs, st->pretrace);
	if (st->unseen)
		printf(" with %" PRIu64 " slots among them that no fault names, taken as held",
		       st->unseen);
	printf(" (%" PRIu64 " slots freed and reused); %" PRIu64 " on their traced device (%.2f %%), "
	       "%" PRIu64 " on their traced slot too (%.2f %%)\n", st->freed, st->same_device,
	       percent_floor(st->same_device, st->outs), st->same_slot,
	       percent_floor(st->same_slot, st->outs));
}

static void print_table(const struct run_out *runs, size_t n)
{
	uint64_t last_cache = 0;
	const struct layout_run *last_layout = NULL;
	int width = 14;

	/* as wide as the longest policy given (a plugin path, parameters), so columns line up */
	for (size_t i = 0; i < n; i++)
		width = SWT_MAX(width, (int)SWT_MIN(strlen(runs[i].cfg.policy_spec), 200));

	/* where VMA readahead's bounds came from, when not all from guesses */
	if (n && runs[0].layout->in->faults_in_maps)
		printf("# VMA bounds: %zu faults in the capture's memory maps, %zu guessed from fault "
		       "addresses\n", runs[0].layout->in->faults_in_maps,
		       runs[0].layout->in->faults_inferred);
	/* the layouts' inputs share the traced one's frees */
	if (n && runs[0].layout->in->nr_frees) {
		const struct swt_replay_input *in = runs[0].layout->in;
		size_t moved = in->nr_frees_moved, full = in->nr_frees_full;
		size_t written = in->nr_frees - moved - full;

		if (written)
			printf("# %zu swap slot%s freed by write faults (the page stays in memory, dirty, "
			       "and takes a new slot when evicted)\n", written, written == 1 ? "" : "s");
		if (full)
			printf("# %zu swap slot%s freed at swap-in while swap was over half full, as the "
			       "kernel does (vm_swap_full)\n", full, full == 1 ? "" : "s");
		if (moved)
			printf("# %zu swap slot%s freed at swap-in: the page came back from another slot, "
			       "written there with no write fault\n", moved, moved == 1 ? "" : "s");
	}
	for (size_t i = 0; i < n; i++) {
		const struct run_out *r = &runs[i];
		const struct swt_replay_input *in = r->layout->in;

		if (r->cfg.cache_pages != last_cache || r->layout != last_layout) {
			if (i)
				putchar('\n');
			if (r->layout != last_layout && r->layout->owned)
				print_layout_note(r->layout);
			printf("# layout %s, simulated memory %" PRIu64 " page%s (%.0f MiB), "
			       "%" PRIu64 " on the inactive list\n", r->cfg.layout_name,
			       r->cfg.cache_pages, r->cfg.cache_pages == 1 ? "" : "s",
			       (double)(r->cfg.cache_pages << in->page_shift) / 1048576.0,
			       r->res->inactive_pages);
			printf("%-*s %3s %-6s %8s %8s %8s %9s %8s %8s %8s %6s %6s %9s %8s %7s\n", width, "policy",
			       "pc", "dev", "faults", "misses", "hits", "pages_rd", "ra_pages", "ra_hits",
			       "wasted", "accur", "cover", "requests", "merges", "avg_kib");
			last_cache = r->cfg.cache_pages;
			last_layout = r->layout;
		}
		print_table_row(width, r->cfg.policy_spec, r->cfg.page_cluster, "all", &r->res->total,
				in->page_shift);
		if (r->res->nr_parts > 1)
			for (size_t p = 0; p < r->res->nr_parts; p++)
				print_table_row(width, "", r->cfg.page_cluster, in->areas[p].dev,
						&r->res->parts[p].m, in->page_shift);
	}
}

/* Runs of one --layout (its offsets, for spread) with the same policy, page-cluster and memory. */
static int same_spread(const struct run_out *a, const struct run_out *b)
{
	return a->layout->given == b->layout->given && !strcmp(a->cfg.policy_spec, b->cfg.policy_spec) &&
	       a->cfg.page_cluster == b->cfg.page_cluster && a->cfg.cache_pages == b->cfg.cache_pages;
}

/*
 * For each layout given as "spread": how the metrics vary over its device
 * offsets, per policy, page-cluster and memory size.
 */
static void print_spreads(const struct run_out *runs, size_t n)
{
	enum { HITS, MERGES, REQUESTS, KIB, COVERAGE, NR };
	static const char *const names[NR] = {
		"readahead hits", "read merges", "read requests", "avg request KiB", "coverage"
	};

	for (size_t i = 0; i < n; i++) {
		const struct run_out *r = &runs[i];
		double sum[NR] = { 0 }, lo[NR], hi[NR];
		size_t count = 0, seen = 0;

		if (r->layout->group_size < 2)
			continue;
		/* once per setting: at its first run */
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_spread(&runs[j], r);
		if (seen)
			continue;
		for (size_t j = i; j < n; j++) {
			const struct swt_replay_metrics *m = &runs[j].res->total;
			double v[NR];

			if (!same_spread(&runs[j], r))
				continue;
			v[HITS] = (double)m->hits;
			v[MERGES] = (double)m->read_merges;
			v[REQUESTS] = (double)m->read_requests;
			v[KIB] = swt_metrics_avg_request_kib(m, runs[j].layout->in->page_shift);
			v[COVERAGE] = swt_metrics_coverage(m);
			for (int k = 0; k < NR; k++) {
				sum[k] += v[k];
				lo[k] = count ? SWT_MIN(lo[k], v[k]) : v[k];
				hi[k] = count ? SWT_MAX(hi[k], v[k]) : v[k];
			}
			count++;
		}
		printf("\n# layout %s: %zu device offsets (0 or 1 page already used per device), "
		       "%s at page-cluster %u, memory %" PRIu64 " pages\n", r->layout->given, count,
		       r->cfg.policy_spec, r->cfg.page_cluster, r->cfg.cache_pages);
		printf("%-16s %10s %10s %10s\n", "metric", "mean", "min", "max");
		for (int k = 0; k < NR; k++) {
			const char *fmt = k < KIB ? "%-16s %10.1f %10.0f %10.0f\n"
						  : "%-16s %10.3f %10.3f %10.3f\n";

			if (lo[k] < 0)	/* a ratio of nothing (no faults, no requests) */
				printf("%-16s %10s %10s %10s\n", names[k], "-", "-", "-");
			else
				printf(fmt, names[k], sum[k] / (double)count, lo[k], hi[k]);
		}
	}
}

/*
 * The runs that repeat stored ones, once per invocation: a sweep run
 * again says so in one line, its ids as ranges ("1-63").
 */
static void note_repeats(const struct run_out *runs, size_t n)
{
	struct swt_sbuf ids;
	size_t count = 0;

	swt_sbuf_init(&ids);
	for (size_t i = 0; i < n; i++) {
		size_t j = i;

		if (!runs[i].repeated)
			continue;
		/* a range of consecutive ids, in the order the runs were given */
		while (j + 1 < n && runs[j + 1].repeated && runs[j + 1].run_id == runs[j].run_id + 1)
			j++;
		swt_sbuf_printf(&ids, "%s%lld", count ? ", " : "", (long long)runs[i].run_id);
		if (j > i)
			swt_sbuf_printf(&ids, "%s%lld", j > i + 1 ? "-" : ", ",
					(long long)runs[j].run_id);
		count += j - i + 1;
		i = j;
	}
	if (n == 1 && count)
		cli_notef("replay", "the run was already stored with the same results (run id %s): "
			  "not stored again", ids.oom ? "..." : ids.s);
	else if (count)
		cli_notef("replay", "%zu of %zu runs %s already stored with the same results (run "
			  "id%s %s): not stored again", count, n, count == 1 ? "was" : "were",
			  count == 1 ? "" : "s", ids.oom ? "..." : ids.s);
	swt_sbuf_release(&ids);
}

#define MAX_LAYOUT_SPECS 32	/* --layout options */
#define MAX_LAYOUTS 128		/* layouts once "spread" specs are expanded */

/* Place a layout_run on one expanded spec: parse it and re-place the capture's pages. */
static int prepare_layout(struct swt_replay_input *in, const char *spec, struct layout_run *l,
			  int *warned, struct swt_err *err)
{
	int ret = swt_placement_init(&l->placement, spec, in, err);
	uint64_t traced_usable;
	int over;

	if (ret)
		return ret;
	if (l->placement.traced) {
		l->in = in;
		return 0;
	}
	if (l->placement.era_assumed && !(*warned)++) {
		if (in->kernel[0])
			cli_warnf("replay", "the capture's kernel '%s' has no release number: layouts "
				  "use the newest (6.15+) slot allocator unless era= is given", in->kernel);
		else
			cli_warn("replay", "the capture names no kernel: layouts use the newest (6.15+) "
					   "slot allocator unless era= is given");
	}
	ret = swt_placement_apply(in, &l->placement, &l->owned, &l->stats, err);
	if (ret)
		return ret;
	traced_usable = 0;
	for (size_t i = 0; i < in->nr_areas && traced_usable != UINT64_MAX; i++)
		traced_usable = in->areas[i].slots_guessed ? UINT64_MAX :
				traced_usable + in->areas[i].slots - 1;
	over = l->stats.peak_used * 2 > l->stats.usable;
	/*
	 * vm_swap_full(): above half full the kernel frees a slot at swap-in.
	 * The frees replayed are those of the capture's swap (write-frees.c),
	 * right for a layout of its size (a header slot more or less aside);
	 * said where the sizes differ, or where the layout's pages (used= ones
	 * too) take it over half full and the capture's never were, or the
	 * other way round.
	 */
	if ((over || in->nr_frees_full) &&
	    (traced_usable == UINT64_MAX || over != !!in->nr_frees_full ||
	     (l->stats.usable > traced_usable ? l->stats.usable - traced_usable :
						 traced_usable - l->stats.usable) * 100 > traced_usable))
		cli_warnf("replay", "layout '%s': swap fills to %.0f %% of its slots (%" PRIu64 " of %"
			  PRIu64 "); above half full the kernel frees a page's slot when it is "
			  "swapped in, which the replay does as on the capture's swap (%s), not as "
			  "on this layout's (docs/layouts.md)", spec,
			  100.0 * (double)l->stats.peak_used / (double)l->stats.usable,
			  l->stats.peak_used, l->stats.usable,
			  traced_usable == UINT64_MAX ? "of unknown size: never" :
			  in->nr_frees_full ? "at times over half full" : "never over half full");
	l->in = l->owned;
	return 0;
}

/* One --layout as expanded: its canonical spelling, and the layouts it stands for. */
struct layout_given {
	char *given;		/* "4:spread", canonical */
	char **names;		/* canonical, names[n] */
	size_t n;
	const char *as_given;	/* the --layout argument, named in messages */
};

/* Whether a layout name is one of what a spread (more than one layout) expanded to. */
static int in_spread(const struct layout_given *g, int ng, const char *name)
{
	for (int j = 0; j < ng; j++)
		for (size_t k = 0; g[j].n > 1 && k < g[j].n; k++)
			if (!strcmp(g[j].names[k], name))
				return 1;
	return 0;
}

/*
 * The spread whose zero offset places pages as the layout name does, NULL
 * when none: "2" is "2:used=0,0" of "2:spread", named otherwise (a
 * canonical name ends in its used=, which a name without one leaves at 0).
 */
static const struct layout_given *spread_at_zero(const struct layout_given *g, int ng,
						 const char *name)
{
	size_t len = strlen(name);

	for (int j = 0; j < ng; j++) {
		const char *zero = g[j].n > 1 ? g[j].names[0] : "";

		if (!strncmp(zero, name, len) && !strncmp(zero + len, ":used=", 6) &&
		    strspn(zero + len + 6, "0,") == strlen(zero + len + 6))
			return &g[j];
	}
	return NULL;
}

/*
 * Expand every --layout ("4:spread" into its 16 offsets) and re-place the
 * capture's pages once per layout.  A layout given twice, however spelt
 * ("4" and "04"), runs once, as a policy or a setting does, and so does
 * one given alone that a spread runs too ("4:used=1,0,0,0" with
 * "4:spread"): in the spread, whose summary needs all its offsets.  So
 * does "4" with "4:spread", whose "4:used=0,0,0,0" places pages alike
 * (replayed twice, under two names), said in a note as its name goes.
 * givens[] (nspecs long) keeps the canonical --layout spellings the
 * layouts point at (layout_run.given), to be freed by the caller.
 */
static int prepare_layouts(struct swt_replay_input *in, const char *const *specs, int nspecs,
			   struct layout_run *layouts, int *nlayouts, char **givens,
			   struct swt_err *err)
{
	struct layout_given g[MAX_LAYOUT_SPECS];
	int ng = 0, warned = 0, ret = 0;

	for (int i = 0; i < nspecs && !ret; i++) {
		struct layout_given *x = &g[ng];
		int j;

		memset(x, 0, sizeof(*x));
		x->as_given = specs[i];
		ret = swt_layout_expand(specs[i], in, &x->names, &x->n, err);
		if (!ret)
			ret = swt_layout_canonical(specs[i], in->page_shift, &x->given, err);
		for (j = 0; !ret && j < ng && strcmp(g[j].given, x->given); j++)
			;
		if (ret || j < ng) {
			free(x->given);
			swt_layout_specs_free(x->names, x->n);
			continue;
		}
		ng++;
	}
	for (int i = 0; i < ng; i++) {
		const struct layout_given *x = &g[i];
		const struct layout_given *spread;

		givens[i] = x->given;
		if (ret || (x->n == 1 && in_spread(g, ng, x->names[0])))
			continue;
		spread = x->n == 1 ? spread_at_zero(g, ng, x->names[0]) : NULL;
		if (spread) {
			cli_notef("replay", "layout '%s' is the zero offset of '%s' (%s): replayed "
				  "once, in the spread", x->as_given, spread->as_given, spread->names[0]);
			continue;
		}
		if (*nlayouts + x->n > MAX_LAYOUTS) {
			ret = swt_error(err, SWT_EUSAGE, "layouts: %d at most, spread included "
					"(%s makes %zu)", MAX_LAYOUTS, x->as_given, x->n);
			continue;
		}
		for (size_t k = 0; k < x->n && !ret; k++) {
			struct layout_run *l = &layouts[*nlayouts];

			l->given = x->given;
			l->group_size = x->n;
			(*nlayouts)++;
			/* one given alone is parsed as given, so that a message names it so */
			ret = prepare_layout(in, x->n == 1 ? x->as_given : x->names[k], l, &warned, err);
		}
	}
	for (int i = 0; i < ng; i++)
		swt_layout_specs_free(g[i].names, g[i].n);
	return ret;
}

static void release_layouts(struct layout_run *layouts, int n)
{
	for (int i = 0; i < n; i++) {
		swt_replay_input_free(layouts[i].owned);
		swt_placement_release(&layouts[i].placement);
	}
}

/*
 * VMA readahead needs fault addresses; a capture of block events alone has
 * none, so vma reads nothing ahead and auto takes cluster readahead where
 * the traced kernel took VMA readahead.  Say so rather than print runs that
 * look like a policy's verdict.
 */
static void warn_without_addresses(const char *db, const struct swt_replay_input *in,
				   const struct swt_policy_choice *choices, int nchoices)
{
	int any_rotational = swt_replay_any_rotational(in);

	for (size_t i = 0; i < in->nr_faults; i++)
		if (in->faults[i].vpage)
			return;
	for (int p = 0; p < nchoices; p++) {
		const char *name = choices[p].dl_handle ? "" : choices[p].policy->name;

		if (!strcmp(name, "vma"))
			cli_warnf("replay", "'%s': no fault addresses (block events only): vma "
				  "reads nothing ahead", db);
		else if (!strcmp(name, "auto") && in->vma_ra_enabled == 1 && !any_rotational)
			cli_warnf("replay", "'%s': no fault addresses (block events only): auto "
				  "uses cluster readahead where the traced kernel used VMA readahead", db);
	}
}

/*
 * Whether a device is rotational decides auto's mode (VMA readahead only
 * when none is); a capture ingested without metadata does not say.
 */
static void warn_kind_unknown(const struct swt_replay_input *in,
			      const struct swt_policy_choice *choices, int nchoices)
{
	int with_auto = 0;

	for (int p = 0; p < nchoices; p++)
		with_auto |= !choices[p].dl_handle && !strcmp(choices[p].policy->name, "auto");
	for (size_t i = 0; with_auto && in->vma_ra_enabled == 1 && i < in->nr_areas; i++) {
		if (in->areas[i].rotational >= 0)
			continue;
		cli_warnf("replay", "swap area %s: not recorded whether it is rotational "
			  "(ingested without metadata): taken as rotational, as loop and virtio disks "
			  "are, so auto uses cluster readahead; for an SSD ingest with --swap "
			  "%s,rotational=0", in->areas[i].dev, in->areas[i].dev);
	}
	/*
	 * And vma_ra_enabled decides it when no device is rotational: unknown
	 * reads as false, where the kernel's default is true.
	 */
	if (with_auto && in->vma_ra_enabled < 0 && in->nr_areas && !swt_replay_any_rotational(in))
		cli_warnf("replay", "vma_ra_enabled not recorded: taken "
			  "as false, so auto uses cluster readahead where a kernel left at its default "
			  "(true) uses VMA readahead on these non-rotational devices; ingest with --meta "
			  "FILE holding 'vma_ra_enabled true' to replay that");
}

/*
 * The model is the kernel's two-list LRU (docs/replay-model.md, Memory); a
 * kernel running the multi-gen LRU ages and evicts swapped-in pages by
 * generations instead, so what memory does to readahead pages is less
 * certain there.
 */
static void warn_multigen_lru(const char *db, struct swt_store *st)
{
	char value[64];

	if (swt_replay_multigen_lru(st, value, sizeof(value)) == 1)
		cli_warnf("replay", "'%s': the traced kernel ran the multi-gen LRU (lru_gen %s); "
			  "the replay models the two-list active/inactive LRU, so its readahead "
			  "accuracy and waste are less certain (docs/replay-model.md)", db, value);
}

/*
 * Zero-filled pages and pages zswap held come back without block I/O: the
 * demand stream, made of block reads, lacks them, and the slots they left
 * look free (their swap-outs wrote nothing either).
 */
static void warn_unseen_swapins(const char *db, struct swt_store *st)
{
	int64_t zero, zswap, n = swt_replay_unseen_swapins(st, &zero, &zswap);
	char unseen[128];

	if (n <= 0)
		return;
	cli_unseen_swapins(unseen, sizeof(unseen), zero, zswap);
	cli_warnf("replay", "'%s': %lld swap-in%s on the traced host took no block I/O "
		  "(/proc/vmstat, machine-wide: %s): the block trace shows neither them nor their "
		  "swap-outs, so the replay's demand stream and slot occupancy lack those of the "
		  "workload", db, (long long)n, n == 1 ? "" : "s", unseen);
}

enum { OPT_CSV = 256, OPT_INACTIVE, OPT_MAXREQ };

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "page-cluster", required_argument, NULL, 'c' },
		{ "cache-pages", required_argument, NULL, 'm' },
		{ "inactive-fraction", required_argument, NULL, OPT_INACTIVE },
		{ "max-request-kib", required_argument, NULL, OPT_MAXREQ },
		{ "approximate", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "no-store", no_argument, NULL, 'n' },
		{ "layout", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *policy_specs[64];
	const char *mix;
	int nspecs = 0, json = 0, csv = 0, store = 1, approximate = 0, c, status = SWT_EXIT_FAIL;
	int in_transaction = 0;
	FILE *spill = NULL;
	int64_t pcs[64] = { 3 }, caches[64], list[64];
	int npcs = 1, ncaches = 0, pcs_given = 0, nlist;
	double inactive = 0;
	uint64_t max_cache;
	int64_t max_req_kib = -1;	/* the capture's devices' limit unless given */
	struct swt_policy_choice choices[64];
	int nchoices = 0;
	const char *layout_specs[MAX_LAYOUT_SPECS];
	char *layout_givens[MAX_LAYOUT_SPECS] = { 0 };
	struct layout_run layouts[MAX_LAYOUTS];
	int nlayout_specs = 0, nlayouts = 0, layouts_given;
	struct swt_store *st = NULL;
	struct swt_replay_input *in = NULL;
	struct run_out *runs = NULL;
	size_t nruns = 0;
	struct swt_err err = { 0 };

	optind = 1;
	opterr = 0;
	memset(layouts, 0, sizeof(layouts));
	while ((c = getopt_long(argc, argv, ":p:c:m:l:ajn", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (nspecs >= 64)
				return cli_failf("replay", SWT_EXIT_USAGE, "too many --policy");
			policy_specs[nspecs++] = optarg;
			break;
		case 'c':
			if (swt_list_has_empty(optarg))
				return cli_failf("replay", SWT_EXIT_USAGE,
						 "bad --page-cluster '%s': an empty item in the list",
						 optarg);
			/* repeated, the lists add up, as --policy and --layout do */
			nlist = parse_list(optarg, list, 64, 0, SWT_MAX_PAGE_CLUSTER);
			if (nlist > 0)
				npcs = add_values(pcs, pcs_given ? npcs : 0, list, nlist, 64);
			pcs_given = 1;
			if (nlist <= 0 || npcs <= 0)
				return cli_failf("replay", SWT_EXIT_USAGE,
						 "bad --page-cluster '%s': values 0..%d, 64 at most, e.g. 3, "
						 "0-5, 1,3", optarg, SWT_MAX_PAGE_CLUSTER);
			break;
		case 'm':
			if (swt_list_has_empty(optarg))
				return cli_failf("replay", SWT_EXIT_USAGE,
						 "bad --cache-pages '%s': an empty item in the list",
						 optarg);
			nlist = parse_cache_list(optarg, list, 64);
			if (nlist > 0)
				ncaches = add_values(caches, ncaches, list, nlist, 64);
			if (nlist <= 0 || ncaches <= 0)
				return cli_failf("replay", SWT_EXIT_USAGE,
						 "bad --cache-pages '%s': page counts, or percentages "
						 "1%%..1000%% of the default, e.g. 50%%,100%%,150%% (one "
						 "kind per list; 64 settings at most)", optarg);
			break;
		case OPT_INACTIVE:
			if (swt_parse_double(optarg, &inactive) || inactive <= 0 || inactive >= 1)
				return cli_failf("replay", SWT_EXIT_USAGE,
						 "bad --inactive-fraction '%s': between 0 and 1", optarg);
			break;
		case OPT_MAXREQ:
			if (swt_parse_i64(optarg, &max_req_kib) || max_req_kib < 4 || max_req_kib > 65536)
				return cli_failf("replay", SWT_EXIT_USAGE,
						 "bad --max-request-kib '%s': a whole number of KiB from 4 "
						 "to 65536", optarg);
			break;
		case 'l': {
			int j;

			/*
			 * given twice, a layout runs once, as a policy or a setting
			 * does; spelt otherwise too, once the capture's page size
			 * reads its sizes (prepare_layouts)
			 */
			for (j = 0; j < nlayout_specs && strcmp(layout_specs[j], optarg); j++)
				;
			if (j < nlayout_specs)
				break;
			if (nlayout_specs >= MAX_LAYOUT_SPECS)
				return cli_failf("replay", SWT_EXIT_USAGE, "too many --layout (at most %d)",
						 MAX_LAYOUT_SPECS);
			layout_specs[nlayout_specs++] = optarg;
			break;
		}
		case 'a':
			approximate = 1;
			break;
		case 'j':
			json = 1;
			break;
		case OPT_CSV:
			csv = 1;
			break;
		case 'n':
			store = 0;
			break;
		default:
			return cli_bad_option("replay", c, argv);
		}
	}
	if (json && csv)
		return cli_usage_error("replay", "--json and --csv exclude each other");
	/* known before the capture is read: refused with the options, not as the first run starts */
	max_cache = swt_replay_max_cache_pages(inactive);
	for (int m = 0; m < ncaches; m++)
		if (caches[m] > 0 && (uint64_t)caches[m] > max_cache)
			return cli_failf("replay", SWT_EXIT_USAGE, "bad --cache-pages %lld: more memory "
					 "than the replay handles, %llu pages at most with %s",
					 (long long)caches[m], (unsigned long long)max_cache,
					 inactive > 0 ? "this --inactive-fraction" : "the kernel's inactive share");
	if (optind != argc - 1)
		return cli_usage_error("replay", optind == argc ? "no DB given"
							   : "more than one DB given");
	if (!nspecs)
		policy_specs[nspecs++] = "auto";
	layouts_given = nlayout_specs > 0;
	if (!nlayout_specs)
		layout_specs[nlayout_specs++] = "traced";
	for (int i = 0; i < nspecs; i++) {
		int j;

		if (swt_policy_choose(policy_specs[i], &choices[nchoices], &err)) {
			status = err.code == SWT_EUSAGE ? cli_failf("replay", SWT_EXIT_USAGE, "%s", err.msg)
							: cli_fail("replay", &err);
			goto out;
		}
		/* a policy given twice (leap and leap:history=32 too) is replayed once */
		for (j = 0; j < nchoices && !same_choice(&choices[j], &choices[nchoices]); j++)
			;
		if (j < nchoices)
			swt_policy_choice_release(&choices[nchoices]);
		else
			nchoices++;
	}
	/*
	 * past ulimit -f, killed, a replay left a hot journal of its half-stored
	 * runs; failed, it rolls them back
	 */
	cli_ignore_file_size_limit();
	/*
	 * --no-store writes nothing, so an older database is read as it is
	 * (replay reads nothing its upgrades add but task.tgid, which the
	 * loader does without); the runs to store need it upgraded
	 */
	if (swt_store_open(argv[optind], store ? SWT_STORE_WRITE : SWT_STORE_READ_OLDER, &st,
			   &err)) {
		status = cli_fail("replay", &err);
		goto out;
	}
	/* said before a sweep runs, not at its first insert */
	if (store && swt_store_check_writable(st, &err)) {
		status = cli_failf("replay", SWT_EXIT_FAIL, "%s: the runs cannot be stored in it "
				   "(--no-store prints them only)", err.msg);
		goto out;
	}
	if (swt_replay_input_load(st, approximate, &in, &err)) {
		/* refused for want of --approximate: an option to give, as --cache-pages is */
		status = err.code == SWT_EUSAGE && !approximate &&
				 swt_replay_stream_kind(st) == SWT_STREAM_MIXED ?
			 cli_failf("replay", SWT_EXIT_USAGE, "%s", err.msg) : cli_fail("replay", &err);
		goto out;
	}
	if (max_req_kib < 0)
		max_req_kib = in->request_limit_kib;
	/*
	 * Requests are of whole pages: a limit below one (4 KiB on 16 KiB
	 * pages) split nothing and put every request in a 0-page bucket
	 */
	if (((max_req_kib * 1024) >> in->page_shift) == 0) {
		status = cli_failf("replay", SWT_EXIT_USAGE,
				   "bad --max-request-kib %lld: below one page of '%s' (%u KiB)",
				   (long long)max_req_kib, argv[optind], (1u << in->page_shift) / 1024);
		goto out;
	}
	if (in->no_area || in->no_area_outs)
		cli_warnf("replay", "%zu swap-in%s and %zu swap-out%s name no swap area of the "
			  "database (swap_area rows missing): left out", in->no_area,
			  in->no_area == 1 ? "" : "s", in->no_area_outs,
			  in->no_area_outs == 1 ? "" : "s");
	if (in->swapoff_reads)
		cli_warnf("replay", "%zu swap-in%s read by swapoff, not faulted: left out",
			  in->swapoff_reads, in->swapoff_reads == 1 ? " was" : "s were");
	if (!in->nr_faults) {
		/* as report and info say it: a run of no faults answers nothing */
		warn_unseen_swapins(argv[optind], st);	/* perhaps why */
		status = swt_store_query_error(st, &err) ? cli_fail("replay", &err) :
			 cli_failf("replay", SWT_EXIT_FAIL, "'%s': no swap-in faults: nothing to replay",
				   argv[optind]);
		goto out;
	}
	/* no page-cluster recorded: readahead may have been off, as info says it */
	mix = in->traced_page_cluster < 0 ? "may mix" : "mix";
	if (in->approximate && in->approx_hits) {
		cli_warnf("replay", "approximate demand stream: the capture's reads %s demand "
			  "and readahead; %zu faults reconstructed from its reads and faults (%zu that "
			  "read, %zu readahead hit%s; docs/replay-model.md)", mix,
			  in->nr_faults, in->approx_misses, in->approx_hits,
			  in->approx_hits == 1 ? "" : "s");
	} else if (in->approximate &&
		   (int64_t)in->approx_misses == swt_store_query_int(st, "SELECT count(*) FROM swap_in"
								     " WHERE " SWT_NOT_SWAPOFF_SQL, -1) &&
		   !swt_store_query_int(st, "SELECT count(*) FROM swap_in WHERE fault_id IS NOT NULL"
					" AND " SWT_NOT_SWAPOFF_SQL, 0)) {
		cli_warnf("replay", "approximate demand stream: the capture's reads %s demand and "
			  "readahead, and %s each read stands for a fault (docs/replay-model.md)", mix,
			  swt_store_query_int(st, "SELECT EXISTS (SELECT 1 FROM fault)", 0) ?
				  "as its fault events name none of the reads (swap_in.fault_id)," :
				  "without fault events");
	} else if (in->approximate &&
		   (int64_t)in->approx_misses == swt_store_query_int(st, "SELECT count(*) FROM swap_in"
								     " WHERE " SWT_NOT_SWAPOFF_SQL, -1)) {
		/*
		 * Fault events that each read one page and no fault that found
		 * one read ahead (the kernel's readahead window shrank to one
		 * page): the reads as traced, not a stream short of its hits
		 */
		cli_warnf("replay", "approximate demand stream: the capture's reads %s demand "
			  "and readahead; %zu faults reconstructed from its reads and faults: each "
			  "read one page, and none found a page read ahead (docs/replay-model.md)",
			  mix, in->nr_faults);
	} else if (in->approximate) {
		/* the stream the docs measure far off: say so, not "each read a fault" */
		cli_warnf("replay", "approximate demand stream: the capture's reads %s demand "
			  "and readahead; %zu faults reconstructed, one per fault that read, and no "
			  "readahead hit: no fault event without a read names the task and address of "
			  "one that read (fault events, pids or addresses missing?), so coverage comes "
			  "out far below the kernel's (docs/replay-model.md)", mix, in->nr_faults);
	}
	warn_without_addresses(argv[optind], in, choices, nchoices);
	warn_kind_unknown(in, choices, nchoices);
	warn_multigen_lru(argv[optind], st);
	warn_unseen_swapins(argv[optind], st);
	/* a warning's query that failed: a damaged database, said before any run */
	if (swt_store_query_error(st, &err)) {
		status = cli_fail("replay", &err);
		goto out;
	}
	if (!ncaches) {
		caches[0] = -100;
		ncaches = 1;
	}
	for (int m = 0; m < ncaches; m++) {
		int64_t def, pct;

		if (caches[m] > 0)
			continue;
		def = swt_replay_default_cache_pages(in);
		if (def <= 0) {
			status = cli_failf("replay", SWT_EXIT_USAGE,
					   "'%s': the capture records no memory limit or working set%s; "
					   "give --cache-pages in pages", argv[optind],
					   in->mem_limit_bytes > 0 || in->working_set_bytes > 0 ?
					   " of a page or more" : "");
			goto out;
		}
		/* a percentage of the default, rounded to the nearest page */
		pct = -caches[m];
		caches[m] = SWT_MAX((def * pct + 50) / 100, 1);
		if ((uint64_t)caches[m] > max_cache) {
			status = cli_failf("replay", SWT_EXIT_USAGE,
					   "'%s': %lld%% of the default memory (%lld pages, the capture's "
					   "%s) is %lld pages: more than the replay handles, %llu at most "
					   "with %s; give --cache-pages", argv[optind], (long long)pct,
					   (long long)def, in->mem_limit_bytes > 0 ? "memory limit" :
					   "working set", (long long)caches[m],
					   (unsigned long long)max_cache, inactive > 0 ?
					   "this --inactive-fraction" : "the kernel's inactive share");
			goto out;
		}
	}
	/* 100% and the default's page count are one setting */
	ncaches = add_values(caches, 0, caches, ncaches, 64);
	if (prepare_layouts(in, layout_specs, nlayout_specs, layouts, &nlayouts, layout_givens,
			    &err)) {
		status = err.code == SWT_EUSAGE ? cli_failf("replay", SWT_EXIT_USAGE, "%s", err.msg)
						: cli_fail("replay", &err);
		goto out;
	}
	runs = calloc((size_t)(nlayouts * nchoices * npcs * ncaches), sizeof(*runs));
	if (!runs) {
		status = cli_failf("replay", SWT_EXIT_FAIL, "out of memory");
		goto out;
	}
	/*
	 * Each run's series and histograms go to a temporary file as it
	 * finishes, and are freed: a sweep holds one run's at a time, not all
	 * of them (a day-long trace of 16 devices: 2 GB for 45 runs), and the
	 * database is written only at the end, in one short transaction, as
	 * before (a transaction over the whole sweep locked other replays and
	 * readers out for its length).
	 */
	if (store && !(spill = swt_replay_spill_open(&err))) {
		status = cli_fail("replay", &err);
		goto out;
	}
	for (int l = 0; l < nlayouts; l++) {
		const struct swt_replay_input *lin = layouts[l].in;

		for (int p = 0; p < nchoices; p++) {
			for (int k = 0; k < npcs; k++) {
				for (int m = 0; m < ncaches; m++) {
					struct run_out *r = &runs[nruns];
					int ret;

					r->layout = &layouts[l];
					r->cfg.policy = choices[p].policy;
					r->cfg.policy_spec = choices[p].spec;
					r->cfg.keys = (const char *const *)choices[p].keys;
					r->cfg.values = (const char *const *)choices[p].values;
					r->cfg.nparams = choices[p].nparams;
					r->cfg.page_cluster = (unsigned)pcs[k];
					r->cfg.cache_pages = (uint64_t)caches[m];
					r->cfg.inactive_fraction = inactive;
					r->cfg.max_request_pages =
						(unsigned)((max_req_kib * 1024) >> in->page_shift);
					r->cfg.layout_name = layouts[l].placement.spec;
					ret = choices[p].dl_handle
						      ? swt_replay_run_isolated(lin, &r->cfg, &r->res, &err)
						      : swt_replay_run(lin, &r->cfg, &r->res, &err);
					nruns += !ret;
					if (ret) {
						status = cli_fail("replay", &err);
						goto out;
					}
					if (spill && swt_replay_spill_put(spill, r->res, &err)) {
						status = cli_fail("replay", &err);
						goto out;
					}
					swt_replay_result_shed(r->res);
				}
			}
		}
	}
	if (store) {
		/* all runs or none: a failure leaves the database as it was */
		int ret = swt_store_exec(st, "BEGIN IMMEDIATE", &err);

		if (!ret)
			ret = swt_replay_spill_rewind(spill, &err);
		in_transaction = !ret;
		for (size_t i = 0; !ret && i < nruns; i++) {
			struct swt_replay_result *back = swt_replay_spill_get(spill, &err);

			ret = back ? swt_replay_store(st, runs[i].layout->in, &runs[i].cfg, back,
						      &runs[i].run_id, &runs[i].repeated, &err)
				   : -SWT_EIO;
			swt_replay_result_free(back);
		}
		if (!ret)
			ret = swt_store_exec(st, "COMMIT", &err);
		if (ret) {
			status = cli_fail("replay", &err);
			goto out;
		}
		in_transaction = 0;
		note_repeats(runs, nruns);
	}
	if (json)
		print_json(runs, nruns, layouts_given);
	else if (csv)
		print_csv(runs, nruns);
	else {
		print_table(runs, nruns);
		print_spreads(runs, nruns);
	}
	status = SWT_EXIT_OK;
out:
	if (in_transaction)
		sqlite3_exec(swt_store_db(st), "ROLLBACK", NULL, NULL, NULL);
	if (spill)
		fclose(spill);
	for (size_t i = 0; runs && i < nruns; i++)
		swt_replay_result_free(runs[i].res);
	free(runs);
	release_layouts(layouts, nlayouts);
	for (int i = 0; i < nlayout_specs; i++)
		free(layout_givens[i]);
	swt_replay_input_free(in);
	swt_store_destroy(st);
	for (int i = 0; i < nchoices; i++)
		swt_policy_choice_release(&choices[i]);
	return status;
}
