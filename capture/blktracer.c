/*
 * --blktrace: the blk tracer session and the record converter (blktracer.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "blktracer.h"
#include "blktrace.h"
#include "util.h"

#define CONTEXT_SIZE 16		/* u32 pid, u32 cpu, u64 ts */
#define PIPE_READ (64 * 1024)

static uint16_t get16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static int host_big_endian(void)
{
	const uint16_t one = 1;
	unsigned char b;

	memcpy(&b, &one, 1);
	return b == 0;
}

static int wanted(uint32_t dev, const uint32_t *devs, size_t ndev)
{
	for (size_t i = 0; i < ndev; i++)
		if (devs[i] == dev)
			return 1;
	return 0;
}

/* A "CPU:N [LOST M EVENTS]" notice: M, or 1 when the kernel could not count. */
static int64_t lost_count(const unsigned char *line, size_t len)
{
	char buf[96];
	unsigned cpu;
	unsigned long long n;

	len = SWT_MIN(len, sizeof(buf) - 1);
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "CPU:%u [LOST %llu EVENTS]", &cpu, &n) == 2)
		return (int64_t)n;
	return 1;
}

long swt_blktracer_convert(struct swt_blktracer_conv *cv, unsigned cpu, const unsigned char *in,
			   size_t len, const uint32_t *devs, size_t ndev, unsigned char *out,
			   size_t *out_len)
{
	int be = host_big_endian();
	size_t pos = 0;

	while (pos < len) {
		const unsigned char *p = in + pos, *t;
		size_t rem = len - pos, size;
		struct swt_blk_record rec = { 0 };
		uint32_t magic;

		if (rem >= 4 && !memcmp(p, "CPU:", 4)) {
			const unsigned char *nl = memchr(p, '\n', rem);
			int64_t n;

			if (!nl)
				break;
			n = lost_count(p, (size_t)(nl - p));
			cv->lost += n;
			/* a gap in the sequence is how blktrace files say "lost" */
			cv->seq += (uint32_t)n;
			pos += (size_t)(nl - p) + 1;
			continue;
		}
		if (rem < CONTEXT_SIZE + 4)
			break;
		if (get32(p + 4) != cpu)
			return -SWT_EFORMAT;	/* not a record boundary: out of step */
		t = p + CONTEXT_SIZE;
		magic = get32(t);
		if ((magic & SWT_BLK_MAGIC_MASK) != SWT_BLK_MAGIC) {
			/* another tracer's record: its binary form is the context alone */
			cv->foreign++;
			pos += CONTEXT_SIZE;
			continue;
		}
		rec.version = (int)(magic & 0xff);
		if (rec.version == SWT_BLK_V7)
			size = SWT_BLK_V7_SIZE;
		else if (rec.version == SWT_BLK_V8)
			size = SWT_BLK_V8_SIZE;
		else
			return -SWT_EFORMAT;
		if (rem < CONTEXT_SIZE + size)
			break;
		rec.pdu_len = get16(t + (rec.version == SWT_BLK_V7 ? 46 : 50));
		if (rem < CONTEXT_SIZE + size + rec.pdu_len)
			break;
		rec.time = get64(p + 8);
		rec.sector = get64(t + 16);
		rec.bytes = get32(t + 24);
		if (rec.version == SWT_BLK_V7) {
			rec.action = get32(t + 28);
			rec.pid = get32(t + 32);
			rec.device = get32(t + 36);
			rec.error = get16(t + 44);
		} else {
			rec.pid = get32(t + 28);
			rec.action = get64(t + 32);
			rec.device = get32(t + 40);
			rec.error = get16(t + 48);
		}
		pos += CONTEXT_SIZE + size + rec.pdu_len;
		if (!wanted(rec.device, devs, ndev)) {
			cv->foreign++;
			continue;
		}
		rec.cpu = cpu;
		rec.sequence = ++cv->seq;
		*out_len += swt_blk_encode(&rec, be, out + *out_len);
		/* PDUs are copied as they are (an unplug's count is big-endian) */
		memcpy(out + *out_len, t + size, rec.pdu_len);
		*out_len += rec.pdu_len;
		cv->records++;
	}
	return (long)pos;
}

