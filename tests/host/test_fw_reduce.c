// SPDX-License-Identifier: MIT
/*
 * Firmware simulator reduction kernels against the scalar code they
 * replaced, bit for bit: every type and op, lengths 0 to 67 and long odd
 * ones, every misalignment of dst and src, guard bytes, in place; NaNs,
 * infinities, signed zeros, subnormals, rounding ties and integer
 * wrap-around; the fused dst = a op b into a third buffer, and into its
 * second input; both the kernels this machine picks and the baseline
 * x86-64 ones. The half and bfloat16 conversions over every half and
 * bfloat16 and every rounding boundary of every float exponent.
 *
 * In detail (docs/testing.md has the summary):
 * every reduction kernel (six types × five ops), both those the CPU is
 * given (AVX2 clones, F16C) and those any x86-64 runs (`fw_reduce.c` built
 * again without them), bit for bit against the scalar reference kept in the
 * test (only a sum or product of two NaNs may return either, quieted); an
 * unknown type or op leaves dst alone; lengths 0..67 at every misalignment
 * of dst and src, 401 to 65537 elements, guard bytes, src unchanged, dst ==
 * src; the fused dst = a op b into a third, guard-filled buffer (lengths
 * 0..67 at misalignments of all three, long ones, a and b unchanged) and
 * into b; NaNs (quiet, signalling, payloads), ±Inf, ±0, subnormals,
 * rounding ties, integer wrap-around, every special against every special;
 * half/bfloat16 conversions of every half and bfloat16 and of every float
 * exponent at every rounding boundary
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_reduce.h"

/*
 * The kernels again under other names, built without the AVX2 clones and
 * the F16C kernels: the code that a CPU without them runs, and this one
 * would never reach.
 */
#define NNP_FW_REDUCE_BASELINE
#define nnp_fw_dtype_size baseline_dtype_size
#define nnp_fw_reduce baseline_reduce
#define nnp_fw_reduce_into baseline_reduce_into
#define nnp_fw_divide baseline_divide
#define nnp_fw_half_to_float baseline_half_to_float
#define nnp_fw_float_to_half baseline_float_to_half
#define nnp_fw_bf16_to_float baseline_bf16_to_float
#define nnp_fw_float_to_bf16 baseline_float_to_bf16
#include "fw_reduce.c"
#undef nnp_fw_dtype_size
#undef nnp_fw_reduce
#undef nnp_fw_reduce_into
#undef nnp_fw_divide
#undef nnp_fw_half_to_float
#undef nnp_fw_float_to_half
#undef nnp_fw_bf16_to_float
#undef nnp_fw_float_to_bf16

#define GUARD		0xa5
#define PAD		16		/* guard bytes either side of dst */
#define MAX_N		65537
#define MAX_BYTES	(MAX_N * 8 + 8 + 2 * PAD)	/* + misalignment */

/* The reference: the scalar kernels as they were before vectorizing. */
#include "../lib/reduce_ref.h"

/* ---- inputs ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *const dtype_names[NNP_DTYPE_REDUCIBLE] = {
	"f32", "f16", "bf16", "i32", "f64", "i64",
};

static const char *const op_names[NNP_OP_COUNT] = {
	"sum", "prod", "min", "max", "avg",
};

/* Element bit patterns that each type must get exactly right. */
static const uint64_t specials_f32[] = {
	0x00000000, 0x80000000, 0x7f800000, 0xff800000,	/* +-0, +-Inf */
	0x7fc00000, 0xffc00001, 0x7f800001, 0xff812345,	/* qNaN, sNaN, payloads */
	0x00000001, 0x807fffff, 0x00800000, 0x80800001,	/* subnormals, min normal */
	0x7f7fffff, 0xff7fffff, 0x3f800000, 0x33800001,	/* max, 1, 1 + ulp tie fodder */
};

static const uint64_t specials_f64[] = {
	0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
	0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001, 0xfff0123456789abc,
	0x0000000000000001, 0x800fffffffffffff, 0x0010000000000000, 0x8010000000000001,
	0x7fefffffffffffff, 0xffefffffffffffff, 0x3ff0000000000000, 0x3ca0000000000001,
};

