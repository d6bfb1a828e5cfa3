// SPDX-License-Identifier: MIT
/*
 * Firmware simulator collectives around the communicator's ring, entirely
 * in device memory: allreduce, broadcast, allgather and reduce-scatter.
 *
 * Every ring step sends one segment to the next position while receiving
 * one from the previous, cut into chunks so that sending and reducing
 * overlap across chips; received chunks are reduced into device memory as
 * they arrive. Allreduce is a reduce-scatter then an allgather: each rank
 * sends 2(n-1) of n segments. Broadcast is a pipelined chain from the root.
 * A rank whose part fails tells the next rank, which fails and passes it
 * on, so every waiting rank ends within the collective timeout. After a
 * failure the ranks no longer agree on where they are: the communicator is
 * made again, with a new epoch, before it is used again (as NCCL's abort).
 */
#include <stdlib.h>
#include <string.h>

#include "fw_internal.h"
#include "fw_reduce.h"

#define CHUNK_BYTES (64u * 1024)

struct coll {
	struct nnp_fw *fw;
	uint32_t nranks;
	uint32_t pos;		/* this chip's ring position */
	uint32_t rank;
	uint32_t send_port, recv_port;
	uint32_t *order;	/* rank at each position (a copy), or NULL */
	uint64_t tag;		/* epoch << 32 | sequence */
	unsigned int opcode, dtype, op;
	uint32_t root;
	size_t es;
	uint64_t count;
	uint8_t *src, *dst;	/* device memory; src NULL if unused */
	uint8_t *tmp;		/* one received chunk */
};

/* The position @back steps before ours (@back < 2 * nranks). */
static uint32_t behind(const struct coll *c, uint32_t back)
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
};

static uint16_t ring_step(struct coll *c, const struct step *s)
{
	uint64_t chunk = CHUNK_BYTES / c->es;
	uint64_t most = s->out_n > s->in_n ? s->out_n : s->in_n, off, n;
	uint16_t st;

	for (off = 0; off < most; off += chunk) {
		if (off < s->out_n) {
			n = s->out_n - off < chunk ? s->out_n - off : chunk;
			st = nnp_fw_icl_send(c->fw, c->send_port, c->tag, false,
					     s->out + off * c->es, n * c->es);
			if (st)
				return st;
		}
		if (off < s->in_n) {
			uint8_t *at = s->in + off * c->es;

			n = s->in_n - off < chunk ? s->in_n - off : chunk;
			st = nnp_fw_icl_recv(c->fw, c->recv_port, c->tag,
					     s->reduce ? c->tmp : at, n * c->es);
			if (st)
				return st;
			if (s->with)
				memcpy(at, s->with + off * c->es, n * c->es);
			if (s->reduce)
				nnp_fw_reduce(c->dtype, c->op, at, c->tmp, n);
		}
	}
	return NNP_STATUS_SUCCESS;
}

/* Allreduce splits the buffer into one segment per ring position. */
static uint8_t *seg(const struct coll *c, uint32_t k, uint64_t *n)
{
	uint64_t start = (unsigned __int128)c->count * k / c->nranks;
	uint64_t end = (unsigned __int128)c->count * (k + 1) / c->nranks;

	*n = end - start;
	return c->dst + start * c->es;
}

static uint16_t allreduce(struct coll *c)
{
	uint32_t n = c->nranks, s;
	struct step st = { .reduce = true };
	uint16_t status = NNP_STATUS_SUCCESS;
	uint64_t own_n;
	uint8_t *own;

	for (s = 0; s + 1 < n && !status; s++) {
		st.out = seg(c, behind(c, s), &st.out_n);
		st.in = seg(c, behind(c, s + 1), &st.in_n);
		status = ring_step(c, &st);
	}
	if (status)
		return status;
	/* This rank now holds the full reduction of one segment. */
	own = seg(c, behind(c, n - 1), &own_n);
	if (c->op == NNP_OP_AVG)
		nnp_fw_divide(c->dtype, own, own_n, n);
	st.reduce = false;
	for (s = 0; s + 1 < n && !status; s++) {
		st.out = seg(c, behind(c, s + n - 1), &st.out_n);
		st.in = seg(c, behind(c, s), &st.in_n);
		status = ring_step(c, &st);
	}
	return status;
}

