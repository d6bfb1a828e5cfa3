/* SPDX-License-Identifier: MIT */
/*
 * The firmware simulator's bottom layer: the types every layer shares (the
 * chip, its ports, queues, communicators and link commands) and what any
 * layer may call: messages to the embedder, command rings, the modeled
 * clock and the communicator table's lookups. fw_le.h and fw_reduce.h are
 * this layer's too. The layers, bottom up: base, transport, engines,
 * algorithms, control; a file calls its own layer and those below, and a
 * layer below reaches one above only through the hooks struct nnp_fw
 * holds (docs/architecture.md, "Firmware layers").
 */
#ifndef NNP_FW_BASE_H
#define NNP_FW_BASE_H

#include <stdatomic.h>
#include <threads.h>

#include "nnp_fw.h"
#include "fw_le.h"

/* Defined by the layers above, which register them in struct nnp_fw. */
struct nnp_fw_transport;
struct nnp_fw_link_hooks;
struct nnp_fw_engine_hooks;

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
/* Epochs a port remembers dropping unclaimed packets of (fw_purge.c). */
#define NNP_FW_LOST_EPOCHS	8
/* Epochs a chip remembers destroying a communicator of (fw_comms.c). */
#define NNP_FW_GONE_EPOCHS	8
/* Packet copies kept for reuse, of each size: a few ports' room. */
#define NNP_FW_POOL_BYTES	(16u << 20)
/* Scratch buffers a chip keeps: a reduce-scatter in place takes two. */
#define NNP_FW_SCRATCH_SLOTS	2

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
	/*
	 * Slots the command at the head needs in each ring to start (0 or
	 * 1: one; a GROUP's members and completions, v1.13: len + 1).
	 */
	uint32_t need;
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
 * What a link command was called with: a collective's (v1.16) alike on
 * every rank of a correct program, and checked so; a SEND's or RECV's
 * (for COMM_STATE) its peer in root, NNP_FW_CALL_NO_PEER if it names a
 * port. Opcode 0: neither.
 */
#define NNP_FW_CALL_NO_PEER	0xffff

struct nnp_fw_call {
	uint8_t opcode, dtype, op;
	uint16_t root;
	uint16_t rank;		/* the caller's */
	uint64_t count;		/* elements */
	uint16_t members;	/* allreduces of a GROUP fused in it; 0: one */
};

static inline bool nnp_fw_call_collective(const struct nnp_fw_call *c)
{
	return c->opcode && c->opcode != NNP_CMD_SEND &&
	       c->opcode != NNP_CMD_RECV;
}

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
	/*
	 * A collective's call: the chunks an in-process peer lends it are
	 * checked against it (fw_rx.c). Failed, the completion's result and
	 * rsvd (low and high half) say more: a MISMATCH's, who differed.
	 */
	struct nnp_fw_call call;
	uint64_t detail;
	/*
	 * A ring collective's packet labels, [seq, seq + seqs) (0: none):
	 * while it is on its communicator's calls, a chunk lent with one of
	 * them is checked against its call as it arrives, read or not.
	 */
	uint32_t seq, seqs;
	uint16_t cid;
	/*
	 * A GROUP's (fw_group.c, v1.13): its members' keys (two each) and
	 * communicators, members of each, and the ids of the completions
	 * posted after its own when it succeeds, one per member.
	 */
	uint32_t members;
	const uint32_t *member_keys;
	const uint32_t *member_comms;
	const uint16_t *member_cids;
	/* Guarded by fw->lock: */
	bool parked;		/* waiting; no worker runs it */
	bool ready;		/* what it waits for may have come */
	/*
	 * Torn down: the next wait ends with this status, ABORTED, or
	 * PEER_LEFT for a collective a rank that left never called; 0: not.
	 */
	uint16_t aborted;
	/* A link it uses went down: every later wait ends LINK_DOWN. */
	bool link_lost;
	uint32_t ports;		/* the ports it sends on or waits at, a bit each */
	uint32_t wait_port;
	struct nnp_fw_op *next_call;	/* on its communicator's calls */
	/*
	 * Such a chunk came from a peer that called it otherwise (fw_rx.c):
	 * the detail of its MISMATCH; 0: none.
	 */
	uint64_t mismatch;
	uint64_t deadline_ns;	/* of the current wait (now_ns clock); 0: none */
	/*
	 * For COMM_STATE, under fw->lock: when its current wait began and
	 * on which port; a command of parts (fw_rounds.c, fw_algo.c) takes
	 * those of its part that has waited longest.
	 */
	uint64_t wait_since_ns;
	uint32_t waits_on;
	/*
	 * Also for COMM_STATE: its number among its communicator's
	 * collectives (0: not one), and the bytes its call names, counted
	 * when it succeeds.
	 */
	uint32_t call_no;
	uint64_t bytes;
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
	uint64_t start_ns;	/* its modeled start */
	uint64_t t_ns;		/* where the command stands */
	uint64_t tx_end_ns;	/* when its last packet left */
	uint64_t hbm_ns;	/* its device-memory busy time */
};

