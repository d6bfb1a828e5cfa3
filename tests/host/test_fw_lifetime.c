// SPDX-License-Identifier: MIT
/*
 * Lifetime of in-process links: a chip destroyed (QEMU's device_del) while
 * its fabric peer is sending to it. The sender must never touch the freed
 * chip: every send either lands before the chip goes or fails with
 * LINK_DOWN, and the peer's port is left unwired. Built with AddressSanitizer
 * (see the Makefile), so a use after free aborts the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include <cmocka.h>

#include "fw_harness.h"
#include "fw_control.h"

#define ROUNDS		50
#define PACKET		(64u << 10)	/* a collective's chunk */
#define SENT_BEFORE	16		/* packets landed before the destroy */

static uint8_t payload[PACKET];

struct sender {
	struct nnp_fw *fw;
	atomic_uint sent;
	uint16_t last;		/* the status that ended the loop */
};

/*
 * Send on port 0 until the link is gone. A full receiver (the port's
 * bound) refuses a packet without waiting here (no command to park): try
 * again, which still reaches into the peer every time.
 */
static int send_loop(void *arg)
{
	struct sender *s = arg;
	uint16_t st;

	do {
		st = nnp_fw_icl_send(s->fw, NULL, 0, 1, s->sent, false, payload,
				     PACKET);
		if (st == NNP_STATUS_SUCCESS)
			atomic_fetch_add(&s->sent, 1);
	} while (st == NNP_STATUS_SUCCESS || st == NNP_STATUS_NO_RESOURCES);
	s->last = st;
	return 0;
}

/* Chip 0 (*state) sends to chip 1 on port 0 while chip 1 is destroyed. */
static void test_destroy_while_peer_sends(void **state)
{
	struct fw_harness *a = *state;
	unsigned int round;

	for (round = 0; round < ROUNDS; round++) {
		struct sender s = { .fw = a->fw };
		struct nnp_hw_port_info info[4];
		void *b;
		thrd_t t;

		fw_harness_setup_chip(&b, 1);
		assert_int_equal(nnp_fw_link_connect(a->fw, 0,
						     ((struct fw_harness *)b)->fw,
						     1), 0);
		assert_int_equal(thrd_create(&t, send_loop, &s), thrd_success);
		while (atomic_load(&s.sent) < SENT_BEFORE)
			thrd_yield();
		fw_harness_teardown(&b);
		assert_int_equal(thrd_join(t, NULL), thrd_success);

		assert_int_equal(s.last, NNP_STATUS_LINK_DOWN);
		fw_harness_ports(a, info);
		assert_int_equal(info[0].state, 0);	/* unwired */
		assert_int_equal(info[0].peer, 0);
	}
}

static int setup_chip0(void **state)
{
	fw_harness_setup_chip(state, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_destroy_while_peer_sends,
						setup_chip0, fw_harness_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
