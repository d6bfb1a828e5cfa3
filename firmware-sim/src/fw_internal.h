/* SPDX-License-Identifier: MIT */
/* State shared by the firmware simulator's source files. */
#ifndef NNP_FW_INTERNAL_H
#define NNP_FW_INTERNAL_H

#include <threads.h>

#include "nnp_fw.h"

/* Pages a host key may span: 4 GiB. */
#define NNP_FW_MAX_KEY_PAGES	(1u << 20)

struct nnp_fw_ring {
	uint64_t sq_base;
	uint64_t cq_base;
	uint32_t depth;
	uint32_t sq_tail;	/* written by the driver or user (doorbell) */
	uint32_t cq_head;	/* written by the driver or user */
	uint32_t sq_head;	/* firmware's position */
	uint32_t cq_tail;	/* firmware's position */
	uint16_t phase;		/* phase tag of the current CQ pass */
};

struct nnp_fw_admin_queue {
	struct nnp_fw_ring ring;
	bool enabled;
	bool error;
};

struct nnp_fw_key {
	uint32_t key;		/* 0: slot free */
	uint32_t ctx;
	uint32_t type;
	uint32_t rights;
	uint64_t length;
	uint64_t dev_base;
	uint32_t page_offset;
	uint32_t npages;
	uint64_t *pages;
	bool dead;		/* unregistering: lookups fail */
};

struct nnp_fw_queue {
	/* Held by the worker for the whole of one command, DMA included. */
	mtx_t exec;
	struct nnp_fw_ring ring;
	uint32_t ctx;		/* 0: queue not created */
	uint32_t vector;
	bool enabled;
	bool error;
	bool claimed;		/* a worker is running this queue */
	uint32_t error_info;	/* cid << 16 | status of the failure */
};

/* A message on an inter-chip link. */
struct nnp_fw_packet {
	struct nnp_fw_packet *next;
	uint64_t tag;		/* epoch << 32 | collective sequence */
	bool abort;		/* the sender's part failed */
	size_t len;
	uint8_t data[];
};

struct nnp_fw_port {
	/* Guards everything below; never held with another port's lock. */
	mtx_t lock;
	cnd_t cond;		/* a packet arrived or the link changed */
	struct nnp_fw *peer;	/* in-process peer */
	bool remote;		/* the peer is across host->icl_tx instead */
	uint32_t peer_chip;	/* the remote peer's chip id */
	uint32_t peer_port;
	bool up;
	struct nnp_fw_packet *rx_head;
	struct nnp_fw_packet *rx_tail;
	/* tx_* counted by this port's sends, rx_* by its peer's (or deliveries) */
	uint64_t tx_bytes, rx_bytes, tx_packets, rx_packets, errors;
};

struct nnp_fw_comm {
	uint32_t ctx;		/* 0: free */
	uint32_t nranks;
	uint32_t rank;
	uint32_t pos;		/* position on the ring */
	uint32_t *order;	/* rank at each position; NULL: rank order */
	uint32_t send_port;	/* to the next position */
	uint32_t recv_port;	/* from the previous position */
	uint32_t epoch;		/* names the communicator on the links */
	uint32_t seq;		/* collectives started; the same on every rank */
	uint32_t p2p_sent[NNP_FW_MAX_PORTS];	/* messages, by port */
	uint32_t p2p_received[NNP_FW_MAX_PORTS];
};

/*
 * A packet's tag: the communicator's epoch, then the sequence number of
 * its collective, or with NNP_FW_TAG_P2P of its message on that port.
 */
#define NNP_FW_TAG_P2P		0x80000000u

static inline uint64_t nnp_fw_tag(uint32_t epoch, uint32_t seq, bool p2p)
{
	return (uint64_t)epoch << 32 | (p2p ? NNP_FW_TAG_P2P : 0) |
	       (seq & ~NNP_FW_TAG_P2P);
}

struct nnp_fw {
	struct nnp_fw_config cfg;
	struct nnp_fw_host host;

	/*
	 * Guards everything below but the queues' exec locks. Held only for
	 * short updates, never across DMA or a host callback that may block.
	 */
	mtx_t lock;
	uint32_t generation;	/* bumped by every reset */
	uint32_t fw_status;
	uint32_t fw_error;
	uint32_t heartbeat;
	uint32_t scratch;
	uint32_t int_status;
	uint32_t int_enable;
	uint64_t boot_done_ns;
	uint64_t next_heartbeat_ns;
	struct nnp_fw_admin_queue aq;
	bool aq_busy;		/* an admin command is in flight; kept over reset */
	bool reset_pending;	/* reset cleanup not yet done by nnp_fw_run() */
	uint32_t executing;	/* user commands in flight; kept over reset */

	bool ctx_used[NNP_HW_MAX_CONTEXTS];
	struct nnp_fw_key keys[NNP_HW_MAX_KEYS];
	uint16_t key_gen[NNP_HW_MAX_KEYS];
	struct nnp_fw_queue queues[NNP_HW_MAX_QUEUES];
	uint32_t next_queue;	/* round-robin start for workers */
	struct nnp_hw_counters counters;
	struct nnp_fw_comm comms[NNP_HW_MAX_COMMS];

	struct nnp_fw_port ports[NNP_FW_MAX_PORTS];
};

