/*
 * The memory maps a capture recorded of its target (maps/PID-start.txt and
 * maps/PID-end.txt, named by meta.txt's "maps" lines, in /proc/PID/maps
 * format) into table vma, so that VMA readahead is replayed inside the
 * task's real VMAs rather than ones guessed from fault addresses; and the
 * threads of those processes (its "threads" lines) into task.tgid, since
 * a fault names its thread and the maps are the process's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "facts.h"
#include "util.h"

/*
 * A number of the given base at *p, its digits only (strtoull would take
 * blanks, a sign and "0x" first: " -1" as 2^64 - 1), moving *p past it.
 */
static int parse_digits(char **p, int base, uint64_t *out)
{
	size_t n = strspn(*p, base == 16 ? "0123456789abcdefABCDEF" : "0123456789");
	unsigned long long v;
	char *q;

	if (!n)
		return -1;
	errno = 0;
	v = strtoull(*p, &q, base);
	if (errno || q != *p + n)
		return -1;
	*out = v;
	*p = q;
	return 0;
}

/* One line of /proc/PID/maps: "start-end perms offset maj:min inode   path". */
static int parse_maps_line(char *line, uint64_t *start, uint64_t *end, char perms[5],
			   uint64_t *offset, const char **path)
{
	char *p = line;
	uint64_t v;

	if (parse_digits(&p, 16, start) || *p++ != '-')
		return -1;
	if (parse_digits(&p, 16, end) || *p++ != ' ' || *end <= *start)
		return -1;
	/* "rw-p": read, write, execute, private or shared, as the kernel prints them */
	if (strlen(p) < 5 || !strchr("r-", p[0]) || !strchr("w-", p[1]) || !strchr("x-", p[2]) ||
	    !strchr("ps", p[3]) || p[4] != ' ')
		return -1;
	memcpy(perms, p, 4);
	perms[4] = '\0';
	p += 5;
	if (parse_digits(&p, 16, offset) || *p++ != ' ')
		return -1;
	/* maj:min and inode: checked for shape, not kept */
	if (parse_digits(&p, 16, &v) || *p++ != ':' || parse_digits(&p, 16, &v) || *p++ != ' ')
		return -1;
	if (parse_digits(&p, 10, &v) || (*p && *p != ' '))
		return -1;
	while (*p == ' ')
		p++;
	*path = *p ? p : NULL;
	return 0;
}

static int write_maps_file(struct swt_store *st, sqlite3_stmt *ins, const char *file,
			   int64_t pid, const char *snapshot, swt_warn_fn warn, void *warn_ctx,
			   struct swt_err *err)
{
	/* not blocking in open: a FIFO would wait for a writer that never comes */
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f = NULL;
	struct stat sb;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int ret = 0;

	if (fd < 0) {
		if (errno == ENOENT) {
			/* a capture copied without its maps: replay guesses the VMAs instead */
			if (warn) {
				char msg[600];

				snprintf(msg, sizeof(msg), "'%s' is missing: VMA bounds of pid %lld "
					 "are inferred from its faults", file, (long long)pid);
				warn(warn_ctx, msg);
			}
			return 0;
		}
		return swt_error(err, SWT_EIO, "'%s': %s", file, strerror(errno));
	}
	/*
	 * a copy of /proc/PID/maps is a regular file: a FIFO hung ingest, a
	 * directory was a read error, /dev/zero one endless line read into memory
	 */
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		ret = swt_error(err, SWT_EFORMAT, "'%s': not a regular file", file);
		close(fd);
		return ret;
	}
	f = fdopen(fd, "r");
	if (!f) {
		ret = swt_error(err, SWT_ENOMEM, "'%s': %s", file, strerror(errno));
		close(fd);
		return ret;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		uint64_t start, end, offset;
		const char *path;
		char perms[5];

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if ((size_t)len != strlen(line) ||
		    parse_maps_line(line, &start, &end, perms, &offset, &path)) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: not a /proc/PID/maps line",
					file, lineno);
			goto out;
		}
		if (end > (uint64_t)INT64_MAX)
			continue;	/* [vsyscall], in kernel space: no swapped pages there */
		sqlite3_bind_int64(ins, 1, pid);
		sqlite3_bind_text(ins, 2, snapshot, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 3, (int64_t)start);
		sqlite3_bind_int64(ins, 4, (int64_t)end);
		sqlite3_bind_text(ins, 5, perms, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ins, 6, (int64_t)(offset > (uint64_t)INT64_MAX ? INT64_MAX : offset));
		if (path)
			sqlite3_bind_text(ins, 7, path, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(ins, 7);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			ret = swt_store_sql_error(st, err, "insert vma");
			goto out;
		}
		sqlite3_reset(ins);
	}
	if (ferror(f))
		ret = swt_error(err, SWT_EIO, "'%s': read error", file);
