// SPDX-License-Identifier: MIT
/*
 * Firmware simulator communicators: which rank this chip is, where it sits
 * on the ring the collectives run around, and the ports to its ring
 * neighbours. The epoch, the job's 64-bit secret, names the communicator
 * on the links: no two communicators of a chip share one.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_control.h"

/*
 * Read and check the ring order (rank at each position) of @cmd: a
 * permutation of 0..nranks-1 holding @rank. *@order stays NULL for rank
 * order (no buffer).
 */
static uint16_t read_order(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			   const struct nnp_hw_comm_args *a, uint32_t **order,
			   uint32_t *pos)
{
	uint8_t *seen;
	uint32_t i;
	uint16_t st = NNP_STATUS_SUCCESS;

	*order = NULL;
	*pos = a->rank;
	if (!cmd->len)
		return cmd->addr ? NNP_STATUS_INVALID_FIELD : NNP_STATUS_SUCCESS;
	if (cmd->len != a->nranks * sizeof(uint32_t))
		return NNP_STATUS_INVALID_FIELD;
	*order = malloc(cmd->len);
	seen = calloc(a->nranks, 1);
	if (!*order || !seen) {
		st = NNP_STATUS_NO_RESOURCES;
	} else if (fw->host.dma_read(fw->host.opaque, cmd->addr, *order,
				     cmd->len)) {
		st = NNP_STATUS_DMA_ERROR;
	} else {
		for (i = 0; i < a->nranks && !st; i++) {
			(*order)[i] = fw_le32((*order)[i]);
			if ((*order)[i] >= a->nranks || seen[(*order)[i]])
				st = NNP_STATUS_INVALID_FIELD;
			else
				seen[(*order)[i]] = 1;
			if ((*order)[i] == a->rank)
				*pos = i;
		}
	}
	free(seen);
	if (st) {
		free(*order);
		*order = NULL;
	}
	return st;
}

/*
 * What the links hold for the communicator of @epoch, where this chip was
 * rank @rank, is never taken now: dropped, and what was in transit here
 * counted so.
 */
static void purge_epoch(struct nnp_fw *fw, uint64_t epoch, uint32_t rank)
{
	uint32_t port;

	for (port = 0; port < fw->cfg.num_ports; port++)
		nnp_fw_icl_purge_comm(fw, port, epoch, rank);
}

/*
 * Whether COMM_CREATE's words @a are bad: a transit (v1.22) is no rank,
 * has no ring order and passes between two ports of its own.
 */
static bool comm_args_bad(const struct nnp_fw *fw,
			  const struct nnp_hw_admin_cmd *cmd,
			  const struct nnp_hw_comm_args *a)
{
	bool transit = a->flags & NNP_HW_COMM_TRANSIT;

	if (a->comm == 0 || a->comm >= NNP_HW_MAX_COMMS || a->nranks == 0 ||
	    a->nranks > NNP_HW_MAX_RANKS || a->rank >= a->nranks ||
	    (a->flags & ~NNP_HW_COMM_TRANSIT) ||
	    (a->nranks > 1 && (a->send_port >= fw->cfg.num_ports ||
			       a->recv_port >= fw->cfg.num_ports)))
		return true;
	return transit && (a->nranks < 2 || a->rank || cmd->len || cmd->addr ||
			   a->send_port == a->recv_port);
}

uint16_t nnp_fw_comm_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_hw_comm_args a;
	struct nnp_fw_comm *c;
	uint32_t *order, pos;
	uint16_t status;

	memcpy(&a, cmd->args, sizeof(a));
	fw_le_comm_args(&a);
	if (comm_args_bad(fw, cmd, &a))
		return NNP_STATUS_INVALID_FIELD;
	status = read_order(fw, cmd, &a, &order, &pos);
	if (status)
		return status;
	if (a.flags & NNP_HW_COMM_TRANSIT)
		a.rank = NNP_FW_TRANSIT_RANK;
	mtx_lock(&fw->lock);
	c = &fw->comms[a.comm];
	if (!nnp_fw_ctx_valid_locked(fw, a.ctx)) {
		status = NNP_STATUS_NOT_FOUND;
	} else if (c->ctx || nnp_fw_comm_by_epoch_locked(fw, a.epoch)) {
		status = NNP_STATUS_BUSY;
	} else {
		*c = (struct nnp_fw_comm){
			.ctx = a.ctx, .nranks = a.nranks, .rank = a.rank,
			.pos = pos, .order = order, .send_port = a.send_port,
			.recv_port = a.recv_port, .epoch = a.epoch,
			.timeout_ns = nnp_fw_comm_timeout_ns(fw, a.timeout_ms),
		};
		order = NULL;
		nnp_fw_epoch_gone_locked(fw, a.epoch, false);
	}
	mtx_unlock(&fw->lock);
	free(order);
	/* A peer that left, or failed, before this chip made it is heard. */
	if (!status)
		nnp_fw_icl_claim_held(fw, a.epoch);
	/* What came for a transit before it was made goes on now. */
	if (!status && (a.flags & NNP_HW_COMM_TRANSIT))
		nnp_fw_relay_routes_changed(fw);
	return status;
}

