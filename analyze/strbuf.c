/*
 * The growable string behind every text file the report writes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

void swt_sbuf_init(struct swt_sbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void swt_sbuf_release(struct swt_sbuf *b)
{
	free(b->s);
	swt_sbuf_init(b);
}

char *swt_sbuf_detach(struct swt_sbuf *b)
{
	char *s = b->s;

	if (!s)
		s = calloc(1, 1);
	swt_sbuf_init(b);
	return s;
}

static int reserve(struct swt_sbuf *b, size_t more)
{
	size_t need, ncap;
	char *p;

	if (b->oom)
		return -1;
	if (more > (size_t)-1 / 2 - b->len - 1) {
		b->oom = 1;
		return -1;
	}
	need = b->len + more + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need)
		ncap *= 2;
	p = realloc(b->s, ncap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->s = p;
	b->cap = ncap;
	return 0;
}

void swt_sbuf_add(struct swt_sbuf *b, const void *data, size_t len)
{
	if (reserve(b, len))
		return;
	memcpy(b->s + b->len, data, len);
	b->len += len;
	b->s[b->len] = '\0';
}

void swt_sbuf_puts(struct swt_sbuf *b, const char *s)
{
	swt_sbuf_add(b, s, strlen(s));
}

void swt_sbuf_printf(struct swt_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if (reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/*
 * Length of the well-formed UTF-8 sequence at s, 0 when s starts an
 * invalid one.  Names in a database (policies, paths, capture names) are
 * whatever their writer stored; XML and JSON readers reject bad UTF-8.
 */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Copy the UTF-8 character at *s (U+FFFD for a bad byte) and step over it.
 * U+FFFE and U+FFFF are well-formed, but no XML character: U+FFFD too, in
 * JSON as well, so that an SVG's metadata says what its JSON file says.
 */
static void put_char(struct swt_sbuf *b, const char **s)
{
	size_t n = utf8_seq((const unsigned char *)*s);

	if (n == 3 && !memcmp(*s, "\xef\xbf", 2) && ((unsigned char)(*s)[2] & 0xfe) == 0xbe) {
		swt_sbuf_puts(b, "\xef\xbf\xbd");
		*s += n - 1;
	} else if (n) {
		swt_sbuf_add(b, *s, n);
		*s += n - 1;
	} else {
		swt_sbuf_puts(b, "\xef\xbf\xbd");
	}
}

void swt_sbuf_xml(struct swt_sbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': swt_sbuf_puts(b, "&amp;"); break;
		case '<': swt_sbuf_puts(b, "&lt;"); break;
		case '>': swt_sbuf_puts(b, "&gt;"); break;
		case '"': swt_sbuf_puts(b, "&quot;"); break;
		case '\'': swt_sbuf_puts(b, "&#39;"); break;
		default:
			/* XML 1.0 forbids most control characters even escaped */
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				swt_sbuf_puts(b, " ");
			else
				put_char(b, &s);
		}
	}
}

void swt_sbuf_text(struct swt_sbuf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f ||
		    (ch == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f)) {
			swt_sbuf_puts(b, " ");
			s += ch == 0xc2;
		} else {
			put_char(b, &s);
		}
	}
}

void swt_sbuf_json(struct swt_sbuf *b, const char *s)
{
	if (!s) {
		swt_sbuf_puts(b, "null");
		return;
	}
	swt_sbuf_puts(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			swt_sbuf_printf(b, "\\%c", ch);
		else if (ch == '\n')
			swt_sbuf_puts(b, "\\n");
		else if (ch < 0x20)
			swt_sbuf_printf(b, "\\u%04x", ch);
		else
			put_char(b, &s);
	}
	swt_sbuf_puts(b, "\"");
}
