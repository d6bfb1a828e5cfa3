// SPDX-License-Identifier: MIT
/*
 * Firmware simulator arrival and receive: a packet arriving on a port
 * (from an in-process sender or the host) is admitted, then kept in the
 * port's queue (fw_rx_queue.c) for its communicator within the port's
 * room, or refused; and taken by the receive that names it, a descriptor
 * read straight from the sender's memory. See fw_transport.h.
 */
#include <string.h>

#include "fw_reduce.h"
#include "fw_transport.h"

/*
 * Whether @m, @pk's communicator on this chip (NULL: none), may take it
 * from @port, with fw->lock held: a collective's packet only on a port its ring or its
 * topology receives on (both ways: a ring's backward lane receives on
 * its send port). A packet of no communicator here may be for one not
 * made yet, and one of a communicator whose topology is not given yet for
 * a lane of a peer that has it: kept (nnp_fw_comm_set_topology() drops
 * those on no port of its).
 */
static bool rx_wanted_locked(const struct nnp_fw_comm *m, uint32_t port,
			     const struct nnp_fw_packet *pk)
{
	return !m || (pk->seq & NNP_FW_SEQ_P2P) ||
	       (m->nranks > 1 &&
		(!m->topo_set || nnp_fw_comm_ports(m) >> port & 1));
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
 * Whether queued @pk (its communicator here @m, or NULL) may be for
 * another chip, with fw->lock held: any of a transit communicator's
 * (v1.22), a routed packet not labelled for this rank of its
 * communicator, or of one not made (or routed) here yet. The relay
 * (fw_relay.c) looks at it.
 */
static bool rx_for_relay(const struct nnp_fw_comm *m,
			 const struct nnp_fw_packet *pk)
{
	if (m && nnp_fw_comm_transit(m))
		return true;
	return nnp_fw_seq_is_routed(pk->seq) &&
	       (!m || !m->routes || nnp_fw_seq_dst(pk->seq) != m->rank);
}

/*
 * Whether @pk, for @m here (or NULL), is taken as it comes: the abort of a
 * collective, or a rank's leave routed to this one (v1.21). A transit's
 * are passed on (fw_relay.c), as its other packets are.
 */
static bool rx_aborts(const struct nnp_fw_comm *m,
		      const struct nnp_fw_packet *pk)
{
	if (!m || !pk->abort || nnp_fw_comm_transit(m))
		return false;
	if (nnp_fw_seq_is_routed_leave(pk->seq, pk->abort))
		return m->routes && nnp_fw_seq_dst(pk->seq) == m->rank;
	return !(pk->seq & NNP_FW_SEQ_P2P);
}

/* What an arrival comes to: rx_admit_locked()'s verdict, then the room's. */
enum rx_verdict {
	RX_QUEUE,		/* kept for its receiver */
	RX_ABORT,		/* its communicator here is dead: taken now */
	RX_DOWN,		/* the port is down, or not the sender's kind */
	RX_FULL,		/* no room for it */
	RX_UNWANTED,		/* not for this chip, or of a lost epoch */
	RX_GONE,		/* of a communicator destroyed here */
};

/* A packet arriving, and its communicator here as it was then. */
struct rx_arrival {
	struct nnp_fw_packet *pk;
	struct nnp_fw_comm *m;	/* NULL: none */
	bool gone;		/* of a communicator destroyed here */
	bool remote;		/* from another process */
	bool lost;		/* an injected fault: dropped */
};

/*
 * What becomes of arrival @a on @p by what it is, with fw->lock and
 * p->lock held: nothing is changed, and the port's room (fw_purge.c) is
 * asked last, of a packet this says RX_QUEUE of.
 */
static enum rx_verdict rx_admit_locked(const struct nnp_fw_port *p,
				       const struct rx_arrival *a)
{
	const struct nnp_fw_packet *pk = a->pk;

	if (!p->up || (a->remote && !(p->tp && p->tp->remote)))
		return RX_DOWN;
	if (!a->lost && rx_aborts(a->m, pk))
		return RX_ABORT;
	if (a->gone)
		return RX_GONE;
	if (a->lost || !rx_wanted_locked(a->m, p->index, pk))
		return RX_UNWANTED;
	return RX_QUEUE;
}

/*
 * The fields in which @peer's call differs from @own (NNP_MISMATCH_*); 0
 * if they are alike, or either is not a collective's.
 */
static uint32_t call_differs(const struct nnp_fw_call *peer,
			     const struct nnp_fw_call *own)
{
	if (!nnp_fw_call_collective(peer) || !nnp_fw_call_collective(own))
		return 0;
	return (peer->opcode != own->opcode ? NNP_MISMATCH_OPCODE : 0) |
	       (peer->dtype != own->dtype ? NNP_MISMATCH_DTYPE : 0) |
	       (peer->op != own->op ? NNP_MISMATCH_OP : 0) |
	       (peer->root != own->root ? NNP_MISMATCH_ROOT : 0) |
	       (peer->count != own->count ? NNP_MISMATCH_COUNT : 0) |
	       (peer->members != own->members ? NNP_MISMATCH_GROUP : 0);
}

/*
 * Whether @pk, lent by an in-process peer (or a relay's copy of such a
 * chunk), belongs to a call other than @op's: the detail of @op's
 * MISMATCH, naming the peer's call (nnp_hw.h), said as a guest error; 0
 * if not. The lender's op outlives its chunk, and its call never changes.
 */
static uint64_t rx_mismatch(struct nnp_fw *fw, const struct nnp_fw_op *op,
			    uint32_t port, const struct nnp_fw_packet *pk)
{
	const struct nnp_fw_call *peer = pk->owner ? &pk->owner->call :
					 &pk->call;
	uint32_t fields = call_differs(peer, &op->call);

	if (!fields)
		return 0;
	nnp_fw_guest_error(fw, "port %u: rank %u called collective 0x%x (type %u, op %u, root %u, count %llu), rank %u 0x%x (type %u, op %u, root %u, count %llu): the ranks disagree on the call",
			   port, peer->rank, peer->opcode, peer->dtype, peer->op,
			   peer->root, (unsigned long long)peer->count,
			   op->call.rank, op->call.opcode, op->call.dtype,
			   op->call.op, op->call.root,
			   (unsigned long long)op->call.count);
	return NNP_MISMATCH_CALL(peer->opcode, peer->dtype, peer->op,
				 peer->root) |
	       (uint64_t)NNP_MISMATCH_WHO(peer->rank, fields) << 32;
}

/*
 * The detail of a MISMATCH for @pk, on @port, whose length is not the
 * @len its taker reads (v1.27): the length that came and its sender,
 * by the call it carries or its routed label; said as a guest error.
 */
static uint64_t rx_length_differs(struct nnp_fw *fw, uint32_t port,
				  const struct nnp_fw_packet *pk, size_t len)
{
	const struct nnp_fw_call *peer = pk->owner ? &pk->owner->call :
					 &pk->call;
	uint32_t rank = peer->opcode ? peer->rank :
			nnp_fw_seq_is_routed(pk->seq) ? nnp_fw_seq_src(pk->seq) :
			NNP_MISMATCH_RANK_UNKNOWN;

	nnp_fw_guest_error(fw, "port %u: packet %#x of epoch %#llx has %zu bytes, the receive %zu: the ranks disagree on the call",
			   port, pk->seq, (unsigned long long)pk->epoch,
			   pk->len, len);
	return (pk->len > UINT32_MAX ? UINT32_MAX : (uint32_t)pk->len) |
	       (uint64_t)NNP_MISMATCH_WHO(rank, NNP_MISMATCH_LENGTH) << 32;
}

/* Whether label @seq is one of ring collective @op's. */
static bool call_labels(const struct nnp_fw_op *op, uint32_t seq)
{
	return seq - op->seq < op->seqs;
}

/*
 * The collective of @m in flight here whose labels hold @seq, with
 * fw->lock held; NULL if none (not started yet, or a peer's message).
 */
static struct nnp_fw_op *call_of_locked(const struct nnp_fw_comm *m,
					uint32_t seq)
{
	struct nnp_fw_op *op;

	for (op = m->calls; op; op = op->next_call)
		if (call_labels(op, seq))
			return op;
	return NULL;
}

/*
 * Whether @pk, coming to @p's queue for @m (NULL: none here), was lent
 * by a peer that called the collective in flight here with its label
 * otherwise, with fw->lock and p->lock held. Read or not: a rank whose part never
 * reads what the peer lends it (two that each think they are a
 * broadcast's root only send) would otherwise wait for its timeout, and
 * the peer for its chunk to come back. Then @m fails MISMATCH at once,
 * which ends that command ABORTED, its mismatch saying the peer's call
 * (true: a worker passes the abort on). Only the chunks of a collective
 * that started here are looked at: one of a peer ahead, a later label,
 * waits for its own.
 */
static bool rx_check_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			    struct nnp_fw_comm *m,
			    const struct nnp_fw_packet *pk)
{
	struct nnp_fw_op *op;

	if (!m || !m->calls || !pk->owner || m->error)
		return false;
	op = call_of_locked(m, pk->seq);
	if (!op || op->mismatch)
		return false;
	op->mismatch = rx_mismatch(fw, op, p->index, pk);
	return op->mismatch &&
	       fw->link_hooks->comm_failed_locked(fw, m, NNP_STATUS_MISMATCH,
						 p->index);
}

