/* SPDX-License-Identifier: MIT */
/*
 * Where collectives go: a ring through every rank's chip over links that
 * are up, found from each rank's view of its own ports. Every rank runs the
 * same search on the same table and so agrees on the ring without talking.
 */
#ifndef NNP_RING_PLAN_H
#define NNP_RING_PLAN_H

#include <stdbool.h>
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

/*
 * Port @p of rank @a's chip is up and wired to rank @b's chip, at a port
 * that @b's own table wires back to port @p of @a's chip: that port in
 * *@q. Each table comes from its rank over the network, so a link only
 * one end reports, or reports to another port, is no link: a ring over
 * it could arrive on the port its receiver sends on.
 */
bool nnp_rank_link(const struct nnp_rank_info *info, uint32_t a, uint32_t p,
		   uint32_t b, uint32_t *q);

/* The first port of rank @a's chip linked to rank @b's chip, or -1. */
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

/*
 * One ring dimension of the fabric as one rank's chip sees it, the
 * device's struct nnp_hw_ring_dim: @n chips along it, this chip at
 * position @pos, @pairs port pairs, pair k sending to position pos + 1 on
 * next_port[k] and receiving from pos - 1 on prev_port[k].
 */
struct nnp_dim {
	uint32_t n;
	uint32_t pos;
	uint32_t pairs;
	uint32_t next_port[2];
	uint32_t prev_port[2];
};

/*
 * What the allreduce algorithms may use beyond the ring (by rank):
 * @ring is the planned ring as a dimension, with a second port pair
 * (@pairs 2) when every hop of it has a second link; @torus, when @w is
 * not 0, a @w x @h torus (w, h >= 2), torus[r][0] along its rows (w
 * chips), torus[r][1] along its columns. @lone_hop is the ring position
 * of the first hop with one link only (@pairs 1, n > 1).
 */
struct nnp_topo {
	uint32_t pairs;
	uint32_t lone_hop;
	uint32_t w, h;
	struct nnp_dim *ring;
	struct nnp_dim (*torus)[2];
};

/*
 * Find @topo of the @n ranks of @info, whose ring @ring nnp_ring_plan()
 * planned: every rank finds the same from the same table. Port pairs take
 * links no other pair of the chip uses; the torus is searched for from
 * the graph of up links (rank 0 at 0,0, its rows following each chip's
 * ports in the order it was entered by), not from port numbers. Only
 * NNP_ERROR_OUT_OF_MEMORY fails; nnp_topo_free() frees.
 */
nnp_result_t nnp_topo_plan(const struct nnp_rank_info *info, uint32_t n,
			   const struct nnp_ring *ring, struct nnp_topo *topo);
void nnp_topo_free(struct nnp_topo *topo);

/*
 * Placing a job on @w x @h of the @n ranks of @info (ranks here are the
 * candidate chips): a ring of @w chips when @h is 1, else a @w x @h torus
 * (w, h >= 2; a dimension of 2 needs two links, as nnp_topo_plan() asks).
 * The search starts from each of @starts in turn; a ring's other chips
 * are ranks above its start, so each ring is tried once. @out gets the
 * ranks in ring order, or the torus's cells row by row. NNP_ERROR_NO_PATH
 * if there is none, *@gave_up true if the search stopped at its budget
 * before it could say; NNP_ERROR_OUT_OF_MEMORY.
 */
nnp_result_t nnp_grid_pick(const struct nnp_rank_info *info, uint32_t n,
			   const uint32_t *starts, uint32_t nstarts, uint32_t w,
			   uint32_t h, uint32_t *out, bool *gave_up);

#endif /* NNP_RING_PLAN_H */
