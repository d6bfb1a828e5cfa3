// SPDX-License-Identifier: MIT
/*
 * Firmware simulator inter-chip links: each port has a peer (chip, port), a
 * state, a queue of packets received, and a transport (struct
 * nnp_fw_transport) chosen when it is wired or attached: how it sends,
 * tells its peer of room freed, and takes back lent chunks. A remote peer
 * (another process) is reached through the host's icl_tx, and what the
 * host receives for us comes in through nnp_fw_icl_deliver(): the payload
 * is copied.
 *
 * A peer in this process gets copies too for point-to-point messages, but
 * a collective's chunk crosses as a descriptor: where the chunk lies in the
 * sender's device memory, taken from a fixed pool of the receiving port
 * (no allocation), and the receiver reduces or copies straight from there
 * into its own memory. The sender's link command (nnp_fw_op) counts what
 * it lent and what came back; it must not write over a lent chunk, nor end,
 * before the chunk came back (nnp_fw_icl_wait_returned()), and when it
 * ends early it takes back what was not read (nnp_fw_icl_reclaim()), so no
 * descriptor outlives the command, its keys or a reset. Dropping a
 * descriptor returns it like reading it.
 *
 * A packet is labelled with its communicator's epoch, the job's 64-bit
 * secret, and is taken only by that communicator's command, only on the
 * port it arrived on. On arrival a packet a communicator of this chip
 * would never take from that port (a collective's, off its ring) is
 * dropped and counted. One whose epoch no communicator here has yet is
 * kept, as its receiver may not have made its communicator yet. Any
 * packet, its communicator made or not, holds its room for as long as no
 * one needs it; past the device's default timeout (cfg.coll_timeout_ms,
 * whatever the communicators' own) it is dropped, with the job's other
 * packets there, and counted, by an arrival that finds the port full or
 * by the firmware's timed work once the port is short of room
 * (nnp_fw_icl_sweep()): a remote sender waiting for credits sends nothing
 * that would push it out. A communicator here that held it fails with
 * NO_RESOURCES. A rank of one job may be slow to make its communicator
 * after the rendezvous answer (seconds, loading its data on a debug
 * kernel), and one may never receive at all, while the port's room it
 * holds is every job's: so no one job's timeout may stretch it past
 * others' need.
 *
 * A port holds at most NNP_FW_PORT_RX_BYTES and NNP_FW_PORT_RX_PACKETS,
 * one communicator of an in-process peer at most NNP_FW_EPOCH_RX_BYTES and
 * NNP_FW_EPOCH_RX_PACKETS of it, so one that never receives leaves the
 * others room (several may fill it, until their packets go stale). An
 * in-process sender finding its peer full, or its communicator's share
 * taken, waits (parked, see nnp_fw_op) until the
 * receiver takes a packet: credits. A remote sender counts credits the
 * peer gives back (fw_icl_credit.c) when both ends offered them; without,
 * past the bound packets are dropped and counted. Waiting for a packet
 * parks the same way, bounded by the communicator's timeout on the host's
 * monotonic clock, and learns at once when the link goes down.
 *
 * Locks: a chip's fw->lock may be held when taking one of its ports'
 * locks, never the other way round, and never two chips' locks at once.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_internal.h"
#include "fw_reduce.h"

/* The in-process transport, at the end of this file. */
static const struct nnp_fw_transport local_transport;

void nnp_fw_ports_init(struct nnp_fw *fw)
{
	unsigned int i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		fw->ports[i].fw = fw;
		fw->ports[i].index = i;
		mtx_init(&fw->ports[i].lock, mtx_plain);
		cnd_init(&fw->ports[i].tx_idle);
		cnd_init(&fw->ports[i].lent_back);
	}
}

/*
 * Done with @pk, with p->lock held: a descriptor goes back to the pool and
 * to its lender (who may wait for it: lent_back), in-process or the peer
 * of a shared link; a copy is credited to a remote sender and freed.
 */
