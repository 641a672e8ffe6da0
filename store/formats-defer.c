/*
 * libtraceevent's tep_parse_event, put off until an event is met.
 *
 * libtracecmd parses every event format a trace.dat holds as it opens the
 * file: on the shared captures some 2 300 formats of 101 systems, 80 ms,
 * a seventh of a whole ingest, where a swap capture's records use a dozen
 * of them.  While the decoder opens a file (swt_formats_defer), this
 * definition, linked into the executable as kallsyms-defer.c's is, keeps
 * a copy of each format and returns; swt_formats_load() parses
 * the formats of an event id when the decoder first meets a record of it,
 * so libtraceevent holds exactly what it would have held for every event
 * the file uses.
 *
 * Parsed at once, as before: the ftrace system's formats (libtracecmd looks
 * some of them up by name as it opens the file, and one parsed event gives
 * libtraceevent the common fields it reads a record's type with), a format
 * with no readable id, and every format outside the decoder's opening.  A
 * lookup by name or by record that reaches this file (libtracecmd's, or a
 * later version's) parses what it may need first.  Where the symbols did
 * not bind here (a build that hides them), libtracecmd parses every format
 * as it opens the file and nothing is kept.
 *
 * A format libtraceevent refuses is refused when its event is met, not
 * when the file is opened: one that no record uses no longer matters.
 *
 * The decoder's child process is the only caller, from one thread.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "tracedat-layout.h"

typedef enum tep_errno (*parse_event_fn)(struct tep_handle *, const char *, unsigned long,
					  const char *);
typedef struct tep_event *(*find_by_name_fn)(struct tep_handle *, const char *, const char *);
typedef struct tep_event *(*find_by_record_fn)(struct tep_handle *, struct tep_record *);

#define NO_ID (-1)

struct kept_format {
	char *text;		/* the format as libtracecmd read it */
	unsigned long size;
	char *system;
	char name[64];		/* its "name:" line, "" when unreadable */
	int id;
	int next_same_id;	/* index in kept, or NO_ID */
	int parsed;
};

static struct {
	int active;			/* between swt_formats_defer(1) and (0) */
	struct tep_handle *tep;		/* the handle the formats were kept for */
	struct kept_format *kept;
	size_t nr_kept, cap_kept;
	int first_of_id[UINT16_MAX + 1];	/* index + 1 in kept; 0: none */
	size_t nr_unparsed;
} defer;

void *swt_next_symbol(const char *name, void *ours, void **cache)
{
	if (!*cache)
		*cache = dlsym(RTLD_NEXT, name);
	/* no library function past ours: nothing to defer to */
	return *cache != ours ? *cache : NULL;
}

static parse_event_fn library_parse(void)
{
	static void *cache;

	return (parse_event_fn)swt_next_symbol("tep_parse_event", (void *)tep_parse_event, &cache);
}

/* The number on the format's "ID: " line, or NO_ID. */
static int format_id(const char *text, unsigned long size)
{
	const char *p = text, *end = text + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if (line_end - p > 4 && !memcmp(p, "ID: ", 4)) {
			long id = 0;

			for (const char *q = p + 4; q < line_end; q++) {
				if (*q < '0' || *q > '9' || id > UINT16_MAX)
					return NO_ID;
				id = id * 10 + (*q - '0');
			}
			return id <= UINT16_MAX ? (int)id : NO_ID;
		}
		p = line_end + 1;
	}
	return NO_ID;
}

static void format_name(const char *text, unsigned long size, char *name, size_t cap)
{
	const char *nl;

	name[0] = '\0';
	if (size < 6 || memcmp(text, "name: ", 6))
		return;
	nl = memchr(text + 6, '\n', size - 6);
	if (nl && (size_t)(nl - (text + 6)) < cap) {
		memcpy(name, text + 6, (size_t)(nl - (text + 6)));
		name[nl - (text + 6)] = '\0';
	}
}

static void parse_kept(size_t i)
{
	struct kept_format *k = &defer.kept[i];
	parse_event_fn parse = library_parse();

	if (k->parsed)
		return;
	k->parsed = 1;
	defer.nr_unparsed--;
	if (parse)
		parse(defer.tep, k->text, k->size, k->system);
	free(k->text);
	k->text = NULL;
}

static void parse_all_kept(void)
{
	for (size_t i = 0; i < defer.nr_kept && defer.nr_unparsed; i++)
		parse_kept(i);
}

