// SPDX-License-Identifier: MIT
/*
 * Firmware simulator allreduce algorithms that use more than one port
 * pair: one ring over one pair cannot use a chip's 4 ports.
 *
 * The communicator's topology (nnp_fw_comm_set_topology()) describes one
 * or two ring dimensions, each with one or two port pairs. An allreduce
 * then splits its buffer into lanes, each lane an allreduce of its part
 * on rings of its own, all lanes at once:
 * - BIDIR: dim[0]'s first pair forward and backward, half the data each;
 * - RINGS: every pair of dim[0], both ways: 2 or 4 lanes;
 * - TORUS: four lanes, (x forward then y forward), (x back, y back),
 *   (y forward, x forward), (y back, x back). A lane over (a, b)
 *   reduce-scatters its part along a, allreduces the segment it holds
 *   along b, and allgathers along a again. Per chip it sends the bytes a
 *   ring would, 2(n-1)/n of its part, in 2(R-1) + 2(C-1) steps, not
 *   2(RC-1), and the four lanes keep all four ports busy. On a torus
 *   whose sides differ the lanes that start along x and along y take
 *   parts of different sizes, so that their passes take the same time
 *   (lane_weight()).
 *
 * A lane runs the single-ring code (nnp_fw_coll_allreduce()) on a struct
 * coll of its own for each of its rings: each has its own lending count,
 * so what it lent on its send port is taken back there, and its own
 * modeled time. When the passes are bound by bandwidth, a chip's lanes
 * begin each pass together, when the last one ended the pass before
 * (lanes_next_pass()): the lanes that use a port in one pass are not the
 * ones that use it in the next, and none waits behind another's packets.
 * Otherwise each lane goes on alone. The lanes are steps of one command:
 * the queue's op parks, on any port, when every lane waits, unless a wake
 * came while they ran. Each lane and ring takes a packet label
 * (collective number) of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_algorithms.h"

#define MAX_LANES	4
/* Labels a lane takes: one per ring pass (reduce-scatter, middle, allgather). */
#define LANE_SEQS	3
/* Rings share ports: two lanes' windows of chunks fit one port's room. */
#define LANE_CHUNK_MAX	(CHUNK_MAX / 2)
/*
 * A lane's ring steps can be small: a POD's middle pass along its 64
 * chips moves 64 KiB a step at 256 MiB, a ring of 1024 chips too. In one
 * chunk such a step pays the link latency after all of its wire time; in
 * 16 KiB chunks the next step's first leaves after a quarter of it (the
 * steps pipeline chunk by chunk, fw_coll.c). Steps of 512 KiB or more keep
 * the chunks they had (CHUNKS_PER_STEP of 64 KiB or more), so a large
 * message costs the host no more packets. The single ring, QEMU's today,
 * keeps NNP_FW_CHUNK_BYTES.
 */
#define LANE_CHUNK_MIN	(16u << 10)
/*
 * Chunks a lane sends before the next lane's turn: lanes that share a
 * port take it in the host's order, so none may run far ahead of the
 * others on the host (see nnp_fw_tx_fit()).
 */
#define ROUND_CHUNKS	1

struct lane {
	struct coll ring[2];	/* over dimension a, and b (TORUS) */
	uint32_t nrings;
	uint32_t phase;		/* 0 .. 2 with two rings, 0 with one */
	bool held;		/* ended pass @phase; waits for the other lanes */
	bool done;
};

struct nnp_fw_lanes {
	uint32_t n;
	bool lockstep;		/* lanes begin each pass together */
	struct lane lane[MAX_LANES];
};

/* Not a status: the lane ended its pass and waits for the others. */
#define LANE_HELD	(NNP_FW_PARKED - 3)

static uint32_t algo_pick(const struct nnp_fw_topology *t, unsigned int opcode,
			  uint64_t count, uint32_t nranks)
{
	bool torus = t->dim[1].n > 1;
	uint32_t a = t->algo;

	if (opcode != NNP_CMD_ALLREDUCE || nranks < 2 || t->dim[0].n < 2)
		return NNP_FW_ALGO_RING;
	/* More lanes cost nothing but a lane that gets less than a chip's share. */
	if (a == NNP_FW_ALGO_AUTO) {
		if (torus)
			a = NNP_FW_ALGO_TORUS;
		else if (t->dim[0].pairs > 1 && count >= 4ull * nranks)
			a = NNP_FW_ALGO_RINGS;
		else if (count >= 2ull * nranks)
			a = NNP_FW_ALGO_BIDIR;
		else
			a = NNP_FW_ALGO_RING;
	}
	return a == NNP_FW_ALGO_TORUS && !torus ? NNP_FW_ALGO_RING : a;
}