static void packet_release(struct nnp_fw_port *p, struct nnp_fw_packet *pk)
{
	if (!pk->desc) {
		nnp_fw_icl_credit_locked(p, pk);
		free(pk);
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

/* Unlink the packet *@link (@prev before it), with p->lock held. */
static struct nnp_fw_packet *unlink_at(struct nnp_fw_port *p,
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
	packet_release(p, unlink_at(p, link, prev));
}

static void free_packets(struct nnp_fw_port *p)
{
	while (p->rx_head)
		nnp_fw_icl_drop_at(p, &p->rx_head, NULL);
}

/*
 * Unwire @p, with p->lock held, and wait for the sends that took its peer
 * before: after this nothing sent on @p touches the peer any more.
 */
static void port_unwire_locked(struct nnp_fw_port *p)
{
	p->tp = NULL;
	p->peer = NULL;
	p->up = false;
	while (p->tx_busy)
		cnd_wait(&p->tx_idle, &p->lock);
}

void nnp_fw_ports_fini(struct nnp_fw *fw)
{
	unsigned int i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		struct nnp_fw_port *p = &fw->ports[i];
		struct nnp_fw *peer;
		uint32_t pp;

		mtx_lock(&p->lock);
		peer = p->peer;
		pp = p->peer_port;
		port_unwire_locked(p);
		free_packets(p);
		mtx_unlock(&p->lock);
		/* The peer's senders may be on their way into @p: wait for them. */
		if (peer) {
			mtx_lock(&peer->ports[pp].lock);
			port_unwire_locked(&peer->ports[pp]);
			mtx_unlock(&peer->ports[pp].lock);
			nnp_fw_icl_wake(peer, pp);
		}
		free(p->desc_pool);
		nnp_fw_icl_shared_fini(p);
		cnd_destroy(&p->lent_back);
		cnd_destroy(&p->tx_idle);
		mtx_destroy(&p->lock);
	}
}

static bool port_free(struct nnp_fw *fw, unsigned int port)
{
	bool ok;

	if (port >= fw->cfg.num_ports)
		return false;
	mtx_lock(&fw->ports[port].lock);
	ok = !fw->ports[port].tp;
	mtx_unlock(&fw->ports[port].lock);
	return ok;
}

/* The descriptor slots of a port that will have an in-process peer. */
static struct nnp_fw_packet *desc_pool_new(void)
{
	struct nnp_fw_packet *pool = calloc(NNP_FW_PORT_RX_PACKETS,
					    sizeof(*pool));
	uint32_t i;

	for (i = 0; pool && i + 1 < NNP_FW_PORT_RX_PACKETS; i++)
		pool[i].next = &pool[i + 1];
	return pool;
}

static void port_wire(struct nnp_fw *fw, unsigned int port, struct nnp_fw *peer,
		      unsigned int peer_port, struct nnp_fw_packet *pool)
{
	struct nnp_fw_port *p = &fw->ports[port];

	mtx_lock(&p->lock);
	p->tp = &local_transport;
	p->peer = peer;
	p->peer_chip = peer->cfg.chip_id;
	p->peer_port = peer_port;
	p->up = true;
	/* Kept, all slots free, when a peer destroyed left the port free. */
	if (pool)
		p->desc_pool = p->desc_free = pool;
	mtx_unlock(&p->lock);
}

int nnp_fw_link_connect(struct nnp_fw *a, unsigned int pa, struct nnp_fw *b,
			unsigned int pb)
{
	struct nnp_fw_packet *pool_a, *pool_b;

	if ((a == b && pa == pb) || !port_free(a, pa) || !port_free(b, pb))
		return -1;
	pool_a = a->ports[pa].desc_pool ? NULL : desc_pool_new();
	pool_b = b->ports[pb].desc_pool ? NULL : desc_pool_new();
	if ((!pool_a && !a->ports[pa].desc_pool) ||
	    (!pool_b && !b->ports[pb].desc_pool)) {
		free(pool_a);
		free(pool_b);
		return -1;
	}
	port_wire(a, pa, b, pb, pool_a);
	port_wire(b, pb, a, pa, pool_b);
	return 0;
}

int nnp_fw_link_attach_remote(struct nnp_fw *fw, unsigned int port,
			      uint32_t peer_chip, unsigned int peer_port)
{
	struct nnp_fw_port *p;

	if (port >= fw->cfg.num_ports)
		return -1;
	p = &fw->ports[port];
	mtx_lock(&p->lock);
	if (p->peer) {
		mtx_unlock(&p->lock);
		return -1;
	}
	p->tp = &nnp_fw_remote_transport;
	p->peer_chip = peer_chip;
	p->peer_port = peer_port;
	p->up = false;
	mtx_unlock(&p->lock);
	nnp_fw_icl_wake(fw, port);
	return 0;
}

struct nnp_fw_port *nnp_fw_remote_port_lock(struct nnp_fw *fw,
					    unsigned int port)
{
	struct nnp_fw_port *p;

	if (port >= fw->cfg.num_ports)
		return NULL;
	p = &fw->ports[port];
	mtx_lock(&p->lock);
	if (p->tp && p->tp->remote)
		return p;
	mtx_unlock(&p->lock);
	return NULL;
}

static void kick_queues(struct nnp_fw *fw)
{
	if (fw->host.kick)
		fw->host.kick(fw->host.opaque, NNP_FW_KICK_QUEUES);
}

/*
 * The link commands that use @port lose it, with fw->lock held: those
 * parked on it, and the collectives whose ring or algorithm runs over it
 * wherever they wait. Each is woken and ends LINK_DOWN at its next wait,
 * even if the link is up again by then (the far chip may have been reset
 * and forgotten the communicator); one whose data all came through
 * completes. True if there was any.
 */
static bool link_lost_locked(struct nnp_fw *fw, uint32_t port)
{
	bool any = false;
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		struct nnp_fw_op *op = fw->queues[i].op;

		if (op && ((op->parked && op->wait_port == port) ||
			   (op->ports >> port & 1))) {
			op->link_lost = true;
			op->ready = true;
			any = true;
		}
	}
	return any;
}

