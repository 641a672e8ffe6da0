/*
 * Test helper: copy a blktrace file into the other byte order (or a chosen
 * one), record by record.  PDUs are copied untouched -- blktrace writes the
 * unplug count and remap payloads big-endian in every file.
 *
 *   blk-swap-endian IN OUT [big|little]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blktrace.h"

int main(int argc, char **argv)
{
	struct swt_blk_reader *r;
	struct swt_blk_record rec;
	struct swt_err err = { 0 };
	unsigned char out[SWT_BLK_V8_SIZE];
	FILE *f;
	int ret, be = -1;

	if (argc < 3) {
		fprintf(stderr, "usage: blk-swap-endian IN OUT [big|little]\n");
		return 2;
	}
	if (swt_blk_reader_open_file(argv[1], 0, &r, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	f = fopen(argv[2], "wb");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	while ((ret = swt_blk_reader_next(r, &rec, &err)) > 0) {
		size_t n;

		if (be < 0)
			be = argc > 3 ? !strcmp(argv[3], "big") : !swt_blk_reader_big_endian(r);
		n = swt_blk_encode(&rec, be, out);
		if (fwrite(out, 1, n, f) != n ||
		    (rec.pdu_len && fwrite(rec.pdu, 1, rec.pdu_len, f) != rec.pdu_len)) {
			perror(argv[2]);
			return 1;
		}
	}
	if (ret < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	swt_blk_reader_free(r);
	return fclose(f) ? 1 : 0;
}
