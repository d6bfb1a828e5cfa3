/* SPDX-License-Identifier: MIT */
/*
 * The firmware simulator's links (transport layer): ports and their wiring,
 * receive queues, sending and lending chunks, purging, credits and shared
 * memory with a remote peer. What it offers the engines above; what it
 * needs of the control plane it asks through fw->link_hooks.
 */
#ifndef NNP_FW_TRANSPORT_H
#define NNP_FW_TRANSPORT_H

#include "fw_base.h"

/*
 * Firmware simulator inter-chip links: each port has a peer (chip, port), a
 * state, a queue of packets received, and a transport (struct
 * nnp_fw_transport) chosen when it is wired or attached: how it sends,
 * tells its peer of room freed, and takes back lent chunks. A remote peer
 * (another process) is reached through the host's icl_tx, and what the
 * host receives for us comes in through nnp_fw_icl_deliver(): the payload
 * is copied.
 *
 * A peer in this process gets copies too for point-to-point messages, but
 * a collective's chunk crosses as a descriptor: where the chunk lies in the
 * sender's device memory, taken from a fixed pool of the receiving port
 * (no allocation), and the receiver reduces or copies straight from there
 * into its own memory. The sender's link command (nnp_fw_op) counts what
 * it lent and what came back; it must not write over a lent chunk, nor end,
 * before the chunk came back (nnp_fw_icl_wait_returned()), and when it
 * ends early it takes back what was not read (nnp_fw_icl_reclaim()), so no
 * descriptor outlives the command, its keys or a reset. Dropping a
 * descriptor returns it like reading it.
 *
 * A packet is labelled with its communicator's epoch, the job's 64-bit
 * secret, and is taken only by that communicator's command, only on the
 * port it arrived on. On arrival a packet a communicator of this chip
 * would never take from that port (a collective's, off its ring) is
 * dropped and counted. One whose epoch no communicator here has yet is
 * kept, as its receiver may not have made its communicator yet. Any
 * packet, its communicator made or not, holds its room for as long as no
 * one needs it; past the device's default timeout (cfg.coll_timeout_ms,
 * whatever the communicators' own) it is dropped, with the job's other
 * packets there, and counted, by an arrival that finds the port full or
 * by the firmware's timed work once the port is short of room
 * (nnp_fw_icl_sweep()): a remote sender waiting for credits sends nothing
 * that would push it out. A communicator here that held it fails with
 * NO_RESOURCES. A rank of one job may be slow to make its communicator
 * after the rendezvous answer (seconds, loading its data on a debug
 * kernel), and one may never receive at all, while the port's room it
 * holds is every job's: so no one job's timeout may stretch it past
 * others' need.
 *
 * A port holds at most NNP_FW_PORT_RX_BYTES and NNP_FW_PORT_RX_PACKETS,
 * one communicator of an in-process peer at most NNP_FW_EPOCH_RX_BYTES and
 * NNP_FW_EPOCH_RX_PACKETS of it, so one that never receives leaves the
 * others room (several may fill it, until their packets go stale). An
 * in-process sender finding its peer full, or its communicator's share
 * taken, waits (parked, see nnp_fw_op) until the
 * receiver takes a packet: credits. A remote sender counts credits the
 * peer gives back (fw_icl_credit.c) when both ends offered them; without,
 * past the bound packets are dropped and counted. Waiting for a packet
 * parks the same way, bounded by the communicator's timeout on the host's
 * monotonic clock, and learns at once when the link goes down.
 *
 * Locks: a chip's fw->lock may be held when taking one of its ports'
 * locks, never the other way round, and never two chips' locks at once.
 */

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
	 * Hand copy @pk itself to the peer, as send does a copy of it
	 * (SUCCESS: it is the peer's now); NULL for a transport that must
	 * copy it.
	 */
	uint16_t (*give)(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port,
			 struct nnp_fw_packet *pk);
	/*
	 * The receiver took or dropped packets of @port: a sender at the
	 * other end may go on. @peer and @peer_port as the port had them.
	 */
	void (*room_freed)(struct nnp_fw *peer, uint32_t peer_port);
	/* Take back what @op lent on @port that the peer has not read. */
	void (*reclaim)(struct nnp_fw *fw, struct nnp_fw_op *op, uint32_t port);
	/*
	 * Whether one of the first @upto chunks @op lent is still out at
	 * the peer of @p, though counted returned, with p->lock held; NULL:
	 * never. On a shared link a chunk that could not be lent (not in
	 * device memory) is copied and counts as returned at once, ahead of
	 * chunks lent before it: the count of returns alone does not say
	 * that those came back.
	 */
	bool (*out_locked)(const struct nnp_fw_port *p,
			   const struct nnp_fw_op *op, uint32_t upto);
};

