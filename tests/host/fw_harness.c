// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fw_harness.h"
#include "fw_control.h"

struct nnp_fw_config fw_harness_model;

static bool in_window(uint64_t addr, size_t len)
{
	return addr >= HOST_MEM_BASE && len <= HOST_MEM_SIZE &&
	       addr - HOST_MEM_BASE <= HOST_MEM_SIZE - len;
}

void *fw_harness_host_ptr(struct fw_harness *h, uint64_t addr)
{
	assert_true(in_window(addr, 1));
	return h->host_mem + (addr - HOST_MEM_BASE);
}

static int h_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct fw_harness *h = opaque;

	if (!in_window(addr, len))
		return -1;
	memcpy(buf, h->host_mem + (addr - HOST_MEM_BASE), len);
	if (h->after_dma_read)
		h->after_dma_read(h, addr, len);
	return 0;
}

static int h_dma_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct fw_harness *h = opaque;

	if (!in_window(addr, len))
		return -1;
	memcpy(h->host_mem + (addr - HOST_MEM_BASE), buf, len);
	return 0;
}

static void *h_dma_map(void *opaque, uint64_t addr, uint64_t *len, bool write)
{
	struct fw_harness *h = opaque;
	uint64_t n = *len < h->map_max ? *len : h->map_max;

	(void)write;
	if (!n || !in_window(addr, 1))
		return NULL;
	if (!in_window(addr, n))
		n = HOST_MEM_BASE + HOST_MEM_SIZE - addr;
	*len = n;
	h->maps++;
	h->mapped++;
	return h->host_mem + (addr - HOST_MEM_BASE);
}

static void h_dma_unmap(void *opaque, void *ptr, uint64_t len, bool write,
			uint64_t done)
{
	struct fw_harness *h = opaque;

	(void)write;
	assert_true(ptr >= (void *)h->host_mem && done <= len);
	assert_true(len <= HOST_MEM_SIZE - (uint64_t)((uint8_t *)ptr - h->host_mem));
	h->mapped--;
}

static void h_raise_irq(void *opaque, unsigned int vector)
{
	struct fw_harness *h = opaque;

	assert_true(vector < sizeof(h->irqs) / sizeof(h->irqs[0]));
	h->irqs[vector]++;
}

static uint64_t h_now_ns(void *opaque)
{
	struct fw_harness *h = opaque;
	struct timespec t;

	if (!h->real_clock)
		return h->now_ns;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec +
	       atomic_load(&h->skew_ns);
}

static void h_guest_error(void *opaque, const char *msg)
{
	struct fw_harness *h = opaque;

	h->guest_errors++;
	snprintf(h->last_error, sizeof(h->last_error), "%s", msg);
}

static void h_warning(void *opaque, const char *msg)
{
	struct fw_harness *h = opaque;

	h->warnings++;
	snprintf(h->last_warning, sizeof(h->last_warning), "%s", msg);
}

static int h_icl_tx(void *opaque, unsigned int port, uint64_t epoch,
		    uint32_t seq, bool abort, uint64_t model_ns,
		    const void *data, size_t len)
{
	struct fw_harness *h = opaque;

	return h->icl_tx ? h->icl_tx(h, port, epoch, seq, abort, model_ns,
				     data, len) : -1;
}

static int h_icl_tx_lent(void *opaque, unsigned int port, uint64_t epoch,
			 uint32_t seq, uint64_t model_ns, uint64_t offset,
			 size_t len, uint32_t tag)
{
	struct fw_harness *h = opaque;

	return h->icl_tx_lent ? h->icl_tx_lent(h, port, epoch, seq, model_ns,
					       offset, len, tag) : -1;
}

static void h_icl_give_back(void *opaque, unsigned int port, uint32_t tag)
{
	struct fw_harness *h = opaque;

	if (h->icl_give_back)
		h->icl_give_back(h, port, tag);
}

static void h_icl_reclaim(void *opaque, unsigned int port,
			  const uint32_t *tags, size_t n)
{
	struct fw_harness *h = opaque;

	if (h->icl_reclaim)
		h->icl_reclaim(h, port, tags, n);
}

