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
#define HOST_MEM_SIZE	0x400000u

/* Where the harness keeps its admin queue in fake host memory. */
#define H_AQ_SQ		HOST_MEM_BASE
#define H_AQ_CQ		(HOST_MEM_BASE + 0x10000)
#define H_AQ_DATA	(HOST_MEM_BASE + 0x20000)
#define H_AQ_DEPTH	4
#define DEV_MEM_SIZE	NNP_MEM_SIZE_MIN
#define BOOT_MS		20
#define HEARTBEAT_MS	100

struct fw_harness {
	struct nnp_fw *fw;
	uint8_t host_mem[HOST_MEM_SIZE];
	uint8_t *dev_mem;
	uint64_t now_ns;
	unsigned int irqs[NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES)];
	unsigned int guest_errors;
	char last_error[256];
	uint32_t aq_slot;	/* fw_harness_admin()'s next SQ slot */
};

/* CMocka setup/teardown: *state becomes a struct fw_harness, booted. */
int fw_harness_setup(void **state);
/* The same, left in BOOTING. */
int fw_harness_setup_unbooted(void **state);
int fw_harness_teardown(void **state);

void fw_harness_advance_ms(struct fw_harness *h, uint64_t ms);
void *fw_harness_host_ptr(struct fw_harness *h, uint64_t addr);

/* Program and enable the admin queue. */
void fw_harness_aq_setup(struct fw_harness *h, uint64_t sq, uint64_t cq,
			 uint32_t depth);
/* Booted, with the admin queue at H_AQ_* enabled. */
int fw_harness_setup_aq(void **state);
/*
 * Run @cmd on the admin queue set up by fw_harness_setup_aq() and return
 * its completion status; *result gets the completion's result if non-NULL.
 */
uint16_t fw_harness_admin(struct fw_harness *h, struct nnp_hw_admin_cmd cmd,
			  uint32_t *result);

#endif /* NNP_FW_HARNESS_H */
