// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: what one job on the links may cost the others. Bounds
 * on what a port holds, packets freed with their context, waits that never
 * hold the workers other contexts need, teardown that never waits for a
 * peer, epochs that separate jobs, and the bound on host page lists.
 *
 * In detail (docs/testing.md has the summary):
 * the links under a hostile context: two RECVs pending do not starve
 * another context's NOP (done while they still wait); a SEND of 4 MiB to
 * an idle peer stops at its communicator's share of the port (3 MiB: 48
 * chunks, and its failure's abort) with PEER_TIMEOUT and exact held, rx
 * and tx counts; a
 * communicator of one context fed to its share while another context's
 * communicator exchanges 1 MiB over the same port, byte for byte, and the
 * first's SEND ends PEER_TIMEOUT (on 62de6b4 the first took the whole 4 MiB
 * and the second's SEND and RECV ended PEER_TIMEOUT); two communicators
 * that never receive filling the port (3 MiB and 1 MiB) jam a third's SEND
 * until their packets pass the default timeout, then lose them (64
 * dropped), fail with NO_RESOURCES, and the third exchanges 1 MiB byte for
 * byte (on c1e1ef3 the third's SEND waited); packets freed on context
 * destroy and reset; QUEUE_DESTROY, QUEUE_RESET, CTX_DESTROY and
 * KEY_UNREGISTER end a RECV a peer keeps feeding at once (ABORTED); one
 * communicator per epoch per chip (BUSY), and packets on the wrong port or
 * with a foreign epoch dropped and counted, never delivered; a collective's
 * packet off its ring kept until the communicator's topology is given and
 * dropped then (counted on arrival after), a peer's backward-lane packet on
 * the ring's send port kept through COMM_CREATE and COMM_TOPOLOGY; an
 * unclaimed packet past the default timeout kept by the firmware's timed
 * work while the port has room, and while three packets of 1 MiB fit beside
 * it, dropped (its epoch's only, counted) when a fourth needs the room, and
 * its epoch's later arrivals dropped; host page lists capped per chip
 * (NO_RESOURCES, and a freed one lets another in); the RECV timeout follows
 * the host's monotonic clock
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#include <cmocka.h>

#include "fw_harness.h"
#include "fw_control.h"

#define CTX	1
#define CTX_B	2
#define COMM	5
#define EPOCH	0x5eed000000000001ull
#define CHUNK	(64u * 1024)

static struct fw_chip chips[2];

static double ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	thrd_sleep(&t, NULL);
}

/* Chip 0 port 0 to chip 1 port 1 and back; one communicator of CTX. */
static void pair_up(void)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		void *st;

		fw_harness_setup_aq(&st);
		chips[i].h = st;
		chips[i].posted = 0;
		chips[i].h->real_clock = true;
		fw_harness_ctx_create(chips[i].h, CTX);
		fw_harness_queue_create(chips[i].h, CTX, 0);
	}
	assert_int_equal(nnp_fw_link_connect(chips[0].h->fw, 0, chips[1].h->fw, 1), 0);
	assert_int_equal(nnp_fw_link_connect(chips[1].h->fw, 0, chips[0].h->fw, 1), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(fw_harness_comm_pair(chips[i].h, CTX, COMM, i, EPOCH),
				 NNP_STATUS_SUCCESS);
}

static void pair_down(void)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		void *st = chips[i].h;

		fw_harness_teardown(&st);
	}
}

/* Packets @port of @h holds now. */
static unsigned int held(struct fw_harness *h, unsigned int port)
{
	struct nnp_fw_port *p = &h->fw->ports[port];
	struct nnp_fw_packet *pk;
	unsigned int n = 0;

	mtx_lock(&p->lock);
	for (pk = p->rx_head; pk; pk = pk->next)
		n++;
	mtx_unlock(&p->lock);
	return n;
}

/* The device's worker pool: two threads running the queues. */
struct pool {
	struct fw_harness *h;
	atomic_bool stop;
	thrd_t t[2];
};

static int pool_main(void *arg)
{
	struct pool *p = arg;

	while (!atomic_load(&p->stop))
		fw_harness_run_queues(p->h);
	return 0;
}