static void port_set(struct nnp_fw *fw, uint32_t port, bool up)
{
	struct nnp_fw_port *p = &fw->ports[port];
	bool was, lost = false;

	mtx_lock(&p->lock);
	was = p->up;
	p->up = up && p->tp;
	mtx_unlock(&p->lock);
	if (was && !up) {
		mtx_lock(&fw->lock);
		lost = link_lost_locked(fw, port);
		mtx_unlock(&fw->lock);
	}
	if (lost)
		kick_queues(fw);
	nnp_fw_icl_wake(fw, port);
}

/*
 * A link going down or up, from the monitor, a peer, a reset or a dead
 * chip: at both ends of an in-process link.
 */
void nnp_fw_link_set(struct nnp_fw *fw, unsigned int port, bool up)
{
	struct nnp_fw *peer;
	uint32_t pp;

	if (port >= NNP_FW_MAX_PORTS)
		return;
	mtx_lock(&fw->ports[port].lock);
	peer = fw->ports[port].peer;
	pp = fw->ports[port].peer_port;
	mtx_unlock(&fw->ports[port].lock);
	port_set(fw, port, up);
	if (peer)
		port_set(peer, pp, up);
}

static void count(struct nnp_fw *fw, uint64_t *counter, size_t len)
{
	mtx_lock(&fw->lock);
	*counter += len;
	mtx_unlock(&fw->lock);
}

/* Mark the ops parked on @port ready, with fw->lock held; true if any. */
static bool wake_locked(struct nnp_fw *fw, uint32_t port)
{
	bool any = false;
	uint32_t i;

	fw->ports[port].wakes++;
	fw->wakes++;
	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		struct nnp_fw_op *op = fw->queues[i].op;

		if (op && op->parked && (op->wait_port == port ||
					 op->wait_port == NNP_FW_ANY_PORT)) {
			op->ready = true;
			any = true;
		}
	}
	return any;
}

void nnp_fw_icl_wake(struct nnp_fw *fw, uint32_t port)
{
	bool any;

	mtx_lock(&fw->lock);
	any = wake_locked(fw, port);
	mtx_unlock(&fw->lock);
	if (any)
		kick_queues(fw);
}

/*
 * Park @op until something happens on @port, with fw->lock held: its
 * first wait starts its timeout, a wait past it ends PEER_TIMEOUT.
 */
static uint16_t park_locked(struct nnp_fw *fw, struct nnp_fw_op *op,
			    uint32_t port)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);

	if (op->aborted)
		return NNP_STATUS_ABORTED;
	if (op->link_lost)
		return NNP_STATUS_LINK_DOWN;
	if (!op->deadline_ns)
		op->deadline_ns = op->timeout_ns == UINT64_MAX ? UINT64_MAX :
				  now + op->timeout_ns;
	else if (now >= op->deadline_ns)
		return NNP_STATUS_PEER_TIMEOUT;
	op->parked = true;
	op->ready = false;
	op->wait_port = port;
	return NNP_FW_PARKED;
}

/* A copy of @data (none: left to fill), its payload right after the header. */
static struct nnp_fw_packet *packet_new(uint64_t epoch, uint32_t seq,
				       bool abort, const void *data, size_t len)
{
	struct nnp_fw_packet *pk = malloc(sizeof(*pk) + len);

	if (!pk)
		return NULL;
	*pk = (struct nnp_fw_packet){
		.epoch = epoch, .seq = seq, .abort = abort, .len = len,
		.data = (const uint8_t *)(pk + 1),
	};
	if (len && data)
		memcpy(pk + 1, data, len);
	return pk;
}

/*
 * Whether a communicator of this chip may take @pk from @port, with
 * fw->lock held: a collective's packet only on a port its ring or its
 * topology receives on (both ways: a ring's backward lane receives on
 * its send port). A packet of no communicator here may be for one not
 * made yet, and one of a communicator whose topology is not given yet for
 * a lane of a peer that has it: kept (nnp_fw_comm_set_topology() drops
 * those on no port of its).
 */
static bool rx_wanted_locked(struct nnp_fw *fw, uint32_t port,
			     const struct nnp_fw_packet *pk)
{
	const struct nnp_fw_comm *m = nnp_fw_comm_by_epoch_locked(fw, pk->epoch);

	return !m || (pk->seq & NNP_FW_SEQ_P2P) ||
	       (m->nranks > 1 &&
		(!m->topo_set || nnp_fw_comm_ports(m) >> port & 1));
}

static void count_drop_locked(struct nnp_fw *fw, struct nnp_fw_port *p)
{
	p->dropped++;
	p->errors++;
	fw->counters.icl_dropped++;
}

/*
 * Whether packets of @epoch were dropped stale on @p, with fw->lock and
 * p->lock held; the few last such epochs are kept, and one whose
 * communicator here failed for it is known by that.
 */
static bool epoch_lost_locked(struct nnp_fw *fw, const struct nnp_fw_port *p,
			      uint64_t epoch)
{
	const struct nnp_fw_comm *m = nnp_fw_comm_by_epoch_locked(fw, epoch);
	uint32_t i;

	if (m && m->error == NNP_STATUS_NO_RESOURCES)
		return true;
	for (i = 0; i < NNP_FW_LOST_EPOCHS && i < p->lost_next; i++)
		if (p->lost_epochs[i] == epoch)
			return true;
	return false;
}

