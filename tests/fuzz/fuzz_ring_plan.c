// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: libnnp's ring planner, whose input (every rank's ports)
 * comes from the other ranks over the network.
 *
 * Input: a rank count, then per rank its chip, its port count and, per
 * port, state, peer chip and peer port. A planned ring must be a
 * permutation of the ranks starting at rank 0 whose every hop leaves by a
 * port that is up and leads to the next rank's chip; two ranks on one
 * chip must get NNP_ERROR_INVALID_ARGUMENT.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_plan.h"

#define MAX_RANKS	16
#define PORT_BYTES	3
#define RANK_BYTES	(2 + NNP_MAX_PORTS * PORT_BYTES)

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

		if (p >= NNP_MAX_PORTS || p >= info[a].nports ||
		    !(info[a].ports[p].state & NNP_LINK_UP) ||
		    info[a].ports[p].peer_chip != info[b].chip)
			fail("a hop leaves by a port that does not lead there", n);
		if (ring->recv_port[b] != info[a].ports[p].peer_port)
			fail("a hop arrives on another port than its peer's", n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	if (shares_chip(info, n) != (res == NNP_ERROR_INVALID_ARGUMENT))
		fail("two ranks on one chip and INVALID_ARGUMENT disagree", n);
	if (res == NNP_SUCCESS) {
		check_ring(info, n, &ring);
		nnp_ring_free(&ring);
	} else if (res != NNP_ERROR_NO_PATH && res != NNP_ERROR_INVALID_ARGUMENT) {
		fail("an unexpected result", n);
	}
	return 0;
}
