/* SPDX-License-Identifier: MIT */
/*
 * nnp-sim's sweep: one collective of a size on every chip, timed on the
 * modeled clock and, unless timing-only, checked (sweep.c).
 */
#ifndef NNP_SIM_SWEEP_H
#define NNP_SIM_SWEEP_H

#include <stdint.h>

#include "sim.h"

enum sweep_coll {
	SWEEP_ALLREDUCE, SWEEP_BROADCAST, SWEEP_ALLGATHER, SWEEP_REDUCE_SCATTER,
	SWEEP_REDUCE, SWEEP_ALLTOALL, SWEEP_GATHER, SWEEP_SCATTER, SWEEP_COUNT
};

/* "allreduce" .. "scatter", as nnptool bench names them; -1 if none. */
int sweep_coll_parse(const char *name, enum sweep_coll *c);
const char *sweep_coll_name(enum sweep_coll c);
/* nccl-tests' busbw / algbw of @c on @n ranks. */
double sweep_bus(enum sweep_coll c, unsigned int n);
/* Device memory @c of sizes up to @max_bytes needs: input and output. */
uint64_t sweep_buf_bytes(enum sweep_coll c, uint64_t max_bytes);
/*
 * @c of @bytes (nccl-tests' size: the larger of a rank's input and
 * output) on every chip, float, sum, root rank 0, after a barrier: its
 * modeled ns in *@ns. 1 if @bytes holds no element for each rank (no
 * row), 0, or -1 if it failed or (checked) was wrong.
 */
int sweep_run(struct sim *s, enum sweep_coll c, uint64_t bytes, uint64_t *ns);

#endif /* NNP_SIM_SWEEP_H */
