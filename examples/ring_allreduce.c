// SPDX-License-Identifier: MIT
/*
 * One allreduce across every nnp device of this host, and the device
 * counters that show where its bytes went: each chip's host DMA bytes
 * (nothing may cross the host) and the bytes it sent on its links (a ring
 * allreduce of S bytes on n chips sends exactly 2(n-1)/n x S from each).
 * The counters are read just before and just after the allreduce, so the
 * copies that load the inputs and fetch the result are outside the window.
 * Exits 1 unless both hold and every chip holds the exact sum.
 *
 * Build: cc ring_allreduce.c $(pkg-config --cflags --libs nnp)
 * Run:   ring_allreduce [MiB]   (default 16, per device)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <drm/nnp_accel.h>
#include <nnp/nnp.h>

#define MAXDEV 64

struct counters {
	uint64_t host_dma;	/* bytes the device's queues moved to or from the host */
	uint64_t link_tx;	/* bytes sent on all of its ports */
};

/* Every device of the host, rank k on device k. */
static struct job {
	int n;
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	nnp_mem_t *send[MAXDEV], *recv[MAXDEV], *host[MAXDEV];
} g;

static int fail(const char *what, nnp_result_t r)
{
	fprintf(stderr, "ring_allreduce: %s: %s\n", what, nnp_strerror(r));
	return 1;
}

static int counters_failed(void)
{
	perror("ring_allreduce: reading the device counters");
	return 1;
}

/* The driver's counters (DRM_NNP_QUERY_COUNTERS) and the ports' totals. */
static int read_counters(nnp_device_t *dev, struct counters *c)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
	struct drm_nnp_counters dc;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(dc),
		.data = (uintptr_t)&dc,
	};
	unsigned int n = 0, i;

	if (ioctl(nnp_device_fd(dev), DRM_IOCTL_NNP_QUERY, &q) ||
	    q.size < sizeof(dc.host_dma_bytes) ||
	    nnp_device_get_ports(dev, p, NNP_MAX_PORTS, &n) != NNP_SUCCESS)
		return -1;
	c->host_dma = dc.host_dma_bytes;
	c->link_tx = 0;
	for (i = 0; i < n && i < NNP_MAX_PORTS; i++)
		c->link_tx += p[i].tx_bytes;
	return 0;
}

/* Rank @r's input; the sum over n ranks is n * (i % 7) + n(n-1)/2, exact. */
static float input(int r, size_t i)
{
	return (float)(i % 7 + (size_t)r);
}

