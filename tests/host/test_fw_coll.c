// SPDX-License-Identifier: MIT
/*
 * Firmware simulator collectives: reduction kernels and element
 * conversions, and ring allreduce across 2, 3, 4 and 8 chips joined by
 * in-process links, for every type and op, counts from 0 up, in place and
 * out of place; device memory only, with host DMA untouched and link bytes
 * exactly the ring's; a link lost mid-collective failing every rank.
 * Broadcast, allgather and reduce-scatter the same way, also on a ring
 * whose order is not rank order; point-to-point messages through a port.
 * A communicator's own timeout: a rank 5 s late completing exactly, a
 * short one failing with PEER_TIMEOUT. COMM_DESTROY with ABORT stopping
 * every waiting rank at once, and COMM_STATUS telling of it. COMM_TOPOLOGY
 * checking its fields and turning a ring's allreduce into BIDIR.
 *
 * In detail (docs/testing.md has the summary):
 * half/bfloat16 conversions (rounding, subnormals, overflow), reduction
 * kernels per type and op, ring allreduce on 1, 2, 3, 4 and 8 in-process
 * chips for every type and op, counts 0, 1, 7, 1003, 40000, in and out of
 * place, with guard bytes, host DMA untouched and exact link bytes;
 * broadcast (every root), allgather, reduce-scatter and reduce (every op,
 * roots in turn, a rank off the root's output untouched) on 1, 2, 3 and 8
 * chips, in and out of place, inputs unchanged, exact link bytes per rank;
 * all of these on 8 chips run by one thread for all (no collective holds
 * its worker while it waits for another chip); all four on a 5-chip ring
 * whose order is not rank order; allreduce, reduce-scatter (sum, and avg of
 * i32), allgather and broadcast of 640 KiB a rank (5 chunks a ring step, a
 * full send window) on 3 and 4 chips with each chip in turn slow (it naps
 * between turns), byte-exact: no chip writes over a chunk it lent before
 * its slow neighbour read it; bad ring orders refused; SEND/RECV of 0 B to
 * 300 KB between chips, in order, with exact link and no host bytes, a
 * length mismatch, a refused sender aborting its receiver at once, bad
 * port/communicator/reserved bits; a link taken down mid-collective failing
 * every waiting rank at once, not at the timeout, and the ring working
 * again after the link returns and the communicator is re-made; a
 * communicator's own timeout: with 10 s, or none, a rank whose clock-jumped
 * peers waited 5 s (or a day) for it gives an exact allreduce on 3 chips,
 * while the device default (60 s here) fails a rank as late as itself, and
 * a 100 ms one fails a lone rank with PEER_TIMEOUT (and the queue's ERROR
 * word) at 100 ms on a clock moved by hand, not 1 ms before; the word
 * after `timeout_ms` still reserved; COMM_DESTROY with ABORT on one of
 * two ranks waiting for a third ends both ABORTED at once (no timeout
 * set), COMM_STATUS then ABORTED on the other and on the idle rank,
 * NOT_FOUND for the destroyed one, an unknown flag INVALID_FIELD, and the
 * remade ring exact; with no timeout, chips 0 and 1 of 3 waiting for chip 2
 * (chip 0 for its data, chip 1 for its lent chunks to be read) and the link
 * 1-2 taken down: chip 1 LINK_DOWN, chip 0 ABORTED at once through the
 * abort sent back to it, and idle chip 2's COMM_STATUS ABORTED and its next
 * allreduce ABORTED at once; COMM_TOPOLOGY (1.7): NOT_FOUND for a
 * communicator not made, INVALID_FIELD for a short buffer, an unknown algo,
 * each reserved word, a size not nranks, a position not below n, 3 pairs,
 * port 4 of 4, dim[1] without dim[0]; then BIDIR on the ring of 4: a
 * 4096-byte i32 sum exact with 3S/4 = 3072 bytes out of each of ports 0 and
 * 1
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#include <cmocka.h>

#include "fw_harness.h"
#include "fw_reduce.h"

#define MAX_CHIPS	8
#define CTX		1
#define COMM		5
#define DATA		0x10000		/* device offset of the buffers */
#define GUARD		0xa5

/* ---- kernels ---- */

static void test_half_and_bf16_conversions(void **state)
{
	(void)state;
	assert_int_equal(nnp_fw_float_to_half(1.0f), 0x3c00);
	assert_int_equal(nnp_fw_float_to_half(-2.0f), 0xc000);
	assert_int_equal(nnp_fw_float_to_half(65504.0f), 0x7bff);
	assert_int_equal(nnp_fw_float_to_half(65520.0f), 0x7c00);	/* rounds to inf */
	assert_int_equal(nnp_fw_float_to_half(0x1p-24f), 0x0001);	/* smallest subnormal */
	assert_int_equal(nnp_fw_float_to_half(0x1p-25f), 0x0000);	/* tie to even: 0 */
	assert_int_equal(nnp_fw_float_to_half(1.0f + 0x1p-11f), 0x3c00);	/* tie to even */
	assert_int_equal(nnp_fw_float_to_half(1.0f + 0x3p-11f), 0x3c02);
	assert_true(nnp_fw_half_to_float(0x0001) == 0x1p-24f);
	assert_true(nnp_fw_half_to_float(0x7bff) == 65504.0f);
	assert_true(nnp_fw_half_to_float(0xc000) == -2.0f);
	assert_int_equal(nnp_fw_float_to_bf16(1.0f), 0x3f80);
	assert_true(nnp_fw_bf16_to_float(0x3f80) == 1.0f);
	{
		uint32_t tie_even = 0x3f808000, tie_odd = 0x3f818000;
		float a, b;

		memcpy(&a, &tie_even, 4);
		memcpy(&b, &tie_odd, 4);
		assert_int_equal(nnp_fw_float_to_bf16(a), 0x3f80);
		assert_int_equal(nnp_fw_float_to_bf16(b), 0x3f82);
	}
}

static void test_reduce_ops_per_type(void **state)
{
	int32_t i[3] = { 5, -7, 100 }, j[3] = { -2, 3, 100 };
	int64_t l[2] = { INT64_MAX, -5 }, m[2] = { 1, -6 };
	float f[2] = { 1.5f, -3.0f }, g[2] = { 2.0f, 0.5f };
	double d[2] = { 0.25, 9.0 }, e[2] = { 4.0, -1.0 };
	uint16_t h[2], k[2];

	(void)state;
	nnp_fw_reduce(NNP_DTYPE_I32, NNP_OP_SUM, i, j, 3);
	assert_int_equal(i[0], 3);
	assert_int_equal(i[1], -4);
	assert_int_equal(i[2], 200);
	nnp_fw_reduce(NNP_DTYPE_I32, NNP_OP_MIN, i, j, 3);
	assert_int_equal(i[0], -2);
	assert_int_equal(i[1], -4);
	nnp_fw_reduce(NNP_DTYPE_I32, NNP_OP_MAX, i, j, 3);
	assert_int_equal(i[1], 3);
	nnp_fw_reduce(NNP_DTYPE_I32, NNP_OP_PROD, i, j, 3);
	assert_int_equal(i[0], 4);
	assert_int_equal(i[2], 10000);
	nnp_fw_divide(NNP_DTYPE_I32, i, 3, 3);
	assert_int_equal(i[0], 1);
	assert_int_equal(i[1], 3);
	assert_int_equal(i[2], 3333);
	/* Integer sums wrap like the hardware's. */
	nnp_fw_reduce(NNP_DTYPE_I64, NNP_OP_SUM, l, m, 2);
	assert_true(l[0] == INT64_MIN);
	assert_true(l[1] == -11);
	nnp_fw_reduce(NNP_DTYPE_F32, NNP_OP_PROD, f, g, 2);
	assert_true(f[0] == 3.0f && f[1] == -1.5f);
	nnp_fw_reduce(NNP_DTYPE_F64, NNP_OP_MAX, d, e, 2);
	assert_true(d[0] == 4.0 && d[1] == 9.0);
	nnp_fw_divide(NNP_DTYPE_F64, d, 2, 4);
	assert_true(d[0] == 1.0 && d[1] == 2.25);
	h[0] = nnp_fw_float_to_half(1.5f);
	h[1] = nnp_fw_float_to_half(-8.0f);
	k[0] = nnp_fw_float_to_half(2.25f);
	k[1] = nnp_fw_float_to_half(3.0f);
	nnp_fw_reduce(NNP_DTYPE_F16, NNP_OP_SUM, h, k, 2);
	assert_true(nnp_fw_half_to_float(h[0]) == 3.75f);
	assert_true(nnp_fw_half_to_float(h[1]) == -5.0f);
	h[0] = nnp_fw_float_to_bf16(3.0f);
	k[0] = nnp_fw_float_to_bf16(-0.5f);
	nnp_fw_reduce(NNP_DTYPE_BF16, NNP_OP_MIN, h, k, 1);
	assert_true(nnp_fw_bf16_to_float(h[0]) == -0.5f);
}