/* Drop every packet of @epoch queued on @p, with p->lock held. */
static void drop_epoch_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			      uint64_t epoch)
{
	struct nnp_fw_packet **link = &p->rx_head, *prev = NULL;

	while (*link) {
		if ((*link)->epoch == epoch) {
			nnp_fw_icl_drop_at(p, link, prev);
			count_drop_locked(fw, p);
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
	struct nnp_fw_packet *pk = p->rx_head;
	bool woke = false;

	while (pk) {
		if (now - pk->arrived_ns >= nnp_fw_comm_timeout_ns(fw, 0)) {
			struct nnp_fw_comm *m =
				nnp_fw_comm_by_epoch_locked(fw, pk->epoch);

			p->lost_epochs[p->lost_next++ % NNP_FW_LOST_EPOCHS] =
				pk->epoch;
			drop_epoch_locked(fw, p, pk->epoch);
			if (m)
				woke |= fw->link_hooks->comm_failed_locked(fw, m,
						NNP_STATUS_NO_RESOURCES);
			pk = p->rx_head;
			continue;
		}
		pk = pk->next;
	}
	return woke;
}

static bool rx_fits(const struct nnp_fw_port *p, size_t len)
{
	return p->held_packets < NNP_FW_PORT_RX_PACKETS &&
	       p->held_bytes + len <= NNP_FW_PORT_RX_BYTES;
}

/*
 * Room for @len more bytes on @p, with fw->lock and p->lock held: a packet
 * holds its room for as long as no arrival needs it. *@woke is set if a
 * communicator failed for it.
 */
static bool rx_room_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			   size_t len, uint64_t now, bool *woke)
{
	if (rx_fits(p, len))
		return true;
	*woke |= drop_stale_locked(fw, p, now);
	return rx_fits(p, len);
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

/* The communicator here @pk is the abort of a collective of; else NULL. */
static struct nnp_fw_comm *abort_for_locked(struct nnp_fw *fw,
					    const struct nnp_fw_packet *pk)
{
	return pk->abort && !(pk->seq & NNP_FW_SEQ_P2P) ?
	       nnp_fw_comm_by_epoch_locked(fw, pk->epoch) : NULL;
}

/*
 * A packet arrives on @port of @fw: queued for its receiver (SUCCESS),
 * refused for want of room (NO_RESOURCES), or not for this chip (dropped,
 * INVALID_FIELD). LINK_DOWN if the port is down, or for a @remote packet
 * not remote. A descriptor (@pk->owner) is queued as a copy of @pk in a
 * slot of the port's pool; the caller keeps a copy @pk unless it was queued.
 * A collective's abort for a communicator here is taken at once (freed):
 * the communicator is dead, whatever its command in flight waits for.
 */
uint16_t nnp_fw_icl_rx_arrive(struct nnp_fw *fw, uint32_t port,
			      struct nnp_fw_packet *pk, bool remote)
{
	struct nnp_fw_port *p = &fw->ports[port];
	bool lost = fw->link_hooks->rx_fault(fw, port);	/* an injected fault */
	uint16_t st = NNP_STATUS_SUCCESS;
	struct nnp_fw_comm *m = NULL;
	bool woke = false;

	pk->arrived_ns = fw->host.now_ns(fw->host.opaque);
	mtx_lock(&fw->lock);
	mtx_lock(&p->lock);
	if (remote && !pk->desc)
		nnp_fw_icl_credit_owed_locked(p, pk);
	if (!p->up || (remote && !(p->tp && p->tp->remote)))
		st = NNP_STATUS_LINK_DOWN;
	else
		m = lost ? NULL : abort_for_locked(fw, pk);
	if (!st && !m) {
		if (lost || !rx_wanted_locked(fw, port, pk) ||
		    epoch_lost_locked(fw, p, pk->epoch))
			st = NNP_STATUS_INVALID_FIELD;
		else if (!rx_room_locked(fw, p, pk->len, pk->arrived_ns,
					 &woke) ||
			 (pk->desc && !p->desc_free) ||
			 (!remote && !rx_share_fits(p, pk)))
			st = NNP_STATUS_NO_RESOURCES;
		/* Its own epoch's packets, gone stale making room. */
		else if (epoch_lost_locked(fw, p, pk->epoch))
			st = NNP_STATUS_INVALID_FIELD;
	}
	if (m) {
		p->rx_packets++;
		woke = fw->link_hooks->comm_failed_locked(fw, m,
							  NNP_STATUS_ABORTED);
		nnp_fw_icl_credit_locked(p, pk);
		free(pk);
	} else if (!st) {
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
		woke |= wake_locked(fw, port);
	} else if (st == NNP_STATUS_INVALID_FIELD ||
		   (remote && st == NNP_STATUS_NO_RESOURCES)) {
		count_drop_locked(fw, p);
	} else if (remote) {
		p->errors++;
	}
	/* Refused, a remote copy is credited back all the same. */
	if (st)
		nnp_fw_icl_credit_locked(p, pk);
	/* An in-process sender refused room keeps its packet and waits. */
	mtx_unlock(&p->lock);
	mtx_unlock(&fw->lock);
	if (woke)
		kick_queues(fw);
	return st;
}

/* The wait of @op made progress: its next one gets a whole timeout. */
static void op_progress(struct nnp_fw *fw, struct nnp_fw_op *op)
{
	if (!op)
		return;
	mtx_lock(&fw->lock);
	op->deadline_ns = 0;
	mtx_unlock(&fw->lock);
}

uint32_t nnp_fw_icl_wakes(struct nnp_fw *fw, uint32_t port)
{
	uint32_t wakes;

	mtx_lock(&fw->lock);
	wakes = fw->ports[port].wakes;
	mtx_unlock(&fw->lock);
	return wakes;
}

uint16_t nnp_fw_icl_park_for_room(struct nnp_fw *fw, struct nnp_fw_op *op,
				  uint32_t port, uint32_t wakes)
{
	uint16_t st = NNP_FW_SEND_AGAIN;

	mtx_lock(&fw->lock);
	if (fw->ports[port].wakes == wakes)
		st = park_locked(fw, op, port);
	mtx_unlock(&fw->lock);
	return st;
}

/*
 * A packet of @wire modeled ns left @p at @depart, with p->lock held:
 * the port's transmit direction is busy until it is out.
 */
static void model_sent(struct nnp_fw_port *p, struct nnp_fw_op *op,
		       uint64_t depart, uint64_t wire)
{
	nnp_fw_tx_take(&p->model_tx, depart, wire);
	p->model_busy_ns += wire;
	if (op)
		op->tx_end_ns = nnp_fw_max_ns(op->tx_end_ns, depart + wire);
}

void nnp_fw_icl_sent(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port,
		     size_t len, uint64_t depart, uint64_t wire)
{
	struct nnp_fw_port *p = &fw->ports[port];

	mtx_lock(&p->lock);
	p->tx_bytes += len;
	p->tx_packets++;
	model_sent(p, op, depart, wire);
	mtx_unlock(&p->lock);
	count(fw, &fw->counters.icl_tx_bytes, len);
	op_progress(fw, op);
}

/* A chunk @op lent that is free again at once: copied, or dropped. */
static void lent_and_back(struct nnp_fw_op *op)
{
	op->lent++;
	atomic_fetch_add(&op->returned, 1);
}

/*
 * Hand a packet to the host's transport, with no lock held: it may block
 * until the bytes are on their way, and first, on a link that counts
 * credits, @op may park until the peer has room (fw_icl_credit.c). A copy
 * leaves a lent chunk free at once.
 */
uint16_t nnp_fw_icl_remote_send(struct nnp_fw *fw, struct nnp_fw_op *op,
				uint32_t port, const struct nnp_fw_packet *tpl,
				uint64_t at)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint64_t wire = nnp_fw_ns_at(tpl->len, fw->cfg.icl_mbps), depart;
	uint32_t gen;
	uint16_t st;
	bool ok;

	do {
		st = nnp_fw_icl_credit_take(fw, op, port, tpl->len, &gen);
	} while (st == NNP_FW_SEND_AGAIN);
	if (st)
		return st;
	mtx_lock(&p->lock);
	ok = p->up;
	depart = nnp_fw_tx_fit(&p->model_tx, at, wire);
	mtx_unlock(&p->lock);
	ok = ok && fw->host.icl_tx && tpl->len <= NNP_FW_ICL_MAX_PACKET &&
	     !fw->host.icl_tx(fw->host.opaque, port, tpl->epoch, tpl->seq,
			      tpl->abort, depart + wire + fw->cfg.icl_latency_ns,
			      tpl->data, tpl->len);
	mtx_lock(&p->lock);
	if (ok) {
		p->tx_bytes += tpl->len;
		p->tx_packets++;
		model_sent(p, op, depart, wire);
	} else {
		p->errors++;
	}
	mtx_unlock(&p->lock);
	if (!ok) {
		nnp_fw_icl_credit_undo(fw, port, tpl->len, gen);
		return NNP_STATUS_LINK_DOWN;
	}
	count(fw, &fw->counters.icl_tx_bytes, tpl->len);
	if (tpl->owner)
		lent_and_back(tpl->owner);
	return NNP_STATUS_SUCCESS;
}

/*
 * Into the in-process peer's port: a copy, or a descriptor of the lent
 * chunk. A full peer parks @op until it has room, or without @op drops
 * the packet.
 */
static uint16_t local_send(struct nnp_fw *fw, struct nnp_fw_op *op,
			   uint32_t port, const struct nnp_fw_packet *tpl,
			   uint64_t at)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint16_t st = NNP_FW_SEND_AGAIN;

	while (st == NNP_FW_SEND_AGAIN) {
		struct nnp_fw_packet desc = *tpl, *pk = &desc;
		uint64_t wire = nnp_fw_ns_at(tpl->len, fw->cfg.icl_mbps), depart;
		struct nnp_fw *peer;
		uint32_t pp, wakes;

		wakes = nnp_fw_icl_wakes(fw, port);
		mtx_lock(&p->lock);
		peer = p->up ? p->peer : NULL;
		pp = p->peer_port;
		depart = nnp_fw_tx_fit(&p->model_tx, at, wire);
		if (!peer)
			p->errors++;
		else
			p->tx_busy++;	/* @peer stays until we are out of it */
		mtx_unlock(&p->lock);
		if (!peer)
			return NNP_STATUS_LINK_DOWN;

		if (!tpl->owner)
			pk = packet_new(tpl->epoch, tpl->seq, tpl->abort,
					tpl->data, tpl->len);
		if (pk)
			pk->model_ns = depart + wire + fw->cfg.icl_latency_ns;
		st = pk ? nnp_fw_icl_rx_arrive(peer, pp, pk, false) :
			  NNP_STATUS_NO_RESOURCES;
		mtx_lock(&p->lock);
		if (!--p->tx_busy)
			cnd_broadcast(&p->tx_idle);	/* port_unwire_locked() */
		mtx_unlock(&p->lock);
		if (!pk)
			return NNP_STATUS_NO_RESOURCES;
		if (st && !tpl->owner) {
			free(pk);
		} else if (!st) {
			if (tpl->owner)
				tpl->owner->lent++;
			nnp_fw_icl_sent(fw, op, port, tpl->len, depart, wire);
		}
		/* Dropped by the receiver: the link carried it all the same. */
		if (st == NNP_STATUS_INVALID_FIELD) {
			st = NNP_STATUS_SUCCESS;
			if (tpl->owner)
				lent_and_back(tpl->owner);
		}
		if (st == NNP_STATUS_NO_RESOURCES && op)
			st = nnp_fw_icl_park_for_room(fw, op, port, wakes);
	}
	return st;
}

