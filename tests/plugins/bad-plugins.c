/*
 * Deliberately broken policy plugins for the tests, one per build flavour:
 *   CRASH     on_miss dereferences NULL after a few misses
 *   BAD_ABI   declares an ABI version this swaptrace does not speak
 *   NO_SYMBOL exports no swt_policy_plugin at all
 *   FAIL      create() refuses with a message
 *   ERROR     on_miss returns an error after a few misses
 *   NOT_STRUCT   exports swt_policy_plugin as a char
 *   FUNCTION     exports swt_policy_plugin as a function
 *   BAD_NAME     its name points to memory that cannot be read
 *   DUPLICATES   on_miss lists the slot after the faulting one eight times
 *   BAD_KIND     on_miss returns a window of a kind the ABI does not define
 *   OWN_LIST     on_miss points the window at a 4096-slot list of its own
 *   EXIT_ZERO    on_miss calls exit(0) after a few misses
 *   HANG         on_miss never returns after a few misses
 *   STOP         on_miss stops its own process (raise(SIGSTOP)) after a few misses
 *   TSTP         on_miss sends its own process SIGTSTP (a terminal's stop,
 *                default action) after a few misses
 *   SLOW         on_miss sleeps 5 s at the tenth miss, then goes on as it should
 *   COUNT_PAST   on_miss sets a count past the window's capacity
 *   DESCENDING   on_miss lists the two slots after the faulting one, the far one first
 *   UNTERMINATED create() accepts its trial but, in a run, refuses with a reason
 *                that fills err to its end, with no NUL
 *   CREATE_CRASH create() dereferences NULL
 *   CREATE_HANG  create() never returns
 *   CREATE_LOG   create() appends a line to the file $SWT_CREATE_LOG names (a
 *                side effect its caller's process cannot undo): "trial" in the
 *                trial before the replays (no engine), else "run page-cluster N"
 *   CREATE_EXIT  create() calls exit(1) (the trial's own code for a refusal)
 *   CREATE_STOP  create() stops its own process (raise(SIGSTOP))
 *   CTOR_CRASH   a constructor dereferences NULL (it runs at dlopen())
 *   CTOR_EXIT    a constructor calls exit(0)
 *   CTOR_STOP    a constructor stops its own process (raise(SIGSTOP))
 *   DTOR_CRASH   a destructor dereferences NULL (it runs at dlclose())
 *   PRINTS       the constructor, create() and on_miss print to stdout
 *   PARAMS       takes n (default 1) and lib (no default), any values
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swaptrace/policy.h"

#if defined(NOT_STRUCT)
char swt_policy_plugin = 1;
#elif defined(FUNCTION)
void swt_policy_plugin(void);
void swt_policy_plugin(void)
{
}
#elif !defined(NO_SYMBOL)
static int calls __attribute__((unused));

#if defined(CTOR_CRASH) || defined(CTOR_EXIT) || defined(CTOR_STOP) || defined(PRINTS)
__attribute__((constructor)) static void bad_constructor(void)
{
#ifdef CTOR_CRASH
	/* all volatile: through a plain pointer GCC dropped the store, or the constructor */
	volatile int *volatile null = NULL;

	*null = 1;
#elif defined(CTOR_EXIT)
	exit(0);
#elif defined(CTOR_STOP)
	raise(SIGSTOP);
#else
	printf("plugin constructor here\n");
#endif
}
#endif
#ifdef DTOR_CRASH
__attribute__((destructor)) static void bad_destructor(void)
{
	volatile int *volatile null = NULL;

	*null = 1;
}
#endif

static void *bad_create(const struct swt_policy_env *env, const char *const *keys,
			const char *const *values, unsigned nparams, char *err, size_t errlen)
{
#ifdef FAIL
	snprintf(err, errlen, "this plugin refuses to start");
	return NULL;
#elif defined(CREATE_CRASH)
	*(volatile int *)(uintptr_t)(calls - calls) = 1;
	return &calls;
#elif defined(CREATE_HANG)
	while (calls >= 0)
		pause();
	return &calls;
#elif defined(UNTERMINATED)
	if (!env->engine)
		return &calls;
	memset(err, 'x', errlen);
	return NULL;
#elif defined(CREATE_LOG)
	const char *path = getenv("SWT_CREATE_LOG");
	FILE *log = path ? fopen(path, "a") : NULL;

	if (log) {
		if (env->engine)
			fprintf(log, "run page-cluster %u\n", env->page_cluster);
		else
			fprintf(log, "trial\n");
		fclose(log);
	}
	return &calls;
#elif defined(CREATE_EXIT)
	exit(1);
#elif defined(CREATE_STOP)
	raise(SIGSTOP);
	return &calls;
#elif defined(PRINTS)
	printf("plugin create() here\n");
	fflush(stdout);
	return &calls;
#else
	return &calls;
#endif
}

static int bad_on_miss(void *inst, const struct swt_fault_info *f, struct swt_window *win)
{
	win->kind = SWT_WINDOW_SLOTS;
	win->size = 1;
	win->count = 1;
	win->list[0] = f->slot;
#ifdef DUPLICATES
	win->size = 8;
	win->count = 8;
	for (unsigned i = 0; i < 8; i++)
		win->list[i] = f->slot + 1;
#endif
#ifdef BAD_KIND
	win->kind = 7;
#endif
#ifdef COUNT_PAST
	win->count = win->capacity + 10;
#endif
#ifdef DESCENDING
	win->size = 3;
	win->count = 3;
	win->list[1] = f->slot + 2;
	win->list[2] = f->slot + 1;
#endif
#ifdef OWN_LIST
	{
		static uint64_t mine[4096];

		win->list = mine;
		win->capacity = win->count = win->size = 4096;
		for (unsigned i = 0; i < 4096; i++)
			mine[i] = f->slot + i;
	}
#endif
#ifdef EXIT_ZERO
	if (++calls > 10)
		exit(0);
#endif
#ifdef PRINTS
	if (++calls == 10) {
		printf("plugin on_miss here\n");
		fflush(stdout);
	}
#endif
#ifdef HANG
	while (++calls > 10)
		pause();
#endif
#ifdef STOP
	if (++calls > 10)
		raise(SIGSTOP);
#endif
#ifdef TSTP
	if (++calls > 10)
		raise(SIGTSTP);
#endif
#ifdef SLOW
	if (++calls == 10)
		sleep(5);
#endif
#ifdef CRASH
	if (++calls > 10)
		*(volatile int *)(uintptr_t)(calls - calls) = 1;
#endif
#ifdef ERROR
	if (++calls > 10)
		return -5;
#endif
	return 0;
}

#ifdef PARAMS
static const struct swt_policy_param bad_params[] = {
	{ "n", "1", "a number, unread" },
	{ "lib", NULL, "a file name, unread" },
	{ NULL, NULL, NULL },
};
#endif

const struct swt_policy swt_policy_plugin = {
#ifdef PARAMS
	.params = bad_params,
#endif
#ifdef BAD_ABI
	.abi_version = 99,
#else
	.abi_version = SWT_POLICY_ABI,
#endif
#ifdef BAD_NAME
	.name = (const char *)16,
#else
	.name = "bad",
#endif
	.summary = "a plugin that misbehaves on purpose",
	.create = bad_create,
	.on_miss = bad_on_miss,
};
#else
int swt_policy_plugin_missing;
#endif
