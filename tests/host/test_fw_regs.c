// SPDX-License-Identifier: MIT
/* Firmware simulator: identity registers, boot, heartbeat, reset, bad access. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_harness.h"

static void test_identity(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_fw *fw = h->fw;

	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_ID), 0x54504e4e);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_HW_VERSION), 0x0001001b);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_CAPS),
			 NNP_CAP_ADMIN_QUEUE | NNP_CAP_USER_QUEUES |
			 NNP_CAP_ICL | NNP_CAP_COLLECTIVES);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_CHIP_ID), 7);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_MEM_SIZE_LO), (uint32_t)DEV_MEM_SIZE);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_MEM_SIZE_HI), 0);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_NUM_PORTS), 4);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_NUM_QUEUES), 64);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_NUM_VECTORS), 65);
	assert_int_equal(nnp_fw_reg_read(fw, NNP_REG_FW_VERSION), 0x010200);
	assert_int_equal(h->guest_errors, 0);
}

static void test_boot_takes_boot_time(void **state)
{
	struct fw_harness *h = *state;

	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_BOOTING);
	/* The version is not known until the firmware runs. */
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_VERSION), 0);
	fw_harness_advance_ms(h, BOOT_MS - 1);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_BOOTING);
	assert_int_equal(nnp_fw_next_deadline_ns(h->fw),
			 1000 + BOOT_MS * 1000000ull);
	fw_harness_advance_ms(h, 1);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
	/* Interrupts were not enabled: the event is latched, not sent. */
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_INT_STATUS),
			 NNP_INT_FW_EVENT);
	assert_int_equal(h->irqs[0], 0);
	/* Enabling a latched cause fires it; writing 1 clears it. */
	nnp_fw_reg_write(h->fw, NNP_REG_INT_ENABLE, NNP_INT_ALL);
	assert_int_equal(h->irqs[0], 1);
	nnp_fw_reg_write(h->fw, NNP_REG_INT_STATUS, NNP_INT_FW_EVENT);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_INT_STATUS), 0);
}

static void test_heartbeat(void **state)
{
	struct fw_harness *h = *state;

	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), 0);
	fw_harness_advance_ms(h, HEARTBEAT_MS - 1);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), 0);
	fw_harness_advance_ms(h, 1);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), 1);
	fw_harness_advance_ms(h, HEARTBEAT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), 2);
	/* A long stall counts as one beat, not a burst. */
	fw_harness_advance_ms(h, 10 * HEARTBEAT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), 3);
}

static void test_reset_reboots(void **state)
{
	struct fw_harness *h = *state;

	nnp_fw_reg_write(h->fw, NNP_REG_SCRATCH, 0xdeadbeef);
	nnp_fw_reg_write(h->fw, NNP_REG_INT_ENABLE, NNP_INT_ADMIN_CQ);
	fw_harness_advance_ms(h, HEARTBEAT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_SCRATCH), 0xdeadbeef);
	assert_true(nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL,
				     NNP_DEV_CTRL_RESET));
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_BOOTING);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_SCRATCH), 0);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_INT_ENABLE), 0);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), 0);
	fw_harness_advance_ms(h, BOOT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
}

/* Nothing a previous owner left in device memory survives a reset. */
static void test_reset_zeroes_device_memory(void **state)
{
	struct fw_harness *h = *state;
	uint64_t i, dirty = 0;

	memset(h->dev_mem, 0x5a, DEV_MEM_SIZE);
	nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	fw_harness_advance_ms(h, BOOT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
	for (i = 0; i < DEV_MEM_SIZE; i++)
		dirty += h->dev_mem[i] != 0;
	assert_int_equal(dirty, 0);
}

static void test_bad_access_is_logged_and_ignored(void **state)
{
	struct fw_harness *h = *state;

	nnp_fw_reg_write(h->fw, NNP_REG_CHIP_ID, 99);
	assert_int_equal(h->guest_errors, 1);
	assert_string_equal(h->last_error,
			    "write 0x63 to read-only register 0xc");
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_CHIP_ID), 7);

	nnp_fw_reg_write(h->fw, NNP_REG_FW_STATUS, NNP_FW_STATUS_HALTED);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
	assert_int_equal(h->guest_errors, 2);

	assert_int_equal(nnp_fw_reg_read(h->fw, 0x3f0), 0);
	assert_int_equal(h->guest_errors, 3);
	assert_false(nnp_fw_reg_write(h->fw, NNP_REG_DOORBELL_BASE, 1));
	assert_int_equal(h->guest_errors, 4);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_SCRATCH + 1), 0);
	assert_int_equal(h->guest_errors, 5);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_BAR0_SIZE), 0);
	assert_int_equal(h->guest_errors, 6);

	nnp_fw_reg_write(h->fw, NNP_REG_INT_ENABLE, 0xffffffff);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_INT_ENABLE),
			 NNP_INT_ALL);
	assert_int_equal(h->guest_errors, 7);
}

static void test_create_rejects_bad_config(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_fw_host host = {
		.dma_read = NULL,
	};
	struct nnp_fw_config cfg = {
		.mem_size = 3 << 20,
		.mem = h->dev_mem,
		.heartbeat_ms = 1,
	};
	const char *err = NULL;

	assert_null(nnp_fw_create(&cfg, &host, &err));
	assert_string_equal(err,
			    "mem-size must be a power of two from 1 MiB to 64 GiB");
	cfg.mem_size = 1 << 19;
	assert_null(nnp_fw_create(&cfg, &host, &err));
	cfg.mem_size = 1 << 20;
	assert_null(nnp_fw_create(&cfg, &host, &err));
	assert_string_equal(err, "host callbacks missing");
}

static void *no_map(void *opaque, uint64_t addr, uint64_t *len, bool write)
{
	(void)opaque, (void)addr, (void)len, (void)write;
	return NULL;
}

static int no_dma(void *opaque, uint64_t addr, void *buf, size_t len)
{
	(void)opaque, (void)addr, (void)buf, (void)len;
	return -1;
}

static int no_dma_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	(void)opaque, (void)addr, (void)buf, (void)len;
	return -1;
}

static void no_irq(void *opaque, unsigned int vector)
{
	(void)opaque, (void)vector;
}

static uint64_t no_time(void *opaque)
{
	(void)opaque;
	return 0;
}

/* dma_map comes with dma_unmap: a mapping must be given back. */
static void test_create_refuses_map_without_unmap(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_fw_host host = {
		.dma_read = no_dma, .dma_write = no_dma_write,
		.raise_irq = no_irq, .now_ns = no_time, .dma_map = no_map,
	};
	struct nnp_fw_config cfg = {
		.mem_size = 1 << 20, .mem = h->dev_mem, .heartbeat_ms = 1,
	};
	const char *err = NULL;

	assert_null(nnp_fw_create(&cfg, &host, &err));
	assert_string_equal(err, "dma_map without dma_unmap, or the other way round");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identity, fw_harness_setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_boot_takes_boot_time,
						fw_harness_setup_unbooted,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_heartbeat, fw_harness_setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_reset_reboots,
						fw_harness_setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_reset_zeroes_device_memory,
						fw_harness_setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_bad_access_is_logged_and_ignored,
						fw_harness_setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_create_rejects_bad_config,
						fw_harness_setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_create_refuses_map_without_unmap,
						fw_harness_setup,
						fw_harness_teardown),
	};

	return cmocka_run_group_tests_name("fw_regs", tests, NULL, NULL);
}
