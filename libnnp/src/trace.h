/* SPDX-License-Identifier: MIT */
/*
 * libnnp's tracer (docs/trace.md): with NNP_TRACE_FILE set, each
 * collective and point-to-point message becomes one JSON line.
 */
#ifndef NNP_TRACE_H
#define NNP_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "comm.h"
#include "stream.h"

/* NNP_TRACE_FILE was set when libnnp was loaded. */
extern bool nnp_trace_enabled;

/* What a traced operation was asked to do, as its line says it. */
struct nnp_trace_op {
	const char *name;	/* "allreduce", ..., "send", "recv" */
	nnp_dtype_t dtype;
	size_t count;
	int redop;		/* nnp_redop_t, or -1: none */
	int root;		/* -1: none */
	int peer;		/* -1: none */
};

/*
 * Open the trace file for the process's first communicator, rank @rank
 * (for %r), or with %r in the path for @dev's first; later calls do
 * nothing. The last error says why it failed.
 */
nnp_result_t nnp_trace_open(const nnp_device_t *dev, int rank);
/* Write out what is buffered (a communicator is going away). */
void nnp_trace_flush(void);
/*
 * Submit @cmd, operation @op of @comm, on @s between two TIMESTAMP
 * commands, and remember it until its completion is reaped.
 */
nnp_result_t nnp_trace_submit(nnp_stream_t *s, nnp_comm_t *comm,
			      const struct nnp_trace_op *op,
			      struct nnp_hw_queue_cmd *cmd);
/*
 * Remember operation @op of @comm, command @seq of @s already submitted
 * as a member of a GROUP (group.c): its line has no device times.
 */
void nnp_trace_held(nnp_stream_t *s, nnp_comm_t *comm,
		    const struct nnp_trace_op *op, uint64_t seq);
/* Stream @s reaped command @seq with @status (s->trace is not NULL). */
void nnp_trace_reaped(nnp_stream_t *s, uint64_t seq, uint16_t status);
/*
 * The commands @s still had queued will never run (a reset, or the
 * stream going away): their lines say not_run.
 */
void nnp_trace_dropped(nnp_stream_t *s);
/* Free @s's tracing state, after nnp_trace_dropped(). */
void nnp_trace_stream_free(nnp_stream_t *s);

#endif /* NNP_TRACE_H */
