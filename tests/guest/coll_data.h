/* SPDX-License-Identifier: MIT */
/*
 * Test data for collectives, shared by the guest tests: element access
 * for every nnp_dtype_t (half and bfloat16 converted with round to nearest
 * even, as the device does), inputs that keep every type and op exact,
 * and the answers, computed on the CPU.
 */
#ifndef NNP_COLL_DATA_H
#define NNP_COLL_DATA_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <nnp/nnp.h>

static inline size_t dtype_bytes(nnp_dtype_t t)
{
	return t == NNP_FLOAT16 || t == NNP_BFLOAT16 ? 2 :
	       t == NNP_FLOAT64 || t == NNP_INT64 ? 8 : 4;
}

static inline uint16_t to_half(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		uint32_t shift = (uint32_t)(14 - exp), m = mant | 0x800000, h;

		if (shift > 24)
			return (uint16_t)sign;
		h = m >> shift;
		if ((m & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
		    ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	{
		uint32_t h = (uint32_t)exp << 10 | mant >> 13, rest = mant & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
}

static inline float from_half(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
	uint32_t mant = h & 0x3ff, x;
	float f;

	if (exp == 0)
		return (sign ? -1.0f : 1.0f) * ldexpf((float)mant, -24);
	if (exp == 31)
		x = sign | 0x7f800000 | mant << 13;
	else
		x = sign | (exp - 15 + 127) << 23 | mant << 13;
	memcpy(&f, &x, 4);
	return f;
}

static inline uint16_t to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static inline float from_bf16(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

static inline void put(nnp_dtype_t t, void *p, size_t i, double v)
{
	switch (t) {
	case NNP_FLOAT32: ((float *)p)[i] = (float)v; break;
	case NNP_FLOAT64: ((double *)p)[i] = v; break;
	case NNP_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case NNP_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	case NNP_FLOAT16: ((uint16_t *)p)[i] = to_half((float)v); break;
	case NNP_BFLOAT16: ((uint16_t *)p)[i] = to_bf16((float)v); break;
	}
}

static inline double get(nnp_dtype_t t, const void *p, size_t i)
{
	switch (t) {
	case NNP_FLOAT32: return ((const float *)p)[i];
	case NNP_FLOAT64: return ((const double *)p)[i];
	case NNP_INT32: return ((const int32_t *)p)[i];
	case NNP_INT64: return (double)((const int64_t *)p)[i];
	case NNP_FLOAT16: return from_half(((const uint16_t *)p)[i]);
	case NNP_BFLOAT16: return from_bf16(((const uint16_t *)p)[i]);
	}
	return 0;
}

/* Small integers: exact in every type (bfloat16 holds |x| <= 256). */
static inline double input(int rank, size_t i, nnp_redop_t op)
{
	if (op == NNP_PROD)
		return ((i + (size_t)rank) % 3 == 0) ? -1.0 : 1.0;
	return (double)((i * 5 + (size_t)rank * 3) % 9) - 4.0;
}

/* Element @i reduced over @n ranks' input(). */
static inline double reduced(nnp_redop_t op, int n, size_t i)
{
	double acc = input(0, i, op);
	int r;

	for (r = 1; r < n; r++) {
		double v = input(r, i, op);

		acc = op == NNP_PROD ? acc * v : op == NNP_MIN ? (v < acc ? v : acc) :
		      op == NNP_MAX ? (v > acc ? v : acc) : acc + v;
	}
	return acc;
}

/* Does @got match the reduction of element @i, as stored in type @t? */
static inline int reduced_ok(nnp_dtype_t t, nnp_redop_t op, int n, size_t i,
			     double got)
{
	double want = reduced(op, n, i);

	if (op != NNP_AVG)
		return got == want;
	if (t == NNP_INT32 || t == NNP_INT64)
		return got == (double)((int64_t)want / n);
	/* An average of integers need not be one: allow the type's rounding. */
	return fabs(got - want / n) <= (t == NNP_FLOAT64 ? 1e-12 : t == NNP_FLOAT32 ?
					1e-6 : t == NNP_FLOAT16 ? 4e-3 : 3e-2);
}

#endif /* NNP_COLL_DATA_H */
