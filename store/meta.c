/*
 * Parser for capture metadata files and --swap statements.
 *
 * The file is line oriented: "key value" facts at the top, then sections
 * introduced by "# title".  Known keys fill struct swt_meta; every line is
 * also kept verbatim as a fact so nothing the capture recorded is lost.
 * The format is documented in docs/capture-format.md; the shared captures'
 * meta.txt files are one instance of it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "meta.h"
#include "store.h"
#include "util.h"

struct swt_meta *swt_meta_alloc(void)
{
	struct swt_meta *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->page_size = m->ncpus = m->page_cluster = m->vma_ra_enabled = SWT_META_UNKNOWN;
	m->mem_total_kib = m->mem_limit_bytes = m->working_set_bytes = SWT_META_UNKNOWN;
	m->lost_events = SWT_META_UNKNOWN;
	return m;
}

static void area_release(struct swt_meta_area *a)
{
	free(a->path);
	free(a->type);
	free(a->extents);
}

void swt_meta_free(struct swt_meta *m)
{
	size_t i;

	if (!m)
		return;
	free(m->path);
	free(m->kernel);
	free(m->workload);
	free(m->command);
	free(m->clock);
	free(m->probes);
	for (i = 0; i < m->nr_areas; i++)
		area_release(&m->areas[i]);
	free(m->areas);
	for (i = 0; i < m->nr_vmstat; i++)
		free(m->vmstat[i].name);
	free(m->vmstat);
	for (i = 0; i < m->nr_facts; i++) {
		free(m->facts[i].section);
		free(m->facts[i].key);
		free(m->facts[i].value);
	}
	free(m->facts);
	free(m);
}

int64_t swt_meta_vmstat_delta(const struct swt_meta *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nr_vmstat; i++)
		if (!strcmp(m->vmstat[i].name, name))
			return m->vmstat[i].delta;
	return SWT_META_UNKNOWN;
}

int swt_meta_ended_on_error(const struct swt_meta *m)
{
	for (size_t i = 0; m && i < m->nr_facts; i++)
		if (!m->facts[i].section[0] && !strcmp(m->facts[i].key, "end") &&
		    !strcmp(m->facts[i].value, "error"))
			return 1;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int set_str(char **dst, const char *src)
{
	char *d = swt_strdup(src);

	if (!d)
		return -SWT_ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

static int add_fact(struct swt_meta *m, const char *section, const char *key,
		    const char *value, unsigned lineno)
{
	struct swt_meta_fact *f;

	if (swt_grow((void **)&m->facts, &m->cap_facts, m->nr_facts + 1, sizeof(*m->facts)))
		return -SWT_ENOMEM;
	f = &m->facts[m->nr_facts];
	f->section = swt_strdup(section);
	f->key = swt_strdup(key);
	f->value = swt_strdup(value);
	f->line = lineno;
	if (!f->section || !f->key || !f->value) {
		free(f->section);
		free(f->key);
		free(f->value);
		return -SWT_ENOMEM;
	}
	m->nr_facts++;
	return 0;
}

static struct swt_meta_area *find_area(struct swt_meta *m, const char *path, uint32_t dev)
{
	size_t i;

	for (i = 0; i < m->nr_areas; i++) {
		struct swt_meta_area *a = &m->areas[i];

		if (path && a->path && !strcmp(a->path, path))
			return a;
		if (!path && dev && a->dev == dev)
			return a;
	}
	return NULL;
}

static struct swt_meta_area *new_area(struct swt_meta *m)
{
	struct swt_meta_area *a;
	void *p = realloc(m->areas, (m->nr_areas + 1) * sizeof(*m->areas));

	if (!p)
		return NULL;
	m->areas = p;
	a = &m->areas[m->nr_areas++];
	memset(a, 0, sizeof(*a));
	a->priority = a->rotational = a->synchronous = SWT_META_UNKNOWN;
	a->slots = a->size_kib = a->used_kib = SWT_META_UNKNOWN;
	a->swap_type = -1;
	return a;
}

static struct swt_meta_vmstat *vmstat_entry(struct swt_meta *m, const char *name)
{
	struct swt_meta_vmstat *v;
	size_t i;
	void *p;

	for (i = 0; i < m->nr_vmstat; i++)
		if (!strcmp(m->vmstat[i].name, name))
			return &m->vmstat[i];
	p = realloc(m->vmstat, (m->nr_vmstat + 1) * sizeof(*m->vmstat));
	if (!p)
		return NULL;
	m->vmstat = p;
	v = &m->vmstat[m->nr_vmstat];
	v->name = swt_strdup(name);
	if (!v->name)
		return NULL;
	v->before = v->after = v->delta = SWT_META_UNKNOWN;
	v->before_line = v->after_line = v->delta_line = 0;
	m->nr_vmstat++;
	return v;
}

static int parse_bool(const char *v, int64_t *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes"))
		*out = 1;
	else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no"))
		*out = 0;
	else
		return -SWT_EUSAGE;
	return 0;
}

/*
 * A number of meta.txt (or --swap): its decimal digits, after a '-' where
 * the value may be negative.  strtoll took blanks and a '+' first, so
 * that "+3" and " 3" were 3 where maps numbers and every other reader of
 * the format take digits only.
 */