/* ---- chips on a ring ---- */

static struct fw_chip chips[MAX_CHIPS];

/* Rank of the chip at each ring position; rank order unless changed. */
static uint32_t rank_of[MAX_CHIPS] = { 0, 1, 2, 3, 4, 5, 6, 7 };

/*
 * COMM_CREATE's timeout_ms for the next ring_up(). The collectives that
 * must come out exact wait as long as a loaded machine may keep a chip's
 * thread off the CPU: when the device's default (COLL_TIMEOUT_MS, 0
 * here) was 500 ms, a chip 0.5 s late failed them now and then. The cases
 * about the default itself set 0.
 */
#define EXACT_TIMEOUT_MS	30000
static uint32_t comm_timeout_ms = EXACT_TIMEOUT_MS;

static bool in_rank_order(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (rank_of[i] != i)
			return false;
	return true;
}

static void comm_create(unsigned int n, uint32_t epoch)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
		struct nnp_hw_comm_args a = {
			.ctx = CTX, .comm = COMM, .nranks = n, .rank = rank_of[i],
			.send_port = 0, .recv_port = 1, .epoch = epoch,
			.timeout_ms = comm_timeout_ms,
		};

		memcpy(c.args, &a, sizeof(a));
		if (!in_rank_order(n)) {
			c.addr = H_AQ_DATA;
			c.len = n * sizeof(uint32_t);
			memcpy(fw_harness_host_ptr(chips[i].h, H_AQ_DATA), rank_of,
			       c.len);
		}
		assert_int_equal(fw_harness_admin(chips[i].h, c, NULL), NNP_STATUS_SUCCESS);
	}
}

/* n chips, chip i port 0 wired to chip i+1 port 1, one communicator. */
static void ring_up(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		fw_chip_setup(&chips[i], CTX);
	for (i = 0; i < n && n > 1; i++) {
		/* Two chips make a ring of two links. */
		if (n == 2 && i == 1)
			assert_int_equal(nnp_fw_link_connect(chips[1].h->fw, 0,
							     chips[0].h->fw, 1), 0);
		else
			assert_int_equal(nnp_fw_link_connect(chips[i].h->fw, 0,
							     chips[(i + 1) % n].h->fw, 1), 0);
	}
	for (i = 0; i < n; i++)
		chips[i].posted = 0;
	comm_create(n, 1);
}



static void ring_down(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < MAX_CHIPS; i++)
		rank_of[i] = i;
	comm_timeout_ms = EXACT_TIMEOUT_MS;

	for (i = 0; i < n; i++) {
		void *st = chips[i].h;

		fw_harness_teardown(&st);
	}
}

/*
 * Chips run by one thread for all rather than a thread each: the
 * firmware's workers may be fewer than the chips waiting on each other.
 */
static bool one_worker;

/* Post @cmd on each of chips[first..n) and run them all to completion. */
static void run_on(unsigned int first, unsigned int n, struct nnp_hw_queue_cmd cmd)
{
	unsigned int i;

	for (i = first; i < n; i++) {
		if (one_worker)
			fw_chip_post(&chips[i], cmd);
		else
			fw_chip_start(&chips[i], cmd);
	}
}

static void join(unsigned int first, unsigned int n)
{
	unsigned int i;

	if (one_worker) {
		fw_chips_run_one_thread(&chips[first], n - first);
		return;
	}
	for (i = first; i < n; i++)
		fw_chip_join(&chips[i]);
}

/* Small integers, so every type and op is exact (bf16 holds |x| <= 256). */
static double input(unsigned int chip, uint64_t i, unsigned int op)
{
	if (op == NNP_OP_PROD)
		return ((i + chip) % 3 == 0) ? -1.0 : 1.0;
	return (double)((i * 7 + chip * 3) % 7) - 3.0;
}

static void store(unsigned int dtype, uint8_t *p, uint64_t i, double v)
{
	size_t es = nnp_fw_dtype_size(dtype);
	union { float f; double d; int32_t i32; int64_t i64; uint16_t h; } u;

	switch (dtype) {
	case NNP_DTYPE_F32: u.f = (float)v; break;
	case NNP_DTYPE_F64: u.d = v; break;
	case NNP_DTYPE_F16: u.h = nnp_fw_float_to_half((float)v); break;
	case NNP_DTYPE_BF16: u.h = nnp_fw_float_to_bf16((float)v); break;
	case NNP_DTYPE_I32: u.i32 = (int32_t)v; break;
	default: u.i64 = (int64_t)v; break;
	}
	memcpy(p + i * es, &u, es);
}

/* The answer: the exact reduction, then AVG's divide as the device does it. */
static void expect(unsigned int dtype, unsigned int op, unsigned int n,
		   uint64_t i, uint8_t *out)
{
	double acc = input(0, i, op);
	unsigned int c;

	for (c = 1; c < n; c++) {
		double v = input(c, i, op);

		acc = op == NNP_OP_PROD ? acc * v : op == NNP_OP_MIN ? (v < acc ? v : acc) :
		      op == NNP_OP_MAX ? (v > acc ? v : acc) : acc + v;
	}
	store(dtype, out, 0, acc);
	if (op == NNP_OP_AVG)
		nnp_fw_divide(dtype, out, 1, n);
}

