// SPDX-License-Identifier: MIT
/*
 * Firmware simulator collectives around the communicator's ring, entirely
 * in device memory: allreduce, broadcast, allgather, reduce-scatter and
 * reduce.
 *
 * Every ring step sends one segment to the next position while receiving
 * one from the previous, cut into chunks so that sending and reducing
 * overlap across chips; received chunks are reduced into device memory as
 * they arrive. Allreduce is a reduce-scatter then an allgather: each rank
 * sends 2(n-1) of n segments. Broadcast is a pipelined chain from the root,
 * reduce one to it.
 * On the modeled clock a chunk goes on once it arrived and was folded,
 * not once its whole step did: the steps pipeline chunk by chunk, and a
 * ring pays the link latency once per step only when a step's chunks are
 * fewer than the latency's worth (send_at()).
 *
 * Chunks are lent, not copied, to a chip of this process (see fw_lend.c):
 * the next chip reduces or copies straight out of this chip's memory. A
 * sender lends up to WINDOW chunks ahead of its receives, so a chunk's
 * wake-up latency is not paid in lock-step, and the chunk grows with the
 * message (chunk_min .. chunk_max) so that per-chunk costs
 * amortize. Lent memory is not written until it came back: reduce-scatter
 * folds into the chunk it just lent only once the next chip has read it,
 * allreduce's allgather overwrites the segments its reduce-scatter lent
 * only after all came back, and no collective ends before everything it
 * lent came back.
 * A rank whose part fails tells both its neighbours; a chip takes the
 * abort as the communicator's death (rx_arrive()), ends its command in
 * flight and passes the abort on, so every rank ends once the first one
 * fails, whatever it was waiting for. After a failure the ranks no longer
 * agree on where they are: the communicator is made again, with a new
 * epoch, before it is used again (as NCCL's abort).
 *
 * A collective is a link command (nnp_fw_op): it parks whenever a packet
 * it needs has not come, or the next chip has no room, and a later step
 * goes on from where it stood: the cursor (stage, ring step, chunk offset,
 * whether this chunk's first half is done) lives in struct coll.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_engines.h"
#include "fw_reduce.h"

/* Not a timing-only run (nnp_fw_config): the bytes are read and written. */
static bool moves_data(const struct coll *c)
{
	return !c->fw->cfg.timing_only;
}

/* The position @back steps before ours (@back < 2 * nranks). */
uint32_t nnp_fw_coll_behind(const struct coll *c, uint32_t back)
{
	return (c->pos + 2 * c->nranks - back) % c->nranks;
}

static uint32_t rank_at(const struct coll *c, uint32_t pos)
{
	return c->order ? c->order[pos] : pos;
}

/*
 * One ring step: send @out_n elements at @out to the next position while
 * receiving @in_n elements into @in from the previous one. With @reduce
 * the received data is combined with what @in holds, or, given @with,
 * with @with (in = with op received).
 */
struct step {
	const uint8_t *out;
	uint64_t out_n;
	uint8_t *in;
	uint64_t in_n;
	bool reduce;
	const uint8_t *with;
	bool in_lent_before;	/* @in was the previous step's @out */
};

/* Send @n elements at @p, leaving at modeled time @at or after. */
static uint16_t send_chunk(struct coll *c, const uint8_t *p, uint64_t n,
			   uint64_t at)
{
	if (c->rationed) {
		if (!c->round_left)
			return COLL_YIELD;
		c->round_left--;
	}
	return nnp_fw_icl_lend(c->fw, &c->link, c->send_port, c->epoch, c->seq,
			       p, n * c->es, at);
}

/* Every chunk the next step sends is ready at the ring's time, and so is it. */
static void ready_all_now(struct coll *c)
{
	uint64_t k;

	for (k = 0; k < c->nready; k++)
		c->ready[k] = c->link.t_ns;
	c->tx_ns = nnp_fw_max_ns(c->tx_ns, c->link.t_ns);
}

