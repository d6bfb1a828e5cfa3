// SPDX-License-Identifier: MIT
/*
 * Allreduce across every nnp device of the VM, joined by a ring fabric:
 * exact results for each type and op on every rank, in and out of place,
 * no byte over host DMA and exactly the ring's bytes over the links; and a
 * clear NNP_ERROR_NO_PATH when the chips are not joined.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>

#include "guest_env.h"
#include "kselftest_harness.h"

#define MAXDEV 8

static struct drm_nnp_counters counters(nnp_device_t *dev)
{
	struct drm_nnp_counters c;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};

	memset(&c, 0xee, sizeof(c));
	ioctl(nnp_device_fd(dev), DRM_IOCTL_NNP_QUERY, &q);
	return c;
}

static uint64_t icl_tx(nnp_device_t *dev)
{
	struct nnp_port_info p[NNP_MAX_PORTS];
	unsigned int n = 0, i;
	uint64_t tx = 0;

	nnp_device_get_ports(dev, p, NNP_MAX_PORTS, &n);
	for (i = 0; i < n; i++)
		tx += p[i].tx_bytes;
	return tx;
}

static double input(int rank, size_t i, nnp_redop_t op)
{
	if (op == NNP_PROD)
		return ((i + rank) % 3 == 0) ? -1.0 : 1.0;
	return (double)((i * 5 + rank * 3) % 9) - 4.0;
}

static void put(nnp_dtype_t t, void *p, size_t i, double v)
{
	switch (t) {
	case NNP_FLOAT32: ((float *)p)[i] = (float)v; break;
	case NNP_FLOAT64: ((double *)p)[i] = v; break;
	case NNP_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case NNP_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	default: break;
	}
}

static double get(nnp_dtype_t t, const void *p, size_t i)
{
	switch (t) {
	case NNP_FLOAT32: return ((const float *)p)[i];
	case NNP_FLOAT64: return ((const double *)p)[i];
	case NNP_INT32: return ((const int32_t *)p)[i];
	case NNP_INT64: return (double)((const int64_t *)p)[i];
	default: return 0;
	}
}

static double want(nnp_dtype_t t, nnp_redop_t op, int n, size_t i)
{
	double acc = input(0, i, op);
	int r;

	for (r = 1; r < n; r++) {
		double v = input(r, i, op);

		acc = op == NNP_PROD ? acc * v : op == NNP_MIN ? (v < acc ? v : acc) :
		      op == NNP_MAX ? (v > acc ? v : acc) : acc + v;
	}
	if (op == NNP_AVG) {
		if (t == NNP_INT32 || t == NNP_INT64)
			return (double)((int64_t)acc / n);
		return t == NNP_FLOAT32 ? (double)((float)acc / (float)n) : acc / n;
	}
	return acc;
}

FIXTURE(ring) {
	int n;
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	nnp_mem_t *send[MAXDEV], *recv[MAXDEV], *host[MAXDEV];
};

#define COUNT 100003	/* not a multiple of any ring size */

