// SPDX-License-Identifier: MIT
/* nnp-sim's topologies: see topo.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

static const char *const names[] = {
	[TOPO_RING] = "ring", [TOPO_TORUS] = "torus", [TOPO_POD] = "pod",
};

int topo_kind_parse(const char *name, enum topo_kind *kind)
{
	unsigned int k;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(name, names[k])) {
			*kind = (enum topo_kind)k;
			return 0;
		}
	return -1;
}

const char *topo_kind_name(enum topo_kind kind)
{
	return names[kind];
}

/* The snake ring through a torus needs an even number of rows. */
int topo_shape(struct topo *t, enum topo_kind kind, unsigned int n,
	       unsigned int rows, unsigned int chassis)
{
	unsigned int r;

	*t = (struct topo){ .kind = kind, .rows = 1, .cols = n };
	if (kind == TOPO_POD) {
		if (chassis != 8 && chassis != 16) {
			fprintf(stderr, "nnp-sim: a chassis holds 8 or 16 chips\n");
			return -1;
		}
		rows = n / chassis;
	} else if (kind == TOPO_TORUS && !rows) {
		for (r = 1; r * r <= n; r++)
			if (n % r == 0 && (r % 2 == 0 || (n / r) % 2))
				rows = r;
	}
	if (kind != TOPO_RING) {
		if (!rows || n % rows || rows < 2 || n / rows < 2 || rows % 2) {
			fprintf(stderr, "nnp-sim: %u chips make no %s with an even number (2 or more) of rows of 2 or more\n",
				n, names[kind]);
			return -1;
		}
		t->rows = rows;
		t->cols = n / rows;
	}
	return 0;
}

static unsigned int at(const struct topo *t, unsigned int r, unsigned int c)
{
	return (r % t->rows) * t->cols + c % t->cols;
}

int topo_wire(struct sim *s, const struct topo *t)
{
	unsigned int r, c;
	int bad = 0;

	if (s->n < 2)
		return 0;
	for (r = 0; r < t->rows; r++)
		for (c = 0; c < t->cols; c++) {
			unsigned int me = at(t, r, c);

			if (t->cols > 1)
				bad |= sim_connect(s, me, 0, at(t, r, c + 1), 1);
			if (t->rows > 1)
				bad |= sim_connect(s, me, 2, at(t, r + 1, c), 3);
			else
				bad |= sim_connect(s, me, 2, at(t, r, c + 1), 3);
		}
	return bad ? -1 : 0;
}

/* The chip at position @p of the snake through @t: rows alternate. */
static unsigned int snake(const struct topo *t, unsigned int p)
{
	unsigned int r = p / t->cols, c = p % t->cols;

	return at(t, r, r % 2 ? t->cols - 1 - c : c);
}

/* The lowest port of chip @a that leads to chip @b; -1 if none. */
static int port_to(const struct sim *s, unsigned int a, unsigned int b)
{
	unsigned int p;

	for (p = 0; p < SIM_PORTS; p++)
		if (s->chips[a].peer[p] == (int)b)
			return (int)p;
	return -1;
}

/*
 * Every chip's port towards chip @dst, into column @dst of @routes (n x
 * n, chip-major): a breadth-first search from @dst gives each chip's
 * distance, and a chip's port is its lowest one to a chip one closer, so
 * each hop of a path agrees with the next. @dist and @queue: n each.
 */
static void routes_to(const struct sim *s, unsigned int dst, uint8_t *routes,
		      uint32_t *dist, uint32_t *queue)
{
	unsigned int n = s->n, head = 0, tail = 0, c, p;

	for (c = 0; c < n; c++)
		dist[c] = UINT32_MAX;
	dist[dst] = 0;
	queue[tail++] = dst;
	while (head < tail) {
		c = queue[head++];
		for (p = 0; p < SIM_PORTS; p++) {
			int q = s->chips[c].peer[p];

			if (q >= 0 && dist[q] == UINT32_MAX) {
				dist[q] = dist[c] + 1;
				queue[tail++] = (uint32_t)q;
			}
		}
	}
	for (c = 0; c < n; c++) {
		routes[(size_t)c * n + dst] = NNP_HW_ROUTE_NONE;
		for (p = 0; p < SIM_PORTS && c != dst && dist[c] != UINT32_MAX; p++) {
			int q = s->chips[c].peer[p];

			if (q >= 0 && dist[q] + 1 == dist[c]) {
				routes[(size_t)c * n + dst] = (uint8_t)p;
				break;
			}
		}
	}
}