static void allreduce_case(unsigned int n, unsigned int dtype, unsigned int op,
			   uint64_t count, bool in_place)
{
	size_t es = nnp_fw_dtype_size(dtype), bytes = count * es;
	uint64_t src_off = 64, dst_off = in_place ? 64 : 64 + bytes + 64;
	struct nnp_hw_counters before[MAX_CHIPS], after;
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = count,
		.value = NNP_COLL_VALUE(dtype, op, COMM, 0),
		.src_off = src_off, .dst_off = dst_off,
	};
	uint32_t key[MAX_CHIPS];
	unsigned int c;
	uint64_t i;

	for (c = 0; c < n; c++) {
		uint8_t *mem = chips[c].h->dev_mem + DATA;

		key[c] = fw_harness_dev_key(chips[c].h, CTX, DATA, 2 * bytes + 256,
					    NNP_KEY_READ | NNP_KEY_WRITE);
		memset(mem, GUARD, 2 * bytes + 256);
		for (i = 0; i < count; i++)
			store(dtype, mem + src_off, i, input(c, i, op));
		before[c] = fw_harness_counters(chips[c].h);
	}
	for (c = 0; c < n; c++) {
		cmd.src_key = cmd.dst_key = key[c];
		run_on(c, c + 1, cmd);
	}
	join(0, n);
	for (c = 0; c < n; c++) {
		uint8_t *mem = chips[c].h->dev_mem + DATA, want[8];
		uint64_t tx = 0;
		unsigned int k;

		if (chips[c].status)
			fail_msg("n=%u dtype=%u op=%u count=%llu: chip %u status 0x%x (%s)",
				 n, dtype, op, (unsigned long long)count, c, chips[c].status,
				 chips[c].h->last_error);
		for (i = 0; i < count; i++) {
			expect(dtype, op, n, i, want);
			if (memcmp(mem + dst_off + i * es, want, es))
				fail_msg("n=%u dtype=%u op=%u count=%llu: chip %u element %llu: "
					 "got %02x%02x, want %02x%02x",
					 n, dtype, op, (unsigned long long)count, c,
					 (unsigned long long)i, mem[dst_off + i * es + 1],
					 mem[dst_off + i * es], want[1], want[0]);
		}
		/* Out of place the ring reads the input in place: unchanged. */
		for (i = 0; i < count && !in_place; i++) {
			store(dtype, want, 0, input(c, i, op));
			if (memcmp(mem + src_off + i * es, want, es))
				fail_msg("n=%u: chip %u input element %llu changed",
					 n, c, (unsigned long long)i);
		}
		assert_int_equal(mem[dst_off - 1], GUARD);
		assert_int_equal(mem[dst_off + bytes], GUARD);
		after = fw_harness_counters(chips[c].h);
		/* Nothing crossed the host. */
		assert_int_equal(after.host_dma_bytes, before[c].host_dma_bytes);
		/* Every segment but two went out: 2(n-1)/n of the buffer. */
		for (k = 0; k < n && n > 1; k++)
			if (k != (c + 1) % n)
				tx += (count * (k + 1) / n - count * k / n) * es;
		for (k = 0; k < n && n > 1; k++)
			if (k != (c + 2) % n)
				tx += (count * (k + 1) / n - count * k / n) * es;
		assert_int_equal(after.icl_tx_bytes - before[c].icl_tx_bytes, tx);
	}
}

static void ring_allreduce(unsigned int n)
{
	const uint64_t counts[] = { 0, 1, 7, 1003, 40000 };
	unsigned int dtype, op, k;

	ring_up(n);
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		for (dtype = 0; dtype < NNP_DTYPE_REDUCIBLE; dtype++)
			for (op = 0; op < NNP_OP_COUNT; op++)
				allreduce_case(n, dtype, op, counts[k], (k + op) & 1);
	ring_down(n);
}

static void test_allreduce_1_chip(void **state)
{
	(void)state;
	ring_allreduce(1);
}

static void test_allreduce_2_chips(void **state)
{
	(void)state;
	ring_allreduce(2);
}

static void test_allreduce_3_chips(void **state)
{
	(void)state;
	ring_allreduce(3);
}

static void test_allreduce_4_chips(void **state)
{
	(void)state;
	ring_allreduce(4);
}

static void test_allreduce_8_chips(void **state)
{
	(void)state;
	ring_allreduce(8);
}

/* Where a rank's input and output live for one collective case. */
struct layout {
	uint64_t src_off, src_n;	/* elements */
	uint64_t dst_off, dst_n;
};

static struct layout layout_of(unsigned int opcode, unsigned int n, uint32_t rank,
			       uint64_t count, size_t es, bool in_place)
{
	struct layout l = { .src_off = 64, .src_n = count, .dst_n = count };

	if (opcode == NNP_CMD_ALLGATHER)
		l.dst_n = n * count;
	if (opcode == NNP_CMD_REDUCE_SCATTER)
		l.src_n = n * count;
	l.dst_off = 64 + (l.src_n + l.dst_n) * es + 64;
	if (!in_place)
		return l;
	/* NCCL's in-place layouts: the input is the rank's part of the output. */
	if (opcode == NNP_CMD_ALLGATHER)
		l.src_off = (l.dst_off = 64) + rank * count * es;
	else if (opcode == NNP_CMD_REDUCE_SCATTER)
		l.dst_off = 64 + rank * count * es;
	else
		l.dst_off = 64;
	return l;
}

/* Element @i of rank @rank's result. */
static void want_of(unsigned int opcode, unsigned int dtype, unsigned int op,
		    unsigned int n, uint32_t rank, uint32_t root, uint64_t count,
		    uint64_t i, uint8_t *want)
{
	switch (opcode) {
	case NNP_CMD_BROADCAST:
		store(dtype, want, 0, input(root, i, NNP_OP_SUM));
		break;
	case NNP_CMD_REDUCE:
		expect(dtype, op, n, i, want);
		break;
	case NNP_CMD_ALLGATHER:
		store(dtype, want, 0, input((uint32_t)(i / count), i % count, NNP_OP_SUM));
		break;
	default:
		expect(dtype, op, n, rank * count + i, want);
	}
}

static bool cmd_reads(unsigned int opcode, uint32_t rank, uint32_t root)
{
	return opcode != NNP_CMD_BROADCAST || rank == root;
}

static bool cmd_writes(unsigned int opcode, uint32_t rank, uint32_t root)
{
	return opcode != NNP_CMD_REDUCE || rank == root;
}

/* Bytes rank at ring position @pos sends. */
static uint64_t sent_by(unsigned int opcode, unsigned int n, unsigned int pos,
			uint32_t root, uint64_t bytes)
{
	unsigned int root_pos = 0, p;

	if (n == 1)
		return 0;
	if (opcode != NNP_CMD_BROADCAST && opcode != NNP_CMD_REDUCE)
		return (n - 1) * bytes;
	for (p = 0; p < n; p++)
		if (rank_of[p] == root)
			root_pos = p;
	/* Broadcast's chain ends one position before the root, reduce's at it. */
	if (opcode == NNP_CMD_REDUCE)
		return pos == root_pos ? 0 : bytes;
	return (pos + 1) % n == root_pos ? 0 : bytes;
}

