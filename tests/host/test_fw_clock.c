// SPDX-License-Identifier: MIT
/*
 * The firmware simulator's modeled clock (fw_clock.c): ring allreduce
 * against the alpha-beta formula of a ring whose steps pipeline chunk by
 * chunk (ring_ns()), alpha and B fitted over a sweep of n and S; the same
 * modeled times whatever
 * the host's threads and delays; busy times and link bytes exact;
 * TIMESTAMP and FILL on the modeled clock.
 *
 * In detail (docs/testing.md has the summary):
 * the modeled clock (`firmware-sim/src/base/fw_clock.c`): in-place f32 ring
 * allreduce on 2, 3, 4 and 8 in-process chips of 4 KiB to 512 KiB a rank,
 * each chip's modeled time exactly overhead + max(L k w + alpha, L (w +
 * alpha) + (k-1) w) with device memory made free (L = 2(n-1) steps of k
 * chunks of wire time w: the steps pipeline chunk by chunk, so the latency
 * is paid once when it fits in k-1 chunks' wire time, else once a step),
 * and least squares over the points of both cases giving back B, alpha and
 * the overhead within 1%; with NNP-T's defaults (n = 4, 2 MiB) the time is
 * all the chunks' wire time, alpha and the last chunk's copy, and the port,
 * HBM and PCIe busy times are exact; the same modeled times, to the ns,
 * from one thread for all chips and from a thread a chip each napping at
 * random (3 rounds, n = 3 and 8); the same again with the ring's links
 * through the host's transport (`icl_tx` into `nnp_fw_icl_deliver()`, the
 * modeled arrival carried along, as QEMU's sockets do); TIMESTAMP writes
 * overhead, then a FILL of 1 MiB costs 1048 ns at 10^12 B/s, whatever the
 * host clock; link bytes exact; every model read through the admin command
 * GET_MODEL (1.8) as the driver reads it too: field for field
 * `nnp_fw_model_get()`'s, a buffer a byte short BUFFER_TOO_SMALL with
 * nothing written, an argument word INVALID_FIELD; each context's engine
 * times through GET_CTX_USAGE (1.10): the allreduce's whole modeled time
 * less the overhead on the collective engine, TIMESTAMP and FILL's on the
 * copy engine, another context's 0, a context made again starting at 0, an
 * unknown context NOT_FOUND, a short buffer BUFFER_TOO_SMALL
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_harness.h"

#define MAX_CHIPS	8
#define CTX		1
#define COMM		5
#define DATA		0x10000		/* device offset of the buffer */
#define SEG_MAX		(512u << 10)	/* bytes of a ring segment, at most */

/* The windowing of fw_coll.c: chunks of 64 KiB up to a segment of 512 KiB. */
#define CHUNK		(64u << 10)

static struct fw_chip chips[MAX_CHIPS];
static unsigned int nchips;
/* The ring's links go through the host's transport, as across sockets. */
static bool remote;

/* That transport: port 0 reaches the next chip's port 1, port 1 the last. */
static int forward(struct fw_harness *h, unsigned int port, uint64_t epoch,
		   uint32_t seq, bool abort, uint64_t model_ns,
		   const void *data, size_t len)
{
	unsigned int i = 0;

	while (chips[i].h != h)
		i++;
	i = (i + (port ? nchips - 1 : 1)) % nchips;
	nnp_fw_icl_deliver(chips[i].h->fw, !port, epoch, seq, abort, model_ns,
			   data, len);
	return 0;
}

static void wire(unsigned int i, unsigned int n)
{
	struct nnp_fw *a = chips[i].h->fw, *b = chips[(i + 1) % n].h->fw;

	if (!remote) {
		assert_int_equal(nnp_fw_link_connect(a, 0, b, 1), 0);
		return;
	}
	chips[i].h->icl_tx = forward;
	assert_int_equal(nnp_fw_link_attach_remote(a, 0, 7, 1), 0);
	assert_int_equal(nnp_fw_link_attach_remote(b, 1, 7, 0), 0);
	nnp_fw_link_set(a, 0, true);
	nnp_fw_link_set(b, 1, true);
}

/* n chips, chip i port 0 linked to chip i+1 port 1, one communicator. */
static void ring_up(unsigned int n)
{
	unsigned int i;

	memset(chips, 0, sizeof(chips));
	nchips = n;
	for (i = 0; i < n; i++)
		fw_chip_setup(&chips[i], CTX);
	for (i = 0; i < n; i++) {
		struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
		struct nnp_hw_comm_args a = {
			.ctx = CTX, .comm = COMM, .nranks = n, .rank = i,
			.send_port = 0, .recv_port = 1, .epoch = 77,
		};

		/* Two chips make a ring of two links. */
		wire(i, n);
		memcpy(c.args, &a, sizeof(a));
		assert_int_equal(fw_harness_admin(chips[i].h, c, NULL),
				 NNP_STATUS_SUCCESS);
	}
}

