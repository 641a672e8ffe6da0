/*
 * The undo log of host settings a capture changes, and its crash journal
 * (see knobs.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "knobs.h"
#include "util.h"

void swt_knobs_init(struct swt_knobs *k)
{
	memset(k, 0, sizeof(*k));
	k->journal_fd = -1;
}

void swt_knobs_release(struct swt_knobs *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].path);
		free(k->v[i].orig);
	}
	free(k->v);
	/* a journal still open here means the restore did not run: keep the file */
	if (k->journal_fd >= 0)
		close(k->journal_fd);
	free(k->journal_path);
	memset(k, 0, sizeof(*k));
	k->journal_fd = -1;
}

char *swt_read_text(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0) {
			buf[n] = '\0';
			if (len)
				*len = n;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	return buf;
}

char *swt_knob_restore_value(const char *text)
{
	const char *lb = strchr(text, '['), *exp = strstr(text, "(expanded: ");
	size_t n;
	char *out;

	if (lb && strchr(lb, ']')) {
		/* "[local] global counter": the selected entry */
		const char *rb = strchr(lb, ']');

		n = (size_t)(rb - lb - 1);
		out = malloc(n + 1);
		if (out) {
			memcpy(out, lb + 1, n);
			out[n] = '\0';
		}
		return out;
	}
	if (exp) {
		/* "7 (expanded: 1408)": the size it expands to */
		exp += strlen("(expanded: ");
		n = strspn(exp, "0123456789");
		out = malloc(n + 1);
		if (out) {
			memcpy(out, exp, n);
			out[n] = '\0';
		}
		return out;
	}
	n = strlen(text);
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	out = malloc(n + 1);
	if (out) {
		memcpy(out, text, n);
		out[n] = '\0';
	}
	return out;
}

/*
 * ---- the crash journal: one record per line, "set PATH\tORIGINAL\tWRITTEN"
 * (before each write; journals of older swaptraces lack WRITTEN), "mkdir
 * PATH" or "mount PATH"
 */

static size_t escape_into(char *out, const char *in)
{
	size_t n = 0;

	for (; *in; in++) {
		char e = *in == '\\' ? '\\' : *in == '\n' ? 'n' : *in == '\t' ? 't' : 0;

		if (e) {
			out[n++] = '\\';
			out[n++] = e;
		} else {
			out[n++] = *in;
		}
	}
	return n;
}