uint16_t nnp_fw_coll_ready_init(struct coll *c)
{
	uint64_t k, most = c->count;

	/* Allreduce's steps are segments: a part of count / nranks, rounded up. */
	if (c->opcode == NNP_CMD_ALLREDUCE)
		most = (c->count + c->nranks - 1) / c->nranks;
	k = (most + c->chunk - 1) / c->chunk;
	if (k > c->nready) {
		free(c->ready);
		c->ready = malloc(k * sizeof(*c->ready));
		c->nready = c->ready ? k : 0;
		if (!c->ready)
			return NNP_STATUS_NO_RESOURCES;
	}
	c->tx_ns = 0;
	ready_all_now(c);
	return NNP_STATUS_SUCCESS;
}

/*
 * When chunk @k of this ring step may leave: once the same chunk, which
 * the step before received, is ready here (not the whole step before, as
 * NCCL's slices), and not before the ring's earlier chunks. A step of k
 * chunks of wire time w thus costs max(k w, w + alpha + one chunk's
 * memory pass) after the one before, not k w + alpha.
 */
static uint64_t send_at(struct coll *c, uint64_t k)
{
	c->tx_ns = nnp_fw_max_ns(c->tx_ns, c->ready[k]);
	return c->tx_ns;
}

static uint16_t recv_chunk(struct coll *c, const struct nnp_fw_rx_into *into,
			   uint64_t n)
{
	return nnp_fw_icl_recv_into(c->fw, &c->link, c->recv_port, c->epoch,
				    c->seq, into, n * c->es);
}

/* Wait until the first @want chunks lent came back. */
uint16_t nnp_fw_coll_lent_back(struct coll *c, uint32_t want)
{
	return nnp_fw_icl_wait_returned(c->fw, &c->link, c->send_port, want);
}

