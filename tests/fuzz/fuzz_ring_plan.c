// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: libnnp's ring planner, whose input (every rank's ports)
 * comes from the other ranks over the network.
 *
 * Input: a rank count, then per rank its chip, its port count and, per
 * port, state, peer chip and peer port. A planned ring must be a
 * permutation of the ranks starting at rank 0 whose every hop leaves by a
 * port that is up and leads to a port of the next rank's chip that the
 * next rank's own table wires back to it (the tables disagree when a
 * hostile or confused rank sends one); two ranks on one
 * chip must get NNP_ERROR_INVALID_ARGUMENT. Then the fabric beyond the
 * ring (nnp_topo_plan()): a second port pair must be a second link along
 * every hop, a torus a grid whose every row and column is a ring of
 * links, and no chip may give one port to two pairs. A last byte, when
 * there is one, asks placement (nnp_place_plan()) for a ring or a torus
 * of the ranks as free chips: what it picks must be that many distinct
 * chips, each joined to its neighbours along the ring or along each row
 * and column by a link both ends report.
 *
 * In detail (docs/testing.md has the summary):
 * a planned ring is a permutation starting at rank 0 whose every hop leaves
 * by an up port leading to the next chip; two ranks on one chip are
 * refused; the topology planned beyond it (`nnp_topo_plan()`): a second
 * port pair is a second link along every hop, a torus a grid of W x H = n
 * whose every row and column is a ring of up links, and no chip gives one
 * port to two pairs; placement of R x C (R 1 to 4, C 1 to 16) picks R x C
 * distinct chips each linked to the next along its ring, or to the next
 * in its row and in its column, NO_DEVICE exactly when fewer are free,
 * else NO_PATH
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "ring_plan.h"

#define MAX_RANKS	16
#define PORT_BYTES	3
#define RANK_BYTES	(2 + NNP_MAX_PORTS * PORT_BYTES)

/* What the target ran: printed at exit for tests/fuzz/run.sh. */
static unsigned long long tables, rings, tori, picks;

static void report(void)
{
	fprintf(stderr, "fuzz_ring_plan: %llu tables planned, %llu rings and %llu tori checked, %llu placements\n",
		tables, rings, tori, picks);
}

static void fail(const char *what, uint32_t n)
{
	fprintf(stderr, "fuzz_ring_plan: %u ranks: %s\n", n, what);
	abort();
}

static bool shares_chip(const struct nnp_rank_info *info, uint32_t n)
{
	uint32_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (info[i].chip == info[j].chip)
				return true;
	return false;
}

/*
 * Port @p of rank @a is up and leads to rank @b's port @q, which @b's
 * table wires back to port @p of @a.
 */
static bool hop(const struct nnp_rank_info *info, uint32_t a, uint32_t p,
		uint32_t b, uint32_t q)
{
	return p < NNP_MAX_PORTS && p < info[a].nports &&
	       (info[a].ports[p].state & NNP_LINK_UP) &&
	       info[a].ports[p].peer_chip == info[b].chip &&
	       info[a].ports[p].peer_port == q &&
	       q < NNP_MAX_PORTS && q < info[b].nports &&
	       (info[b].ports[q].state & NNP_LINK_WIRED) &&
	       info[b].ports[q].peer_chip == info[a].chip &&
	       info[b].ports[q].peer_port == p;
}

static void check_ring(const struct nnp_rank_info *info, uint32_t n,
		       const struct nnp_ring *ring)
{
	bool seen[MAX_RANKS] = { false };
	uint32_t i;

	if (n > 1 && ring->order[0] != 0)
		fail("the ring does not start at rank 0", n);
	for (i = 0; i < n; i++) {
		if (ring->order[i] >= n || seen[ring->order[i]])
			fail("the ring is not a permutation of the ranks", n);
		seen[ring->order[i]] = true;
	}
	for (i = 0; n > 1 && i < n; i++) {
		uint32_t a = ring->order[i], b = ring->order[(i + 1) % n];
		uint32_t p = ring->send_port[a];

		if (!hop(info, a, p, b, ring->recv_port[b]))
			fail("a hop is no link both ends report", n);
	}
}

/* No two of the ports @n ports @ports of one chip are the same. */
static bool distinct(const uint32_t *ports, uint32_t n)
{
	uint32_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (ports[i] == ports[j])
				return false;
	return true;
}

