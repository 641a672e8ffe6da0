/*
 * swaptrace capture: set tracing up, stream the ring buffers to disk,
 * stop, put the host back as it was, and write the capture (capture.h).
 *
 * Two private tracefs instances do the recording: "swaptrace-PID-block"
 * holds the block events of the swap devices (filtered by dev, never by
 * pid: completions run in interrupts and kernel threads), "swaptrace-PID"
 * holds the target's page faults, reclaim writes and swap-entry probes,
 * filtered with set_event_pid and options/event-fork, which apply to a
 * whole instance.  In trace.dat they are the buffers "swaptrace-block" and
 * "swaptrace".  With --blktrace the block side comes from the blk tracer
 * in the top-level buffer instead (blktracer.c) and the block instance is not
 * created, so ingest never sees the same I/O twice.
 *
 * While recording, one thread polls the per-CPU trace_pipe_raw files
 * (woken at the instance's buffer_percent watermark, or every 100 ms) and
 * splices whole ring-buffer pages into per-CPU raw files; nothing is
 * parsed on the host.  At the end the last partial pages are flushed, the
 * kernel's per-CPU stats (lost events) are read, every setting is
 * restored, and trace.dat is assembled from the raw files and the formats
 * saved at the start.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture-int.h"
#include "util.h"

#define DRAIN_MS 100		/* longest wait between ring-buffer drains */
#define TICK_MS 1000		/* target pids, maps snapshots, device checks */
/*
 * The maps of a command or a --pid process and of those they started, read
 * more often: a workload that runs under a second would otherwise be seen
 * only before its exec (as the shell that started it), or not at all, and
 * its mappings never.  Written only when they changed.
 */
#define COMMAND_MAPS_MS 100
#define DRAIN_ROUNDS 64		/* splices per CPU per drain (64 KiB each) */
#define INFLIGHT_WAIT_MS 2000	/* for a finished command's last I/O to complete */
#define COMMAND_GRACE_MS 10000	/* after a forwarded stop signal */

#define BLK_LOCK "/run/swaptrace-blktrace.lock"
#define PROBE_LOCK "/run/swaptrace-probes.lock"

/*
 * Per-CPU ring-buffer sizes (KiB) before the memory cap of size_buffer(),
 * sized for the event rate: a swapped page costs about 250 bytes of block
 * events (queue, get-request, issue, complete, merges, each with its
 * header) and a fault event of 40.  8 MiB holds a second of 30 000 pages/s
 * (120 MB/s of swap) landing on one CPU: ten drain intervals, and the
 * instance's buffer_percent wakes the reader at half of it anyway.  The
 * task buffer sees about one event per page, so half as much is ample.
 */
#define BLOCK_BUFFER_KB 8192
#define TASK_BUFFER_KB 4096
#define MIN_BUFFER_KB 1024

/*
 * block_bio_complete is the only completion of a bio-based device (zram,
 * dm, md): they make no requests.  A request's bios do not fire it (the
 * block layer clears their flag: block_rq_complete said it), so nothing
 * completes twice.
 */
static const char *const block_events[] = {
	"block_bio_queue", "block_getrq", "block_rq_insert", "block_rq_issue",
	"block_rq_complete", "block_bio_complete", "block_bio_backmerge", "block_bio_frontmerge",
	"block_rq_merge", "block_bio_remap",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void capture_note(struct swt_capture *c, int warning, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!c->o.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->o.note(c->o.note_ctx, warning, msg);
}

/* ---- set-up -------------------------------------------------------------- */

static int find_tracefs(struct swt_capture *c, struct swt_err *err)
{
	static const char *const where[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char probe[PATH_MAX];
	int mutex;

	if (c->o.tracing_dir) {
		c->tracing_dir = swt_strdup(c->o.tracing_dir);
		goto found;
	}
	/* another capture may be mounting it, or unmounting it as it ends */
	mutex = swt_tracefs_mutex_lock(SWT_UNDO_DIR);
	c->tracefs_users = swt_tracefs_users_join(SWT_UNDO_DIR);
	for (size_t i = 0; i < SWT_ARRAY_SIZE(where); i++) {
		/*
		 * From mountinfo: looking at the path would not do, as one under
		 * a mounted debugfs triggers its automount of tracefs at
		 * /sys/kernel/debug/tracing, a mount no capture made or removes.
		 */
		int mounted = swt_fs_mounted_at("/proc/self/mountinfo", "tracefs", where[i]);

		snprintf(probe, sizeof(probe), "%s/trace", where[i]);
		if (mounted > 0 || (mounted < 0 && access(probe, F_OK) == 0)) {
			c->tracing_dir = swt_strdup(where[i]);
			goto unlock;
		}
	}
	/* not mounted: mount it for the capture; the last capture using it unmounts it */
	if (mount("nodev", where[0], "tracefs", 0, NULL) < 0) {
		int e = errno;

		if (mutex >= 0)
			close(mutex);
		return swt_error(err, SWT_ENOTSUP, "tracefs is not mounted and cannot be mounted at "
				 "'%s': %s", where[0], strerror(e));
	}
	c->mounted = 1;
	swt_tracefs_mark_mounted(SWT_UNDO_DIR, where[0]);
	c->tracing_dir = swt_strdup(where[0]);
unlock:
	if (mutex >= 0)
		close(mutex);
found:
	if (!c->tracing_dir)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	snprintf(probe, sizeof(probe), "%s/instances", c->tracing_dir);
	if (access(probe, W_OK) < 0)
		return swt_error(err, SWT_ENOTSUP, "'%s': %s: tracefs instances are unavailable", probe,
				 strerror(errno));
	if (tracefs_set_tracing_dir(c->tracing_dir) < 0)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	return 0;
}

/*
 * --buffer-kb is per CPU and per buffer, and the kernel pins all of it:
 * two buffers (task events, and block I/O: an instance, or the top level
 * with --blktrace) on every CPU.  More than half the memory available
 * would starve the host being traced.
 */
static int check_buffer_kb(const struct swt_capture *c, struct swt_err *err)
{
	int64_t avail = swt_meminfo_kib("MemAvailable");
	uint64_t total = (uint64_t)c->o.buffer_kb * c->ncpus * 2;

	if (!c->o.buffer_kb || avail <= 0 || total <= (uint64_t)avail / 2)
		return 0;
	return swt_error(err, SWT_EUSAGE, "--buffer-kb %u would pin %llu MiB (%u CPUs x 2 buffers), "
			 "more than half the %lld MiB available: give a smaller size",
			 c->o.buffer_kb, (unsigned long long)(total / 1024), c->ncpus,
			 (long long)(avail / 1024));
}

static int count_cpus(struct swt_capture *c, struct swt_err *err)
{
	char path[PATH_MAX];

	c->ncpus = 0;
	for (;;) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%u", c->tracing_dir, c->ncpus);
		if (access(path, F_OK) < 0)
			break;
		c->ncpus++;
	}
	if (!c->ncpus)
		return swt_error(err, SWT_ENOTSUP, "'%s/per_cpu': no CPUs to trace", c->tracing_dir);
	return check_buffer_kb(c, err);
}

static int make_private_dir(const char *path, struct swt_err *err)
{
	if (mkdir(path, 0700) < 0)
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
	return 0;
}

static int make_out_dir(struct swt_capture *c, struct swt_err *err)
{
	struct stat sb;
	int ret;

	if (stat(c->o.out_dir, &sb) == 0) {
		int empty = 1;

		if (!S_ISDIR(sb.st_mode))
			return swt_error(err, SWT_EUSAGE, "'%s' exists and is not a directory",
					 c->o.out_dir);
		/* what ingest takes for a capture, or a capture's leftovers */
		for (const char *const *name = (const char *const[]){ "meta.txt", "trace.dat", "blk",
				"raw", "maps", NULL }; empty && *name; name++) {
			char *probe = swt_path_join(c->o.out_dir, *name);

			empty = probe && access(probe, F_OK) < 0;
			free(probe);
		}
		if (!empty)
			return swt_error(err, SWT_EUSAGE,
					 "'%s' already holds a capture; choose another directory",
					 c->o.out_dir);
	} else {
		ret = make_private_dir(c->o.out_dir, err);
		if (ret)
			return ret;
		c->made_dir = 1;
	}
	c->out_dir = swt_strdup(c->o.out_dir);
	c->raw_dir = swt_path_join(c->o.out_dir, "raw");
	c->maps_dir = swt_path_join(c->o.out_dir, "maps");
	c->blk_dir = swt_path_join(c->o.out_dir, "blk");
	c->reserve = swt_path_join(c->o.out_dir, ".reserve");
	if (!c->out_dir || !c->raw_dir || !c->maps_dir || !c->blk_dir || !c->reserve)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	ret = make_private_dir(c->raw_dir, err);
	if (!ret)
		ret = make_private_dir(c->maps_dir, err);
	if (!ret && c->o.blktrace)
		ret = make_private_dir(c->blk_dir, err);
	return ret;
}

static int read_swaps(const char *root, char **text, struct swt_err *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/proc/swaps", root);
	*text = swt_read_text(path, NULL);
	if (!*text)
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
	return 0;
}

static int find_swaps(struct swt_capture *c, struct swt_err *err)
{
	int ret = read_swaps("", &c->swaps_start, err);

	if (!ret)
		ret = swt_swap_parse(c->swaps_start, &c->swaps, &c->nr_swaps, err);
	if (ret)
		return ret;
	if (!c->nr_swaps)
		return swt_error(err, SWT_ENOENT, "no swap area is active (/proc/swaps is empty): "
				 "nothing to capture");
	c->devs = calloc(c->nr_swaps, sizeof(*c->devs));
	c->disks = calloc(c->nr_swaps, sizeof(*c->disks));
	if (!c->devs || !c->disks)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->nr_swaps; i++) {
		struct swt_swap_area *a = &c->swaps[i];
		size_t k;

		ret = swt_swap_resolve("", a, (unsigned)c->page_size, err);
		if (ret)
			return ret;
		if (!a->dev) {
			capture_note(c, 1, "swap area '%s' is not recorded: %s", a->path, a->unresolved);
			continue;
		}
		for (k = 0; k < c->nr_devs; k++)
			if (c->devs[k] == a->dev)
				break;
		if (k == c->nr_devs) {
			c->devs[c->nr_devs] = a->dev;
			c->disks[c->nr_devs] = a->disk;
			c->nr_devs++;
		}
	}
	if (!c->nr_devs)
		return swt_error(err, SWT_ENOTSUP, "no swap area could be mapped to a block device");
	return 0;
}

