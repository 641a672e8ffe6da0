/*
 * Finding a policy from the command line: the built-in table, plugins
 * loaded with dlopen() through the same struct, and key=value parameters
 * checked against what the policy declares.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdalign.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay.h"
#include "util.h"

extern const struct swt_policy swt_policy_none, swt_policy_fixed, swt_policy_adaptive,
	swt_policy_vma, swt_policy_auto, swt_policy_oracle, swt_policy_leap;

const struct swt_policy *const swt_builtin_policies[] = {
	&swt_policy_none,  &swt_policy_fixed,  &swt_policy_adaptive, &swt_policy_vma,
	&swt_policy_auto,  &swt_policy_oracle, &swt_policy_leap,     NULL,
};

const struct swt_policy *swt_policy_find(const char *name)
{
	for (size_t i = 0; swt_builtin_policies[i]; i++)
		if (!strcmp(swt_builtin_policies[i]->name, name))
			return swt_builtin_policies[i];
	return NULL;
}

void swt_policy_choice_release(struct swt_policy_choice *c)
{
	for (unsigned i = 0; i < c->nparams; i++) {
		free(c->keys[i]);
		free(c->values[i]);
	}
	free(c->keys);
	free(c->values);
	free(c->spec);
	if (c->dl_handle)
		dlclose(c->dl_handle);
	memset(c, 0, sizeof(*c));
}

static void read_string(const char *s)
{
	for (volatile const char *v = s; v && *v; v++)
		;
}

/*
 * Runs fn(arg, fd) in a child that exits with what fn returns, its wait
 * status in *status: 0, or -1 when it could not be run.  The child's
 * stderr and stdout are /dev/null: a sanitizer's report of a crash there
 * is no message of ours.  With msg, what the child writes to fd lands in msg (len - 1
 * bytes at most, NUL-terminated); without, fd is -1.  A child the plugin
 * stopped before its end is killed (swaptrace waited for it for ever),
 * *status then that of its stop (WIFSTOPPED).
 */
static int run_in_child(int (*fn)(const void *arg, int fd), const void *arg, char *msg,
			size_t len, int *status)
{
	int fds[2] = { -1, -1 }, null, stop_sig = 0;
	pid_t pid, parent = getpid();
	size_t got;

	if (msg && pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		if (msg) {
			close(fds[0]);
			close(fds[1]);
		}
		return -1;
	}
	if (!pid) {
		if (msg)
			close(fds[0]);
		/* as a run's child: a crash in create() is a crash, a hang ends with swaptrace */
		if (swt_plugin_child_setup(parent))
			_exit(2);
		/* and its stdout: a plugin's printing would land in swaptrace's --json */
		null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, STDERR_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		_exit(fn(arg, fds[1]));
	}
	if (msg) {
		close(fds[1]);
		/* to EOF before the wait: a child writing more than a pipe holds blocks */
		got = swt_plugin_child_read(fds[0], pid, msg, len - 1, &stop_sig);
		close(fds[0]);
		msg[got] = '\0';
		if (stop_sig)
			kill(pid, SIGKILL);
	}
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (stop_sig)
		*status = W_STOPCODE(stop_sig);
	return 0;
}

static int read_policy_strings(const void *arg, int fd)
{
	const struct swt_policy *p = arg;

	(void)fd;
	read_string(p->name);
	read_string(p->summary);
	for (const struct swt_policy_param *q = p->params; q && q->key; q++) {
		read_string(q->key);
		read_string(q->default_value);
		read_string(q->help);
	}
	return 0;
}

/*
 * Whether the policy's strings can be read, tried in a child: pointers to
 * nowhere would crash swaptrace itself, where a plugin's crash during the
 * replay only fails that replay (isolate.c).  1 yes (or cannot tell), 0 no.
 */