/*
 * What the links tell the layers above them: registered by
 * nnp_fw_create(), so that the links never call up directly.
 */
struct nnp_fw_link_hooks {
	/* A packet arrives on @port: wait the injected delay; true if lost. */
	bool (*rx_fault)(struct nnp_fw *fw, uint32_t port);
	/*
	 * As nnp_fw_comm_failed_locked(): an abort came, packets were
	 * lost, or a chunk showed a peer called the collective otherwise,
	 * on @port.
	 */
	bool (*comm_failed_locked)(struct nnp_fw *fw, struct nnp_fw_comm *m,
				   uint16_t status, uint32_t port);
	/* As nnp_fw_comm_left_locked(): a peer's leave came on @port. */
	bool (*peer_left_locked)(struct nnp_fw *fw, struct nnp_fw_comm *m,
				 uint32_t calls, uint32_t port);
	/* As nnp_fw_comm_rank_left_locked(): rank @rank's routed leave came. */
	bool (*rank_left_locked)(struct nnp_fw *fw, struct nnp_fw_comm *m,
				 uint32_t rank);
	/* @port's link went down or came up: its NNP_PORT_* @state now. */
	void (*link_changed)(struct nnp_fw *fw, uint32_t port, uint32_t state);
};

/* Inter-chip links: ports (fw_port.c) */
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
 * This rank leaves communicator @epoch after @calls collectives: told to
 * the chips at each port in @ports, as an abort labelled NNP_FW_SEQ_LEAVE
 * (v1.20), which fails only what it never called.
 */
void nnp_fw_icl_send_leave(struct nnp_fw *fw, uint32_t ports, uint64_t epoch,
			   uint32_t calls);
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
/*
 * As nnp_fw_icl_recv() into @buf, the packet (@epoch, @seq) from whichever
 * port it came in on: a routed message's (v1.12), parked on any port.
 */
uint16_t nnp_fw_icl_recv_any(struct nnp_fw *fw, struct nnp_fw_op *op,
			     uint64_t epoch, uint32_t seq, void *buf,
			     size_t len);
/*
 * The first packet of @epoch to have come, on any port, that
 * @wanted(@arg, port, packet) accepts (with the port's lock held), with
 * fw->lock held: true, with its port and label in *@port and *@seq, or
 * false if none has come. A RECV from any source (v1.26) learns so which
 * message is its own.
 */
bool nnp_fw_icl_first_locked(struct nnp_fw *fw, uint64_t epoch,
			     bool (*wanted)(const void *arg, uint32_t port,
					    const struct nnp_fw_packet *pk),
			     const void *arg, uint32_t *port, uint32_t *seq);
/*
 * Ring collective @op of @m, labelled op->seq to op->seq + op->seqs - 1,
 * starts receiving on @port, with fw->lock held: until
 * nnp_fw_icl_calls_del_locked(), each chunk an in-process peer lends with
 * one of its labels is checked against its call as it arrives, read or
 * not, and those queued on @port already are now. True if one of those
 * differs: op->mismatch then holds the detail of @op's MISMATCH (nnp_hw.h).
 * One that arrives later differing fails @m MISMATCH, which ends @op
 * ABORTED at its next wait, op->mismatch set.
 */
bool nnp_fw_icl_calls_add_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
				 struct nnp_fw_op *op, uint32_t port);
/*
 * @op of @m ends: off its calls (if on them), with fw->lock held; its
 * communicator hears of its end so (nnp_fw_comm_ended()).
 */
void nnp_fw_icl_calls_del_locked(struct nnp_fw_comm *m,
				 const struct nnp_fw_op *op);
/* nnp_fw_icl_recv_into() a copy into @buf. */
uint16_t nnp_fw_icl_recv(struct nnp_fw *fw, struct nnp_fw_op *op,
			 uint32_t port, uint64_t epoch, uint32_t seq,
			 void *buf, size_t len);
/* Something @op's port waits for happened: runnable queues, host kicked. */
void nnp_fw_icl_wake(struct nnp_fw *fw, uint32_t port);
/*
 * The chip stopped (@up false) or booted again: for a @port not wired in
 * this process, the host's icl_chip_state takes its link down at both
 * ends or lets it come back, or (no peer attached yet) tells the next
 * peer. True if @port is remote; false, and nothing done, if the host has
 * no such hook. No lock held.
 */
