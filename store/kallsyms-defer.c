/*
 * libtraceevent's tep_parse_kallsyms, put off until an event needs it.
 *
 * libtracecmd parses a trace.dat's copy of /proc/kallsyms as it opens the
 * file: on the shared captures 5.4 MB, some 150 000 symbols, half the time
 * of opening the file and a fifth of a whole ingest.  The decoder reads
 * modelled events by their fields alone; only the text of the events it
 * does not model (event.info, where a %pS names a kernel function) needs
 * the symbols, and most captures hold none of those.
 *
 * This definition, linked into the executable, is the one libtracecmd's
 * call reaches, as printk-guard.c's is: it keeps a copy of the list and
 * returns.  swt_kallsyms_load() hands the copy to the library's own
 * function before the first such event is printed, so event.info is the
 * text it always was.  Where the symbol did not bind here (a build that
 * hides it), libtracecmd parses the list as it opens the file, and
 * swt_kallsyms_load() has nothing kept to load.
 *
 * The decoder's child process is the only caller, from one thread.
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "tracedat-layout.h"

typedef int (*parse_kallsyms_fn)(struct tep_handle *, const char *);

static char *kept;		/* the list as libtracecmd read it, until loaded */
static struct tep_handle *kept_for;

/* NULL when there is no library function past this one: parsing now is not possible either */
static parse_kallsyms_fn find_library_parse(void)
{
	static void *cache;

	return (parse_kallsyms_fn)swt_next_symbol("tep_parse_kallsyms", (void *)tep_parse_kallsyms,
						  &cache);
}

int tep_parse_kallsyms(struct tep_handle *tep, const char *buf)
{
	parse_kallsyms_fn parse = find_library_parse();
	char *copy;

	if (!parse)
		return -1;
	copy = strdup(buf);
	if (!copy)
		return parse(tep, buf);	/* now, then: no memory to wait with */
	free(kept);
	kept = copy;
	kept_for = tep;
	return 0;
}

void swt_kallsyms_load(struct tep_handle *tep)
{
	parse_kallsyms_fn parse;

	if (!kept)
		return;
	parse = find_library_parse();
	if (parse && tep == kept_for)
		parse(tep, kept);
	free(kept);
	kept = NULL;
	kept_for = NULL;
}