FIXTURE_SETUP(ring)
{
	int r;

	self->n = GUEST_CHIPS;
	ASSERT_GE(self->n, 2);
	for (r = 0; r < self->n; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(r, &self->dev[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[r], &self->s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
						     COUNT * 8, 0, &self->send[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
						     COUNT * 8, 0, &self->recv[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_HOST,
						     COUNT * 8, 0, &self->host[r]));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->dev, self->n, self->comm));
}

FIXTURE_TEARDOWN(ring)
{
	int r;

	for (r = 0; r < self->n; r++) {
		nnp_comm_destroy(self->comm[r]);
		nnp_mem_free(self->send[r]);
		nnp_mem_free(self->recv[r]);
		nnp_mem_free(self->host[r]);
		nnp_stream_destroy(self->s[r]);
		nnp_device_close(self->dev[r]);
	}
}

TEST_F(ring, allreduce_every_type_and_op_exact_on_every_rank)
{
	static const nnp_dtype_t types[] = { NNP_FLOAT32, NNP_INT32, NNP_FLOAT64,
					     NNP_INT64 };
	const size_t count = 1003;
	unsigned int t;
	int op, r;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (op = NNP_SUM; op <= NNP_AVG; op++) {
			bool in_place = (t + op) & 1;

			/* Inputs go to the device by DMA before the collective. */
			for (r = 0; r < self->n; r++) {
				void *h;
				size_t i;

				ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(self->host[r], &h));
				for (i = 0; i < count; i++)
					put(types[t], h, i, input(r, i, op));
				ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s[r],
					  self->send[r], 0, self->host[r], 0, count * 8));
				ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
			}
			for (r = 0; r < self->n; r++)
				ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->send[r], 0,
					  in_place ? self->send[r] : self->recv[r], 0, count,
					  types[t], op, self->comm[r], self->s[r]));
			for (r = 0; r < self->n; r++) {
				nnp_mem_t *out = in_place ? self->send[r] : self->recv[r];
				void *h;
				size_t i;

				ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
				ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s[r],
					  self->host[r], 0, out, 0, count * 8));
				ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
				nnp_mem_map(self->host[r], &h);
				for (i = 0; i < count; i++)
					ASSERT_EQ(want(types[t], op, self->n, i),
						  get(types[t], h, i))
						TH_LOG("type %u op %d rank %d element %zu",
						       t, op, r, i);
			}
		}
	}
}

/* Payload never crosses the host; the links carry 2(n-1)/n of it. */
TEST_F(ring, allreduce_moves_no_host_bytes_and_the_ring_share_over_links)
{
	struct drm_nnp_counters before[MAXDEV], after;
	uint64_t tx_before[MAXDEV], bytes = (uint64_t)COUNT * 4, total_tx = 0;
	int r, n = self->n;

	for (r = 0; r < n; r++) {
		before[r] = counters(self->dev[r]);
		tx_before[r] = icl_tx(self->dev[r]);
	}
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->send[r], 0, self->recv[r], 0,
						     COUNT, NNP_FLOAT32, NNP_SUM,
						     self->comm[r], self->s[r]));
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
	for (r = 0; r < n; r++) {
		/*
		 * Each rank sends all segments but two, whichever two its
		 * place on the ring makes them: the segments differ by at
		 * most one element.
		 */
		uint64_t tx = icl_tx(self->dev[r]) - tx_before[r];
		uint64_t seg_lo = COUNT / n * 4;

		total_tx += tx;
		EXPECT_GE(tx, 2 * bytes - 2 * (seg_lo + 4));
		EXPECT_LE(tx, 2 * bytes - 2 * seg_lo);
		after = counters(self->dev[r]);
		EXPECT_EQ(before[r].host_dma_bytes, after.host_dma_bytes);
		EXPECT_EQ(before[r].cmds_completed + 1, after.cmds_completed);
	}
	/* All together: 2(n-1)/n of the buffer from each of n ranks. */
	EXPECT_EQ(2 * (uint64_t)(n - 1) * bytes, total_tx);
}

TEST(unjoined_chips_have_no_path)
{
	struct nnp_port_info p[NNP_MAX_PORTS];
	struct nnp_device_info info;
	nnp_device_t *dev[2];
	nnp_comm_t *comm[2];
	unsigned int np = 0, i;
	int k;

	/* The same chip twice is a mistake, not a ring. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev[1]));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_comm_init_all(dev, 2, comm));
	EXPECT_EQ(NULL, comm[0]);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_comm_init_all(dev, 0, comm));
	nnp_device_close(dev[1]);

	/* Two chips with no link between them have no ring. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_ports(dev[0], p, NNP_MAX_PORTS, &np));
	for (k = 1; k < GUEST_CHIPS; k++) {
		bool linked = false;

		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(k, &dev[1]));
		ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev[1], &info));
		for (i = 0; i < np; i++)
			linked |= (p[i].state & NNP_LINK_UP) && p[i].peer_chip == info.chip_id;
		if (!linked) {
			EXPECT_EQ(NNP_ERROR_NO_PATH, nnp_comm_init_all(dev, 2, comm));
			EXPECT_EQ(NULL, comm[1]);
		}
		nnp_device_close(dev[1]);
	}
	nnp_device_close(dev[0]);
}

TEST_HARNESS_MAIN