static int policy_strings_readable(const struct swt_policy *p)
{
	int status;

	if (run_in_child(read_policy_strings, p, NULL, 0, &status) < 0)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct create_try {
	const struct swt_policy_choice *c;
	const struct swt_policy_env *env;
};

/*
 * exits 0 when create() made an instance, 1 with 'R' and its reason on fd
 * when not: a plugin's own exit(1) in create() is no refusal
 */
static int try_create(const void *arg, int fd)
{
	const struct create_try *t = arg;
	const struct swt_policy_choice *c = t->c;
	char reason[200] = "";
	void *inst;

	alarm(10);
	inst = c->policy->create(t->env, (const char *const *)c->keys,
				 (const char *const *)c->values, c->nparams, reason,
				 sizeof(reason));
	if (inst) {
		if (c->policy->destroy)
			c->policy->destroy(inst);
		return 0;
	}
	reason[sizeof(reason) - 1] = '\0';
	swt_write_all(fd, "R", 1);
	swt_write_all(fd, reason, strlen(reason));
	return 1;
}

/*
 * Whether a plugin's create() refuses the parameters, tried in a child
 * (create may crash, or never return: 10 s, then it is left to the run).
 * 1 with its reason in why when it returned NULL, 0 otherwise.
 */
static int plugin_refuses(const struct swt_policy_choice *c, const struct swt_policy_env *env,
			  char *why, size_t len)
{
	struct create_try t = { .c = c, .env = env };
	int status;

	if (run_in_child(try_create, &t, why, len, &status) < 0)
		return 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 || why[0] != 'R')
		return 0;	/* made one, or crashed, exited or stopped: left to the run, which says so */
	memmove(why, why + 1, strlen(why));
	return 1;
}

/* loads and unloads the plugin at arg, saying "ok" on fd when both returned */
static int try_load(const void *arg, int fd)
{
	void *h = dlopen(arg, RTLD_NOW | RTLD_LOCAL);

	if (h)
		dlclose(h);
	swt_write_all(fd, "ok", 2);
	return 0;
}

/*
 * Whether loading and unloading the plugin returns, tried in a child: its
 * constructors run at dlopen() and its destructors at dlclose(), in
 * swaptrace's own process, where a crash or an exit() there took
 * swaptrace down with no word (after the runs were stored, for a
 * destructor).  "" when they return (or it cannot tell), else what
 * happened, in buf.
 */
static const char *plugin_load_fails(const char *path, char *buf, size_t len)
{
	char ok[8] = "";
	int status;

	if (run_in_child(try_load, path, ok, sizeof(ok), &status) < 0)
		return "";
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !strcmp(ok, "ok"))
		return "";
	if (WIFSIGNALED(status))
		snprintf(buf, len, "crashed (%s) while being loaded or unloaded (its constructors "
			 "or destructors)", strsignal(WTERMSIG(status)));
	else if (WIFSTOPPED(status))
		snprintf(buf, len, "stopped the process (%s) while being loaded or unloaded (its "
			 "constructors or destructors); killed", strsignal(WSTOPSIG(status)));
	else
		snprintf(buf, len, "ended the process (exit status %d) while being loaded or "
			 "unloaded (its constructors or destructors)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return buf;
}

/*
 * The symbol must be a policy struct before anything is read from it: a
 * plugin that defines it as a char or a function would crash swaptrace.
 * "" when it is, or what it is instead.
 */
static const char *not_a_policy(const void *sym, char *buf, size_t len)
{
	Dl_info info;
	const ElfW(Sym) *elf = NULL;

	if (!dladdr1(sym, &info, (void **)&elf, RTLD_DL_SYMENT))
		elf = NULL;	/* no symbol table entry to judge by */
	if (elf && (ELF32_ST_TYPE(elf->st_info) == STT_FUNC ||
		    ELF32_ST_TYPE(elf->st_info) == STT_GNU_IFUNC))
		snprintf(buf, len, "is a function, not a struct swt_policy");
	else if ((uintptr_t)sym % alignof(struct swt_policy))
		snprintf(buf, len, "is not aligned as a struct swt_policy");
	else if (elf && elf->st_size && elf->st_size < sizeof(struct swt_policy))
		snprintf(buf, len, "is %llu bytes, not a struct swt_policy (%zu)",
			 (unsigned long long)elf->st_size, sizeof(struct swt_policy));
	else
		return "";
	return buf;
}

/*
 * dlopen() with stdout on /dev/null: a constructor's printing would land
 * in swaptrace's --json or table (the trial load above has shown it returns)
 */
static void *quiet_dlopen(const char *path)
{
	int saved, null;
	void *h;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && null >= 0)
		dup2(null, STDOUT_FILENO);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (saved >= 0 && null >= 0) {
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
	}
	if (saved >= 0)
		close(saved);
	if (null >= 0)
		close(null);
	return h;
}