static void pool_start(struct pool *p, struct fw_harness *h)
{
	unsigned int i;

	p->h = h;
	atomic_store(&p->stop, false);
	for (i = 0; i < 2; i++)
		assert_int_equal(thrd_create(&p->t[i], pool_main, p), thrd_success);
}

static void pool_stop(struct pool *p)
{
	unsigned int i;

	atomic_store(&p->stop, true);
	for (i = 0; i < 2; i++)
		thrd_join(p->t[i], NULL);
}

/* Status of the completion in @slot of queue @q, or 0xffff: none in @ms. */
static uint16_t wait_cqe(struct fw_harness *h, uint32_t q, uint32_t slot,
			 long ms)
{
	volatile struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(q));
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!(cq[slot].phase & NNP_CQE_PHASE) && ms_since(&t0) < ms)
		nap_ms(1);
	return cq[slot].phase & NNP_CQE_PHASE ? cq[slot].status : 0xffff;
}

static struct nnp_hw_queue_cmd recv_cmd(uint32_t key, uint64_t len,
					uint32_t port)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_RECV, .dst_key = key, .len = len,
		.value = NNP_P2P_VALUE(COMM, port),
	};
}

/*
 * Context A keeps two RECVs waiting, one per worker of the chip: context
 * B's NOP still completes, while they wait, not after them.
 */
static void test_recvs_do_not_starve_other_contexts(void **state)
{
	struct fw_harness *b;
	struct pool pool;
	uint32_t key, slot;
	uint16_t st[2];

	(void)state;
	pair_up();
	b = chips[1].h;
	key = fw_harness_dev_key(b, CTX, 0, 1 << 20, NNP_KEY_WRITE);
	fw_harness_queue_create(b, CTX, 1);
	fw_harness_ctx_create(b, CTX_B);
	fw_harness_queue_create(b, CTX_B, 2);
	fw_harness_post(b, 0, recv_cmd(key, 64, 1));
	fw_harness_post(b, 1, recv_cmd(key, 64, 1));
	pool_start(&pool, b);
	fw_harness_wait_parked(b, 2);

	slot = fw_harness_post(b, 2, (struct nnp_hw_queue_cmd){ .opcode = NNP_CMD_NOP });
	assert_int_equal(wait_cqe(b, 2, slot, 5000), NNP_STATUS_SUCCESS);
	/* Before the RECVs' end: their timeout is 60 s. */
	assert_int_equal(wait_cqe(b, 0, 0, 0), 0xffff);
	assert_int_equal(wait_cqe(b, 1, 0, 0), 0xffff);
	/*
	 * The RECVs still end, at their timeout: both, or the first, whose
	 * failure ends the other ABORTED (hw 1.19), as two workers run them.
	 */
	fw_harness_wait_parked(b, 2);
	fw_harness_advance_ms(b, COLL_TIMEOUT_MS);
	st[0] = wait_cqe(b, 0, 0, 5000);
	st[1] = wait_cqe(b, 1, 0, 5000);
	assert_true(st[0] == NNP_STATUS_PEER_TIMEOUT ||
		    st[1] == NNP_STATUS_PEER_TIMEOUT);
	assert_true(st[0] == NNP_STATUS_PEER_TIMEOUT ||
		    st[0] == NNP_STATUS_ABORTED);
	assert_true(st[1] == NNP_STATUS_PEER_TIMEOUT ||
		    st[1] == NNP_STATUS_ABORTED);
	pool_stop(&pool);
	pair_down();
}

/*
 * Sends to a chip where nobody receives: one communicator holds its share
 * of the port (3 MiB, 48 chunks) at most, and its SEND past it waits no
 * longer than a timeout.
 */
