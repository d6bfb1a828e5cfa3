// SPDX-License-Identifier: MIT
/*
 * Collectives with one process per device, as data-parallel training runs
 * them: `mpirun -np N coll_mpi`, rank r on device r, the unique id from
 * rank 0 broadcast with MPI, nnp_comm_init_rank() on every rank. Each
 * rank checks its own results; rank 0 prints one TAP line per check with
 * the failures of all ranks summed by MPI. With NNP_JOB=BASE:N the MPI
 * world is ranks BASE.. of a larger nnp job spread over several machines
 * (each runs its own mpirun; NNP_COMM_ID names the job's rendezvous).
 * Last, the job splits by rank parity (its halves' rings cross the other
 * half's chips where they share no link) and checks each half, and a
 * group of allreduces runs fused (NNP_GROUP_FUSION=1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <nnp/nnp.h>

#include "coll_data.h"
#include "device_counters.h"

#define COUNT	100003	/* elements: not a multiple of any ring size */

/* This rank of the nnp job, and this process among the MPI world's. */
static int rank, nranks, local, local_n, checks;
static nnp_device_t *dev;
static nnp_stream_t *stream;
static nnp_comm_t *comm;
static nnp_mem_t *in, *out, *host;

/* One TAP line for all ranks: ok if no rank counted a failure. */
static void report(const char *what, long bad)
{
	long total = 0;

	MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (!local)
		printf("%sok %d - %s%s\n", total ? "not " : "", ++checks, what,
		       total ? " (failures on some rank)" : "");
	fflush(stdout);
}

/* Put @n elements of this rank's input (op @op) on the device. */
static long stage(nnp_dtype_t t, nnp_redop_t op, size_t n)
{
	void *h;
	size_t i;

	nnp_mem_map(host, &h);
	for (i = 0; i < n; i++)
		put(t, h, i, input(rank, i, op));
	return nnp_memcpy_async(stream, in, 0, host, 0, n * dtype_bytes(t)) ||
	       nnp_stream_synchronize(stream);
}

/* Bring @n elements of the result back; NULL on failure. */
static const void *fetch(nnp_dtype_t t, size_t n)
{
	void *h;

	if (nnp_stream_synchronize(stream) ||
	    nnp_memcpy_async(stream, host, 0, out, 0, n * dtype_bytes(t)) ||
	    nnp_stream_synchronize(stream))
		return NULL;
	nnp_mem_map(host, &h);
	return h;
}

/*
 * @v summed over every rank of the nnp job by the devices (MPI's world
 * may be one machine's ranks of it); *@bad counts a failure.
 */
static uint64_t job_sum(uint64_t v, long *bad)
{
	const void *h;
	void *m;
	uint64_t sum = 0;

	nnp_mem_map(host, &m);
	memcpy(m, &v, sizeof(v));
	*bad += nnp_memcpy_async(stream, in, 0, host, 0, sizeof(v)) != 0;
	*bad += nnp_allreduce(in, 0, out, 0, 1, NNP_INT64, NNP_SUM, comm, stream) != 0;
	h = fetch(NNP_INT64, 1);
	if (h)
		memcpy(&sum, h, sizeof(sum));
	*bad += !h;
	return sum;
}

static long allreduce_case(nnp_dtype_t t, nnp_redop_t op, size_t count)
{
	nnp_mem_t *dst = (t + op + count) & 1 ? in : out;
	const void *h;
	long bad = stage(t, op, count);
	size_t i;

	bad += nnp_allreduce(in, 0, dst, 0, count, t, op, comm, stream) != NNP_SUCCESS;
	if (dst == in)
		bad += nnp_memcpy_async(stream, out, 0, in, 0, count * dtype_bytes(t)) != 0;
	h = fetch(t, count);
	if (!h)
		return bad + 1;
	for (i = 0; i < count; i++)
		bad += !reduced_ok(t, op, nranks, i, get(t, h, i));
	return bad;
}

