/*
 * A guard around libtraceevent's tep_register_print_string, which reads
 * (and may write) before its copy of a printk format under 3 characters.
 *
 * libtracecmd hands it each of a trace.dat's printk formats as it opens the
 * file, directly and through tep_parse_printk_formats.  libtraceevent (1.7)
 * strips the format's opening and closing quotes, then compares the two
 * characters that come two before its last with "\n": a format of fewer
 * than 3 characters after its opening quote makes it look before the start
 * of its heap copy, and write a NUL there when those bytes read "\n".  Such
 * formats are legal -- a one-letter tracepoint_string -- so a file that
 * holds one is not damaged.
 *
 * This definition, linked into the executable, comes first in the dynamic
 * linker's search: libtracecmd's and libtraceevent's calls reach it (both
 * call through their PLT), and it hands the library's own function a
 * format it reads safely and registers as the same text: the format, still
 * quoted, with a "\n" that the library strips again.  Longer formats pass
 * through untouched.  swt_printk_guard_active() tells whether the dynamic
 * linker did bind the name here; where it did not (a build that hides the
 * symbol), the trace.dat reader keeps refusing such files.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <event-parse.h>

#include "tracedat-layout.h"

typedef int (*register_fn)(struct tep_handle *, const char *, unsigned long long);

static register_fn library_register;
static pthread_once_t library_once = PTHREAD_ONCE_INIT;

static void find_library_register(void)
{
	library_register = (register_fn)dlsym(RTLD_NEXT, "tep_register_print_string");
}

/*
 * A short format becomes the text the library registers for a longer
 * one: the text after an opening quote, without a closing quote.  (The
 * "\n" it also takes off is one it finds before a closing quote: 3
 * characters, more than a short format has.)
 */
int tep_register_print_string(struct tep_handle *tep, const char *fmt, unsigned long long addr)
{
	const char *body = fmt[0] == '"' ? fmt + 1 : fmt;
	char text[4], safe[sizeof(text) + 4];
	size_t len = strnlen(body, 3);

	pthread_once(&library_once, find_library_register);
	if (!library_register || library_register == tep_register_print_string)
		return -1;
	if (len >= 3)
		return library_register(tep, fmt, addr);
	memcpy(text, body, len);
	text[len] = '\0';
	if (len && text[len - 1] == '"')
		text[--len] = '\0';
	/* "TEXT\n": the library strips the quotes, then the "\n" */
	strcpy(safe, "\"");
	strcat(safe, text);
	strcat(safe, "\\n\"");
	return library_register(tep, safe, addr);
}

int swt_printk_guard_active(void)
{
	return dlsym(RTLD_DEFAULT, "tep_register_print_string") == (void *)tep_register_print_string;
}