static void ring_down(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		void *st = chips[i].h;

		fw_harness_teardown(&st);
	}
}

/*
 * @h's modeled clock as the driver reads it, GET_MODEL (v1.8): the same
 * as an embedder's nnp_fw_model_get(), field for field; nothing written
 * into a buffer a byte short of the block, and an argument word refused.
 */
static void model_of(struct fw_harness *h, struct nnp_fw_model *m)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_MODEL, .addr = H_AQ_DATA,
		.len = sizeof(struct nnp_hw_model),
	};
	struct nnp_hw_model hw;
	uint32_t result;
	unsigned int i;

	assert_int_equal(sizeof(hw), 160);
	nnp_fw_model_get(h->fw, m);
	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	assert_int_equal(result, sizeof(hw));
	memcpy(&hw, fw_harness_host_ptr(h, H_AQ_DATA), sizeof(hw));
	assert_int_equal(hw.now_ns, m->now_ns);
	assert_int_equal(hw.commands, m->commands);
	assert_int_equal(hw.hbm_busy_ns, m->hbm_busy_ns);
	assert_int_equal(hw.pcie_busy_ns, m->pcie_busy_ns);
	for (i = 0; i < NNP_HW_MAX_PORTS; i++)
		assert_int_equal(hw.port_tx_busy_ns[i], m->port_busy_ns[i]);
	c.len--;
	memset(fw_harness_host_ptr(h, H_AQ_DATA), 0xa5, sizeof(hw));
	assert_int_equal(fw_harness_admin(h, c, &result),
			 NNP_STATUS_BUFFER_TOO_SMALL);
	assert_int_equal(*(uint8_t *)fw_harness_host_ptr(h, H_AQ_DATA), 0xa5);
	c.len++;
	c.args[0] = 1;
	assert_int_equal(fw_harness_admin(h, c, &result),
			 NNP_STATUS_INVALID_FIELD);
}

/*
 * Context @ctx's engine times on @h as the driver reads them,
 * GET_CTX_USAGE (v1.10): busy[NNP_HW_ENGINE_*]; a buffer a byte short
 * refused with nothing written.
 */
static void usage_of(struct fw_harness *h, uint32_t ctx, uint64_t *busy)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_CTX_USAGE, .addr = H_AQ_DATA,
		.len = sizeof(struct nnp_hw_ctx_usage), .args = { ctx },
	};
	uint32_t result;

	assert_int_equal(sizeof(struct nnp_hw_ctx_usage), 16);
	c.len--;
	memset(fw_harness_host_ptr(h, H_AQ_DATA), 0xa5, 16);
	assert_int_equal(fw_harness_admin(h, c, &result),
			 NNP_STATUS_BUFFER_TOO_SMALL);
	assert_int_equal(*(uint8_t *)fw_harness_host_ptr(h, H_AQ_DATA), 0xa5);
	c.len++;
	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	assert_int_equal(result, 16);
	memcpy(busy, fw_harness_host_ptr(h, H_AQ_DATA), 16);
}

/*
 * An in-place float allreduce of @seg bytes a rank on a ring of @n, run
 * by one thread for all or (@naps) a thread a chip, each chip sleeping up
 * to @naps us between its turns; @m gets each chip's modeled clock, @busy
 * (if not NULL) its context's engine times.
 */
static void allreduce(unsigned int n, uint64_t seg, unsigned int naps,
		      struct nnp_fw_model *m, uint64_t (*busy)[NNP_HW_ENGINES])
{
	uint64_t count = n * seg / 4;
	struct nnp_hw_queue_cmd cmd = {
		.opcode = NNP_CMD_ALLREDUCE, .len = count,
		.value = NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_SUM, COMM, 0),
	};
	unsigned int c;

	ring_up(n);
	for (c = 0; c < n; c++) {
		float *x = (float *)(chips[c].h->dev_mem + DATA);
		uint64_t i;

		for (i = 0; i < count; i++)
			x[i] = (float)((i + c) % 5);
		cmd.src_key = cmd.dst_key =
			fw_harness_dev_key(chips[c].h, CTX, DATA, count * 4,
					   NNP_KEY_READ | NNP_KEY_WRITE);
		if (naps) {
			chips[c].nap_us = (unsigned int)rand() % naps;
			fw_chip_start(&chips[c], cmd);
		} else {
			fw_chip_post(&chips[c], cmd);
		}
	}
	if (naps)
		for (c = 0; c < n; c++)
			fw_chip_join(&chips[c]);
	else
		fw_chips_run_one_thread(chips, n);
	for (c = 0; c < n; c++) {
		const float *x = (const float *)(chips[c].h->dev_mem + DATA);
		struct nnp_hw_counters k = fw_harness_counters(chips[c].h);
		float want = 0;
		unsigned int r;

		assert_int_equal(chips[c].status, NNP_STATUS_SUCCESS);
		for (r = 0; r < n; r++)
			want += (float)((count - 1 + r) % 5);
		assert_true(x[count - 1] == want);
		/* Link bytes exact: 2(n-1) segments out of each chip. */
		assert_int_equal(k.icl_tx_bytes, 2 * (n - 1) * seg);
		model_of(chips[c].h, &m[c]);
		if (busy)
			usage_of(chips[c].h, CTX, busy[c]);
	}
	ring_down(n);
}

