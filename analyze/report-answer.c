/*
 * The report's answer in words: from the compared runs, how many swap
 * faults would wait for a read as traced, with the kernel's policy at its
 * best page-cluster, with the best of the other policies, at the oracle's
 * bound, on the simulated layouts and over memory sizes.  Written into
 * index.html (swt_report_answer_html) and as plain lines for the terminal
 * (swt_report_answer_text).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"
#include "strbuf.h"
#include "util.h"

/* Where the answer goes: HTML (text escaped, marked up) or plain text. */
struct answer_out {
	struct swt_sbuf *b;
	int html;
	int starred;	/* a line was marked *: the legend follows */
};

static void out_raw(struct answer_out *o, const char *s)
{
	swt_sbuf_puts(o->b, s);
}

static void out_text(struct answer_out *o, const char *s)
{
	if (o->html)
		swt_sbuf_xml(o->b, s);
	else
		swt_sbuf_text(o->b, s);
}

/* Numbers and fixed words only: nothing that HTML would need escaped. */
__attribute__((format(printf, 2, 3)))
static void out_printf(struct answer_out *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out_text(o, buf);
}

/* s as one shell word, given to out_text whole, so that its escaping sees whole characters */
static void out_shell_word(struct answer_out *o, const char *s)
{
	char *q = swt_shell_word(s, 0);

	out_text(o, q ? q : s);
	free(q);
}

static void out_int(struct answer_out *o, int64_t v)
{
	char buf[48];

	swt_chart_format_int(v, buf, sizeof(buf));
	out_raw(o, buf);
}

static void out_item(struct answer_out *o, int start)
{
	if (o->html)
		out_raw(o, start ? "<li>" : "</li>\n");
	else
		out_raw(o, start ? "  " : "\n");
}

static void out_bold(struct answer_out *o, int start)
{
	if (o->html)
		out_raw(o, start ? "<b>" : "</b>");
}

static void out_link(struct answer_out *o, const char *anchor, const char *text)
{
	if (o->html)
		swt_sbuf_printf(o->b, "<a href=\"#%s\">", anchor);
	out_text(o, text);
	if (o->html)
		out_raw(o, "</a>");
}

static int is_kernel_policy(const struct swt_report_run *r)
{
	static const char *const names[] = { "none", "fixed", "adaptive", "vma", "auto" };

	if (r->tuned)
		return 0;
	for (size_t i = 0; i < SWT_ARRAY_SIZE(names); i++)
		if (!strcmp(r->policy, names[i]))
			return 1;
	return 0;
}

enum run_group { KERNEL_AUTO, KERNEL_ANY, OTHER, ORACLE };

static int in_group(const struct swt_report_run *r, enum run_group g)
{
	/* a run of another model (its settings) answers another question */
	if (r->model_tuned)
		return 0;
	switch (g) {
	case KERNEL_AUTO:
		return is_kernel_policy(r) && !strcmp(r->policy, "auto");
	case KERNEL_ANY:
		return is_kernel_policy(r);
	case ORACLE:
		return !strcmp(r->policy, "oracle");
	case OTHER:
		break;
	}
	return !is_kernel_policy(r) && strcmp(r->policy, "oracle");
}

/*
 * The compared run of a group with the fewest waits (misses: faults that
 * read from swap and waited for it), then the fewest pages read, the
 * lowest page-cluster, the first stored; among runs reading at most
 * max_pages pages.
 */
static const struct swt_report_run *fewest_waits(const struct swt_report_ctx *rc, enum run_group g,
						 int64_t max_pages)
{
	const struct swt_report_run *best = NULL;

	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (!swt_report_run_compared(rc, r) || !in_group(r, g) || r->faults <= 0 ||
		    r->pages_read > max_pages)
			continue;
		if (!best || r->misses < best->misses ||
		    (r->misses == best->misses &&
		     (r->pages_read < best->pages_read ||
		      (r->pages_read == best->pages_read && r->page_cluster < best->page_cluster))))
			best = r;
	}
	return best;
}

static void change(struct answer_out *o, int64_t v, int64_t base)
{
	if (base > 0)
		out_printf(o, " (%+.1f%%)", 100.0 * (double)(v - base) / (double)base);
}

