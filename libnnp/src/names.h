/* SPDX-License-Identifier: MIT */
/* Names of types, reduction ops and collectives (names.c). */
#ifndef NNP_NAMES_H
#define NNP_NAMES_H

#include "nnp/nnp.h"

/* "f32", ... for an nnp_dtype_t (the device's codes are the same); "?" if none. */
const char *nnp_dtype_name(int dtype);
/* "sum", ... for an nnp_redop_t; NULL if none. */
const char *nnp_redop_name(int op);
/* "allreduce", ... for a queue command's opcode; "command" if no collective's. */
const char *nnp_opcode_name(unsigned int opcode);

#endif /* NNP_NAMES_H */
