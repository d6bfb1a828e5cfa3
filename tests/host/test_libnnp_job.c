// SPDX-License-Identifier: MIT
/*
 * The job's view (job_msg.h, nnp_job_view()) over loopback TCP: ranks
 * joined by threads of this process at NNP_COMM_ID, each answering from
 * a made-up state, as a rank answers from its driver.
 *
 * In detail (docs/testing.md has the summary): a view of 4 ranks has the
 * job's size and epoch, and each rank's host, pid, chip, address and
 * communicator state as it said (rank 2 behind, rank 1 failed
 * link_down, rank 0 aborted, rank 3 with no communicator), within the
 * 5 s bound; a rank whose
 * link ended is gone and one that takes 3 s to answer silent, and the
 * view still comes within 5 s; a wrong secret is NNP_ERROR_IO naming it
 * before anything of the query is sent, a secret of 15 or 65 characters
 * and an address without a port NNP_ERROR_INVALID_ARGUMENT, a port where
 * nothing listens NNP_ERROR_IO "Connection refused"; strangers (one that
 * says nothing for 1.5 s, one that sends junk, one that opens as a rank
 * would, one whose query is sealed with another secret) are dropped
 * unanswered and the next view comes whole; a second job's rendezvous at
 * the address, while the first's view is served, succeeds (its ranks 1..3
 * dialling 300 ms before its rank 0) and its view is the second job's;
 * once every rank's link ends the root stops serving: the address refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "boot_io.h"
#include "bootstrap.h"
#include "job_rank.h"
#include "nnp_hw.h"

#define NRANKS		4
#define SECRET		"0123456789abcdef-job-view"

struct member {
	thrd_t t;
	const nnp_unique_id_t *id;
	int rank;
	nnp_result_t res;
	uint64_t epoch;
	struct nnp_job_link *link;
};

/* The rank whose answers take 3 s, past the root's 2 s; -1: none. */
static int slow_rank = -1;
/* Rank 0's host name, when set: another machine's text, with escapes. */
static const char *rank0_host;

static struct job {
	char addr[32];
	nnp_unique_id_t id;
	struct member m[NRANKS];
} job;

/* What each rank says: the source's comm_id is its rank. */
static void fake_state(const struct nnp_job_source *src, struct nnp_job_state *st)
{
	uint32_t r = src->comm_id;

	st->pid = 4000 + r;
	if (r == 0 && rank0_host)
		snprintf(st->host, sizeof(st->host), "%s", rank0_host);
	else
		gethostname(st->host, sizeof(st->host) - 1);
	if (r == 3)
		return;		/* its communicator is gone */
	if ((int)r == slow_rank)
		sleep(3);
	st->flags = NNP_JOB_HAS_COMM;
	st->comm = (struct drm_nnp_comm_info){
		.comm = 7, .rank = r, .nranks = NRANKS, .epoch = 0x1234,
		.flags = DRM_NNP_COMM_INFO_STATE,
		.calls = r == 2 ? 4 : 5, .calls_done = 4,
		.status = r == 1 ? NNP_STATUS_LINK_DOWN :
			  r == 0 ? NNP_STATUS_ABORTED : 0,
		.opcode = r == 2 ? 0 : NNP_CMD_ALLREDUCE,
		.dtype = NNP_DTYPE_F32, .op = NNP_OP_SUM, .count = 1024,
		.peer = DRM_NNP_COMM_NONE,
		.wait_port = r == 2 ? DRM_NNP_COMM_NONE : 1,
		.wait_rank = r == 2 ? DRM_NNP_COMM_NONE : (r + NRANKS - 1) % NRANKS,
		.wait_ns = r == 2 ? 0 : 2500000000ull,
	};
	snprintf(st->comm.task, sizeof(st->comm.task), "train");
}

static int member_main(void *arg)
{
	struct member *m = arg;
	struct nnp_rank_info mine = { .chip = 100 + (uint32_t)m->rank };
	struct nnp_rank_info *all = NULL;

	m->res = nnp_bootstrap_join(m->id, NRANKS, m->rank, &mine, &all, &m->epoch,
				    &m->link);
	free(all);
	return 0;
}