out:
	free(line);
	fclose(f);
	return ret;
}

/* A maps or threads line of meta.txt that is not as capture writes it, by its line number. */
static int bad_maps_line(const struct swt_meta_fact *fact, const char *meta_name,
			 struct swt_err *err)
{
	return swt_error(err, SWT_EFORMAT, "'%s': line %u: bad %s line: expected %s", meta_name,
			 fact->line, fact->key, strcmp(fact->key, "maps") ?
			 "pid=N tids=T1,T2,..." : "pid=N exe=PATH start=FILE end=FILE");
}

/*
 * 1 when a maps line's FILE (LEN bytes) names a file inside the capture
 * directory, as capture writes it (maps/N-start.txt): an absolute path or
 * a ".." would have ingest read any file on the host as a maps snapshot
 * and store it.
 */
static int inside_capture(const char *file, size_t len)
{
	size_t at = 0;

	if (file[0] == '/')
		return 0;
	while (at < len) {
		const char *slash = memchr(file + at, '/', len - at);
		size_t n = slash ? (size_t)(slash - (file + at)) : len - at;

		if (n == 2 && !memcmp(file + at, "..", 2))
			return 0;
		at += n + 1;
	}
	return 1;
}

/*
 * A maps file named inside the capture directory that a symlink takes out
 * of it (maps/N-start.txt -> /etc/...) is refused as an absolute path is:
 * 1 when PATH resolves to a file under DIR (resolved), or to none (a
 * missing file is write_maps_file's warning), 0 with its resolved name in
 * *real otherwise, -1 with errno when it cannot be resolved.
 */
static int resolves_inside(const char *path, const char *dir, char **real)
{
	size_t n = strlen(dir);

	*real = realpath(path, NULL);
	if (!*real)
		return errno == ENOENT ? 1 : -1;
	/* "/" as the capture directory holds everything */
	if (!strncmp(*real, dir, n) && (n == 1 || (*real)[n] == '/'))
		return 1;
	return 0;
}

/* The last occurrence of KEY in [s, limit), or NULL. */
static const char *last_of(const char *s, const char *limit, const char *key)
{
	const char *found = NULL, *p = s;
	size_t n = strlen(key);

	while ((p = strstr(p, key)) && p + n <= limit) {
		found = p;
		p++;
	}
	return found;
}