static long other_cases(nnp_dtype_t t)
{
	size_t count = 7001, i;
	const void *h;
	long bad = 0;
	int root, op;

	for (root = 0; root < nranks; root++) {
		bad += stage(t, NNP_SUM, count);
		bad += nnp_broadcast(in, 0, out, 0, count, t, root, comm, stream) != 0;
		h = fetch(t, count);
		for (i = 0; h && i < count; i++)
			bad += get(t, h, i) != input(root, i, NNP_SUM);
	}
	bad += stage(t, NNP_SUM, count);
	bad += nnp_allgather(in, 0, out, 0, count, t, comm, stream) != 0;
	h = fetch(t, count * nranks);
	for (i = 0; h && i < count * nranks; i++)
		bad += get(t, h, i) != input((int)(i / count), i % count, NNP_SUM);
	for (op = NNP_SUM; op <= NNP_AVG; op++) {
		bad += stage(t, op, count * nranks);
		bad += nnp_reduce_scatter(in, 0, out, 0, count, t, op, comm, stream) != 0;
		h = fetch(t, count);
		for (i = 0; h && i < count; i++)
			bad += !reduced_ok(t, op, nranks, rank * count + i, get(t, h, i));
	}
	return bad;
}

/*
 * Reduce to the last rank, gather to and scatter from rank 0, alltoall,
 * and a message to the rank half the job away: messages routed through
 * the chips between where no link joins two ranks (across chassis too);
 * then one back, each rank posting its receive before its send, in a
 * group (hardware 1.13).
 */
static long any_rank_cases(nnp_dtype_t t)
{
	int root = nranks - 1, to = (rank + nranks / 2) % nranks;
	int from = (rank + nranks - nranks / 2) % nranks, op;
	size_t count = 3001, i;
	const void *h;
	long bad = 0;

	for (op = NNP_SUM; op <= NNP_AVG; op++) {
		bad += stage(t, op, count);
		bad += nnp_reduce(in, 0, rank == root ? out : NULL, 0, count, t, op,
				  root, comm, stream) != 0;
		h = rank == root ? fetch(t, count) : NULL;
		bad += rank == root ? !h : nnp_stream_synchronize(stream) != 0;
		for (i = 0; h && i < count; i++)
			bad += !reduced_ok(t, op, nranks, i, get(t, h, i));
	}
	bad += stage(t, NNP_SUM, count * nranks);
	bad += nnp_alltoall(in, 0, out, 0, count, t, comm, stream) != 0;
	h = fetch(t, count * nranks);
	bad += !h;
	for (i = 0; h && i < count * nranks; i++)
		bad += get(t, h, i) !=
		       input((int)(i / count), rank * count + i % count, NNP_SUM);
	bad += nnp_gather(in, 0, rank ? NULL : out, 0, count, t, 0, comm, stream) != 0;
	h = rank ? NULL : fetch(t, count * nranks);
	bad += rank ? nnp_stream_synchronize(stream) != 0 : !h;
	for (i = 0; h && i < count * nranks; i++)
		bad += get(t, h, i) != input((int)(i / count), i % count, NNP_SUM);
	bad += nnp_scatter(rank ? NULL : in, 0, out, 0, count, t, 0, comm, stream) != 0;
	h = fetch(t, count);
	bad += !h;
	for (i = 0; h && i < count; i++)
		bad += get(t, h, i) != input(0, rank * count + i, NNP_SUM);
	if (nranks < 2)
		return bad;
	bad += nnp_send(in, 0, count, t, to, comm, stream) != 0;
	bad += nnp_recv(out, 0, count, t, from, comm, stream) != 0;
	h = fetch(t, count);
	bad += !h;
	for (i = 0; h && i < count; i++)
		bad += get(t, h, i) != input(from, i, NNP_SUM);
	/* Receive first, in a group: one after another it waits on itself. */
	bad += nnp_group_start() != 0;
	bad += nnp_recv(out, 0, count, t, to, comm, stream) != 0;
	bad += nnp_send(in, 0, count, t, from, comm, stream) != 0;
	bad += nnp_group_end() != 0;
	h = fetch(t, count);
	bad += !h;
	for (i = 0; h && i < count; i++)
		bad += get(t, h, i) != input(to, i, NNP_SUM);
	return bad;
}

/*
 * 32 allreduces of 16 floats in one group, on a communicator split from
 * the job's (one color) with NNP_GROUP_FUSION=1: the device runs them as
 * one allreduce (hardware interface 1.25), between chassis too; each is
 * exact on every rank.
 */