static int parse_i64_digits(const char *text, int64_t *out)
{
	const char *digits = text + (text[0] == '-');

	if (*digits < '0' || *digits > '9')
		return -SWT_EUSAGE;
	return swt_parse_i64(text, out);
}

static int parse_u64_digits(const char *text, uint64_t *out)
{
	if (*text < '0' || *text > '9')
		return -SWT_EUSAGE;
	return swt_parse_u64(text, out);
}

/* MAJ:MIN (or MAJ,MIN), digits only: swt_dev_parse's strtoul took blanks and signs */
static int parse_dev_digits(const char *text, uint32_t *dev)
{
	size_t maj = strspn(text, "0123456789"), min;

	if (!maj || (text[maj] != ':' && text[maj] != ','))
		return -SWT_EUSAGE;
	min = strspn(text + maj + 1, "0123456789");
	if (!min || text[maj + 1 + min])
		return -SWT_EUSAGE;
	return swt_dev_parse(text, dev);
}

/* "7:0" with both numbers in hex, as `stat -c %t:%T` prints them. */
static int parse_hex_dev(const char *text, uint32_t *dev)
{
	char *end;
	unsigned long maj, min;

	/* hex digits only: strtoul took blanks, signs and "0x" */
	if (text[strspn(text, "0123456789abcdefABCDEF:")] || !isxdigit((unsigned char)text[0]))
		return -SWT_EUSAGE;
	errno = 0;
	maj = strtoul(text, &end, 16);
	if (end == text || *end != ':' || errno)
		return -SWT_EUSAGE;
	text = end + 1;
	if (!isxdigit((unsigned char)text[0]))
		return -SWT_EUSAGE;
	min = strtoul(text, &end, 16);
	if (end == text || *end || errno || maj >= 4096 || min >= (1ul << 20))
		return -SWT_EUSAGE;
	*dev = swt_dev_make((uint32_t)maj, (uint32_t)min);
	return 0;
}

/* Value of key=value word "ws_mb=256" in a line, or NULL. */
static const char *word_value(const char *line, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || isspace((unsigned char)p[-1])) && p[klen] == '=') {
			size_t n = 0;

			p += klen + 1;
			while (p[n] && !isspace((unsigned char)p[n]) && n + 1 < size)
				n++;
			memcpy(buf, p, n);
			buf[n] = '\0';
			return buf;
		}
		p += klen;
	}
	return NULL;
}

/*
 * The fields a swap_device/--swap word sets, aliases counted once: a
 * statement that gives one twice is refused, not read as its last value.
 * The request limits are the disk's, which only a capture records:
 * --swap refuses them.
 */
enum area_field {
	AF_PATH, AF_TYPE, AF_DEV, AF_START, AF_ROTATIONAL, AF_SYNC, AF_PRIO, AF_SLOTS,
	AF_SIZE, AF_USED, AF_MAX_SECTORS_KB, AF_MAX_SEGMENTS,
};

static const char *const area_field_names[] = {
	[AF_PATH] = "path", [AF_TYPE] = "type", [AF_DEV] = "dev", [AF_START] = "start",
	[AF_ROTATIONAL] = "rotational", [AF_SYNC] = "sync", [AF_PRIO] = "prio",
	[AF_SLOTS] = "slots", [AF_SIZE] = "size", [AF_USED] = "used",
	[AF_MAX_SECTORS_KB] = "max_sectors_kb", [AF_MAX_SEGMENTS] = "max_segments",
};

/*
 * key=value word of a swap_device/--swap statement into an area.
 * Returns the field set (enum area_field), -SWT_EUSAGE for a bad word or
 * -SWT_ENOMEM.  *need: what the field's value must be, for the caller's
 * message on a bad one; NULL where the word itself says enough.
 */
