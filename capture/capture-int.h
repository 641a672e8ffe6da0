/*
 * What the capture files share: the capture's state (struct swt_capture)
 * and the helpers capture.c (setting up, recording, restoring) and
 * capture-write.c (meta.txt and trace.dat) both use.  Private to
 * capture/.
 */
#ifndef SWT_CAPTURE_INT_H
#define SWT_CAPTURE_INT_H

#include <stdint.h>
#include <sys/utsname.h>

#include <tracefs.h>

#include "blktracer.h"
#include "capture.h"
#include "hostinfo.h"
#include "knobs.h"
#include "probes.h"
#include "swaps.h"
#include "target.h"

struct reader {
	struct tracefs_cpu *tcpu;
	int fd;			/* per_cpu/cpuN/trace_pipe_raw, ours so it can be polled */
	int out_fd;
	char *raw_path;
	uint64_t bytes;
};

struct inst {
	const char *buffer;	/* its name in trace.dat */
	char name[64];		/* tracefs instance name */
	struct tracefs_instance *ti;
	int created;		/* made by us: remove it */
	unsigned buffer_kb;
	struct reader *r;	/* ncpus */
	char **stats;		/* per-CPU stats text at the end */
	char *clock;		/* trace_clock file text */
};

struct saved_event {
	char *system, *name, *format;
};

struct swt_capture {
	struct swt_capture_opts o;
	char *out_dir, *raw_dir, *maps_dir, *blk_dir, *reserve;
	int reserve_made;	/* ours to remove: made by reserve_head_room */
	int made_dir;
	char *tracing_dir;
	char *blk_clock;	/* --blktrace: the top-level trace_clock to record with */
	int mounted;
	int tracefs_users;	/* shared lock held while tracefs is used (swt_tracefs_users_join) */
	int new_swap_said;	/* a swap area turned on while recording was reported */
	int follow_failed_said;	/* a cgroup's new tasks could not be followed: reported */
	unsigned ncpus, subbuf;
	long page_size;
	struct swt_knobs knobs;
	struct inst task, block;
	struct swt_blktracer *blk;
	int64_t *blk_lost;	/* per CPU, kept when the session ends */
	unsigned blk_buffer_kb;	/* top-level buffer per CPU --blktrace records into */
	struct swt_swap_area *swaps;
	size_t nr_swaps;
	uint32_t *devs;
	const char **disks;
	size_t nr_devs;
	char *swaps_start, *swaps_end;
	struct swt_vmstat before, after;
	struct swt_probe_plan plan;
	struct tracefs_dynevent *probes[SWT_PROBES_MAX];
	size_t nr_probes;
	int probe_lock;
	char probes_line[512];
	/* oom:mark_victim recorded: "all" victims, "followed" (only kills a followed task made), NULL: not */
	const char *oom_victims;
	struct swt_target target;
	/*
	 * The command's tasks when its instance went, with their start times
	 * (signal_command): a task that exited since may have its pid reused.
	 */
	struct command_task {
		pid_t tid;
		uint64_t start;
	} *command_tasks;
	size_t nr_command_tasks;
	int command_tasks_taken;
	char *command;
	char *header_page, *header_event;
	struct saved_event *ftrace, *events;
	size_t nr_ftrace, cap_ftrace, nr_events, cap_events;
	char *kallsyms, *printk, *cmdlines;
	size_t kallsyms_len;
	struct utsname uts;
	int64_t page_cluster, vma_ra, mem_total_kib;
	char lru_gen[24];	/* /sys/kernel/mm/lru_gen/enabled, "absent", or "" unreadable */
	uint64_t t_start, t_stop;	/* monotonic ns */
	int recording, stopped, forwarded, created;
	int meta_written, meta_has_exit;	/* meta.txt, and whether it holds the command's end */
	enum swt_capture_end end;
	uint64_t data_bytes;
	unsigned stop_seen;
};

void capture_note(struct swt_capture *c, int warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Events lost on a CPU over all buffers and the blk tracer. */
int64_t capture_lost_on_cpu(const struct swt_capture *c, unsigned cpu);

/*
 * End the recording (when it ran) and put the host back; idempotent.
 * capture.c.
 */
int capture_stop_and_restore(struct swt_capture *c, struct swt_err *err);

/* capture-write.c */
int capture_write_meta(struct swt_capture *c, struct swt_err *err);
int capture_write_tracedat(struct swt_capture *c, struct swt_err *err);

#endif