static uint32_t algo_seqs(uint32_t algo)
{
	return algo == NNP_FW_ALGO_RING ? 1 : MAX_LANES * LANE_SEQS;
}

static bool dim_ok(const struct nnp_fw *fw, const struct nnp_fw_ring_dim *d)
{
	uint32_t k;

	if (!d->n)
		return true;
	if (d->pos >= d->n || !d->pairs || d->pairs > 2)
		return false;
	for (k = 0; k < d->pairs; k++)
		if (d->next_port[k] >= fw->cfg.num_ports ||
		    d->prev_port[k] >= fw->cfg.num_ports)
			return false;
	return true;
}

static uint32_t dim_ports(const struct nnp_fw_ring_dim *d)
{
	uint32_t k, mask = 0;

	for (k = 0; d->n && k < d->pairs; k++)
		mask |= 1u << d->next_port[k] | 1u << d->prev_port[k];
	return mask;
}

/*
 * Collective packets of @epoch held on a port outside @ports (a bit each)
 * are not for its communicator, whose topology now names every port it
 * receives on: dropped.
 */
static void drop_off_ring(struct nnp_fw *fw, uint64_t epoch, uint32_t ports)
{
	uint32_t port;

	for (port = 0; port < fw->cfg.num_ports; port++)
		if (!(ports >> port & 1))
			nnp_fw_icl_purge(fw, port, epoch, NNP_FW_SEQ_P2P);
}

int nnp_fw_comm_set_topology(struct nnp_fw *fw, uint32_t ctx, uint32_t comm,
			     const struct nnp_fw_topology *t)
{
	const struct nnp_fw_ring_dim *d = t->dim;
	uint64_t chips = (uint64_t)d[0].n * (d[1].n ? d[1].n : 1);
	struct nnp_fw_comm *m;
	uint32_t ports = 0;
	uint64_t epoch = 0;
	int ret = -1;

	if (t->algo >= NNP_FW_ALGO_COUNT || !dim_ok(fw, &d[0]) ||
	    !dim_ok(fw, &d[1]) || (d[1].n && !d[0].n))
		return -1;
	mtx_lock(&fw->lock);
	m = nnp_fw_comm_of_locked(fw, ctx, comm);
	if (m && (!d[0].n || chips == m->nranks)) {
		m->topo = *t;
		m->ports = dim_ports(&d[0]) | dim_ports(&d[1]);
		m->topo_set = true;
		ports = nnp_fw_comm_ports(m);
		epoch = m->epoch;
		ret = 0;
	}
	mtx_unlock(&fw->lock);
	if (ports)
		drop_off_ring(fw, epoch, ports);
	return ret;
}

/* Lane @l's ring @r: dimension @dim, port pair @pair, backward if @back. */
static void ring_setup(struct coll *p, struct lane *l, uint32_t r,
		       uint32_t dim, uint32_t pair, bool back)
{
	const struct nnp_fw_ring_dim *d = &p->topo.dim[dim];
	struct coll *c = &l->ring[r];

	*c = (struct coll){
		.fw = p->fw, .nranks = d->n, .epoch = p->epoch,
		.opcode = p->opcode, .dtype = p->dtype, .op = p->op,
		.comm = p->comm, .es = p->es, .chunk_max = LANE_CHUNK_MAX,
		.chunk_min = LANE_CHUNK_MIN,
		.algo = NNP_FW_ALGO_RING, .rationed = true,
		/* Backward, position p is n - p: the next chip is one more. */
		.pos = back ? (d->n - d->pos) % d->n : d->pos,
		.send_port = back ? d->prev_port[pair] : d->next_port[pair],
		.recv_port = back ? d->next_port[pair] : d->prev_port[pair],
	};
	c->link.timeout_ns = p->link.timeout_ns;
	c->link.comm = p->comm;
	c->link.call = p->link.call;
	c->link.t_ns = p->link.t_ns;
	l->nrings = r + 1;
}

