// SPDX-License-Identifier: MIT
/*
 * A chip of a ring reset under its peers (tests/vm/ring_reset.sh, 8 chips).
 *
 * A reset chip takes its links down: ranks blocked in an allreduce that an
 * idle chip of the ring never joined fail as soon as that chip is reset,
 * not at their communicator's 30-minute timeout.
 *
 * A chip that hangs in the middle of an allreduce (the host sets the
 * faults: this program prints "FAULT nnpN SPEC", tests/lib/fault_host.py
 * sets it on the QEMU monitor; a link delay on chip 0 keeps the allreduce
 * running for seconds) is found by the heartbeat watchdog, and every rank
 * returns an error within 1 s of that detection (the kernel log's time of
 * the watchdog's line, on the clock the ranks are timed with).
 *
 * After either, a new communicator over all 8 chips, the reset one
 * included, gives exact results.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "ring_ranks.h"

#define NCHIPS		8
#define COUNT		(1u << 20)	/* 4 MiB of f32: 64 KiB chunks, 8 a step */
#define HUNG		3		/* the chip that hangs */
#define WATCHDOG_MS	"400"
#define BOUND_S		1.0		/* detection to every rank's return */
/*
 * The kernel log's time of the detection is put on CLOCK_MONOTONIC by
 * kmsg_match() (the two clocks ran at 1.0000 of each other in our runs,
 * under load too); what the matching cannot see, the time between the
 * clock readings and the log's, stays within this slack.
 */
#define CLOCK_SLACK_S	0.05

static void write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(val, f);
		fclose(f);
	}
}

/* Ask the host for @spec on chip @chip, and give it time to set it. */
static void fault(int chip, const char *spec, unsigned int wait_ms)
{
	printf("FAULT nnp%d %s\n", chip, spec);
	fflush(stdout);
	usleep(wait_ms * 1000);
}

FIXTURE(ring) {
	struct ring_ranks rr;
};

FIXTURE_SETUP(ring)
{
	ASSERT_EQ(NCHIPS, GUEST_CHIPS);
	write_file("/sys/module/nnp/parameters/watchdog_ms", WATCHDOG_MS);
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_open(&self->rr, NCHIPS, COUNT));
}

FIXTURE_TEARDOWN(ring)
{
	ring_ranks_close(&self->rr);
}

/*
 * After a reset of chip @lost: a new communicator over all chips, the
 * reset one opened again, and the allreduce exact on every one.
 */
static void recover_exact(struct __test_metadata *_metadata,
			  struct _test_data_ring *self, int lost)
{
	int r;

	ASSERT_EQ(NNP_SUCCESS, ring_ranks_restart(&self->rr, lost));
	for (r = 0; r < NCHIPS; r++)
		EXPECT_EQ(0, ring_rank_errors(&self->rr, r))
			TH_LOG("rank %d after recovery", r);
}

/* One matching of the two clocks: a CLOCK_MONOTONIC time and the log's. */
struct clock_match {
	double mono, log;
};

/*
 * Match the kernel log's clock to CLOCK_MONOTONIC: a line written to
 * /dev/kmsg between two readings of the clock, read back from @kmsg (the
 * records before it are skipped). false if the line was not found.
 */
static bool kmsg_match(int kmsg, struct clock_match *m)
{
	/* A line without its newline stays unfinished, unread, in the log. */
	static const char mark[] = "ring_reset_test: clock mark\n";
	char rec[1024];
	double before, after;
	unsigned long long us;
	ssize_t n;
	int w = open("/dev/kmsg", O_WRONLY);

	before = now_s();
	if (w < 0 || write(w, mark, sizeof(mark) - 1) < 0)
		return false;
	after = now_s();
	close(w);
	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0) {
		rec[n] = '\0';
		if (strstr(rec, mark) &&
		    sscanf(rec, "%*u,%*u,%llu", &us) == 1) {
			m->mono = (before + after) / 2;
			m->log = us / 1e6;
			return true;
		}
	}
	return false;
}

/*
 * The kernel log's time of the first "resetting the device" line read
 * from @kmsg, and how many such lines there were; 0 if none.
 */
static double detected_log_time(int kmsg, int *lines)
{
	char rec[1024];
	unsigned long long us;
	double at = 0;
	ssize_t n;

	*lines = 0;
	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0) {
		rec[n] = '\0';
		if (strstr(rec, "heartbeat: resetting the device") &&
		    sscanf(rec, "%*u,%*u,%llu", &us) == 1 && !(*lines)++)
			at = us / 1e6;
	}
	return at;
}

