/*
 * Following the capture's target: the command handshake, tids for
 * set_event_pid, maps snapshots and the memory cgroup limit (target.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "knobs.h"
#include "target.h"

/*
 * Processes mapped at once (each look reads each one's maps), and in all
 * (a script's short commands before its workload must not use them up).
 */
#define MAX_LIVE_PROCS 64
#define MAX_MAPPED_PROCS 4096
/* a bound on meta.txt's threads line (about 8 bytes per thread) */
#define MAX_THREADS_PER_PROC 65536

void swt_target_init(struct swt_target *t)
{
	memset(t, 0, sizeof(*t));
	t->go_fd = t->err_fd = -1;
	t->mem_limit = -1;
}

void swt_target_release(struct swt_target *t)
{
	if (t->go_fd >= 0)
		close(t->go_fd);	/* an unreleased command sees EOF and exits */
	if (t->err_fd >= 0)
		close(t->err_fd);
	t->go_fd = t->err_fd = -1;
	if (t->child > 0 && !t->released && !t->exited) {
		while (waitpid(t->child, &t->status, 0) < 0 && errno == EINTR)
			;
		t->exited = 1;
	}
	for (size_t i = 0; i < t->nr_procs; i++) {
		free(t->procs[i].last_maps);
		free(t->procs[i].threads);
	}
	free(t->procs);
	free(t->cgroup_dir);
	free(t->memcg);
	free(t->maps_dir);
	free(t->memory_mount);
	free(t->cgroup2_mount);
	swt_map_release(&t->tids);
	t->procs = NULL;
	t->cgroup_dir = t->memcg = t->maps_dir = t->memory_mount = t->cgroup2_mount = NULL;
	t->nr_procs = t->cap_procs = 0;
}

void swt_target_abort(struct swt_target *t)
{
	if (t->child <= 0 || !t->released || t->exited)
		return;
	kill(t->child, SIGKILL);
	while (waitpid(t->child, &t->status, 0) < 0 && errno == EINTR)
		;
	t->exited = 1;
}

int swt_target_spawn(struct swt_target *t, char *const *argv, struct swt_err *err)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return swt_error(err, SWT_EIO, "pipe: %s", strerror(errno));
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return swt_error(err, SWT_EIO, "pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return swt_error(err, SWT_EIO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		sigset_t none;
		char c = 0;
		int e;

		close(go[1]);
		close(ex[0]);
		/*
		 * The command starts with what a shell would give it, and
		 * with a SIGHUP swaptrace was started ignoring (nohup) still
		 * ignored.
		 */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		{
			struct sigaction now;

			if (sigaction(SIGHUP, NULL, &now) < 0 || now.sa_handler != SIG_IGN)
				signal(SIGHUP, SIG_DFL);
		}
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'g')
			_exit(127);	/* the capture gave up before starting us */
		close(go[0]);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	t->kind = SWT_TARGET_COMMAND;
	t->child = pid;
	t->go_fd = go[1];
	t->err_fd = ex[0];
	return swt_map_init(&t->tids, 64) ? swt_error(err, SWT_ENOMEM, "out of memory") : 0;
}

int swt_target_start(struct swt_target *t, const char *name, struct swt_err *err)
{
	int e = 0;
	long n;

	if (swt_write_all(t->go_fd, "g", 1)) {
		int werr = errno;

		/* a Ctrl-C at the terminal reached the waiting child too, before it ran */
		if (werr == EPIPE && t->child > 0 &&
		    waitpid(t->child, &t->status, 0) == t->child) {
			t->exited = 1;
			if (WIFSIGNALED(t->status))
				return swt_error(err, SWT_EINTR, "cannot start '%s': signal %d ended "
						 "it before it ran (%s)", name, WTERMSIG(t->status),
						 strsignal(WTERMSIG(t->status)));
		}
		return swt_error(err, SWT_EIO, "cannot start '%s': %s", name, strerror(werr));
	}
	close(t->go_fd);
	t->go_fd = -1;
	t->released = 1;
	/* the pipe closes on a successful exec; a failed one sends errno */
	n = swt_read_full(t->err_fd, &e, sizeof(e));
	close(t->err_fd);
	t->err_fd = -1;
	if (n == (long)sizeof(e)) {
		while (waitpid(t->child, &t->status, 0) < 0 && errno == EINTR)
			;
		t->exited = 1;
		return swt_error(err, e == ENOENT ? SWT_ENOCMD : SWT_ENOEXEC, "cannot run '%s': %s",
				 name, strerror(e));
	}
	return 0;
}