static void h_icl_drop(void *opaque, unsigned int port)
{
	struct fw_harness *h = opaque;

	h->icl_drops++;
	h->icl_dropped_port = port;
}

static void h_icl_credit(void *opaque, unsigned int port, size_t len)
{
	struct fw_harness *h = opaque;

	if (h->icl_credit)
		h->icl_credit(h, port, len);
}

static void h_icl_chip_state(void *opaque, unsigned int port, bool up)
{
	struct fw_harness *h = opaque;

	if (h->icl_chip_state)
		h->icl_chip_state(h, port, up);
}

static void h_kick(void *opaque, unsigned int what)
{
	struct fw_harness *h = opaque;

	(void)what;
	if (h->on_kick)
		h->on_kick(h);
	mtx_lock(&h->kick_lock);
	h->kicks++;
	cnd_broadcast(&h->kicked);
	mtx_unlock(&h->kick_lock);
}

void fw_harness_advance_ms(struct fw_harness *h, uint64_t ms)
{
	if (h->real_clock)
		atomic_fetch_add(&h->skew_ns, ms * 1000000ull);
	else
		h->now_ns += ms * 1000000ull;
	nnp_fw_run(h->fw);
}

static void create(void **state, uint32_t chip_id)
{
	struct fw_harness *h = calloc(1, sizeof(*h));
	struct nnp_fw_host host = {
		.dma_read = h_dma_read,
		.dma_write = h_dma_write,
		.dma_map = h_dma_map,
		.dma_unmap = h_dma_unmap,
		.raise_irq = h_raise_irq,
		.now_ns = h_now_ns,
		.guest_error = h_guest_error,
		.warning = h_warning,
		.icl_tx = h_icl_tx,
		.icl_tx_lent = h_icl_tx_lent,
		.icl_give_back = h_icl_give_back,
		.icl_reclaim = h_icl_reclaim,
		.icl_drop = h_icl_drop,
		.icl_credit = h_icl_credit,
		.icl_chip_state = h_icl_chip_state,
		.kick = h_kick,
	};
	/* The clock's parameters, and the harness's own for the rest. */
	struct nnp_fw_config cfg = fw_harness_model;

	assert_non_null(h);
	mtx_init(&h->kick_lock, mtx_plain);
	cnd_init(&h->kicked);
	h->dev_mem = calloc(1, DEV_MEM_SIZE);
	assert_non_null(h->dev_mem);
	h->now_ns = 1000;
	h->map_max = UINT64_MAX;
	host.opaque = h;
	cfg.chip_id = chip_id;
	cfg.mem_size = DEV_MEM_SIZE;
	cfg.num_ports = 4;
	cfg.boot_time_ms = BOOT_MS;
	cfg.heartbeat_ms = HEARTBEAT_MS;
	cfg.coll_timeout_ms = COLL_TIMEOUT_MS;
	cfg.mem = h->dev_mem;
	h->fw = nnp_fw_create(&cfg, &host, NULL);
	assert_non_null(h->fw);
	*state = h;
}

int fw_harness_setup_unbooted(void **state)
{
	create(state, 7);
	return 0;
}

static void boot(struct fw_harness *h)
{
	fw_harness_advance_ms(h, BOOT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
}

int fw_harness_setup(void **state)
{
	fw_harness_setup_unbooted(state);
	boot(*state);
	return 0;
}

int fw_harness_teardown(void **state)
{
	struct fw_harness *h = *state;

	nnp_fw_destroy(h->fw);
	/* The firmware gave back every mapping of host memory it took. */
	assert_int_equal(h->mapped, 0);
	cnd_destroy(&h->kicked);
	mtx_destroy(&h->kick_lock);
	free(h->dev_mem);
	free(h);
	return 0;
}

void fw_harness_aq_setup(struct fw_harness *h, uint64_t sq, uint64_t cq,
			 uint32_t depth)
{
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_BASE_LO, (uint32_t)sq);
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_BASE_HI, (uint32_t)(sq >> 32));
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CQ_BASE_LO, (uint32_t)cq);
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CQ_BASE_HI, (uint32_t)(cq >> 32));
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_DEPTH, depth);
	nnp_fw_reg_write(h->fw, NNP_REG_INT_ENABLE, NNP_INT_ADMIN_CQ);
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CTRL, NNP_AQ_CTRL_ENABLE);
}

