/*
 * Host facts for meta.txt (hostinfo.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostinfo.h"
#include "knobs.h"
#include "util.h"

static const char *const vmstat_names[SWT_VMSTAT_COUNT] = SWT_VMSTAT_NAMES;

const char *swt_vmstat_name(unsigned i)
{
	return i < SWT_VMSTAT_COUNT ? vmstat_names[i] : NULL;
}

void swt_vmstat_parse(const char *text, struct swt_vmstat *vs)
{
	const char *line = text;

	for (unsigned i = 0; i < SWT_VMSTAT_COUNT; i++)
		vs->v[i] = -1;
	while (line && *line) {
		const char *sp = strchr(line, ' '), *eol = strchr(line, '\n');

		if (sp && (!eol || sp < eol)) {
			size_t klen = (size_t)(sp - line);

			for (unsigned i = 0; i < SWT_VMSTAT_COUNT; i++)
				if (strlen(vmstat_names[i]) == klen && !memcmp(line, vmstat_names[i], klen))
					vs->v[i] = strtoll(sp + 1, NULL, 10);
		}
		line = eol ? eol + 1 : NULL;
	}
}

int swt_vmstat_read(const char *root, struct swt_vmstat *vs, struct swt_err *err)
{
	char path[4096], *text;

	snprintf(path, sizeof(path), "%s/proc/vmstat", root);
	text = swt_read_text(path, NULL);
	if (!text)
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(errno));
	swt_vmstat_parse(text, vs);
	free(text);
	return 0;
}

int64_t swt_read_number(const char *path)
{
	char *text = swt_read_text(path, NULL);
	int64_t v;

	if (!text)
		return -1;
	text[strcspn(text, "\n")] = '\0';
	if (swt_parse_i64(text, &v))
		v = -1;
	free(text);
	return v;
}

char *swt_shell_join(char *const *argv)
{
	size_t cap = 0, len = 0;
	char *out = NULL;

	if (swt_grow((void **)&out, &cap, 1, 1))
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; argv[i]; i++) {
		/* meta.txt is line oriented */
		char *word = swt_shell_word(argv[i], SWT_SHELL_BARE | SWT_SHELL_ONE_LINE);
		size_t n = word ? strlen(word) : 0;

		if (!word || swt_grow((void **)&out, &cap, len + n + 2, 1)) {
			free(word);
			free(out);
			return NULL;
		}
		if (i)
			out[len++] = ' ';
		memcpy(out + len, word, n + 1);
		len += n;
		free(word);
	}
	return out;
}
