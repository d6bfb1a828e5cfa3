// SPDX-License-Identifier: MIT
/*
 * Firmware simulator relay: a routed message (v1.12) between two ranks
 * whose chips share no link crosses the chips between them, each of which
 * forwards its packets on the port its communicator's routes
 * (COMM_ROUTES) name for the destination rank. The packet's label says
 * where it goes (nnp_fw_seq_routed()); it never leaves device memory.
 *
 * A packet to forward waits in the queue of the port it came in on, and
 * holds that port's room while it waits: so the hop before it is held
 * back by the same room, shares and credits as any sender, and a relay
 * that cannot go on stops its senders rather than losing their packets.
 * It leaves through the next hop's transport like any packet, and parks
 * (the relay's own op) while the next hop has no room; only then is it
 * let go at this end, so the hop before learns of the room. A pair's
 * packets come in on one port and leave on one: forwarded in arrival
 * order, they keep their order.
 *
 * An exchange's first hop lends its chunks (fw_xchg.c): the relay
 * forwards a descriptor as a copy of the lender's bytes, and of its call
 * for the receiver to check (v1.16), and gives the chunk back once the
 * copy is out. Until then it is lent, as to a
 * receiver that has not read it: its lender waits for it, or takes it
 * back from the queue when its command fails. A copy goes on whole to an
 * in-process next hop, not copied again: a message is copied at most
 * once on its way, and once where it lands.
 *
 * A transit communicator (v1.22) is a ring hop of ranks whose chips share
 * no link: its collectives' packets, aborts and leaves included, go out
 * on the other port of its pair, in the order they came, and its routed
 * ones by its routes. The ranks at both ends see the hop as a link.
 *
 * A packet whose communicator this chip has not made, or not routed, yet
 * waits for it, within the room's stale bound (fw_purge.c), as any packet
 * of a communicator not made yet. One for a rank this chip has no route
 * to is dropped and counted. A next hop whose link is down drops the
 * packet and fails the communicator here, which passes the failure on to
 * every rank as any link failure does.
 */
#include "fw_transport.h"

enum hop {
	HOP_KEEP,	/* not to forward, or not yet */
	HOP_FORWARD,
	HOP_DROP,	/* no route, or not a packet a relay forwards */
};

/*
 * Where a transit communicator @m passes its packet of a collective (not
 * routed) that came in on @port: the other port of its pair.
 */
static enum hop pass_hop(const struct nnp_fw_comm *m, uint32_t port,
			 uint32_t *out)
{
	if (port != m->send_port && port != m->recv_port)
		return HOP_DROP;
	*out = port == m->send_port ? m->recv_port : m->send_port;
	return HOP_FORWARD;
}

/*
 * What this chip does with @pk, queued on @port, with fw->lock held;
 * *@out its port.
 */
static enum hop next_hop_locked(struct nnp_fw *fw, uint32_t port,
				const struct nnp_fw_packet *pk, uint32_t *out)
{
	const struct nnp_fw_comm *m = nnp_fw_comm_by_epoch_locked(fw, pk->epoch);
	uint32_t dst;

	if (!m)
		return HOP_KEEP;
	if (!nnp_fw_seq_is_routed(pk->seq))
		return nnp_fw_comm_transit(m) ? pass_hop(m, port, out) : HOP_KEEP;
	if (!m->routes)
		return HOP_KEEP;
	dst = nnp_fw_seq_dst(pk->seq);
	if (dst == m->rank)
		return HOP_KEEP;
	if (dst >= m->nranks || m->routes[dst] == NNP_HW_ROUTE_NONE)
		return HOP_DROP;
	*out = m->routes[dst];
	return HOP_FORWARD;
}

/*
 * Unlink the first packet of @port to forward on a port not in @skip, with
 * fw->lock held; NULL if none. Those that cannot be forwarded are dropped
 * on the way: *@freed says so.
 */