static void coll_case(unsigned int n, unsigned int opcode, unsigned int dtype,
		      unsigned int op, uint64_t count, bool in_place, uint32_t root)
{
	size_t es = nnp_fw_dtype_size(dtype), span = (2 * n + 1) * count * es + 256;
	struct nnp_hw_counters before[MAX_CHIPS], after;
	struct nnp_hw_queue_cmd cmd = {
		.opcode = opcode, .len = count,
		.value = NNP_COLL_VALUE(dtype, op, COMM, root),
	};
	uint8_t want[8];
	unsigned int c;
	uint64_t i;

	for (c = 0; c < n; c++) {
		uint8_t *mem = chips[c].h->dev_mem + DATA;
		uint32_t r = rank_of[c];
		struct layout l = layout_of(opcode, n, r, count, es, in_place);
		uint32_t key = fw_harness_dev_key(chips[c].h, CTX, DATA, span,
						  NNP_KEY_READ | NNP_KEY_WRITE);

		memset(mem, GUARD, span);
		for (i = 0; i < l.src_n; i++)
			store(dtype, mem + l.src_off, i, input(r, i, op));
		before[c] = fw_harness_counters(chips[c].h);
		/* Only the root names a reduce's output. */
		cmd.dst_key = cmd_writes(opcode, r, root) ? key : 0;
		cmd.dst_off = cmd.dst_key ? l.dst_off : 0;
		/* Only the root names a broadcast's source. */
		cmd.src_key = cmd_reads(opcode, r, root) ? key : 0;
		cmd.src_off = cmd.src_key ? l.src_off : 0;
		run_on(c, c + 1, cmd);
	}
	join(0, n);
	for (c = 0; c < n; c++) {
		uint8_t *mem = chips[c].h->dev_mem + DATA;
		uint32_t r = rank_of[c];
		struct layout l = layout_of(opcode, n, r, count, es, in_place);

		if (chips[c].status)
			fail_msg("op 0x%x n=%u dtype=%u count=%llu: chip %u status 0x%x (%s)",
				 opcode, n, dtype, (unsigned long long)count, c,
				 chips[c].status, chips[c].h->last_error);
		for (i = 0; i < l.dst_n; i++) {
			want_of(opcode, dtype, op, n, r, root, count, i, want);
			/* A rank with no output: its memory as it was. */
			if (!cmd_writes(opcode, r, root))
				memset(want, GUARD, es);
			if (!cmd_writes(opcode, r, root) && in_place)
				store(dtype, want, 0, input(r, i, op));
			if (memcmp(mem + l.dst_off + i * es, want, es))
				fail_msg("op 0x%x n=%u dtype=%u op=%u count=%llu: rank %u "
					 "element %llu wrong", opcode, n, dtype, op,
					 (unsigned long long)count, r, (unsigned long long)i);
		}
		for (i = 0; i < l.src_n && !in_place && cmd_reads(opcode, r, root); i++) {
			store(dtype, want, 0, input(r, i, op));
			if (memcmp(mem + l.src_off + i * es, want, es))
				fail_msg("op 0x%x: rank %u input element %llu changed",
					 opcode, r, (unsigned long long)i);
		}
		/* In place, the guards surround input and output together. */
		assert_int_equal(mem[in_place ? 63 : l.dst_off - 1], GUARD);
		assert_int_equal(mem[in_place ? 64 + (l.src_n > l.dst_n ? l.src_n : l.dst_n) * es :
				     l.dst_off + l.dst_n * es], GUARD);
		after = fw_harness_counters(chips[c].h);
		assert_int_equal(after.host_dma_bytes, before[c].host_dma_bytes);
		assert_int_equal(after.icl_tx_bytes - before[c].icl_tx_bytes,
				 sent_by(opcode, n, c, root, count * es));
		/*
		 * Reduce-scatter folds where the ring needs it, its last fold
		 * into the output, in place too: no copy in device memory
		 * (on one chip its input is its output: one copy).
		 */
		if (opcode == NNP_CMD_REDUCE_SCATTER && n > 1)
			assert_int_equal(after.local_bytes, before[c].local_bytes);
	}
}

static void ring_collectives(unsigned int n)
{
	const uint64_t counts[] = { 0, 1, 5, 20000 };
	const unsigned int dtypes[] = { NNP_DTYPE_F32, NNP_DTYPE_BF16, NNP_DTYPE_I64 };
	unsigned int k, t, op;

	ring_up(n);
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		for (t = 0; t < sizeof(dtypes) / sizeof(dtypes[0]); t++) {
			bool in_place = (k + t) & 1;

			coll_case(n, NNP_CMD_BROADCAST, dtypes[t], 0, counts[k],
				  in_place, (k + t) % n);
			coll_case(n, NNP_CMD_ALLGATHER, dtypes[t], 0, counts[k],
				  in_place, 0);
			for (op = 0; op < NNP_OP_COUNT; op++) {
				coll_case(n, NNP_CMD_REDUCE_SCATTER, dtypes[t], op,
					  counts[k], (k + t + op) & 1, 0);
				coll_case(n, NNP_CMD_REDUCE, dtypes[t], op, counts[k],
					  (k + t + op) & 1, (k + t + op) % n);
			}
		}
		/* Bytes (U8, v1.15): moved exactly, odd counts included. */
		coll_case(n, NNP_CMD_BROADCAST, NNP_DTYPE_U8, 0, counts[k], k & 1,
			  (k + 1) % n);
		coll_case(n, NNP_CMD_ALLGATHER, NNP_DTYPE_U8, 0, counts[k], !(k & 1), 0);
	}
	ring_down(n);
}

static void test_collectives_1_chip(void **state)
{
	(void)state;
	ring_collectives(1);
}

static void test_collectives_2_chips(void **state)
{
	(void)state;
	ring_collectives(2);
}

static void test_collectives_3_chips(void **state)
{
	(void)state;
	ring_collectives(3);
}

static void test_collectives_8_chips(void **state)
{
	(void)state;
	ring_collectives(8);
}

/*
 * Eight chips and one thread to run them all: every collective parks
 * while it waits for another chip, so the one thread makes progress on
 * all of them; exact results and link bytes as with a thread a chip.
 */
static void test_8_chips_one_worker_thread(void **state)
{
	(void)state;
	one_worker = true;
	ring_allreduce(8);
	ring_collectives(8);
}

/* The tests after it get a thread a chip again, even if it failed. */
static int thread_per_chip(void **state)
{
	(void)state;
	one_worker = false;
	return 0;
}

/*
 * Chunks cross to the next chip as descriptors of this chip's memory: a
 * sender must not write over a chunk (reduce-scatter folds into the buffer
 * it lent two steps before, allreduce's allgather overwrites what its
 * reduce-scatter lent) nor end before a slow next chip has read it. Many
 * chunks a step, a full send window, each chip slow in turn: byte-exact.
 */
#define SLOW_COUNT	(160u << 10)	/* floats a rank: 5 chunks a step */
#define SLOW_NAP_US	300

static void test_slow_receiver(void **state)
{
	unsigned int n, slow;

	(void)state;
	for (n = 3; n <= 4; n++) {
		ring_up(n);
		for (slow = 0; slow < n; slow++) {
			bool in_place = slow & 1;

			chips[slow].nap_us = SLOW_NAP_US;
			allreduce_case(n, NNP_DTYPE_F32, NNP_OP_SUM, SLOW_COUNT,
				       in_place);
			coll_case(n, NNP_CMD_REDUCE_SCATTER, NNP_DTYPE_F32,
				  NNP_OP_SUM, SLOW_COUNT, in_place, 0);
			coll_case(n, NNP_CMD_REDUCE_SCATTER, NNP_DTYPE_I32,
				  NNP_OP_AVG, SLOW_COUNT, !in_place, 0);
			coll_case(n, NNP_CMD_ALLGATHER, NNP_DTYPE_F32, 0,
				  SLOW_COUNT, in_place, 0);
			coll_case(n, NNP_CMD_BROADCAST, NNP_DTYPE_F32, 0,
				  SLOW_COUNT, in_place, (slow + 1) % n);
			chips[slow].nap_us = 0;
		}
		ring_down(n);
	}
}

/*
 * The ring is wired chip 0 -> 1 -> 2 -> 3 -> 4 but the ranks sit on it in
 * another order: results follow ranks, not positions.
 */
static void test_ring_not_in_rank_order(void **state)
{
	const uint32_t order[5] = { 3, 0, 4, 2, 1 };
	unsigned int op;

	(void)state;
	memcpy(rank_of, order, sizeof(order));
	ring_up(5);
	coll_case(5, NNP_CMD_BROADCAST, NNP_DTYPE_I32, 0, 70001, false, 4);
	coll_case(5, NNP_CMD_BROADCAST, NNP_DTYPE_I32, 0, 3, true, 2);
	coll_case(5, NNP_CMD_ALLGATHER, NNP_DTYPE_F16, 0, 40000, false, 0);
	coll_case(5, NNP_CMD_ALLGATHER, NNP_DTYPE_F16, 0, 2, true, 0);
	for (op = 0; op < NNP_OP_COUNT; op++) {
		coll_case(5, NNP_CMD_REDUCE_SCATTER, NNP_DTYPE_I32, op, 33333, op & 1, 0);
		allreduce_case(5, NNP_DTYPE_F32, op, 99999, op & 1);
	}
	ring_down(5);
}

static void test_comm_order_checks(void **state)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_COMM_CREATE, .addr = H_AQ_DATA, .len = 12,
	};
	struct nnp_hw_comm_args a = {
		.ctx = CTX, .comm = 9, .nranks = 3, .rank = 1,
		.send_port = 0, .recv_port = 1,
	};
	uint32_t *order;
	struct fw_harness *h;

	(void)state;
	ring_up(1);
	h = chips[0].h;
	order = fw_harness_host_ptr(h, H_AQ_DATA);
	memcpy(c.args, &a, sizeof(a));
	/* Not a permutation: a rank twice, a rank out of range. */
	order[0] = 0, order[1] = 2, order[2] = 2;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	order[1] = 3;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	/* The wrong length for nranks. */
	order[1] = 1;
	c.len = 8;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	c.len = 12;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
	ring_down(1);
}