/* Send on @port through its transport, at @at or after; LINK_DOWN if none. */
static uint16_t send_packet(struct nnp_fw *fw, struct nnp_fw_op *op,
			    uint32_t port, const struct nnp_fw_packet *tpl,
			    uint64_t at)
{
	struct nnp_fw_port *p = &fw->ports[port];
	const struct nnp_fw_transport *tp;

	mtx_lock(&p->lock);
	tp = p->tp;
	if (!tp)
		p->errors++;
	mtx_unlock(&p->lock);
	return tp ? tp->send(fw, op, port, tpl, at) : NNP_STATUS_LINK_DOWN;
}

uint16_t nnp_fw_icl_send(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 bool abort, const void *data, size_t len)
{
	const struct nnp_fw_packet tpl = {
		.epoch = epoch, .seq = seq, .abort = abort, .len = len,
		.data = data,
	};

	return send_packet(fw, op, port, &tpl, op ? op->t_ns : 0);
}

void nnp_fw_icl_send_aborts(struct nnp_fw *fw, uint32_t ports, uint64_t epoch,
			    uint32_t seq)
{
	uint32_t port;

	for (port = 0; port < NNP_FW_MAX_PORTS; port++)
		if (ports >> port & 1)
			nnp_fw_icl_send(fw, NULL, port, epoch, seq, true, NULL, 0);
}

