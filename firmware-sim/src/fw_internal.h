/* SPDX-License-Identifier: MIT */
/* State shared by the firmware simulator's source files. */
#ifndef NNP_FW_INTERNAL_H
#define NNP_FW_INTERNAL_H

#include <stdatomic.h>
#include <threads.h>

#include "nnp_fw.h"
#include "fw_le.h"

/* What a port holds for its receivers at most, payload and packets. */
#define NNP_FW_PORT_RX_BYTES	(4u << 20)
#define NNP_FW_PORT_RX_PACKETS	1024u
/*
 * What one communicator (epoch) may hold of an in-process port's room:
 * all but a packet of the largest size and a quarter of the packets, so
 * one that never receives leaves every other job room to go on; a ring's
 * window (or two lanes' windows) of chunks fills most of it.
 */
#define NNP_FW_EPOCH_RX_BYTES	(NNP_FW_PORT_RX_BYTES - NNP_FW_ICL_MAX_PACKET)
#define NNP_FW_EPOCH_RX_PACKETS	(NNP_FW_PORT_RX_PACKETS * 3 / 4)
/*
 * Of a remote peer's room, the packets only aborts (no bytes) may take:
 * an abort never waits for credits, but never overruns the peer either.
 */
#define NNP_FW_ABORT_PACKETS	64u
/* Epochs a port remembers dropping unclaimed packets of (drop_stale_locked()). */
#define NNP_FW_LOST_EPOCHS	8

/*
 * The packet of a point-to-point message, and a collective's smallest
 * chunk: large enough that a packet's fixed cost amortizes, small enough
 * that a message pipelines over several.
 */
#define NNP_FW_CHUNK_BYTES	(64u << 10)

/* A wait_port: what a command of several rings waits for may come on any. */
#define NNP_FW_ANY_PORT		UINT32_MAX

/* Not a status: a link command waits, its queue parked (see nnp_fw_op). */
#define NNP_FW_PARKED		0xffffu

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

/*
 * A link command in flight: a collective, SEND or RECV (fw_coll.c,
 * fw_p2p.c). It runs in steps on its queue's worker; when it must wait for
 * a packet, or for room at the receiving end, the step parks it and
 * returns the worker. The packet's arrival, room freed, a link change, its
 * deadline or an abort make the queue runnable again, and a worker runs
 * the next step. So a wait never holds a worker another queue needs.
 */
struct nnp_fw_op {
	/* One step: NNP_STATUS_* once the command is done, or NNP_FW_PARKED. */
	uint16_t (*step)(struct nnp_fw *fw, struct nnp_fw_op *op);
	/* The command ended with @status: tell the peers if it failed; free. */
	void (*end)(struct nnp_fw *fw, struct nnp_fw_op *op, uint16_t status);
	uint32_t keys[2];	/* the keys it resolved (0: none) */
	uint32_t comm;		/* its communicator, for COMM_DESTROY's abort */
	uint16_t cid;
	/* Guarded by fw->lock: */
	bool parked;		/* waiting; no worker runs it */
	bool ready;		/* what it waits for may have come */
	bool aborted;		/* torn down: the next wait ends ABORTED */
	/* A link it uses went down: every later wait ends LINK_DOWN. */
	bool link_lost;
	uint32_t ports;		/* a collective's: the ports it uses, a bit each */
	uint32_t wait_port;
	uint64_t deadline_ns;	/* of the current wait (now_ns clock); 0: none */
	/* Longest one wait may be: its communicator's; UINT64_MAX: never. */
	uint64_t timeout_ns;
	/*
	 * Chunks of this chip's memory lent to an in-process peer
	 * (nnp_fw_icl_lend()), and how many of them it has finished reading
	 * or dropped: while they differ, the peer may still read the memory.
	 */
	uint32_t lent;
	atomic_uint returned;
	uint32_t returned_seen;	/* at its last wait for them: progress */
	/* Modeled clock (fw_clock.c), touched only by the worker running it: */
	uint64_t t_ns;		/* where the command stands */
	uint64_t tx_end_ns;	/* when its last packet left */
	uint64_t hbm_ns;	/* its device-memory busy time */
};

