/*
 * What an ingest INPUT names, and feeding it to the right decoder:
 *   - a capture directory (trace.dat, meta.txt, blktrace files in it or in
 *     blk/): trace.dat first; blktrace files only when trace.dat holds no
 *     block events, since both would describe the same I/O;
 *   - a trace.dat file (recognised by its magic, whatever its name);
 *   - a blktrace file, or NAME standing for NAME.blktrace.0, .1, ...;
 *     per-CPU files of one set given one by one are read as NAME is.
 * It also says which files an ingest reads, so its output never replaces one.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
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

static char *meta_in(const char *dir)
{
	char *meta = swt_path_join(dir, "meta.txt");

	if (meta && is_file(meta))
		return meta;
	free(meta);
	return NULL;
}

char *swt_input_find_meta(const char *input)
{
	int whole = is_dir(input);
	char *dir = whole ? swt_strdup(input) : swt_dirname(input), *meta, *parent;

	if (!dir)
		return NULL;
	meta = meta_in(dir);
	/*
	 * DIR/blk/NAME, the blk folder of a capture (capture's layout, the
	 * shared ones'): DIR's meta.txt, as for DIR, which it is named after
	 */
	if (!meta && !whole && !strcmp(swt_basename(dir), "blk")) {
		parent = swt_dirname(dir);
		meta = parent ? meta_in(parent) : NULL;
		free(parent);
	}
	free(dir);
	return meta;
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
			/* DIR/blk/swap: the blk folder of a capture (capture's layout, the shared ones') */
			slash = strrchr(copy, '/');
			if (!strcmp(swt_basename(copy), "blk") && slash && slash != copy)
				*slash = '\0';
			else if (!strcmp(copy, "blk"))
				strcpy(copy, ".");	/* blk/swap, from inside DIR */
		} else {
			name = swt_strdup(swt_basename(copy));
			free(copy);
			return name;
		}
	}
	/* "dir//", ".", "..": the directory's own name */
	name = swt_strdup(swt_basename(copy));
	if (name && (!name[0] || !strcmp(name, ".") || !strcmp(name, "..") ||
		     copy[strlen(copy) - 1] == '/')) {
		char *real = realpath(copy, NULL);

		if (real) {
			free(name);
			name = swt_strdup(swt_basename(real));
			free(real);
		}
	}
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
	info.byte_order = stats.mixed_endian ? "mixed" : stats.big_endian ? "big" : "little";
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
	if (stats.warning[0] && stats.short_count) {
		/* meta.txt's end error (a full disk) is the likeliest cause: named first */
		char msg[sizeof(stats.warning) + 256];

		snprintf(msg, sizeof(msg), "%s (%sa size-capped recording, another reader of the ring "
			 "buffer, or damaged data)", stats.warning, swt_ingest_ended_on_error(ing) ?
			 "the capture ended on an error, as meta.txt says (end error): events it "
			 "read and could not write; or " : "");
		swt_ingest_warn(ing, msg);
	} else if (stats.warning[0]) {
		swt_ingest_warn(ing, stats.warning);
	}
	/* a capture whose writes failed read events into CPU files that stayed empty */
	if (stats.unwritten > 0 && swt_ingest_ended_on_error(ing)) {
		struct swt_event lost = { .type = SWT_EV_LOST, .cpu = -1, .pid = -1 };

		lost.lost.count = stats.unwritten;
		ret = swt_ingest_event(ing, &lost);
		if (ret < 0)
			return ingest_failed(ing, err, ret);
	}
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

/* Does dir hold a capture's raw ring-buffer pages (BUFFER.cpuN files)? */
static int has_raw_pages(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		const char *cpu = strstr(de->d_name, ".cpu");

		found = cpu && cpu[4] >= '0' && cpu[4] <= '9' &&
			strspn(cpu + 4, "0123456789") == strlen(cpu + 4);
	}
	closedir(d);
	return found;
}