static nnp_result_t setup(size_t bytes)
{
	nnp_result_t r = NNP_SUCCESS;
	int k;

	for (k = 0; k < g.n && r == NNP_SUCCESS; k++) {
		r = nnp_device_open(k, &g.dev[k]);
		if (r == NNP_SUCCESS)
			r = nnp_stream_create(g.dev[k], &g.s[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(g.dev[k], NNP_MEM_DEVICE, bytes, 0, &g.send[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(g.dev[k], NNP_MEM_DEVICE, bytes, 0, &g.recv[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(g.dev[k], NNP_MEM_HOST, bytes, 0, &g.host[k]);
	}
	return r;
}

/* Each rank's input into its device memory: host DMA, before the window. */
static nnp_result_t load(size_t count)
{
	nnp_result_t r = NNP_SUCCESS;
	int k;

	for (k = 0; k < g.n && r == NNP_SUCCESS; k++) {
		float *h;
		size_t i;

		r = nnp_mem_map(g.host[k], (void **)&h);
		if (r != NNP_SUCCESS)
			break;
		for (i = 0; i < count; i++)
			h[i] = input(k, i);
		r = nnp_memcpy_async(g.s[k], g.send[k], 0, g.host[k], 0,
				     count * sizeof(float));
		if (r == NNP_SUCCESS)
			r = nnp_stream_synchronize(g.s[k]);
	}
	return r;
}

/* Elements of every rank's result that are not the sum; -1 on error. */
static long long wrong_elements(size_t count)
{
	long long wrong = 0;
	int k;

	for (k = 0; k < g.n; k++) {
		float *h;
		size_t i;

		if (nnp_memcpy_async(g.s[k], g.host[k], 0, g.recv[k], 0,
				     count * sizeof(float)) != NNP_SUCCESS ||
		    nnp_stream_synchronize(g.s[k]) != NNP_SUCCESS ||
		    nnp_mem_map(g.host[k], (void **)&h) != NNP_SUCCESS)
			return -1;
		for (i = 0; i < count; i++)
			wrong += h[i] != (float)(g.n * (i % 7) + g.n * (g.n - 1) / 2);
	}
	return wrong;
}

static void print_window(const struct counters *before,
			 const struct counters *after, uint64_t expect,
			 int *host_bytes, int *off_share)
{
	int k;

	printf("%-5s %18s %18s %18s\n", "chip", "host DMA bytes", "link bytes sent",
	       "2(n-1)/n x S");
	for (k = 0; k < g.n; k++) {
		uint64_t dma = after[k].host_dma - before[k].host_dma;
		uint64_t tx = after[k].link_tx - before[k].link_tx;
		struct nnp_device_info info = { .size = sizeof(info) };

		if (nnp_device_get_info(g.dev[k], &info) != NNP_SUCCESS)
			info.chip_id = (uint32_t)k;
		printf("%-5" PRIu32 " %18" PRIu64 " %18" PRIu64 " %18" PRIu64 "%s\n",
		       info.chip_id, dma, tx, expect, tx == expect ? "" : "  <- wrong");
		*host_bytes += dma != 0;
		*off_share += tx != expect;
	}
}

int main(int argc, char **argv)
{
	struct counters before[MAXDEV], after[MAXDEV];
	int host_bytes = 0, off_share = 0, k;
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
	size_t count, bytes;
	uint64_t expect;
	long long wrong;
	nnp_result_t r;

	r = nnp_device_count(&g.n);
	if (r != NNP_SUCCESS)
		return fail("no devices", r);
	if (g.n < 2 || g.n > MAXDEV || mib < 1 || mib > 1024) {
		fprintf(stderr, "ring_allreduce: needs 2..%d devices (found %d) and 1..1024 MiB\n",
			MAXDEV, g.n);
		return 1;
	}
	/* A whole number of floats per rank: then each chip's share is exact. */
	count = mib * 1024 * 1024 / sizeof(float) / (size_t)g.n * (size_t)g.n;
	bytes = count * sizeof(float);
	expect = 2 * (uint64_t)(g.n - 1) * bytes / (uint64_t)g.n;
	r = setup(bytes);
	if (r != NNP_SUCCESS)
		return fail("device setup", r);
	r = nnp_comm_init_all(g.dev, g.n, g.comm);
	if (r != NNP_SUCCESS)
		return fail("nnp_comm_init_all (are the chips linked?)", r);
	r = load(count);
	if (r != NNP_SUCCESS)
		return fail("loading the inputs", r);
	printf("allreduce (sum, float32) of S = %zu bytes on each of %d devices,\n"
	       "device memory to device memory over the inter-chip links.\n"
	       "Counters read just before and just after it, per chip:\n\n",
	       bytes, g.n);
	for (k = 0; k < g.n; k++)
		if (read_counters(g.dev[k], &before[k]))
			return counters_failed();
	for (k = 0; k < g.n && r == NNP_SUCCESS; k++)
		r = nnp_allreduce(g.send[k], 0, g.recv[k], 0, count, NNP_FLOAT32,
				  NNP_SUM, g.comm[k], g.s[k]);
	for (k = 0; k < g.n && r == NNP_SUCCESS; k++)
		r = nnp_stream_synchronize(g.s[k]);
	if (r != NNP_SUCCESS)
		return fail("nnp_allreduce", r);
	for (k = 0; k < g.n; k++)
		if (read_counters(g.dev[k], &after[k]))
			return counters_failed();
	print_window(before, after, expect, &host_bytes, &off_share);
	wrong = wrong_elements(count);
	printf("\nhost: %s\n", host_bytes ? "payload bytes crossed the host" :
	       "0 payload bytes crossed the host on any chip");
	printf("links: %s 2(n-1)/n x S = 2x%d/%d x %zu = %" PRIu64 " bytes\n",
	       off_share ? "NOT every chip sent" : "every chip sent exactly",
	       g.n - 1, g.n, bytes, expect);
	printf("result: %lld wrong elements of %zu on %d devices (each must be the sum of the %d inputs)\n",
	       wrong, count * (size_t)g.n, g.n, g.n);
	for (k = 0; k < g.n; k++) {
		nnp_comm_destroy(g.comm[k]);
		nnp_mem_free(g.send[k]);
		nnp_mem_free(g.recv[k]);
		nnp_mem_free(g.host[k]);
		nnp_stream_destroy(g.s[k]);
		nnp_device_close(g.dev[k]);
	}
	if (host_bytes || off_share || wrong) {
		printf("ring_allreduce: FAILED\n");
		return 1;
	}
	printf("ring_allreduce: ok\n");
	return 0;
}
