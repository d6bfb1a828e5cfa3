// SPDX-License-Identifier: MIT
/*
 * Firmware simulator sending: a copy, or a chunk of device memory lent to
 * an in-process peer, through the port's transport (in-process or remote);
 * waiting for lent chunks to come back, and taking back those a command
 * ending early lent and the peer has not read. See fw_transport.h.
 */
#include <stdlib.h>

#include "fw_transport.h"

/* The wait of @op made progress: its next one gets a whole timeout. */
static void op_progress(struct nnp_fw *fw, struct nnp_fw_op *op)
{
	if (!op)
		return;
	mtx_lock(&fw->lock);
	op->deadline_ns = 0;
	mtx_unlock(&fw->lock);
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

static void count(struct nnp_fw *fw, uint64_t *counter, size_t len)
{
	mtx_lock(&fw->lock);
	*counter += len;
	mtx_unlock(&fw->lock);
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
 * Into the in-process peer's port: a copy, a descriptor of the lent
 * chunk, or (@whole, which is @tpl) a copy handed over as it is. A full
 * peer parks @op until it has room, or without @op drops the packet.
 * @whole is the peer's, or freed, once this returns SUCCESS.
 */
static uint16_t local_deliver(struct nnp_fw *fw, struct nnp_fw_op *op,
			      uint32_t port, const struct nnp_fw_packet *tpl,
			      struct nnp_fw_packet *whole, uint64_t at)
{
	/* Once the peer has @whole, it may be gone: nothing reads it after. */
	struct nnp_fw_op *owner = tpl->owner;
	struct nnp_fw_port *p = &fw->ports[port];
	uint16_t st = NNP_FW_SEND_AGAIN;
	size_t len = tpl->len;

	while (st == NNP_FW_SEND_AGAIN) {
		struct nnp_fw_packet desc = *tpl, *pk = &desc;
		uint64_t wire = nnp_fw_ns_at(len, fw->cfg.icl_mbps), depart;
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

		if (whole) {
			pk = whole;
		} else if (!owner) {
			pk = nnp_fw_icl_packet_new(tpl->epoch, tpl->seq,
						   tpl->abort, tpl->data, len);
			/* A relay's copy of a lent chunk, or a SEND's: whose call. */
			if (pk)
				pk->call = tpl->call;
		}
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
		if (st && !owner &&
		    (!whole || st == NNP_STATUS_INVALID_FIELD)) {
			nnp_fw_packet_free(pk);
		} else if (st && whole) {
			/* Refused for room: it waits to leave as it came. */
			whole->model_ns = at;
		} else if (!st) {
			if (owner)
				owner->lent++;
			nnp_fw_icl_sent(fw, op, port, len, depart, wire);
		}
		/* Dropped by the receiver: the link carried it all the same. */
		if (st == NNP_STATUS_INVALID_FIELD) {
			st = NNP_STATUS_SUCCESS;
			if (owner)
				lent_and_back(owner);
		}
		if (st == NNP_STATUS_NO_RESOURCES && op)
			st = nnp_fw_icl_park_for_room(fw, op, port, wakes);
	}
	return st;
}

static uint16_t local_send(struct nnp_fw *fw, struct nnp_fw_op *op,
			   uint32_t port, const struct nnp_fw_packet *tpl,
			   uint64_t at)
{
	return local_deliver(fw, op, port, tpl, NULL, at);
}

static uint16_t local_give(struct nnp_fw *fw, struct nnp_fw_op *op,
			   uint32_t port, struct nnp_fw_packet *pk)
{
	return local_deliver(fw, op, port, pk, pk, pk->model_ns);
}

/* The transport of @port (NULL: none, counted as an error). */
static const struct nnp_fw_transport *port_transport(struct nnp_fw *fw,
						     uint32_t port)
{
	struct nnp_fw_port *p = &fw->ports[port];
	const struct nnp_fw_transport *tp;

	mtx_lock(&p->lock);
	tp = p->tp;
	if (!tp)
		p->errors++;
	mtx_unlock(&p->lock);
	return tp;
}

/* Send on @port through its transport, at @at or after; LINK_DOWN if none. */
static uint16_t send_packet(struct nnp_fw *fw, struct nnp_fw_op *op,
			    uint32_t port, const struct nnp_fw_packet *tpl,
			    uint64_t at)
{
	const struct nnp_fw_transport *tp = port_transport(fw, port);

	return tp ? tp->send(fw, op, port, tpl, at) : NNP_STATUS_LINK_DOWN;
}

uint16_t nnp_fw_icl_send(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 bool abort, const void *data, size_t len)
{
	/*
	 * A collective's abort is never read as a leave, whatever its label.
	 * A SEND's copy says whose it was, so that a RECV that takes another
	 * length can name its sender (v1.27).
	 */
	const struct nnp_fw_packet tpl = {
		.epoch = epoch, .abort = abort, .len = len, .data = data,
		.seq = abort && !(seq & NNP_FW_SEQ_P2P) ?
		       seq & ~NNP_FW_SEQ_LEAVE : seq,
		.call = op && op->call.opcode == NNP_CMD_SEND ? op->call :
			(struct nnp_fw_call){ 0 },
	};

	return send_packet(fw, op, port, &tpl, op ? op->t_ns : 0);
}

uint16_t nnp_fw_icl_forward(struct nnp_fw *fw, struct nnp_fw_op *op,
			    uint32_t port, struct nnp_fw_packet *pk,
			    bool *gone)
{
	/* A lent chunk goes on as a copy that says whose call it was. */
	const struct nnp_fw_packet tpl = {
		.epoch = pk->epoch, .seq = pk->seq, .abort = pk->abort,
		.len = pk->len, .data = pk->data,
		.call = pk->owner ? pk->owner->call : pk->call,
	};
	const struct nnp_fw_transport *tp = port_transport(fw, port);
	uint16_t st;

	*gone = false;
	if (!tp)
		return NNP_STATUS_LINK_DOWN;
	/* A remote sender's copy is credited back where it came in. */
	if (!tp->give || pk->desc || pk->credit)
		return tp->send(fw, op, port, &tpl, pk->model_ns);
	st = tp->give(fw, op, port, pk);
	*gone = !st;
	return st;
}

void nnp_fw_icl_send_aborts(struct nnp_fw *fw, uint32_t ports, uint64_t epoch,
			    uint32_t seq)
{
	uint32_t port;

	for (port = 0; port < NNP_FW_MAX_PORTS; port++)
		if (ports >> port & 1)
			nnp_fw_icl_send(fw, NULL, port, epoch, seq, true, NULL, 0);
}

void nnp_fw_icl_send_leave(struct nnp_fw *fw, uint32_t ports, uint64_t epoch,
			   uint32_t calls)
{
	const struct nnp_fw_packet tpl = {
		.epoch = epoch, .abort = true,
		.seq = NNP_FW_SEQ_LEAVE | (calls & NNP_FW_LEAVE_CALLS),
	};
	uint32_t port;

	for (port = 0; port < NNP_FW_MAX_PORTS; port++)
		if (ports >> port & 1)
			send_packet(fw, NULL, port, &tpl, 0);
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

uint16_t nnp_fw_icl_wait_returned(struct nnp_fw *fw, struct nnp_fw_op *op,
				  uint32_t port, uint32_t want)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint16_t status = NNP_STATUS_SUCCESS;
	uint32_t back;

	/* A return after this check wakes us only after we parked: fw->lock. */
	mtx_lock(&fw->lock);
	back = atomic_load(&op->returned);
	mtx_lock(&p->lock);
	if (back < want ||
	    (p->tp && p->tp->out_locked && p->tp->out_locked(p, op, want))) {
		/* Every chunk the receiver read is progress. */
		if (back != op->returned_seen)
			op->deadline_ns = 0;
		op->returned_seen = back;
		status = p->up ? nnp_fw_icl_park_locked(fw, op, port) :
				 NNP_STATUS_LINK_DOWN;
	}
	mtx_unlock(&p->lock);
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
	for (;;) {
		link = &q->rx_head;
		prev = NULL;
		while (*link) {
			struct nnp_fw_packet *pk = *link;

			if (pk->owner == op) {
				nnp_fw_icl_drop_at(q, link, prev);
				continue;
			}
			prev = pk;
			link = &pk->next;
		}
		if (atomic_load(&op->returned) == op->lent)
			break;
		/*
		 * The rest is being read now: a copy or reduction, it ends
		 * soon; or a relay's forward, which may queue it again.
		 */
		cnd_wait(&q->lent_back, &q->lock);
	}
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

const struct nnp_fw_transport nnp_fw_local_transport = {
	.send = local_send,
	.give = local_give,
	.room_freed = nnp_fw_icl_wake,
	.reclaim = local_reclaim,
};

const struct nnp_fw_transport nnp_fw_remote_transport = {
	.remote = true,
	.send = nnp_fw_icl_remote_send,
	.room_freed = nnp_fw_icl_room_freed_none,
	.reclaim = remote_reclaim,
};