static int ingest_capture_dir(struct swt_ingest *ing, const char *dir, struct swt_err *err)
{
	char *tracedat = swt_path_join(dir, "trace.dat");
	const char *subdirs[] = { "", "blk" };
	int ret = 0, have_tracedat, used = 0;
	int64_t block_before;

	if (!tracedat)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (!is_file(tracedat)) {
		/*
		 * swaptrace capture makes trace.dat from the pages in raw/ at the
		 * end, then removes raw/: raw/ with pages and no trace.dat is a
		 * capture whose trace.dat was never made -- killed while writing
		 * it (meta.txt may be there already), or out of room (it kept
		 * trace.dat.head and said how to finish).  Its block files alone
		 * are not the whole recording.
		 */
		char *raw = swt_path_join(dir, "raw"), *head = swt_path_join(dir, "trace.dat.head");
		int unfinished = raw && head && has_raw_pages(raw), headed = head && is_file(head);

		free(raw);
		free(head);
		if (unfinished) {
			free(tracedat);
			return swt_error(err, SWT_EFORMAT, headed ?
					 "'%s': a swaptrace capture whose trace.dat was not assembled "
					 "(raw/ and trace.dat.head, but no trace.dat): finish it with the "
					 "command capture printed (cat trace.dat.head raw/... > trace.dat), "
					 "then ingest it" :
					 "'%s': an unfinished swaptrace capture (raw/, but no trace.dat): "
					 "it was stopped before it could finish, and what it holds is not "
					 "the whole recording", dir);
		}
	}
	have_tracedat = is_file(tracedat);
	if (!have_tracedat) {
		/*
		 * A trace.dat that is there by name but not a file to read (a
		 * dangling link, a directory) is the capture's recording lost,
		 * not a capture of block files alone.
		 */
		struct stat sb;

		if (lstat(tracedat, &sb) == 0) {
			ret = stat(tracedat, &sb) ? swt_error(err, SWT_ENOENT, "'%s': %s", tracedat,
							      strerror(errno))
						  : swt_error(err, SWT_EFORMAT,
							      "'%s': not a regular file", tracedat);
			free(tracedat);
			return ret;
		}
	}
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
	if (!ret && !used) {
		/* raw/ with no pages: a capture stopped before its buffers gave any */
		char *raw = swt_path_join(dir, "raw");
		int empty_raw = raw && is_dir(raw);

		free(raw);
		ret = swt_error(err, SWT_ENOENT, empty_raw ?
				"'%s': an unfinished swaptrace capture (raw/ holds no ring-buffer "
				"pages, and there is no trace.dat): it was stopped before it "
				"recorded anything" :
				"'%s': no trace.dat and no uncompressed blktrace files in it", dir);
	}
	return ret;
}

/*
 * A compressed file names the tool that unpacks it: the shared captures
 * ship their blktrace files as .xz.
 */
static const char *compressed_hint(const char *path)
{
	static const struct {
		unsigned char magic[6];
		size_t len;
		const char *hint;
	} kinds[] = {
		{ { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, ": xz-compressed, decompress it first (xz -dk)" },
		{ { 0x1f, 0x8b }, 2, ": gzip-compressed, decompress it first (gzip -dk)" },
		{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, ": zstd-compressed, decompress it first (zstd -d)" },
	};
	unsigned char head[6] = { 0 };
	FILE *f = fopen(path, "rb");
	size_t got = f ? fread(head, 1, sizeof(head), f) : 0;

	if (f)
		fclose(f);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (got >= kinds[i].len && !memcmp(head, kinds[i].magic, kinds[i].len))
			return kinds[i].hint;
	return "";
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
				 "'%s': not a trace.dat or blktrace file (unrecognised magic at offset 0)%s",
				 input, compressed_hint(input));
	}
	if (errno != ENOENT)
		return swt_error(err, SWT_EIO, "'%s': %s", input, strerror(errno));
	/* NAME for NAME.blktrace.N, as blkparse -i NAME */
	return ingest_blktrace_input(ing, input, err);
}

/*
 * Per-CPU files of one blktrace set given one by one (the shell's
 * NAME.blktrace.*) are one trace, as blkparse merges its -i files: read
 * together, as one source, they are the NAME form itself.  Apart, each
 * would bring the same devices' I/O as another source, which ingest
 * refuses, and one alone leaves the other CPUs' I/O out.
 */
struct blk_file {
	char *path;
	dev_t dev;		/* the same file under any name is one */
	ino_t ino;
	unsigned long cpu;	/* the N of NAME.blktrace.N */
};