static int area_set_word(struct swt_meta_area *a, const char *word, const char **need)
{
	const char *eq = strchr(word, '=');
	char key[32];
	const char *val;
	size_t klen;
	int64_t iv;
	uint64_t uv;
	int ret;

	*need = NULL;
	if (!eq)
		return -SWT_EUSAGE;
	klen = (size_t)(eq - word);
	if (klen >= sizeof(key))
		return -SWT_EUSAGE;
	memcpy(key, word, klen);
	key[klen] = '\0';
	val = eq + 1;
	if (!strcmp(key, "path")) {
		ret = set_str(&a->path, val);
		if (ret)
			return ret;
		swt_unescape_octal(a->path);	/* blanks as \ooo, as /proc/swaps has them */
		return AF_PATH;
	}
	if (!strcmp(key, "type") || !strcmp(key, "kind")) {
		ret = set_str(&a->type, val);
		return ret ? ret : AF_TYPE;
	}
	if (!strcmp(key, "dev")) {
		ret = parse_dev_digits(val, &a->dev);
		return ret ? ret : AF_DEV;
	}
	if (!strcmp(key, "start")) {
		if (parse_u64_digits(val, &uv))
			return -SWT_EUSAGE;
		a->start_sector = uv;
		return AF_START;
	}
	if (!strcmp(key, "rotational") || !strcmp(key, "sync") || !strcmp(key, "synchronous")) {
		if (parse_bool(val, &iv))
			return -SWT_EUSAGE;
		if (key[0] == 'r') {
			a->rotational = iv;
			return AF_ROTATIONAL;
		}
		a->synchronous = iv;
		return AF_SYNC;
	}
	if (!strcmp(key, "max_sectors_kb") || !strcmp(key, "max_segments")) {
		/*
		 * The disk's queue limits, which split read requests: replay
		 * reads them from capture_fact (the line kept verbatim) and
		 * caps them at its largest request; here only checked.
		 */
		*need = "a whole number from 1";
		if (parse_i64_digits(val, &iv) || iv < 1 || iv > INT32_MAX)
			return -SWT_EUSAGE;
		return !strcmp(key, "max_segments") ? AF_MAX_SEGMENTS : AF_MAX_SECTORS_KB;
	}
	if (parse_i64_digits(val, &iv))
		return -SWT_EUSAGE;
	if (!strcmp(key, "prio") || !strcmp(key, "priority")) {
		if (iv < SWT_MIN_SWAP_PRIO || iv > SWT_MAX_SWAP_PRIO)
			return -SWT_EUSAGE;
		a->priority = iv;
		return AF_PRIO;
	}
	if (!strcmp(key, "slots") && iv > 1) {
		a->slots = iv;
		return AF_SLOTS;
	}
	if (!strcmp(key, "size") || !strcmp(key, "size_kib")) {
		a->size_kib = iv;
		return AF_SIZE;
	}
	if (!strcmp(key, "used") || !strcmp(key, "used_kib")) {
		a->used_kib = iv;
		return AF_USED;
	}
	return -SWT_EUSAGE;
}

/*
 * A swap area's slot count from /proc/swaps' Size (KiB, excludes the header
 * page): one slot a page, of the capture's page size, 4 KiB when unknown.
 * page_size is a power of two from 512 B (parse_header_key).
 */
static int64_t slots_of_size(int64_t size_kib, int64_t page_size)
{
	if (page_size <= 0)
		page_size = 4096;
	if (page_size < 1024)
		return size_kib > (INT64_MAX - 1) / (1024 / page_size) ? INT64_MAX :
			size_kib * (1024 / page_size) + 1;
	size_kib /= page_size / 1024;
	return size_kib < INT64_MAX ? size_kib + 1 : size_kib;
}

/* "with 64 KiB pages, slots = size / 64 + 1": the rule as slots_of_size applies it */
static void slots_rule(int64_t page_size, const char *size, char *buf, size_t len)
{
	const char *given = page_size > 0 ? "" : " (no page_size given)";

	if (page_size <= 0)
		page_size = 4096;
	if (page_size < 1024)
		snprintf(buf, len, "with %lld-byte pages%s, slots = %s * %lld + 1",
			 (long long)page_size, given, size, (long long)(1024 / page_size));
	else
		snprintf(buf, len, "with %lld KiB pages%s, slots = %s / %lld + 1",
			 (long long)(page_size / 1024), given, size, (long long)(page_size / 1024));
}

static void area_fill_slots(struct swt_meta_area *a, int64_t page_size)
{
	if (a->slots == SWT_META_UNKNOWN && a->size_kib != SWT_META_UNKNOWN && a->size_kib > 0)
		a->slots = slots_of_size(a->size_kib, page_size);
}

/* 1 when an area states both slots and size and they say different things */
static int area_slots_disagree(const struct swt_meta_area *a, int64_t page_size)
{
	return a->slots != SWT_META_UNKNOWN && a->size_kib != SWT_META_UNKNOWN &&
	       (a->size_kib <= 0 || slots_of_size(a->size_kib, page_size) != a->slots);
}