/* Whether @op uses key @key: unregistering it ends @op ABORTED. */
static inline bool nnp_fw_op_uses_key(const struct nnp_fw_op *op, uint32_t key)
{
	uint32_t i;

	for (i = 0; i < 2 * op->members; i++)
		if (op->member_keys[i] == key)
			return true;
	return op->keys[0] == key || op->keys[1] == key;
}

/* Whether @op runs on communicator @comm: its abort ends @op ABORTED. */
static inline bool nnp_fw_op_uses_comm(const struct nnp_fw_op *op,
				       uint32_t comm)
{
	uint32_t i;

	for (i = 0; i < op->members; i++)
		if (op->member_comms[i] == comm)
			return true;
	return op->comm == comm;
}

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
	uint64_t shadow;	/* host address of its nnp_hw_queue_shadow, or 0 */
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
	/*
	 * A relay's copy of such a chunk: its lender's call, checked as the
	 * lender's own would be (opcode 0: none, a copy checked by length).
	 */
	struct nnp_fw_call call;
	uint8_t pooled;		/* 1 + its class in the pool (0: not pooled) */
};

/* A chunk lent to the peer of a shared link, by tag (fw_icl_shared.c). */
struct nnp_fw_lent {
	bool used;		/* out at the peer, until it gives it back */
	struct nnp_fw_op *owner;	/* its lender; NULL once forgotten */
	uint32_t gen;		/* bumped by each use: a tag names one */
	uint32_t len;
	uint32_t num;		/* which of its lender's chunks: op->lent then */
	uint32_t next_free;
};

struct nnp_fw_port;
struct nnp_fw_scratch;

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
	/*
	 * Free, and destroyed with ABORT by this context: its commands still
	 * queued end ABORTED, as those the abort ended did, not NOT_FOUND,
	 * until the slot is made again or the context ends.
	 */
	uint32_t aborted_ctx;
	uint32_t nranks;
	uint32_t rank;		/* NNP_FW_TRANSIT_RANK: a transit (v1.22) */
	uint32_t pos;		/* position on the ring */
	uint32_t *order;	/* rank at each position; NULL: rank order */
	uint32_t send_port;	/* to the next position */
	uint32_t recv_port;	/* from the previous position */
	uint64_t epoch;		/* names the communicator on the links */
	uint64_t timeout_ns;	/* each wait of its commands; UINT64_MAX: never */
	uint32_t seq;		/* collectives started; the same on every rank */
	/*
	 * Its ring collectives in flight, by nnp_fw_op.next_call: the chunks
	 * in-process peers lend them are checked as they arrive (fw_rx.c).
	 */
	struct nnp_fw_op *calls;
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
	/*
	 * COMM_ROUTES (v1.12): the port towards each rank (nranks of them,
	 * NNP_HW_ROUTE_NONE: none), NULL until given; and routed messages
	 * sent to and received from each rank below NNP_HW_MAX_ROUTED_RANKS,
	 * and a bit for each of those ranks whose leave came (v1.21).
	 */
	uint8_t *routes;
	uint16_t *routed_sent;
	uint16_t *routed_received;
	uint8_t *routed_left;
	/* COMM_STATE's counts (v1.18), as struct nnp_hw_comm_state names them. */
	uint32_t calls_started, calls_done, messages_done;
	uint64_t bytes_done;
	/*
	 * A peer left after @left_calls collectives (v1.20; the fewest, if
	 * several did): a collective numbered past them ends PEER_LEFT. So
	 * does a message by port to a port in @left_ports, once nothing
	 * that came before the leave is left for it.
	 */
	bool left;
	uint32_t left_calls;
	uint32_t left_ports;
};