static int load_plugin(const char *path, struct swt_policy_choice *c, struct swt_err *err)
{
	const struct swt_policy *p;
	const char *why;
	char what[160];

	/* a path to nothing is a slip on the command line, as an unknown built-in is */
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return swt_error(err, SWT_EUSAGE, "policy plugin '%s': cannot load: no such file",
				 path);
	why = plugin_load_fails(path, what, sizeof(what));
	if (why[0])
		return swt_error(err, SWT_EPLUGIN, "policy plugin '%s' %s", path, why);
	c->dl_handle = quiet_dlopen(path);
	if (!c->dl_handle)
		return swt_error(err, SWT_EPLUGIN, "policy plugin '%s': cannot load: %s", path, dlerror());
	p = dlsym(c->dl_handle, SWT_POLICY_SYMBOL);
	if (!p)
		return swt_error(err, SWT_EPLUGIN, "policy plugin '%s': no '%s' symbol", path,
				 SWT_POLICY_SYMBOL);
	why = not_a_policy(p, what, sizeof(what));
	if (why[0])
		return swt_error(err, SWT_EPLUGIN, "policy plugin '%s': its '%s' %s", path,
				 SWT_POLICY_SYMBOL, why);
	if (p->abi_version != SWT_POLICY_ABI)
		return swt_error(err, SWT_EPLUGIN,
				 "policy plugin '%s': ABI version %u, this swaptrace speaks %d", path,
				 p->abi_version, SWT_POLICY_ABI);
	if (!policy_strings_readable(p))
		return swt_error(err, SWT_EPLUGIN, "policy plugin '%s': its name, summary or "
				 "parameters point to memory that cannot be read", path);
	why = !p->name || !p->name[0] ? "has no name" :
	      !p->create ? "has no create()" :
	      !p->on_miss ? "has no on_miss()" :
	      p->flags & ~(uint32_t)(SWT_POLICY_ORACLE | SWT_POLICY_READS_AT_HITS) ?
			"sets unknown flags" : NULL;
	if (why)
		return swt_error(err, SWT_EPLUGIN, "policy plugin '%s' %s", path, why);
	c->policy = p;
	return 0;
}

static int add_param(struct swt_policy_choice *c, const char *key, size_t klen, const char *value)
{
	char **k = realloc(c->keys, (c->nparams + 1) * sizeof(*k)), **v;

	if (!k)
		return -SWT_ENOMEM;
	c->keys = k;
	v = realloc(c->values, (c->nparams + 1) * sizeof(*v));
	if (!v)
		return -SWT_ENOMEM;
	c->values = v;
	c->keys[c->nparams] = strndup(key, klen);
	c->values[c->nparams] = swt_strdup(value);
	if (!c->keys[c->nparams] || !c->values[c->nparams]) {
		free(c->keys[c->nparams]);
		free(c->values[c->nparams]);
		return -SWT_ENOMEM;
	}
	c->nparams++;
	return 0;
}

/* key is the klen bytes before '=' in a key=value item, not NUL-terminated */
static int key_is(const char *name, const char *key, size_t klen)
{
	return strlen(name) == klen && !strncmp(name, key, klen);
}

static const struct swt_policy_param *find_param(const struct swt_policy *p, const char *key,
						 size_t klen)
{
	for (const struct swt_policy_param *q = p->params; q && q->key; q++)
		if (key_is(q->key, key, klen))
			return q;
	return NULL;
}

int swt_policy_params_are_defaults(const char *name, const char *params)
{
	const struct swt_policy *p = swt_policy_find(name);
	const char *kv = params ? params : "";

	if (!p)
		return 0;
	while (*kv) {
		size_t len = strcspn(kv, ",");
		const char *eq = memchr(kv, '=', len);
		const struct swt_policy_param *q = eq ? find_param(p, kv, (size_t)(eq - kv)) : NULL;
		size_t vlen = eq ? len - (size_t)(eq + 1 - kv) : 0;

		if (!q || !q->default_value || strlen(q->default_value) != vlen ||
		    memcmp(q->default_value, eq + 1, vlen))
			return 0;
		kv += len + (kv[len] == ',');
	}
	return 1;
}

void swt_policy_params_text(const char *const *keys, const char *const *values, unsigned n,
			    char *buf, size_t size)
{
	buf[0] = '\0';
	for (unsigned k = 0; k < n; k++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s=%s", k ? "," : "", keys[k],
			 values[k]);
}

