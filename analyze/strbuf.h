/*
 * A growable string for building output text (JSON metadata, the SVG
 * post-processing, index.html).  Embedded by value: swt_sbuf_init() /
 * swt_sbuf_release().  Appends never fail loudly: an allocation failure
 * sets `oom`, later appends are ignored, and the caller checks once.
 */
#ifndef SWT_STRBUF_H
#define SWT_STRBUF_H

#include <stddef.h>

struct swt_sbuf {
	char *s;	/* NUL-terminated when len > 0; owned */
	size_t len, cap;
	int oom;	/* 1: an append failed, the contents are incomplete */
};

void swt_sbuf_init(struct swt_sbuf *b);
void swt_sbuf_release(struct swt_sbuf *b);
/* Hand the string to the caller (free() it); b is left empty.  "" when empty. */
char *swt_sbuf_detach(struct swt_sbuf *b);

void swt_sbuf_add(struct swt_sbuf *b, const void *data, size_t len);
void swt_sbuf_puts(struct swt_sbuf *b, const char *s);
void swt_sbuf_printf(struct swt_sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * s with &, <, >, " and ' escaped for XML/HTML text and attributes.  Here
 * and in swt_sbuf_json() bytes that are not UTF-8 become U+FFFD.
 */
void swt_sbuf_xml(struct swt_sbuf *b, const char *s);
/*
 * s for a terminal: control characters but newline and tab (C0, DEL and
 * C1, which a plugin's name or parameters may hold: an escape sequence
 * would reach the user's terminal) become a blank, bad bytes U+FFFD.
 */
void swt_sbuf_text(struct swt_sbuf *b, const char *s);
/* s as a JSON string literal, quotes included; NULL gives null. */
void swt_sbuf_json(struct swt_sbuf *b, const char *s);

#endif