bool nnp_fw_link_chip_state(struct nnp_fw *fw, unsigned int port, bool up);
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
/*
 * Drop everything queued on @port for the communicator of @epoch, which is
 * gone from this chip, where it was rank @rank (NNP_FW_TRANSIT_RANK: a
 * transit one): routed packets for other ranks, in transit here, count as
 * dropped (icl_dropped, the port's errors); every packet's room goes back
 * to its sender.
 */
void nnp_fw_icl_purge_comm(struct nnp_fw *fw, uint32_t port, uint64_t epoch,
			   uint32_t rank);
/*
 * Communicator @epoch was just made, or routed, here: the aborts and
 * leaves of it that came before, held for it, are taken now as they
 * would have been on arrival.
 */
void nnp_fw_icl_claim_held(struct nnp_fw *fw, uint64_t epoch);
/* Drop every packet queued on any port (reset). */
void nnp_fw_icl_purge_all(struct nnp_fw *fw);
/*
 * The firmware's timed work: on a port short of room, drop the packets
 * no communicator claimed within the default timeout, though no arrival
 * pushes them out (a remote sender waiting for credits sends none).
 */
void nnp_fw_icl_sweep(struct nnp_fw *fw);

/* What fw_lend.c lends the shared transport (fw_icl_shared.c). */
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
/*
 * Routed packets for other chips (fw_relay.c): forward those waiting on
 * any port, when some came or a next hop has room again. Called by the
 * workers (nnp_fw_run_queues()); one forwards at a time.
 */
void nnp_fw_relay_run(struct nnp_fw *fw);
/* After nnp_fw_create(): the relay's waits have no deadline. */
void nnp_fw_relay_init(struct nnp_fw *fw);
/* Routes were given: packets waiting for them may go now. */
void nnp_fw_relay_routes_changed(struct nnp_fw *fw);
/*
 * Send received @pk (a copy or a descriptor) on @port for @op, leaving at
 * its modeled arrival or after (the relay); as nnp_fw_icl_send(). A copy
 * no remote sender counts goes whole to an in-process peer: on SUCCESS
 * *@gone says @pk is no longer the caller's.
 */
uint16_t nnp_fw_icl_forward(struct nnp_fw *fw, struct nnp_fw_op *op,
			    uint32_t port, struct nnp_fw_packet *pk,
			    bool *gone);
/* Tell the peer of @port that this end has room again. */
void nnp_fw_icl_room_freed(struct nnp_fw *fw, uint32_t port);
/*
 * Take the links on @ports (a mask) down together, as nnp_fw_link_set()
 * takes one: every end goes down before anything that ends is told.
 */
void nnp_fw_links_set_down(struct nnp_fw *fw, uint32_t ports);

/* Between the transport's files. */
/* Kick the embedder to run the queues a wake made runnable. */
void nnp_fw_icl_kick(struct nnp_fw *fw);
/* Mark the ops parked on @port ready, with fw->lock held; true if any. */
bool nnp_fw_icl_wake_locked(struct nnp_fw *fw, uint32_t port);
/*
 * Park @op until something happens on @port, with fw->lock held: its
 * first wait starts its timeout, a wait past it ends PEER_TIMEOUT.
 */
uint16_t nnp_fw_icl_park_locked(struct nnp_fw *fw, struct nnp_fw_op *op,
				uint32_t port);
/* Whether a packet has room on its port: nnp_fw_icl_room_locked(). */
enum nnp_fw_room {
	NNP_FW_ROOM_OK,
	NNP_FW_ROOM_NONE,	/* not even with the stale packets dropped */
	NNP_FW_ROOM_LOST,	/* its epoch's packets were dropped stale */
};
/*
 * Room for @pk (its communicator here @m, or NULL) on @p, with fw->lock
 * and p->lock held, made if need be by dropping the packets held past the
 * device's default timeout (fw_purge.c); *@woke is set if a communicator
 * failed for that.
 */
enum nnp_fw_room nnp_fw_icl_room_locked(struct nnp_fw *fw,
					struct nnp_fw_port *p,
					const struct nnp_fw_comm *m,
					const struct nnp_fw_packet *pk,
					bool *woke);
/* The in-process transport (fw_lend.c), which nnp_fw_link_connect() wires. */
extern const struct nnp_fw_transport nnp_fw_local_transport;

/*
 * Receive queues (fw_rx_queue.c), the bottom of the links: what a port
 * holds, and what a packet owes as it leaves (a credit, a return, its
 * memory). Nothing here calls back up into arrival or purging.
 */