static const uint64_t specials_f16[] = {
	0x0000, 0x8000, 0x7c00, 0xfc00,		/* +-0, +-Inf */
	0x7e00, 0xfe01, 0x7c01, 0xfd55,		/* qNaN, sNaN, payloads */
	0x0001, 0x83ff, 0x0400, 0x8401,		/* subnormals, min normal */
	0x7bff, 0xfbff, 0x6800, 0x3c00,		/* max; 2048 + 1 is a tie; 1 */
	0x0200, 0x1400, 0x3c01, 0xbc03,		/* products that tie or underflow */
};

static const uint64_t specials_bf16[] = {
	0x0000, 0x8000, 0x7f80, 0xff80,		/* +-0, +-Inf */
	0x7fc0, 0xffc1, 0x7f81, 0xffa5,		/* qNaN, sNaN, payloads */
	0x0001, 0x807f, 0x0080, 0x8081,		/* subnormals, min normal */
	0x7f7f, 0xff7f, 0x4300, 0x3f80,		/* max; 128 + 1 is a tie; 1 */
	0x3f81, 0xbf83, 0x0040, 0x3400,
};

static const uint64_t specials_i32[] = {
	0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 0x80000001, 0x10000, 0xfffeffff,
};

static const uint64_t specials_i64[] = {
	0, 1, ~0ull, 0x7fffffffffffffff, 0x8000000000000000, 0x8000000000000001,
	0x100000000, 0xfffffffeffffffff,
};

struct type_info {
	const uint64_t *specials;
	unsigned int nspecials;
	unsigned int man_bits, bias;	/* 0 bits: an integer type */
};

#define SPECIALS(a) a, sizeof(a) / sizeof(a[0])

static const struct type_info types[NNP_DTYPE_REDUCIBLE] = {
	[NNP_DTYPE_F32] = { SPECIALS(specials_f32), 23, 127 },
	[NNP_DTYPE_F16] = { SPECIALS(specials_f16), 10, 15 },
	[NNP_DTYPE_BF16] = { SPECIALS(specials_bf16), 7, 127 },
	[NNP_DTYPE_I32] = { SPECIALS(specials_i32), 0, 0 },
	[NNP_DTYPE_F64] = { SPECIALS(specials_f64), 52, 1023 },
	[NNP_DTYPE_I64] = { SPECIALS(specials_i64), 0, 0 },
};

static void put(uint8_t *p, size_t es, uint64_t v)
{
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	memcpy(p, es == 2 ? (void *)&v16 : es == 4 ? (void *)&v32 : (void *)&v, es);
}

static uint64_t get(const uint8_t *p, size_t es)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v;

	if (es == 2) {
		memcpy(&v16, p, 2);
		return v16;
	}
	if (es == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v, p, 8);
	return v;
}

/*
 * A quarter specials, a quarter random bits, half values near 1 (for
 * integers near 0), which add and multiply into rounding ties.
 */
static uint64_t gen(unsigned int dtype)
{
	const struct type_info *t = &types[dtype];
	uint64_t r = rnd(), kind = r & 3, v = rnd();

	r >>= 2;
	if (kind == 0)
		return t->specials[r % t->nspecials];
	if (kind == 1)
		return v;
	if (!t->man_bits)
		return (uint64_t)((int64_t)(r % 201) - 100);
	/* sign, exponent of 2^-3 .. 2^3, random mantissa */
	return (r & 1) << (8 * nnp_fw_dtype_size(dtype) - 1) |
	       (uint64_t)(t->bias - 3 + (r >> 1) % 7) << t->man_bits |
	       (v & ((1ull << t->man_bits) - 1));
}

/*
 * @n elements of @dtype at @a and @b: the first pairs are every special
 * against every special (as many as fit), then generated values.
 */
static void fill(unsigned int dtype, uint8_t *a, uint8_t *b, size_t n)
{
	const struct type_info *t = &types[dtype];
	size_t es = nnp_fw_dtype_size(dtype), i, pairs = t->nspecials * t->nspecials;

	for (i = 0; i < n; i++) {
		if (n > pairs && i < pairs) {
			put(a + i * es, es, t->specials[i / t->nspecials]);
			put(b + i * es, es, t->specials[i % t->nspecials]);
		} else {
			put(a + i * es, es, gen(dtype));
			put(b + i * es, es, gen(dtype));
		}
	}
}

/* ---- checks ---- */

