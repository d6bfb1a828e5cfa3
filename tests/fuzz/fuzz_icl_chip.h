/* SPDX-License-Identifier: MIT */
/*
 * The chip both ICL fuzzers feed (fuzz_icl: raw packets; fuzz_icl_frame:
 * a peer QEMU's frames): ports 0 and 1 are remote links, port 0 to port 1
 * of chip 2 and port 1 to port 0 of chip 3. Context 1 owns the first
 * FUZZ_ICL_KEY_BYTES of device memory (one key) and queue 0, and two
 * communicators: rank 0 of 3 (sends on port 0, receives on 1) and rank 1
 * of 2 (the other way round), of epochs fuzz_icl_epochs[0] and [1].
 */
#ifndef NNP_FUZZ_ICL_CHIP_H
#define NNP_FUZZ_ICL_CHIP_H

#include <stdbool.h>
#include <stdint.h>

#include "fuzz_dev.h"

#define FUZZ_ICL_KEY_BYTES	0x40000u
/* The input's first bytes: this many commands of FUZZ_ICL_CMD_BYTES. */
#define FUZZ_ICL_COMMANDS	4
#define FUZZ_ICL_CMD_BYTES	8
#define FUZZ_ICL_CMDS_BYTES	(FUZZ_ICL_COMMANDS * FUZZ_ICL_CMD_BYTES)

/* The two communicators' epochs, and one no communicator has. */
extern const uint64_t fuzz_icl_epochs[3];
/* The chip and port at the far end of our ports 0 and 1. */
extern const uint32_t fuzz_icl_peer_chip[2];
extern const uint32_t fuzz_icl_peer_port[2];

/*
 * Make the chip's context, key, queue and communicators, with both ports
 * attached to their peers and, if @up, up (else down, as before a
 * link's hello). Seals the device; returns context 1's key.
 */
uint32_t fuzz_icl_chip_setup(struct fuzz_dev *d, bool up);
/*
 * Post FUZZ_ICL_COMMANDS collectives or point-to-point commands over the
 * key, each from FUZZ_ICL_CMD_BYTES of @b (opcode, type, op, count (2),
 * communicator and root, offsets).
 */
void fuzz_icl_post_commands(struct fuzz_dev *d, const uint8_t *b, uint32_t key);

#endif /* NNP_FUZZ_ICL_CHIP_H */