size_t swt_policy_spec_name_len(const char *spec)
{
	const char *so = strstr(spec, ".so:"), *slash;
	size_t len = strlen(spec), colon = strcspn(spec, ":");

	/*
	 * A plugin's directory may hold a ':' and its parameters a '/'
	 * (path=/x), so neither the first ':' nor the one after the last '/'
	 * ends its file name: a file named *.so ends at its first ".so:" or
	 * at the end.  Only a plugin not named so is cut at the first ':'
	 * after its last '/'.  A built-in's name ends at the first ':'
	 * whatever its values hold.  docs/schema.md and 'swaptrace help
	 * replay' state the rule.
	 */
	for (size_t i = 0; swt_builtin_policies[i]; i++)
		if (strlen(swt_builtin_policies[i]->name) == colon &&
		    !strncmp(swt_builtin_policies[i]->name, spec, colon))
			return colon;
	if (so)
		return (size_t)(so - spec) + 3;
	if (len >= 3 && !strcmp(spec + len - 3, ".so"))
		return len;
	slash = strrchr(spec, '/');
	if (!slash)
		return colon;
	return (size_t)(slash - spec) + strcspn(slash, ":");
}

/*
 * A built-in reads its numbers as decimal, so history=032 is history=32:
 * stored and compared (a policy given twice is run once; a run with its
 * defaults is the default run) in one spelling.  A plugin's values stay as
 * given -- how it reads them is its own business.
 */
static int canonical_numbers(struct swt_policy_choice *c, struct swt_err *err)
{
	for (unsigned i = 0; i < c->nparams; i++) {
		char text[24], *copy;
		uint64_t v;

		if (swt_parse_u64(c->values[i], &v))
			continue;
		snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
		if (!strcmp(text, c->values[i]))
			continue;
		copy = swt_strdup(text);
		if (!copy)
			return swt_error(err, SWT_ENOMEM, "out of memory");
		free(c->values[i]);
		c->values[i] = copy;
	}
	return 0;
}

/*
 * The spec in one spelling, as replay prints it: the name or plugin path
 * as given, then the parameters that are not their defaults, in the
 * policy's order (its values already in canonical_numbers' spelling):
 * "leap:min_window=auto,history=032" is "leap:history=32" (min_window's
 * default is auto), and "leap:history=32" is "leap".  Two specs of one
 * setting print alike, as they are stored (run.params) and run once.
 */
static int canonical_spec(struct swt_policy_choice *c, struct swt_err *err)
{
	size_t name_len = swt_policy_spec_name_len(c->spec), len = name_len + 1;
	char *text, *at;

	for (unsigned i = 0; i < c->nparams; i++)
		len += strlen(c->keys[i]) + strlen(c->values[i]) + 2;
	text = malloc(len);
	if (!text)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	memcpy(text, c->spec, name_len);
	at = text + name_len;
	for (unsigned i = 0; i < c->nparams; i++) {
		const struct swt_policy_param *q = find_param(c->policy, c->keys[i],
							      strlen(c->keys[i]));

		if (q && !strcmp(c->values[i], q->default_value ? q->default_value : ""))
			continue;
		at += sprintf(at, "%c%s=%s", at == text + name_len ? ':' : ',', c->keys[i],
			      c->values[i]);
	}
	*at = '\0';
	/*
	 * It names the policy as the spec given did, or it is not one: a
	 * plugin not named *.so whose last value, in this order or with the
	 * defaults left out, ends in ".so" would read as a file name whole
	 * (swt_policy_spec_name_len), stored so as run.policy and not a spec
	 * that loads it.  That one prints as given, which names it.
	 */
	if (swt_policy_spec_name_len(text) != name_len) {
		free(text);
		return 0;
	}
	free(c->spec);
	c->spec = text;
	return 0;
}

