/*
 * trace.dat version 6 writer (see tracedat-writer.h for the layout).
 *
 * The head is built in memory with the BUFFER options' offsets left as
 * placeholders, patched once the size of every table is known, and written
 * in one go; the per-CPU pages are then copied from the raw files with
 * copy_file_range(), so the data never passes through user space.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracedat-writer.h"
#include "util.h"

#define MOVE_CHUNK (1u << 20)

enum {
	OPT_DONE = 0,
	OPT_CPUSTAT = 2,
	OPT_BUFFER = 3,
	OPT_TRACECLOCK = 4,
	OPT_UNAME = 5,
};

struct head {
	unsigned char *p;
	size_t len, cap;
	int nomem;
};

static void put(struct head *h, const void *data, size_t len)
{
	if (h->nomem || !len)
		return;
	if (swt_grow((void **)&h->p, &h->cap, h->len + len, 1)) {
		h->nomem = 1;
		return;
	}
	memcpy(h->p + h->len, data, len);
	h->len += len;
}

/* Numbers go in host byte order; the header's endianness byte says which. */
static void put16(struct head *h, uint16_t v) { put(h, &v, 2); }
static void put32(struct head *h, uint32_t v) { put(h, &v, 4); }
static void put64(struct head *h, uint64_t v) { put(h, &v, 8); }
static void putstr(struct head *h, const char *s) { put(h, s, strlen(s) + 1); }

static void patch64(struct head *h, size_t at, uint64_t v)
{
	if (!h->nomem)
		memcpy(h->p + at, &v, 8);
}

static void put_option(struct head *h, uint16_t id, const void *data, size_t len)
{
	put16(h, id);
	put32(h, (uint32_t)len);
	put(h, data, len);
}

static int host_big_endian(void)
{
	const uint16_t one = 1;
	unsigned char b;

	memcpy(&b, &one, 1);
	return b == 0;
}

struct cpu_data {
	uint64_t offset, size, raw_size;
};

static int raw_size(const char *path, uint64_t *size, struct swt_err *err)
{
	struct stat sb;

	*size = 0;
	if (!path)
		return 0;
	if (stat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
	}
	*size = (uint64_t)sb.st_size;
	return 0;
}

/* The CPUSTAT text for one CPU: "CPU: N\n" and the kernel's stats. */
static int put_cpustat(struct head *h, unsigned cpu, const char *stats)
{
	size_t n = strlen(stats);
	char *text = malloc(n + 32);
	int len;

	if (!text) {
		h->nomem = 1;
		return -SWT_ENOMEM;
	}
	len = snprintf(text, n + 32, "CPU: %u\n%s", cpu, stats);
	/* trace-cmd stores the terminating NUL too */
	put_option(h, OPT_CPUSTAT, text, (size_t)len + 1);
	free(text);
	return 0;
}

/*
 * "flyrecord", the per-CPU (offset, size) table (zeros, patched later) and
 * the trace clock as u64 size + text: libtracecmd reads the clock after
 * each table although the v6 manual page leaves it out.  Returns the
 * table's offset.
 */
static size_t put_flyrecord(struct head *h, const struct swt_tdw_input *in)
{
	const char *clock = in->trace_clock ? in->trace_clock : "[local]";
	size_t table;

	put(h, "flyrecord", 10);
	table = h->len;
	for (uint32_t c = 0; c < in->ncpus; c++) {
		put64(h, 0);
		put64(h, 0);
	}
	put64(h, strlen(clock));
	put(h, clock, strlen(clock));
	return table;
}