/* An abort a communicator has still to send its peers. */
struct abort_to_pass {
	uint32_t ports;		/* 0: none */
	uint32_t seq;
	uint64_t epoch;
};

/* @m's abort still to pass, taken, with fw->lock held. */
static struct abort_to_pass abort_take_locked(struct nnp_fw_comm *m)
{
	struct abort_to_pass a = { 0 };

	if (m->ctx && m->pass_abort && m->nranks > 1)
		a = (struct abort_to_pass){
			.ports = nnp_fw_comm_ports(m), .epoch = m->epoch,
			.seq = nnp_fw_seq(m->seq, false),
		};
	m->pass_abort = false;
	return a;
}

static void comm_free_locked(struct nnp_fw_comm *c)
{
	free(c->order);
	free(c->routes);
	memset(c, 0, sizeof(*c));
}

/*
 * Mark the commands of @comm of @ctx in flight aborted, with fw->lock
 * held: each ends ABORTED at its next wait (PEER_LEFT if a leave tore it
 * down first, LINK_DOWN if a link's loss caught it; a parked one is made
 * runnable for it) and passes the abort on. True if there was any.
 */
static bool abort_commands_locked(struct nnp_fw *fw, uint32_t ctx, uint32_t comm)
{
	bool any = false;
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		struct nnp_fw_op *op = fw->queues[i].op;

		if (op && fw->queues[i].ctx == ctx && nnp_fw_op_uses_comm(op, comm)) {
			/*
			 * One a leave tore down first stays PEER_LEFT, one a
			 * link's loss caught LINK_DOWN.
			 */
			if (!op->aborted && !op->link_lost)
				op->aborted = NNP_STATUS_ABORTED;
			op->ready = true;
			any = true;
		}
	}
	return any;
}

/*
 * What a rank leaving @m tells its peers: the rank at the far end of each
 * of its ring's ports and of each port its routes start on how many
 * collectives it started (nnp_fw_icl_send_leave()), and every rank it has
 * a route to that it left (v1.21), behind the messages it sent that rank
 * on the same route. A message by port to a linked rank off the ring
 * (the first hop of that rank's route) thus ends too, not only a routed
 * one. @routes is taken from @m, to be freed once told.
 */
struct leave {
	uint32_t ports, calls, rank, nranks;
	uint64_t epoch;
	uint8_t *routes;
	bool transit;	/* a transit's: an abort out of its pair instead */
};

/* @m's leave, with fw->lock held: its routes go to it, from @m. */
static struct leave leave_of_locked(struct nnp_fw_comm *m)
{
	struct leave l;

	/* A failed one's peers had its abort: none waits for it. */
	if (m->nranks < 2 || m->error)
		return (struct leave){ 0 };
	/*
	 * A transit is no rank, but the ranks' hop through it is gone: those
	 * on either side fail at once rather than wait for their timeout.
	 */
	if (nnp_fw_comm_transit(m))
		return (struct leave){
			.ports = nnp_fw_comm_ports(m), .epoch = m->epoch,
			.transit = true,
		};
	l = (struct leave){
		.ports = nnp_fw_comm_ports(m) | nnp_fw_comm_route_ports(m),
		.calls = m->calls_started,
		.rank = m->rank, .nranks = m->nranks, .epoch = m->epoch,
		.routes = m->routes,
	};
	m->routes = NULL;
	return l;
}

