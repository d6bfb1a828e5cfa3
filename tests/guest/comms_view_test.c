// SPDX-License-Identifier: MIT
/*
 * The view of every communicator (DRM_NNP_QUERY_COMMS, nnp_device_get_comms(),
 * nnptool comms), driven with tests/vm/comms_view.sh: two chips in a
 * ring, one communicator over both (all_devices.h).
 *
 * late_rank_named: both ranks run one allreduce; then rank 0 calls a
 * second (f32 max of COUNT) and rank 1 does not. Rank 0's communicator
 * says: this process and its command, rank 0 of 2, its epoch the same as
 * rank 1's, collective 2 started and 1 done, COUNT x 4 bytes moved, the
 * allreduce in flight (f32, max, COUNT, no root), waiting on the port
 * wired to chip 1 for rank 1, for between 0.3 and 60 s. Rank 1's: 1 of 1
 * done, nothing in flight. `nnptool comms` prints the row with
 * "allreduce f32 max x1024" and "rank 1 on port P", and its JSON the
 * same. Once rank 1 calls, both say 2 of 2 done and nothing in flight.
 *
 * others_only_counted: root sees this process's communicator; a
 * process of user 65534 (the device nodes opened to all for it) sees
 * none, only counts it in hidden, and nnptool comms run as that user
 * says so.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "all_devices.h"
#include "guest_env.h"
#include "kselftest_harness.h"

#define COUNT		1024

FIXTURE(cv) {
	struct all_devices d;
};

FIXTURE_SETUP(cv)
{
	const char *why = all_devices_open(&self->d, COUNT * sizeof(float));

	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(cv)
{
	all_devices_close(&self->d);
}

/* Allreduce f32 max of COUNT on rank @r's stream. */
static int allreduce(struct all_devices *d, int r)
{
	return nnp_allreduce(d->a[r], 0, d->b[r], 0, COUNT, NNP_FLOAT32,
			     NNP_MAX, d->comm[r], d->s[r]);
}

/* The state of @d's rank @r's communicator, as its device lists it. */
static int state_of(struct all_devices *d, int r, struct nnp_comm_state *out)
{
	struct nnp_comm_state s[DRM_NNP_MAX_COMMS] = { { .size = sizeof(s[0]) } };
	unsigned int n = 0, i;

	if (nnp_device_get_comms(d->dev[r], s, DRM_NNP_MAX_COMMS, &n, NULL))
		return -1;
	for (i = 0; i < n; i++)
		if (s[i].comm_id == nnp_comm_id(d->comm[r])) {
			*out = s[i];
			return 0;
		}
	return -1;
}

/* Whether chip 0's @port is wired to chip 1. */
static bool port_to_chip1(struct all_devices *d, uint32_t port)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
	struct nnp_device_info info = { .size = sizeof(info) };
	unsigned int n = 0;

	return !nnp_device_get_info(d->dev[1], &info) &&
	       !nnp_device_get_ports(d->dev[0], p, NNP_MAX_PORTS, &n) &&
	       port < n && (p[port].state & NNP_LINK_WIRED) &&
	       p[port].peer_chip == info.chip_id;
}

/* Every device node's mode set to @mode; their modes before into @old. */
static void nodes_mode(int n, const mode_t *mode, mode_t *old)
{
	char path[32];
	struct stat st;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/dev/accel/accel%d", i);
		if (old && !stat(path, &st))
			old[i] = st.st_mode & 07777;
		chmod(path, mode[i]);
	}
}

