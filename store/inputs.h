/*
 * Ingest inputs: capture directories, trace.dat files, blktrace file sets.
 */
#ifndef SWT_INPUTS_H
#define SWT_INPUTS_H

#include "ingest.h"

/* Decode one input into ing (as many sources as it holds). */
int swt_ingest_input(struct swt_ingest *ing, const char *input, struct swt_err *err);

/*
 * Decode the inputs in order, as swt_ingest_input() each, except that the
 * per-CPU files of one blktrace set (NAME.blktrace.N, named one by one or
 * with NAME) are read together as one source, at the first of them: named
 * NAME, as the NAME form is, when there are several.  A set's files that
 * lie beside those given but were not are named in a warning.
 */
int swt_ingest_inputs(struct swt_ingest *ing, char *const *inputs, size_t n,
		      struct swt_err *err);

/*
 * Refuse an output database path naming a file that ingesting input reads
 * (the input itself, a file of a blktrace NAME, or a capture directory's
 * trace.dat, meta.txt or blktrace files), by device and inode: the commit
 * would replace it.  0 when it does not.
 */
int swt_input_check_output(const char *input, const char *out, struct swt_err *err);

/*
 * meta.txt inside a capture directory or beside an input file, or in DIR for
 * an input in DIR/blk/; NULL if none.  Caller frees.
 */
char *swt_input_find_meta(const char *input);

/* Default capture name for an input (its directory's name).  Caller frees. */
char *swt_input_capture_name(const char *input);

#endif