static uint64_t min_n(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * The rest of one ring step, from the cursor; resets it when done. Sends
 * run up to WINDOW chunks ahead of the receives (all of them once every
 * receive is done).
 */
static uint16_t ring_step(struct coll *c, const struct step *s)
{
	uint64_t chunk = c->chunk, n;
	uint16_t st;

	for (;;) {
		while (c->sent < s->out_n &&
		       (c->off >= s->in_n || c->sent < c->off + WINDOW * chunk)) {
			n = min_n(s->out_n - c->sent, chunk);
			st = send_chunk(c, s->out + c->sent * c->es, n,
					send_at(c, c->sent / chunk));
			if (st)
				return st;
			c->sent += n;
		}
		if (c->off >= s->in_n)
			break;
		n = min_n(s->in_n - c->off, chunk);
		/* Writing over the chunk the last step lent: once it was read. */
		if (s->in_lent_before) {
			st = nnp_fw_coll_lent_back(c, c->prev_step_lent +
						   c->off / chunk + 1);
			if (st)
				return st;
		}
		st = recv_chunk(c, &(struct nnp_fw_rx_into){
			.buf = s->in + c->off * c->es,
			.with = s->with ? s->with + c->off * c->es : NULL,
			.reduce = s->reduce, .dtype = c->dtype, .op = c->op,
		}, n);
		if (st)
			return st;
		/* The next step sends it on from here: in, then out. */
		c->ready[c->off / chunk] = c->link.t_ns;
		c->off += n;
	}
	c->off = 0;
	c->sent = 0;
	c->prev_step_lent = c->step_lent;
	c->step_lent = c->link.lent;
	return NNP_STATUS_SUCCESS;
}

/* Allreduce splits the buffer at @base into one segment per ring position. */
uint8_t *nnp_fw_coll_seg(const struct coll *c, uint8_t *base, uint32_t k,
		    uint64_t *n)
{
	uint64_t start = (unsigned __int128)c->count * k / c->nranks;
	uint64_t end = (unsigned __int128)c->count * (k + 1) / c->nranks;

	*n = end - start;
	return base + start * c->es;
}

uint16_t nnp_fw_coll_allreduce(struct coll *c)
{
	uint32_t n = c->nranks;
	struct step st = { .reduce = true };
	uint16_t status;
	uint64_t own_n, with_n;
	uint8_t *own;

	/*
	 * Out of place, the input is read where it lies: step 0 sends it, and
	 * each step folds it with what arrives into the output.
	 */
	for (; c->stage == 0 && c->s + 1 < n; c->s++) {
		uint32_t out_k = nnp_fw_coll_behind(c, c->s);
		uint32_t in_k = nnp_fw_coll_behind(c, c->s + 1);

		st.out = nnp_fw_coll_seg(c, c->s || !c->fold_src ? c->dst : c->src,
					 out_k, &st.out_n);
		st.in = nnp_fw_coll_seg(c, c->dst, in_k, &st.in_n);
		st.with = c->fold_src ?
			  nnp_fw_coll_seg(c, c->src, in_k, &with_n) : NULL;
		status = ring_step(c, &st);
		if (status)
			return status;
	}
	if (c->stage == 0) {
		/* The allgather writes over the segments lent so far. */
		status = nnp_fw_coll_lent_back(c, c->link.lent);
		if (status)
			return status;
		/* This rank now holds the full reduction of one segment. */
		own = nnp_fw_coll_seg(c, c->dst, nnp_fw_coll_behind(c, n - 1),
				      &own_n);
		if (c->avg_div) {
			if (moves_data(c))
				nnp_fw_divide(c->dtype, own, own_n, c->avg_div);
			nnp_fw_clock_hbm(c->fw, &c->link, 2 * own_n * c->es);
			/* The allgather sends the quotient. */
			ready_all_now(c);
		}
		c->stage = 1;
		c->s = 0;
		if (c->rs_only)
			return NNP_STATUS_SUCCESS;
	}
	st.reduce = false;
	st.with = NULL;
	for (; c->s + 1 < n; c->s++) {
		st.out = nnp_fw_coll_seg(c, c->dst,
					 nnp_fw_coll_behind(c, c->s + n - 1),
					 &st.out_n);
		st.in = nnp_fw_coll_seg(c, c->dst, nnp_fw_coll_behind(c, c->s),
					&st.in_n);
		status = ring_step(c, &st);
		if (status)
			return status;
	}
	return NNP_STATUS_SUCCESS;
}

/* Rank @r's part of a per-rank layout at @base. */
static uint8_t *part(const struct coll *c, uint8_t *base, uint32_t r)
{
	return base + (uint64_t)r * c->count * c->es;
}

static uint16_t allgather(struct coll *c)
{
	struct step st = { .out_n = c->count, .in_n = c->count };
	uint16_t status;

	for (; c->s + 1 < c->nranks; c->s++) {
		st.out = part(c, c->dst, rank_at(c, nnp_fw_coll_behind(c, c->s)));
		st.in = part(c, c->dst, rank_at(c, nnp_fw_coll_behind(c, c->s + 1)));
		status = ring_step(c, &st);
		if (status)
			return status;
	}
	return NNP_STATUS_SUCCESS;
}

/*
 * Where reduce-scatter's step @s folds: the output for the last, a second
 * buffer and acc in turn before it. The partial sum lent in one step is
 * thus written over two steps later, not in the next while the next chip
 * may still be reading it (which would make every chip wait for the
 * next). In place acc is scratch, so no fold but the last writes this
 * rank's own part of the input, which the last folds in.
 */
static uint8_t *fold_buf(const struct coll *c, uint32_t s)
{
	if (s + 2 == c->nranks)
		return c->dst;
	return (c->nranks - 2 - s) % 2 ? c->acc2 : c->acc;
}

/*
 * Step s sends the partial sum of the part belonging to the rank s + 1
 * positions back and folds this rank's input into the one arriving for
 * s + 2 back: after n - 1 steps the part arriving is this rank's own.
 */
static uint16_t reduce_scatter(struct coll *c)
{
	struct step st = {
		.out_n = c->count, .in_n = c->count, .reduce = true,
	};
	uint16_t status;

	for (; c->s + 1 < c->nranks; c->s++) {
		st.out = c->s ? fold_buf(c, c->s - 1) :
			 part(c, c->src, rank_at(c, nnp_fw_coll_behind(c, 1)));
		st.in = fold_buf(c, c->s);
		st.in_lent_before = c->s > 1 && st.in == fold_buf(c, c->s - 2);
		st.with = part(c, c->src, rank_at(c, nnp_fw_coll_behind(c, c->s + 2)));
		status = ring_step(c, &st);
		if (status)
			return status;
	}
	return NNP_STATUS_SUCCESS;
}

/* Ring positions from the root's to this chip's, forwards. */
static uint32_t hops_from_root(const struct coll *c)
{
	uint32_t root_pos = c->root, p;

	for (p = 0; c->order && p < c->nranks; p++)
		if (c->order[p] == c->root)
			root_pos = p;
	return (c->pos + c->nranks - root_pos) % c->nranks;
}

/* Broadcast: each chunk received is passed on from where it landed. */
static uint16_t broadcast(struct coll *c)
{
	uint32_t hops = hops_from_root(c);
	uint64_t chunk = c->chunk, n;
	uint16_t st;

	for (; c->off < c->count; c->off += chunk, c->half = false) {
		uint8_t *at = c->dst + c->off * c->es;

		n = min_n(c->count - c->off, chunk);
		if (hops && !c->half) {
			st = recv_chunk(c, &(struct nnp_fw_rx_into){ .buf = at }, n);
			if (st)
				return st;
		}
		c->half = true;
		if (hops + 1 < c->nranks) {
			st = send_chunk(c, at, n, c->link.t_ns);
			if (st)
				return st;
		}
	}
	return NNP_STATUS_SUCCESS;
}
/*
 * Reduce: a chain round the ring that ends at the root. The first rank
 * after the root sends its input; each next one folds its own into what
 * arrives and passes the sum on (from a scratch buffer, lent); the root
 * folds its own into its output. Every rank but the root sends the
 * buffer once, so a link carries it once, and the chunks pipeline.
 */
static uint16_t reduce_chain(struct coll *c)
{
	uint32_t hops = hops_from_root(c);
	uint64_t chunk = c->chunk, n;
	uint16_t st;

	for (; c->off < c->count; c->off += chunk, c->half = false) {
		uint8_t *in = c->src + c->off * c->es;
		uint8_t *at = (hops ? c->acc : c->dst) + c->off * c->es;

		n = min_n(c->count - c->off, chunk);
		if (hops != 1 && !c->half) {
			st = recv_chunk(c, &(struct nnp_fw_rx_into){
				.buf = at, .with = in, .reduce = true,
				.dtype = c->dtype, .op = c->op,
			}, n);
			if (st)
				return st;
		}
		c->half = true;
		if (hops) {
			st = send_chunk(c, hops == 1 ? in : at, n, c->link.t_ns);
			if (st)
				return st;
		}
	}
	return NNP_STATUS_SUCCESS;
}

/* Bytes the collective reads from src and writes to dst. */
static bool coll_sizes(const struct coll *c, uint64_t *src, uint64_t *dst)
{
	uint64_t n = c->nranks;

	if (c->count > UINT64_MAX / c->es / n)
		return false;
	*src = *dst = c->count * c->es;
	if (c->opcode == NNP_CMD_ALLGATHER)
		*dst *= n;
	else if (c->opcode == NNP_CMD_REDUCE_SCATTER)
		*src *= n;
	return true;
}

/* Resolve the command's memory: device memory only, never the host's. */
static uint16_t coll_memory(struct coll *c, uint32_t ctx,
			    const struct nnp_hw_queue_cmd *cmd)
{
	bool reads = c->opcode != NNP_CMD_BROADCAST || c->rank == c->root;
	bool writes = c->opcode != NNP_CMD_REDUCE || c->rank == c->root;
	struct nnp_fw_span src, dst;
	uint64_t src_len, dst_len;
	uint16_t st;

	if (!coll_sizes(c, &src_len, &dst_len))
		return NNP_STATUS_OUT_OF_BOUNDS;
	/*
	 * Only the root reads a broadcast's source, or writes a reduce's
	 * output: the others name none.
	 */
	if ((!reads && (cmd->src_key || cmd->src_off)) ||
	    (!writes && (cmd->dst_key || cmd->dst_off)))
		return NNP_STATUS_INVALID_FIELD;
	if (writes) {
		st = nnp_fw_key_resolve(c->fw, ctx, cmd->dst_key, cmd->dst_off,
					dst_len, NNP_KEY_WRITE, &dst);
		if (!st && dst.type != NNP_KEY_TYPE_DEVICE)
			st = NNP_STATUS_INVALID_FIELD;
		if (st)
			return st;
		c->dst = (uint8_t *)c->fw->cfg.mem + dst.dev_base + dst.start;
	}
	if (!reads)
		return NNP_STATUS_SUCCESS;
	st = nnp_fw_key_resolve(c->fw, ctx, cmd->src_key, cmd->src_off,
				src_len, NNP_KEY_READ, &src);
	if (!st && src.type != NNP_KEY_TYPE_DEVICE)
		st = NNP_STATUS_INVALID_FIELD;
	if (!st)
		c->src = (uint8_t *)c->fw->cfg.mem + src.dev_base + src.start;
	return st;
}

/* Copy the communicator @cmd names and take the collective's number. */
static uint16_t coll_begin(struct nnp_fw *fw, uint32_t ctx,
			   const struct nnp_hw_queue_cmd *cmd, struct coll *c)
{
	uint32_t comm = NNP_COLL_COMM(cmd->value);
	struct nnp_fw_comm *m;
	uint16_t st = NNP_STATUS_SUCCESS;

	*c = (struct coll){
		.fw = fw, .opcode = cmd->opcode, .count = cmd->len, .comm = comm,
		.dtype = NNP_COLL_DTYPE(cmd->value),
		.op = NNP_COLL_OP(cmd->value), .root = NNP_COLL_ROOT(cmd->value),
		.algo = NNP_FW_ALGO_RING,
		.fuse = cmd->flags & NNP_CMD_FLAG_FUSE,
	};
	c->es = nnp_fw_dtype_size(c->dtype);
	if ((c->opcode != NNP_CMD_BROADCAST && c->opcode != NNP_CMD_REDUCE &&
	     c->root) ||
	    ((c->opcode == NNP_CMD_BROADCAST || c->opcode == NNP_CMD_ALLGATHER) &&
	     c->op))
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	m = nnp_fw_comm_of_locked(fw, ctx, comm);
	if (!m) {
		st = nnp_fw_comm_missing_locked(fw, ctx, comm);
	} else if (m->error) {
		/* Failed on some rank: it is made again before further use. */
		st = NNP_STATUS_ABORTED;
	} else if (c->root >= m->nranks) {
		st = NNP_STATUS_INVALID_FIELD;
	} else {
		c->nranks = m->nranks;
		c->pos = m->pos;
		c->rank = m->rank;
		c->send_port = m->send_port;
		c->recv_port = m->recv_port;
		c->epoch = m->epoch;
		c->link.call = (struct nnp_fw_call){
			.opcode = c->opcode, .dtype = c->dtype, .op = c->op,
			.root = c->root, .rank = m->rank, .count = c->count,
		};
		c->link.timeout_ns = m->timeout_ns;
		c->link.comm = comm;
		c->link.ports = nnp_fw_comm_ports(m);
		c->topo = m->topo;
		c->algo = fw->algo->pick(&m->topo, c->opcode, c->count,
					   m->nranks);
		c->seq = nnp_fw_seq(m->seq, false);
		c->purge_below = c->seq;
		m->seq += fw->algo->seqs(c->algo);
		c->link.call_no = ++m->calls_started;
		c->link.aborted = nnp_fw_comm_call_torn(m, c->link.call_no);
		c->link.bytes = c->count * c->es;
		if (c->op == NNP_OP_AVG)
			c->avg_div = m->nranks;
		if (m->order) {
			c->order = malloc(m->nranks * sizeof(*m->order));
			if (c->order)
				memcpy(c->order, m->order,
				       m->nranks * sizeof(*m->order));
			else
				st = NNP_STATUS_NO_RESOURCES;
		}
	}
	mtx_unlock(&fw->lock);
	return st;
}

static bool overlap(const uint8_t *a, uint64_t a_len, const uint8_t *b,
		    uint64_t b_len)
{
	return a < b + b_len && b < a + a_len;
}

static uint16_t coll_ring(struct coll *c)
{
	switch (c->opcode) {
	case NNP_CMD_ALLREDUCE:
		return nnp_fw_coll_allreduce(c);
	case NNP_CMD_BROADCAST:
		return broadcast(c);
	case NNP_CMD_ALLGATHER:
		return allgather(c);
	case NNP_CMD_REDUCE:
		return reduce_chain(c);
	}
	return reduce_scatter(c);
}

/*
 * Elements per chunk: CHUNKS_PER_STEP to a ring step at least, within
 * chunk_min (NNP_FW_CHUNK_BYTES) .. chunk_max (CHUNK_MAX) bytes, from the
 * command alone so that every rank cuts alike.
 */
uint64_t nnp_fw_coll_chunk(const struct coll *c)
{
	uint64_t step = c->count * c->es;
	uint64_t bytes = c->chunk_min ? c->chunk_min : NNP_FW_CHUNK_BYTES;
	uint64_t max = c->chunk_max ? c->chunk_max : CHUNK_MAX;

	if (c->opcode == NNP_CMD_ALLREDUCE)
		step /= c->nranks;
	while (bytes < max && bytes * CHUNKS_PER_STEP < step)
		bytes *= 2;
	return bytes / c->es;
}

/* @c's communicator, with fw->lock held; NULL if it is gone. */
static struct nnp_fw_comm *coll_comm_locked(const struct coll *c)
{
	struct nnp_fw_comm *m = &c->fw->comms[c->comm];

	return m->ctx && m->epoch == c->epoch ? m : NULL;
}

/*
 * From here on the chunks peers lend with this collective's labels are
 * checked against its call as they come, read or not (fw_rx.c), and so
 * are those that came before it started: SUCCESS, or MISMATCH, naming a
 * peer that called it otherwise (nothing is checked while
 * nnp_fw_set_call_check() has it off); or the status a peer that left
 * tore it down with (nnp_fw_op_torn()). Watched from its first step on,
 * when its queue (or its GROUP's) holds it: the communicator's failure
 * that a chunk arriving later makes finds it there, and ends it. Until
 * it ends: the communicator hearing of that takes it off
 * (nnp_fw_comm_ended()).
 */
static uint16_t coll_watch(struct coll *c)
{
	struct nnp_fw_comm *m;
	uint16_t st;

	mtx_lock(&c->fw->lock);
	/* First, under the same lock: whether a peer that left tore it down. */
	st = c->link.aborted;
	if (!st && nnp_fw_calls_checked(c->fw)) {
		c->link.seq = nnp_fw_fuse_first_seq(c);
		c->link.seqs = c->seq - c->link.seq +
			       c->fw->algo->seqs(c->algo);
		m = coll_comm_locked(c);
		if (m && nnp_fw_icl_calls_add_locked(c->fw, m, &c->link,
						     c->recv_port)) {
			c->link.detail = c->link.mismatch;
			st = NNP_STATUS_MISMATCH;
		}
	}
	mtx_unlock(&c->fw->lock);
	return st;
}

/*
 * @st, the collective's end: an ABORTED that came of a mismatch found as
 * a chunk arrived (its communicator failed for it) is the MISMATCH.
 */
static uint16_t coll_mismatched(struct coll *c, uint16_t st)
{
	if (st != NNP_STATUS_ABORTED || !c->link.seqs)
		return st;
	mtx_lock(&c->fw->lock);
	if (c->link.mismatch) {
		c->link.detail = c->link.mismatch;
		st = NNP_STATUS_MISMATCH;
	}
	mtx_unlock(&c->fw->lock);
	return st;
}

void nnp_fw_set_call_check(struct nnp_fw *fw, bool on)
{
	atomic_store_explicit(&fw->no_call_check, !on, memory_order_relaxed);
}

/* Before the ring: the local part, and the buffers the ring needs. */
static uint16_t coll_start(struct coll *c)
{
	uint64_t bytes = c->count * c->es;
	uint8_t *own;
	uint16_t st;

	if (c->fused) {
		st = nnp_fw_fuse_gather(c);
		if (st)
			return st;
	}
	own = c->dst;

	/* This rank's own input goes straight to its place in the output. */
	if (c->opcode == NNP_CMD_ALLGATHER)
		own = part(c, c->dst, c->rank);
	/* Reduce-scatter's and reduce's reach it only through the ring. */
	if ((c->opcode == NNP_CMD_REDUCE_SCATTER ||
	     c->opcode == NNP_CMD_REDUCE) && c->nranks > 1)
		own = NULL;
	/* So does allreduce's, but for one that overlaps the output. */
	c->fold_src = c->opcode == NNP_CMD_ALLREDUCE && c->nranks > 1 &&
		      c->src && !overlap(c->src, bytes, c->dst, bytes);
	if (c->fold_src)
		own = NULL;
	if (own && c->src && c->src != own && bytes) {
		if (moves_data(c))
			memmove(own, c->src, bytes);
		c->local += bytes;
		nnp_fw_clock_hbm(c->fw, &c->link, 2 * bytes);
	}
	if (c->nranks == 1)
		return NNP_STATUS_SUCCESS;
	/* A peer that left: it ends before it sends anything. */
	if (!bytes)
		return nnp_fw_op_torn(c->fw, &c->link);
	nnp_fw_icl_purge(c->fw, c->recv_port, c->epoch, c->purge_below);
	st = coll_watch(c);
	if (st)
		return st;
	c->chunk = nnp_fw_coll_chunk(c);
	if (c->opcode != NNP_CMD_BROADCAST && c->opcode != NNP_CMD_REDUCE &&
	    nnp_fw_coll_ready_init(c))
		return NNP_STATUS_NO_RESOURCES;
	c->acc = c->dst;
	/* Reduce's ranks on the way fold into scratch: they name no output. */
	if (c->opcode == NNP_CMD_REDUCE && !c->dst)
		c->acc = nnp_fw_scratch_take(c->fw, bytes);
	/* In place, what reduce-scatter folds before the last step: scratch. */
	if (c->opcode == NNP_CMD_REDUCE_SCATTER && c->nranks > 3 &&
	    overlap(c->dst, bytes, c->src, bytes * c->nranks))
		c->acc = nnp_fw_scratch_take(c->fw, bytes);
	if (c->opcode == NNP_CMD_REDUCE_SCATTER && c->nranks > 2) {
		c->acc2 = nnp_fw_scratch_take(c->fw, bytes);
		if (!c->acc2)
			return NNP_STATUS_NO_RESOURCES;
	}
	return c->acc ? NNP_FW_PARKED : NNP_STATUS_NO_RESOURCES;
}

static uint16_t coll_run(struct nnp_fw *fw, struct nnp_fw_op *op)
{
	struct coll *c = (struct coll *)op;
	uint64_t bytes = c->count * c->es;
	uint16_t st;

	if (!c->started) {
		c->started = true;
		st = coll_start(c);
		/* PARKED here: the ring is still to run. */
		if (st != NNP_FW_PARKED)
			return st;
		if (c->algo != NNP_FW_ALGO_RING) {
			st = fw->algo->start(c);
			if (st)
				return st;
		}
	}
	if (c->algo != NNP_FW_ALGO_RING) {
		st = fw->algo->step(c);
		if (!st && c->fused)
			nnp_fw_fuse_scatter(c);
		return st;
	}
	st = coll_ring(c);
	/* What follows writes over lent memory; so may the next command. */
	if (!st)
		st = nnp_fw_coll_lent_back(c, c->link.lent);
	if (st)
		return st;
	if (c->fused)
		nnp_fw_fuse_scatter(c);
	if ((c->opcode == NNP_CMD_REDUCE_SCATTER ||
	     (c->opcode == NNP_CMD_REDUCE && c->dst)) &&
	    c->op == NNP_OP_AVG && c->nranks > 1) {
		if (moves_data(c))
			nnp_fw_divide(c->dtype, c->dst, c->count, c->nranks);
		nnp_fw_clock_hbm(fw, op, 2 * bytes);
	}
	return NNP_STATUS_SUCCESS;
}

static uint16_t coll_step(struct nnp_fw *fw, struct nnp_fw_op *op)
{
	return coll_mismatched((struct coll *)op, coll_run(fw, op));
}

static const char *coll_name(unsigned int opcode)
{
	switch (opcode) {
	case NNP_CMD_BROADCAST:
		return "broadcast";
	case NNP_CMD_REDUCE:
		return "reduce";
	case NNP_CMD_ALLGATHER:
		return "allgather";
	case NNP_CMD_REDUCE_SCATTER:
		return "reduce-scatter";
	}
	return "allreduce";
}

static void coll_end(struct nnp_fw *fw, struct nnp_fw_op *op, uint16_t st)
{
	struct coll *c = (struct coll *)op;
	bool tell;

	if (st && st != NNP_STATUS_ABORTED)
		nnp_fw_op_failed(fw, st, "%s on comm %u failed: status 0x%x",
				 coll_name(c->opcode), c->comm, st);
	/* The next chip must not read this one's memory any more. */
	if (c->nranks > 1)
		nnp_fw_icl_reclaim(fw, op, c->send_port);
	/* A failure new to the communicator goes on, so the whole ring stops. */
	tell = c->nranks &&
	       fw->engine_hooks->comm_ended(fw, c->comm, c->epoch, op, st) &&
	       c->nranks > 1;
	if (c->algo != NNP_FW_ALGO_RING)
		fw->algo->end(c, tell);
	if (tell)
		nnp_fw_icl_send_aborts(fw, c->link.ports, c->epoch, c->seq);
	nnp_fw_count_local(fw, c->local);
	nnp_fw_fuse_end(c);
	if (c->acc != c->dst)
		nnp_fw_scratch_give(fw, c->acc);
	nnp_fw_scratch_give(fw, c->acc2);
	free(c->ready);
	free(c->order);
	free(c);
}

void nnp_fw_coll_grouped(struct nnp_fw_op *op, const struct nnp_fw_op *first)
{
	((struct coll *)op)->purge_below = ((const struct coll *)first)->seq;
}

uint16_t nnp_fw_collective(struct nnp_fw *fw, uint32_t ctx,
			   const struct nnp_hw_queue_cmd *cmd,
			   struct nnp_fw_op **op)
{
	struct coll *c = malloc(sizeof(*c));
	uint16_t st;

	if (!c)
		return NNP_STATUS_NO_RESOURCES;
	st = coll_begin(fw, ctx, cmd, c);
	if (!st)
		st = coll_memory(c, ctx, cmd);
	c->link.step = coll_step;
	c->link.end = coll_end;
	if (st) {
		coll_end(fw, &c->link, st);
		return st;
	}
	c->link.keys[0] = cmd->src_key;
	c->link.keys[1] = cmd->dst_key;
	*op = &c->link;
	return NNP_STATUS_SUCCESS;
}
