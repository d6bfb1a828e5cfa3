// SPDX-License-Identifier: MIT
/*
 * The ring of a communicator, planned from every rank's chip and ports as
 * the rendezvous handed them over (comm.h), and said in words when there
 * is none. Apart from the device, so that the fuzzer plans from a table
 * a root or its peers made up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "comm.h"
#include "log.h"

/*
 * Say why @n ranks of @all have no ring: a rank with too few up links to
 * be in one, else where rank order breaks (and no search found another).
 */
static nnp_result_t no_ring(const struct nnp_rank_info *all, uint32_t n)
{
	uint32_t r, p, q;

	for (r = 0; r < n; r++) {
		uint32_t peers = 0;

		for (q = 0; q < n; q++)
			peers += q != r && nnp_rank_port_to(all, r, q) >= 0;
		if (peers < (n > 2 ? 2u : 1u))
			return nnp_fail(NNP_ERROR_NO_PATH,
					"no ring over the %u ranks: rank %u (chip %u) has an up link to %u other rank%s, a ring needs %u",
					n, r, all[r].chip, peers, peers == 1 ? "" : "s",
					n > 2 ? 2u : 1u);
	}
	for (r = 0; r < n && nnp_rank_port_to(all, r, (r + 1) % n) >= 0; r++)
		;
	p = (r + 1) % n;
	return nnp_fail(NNP_ERROR_NO_PATH,
			"no ring over the %u ranks: no up link from rank %u (chip %u) to rank %u (chip %u), and no other ring found",
			n, r % n, all[r % n].chip, p, all[p].chip);
}

/* At INFO: the ring every rank agreed on, hop by hop with its ports. */
static void log_ring(const struct nnp_rank_info *all, const struct nnp_ring *ring,
		     uint32_t n, uint64_t epoch)
{
	char text[1024];
	size_t len = 0;
	uint32_t pos;

	if (!nnp_log_enabled(NNP_LOG_INFO))
		return;
	for (pos = 0; pos < n && len < sizeof(text); pos++) {
		uint32_t a = ring->order[pos], b = ring->order[(pos + 1) % n];

		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"%s%u(chip %u) -port %u->", pos ? " " : "", a,
					all[a].chip, ring->send_port[a]);
		if (pos + 1 == n && len < sizeof(text))
			snprintf(text + len, sizeof(text) - len, " %u(port %u)", b,
				 ring->recv_port[b]);
	}
	nnp_log(NNP_LOG_INFO, "ring of %u ranks, epoch %#llx: %s", n,
		(unsigned long long)epoch, n > 1 ? text : "one rank, no links");
}

nnp_result_t nnp_comm_plan(const struct nnp_rank_info *all, uint32_t n,
			   uint64_t epoch, struct nnp_ring *ring)
{
	nnp_result_t res = nnp_ring_plan(all, n, ring);

	if (res == NNP_ERROR_NO_PATH)
		return no_ring(all, n);
	if (res == NNP_ERROR_INVALID_ARGUMENT)
		return nnp_fail(res, "two of the %u ranks are on the same chip", n);
	if (res != NNP_SUCCESS)
		return nnp_fail(res, "no host memory to plan a ring of %u ranks", n);
	log_ring(all, ring, n, epoch);
	return NNP_SUCCESS;
}

const char *const nnp_algo_names[NNP_ALGO_COUNT] = {
	"auto", "ring", "bidir", "rings", "torus",
};

static nnp_result_t algo_from_env(enum nnp_algo *algo)
{
	const char *s = getenv("NNP_ALGO");
	int a;

	*algo = NNP_ALGO_AUTO;
	if (!s || !*s)
		return NNP_SUCCESS;
	for (a = 0; a < NNP_ALGO_COUNT; a++)
		if (!strcasecmp(s, nnp_algo_names[a])) {
			*algo = (enum nnp_algo)a;
			return NNP_SUCCESS;
		}
	return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
			"NNP_ALGO=%s: not an allreduce algorithm (ring, bidir, rings, torus or auto)",
			s);
}

nnp_result_t nnp_comm_plan_algo(const struct nnp_rank_info *all, uint32_t n,
				const struct nnp_ring *ring, struct nnp_topo *topo,
				enum nnp_algo *algo)
{
	nnp_result_t res = algo_from_env(algo);
	uint32_t a, b;

	if (res != NNP_SUCCESS)
		return res;
	res = nnp_topo_plan(all, n, ring, topo);
	if (res != NNP_SUCCESS)
		return nnp_fail(res, "no host memory to plan the fabric of %u ranks", n);
	/* One rank sends nothing: any algorithm runs. */
	if (*algo == NNP_ALGO_RINGS && n > 1 && topo->pairs < 2) {
		a = ring->order[topo->lone_hop];
		b = ring->order[(topo->lone_hop + 1) % n];
		nnp_topo_free(topo);
		return nnp_fail(NNP_ERROR_NO_PATH,
				"NNP_ALGO=rings: the ring's hop from rank %u (chip %u) to rank %u (chip %u) has one link free, rings needs a second between every pair of neighbours",
				a, all[a].chip, b, all[b].chip);
	}
	if (*algo == NNP_ALGO_TORUS && n > 1 && !topo->w) {
		nnp_topo_free(topo);
		return nnp_fail(NNP_ERROR_NO_PATH,
				"NNP_ALGO=torus: the %u ranks' chips make no 2D torus of up links",
				n);
	}
	if (topo->w)
		nnp_log(NNP_LOG_INFO, "NNP_ALGO=%s: a %ux%u torus, and a ring of %u port pair%s",
			nnp_algo_names[*algo], topo->w, topo->h, topo->pairs,
			topo->pairs > 1 ? "s" : "");
	else
		nnp_log(NNP_LOG_INFO, "NNP_ALGO=%s: a ring of %u port pair%s, no torus",
			nnp_algo_names[*algo], topo->pairs, topo->pairs > 1 ? "s" : "");
	return NNP_SUCCESS;
}