uint16_t nnp_fw_icl_lend(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 const void *data, size_t len, uint64_t at)
{
	const struct nnp_fw_packet tpl = {
		.epoch = epoch, .seq = seq, .len = len, .data = data, .owner = op,
		.desc = true,
	};

	return send_packet(fw, op, port, &tpl, at);
}

struct nnp_fw_packet *nnp_fw_icl_rx_alloc(struct nnp_fw *fw, unsigned int port,
					  size_t len)
{
	if (port >= fw->cfg.num_ports || len > NNP_FW_ICL_MAX_PACKET)
		return NULL;
	return packet_new(0, 0, false, NULL, len);
}

void *nnp_fw_icl_rx_data(struct nnp_fw_packet *pk)
{
	return pk + 1;
}

void nnp_fw_icl_rx_drop(struct nnp_fw_packet *pk)
{
	free(pk);
}

int nnp_fw_icl_rx_queue(struct nnp_fw *fw, unsigned int port,
			struct nnp_fw_packet *pk, uint64_t epoch, uint32_t seq,
			bool abort, uint64_t model_ns)
{
	pk->epoch = epoch;
	pk->seq = seq;
	pk->abort = abort;
	pk->model_ns = model_ns;
	if (nnp_fw_icl_rx_arrive(fw, port, pk, true)) {
		free(pk);
		return -1;
	}
	return 0;
}