/*
 * A process's state letter and start time (clock ticks after boot) from
 * /proc/PID/stat: 0, or -1 when it is gone.
 */
static int proc_stat(pid_t pid, char *state, uint64_t *start_ticks)
{
	char path[64], buf[1024], *p, *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* the command name may hold anything, ')' too: the fields follow the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	*state = p[2];
	p += 3;
	/* starttime is field 22; the state was field 3 */
	for (int field = 4; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	*start_ticks = strtoull(p + 1, &end, 10);
	return end == p + 1 ? -1 : 0;
}

int swt_task_runs(pid_t tid, uint64_t *start_ticks)
{
	char state;

	return !proc_stat(tid, &state, start_ticks) && state != 'Z' && state != 'X';
}

int swt_proc_running(pid_t pid, uint64_t *start_ticks)
{
	char state, path[64];
	struct dirent *de;
	int running = 0;
	DIR *d;

	if (proc_stat(pid, &state, start_ticks))
		return 0;
	if (state != 'Z' && state != 'X')
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && !running && (de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		uint64_t start;

		if (*end || tid <= 0 || tid == pid)
			continue;
		running = swt_task_runs((pid_t)tid, &start);
	}
	if (d)
		closedir(d);
	return running;
}

static pid_t tgid_of(pid_t tid);

int swt_target_attach_pid(struct swt_target *t, pid_t pid, struct swt_err *err)
{
	pid_t tgid;

	if (pid <= 0 || kill(pid, 0) < 0)
		return swt_error(err, SWT_ENOENT, "process %d: %s", (int)pid,
				 pid <= 0 ? "not a process id" : strerror(errno));
	/*
	 * A thread's id (top -H, a TID in a log) stands for its process:
	 * following the thread alone would end the recording when it exits,
	 * and would file the process's maps and threads under the thread
	 */
	tgid = tgid_of(pid);
	if (tgid > 0)
		pid = tgid;
	if (!swt_proc_running(pid, &t->pid_start))
		return swt_error(err, SWT_ENOENT, "process %d: %s", (int)pid,
				 "it has exited (a zombie its parent has not reaped)");
	t->kind = SWT_TARGET_PID;
	t->pid = pid;
	return swt_map_init(&t->tids, 64) ? swt_error(err, SWT_ENOMEM, "out of memory") : 0;
}

/*
 * The mount points, read from mountinfo once per capture: the memory cgroup
 * is followed at every drain, and the mounts do not move under a capture.
 * 0, or -1 when out of memory.
 */
static int known_mounts(struct swt_target *t)
{
	char v1[PATH_MAX], v2[PATH_MAX];

	if (t->memory_mount)
		return 0;
	swt_cgroup_mounts("/proc/self/mountinfo", v1, v2, sizeof(v1));
	t->memory_mount = swt_strdup(v1);
	t->cgroup2_mount = swt_strdup(v2);
	if (t->memory_mount && t->cgroup2_mount)
		return 0;
	free(t->memory_mount);
	free(t->cgroup2_mount);
	t->memory_mount = t->cgroup2_mount = NULL;
	return -1;
}

static int is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int has_file(const char *dir, const char *name)
{
	char *path;
	int ok;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return 0;
	ok = access(path, F_OK) == 0;
	free(path);
	return ok;
}

int swt_target_attach_cgroup(struct swt_target *t, const char *path, struct swt_err *err)
{
	char v1[PATH_MAX], v2[PATH_MAX], cand[2 * PATH_MAX];
	const char *found = NULL;

	swt_cgroup_mounts("/proc/self/mountinfo", v1, v2, sizeof(v1));
	if (path[0] == '/' && is_dir(path)) {
		found = path;
	} else {
		const char *roots[] = { v1, v2 };

		for (size_t i = 0; i < 2 && !found; i++) {
			if (!roots[i][0])
				continue;
			snprintf(cand, sizeof(cand), "%s/%s", roots[i], path);
			if (is_dir(cand))
				found = cand;
		}
	}
	if (!found)
		return swt_error(err, SWT_ENOENT, "cgroup '%s': no such cgroup (looked under '%s' and '%s')",
				 path, v1[0] ? v1 : "-", v2[0] ? v2 : "-");
	if (!has_file(found, "cgroup.procs"))
		return swt_error(err, SWT_ENOENT, "'%s' is not a cgroup directory", found);
	t->kind = SWT_TARGET_CGROUP;
	t->cgroup_dir = swt_strdup(found);
	t->cgroup_v2 = !has_file(found, "tasks");
	if (!t->cgroup_dir || swt_map_init(&t->tids, 256))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	if (has_file(found, "memory.limit_in_bytes") || has_file(found, "memory.max"))
		t->memcg = swt_strdup(found);
	return 0;
}

/*
 * The next id of a list of pids or tids, as /proc, cgroup files and the
 * lists built here separate them (spaces, newlines), moving *p past it;
 * anything else is skipped.  0 at the end of the list.
 */
static long next_id(const char **p)
{
	const char *s = *p;

	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s) {
			s++;
			continue;
		}
		s = end;
		if (v > 0) {
			*p = s;
			return v;
		}
	}
	*p = s;
	return 0;
}