/*
 * Tell @m, with fw->lock held, what abort @pk (rx_aborts()) that came on
 * @port says: a rank's routed leave (v1.21), its neighbour's leave (v1.20)
 * or a collective's failure. True if a worker must run.
 */
static bool rx_tell_abort_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
				 const struct nnp_fw_packet *pk, uint32_t port)
{
	if (nnp_fw_seq_is_routed_leave(pk->seq, pk->abort))
		return fw->link_hooks->rank_left_locked(fw, m,
							nnp_fw_seq_src(pk->seq));
	if (pk->seq & NNP_FW_SEQ_LEAVE)
		return fw->link_hooks->peer_left_locked(fw, m,
							pk->seq & NNP_FW_LEAVE_CALLS,
							port);
	return fw->link_hooks->comm_failed_locked(fw, m, NNP_STATUS_ABORTED,
						  port);
}

/*
 * What arrival @a at @p, by verdict @v, tells its communicator, with
 * fw->lock and p->lock held, before its room is asked: an abort, the
 * communicator's death or a rank's leave; a chunk, a call of the peer's
 * that differs from ours (whether or not it finds room). True if a
 * worker must run.
 */
static bool rx_tell_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			   const struct rx_arrival *a, enum rx_verdict v)
{
	if (v == RX_ABORT)
		return rx_tell_abort_locked(fw, a->m, a->pk, p->index);
	if (v == RX_QUEUE)
		return rx_check_locked(fw, p, a->m, a->pk);
	return false;
}

