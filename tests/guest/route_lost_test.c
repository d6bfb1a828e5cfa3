// SPDX-License-Identifier: MIT
/*
 * A link on a routed message's path lost before the message is sent
 * (hardware 1.23), run by tests/vm/route_lost.sh, which sets each link
 * change this program asks for ("LINK nnpN down|up PORT") from the QEMU
 * monitor. On a ring of 4, rank 2 waits in a routed receive from rank 0,
 * two hops away; the first link of that path goes down while rank 0 and
 * the chip between are idle. The receive ends at once, not at the
 * communicator's 60 s timeout, and every rank's communicator is failed,
 * nnp_get_last_error() after nnp_comm_get_async_error() saying why
 * (link_down at the link, aborted elsewhere), and logging that once per
 * communicator however often it is asked; with the link back, a new
 * communicator's allreduce is exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "ring_ranks.h"

#define COUNT	1024
#define BOUND_S	10.0	/* well under the 60 s timeout */
/* Where this process's libnnp writes its WARN lines (NNP_DEBUG_FILE). */
static char log_path[64];

/* The lines of this process's libnnp log that hold @text. */
static int log_lines_with(const char *text)
{
	char line[1024];
	int n = 0;
	FILE *f;

	f = fopen(log_path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, text) != NULL;
	fclose(f);
	return n;
}

/* Ask the host for a link change (tests/vm/route_lost.sh). */
static void link_set(int chip, bool up, unsigned int port)
{
	printf("LINK nnp%d %s %u\n", chip, up ? "up" : "down", port);
	fflush(stdout);
}

FIXTURE(ring) {
	struct ring_ranks rr;
};

FIXTURE_SETUP(ring)
{
	setenv("NNP_COLL_TIMEOUT_S", "60", 1);
	setenv("NNP_DEBUG", "WARN", 1);
	snprintf(log_path, sizeof(log_path), "/tmp/route_lost.%d.log", (int)getpid());
	setenv("NNP_DEBUG_FILE", log_path, 1);
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_open(&self->rr, GUEST_CHIPS, COUNT));
	ASSERT_EQ(4, self->rr.n);
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, self->rr.n,
						 self->rr.comm));
}

FIXTURE_TEARDOWN(ring)
{
	ring_ranks_close(&self->rr);
}

TEST_F_TIMEOUT(ring, receive_ends_when_its_path_breaks, 120)
{
	struct nnp_stream_error e = { .size = sizeof(e) };
	nnp_event_t waiting = NNP_EVENT_INIT;
	int path[4], hops, r, failed = 0;
	unsigned int port;
	nnp_result_t res;
	double start;

	ASSERT_EQ(NNP_SUCCESS, nnp_topo_route(0, 2, path, 4, &hops));
	ASSERT_EQ(2, hops);
	/* fabric=ring: chip i's port 0 goes to chip i + 1's port 1. */
	port = path[0] == 1 ? 0 : 1;
	ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->rr.buf[2], 0, COUNT, NNP_FLOAT32, 0,
					self->rr.comm[2], self->rr.s[2]));
	/* Let it reach the device and wait there. */
	usleep(300000);
	ASSERT_EQ(NNP_SUCCESS, nnp_event_record(self->rr.s[2], &waiting));
	ASSERT_EQ(NNP_ERROR_NOT_READY, nnp_event_query(&waiting));
	start = now_s();
	link_set(0, false, port);
	res = nnp_stream_synchronize(self->rr.s[2]);
	TH_LOG("the receive ended %.2f s after the link went down (path 0-%d-2)",
	       now_s() - start, path[0]);
	EXPECT_LT(now_s() - start, BOUND_S);
	ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, res);
	ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->rr.s[2], &e));
	/* Ended by the abort of a chip at the link (PEER_TIMEOUT is 0x14). */
	EXPECT_EQ(0x15, e.status);
	/* Every rank's communicator has failed, the idle ones too. */
	while (failed < self->rr.n && now_s() - start < BOUND_S) {
		failed = 0;
		for (r = 0; r < self->rr.n; r++) {
			ASSERT_EQ(NNP_SUCCESS,
				  nnp_comm_get_async_error(self->rr.comm[r], &res));
			failed += res == NNP_ERROR_COMM_FAILED;
		}
		usleep(10000);
	}
	EXPECT_EQ(self->rr.n, failed);
	/* Each says why: the ranks at the link its loss, the others the abort. */
	for (r = 0; r < self->rr.n; r++) {
		bool at_link = r == 0 || r == path[0];

		ASSERT_EQ(NNP_SUCCESS, nnp_comm_get_async_error(self->rr.comm[r], &res));
		EXPECT_NE(NULL, strstr(nnp_get_last_error(), at_link ?
				       "the communicator failed: link_down (an inter-chip link the collective needs is down, status 0x13)" :
				       "the communicator failed: aborted (another rank's part of the collective failed, status 0x15)"))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
	}
	/* Asked at least twice each (a watchdog polls), logged once each. */
	EXPECT_EQ(self->rr.n, log_lines_with("the communicator failed: "));
	link_set(0, true, port);
	start = now_s();
	while (!ring_links_up(self->rr.dev, self->rr.n) && now_s() - start < 30)
		usleep(20000);
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_restart(&self->rr, -1));
	for (r = 0; r < self->rr.n; r++)
		EXPECT_EQ(0, ring_rank_errors(&self->rr, r)) TH_LOG("rank %d", r);
}

TEST_HARNESS_MAIN
