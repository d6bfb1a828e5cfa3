// SPDX-License-Identifier: MIT
/*
 * Firmware simulator telemetry (fw_thermal.c): the idle readings, power
 * from busy time and bytes moved, temperature following power with its
 * time constant, the cap, busy time over a reset. Expected values are
 * worked out by hand from the model in docs/hw-interface.md#telemetry.
 *
 * In detail (docs/testing.md has the summary):
 * telemetry registers (`firmware-sim/src/control/fw_thermal.c`): idle reads
 * exactly 35000 m°C and 30000000 uW; engines busy 250 ms of a 1 s window
 * read 52500000 uW and 36771 m°C, unchanged by reads within the next
 * window, back to idle after a minute; overlapping commands count once in
 * BUSY_NS; a 4 MiB fill in a 1 s window reads 30016777 uW; power capped at
 * 300 W; busy time past 2^32 ns carried into BUSY_NS_HI (5 s: HI 1, LO
 * 705032704); a reset zeroes BUSY_NS and keeps the temperature; writes
 * refused as guest errors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_harness.h"
#include "fw_control.h"

#define CTX		1
#define MS		1000000ull

static uint32_t rd(struct fw_harness *h, uint32_t reg)
{
	return nnp_fw_reg_read(h->fw, reg);
}

static uint64_t busy_ns(struct fw_harness *h)
{
	return (uint64_t)rd(h, NNP_REG_BUSY_NS_HI) << 32 |
	       rd(h, NNP_REG_BUSY_NS_LO);
}

/* The engines run from @from_ms to @to_ms after now (hand-moved clock). */
static void busy_span(struct fw_harness *h, uint64_t from_ms, uint64_t to_ms)
{
	mtx_lock(&h->fw->lock);
	nnp_fw_busy_begin_locked(h->fw, h->now_ns + from_ms * MS);
	nnp_fw_busy_end_locked(h->fw, h->now_ns + to_ms * MS);
	mtx_unlock(&h->fw->lock);
}

static void test_idle_readings(void **state)
{
	struct fw_harness *h = *state;

	assert_int_equal(rd(h, NNP_REG_TEMP), 35000);
	assert_int_equal(rd(h, NNP_REG_POWER), 30000000);
	fw_harness_advance_ms(h, 10000);
	assert_int_equal(rd(h, NNP_REG_TEMP), NNP_HW_TEMP_IDLE_MC);
	assert_int_equal(rd(h, NNP_REG_POWER), NNP_HW_POWER_IDLE_UW);
	assert_int_equal(busy_ns(h), 0);
	assert_int_equal(h->guest_errors, 0);
}

/*
 * Engines busy 250 ms of a 1 s window: 30 W + 90 W x 0.25 = 52.5 W.
 * Steady state 35 + 0.2 x 22.5 = 39.5 C; after 1 s of tau 2 s:
 * 39500 - 4500 x e^-0.5 = 36770.6 -> 36771 m°C.
 */
static void test_busy_time_drives_power_and_temp(void **state)
{
	struct fw_harness *h = *state;

	fw_harness_advance_ms(h, 1000);
	busy_span(h, 100, 350);
	fw_harness_advance_ms(h, 1000);
	assert_int_equal(busy_ns(h), 250 * MS);
	assert_int_equal(rd(h, NNP_REG_POWER), 52500000);
	assert_int_equal(rd(h, NNP_REG_TEMP), 36771);
	/* Within the next window nothing moves, however often it is read. */
	fw_harness_advance_ms(h, NNP_HW_TELEMETRY_WINDOW_MS - 1);
	assert_int_equal(rd(h, NNP_REG_POWER), 52500000);
	assert_int_equal(rd(h, NNP_REG_TEMP), 36771);
	/* Idle again for a minute: back to the idle values. */
	fw_harness_advance_ms(h, 60000);
	assert_int_equal(rd(h, NNP_REG_POWER), NNP_HW_POWER_IDLE_UW);
	assert_int_equal(rd(h, NNP_REG_TEMP), NNP_HW_TEMP_IDLE_MC);
}

/* Overlapping commands count once; a command still running counts so far. */
static void test_busy_time_counts_overlap_once(void **state)
{
	struct fw_harness *h = *state;
	uint64_t t0 = h->now_ns;

	mtx_lock(&h->fw->lock);
	nnp_fw_busy_begin_locked(h->fw, t0);
	nnp_fw_busy_begin_locked(h->fw, t0 + 10 * MS);
	nnp_fw_busy_end_locked(h->fw, t0 + 20 * MS);
	mtx_unlock(&h->fw->lock);
	h->now_ns = t0 + 30 * MS;
	assert_int_equal(busy_ns(h), 30 * MS);
	mtx_lock(&h->fw->lock);
	nnp_fw_busy_end_locked(h->fw, t0 + 40 * MS);
	mtx_unlock(&h->fw->lock);
	h->now_ns = t0 + 100 * MS;
	assert_int_equal(busy_ns(h), 40 * MS);
}

