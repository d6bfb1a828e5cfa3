/* SPDX-License-Identifier: MIT */
/*
 * Placing a job on adjacent chips (nnp_topo_pick()): the search over port
 * tables alone, apart from the devices, so host tests can give it any
 * fabric.
 */
#ifndef NNP_PLACE_H
#define NNP_PLACE_H

#include <stdint.h>

#include "ring_plan.h"

/*
 * Of the @n free chips of @info, @rows x @cols that form a ring of links
 * that are up (@rows or @cols 1) or a @rows x @cols torus: their indices
 * into @info in @out, in ring order or row by row. The smallest part of
 * joined free chips that can hold them is tried first, from its lowest
 * index, so that larger parts stay whole for larger jobs. Fails with the
 * reason as the last error: NNP_ERROR_NO_DEVICE if fewer chips are free,
 * NNP_ERROR_NO_PATH if their links allow no such ring or torus.
 */
nnp_result_t nnp_place_plan(const struct nnp_rank_info *info, uint32_t n,
			    uint32_t rows, uint32_t cols, uint32_t *out);

#endif /* NNP_PLACE_H */