/* The kernels this machine picks, and those any x86-64 can run. */
static const struct {
	const char *name;
	void (*reduce)(unsigned int dtype, unsigned int op, void *dst,
		       const void *src, size_t n);
	void (*reduce_into)(unsigned int dtype, unsigned int op, void *dst,
			    const void *a, const void *b, size_t n);
} impls[] = {
	{ "dispatched", nnp_fw_reduce, nnp_fw_reduce_into },
	{ "baseline", baseline_reduce, baseline_reduce_into },
};

#define NIMPLS	(sizeof(impls) / sizeof(impls[0]))

static bool is_nan(unsigned int dtype, uint64_t v)
{
	switch (dtype) {
	case NNP_DTYPE_F32: return (v & 0x7fffffff) > 0x7f800000;
	case NNP_DTYPE_F64: return (v & ~(1ull << 63)) > 0x7ff0000000000000;
	case NNP_DTYPE_F16: return (v & 0x7fff) > 0x7c00;
	case NNP_DTYPE_BF16: return (v & 0x7fff) > 0x7f80;
	default: return false;
	}
}

/* The reference's answer for one pair of elements. */
static uint64_t ref_one(unsigned int dtype, unsigned int op, uint64_t a, uint64_t b)
{
	size_t es = nnp_fw_dtype_size(dtype);
	uint8_t x[8], y[8];

	put(x, es, a);
	put(y, es, b);
	ref_reduce(dtype, op, x, y, 1);
	return get(x, es);
}

/*
 * Element @i of @got against the reference on inputs @a and @b. When both
 * inputs are NaN, a sum or product may be either one, quieted: C leaves the
 * order of a commutative + to the compiler, and x86 returns the NaN of its
 * first operand. Min and max keep dst's NaN, so they are exact.
 */
static void check_elem(unsigned int impl, unsigned int dtype, unsigned int op,
		       size_t n, size_t i, uint64_t a, uint64_t b, uint64_t got)
{
	uint64_t want = ref_one(dtype, op, a, b);

	if (got == want)
		return;
	if (is_nan(dtype, a) && is_nan(dtype, b) && op != NNP_OP_MIN &&
	    op != NNP_OP_MAX && (got == ref_one(dtype, op, a, a) ||
				 got == ref_one(dtype, op, b, b)))
		return;
	fail_msg("%s %s %s n=%zu [%zu]: %#llx, %#llx gave %#llx, want %#llx",
		 impls[impl].name, dtype_names[dtype], op_names[op], n, i,
		 (unsigned long long)a,
		 (unsigned long long)b, (unsigned long long)got,
		 (unsigned long long)want);
}

static uint8_t dst_buf[MAX_BYTES], src_buf[MAX_BYTES], orig[2 * MAX_BYTES];

static void check_guard(const uint8_t *from, const uint8_t *to)
{
	for (; from < to; from++)
		if (*from != GUARD)
			fail_msg("guard byte at %td is %#x", from - dst_buf, *from);
}

/* One kernel call on @n elements, dst @doff and src @soff bytes in. */
static void check_kernel(unsigned int impl, unsigned int dtype, unsigned int op,
			 size_t n, size_t doff, size_t soff)
{
	size_t es = nnp_fw_dtype_size(dtype), i;
	uint8_t *d = dst_buf + PAD + doff, *s = src_buf + soff;
	uint8_t *end = d + n * es + PAD;

	memset(dst_buf, GUARD, (size_t)(end - dst_buf));
	fill(dtype, d, s, n);
	memcpy(orig, d, n * es);
	memcpy(orig + n * es, s, n * es);
	impls[impl].reduce(dtype, op, d, s, n);
	for (i = 0; i < n; i++)
		check_elem(impl, dtype, op, n, i, get(orig + i * es, es),
			   get(s + i * es, es), get(d + i * es, es));
	check_guard(dst_buf, d);
	check_guard(d + n * es, end);
	assert_memory_equal(s, orig + n * es, n * es);
}

static void test_kernels_short_misaligned(void **state)
{
	unsigned int impl, dtype, op;
	size_t n, doff, soff;

	(void)state;
	for (impl = 0; impl < NIMPLS; impl++)
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++)
			for (op = 0; op < NNP_OP_COUNT; op++)
				for (n = 0; n <= 67; n++)
					for (doff = 0; doff < 8; doff++)
						for (soff = 0; soff < 8; soff++)
							check_kernel(impl, dtype, op, n,
								     doff, soff);
}

