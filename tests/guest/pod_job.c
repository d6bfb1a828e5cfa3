// SPDX-License-Identifier: MIT
/*
 * One rank of a job across a POD, for tests/vm/pod_faults.sh:
 *
 *	pod_job [-t SECONDS] [-n N] [-c COUNT] [-R RANK[,RANK...]:N]
 *		[-L RANK:SECONDS] [-K RANK] [-H SECONDS] [-b N] NAME CHIP
 *
 * on device CHIP as rank BASE + CHIP of the NNP_JOB=BASE:N job, its
 * rendezvous at NNP_COMM_ID (tools/nnp-pod sets both). It waits until
 * every wired port of its chip is up, joins, then runs f32 allreduces of
 * COUNT elements (default 256 Ki: 1 MiB), each checked element by
 * element: one, or as many as SECONDS allow, and at least N. For the
 * job's view (nnptool job), after its first exact allreduce rank RANK of
 * -L sleeps SECONDS ("late for S s") and rank RANK of -K kills itself
 * with SIGKILL ("killing itself"); with -H a rank whose allreduce failed
 * holds its communicator SECONDS before it exits. With -R, each rank RANK
 * resets its own chip after N exact ones, its next allreduce in flight,
 * as an operator would (several ranks: neighbours reset at once). With
 * -b, after that, N allreduces back to back (N, not a time: every rank
 * must run as many), not copied out nor checked, timed: the bus
 * bandwidth as nccl-tests counts it. Each rank
 * prints "POD NAME rank R: ..." lines as things happen, for the host to
 * time: "looping" after its first exact allreduce, "resetting its chip",
 * "failed after K exact: ..." with its ports' states then, or "K exact".
 *
 * Exit status: 0 all exact; 1 setup or join failed; 2 an allreduce
 * failed with an error (what a fault should cause); 3 an element wrong.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>

#define COUNT		(256u << 10)	/* f32 elements: 1 MiB */
#define LINKS_WAIT_S	60
#define MAX_RANKS	64

static const char *name;
static int rank, nranks;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Rank @r's element @i: whole numbers, so that any order of sums is exact. */
static float input(int r, size_t i)
{
	return (float)((r + 1) * 1000 + (int)(i % 997));
}

/* Element @i of the sum over the @n ranks (under 2^24: exact in f32). */
static float sum_of(int n, size_t i)
{
	return (float)(1000 * n * (n + 1) / 2 + n * (int)(i % 997));
}

/* "R1,R2,...:N" into @resets and @after; false if malformed. */
static bool parse_resets(const char *arg, bool *resets, unsigned long *after)
{
	const char *colon = strchr(arg, ':');
	char *end;
	long r;

	if (!colon)
		return false;
	while (arg < colon) {
		r = strtol(arg, &end, 10);
		if (end == arg || r < 0 || r >= MAX_RANKS || (*end != ',' && end != colon))
			return false;
		resets[r] = true;
		arg = end + (end != colon);
	}
	*after = strtoul(colon + 1, &end, 10);
	return *end == '\0' && end != colon + 1;
}

static int fail(const char *what, nnp_result_t r)
{
	printf("POD %s rank %d: %s: %s (%s)\n", name, rank, what, nnp_strerror(r),
	       nnp_get_last_error());
	fflush(stdout);
	return 1;
}

/* Every wired port of @dev up, waiting up to LINKS_WAIT_S. */
static bool links_up(nnp_device_t *dev)
{
	double until = now_s() + LINKS_WAIT_S;
	struct timespec nap = { 0, 50 * 1000000 };

	do {
		struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
		unsigned int n = 0, i;
		bool all = true;

		if (nnp_device_get_ports(dev, p, NNP_MAX_PORTS, &n) != NNP_SUCCESS)
			return false;
		for (i = 0; i < n && i < NNP_MAX_PORTS; i++)
			if ((p[i].state & NNP_LINK_WIRED) && !(p[i].state & NNP_LINK_UP))
				all = false;
		if (all)
			return true;
		nanosleep(&nap, NULL);
	} while (now_s() < until);
	return false;
}

/* Each wired port of @dev as it is now: "port 1 to chip 1.0 down". */
static void print_ports(nnp_device_t *dev)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
	unsigned int n = 0, i;

	if (nnp_device_get_ports(dev, p, NNP_MAX_PORTS, &n) != NNP_SUCCESS)
		return;
	for (i = 0; i < n && i < NNP_MAX_PORTS; i++)
		if (p[i].state & NNP_LINK_WIRED)
			printf("POD %s rank %d: port %u to chip %u.%u %s\n", name, rank,
			       i, p[i].peer_chip, p[i].peer_port,
			       p[i].state & NNP_LINK_UP ? "up" : "down");
}

