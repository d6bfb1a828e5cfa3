// SPDX-License-Identifier: MIT
/*
 * Firmware simulator groups (v1.13): a GROUP command and the SENDs and
 * RECVs after it in the ring run as one queue command, all at once, so
 * that a ring of messages posted in any order cannot wait on itself, as
 * one command after another would (each rank's first RECV waiting for a
 * SEND queued behind the peer's own RECV). Since v1.14 the ring
 * collectives may be members too: small ones, latency bound, each wait
 * for a neighbour overlapping the others' instead of following them.
 *
 * Each member is the link command fw_p2p.c makes of it, taking its label
 * in ring order when the group starts, so a pair's messages keep their
 * order. The group steps every member not done in rounds, as an exchange
 * steps its flows (fw_rounds.c). A member done is ended at once;
 * the first to fail ends the group, and the group's end ends the others
 * ABORTED, so each of their peers learns at once. A communicator's small
 * allreduces may run as one (fw_fuse.c): those fused into another are not
 * stepped, and end when it does.
 */
#include <stdlib.h>

#include "fw_engines.h"

struct group {
	struct nnp_fw_op op;	/* first: the queue's handle on it */
	uint32_t n;
	struct nnp_fw_op **member;	/* NULL once ended */
	uint32_t *keys;		/* op.member_keys: two a member */
	uint32_t *comms;	/* op.member_comms */
	uint16_t *cids;			/* op.member_cids */
	uint32_t *lead;		/* the member each runs in: itself, or fused */
	uint32_t failed;	/* the member that failed, or n */
};

/*
 * A member done, and those fused into it, whose results it wrote: its
 * modeled time is the group's too.
 */
static void member_done(struct nnp_fw *fw, struct group *g, uint32_t i)
{
	struct nnp_fw_op *m = g->member[i];
	uint32_t j;

	g->op.t_ns = nnp_fw_max_ns(g->op.t_ns, m->t_ns);
	g->op.tx_end_ns = nnp_fw_max_ns(g->op.tx_end_ns, m->tx_end_ns);
	g->op.hbm_ns += m->hbm_ns;
	for (j = i + 1; j < g->n; j++) {
		if (g->lead[j] == i && g->member[j]) {
			g->member[j]->end(fw, g->member[j], NNP_STATUS_SUCCESS);
			g->member[j] = NULL;
		}
	}
	g->member[i] = NULL;
	m->end(fw, m, NNP_STATUS_SUCCESS);
}

/* One step of every member not done: round @r of the group's. */
static uint16_t group_round(struct nnp_fw *fw, struct nnp_fw_op *op,
			    struct nnp_fw_round *r)
{
	struct group *g = (struct group *)op;
	uint32_t i;

	for (i = 0; i < g->n; i++) {
		struct nnp_fw_op *m = g->member[i];
		uint16_t st;

		if (!m || g->lead[i] != i)
			continue;
		nnp_fw_part_begin(fw, r, m);
		st = m->step(fw, m);
		if (st == NNP_FW_PARKED) {
			nnp_fw_part_parked(r, m);
			continue;
		}
		if (st) {
			g->failed = i;
			g->op.detail = m->detail;
			return st;
		}
		member_done(fw, g, i);
		r->moved = true;
	}
	return NNP_STATUS_SUCCESS;
}

static uint16_t group_step(struct nnp_fw *fw, struct nnp_fw_op *op)
{
	return nnp_fw_rounds(fw, op, group_round);
}

/*
 * The member that failed ends with @st, first, so that its communicator
 * fails for its reason; then the others still running ABORTED.
 */
static void group_end(struct nnp_fw *fw, struct nnp_fw_op *op, uint16_t st)
{
	struct group *g = (struct group *)op;
	uint32_t i;

	if (g->member && g->failed < g->n) {
		g->member[g->failed]->end(fw, g->member[g->failed], st);
		g->member[g->failed] = NULL;
	}
	for (i = 0; g->member && i < g->n; i++) {
		struct nnp_fw_op *m = g->member[i];

		if (m)
			m->end(fw, m, NNP_STATUS_ABORTED);
	}
	free(g->member);
	free(g->keys);
	free(g->comms);
	free(g->cids);
	free(g->lead);
	free(g);
}

