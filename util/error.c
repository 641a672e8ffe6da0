/*
 * swt_error() and swt_strerror(): the one place error codes become text.
 */
#include <stdio.h>
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

int swt_verror(struct swt_err *err, int code, const char *fmt, va_list ap)
{
	if (code < 0)
		code = -code;
	if (err && !err->code) {
		err->code = code;
		int len = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);

		/* a cut message says so, rather than ending mid-word as if complete */
		if (len >= (int)sizeof(err->msg))
			memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
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