/* Rank @r's part of a per-rank layout at @base. */
static uint8_t *part(const struct coll *c, uint8_t *base, uint32_t r)
{
	return base + (uint64_t)r * c->count * c->es;
}

static uint16_t allgather(struct coll *c)
{
	struct step st = { .out_n = c->count, .in_n = c->count };
	uint16_t status = NNP_STATUS_SUCCESS;
	uint32_t s;

	for (s = 0; s + 1 < c->nranks && !status; s++) {
		st.out = part(c, c->dst, rank_at(c, behind(c, s)));
		st.in = part(c, c->dst, rank_at(c, behind(c, s + 1)));
		status = ring_step(c, &st);
	}
	return status;
}

/*
 * Step s sends the partial sum of the part belonging to the rank s + 1
 * positions back and folds this rank's input into the one arriving for
 * s + 2 back: after n - 1 steps the part arriving is this rank's own.
 */
static uint16_t reduce_scatter(struct coll *c, uint8_t *acc)
{
	struct step st = {
		.out_n = c->count, .in = acc, .in_n = c->count, .reduce = true,
	};
	uint16_t status = NNP_STATUS_SUCCESS;
	uint32_t s;

	for (s = 0; s + 1 < c->nranks && !status; s++) {
		st.out = s ? acc : part(c, c->src, rank_at(c, behind(c, 1)));
		st.with = part(c, c->src, rank_at(c, behind(c, s + 2)));
		status = ring_step(c, &st);
	}
	if (!status && c->op == NNP_OP_AVG)
		nnp_fw_divide(c->dtype, acc, c->count, c->nranks);
	return status;
}

