/* SPDX-License-Identifier: MIT */
/*
 * A host for the firmware simulator in unit tests: a window of fake host
 * memory for DMA, a clock the test moves by hand, and counters of interrupts
 * and reported guest errors.
 */
#ifndef NNP_FW_HARNESS_H
#define NNP_FW_HARNESS_H

#include "nnp_fw.h"

#define HOST_MEM_BASE	0x100000ull
#define HOST_MEM_SIZE	0x40000u
#define DEV_MEM_SIZE	NNP_MEM_SIZE_MIN
#define BOOT_MS		20
#define HEARTBEAT_MS	100

struct fw_harness {
	struct nnp_fw *fw;
	uint8_t host_mem[HOST_MEM_SIZE];
	uint8_t *dev_mem;
	uint64_t now_ns;
	unsigned int irqs[2];
	unsigned int guest_errors;
	char last_error[256];
};

/* CMocka setup/teardown: *state becomes a struct fw_harness, booted. */
int fw_harness_setup(void **state);
/* The same, left in BOOTING. */
int fw_harness_setup_unbooted(void **state);
int fw_harness_teardown(void **state);

void fw_harness_advance_ms(struct fw_harness *h, uint64_t ms);
void *fw_harness_host_ptr(struct fw_harness *h, uint64_t addr);

#endif /* NNP_FW_HARNESS_H */
