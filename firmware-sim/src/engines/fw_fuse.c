// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: a GROUP's small allreduces of one communicator run
 * as one allreduce. Each run on its own costs its ring steps, about three
 * packets a chip for a few bytes, each lent, read and given back: 31 of
 * 8 bytes took 16-18x the time of one (tests/bench/group_fw.c). Fused,
 * their inputs are gathered into one scratch buffer, one allreduce runs
 * over it in place, and the results go back to the members' outputs:
 * one allreduce's packets, and two copies of bytes that are each at most
 * one chunk.
 *
 * Fused, every rank must group the communicator's allreduces alike, which
 * NCCL does not ask of a group's ranks: so only allreduces the caller
 * flagged NNP_CMD_FLAG_FUSE are (libnnp: communicators made with
 * NNP_GROUP_FUSION=1). Every rank must fuse alike from its own commands
 * alone, and ranks whose groups differ must still fail, not combine
 * unlike members. So the collectives of a communicator in a GROUP are
 * fused only if every one of them is a flagged allreduce of the same
 * type, op and count, at most FUSE_MEMBER bytes: then how many were
 * fused and their count say the whole layout. The fused call carries
 * both (call.members), which the call check compares, so an in-process
 * peer that fused otherwise fails MISMATCH at its first chunk. The fused
 * allreduce sends under its last member's label and is checked under all
 * of its members' labels: a remote peer's chunks carry no call, and one
 * that fused another number of members sends under another label, so its
 * chunks are never combined with these (both wait for their time limit);
 * one that did not fuse sends chunks of another length, which a remote
 * chunk is checked by. A member past FUSE_MAX bytes of scratch starts the
 * next fused allreduce; one left alone runs as it would have.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_engines.h"

/* At most a chunk a member: a larger one's ring steps pipeline anyway. */
#define FUSE_MEMBER	NNP_FW_CHUNK_BYTES
/* The scratch of one fused allreduce. */
#define FUSE_MAX	(1u << 20)

struct nnp_fw_fused {
	uint32_t n;
	uint32_t seq_first;	/* the first member's label */
	uint8_t *buf;		/* the scratch, once it started */
	struct {
		const uint8_t *src;
		uint8_t *dst;
	} part[];
};

static bool collective(uint8_t opcode)
{
	return opcode != NNP_CMD_SEND && opcode != NNP_CMD_RECV;
}

/* Whether @c may be fused with @first, a collective of its communicator. */
static bool fusible(const struct coll *c, const struct coll *first)
{
	return c->fuse && c->opcode == NNP_CMD_ALLREDUCE && c->nranks > 1 &&
	       c->count &&
	       c->count <= FUSE_MEMBER / c->es && c->dtype == first->dtype &&
	       c->op == first->op && c->count == first->count &&
	       c->algo == first->algo;
}

/*
 * Fuse members @idx[0..k) of @member into the first, the lead; false if
 * there was no memory, and they run each on its own.
 */
static bool fuse(struct nnp_fw_op **member, const uint32_t *idx, uint32_t k,
		 uint32_t *lead)
{
	struct coll *c = (struct coll *)member[idx[0]];
	const struct coll *last = (const struct coll *)member[idx[k - 1]];
	struct nnp_fw_fused *f;
	uint32_t j;

	f = malloc(sizeof(*f) + k * sizeof(f->part[0]));
	if (!f)
		return false;
	f->n = k;
	f->seq_first = c->seq;
	f->buf = NULL;
	for (j = 0; j < k; j++) {
		const struct coll *m = (const struct coll *)member[idx[j]];

		f->part[j].src = m->src;
		f->part[j].dst = m->dst;
		/* A member a leave tore down tears the whole down. */
		if (!c->link.aborted)
			c->link.aborted = m->link.aborted;
		lead[idx[j]] = idx[0];
	}
	c->fused = f;
	c->count *= k;
	c->seq = last->seq;
	c->link.call.members = (uint16_t)k;
	/* A peer that left after the last member's call had made them all. */
	c->link.call_no = last->link.call_no;
	return true;
}

/*
 * The collectives of @first's communicator from member @i on into @idx:
 * how many, and in *@all whether every one may be fused with @first.
 */
static uint32_t comm_members(struct nnp_fw_op **member,
			     const struct nnp_hw_queue_cmd *cmds, uint32_t n,
			     uint32_t i, uint32_t *idx, bool *all)
{
	const struct coll *first = (const struct coll *)member[i];
	uint32_t j, k = 0;

	*all = true;
	for (j = i; j < n; j++) {
		const struct coll *c = (const struct coll *)member[j];

		if (collective(cmds[j].opcode) && c->comm == first->comm) {
			*all = *all && fusible(c, first);
			idx[k++] = j;
		}
	}
	return k;
}

void nnp_fw_fuse_group(struct nnp_fw_op **member,
		       const struct nnp_hw_queue_cmd *cmds, uint32_t n,
		       uint32_t *lead)
{
	uint32_t *idx = malloc(n * sizeof(*idx));
	bool *seen = calloc(n, sizeof(*seen));
	uint32_t i, j, k, per;
	bool all;

	for (i = 0; i < n; i++)
		lead[i] = i;
	for (i = 0; idx && seen && i < n; i++) {
		const struct coll *first = (const struct coll *)member[i];

		if (!collective(cmds[i].opcode) || seen[i])
			continue;
		k = comm_members(member, cmds, n, i, idx, &all);
		for (j = 0; j < k; j++)
			seen[idx[j]] = true;
		if (!all)
			continue;
		per = FUSE_MAX / (uint32_t)(first->count * first->es);
		/* A last one alone is not fused. */
		for (j = 0; j + 1 < k; j += per)
			fuse(member, idx + j, k - j < per ? k - j : per, lead);
	}
	free(seen);
	free(idx);
}

uint16_t nnp_fw_fuse_gather(struct coll *c)
{
	struct nnp_fw_fused *f = c->fused;
	uint64_t each = c->count / f->n * c->es;
	uint32_t j;

	f->buf = nnp_fw_scratch_take(c->fw, c->count * c->es);
	if (!f->buf)
		return NNP_STATUS_NO_RESOURCES;
	for (j = 0; j < f->n && !c->fw->cfg.timing_only; j++)
		memcpy(f->buf + j * each, f->part[j].src, each);
	c->src = c->dst = f->buf;
	c->local += c->count * c->es;
	nnp_fw_clock_hbm(c->fw, &c->link, 2 * c->count * c->es);
	return NNP_STATUS_SUCCESS;
}

void nnp_fw_fuse_scatter(struct coll *c)
{
	const struct nnp_fw_fused *f = c->fused;
	uint64_t each = c->count / f->n * c->es;
	uint32_t j;

	for (j = 0; j < f->n && !c->fw->cfg.timing_only; j++)
		memcpy(f->part[j].dst, f->buf + j * each, each);
	c->local += c->count * c->es;
	nnp_fw_clock_hbm(c->fw, &c->link, 2 * c->count * c->es);
}

uint32_t nnp_fw_fuse_first_seq(const struct coll *c)
{
	return c->fused ? c->fused->seq_first : c->seq;
}

void nnp_fw_fuse_end(struct coll *c)
{
	if (!c->fused)
		return;
	nnp_fw_scratch_give(c->fw, c->fused->buf);
	free(c->fused);
}
