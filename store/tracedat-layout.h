/*
 * What a trace.dat file declares about itself (tracedat-layout.c).
 */
#ifndef SWT_TRACEDAT_LAYOUT_H
#define SWT_TRACEDAT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "swaptrace/error.h"

#define SWT_TD_MAX_CPUS 4096

struct swt_td_cpu {
	uint32_t cpu;
	uint64_t offset, size;	/* in the file */
	uint64_t data_size;	/* uncompressed bytes of ring-buffer pages */
	int64_t read_events;	/* CPUSTAT "read events", -1 unknown */
	uint64_t entry;		/* its v7 BUFFER option entry, in the file; 0 in v6 */
};

struct swt_td_buffer {
	char *name;		/* "" for the top-level buffer */
	int compressed;
	uint64_t option;	/* its v7 BUFFER option's data, in the file; 0 in v6 */
	struct swt_td_cpu *cpus;
	size_t nr_cpus, cap_cpus;
};

struct swt_td_stat {
	char buffer[64];
	int cpu;
	int64_t read_events, overrun, dropped;
	uint64_t offset;	/* its CPUSTAT option's text, in the file */
};

/* Where an event's format is in the file, for messages about it. */
struct swt_td_format {
	char *system, *name;
	uint64_t offset;	/* its text's: in the file, or in section's decompressed data */
	uint64_t section;	/* the compressed section it is in; 0: offset is a file offset */
	int ftrace;		/* in the ftrace formats (v7 section 17), not the event formats */
};

struct swt_td_layout {
	int version, big_endian;
	unsigned long_size, page_size;
	uint64_t file_size;
	char compression[32];
	char clock[32];
	int partial;		/* compressed options: buffers not all known */
	struct swt_td_buffer *buffers;
	size_t nr_buffers, cap_buffers;
	struct swt_td_stat *stats;
	size_t nr_stats, cap_stats;
	struct swt_td_format *formats;	/* none for zlib-compressed formats */
	size_t nr_formats, cap_formats;
	char stat_buffer[64];	/* parse state: buffer the next CPUSTATs belong to */
};

/* Read and bounds-check the file's structure; release with swt_td_layout_release(). */
int swt_td_layout_read(const char *path, struct swt_td_layout *l, struct swt_err *err);
void swt_td_layout_release(struct swt_td_layout *l);

/*
 * Whether printk-guard.c's tep_register_print_string is the one libtracecmd
 * calls: then a printk format under 3 characters is read safely.
 */
int swt_printk_guard_active(void);

struct tep_handle;
/*
 * For a definition interposed on a library function (kallsyms-defer.c,
 * formats-defer.c): the library's own, found once into *cache, or NULL
 * when there is none past ours.
 */
void *swt_next_symbol(const char *name, void *ours, void **cache);
/*
 * Parse into tep the kallsyms kallsyms-defer.c kept from opening the file,
 * if it kept them (for that tep): before the first event whose text may
 * name a kernel function.  Once; later calls do nothing.
 */
void swt_kallsyms_load(struct tep_handle *tep);
/*
 * formats-defer.c: while on, the event formats libtracecmd parses are kept
 * unparsed (but the ftrace system's); swt_formats_opened() after the open
 * makes sure libtraceevent holds one; swt_formats_load() parses an event
 * id's before its first record is read; swt_formats_release() frees what
 * was never needed.
 */
void swt_formats_defer(int on);
void swt_formats_opened(struct tep_handle *tep);
void swt_formats_load(struct tep_handle *tep, int id);
void swt_formats_release(void);
/* CPUSTAT entry for a buffer's CPU, or NULL. */
const struct swt_td_stat *swt_td_layout_stat(const struct swt_td_layout *l, const char *buffer,
					     int cpu);
/* Where the format of event system:name is, or NULL (not found, or not read). */
const struct swt_td_format *swt_td_layout_format(const struct swt_td_layout *l, const char *system,
						 const char *name);

#endif