/* Modeled ns to send a segment of @seg bytes in the ring's chunks at @mbps. */
static uint64_t wire_ns(uint64_t seg, uint32_t mbps)
{
	uint64_t ns = 0, left;

	for (left = seg; left; left -= left < CHUNK ? left : CHUNK)
		ns += (left < CHUNK ? left : CHUNK) * 1000 / mbps;
	return ns;
}

/* Chunks of a segment of @seg bytes (all of CHUNK bytes, or one). */
static uint64_t chunks(uint64_t seg)
{
	return seg > CHUNK ? seg / CHUNK : 1;
}

/*
 * Whether a ring step of @seg bytes keeps the port busy: chunk j of a
 * step leaves once the chunk before it is out and chunk j of the step
 * before has arrived, alpha after its wire time w (fw_coll.c's send_at()):
 * the port never waits when alpha is at most (k - 1) w, k chunks a step.
 */
static bool port_bound(uint64_t seg, uint32_t mbps, uint32_t alpha_ns)
{
	return alpha_ns <= (chunks(seg) - 1) * wire_ns(seg / chunks(seg), mbps);
}

/*
 * A ring allreduce of @seg bytes a rank on @n chips, less the command
 * overhead, with memory passes free: its L = 2(n-1) steps pipeline chunk
 * by chunk. Port-bound, the last chunk arrives alpha after all L k
 * chunks' wire time; else every step waits for its first chunk, w + alpha
 * after the step before's, and its other k - 1 follow back to back.
 */
static uint64_t ring_ns(unsigned int n, uint64_t seg, uint32_t mbps,
			uint32_t alpha_ns)
{
	uint64_t L = 2 * (n - 1), w = wire_ns(seg / chunks(seg), mbps);

	if (port_bound(seg, mbps, alpha_ns))
		return L * wire_ns(seg, mbps) + alpha_ns;
	return L * (w + alpha_ns) + wire_ns(seg, mbps) - w;
}

static void use_model(uint32_t icl_mbps, uint32_t latency_ns, uint32_t hbm_mbps,
		      uint32_t overhead_ns)
{
	fw_harness_model = (struct nnp_fw_config){
		.icl_mbps = icl_mbps, .icl_latency_ns = latency_ns,
		.hbm_mbps = hbm_mbps, .cmd_overhead_ns = overhead_ns,
	};
}

static int model_defaults(void **state)
{
	(void)state;
	fw_harness_model = (struct nnp_fw_config){ 0 };
	return 0;
}

/* Solve the 3x3 system @a x = @b by Cramer's rule. */
static void solve3(double a[3][3], const double b[3], double x[3])
{
	double d = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
		   a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
		   a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
	unsigned int k, i;

	for (k = 0; k < 3; k++) {
		double m[3][3];

		memcpy(m, a, sizeof(m));
		for (i = 0; i < 3; i++)
			m[i][k] = b[i];
		x[k] = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
			m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
			m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])) / d;
	}
}

/*
 * With device memory out of the way (an HBM too fast to cost a ns), an
 * allreduce is the ring's alpha-beta time plus one command overhead:
 * least squares over n and S give back B, alpha and the overhead within
 * 1%, and each point is exactly the formula, chunk by chunk rounded.
 * ring_ns() is linear in 1/B, alpha and the overhead in either regime:
 * port-bound 2(n-1)/n S/B + alpha, else (2(n-1) + k - 1) c/B + 2(n-1)
 * alpha for k chunks of c bytes a step (the segments here have 1, 3 and
 * 8), so one least-squares fit takes the points of both.
 */
#define FIT_MBPS	50000u
#define FIT_ALPHA_NS	1500u
#define FIT_OVERHEAD_NS	3000u

