// SPDX-License-Identifier: MIT
/*
 * Collectives across every nnp device of the VM, one process driving all
 * (nnp_comm_init_all), on whatever ring the fabric allows: allreduce for
 * every type, op and count from 0 elements up to 64 MiB, broadcast from
 * every root, allgather and reduce-scatter, in place and out of place,
 * and point-to-point messages between every two ranks, over a link or
 * routed through the chips between, and as many taken from any source;
 * reduce, alltoall, gather and scatter.
 * By default each type and op runs at one of the counts, and each root
 * with one type, chosen by the number of chips so that the fabrics of
 * vm-allreduce between them run different pairs, and the largest
 * allreduce is 64 MiB over the ranks (32 MiB each on 2 chips, 8 MiB on
 * 8); NNP_COLL_MATRIX=full runs every pair and 64 MiB on every rank
 * (make stress).
 * Every case checks each rank's result (exact for integer-valued inputs,
 * within the type's rounding for averages and random inputs), the guard
 * bytes around it, that no payload byte crossed host DMA while the
 * collective ran, and exactly how many bytes went over the links.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnp/nnp.h>

#include "coll_data.h"
#include "device_counters.h"
#include "all_devices.h"
#include "guest_env.h"
#include "kselftest_harness.h"
#include "ring_ranks.h"

#define GUARD_BYTES	4096
#define GUARD		0xa5
#define MAX_COUNT	100003		/* not a multiple of any ring size */
#define TIMEOUT_S	600		/* 8 emulated chips on 2 host cores */

enum kind { ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER, REDUCE };

static const char *const kind_name[] = {
	"allreduce", "broadcast", "allgather", "reduce-scatter", "reduce",
};

struct ccase {
	enum kind kind;
	nnp_dtype_t t;
	nnp_redop_t op;
	size_t count;
	bool in_place;
	int root;
};

/*
 * Where rank @r's input and output sit, in bytes from a buffer's start;
 * @end covers both and a guard after them.
 */
struct place {
	size_t in_off, in_n, out_off, out_n, end;
};

static struct place place_of(const struct ccase *c, int n, int r)
{
	size_t es = dtype_bytes(c->t), part = c->count * es;
	struct place p = { GUARD_BYTES, c->count, GUARD_BYTES, c->count, 0 };

	if (c->kind == ALLGATHER)
		p.out_n *= n;
	if (c->kind == REDUCE_SCATTER)
		p.in_n *= n;
	/* NCCL's in-place layouts: the input is the rank's part of the output. */
	if (c->in_place && c->kind == ALLGATHER)
		p.in_off += r * part;
	if (c->in_place && c->kind == REDUCE_SCATTER)
		p.out_off += r * part;
	p.end = p.out_off + p.out_n * es;
	if (p.in_off + p.in_n * es > p.end)
		p.end = p.in_off + p.in_n * es;
	p.end += GUARD_BYTES;
	return p;
}

static double expected(const struct ccase *c, int n, int r, size_t i)
{
	switch (c->kind) {
	case BROADCAST:
		return input(c->root, i, NNP_SUM);
	case ALLGATHER:
		return input((int)(i / c->count), i % c->count, NNP_SUM);
	default:
		return reduced(c->op, n, (c->kind == REDUCE_SCATTER ? r * c->count : 0) + i);
	}
}

static bool result_ok(const struct ccase *c, int n, int r, size_t i, double got)
{
	if (c->kind == ALLREDUCE || c->kind == REDUCE)
		return reduced_ok(c->t, c->op, n, i, got);
	if (c->kind == REDUCE_SCATTER)
		return reduced_ok(c->t, c->op, n, r * c->count + i, got);
	return got == expected(c, n, r, i);
}

FIXTURE(ring) {
	struct all_devices d;
	size_t cap;
};

