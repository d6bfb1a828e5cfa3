/* SPDX-License-Identifier: MIT */
/*
 * Which of a group's collectives on one stream may run at once, as the
 * members of one GROUP command (hardware interface 1.14), and which must
 * follow one another (group_batch.c).
 */
#ifndef NNP_GROUP_BATCH_H
#define NNP_GROUP_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "nnp_hw.h"

/* Device memory a collective reads or writes: key 0 for none. */
struct coll_span {
	uint32_t key;
	uint64_t off, len;
};

/*
 * The extent of what a batch's members read, or write: the key of all the
 * spans, and from the lowest offset to the highest end; mixed when they
 * name more than one key (then only the spans themselves tell).
 */
struct coll_box {
	uint32_t key;		/* 0: no span yet */
	bool mixed;
	uint64_t lo, hi;
};

/* Collectives gathered to run at once, the first @n of @members. */
struct coll_batch {
	const struct nnp_hw_queue_cmd **members;
	struct coll_span *reads, *writes;	/* one each a member */
	struct coll_box read_box, write_box;
	uint32_t n, cap;	/* cap 0: the device runs none at once */
	uint64_t bytes, packets;	/* what they may send at once, at most */
};

/*
 * An empty batch of at most @cap members, kept in @members, @reads and
 * @writes (room for @cap each).
 */
void nnp_coll_batch_init(struct coll_batch *b, uint32_t cap,
			 const struct nnp_hw_queue_cmd **members,
			 struct coll_span *reads, struct coll_span *writes);

/*
 * Add @cmd, a collective of @nranks ranks, if it may run at once with
 * the batch's members: a ring collective of at most 64 KiB that touches
 * no memory another member writes, nor writes what another touches,
 * and within what the batch may send at once. False if not.
 */
bool nnp_coll_batch_add(struct coll_batch *b, const struct nnp_hw_queue_cmd *cmd,
			int nranks);

/*
 * The batch's commands into @cmds from @n on (one alone as it is, more
 * after a GROUP command); the batch is empty after. Returns the new @n.
 */
uint32_t nnp_coll_batch_flush(struct coll_batch *b, struct nnp_hw_queue_cmd *cmds,
			      uint32_t n);

#endif /* NNP_GROUP_BATCH_H */