/* Room for the ring buffers: at most 1/32 of memory for all of them together. */
static unsigned size_buffer(const struct swt_capture *c, unsigned want_kb, unsigned instances)
{
	if (c->o.buffer_kb)
		return c->o.buffer_kb;
	if (c->mem_total_kib > 0) {
		uint64_t cap = (uint64_t)c->mem_total_kib / 32 / ((uint64_t)c->ncpus * instances);

		if (want_kb > cap)
			want_kb = (unsigned)cap;
	}
	return SWT_MAX(want_kb, MIN_BUFFER_KB);
}

static int save_format(struct swt_capture *c, int ftrace, const char *system, const char *name,
		       struct swt_err *err)
{
	struct saved_event *v = ftrace ? c->ftrace : c->events, *e;
	size_t *nr = ftrace ? &c->nr_ftrace : &c->nr_events;
	size_t *cap = ftrace ? &c->cap_ftrace : &c->cap_events;
	char *fmt = tracefs_event_file_read(NULL, system, name, "format", NULL);

	if (!fmt)
		return swt_error(err, SWT_EIO, "cannot read the format of event %s:%s", system, name);
	if (swt_grow((void **)&v, cap, *nr + 1, sizeof(*v))) {
		free(fmt);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	if (ftrace)
		c->ftrace = v;
	else
		c->events = v;
	e = &v[*nr];
	e->system = swt_strdup(system);
	e->name = swt_strdup(name);
	e->format = fmt;
	(*nr)++;
	if (!e->system || !e->name)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	return 0;
}

static int save_headers(struct swt_capture *c, struct swt_err *err)
{
	char **names;
	int ret = 0;

	c->header_page = tracefs_instance_file_read(NULL, "events/header_page", NULL);
	c->header_event = tracefs_instance_file_read(NULL, "events/header_event", NULL);
	if (!c->header_page || !c->header_event)
		return swt_error(err, SWT_EIO, "'%s/events': cannot read header_page/header_event",
				 c->tracing_dir);
	names = tracefs_system_events(c->tracing_dir, "ftrace");
	for (size_t i = 0; names && names[i] && !ret; i++)
		ret = save_format(c, 1, "ftrace", names[i], err);
	tracefs_list_free(names);
	return ret;
}

static int write_inst(struct inst *in, const char *file, const char *value, struct swt_err *err)
{
	if (tracefs_instance_file_write(in->ti, file, value) < 0)
		return swt_error(err, SWT_EIO, "instance '%s': cannot write '%s' to %s: %s", in->name,
				 value, file, strerror(errno));
	return 0;
}

/* The trace clocks that count nanoseconds (the others: TSC cycles, events, jiffies). */
static int ns_clock(const char *clock)
{
	static const char *const ns[] = { "local", "global", "mono", "mono_raw", "boot", "tai",
					  "perf" };

	for (size_t i = 0; i < SWT_ARRAY_SIZE(ns); i++)
		if (!strcmp(clock, ns[i]))
			return 1;
	return 0;
}

static int create_instance(struct swt_capture *c, struct inst *in, const char *suffix,
			   const char *buffer, unsigned kb, struct swt_err *err)
{
	char value[32];
	int ret;

	in->buffer = buffer;
	in->buffer_kb = kb;
	snprintf(in->name, sizeof(in->name), "swaptrace-%d%s", (int)getpid(), suffix);
	{
		char *dir = NULL;

		if (asprintf(&dir, "%s/instances/%s", c->tracing_dir, in->name) < 0)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		ret = swt_knobs_journal_mkdir(&c->knobs, dir, err);
		free(dir);
		if (ret)
			return ret;
	}
	in->ti = tracefs_instance_create(in->name);
	if (!in->ti)
		return swt_error(err, SWT_EIO, "cannot create tracefs instance '%s': %s", in->name,
				 strerror(errno));
	if (!tracefs_instance_is_new(in->ti))
		return swt_error(err, SWT_EBUSY, "tracefs instance '%s' already exists (left by a "
				 "capture that was killed?); remove it with rmdir '%s/instances/%s'",
				 in->name, c->tracing_dir, in->name);
	in->created = 1;
	/* a new instance traces at once: off until everything is in place */
	if (tracefs_trace_off(in->ti) < 0)
		return swt_error(err, SWT_EIO, "instance '%s': cannot turn tracing off", in->name);
	snprintf(value, sizeof(value), "%u", kb);
	ret = write_inst(in, "buffer_size_kb", value, err);
	if (!ret) {
		/* the kernel rounds up (64 KiB gives 67): meta.txt says what it gave */
		char *text = tracefs_instance_file_read(in->ti, "buffer_size_kb", NULL);
		char *size = text ? swt_knob_restore_value(text) : NULL;
		uint64_t given;

		if (size && !swt_parse_u64(size, &given) && given >= kb && given <= UINT_MAX)
			in->buffer_kb = (unsigned)given;
		free(size);
		free(text);
	}
	if (!ret && c->o.blktrace) {
		/* blk records carry the top-level clock: use the same one */
		char *text = tracefs_instance_file_read(NULL, "trace_clock", NULL);
		char *clock = text ? swt_knob_restore_value(text) : NULL;

		free(text);
		if (!clock)
			return swt_error(err, SWT_EIO, "cannot read the top-level trace_clock");
		if (!ns_clock(clock)) {
			/*
			 * Timestamps are nanoseconds (docs/capture-format.md): a
			 * cycle or event counter would make every time wrong.
			 * The top level is switched by the blk tracer's setup,
			 * under its lock once the top level is found idle, not
			 * here: the switch empties the top-level buffer, which
			 * may be someone else's.
			 */
			capture_note(c, 1, "the top-level trace_clock '%s' does not count "
				     "nanoseconds: 'local' while recording, put back after", clock);
			free(clock);
			clock = swt_strdup("local");
			if (!clock)
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
		}
		if (!ret)
			ret = write_inst(in, "trace_clock", clock, err);
		free(c->blk_clock);
		c->blk_clock = clock;
	}
	if (!ret) {
		in->clock = tracefs_instance_file_read(in->ti, "trace_clock", NULL);
		if (!in->clock)
			ret = swt_error(err, SWT_EIO, "instance '%s': cannot read trace_clock", in->name);
	}
	in->r = calloc(c->ncpus, sizeof(*in->r));
	in->stats = calloc(c->ncpus, sizeof(*in->stats));
	if (!ret && (!in->r || !in->stats))
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
	for (unsigned i = 0; in->r && i < c->ncpus; i++)
		in->r[i].fd = in->r[i].out_fd = -1;
	return ret;
}

static int enable_event(struct swt_capture *c, struct inst *in, const char *system,
			const char *name, const char *filter, struct swt_err *err)
{
	if (filter && tracefs_event_file_write(in->ti, system, name, "filter", filter) < 0)
		return swt_error(err, SWT_EIO, "instance '%s': cannot set filter '%s' on %s:%s: %s",
				 in->name, filter, system, name, strerror(errno));
	if (tracefs_event_enable(in->ti, system, name) < 0)
		return swt_error(err, SWT_EIO, "instance '%s': cannot enable %s:%s: %s", in->name,
				 system, name, strerror(errno));
	return save_format(c, 0, system, name, err);
}

static int event_has_field(const char *system, const char *name, const char *decl)
{
	char *fmt = tracefs_event_file_read(NULL, system, name, "format", NULL);
	int ok = fmt && strstr(fmt, decl);

	free(fmt);
	return ok;
}

/*
 * The OOM killer's victims, by pid and name: /proc/vmstat's oom_kill says
 * only that someone on the host was killed.  The event comes from the task
 * that ran out of memory, often not the victim, so it is recorded in a
 * buffer no pid filter narrows where there is one.  Kernels without the
 * event, or a failure to enable it, cost only the names.
 */
static int record_oom_victims(struct swt_capture *c, struct inst *in, const char *scope,
			      struct swt_err *err)
{
	struct swt_err why = { 0 };