static void leave_send(struct nnp_fw *fw, struct leave *l)
{
	uint32_t r;

	if (l->transit) {
		nnp_fw_icl_send_aborts(fw, l->ports, l->epoch, 0);
		return;
	}
	if (l->ports)
		nnp_fw_icl_send_leave(fw, l->ports, l->epoch, l->calls);
	for (r = 0; l->routes && r < l->nranks && r < NNP_HW_MAX_ROUTED_RANKS &&
	     l->rank < NNP_HW_MAX_ROUTED_RANKS; r++)
		if (l->routes[r] != NNP_HW_ROUTE_NONE)
			nnp_fw_icl_send(fw, NULL, l->routes[r], l->epoch,
					nnp_fw_seq_routed(l->rank, r,
							  NNP_FW_ROUTED_LEAVE),
					true, NULL, 0);
	free(l->routes);
	l->routes = NULL;
}

/* How @op of @m ends now that a peer left: 0 if it may go on. */
static uint16_t torn_by_leave_locked(const struct nnp_fw_comm *m,
				     const struct nnp_fw_op *op)
{
	bool message = op->call.opcode == NNP_CMD_SEND ||
		       op->call.opcode == NNP_CMD_RECV;
	uint32_t port;

	if (!message)
		return nnp_fw_comm_call_torn(m, op->call_no);
	/* A routed message names its peer's rank, one by port none. */
	if (op->call.root != NNP_FW_CALL_NO_PEER)
		return nnp_fw_comm_rank_torn(m, op->call.root);
	for (port = 0; port < NNP_FW_MAX_PORTS; port++)
		if (op->ports == 1u << port)
			return nnp_fw_comm_port_torn(m, port);
	return 0;
}

uint16_t nnp_fw_comm_torn_locked(struct nnp_fw *fw, const struct nnp_fw_op *op)
{
	const struct nnp_fw_comm *m = &fw->comms[op->comm];

	return op->comm && m->ctx ? torn_by_leave_locked(m, op) : 0;
}

void nnp_fw_comm_op_queued_locked(struct nnp_fw *fw, uint32_t ctx,
				  struct nnp_fw_op *op)
{
	uint32_t n = op->members ? op->members : 1, i;

	for (i = 0; i < n && !op->aborted; i++) {
		const struct nnp_fw_comm *m = nnp_fw_comm_of_locked(fw, ctx,
			op->members ? op->member_comms[i] : op->comm);

		if (!m)
			continue;
		if (m->error)
			op->aborted = NNP_STATUS_ABORTED;
		else if (!op->members)	/* a GROUP's members look each step */
			op->aborted = torn_by_leave_locked(m, op);
	}
}

/*
 * End the commands of @m in flight here that a leave tore down, with
 * fw->lock held: each ends at its next wait. A GROUP is run again, for
 * its members to see whether it tore them down. True if there was any.
 */
static bool tear_left_locked(struct nnp_fw *fw, struct nnp_fw_comm *m)
{
	uint32_t comm = (uint32_t)(m - fw->comms), i;
	bool any = false;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		struct nnp_fw_op *op = fw->queues[i].op;
		uint16_t torn;

		if (!op || fw->queues[i].ctx != m->ctx || op->aborted)
			continue;
		if (op->members && nnp_fw_op_uses_comm(op, comm)) {
			op->ready = true;
			any = true;
			continue;
		}
		if (op->comm != comm)
			continue;
		torn = torn_by_leave_locked(m, op);
		if (torn) {
			op->aborted = torn;
			op->ready = true;
			any = true;
		}
	}
	return any;
}

bool nnp_fw_comm_left_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
			     uint32_t calls, uint32_t port)
{
	if (!m->left || nnp_fw_call_after(m->left_calls, calls)) {
		m->left = true;
		m->left_calls = calls;
	}
	m->left_ports |= 1u << port;
	return tear_left_locked(fw, m);
}

bool nnp_fw_comm_rank_left_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
				  uint32_t rank)
{
	if (!m->routed_left || rank >= m->nranks || rank == m->rank ||
	    rank >= NNP_HW_MAX_ROUTED_RANKS)
		return false;
	m->routed_left[rank / 8] |= 1u << rank % 8;
	return tear_left_locked(fw, m);
}