static int parse_swap_device(struct swt_meta *m, char *rest, const char *name,
			     unsigned lineno, struct swt_err *err)
{
	struct swt_meta_area tmp, *a;
	char *save = NULL, *w;
	unsigned seen = 0;
	int ret = 0, field;

	memset(&tmp, 0, sizeof(tmp));
	tmp.priority = tmp.rotational = tmp.synchronous = SWT_META_UNKNOWN;
	tmp.slots = tmp.size_kib = tmp.used_kib = SWT_META_UNKNOWN;
	tmp.swap_type = m->swap_lines++;
	tmp.line = lineno;
	for (w = strtok_r(rest, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		const char *need;

		field = area_set_word(&tmp, w, &need);
		if (field == -SWT_ENOMEM) {
			ret = field;
			goto out;
		}
		if (field < 0) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: bad swap_device field "
					"'%s'%s%s", name, lineno, w, need ? ": " : "", need ? need : "");
			goto out;
		}
		/* as --swap refuses it: which of the two values was meant is not ours to guess */
		if (seen & (1u << field)) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: bad swap_device field '%s': "
					"%s= given twice", name, lineno, w, area_field_names[field]);
			goto out;
		}
		seen |= 1u << field;
	}
	if (!tmp.dev) {
		ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: swap_device without dev=", name,
				lineno);
		goto out;
	}
	a = find_area(m, tmp.path, tmp.dev);
	if (!a)
		a = new_area(m);
	if (!a) {
		ret = -SWT_ENOMEM;
		goto out;
	}
	area_release(a);
	*a = tmp;
	return 0;
out:
	area_release(&tmp);
	return ret;
}

static int parse_extent(struct swt_meta *m, char *rest, const char *name, unsigned lineno,
			struct swt_err *err)
{
	char *save = NULL, *w;
	int64_t area = -1;
	uint64_t v[3] = { 0, 0, 0 };
	int have = 0;
	struct swt_meta_area *a;
	void *p;

