// SPDX-License-Identifier: MIT
/*
 * The firmware's reduction kernels against the scalar loop they replaced
 * (copied below as it was), in the same run, for every type and op, at
 * 64 KiB (in a core's cache) and 16 MiB; and host memcpy of the same size
 * as the roofline. Then the out-of-place fold dst = a op b, fused in one
 * pass, against a copy of a into dst and dst op= b (what a receive did
 * before), at chunk sizes. Last, past the cache (64 MiB, every line from
 * memory): in place (dst op= b) against into a third buffer, which reads
 * each line of dst from memory before writing it: what an out-of-place
 * allreduce's folds pay over an in-place one's. One thread.
 *
 * GB/s counts the memory traffic: a reduction reads dst and src and writes
 * dst (3 x size), memcpy reads and writes once (2 x size). Each figure is
 * the fastest call of several trials, interleaved between the three, since
 * the machine is shared.
 *
 * Usage: reduce_bench (make reduce-bench builds and runs it)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fw_reduce.h"

/* The baseline: the scalar kernels before issue 8. */
#include "../lib/reduce_ref.h"

/* ---- timing ---- */

#define TRIALS		5
#define TRIAL_NS	30000000.0	/* repeat a call for at least this long */

enum impl { OLD, NEW, MEMCPY, COPY_FOLD, FUSED, NIMPLS };

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* One call of @impl; the two-input ones fold dst op= src, ignoring @a. */
static void run(enum impl impl, unsigned int dtype, unsigned int op,
		void *dst, const void *a, const void *src, size_t bytes)
{
	size_t n = bytes / nnp_fw_dtype_size(dtype);

	switch (impl) {
	case OLD:
		ref_reduce(dtype, op, dst, src, n);
		break;
	case NEW:
		nnp_fw_reduce(dtype, op, dst, src, n);
		break;
	case MEMCPY:
		memcpy(dst, src, bytes);
		break;
	case COPY_FOLD:
		memcpy(dst, a, bytes);
		nnp_fw_reduce(dtype, op, dst, src, n);
		break;
	default:
		nnp_fw_reduce_into(dtype, op, dst, a, src, n);
		break;
	}
}

/*
 * The fastest of the calls made in one trial, in nanoseconds: the least
 * disturbed by the other processes of a busy machine.
 */
static double trial(enum impl impl, unsigned int dtype, unsigned int op,
		    void *dst, const void *a, const void *src, size_t bytes)
{
	double start = now_ns(), t = start, best = INFINITY;

	while (t - start < TRIAL_NS) {
		double before = t;

		run(impl, dtype, op, dst, a, src, bytes);
		t = now_ns();
		if (t - before < best)
			best = t - before;
	}
	return best;
}

#define BIT(impl)	(1u << (impl))

/*
 * Best GB/s of the implementations in the mask @impls, trials interleaved;
 * the out-of-place folds count the 3 x size they must move.
 */
static void measure(unsigned int impls, unsigned int dtype, unsigned int op,
		    void *dst, const void *a, const void *src, size_t bytes,
		    double gbps[NIMPLS])
{
	static const double traffic[NIMPLS] = { 3, 3, 2, 3, 3 };
	double best[NIMPLS];
	int k, impl;

	for (impl = 0; impl < NIMPLS; impl++)
		best[impl] = INFINITY;
	for (k = 0; k < TRIALS; k++) {
		for (impl = 0; impl < NIMPLS; impl++) {
			double ns;

			if (!(impls & BIT(impl)))
				continue;
			ns = trial(impl, dtype, op, dst, a, src, bytes);
			if (ns < best[impl])
				best[impl] = ns;
		}
	}
	for (impl = 0; impl < NIMPLS; impl++)
		gbps[impl] = traffic[impl] * bytes / best[impl];
}

/*
 * dst 1.5 (3 for integers), src 1: values that stay normal however often
 * they are reduced, so that no run hits the slow path of subnormals.
 */
