/*
 * What an ingest INPUT names, and feeding it to the right decoder:
 *   - a capture directory (trace.dat, meta.txt, blktrace files in it or in
 *     blk/): trace.dat first; blktrace files only when trace.dat holds no
 *     block events, since both would describe the same I/O;
 *   - a trace.dat file (recognised by its magic, whatever its name);
 *   - a blktrace file, or NAME standing for NAME.blktrace.0, .1, ...
 * It also says which files an ingest reads, so its output never replaces one.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blktrace.h"
#include "inputs.h"
#include "tracedat.h"
#include "util.h"

static int is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

char *swt_input_find_meta(const char *input)
{
	char *dir = is_dir(input) ? swt_strdup(input) : swt_dirname(input), *meta;

	if (!dir)
		return NULL;
	meta = swt_path_join(dir, "meta.txt");
	free(dir);
	if (meta && is_file(meta))
		return meta;
	free(meta);
	return NULL;
}

char *swt_input_capture_name(const char *input)
{
	char *copy = swt_strdup(input), *name, *slash;
	size_t n;

	if (!copy)
		return NULL;
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	if (!is_dir(copy)) {
		/* a file inside a capture directory is named after the directory */
		slash = strrchr(copy, '/');
		if (slash && slash != copy) {
			*slash = '\0';
		} else {
			name = swt_strdup(swt_basename(copy));
			free(copy);
			return name;
		}
	}
	name = swt_strdup(swt_basename(copy));
	free(copy);
	return name;
}

static int same_file(const char *path, const struct stat *out)
{
	struct stat sb;

	return stat(path, &sb) == 0 && sb.st_dev == out->st_dev && sb.st_ino == out->st_ino;
}

/* Is one of dir's NAME.blktrace.N files the file out? */
static int blktrace_file_in(const char *dir, const struct stat *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char *path;

		if (!swt_blktrace_set_name_len(de->d_name))
			continue;
		path = swt_path_join(dir, de->d_name);
		found = path && same_file(path, out);
		free(path);
	}
	closedir(d);
	return found;
}

/* Does ingesting input read the file out: it, or a file of it as a capture directory? */
static int input_reads(const char *input, const struct stat *out)
{
	static const char *const dir_files[] = { "trace.dat", "meta.txt" };
	char **paths;
	size_t n;
	int found = 0;

	if (!is_dir(input)) {
		if (same_file(input, out))
			return 1;
		/* NAME of a blktrace set */
		if (swt_blktrace_expand(input, &paths, &n, NULL))
			return 0;
		for (size_t i = 0; i < n && !found; i++)
			found = same_file(paths[i], out);
		swt_blktrace_paths_free(paths);
		return found;
	}
	for (size_t i = 0; i < SWT_ARRAY_SIZE(dir_files) && !found; i++) {
		char *path = swt_path_join(input, dir_files[i]);

		found = path && same_file(path, out);
		free(path);
	}
	if (!found) {
		char *blk = swt_path_join(input, "blk");

		found = blktrace_file_in(input, out) || (blk && blktrace_file_in(blk, out));
		free(blk);
	}
	return found;
}

int swt_input_check_output(const char *input, const char *out, struct swt_err *err)
{
	struct stat sb;

	/* the same file under any name: compared by device and inode */
	if (stat(out, &sb) < 0 || !S_ISREG(sb.st_mode) || !input_reads(input, &sb))
		return 0;
	return swt_error(err, SWT_EUSAGE, "'%s': the output is a file this ingest reads (input "
			 "'%s'); the database would replace it", out, input);
}

/* An event ingest refused (ret < 0): its message, unless err already holds one. */
static int ingest_failed(struct swt_ingest *ing, struct swt_err *err, int ret)
{
	const struct swt_err *ierr = swt_ingest_error(ing);

	if (ierr->code && err && !err->code)
		*err = *ierr;
	return ret;
}

static int ingest_blktrace(struct swt_ingest *ing, const char *input, char **paths, size_t n,
			   struct swt_err *err)
{
	struct swt_source_info info = { .path = input, .format = "blktrace" };
	struct swt_blktrace_stats stats;
	int ret;

	ret = swt_ingest_begin_source(ing, &info, err);
	if (ret)
		return ret;
	ret = swt_blktrace_decode(paths, n, 0, swt_ingest_event, ing, &stats, err);
	if (ret)
		return ingest_failed(ing, err, ret);
	info.version = stats.version;
	info.byte_order = stats.big_endian ? "big" : "little";
	info.cpus = stats.cpus;
	ret = swt_ingest_update_source(ing, &info, err);
	if (ret)
		return ret;
	if (stats.lost > 0) {
		struct swt_event lost = { .type = SWT_EV_LOST, .cpu = -1, .pid = -1 };

		lost.lost.count = stats.lost;
		ret = swt_ingest_event(ing, &lost);
		if (ret < 0)
			return ingest_failed(ing, err, ret);
	}
	return swt_ingest_end_source(ing, err);
}