struct blk_cpu {
	int fd;			/* per_cpu/cpuN/trace_pipe */
	int out_fd;
	int write_failed;	/* the rest is read and counted lost, not written */
	char *out_path;
	unsigned char *in, *out;
	size_t have;
	struct swt_blktracer_conv cv;
};

struct swt_blktracer {
	int lock_fd;
	unsigned ncpus;
	struct blk_cpu *cpus;
	uint32_t *devs;
	char **enable_paths;
	size_t ndev;
};

static int read_setting(const char *dir, const char *file, char **value, struct swt_err *err)
{
	char path[4096];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	text = swt_read_text(path, NULL);
	if (!text)
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
	*value = swt_knob_restore_value(text);
	free(text);
	return *value ? 0 : swt_error(err, SWT_ENOMEM, "out of memory");
}

/* Whether a tracing_cpumask (hex, 32-bit groups split by commas) holds CPUs 0..ncpus-1. */
static int mask_has_all(const char *mask, unsigned ncpus)
{
	size_t len = strlen(mask);
	unsigned bit = 0;

	/* from the last hex digit, which holds CPUs 0-3 */
	while (len && bit < ncpus) {
		char ch = mask[--len];
		unsigned v;

		if (ch == ',' || ch == '\n' || ch == ' ')
			continue;
		if (ch >= '0' && ch <= '9')
			v = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			v = (unsigned)(ch - 'A' + 10);
		else
			return 0;
		for (unsigned b = 0; b < 4 && bit < ncpus; b++, bit++)
			if (!(v & (1u << b)))
				return 0;
	}
	return bit >= ncpus;
}

/*
 * The top-level buffer must be idle (records from others would mix in)
 * and trace every CPU (a narrowed tracing_cpumask would drop the I/O of
 * the others without a word).
 */
static int check_top_level(const char *dir, unsigned ncpus, struct swt_err *err)
{
	char *tracer = NULL, *events = NULL, *tracers = NULL, *mask = NULL, path[4096];
	int ret;

	ret = read_setting(dir, "current_tracer", &tracer, err);
	if (!ret)
		ret = read_setting(dir, "set_event", &events, err);
	if (ret)
		goto out;
	snprintf(path, sizeof(path), "%s/available_tracers", dir);
	tracers = swt_read_text(path, NULL);
	if (!tracers || !strstr(tracers, "blk")) {
		ret = swt_error(err, SWT_ENOTSUP,
				"the kernel has no blk tracer (available_tracers: %s)",
				tracers ? tracers : strerror(errno));
		goto out;
	}
	if (strcmp(tracer, "nop")) {
		ret = swt_error(err, SWT_EBUSY,
				"the top-level trace buffer is in use (current_tracer is '%s'); "
				"--blktrace needs it to itself", tracer);
		goto out;
	}
	if (events[0]) {
		events[strcspn(events, "\n")] = '\0';
		ret = swt_error(err, SWT_EBUSY,
				"the top-level trace buffer is in use (events enabled there, e.g. "
				"'%s'); --blktrace needs it to itself", events);
		goto out;
	}
	ret = read_setting(dir, "tracing_cpumask", &mask, err);
	if (ret)
		goto out;
	if (!mask_has_all(mask, ncpus)) {
		mask[strcspn(mask, "\n")] = '\0';
		ret = swt_error(err, SWT_EBUSY,
				"the top-level trace buffer traces only some CPUs (tracing_cpumask is "
				"'%s'): --blktrace would miss the I/O of the others", mask);
		goto out;
	}
out:
	free(tracer);
	free(events);
	free(tracers);
	free(mask);
	return ret;
}

static int set_knob(struct swt_knobs *k, const char *dir, const char *file, const char *value,
		    struct swt_err *err)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return swt_knobs_set(k, path, value, err);
}

#define CPU_BUFFER_KB "per_cpu/cpu%u/buffer_size_kb"

/*
 * One CPU's buffer size in KiB: 0 with it in *kb, 1 when the file reads
 * but does not parse (no error recorded: each caller judges that itself),
 * or the negative error reading it.
 */