	if (!tracefs_event_file_exists(NULL, "oom", "mark_victim", "format"))
		return 0;
	if (enable_event(c, in, "oom", "mark_victim", NULL, &why)) {
		if (why.code == SWT_ENOMEM)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		/* no records whose format trace.dat would lack */
		tracefs_event_disable(in->ti, "oom", "mark_victim");
		capture_note(c, 1, "the OOM killer's victims are not recorded: %s", why.msg);
		return 0;
	}
	c->oom_victims = scope;
	return 0;
}

static int setup_block(struct swt_capture *c, struct swt_err *err)
{
	char *filter = NULL;
	size_t len = 0, cap = 0;
	int ret;

	ret = create_instance(c, &c->block, "-block", "swaptrace-block",
			      size_buffer(c, BLOCK_BUFFER_KB, 2), err);
	if (ret)
		return ret;
	for (size_t i = 0; i < c->nr_devs; i++) {
		if (swt_grow((void **)&filter, &cap, len + 40, 1)) {
			free(filter);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		len += (size_t)sprintf(filter + len, "%sdev == %u", i ? " || " : "", c->devs[i]);
	}
	for (size_t i = 0; i < SWT_ARRAY_SIZE(block_events) && !ret; i++) {
		if (!tracefs_event_file_exists(NULL, "block", block_events[i], "format"))
			continue;	/* not in this kernel */
		if (!event_has_field("block", block_events[i], " dev;")) {
			capture_note(c, 1, "block:%s has no dev field to filter on; not recorded",
				     block_events[i]);
			continue;
		}
		ret = enable_event(c, &c->block, "block", block_events[i], filter, err);
	}
	free(filter);
	if (!ret)
		ret = record_oom_victims(c, &c->block, "all", err);
	return ret;
}

static int setup_probes(struct swt_capture *c, struct swt_err *err)
{
	char *readme = tracefs_instance_file_read(NULL, "README", NULL);
	struct swt_ksyms ks;
	size_t len;

	if (!readme)
		return swt_error(err, SWT_EIO, "'%s/README': cannot read it", c->tracing_dir);
	swt_ksyms_scan(c->kallsyms, c->kallsyms_len, &ks);
	swt_probes_plan(readme, c->uts.machine, swt_ksyms_has, &ks, &c->plan);
	free(readme);
	if (!c->plan.nr) {
		snprintf(c->probes_line, sizeof(c->probes_line), "none (%s)", c->plan.reason);
		return 0;
	}
	/* probe names are fixed (the decoder looks for them): one owner at a time */
	c->probe_lock = open(PROBE_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->probe_lock < 0 || flock(c->probe_lock, LOCK_EX | LOCK_NB) < 0) {
		snprintf(c->probes_line, sizeof(c->probes_line),
			 "none (another capture holds the swap-entry probes, '%s')", PROBE_LOCK);
		if (c->probe_lock >= 0)
			close(c->probe_lock);
		c->probe_lock = -1;
		return 0;
	}
	len = (size_t)snprintf(c->probes_line, sizeof(c->probes_line), "kprobe");
	for (size_t i = 0; i < c->plan.nr; i++) {
		const struct swt_probe_def *d = &c->plan.defs[i];
		struct tracefs_dynevent *stale = tracefs_dynevent_get(TRACEFS_DYNEVENT_KPROBE,
								      SWT_PROBE_GROUP, d->event);
		struct tracefs_dynevent *ev;

		if (stale) {
			/* left by a capture that was killed: we hold the lock, so it is ours */
			tracefs_dynevent_destroy(stale, true);
			tracefs_dynevent_free(stale);
		}
		ev = tracefs_kprobe_alloc(SWT_PROBE_GROUP, d->event, d->function, d->args);
		if (!ev || tracefs_dynevent_create(ev) < 0) {
			capture_note(c, 1, "kprobe %s on %s could not be created: %s", d->event,
				     d->function, strerror(errno));
			tracefs_dynevent_free(ev);
			continue;
		}
		c->probes[c->nr_probes++] = ev;
		len += (size_t)snprintf(c->probes_line + len, sizeof(c->probes_line) - len,
					" %s=%s", d->event, d->function);
		if (len >= sizeof(c->probes_line))
			len = sizeof(c->probes_line) - 1;
	}
	if (!c->nr_probes)
		snprintf(c->probes_line, sizeof(c->probes_line),
			 "none (kprobe events could not be created)");
	return 0;
}

static int setup_task(struct swt_capture *c, struct swt_err *err)
{
	int ret;

	ret = create_instance(c, &c->task, "", "swaptrace",
			      size_buffer(c, TASK_BUFFER_KB, c->o.blktrace ? 1 : 2), err);
	if (ret)
		return ret;
	if (c->target.kind != SWT_TARGET_SYSTEM) {
		char *tids = NULL;

		ret = write_inst(&c->task, "options/event-fork", "1", err);
		if (!ret)
			ret = swt_target_new_tids(&c->target, &tids, err);
		if (!ret && (!tids || !tids[0]))
			ret = swt_error(err, SWT_ENOENT, "the target has no tasks to follow");
		if (!ret)
			ret = write_inst(&c->task, "set_event_pid", tids, err);
		free(tids);
		if (ret)
			return ret;
	}
	ret = enable_event(c, &c->task, "exceptions", "page_fault_user", NULL, err);
	/*
	 * A swapped-out buffer that write() or send() copies from is faulted
	 * in by the kernel: without its fault, ingest tied the reads to the
	 * task's last user fault, at another address.  Only user addresses
	 * (the lower half): the kernel's own faults are no swap-ins.
	 */
	if (!ret && tracefs_event_file_exists(NULL, "exceptions", "page_fault_kernel", "format"))
		ret = enable_event(c, &c->task, "exceptions", "page_fault_kernel",
				   "address < 0x8000000000000000", err);
	if (ret)
		return ret;
	/*
	 * Each thread started (CLONE_THREAD), with its parent: ingest gives it
	 * its process's maps also when it lived between two looks at /proc.
	 */
	if (tracefs_event_file_exists(NULL, "task", "task_newtask", "format"))
		ret = enable_event(c, &c->task, "task", "task_newtask", "clone_flags & 0x10000", err);
	if (ret)
		return ret;
	if (tracefs_event_file_exists(NULL, "vmscan", "mm_vmscan_write_folio", "format"))
		ret = enable_event(c, &c->task, "vmscan", "mm_vmscan_write_folio", NULL, err);
	else if (tracefs_event_file_exists(NULL, "vmscan", "mm_vmscan_writepage", "format"))
		ret = enable_event(c, &c->task, "vmscan", "mm_vmscan_writepage", NULL, err);
	for (size_t i = 0; i < c->nr_probes && !ret; i++) {
		char *sys = NULL, *ev = NULL;

		tracefs_dynevent_info(c->probes[i], &sys, &ev, NULL, NULL, NULL);
		if (sys && ev)
			ret = enable_event(c, &c->task, sys, ev, NULL, err);
		free(sys);
		free(ev);
	}
	/* --blktrace has no block instance: the task buffer, pid-filtered with a target */
	if (!ret && c->o.blktrace)
		ret = record_oom_victims(c, &c->task,
					 c->target.kind == SWT_TARGET_SYSTEM ? "all" : "followed", err);
	return ret;
}

static int open_readers(struct swt_capture *c, struct inst *in, struct swt_err *err)
{
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
		struct reader *r = &in->r[cpu];
		char file[64];
		char *path;

		snprintf(file, sizeof(file), "per_cpu/cpu%u/trace_pipe_raw", cpu);
		path = tracefs_instance_get_file(in->ti, file);
		if (!path)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		r->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (r->fd < 0) {
			int ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));

			tracefs_put_tracing_file(path);
			return ret;
		}
		tracefs_put_tracing_file(path);
		r->tcpu = tracefs_cpu_alloc_fd(r->fd, (int)c->subbuf, true);
		if (!r->tcpu)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		if (asprintf(&r->raw_path, "%s/%s.cpu%u", c->raw_dir, in->buffer, cpu) < 0) {
			r->raw_path = NULL;
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		r->out_fd = open(r->raw_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (r->out_fd < 0)
			return swt_error(err, SWT_EIO, "'%s': %s", r->raw_path, strerror(errno));
	}
	return 0;
}

/*
 * Keep room for trace.dat's head (kallsyms is most of it): a full disk
 * stops the recording, and the head must still fit to make what was
 * recorded readable.
 */
static int reserve_head_room(struct swt_capture *c, struct swt_err *err)
{
	/* the head is mostly kallsyms; add a chunk for moving pages and the rest of it */
	off_t size = (off_t)c->kallsyms_len + (2 << 20);
	int fd;

	fd = open(c->reserve, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return swt_error(err, SWT_EIO, "'%s': %s", c->reserve, strerror(errno));
	c->reserve_made = 1;
	if (posix_fallocate(fd, 0, size)) {
		close(fd);
		unlink(c->reserve);
		c->reserve_made = 0;
		return swt_error(err, SWT_EIO, "'%s': not enough free space to start a capture (%lld MiB "
				 "needed for trace.dat's headers)", c->out_dir,
				 (long long)(size >> 20));
	}
	close(fd);
	return 0;
}

static int read_host(struct swt_capture *c, struct swt_err *err)
{
	long sb = sysconf(_SC_PAGESIZE);
	char *text;

	/* read once: probe planning, the reserve for trace.dat's head, and the head */
	c->kallsyms = swt_read_text("/proc/kallsyms", &c->kallsyms_len);
	if (!c->kallsyms)
		return swt_error(err, SWT_EIO, "'/proc/kallsyms': %s", strerror(errno));

	c->page_size = sb > 0 ? sb : 4096;
	if (uname(&c->uts) < 0)
		return swt_error(err, SWT_EIO, "uname: %s", strerror(errno));
	c->page_cluster = swt_read_number("/proc/sys/vm/page-cluster");
	text = swt_read_text("/sys/kernel/mm/swap/vma_ra_enabled", NULL);
	c->vma_ra = text ? !strncmp(text, "true", 4) : -1;
	free(text);
	/*
	 * The multi-gen LRU ages pages by generations, not by the two lists
	 * replay models: a replay says so when the traced kernel ran it.
	 */
	text = swt_read_text("/sys/kernel/mm/lru_gen/enabled", NULL);
	if (text)
		snprintf(c->lru_gen, sizeof(c->lru_gen), "%.*s", (int)strcspn(text, " \t\n"), text);
	else if (errno == ENOENT)
		snprintf(c->lru_gen, sizeof(c->lru_gen), "absent");	/* built without it */
	free(text);
	c->mem_total_kib = swt_meminfo_kib("MemTotal");
	return 0;
}

/* ---- recording ----------------------------------------------------------- */

/* What one write of ring-buffer pages did: 1 wrote some (go on), 0 nothing left, or an error. */
static int count_written(struct swt_capture *c, struct reader *r, int n, struct swt_err *err)
{
	if (n > 0) {
		r->bytes += (uint64_t)n;
		c->data_bytes += (uint64_t)n;
		return 1;
	}
	if (n == 0 || errno == EAGAIN)
		return 0;
	return swt_error(err, SWT_EIO, "'%s': %s", r->raw_path, strerror(errno));
}

/*
 * What a CPU's file could not take, read to /dev/null: the statistics'
 * "read events" then count every event the recording had, so ingest finds
 * the ones the file lacks and counts them lost (the instance's removal
 * would drop them uncounted).
 */
static void discard_rest(struct reader *r)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (null < 0)
		return;
	while (tracefs_cpu_write(r->tcpu, null, true) > 0)
		;
	while (tracefs_cpu_flush_write(r->tcpu, null) > 0)
		;
	close(null);
}

/* The final drain takes every CPU, whatever failed on another; the first error is returned. */
static int drain_inst(struct swt_capture *c, struct inst *in, int final, struct swt_err *err)
{
	int first = 0;

	if (!in->r)
		return 0;
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
		struct reader *r = &in->r[cpu];
		int ret = 0;

		if (!r->tcpu)
			continue;
		for (int round = 0; final || round < DRAIN_ROUNDS; round++) {
			ret = count_written(c, r, tracefs_cpu_write(r->tcpu, r->out_fd, true), err);
			if (ret <= 0)
				break;
		}
		if (ret < 0 && !final)
			return ret;
		/* the last, partial page of each CPU */
		if (final && !ret)
			do
				ret = count_written(c, r, tracefs_cpu_flush_write(r->tcpu, r->out_fd),
						    err);
			while (ret > 0);
		if (ret < 0) {
			discard_rest(r);
			if (!first)
				first = ret;
		}
	}
	return first;
}