static void test_sends_to_idle_peer_are_bounded(void **state)
{
	struct nnp_hw_queue_cmd send = {
		.opcode = NNP_CMD_SEND, .len = 4u << 20,
		.value = NNP_P2P_VALUE(COMM, 0),
	};
	struct nnp_hw_port_info p[4];
	struct nnp_hw_counters c;

	(void)state;
	pair_up();
	send.src_key = fw_harness_dev_key(chips[0].h, CTX, 0, 4u << 20, NNP_KEY_READ);
	fw_chip_start(&chips[0], send);
	fw_chips_wait_parked(&chips[0], 1);
	fw_harness_advance_ms(chips[0].h, COLL_TIMEOUT_MS);
	fw_chip_join(&chips[0]);
	print_message("  SEND of 4 MiB: status 0x%x, %u packets held\n",
		      chips[0].status, held(chips[1].h, 1));
	assert_int_equal(chips[0].status, NNP_STATUS_PEER_TIMEOUT);
	/* 48 chunks, and the empty packet saying the SEND failed. */
	assert_int_equal(held(chips[1].h, 1), 49);
	c = fw_harness_counters(chips[1].h);
	assert_int_equal(c.icl_held_bytes, NNP_FW_EPOCH_RX_BYTES);
	assert_int_equal(c.icl_rx_bytes, 3u << 20);
	assert_int_equal(c.icl_dropped, 0);
	fw_harness_ports(chips[0].h, p);
	assert_int_equal(p[0].tx_bytes, 3u << 20);
	assert_int_equal(p[0].tx_packets, 49);
	pair_down();
}

#define EPOCH_Y	0x5eed0000000000a2ull
#define Y_BYTES	(1u << 20)

/*
 * Communicator X of context A that never receives is fed until its share
 * of chip 1's port is full; communicator Y of context B exchanges 1 MiB
 * over the same port meanwhile, byte for byte, and X's SEND ends
 * PEER_TIMEOUT at its own timeout: X's failure, not the link's.
 */
static void test_one_communicator_leaves_others_room(void **state)
{
	struct nnp_hw_queue_cmd x = {
		.opcode = NNP_CMD_SEND, .len = 4u << 20,
		.value = NNP_P2P_VALUE(COMM, 0),
	};
	struct nnp_hw_queue_cmd ys = {
		.opcode = NNP_CMD_SEND, .len = Y_BYTES,
		.value = NNP_P2P_VALUE(COMM + 1, 0),
	};
	struct nnp_hw_queue_cmd yr = {
		.opcode = NNP_CMD_RECV, .len = Y_BYTES,
		.value = NNP_P2P_VALUE(COMM + 1, 1),
	};
	struct pool pools[2];
	uint32_t ys_slot, yr_slot, i;
	uint16_t ys_st, yr_st;
	uint8_t *src, *dst;

	(void)state;
	pair_up();
	for (i = 0; i < 2; i++) {
		fw_harness_ctx_create(chips[i].h, CTX_B);
		fw_harness_queue_create(chips[i].h, CTX_B, 2);
		assert_int_equal(fw_harness_comm_pair(chips[i].h, CTX_B, COMM + 1,
						      i, EPOCH_Y),
				 NNP_STATUS_SUCCESS);
	}
	src = chips[0].h->dev_mem + (4u << 20);
	dst = chips[1].h->dev_mem;
	for (i = 0; i < Y_BYTES; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	memset(dst, 0, Y_BYTES);
	x.src_key = fw_harness_dev_key(chips[0].h, CTX, 0, 4u << 20, NNP_KEY_READ);
	ys.src_key = fw_harness_dev_key(chips[0].h, CTX_B, 4u << 20, Y_BYTES,
					NNP_KEY_READ);
	yr.dst_key = fw_harness_dev_key(chips[1].h, CTX_B, 0, Y_BYTES,
					NNP_KEY_WRITE);

	/* X sends all it can, its share or on and on, and waits. */
	fw_chip_start(&chips[0], x);
	fw_chips_wait_parked(&chips[0], 1);
	print_message("  X holds %u packets of chip 1's port\n",
		      held(chips[1].h, 1));
	yr_slot = fw_harness_post(chips[1].h, 2, yr);
	ys_slot = fw_harness_post(chips[0].h, 2, ys);
	pool_start(&pools[0], chips[0].h);
	pool_start(&pools[1], chips[1].h);
	ys_st = wait_cqe(chips[0].h, 2, ys_slot, 5000);
	yr_st = wait_cqe(chips[1].h, 2, yr_slot, 5000);
	print_message("  Y: SEND 0x%x, RECV 0x%x\n", ys_st, yr_st);
	assert_int_equal(ys_st, NNP_STATUS_SUCCESS);
	assert_int_equal(yr_st, NNP_STATUS_SUCCESS);
	assert_memory_equal(dst, src, Y_BYTES);
	fw_chips_wait_parked(&chips[0], 1);
	fw_harness_advance_ms(chips[0].h, COLL_TIMEOUT_MS);
	fw_chip_join(&chips[0]);
	assert_int_equal(chips[0].status, NNP_STATUS_PEER_TIMEOUT);
	/* X's share, and the empty packet saying its SEND failed. */
	assert_int_equal(held(chips[1].h, 1), 49);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_held_bytes,
			 NNP_FW_EPOCH_RX_BYTES);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_dropped, 0);
	pool_stop(&pools[0]);
	pool_stop(&pools[1]);
	pair_down();
}