static int build_head(const struct swt_tdw_input *in, struct head *h, struct cpu_data *cd,
		      struct swt_err *err)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	size_t *buffer_fields = NULL, top_table, *tables = NULL;
	uint64_t pos;
	unsigned char b;
	int ret = 0;

	buffer_fields = calloc(in->nr_buffers + 1, sizeof(*buffer_fields));
	tables = calloc(in->nr_buffers + 1, sizeof(*tables));
	if (!buffer_fields || !tables) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	put(h, magic, sizeof(magic));
	putstr(h, "6");
	b = (unsigned char)host_big_endian();
	put(h, &b, 1);
	b = (unsigned char)sizeof(long);
	put(h, &b, 1);
	put32(h, in->page_size);

	putstr(h, "header_page");
	put64(h, in->header_page.len);
	put(h, in->header_page.data, in->header_page.len);
	putstr(h, "header_event");
	put64(h, in->header_event.len);
	put(h, in->header_event.data, in->header_event.len);

	put32(h, (uint32_t)in->nr_ftrace_formats);
	for (size_t i = 0; i < in->nr_ftrace_formats; i++) {
		put64(h, in->ftrace_formats[i].len);
		put(h, in->ftrace_formats[i].data, in->ftrace_formats[i].len);
	}
	put32(h, (uint32_t)in->nr_systems);
	for (size_t s = 0; s < in->nr_systems; s++) {
		const struct swt_tdw_system *sys = &in->systems[s];

		putstr(h, sys->name);
		put32(h, (uint32_t)sys->nr_formats);
		for (size_t i = 0; i < sys->nr_formats; i++) {
			put64(h, sys->formats[i].len);
			put(h, sys->formats[i].data, sys->formats[i].len);
		}
	}
	put32(h, (uint32_t)in->kallsyms.len);
	put(h, in->kallsyms.data, in->kallsyms.len);
	put32(h, (uint32_t)in->printk_formats.len);
	put(h, in->printk_formats.data, in->printk_formats.len);
	put64(h, in->cmdlines.len);
	put(h, in->cmdlines.data, in->cmdlines.len);
	put32(h, in->ncpus);

	put(h, "options  ", 10);
	if (in->uname)
		put_option(h, OPT_UNAME, in->uname, strlen(in->uname) + 1);
	if (in->trace_clock)
		put_option(h, OPT_TRACECLOCK, in->trace_clock, strlen(in->trace_clock) + 1);
	for (size_t bi = 0; bi < in->nr_buffers; bi++) {
		const struct swt_tdw_buffer *buf = &in->buffers[bi];
		char mark[128];
		int n = snprintf(mark, sizeof(mark), "\nBuffer: %s\n\n", buf->name);

		/* CPUSTATs after a "Buffer:" marker belong to that buffer */
		put_option(h, OPT_CPUSTAT, mark, (size_t)n + 1);
		for (uint32_t c = 0; c < in->ncpus; c++)
			if (buf->cpus[c].stats && put_cpustat(h, c, buf->cpus[c].stats))
				break;
	}
	for (size_t bi = 0; bi < in->nr_buffers; bi++) {
		size_t nlen = strlen(in->buffers[bi].name) + 1;

		put16(h, OPT_BUFFER);
		put32(h, (uint32_t)(8 + nlen));
		buffer_fields[bi] = h->len;
		put64(h, 0);	/* patched below: offset of its flyrecord table */
		put(h, in->buffers[bi].name, nlen);
	}
	put16(h, OPT_DONE);

	/* the top-level buffer: a table of empty CPUs */
	top_table = put_flyrecord(h, in);
	for (size_t bi = 0; bi < in->nr_buffers; bi++) {
		patch64(h, buffer_fields[bi], h->len);
		tables[bi] = put_flyrecord(h, in);
	}
	if (h->nomem) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	/* CPU data starts page aligned, as trace-cmd maps it page by page */
	pos = (h->len + in->page_size - 1) / in->page_size * in->page_size;
	{
		static const unsigned char zeros[64];

		while (h->len < pos)
			put(h, zeros, SWT_MIN(sizeof(zeros), (size_t)(pos - h->len)));
	}
	for (uint32_t c = 0; c < in->ncpus; c++)
		patch64(h, top_table + (size_t)c * 16, pos);
	for (size_t bi = 0; bi < in->nr_buffers; bi++) {
		for (uint32_t c = 0; c < in->ncpus; c++) {
			struct cpu_data *d = &cd[bi * in->ncpus + c];

			d->offset = pos;
			/* a torn last page (a write cut short by a full disk) is dropped */
			d->size = d->raw_size / in->page_size * in->page_size;
			patch64(h, tables[bi] + (size_t)c * 16, d->offset);
			patch64(h, tables[bi] + (size_t)c * 16 + 8, d->size);
			pos += d->size;
		}
	}
	if (h->nomem)
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
out:
	free(buffer_fields);
	free(tables);
	return ret;
}

/* Append the first size bytes of src to out. */
static int copy_raw(int out, const char *src, uint64_t size, const char *dst_name,
		    struct swt_err *err)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	uint64_t left = size;
	char *buf = NULL;
	int ret = 0;

	if (in < 0)
		return swt_error(err, SWT_EIO, "'%s': %s", src, strerror(errno));
	while (left) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)SWT_MIN(left, 1u << 30), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
			      errno == EOPNOTSUPP))
			break;	/* no in-kernel copy here: read and write */
		if (n < 0) {
			ret = swt_error(err, SWT_EIO, "'%s': %s", dst_name, strerror(errno));
			goto out;
		}
		if (n == 0) {
			ret = swt_error(err, SWT_EIO, "'%s': shorter than expected", src);
			goto out;
		}
		left -= (uint64_t)n;
	}
	if (left) {
		buf = malloc(MOVE_CHUNK);
		if (!buf) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		while (left) {
			long n = swt_read_full(in, buf, (size_t)SWT_MIN(left, MOVE_CHUNK));

			if (n <= 0) {
				ret = swt_error(err, SWT_EIO, "'%s': %s", src,
						n < 0 ? strerror((int)-n) : "shorter than expected");
				goto out;
			}
			if (swt_write_all(out, buf, (size_t)n)) {
				ret = swt_error(err, SWT_EIO, "'%s': %s", dst_name, strerror(errno));
				goto out;
			}
			left -= (uint64_t)n;
		}
	}
out:
	free(buf);
	close(in);
	return ret;
}

