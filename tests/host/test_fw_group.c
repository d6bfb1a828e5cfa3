// SPDX-License-Identifier: MIT
/*
 * Firmware simulator groups (v1.13): a GROUP command runs the SENDs and
 * RECVs (v1.14: and ring collectives) after it together, on a ring of 4 in-process chips.
 *
 * In detail (docs/testing.md has the summary): a ring of messages whose
 * RECV each chip posts before its SEND completes byte for byte in a
 * group, where the same commands one after another end PEER_TIMEOUT; a
 * group of routed messages to and from every rank, receives first, with
 * every completion in ring order and its own id; a GROUP waits, without
 * failing, for members not yet in the ring and for room for its
 * completions in the CQ, and goes on when they come; bad groups are
 * refused INVALID_FIELD, and a member that had taken its label tells its
 * peer at once (ABORTED, not PEER_TIMEOUT); a member that fails ends the
 * group with its status and the others ABORTED; COMM_DESTROY ends a
 * group waiting on the communicator ABORTED. Since v1.14 ring
 * collectives are members too: a group of six small allreduces and a
 * broadcast is exact on every chip, each member completing with its own
 * id after the GROUP, in a third of the modeled time the same commands
 * take one after another, and the same group run 40 times with each chip
 * on a thread of its own, where a member's packets come before a later
 * member starts (which once dropped them as a failed collective's
 * leftovers); an ALLTOALL is no member.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"

static struct nnp_hw_queue_cmd group(uint64_t members, uint16_t cid)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_GROUP, .len = members, .cid = cid,
	};
}

/* SEND (out of port 0, to the next chip) or RECV (port 1, from the one before). */
static struct nnp_hw_queue_cmd direct(uint8_t opcode, uint32_t key,
				      uint64_t off, uint64_t len, uint16_t cid)
{
	struct nnp_hw_queue_cmd c = p2p_cmd(opcode, key, off, len,
					    NNP_P2P_VALUE(COMM, opcode == NNP_CMD_SEND ? 0 : 1));

	c.cid = cid;
	return c;
}

/* Whether completion @slot of chip @i came (its first pass over the CQ). */
static bool completed(uint32_t i, uint32_t slot)
{
	return cqe(i, slot)->phase & NNP_CQE_PHASE;
}

/*
 * Each chip receives from the one before it, then sends to the next: one
 * after another, every RECV waits for a SEND queued behind another RECV;
 * in a group, every message arrives.
 */
static void test_ring_posted_in_reverse(void **state)
{
	const uint64_t len = 200000;
	uint32_t i;

	(void)state;
	ring_up(ALL);
	for (i = 0; i < N; i++) {
		struct nnp_hw_queue_cmd c[] = {
			direct(NNP_CMD_RECV, keys[i], DST, len, 1),
			direct(NNP_CMD_SEND, keys[i], SRC, len, 2),
		};

		post_watching(i, c, 2, 0);
	}
	fw_chips_time_out(chips, N);
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++)
		assert_int_equal(chips[i].status, NNP_STATUS_PEER_TIMEOUT);
	ring_down();

	ring_up(ALL);
	for (i = 0; i < N; i++) {
		struct nnp_hw_queue_cmd c[] = {
			group(2, 10),
			direct(NNP_CMD_RECV, keys[i], DST, len, 11),
			direct(NNP_CMD_SEND, keys[i], SRC, len, 12),
		};

		pattern(i, SRC, len, i + 1);
		memset(chips[i].h->dev_mem + DST, 0xee, len + 8);
		post_watching(i, c, 3, 2);
	}
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++) {
		uint32_t s;

		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		for (s = 0; s < 3; s++) {
			assert_int_equal(cqe(i, s)->status, NNP_STATUS_SUCCESS);
			assert_int_equal(cqe(i, s)->cid, 10 + s);
			assert_int_equal(cqe(i, s)->sq_head, s + 1);
		}
		assert_memory_equal(chips[i].h->dev_mem + DST,
				    chips[(i + N - 1) % N].h->dev_mem + SRC, len);
		assert_int_equal(chips[i].h->dev_mem[DST + len], 0xee);
	}
	assert_int_equal(fw_harness_counters(chips[0].h).cmds_completed, 3);
	ring_down();
}

/* Where rank @from's message to rank @to is read and written. */
static uint64_t pair_off(uint32_t from, uint32_t to)
{
	return (from * MAXR + to) * 0x10000;
}

static uint64_t pair_len(uint32_t from, uint32_t to)
{
	return 30000 + 1000 * from + 100 * to;
}

/*
 * Chip @i's group of routed messages with every other rank, receives
 * first (the farthest first), then sends: 2 (N - 1) members, ids from
 * 100.
 */