static void aq_up(struct fw_harness *h)
{
	fw_harness_aq_setup(h, H_AQ_SQ, H_AQ_CQ, H_AQ_DEPTH);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS),
			 NNP_AQ_STATUS_READY);
}

int fw_harness_setup_aq(void **state)
{
	fw_harness_setup(state);
	aq_up(*state);
	return 0;
}

void fw_harness_setup_chip(void **state, uint32_t chip_id)
{
	create(state, chip_id);
	boot(*state);
	aq_up(*state);
}

uint16_t fw_harness_admin(struct fw_harness *h, struct nnp_hw_admin_cmd cmd,
			  uint32_t *result)
{
	struct nnp_hw_admin_cmd *sq = fw_harness_host_ptr(h, H_AQ_SQ);
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_AQ_CQ);
	uint32_t slot = h->aq_slot;

	cmd.cid = (uint16_t)(0x100 + slot);
	memset(&cq[slot], 0xff, sizeof(cq[slot]));
	sq[slot] = cmd;
	h->aq_slot = (slot + 1) % H_AQ_DEPTH;
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, h->aq_slot);
	nnp_fw_run(h->fw);
	assert_int_equal(cq[slot].cid, cmd.cid);
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CQ_HEAD, h->aq_slot);
	if (result)
		*result = cq[slot].result;
	return cq[slot].status;
}

void fw_harness_ctx_create(struct fw_harness *h, uint32_t ctx)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_CTX_CREATE };

	c.args[0] = ctx;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
}

uint16_t fw_harness_key_register(struct fw_harness *h, struct nnp_hw_key_args a,
				 uint64_t list, uint32_t list_len, uint32_t *key)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_KEY_REGISTER, .addr = list, .len = list_len,
	};

	memcpy(c.args, &a, sizeof(a));
	return fw_harness_admin(h, c, key);
}

uint32_t fw_harness_dev_key(struct fw_harness *h, uint32_t ctx, uint64_t base,
			    uint64_t len, uint32_t rights)
{
	struct nnp_hw_key_args a = {
		.ctx = ctx, .type = NNP_KEY_TYPE_DEVICE, .rights = rights,
		.length = len, .dev_base = base,
	};
	uint32_t key = 0;

	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key),
			 NNP_STATUS_SUCCESS);
	assert_int_not_equal(key, 0);
	return key;
}

void fw_harness_queue_create(struct fw_harness *h, uint32_t ctx, uint32_t qid)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_QUEUE_CREATE };
	struct nnp_hw_queue_args a = {
		.ctx = ctx, .qid = qid, .depth = H_QDEPTH,
		.vector = NNP_VECTOR_QUEUE(qid), .sq_base = H_QSQ(qid),
		.cq_base = H_QCQ(qid),
	};

	memcpy(c.args, &a, sizeof(a));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
}

struct nnp_hw_counters fw_harness_counters(struct fw_harness *h)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_COUNTERS, .addr = H_AQ_DATA,
		.len = sizeof(struct nnp_hw_counters),
	};
	struct nnp_hw_counters out;
	uint32_t result;

	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	assert_int_equal(result, sizeof(out));
	memcpy(&out, fw_harness_host_ptr(h, H_AQ_DATA), sizeof(out));
	return out;
}

uint32_t fw_harness_post(struct fw_harness *h, uint32_t q,
			 struct nnp_hw_queue_cmd cmd)
{
	struct nnp_hw_queue_cmd *sq = fw_harness_host_ptr(h, H_QSQ(q));
	uint32_t slot = h->q_tail[q];

	sq[slot] = cmd;
	h->q_tail[q] = (slot + 1) % H_QDEPTH;
	assert_int_equal(nnp_fw_reg_write(h->fw, NNP_DOORBELL(q) + NNP_DB_SQ_TAIL,
					  h->q_tail[q]), NNP_FW_KICK_QUEUES);
	return slot;
}

/*
 * Run @h's queues until nothing is runnable, then wait for a kick: a
 * packet for a parked command. A parked command's deadline comes without
 * one, so the wait is short.
 */