static int drain(struct swt_capture *c, int final, struct swt_err *err)
{
	int ret = drain_inst(c, &c->task, final, err);

	if (!ret)
		ret = drain_inst(c, &c->block, final, err);
	if (!ret && c->blk && !final)
		ret = swt_blktracer_drain(c->blk, &c->data_bytes, err);
	return ret;
}

/* A swap device that went away (hot-unplugged, loop detached) ends the capture. */
static int check_devices(struct swt_capture *c, struct swt_err *err)
{
	for (size_t i = 0; i < c->nr_devs; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", swt_dev_major(c->devs[i]),
			 swt_dev_minor(c->devs[i]));
		if (access(path, F_OK) == 0 && strncmp(c->disks[i], "loop", 4))
			continue;
		if (access(path, F_OK) == 0) {
			/* a loop device node outlives its backing file */
			snprintf(path, sizeof(path), "/sys/block/%s/loop", c->disks[i]);
			if (access(path, F_OK) == 0)
				continue;
		}
		return swt_error(err, SWT_ENOENT, "swap device '%s' (%u:%u) went away",
				 c->disks[i], swt_dev_major(c->devs[i]), swt_dev_minor(c->devs[i]));
	}
	return 0;
}

/*
 * A swap area turned on while recording: the block events are set up for
 * the devices there were at the start, so its I/O is not recorded.  Said
 * once, from /proc/swaps as text now holds it.
 */
