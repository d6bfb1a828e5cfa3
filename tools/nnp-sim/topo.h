/* SPDX-License-Identifier: MIT */
/*
 * nnp-sim's topologies. Every chip has 4 ports:
 * - ring of n: ports 0 and 2 lead to the next chip (its ports 1 and 3):
 *   two links between neighbours;
 * - 2D torus of rows x cols, chip r * cols + c: port 0 to the next in its
 *   row (+x, that chip's port 1), port 2 to the next in its column (+y,
 *   that chip's port 3), both wrapping around;
 * - POD: chassis of 8 or 16 chips, each chassis a ring over ports 0/1,
 *   chassis joined into a ring of chassis over ports 2/3 (chip i of a
 *   chassis to chip i of the next): a torus of chassis x chips-a-chassis.
 */
#ifndef NNP_SIM_TOPO_H
#define NNP_SIM_TOPO_H

#include "sim.h"

enum topo_kind { TOPO_RING, TOPO_TORUS, TOPO_POD };

struct topo {
	enum topo_kind kind;
	unsigned int rows, cols;	/* ring: 1 x n */
};

/* Parse "ring", "torus" or "pod"; -1 if none. */
int topo_kind_parse(const char *name, enum topo_kind *kind);
const char *topo_kind_name(enum topo_kind kind);
/*
 * The shape of @n chips of @kind: a torus as square as @n allows (or
 * @rows x @cols if @rows is set), a POD of chassis of @chassis chips.
 * Returns 0, or -1 with a reason on stderr.
 */
int topo_shape(struct topo *t, enum topo_kind kind, unsigned int n,
	       unsigned int rows, unsigned int chassis);
/* Wire @s's chips as @t says. */
int topo_wire(struct sim *s, const struct topo *t);
/*
 * COMM_CREATE on every chip: a ring through all chips over the wired
 * links (a snake through a torus), rank = position on it (s->rank,
 * s->chip_of); then COMM_ROUTES, each chip's port towards every rank on
 * a shortest path, for the exchanges' routed messages.
 */
int topo_comm(struct sim *s, const struct topo *t);

/* Parse an NNP_ALGO name: auto, ring, bidir, rings, torus; -1 if none. */
int topo_algo_parse(const char *name, uint32_t *algo);
const char *topo_algo_name(uint32_t algo);
/*
 * Give every chip's communicator @t's ring dimensions (a ring's two port
 * pairs, or a torus's rows and columns) and allreduce algorithm @algo.
 */
int topo_set_algo(struct sim *s, const struct topo *t, uint32_t algo);

#endif /* NNP_SIM_TOPO_H */
