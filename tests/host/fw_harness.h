/* SPDX-License-Identifier: MIT */
/*
 * A host for the firmware simulator in unit tests: a window of fake host
 * memory for DMA, a clock the test moves by hand, and counters of interrupts
 * and reported guest errors.
 */
#ifndef NNP_FW_HARNESS_H
#define NNP_FW_HARNESS_H

#include <stdatomic.h>
#include <threads.h>

#include "nnp_fw.h"

#define HOST_MEM_BASE	0x100000ull
#define HOST_MEM_SIZE	0x400000u

/* Where the harness keeps its admin queue in fake host memory. */
#define H_AQ_SQ		HOST_MEM_BASE
#define H_AQ_CQ		(HOST_MEM_BASE + 0x10000)
#define H_AQ_DATA	(HOST_MEM_BASE + 0x20000)
#define H_AQ_DEPTH	4
#define DEV_MEM_SIZE	(8ull << 20)
#define BOOT_MS		20
#define HEARTBEAT_MS	100
/*
 * The device's default collective timeout (cfg.coll_timeout_ms). A safety
 * net for tests whose commands should never time out: longer than any of
 * the harness's own waits (5 s a chip thread, 30 s one thread for all), so
 * that a busy machine keeping a chip off the CPU never fires it. A test of
 * a timeout moves the chip's clock past it (fw_chips_wait_parked(),
 * fw_chips_time_out()).
 */
#define COLL_TIMEOUT_MS	60000

/*
 * Where fw_harness_queue_create() puts queue q's rings, and their depth:
 * 64 commands of 64 bytes fill the 4 KiB before the CQ, and take a GROUP
 * of up to 31 members (group_fw.c times one of 31).
 */
#define H_QSQ(q)	(HOST_MEM_BASE + 0x30000 + (q) * 0x2000)
#define H_QCQ(q)	(HOST_MEM_BASE + 0x31000 + (q) * 0x2000)
#define H_QDEPTH	64

struct fw_harness {
	struct nnp_fw *fw;
	uint8_t host_mem[HOST_MEM_SIZE];
	uint8_t *dev_mem;
	uint64_t now_ns;
	unsigned int irqs[NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES)];
	unsigned int guest_errors;
	char last_error[256];
	/* Failures the firmware blames on a link or a peer, not the guest. */
	unsigned int warnings;
	char last_warning[256];
	uint32_t aq_slot;	/* fw_harness_admin()'s next SQ slot */
	uint32_t q_tail[NNP_HW_MAX_QUEUES];	/* user queues' next SQ slots */
	/* The firmware's icl_tx goes here (remote links); NULL: fails. */
	int (*icl_tx)(struct fw_harness *h, unsigned int port, uint64_t epoch,
		      uint32_t seq, bool abort, uint64_t model_ns,
		      const void *data, size_t len);
	/* The shared transport's callbacks go here; NULL: absent. */
	int (*icl_tx_lent)(struct fw_harness *h, unsigned int port,
			   uint64_t epoch, uint32_t seq, uint64_t model_ns,
			   uint64_t offset, size_t len, uint32_t tag);
	void (*icl_give_back)(struct fw_harness *h, unsigned int port,
			      uint32_t tag);
	void (*icl_reclaim)(struct fw_harness *h, unsigned int port,
			    const uint32_t *tags, size_t n);
	/* The firmware's icl_drop: counted, with the last port dropped. */
	unsigned int icl_drops;
	unsigned int icl_dropped_port;
	/* Credits of remote links (nnp_fw_link_credits()); NULL: absent. */
	void (*icl_credit)(struct fw_harness *h, unsigned int port, size_t len);
	/* The chip stopped or runs again (remote ports); NULL: ignored. */
	void (*icl_chip_state)(struct fw_harness *h, unsigned int port, bool up);
	/*
	 * dma_map maps at most this many bytes of the window at once (0:
	 * maps nothing, so the firmware falls back to dma_read/dma_write);
	 * maps counts mappings, mapped those not given back yet.
	 */
	uint64_t map_max;
	atomic_uint maps;
	atomic_int mapped;
	/* now_ns is the host's monotonic clock, not now_ns above... */
	bool real_clock;
	/* ...plus this: fw_harness_advance_ms() moves a running chip on. */
	_Atomic uint64_t skew_ns;
	/*
	 * Called after each dma_read the firmware makes, with what it read:
	 * a test's way to act between two of the firmware's steps. NULL:
	 * none.
	 */
	void (*after_dma_read)(struct fw_harness *h, uint64_t addr, size_t len);
	/*
	 * Called at each of the firmware's kicks, on the kicking thread, as
	 * a worker woken at once would run then. NULL: none.
	 */
	void (*on_kick)(struct fw_harness *h);
	/* The firmware's kicks: counted, and waited for by fw_chip threads. */
	mtx_t kick_lock;
	cnd_t kicked;
	unsigned int kicks;
};

/*
 * The modeled clock's parameters (the icl_*, hbm_*, pcie_* and
 * cmd_overhead_ns fields) of the chips made from now on; 0: NNP-T's.
 */
extern struct nnp_fw_config fw_harness_model;

/* CMocka setup/teardown: *state becomes a struct fw_harness, booted. */
int fw_harness_setup(void **state);
/* The same, left in BOOTING. */
int fw_harness_setup_unbooted(void **state);
int fw_harness_teardown(void **state);

