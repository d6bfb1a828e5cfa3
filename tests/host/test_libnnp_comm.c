// SPDX-License-Identifier: MIT
/*
 * libnnp communicator setup without devices: ring planning over ring,
 * torus and broken topologies, nnp_comm_split()'s groups and their rings
 * from every rank's entry, and the job rendezvous over TCP between
 * threads standing in for ranks (own root, NNP_COMM_ID, IPv4 and IPv6,
 * bad ranks, a missing rank timing out) and strangers at the root's
 * port; what the last error says about each failure.
 *
 * In detail (docs/testing.md has the summary):
 * `nnp_rank_link()` on one link broken one way at a time (our port down,
 * leading elsewhere or past our table; the peer's port past its table,
 * unwired, leading elsewhere or back on another port of ours): no link,
 * and `nnp_rank_port_to()` finds no port;
 * `nnp_comm_split()`'s groups from every rank's entry (`split_plan.c`) on
 * QEMU's `torus:2x2`: rows, keys 3..0 reversing the order, ties by parent
 * rank, `INT32_MIN`/`INT32_MAX` keys, any negative color in no group (NULL,
 * not even its own), exact members, new rank and chips, new rank 0's epoch
 * for all; a member whose ports could not be read fails its group with
 * COMM_FAILED and the exact last error, not the other group; rows and
 * columns planned as rings of up links, diagonals and three chips NO_PATH
 * with the exact last error naming the missing link by new rank, parent
 * rank and chip (where rank order wraps, for the three); ring planning:
 * rank order when it is a ring, a searched ring on a 2x4 torus, NO_PATH for
 * a line, a down link and unjoined chips, one link serving both directions,
 * the same chip twice refused; the fabric beyond the ring and `NNP_ALGO`
 * (`nnp_topo_plan()`, `nnp_comm_plan_algo()`): exact dimensions, positions
 * and ports of a ring of 4 (one pair, no torus; `rings`, `torus` and `tree`
 * refused with their exact last errors; any name on 1 rank), double-linked
 * rings of 6 (two pairs, no torus) and 4 (two pairs, and a 2x2 torus with
 * its exact ports), a hop of one link refusing `rings` by name, QEMU's
 * `torus:2x4`, `4x4` and `4x2` (rows of W along ports 0/1, columns along
 * 2/3), a 4x4 torus with every chip's ports numbered its own way and a 2x4
 * one with ranks not in row order, found and each dimension checked to be a
 * ring of links with four distinct ports a chip; the TCP rendezvous between
 * threads standing in for ranks (own root and its 64-bit epoch,
 * `NNP_COMM_ID`, a duplicate rank refused, a missing rank timing out, a
 * garbage id; an idle stranger at the root does not delay a 4-rank job;
 * hellos with nranks 0, over 0xffff or 1M, a rank past nranks, a rank twice
 * or another nranks are refused and the job goes on; a rank with a wrong
 * secret leaves the root, whose proof fails under it, with NNP_ERROR_IO and
 * its exact last error, and a hello sealed with a wrong secret after a good
 * open is dropped unanswered (0 bytes, then closed) without taking its rank
 * while the job goes on, and so is each of 72 secrets wrong in one byte's
 * top bit (every byte) or one bit (every bit of byte 32); 4 KiB of random
 * bytes dropped within 1 s, a hello cut short and left hanging dropped at
 * its own 5 s deadline (4-7 s, under a 30 s job deadline) and one cut short
 * and closed forgotten, the job then done within 2 s; a rank facing an
 * impostor at `NNP_COMM_ID`'s port that does not hold the secret and
 * answers a random proof, then a success with its own epoch and table: the
 * rank sends only its 48-byte version 2 open (no 8 bytes of the secret
 * anywhere in what it sent), leaves with NNP_ERROR_IO and the exact last
 * error naming the address, its epoch untouched and no table; a man in the
 * middle relaying a rank to an honest root of a second job with the same
 * secret and replaying the first job's honest answer (status success, that
 * job's epoch): NNP_ERROR_IO with its exact last error, the old epoch not
 * taken, while rank 0 gets the new job's own epoch; a rank facing a root
 * that holds the secret but answers badly: random bytes, a proof, reply or
 * table announcing 1 GiB, a reply cut short, a sealed reply whose status no
 * root sends (IO, VERSION, VERSION + 1, 0xb2b2b2b2, each named in the last
 * error) each NNP_ERROR_IO within 1 s with nothing allocated, a silent root
 * NNP_ERROR_TIMEOUT at `NNP_COMM_TIMEOUT_S` plus the 5 s a rank waits for
 * the root's word (7 s with 2 s); `NNP_COMM_ID` without a 16-64 character
 * `NNP_COMM_SECRET` refused naming it, and a process with another secret
 * cannot take a rank; a message longer than a hello refused before its body
 * is read, the refusal sealed for the connection; the root not reachable at
 * another local address than the id's; the root at `::1` through
 * `NNP_SOCKET_IFNAME==lo NNP_SOCKET_FAMILY=AF_INET6` and at
 * `NNP_COMM_ID=[::1]:port` with 3 ranks, `AF_INET` giving 127.0.0.1, an
 * unknown family refused; `NNP_SOCKET_IFNAME` prefix, `^` and `=` matching;
 * a rank that connects and opens 1 s before the 2 s deadline and finishes
 * its sealed hello 400 ms after it is admitted, hears success sealed with
 * its table, and rank 0 gets its table; the exact last error of a rank that
 * never joined ("rank 2 never joined the rendezvous at 127.0.0.1:PORT after
 * 1 s", on both ranks in), a root gone, a rank taken, a malformed
 * `NNP_COMM_ID`, a line with no ring (the rank short of links) and a figure
 * eight (the hop where rank order breaks))
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cmocka.h>

#include "boot_msg.h"
#include "bootstrap.h"
#include "comm.h"
#include "ring_plan.h"
#include "split.h"

#include "rank_tables.h"

/* Every hop of @ring is a link that is up, with the ports it names. */
static void assert_ring(const struct nnp_ring *ring, uint32_t n)
{
	uint32_t pos, seen = 0;

	for (pos = 0; pos < n; pos++) {
		uint32_t a = ring->order[pos], b = ring->order[(pos + 1) % n];
		uint32_t p = ring->send_port[a];

		assert_true(a < n);
		seen |= 1u << a;
		assert_true(info[a].ports[p].state & NNP_LINK_UP);
		assert_int_equal(info[a].ports[p].peer_chip, info[b].chip);
		assert_int_equal(ring->recv_port[b], info[a].ports[p].peer_port);
	}
	assert_int_equal(seen, (1u << n) - 1);
}

static void test_rank_order_ring(void **state)
{
	struct nnp_ring ring;
	uint32_t r;

	(void)state;
	chips(4);
	for (r = 0; r < 4; r++)
		wire(r, 0, (r + 1) % 4, 1);
	assert_int_equal(nnp_ring_plan(info, 4, &ring), NNP_SUCCESS);
	for (r = 0; r < 4; r++) {
		assert_int_equal(ring.order[r], r);
		assert_int_equal(ring.send_port[r], 0);
		assert_int_equal(ring.recv_port[r], 1);
	}
	nnp_ring_free(&ring);
}

/*
 * A link only one end reports is no link. Rank 0 says its port 0 leads to
 * rank 1's port 0, which rank 1 wires to rank 2: a ring over it would
 * arrive at rank 1 on the port rank 1 sends on. Port 2 is a link both
 * ends report.
 */
static void test_one_sided_link(void **state)
{
	struct nnp_ring ring;

	(void)state;
	chips(3);
	wire(0, 2, 1, 1);
	wire(1, 0, 2, 1);
	wire(2, 0, 0, 1);
	info[0].ports[0].state = NNP_LINK_WIRED | NNP_LINK_UP;
	info[0].ports[0].peer_chip = info[1].chip;
	info[0].ports[0].peer_port = 0;
	assert_int_equal(nnp_rank_port_to(info, 0, 1), 2);
	assert_int_equal(nnp_ring_plan(info, 3, &ring), NNP_SUCCESS);
	assert_ring(&ring, 3);
	assert_int_equal(ring.send_port[0], 2);
	assert_int_equal(ring.recv_port[1], 1);
	nnp_ring_free(&ring);
	/* Without port 2, only the one-sided claim joins 0 to 1: no ring. */
	info[0].ports[2].state = 0;
	info[1].ports[1].state = 0;
	assert_int_equal(nnp_ring_plan(info, 3, &ring), NNP_ERROR_NO_PATH);
}

/*
 * nnp_rank_link() on one link, broken one way at a time: each is no link,
 * and nnp_rank_port_to() finds no port. Rank 0's port 1 to rank 1's port
 * 2; rank 1 has 3 ports, so a peer port index of 3 is past its table even
 * though ports[3] holds a matching entry.
 */
static void test_rank_link_checks(void **state)
{
	uint32_t q = 99, i;

	(void)state;
	for (i = 0; i <= 8; i++) {
		chips(2);
		info[1].nports = 3;
		wire(0, 1, 1, 2);
		switch (i) {
		case 0:		/* whole: a link, back on port 2 */
			assert_true(nnp_rank_link(info, 0, 1, 1, &q));
			assert_int_equal(q, 2);
			assert_int_equal(nnp_rank_port_to(info, 0, 1), 1);
			assert_int_equal(nnp_rank_port_to(info, 1, 0), 2);
			continue;
		case 1:		/* our port not up */
			info[0].ports[1].state = NNP_LINK_WIRED;
			break;
		case 2:		/* our port leads to another chip */
			info[0].ports[1].peer_chip = 7;
			break;
		case 3:		/* our port index past our table */
			info[0].nports = 1;
			break;
		case 4:		/* the peer port index past the peer's table */
			wire(0, 1, 1, 3);
			break;
		case 5:		/* the peer's port not wired */
			info[1].ports[2].state = 0;
			break;
		case 6:		/* the peer's port leads to another chip */
			info[1].ports[2].peer_chip = 7;
			break;
		case 7:		/* the peer's port comes back on another port of ours */
			info[1].ports[2].peer_port = 0;
			break;
		case 8:		/* the peer port index past any table */
			info[0].ports[1].peer_port = NNP_MAX_PORTS;
			break;
		}
		assert_false(nnp_rank_link(info, 0, 1, 1, &q));
		assert_int_equal(nnp_rank_port_to(info, 0, 1), -1);
	}
}

/* A 2x4 torus in row-major rank order: rank order is no ring, one exists. */
static void test_torus_needs_search(void **state)
{
	const uint32_t w = 4, h = 2;
	struct nnp_ring ring;
	uint32_t x, y;

	(void)state;
	chips(w * h);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			wire(y * w + x, 0, y * w + (x + 1) % w, 1);
			if (y + 1 < h)
				wire(y * w + x, 2, (y + 1) * w + x, 3);
		}
	assert_int_equal(nnp_ring_plan(info, w * h, &ring), NNP_SUCCESS);
	assert_ring(&ring, w * h);
	assert_int_equal(ring.order[0], 0);
	nnp_ring_free(&ring);
}