/* A port of 127.0.0.1 nothing listens on, as far as a bind says. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Ranks 0..3 join at a fresh NNP_COMM_ID and start answering. */
static int setup(void **state)
{
	int i;

	(void)state;
	slow_rank = -1;
	rank0_host = NULL;
	snprintf(job.addr, sizeof(job.addr), "127.0.0.1:%d", free_port());
	setenv("NNP_COMM_ID", job.addr, 1);
	setenv("NNP_COMM_SECRET", SECRET, 1);
	assert_int_equal(nnp_bootstrap_new_id(&job.id), NNP_SUCCESS);
	for (i = 0; i < NRANKS; i++) {
		job.m[i] = (struct member){ .id = &job.id, .rank = i };
		assert_int_equal(thrd_create(&job.m[i].t, member_main, &job.m[i]),
				 thrd_success);
	}
	for (i = 0; i < NRANKS; i++) {
		const struct nnp_job_source src = { .comm_id = (uint32_t)i };

		thrd_join(job.m[i].t, NULL);
		assert_int_equal(job.m[i].res, NNP_SUCCESS);
		assert_non_null(job.m[i].link);
		assert_int_equal(nnp_job_link_start(job.m[i].link, fake_state, &src),
				 NNP_SUCCESS);
	}
	return 0;
}

static int teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < NRANKS; i++)
		nnp_job_link_end(job.m[i].link);
	unsetenv("NNP_COMM_ID");
	unsetenv("NNP_COMM_SECRET");
	return 0;
}

static int64_t view(struct nnp_job_rank *r, unsigned int *n, uint64_t *epoch,
		    nnp_result_t want)
{
	int64_t t0 = nnp_now_ms();

	for (unsigned int i = 0; i < NRANKS; i++)
		r[i].size = sizeof(r[i]);
	assert_int_equal(nnp_job_view(job.addr, SECRET, r, NRANKS, n, epoch), want);
	return nnp_now_ms() - t0;
}

static void test_view_of_every_rank(void **state)
{
	struct nnp_job_rank r[NRANKS];
	char host[64] = "";
	uint64_t epoch = 0;
	unsigned int n = 0;
	int i;

	(void)state;
	gethostname(host, sizeof(host) - 1);
	assert_in_range(view(r, &n, &epoch, NNP_SUCCESS), 0, NNP_JOB_VIEW_MS);
	assert_int_equal(n, NRANKS);
	assert_int_equal(epoch, job.m[0].epoch);
	for (i = 0; i < NRANKS; i++) {
		assert_int_equal(r[i].size, sizeof(r[i]));
		assert_int_equal(r[i].rank, i);
		assert_int_equal(r[i].heard, NNP_JOB_RANK_ANSWERED);
		assert_string_equal(r[i].host, host);
		assert_int_equal(r[i].pid, 4000 + i);
		assert_int_equal(r[i].chip, 100 + i);
		assert_int_equal(strncmp(r[i].addr, "127.0.0.1:", 10), 0);
		assert_int_equal(r[i].has_comm, i != 3);
	}
	assert_int_equal(r[0].comm.calls, 5);
	assert_int_equal(r[0].comm.calls_done, 4);
	assert_string_equal(r[0].comm.op, "allreduce");
	assert_string_equal(r[0].comm.dtype, "f32");
	assert_string_equal(r[0].comm.redop, "sum");
	assert_int_equal(r[0].comm.wait_rank, 3);
	assert_int_equal(r[0].comm.wait_port, 1);
	assert_int_equal(r[0].comm.wait_ns, 2500000000ull);
	assert_string_equal(r[0].comm.task, "train");
	assert_string_equal(r[0].comm.failed, "aborted");
	assert_string_equal(r[1].comm.failed, "link_down");
	assert_int_equal(r[2].comm.calls, 4);
	assert_null(r[2].comm.op);
	assert_int_equal(r[2].comm.wait_port, NNP_COMM_STATE_NONE);
}

static void test_gone_and_silent(void **state)
{
	struct nnp_job_rank r[NRANKS];
	unsigned int n = 0;

	(void)state;
	nnp_job_link_end(job.m[3].link);
	job.m[3].link = NULL;
	slow_rank = 2;
	assert_in_range(view(r, &n, NULL, NNP_SUCCESS), NNP_JOB_ASK_MS, NNP_JOB_VIEW_MS);
	assert_int_equal(n, NRANKS);
	assert_int_equal(r[0].heard, NNP_JOB_RANK_ANSWERED);
	assert_int_equal(r[1].heard, NNP_JOB_RANK_ANSWERED);
	assert_int_equal(r[2].heard, NNP_JOB_RANK_SILENT);
	assert_int_equal(r[3].heard, NNP_JOB_RANK_GONE);
	assert_int_equal(strncmp(r[3].addr, "127.0.0.1:", 10), 0);
	assert_string_equal(r[3].host, "");
	assert_int_equal(r[3].chip, 103);
	assert_int_equal(r[3].has_comm, 0);
	assert_int_equal(r[2].has_comm, 0);
}

