/*
 * swapload: the memory reader from the linux-mm thread "Puzzling behaviour
 * with multiple swap targets", used by the capture tests, the capture
 * overhead benchmark and the README demo.
 *
 * It allocates N MB, fills every page with non-zero pseudo-random data (the
 * kernel writes no I/O for an all-zero page, it only marks it in the zero
 * map), touches every page once in random order (the warm-up sweep), then
 * reads 4 KiB pieces -- at random, in order, or random pieces of 1 to 16
 * pages -- and prints one summary line for the measured phase:
 *
 *   mode=rnd mb=256 accesses=120000 seconds=6.653 MBps=70.5 cpu=1.204 majflt=75061
 *
 * (cpu: seconds of CPU the process used in that phase, user and system --
 * faults, swap-ins, and any tracing they trigger -- without the waits;
 * majflt: its faults that had to read from swap.)
 *
 * Run it in a memory cgroup whose limit is below N MB and it swaps
 * steadily.  Arguments are key=value words, all optional:
 *   mb=N (64)  mode=rnd|seq|mix (rnd)  accesses=N (mb*256)  seed=N (1)
 *   warmup=0|1 (1)  align=page|byte (page): where a piece starts -- at a page,
 *   or at a random byte of its first page, so that it spans two pages (a
 *   reader of 4 KiB records at random file offsets; the shared captures'
 *   random workload faulted that way)
 *   threads=N (1): N threads share the accesses of the measured phase, each
 *   with its own random stream (seed + k) and, in seq mode, starting at its
 *   own N-th of the memory -- a multi-threaded process, whose faults the
 *   kernel's events name by thread
 *   write=P (0): P percent of the pieces are written instead of read, with
 *   stores only, so that a swapped-out page comes back through a write
 *   fault, which frees its swap slot (the page takes a new slot when it is
 *   evicted again)
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PIECE 4096u

enum mode { MODE_RND, MODE_SEQ, MODE_MIX };

static const char *const mode_names[] = { "rnd", "seq", "mix" };

/* xorshift64*: small, fast, and the same sequence for the same seed everywhere */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int parse_u64(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (end == text || *end || errno || text[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(long *majflt)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*majflt = ru.ru_majflt;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: swapload [mb=N] [mode=rnd|seq|mix] [accesses=N] [seed=N] "
			"[warmup=0|1] [align=page|byte] [threads=N] [write=PERCENT]\n");
}

/* One reader of the measured phase: a thread, or the process itself. */
struct reader {
	unsigned char *mem;
	uint64_t pages, bytes, accesses, rng, pos, sum, write_percent;
	enum mode mode;
	int byte_aligned;
	pthread_t thread;
};

static void *read_pieces(void *arg)
{
	struct reader *r = arg;
	unsigned char *mem = r->mem;
	uint64_t done = 0, pages = r->pages, sum = 0;

	while (done < r->accesses) {
		uint64_t first, n = 1;

		switch (r->mode) {
		case MODE_SEQ:
			first = r->pos;
			r->pos = (r->pos + 1) % pages;
			break;
		case MODE_MIX:
			n = 1 + rng_next(&r->rng) % 16;
			first = rng_next(&r->rng) % pages;
			if (first + n > pages)
				first = pages - n;
			break;
		default:
			first = rng_next(&r->rng) % pages;
			break;
		}
		for (uint64_t p = first; p < first + n && done < r->accesses; p++, done++) {
			uint64_t start = p * PIECE;

			if (r->byte_aligned && start + PIECE < r->bytes)
				start += 1 + rng_next(&r->rng) % (PIECE - 1);
			if (r->write_percent && rng_next(&r->rng) % 100 < r->write_percent) {
				/* stores first: the fault that swaps the page in is a write fault */
				unsigned char v = (unsigned char)(done | 1);	/* never a zero page */

				for (unsigned k = 0; k < PIECE; k += 64)
					mem[start + k] = v;
				mem[start + PIECE - 1] = v;
				continue;
			}
			/* touch every cache line of the piece, as a reader copying it out would */
			for (unsigned k = 0; k < PIECE; k += 64)
				sum += mem[start + k];
			sum += mem[start + PIECE - 1];
		}
	}
	r->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t mb = 64, accesses = 0, seed = 1, warmup = 1, nthreads = 1, write_percent = 0, rng;
	uint64_t sum = 0;
	int byte_aligned = 0;
	uint64_t pages, bytes, i;
	struct reader *readers;
	enum mode mode = MODE_RND;
	unsigned char *mem;
	uint64_t *perm;
	double t0, c0, secs;
	long f0, f1;

	for (int a = 1; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		uint64_t *dst = NULL;

		if (!eq) {
			usage();
			return 2;
		}
		if (!strncmp(argv[a], "mode=", 5)) {
			if (!strcmp(eq + 1, "rnd"))
				mode = MODE_RND;
			else if (!strcmp(eq + 1, "seq"))
				mode = MODE_SEQ;
			else if (!strcmp(eq + 1, "mix"))
				mode = MODE_MIX;
			else {
				usage();
				return 2;
			}
			continue;
		}
		if (!strncmp(argv[a], "align=", 6)) {
			if (!strcmp(eq + 1, "page") || !strcmp(eq + 1, "byte")) {
				byte_aligned = !strcmp(eq + 1, "byte");
				continue;
			}
			usage();
			return 2;
		}
		if (!strncmp(argv[a], "mb=", 3))
			dst = &mb;
		else if (!strncmp(argv[a], "accesses=", 9))
			dst = &accesses;
		else if (!strncmp(argv[a], "seed=", 5))
			dst = &seed;
		else if (!strncmp(argv[a], "warmup=", 7))
			dst = &warmup;
		else if (!strncmp(argv[a], "threads=", 8))
			dst = &nthreads;
		else if (!strncmp(argv[a], "write=", 6))
			dst = &write_percent;
		if (!dst || parse_u64(eq + 1, dst)) {
			usage();
			return 2;
		}
	}
	if (!mb || mb > (1ull << 24)) {
		fprintf(stderr, "swapload: mb=%llu is out of range\n", (unsigned long long)mb);
		return 2;
	}
	if (write_percent > 100) {
		fprintf(stderr, "swapload: write=%llu is out of range (0 to 100)\n",
			(unsigned long long)write_percent);
		return 2;
	}
	if (!nthreads || nthreads > 1024) {
		fprintf(stderr, "swapload: threads=%llu is out of range (1 to 1024)\n",
			(unsigned long long)nthreads);
		return 2;
	}
	bytes = mb << 20;
	pages = bytes / PIECE;
	if (!accesses)
		accesses = pages;
	rng = seed ? seed * 0x9e3779b97f4a7c15ull : 0x9e3779b97f4a7c15ull;

	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "swapload: cannot map %llu MB: %s\n", (unsigned long long)mb,
			strerror(errno));
		return 1;
	}
	/* no transparent huge pages: the test is about 4 KiB swap traffic */
	madvise(mem, bytes, MADV_NOHUGEPAGE);
	for (i = 0; i < bytes / 8; i++) {
		uint64_t v = rng_next(&rng) | 1;	/* never zero */

		memcpy(mem + i * 8, &v, 8);
	}

	perm = malloc(pages * sizeof(*perm));
	if (!perm) {
		fprintf(stderr, "swapload: out of memory\n");
		return 1;
	}
	if (warmup) {
		for (i = 0; i < pages; i++)
			perm[i] = i;
		for (i = pages - 1; i > 0; i--) {
			uint64_t j = rng_next(&rng) % (i + 1), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0; i < pages; i++)
			sum += mem[perm[i] * PIECE + (i % PIECE)];
	}
	free(perm);

	readers = calloc(nthreads, sizeof(*readers));
	if (!readers) {
		fprintf(stderr, "swapload: out of memory\n");
		return 1;
	}
	for (uint64_t k = 0; k < nthreads; k++) {
		struct reader *r = &readers[k];
		/* seed 0 is seed 1, as for the fill: 0 + k would give threads 0 and 1 one stream */
		uint64_t s = (seed ? seed : 1) + k;

		*r = (struct reader){
			.mem = mem, .pages = pages, .bytes = bytes, .mode = mode,
			.byte_aligned = byte_aligned, .write_percent = write_percent,
			.accesses = accesses / nthreads + (k < accesses % nthreads),
			/* one thread goes on from the warm-up's stream, as before threads= */
			.rng = nthreads == 1 ? rng : (s ? s : 1) * 0x9e3779b97f4a7c15ull,
			.pos = pages * k / nthreads,
		};
	}
	t0 = now_s();
	c0 = cpu_s(&f0);
	for (uint64_t k = 1; k < nthreads; k++) {
		int err = pthread_create(&readers[k].thread, NULL, read_pieces, &readers[k]);

		if (err) {
			fprintf(stderr, "swapload: cannot start thread %llu: %s\n",
				(unsigned long long)k, strerror(err));
			return 1;
		}
	}
	read_pieces(&readers[0]);
	for (uint64_t k = 1; k < nthreads; k++)
		pthread_join(readers[k].thread, NULL);
	for (uint64_t k = 0; k < nthreads; k++)
		sum += readers[k].sum;
	free(readers);
	secs = now_s() - t0;
	c0 = cpu_s(&f1) - c0;
	printf("mode=%s mb=%llu accesses=%llu seconds=%.3f MBps=%.1f cpu=%.3f majflt=%ld",
	       mode_names[mode], (unsigned long long)mb, (unsigned long long)accesses, secs,
	       secs > 0 ? (double)accesses * PIECE / 1048576.0 / secs : 0.0, c0, f1 - f0);
	if (nthreads > 1)
		printf(" threads=%llu", (unsigned long long)nthreads);
	if (write_percent)
		printf(" write=%llu", (unsigned long long)write_percent);
	putchar('\n');
	/* the checksum keeps the reads from being optimised away */
	if (sum == 42)
		fputc('\n', stderr);
	munmap(mem, bytes);
	return 0;
}