static void test_no_ring(void **state)
{
	struct nnp_ring ring;

	(void)state;
	/* A line 0-1-2: no way back; the last error names an end. */
	chips(3);
	wire(0, 0, 1, 1);
	wire(1, 0, 2, 1);
	assert_int_equal(nnp_ring_plan(info, 3, &ring), NNP_ERROR_NO_PATH);
	assert_int_equal(nnp_comm_plan(info, 3, 7, &ring), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "no ring over the 3 ranks: rank 0 (chip 100) has an up link to 1 other rank, a ring needs 2");
	/* A ring with one link down. */
	wire(2, 0, 0, 1);
	info[2].ports[0].state = NNP_LINK_WIRED;
	info[0].ports[1].state = NNP_LINK_WIRED;
	assert_int_equal(nnp_ring_plan(info, 3, &ring), NNP_ERROR_NO_PATH);
	/* Two chips with no link at all. */
	chips(2);
	assert_int_equal(nnp_ring_plan(info, 2, &ring), NNP_ERROR_NO_PATH);
	/* One link joins two chips both ways. */
	wire(0, 3, 1, 2);
	assert_int_equal(nnp_ring_plan(info, 2, &ring), NNP_SUCCESS);
	assert_int_equal(ring.send_port[0], 3);
	assert_int_equal(ring.recv_port[1], 2);
	assert_int_equal(ring.send_port[1], 2);
	assert_int_equal(ring.recv_port[0], 3);
	nnp_ring_free(&ring);
	/* The same chip twice is a caller's mistake. */
	chips(2);
	info[1].chip = info[0].chip;
	assert_int_equal(nnp_ring_plan(info, 2, &ring), NNP_ERROR_INVALID_ARGUMENT);
	/* One rank needs no link. */
	chips(1);
	assert_int_equal(nnp_ring_plan(info, 1, &ring), NNP_SUCCESS);
	nnp_ring_free(&ring);
}

/* ---- the fabric beyond the ring: port pairs and tori (NNP_ALGO) ---- */

static void assert_dim(const struct nnp_dim *d, uint32_t n, uint32_t pos,
		       uint32_t pairs, uint32_t next0, uint32_t prev0,
		       uint32_t next1, uint32_t prev1)
{
	assert_int_equal(d->n, n);
	assert_int_equal(d->pos, pos);
	assert_int_equal(d->pairs, pairs);
	assert_int_equal(d->next_port[0], next0);
	assert_int_equal(d->prev_port[0], prev0);
	assert_int_equal(d->next_port[1], next1);
	assert_int_equal(d->prev_port[1], prev1);
}

/* Plan @n ranks of info[] as libnnp does, NNP_ALGO=@algo (NULL: unset). */
static nnp_result_t plan(uint32_t n, const char *algo, struct nnp_ring *ring,
			 struct nnp_topo *topo, enum nnp_algo *a)
{
	nnp_result_t res;

	if (algo)
		setenv("NNP_ALGO", algo, 1);
	else
		unsetenv("NNP_ALGO");
	assert_int_equal(nnp_comm_plan(info, n, 7, ring), NNP_SUCCESS);
	res = nnp_comm_plan_algo(info, n, ring, topo, a);
	unsetenv("NNP_ALGO");
	return res;
}

/*
 * Whatever the numbering, each dimension of a planned torus is a ring:
 * next_port of the chip at (x, y) is an up link to the chip one further
 * along, arriving on that chip's prev_port, and the four ports differ.
 */
static void assert_torus(const struct nnp_topo *t, uint32_t n)
{
	uint32_t grid[MAXN], seen = 0, r, d;

	assert_int_equal(t->w * t->h, n);
	for (r = 0; r < n; r++) {
		assert_true(t->torus[r][0].pos < t->w && t->torus[r][1].pos < t->h);
		grid[t->torus[r][1].pos * t->w + t->torus[r][0].pos] = r;
		seen |= 1u << (t->torus[r][1].pos * t->w + t->torus[r][0].pos);
	}
	assert_int_equal(seen, (1u << n) - 1);
	for (r = 0; r < n; r++) {
		uint32_t x = t->torus[r][0].pos, y = t->torus[r][1].pos, ports = 0;

		for (d = 0; d < 2; d++) {
			const struct nnp_dim *dim = &t->torus[r][d];
			uint32_t b = d ? grid[(y + 1) % t->h * t->w + x] :
				     grid[y * t->w + (x + 1) % t->w];
			uint32_t p = dim->next_port[0];

			assert_int_equal(dim->n, d ? t->h : t->w);
			assert_int_equal(dim->pairs, 1);
			assert_true(info[r].ports[p].state & NNP_LINK_UP);
			assert_int_equal(info[r].ports[p].peer_chip, info[b].chip);
			assert_int_equal(info[r].ports[p].peer_port,
					 t->torus[b][d].prev_port[0]);
			ports |= 1u << p | 1u << dim->prev_port[0];
		}
		assert_int_equal(__builtin_popcount(ports), 4);
	}
}

/* A ring of 4 on one link a hop: one pair, no torus; rings and torus refused. */
static void test_topo_ring_of_4(void **state)
{
	struct nnp_ring ring;
	struct nnp_topo t;
	enum nnp_algo a;
	uint32_t r;

	(void)state;
	chips(4);
	for (r = 0; r < 4; r++)
		wire(r, 0, (r + 1) % 4, 1);
	assert_int_equal(plan(4, NULL, &ring, &t, &a), NNP_SUCCESS);
	assert_int_equal(a, NNP_ALGO_AUTO);
	assert_int_equal(t.pairs, 1);
	assert_int_equal(t.w, 0);
	assert_null(t.torus);
	for (r = 0; r < 4; r++)
		assert_dim(&t.ring[r], 4, r, 1, 0, 1, 0, 0);
	nnp_topo_free(&t);
	assert_int_equal(plan(4, "Bidir", &ring, &t, &a), NNP_SUCCESS);
	assert_int_equal(a, NNP_ALGO_BIDIR);
	nnp_topo_free(&t);
	assert_int_equal(plan(4, "rings", &ring, &t, &a), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "NNP_ALGO=rings: the ring's hop from rank 0 (chip 100) to rank 1 (chip 103) has one link free, rings needs a second between every pair of neighbours");
	assert_null(t.ring);
	assert_int_equal(plan(4, "torus", &ring, &t, &a), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "NNP_ALGO=torus: the 4 ranks' chips make no 2D torus of up links");
	assert_int_equal(plan(4, "tree", &ring, &t, &a), NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(),
			    "NNP_ALGO=tree: not an allreduce algorithm (ring, bidir, rings, torus or auto)");
	nnp_ring_free(&ring);
	/* One rank: nothing crosses a link, whatever is asked. */
	chips(1);
	assert_int_equal(plan(1, "torus", &ring, &t, &a), NNP_SUCCESS);
	assert_dim(&t.ring[0], 1, 0, 1, 0, 0, 0, 0);
	nnp_topo_free(&t);
	nnp_ring_free(&ring);
}

/*
 * Two links between each pair of neighbours (ports 0-1 and 2-3): the
 * ring's second pair; and, 4 chips so joined, a 2x2 torus too.
 */
static void test_topo_double_ring(void **state)
{
	struct nnp_ring ring;
	struct nnp_topo t;
	enum nnp_algo a;
	uint32_t r;

	(void)state;
	chips(6);
	for (r = 0; r < 6; r++) {
		wire(r, 0, (r + 1) % 6, 1);
		wire(r, 2, (r + 1) % 6, 3);
	}
	assert_int_equal(plan(6, "RINGS", &ring, &t, &a), NNP_SUCCESS);
	assert_int_equal(a, NNP_ALGO_RINGS);
	assert_int_equal(t.pairs, 2);
	for (r = 0; r < 6; r++)
		assert_dim(&t.ring[r], 6, r, 2, 0, 1, 2, 3);
	assert_int_equal(t.w, 0);	/* each chip has two neighbours, not four */
	nnp_topo_free(&t);
	nnp_ring_free(&ring);

	chips(4);
	for (r = 0; r < 4; r++) {
		wire(r, 0, (r + 1) % 4, 1);
		wire(r, 2, (r + 1) % 4, 3);
	}
	assert_int_equal(plan(4, "rings", &ring, &t, &a), NNP_SUCCESS);
	for (r = 0; r < 4; r++)
		assert_dim(&t.ring[r], 4, r, 2, 0, 1, 2, 3);
	/* Rows 0-1 and 3-2, each pair twice linked: a 2x2 torus. */
	assert_int_equal(t.w, 2);
	assert_int_equal(t.h, 2);
	assert_dim(&t.torus[0][0], 2, 0, 1, 0, 2, 0, 0);
	assert_dim(&t.torus[1][0], 2, 1, 1, 3, 1, 0, 0);
	assert_dim(&t.torus[3][0], 2, 0, 1, 1, 3, 0, 0);
	assert_dim(&t.torus[2][0], 2, 1, 1, 2, 0, 0, 0);
	assert_torus(&t, 4);
	nnp_topo_free(&t);
	/* Two neighbours with one link between them: one pair. */
	info[2].ports[2].state = info[3].ports[3].state = NNP_LINK_WIRED;
	assert_int_equal(plan(4, "rings", &ring, &t, &a), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "NNP_ALGO=rings: the ring's hop from rank 2 (chip 106) to rank 3 (chip 109) has one link free, rings needs a second between every pair of neighbours");
	nnp_ring_free(&ring);
}

/* QEMU's torus:2x4 and torus:4x4: rows along ports 0/1, columns 2/3. */
static void test_topo_torus(void **state)
{
	static const uint32_t shapes[][2] = { { 2, 4 }, { 4, 4 }, { 4, 2 } };
	struct nnp_ring ring;
	struct nnp_topo t;
	enum nnp_algo a;
	uint32_t i, r;

	(void)state;
	for (i = 0; i < 3; i++) {
		uint32_t w = shapes[i][0], h = shapes[i][1];

		torus_wires(w, h);
		assert_int_equal(plan(w * h, i ? NULL : "torus", &ring, &t, &a),
				 NNP_SUCCESS);
		assert_int_equal(a, i ? NNP_ALGO_AUTO : NNP_ALGO_TORUS);
		assert_int_equal(t.w, w);
		assert_int_equal(t.h, h);
		for (r = 0; r < w * h; r++) {
			assert_dim(&t.torus[r][0], w, r % w, 1, 0, 1, 0, 0);
			assert_dim(&t.torus[r][1], h, r / w, 1, 2, 3, 0, 0);
		}
		assert_torus(&t, w * h);
		/* A 2-wide torus's rows are two links each: a second pair. */
		assert_int_equal(t.pairs, 1);
		nnp_topo_free(&t);
		nnp_ring_free(&ring);
	}
}

