/* SPDX-License-Identifier: MIT */
/*
 * Port tables for the host tests of libnnp's planning: info[] holds up to
 * MAXN chips, wired by hand or as QEMU's fabrics wire them.
 */
#ifndef NNP_TEST_RANK_TABLES_H
#define NNP_TEST_RANK_TABLES_H

#include <stdint.h>
#include <string.h>

#include "ring_plan.h"

#define MAXN 16

static struct nnp_rank_info info[MAXN];

/* Wire port @pa of rank @a to port @pb of rank @b, up. */
static void wire(uint32_t a, uint32_t pa, uint32_t b, uint32_t pb)
{
	info[a].ports[pa].state = NNP_LINK_WIRED | NNP_LINK_UP;
	info[a].ports[pa].peer_chip = info[b].chip;
	info[a].ports[pa].peer_port = pb;
	info[b].ports[pb].state = NNP_LINK_WIRED | NNP_LINK_UP;
	info[b].ports[pb].peer_chip = info[a].chip;
	info[b].ports[pb].peer_port = pa;
}

static void chips(uint32_t n)
{
	uint32_t r;

	memset(info, 0, sizeof(info));
	for (r = 0; r < n; r++) {
		info[r].chip = 100 + r * 3;
		info[r].nports = 4;
	}
}

/* QEMU's ring of @n: chip r's port 0 to chip r + 1's port 1. */
static inline void ring_wires(uint32_t n)
{
	uint32_t r;

	chips(n);
	for (r = 0; r < n; r++)
		wire(r, 0, (r + 1) % n, 1);
}

/* QEMU's torus:WxH: chip y * w + x, port 0 east to port 1, 2 south to 3. */
static void torus_wires(uint32_t w, uint32_t h)
{
	uint32_t x, y;

	chips(w * h);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			wire(y * w + x, 0, y * w + (x + 1) % w, 1);
			wire(y * w + x, 2, (y + 1) % h * w + x, 3);
		}
}

#endif /* NNP_TEST_RANK_TABLES_H */
