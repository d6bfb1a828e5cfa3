// SPDX-License-Identifier: MIT
/*
 * The firmware's reduction kernels against the scalar loop they replaced
 * (copied below as it was), in the same run, for every type and op, at
 * 64 KiB (in a core's cache) and 16 MiB; and host memcpy of the same size
 * as the roofline. One thread.
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

/* ---- the baseline: the scalar kernels before issue 8 ---- */

static float old_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;
	uint32_t bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | man << 13;
	} else if (exp) {
		bits = sign | (exp + 112) << 23 | man << 13;
	} else if (man) {
		f = ldexpf((float)man, -24);
		return sign ? -f : f;
	} else {
		bits = sign;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static uint16_t old_float_to_half(float f)
{
	uint32_t bits, sign, man;
	int32_t exp;

	memcpy(&bits, &f, sizeof(bits));
	sign = (bits >> 16) & 0x8000;
	exp = (int32_t)((bits >> 23) & 0xff) - 127 + 15;
	man = bits & 0x7fffff;
	if (((bits >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
	if (exp >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		uint32_t shift, half, rest;

		if (exp < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		shift = (uint32_t)(14 - exp);
		half = 1u << (shift - 1);
		rest = man & ((1u << shift) - 1);
		man >>= shift;
		if (rest > half || (rest == half && (man & 1)))
			man++;
		return (uint16_t)(sign | man);
	}
	{
		uint32_t rest = man & 0x1fff;
		uint32_t h = sign | (uint32_t)exp << 10 | man >> 13;

		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++;
		return (uint16_t)h;
	}
}

static float old_bf16_to_float(uint16_t b)
{
	uint32_t bits = (uint32_t)b << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static uint16_t old_float_to_bf16(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	if ((bits & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((bits >> 16) | 0x40);
	bits += 0x7fff + ((bits >> 16) & 1);
	return (uint16_t)(bits >> 16);
}

#define APPLY(op, a, b)						\
	((op) == NNP_OP_PROD ? (a) * (b) :			\
	 (op) == NNP_OP_MIN ? ((b) < (a) ? (b) : (a)) :		\
	 (op) == NNP_OP_MAX ? ((b) > (a) ? (b) : (a)) : (a) + (b))

#define REDUCE_LOOP(type, calc_type, load, store)			\
	do {								\
		for (i = 0; i < n; i++) {				\
			type x, y;					\
			calc_type a, b, r;				\
									\
			memcpy(&x, d + i * sizeof(type), sizeof(type));	\
			memcpy(&y, s + i * sizeof(type), sizeof(type));	\
			a = load(x);					\
			b = load(y);					\
			r = APPLY(op, a, b);				\
			x = store(r);					\
			memcpy(d + i * sizeof(type), &x, sizeof(type));	\
		}							\
	} while (0)

#define SAME(v) (v)

static void old_reduce(unsigned int dtype, unsigned int op, void *dst,
		       const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t i;

	switch (dtype) {
	case NNP_DTYPE_F32:
		REDUCE_LOOP(float, float, SAME, SAME);
		break;
	case NNP_DTYPE_F64:
		REDUCE_LOOP(double, double, SAME, SAME);
		break;
	case NNP_DTYPE_F16:
		REDUCE_LOOP(uint16_t, float, old_half_to_float, old_float_to_half);
		break;
	case NNP_DTYPE_BF16:
		REDUCE_LOOP(uint16_t, float, old_bf16_to_float, old_float_to_bf16);
		break;
	case NNP_DTYPE_I32:
		if (op == NNP_OP_SUM || op == NNP_OP_AVG || op == NNP_OP_PROD)
			REDUCE_LOOP(uint32_t, uint32_t, SAME, SAME);
		else
			REDUCE_LOOP(int32_t, int32_t, SAME, SAME);
		break;
	case NNP_DTYPE_I64:
		if (op == NNP_OP_SUM || op == NNP_OP_AVG || op == NNP_OP_PROD)
			REDUCE_LOOP(uint64_t, uint64_t, SAME, SAME);
		else
			REDUCE_LOOP(int64_t, int64_t, SAME, SAME);
		break;
	}
}

/* ---- timing ---- */

#define TRIALS		5
#define TRIAL_NS	30000000.0	/* repeat a call for at least this long */

enum impl { OLD, NEW, MEMCPY, NIMPLS };

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void run(enum impl impl, unsigned int dtype, unsigned int op,
		void *dst, const void *src, size_t bytes)
{
	size_t n = bytes / nnp_fw_dtype_size(dtype);

	if (impl == OLD)
		old_reduce(dtype, op, dst, src, n);
	else if (impl == NEW)
		nnp_fw_reduce(dtype, op, dst, src, n);
	else
		memcpy(dst, src, bytes);
}

/*
 * The fastest of the calls made in one trial, in nanoseconds: the least
 * disturbed by the other processes of a busy machine.
 */
static double trial(enum impl impl, unsigned int dtype, unsigned int op,
		    void *dst, const void *src, size_t bytes)
{
	double start = now_ns(), t = start, best = INFINITY;

	while (t - start < TRIAL_NS) {
		double before = t;

		run(impl, dtype, op, dst, src, bytes);
		t = now_ns();
		if (t - before < best)
			best = t - before;
	}
	return best;
}

/* Best GB/s of each implementation, trials interleaved. */
static void measure(unsigned int dtype, unsigned int op, void *dst,
		    const void *src, size_t bytes, double gbps[NIMPLS])
{
	static const double traffic[NIMPLS] = { 3, 3, 2 };
	double best[NIMPLS] = { INFINITY, INFINITY, INFINITY };
	int k, impl;

	for (k = 0; k < TRIALS; k++) {
		for (impl = 0; impl < NIMPLS; impl++) {
			double ns = trial(impl, dtype, op, dst, src, bytes);

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
	static const char *const dtypes[NNP_DTYPE_COUNT] = {
		"f32", "f16", "bf16", "i32", "f64", "i64",
	};
	static const char *const ops[NNP_OP_COUNT] = {
		"sum", "prod", "min", "max", "avg",
	};
	static const size_t sizes[] = { 64 << 10, 16 << 20 };
	unsigned int s, dtype, op;
	uint8_t *dst, *src;

	dst = aligned_alloc(64, sizes[1]);
	src = aligned_alloc(64, sizes[1]);
	if (!dst || !src)
		return 1;
	printf("reduce kernels, one thread; GB/s of memory traffic (reduce 3x, memcpy 2x the size)\n");
	printf("%-5s %-5s %8s %10s %10s %10s %10s %10s\n", "type", "op", "size",
	       "scalar", "new", "memcpy", "new/scalar", "new/memcpy");
	for (s = 0; s < 2; s++) {
		/* AVG runs the same kernel as SUM. */
		for (dtype = 0; dtype < NNP_DTYPE_COUNT; dtype++) {
			for (op = 0; op < NNP_OP_AVG; op++) {
				double g[NIMPLS];

				fill(dtype, dst, src, sizes[s]);
				measure(dtype, op, dst, src, sizes[s], g);
				printf("%-5s %-5s %5zu %s %10.2f %10.2f %10.2f %9.2fx %9.2fx\n",
				       dtypes[dtype], ops[op],
				       sizes[s] >> (s ? 20 : 10), s ? "MiB" : "KiB",
				       g[OLD], g[NEW], g[MEMCPY], g[NEW] / g[OLD],
				       g[NEW] / g[MEMCPY]);
				fflush(stdout);
			}
		}
	}
	free(dst);
	free(src);
	return 0;
}
