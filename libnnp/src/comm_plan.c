// SPDX-License-Identifier: MIT
/*
 * The ring of a communicator, planned from every rank's chip and ports as
 * the rendezvous handed them over (comm.h), and said in words when there
 * is none. Apart from the device, so that the fuzzer plans from a table
 * a root or its peers made up.
 */
#include <stdio.h>

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