static uint16_t broadcast(struct coll *c)
{
	uint64_t chunk = CHUNK_BYTES / c->es, off, n;
	uint32_t root_pos = c->root, hops, p;
	uint16_t st;

	for (p = 0; c->order && p < c->nranks; p++)
		if (c->order[p] == c->root)
			root_pos = p;
	hops = (c->pos + c->nranks - root_pos) % c->nranks;
	for (off = 0; off < c->count; off += chunk) {
		n = c->count - off < chunk ? c->count - off : chunk;
		if (hops) {
			st = nnp_fw_icl_recv(c->fw, c->recv_port, c->tag,
					     c->dst + off * c->es, n * c->es);
			if (st)
				return st;
		}
		if (hops + 1 < c->nranks) {
			st = nnp_fw_icl_send(c->fw, c->send_port, c->tag, false,
					     c->dst + off * c->es, n * c->es);
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
	struct nnp_fw_span src, dst;
	uint64_t src_len, dst_len;
	uint16_t st;

	if (!coll_sizes(c, &src_len, &dst_len))
		return NNP_STATUS_OUT_OF_BOUNDS;
	/* Only the root reads a broadcast's source: the others name none. */
	if (!reads && (cmd->src_key || cmd->src_off))
		return NNP_STATUS_INVALID_FIELD;
	st = nnp_fw_key_resolve(c->fw, ctx, cmd->dst_key, cmd->dst_off,
				dst_len, NNP_KEY_WRITE, &dst);
	if (!st && dst.type != NNP_KEY_TYPE_DEVICE)
		st = NNP_STATUS_INVALID_FIELD;
	if (st)
		return st;
	c->dst = (uint8_t *)c->fw->cfg.mem + dst.dev_base + dst.start;
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
	const struct nnp_fw_comm *m = &fw->comms[comm];
	uint16_t st = NNP_STATUS_SUCCESS;

	*c = (struct coll){
		.fw = fw, .opcode = cmd->opcode, .count = cmd->len,
		.dtype = NNP_COLL_DTYPE(cmd->value),
		.op = NNP_COLL_OP(cmd->value), .root = NNP_COLL_ROOT(cmd->value),
	};
	c->es = nnp_fw_dtype_size(c->dtype);
	if ((c->opcode != NNP_CMD_BROADCAST && c->root) ||
	    ((c->opcode == NNP_CMD_BROADCAST || c->opcode == NNP_CMD_ALLGATHER) &&
	     c->op))
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	if (!comm || comm >= NNP_HW_MAX_COMMS || m->ctx != ctx) {
		st = NNP_STATUS_NOT_FOUND;
	} else if (c->root >= m->nranks) {
		st = NNP_STATUS_INVALID_FIELD;
	} else {
		c->nranks = m->nranks;
		c->pos = m->pos;
		c->rank = m->rank;
		c->send_port = m->send_port;
		c->recv_port = m->recv_port;
		c->tag = nnp_fw_tag(m->epoch, fw->comms[comm].seq++, false);
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

static uint16_t coll_ring(struct coll *c, uint64_t *local)
{
	uint64_t bytes = c->count * c->es;
	uint8_t *acc = c->dst;
	uint16_t st;

	switch (c->opcode) {
	case NNP_CMD_ALLREDUCE:
		return allreduce(c);
	case NNP_CMD_BROADCAST:
		return broadcast(c);
	case NNP_CMD_ALLGATHER:
		return allgather(c);
	}
	/* Reduce-scatter in place folds into a scratch copy of its part. */
	if (overlap(c->dst, bytes, c->src, bytes * c->nranks))
		acc = malloc(bytes);
	if (!acc)
		return NNP_STATUS_NO_RESOURCES;
	st = reduce_scatter(c, acc);
	if (acc != c->dst) {
		if (!st) {
			memcpy(c->dst, acc, bytes);
			*local += bytes;
		}
		free(acc);
	}
	return st;
}

static uint16_t coll_run(struct coll *c, uint64_t *local)
{
	uint64_t bytes = c->count * c->es;
	uint8_t *own = c->dst;
	uint16_t st;

	/* This rank's own input goes straight to its place in the output. */
	if (c->opcode == NNP_CMD_ALLGATHER)
		own = part(c, c->dst, c->rank);
	/* Reduce-scatter's input reaches its output only through the ring. */
	if (c->opcode == NNP_CMD_REDUCE_SCATTER && c->nranks > 1)
		own = NULL;
	if (own && c->src && c->src != own && bytes) {
		memmove(own, c->src, bytes);
		*local += bytes;
	}
	if (c->nranks == 1 || !bytes)
		return NNP_STATUS_SUCCESS;

	nnp_fw_icl_purge(c->fw, c->recv_port, c->tag >> 32, (uint32_t)c->tag);
	c->tmp = malloc(CHUNK_BYTES);
	st = c->tmp ? coll_ring(c, local) : NNP_STATUS_NO_RESOURCES;
	free(c->tmp);
	return st;
}

static const char *coll_name(unsigned int opcode)
{
	switch (opcode) {
	case NNP_CMD_BROADCAST:
		return "broadcast";
	case NNP_CMD_ALLGATHER:
		return "allgather";
	case NNP_CMD_REDUCE_SCATTER:
		return "reduce-scatter";
	}
	return "allreduce";
}

uint16_t nnp_fw_collective(struct nnp_fw *fw, uint32_t ctx,
			   const struct nnp_hw_queue_cmd *cmd, uint64_t *local)
{
	struct coll c;
	uint16_t st;

	st = coll_begin(fw, ctx, cmd, &c);
	if (!st)
		st = coll_memory(&c, ctx, cmd);
	if (!st)
		st = coll_run(&c, local);
	if (st && st != NNP_STATUS_ABORTED)
		nnp_fw_guest_error(fw, "%s on comm %u failed: status 0x%x",
				   coll_name(c.opcode),
				   (unsigned int)NNP_COLL_COMM(cmd->value), st);
	/* Pass the failure on so that the whole ring stops. */
	if (st && c.nranks > 1)
		nnp_fw_icl_send(fw, c.send_port, c.tag, true, NULL, 0);
	free(c.order);
	return st;
}