/*
 * Busy time past 2^32 ns (4.29 s) carries into BUSY_NS_HI: 5 s busy is
 * 5000000000 ns, HI 1 and LO 705032704, read as one 64-bit count.
 */
static void test_busy_time_past_32_bits(void **state)
{
	struct fw_harness *h = *state;

	busy_span(h, 0, 5000);
	fw_harness_advance_ms(h, 5000);
	assert_int_equal(rd(h, NNP_REG_BUSY_NS_HI), 1);
	assert_int_equal(rd(h, NNP_REG_BUSY_NS_LO), 705032704);
	assert_int_equal(busy_ns(h), 5000 * MS);
}

/*
 * A 4 MiB fill of device memory in a 1 s window: 4 nJ x 4194304 bytes
 * over 1 s is 16777.216 uW, so 30016777 uW.
 */
static void test_bytes_moved_drive_power(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(0));
	struct nnp_hw_queue_cmd fill = {
		.opcode = NNP_CMD_FILL, .len = 4 << 20, .value = 0x11,
	};
	uint32_t slot;

	fw_harness_ctx_create(h, CTX);
	fill.dst_key = fw_harness_dev_key(h, CTX, 0, 4 << 20, NNP_KEY_WRITE);
	fw_harness_queue_create(h, CTX, 0);
	fw_harness_advance_ms(h, 1000);
	slot = fw_harness_post(h, 0, fill);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[slot].status, NNP_STATUS_SUCCESS);
	assert_int_equal(fw_harness_counters(h).local_bytes, 4 << 20);
	fw_harness_advance_ms(h, 1000);
	assert_int_equal(rd(h, NNP_REG_POWER), 30016777);
	/* 35000 + 3.355 x (1 - e^-0.5) = 35001.3 */
	assert_int_equal(rd(h, NNP_REG_TEMP), 35001);
}

/* However much moves, power stops at the cap: 35 + 0.2 x 270 = 89 C at most. */
static void test_power_is_capped(void **state)
{
	struct fw_harness *h = *state;

	fw_harness_advance_ms(h, 1000);
	mtx_lock(&h->fw->lock);
	h->fw->counters.icl_tx_bytes += 1ull << 40;
	mtx_unlock(&h->fw->lock);
	fw_harness_advance_ms(h, 1000);
	assert_int_equal(rd(h, NNP_REG_POWER), NNP_HW_POWER_MAX_UW);
	fw_harness_advance_ms(h, 100000);
	assert_int_equal(rd(h, NNP_REG_TEMP), 35000);
}

/* A reset restarts busy time; the die keeps its heat. */
static void test_reset_keeps_temperature(void **state)
{
	struct fw_harness *h = *state;
	uint32_t temp;

	fw_harness_advance_ms(h, 1000);
	busy_span(h, 0, 1000);
	fw_harness_advance_ms(h, 1000);
	temp = rd(h, NNP_REG_TEMP);
	assert_int_equal(rd(h, NNP_REG_POWER), 120000000);
	/* 53000 - 18000 x e^-0.5 = 42082.4 */
	assert_int_equal(temp, 42082);
	assert_int_equal(busy_ns(h), 1000 * MS);
	nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	assert_int_equal(busy_ns(h), 0);
	assert_int_equal(rd(h, NNP_REG_TEMP), temp);
}

static void test_telemetry_is_read_only(void **state)
{
	struct fw_harness *h = *state;

	nnp_fw_reg_write(h->fw, NNP_REG_TEMP, 1);
	assert_string_equal(h->last_error,
			    "write 0x1 to read-only register 0x200");
	nnp_fw_reg_write(h->fw, NNP_REG_POWER, 1);
	nnp_fw_reg_write(h->fw, NNP_REG_BUSY_NS_LO, 1);
	nnp_fw_reg_write(h->fw, NNP_REG_BUSY_NS_HI, 1);
	assert_int_equal(h->guest_errors, 4);
	assert_int_equal(rd(h, NNP_REG_TEMP), NNP_HW_TEMP_IDLE_MC);
	assert_int_equal(rd(h, NNP_REG_POWER), NNP_HW_POWER_IDLE_UW);
	assert_int_equal(busy_ns(h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_idle_readings,
			fw_harness_setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_busy_time_drives_power_and_temp,
			fw_harness_setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_busy_time_counts_overlap_once,
			fw_harness_setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_busy_time_past_32_bits,
			fw_harness_setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_bytes_moved_drive_power,
			fw_harness_setup_aq, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_power_is_capped,
			fw_harness_setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_reset_keeps_temperature,
			fw_harness_setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_telemetry_is_read_only,
			fw_harness_setup, fw_harness_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