/*
 * A 4x4 torus wired with each chip's ports in an order of its own, and a
 * 2x4 one whose ranks are not in row order: found from the links alone.
 */
static void test_topo_torus_any_numbering(void **state)
{
	static const uint32_t perm[4][4] = {
		{ 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 2, 0, 3, 1 }, { 1, 3, 0, 2 },
	};
	struct nnp_ring ring;
	struct nnp_topo t;
	enum nnp_algo a;
	uint32_t x, y;

	(void)state;
	chips(16);
	for (y = 0; y < 4; y++)
		for (x = 0; x < 4; x++) {
			uint32_t c = y * 4 + x, e = y * 4 + (x + 1) % 4;
			uint32_t s = (y + 1) % 4 * 4 + x;

			wire(c, perm[c % 4][0], e, perm[e % 4][1]);
			wire(c, perm[c % 4][2], s, perm[s % 4][3]);
		}
	assert_int_equal(plan(16, "torus", &ring, &t, &a), NNP_SUCCESS);
	assert_torus(&t, 16);
	nnp_topo_free(&t);
	nnp_ring_free(&ring);

	/* Rank r on the chip at (r / 4, r % 4) of a 2-wide, 4-high torus. */
	chips(8);
	for (y = 0; y < 4; y++)
		for (x = 0; x < 2; x++) {
			wire(x * 4 + y, 0, (x + 1) % 2 * 4 + y, 1);
			wire(x * 4 + y, 2, x * 4 + (y + 1) % 4, 3);
		}
	assert_int_equal(plan(8, "torus", &ring, &t, &a), NNP_SUCCESS);
	assert_torus(&t, 8);
	nnp_topo_free(&t);
	nnp_ring_free(&ring);
}

/* ---- nnp_comm_split(): groups and their rings from every rank's entry ---- */

static struct nnp_split_entry split[MAXN];

/* Parent ranks 0..@n-1 of info[] with @color and @key, epoch 0x1000 + r. */
static void split_entries(uint32_t n, const int32_t *color, const int32_t *key)
{
	uint32_t r;

	memset(split, 0, sizeof(split));
	for (r = 0; r < n; r++)
		split[r] = (struct nnp_split_entry){
			.color = color[r], .key = key[r], .epoch = 0x1000 + r,
			.info = info[r],
		};
}

/* Parent rank @me's group is @n ranks, @me at @rank: parents @want. */
static void assert_group(uint32_t nparent, uint32_t me, uint32_t n, uint32_t rank,
			 const uint32_t *want)
{
	struct nnp_split_group g;
	uint32_t k;

	assert_int_equal(nnp_split_group(split, nparent, me, &g), NNP_SUCCESS);
	assert_int_equal(g.n, n);
	assert_int_equal(g.rank, rank);
	assert_int_equal(g.color, split[me].color);
	for (k = 0; k < n; k++) {
		assert_int_equal(g.parent[k], want[k]);
		assert_int_equal(g.info[k].chip, info[want[k]].chip);
	}
	/* Every member takes new rank 0's epoch. */
	assert_int_equal(g.epoch, 0x1000 + want[0]);
	nnp_split_group_free(&g);
}

/* Colors pick the members, keys then parent ranks their order. */
static void test_split_groups(void **state)
{
	static const int32_t rows[] = { 0, 0, 1, 1 }, zero[4] = { 0 };
	static const int32_t one[] = { 5, 5, 5, 5 }, down[] = { 3, 2, 1, 0 };
	static const int32_t ties[] = { 1, 0, 1, 0 };
	static const int32_t wide[] = { INT32_MAX, INT32_MIN, 0, -1 };
	static const int32_t holes[] = { 0, NNP_SPLIT_NOCOLOR, 0, -7 };
	struct nnp_split_group g;

	(void)state;
	torus_wires(2, 2);
	split_entries(4, rows, zero);
	assert_group(4, 0, 2, 0, (const uint32_t[]){ 0, 1 });
	assert_group(4, 1, 2, 1, (const uint32_t[]){ 0, 1 });
	assert_group(4, 2, 2, 0, (const uint32_t[]){ 2, 3 });
	assert_group(4, 3, 2, 1, (const uint32_t[]){ 2, 3 });
	split_entries(4, one, down);
	assert_group(4, 0, 4, 3, (const uint32_t[]){ 3, 2, 1, 0 });
	assert_group(4, 3, 4, 0, (const uint32_t[]){ 3, 2, 1, 0 });
	split_entries(4, one, ties);
	assert_group(4, 2, 4, 3, (const uint32_t[]){ 1, 3, 0, 2 });
	split_entries(4, one, wide);
	assert_group(4, 0, 4, 3, (const uint32_t[]){ 1, 3, 2, 0 });
	/* Any negative color is none: in no group, not even its own. */
	split_entries(4, holes, zero);
	assert_group(4, 2, 2, 1, (const uint32_t[]){ 0, 2 });
	assert_int_equal(nnp_split_group(split, 4, 1, &g), NNP_SUCCESS);
	assert_int_equal(g.n, 0);
	assert_null(g.parent);
	nnp_split_group_free(&g);
	assert_int_equal(nnp_split_group(split, 4, 3, &g), NNP_SUCCESS);
	assert_int_equal(g.n, 0);
	nnp_split_group_free(&g);
}

/* A member that could not read its ports fails its group, and only it. */
static void test_split_member_failed(void **state)
{
	static const int32_t rows[] = { 0, 0, 1, 1 }, zero[4] = { 0 };
	struct nnp_split_group g;

	(void)state;
	torus_wires(2, 2);
	split_entries(4, rows, zero);
	split[1].status = NNP_ERROR_DEVICE_LOST;
	assert_int_equal(nnp_split_group(split, 4, 0, &g), NNP_ERROR_COMM_FAILED);
	assert_string_equal(nnp_get_last_error(),
			    "nnp_comm_split: color 0: rank 1 (parent rank 1) could not read its chip's ports: nnp device was removed or reset");
	nnp_split_group_free(&g);
	/* Its own failure is the caller's to tell. */
	assert_int_equal(nnp_split_group(split, 4, 1, &g), NNP_SUCCESS);
	nnp_split_group_free(&g);
	assert_group(4, 2, 2, 0, (const uint32_t[]){ 2, 3 });
}

/* Plan parent rank @me's group: its result, and the ring in @order. */
static nnp_result_t split_ring(uint32_t me, uint32_t *order)
{
	struct nnp_split_group g;
	struct nnp_ring ring;
	nnp_result_t res;
	char what[40];
	uint32_t k;

	assert_int_equal(nnp_split_group(split, 4, me, &g), NNP_SUCCESS);
	snprintf(what, sizeof(what), "nnp_comm_split: color %d", g.color);
	res = nnp_split_plan(&g, what, &ring);
	for (k = 0; res == NNP_SUCCESS && k < g.n; k++) {
		uint32_t a = ring.order[k], b = ring.order[(k + 1) % g.n];
		uint32_t p = ring.send_port[a];

		order[k] = g.parent[a];
		assert_true(g.info[a].ports[p].state & NNP_LINK_UP);
		assert_int_equal(g.info[a].ports[p].peer_chip, g.info[b].chip);
		assert_int_equal(ring.recv_port[b], g.info[a].ports[p].peer_port);
	}
	if (res == NNP_SUCCESS)
		nnp_ring_free(&ring);
	nnp_split_group_free(&g);
	return res;
}

/*
 * On QEMU's torus:2x2, rows and columns are rings; diagonals and three
 * chips are not, and the last error names a missing link by new rank,
 * parent rank and chip at both ends.
 */
static void test_split_rings(void **state)
{
	static const int32_t rows[] = { 0, 0, 1, 1 }, cols[] = { 0, 1, 0, 1 };
	static const int32_t diag[] = { 0, 1, 1, 0 }, three[] = { 0, 0, -1, 0 };
	static const int32_t zero[4] = { 0 }, down[] = { 3, 2, 1, 0 };
	uint32_t order[4];

	(void)state;
	torus_wires(2, 2);
	split_entries(4, rows, zero);
	assert_int_equal(split_ring(3, order), NNP_SUCCESS);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[1], 3);
	split_entries(4, cols, down);
	assert_int_equal(split_ring(0, order), NNP_SUCCESS);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[1], 0);
	split_entries(4, diag, zero);
	assert_int_equal(split_ring(0, order), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "nnp_comm_split: color 0: no up link from rank 0 (parent rank 0, chip 100) to rank 1 (parent rank 3, chip 109): no ring over the 2 ranks: rank 0 (chip 100) has an up link to 0 other ranks, a ring needs 1");
	assert_int_equal(split_ring(2, order), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "nnp_comm_split: color 1: no up link from rank 0 (parent rank 1, chip 103) to rank 1 (parent rank 2, chip 106): no ring over the 2 ranks: rank 0 (chip 103) has an up link to 0 other ranks, a ring needs 1");
	/* 0-1 and 1-3 are links, 3-0 is not: the gap is where order wraps. */
	split_entries(4, three, zero);
	assert_int_equal(split_ring(3, order), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "nnp_comm_split: color 0: no up link from rank 2 (parent rank 3, chip 109) to rank 0 (parent rank 0, chip 100): no ring over the 3 ranks: rank 0 (chip 100) has an up link to 1 other rank, a ring needs 2");
}

/* Four chips, each linked to each other: QEMU's "full" of 4. */
static void full_wires(void)
{
	uint32_t a, b, port[4] = { 0 };

	chips(4);
	for (a = 0; a < 4; a++)
		for (b = a + 1; b < 4; b++)
			wire(a, port[a]++, b, port[b]++);
}

/* Parent rank @me's shrink of 4 without @ex (@n of them), after @given. */
static nnp_result_t shrink(uint32_t me, const int *ex, int n, const uint64_t *given,
			   struct nnp_split_group *g)
{
	nnp_result_t res = nnp_shrink_group(info, 4, me, ex, n, 0xabcdef, given,
					    given ? 1 : 0, g);

	if (res != NNP_SUCCESS)
		nnp_split_group_free(g);
	return res;
}

/*
 * The survivors keep their parent order and chips, and every one of
 * them draws the same epoch for one set, whatever the list's order;
 * another set, or the same set again after it, draws another.
 */
