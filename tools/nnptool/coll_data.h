/* SPDX-License-Identifier: MIT */
/*
 * Test data for collectives, shared by nnptool bench and the guest tests:
 * element access for every nnp_dtype_t, inputs that keep every type and op exact, and
 * the answers, computed on the CPU in double, where sums and products of
 * these small integers are exact whatever the order: an oracle
 * independent of how the device orders and rounds its reduction.
 */
#ifndef NNP_COLL_DATA_H
#define NNP_COLL_DATA_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <nnp/nnp.h>

static inline size_t dtype_bytes(nnp_dtype_t t)
{
	return t == NNP_UINT8 ? 1 : t == NNP_FLOAT16 || t == NNP_BFLOAT16 ? 2 :
	       t == NNP_FLOAT64 || t == NNP_INT64 ? 8 : 4;
}

/*
 * Half and bfloat16 from their definitions (sign, biased exponent,
 * fraction, subnormals below the smallest exponent), with frexp() and
 * ldexp(), not the device's bit arithmetic, so that the oracle shares no
 * code with firmware-sim/src/base/fw_reduce.c. A value the type holds is
 * encoded exactly: every input() is one, and every reduced() of them
 * (small integers), so comparing with reduced() needs no rounding model.
 * Any other value is cut towards zero; only the random inputs of the
 * rounding test meet that, and it compares with what was stored (get()),
 * not with what was asked for.
 */
static inline uint16_t small_float_bits(double v, int exp_bits, int frac_bits)
{
	const int bias = (1 << (exp_bits - 1)) - 1, top = (1 << exp_bits) - 1;
	uint16_t sign = signbit(v) ? (uint16_t)(1u << (exp_bits + frac_bits)) : 0;
	int e, biased;
	double m;

	if (isnan(v))
		return (uint16_t)(sign | top << frac_bits | 1u << (frac_bits - 1));
	if (v == 0)
		return sign;
	if (isinf(v))
		return (uint16_t)(sign | top << frac_bits);
	m = frexp(fabs(v), &e);		/* |v| = m * 2^e, m in [0.5, 1) */
	biased = e - 1 + bias;
	if (biased >= top)
		return (uint16_t)(sign | top << frac_bits);
	if (biased <= 0)	/* subnormal: units of 2^(1 - bias - frac_bits) */
		return (uint16_t)(sign | (uint16_t)ldexp(fabs(v), bias - 1 + frac_bits));
	return (uint16_t)(sign | biased << frac_bits |
			  (uint16_t)ldexp(2 * m - 1, frac_bits));
}

static inline double small_float_value(uint16_t h, int exp_bits, int frac_bits)
{
	const int bias = (1 << (exp_bits - 1)) - 1, top = (1 << exp_bits) - 1;
	int biased = (h >> frac_bits) & top;
	double frac = h & ((1u << frac_bits) - 1), mag;

	if (biased == top)
		mag = frac ? NAN : INFINITY;
	else if (!biased)
		mag = ldexp(frac, 1 - bias - frac_bits);
	else
		mag = ldexp(1 + ldexp(frac, -frac_bits), biased - bias);
	return h >> (exp_bits + frac_bits) ? -mag : mag;
}

static inline void put(nnp_dtype_t t, void *p, size_t i, double v)
{
	switch (t) {
	case NNP_FLOAT32: ((float *)p)[i] = (float)v; break;
	case NNP_FLOAT64: ((double *)p)[i] = v; break;
	case NNP_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case NNP_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	case NNP_FLOAT16: ((uint16_t *)p)[i] = small_float_bits(v, 5, 10); break;
	case NNP_BFLOAT16: ((uint16_t *)p)[i] = small_float_bits(v, 8, 7); break;
	/* Bytes, only ever moved: a small integer as its two's complement. */
	case NNP_UINT8: ((uint8_t *)p)[i] = (uint8_t)(int8_t)v; break;
	}
}

static inline double get(nnp_dtype_t t, const void *p, size_t i)
{
	switch (t) {
	case NNP_FLOAT32: return ((const float *)p)[i];
	case NNP_FLOAT64: return ((const double *)p)[i];
	case NNP_INT32: return ((const int32_t *)p)[i];
	case NNP_INT64: return (double)((const int64_t *)p)[i];
	case NNP_FLOAT16: return small_float_value(((const uint16_t *)p)[i], 5, 10);
	case NNP_BFLOAT16: return small_float_value(((const uint16_t *)p)[i], 8, 7);
	case NNP_UINT8: return (int8_t)((const uint8_t *)p)[i];
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

/* Does @got match @want, a reduction over @n ranks, as stored in type @t? */
static inline int reduction_matches(nnp_dtype_t t, nnp_redop_t op, int n,
				    double want, double got)
{
	if (op != NNP_AVG)
		return got == want;
	if (t == NNP_INT32 || t == NNP_INT64)
		return got == (double)((int64_t)want / n);
	/* An average of integers need not be one: allow the type's rounding. */
	return fabs(got - want / n) <= (t == NNP_FLOAT64 ? 1e-12 : t == NNP_FLOAT32 ?
					1e-6 : t == NNP_FLOAT16 ? 4e-3 : 3e-2);
}

/* Does @got match the reduction of element @i, as stored in type @t? */
static inline int reduced_ok(nnp_dtype_t t, nnp_redop_t op, int n, size_t i,
			     double got)
{
	return reduction_matches(t, op, n, reduced(op, n, i), got);
}

#endif /* NNP_COLL_DATA_H */