/*
 * Whether a leave tore down a command of @m that has yet to tell @m it
 * ended, with fw->lock held: a collective this chip started past the
 * leaver's count (ended or not: one that ended PEER_LEFT failed @m), or a
 * message still in its queue.
 */
static bool left_tore_locked(const struct nnp_fw *fw,
			     const struct nnp_fw_comm *m)
{
	uint32_t comm = (uint32_t)(m - fw->comms), i;

	if (nnp_fw_comm_call_torn(m, m->calls_started))
		return true;
	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		const struct nnp_fw_op *op = fw->queues[i].op;

		if (op && fw->queues[i].ctx == m->ctx && op->comm == comm &&
		    op->aborted == NNP_STATUS_PEER_LEFT)
			return true;
	}
	return false;
}

uint16_t nnp_fw_comm_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = fw_admin_arg(cmd, 0), comm = fw_admin_arg(cmd, 1);
	uint32_t flags = fw_admin_arg(cmd, 2);
	uint16_t status = NNP_STATUS_NOT_FOUND;
	struct nnp_fw_comm *m;
	uint32_t rank = 0;
	struct abort_to_pass failed = { 0 };
	struct leave leave = { 0 };
	uint64_t epoch = 0;
	bool kick = false;

	if (flags & ~NNP_HW_COMM_DESTROY_ABORT)
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	m = nnp_fw_comm_slot_locked(fw, ctx, comm);
	if (m) {
		epoch = m->epoch;
		rank = m->rank;
		/*
		 * Failed, with its abort not passed yet: sent now, or the
		 * peers would hear nothing (a failed one sends no leave).
		 */
		failed = abort_take_locked(m);
		leave = leave_of_locked(m);
		comm_free_locked(m);
		nnp_fw_epoch_gone_locked(fw, epoch, true);
		if (flags & NNP_HW_COMM_DESTROY_ABORT) {
			m->aborted_ctx = ctx;
			kick = abort_commands_locked(fw, ctx, comm);
		}
		status = NNP_STATUS_SUCCESS;
	}
	mtx_unlock(&fw->lock);
	if (kick && fw->host.kick)
		fw->host.kick(fw->host.opaque, NNP_FW_KICK_QUEUES);
	if (!status) {
		nnp_fw_icl_send_aborts(fw, failed.ports, failed.epoch, failed.seq);
		purge_epoch(fw, epoch, rank);
		leave_send(fw, &leave);
	}
	return status;
}

uint16_t nnp_fw_comm_status(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			    uint32_t *result)
{
	uint16_t status = NNP_STATUS_NOT_FOUND;
	struct nnp_fw_comm *m;

	mtx_lock(&fw->lock);
	m = nnp_fw_comm_slot_locked(fw, fw_admin_arg(cmd, 0), fw_admin_arg(cmd, 1));
	if (m) {
		*result = m->error;
		status = NNP_STATUS_SUCCESS;
	}
	mtx_unlock(&fw->lock);
	return status;
}

/* What COMM_STATE counts of @op, ended with @status, on its @m. */
static void count_ended_locked(struct nnp_fw_comm *m,
			       const struct nnp_fw_op *op, uint16_t status)
{
	if (op->call_no)
		m->calls_done++;
	else if (op->call.opcode == NNP_CMD_SEND ||
		 op->call.opcode == NNP_CMD_RECV)
		m->messages_done++;
	if (!status)
		m->bytes_done += op->bytes;
}

bool nnp_fw_comm_ended(struct nnp_fw *fw, uint32_t comm, uint64_t epoch,
		       const struct nnp_fw_op *op, uint16_t status)
{
	struct nnp_fw_comm *m = &fw->comms[comm];
	bool news, kick = false;

	mtx_lock(&fw->lock);
	/* Not a communicator made since in the same slot. */
	if (m->ctx && m->epoch == epoch) {
		/* Its chunks are checked no more (one lock for both). */
		nnp_fw_icl_calls_del_locked(m, op);
		count_ended_locked(m, op, status);
	}
	if (!status) {
		mtx_unlock(&fw->lock);
		return false;
	}
	news = !m->ctx || m->epoch != epoch || !m->error;
	if (m->ctx && m->epoch == epoch && !m->error) {
		m->error = status;
		nnp_fw_event_comm_failed_locked(fw, m, status,
						NNP_HW_EVENT_NO_PORT);
		/*
		 * Its other commands here end too, as an abort from a peer
		 * ends them: none waits for what will not come.
		 */
		kick = abort_commands_locked(fw, m->ctx, comm);
	}
	mtx_unlock(&fw->lock);
	if (kick && fw->host.kick)
		fw->host.kick(fw->host.opaque, NNP_FW_KICK_QUEUES);
	return news;
}