/* "W waits (−x %), X pages read per fault (+y %), R read requests (−z %)" */
static void run_outcome(struct answer_out *o, const struct swt_report_run *r,
			const struct swt_report_run *base)
{
	out_int(o, r->misses);
	out_text(o, " of ");
	out_int(o, r->faults);
	out_text(o, " faults waited for a read");
	if (base && base != r)
		change(o, r->misses, base->misses);
	out_printf(o, ", %.1f%% served by readahead, %.2f pages read per fault",
			100.0 * (double)r->hits / (double)r->faults,
			(double)r->pages_read / (double)r->faults);
	if (base && base != r)
		change(o, r->pages_read, base->pages_read);
	out_text(o, ", ");
	out_int(o, r->read_requests);
	out_text(o, " read requests");
	if (base && base != r)
		change(o, r->read_requests, base->read_requests);
}

/*
 * The traced kernel's own count, beside its setting replayed: the replay's
 * figures are a model's, and read as measured without it.  Major faults
 * are swap faults that waited for a read (and file ones: the counters are
 * machine-wide), swap_ra_hit those served by readahead.
 */
static void kernel_counted(struct answer_out *o, const struct swt_report_ctx *rc)
{
	if (rc->vm_pgmajfault == SWT_NULL)
		return;
	out_text(o, " The kernel counted ");
	out_int(o, rc->vm_pgmajfault);
	out_text(o, rc->vm_pgmajfault == 1 ? " major fault" : " major faults");
	if (rc->vm_swap_ra_hit != SWT_NULL && rc->vm_pgmajfault + rc->vm_swap_ra_hit > 0) {
		out_text(o, " and ");
		out_int(o, rc->vm_swap_ra_hit);
		out_printf(o, " readahead hit%s, %.1f%% served by readahead",
			   rc->vm_swap_ra_hit == 1 ? "" : "s",
			   100.0 * swt_report_ratio(rc->vm_swap_ra_hit,
						    rc->vm_pgmajfault + rc->vm_swap_ra_hit));
	}
	out_text(o, " (/proc/vmstat, machine-wide).");
}

/* counted: the capture's, to give the kernel's own count after the line */
static void answer_line(struct answer_out *o, const char *what, const struct swt_report_run *r,
			const struct swt_report_run *base, const struct swt_report_ctx *counted)
{
	out_item(o, 1);
	out_text(o, what);
	out_text(o, " ");
	out_bold(o, 1);
	out_text(o, r->label);
	out_printf(o, " at page-cluster %d", r->page_cluster);
	out_bold(o, 0);
	out_printf(o, " (run #%lld): ", (long long)r->id);
	run_outcome(o, r, base);
	out_text(o, r->approximate ? " *." : ".");
	o->starred |= r->approximate;
	if (counted)
		kernel_counted(o, counted);
	out_item(o, 0);
}

/* Whether r replays anchor's setting on a simulated layout of group `group`. */
static int in_layout_group(const struct swt_report_run *r, const struct swt_report_run *anchor,
			   const char *group)
{
	char g[200];

	if (swt_report_run_traced(r) || strcmp(r->key, anchor->key) ||
	    r->page_cluster != anchor->page_cluster || r->cache_pages != anchor->cache_pages)
		return 0;
	swt_report_layout_group(r->layout, g, sizeof(g));
	return !group || !strcmp(g, group);
}

/*
 * The layouts the layout chart draws, one line each: the mean waits of a
 * layout's runs (several for "N:spread") against the traced layout's run
 * of that setting, when there is one.  Its setting is the chosen run's
 * when that was replayed on other layouts, else the chart's: the answer
 * said nothing of the layouts the chart drew for another policy.
 */
static void answer_layouts(struct answer_out *o, const struct swt_report_ctx *rc)
{
	const struct swt_report_run *anchor = swt_report_layout_anchor(rc), *traced = NULL;

	if (!anchor)
		return;
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (swt_report_run_traced(r) && !strcmp(r->key, anchor->key) &&
		    r->page_cluster == anchor->page_cluster && r->cache_pages == anchor->cache_pages &&
		    (!traced || r == rc->chosen))
			traced = r;
	}
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];
		double sum = 0, lo = INFINITY, hi = 0;
		size_t n = 0, first = 1;
		char group[200];

		if (!in_layout_group(r, anchor, NULL))
			continue;
		/* a layout at several device offsets ("4:spread") is one line, at its first run */
		swt_report_layout_group(r->layout, group, sizeof(group));
		for (size_t j = 0; j < i && first; j++)
			first = !in_layout_group(&rc->runs[j], anchor, group);
		if (!first)
			continue;
		for (size_t j = i; j < rc->nr_runs; j++) {
			const struct swt_report_run *other = &rc->runs[j];
			int again = 0;

			if (!in_layout_group(other, anchor, group))
				continue;
			/* a placement replayed again ("2" is "2:used=0,0") counts once, as in the chart */
			for (size_t k = i; k < j && !again; k++)
				again = in_layout_group(&rc->runs[k], anchor, group) &&
					swt_report_same_layout(rc->runs[k].layout, other->layout);
			if (again)
				continue;
			sum += (double)other->misses;
			lo = SWT_MIN(lo, (double)other->misses);
			hi = SWT_MAX(hi, (double)other->misses);
			n++;
		}
		out_item(o, 1);
		out_bold(o, 1);
		out_text(o, anchor->label);
		out_printf(o, " at page-cluster %d on the simulated layout ", anchor->page_cluster);
		out_text(o, n > 1 ? group : r->layout);
		out_bold(o, 0);
		out_text(o, ": ");
		out_int(o, (int64_t)llround(sum / (double)n));
		out_text(o, " faults waited for a read");
		if (n > 1) {
			out_printf(o, " on average over %zu device offsets (", n);
			out_int(o, (int64_t)lo);
			out_text(o, " to ");
			out_int(o, (int64_t)hi);
			out_text(o, ")");
		}
		if (traced && traced->misses > 0) {
			out_printf(o, ", %+.1f%% against the traced layout's ",
					100.0 * (sum / (double)n - (double)traced->misses) /
						(double)traced->misses);
			out_int(o, traced->misses);
		}
		out_text(o, ".");
		out_item(o, 0);
	}
}

