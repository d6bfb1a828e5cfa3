// SPDX-License-Identifier: MIT
/* nnp-sim --replay's device times and host timeline: see replay.h. */
#include <stdio.h>
#include <stdlib.h>

#include "replay.h"

unsigned int replay_chips(const struct trace_job *j, const struct trace_op *op,
			  unsigned int n)
{
	return op->nranks == j->nranks ? n : op->nranks;
}

/* The operations whose count is a part of a whole of one per rank. */
static bool in_parts(enum trace_kind kind)
{
	return kind == TRACE_ALLGATHER || kind == TRACE_REDUCE_SCATTER ||
	       kind == TRACE_ALLTOALL || kind == TRACE_GATHER ||
	       kind == TRACE_SCATTER;
}

uint64_t replay_count(const struct trace_op *op, unsigned int chips)
{
	uint64_t whole = op->count * op->nranks;

	if (!in_parts(op->kind))
		return op->count;
	return whole ? (whole + chips - 1) / chips : 0;
}

/*
 * Device memory @op needs on @chips chips: the collectives in place but
 * those of parts (the part after the whole, or the whole after the part;
 * alltoall's whole output after its whole input).
 */
static uint64_t op_bytes(const struct trace_op *op, unsigned int chips)
{
	uint64_t part = replay_count(op, chips) * trace_dtype_size(op->dtype);

	switch (op->kind) {
	case TRACE_ALLTOALL:
		return 2ull * chips * part;
	case TRACE_ALLGATHER:
	case TRACE_REDUCE_SCATTER:
	case TRACE_GATHER:
	case TRACE_SCATTER:
		return (chips + 1ull) * part;
	case TRACE_SEND:
	case TRACE_RECV:
		return op->bytes;
	default:
		return part;
	}
}

/*
 * A message of @bytes from chip 0 to the chip its port 0 leads to (its
 * neighbour on every topology), over that one link; the other chips idle.
 */
static int p2p(struct sim *s, uint64_t bytes)
{
	const struct sim_chip *c = &s->chips[0];

	sim_post(s, 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_SEND, .len = bytes, .src_key = c->key,
		.value = NNP_P2P_VALUE(SIM_COMM, 0),
	});
	sim_post(s, (unsigned int)c->peer[0], (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_RECV, .len = bytes,
		.dst_key = s->chips[c->peer[0]].key,
		.value = NNP_P2P_VALUE(SIM_COMM, c->peer_port[0]),
	});
	return sim_run(s) || s->errors ? -1 : 0;
}

/* @op on the @s->n chips of its fabric. */
static int run_op(struct sim *s, const struct trace_op *op)
{
	uint64_t count = replay_count(op, s->n);
	uint64_t part = count * trace_dtype_size(op->dtype);
	uint64_t value = NNP_COLL_VALUE(op->dtype, op->redop, SIM_COMM, 0);

	switch (op->kind) {
	case TRACE_ALLREDUCE:
		return sim_collective(s, NNP_CMD_ALLREDUCE, count, value, 0, 0);
	case TRACE_BROADCAST:
		return sim_collective(s, NNP_CMD_BROADCAST, count, value, 0, 0);
	case TRACE_ALLGATHER:
		return sim_collective(s, NNP_CMD_ALLGATHER, count, value,
				      s->n * part, 0);
	case TRACE_REDUCE_SCATTER:
		return sim_collective(s, NNP_CMD_REDUCE_SCATTER, count, value,
				      0, s->n * part);
	case TRACE_REDUCE:
		return sim_collective(s, NNP_CMD_REDUCE, count, value, 0, 0);
	case TRACE_ALLTOALL:
		return sim_collective(s, NNP_CMD_ALLTOALL, count, value, 0,
				      s->n * part);
	case TRACE_GATHER:
		return sim_collective(s, NNP_CMD_GATHER, count, value, s->n * part, 0);
	case TRACE_SCATTER:
		return sim_collective(s, NNP_CMD_SCATTER, count, value, 0, s->n * part);
	case TRACE_SEND:
	case TRACE_RECV:
		/* One chip has no neighbour: a message to itself costs nothing. */
		return s->n > 1 ? p2p(s, op->bytes) : 0;
	}
	return -1;
}

