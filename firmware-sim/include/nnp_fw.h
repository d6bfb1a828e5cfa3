/* SPDX-License-Identifier: MIT */
/*
 * nnp firmware simulator: the device's behaviour, as a plain C11 library.
 *
 * The embedding host (the QEMU device, or a unit test) supplies DMA into
 * host memory, interrupts, a clock and a log through struct nnp_fw_host, and
 * forwards BAR0 register accesses. nnp_fw_run() does the firmware's own
 * work: booting, the heartbeat and the admin queue; it must not run
 * concurrently with itself. nnp_fw_beat() does the heartbeat alone, on a
 * thread of the host's beside it. nnp_fw_run_queues() executes user queue
 * commands and may run on several threads at once, each taking a different
 * queue. Register accesses may come from any thread at any time.
 */
#ifndef NNP_FW_H
#define NNP_FW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnp_hw.h"

#define NNP_FW_VERSION_CURRENT	NNP_FW_VERSION(1, 2, 0)
#define NNP_FW_BUILD_STRING	"nnp-fwsim 1.2.0"

struct nnp_fw;

struct nnp_fw_host {
	void *opaque;
	/* Copy between host memory and the firmware; return 0, or -1 on a fault. */
	int (*dma_read)(void *opaque, uint64_t addr, void *buf, size_t len);
	int (*dma_write)(void *opaque, uint64_t addr, const void *buf, size_t len);
	/*
	 * Optional (both or neither): host memory at @addr for the firmware
	 * to access directly, for reading or (@write) writing, up to *@len
	 * bytes; *@len gets how much was mapped, which may be less. NULL if
	 * none of it can be mapped directly (not RAM): the firmware then uses
	 * dma_read/dma_write, which report faults. A mapping is given back
	 * with dma_unmap, @len as mapped and @done the bytes accessed.
	 */
	void *(*dma_map)(void *opaque, uint64_t addr, uint64_t *len, bool write);
	void (*dma_unmap)(void *opaque, void *ptr, uint64_t len, bool write,
			  uint64_t done);
	/* Signal MSI-X vector @vector. */
	void (*raise_irq)(void *opaque, unsigned int vector);
	/* Monotonic time in nanoseconds. */
	uint64_t (*now_ns)(void *opaque);
	/* Report something the driver did wrong (one line, no newline). */
	void (*guest_error)(void *opaque, const char *msg);
	/*
	 * Optional: report a failure that is not the driver's doing, such as
	 * a command that failed because a link went down or a peer chip did
	 * not answer (one line, no newline).
	 */
	void (*warning)(void *opaque, const char *msg);
	/*
	 * Optional: carry a packet, labelled with its communicator's @epoch,
	 * its @seq and its modeled arrival time @model_ns, to the remote peer of @port (see
	 * nnp_fw_link_attach_remote()); return 0 once it is on its way, -1 if
	 * the link is lost. Called from the threads running user queues, with
	 * no firmware lock held, so it may block.
	 */
	int (*icl_tx)(void *opaque, unsigned int port, uint64_t epoch,
		      uint32_t seq, bool abort, uint64_t model_ns,
		      const void *data, size_t len);
	/*
	 * Optional, for ports shared with their remote peer
	 * (nnp_fw_link_share_remote()): lend the peer @len bytes of device
	 * memory at @offset, labelled as icl_tx's, under @tag, which the peer
	 * gives back (nnp_fw_icl_given_back()) once it has read or dropped
	 * the chunk. Returns and may block as icl_tx.
	 */
	int (*icl_tx_lent)(void *opaque, unsigned int port, uint64_t epoch,
			   uint32_t seq, uint64_t model_ns, uint64_t offset,
			   size_t len, uint32_t tag);
	/*
	 * Optional, with icl_tx_lent: this end is done with the peer's chunk
	 * @tag (nnp_fw_icl_deliver_lent()): tell the peer. Called with
	 * firmware locks held, from any thread: it must not block.
	 */
	void (*icl_give_back)(void *opaque, unsigned int port, uint32_t tag);
	/*
	 * Optional, with icl_tx_lent: ask the peer to drop the chunks @tags
	 * (@n of them) it holds unread, and give them back. No lock held; it
	 * may block as icl_tx.
	 */
	void (*icl_reclaim)(void *opaque, unsigned int port,
			    const uint32_t *tags, size_t n);
	/*
	 * Optional, with icl_reclaim: the peer of @port did not give back in
	 * time what it was asked for: end the connection, as when it is lost
	 * (the link goes down, and stops being shared). No lock held; it
	 * must not block.
	 */
	void (*icl_drop)(void *opaque, unsigned int port);
	/*
	 * Optional, for remote ports whose peer counts credits
	 * (nnp_fw_link_credits()): this end no longer holds a packet of
	 * @len bytes the peer sent: tell the peer, which gives the credit
	 * back to its sender (nnp_fw_icl_credits_back()). Called with
	 * firmware locks held, from any thread: it must not block.
	 */
	void (*icl_credit)(void *opaque, unsigned int port, size_t len);
	/*
	 * Optional, for ports not wired in this process (remote ones, and
	 * those no peer is attached to yet): the chip stopped (@up false: a
	 * reset began, or it died) or booted again (@up true). The embedder
	 * takes @port's link down at both ends, or lets it come back up
	 * unless something else holds it down, as the far end of an
	 * in-process link sees it (nnp_fw_link_set() there); a peer that
	 * links later hears the last state. No lock held; it must not block
	 * on the network.
	 */
	void (*icl_chip_state)(void *opaque, unsigned int port, bool up);
	/*
	 * Optional: the firmware has work of NNP_FW_KICK_* kinds outside a
	 * register write: a packet or a link change for a parked user command
	 * (then any thread may call it, holding no firmware lock).
	 */
	void (*kick)(void *opaque, unsigned int what);
	/*
	 * Optional: make all of device memory read as zero, as a reset must,
	 * without reading it page by page (QEMU hands its RAM block's pages
	 * back to the host: reading 8 GiB that nobody wrote took 6-40 s on
	 * some machines, past the driver's 5 s wait for the boot); 0 on
	 * success. Without it, or when it fails, the firmware zeroes each
	 * page that does not read as zero.
	 */
	int (*mem_discard)(void *opaque);
};