FIXTURE_SETUP(ring)
{
	const char *why;

	self->cap = 2 * GUARD_BYTES + (size_t)GUEST_CHIPS * MAX_COUNT * 8;
	why = all_devices_open(&self->d, self->cap);
	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(ring)
{
	all_devices_close(&self->d);
}

static nnp_result_t submit(FIXTURE_DATA(ring) *self, const struct ccase *c, int r)
{
	struct place p = place_of(c, self->d.n, r);
	nnp_mem_t *in = c->in_place ? self->d.b[r] : self->d.a[r], *out = self->d.b[r];

	switch (c->kind) {
	case ALLREDUCE:
		return nnp_allreduce(in, p.in_off, out, p.out_off, c->count, c->t,
				     c->op, self->d.comm[r], self->d.s[r]);
	case BROADCAST:
		return nnp_broadcast(in, p.in_off, out, p.out_off, c->count, c->t,
				     c->root, self->d.comm[r], self->d.s[r]);
	case ALLGATHER:
		return nnp_allgather(in, p.in_off, out, p.out_off, c->count, c->t,
				     self->d.comm[r], self->d.s[r]);
	case REDUCE_SCATTER:
		return nnp_reduce_scatter(in, p.in_off, out, p.out_off, c->count,
					  c->t, c->op, self->d.comm[r], self->d.s[r]);
	case REDUCE:
		return nnp_reduce(in, p.in_off, r == c->root ? out : NULL, p.out_off,
				  c->count, c->t, c->op, c->root, self->d.comm[r],
				  self->d.s[r]);
	}
	return NNP_ERROR_INVALID_ARGUMENT;
}

/* Stage every rank's input (and guards) in device memory by DMA. */
static void stage(struct __test_metadata *_metadata, FIXTURE_DATA(ring) *self,
		  const struct ccase *c)
{
	nnp_redop_t in_op = c->kind == ALLREDUCE || c->kind == REDUCE_SCATTER ||
			    c->kind == REDUCE ? c->op : NNP_SUM;
	int r;

	for (r = 0; r < self->d.n; r++) {
		struct place p = place_of(c, self->d.n, r);
		uint8_t *h;
		size_t i;

		ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(self->d.host[r], (void **)&h));
		memset(h, GUARD, p.end);
		for (i = 0; i < p.in_n; i++)
			put(c->t, h + p.in_off, i, input(r, i, in_op));
		if (c->in_place) {
			ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.b[r], 0,
								self->d.host[r], 0, p.end));
		} else {
			ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.a[r], 0,
								self->d.host[r], 0, p.end));
			ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->d.s[r], self->d.b[r], 0,
								GUARD, p.end));
		}
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
	}
}

/* Bytes rank @r may send: exact, except the allreduce's segment split. */
static void tx_bounds(const struct ccase *c, int n, uint64_t *lo, uint64_t *hi)
{
	uint64_t es = dtype_bytes(c->t), bytes = c->count * es;

	*lo = *hi = (n - 1) * bytes;
	if (n == 1 || !c->count)
		*lo = *hi = 0;
	else if (c->kind == ALLREDUCE)
		allreduce_tx_bounds(c->count, es, n, lo, hi);
	else if (c->kind == BROADCAST || c->kind == REDUCE)
		*lo = 0, *hi = bytes;
}

static void run_case(struct __test_metadata *_metadata, FIXTURE_DATA(ring) *self,
		     const struct ccase *c)
{
	uint64_t dma_before[MAXDEV], tx_before[MAXDEV], total_tx = 0, lo, hi;
	uint64_t bytes = c->count * dtype_bytes(c->t);
	int n = self->d.n, r;

	stage(_metadata, self, c);
	for (r = 0; r < n; r++) {
		dma_before[r] = host_dma_bytes(self->d.dev[r]);
		tx_before[r] = icl_tx(self->d.dev[r]);
	}
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, submit(self, c, r));
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("%s rank %d", kind_name[c->kind], r);
	tx_bounds(c, n, &lo, &hi);
	for (r = 0; r < n; r++) {
		uint64_t tx = icl_tx(self->d.dev[r]) - tx_before[r];

		/* Device to device: nothing crossed the host. */
		EXPECT_EQ(dma_before[r], host_dma_bytes(self->d.dev[r]));
		EXPECT_GE(tx, lo);
		EXPECT_LE(tx, hi);
		total_tx += tx;
	}
	/* Any allreduce sends 2(n-1)/n of the buffer from each rank, in all. */
	if (c->kind == ALLREDUCE)
		EXPECT_EQ(2 * (uint64_t)(n - 1) * bytes, total_tx);
	/* A chain: every rank but its last sends the buffer once. */
	if (c->kind == BROADCAST || c->kind == REDUCE)
		EXPECT_EQ((uint64_t)(n - 1) * bytes, total_tx);

	for (r = 0; r < n; r++) {
		struct place p = place_of(c, n, r);
		size_t es = dtype_bytes(c->t), i, bad = 0;
		/* A reduce writes the root's output only. */
		bool writes = c->kind != REDUCE || r == c->root;
		uint8_t *h;

		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
							self->d.b[r], 0, p.end));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		nnp_mem_map(self->d.host[r], (void **)&h);
		for (i = 0; i < p.out_n && writes; i++) {
			double got = get(c->t, h + p.out_off, i);

			if (!result_ok(c, n, r, i, got) && bad++ < 3)
				TH_LOG("%s type %d op %d count %zu%s rank %d element %zu: got %g want %g",
				       kind_name[c->kind], c->t, c->op, c->count,
				       c->in_place ? " in place" : "", r, i, got,
				       expected(c, n, r, i));
		}
		EXPECT_EQ(0, bad);
		/* Guards: everything outside the input and output regions. */
		for (i = 0; i < p.end; i++) {
			bool in_out = writes && i >= p.out_off &&
				      i < p.out_off + p.out_n * es;
			bool in_in = c->in_place && i >= p.in_off && i < p.in_off + p.in_n * es;

			if (!in_out && !in_in && h[i] != GUARD) {
				TH_LOG("%s rank %d: guard byte %zu is 0x%02x", kind_name[c->kind],
				       r, i, h[i]);
				bad++;
				break;
			}
		}
		EXPECT_EQ(0, bad);
	}
}