static long fused_cases(void)
{
	nnp_comm_t *fusing = NULL;
	const void *h;
	long bad;
	size_t i;
	int k;

	setenv("NNP_GROUP_FUSION", "1", 1);
	bad = nnp_comm_split(comm, 0, rank, &fusing) != NNP_SUCCESS;
	unsetenv("NNP_GROUP_FUSION");
	if (bad) {
		printf("# rank %d: nnp_comm_split: %s\n", rank, nnp_get_last_error());
		return bad;
	}
	bad += stage(NNP_FLOAT32, NNP_SUM, 32 * 16);
	bad += nnp_group_start() != 0;
	for (k = 0; k < 32; k++)
		bad += nnp_allreduce(in, (size_t)k * 64, out, (size_t)k * 64, 16,
				     NNP_FLOAT32, NNP_SUM, fusing, stream) != 0;
	bad += nnp_group_end() != 0;
	h = fetch(NNP_FLOAT32, 32 * 16);
	bad += !h;
	for (i = 0; h && i < 32 * 16; i++)
		bad += !reduced_ok(NNP_FLOAT32, NNP_SUM, nranks, i,
				   get(NNP_FLOAT32, h, i));
	if (bad)
		printf("# rank %d: fused group: %ld failures, last error: %s\n", rank,
		       bad, nnp_get_last_error());
	/* Every rank done with it before any destroys it (see split_cases()). */
	bad += nnp_allreduce(in, 0, out, 0, 1, NNP_INT32, NNP_SUM, comm, stream) != 0;
	bad += nnp_stream_synchronize(stream) != 0;
	nnp_comm_destroy(fusing);
	return bad;
}

/*
 * nnp_comm_split() by rank parity: where a half's chips share no link (a
 * ring's every other chip, across chassis too) its ring crosses chips of
 * the other half as transits. Each half's allreduce is its own members'
 * exact sum, and a message to the next rank of the half, posted receive
 * first in a group, comes byte for byte.
 */
static long split_cases(void)
{
	int parity = rank % 2, n, me, from, to, m;
	size_t count = 30011, i;
	nnp_comm_t *half = NULL;
	const void *h;
	long bad;

	bad = nnp_comm_split(comm, parity, rank, &half) != NNP_SUCCESS;
	if (bad) {
		printf("# rank %d: nnp_comm_split: %s\n", rank, nnp_get_last_error());
		return bad;
	}
	n = nnp_comm_count(half);
	me = nnp_comm_rank(half);
	bad += me != rank / 2 || n != (nranks + 1 - parity) / 2;
	bad += stage(NNP_INT32, NNP_SUM, count);
	bad += nnp_allreduce(in, 0, out, 0, count, NNP_INT32, NNP_SUM, half, stream) != 0;
	h = fetch(NNP_INT32, count);
	bad += !h;
	for (i = 0; h && i < count; i++) {
		double want = 0;

		for (m = parity; m < nranks; m += 2)
			want += input(m, i, NNP_SUM);
		bad += get(NNP_INT32, h, i) != want;
	}
	from = (me + n - 1) % n;
	to = (me + 1) % n;
	bad += nnp_group_start() != 0;
	bad += nnp_recv(out, 0, count, NNP_INT32, from, half, stream) != 0;
	bad += nnp_send(in, 0, count, NNP_INT32, to, half, stream) != 0;
	bad += nnp_group_end() != 0;
	h = fetch(NNP_INT32, count);
	bad += !h;
	for (i = 0; h && n > 1 && i < count; i++)
		bad += get(NNP_INT32, h, i) != input(from * 2 + parity, i, NNP_SUM);
	if (bad)
		printf("# rank %d: split: %ld failures, last error: %s\n", rank, bad,
		       nnp_get_last_error());
	/*
	 * Every rank of the job done with its half before any ends one, or
	 * its parent and the transits it holds: a chassis's MPI world is not
	 * the job, so the parent's own allreduce is the barrier.
	 */
	bad += nnp_allreduce(out, 0, out, 0, 1, NNP_INT32, NNP_SUM, comm, stream) != 0;
	bad += nnp_stream_synchronize(stream) != 0;
	nnp_comm_destroy(half);
	return bad;
}