static void check_new_swaps(struct swt_capture *c, const char *text)
{
	struct swt_swap_area *now = NULL;
	size_t n = 0;

	if (c->new_swap_said || !text || swt_swap_parse(text, &now, &n, NULL))
		return;
	for (size_t i = 0; i < n && !c->new_swap_said; i++) {
		size_t j;

		for (j = 0; j < c->nr_swaps && strcmp(c->swaps[j].path, now[i].path); j++)
			;
		if (j < c->nr_swaps)
			continue;
		capture_note(c, 1, "swap area '%s' was turned on during the capture: only the areas "
			     "on at its start are recorded, so its swap I/O is missing (capture again "
			     "to include it)", now[i].path);
		c->new_swap_said = 1;
	}
	swt_swap_areas_free(now, n);
}

/*
 * Tasks that joined the followed cgroup since the last look: traced from
 * now on.  Looked at on every drain (100 ms at most), not once a second:
 * a workload moved into the cgroup swapped in for up to a second untraced.
 * Their processes are mapped then too, and looked at again at each drain
 * for a second: a short-lived one was mapped at a look more often than not
 * too late, or as the shell that joined before exec()ing it.
 */
static int follow_cgroup(struct swt_capture *c, struct swt_err *err)
{
	char *tids = NULL;
	int ret;

	if (c->target.kind != SWT_TARGET_CGROUP)
		return 0;
	if (!swt_target_new_tids(&c->target, &tids, NULL) && tids && tids[0] &&
	    tracefs_instance_file_append(c->task.ti, "set_event_pid", tids) < 0 &&
	    !c->follow_failed_said) {
		capture_note(c, 1, "cannot follow new tasks of cgroup '%s': %s", c->target.cgroup_dir,
			     strerror(errno));
		c->follow_failed_said = 1;
	}
	ret = swt_target_snapshot_joined(&c->target, tids, err);
	free(tids);
	return ret;
}

/*
 * The maps refresh, with the tasks the instance follows for a command or a
 * --pid process (event-fork keeps them in set_event_pid even when they
 * leave its process tree).
 */
static int snapshot_target(struct swt_capture *c, struct swt_err *err)
{
	char *traced = NULL;
	int ret;

	if (c->task.ti && (c->target.kind == SWT_TARGET_COMMAND || c->target.kind == SWT_TARGET_PID))
		traced = tracefs_instance_file_read(c->task.ti, "set_event_pid", NULL);
	ret = swt_target_snapshot(&c->target, traced, err);
	free(traced);
	return ret;
}

static int tick(struct swt_capture *c, struct swt_err *err)
{
	int ret;

	ret = snapshot_target(c, err);
	if (!ret)
		ret = check_devices(c, err);
	if (!ret && !c->new_swap_said) {
		char *text = NULL;

		if (!read_swaps("", &text, NULL))
			check_new_swaps(c, text);
		free(text);
	}
	return ret;
}

/* Wait (bounded) until the swap devices have no I/O in flight. */
static void wait_inflight(struct swt_capture *c)
{
	uint64_t until = now_ns() + (uint64_t)INFLIGHT_WAIT_MS * 1000000ull;

	while (now_ns() < until) {
		int busy = 0;

		for (size_t i = 0; i < c->nr_devs && !busy; i++) {
			char path[PATH_MAX], *text;
			unsigned long rd = 0, wr = 0;

			snprintf(path, sizeof(path), "/sys/block/%s/inflight", c->disks[i]);
			text = swt_read_text(path, NULL);
			if (text && sscanf(text, "%lu %lu", &rd, &wr) == 2 && (rd || wr))
				busy = 1;
			free(text);
		}
		if (!busy)
			return;
		poll(NULL, 0, 10);
	}
}

static void close_readers(struct inst *in, unsigned ncpus)
{
	for (unsigned cpu = 0; in->r && cpu < ncpus; cpu++) {
		struct reader *r = &in->r[cpu];

		if (r->tcpu)
			tracefs_cpu_free_fd(r->tcpu);
		if (r->fd >= 0)
			close(r->fd);
		if (r->out_fd >= 0)
			close(r->out_fd);
		r->tcpu = NULL;
		r->fd = r->out_fd = -1;
	}
}

static void read_stats(struct swt_capture *c, struct inst *in)
{
	for (unsigned cpu = 0; in->ti && in->stats && cpu < c->ncpus; cpu++) {
		char file[64];

		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", cpu);
		free(in->stats[cpu]);
		in->stats[cpu] = tracefs_instance_file_read(in->ti, file, NULL);
	}
}

static void recovery_note(void *ctx, int warning, const char *msg)
{
	capture_note(ctx, warning, "%s", msg);
}

/*
 * What could not be put back fails the capture, as a setting left changed
 * does: a script must not take a host still tracing for a clean one.  The
 * first such failure is the capture's error (unless it has one already);
 * any more are warnings, so that each is named.
 */
static void restore_failed(struct swt_capture *c, int *ret, struct swt_err *err,
			   const struct swt_err *why)
{
	if (!*ret && err && !err->code) {
		*err = *why;
		*ret = -why->code;
		return;
	}
	capture_note(c, 1, "%s", why->msg);
	if (!*ret)
		*ret = -why->code;
}

/*
 * 0, or -1 when the instance could not be removed: a failure, and left in
 * the journal for the next capture.
 */
static int remove_instance(struct swt_capture *c, struct inst *in, int *failed,
			   struct swt_err *err)
{
	int ret = 0;

	if (!in->ti)
		return 0;
	if (in->created && tracefs_instance_destroy(in->ti) < 0) {
		struct swt_err why = { 0 };

		swt_error(&why, SWT_EIO, "cannot remove tracefs instance '%s/instances/%s': %s; "
			  "the next capture removes it", c->tracing_dir, in->name, strerror(errno));
		restore_failed(c, failed, err, &why);
		ret = -1;
	}
	tracefs_instance_free(in->ti);
	in->ti = NULL;
	return ret;
}