/*
 * Move the first size bytes of src to offset at of out, last chunk first,
 * truncating src behind each chunk: the disk never holds more than one
 * chunk twice.  src is removed at the end.
 */
static int move_raw(int out, uint64_t at, const char *src, uint64_t size, const char *dst_name,
		    struct swt_err *err)
{
	int in = open(src, O_RDWR | O_CLOEXEC);
	char *buf = malloc(MOVE_CHUNK);
	uint64_t end = size;
	int ret = 0;

	if (in < 0 || !buf) {
		ret = in < 0 ? swt_error(err, SWT_EIO, "'%s': %s", src, strerror(errno)) :
			       swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	while (end) {
		uint64_t start = (end - 1) / MOVE_CHUNK * MOVE_CHUNK;
		size_t len = (size_t)(end - start), done = 0;

		while (done < len) {
			ssize_t n = pread(in, buf + done, len - done, (off_t)(start + done));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				ret = swt_error(err, SWT_EIO, "'%s': %s", src,
						n < 0 ? strerror(errno) : "shorter than expected");
				goto out;
			}
			done += (size_t)n;
		}
		for (done = 0; done < len;) {
			ssize_t n = pwrite(out, buf + done, len - done, (off_t)(at + start + done));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				ret = swt_error(err, SWT_EIO, "'%s': %s", dst_name, strerror(errno));
				goto out;
			}
			done += (size_t)n;
		}
		if (fdatasync(out) < 0 || ftruncate(in, (off_t)start) < 0) {
			ret = swt_error(err, SWT_EIO, "'%s': %s", src, strerror(errno));
			goto out;
		}
		end = start;
	}
	unlink(src);
out:
	if (in >= 0)
		close(in);
	free(buf);
	return ret;
}

int swt_tracedat_write(const struct swt_tdw_input *in, const char *path, unsigned flags,
		       int *head_kept, struct swt_err *err)
{
	struct head h = { 0 };
	struct cpu_data *cd;
	size_t ncd = in->nr_buffers * in->ncpus, plen = strlen(path);
	char *tmp = malloc(plen + 16), *headp = malloc(plen + 16);
	uint64_t total;
	int fd = -1, ret;

	*head_kept = 0;
	cd = calloc(ncd ? ncd : 1, sizeof(*cd));
	if (!tmp || !headp || !cd) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_free;
	}
	if (!in->page_size || (in->page_size & (in->page_size - 1)) || !in->ncpus) {
		ret = swt_error(err, SWT_EUSAGE, "'%s': bad page size %u or CPU count %u", path,
				in->page_size, in->ncpus);
		goto out_free;
	}
	snprintf(tmp, plen + 16, "%s.tmp", path);
	snprintf(headp, plen + 16, "%s.head", path);
	for (size_t bi = 0; bi < in->nr_buffers; bi++)
		for (uint32_t c = 0; c < in->ncpus; c++) {
			ret = raw_size(in->buffers[bi].cpus[c].raw_path,
				       &cd[bi * in->ncpus + c].raw_size, err);
			if (ret)
				goto out_free;
		}
	ret = build_head(in, &h, cd, err);
	if (ret)
		goto out_free;
	total = h.len;
	for (size_t i = 0; i < ncd; i++)
		total += cd[i].size;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", tmp, strerror(errno));
		goto out_free;
	}
	if (swt_write_all(fd, h.p, h.len)) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", tmp, strerror(errno));
		goto out_unlink;
	}
	for (size_t bi = 0; bi < in->nr_buffers; bi++) {
		for (uint32_t c = 0; c < in->ncpus; c++) {
			const struct cpu_data *d = &cd[bi * in->ncpus + c];
			const char *raw = in->buffers[bi].cpus[c].raw_path;

			if (!d->size)
				continue;
			if (flags & SWT_TDW_MOVE_RAW) {
				ret = move_raw(fd, d->offset, raw, d->size, tmp, err);
				if (ret)
					goto out_unlink;
			} else {
				ret = copy_raw(fd, raw, d->size, tmp, err);
				if (ret)
					goto out_keep_head;
			}
		}
	}
	if (ftruncate(fd, (off_t)total) < 0 || fsync(fd) < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", tmp, strerror(errno));
		close(fd);
		fd = -1;
		goto out_unlink;
	}
	if (close(fd) < 0) {
		fd = -1;
		ret = swt_error(err, SWT_EIO, "'%s': %s", tmp, strerror(errno));
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
		goto out_unlink;
	}
	ret = 0;
	goto out_free;

out_keep_head:
	/* the head is all that cat needs besides the raw files */
	if (ftruncate(fd, (off_t)h.len) == 0 && fsync(fd) == 0 && rename(tmp, headp) == 0) {
		*head_kept = 1;
		goto out_free;
	}
out_unlink:
	if (!(flags & SWT_TDW_MOVE_RAW))
		unlink(tmp);	/* moved pages live only there: keep them */
out_free:
	if (fd >= 0)
		close(fd);
	free(h.p);
	free(cd);
	free(tmp);
	free(headp);
	return ret;
}
