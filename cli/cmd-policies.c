/*
 * swaptrace policies: the built-in readahead policies, their parameters,
 * and how to load a plugin.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "replay.h"

const char cmd_policies_usage[] =
	"usage: swaptrace policies\n"
	"\n"
	"List the built-in readahead policies and their parameters.  A plugin is any\n"
	"shared object exporting 'const struct swt_policy swt_policy_plugin'\n"
	"(include/swaptrace/policy.h; template: samples/policy-template.c); use it as\n"
	"'swaptrace replay --policy ./libmine.so[:key=val,...]'.\n";

enum { WIDTH = 80 };

/*
 * Prints text from column at, where the cursor is, wrapped at blanks within
 * WIDTH columns, later lines from column indent: a summary or a parameter's
 * help is one line of any length (policy.h).  A word longer than a line
 * overflows it rather than being cut.
 */
static void print_wrapped(const char *text, int at, int indent)
{
	int start = at;

	while (*text) {
		int gap = (int)strspn(text, " ");
		int word = (int)strcspn(text + gap, " ");

		if (!word)
			break;
		if (at > start && at + gap + word > WIDTH) {
			printf("\n%*s", indent, "");
			at = start = indent;
		} else if (at > start) {
			printf("%.*s", gap, text);
			at += gap;
		}
		printf("%.*s", word, text + gap);
		at += word;
		text += gap + word;
	}
	putchar('\n');
}

int cmd_policies(int argc, char **argv)
{
	if (argc > 1)
		return cli_usage_error("policies", "unexpected argument '%s'", argv[1]);
	for (size_t i = 0; swt_builtin_policies[i]; i++) {
		const struct swt_policy *p = swt_builtin_policies[i];

		print_wrapped(p->summary, printf("%-9s ", p->name), 10);
		for (const struct swt_policy_param *q = p->params; q && q->key; q++) {
			int at = printf("%-9s   %s=%s  ", "", q->key, q->default_value);

			/* under the help's start, unless a long default left no room */
			print_wrapped(q->help, at, at <= 40 ? at : 14);
		}
	}
	printf("\nplugins: --policy ./libmine.so[:key=val,...]\n"
	       "         (ABI version %d, symbol '%s')\n", SWT_POLICY_ABI, SWT_POLICY_SYMBOL);
	return SWT_EXIT_OK;
}
