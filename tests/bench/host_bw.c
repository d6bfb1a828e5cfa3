// SPDX-License-Identifier: MIT
/*
 * The host's memory baselines of `make bench`, measured natively:
 *   roofline: B, the aggregate copy bandwidth of one thread per core, each
 *     copying its own SIZE-byte buffer, bytes read plus bytes written (so
 *     a ring allreduce of the devices, which share this memory, is bounded
 *     by busbw <= 2B/(5n): see docs/architecture.md);
 *   memcpy: one thread's memcpy bandwidth by size, bytes copied once, as
 *     nnptool bench copy counts its host<->device copies.
 * Each is the best of RUNS runs.
 * usage: host_bw [--threads N] [--size BYTES] [--min BYTES] [--max BYTES]
 * Prints "roofline THREADS SIZE GBPS" then "memcpy SIZE REPS GBPS" lines.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bytes each measurement moves at least, so small sizes run long enough. */
#define MIN_BYTES	(256u << 20)
/* Best of this many runs of each measurement: the machine is shared. */
#define RUNS		5

struct worker {
	pthread_t tid;
	pthread_barrier_t *start;
	size_t size, reps;
	char *src, *dst;
	double t0, t1;		/* when this thread started and finished */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *copy_loop(void *arg)
{
	struct worker *w = arg;
	size_t i;

	pthread_barrier_wait(w->start);
	w->t0 = now_s();
	for (i = 0; i < w->reps; i++) {
		memcpy(w->dst, w->src, w->size);
		/* Keep the compiler from folding the copies into one. */
		__asm__ __volatile__("" : : "r"(w->dst) : "memory");
	}
	w->t1 = now_s();
	return NULL;
}

/*
 * GB/s copied once by @threads threads, each @reps copies of its own
 * @size bytes, timed by the threads themselves (a busy machine may run
 * them before it runs us) from the first start to the last finish.
 */
static double copy_gbps(struct worker *w, int threads, size_t size, size_t reps)
{
	pthread_barrier_t start;
	double t0 = 1e300, t1 = 0;
	int i;

	pthread_barrier_init(&start, NULL, threads + 1);
	for (i = 0; i < threads; i++) {
		w[i].start = &start;
		w[i].size = size;
		w[i].reps = reps;
		pthread_create(&w[i].tid, NULL, copy_loop, &w[i]);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].tid, NULL);
		t0 = w[i].t0 < t0 ? w[i].t0 : t0;
		t1 = w[i].t1 > t1 ? w[i].t1 : t1;
	}
	pthread_barrier_destroy(&start);
	return (double)size * reps * threads / (t1 - t0) / 1e9;
}

static double best_gbps(struct worker *w, int threads, size_t size, size_t reps)
{
	double best = 0;
	int i;

	for (i = 0; i < RUNS; i++) {
		double gbps = copy_gbps(w, threads, size, reps);

		best = gbps > best ? gbps : best;
	}
	return best;
}

static size_t arg(int argc, char **argv, const char *name, size_t def)
{
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtoull(argv[i + 1], NULL, 0);
	return def;
}

int main(int argc, char **argv)
{
	int threads = (int)arg(argc, argv, "--threads", sysconf(_SC_NPROCESSORS_ONLN));
	size_t roof = arg(argc, argv, "--size", 64u << 20);
	size_t min = arg(argc, argv, "--min", 4096), max = arg(argc, argv, "--max", 64u << 20);
	size_t buf = roof > max ? roof : max, size;
	struct worker *w = calloc(threads, sizeof(*w));
	int i;

	for (i = 0; w && i < threads; i++) {
		w[i].src = malloc(buf);
		w[i].dst = malloc(buf);
		if (!w[i].src || !w[i].dst)
			break;
		/* Fault the pages in before any timing. */
		memset(w[i].src, 1, buf);
		memset(w[i].dst, 2, buf);
	}
	if (threads < 1 || i < threads || min < 1) {
		fprintf(stderr, "host_bw: bad arguments or out of memory\n");
		return 1;
	}
	printf("roofline %d %zu %.3f\n", threads, roof,
	       2 * best_gbps(w, threads, roof, 2));
	for (size = min; size <= max; size *= 4) {
		size_t reps = MIN_BYTES / size ? MIN_BYTES / size : 1;

		printf("memcpy %zu %zu %.3f\n", size, reps, best_gbps(w, 1, size, reps));
		fflush(stdout);
	}
	return 0;
}
