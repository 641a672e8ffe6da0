/*
 * Writing a capture once recording has stopped: meta.txt (host facts, swap
 * layout, vmstat counters, lost events; docs/capture-format.md) and
 * trace.dat assembled from the raw ring-buffer pages and the formats
 * saved when recording started.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture-int.h"
#include "tracedat-writer.h"
#include "util.h"

static int64_t stat_value(const char *stats, const char *key)
{
	const char *p = stats ? strstr(stats, key) : NULL;

	return p ? strtoll(p + strlen(key), NULL, 10) : 0;
}

int64_t capture_lost_on_cpu(const struct swt_capture *c, unsigned cpu)
{
	int64_t n = 0;
	const struct inst *insts[2] = { &c->task, &c->block };

	for (size_t i = 0; i < 2; i++) {
		const char *s = insts[i]->stats ? insts[i]->stats[cpu] : NULL;

		n += stat_value(s, "\noverrun: ") + stat_value(s, "\ndropped events: ");
	}
	if (c->blk_lost)
		n += c->blk_lost[cpu];
	return n;
}

static const char *end_word(enum swt_capture_end e)
{
	switch (e) {
	case SWT_CAPTURE_END_COMMAND: return "command";
	case SWT_CAPTURE_END_DURATION: return "duration";
	case SWT_CAPTURE_END_SIGNAL: return "signal";
	case SWT_CAPTURE_END_TARGET: return "target";
	default: return "error";
	}
}

static void put_swaps(FILE *f, const char *title, const char *text)
{
	fprintf(f, "# /proc/swaps at %s\n%s", title, text ? text : "");
	if (text && text[0] && text[strlen(text) - 1] != '\n')
		fputc('\n', f);
}

/*
 * meta.txt is written under another name and renamed last: a capture
 * killed while finishing leaves none, which ingest then refuses (a
 * truncated one would have been read as complete).
 */