int main(int argc, char **argv)
{
	const nnp_dtype_t types[] = { NNP_FLOAT32, NNP_FLOAT16, NNP_BFLOAT16,
				      NNP_INT32, NNP_FLOAT64, NNP_INT64 };
	const size_t counts[] = { 0, 1, 7, 1003, COUNT };
	size_t bytes = (size_t)COUNT * 8 * 8;
	uint64_t dma, tx, tx_total = 0, lo, hi;
	nnp_unique_id_t id;
	nnp_result_t res;
	long bad = 0;
	unsigned int t, k;
	int op;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &local);
	MPI_Comm_size(MPI_COMM_WORLD, &local_n);
	/* NNP_JOB=BASE:N: the world is ranks BASE.. of an N-rank job (chassis). */
	rank = local;
	nranks = local_n;
	if (getenv("NNP_JOB") &&
	    sscanf(getenv("NNP_JOB"), "%d:%d", &rank, &nranks) == 2)
		rank += local;
	if (!local)
		printf("TAP version 13\n1..9\n");
	if (nnp_device_open(local, &dev) || nnp_stream_create(dev, &stream) ||
	    nnp_mem_alloc(dev, NNP_MEM_DEVICE, bytes, 0, &in) ||
	    nnp_mem_alloc(dev, NNP_MEM_DEVICE, bytes, 0, &out) ||
	    nnp_mem_alloc(dev, NNP_MEM_HOST, bytes, 0, &host)) {
		fprintf(stderr, "coll_mpi: rank %d: cannot set up device %d\n", rank, local);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (!local && nnp_get_unique_id(&id) != NNP_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	res = nnp_comm_init_rank(&comm, nranks, &id, rank, dev);
	if (res != NNP_SUCCESS)
		printf("# rank %d: nnp_comm_init_rank: %s\n", rank, nnp_strerror(res));
	bad = res != NNP_SUCCESS;
	report("nnp_comm_init_rank on every rank, id broadcast with MPI", bad);
	if (bad)
		MPI_Abort(MPI_COMM_WORLD, 1);
	report("rank and count of each communicator",
	       nnp_comm_rank(comm) != rank || nnp_comm_count(comm) != nranks);

	bad = 0;
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			for (op = NNP_SUM; op <= NNP_AVG; op++)
				bad += allreduce_case(types[t], op, counts[k]);
	report("allreduce: every type, op and count, exact on every rank", bad);

	bad = 0;
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		bad += other_cases(types[t]);
	report("broadcast from every root, allgather, reduce-scatter", bad);

	bad = 0;
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		bad += any_rank_cases(types[t]);
	report("reduce, alltoall, gather, scatter, a message half the job away, and back receive first in a group",
	       bad);

	/* During the collective: no host DMA, the ring's share on the links. */
	bad = stage(NNP_FLOAT32, NNP_SUM, COUNT);
	MPI_Barrier(MPI_COMM_WORLD);
	dma = host_dma_bytes(dev);
	tx = icl_tx(dev);
	bad += nnp_allreduce(in, 0, out, 0, COUNT, NNP_FLOAT32, NNP_SUM, comm, stream) != 0;
	bad += nnp_stream_synchronize(stream) != 0;
	bad += host_dma_bytes(dev) != dma;
	tx = icl_tx(dev) - tx;
	/* Its share, as its algorithm's segments round it. */
	allreduce_tx_bounds(COUNT, 4, nranks, &lo, &hi);
	bad += tx < lo || tx > hi;
	/* All of them: 2(n-1) x the buffer, on a ring and on a torus alike. */
	tx_total = job_sum(tx, &bad);
	bad += tx_total != 2ull * (nranks - 1) * COUNT * 4;
	if (!local)
		printf("# link bytes of all %d ranks: %llu for %zu bytes\n", nranks,
		       (unsigned long long)tx_total, (size_t)COUNT * 4);
	report("no host DMA during the allreduce; links carry 2(n-1)/n per rank", bad);

	report("split by parity, over transits where a half shares no link: allreduce and messages exact",
	       split_cases());
	report("32 allreduces in a group on a communicator made with NNP_GROUP_FUSION=1: exact",
	       fused_cases());

	nnp_comm_destroy(comm);
	nnp_mem_free(in);
	nnp_mem_free(out);
	nnp_mem_free(host);
	nnp_stream_destroy(stream);
	nnp_device_close(dev);
	report("teardown", 0);
	MPI_Finalize();
	return 0;
}
