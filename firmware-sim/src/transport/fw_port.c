// SPDX-License-Identifier: MIT
/*
 * Firmware simulator ports: a link going down or up, and waking and
 * parking the link commands that wait on a port. Above the receive queues
 * (fw_rx_queue.c), below everything else of the transport: purging,
 * credits, receiving, sending and wiring (fw_purge.c, fw_icl_credit.c,
 * fw_rx.c, fw_lend.c, fw_wire.c) build on it. See fw_transport.h for the
 * whole.
 */
#include <stdlib.h>

#include "fw_transport.h"

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
		nnp_fw_icl_drop_all_locked(p);
		mtx_unlock(&p->lock);
		/* The peer's senders may be on their way into @p: wait for them. */
		if (peer) {
			mtx_lock(&peer->ports[pp].lock);
			port_unwire_locked(&peer->ports[pp]);
			mtx_unlock(&peer->ports[pp].lock);
			nnp_fw_icl_wake(peer, pp);
		}
		/* The pool and a shared link's slots (fw_icl_shared.c). */
		free(p->desc_pool);
		free(p->lent);
		cnd_destroy(&p->lent_back);
		cnd_destroy(&p->tx_idle);
		mtx_destroy(&p->lock);
	}
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

void nnp_fw_icl_kick(struct nnp_fw *fw)
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

/* True if a command of communicator @comm here was caught by a link's loss. */
static bool caught_locked(struct nnp_fw *fw, uint32_t comm)
{
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		const struct nnp_fw_op *op = fw->queues[i].op;

		if (op && op->link_lost && nnp_fw_op_uses_comm(op, comm))
			return true;
	}
	return false;
}

/*
 * @port went down, with fw->lock held (v1.23): each communicator that
 * sends over it (its ring, its algorithm, a transit's pair, or a route
 * of any rank's) fails with LINK_DOWN at once, idle or not, and passes
 * an abort round its ring. Otherwise a routed RECV whose message would
 * have crossed the link, or a rank beyond a transit, waits out its
 * timeout: no command of theirs is on @port to learn of it by. At once,
 * too, where a command here was caught (it ends LINK_DOWN itself): so an
 * abort that comes round first does not name the failure ABORTED here.
 * Each is logged as a warning. True if any failed (a worker sends the
 * aborts).
 */
static bool comms_lost_locked(struct nnp_fw *fw, uint32_t port)
{
	bool any = false;
	uint32_t i;

	for (i = 1; i < NNP_HW_MAX_COMMS; i++) {
		struct nnp_fw_comm *m = &fw->comms[i];
		uint32_t uses = nnp_fw_comm_ports(m) | nnp_fw_comm_route_ports(m);

		if (!m->ctx || !(uses >> port & 1) ||
		    !fw->link_hooks->comm_failed_locked(fw, m,
				NNP_STATUS_LINK_DOWN,
				caught_locked(fw, i) ? NNP_HW_EVENT_NO_PORT : port))
			continue;
		/* Told as a command's failure is: the host's log says why. */
		nnp_fw_op_failed(fw, NNP_STATUS_LINK_DOWN,
				 "comm %u failed: its link on port %u went down",
				 i, port);
		any = true;
	}
	return any;
}

/* One end of a link, as links_set() changes it. */
struct link_end {
	struct nnp_fw *fw;
	uint32_t port;
	bool was;		/* up before */
	bool changed;		/* by links_set() */
	bool lost;		/* its going down ended something */
};

/* Set @e's port to @up (if wired); its change is told first. */
static void end_mark(struct link_end *e, bool up)
{
	struct nnp_fw_port *p = &e->fw->ports[e->port];
	bool now;

	mtx_lock(&p->lock);
	e->was = p->up;
	p->up = up && p->tp;
	now = p->up;
	mtx_unlock(&p->lock);
	e->changed = e->was != now;
	/* Told first: the failures the change causes come after it. */
	if (e->changed)
		e->fw->link_hooks->link_changed(e->fw, e->port, NNP_PORT_WIRED |
						(now ? NNP_PORT_UP : 0));
}

/* After end_mark(): what @e's going down ends. */
static void end_settle(struct link_end *e, bool up)
{
	struct nnp_fw *fw = e->fw;

	if (e->was && !up) {
		mtx_lock(&fw->lock);
		e->lost = link_lost_locked(fw, e->port);
		e->lost |= comms_lost_locked(fw, e->port);
		mtx_unlock(&fw->lock);
	}
}