	for (w = strtok_r(rest, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(w, '=');
		uint64_t x;

		if (!eq || parse_u64_digits(eq + 1, &x))
			goto bad;
		*eq = '\0';
		if (!strcmp(w, "area"))
			area = (int64_t)x;
		else if (!strcmp(w, "first_slot"))
			v[0] = x, have |= 1;
		else if (!strcmp(w, "nr_slots"))
			v[1] = x, have |= 2;
		else if (!strcmp(w, "start_sector"))
			v[2] = x, have |= 4;
		else
			goto bad;
	}
	if (have != 7 || area < 0)
		goto bad;
	if ((size_t)area >= m->nr_areas)
		return swt_error(err, SWT_EFORMAT,
				 "'%s': line %u: extent area=%lld: no swap area %lld stated before it",
				 name, lineno, (long long)area, (long long)area);
	a = &m->areas[area];
	/*
	 * An area's slots map to one sector each: extents that are empty,
	 * wrap around or share slots contradict each other (and a repeated
	 * first slot would only fail later, as the database's key).  Slots
	 * past SWT_SLOT_LIMIT are refused here, naming the line, rather than
	 * by the replay of the database they would be ingested into.
	 */
	if (!v[1])
		return swt_error(err, SWT_EFORMAT, "'%s': line %u: extent of no slots (nr_slots=0)",
				 name, lineno);
	if (v[0] + v[1] < v[0])
		return swt_error(err, SWT_EFORMAT,
				 "'%s': line %u: extent slots from %llu, %llu of them: beyond what "
				 "the replay handles (2^32)", name, lineno,
				 (unsigned long long)v[0], (unsigned long long)v[1]);
	if (v[0] + v[1] > SWT_SLOT_LIMIT)
		return swt_error(err, SWT_EFORMAT,
				 "'%s': line %u: extent slots %llu-%llu: beyond what the replay "
				 "handles (2^32)", name, lineno, (unsigned long long)v[0],
				 (unsigned long long)(v[0] + v[1] - 1));
	/* extents come in slot order from capture: only others need the scan */
	for (size_t i = 0; v[0] < a->extents_end && i < a->nr_extents; i++) {
		const struct swt_meta_extent *e = &a->extents[i];

		if (v[0] < e->first_slot + e->nr_slots && e->first_slot < v[0] + v[1])
			return swt_error(err, SWT_EFORMAT,
					 "'%s': line %u: extent slots %llu-%llu overlap an earlier "
					 "extent's of area %lld", name, lineno,
					 (unsigned long long)v[0], (unsigned long long)(v[0] + v[1] - 1),
					 (long long)area);
	}
	p = realloc(a->extents, (a->nr_extents + 1) * sizeof(*a->extents));
	if (!p)
		return -SWT_ENOMEM;
	a->extents = p;
	a->extents[a->nr_extents].first_slot = v[0];
	a->extents[a->nr_extents].nr_slots = v[1];
	a->extents[a->nr_extents].start_sector = v[2];
	a->nr_extents++;
	a->extents_end = SWT_MAX(a->extents_end, v[0] + v[1]);
	return 0;
bad:
	return swt_error(err, SWT_EFORMAT,
			 "'%s': line %u: extent needs area=N first_slot=N nr_slots=N start_sector=N",
			 name, lineno);
}

/*
 * "/dev/loop0  partition  1048572  60  5".  Used is kept as the capture
 * began (the walk of write-frees.c counts the trace's swap-outs on top of
 * it): a row at the end gives it only where nothing earlier did (the older
 * form has no start copy).
 */
static int parse_proc_swaps_row(struct swt_meta *m, char *line, const char *name,
				unsigned lineno, int at_end, struct swt_err *err)
{
	char *word[5], *save = NULL, *w;
	int64_t size, used, prio;
	struct swt_meta_area *a;
	int n = 0;

	for (w = strtok_r(line, " \t", &save); w && n < 5; w = strtok_r(NULL, " \t", &save))
		word[n++] = w;
	if (n < 5)
		return 0;	/* not a row; kept as a fact only */
	/* the kernel's digits: sscanf's %lld took a '+' ("+1048572" was the size) */
	if (parse_i64_digits(word[2], &size) || size < 0 || parse_i64_digits(word[3], &used) ||
	    used < 0 || parse_i64_digits(word[4], &prio))
		return swt_error(err, SWT_EFORMAT, "'%s': line %u: bad /proc/swaps row: expected "
				 "Filename Type Size Used Priority, numbers in digits", name, lineno);
	if (prio < SWT_MIN_SWAP_PRIO || prio > SWT_MAX_SWAP_PRIO)
		return swt_error(err, SWT_EFORMAT, "'%s': line %u: bad /proc/swaps row: priority "
				 "%lld is outside %d..%d", name, lineno, (long long)prio,
				 SWT_MIN_SWAP_PRIO, SWT_MAX_SWAP_PRIO);
	a = find_area(m, word[0], 0);
	if (!a) {
		a = new_area(m);
		if (!a || set_str(&a->path, word[0]) || set_str(&a->type, word[1]))
			return -SWT_ENOMEM;
		a->size_kib = size;
		a->priority = prio;
	}
	if (!at_end || a->used_kib == SWT_META_UNKNOWN)
		a->used_kib = used;
	return 0;
}

/* A workload size in MiB: digits, a fraction's too (strtod took '+', blanks, hex and "inf") */
static int is_decimal(const char *text)
{
	size_t whole = strspn(text, "0123456789");

	if (!whole)
		return 0;
	if (text[whole] == '.')
		return text[whole + 1] && !text[whole + 1 + strspn(text + whole + 1, "0123456789")];
	return !text[whole];
}

/* workload sizes in MiB: at most 2^42, so that their bytes fit an int64_t */
#define MAX_MB 4398046511104.0

static int parse_header_key(struct swt_meta *m, const char *key, char *value,
			    const char *name, unsigned lineno, struct swt_err *err)
{
	int64_t iv;
	char buf[64];

	if (!strcmp(key, "kernel"))
		return set_str(&m->kernel, value);
	if (!strcmp(key, "workload")) {
		static const char *const sizes[] = { "ws_mb", "limit_mb" };
		double mb;

		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			if (word_value(value, sizes[k], buf, sizeof(buf)) && !is_decimal(buf))
				return swt_error(err, SWT_EFORMAT, "'%s': line %u: bad value '%s' "
						 "for %s", name, lineno, buf, sizes[k]);
		/* the range first: converting a double out of int64_t's is undefined */
		if (word_value(value, "ws_mb", buf, sizeof(buf)) && !swt_parse_double(buf, &mb) &&
		    mb >= 0 && mb < MAX_MB)
			m->working_set_bytes = (int64_t)(mb * 1048576.0);
		if (m->mem_limit_bytes == SWT_META_UNKNOWN &&
		    word_value(value, "limit_mb", buf, sizeof(buf)) && !swt_parse_double(buf, &mb) &&
		    mb >= 0 && mb < MAX_MB)
			m->mem_limit_bytes = (int64_t)(mb * 1048576.0);
		return set_str(&m->workload, value);
	}
	if (!strcmp(key, "command"))
		return set_str(&m->command, value);
	if (!strcmp(key, "clock"))
		return set_str(&m->clock, value);
	if (!strcmp(key, "probes"))
		return set_str(&m->probes, value);
	if (!strcmp(key, "swap_device"))
		return parse_swap_device(m, value, name, lineno, err);
	if (!strcmp(key, "extent"))
		return parse_extent(m, value, name, lineno, err);
	if (!strcmp(key, "swap_unmapped")) {
		/* an area with no block device still takes its swap type */
		m->swap_lines++;
		return 0;
	}
	if (!strcmp(key, "vma_ra_enabled")) {
		if (parse_bool(value, &iv))
			goto bad;
		m->vma_ra_enabled = iv;
		return 0;
	}
	if (!strcmp(key, "page_cluster") || !strcmp(key, "page_size") || !strcmp(key, "ncpus") ||
	    !strcmp(key, "mem_total_kib") || !strcmp(key, "mem_limit_bytes")) {
		if (parse_i64_digits(value, &iv) || iv < 0)
			goto bad;
		if (!strcmp(key, "page_cluster")) {
			/*
			 * vm.page-cluster is at most 31 (mm/swap.c): a larger
			 * one, read back as an int, was another value (2^32 + 3
			 * replayed as 3)
			 */
			if (iv > 31)
				goto bad;
			m->page_cluster = iv;
		}
		else if (!strcmp(key, "page_size")) {
			/*
			 * Swap pages are counted in 512-byte sectors per page: a
			 * size that is not a power of two of at least a sector
			 * would make that zero or fractional (and every swap
			 * page count a division by zero).
			 */
			if (iv < 512 || iv > (1 << 30) || (iv & (iv - 1)))
				goto bad;
			m->page_size = iv;
		}
		else if (!strcmp(key, "ncpus"))
			m->ncpus = iv;
		else if (!strcmp(key, "mem_total_kib"))
			m->mem_total_kib = iv;
		else
			m->mem_limit_bytes = iv;
		return 0;
	}
	return 0;	/* unknown keys are facts only */
bad:
	return swt_error(err, SWT_EFORMAT, "'%s': line %u: bad value '%s' for %s", name, lineno,
			 value, key);
}

/*
 * The line of an earlier KEY at the top of the file, if KEY holds one value
 * that ingest reads (a repeated one replaced the first, silently), else 0.
 */
static unsigned earlier_single_key(const struct swt_meta *m, const char *key)
{
	static const char *const single[] = {
		"kernel", "workload", "command", "clock", "probes", "vma_ra_enabled", "lru_gen",
		"page_cluster",
		"page_size", "ncpus", "mem_total_kib", "mem_limit_bytes", "end",
	};
	size_t k;

	for (k = 0; k < sizeof(single) / sizeof(single[0]); k++)
		if (!strcmp(key, single[k]))
			break;
	if (k == sizeof(single) / sizeof(single[0]))
		return 0;
	for (size_t i = 0; i < m->nr_facts; i++)
		if (!m->facts[i].section[0] && !strcmp(m->facts[i].key, key))
			return m->facts[i].line;
	return 0;
}

int swt_meta_parse_stream(struct swt_meta *m, FILE *f, const char *name, struct swt_err *err)
{
	char section[256] = "", *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int lost_section = 0, ret = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) >= 0) {
		char *s, *key, *value;
		unsigned first;

		lineno++;
		if (memchr(line, '\0', (size_t)len)) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: not a text file", name,
					lineno);
			goto out;
		}
		s = trim(line);
		if (!*s)
			continue;
		if (s[0] == '#') {
			snprintf(section, sizeof(section), "%s", trim(s + 1));
			lost_section = !strcmp(section, "lost events");
			if (lost_section && m->lost_events == SWT_META_UNKNOWN)
				m->lost_events = 0;
			continue;
		}
		key = s;
		value = s + strcspn(s, " \t");
		if (*value)
			*value++ = '\0';
		value = trim(value);
		if (!section[0] && (first = earlier_single_key(m, key))) {
			ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: %s given twice (first on "
					"line %u)", name, lineno, key, first);
			goto out;
		}
		ret = add_fact(m, section, key, value, lineno);
		if (ret)
			goto out;

		if (!strcmp(key, "dev")) {
			/* "dev /dev/loop0 7:0 rotational=1", numbers in hex */
			char path[4096], num[64], rot[64] = "", extra[2] = "";
			struct swt_meta_area *a;
			uint32_t dev;
			int64_t r = SWT_META_UNKNOWN;

			/* a rotational=7 or a fourth word was ignored: auto took the disk as unknown */
			if (sscanf(value, "%4095s %63s %63s %1s", path, num, rot, extra) < 2 ||
			    parse_hex_dev(num, &dev) || extra[0] ||
			    (rot[0] && (strncmp(rot, "rotational=", 11) || parse_bool(rot + 11, &r)))) {
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: bad dev line (\"dev "
						"PATH MAJ:MIN [rotational=0|1]\", numbers in hex)",
						name, lineno);
				goto out;
			}
			a = find_area(m, path, 0);
			if (a && a->dev_line) {
				/* the later line had won, silently */
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: dev line for '%s' "
						"given twice (first on line %u)", name, lineno, path,
						a->dev_line);
				goto out;
			}
			if (!a) {
				a = new_area(m);
				if (!a || set_str(&a->path, path)) {
					ret = -SWT_ENOMEM;
					goto out;
				}
			}
			a->dev = dev;
			a->dev_line = lineno;
			if (rot[0])
				a->rotational = r;
			continue;
		}
		if (!section[0] || !strcmp(key, "swap_device") || !strcmp(key, "extent")) {
			ret = parse_header_key(m, key, value, name, lineno, err);
			if (ret)
				goto out;
			continue;
		}
		if (!strncmp(section, "/proc/swaps", 11)) {
			if (strcmp(key, "Filename")) {
				char row[8192];

				snprintf(row, sizeof(row), "%s %s", key, value);
				ret = parse_proc_swaps_row(m, row, name, lineno,
							   strstr(section, "at end") != NULL, err);
				if (ret)
					goto out;
			}
			continue;
		}
		if (!strncmp(section, "vmstat", 6)) {
			struct swt_meta_vmstat *v;
			unsigned *given;
			int64_t n;

			/* INT64_MIN is SWT_META_UNKNOWN: no counter's value */
			if (parse_i64_digits(value, &n) || n == SWT_META_UNKNOWN) {
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: bad vmstat value '%s'",
						name, lineno, value);
				goto out;
			}
			v = vmstat_entry(m, key);
			if (!v) {
				ret = -SWT_ENOMEM;
				goto out;
			}
			given = strstr(section, "before") ? &v->before_line :
				strstr(section, "after") ? &v->after_line : &v->delta_line;
			/* which of two values the counter had is not ours to guess */
			if (*given) {
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: vmstat %s given twice "
						"in '# %s' (first on line %u)", name, lineno, key,
						section, *given);
				goto out;
			}
			*given = lineno;
			if (strstr(section, "before"))
				v->before = n;
			else if (strstr(section, "after"))
				v->after = n;
			else
				v->delta = n;
			/*
			 * after - before out of int64_t's range was undefined (and
			 * as INT64_MIN, no delta at all)
			 */
			if (v->delta == SWT_META_UNKNOWN && v->before != SWT_META_UNKNOWN &&
			    v->after != SWT_META_UNKNOWN &&
			    (__builtin_sub_overflow(v->after, v->before, &v->delta) ||
			     v->delta == SWT_META_UNKNOWN)) {
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: vmstat %s: after - "
						"before (%lld - %lld) is out of range", name, lineno,
						key, (long long)v->after, (long long)v->before);
				goto out;
			}
			continue;
		}
		if (lost_section) {
			int64_t n;

			/*
			 * "cpuN COUNT": a damaged count was skipped, the events it
			 * lost uncounted; a line of another key was counted as lost
			 */
			if (strncmp(key, "cpu", 3) || !key[3] || strspn(key + 3, "0123456789") !=
			    strlen(key + 3)) {
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: lost events line "
						"'%s' is not \"cpuN COUNT\"", name, lineno, key);
				goto out;
			}
			if (parse_i64_digits(value, &n) || n < 0) {
				ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: bad lost events count "
						"'%s'", name, lineno, value);
				goto out;
			}
			m->lost_events = swt_add_sat(m->lost_events, n);
			continue;
		}
	}
	if (ferror(f)) {
		ret = swt_error(err, SWT_EIO, "'%s': read error", name);
		goto out;
	}
	/* once the whole file is read: page_size may come after the areas */
	for (size_t i = 0; i < m->nr_areas; i++) {
		struct swt_meta_area *a = &m->areas[i];

		/* as --swap refuses it: slots= won over size_kib=, silently */
		if (a->line && area_slots_disagree(a, m->page_size)) {
			char rule[96];

			slots_rule(m->page_size, "size_kib", rule, sizeof(rule));
			ret = swt_error(err, SWT_EFORMAT, "'%s': line %u: swap_device slots=%lld and "
					"size_kib=%lld disagree: %s (the header page)", name,
					a->line, (long long)a->slots, (long long)a->size_kib, rule);
			goto out;
		}
		area_fill_slots(a, m->page_size);
	}