#define EPOCH_X2	0x5eed0000000000a3ull

/*
 * Two communicators X1 and X2 of context A that never receive fill chip
 * 1's port between them: X1 its share (3 MiB), X2 the rest (1 MiB). Y of
 * context B cannot send; once X's packets are past the default timeout,
 * the firmware's timed work drops them, counted, X1 and X2 fail with
 * NO_RESOURCES on chip 1, and Y exchanges 1 MiB, byte for byte.
 */
static void test_idle_communicators_lose_room_to_others(void **state)
{
	struct nnp_hw_queue_cmd x = {
		.opcode = NNP_CMD_SEND, .len = NNP_FW_EPOCH_RX_BYTES,
		.value = NNP_P2P_VALUE(COMM, 0),
	};
	struct nnp_hw_queue_cmd ys = {
		.opcode = NNP_CMD_SEND, .len = Y_BYTES,
		.value = NNP_P2P_VALUE(COMM + 1, 0),
	};
	struct nnp_hw_queue_cmd yr = {
		.opcode = NNP_CMD_RECV, .len = Y_BYTES,
		.value = NNP_P2P_VALUE(COMM + 1, 1),
	};
	uint32_t ys_slot, yr_slot, i;
	struct pool pools[2];
	uint8_t *src, *dst;

	(void)state;
	pair_up();
	for (i = 0; i < 2; i++) {
		assert_int_equal(fw_harness_comm_pair(chips[i].h, CTX, COMM + 2,
						      i, EPOCH_X2),
				 NNP_STATUS_SUCCESS);
		fw_harness_ctx_create(chips[i].h, CTX_B);
		fw_harness_queue_create(chips[i].h, CTX_B, 2);
		assert_int_equal(fw_harness_comm_pair(chips[i].h, CTX_B, COMM + 1,
						      i, EPOCH_Y),
				 NNP_STATUS_SUCCESS);
	}
	x.src_key = fw_harness_dev_key(chips[0].h, CTX, 0, 4u << 20, NNP_KEY_READ);
	fw_chip_start(&chips[0], x);
	fw_chip_join(&chips[0]);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	x.len = NNP_FW_PORT_RX_BYTES - NNP_FW_EPOCH_RX_BYTES;
	x.value = NNP_P2P_VALUE(COMM + 2, 0);
	fw_chip_start(&chips[0], x);
	fw_chip_join(&chips[0]);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	assert_int_equal(held(chips[1].h, 1), 64);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_held_bytes,
			 NNP_FW_PORT_RX_BYTES);

	src = chips[0].h->dev_mem + (4u << 20);
	dst = chips[1].h->dev_mem;
	for (i = 0; i < Y_BYTES; i++)
		src[i] = (uint8_t)(i * 11 + 1);
	memset(dst, 0, Y_BYTES);
	ys.src_key = fw_harness_dev_key(chips[0].h, CTX_B, 4u << 20, Y_BYTES,
					NNP_KEY_READ);
	yr.dst_key = fw_harness_dev_key(chips[1].h, CTX_B, 0, Y_BYTES,
					NNP_KEY_WRITE);
	ys_slot = fw_harness_post(chips[0].h, 2, ys);
	pool_start(&pools[0], chips[0].h);
	/* Jammed: Y's SEND waits for room. */
	assert_int_equal(wait_cqe(chips[0].h, 2, ys_slot, 100), 0xffff);
	fw_harness_advance_ms(chips[1].h, COLL_TIMEOUT_MS);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_dropped, 64);
	assert_int_equal(fw_harness_comm_status(chips[1].h, CTX, COMM),
			 NNP_STATUS_NO_RESOURCES);
	assert_int_equal(fw_harness_comm_status(chips[1].h, CTX, COMM + 2),
			 NNP_STATUS_NO_RESOURCES);
	assert_int_equal(wait_cqe(chips[0].h, 2, ys_slot, 5000),
			 NNP_STATUS_SUCCESS);
	yr_slot = fw_harness_post(chips[1].h, 2, yr);
	pool_start(&pools[1], chips[1].h);
	assert_int_equal(wait_cqe(chips[1].h, 2, yr_slot, 5000),
			 NNP_STATUS_SUCCESS);
	assert_memory_equal(dst, src, Y_BYTES);
	pool_stop(&pools[0]);
	pool_stop(&pools[1]);
	assert_int_equal(held(chips[1].h, 1), 0);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_dropped, 64);
	assert_int_equal(fw_harness_comm_status(chips[1].h, CTX_B, COMM + 1), 0);
	pair_down();
}

