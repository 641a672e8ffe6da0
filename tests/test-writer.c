/*
 * The bulk row writer (store/writer.c) driven directly, with allocation
 * failures injected: malloc is wrapped at link time (-Wl,--wrap=malloc, see
 * CMakeLists.txt) so that a test can refuse the writer's chunk-sized
 * allocations, which nothing else in these code paths asks for.
 */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "store.h"

/* allocations of at least this many bytes fail while it is non-zero */
static size_t fail_from;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

void *__wrap_malloc(size_t size)
{
	if (fail_from && size >= fail_from)
		return NULL;
	return __real_malloc(size);
}

/*
 * No second chunk can be allocated: the writer waits for the one it handed
 * to its thread and fills it again (it once lost its current chunk and
 * dereferenced NULL in the next call), and every row arrives.
 */
TEST(chunk_allocation_fails)
{
	struct swt_err err = { 0 };
	struct swt_store *st = NULL;
	struct swt_writer *w = NULL;
	char path[64];
	const int64_t rows = 30000;	/* over three chunks of 64-byte records */

	snprintf(path, sizeof(path), "/tmp/swt-test-writer-%d.db", (int)getpid());
	CHECK_INT(swt_store_create(path, &st, &err), 0);
	if (!st)
		return;
	CHECK_INT(swt_writer_start(st, &w, &err), 0);
	if (!w) {
		swt_store_destroy(st);
		return;
	}
	fail_from = 256 * 1024;
	for (int64_t i = 0; i < rows; i++) {
		struct swt_row_fault f = { .id = i + 1, .ts = i, .cpu = 0, .pid = 1,
					   .address = 4096 * i, .ip = SWT_NULL, .error_code = SWT_NULL };
		int ret = swt_writer_put(w, SWT_ROW_FAULT, &f);

		if (ret) {
			CHECK_INT(ret, 0);
			break;
		}
	}
	CHECK_INT(swt_writer_sync(w), 0);
	fail_from = 0;
	CHECK_INT(swt_store_query_int(st, "SELECT count(*) FROM fault", -1), rows);
	CHECK_INT(swt_writer_finish(w, &err), 0);
	swt_store_destroy(st);
}

CHECK_MAIN