static void test_bad_input(void **state)
{
	struct nnp_job_rank r[NRANKS] = { { .size = sizeof(r[0]) } };
	char want[256], dead[32];
	unsigned int n = 0;

	(void)state;
	assert_int_equal(nnp_job_view(job.addr, "0123456789abcdef-not-the-job", r,
				      NRANKS, &n, NULL), NNP_ERROR_IO);
	snprintf(want, sizeof(want),
		 "nnp_job_view: the job at %s did not prove it holds this secret: a wrong secret, or another job's address",
		 job.addr);
	assert_string_equal(nnp_get_last_error(), want);
	assert_int_equal(nnp_job_view(job.addr, "0123456789abcde", r, NRANKS, &n,
				      NULL), NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nnp_job_view(job.addr,
				      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
				      r, NRANKS, &n, NULL), NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nnp_job_view(job.addr, NULL, r, NRANKS, &n, NULL),
			 NNP_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nnp_job_view("127.0.0.1", SECRET, r, NRANKS, &n, NULL),
			 NNP_ERROR_INVALID_ARGUMENT);
	snprintf(dead, sizeof(dead), "127.0.0.1:%d", free_port());
	assert_int_equal(nnp_job_view(dead, SECRET, r, NRANKS, &n, NULL), NNP_ERROR_IO);
	snprintf(want, sizeof(want),
		 "nnp_job_view: cannot reach the job at %s: Connection refused (the job ended, rank 0 went, or no job serves there)",
		 dead);
	assert_string_equal(nnp_get_last_error(), want);
	r[0].size = 8;
	assert_int_equal(nnp_job_view(job.addr, SECRET, r, NRANKS, &n, NULL),
			 NNP_ERROR_INVALID_ARGUMENT);
}

/* A connection to the job's address. */
static int dial(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)atoi(strchr(job.addr, ':') + 1));
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/*
 * Whether the root closed @fd without a word, within 3 s (a reset if it
 * left bytes unread).
 */
static bool dropped(int fd)
{
	struct timeval tv = { .tv_sec = 3 };
	ssize_t n;
	char b;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, &b, 1, 0);
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

static void test_strangers_dropped(void **state)
{
	static const char junk[] = "GET / HTTP/1.0\r\n\r\n";
	uint8_t other[NNP_BOOTSTRAP_SECRET_BYTES] = "0123456789abcdef-other";
	struct nnp_boot_session s = { .secret = other };
	struct nnp_job_rank r[NRANKS];
	enum nnp_boot_answer said;
	struct nnp_job_query q;
	unsigned int n = 0;
	int idle, fd;

	(void)state;
	/* Idle past the root's 1 s: dropped, and the view goes on. */
	idle = dial();
	assert_true(dropped(idle));
	close(idle);
	fd = dial();
	assert_int_equal(send(fd, junk, sizeof(junk) - 1, 0), (ssize_t)sizeof(junk) - 1);
	assert_true(dropped(fd));
	close(fd);
	/* Opened as a rank joining: the rendezvous is over. */
	fd = dial();
	assert_int_equal(nnp_boot_open_session(fd, &s, NNP_BOOT_JOIN,
					       nnp_now_ms() + 2000, &said),
			 NNP_ERROR_IO);
	assert_int_equal(said, NNP_BOOT_HUNG_UP);
	close(fd);
	/* A view's open, then a query sealed with another secret. */
	fd = dial();
	assert_int_equal(nnp_boot_open_session(fd, &s, NNP_BOOT_VIEW,
					       nnp_now_ms() + 2000, &said),
			 NNP_SUCCESS);
	assert_int_equal(said, NNP_BOOT_UNPROVEN);
	nnp_job_seal_query(&s, &q);
	assert_int_equal(nnp_boot_send(fd, &q, sizeof(q), nnp_now_ms() + 2000),
			 NNP_SUCCESS);
	assert_true(dropped(fd));
	close(fd);
	assert_in_range(view(r, &n, NULL, NNP_SUCCESS), 0, NNP_JOB_VIEW_MS);
	assert_int_equal(r[3].heard, NNP_JOB_RANK_ANSWERED);
}

