/* SPDX-License-Identifier: MIT */
/*
 * A ring for ranks whose chips share no link with their ring neighbours:
 * each hop a shortest path over chips of no rank (transits, which pass
 * the ring's packets between two of their ports and relay its routed
 * messages), found by every chip of the parent from the same table, so
 * that ranks and transits agree on every hop without talking. Apart from
 * the device, so that the host tests plan from made-up tables.
 */
#ifndef NNP_TRANSIT_PLAN_H
#define NNP_TRANSIT_PLAN_H

#include <stdint.h>

#include "ring_plan.h"

/* A chip of the table that is no transit of the ring. */
#define NNP_TRANSIT_NONE	UINT32_MAX

struct nnp_transit_plan {
	struct nnp_ring ring;	/* of the ranks */
	uint32_t (*pair)[2];	/* by chip of the table: the ports it passes between */
	/* The table's chips of the ring: the ranks', then the transits'. */
	uint32_t *chips;
	uint32_t nchips;
};

/*
 * Plan the ring of the @n ranks whose chips are @ranks[r] of the @nall
 * chips of @all: from rank 0, on to the nearest rank left each time,
 * each hop the first shortest path (as nnp_route_path() ties) over chips
 * of no rank. NNP_ERROR_NO_PATH, the
 * last error naming the hop, if a hop has no such path, or a transit
 * would pass two hops between different ports, or (n > 2) a rank would
 * send and receive on one port; NNP_ERROR_OUT_OF_MEMORY.
 * nnp_transit_free() frees @t either way.
 */
nnp_result_t nnp_transit_plan(const struct nnp_rank_info *all, uint32_t nall,
			      const uint32_t *ranks, uint32_t n,
			      struct nnp_transit_plan *t);
void nnp_transit_free(struct nnp_transit_plan *t);

/*
 * The routes (nnp_route_plan_via(), @n bytes into @routes) of @t's chip
 * @k (rank k, or a transit from @n on), over the ring's chips alone: a
 * chip of no rank and no transit does not know the communicator.
 */
nnp_result_t nnp_transit_routes(const struct nnp_rank_info *all,
				const struct nnp_transit_plan *t, uint32_t n,
				uint32_t k, uint8_t *routes);

#endif /* NNP_TRANSIT_PLAN_H */