static void test_shrink_groups(void **state)
{
	struct nnp_split_group g, h;
	uint64_t epoch;
	uint32_t k;

	(void)state;
	full_wires();
	assert_int_equal(shrink(3, (const int[]){ 2 }, 1, NULL, &g), NNP_SUCCESS);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.rank, 2);
	for (k = 0; k < 3; k++) {
		assert_int_equal(g.parent[k], k == 2 ? 3 : k);
		assert_int_equal(g.info[k].chip, info[g.parent[k]].chip);
	}
	epoch = g.epoch;
	assert_true(epoch && epoch != 0xabcdef);
	nnp_split_group_free(&g);
	assert_int_equal(shrink(0, (const int[]){ 2 }, 1, NULL, &g), NNP_SUCCESS);
	assert_int_equal(g.rank, 0);
	assert_int_equal(g.epoch, epoch);
	nnp_split_group_free(&g);
	/* Order aside, one set; another set, or the next shrink, another epoch. */
	assert_int_equal(shrink(0, (const int[]){ 3, 1 }, 2, NULL, &g), NNP_SUCCESS);
	assert_int_equal(shrink(2, (const int[]){ 1, 3 }, 2, NULL, &h), NNP_SUCCESS);
	assert_int_equal(g.n, 2);
	assert_int_equal(h.rank, 1);
	assert_int_equal(g.epoch, h.epoch);
	assert_true(g.epoch != epoch);
	nnp_split_group_free(&g);
	nnp_split_group_free(&h);
	assert_int_equal(shrink(0, (const int[]){ 2 }, 1, &epoch, &g), NNP_SUCCESS);
	assert_true(g.epoch && g.epoch != epoch);
	nnp_split_group_free(&g);
	/* Nothing excluded: the parent's ranks again, under a new epoch. */
	assert_int_equal(shrink(1, NULL, 0, NULL, &g), NNP_SUCCESS);
	assert_int_equal(g.n, 4);
	assert_int_equal(g.rank, 1);
	assert_true(g.epoch != epoch && g.epoch != 0xabcdef);
	nnp_split_group_free(&g);
}

/* A bad list is refused on the rank that gave it, naming the entry. */
static void test_shrink_bad_lists(void **state)
{
	static const struct {
		int ex[2], n;
		const char *error;
	} bad[] = {
		{ { 0 }, -1, "nnp_comm_shrink: -1 ranks to exclude" },
		{ { 2, 4 }, 2, "nnp_comm_shrink: exclude[1] is rank 4: not a rank of the parent" },
		{ { -1 }, 1, "nnp_comm_shrink: exclude[0] is rank -1: not a rank of the parent" },
		{ { 3, 3 }, 2, "nnp_comm_shrink: exclude[1] is rank 3: listed twice" },
		{ { 2, 1 }, 2, "nnp_comm_shrink: exclude[1] is the calling rank 1: an excluded rank does not call it" },
	};
	struct nnp_split_group g;
	size_t i;

	(void)state;
	full_wires();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(shrink(1, bad[i].ex, bad[i].n, NULL, &g),
				 NNP_ERROR_INVALID_ARGUMENT);
		assert_string_equal(nnp_get_last_error(), bad[i].error);
		assert_null(g.parent);
	}
	assert_int_equal(shrink(1, NULL, 1, NULL, &g), NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(),
			    "nnp_comm_shrink: 1 ranks to exclude from a NULL list");
}

/*
 * On a full fabric three of four chips are a ring; on a 2x2 torus they
 * are not (two of them are a diagonal), and the last error says so.
 */
static void test_shrink_rings(void **state)
{
	struct nnp_split_group g;
	struct nnp_ring ring;

	(void)state;
	full_wires();
	assert_int_equal(shrink(0, (const int[]){ 1 }, 1, NULL, &g), NNP_SUCCESS);
	assert_int_equal(nnp_split_plan(&g, "nnp_comm_shrink", &ring), NNP_SUCCESS);
	nnp_ring_free(&ring);
	nnp_split_group_free(&g);
	torus_wires(2, 2);
	assert_int_equal(shrink(0, (const int[]){ 3 }, 1, NULL, &g), NNP_SUCCESS);
	assert_int_equal(nnp_split_plan(&g, "nnp_comm_shrink", &ring), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "nnp_comm_shrink: no up link from rank 1 (parent rank 1, chip 103) to rank 2 (parent rank 2, chip 106): no ring over the 3 ranks: rank 1 (chip 103) has an up link to 1 other rank, a ring needs 2");
	nnp_split_group_free(&g);
}

/* ---- rendezvous ---- */

struct rank_thread {
	thrd_t t;
	const nnp_unique_id_t *id;
	int nranks, rank;
	nnp_result_t res;
	struct nnp_rank_info *all;
	uint64_t epoch;
	char error[256];	/* the rank's nnp_get_last_error() */
};

static int rank_main(void *arg)
{
	struct rank_thread *r = arg;
	struct nnp_rank_info mine = { .chip = 1000 + (uint32_t)r->rank };

	r->res = nnp_bootstrap_join(r->id, r->nranks, r->rank, &mine, &r->all,
				    &r->epoch, NULL);
	snprintf(r->error, sizeof(r->error), "%s", nnp_get_last_error());
	return 0;
}

/* Start ranks @ranks[0..k) of an @nranks job; results in @rt. */
static void start_ranks(const nnp_unique_id_t *id, int nranks, const int *ranks,
			int k, struct rank_thread *rt)
{
	int i;

	for (i = 0; i < k; i++) {
		rt[i] = (struct rank_thread){ .id = id, .nranks = nranks, .rank = ranks[i] };
		assert_int_equal(thrd_create(&rt[i].t, rank_main, &rt[i]), thrd_success);
	}
}

static void wait_ranks(struct rank_thread *rt, int k)
{
	int i;

	for (i = 0; i < k; i++)
		thrd_join(rt[i].t, NULL);
}

static void join_all(const nnp_unique_id_t *id, int nranks, const int *ranks,
		     int k, struct rank_thread *rt)
{
	start_ranks(id, nranks, ranks, k, rt);
	wait_ranks(rt, k);
}

/* One hello that is expected to be refused: its result. */
static nnp_result_t lone_join(const nnp_unique_id_t *id, int nranks, int rank)
{
	struct rank_thread r = { .id = id, .nranks = nranks, .rank = rank };

	rank_main(&r);
	free(r.all);
	return r.res;
}

/*
 * "At once", for a rendezvous that must not wait for a timeout: under
 * every timeout and deadline these tests would otherwise wait out (5 s and
 * more), yet far above the milliseconds it takes, so that a loaded 2-core
 * host (issue 49) cannot miss it.
 */
#define AT_ONCE_MS	3000

static int64_t ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000 };

	nanosleep(&t, NULL);
}

/* A TCP connection to @addr, or -1 with errno set. */
static int dial(const union nnp_sockaddr *addr)
{
	int fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, &addr->sa, nnp_sockaddr_len(addr))) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static union nnp_sockaddr root_of(const nnp_unique_id_t *id)
{
	struct nnp_job_id j;

	memcpy(&j, id->internal, sizeof(j));
	return j.root;
}

/*
 * Open a session with the root on @fd as a rank holding @secret does: our
 * open (nonce @fill repeated), the root's proof back. Is it proven?
 */
static bool raw_open(int fd, const uint8_t *secret, uint8_t fill,
		     struct nnp_boot_session *s)
{
	struct {
		struct nnp_boot_hdr h;
		struct nnp_boot_open o;
	} open = { { NNP_BOOT_MSG_MAGIC, sizeof(open.o) }, { .version = NNP_BOOT_VERSION } };
	struct {
		struct nnp_boot_hdr h;
		struct nnp_boot_proof p;
	} proof;

	memset(open.o.nonce, fill, sizeof(open.o.nonce));
	s->secret = secret;
	memcpy(s->rank_nonce, open.o.nonce, sizeof(s->rank_nonce));
	assert_int_equal(send(fd, &open, sizeof(open), MSG_NOSIGNAL), sizeof(open));
	assert_int_equal(recv(fd, &proof, sizeof(proof), MSG_WAITALL), sizeof(proof));
	assert_int_equal(proof.h.magic, NNP_BOOT_MSG_MAGIC);
	assert_int_equal(proof.h.len, sizeof(proof.p));
	return nnp_boot_root_proven(s, &proof.p);
}

/* A hello message of rank @rank of 2 on @chip, as a rank sends it. */
struct hello_msg {
	struct nnp_boot_hdr h;
	struct nnp_boot_hello hello;
};

/* A root's answer to a rank of a job of 2 that is complete. */
struct answer_msg {
	struct nnp_boot_hdr h;
	struct nnp_boot_reply r;
	struct nnp_boot_hdr th;
	struct nnp_rank_info table[2];
};

static struct hello_msg hello_of(uint32_t rank, uint32_t chip)
{
	return (struct hello_msg){
		{ NNP_BOOT_MSG_MAGIC, sizeof(struct nnp_boot_hello) },
		{ .nranks = 2, .rank = rank, .info = { .chip = chip } },
	};
}

static void assert_job_ok(struct rank_thread *rt, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		assert_int_equal(rt[i].res, NNP_SUCCESS);
		assert_int_equal(rt[i].epoch, rt[0].epoch);
		for (j = 0; j < n; j++)
			assert_int_equal(rt[i].all[j].chip, 1000 + j);
		free(rt[i].all);
	}
	assert_int_not_equal(rt[0].epoch, 0);
}

static void test_rendezvous(void **state)
{
	const int ranks[6] = { 3, 0, 1, 5, 4, 2 };
	struct rank_thread rt[6];
	nnp_unique_id_t id, again;

	(void)state;
	unsetenv("NNP_COMM_ID");
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	join_all(&id, 6, ranks, 6, rt);
	/* 64 random bits: all 32 high ones zero once in 4 billion jobs. */
	assert_true(rt[0].epoch > UINT32_MAX);
	assert_job_ok(rt, 6);
	/* Each job gets its own id and epoch. */
	assert_int_equal(nnp_bootstrap_new_id(&again), NNP_SUCCESS);
	assert_memory_not_equal(&id, &again, sizeof(id));
	join_all(&again, 2, ranks + 1, 2, rt);
	assert_int_equal(rt[0].res, NNP_SUCCESS);
	free(rt[0].all);
	free(rt[1].all);
}

static void test_rendezvous_at_comm_id(void **state)
{
	const int ranks[3] = { 2, 1, 0 };
	struct rank_thread rt[3];
	nnp_unique_id_t a, b;
	char addr[32];

	(void)state;
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", 20000 + rand() % 20000);
	setenv("NNP_COMM_ID", addr, 1);
	setenv("NNP_COMM_SECRET", "0123456789abcdef", 1);
	/* Every process makes the same id without talking. */
	assert_int_equal(nnp_bootstrap_new_id(&a), NNP_SUCCESS);
	assert_int_equal(nnp_bootstrap_new_id(&b), NNP_SUCCESS);
	assert_memory_equal(&a, &b, sizeof(a));
	join_all(&a, 3, ranks, 3, rt);
	assert_job_ok(rt, 3);
	setenv("NNP_COMM_ID", "no-port-here", 1);
	assert_int_equal(nnp_bootstrap_new_id(&a), NNP_ERROR_INVALID_ARGUMENT);
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
}