static void test_new_job_takes_the_address(void **state)
{
	struct member again[NRANKS];
	struct nnp_job_rank r[NRANKS];
	nnp_unique_id_t id;
	unsigned int n = 0;
	uint64_t epoch = 0;
	int i;

	(void)state;
	/*
	 * The first job's view holds the address: a second job there takes
	 * it, even when its ranks 1..3 dial before its rank 0 takes it over
	 * and the first job's view drops them.
	 */
	assert_int_equal(nnp_bootstrap_new_id(&id), NNP_SUCCESS);
	for (i = NRANKS - 1; i >= 0; i--) {
		again[i] = (struct member){ .id = &id, .rank = i };
		assert_int_equal(thrd_create(&again[i].t, member_main, &again[i]),
				 thrd_success);
		if (i == 1)
			thrd_sleep(&(struct timespec){ .tv_nsec = 300000000 }, NULL);
	}
	for (i = 0; i < NRANKS; i++) {
		const struct nnp_job_source src = { .comm_id = (uint32_t)i };

		thrd_join(again[i].t, NULL);
		assert_int_equal(again[i].res, NNP_SUCCESS);
		assert_int_equal(nnp_job_link_start(again[i].link, fake_state, &src),
				 NNP_SUCCESS);
	}
	assert_int_not_equal(again[0].epoch, job.m[0].epoch);
	view(r, &n, &epoch, NNP_SUCCESS);
	assert_int_equal(epoch, again[0].epoch);
	assert_int_equal(r[3].heard, NNP_JOB_RANK_ANSWERED);
	for (i = 0; i < NRANKS; i++)
		nnp_job_link_end(again[i].link);
}

/* nnptool job's output with @args into @out; its exit status. */
static int nnptool_job(const char *args, char *out, size_t len)
{
	char exe[4096], cmd[8192];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *p;
	size_t got;

	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "%s/../../bin/nnptool job %s 2>&1", exe, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	got = fread(out, 1, len - 1, p);
	out[got] = '\0';
	return WEXITSTATUS(pclose(p));
}

static void test_nnptool_job(void **state)
{
	char out[8192], want[512], host[64] = "";
	size_t i;

	(void)state;
	gethostname(host, sizeof(host) - 1);
	rank0_host = "\x1b]0;pwn\x07";
	assert_int_equal(nnptool_job(job.addr, out, sizeof(out)), 0);
	snprintf(want, sizeof(want),
		 "waits for: rank 3 (%s, chip 103): its communicator is no longer on its device\n"
		 "           rank 1 (%s, chip 101): failed: link_down\n"
		 "           rank 0 (\\x1b]0;pwn\\x07, chip 100): failed: aborted\n"
		 "           rank 2 (%s, chip 102): behind: started 4 collectives, the others 5\n",
		 host, host, host);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "job at %s, epoch %#llx, 4 ranks\n", job.addr,
		 (unsigned long long)job.m[0].epoch);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "\n0     \\x1b]0;pwn\\x07 "));
	assert_non_null(strstr(out, " 4/5        allreduce f32 sum x1024 "));
	assert_non_null(strstr(out, " rank 3 on port 1 for 2.5 s "));
	for (i = 0; out[i]; i++)
		assert_true(out[i] == '\n' || (out[i] >= 0x20 && out[i] < 0x7f));
	assert_int_equal(nnptool_job("--json", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"waited_for\": \"behind: started 4 collectives, the others 5\""));
	/* Its input: NNP_COMM_SECRET or a file, NNP_COMM_ID or an operand. */
	unsetenv("NNP_COMM_ID");
	assert_int_equal(nnptool_job("", out, sizeof(out)), 2);
	assert_string_equal(out, "nnptool: job: give the job's HOST:PORT, or set NNP_COMM_ID as its ranks had it\n");
	setenv("NNP_COMM_ID", job.addr, 1);
	unsetenv("NNP_COMM_SECRET");
	assert_int_equal(nnptool_job("", out, sizeof(out)), 2);
	assert_string_equal(out, "nnptool: job: set NNP_COMM_SECRET, or give --secret-file, as the job's ranks had it\n");
	assert_int_equal(nnptool_job("--secret-file /nonexistent", out, sizeof(out)), 1);
	setenv("NNP_COMM_SECRET", "0123456789abcdef-wrong", 1);
	assert_int_equal(nnptool_job("", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "did not prove it holds this secret"));
	setenv("NNP_COMM_SECRET", SECRET, 1);
}

static void test_root_ends_with_its_ranks(void **state)
{
	struct nnp_job_rank r[NRANKS];
	unsigned int n = 0;
	int i;

	(void)state;
	for (i = 0; i < NRANKS; i++) {
		nnp_job_link_end(job.m[i].link);
		job.m[i].link = NULL;
	}
	/* The root notices each close at once and stops listening. */
	for (i = 0; i < 50 && nnp_job_view(job.addr, SECRET, r, 0, &n, NULL) !=
			       NNP_ERROR_IO; i++)
		usleep(20 * 1000);
	view(r, &n, NULL, NNP_ERROR_IO);
	assert_non_null(strstr(nnp_get_last_error(), "Connection refused"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_view_of_every_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_and_silent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strangers_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_job_takes_the_address, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nnptool_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_ends_with_its_ranks, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