int nnp_fw_icl_deliver(struct nnp_fw *fw, unsigned int port, uint64_t epoch,
		       uint32_t seq, bool abort, uint64_t model_ns,
		       const void *data, size_t len)
{
	struct nnp_fw_packet *pk;

	if (port >= fw->cfg.num_ports)
		return -1;
	pk = nnp_fw_icl_rx_alloc(fw, port, len);
	if (!pk) {
		struct nnp_fw_packet lost = { .len = len };

		mtx_lock(&fw->ports[port].lock);
		fw->ports[port].errors++;
		nnp_fw_icl_credit_owed_locked(&fw->ports[port], &lost);
		nnp_fw_icl_credit_locked(&fw->ports[port], &lost);
		mtx_unlock(&fw->ports[port].lock);
		return -1;
	}
	if (len)
		memcpy(nnp_fw_icl_rx_data(pk), data, len);
	return nnp_fw_icl_rx_queue(fw, port, pk, epoch, seq, abort, model_ns);
}

/* Unlink and return the packet (@epoch, @seq), with p->lock held. */
static struct nnp_fw_packet *take(struct nnp_fw_port *p, uint64_t epoch,
				  uint32_t seq)
{
	struct nnp_fw_packet **link = &p->rx_head, *prev = NULL;

	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->epoch == epoch && pk->seq == seq)
			return unlink_at(p, link, prev);
		prev = pk;
		link = &pk->next;
	}
	return NULL;
}

/* Put the payload @data of @len bytes where @into says. */
static void rx_consume(const struct nnp_fw_rx_into *into, const uint8_t *data,
		       size_t len)
{
	if (!len)
		return;
	/* One pass over with, data and buf: no copy of with into buf first. */
	if (into->reduce)
		nnp_fw_reduce_into(into->dtype, into->op, into->buf,
				   into->with ? into->with : into->buf, data,
				   len / nnp_fw_dtype_size(into->dtype));
	else
		memcpy(into->buf, data, len);
}

uint16_t nnp_fw_icl_recv_into(struct nnp_fw *fw, struct nnp_fw_op *op,
			      uint32_t port, uint64_t epoch, uint32_t seq,
			      const struct nnp_fw_rx_into *into, size_t len)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint16_t status = NNP_STATUS_SUCCESS;
	const struct nnp_fw_transport *tp;
	struct nnp_fw_packet *pk;
	struct nnp_fw *peer;
	uint32_t pp;

	mtx_lock(&fw->lock);
	mtx_lock(&p->lock);
	pk = take(p, epoch, seq);
	if (pk)
		op->deadline_ns = 0;
	/* The shared peer's memory stays mapped until this read is over. */
	if (pk && pk->desc && !pk->owner)
		p->peer_reads++;
	if (!pk)
		status = p->up ? park_locked(fw, op, port) : NNP_STATUS_LINK_DOWN;
	tp = p->tp;
	peer = p->peer;
	pp = p->peer_port;
	mtx_unlock(&p->lock);
	mtx_unlock(&fw->lock);
	if (!pk)
		return status;
	/*
	 * Taken, a descriptor stays out of the pool and unreturned while we
	 * read the sender's memory: its command waits for that to end.
	 */
	op->t_ns = nnp_fw_max_ns(op->t_ns, pk->model_ns);
	if (pk->abort) {
		status = NNP_STATUS_ABORTED;
	} else if (pk->len != len) {
		status = NNP_STATUS_INVALID_FIELD;	/* ranks disagree on the call */
		nnp_fw_guest_error(fw, "port %u: packet %#x of epoch %#llx has %zu bytes, the receive %zu: the ranks disagree on the call",
				   port, seq, (unsigned long long)epoch, pk->len, len);
	} else {
		if (!fw->cfg.timing_only)
			rx_consume(into, pk->data, len);
		/* A reduction reads two operands and writes one. */
		nnp_fw_clock_hbm(fw, op, into->reduce ? 3 * len : len);
	}
	mtx_lock(&p->lock);
	if (pk->desc && !pk->owner && !--p->peer_reads)
		cnd_broadcast(&p->lent_back);
	packet_release(p, pk);
	mtx_unlock(&p->lock);
	/* Room at this end, a lent chunk back: a sender waiting goes on. */
	if (tp)
		tp->room_freed(peer, pp);
	return status;
}

uint16_t nnp_fw_icl_recv(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 void *buf, size_t len)
{
	const struct nnp_fw_rx_into into = { .buf = buf };

	return nnp_fw_icl_recv_into(fw, op, port, epoch, seq, &into, len);
}

uint16_t nnp_fw_icl_wait_returned(struct nnp_fw *fw, struct nnp_fw_op *op,
				  uint32_t port, uint32_t want)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint16_t status = NNP_STATUS_SUCCESS;
	uint32_t back;

	/* A return after this check wakes us only after we parked: fw->lock. */
	mtx_lock(&fw->lock);
	back = atomic_load(&op->returned);
	if (back < want) {
		/* Every chunk the receiver read is progress. */
		if (back != op->returned_seen)
			op->deadline_ns = 0;
		op->returned_seen = back;
		mtx_lock(&p->lock);
		status = p->up ? park_locked(fw, op, port) : NNP_STATUS_LINK_DOWN;
		mtx_unlock(&p->lock);
	}
	mtx_unlock(&fw->lock);
	return status;
}