/* The rings of lane @i of @p's algorithm. */
static void lane_rings(struct coll *p, uint32_t i, struct lane *l)
{
	bool back = i % 2;

	switch (p->algo) {
	case NNP_FW_ALGO_BIDIR:
		ring_setup(p, l, 0, 0, 0, back);
		break;
	case NNP_FW_ALGO_RINGS:
		ring_setup(p, l, 0, 0, i / 2, back);
		break;
	default:	/* TORUS: lanes 0, 1 rows first, lanes 2, 3 columns */
		ring_setup(p, l, 0, i / 2, 0, back);
		ring_setup(p, l, 1, 1 - i / 2, 0, back);
	}
}

static uint32_t lanes_of(const struct coll *p)
{
	switch (p->algo) {
	case NNP_FW_ALGO_BIDIR:
		return 2;
	case NNP_FW_ALGO_RINGS:
		return 2 * p->topo.dim[0].pairs;
	}
	return 4;
}

/* Pass @k of lane @i: its ring, label and cursor, with @c's memory. */
static uint16_t pass_setup(struct coll *p, uint32_t i, struct lane *l,
			   uint32_t k)
{
	struct coll *c = &l->ring[l->nrings == 2 && k == 1];

	c->seq = nnp_fw_seq(p->seq + i * LANE_SEQS + k, false);
	c->stage = k == 2;
	c->s = 0;
	c->off = c->sent = 0;
	c->rs_only = l->nrings == 2 && k == 0;
	/* The division once, by all ranks, on the last reduce-scatter. */
	c->avg_div = c->rs_only ? 0 : p->avg_div;
	c->chunk = nnp_fw_coll_chunk(c);
	return nnp_fw_coll_ready_init(c);
}

/*
 * Lane @i's share of the buffer, against the sum over all lanes. On a
 * torus of C columns (dim[0]) and R rows the lanes that start along a row
 * send (C-1)/C of their part in their first pass, those that start along
 * a column (R-1)/R: parts in the ratio C(R-1) : R(C-1) make both first
 * passes (and last) take the same time, so all four ports stay busy until
 * the lanes meet at the next pass (lanes_next_pass()). Otherwise equal.
 */
static uint64_t lane_weight(const struct coll *p, uint32_t i)
{
	uint64_t c = p->topo.dim[0].n, r = p->topo.dim[1].n;

	if (p->algo != NNP_FW_ALGO_TORUS)
		return 1;
	return i / 2 ? r * (c - 1) : c * (r - 1);
}

/*
 * Whether @p's lanes begin each pass together: on a torus, when every
 * lane's first pass is bound by bandwidth, a ring step's wire time past
 * the link's latency. Then lanes that share a port in turn would take it
 * from each other (each packet takes the first gap on its port, in the
 * host's order), and waiting at each pass costs little, the passes being
 * of one length (lane_weight()). A small allreduce is latency: its lanes'
 * passes cost their hops, 2(C-1) along a row and 2(R-1) along a column,
 * and waiting would cost a lane the other's, so they go on alone.
 */
static bool lanes_lockstep(const struct coll *p)
{
	const struct nnp_fw_config *cfg = &p->fw->cfg;
	uint32_t i;

	if (p->algo != NNP_FW_ALGO_TORUS)
		return false;
	for (i = 0; i < p->lanes->n; i++) {
		const struct coll *c = &p->lanes->lane[i].ring[0];
		uint64_t step = c->count / c->nranks * c->es;

		if (nnp_fw_ns_at(step, cfg->icl_mbps) < cfg->icl_latency_ns)
			return false;
	}
	return true;
}

