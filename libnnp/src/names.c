// SPDX-License-Identifier: MIT
/* Names of types, reduction ops and collectives, as traces and errors print them. */
#include "names.h"

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

const char *nnp_opcode_name(unsigned int opcode)
{
	static const char *const names[] = {
		[NNP_CMD_ALLREDUCE] = "allreduce", [NNP_CMD_BROADCAST] = "broadcast",
		[NNP_CMD_ALLGATHER] = "allgather",
		[NNP_CMD_REDUCE_SCATTER] = "reduce_scatter",
		[NNP_CMD_SEND] = "send", [NNP_CMD_RECV] = "recv",
		[NNP_CMD_ALLTOALL] = "alltoall", [NNP_CMD_GATHER] = "gather",
		[NNP_CMD_SCATTER] = "scatter", [NNP_CMD_REDUCE] = "reduce",
		[NNP_CMD_GROUP] = "group",
	};

	return opcode < LEN(names) && names[opcode] ? names[opcode] : "command";
}
