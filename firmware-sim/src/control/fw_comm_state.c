// SPDX-License-Identifier: MIT
/*
 * Firmware simulator COMM_STATE (v1.18): where a communicator stands, for
 * a view of a job that hangs. Its counts are kept as its commands start
 * and end (the engines, nnp_fw_comm_ended()); its command in flight and
 * that command's wait are read off the queues, which hold every link
 * command running, under fw->lock, as COMM_DESTROY's abort finds them.
 */
#include "fw_control.h"

_Static_assert(sizeof(struct nnp_hw_comm_state) == 72,
	       "COMM_STATE's answer is 72 bytes, as docs/hw-interface.md says");

/*
 * The communicator's command in flight on @ctx's queues: of its
 * collectives, the one started first; else any of its commands (a
 * message, a group). NULL if none.
 */
static const struct nnp_fw_op *op_in_flight_locked(const struct nnp_fw *fw,
						   uint32_t ctx, uint32_t comm)
{
	const struct nnp_fw_op *best = NULL;
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		const struct nnp_fw_op *op = fw->queues[i].op;

		if (!op || fw->queues[i].ctx != ctx ||
		    !nnp_fw_op_uses_comm(op, comm))
			continue;
		if (!best || (op->call_no &&
			      (!best->call_no || op->call_no < best->call_no)))
			best = op;
	}
	return best;
}

/* The rank at the far end of @port on @m's ring; NO_RANK if not one of its. */
static uint32_t ring_rank_at_locked(const struct nnp_fw_comm *m, uint32_t port)
{
	uint32_t n = m->nranks, pos;

	if (n < 2)
		return NNP_HW_COMM_NO_RANK;
	if (port == m->recv_port)
		pos = (m->pos + n - 1) % n;
	else if (port == m->send_port)
		pos = (m->pos + 1) % n;
	else
		return NNP_HW_COMM_NO_RANK;
	return m->order ? m->order[pos] : pos;
}

/* Whether collective @opcode has a root. */
static bool rooted(uint8_t opcode)
{
	return opcode == NNP_CMD_BROADCAST || opcode == NNP_CMD_REDUCE ||
	       opcode == NNP_CMD_GATHER || opcode == NNP_CMD_SCATTER;
}

static void state_of_op_locked(const struct nnp_fw_comm *m,
			       const struct nnp_fw_op *op, uint64_t now,
			       struct nnp_hw_comm_state *s)
{
	const struct nnp_fw_call *c = &op->call;
	bool p2p = c->opcode == NNP_CMD_SEND || c->opcode == NNP_CMD_RECV;

	if (op->members) {
		s->opcode = NNP_CMD_GROUP;
		s->count = fw_le64(op->members);
	} else {
		s->opcode = c->opcode;
		s->dtype = p2p ? 0 : c->dtype;
		s->op = p2p ? 0 : c->op;
		s->count = fw_le64(c->count);
		if ((p2p && c->root != NNP_FW_CALL_NO_PEER) || rooted(c->opcode))
			s->peer = fw_le32(c->root);
	}
	if (!op->parked)
		return;
	s->wait_port = fw_le32(op->waits_on);
	s->wait_rank = fw_le32(ring_rank_at_locked(m, op->waits_on));
	if (p2p && c->root != NNP_FW_CALL_NO_PEER)
		s->wait_rank = s->peer;
	s->wait_ns = fw_le64(now > op->wait_since_ns ?
			     now - op->wait_since_ns : 0);
}

uint16_t nnp_fw_comm_state(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			   uint32_t *result)
{
	uint32_t ctx = fw_admin_arg(cmd, 0), comm = fw_admin_arg(cmd, 1);
	uint64_t now = fw->host.now_ns(fw->host.opaque);
	struct nnp_hw_comm_state s = {
		.peer = fw_le32(NNP_HW_COMM_NO_RANK),
		.wait_port = fw_le32(NNP_HW_COMM_NO_PORT),
		.wait_rank = fw_le32(NNP_HW_COMM_NO_RANK),
	};
	const struct nnp_fw_comm *m;
	const struct nnp_fw_op *op;

	if (cmd->len < sizeof(s))
		return NNP_STATUS_BUFFER_TOO_SMALL;
	mtx_lock(&fw->lock);
	m = nnp_fw_comm_of_locked(fw, ctx, comm);
	if (!m) {
		mtx_unlock(&fw->lock);
		return NNP_STATUS_NOT_FOUND;
	}
	s.epoch = fw_le64(m->epoch);
	s.rank = fw_le32(m->rank);
	s.nranks = fw_le32(m->nranks);
	s.status = fw_le32(m->error);
	s.calls = fw_le32(m->calls_started);
	s.calls_done = fw_le32(m->calls_done);
	s.messages = fw_le32(m->messages_done);
	s.bytes = fw_le64(m->bytes_done);
	op = op_in_flight_locked(fw, ctx, comm);
	if (op)
		state_of_op_locked(m, op, now, &s);
	mtx_unlock(&fw->lock);
	if (fw->host.dma_write(fw->host.opaque, cmd->addr, &s, sizeof(s)))
		return NNP_STATUS_DMA_ERROR;
	*result = sizeof(s);
	return NNP_STATUS_SUCCESS;
}