static void post_every_pair(uint32_t i)
{
	struct nnp_hw_queue_cmd c[2 * MAXR - 1];
	uint32_t d, n = 0;

	c[n++] = group(2 * (N - 1), 100);
	for (d = N - 1; d >= 1; d--) {
		uint32_t from = (i + d) % N;

		c[n] = routed(NNP_CMD_RECV, keys[i], DST + pair_off(from, i),
			      pair_len(from, i), from);
		c[n].cid = 100 + n;
		n++;
	}
	for (d = 1; d < N; d++) {
		uint32_t to = (i + d) % N;

		pattern(i, SRC + pair_off(i, to), pair_len(i, to), i * 8 + to);
		c[n] = routed(NNP_CMD_SEND, keys[i], SRC + pair_off(i, to),
			      pair_len(i, to), to);
		c[n].cid = 100 + n;
		n++;
	}
	post_watching(i, c, n, n - 1);
}

/* Check chip @i's group of post_every_pair() at slot @first. */
static void check_every_pair(uint32_t i, uint32_t first)
{
	uint32_t s, p;

	assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
	for (s = 0; s < 2 * N - 1; s++) {
		assert_int_equal(cqe(i, first + s)->status, NNP_STATUS_SUCCESS);
		assert_int_equal(cqe(i, first + s)->cid, 100 + s);
	}
	for (p = 0; p < N; p++)
		if (p != i)
			assert_memory_equal(chips[i].h->dev_mem + DST + pair_off(p, i),
					    chips[p].h->dev_mem + SRC + pair_off(p, i),
					    pair_len(p, i));
}

static void test_routed_group_with_every_rank(void **state)
{
	uint32_t i;

	(void)state;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		post_every_pair(i);
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++)
		check_every_pair(i, 0);
	ring_down();
}

/*
 * A GROUP whose members are not in the ring yet waits for them; one
 * whose completions the CQ has no room for waits for CQ_HEAD. Neither
 * fails, and each goes on when what it waits for comes.
 */
static void test_group_waits_for_members_and_room(void **state)
{
	/* A CQ keeps one slot free: this many leave room for 6. */
	const uint32_t taken = H_QDEPTH - 7;
	struct nnp_hw_queue_cmd c[3];
	const uint64_t len = 5000;
	uint32_t i, k;

	(void)state;
	ring_up(ALL);
	fw_chip_post(&chips[0], group(2, 7));
	run_rounds(20);
	assert_false(completed(0, 0));
	assert_int_equal(fw_harness_counters(chips[0].h).cmds_failed, 0);
	for (i = 0; i < N; i++) {
		c[0] = group(2, 7);
		c[1] = direct(NNP_CMD_RECV, keys[i], DST, len, 8);
		c[2] = direct(NNP_CMD_SEND, keys[i], SRC, len, 9);
		pattern(i, SRC, len, 40 + i);
		if (i)
			fw_chip_post(&chips[i], c[0]);
		fw_chip_post(&chips[i], c[1]);
		fw_chip_post(&chips[i], c[2]);
	}
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++) {
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_memory_equal(chips[i].h->dev_mem + DST,
				    chips[(i + N - 1) % N].h->dev_mem + SRC, len);
	}
	ring_down();

	/* Completions nobody took: room for 6 more, the group needs 7. */
	ring_up(ALL);
	for (k = 0; k < taken; k++)
		fw_chip_post(&chips[0], (struct nnp_hw_queue_cmd){ .cid = 50 + k });
	run_rounds(2);
	assert_true(completed(0, taken - 1));
	for (i = 0; i < N; i++)
		post_every_pair(i);
	run_rounds(50);
	assert_false(completed(0, taken));
	assert_int_equal(fw_harness_counters(chips[0].h).cmds_failed, 0);
	assert_int_equal(nnp_fw_reg_write(chips[0].h->fw,
					  NNP_DOORBELL(0) + NNP_DB_CQ_HEAD, taken),
			 NNP_FW_KICK_QUEUES);
	fw_chips_run_one_thread(chips, N);
	check_every_pair(0, taken);
	for (i = 1; i < N; i++)
		check_every_pair(i, 0);
	ring_down();
}

/*
 * Chip 0 posts @cmds (a bad group): the GROUP completes @status. Chip 1
 * then receives from it: ABORTED if a member took its label (@aborted),
 * else PEER_TIMEOUT.
 */
static void refused(const struct nnp_hw_queue_cmd *cmds, uint32_t n,
		    uint16_t status, bool aborted)
{
	uint32_t i;

	ring_up(ALL);
	post_watching(0, cmds, n, 0);
	for (i = 1; i < N; i++)
		fw_chip_post(&chips[i], (struct nnp_hw_queue_cmd){ 0 });
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[0].status, status);
	assert_int_equal(cqe(0, 0)->cid, cmds[0].cid);
	assert_false(completed(0, 1));
	assert_int_equal(fw_harness_counters(chips[0].h).cmds_failed, 1);
	fw_chip_post(&chips[1], direct(NNP_CMD_RECV, keys[1], DST, 1000, 0));
	fw_chips_time_out(chips, 2);
	fw_chips_run_one_thread(chips, 2);
	assert_int_equal(chips[1].status,
			 aborted ? NNP_STATUS_ABORTED : NNP_STATUS_PEER_TIMEOUT);
	ring_down();
}

