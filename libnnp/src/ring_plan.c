// SPDX-License-Identifier: MIT
/* libnnp ring planning: a Hamiltonian cycle over the chips' up links. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ring_plan.h"

/* Searches this long give up: no ring, as far as we will look. */
#define SEARCH_BUDGET	(1u << 22)

bool nnp_rank_link(const struct nnp_rank_info *info, uint32_t a, uint32_t p,
		   uint32_t b, uint32_t *q)
{
	uint32_t back;

	if (p >= info[a].nports || p >= NNP_MAX_PORTS ||
	    !(info[a].ports[p].state & NNP_LINK_UP) ||
	    info[a].ports[p].peer_chip != info[b].chip)
		return false;
	back = info[a].ports[p].peer_port;
	if (back >= info[b].nports || back >= NNP_MAX_PORTS ||
	    !(info[b].ports[back].state & NNP_LINK_WIRED) ||
	    info[b].ports[back].peer_chip != info[a].chip ||
	    info[b].ports[back].peer_port != p)
		return false;
	*q = back;
	return true;
}

int nnp_rank_port_to(const struct nnp_rank_info *info, uint32_t a, uint32_t b)
{
	uint32_t p, q;

	for (p = 0; p < info[a].nports && p < NNP_MAX_PORTS; p++)
		if (nnp_rank_link(info, a, p, b, &q))
			return (int)p;
	return -1;
}

/* A ring of @k of the @n ranks, from order[0], its lowest rank. */
struct search {
	const struct nnp_rank_info *info;
	uint32_t n, k;
	uint32_t *order;
	bool *used;
	uint32_t *budget;
};

/*
 * One more step of a search with *@budget left: false once none is left,
 * and it stays 0, so every level of the search then gives up.
 */
static bool spend(uint32_t *budget)
{
	if (!*budget)
		return false;
	(*budget)--;
	return true;
}