/* Append the ids of a list not yet in t->tids. */
static int add_new(struct swt_target *t, const char *list, char **buf, size_t *len, size_t *cap)
{
	const char *p = list;
	long v;

	while ((v = next_id(&p))) {
		uint64_t dummy;

		if (swt_map_get(&t->tids, (uint64_t)v, 0, &dummy))
			continue;
		if (swt_map_put(&t->tids, (uint64_t)v, 0, 1) ||
		    swt_grow((void **)buf, cap, *len + 24, 1))
			return -SWT_ENOMEM;
		*len += (size_t)sprintf(*buf + *len, "%s%ld", *len ? " " : "", v);
	}
	return 0;
}

static int list_dir_numbers(const char *dir, char **out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t len = 0, cap = 0;
	char *buf = NULL;

	*out = NULL;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (swt_grow((void **)&buf, &cap, len + strlen(de->d_name) + 2, 1)) {
			closedir(d);
			free(buf);
			return -1;
		}
		len += (size_t)sprintf(buf + len, "%s ", de->d_name);
	}
	closedir(d);
	*out = buf ? buf : swt_strdup("");
	return *out ? 0 : -1;
}

/* --pid follows them: event-fork only sees forks from now on. */
int swt_process_tree(pid_t root, char **out)
{
	size_t len = 0, cap = 0;
	char *list = NULL;
	const char *next;
	long pid;
	int ret = -1;

	*out = NULL;
	if (swt_grow((void **)&list, &cap, 32, 1))
		return -1;
	len = (size_t)sprintf(list, "%d ", (int)root);
	for (next = list; (pid = next_id(&next));) {
		char path[96], *tasks = NULL;
		const char *t;
		long tid;

		snprintf(path, sizeof(path), "/proc/%ld/task", pid);
		if (list_dir_numbers(path, &tasks)) {
			if (pid == root)
				goto out;	/* the target itself is gone */
			continue;	/* a child that exited meanwhile */
		}
		for (t = tasks; (tid = next_id(&t));) {
			char *kids;

			snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", pid, tid);
			kids = swt_read_text(path, NULL);
			if (kids && *kids) {
				size_t at = (size_t)(next - list);

				if (swt_grow((void **)&list, &cap, len + strlen(kids) + 2, 1)) {
					free(kids);
					free(tasks);
					errno = ENOMEM;
					goto out;
				}
				next = list + at;
				len += (size_t)sprintf(list + len, "%s%s", kids,
						       kids[strlen(kids) - 1] == ' ' ? "" : " ");
			}
			free(kids);
		}
		free(tasks);
	}
	*out = list;
	list = NULL;
	ret = 0;
out:
	free(list);
	return ret;
}

