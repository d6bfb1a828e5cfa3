// SPDX-License-Identifier: MIT
/* libnnp ring planning: a Hamiltonian cycle over the chips' up links. */
#include <stdbool.h>
#include <stdlib.h>

#include "ring_plan.h"

/* Searches this long give up: no ring, as far as we will look. */
#define SEARCH_BUDGET	(1u << 22)

int nnp_rank_port_to(const struct nnp_rank_info *info, uint32_t a, uint32_t b)
{
	uint32_t p;

	for (p = 0; p < info[a].nports && p < NNP_MAX_PORTS; p++)
		if ((info[a].ports[p].state & NNP_LINK_UP) &&
		    info[a].ports[p].peer_chip == info[b].chip)
			return (int)p;
	return -1;
}

struct search {
	const struct nnp_rank_info *info;
	uint32_t n;
	uint32_t *order;
	bool *used;
	uint32_t budget;
};

/* Extend order[0..depth) to a full ring that closes back to order[0]. */
static bool extend(struct search *s, uint32_t depth)
{
	uint32_t r, last = s->order[depth - 1];

	if (depth == s->n)
		return nnp_rank_port_to(s->info, last, s->order[0]) >= 0;
	for (r = 0; r < s->n; r++) {
		if (s->used[r] || nnp_rank_port_to(s->info, last, r) < 0)
			continue;
		if (!s->budget--)
			return false;
		s->used[r] = true;
		s->order[depth] = r;
		if (extend(s, depth + 1))
			return true;
		s->used[r] = false;
	}
	return false;
}

void nnp_ring_free(struct nnp_ring *ring)
{
	free(ring->order);
	free(ring->send_port);
	free(ring->recv_port);
	ring->order = ring->send_port = ring->recv_port = NULL;
}

nnp_result_t nnp_ring_plan(const struct nnp_rank_info *info, uint32_t n,
			   struct nnp_ring *ring)
{
	struct search s = { .info = info, .n = n, .budget = SEARCH_BUDGET };
	nnp_result_t res = NNP_SUCCESS;
	uint32_t i, j;

	ring->order = calloc(n, sizeof(uint32_t));
	ring->send_port = calloc(n, sizeof(uint32_t));
	ring->recv_port = calloc(n, sizeof(uint32_t));
	s.used = calloc(n, sizeof(bool));
	s.order = ring->order;
	if (!ring->order || !ring->send_port || !ring->recv_port || !s.used) {
		res = NNP_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (info[i].chip == info[j].chip)
				res = NNP_ERROR_INVALID_ARGUMENT;
	if (res != NNP_SUCCESS || n == 1)
		goto out;

	for (i = 0; i < n; i++)
		ring->order[i] = i;
	for (i = 0; i < n && nnp_rank_port_to(info, i, (i + 1) % n) >= 0; i++)
		;
	if (i < n) {
		s.used[0] = true;
		if (!extend(&s, 1))
			res = NNP_ERROR_NO_PATH;
	}
	for (i = 0; i < n && res == NNP_SUCCESS; i++) {
		uint32_t a = ring->order[i], b = ring->order[(i + 1) % n];
		int p = nnp_rank_port_to(info, a, b);

		ring->send_port[a] = (uint32_t)p;
		ring->recv_port[b] = info[a].ports[p].peer_port;
	}
out:
	free(s.used);
	if (res != NNP_SUCCESS)
		nnp_ring_free(ring);
	return res;
}
