/*
 * Running a plugin policy where its crash cannot take swaptrace down: the
 * replay runs in a child process and sends its result back through a pipe.
 * A child killed by a signal becomes a one-line error naming the plugin.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay.h"
#include "util.h"

int swt_replay_result_write(int fd, const struct swt_replay_result *r)
{
	int ret = swt_write_all(fd, r, sizeof(*r));

	for (size_t i = 0; !ret && i < r->nr_parts; i++) {
		const struct swt_replay_part *p = &r->parts[i];

		ret = swt_write_all(fd, p, sizeof(*p));
		if (!ret)
			ret = swt_write_all(fd, p->request_hist,
					    (r->max_request_pages + 1) * sizeof(uint64_t));
		if (!ret)
			ret = swt_write_all(fd, p->series, p->nr_seconds * sizeof(*p->series));
	}
	return ret;
}

static int read_exact(int fd, void *buf, size_t len)
{
	return swt_read_full(fd, buf, len) == (long)len ? 0 : -1;
}

struct swt_replay_result *swt_replay_result_read(int fd)
{
	struct swt_replay_result *r = calloc(1, sizeof(*r));
	size_t nparts;

	if (!r || read_exact(fd, r, sizeof(*r))) {
		free(r);
		return NULL;
	}
	nparts = r->nr_parts;
	r->parts = calloc(nparts ? nparts : 1, sizeof(*r->parts));
	r->nr_parts = 0;
	if (!r->parts)
		goto fail;
	for (size_t i = 0; i < nparts; i++) {
		struct swt_replay_part *p = &r->parts[i];

		if (read_exact(fd, p, sizeof(*p)))
			goto fail;
		p->request_hist = malloc((r->max_request_pages + 1) * sizeof(uint64_t));
		p->series_cap = p->nr_seconds ? p->nr_seconds : 1;
		p->series = malloc(p->series_cap * sizeof(*p->series));
		r->nr_parts = i + 1;
		if (!p->request_hist || !p->series ||
		    read_exact(fd, p->request_hist, (r->max_request_pages + 1) * sizeof(uint64_t)) ||
		    read_exact(fd, p->series, p->nr_seconds * sizeof(*p->series)))
			goto fail;
	}
	return r;
fail:
	swt_replay_result_free(r);
	return NULL;
}

int swt_plugin_child_setup(pid_t parent)
{
	/*
	 * A plugin fault must kill the child by its signal so the parent can
	 * name it; sanitizer runtimes would otherwise turn it into exit(1).
	 */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
	/* a plugin that never returns must not outlive a swaptrace killed for it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return getppid() == parent ? 0 : -1;	/* -1: the parent died before the line above */
}

int swt_replay_run_isolated(const struct swt_replay_input *in, const struct swt_replay_config *cfg,
			    struct swt_replay_result **out, struct swt_err *err)
{
	int fds[2], status = 0, ret;
	struct swt_replay_result *r = NULL;
	struct swt_err child_err = { 0 };
	pid_t pid, parent = getpid();

	*out = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return swt_error(err, SWT_EIO, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return swt_error(err, SWT_EIO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int code;

		close(fds[0]);
		if (swt_plugin_child_setup(parent))
			_exit(2);
		/* a plugin's printing goes to stderr: swaptrace's stdout is its --json */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		ret = swt_replay_run(in, cfg, &r, &child_err);
		/* status byte first: 0 and a result, or the error code and message */
		code = ret ? -ret : 0;
		if (swt_write_all(fds[1], &code, sizeof(code)))
			_exit(2);
		if (ret)
			swt_write_all(fds[1], &child_err, sizeof(child_err));
		else
			swt_replay_result_write(fds[1], r);
		_exit(0);
	}
	close(fds[1]);
	{
		int code = -1;

		if (read_exact(fds[0], &code, sizeof(code)) == 0) {
			if (code == 0)
				r = swt_replay_result_read(fds[0]);
			else if (read_exact(fds[0], &child_err, sizeof(child_err)) == 0)
				child_err.msg[sizeof(child_err.msg) - 1] = '\0';
		}
		close(fds[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status)) {
			swt_replay_result_free(r);
			return swt_error(err, SWT_EPLUGIN, "policy '%s' crashed (%s) during the replay",
					 cfg->policy_spec ? cfg->policy_spec : cfg->policy->name,
					 strsignal(WTERMSIG(status)));
		}
		if (code > 0) {
			swt_replay_result_free(r);
			if (child_err.code)
				return swt_error(err, child_err.code, "%s", child_err.msg);
			return swt_error(err, code, "replay with '%s' failed", cfg->policy->name);
		}
		if (!r || !WIFEXITED(status) || WEXITSTATUS(status)) {
			swt_replay_result_free(r);
			/* exit() called by the plugin: even status 0 is no result */
			return swt_error(err, SWT_EPLUGIN,
					 "policy '%s' ended the replay process (exit status %d) before "
					 "it sent a result",
					 cfg->policy_spec ? cfg->policy_spec : cfg->policy->name,
					 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		}
	}
	*out = r;
	return 0;
}