static void quiesce(void *ctx)
{
	swt_ingest_quiesce(ctx);
}

static int ingest_tracedat(struct swt_ingest *ing, const char *path, struct swt_err *err)
{
	struct swt_source_info info = { .path = path, .format = "trace.dat" };
	struct swt_tracedat_stats stats;
	int ret;

	ret = swt_ingest_begin_source(ing, &info, err);
	if (ret)
		return ret;
	ret = swt_tracedat_decode_ex(path, swt_ingest_event, ing, quiesce, &stats, err);
	if (ret)
		return ingest_failed(ing, err, ret);
	if (stats.warning[0])
		swt_ingest_warn(ing, stats.warning);
	info.version = stats.version;
	info.byte_order = stats.big_endian ? "big" : "little";
	info.cpus = stats.cpus;
	info.clock = stats.clock;
	ret = swt_ingest_update_source(ing, &info, err);
	if (ret)
		return ret;
	return swt_ingest_end_source(ing, err);
}

static int ingest_blktrace_input(struct swt_ingest *ing, const char *input, struct swt_err *err)
{
	char **paths;
	size_t n;
	int ret;

	ret = swt_blktrace_expand(input, &paths, &n, err);
	if (ret)
		return ret;
	ret = ingest_blktrace(ing, input, paths, n, err);
	swt_blktrace_paths_free(paths);
	return ret;
}

/* blktrace file sets in dir: the distinct NAME of NAME.blktrace.N files. */
static int find_blktrace_sets(const char *dir, char ***sets, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **list = NULL;
	size_t cap = 0, count = 0;

	*sets = NULL;
	*n = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t len = swt_blktrace_set_name_len(de->d_name);
		char *set;
		size_t i;

		if (!len)
			continue;
		set = malloc(strlen(dir) + len + 2);
		if (!set)
			goto nomem;
		sprintf(set, "%s/%.*s", dir, (int)len, de->d_name);
		for (i = 0; i < count; i++)
			if (!strcmp(list[i], set))
				break;
		if (i < count) {
			free(set);
			continue;
		}
		if (swt_grow((void **)&list, &cap, count + 2, sizeof(*list))) {
			free(set);
			goto nomem;
		}
		list[count++] = set;
	}
	closedir(d);
	*sets = list;
	*n = count;
	return 0;
nomem:
	closedir(d);
	for (size_t i = 0; i < count; i++)
		free(list[i]);
	free(list);
	return -SWT_ENOMEM;
}

static int ingest_capture_dir(struct swt_ingest *ing, const char *dir, struct swt_err *err)
{
	char *tracedat = swt_path_join(dir, "trace.dat");
	const char *subdirs[] = { "", "blk" };
	int ret = 0, have_tracedat, used = 0;
	int64_t block_before;

	if (!tracedat)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	have_tracedat = is_file(tracedat);
	block_before = swt_ingest_block_events(ing);
	if (have_tracedat) {
		ret = ingest_tracedat(ing, tracedat, err);
		used = 1;
	}
	free(tracedat);
	if (ret)
		return ret;
	if (have_tracedat && swt_ingest_block_events(ing) > block_before)
		return 0;	/* block I/O already described by trace.dat */
	for (size_t s = 0; s < SWT_ARRAY_SIZE(subdirs) && !ret; s++) {
		char *sub = s ? swt_path_join(dir, subdirs[s]) : swt_strdup(dir);
		char **sets;
		size_t n;

		if (!sub)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		if (find_blktrace_sets(sub, &sets, &n)) {
			free(sub);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < n; i++) {
			if (!ret)
				ret = ingest_blktrace_input(ing, sets[i], err);
			free(sets[i]);
			used = 1;
		}
		free(sets);
		free(sub);
	}
	if (!ret && !used)
		ret = swt_error(err, SWT_ENOENT,
				"'%s': no trace.dat and no uncompressed blktrace files in it", dir);
	return ret;
}

int swt_ingest_input(struct swt_ingest *ing, const char *input, struct swt_err *err)
{
	struct stat sb;

	if (stat(input, &sb) == 0) {
		if (S_ISDIR(sb.st_mode))
			return ingest_capture_dir(ing, input, err);
		if (S_ISREG(sb.st_mode) && sb.st_size == 0)
			return swt_error(err, SWT_EFORMAT, "'%s': empty file", input);
		if (swt_tracedat_probe(input))
			return ingest_tracedat(ing, input, err);
		if (swt_blktrace_probe(input))
			return ingest_blktrace_input(ing, input, err);
		return swt_error(err, SWT_EFORMAT,
				 "'%s': not a trace.dat or blktrace file (unrecognised magic at offset 0)",
				 input);
	}
	if (errno != ENOENT)
		return swt_error(err, SWT_EIO, "'%s': %s", input, strerror(errno));
	/* NAME for NAME.blktrace.N, as blkparse -i NAME */
	return ingest_blktrace_input(ing, input, err);
}
