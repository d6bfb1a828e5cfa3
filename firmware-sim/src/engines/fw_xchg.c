// SPDX-License-Identifier: MIT
/*
 * Firmware simulator exchanges (v1.12): ALLTOALL, GATHER and SCATTER. Each
 * is a set of flows, one per peer and direction, each a routed message
 * (fw_p2p.c's labels, fw_relay.c's forwarding) of len elements: every
 * flow goes on its own route at once, so a chip's ports all carry the
 * exchange where the routes spread over them (a torus's four), and a
 * message crosses each link of its shortest path once.
 *
 * A flow out lends its chunks (fw_lend.c): the first hop reads them
 * straight from this chip's memory, as a collective's next chip does, so
 * a message to a neighbour is copied once, by its receiver, and a relay
 * makes the one copy it forwards. The flow is done when every chunk came
 * back, and a command that ends early takes back what it lent before its
 * memory (or scratch) is let go.
 *
 * The flows run as steps of one queue command: each flow a packet a
 * turn, round the peers, so none runs ahead on a shared port, and each
 * waits on its own nnp_fw_op; the command parks (on any port) when every
 * flow waits, unless a wake came while they ran (fw_rounds.c). Sending
 * and receiving in the same command is what keeps an exchange from
 * deadlocking on room: a rank whose sends wait for room still takes what
 * comes for it.
 *
 * A flow's label is the pair's next routed message number, taken when
 * the command starts, so exchanges and routed SEND/RECV between the same
 * ranks keep one order. A failure passes an abort on each flow still to
 * send and round the communicator's ring, so every rank stops.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_engines.h"
#include "fw_reduce.h"

/*
 * A flow's packet. Lent, a chunk costs no copy to make, only its wake-ups
 * and locks: alltoalls of 1 to 16 MiB on 4 and 8 chips took 0.6-0.97x
 * the time with 256 KiB as with 64 KiB, and growing it with the message
 * to 1 MiB did no better (docs/testing.md).
 */
#define XCHG_CHUNK	(4 * NNP_FW_CHUNK_BYTES)

/* One direction with one peer: a routed message out or in. */
struct flow {
	struct nnp_fw_op link;	/* its waits */
	uint8_t *mem;		/* device memory; NULL: no such flow */
	uint32_t port;		/* out: the route's first port */
	uint32_t seq;
	uint64_t off;		/* bytes done */
	bool sent;		/* out: its last chunk lent */
	bool done;		/* out: and every chunk back */
};

struct xchg {
	struct nnp_fw_op op;	/* first: the queue's handle on it */
	unsigned int opcode;
	uint32_t comm;
	uint32_t nranks, rank, root;
	uint64_t epoch;
	uint32_t ring_ports;	/* where the communicator's aborts go */
	uint64_t len;		/* bytes to or from each peer */
	uint8_t *src, *dst;	/* device memory; NULL: none named */
	uint8_t *scratch;	/* an in-place alltoall's copy of src */
	uint64_t local;		/* bytes copied within device memory */
	bool started;
	struct flow *out, *in;	/* by peer rank */
};

static const char *xchg_name(unsigned int opcode)
{
	return opcode == NNP_CMD_ALLTOALL ? "alltoall" :
	       opcode == NNP_CMD_GATHER ? "gather" : "scatter";
}

/* Whether this rank sends to (@out) or receives from peer @p. */
static bool flows(const struct xchg *x, uint32_t p, bool out)
{
	if (p == x->rank)
		return false;
	switch (x->opcode) {
	case NNP_CMD_ALLTOALL:
		return true;
	case NNP_CMD_GATHER:
		return out ? p == x->root : x->rank == x->root;
	default:	/* SCATTER */
		return out ? x->rank == x->root : p == x->root;
	}
}

/*
 * The communicator's part (@m, with fw->lock held): its labels and routes for
 * every flow, or why the command cannot run.
 */