/*
 * The chosen run's setting at other memory sizes: its coverage at the least
 * and the most memory, and where it is highest when that is in between
 * (coverage need not grow with memory: the two ends are no range).
 */
static void answer_memory(struct answer_out *o, const struct swt_report_ctx *rc)
{
	const struct swt_report_run *anchor = rc->chosen, *lo = NULL, *hi = NULL, *best = NULL;

	if (!anchor)
		return;
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (!swt_report_run_traced(r) || strcmp(r->key, anchor->key) ||
		    r->page_cluster != anchor->page_cluster || r->cache_pages <= 0 || r->faults <= 0)
			continue;
		if (!lo || r->cache_pages < lo->cache_pages)
			lo = r;
		if (!hi || r->cache_pages > hi->cache_pages)
			hi = r;
		if (!best || swt_report_ratio(r->hits, r->faults) >
				     swt_report_ratio(best->hits, best->faults))
			best = r;
	}
	if (!lo || lo->cache_pages == hi->cache_pages)
		return;
	out_item(o, 1);
	out_text(o, "With memory from ");
	out_int(o, lo->cache_pages);
	out_text(o, " to ");
	out_int(o, hi->cache_pages);
	out_text(o, " pages (the model's memory, chart ");
	out_link(o, "memory", "Memory");
	out_text(o, "), ");
	out_text(o, anchor->label);
	out_printf(o, " at page-cluster %d serves %.1f%% of the faults from readahead at the "
			   "least memory and %.1f%% at the most", anchor->page_cluster,
			100.0 * swt_report_ratio(lo->hits, lo->faults),
			100.0 * swt_report_ratio(hi->hits, hi->faults));
	if (swt_report_ratio(best->hits, best->faults) > swt_report_ratio(lo->hits, lo->faults) &&
	    swt_report_ratio(best->hits, best->faults) > swt_report_ratio(hi->hits, hi->faults)) {
		out_printf(o, ", %.1f%% at its best, with ",
			   100.0 * swt_report_ratio(best->hits, best->faults));
		out_int(o, best->cache_pages);
		out_text(o, " pages");
	}
	out_text(o, ".");
	out_item(o, 0);
}

/*
 * Runs stored by hand (README's "replay -p auto -c 3", then report) give
 * an answer of few lines, its "best page-cluster" picked from one: said,
 * with the replay that gives what a database without runs gets.  Not
 * with --run, which chose the runs.
 */
static void answer_few_runs(struct answer_out *o, const struct swt_report_ctx *rc)
{
	int pc = -1, several_pc = 0, none = 0, oracle = 0, approximate = 0, any = 0;

	if (rc->opts && rc->opts->run_ids)
		return;
	for (size_t i = 0; i < rc->nr_runs; i++) {
		const struct swt_report_run *r = &rc->runs[i];

		if (!swt_report_run_compared(rc, r) || r->model_tuned || r->faults <= 0)
			continue;
		several_pc |= any && r->page_cluster != pc;
		pc = r->page_cluster;
		none |= in_group(r, KERNEL_ANY) && !strcmp(r->policy, "none");
		oracle |= in_group(r, ORACLE);
		approximate |= r->approximate;
		any = 1;
	}
	if (!any || (several_pc && none && oracle))
		return;
	out_item(o, 1);
	out_text(o, "Few runs to compare (");
	if (!several_pc)
		out_printf(o, "only page-cluster %d%s", pc, none && oracle ? "" : ", ");
	if (!none || !oracle)
		out_printf(o, "no %s run", !none && !oracle ? "none or oracle" : none ? "oracle" : "none");
	out_text(o, "): replay the set a database without runs gets, ");
	out_raw(o, o->html ? "<code>" : "");
	/* a command to paste: the path shell-quoted, after -- (it may start with '-') */
	out_printf(o, "swaptrace replay -p none -p fixed -p adaptive -p vma -p auto -p oracle "
		      "-c 0-8%s -- ", approximate ? " --approximate" : "");
	out_shell_word(o, swt_store_path(rc->st));
	out_raw(o, o->html ? "</code>" : "");
	out_text(o, ", and report again.");
	out_item(o, 0);
}