struct nnp_fw_queue {
	/*
	 * Guards @op and the command's execution: held by the worker for
	 * each step of a command, DMA included.
	 */
	mtx_t exec;
	struct nnp_fw_op *op;	/* the link command in flight, or NULL */
	struct nnp_fw_ring ring;
	uint32_t ctx;		/* 0: queue not created */
	uint32_t vector;
	uint64_t irq_arm;	/* host address of the armed word, or 0 */
	bool enabled;
	bool error;
	bool claimed;		/* a worker is running this queue */
	uint32_t error_info;	/* cid << 16 | status of the failure */
};

/*
 * A message on an inter-chip link: a copy of the payload (remote links,
 * point-to-point messages), or a descriptor (@desc, a slot of the
 * receiving port's pool) naming a chunk of the sender's device memory
 * until the receiver has read it: lent by the link command @owner of an
 * in-process sender, or with no @owner by the peer of a shared link
 * (fw_icl_shared.c), which gets @tag back.
 */
struct nnp_fw_packet {
	struct nnp_fw_packet *next;
	uint64_t epoch;		/* the communicator's secret */
	uint32_t seq;		/* nnp_fw_seq() */
	bool abort;		/* the sender's part failed */
	bool desc;		/* a descriptor, not a copy */
	uint32_t tag;		/* a shared link's peer's name for the chunk */
	bool credit;		/* a remote copy its sender counts (fw_icl_credit.c) */
	uint32_t credit_gen;	/* of the port's connection it came on */
	uint64_t arrived_ns;
	uint64_t model_ns;	/* its modeled arrival */
	size_t len;
	const uint8_t *data;	/* the copy after this header, or the lent chunk */
	struct nnp_fw_op *owner;	/* an in-process descriptor's lender */
};

/* A chunk lent to the peer of a shared link, by tag (fw_icl_shared.c). */
struct nnp_fw_lent {
	bool used;		/* out at the peer, until it gives it back */
	struct nnp_fw_op *owner;	/* its lender; NULL once forgotten */
	uint32_t gen;		/* bumped by each use: a tag names one */
	uint32_t len;
	uint32_t next_free;
};

struct nnp_fw_port;

/*
 * The busy periods of a port's transmit direction on the modeled clock,
 * oldest first, disjoint; everything before @floor counts as busy (the
 * older half is forgotten when all are used). Rings
 * that share a port send in the host's order, not the modeled one: a
 * packet takes the first gap at or after its time that fits it, so one
 * ring running ahead on the host does not push another's packets back.
 */
#define NNP_FW_TX_PERIODS	1024

struct nnp_fw_tx_schedule {
	uint64_t floor;
	uint32_t n;
	struct { uint64_t start, end; } busy[NNP_FW_TX_PERIODS];
};

/*
 * How a port reaches its peer, chosen when the port is wired (in-process
 * peer) or attached (remote peer), as NCCL picks a transport per peer.
 */
struct nnp_fw_transport {
	bool remote;		/* the peer is another process */
	/*
	 * Send @tpl on @port: a copy of its payload, or for a @tpl with an
	 * owner its chunk, lent or copied, leaving at modeled time @at or
	 * after. See nnp_fw_icl_send().
	 */
	uint16_t (*send)(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port,
			 const struct nnp_fw_packet *tpl, uint64_t at);
	/*
	 * The receiver took or dropped packets of @port: a sender at the
	 * other end may go on. @peer and @peer_port as the port had them.
	 */
	void (*room_freed)(struct nnp_fw *peer, uint32_t peer_port);
	/* Take back what @op lent on @port that the peer has not read. */
	void (*reclaim)(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port);
};