static uint16_t xchg_begin_locked(struct xchg *x, struct nnp_fw_comm *m)
{
	uint32_t p;

	if (m->error)
		return NNP_STATUS_ABORTED;	/* made again before further use */
	if ((!m->routes && m->nranks > 1) ||
	    m->nranks > NNP_HW_MAX_ROUTED_RANKS || x->root >= m->nranks)
		return NNP_STATUS_INVALID_FIELD;
	x->rank = m->rank;
	for (p = 0; p < m->nranks; p++)
		if ((flows(x, p, true) || flows(x, p, false)) &&
		    m->routes[p] == NNP_HW_ROUTE_NONE)
			return NNP_STATUS_INVALID_FIELD;
	x->out = calloc(m->nranks, sizeof(*x->out));
	x->in = calloc(m->nranks, sizeof(*x->in));
	if (!x->out || !x->in)
		return NNP_STATUS_NO_RESOURCES;
	/* From here on its end tells the communicator (xchg_end()). */
	x->nranks = m->nranks;
	x->epoch = m->epoch;
	x->ring_ports = nnp_fw_comm_ports(m);
	x->op.timeout_ns = m->timeout_ns;
	x->op.call_no = ++m->calls_started;
	x->op.aborted = nnp_fw_comm_call_torn(m, x->op.call_no);
	x->op.bytes = x->len;
	for (p = 0; p < x->nranks; p++) {
		x->out[p].link.timeout_ns = m->timeout_ns;
		x->in[p].link.timeout_ns = m->timeout_ns;
		if (flows(x, p, true)) {
			x->out[p].port = m->routes[p];
			x->out[p].seq = nnp_fw_seq_routed(x->rank, p,
				nnp_fw_routed_next(&m->routed_sent[p]));
			x->op.ports |= 1u << m->routes[p];
		}
		if (flows(x, p, false))
			x->in[p].seq = nnp_fw_seq_routed(p, x->rank,
				nnp_fw_routed_next(&m->routed_received[p]));
	}
	return NNP_STATUS_SUCCESS;
}

/* Every flow's call, which in-process peers' chunks are checked against. */
static void xchg_call(struct xchg *x, const struct nnp_hw_queue_cmd *cmd)
{
	const struct nnp_fw_call call = {
		.opcode = x->opcode, .dtype = NNP_COLL_DTYPE(cmd->value),
		.root = x->root, .rank = x->rank, .count = cmd->len,
	};
	uint32_t p;

	x->op.call = call;
	for (p = 0; p < x->nranks; p++)
		x->out[p].link.call = x->in[p].link.call = call;
}

/* Device memory of @len bytes at @key + @off, or 0 fields for none. */
static uint16_t xchg_span(struct nnp_fw *fw, uint32_t ctx, uint32_t key,
			  uint64_t off, uint64_t len, uint32_t right, bool named,
			  uint8_t **mem)
{
	struct nnp_fw_span s;
	uint16_t st;

	*mem = NULL;
	if (!named)
		return key || off ? NNP_STATUS_INVALID_FIELD : NNP_STATUS_SUCCESS;
	st = nnp_fw_key_resolve(fw, ctx, key, off, len, right, &s);
	if (!st && s.type != NNP_KEY_TYPE_DEVICE)
		st = NNP_STATUS_INVALID_FIELD;
	if (!st)
		*mem = (uint8_t *)fw->cfg.mem + s.dev_base + s.start;
	return st;
}

/* Resolve src and dst for this rank's part, and point each flow at its bytes. */
static uint16_t xchg_memory(struct nnp_fw *fw, uint32_t ctx,
			    const struct nnp_hw_queue_cmd *cmd, struct xchg *x)
{
	bool root = x->rank == x->root, a2a = x->opcode == NNP_CMD_ALLTOALL;
	bool src_all = a2a || x->opcode == NNP_CMD_SCATTER;
	bool dst_all = a2a || x->opcode == NNP_CMD_GATHER;
	bool src_named = x->opcode != NNP_CMD_SCATTER || root;
	bool dst_named = x->opcode != NNP_CMD_GATHER || root;
	uint64_t all;
	uint32_t p;
	uint16_t st;

	if (__builtin_mul_overflow(x->len, (uint64_t)x->nranks, &all))
		return NNP_STATUS_OUT_OF_BOUNDS;
	st = xchg_span(fw, ctx, cmd->src_key, cmd->src_off,
		       src_all ? all : x->len, NNP_KEY_READ, src_named, &x->src);
	if (!st)
		st = xchg_span(fw, ctx, cmd->dst_key, cmd->dst_off,
			       dst_all ? all : x->len, NNP_KEY_WRITE, dst_named,
			       &x->dst);
	if (st)
		return st;
	/* In place, an alltoall would overwrite segments not sent yet. */
	if (a2a && x->src < x->dst + all && x->dst < x->src + all && all) {
		x->scratch = nnp_fw_scratch_take(fw, all);
		if (!x->scratch)
			return NNP_STATUS_NO_RESOURCES;
	}
	for (p = 0; p < x->nranks; p++) {
		if (flows(x, p, true))
			x->out[p].mem = x->src + (src_all ? p * x->len : 0);
		if (flows(x, p, false))
			x->in[p].mem = x->dst + (dst_all ? p * x->len : 0);
		if (x->scratch && x->out[p].mem)
			x->out[p].mem = x->scratch + p * x->len;
	}
	return NNP_STATUS_SUCCESS;
}

