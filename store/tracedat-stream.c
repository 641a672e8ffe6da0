/*
 * Decompressing one trace.dat CPU's pages a chunk at a time (see
 * tracedat-stream.h).  The data of a compressed CPU is a u32 chunk count,
 * then per chunk a u32 compressed size, a u32 decompressed size and the
 * compressed bytes, in the file's byte order; each chunk decompresses to
 * whole ring-buffer pages.  Only zstd, the one this trace-cmd writes, is
 * taken: a zlib file (older trace-cmd builds) is left to libtracecmd, as
 * there is no way to make one here to test a reader against.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "tracedat-stream.h"
#include "util.h"

/* far above what trace-cmd writes (it compresses about 10 pages at a time) */
#define MAX_CHUNK_BYTES (64u << 20)

struct swt_td_stream {
	int fd;
	const char *buffer;
	uint32_t cpu;
	int big_endian;
	ZSTD_DCtx *zstd;
	uint32_t page_size;
	uint32_t nr_chunks, next_chunk;
	uint64_t next_off, end_off;	/* file offsets: next chunk header, end of the data */
	uint64_t chunk_base;		/* decompressed offset of the current chunk */
	uint8_t *in, *out;
	size_t in_cap, out_cap;
	uint32_t out_len, pos;		/* bytes in out, next page in out */
};

int swt_td_stream_supported(const struct swt_td_layout *l)
{
	return !strcmp(l->compression, "zstd") && l->page_size > 0;
}

static uint32_t get32(const struct swt_td_stream *s, const uint8_t *p)
{
	return s->big_endian ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
			     : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static int read_at(const struct swt_td_stream *s, void *buf, size_t len, uint64_t off,
		   const char *what, struct swt_err *err)
{
	ssize_t n = pread(s->fd, buf, len, (off_t)off);

	if (n == (ssize_t)len)
		return 0;
	return swt_error(err, n < 0 ? SWT_EIO : SWT_EFORMAT,
			 "buffer '%s' CPU %u: cannot read %s at offset %llu: %s", s->buffer, s->cpu,
			 what, (unsigned long long)off, n < 0 ? strerror(errno) : "the file ends first");
}

int swt_td_stream_open(int fd, const struct swt_td_layout *l,
		       const struct swt_td_buffer *buf, const struct swt_td_cpu *cpu,
		       struct swt_td_stream **out, struct swt_err *err)
{
	struct swt_td_stream *s = calloc(1, sizeof(*s));
	uint8_t head[4];
	int ret;

	*out = NULL;
	if (!s)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	s->fd = fd;
	s->buffer = buf->name[0] ? buf->name : "top level";
	s->cpu = cpu->cpu;
	s->big_endian = l->big_endian;
	s->page_size = l->page_size;
	if (!swt_td_stream_supported(l)) {
		ret = swt_error(err, SWT_EFORMAT, "unknown compression '%s'", l->compression);
		goto fail;
	}
	if (!(s->zstd = ZSTD_createDCtx())) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto fail;
	}
	/* as the layout reader walked it: the declared size counts the chunks after the count */
	s->next_off = cpu->offset + 4;
	s->end_off = cpu->offset + 4 + cpu->size;
	if (cpu->size) {
		ret = read_at(s, head, sizeof(head), cpu->offset, "the chunk count", err);
		if (ret)
			goto fail;
		s->nr_chunks = get32(s, head);
	}
	*out = s;
	return 0;
fail:
	swt_td_stream_free(s);
	return ret;
}

static int load_chunk(struct swt_td_stream *s, struct swt_err *err)
{
	uint64_t at = s->next_off;
	uint8_t head[8];
	uint32_t csize, usize;
	int ret;

	if (at + 8 > s->end_off)
		return swt_error(err, SWT_EFORMAT,
				 "buffer '%s' CPU %u: chunk %u header at offset %llu lies outside "
				 "the CPU data", s->buffer, s->cpu, s->next_chunk,
				 (unsigned long long)at);
	ret = read_at(s, head, sizeof(head), at, "a chunk header", err);
	if (ret)
		return ret;
	csize = get32(s, head);
	usize = get32(s, head + 4);
	if (csize > s->end_off - at - 8 || usize > MAX_CHUNK_BYTES || !usize)
		return swt_error(err, SWT_EFORMAT,
				 "buffer '%s' CPU %u: chunk %u at offset %llu declares %u "
				 "compressed and %u decompressed bytes, which cannot be", s->buffer,
				 s->cpu, s->next_chunk, (unsigned long long)at, csize, usize);
	/* a partial last page is padded out to a whole one for kbuffer */
	if (swt_grow((void **)&s->in, &s->in_cap, csize ? csize : 1, 1) ||
	    swt_grow((void **)&s->out, &s->out_cap,
		     ((size_t)usize + s->page_size - 1) / s->page_size * s->page_size, 1))
		return swt_error(err, SWT_ENOMEM, "out of memory");
	ret = read_at(s, s->in, csize, at + 8, "a compressed chunk", err);
	if (ret)
		return ret;
	{
		size_t got = ZSTD_decompressDCtx(s->zstd, s->out, usize, s->in, csize);

		if (ZSTD_isError(got) || got != usize)
			return swt_error(err, SWT_EFORMAT,
					 "buffer '%s' CPU %u: chunk %u at offset %llu does not "
					 "decompress to its %u bytes (zstd: %s)", s->buffer,
					 s->cpu, s->next_chunk, (unsigned long long)at, usize,
					 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
	}
	memset(s->out + usize, 0, s->out_cap - usize);
	s->chunk_base += s->out_len;	/* as libtracecmd numbers them: the sizes before it */
	s->out_len = usize;
	s->pos = 0;
	s->next_off = at + 8 + csize;
	s->next_chunk++;
	return 0;
}

int swt_td_stream_next_page(struct swt_td_stream *s, void **page, uint64_t *offset,
			    struct swt_err *err)
{
	while (s->pos >= s->out_len) {
		int ret;

		if (s->next_chunk >= s->nr_chunks)
			return 0;
		ret = load_chunk(s, err);
		if (ret)
			return ret;
	}
	*page = s->out + s->pos;
	*offset = s->chunk_base + s->pos;
	s->pos += s->page_size;
	return 1;
}

void swt_td_stream_free(struct swt_td_stream *s)
{
	if (!s)
		return;
	ZSTD_freeDCtx(s->zstd);
	free(s->in);
	free(s->out);
	free(s);
}