struct nnp_fw_port {
	struct nnp_fw *fw;	/* whose port this is, and which */
	uint32_t index;
	/* Guards everything below; never held with another port's lock. */
	mtx_t lock;
	const struct nnp_fw_transport *tp;	/* NULL: not wired */
	struct nnp_fw *peer;	/* in-process peer */
	uint32_t peer_chip;
	uint32_t peer_port;
	bool up;
	unsigned int tx_busy;	/* sends on their way into the in-process peer */
	cnd_t tx_idle;		/* tx_busy fell to 0 */
	struct nnp_fw_packet *rx_head;
	struct nnp_fw_packet *rx_tail;
	/* Descriptor slots, NNP_FW_PORT_RX_PACKETS, for an in-process peer. */
	struct nnp_fw_packet *desc_pool;
	struct nnp_fw_packet *desc_free;
	cnd_t lent_back;	/* a lent chunk was read: nnp_fw_icl_reclaim() */
	/*
	 * Shared with a remote peer (fw_icl_shared.c): our chunks it holds,
	 * NNP_FW_PORT_RX_PACKETS slots, and its chunks being read here.
	 */
	struct nnp_fw_lent *lent;
	uint32_t lent_free;	/* first free slot; NNP_FW_PORT_RX_PACKETS: none */
	uint32_t lent_out;	/* slots in use: the credits the peer holds */
	uint64_t lent_out_bytes;
	uint32_t peer_reads;
	/*
	 * Credits of a remote link (fw_icl_credit.c): whether both ends count
	 * them, which connection is counted, and our packets and bytes the
	 * peer holds as far as we know.
	 */
	bool credits;
	uint32_t credit_gen;
	uint32_t credit_out;
	uint64_t credit_out_bytes;
	uint64_t held_bytes;	/* payload queued, at most NNP_FW_PORT_RX_BYTES */
	uint32_t held_packets;
	/* tx_* counted by this port's sends, rx_* by its peer's (or deliveries) */
	uint64_t tx_bytes, rx_bytes, tx_packets, rx_packets, errors;
	uint64_t dropped;	/* arrivals refused: full, or not for us */
	/*
	 * Epochs whose unclaimed packets were dropped for room, the latest
	 * NNP_FW_LOST_EPOCHS: their later packets are dropped on arrival.
	 */
	uint64_t lost_epochs[NNP_FW_LOST_EPOCHS];
	uint32_t lost_next;
	/*
	 * Modeled: when the transmit direction is busy (fw_clock.c), and
	 * its busy time in all.
	 */
	struct nnp_fw_tx_schedule model_tx;
	uint64_t model_busy_ns;
	/* Bumped, under fw->lock (not this lock), by every nnp_fw_icl_wake(). */
	uint32_t wakes;
};

struct nnp_fw_comm {
	uint32_t ctx;		/* 0: free */
	uint32_t nranks;
	uint32_t rank;
	uint32_t pos;		/* position on the ring */
	uint32_t *order;	/* rank at each position; NULL: rank order */
	uint32_t send_port;	/* to the next position */
	uint32_t recv_port;	/* from the previous position */
	uint64_t epoch;		/* names the communicator on the links */
	uint64_t timeout_ns;	/* each wait of its commands; UINT64_MAX: never */
	uint32_t seq;		/* collectives started; the same on every rank */
	uint16_t error;		/* the first failure of its commands: COMM_STATUS */
	bool pass_abort;	/* an abort came: a worker sends it on */
	/* Allreduce's algorithm and the fabric it may use (fw_algo.c). */
	struct nnp_fw_topology topo;
	uint32_t ports;		/* every port topo names: packets are taken there */
	/*
	 * Its topology was given: until then a collective's packet of its
	 * epoch may come on any port (a peer's lanes may already run).
	 */
	bool topo_set;
	uint32_t p2p_sent[NNP_FW_MAX_PORTS];	/* messages, by port */
	uint32_t p2p_received[NNP_FW_MAX_PORTS];
};

/*
 * A packet is labelled with its communicator's epoch and a sequence
 * number: of its collective, or with NNP_FW_SEQ_P2P of its message on
 * that port.
 */
#define NNP_FW_SEQ_P2P		0x80000000u

static inline uint32_t nnp_fw_seq(uint32_t seq, bool p2p)
{
	return (p2p ? NNP_FW_SEQ_P2P : 0) | (seq & ~NNP_FW_SEQ_P2P);
}

/* Faults set by nnp_fw_fault_set() (fw_fault.c). */
struct nnp_fw_faults {
	atomic_bool hang;
	atomic_uint stuck_queue;	/* qid + 1; 0: none */
	atomic_uint msix_lost;		/* interrupts still to lose */
	atomic_uint dma_fail;		/* transfers still to fail */
	atomic_uint drop_ports;		/* ports whose arrivals are lost */
	atomic_uint downed_ports;	/* up ports DIE or a reset took down */
	atomic_uint delay_ms[NNP_FW_MAX_PORTS];
};

/* Busy time and the power and temperature model (fw_thermal.c). */
struct nnp_fw_thermal {
	uint64_t busy_ns;		/* busy periods ended since the reset */
	uint64_t busy_start_ns;		/* start of the one in progress */
	uint64_t window_start_ns;	/* the model's current window */
	uint64_t window_busy_ns;	/* busy time at its start */
	uint64_t window_bytes;		/* bytes moved at its start */
	double temp_mc;
	uint32_t power_uw;		/* over the last window */
};