out:
	free(line);
	if (ret == -SWT_ENOMEM)
		swt_error(err, SWT_ENOMEM, "out of memory");
	return ret;
}

int swt_meta_parse_file(struct swt_meta *m, const char *path, struct swt_err *err)
{
	FILE *f = fopen(path, "re");
	int ret;

	struct stat sb;

	if (!f)
		return swt_error(err, errno == ENOENT ? SWT_ENOENT : SWT_EIO, "'%s': %s", path,
				 strerror(errno));
	/* fopen opens a directory, whose first read fails: say what it is */
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		return swt_error(err, SWT_EUSAGE, "'%s': a directory, not a metadata file "
				 "(meta.txt)", path);
	}
	ret = set_str(&m->path, path);
	if (!ret)
		ret = swt_meta_parse_stream(m, f, path, err);
	fclose(f);
	return ret;
}

int swt_meta_add_swap_spec(struct swt_meta *m, const char *spec, struct swt_err *err)
{
	struct swt_meta_area tmp, *a;
	char *copy = swt_strdup(spec), *save = NULL, *w;
	const char *need;		/* unread: --swap's message is its usage */
	unsigned seen = 1u << AF_DEV;	/* MAJ:MIN, the first word */
	int ret = 0, first = 1, field;

	if (!copy)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	memset(&tmp, 0, sizeof(tmp));
	tmp.priority = tmp.rotational = tmp.synchronous = SWT_META_UNKNOWN;
	tmp.slots = tmp.size_kib = tmp.used_kib = SWT_META_UNKNOWN;
	tmp.swap_type = -1;	/* stated areas are numbered in the order given */
	for (w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save), first = 0) {
		if (first) {
			if (swt_dev_parse(w, &tmp.dev))
				goto bad;
			continue;
		}
		field = area_set_word(&tmp, w, &need);
		if (field == -SWT_ENOMEM) {
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
			goto out;
		}
		/*
		 * A disk's request limits are read from the capture's line,
		 * the device's own: a --swap area, a layout, has none to state
		 */
		if (field < 0 || field == AF_MAX_SECTORS_KB || field == AF_MAX_SEGMENTS)
			goto bad;
		if (seen & (1u << field)) {
			if (field == AF_DEV)
				ret = swt_error(err, SWT_EUSAGE, "bad --swap '%s': the device given "
						"twice (MAJ:MIN and dev=)", spec);
			else
				ret = swt_error(err, SWT_EUSAGE, "bad --swap '%s': %s= given twice",
						spec, area_field_names[field]);
			goto out;
		}
		seen |= 1u << field;
	}
	if (first || !tmp.dev)
		goto bad;
	/* slots= bounds the area: a size= that said otherwise was stored, silently ignored */
	if (area_slots_disagree(&tmp, m->page_size)) {
		char rule[96];

		slots_rule(m->page_size, "size", rule, sizeof(rule));
		ret = swt_error(err, SWT_EUSAGE, "bad --swap '%s': slots=%lld and size=%lld "
				"disagree: %s (the header page)",
				spec, (long long)tmp.slots, (long long)tmp.size_kib, rule);
		goto out;
	}
	if (!m->from_cmdline) {
		/* stated areas replace whatever a metadata file said */
		for (size_t i = 0; i < m->nr_areas; i++)
			area_release(&m->areas[i]);
		m->nr_areas = 0;
		m->from_cmdline = 1;
	}
	for (size_t i = 0; i < m->nr_areas; i++) {
		char dev[32];

		/* the same sectors twice: the second area could never get any I/O */
		if (m->areas[i].dev != tmp.dev || m->areas[i].start_sector != tmp.start_sector)
			continue;
		swt_dev_format(tmp.dev, dev, sizeof(dev));
		ret = swt_error(err, SWT_EUSAGE, "bad --swap '%s': an area on %s from sector %llu "
				"is already stated", spec, dev, (unsigned long long)tmp.start_sector);
		goto out;
	}
	if (!tmp.type)
		tmp.type = swt_strdup("partition");
	area_fill_slots(&tmp, m->page_size);
	a = tmp.type ? new_area(m) : NULL;
	if (!a) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	*a = tmp;
	free(copy);
	return 0;
