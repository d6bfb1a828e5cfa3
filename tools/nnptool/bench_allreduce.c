// SPDX-License-Identifier: MIT
/*
 * nnptool bench allreduce [--min SIZE] [--max SIZE] [--iters N]: float sum
 * allreduce across every device of this host, device memory to device
 * memory over the links, timed by size in nccl-tests' columns; every
 * result is checked and wrong elements counted. busbw = algbw * 2(n-1)/n.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nnptool.h"

#define MAXDEV 64

struct ar {
	int n;
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	nnp_mem_t *send[MAXDEV], *recv[MAXDEV], *host[MAXDEV];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static float input(int rank, size_t i)
{
	return (float)((i * 3 + (size_t)rank) % 5);
}

/* Inputs into every rank's send buffer, by DMA from host memory. */
static nnp_result_t load(struct ar *a, size_t count)
{
	nnp_result_t r = NNP_SUCCESS;
	int k;

	for (k = 0; k < a->n && r == NNP_SUCCESS; k++) {
		float *h;
		size_t i;

		r = nnp_mem_map(a->host[k], (void **)&h);
		for (i = 0; i < count && r == NNP_SUCCESS; i++)
			h[i] = input(k, i);
		if (r == NNP_SUCCESS)
			r = nnp_memcpy_async(a->s[k], a->send[k], 0, a->host[k], 0,
					     count * sizeof(float));
		if (r == NNP_SUCCESS)
			r = nnp_stream_synchronize(a->s[k]);
	}
	return r;
}

/* Wrong elements in @out of every rank. */
static long check(struct ar *a, nnp_mem_t **out, size_t count, nnp_result_t *r)
{
	long wrong = 0;
	int k, j;

	for (k = 0; k < a->n && *r == NNP_SUCCESS; k++) {
		float *h;
		size_t i;

		*r = nnp_memcpy_async(a->s[k], a->host[k], 0, out[k], 0,
				      count * sizeof(float));
		if (*r == NNP_SUCCESS)
			*r = nnp_stream_synchronize(a->s[k]);
		if (*r == NNP_SUCCESS)
			*r = nnp_mem_map(a->host[k], (void **)&h);
		for (i = 0; i < count && *r == NNP_SUCCESS; i++) {
			float want = 0;

			for (j = 0; j < a->n; j++)
				want += input(j, i);
			wrong += h[i] != want;
		}
	}
	return wrong;
}

/* @reps allreduces on every rank; seconds per allreduce. */
static double run(struct ar *a, nnp_mem_t **out, size_t count, unsigned int reps,
		  nnp_result_t *r)
{
	double t0 = now_s();
	unsigned int i;
	int k;

	for (i = 0; i < reps && *r == NNP_SUCCESS; i++) {
		for (k = 0; k < a->n && *r == NNP_SUCCESS; k++)
			*r = nnp_allreduce(a->send[k], 0, out[k], 0, count, NNP_FLOAT32,
					   NNP_SUM, a->comm[k], a->s[k]);
		for (k = 0; k < a->n && *r == NNP_SUCCESS; k++)
			*r = nnp_stream_synchronize(a->s[k]);
	}
	return (now_s() - t0) / reps;
}

static void row_part(size_t bytes, double t, int n, long wrong)
{
	double algbw = bytes / t / 1e9;

	printf("  %8.1f %7.3f %7.3f %7ld", t * 1e6, algbw,
	       algbw * 2 * (n - 1) / n, wrong);
}

