// SPDX-License-Identifier: MIT
/*
 * The firmware's heartbeat goes on while an admin command waits for a
 * user's running command. Run by tests/vm/admin_wait.sh on one device of
 * 8 GiB with a heartbeat every 2 ms and no watchdog.
 *
 * close_during_a_long_copy: a 3.5 GiB device-to-device copy runs; the
 * process frees another object meanwhile, whose key the firmware
 * releases only once the copy is done (GEM_CLOSE waits on it). A thread
 * reads fw_heartbeat every millisecond the while. Three times:
 * - the free waited for the copy: the copy was not done when the free
 *   began and was done when it returned;
 * - the wait was long enough to judge a 2 ms heartbeat by, 10 beats or
 *   more (73-138 ms here; a 1.5 GiB copy took as little as 25 ms on a
 *   CI machine);
 * - the heartbeat never stood still for half the wait (before the
 *   heartbeat had a thread of its own it stood still the whole wait: one
 *   user's copy stopped what the watchdog reads, and would have had the
 *   device reset under every user).
 * The copies complete and the device is never reset.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "guest_env.h"
#include "kselftest_harness.h"

#define GiB	(1ull << 30)
#define COPY	(7 * GiB / 2)	/* twice, in 8 GiB */
#define BEAT_US	2000		/* admin_wait.sh's heartbeat-ms */

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

struct watch {
	atomic_bool stop;
	int fd;			/* fw_heartbeat in sysfs */
	int64_t longest_us;	/* the heartbeat's longest stand */
	unsigned int reads, beats;
};

static unsigned long heartbeat(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return strtoul(buf, NULL, 10);
}

static void *watch_heartbeat(void *arg)
{
	struct watch *w = arg;
	unsigned long last = heartbeat(w->fd), hb;
	int64_t since = now_us(), t;

	while (!atomic_load(&w->stop)) {
		usleep(BEAT_US / 2);
		hb = heartbeat(w->fd);
		t = now_us();
		w->reads++;
		if (hb != last) {
			w->beats++;
			last = hb;
			since = t;
		} else if (t - since > w->longest_us) {
			w->longest_us = t - since;
		}
	}
	return NULL;
}

/*
 * A first copy that backs 7 GiB, then three of 3.5 GiB: past the
 * harness's default 30 s on a loaded host (seen in CI with a load of 7).
 */
#define TIMEOUT_S	300

/* One device, two buffers of COPY bytes, backed by a first copy. */
FIXTURE(copy) {
	nnp_device_t *dev;
	nnp_stream_t *s;
	nnp_mem_t *a, *b;
};

FIXTURE_SETUP(copy)
{
	ASSERT_EQ(8 * GiB, GUEST_MEM_SIZE);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &self->dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev, &self->s));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, COPY, 0, &self->a));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, COPY, 0, &self->b));
	/*
	 * Once with nothing waiting on it: the host backs the device's
	 * memory at first touch, which made a first copy take 5 s here.
	 */
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, self->b, 0, self->a, 0, COPY));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
}

FIXTURE_TEARDOWN(copy)
{
	nnp_mem_free(self->b);
	nnp_mem_free(self->a);
	nnp_stream_destroy(self->s);
	nnp_device_close(self->dev);
}

TEST_F_TIMEOUT(copy, close_during_a_long_copy, TIMEOUT_S)
{
	nnp_event_t copied = NNP_EVENT_INIT;
	nnp_result_t before, after;
	nnp_stream_t *s = self->s;
	const char *reason;
	nnp_mem_t *other;
	uint32_t resets;
	int round;

	for (round = 0; round < 3; round++) {
		struct watch w = { .longest_us = 0 };
		int64_t t0, close_us;
		pthread_t th;

		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, 4096, 0, &other));
		w.fd = open("/sys/class/accel/accel0/device/fw_heartbeat", O_RDONLY);
		ASSERT_LE(0, w.fd);
		ASSERT_EQ(0, pthread_create(&th, NULL, watch_heartbeat, &w));
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s, self->b, 0, self->a, 0, COPY));
		ASSERT_EQ(NNP_SUCCESS, nnp_event_record(s, &copied));
		usleep(2000);	/* the copy under way */
		before = nnp_event_query(&copied);
		t0 = now_us();
		nnp_mem_free(other);
		close_us = now_us() - t0;
		after = nnp_event_query(&copied);
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(s));
		atomic_store(&w.stop, true);
		pthread_join(th, NULL);
		close(w.fd);
		TH_LOG("round %d: the free took %lld ms; the heartbeat moved %u times in %u reads, stood still %lld ms at most",
		       round, (long long)close_us / 1000, w.beats, w.reads,
		       (long long)w.longest_us / 1000);
		EXPECT_EQ(NNP_ERROR_NOT_READY, before);
		EXPECT_EQ(NNP_SUCCESS, after);
		/*
		 * Relative, not a fixed bound: load stretches the copy, and so
		 * the free, as much as the heartbeat's pauses.
		 */
		EXPECT_LE(10 * BEAT_US, close_us);
		EXPECT_GT(close_us / 2, w.longest_us);
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_resets(self->dev, &resets, &reason));
	EXPECT_EQ(0, resets);
}

TEST_HARNESS_MAIN