int capture_write_meta(struct swt_capture *c, struct swt_err *err)
{
	char *path = swt_path_join(c->out_dir, ".meta.txt.new");
	char *final = swt_path_join(c->out_dir, "meta.txt");
	int fd;
	FILE *f;
	int ret = 0;

	if (!path || !final) {
		free(path);
		free(final);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		free(final);
		return ret;
	}
	fprintf(f, "swaptrace-capture 1\n");
	fprintf(f, "kernel %s\n", c->uts.release);
	fprintf(f, "machine %s\n", c->uts.machine);
	fprintf(f, "page_size %ld\n", c->page_size);
	fprintf(f, "ncpus %u\n", c->ncpus);
	if (c->page_cluster >= 0)
		fprintf(f, "page_cluster %lld\n", (long long)c->page_cluster);
	if (c->vma_ra >= 0)
		fprintf(f, "vma_ra_enabled %s\n", c->vma_ra ? "true" : "false");
	if (c->lru_gen[0])
		fprintf(f, "lru_gen %s\n", c->lru_gen);
	if (c->mem_total_kib >= 0)
		fprintf(f, "mem_total_kib %lld\n", (long long)c->mem_total_kib);
	if (c->target.memcg)
		fprintf(f, "memcg %s\n", c->target.memcg);
	if (c->target.mem_limit >= 0)
		fprintf(f, "mem_limit_bytes %lld\n", (long long)c->target.mem_limit);
	switch (c->target.kind) {
	case SWT_TARGET_COMMAND:
		fprintf(f, "target command pid=%d\n", (int)c->target.child);
		fprintf(f, "command %s\n", c->command);
		if (c->target.exited && WIFEXITED(c->target.status))
			fprintf(f, "command_exit %d\n", WEXITSTATUS(c->target.status));
		else if (c->target.exited && WIFSIGNALED(c->target.status))
			fprintf(f, "command_signal %d\n", WTERMSIG(c->target.status));
		break;
	case SWT_TARGET_PID:
		fprintf(f, "target pid %d\n", (int)c->target.pid);
		break;
	case SWT_TARGET_CGROUP:
		fprintf(f, "target cgroup %s\n", c->target.cgroup_dir);
		break;
	default:
		fprintf(f, "target system\n");
		break;
	}
	{
		const char *clock = c->task.clock ? strchr(c->task.clock, '[') : NULL;

		if (clock)
			fprintf(f, "clock %.*s\n", (int)strcspn(clock + 1, "]"), clock + 1);
	}
	fprintf(f, "probes %s\n", c->probes_line);
	if (c->oom_victims)
		fprintf(f, "oom_victims %s\n", c->oom_victims);
	fprintf(f, "block_source %s\n", c->o.blktrace ? "blktrace blk/swap" : "tracepoints");
	fprintf(f, "buffers %s%s\n", c->task.buffer ? c->task.buffer : "",
		c->block.buffer ? " swaptrace-block" : "");
	fprintf(f, "buffer_kb task=%u block=%u\n", c->task.buffer_kb,
		c->o.blktrace ? c->blk_buffer_kb : c->block.buffer_kb);
	fprintf(f, "duration_s %.3f\n", c->t_stop > c->t_start ?
		(double)(c->t_stop - c->t_start) / 1e9 : 0.0);
	fprintf(f, "end %s\n", end_word(c->end));
	for (size_t i = 0; i < c->target.nr_procs; i++)
		if (c->target.procs[i].started)
			fprintf(f, "maps pid=%d exe=%s start=maps/%d-start.txt end=maps/%d-end.txt\n",
				(int)c->target.procs[i].pid, c->target.procs[i].exe,
				(int)c->target.procs[i].pid, (int)c->target.procs[i].pid);
	for (size_t i = 0; i < c->target.nr_procs; i++) {
		const struct swt_target_proc *p = &c->target.procs[i];

		if (!p->started || !p->nr_threads)
			continue;
		fprintf(f, "threads pid=%d tids=", (int)p->pid);
		for (size_t k = 0; k < p->nr_threads; k++)
			fprintf(f, "%s%d", k ? "," : "", (int)p->threads[k]);
		fputc('\n', f);
	}
	/* extent lines name an area by its place among the swap_device lines */
	for (size_t i = 0, area = 0; i < c->nr_swaps; i++) {
		const struct swt_swap_area *a = &c->swaps[i];

		/* one word, as /proc/swaps has it: ingest splits the line at blanks */
		char *word = swt_escape_octal(a->path);

		if (!a->dev) {
			fprintf(f, "swap_unmapped path=%s reason=%s\n", word ? word : "?", a->unresolved);
			free(word);
			continue;
		}
		fprintf(f, "swap_device path=%s dev=%u:%u type=%s prio=%lld", word ? word : "?",
			swt_dev_major(a->dev), swt_dev_minor(a->dev), a->type, (long long)a->priority);
		free(word);
		if (a->rotational >= 0)
			fprintf(f, " rotational=%d", a->rotational);
		if (a->synchronous >= 0)
			fprintf(f, " sync=%d", a->synchronous);
		if (a->max_sectors_kb > 0)
			fprintf(f, " max_sectors_kb=%lld", (long long)a->max_sectors_kb);
		if (a->max_segments > 0)
			fprintf(f, " max_segments=%lld", (long long)a->max_segments);
		fprintf(f, " start=%llu slots=%lld size_kib=%lld used_kib=%lld\n",
			(unsigned long long)a->start_sector, (long long)a->slots,
			(long long)a->size_kib, (long long)a->used_kib);
		for (size_t k = 0; k < a->nr_extents; k++)
			fprintf(f, "extent area=%zu first_slot=%llu nr_slots=%llu start_sector=%llu\n",
				area, (unsigned long long)a->extents[k].first_slot,
				(unsigned long long)a->extents[k].nr_slots,
				(unsigned long long)a->extents[k].start_sector);
		area++;
	}
	put_swaps(f, "start", c->swaps_start);
	put_swaps(f, "end", c->swaps_end);
	/* the delta first: it is what a reader of the file wants most */
	fprintf(f, "# vmstat delta\n");
	for (unsigned i = 0; i < SWT_VMSTAT_COUNT; i++)
		if (c->before.v[i] >= 0 && c->after.v[i] >= 0)
			fprintf(f, "%s %lld\n", swt_vmstat_name(i),
				(long long)(c->after.v[i] - c->before.v[i]));
	fprintf(f, "# vmstat before\n");
	for (unsigned i = 0; i < SWT_VMSTAT_COUNT; i++)
		if (c->before.v[i] >= 0)
			fprintf(f, "%s %lld\n", swt_vmstat_name(i), (long long)c->before.v[i]);
	fprintf(f, "# vmstat after\n");
	for (unsigned i = 0; i < SWT_VMSTAT_COUNT; i++)
		if (c->after.v[i] >= 0)
			fprintf(f, "%s %lld\n", swt_vmstat_name(i), (long long)c->after.v[i]);
	fprintf(f, "# lost events\n");
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++)
		fprintf(f, "cpu%u %lld\n", cpu, (long long)capture_lost_on_cpu(c, cpu));
	/* a failed flush mid-file drops its buffer, and a later one may succeed: the error sticks */
	if (fflush(f) || ferror(f))
		ret = swt_error(err, SWT_EIO, "'%s': %s", final, errno ? strerror(errno) : "write error");
	else if (fsync(fileno(f)))
		ret = swt_error(err, SWT_EIO, "'%s': %s", final, strerror(errno));
	if (fclose(f) && !ret)
		ret = swt_error(err, SWT_EIO, "'%s': %s", final, strerror(errno));
	if (!ret && rename(path, final))
		ret = swt_error(err, SWT_EIO, "'%s': %s", final, strerror(errno));
	if (ret)
		unlink(path);
	else {
		c->meta_written = 1;
		c->meta_has_exit = c->target.kind == SWT_TARGET_COMMAND && c->target.exited;
	}
	free(path);
	free(final);
	return ret;
}