/* SEND of @len bytes at @off on chip @from, port 0; RECV on chip @from + 1. */
static void p2p_pair(unsigned int from, uint64_t len, uint64_t soff, uint64_t doff,
		     uint32_t skey, uint32_t dkey, uint64_t rlen)
{
	struct nnp_hw_queue_cmd snd = {
		.opcode = NNP_CMD_SEND, .src_key = skey, .src_off = soff, .len = len,
		.value = NNP_P2P_VALUE(COMM, 0),
	};
	struct nnp_hw_queue_cmd rcv = {
		.opcode = NNP_CMD_RECV, .dst_key = dkey, .dst_off = doff, .len = rlen,
		.value = NNP_P2P_VALUE(COMM, 1),
	};

	run_on(from, from + 1, snd);
	run_on(from + 1, from + 2, rcv);
	join(from, from + 2);
}

static uint32_t comm_status(unsigned int chip, uint16_t *status)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_STATUS };
	uint32_t result = 0xdead;

	c.args[0] = CTX;
	c.args[1] = COMM;
	*status = fw_harness_admin(chips[chip].h, c, &result);
	return result;
}

/* Chip @i's completion of its last command on queue 0. */
static const struct nnp_hw_cqe *last_cqe(unsigned int i)
{
	const struct nnp_hw_cqe *cq = fw_harness_host_ptr(chips[i].h, H_QCQ(0));

	return &cq[chips[i].slot];
}

static void test_point_to_point(void **state)
{
	const uint64_t lens[] = { 0, 1, 65537, 300000 };
	struct nnp_hw_counters before[2], after;
	uint32_t k0, k1, hk = 0;
	struct nnp_hw_key_args host = {
		.ctx = CTX, .type = NNP_KEY_TYPE_HOST, .rights = NNP_KEY_READ,
		.length = 4096,
	};
	uint8_t *m0, *m1;
	unsigned int i;
	uint16_t st;
	uint64_t j;

	(void)state;
	ring_up(3);
	m0 = chips[0].h->dev_mem + DATA;
	m1 = chips[1].h->dev_mem + DATA;
	k0 = fw_harness_dev_key(chips[0].h, CTX, DATA, 1 << 20, NNP_KEY_READ | NNP_KEY_WRITE);
	k1 = fw_harness_dev_key(chips[1].h, CTX, DATA, 1 << 20, NNP_KEY_READ | NNP_KEY_WRITE);
	for (i = 0; i < 4; i++) {
		memset(m1, GUARD, 1 << 20);
		for (j = 0; j < lens[i]; j++)
			m0[16 + j] = (uint8_t)(j * 7 + i);
		before[0] = fw_harness_counters(chips[0].h);
		before[1] = fw_harness_counters(chips[1].h);
		p2p_pair(0, lens[i], 16, 33, k0, k1, lens[i]);
		assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
		assert_int_equal(chips[1].status, NNP_STATUS_SUCCESS);
		assert_memory_equal(m1 + 33, m0 + 16, lens[i]);
		assert_int_equal(m1[32], GUARD);
		assert_int_equal(m1[33 + lens[i]], GUARD);
		after = fw_harness_counters(chips[0].h);
		assert_int_equal(after.icl_tx_bytes - before[0].icl_tx_bytes, lens[i]);
		assert_int_equal(after.host_dma_bytes, before[0].host_dma_bytes);
		after = fw_harness_counters(chips[1].h);
		assert_int_equal(after.icl_rx_bytes - before[1].icl_rx_bytes, lens[i]);
		assert_int_equal(after.host_dma_bytes, before[1].host_dma_bytes);
	}

	/* Two messages sent before either is received arrive in order. */
	memset(m0, 1, 100);
	memset(m0 + 100, 2, 100);
	run_on(0, 1, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_SEND, .src_key = k0, .len = 100,
		.value = NNP_P2P_VALUE(COMM, 0) });
	join(0, 1);
	run_on(0, 1, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_SEND, .src_key = k0, .src_off = 100, .len = 100,
		.value = NNP_P2P_VALUE(COMM, 0) });
	join(0, 1);
	run_on(1, 2, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_RECV, .dst_key = k1, .dst_off = 1000, .len = 100,
		.value = NNP_P2P_VALUE(COMM, 1) });
	join(1, 2);
	run_on(1, 2, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_RECV, .dst_key = k1, .dst_off = 2000, .len = 100,
		.value = NNP_P2P_VALUE(COMM, 1) });
	join(1, 2);
	assert_int_equal(chips[1].status, NNP_STATUS_SUCCESS);
	assert_int_equal(m1[1000], 1);
	assert_int_equal(m1[1099], 1);
	assert_int_equal(m1[2000], 2);

	/*
	 * The two ends disagree on the length: the receiver refuses it,
	 * MISMATCH naming the 100 bytes that came and their sender (v1.27).
	 */
	p2p_pair(0, 100, 0, 0, k0, k1, 200);
	assert_int_equal(chips[1].status, NNP_STATUS_MISMATCH);
	assert_int_equal(last_cqe(1)->result, 100);
	assert_int_equal(last_cqe(1)->rsvd, NNP_MISMATCH_WHO(0, NNP_MISMATCH_LENGTH));
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	/*
	 * Its communicator failed, and the peers hear of it (v1.27): the
	 * sender, done, and chip 2, idle, which would otherwise wait out
	 * their timeout in their next collective with chip 1.
	 */
	fw_chips_run_one_thread(&chips[1], 1);
	assert_int_equal(comm_status(1, &st), NNP_STATUS_MISMATCH);
	assert_int_equal(comm_status(0, &st), NNP_STATUS_ABORTED);
	assert_int_equal(comm_status(2, &st), NNP_STATUS_ABORTED);

	/* A sender refused host memory tells the receiver at once. */
	memcpy(fw_harness_host_ptr(chips[0].h, H_AQ_DATA),
	       &(uint64_t){ HOST_MEM_BASE + 0x100000 }, 8);
	assert_int_equal(fw_harness_key_register(chips[0].h, host, H_AQ_DATA, 8, &hk),
			 NNP_STATUS_SUCCESS);
	for (i = 0; i < 2; i++) {
		struct nnp_hw_admin_cmd r = { .opcode = NNP_ADMIN_QUEUE_RESET };

		r.args[0] = CTX;
		assert_int_equal(fw_harness_admin(chips[i].h, r, NULL), NNP_STATUS_SUCCESS);
		chips[i].h->q_tail[0] = 0;
		chips[i].posted = 0;
	}
	/*
	 * At once: told nothing, the receiver would wait out its 30 s
	 * timeout, and the chip's thread gives up (0xffff) well before.
	 */
	p2p_pair(0, 64, 0, 0, hk, k1, 64);
	assert_int_equal(chips[0].status, NNP_STATUS_INVALID_FIELD);
	assert_int_equal(chips[1].status, NNP_STATUS_ABORTED);
	ring_down(3);
}

/*
 * A RECV of another length fails chip 1's communicator, which the
 * program destroys at once, before a worker of chip 1 ran again to pass
 * the abort on: the destroy sends it, and the peers hear of it all the
 * same (a failed communicator sends no leave).
 */