/* Each tid of a set_event_pid text, but swaptrace's own and the command's (0 at the end). */
static pid_t next_task(const char **p, const struct swt_capture *c)
{
	while (*p && **p) {
		char *end;
		long tid = strtol(*p, &end, 10);

		if (end == *p) {
			(*p)++;
			continue;
		}
		*p = end;
		if (tid > 0 && (pid_t)tid != getpid() && (pid_t)tid != c->target.child)
			return (pid_t)tid;
	}
	return 0;
}

/*
 * The command's tasks as the instance holds them when it goes, each with
 * its start time, for signal_command after that.  Once.
 */
static void take_command_tasks(struct swt_capture *c)
{
	char *tids;
	const char *p;
	size_t cap = 0;
	pid_t tid;

	if (c->command_tasks_taken || c->target.kind != SWT_TARGET_COMMAND || !c->task.ti)
		return;
	c->command_tasks_taken = 1;
	tids = tracefs_instance_file_read(c->task.ti, "set_event_pid", NULL);
	for (p = tids; (tid = next_task(&p, c));) {
		struct command_task ct = { .tid = tid };

		if (!swt_task_runs(tid, &ct.start))
			continue;
		if (swt_grow((void **)&c->command_tasks, &cap, c->nr_command_tasks + 1,
			     sizeof(*c->command_tasks)))
			break;	/* out of memory: the command itself is still signalled */
		c->command_tasks[c->nr_command_tasks++] = ct;
	}
	free(tids);
}

/*
 * A stop signal goes to the command and to every task it started, which
 * event-fork keeps in set_event_pid -- as Ctrl-C at a terminal reaches the
 * whole job: a workload a shell command line started kept running,
 * unrecorded and swapping, after swaptrace exited.  Once the instance is
 * gone, the tasks it last held that still run: the same start time, or
 * the pid is another process's now (pids are reused, and recording can
 * stop long before the command ends).
 */
static void signal_task(pid_t tid, int sig, int job_has_it)
{
	/*
	 * A process once: kill() to a thread reaches its whole process, and a
	 * program that counts a second Ctrl-C as "quit now" got several.  The
	 * terminal's signal already reached swaptrace's process group.
	 */
	if (tid <= 0 || swt_task_is_thread(tid) || (job_has_it && getpgid(tid) == getpgrp()))
		return;
	kill(tid, sig);
}

static void signal_command(struct swt_capture *c, int sig, int job_has_it)
{
	char *live = c->task.ti ? tracefs_instance_file_read(c->task.ti, "set_event_pid", NULL) : NULL;
	char *tree = NULL;
	const char *p = live;
	pid_t tid;

	if (live) {
		signal_task(c->target.child, sig, job_has_it);
		while ((tid = next_task(&p, c)))
			signal_task(tid, sig, job_has_it);
		free(live);
		return;
	}
	/*
	 * And what the command started since, which no instance followed: its
	 * descendants now, listed before any is signalled (a parent killed
	 * first hands its children to init, out of reach).
	 */
	if (c->target.child > 0)
		swt_process_tree(c->target.child, &tree);
	signal_task(c->target.child, sig, job_has_it);
	for (size_t i = 0; i < c->nr_command_tasks; i++) {
		uint64_t start;

		if (swt_task_runs(c->command_tasks[i].tid, &start) && start == c->command_tasks[i].start)
			signal_task(c->command_tasks[i].tid, sig, job_has_it);
	}
	for (p = tree; (tid = next_task(&p, c));)
		signal_task(tid, sig, job_has_it);
	free(tree);
}

/*
 * End the recording (when it ran) and put the host back: instances,
 * probes, knobs, the blk lock, a tracefs we mounted.  Idempotent; errors
 * while restoring are reported but never stop the rest of the restore.
 */
int capture_stop_and_restore(struct swt_capture *c, struct swt_err *err)
{
	int ret = 0, blk_stopped = 0, left = 0;

	if (c->stopped)
		return 0;
	c->stopped = 1;
	take_command_tasks(c);
	if (c->recording) {
		if (c->end == SWT_CAPTURE_END_COMMAND || c->end == SWT_CAPTURE_END_TARGET)
			wait_inflight(c);
		if (c->task.ti)
			tracefs_trace_off(c->task.ti);
		if (c->block.ti)
			tracefs_trace_off(c->block.ti);
		if (c->blk) {
			ret = swt_blktracer_stop(c->blk, &c->knobs, &c->data_bytes, err);
			blk_stopped = 1;
		}
		c->t_stop = now_ns();
		if (swt_vmstat_read("", &c->after, err) && !ret)
			ret = -SWT_EIO;
		if (read_swaps("", &c->swaps_end, err) && !ret)
			ret = -SWT_EIO;
		check_new_swaps(c, c->swaps_end);
		{
			/* after a write error the last pages cannot be written either: no news */
			int failed = c->end == SWT_CAPTURE_END_ERROR;
			int r = drain(c, 1, failed ? NULL : err);

			if (r && !ret && !failed)
				ret = r;
		}
		read_stats(c, &c->task);
		read_stats(c, &c->block);
		c->cmdlines = tracefs_instance_file_read(NULL, "saved_cmdlines", NULL);
		c->printk = tracefs_instance_file_read(NULL, "printk_formats", NULL);
		snapshot_target(c, NULL);
		c->recording = 0;
	}
	close_readers(&c->task, c->ncpus);
	close_readers(&c->block, c->ncpus);
	if (c->blk) {
		/* the pipes must be closed before the tracer can be switched back */
		if (!blk_stopped)
			swt_blktracer_stop(c->blk, &c->knobs, &c->data_bytes, NULL);
		c->blk_lost = calloc(c->ncpus, sizeof(*c->blk_lost));
		for (unsigned cpu = 0; c->blk_lost && cpu < c->ncpus; cpu++)
			c->blk_lost[cpu] = swt_blktracer_cpu(c->blk, cpu)->lost;
	}
	/* what could not be put back stays in the journal, for the next capture to retry */
	left |= remove_instance(c, &c->task, &ret, err);
	left |= remove_instance(c, &c->block, &ret, err);
	for (size_t i = 0; i < c->nr_probes; i++) {
		if (tracefs_dynevent_destroy(c->probes[i], true) < 0) {
			struct swt_err why = { 0 };
			int e = errno;
			char *name = NULL;

			/* its own name: probes[] skips the plan's probes that were not created */
			tracefs_dynevent_info(c->probes[i], NULL, &name, NULL, NULL, NULL);
			/* not in the journal: the next capture that sets probes replaces it */
			swt_error(&why, SWT_EIO, "cannot remove kprobe event %s/%s: %s; the next "
				  "capture with probes removes it", SWT_PROBE_GROUP,
				  name ? name : "?", strerror(e));
			free(name);
			restore_failed(c, &ret, err, &why);
			left = -1;
		}
		tracefs_dynevent_free(c->probes[i]);
	}
	c->nr_probes = 0;
	if (c->probe_lock >= 0)
		close(c->probe_lock);
	c->probe_lock = -1;
	{
		struct swt_err why = { 0 };

		if (swt_knobs_restore(&c->knobs, &why)) {
			left = -1;
			restore_failed(c, &ret, err, &why);
		}
	}
	swt_blktracer_destroy(c->blk);
	c->blk = NULL;
	/*
	 * A capture killed while this one recorded left its instances
	 * recording, and perhaps the blk tracer on: put them back now rather
	 * than at a next capture that may never come.  Ours is still locked,
	 * so it is not among them; a tracefs the dead one mounted is left to
	 * the tracefs_leave below.
	 */
	/* not without a tracefs (its mount failed): the dead one's settings would look gone */
	if (c->tracing_dir && (c->tracefs_users >= 0 || c->mounted))
		swt_knobs_recover(SWT_UNDO_DIR, BLK_LOCK, recovery_note, c);
	if (c->tracefs_users >= 0 || c->mounted) {
		int mutex = swt_tracefs_mutex_lock(SWT_UNDO_DIR);

		/* ours or an earlier capture's mount, unless another capture still uses it */
		if (swt_tracefs_leave(SWT_UNDO_DIR, c->tracefs_users,
				      c->mounted ? c->tracing_dir : NULL) < 0)
			capture_note(c, 1, "left tracefs mounted at '%s', which a capture mounted: "
				     "%s", c->tracing_dir, strerror(errno));
		c->tracefs_users = -1;
		c->mounted = 0;
		if (mutex >= 0)
			close(mutex);
	}
	if (left)
		swt_knobs_journal_keep(&c->knobs);
	else
		swt_knobs_journal_close(&c->knobs);
	return ret;
}

