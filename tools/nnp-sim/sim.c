// SPDX-License-Identifier: MIT
/* nnp-sim's host for the firmware simulator's chips: see sim.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim.h"

/* The fake host memory window of a chip, and what lies where in it. */
#define WIN_BASE	0x100000ull
#define WIN_SIZE	0x4000u
#define AQ_SQ		(WIN_BASE + 0x0000)
#define AQ_CQ		(WIN_BASE + 0x0400)
#define AQ_DEPTH	4
#define Q_SQ		(WIN_BASE + 0x0800)
#define Q_CQ		(WIN_BASE + 0x0c00)
#define Q_DEPTH		16
#define AQ_DATA		(WIN_BASE + 0x1000)
#define AQ_DATA_MAX	(WIN_SIZE - 0x1000)
#define BOOT_MS		1
#define NO_CHIP		UINT32_MAX

static bool in_window(uint64_t addr, size_t len)
{
	return addr >= WIN_BASE && len <= WIN_SIZE &&
	       addr - WIN_BASE <= WIN_SIZE - len;
}

static void *win(struct sim_chip *c, uint64_t addr)
{
	return c->host + (addr - WIN_BASE);
}

static int h_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	if (!in_window(addr, len))
		return -1;
	memcpy(buf, win(opaque, addr), len);
	return 0;
}

static int h_dma_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	if (!in_window(addr, len))
		return -1;
	memcpy(win(opaque, addr), buf, len);
	return 0;
}

static void h_raise_irq(void *opaque, unsigned int vector)
{
	(void)opaque;
	(void)vector;
}

/* Every chip's opaque is its sim_chip; the sim is found through this. */
static struct sim *the_sim;

static uint64_t h_now_ns(void *opaque)
{
	(void)opaque;
	return the_sim->now_ns;
}

static void h_report(void *opaque, const char *msg)
{
	struct sim_chip *c = opaque;

	fprintf(stderr, "nnp-sim: chip %td: %s\n", c - the_sim->chips, msg);
	the_sim->errors++;
}

static void fifo_push(struct sim *s, struct sim_chip *c)
{
	uint32_t i = (uint32_t)(c - s->chips);

	if (c->queued)
		return;
	c->queued = true;
	c->next = NO_CHIP;
	if (s->tail == NO_CHIP)
		s->head = i;
	else
		s->chips[s->tail].next = i;
	s->tail = i;
}

static void h_kick(void *opaque, unsigned int what)
{
	if (what & NNP_FW_KICK_QUEUES)
		fifo_push(the_sim, opaque);
}

uint16_t sim_admin(struct sim *s, unsigned int i, struct nnp_hw_admin_cmd cmd,
		   const void *data, uint32_t len, uint32_t *result)
{
	struct sim_chip *c = &s->chips[i];
	struct nnp_hw_admin_cmd *sq = win(c, AQ_SQ);
	struct nnp_hw_cqe *cq = win(c, AQ_CQ);
	uint32_t slot = c->aq_slot;

	if (len > AQ_DATA_MAX)
		return NNP_STATUS_BUFFER_TOO_SMALL;
	if (len) {
		if (data)
			memcpy(win(c, AQ_DATA), data, len);
		cmd.addr = AQ_DATA;
		cmd.len = len;
	}
	cmd.cid = (uint16_t)slot;
	memset(&cq[slot], 0xff, sizeof(cq[slot]));
	sq[slot] = cmd;
	c->aq_slot = (slot + 1) % AQ_DEPTH;
	nnp_fw_reg_write(c->fw, NNP_REG_AQ_SQ_TAIL, c->aq_slot);
	nnp_fw_run(c->fw);
	nnp_fw_reg_write(c->fw, NNP_REG_AQ_CQ_HEAD, c->aq_slot);
	if (result)
		*result = cq[slot].result;
	return cq[slot].cid == cmd.cid ? cq[slot].status : 0xffff;
}

uint16_t sim_admin_read(struct sim *s, unsigned int i, uint8_t opcode,
			void *out, uint32_t len)
{
	struct nnp_hw_admin_cmd cmd = { .opcode = opcode };
	uint16_t st = sim_admin(s, i, cmd, NULL, len, NULL);

	if (!st)
		memcpy(out, win(&s->chips[i], AQ_DATA), len);
	return st;
}

static uint16_t admin_args(struct sim *s, unsigned int i, uint8_t opcode,
			   const void *args, size_t len, uint32_t *result)
{
	struct nnp_hw_admin_cmd cmd = { .opcode = opcode };

	memcpy(cmd.args, args, len);
	return sim_admin(s, i, cmd, NULL, 0, result);
}

static void reg64(struct nnp_fw *fw, uint32_t lo, uint64_t v)
{
	nnp_fw_reg_write(fw, lo, (uint32_t)v);
	nnp_fw_reg_write(fw, lo + 4, (uint32_t)(v >> 32));
}