static int read_cpu_kb(const char *dir, unsigned cpu, uint64_t *kb, struct swt_err *err)
{
	char file[64], *text = NULL;
	int ret;

	snprintf(file, sizeof(file), CPU_BUFFER_KB, cpu);
	ret = read_setting(dir, file, &text, err);
	if (ret)
		return ret;
	ret = swt_parse_u64(text, kb) ? 1 : 0;
	free(text);
	return ret;
}

int swt_blktracer_grow_buffers(struct swt_knobs *k, const char *dir, unsigned ncpus, unsigned kb,
			       struct swt_err *err)
{
	char want[32], path[4096], *top;
	int ret;

	/*
	 * A buffer the kernel never expanded reads "7 (expanded: 1408)" at
	 * the top level but a bare "7" per CPU: sized and restored per CPU, it
	 * would end as a real 7 KiB buffer.  Grown at the top level, it is
	 * restored to the size it expands to.
	 */
	snprintf(path, sizeof(path), "%s/buffer_size_kb", dir);
	top = swt_read_text(path, NULL);
	if (!top)
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
	if (strstr(top, "(expanded: ")) {
		/* the size it expands to, as restoring reads it */
		char *exp = swt_knob_restore_value(top);
		uint64_t exp_kb = 0;

		free(top);
		if (!exp)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		swt_parse_u64(exp, &exp_kb);
		free(exp);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)SWT_MAX(exp_kb, (uint64_t)kb));
		return set_knob(k, dir, "buffer_size_kb", want, err);
	}
	free(top);
	snprintf(want, sizeof(want), "%u", kb);
	for (unsigned c = 0; c < ncpus; c++) {
		char file[64];
		uint64_t now;

		ret = read_cpu_kb(dir, c, &now, err);
		if (ret < 0)
			return ret;
		/* a size that does not parse is no proof of room: set it */
		if (!ret && now >= kb)
			continue;
		snprintf(file, sizeof(file), CPU_BUFFER_KB, c);
		ret = set_knob(k, dir, file, want, err);
		if (ret)
			return ret;
	}
	return 0;
}

unsigned swt_blktracer_buffer_kb(const char *dir, unsigned ncpus)
{
	uint64_t least = 0;

	for (unsigned c = 0; c < ncpus; c++) {
		uint64_t kb;

		if (read_cpu_kb(dir, c, &kb, NULL) || kb > UINT_MAX)
			return 0;
		if (!c || kb < least)
			least = kb;
	}
	return (unsigned)least;
}

int swt_blktracer_create(const struct swt_blktracer_opts *o, struct swt_knobs *knobs,
			 struct swt_blktracer **out, struct swt_err *err)
{
	struct swt_blktracer *s = calloc(1, sizeof(*s));
	char path[4096];
	int ret, locked = 0;