static void test_kernels_long_with_specials(void **state)
{
	static const size_t lens[] = { 401, 1001, 4099, MAX_N };
	static const size_t offs[][2] = { { 0, 0 }, { 1, 3 }, { 4, 0 }, { 6, 7 } };
	unsigned int impl, dtype, op, l, o;

	(void)state;
	for (impl = 0; impl < NIMPLS; impl++)
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++)
			for (op = 0; op < NNP_OP_COUNT; op++)
				for (l = 0; l < 4; l++)
					for (o = 0; o < 4; o++)
						check_kernel(impl, dtype, op, lens[l],
							     offs[o][0], offs[o][1]);
}

/* dst == src: every element reduced with itself. */
static void check_in_place(unsigned int impl, unsigned int dtype, unsigned int op,
			   size_t n)
{
	size_t es = nnp_fw_dtype_size(dtype), i;
	uint8_t *d = dst_buf + PAD + 1;

	fill(dtype, d, src_buf, n);
	memcpy(orig, d, n * es);
	impls[impl].reduce(dtype, op, d, d, n);
	for (i = 0; i < n; i++) {
		uint64_t a = get(orig + i * es, es);

		check_elem(impl, dtype, op, n, i, a, a, get(d + i * es, es));
	}
}

static void test_kernels_in_place(void **state)
{
	static const size_t lens[] = { 1, 7, 33, 67, 1001 };
	unsigned int impl, dtype, op, l;

	(void)state;
	for (impl = 0; impl < NIMPLS; impl++)
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++)
			for (op = 0; op < NNP_OP_COUNT; op++)
				for (l = 0; l < 5; l++)
					check_in_place(impl, dtype, op, lens[l]);
}

static uint8_t b_buf[MAX_BYTES];

/*
 * The fused fold dst = a op b into a third buffer whose guard-filled
 * contents it must not read, @doff, @aoff and @boff bytes in: exactly the
 * reference's a op b, guard bytes around dst untouched, a and b unchanged.
 */
static void check_into(unsigned int impl, unsigned int dtype, unsigned int op,
		       size_t n, size_t doff, size_t aoff, size_t boff)
{
	size_t es = nnp_fw_dtype_size(dtype), i;
	uint8_t *d = dst_buf + PAD + doff, *a = src_buf + aoff, *b = b_buf + boff;
	uint8_t *end = d + n * es + PAD;

	memset(dst_buf, GUARD, (size_t)(end - dst_buf));
	fill(dtype, a, b, n);
	memcpy(orig, a, n * es);
	memcpy(orig + n * es, b, n * es);
	impls[impl].reduce_into(dtype, op, d, a, b, n);
	for (i = 0; i < n; i++)
		check_elem(impl, dtype, op, n, i, get(a + i * es, es),
			   get(b + i * es, es), get(d + i * es, es));
	check_guard(dst_buf, d);
	check_guard(d + n * es, end);
	assert_memory_equal(a, orig, n * es);
	assert_memory_equal(b, orig + n * es, n * es);
}

static void test_fused_short_misaligned(void **state)
{
	unsigned int impl, dtype, op;
	size_t n, doff, aoff;

	(void)state;
	for (impl = 0; impl < NIMPLS; impl++)
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++)
			for (op = 0; op < NNP_OP_COUNT; op++)
				for (n = 0; n <= 67; n++)
					for (doff = 0; doff < 8; doff++)
						for (aoff = 0; aoff < 8; aoff++)
							check_into(impl, dtype, op, n, doff,
								   aoff, (doff + aoff) % 8);
}

static void test_fused_long_with_specials(void **state)
{
	static const size_t lens[] = { 401, 1001, 4099, MAX_N };
	static const size_t offs[][3] = {
		{ 0, 0, 0 }, { 1, 3, 5 }, { 4, 0, 2 }, { 6, 7, 7 },
	};
	unsigned int impl, dtype, op, l, o;

	(void)state;
	for (impl = 0; impl < NIMPLS; impl++)
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++)
			for (op = 0; op < NNP_OP_COUNT; op++)
				for (l = 0; l < 4; l++)
					for (o = 0; o < 4; o++)
						check_into(impl, dtype, op, lens[l],
							   offs[o][0], offs[o][1],
							   offs[o][2]);
}