static void unescape_in_place(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/*
 * One journal line, "VERB PATH[\tVALUE[\tWRITTEN]]\n", escaped; malloc'ed,
 * its length in *len.  NULL when out of memory.
 */
static char *format_record(const char *verb, const char *path, const char *value,
			   const char *written, size_t *len)
{
	char *line = malloc(strlen(verb) + 2 * strlen(path) + (value ? 2 * strlen(value) : 0) +
			    (written ? 2 * strlen(written) : 0) + 5);
	size_t n;

	if (!line)
		return NULL;
	n = (size_t)sprintf(line, "%s ", verb);
	n += escape_into(line + n, path);
	if (value) {
		line[n++] = '\t';
		n += escape_into(line + n, value);
	}
	if (written) {
		line[n++] = '\t';
		n += escape_into(line + n, written);
	}
	line[n++] = '\n';
	*len = n;
	return line;
}

static int journal_append(struct swt_knobs *k, const char *verb, const char *path,
			  const char *value, const char *written, struct swt_err *err)
{
	char *line;
	size_t n;
	int ret = 0;

	if (k->journal_fd < 0)
		return 0;
	line = format_record(verb, path, value, written, &n);
	if (!line)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	/* one write per record: a kill between records leaves whole lines */
	if (swt_write_all(k->journal_fd, line, n))
		ret = swt_error(err, SWT_EIO, "'%s': cannot journal a change: %s", k->journal_path,
				strerror(errno));
	free(line);
	return ret;
}

int swt_knobs_journal_open(struct swt_knobs *k, const char *dir, struct swt_err *err)
{
	char *fresh = NULL;
	int fd, ret = 0;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return swt_error(err, SWT_EIO, "'%s': cannot create: %s", dir, strerror(errno));
	if (asprintf(&k->journal_path, "%s/capture-%d.undo", dir, (int)getpid()) < 0 ||
	    asprintf(&fresh, "%s/capture-%d.new", dir, (int)getpid()) < 0) {
		free(k->journal_path);
		k->journal_path = NULL;
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	/*
	 * Locked under another name first: a journal that appears under its
	 * own name is always locked while its capture lives, so a recovering
	 * capture never takes a starting one's for a dead one's.
	 */
	fd = open(fresh, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || rename(fresh, k->journal_path) < 0) {
		int e = errno;

		if (fd >= 0) {
			close(fd);
			unlink(fresh);
		}
		ret = swt_error(err, SWT_EIO, "'%s': cannot create the undo journal: %s",
				k->journal_path, strerror(e));
		free(k->journal_path);
		k->journal_path = NULL;
		goto out;
	}
	k->journal_fd = fd;
out:
	free(fresh);
	return ret;
}

int swt_knobs_journal_mkdir(struct swt_knobs *k, const char *path, struct swt_err *err)
{
	return journal_append(k, "mkdir", path, NULL, NULL, err);
}

int swt_knobs_journal_mount(struct swt_knobs *k, const char *path, struct swt_err *err)
{
	return journal_append(k, "mount", path, NULL, NULL, err);
}

void swt_knobs_journal_close(struct swt_knobs *k)
{
	if (k->journal_fd < 0)
		return;
	/* unlinked while still locked, so no recoverer can pick it up half-way */
	unlink(k->journal_path);
	close(k->journal_fd);
	k->journal_fd = -1;
}

static int open_in(const char *dir, const char *name)
{
	char path[4096];

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -1;
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
}

/* DIR/NAME flock()ed (op: LOCK_EX, LOCK_SH), waiting for it: the fd, or -1. */
static int lock_in(const char *dir, const char *name, int op)
{
	int fd = open_in(dir, name), r = 0;

	/*
	 * A stop signal (its handler has no SA_RESTART, to cut waits short)
	 * is seen by the capture afterwards: waiting on, not going on
	 * without the lock, which another capture may be mounting under
	 */
	while (fd >= 0 && (r = flock(fd, op)) < 0 && errno == EINTR)
		;
	if (fd >= 0 && r < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int swt_tracefs_mutex_lock(const char *dir)
{
	return lock_in(dir, "tracefs.mutex", LOCK_EX);
}

int swt_tracefs_users_join(const char *dir)
{
	return lock_in(dir, "tracefs.users", LOCK_SH);
}

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
/* stx_mnt_id's offset in struct statx: the kernel's ABI (glibc 2.36 calls it padding) */
#define STATX_MNT_ID_OFFSET 0x90
_Static_assert(sizeof(struct statx) >= STATX_MNT_ID_OFFSET + 8, "struct statx too small");

/*
 * The mount at path, as an id no later mount gets (Linux 6.8+; the
 * mountinfo ids before it are handed out again, and an admin's tracefs
 * mounted where ours was got ours): a mark names one mount, not whatever
 * is mounted there later.  -1 when it cannot be told.
 */
static long long tracefs_mount_id(const char *path)
{
	struct statx stx;
	uint64_t id;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
		return -1;
	memcpy(&id, (const char *)&stx + STATX_MNT_ID_OFFSET, sizeof(id));
	return id > (uint64_t)INT64_MAX ? -1 : (long long)id;
}

void swt_tracefs_mark_mounted(const char *dir, const char *path)
{
	char mark[4096], text[4200];
	int fd;

	if ((size_t)snprintf(mark, sizeof(mark), "%s/tracefs.mounted", dir) >= sizeof(mark))
		return;
	fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	snprintf(text, sizeof(text), "%lld %s", tracefs_mount_id(path), path);
	if (swt_write_all(fd, text, strlen(text)))
		unlink(mark);
	close(fd);
}

int swt_tracefs_leave(const char *dir, int users_fd, const char *path)
{
	char mark[4096], *marked;
	int users = users_fd, ret = 0, e;

	if (users < 0)
		users = open_in(dir, "tracefs.users");
	else
		flock(users, LOCK_UN);
	/* anyone else's shared lock: a capture still uses it */
	if (users >= 0 && flock(users, LOCK_EX | LOCK_NB) < 0) {
		close(users);
		return 2;
	}
	marked = (size_t)snprintf(mark, sizeof(mark), "%s/tracefs.mounted", dir) < sizeof(mark) ?
			 swt_read_text(mark, NULL) : NULL;
	if (marked && marked[0]) {
		char *end;
		long long id = strtoll(marked, &end, 10);

		path = *end == ' ' ? end + 1 : NULL;
		/*
		 * Unmounted and mounted again since (by someone else): not ours
		 * any more.  Before Linux 6.8 mounts cannot be told apart: the
		 * mark's path is trusted, as the journal's is.
		 */
		if (path && id >= 0 && tracefs_mount_id(path) != id)
			path = NULL;
		if (!path)
			unlink(mark);
	}
	if (path) {
		if (umount(path) == 0)
			ret = 1;
		else if (errno != EINVAL)
			ret = -1;	/* busy: in use outside swaptrace; the mark stays for a later capture */
		if (ret >= 0)
			unlink(mark);
	}
	e = errno;
	free(marked);
	if (users >= 0)
		close(users);
	errno = e;
	return ret;
}

void swt_knobs_journal_keep(struct swt_knobs *k)
{
	if (k->journal_fd < 0)
		return;
	/* for the recovery's message: not a capture killed */
	journal_append(k, "kept", k->journal_path, NULL, NULL, NULL);
	close(k->journal_fd);
	k->journal_fd = -1;
}

static void recover_note(swt_knobs_note_fn note, void *ctx, int warning, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void recover_note(swt_knobs_note_fn note, void *ctx, int warning, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	note(ctx, warning, msg);
}

static int write_file(const char *path, const char *value);

static int is_current_tracer(const char *path)
{
	size_t len = strlen(path), k = strlen("/current_tracer");

	return len >= k && !strcmp(path + len - k, "/current_tracer");
}

/* A journal record, parsed: "set PATH\tORIGINAL[\tWRITTEN]", "mkdir PATH" or "mount PATH". */
struct journal_record {
	int set;		/* 1: set, 0: mkdir or mount */
	int mount;		/* 1: mount */
	int kept;		/* 1: "kept": a live capture left the journal, not a killed one */
	int retry;		/* mkdir: the directory could not be removed; tried again later */
	int superseded;		/* set: a later record writes the same path */
	char *path, *orig, *written;	/* written NULL: an older swaptrace's record */
};

static int parse_record(char *l, struct journal_record *r)
{
	char *tab;

	memset(r, 0, sizeof(*r));
	if (!strncmp(l, "set ", 4) && (tab = strchr(l + 4, '\t'))) {
		*tab = '\0';
		r->set = 1;
		r->path = l + 4;
		r->orig = tab + 1;
		r->written = strchr(r->orig, '\t');
		if (r->written) {
			*r->written++ = '\0';
			unescape_in_place(r->written);
		}
		unescape_in_place(r->orig);
	} else if (!strncmp(l, "mkdir ", 6)) {
		r->path = l + 6;
	} else if (!strncmp(l, "mount ", 6)) {
		r->path = l + 6;
		r->mount = 1;
	} else if (!strncmp(l, "kept ", 5)) {
		r->path = l + 5;
		r->kept = 1;
	} else {
		return -1;
	}
	unescape_in_place(r->path);
	return 0;
}

/*
 * Does a setting still hold a value the dead capture wrote to it (any of
 * its records for the path: it may have died between journaling a write
 * and making it)?  One changed since is someone else's now: their own
 * tracing, started after the kill.  Records without the value written
 * (an older swaptrace's) restore as before.
 */
static int still_ours(const struct journal_record *recs, size_t n, const char *path)
{
	char *text = swt_read_text(path, NULL), *cur;
	int ours = 0, unknown = 0;

	if (!text)
		return 1;	/* gone (a device): the write says so */
	cur = swt_knob_restore_value(text);
	free(text);
	if (!cur)
		return 1;
	for (size_t i = 0; i < n; i++) {
		if (!recs[i].set || strcmp(recs[i].path, path))
			continue;
		if (!recs[i].written)
			unknown = 1;
		else if (!strcmp(recs[i].written, cur) || !strcmp(recs[i].orig, cur))
			ours = 1;
	}
	free(cur);
	return ours || unknown;
}

/*
 * Is a block device the dead capture did not enable traced now?  Then the
 * blk tracer is someone else's (started after the kill, with the value
 * ours had): current_tracer stays.
 */
static int foreign_blk_trace(const struct journal_record *recs, size_t n)
{
	static const char *const patterns[] = { "/sys/block/*/trace/enable",
						"/sys/block/*/*/trace/enable" };
	int foreign = 0;

	for (size_t p = 0; p < 2 && !foreign; p++) {
		glob_t g;

		if (glob(patterns[p], 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc && !foreign; i++) {
			char *text = swt_read_text(g.gl_pathv[i], NULL), real[PATH_MAX], ours[PATH_MAX];
			int enabled = text && atoi(text) == 1, journaled = 0;

			free(text);
			if (!enabled || !realpath(g.gl_pathv[i], real))
				continue;
			for (size_t j = 0; j < n && !journaled; j++)
				journaled = recs[j].set && realpath(recs[j].path, ours) &&
					    !strcmp(ours, real);
			foreign = !journaled;
		}
		globfree(&g);
	}
	return foreign;
}

/* A tracefs setting outside a block device's and an instance's: the blk tracer's. */
static int is_top_level(const char *path)
{
	return strncmp(path, "/sys/block/", 11) && !strstr(path, "/instances/");
}

/* Put a record back in the journal, for a later capture to replay; 0 or -errno. */
static int keep_record(FILE *f, const struct journal_record *r)
{
	size_t n;
	char *line = format_record(r->mount ? "mount" : r->set ? "set" : "mkdir", r->path, r->orig,
				   r->written, &n);
	int ret = 0;

	if (!line)
		return -ENOMEM;
	if (fwrite(line, 1, n, f) != n)
		ret = -EIO;
	free(line);
	return ret;
}

/*
 * Replay one dead capture's journal (text, modified in place), newest
 * record first.  Returns 1 when records were kept for later (the journal
 * at path then holds just those), else 0 (the caller removes it).
 */
static int replay_journal(char *text, const char *path, swt_knobs_note_fn note, void *ctx)
{
	struct journal_record *recs = NULL;
	size_t n = 0, cap = 0, knobs = 0, dirs = 0, failed = 0, changed = 0, deferred = 0;
	size_t unmounted = 0, retry = 0;
	int keep_mount = 0, kept = 0;
	char *save = NULL, *later = NULL;
	FILE *f = NULL;
	int foreign = 0;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (swt_grow((void **)&recs, &cap, n + 1, sizeof(*recs)))
			break;
		if (!parse_record(l, &recs[n]))
			n++;
	}
	/* a path written several times: its newest record restores it, once */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n && recs[i].set && !recs[i].superseded; j++)
			recs[i].superseded = recs[j].set && !strcmp(recs[j].path, recs[i].path);
	/*
	 * Someone's blk trace runs (a disk the dead capture did not enable
	 * is traced): the top-level tracer settings are theirs to use now;
	 * they are restored by a capture after that trace ends.
	 */
	for (size_t i = 0; i < n && !foreign; i++)
		foreign = recs[i].set && recs[i].written && !strcmp(recs[i].written, "blk") &&
			  is_current_tracer(recs[i].path) && foreign_blk_trace(recs, n);
	for (size_t i = n; i-- > 0;) {
		struct journal_record *r = &recs[i];
		int ret;

		if (r->kept) {
			kept = 1;
			continue;
		}
		if (r->mount) {
			/* the oldest record, so replayed last: the instances are gone */
			char dir[4096], *slash;
			int mutex, left;

			if (foreign) {
				keep_mount = 1;	/* the settings kept for later need it */
				continue;
			}
			if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir))
				dir[0] = '\0';
			slash = strrchr(dir, '/');
			if (slash)
				*slash = '\0';
			/*
			 * A running capture may use it: the last one out unmounts
			 * it.  Only the mount the mark names: without a mark it
			 * was unmounted since, and what is there now is not ours.
			 */
			mutex = swt_tracefs_mutex_lock(dir);
			left = swt_tracefs_leave(dir, -1, NULL);
			if (mutex >= 0)
				close(mutex);
			if (left == 1)
				unmounted++;
			else if (left == 2)
				recover_note(note, ctx, 0, "left tracefs mounted at '%s' (mounted by %s): "
					     "captures use it now, and the last one to end unmounts it",
					     r->path, path);
			else if (left < 0 && errno == EBUSY)
				recover_note(note, ctx, 1, "left tracefs mounted at '%s' (mounted by "
					     "%s): it is in use", r->path, path);
			continue;
		}
		if (!r->set) {
			if (rmdir(r->path) == 0) {
				dirs++;
			} else if (errno != ENOENT) {
				recover_note(note, ctx, 1, "cannot remove '%s' (left by %s): %s; the "
					     "next capture tries again", r->path, path, strerror(errno));
				failed++;
				r->retry = 1;	/* held open: once it is free, it can go */
				retry++;
			}
			continue;
		}
		if (r->superseded)
			continue;
		if (foreign && is_top_level(r->path)) {
			/* the journal keeps records oldest first, as it was written */
			deferred++;
			continue;
		}
		if (!still_ours(recs, n, r->path)) {
			recover_note(note, ctx, 1, "left '%s' as it is: someone has set it since %s "
				     "was killed", r->path, path);
			changed++;
			continue;
		}
		ret = write_file(r->path, r->orig);
		if (ret && ret != -ENOENT && ret != -ENODEV && ret != -ENXIO) {
			recover_note(note, ctx, 1, "cannot restore '%s' to '%s' (left by %s): %s",
				     r->path, r->orig, path, strerror(-ret));
			failed++;
		} else if (!ret) {
			knobs++;
		}
	}
	/* what is kept for later replaces the journal */
	if (deferred || keep_mount || retry) {
		int ret;

		if (asprintf(&later, "%s.later", path) < 0)
			later = NULL;
		f = later ? fopen(later, "we") : NULL;
		ret = f ? 0 : later ? -errno : -ENOMEM;

		for (size_t i = 0; i < n && !ret; i++)
			if (recs[i].retry || (foreign && recs[i].mount) ||
			    (foreign && recs[i].set && !recs[i].superseded && is_top_level(recs[i].path)))
				ret = keep_record(f, &recs[i]);
		/* what is left is not a killed capture's any more */
		if (!ret && retry && fprintf(f, "kept %s\n", path) < 0)
			ret = -EIO;
		if (f && fclose(f) && !ret)
			ret = -EIO;
		f = NULL;
		if (!ret && rename(later, path) < 0)
			ret = -errno;
		if (ret) {
			recover_note(note, ctx, 1, "cannot keep the records of %s for later: %s",
				     path, strerror(-ret));
			deferred = 0;
			keep_mount = 0;
			retry = 0;
		} else if (deferred) {
			recover_note(note, ctx, 1, "left the %zu top-level tracing setting(s) of %s "
				     "as they are: someone's blk trace runs (a disk it did not trace "
				     "is traced); a capture after that trace ends restores them",
				     deferred, path);
		}
	}
	if (f)
		fclose(f);
	if (later)
		unlink(later);
	free(later);
	free(recs);
	recover_note(note, ctx, 1, "a swaptrace capture %s (%s): restored %zu setting(s) and "
		     "removed %zu tracefs instance(s)%s%s%s%s",
		     kept ? "could not put everything back" : "was killed before it could clean up", path,
		     knobs, dirs, unmounted ? ", unmounted the tracefs it had mounted" : "",
		     changed ? ", and left alone those set since" : "",
		     deferred ? ", and kept the rest for later" : "",
		     failed ? ", with the errors above" : "");
	return deferred > 0 || keep_mount || retry > 0;
}

int swt_knobs_recover(const char *dir, const char *shared_lock, swt_knobs_note_fn note,
		      void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int replayed = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[4096];
		struct stat by_fd, by_name;
		char *text = NULL;
		int fd, lock_fd = -1;
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "capture-", 8) || len < 5 ||
		    strcmp(de->d_name + len - 5, ".undo"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* locked: its capture is alive.  Gone or replaced once locked: it just finished. */
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &by_fd) < 0 ||
		    stat(path, &by_name) < 0 || by_fd.st_ino != by_name.st_ino)
			goto next;
		text = swt_read_text(path, NULL);
		if (!text)
			goto next;
		if (strstr(text, "set ")) {
			lock_fd = open(shared_lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
			if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
				recover_note(note, ctx, 1, "'%s' is left by a killed capture, but a "
					     "--blktrace capture is running: not restored now", path);
				goto next;
			}
		}
		if (!replay_journal(text, path, note, ctx))
			unlink(path);
		replayed++;
next:
		free(text);
		if (lock_fd >= 0)
			close(lock_fd);
		close(fd);
	}
	closedir(d);
	return replayed;
}

