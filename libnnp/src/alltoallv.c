// SPDX-License-Identifier: MIT
/*
 * nnp_alltoallv: alltoall with a count and a place per peer, as MPI's
 * MPI_Alltoallv and PyTorch's all_to_all_single with splits take it. It is
 * a group (group.c) of one routed message each way with every other rank,
 * which the device runs all at once (hardware interface 1.13), and a copy
 * of the rank's own part, held with the group's collectives so that it
 * keeps its place in the stream: as NCCL builds alltoallv from send and
 * receive in a group. Every message is posted, of 0 elements too, so the
 * pairs' message numbers stay in step on every rank.
 */
#include <nnp_accel.h>
#include "nnp_hw.h"

#include "group.h"
#include "log.h"

/* Whether @n elements of @es bytes from element @at of byte @off fit a size_t. */
static bool span_ok(size_t off, size_t at, size_t n, size_t es)
{
	size_t end;

	return at <= (SIZE_MAX - off) / es && n <= SIZE_MAX / es &&
	       !__builtin_add_overflow(off + at * es, n * es, &end);
}

/* Every peer's span checked; the last error names the first that is not. */
static nnp_result_t spans_ok(const nnp_comm_t *comm, size_t send_off,
			     const size_t *send_counts, const size_t *send_displs,
			     size_t recv_off, const size_t *recv_counts,
			     const size_t *recv_displs, size_t es)
{
	int p;

	for (p = 0; p < comm->nranks; p++) {
		if (!span_ok(send_off, send_displs[p], send_counts[p], es) ||
		    !span_ok(recv_off, recv_displs[p], recv_counts[p], es))
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"nnp_alltoallv: peer %d's count or displacement overflows",
					p);
	}
	if (send_counts[comm->rank] != recv_counts[comm->rank])
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_alltoallv: rank %d sends itself %zu elements but receives %zu",
				comm->rank, send_counts[comm->rank],
				recv_counts[comm->rank]);
	return NNP_SUCCESS;
}

/* The messages and the copy, inside the group the caller opened. */
static nnp_result_t post(nnp_mem_t *send, size_t send_off,
			 const size_t *send_counts, const size_t *send_displs,
			 nnp_mem_t *recv, size_t recv_off,
			 const size_t *recv_counts, const size_t *recv_displs,
			 nnp_dtype_t dtype, nnp_comm_t *comm, nnp_stream_t *stream)
{
	size_t es = nnp_dtype_size(dtype);
	struct nnp_hw_queue_cmd copy;
	int me = comm->rank, d;
	nnp_result_t res;

	res = nnp_copy_cmd("nnp_alltoallv's own part", stream, recv,
			   recv_off + recv_displs[me] * es, send,
			   send_off + send_displs[me] * es, send_counts[me] * es,
			   &copy);
	if (res == NNP_SUCCESS)
		res = nnp_group_refuse(nnp_op_submit(stream, comm, NULL, &copy, false));
	/* Receives first, nearest first, then the sends: any order would do. */
	for (d = 1; d < comm->nranks && res == NNP_SUCCESS; d++) {
		int from = (me + comm->nranks - d) % comm->nranks;

		res = nnp_recv(recv, recv_off + recv_displs[from] * es,
			       recv_counts[from], dtype, from, comm, stream);
	}
	for (d = 1; d < comm->nranks && res == NNP_SUCCESS; d++) {
		int to = (me + d) % comm->nranks;

		res = nnp_send(send, send_off + send_displs[to] * es,
			       send_counts[to], dtype, to, comm, stream);
	}
	return res;
}

nnp_result_t nnp_alltoallv(nnp_mem_t *send, size_t send_off,
			   const size_t *send_counts, const size_t *send_displs,
			   nnp_mem_t *recv, size_t recv_off,
			   const size_t *recv_counts, const size_t *recv_displs,
			   nnp_dtype_t dtype, nnp_comm_t *comm,
			   nnp_stream_t *stream)
{
	size_t es = nnp_dtype_size(dtype);
	nnp_result_t res = nnp_comm_ready(comm, "alltoallv"), end;

	if (res != NNP_SUCCESS)
		return nnp_group_refuse(res);
	if (!comm || !stream || !send || !recv || !es || !send_counts ||
	    !send_displs || !recv_counts || !recv_displs)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
						 "nnp_alltoallv: no comm, stream, buffer or counts, or an unknown type"));
	/* 2 (n - 1) messages on one stream: what one group takes. */
	if (comm->nranks > 64)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_NOT_SUPPORTED,
						 "nnp_alltoallv: %d ranks, past the 64 whose messages one group carries",
						 comm->nranks));
	res = spans_ok(comm, send_off, send_counts, send_displs, recv_off,
		       recv_counts, recv_displs, es);
	if (res != NNP_SUCCESS)
		return nnp_group_refuse(res);
	res = nnp_group_start();
	if (res != NNP_SUCCESS)
		return nnp_group_refuse(res);
	res = post(send, send_off, send_counts, send_displs, recv, recv_off,
		   recv_counts, recv_displs, dtype, comm, stream);
	end = nnp_group_end();
	return res != NNP_SUCCESS ? res : end;
}