void swt_report_answer_picks(const struct swt_report_ctx *rc, struct swt_report_picks *p)
{
	const struct swt_report_run *r;
	int64_t least_read = INT64_MAX;

	memset(p, 0, sizeof(*p));
	p->max_pages = INT64_MAX;
	if (rc->cache_pages < 0)
		return;	/* no run on the traced layout: nothing to answer with */
	for (size_t i = 0; i < rc->nr_runs && rc->page_cluster >= 0; i++) {
		r = &rc->runs[i];
		if (swt_report_run_compared(rc, r) && in_group(r, KERNEL_AUTO) &&
		    r->page_cluster == rc->page_cluster && r->faults > 0) {
			p->base = r;
			break;
		}
	}
	/*
	 * More readahead always saves some waits: the best settings are sought
	 * among those reading at most twice the pages of the traced setting (or
	 * of the run reading fewest), not at any price.
	 */
	if (p->base)
		least_read = p->base->pages_read;
	for (size_t i = 0; i < rc->nr_runs && !p->base; i++) {
		r = &rc->runs[i];
		if (swt_report_run_compared(rc, r) && !r->model_tuned && r->faults > 0)
			least_read = SWT_MIN(least_read, r->pages_read);
	}
	if (least_read < INT64_MAX / 2)
		p->max_pages = 2 * least_read;
	p->best_auto = fewest_waits(rc, KERNEL_AUTO, p->max_pages);
	r = fewest_waits(rc, KERNEL_ANY, p->max_pages);
	if (r && r != p->base && !in_group(r, KERNEL_AUTO))
		p->best_kernel = r;
	p->best_other = fewest_waits(rc, OTHER, p->max_pages);
	p->oracle = fewest_waits(rc, ORACLE, INT64_MAX);
}

/* Swap-ins no block trace shows: what the replays lack, or why there are none. */
static void answer_unseen_swapins(struct answer_out *o, const struct swt_report_ctx *rc)
{
	if (rc->vm_swpin_zero > 0 || rc->vm_zswpin > 0) {
		out_raw(o, o->html ? "<p class=\"sub\">" : "  ");
		out_text(o, "Swap-ins took no block I/O on the traced host (/proc/vmstat, machine-wide:");
		if (rc->vm_swpin_zero > 0) {
			out_text(o, " swpin_zero ");
			out_int(o, rc->vm_swpin_zero);
			out_text(o, rc->vm_swpin_zero == 1 ? " zero-filled page" : " zero-filled pages");
		}
		if (rc->vm_zswpin > 0) {
			out_text(o, rc->vm_swpin_zero > 0 ? ", zswpin " : " zswpin ");
			out_int(o, rc->vm_zswpin);
			out_text(o, " from zswap");
		}
		out_text(o, "): the block trace shows neither them nor their swap-outs, so the "
			    "replays lack those of the workload.");
		out_raw(o, o->html ? "</p>\n" : "\n");
	}
}

/* What the replays do not model of the traced kernel. */
static void answer_multigen_lru(struct answer_out *o, const struct swt_report_ctx *rc)
{
	if (rc->multigen_lru == 1) {
		out_raw(o, o->html ? "<p class=\"sub\">" : "  ");
		out_text(o, "The traced kernel ran the multi-gen LRU (lru_gen ");
		out_text(o, rc->lru_gen);
		out_text(o, "); the replay models the two-list active/inactive LRU, so its "
			    "readahead accuracy and waste are less certain (docs/replay-model.md).");
		out_raw(o, o->html ? "</p>\n" : "\n");
	}
}

/*
 * No run on the traced layout: no numbers to answer with, but swap-ins
 * without block I/O may be why (a workload whose swap-ins all took none
 * leaves nothing to replay), so that note is not dropped with them.
 */