TEST_F_TIMEOUT(cv, late_rank_named, 120)
{
	struct nnp_comm_state s0, s1;
	char row[64], json[96];
	int r;

	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, allreduce(&self->d, r));
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, nnp_stream_synchronize(self->d.s[r]));
	ASSERT_EQ(0, allreduce(&self->d, 0));
	usleep(500 * 1000);

	ASSERT_EQ(0, state_of(&self->d, 0, &s0));
	ASSERT_EQ(0, state_of(&self->d, 1, &s1));
	EXPECT_EQ((uint32_t)getpid(), s0.pid);
	EXPECT_STREQ("comms_view_test", s0.task);
	EXPECT_EQ(getuid(), s0.uid);
	EXPECT_EQ(0, s0.rank);
	EXPECT_EQ(2, s0.nranks);
	ASSERT_TRUE(s0.known);
	EXPECT_NE(0, s0.epoch);
	EXPECT_EQ(s1.epoch, s0.epoch);
	EXPECT_EQ(NULL, s0.failed);
	EXPECT_EQ(2, s0.calls);
	EXPECT_EQ(1, s0.calls_done);
	EXPECT_EQ(0, s0.messages);
	EXPECT_EQ(COUNT * sizeof(float), s0.bytes);
	ASSERT_NE(NULL, s0.op);
	EXPECT_STREQ("allreduce", s0.op);
	EXPECT_STREQ("f32", s0.dtype);
	EXPECT_STREQ("max", s0.redop);
	EXPECT_EQ(COUNT, s0.count);
	EXPECT_EQ(NNP_COMM_STATE_NONE, s0.peer);
	EXPECT_TRUE(port_to_chip1(&self->d, s0.wait_port));
	EXPECT_EQ(1, s0.wait_rank);
	EXPECT_LE(300ull * 1000 * 1000, s0.wait_ns);
	EXPECT_GT(60ull * 1000 * 1000 * 1000, s0.wait_ns);
	/* The late rank: one started, one done, nothing in flight. */
	EXPECT_EQ(1, s1.rank);
	EXPECT_EQ(1, s1.calls);
	EXPECT_EQ(1, s1.calls_done);
	EXPECT_EQ(NULL, s1.op);
	EXPECT_EQ(NNP_COMM_STATE_NONE, s1.wait_port);
	EXPECT_EQ(NNP_COMM_STATE_NONE, s1.wait_rank);

	snprintf(row, sizeof(row), "0   %7d comms_view_test %4d ", getpid(),
		 s0.comm_id);
	snprintf(json, sizeof(json), " on port %u for ", s0.wait_port);
	EXPECT_TRUE(guest_output_has("nnptool comms", row,
				     " 1/2       ok           allreduce f32 max x1024 "));
	EXPECT_TRUE(guest_output_has("nnptool comms", row, json));
	snprintf(json, sizeof(json),
		 "\"op\": \"allreduce\", \"dtype\": \"f32\", \"redop\": \"max\", \"count\": %d, \"peer\": null, \"wait_port\": %u,",
		 COUNT, s0.wait_port);
	EXPECT_TRUE(guest_output_has("nnptool comms --json", "{", json));

	ASSERT_EQ(0, allreduce(&self->d, 1));
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, nnp_stream_synchronize(self->d.s[r]));
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(0, state_of(&self->d, r, &s0));
		EXPECT_EQ(2, s0.calls);
		EXPECT_EQ(2, s0.calls_done);
		EXPECT_EQ(2 * COUNT * sizeof(float), s0.bytes);
		EXPECT_EQ(NULL, s0.op);
		EXPECT_EQ(NNP_COMM_STATE_NONE, s0.wait_port);
	}
}

TEST_F(cv, others_only_counted)
{
	struct nnp_comm_state s[DRM_NNP_MAX_COMMS] = { { .size = sizeof(s[0]) } };
	const mode_t all[MAXDEV] = { 0666, 0666, 0666, 0666, 0666, 0666, 0666, 0666 };
	unsigned int n = 99, hidden = 99;
	mode_t old[MAXDEV];
	int status;
	pid_t pid;

	ASSERT_EQ(0, nnp_device_get_comms(self->d.dev[0], s, DRM_NNP_MAX_COMMS,
					  &n, &hidden));
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, hidden);
	nodes_mode(self->d.n, all, old);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		nnp_device_t *dev;

		/* Exit codes: 1 setup, 2 saw ours, 3 not counted. */
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) || nnp_device_open(0, &dev) ||
		    nnp_device_get_comms(dev, s, DRM_NNP_MAX_COMMS, &n, &hidden))
			_exit(1);
		_exit(n ? 2 : hidden != 1 ? 3 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(guest_output_has(
		"/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups nnptool comms",
		"2 communicators of other users not shown", ""));
	nodes_mode(self->d.n, old, NULL);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