	*out = NULL;
	if (!s)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	s->lock_fd = -1;
	s->ncpus = o->ncpus;
	s->ndev = o->ndev;
	s->cpus = calloc(o->ncpus, sizeof(*s->cpus));
	s->devs = calloc(o->ndev + 1, sizeof(*s->devs));
	s->enable_paths = calloc(o->ndev + 1, sizeof(*s->enable_paths));
	if (!s->cpus || !s->devs || !s->enable_paths) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_free;
	}
	for (unsigned c = 0; c < o->ncpus; c++)
		s->cpus[c].fd = s->cpus[c].out_fd = -1;
	memcpy(s->devs, o->devs, o->ndev * sizeof(*s->devs));

	s->lock_fd = open(o->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lock_fd < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", o->lock_path, strerror(errno));
		goto out_free;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ?
		      swt_error(err, SWT_EBUSY,
				"another capture is using the kernel's blk tracer (it holds '%s'); "
				"there is one per host, so only one --blktrace capture can run",
				o->lock_path) :
		      swt_error(err, SWT_EIO, "'%s': flock: %s", o->lock_path, strerror(errno));
		goto out_free;
	}
	locked = 1;
	ret = check_top_level(o->tracing_dir, o->ncpus, err);
	if (ret)
		goto out_free;
	if (o->trace_clock) {
		/* changed only now: a clock change empties the top-level buffer */
		char *clock = NULL;

		ret = read_setting(o->tracing_dir, "trace_clock", &clock, err);
		if (!ret && strcmp(clock, o->trace_clock)) {
			snprintf(path, sizeof(path), "%s/trace_clock", o->tracing_dir);
			ret = swt_knobs_set(knobs, path, o->trace_clock, err);
		}
		free(clock);
		if (ret)
			goto out_free;
	}
	for (size_t i = 0; i < o->ndev; i++) {
		char *on = NULL;

		snprintf(path, sizeof(path), "/sys/block/%s/trace/enable", o->disks[i]);
		if (access(path, W_OK) < 0) {
			ret = swt_error(err, SWT_ENOTSUP, "'%s': %s: cannot trace '%s' with the blk tracer",
					path, strerror(errno), o->disks[i]);
			goto out_free;
		}
		/*
		 * Someone else's blk trace of the device: its act_mask, LBA
		 * range and pid filter would narrow ours, and the kernel drops
		 * them when tracing stops, so they could not be given back.
		 */
		on = swt_read_text(path, NULL);
		if (on && strtoul(on, NULL, 10) != 0) {
			free(on);
			ret = swt_error(err, SWT_EBUSY, "'%s' is 1: '%s' is already traced with the "
					"blk tracer; --blktrace needs it to itself", path, o->disks[i]);
			goto out_free;
		}
		free(on);
		s->enable_paths[i] = swt_strdup(path);
		if (!s->enable_paths[i]) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out_free;
		}
	}
	for (unsigned c = 0; c < o->ncpus; c++) {
		struct blk_cpu *bc = &s->cpus[c];

		if (asprintf(&bc->out_path, "%s.blktrace.%u", o->out_prefix, c) < 0) {
			bc->out_path = NULL;
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out_free;
		}
		bc->in = malloc(PIPE_READ);
		bc->out = malloc(PIPE_READ);
		if (!bc->in || !bc->out) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out_free;
		}
		bc->out_fd = open(bc->out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (bc->out_fd < 0) {
			ret = swt_error(err, SWT_EIO, "'%s': %s", bc->out_path, strerror(errno));
			goto out_free;
		}
	}

	/* binary records with their ftrace context; then the tracer; then the devices */
	snprintf(path, sizeof(path), "%s/options/blk_classic", o->tracing_dir);
	if (access(path, F_OK) == 0) {
		ret = swt_knobs_set(knobs, path, "0", err);
		if (ret)
			goto out_free;
	}
	ret = set_knob(knobs, o->tracing_dir, "options/context-info", "1", err);
	if (!ret)
		ret = set_knob(knobs, o->tracing_dir, "options/bin", "1", err);
	/*
	 * A full buffer that does not overwrite drops new records without a
	 * "LOST" notice in trace_pipe (only overruns are reported there):
	 * with someone's overwrite 0, I/O went missing and nothing was counted.
	 */
	if (!ret)
		ret = set_knob(knobs, o->tracing_dir, "options/overwrite", "1", err);
	if (!ret)
		ret = swt_blktracer_grow_buffers(knobs, o->tracing_dir, o->ncpus, o->buffer_kb, err);
	if (!ret)
		ret = set_knob(knobs, o->tracing_dir, "tracing_on", "1", err);
	if (!ret)
		ret = set_knob(knobs, o->tracing_dir, "current_tracer", "blk", err);
	for (size_t i = 0; !ret && i < o->ndev; i++)
		ret = swt_knobs_set(knobs, s->enable_paths[i], "1", err);
	if (ret)
		goto out_free;
	/* opened after the tracer is set: an open pipe pins the tracer */
	for (unsigned c = 0; c < o->ncpus; c++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%u/trace_pipe", o->tracing_dir, c);
		s->cpus[c].fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (s->cpus[c].fd < 0) {
			ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
			goto out_free;
		}
	}
	*out = s;
	return 0;
out_free:
	/* the pipes pin the tracer: closed first, then the knobs, then the lock */
	for (unsigned c = 0; s->cpus && c < s->ncpus; c++) {
		if (s->cpus[c].fd >= 0)
			close(s->cpus[c].fd);
		s->cpus[c].fd = -1;
	}
	if (locked)
		swt_knobs_restore(knobs, NULL);
	swt_blktracer_destroy(s);
	return ret;
}