/* Whether to run every type, op, count and root, not a sample. */
static bool full_matrix(void)
{
	const char *m = getenv("NNP_COLL_MATRIX");

	return m && !strcmp(m, "full");
}

/*
 * Whether choice @k of @n_choices is the one a sampled run takes for the
 * case numbered @pair (a type and op, say) on @chips chips.
 */
static bool sampled(unsigned int k, unsigned int n_choices, unsigned int pair,
		    int chips)
{
	return full_matrix() || k == (pair + (unsigned int)chips) % n_choices;
}

static const nnp_dtype_t all_types[] = {
	NNP_FLOAT32, NNP_FLOAT16, NNP_BFLOAT16, NNP_INT32, NNP_FLOAT64, NNP_INT64,
};
#define NTYPES (sizeof(all_types) / sizeof(all_types[0]))

TEST_F_TIMEOUT(ring, allreduce_every_type_op_and_count, TIMEOUT_S)
{
	const size_t counts[] = { 0, 1, 7, 1003, MAX_COUNT };
	const unsigned int ncounts = sizeof(counts) / sizeof(counts[0]);
	unsigned int t, k;
	int op;

	for (k = 0; k < ncounts; k++)
		for (t = 0; t < NTYPES; t++)
			for (op = NNP_SUM; op <= NNP_AVG; op++) {
				struct ccase c = {
					.kind = ALLREDUCE, .t = all_types[t], .op = op,
					.count = counts[k], .in_place = (k + t + op) & 1,
				};

				if (sampled(k, ncounts, t + op, self->d.n))
					run_case(_metadata, self, &c);
			}
	/* Fewer elements than ranks. */
	for (t = 0; t < NTYPES; t++) {
		struct ccase c = { .kind = ALLREDUCE, .t = all_types[t],
				   .count = (size_t)self->d.n - 1 };

		run_case(_metadata, self, &c);
	}
}

TEST_F_TIMEOUT(ring, broadcast_from_every_root, TIMEOUT_S)
{
	unsigned int t;
	int root;

	/* Sampled: each root with one type, each type from one root at least. */
	for (root = 0; root < self->d.n; root++)
		for (t = 0; t < NTYPES; t++) {
			struct ccase c = {
				.kind = BROADCAST, .t = all_types[t],
				.count = t & 1 ? 7 : 70001, .in_place = (root + t) & 1,
				.root = root,
			};

			if (sampled(t, NTYPES, root, self->d.n) ||
			    sampled(root, self->d.n, t, self->d.n))
				run_case(_metadata, self, &c);
		}
	{
		struct ccase c = { .kind = BROADCAST, .t = NNP_INT32, .count = 0 };

		run_case(_metadata, self, &c);
	}
	/* Bytes (NNP_UINT8): from every root, an odd count, exact. */
	for (root = 0; root < self->d.n; root++) {
		struct ccase c = {
			.kind = BROADCAST, .t = NNP_UINT8, .count = 70001 + root,
			.in_place = root & 1, .root = root,
		};

		run_case(_metadata, self, &c);
	}
}

/* Reduce goes to the roots in turn, in and out of place. */
TEST_F_TIMEOUT(ring, allgather_reduce_scatter_and_reduce, TIMEOUT_S)
{
	const size_t counts[] = { 0, 1, 7, 70001 };
	const unsigned int ncounts = sizeof(counts) / sizeof(counts[0]);
	unsigned int t, k;
	int op;

	for (k = 0; k < ncounts; k++)
		for (t = 0; t < NTYPES; t++) {
			struct ccase g = {
				.kind = ALLGATHER, .t = all_types[t], .count = counts[k],
				.in_place = (k + t) & 1,
			};

			if (sampled(k, ncounts, t, self->d.n))
				run_case(_metadata, self, &g);
			for (op = NNP_SUM; op <= NNP_AVG; op++) {
				struct ccase s = {
					.kind = REDUCE_SCATTER, .t = all_types[t], .op = op,
					.count = counts[k], .in_place = (k + t + op) & 1,
				};

				struct ccase r = {
					.kind = REDUCE, .t = all_types[t], .op = op,
					.count = counts[k], .in_place = !s.in_place,
					.root = (int)(k + t + op) % self->d.n,
				};

				if (sampled(k, ncounts, t + op, self->d.n)) {
					run_case(_metadata, self, &s);
					run_case(_metadata, self, &r);
				}
			}
		}
	/* Bytes (NNP_UINT8) are gathered as they are, every count. */
	for (k = 0; k < ncounts; k++) {
		struct ccase g = {
			.kind = ALLGATHER, .t = NNP_UINT8, .count = counts[k],
			.in_place = k & 1,
		};

		run_case(_metadata, self, &g);
	}
}