/*
 * The rank of a transit communicator (v1.22, NNP_HW_COMM_TRANSIT): none,
 * so no routed label (10 bits a rank) names it. Its ring hop is the pair
 * send_port, recv_port: what comes in on one goes out on the other.
 */
#define NNP_FW_TRANSIT_RANK	UINT32_MAX

static inline bool nnp_fw_comm_transit(const struct nnp_fw_comm *m)
{
	return m->rank == NNP_FW_TRANSIT_RANK;
}

/*
 * A packet is labelled with its communicator's epoch and a sequence
 * number: of its collective, or with NNP_FW_SEQ_P2P of its message on
 * that port.
 */
#define NNP_FW_SEQ_P2P		0x80000000u
/*
 * A collective's abort (NNP_FW_SEQ_P2P clear) with this bit says instead
 * that its rank left the communicator after the collectives counted in
 * the bits below it (v1.20): only a collective numbered past them fails.
 */
#define NNP_FW_SEQ_LEAVE	0x40000000u
#define NNP_FW_LEAVE_CALLS	(NNP_FW_SEQ_LEAVE - 1)

/*
 * Whether collective @call_no comes after @left ones, counted modulo
 * NNP_FW_SEQ_LEAVE as the leave label carries them: up to half that far
 * ahead is after, so a count that wrapped still compares.
 */
static inline bool nnp_fw_call_after(uint32_t call_no, uint32_t left)
{
	uint32_t d = (call_no - left) & NNP_FW_LEAVE_CALLS;

	return call_no && d && d <= NNP_FW_LEAVE_CALLS / 2;
}

/*
 * How a message of @m by @port must end once it waits: the peer there
 * left, after all it sent (one link keeps its order); 0 if it may wait.
 */
static inline uint16_t nnp_fw_comm_port_torn(const struct nnp_fw_comm *m,
					     uint32_t port)
{
	return m->left_ports >> port & 1 ? NNP_STATUS_PEER_LEFT : 0;
}

/*
 * How a routed message of @m with rank @rank must end once it waits: that
 * rank left, after all it sent this one (a pair's packets keep their
 * order); 0 if it may wait.
 */
static inline uint16_t nnp_fw_comm_rank_torn(const struct nnp_fw_comm *m,
					     uint32_t rank)
{
	return m->routed_left && rank < NNP_HW_MAX_ROUTED_RANKS &&
	       rank < m->nranks && m->routed_left[rank / 8] >> rank % 8 & 1 ?
	       NNP_STATUS_PEER_LEFT : 0;
}

/* How collective @call_no of @m must end before it runs: 0 if it may run. */
static inline uint16_t nnp_fw_comm_call_torn(const struct nnp_fw_comm *m,
					     uint32_t call_no)
{
	return m->left && nnp_fw_call_after(call_no, m->left_calls) ?
	       NNP_STATUS_PEER_LEFT : 0;
}

