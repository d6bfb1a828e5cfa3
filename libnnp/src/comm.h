/* SPDX-License-Identifier: MIT */
/* libnnp communicator handles, shared by setup (comm.c) and collectives. */
#ifndef NNP_COMM_H
#define NNP_COMM_H

#include <stdint.h>

#include "internal.h"
#include "ring_plan.h"

struct nnp_comm {
	nnp_device_t *dev;
	uint32_t id;		/* the driver's communicator id */
	int rank;
	int nranks;
	/* By peer rank: this chip's port to it and from it, -1 if no link. */
	int *send_port;
	int *recv_port;
};

/*
 * Plan the ring of @n ranks described by @all (nnp_ring_plan()); when
 * there is none, the last error says which rank or link is missing. At
 * NNP_DEBUG=INFO the ring is printed hop by hop, with @epoch.
 */
nnp_result_t nnp_comm_plan(const struct nnp_rank_info *all, uint32_t n,
			   uint64_t epoch, struct nnp_ring *ring);

#endif /* NNP_COMM_H */