void fw_harness_run_queues(struct fw_harness *h)
{
	struct timespec t;
	unsigned int seen;

	mtx_lock(&h->kick_lock);
	seen = h->kicks;
	mtx_unlock(&h->kick_lock);
	nnp_fw_run_queues(h->fw);
	timespec_get(&t, TIME_UTC);
	t.tv_nsec += 5 * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	mtx_lock(&h->kick_lock);
	if (h->kicks == seen)
		cnd_timedwait(&h->kicked, &h->kick_lock, &t);
	mtx_unlock(&h->kick_lock);
}

static bool chip_done(const struct fw_chip *c)
{
	const struct nnp_hw_cqe *cq = fw_harness_host_ptr(c->h, H_QCQ(0));

	return (cq[c->slot].phase & 1) == c->phase;
}

/* Take the command's status (0xffff if it never completed). */
static void chip_finish(struct fw_chip *c)
{
	const struct nnp_hw_cqe *cq = fw_harness_host_ptr(c->h, H_QCQ(0));

	c->status = chip_done(c) ? cq[c->slot].status : 0xffff;
	/* Consumed: the completion slot is free again. */
	nnp_fw_reg_write(c->h->fw, NNP_DOORBELL(0) + NNP_DB_CQ_HEAD,
			 (c->slot + 1) % H_QDEPTH);
}

static int chip_main(void *arg)
{
	struct fw_chip *c = arg;
	time_t end = time(NULL) + 5;

	while (!chip_done(c) && time(NULL) < end) {
		struct timespec nap = { 0, c->nap_us * 1000l };

		fw_harness_run_queues(c->h);
		if (c->nap_us)
			thrd_sleep(&nap, NULL);
	}
	chip_finish(c);
	return 0;
}

void fw_chip_setup(struct fw_chip *c, uint32_t ctx)
{
	void *st;

	fw_harness_setup_aq(&st);
	c->h = st;
	fw_harness_ctx_create(c->h, ctx);
	fw_harness_queue_create(c->h, ctx, 0);
}

void fw_chip_post(struct fw_chip *c, struct nnp_hw_queue_cmd cmd)
{
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(c->h, H_QCQ(0));

	c->h->real_clock = true;
	c->slot = c->h->q_tail[0];
	c->phase = (c->posted++ / H_QDEPTH) % 2 ? 0 : 1;
	memset(&cq[c->slot], 0, sizeof(cq[0]));
	cq[c->slot].phase = !c->phase;
	fw_harness_post(c->h, 0, cmd);
}

void fw_chip_start(struct fw_chip *c, struct nnp_hw_queue_cmd cmd)
{
	fw_chip_post(c, cmd);
	assert_int_equal(thrd_create(&c->thread, chip_main, c), thrd_success);
}

void fw_chips_run_one_thread(struct fw_chip *c, unsigned int n)
{
	time_t end = time(NULL) + 30;
	unsigned int i, left = n;

	while (left && time(NULL) < end) {
		left = 0;
		/* A chip done still forwards others' routed packets. */
		for (i = 0; i < n; i++) {
			left += !chip_done(&c[i]);
			nnp_fw_run_queues(c[i].h->fw);
		}
	}
	for (i = 0; i < n; i++)
		chip_finish(&c[i]);
}

void fw_chip_join(struct fw_chip *c)
{
	thrd_join(c->thread, NULL);
}

/* Queue @q's command waits parked, what it waits for not come. */
static bool queue_parked(struct fw_harness *h, uint32_t q)
{
	struct nnp_fw *fw = h->fw;
	const struct nnp_fw_op *op;
	bool parked;

	mtx_lock(&fw->lock);
	op = fw->queues[q].op;
	parked = op && op->parked && !op->ready;
	mtx_unlock(&fw->lock);
	return parked;
}

static unsigned int kicks_of(struct fw_harness *h)
{
	unsigned int kicks;

	mtx_lock(&h->kick_lock);
	kicks = h->kicks;
	mtx_unlock(&h->kick_lock);
	return kicks;
}

/*
 * Queues 0 to @nq - 1 of the @n harnesses at @h all parked, and none of
 * them kicked while they were looked at: a command that woke another
 * after it was seen parked would have kicked its chip.
 */
