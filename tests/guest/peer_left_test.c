// SPDX-License-Identifier: MIT
/*
 * A rank that goes (hw 1.20, 1.21), driven by tests/vm/peer_left.sh on a
 * ring of 4 chips, each rank a process of its own.
 *
 * killed_idle_rank: the four ranks run one exact allreduce; rank 3 then
 * waits, idle, while ranks 0 to 2 call a second one, and is killed with
 * SIGKILL once they wait in it. Its file closed, its chip tells its ring
 * neighbours it left after one collective: every allreduce fails within
 * a second of the kill (NNP_COLL_TIMEOUT_S is 60), the stream saying
 * PEER_LEFT (0x17, or ABORTED where another's abort came first, but at
 * least one of them PEER_LEFT), and each rank's device gives the
 * COMM_FAILED event of its communicator, "peer_left" or "aborted" alike.
 *
 * killed_sender: the same, but rank 1, two hops from rank 3, waits in a
 * receive from it (a routed message: rank 3's chip tells every rank it
 * has a route to that it left, behind what it sent each), and ranks 0 and
 * 2 call their allreduces only 0.2 s after the kill: all three end
 * PEER_LEFT, the receive within a second of the kill, the allreduces at
 * once, each with its "peer_left" event.
 *
 * killed_neighbour_sender: rank 0, rank 3's neighbour, waits in the
 * receive instead (a message by port): it ends PEER_LEFT within a second,
 * and so does rank 2's allreduce; rank 1's ends PEER_LEFT or ABORTED.
 *
 * orderly_end: the four ranks run 20 exact allreduces and each destroys
 * its communicator as soon as its own last one is done: no rank fails
 * (a leave fails only what the leaver never called).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "nnp_hw.h"
#include "ring_ranks.h"

#define RANKS		4
#define COUNT		(64u << 10)
#define ORDERLY_CALLS	20

/* What each rank's process tells the test, in memory they share. */
struct board {
	/* The rank that receives from the killed one (-1: none); the
	 * others call their allreduce after the kill. */
	int receiver;
	volatile double killed_at;
	volatile int ready[RANKS];	/* exact allreduces done */
	volatile int waiting[RANKS];	/* in the allreduce after them */
	volatile double failed_at[RANKS];
	volatile int result[RANKS];
	volatile unsigned int status[RANKS];
	char why[RANKS][32];
	volatile int exact[RANKS];
};

/* Rank @r of the job @id: a process of its own, on chip @r. */
struct rank_run {
	struct ring_ranks rr;
	int r;
	struct board *b;
};

static nnp_result_t rank_join(struct rank_run *k, nnp_unique_id_t *id)
{
	nnp_result_t res;

	k->rr.n = RANKS;
	k->rr.count = COUNT;
	res = ring_rank_open(&k->rr, k->r);
	if (res == NNP_SUCCESS)
		res = ring_stage_input(k->rr.s[k->r], k->rr.buf[k->r],
				       k->rr.host[k->r], k->r, COUNT);
	if (res == NNP_SUCCESS)
		res = nnp_comm_init_rank(&k->rr.comm[k->r], RANKS, id, k->r,
					 k->rr.dev[k->r]);
	return res;
}

static nnp_result_t rank_allreduce(struct rank_run *k)
{
	int r = k->r;

	return nnp_allreduce(k->rr.buf[r], 0, k->rr.buf[r], 0, COUNT,
			     NNP_FLOAT32, NNP_SUM, k->rr.comm[r], k->rr.s[r]);
}

/* An allreduce of the inputs staged again: whether it was exact. */
static bool rank_exact(struct rank_run *k)
{
	int r = k->r;

	return ring_stage_input(k->rr.s[r], k->rr.buf[r], k->rr.host[r], r,
				COUNT) == NNP_SUCCESS &&
	       rank_allreduce(k) == NNP_SUCCESS &&
	       ring_sum_errors(k->rr.s[r], k->rr.buf[r], k->rr.host[r], RANKS,
			       COUNT) == 0;
}