static void test_failed_receive_destroyed_tells_peers(void **state)
{
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_COMM_DESTROY };
	uint32_t k0, k1;
	uint16_t st;

	(void)state;
	ring_up(3);
	k0 = fw_harness_dev_key(chips[0].h, CTX, DATA, 4096, NNP_KEY_READ);
	k1 = fw_harness_dev_key(chips[1].h, CTX, DATA, 4096, NNP_KEY_WRITE);
	p2p_pair(0, 100, 0, 0, k0, k1, 200);
	assert_int_equal(chips[1].status, NNP_STATUS_MISMATCH);
	d.args[0] = CTX;
	d.args[1] = COMM;
	assert_int_equal(fw_harness_admin(chips[1].h, d, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(comm_status(0, &st), NNP_STATUS_ABORTED);
	assert_int_equal(comm_status(2, &st), NNP_STATUS_ABORTED);
	ring_down(3);
}

static void test_point_to_point_checks(void **state)
{
	struct nnp_hw_queue_cmd c = { .opcode = NNP_CMD_SEND, .len = 8 };

	(void)state;
	ring_up(1);
	c.src_key = fw_harness_dev_key(chips[0].h, CTX, DATA, 4096, NNP_KEY_READ);
	c.value = NNP_P2P_VALUE(COMM, 4);	/* the harness chip has 4 ports */
	run_on(0, 1, c);
	join(0, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_INVALID_FIELD);
	ring_down(1);
	ring_up(1);
	c.src_key = fw_harness_dev_key(chips[0].h, CTX, DATA, 4096, NNP_KEY_READ);
	c.value = NNP_P2P_VALUE(COMM + 1, 0);	/* no such communicator */
	run_on(0, 1, c);
	join(0, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_NOT_FOUND);
	ring_down(1);
	ring_up(1);
	c.value = NNP_P2P_VALUE(COMM, 0) | 1ull << 40;	/* reserved bits */
	run_on(0, 1, c);
	join(0, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_INVALID_FIELD);
	ring_down(1);
}

/*
 * Chip 3 never starts, so chips 0..2 are inside the collective waiting on
 * each other; taking a link down then fails every one of them at once, not
 * after the timeout. With the link back up, the next allreduce works.
 */
static void test_link_down_mid_collective(void **state)
{
	const unsigned int n = 4;
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = 1000,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
	unsigned int c;

	(void)state;
	ring_up(n);
	for (c = 0; c < n - 1; c++) {
		cmd.src_key = fw_harness_dev_key(chips[c].h, CTX, DATA, 4096,
						 NNP_KEY_READ | NNP_KEY_WRITE);
		cmd.dst_key = cmd.src_key;
		run_on(c, c + 1, cmd);
	}
	fw_chips_wait_parked(chips, n - 1);
	nnp_fw_link_set(chips[1].h->fw, 0, false);
	join(0, n - 1);
	/*
	 * At once, not at the timeout: that is 30 s, the chips' threads
	 * give up (0xffff) well before, and none ends PEER_TIMEOUT.
	 */
	for (c = 0; c < n - 1; c++) {
		uint16_t st = chips[c].status;

		print_message("  chip %u: status 0x%x\n", c, st);
		assert_true(st == NNP_STATUS_LINK_DOWN || st == NNP_STATUS_ABORTED);
		assert_true(nnp_fw_reg_read(chips[c].h->fw, NNP_DOORBELL(0) + NNP_DB_STATUS) &
			    NNP_QUEUE_STATUS_ERROR);
	}

	/*
	 * Link back, queues reset and the communicator made again with a new
	 * epoch: the whole ring works again.
	 */
	nnp_fw_link_set(chips[1].h->fw, 0, true);
	for (c = 0; c < n; c++) {
		struct nnp_hw_admin_cmd r = { .opcode = NNP_ADMIN_QUEUE_RESET };
		struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_COMM_DESTROY };

		r.args[0] = d.args[0] = CTX;
		r.args[1] = 0;
		d.args[1] = COMM;
		assert_int_equal(fw_harness_admin(chips[c].h, r, NULL), NNP_STATUS_SUCCESS);
		assert_int_equal(fw_harness_admin(chips[c].h, d, NULL), NNP_STATUS_SUCCESS);
		chips[c].h->q_tail[0] = 0;
		chips[c].posted = 0;
	}
	comm_create(n, 2);
	allreduce_case(n, NNP_DTYPE_F32, NNP_OP_SUM, 5000, false);
	ring_down(n);
}

/*
 * An i32 sum of @count elements on the n chips of the ring, the last chip
 * @late_ms late: the others start and wait, every chip's clock jumps
 * @late_ms (the test does not wait that long), then the last one starts;
 * if @past_timeout, once the others have ended, as its data come first
 * would let them go on. Each chip's status is in chips[].status; *@exact
 * says whether every chip holds the exact sum.
 */
static void late_allreduce(unsigned int n, uint64_t count, uint64_t late_ms,
			   bool past_timeout, bool *exact)
{
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = count,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
	uint32_t key[MAX_CHIPS];
	unsigned int c;
	uint8_t want[8];
	uint64_t i;

	for (c = 0; c < n; c++) {
		key[c] = fw_harness_dev_key(chips[c].h, CTX, DATA, count * 4,
					    NNP_KEY_READ | NNP_KEY_WRITE);
		for (i = 0; i < count; i++)
			store(NNP_DTYPE_I32, chips[c].h->dev_mem + DATA, i,
			      input(c, i, NNP_OP_SUM));
		chips[c].h->real_clock = true;
	}
	for (c = 0; c + 1 < n; c++) {
		cmd.src_key = cmd.dst_key = key[c];
		run_on(c, c + 1, cmd);
	}
	fw_chips_wait_parked(chips, n - 1);
	for (c = 0; c < n; c++)
		fw_harness_advance_ms(chips[c].h, late_ms);
	if (past_timeout)
		join(0, n - 1);
	cmd.src_key = cmd.dst_key = key[n - 1];
	run_on(n - 1, n, cmd);
	join(past_timeout ? n - 1 : 0, n);
	*exact = true;
	for (c = 0; c < n; c++)
		for (i = 0; i < count; i++) {
			expect(NNP_DTYPE_I32, NNP_OP_SUM, n, i, want);
			if (memcmp(chips[c].h->dev_mem + DATA + i * 4, want, 4))
				*exact = false;
		}
}

/*
 * A rank 5 s late is not dead: the others wait for it with a communicator
 * timeout of 10 s, or none, and the allreduce is exact on every chip. The
 * device's default timeout (COLL_TIMEOUT_MS here) gives up on one as late.
 */
static void test_late_rank_is_not_dead(void **state)
{
	const uint32_t timeouts[] = { 10000, NNP_HW_COMM_TIMEOUT_NEVER };
	const uint64_t late[] = { 5000, 24 * 3600 * 1000 };
	unsigned int k, c;
	bool exact;

	(void)state;
	for (k = 0; k < 2; k++) {
		comm_timeout_ms = timeouts[k];
		ring_up(3);
		late_allreduce(3, 40000, late[k], false, &exact);
		for (c = 0; c < 3; c++)
			assert_int_equal(chips[c].status, NNP_STATUS_SUCCESS);
		assert_true(exact);
		ring_down(3);
	}
	comm_timeout_ms = 0;
	ring_up(3);
	late_allreduce(3, 40000, COLL_TIMEOUT_MS, true, &exact);
	assert_true(chips[0].status == NNP_STATUS_PEER_TIMEOUT ||
		    chips[1].status == NNP_STATUS_PEER_TIMEOUT);
	for (c = 0; c < 3; c++)
		assert_true(chips[c].status == NNP_STATUS_PEER_TIMEOUT ||
			    chips[c].status == NNP_STATUS_ABORTED);
	ring_down(3);
}

/*
 * A communicator's timeout shorter than the device's is the one kept: alone
 * on the ring, chip 0 waits 100 ms on its clock, moved by hand, and not
 * 1 ms less.
 */