static void test_rendezvous_failures(void **state)
{
	const int dup[3] = { 0, 1, 1 };
	struct rank_thread rt[3];
	nnp_unique_id_t id, junk;
	struct nnp_rank_info mine = { 0 }, *all;
	uint64_t epoch;
	int bad = 0, i;

	(void)state;
	setenv("NNP_COMM_TIMEOUT_S", "1", 1);
	/* Rank 1 twice, rank 2 never: one is refused, the rest time out. */
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	join_all(&id, 3, dup, 3, rt);
	for (i = 0; i < 3; i++) {
		assert_true(rt[i].res == NNP_ERROR_INVALID_ARGUMENT ||
			    rt[i].res == NNP_ERROR_TIMEOUT);
		bad += rt[i].res == NNP_ERROR_INVALID_ARGUMENT;
	}
	assert_int_equal(bad, 1);
	/* Not an id at all. */
	memset(&junk, 0x5a, sizeof(junk));
	assert_int_equal(nnp_bootstrap_join(&junk, 2, 0, &mine, &all, &epoch, NULL),
			 NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(),
			    "rank 0: the unique id was not made by nnp_get_unique_id()");
	/* An id of another format: another libnnp made it. */
	junk = id;
	junk.internal[offsetof(struct nnp_job_id, magic) + 6] = '1';
	assert_int_equal(nnp_bootstrap_join(&junk, 2, 0, &mine, &all, &epoch, NULL),
			 NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(),
			    "rank 0: the unique id is of format 1, this libnnp reads format 2: make it with the libnnp the ranks use");
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* An idle stranger at the root does not hold up the ranks behind it. */
static void test_rendezvous_idle_stranger(void **state)
{
	const int ranks[4] = { 0, 1, 2, 3 };
	struct rank_thread rt[4];
	union nnp_sockaddr root;
	nnp_unique_id_t id;
	int64_t start;
	int stranger;

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	root = root_of(&id);
	stranger = dial(&root);
	assert_true(stranger >= 0);
	start = ms_now();
	join_all(&id, 4, ranks, 4, rt);
	assert_job_ok(rt, 4);
	assert_in_range(ms_now() - start, 0, AT_ONCE_MS);
	close(stranger);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* Hellos that cannot belong to the job are refused, and the job goes on. */
static void test_rendezvous_bad_hellos(void **state)
{
	const int first[2] = { 0, 1 }, rest[2] = { 2, 3 };
	struct rank_thread rt[4];
	nnp_unique_id_t id;

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	/* Before any rank is in: none of these may fix the job's size. */
	assert_int_equal(lone_join(&id, 0, 0), NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(lone_join(&id, NNP_BOOTSTRAP_MAX_RANKS + 1, 0),
			 NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(lone_join(&id, 1 << 20, 7), NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(lone_join(&id, 4, 4), NNP_ERROR_INVALID_ARGUMENT);
	start_ranks(&id, 4, first, 2, rt);
	nap_ms(300);	/* ranks 0 and 1 are in: the job has 4 ranks */
	assert_int_equal(lone_join(&id, 4, 1), NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(lone_join(&id, 5, 2), NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(lone_join(&id, 2, 1), NNP_ERROR_INVALID_ARGUMENT);
	start_ranks(&id, 4, rest, 2, rt + 2);
	wait_ranks(rt, 4);
	assert_job_ok(rt, 4);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* The same job with another secret: a stranger who guessed its address. */
static nnp_unique_id_t wrong_secret(const nnp_unique_id_t *id)
{
	nnp_unique_id_t bad = *id;

	bad.internal[offsetof(struct nnp_job_id, secret)] ^= 1;
	return bad;
}

/*
 * Against the root of job @j, a raw rank holding @secret (not the job's):
 * the root's proof does not pass under it, and a hello sealed with it
 * after the open is dropped unanswered.
 */
static void assert_secret_refused(const struct nnp_job_id *j,
				  const uint8_t *secret)
{
	struct hello_msg in = hello_of(1, 666);
	struct timeval tv = { .tv_sec = 3 };
	struct nnp_boot_session s;
	uint8_t byte;
	int fd;

	fd = dial(&j->root);
	assert_true(fd >= 0);
	assert_false(raw_open(fd, secret, 0x22, &s));
	nnp_boot_seal_hello(&s, &in.hello);
	assert_int_equal(send(fd, &in, sizeof(in), MSG_NOSIGNAL), sizeof(in));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(recv(fd, &byte, 1, 0), 0);	/* closed, unanswered */
	close(fd);
}

/*
 * A stranger with the wrong secret gets nowhere, and the job goes on: as
 * a rank, it leaves the root, whose proof is not under its secret, with
 * NNP_ERROR_IO; its hello sealed with that secret after a good open is
 * dropped by the root unanswered, and the rank it claimed stays free.
 */
static void test_rendezvous_wrong_secret(void **state)
{
	const int ranks[2] = { 0, 1 };
	char want[256], where[NNP_SOCKADDR_TEXT];
	struct rank_thread rt[2];
	struct nnp_job_id j, bj;
	nnp_unique_id_t id, bad;

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	bad = wrong_secret(&id);
	memcpy(&j, id.internal, sizeof(j));
	memcpy(&bj, bad.internal, sizeof(bj));
	assert_int_equal(lone_join(&bad, 2, 0), NNP_ERROR_IO);
	snprintf(want, sizeof(want),
		 "rank 0: the rendezvous at %s did not prove it holds the job's secret, so it is not the job's root (another job's secret, or an impostor)",
		 nnp_sockaddr_text(&j.root, where));
	assert_string_equal(nnp_get_last_error(), want);
	assert_secret_refused(&j, bj.secret);
	join_all(&id, 2, ranks, 2, rt);
	assert_job_ok(rt, 2);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/*
 * A secret wrong only in the top bit of any one byte, or in any one bit of
 * one byte, is refused both ways: a MAC or a comparison that skipped a
 * byte, or a bit of each, would let one through.
 */
static void test_rendezvous_secret_every_byte_and_bit(void **state)
{
	const int ranks[2] = { 0, 1 };
	uint8_t bad[NNP_BOOTSTRAP_SECRET_BYTES];
	struct rank_thread rt[2];
	struct nnp_job_id j;
	nnp_unique_id_t id;
	unsigned int i;

	(void)state;
	unsetenv("NNP_COMM_ID");
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	memcpy(&j, id.internal, sizeof(j));
	for (i = 0; i < NNP_BOOTSTRAP_SECRET_BYTES + 8; i++) {
		memcpy(bad, j.secret, sizeof(bad));
		if (i < NNP_BOOTSTRAP_SECRET_BYTES)
			bad[i] ^= 0x80;
		else
			bad[NNP_BOOTSTRAP_SECRET_BYTES / 2] ^=
				(uint8_t)(1u << (i - NNP_BOOTSTRAP_SECRET_BYTES));
		assert_secret_refused(&j, bad);
	}
	join_all(&id, 2, ranks, 2, rt);
	assert_job_ok(rt, 2);
}

/* nnp_bootstrap_new_id(), and what it printed on stderr in @err. */
static nnp_result_t new_id_stderr(nnp_unique_id_t *id, char *err, size_t size)
{
	FILE *f = tmpfile();
	int saved = dup(2);
	nnp_result_t res;
	size_t n;

	assert_non_null(f);
	fflush(stderr);
	dup2(fileno(f), 2);
	res = nnp_bootstrap_new_id(id);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(err, 1, size - 1, f);
	err[n] = '\0';
	fclose(f);
	return res;
}

/*
 * At NNP_COMM_ID the job's secret is NNP_COMM_SECRET: refused without it,
 * and a process with another one cannot take a rank.
 */
static void test_rendezvous_comm_id_secret(void **state)
{
	const int first = 0, second = 1;
	struct rank_thread rt[2];
	nnp_unique_id_t a, b;
	char addr[32], err[512];

	(void)state;
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", 20000 + rand() % 20000);
	setenv("NNP_COMM_ID", addr, 1);
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	unsetenv("NNP_COMM_SECRET");
	assert_int_equal(new_id_stderr(&a, err, sizeof(err)), NNP_ERROR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "NNP_COMM_SECRET"));
	setenv("NNP_COMM_SECRET", "too-short", 1);
	assert_int_equal(new_id_stderr(&a, err, sizeof(err)), NNP_ERROR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "NNP_COMM_SECRET"));
	setenv("NNP_COMM_SECRET", "the other job's secret", 1);
	assert_int_equal(nnp_bootstrap_new_id(&b), NNP_SUCCESS);
	setenv("NNP_COMM_SECRET", "this job's own secret", 1);
	assert_int_equal(nnp_bootstrap_new_id(&a), NNP_SUCCESS);
	assert_memory_not_equal(&a, &b, sizeof(a));
	start_ranks(&a, 2, &first, 1, rt);
	nap_ms(300);	/* rank 0 serves the root and is in */
	assert_int_equal(lone_join(&b, 2, 1), NNP_ERROR_IO);
	start_ranks(&a, 2, &second, 1, rt + 1);
	wait_ranks(rt, 2);
	assert_job_ok(rt, 2);
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/*
 * A message longer than the hello is refused before its body is read, in
 * a reply sealed for the connection.
 */
static void test_rendezvous_oversized(void **state)
{
	const uint32_t lens[2] = { sizeof(struct nnp_boot_hello) + 1, 1u << 30 };
	const int ranks[2] = { 0, 1 };
	struct rank_thread rt[2];
	nnp_unique_id_t id;
	struct nnp_job_id j;
	int i;

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	memcpy(&j, id.internal, sizeof(j));
	for (i = 0; i < 2; i++) {
		struct nnp_boot_hdr h = { .magic = NNP_BOOT_MSG_MAGIC, .len = lens[i] };
		struct {
			struct nnp_boot_hdr h;
			struct nnp_boot_reply r;
		} back;
		struct nnp_boot_session s;
		int fd = dial(&j.root);

		assert_true(fd >= 0);
		assert_true(raw_open(fd, j.secret, (uint8_t)i, &s));
		assert_int_equal(send(fd, &h, sizeof(h), 0), sizeof(h));
		assert_int_equal(recv(fd, &back, sizeof(back), MSG_WAITALL), sizeof(back));
		assert_int_equal(back.h.magic, NNP_BOOT_MSG_MAGIC);
		assert_int_equal(back.h.len, sizeof(back.r));
		assert_int_equal(back.r.status, NNP_ERROR_INVALID_ARGUMENT);
		assert_true(nnp_boot_reply_sealed(&s, &back.r, NULL, 0));
		assert_int_equal(recv(fd, &back, 1, 0), 0);	/* and closed */
		close(fd);
	}
	join_all(&id, 2, ranks, 2, rt);
	assert_job_ok(rt, 2);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* @at with the address 127.0.0.1: the same port, another local address. */
static int dial_loopback(union nnp_sockaddr at)
{
	at.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return dial(&at);
}

/* The root listens on the id's address only, not on every interface. */
static void test_rendezvous_bound_address(void **state)
{
	const int first = 0, second = 1;
	struct rank_thread rt[2];
	union nnp_sockaddr at;
	nnp_unique_id_t id;
	char addr[32];
	int fd, tries;

	(void)state;
	/* Our own root, at our first interface (if there is one but lo). */
	unsetenv("NNP_COMM_ID");
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	at = root_of(&id);
	assert_int_equal(at.sa.sa_family, AF_INET);
	if (at.in.sin_addr.s_addr != htonl(INADDR_LOOPBACK)) {
		assert_int_equal(dial_loopback(at), -1);
		assert_int_equal(errno, ECONNREFUSED);
	}
	join_all(&id, 1, &first, 1, rt);	/* and its root is done */
	assert_job_ok(rt, 1);
	/* Rank 0's root at NNP_COMM_ID=127.0.0.2:port, not at 127.0.0.1. */
	snprintf(addr, sizeof(addr), "127.0.0.2:%d", 20000 + rand() % 20000);
	setenv("NNP_COMM_ID", addr, 1);
	setenv("NNP_COMM_SECRET", "0123456789abcdef", 1);
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	at = root_of(&id);
	start_ranks(&id, 2, &first, 1, rt);
	/* Wait for rank 0's root: a connection that says nothing is harmless. */
	for (tries = 0; (fd = dial(&at)) < 0 && tries < 200; tries++)
		nap_ms(10);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(dial_loopback(at), -1);
	assert_int_equal(errno, ECONNREFUSED);
	start_ranks(&id, 2, &second, 1, rt + 1);
	wait_ranks(rt, 2);
	assert_job_ok(rt, 2);
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
	unsetenv("NNP_COMM_TIMEOUT_S");
}


/* The job's own root at ::1 (NNP_SOCKET_IFNAME, NNP_SOCKET_FAMILY), and at
 * NNP_COMM_ID=[::1]:port. */
static void test_rendezvous_ipv6(void **state)
{
	const int ranks[3] = { 1, 2, 0 };
	struct rank_thread rt[3];
	union nnp_sockaddr at;
	nnp_unique_id_t id;
	char addr[64], text[NNP_SOCKADDR_TEXT];
	unsigned int port = 20000 + (unsigned int)(rand() % 20000);

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	setenv("NNP_SOCKET_IFNAME", "=lo", 1);
	setenv("NNP_SOCKET_FAMILY", "AF_INET6", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	at = root_of(&id);
	assert_int_equal(at.sa.sa_family, AF_INET6);
	assert_true(IN6_IS_ADDR_LOOPBACK(&at.in6.sin6_addr));
	snprintf(addr, sizeof(addr), "[::1]:%u", nnp_sockaddr_port(&at));
	assert_string_equal(nnp_sockaddr_text(&at, text), addr);
	join_all(&id, 3, ranks, 3, rt);
	assert_job_ok(rt, 3);
	/* The same over IPv4 when the family says so. */
	setenv("NNP_SOCKET_FAMILY", "AF_INET", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	at = root_of(&id);
	assert_int_equal(at.sa.sa_family, AF_INET);
	assert_int_equal(at.in.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	join_all(&id, 1, ranks + 2, 1, rt);
	assert_job_ok(rt, 1);
	setenv("NNP_SOCKET_FAMILY", "AF_UNIX", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(),
			    "NNP_SOCKET_FAMILY=AF_UNIX is neither AF_INET nor AF_INET6");
	unsetenv("NNP_SOCKET_FAMILY");
	unsetenv("NNP_SOCKET_IFNAME");
	/* Rank 0 serves NNP_COMM_ID=[::1]:port. */
	snprintf(addr, sizeof(addr), "[::1]:%u", port);
	setenv("NNP_COMM_ID", addr, 1);
	setenv("NNP_COMM_SECRET", "0123456789abcdef", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	at = root_of(&id);
	assert_int_equal(at.sa.sa_family, AF_INET6);
	assert_int_equal(nnp_sockaddr_port(&at), port);
	join_all(&id, 3, ranks, 3, rt);
	assert_job_ok(rt, 3);
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
	unsetenv("NNP_COMM_TIMEOUT_S");
}

static void test_ifname_match(void **state)
{
	(void)state;
	assert_true(nnp_ifname_match("eth,ib", "eth0"));
	assert_true(nnp_ifname_match("eth,ib", "ib1"));
	assert_false(nnp_ifname_match("eth,ib", "lo"));
	assert_false(nnp_ifname_match("^docker,lo", "docker0"));
	assert_false(nnp_ifname_match("^docker,lo", "lo"));
	assert_true(nnp_ifname_match("^docker,lo", "eth0"));
	assert_true(nnp_ifname_match("=eth0", "eth0"));
	assert_false(nnp_ifname_match("=eth0", "eth01"));
	assert_false(nnp_ifname_match("^=lo", "lo"));
	assert_true(nnp_ifname_match("^=lo", "lo2"));
	assert_false(nnp_ifname_match("", "eth0"));
}

/* Each way a rendezvous fails names the rank and the address. */
static void test_rendezvous_error_text(void **state)
{
	const int two[2] = { 0, 1 };
	struct rank_thread rt[2];
	char want[256], where[NNP_SOCKADDR_TEXT];
	union nnp_sockaddr at;
	nnp_unique_id_t id;
	int i;

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_SOCKET_IFNAME", "lo", 1);
	setenv("NNP_COMM_TIMEOUT_S", "1", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	at = root_of(&id);
	nnp_sockaddr_text(&at, where);
	assert_int_equal(at.in.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	/* Ranks 0 and 1 of 3: rank 2 never comes. */
	join_all(&id, 3, two, 2, rt);
	snprintf(want, sizeof(want),
		 "rank 2 never joined the rendezvous at %s after 1 s", where);
	for (i = 0; i < 2; i++) {
		assert_int_equal(rt[i].res, NNP_ERROR_TIMEOUT);
		assert_string_equal(rt[i].error, want);
	}
	/* Nobody serves this id any more. */
	assert_int_equal(lone_join(&id, 3, 1), NNP_ERROR_TIMEOUT);
	snprintf(want, sizeof(want),
		 "rank 1 could not reach the rendezvous at %s in 1 s", where);
	assert_string_equal(nnp_get_last_error(), want);
	/* A rank taken already. */
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	at = root_of(&id);
	nnp_sockaddr_text(&at, where);
	start_ranks(&id, 2, two, 1, rt);
	nap_ms(300);
	assert_int_equal(lone_join(&id, 2, 0), NNP_ERROR_INVALID_ARGUMENT);
	snprintf(want, sizeof(want),
		 "rank 0: the rendezvous at %s refused rank 0 of 2 (taken already, or not the job's size)",
		 where);
	assert_string_equal(nnp_get_last_error(), want);
	start_ranks(&id, 2, two + 1, 1, rt + 1);
	wait_ranks(rt, 2);
	assert_job_ok(rt, 2);
	setenv("NNP_COMM_ID", "no-port-here", 1);
	setenv("NNP_COMM_SECRET", "0123456789abcdef", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(), "'no-port-here' is not host:port");
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
	unsetenv("NNP_SOCKET_IFNAME");
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* No ring though every rank has two links: the last error names the hop. */
static void test_no_ring_error_text(void **state)
{
	struct nnp_ring ring;

	(void)state;
	/* Two squares joined at one corner (a figure eight): every rank has
	 * two neighbours or more, rank order breaks at 3 -> 4, no ring. */
	chips(7);
	wire(0, 0, 1, 1);
	wire(1, 0, 2, 1);
	wire(2, 0, 3, 1);
	wire(3, 0, 0, 1);
	wire(3, 2, 5, 1);
	wire(5, 0, 6, 1);
	wire(6, 0, 4, 1);
	wire(4, 0, 3, 3);
	assert_int_equal(nnp_comm_plan(info, 7, 7, &ring), NNP_ERROR_NO_PATH);
	assert_string_equal(nnp_get_last_error(),
			    "no ring over the 7 ranks: no up link from rank 4 (chip 112) to rank 5 (chip 115), and no other ring found");
	chips(2);
	info[1].chip = info[0].chip;
	assert_int_equal(nnp_comm_plan(info, 2, 7, &ring), NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(), "two of the 2 ranks are on the same chip");
}

/* Read what @fd has until it ends: how long that took, -1 if over @max_ms. */
static int64_t ms_until_closed(int fd, int64_t max_ms)
{
	int64_t start = ms_now();
	struct timeval tv = { .tv_usec = 100 * 1000 };
	char buf[256];

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (ms_now() - start <= max_ms) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return ms_now() - start;
	}
	return -1;
}

/*
 * Broken and silent strangers at the root: random bytes are dropped at
 * once, a hello cut short and left hanging is dropped at its own deadline
 * (HELLO_MS, 5 s), not the job's, and one cut short and closed is just
 * forgotten; the job goes on without waiting for any of them.
 */
static void test_rendezvous_truncated_and_random(void **state)
{
	const int ranks[2] = { 0, 1 };
	/* An open, then half a hello. */
	const size_t cut = offsetof(struct nnp_boot_in, hello) +
			   sizeof(struct nnp_boot_hello) / 2;
	struct nnp_boot_in in = {
		.open_hdr = { NNP_BOOT_MSG_MAGIC, sizeof(in.open) },
		.open = { .version = NNP_BOOT_VERSION },
		.hdr = { NNP_BOOT_MSG_MAGIC, sizeof(in.hello) },
	};
	struct rank_thread rt[2];
	uint8_t noise[4096];
	nnp_unique_id_t id;
	struct nnp_job_id j;
	int64_t took, start;
	int hanging, closing, random_fd;
	size_t i;

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_COMM_TIMEOUT_S", "30", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	memcpy(&j, id.internal, sizeof(j));
	for (i = 0; i < sizeof(noise); i++)
		noise[i] = (uint8_t)rand();

	random_fd = dial(&j.root);
	assert_true(random_fd >= 0);
	assert_int_equal(send(random_fd, noise, sizeof(noise), 0), sizeof(noise));
	took = ms_until_closed(random_fd, 10000);
	assert_in_range(took, 0, AT_ONCE_MS);
	close(random_fd);

	closing = dial(&j.root);
	assert_true(closing >= 0);
	assert_int_equal(send(closing, &in, cut, 0), cut);
	close(closing);

	hanging = dial(&j.root);
	assert_true(hanging >= 0);
	assert_int_equal(send(hanging, &in, cut, 0), cut);
	/* Its own 5 s, not before; late by load, but never the job's 30 s. */
	took = ms_until_closed(hanging, 20000);
	assert_in_range(took, 4000, 12000);
	close(hanging);

	start = ms_now();
	join_all(&id, 2, ranks, 2, rt);
	assert_job_ok(rt, 2);
	assert_in_range(ms_now() - start, 0, AT_ONCE_MS);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/*
 * Rank 1 of 2 connects and opens its session well before the job's 3 s
 * deadline but finishes its hello 600 ms after it: the root reads the
 * hello under way, so the job completes and the rank hears so, sealed,
 * rather than a closed connection. A margin of 2 s before the deadline
 * and 2.4 s before the hello's own 5 s: room for a loaded host.
 */
static void test_rendezvous_hello_at_deadline(void **state)
{
	const int first[1] = { 0 };
	struct hello_msg in = hello_of(1, 1001);
	const size_t cut = sizeof(in) / 2;
	struct answer_msg reply;
	struct timeval tv = { .tv_sec = 5 };
	struct nnp_boot_session s;
	struct rank_thread rt[1];
	struct nnp_job_id j;
	nnp_unique_id_t id;
	int64_t start;
	int fd;

	(void)state;
	unsetenv("NNP_COMM_ID");
	setenv("NNP_COMM_TIMEOUT_S", "3", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	memcpy(&j, id.internal, sizeof(j));
	start = ms_now();
	start_ranks(&id, 2, first, 1, rt);
	nap_ms(1000);
	fd = dial(&j.root);
	assert_true(fd >= 0);
	assert_true(raw_open(fd, j.secret, 0x11, &s));
	nnp_boot_seal_hello(&s, &in.hello);
	assert_int_equal(send(fd, &in, cut, MSG_NOSIGNAL), (ssize_t)cut);
	nap_ms(3600 - (ms_now() - start));
	assert_int_equal(send(fd, (uint8_t *)&in + cut, sizeof(in) - cut,
			      MSG_NOSIGNAL), (ssize_t)(sizeof(in) - cut));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(recv(fd, &reply, sizeof(reply), MSG_WAITALL),
			 (ssize_t)sizeof(reply));
	close(fd);
	assert_int_equal(reply.th.len, sizeof(reply.table));
	assert_true(nnp_boot_reply_sealed(&s, &reply.r, reply.table, 2));
	assert_int_equal(nnp_boot_reply_status(&reply.r), NNP_SUCCESS);
	assert_int_equal(reply.table[1].chip, 1001);
	wait_ranks(rt, 1);
	assert_int_equal(rt[0].res, NNP_SUCCESS);
	assert_int_equal(rt[0].all[1].chip, 1001);
	assert_int_equal(rt[0].epoch, reply.r.epoch);
	free(rt[0].all);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* ---- a rank against a root that is not one ---- */

#define UNTOUCHED_EPOCH	0x5eed5eed5eed5eedull

struct fake_root {
	int listen_fd;
	bool proves;		/* holds the job's secret: proves it first */
	bool seals;		/* @answer is a reply message: seal it */
	const void *answer;	/* sent once the rank's open is in */
	size_t answer_len;
	int hold_ms;		/* then kept open this long at most */
	struct nnp_boot_session s;	/* .secret: the job's, if it proves */
	char addr[32];		/* where it listens, host:port */
	_Alignas(uint64_t) uint8_t heard[4096];	/* everything the rank sent */
	size_t nheard;
};

/* As a root would, answer the open in @f->heard with a proof of @f->s. */
static bool fake_prove(int fd, struct fake_root *f)
{
	const struct nnp_boot_in *in = (const void *)f->heard;
	struct {
		struct nnp_boot_hdr h;
		struct nnp_boot_proof p;
	} proof = { .h = { NNP_BOOT_MSG_MAGIC, sizeof(proof.p) } };

	memcpy(f->s.rank_nonce, in->open.nonce, sizeof(f->s.rank_nonce));
	memset(f->s.root_nonce, 0x77, sizeof(f->s.root_nonce));
	memcpy(proof.p.nonce, f->s.root_nonce, sizeof(proof.p.nonce));
	nnp_boot_prove_root(&f->s, proof.p.mac);
	return send(fd, &proof, sizeof(proof), MSG_NOSIGNAL) == (ssize_t)sizeof(proof);
}

/* After the rank's open: the proof if @f gives one, then @f's answer. */
static bool fake_answer(int fd, struct fake_root *f)
{
	uint8_t answer[4096];

	assert_true(f->answer_len <= sizeof(answer));
	if (f->answer_len)
		memcpy(answer, f->answer, f->answer_len);
	if (f->proves && !fake_prove(fd, f))
		return false;
	/* For this session, now that both nonces are known. */
	if (f->seals)
		nnp_boot_seal_reply(&f->s, (struct nnp_boot_reply *)(answer +
				    sizeof(struct nnp_boot_hdr)), NULL, 0);
	return send(fd, answer, f->answer_len, MSG_NOSIGNAL) == (ssize_t)f->answer_len;
}

static int fake_root_main(void *arg)
{
	struct fake_root *f = arg;
	const size_t open = offsetof(struct nnp_boot_in, hdr);
	struct timeval tv = { f->hold_ms / 1000, f->hold_ms % 1000 * 1000 };
	int fd = accept(f->listen_fd, NULL, NULL);
	ssize_t n;

	if (fd < 0)
		return 1;
	if (recv(fd, f->heard, open, MSG_WAITALL) == (ssize_t)open && fake_answer(fd, f)) {
		f->nheard = open;
		/* Hear the rank out: until it hangs up, or @hold_ms. */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (f->nheard < sizeof(f->heard) &&
		       (n = recv(fd, f->heard + f->nheard,
				 sizeof(f->heard) - f->nheard, 0)) > 0)
			f->nheard += (size_t)n;
	}
	close(fd);
	return 0;
}

/* A socket listening on a free port of 127.0.0.1, that address in @addr. */
static int listen_loopback(char addr[32])
{
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(at);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&at, sizeof(at)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&at, &alen), 0);
	snprintf(addr, 32, "127.0.0.1:%u", ntohs(at.sin_port));
	return fd;
}

/*
 * Rank 1 of 2 joining at NNP_COMM_ID (secret "0123456789abcdef"), where
 * @f (its answer, then @hold_ms of silence) is all it gets: its result, in
 * *@ms how long it took, and in @error (if not NULL, 256 bytes) its last
 * error. A rank that fails keeps its epoch and gets no table.
 */
static nnp_result_t join_fake_root(struct fake_root *f, int64_t *ms, char *error)
{
	struct rank_thread r;
	nnp_unique_id_t id;
	struct nnp_job_id j;
	int64_t start;
	thrd_t t;

	f->listen_fd = listen_loopback(f->addr);
	setenv("NNP_COMM_ID", f->addr, 1);
	setenv("NNP_COMM_SECRET", "0123456789abcdef", 1);
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	memcpy(&j, id.internal, sizeof(j));
	f->s.secret = j.secret;
	f->nheard = 0;
	assert_int_equal(thrd_create(&t, fake_root_main, f), thrd_success);
	r = (struct rank_thread){ .id = &id, .nranks = 2, .rank = 1,
				  .epoch = UNTOUCHED_EPOCH };
	start = ms_now();
	rank_main(&r);
	*ms = ms_now() - start;
	if (r.res != NNP_SUCCESS) {
		assert_null(r.all);
		assert_int_equal(r.epoch, UNTOUCHED_EPOCH);
	}
	free(r.all);
	if (error)
		memcpy(error, r.error, sizeof(r.error));
	thrd_join(t, NULL);
	close(f->listen_fd);
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
	return r.res;
}

/* A proven root's @answer of @len bytes (a reply message to seal if @seals). */
static nnp_result_t join_proven_root(const void *answer, size_t len, bool seals,
				     int hold_ms, int64_t *ms, char *error)
{
	struct fake_root f = { .proves = true, .seals = seals, .answer = answer,
			       .answer_len = len, .hold_ms = hold_ms };

	return join_fake_root(&f, ms, error);
}

/*
 * What a rank reads from its root is bounded too: random bytes, a proof,
 * reply or table of the wrong length (1 GiB announced), a reply cut short,
 * a status no root sends are each NNP_ERROR_IO at once, with nothing
 * allocated for them; a root that says nothing is NNP_ERROR_TIMEOUT at
 * NNP_COMM_TIMEOUT_S, plus the 5 s the rank gives the root to tell it the
 * outcome. The root here holds the job's secret: the rank reads this far.
 */
static void test_join_hostile_root(void **state)
{
	struct {
		struct nnp_boot_hdr h;
		struct nnp_boot_reply r;
		struct nnp_boot_hdr table;
	} ok_then_huge = {
		{ NNP_BOOT_MSG_MAGIC, sizeof(struct nnp_boot_reply) },
		{ .status = NNP_SUCCESS, .epoch = 42 },
		{ NNP_BOOT_MSG_MAGIC, 1u << 30 },
	};
	struct nnp_boot_hdr huge = { NNP_BOOT_MSG_MAGIC, 1u << 30 };
	struct {
		struct nnp_boot_hdr h;
		struct nnp_boot_reply r;
	} bad_status = { { NNP_BOOT_MSG_MAGIC, sizeof(struct nnp_boot_reply) }, { .epoch = 42 } };
	static const uint32_t foreign[] = {
		NNP_ERROR_IO, NNP_ERROR_VERSION, NNP_ERROR_VERSION + 1, 0xb2b2b2b2u,
	};
	struct fake_root f = { .answer = &huge, .answer_len = sizeof(huge),
			       .hold_ms = 10000 };
	uint8_t noise[4096];
	int64_t ms;
	size_t i;

	(void)state;
	setenv("NNP_COMM_TIMEOUT_S", "10", 1);
	for (i = 0; i < sizeof(noise); i++)
		noise[i] = (uint8_t)rand();
	/* A proof of 1 GiB. */
	assert_int_equal(join_fake_root(&f, &ms, NULL), NNP_ERROR_IO);
	assert_in_range(ms, 0, AT_ONCE_MS);
	assert_int_equal(join_proven_root(noise, sizeof(noise), false, 10000, &ms, NULL),
			 NNP_ERROR_IO);
	assert_in_range(ms, 0, AT_ONCE_MS);
	assert_int_equal(join_proven_root(&huge, sizeof(huge), false, 10000, &ms, NULL),
			 NNP_ERROR_IO);
	assert_in_range(ms, 0, AT_ONCE_MS);
	assert_int_equal(join_proven_root(&ok_then_huge, sizeof(ok_then_huge), false,
					  10000, &ms, NULL), NNP_ERROR_IO);
	assert_in_range(ms, 0, AT_ONCE_MS);
	/* The header and half the reply, then the root goes away. */
	assert_int_equal(join_proven_root(&ok_then_huge, sizeof(huge) + 4, false, 1,
					  &ms, NULL), NNP_ERROR_IO);
	assert_in_range(ms, 0, AT_ONCE_MS);
	/*
	 * A status no root sends, whatever its value and though sealed, is
	 * NNP_ERROR_IO: never a result the caller was not promised (found by
	 * fuzz_bootstrap).
	 */
	for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		char error[256], want[128];

		bad_status.r.status = foreign[i];
		assert_int_equal(join_proven_root(&bad_status, sizeof(bad_status), true,
						  10000, &ms, error), NNP_ERROR_IO);
		assert_in_range(ms, 0, AT_ONCE_MS);
		snprintf(want, sizeof(want), "answered status %u, which no root sends",
			 foreign[i]);
		assert_non_null(strstr(error, want));
	}
	/*
	 * A rank waits for the root's word 5 s (ANSWER_MS) past its deadline,
	 * 2 s here: not before; late by load, but not until the root gives up.
	 */
	setenv("NNP_COMM_TIMEOUT_S", "2", 1);
	assert_int_equal(join_proven_root(NULL, 0, false, 20000, &ms, NULL),
			 NNP_ERROR_TIMEOUT);
	assert_in_range(ms, 6900, 12000);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* Is @needle (@nlen bytes) anywhere in @hay (@len bytes)? */
static bool holds(const uint8_t *hay, size_t len, const void *needle, size_t nlen)
{
	return memmem(hay, len, needle, nlen) != NULL;
}

/*
 * An impostor that took NNP_COMM_ID's port first, without the job's
 * secret: it answers the rank's first bytes with a well-formed proof of
 * random bytes, then a success with its own epoch and a table. The rank
 * never writes the secret (nor any 8 bytes of it): all it sends is its
 * open, version 2 with a nonce; it leaves, NNP_ERROR_IO naming the
 * impostor, without the epoch or the table, its hello never sent.
 */
static void test_join_impostor_root(void **state)
{
	struct {
		struct nnp_boot_hdr ph;
		struct nnp_boot_proof p;
		struct nnp_boot_hdr rh;
		struct nnp_boot_reply r;
		struct nnp_boot_hdr th;
		struct nnp_rank_info table[2];
	} lie = {
		{ NNP_BOOT_MSG_MAGIC, sizeof(lie.p) }, { .nonce = { 0 } },
		{ NNP_BOOT_MSG_MAGIC, sizeof(lie.r) },
		{ .status = NNP_SUCCESS, .epoch = 0xfeedfacecafef00dull },
		{ NNP_BOOT_MSG_MAGIC, sizeof(lie.table) },
		{ { .chip = 1 }, { .chip = 2 } },
	};
	struct fake_root f = { .answer = &lie, .answer_len = sizeof(lie),
			       .hold_ms = 10000 };
	const struct nnp_boot_in *heard = (const void *)f.heard;
	const char *secret = "0123456789abcdef";
	char error[256], want[256];
	size_t i;
	int64_t ms;

	(void)state;
	setenv("NNP_COMM_TIMEOUT_S", "10", 1);
	for (i = 0; i < sizeof(lie.p); i++)
		((uint8_t *)&lie.p)[i] = (uint8_t)rand();
	memset(lie.r.mac, 0xa5, sizeof(lie.r.mac));
	assert_int_equal(join_fake_root(&f, &ms, error), NNP_ERROR_IO);
	for (i = 0; i + 8 <= strlen(secret); i++)
		assert_false(holds(f.heard, f.nheard, secret + i, 8));
	assert_int_equal(f.nheard, offsetof(struct nnp_boot_in, hdr));
	assert_int_equal(heard->open_hdr.magic, NNP_BOOT_MSG_MAGIC);
	assert_int_equal(heard->open_hdr.len, sizeof(struct nnp_boot_open));
	assert_int_equal(heard->open.version, 2);
	assert_int_equal(heard->open.kind, NNP_BOOT_JOIN);
	assert_in_range(ms, 0, AT_ONCE_MS);
	snprintf(want, sizeof(want),
		 "rank 1: the rendezvous at %s did not prove it holds the job's secret, so it is not the job's root (another job's secret, or an impostor)",
		 f.addr);
	assert_string_equal(error, want);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

/* ---- a man in the middle ---- */

/*
 * Between rank 1 of 2 and its root: relays the open, the proof and the
 * hello as they are, then the root's answer, kept; or, replaying, sends
 * the answer kept from an earlier job instead.
 */
struct mitm {
	int listen_fd;
	char addr[32];		/* where it listens, host:port */
	union nnp_sockaddr root;
	bool replay;
	struct answer_msg kept;
};

/* Move exactly @len bytes from @from to @to, a copy into @keep. */
static bool relay(int from, int to, size_t len, void *keep)
{
	if (recv(from, keep, len, MSG_WAITALL) != (ssize_t)len)
		return false;
	return send(to, keep, len, MSG_NOSIGNAL) == (ssize_t)len;
}

static int mitm_main(void *arg)
{
	struct mitm *m = arg;
	union {
		struct hello_msg hello;
		struct answer_msg answer;
	} buf;
	int rank = accept(m->listen_fd, NULL, NULL), root = -1, tries;

	/* Rank 0 may not serve its root yet. */
	for (tries = 0; rank >= 0 && (root = dial(&m->root)) < 0 && tries < 200; tries++)
		nap_ms(10);
	if (root >= 0 &&
	    relay(rank, root, offsetof(struct nnp_boot_in, hdr), &buf) &&
	    relay(root, rank, sizeof(struct nnp_boot_hdr) + sizeof(struct nnp_boot_proof), &buf) &&
	    relay(rank, root, sizeof(buf.hello), &buf) &&
	    recv(root, &buf.answer, sizeof(buf.answer), MSG_WAITALL) == (ssize_t)sizeof(buf.answer)) {
		if (!m->replay)
			m->kept = buf.answer;
		send(rank, &m->kept, sizeof(m->kept), MSG_NOSIGNAL);
	}
	if (root >= 0)
		close(root);
	if (rank >= 0)
		close(rank);
	return 0;
}

/*
 * One job of 2 ranks with the secret "0123456789abcdef": rank 0 serves
 * the root at a port of its own, rank 1 joins through @m. Results in @rt.
 */
static void job_through(struct mitm *m, struct rank_thread *rt)
{
	nnp_unique_id_t id0, id1;
	char addr[32];
	thrd_t t;

	m->listen_fd = listen_loopback(m->addr);
	setenv("NNP_COMM_SECRET", "0123456789abcdef", 1);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", 20000 + rand() % 20000);
	setenv("NNP_COMM_ID", addr, 1);
	assert_int_equal(nnp_bootstrap_new_id(&id0), NNP_SUCCESS);
	m->root = root_of(&id0);
	setenv("NNP_COMM_ID", m->addr, 1);
	assert_int_equal(nnp_bootstrap_new_id(&id1), NNP_SUCCESS);
	assert_int_equal(thrd_create(&t, mitm_main, m), thrd_success);
	rt[0] = (struct rank_thread){ .id = &id0, .nranks = 2, .rank = 0 };
	rt[1] = (struct rank_thread){ .id = &id1, .nranks = 2, .rank = 1,
				      .epoch = UNTOUCHED_EPOCH };
	assert_int_equal(thrd_create(&rt[0].t, rank_main, &rt[0]), thrd_success);
	assert_int_equal(thrd_create(&rt[1].t, rank_main, &rt[1]), thrd_success);
	wait_ranks(rt, 2);
	thrd_join(t, NULL);
	close(m->listen_fd);
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
}

/*
 * The root's answer to rank 1 in one job, replayed by a man in the middle
 * to rank 1 of the next job of the same secret (which it relays up to
 * the answer), is refused: NNP_ERROR_IO, the old epoch not taken. Rank 0
 * gets its own job's epoch.
 */
static void test_rendezvous_replayed_answer(void **state)
{
	struct mitm m = { .replay = false };
	const struct nnp_boot_reply *old = &m.kept.r;
	struct rank_thread rt[2];
	char want[256];
	uint64_t first;

	(void)state;
	setenv("NNP_COMM_TIMEOUT_S", "5", 1);
	job_through(&m, rt);
	assert_job_ok(rt, 2);
	first = rt[0].epoch;
	/* What was kept is the honest answer, the first job's epoch in it. */
	assert_int_equal(old->status, NNP_SUCCESS);
	assert_int_equal(old->epoch, first);
	m.replay = true;
	job_through(&m, rt);
	assert_int_equal(rt[0].res, NNP_SUCCESS);
	free(rt[0].all);
	assert_int_not_equal(rt[0].epoch, first);
	assert_int_equal(rt[1].res, NNP_ERROR_IO);
	assert_int_equal(rt[1].epoch, UNTOUCHED_EPOCH);
	assert_null(rt[1].all);
	snprintf(want, sizeof(want),
		 "rank 1: the rendezvous at %s answered with a reply not sealed for this rank, so it is not the job's root (another job's secret, or an impostor)",
		 m.addr);
	assert_string_equal(rt[1].error, want);
	unsetenv("NNP_COMM_TIMEOUT_S");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_order_ring),
		cmocka_unit_test(test_one_sided_link),
		cmocka_unit_test(test_rank_link_checks),
		cmocka_unit_test(test_torus_needs_search),
		cmocka_unit_test(test_no_ring),
		cmocka_unit_test(test_topo_ring_of_4),
		cmocka_unit_test(test_topo_double_ring),
		cmocka_unit_test(test_topo_torus),
		cmocka_unit_test(test_topo_torus_any_numbering),
		cmocka_unit_test(test_split_groups),
		cmocka_unit_test(test_split_member_failed),
		cmocka_unit_test(test_split_rings),
		cmocka_unit_test(test_shrink_groups),
		cmocka_unit_test(test_shrink_bad_lists),
		cmocka_unit_test(test_shrink_rings),
		cmocka_unit_test(test_rendezvous),
		cmocka_unit_test(test_rendezvous_at_comm_id),
		cmocka_unit_test(test_rendezvous_failures),
		cmocka_unit_test(test_rendezvous_idle_stranger),
		cmocka_unit_test(test_rendezvous_bad_hellos),
		cmocka_unit_test(test_rendezvous_wrong_secret),
		cmocka_unit_test(test_rendezvous_secret_every_byte_and_bit),
		cmocka_unit_test(test_rendezvous_comm_id_secret),
		cmocka_unit_test(test_rendezvous_oversized),
		cmocka_unit_test(test_rendezvous_bound_address),
		cmocka_unit_test(test_rendezvous_ipv6),
		cmocka_unit_test(test_ifname_match),
		cmocka_unit_test(test_rendezvous_error_text),
		cmocka_unit_test(test_no_ring_error_text),
		cmocka_unit_test(test_rendezvous_truncated_and_random),
		cmocka_unit_test(test_rendezvous_hello_at_deadline),
		cmocka_unit_test(test_join_hostile_root),
		cmocka_unit_test(test_join_impostor_root),
		cmocka_unit_test(test_rendezvous_replayed_answer),
	};

	srand((unsigned int)time(NULL) ^ (unsigned int)getpid());
	return cmocka_run_group_tests_name("libnnp_comm", tests, NULL, NULL);
}