/*
 * Bytes are moved, never reduced: an allreduce, reduce-scatter or reduce
 * of NNP_UINT8 is refused before it reaches the device, naming why, and
 * the stream goes on.
 */
TEST_F(ring, bytes_are_never_reduced)
{
	enum kind kinds[] = { ALLREDUCE, REDUCE_SCATTER, REDUCE };
	const char *const names[] = { "allreduce", "reduce_scatter", "reduce" };
	char want[128];
	unsigned int k;

	for (k = 0; k < 3; k++) {
		struct ccase c = { .kind = kinds[k], .t = NNP_UINT8, .count = 8 };

		EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, submit(self, &c, 0));
		snprintf(want, sizeof(want),
			 "%s of NNP_UINT8: bytes are moved, never reduced", names[k]);
		EXPECT_TRUE(strstr(nnp_get_last_error(), want) != NULL)
			TH_LOG("last error: %s", nnp_get_last_error());
	}
	EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[0]));
}

/* Random inputs: each type's sum within what its rounding allows. */
TEST_F_TIMEOUT(ring, allreduce_random_inputs_within_tolerance, TIMEOUT_S)
{
	const nnp_dtype_t types[] = { NNP_FLOAT32, NNP_FLOAT16, NNP_BFLOAT16 };
	const double eps[] = { 0x1p-23, 0x1p-10, 0x1p-7 };
	const size_t count = 50001;
	static double exact[50001];
	unsigned int t;
	int n = self->d.n, r;

	for (t = 0; t < 3; t++) {
		size_t es = dtype_bytes(types[t]), i, bad = 0;
		/* n roundings of partial sums of magnitude up to n. */
		double tol = 2.0 * n * n * eps[t];

		memset(exact, 0, sizeof(exact));
		srand(1234 + t);
		for (r = 0; r < n; r++) {
			uint8_t *h;

			nnp_mem_map(self->d.host[r], (void **)&h);
			for (i = 0; i < count; i++) {
				put(types[t], h, i, 2.0 * rand() / RAND_MAX - 1.0);
				exact[i] += get(types[t], h, i);
			}
			ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.a[r], 0,
								self->d.host[r], 0, count * es));
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], 0, self->d.b[r], 0,
							     count, types[t], NNP_SUM,
							     self->d.comm[r], self->d.s[r]));
		}
		for (r = 0; r < n; r++) {
			uint8_t *h;

			ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
			ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
								self->d.b[r], 0, count * es));
			ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
			nnp_mem_map(self->d.host[r], (void **)&h);
			for (i = 0; i < count; i++)
				if (fabs(get(types[t], h, i) - exact[i]) > tol && bad++ < 3)
					TH_LOG("type %d rank %d element %zu: %g vs %g",
					       types[t], r, i, get(types[t], h, i), exact[i]);
			EXPECT_EQ(0, bad);
		}
	}
}

/*
 * Links between each two ranks' chips, fewest first, over links that are
 * up (chip id = rank): dist[r * n + p], -1 if none.
 */
static void hops_between(nnp_device_t **dev, int n, int *dist)
{
	int r, p, k;

	for (r = 0; r < n; r++) {
		struct nnp_port_info ports[NNP_MAX_PORTS] = { { .size = sizeof(ports[0]) } };
		unsigned int np = 0, i;

		for (p = 0; p < n; p++)
			dist[r * n + p] = r == p ? 0 : -1;
		nnp_device_get_ports(dev[r], ports, NNP_MAX_PORTS, &np);
		for (i = 0; i < np; i++)
			if ((ports[i].state & NNP_LINK_UP) && ports[i].peer_chip < (uint32_t)n &&
			    (int)ports[i].peer_chip != r)
				dist[r * n + ports[i].peer_chip] = 1;
	}
	/* Floyd-Warshall: n is at most MAXDEV. */
	for (k = 0; k < n; k++)
		for (r = 0; r < n; r++)
			for (p = 0; p < n; p++)
				if (dist[r * n + k] >= 0 && dist[k * n + p] >= 0 &&
				    (dist[r * n + p] < 0 ||
				     dist[r * n + k] + dist[k * n + p] < dist[r * n + p]))
					dist[r * n + p] = dist[r * n + k] + dist[k * n + p];
}