static bool all_parked(struct fw_harness *const *h, unsigned int n,
		       uint32_t nq)
{
	unsigned int kicks = 0, i;
	uint32_t q;

	for (i = 0; i < n; i++)
		kicks += kicks_of(h[i]);
	for (i = 0; i < n; i++)
		for (q = 0; q < nq; q++)
			if (!queue_parked(h[i], q))
				return false;
	for (i = 0; i < n; i++)
		kicks -= kicks_of(h[i]);
	return !kicks;
}

static void wait_parked(struct fw_harness *const *h, unsigned int n,
			uint32_t nq)
{
	const struct timespec nap = { 0, 1000000 };
	time_t end = time(NULL) + 5;
	bool parked;

	while (!(parked = all_parked(h, n, nq)) && time(NULL) < end)
		thrd_sleep(&nap, NULL);
	assert_true(parked);
}

void fw_harness_wait_parked(struct fw_harness *h, uint32_t nq)
{
	wait_parked(&h, 1, nq);
}

/* The most chips fw_chips_wait_parked() waits for: more than any test runs. */
#define WAIT_MAX_CHIPS	16

void fw_chips_wait_parked(struct fw_chip *c, unsigned int n)
{
	struct fw_harness *h[WAIT_MAX_CHIPS];
	unsigned int i;

	assert_true(n <= WAIT_MAX_CHIPS);
	for (i = 0; i < n; i++)
		h[i] = c[i].h;
	wait_parked(h, n, 1);
}

void fw_chips_time_out(struct fw_chip *c, unsigned int n)
{
	time_t end = time(NULL) + 30;
	bool waiting = false;
	unsigned int i;

	/* One thread: after a round, no chip runs to wake another. */
	while (!waiting && time(NULL) < end) {
		waiting = true;
		for (i = 0; i < n; i++)
			nnp_fw_run_queues(c[i].h->fw);
		for (i = 0; i < n; i++)
			waiting &= chip_done(&c[i]) || queue_parked(c[i].h, 0);
	}
	assert_true(waiting);
	for (i = 0; i < n; i++)
		if (!chip_done(&c[i]))
			fw_harness_advance_ms(c[i].h, COLL_TIMEOUT_MS);
}

uint16_t fw_harness_comm_pair(struct fw_harness *h, uint32_t ctx, uint32_t comm,
			      uint32_t rank, uint64_t epoch)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = ctx, .comm = comm, .nranks = 2, .rank = rank,
		.send_port = 0, .recv_port = 1, .epoch = epoch,
	};

	memcpy(c.args, &a, sizeof(a));
	return fw_harness_admin(h, c, NULL);
}

void fw_harness_pair_up(struct fw_harness *h[2], uint32_t ctx, uint32_t comm,
			uint64_t epoch)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		void *st;

		fw_harness_setup_chip(&st, i);
		h[i] = st;
		fw_harness_ctx_create(h[i], ctx);
		fw_harness_queue_create(h[i], ctx, 0);
	}
	assert_int_equal(nnp_fw_link_connect(h[0]->fw, 0, h[1]->fw, 1), 0);
	assert_int_equal(nnp_fw_link_connect(h[1]->fw, 0, h[0]->fw, 1), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(fw_harness_comm_pair(h[i], ctx, comm, i, epoch),
				 NNP_STATUS_SUCCESS);
}

void fw_harness_pair_down(struct fw_harness *h[2])
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		void *st = h[i];

		fw_harness_teardown(&st);
	}
}

uint32_t fw_harness_comm_status(struct fw_harness *h, uint32_t ctx,
				uint32_t comm)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_STATUS };
	uint32_t result = 0xdead;

	c.args[0] = ctx;
	c.args[1] = comm;
	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	return result;
}

void fw_harness_ports(struct fw_harness *h, struct nnp_hw_port_info *info)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_PORTS, .addr = H_AQ_DATA, .len = 4096,
	};
	uint32_t result = 0;

	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	assert_int_equal(result, 4 * sizeof(*info));
	memcpy(info, fw_harness_host_ptr(h, H_AQ_DATA), result);
}
