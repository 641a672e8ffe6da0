/*
 * Running a plugin policy where its crash cannot take swaptrace down: the
 * replay runs in a child process and sends its result back through a pipe.
 * A child killed by a signal becomes a one-line error naming the plugin, as
 * does one that the plugin stopped (SIGSTOP, or SIGTSTP, SIGTTIN or SIGTTOU
 * with their default action): it would never write, and is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
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

/* Where a result is read from: a file, or the pipe of the child pid writes to. */
struct result_source {
	int fd;
	pid_t pid;		/* 0: a file, nobody to wait for */
	int stop_sig;		/* the signal that stopped the child, which then sent nothing */
};

/* How long the parent waits for the child's pipe before it looks whether the child is stopped. */
#define STOP_CHECK_MS 300

static long long monotonic_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * Before a read from child pid's pipe fd: 0 once it can be read (data, its
 * end, or an error the read reports), or the signal the child was stopped
 * by for good.  Each STOP_CHECK_MS without data, a look whether the child
 * is stopped: a normal run costs one poll() per read, which returns when
 * data comes.
 *
 * The child counts as stopped for good when two consecutive checks find it
 * stopped, this process running through the whole wait between them.  A
 * stop of the whole process group (Ctrl-Z in a shell) stops this process
 * too, and fg continues both: no error.  But the signal reaches the
 * processes one after the other, so one check may catch the child stopped
 * while this process still, or already, runs; two around a whole wait
 * cannot.  A wait that took much longer than STOP_CHECK_MS is one this
 * process was stopped (or starved) in: the check before it does not count.
 */
static int child_wait(int fd, pid_t pid)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long long last = monotonic_ms(), now;
	int seen = 0;

	for (;;) {
		siginfo_t si;
		int n = poll(&p, 1, STOP_CHECK_MS);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 0)
			return 0;
		now = monotonic_ms();
		if (now - last > 2 * STOP_CHECK_MS)
			seen = 0;
		last = now;
		/* WNOWAIT: a stop is reported again at the next check, and a death is left to reap */
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, pid, &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid &&
		    si.si_code == CLD_STOPPED) {
			if (++seen == 2)
				return si.si_status;
		} else {
			seen = 0;
		}
	}
}

size_t swt_plugin_child_read(int fd, pid_t pid, void *buf, size_t len, int *stop_sig)
{
	char *p = buf;
	size_t got = 0;

	while (got < len && !*stop_sig && !(*stop_sig = child_wait(fd, pid))) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static int read_exact(struct result_source *src, void *buf, size_t len)
{
	if (!src->pid)
		return swt_read_full(src->fd, buf, len) == (long)len ? 0 : -1;
	return swt_plugin_child_read(src->fd, src->pid, buf, len, &src->stop_sig) == len ? 0 : -1;
}

static struct swt_replay_result *result_read(struct result_source *src)
{
	struct swt_replay_result *r = calloc(1, sizeof(*r));
	size_t nparts;

	if (!r || read_exact(src, r, sizeof(*r))) {
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

		if (read_exact(src, p, sizeof(*p)))
			goto fail;
		p->request_hist = malloc((r->max_request_pages + 1) * sizeof(uint64_t));
		p->series_cap = p->nr_seconds ? p->nr_seconds : 1;
		p->series = malloc(p->series_cap * sizeof(*p->series));
		r->nr_parts = i + 1;
		if (!p->request_hist || !p->series ||
		    read_exact(src, p->request_hist, (r->max_request_pages + 1) * sizeof(uint64_t)) ||
		    read_exact(src, p->series, p->nr_seconds * sizeof(*p->series)))
			goto fail;
	}
	return r;
fail:
	swt_replay_result_free(r);
	return NULL;
}

struct swt_replay_result *swt_replay_result_read(int fd)
{
	struct result_source src = { .fd = fd };

	return result_read(&src);
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
		struct result_source src = { .fd = fds[0], .pid = pid };
		int code = -1;

		if (read_exact(&src, &code, sizeof(code)) == 0) {
			if (code == 0)
				r = result_read(&src);
			else if (read_exact(&src, &child_err, sizeof(child_err)) == 0)
				child_err.msg[sizeof(child_err.msg) - 1] = '\0';
		}
		close(fds[0]);
		if (src.stop_sig)
			kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (src.stop_sig) {
			swt_replay_result_free(r);
			return swt_error(err, SWT_EPLUGIN,
					 "policy '%s' stopped the replay process (%s) during the replay; "
					 "killed",
					 cfg->policy_spec ? cfg->policy_spec : cfg->policy->name,
					 strsignal(src.stop_sig));
		}
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