static uint16_t algo_start(struct coll *p)
{
	uint64_t total = 0, below = 0;
	uint32_t i, r, n;

	p->lanes = calloc(1, sizeof(*p->lanes));
	if (!p->lanes)
		return NNP_STATUS_NO_RESOURCES;
	n = p->lanes->n = lanes_of(p);
	for (i = 0; i < n; i++)
		total += lane_weight(p, i);
	for (i = 0; i < n; i++) {
		struct lane *l = &p->lanes->lane[i];
		uint64_t start = (unsigned __int128)p->count * below / total;
		uint64_t end;

		below += lane_weight(p, i);
		end = (unsigned __int128)p->count * below / total;

		lane_rings(p, i, l);
		for (r = 0; r < l->nrings; r++) {
			l->ring[r].count = end - start;
			l->ring[r].dst = p->dst + start * p->es;
			/* Leftovers of failed collectives on its port go. */
			nnp_fw_icl_purge(p->fw, l->ring[r].recv_port, p->epoch,
					 p->purge_below);
		}
		l->ring[0].fold_src = p->fold_src;
		l->ring[0].src = p->fold_src ? p->src + start * p->es : NULL;
		if (pass_setup(p, i, l, 0))
			return NNP_STATUS_NO_RESOURCES;
	}
	p->lanes->lockstep = lanes_lockstep(p);
	return NNP_STATUS_SUCCESS;
}

static uint32_t passes_of(const struct lane *l)
{
	return l->nrings == 2 ? 3 : 1;
}

/* The ring lane @l's pass @k runs on. */
static struct coll *pass_ring(struct lane *l, uint32_t k)
{
	return &l->ring[l->nrings == 2 && k == 1];
}

/*
 * From the end of pass @k of lane @i to the next, at modeled time @t: the
 * middle pass works on the segment the first left reduced here.
 */
static uint16_t pass_next(struct coll *p, uint32_t i, struct lane *l,
			  uint32_t k, uint64_t t)
{
	struct coll *a = &l->ring[0], *b = &l->ring[1];
	uint64_t n;

	if (k == 0) {
		b->dst = nnp_fw_coll_seg(a, a->dst,
					 nnp_fw_coll_behind(a, a->nranks - 1), &n);
		b->count = n;
	}
	l->phase = k + 1;
	l->held = false;
	pass_ring(l, k + 1)->link.t_ns =
		nnp_fw_max_ns(pass_ring(l, k + 1)->link.t_ns, t);
	return pass_setup(p, i, l, k + 1);
}

/*
 * Run lane @l from where it stood: a status, PARKED, or LANE_HELD at the
 * end of a pass that is not its last.
 */
static uint16_t lane_run(struct coll *p, uint32_t i, struct lane *l)
{
	uint32_t r;
	uint16_t st;

	for (;;) {
		if (!l->held) {
			st = nnp_fw_coll_allreduce(pass_ring(l, l->phase));
			if (st)
				return st;
			l->held = true;
		}
		if (l->phase + 1 == passes_of(l))
			break;
		if (p->lanes->lockstep)
			return LANE_HELD;
		/* On its own: from where its last ring ended. */
		st = pass_next(p, i, l, l->phase,
			       pass_ring(l, l->phase)->link.t_ns);
		if (st)
			return st;
	}
	/* Nothing it lent may be read after it ends. */
	for (r = 0; r < l->nrings; r++) {
		st = nnp_fw_coll_lent_back(&l->ring[r], l->ring[r].link.lent);
		if (st)
			return st;
	}
	return NNP_STATUS_SUCCESS;
}

/*
 * Lockstep, every lane ended its pass: all begin the next together, when
 * the last ended and its last packet left. So lanes that share a port (a torus's
 * first pass along x and the middle pass along x of the lanes that start
 * along y) never use it at once: none waits behind another's packets, and
 * the lanes' split (lane_weight()) makes their passes end together.
 */
static uint16_t lanes_next_pass(struct coll *p)
{
	uint64_t t = 0;
	uint32_t i;

	for (i = 0; i < p->lanes->n; i++) {
		struct lane *l = &p->lanes->lane[i];
		const struct nnp_fw_op *o = &pass_ring(l, l->phase)->link;

		t = nnp_fw_max_ns(t, nnp_fw_max_ns(o->t_ns, o->tx_end_ns));
	}
	for (i = 0; i < p->lanes->n; i++) {
		struct lane *l = &p->lanes->lane[i];

		if (pass_next(p, i, l, l->phase, t))
			return NNP_STATUS_NO_RESOURCES;
	}
	return NNP_STATUS_SUCCESS;
}