struct blk_group {
	char *name;		/* NAME, as its first input spells it */
	dev_t dir_dev;		/* NAME's directory, and its base name: the set */
	ino_t dir_ino;
	struct blk_file *files;
	size_t nr, cap;
	int whole;		/* NAME itself was an input */
	size_t first;		/* the input it is read at */
};

static void group_release(struct blk_group *g)
{
	for (size_t i = 0; i < g->nr; i++)
		free(g->files[i].path);
	free(g->files);
	free(g->name);
}

/*
 * The set an input belongs to: *name (caller frees) for a blktrace file
 * named NAME.blktrace.N, or a NAME whose files exist, with its directory;
 * *name NULL for any other input, read on its own (with its own messages).
 */
static int input_set(const char *input, char **name, int *whole, dev_t *dir_dev,
		     ino_t *dir_ino)
{
	struct stat sb;
	char **paths, *dir;
	size_t n, len;
	int ok;

	*name = NULL;
	*whole = 0;
	if (stat(input, &sb) == 0) {
		/* an empty file of a set is an idle CPU's (blktrace writes one) */
		len = swt_blktrace_set_name_len(input);
		if (!len || !S_ISREG(sb.st_mode) || (sb.st_size && !swt_blktrace_probe(input)))
			return 0;
	} else {
		if (errno != ENOENT || swt_blktrace_expand(input, &paths, &n, NULL))
			return 0;
		swt_blktrace_paths_free(paths);
		len = strlen(input);
		*whole = 1;
	}
	*name = strndup(input, len);
	dir = *name ? swt_dirname(*name) : NULL;
	if (!dir) {
		free(*name);
		*name = NULL;
		return -SWT_ENOMEM;
	}
	ok = stat(dir, &sb) == 0;
	free(dir);
	if (!ok) {
		free(*name);
		*name = NULL;
		return 0;
	}
	*dir_dev = sb.st_dev;
	*dir_ino = sb.st_ino;
	return 0;
}

static const struct blk_file *group_find(const struct blk_group *g, const struct stat *sb)
{
	for (size_t i = 0; i < g->nr; i++)
		if (g->files[i].dev == sb->st_dev && g->files[i].ino == sb->st_ino)
			return &g->files[i];
	return NULL;
}

/* Add a file to its set once, whatever name it is given by. */
static int group_add(struct blk_group *g, const char *path)
{
	struct blk_file *f;
	struct stat sb;

	if (stat(path, &sb) < 0 || group_find(g, &sb))
		return 0;	/* gone since: the decoder names it */
	if (swt_grow((void **)&g->files, &g->cap, g->nr + 1, sizeof(*g->files)))
		return -SWT_ENOMEM;
	f = &g->files[g->nr];
	f->path = swt_strdup(path);
	if (!f->path)
		return -SWT_ENOMEM;
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	f->cpu = strtoul(path + swt_blktrace_set_name_len(path) + 10, NULL, 10);
	g->nr++;
	return 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct blk_file *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/*
 * Read a set's files as one source, in CPU order as the NAME form lists
 * them, named NAME when there are several (as the NAME form is), else by
 * the file's own path.  Files of the set that lie beside them but were not
 * given are named in a warning.
 */
static int ingest_group(struct swt_ingest *ing, struct blk_group *g, struct swt_err *err)
{
	const char *path = g->nr == 1 && !g->whole ? g->files[0].path : g->name;
	char **set = NULL, **paths;
	size_t nset = 0, missing = 0;
	const char *first_missing = NULL;
	int ret;

	qsort(g->files, g->nr, sizeof(*g->files), cmp_cpu);
	paths = calloc(g->nr + 1, sizeof(*paths));
	if (!paths)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->nr; i++)
		paths[i] = g->files[i].path;
	ret = ingest_blktrace(ing, path, paths, g->nr, err);
	free(paths);
	/* warned once read: when reading fails, its error is the one line said */
	if (!ret && !g->whole && !swt_blktrace_expand(g->name, &set, &nset, NULL)) {
		for (size_t i = 0; i < nset; i++) {
			struct stat sb;

			if (stat(set[i], &sb) == 0 && !group_find(g, &sb) && !missing++)
				first_missing = set[i];
		}
	}
	if (missing) {
		char msg[1024], more[48] = "";

		if (missing > 1)
			snprintf(more, sizeof(more), " and %zu more", missing - 1);
		snprintf(msg, sizeof(msg), "only %zu of the %zu per-CPU files of blktrace set '%s' "
			 "given (not '%s'%s): the other CPUs' block I/O is left out; ingest '%s' "
			 "(as blkparse -i) to read them all", nset - missing, nset, g->name,
			 swt_basename(first_missing), more, g->name);
		swt_ingest_warn(ing, msg);
	}
	swt_blktrace_paths_free(set);
	return ret;
}