struct nnp_fw_config {
	uint32_t chip_id;
	uint64_t mem_size;	/* a power of two, NNP_MEM_SIZE_MIN..MAX */
	void *mem;		/* the device memory, mem_size bytes */
	uint16_t num_ports;
	uint32_t boot_time_ms;	/* from reset to READY */
	uint32_t heartbeat_ms;	/* heartbeat period */
	/*
	 * A communicator's wait for a peer when COMM_CREATE names none, and
	 * how long a packet no communicator claims is kept; 0: 2000.
	 */
	uint32_t coll_timeout_ms;
	/*
	 * The modeled clock (docs/architecture.md); 0: NNP-T's figure.
	 * Bandwidths in MB/s (10^6 bytes/s), ICL and PCIe each direction.
	 */
	uint32_t icl_mbps;		/* one port */
	uint32_t icl_latency_ns;
	uint32_t hbm_mbps;		/* reads and writes together */
	uint32_t pcie_mbps;
	uint32_t pcie_latency_ns;
	uint32_t cmd_overhead_ns;	/* from a command's fetch to its work */
	/*
	 * Timing-only collectives, for projections at scale (tools/nnp-sim):
	 * a chunk crosses a link with its length and modeled time but no
	 * bytes are read or written, by the receiver or by the collective's
	 * local copies; the modeled cost of every memory pass stays. The
	 * results in device memory are then undefined.
	 */
	bool timing_only;
	/*
	 * Present hardware interface 1.10, without the shadow doorbells of
	 * 1.11 (QEMU's shadow-doorbells=off): what drivers' older path is
	 * tested against.
	 */
	bool no_shadow_doorbells;
};

/* Most ICL ports a chip may have: the hardware interface's. */
#define NNP_FW_MAX_PORTS	NNP_HW_MAX_PORTS

/* Validate @cfg; returns NULL with a reason in @err (if non-NULL). */
struct nnp_fw *nnp_fw_create(const struct nnp_fw_config *cfg,
			     const struct nnp_fw_host *host,
			     const char **err);
void nnp_fw_destroy(struct nnp_fw *fw);

/* Power-on or bus reset: drop all state and start booting. */
void nnp_fw_reset(struct nnp_fw *fw);

