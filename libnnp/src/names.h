/* SPDX-License-Identifier: MIT */
/*
 * Names of types, reduction ops and collectives, and of the device's and
 * driver's codes (names.c). nnptool builds names.c in too, so that its
 * coredump decoder says what traces and errors say.
 */
#ifndef NNP_NAMES_H
#define NNP_NAMES_H

#include <stdint.h>

#include "nnp/nnp.h"

/* "f32", ... for an nnp_dtype_t (the device's codes are the same); "?" if none. */
const char *nnp_dtype_name(int dtype);
/* "sum", ... for an nnp_redop_t; NULL if none. */
const char *nnp_redop_name(int op);
/* "copy", "fill", "allreduce", ... for any NNP_CMD_* opcode; NULL if none. */
const char *nnp_cmd_name(unsigned int opcode);
/* "allreduce", ... for a queue command's opcode; "command" if no collective's. */
const char *nnp_opcode_name(unsigned int opcode);
/* "ok", "link_down", ... for an NNP_STATUS_* as traces write it; NULL if none. */
const char *nnp_status_name(unsigned int status);
/* "job-timeout", ... for a DRM_NNP_RESET_* reason; NULL if none. */
const char *nnp_reset_reason_name(uint32_t reason);

#endif /* NNP_NAMES_H */