/*
 * Each rank's a: for each peer p, @count int32s r * 1000003 + p * 10007 + i;
 * its b the guard. False if a call failed (the last error says which).
 */
static bool messages_staged(FIXTURE_DATA(ring) *self, size_t count)
{
	const size_t part = count * 4;
	int n = self->d.n, r, p;

	for (r = 0; r < n; r++) {
		int32_t *h;
		size_t i;

		if (nnp_mem_map(self->d.host[r], (void **)&h) != NNP_SUCCESS)
			return false;
		for (p = 0; p < n; p++)
			for (i = 0; i < count; i++)
				h[p * count + i] = r * 1000003 + p * 10007 + (int32_t)i;
		if (nnp_memcpy_async(self->d.s[r], self->d.a[r], 0, self->d.host[r], 0,
				     n * part) != NNP_SUCCESS ||
		    nnp_memset_async(self->d.s[r], self->d.b[r], 0, GUARD,
				     n * part) != NNP_SUCCESS ||
		    nnp_stream_synchronize(self->d.s[r]) != NNP_SUCCESS)
			return false;
	}
	return true;
}

/*
 * Every rank sends a message to every other rank and receives one from
 * each: over the link between their chips, or routed through the chips
 * between (hardware 1.12), byte for byte, with no host DMA, and the links
 * carry each message once per hop of a shortest path.
 */
TEST_F_TIMEOUT(ring, send_and_receive_with_every_rank, TIMEOUT_S)
{
	const size_t count = 20001, part = count * 4;
	uint64_t dma[MAXDEV], tx[MAXDEV], hop_bytes = 0, sent = 0;
	int n = self->d.n, r, p, dist[MAXDEV * MAXDEV];

	hops_between(self->d.dev, n, dist);
	ASSERT_TRUE(messages_staged(self, count)) TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < n; r++) {
		dma[r] = host_dma_bytes(self->d.dev[r]);
		tx[r] = icl_tx(self->d.dev[r]);
	}
	for (r = 0; r < n; r++)
		for (p = 0; p < n; p++) {
			nnp_result_t res = nnp_send(self->d.a[r], p * part, count, NNP_INT32, p,
						    self->d.comm[r], self->d.s[r]);

			if (p == r) {
				EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, res);
				continue;
			}
			ASSERT_GT(dist[r * n + p], 0) TH_LOG("rank %d to %d: no path", r, p);
			EXPECT_EQ(NNP_SUCCESS, res) TH_LOG("rank %d to %d: %s", r, p,
							   nnp_get_last_error());
			hop_bytes += dist[r * n + p] * part;
		}
	for (r = 0; r < n; r++)
		for (p = 0; p < n; p++)
			if (p != r)
				ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->d.b[r], p * part, count,
								NNP_INT32, p, self->d.comm[r],
								self->d.s[r]));
	for (r = 0; r < n; r++) {
		int32_t *h;
		size_t i, bad = 0;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		EXPECT_EQ(dma[r], host_dma_bytes(self->d.dev[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
							self->d.b[r], 0, n * part));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		nnp_mem_map(self->d.host[r], (void **)&h);
		for (p = 0; p < n; p++)
			for (i = 0; i < count; i++)
				bad += h[p * count + i] != (p != r ?
					p * 1000003 + r * 10007 + (int32_t)i :
					(int32_t)0xa5a5a5a5);
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
	/* Relayed bytes leave each chip on the way: counted where they pass. */
	for (r = 0; r < n; r++)
		sent += icl_tx(self->d.dev[r]) - tx[r];
	EXPECT_EQ(hop_bytes, sent);
}

/*
 * Rank 0 sends rank n/2 (routed, where they share no link) one element
 * fewer than rank n/2 receives: the receive fails MISMATCH at once,
 * naming the sender and both lengths (hardware 1.27), and the sender's
 * stream ends too: both well within a minute, where a wait for the
 * communicator's timeout (30 minutes) would hang.
 */
TEST_F_TIMEOUT(ring, send_and_receive_of_other_lengths, TIMEOUT_S)
{
	const size_t count = 1000;
	int n = self->d.n, to = n / 2;
	char want[160];
	nnp_result_t res;
	double t0;

	ASSERT_TRUE(messages_staged(self, count + 1)) TH_LOG("%s", nnp_get_last_error());
	t0 = now_s();
	ASSERT_EQ(NNP_SUCCESS, nnp_send(self->d.a[0], 0, count, NNP_INT32, to,
					self->d.comm[0], self->d.s[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->d.b[to], 0, count + 1, NNP_INT32, 0,
					self->d.comm[to], self->d.s[to]));
	EXPECT_EQ(NNP_ERROR_MISMATCH, nnp_stream_synchronize(self->d.s[to]));
	snprintf(want, sizeof(want),
		 "the ranks disagree on a message's length: rank 0 sent this rank %zu bytes, where its receive takes %zu",
		 count * 4, (count + 1) * 4);
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), want))
		TH_LOG("last error: %s", nnp_get_last_error());
	res = nnp_stream_synchronize(self->d.s[0]);
	EXPECT_TRUE(res == NNP_SUCCESS || res == NNP_ERROR_COMMAND_FAILED)
		TH_LOG("rank 0: %s", nnp_get_last_error());
	EXPECT_GT(60.0, now_s() - t0);
}