static int drain_cpu(struct swt_blktracer *s, unsigned c, uint64_t *bytes, struct swt_err *err)
{
	struct blk_cpu *bc = &s->cpus[c];

	if (bc->fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(bc->fd, bc->in + bc->have, PIPE_READ - bc->have);
		uint64_t before = bc->cv.records;
		size_t out_len = 0;
		long used;
		off_t at;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return swt_error(err, SWT_EIO, "blk tracer pipe of CPU %u: %s", c,
					 strerror(errno));
		if (n == 0)
			return 0;
		bc->have += (size_t)n;
		used = swt_blktracer_convert(&bc->cv, c, bc->in, bc->have, s->devs, s->ndev, bc->out,
					     &out_len);
		if (used < 0)
			return swt_error(err, SWT_EFORMAT,
					 "blk tracer pipe of CPU %u: unexpected data (not blk tracer "
					 "records in binary mode)", c);
		memmove(bc->in, bc->in + used, bc->have - (size_t)used);
		bc->have -= (size_t)used;
		if (bc->have == PIPE_READ)
			return swt_error(err, SWT_EFORMAT, "blk tracer pipe of CPU %u: a record "
					 "larger than %u bytes", c, PIPE_READ);
		if (bc->write_failed) {
			bc->cv.lost += bc->cv.records - before;
			bc->cv.records = before;
			continue;
		}
		at = lseek(bc->out_fd, 0, SEEK_CUR);
		if (out_len && swt_write_all(bc->out_fd, bc->out, out_len)) {
			int e = errno;

			/*
			 * A full disk cuts a write short: the torn record made
			 * blkparse and ingest refuse the file.  Back to whole
			 * records; what they lack is counted lost (meta.txt), and
			 * the rest of the pipe read, so that it is counted too.
			 */
			if (at >= 0 && ftruncate(bc->out_fd, at) == 0)
				lseek(bc->out_fd, at, SEEK_SET);
			bc->cv.lost += bc->cv.records - before;
			bc->cv.records = before;
			bc->write_failed = 1;
			return swt_error(err, SWT_EIO, "'%s': %s", bc->out_path, strerror(e));
		}
		*bytes += out_len;
	}
}

int swt_blktracer_drain(struct swt_blktracer *s, uint64_t *bytes, struct swt_err *err)
{
	for (unsigned c = 0; c < s->ncpus; c++) {
		int ret = drain_cpu(s, c, bytes, err);

		if (ret)
			return ret;
	}
	return 0;
}

int swt_blktracer_stop(struct swt_blktracer *s, struct swt_knobs *knobs, uint64_t *bytes,
		       struct swt_err *err)
{
	int ret = 0;

	for (size_t i = 0; i < s->ndev; i++) {
		int r = swt_knobs_set(knobs, s->enable_paths[i], "0", NULL);

		/* a device that went away traces nothing any more */
		(void)r;
	}
	ret = swt_blktracer_drain(s, bytes, err);
	for (unsigned c = 0; c < s->ncpus; c++) {
		struct blk_cpu *bc = &s->cpus[c];

		if (bc->fd >= 0)
			close(bc->fd);
		bc->fd = -1;
		if (bc->out_fd >= 0 && fsync(bc->out_fd) < 0 && !ret)
			ret = swt_error(err, SWT_EIO, "'%s': %s", bc->out_path, strerror(errno));
	}
	return ret;
}

const struct swt_blktracer_conv *swt_blktracer_cpu(const struct swt_blktracer *s, unsigned cpu)
{
	return cpu < s->ncpus ? &s->cpus[cpu].cv : NULL;
}

void swt_blktracer_destroy(struct swt_blktracer *s)
{
	if (!s)
		return;
	for (unsigned c = 0; s->cpus && c < s->ncpus; c++) {
		struct blk_cpu *bc = &s->cpus[c];

		if (bc->fd >= 0)
			close(bc->fd);
		if (bc->out_fd >= 0)
			close(bc->out_fd);
		free(bc->out_path);
		free(bc->in);
		free(bc->out);
	}
	for (size_t i = 0; s->enable_paths && i < s->ndev; i++)
		free(s->enable_paths[i]);
	free(s->enable_paths);
	free(s->cpus);
	free(s->devs);
	if (s->lock_fd >= 0)
		close(s->lock_fd);	/* releases the lock */
	free(s);
}