static void test_alpha_beta_fit(void **state)
{
	const unsigned int ns[] = { 2, 3, 4, 8 };
	const uint64_t segs[] = { 4u << 10, 64u << 10, 192u << 10, SEG_MAX };
	double ata[3][3] = { { 0 } }, atb[3] = { 0 }, x[3];
	struct nnp_fw_model m[MAX_CHIPS];
	unsigned int i, j, r, c;

	(void)state;
	use_model(FIT_MBPS, FIT_ALPHA_NS, UINT32_MAX, FIT_OVERHEAD_NS);
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		for (j = 0; j < sizeof(segs) / sizeof(segs[0]); j++) {
			unsigned int n = ns[i];
			uint64_t s = n * segs[j], k = chunks(segs[j]);
			double L = 2.0 * (n - 1);
			double row[3] = { (L + k - 1) * (double)(segs[j] / k), L, 1 };

			if (port_bound(segs[j], FIT_MBPS, FIT_ALPHA_NS)) {
				row[0] = L / n * s;
				row[1] = 1;
			}
			allreduce(n, segs[j], 0, m, NULL);
			for (c = 0; c < n; c++)
				assert_int_equal(m[c].now_ns, FIT_OVERHEAD_NS +
						 ring_ns(n, segs[j], FIT_MBPS,
							 FIT_ALPHA_NS));
			for (r = 0; r < 3; r++) {
				for (c = 0; c < 3; c++)
					ata[r][c] += row[r] * row[c];
				atb[r] += row[r] * (double)m[0].now_ns;
			}
		}
	}
	solve3(ata, atb, x);
	print_message("  fitted B %.1f MB/s (set %u), alpha %.1f ns (set %u), "
		      "overhead %.1f ns (set %u)\n", 1000 / x[0], FIT_MBPS, x[1],
		      FIT_ALPHA_NS, x[2], FIT_OVERHEAD_NS);
	assert_true(fabs(1000 / x[0] / FIT_MBPS - 1) < 0.01);
	assert_true(fabs(x[1] / FIT_ALPHA_NS - 1) < 0.01);
	assert_true(fabs(x[2] / FIT_OVERHEAD_NS - 1) < 0.01);
}

/*
 * NNP-T's figures: 8 chunks a step keep the port busy (alpha and a
 * chunk's reduction, 1159 ns, within 7 chunks' wire time), so the time is
 * the wire time of all 2(n-1) 8 chunks, then alpha and the last chunk's
 * copy in allgather (each chunk arrives after its predecessor was folded);
 * the busy times add up chunk by chunk.
 */
static void test_defaults_and_busy_times(void **state)
{
	const unsigned int n = 4;
	const uint64_t seg = SEG_MAX, hbm = 1230000, icl = 56000;
	struct nnp_fw_model m[MAX_CHIPS];
	uint64_t busy[MAX_CHIPS][NNP_HW_ENGINES];
	uint64_t want, hbm_busy;
	unsigned int c;

	(void)state;
	allreduce(n, seg, 0, m, busy);
	assert_true(port_bound(seg, icl, 1000 + 3 * CHUNK * 1000 / hbm));
	want = 2000 + 2 * (n - 1) * wire_ns(seg, icl) + 1000 + CHUNK * 1000 / hbm;
	hbm_busy = (n - 1) * (seg / CHUNK) *
		   (3 * CHUNK * 1000 / hbm + CHUNK * 1000 / hbm);
	print_message("  n=%u, %llu KiB in all: %.3f us modeled\n", n,
		      (unsigned long long)(n * seg >> 10), m[0].now_ns / 1e3);
	for (c = 0; c < n; c++) {
		assert_int_equal(m[c].now_ns, want);
		assert_int_equal(m[c].port_busy_ns[0],
				 2 * (n - 1) * wire_ns(seg, icl));
		assert_int_equal(m[c].port_busy_ns[1], 0);
		assert_int_equal(m[c].hbm_busy_ns, hbm_busy);
		assert_int_equal(m[c].pcie_busy_ns, 0);
		assert_int_equal(m[c].commands, 1);
		/* From its start, after the overhead, to its end. */
		assert_int_equal(busy[c][NNP_HW_ENGINE_COLL], want - 2000);
		assert_int_equal(busy[c][NNP_HW_ENGINE_COPY], 0);
	}
}

/*
 * The same job gives the same modeled times with a thread a chip, each
 * chip napping at random between its turns, as with one thread for all.
 */
