/* SPDX-License-Identifier: MIT */
/*
 * nnp_comm_split(): what each rank of the parent tells all the others,
 * and the new communicator each rank then finds in what they told. Every
 * rank reads the same table and so agrees on the groups, their rank
 * order, epochs and rings without further talk. Apart from the device, so
 * that the host tests plan from made-up tables.
 */
#ifndef NNP_SPLIT_H
#define NNP_SPLIT_H

#include <stdint.h>

#include "ring_plan.h"

/* One parent rank's part of the exchange, the same layout on every rank. */
struct nnp_split_entry {
	int32_t color;		/* negative: in no new communicator */
	int32_t key;
	uint32_t status;	/* nnp_result_t of reading its chip's ports */
	uint32_t zero;
	uint64_t epoch;		/* nonzero; its group's, if it is new rank 0 */
	struct nnp_rank_info info;
};

_Static_assert(sizeof(struct nnp_split_entry) % 4 == 0,
	       "an entry travels as 32-bit words");

/* The new communicator of one parent rank. */
struct nnp_split_group {
	int32_t color;
	uint32_t n;		/* its ranks; 0 for a negative color */
	uint32_t rank;		/* the caller's new rank */
	uint64_t epoch;		/* new rank 0's */
	uint32_t *parent;	/* by new rank: the parent rank */
	struct nnp_rank_info *info;	/* by new rank */
	/* The parent ranks whose chips are transits of its ring, if any. */
	uint32_t *transit;
	uint32_t ntransit;
};

/*
 * The group of parent rank @me among the @nparent entries @all: the
 * ranks of its color by key, then by parent rank. NNP_ERROR_COMM_FAILED
 * if another of them could not read its ports (the last error names it),
 * NNP_ERROR_OUT_OF_MEMORY; nnp_split_group_free() frees it either way.
 */
nnp_result_t nnp_split_group(const struct nnp_split_entry *all, uint32_t nparent,
			     uint32_t me, struct nnp_split_group *g);
void nnp_split_group_free(struct nnp_split_group *g);

/*
 * Plan @g's ring (nnp_comm_plan()). NNP_ERROR_NO_PATH if there is none:
 * the last error starts with @what ("nnp_comm_split: color 1") and names
 * a missing link, both of its ends by new rank, parent rank and chip,
 * then why no other ring was found.
 */
nnp_result_t nnp_split_plan(const struct nnp_split_group *g, const char *what,
			    struct nnp_ring *ring);

/*
 * nnp_comm_shrink(): the survivors' communicator, found by each of them
 * from the parent's table without talk. @all holds the @nparent ranks'
 * chips and ports as the parent was planned; parent rank @me keeps every
 * rank not among the @nexclude of @exclude, in parent rank order. The
 * epoch is drawn from @parent_epoch, the parent's shrink count @seq and
 * the set excluded, so that survivors that disagree on the set never
 * share one (the list's order aside). NNP_ERROR_INVALID_ARGUMENT, the last error naming
 * the entry, for a negative count, a list that is NULL but not empty, a
 * rank out of range or twice, or @me itself; NNP_ERROR_OUT_OF_MEMORY.
 * nnp_split_group_free() frees @g either way.
 */
nnp_result_t nnp_shrink_group(const struct nnp_rank_info *all, uint32_t nparent,
			      uint32_t me, const int *exclude, int nexclude,
			      uint64_t parent_epoch, const uint64_t *given,
			      uint32_t ngiven, struct nnp_split_group *g);

struct nnp_comm;
struct nnp_comm_opts;

/*
 * Make parent rank @parent's communicator of @g (planned as
 * nnp_split_plan(), @what starting its errors), with the options @o, in
 * *@child. Where @g's chips make
 * no ring of links and @pall gives the @nparent ranks' chips (by parent
 * rank; NULL: none), its ring crosses chips of other parent ranks as
 * transits (transit_plan.h), which @g->transit then lists. In
 * comm_split.c: it needs the device.
 */
nnp_result_t nnp_split_make(struct nnp_comm *parent, struct nnp_split_group *g,
			    const char *what, const struct nnp_comm_opts *o,
			    const struct nnp_rank_info *pall, uint32_t nparent,
			    struct nnp_comm **child);

/*
 * Make @parent's chip a transit of every group of the split table @all
 * (@pall its chips) whose ring crosses it: each held by @parent
 * (comm_transit.c). A group whose ring cannot be planned is left to fail
 * on its own ranks.
 */
nnp_result_t nnp_split_transits(struct nnp_comm *parent,
				const struct nnp_split_entry *all,
				const struct nnp_rank_info *pall);
/* End the transits @parent holds. */
void nnp_split_transits_end(struct nnp_comm *parent);

#endif /* NNP_SPLIT_H */
