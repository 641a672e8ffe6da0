/*
 * swaptrace policies: the built-in readahead policies, their parameters,
 * and how to load a plugin.
 */
#include <stdio.h>

#include "cmd.h"
#include "replay.h"

const char cmd_policies_usage[] =
	"usage: swaptrace policies\n"
	"\n"
	"List the built-in readahead policies and their parameters.  A plugin is any\n"
	"shared object exporting 'const struct swt_policy swt_policy_plugin'\n"
	"(include/swaptrace/policy.h; template: samples/policy-template.c); use it as\n"
	"'swaptrace replay --policy ./libmine.so[:key=val,...]'.\n";

int cmd_policies(int argc, char **argv)
{
	if (argc > 1)
		return cli_usage_error("policies", "unexpected argument '%s'", argv[1]);
	for (size_t i = 0; swt_builtin_policies[i]; i++) {
		const struct swt_policy *p = swt_builtin_policies[i];

		printf("%-9s %s\n", p->name, p->summary);
		for (const struct swt_policy_param *q = p->params; q && q->key; q++)
			printf("%-9s   %s=%s  %s\n", "", q->key, q->default_value, q->help);
	}
	printf("\nplugins: --policy ./libmine.so[:key=val,...]  (ABI version %d, symbol '%s')\n",
	       SWT_POLICY_ABI, SWT_POLICY_SYMBOL);
	return SWT_EXIT_OK;
}
