// SPDX-License-Identifier: MIT
/* The chip of the ICL fuzzers (fuzz_icl_chip.h). */
#include <string.h>

#include "fuzz_icl_chip.h"

const uint64_t fuzz_icl_epochs[3] = { 0x1111, 0x2222, 0xdead };
const uint32_t fuzz_icl_peer_chip[2] = { 2, 3 };
const uint32_t fuzz_icl_peer_port[2] = { 1, 0 };

static void comm_create(struct fuzz_dev *d, uint32_t comm, uint32_t nranks,
			uint32_t rank, uint32_t send, uint32_t recv)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = FUZZ_CTX, .comm = comm, .nranks = nranks, .rank = rank,
		.send_port = send, .recv_port = recv,
		.epoch = fuzz_icl_epochs[comm - 1],
	};

	memcpy(c.args, &a, sizeof(a));
	if (fuzz_admin(d, c, NULL))
		fuzz_fail("communicator %u: not made", comm);
}

uint32_t fuzz_icl_chip_setup(struct fuzz_dev *d, bool up)
{
	struct nnp_hw_key_args a = {
		.ctx = FUZZ_CTX, .type = NNP_KEY_TYPE_DEVICE,
		.rights = NNP_KEY_READ | NNP_KEY_WRITE,
		.length = FUZZ_ICL_KEY_BYTES,
	};
	uint32_t key;
	unsigned int p;

	for (p = 0; p < 2; p++) {
		if (nnp_fw_link_attach_remote(d->fw, p, fuzz_icl_peer_chip[p],
					      fuzz_icl_peer_port[p]))
			fuzz_fail("remote link %u: not attached", p);
		nnp_fw_link_set(d->fw, p, up);
	}
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

void fuzz_icl_post_commands(struct fuzz_dev *d, const uint8_t *b, uint32_t key)
{
	unsigned int i;

	for (i = 0; i < FUZZ_ICL_COMMANDS; i++)
		fuzz_queue_post(d, command(b + i * FUZZ_ICL_CMD_BYTES, key));
}
