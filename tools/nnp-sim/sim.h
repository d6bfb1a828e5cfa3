/* SPDX-License-Identifier: MIT */
/*
 * nnp-sim: the firmware simulator's chips in one process, without QEMU or
 * a driver. Each chip gets a small window of fake host memory for its
 * admin queue and one user queue, a clock that stands still (the modeled
 * clock is the firmware's own), and one thread runs every chip's queues
 * from a FIFO of chips the firmware kicked.
 */
#ifndef NNP_SIM_H
#define NNP_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "nnp_fw.h"

#define SIM_PORTS	4
#define SIM_CTX		1
#define SIM_COMM	1
/* The barrier's allreduce: 4 lanes at most, a float a chip each. */
#define SIM_BARRIER_BYTES(n)	(16ull * (n))

struct sim_chip {
	struct nnp_fw *fw;
	uint8_t *host;		/* the fake host memory window */
	uint8_t *mem;		/* device memory */
	uint32_t aq_slot;	/* the admin queue's next SQ slot */
	uint32_t q_tail;	/* user queue 0's next SQ slot */
	uint64_t posted;	/* commands posted on queue 0 */
	uint32_t key;		/* device key over the data buffer */
	/* Where each port leads (-1: nowhere), for the topologies. */
	int peer[SIM_PORTS];
	unsigned int peer_port[SIM_PORTS];
	bool queued;		/* in the run FIFO */
	uint32_t next;		/* the FIFO's next chip */
};

struct sim {
	unsigned int n;
	struct sim_chip *chips;
	uint64_t buf_bytes;	/* the data buffer at device offset 0 */
	bool timing_only;
	uint8_t *shared_mem;	/* timing-only: one memory for all chips */
	uint64_t mem_size;
	uint64_t now_ns;	/* the host clock: still but for booting */
	uint32_t head, tail;	/* the FIFO; UINT32_MAX: empty */
	unsigned int errors;	/* guest errors and warnings reported */
	/* Not 0: the seed of a random order of the kicked chips (tests). */
	unsigned int jitter;
	/* Each chip's rank in SIM_COMM (topo_comm()), and the chip of each. */
	uint32_t *rank, *chip_of;
};

/*
 * @n booted chips with context SIM_CTX, queue 0 and a device key over
 * @buf_bytes at offset 0, unwired; @cfg gives the model's parameters.
 */
int sim_create(struct sim *s, unsigned int n, uint64_t buf_bytes,
	       bool timing_only, const struct nnp_fw_config *cfg);
void sim_destroy(struct sim *s);
/* Wire port @pa of chip @a to port @pb of chip @b; 0 or -1. */
int sim_connect(struct sim *s, unsigned int a, unsigned int pa,
		unsigned int b, unsigned int pb);
/*
 * An admin command on chip @i, with @len bytes of @data as its buffer;
 * its completion status, and its result in *@result (if non-NULL).
 */
uint16_t sim_admin(struct sim *s, unsigned int i, struct nnp_hw_admin_cmd cmd,
		   const void *data, uint32_t len, uint32_t *result);
/* Admin command @opcode on chip @i, its @len bytes of data into @out. */
uint16_t sim_admin_read(struct sim *s, unsigned int i, uint8_t opcode,
			void *out, uint32_t len);
/* Post @cmd on chip @i's queue 0. */
void sim_post(struct sim *s, unsigned int i, struct nnp_hw_queue_cmd cmd);
/* The last command posted on chip @i: its status, 0xffff if not done. */
uint16_t sim_last_status(struct sim *s, unsigned int i);
/*
 * Run every chip's queues until none is kicked any more; returns how
 * many chips' last posted command has not completed, or failed (0: all
 * succeeded).
 */
unsigned int sim_run(struct sim *s);
/*
 * Collective @opcode of @count elements with NNP_COLL_VALUE @value on
 * every chip, from offset @src to @dst of its buffer, run to its end; 0,
 * or -1 if a chip failed it or the firmware reported an error. The root
 * (broadcast, reduce, gather, scatter) is rank 0: chip 0, the snake
 * through any topology starting there (topo.h); the other ranks name no
 * source or destination where the device asks none.
 */
int sim_collective(struct sim *s, uint8_t opcode, uint64_t count,
		   uint64_t value, uint64_t src, uint64_t dst);
/*
 * A barrier: an allreduce in which every ring of every algorithm has an
 * element for every chip, so that all chips end it within a few hops of
 * each other. Chips with no part in a small allreduce end it early, and
 * rings that start apart contend for ports they would otherwise take in
 * turn.
 */
int sim_barrier(struct sim *s);
/* The largest modeled time of the chips: when the last one finished. */
uint64_t sim_latest_ns(struct sim *s);

#endif /* NNP_SIM_H */