/* Boot chip @i, enable its admin queue, make its context, queue and key. */
static int chip_up(struct sim *s, unsigned int i)
{
	struct sim_chip *c = &s->chips[i];
	uint32_t ctx[1] = { SIM_CTX };
	struct nnp_hw_queue_args q = {
		.ctx = SIM_CTX, .qid = 0, .depth = Q_DEPTH,
		.vector = NNP_VECTOR_QUEUE(0), .sq_base = Q_SQ, .cq_base = Q_CQ,
	};
	struct nnp_hw_key_args k = {
		.ctx = SIM_CTX, .type = NNP_KEY_TYPE_DEVICE,
		.rights = NNP_KEY_READ | NNP_KEY_WRITE,
		.length = s->buf_bytes, .dev_base = 0,
	};

	nnp_fw_run(c->fw);
	if (nnp_fw_reg_read(c->fw, NNP_REG_FW_STATUS) != NNP_FW_STATUS_READY)
		return -1;
	reg64(c->fw, NNP_REG_AQ_SQ_BASE_LO, AQ_SQ);
	reg64(c->fw, NNP_REG_AQ_CQ_BASE_LO, AQ_CQ);
	nnp_fw_reg_write(c->fw, NNP_REG_AQ_DEPTH, AQ_DEPTH);
	nnp_fw_reg_write(c->fw, NNP_REG_AQ_CTRL, NNP_AQ_CTRL_ENABLE);
	if (admin_args(s, i, NNP_ADMIN_CTX_CREATE, ctx, sizeof(ctx), NULL) ||
	    admin_args(s, i, NNP_ADMIN_QUEUE_CREATE, &q, sizeof(q), NULL) ||
	    admin_args(s, i, NNP_ADMIN_KEY_REGISTER, &k, sizeof(k), &c->key))
		return -1;
	return 0;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = NNP_MEM_SIZE_MIN;

	while (p < v)
		p *= 2;
	return p;
}

static int chip_create(struct sim *s, unsigned int i,
		       const struct nnp_fw_config *model)
{
	struct sim_chip *c = &s->chips[i];
	struct nnp_fw_host host = {
		.opaque = c, .dma_read = h_dma_read, .dma_write = h_dma_write,
		.raise_irq = h_raise_irq, .now_ns = h_now_ns,
		.guest_error = h_report, .warning = h_report, .kick = h_kick,
	};
	struct nnp_fw_config cfg = *model;
	const char *err = NULL;
	unsigned int p;

	c->host = calloc(1, WIN_SIZE);
	c->mem = s->shared_mem ? s->shared_mem : calloc(1, s->mem_size);
	if (!c->host || !c->mem)
		return -1;
	for (p = 0; p < SIM_PORTS; p++)
		c->peer[p] = -1;
	cfg.chip_id = i;
	cfg.mem_size = s->mem_size;
	cfg.mem = c->mem;
	cfg.num_ports = SIM_PORTS;
	cfg.boot_time_ms = BOOT_MS;
	cfg.heartbeat_ms = 1000;
	cfg.timing_only = s->timing_only;
	c->fw = nnp_fw_create(&cfg, &host, &err);
	if (!c->fw) {
		fprintf(stderr, "nnp-sim: chip %u: %s\n", i, err ? err : "?");
		return -1;
	}
	return 0;
}

int sim_create(struct sim *s, unsigned int n, uint64_t buf_bytes,
	       bool timing_only, const struct nnp_fw_config *cfg)
{
	unsigned int i;

	*s = (struct sim){
		.n = n, .buf_bytes = buf_bytes, .timing_only = timing_only,
		.head = NO_CHIP, .tail = NO_CHIP, .now_ns = 1000,
	};
	the_sim = s;
	s->mem_size = pow2_at_least(buf_bytes);
	s->chips = calloc(n, sizeof(*s->chips));
	if (!s->chips)
		return -1;
	/* Nobody reads or writes it: one mapping, never touched, for all. */
	if (timing_only) {
		s->shared_mem = mmap(NULL, s->mem_size, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				     -1, 0);
		if (s->shared_mem == MAP_FAILED) {
			s->shared_mem = NULL;
			return -1;
		}
	}
	for (i = 0; i < n; i++)
		if (chip_create(s, i, cfg))
			return -1;
	s->now_ns += BOOT_MS * 1000000ull;
	for (i = 0; i < n; i++)
		if (chip_up(s, i))
			return -1;
	return 0;
}

void sim_destroy(struct sim *s)
{
	unsigned int i;

	for (i = 0; s->chips && i < s->n; i++) {
		nnp_fw_destroy(s->chips[i].fw);
		free(s->chips[i].host);
		if (!s->shared_mem)
			free(s->chips[i].mem);
	}
	if (s->shared_mem)
		munmap(s->shared_mem, s->mem_size);
	free(s->chips);
	s->chips = NULL;
	free(s->rank);
	free(s->chip_of);
	s->rank = s->chip_of = NULL;
}

