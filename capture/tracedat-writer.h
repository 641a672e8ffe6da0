/*
 * A trace-cmd trace.dat writer, file format version 6 (man 5
 * trace-cmd.dat.v6): libtracecmd 3.1.6 reads trace.dat files but declares
 * no API to write one, so capture writes it itself.
 *
 * The file holds the headers and formats a reader needs (header_page,
 * header_event, ftrace and event formats, kallsyms, printk formats, saved
 * command lines), options (UNAME, TRACECLOCK, CPUSTAT per buffer and CPU,
 * one BUFFER per instance buffer), the top-level buffer's per-CPU table
 * (always empty: capture never records there), and each instance buffer's
 * "flyrecord" table followed by its per-CPU ring-buffer pages, page
 * aligned, copied from the raw files the capture streamed them into.
 *
 * The head (everything before the first CPU's pages) is computed so that
 * the file is exactly head + the raw files in order (buffers in order,
 * CPUs ascending, each cut to whole pages); if copying fails half-way, the
 * head is kept as PATH.head and `cat PATH.head RAW... > PATH` finishes the
 * job.  When the disk has no room for a copy, SWT_TDW_MOVE_RAW moves the
 * pages instead, chunk by chunk from the end, truncating the raw files as
 * it goes, so assembling needs only the head and one chunk of free space.
 */
#ifndef SWT_CAPTURE_TRACEDAT_WRITER_H
#define SWT_CAPTURE_TRACEDAT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "swaptrace/error.h"

struct swt_tdw_blob {
	const void *data;
	size_t len;
};

struct swt_tdw_system {
	const char *name;
	const struct swt_tdw_blob *formats;	/* one per event */
	size_t nr_formats;
};

struct swt_tdw_cpu {
	const char *raw_path;	/* ring-buffer pages, a multiple of page_size; NULL: none */
	const char *stats;	/* per_cpu/cpuN/stats text for CPUSTAT; NULL: none */
};

struct swt_tdw_buffer {
	const char *name;	/* instance buffer name shown by trace-cmd */
	const struct swt_tdw_cpu *cpus;	/* ncpus entries */
};

struct swt_tdw_input {
	unsigned page_size;	/* ring-buffer sub-buffer size, bytes */
	struct swt_tdw_blob header_page, header_event;
	const struct swt_tdw_blob *ftrace_formats;
	size_t nr_ftrace_formats;
	const struct swt_tdw_system *systems;
	size_t nr_systems;
	struct swt_tdw_blob kallsyms, printk_formats, cmdlines;
	uint32_t ncpus;
	const char *uname;	/* UNAME option text; NULL: none */
	const char *trace_clock;	/* TRACECLOCK option: trace_clock file text; NULL: none */
	const struct swt_tdw_buffer *buffers;
	size_t nr_buffers;
};

#define SWT_TDW_MOVE_RAW 1u	/* move pages out of the raw files (removed) */

/*
 * Write in to path (a temporary file PATH.tmp renamed into place).  Raw
 * files are kept unless SWT_TDW_MOVE_RAW.  On a failure while copying, the
 * head is left at PATH.head (see above) and *head_kept is set; a failure
 * while moving leaves the moved pages in PATH.tmp.  Files are 0600.
 */
int swt_tracedat_write(const struct swt_tdw_input *in, const char *path, unsigned flags,
		       int *head_kept, struct swt_err *err);

#endif