/*
 * What a GROUP may hold: link commands that park, exchanges aside, and a
 * RECV from any source aside, whose source no member's completion says.
 */
static bool member_ok(const struct nnp_hw_queue_cmd *c)
{
	switch (c->opcode) {
	case NNP_CMD_RECV:
		return !(c->value & NNP_P2P_ANY);
	case NNP_CMD_SEND:
	case NNP_CMD_ALLREDUCE:
	case NNP_CMD_BROADCAST:
	case NNP_CMD_ALLGATHER:
	case NNP_CMD_REDUCE_SCATTER:
	case NNP_CMD_REDUCE:
		return true;
	}
	return false;
}

static bool collective(uint8_t opcode)
{
	return opcode != NNP_CMD_SEND && opcode != NNP_CMD_RECV;
}

/*
 * Member @i, if a collective, after the group's first collective of its
 * communicator: its start must leave that one's packets be. Members
 * before @i are made.
 */
static void group_collective(struct group *g, const struct nnp_hw_queue_cmd *cmds,
			     uint32_t i)
{
	uint32_t j;

	for (j = 0; j < i && collective(cmds[i].opcode); j++) {
		if (collective(cmds[j].opcode) && g->comms[j] == g->member[i]->comm) {
			nnp_fw_coll_grouped(g->member[i], g->member[j]);
			return;
		}
	}
}

uint16_t nnp_fw_group(struct nnp_fw *fw, uint32_t ctx,
		      const struct nnp_hw_queue_cmd *cmd,
		      const struct nnp_hw_queue_cmd *members, uint32_t n,
		      struct nnp_fw_op **op)
{
	struct group *g;
	uint16_t st = NNP_STATUS_SUCCESS;
	uint32_t i;

	if (cmd->flags || cmd->rsvd0 || cmd->rsvd1 || cmd->rsvd2 ||
	    cmd->src_key || cmd->dst_key || cmd->src_off || cmd->dst_off ||
	    cmd->value || !n) {
		nnp_fw_guest_error(fw, "queue cid %u: GROUP with a field set",
				   cmd->cid);
		return NNP_STATUS_INVALID_FIELD;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NNP_STATUS_NO_RESOURCES;
	g->op.step = group_step;
	g->op.end = group_end;
	g->n = n;
	g->failed = n;
	g->member = calloc(n, sizeof(*g->member));
	g->keys = calloc(2 * (size_t)n, sizeof(*g->keys));
	g->comms = calloc(n, sizeof(*g->comms));
	g->cids = calloc(n, sizeof(*g->cids));
	g->lead = calloc(n, sizeof(*g->lead));
	if (!g->member || !g->keys || !g->comms || !g->cids || !g->lead)
		st = NNP_STATUS_NO_RESOURCES;
	g->op.start_ns = g->op.t_ns = nnp_fw_clock_begin(fw);
	for (i = 0; i < n && !st; i++) {
		const struct nnp_hw_queue_cmd *c = &members[i];
		struct nnp_fw_op *m = NULL;

		if (!member_ok(c)) {
			nnp_fw_guest_error(fw, "queue cid %u: GROUP member %u is not a SEND, RECV from a named peer or ring collective",
					   cmd->cid, i);
			st = NNP_STATUS_INVALID_FIELD;
			break;
		}
		st = nnp_fw_exec(fw, ctx, c, &m);
		if (st)
			break;
		m->cid = c->cid;
		m->start_ns = m->t_ns = g->op.start_ns;
		g->member[i] = m;
		group_collective(g, members, i);
		g->keys[2 * i] = m->keys[0];
		g->keys[2 * i + 1] = m->keys[1];
		g->comms[i] = m->comm;
		g->cids[i] = c->cid;
		g->op.ports |= m->ports;
	}
	if (st) {
		/* Those made took their labels: their peers learn at once. */
		group_end(fw, &g->op, NNP_STATUS_ABORTED);
		return st;
	}
	nnp_fw_fuse_group(g->member, members, n, g->lead);
	g->op.members = n;
	g->op.member_keys = g->keys;
	g->op.member_comms = g->comms;
	g->op.member_cids = g->cids;
	/* Its own time limit is each member's. */
	g->op.timeout_ns = UINT64_MAX;
	*op = &g->op;
	return NNP_STATUS_SUCCESS;
}