/*
 * A rank other than the last once that one idles: a second allreduce;
 * or, with a b->receiver, that rank a receive from the last, and the
 * others their allreduce only once the last is gone. How it ended.
 */
static void rank_waits(struct rank_run *k)
{
	struct nnp_stream_error e = { .size = sizeof(e) };
	struct nnp_device_event ev = NNP_DEVICE_EVENT_INIT;
	struct board *b = k->b;
	int r = k->r;

	b->waiting[r] = 1;
	if (b->receiver >= 0 && r != b->receiver) {
		while (!b->killed_at)
			usleep(1000);
		usleep(200 * 1000);	/* the leave is in */
	}
	b->result[r] = r == b->receiver ?
		       nnp_recv(k->rr.buf[r], 0, COUNT, NNP_FLOAT32, RANKS - 1,
				k->rr.comm[r], k->rr.s[r]) :
		       rank_allreduce(k);
	if (b->result[r] == NNP_SUCCESS)
		b->result[r] = nnp_stream_synchronize(k->rr.s[r]);
	b->failed_at[r] = now_s();
	if (nnp_stream_error(k->rr.s[r], &e) != NNP_SUCCESS)
		b->status[r] = e.status;
	while (nnp_device_next_event(k->rr.dev[r], &ev, 2000) == NNP_SUCCESS)
		if (ev.kind == NNP_DEVICE_EVENT_COMM_FAILED &&
		    ev.comm_id == nnp_comm_id(k->rr.comm[r])) {
			snprintf(b->why[r], sizeof(b->why[r]), "%s", ev.why);
			break;
		}
}

/* Fork rank @r running @body; its exit status says whether it joined. */
static pid_t rank_fork(struct board *b, int r, nnp_unique_id_t *id,
		       void (*body)(struct rank_run *k))
{
	pid_t pid = fork();

	if (pid == 0) {
		struct rank_run k = { .r = r, .b = b };

		if (rank_join(&k, id) != NNP_SUCCESS)
			_exit(1);
		body(&k);
		ring_rank_close(&k.rr, r);
		_exit(0);
	}
	return pid;
}

static void killed_idle_body(struct rank_run *k)
{
	if (!rank_exact(k))
		return;
	k->b->ready[k->r] = 1;
	if (k->r == RANKS - 1)
		for (;;)
			pause();	/* idle until killed */
	rank_waits(k);
}

/* Each rank leaves as soon as its own last allreduce is done. */
static void orderly_body(struct rank_run *k)
{
	int i;

	for (i = 0; i < ORDERLY_CALLS && rank_exact(k); i++)
		k->b->exact[k->r]++;
}

static struct board *board_new(void)
{
	struct board *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return b == MAP_FAILED ? NULL : memset(b, 0, sizeof(*b));
}

/* Wait up to @s seconds until @cond holds; whether it did. */
#define WAIT_UNTIL(cond, s) ({						\
	double _end = now_s() + (s);					\
	while (!(cond) && now_s() < _end)				\
		usleep(10 * 1000);					\
	(cond);								\
})

/* Plain TESTs get 30 s: a fixture lets each name its own bound. */
FIXTURE(job) {
	struct board *b;
};

FIXTURE_SETUP(job)
{
	self->b = board_new();
	ASSERT_NE(NULL, self->b);
	self->b->receiver = -1;
	/* Without the leave, the ranks would wait a minute, not a second. */
	setenv("NNP_COLL_TIMEOUT_S", "60", 1);
}

FIXTURE_TEARDOWN(job)
{
	munmap(self->b, sizeof(*self->b));
}

/*
 * Rank 2 idles after one allreduce and is killed once ranks 0 and 1
 * wait: each of theirs ends within a second, with *@left of them (and
 * of their events) saying PEER_LEFT, the others ABORTED.
 */