/*
 * Whether arrival @a, admitted, is kept on @p, with fw->lock and p->lock
 * held: within its communicator's share and the pool's descriptors, and
 * in the port's room (fw_purge.c), which may drop stale packets for it
 * (*@woke set if a communicator failed for that).
 */
static enum rx_verdict rx_room_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
				      const struct rx_arrival *a, bool *woke)
{
	const struct nnp_fw_packet *pk = a->pk;
	bool full = (pk->desc && !p->desc_free) ||
		    (!a->remote && !rx_share_fits(p, pk));

	switch (nnp_fw_icl_room_locked(fw, p, a->m, pk, woke)) {
	case NNP_FW_ROOM_LOST:
		return RX_UNWANTED;
	case NNP_FW_ROOM_NONE:
		return RX_FULL;
	case NNP_FW_ROOM_OK:
		break;
	}
	return full ? RX_FULL : RX_QUEUE;
}

/*
 * A packet arrives on @port of @fw: queued for its receiver (SUCCESS),
 * refused for want of room (NO_RESOURCES), or not for this chip (dropped,
 * INVALID_FIELD). LINK_DOWN if the port is down, or for a @remote packet
 * not remote. A descriptor (@pk->owner) is queued as a copy of @pk in a
 * slot of the port's pool; the caller keeps a copy @pk unless it was queued.
 * A collective's abort for a communicator here is taken at once (freed):
 * the communicator is dead, whatever its command in flight waits for.
 * The packet's communicator is looked up once, and the arrival goes one
 * way: what it is (here), what it tells its communicator (here), the
 * port's room (fw_purge.c), the queue's part (fw_rx_queue.c: a remote
 * copy owes its sender a credit, paid back at once if it is not kept; an
 * in-process sender refused room keeps its packet and waits), and last
 * who must run (fw_port.c).
 */