/* The lanes' modeled times make the command's. */
static void lanes_clock(struct coll *p)
{
	uint32_t i, r;

	for (i = 0; i < p->lanes->n; i++)
		for (r = 0; r < p->lanes->lane[i].nrings; r++) {
			const struct nnp_fw_op *o = &p->lanes->lane[i].ring[r].link;

			p->link.t_ns = nnp_fw_max_ns(p->link.t_ns, o->t_ns);
			p->link.tx_end_ns = nnp_fw_max_ns(p->link.tx_end_ns,
							  o->tx_end_ns);
			p->link.hbm_ns += o->hbm_ns;
		}
}

static uint16_t algo_step(struct coll *p)
{
	struct nnp_fw *fw = p->fw;

	for (;;) {
		struct nnp_fw_round w = {
			.deadline = UINT64_MAX, .since = UINT64_MAX,
		};
		uint32_t wakes, i, left = 0, held = 0;
		bool lost, yielded = false;
		uint16_t aborted;

		mtx_lock(&fw->lock);
		wakes = fw->wakes;
		aborted = p->link.aborted;
		lost = p->link.link_lost;
		mtx_unlock(&fw->lock);
		for (i = 0; i < p->lanes->n; i++) {
			struct lane *l = &p->lanes->lane[i];
			uint16_t st;
			uint32_t r;

			if (l->done)
				continue;
			/* What the queue's op learnt, its lanes' waits end on. */
			mtx_lock(&fw->lock);
			for (r = 0; r < l->nrings; r++) {
				l->ring[r].link.aborted = aborted;
				l->ring[r].link.link_lost = lost;
				l->ring[r].link.parked = false;
				l->ring[r].round_left = ROUND_CHUNKS;
			}
			mtx_unlock(&fw->lock);
			st = lane_run(p, i, l);
			if (st == LANE_HELD) {
				left++;
				held++;
				continue;
			}
			if (st == COLL_YIELD) {
				left++;
				yielded = true;
				continue;
			}
			if (st == NNP_FW_PARKED) {
				left++;
				for (r = 0; r < l->nrings; r++)
					if (l->ring[r].link.parked)
						nnp_fw_part_waits(&w, &l->ring[r].link);
				continue;
			}
			if (st) {
				/* A lane's ring failed: the queue's op says why. */
				for (r = 0; r < l->nrings && !p->link.detail; r++)
					p->link.detail = l->ring[r].link.detail;
				return st;
			}
			l->done = true;
		}
		if (!left) {
			lanes_clock(p);
			return NNP_STATUS_SUCCESS;
		}
		if (held == left) {
			if (lanes_next_pass(p))
				return NNP_STATUS_NO_RESOURCES;
			continue;
		}
		if (yielded)
			continue;
		mtx_lock(&fw->lock);
		if (fw->wakes == wakes && !p->link.aborted && !p->link.link_lost) {
			nnp_fw_park_parts_locked(&p->link, &w);
			mtx_unlock(&fw->lock);
			return NNP_FW_PARKED;
		}
		mtx_unlock(&fw->lock);
	}
}

static void algo_end(struct coll *p, bool tell)
{
	uint32_t i, k;

	if (!p->lanes)
		return;
	for (i = 0; i < p->lanes->n; i++) {
		struct lane *l = &p->lanes->lane[i];

		for (k = 0; k < l->nrings; k++) {
			nnp_fw_icl_reclaim(p->fw, &l->ring[k].link,
					   l->ring[k].send_port);
			free(l->ring[k].ready);
		}
		/* Every pass of the next chip's lane stops. */
		for (k = 0; tell && k < (l->nrings == 2 ? 3u : 1u); k++)
			nnp_fw_icl_send(p->fw, NULL,
					l->ring[l->nrings == 2 && k == 1].send_port,
					p->epoch, nnp_fw_seq(p->seq + i * LANE_SEQS + k,
							     false),
					true, NULL, 0);
	}
	free(p->lanes);
	p->lanes = NULL;
}

/* What the collective engine calls (fw->algo): registered by nnp_fw_create(). */
const struct nnp_fw_algo_ops nnp_fw_algorithms = {
	.pick = algo_pick,
	.seqs = algo_seqs,
	.start = algo_start,
	.step = algo_step,
	.end = algo_end,
};