static void answer_without_runs(struct answer_out *o, const struct swt_report_ctx *rc)
{
	const char *why = rc->nr_runs ? "no run replayed on the traced swap layout" :
			  swt_report_no_runs(rc);

	if (rc->vm_swpin_zero <= 0 && rc->vm_zswpin <= 0)
		return;
	if (o->html) {
		out_raw(o, "<div id=\"answer\">\n<h2>Answer</h2>\n<p class=\"sub\">");
		out_text(o, "None: ");
		out_text(o, why);
		out_text(o, ".");
		out_raw(o, "</p>\n");
	} else {
		out_text(o, "answer: none (");
		out_text(o, why);
		out_text(o, "):\n");
	}
	answer_unseen_swapins(o, rc);
	if (o->html)
		out_raw(o, "</div>\n");
}

static void answer(struct answer_out *o, const struct swt_report_ctx *rc)
{
	struct swt_report_picks p;
	const struct swt_report_run *base;

	if (rc->cache_pages < 0) {
		answer_without_runs(o, rc);
		return;
	}
	swt_report_answer_picks(rc, &p);
	base = p.base;
	if (o->html) {
		out_raw(o, "<div id=\"answer\">\n<h2>Answer</h2>\n<p class=\"sub\">");
		out_text(o, "A swap fault that finds its page read ahead goes on at once; any other "
			    "waits for a read. Fewer waits for a few more pages read is what "
			    "readahead trades: the best settings below are sought among those "
			    "reading at most twice the pages ");
		out_text(o, base ? "of the first line, the traced kernel's own setting replayed, "
				   "against which the changes are given" : "of the run reading fewest");
		out_text(o, ". Replayed on the traced swap layout with ");
		out_int(o, rc->cache_pages);
		out_text(o, " pages of memory (docs/replay-model.md).");
		out_raw(o, "</p>\n<ul>\n");
	} else {
		out_text(o, "answer (a wait: a swap fault that read from swap; best settings read at "
			    "most twice the pages ");
		out_text(o, base ? "of the first line" : "of the run reading fewest");
		out_text(o, "; traced layout, ");
		out_int(o, rc->cache_pages);
		out_text(o, " pages of memory):\n");
	}
	if (base)
		answer_line(o, "As traced, replayed:", base, NULL, rc);
	if (p.best_auto && p.best_auto != base) {
		answer_line(o, "The kernel's policy at its best page-cluster:", p.best_auto, base, NULL);
	} else if (p.best_auto) {
		out_item(o, 1);
		out_text(o, "The kernel's policy at its best page-cluster: as traced (no other "
			    "page-cluster replayed has fewer waits within twice its pages read).");
		out_item(o, 0);
	}
	if (p.best_kernel)
		answer_line(o, "Fewest waits of the kernel's policies:", p.best_kernel, base, NULL);
	if (p.best_other)
		answer_line(o, "Fewest waits of the other policies:", p.best_other, base, NULL);
	if (p.oracle)
		answer_line(o, "The oracle (reads only pages that will be used, in the "
			       "kernel's windows):", p.oracle, base, NULL);
	if (!base && !p.best_auto && !p.best_kernel && !p.best_other && !p.oracle) {
		int other_model = 0;

		for (size_t i = 0; i < rc->nr_runs; i++)
			other_model |= rc->runs[i].model_tuned &&
				       swt_report_run_compared(rc, &rc->runs[i]);
		if (other_model) {
			out_item(o, 1);
			out_text(o, "No run replayed with the model's default settings: the answer "
				    "compares only those (runs made with --inactive-fraction or "
				    "--max-request-kib are in the charts, named after them).");
			out_item(o, 0);
		}
	}
	answer_layouts(o, rc);
	answer_memory(o, rc);
	answer_few_runs(o, rc);
	if (o->html)
		out_raw(o, "</ul>\n");
	/* the terminal has no run table to explain it */
	if (o->starred) {
		out_raw(o, o->html ? "<p class=\"sub\">" : "  ");
		out_text(o, "* replayed an approximated demand stream: the capture's reads mix "
			    "demand and readahead (docs/replay-model.md).");
		out_raw(o, o->html ? "</p>\n" : "\n");
	}
	answer_unseen_swapins(o, rc);
	answer_multigen_lru(o, rc);
	if (o->html)
		out_raw(o, "</div>\n");
}

void swt_report_answer_html(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	struct answer_out o = { .b = b, .html = 1 };

	answer(&o, rc);
}

void swt_report_answer_text(struct swt_sbuf *b, const struct swt_report_ctx *rc)
{
	struct answer_out o = { .b = b, .html = 0 };

	answer(&o, rc);
}
