/*
 * swaptrace readahead policy ABI.
 *
 * A policy decides, on each swap fault that misses the (simulated) swap
 * cache, which other pages to read with the faulting one.  Built-in
 * policies and plugins use this same struct; a plugin is a shared object
 * exporting
 *
 *	const struct swt_policy swt_policy_plugin = { .abi_version = SWT_POLICY_ABI, ... };
 *
 * loaded with `swaptrace replay --policy ./libmine.so[:key=val,...]`.
 * New members are only ever appended, with SWT_POLICY_ABI raised; the
 * engine accepts any plugin whose abi_version it knows.  See
 * samples/policy-template.c for a copy-me plugin.
 *
 * swaptrace loads the plugin into its own process to read the struct, so
 * its constructors and destructors run there: they are first tried in a
 * child process, and a plugin whose loading or unloading crashes, exits
 * or stops its process (SIGSTOP, or SIGTSTP left to its default action)
 * is refused.  Its functions run only in child processes; what they print
 * to stdout goes to swaptrace's stderr, so that --json stays JSON.
 */
#ifndef SWAPTRACE_POLICY_H
#define SWAPTRACE_POLICY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWT_POLICY_ABI 1
#define SWT_POLICY_SYMBOL "swt_policy_plugin"

/* The highest page-cluster replayed: windows of 65 536 pages (the kernel takes up to 31). */
#define SWT_MAX_PAGE_CLUSTER 16

/* What a window lists. */
enum swt_window_kind {
	SWT_WINDOW_SLOTS = 1,	/* swap slots on the faulting swap area (cluster readahead) */
	SWT_WINDOW_VPAGES,	/* virtual page numbers of the faulting task (VMA readahead) */
};

/* swt_fault_info.flags */
enum {
	SWT_FAULT_ROTATIONAL = 1 << 0,		/* the faulting area's device is rotational */
	SWT_FAULT_SYNCHRONOUS = 1 << 1,		/* ... is synchronous (zram, pmem, brd) */
	SWT_FAULT_ANY_ROTATIONAL = 1 << 2,	/* some swap area is rotational */
	SWT_FAULT_VMA_RA_ENABLED = 1 << 3,	/* /sys/kernel/mm/swap/vma_ra_enabled was true */
	SWT_FAULT_VPAGE_KNOWN = 1 << 4,		/* vpage (and the VMA bounds) are valid */
	SWT_FAULT_HIT = 1 << 5,			/* a hit: on_miss asked at a hit (SWT_POLICY_READS_AT_HITS) */
	/*
	 * The fault is on a shared mapping ('s' in the capture's maps: shmem,
	 * tmpfs, memfd, SysV shm), which the kernel swaps in by cluster
	 * readahead whatever vma_ra_enabled says.  Set in on_miss and on_hit
	 * faults (with SWT_FAULT_VPAGE_KNOWN); unset where no maps were
	 * recorded.
	 */
	SWT_FAULT_SHARED = 1 << 6,
};

/* A swap fault, as the policy sees it. */
struct swt_fault_info {
	uint64_t time_ns;	/* trace clock */
	uint64_t slot;		/* faulting slot */
	uint64_t area_slots;	/* slots in the faulting area (slot 0 is the header) */
	uint64_t vpage;		/* faulting virtual page number (address / page size) */
	uint64_t vma_start;	/* the VMA holding vpage: [vma_start, vma_end) in pages */
	uint64_t vma_end;
	uint32_t area;		/* swap area index */
	uint32_t nr_areas;
	int32_t pid;		/* the faulting process (its threads share it), -1 unknown */
	uint32_t page_cluster;	/* this run's page-cluster, 0..SWT_MAX_PAGE_CLUSTER */
	uint32_t flags;
	uint32_t page_shift;	/* log2 of the page size */
};

