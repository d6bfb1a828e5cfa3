// SPDX-License-Identifier: MIT
/*
 * Firmware simulator point-to-point messages between the chips of one job:
 * device memory out of one ICL port, into device memory at the other end,
 * in 64 KiB packets labelled with the communicator's epoch and the
 * message's number on that port, so that both ends count the same
 * messages and nothing of another job is ever taken. A message runs as a
 * link command (nnp_fw_op): one packet a step, parked while it waits.
 *
 * A routed message (v1.12) names the peer's rank instead of a port: it
 * leaves on the port the communicator's routes give for the peer, is
 * forwarded by the chips between (fw_relay.c), and is labelled with both
 * ranks and its number between them, taken from whichever port it comes
 * in on.
 *
 * A RECV from any source (v1.26) starts with no message of its own: each
 * step until one has come, it looks for the first to have come, by port
 * or routed, that no RECV took the number of, takes that number as a
 * RECV naming its peer would have when it started, and from then on is
 * that RECV. Its completion says whence (op.detail).
 */
#include <stdlib.h>

#include "fw_engines.h"

struct p2p {
	struct nnp_fw_op op;
	bool send;
	bool routed;
	bool any;		/* from any source, and none came yet */
	uint32_t port;
	uint64_t epoch;
	uint32_t seq;
	uint8_t *mem;		/* device memory */
	uint64_t len;
	uint64_t off;		/* bytes done */
};

/*
 * A routed message's port and label (@m its communicator, with fw->lock
 * held); INVALID_FIELD for a peer it cannot route to.
 */
static uint16_t p2p_route_locked(const struct nnp_fw_comm *m, uint64_t value,
				 struct p2p *p)
{
	uint32_t peer = NNP_P2P_PEER(value);

	if (!m->routes || peer >= m->nranks || peer == m->rank ||
	    peer >= NNP_HW_MAX_ROUTED_RANKS ||
	    m->rank >= NNP_HW_MAX_ROUTED_RANKS ||
	    m->routes[peer] == NNP_HW_ROUTE_NONE)
		return NNP_STATUS_INVALID_FIELD;
	p->port = m->routes[peer];
	p->seq = p->send ?
		 nnp_fw_seq_routed(m->rank, peer,
				   nnp_fw_routed_next(&m->routed_sent[peer])) :
		 nnp_fw_seq_routed(peer, m->rank,
				   nnp_fw_routed_next(&m->routed_received[peer]));
	return NNP_STATUS_SUCCESS;
}

/* Take the message's number; NNP_STATUS_* if @cmd is bad. */
static uint16_t p2p_begin(struct nnp_fw *fw, uint32_t ctx,
			  const struct nnp_hw_queue_cmd *cmd, struct p2p *p)
{
	struct nnp_fw_comm *m;
	uint16_t st = NNP_STATUS_SUCCESS;

	if (p->port >= fw->cfg.num_ports)
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	m = nnp_fw_comm_of_locked(fw, ctx, NNP_P2P_COMM(cmd->value));
	if (!m) {
		st = nnp_fw_comm_missing_locked(fw, ctx, NNP_P2P_COMM(cmd->value));
	} else {
		p->epoch = m->epoch;
		p->op.timeout_ns = m->timeout_ns;
		p->op.comm = NNP_P2P_COMM(cmd->value);
		p->op.call = (struct nnp_fw_call){
			.opcode = cmd->opcode, .rank = m->rank, .count = p->len,
			.root = p->routed ? NNP_P2P_PEER(cmd->value) :
					    NNP_FW_CALL_NO_PEER,
		};
		p->op.bytes = p->len;
		/* From any source, its number is taken once its message came. */
		if (p->routed)
			st = p2p_route_locked(m, cmd->value, p);
		else if (!p->any)
			p->seq = nnp_fw_seq(p->send ? m->p2p_sent[p->port]++ :
					    m->p2p_received[p->port]++, true);
		/* The peer left: a RECV ends once nothing is left. */
		if (!st && !p->any)
			p->op.aborted = p->routed ?
				nnp_fw_comm_rank_torn(m, NNP_P2P_PEER(cmd->value)) :
				nnp_fw_comm_port_torn(m, p->port);
	}
	mtx_unlock(&fw->lock);
	/* Its link: a routed message comes in on any. */
	if (!st && !p->any && (p->send || !p->routed))
		p->op.ports = 1u << p->port;
	return st;
}

/*
 * Whether @pk, on @port, is of a SEND to communicator @arg's rank whose
 * number no RECV has taken: by port, the port's next; routed, its
 * source's next. An exchange's flows take routed numbers too: the call
 * of a chunk lent in process, or of a relay's copy of one, tells them
 * apart; a copy from another process says nothing of its call.
 */
static bool unclaimed(const void *arg, uint32_t port,
		      const struct nnp_fw_packet *pk)
{
	const struct nnp_fw_comm *m = arg;
	uint32_t seq = pk->seq, src = nnp_fw_seq_src(seq);
	uint8_t opcode = pk->owner ? pk->owner->call.opcode : pk->call.opcode;

	if (opcode && opcode != NNP_CMD_SEND)
		return false;
	if (!nnp_fw_seq_is_routed(seq))
		return seq == nnp_fw_seq(m->p2p_received[port], true);
	return m->routed_received && src < m->nranks &&
	       src < NNP_HW_MAX_ROUTED_RANKS && src != m->rank &&
	       seq == nnp_fw_seq_routed(src, m->rank,
					m->routed_received[src]);
}

/*
 * A RECV from any source: the first unclaimed message to have come
 * becomes its own, or it parks on every port until one comes.
 */