/* What a register write asks the host to run. */
#define NNP_FW_KICK_ADMIN	(1u << 0)	/* nnp_fw_run() */
#define NNP_FW_KICK_QUEUES	(1u << 1)	/* nnp_fw_run_queues() */

/* BAR0 access; @offset is 4-byte aligned and below NNP_BAR0_SIZE. */
uint32_t nnp_fw_reg_read(struct nnp_fw *fw, uint32_t offset);
/* Returns NNP_FW_KICK_* bits for the work the write created. */
unsigned int nnp_fw_reg_write(struct nnp_fw *fw, uint32_t offset,
			      uint32_t value);

/* Boot, heartbeat and admin queue work. */
void nnp_fw_run(struct nnp_fw *fw);
/*
 * The heartbeat alone, due every heartbeat period once booted and never
 * while the firmware hangs. Safe to call from another thread beside
 * nnp_fw_run(), and the host should: an admin command that waits for a
 * user's running command (releasing a key, destroying a queue or a
 * context) holds nnp_fw_run() as long as that command runs, and the
 * heartbeat, which the driver's watchdog reads, must not depend on it.
 */
void nnp_fw_beat(struct nnp_fw *fw);
/* Execute user queue commands until no queue has work left for us. */
void nnp_fw_run_queues(struct nnp_fw *fw);
/*
 * Time (now_ns clock) at which nnp_fw_run() next has timed work: booting,
 * the heartbeat, or the end of a parked user command's wait (it then
 * kicks the queues).
 */
uint64_t nnp_fw_next_deadline_ns(struct nnp_fw *fw);

/*
 * Inter-chip links between firmware instances in one process. Connecting
 * wires port @pa of @a and port @pb of @b both ways and brings the link
 * up; returns 0, or -1 if a port is out of range or already wired.
 * nnp_fw_destroy() unplugs a chip's links.
 */
int nnp_fw_link_connect(struct nnp_fw *a, unsigned int pa, struct nnp_fw *b,
			unsigned int pb);
/*
 * Take the link on @port down or up; waiters wake. An in-process link
 * changes at both ends; a remote one only here (the embedder tells the far
 * end).
 */
void nnp_fw_link_set(struct nnp_fw *fw, unsigned int port, bool up);

/*
 * Links to chips in other processes, over the embedder's transport.
 * Attaching names the peer (chip, port) of @port and leaves the link down
 * until nnp_fw_link_set(); a remote port may be attached again (its peer
 * came back, maybe as another chip). Returns 0, or -1 if @port is out of
 * range or wired in-process. Sends on the port go to host->icl_tx.
 */
int nnp_fw_link_attach_remote(struct nnp_fw *fw, unsigned int port,
			      uint32_t peer_chip, unsigned int peer_port);
/*
 * A packet the transport received for @port, labelled (@epoch, @seq) and
 * due at @model_ns on the modeled clock (0: when its receiver waits; at
 * most 1 s past this chip's modeled clock, the peer's word being only
 * telemetry): queued for the command of the communicator of @epoch that
 * waits for it.
 * Returns 0, or -1 if the port is not remote, is down, or the packet is
 * too big (counted as an error), or is dropped and counted: the port holds
 * its most already, or the packet is not for a communicator that receives
 * on this port.
 */
int nnp_fw_icl_deliver(struct nnp_fw *fw, unsigned int port, uint64_t epoch,
		       uint32_t seq, bool abort, uint64_t model_ns,
		       const void *data, size_t len);
/*
 * Share remote @port's link with a peer in this host's memory (@on), or
 * stop (!@on). Shared, a collective's chunk crosses as on an in-process
 * link: it is lent (host->icl_tx_lent) within the port's credits, the
 * peer reads it in our memory and gives it back, and the chunks the peer
 * lends arrive through nnp_fw_icl_deliver_lent(). Stopping forgets what
 * the peer has not given back, drops the peer's chunks not yet read and
 * waits for those being read: once it returns, nothing here reads the
 * peer's memory, which may be unmapped. Returns 0, or -1 if @port is not
 * attached remote or memory is short.
 */
