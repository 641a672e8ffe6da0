/*
 * Ingest inputs: capture directories, trace.dat files, blktrace file sets.
 */
#ifndef SWT_INPUTS_H
#define SWT_INPUTS_H

#include "ingest.h"

/* Decode one input into ing (as many sources as it holds). */
int swt_ingest_input(struct swt_ingest *ing, const char *input, struct swt_err *err);

/*
 * Refuse an output database path naming a file that ingesting input reads
 * (the input itself, a file of a blktrace NAME, or a capture directory's
 * trace.dat, meta.txt or blktrace files), by device and inode: the commit
 * would replace it.  0 when it does not.
 */
int swt_input_check_output(const char *input, const char *out, struct swt_err *err);

/* meta.txt inside a capture directory or beside an input file; NULL if none.  Caller frees. */
char *swt_input_find_meta(const char *input);

/* Default capture name for an input (its directory's name).  Caller frees. */
char *swt_input_capture_name(const char *input);

#endif