/* Before any flow: the scratch copy, and this rank's own segment. */
static void xchg_start(struct nnp_fw *fw, struct xchg *x)
{
	uint64_t own_src = x->opcode == NNP_CMD_GATHER ? 0 : x->rank * x->len;
	uint64_t own_dst = x->opcode == NNP_CMD_SCATTER ? 0 : x->rank * x->len;
	uint64_t copied = 0;
	uint32_t p;

	if (x->scratch) {
		if (!fw->cfg.timing_only)
			memcpy(x->scratch, x->src, x->len * x->nranks);
		copied += x->len * x->nranks;
	}
	/* Gather's and scatter's own part is the root's alone. */
	if (x->src && x->dst) {
		if (!fw->cfg.timing_only)
			memmove(x->dst + own_dst,
				(x->scratch ? x->scratch : x->src) + own_src,
				x->len);
		copied += x->len;
	}
	x->local += copied;
	/* A copy reads and writes device memory. */
	nnp_fw_clock_hbm(fw, &x->op, 2 * copied);
	for (p = 0; p < x->nranks; p++)
		x->out[p].link.t_ns = x->in[p].link.t_ns = x->op.t_ns;
	x->started = true;
}

/*
 * One packet of flow @f, or (out, all lent) its wait for the chunks to
 * come back: SUCCESS (and @f may be done), PARKED, or why it failed.
 * Every message is at least one packet.
 */
static uint16_t flow_turn(struct nnp_fw *fw, struct xchg *x, struct flow *f,
			  bool out)
{
	uint64_t n = x->len - f->off < XCHG_CHUNK ? x->len - f->off : XCHG_CHUNK;
	uint16_t st;

	if (f->sent) {
		st = nnp_fw_icl_wait_returned(fw, &f->link, f->port,
					      f->link.lent);
		f->done = !st;
		return st;
	}
	st = out ?
		nnp_fw_icl_lend(fw, &f->link, f->port, x->epoch, f->seq,
				f->mem + f->off, n, f->link.t_ns) :
		nnp_fw_icl_recv_any(fw, &f->link, x->epoch, f->seq,
				    f->mem + f->off, n);
	if (st)
		return st;
	f->off += n;
	f->sent = out && f->off >= x->len;
	f->done = !out && f->off >= x->len;
	return NNP_STATUS_SUCCESS;
}

/* The flows' modeled times make the command's. */
static void xchg_clock(struct xchg *x)
{
	uint32_t p, d;

	for (p = 0; p < x->nranks; p++)
		for (d = 0; d < 2; d++) {
			const struct nnp_fw_op *o = d ? &x->in[p].link :
						       &x->out[p].link;

			x->op.t_ns = nnp_fw_max_ns(x->op.t_ns, o->t_ns);
			x->op.tx_end_ns = nnp_fw_max_ns(x->op.tx_end_ns,
							o->tx_end_ns);
			x->op.hbm_ns += o->hbm_ns;
		}
}

/* One turn of every flow not done: round @r of the exchange's. */
static uint16_t xchg_round(struct nnp_fw *fw, struct nnp_fw_op *op,
			   struct nnp_fw_round *r)
{
	struct xchg *x = (struct xchg *)op;
	uint32_t p, d;