int swt_target_new_tids(struct swt_target *t, char **buf, struct swt_err *err)
{
	size_t len = 0, cap = 0;
	char *list = NULL, path[PATH_MAX + 64];
	int ret = 0;

	*buf = NULL;
	switch (t->kind) {
	case SWT_TARGET_COMMAND:
		snprintf(path, sizeof(path), "%d", (int)t->child);
		ret = add_new(t, path, buf, &len, &cap);
		break;
	case SWT_TARGET_PID: {
		char *tree = NULL;

		if (t->tids.len)
			break;	/* event-fork follows what they start */
		if (swt_process_tree(t->pid, &tree))
			return swt_error(err, SWT_ENOENT, "process %d: %s", (int)t->pid,
					 strerror(errno));
		/* every thread of the process and of the children it already has */
		const char *p = tree;
		long pid;

		while (!ret && (pid = next_id(&p))) {
			snprintf(path, sizeof(path), "/proc/%ld/task", pid);
			if (list_dir_numbers(path, &list))
				continue;	/* exited meanwhile */
			ret = add_new(t, list, buf, &len, &cap);
			free(list);
			list = NULL;
		}
		free(tree);
		break;
	}
	case SWT_TARGET_CGROUP:
		snprintf(path, sizeof(path), "%s/%s", t->cgroup_dir,
			 t->cgroup_v2 ? "cgroup.threads" : "tasks");
		list = swt_read_text(path, NULL);
		if (!list) {
			snprintf(path, sizeof(path), "%s/cgroup.procs", t->cgroup_dir);
			list = swt_read_text(path, NULL);
		}
		if (!list)
			return swt_error(err, SWT_ENOENT, "cgroup '%s': %s", t->cgroup_dir,
					 strerror(errno));
		ret = add_new(t, list, buf, &len, &cap);
		break;
	default:
		break;
	}
	free(list);
	if (ret) {
		free(*buf);
		*buf = NULL;
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	return 0;
}

int swt_target_poll(struct swt_target *t)
{
	pid_t r;

	if (!t->child || t->exited)
		return t->child ? 1 : 0;
	r = waitpid(t->child, &t->status, WNOHANG);
	if (r == t->child) {
		t->exited = 1;
		return 1;
	}
	return 0;
}

int swt_target_pid_alive(const struct swt_target *t)
{
	uint64_t start;

	/* an exited process stays a zombie until its parent reaps it; then its pid may be reused */
	return t->pid > 0 && swt_proc_running(t->pid, &start) && start == t->pid_start;
}

/* The memory cgroup directory of a process, from /proc/PID/cgroup; caller frees. */
static char *memcg_of(struct swt_target *t, pid_t pid)
{
	char path[64];

	if (known_mounts(t))
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	return swt_memcg_dir(path, t->memory_mount, t->cgroup2_mount);
}

static void retire(struct swt_target *t, struct swt_target_proc *p)
{
	p->gone = 1;
	free(p->last_maps);
	p->last_maps = NULL;
	t->nr_live--;
}

/*
 * Room for a process that appeared while MAX_LIVE_PROCS were live: those
 * that have exited since the last look are retired now, not at this
 * look's end, or a workload that replaces its processes faster than the
 * looks would have its new ones mapped a look late, or never.  Once per
 * pass (a look, or a drain's look at joined tasks), as it reads the stat
 * of every process the pass has not seen.
 */
static int make_room(struct swt_target *t)
{
	if (t->nr_live < MAX_LIVE_PROCS)
		return 1;
	if (t->swept_pass == t->pass)
		return 0;
	t->swept_pass = t->pass;
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct swt_target_proc *p = &t->procs[i];
		uint64_t start;

		if (p->gone || (t->in_look && p->seen == t->look))
			continue;
		if (!swt_proc_running(p->pid, &start) || start != p->start_ticks)
			retire(t, p);
	}
	return t->nr_live < MAX_LIVE_PROCS;
}

