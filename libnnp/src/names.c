// SPDX-License-Identifier: MIT
/*
 * Names of types, reduction ops and collectives, and of the device's and
 * driver's codes, as traces, errors and `nnptool coredump` print them.
 */
#include "names.h"

#include "nnp_accel.h"
#include "nnp_hw.h"

#define LEN(a)	(sizeof(a) / sizeof((a)[0]))

const char *nnp_dtype_name(int dtype)
{
	static const char *const names[] = {
		[NNP_FLOAT32] = "f32", [NNP_FLOAT16] = "f16",
		[NNP_BFLOAT16] = "bf16", [NNP_INT32] = "i32",
		[NNP_FLOAT64] = "f64", [NNP_INT64] = "i64", [NNP_UINT8] = "u8",
	};

	return dtype >= 0 && dtype < (int)LEN(names) && names[dtype] ?
	       names[dtype] : "?";
}

const char *nnp_redop_name(int op)
{
	static const char *const names[] = {
		[NNP_SUM] = "sum", [NNP_PROD] = "prod", [NNP_MIN] = "min",
		[NNP_MAX] = "max", [NNP_AVG] = "avg",
	};

	return op >= 0 && op < (int)LEN(names) ? names[op] : NULL;
}

const char *nnp_cmd_name(unsigned int opcode)
{
	static const char *const names[] = {
		[NNP_CMD_NOP] = "nop", [NNP_CMD_COPY] = "copy",
		[NNP_CMD_FILL] = "fill", [NNP_CMD_TIMESTAMP] = "timestamp",
		[NNP_CMD_BARRIER] = "barrier",
		[NNP_CMD_ALLREDUCE] = "allreduce", [NNP_CMD_BROADCAST] = "broadcast",
		[NNP_CMD_ALLGATHER] = "allgather",
		[NNP_CMD_REDUCE_SCATTER] = "reduce_scatter",
		[NNP_CMD_SEND] = "send", [NNP_CMD_RECV] = "recv",
		[NNP_CMD_ALLTOALL] = "alltoall", [NNP_CMD_GATHER] = "gather",
		[NNP_CMD_SCATTER] = "scatter", [NNP_CMD_REDUCE] = "reduce",
		[NNP_CMD_GROUP] = "group",
	};

	return opcode < LEN(names) ? names[opcode] : NULL;
}

const char *nnp_opcode_name(unsigned int opcode)
{
	/* The opcodes before ALLREDUCE are the copy engine's, no collective. */
	const char *name = opcode >= NNP_CMD_ALLREDUCE ? nnp_cmd_name(opcode) : NULL;

	return name ? name : "command";
}

const char *nnp_status_name(unsigned int status)
{
	static const char *const names[] = {
		[NNP_STATUS_SUCCESS] = "ok", [NNP_STATUS_LINK_DOWN] = "link_down",
		[NNP_STATUS_PEER_TIMEOUT] = "peer_timeout",
		[NNP_STATUS_ABORTED] = "aborted", [NNP_STATUS_MISMATCH] = "mismatch",
		[NNP_STATUS_PEER_LEFT] = "peer_left",
		[NNP_STATUS_NOT_FOUND] = "not_found",
		[NNP_STATUS_OUT_OF_BOUNDS] = "out_of_bounds",
		[NNP_STATUS_KEY_INVALID] = "key_invalid",
		[NNP_STATUS_ACCESS_DENIED] = "access_denied",
		[NNP_STATUS_INVALID_FIELD] = "invalid_field",
		[NNP_STATUS_NO_RESOURCES] = "no_resources",
		[NNP_STATUS_DMA_ERROR] = "dma_error",
	};

	return status < LEN(names) ? names[status] : NULL;
}

const char *nnp_reset_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[DRM_NNP_RESET_NONE] = "none", [DRM_NNP_RESET_HEARTBEAT] = "heartbeat",
		[DRM_NNP_RESET_JOB_TIMEOUT] = "job-timeout",
		[DRM_NNP_RESET_ADMIN] = "admin", [DRM_NNP_RESET_FW_HALTED] = "fw-halted",
		[DRM_NNP_RESET_USER] = "user", [DRM_NNP_RESET_PCI] = "pci",
		[DRM_NNP_RESET_SUSPEND] = "suspend",
	};

	return reason < LEN(names) ? names[reason] : NULL;
}