uint16_t nnp_fw_icl_rx_arrive(struct nnp_fw *fw, uint32_t port,
			      struct nnp_fw_packet *pk, bool remote)
{
	/* Each verdict's status, and the packet's fate [from in process, remote]. */
	static const struct {
		uint16_t status;
		enum nnp_fw_rx_fate fate[2];
	} verdict[] = {
		[RX_QUEUE] = { NNP_STATUS_SUCCESS,
			       { NNP_FW_RX_KEEP, NNP_FW_RX_KEEP } },
		[RX_ABORT] = { NNP_STATUS_SUCCESS,
			       { NNP_FW_RX_TAKEN, NNP_FW_RX_TAKEN } },
		[RX_DOWN] = { NNP_STATUS_LINK_DOWN,
			      { NNP_FW_RX_REFUSED, NNP_FW_RX_BROKEN } },
		[RX_FULL] = { NNP_STATUS_NO_RESOURCES,
			      { NNP_FW_RX_REFUSED, NNP_FW_RX_DROPPED } },
		[RX_UNWANTED] = { NNP_STATUS_INVALID_FIELD,
				  { NNP_FW_RX_DROPPED, NNP_FW_RX_DROPPED } },
		/* A job's end, no fault of the link. */
		[RX_GONE] = { NNP_STATUS_INVALID_FIELD,
			      { NNP_FW_RX_GONE, NNP_FW_RX_GONE } },
	};
	struct nnp_fw_port *p = &fw->ports[port];
	struct rx_arrival a = {
		.pk = pk, .remote = remote,
		.lost = fw->link_hooks->rx_fault(fw, port),
	};
	enum rx_verdict v;
	bool woke, relay;

	/* A peer process's model time is its word: bounded before any use. */
	if (remote)
		pk->model_ns = nnp_fw_clock_peer_bound(fw, pk->model_ns);
	pk->arrived_ns = fw->host.now_ns(fw->host.opaque);
	mtx_lock(&fw->lock);
	mtx_lock(&p->lock);
	a.m = nnp_fw_comm_by_epoch_locked(fw, pk->epoch);
	a.gone = !a.m && nnp_fw_epoch_is_gone_locked(fw, pk->epoch);
	v = rx_admit_locked(p, &a);
	woke = rx_tell_locked(fw, p, &a, v);
	relay = v == RX_QUEUE && rx_for_relay(a.m, pk);
	if (v == RX_QUEUE)
		v = rx_room_locked(fw, p, &a, &woke);
	nnp_fw_icl_settle_locked(fw, p, pk, remote, verdict[v].fate[remote]);
	if (v == RX_QUEUE) {
		woke |= nnp_fw_icl_wake_locked(fw, port);
		if (relay) {
			atomic_store(&fw->relay_pending, true);
			woke = true;
		}
	}
	mtx_unlock(&p->lock);
	mtx_unlock(&fw->lock);
	if (woke)
		nnp_fw_icl_kick(fw);
	return verdict[v].status;
}

bool nnp_fw_icl_calls_add_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
				 struct nnp_fw_op *op, uint32_t port)
{
	struct nnp_fw_port *p = &fw->ports[port];
	const struct nnp_fw_packet *pk;

	op->next_call = m->calls;
	m->calls = op;
	mtx_lock(&p->lock);
	for (pk = p->rx_head; pk && !op->mismatch; pk = pk->next)
		if (pk->owner && pk->epoch == m->epoch &&
		    call_labels(op, pk->seq))
			op->mismatch = rx_mismatch(fw, op, port, pk);
	mtx_unlock(&p->lock);
	return op->mismatch;
}

void nnp_fw_icl_calls_del_locked(struct nnp_fw_comm *m,
				 const struct nnp_fw_op *op)
{
	struct nnp_fw_op **link;

	for (link = &m->calls; *link; link = &(*link)->next_call) {
		if (*link == op) {
			*link = op->next_call;
			return;
		}
	}
}

struct nnp_fw_packet *nnp_fw_icl_rx_alloc(struct nnp_fw *fw, unsigned int port,
					  size_t len)
{
	if (port >= fw->cfg.num_ports || len > NNP_FW_ICL_MAX_PACKET)
		return NULL;
	return nnp_fw_icl_packet_new(0, 0, false, NULL, len);
}

