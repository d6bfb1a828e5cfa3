// SPDX-License-Identifier: MIT
/*
 * The survivors' communicator of nnp_comm_shrink(), found by each of them
 * from the parent's table (split.h). After a failure the parent's ring
 * may pass through the dead chip, so the survivors cannot talk over it:
 * each derives the same members, ring and epoch from what every rank
 * learnt when the parent was made, and only then talks, over the new
 * communicator, to check that they agree.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "log.h"
#include "split.h"

/* splitmix64's finalizer: every input bit moves every output bit. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Check @exclude against the @nparent ranks and mark it in @out (by
 * parent rank); the set's hash, order aside, in *@hash.
 */
static nnp_result_t take_set(const int *exclude, int nexclude, uint32_t nparent,
			     uint32_t me, uint8_t *out, uint64_t *hash)
{
	int i;

	*hash = mix((uint64_t)nexclude);
	if (nexclude < 0 || (nexclude && !exclude))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_comm_shrink: %d ranks to exclude%s",
				nexclude, nexclude < 0 ? "" : " from a NULL list");
	for (i = 0; i < nexclude; i++) {
		int r = exclude[i];

		if (r < 0 || (uint32_t)r >= nparent || out[r])
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"nnp_comm_shrink: exclude[%d] is rank %d: %s",
					i, r, r < 0 || (uint32_t)r >= nparent ?
					"not a rank of the parent" : "listed twice");
		if ((uint32_t)r == me)
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"nnp_comm_shrink: exclude[%d] is the calling rank %u: an excluded rank does not call it",
					i, me);
		out[r] = 1;
		/* A sum of mixed ranks: the same whatever the list's order. */
		*hash += mix((uint64_t)r + 1);
	}
	return NNP_SUCCESS;
}

static bool epoch_given(uint64_t epoch, const uint64_t *given, uint32_t ngiven)
{
	uint32_t i;

	for (i = 0; i < ngiven; i++)
		if (given[i] == epoch)
			return true;
	return false;
}

nnp_result_t nnp_shrink_group(const struct nnp_rank_info *all, uint32_t nparent,
			      uint32_t me, const int *exclude, int nexclude,
			      uint64_t parent_epoch, const uint64_t *given,
			      uint32_t ngiven, struct nnp_split_group *g)
{
	uint64_t set_hash, seq = 0;
	uint8_t *out = calloc(nparent, 1);
	nnp_result_t res;
	uint32_t r, k = 0;

	*g = (struct nnp_split_group){ 0 };
	if (!out)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for %u ranks", nparent);
	res = take_set(exclude, nexclude, nparent, me, out, &set_hash);
	if (res != NNP_SUCCESS)
		goto done;
	g->n = nparent - (uint32_t)nexclude;
	g->parent = calloc(g->n, sizeof(*g->parent));
	g->info = calloc(g->n, sizeof(*g->info));
	if (!g->parent || !g->info) {
		res = nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
			       "no host memory for a communicator of %u ranks", g->n);
		goto done;
	}
	for (r = 0; r < nparent; r++) {
		if (out[r])
			continue;
		if (r == me)
			g->rank = k;
		g->parent[k] = r;
		g->info[k++] = all[r];
	}
	/*
	 * Never 0, which no communicator has, nor one given before: the same
	 * set shrunk again counts on, as every survivor of it did each time.
	 */
	do
		g->epoch = mix(parent_epoch ^ mix(set_hash ^ mix(seq++)));
	while (!g->epoch || epoch_given(g->epoch, given, ngiven));
done:
	free(out);
	return res;
}