/* The chip's modeled clock (fw_clock.c), guarded by fw->lock. */
struct nnp_fw_clock {
	uint64_t now_ns;	/* the latest end of a command */
	uint64_t hbm_busy_ns;
	uint64_t pcie_busy_ns;
	uint64_t commands;
};

struct nnp_fw_comm;

/*
 * What the links tell the layers above them: registered by
 * nnp_fw_create(), so that the links never call up directly.
 */
struct nnp_fw_link_hooks {
	/* A packet arrives on @port: wait the injected delay; true if lost. */
	bool (*rx_fault)(struct nnp_fw *fw, uint32_t port);
	/* As nnp_fw_comm_failed_locked(): an abort came, or packets were lost. */
	bool (*comm_failed_locked)(struct nnp_fw *fw, struct nnp_fw_comm *m,
				   uint16_t status);
};

/* What a link command tells the control plane when it ends. */
struct nnp_fw_engine_hooks {
	/* As nnp_fw_comm_ended(): true if the failure is to be passed on. */
	bool (*comm_ended)(struct nnp_fw *fw, uint32_t comm, uint64_t epoch,
			   uint16_t status);
};

struct nnp_fw_algo_ops;

struct nnp_fw {
	struct nnp_fw_config cfg;
	/* The layers' upward calls, set by nnp_fw_create(). */
	const struct nnp_fw_link_hooks *link_hooks;
	const struct nnp_fw_engine_hooks *engine_hooks;
	const struct nnp_fw_algo_ops *algo;	/* allreduce over several rings */
	/* The embedder's callbacks, through fw_fault.c's wrappers. */
	struct nnp_fw_host host;
	struct nnp_fw_host embedder;
	struct nnp_fw_faults faults;

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
	struct nnp_fw_thermal thermal;
	struct nnp_fw_clock clock;

	bool ctx_used[NNP_HW_MAX_CONTEXTS];
	struct nnp_fw_key keys[NNP_HW_MAX_KEYS];
	uint32_t key_pages;	/* pages of all host keys */
	uint16_t key_gen[NNP_HW_MAX_KEYS];
	struct nnp_fw_queue queues[NNP_HW_MAX_QUEUES];
	uint32_t next_queue;	/* round-robin start for workers */
	uint32_t wakes;		/* bumped by every nnp_fw_icl_wake() of any port */
	struct nnp_hw_counters counters;
	struct nnp_fw_comm comms[NNP_HW_MAX_COMMS];
	atomic_bool aborts_to_pass;	/* some comm's pass_abort is set */

	struct nnp_fw_port ports[NNP_FW_MAX_PORTS];
};