int swt_policy_choose(const char *spec, struct swt_policy_choice *c, struct swt_err *err)
{
	char *copy, *colon, *params = NULL;
	unsigned at;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->spec = swt_strdup(spec);
	copy = swt_strdup(spec);
	if (!c->spec || !copy) {
		free(copy);
		swt_policy_choice_release(c);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	colon = copy + swt_policy_spec_name_len(copy);
	if (*colon) {
		*colon = '\0';
		params = colon + 1;
		/* "fixed:" or "leap:history=64," was taken, the separator kept in its name */
		if (swt_list_has_empty(params)) {
			ret = swt_error(err, SWT_EUSAGE, "policy '%s': an empty item in the parameter "
					"list", spec);
			free(copy);
			swt_policy_choice_release(c);
			return ret;
		}
	}
	if (strchr(copy, '/')) {
		ret = load_plugin(copy, c, err);
	} else {
		c->policy = swt_policy_find(copy);
		if (!c->policy)
			ret = swt_error(err, SWT_EUSAGE,
					"unknown policy '%s' (see 'swaptrace policies'; a plugin path "
					"needs a '/', e.g. ./libmine.so)", copy);
	}
	/* key=value,... in the order given, then defaults for the rest */
	for (char *save = NULL, *kv = params ? strtok_r(params, ",", &save) : NULL; !ret && kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq || eq == kv) {
			ret = swt_error(err, SWT_EUSAGE, "policy '%s': parameter '%s' is not key=value",
					c->policy->name, kv);
			break;
		}
		if (!find_param(c->policy, kv, (size_t)(eq - kv))) {
			char known[256] = "";

			for (const struct swt_policy_param *q = c->policy->params; q && q->key; q++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
					 known[0] ? ", " : "", q->key);
			ret = swt_error(err, SWT_EUSAGE, "policy '%s' has no parameter '%.*s' (%s%s)",
					c->policy->name, (int)(eq - kv), kv,
					known[0] ? "it takes: " : "it takes none", known);
			break;
		}
		for (unsigned i = 0; i < c->nparams; i++)
			if (key_is(c->keys[i], kv, (size_t)(eq - kv)))
				ret = swt_error(err, SWT_EUSAGE, "policy '%s': parameter '%s' given twice",
						c->policy->name, c->keys[i]);
		if (!ret && add_param(c, kv, (size_t)(eq - kv), eq + 1))
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
	}
	for (const struct swt_policy_param *q = c->policy && !ret ? c->policy->params : NULL; q && q->key;
	     q++) {
		unsigned i;

		for (i = 0; i < c->nparams && strcmp(c->keys[i], q->key); i++)
			;
		if (i == c->nparams && add_param(c, q->key, strlen(q->key), q->default_value ? q->default_value : ""))
			ret = swt_error(err, SWT_ENOMEM, "out of memory");
	}
	/*
	 * In the policy's own order, so that one setting is stored as one
	 * run.params text however it was given (every key is the policy's).
	 */
	at = 0;
	for (const struct swt_policy_param *q = c->policy && !ret ? c->policy->params : NULL;
	     q && q->key; q++) {
		for (unsigned i = at; i < c->nparams; i++) {
			char *key = c->keys[i], *value = c->values[i];

			if (strcmp(key, q->key))
				continue;
			c->keys[i] = c->keys[at];
			c->values[i] = c->values[at];
			c->keys[at] = key;
			c->values[at++] = value;
			break;
		}
	}
	/*
	 * A policy checks its values in create(): tried here once, so that
	 * history=1 is a usage error up front, like an unknown key, and not a
	 * failure in the middle of a sweep.  A plugin's is tried in a child,
	 * as its runs are isolated (its create may crash).  That is a
	 * create() more than its runs make, which a plugin with side effects
	 * outside its process sees (test-replay-cli counts them), and not
	 * one to save: this comes before the capture is read, so no run's
	 * env is known, and each run makes its instance in its own child, so
	 * that a crash fails that run alone -- an instance made here could
	 * not cross to it.
	 */
	if (!ret && c->policy->create) {
		struct swt_policy_env env = { .page_cluster = 3, .nr_areas = 1, .page_shift = 12 };
		char why[200] = "";
		void *inst;

		if (c->dl_handle) {
			if (plugin_refuses(c, &env, why, sizeof(why)))
				ret = swt_error(err, SWT_EUSAGE, "policy '%s': %s", c->policy->name,
						why[0] ? why : "create() refused its parameters, "
						"saying nothing");
		} else {
			inst = c->policy->create(&env, (const char *const *)c->keys,
						 (const char *const *)c->values, c->nparams, why,
						 sizeof(why));
			/* a built-in says why it refuses values; silent, it had no memory */
			if (!inst)
				ret = why[0] ? swt_error(err, SWT_EUSAGE, "policy '%s': %s",
							 c->policy->name, why)
					     : swt_error(err, SWT_ENOMEM, "policy '%s': out of memory",
							 c->policy->name);
			else if (c->policy->destroy)
				c->policy->destroy(inst);
		}
	}
	if (!ret && !c->dl_handle)
		ret = canonical_numbers(c, err);
	if (!ret)
		ret = canonical_spec(c, err);
	free(copy);
	if (ret)
		swt_policy_choice_release(c);
	return ret;
}