static inline uint32_t nnp_fw_seq(uint32_t seq, bool p2p)
{
	return p2p ? NNP_FW_SEQ_P2P | (seq & 0x3fffffffu) :
		     seq & ~NNP_FW_SEQ_P2P;
}

/*
 * A routed message's label (v1.12): its source and destination ranks and
 * its number between them (modulo 1023: a receive takes the oldest packet
 * of a number, and a pair's packets keep their order, so only a stale
 * packet of a failed message 1023 messages back could be mistaken).
 * Number 1023 is no message's (v1.21): an abort so numbered says that its
 * source left, after every message it sent the destination.
 */
#define NNP_FW_SEQ_ROUTED	0xc0000000u
#define NNP_FW_RANK_MASK	(NNP_HW_MAX_ROUTED_RANKS - 1)
#define NNP_FW_ROUTED_LEAVE	NNP_FW_RANK_MASK

_Static_assert(NNP_HW_MAX_ROUTED_RANKS == 1u << 10,
	       "a routed label has 10 bits for each rank");

/* The number of a pair's next routed message, from its count @n. */
static inline uint32_t nnp_fw_routed_next(uint16_t *n)
{
	uint32_t k = *n;

	*n = (uint16_t)((k + 1) % NNP_FW_ROUTED_LEAVE);
	return k;
}

static inline uint32_t nnp_fw_seq_routed(uint32_t src, uint32_t dst,
					 uint32_t n)
{
	return NNP_FW_SEQ_ROUTED | (src & NNP_FW_RANK_MASK) << 20 |
	       (dst & NNP_FW_RANK_MASK) << 10 | (n & NNP_FW_RANK_MASK);
}

static inline bool nnp_fw_seq_is_routed(uint32_t seq)
{
	return (seq & NNP_FW_SEQ_ROUTED) == NNP_FW_SEQ_ROUTED;
}

static inline uint32_t nnp_fw_seq_dst(uint32_t seq)
{
	return seq >> 10 & NNP_FW_RANK_MASK;
}

static inline uint32_t nnp_fw_seq_src(uint32_t seq)
{
	return seq >> 20 & NNP_FW_RANK_MASK;
}

/* Whether a packet labelled @seq, an abort if @abort, says its src left. */
static inline bool nnp_fw_seq_is_routed_leave(uint32_t seq, bool abort)
{
	return abort && nnp_fw_seq_is_routed(seq) &&
	       (seq & NNP_FW_RANK_MASK) == NNP_FW_ROUTED_LEAVE;
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
	/* Each context's engines since CTX_CREATE (GET_CTX_USAGE). */
	uint64_t ctx_busy_ns[NNP_HW_MAX_CONTEXTS][NNP_HW_ENGINES];
};

struct nnp_fw_algo_ops;

/*
 * The log (fw_log.c, v1.19): its own lock, taken last, as a message may
 * be logged with any other held.
 */
struct nnp_fw_log {
	mtx_t lock;
	uint32_t seq;		/* messages logged */
	struct nnp_hw_log_entry e[NNP_HW_LOG_ENTRIES];
};

struct nnp_fw {
	struct nnp_fw_config cfg;
	struct nnp_fw_log log;
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
	/*
	 * The epochs of the last communicators destroyed here (0: none):
	 * their packets still on the way, a peer's leave passing through,
	 * are dropped on arrival rather than held as for one not made yet.
	 */
	uint64_t gone_epochs[NNP_FW_GONE_EPOCHS];
	uint32_t gone_next;
	atomic_bool aborts_to_pass;	/* some comm's pass_abort is set */
	atomic_bool no_call_check;	/* nnp_fw_set_call_check() off */
	/*
	 * Events for GET_EVENTS (fw_events.c): @ev_count from @ev_head on,
	 * @ev_dropped gone since the last GET_EVENTS; @ev_notify: queued
	 * since a worker last raised NNP_INT_FW_EVENT.
	 */
	struct nnp_hw_event events[NNP_HW_EVENTS];
	uint32_t ev_head;
	uint32_t ev_count;
	uint32_t ev_dropped;
	atomic_bool ev_notify;
	/*
	 * Forwarding routed packets (fw_relay.c): packets to forward may
	 * wait (@pending), a worker is forwarding (@busy), and the op that
	 * parks for room at a next hop, woken like a queue's.
	 */
	atomic_bool relay_pending;
	atomic_bool relay_busy;
	struct nnp_fw_op relay_op;
	/* Scratch kept for the next in-place command (fw_buffers.c). */
	_Atomic(struct nnp_fw_scratch *) scratch_slots[NNP_FW_SCRATCH_SLOTS];