/*
 * Every rank sends each other rank a message, then takes as many from
 * any source (libnnp 0.9, hardware 1.26): each other rank named once,
 * each message exact where the receive that named its sender put it,
 * neighbours' by link and the others' routed. A receive from any source
 * with no place for the source, or inside a group, is refused.
 */
TEST_F_TIMEOUT(ring, receive_from_any_source, TIMEOUT_S)
{
	const size_t count = 5003, part = count * 4;
	int n = self->d.n, r, p, k, from[MAXDEV][MAXDEV];

	ASSERT_TRUE(messages_staged(self, count)) TH_LOG("%s", nnp_get_last_error());
	/* Sends first: a stream runs in order, and a send need not wait. */
	for (r = 0; r < n; r++)
		for (p = 0; p < n; p++)
			if (p != r)
				ASSERT_EQ(NNP_SUCCESS, nnp_send(self->d.a[r], p * part, count,
								NNP_INT32, p, self->d.comm[r],
								self->d.s[r]));
	for (r = 0; r < n; r++)
		for (k = 0; k < n - 1; k++)
			ASSERT_EQ(NNP_SUCCESS,
				  nnp_recv_any(self->d.b[r], k * part, count, NNP_INT32,
					       &from[r][k], self->d.comm[r], self->d.s[r]))
				TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < n; r++) {
		int32_t *h;
		size_t i, bad = 0;
		int seen = 0;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
							self->d.b[r], 0, (n - 1) * part));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		nnp_mem_map(self->d.host[r], (void **)&h);
		for (k = 0; k < n - 1; k++) {
			p = from[r][k];
			ASSERT_TRUE(p >= 0 && p < n && p != r) TH_LOG("rank %d: source %d", r, p);
			seen |= 1 << p;
			for (i = 0; i < count; i++)
				bad += h[k * count + i] != p * 1000003 + r * 10007 + (int32_t)i;
		}
		EXPECT_EQ(((1 << n) - 1) & ~(1 << r), seen) TH_LOG("rank %d", r);
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_recv_any(self->d.b[0], 0, count, NNP_INT32, NULL,
			       self->d.comm[0], self->d.s[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_recv_any(self->d.b[0], 0, count, NNP_INT32, &from[0][0],
			       self->d.comm[0], self->d.s[0]));
	EXPECT_EQ(-1, from[0][0]);
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), "inside a group"));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_group_end());
}

enum xkind { ALLTOALL, GATHER, SCATTER };

static const char *const xkind_name[] = { "alltoall", "gather", "scatter" };

/* Byte @k of segment @seg of rank @r's input: a pattern no two share. */
static uint8_t xbyte(int r, int seg, size_t k)
{
	return (uint8_t)(r * 37 + seg * 11 + k * 7 + k / 253);
}

/* Where rank @r's exchange reads and writes in b (in place) or a and b. */
struct xplace {
	nnp_mem_t *in, *out;
	size_t in_off, out_off;
	int in_segs, out_segs;	/* segments read and written; 0: none named */
};

static struct xplace xplace_of(FIXTURE_DATA(ring) *self, enum xkind k, int r,
			       int root, bool in_place, size_t seg)
{
	int n = self->d.n;
	struct xplace p = {
		.in = in_place ? self->d.b[r] : self->d.a[r], .out = self->d.b[r],
		.in_off = GUARD_BYTES, .out_off = GUARD_BYTES,
		.in_segs = k == GATHER ? 1 : k == SCATTER && r != root ? 0 : n,
		.out_segs = k == SCATTER ? 1 : k == GATHER && r != root ? 0 : n,
	};

	/* NCCL's in-place layouts: the root's own segment of the n. */
	if (in_place && k == GATHER && r == root)
		p.in_off += root * seg;
	if (in_place && k == SCATTER && r == root)
		p.out_off += root * seg;
	return p;
}