bool nnp_fw_comm_failed_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
			       uint16_t status, uint32_t port)
{
	if (m->error)
		return false;
	/*
	 * A peer's abort that comes after a leave tore a command here down,
	 * before that command ended: the communicator failed for the leave.
	 */
	if (status == NNP_STATUS_ABORTED && left_tore_locked(fw, m))
		status = NNP_STATUS_PEER_LEFT;
	m->error = status;
	nnp_fw_event_comm_failed_locked(fw, m, status, port);
	m->pass_abort = true;
	atomic_store(&fw->aborts_to_pass, true);
	abort_commands_locked(fw, m->ctx, (uint32_t)(m - fw->comms));
	return true;
}

void nnp_fw_comm_pass_abort(struct nnp_fw *fw, uint32_t comm, uint64_t epoch)
{
	struct nnp_fw_comm *m = &fw->comms[comm];
	bool kick;

	mtx_lock(&fw->lock);
	kick = m->ctx && m->epoch == epoch;
	if (kick) {
		m->pass_abort = true;
		atomic_store(&fw->aborts_to_pass, true);
	}
	mtx_unlock(&fw->lock);
	if (kick && fw->host.kick)
		fw->host.kick(fw->host.opaque, NNP_FW_KICK_QUEUES);
}

void nnp_fw_comms_pass_aborts(struct nnp_fw *fw)
{
	uint32_t i;

	if (!atomic_exchange(&fw->aborts_to_pass, false))
		return;
	for (i = 1; i < NNP_HW_MAX_COMMS; i++) {
		struct abort_to_pass a;

		mtx_lock(&fw->lock);
		a = abort_take_locked(&fw->comms[i]);
		mtx_unlock(&fw->lock);
		nnp_fw_icl_send_aborts(fw, a.ports, a.epoch, a.seq);
	}
}

void nnp_fw_comms_clear(struct nnp_fw *fw, uint32_t ctx)
{
	uint32_t i;

	for (i = 1; i < NNP_HW_MAX_COMMS; i++) {
		uint32_t rank = 0;
		struct leave leave = { 0 };
		uint64_t epoch = 0;
		bool mine;

		mtx_lock(&fw->lock);
		if (!ctx || fw->comms[i].aborted_ctx == ctx)
			fw->comms[i].aborted_ctx = 0;
		mine = fw->comms[i].ctx && (!ctx || fw->comms[i].ctx == ctx);
		if (mine) {
			epoch = fw->comms[i].epoch;
			rank = fw->comms[i].rank;
			/* A reset (all) takes the links down instead. */
			if (ctx)
				leave = leave_of_locked(&fw->comms[i]);
			comm_free_locked(&fw->comms[i]);
		}
		mtx_unlock(&fw->lock);
		if (mine) {
			purge_epoch(fw, epoch, rank);
			leave_send(fw, &leave);
		}
	}
}

/* A ring dimension in host order; false if its reserved word is set. */
static bool topology_dim(const struct nnp_hw_ring_dim *h,
			 struct nnp_fw_ring_dim *d)
{
	uint32_t k;

	d->n = fw_le32(h->n);
	d->pos = fw_le32(h->pos);
	d->pairs = fw_le32(h->pairs);
	for (k = 0; k < 2; k++) {
		d->next_port[k] = fw_le32(h->next_port[k]);
		d->prev_port[k] = fw_le32(h->prev_port[k]);
	}
	return !h->rsvd;
}

_Static_assert(NNP_HW_ALGO_TORUS == NNP_FW_ALGO_TORUS &&
	       NNP_HW_ALGO_AUTO == NNP_FW_ALGO_AUTO,
	       "COMM_TOPOLOGY's algorithms are the firmware's");

/*
 * COMM_TOPOLOGY (v1.7). Admin commands run one at a time, so the
 * communicator found here is still there for nnp_fw_comm_set_topology().
 */