static void test_bad_groups_refused(void **state)
{
	struct nnp_hw_queue_cmd send = direct(NNP_CMD_SEND, keys[0], SRC, 1000, 2);
	struct nnp_hw_queue_cmd c[3];

	(void)state;
	/* keys[0] is the same in every ring_up(): the first key of chip 0. */
	ring_up(ALL);
	send.src_key = keys[0];
	ring_down();

	c[0] = group(0, 1);
	refused(c, 1, NNP_STATUS_INVALID_FIELD, false);
	/* A queue of 64 takes groups of at most 31. */
	c[0] = group(H_QDEPTH / 2, 1);
	refused(c, 1, NNP_STATUS_INVALID_FIELD, false);
	c[0] = group(1, 1);
	c[0].value = 1;
	c[1] = send;
	refused(c, 2, NNP_STATUS_INVALID_FIELD, false);
	/* A RECV from any source (v1.26): no member's completion says whence. */
	c[1] = p2p_cmd(NNP_CMD_RECV, keys[0], DST, 1000, NNP_P2P_ANY_VALUE(COMM));
	c[0].value = 0;
	refused(c, 2, NNP_STATUS_INVALID_FIELD, false);
	/* A COPY is no member; the SEND before it had its label. */
	c[0] = group(2, 1);
	c[1] = send;
	c[2] = (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_COPY, .src_key = keys[0], .dst_key = keys[0],
		.dst_off = DST, .len = 8,
	};
	refused(c, 3, NNP_STATUS_INVALID_FIELD, true);
	/* A GROUP is no member either, nor an exchange. */
	c[2] = group(1, 3);
	refused(c, 3, NNP_STATUS_INVALID_FIELD, true);
	c[2] = (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLTOALL, .src_key = keys[0], .dst_key = keys[0],
		.dst_off = DST, .len = 8,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, 0, COMM, 0),
	};
	refused(c, 3, NNP_STATUS_INVALID_FIELD, true);
}

/*
 * Chip 0's RECV gets a message of the wrong length while its SEND of
 * 6 MiB waits for room at chip 1: the group ends MISMATCH (v1.27),
 * naming the sender and the length that came, and chip 1's RECV of that
 * SEND ends ABORTED.
 */
static void test_member_failure_ends_the_group(void **state)
{
	const uint64_t big = 6u << 20;
	struct nnp_hw_queue_cmd c[] = {
		group(2, 20),
		direct(NNP_CMD_RECV, 0, DST, 2000, 21),
		direct(NNP_CMD_SEND, 0, SRC, big, 22),
	};
	uint32_t i;

	(void)state;
	ring_up(ALL);
	c[1].dst_key = c[2].src_key = keys[0];
	post_watching(0, c, 3, 0);
	fw_chip_post(&chips[3], direct(NNP_CMD_SEND, keys[3], SRC, 1000, 0));
	for (i = 1; i < 3; i++)
		fw_chip_post(&chips[i], (struct nnp_hw_queue_cmd){ 0 });
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[0].status, NNP_STATUS_MISMATCH);
	assert_int_equal(cqe(0, 0)->result, 1000);
	assert_int_equal(cqe(0, 0)->rsvd, NNP_MISMATCH_WHO(3, NNP_MISMATCH_LENGTH));
	assert_false(completed(0, 1));
	assert_false(completed(0, 2));
	fw_chip_post(&chips[1], direct(NNP_CMD_RECV, keys[1], 0, big, 0));
	fw_chips_run_one_thread(chips, 2);
	assert_int_equal(chips[1].status, NNP_STATUS_ABORTED);
	ring_down();
}

/* A group waiting on a communicator ends ABORTED when it is destroyed. */
static void test_comm_destroy_ends_the_group(void **state)
{
	struct nnp_hw_queue_cmd c[2];

	(void)state;
	ring_up(ALL);
	c[0] = group(1, 30);
	c[1] = direct(NNP_CMD_RECV, keys[0], DST, 1000, 31);
	post_watching(0, c, 2, 0);
	run_rounds(10);
	assert_false(completed(0, 0));
	comm_abort(0);
	fw_chips_run_one_thread(chips, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_ABORTED);
	assert_false(completed(0, 1));
	ring_down();
}

/* Members of the collectives' group, and where they read and write. */
#define SMALL		6
#define PART(j)		((uint64_t)(j) * 0x1000)
#define STAMPS		(DST + 0x100000)