/* After end_settle(): @e's workers woken; one raises the event's interrupt. */
static void end_wake(const struct link_end *e)
{
	if (e->lost || e->changed)
		nnp_fw_icl_kick(e->fw);
	nnp_fw_icl_wake(e->fw, e->port);
}

/*
 * The links on @ports of @fw to @up, at both ends of an in-process link:
 * every end first, then what that ends, then the workers that pass the
 * aborts on. So a communicator failed by one link going down cannot pass
 * its abort over another link, or round its ring to the link's other
 * end, before that end has failed it too (a peer there would then name
 * the failure ABORTED, not LINK_DOWN).
 */
static void links_set(struct nnp_fw *fw, uint32_t ports, bool up)
{
	struct link_end e[2 * NNP_FW_MAX_PORTS];
	unsigned int n = 0, i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		struct nnp_fw_port *p = &fw->ports[i];

		if (!(ports >> i & 1))
			continue;
		e[n++] = (struct link_end){ .fw = fw, .port = i };
		mtx_lock(&p->lock);
		if (p->peer)
			e[n++] = (struct link_end){ .fw = p->peer, .port = p->peer_port };
		mtx_unlock(&p->lock);
	}
	for (i = 0; i < n; i++)
		end_mark(&e[i], up);
	for (i = 0; i < n; i++)
		end_settle(&e[i], up);
	for (i = 0; i < n; i++)
		end_wake(&e[i]);
}

/*
 * A link going down or up, from the monitor, a peer, a reset or a dead
 * chip: at both ends of an in-process link.
 */
void nnp_fw_link_set(struct nnp_fw *fw, unsigned int port, bool up)
{
	if (port < NNP_FW_MAX_PORTS)
		links_set(fw, 1u << port, up);
}

void nnp_fw_links_set_down(struct nnp_fw *fw, uint32_t ports)
{
	links_set(fw, ports, false);
}

bool nnp_fw_link_chip_state(struct nnp_fw *fw, unsigned int port, bool up)
{
	bool remote, in_process;

	if (port >= fw->cfg.num_ports || !fw->host.icl_chip_state)
		return false;
	mtx_lock(&fw->ports[port].lock);
	remote = fw->ports[port].tp && fw->ports[port].tp->remote;
	in_process = fw->ports[port].peer;
	mtx_unlock(&fw->ports[port].lock);
	/*
	 * Told also while no peer is attached, so that a peer that links
	 * later hears of a chip that has not booted since its reset.
	 */
	if (!in_process)
		fw->host.icl_chip_state(fw->host.opaque, port, up);
	return remote;
}

void nnp_fw_icl_room_freed(struct nnp_fw *fw, uint32_t port)
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
 * Mark the ops parked on @port ready, with fw->lock held; true if any. The
 * relay, parked for room at a next hop, runs again.
 */
bool nnp_fw_icl_wake_locked(struct nnp_fw *fw, uint32_t port)
{
	struct nnp_fw_op *relay = &fw->relay_op;
	bool any = false;
	uint32_t i;

	fw->ports[port].wakes++;
	fw->wakes++;
	if (relay->parked && (relay->wait_port == port ||
			      relay->wait_port == NNP_FW_ANY_PORT)) {
		relay->parked = false;
		atomic_store(&fw->relay_pending, true);
		any = true;
	}
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
	any = nnp_fw_icl_wake_locked(fw, port);
	mtx_unlock(&fw->lock);
	if (any)
		nnp_fw_icl_kick(fw);
}

/*
 * Park @op until something happens on @port, with fw->lock held: its
 * first wait starts its timeout, a wait past it ends PEER_TIMEOUT.
 */
uint16_t nnp_fw_icl_park_locked(struct nnp_fw *fw, struct nnp_fw_op *op,
				uint32_t port)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);

	if (op->aborted)
		return op->aborted;
	if (op->link_lost)
		return NNP_STATUS_LINK_DOWN;
	if (!op->deadline_ns) {
		op->deadline_ns = op->timeout_ns == UINT64_MAX ? UINT64_MAX :
				  now + op->timeout_ns;
		op->wait_since_ns = now;
	} else if (now >= op->deadline_ns) {
		return NNP_STATUS_PEER_TIMEOUT;
	}
	op->parked = true;
	op->ready = false;
	op->wait_port = port;
	op->waits_on = port;
	return NNP_FW_PARKED;
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
		st = nnp_fw_icl_park_locked(fw, op, port);
	mtx_unlock(&fw->lock);
	return st;
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