/* What rank @r should hold at output segment @s, byte @i. */
static uint8_t xwant(enum xkind k, int r, int root, int s, size_t i)
{
	return k == ALLTOALL ? xbyte(s, r, i) :
	       k == GATHER ? xbyte(s, 0, i) : xbyte(root, r, i);
}

/* Links crossed by one rank's segments in all, for exchange @k. */
static uint64_t xhops(const int *dist, int n, enum xkind k, int root)
{
	uint64_t h = 0;
	int r, p;

	for (r = 0; r < n; r++)
		for (p = 0; p < n; p++)
			if (r != p && (k == ALLTOALL || (k == GATHER && p == root) ||
				       (k == SCATTER && r == root)))
				h += dist[r * n + p];
	return h;
}

static void xcase(struct __test_metadata *_metadata, FIXTURE_DATA(ring) *self,
		  enum xkind k, nnp_dtype_t t, size_t count, int root,
		  bool in_place, const int *dist)
{
	size_t es = dtype_bytes(t), seg = count * es;
	size_t end = 2 * GUARD_BYTES + self->d.n * seg;
	uint64_t dma[MAXDEV], tx = 0;
	int n = self->d.n, r, s;

	for (r = 0; r < n; r++) {
		struct xplace p = xplace_of(self, k, r, root, in_place, seg);
		uint8_t *h;
		size_t i;

		ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(self->d.host[r], (void **)&h));
		memset(h, GUARD, end);
		for (s = 0; s < p.in_segs; s++)
			for (i = 0; i < seg; i++)
				h[p.in_off + s * seg + i] = xbyte(r, s, i);
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], p.in, 0,
							self->d.host[r], 0, end));
		if (!in_place)
			ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->d.s[r], p.out, 0,
								GUARD, end));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		dma[r] = host_dma_bytes(self->d.dev[r]);
		tx -= icl_tx(self->d.dev[r]);
	}
	for (r = 0; r < n; r++) {
		struct xplace p = xplace_of(self, k, r, root, in_place, seg);
		nnp_mem_t *in = p.in_segs ? p.in : NULL;
		nnp_mem_t *out = p.out_segs ? p.out : NULL;
		nnp_result_t res =
			k == ALLTOALL ? nnp_alltoall(in, p.in_off, out, p.out_off, count,
						     t, self->d.comm[r], self->d.s[r]) :
			k == GATHER ? nnp_gather(in, p.in_off, out, p.out_off, count, t,
						 root, self->d.comm[r], self->d.s[r]) :
			nnp_scatter(in, p.in_off, out, p.out_off, count, t, root,
				    self->d.comm[r], self->d.s[r]);

		ASSERT_EQ(NNP_SUCCESS, res) TH_LOG("%s rank %d: %s", xkind_name[k], r,
						   nnp_get_last_error());
	}
	for (r = 0; r < n; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("%s of type %d, %zu elements, root %d: %s", xkind_name[k],
			       (int)t, count, root, nnp_get_last_error());
		EXPECT_EQ(dma[r], host_dma_bytes(self->d.dev[r]));
	}
	/*
	 * Once every rank is done: a chip forwards others' packets after its
	 * own part ended, but before their receiver's did.
	 */
	for (r = 0; r < n; r++)
		tx += icl_tx(self->d.dev[r]);
	for (r = 0; r < n; r++) {
		struct xplace p = xplace_of(self, k, r, root, in_place, seg);
		size_t i, bad = 0;
		uint8_t *h;

		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
							p.out, 0, end));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		nnp_mem_map(self->d.host[r], (void **)&h);
		for (s = 0; s < p.out_segs; s++)
			for (i = 0; i < seg; i++)
				bad += h[p.out_off + s * seg + i] != xwant(k, r, root, s, i);
		/* Past what it wrote, out of place: untouched. */
		for (i = p.out_off + p.out_segs * seg; !in_place && i < end; i++)
			bad += h[i] != GUARD;
		EXPECT_EQ(0, bad) TH_LOG("%s of type %d, %zu elements, root %d, %s, rank %d",
					 xkind_name[k], (int)t, count, root,
					 in_place ? "in place" : "out of place", r);
	}
	EXPECT_EQ(xhops(dist, n, k, root) * seg, tx)
		TH_LOG("%s of type %d, %zu elements: link bytes", xkind_name[k], (int)t,
		       count);
}

/*
 * Alltoall, gather and scatter of every type, in and out of place, the
 * roots in turn, counts from 0 to MAX_COUNT: byte for byte, no host DMA,
 * and each segment's bytes once per link of its shortest path.
 */
