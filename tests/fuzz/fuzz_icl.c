// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: inter-chip link packets from a remote peer, arriving
 * while collectives and point-to-point commands wait for them.
 *
 * The chip's ports 0 and 1 are remote links, up. Context 1 owns the first
 * KEY_BYTES of device memory (one key) and queue 0, and two
 * communicators: rank 0 of 3 (sends on port 0, receives on 1) and rank 1
 * of 2 (the other way round). The input starts with COMMANDS commands of
 * CMD_BYTES each (opcode, type, op, count, communicator, root, offsets),
 * posted at once; then packets, each a PKT_HDR_BYTES header (port, epoch
 * choice, sequence number, abort flag, length) and its payload, delivered
 * one by one with the queue run after each. fuzz_dev checks that nothing
 * outside context 1's key changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_dev.h"

#define KEY_BYTES	0x40000u
#define COMMANDS	4
#define CMD_BYTES	8
#define PKT_HDR_BYTES	9

static const uint64_t epochs[] = { 0x1111, 0x2222, 0xdead };
static unsigned long long packets, commands;

static void report(void)
{
	fprintf(stderr, "fuzz_icl: %llu packets delivered, %llu commands completed\n",
		packets, commands);
}

static void comm_create(struct fuzz_dev *d, uint32_t comm, uint32_t nranks,
			uint32_t rank, uint32_t send, uint32_t recv)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = FUZZ_CTX, .comm = comm, .nranks = nranks, .rank = rank,
		.send_port = send, .recv_port = recv, .epoch = epochs[comm - 1],
	};

	memcpy(c.args, &a, sizeof(a));
	if (fuzz_admin(d, c, NULL))
		fuzz_fail("communicator %u: not made", comm);
}

static uint32_t setup(struct fuzz_dev *d)
{
	struct nnp_hw_key_args a = {
		.ctx = FUZZ_CTX, .type = NNP_KEY_TYPE_DEVICE,
		.rights = NNP_KEY_READ | NNP_KEY_WRITE, .length = KEY_BYTES,
	};
	uint32_t key;

	if (nnp_fw_link_attach_remote(d->fw, 0, 2, 1) ||
	    nnp_fw_link_attach_remote(d->fw, 1, 3, 0))
		fuzz_fail("remote links: not attached");
	nnp_fw_link_set(d->fw, 0, true);
	nnp_fw_link_set(d->fw, 1, true);
	if (fuzz_ctx_create(d, FUZZ_CTX) || fuzz_queue_create(d, FUZZ_CTX))
		fuzz_fail("context 1 and its queue: not made");
	key = fuzz_key_register(d, &a, NULL, 0);
	if (!key)
		fuzz_fail("context 1's key: not made");
	comm_create(d, 1, 3, 0, 0, 1);
	comm_create(d, 2, 2, 1, 1, 0);
	fuzz_dev_seal(d);
	return key;
}

/* A command from 8 bytes: opcode, dtype, op, count (2), comm/root, offsets. */
static struct nnp_hw_queue_cmd command(const uint8_t *b, uint32_t key)
{
	struct nnp_hw_queue_cmd c = {
		.opcode = (uint8_t)(NNP_CMD_ALLREDUCE + b[0] % 6),
		.src_key = key, .dst_key = key,
		.len = (uint64_t)(b[3] | b[4] << 8),
		.src_off = (uint64_t)(b[6] & 0xf) * 0x4000,
		.dst_off = (uint64_t)(b[7] & 0xf) * 0x4000,
	};
	uint32_t comm = 1 + (b[5] & 1), root = (b[5] >> 1) & 3;

	if (c.opcode >= NNP_CMD_SEND) {
		c.value = NNP_P2P_VALUE(comm, (b[1] & 1));
		return c;
	}
	c.value = NNP_COLL_VALUE(b[1] % NNP_DTYPE_COUNT, b[2] % NNP_OP_COUNT,
				 comm, c.opcode == NNP_CMD_BROADCAST ? root : 0);
	if (c.opcode == NNP_CMD_BROADCAST || c.opcode == NNP_CMD_ALLGATHER)
		c.value &= ~0xff00ull;	/* no op */
	return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool registered;
	struct fuzz_dev d;
	uint32_t key, i;
	size_t off = COMMANDS * CMD_BYTES;

	if (!registered)
		registered = !atexit(report);
	if (size < off)
		return 0;
	fuzz_dev_init(&d, 4);
	key = setup(&d);
	for (i = 0; i < COMMANDS; i++)
		fuzz_queue_post(&d, command(data + i * CMD_BYTES, key));
	while (off + PKT_HDR_BYTES <= size) {
		const uint8_t *h = data + off;
		uint32_t seq = h[2] | h[3] << 8 | h[4] << 16 | (uint32_t)h[5] << 24;
		size_t len = h[7] | h[8] << 8;

		off += PKT_HDR_BYTES;
		if (len > size - off)
			len = size - off;
		nnp_fw_icl_deliver(d.fw, h[0] % 5, epochs[h[1] % 3], seq,
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