static void fill(unsigned int dtype, uint8_t *dst, uint8_t *src, size_t bytes)
{
	size_t es = nnp_fw_dtype_size(dtype), i;
	union { float f; double d; int32_t i32; int64_t i64; uint16_t h; } a, b;

	switch (dtype) {
	case NNP_DTYPE_F32: a.f = 1.5f; b.f = 1.0f; break;
	case NNP_DTYPE_F64: a.d = 1.5; b.d = 1.0; break;
	case NNP_DTYPE_F16: a.h = 0x3e00; b.h = 0x3c00; break;
	case NNP_DTYPE_BF16: a.h = 0x3fc0; b.h = 0x3f80; break;
	case NNP_DTYPE_I32: a.i32 = 3; b.i32 = 1; break;
	default: a.i64 = 3; b.i64 = 1; break;
	}
	for (i = 0; i < bytes; i += es) {
		memcpy(dst + i, &a, es);
		memcpy(src + i, &b, es);
	}
}

int main(void)
{
	static const char *const dtypes[NNP_DTYPE_REDUCIBLE] = {
		"f32", "f16", "bf16", "i32", "f64", "i64",
	};
	static const char *const ops[NNP_OP_COUNT] = {
		"sum", "prod", "min", "max", "avg",
	};
	static const size_t sizes[] = { 64 << 10, 16 << 20 };
	static const size_t chunks[] = { 64 << 10, 1 << 20 };
	const size_t past_cache = 64 << 20;
	unsigned int s, dtype, op;
	uint8_t *dst, *src, *a;

	dst = aligned_alloc(64, past_cache);
	src = aligned_alloc(64, past_cache);
	a = aligned_alloc(64, past_cache);
	if (!dst || !src || !a)
		return 1;
	printf("reduce kernels, one thread; GB/s of memory traffic (reduce 3x, memcpy 2x the size)\n");
	printf("%-5s %-5s %8s %10s %10s %10s %10s %10s\n", "type", "op", "size",
	       "scalar", "new", "memcpy", "new/scalar", "new/memcpy");
	for (s = 0; s < 2; s++) {
		/* AVG runs the same kernel as SUM. */
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++) {
			for (op = 0; op < NNP_OP_AVG; op++) {
				double g[NIMPLS];

				fill(dtype, dst, src, sizes[s]);
				measure(BIT(OLD) | BIT(NEW) | BIT(MEMCPY), dtype,
					op, dst, NULL, src, sizes[s], g);
				printf("%-5s %-5s %5zu %s %10.2f %10.2f %10.2f %9.2fx %9.2fx\n",
				       dtypes[dtype], ops[op],
				       sizes[s] >> (s ? 20 : 10), s ? "MiB" : "KiB",
				       g[OLD], g[NEW], g[MEMCPY], g[NEW] / g[OLD],
				       g[NEW] / g[MEMCPY]);
				fflush(stdout);
			}
		}
	}
	printf("\nout-of-place fold dst = a op b, sum; GB/s of 3x the size\n");
	printf("%-5s %8s %10s %10s %10s\n", "type", "size", "copy+fold",
	       "fused", "fused/copy+fold");
	for (s = 0; s < 2; s++) {
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++) {
			double g[NIMPLS];

			fill(dtype, a, src, chunks[s]);
			measure(BIT(COPY_FOLD) | BIT(FUSED), dtype, NNP_OP_SUM,
				dst, a, src, chunks[s], g);
			printf("%-5s %5zu %s %10.2f %10.2f %14.2fx\n",
			       dtypes[dtype], chunks[s] >> (s ? 20 : 10),
			       s ? "MiB" : "KiB", g[COPY_FOLD], g[FUSED],
			       g[FUSED] / g[COPY_FOLD]);
			fflush(stdout);
		}
	}
	printf("\nfold past the cache, sum, %zu MiB; GB/s of 3x the size\n",
	       past_cache >> 20);
	printf("%-5s %10s %10s %14s\n", "type", "in place", "fused",
	       "fused/in place");
	for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++) {
		double g[NIMPLS];

		fill(dtype, a, src, past_cache);
		memcpy(dst, a, past_cache);
		measure(BIT(NEW) | BIT(FUSED), dtype, NNP_OP_SUM, dst, a, src,
			past_cache, g);
		printf("%-5s %10.2f %10.2f %13.2fx\n", dtypes[dtype], g[NEW],
		       g[FUSED], g[FUSED] / g[NEW]);
		fflush(stdout);
	}
	free(dst);
	free(src);
	free(a);
	return 0;
}