/* A copy of @data (none: left to fill), its payload right after the header. */
struct nnp_fw_packet *nnp_fw_icl_packet_new(uint64_t epoch, uint32_t seq,
					    bool abort, const void *data,
					    size_t len);
/*
 * Queue admitted @pk on @p, with fw->lock and p->lock held, and count it
 * received: a descriptor as a copy in a slot of the port's pool (the one
 * returned), a copy itself.
 */
struct nnp_fw_packet *nnp_fw_icl_queue_locked(struct nnp_fw *fw,
					      struct nnp_fw_port *p,
					      struct nnp_fw_packet *pk);
/* What becomes of an arriving packet, as arrival (fw_rx.c) decides. */
enum nnp_fw_rx_fate {
	NNP_FW_RX_KEEP,		/* queued for its receiver */
	NNP_FW_RX_TAKEN,	/* taken as it came (an abort), and let go */
	NNP_FW_RX_GONE,		/* refused: its job ended here, counted dropped */
	NNP_FW_RX_DROPPED,	/* refused: counted dropped, the port's error */
	NNP_FW_RX_BROKEN,	/* refused: the port's error alone */
	NNP_FW_RX_REFUSED,	/* refused, uncounted: its sender keeps it */
};
/*
 * Carry out @fate for @pk arriving on @p (@remote: from another process,
 * whose copy owes its sender a credit, paid back at once unless kept),
 * with p->lock held, and fw->lock for every fate but BROKEN and REFUSED.
 */
void nnp_fw_icl_settle_locked(struct nnp_fw *fw, struct nnp_fw_port *p,
			      struct nnp_fw_packet *pk, bool remote,
			      enum nnp_fw_rx_fate fate);
/* This end is done with @pk, with p->lock held: credit its sender. */
void nnp_fw_icl_credit_locked(struct nnp_fw_port *p,
			      struct nnp_fw_packet *pk);
/* The peer of shared @p is done with its chunk @pk: with p->lock held. */
void nnp_fw_icl_give_back_locked(struct nnp_fw_port *p,
				 const struct nnp_fw_packet *pk);
/*
 * Done with @pk, with p->lock held: a descriptor goes back to the pool and
 * to its lender (who may wait for it: lent_back), in-process or the peer
 * of a shared link; a copy is credited to a remote sender and freed.
 */
void nnp_fw_icl_release_locked(struct nnp_fw_port *p, struct nnp_fw_packet *pk);
/*
 * @pk, unlinked from @p, is read outside p->lock (with it held): a shared
 * peer's chunk stays mapped until the read ends.
 */
void nnp_fw_icl_read_begin_locked(struct nnp_fw_port *p,
				  const struct nnp_fw_packet *pk);
/* Done reading @pk, with p->lock held: queued again, or released. */
void nnp_fw_icl_read_end_locked(struct nnp_fw_port *p,
				const struct nnp_fw_packet *pk);
void nnp_fw_icl_read_done_locked(struct nnp_fw_port *p,
				 struct nnp_fw_packet *pk);
/* Unlink the packet *@link (@prev before it) of @p, with p->lock held. */
struct nnp_fw_packet *nnp_fw_icl_unlink_at(struct nnp_fw_port *p,
					   struct nnp_fw_packet **link,
					   struct nnp_fw_packet *prev);
/*
 * Queue @pk, unlinked from @p, again as its first packet, with p->lock
 * held: the relay could not forward it yet.
 */
void nnp_fw_icl_requeue_first_locked(struct nnp_fw_port *p,
				     struct nnp_fw_packet *pk);
/*
 * Unlink the packet *@link (@prev before it) of @p and let it go, with
 * p->lock held: a copy freed, a descriptor back to its lender.
 */
void nnp_fw_icl_drop_at(struct nnp_fw_port *p, struct nnp_fw_packet **link,
			struct nnp_fw_packet *prev);
/* Drop every packet queued on @p, with p->lock held. */
void nnp_fw_icl_drop_all_locked(struct nnp_fw_port *p);
/* Count a packet @p refused or dropped, with fw->lock and p->lock held. */
void nnp_fw_icl_count_drop_locked(struct nnp_fw *fw, struct nnp_fw_port *p);
/*
 * Count a packet @p dropped that no one lost, as dropped but not as the
 * port's error, with fw->lock and p->lock held.
 */
void nnp_fw_icl_count_gone_locked(struct nnp_fw *fw, struct nnp_fw_port *p);

#endif /* NNP_FW_TRANSPORT_H */