static void kill_idle_rank(struct __test_metadata *_metadata,
			   struct board *b, int *left)
{
	nnp_unique_id_t id;
	pid_t pid[RANKS];
	int r, st;

	*left = 0;
	ASSERT_EQ(NNP_SUCCESS, nnp_get_unique_id(&id));
	for (r = 0; r < RANKS; r++)
		pid[r] = rank_fork(b, r, &id, killed_idle_body);
	for (r = 0; r < RANKS; r++)
		ASSERT_TRUE(WAIT_UNTIL(b->ready[r], 60)) TH_LOG("rank %d", r);
	for (r = 0; r < RANKS - 1; r++)
		ASSERT_TRUE(WAIT_UNTIL(b->waiting[r], 10)) TH_LOG("rank %d", r);
	/* Long enough for them to be parked on their ring ports. */
	usleep(500 * 1000);
	b->killed_at = now_s();
	ASSERT_EQ(0, kill(pid[RANKS - 1], SIGKILL));
	for (r = 0; r < RANKS; r++)
		ASSERT_EQ(pid[r], waitpid(pid[r], &st, 0));
	for (r = 0; r < RANKS - 1; r++) {
		TH_LOG("rank %d: %s, status %#x, %.3f s after the kill, event %s",
		       r, nnp_strerror(b->result[r]), b->status[r],
		       b->failed_at[r] - b->killed_at, b->why[r]);
		EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, b->result[r]);
		EXPECT_LT(b->failed_at[r] - b->killed_at, 1.0);
		EXPECT_TRUE(b->status[r] == NNP_STATUS_PEER_LEFT ||
			    b->status[r] == NNP_STATUS_ABORTED);
		if (b->status[r] == NNP_STATUS_PEER_LEFT) {
			EXPECT_STREQ("peer_left", b->why[r]);
			++*left;
		} else {
			EXPECT_STREQ("aborted", b->why[r]);
		}
	}
}

TEST_F_TIMEOUT(job, killed_idle_rank, 120)
{
	int left;

	kill_idle_rank(_metadata, self->b, &left);
	EXPECT_LT(0, left);
}

/*
 * Rank 1 waits in a receive from rank 3, two hops away (a pipeline's next
 * stage), nothing else in flight: the leave ends it, and the allreduces
 * of ranks 0 and 2 called after it, each PEER_LEFT.
 */
TEST_F_TIMEOUT(job, killed_sender, 120)
{
	int left;

	self->b->receiver = 1;
	kill_idle_rank(_metadata, self->b, &left);
	EXPECT_EQ(RANKS - 1, left);
}

/* Rank 0, rank 3's neighbour, receives by port: it and rank 2 PEER_LEFT. */
TEST_F_TIMEOUT(job, killed_neighbour_sender, 120)
{
	int left;

	self->b->receiver = 0;
	kill_idle_rank(_metadata, self->b, &left);
	EXPECT_EQ(NNP_STATUS_PEER_LEFT, self->b->status[0]);
	EXPECT_EQ(NNP_STATUS_PEER_LEFT, self->b->status[2]);
	EXPECT_LE(2, left);
}

TEST_F_TIMEOUT(job, orderly_end, 120)
{
	struct board *b = self->b;
	nnp_unique_id_t id;
	pid_t pid[RANKS];
	int r, st;

	ASSERT_EQ(NNP_SUCCESS, nnp_get_unique_id(&id));
	for (r = 0; r < RANKS; r++)
		pid[r] = rank_fork(b, r, &id, orderly_body);
	for (r = 0; r < RANKS; r++) {
		ASSERT_EQ(pid[r], waitpid(pid[r], &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("rank %d", r);
		EXPECT_EQ(ORDERLY_CALLS, b->exact[r]) TH_LOG("rank %d", r);
	}
}

TEST_HARNESS_MAIN