int nnp_fw_link_share_remote(struct nnp_fw *fw, unsigned int port, bool on);
/*
 * A chunk the peer of shared @port lent: @len bytes at @data, in the
 * peer's memory as this process maps it (the embedder checked that they
 * lie within it), labelled as nnp_fw_icl_deliver()'s. Queued, read in
 * place by its receiver, then given back (host->icl_give_back, @tag);
 * refused (-1, counted as nnp_fw_icl_deliver() does) it is given back at
 * once. Returns 0 or -1.
 */
int nnp_fw_icl_deliver_lent(struct nnp_fw *fw, unsigned int port,
			    uint64_t epoch, uint32_t seq, uint64_t model_ns,
			    const void *data, size_t len, uint32_t tag);
/*
 * The peer of shared @port is done with the chunk we lent under @tag.
 * Returns 0, or -1 if no chunk is out under @tag (the peer breaks the
 * protocol: the embedder drops the link).
 */
int nnp_fw_icl_given_back(struct nnp_fw *fw, unsigned int port, uint32_t tag);
/*
 * The peer of shared @port asks for its chunks @tag back: drop it if it
 * is queued unread (given back as any drop is); nothing if it is being
 * read (given back when done) or unknown.
 */
void nnp_fw_icl_reclaim_lent(struct nnp_fw *fw, unsigned int port,
			     uint32_t tag);

/*
 * Credits on remote @port (@on: both ends of this connection count them),
 * or none (!@on: the connection is gone, or the peer does not count).
 * Counting, a packet sent waits (parked, as for an in-process peer) while
 * the peer holds the port's bound of our packets and bytes, and every
 * packet received is credited back through host->icl_credit once this end
 * no longer holds it, whatever became of it. Either way what was
 * outstanding is forgotten, and packets still held from an earlier
 * connection are credited to none. Returns 0, or -1 if @port is not
 * attached remote.
 */
int nnp_fw_link_credits(struct nnp_fw *fw, unsigned int port, bool on);
/*
 * The peer of @port no longer holds @packets of ours, @bytes in all.
 * Returns 0, or -1 if it never held that many (a peer breaking the
 * protocol: the embedder drops the link) or the port counts no credits.
 */
int nnp_fw_icl_credits_back(struct nnp_fw *fw, unsigned int port,
			    uint32_t packets, uint64_t bytes);

/*
 * nnp_fw_icl_deliver() in halves, for a transport that receives a frame's
 * payload straight into the packet the firmware queues (one copy, not
 * two): nnp_fw_icl_rx_alloc() gives a packet of @len bytes, NULL (nothing
 * counted) if @port is not a port, @len is too big or memory is short;
 * nnp_fw_icl_rx_data() its payload to fill; then nnp_fw_icl_rx_queue()
 * queues it, with nnp_fw_icl_deliver()'s returns, and owns it either way,
 * or nnp_fw_icl_rx_drop() frees it (the payload never came whole; NULL:
 * nothing).
 */
struct nnp_fw_packet;
struct nnp_fw_packet *nnp_fw_icl_rx_alloc(struct nnp_fw *fw, unsigned int port,
					  size_t len);
void *nnp_fw_icl_rx_data(struct nnp_fw_packet *pk);
int nnp_fw_icl_rx_queue(struct nnp_fw *fw, unsigned int port,
			struct nnp_fw_packet *pk, uint64_t epoch, uint32_t seq,
			bool abort, uint64_t model_ns);
void nnp_fw_icl_rx_drop(struct nnp_fw_packet *pk);

/*
 * Allreduce algorithms (docs/architecture.md, "Allreduce algorithms"):
 * the field @algo of a communicator's topology. Without a topology, or
 * with RING, allreduce runs around the communicator's one ring as every
 * other collective does.
 */
enum nnp_fw_algo {
	NNP_FW_ALGO_AUTO,	/* the best of those below for the size and topology */
	NNP_FW_ALGO_RING,	/* one ring: COMM_CREATE's send and recv ports */
	NNP_FW_ALGO_BIDIR,	/* dim[0]'s first port pair both ways, half each */
	NNP_FW_ALGO_RINGS,	/* every port pair of dim[0], both ways */
	NNP_FW_ALGO_TORUS,	/* 2D torus: reduce-scatter along dim[0], then dim[1] */
	NNP_FW_ALGO_COUNT
};