	for (p = 0; p < x->nranks; p++) {
		for (d = 0; d < 2; d++) {
			struct flow *f = d ? &x->in[p] : &x->out[p];
			uint16_t st;

			if (!f->mem || f->done)
				continue;
			nnp_fw_part_begin(fw, r, &f->link);
			st = flow_turn(fw, x, f, !d);
			if (st == NNP_FW_PARKED) {
				nnp_fw_part_parked(r, &f->link);
				continue;
			}
			if (st) {
				x->op.detail = f->link.detail;
				return st;
			}
			r->moved = true;
			r->left += !f->done;
		}
	}
	return NNP_STATUS_SUCCESS;
}

static uint16_t xchg_step(struct nnp_fw *fw, struct nnp_fw_op *op)
{
	struct xchg *x = (struct xchg *)op;
	uint16_t st;

	if (!x->started) {
		/* A peer that left: it ends before it sends anything. */
		st = nnp_fw_op_torn(fw, op);
		if (st)
			return st;
		xchg_start(fw, x);
	}
	st = nnp_fw_rounds(fw, op, xchg_round);
	if (!st)
		xchg_clock(x);
	return st;
}

static void xchg_end(struct nnp_fw *fw, struct nnp_fw_op *op, uint16_t st)
{
	struct xchg *x = (struct xchg *)op;
	uint32_t p;

	if (st && st != NNP_STATUS_ABORTED)
		nnp_fw_op_failed(fw, st, "%s on comm %u failed: status 0x%x",
				 xchg_name(x->opcode), x->comm, st);
	/* Each receiver still waiting learns at once; then the whole ring. */
	if (st && x->out) {
		for (p = 0; p < x->nranks; p++)
			if (x->out[p].seq && !x->out[p].sent)
				nnp_fw_icl_send(fw, NULL, x->out[p].port, x->epoch,
						x->out[p].seq, true, NULL, 0);
	}
	/* Nothing may read the memory, or the scratch, once it ends. */
	for (p = 0; x->out && p < x->nranks; p++)
		if (x->out[p].mem)
			nnp_fw_icl_reclaim(fw, &x->out[p].link, x->out[p].port);
	if (x->nranks &&
	    fw->engine_hooks->comm_ended(fw, x->comm, x->epoch, op, st) &&
	    x->nranks > 1)
		nnp_fw_icl_send_aborts(fw, x->ring_ports, x->epoch,
				       nnp_fw_seq(0, false));
	nnp_fw_count_local(fw, x->local);
	nnp_fw_scratch_give(fw, x->scratch);
	free(x->out);
	free(x->in);
	free(x);
}

uint16_t nnp_fw_exchange(struct nnp_fw *fw, uint32_t ctx,
			 const struct nnp_hw_queue_cmd *cmd,
			 struct nnp_fw_op **op)
{
	struct xchg *x = calloc(1, sizeof(*x));
	size_t es = nnp_fw_dtype_size(NNP_COLL_DTYPE(cmd->value));
	struct nnp_fw_comm *m;
	uint16_t st;

	if (!x)
		return NNP_STATUS_NO_RESOURCES;
	x->op.step = xchg_step;
	x->op.end = xchg_end;
	x->opcode = cmd->opcode;
	x->comm = NNP_COLL_COMM(cmd->value);
	x->root = NNP_COLL_ROOT(cmd->value);
	x->op.comm = x->comm;
	st = NNP_COLL_OP(cmd->value) ||
	     (x->opcode == NNP_CMD_ALLTOALL && x->root) ||
	     __builtin_mul_overflow(cmd->len, (uint64_t)es, &x->len) ?
	     NNP_STATUS_INVALID_FIELD : NNP_STATUS_SUCCESS;
	if (!st) {
		mtx_lock(&fw->lock);
		m = nnp_fw_comm_of_locked(fw, ctx, x->comm);
		st = m ? xchg_begin_locked(x, m) :
		     nnp_fw_comm_missing_locked(fw, ctx, x->comm);
		mtx_unlock(&fw->lock);
	}
	if (!st) {
		xchg_call(x, cmd);
		st = xchg_memory(fw, ctx, cmd, x);
	}
	if (st) {
		xchg_end(fw, &x->op, st);
		return st;
	}
	x->op.keys[0] = cmd->src_key;
	x->op.keys[1] = cmd->dst_key;
	*op = &x->op;
	return NNP_STATUS_SUCCESS;
}
