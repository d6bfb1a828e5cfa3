/* SPDX-License-Identifier: MIT */
/*
 * A ring of in-process chips with one communicator, for the tests of
 * routed messages (test_fw_relay.c) and of groups (test_fw_group.c): chip
 * i's port 0 to chip i + 1's port 1, each chip rank i of communicator
 * COMM, routed the shorter way round.
 */
#ifndef NNP_FW_RING_H
#define NNP_FW_RING_H

#include "fw_harness.h"
#include "fw_control.h"

#define MAXR	8
#define CTX	1
#define COMM	3
#define EPOCH	0x7e1a7000000000a1ull
#define NONE	NNP_HW_ROUTE_NONE
/* Every rank's communicator made and routed. */
#define ALL	((1u << N) - 1)
/* Each chip's device memory: what it sends, then where it receives. */
#define SRC	0x000000u
#define DST	0x400000u
#define AREA	(4u << 20)

/* Chips on the ring: 4 unless a test says otherwise (at most MAXR). */
extern uint32_t N;
extern struct fw_chip chips[MAXR];
/* Each chip's key for the whole of its device memory. */
extern uint32_t keys[MAXR];

/* COMM_CREATE of rank @rank of the ring on chip @h. */
uint16_t comm_create(struct fw_harness *h, uint32_t rank);
/* COMM_ROUTES of @len bytes @r for communicator @comm. */
uint16_t routes_give(struct fw_harness *h, uint32_t comm, const uint8_t *r,
		     uint32_t len);
/*
 * COMM_TOPOLOGY of rank @rank on chip @h: the ring, as libnnp gives every
 * communicator, so that only its ports take a collective's packets.
 */
uint16_t ring_topology_give(struct fw_harness *h, uint32_t rank);
/* The ring's routes from @rank into @r, N bytes. */
void ring_routes(uint32_t rank, uint8_t *r);
/* Wire the ring; @made: the ranks whose communicator is made and routed. */
void ring_up(uint32_t made);
void ring_down(void);
/* Run every chip's queues @rounds times from this thread. */
void run_rounds(unsigned int rounds);
/* A SEND or RECV of @len bytes at @key + @off, @value its NNP_P2P_* word. */
struct nnp_hw_queue_cmd p2p_cmd(uint8_t opcode, uint32_t key, uint64_t off,
				uint64_t len, uint64_t value);
/* A routed SEND or RECV of @len bytes at @key + @off with rank @peer. */
struct nnp_hw_queue_cmd routed(uint8_t opcode, uint32_t key, uint64_t off,
			       uint64_t len, uint32_t peer);
/* Fill @len bytes at @off of chip @i's memory with a pattern of @seed. */
void pattern(uint32_t i, uint64_t off, uint64_t len, uint32_t seed);
struct nnp_hw_port_info port_info(uint32_t i, uint32_t port);
/* Post @n commands on chip @i; the run then waits for command @watch. */
void post_watching(uint32_t i, const struct nnp_hw_queue_cmd *cmds,
		   uint32_t n, uint32_t watch);
/*
 * Post @n commands on chip @i, the run then waiting for the last; with
 * @threaded, the last is posted as the chip's own thread starts.
 */
void post_last_watched(uint32_t i, const struct nnp_hw_queue_cmd *cmds,
		       uint32_t n, bool threaded);
/* Run every chip until its watched command: each on its thread, or here. */
void run_chips(bool threaded);
/* COMM_DESTROY with ABORT of the ring's communicator on chip @i. */
void comm_abort(uint32_t i);
/* Run @c alone on chip 0; its status. A failure stops the queue: reset. */
uint16_t run_alone(struct nnp_hw_queue_cmd c);
/* Completion @slot of chip @i's queue 0, and its status. */
const struct nnp_hw_cqe *cqe(uint32_t i, uint32_t slot);
uint16_t cqe_status(uint32_t i, uint32_t slot);

#endif /* NNP_FW_RING_H */
