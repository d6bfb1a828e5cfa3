// SPDX-License-Identifier: MIT
/*
 * Firmware simulator credits for packets copied to a remote peer (over a
 * socket, fw_lend.c's remote transport): the flow control an in-process
 * peer has for free. A receiving port holds at most NNP_FW_PORT_RX_BYTES
 * and NNP_FW_PORT_RX_PACKETS and drops what comes past that; a ring's
 * sender may run steps ahead of a slow successor, so without credits a
 * large collective over a socket lost chunks and failed on a timeout.
 *
 * With credits (both ends offered them: nnp_fw_link_credits()), the
 * sender counts its packets and bytes the peer holds and waits, parked,
 * where one more would pass the bound; the receiver credits each packet
 * back once it no longer holds it, whatever became of it (taken, dropped
 * on arrival, dropped stale, purged), through host->icl_credit, and the
 * sender's embedder hands the credits to nnp_fw_icl_credits_back(). On a
 * shared link (fw_icl_shared.c) the lent chunks' slots and the copies'
 * credits share one bound, as they share the receiver's room.
 *
 * Every connection starts from nothing: turning credits on or off bumps
 * the port's generation, and a packet credits back only if it arrived on
 * the connection still counted, so nothing of an earlier one is credited
 * to the next. Nor does it hold room the next one counts on: a connection
 * that starts counting drops the copies held from earlier ones.
 *
 * An abort (sent with no command, when one fails) does not wait for
 * credits, but takes them: the last NNP_FW_ABORT_PACKETS packets of the
 * bound are kept for aborts, and an abort past the bound is not sent (its
 * receiver times out instead), so the peer never holds more than its
 * bound and never drops an honest sender's packet.
 */
#include "fw_transport.h"

int nnp_fw_link_credits(struct nnp_fw *fw, unsigned int port, bool on)
{
	struct nnp_fw_port *p = nnp_fw_remote_port_lock(fw, port);

	if (!p)
		return -1;
	p->credits = on;
	p->credit_gen++;
	p->credit_out = 0;
	p->credit_out_bytes = 0;
	mtx_unlock(&p->lock);
	if (on)
		nnp_fw_icl_drop_old_copies(fw, port);
	/* A sender waiting for room counts afresh, or not at all. */
	nnp_fw_icl_wake(fw, port);
	return 0;
}

int nnp_fw_icl_credits_back(struct nnp_fw *fw, unsigned int port,
			    uint32_t packets, uint64_t bytes)
{
	struct nnp_fw_port *p = nnp_fw_remote_port_lock(fw, port);
	bool held;

	if (!p)
		return -1;
	held = p->credits && packets <= p->credit_out &&
	       bytes <= p->credit_out_bytes;
	if (held) {
		p->credit_out -= packets;
		p->credit_out_bytes -= bytes;
	}
	mtx_unlock(&p->lock);
	if (held)
		nnp_fw_icl_wake(fw, port);
	return held ? 0 : -1;
}

bool nnp_fw_icl_peer_room_locked(const struct nnp_fw_port *p, size_t len)
{
	return p->credit_out + p->lent_out + NNP_FW_ABORT_PACKETS <
	       NNP_FW_PORT_RX_PACKETS &&
	       p->credit_out_bytes + p->lent_out_bytes + len <=
	       NNP_FW_PORT_RX_BYTES;
}

/* Room for an abort (no bytes): the whole bound, with p->lock held. */
static bool abort_room_locked(const struct nnp_fw_port *p)
{
	return p->credit_out + p->lent_out < NNP_FW_PORT_RX_PACKETS;
}

uint16_t nnp_fw_icl_credit_take(struct nnp_fw *fw, struct nnp_fw_op *op,
				uint32_t port, size_t len, uint32_t *gen)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint32_t wakes = nnp_fw_icl_wakes(fw, port);
	bool take;

	mtx_lock(&p->lock);
	*gen = p->credit_gen;
	take = !p->credits || (op ? nnp_fw_icl_peer_room_locked(p, len) :
				    abort_room_locked(p));
	if (take && p->credits) {
		p->credit_out++;
		p->credit_out_bytes += len;
	}
	if (!take && !op)
		p->errors++;
	mtx_unlock(&p->lock);
	if (take)
		return NNP_STATUS_SUCCESS;
	return op ? nnp_fw_icl_park_for_room(fw, op, port, wakes) :
		    NNP_STATUS_NO_RESOURCES;
}

void nnp_fw_icl_credit_undo(struct nnp_fw *fw, uint32_t port, size_t len,
			    uint32_t gen)
{
	struct nnp_fw_port *p = &fw->ports[port];

	mtx_lock(&p->lock);
	/* Unless the connection it was taken on is gone and forgotten. */
	if (p->credits && p->credit_gen == gen) {
		p->credit_out--;
		p->credit_out_bytes -= len;
	}
	mtx_unlock(&p->lock);
	nnp_fw_icl_wake(fw, port);
}
