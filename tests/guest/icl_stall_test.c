// SPDX-License-Identifier: MIT
/*
 * A peer that stalls costs its own link, not the device (run by
 * tests/vm/icl_socket_stall.sh, with port 0 of this VM's only chip linked
 * to tests/vm/icl_peer.py). A queue destroyed while its command waits on
 * that peer is an admin command: it must complete well inside the
 * driver's admin timeout (5 s, past which the driver resets the device
 * under every user), the device is not reset, and the link goes down.
 *
 *   send_to_peer_that_never_reads: a 16 MiB SEND to a peer that reads
 *     nothing; the queue is destroyed while its frame waits on the full
 *     socket.
 *   lent_chunks_never_given_back: an allreduce on a link sharing memory,
 *     whose peer never gives lent chunks back (nor sends any); the queue
 *     is destroyed while the allreduce waits.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>
#include "nnp_hw.h"

#include "guest_env.h"
#include "kselftest_harness.h"

#define PORT		0
#define BYTES		(16u << 20)
#define EPOCH		0x57a11ed0c0ffee01ull
#define BOUND_S		1.0	/* the teardown's bound; the driver's is 5 s */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Port PORT's NNP_LINK_* state, or ~0u if it cannot be read. */
static uint32_t port_state(nnp_device_t *dev)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
	unsigned int n;

	if (nnp_device_get_ports(dev, p, NNP_MAX_PORTS, &n) != NNP_SUCCESS ||
	    n <= PORT)
		return ~0u;
	return p[PORT].state;
}

/* Seconds until port PORT's state has NNP_LINK_UP as @up; -1 past @secs. */
static double link_becomes(nnp_device_t *dev, bool up, double secs)
{
	double t0 = now_s();

	while (now_s() - t0 < secs) {
		uint32_t st = port_state(dev);

		if (st != ~0u && !!(st & NNP_LINK_UP) == up)
			return now_s() - t0;
		usleep(10000);
	}
	return -1;
}

FIXTURE(stalled) {
	nnp_device_t *dev;
	uint32_t resets;
	int fd;
	uint32_t key;
	uint32_t comm;
	struct drm_nnp_queue_create qc;
	struct nnp_hw_queue_cmd *sq;
	volatile uint32_t *db;
};

/* The peer linked, a buffer, a queue, and a communicator of 2 on PORT. */
FIXTURE_SETUP(stalled)
{
	struct drm_nnp_bo_create bo = {
		.size = BYTES, .flags = DRM_NNP_BO_DEVICE,
	};
	struct drm_nnp_comm_create cc = {
		.nranks = 2, .rank = 0, .send_port = PORT, .recv_port = PORT,
		.epoch = EPOCH, .timeout_ms = 60000,
	};
	const char *reason;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &self->dev));
	ASSERT_LE(0, link_becomes(self->dev, true, 60))
		TH_LOG("port %u never came up: no peer linked", PORT);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_resets(self->dev, &self->resets,
						     &reason));
	self->fd = guest_open_fd(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &bo));
	self->key = bo.key;
	self->qc = (struct drm_nnp_queue_create){ .depth = 4 };
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &self->qc));
	self->sq = mmap(NULL, self->qc.ring_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, self->fd, self->qc.ring_mmap_offset);
	self->db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			self->fd, self->qc.doorbell_mmap_offset);
	ASSERT_NE(MAP_FAILED, self->sq);
	ASSERT_NE(MAP_FAILED, self->db);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NNP_COMM_CREATE, &cc));
	self->comm = cc.comm;
}

FIXTURE_TEARDOWN(stalled)
{
	close(self->fd);
	nnp_device_close(self->dev);
}

/* @cmd in the queue's first slot, then SQ_TAIL past it. */
static void submit(FIXTURE_DATA(stalled) *self, struct nnp_hw_queue_cmd cmd)
{
	cmd.cid = 1;
	self->sq[0] = cmd;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	self->db[NNP_DB_SQ_TAIL / 4] = 1;
}

/*
 * Destroy the queue while its command waits on the peer: within BOUND_S,
 * no reset, and the link goes down.
 */
static void destroy_within_bound(struct __test_metadata *_metadata,
				 FIXTURE_DATA(stalled) *self)
{
	struct drm_nnp_queue_op op = { .qid = self->qc.qid };
	uint32_t resets = ~0u;
	const char *reason;
	double t0, took, down;

	t0 = now_s();
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op));
	took = now_s() - t0;
	TH_LOG("QUEUE_DESTROY took %.3f s", took);
	EXPECT_LT(took, BOUND_S);
	down = link_becomes(self->dev, false, 2);
	TH_LOG("the link was down %.3f s later", down);
	EXPECT_LE(0, down);
	EXPECT_EQ(NNP_LINK_WIRED, port_state(self->dev));
	EXPECT_EQ(NNP_SUCCESS, nnp_device_get_resets(self->dev, &resets,
						     &reason));
	EXPECT_EQ(self->resets, resets);
}

/* The peer reads nothing: the SEND's frames fill the socket, then wait. */
TEST_F_TIMEOUT(stalled, send_to_peer_that_never_reads, 120)
{
	submit(self, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_SEND, .src_key = self->key, .len = BYTES,
		.value = NNP_P2P_VALUE(self->comm, PORT),
	});
	/* Long enough to fill the socket, well short of any bound. */
	usleep(100000);
	destroy_within_bound(_metadata, self);
}

/*
 * The peer takes our lent chunks and keeps them: the allreduce waits for
 * the peer's part, which never comes, and its teardown asks for the
 * chunks back.
 */
TEST_F_TIMEOUT(stalled, lent_chunks_never_given_back, 120)
{
	submit(self, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLREDUCE, .src_key = self->key,
		.dst_key = self->key, .dst_off = BYTES / 2,
		.len = BYTES / 2 / sizeof(float),
		.value = NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_SUM, self->comm, 0),
	});
	usleep(300000);
	destroy_within_bound(_metadata, self);
}

TEST_HARNESS_MAIN
