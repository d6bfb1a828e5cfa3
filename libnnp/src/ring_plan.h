/* SPDX-License-Identifier: MIT */
/*
 * Where collectives go: a ring through every rank's chip over links that
 * are up, found from each rank's view of its own ports. Every rank runs the
 * same search on the same table and so agrees on the ring without talking.
 */
#ifndef NNP_RING_PLAN_H
#define NNP_RING_PLAN_H

#include <stdint.h>

#include "nnp/nnp.h"

/* What one rank tells the others: its chip and its ports. */
struct nnp_rank_info {
	uint32_t chip;
	uint32_t nports;
	struct {
		uint32_t state;		/* NNP_LINK_* */
		uint32_t peer_chip;
		uint32_t peer_port;
	} ports[NNP_MAX_PORTS];
};

/* The ring: the rank at each position and each rank's two ports. */
struct nnp_ring {
	uint32_t *order;	/* order[pos] = rank */
	uint32_t *send_port;	/* by rank: towards the next position */
	uint32_t *recv_port;	/* by rank: from the previous position */
};

/* The first up port of rank @a's chip leading to rank @b's chip, or -1. */
int nnp_rank_port_to(const struct nnp_rank_info *info, uint32_t a, uint32_t b);

/*
 * Plan a ring over @n ranks described by @info (indexed by rank); the
 * arrays of @ring are allocated here (nnp_ring_free()). Rank order when
 * its links allow, else the first ring a depth-first search finds.
 * NNP_ERROR_NO_PATH if there is none, NNP_ERROR_INVALID_ARGUMENT if two
 * ranks name the same chip.
 */
nnp_result_t nnp_ring_plan(const struct nnp_rank_info *info, uint32_t n,
			   struct nnp_ring *ring);
void nnp_ring_free(struct nnp_ring *ring);

#endif /* NNP_RING_PLAN_H */
