/* SPDX-License-Identifier: MIT */
/*
 * A small table exchanged among a communicator's ranks on the device: an
 * allgather of the communicator itself on a stream of the exchange's own.
 * nnp_comm_split() tells the parent's ranks each other's colors and ports
 * this way, and nnp_comm_shrink() has the survivors check that they agree.
 * It is bounded by the communicator's timeout and carries nothing but
 * what its epoch names; no host connection or secret is needed.
 */
#ifndef NNP_COMM_EXCHANGE_H
#define NNP_COMM_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

#include "comm.h"

struct nnp_exchange {
	nnp_comm_t *comm;
	const char *what;	/* starts its errors, as "nnp_comm_split" */
	nnp_stream_t *s;
	nnp_mem_t *dev, *host;
	uint8_t *table;		/* host's mapping: every rank's part, by rank */
};

/* Buffers for parts of up to @size bytes each of @comm's ranks. */
nnp_result_t nnp_exchange_open(struct nnp_exchange *x, nnp_comm_t *comm,
			       size_t size, const char *what);
/* Waits for what its stream still runs on the buffers, then frees them. */
void nnp_exchange_close(struct nnp_exchange *x);

/*
 * Every rank's @size bytes (a multiple of 4, at most the open's) into
 * x->table, by rank, this rank's being @mine. NNP_ERROR_COMM_FAILED when
 * the allgather fails (its stream's error in the last error).
 */
nnp_result_t nnp_exchange(struct nnp_exchange *x, const void *mine, size_t size);

#endif /* NNP_COMM_EXCHANGE_H */
