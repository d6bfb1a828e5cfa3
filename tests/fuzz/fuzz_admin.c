// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the admin queue.
 *
 * Input: DATA_BYTES put in the admin data buffer (page lists, ring orders),
 * then 64-byte admin commands, run one after another. A command's addr
 * below DATA_WINDOW points into the data buffer (at addr modulo its size);
 * any other is used as it is. fuzz_dev checks that the firmware touches
 * only the buffer a command names, the rings and pages it accepted, and,
 * at the end, that nothing else in host or device memory changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_dev.h"

#define DATA_BYTES	512
#define DATA_WINDOW	0x10000u

static unsigned long long commands;

static void report(void)
{
	fprintf(stderr, "fuzz_admin: %llu admin commands completed\n", commands);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t cmd_bytes = sizeof(struct nnp_hw_admin_cmd);
	static bool registered;
	struct fuzz_dev d;
	size_t off;

	if (!registered)
		registered = !atexit(report);
	fuzz_dev_init(&d, 4);
	memcpy(d.host + (FUZZ_AQ_DATA - FUZZ_HOST_BASE), data,
	       size < DATA_BYTES ? size : DATA_BYTES);
	fuzz_dev_seal(&d);
	for (off = DATA_BYTES; off + cmd_bytes <= size; off += cmd_bytes) {
		struct nnp_hw_admin_cmd cmd;

		memcpy(&cmd, data + off, cmd_bytes);
		if (cmd.addr < DATA_WINDOW)
			cmd.addr = FUZZ_AQ_DATA + cmd.addr % FUZZ_AQ_DATA_SIZE;
		fuzz_admin(&d, cmd, NULL);
		commands++;
	}
	fuzz_dev_fini(&d);
	return 0;
}