static void test_short_comm_timeout_fires(void **state)
{
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = 1000,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
	struct fw_harness *h;

	(void)state;
	comm_timeout_ms = 100;
	ring_up(2);
	h = chips[0].h;
	cmd.src_key = fw_harness_dev_key(h, CTX, DATA, 4096,
					 NNP_KEY_READ | NNP_KEY_WRITE);
	cmd.dst_key = cmd.src_key;
	fw_chip_post(&chips[0], cmd);
	h->real_clock = false;
	nnp_fw_run_queues(h->fw);
	fw_harness_advance_ms(h, 99);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_DOORBELL(0) + NNP_DB_ERROR), 0);
	fw_harness_advance_ms(h, 1);
	fw_chips_run_one_thread(&chips[0], 1);
	assert_int_equal(chips[0].status, NNP_STATUS_PEER_TIMEOUT);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_DOORBELL(0) + NNP_DB_ERROR),
			 NNP_STATUS_PEER_TIMEOUT);
	ring_down(2);
}

/*
 * Chips 0 and 1 wait in an allreduce chip 2 never joins, with no timeout:
 * COMM_DESTROY with ABORT on chip 0 ends its command and, passed down the
 * ring, chip 1's, at once. COMM_STATUS says ABORTED on chip 1 and on chip
 * 2, which had no command to end; the destroyed communicator is NOT_FOUND.
 * A command that starts after the abort (one queued behind those it
 * ended) ends ABORTED too, not NOT_FOUND, which only a plain destroy
 * gives. Remade, the ring works.
 */
static void test_comm_abort(void **state)
{
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_COMM_DESTROY };
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = 100000,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
	struct nnp_hw_admin_cmd r = { .opcode = NNP_ADMIN_QUEUE_RESET };
	uint16_t st;
	unsigned int c;

	(void)state;
	r.args[0] = CTX;
	comm_timeout_ms = NNP_HW_COMM_TIMEOUT_NEVER;
	ring_up(3);
	for (c = 0; c < 2; c++) {
		cmd.src_key = fw_harness_dev_key(chips[c].h, CTX, DATA, 400000,
						 NNP_KEY_READ | NNP_KEY_WRITE);
		cmd.dst_key = cmd.src_key;
		run_on(c, c + 1, cmd);
	}
	fw_chips_wait_parked(chips, 2);
	assert_int_equal(comm_status(0, &st), 0);
	assert_int_equal(st, NNP_STATUS_SUCCESS);
	d.args[0] = CTX;
	d.args[1] = COMM;
	d.args[2] = 2;		/* no such flag */
	assert_int_equal(fw_harness_admin(chips[0].h, d, NULL), NNP_STATUS_INVALID_FIELD);
	d.args[2] = NNP_HW_COMM_DESTROY_ABORT;
	assert_int_equal(fw_harness_admin(chips[0].h, d, NULL), NNP_STATUS_SUCCESS);
	/* With no timeout, only the abort ends them (else 0xffff, at 5 s). */
	join(0, 2);
	assert_int_equal(chips[0].status, NNP_STATUS_ABORTED);
	assert_int_equal(chips[1].status, NNP_STATUS_ABORTED);
	comm_status(0, &st);
	assert_int_equal(st, NNP_STATUS_NOT_FOUND);
	assert_int_equal(comm_status(1, &st), NNP_STATUS_ABORTED);
	assert_int_equal(st, NNP_STATUS_SUCCESS);
	assert_int_equal(comm_status(2, &st), NNP_STATUS_ABORTED);
	assert_int_equal(st, NNP_STATUS_SUCCESS);

	for (c = 0; c < 3; c++) {
		assert_int_equal(fw_harness_admin(chips[c].h, r, NULL), NNP_STATUS_SUCCESS);
		d.args[2] = 0;
		assert_int_equal(fw_harness_admin(chips[c].h, d, NULL),
				 c == 0 ? NNP_STATUS_NOT_FOUND : NNP_STATUS_SUCCESS);
		chips[c].h->q_tail[0] = 0;
		chips[c].posted = 0;
	}
	run_on(0, 2, cmd);
	join(0, 2);
	assert_int_equal(chips[0].status, NNP_STATUS_ABORTED);
	assert_int_equal(chips[1].status, NNP_STATUS_NOT_FOUND);
	for (c = 0; c < 2; c++) {
		assert_int_equal(fw_harness_admin(chips[c].h, r, NULL), NNP_STATUS_SUCCESS);
		chips[c].h->q_tail[0] = 0;
		chips[c].posted = 0;
	}
	comm_create(3, 2);
	allreduce_case(3, NNP_DTYPE_F32, NNP_OP_SUM, 5000, false);
	ring_down(3);
}

/*
 * A failure reaches every rank, whatever it is doing. Chips 0 and 1 of a
 * ring of 3 wait, with no timeout, in an allreduce chip 2 has not started:
 * chip 0 for chip 2's data, chip 1 for chip 2 to read what it lent. The
 * link from chip 1 to chip 2 goes down: chip 1 fails LINK_DOWN, and its
 * abort, lost on that link, goes back to chip 0 as well, which ends
 * ABORTED at once. Chip 2, idle at the link's other end, fails the
 * communicator as the link goes (v1.23): it says LINK_DOWN and its next
 * allreduce ends ABORTED at once.
 */
static void test_failure_reaches_every_rank(void **state)
{
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = 100000,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
	uint32_t key[3];
	unsigned int c;
	uint16_t st;

	(void)state;
	comm_timeout_ms = NNP_HW_COMM_TIMEOUT_NEVER;
	ring_up(3);
	for (c = 0; c < 3; c++)
		key[c] = fw_harness_dev_key(chips[c].h, CTX, DATA, 400000,
					    NNP_KEY_READ | NNP_KEY_WRITE);
	for (c = 0; c < 2; c++) {
		cmd.src_key = cmd.dst_key = key[c];
		run_on(c, c + 1, cmd);
	}
	fw_chips_wait_parked(chips, 2);
	nnp_fw_link_set(chips[1].h->fw, 0, false);
	/* With no timeout, only the failure ends them (else 0xffff, at 5 s). */
	join(0, 2);
	assert_int_equal(chips[1].status, NNP_STATUS_LINK_DOWN);
	assert_int_equal(chips[0].status, NNP_STATUS_ABORTED);
	assert_int_equal(comm_status(2, &st), NNP_STATUS_LINK_DOWN);
	assert_int_equal(st, NNP_STATUS_SUCCESS);
	cmd.src_key = cmd.dst_key = key[2];
	run_on(2, 3, cmd);
	join(2, 3);
	assert_int_equal(chips[2].status, NNP_STATUS_ABORTED);
	ring_down(3);
}