/*
 * The pages a policy wants read.  The engine fills list and capacity, which
 * the policy must not change (the replay fails if it does); capacity is
 * 1 << page_cluster entries, and never fewer than 64.  The policy writes
 * up to capacity entries in ascending order (slots or virtual pages, per
 * kind; the replay fails on a count past capacity or an entry below the
 * one before) and sets count, and records in size the window it decided
 * on (the readahead window-size histogram counts it).  The faulting
 * page may be listed or not: it is always read.  The engine reads only
 * listed pages that are swapped out and not already cached, as the kernel
 * does (a page listed twice is read once), and marks all but the faulting
 * page as readahead.  A kind other than enum swt_window_kind's fails the
 * replay.
 */
struct swt_window {
	uint32_t kind;		/* enum swt_window_kind */
	uint32_t count;
	uint32_t capacity;
	uint32_t size;		/* pages */
	uint64_t *list;
};

/* Services the engine offers a policy instance. */
struct swt_policy_env {
	uint32_t page_cluster;
	uint32_t nr_areas;
	uint32_t page_shift;
	uint32_t flags;		/* SWT_FAULT_ANY_ROTATIONAL, SWT_FAULT_VMA_RA_ENABLED */
	/*
	 * Faults from now until the page at (area, slot) is next faulted, or
	 * UINT64_MAX when it never is: the future, for oracle policies.
	 */
	uint64_t (*faults_until_use)(const struct swt_policy_env *env, uint32_t area, uint64_t slot);
	/* The same for a virtual page of a task. */
	uint64_t (*faults_until_vpage_use)(const struct swt_policy_env *env, int32_t pid,
					   uint64_t vpage);
	/*
	 * How many faults an unused readahead page read now is expected to
	 * stay cached: the simulated inactive list turning over.
	 */
	uint64_t (*readahead_lifetime)(const struct swt_policy_env *env);
	void *engine;		/* the engine's, not the policy's */
};

/* A parameter a policy accepts, with its default and a one-line help. */
struct swt_policy_param {
	const char *key;
	const char *default_value;
	const char *help;
};

/* swt_policy.flags */
enum {
	SWT_POLICY_ORACLE = 1 << 0,	/* reads only pages a fault will use: the engine keeps
					 * its readahead pages cached until then */
	/*
	 * on_miss is asked at hits too, with SWT_FAULT_HIT in the fault's
	 * flags: the faulting page is cached already, and what the window
	 * lists beside it is read ahead (the window-size histogram counts
	 * misses only).  The kernel reads ahead at misses only; this is for
	 * bounds, which must not be beaten by a policy whose extra misses open
	 * windows.
	 */
	SWT_POLICY_READS_AT_HITS = 1 << 1,
};

struct swt_policy {
	uint32_t abi_version;	/* SWT_POLICY_ABI */
	uint32_t flags;
	const char *name;
	const char *summary;	/* one line */
	const struct swt_policy_param *params;	/* terminated by a { NULL } entry; may be NULL */

	/*
	 * Make an instance for one replay.  keys/values hold the parameters
	 * given (already checked against params, defaults filled in).  Return
	 * NULL and write a one-line reason into err on failure.  It is also
	 * called once when the policy is chosen, before any replay (for a
	 * plugin in a child process, with page_cluster 3, one area and no
	 * engine services), so that refused values are a usage error up front.
	 * A plugin's create() therefore runs once more than there are
	 * replays, each call in a process of its own (the trial's instance
	 * is destroyed there): what it does outside its process, such as
	 * writing a file, happens that once more too.  The trial cannot be
	 * one of the replays: it comes before the capture is read, when no
	 * replay's env is known, and a replay's instance must be made in
	 * that replay's process, where a crash fails that replay alone.
	 */
	void *(*create)(const struct swt_policy_env *env, const char *const *keys,
			const char *const *values, unsigned nparams, char *err, size_t errlen);
	void (*destroy)(void *inst);

	/*
	 * A fault missed the cache (or hit it, with SWT_POLICY_READS_AT_HITS):
	 * list the pages to read.  0, or negative to abort.
	 */
	int (*on_miss)(void *inst, const struct swt_fault_info *fault, struct swt_window *win);

	/* A fault hit a page this policy read ahead (may be NULL). */
	void (*on_hit)(void *inst, const struct swt_fault_info *fault);
};

#ifdef __cplusplus
}
#endif

#endif