	struct nnp_fw_port ports[NNP_FW_MAX_PORTS];
};

/* Whether collectives that start now check their ranks' calls alike. */
static inline bool nnp_fw_calls_checked(struct nnp_fw *fw)
{
	return !atomic_load_explicit(&fw->no_call_check, memory_order_relaxed);
}

/*
 * Buffers kept for reuse (fw_buffers.c). A packet copy of @len bytes of
 * payload, after its header; freed with nnp_fw_packet_free() on any chip.
 * A chip's scratch of at least @bytes, given back when its command ends
 * (NULL: none); what the chip keeps is released on a reset, when its last
 * context goes, and with the chip.
 */
struct nnp_fw_packet *nnp_fw_packet_alloc(size_t len);
void nnp_fw_packet_free(struct nnp_fw_packet *pk);
/*
 * Packet buffers the pool holds now for packets of @len bytes: of
 * NNP_FW_POOL_BYTES at most (0 for a packet too large to keep).
 */
uint32_t nnp_fw_packets_pooled(size_t len);
void *nnp_fw_scratch_take(struct nnp_fw *fw, size_t bytes);
void nnp_fw_scratch_give(struct nnp_fw *fw, void *buf);
void nnp_fw_scratch_release(struct nnp_fw *fw);

void nnp_fw_guest_error(struct nnp_fw *fw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The log's register words (FW_LOG_SEQ, the FW_LOG window): @offset's. */
bool nnp_fw_is_log_reg(uint32_t offset);
uint32_t nnp_fw_log_read(struct nnp_fw *fw, uint32_t offset);
/*
 * A user command ended with status @st: a guest error, or a warning if a
 * link or a peer caused it (the guest did nothing wrong).
 */
void nnp_fw_op_failed(struct nnp_fw *fw, uint16_t st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Ring helpers shared by the admin queue and user queues. */
bool nnp_fw_ring_setup_ok(const struct nnp_fw_ring *r, uint32_t min_depth,
			  uint32_t max_depth);
void nnp_fw_ring_start(struct nnp_fw_ring *r);
bool nnp_fw_ring_cq_has_room(const struct nnp_fw_ring *r);
bool nnp_fw_ring_sq_ready(const struct nnp_fw_ring *r);
bool nnp_fw_ring_has_work(const struct nnp_fw_ring *r);
/* Read the command at @r's SQ head into @cmd; false on a DMA fault. */
bool nnp_fw_ring_fetch(struct nnp_fw *fw, const struct nnp_fw_ring *r,
		       void *cmd);
/* The same for the command @ahead slots past the head. */
bool nnp_fw_ring_fetch_ahead(struct nnp_fw *fw, const struct nnp_fw_ring *r,
			     uint32_t ahead, void *cmd);
/*
 * Write the completion of the command at @r's SQ head, @result its result
 * and rsvd (low and high half); false on a DMA fault.
 */
bool nnp_fw_ring_post(struct nnp_fw *fw, const struct nnp_fw_ring *r,
		      uint16_t cid, uint16_t status, uint64_t result);
/* Account one consumed command and posted completion. */
void nnp_fw_ring_advance(struct nnp_fw_ring *r);

/* The communicator table's lookups (fw_comms.c) */
/* The ports @m's collectives use, a bit each: its ring's and its algorithm's. */
uint32_t nnp_fw_comm_ports(const struct nnp_fw_comm *m);
/* The ports @m's routes (COMM_ROUTES) start on, a bit each. */
uint32_t nnp_fw_comm_route_ports(const struct nnp_fw_comm *m);
/*
 * Communicator @comm (a command's field: any value) of context @ctx that
 * this chip is a rank of, with fw->lock held; NULL if it is none of
 * @ctx's, or a transit one (only the admin commands that make, route,
 * read and end it name those: nnp_fw_comm_slot_locked()).
 */
struct nnp_fw_comm *nnp_fw_comm_of_locked(struct nnp_fw *fw, uint32_t ctx,
					  uint32_t comm);
struct nnp_fw_comm *nnp_fw_comm_slot_locked(struct nnp_fw *fw, uint32_t ctx,
					    uint32_t comm);
/*
 * The status of a command of @ctx on @comm that nnp_fw_comm_of_locked()
 * did not find: ABORTED if @ctx aborted it (COMM_DESTROY with ABORT),
 * else NOT_FOUND.
 */
uint16_t nnp_fw_comm_missing_locked(const struct nnp_fw *fw, uint32_t ctx,
				    uint32_t comm);
/*
 * A wait of @ms (COMM_CREATE's timeout_ms) in ns: 0 is the device's
 * default, NNP_HW_COMM_TIMEOUT_NEVER UINT64_MAX.
 */
uint64_t nnp_fw_comm_timeout_ns(const struct nnp_fw *fw, uint32_t ms);
/* The communicator named @epoch on this chip, with fw->lock held; NULL if none. */
struct nnp_fw_comm *nnp_fw_comm_by_epoch_locked(struct nnp_fw *fw, uint64_t epoch);
void nnp_fw_epoch_gone_locked(struct nnp_fw *fw, uint64_t epoch, bool gone);
bool nnp_fw_epoch_is_gone_locked(const struct nnp_fw *fw, uint64_t epoch);
/* The modeled clock (fw_clock.c) */
/* Fill the configuration's clock parameters left 0 with NNP-T's. */
void nnp_fw_clock_init(struct nnp_fw *fw);
/* A reset, with fw->lock held: modeled time and busy times restart. */
void nnp_fw_clock_reset_locked(struct nnp_fw *fw);
/* A command fetched now starts at the returned modeled time. */
uint64_t nnp_fw_clock_begin(struct nnp_fw *fw);
/*
 * A peer in another process says its packet arrives at modeled
 * @model_ns: that, but no more than NNP_FW_PEER_AHEAD_NS past this chip's
 * modeled clock. The modeled clock is telemetry (timestamps, busy times;
 * no timeout runs on it) shared by every user of the chip, and such a
 * peer is only as honest as its owner: one packet of it may not move the
 * clock further than that.
 */
#define NNP_FW_PEER_AHEAD_NS	1000000000ull	/* 1 s of modeled time */
uint64_t nnp_fw_clock_peer_bound(struct nnp_fw *fw, uint64_t model_ns);
/*
 * A command of context @ctx that started at modeled @start ended at @end
 * on engine @engine (NNP_HW_ENGINE_*), device memory and host DMA busy as
 * given.
 */
void nnp_fw_clock_end(struct nnp_fw *fw, uint32_t ctx, unsigned int engine,
		      uint64_t start, uint64_t end, uint64_t hbm_ns,
		      uint64_t pcie_ns);
/* Link command @op of context @ctx ended (the collective engine). */
void nnp_fw_clock_end_op(struct nnp_fw *fw, uint32_t ctx,
			 const struct nnp_fw_op *op);
/* Context @ctx's engine busy times, NNP_HW_ENGINES of them. */
void nnp_fw_ctx_usage_get(struct nnp_fw *fw, uint32_t ctx, uint64_t *busy_ns);
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

#endif /* NNP_FW_BASE_H */