/* dst == b: the fold that writes over its second input. */
static void test_fused_into_second(void **state)
{
	static const size_t lens[] = { 1, 7, 33, 67, 1001, 4099 };
	unsigned int impl, dtype, op, l;

	(void)state;
	for (impl = 0; impl < NIMPLS; impl++)
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++)
			for (op = 0; op < NNP_OP_COUNT; op++)
				for (l = 0; l < 6; l++) {
					size_t es = nnp_fw_dtype_size(dtype), n = lens[l], i;
					uint8_t *a = src_buf + 3, *d = dst_buf + PAD + 1;

					fill(dtype, a, d, n);
					memcpy(orig, d, n * es);
					impls[impl].reduce_into(dtype, op, d, a, d, n);
					for (i = 0; i < n; i++)
						check_elem(impl, dtype, op, n, i,
							   get(a + i * es, es),
							   get(orig + i * es, es),
							   get(d + i * es, es));
				}
}

/* A type or op the device does not know, or bytes (U8, moved and never
 * reduced), leaves dst as it was. */
static void test_unknown_type_or_op(void **state)
{
	float f[2] = { 1.5f, -2.0f }, g[2] = { 4.0f, 8.0f };
	unsigned int impl;

	(void)state;
	for (impl = 0; impl < NIMPLS; impl++) {
		impls[impl].reduce(NNP_DTYPE_COUNT, NNP_OP_SUM, f, g, 2);
		impls[impl].reduce(NNP_DTYPE_F32, NNP_OP_COUNT, f, g, 2);
		impls[impl].reduce(~0u, ~0u, f, g, 2);
		impls[impl].reduce(NNP_DTYPE_U8, NNP_OP_MAX, f, g, 8);
		impls[impl].reduce_into(NNP_DTYPE_U8, NNP_OP_SUM, f, g, g, 8);
		impls[impl].reduce_into(NNP_DTYPE_COUNT, NNP_OP_SUM, f, g, g, 2);
		impls[impl].reduce_into(NNP_DTYPE_F32, NNP_OP_COUNT, f, g, g, 2);
		assert_true(f[0] == 1.5f && f[1] == -2.0f);
	}
}

/* ---- conversions ---- */

static void check_to_half(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	if (nnp_fw_float_to_half(f) != ref_float_to_half(f))
		fail_msg("float %#x to half: %#x, want %#x", bits,
			 nnp_fw_float_to_half(f), ref_float_to_half(f));
	if (nnp_fw_float_to_bf16(f) != ref_float_to_bf16(f))
		fail_msg("float %#x to bf16: %#x, want %#x", bits,
			 nnp_fw_float_to_bf16(f), ref_float_to_bf16(f));
}

static uint32_t float_bits(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

/*
 * Every half and bfloat16 widened; to half and bfloat16, every sign and
 * exponent of float with the dropped bits just below, at and just above
 * the halfway point of every bit position, the kept bit odd and even.
 */
static void test_conversions(void **state)
{
	uint32_t h, se, k, delta, odd, top;

	(void)state;
	for (h = 0; h < 0x10000; h++) {
		uint32_t got = float_bits(nnp_fw_half_to_float((uint16_t)h));
		uint32_t want = float_bits(ref_half_to_float((uint16_t)h));

		if (got != want)
			fail_msg("half %#x: %#x, want %#x", h, got, want);
		assert_int_equal(float_bits(nnp_fw_bf16_to_float((uint16_t)h)),
				 float_bits(ref_bf16_to_float((uint16_t)h)));
	}
	for (se = 0; se < 0x200; se++) {
		check_to_half(se << 23);
		check_to_half(se << 23 | 0x7fffff);
		for (k = 1; k < 24; k++)
			for (delta = 0; delta < 3; delta++)
				for (odd = 0; odd < 2; odd++)
					for (top = 0; top < 4; top++) {
						uint32_t m = (uint32_t)rnd() << (k + 1) |
							     odd << k |
							     ((1u << (k - 1)) + delta - 1);

						check_to_half(se << 23 | (m & 0x7fffff));
					}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_kernels_short_misaligned),
		cmocka_unit_test(test_kernels_long_with_specials),
		cmocka_unit_test(test_kernels_in_place),
		cmocka_unit_test(test_fused_short_misaligned),
		cmocka_unit_test(test_fused_long_with_specials),
		cmocka_unit_test(test_fused_into_second),
		cmocka_unit_test(test_unknown_type_or_op),
	};

	return cmocka_run_group_tests_name("fw_reduce", tests, NULL, NULL);
}
