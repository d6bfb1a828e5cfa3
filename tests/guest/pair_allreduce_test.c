// SPDX-License-Identifier: MIT
/*
 * One rank of an allreduce job whose ranks live in separate VMs (QEMU
 * processes), joined by ICL socket links: rank and job size from
 * NNP_JOB=RANK:NRANKS, the rendezvous at NNP_COMM_ID (with
 * NNP_COMM_SECRET), device 0 of this VM as the rank's chip. Run by
 * tests/vm/icl_socket_shared.sh.
 *
 * First one allreduce of MiB (default 16) of f32, with the device's
 * counters read just before and after it: the sum exact, no host DMA
 * bytes, and (on the ring, NNP_ALGO=ring) exactly 2(n-1)/n of the buffer
 * sent. Then, with ITERS > 0, ITERS timed allreduces of the same buffer:
 * "BENCH bytes=B iters=N us_per_allreduce=T busbw_gbps=G" (busbw as
 * nccl-tests: 2(n-1)/n S over the time), a figure to compare, not a test.
 *
 * Usage: pair_allreduce_test [MiB [ITERS]]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nnp/nnp.h>

#include "device_counters.h"

static float input(int rank, size_t i)
{
	return (float)((i * 7 + (size_t)rank * 3) % 11);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 16;
	int iters = argc > 2 ? atoi(argv[2]) : 0;
	size_t bytes = mib << 20, count = bytes / sizeof(float), i, bad = 0;
	nnp_mem_t *send, *recv, *host;
	uint64_t dma0, tx0, dma, tx, lo, hi;
	int rank = 0, nranks = 1, k;
	nnp_unique_id_t id;
	nnp_device_t *dev;
	nnp_stream_t *s;
	nnp_comm_t *comm;
	double t0, t;
	float *h;

	if (!getenv("NNP_JOB") ||
	    sscanf(getenv("NNP_JOB"), "%d:%d", &rank, &nranks) != 2 ||
	    !mib || !bytes) {
		fprintf(stderr, "usage: NNP_JOB=RANK:NRANKS pair_allreduce_test [MiB [ITERS]]\n");
		return 2;
	}
	printf("TAP version 13\n1..2\n");
	if (nnp_device_open(0, &dev) || nnp_stream_create(dev, &s) ||
	    nnp_mem_alloc(dev, NNP_MEM_DEVICE, bytes, 0, &send) ||
	    nnp_mem_alloc(dev, NNP_MEM_DEVICE, bytes, 0, &recv) ||
	    nnp_mem_alloc(dev, NNP_MEM_HOST, bytes, 0, &host) ||
	    nnp_mem_map(host, (void **)&h)) {
		printf("not ok 1 - rank %d: set up device 0: %s\n", rank,
		       nnp_get_last_error());
		return 1;
	}
	for (i = 0; i < count; i++)
		h[i] = input(rank, i);
	if (nnp_memcpy_async(s, send, 0, host, 0, bytes) ||
	    nnp_stream_synchronize(s) || nnp_get_unique_id(&id) ||
	    nnp_comm_init_rank(&comm, nranks, &id, rank, dev)) {
		printf("not ok 1 - rank %d: %s\n", rank, nnp_get_last_error());
		return 1;
	}

	dma0 = host_dma_bytes(dev);
	tx0 = icl_tx(dev);
	if (nnp_allreduce(send, 0, recv, 0, count, NNP_FLOAT32, NNP_SUM, comm, s) ||
	    nnp_stream_synchronize(s)) {
		printf("not ok 1 - rank %d: allreduce: %s\n", rank, nnp_get_last_error());
		return 1;
	}
	dma = host_dma_bytes(dev) - dma0;
	tx = icl_tx(dev) - tx0;
	if (nnp_memcpy_async(s, host, 0, recv, 0, bytes) || nnp_stream_synchronize(s))
		return 1;
	for (i = 0; i < count; i++) {
		float want = 0;

		for (k = 0; k < nranks; k++)
			want += input(k, i);
		bad += h[i] != want;
	}
	printf("%sok 1 - rank %d: allreduce of %zu MiB exact (%zu wrong)\n",
	       bad ? "not " : "", rank, mib, bad);
	allreduce_tx_bounds(count, sizeof(float), nranks, &lo, &hi);
	printf("# rank %d: link_tx_bytes=%" PRIu64 " host_dma_bytes=%" PRIu64 "\n",
	       rank, tx, dma);
	printf("%sok 2 - rank %d: %" PRIu64 " bytes on the links (%" PRIu64
	       "..%" PRIu64 "), none through the host\n",
	       tx >= lo && tx <= hi && !dma ? "" : "not ", rank, tx, lo, hi);

	if (iters > 0) {
		t0 = now_s();
		for (k = 0; k < iters; k++)
			if (nnp_allreduce(send, 0, recv, 0, count, NNP_FLOAT32,
					  NNP_SUM, comm, s))
				return 1;
		if (nnp_stream_synchronize(s))
			return 1;
		t = (now_s() - t0) / iters;
		printf("BENCH bytes=%zu iters=%d us_per_allreduce=%.1f busbw_gbps=%.3f\n",
		       bytes, iters, t * 1e6,
		       2.0 * (nranks - 1) / nranks * (double)bytes / t / 1e9);
	}
	nnp_comm_destroy(comm);
	return bad || tx < lo || tx > hi || dma;
}
