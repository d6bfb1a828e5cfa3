// SPDX-License-Identifier: MIT
/*
 * Firmware simulator purging: dropping what a port holds for a failed or
 * destroyed communicator, for a reset, for an earlier connection, and,
 * on a port short of room, what no communicator claimed within the
 * device's default timeout. See fw_transport.h.
 */
#include "fw_transport.h"

/* Drop every packet of @epoch queued on @p, with p->lock held. */
static void drop_epoch_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			      uint64_t epoch)
{
	struct nnp_fw_packet **link = &p->rx_head, *prev = NULL;

	while (*link) {
		if ((*link)->epoch == epoch) {
			nnp_fw_icl_count_drop_locked(fw, p);
			nnp_fw_icl_drop_at(p, link, prev);
			continue;
		}
		prev = *link;
		link = &(*link)->next;
	}
}

/*
 * Make room by dropping the packets held past the device's default timeout
 * of their arrival, with fw->lock and p->lock held; true if a communicator
 * failed and a worker must run. The room is every job's, so no one job's
 * own timeout may stretch it: a packet no communicator took that long is
 * one its job would have timed out on anyway (a receive waits up to that
 * for its message), or one a communicator that never receives holds to
 * starve the others. Its job lost a packet here: so that it never takes a
 * later chunk in place of the dropped one (a collective's chunks share a
 * label), every packet of that epoch goes, now and on arrival. A
 * communicator made for it later times out; one that holds it fails at
 * once with NO_RESOURCES, and its peers learn by its abort.
 */
static bool drop_stale_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			      uint64_t now)
{
	uint64_t stale = nnp_fw_comm_timeout_ns(fw, 0);
	struct nnp_fw_packet *pk = p->rx_head;
	bool woke = false;

	while (pk) {
		if (now - pk->arrived_ns >= stale) {
			uint64_t epoch = pk->epoch;
			struct nnp_fw_comm *m = nnp_fw_comm_by_epoch_locked(fw,
									    epoch);

			p->lost_epochs[p->lost_next++ % NNP_FW_LOST_EPOCHS] =
				epoch;
			drop_epoch_locked(fw, p, epoch);
			if (m)
				woke |= fw->link_hooks->comm_failed_locked(fw, m,
						NNP_STATUS_NO_RESOURCES, p->index);
			pk = p->rx_head;
			continue;
		}
		pk = pk->next;
	}
	return woke;
}

/*
 * Whether packets of @epoch (its communicator here @m, or NULL) were
 * dropped stale on @p, with fw->lock and p->lock held; the few last such
 * epochs are kept, and one whose communicator here failed for it is known
 * by that.
 */
static bool epoch_lost_locked(const struct nnp_fw_port *p,
			      const struct nnp_fw_comm *m, uint64_t epoch)
{
	uint32_t i;

	if (m && m->error == NNP_STATUS_NO_RESOURCES)
		return true;
	for (i = 0; i < NNP_FW_LOST_EPOCHS && i < p->lost_next; i++)
		if (p->lost_epochs[i] == epoch)
			return true;
	return false;
}

static bool fits(const struct nnp_fw_port *p, size_t len)
{
	return p->held_packets < NNP_FW_PORT_RX_PACKETS &&
	       p->held_bytes + len <= NNP_FW_PORT_RX_BYTES;
}

enum nnp_fw_room nnp_fw_icl_room_locked(struct nnp_fw *fw,
					struct nnp_fw_port *p,
					const struct nnp_fw_comm *m,
					const struct nnp_fw_packet *pk,
					bool *woke)
{
	if (epoch_lost_locked(p, m, pk->epoch))
		return NNP_FW_ROOM_LOST;
	if (!fits(p, pk->len)) {
		*woke |= drop_stale_locked(fw, p, pk->arrived_ns);
		if (!fits(p, pk->len))
			return NNP_FW_ROOM_NONE;
	}
	/* Its own epoch's packets, gone stale making room. */
	return epoch_lost_locked(p, m, pk->epoch) ? NNP_FW_ROOM_LOST :
						   NNP_FW_ROOM_OK;
}

/*
 * Whether a sender may wait for room on @p, with p->lock held: its peer
 * could not take a packet of the largest size, or its credits (less the
 * packets kept for aborts) are nearly spent.
 */