/* COMM_ROUTES on every chip, by rank: see topo_comm(). */
static int give_routes(struct sim *s)
{
	unsigned int n = s->n, c, r;
	uint8_t *routes = malloc((size_t)n * n), *mine = malloc(n);
	uint32_t *dist = calloc(n, sizeof(*dist)), *queue = calloc(n, sizeof(*queue));
	int bad = !routes || !mine || !dist || !queue;

	for (c = 0; c < n && !bad; c++)
		routes_to(s, c, routes, dist, queue);
	for (c = 0; c < n && !bad; c++) {
		struct nnp_hw_admin_cmd cmd = { .opcode = NNP_ADMIN_COMM_ROUTES };

		for (r = 0; r < n; r++)
			mine[r] = routes[(size_t)c * n + s->chip_of[r]];
		cmd.args[0] = SIM_CTX;
		cmd.args[1] = SIM_COMM;
		bad = sim_admin(s, c, cmd, mine, n, NULL) != NNP_STATUS_SUCCESS;
	}
	free(queue);
	free(dist);
	free(mine);
	free(routes);
	return bad ? -1 : 0;
}

int topo_comm(struct sim *s, const struct topo *t)
{
	unsigned int n = s->n, p;
	struct nnp_hw_comm_args *a = calloc(n, sizeof(*a));
	int bad;

	s->rank = calloc(n, sizeof(*s->rank));
	s->chip_of = calloc(n, sizeof(*s->chip_of));
	bad = !s->rank || !s->chip_of || !a;
	for (p = 0; p < n && !bad; p++) {
		s->chip_of[p] = snake(t, p);
		s->rank[s->chip_of[p]] = p;
	}
	for (p = 0; p < n && !bad; p++) {
		unsigned int me = s->chip_of[p], next = s->chip_of[(p + 1) % n];
		int port = n > 1 ? port_to(s, me, next) : 0;

		if (port < 0) {
			bad = 1;
			break;
		}
		a[me] = (struct nnp_hw_comm_args){
			.ctx = SIM_CTX, .comm = SIM_COMM, .nranks = n, .rank = p,
			.send_port = (uint32_t)port, .epoch = 0x5157,
			.timeout_ms = NNP_HW_COMM_TIMEOUT_NEVER,
		};
	}
	for (p = 0; p < n && n > 1 && !bad; p++) {
		unsigned int me = s->chip_of[p], next = s->chip_of[(p + 1) % n];

		a[next].recv_port = s->chips[me].peer_port[a[me].send_port];
	}
	for (p = 0; p < n && !bad; p++) {
		struct nnp_hw_admin_cmd cmd = { .opcode = NNP_ADMIN_COMM_CREATE };

		memcpy(cmd.args, &a[p], sizeof(a[p]));
		bad = sim_admin(s, p, cmd, NULL, 0, NULL) != NNP_STATUS_SUCCESS;
	}
	free(a);
	if (!bad && n > 1)
		bad = give_routes(s);
	return bad ? -1 : 0;
}

static const char *const algos[] = {
	[NNP_FW_ALGO_AUTO] = "auto", [NNP_FW_ALGO_RING] = "ring",
	[NNP_FW_ALGO_BIDIR] = "bidir", [NNP_FW_ALGO_RINGS] = "rings",
	[NNP_FW_ALGO_TORUS] = "torus",
};

int topo_algo_parse(const char *name, uint32_t *algo)
{
	uint32_t a;

	for (a = 0; a < NNP_FW_ALGO_COUNT; a++)
		if (!strcmp(name, algos[a])) {
			*algo = a;
			return 0;
		}
	return -1;
}

const char *topo_algo_name(uint32_t algo)
{
	return algo < NNP_FW_ALGO_COUNT ? algos[algo] : "?";
}

int topo_set_algo(struct sim *s, const struct topo *t, uint32_t algo)
{
	unsigned int r, c;

	for (r = 0; r < t->rows; r++)
		for (c = 0; c < t->cols; c++) {
			struct nnp_fw_topology tp = {
				.algo = algo,
				/* Along a row: +x out of port 0, -x into port 1. */
				.dim[0] = {
					.n = t->cols, .pos = c, .pairs = 1,
					.next_port = { 0, 2 },
					.prev_port = { 1, 3 },
				},
			};

			if (t->rows > 1)
				tp.dim[1] = (struct nnp_fw_ring_dim){
					.n = t->rows, .pos = r, .pairs = 1,
					.next_port = { 2 }, .prev_port = { 3 },
				};
			else
				tp.dim[0].pairs = 2;	/* ports 2/3 too */
			if (s->n > 1 &&
			    nnp_fw_comm_set_topology(s->chips[at(t, r, c)].fw,
						     SIM_CTX, SIM_COMM, &tp))
				return -1;
		}
	return 0;
}
