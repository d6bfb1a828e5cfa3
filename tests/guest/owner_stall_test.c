// SPDX-License-Identifier: MIT
/*
 * A queue its owner stalls is the owner's business. An unprivileged user
 * fills a queue's completion ring and never acknowledges it (the uapi lets
 * CQ_HEAD be written lazily), then is stopped as Ctrl-Z would stop it: the
 * device holds the next command back, and the job timeout must not take
 * that for a hung device and reset it under every other user.
 *
 * In detail (docs/testing.md has the summary):
 * as uid 65534: a queue of depth 2 with a completion left unacknowledged
 * and a second NOP held back, its owner stopped by SIGSTOP for four
 * `job_timeout_ms` of 300: no reset (count exact), root's queue on the same
 * device completes meanwhile, and once continued the held NOP is still
 * unfetched (SQ_HEAD 1) and completes as soon as CQ_HEAD moves
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnp_accel.h>
#include "nnp_hw.h"

#include "guest_env.h"
#include "kselftest_harness.h"

#define NODE		"/dev/accel/accel0"
#define PARAMS		"/sys/module/nnp/parameters/"
#define NOBODY		65534
#define JOB_MS		300

struct stalled_queue {
	int fd;
	struct drm_nnp_queue_create qc;
	struct nnp_hw_queue_cmd *sq;
	volatile struct nnp_hw_cqe *cq;
	volatile uint32_t *db;
};

static int queue_open(struct stalled_queue *q, uint32_t depth)
{
	q->fd = open(NODE, O_RDWR | O_CLOEXEC);
	if (q->fd < 0)
		return -errno;
	q->qc = (struct drm_nnp_queue_create){ .depth = depth };
	if (ioctl(q->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &q->qc))
		return -errno;
	q->sq = mmap(NULL, q->qc.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     q->fd, q->qc.ring_mmap_offset);
	q->db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, q->fd,
		     q->qc.doorbell_mmap_offset);
	if (q->sq == MAP_FAILED || q->db == MAP_FAILED)
		return -ENOMEM;
	q->cq = (void *)((char *)q->sq + q->qc.cq_offset);
	return 0;
}

/* A NOP in @slot, then SQ_TAIL moved past it. */
static void submit_nop(struct stalled_queue *q, uint32_t slot)
{
	q->sq[slot] = (struct nnp_hw_queue_cmd){ .opcode = NNP_CMD_NOP,
						 .cid = (uint16_t)(0x40 + slot) };
	__atomic_thread_fence(__ATOMIC_RELEASE);
	q->db[NNP_DB_SQ_TAIL / 4] = (slot + 1) % q->qc.depth;
}

/* Whether @slot's completion (first lap: phase 1) shows up within 2 s. */
static int completes(struct stalled_queue *q, uint32_t slot)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if ((q->cq[slot].phase & NNP_CQE_PHASE) &&
		    q->cq[slot].cid == 0x40 + slot)
			return q->cq[slot].status == NNP_STATUS_SUCCESS;
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 2);
	return 0;
}

/*
 * The owner, as user nobody: a queue of depth 2 (one completion slot
 * usable), a NOP completed and left unacknowledged, a second NOP the
 * device cannot take; then stopped. Once continued: the second NOP is
 * still waiting, and goes as soon as CQ_HEAD moves. Exit status: 0, or
 * the number of the check that failed.
 */
static int stall_then_acknowledge(void)
{
	struct stalled_queue q;

	if (setgid(NOBODY) || setuid(NOBODY))
		return 1;
	if (queue_open(&q, 2))
		return 2;
	submit_nop(&q, 0);
	if (!completes(&q, 0))
		return 3;
	submit_nop(&q, 1);
	raise(SIGSTOP);
	if (q.db[NNP_DB_SQ_HEAD / 4] != 1)
		return 4;
	if (q.cq[1].phase & NNP_CQE_PHASE)
		return 5;
	q.db[NNP_DB_CQ_HEAD / 4] = 1;
	if (!completes(&q, 1))
		return 6;
	return 0;
}

static unsigned int param_swap(const char *name, unsigned int value)
{
	char path[128], buf[32];
	unsigned int old = 0;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%u", &old) != 1)
			old = 0;
		fclose(f);
	}
	snprintf(buf, sizeof(buf), "%u", value);
	write_str(path, buf);
	return old;
}

static unsigned int reset_count(void)
{
	const char *reason;
	nnp_device_t *dev;
	uint32_t n = ~0u;

	if (nnp_device_open(0, &dev) != NNP_SUCCESS)
		return ~0u;
	if (nnp_device_get_resets(dev, &n, &reason) != NNP_SUCCESS)
		n = ~0u;
	nnp_device_close(dev);
	return n;
}

FIXTURE(stall) {
	mode_t mode;
	unsigned int old_job_ms;
};

FIXTURE_SETUP(stall)
{
	struct stat st;

	ASSERT_EQ(0, stat(NODE, &st));
	self->mode = st.st_mode & 07777;
	ASSERT_EQ(0, chmod(NODE, 0666));
	self->old_job_ms = param_swap("job_timeout_ms", JOB_MS);
	ASSERT_NE(0, self->old_job_ms);
}

FIXTURE_TEARDOWN(stall)
{
	param_swap("job_timeout_ms", self->old_job_ms);
	chmod(NODE, self->mode);
}

/*
 * Four job timeouts with the owner stopped on a full completion ring:
 * no reset, and root's own queue on the same device works all along.
 */
TEST_F_TIMEOUT(stall, full_completion_ring_resets_nothing, 60)
{
	unsigned int before = reset_count();
	struct stalled_queue other;
	int status;
	pid_t pid;

	ASSERT_NE(~0u, before);
	ASSERT_EQ(0, queue_open(&other, 2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(stall_then_acknowledge());
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status))
		TH_LOG("the owner ended early: status %d", WEXITSTATUS(status));

	usleep(4 * JOB_MS * 1000);
	EXPECT_EQ(before, reset_count());
	submit_nop(&other, 0);
	EXPECT_TRUE(completes(&other, 0));

	kill(pid, SIGCONT);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(before, reset_count());
	close(other.fd);
}

TEST_HARNESS_MAIN