int sim_connect(struct sim *s, unsigned int a, unsigned int pa,
		unsigned int b, unsigned int pb)
{
	if (nnp_fw_link_connect(s->chips[a].fw, pa, s->chips[b].fw, pb))
		return -1;
	s->chips[a].peer[pa] = (int)b;
	s->chips[a].peer_port[pa] = pb;
	s->chips[b].peer[pb] = (int)a;
	s->chips[b].peer_port[pb] = pa;
	return 0;
}

void sim_post(struct sim *s, unsigned int i, struct nnp_hw_queue_cmd cmd)
{
	struct sim_chip *c = &s->chips[i];
	struct nnp_hw_queue_cmd *sq = win(c, Q_SQ);
	struct nnp_hw_cqe *cq = win(c, Q_CQ);
	uint32_t slot = c->q_tail;

	cmd.cid = (uint16_t)c->posted;
	memset(&cq[slot], 0, sizeof(cq[slot]));
	/* Not yet the phase the completion will carry. */
	cq[slot].phase = (c->posted / Q_DEPTH) % 2 ? NNP_CQE_PHASE : 0;
	sq[slot] = cmd;
	c->q_tail = (slot + 1) % Q_DEPTH;
	c->posted++;
	if (nnp_fw_reg_write(c->fw, NNP_DOORBELL(0) + NNP_DB_SQ_TAIL, c->q_tail) &
	    NNP_FW_KICK_QUEUES)
		fifo_push(s, c);
}

uint16_t sim_last_status(struct sim *s, unsigned int i)
{
	struct sim_chip *c = &s->chips[i];
	uint32_t slot = (c->q_tail + Q_DEPTH - 1) % Q_DEPTH;
	const struct nnp_hw_cqe *cq = win(c, Q_CQ);
	uint16_t phase = ((c->posted - 1) / Q_DEPTH) % 2 ? 0 : NNP_CQE_PHASE;

	if ((cq[slot].phase & NNP_CQE_PHASE) != phase)
		return 0xffff;
	nnp_fw_reg_write(c->fw, NNP_DOORBELL(0) + NNP_DB_CQ_HEAD, c->q_tail);
	return cq[slot].status;
}

/* Take the FIFO's head, or with s->jitter a chip at random from it. */
static struct sim_chip *fifo_pop(struct sim *s)
{
	uint32_t prev = NO_CHIP, i = s->head, k;
	struct sim_chip *c;

	if (s->jitter)
		for (k = (uint32_t)rand_r(&s->jitter) % 4;
		     k && s->chips[i].next != NO_CHIP; k--) {
			prev = i;
			i = s->chips[i].next;
		}
	c = &s->chips[i];
	if (prev == NO_CHIP)
		s->head = c->next;
	else
		s->chips[prev].next = c->next;
	if (s->tail == i)
		s->tail = prev;
	c->queued = false;
	return c;
}

unsigned int sim_run(struct sim *s)
{
	unsigned int i, bad = 0;

	while (s->head != NO_CHIP)
		nnp_fw_run_queues(fifo_pop(s)->fw);
	for (i = 0; i < s->n; i++) {
		uint16_t st = sim_last_status(s, i);

		if (st) {
			if (!bad)
				fprintf(stderr, "nnp-sim: chip %u: status 0x%x\n",
					i, st);
			bad++;
		}
	}
	return bad;
}

int sim_collective(struct sim *s, uint8_t opcode, uint64_t count,
		   uint64_t value, uint64_t src, uint64_t dst)
{
	unsigned int c;

	for (c = 0; c < s->n; c++) {
		/*
		 * The ranks but the root (chip 0) name no source in a
		 * broadcast or scatter, no destination in a reduce or gather.
		 */
		bool reads = (opcode != NNP_CMD_BROADCAST && opcode != NNP_CMD_SCATTER) || !c;
		bool writes = (opcode != NNP_CMD_REDUCE && opcode != NNP_CMD_GATHER) || !c;

		sim_post(s, c, (struct nnp_hw_queue_cmd){
			.opcode = opcode, .len = count, .value = value,
			.src_key = reads ? s->chips[c].key : 0,
			.src_off = reads ? src : 0,
			.dst_key = writes ? s->chips[c].key : 0,
			.dst_off = writes ? dst : 0,
		});
	}
	return sim_run(s) || s->errors ? -1 : 0;
}

int sim_barrier(struct sim *s)
{
	return sim_collective(s, NNP_CMD_ALLREDUCE, SIM_BARRIER_BYTES(s->n) / 4,
			      NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_SUM,
					     SIM_COMM, 0), 0, 0);
}

uint64_t sim_latest_ns(struct sim *s)
{
	struct nnp_fw_model m;
	uint64_t t = 0;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		nnp_fw_model_get(s->chips[i].fw, &m);
		if (m.now_ns > t)
			t = m.now_ns;
	}
	return t;
}