/*
 * Journal our own changes, from the mount of tracefs on (find_tracefs
 * runs after the recovery of captures killed earlier, which may unmount
 * the tracefs one of them mounted).
 */
static void start_journal(struct swt_capture *c)
{
	struct swt_err jerr = { 0 };

	if (swt_knobs_journal_open(&c->knobs, SWT_UNDO_DIR, &jerr) ||
	    (c->mounted && swt_knobs_journal_mount(&c->knobs, c->tracing_dir, &jerr)))
		capture_note(c, 1, "%s; a crash of this capture could not be cleaned up by the "
			     "next one", jerr.msg);
}

int swt_capture_create(const struct swt_capture_opts *opts, struct swt_capture **out,
		       struct swt_err *err)
{
	struct swt_capture *c;
	int targets = (opts->pid > 0) + (opts->cgroup != NULL) + (opts->argv && opts->argv[0]);
	int ret;

	*out = NULL;
	if (!opts->out_dir)
		return swt_error(err, SWT_EUSAGE, "no output directory given");
	if (targets > 1)
		return swt_error(err, SWT_EUSAGE, "give one target: a command, --pid or --cgroup");
	c = calloc(1, sizeof(*c));
	if (!c)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	c->o = *opts;
	c->probe_lock = -1;
	c->tracefs_users = -1;
	swt_knobs_init(&c->knobs);
	swt_target_init(&c->target);

	ret = read_host(c, err);
	if (!ret)
		ret = find_tracefs(c, err);
	/*
	 * Undo what captures killed earlier left behind, with tracefs mounted
	 * (their instances could not be removed with it unmounted, and their
	 * journals went all the same); a tracefs one of them mounted is ours
	 * to use now, and the last capture out unmounts it.
	 */
	if (!ret)
		swt_knobs_recover(SWT_UNDO_DIR, BLK_LOCK, recovery_note, c);
	if (!ret) {
		start_journal(c);
		ret = count_cpus(c, err);
	}
	if (!ret)
		ret = make_out_dir(c, err);
	if (!ret)
		ret = find_swaps(c, err);
	if (ret)
		goto out_destroy;
	c->target.maps_dir = swt_strdup(c->maps_dir);
	if (!c->target.maps_dir) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_destroy;
	}
	if (opts->pid > 0) {
		ret = swt_target_attach_pid(&c->target, opts->pid, err);
		if (!ret && c->target.pid != opts->pid)
			capture_note(c, 0, "%d is a thread of process %d: following the process",
				     (int)opts->pid, (int)c->target.pid);
	}
	else if (opts->cgroup)
		ret = swt_target_attach_cgroup(&c->target, opts->cgroup, err);
	else if (opts->argv && opts->argv[0]) {
		c->command = swt_shell_join(opts->argv);
		ret = c->command ? swt_target_spawn(&c->target, opts->argv, err) :
				   swt_error(err, SWT_ENOMEM, "out of memory");
	}
	if (ret)
		goto out_destroy;

	ret = setup_probes(c, err);
	if (!ret)
		ret = save_headers(c, err);
	if (!ret)
		ret = setup_task(c, err);
	if (!ret && !opts->blktrace)
		ret = setup_block(c, err);
	if (ret)
		goto out_destroy;
	{
		char *sub = tracefs_instance_file_read(c->task.ti, "buffer_subbuf_size_kb", NULL);

		/* older kernels have no sub-buffer setting: the page is the sub-buffer */
		c->subbuf = sub ? (unsigned)atoi(sub) * 1024 : (unsigned)c->page_size;
		free(sub);
		if (!c->subbuf)
			c->subbuf = (unsigned)c->page_size;
	}
	if (opts->blktrace) {
		char *prefix = swt_path_join(c->blk_dir, "swap");
		struct swt_blktracer_opts bo = {
			.tracing_dir = c->tracing_dir, .lock_path = BLK_LOCK, .devs = c->devs,
			.disks = c->disks, .ndev = c->nr_devs, .ncpus = c->ncpus,
			.buffer_kb = size_buffer(c, BLOCK_BUFFER_KB, 2), .out_prefix = prefix,
			.trace_clock = c->blk_clock,
		};

		ret = prefix ? swt_blktracer_create(&bo, &c->knobs, &c->blk, err) :
			       swt_error(err, SWT_ENOMEM, "out of memory");
		free(prefix);
		if (ret)
			goto out_destroy;
		/* the buffer is grown, never shrunk: meta.txt says what the kernel gave */
		c->blk_buffer_kb = swt_blktracer_buffer_kb(c->tracing_dir, c->ncpus);
		if (!c->blk_buffer_kb)
			c->blk_buffer_kb = bo.buffer_kb;
	}
	ret = open_readers(c, &c->task, err);
	if (!ret && c->block.ti)
		ret = open_readers(c, &c->block, err);
	if (!ret)
		ret = reserve_head_room(c, err);
	if (!ret)
		ret = swt_vmstat_read("", &c->before, err);
	if (ret)
		goto out_destroy;

	c->t_start = now_ns();
	c->recording = 1;
	if (tracefs_trace_on(c->task.ti) < 0 || (c->block.ti && tracefs_trace_on(c->block.ti) < 0)) {
		ret = swt_error(err, SWT_EIO, "cannot turn tracing on: %s", strerror(errno));
		goto out_destroy;
	}
	if (c->target.kind == SWT_TARGET_COMMAND) {
		ret = swt_target_start(&c->target, opts->argv[0], err);
		if (ret)
			goto out_destroy;
	}
	ret = snapshot_target(c, err);
	if (ret)
		goto out_destroy;
	c->created = 1;
	*out = c;
	return 0;
out_destroy:
	c->end = SWT_CAPTURE_END_ERROR;
	c->recording = 0;	/* nothing worth keeping yet */
	swt_capture_destroy(c);
	return ret;
}

/* Wait for the command after recording stopped, still passing on stop signals. */
static void wait_command(struct swt_capture *c, struct swt_capture_stop *stop)
{
	while (c->target.kind == SWT_TARGET_COMMAND && c->target.released &&
	       !swt_target_poll(&c->target)) {
		if (stop && (unsigned)stop->count > c->stop_seen) {
			c->stop_seen = (unsigned)stop->count;
			if (c->stop_seen > 1 || c->forwarded)
				signal_command(c, SIGKILL, 0);
			else
				signal_command(c, stop->signo, stop->from_terminal);
			c->forwarded = 1;
		}
		poll(NULL, 0, 50);
	}
}