static struct nnp_fw_packet *transit_take_locked(struct nnp_fw *fw,
						 uint32_t port, uint32_t skip,
						 uint32_t *out, bool *freed)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_packet **link, *prev = NULL, *pk = NULL;

	mtx_lock(&p->lock);
	link = &p->rx_head;
	while (*link) {
		enum hop h = next_hop_locked(fw, port, *link, out);

		if (h == HOP_DROP) {
			nnp_fw_icl_drop_at(p, link, prev);
			nnp_fw_icl_count_drop_locked(fw, p);
			*freed = true;
			continue;
		}
		if (h == HOP_FORWARD && !(skip >> *out & 1)) {
			pk = nnp_fw_icl_unlink_at(p, link, prev);
			nnp_fw_icl_read_begin_locked(p, pk);
			break;
		}
		prev = *link;
		link = &(*link)->next;
	}
	mtx_unlock(&p->lock);
	return pk;
}

/*
 * @pk, taken from @port, was forwarded with status @st, with fw->lock
 * held: let it go (unless it is @gone, handed on whole), and on a failure
 * drop it and fail its communicator (true: a worker must pass that on).
 */
static bool transit_done_locked(struct nnp_fw *fw, uint32_t port,
				struct nnp_fw_packet *pk, uint16_t st,
				bool gone)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_comm *m = NULL;

	mtx_lock(&p->lock);
	if (st) {
		nnp_fw_icl_count_drop_locked(fw, p);
		m = nnp_fw_comm_by_epoch_locked(fw, pk->epoch);
	}
	if (!gone)
		nnp_fw_icl_read_done_locked(p, pk);
	mtx_unlock(&p->lock);
	return m && fw->link_hooks->comm_failed_locked(fw, m, st, port);
}

/*
 * Forward what waits on @port, but for next hops in *@blocked, which the
 * ones found full join; true if a communicator failed.
 */
static bool relay_port(struct nnp_fw *fw, uint32_t port, uint32_t *blocked)
{
	bool freed = false, failed = false, gone;
	struct nnp_fw_packet *pk;
	uint32_t out = 0;
	uint16_t st;

	for (;;) {
		mtx_lock(&fw->lock);
		pk = transit_take_locked(fw, port, *blocked, &out, &freed);
		mtx_unlock(&fw->lock);
		if (!pk)
			break;
		gone = false;
		st = out < fw->cfg.num_ports ?
		     nnp_fw_icl_forward(fw, &fw->relay_op, out, pk, &gone) :
		     NNP_STATUS_LINK_DOWN;
		mtx_lock(&fw->lock);
		if (st == NNP_FW_PARKED) {
			/* First again: the pair's later packets stay behind it. */
			mtx_lock(&fw->ports[port].lock);
			nnp_fw_icl_requeue_first_locked(&fw->ports[port], pk);
			nnp_fw_icl_read_end_locked(&fw->ports[port], pk);
			mtx_unlock(&fw->ports[port].lock);
			*blocked |= 1u << out;
		} else {
			failed |= transit_done_locked(fw, port, pk, st, gone);
			freed = true;
		}
		mtx_unlock(&fw->lock);
	}
	if (freed)
		nnp_fw_icl_room_freed(fw, port);
	return failed;
}

void nnp_fw_relay_run(struct nnp_fw *fw)
{
	/*
	 * A wake or an arrival while a pass runs sets relay_pending again,
	 * which this loop sees once it lets go of relay_busy: none is lost.
	 */
	while (atomic_load(&fw->relay_pending) &&
	       !atomic_exchange(&fw->relay_busy, true)) {
		uint32_t blocked = 0, port;
		bool failed = false;

		atomic_store(&fw->relay_pending, false);
		for (port = 0; port < fw->cfg.num_ports; port++)
			failed |= relay_port(fw, port, &blocked);
		mtx_lock(&fw->lock);
		/* Room at any next hop it waits for wakes it. */
		if (blocked && fw->relay_op.parked)
			fw->relay_op.wait_port = NNP_FW_ANY_PORT;
		mtx_unlock(&fw->lock);
		atomic_store(&fw->relay_busy, false);
		if (failed)
			nnp_fw_icl_kick(fw);
	}
}

void nnp_fw_relay_init(struct nnp_fw *fw)
{
	fw->relay_op.timeout_ns = UINT64_MAX;
}

void nnp_fw_relay_routes_changed(struct nnp_fw *fw)
{
	atomic_store(&fw->relay_pending, true);
	nnp_fw_icl_kick(fw);
}