int main(int argc, char **argv)
{
	nnp_device_t *dev;
	nnp_stream_t *s;
	nnp_comm_t *comm;
	nnp_mem_t *in, *out, *host;
	nnp_unique_id_t id;
	struct nnp_stream_error e = { .size = sizeof(e) };
	double seconds = 0, until, t0;
	unsigned long exact = 0, reset_after = 0, count = COUNT, bench = 0, n;
	unsigned long at_least = 1;
	bool resets[MAX_RANKS] = { false };
	int chip, base, opt, late = -1, late_s = 0, kill_rank = -1, hold = 0;
	nnp_result_t r;
	float *h;
	size_t i;

	while ((opt = getopt(argc, argv, "t:n:c:R:L:K:H:b:")) != -1) {
		if (opt == 't')
			seconds = atof(optarg);
		else if (opt == 'n')
			at_least = strtoul(optarg, NULL, 0);
		else if (opt == 'L' && sscanf(optarg, "%d:%d", &late, &late_s) != 2)
			argc = 0;
		else if (opt == 'K')
			kill_rank = atoi(optarg);
		else if (opt == 'H')
			hold = atoi(optarg);
		else if (opt == 'L')
			continue;
		else if (opt == 'b')
			bench = strtoul(optarg, NULL, 0);
		else if (opt == 'c')
			count = strtoul(optarg, NULL, 0);
		else if (opt != 'R' || !parse_resets(optarg, resets, &reset_after))
			argc = 0;
	}
	if (argc - optind != 2 || !getenv("NNP_JOB") ||
	    sscanf(getenv("NNP_JOB"), "%d:%d", &base, &nranks) != 2) {
		fprintf(stderr, "usage: NNP_JOB=BASE:N pod_job [-t SECONDS] [-n N] [-c COUNT] [-R RANK[,RANK...]:N] [-L RANK:SECONDS] [-K RANK] [-H SECONDS] [-b N] NAME CHIP\n");
		return 1;
	}
	name = argv[optind];
	chip = atoi(argv[optind + 1]);
	rank = base + chip;
	r = nnp_device_open(chip, &dev);
	if (r != NNP_SUCCESS)
		return fail("open", r);
	if (!links_up(dev)) {
		printf("POD %s rank %d: links not up after %d s\n", name, rank, LINKS_WAIT_S);
		return 1;
	}
	r = nnp_stream_create(dev, &s);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, count * 4, 0, &in);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, count * 4, 0, &out);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_HOST, count * 4, 0, &host);
	if (r == NNP_SUCCESS)
		r = nnp_mem_map(host, (void **)&h);
	if (r != NNP_SUCCESS)
		return fail("setup", r);
	for (i = 0; i < count; i++)
		h[i] = input(rank, i);
	r = nnp_memcpy_async(s, in, 0, host, 0, count * 4);
	if (r == NNP_SUCCESS)
		r = nnp_stream_synchronize(s);
	if (r == NNP_SUCCESS)
		r = nnp_get_unique_id(&id);
	if (r == NNP_SUCCESS)
		r = nnp_comm_init_rank(&comm, nranks, &id, rank, dev);
	if (r != NNP_SUCCESS)
		return fail("join", r);

	until = now_s() + seconds;
	do {
		r = nnp_allreduce(in, 0, out, 0, count, NNP_FLOAT32, NNP_SUM, comm, s);
		if (r == NNP_SUCCESS)
			r = nnp_memcpy_async(s, host, 0, out, 0, count * 4);
		if (r == NNP_SUCCESS && rank < MAX_RANKS && resets[rank] && exact == reset_after) {
			printf("POD %s rank %d: resetting its chip\n", name, rank);
			fflush(stdout);
			r = nnp_device_reset(dev);
			if (r != NNP_SUCCESS)
				return fail("reset", r);
		}
		if (r == NNP_SUCCESS)
			r = nnp_stream_synchronize(s);
		if (r != NNP_SUCCESS) {
			if (nnp_stream_error(s, &e) == NNP_SUCCESS)
				e.what = "no device status";
			printf("POD %s rank %d: failed after %lu exact: %s (%s)\n", name,
			       rank, exact, nnp_strerror(r), e.what);
			if (rank >= MAX_RANKS || !resets[rank])
				print_ports(dev);
			fflush(stdout);
			sleep((unsigned int)hold);
			return 2;
		}
		for (i = 0; i < count; i++) {
			if (h[i] != sum_of(nranks, i)) {
				printf("POD %s rank %d: element %zu is %g, not %g\n", name, rank,
				       i, (double)h[i], (double)sum_of(nranks, i));
				return 3;
			}
		}
		if (!exact++) {
			printf("POD %s rank %d: looping\n", name, rank);
			fflush(stdout);
		}
		if (exact == 1 && rank == kill_rank) {
			printf("POD %s rank %d: killing itself\n", name, rank);
			fflush(stdout);
			raise(SIGKILL);
		}
		if (exact == 1 && rank == late) {
			printf("POD %s rank %d: late for %d s\n", name, rank, late_s);
			fflush(stdout);
			sleep((unsigned int)late_s);
		}
	} while (now_s() < until || exact < at_least);
	printf("POD %s rank %d: %lu exact\n", name, rank, exact);
	if (bench) {
		t0 = now_s();
		for (n = 0; n < bench; n++) {
			r = nnp_allreduce(in, 0, out, 0, count, NNP_FLOAT32, NNP_SUM, comm, s);
			if (r == NNP_SUCCESS)
				r = nnp_stream_synchronize(s);
			if (r != NNP_SUCCESS)
				return fail("bench", r);
		}
		t0 = (now_s() - t0) / (double)bench;
		printf("POD %s rank %d: bench %lu bytes, %lu allreduces, %.1f us each, busbw %.3f GB/s\n",
		       name, rank, count * 4, bench, t0 * 1e6,
		       2.0 * (nranks - 1) / nranks * (double)count * 4 / t0 / 1e9);
	}
	nnp_comm_destroy(comm);
	nnp_device_close(dev);
	return 0;
}
