/*
 * Swap areas: /proc/swaps parsing, device resolution through sysfs, and
 * swap-file extents from FIEMAP laid out the way swapon does (swaps.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "knobs.h"
#include "swaps.h"
#include "util.h"

void swt_swap_areas_free(struct swt_swap_area *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].path);
		free(a[i].type);
		free(a[i].extents);
		free(a[i].unresolved);
	}
	free(a);
}

/* /proc/swaps escapes blanks and backslashes in paths as \ooo (swt_unescape_octal). */
int swt_swap_parse(const char *text, struct swt_swap_area **out, size_t *n,
		   struct swt_err *err)
{
	struct swt_swap_area *v = NULL;
	size_t cap = 0, count = 0;
	const char *line = text;
	unsigned lineno = 0;

	*out = NULL;
	*n = 0;
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char buf[4096 + 256], path[4096], type[64];
		long long size, used, prio;
		struct swt_swap_area *a;

		lineno++;
		if (len >= sizeof(buf))
			goto bad;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = eol ? eol + 1 : NULL;
		if (lineno == 1 && !strncmp(buf, "Filename", 8))
			continue;
		if (strspn(buf, " \t") == len)
			continue;
		if (sscanf(buf, "%4095s %63s %lld %lld %lld", path, type, &size, &used, &prio) != 5)
			goto bad;
		if (swt_grow((void **)&v, &cap, count + 1, sizeof(*v)))
			goto nomem;
		a = &v[count];
		memset(a, 0, sizeof(*a));
		swt_unescape_octal(path);
		a->path = swt_strdup(path);
		a->type = swt_strdup(type);
		count++;
		if (!a->path || !a->type)
			goto nomem;
		a->size_kib = size;
		a->used_kib = used;
		a->priority = prio;
		a->rotational = a->synchronous = -1;
		a->max_sectors_kb = a->max_segments = -1;
		a->slots = -1;
	}
	*out = v;
	*n = count;
	return 0;
bad:
	swt_swap_areas_free(v, count);
	return swt_error(err, SWT_EFORMAT, "'/proc/swaps': line %u: not a swap area row", lineno);
nomem:
	swt_swap_areas_free(v, count);
	return swt_error(err, SWT_ENOMEM, "out of memory");
}

int64_t swt_swap_file_extents(const struct swt_fiemap_extent *in, size_t n, uint64_t file_size,
			      unsigned page_size, uint64_t max_slots, uint64_t sector_offset,
			      struct swt_meta_extent **out, size_t *nout)
{
	uint64_t limit = file_size / page_size * page_size, slot = 0;
	uint64_t run_start = 0, run_end = 0;
	struct swt_meta_extent *v = NULL;
	size_t cap = 0, count = 0;
	int have_run = 0;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i <= n; i++) {
		uint64_t phys = 0, len = 0;

		if (i < n) {
			if (in[i].logical >= limit)
				continue;
			len = SWT_MIN(in[i].length, limit - in[i].logical);
			phys = in[i].physical;
			if (have_run && phys == run_end) {
				/* continues the previous extent on disk: one run */
				run_end += len;
				continue;
			}
		}
		if (have_run) {
			uint64_t first = (run_start + page_size - 1) / page_size;
			uint64_t end = run_end / page_size;

			if (first < end && slot < max_slots) {
				uint64_t nr = SWT_MIN(end - first, max_slots - slot);

				if (swt_grow((void **)&v, &cap, count + 1, sizeof(*v))) {
					free(v);
					return -SWT_ENOMEM;
				}
				v[count].first_slot = slot;
				v[count].nr_slots = nr;
				v[count].start_sector = sector_offset + first * (page_size / 512);
				count++;
				slot += nr;
			}
		}
		if (i < n) {
			run_start = phys;
			run_end = phys + len;
			have_run = 1;
		}
	}
	*out = v;
	*nout = count;
	return (int64_t)slot;
}

static int read_u64_file(const char *path, uint64_t *v)
{
	char *text = swt_read_text(path, NULL);
	int ret;

	if (!text)
		return -1;
	text[strcspn(text, "\n")] = '\0';
	ret = swt_parse_u64(text, v) ? -1 : 0;
	free(text);
	return ret;
}

/*
 * The whole disk behind device maj:min: its dev_t, name, and the partition
 * start (0 for a whole disk).
 */
static int resolve_disk(const char *root, unsigned maj, unsigned min, struct swt_swap_area *a,
			struct swt_err *err)
{
	char path[PATH_MAX], real[PATH_MAX], file[PATH_MAX + 32];
	struct stat sb;
	char *slash, *text;
	unsigned wmaj = maj, wmin = min;

	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u", root, maj, min);
	if (!realpath(path, real))
		return swt_error(err, SWT_ENOENT, "'%s': %s (block device %u:%u)", path,
				 strerror(errno), maj, min);
	snprintf(file, sizeof(file), "%s/partition", real);
	if (stat(file, &sb) == 0) {
		snprintf(file, sizeof(file), "%s/start", real);
		if (read_u64_file(file, &a->start_sector))
			return swt_error(err, SWT_EIO, "'%s': cannot read the partition start", file);
		slash = strrchr(real, '/');
		if (!slash)
			return swt_error(err, SWT_EFORMAT, "'%s': no parent disk", real);
		*slash = '\0';
		snprintf(file, sizeof(file), "%s/dev", real);
		text = swt_read_text(file, NULL);
		if (!text || sscanf(text, "%u:%u", &wmaj, &wmin) != 2) {
			free(text);
			return swt_error(err, SWT_EIO, "'%s': cannot read the disk's device number",
					 file);
		}
		free(text);
	}
	a->dev = swt_dev_make(wmaj, wmin);
	snprintf(a->disk, sizeof(a->disk), "%s", swt_basename(real));
	return 0;
}