static void check_topo(const struct nnp_rank_info *info, uint32_t n,
		       const struct nnp_ring *ring, const struct nnp_topo *t)
{
	uint32_t grid[MAX_RANKS], i, d;
	bool seen[MAX_RANKS] = { false };

	for (i = 0; n > 1 && i < n; i++) {
		uint32_t a = ring->order[i], b = ring->order[(i + 1) % n];
		const struct nnp_dim *da = &t->ring[a];
		uint32_t ports[4] = { da->next_port[0], da->prev_port[0],
				      da->next_port[1], da->prev_port[1] };

		if (da->n != n || da->pos != i || da->pairs != t->pairs ||
		    da->next_port[0] != ring->send_port[a])
			fail("the ring's dimension is not the ring", n);
		if (t->pairs == 2 &&
		    (!hop(info, a, da->next_port[1], b, t->ring[b].prev_port[1]) ||
		     !distinct(ports, 4)))
			fail("a second pair is no second link along the ring", n);
	}
	if (!t->w)
		return;
	if (t->w < 2 || t->h < 2 || t->w * t->h != n)
		fail("a torus of the wrong size", n);
	for (i = 0; i < n; i++) {
		uint32_t x = t->torus[i][0].pos, y = t->torus[i][1].pos;

		if (x >= t->w || y >= t->h || seen[y * t->w + x])
			fail("two ranks at one place of the torus", n);
		seen[y * t->w + x] = true;
		grid[y * t->w + x] = i;
	}
	for (i = 0; i < n; i++) {
		uint32_t x = t->torus[i][0].pos, y = t->torus[i][1].pos;
		uint32_t ports[4];

		for (d = 0; d < 2; d++) {
			const struct nnp_dim *dd = &t->torus[i][d];
			uint32_t b = d ? grid[(y + 1) % t->h * t->w + x] :
				     grid[y * t->w + (x + 1) % t->w];

			if (dd->n != (d ? t->h : t->w) || dd->pairs != 1 ||
			    !hop(info, i, dd->next_port[0], b,
				 t->torus[b][d].prev_port[0]))
				fail("a torus dimension is no ring of links", n);
			ports[2 * d] = dd->next_port[0];
			ports[2 * d + 1] = dd->prev_port[0];
		}
		if (!distinct(ports, 4))
			fail("a chip gives one port to two torus directions", n);
	}
}

/* Placement of a @rows x @cols job on the @n ranks as free chips. */
static void check_place(const struct nnp_rank_info *info, uint32_t n,
			uint32_t rows, uint32_t cols)
{
	uint32_t out[MAX_RANKS], k = rows * cols, x, y, i;
	bool seen[MAX_RANKS] = { false };
	nnp_result_t res = nnp_place_plan(info, n, rows, cols, out);

	if ((res == NNP_ERROR_NO_DEVICE) != (k > n))
		fail("placement: NO_DEVICE is not too few chips", n);
	if (res != NNP_SUCCESS) {
		if (res != NNP_ERROR_NO_DEVICE && res != NNP_ERROR_NO_PATH)
			fail("placement: an unexpected result", n);
		return;
	}
	picks++;
	for (i = 0; i < k; i++) {
		if (out[i] >= n || seen[out[i]])
			fail("placement: not distinct chips", n);
		seen[out[i]] = true;
	}
	if (rows == 1 || cols == 1)
		rows = 1, cols = k;
	for (y = 0; y < rows; y++)
		for (x = 0; x < cols; x++) {
			uint32_t a = out[y * cols + x];
			uint32_t right = out[y * cols + (x + 1) % cols];
			uint32_t down = out[(y + 1) % rows * cols + x];

			if ((cols > 1 && nnp_rank_port_to(info, a, right) < 0) ||
			    (rows > 1 && nnp_rank_port_to(info, a, down) < 0))
				fail("placement: neighbours not linked", n);
		}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	atexit(report);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nnp_rank_info info[MAX_RANKS];
	struct nnp_ring ring = { 0 };
	nnp_result_t res;
	uint32_t n, r, p;

	if (!size)
		return 0;
	n = data[0] % (MAX_RANKS + 1);
	if (size < 1 + (size_t)n * RANK_BYTES)
		return 0;
	memset(info, 0, sizeof(info));
	for (r = 0; r < n; r++) {
		const uint8_t *b = data + 1 + r * RANK_BYTES;

		info[r].chip = b[0];
		info[r].nports = b[1];
		for (p = 0; p < NNP_MAX_PORTS; p++) {
			info[r].ports[p].state = b[2 + PORT_BYTES * p];
			info[r].ports[p].peer_chip = b[3 + PORT_BYTES * p];
			info[r].ports[p].peer_port = b[4 + PORT_BYTES * p];
		}
	}
	res = nnp_ring_plan(info, n, &ring);
	tables++;
	if (shares_chip(info, n) != (res == NNP_ERROR_INVALID_ARGUMENT))
		fail("two ranks on one chip and INVALID_ARGUMENT disagree", n);
	if (res == NNP_SUCCESS) {
		struct nnp_topo topo;

		check_ring(info, n, &ring);
		rings++;
		if (nnp_topo_plan(info, n, &ring, &topo) != NNP_SUCCESS)
			fail("no topology planned", n);
		check_topo(info, n, &ring, &topo);
		tori += topo.w != 0;
		nnp_topo_free(&topo);
		nnp_ring_free(&ring);
	} else if (res != NNP_ERROR_NO_PATH && res != NNP_ERROR_INVALID_ARGUMENT) {
		fail("an unexpected result", n);
	}
	if (size > 1 + (size_t)n * RANK_BYTES) {
		uint8_t shape = data[1 + n * RANK_BYTES];

		check_place(info, n, 1 + (shape >> 4) % 4, 1 + (shape & 15));
	}
	return 0;
}