static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (swt_write_all(fd, value, strlen(value)))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

static int on_tracefs(const char *path)
{
	struct statfs fs;

	return statfs(path, &fs) == 0 && fs.f_type == TRACEFS_MAGIC;
}

int swt_knobs_set(struct swt_knobs *k, const char *path, const char *value,
		  struct swt_err *err)
{
	struct swt_knob *kn = NULL;
	char *cur_text, *cur;
	int ret, same;

	cur_text = swt_read_text(path, NULL);
	if (!cur_text)
		return swt_error(err, errno == ENOENT ? SWT_ENOENT : SWT_EIO, "'%s': %s", path,
				 strerror(errno));
	cur = swt_knob_restore_value(cur_text);
	free(cur_text);
	if (!cur)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	same = !strcmp(cur, value);
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->v[i].path, path))
			kn = &k->v[i];
	if (same) {
		free(cur);
		return 0;
	}
	if (!kn) {
		if (swt_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v))) {
			free(cur);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		kn = &k->v[k->n];
		kn->path = swt_strdup(path);
		if (!kn->path) {
			free(cur);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		kn->orig = cur;
		kn->changed = 0;
		kn->on_tracefs = on_tracefs(path);
		k->n++;
	} else {
		free(cur);
	}
	/*
	 * Journaled before the write, so a kill right after it is still
	 * undone; with the value written, so that recovery leaves alone a
	 * setting someone changed after the kill.
	 */
	ret = journal_append(k, "set", path, kn->orig, value, err);
	if (ret)
		return ret;
	ret = write_file(path, value);
	if (ret)
		return swt_error(err, ret == -EACCES || ret == -EPERM ? SWT_EPERM : SWT_EIO,
				 "cannot write '%s' to '%s': %s", value, path, strerror(-ret));
	kn->changed = 1;
	/*
	 * The kernel may keep another value than the one written (a buffer
	 * size rounded up to whole pages): journaled too, as recovery will
	 * read it.
	 */
	cur_text = swt_read_text(path, NULL);
	cur = cur_text ? swt_knob_restore_value(cur_text) : NULL;
	free(cur_text);
	if (cur && strcmp(cur, value))
		ret = journal_append(k, "set", path, kn->orig, cur, err);
	free(cur);
	return ret;
}

int swt_knobs_restore(struct swt_knobs *k, struct swt_err *err)
{
	int first = 0;

	for (size_t i = k->n; i-- > 0;) {
		struct swt_knob *kn = &k->v[i];
		int ret;

		if (!kn->changed)
			continue;
		ret = write_file(kn->path, kn->orig);
		if ((ret == -ENOENT || ret == -ENODEV || ret == -ENXIO) && !kn->on_tracefs) {
			kn->changed = 0;	/* the device went away, and its setting with it */
			continue;
		}
		/* tracefs unmounted under us: the kernel keeps what we wrote (a blk tracer runs on) */
		if (ret == -ENOENT) {
			int code = swt_error(err, SWT_EIO, "cannot restore '%s' to '%s': it is gone "
					     "(tracefs unmounted while recording?); the next capture "
					     "restores it", kn->path, kn->orig);

			if (!first)
				first = code;
			continue;
		}
		if (ret) {
			int code = swt_error(err, SWT_EIO, "cannot restore '%s' to '%s': %s",
					     kn->path, kn->orig, strerror(-ret));

			if (!first)
				first = code;
			continue;
		}
		kn->changed = 0;
	}
	return first;
}