static void test_collective_checks(void **state)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = CTX, .comm = COMM, .nranks = 2, .rank = 0,
		.send_port = 0, .recv_port = 1,
	};
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = 4,
		.value = NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_SUM, COMM, 0),
	};
	struct fw_harness *h;
	uint32_t dk, hk = 0, i;
	struct nnp_hw_key_args host = {
		.ctx = CTX, .type = NNP_KEY_TYPE_HOST, .rights = NNP_KEY_READ | NNP_KEY_WRITE,
		.length = 4096,
	};
	uint64_t *list;

	(void)state;
	ring_up(1);
	h = chips[0].h;
	memcpy(c.args, &a, sizeof(a));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_BUSY);
	a.comm = 6;
	a.rank = 2;
	memcpy(c.args, &a, sizeof(a));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	a.rank = 0;
	a.send_port = 4;	/* the harness chip has 4 ports */
	memcpy(c.args, &a, sizeof(a));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	a.send_port = 0;
	a.flags = 1u << 31;	/* a flag the device does not know */
	memcpy(c.args, &a, sizeof(a));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	a.flags = 0;

	dk = fw_harness_dev_key(h, CTX, DATA, 4096, NNP_KEY_READ | NNP_KEY_WRITE);
	list = fw_harness_host_ptr(h, H_AQ_DATA);
	list[0] = HOST_MEM_BASE + 0x100000;
	assert_int_equal(fw_harness_key_register(h, host, H_AQ_DATA, 8, &hk),
			 NNP_STATUS_SUCCESS);
	/* Collectives never take host memory. */
	cmd.src_key = hk;
	cmd.dst_key = dk;
	run_on(0, 1, cmd);
	join(0, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_INVALID_FIELD);
	ring_down(1);

	/* A root one past the last rank (the queue above is stopped). */
	ring_up(2);
	for (i = 0; i < 2; i++) {
		dk = fw_harness_dev_key(chips[i].h, CTX, DATA, 4096,
					NNP_KEY_READ | NNP_KEY_WRITE);
		cmd = (struct nnp_hw_queue_cmd){
			.opcode = NNP_CMD_BROADCAST, .len = 4, .src_key = dk,
			.dst_key = dk,
			.value = NNP_COLL_VALUE(NNP_DTYPE_F32, 0, COMM, 2),
		};
		run_on(i, i + 1, cmd);
	}
	join(0, 2);
	assert_int_equal(chips[0].status, NNP_STATUS_INVALID_FIELD);
	assert_int_equal(chips[1].status, NNP_STATUS_INVALID_FIELD);
	ring_down(2);
}

/* COMM_TOPOLOGY on @chip with topology @t (its data buffer @len bytes). */
static uint16_t comm_topology(unsigned int chip, uint32_t comm,
			      const struct nnp_hw_comm_topology *t, uint32_t len)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_COMM_TOPOLOGY, .addr = H_AQ_DATA, .len = len,
	};

	c.args[0] = CTX;
	c.args[1] = comm;
	memcpy(fw_harness_host_ptr(chips[chip].h, H_AQ_DATA), t, sizeof(*t));
	return fw_harness_admin(chips[chip].h, c, NULL);
}

/*
 * COMM_TOPOLOGY (v1.7) refuses each bad field, then makes the ring of 4
 * (port 0 to the next chip, port 1 from the previous) run BIDIR: the
 * same exact sums, now 3S/4 out of each of ports 0 and 1 instead of the
 * ring's 3S/2 out of port 0 alone.
 */
static void test_comm_topology(void **state)
{
	const struct nnp_hw_comm_topology ok = {
		.algo = NNP_HW_ALGO_BIDIR,
		.dim[0] = { .n = 4, .pairs = 1, .next_port = { 0 },
			    .prev_port = { 1 } },
	};
	struct nnp_hw_comm_topology t;
	struct nnp_hw_port_info p[4];
	unsigned int c;

	(void)state;
	ring_up(4);
	assert_int_equal(comm_topology(0, COMM + 1, &ok, sizeof(ok)),
			 NNP_STATUS_NOT_FOUND);
	assert_int_equal(comm_topology(0, COMM, &ok, sizeof(ok) - 4),
			 NNP_STATUS_INVALID_FIELD);
	t = ok, t.algo = NNP_HW_ALGO_TORUS + 1;
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);
	t = ok, t.rsvd = 1;
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);
	t = ok, t.dim[1].rsvd = 1;
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);
	t = ok, t.dim[0].n = 3;		/* not nranks */
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);
	t = ok, t.dim[0].pos = 4;
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);
	t = ok, t.dim[0].pairs = 3;
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);
	t = ok, t.dim[0].prev_port[0] = 4;	/* the harness's chips have 4 */
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);
	t = ok, t.dim[1] = t.dim[0], t.dim[0].n = 0;
	assert_int_equal(comm_topology(0, COMM, &t, sizeof(t)), NNP_STATUS_INVALID_FIELD);

	for (c = 0; c < 4; c++) {
		t = ok, t.dim[0].pos = c;
		assert_int_equal(comm_topology(c, COMM, &t, sizeof(t)), NNP_STATUS_SUCCESS);
	}
	allreduce_case(4, NNP_DTYPE_I32, NNP_OP_SUM, 1024, false);
	for (c = 0; c < 4; c++) {
		fw_harness_ports(chips[c].h, p);
		assert_int_equal(p[0].tx_bytes, 3 * 4096 / 4);
		assert_int_equal(p[1].tx_bytes, 3 * 4096 / 4);
	}
	ring_down(4);
}

static void test_port_info(void **state)
{
	struct nnp_hw_port_info p[4];
	struct nnp_hw_counters c;
	struct nnp_hw_admin_cmd small = {
		.opcode = NNP_ADMIN_GET_PORTS, .addr = H_AQ_DATA, .len = 4 * 48 - 1,
	};

	(void)state;
	ring_up(3);
	fw_harness_ports(chips[0].h, p);
	/* Harness chips all have id 7: chip 0 port 0 goes to port 1. */
	assert_int_equal(p[0].state, NNP_PORT_WIRED | NNP_PORT_UP);
	assert_int_equal(p[0].peer, NNP_PORT_PEER(7, 1));
	assert_int_equal(p[1].state, NNP_PORT_WIRED | NNP_PORT_UP);
	assert_int_equal(p[1].peer, NNP_PORT_PEER(7, 0));
	assert_int_equal(p[2].state, 0);
	assert_int_equal(p[3].state, 0);

	allreduce_case(3, NNP_DTYPE_I64, NNP_OP_SUM, 3000, true);
	fw_harness_ports(chips[0].h, p);
	c = fw_harness_counters(chips[0].h);
	assert_int_equal(p[0].tx_bytes, c.icl_tx_bytes);
	assert_int_equal(p[1].rx_bytes, c.icl_rx_bytes);
	assert_true(p[0].tx_packets > 0);
	assert_int_equal(p[0].rx_bytes, 0);
	assert_int_equal(p[0].errors, 0);

	nnp_fw_link_set(chips[1].h->fw, 1, false);	/* chip 0 -> chip 1 */
	fw_harness_ports(chips[0].h, p);
	assert_int_equal(p[0].state, NNP_PORT_WIRED);
	assert_int_equal(fw_harness_admin(chips[0].h, small, NULL),
			 NNP_STATUS_BUFFER_TOO_SMALL);
	ring_down(3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_half_and_bf16_conversions),
		cmocka_unit_test(test_reduce_ops_per_type),
		cmocka_unit_test(test_collective_checks),
		cmocka_unit_test(test_allreduce_1_chip),
		cmocka_unit_test(test_allreduce_2_chips),
		cmocka_unit_test(test_allreduce_3_chips),
		cmocka_unit_test(test_allreduce_4_chips),
		cmocka_unit_test(test_allreduce_8_chips),
		cmocka_unit_test(test_collectives_1_chip),
		cmocka_unit_test(test_collectives_2_chips),
		cmocka_unit_test(test_collectives_3_chips),
		cmocka_unit_test(test_collectives_8_chips),
		cmocka_unit_test_teardown(test_8_chips_one_worker_thread,
					  thread_per_chip),
		cmocka_unit_test(test_slow_receiver),
		cmocka_unit_test(test_ring_not_in_rank_order),
		cmocka_unit_test(test_comm_order_checks),
		cmocka_unit_test(test_point_to_point),
		cmocka_unit_test(test_failed_receive_destroyed_tells_peers),
		cmocka_unit_test(test_point_to_point_checks),
		cmocka_unit_test(test_link_down_mid_collective),
		cmocka_unit_test(test_late_rank_is_not_dead),
		cmocka_unit_test(test_short_comm_timeout_fires),
		cmocka_unit_test(test_comm_abort),
		cmocka_unit_test(test_failure_reaches_every_rank),
		cmocka_unit_test(test_port_info),
		cmocka_unit_test(test_comm_topology),
	};

	return cmocka_run_group_tests_name("fw_coll", tests, NULL, NULL);
}
