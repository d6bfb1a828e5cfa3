// SPDX-License-Identifier: MIT
/*
 * Firmware simulator admission: what becomes of a packet arriving on a
 * port, decided once, on what the port and the packet's communicator
 * were at its arrival. A port down refuses it; a collective's abort for a
 * communicator here is taken at once; one no communicator here would take
 * from that port, or of a job that lost packets here, is dropped; one
 * past the port's room (once packets held past the default timeout made
 * what room they could, fw_purge.c), a free descriptor slot, or its
 * communicator's share is refused; the rest is queued. What the verdict
 * does to the packet is fw_rx_queue.c's; see fw_transport.h.
 */
#include "fw_transport.h"

/*
 * Whether @m, @pk's communicator on this chip (NULL: none), may take it
 * from @port, with fw->lock held: a collective's packet only on a port
 * its ring or its topology receives on (both ways: a ring's backward lane
 * receives on its send port). A packet of no communicator here may be
 * for one not made yet, and one of a communicator whose topology is not
 * given yet for a lane of a peer that has it: kept
 * (nnp_fw_comm_set_topology() drops those on no port of its).
 */
static bool rx_wanted_locked(const struct nnp_fw_comm *m, uint32_t port,
			     const struct nnp_fw_packet *pk)
{
	return !m || (pk->seq & NNP_FW_SEQ_P2P) ||
	       (m->nranks > 1 &&
		(!m->topo_set || nnp_fw_comm_ports(m) >> port & 1));
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

/*
 * Whether @pk's communicator may hold it beside what it holds on @p, with
 * p->lock held: no more than its share of the room.
 */
static bool rx_share_fits(const struct nnp_fw_port *p,
			  const struct nnp_fw_packet *pk)
{
	const struct nnp_fw_packet *q;
	uint64_t bytes = pk->len;
	uint32_t packets = 1;

	for (q = p->rx_head; q; q = q->next) {
		if (q->epoch == pk->epoch) {
			bytes += q->len;
			packets++;
		}
	}
	return bytes <= NNP_FW_EPOCH_RX_BYTES &&
	       packets <= NNP_FW_EPOCH_RX_PACKETS;
}

/* Whether @pk is the abort of a collective of @m, this chip's (or NULL). */
static bool rx_aborts(const struct nnp_fw_comm *m,
		      const struct nnp_fw_packet *pk)
{
	return m && pk->abort && !(pk->seq & NNP_FW_SEQ_P2P);
}

uint16_t nnp_fw_icl_admit_locked(struct nnp_fw *fw,
				 struct nnp_fw_arrival *a,
				 const struct nnp_fw_packet *pk)
{
	struct nnp_fw_port *p = &fw->ports[a->port];
	const struct nnp_fw_comm *m = a->comm;
	enum nnp_fw_room room;
	bool share, slot;

	if (!p->up || (a->remote && !(p->tp && p->tp->remote)))
		return NNP_STATUS_LINK_DOWN;
	if (!a->lost && rx_aborts(m, pk))
		return NNP_STATUS_ABORTED;
	if (a->lost || !rx_wanted_locked(m, a->port, pk) ||
	    epoch_lost_locked(p, m, pk->epoch))
		return NNP_STATUS_INVALID_FIELD;
	/* Before room is made: it drops none of this epoch's, or all. */
	share = a->remote || rx_share_fits(p, pk);
	room = nnp_fw_icl_make_room_locked(fw, p, pk, &a->woke);
	/* Stale descriptors dropped free their slots too. */
	slot = !pk->desc || p->desc_free;
	switch (room) {
	case NNP_FW_ROOM_SHORT:
		return NNP_STATUS_NO_RESOURCES;
	case NNP_FW_ROOM_EPOCH_DROPPED:
		/* Its own epoch's packets, gone stale making room. */
		return slot ? NNP_STATUS_INVALID_FIELD : NNP_STATUS_NO_RESOURCES;
	default:
		return slot && share ? NNP_STATUS_SUCCESS :
		       NNP_STATUS_NO_RESOURCES;
	}
}
