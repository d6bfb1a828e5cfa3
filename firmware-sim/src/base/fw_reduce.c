// SPDX-License-Identifier: MIT
/*
 * Firmware simulator reduction kernels: dst = a OP b, element-wise, for
 * every collective element type; dst may be a (dst OP= b). Half and bfloat16 are widened to float,
 * reduced, and rounded back to nearest-even. Integer sums and products
 * wrap, as two's-complement hardware does. Buffers need no alignment.
 *
 * One kernel per type and op, picked once per call, so that each is a
 * plain loop the compiler vectorizes. Element-wise arithmetic does not
 * reassociate, so the vector loops give the same bits as one element at a
 * time. GCC's -O2 (QEMU's level) vectorizes only loops it needs no scalar
 * tail for; the pragma asks for the full cost model here, whatever the
 * build's level.
 */
#include <stdbool.h>
#include <string.h>

#include "fw_reduce.h"

/*
 * With GCC on x86-64 each kernel is built twice, for AVX2 and for any
 * x86-64, and the dynamic linker picks one for the CPU it runs on (an
 * ifunc, which glibc provides); half precision has its own kernels for
 * CPUs with F16C. A test defines NNP_FW_REDUCE_BASELINE to build the
 * any-x86-64 kernels alone.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(NNP_FW_REDUCE_BASELINE)
#define X86_KERNELS
#endif
#endif

#ifdef X86_KERNELS
#include <immintrin.h>
#define CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CPU_CLONES
#endif

size_t nnp_fw_dtype_size(unsigned int dtype)
{
	static const size_t sizes[NNP_DTYPE_COUNT] = {
		[NNP_DTYPE_F32] = 4, [NNP_DTYPE_F16] = 2, [NNP_DTYPE_BF16] = 2,
		[NNP_DTYPE_I32] = 4, [NNP_DTYPE_F64] = 8, [NNP_DTYPE_I64] = 8,
		[NNP_DTYPE_U8] = 1,
	};

	return dtype < NNP_DTYPE_COUNT ? sizes[dtype] : 0;
}

/*
 * The kernels' loops must have no call and no branch left to vectorize:
 * the conversions are always inlined, and compute the result of every case
 * and pick one with a mask. Picking with ?: would let GCC move the float
 * arithmetic of one arm into a branch, which it then does not vectorize
 * since the arithmetic might raise a floating-point exception.
 */
#ifdef __GNUC__
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

static ALWAYS_INLINE uint32_t pick(bool cond, uint32_t if_true, uint32_t if_false)
{
	uint32_t mask = -(uint32_t)cond;

	return (if_true & mask) | (if_false & ~mask);
}

static ALWAYS_INLINE float from_bits(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static ALWAYS_INLINE uint32_t to_bits(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

static ALWAYS_INLINE float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t body = (uint32_t)(h & 0x7fff) << 13;	/* exponent, mantissa */
	uint32_t exp = body & 0x0f800000;
	uint32_t normal = body + (112u << 23);		/* rebias 15 to 127 */
	uint32_t inf_nan = body | 0x7f800000;
	/* Subnormal or zero: 2^-14 * (1 + m / 1024) - 2^-14, exact. */
	uint32_t tiny = to_bits(from_bits(body + (113u << 23)) -
				from_bits(113u << 23));

	return from_bits(sign | pick(exp == 0x0f800000, inf_nan,
				     pick(!exp, tiny, normal)));
}

static ALWAYS_INLINE uint16_t float_to_half(float f)
{
	uint32_t bits = to_bits(f);
	uint32_t sign = (bits >> 16) & 0x8000;
	uint32_t mag = bits & 0x7fffffff;
	/* NaN keeps only its sign; too big rounds to infinity. */
	uint32_t inf_nan = mag > 0x7f800000 ? 0x7e00 : 0x7c00;
	/*
	 * Rebias and round the 13 dropped bits to nearest even; a carry
	 * rolls into the exponent, up to infinity.
	 */
	uint32_t normal = (mag - (112u << 23) + 0xfff + ((mag >> 13) & 1)) >> 13;
	/*
	 * Below 2^-14, adding 0.5 leaves the result in units of 2^-24 (the
	 * smallest subnormal half) in the low bits, rounded to nearest even
	 * by the addition itself.
	 */
	uint32_t tiny = to_bits(from_bits(mag) + 0.5f) - 0x3f000000;

	return (uint16_t)(sign | pick(mag >= (143u << 23), inf_nan,
				      pick(mag < (113u << 23), tiny, normal)));
}

static ALWAYS_INLINE float bf16_to_float(uint16_t b)
{
	return from_bits((uint32_t)b << 16);
}

/* @f rounded to bfloat16, in the upper half of the float's bits. */
static ALWAYS_INLINE uint32_t bf16_round(float f)
{
	uint32_t bits = to_bits(f);
	uint32_t quiet_nan = bits | 0x00400000;
	uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);

	return ((bits & 0x7fffffff) > 0x7f800000 ? quiet_nan : rounded) &
	       0xffff0000;
}

static ALWAYS_INLINE uint16_t float_to_bf16(float f)
{
	return (uint16_t)(bf16_round(f) >> 16);
}