/* The entry of a process mapped (live or gone), or NULL: no side effect. */
static struct swt_target_proc *find_proc(struct swt_target *t, pid_t pid)
{
	for (size_t i = 0; i < t->nr_procs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

static struct swt_target_proc *proc_entry(struct swt_target *t, pid_t pid)
{
	struct swt_target_proc *p = find_proc(t, pid);

	if (p) {
		if (p->seen != t->look) {
			uint64_t start = p->start_ticks;
			char state;

			if (p->gone) {
				if (!make_room(t))
					return NULL;
				p->gone = 0;
				t->nr_live++;
			}
			/*
			 * The pid again, after a look without it or not: the same
			 * process, or a new one that reused it since
			 */
			if (!proc_stat(pid, &state, &start) && start != p->start_ticks) {
				/* its maps and threads start afresh, as after an exec */
				p->start_ticks = start;
				p->started = 0;
				p->nr_threads = 0;
			}
		}
		p->seen = t->look;
		return p;
	}
	if (t->nr_procs >= MAX_MAPPED_PROCS || !make_room(t) ||
	    swt_grow((void **)&t->procs, &t->cap_procs, t->nr_procs + 1, sizeof(*t->procs)))
		return NULL;
	p = &t->procs[t->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->seen = t->look;
	{
		char state;

		if (proc_stat(pid, &state, &p->start_ticks))
			p->start_ticks = 0;	/* gone: snapshot_proc finds nothing */
	}
	t->nr_live++;
	return p;
}

/*
 * Written beside and renamed over: a write that fails (disk full) leaves
 * the file as it was, never cut short under the name meta.txt points to.
 */
static int write_private(const char *path, const char *text, size_t len)
{
	char tmp[4096 + 8];
	int fd, ret = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.part", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (swt_write_all(fd, text, len))
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* Where tid is or would go in p's threads (ascending). */
static size_t thread_slot(const struct swt_target_proc *p, pid_t tid)
{
	size_t lo = 0, hi = p->nr_threads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->threads[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Note the threads of p other than itself, so that ingest can give each
 * thread's faults the process's maps.  A thread that starts and ends
 * between two looks is missed here; ingest finds its process in its
 * task:task_newtask event, which the trace holds.
 */
static int note_threads(struct swt_target_proc *p, struct swt_err *err)
{
	char path[64], *tasks = NULL;
	const char *next;
	long tid;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	if (list_dir_numbers(path, &tasks))
		return 0;	/* exited meanwhile */
	for (next = tasks; (tid = next_id(&next));) {
		size_t lo;

		if (tid == p->pid)
			continue;
		lo = thread_slot(p, (pid_t)tid);
		if (lo < p->nr_threads && p->threads[lo] == tid)
			continue;
		if (p->nr_threads >= MAX_THREADS_PER_PROC)
			break;
		if (swt_grow((void **)&p->threads, &p->cap_threads, p->nr_threads + 1,
			     sizeof(*p->threads))) {
			free(tasks);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		memmove(p->threads + lo + 1, p->threads + lo, (p->nr_threads - lo) * sizeof(*p->threads));
		p->threads[lo] = (pid_t)tid;
		p->nr_threads++;
	}
	free(tasks);
	return 0;
}

/* The program a process runs (/proc/PID/exe): 0, or -1 when gone or a kernel thread. */
static int exe_of(pid_t pid, char *exe, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, size - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	return 0;
}

static int snapshot_proc(struct swt_target *t, pid_t pid, struct swt_err *err)
{
	struct swt_target_proc *p = proc_entry(t, pid);
	char path[PATH_MAX], exe[256];
	char *maps;
	size_t len = 0;
	int ret;

	if (!p)
		return 0;	/* enough processes mapped */
	if (exe_of(pid, exe, sizeof(exe)))
		return 0;	/* gone, or a kernel thread */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = swt_read_text(path, &len);
	if (!maps || !len) {
		free(maps);
		return 0;	/* exited meanwhile: keep the last snapshot */
	}
	ret = note_threads(p, err);
	if (ret) {
		free(maps);
		return ret;
	}
	if (!p->started || strcmp(p->exe, exe)) {
		/* its start is the first look at the program it runs now */
		snprintf(path, sizeof(path), "%s/%d-start.txt", t->maps_dir, (int)pid);
		ret = write_private(path, maps, len);
		if (ret) {
			free(maps);
			return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(-ret));
		}
		snprintf(p->exe, sizeof(p->exe), "%s", exe);
		p->started = 1;
		free(p->last_maps);
		p->last_maps = NULL;
	}
	if (p->last_maps && !strcmp(p->last_maps, maps)) {
		free(maps);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%d-end.txt", t->maps_dir, (int)pid);
	ret = write_private(path, maps, len);
	if (ret) {
		/* not taken as written: the next snapshot writes it again */
		free(maps);
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(-ret));
	}
	free(p->last_maps);
	p->last_maps = maps;
	return 0;
}

/*
 * Drains (100 ms at most apart) at which a process that joined a followed
 * cgroup is looked at again: the second until the next look, when it
 * joined in a shell that exec()s its workload next.
 */
#define YOUNG_DRAINS 10

int swt_target_snapshot_joined(struct swt_target *t, const char *joined, struct swt_err *err)
{
	const char *next = joined ? joined : "";
	long tid;
	int ret = 0;

	if (t->kind != SWT_TARGET_CGROUP)
		return 0;
	t->pass++;
	/*
	 * The young ones first: the joined are made young below, and looked at
	 * once now.  Only an exec() is looked for (the next look refreshes
	 * their end maps): a readlink, where the maps cost a read of each line.
	 */
	for (size_t i = 0; !ret && i < t->nr_procs; i++) {
		struct swt_target_proc *p = &t->procs[i];
		char exe[sizeof(p->exe)];

		if (p->gone || !p->young)
			continue;
		p->young--;
		if (p->started && !exe_of(p->pid, exe, sizeof(exe)) && !strcmp(exe, p->exe))
			continue;
		ret = snapshot_proc(t, p->pid, err);
	}
	while (!ret && (tid = next_id(&next))) {
		pid_t tgid = tgid_of((pid_t)tid);
		struct swt_target_proc *p;
		int joined_now;

		if (!tgid)
			continue;
		p = find_proc(t, tgid);
		/* a new process, or its pid again; not another thread of one mapped */
		joined_now = !p || p->gone;
		ret = snapshot_proc(t, tgid, err);
		p = find_proc(t, tgid);	/* the table may have moved */
		if (!ret && joined_now && p && !p->gone)
			p->young = YOUNG_DRAINS;
	}
	return ret;
}

/* A process that has exited and waits to be reaped: its /proc/PID/cgroup says the root. */
static int is_zombie(pid_t pid)
{
	uint64_t start;

	return !swt_proc_running(pid, &start);
}

void swt_target_follow_memcg(struct swt_target *t)
{
	char *cg;

	if (t->kind != SWT_TARGET_COMMAND || !t->released || t->exited || is_zombie(t->child))
		return;
	cg = memcg_of(t, t->child);
	if (!cg)
		return;
	/*
	 * An exiting task is moved to the root cgroup before /proc shows it
	 * a zombie: the root after another cgroup is that, not a move.
	 */
	if (t->memcg && (!strcmp(cg, t->memcg) || (cg[0] && cg[strlen(cg) - 1] == '/'))) {
		free(cg);
		return;
	}
	free(t->memcg);
	t->memcg = cg;
	t->mem_limit = swt_memcg_effective_limit(t->memcg);
}

/* The process of a task, from /proc/TID/status (which threads have too); 0 if gone. */
static pid_t tgid_of(pid_t tid);

int swt_task_is_thread(pid_t tid)
{
	pid_t tgid = tgid_of(tid);

	return tgid > 0 && tgid != tid;
}

static pid_t tgid_of(pid_t tid)
{
	char path[64], *status, *line;
	long tgid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	status = swt_read_text(path, NULL);
	line = status ? strstr(status, "\nTgid:") : NULL;
	if (line)
		tgid = strtol(line + 6, NULL, 10);
	free(status);
	return tgid > 0 && tgid <= INT32_MAX ? (pid_t)tgid : 0;
}

/* Whether tid is a thread of a mapped process that a look at /proc listed. */
static int known_thread(const struct swt_target *t, pid_t tid)
{
	for (size_t i = 0; i < t->nr_procs; i++) {
		const struct swt_target_proc *p = &t->procs[i];
		size_t lo = thread_slot(p, tid);

		if (lo < p->nr_threads && p->threads[lo] == tid)
			return 1;
	}
	return 0;
}

/* Whether pid is in a list next_id reads. */
static int listed(const char *list, pid_t pid)
{
	const char *p = list;
	long v;

	while ((v = next_id(&p)))
		if (v == pid)
			return 1;
	return 0;
}

/*
 * The processes of traced tasks outside the process tree (listed in tree,
 * or NULL), each once.  Not swaptrace itself, which forked the command.
 */
static int snapshot_outside(struct swt_target *t, const char *tree, const char *traced,
			    struct swt_err *err)
{
	pid_t *done = NULL;
	size_t n = 0, cap = 0;
	long tid;
	int ret = 0;

	for (const char *p = traced ? traced : ""; !ret && (tid = next_id(&p));) {
		pid_t tgid;
		size_t k;

		if ((tree && listed(tree, (pid_t)tid)) || known_thread(t, (pid_t)tid))
			continue;	/* a process of the tree or a thread seen: mapped already */
		tgid = tgid_of((pid_t)tid);
		if (!tgid || tgid == getpid() || (tree && listed(tree, tgid)))
			continue;
		for (k = 0; k < n && done[k] != tgid; k++)
			;
		if (k < n)
			continue;
		if (swt_grow((void **)&done, &cap, n + 1, sizeof(*done))) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			break;
		}
		done[n++] = tgid;
		ret = snapshot_proc(t, tgid, err);
	}
	free(done);
	return ret;
}

/*
 * Processes this look did not see have exited (or left the cgroup): their
 * files are final, and they no longer count against MAX_LIVE_PROCS.
 */
static void retire_unseen(struct swt_target *t)
{
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct swt_target_proc *p = &t->procs[i];

		if (!p->gone && p->seen != t->look)
			retire(t, p);
	}
}

int swt_target_snapshot(struct swt_target *t, const char *traced, struct swt_err *err)
{
	char path[PATH_MAX + 32], *list = NULL;
	long pid;
	int ret = 0;

	t->look++;
	t->pass++;
	t->in_look = 1;

	switch (t->kind) {
	case SWT_TARGET_COMMAND:
	case SWT_TARGET_PID: {
		pid_t root = t->kind == SWT_TARGET_COMMAND ? t->child : t->pid;

		/*
		 * The process and those it started: VMA replay wants the map of
		 * every task that faults (sh -c 'a & b; wait' faults in three).
		 */
		if (t->kind == SWT_TARGET_COMMAND && (!t->released || t->exited))
			root = 0;
		if (root > 0 && !swt_process_tree(root, &list)) {
			for (const char *p = list; !ret && (pid = next_id(&p));)
				ret = snapshot_proc(t, (pid_t)pid, err);
		}	/* else gone: the last maps stay */
		ret = ret ? ret : snapshot_outside(t, list, traced, err);
		free(list);
		list = NULL;
		if (t->kind == SWT_TARGET_COMMAND)
			swt_target_follow_memcg(t);
		else if (!t->memcg)
			t->memcg = memcg_of(t, t->pid);
		break;
	}
	case SWT_TARGET_CGROUP:
		snprintf(path, sizeof(path), "%s/cgroup.procs", t->cgroup_dir);
		list = swt_read_text(path, NULL);
		for (const char *p = list ? list : ""; !ret && (pid = next_id(&p));) {
			ret = snapshot_proc(t, (pid_t)pid, err);
			if (!t->memcg)
				t->memcg = memcg_of(t, (pid_t)pid);
		}
		free(list);
		break;
	default:
		break;
	}
	t->in_look = 0;
	if (!ret)
		retire_unseen(t);
	if (t->memcg) {
		int64_t limit = swt_memcg_effective_limit(t->memcg);

		if (limit >= 0 || t->mem_limit < 0)
			t->mem_limit = limit;
	}
	return ret;
}