/* Elements of each collective; chips on threads of their own, or one. */
static uint32_t count;
static bool threaded;

/*
 * Chip @i's collective @j: an int32 sum, the fifth a broadcast from rank
 * 2 (whose other ranks name no source).
 */
static struct nnp_hw_queue_cmd small_coll(uint32_t i, uint32_t j, uint16_t cid)
{
	bool bcast = j == 4, reads = !bcast || i == 2;

	return (struct nnp_hw_queue_cmd){
		.opcode = bcast ? NNP_CMD_BROADCAST : NNP_CMD_ALLREDUCE, .cid = cid,
		.len = count, .src_key = reads ? keys[i] : 0,
		.src_off = reads ? SRC + PART(j) : 0,
		.dst_key = keys[i], .dst_off = DST + PART(j),
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, bcast ? 2 : 0),
	};
}

static struct nnp_hw_queue_cmd stamp_at(uint32_t i, uint32_t which, uint16_t cid)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_TIMESTAMP, .cid = cid, .dst_key = keys[i],
		.dst_off = STAMPS + 8 * which,
	};
}

static int32_t small_input(uint32_t i, uint32_t j, uint32_t k)
{
	return (int32_t)(i * 100 + j * 10 + k);
}

/*
 * The SMALL collectives on every chip, in a GROUP or one after another,
 * checked on every chip; chip 0's modeled ns from before them to after.
 */
static uint64_t run_small(bool grouped)
{
	uint32_t i, j, k, n;

	ring_up(ALL);
	for (i = 0; i < N; i++) {
		struct nnp_hw_queue_cmd c[SMALL + 3];
		int32_t *in = (int32_t *)(chips[i].h->dev_mem + SRC);

		for (j = 0; j < SMALL; j++)
			for (k = 0; k < count; k++)
				in[PART(j) / 4 + k] = small_input(i, j, k);
		memset(chips[i].h->dev_mem + DST, 0xee, PART(SMALL));
		n = 0;
		c[n++] = stamp_at(i, 0, 1);
		if (grouped)
			c[n++] = group(SMALL, 2);
		for (j = 0; j < SMALL; j++)
			c[n++] = small_coll(i, j, 3 + j);
		c[n++] = stamp_at(i, 1, 20);
		post_last_watched(i, c, n, threaded);
	}
	run_chips(threaded);
	for (i = 0; i < N; i++) {
		const int32_t *out = (const int32_t *)(chips[i].h->dev_mem + DST);

		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		for (j = 0; j < SMALL; j++) {
			for (k = 0; k < count; k++) {
				int32_t want = j == 4 ? small_input(2, j, k) :
					       (int32_t)(100 * N * (N - 1) / 2) +
					       (int32_t)N * small_input(0, j, k);

				assert_int_equal(out[PART(j) / 4 + k], want);
			}
			/* Each member's own completion, in ring order. */
			assert_int_equal(cqe(i, 1 + grouped + j)->cid, 3 + j);
			assert_int_equal(cqe(i, 1 + grouped + j)->status, NNP_STATUS_SUCCESS);
		}
		assert_int_equal(out[PART(SMALL - 1) / 4 + count], (int32_t)0xeeeeeeee);
	}
	k = (uint32_t)(*(uint64_t *)(chips[0].h->dev_mem + STAMPS + 8) -
		       *(uint64_t *)(chips[0].h->dev_mem + STAMPS));
	ring_down();
	return k;
}

/*
 * Small collectives in a GROUP (v1.14) wait for their neighbours at once:
 * exact, and a third of the modeled time or less of the same commands
 * one after another.
 */
static void test_collectives_at_once(void **state)
{
	uint64_t apart, together;

	(void)state;
	count = 16;
	apart = run_small(false);
	together = run_small(true);
	print_message("modeled ns of %u collectives: %llu one after another, %llu in a group\n",
		      SMALL, (unsigned long long)apart, (unsigned long long)together);
	assert_true(together * 3 <= apart);
}

/*
 * The same group, each chip on a thread of its own, many times: a
 * member's packets may then come before a later member starts, which
 * must leave them be (one element a rank: every step a packet).
 */
static void test_collectives_at_once_on_threads(void **state)
{
	int round;

	(void)state;
	count = 4;
	threaded = true;
	for (round = 0; round < 40; round++)
		run_small(true);
	threaded = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_posted_in_reverse),
		cmocka_unit_test(test_routed_group_with_every_rank),
		cmocka_unit_test(test_group_waits_for_members_and_room),
		cmocka_unit_test(test_bad_groups_refused),
		cmocka_unit_test(test_member_failure_ends_the_group),
		cmocka_unit_test(test_comm_destroy_ends_the_group),
		cmocka_unit_test(test_collectives_at_once),
		cmocka_unit_test(test_collectives_at_once_on_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