static int read_extents(const char *path, int fd, struct swt_fiemap_extent **out, size_t *n,
			char **why, struct swt_err *err)
{
	enum { BATCH = 256 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + BATCH * sizeof(struct fiemap_extent));
	struct swt_fiemap_extent *v = NULL;
	size_t cap = 0, count = 0;
	uint64_t start = 0;
	int ret = 0, last = 0;

	*why = NULL;
	if (!fm)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	while (!last) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			ret = swt_error(err, errno == EOPNOTSUPP ? SWT_ENOTSUP : SWT_EIO,
					"'%s': FIEMAP: %s", path, strerror(errno));
			goto out;
		}
		if (!fm->fm_mapped_extents)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			if (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_ENCODED |
					   FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED)) {
				*why = swt_strdup("its extents have no plain on-disk address");
				goto out;
			}
			if (swt_grow((void **)&v, &cap, count + 1, sizeof(*v))) {
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				goto out;
			}
			v[count].logical = e->fe_logical;
			v[count].physical = e->fe_physical;
			v[count].length = e->fe_length;
			count++;
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = 1;
		}
	}
out:
	free(fm);
	if (ret || *why) {
		free(v);
		return ret;
	}
	*out = v;
	*n = count;
	return 0;
}

static void disk_facts(const char *root, struct swt_swap_area *a)
{
	char file[PATH_MAX];
	uint64_t v;

	snprintf(file, sizeof(file), "%s/sys/block/%s/queue/rotational", root, a->disk);
	if (!read_u64_file(file, &v))
		a->rotational = v ? 1 : 0;
	/* what splits replay's read requests (a swap page is a bio of one segment) */
	snprintf(file, sizeof(file), "%s/sys/block/%s/queue/max_sectors_kb", root, a->disk);
	if (!read_u64_file(file, &v) && v > 0 && v <= INT32_MAX)
		a->max_sectors_kb = (int64_t)v;
	snprintf(file, sizeof(file), "%s/sys/block/%s/queue/max_segments", root, a->disk);
	if (!read_u64_file(file, &v) && v > 0 && v <= INT32_MAX)
		a->max_segments = (int64_t)v;
	/*
	 * sysfs does not show the block layer's synchronous flag; these are
	 * the drivers that set it (memory-backed, completing in the caller).
	 */
	a->synchronous = !strncmp(a->disk, "zram", 4) || !strncmp(a->disk, "pmem", 4) ||
			 (!strncmp(a->disk, "ram", 3) && isdigit((unsigned char)a->disk[3])) ||
			 !strncmp(a->disk, "btt", 3);
}

int swt_swap_resolve(const char *root, struct swt_swap_area *a, unsigned page_size,
		     struct swt_err *err)
{
	struct swt_fiemap_extent *ext = NULL;
	struct stat sb;
	size_t next = 0;
	char *why = NULL;
	int fd = -1, ret;

	a->slots = a->size_kib >= 0 ? a->size_kib * 1024 / page_size + 1 : -1;
	if (stat(a->path, &sb) < 0)
		return swt_error(err, SWT_ENOENT, "swap area '%s': %s", a->path, strerror(errno));
	if (S_ISBLK(sb.st_mode)) {
		ret = resolve_disk(root, major(sb.st_rdev), minor(sb.st_rdev), a, err);
		if (!ret)
			disk_facts(root, a);
		return ret;
	}
	if (!S_ISREG(sb.st_mode))
		return swt_error(err, SWT_EFORMAT, "swap area '%s' is neither a block device nor a file",
				 a->path);
	if (major(sb.st_dev) == 0) {
		char msg[128];

		snprintf(msg, sizeof(msg), "its filesystem has no single backing block device (%u:%u)",
			 major(sb.st_dev), minor(sb.st_dev));
		a->unresolved = swt_strdup(msg);
		return a->unresolved ? 0 : swt_error(err, SWT_ENOMEM, "out of memory");
	}
	ret = resolve_disk(root, major(sb.st_dev), minor(sb.st_dev), a, err);
	if (ret)
		return ret;
	disk_facts(root, a);
	fd = open(a->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return swt_error(err, SWT_EIO, "swap file '%s': %s", a->path, strerror(errno));
	ret = read_extents(a->path, fd, &ext, &next, &why, err);
	close(fd);
	if (ret)
		return ret;
	if (why) {
		a->unresolved = why;
		a->dev = 0;
		return 0;
	}
	{
		int64_t slots = swt_swap_file_extents(ext, next, (uint64_t)sb.st_size, page_size,
						      a->slots > 0 ? (uint64_t)a->slots : UINT64_MAX,
						      a->start_sector, &a->extents, &a->nr_extents);

		free(ext);
		if (slots < 0)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		if (a->slots < 0)
			a->slots = slots;
	}
	return 0;
}