TEST_F_TIMEOUT(ring, alltoall_gather_scatter, TIMEOUT_S)
{
	static const size_t counts[] = { 0, 1, 7, 1003, 30011, MAX_COUNT };
	int dist[MAXDEV * MAXDEV];
	unsigned int k, t;

	hops_between(self->d.dev, self->d.n, dist);
	for (k = ALLTOALL; k <= SCATTER; k++) {
		for (t = 0; t < NTYPES; t++)
			xcase(_metadata, self, k, all_types[t],
			      counts[(t + k * 2) % 6], (int)(t + k) % self->d.n,
			      (t + k) % 2, dist);
		/* Bytes (NNP_UINT8), an odd count: moved byte for byte. */
		xcase(_metadata, self, k, NNP_UINT8, 30011, (int)k % self->d.n, k % 2,
		      dist);
	}
}

/* The largest size has its own devices' memory: nothing to set up. */
FIXTURE(big) {};
FIXTURE_SETUP(big) {}
FIXTURE_TEARDOWN(big) {}

/*
 * The largest size, f32 in place, every element and guard: 64 MiB on each
 * rank with the full matrix, else 64 MiB over the ranks. The guest's CPU
 * filling and checking each element, not the devices, takes the time:
 * 64 MiB on every rank of every fabric was half of vm-allreduce.
 */
TEST_F_TIMEOUT(big, allreduce_largest, TIMEOUT_S)
{
	int n = GUEST_CHIPS, r;
	const size_t bytes = full_matrix() ? 64u << 20 :
			     ((64u << 20) / (unsigned int)n) & ~(size_t)4095;
	const size_t count = bytes / 4;
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	nnp_mem_t *d[MAXDEV], *h[MAXDEV];

	for (r = 0; r < n; r++) {
		float *p;
		size_t i;

		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(r, &dev[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev[r], &s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev[r], NNP_MEM_DEVICE,
						     bytes + 2 * GUARD_BYTES, 0, &d[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev[r], NNP_MEM_HOST,
						     bytes + 2 * GUARD_BYTES, 0, &h[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h[r], (void **)&p));
		memset(p, GUARD, bytes + 2 * GUARD_BYTES);
		p += GUARD_BYTES / 4;
		for (i = 0; i < count; i++)
			p[i] = (float)input(r, i, NNP_SUM);
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s[r], d[r], 0, h[r], 0,
							bytes + 2 * GUARD_BYTES));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(dev, n, comm));
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(d[r], GUARD_BYTES, d[r], GUARD_BYTES,
						     count, NNP_FLOAT32, NNP_SUM, comm[r],
						     s[r]));
	for (r = 0; r < n; r++) {
		size_t i, bad = 0;
		uint8_t *p;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s[r], h[r], 0, d[r], 0,
							bytes + 2 * GUARD_BYTES));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(s[r]));
		nnp_mem_map(h[r], (void **)&p);
		for (i = 0; i < GUARD_BYTES; i++)
			bad += p[i] != GUARD || p[GUARD_BYTES + bytes + i] != GUARD;
		for (i = 0; i < count; i++)
			bad += ((float *)(p + GUARD_BYTES))[i] != (float)reduced(NNP_SUM, n, i);
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
	for (r = 0; r < n; r++) {
		nnp_comm_destroy(comm[r]);
		nnp_mem_free(d[r]);
		nnp_mem_free(h[r]);
		nnp_stream_destroy(s[r]);
		nnp_device_close(dev[r]);
	}
}

TEST(unjoined_chips_have_no_path)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
	struct nnp_device_info info = { .size = sizeof(info) };
	nnp_device_t *dev[2];
	nnp_comm_t *comm[2];
	unsigned int np = 0, i;
	int k;

	/* The same chip twice is a mistake, not a ring. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev[1]));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_comm_init_all(dev, 2, comm));
	EXPECT_EQ(NULL, comm[0]);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_comm_init_all(dev, 0, comm));
	nnp_device_close(dev[1]);

	/* Two chips with no link between them have no ring. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_ports(dev[0], p, NNP_MAX_PORTS, &np));
	for (k = 1; k < GUEST_CHIPS; k++) {
		bool linked = false;

		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(k, &dev[1]));
		ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev[1], &info));
		for (i = 0; i < np; i++)
			linked |= (p[i].state & NNP_LINK_UP) && p[i].peer_chip == info.chip_id;
		if (!linked) {
			EXPECT_EQ(NNP_ERROR_NO_PATH, nnp_comm_init_all(dev, 2, comm));
			EXPECT_EQ(NULL, comm[1]);
		}
		nnp_device_close(dev[1]);
	}
	nnp_device_close(dev[0]);
}

TEST_HARNESS_MAIN
