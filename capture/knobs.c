/*
 * The undo log of host settings a capture changes (see knobs.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knobs.h"
#include "util.h"

void swt_knobs_init(struct swt_knobs *k)
{
	memset(k, 0, sizeof(*k));
}

void swt_knobs_release(struct swt_knobs *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].path);
		free(k->v[i].orig);
	}
	free(k->v);
	memset(k, 0, sizeof(*k));
}

char *swt_read_text(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0) {
			buf[n] = '\0';
			if (len)
				*len = n;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	return buf;
}

char *swt_knob_restore_value(const char *text)
{
	const char *lb = strchr(text, '['), *exp = strstr(text, "(expanded: ");
	size_t n;
	char *out;

	if (lb && strchr(lb, ']')) {
		/* "[local] global counter": the selected entry */
		const char *rb = strchr(lb, ']');

		n = (size_t)(rb - lb - 1);
		out = malloc(n + 1);
		if (out) {
			memcpy(out, lb + 1, n);
			out[n] = '\0';
		}
		return out;
	}
	if (exp) {
		/* "7 (expanded: 1408)": the size it expands to */
		exp += strlen("(expanded: ");
		n = strspn(exp, "0123456789");
		out = malloc(n + 1);
		if (out) {
			memcpy(out, exp, n);
			out[n] = '\0';
		}
		return out;
	}
	n = strlen(text);
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	out = malloc(n + 1);
	if (out) {
		memcpy(out, text, n);
		out[n] = '\0';
	}
	return out;
}

static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (swt_write_all(fd, value, strlen(value)))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

int swt_knobs_set(struct swt_knobs *k, const char *path, const char *value,
		  struct swt_err *err)
{
	struct swt_knob *kn = NULL;
	char *cur_text, *cur;
	int ret, same;

	cur_text = swt_read_text(path, NULL);
	if (!cur_text)
		return swt_error(err, errno == ENOENT ? SWT_ENOENT : SWT_EIO, "'%s': %s", path,
				 strerror(errno));
	cur = swt_knob_restore_value(cur_text);
	free(cur_text);
	if (!cur)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	same = !strcmp(cur, value);
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->v[i].path, path))
			kn = &k->v[i];
	if (same) {
		free(cur);
		return 0;
	}
	if (!kn) {
		if (swt_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v))) {
			free(cur);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		kn = &k->v[k->n];
		kn->path = swt_strdup(path);
		if (!kn->path) {
			free(cur);
			return swt_error(err, SWT_ENOMEM, "out of memory");
		}
		kn->orig = cur;
		kn->changed = 0;
		k->n++;
	} else {
		free(cur);
	}
	ret = write_file(path, value);
	if (ret)
		return swt_error(err, ret == -EACCES || ret == -EPERM ? SWT_EPERM : SWT_EIO,
				 "cannot write '%s' to '%s': %s", value, path, strerror(-ret));
	kn->changed = 1;
	return 0;
}

int swt_knobs_restore(struct swt_knobs *k, struct swt_err *err)
{
	int first = 0;

	for (size_t i = k->n; i-- > 0;) {
		struct swt_knob *kn = &k->v[i];
		int ret;

		if (!kn->changed)
			continue;
		ret = write_file(kn->path, kn->orig);
		if (ret == -ENOENT || ret == -ENODEV || ret == -ENXIO) {
			kn->changed = 0;	/* the device went away, and its setting with it */
			continue;
		}
		if (ret) {
			int code = swt_error(err, SWT_EIO, "cannot restore '%s' to '%s': %s",
					     kn->path, kn->orig, strerror(-ret));

			if (!first)
				first = code;
			continue;
		}
		kn->changed = 0;
	}
	return first;
}