bad:
	ret = swt_error(err, SWT_EUSAGE,
			"bad --swap '%s': expected MAJ:MIN[,start=SECTOR][,slots=N][,size=KIB]"
			"[,prio=N][,rotational=0|1][,sync=0|1][,path=P]", spec);
out:
	area_release(&tmp);
	free(copy);
	return ret;
}

void swt_meta_move_areas(struct swt_meta *dst, struct swt_meta *src)
{
	if (!src->from_cmdline)
		return;
	/*
	 * Whether a disk is rotational or synchronous is the disk's, not the
	 * area's: a --swap that restates an area (its slots, its start) and
	 * leaves them out keeps what the file says of that device.  Dropped,
	 * auto took an SSD for a rotational disk and replayed another policy.
	 */
	for (size_t i = 0; i < src->nr_areas; i++) {
		struct swt_meta_area *a = &src->areas[i];

		for (size_t j = 0; a->dev && j < dst->nr_areas; j++) {
			const struct swt_meta_area *f = &dst->areas[j];

			if (f->dev != a->dev)
				continue;
			if (a->rotational == SWT_META_UNKNOWN)
				a->rotational = f->rotational;
			if (a->synchronous == SWT_META_UNKNOWN)
				a->synchronous = f->synchronous;
		}
	}
	for (size_t i = 0; i < dst->nr_areas; i++)
		area_release(&dst->areas[i]);
	free(dst->areas);
	dst->areas = src->areas;
	dst->nr_areas = src->nr_areas;
	dst->from_cmdline = 1;
	src->areas = NULL;
	src->nr_areas = 0;
	src->from_cmdline = 0;
}
