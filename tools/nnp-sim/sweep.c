// SPDX-License-Identifier: MIT
/*
 * nnp-sim's sweep (sweep.h). Every collective takes floats, rank r's
 * input element i being (i + r) mod 5, exact in float whatever order the
 * sum takes. The allreduce runs in place at offset 0, as nnp-sim always
 * ran it; the others read at 0 and write at the buffer's second half.
 * The root is rank 0; the ranks that are not name no source (broadcast,
 * scatter) or no destination (reduce, gather), as the device asks.
 */
#include <stdio.h>
#include <string.h>

#include "sweep.h"

static const char *const names[SWEEP_COUNT] = {
	"allreduce", "broadcast", "allgather", "reduce_scatter", "reduce",
	"alltoall", "gather", "scatter",
};

static const uint8_t opcodes[SWEEP_COUNT] = {
	NNP_CMD_ALLREDUCE, NNP_CMD_BROADCAST, NNP_CMD_ALLGATHER,
	NNP_CMD_REDUCE_SCATTER, NNP_CMD_REDUCE, NNP_CMD_ALLTOALL,
	NNP_CMD_GATHER, NNP_CMD_SCATTER,
};

int sweep_coll_parse(const char *name, enum sweep_coll *c)
{
	unsigned int k;

	for (k = 0; k < SWEEP_COUNT; k++)
		if (!strcmp(name, names[k])) {
			*c = (enum sweep_coll)k;
			return 0;
		}
	return -1;
}

const char *sweep_coll_name(enum sweep_coll c)
{
	return names[c];
}

double sweep_bus(enum sweep_coll c, unsigned int n)
{
	if (c == SWEEP_BROADCAST || c == SWEEP_REDUCE)
		return 1;
	return (double)(n - 1) / n * (c == SWEEP_ALLREDUCE ? 2 : 1);
}

uint64_t sweep_buf_bytes(enum sweep_coll c, uint64_t max_bytes)
{
	return c == SWEEP_ALLREDUCE ? max_bytes : 2 * max_bytes;
}

/* The collectives whose size holds a part for each rank. */
static bool in_parts(enum sweep_coll c)
{
	return c == SWEEP_ALLGATHER || c == SWEEP_REDUCE_SCATTER ||
	       c == SWEEP_ALLTOALL || c == SWEEP_GATHER || c == SWEEP_SCATTER;
}

static float input(unsigned int rank, uint64_t i)
{
	return (float)((i + rank) % 5);
}

static float sum(unsigned int n, uint64_t i)
{
	float want = 0;
	unsigned int r;

	for (r = 0; r < n; r++)
		want += input(r, i);
	return want;
}

/* Element @i of rank @me's output, of @len a part; a part of the input. */
static float want_at(enum sweep_coll c, unsigned int n, unsigned int me,
		     uint64_t len, uint64_t i)
{
	switch (c) {
	case SWEEP_BROADCAST:
		return input(0, i);
	case SWEEP_ALLGATHER:
	case SWEEP_GATHER:
		return input((unsigned int)(i / len), i % len);
	case SWEEP_REDUCE_SCATTER:
		return sum(n, me * len + i);
	case SWEEP_ALLTOALL:
		return input((unsigned int)(i / len), me * len + i % len);
	case SWEEP_SCATTER:
		return input(0, me * len + i);
	default:
		return sum(n, i);
	}
}

/* Elements of rank @rank's input and output; 0 where it names none. */
static void extents(enum sweep_coll c, unsigned int n, unsigned int rank,
		    uint64_t len, uint64_t *in, uint64_t *out)
{
	bool root = rank == 0;

	*in = c == SWEEP_REDUCE_SCATTER || c == SWEEP_ALLTOALL ||
	      (c == SWEEP_SCATTER && root) ? n * len : len;
	*out = c == SWEEP_ALLGATHER || c == SWEEP_ALLTOALL ||
	       (c == SWEEP_GATHER && root) ? n * len : len;
	if ((c == SWEEP_BROADCAST || c == SWEEP_SCATTER) && !root)
		*in = 0;
	if ((c == SWEEP_REDUCE || c == SWEEP_GATHER) && !root)
		*out = 0;
}

static void fill(struct sim *s, enum sweep_coll c, uint64_t len)
{
	unsigned int k;
	uint64_t i, in, out;

	for (k = 0; k < s->n; k++) {
		float *x = (float *)s->chips[k].mem;

		extents(c, s->n, s->rank[k], len, &in, &out);
		for (i = 0; i < in; i++)
			x[i] = input(s->rank[k], i);
	}
}

/* Every rank's output, bit for bit; else -1, the first wrong one said. */
static int check(struct sim *s, enum sweep_coll c, uint64_t len, uint64_t dst)
{
	unsigned int k;
	uint64_t i, in, out;

	for (k = 0; k < s->n; k++) {
		const float *x = (const float *)(s->chips[k].mem + dst);
		unsigned int me = s->rank[k];

		extents(c, s->n, me, len, &in, &out);
		for (i = 0; i < out; i++) {
			float want = want_at(c, s->n, me, len, i);

			if (x[i] != want) {
				fprintf(stderr, "nnp-sim: %s: rank %u element %llu: %g, not %g\n",
					names[c], me, (unsigned long long)i, x[i], want);
				return -1;
			}
		}
	}
	return 0;
}

int sweep_run(struct sim *s, enum sweep_coll c, uint64_t bytes, uint64_t *ns)
{
	uint64_t len = bytes / 4 / (in_parts(c) ? s->n : 1);
	uint64_t dst = c == SWEEP_ALLREDUCE ? 0 : s->buf_bytes / 2, before;

	if (!len)
		return 1;
	if (sim_barrier(s))
		return -1;
	before = sim_latest_ns(s);
	if (!s->timing_only)
		fill(s, c, len);
	if (sim_collective(s, opcodes[c], len,
			   NNP_COLL_VALUE(NNP_DTYPE_F32,
					  c == SWEEP_ALLREDUCE || c == SWEEP_REDUCE ||
					  c == SWEEP_REDUCE_SCATTER ? NNP_OP_SUM : 0,
					  SIM_COMM, 0), 0, dst))
		return -1;
	*ns = sim_latest_ns(s) - before;
	return s->timing_only ? 0 : check(s, c, len, dst);
}
