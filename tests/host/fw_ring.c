// SPDX-License-Identifier: MIT
/* A ring of in-process chips with one communicator: see fw_ring.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"

uint32_t N = 4;
struct fw_chip chips[MAXR];
uint32_t keys[MAXR];

uint16_t comm_create(struct fw_harness *h, uint32_t rank)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = CTX, .comm = COMM, .nranks = N, .rank = rank,
		.send_port = 0, .recv_port = 1, .epoch = EPOCH,
	};

	memcpy(c.args, &a, sizeof(a));
	return fw_harness_admin(h, c, NULL);
}

/* Admin command @opcode for communicator @comm, with @len bytes @data. */
static uint16_t comm_admin(struct fw_harness *h, uint8_t opcode, uint32_t comm,
			   const void *data, uint32_t len)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = opcode, .addr = H_AQ_DATA, .len = len,
	};

	memcpy(fw_harness_host_ptr(h, H_AQ_DATA), data, len);
	c.args[0] = CTX;
	c.args[1] = comm;
	return fw_harness_admin(h, c, NULL);
}

uint16_t routes_give(struct fw_harness *h, uint32_t comm, const uint8_t *r,
		     uint32_t len)
{
	return comm_admin(h, NNP_ADMIN_COMM_ROUTES, comm, r, len);
}

uint16_t ring_topology_give(struct fw_harness *h, uint32_t rank)
{
	const struct nnp_hw_comm_topology t = {
		.algo = NNP_HW_ALGO_RING,
		.dim[0] = { .n = N, .pos = rank, .pairs = 1, .next_port = { 0 },
			    .prev_port = { 1 } },
	};

	return comm_admin(h, NNP_ADMIN_COMM_TOPOLOGY, COMM, &t, sizeof(t));
}

/*
 * The ring's routes from @rank: the shorter way, the ranks ahead on port 0
 * and the one opposite too, those behind on port 1.
 */
void ring_routes(uint32_t rank, uint8_t *r)
{
	uint32_t d;

	for (d = 0; d < N; d++)
		r[(rank + d) % N] = d == 0 ? NONE : d <= N / 2 ? 0 : 1;
}

/* Chip i's port 0 to chip i + 1's port 1; @made: comms made and routed. */
void ring_up(uint32_t made)
{
	uint32_t i;

	for (i = 0; i < N; i++) {
		fw_chip_setup(&chips[i], CTX);
		chips[i].posted = 0;
		keys[i] = fw_harness_dev_key(chips[i].h, CTX, 0, DEV_MEM_SIZE,
					     NNP_KEY_READ | NNP_KEY_WRITE);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(nnp_fw_link_connect(chips[i].h->fw, 0,
						     chips[(i + 1) % N].h->fw, 1), 0);
	for (i = 0; i < N; i++) {
		uint8_t r[N];

		if (!(made >> i & 1))
			continue;
		ring_routes(i, r);
		assert_int_equal(comm_create(chips[i].h, i), NNP_STATUS_SUCCESS);
		assert_int_equal(routes_give(chips[i].h, COMM, r, N),
				 NNP_STATUS_SUCCESS);
	}
}

void run_rounds(unsigned int rounds)
{
	uint32_t i;

	while (rounds--)
		for (i = 0; i < N; i++)
			nnp_fw_run_queues(chips[i].h->fw);
}

void ring_down(void)
{
	uint32_t i;

	for (i = 0; i < N; i++) {
		void *st = chips[i].h;

		fw_harness_teardown(&st);
	}
}

struct nnp_hw_queue_cmd p2p_cmd(uint8_t opcode, uint32_t key, uint64_t off,
				uint64_t len, uint64_t value)
{
	struct nnp_hw_queue_cmd c = { .opcode = opcode, .len = len, .value = value };

	if (opcode == NNP_CMD_SEND) {
		c.src_key = key;
		c.src_off = off;
	} else {
		c.dst_key = key;
		c.dst_off = off;
	}
	return c;
}

struct nnp_hw_queue_cmd routed(uint8_t opcode, uint32_t key, uint64_t off,
			       uint64_t len, uint32_t peer)
{
	return p2p_cmd(opcode, key, off, len, NNP_P2P_ROUTED_VALUE(COMM, peer));
}

/* Fill @len bytes at @off of chip @i's memory with a pattern of @seed. */
void pattern(uint32_t i, uint64_t off, uint64_t len, uint32_t seed)
{
	uint64_t k;

	for (k = 0; k < len; k++)
		chips[i].h->dev_mem[off + k] = (uint8_t)(k * 31 + seed * 7 + k / 251);
}

struct nnp_hw_port_info port_info(uint32_t i, uint32_t port)
{
	struct nnp_hw_port_info info[4];

	fw_harness_ports(chips[i].h, info);
	return info[port];
}

void post_watching(uint32_t i, const struct nnp_hw_queue_cmd *cmds,
			  uint32_t n, uint32_t watch)
{
	uint32_t k, slot = 0;
	uint16_t phase = 0;

	for (k = 0; k < n; k++) {
		fw_chip_post(&chips[i], cmds[k]);
		if (k == watch) {
			slot = chips[i].slot;
			phase = chips[i].phase;
		}
	}
	chips[i].slot = slot;
	chips[i].phase = phase;
}

void post_last_watched(uint32_t i, const struct nnp_hw_queue_cmd *cmds,
		       uint32_t n, bool threaded)
{
	if (!threaded) {
		post_watching(i, cmds, n, n - 1);
		return;
	}
	post_watching(i, cmds, n - 1, n - 2);
	fw_chip_start(&chips[i], cmds[n - 1]);
}

void run_chips(bool threaded)
{
	uint32_t i;

	if (!threaded) {
		fw_chips_run_one_thread(chips, N);
		return;
	}
	for (i = 0; i < N; i++)
		fw_chip_join(&chips[i]);
}

const struct nnp_hw_cqe *cqe(uint32_t i, uint32_t slot)
{
	const struct nnp_hw_cqe *cq = fw_harness_host_ptr(chips[i].h, H_QCQ(0));

	return &cq[slot];
}

uint16_t cqe_status(uint32_t i, uint32_t slot)
{
	return cqe(i, slot)->status;
}

uint16_t run_alone(struct nnp_hw_queue_cmd c)
{
	struct nnp_hw_admin_cmd r = { .opcode = NNP_ADMIN_QUEUE_RESET };

	fw_chip_post(&chips[0], c);
	fw_chips_run_one_thread(chips, 1);
	r.args[0] = CTX;
	assert_int_equal(fw_harness_admin(chips[0].h, r, NULL), NNP_STATUS_SUCCESS);
	chips[0].h->q_tail[0] = 0;
	chips[0].posted = 0;
	return chips[0].status;
}

void comm_abort(uint32_t i)
{
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_COMM_DESTROY };

	d.args[0] = CTX;
	d.args[1] = COMM;
	d.args[2] = NNP_HW_COMM_DESTROY_ABORT;
	assert_int_equal(fw_harness_admin(chips[i].h, d, NULL), NNP_STATUS_SUCCESS);
}