int swt_capture_record_exit(struct swt_capture *c, struct swt_err *err)
{
	/* the rest is as it was: rewritten whole, renamed over the old one as before */
	if (!c->meta_written || c->meta_has_exit || c->target.kind != SWT_TARGET_COMMAND ||
	    !c->target.exited)
		return 0;
	return capture_write_meta(c, err);
}

/*
 * Copy the raw pages into trace.dat when the disk has room for a second
 * copy (the raw files then survive a failure); move them otherwise.
 */
static int move_pages(struct swt_capture *c, const struct swt_tdw_input *in)
{
	uint64_t need = in->kallsyms.len + (64u << 20);
	struct statvfs vfs;

	for (size_t b = 0; b < in->nr_buffers; b++)
		for (unsigned cpu = 0; cpu < in->ncpus; cpu++) {
			struct stat sb;

			if (in->buffers[b].cpus[cpu].raw_path &&
			    stat(in->buffers[b].cpus[cpu].raw_path, &sb) == 0)
				need += (uint64_t)sb.st_size;
		}
	if (statvfs(c->out_dir, &vfs) < 0 || (uint64_t)vfs.f_bavail * vfs.f_frsize >= need)
		return 0;
	capture_note(c, 1, "little free space in '%s': moving the recorded pages into trace.dat "
		     "instead of copying them", c->out_dir);
	return 1;
}

int capture_write_tracedat(struct swt_capture *c, struct swt_err *err)
{
	struct swt_tdw_blob *ftrace = calloc(c->nr_ftrace + 1, sizeof(*ftrace));
	struct swt_tdw_blob *formats = calloc(c->nr_events + 1, sizeof(*formats));
	struct swt_tdw_system *systems = calloc(c->nr_events + 1, sizeof(*systems));
	struct swt_tdw_cpu *cpus = calloc((size_t)c->ncpus * 2, sizeof(*cpus));
	struct swt_tdw_buffer buffers[2];
	struct swt_tdw_input in = { 0 };
	struct inst *insts[2] = { &c->task, &c->block };
	char *path = swt_path_join(c->out_dir, "trace.dat"), uname_text[4 * 65 + 8];
	size_t nsys = 0, nfmt = 0, nbuf = 0;
	int kept = 0, ret;

	if (!ftrace || !formats || !systems || !cpus || !path) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c->nr_ftrace; i++)
		ftrace[i] = (struct swt_tdw_blob){ c->ftrace[i].format, strlen(c->ftrace[i].format) };
	/* events grouped by system, in the order they were enabled */
	for (size_t i = 0; i < c->nr_events; i++) {
		size_t s;

		for (s = 0; s < nsys; s++)
			if (!strcmp(systems[s].name, c->events[i].system))
				break;
		if (s < nsys)
			continue;
		systems[nsys].name = c->events[i].system;
		systems[nsys].formats = &formats[nfmt];
		for (size_t k = i; k < c->nr_events; k++)
			if (!strcmp(c->events[k].system, c->events[i].system)) {
				formats[nfmt++] = (struct swt_tdw_blob){ c->events[k].format,
									 strlen(c->events[k].format) };
				systems[nsys].nr_formats++;
			}
		nsys++;
	}
	for (size_t b = 0; b < 2; b++) {
		struct swt_tdw_cpu *bc = &cpus[nbuf * c->ncpus];

		if (!insts[b]->r)
			continue;
		for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
			struct stat sb;

			bc[cpu].raw_path = insts[b]->r[cpu].raw_path;
			/*
			 * A write cut short (a full disk) can leave a torn page: drop
			 * it, so the raw files are whole pages, as the head says.
			 */
			if (bc[cpu].raw_path && stat(bc[cpu].raw_path, &sb) == 0 &&
			    sb.st_size % c->subbuf &&
			    truncate(bc[cpu].raw_path, sb.st_size / c->subbuf * c->subbuf) < 0)
				capture_note(c, 1, "'%s': cannot drop a torn last page: %s",
					     bc[cpu].raw_path, strerror(errno));
			bc[cpu].stats = insts[b]->stats ? insts[b]->stats[cpu] : NULL;
		}
		buffers[nbuf].name = insts[b]->buffer;
		buffers[nbuf].cpus = bc;
		nbuf++;
	}
	snprintf(uname_text, sizeof(uname_text), "%s %s %s %s", c->uts.sysname, c->uts.nodename,
		 c->uts.release, c->uts.version);
	in.page_size = c->subbuf;
	in.header_page = (struct swt_tdw_blob){ c->header_page, strlen(c->header_page) };
	in.header_event = (struct swt_tdw_blob){ c->header_event, strlen(c->header_event) };
	in.ftrace_formats = ftrace;
	in.nr_ftrace_formats = c->nr_ftrace;
	in.systems = systems;
	in.nr_systems = nsys;
	in.kallsyms = (struct swt_tdw_blob){ c->kallsyms, c->kallsyms ? c->kallsyms_len : 0 };
	in.printk_formats = (struct swt_tdw_blob){ c->printk, c->printk ? strlen(c->printk) : 0 };
	in.cmdlines = (struct swt_tdw_blob){ c->cmdlines, c->cmdlines ? strlen(c->cmdlines) : 0 };
	in.ncpus = c->ncpus;
	in.uname = uname_text;
	in.trace_clock = c->task.clock;
	in.buffers = buffers;
	in.nr_buffers = nbuf;
	ret = swt_tracedat_write(&in, path, move_pages(c, &in) ? SWT_TDW_MOVE_RAW : 0, &kept, err);
	if (ret && kept) {
		/* say exactly how to finish the job once there is room */
		char cmd[2048];
		size_t len = (size_t)snprintf(cmd, sizeof(cmd), "cat %s.head", path);

		for (size_t b = 0; b < nbuf; b++)
			for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
				struct stat sb;
				const char *raw = buffers[b].cpus[cpu].raw_path;

				if (raw && stat(raw, &sb) == 0 && sb.st_size > 0 && len < sizeof(cmd))
					len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " %s", raw);
			}
		capture_note(c, 1, "trace.dat is incomplete; when there is room, assemble it with: "
			     "%s > %s", cmd, path);
	}
	if (!ret) {
		for (size_t b = 0; b < 2; b++)
			for (unsigned cpu = 0; insts[b]->r && cpu < c->ncpus; cpu++)
				if (insts[b]->r[cpu].raw_path)
					unlink(insts[b]->r[cpu].raw_path);
		rmdir(c->raw_dir);
	}