void *nnp_fw_icl_rx_data(struct nnp_fw_packet *pk)
{
	return pk + 1;
}

void nnp_fw_icl_rx_drop(struct nnp_fw_packet *pk)
{
	nnp_fw_packet_free(pk);
}

void nnp_fw_icl_claim_held(struct nnp_fw *fw, uint64_t epoch)
{
	uint32_t port, claimed = 0;
	struct nnp_fw_comm *m;
	bool woke = false;

	mtx_lock(&fw->lock);
	m = nnp_fw_comm_by_epoch_locked(fw, epoch);
	for (port = 0; m && port < fw->cfg.num_ports; port++) {
		struct nnp_fw_port *p = &fw->ports[port];
		struct nnp_fw_packet **link, *prev = NULL;

		mtx_lock(&p->lock);
		link = &p->rx_head;
		while (*link) {
			struct nnp_fw_packet *pk = *link;

			if (pk->epoch == epoch && rx_aborts(m, pk)) {
				woke |= rx_tell_abort_locked(fw, m, pk, port);
				nnp_fw_icl_drop_at(p, link, prev);
				claimed |= 1u << port;
				continue;
			}
			prev = pk;
			link = &pk->next;
		}
		mtx_unlock(&p->lock);
	}
	mtx_unlock(&fw->lock);
	for (port = 0; port < fw->cfg.num_ports; port++)
		if (claimed >> port & 1)
			nnp_fw_icl_room_freed(fw, port);
	if (woke)
		nnp_fw_icl_kick(fw);
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
		nnp_fw_packet_free(pk);
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
	if (pk) {
		if (len)
			memcpy(nnp_fw_icl_rx_data(pk), data, len);
		return nnp_fw_icl_rx_queue(fw, port, pk, epoch, seq, abort,
					   model_ns);
	}
	/* No memory for it: refused as the port's error, and credited back. */
	mtx_lock(&fw->ports[port].lock);
	nnp_fw_icl_settle_locked(fw, &fw->ports[port],
				 &(struct nnp_fw_packet){ .len = len }, true,
				 NNP_FW_RX_BROKEN);
	mtx_unlock(&fw->ports[port].lock);
	return -1;
}

/* Unlink and return the packet (@epoch, @seq), with p->lock held. */
static struct nnp_fw_packet *take(struct nnp_fw_port *p, uint64_t epoch,
				  uint32_t seq)
{
	struct nnp_fw_packet **link = &p->rx_head, *prev = NULL;

	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->epoch == epoch && pk->seq == seq)
			return nnp_fw_icl_unlink_at(p, link, prev);
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

/*
 * Finish the receive of @pk, taken from @port for @op (no lock held): its
 * payload into @into, then back to its lender or sender.
 */
static uint16_t rx_finish(struct nnp_fw *fw, struct nnp_fw_op *op,
			  uint32_t port, struct nnp_fw_packet *pk,
			  const struct nnp_fw_rx_into *into, size_t len)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint16_t status = NNP_STATUS_SUCCESS;
	const struct nnp_fw_transport *tp;
	struct nnp_fw *peer;
	uint64_t differs;
	uint32_t pp;

	mtx_lock(&p->lock);
	tp = p->tp;
	peer = p->peer;
	pp = p->peer_port;
	mtx_unlock(&p->lock);
	/*
	 * Taken, a descriptor stays out of the pool and unreturned while we
	 * read the sender's memory: its command waits for that to end.
	 */
	op->t_ns = nnp_fw_max_ns(op->t_ns, pk->model_ns);
	differs = pk->abort || !nnp_fw_calls_checked(fw) ? 0 :
		  rx_mismatch(fw, op, port, pk);
	if (pk->abort) {
		status = NNP_STATUS_ABORTED;
	} else if (differs) {
		/*
		 * Checked before anything is read, so mismatched ranks fail
		 * at their first chunk instead of reducing unlike data or
		 * waiting for chunks that never come.
		 */
		op->detail = differs;
		status = NNP_STATUS_MISMATCH;
	} else if (pk->len != len) {
		op->detail = rx_length_differs(fw, port, pk, len);
		status = NNP_STATUS_MISMATCH;
	} else {
		if (!fw->cfg.timing_only)
			rx_consume(into, pk->data, len);
		/* A reduction reads two operands and writes one. */
		nnp_fw_clock_hbm(fw, op, into->reduce ? 3 * len : len);
	}
	mtx_lock(&p->lock);
	nnp_fw_icl_read_done_locked(p, pk);
	mtx_unlock(&p->lock);
	/* Room at this end, a lent chunk back: a sender waiting goes on. */
	if (tp)
		tp->room_freed(peer, pp);
	return status;
}

