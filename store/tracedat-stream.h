/*
 * The ring-buffer pages of one compressed trace.dat CPU, decompressed one
 * chunk at a time (tracedat-stream.c).
 *
 * libtracecmd 3.1.6 keeps every chunk it decompresses until the file is
 * closed, so reading a compressed trace.dat through it costs memory in
 * proportion to the trace.  The decoder reads compressed data through this
 * stream instead -- one chunk per CPU in memory -- and hands the pages to
 * libtraceevent's kbuffer, as libtracecmd does.
 */
#ifndef SWT_TRACEDAT_STREAM_H
#define SWT_TRACEDAT_STREAM_H

#include <stdint.h>

#include "swaptrace/error.h"
#include "tracedat-layout.h"

struct swt_td_stream;

/* Whether the streams can decompress this file's chunks (zstd). */
int swt_td_stream_supported(const struct swt_td_layout *l);

/*
 * A stream over the compressed data of CPU `cpu` of buffer `buf`, read from
 * fd.  Messages name the buffer, CPU, chunk and file offset; the caller
 * adds the file's name.
 */
int swt_td_stream_open(int fd, const struct swt_td_layout *l,
		       const struct swt_td_buffer *buf, const struct swt_td_cpu *cpu,
		       struct swt_td_stream **out, struct swt_err *err);

/*
 * The next page: 1 with *page (page_size bytes, valid until the next call)
 * and *offset (where it starts in the CPU's decompressed data), 0 after the
 * last one, an error code naming the chunk and its file offset otherwise.
 */
int swt_td_stream_next_page(struct swt_td_stream *s, void **page, uint64_t *offset,
			    struct swt_err *err);

void swt_td_stream_free(struct swt_td_stream *s);

#endif