/* The set of input i, added to the sets so far (or a new one); *at its index. */
static int gather(struct blk_group **groups, size_t *nr, size_t *cap, const char *input,
		  size_t i, size_t *at)
{
	struct blk_group *g = NULL;
	dev_t dev = 0;
	ino_t ino = 0;
	char *name, **paths;
	size_t np;
	int whole, ret;

	*at = SIZE_MAX;
	ret = input_set(input, &name, &whole, &dev, &ino);
	if (ret || !name)
		return ret;
	for (size_t k = 0; k < *nr && !g; k++)
		if ((*groups)[k].dir_dev == dev && (*groups)[k].dir_ino == ino &&
		    !strcmp(swt_basename((*groups)[k].name), swt_basename(name)))
			g = &(*groups)[k];
	if (!g) {
		if (swt_grow((void **)groups, cap, *nr + 1, sizeof(**groups))) {
			free(name);
			return -SWT_ENOMEM;
		}
		g = &(*groups)[(*nr)++];
		memset(g, 0, sizeof(*g));
		g->name = name;
		name = NULL;
		g->dir_dev = dev;
		g->dir_ino = ino;
		g->first = i;
	}
	free(name);
	*at = (size_t)(g - *groups);
	if (!whole)
		return group_add(g, input);
	g->whole = 1;
	if (swt_blktrace_expand(input, &paths, &np, NULL))
		return 0;
	for (size_t k = 0; k < np && !ret; k++)
		ret = group_add(g, paths[k]);
	swt_blktrace_paths_free(paths);
	return ret;
}

/* Is path the trace.dat a capture directory input dir reads (its blktrace files are grouped)? */
static int tracedat_of_dir(const char *path, const char *dir)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct stat dsb;
	char *parent;
	int found;

	if (strcmp(base, "trace.dat") || stat(dir, &dsb) < 0 || !S_ISDIR(dsb.st_mode))
		return 0;
	parent = slash ? strndup(path, (size_t)(slash - path)) : swt_strdup(".");
	if (!parent)
		return 0;
	found = same_file(*parent ? parent : "/", &dsb);
	free(parent);
	return found;
}

/*
 * Whether input i is read with another: the same file or directory as an
 * earlier input, or the trace.dat of a capture directory given too (before
 * or after it).
 */
static int read_with_another(char *const *inputs, size_t n, size_t i)
{
	struct stat sb;

	if (stat(inputs[i], &sb) < 0)
		return 0;
	for (size_t j = 0; j < i; j++)
		if (same_file(inputs[j], &sb))
			return 1;
	for (size_t j = 0; j < n && S_ISREG(sb.st_mode); j++)
		if (j != i && tracedat_of_dir(inputs[i], inputs[j]))
			return 1;
	return 0;
}

int swt_ingest_inputs(struct swt_ingest *ing, char *const *inputs, size_t n,
		      struct swt_err *err)
{
	struct blk_group *groups = NULL;
	size_t nr_groups = 0, cap = 0, *member = calloc(n ? n : 1, sizeof(*member));
	int ret = 0;

	if (!member)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !ret; i++)
		ret = gather(&groups, &nr_groups, &cap, inputs[i], i, &member[i]);
	if (ret)
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !ret; i++) {
		if (member[i] == SIZE_MAX && read_with_another(inputs, n, i))
			continue;	/* the same file or directory again: read once */
		if (member[i] == SIZE_MAX)
			ret = swt_ingest_input(ing, inputs[i], err);
		else if (groups[member[i]].first == i)
			ret = groups[member[i]].nr ? ingest_group(ing, &groups[member[i]], err) :
			      swt_ingest_input(ing, inputs[i], err);
	}
	for (size_t k = 0; k < nr_groups; k++)
		group_release(&groups[k]);
	free(groups);
	free(member);
	return ret;
}
