/*
 * Ingest inputs: capture directories, trace.dat files, blktrace file sets.
 */
#ifndef SWT_INPUTS_H
#define SWT_INPUTS_H

#include "ingest.h"

/* Decode one input into ing (as many sources as it holds). */
int swt_ingest_input(struct swt_ingest *ing, const char *input, struct swt_err *err);

/* meta.txt inside a capture directory or beside an input file; NULL if none.  Caller frees. */
char *swt_input_find_meta(const char *input);

/* Default capture name for an input (its directory's name).  Caller frees. */
char *swt_input_capture_name(const char *input);

#endif
