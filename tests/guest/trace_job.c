// SPDX-License-Identifier: MIT
/*
 * A known sequence of operations on 2 chips whose trace tests/vm/trace.sh
 * checks line by line (docs/trace.md): the parent makes the unique id and
 * forks a process per rank, rank r on device r, each writing its own
 * NNP_TRACE_FILE (a %r in it). Every rank, each operation waited for
 * before the next:
 *   0 allreduce f32 x 1024 sum, in place, waited for after COMPUTE_MS;
 *   1 broadcast i32 x 100 from root 1, issued after COMPUTE_MS;
 *   2 allgather bf16 x 64;
 *   3 reduce_scatter f64 x 32 max;
 *   4 rank 0 sends f32 x 16 to rank 1, which receives it.
 * After the allreduce each rank forks a child that exits at once, which
 * must add nothing to the rank's trace. Then rank 1 alone: 5 a receive from rank 0 that nothing sends (it fails
 * with peer_timeout once NNP_COLL_TIMEOUT_S has passed), and 6 an
 * allreduce queued behind it, which never runs (not_run once the stream
 * is reset). Rank 0 keeps its communicator until rank 1 is done.
 * Results are checked exactly; the exit status is 0 only if every step
 * did what it should.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>

#define BUF_BYTES	65536
#define COMPUTE_MS	50

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

#define CHECK(what, call)						\
	do {								\
		nnp_result_t r_ = (call);				\
		if (r_ != NNP_SUCCESS) {				\
			fprintf(stderr, "rank %d: %s: %s (%s)\n", rank,	\
				what, nnp_strerror(r_),			\
				nnp_get_last_error());			\
			return 1;					\
		}							\
	} while (0)

/* Rank @rank's part; @done: rank 1 writes a byte there when it is done. */
static int run_rank(int rank, const nnp_unique_id_t *id, int done[2])
{
	nnp_mem_t *a, *b, *host;
	nnp_device_t *dev;
	nnp_stream_t *s;
	nnp_comm_t *comm;
	float *h;
	char byte = 1;
	pid_t child;
	int i;

	CHECK("open", nnp_device_open(rank, &dev));
	CHECK("stream", nnp_stream_create(dev, &s));
	CHECK("comm", nnp_comm_init_rank(&comm, 2, id, rank, dev));
	CHECK("alloc", nnp_mem_alloc(dev, NNP_MEM_DEVICE, BUF_BYTES, 0, &a));
	CHECK("alloc", nnp_mem_alloc(dev, NNP_MEM_DEVICE, BUF_BYTES, 0, &b));
	CHECK("alloc", nnp_mem_alloc(dev, NNP_MEM_HOST, BUF_BYTES, 0, &host));
	CHECK("map", nnp_mem_map(host, (void **)&h));
	for (i = 0; i < 1024; i++)
		h[i] = (float)(i % 7 + rank);
	CHECK("stage", nnp_memcpy_async(s, a, 0, host, 0, 1024 * 4));
	CHECK("stage", nnp_stream_synchronize(s));

	CHECK("allreduce", nnp_allreduce(a, 0, a, 0, 1024, NNP_FLOAT32, NNP_SUM, comm, s));
	nap_ms(COMPUTE_MS);
	CHECK("allreduce", nnp_stream_synchronize(s));
	CHECK("fetch", nnp_memcpy_async(s, host, 0, a, 0, 1024 * 4));
	CHECK("fetch", nnp_stream_synchronize(s));
	for (i = 0; i < 1024; i++)
		if (h[i] != (float)(2 * (i % 7) + 1)) {
			fprintf(stderr, "rank %d: element %d is %g\n", rank, i, h[i]);
			return 1;
		}
	/* The allreduce's line is buffered: a child's exit() must not write it. */
	child = fork();
	if (child == 0)
		exit(0);
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return 1;
	nap_ms(COMPUTE_MS);
	CHECK("broadcast", nnp_broadcast(a, 0, b, 0, 100, NNP_INT32, 1, comm, s));
	CHECK("broadcast", nnp_stream_synchronize(s));
	CHECK("allgather", nnp_allgather(a, 0, b, 0, 64, NNP_BFLOAT16, comm, s));
	CHECK("allgather", nnp_stream_synchronize(s));
	CHECK("reduce_scatter", nnp_reduce_scatter(b, 0, a, 0, 32, NNP_FLOAT64,
						   NNP_MAX, comm, s));
	CHECK("reduce_scatter", nnp_stream_synchronize(s));
	if (rank == 0)
		CHECK("send", nnp_send(a, 0, 16, NNP_FLOAT32, 1, comm, s));
	else
		CHECK("recv", nnp_recv(b, 0, 16, NNP_FLOAT32, 0, comm, s));
	CHECK("p2p", nnp_stream_synchronize(s));

	if (rank == 0) {
		/* Rank 1's receive must time out, not see this rank leave. */
		if (read(done[0], &byte, 1) != 1)
			return 1;
	} else {
		CHECK("recv", nnp_recv(b, 0, 16, NNP_FLOAT32, 0, comm, s));
		CHECK("queued", nnp_allreduce(a, 0, a, 0, 8, NNP_FLOAT32, NNP_SUM, comm, s));
		if (nnp_stream_synchronize(s) != NNP_ERROR_COMMAND_FAILED) {
			fprintf(stderr, "rank 1: the lone receive did not fail\n");
			return 1;
		}
		CHECK("reset", nnp_stream_reset(s));
		if (write(done[1], &byte, 1) != 1)
			return 1;
	}
	nnp_comm_destroy(comm);
	nnp_mem_free(host);
	nnp_mem_free(b);
	nnp_mem_free(a);
	nnp_stream_destroy(s);
	nnp_device_close(dev);
	return 0;
}

int main(void)
{
	int done[2], r, status, bad = 0;
	nnp_unique_id_t id;
	pid_t pid[2];

	if (nnp_get_unique_id(&id) != NNP_SUCCESS || pipe(done)) {
		fprintf(stderr, "trace_job: no unique id or pipe\n");
		return 1;
	}
	for (r = 0; r < 2; r++) {
		pid[r] = fork();
		if (pid[r] == 0)
			exit(run_rank(r, &id, done));
	}
	for (r = 0; r < 2; r++)
		if (pid[r] < 0 || waitpid(pid[r], &status, 0) != pid[r] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	printf("trace_job: %s\n", bad ? "FAILED" : "ok");
	return bad;
}