out:
	free(ftrace);
	free(formats);
	free(systems);
	free(cpus);
	free(path);
	return ret;
}

/* A counter's growth over the recording; -1 where the kernel has no such counter. */
static int64_t vmstat_delta(const struct swt_capture *c, unsigned i)
{
	return c->before.v[i] < 0 || c->after.v[i] < 0 ? -1 : c->after.v[i] - c->before.v[i];
}

int swt_capture_finish(struct swt_capture *c, struct swt_capture_result *res,
		       struct swt_err *err)
{
	int ret, r;

	memset(res, 0, sizeof(*res));
	if (!c->stopped)
		capture_stop_and_restore(c, NULL);
	/* the reserve kept room for exactly this */
	if (c->reserve_made)
		unlink(c->reserve);
	c->reserve_made = 0;
	ret = capture_write_meta(c, err);
	r = capture_write_tracedat(c, err);
	res->trace_dat_ok = !r;
	if (r && !ret)
		ret = r;
	/* a system-wide capture maps no task: no empty maps/ (rmdir takes only an empty one) */
	if (c->maps_dir)
		rmdir(c->maps_dir);
	res->end = c->end;
	res->command_status = c->target.kind == SWT_TARGET_COMMAND && c->target.exited ?
			      c->target.status : -1;
	res->seconds = c->t_stop > c->t_start ? (double)(c->t_stop - c->t_start) / 1e9 : 0;
	res->data_bytes = c->data_bytes;
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++)
		res->lost_events += capture_lost_on_cpu(c, cpu);
	res->pswpin = c->after.v[0] - c->before.v[0];
	res->pswpout = c->after.v[1] - c->before.v[1];
	res->oom_victims_recorded = c->oom_victims != NULL;
	res->oom_kills = vmstat_delta(c, SWT_VMSTAT_OOM_KILL);
	res->zero_swapins = vmstat_delta(c, SWT_VMSTAT_SWPIN_ZERO);
	res->zswap_swapins = vmstat_delta(c, SWT_VMSTAT_ZSWPIN);
	return ret;
}