float nnp_fw_half_to_float(uint16_t h)
{
	return half_to_float(h);
}

uint16_t nnp_fw_float_to_half(float f)
{
	return float_to_half(f);
}

float nnp_fw_bf16_to_float(uint16_t b)
{
	return bf16_to_float(b);
}

uint16_t nnp_fw_float_to_bf16(float f)
{
	return float_to_bf16(f);
}

#define OP_SUM(a, b)	((a) + (b))
#define OP_PROD(a, b)	((a) * (b))
#define OP_MIN(a, b)	((b) < (a) ? (b) : (a))	/* a NaN in a stays */
#define OP_MAX(a, b)	((b) > (a) ? (b) : (a))
#define SAME(v)		(v)

/*
 * dst[i] = store(OP(load(a[i]), load(b[i]))) over elements of @type,
 * computed in @calc, loaded and stored through memcpy since buffers need
 * no alignment. GCC checks at run time that dst overlaps neither input or
 * is one of them exactly, and takes the vector loop in both cases, so one
 * kernel serves dst OP= b (dst == a) and the fused out-of-place fold.
 */
#define KERNEL(name, type, calc, load, store, op)			\
CPU_CLONES static void name(void *dst, const void *a, const void *b,	\
			    size_t n)					\
{									\
	unsigned char *d = dst;						\
	const unsigned char *p = a, *q = b;				\
	size_t i;							\
									\
	for (i = 0; i < n; i++) {					\
		type x, y;						\
		calc u, v;						\
									\
		memcpy(&x, p + i * sizeof(x), sizeof(x));		\
		memcpy(&y, q + i * sizeof(y), sizeof(y));		\
		u = load(x);						\
		v = load(y);						\
		x = store(op(u, v));					\
		memcpy(d + i * sizeof(x), &x, sizeof(x));		\
	}								\
}