/*
 * Ranks 1..7 block in an allreduce chip 0 never joins (the default
 * 30-minute timeout); chip 0 is reset on demand: every one fails within
 * 1 s of the reset's return, LINK_DOWN where the link fell and ABORTED
 * passed on down the ring.
 */
TEST_F_TIMEOUT(ring, reset_idle_chip_fails_waiting_ranks, 300)
{
	struct blocked b[NCHIPS];
	double t0, t1;
	int r, link_down = 0;

	unsetenv("NNP_COLL_TIMEOUT_S");
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_stage(&self->rr));
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, NCHIPS, self->rr.comm));
	for (r = 1; r < NCHIPS; r++) {
		ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, r));
		ASSERT_EQ(0, blocked_start(&b[r], self->rr.s[r]));
	}
	sleep(1);
	for (r = 1; r < NCHIPS; r++)
		ASSERT_EQ(0, b[r].at) TH_LOG("rank %d did not wait", r);
	t0 = now_s();
	ASSERT_EQ(NNP_SUCCESS, nnp_device_reset(self->rr.dev[0]));
	t1 = now_s();
	for (r = 1; r < NCHIPS; r++) {
		struct nnp_stream_error e = { .size = sizeof(e) };

		pthread_join(b[r].t, NULL);
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, b[r].res) TH_LOG("rank %d", r);
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->rr.s[r], &e));
		TH_LOG("rank %d: %s (status 0x%x) %.3f s after the reset returned",
		       r, e.what, e.status, b[r].at - t1);
		EXPECT_TRUE(e.status == 0x13 || e.status == 0x15);
		link_down += e.status == 0x13;
		EXPECT_LT(b[r].at - t1, BOUND_S);
	}
	/* Ranks 1 and 7 are chip 0's neighbours; one at least saw the link. */
	EXPECT_GE(link_down, 1);
	TH_LOG("reset took %.3f s", t1 - t0);
	recover_exact(_metadata, self, 0);
}

/*
 * All 8 ranks in a 4 MiB allreduce slowed by a 20 ms delay per packet
 * into chip 0; chip 3 hangs in the middle of it. Every rank returns an
 * error (chip 3's DEVICE_LOST, the others a failed command) within 1 s of
 * the watchdog's detection, and none before it.
 */
TEST_F_TIMEOUT(ring, hang_mid_allreduce_every_rank_errs_within_1s, 300)
{
	struct blocked b[NCHIPS];
	struct clock_match m;
	double detect, worst = 0;
	int kmsg, r, lines;
	const char *reason = NULL;
	uint32_t resets = 0;
	nnp_device_t *d;

	unsetenv("NNP_COLL_TIMEOUT_S");
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	lseek(kmsg, 0, SEEK_END);
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_stage(&self->rr));
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, NCHIPS, self->rr.comm));
	fault(0, "link-delay=1:20", 1000);
	for (r = 0; r < NCHIPS; r++) {
		ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, r));
		ASSERT_EQ(0, blocked_start(&b[r], self->rr.s[r]));
	}
	fault(HUNG, "hang", 0);
	for (r = 0; r < NCHIPS; r++)
		pthread_join(b[r].t, NULL);
	detect = detected_log_time(kmsg, &lines);
	ASSERT_TRUE(kmsg_match(kmsg, &m));
	detect += m.mono - m.log;
	close(kmsg);
	fault(0, "none", 500);
	ASSERT_EQ(1, lines) TH_LOG("watchdog lines in the kernel log");
	for (r = 0; r < NCHIPS; r++) {
		nnp_result_t want = r == HUNG ? NNP_ERROR_DEVICE_LOST :
				    NNP_ERROR_COMMAND_FAILED;
		double after = b[r].at - detect;

		TH_LOG("rank %d: %s %.3f s after the detection", r,
		       nnp_strerror(b[r].res), after);
		EXPECT_EQ(want, b[r].res) TH_LOG("rank %d", r);
		EXPECT_GE(after, -CLOCK_SLACK_S)
			TH_LOG("rank %d returned before the detection", r);
		EXPECT_LT(after, BOUND_S) TH_LOG("rank %d", r);
		if (after > worst)
			worst = after;
	}
	printf("# RINGRESET worst_return_after_detection_ms=%.0f\n", worst * 1e3);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(HUNG, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_resets(d, &resets, &reason));
	EXPECT_EQ(1, resets);
	EXPECT_STREQ("heartbeat", reason);
	nnp_device_close(d);
	recover_exact(_metadata, self, HUNG);
}

TEST_HARNESS_MAIN
