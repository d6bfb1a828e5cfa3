// SPDX-License-Identifier: MIT
/*
 * Firmware simulator receiving: a packet arriving on a port (from an
 * in-process sender or the host), admitted (fw_rx_admit.c) and queued or
 * let go (fw_rx_queue.c), and taken by the receive that names it, a
 * descriptor read straight from the sender's memory. See fw_transport.h.
 */
#include <string.h>

#include "fw_reduce.h"
#include "fw_transport.h"

/*
 * A packet arrives on @port of @fw: queued for its receiver (SUCCESS),
 * refused for want of room (NO_RESOURCES), or not for this chip (dropped,
 * INVALID_FIELD). LINK_DOWN if the port is down, or for a @remote packet
 * not remote. A descriptor (@pk->owner) is queued as a copy of @pk in a
 * slot of the port's pool. A copy from an in-process sender is the
 * sender's again unless it was queued; a @remote copy, and a collective's
 * abort for a communicator here (taken at once), are let go.
 * One way through: the verdict, made on what the packet's communicator
 * was at the arrival, then what it does to the packet, then who runs.
 */
uint16_t nnp_fw_icl_rx_arrive(struct nnp_fw *fw, uint32_t port,
			      struct nnp_fw_packet *pk, bool remote)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_arrival a = {
		.port = port, .remote = remote,
		.lost = fw->link_hooks->rx_fault(fw, port),	/* injected */
	};
	struct nnp_fw_packet *queued;
	uint16_t st;

	pk->arrived_ns = fw->host.now_ns(fw->host.opaque);
	if (remote)
		pk->model_ns = nnp_fw_clock_peer_bound(fw, pk->model_ns);
	mtx_lock(&fw->lock);
	mtx_lock(&p->lock);
	a.comm = nnp_fw_comm_by_epoch_locked(fw, pk->epoch);
	st = nnp_fw_icl_admit_locked(fw, &a, pk);
	queued = nnp_fw_icl_settle_locked(fw, &a, pk, &st);
	if (queued) {
		a.woke |= nnp_fw_relay_queued_locked(fw, a.comm, queued);
		a.woke |= nnp_fw_icl_wake_locked(fw, port);
	}
	mtx_unlock(&p->lock);
	mtx_unlock(&fw->lock);
	if (a.woke)
		nnp_fw_icl_kick(fw);
	return st;
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

int nnp_fw_icl_rx_queue(struct nnp_fw *fw, unsigned int port,
			struct nnp_fw_packet *pk, uint64_t epoch, uint32_t seq,
			bool abort, uint64_t model_ns)
{
	pk->epoch = epoch;
	pk->seq = seq;
	pk->abort = abort;
	pk->model_ns = model_ns;
	/* Refused, it was let go. */
	return nnp_fw_icl_rx_arrive(fw, port, pk, true) ? -1 : 0;
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
	/* No memory for it: lost, its room credited back all the same. */
	mtx_lock(&fw->ports[port].lock);
	fw->ports[port].errors++;
	nnp_fw_icl_credit_arrived_locked(&fw->ports[port],
					 &(struct nnp_fw_packet){ .len = len },
					 false);
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
	if (pk->abort) {
		status = NNP_STATUS_ABORTED;
	} else if (pk->len != len) {
		status = NNP_STATUS_INVALID_FIELD;	/* ranks disagree on the call */
		nnp_fw_guest_error(fw, "port %u: packet %#x of epoch %#llx has %zu bytes, the receive %zu: the ranks disagree on the call",
				   port, pk->seq, (unsigned long long)pk->epoch,
				   pk->len, len);
	} else {
		if (!fw->cfg.timing_only)
			rx_consume(into, pk->data, len);
		/* A reduction reads two operands and writes one. */
		nnp_fw_clock_hbm(fw, op, into->reduce ? 3 * len : len);
	}
	mtx_lock(&p->lock);
	if (pk->desc && !pk->owner && !--p->peer_reads)
		cnd_broadcast(&p->lent_back);
	nnp_fw_icl_release_locked(p, pk);
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
	/* The shared peer's memory stays mapped until this read is over. */
	if (pk && pk->desc && !pk->owner)
		p->peer_reads++;
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

uint16_t nnp_fw_icl_recv(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 void *buf, size_t len)
{
	const struct nnp_fw_rx_into into = { .buf = buf };

	return nnp_fw_icl_recv_into(fw, op, port, epoch, seq, &into, len);
}
