/*
 * What a capture follows: a command it starts, a running process, the
 * tasks of a cgroup, or the whole system.
 *
 * Trace events carry no cgroup id, so following means knowing pids: the
 * command is started stopped on a pipe until tracing is ready, so its pid
 * can be put in set_event_pid before it runs (options/event-fork adds its
 * children); a process's threads are listed from /proc; a cgroup's tasks
 * are re-read every tick and new ones added.  The memory maps
 * (/proc/PID/maps) of each of the target's processes -- a command's or a
 * process's and those they started (their descendants when looked at), a
 * cgroup's -- are saved when first seen (taken again after an exec) and
 * refreshed while it runs, so the last copy is its map at the end; VMA
 * replay needs the bounds of every task that faults.  The memory cgroup's
 * limit is looked up the same way (a command may join its cgroup only
 * after it starts).
 */
#ifndef SWT_CAPTURE_TARGET_H
#define SWT_CAPTURE_TARGET_H

#include <stdint.h>
#include <sys/types.h>

#include "swaptrace/error.h"
#include "util.h"

enum swt_target_kind { SWT_TARGET_SYSTEM, SWT_TARGET_COMMAND, SWT_TARGET_PID, SWT_TARGET_CGROUP };

struct swt_target_proc {
	pid_t pid;
	char exe[256];		/* /proc/PID/exe when its start map was taken */
	char *last_maps;	/* content of the last end snapshot */
	int started;		/* start snapshot written */
	int gone;		/* not seen at the last look: its files are final */
	unsigned seen;		/* the look that last saw it */
	uint64_t start_ticks;	/* when it started (/proc/PID/stat): tells a reused pid */
	unsigned young;		/* drains left at which it is looked at again (it joined lately) */
	/* its other threads seen so far, ascending: faults carry thread ids */
	pid_t *threads;
	size_t nr_threads, cap_threads;
};

struct swt_target {
	enum swt_target_kind kind;
	pid_t child;		/* the command; 0 when none */
	int go_fd, err_fd;	/* command start handshake (ours ends) */
	int released, exited;
	int status;		/* wait status once exited */
	pid_t pid;		/* --pid */
	uint64_t pid_start;	/* its start time (clock ticks after boot): a reused pid is not it */
	char *cgroup_dir;	/* --cgroup, resolved */
	int cgroup_v2;
	struct swt_map tids;	/* tids already in set_event_pid */
	struct swt_target_proc *procs;
	size_t nr_procs, cap_procs;
	size_t nr_live;		/* of which not gone */
	unsigned look;		/* looks at the processes so far */
	unsigned pass;		/* looks and drain-time looks at joined tasks so far */
	unsigned swept_pass;	/* the last of them that retired exited processes to make room */
	int in_look;		/* within swt_target_snapshot: what it saw runs */
	char *memcg;		/* the target's memory cgroup directory, or NULL */
	int64_t mem_limit;	/* bytes, -1 unlimited or unknown */
	char *maps_dir;		/* where snapshots go */
	/* cgroup v1 memory and cgroup2 mount points, read once ("" if none) */
	char *memory_mount, *cgroup2_mount;
};

void swt_target_init(struct swt_target *t);
/* Kill nothing; close the handshake (an unreleased command exits) and reap it. */
void swt_target_release(struct swt_target *t);
/*
 * A capture that failed after starting its command: kill it (SIGKILL:
 * it ran only while the capture set up) and reap it, rather than leave it
 * running untraced once swaptrace has said the capture failed.
 */
void swt_target_abort(struct swt_target *t);
/* 1 when tid is a thread of another task's process (a signal to it reaches that process). */
int swt_task_is_thread(pid_t tid);

/* Fork the command, stopped until swt_target_start(). */
int swt_target_spawn(struct swt_target *t, char *const *argv, struct swt_err *err);
/* Let the command exec; fails when exec failed (with its reason). */
int swt_target_start(struct swt_target *t, const char *name, struct swt_err *err);
/* Check the process exists; a thread's id is taken as its process's (t->pid). */
int swt_target_attach_pid(struct swt_target *t, pid_t pid, struct swt_err *err);
/* Find the cgroup (absolute, or relative to the memory controller's mount). */
int swt_target_attach_cgroup(struct swt_target *t, const char *path, struct swt_err *err);

/*
 * The target's tids not yet followed, space-separated into buf (empty when
 * none are new); marks them followed.  Commands and processes list only at
 * the first call: event-fork follows their children.
 */
int swt_target_new_tids(struct swt_target *t, char **buf, struct swt_err *err);

/* Reap the command if it exited: 1 when it has, 0 while it runs. */
int swt_target_poll(struct swt_target *t);
/* 1 while a --pid target process still runs (not a zombie, not its pid reused). */
int swt_target_pid_alive(const struct swt_target *t);

/*
 * 1 while a task (a thread) has not exited (gone, or a zombie), and its
 * start time (clock ticks after boot, from /proc/PID/stat): start times
 * tell a task from a later one that got its pid.
 */
int swt_task_runs(pid_t tid, uint64_t *start_ticks);
/*
 * 1 while a process runs: a task of its thread group is not a zombie (a
 * main thread that called pthread_exit() is one while the others run);
 * *start_ticks its start time.  0 when it exited or is gone.
 */
int swt_proc_running(pid_t pid, uint64_t *start_ticks);

/*
 * A process and the ones it started that still run, breadth first, as a
 * space-separated list of pids (/proc/PID/task/TID/children; the caller
 * frees it).  0, or -1 with errno.
 */
int swt_process_tree(pid_t root, char **out);

/*
 * Refresh the maps snapshots of the target's processes (start when first
 * seen or after an exec, end always) and the memory cgroup limit.
 * Failures of vanished processes are not errors.  traced, when not NULL,
 * lists the tids the trace follows (set_event_pid): a command's or --pid
 * process's tasks that left its process tree (a daemon that double-forked,
 * re-parented to init) are found there, and their processes mapped too.
 */
int swt_target_snapshot(struct swt_target *t, const char *traced, struct swt_err *err);
/*
 * For a cgroup, between the once-a-second looks: map the processes of the
 * tasks that joined it (joined, as swt_target_new_tids listed them, or
 * NULL), and look again at those that joined within the last second, at
 * each call (every ring-buffer drain): a short-lived process that joined
 * and exec()ed its workload gets that program's maps.
 */
int swt_target_snapshot_joined(struct swt_target *t, const char *joined, struct swt_err *err);
/*
 * A command's memory cgroup and its limit, as they are now (not when it
 * has exited: a zombie's cgroup reads as the root).  Cheap: called at every
 * ring-buffer drain, since a command usually joins its cgroup right after
 * it starts (sh -c 'echo $$ > CG/cgroup.procs && exec WORKLOAD').
 */
void swt_target_follow_memcg(struct swt_target *t);


#endif