void nnp_fw_guest_error(struct nnp_fw *fw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Latch interrupt causes @bits; returns true if vector 0 must fire. */
bool nnp_fw_int_latch_locked(struct nnp_fw *fw, uint32_t bits);

/* Ring helpers shared by the admin queue and user queues. */
bool nnp_fw_ring_setup_ok(const struct nnp_fw_ring *r, uint32_t min_depth,
			  uint32_t max_depth);
void nnp_fw_ring_start(struct nnp_fw_ring *r);
bool nnp_fw_ring_has_work(const struct nnp_fw_ring *r);
/* Account one consumed command and posted completion. */
void nnp_fw_ring_advance(struct nnp_fw_ring *r);

/* Admin queue register access, with fw->lock held. */
uint32_t nnp_fw_aq_reg_read_locked(struct nnp_fw *fw, uint32_t offset);
unsigned int nnp_fw_aq_reg_write_locked(struct nnp_fw *fw, uint32_t offset,
					uint32_t value);
/* Consume submitted admin commands; called from nnp_fw_run(). */
void nnp_fw_aq_process(struct nnp_fw *fw);

/* Contexts and keys (fw_ctx.c); admin handlers return NNP_STATUS_*. */
bool nnp_fw_ctx_valid_locked(const struct nnp_fw *fw, uint32_t ctx);
uint16_t nnp_fw_ctx_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_ctx_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_key_register(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			     uint32_t *key);
uint16_t nnp_fw_key_unregister(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
/* Drop every key (reset), with fw->lock held. */
void nnp_fw_keys_clear_locked(struct nnp_fw *fw);
/* Wait until no command of context @ctx is executing. */
void nnp_fw_ctx_quiesce(struct nnp_fw *fw, uint32_t ctx);

/*
 * A key resolved for one access: a copy of its descriptor, valid while the
 * caller holds its queue's exec lock (unregistering waits for that).
 */
struct nnp_fw_span {
	uint32_t type;
	uint64_t start;		/* byte offset within the key */
	uint64_t len;
	uint64_t dev_base;
	uint32_t page_offset;
	const uint64_t *pages;
};

uint16_t nnp_fw_key_resolve(struct nnp_fw *fw, uint32_t ctx, uint32_t key,
			    uint64_t off, uint64_t len, uint32_t right,
			    struct nnp_fw_span *span);

/* User queues (fw_queue.c) */
uint16_t nnp_fw_queue_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_queue_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_queue_reset(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
/* Stop and forget queues of @ctx (0: all); waits for commands in flight. */
void nnp_fw_queues_destroy_ctx(struct nnp_fw *fw, uint32_t ctx);
bool nnp_fw_is_doorbell(uint32_t offset);
uint32_t nnp_fw_db_read_locked(struct nnp_fw *fw, uint32_t offset);
unsigned int nnp_fw_db_write_locked(struct nnp_fw *fw, uint32_t offset,
				    uint32_t value);

/* Inter-chip links (fw_icl.c) */
void nnp_fw_ports_init(struct nnp_fw *fw);
void nnp_fw_ports_fini(struct nnp_fw *fw);
/* Send @len bytes on @port tagged @tag; NNP_STATUS_*. */
uint16_t nnp_fw_icl_send(struct nnp_fw *fw, uint32_t port, uint64_t tag,
			 bool abort, const void *data, size_t len);
/*
 * Receive the packet tagged @tag on @port into @buf (exactly @len bytes),
 * waiting up to the collective timeout; NNP_STATUS_ABORTED if the sender
 * gave up instead.
 */
uint16_t nnp_fw_icl_recv(struct nnp_fw *fw, uint32_t port, uint64_t tag,
			 void *buf, size_t len);
/* Fill @info for every port: GET_PORTS. */
void nnp_fw_icl_ports_info(struct nnp_fw *fw, struct nnp_hw_port_info *info);
/*
 * Drop what is queued on @port for the communicator of @epoch from
 * collectives numbered below @below: leftovers of a failed one.
 */
void nnp_fw_icl_purge(struct nnp_fw *fw, uint32_t port, uint32_t epoch,
		      uint64_t below);

/* Communicators (fw_comm.c) and collectives (fw_coll.c) */
uint16_t nnp_fw_comm_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_comm_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
/* Forget communicators of @ctx (0: all), with fw->lock held. */
void nnp_fw_comms_clear_locked(struct nnp_fw *fw, uint32_t ctx);
/*
 * Run collective @cmd (ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER) of
 * context @ctx; bytes copied within device memory are added to *@local.
 */
uint16_t nnp_fw_collective(struct nnp_fw *fw, uint32_t ctx,
			   const struct nnp_hw_queue_cmd *cmd, uint64_t *local);

/* SEND or RECV @cmd (fw_p2p.c) of context @ctx. */
uint16_t nnp_fw_p2p(struct nnp_fw *fw, uint32_t ctx,
		    const struct nnp_hw_queue_cmd *cmd);

/* Command execution (fw_exec.c): returns NNP_STATUS_*. */
uint16_t nnp_fw_exec(struct nnp_fw *fw, uint32_t ctx,
		     const struct nnp_hw_queue_cmd *cmd);

#endif /* NNP_FW_INTERNAL_H */
