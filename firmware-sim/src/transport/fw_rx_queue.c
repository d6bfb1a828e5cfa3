// SPDX-License-Identifier: MIT
/*
 * Firmware simulator receive queues, the bottom of the links: the packets
 * a port holds, and what each owes when it leaves the queue, whether a
 * receive took it, a purge dropped it or its arrival was refused: a remote
 * copy its sender's credit, a descriptor its lender's return (in process)
 * or give-back (the peer of a shared link), a copy its memory. Every call
 * here ends in this file or below it (the host's hooks, the packet pool):
 * what decides about packets, arrival (fw_rx.c) and purging
 * (fw_purge.c), stands above. See fw_transport.h.
 */
#include <string.h>

#include "fw_transport.h"

struct nnp_fw_packet *nnp_fw_icl_packet_new(uint64_t epoch, uint32_t seq,
					    bool abort, const void *data,
					    size_t len)
{
	struct nnp_fw_packet *pk = nnp_fw_packet_alloc(len);

	if (!pk)
		return NULL;
	*pk = (struct nnp_fw_packet){
		.epoch = epoch, .seq = seq, .abort = abort, .len = len,
		.data = (const uint8_t *)(pk + 1), .pooled = pk->pooled,
	};
	if (len && data)
		memcpy(pk + 1, data, len);
	return pk;
}

/* A remote copy @pk arrived on @p, with p->lock held: it owes a credit. */
static void credit_owed_locked(struct nnp_fw_port *p, struct nnp_fw_packet *pk)
{
	pk->credit = p->credits;
	pk->credit_gen = p->credit_gen;
}

void nnp_fw_icl_credit_locked(struct nnp_fw_port *p, struct nnp_fw_packet *pk)
{
	struct nnp_fw *fw = p->fw;

	if (pk->credit && pk->credit_gen == p->credit_gen && p->credits &&
	    fw->host.icl_credit)
		fw->host.icl_credit(fw->host.opaque, p->index, pk->len);
	pk->credit = false;
}

void nnp_fw_icl_give_back_locked(struct nnp_fw_port *p,
				 const struct nnp_fw_packet *pk)
{
	struct nnp_fw *fw = p->fw;

	if (fw->host.icl_give_back)
		fw->host.icl_give_back(fw->host.opaque, p->index, pk->tag);
}

void nnp_fw_icl_release_locked(struct nnp_fw_port *p, struct nnp_fw_packet *pk)
{
	if (pk->desc) {
		if (pk->owner)
			atomic_fetch_add(&pk->owner->returned, 1);
		else
			nnp_fw_icl_give_back_locked(p, pk);
		pk->owner = NULL;
		pk->next = p->desc_free;
		p->desc_free = pk;
		cnd_broadcast(&p->lent_back);
		return;
	}
	nnp_fw_icl_credit_locked(p, pk);
	nnp_fw_packet_free(pk);
}

void nnp_fw_icl_read_begin_locked(struct nnp_fw_port *p,
				  const struct nnp_fw_packet *pk)
{
	if (pk->desc && !pk->owner)
		p->peer_reads++;
}

void nnp_fw_icl_read_end_locked(struct nnp_fw_port *p,
				const struct nnp_fw_packet *pk)
{
	if (!pk->desc)
		return;
	if (!pk->owner)
		p->peer_reads--;
	/* Its lender may wait to take it back, from the queue or not. */
	cnd_broadcast(&p->lent_back);
}

void nnp_fw_icl_read_done_locked(struct nnp_fw_port *p,
				 struct nnp_fw_packet *pk)
{
	nnp_fw_icl_read_end_locked(p, pk);
	nnp_fw_icl_release_locked(p, pk);
}

struct nnp_fw_packet *nnp_fw_icl_queue_locked(struct nnp_fw *fw,
					      struct nnp_fw_port *p,
					      struct nnp_fw_packet *pk)
{
	if (pk->desc) {
		struct nnp_fw_packet *slot = p->desc_free;

		p->desc_free = slot->next;
		*slot = *pk;
		pk = slot;
	}
	pk->next = NULL;
	if (p->rx_tail)
		p->rx_tail->next = pk;
	else
		p->rx_head = pk;
	p->rx_tail = pk;
	p->held_bytes += pk->len;
	p->held_packets++;
	p->rx_bytes += pk->len;
	p->rx_packets++;
	fw->counters.icl_rx_bytes += pk->len;
	return pk;
}

struct nnp_fw_packet *nnp_fw_icl_unlink_at(struct nnp_fw_port *p,
					   struct nnp_fw_packet **link,
					   struct nnp_fw_packet *prev)
{
	struct nnp_fw_packet *pk = *link;

	*link = pk->next;
	if (p->rx_tail == pk)
		p->rx_tail = prev;
	p->held_bytes -= pk->len;
	p->held_packets--;
	return pk;
}

void nnp_fw_icl_drop_at(struct nnp_fw_port *p, struct nnp_fw_packet **link,
			struct nnp_fw_packet *prev)
{
	struct nnp_fw_packet *pk = nnp_fw_icl_unlink_at(p, link, prev);

	nnp_fw_icl_release_locked(p, pk);
}

void nnp_fw_icl_requeue_first_locked(struct nnp_fw_port *p,
				     struct nnp_fw_packet *pk)
{
	pk->next = p->rx_head;
	p->rx_head = pk;
	if (!p->rx_tail)
		p->rx_tail = pk;
	p->held_bytes += pk->len;
	p->held_packets++;
}

void nnp_fw_icl_drop_all_locked(struct nnp_fw_port *p)
{
	while (p->rx_head)
		nnp_fw_icl_drop_at(p, &p->rx_head, NULL);
}

void nnp_fw_icl_count_drop_locked(struct nnp_fw *fw, struct nnp_fw_port *p)
{
	nnp_fw_icl_count_gone_locked(fw, p);
	p->errors++;
}

void nnp_fw_icl_count_gone_locked(struct nnp_fw *fw, struct nnp_fw_port *p)
{
	p->dropped++;
	fw->counters.icl_dropped++;
}

void nnp_fw_icl_settle_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			      struct nnp_fw_packet *pk, bool remote,
			      enum nnp_fw_rx_fate fate)
{
	if (remote && !pk->desc)
		credit_owed_locked(p, pk);
	switch (fate) {
	case NNP_FW_RX_KEEP:
		nnp_fw_icl_queue_locked(fw, p, pk);
		return;
	case NNP_FW_RX_TAKEN:
		/* Received, as a kept packet is when it is queued. */
		p->rx_packets++;
		nnp_fw_icl_release_locked(p, pk);
		return;
	case NNP_FW_RX_GONE:
		nnp_fw_icl_count_gone_locked(fw, p);
		break;
	case NNP_FW_RX_DROPPED:
		nnp_fw_icl_count_drop_locked(fw, p);
		break;
	case NNP_FW_RX_BROKEN:
		p->errors++;
		break;
	case NNP_FW_RX_REFUSED:
		break;
	}
	nnp_fw_icl_credit_locked(p, pk);
}