enum tep_errno tep_parse_event(struct tep_handle *tep, const char *buf, unsigned long size,
			       const char *sys)
{
	parse_event_fn parse = library_parse();
	struct kept_format *k;
	int id;

	if (!parse)
		return TEP_ERRNO__READ_FORMAT_FAILED;
	if (!defer.active || (defer.tep && tep != defer.tep) || !sys || !strcmp(sys, "ftrace") ||
	    (id = format_id(buf, size)) == NO_ID)
		return parse(tep, buf, size, sys);
	if (defer.nr_kept == defer.cap_kept) {
		size_t cap = defer.cap_kept ? 2 * defer.cap_kept : 256;
		struct kept_format *grown = realloc(defer.kept, cap * sizeof(*grown));

		if (!grown)
			return parse(tep, buf, size, sys);	/* now, then: no memory to wait with */
		defer.kept = grown;
		defer.cap_kept = cap;
	}
	k = &defer.kept[defer.nr_kept];
	memset(k, 0, sizeof(*k));
	k->text = malloc(size ? size : 1);
	k->system = strdup(sys);
	if (!k->text || !k->system) {
		free(k->text);
		free(k->system);
		return parse(tep, buf, size, sys);
	}
	memcpy(k->text, buf, size);
	k->size = size;
	k->id = id;
	format_name(buf, size, k->name, sizeof(k->name));
	/* formats sharing an id (a damaged file) are parsed together, in file order */
	k->next_same_id = NO_ID;
	if (defer.first_of_id[id]) {
		size_t j = (size_t)defer.first_of_id[id] - 1;

		while (defer.kept[j].next_same_id != NO_ID)
			j = (size_t)defer.kept[j].next_same_id;
		defer.kept[j].next_same_id = (int)defer.nr_kept;
	} else {
		defer.first_of_id[id] = (int)defer.nr_kept + 1;
	}
	defer.tep = tep;
	defer.nr_kept++;
	defer.nr_unparsed++;
	return TEP_ERRNO__SUCCESS;
}

struct tep_event *tep_find_event_by_name(struct tep_handle *tep, const char *sys,
					 const char *name)
{
	static void *cache;
	find_by_name_fn find = (find_by_name_fn)swt_next_symbol(
		"tep_find_event_by_name", (void *)tep_find_event_by_name, &cache);

	if (!find)
		return NULL;
	if (tep == defer.tep && defer.nr_unparsed)
		for (size_t i = 0; i < defer.nr_kept; i++)
			if (!defer.kept[i].parsed && (!name || !defer.kept[i].name[0] ||
						      !strcmp(defer.kept[i].name, name)) &&
			    (!sys || !strcmp(defer.kept[i].system, sys)))
				parse_kept(i);
	return find(tep, sys, name);
}

struct tep_event *tep_find_event_by_record(struct tep_handle *tep, struct tep_record *record)
{
	static void *cache;
	find_by_record_fn find = (find_by_record_fn)swt_next_symbol(
		"tep_find_event_by_record", (void *)tep_find_event_by_record, &cache);

	if (!find)
		return NULL;
	if (tep == defer.tep && defer.nr_unparsed) {
		int type = tep_data_type(tep, record);

		if (type >= 0 && type <= UINT16_MAX)
			swt_formats_load(tep, type);
		else
			parse_all_kept();
	}
	return find(tep, record);
}

void swt_formats_defer(int on)
{
	defer.active = on;
}

void swt_formats_opened(struct tep_handle *tep)
{
	/* libtraceevent reads a record's type with the common fields of an event it holds */
	if (tep == defer.tep && defer.nr_unparsed && tep_get_events_count(tep) == 0)
		parse_kept(0);
}

void swt_formats_load(struct tep_handle *tep, int id)
{
	if (tep != defer.tep || !defer.nr_unparsed || id < 0 || id > UINT16_MAX)
		return;
	for (int i = defer.first_of_id[id] - 1; i != NO_ID; i = defer.kept[i].next_same_id)
		parse_kept((size_t)i);
}

void swt_formats_release(void)
{
	for (size_t i = 0; i < defer.nr_kept; i++) {
		free(defer.kept[i].text);
		free(defer.kept[i].system);
	}
	free(defer.kept);
	memset(&defer, 0, sizeof(defer));
}