/* Lent chunks the in-process peer holds: see nnp_fw_icl_reclaim(). */
static void local_reclaim(struct nnp_fw *fw, struct nnp_fw_op *op,
			  uint32_t port)
{
	struct nnp_fw_port *p = &fw->ports[port], *q;
	struct nnp_fw_packet **link, *prev = NULL;
	struct nnp_fw *peer;
	uint32_t pp;

	mtx_lock(&p->lock);
	peer = p->peer;
	pp = p->peer_port;
	if (peer)
		p->tx_busy++;
	mtx_unlock(&p->lock);
	/* Unwired: the peer's ports_fini dropped all it held, and reads none. */
	if (!peer)
		return;
	q = &peer->ports[pp];
	mtx_lock(&q->lock);
	link = &q->rx_head;
	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->owner == op) {
			nnp_fw_icl_drop_at(q, link, prev);
			continue;
		}
		prev = pk;
		link = &pk->next;
	}
	/* The rest is being read now: a copy or reduction, it ends soon. */
	while (atomic_load(&op->returned) != op->lent)
		cnd_wait(&q->lent_back, &q->lock);
	mtx_unlock(&q->lock);
	mtx_lock(&p->lock);
	if (!--p->tx_busy)
		cnd_broadcast(&p->tx_idle);
	mtx_unlock(&p->lock);
}

void nnp_fw_icl_reclaim(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port)
{
	const struct nnp_fw_transport *tp;

	if (atomic_load(&op->returned) == op->lent)
		return;
	mtx_lock(&fw->ports[port].lock);
	tp = fw->ports[port].tp;
	mtx_unlock(&fw->ports[port].lock);
	if (tp)
		tp->reclaim(fw, op, port);
}

void nnp_fw_icl_ports_info(struct nnp_fw *fw, struct nnp_hw_port_info *info)
{
	unsigned int i;

	for (i = 0; i < fw->cfg.num_ports; i++) {
		struct nnp_fw_port *p = &fw->ports[i];

		memset(&info[i], 0, sizeof(info[i]));
		mtx_lock(&p->lock);
		if (p->tp) {
			info[i].state = NNP_PORT_WIRED | (p->up ? NNP_PORT_UP : 0);
			info[i].peer = NNP_PORT_PEER(p->peer_chip, p->peer_port);
		}
		info[i].tx_bytes = p->tx_bytes;
		info[i].rx_bytes = p->rx_bytes;
		info[i].tx_packets = p->tx_packets;
		info[i].rx_packets = p->rx_packets;
		info[i].errors = p->errors;
		mtx_unlock(&p->lock);
	}
}

uint64_t nnp_fw_icl_held_bytes(struct nnp_fw *fw)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		mtx_lock(&fw->ports[i].lock);
		n += fw->ports[i].held_bytes;
		mtx_unlock(&fw->ports[i].lock);
	}
	return n;
}

/* Tell the peer of @port that this end has room again. */
static void room_freed(struct nnp_fw *fw, uint32_t port)
{
	const struct nnp_fw_transport *tp;
	struct nnp_fw *peer;
	uint32_t pp;

	mtx_lock(&fw->ports[port].lock);
	tp = fw->ports[port].tp;
	peer = fw->ports[port].peer;
	pp = fw->ports[port].peer_port;
	mtx_unlock(&fw->ports[port].lock);
	if (tp)
		tp->room_freed(peer, pp);
}

/*
 * A remote peer finds no flow control here, and a shared one learns of
 * room from the chunks given back (fw_icl_shared.c).
 */
void nnp_fw_icl_room_freed_none(struct nnp_fw *peer, uint32_t peer_port)
{
	(void)peer;
	(void)peer_port;
}

static void remote_reclaim(struct nnp_fw *fw, struct nnp_fw_op *op,
			   uint32_t port)
{
	(void)fw;
	(void)op;
	(void)port;
}

static const struct nnp_fw_transport local_transport = {
	.send = local_send,
	.room_freed = nnp_fw_icl_wake,
	.reclaim = local_reclaim,
};

const struct nnp_fw_transport nnp_fw_remote_transport = {
	.remote = true,
	.send = nnp_fw_icl_remote_send,
	.room_freed = nnp_fw_icl_room_freed_none,
	.reclaim = remote_reclaim,
};

void nnp_fw_icl_purge(struct nnp_fw *fw, uint32_t port, uint64_t epoch,
		      uint64_t below)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_packet **link, *prev = NULL;

	mtx_lock(&p->lock);
	link = &p->rx_head;
	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->epoch == epoch && pk->seq < below) {
			nnp_fw_icl_drop_at(p, link, prev);
			continue;
		}
		prev = pk;
		link = &pk->next;
	}
	mtx_unlock(&p->lock);
	room_freed(fw, port);
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
			count_drop_locked(fw, p);
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
			room_freed(fw, i);
		if (woke)
			kick_queues(fw);
	}
}

void nnp_fw_icl_purge_all(struct nnp_fw *fw)
{
	unsigned int i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		mtx_lock(&fw->ports[i].lock);
		free_packets(&fw->ports[i]);
		mtx_unlock(&fw->ports[i].lock);
		room_freed(fw, i);
	}
}