/* Move @h's clock (the hand-moved or the real one) on and run its timers. */
void fw_harness_advance_ms(struct fw_harness *h, uint64_t ms);
void *fw_harness_host_ptr(struct fw_harness *h, uint64_t addr);

/* Program and enable the admin queue. */
void fw_harness_aq_setup(struct fw_harness *h, uint64_t sq, uint64_t cq,
			 uint32_t depth);
/* Booted, with the admin queue at H_AQ_* enabled. */
int fw_harness_setup_aq(void **state);
/* The same for a chip with id @chip_id (the others are chip 7). */
void fw_harness_setup_chip(void **state, uint32_t chip_id);
/*
 * Run @cmd on the admin queue set up by fw_harness_setup_aq() and return
 * its completion status; *result gets the completion's result if non-NULL.
 */
uint16_t fw_harness_admin(struct fw_harness *h, struct nnp_hw_admin_cmd cmd,
			  uint32_t *result);

/* Admin helpers that assert success. */
void fw_harness_ctx_create(struct fw_harness *h, uint32_t ctx);
uint16_t fw_harness_key_register(struct fw_harness *h, struct nnp_hw_key_args a,
				 uint64_t list, uint32_t list_len, uint32_t *key);
uint32_t fw_harness_dev_key(struct fw_harness *h, uint32_t ctx, uint64_t base,
			    uint64_t len, uint32_t rights);
/* Queue @qid of depth H_QDEPTH with rings at H_QSQ(qid) and H_QCQ(qid). */
void fw_harness_queue_create(struct fw_harness *h, uint32_t ctx, uint32_t qid);
struct nnp_hw_counters fw_harness_counters(struct fw_harness *h);
/* COMM_CREATE of a ring of two, sending on port 0, receiving on port 1. */
uint16_t fw_harness_comm_pair(struct fw_harness *h, uint32_t ctx, uint32_t comm,
			      uint32_t rank, uint64_t epoch);
/*
 * Chips 0 and 1 (ids 0 and 1), each with context @ctx and its queue 0,
 * chip 0's port 0 to chip 1's port 1 and back, and communicator @comm
 * (@epoch) of both, as fw_harness_comm_pair() makes it; and their end.
 */
void fw_harness_pair_up(struct fw_harness *h[2], uint32_t ctx, uint32_t comm,
			uint64_t epoch);
void fw_harness_pair_down(struct fw_harness *h[2]);
/* COMM_STATUS of communicator @comm of @ctx, asserting the command succeeds. */
uint32_t fw_harness_comm_status(struct fw_harness *h, uint32_t ctx,
				uint32_t comm);
/* GET_PORTS into @info, asserting the harness chip's 4 ports come back. */
void fw_harness_ports(struct fw_harness *h, struct nnp_hw_port_info *info);
/* Put @cmd in queue @q's next slot and ring its doorbell; returns the slot. */
uint32_t fw_harness_post(struct fw_harness *h, uint32_t q,
			 struct nnp_hw_queue_cmd cmd);

/*
 * A chip of a multi-chip test: its queue 0 runs one command at a time on a
 * thread of its own, so that chips waiting on each other all make progress.
 */
struct fw_chip {
	struct fw_harness *h;
	uint16_t status;	/* the command's, or 0xffff: none within 5 s */
	uint32_t slot;
	uint16_t phase;		/* the completion's expected phase tag */
	uint64_t posted;	/* commands posted since the queue started */
	unsigned int nap_us;	/* a slow chip: sleeps this long between turns */
	thrd_t thread;
};

/* One worker's turn: run the queues, then wait (briefly) for a kick. */
void fw_harness_run_queues(struct fw_harness *h);

/*
 * Post @cmd on @c's queue 0 and run it to completion on a new thread;
 * the chip's clock becomes the real one, for the links' timeouts.
 */
void fw_chip_start(struct fw_chip *c, struct nnp_hw_queue_cmd cmd);
/* Wait for it: c->status then holds its completion status. */
void fw_chip_join(struct fw_chip *c);
/*
 * Wait (5 s at most) until the commands of the @n chips at @c all wait,
 * parked, for what none of them will send: a test of a timeout then moves
 * their clocks past it rather than waiting for it.
 */
void fw_chips_wait_parked(struct fw_chip *c, unsigned int n);
/* The same for the commands of @h's queues 0 to @nq - 1. */
void fw_harness_wait_parked(struct fw_harness *h, uint32_t nq);
/* Make @c a booted chip (id 7) with context @ctx and its queue 0. */
void fw_chip_setup(struct fw_chip *c, uint32_t ctx);
/* Post @cmd on @c's queue 0 with no thread to run it yet. */
void fw_chip_post(struct fw_chip *c, struct nnp_hw_queue_cmd cmd);
/*
 * Run the commands posted on the @n chips at @c from this one thread,
 * each chip's queues in turn, until all completed (30 s at most): a
 * command waiting for another chip must give its thread up. Each
 * c[i].status then holds its completion status. Every chip's queues run
 * in every round, its command done or not: a chip forwards routed packets
 * (v1.12) between others.
 */
void fw_chips_run_one_thread(struct fw_chip *c, unsigned int n);
/*
 * Run them so until the commands not done all wait, parked, then move
 * those chips' clocks past the device's timeout (COLL_TIMEOUT_MS): run on,
 * they end as they would at it, with no test waiting that long.
 */
void fw_chips_time_out(struct fw_chip *c, unsigned int n);

#endif /* NNP_FW_HARNESS_H */
