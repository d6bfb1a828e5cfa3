/* SPDX-License-Identifier: MIT */
/* Firmware simulator reduction kernels and element type conversions. */
#ifndef NNP_FW_REDUCE_H
#define NNP_FW_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "nnp_hw.h"

/* Bytes of one element of @dtype, 0 for an unknown type. */
size_t nnp_fw_dtype_size(unsigned int dtype);
/*
 * dst[i] = dst[i] @op src[i] for @n elements of @dtype. dst may be src, or
 * not overlap it at all.
 * An unknown @dtype or @op leaves dst as it is.
 */
void nnp_fw_reduce(unsigned int dtype, unsigned int op, void *dst,
		   const void *src, size_t n);
/*
 * dst[i] = a[i] @op b[i]: the fold of two inputs into a third buffer in
 * one pass, with no copy of @a first. dst may be @a or @b, or overlap
 * neither; @a and @b may overlap as they like.
 */
void nnp_fw_reduce_into(unsigned int dtype, unsigned int op, void *dst,
			const void *a, const void *b, size_t n);
/* buf[i] /= @divisor: the last step of NNP_OP_AVG (integers truncate). */
void nnp_fw_divide(unsigned int dtype, void *buf, size_t n, uint32_t divisor);

float nnp_fw_half_to_float(uint16_t h);
uint16_t nnp_fw_float_to_half(float f);
float nnp_fw_bf16_to_float(uint16_t b);
uint16_t nnp_fw_float_to_bf16(float f);

#endif /* NNP_FW_REDUCE_H */