static void test_host_jitter_changes_nothing(void **state)
{
	struct nnp_fw_model calm[MAX_CHIPS], shaken[MAX_CHIPS];
	unsigned int n, c, round;

	(void)state;
	srand(12);
	for (n = 3; n <= 8; n += 5) {
		allreduce(n, 256u << 10, 0, calm, NULL);
		for (round = 0; round < 3; round++) {
			allreduce(n, 256u << 10, 200, shaken, NULL);
			for (c = 0; c < n; c++)
				assert_memory_equal(&calm[c], &shaken[c],
						    sizeof(calm[c]));
		}
	}
}

/*
 * Through the host's transport (a copy of each chunk, as QEMU's sockets
 * carry it, with its modeled arrival) the model gives the same times as
 * between chips of one process (descriptors).
 */
static void test_remote_links_same_times(void **state)
{
	struct nnp_fw_model local[MAX_CHIPS], far[MAX_CHIPS];
	unsigned int n = 4, c;

	(void)state;
	allreduce(n, 256u << 10, 0, local, NULL);
	remote = true;
	allreduce(n, 256u << 10, 0, far, NULL);
	remote = false;
	for (c = 0; c < n; c++)
		assert_memory_equal(&local[c], &far[c], sizeof(local[c]));
	assert_true(local[0].now_ns > 2000);
}

/*
 * TIMESTAMP writes the modeled start of its command: the chip's time plus
 * the command overhead, whatever the host clock; a FILL of device memory
 * costs its bytes at the HBM bandwidth, on the copy engine of its context.
 */
static void test_timestamp_is_modeled(void **state)
{
	const uint64_t fill = 1u << 20;
	struct fw_chip chip = { 0 };
	uint64_t ts[2], busy[NNP_HW_ENGINES];
	uint32_t key;

	(void)state;
	use_model(0, 0, 1000000, 5000);
	fw_chip_setup(&chip, CTX);
	key = fw_harness_dev_key(chip.h, CTX, DATA, fill,
				 NNP_KEY_READ | NNP_KEY_WRITE);
	fw_chip_post(&chip, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_TIMESTAMP, .dst_key = key });
	fw_chips_run_one_thread(&chip, 1);
	memcpy(&ts[0], chip.h->dev_mem + DATA, 8);
	fw_chip_post(&chip, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_FILL, .dst_key = key, .len = fill });
	fw_chips_run_one_thread(&chip, 1);
	fw_harness_advance_ms(chip.h, 50);
	fw_chip_post(&chip, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_TIMESTAMP, .dst_key = key });
	fw_chips_run_one_thread(&chip, 1);
	memcpy(&ts[1], chip.h->dev_mem + DATA, 8);
	assert_int_equal(chip.status, NNP_STATUS_SUCCESS);
	assert_int_equal(ts[0], 5000);
	/* 1 MiB at 10^12 B/s: 1048 ns (1048.576, rounded down). */
	assert_int_equal(ts[1], 5000 + 5000 + 1048 + 5000);
	/* The copy engine: the FILL's 1048 ns; TIMESTAMP's 8 bytes cost 0. */
	usage_of(chip.h, CTX, busy);
	assert_int_equal(busy[NNP_HW_ENGINE_COPY], 1048);
	assert_int_equal(busy[NNP_HW_ENGINE_COLL], 0);
	/* Another context has none; one made again starts over. */
	fw_harness_ctx_create(chip.h, CTX + 1);
	usage_of(chip.h, CTX + 1, busy);
	assert_int_equal(busy[NNP_HW_ENGINE_COPY], 0);
	assert_int_equal(fw_harness_admin(chip.h, (struct nnp_hw_admin_cmd){
		.opcode = NNP_ADMIN_CTX_DESTROY, .args = { CTX } }, NULL),
		NNP_STATUS_SUCCESS);
	assert_int_equal(fw_harness_admin(chip.h, (struct nnp_hw_admin_cmd){
		.opcode = NNP_ADMIN_GET_CTX_USAGE, .addr = H_AQ_DATA,
		.len = 16, .args = { CTX } }, NULL), NNP_STATUS_NOT_FOUND);
	fw_harness_ctx_create(chip.h, CTX);
	usage_of(chip.h, CTX, busy);
	assert_int_equal(busy[NNP_HW_ENGINE_COPY], 0);
	fw_harness_teardown((void **)&chip.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_alpha_beta_fit, model_defaults),
		cmocka_unit_test(test_defaults_and_busy_times),
		cmocka_unit_test(test_host_jitter_changes_nothing),
		cmocka_unit_test(test_remote_links_same_times),
		cmocka_unit_test_teardown(test_timestamp_is_modeled,
					  model_defaults),
	};

	return cmocka_run_group_tests_name("fw_clock", tests, NULL, NULL);
}
