/*
 * swt_error() and swt_strerror(): the one place error codes become text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swaptrace/error.h"

#define SWT_ERRNO_TEXT(name, text) text,
static const char *const error_text[] = { SWT_ERRORS(SWT_ERRNO_TEXT) };
#undef SWT_ERRNO_TEXT

const char *swt_strerror(int code)
{
	if (code < 0)
		code = -code;
	if (code >= SWT_E__COUNT)
		return "unknown error";
	return error_text[code];
}

/*
 * Keep the start of a message too long for msg[] (what failed, the subject)
 * and its end (the cause: strerror's or sqlite's reason, the way on), with
 * an ellipsis for the middle: what overflows it is a path of kilobytes, and
 * a message cut at its end named the path but not what went wrong.  Cut
 * between UTF-8 characters, never inside one.
 */
static void shorten_middle(char *msg, size_t size, const char *full, size_t len)
{
	static const char ellipsis[] = "\xe2\x80\xa6";	/* U+2026 */
	size_t keep = size - sizeof(ellipsis), head = keep / 2, tail = len - (keep - head);

	while (head && ((unsigned char)full[head] & 0xc0) == 0x80)
		head--;
	while (tail < len && ((unsigned char)full[tail] & 0xc0) == 0x80)
		tail++;
	memcpy(msg, full, head);
	memcpy(msg + head, ellipsis, sizeof(ellipsis) - 1);
	memcpy(msg + head + sizeof(ellipsis) - 1, full + tail, len - tail + 1);
}

int swt_verror(struct swt_err *err, int code, const char *fmt, va_list ap)
{
	if (code < 0)
		code = -code;
	if (err && !err->code) {
		va_list again;
		char *full;
		int len;

		err->code = code;
		va_copy(again, ap);
		len = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		if (len >= (int)sizeof(err->msg)) {
			full = malloc((size_t)len + 1);
			if (full && vsnprintf(full, (size_t)len + 1, fmt, again) == len)
				shorten_middle(err->msg, sizeof(err->msg), full, (size_t)len);
			else	/* no memory for the whole: cut, and say so */
				memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
			free(full);
		}
		va_end(again);
	}
	return -code;
}

int swt_error(struct swt_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = swt_verror(err, code, fmt, ap);
	va_end(ap);
	return ret;
}

void swt_err_clear(struct swt_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
