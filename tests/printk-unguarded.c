/*
 * Stands in for store/printk-guard.c in test-tracedat-unguarded: a build
 * where the dynamic linker did not bind tep_register_print_string to the
 * guard (one that hides the symbol), so that the trace.dat reader's
 * fallback -- refusing a file with printk formats too short for
 * libtraceevent to read safely -- is tested, not only described.
 */
#include "tracedat-layout.h"

int swt_printk_guard_active(void)
{
	return 0;
}
