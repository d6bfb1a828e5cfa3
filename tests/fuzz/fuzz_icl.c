// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: inter-chip link packets from a remote peer, arriving
 * while collectives and point-to-point commands wait for them.
 *
 * The chip is fuzz_icl_chip.h's, its links up. The input starts with the
 * commands it posts at once (FUZZ_ICL_CMDS_BYTES); then packets, each a
 * PKT_HDR_BYTES header (port, epoch choice, sequence number, abort flag,
 * length) and its payload, delivered one by one with the queue run after
 * each. fuzz_dev checks that nothing outside context 1's key changed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_icl_chip.h"

#define PKT_HDR_BYTES	9

static unsigned long long packets, commands;

static void report(void)
{
	fprintf(stderr, "fuzz_icl: %llu packets delivered, %llu commands completed\n",
		packets, commands);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool registered;
	struct fuzz_dev d;
	uint32_t key;
	size_t off = FUZZ_ICL_CMDS_BYTES;

	if (!registered)
		registered = !atexit(report);
	if (size < off)
		return 0;
	fuzz_dev_init(&d, 4);
	key = fuzz_icl_chip_setup(&d, true);
	fuzz_icl_post_commands(&d, data, key);
	while (off + PKT_HDR_BYTES <= size) {
		const uint8_t *h = data + off;
		uint32_t seq = h[2] | h[3] << 8 | h[4] << 16 | (uint32_t)h[5] << 24;
		size_t len = h[7] | h[8] << 8;

		off += PKT_HDR_BYTES;
		if (len > size - off)
			len = size - off;
		nnp_fw_icl_deliver(d.fw, h[0] % 5, fuzz_icl_epochs[h[1] % 3], seq,
				   h[6] & 1, 0, data + off, len);
		packets++;
		off += len;
		if (!fuzz_queue_run(&d))
			fuzz_queue_reset(&d, FUZZ_CTX);
	}
	fuzz_queue_drain(&d);
	commands += d.commands;
	fuzz_dev_fini(&d);
	return 0;
}