static uint16_t p2p_claim_any(struct nnp_fw *fw, struct p2p *p)
{
	uint16_t st = NNP_STATUS_SUCCESS;
	struct nnp_fw_comm *m;
	uint32_t port, seq, src;

	mtx_lock(&fw->lock);
	m = p->op.aborted ? NULL : nnp_fw_comm_by_epoch_locked(fw, p->epoch);
	if (!m) {
		st = p->op.aborted ? p->op.aborted : NNP_STATUS_ABORTED;
	} else if (!nnp_fw_icl_first_locked(fw, p->epoch, unclaimed, m, &port,
					    &seq)) {
		st = nnp_fw_icl_park_locked(fw, &p->op, NNP_FW_ANY_PORT);
	} else if (nnp_fw_seq_is_routed(seq)) {
		src = nnp_fw_seq_src(seq);
		nnp_fw_routed_next(&m->routed_received[src]);
		p->routed = true;
		p->op.call.root = src;
		p->op.detail = NNP_P2P_FROM_ROUTED | src;
		p->op.aborted = nnp_fw_comm_rank_torn(m, src);
	} else {
		m->p2p_received[port]++;
		p->port = port;
		p->op.ports = 1u << port;
		p->op.detail = port;
		p->op.aborted = nnp_fw_comm_port_torn(m, port);
	}
	if (m && !st) {
		p->seq = seq;
		p->any = false;
	}
	mtx_unlock(&fw->lock);
	return st;
}

/* Receive the next packet of @p's message into @buf. */
static uint16_t p2p_recv(struct nnp_fw *fw, struct p2p *p, void *buf,
			 uint64_t n)
{
	return p->routed ?
	       nnp_fw_icl_recv_any(fw, &p->op, p->epoch, p->seq, buf, n) :
	       nnp_fw_icl_recv(fw, &p->op, p->port, p->epoch, p->seq, buf, n);
}

/* Every message is at least one packet, so the ends count alike. */
static uint16_t p2p_step(struct nnp_fw *fw, struct nnp_fw_op *op)
{
	struct p2p *p = (struct p2p *)op;
	uint16_t claimed = p->any ? p2p_claim_any(fw, p) : 0;

	if (claimed)
		return claimed;
	for (;;) {
		uint64_t n = p->len - p->off < NNP_FW_CHUNK_BYTES ?
			     p->len - p->off : NNP_FW_CHUNK_BYTES;
		/* A SEND to a peer that left sends nothing more. */
		uint16_t st = p->send ? nnp_fw_op_torn(fw, op) : 0;

		if (st)
			return st;
		st = p->send ?
			nnp_fw_icl_send(fw, op, p->port, p->epoch, p->seq, false,
					p->mem + p->off, n) :
			p2p_recv(fw, p, p->mem + p->off, n);

		if (st)
			return st;
		p->off += n;
		if (p->off >= p->len)
			return NNP_STATUS_SUCCESS;
	}
}

static void p2p_end(struct nnp_fw *fw, struct nnp_fw_op *op, uint16_t st)
{
	struct p2p *p = (struct p2p *)op;

	if (st && st != NNP_STATUS_ABORTED)
		nnp_fw_op_failed(fw, st, "%s on port %u failed: status 0x%x",
				 p->send ? "send" : p->any ?
				 "receive from any source (none came)" :
				 "receive", p->port, st);
	/*
	 * A failure new to the communicator goes to every peer (v1.27): one
	 * waiting for this rank's messages or collectives would otherwise
	 * wait for its timeout. A peer's leave does not: it tears only what
	 * waited on that peer, and the others go on (v1.20).
	 */
	if (p->op.comm &&
	    fw->engine_hooks->comm_ended(fw, p->op.comm, p->epoch, op, st) &&
	    st != NNP_STATUS_PEER_LEFT)
		fw->engine_hooks->pass_abort(fw, p->op.comm, p->epoch);
	/* The receiver learns at once that this message will not come. */
	if (st && p->send && p->seq)
		nnp_fw_icl_send(fw, NULL, p->port, p->epoch, p->seq, true, NULL, 0);
	free(p);
}

uint16_t nnp_fw_p2p(struct nnp_fw *fw, uint32_t ctx,
		    const struct nnp_hw_queue_cmd *cmd, struct nnp_fw_op **op)
{
	struct p2p *p = calloc(1, sizeof(*p));
	struct nnp_fw_span span;
	uint16_t st;

	if (!p)
		return NNP_STATUS_NO_RESOURCES;
	p->op.step = p2p_step;
	p->op.end = p2p_end;
	p->send = cmd->opcode == NNP_CMD_SEND;
	p->routed = cmd->value & NNP_P2P_ROUTED;
	p->any = cmd->value & NNP_P2P_ANY;
	p->port = NNP_P2P_PORT(cmd->value);
	p->len = cmd->len;
	st = p2p_begin(fw, ctx, cmd, p);
	if (!st)
		st = p->send ?
		     nnp_fw_key_resolve(fw, ctx, cmd->src_key, cmd->src_off,
					cmd->len, NNP_KEY_READ, &span) :
		     nnp_fw_key_resolve(fw, ctx, cmd->dst_key, cmd->dst_off,
					cmd->len, NNP_KEY_WRITE, &span);
	/* Device memory to device memory only: never through the host. */
	if (!st && span.type != NNP_KEY_TYPE_DEVICE)
		st = NNP_STATUS_INVALID_FIELD;
	if (st) {
		p2p_end(fw, &p->op, st);
		return st;
	}
	p->mem = (uint8_t *)fw->cfg.mem + span.dev_base + span.start;
	p->op.keys[0] = p->send ? cmd->src_key : cmd->dst_key;
	*op = &p->op;
	return NNP_STATUS_SUCCESS;
}