/*
 * The operations of @j that run on @chips chips, on a fabric wired as
 * @t, timing-only (nothing is checked: the model is the same), in order
 * after one barrier: each one's time is the latest chip's clock after it
 * less the latest's before it.
 */
static int run_fabric(const struct trace_job *j, const struct topo *t,
		      unsigned int n, unsigned int chips, uint32_t algo,
		      const struct nnp_fw_config *model, uint64_t *ns)
{
	uint64_t buf = SIM_BARRIER_BYTES(chips), before;
	struct sim s;
	size_t k;
	int bad;

	for (k = 0; k < j->nops; k++)
		if (replay_chips(j, &j->ops[k], n) == chips &&
		    op_bytes(&j->ops[k], chips) > buf)
			buf = op_bytes(&j->ops[k], chips);
	bad = sim_create(&s, chips, buf, true, model) || topo_wire(&s, t) ||
	      topo_comm(&s, t) || topo_set_algo(&s, t, algo) || sim_barrier(&s);
	for (k = 0; k < j->nops && !bad; k++) {
		if (replay_chips(j, &j->ops[k], n) != chips)
			continue;
		before = sim_latest_ns(&s);
		bad = run_op(&s, &j->ops[k]);
		ns[k] = sim_latest_ns(&s) - before;
	}
	if (bad)
		fprintf(stderr, "nnp-sim: the replay on %u chips failed\n", chips);
	sim_destroy(&s);
	return bad ? -1 : 0;
}

int replay_device(const struct trace_job *j, const struct topo *t,
		  unsigned int n, uint32_t algo,
		  const struct nnp_fw_config *model, uint64_t *ns)
{
	size_t k, i;

	if (run_fabric(j, t, n, n, algo, model, ns))
		return -1;
	/* Each other size once, at its first operation. */
	for (k = 0; k < j->nops; k++) {
		unsigned int chips = replay_chips(j, &j->ops[k], n);
		struct topo ring;

		for (i = 0; i < k && replay_chips(j, &j->ops[i], n) != chips; i++)
			;
		if (chips == n || i < k)
			continue;
		topo_shape(&ring, TOPO_RING, chips, 0, 0);
		if (run_fabric(j, &ring, n, chips, NNP_FW_ALGO_AUTO, model, ns))
			return -1;
	}
	return 0;
}

enum { EV_ISSUE, EV_WAIT, EV_DONE };

struct event {
	uint64_t at;
	unsigned int type;
	size_t op;
};

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

void replay_host(const struct trace_job *j, const uint64_t *ns, double scale,
		 struct replay_time *r)
{
	struct event *ev = calloc(3 * j->nops + 1, sizeof(*ev));
	double h = 0, dev_free = 0, *end = calloc(j->nops + 1, sizeof(*end));
	unsigned int waiting = 0;
	size_t k;

	*r = (struct replay_time){ 0 };
	if (!ev || !end) {
		fputs("nnp-sim: out of memory\n", stderr);
		exit(1);
	}
	for (k = 0; k < j->nops; k++) {
		ev[3 * k] = (struct event){ j->ops[k].issue_ns, EV_ISSUE, k };
		ev[3 * k + 1] = (struct event){ j->ops[k].wait_ns, EV_WAIT, k };
		ev[3 * k + 2] = (struct event){ j->ops[k].done_ns, EV_DONE, k };
		r->comm += (double)ns[k];
	}
	qsort(ev, 3 * j->nops, sizeof(*ev), by_time);
	for (k = 0; k < 3 * j->nops; k++) {
		const struct event *e = &ev[k];

		/* Time outside every wait was the host's own work. */
		if (k && !waiting) {
			h += (double)(e->at - ev[k - 1].at) * scale;
			r->compute += (double)(e->at - ev[k - 1].at) * scale;
		}
		switch (e->type) {
		case EV_ISSUE:
			end[e->op] = (h > dev_free ? h : dev_free) + (double)ns[e->op];
			dev_free = end[e->op];
			break;
		case EV_WAIT:
			waiting++;
			break;
		case EV_DONE:
			waiting--;
			if (end[e->op] > h) {
				r->exposed += end[e->op] - h;
				h = end[e->op];
			}
			break;
		}
	}
	r->total = h;
	free(ev);
	free(end);
}