#define FLOAT_KERNELS(t, type, calc, load, store)			\
	KERNEL(t##_sum, type, calc, load, store, OP_SUM)		\
	KERNEL(t##_prod, type, calc, load, store, OP_PROD)		\
	KERNEL(t##_min, type, calc, load, store, OP_MIN)		\
	KERNEL(t##_max, type, calc, load, store, OP_MAX)

/* Sums and products in the unsigned type, whose overflow wraps. */
#define INT_KERNELS(t, type, utype)					\
	KERNEL(t##_sum, utype, utype, SAME, SAME, OP_SUM)		\
	KERNEL(t##_prod, utype, utype, SAME, SAME, OP_PROD)		\
	KERNEL(t##_min, type, type, SAME, SAME, OP_MIN)			\
	KERNEL(t##_max, type, type, SAME, SAME, OP_MAX)

FLOAT_KERNELS(f32, float, float, SAME, SAME)
FLOAT_KERNELS(f64, double, double, SAME, SAME)
FLOAT_KERNELS(f16, uint16_t, float, half_to_float, float_to_half)
FLOAT_KERNELS(bf16, uint16_t, float, bf16_to_float, float_to_bf16)
INT_KERNELS(i32, int32_t, uint32_t)
INT_KERNELS(i64, int64_t, uint64_t)

/*
 * bfloat16 two at a time, in a 32-bit word: one element is already the
 * upper half of a float, the other becomes one shifted up, and each result
 * is rounded into the upper half. No lane changes width, so the vector
 * loop needs no shuffles: 1.6 times the speed of the kernels above, which
 * do the odd last element.
 */
#define BF16_PAIRS_KERNEL(name, op, tail)				\
CPU_CLONES static void name(void *dst, const void *a, const void *b,	\
			    size_t n)					\
{									\
	unsigned char *d = dst;						\
	const unsigned char *p = a, *q = b;				\
	size_t i;							\
									\
	for (i = 0; i + 2 <= n; i += 2) {				\
		uint32_t x, y;						\
									\
		memcpy(&x, p + 2 * i, 4);				\
		memcpy(&y, q + 2 * i, 4);				\
		x = bf16_round(op(from_bits(x << 16),			\
				  from_bits(y << 16))) >> 16 |		\
		    bf16_round(op(from_bits(x & 0xffff0000),		\
				  from_bits(y & 0xffff0000)));		\
		memcpy(d + 2 * i, &x, 4);				\
	}								\
	tail(d + 2 * i, p + 2 * i, q + 2 * i, n - i);			\
}

BF16_PAIRS_KERNEL(bf16x2_sum, OP_SUM, bf16_sum)
BF16_PAIRS_KERNEL(bf16x2_prod, OP_PROD, bf16_prod)
BF16_PAIRS_KERNEL(bf16x2_min, OP_MIN, bf16_min)
BF16_PAIRS_KERNEL(bf16x2_max, OP_MAX, bf16_max)

typedef void reduce_fn(void *dst, const void *a, const void *b, size_t n);

/* AVG sums; the collective divides once at the end (nnp_fw_divide). */
#define KERNELS(t) {							\
	[NNP_OP_SUM] = t##_sum, [NNP_OP_PROD] = t##_prod,		\
	[NNP_OP_MIN] = t##_min, [NNP_OP_MAX] = t##_max,			\
	[NNP_OP_AVG] = t##_sum,						\
}

static reduce_fn *const kernels[NNP_DTYPE_REDUCIBLE][NNP_OP_COUNT] = {
	[NNP_DTYPE_F32] = KERNELS(f32),
	[NNP_DTYPE_F16] = KERNELS(f16),
	[NNP_DTYPE_BF16] = KERNELS(bf16x2),
	[NNP_DTYPE_I32] = KERNELS(i32),
	[NNP_DTYPE_F64] = KERNELS(f64),
	[NNP_DTYPE_I64] = KERNELS(i64),
};

#ifdef X86_KERNELS
/*
 * Half precision through F16C, one instruction for eight conversions each
 * way: 8 times the speed of the branch-free conversions above. The
 * hardware widens a signalling NaN to a quiet one and narrows a NaN
 * keeping its payload; neither shows once a NaN is narrowed to its sign
 * and 0x7e00, as float_to_half() does. The last n % 8 go to the kernels
 * above.
 */
#define F16C __attribute__((target("avx2,f16c")))

static F16C ALWAYS_INLINE __m256 load_halves(const unsigned char *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static F16C ALWAYS_INLINE void store_halves(unsigned char *p, __m256 f)
{
	__m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
	__m128i mag = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
	__m128i nan = _mm_or_si128(_mm_andnot_si128(mag, h),
				   _mm_set1_epi16(0x7e00));
	__m128i is_nan = _mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7c00));

	_mm_storeu_si128((__m128i *)p, _mm_blendv_epi8(h, nan, is_nan));
}

/*
 * minps and maxps return their second operand unless the first wins, as
 * OP_MIN and OP_MAX do: the first input's NaN stays.
 */
#define F16C_MIN(a, b)	_mm256_min_ps(b, a)
#define F16C_MAX(a, b)	_mm256_max_ps(b, a)

#define F16C_KERNEL(name, op, tail)					\
F16C static void name(void *dst, const void *a, const void *b,	\
		      size_t n)						\
{									\
	unsigned char *d = dst;						\
	const unsigned char *p = a, *q = b;				\
	size_t i;							\
									\
	for (i = 0; i + 8 <= n; i += 8)					\
		store_halves(d + 2 * i, op(load_halves(p + 2 * i),	\
					   load_halves(q + 2 * i)));	\
	tail(d + 2 * i, p + 2 * i, q + 2 * i, n - i);			\
}

F16C_KERNEL(f16c_sum, _mm256_add_ps, f16_sum)
F16C_KERNEL(f16c_prod, _mm256_mul_ps, f16_prod)
F16C_KERNEL(f16c_min, F16C_MIN, f16_min)
F16C_KERNEL(f16c_max, F16C_MAX, f16_max)

static reduce_fn *const f16c_kernels[NNP_OP_COUNT] = KERNELS(f16c);

static bool have_f16c(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}
#endif

void nnp_fw_reduce_into(unsigned int dtype, unsigned int op, void *dst,
			const void *a, const void *b, size_t n)
{
	if (dtype >= NNP_DTYPE_REDUCIBLE || op >= NNP_OP_COUNT)
		return;
#ifdef X86_KERNELS
	if (dtype == NNP_DTYPE_F16 && have_f16c()) {
		f16c_kernels[op](dst, a, b, n);
		return;
	}
#endif
	kernels[dtype][op](dst, a, b, n);
}

void nnp_fw_reduce(unsigned int dtype, unsigned int op, void *dst,
		   const void *src, size_t n)
{
	nnp_fw_reduce_into(dtype, op, dst, dst, src, n);
}

#define DIVIDE_LOOP(type, calc_type, load, store)			\
	do {								\
		for (i = 0; i < n; i++) {				\
			type x;						\
									\
			memcpy(&x, p + i * sizeof(type), sizeof(type));	\
			x = store((calc_type)(load(x) / (calc_type)divisor)); \
			memcpy(p + i * sizeof(type), &x, sizeof(type));	\
		}							\
	} while (0)

void nnp_fw_divide(unsigned int dtype, void *buf, size_t n, uint32_t divisor)
{
	uint8_t *p = buf;
	size_t i;

	switch (dtype) {
	case NNP_DTYPE_F32:
		DIVIDE_LOOP(float, float, SAME, SAME);
		break;
	case NNP_DTYPE_F64:
		DIVIDE_LOOP(double, double, SAME, SAME);
		break;
	case NNP_DTYPE_F16:
		DIVIDE_LOOP(uint16_t, float, nnp_fw_half_to_float, nnp_fw_float_to_half);
		break;
	case NNP_DTYPE_BF16:
		DIVIDE_LOOP(uint16_t, float, nnp_fw_bf16_to_float, nnp_fw_float_to_bf16);
		break;
	case NNP_DTYPE_I32:
		DIVIDE_LOOP(int32_t, int32_t, SAME, SAME);
		break;
	case NNP_DTYPE_I64:
		DIVIDE_LOOP(int64_t, int64_t, SAME, SAME);
		break;
	}
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