void nnp_fw_guest_error(struct nnp_fw *fw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * A user command ended with status @st: a guest error, or a warning if a
 * link or a peer caused it (the guest did nothing wrong).
 */
void nnp_fw_op_failed(struct nnp_fw *fw, uint16_t st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Latch interrupt causes @bits; returns true if vector 0 must fire. */
bool nnp_fw_int_latch_locked(struct nnp_fw *fw, uint32_t bits);

/* Ring helpers shared by the admin queue and user queues. */
bool nnp_fw_ring_setup_ok(const struct nnp_fw_ring *r, uint32_t min_depth,
			  uint32_t max_depth);
void nnp_fw_ring_start(struct nnp_fw_ring *r);
bool nnp_fw_ring_cq_has_room(const struct nnp_fw_ring *r);
bool nnp_fw_ring_has_work(const struct nnp_fw_ring *r);
/* Read the command at @r's SQ head into @cmd; false on a DMA fault. */
bool nnp_fw_ring_fetch(struct nnp_fw *fw, const struct nnp_fw_ring *r,
		       void *cmd);
/* Write the completion of the command at @r's SQ head; false on a DMA fault. */
bool nnp_fw_ring_post(struct nnp_fw *fw, const struct nnp_fw_ring *r,
		      uint16_t cid, uint16_t status, uint32_t result);
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

/* A key's index in fw->keys; a generation above it. */
#define NNP_FW_KEY_INDEX(k)	((k) & 0xffffu)

/* Key @key of @ctx, with fw->lock held; NULL if none or dying. */
struct nnp_fw_key *nnp_fw_key_lookup_locked(struct nnp_fw *fw, uint32_t ctx,
					    uint32_t key);
uint16_t nnp_fw_key_resolve(struct nnp_fw *fw, uint32_t ctx, uint32_t key,
			    uint64_t off, uint64_t len, uint32_t right,
			    struct nnp_fw_span *span);

/* User queues (fw_queue.c) */
uint16_t nnp_fw_queue_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_queue_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_queue_reset(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
/*
 * Stop and forget queues of @ctx (0: all, for a reset). A command in
 * flight ends ABORTED, its completion posted unless it is a reset.
 */
void nnp_fw_queues_destroy_ctx(struct nnp_fw *fw, uint32_t ctx, bool post);
/*
 * Wait for the commands of @ctx in flight on a worker, and end ABORTED
 * those waiting on a link that resolved @key.
 */
void nnp_fw_queues_abort_key(struct nnp_fw *fw, uint32_t ctx, uint32_t key);
/* The earliest end of a parked command's wait, with fw->lock held. */
uint64_t nnp_fw_queues_deadline_locked(struct nnp_fw *fw);
/* Make the parked commands whose wait is over runnable; true if any. */
bool nnp_fw_queues_expire_locked(struct nnp_fw *fw, uint64_t now);
bool nnp_fw_is_doorbell(uint32_t offset);
uint32_t nnp_fw_db_read_locked(struct nnp_fw *fw, uint32_t offset);
unsigned int nnp_fw_db_write_locked(struct nnp_fw *fw, uint32_t offset,
				    uint32_t value);

/* Inter-chip links (fw_icl.c) */
void nnp_fw_ports_init(struct nnp_fw *fw);
void nnp_fw_ports_fini(struct nnp_fw *fw);
/*
 * Send @len bytes on @port labelled (@epoch, @seq); NNP_STATUS_*. If the
 * receiving end is full, @op parks (NNP_FW_PARKED) until it has room, or
 * without @op the packet is dropped (NO_RESOURCES).
 */
uint16_t nnp_fw_icl_send(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 bool abort, const void *data, size_t len);
/*
 * A failure of communicator @epoch to the chips at each port in @ports:
 * aborts labelled @seq; a chip that has the communicator takes one as
 * its death whatever the label (rx_arrive()), and passes it on.
 */
void nnp_fw_icl_send_aborts(struct nnp_fw *fw, uint32_t ports, uint64_t epoch,
			    uint32_t seq);
/*
 * As nnp_fw_icl_send(), but zero-copy to an in-process peer: the packet
 * names the @len bytes of this chip's device memory at @data, which the
 * receiver reads in place later. Every chunk counts in op->lent, and in
 * op->returned once the memory is free again: at once for a copy (remote
 * peer), when the receiver has read or dropped it for a descriptor.
 * The chunk leaves on the modeled clock at @at or after (not @op's t_ns):
 * a ring sends a chunk once its own data is ready, which may be before
 * its command has received everything else (fw_coll.c).
 */
uint16_t nnp_fw_icl_lend(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 const void *data, size_t len, uint64_t at);
/*
 * Whether the first @want chunks @op lent on @port came back: SUCCESS, or
 * @op parks until the receiver returns one (LINK_DOWN once the link is,
 * PEER_TIMEOUT after a collective timeout without one).
 */
uint16_t nnp_fw_icl_wait_returned(struct nnp_fw *fw, struct nnp_fw_op *op,
				  uint32_t port, uint32_t want);
/*
 * Before @op ends: take back the chunks it lent on @port that the peer has
 * not read, and wait for reads in progress. Then nothing refers to its
 * memory any more.
 */
void nnp_fw_icl_reclaim(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port);

/* What a receiver makes of a payload of @len bytes. */
struct nnp_fw_rx_into {
	uint8_t *buf;		/* where it goes */
	const uint8_t *with;	/* reduce: buf = with @op payload; NULL: buf */
	bool reduce;		/* buf = buf @op payload; else buf = payload */
	unsigned int dtype, op;
};

/*
 * Take the packet (@epoch, @seq) on @port into @into (exactly @len bytes),
 * straight from the sender's memory for a descriptor;
 * NNP_STATUS_ABORTED if the sender gave up instead. If it has not come,
 * @op parks (NNP_FW_PARKED), or ends PEER_TIMEOUT once its wait passed
 * op->timeout_ns.
 */
uint16_t nnp_fw_icl_recv_into(struct nnp_fw *fw, struct nnp_fw_op *op,
			      uint32_t port, uint64_t epoch, uint32_t seq,
			      const struct nnp_fw_rx_into *into, size_t len);
/* nnp_fw_icl_recv_into() a copy into @buf. */
uint16_t nnp_fw_icl_recv(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 void *buf, size_t len);
/* Something @op's port waits for happened: runnable queues, host kicked. */
void nnp_fw_icl_wake(struct nnp_fw *fw, uint32_t port);
/* Fill @info for every port: GET_PORTS. */
void nnp_fw_icl_ports_info(struct nnp_fw *fw, struct nnp_hw_port_info *info);
/* Payload the ports hold now. */
uint64_t nnp_fw_icl_held_bytes(struct nnp_fw *fw);
/*
 * Drop what is queued on @port for the communicator of @epoch from
 * collectives numbered below @below (point-to-point messages too when
 * @below is above every number): leftovers of a failed one.
 */
void nnp_fw_icl_purge(struct nnp_fw *fw, uint32_t port, uint64_t epoch,
		      uint64_t below);
/* Drop every packet queued on any port (reset). */
void nnp_fw_icl_purge_all(struct nnp_fw *fw);
/*
 * The firmware's timed work: on a port short of room, drop the packets
 * no communicator claimed within the default timeout, though no arrival
 * pushes them out (a remote sender waiting for credits sends none).
 */
void nnp_fw_icl_sweep(struct nnp_fw *fw);

/* What fw_icl.c lends the shared transport (fw_icl_shared.c). */
extern const struct nnp_fw_transport nnp_fw_remote_transport;
extern const struct nnp_fw_transport nnp_fw_shared_transport;
/* Not a status: room came at the peer before the sender could park. */
#define NNP_FW_SEND_AGAIN	(NNP_FW_PARKED - 1)
/*
 * @pk arrives on @port (@remote: from another process): queued (SUCCESS;
 * a descriptor as a copy into a slot of the port's pool), or why not.
 */
uint16_t nnp_fw_icl_rx_arrive(struct nnp_fw *fw, uint32_t port,
			      struct nnp_fw_packet *pk, bool remote);
/* Remote @port, locked; NULL (nothing locked) if it is not attached remote. */
struct nnp_fw_port *nnp_fw_remote_port_lock(struct nnp_fw *fw,
					    unsigned int port);
/*
 * Credits (fw_icl_credit.c). Before a remote copy of @len bytes goes on
 * @port: take its credit, or park @op until the peer has room (an @op of
 * NULL, an abort, takes one of the NNP_FW_ABORT_PACKETS kept for aborts,
 * or is not sent: NO_RESOURCES); SUCCESS, NNP_FW_SEND_AGAIN or why not,
 * and *@gen the connection it was taken on, for nnp_fw_icl_credit_undo()
 * to give it back when the send failed.
 */
uint16_t nnp_fw_icl_credit_take(struct nnp_fw *fw, struct nnp_fw_op *op,
				uint32_t port, size_t len, uint32_t *gen);
void nnp_fw_icl_credit_undo(struct nnp_fw *fw, uint32_t port, size_t len,
			    uint32_t gen);
/*
 * Room for @len more bytes within the peer's bound, less the packets kept
 * for aborts, with p->lock held.
 */
bool nnp_fw_icl_peer_room_locked(const struct nnp_fw_port *p, size_t len);
/*
 * A new connection of remote @port starts counting credits: drop the
 * copies held from earlier ones, which its sender no longer counts.
 */
void nnp_fw_icl_drop_old_copies(struct nnp_fw *fw, uint32_t port);
/* A remote copy @pk arrived on @p, with p->lock held: it owes a credit. */
void nnp_fw_icl_credit_owed_locked(struct nnp_fw_port *p,
				   struct nnp_fw_packet *pk);
/* This end is done with @pk, with p->lock held: credit its sender. */
void nnp_fw_icl_credit_locked(struct nnp_fw_port *p,
			      struct nnp_fw_packet *pk);
/* The remote transport's send: a copy to the host's icl_tx. */
uint16_t nnp_fw_icl_remote_send(struct nnp_fw *fw, struct nnp_fw_op *op,
				uint32_t port, const struct nnp_fw_packet *tpl,
				uint64_t at);
/*
 * Park @op on @port for room at the peer, unless a wake came since
 * @wakes (then NNP_FW_SEND_AGAIN).
 */
uint16_t nnp_fw_icl_park_for_room(struct nnp_fw *fw, struct nnp_fw_op *op,
				  uint32_t port, uint32_t wakes);
/* @port's wake count, to pass to nnp_fw_icl_park_for_room(). */
uint32_t nnp_fw_icl_wakes(struct nnp_fw *fw, uint32_t port);
/*
 * A packet of @len bytes left @port at modeled @depart taking @wire ns:
 * the port's and chip's counters, the port's busy time, @op's progress.
 */
void nnp_fw_icl_sent(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port,
		     size_t len, uint64_t depart, uint64_t wire);
/* A transport's room_freed when the peer learns of room otherwise. */
void nnp_fw_icl_room_freed_none(struct nnp_fw *peer, uint32_t peer_port);
/* The shared transport's slots of @p, freed (nnp_fw_ports_fini()). */
void nnp_fw_icl_shared_fini(struct nnp_fw_port *p);
/*
 * Unlink the packet *@link (@prev before it) of @p and let it go, with
 * p->lock held: a copy freed, a descriptor back to its lender.
 */
void nnp_fw_icl_drop_at(struct nnp_fw_port *p, struct nnp_fw_packet **link,
			struct nnp_fw_packet *prev);
/* The peer of shared @p is done with its chunk @pk: with p->lock held. */
void nnp_fw_icl_give_back_locked(struct nnp_fw_port *p,
				 const struct nnp_fw_packet *pk);

/* Communicators (fw_comm.c) and collectives (fw_coll.c) */
uint16_t nnp_fw_comm_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_comm_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_comm_topology(struct nnp_fw *fw,
			      const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_comm_status(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			    uint32_t *result);
/*
 * A command of communicator @comm (@epoch) ended with @status: true if
 * that is a failure the communicator had not had, to be sent on as an
 * abort (it is gone, or this is its first).
 */
bool nnp_fw_comm_ended(struct nnp_fw *fw, uint32_t comm, uint64_t epoch,
		       uint16_t status);
/*
 * Communicator @m failed on this chip, with fw->lock held: an abort of it
 * came in (@status ABORTED), or its packets were dropped for want of room
 * (NO_RESOURCES). @status is what COMM_STATUS reports, its command in
 * flight ends ABORTED, and a worker sends the abort on to its peers, once.
 * True if a worker must run for it.
 */
bool nnp_fw_comm_failed_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
			       uint16_t status);
/* The ports @m's collectives use, a bit each: its ring's and its algorithm's. */
uint32_t nnp_fw_comm_ports(const struct nnp_fw_comm *m);
/* Send on the aborts nnp_fw_comm_failed_locked() took in. */
void nnp_fw_comms_pass_aborts(struct nnp_fw *fw);
/* Forget communicators of @ctx (0: all) and what the links hold for them. */
void nnp_fw_comms_clear(struct nnp_fw *fw, uint32_t ctx);
/*
 * Communicator @comm (a command's field: any value) of context @ctx, with
 * fw->lock held; NULL if it is no communicator of @ctx.
 */
struct nnp_fw_comm *nnp_fw_comm_of_locked(struct nnp_fw *fw, uint32_t ctx,
					  uint32_t comm);
/*
 * A wait of @ms (COMM_CREATE's timeout_ms) in ns: 0 is the device's
 * default, NNP_HW_COMM_TIMEOUT_NEVER UINT64_MAX.
 */
uint64_t nnp_fw_comm_timeout_ns(const struct nnp_fw *fw, uint32_t ms);
/* The communicator named @epoch on this chip, with fw->lock held; NULL if none. */
struct nnp_fw_comm *nnp_fw_comm_by_epoch_locked(struct nnp_fw *fw, uint64_t epoch);
/*
 * Start collective @cmd (ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER)
 * of context @ctx: *@op to run, or a status if it cannot start.
 */
uint16_t nnp_fw_collective(struct nnp_fw *fw, uint32_t ctx,
			   const struct nnp_hw_queue_cmd *cmd,
			   struct nnp_fw_op **op);

/* Start SEND or RECV @cmd (fw_p2p.c) of context @ctx, as above. */
uint16_t nnp_fw_p2p(struct nnp_fw *fw, uint32_t ctx,
		    const struct nnp_hw_queue_cmd *cmd, struct nnp_fw_op **op);

/*
 * Command execution (fw_exec.c): returns NNP_STATUS_*, or for a link
 * command sets *@op for the queue to run.
 */
uint16_t nnp_fw_exec(struct nnp_fw *fw, uint32_t ctx,
		     const struct nnp_hw_queue_cmd *cmd, struct nnp_fw_op **op);
/* Add device-memory bytes a command moved to the counters. */
void nnp_fw_count_local(struct nnp_fw *fw, uint64_t bytes);

/* The modeled clock (fw_clock.c) */
/* Fill the configuration's clock parameters left 0 with NNP-T's. */
void nnp_fw_clock_init(struct nnp_fw *fw);
/* A reset, with fw->lock held: modeled time and busy times restart. */
void nnp_fw_clock_reset_locked(struct nnp_fw *fw);
/* A command fetched now starts at the returned modeled time. */
uint64_t nnp_fw_clock_begin(struct nnp_fw *fw);
/* A command ended at modeled @end, its engines busy as given. */
void nnp_fw_clock_end(struct nnp_fw *fw, uint64_t end, uint64_t hbm_ns,
		      uint64_t pcie_ns);
void nnp_fw_clock_end_op(struct nnp_fw *fw, const struct nnp_fw_op *op);
/* @op moves @bytes of device-memory traffic (reads plus writes). */
void nnp_fw_clock_hbm(struct nnp_fw *fw, struct nnp_fw_op *op, uint64_t bytes);

/* When a packet of @wire ns ready at @t can leave in @tx, not taking it. */
uint64_t nnp_fw_tx_fit(const struct nnp_fw_tx_schedule *tx, uint64_t t,
		       uint64_t wire);
/* The packet leaves at @start: the period is taken. */
void nnp_fw_tx_take(struct nnp_fw_tx_schedule *tx, uint64_t start,
		    uint64_t wire);

static inline uint64_t nnp_fw_ns_at(uint64_t bytes, uint32_t mbps)
{
	return bytes * 1000 / mbps;
}

static inline uint64_t nnp_fw_hbm_ns(const struct nnp_fw *fw, uint64_t bytes)
{
	return nnp_fw_ns_at(bytes, fw->cfg.hbm_mbps);
}

static inline uint64_t nnp_fw_max_ns(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Telemetry (fw_thermal.c), with fw->lock held but for init. */
void nnp_fw_thermal_init(struct nnp_fw *fw, uint64_t now);
/* A reset: busy time restarts with the counters. */
void nnp_fw_thermal_reset_locked(struct nnp_fw *fw, uint64_t now);
/* A user command step starts or ends on a worker (fw->executing). */
void nnp_fw_busy_begin_locked(struct nnp_fw *fw, uint64_t now);
void nnp_fw_busy_end_locked(struct nnp_fw *fw, uint64_t now);
/* Close the model's window if it is over. */
void nnp_fw_thermal_step_locked(struct nnp_fw *fw, uint64_t now);
bool nnp_fw_is_telemetry_reg(uint32_t offset);
uint32_t nnp_fw_telemetry_read_locked(struct nnp_fw *fw, uint32_t offset,
				      uint64_t now);

/* Faults on demand (fw_fault.c) */
/* Route @host through the fault wrappers into fw->host. */
void nnp_fw_faults_init(struct nnp_fw *fw, const struct nnp_fw_host *host);
bool nnp_fw_fault_hung(struct nnp_fw *fw);
bool nnp_fw_fault_queue_stuck(struct nnp_fw *fw, uint32_t qid);
/* A packet arrives on @port: wait the injected delay; true if it is lost. */
bool nnp_fw_fault_rx(struct nnp_fw *fw, uint32_t port);
/* A reset: the chip's own faults end (any thread, fw->lock may be held). */
void nnp_fw_faults_reset(struct nnp_fw *fw);
/*
 * No lock held: take down every link of the chip that is up, at both ends
 * (in-process peers), remembering them for nnp_fw_faults_revive().
 */
void nnp_fw_links_take_down(struct nnp_fw *fw);
/* Booted after a reset, no lock held: the links taken down come back. */
void nnp_fw_faults_revive(struct nnp_fw *fw);

#endif /* NNP_FW_INTERNAL_H */