int swt_store_write_maps(struct swt_store *st, const struct swt_meta *meta, swt_warn_fn warn,
			 void *warn_ctx, struct swt_err *err)
{
	const char *meta_name = meta->path ? meta->path : "metadata";
	sqlite3_stmt *ins = NULL;
	char *dir = NULL, *real_dir = NULL;
	int ret = 0;

	for (size_t i = 0; !ret && i < meta->nr_facts; i++) {
		const struct swt_meta_fact *fact = &meta->facts[i];
		const char *v = fact->value, *v_end = v + strlen(v), *end_at, *start_at;
		const char *from[2], *to[2], *snaps[2] = { "start", "end" };
		char *endp = NULL;
		long long pid;

		if (fact->section[0] || strcmp(fact->key, "maps"))
			continue;
		/*
		 * "pid=N exe=PATH start=FILE end=FILE": the exe path may hold
		 * spaces, the file names (maps/N-start.txt) do not, so they are
		 * the last two words.
		 */
		errno = 0;
		pid = strncmp(v, "pid=", 4) ? -1 : strtoll(v + 4, &endp, 10);
		end_at = last_of(v, v_end, " end=");
		start_at = last_of(v, end_at ? end_at : v_end, " start=");
		if (pid <= 0 || pid > INT32_MAX || errno || !endp || *endp != ' ' || !end_at || !start_at) {
			ret = bad_maps_line(fact, meta_name, err);
			break;
		}
		from[0] = start_at + strlen(" start=");
		to[0] = end_at;
		from[1] = end_at + strlen(" end=");
		to[1] = v_end;
		if (!ins) {
			dir = swt_dirname(meta->path ? meta->path : ".");
			if (!dir) {
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				break;
			}
			real_dir = realpath(dir, NULL);
			if (!real_dir) {
				ret = swt_error(err, errno == ENOMEM ? SWT_ENOMEM : SWT_EIO, "'%s': %s",
						dir, strerror(errno));
				break;
			}
			ret = swt_store_prepare(st, "INSERT INTO vma (pid, snapshot, start, end, perms,"
						" offset, path) VALUES (?,?,?,?,?,?,?)", &ins, err);
			if (ret)
				break;
		}
		for (int k = 0; !ret && k < 2; k++) {
			int len = (int)(to[k] - from[k]), inside;
			char *path = NULL, *real;

			if (len <= 0 || memchr(from[k], ' ', (size_t)len)) {
				ret = bad_maps_line(fact, meta_name, err);
				break;
			}
			if (!inside_capture(from[k], (size_t)len)) {
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: maps file '%.*s' is "
						"not inside the capture directory (a path below it "
						"without '..', as maps/N-%s.txt)", meta_name, fact->line,
						len, from[k], snaps[k]);
				break;
			}
			if (asprintf(&path, "%s/%.*s", dir, len, from[k]) < 0) {
				ret = swt_error(err, SWT_ENOMEM, "out of memory");
				break;
			}
			inside = resolves_inside(path, real_dir, &real);
			if (inside < 0)
				ret = swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
			else if (!inside)
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: maps file '%.*s' is "
						"not inside the capture directory (a symlink to '%s')",
						meta_name, fact->line, len, from[k], real);
			else
				ret = write_maps_file(st, ins, path, pid, snaps[k], warn, warn_ctx,
						      err);
			free(real);
			free(path);
		}
	}
	sqlite3_finalize(ins);
	free(real_dir);
	free(dir);
	return ret;
}

/* Parse a positive pid at *p (digits only), moving *p past it. */
static int parse_pid(const char **p, int64_t *pid)
{
	char *end;
	long long v;

	if (**p < '0' || **p > '9')
		return -1;	/* strtoll would take blanks and signs */
	errno = 0;
	v = strtoll(*p, &end, 10);
	if (end == *p || errno || v <= 0 || v > INT32_MAX)
		return -1;
	*pid = v;
	*p = end;
	return 0;
}

static int set_tgid(struct swt_store *st, sqlite3_stmt *up, int64_t pid, int64_t tgid,
		    struct swt_err *err)
{
	sqlite3_bind_int64(up, 1, pid);
	sqlite3_bind_int64(up, 2, tgid);
	if (sqlite3_step(up) != SQLITE_DONE)
		return swt_store_sql_error(st, err, "insert task");
	sqlite3_reset(up);
	return 0;
}

int swt_store_write_threads(struct swt_store *st, const struct swt_meta *meta,
			    struct swt_err *err)
{
	const char *meta_name = meta->path ? meta->path : "metadata";
	sqlite3_stmt *up = NULL;
	int ret = 0;