uint16_t nnp_fw_comm_topology(struct nnp_fw *fw,
			      const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = fw_admin_arg(cmd, 0), comm = fw_admin_arg(cmd, 1);
	struct nnp_hw_comm_topology h;
	struct nnp_fw_topology t;
	bool found;

	if (cmd->len != sizeof(h))
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	found = nnp_fw_comm_of_locked(fw, ctx, comm);
	mtx_unlock(&fw->lock);
	if (!found)
		return NNP_STATUS_NOT_FOUND;
	if (fw->host.dma_read(fw->host.opaque, cmd->addr, &h, sizeof(h)))
		return NNP_STATUS_DMA_ERROR;
	t.algo = fw_le32(h.algo);
	if (h.rsvd || !topology_dim(&h.dim[0], &t.dim[0]) ||
	    !topology_dim(&h.dim[1], &t.dim[1]) ||
	    nnp_fw_comm_set_topology(fw, ctx, comm, &t))
		return NNP_STATUS_INVALID_FIELD;
	return NNP_STATUS_SUCCESS;
}

/*
 * A route table of @n bytes read from @cmd, checked for the chip of rank
 * @rank: its counters of routed messages after it in the same block.
 */
static uint16_t read_routes(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			    uint32_t n, uint32_t rank, uint8_t **routes)
{
	uint32_t peers = n < NNP_HW_MAX_ROUTED_RANKS ? n : NNP_HW_MAX_ROUTED_RANKS;
	uint8_t *r;
	uint32_t i;

	*routes = NULL;
	if (cmd->len != n)
		return NNP_STATUS_INVALID_FIELD;
	r = calloc(1, n + 2 * peers * sizeof(uint16_t) + sizeof(uint16_t) +
		   (peers + 7) / 8);
	if (!r)
		return NNP_STATUS_NO_RESOURCES;
	if (fw->host.dma_read(fw->host.opaque, cmd->addr, r, n)) {
		free(r);
		return NNP_STATUS_DMA_ERROR;
	}
	for (i = 0; i < n; i++) {
		bool none = r[i] == NNP_HW_ROUTE_NONE;

		if (i == rank ? !none : !none && r[i] >= fw->cfg.num_ports) {
			free(r);
			return NNP_STATUS_INVALID_FIELD;
		}
	}
	*routes = r;
	return NNP_STATUS_SUCCESS;
}

/*
 * COMM_ROUTES (v1.12). Given again, the counters of routed messages start
 * over: every rank gives its routes between the same calls.
 */
uint16_t nnp_fw_comm_routes(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = fw_admin_arg(cmd, 0), comm = fw_admin_arg(cmd, 1);
	uint32_t n = 0, rank = 0, peers;
	struct nnp_fw_comm *m;
	uint8_t *routes, *old;
	uint64_t epoch;
	uint16_t st;

	mtx_lock(&fw->lock);
	m = nnp_fw_comm_slot_locked(fw, ctx, comm);
	if (m) {
		n = m->nranks;
		rank = m->rank;
	}
	mtx_unlock(&fw->lock);
	if (!m)
		return NNP_STATUS_NOT_FOUND;
	st = read_routes(fw, cmd, n, rank, &routes);
	if (st)
		return st;
	peers = n < NNP_HW_MAX_ROUTED_RANKS ? n : NNP_HW_MAX_ROUTED_RANKS;
	mtx_lock(&fw->lock);
	/* Unless a reset took it meanwhile. */
	if (nnp_fw_comm_slot_locked(fw, ctx, comm) != m || m->nranks != n) {
		mtx_unlock(&fw->lock);
		free(routes);
		return NNP_STATUS_NOT_FOUND;
	}
	old = m->routes;
	m->routes = routes;
	/* uint16_t-aligned: the block's table is padded to an even length. */
	m->routed_sent = (uint16_t *)(routes + n + (n & 1));
	m->routed_received = m->routed_sent + peers;
	m->routed_left = (uint8_t *)(m->routed_received + peers);
	epoch = m->epoch;
	mtx_unlock(&fw->lock);
	free(old);
	nnp_fw_relay_routes_changed(fw);
	/* A rank's routed leave that came before the routes is heard. */
	nnp_fw_icl_claim_held(fw, epoch);
	return NNP_STATUS_SUCCESS;
}
