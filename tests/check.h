/*
 * A minimal unit-test harness: TEST(name) defines a case, CHECK*() record
 * failures with file:line and keep going, RUN_TESTS() in main() runs every
 * case and returns the number that failed (0 = success for ctest).
 */
#ifndef SWT_CHECK_H
#define SWT_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check_case {
	const char *name;
	void (*fn)(void);
};

extern int check_failures;
extern struct check_case check_cases[];
extern int check_count;

#define CHECK_MAX_CASES 256

#define TEST(name)                                                              \
	static void name(void);                                                 \
	__attribute__((constructor)) static void register_##name(void)          \
	{                                                                       \
		if (check_count < CHECK_MAX_CASES)                              \
			check_cases[check_count++] = (struct check_case){ #name, name }; \
	}                                                                       \
	static void name(void)

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                       \
		}                                                               \
	} while (0)

#define CHECK_INT(a, b)                                                         \
	do {                                                                    \
		long long _a = (long long)(a), _b = (long long)(b);             \
		if (_a != _b) {                                                 \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
				__LINE__, #a, _a, #b, _b);                      \
			check_failures++;                                       \
		}                                                               \
	} while (0)

#define CHECK_STR(a, b)                                                         \
	do {                                                                    \
		const char *_a = (a), *_b = (b);                                \
		if (!_a || !_b || strcmp(_a, _b)) {                             \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, \
				#a, _a ? _a : "(null)", _b ? _b : "(null)");     \
			check_failures++;                                       \
		}                                                               \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                   \
	do {                                                                    \
		double _a = (a), _b = (b);                                      \
		if (!(_a - _b <= (tol) && _b - _a <= (tol))) {                  \
			fprintf(stderr, "%s:%d: %s == %g, expected %g +- %g\n", __FILE__, __LINE__, \
				#a, _a, _b, (double)(tol));                     \
			check_failures++;                                       \
		}                                                               \
	} while (0)

/* Define once, in one file per test program. */
/* A file's bytes, NUL-terminated, malloc'd; their count in *len (may be NULL); NULL: unreadable */
static inline char *check_read_file(const char *path, long *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (len)
		*len = -1;
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = n < 0 ? NULL : calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	if (len && buf)
		*len = n;
	return buf;
}

#define CHECK_MAIN                                                              \
	int check_failures;                                                     \
	struct check_case check_cases[CHECK_MAX_CASES];                         \
	int check_count;                                                        \
	int main(int argc, char **argv)                                         \
	{                                                                       \
		int failed_cases = 0;                                           \
		for (int i = 0; i < check_count; i++) {                         \
			int before = check_failures;                            \
			if (argc > 1 && strcmp(argv[1], check_cases[i].name))  \
				continue;                                       \
			check_cases[i].fn();                                    \
			if (check_failures != before) {                         \
				failed_cases++;                                 \
				fprintf(stderr, "FAIL %s\n", check_cases[i].name); \
			} else {                                                \
				printf("ok   %s\n", check_cases[i].name);       \
			}                                                       \
		}                                                               \
		return failed_cases ? 1 : 0;                                    \
	}

#endif