	for (size_t i = 0; !ret && i < meta->nr_facts; i++) {
		const struct swt_meta_fact *fact = &meta->facts[i];
		const char *v = fact->value;
		int threads = !strcmp(fact->key, "threads"), bad = 0;
		int64_t pid, tid;

		if (fact->section[0] || (!threads && strcmp(fact->key, "maps")))
			continue;
		if (!up) {
			ret = swt_store_prepare(st, "INSERT INTO task (pid, tgid) VALUES (?,?) ON CONFLICT"
						" (pid) DO UPDATE SET tgid = excluded.tgid", &up, err);
			if (ret)
				break;
		}
		/* "maps pid=N ...": the process itself (write_maps checked the line) */
		bad = strncmp(v, "pid=", 4) || (v += 4, parse_pid(&v, &pid));
		if (!bad)
			ret = set_tgid(st, up, pid, pid, err);
		/* "threads pid=N tids=T1,T2,..." */
		if (!bad && !ret && threads) {
			bad = strncmp(v, " tids=", 6) != 0;
			if (!bad)
				v += 6;
			while (!bad && !ret) {
				bad = parse_pid(&v, &tid);
				if (!bad)
					ret = set_tgid(st, up, tid, pid, err);
				if (*v != ',')
					break;
				v++;
			}
			bad = bad || *v;
		}
		if (bad && !ret)
			ret = bad_maps_line(fact, meta_name, err);
	}
	sqlite3_finalize(up);
	return ret;
}

#define CLONE_THREAD_FLAG 0x00010000ull	/* include/uapi/linux/sched.h */

/*
 * "pid=%d comm=%s clone_flags=%lx oom_score_adj=%hd" (the kernel's print
 * format; comm may hold spaces): the new task and whether it is a thread.
 */
static int parse_newtask(const char *info, int64_t *child, int *thread)
{
	const char *p = info, *flags = NULL, *q;
	char *end;
	unsigned long long f;

	if (!info || strncmp(info, "pid=", 4))
		return -1;
	p += 4;
	if (parse_pid(&p, child))
		return -1;
	for (q = p; (q = strstr(q, " clone_flags=")); q++)
		flags = q;
	if (!flags)
		return -1;
	errno = 0;
	f = strtoull(flags + strlen(" clone_flags="), &end, 16);
	if (errno || end == flags + strlen(" clone_flags="))
		return -1;
	*thread = (f & CLONE_THREAD_FLAG) != 0;
	return 0;
}

int swt_store_write_thread_events(struct swt_store *st, struct swt_err *err)
{
	sqlite3_stmt *ev = NULL, *get = NULL, *up = NULL;
	int ret, rc = SQLITE_DONE;

	ret = swt_store_prepare(st, "SELECT pid, info FROM event WHERE system = 'task' AND"
				" name = 'task_newtask' ORDER BY ts, id", &ev, err);
	if (!ret)
		ret = swt_store_prepare(st, "SELECT tgid FROM task WHERE pid = ?", &get, err);
	/* what the capture's looks at /proc said stays: they saw the process */
	if (!ret)
		ret = swt_store_prepare(st, "INSERT INTO task (pid, tgid) VALUES (?,?) ON CONFLICT (pid)"
					" DO UPDATE SET tgid = coalesce(task.tgid, excluded.tgid)", &up, err);
	while (!ret && (rc = sqlite3_step(ev)) == SQLITE_ROW) {
		int64_t parent = sqlite3_column_int64(ev, 0), child, tgid = parent;
		int thread;

		if (parse_newtask((const char *)sqlite3_column_text(ev, 1), &child, &thread) ||
		    !thread || parent <= 0 || parent > INT32_MAX)
			continue;	/* a fork, or a format this kernel does not print */
		/* a thread started by a thread belongs to that thread's process */
		sqlite3_bind_int64(get, 1, parent);
		if (sqlite3_step(get) == SQLITE_ROW && sqlite3_column_type(get, 0) != SQLITE_NULL)
			tgid = sqlite3_column_int64(get, 0);
		sqlite3_reset(get);
		ret = set_tgid(st, up, child, tgid, err);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = swt_store_sql_error(st, err, "reading task_newtask events");
	sqlite3_finalize(ev);
	sqlite3_finalize(get);
	sqlite3_finalize(up);
	return ret;
}
