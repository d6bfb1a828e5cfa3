/* SPDX-License-Identifier: MIT */
/* libnnp internals shared between its source files. */
#ifndef NNP_INTERNAL_H
#define NNP_INTERNAL_H

#include "nnp/nnp.h"

#define NNP_ACCEL_DIR	"/dev/accel"
#define NNP_MAX_DEVICES	256

struct nnp_device {
	int fd;
	char path[64];
};

nnp_result_t nnp_result_from_errno(int err);

/* Paths of the nnp device nodes, in node order; returns their number. */
nnp_result_t nnp_enumerate(char (*paths)[64], int max, int *count);

#endif /* NNP_INTERNAL_H */
