/* SPDX-License-Identifier: MIT */
/*
 * The firmware's scalar reduction kernels as they were before they were
 * vectorized (issue 8): the bit-exact reference of test_fw_reduce and the
 * baseline of reduce_bench. Include after fw_reduce.h.
 */
#ifndef NNP_REDUCE_REF_H
#define NNP_REDUCE_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static float ref_half_to_float(uint16_t h)
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

static uint16_t ref_float_to_half(float f)
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

static float ref_bf16_to_float(uint16_t b)
{
	uint32_t bits = (uint32_t)b << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static uint16_t ref_float_to_bf16(float f)
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

static void ref_reduce(unsigned int dtype, unsigned int op, void *dst,
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
		REDUCE_LOOP(uint16_t, float, ref_half_to_float, ref_float_to_half);
		break;
	case NNP_DTYPE_BF16:
		REDUCE_LOOP(uint16_t, float, ref_bf16_to_float, ref_float_to_bf16);
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

#endif /* NNP_REDUCE_REF_H */