/* Extend order[0..depth) to a ring of k that closes back to order[0]. */
static bool extend(struct search *s, uint32_t depth)
{
	uint32_t r, last = s->order[depth - 1];

	if (depth == s->k)
		return nnp_rank_port_to(s->info, last, s->order[0]) >= 0;
	for (r = s->order[0] + 1; r < s->n; r++) {
		if (s->used[r] || nnp_rank_port_to(s->info, last, r) < 0)
			continue;
		if (!spend(s->budget))
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
	uint32_t budget = SEARCH_BUDGET;
	struct search s = { .info = info, .n = n, .k = n, .budget = &budget };
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

/* ---- beyond the ring: a second port pair, a torus ---- */

/* Searches for a torus this long give up: no torus, as far as we look. */
#define TORUS_BUDGET	(1u << 20)

static uint32_t port_bit(uint32_t p)
{
	return p < NNP_MAX_PORTS ? 1u << p : 0;
}

/*
 * A port of rank @a's chip linked to rank @b's chip (nnp_rank_link())
 * that neither end has given to another pair (@used, by rank), and its
 * peer port in *@peer; -1 if none.
 */
static int free_link(const struct nnp_rank_info *info, uint32_t a, uint32_t b,
		     const uint32_t *used, uint32_t *peer)
{
	uint32_t p, q;

	for (p = 0; p < info[a].nports && p < NNP_MAX_PORTS; p++)
		if (nnp_rank_link(info, a, p, b, &q) &&
		    !(used[a] & port_bit(p)) && !(used[b] & port_bit(q))) {
			*peer = q;
			return (int)p;
		}
	return -1;
}

/* The ring as dimension 0, and its second port pair if every hop has one. */
static void plan_pairs(const struct nnp_rank_info *info, uint32_t n,
		       const struct nnp_ring *ring, struct nnp_topo *topo,
		       uint32_t *used)
{
	uint32_t pos, r, q;
	int p;

	for (pos = 0; pos < n; pos++) {
		r = n > 1 ? ring->order[pos] : 0;
		topo->ring[r] = (struct nnp_dim){
			.n = n, .pos = pos, .pairs = 1,
			.next_port[0] = n > 1 ? ring->send_port[r] : 0,
			.prev_port[0] = n > 1 ? ring->recv_port[r] : 0,
		};
		used[r] = n > 1 ? port_bit(ring->send_port[r]) |
				  port_bit(ring->recv_port[r]) : 0;
	}
	topo->pairs = 1;
	if (n < 2)
		return;
	for (pos = 0; pos < n; pos++) {
		uint32_t a = ring->order[pos], b = ring->order[(pos + 1) % n];

		p = free_link(info, a, b, used, &q);
		if (p < 0) {
			topo->lone_hop = pos;
			for (r = 0; r < n; r++)
				topo->ring[r].next_port[1] = topo->ring[r].prev_port[1] = 0;
			return;
		}
		used[a] |= port_bit((uint32_t)p);
		used[b] |= port_bit(q);
		topo->ring[a].next_port[1] = (uint32_t)p;
		topo->ring[b].prev_port[1] = q;
	}
	topo->pairs = 2;
	for (r = 0; r < n; r++)
		topo->ring[r].pairs = 2;
}

struct chip_rank {
	uint32_t chip, rank;
};

static int by_chip(const void *a, const void *b)
{
	const struct chip_rank *x = a, *y = b;

	return x->chip < y->chip ? -1 : x->chip > y->chip;
}

/*
 * The torus search: cell y * w + x holds grid[cell], entered from the
 * cell before it in its row (or above it, at x = 0) by that chip's port
 * via[cell]. Row 0's length, w, is where following links first comes
 * back to rank 0 in a way the rest can be laid out on. The grid's w x h
 * cells are every one of the n ranks, or some of them when placing a job.
 */
struct tsearch {
	const struct nnp_rank_info *info;
	const struct chip_rank *chips;	/* sorted by chip */
	struct nnp_topo *topo;
	uint32_t n, w, h, cells;
	uint32_t *grid, *via, *mask;
	bool *used;
	uint32_t budget;
};

static int rank_of_chip(const struct tsearch *s, uint32_t chip)
{
	struct chip_rank key = { .chip = chip }, *hit;

	hit = bsearch(&key, s->chips, s->n, sizeof(key), by_chip);
	return hit ? (int)hit->rank : -1;
}

/* Links from rank @a's chip to rank @b's (nnp_rank_link()). */
static uint32_t links(const struct nnp_rank_info *info, uint32_t a, uint32_t b)
{
	uint32_t p, q, k = 0;

	for (p = 0; p < info[a].nports && p < NNP_MAX_PORTS; p++)
		k += nnp_rank_link(info, a, p, b, &q);
	return k;
}

/*
 * May rank @r sit at @cell (w known), given the cells before it? A
 * dimension of 2 needs two links between its chips, one each way.
 */
static bool fits(const struct tsearch *s, uint32_t cell, uint32_t r)
{
	uint32_t x = cell % s->w, y = cell / s->w;

	if (x && links(s->info, s->grid[cell - 1], r) < (s->w == 2 ? 2u : 1u))
		return false;
	if (x == s->w - 1 && s->w > 2 && !links(s->info, r, s->grid[cell - x]))
		return false;
	if (y && links(s->info, s->grid[cell - s->w], r) < (s->h == 2 ? 2u : 1u))
		return false;
	return !(y == s->h - 1 && s->h > 2 && !links(s->info, r, s->grid[x]));
}

/*
 * Every chip's four ports: a link to the next chip along each dimension
 * that no other of its pairs uses. False if the links do not allow it.
 */
static bool torus_ports(struct tsearch *s)
{
	uint32_t cell, dim, q;
	int p;

	memset(s->mask, 0, s->n * sizeof(*s->mask));
	for (dim = 0; dim < 2; dim++)
		for (cell = 0; cell < s->cells; cell++) {
			uint32_t x = cell % s->w, y = cell / s->w;
			uint32_t a = s->grid[cell];
			uint32_t b = dim ? s->grid[(y + 1) % s->h * s->w + x] :
				     s->grid[y * s->w + (x + 1) % s->w];
			struct nnp_dim *da = &s->topo->torus[a][dim];

			p = free_link(s->info, a, b, s->mask, &q);
			if (p < 0)
				return false;
			s->mask[a] |= port_bit((uint32_t)p);
			s->mask[b] |= port_bit(q);
			da->n = dim ? s->h : s->w;
			da->pos = dim ? y : x;
			da->pairs = 1;
			da->next_port[0] = (uint32_t)p;
			s->topo->torus[b][dim].prev_port[0] = q;
		}
	return true;
}

/*
 * Lay out cells @cell.. of rows 1 and on. Candidates are the peers of the
 * cell to the left (or above), their ports tried from the one that cell
 * was itself entered by: on a fabric wired alike on every chip, the
 * straight line comes first, and the search seldom backtracks.
 */
static bool place(struct tsearch *s, uint32_t cell)
{
	const struct nnp_rank_info *info = s->info;
	uint32_t x, anchor, pref, np, k;

	if (cell == s->cells)
		return torus_ports(s);
	x = cell % s->w;
	anchor = x ? cell - 1 : cell - s->w;
	pref = x ? s->via[x == 1 ? 1 : anchor] : cell >= 2 * s->w ? s->via[anchor] : 0;
	np = info[s->grid[anchor]].nports < NNP_MAX_PORTS ?
	     info[s->grid[anchor]].nports : NNP_MAX_PORTS;
	for (k = 0; k < np; k++) {
		uint32_t p = (pref + k) % np;
		const struct nnp_rank_info *ai = &info[s->grid[anchor]];
		int r;

		if (!(ai->ports[p].state & NNP_LINK_UP))
			continue;
		r = rank_of_chip(s, ai->ports[p].peer_chip);
		if (r < 0 || s->used[r] || !fits(s, cell, (uint32_t)r))
			continue;
		if (!spend(&s->budget))
			return false;
		s->used[r] = true;
		s->grid[cell] = (uint32_t)r;
		s->via[cell] = p;
		if (place(s, cell + 1))
			return true;
		s->used[r] = false;
	}
	return false;
}

/* Lay out row 0 from cell @x on, until it closes back to rank 0. */
static bool row0(struct tsearch *s, uint32_t x)
{
	const struct nnp_rank_info *info = s->info;
	uint32_t a = s->grid[x - 1], pref = x >= 2 ? s->via[x - 1] : 0, np, k;

	np = info[a].nports < NNP_MAX_PORTS ? info[a].nports : NNP_MAX_PORTS;
	for (k = 0; k < np; k++) {
		uint32_t p = (pref + k) % np;
		int r;

		if (!(info[a].ports[p].state & NNP_LINK_UP))
			continue;
		r = rank_of_chip(s, info[a].ports[p].peer_chip);
		if (r < 0)
			continue;
		if ((uint32_t)r == s->grid[0] && x >= 2 && s->n % x == 0 &&
		    s->n / x >= 2 && links(info, a, s->grid[0]) >= (x == 2 ? 2u : 1u)) {
			if (!spend(&s->budget))
				return false;
			s->w = x;
			s->h = s->n / x;
			if (place(s, x))
				return true;
			continue;
		}
		if (s->used[r] || 2 * x > s->n)
			continue;
		if (!spend(&s->budget))
			return false;
		s->used[r] = true;
		s->grid[x] = (uint32_t)r;
		s->via[x] = p;
		if (row0(s, x + 1))
			return true;
		s->used[r] = false;
	}
	return false;
}

/* The search's arrays for the @n ranks of @info; false if out of memory. */
static bool tsearch_init(struct tsearch *s, const struct nnp_rank_info *info,
			 uint32_t n, struct nnp_topo *topo)
{
	struct chip_rank *chips = calloc(n, sizeof(*chips));
	uint32_t r;

	*s = (struct tsearch){
		.info = info, .chips = chips, .topo = topo, .n = n,
		.grid = calloc(n, sizeof(uint32_t)),
		.via = calloc(n, sizeof(uint32_t)),
		.mask = calloc(n, sizeof(uint32_t)),
		.used = calloc(n, sizeof(bool)),
	};
	topo->torus = calloc(n, sizeof(*topo->torus));
	if (!chips || !topo->torus || !s->grid || !s->via || !s->mask || !s->used)
		return false;
	for (r = 0; r < n; r++)
		chips[r] = (struct chip_rank){ .chip = info[r].chip, .rank = r };
	qsort(chips, n, sizeof(*chips), by_chip);
	return true;
}

static void tsearch_free(struct tsearch *s)
{
	free((void *)s->chips);
	free(s->grid);
	free(s->via);
	free(s->mask);
	free(s->used);
}

static nnp_result_t plan_torus(const struct nnp_rank_info *info, uint32_t n,
			       struct nnp_topo *topo)
{
	nnp_result_t res = NNP_ERROR_OUT_OF_MEMORY;
	struct tsearch s;

	if (tsearch_init(&s, info, n, topo)) {
		res = NNP_SUCCESS;
		s.cells = n;
		s.budget = TORUS_BUDGET;
		s.used[0] = true;
		if (row0(&s, 1)) {
			topo->w = s.w;
			topo->h = s.h;
		}
	}
	if (!topo->w) {
		free(topo->torus);
		topo->torus = NULL;
	}
	tsearch_free(&s);
	return res;
}

/* ---- placing a job: a ring or a torus of some of the ranks ---- */

static nnp_result_t pick_ring(const struct nnp_rank_info *info, uint32_t n,
			      const uint32_t *starts, uint32_t nstarts,
			      uint32_t k, uint32_t *out, bool *gave_up)
{
	uint32_t budget = SEARCH_BUDGET, i;
	struct search s = {
		.info = info, .n = n, .k = k, .order = out,
		.used = calloc(n, sizeof(bool)), .budget = &budget,
	};
	nnp_result_t res = NNP_ERROR_NO_PATH;

	if (!s.used)
		return NNP_ERROR_OUT_OF_MEMORY;
	for (i = 0; i < nstarts && res != NNP_SUCCESS && budget; i++) {
		out[0] = starts[i];
		s.used[starts[i]] = true;
		if (k == 1 || extend(&s, 1))
			res = NNP_SUCCESS;
		s.used[starts[i]] = false;
	}
	*gave_up = !budget;
	free(s.used);
	return res;
}

static nnp_result_t pick_torus(const struct nnp_rank_info *info, uint32_t n,
			       const uint32_t *starts, uint32_t nstarts,
			       uint32_t w, uint32_t h, uint32_t *out,
			       bool *gave_up)
{
	struct nnp_topo scratch = { 0 };
	nnp_result_t res = NNP_ERROR_OUT_OF_MEMORY;
	struct tsearch s;
	uint32_t i;

	if (tsearch_init(&s, info, n, &scratch)) {
		res = NNP_ERROR_NO_PATH;
		s.w = w;
		s.h = h;
		s.cells = w * h;
		s.budget = TORUS_BUDGET;
		for (i = 0; i < nstarts && res != NNP_SUCCESS && s.budget; i++) {
			memset(s.used, 0, n * sizeof(bool));
			s.used[starts[i]] = true;
			s.grid[0] = starts[i];
			if (place(&s, 1))
				res = NNP_SUCCESS;
		}
		if (res == NNP_SUCCESS)
			memcpy(out, s.grid, s.cells * sizeof(*out));
		*gave_up = !s.budget;
	}
	free(scratch.torus);
	tsearch_free(&s);
	return res;
}

nnp_result_t nnp_grid_pick(const struct nnp_rank_info *info, uint32_t n,
			   const uint32_t *starts, uint32_t nstarts, uint32_t w,
			   uint32_t h, uint32_t *out, bool *gave_up)
{
	*gave_up = false;
	if (h == 1)
		return pick_ring(info, n, starts, nstarts, w, out, gave_up);
	return pick_torus(info, n, starts, nstarts, w, h, out, gave_up);
}

void nnp_topo_free(struct nnp_topo *topo)
{
	free(topo->ring);
	free(topo->torus);
	topo->ring = NULL;
	topo->torus = NULL;
}

nnp_result_t nnp_topo_plan(const struct nnp_rank_info *info, uint32_t n,
			   const struct nnp_ring *ring, struct nnp_topo *topo)
{
	uint32_t *used = calloc(n, sizeof(uint32_t));
	nnp_result_t res = NNP_SUCCESS;

	*topo = (struct nnp_topo){ .ring = calloc(n, sizeof(struct nnp_dim)) };
	if (!used || !topo->ring) {
		res = NNP_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	plan_pairs(info, n, ring, topo, used);
	/* A torus has at least two chips along each of its dimensions. */
	if (n >= 4)
		res = plan_torus(info, n, topo);
out:
	free(used);
	if (res != NNP_SUCCESS)
		nnp_topo_free(topo);
	return res;
}