/* What a context's communicator has queued goes with the context. */
static void test_context_destroy_and_reset_free_packets(void **state)
{
	struct nnp_hw_queue_cmd send = {
		.opcode = NNP_CMD_SEND, .len = 100, .value = NNP_P2P_VALUE(COMM, 0),
	};
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_CTX_DESTROY };
	unsigned int i;

	(void)state;
	pair_up();
	send.src_key = fw_harness_dev_key(chips[0].h, CTX, 0, 4096, NNP_KEY_READ);
	for (i = 0; i < 3; i++) {
		fw_chip_start(&chips[0], send);
		fw_chip_join(&chips[0]);
		assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	}
	assert_int_equal(held(chips[1].h, 1), 3);
	d.args[0] = CTX;
	assert_int_equal(fw_harness_admin(chips[1].h, d, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(held(chips[1].h, 1), 0);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_held_bytes, 0);

	/*
	 * Chip 0 heard chip 1 leave (hw 1.20): its SENDs there would end
	 * PEER_LEFT. Made again, its communicator sends; no communicator
	 * takes them now (nor the leave chip 0 sent as it made it again),
	 * and a reset drops them all the same.
	 */
	d.opcode = NNP_ADMIN_COMM_DESTROY;
	d.args[1] = COMM;
	assert_int_equal(fw_harness_admin(chips[0].h, d, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(fw_harness_comm_pair(chips[0].h, CTX, COMM, 0, EPOCH),
			 NNP_STATUS_SUCCESS);
	for (i = 0; i < 2; i++) {
		fw_chip_start(&chips[0], send);
		fw_chip_join(&chips[0]);
	}
	assert_int_equal(held(chips[1].h, 1), 3);
	nnp_fw_reset(chips[1].h->fw);
	nnp_fw_run(chips[1].h->fw);
	assert_int_equal(held(chips[1].h, 1), 0);
	pair_down();
}

/* ---- teardown while a peer keeps a RECV going ---- */

#define FEED_CHUNKS	40

struct feeder {
	struct fw_harness *h;
	atomic_bool stop;
	thrd_t t;
};

/*
 * One chunk of the RECV's message every 50 ms, on remote port 2: all but
 * its last, so that only the teardown ends it.
 */
static int feed_main(void *arg)
{
	static uint8_t chunk[CHUNK];
	struct feeder *f = arg;
	unsigned int i;

	for (i = 0; i < FEED_CHUNKS && !atomic_load(&f->stop); i++) {
		nnp_fw_icl_deliver(f->h->fw, 2, EPOCH, nnp_fw_seq(0, true), false, 0,
				   chunk, CHUNK);
		nap_ms(50);
	}
	return 0;
}

static void teardown_case(uint8_t opcode)
{
	struct nnp_hw_admin_cmd a = { .opcode = opcode };
	struct fw_harness *b;
	struct feeder feed;
	struct pool pool;
	uint32_t key;

	pair_up();
	b = chips[1].h;
	assert_int_equal(nnp_fw_link_attach_remote(b->fw, 2, 9, 0), 0);
	nnp_fw_link_set(b->fw, 2, true);
	key = fw_harness_dev_key(b, CTX, 0, (FEED_CHUNKS + 1) * CHUNK,
				 NNP_KEY_WRITE);
	fw_harness_post(b, 0, recv_cmd(key, (FEED_CHUNKS + 1) * CHUNK, 2));
	pool_start(&pool, b);
	feed.h = b;
	atomic_store(&feed.stop, false);
	assert_int_equal(thrd_create(&feed.t, feed_main, &feed), thrd_success);
	nap_ms(300);
	fw_harness_wait_parked(b, 1);

	a.args[0] = CTX;
	a.args[1] = opcode == NNP_ADMIN_KEY_UNREGISTER ? key : 0;
	assert_int_equal(fw_harness_admin(b, a, NULL), NNP_STATUS_SUCCESS);
	/* Ended by the time the admin command returns, not waited for. */
	assert_int_equal(wait_cqe(b, 0, 0, 0), NNP_STATUS_ABORTED);
	atomic_store(&feed.stop, true);
	thrd_join(feed.t, NULL);
	pool_stop(&pool);
	pair_down();
}

static void test_queue_destroy_aborts_recv(void **state)
{
	(void)state;
	teardown_case(NNP_ADMIN_QUEUE_DESTROY);
}

static void test_queue_reset_aborts_recv(void **state)
{
	(void)state;
	teardown_case(NNP_ADMIN_QUEUE_RESET);
}

static void test_ctx_destroy_aborts_recv(void **state)
{
	(void)state;
	teardown_case(NNP_ADMIN_CTX_DESTROY);
}

static void test_key_unregister_aborts_recv(void **state)
{
	(void)state;
	teardown_case(NNP_ADMIN_KEY_UNREGISTER);
}

/* ---- epochs ---- */

static void test_epoch_is_one_communicator_per_chip(void **state)
{
	struct fw_harness *b;

	(void)state;
	pair_up();
	b = chips[1].h;
	fw_harness_ctx_create(b, CTX_B);
	/* Another context may not join the job by naming its epoch. */
	assert_int_equal(fw_harness_comm_pair(b, CTX_B, COMM + 1, 1, EPOCH), NNP_STATUS_BUSY);
	/* All 64 bits name it: the same low word is another epoch. */
	assert_int_equal(fw_harness_comm_pair(b, CTX_B, COMM + 1, 1, EPOCH ^ (1ull << 40)),
			 NNP_STATUS_SUCCESS);
	pair_down();
}

/*
 * A receiver takes a packet only from its communicator (all 64 bits of
 * the epoch) and only from the port that communicator receives on.
 */
static void test_packets_checked_against_receiver(void **state)
{
	struct nnp_hw_queue_cmd ar = {
		.opcode = NNP_CMD_ALLREDUCE, .len = 4,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
	uint32_t data[4] = { 1, 2, 3, 4 };
	uint8_t *big = calloc(1, NNP_FW_ICL_MAX_PACKET);
	/* Chip 1's ring of 2: to chip 0 on port 0, from it on port 1. */
	const struct nnp_fw_topology ring = {
		.algo = NNP_FW_ALGO_RING,
		.dim[0] = { .n = 2, .pos = 1, .pairs = 1, .next_port = { 0 },
			    .prev_port = { 1 } },
	};
	struct nnp_hw_port_info p[4];
	struct fw_harness *b;
	unsigned int i;
	uint32_t key;

	(void)state;
	assert_non_null(big);
	pair_up();
	b = chips[1].h;
	assert_int_equal(nnp_fw_link_attach_remote(b->fw, 2, 9, 0), 0);
	nnp_fw_link_set(b->fw, 2, true);
	/*
	 * Collective 0's packet, right epoch, on a port off the ring: kept
	 * while the communicator's topology is not given (a peer's lane may
	 * use any port), dropped once it is and names no such port, and
	 * dropped and counted on arrival then.
	 */
	assert_int_equal(nnp_fw_icl_deliver(b->fw, 2, EPOCH, 0, false, 0, data, 8), 0);
	assert_int_equal(held(b, 2), 1);
	assert_int_equal(nnp_fw_comm_set_topology(b->fw, CTX, COMM, &ring), 0);
	assert_int_equal(held(b, 2), 0);
	assert_int_equal(nnp_fw_icl_deliver(b->fw, 2, EPOCH, 0, false, 0, data, 8), -1);
	fw_harness_ports(b, p);
	assert_int_equal(p[2].errors, 1);
	assert_int_equal(p[2].rx_packets, 1);
	assert_int_equal(held(b, 2), 0);
	assert_int_equal(fw_harness_counters(b).icl_dropped, 1);

	/*
	 * A peer's backward lane reaches this chip on its ring's send port,
	 * before this chip has its communicator: kept when it is made, and
	 * when its topology (the same ring) is given.
	 */
	nnp_fw_icl_send(chips[0].h->fw, NULL, 1, EPOCH + 1, 3, false, data, 8);
	assert_int_equal(held(b, 0), 1);
	assert_int_equal(fw_harness_comm_pair(b, CTX, COMM + 1, 1, EPOCH + 1),
			 NNP_STATUS_SUCCESS);
	assert_int_equal(held(b, 0), 1);
	assert_int_equal(nnp_fw_comm_set_topology(b->fw, CTX, COMM + 1, &ring), 0);
	assert_int_equal(held(b, 0), 1);

	/*
	 * A packet of another epoch with the same low word, queued on the
	 * ring's port: the allreduce does not take it, and times out.
	 */
	key = fw_harness_dev_key(b, CTX, 0, 4096, NNP_KEY_READ | NNP_KEY_WRITE);
	ar.src_key = ar.dst_key = key;
	nnp_fw_icl_send(chips[0].h->fw, NULL, 0, EPOCH ^ (1ull << 40), 0, false,
			data, 8);
	assert_int_equal(held(b, 1), 1);
	fw_chip_start(&chips[1], ar);
	fw_chips_wait_parked(&chips[1], 1);
	fw_harness_advance_ms(b, COLL_TIMEOUT_MS);
	fw_chip_join(&chips[1]);
	assert_true(chips[1].status == NNP_STATUS_PEER_TIMEOUT);
	/*
	 * Unclaimed past a timeout, it keeps its room while no arrival needs
	 * it, the firmware's timed work too while the port has room: three
	 * packets of 1 MiB (of two jobs, within each one's share) fit beside
	 * it, the fourth drops it (its job's: the 8 bytes of another epoch
	 * stay) and fits.
	 */
	nnp_fw_run(b->fw);
	assert_int_equal(held(b, 1), 1);
	nnp_fw_icl_send(chips[0].h->fw, NULL, 0, EPOCH ^ (1ull << 41), 1, false,
			data, 8);
	for (i = 0; i < 3; i++)
		nnp_fw_icl_send(chips[0].h->fw, NULL, 0,
				EPOCH ^ (1ull << (42 + i / 2)), 2 + i, false, big,
				NNP_FW_ICL_MAX_PACKET);
	assert_int_equal(held(b, 1), 5);
	assert_int_equal(b->fw->ports[1].dropped, 0);
	nnp_fw_icl_send(chips[0].h->fw, NULL, 0, EPOCH ^ (1ull << 43), 5, false,
			big, NNP_FW_ICL_MAX_PACKET - 8);
	assert_int_equal(held(b, 1), 5);
	assert_int_equal(fw_harness_counters(b).icl_dropped, 2);
	/* That job lost a packet here: its later ones are dropped on arrival. */
	nnp_fw_icl_send(chips[0].h->fw, NULL, 0, EPOCH ^ (1ull << 40), 6, false,
			data, 8);
	assert_int_equal(held(b, 1), 5);
	assert_int_equal(fw_harness_counters(b).icl_dropped, 3);
	free(big);
	pair_down();
}

/* ---- host page lists ---- */

/* Host keys of 256 Ki pages (1 GiB, a 2 MiB list) until the chip says no. */
static void test_host_page_lists_are_bounded(void **state)
{
	struct fw_harness *h = *state;
	const uint32_t npages = 1u << 18, list = HOST_MEM_BASE + 0x100000;
	struct nnp_hw_key_args a = {
		.ctx = CTX, .type = NNP_KEY_TYPE_HOST, .rights = NNP_KEY_READ,
		.length = (uint64_t)npages * NNP_HW_PAGE_SIZE,
	};
	struct nnp_hw_admin_cmd u = { .opcode = NNP_ADMIN_KEY_UNREGISTER };
	uint64_t *pages = fw_harness_host_ptr(h, list);
	uint32_t key = 0, first = 0, i;
	uint16_t st = NNP_STATUS_SUCCESS;

	fw_harness_ctx_create(h, CTX);
	for (i = 0; i < npages; i++)
		pages[i] = HOST_MEM_BASE;
	for (i = 0; i < 64 && !st; i++) {
		st = fw_harness_key_register(h, a, list, npages * 8, &key);
		if (!i)
			first = key;
	}
	print_message("  registered %u keys of %u pages, then 0x%x\n", i - 1,
		      npages, st);
	assert_int_equal(st, NNP_STATUS_NO_RESOURCES);
	assert_int_equal(i - 1, NNP_HW_MAX_KEY_PAGES / npages);
	/* Unregistering gives the pages back. */
	u.args[0] = CTX;
	u.args[1] = first;
	assert_int_equal(fw_harness_admin(h, u, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(fw_harness_key_register(h, a, list, npages * 8, &key),
			 NNP_STATUS_SUCCESS);
}

/* The wait is measured on the host's monotonic clock (now_ns). */
static void test_recv_timeout_follows_host_clock(void **state)
{
	struct fw_harness *b;
	struct timespec t0;
	uint32_t key;

	(void)state;
	pair_up();
	b = chips[1].h;
	b->real_clock = false;
	key = fw_harness_dev_key(b, CTX, 0, 4096, NNP_KEY_WRITE);
	fw_harness_post(b, 0, recv_cmd(key, 64, 1));
	/*
	 * The worker gives its thread up rather than wait on the wall clock:
	 * half the timeout, a bound no busy machine misses.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nnp_fw_run_queues(b->fw);
	assert_true(ms_since(&t0) < COLL_TIMEOUT_MS / 2);
	b->now_ns += (COLL_TIMEOUT_MS - 1) * 1000000ull;
	nnp_fw_run_queues(b->fw);
	assert_int_equal(wait_cqe(b, 0, 0, 0), 0xffff);
	b->now_ns += 1000000ull;
	nnp_fw_run_queues(b->fw);
	assert_int_equal(wait_cqe(b, 0, 0, 0), NNP_STATUS_PEER_TIMEOUT);
	pair_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recvs_do_not_starve_other_contexts),
		cmocka_unit_test(test_sends_to_idle_peer_are_bounded),
		cmocka_unit_test(test_one_communicator_leaves_others_room),
		cmocka_unit_test(test_idle_communicators_lose_room_to_others),
		cmocka_unit_test(test_context_destroy_and_reset_free_packets),
		cmocka_unit_test(test_queue_destroy_aborts_recv),
		cmocka_unit_test(test_queue_reset_aborts_recv),
		cmocka_unit_test(test_ctx_destroy_aborts_recv),
		cmocka_unit_test(test_key_unregister_aborts_recv),
		cmocka_unit_test(test_epoch_is_one_communicator_per_chip),
		cmocka_unit_test(test_packets_checked_against_receiver),
		cmocka_unit_test_setup_teardown(test_host_page_lists_are_bounded,
						fw_harness_setup_aq,
						fw_harness_teardown),
		cmocka_unit_test(test_recv_timeout_follows_host_clock),
	};

	return cmocka_run_group_tests_name("fw_links", tests, NULL, NULL);
}
