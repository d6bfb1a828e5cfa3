// SPDX-License-Identifier: MIT
/*
 * Firmware simulator receive queues: a port's packets in arrival order,
 * each holding its room until it is taken, forwarded or dropped; what an
 * arrival's verdict (fw_rx_admit.c) does to the packet; and letting a
 * packet go, a copy freed and credited to a remote sender, a descriptor
 * back to its lender. See fw_transport.h.
 */
#include <string.h>

#include "fw_transport.h"

void nnp_fw_icl_release_locked(struct nnp_fw_port *p, struct nnp_fw_packet *pk)
{
	if (!pk->desc) {
		nnp_fw_icl_credit_locked(p, pk);
		nnp_fw_packet_free(pk);
		return;
	}
	if (pk->owner)
		atomic_fetch_add(&pk->owner->returned, 1);
	else
		nnp_fw_icl_give_back_locked(p, pk);
	pk->owner = NULL;
	pk->next = p->desc_free;
	p->desc_free = pk;
	cnd_broadcast(&p->lent_back);
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

/* A copy of @data (none: left to fill), its payload right after the header. */
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

void nnp_fw_icl_count_drop_locked(struct nnp_fw *fw, struct nnp_fw_port *p)
{
	p->dropped++;
	p->errors++;
	fw->counters.icl_dropped++;
}

/* Queue @pk last on @p, a descriptor as a copy in a slot of its pool. */
static struct nnp_fw_packet *enqueue_locked(struct nnp_fw *fw,
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

struct nnp_fw_packet *nnp_fw_icl_settle_locked(struct nnp_fw *fw,
					       struct nnp_fw_arrival *a,
					       struct nnp_fw_packet *pk,
					       uint16_t *st)
{
	struct nnp_fw_port *p = &fw->ports[a->port];
	bool aborts = *st == NNP_STATUS_ABORTED;
	struct nnp_fw_packet *queued = NULL;

	if (*st == NNP_STATUS_INVALID_FIELD ||
	    (a->remote && *st == NNP_STATUS_NO_RESOURCES))
		nnp_fw_icl_count_drop_locked(fw, p);
	else if (a->remote && *st && !aborts)
		p->errors++;
	if (!*st)
		queued = enqueue_locked(fw, p, pk);
	/* Refused, a remote copy is credited back all the same. */
	if (a->remote && !pk->desc)
		nnp_fw_icl_credit_arrived_locked(p, queued ? queued : pk,
						 queued);
	if (aborts) {
		/* The communicator is dead, whatever its command waits for. */
		p->rx_packets++;
		a->woke |= fw->link_hooks->comm_failed_locked(fw, a->comm,
							      NNP_STATUS_ABORTED);
		*st = NNP_STATUS_SUCCESS;
	}
	/* An in-process sender refused room keeps its copy and waits. */
	if (!queued && (aborts || a->remote) && !pk->desc)
		nnp_fw_packet_free(pk);
	return queued;
}