/*
 * Take the packet (@epoch, @seq) from @port for @op, with fw->lock held;
 * NULL if it has not come.
 */
static struct nnp_fw_packet *rx_take_locked(struct nnp_fw *fw,
					    struct nnp_fw_op *op, uint32_t port,
					    uint64_t epoch, uint32_t seq)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_packet *pk;

	mtx_lock(&p->lock);
	pk = take(p, epoch, seq);
	if (pk)
		op->deadline_ns = 0;
	if (pk)
		nnp_fw_icl_read_begin_locked(p, pk);
	mtx_unlock(&p->lock);
	return pk;
}

uint16_t nnp_fw_icl_recv_into(struct nnp_fw *fw, struct nnp_fw_op *op,
			      uint32_t port, uint64_t epoch, uint32_t seq,
			      const struct nnp_fw_rx_into *into, size_t len)
{
	uint16_t status = NNP_STATUS_SUCCESS;
	struct nnp_fw_packet *pk;

	mtx_lock(&fw->lock);
	pk = rx_take_locked(fw, op, port, epoch, seq);
	if (!pk) {
		mtx_lock(&fw->ports[port].lock);
		status = fw->ports[port].up ?
			 nnp_fw_icl_park_locked(fw, op, port) :
			 NNP_STATUS_LINK_DOWN;
		mtx_unlock(&fw->ports[port].lock);
	}
	mtx_unlock(&fw->lock);
	return pk ? rx_finish(fw, op, port, pk, into, len) : status;
}

uint16_t nnp_fw_icl_recv_any(struct nnp_fw *fw, struct nnp_fw_op *op,
			     uint64_t epoch, uint32_t seq, void *buf,
			     size_t len)
{
	const struct nnp_fw_rx_into into = { .buf = buf };
	struct nnp_fw_packet *pk = NULL;
	uint16_t status;
	uint32_t port;

	mtx_lock(&fw->lock);
	for (port = 0; port < fw->cfg.num_ports && !pk; port++)
		pk = rx_take_locked(fw, op, port, epoch, seq);
	/* A link down on the way fails the communicator, and so this wait. */
	status = pk ? NNP_STATUS_SUCCESS :
		 nnp_fw_icl_park_locked(fw, op, NNP_FW_ANY_PORT);
	mtx_unlock(&fw->lock);
	return pk ? rx_finish(fw, op, port - 1, pk, &into, len) : status;
}

bool nnp_fw_icl_first_locked(struct nnp_fw *fw, uint64_t epoch,
			     bool (*wanted)(const void *arg, uint32_t port,
					    const struct nnp_fw_packet *pk),
			     const void *arg, uint32_t *port, uint32_t *seq)
{
	uint64_t first = UINT64_MAX;
	const struct nnp_fw_packet *pk;
	bool found = false;
	uint32_t i;

	for (i = 0; i < fw->cfg.num_ports; i++) {
		struct nnp_fw_port *p = &fw->ports[i];

		mtx_lock(&p->lock);
		/* A port's queue is in the order its packets came. */
		for (pk = p->rx_head; pk; pk = pk->next) {
			if (pk->epoch != epoch || !wanted(arg, i, pk))
				continue;
			if (pk->arrived_ns < first) {
				first = pk->arrived_ns;
				*port = i;
				*seq = pk->seq;
				found = true;
			}
			break;
		}
		mtx_unlock(&p->lock);
	}
	return found;
}

uint16_t nnp_fw_icl_recv(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 void *buf, size_t len)
{
	const struct nnp_fw_rx_into into = { .buf = buf };

	return nnp_fw_icl_recv_into(fw, op, port, epoch, seq, &into, len);
}