int swt_capture_run(struct swt_capture *c, struct swt_capture_stop *stop, struct swt_err *err)
{
	uint64_t start = now_ns(), next_tick = start + TICK_MS * 1000000ull, deadline = 0;
	uint64_t next_maps = start + COMMAND_MAPS_MS * 1000000ull;
	uint64_t grace = 0;
	struct pollfd *pfd;
	size_t npfd = 0;
	int ret = 0;

	if (c->o.duration_s > 0)
		deadline = c->t_start + (uint64_t)(c->o.duration_s * 1e9);
	pfd = calloc((size_t)c->ncpus * 2, sizeof(*pfd));
	if (!pfd) {
		c->end = SWT_CAPTURE_END_ERROR;
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_stop;
	}
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
		if (c->task.r && c->task.r[cpu].fd >= 0)
			pfd[npfd++] = (struct pollfd){ .fd = c->task.r[cpu].fd, .events = POLLIN };
		if (c->block.r && c->block.r[cpu].fd >= 0)
			pfd[npfd++] = (struct pollfd){ .fd = c->block.r[cpu].fd, .events = POLLIN };
	}
	while (c->recording) {
		uint64_t now = now_ns();
		int timeout = DRAIN_MS;

		if (deadline && deadline > now && (deadline - now) / 1000000 < DRAIN_MS)
			timeout = (int)((deadline - now) / 1000000);
		/* readable at the buffer_percent watermark; otherwise the timeout */
		poll(pfd, npfd, timeout);
		ret = drain(c, 0, err);
		if (ret)
			break;
		swt_target_follow_memcg(&c->target);
		ret = follow_cgroup(c, err);
		if (ret)
			break;
		now = now_ns();
		if (now >= next_tick) {
			ret = tick(c, err);
			if (ret)
				break;
			next_tick = now + TICK_MS * 1000000ull;
		} else if ((c->target.kind == SWT_TARGET_COMMAND ||
			    c->target.kind == SWT_TARGET_PID) && now >= next_maps) {
			ret = snapshot_target(c, err);
			if (ret)
				break;
			next_maps = now + COMMAND_MAPS_MS * 1000000ull;
		}
		if (c->target.kind == SWT_TARGET_COMMAND && swt_target_poll(&c->target)) {
			c->end = c->forwarded ? SWT_CAPTURE_END_SIGNAL : SWT_CAPTURE_END_COMMAND;
			break;
		}
		if (c->target.kind == SWT_TARGET_PID && !swt_target_pid_alive(&c->target)) {
			c->end = SWT_CAPTURE_END_TARGET;
			break;
		}
		/* a removed cgroup gets no task again: recording on would record nothing of it */
		if (c->target.kind == SWT_TARGET_CGROUP && access(c->target.cgroup_dir, F_OK) < 0 &&
		    errno == ENOENT) {
			c->end = SWT_CAPTURE_END_TARGET;
			break;
		}
		if (stop && (unsigned)stop->count > c->stop_seen) {
			c->stop_seen = (unsigned)stop->count;
			if (c->target.kind == SWT_TARGET_COMMAND && !c->forwarded) {
				/* let the command end as it would at a terminal, and record that */
				signal_command(c, stop->signo, stop->from_terminal);
				c->forwarded = 1;
				grace = now + COMMAND_GRACE_MS * 1000000ull;
				capture_note(c, 0, "stopping: signal %d passed on to the command; "
					     "recording until it exits", (int)stop->signo);
				continue;
			}
			if (c->target.kind == SWT_TARGET_COMMAND)
				signal_command(c, SIGKILL, 0);
			c->end = SWT_CAPTURE_END_SIGNAL;
			break;
		}
		if (grace && now >= grace) {
			capture_note(c, 1, "the command did not exit within %d s of the signal: killing it",
				     COMMAND_GRACE_MS / 1000);
			signal_command(c, SIGKILL, 0);
			grace = 0;
		}
		if (deadline && now >= deadline) {
			c->end = SWT_CAPTURE_END_DURATION;
			break;
		}
	}
	if (ret)
		c->end = SWT_CAPTURE_END_ERROR;
	free(pfd);
out_stop:
	{
		struct swt_err restore_err = { 0 };
		int r = capture_stop_and_restore(c, ret ? &restore_err : err);

		if (!ret && r)
			ret = r;
		else if (r && c->o.note)
			capture_note(c, 1, "%s", restore_err.msg);
	}
	/*
	 * A command --duration outlived goes on while the capture is written;
	 * so does one an error stopped the recording under (a full disk), so
	 * that what was recorded is written and the error said now, not when
	 * the command happens to end
	 */
	if (c->end != SWT_CAPTURE_END_DURATION && c->end != SWT_CAPTURE_END_ERROR)
		wait_command(c, stop);
	return ret;
}

int swt_capture_command_running(struct swt_capture *c)
{
	return c->target.kind == SWT_TARGET_COMMAND && c->target.released &&
	       !swt_target_poll(&c->target);
}

int swt_capture_wait_command(struct swt_capture *c, struct swt_capture_stop *stop)
{
	if (c->target.kind != SWT_TARGET_COMMAND || !c->target.released)
		return -1;
	wait_command(c, stop);
	return c->target.exited ? c->target.status : -1;
}

/* After a failed start: take away what was made for the capture. */
static void remove_outputs(struct swt_capture *c)
{
	struct inst *insts[2] = { &c->task, &c->block };

	for (size_t b = 0; b < 2; b++)
		for (unsigned cpu = 0; insts[b]->r && cpu < c->ncpus; cpu++)
			if (insts[b]->r[cpu].raw_path)
				unlink(insts[b]->r[cpu].raw_path);
	for (unsigned cpu = 0; c->o.blktrace && c->blk_dir && cpu < c->ncpus; cpu++) {
		char *p;

		if (asprintf(&p, "%s/swap.blktrace.%u", c->blk_dir, cpu) >= 0) {
			unlink(p);
			free(p);
		}
	}
	for (size_t i = 0; i < c->target.nr_procs; i++) {
		char *p;

		if (asprintf(&p, "%s/%d-start.txt", c->maps_dir, (int)c->target.procs[i].pid) >= 0) {
			unlink(p);
			free(p);
		}
		if (asprintf(&p, "%s/%d-end.txt", c->maps_dir, (int)c->target.procs[i].pid) >= 0) {
			unlink(p);
			free(p);
		}
	}
	if (c->reserve_made)
		unlink(c->reserve);
	if (c->raw_dir)
		rmdir(c->raw_dir);
	if (c->maps_dir)
		rmdir(c->maps_dir);
	if (c->blk_dir)
		rmdir(c->blk_dir);
	if (c->made_dir && c->out_dir)
		rmdir(c->out_dir);
}

static void inst_release(struct inst *in, unsigned ncpus)
{
	for (unsigned cpu = 0; in->r && cpu < ncpus; cpu++)
		free(in->r[cpu].raw_path);
	for (unsigned cpu = 0; in->stats && cpu < ncpus; cpu++)
		free(in->stats[cpu]);
	free(in->r);
	free(in->stats);
	free(in->clock);
}

static void saved_release(struct saved_event *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].system);
		free(v[i].name);
		free(v[i].format);
	}
	free(v);
}

void swt_capture_destroy(struct swt_capture *c)
{
	if (!c)
		return;
	capture_stop_and_restore(c, NULL);
	if (!c->created) {
		swt_target_abort(&c->target);
		remove_outputs(c);	/* before the release: it names the maps files by pid */
	} else if (c->reserve_made) {
		unlink(c->reserve);
	}
	swt_target_release(&c->target);
	swt_knobs_release(&c->knobs);
	inst_release(&c->task, c->ncpus);
	inst_release(&c->block, c->ncpus);
	swt_swap_areas_free(c->swaps, c->nr_swaps);
	saved_release(c->ftrace, c->nr_ftrace);
	saved_release(c->events, c->nr_events);
	free(c->blk_lost);
	free(c->devs);
	free(c->disks);
	free(c->swaps_start);
	free(c->swaps_end);
	free(c->command);
	free(c->header_page);
	free(c->header_event);
	free(c->kallsyms);
	free(c->printk);
	free(c->cmdlines);
	free(c->out_dir);
	free(c->raw_dir);
	free(c->command_tasks);
	free(c->maps_dir);
	free(c->blk_clock);
	free(c->blk_dir);
	free(c->reserve);
	free(c->tracing_dir);
	free(c);
}