/* One ring dimension of the fabric, as this chip sees it. */
struct nnp_fw_ring_dim {
	uint32_t n;		/* chips on the ring; 0: no such dimension */
	uint32_t pos;		/* this chip's position on it */
	uint32_t pairs;		/* port pairs along it, 1 or 2 */
	uint32_t next_port[2];	/* pair k: to position pos + 1 ... */
	uint32_t prev_port[2];	/* ... and from position pos - 1 */
};

struct nnp_fw_topology {
	uint32_t algo;			/* enum nnp_fw_algo */
	/* A ring (dim[1].n 0) of nranks chips, or a dim[0] x dim[1] torus. */
	struct nnp_fw_ring_dim dim[2];
};

/*
 * Give communicator @comm of context @ctx its fabric topology and
 * algorithm (the same on every rank, as COMM_CREATE's ring), after
 * COMM_CREATE: the admin command COMM_TOPOLOGY (v1.7), or an embedder
 * (tools/nnp-sim) directly.
 * Returns 0, or -1 if there is no such communicator or @t does not fit it
 * (sizes that do not multiply to nranks, a position or port out of range).
 */
int nnp_fw_comm_set_topology(struct nnp_fw *fw, uint32_t ctx, uint32_t comm,
			     const struct nnp_fw_topology *t);

/*
 * The modeled clock of a chip (docs/architecture.md), since its last
 * reset: its time, and how long each engine and each port's transmit
 * direction was busy, in modeled ns.
 */
struct nnp_fw_model {
	uint64_t now_ns;
	uint64_t hbm_busy_ns;
	uint64_t pcie_busy_ns;
	uint64_t port_busy_ns[NNP_HW_MAX_PORTS];
	uint64_t commands;	/* user queue commands that ran to their end */
};

void nnp_fw_model_get(struct nnp_fw *fw, struct nnp_fw_model *m);

/*
 * Whether the ranks of each collective are checked to call it alike
 * (NNP_STATUS_MISMATCH): on from creation, and over resets. Off, ranks
 * that call it otherwise hang or compute on the wrong sizes; it is what
 * make bench measures the check's cost against (QEMU's property
 * call-check). Any thread, any time: collectives that start later
 * follow it, one in flight may see either.
 */
void nnp_fw_set_call_check(struct nnp_fw *fw, bool on);

/*
 * Faults on demand, for tests and the QEMU monitor (docs/hw-interface.md
 * says what the driver sees of each). A reset (DEV_CTRL or
 * nnp_fw_reset()) clears HANG, DIE and QUEUE_STUCK and brings back up the
 * links DIE took down; the others last until NONE.
 */
enum nnp_fw_fault {
	NNP_FW_FAULT_NONE,		/* clear every fault */
	NNP_FW_FAULT_HANG,		/* no heartbeat, no admin or queue work */
	NNP_FW_FAULT_QUEUE_STUCK,	/* @arg: the queue no worker takes */
	NNP_FW_FAULT_MSIX_LOST,		/* @arg: the next @arg interrupts are lost */
	NNP_FW_FAULT_DMA_FAIL,		/* @arg: the next @arg DMA transfers fail */
	NNP_FW_FAULT_DIE,		/* HANG, and every link that is up goes down */
	NNP_FW_FAULT_LINK_DROP,		/* @arg: port whose arrivals are lost */
	NNP_FW_FAULT_LINK_DELAY,	/* @arg: port << 16 | ms each arrival waits */
};

#define NNP_FW_FAULT_MAX_DELAY_MS	10000

/* Returns 0, or -1 if @arg is out of range. Any thread, any time. */
int nnp_fw_fault_set(struct nnp_fw *fw, enum nnp_fw_fault fault, uint32_t arg);
/*
 * The same from text: "none", "hang", "die", "queue-stuck=Q",
 * "msix-lost=N", "dma-fail=N", "link-drop=PORT", "link-delay=PORT:MS".
 * *@fault (if set) gets which; returns -1 for a bad @spec.
 */
int nnp_fw_fault_parse(struct nnp_fw *fw, const char *spec,
		       enum nnp_fw_fault *fault);

/* Largest packet on a link; collectives send 64 KiB chunks. */
#define NNP_FW_ICL_MAX_PACKET	(1u << 20)

#endif /* NNP_FW_H */