static bool rx_short(const struct nnp_fw_port *p)
{
	return p->held_bytes + NNP_FW_ICL_MAX_PACKET > NNP_FW_PORT_RX_BYTES ||
	       p->held_packets + NNP_FW_ABORT_PACKETS >= NNP_FW_PORT_RX_PACKETS;
}

/*
 * Drop the packets of @epoch numbered below @below queued on @port; if
 * @count, routed ones for a rank other than @rank (in transit here: any,
 * for a transit communicator's NNP_FW_TRANSIT_RANK) count as dropped.
 * Their room goes back to the sender either way. A rank's leave in
 * transit is no error of the port's: every rank of the communicator
 * destroys it as the job ends, so the chips between two ranks often go
 * first, and their own leave or abort tells the ranks beyond them that
 * the communicator ends.
 */
static void purge(struct nnp_fw *fw, uint32_t port, uint64_t epoch,
		  uint64_t below, uint32_t rank, bool count)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_packet **link, *prev = NULL;

	if (count)
		mtx_lock(&fw->lock);
	mtx_lock(&p->lock);
	link = &p->rx_head;
	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->epoch == epoch && pk->seq < below) {
			bool transit = count && nnp_fw_seq_is_routed(pk->seq) &&
				       nnp_fw_seq_dst(pk->seq) != rank;

			if (transit && nnp_fw_seq_is_routed_leave(pk->seq, pk->abort))
				nnp_fw_icl_count_gone_locked(fw, p);
			else if (transit)
				nnp_fw_icl_count_drop_locked(fw, p);
			nnp_fw_icl_drop_at(p, link, prev);
			continue;
		}
		prev = pk;
		link = &pk->next;
	}
	mtx_unlock(&p->lock);
	if (count)
		mtx_unlock(&fw->lock);
	nnp_fw_icl_room_freed(fw, port);
}

void nnp_fw_icl_purge(struct nnp_fw *fw, uint32_t port, uint64_t epoch,
		      uint64_t below)
{
	purge(fw, port, epoch, below, 0, false);
}

void nnp_fw_icl_purge_comm(struct nnp_fw *fw, uint32_t port, uint64_t epoch,
			   uint32_t rank)
{
	purge(fw, port, epoch, UINT64_MAX, rank, true);
}

void nnp_fw_icl_drop_old_copies(struct nnp_fw *fw, uint32_t port)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_packet **link, *prev = NULL;

	mtx_lock(&fw->lock);
	mtx_lock(&p->lock);
	link = &p->rx_head;
	while (*link) {
		struct nnp_fw_packet *pk = *link;

		/* Credited to none: the earlier connection is forgotten. */
		if (!pk->desc &&
		    !(pk->credit && pk->credit_gen == p->credit_gen)) {
			nnp_fw_icl_drop_at(p, link, prev);
			nnp_fw_icl_count_drop_locked(fw, p);
			continue;
		}
		prev = pk;
		link = &pk->next;
	}
	mtx_unlock(&p->lock);
	mtx_unlock(&fw->lock);
}

void nnp_fw_icl_sweep(struct nnp_fw *fw)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);
	unsigned int i;

	for (i = 0; i < fw->cfg.num_ports; i++) {
		struct nnp_fw_port *p = &fw->ports[i];
		bool woke = false;
		uint32_t held;

		mtx_lock(&fw->lock);
		mtx_lock(&p->lock);
		held = p->held_packets;
		if (rx_short(p))
			woke = drop_stale_locked(fw, p, now);
		held -= p->held_packets;
		mtx_unlock(&p->lock);
		mtx_unlock(&fw->lock);
		/* An in-process sender waiting for the room goes on. */
		if (held)
			nnp_fw_icl_room_freed(fw, i);
		if (woke)
			nnp_fw_icl_kick(fw);
	}
}

void nnp_fw_icl_purge_all(struct nnp_fw *fw)
{
	unsigned int i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		mtx_lock(&fw->ports[i].lock);
		nnp_fw_icl_drop_all_locked(&fw->ports[i]);
		mtx_unlock(&fw->ports[i].lock);
		nnp_fw_icl_room_freed(fw, i);
	}
}