static int bench(struct ar *a, size_t min, size_t max, unsigned int iters)
{
	nnp_result_t r = NNP_SUCCESS;
	long total_wrong = 0;
	size_t size;

	printf("# nnptool bench allreduce: %d devices, float sum, %u iterations\n",
	       a->n, iters);
	printf("#%57s%34s\n", "out-of-place", "in-place");
	printf("# %10s %12s %6s %6s  %8s %7s %7s %7s  %8s %7s %7s %7s\n", "size",
	       "count", "type", "redop", "time", "algbw", "busbw", "#wrong",
	       "time", "algbw", "busbw", "#wrong");
	printf("# %10s %12s %6s %6s  %8s %7s %7s %7s  %8s %7s %7s %7s\n", "(B)",
	       "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
	       "(GB/s)", "(GB/s)", "");
	for (size = min; size <= max && r == NNP_SUCCESS; size *= 2) {
		size_t count = size / sizeof(float);
		double t;
		long wrong;

		r = load(a, count);
		if (r != NNP_SUCCESS)
			break;
		printf("  %10zu %12zu %6s %6s", count * sizeof(float), count, "float",
		       "sum");
		t = run(a, a->recv, count, 1, &r);
		t = run(a, a->recv, count, iters, &r);
		wrong = check(a, a->recv, count, &r);
		total_wrong += wrong;
		row_part(count * sizeof(float), t, a->n, wrong);
		/* In place: time it, then start again from the inputs to check. */
		t = run(a, a->send, count, iters, &r);
		if (r == NNP_SUCCESS)
			r = load(a, count);
		if (r == NNP_SUCCESS)
			run(a, a->send, count, 1, &r);
		wrong = check(a, a->send, count, &r);
		total_wrong += wrong;
		row_part(count * sizeof(float), t, a->n, wrong);
		printf("\n");
		fflush(stdout);
	}
	if (r != NNP_SUCCESS)
		return nnptool_fail("bench allreduce", r);
	printf("# Out of bounds values : %ld %s\n", total_wrong,
	       total_wrong ? "FAILED" : "OK");
	return total_wrong ? NNPTOOL_EXIT_ERROR : NNPTOOL_EXIT_OK;
}

int cmd_bench_allreduce(int argc, char **argv)
{
	size_t min = 8, max = 4u << 20;
	unsigned long iters = 5;
	struct ar a = { 0 };
	nnp_result_t r;
	int i, ret;

	for (i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "--min") || !strcmp(argv[i], "--max")) &&
		    i + 1 < argc) {
			size_t *to = argv[i][3] == 'i' ? &min : &max;

			if (parse_size(argv[++i], to) || *to < sizeof(float)) {
				fprintf(stderr, "nnptool: bad size '%s'\n", argv[i]);
				return NNPTOOL_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = strtoul(argv[++i], NULL, 0);
			if (!iters || iters > 100000) {
				fprintf(stderr, "nnptool: bad --iters\n");
				return NNPTOOL_EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "usage: nnptool bench allreduce [--min SIZE] "
				"[--max SIZE] [--iters N]\n");
			return NNPTOOL_EXIT_USAGE;
		}
	}
	r = nnp_device_count(&a.n);
	if (r == NNP_SUCCESS && a.n > MAXDEV)
		a.n = MAXDEV;
	for (i = 0; i < a.n && r == NNP_SUCCESS; i++) {
		r = nnp_device_open(i, &a.dev[i]);
		if (r == NNP_SUCCESS)
			r = nnp_stream_create(a.dev[i], &a.s[i]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a.dev[i], NNP_MEM_DEVICE, max, 0, &a.send[i]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a.dev[i], NNP_MEM_DEVICE, max, 0, &a.recv[i]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a.dev[i], NNP_MEM_HOST, max, 0, &a.host[i]);
	}
	if (r == NNP_SUCCESS)
		r = nnp_comm_init_all(a.dev, a.n, a.comm);
	ret = r == NNP_SUCCESS ? bench(&a, min, max, (unsigned int)iters) :
	      nnptool_fail("bench allreduce", r);
	for (i = 0; i < a.n; i++) {
		nnp_comm_destroy(a.comm[i]);
		nnp_mem_free(a.host[i]);
		nnp_mem_free(a.recv[i]);
		nnp_mem_free(a.send[i]);
		nnp_stream_destroy(a.s[i]);
		nnp_device_close(a.dev[i]);
	}
	return ret;
}
