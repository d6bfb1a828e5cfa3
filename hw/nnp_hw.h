/* SPDX-License-Identifier: MIT */
/*
 * nnp hardware interface, version 1.27.
 *
 * The one definition of what the device looks like from the bus: PCI
 * identity, BAR layout, BAR0 registers, admin queue entries, status codes.
 * Included by the kernel driver, the firmware simulator, the QEMU device
 * and libnnp (which writes user queue commands itself: that part is
 * user-space ABI), so it uses only fixed-width types and no library. docs/hw-interface.md is
 * the prose version; keep the two in step.
 *
 * All registers are 32 bits wide, little-endian, and accessed with aligned
 * 32-bit loads and stores. All in-memory structures are little-endian.
 */
#ifndef NNP_HW_H
#define NNP_HW_H

/*
 * Fields of the structures below are little-endian. In the kernel they are
 * __le16/__le32/__le64, so that sparse checks the driver converts each one;
 * elsewhere they are plain integers, since firmware-sim, QEMU and libnnp
 * run only on little-endian hosts.
 */
#ifdef __KERNEL__
#include <linux/types.h>
typedef __le16 nnp_le16;
typedef __le32 nnp_le32;
typedef __le64 nnp_le64;
#else
#include <stdint.h>
typedef uint16_t nnp_le16;
typedef uint32_t nnp_le32;
typedef uint64_t nnp_le64;
#endif

/* PCI identity: QEMU's experimental vendor id, class "processing accelerator". */
#define NNP_PCI_VENDOR_ID		0x1234
#define NNP_PCI_DEVICE_ID		0x4e50
#define NNP_PCI_CLASS			0x1200
#define NNP_PCI_REVISION		0x01

/* BARs */
#define NNP_BAR_REGS			0	/* registers and doorbells, 32-bit */
#define NNP_BAR_MEM			2	/* device memory, 64-bit prefetchable */
#define NNP_BAR_MSIX			4	/* MSI-X table and PBA */
#define NNP_BAR0_SIZE			0x80000u

/* Device memory size limits (BAR2 is a power of two in this range). */
#define NNP_MEM_SIZE_MIN		(1ull << 20)
#define NNP_MEM_SIZE_MAX		(64ull << 30)

/* Interface version: the driver refuses a major it does not know. */
#define NNP_HW_VERSION_MAJOR		1
#define NNP_HW_VERSION_MINOR		27
#define NNP_HW_VERSION			((NNP_HW_VERSION_MAJOR << 16) | NNP_HW_VERSION_MINOR)
#define NNP_HW_VERSION_MAJOR_OF(v)	((v) >> 16)

#define NNP_HW_ID_MAGIC			0x54504e4eu	/* "NNPT" little-endian */

/* ---- BAR0 registers ---------------------------------------------------- */

/* Identity, read-only */
#define NNP_REG_ID			0x000	/* NNP_HW_ID_MAGIC */
#define NNP_REG_HW_VERSION		0x004	/* NNP_HW_VERSION */
#define NNP_REG_CAPS			0x008	/* NNP_CAP_* */
#define NNP_REG_CHIP_ID			0x00c	/* chip id within its fabric */
#define NNP_REG_MEM_SIZE_LO		0x010	/* device memory bytes, low word */
#define NNP_REG_MEM_SIZE_HI		0x014	/* device memory bytes, high word */
#define NNP_REG_NUM_PORTS		0x018	/* inter-chip link ports */
#define NNP_REG_NUM_QUEUES		0x01c	/* user queues = doorbell pages */
#define NNP_REG_NUM_VECTORS		0x020	/* MSI-X vectors */
#define NNP_REG_SCRATCH			0x024	/* read/write, no side effect */

/* Firmware state */
#define NNP_REG_FW_STATUS		0x040	/* NNP_FW_STATUS_* */
#define NNP_REG_FW_VERSION		0x044	/* NNP_FW_VERSION() once READY */
#define NNP_REG_FW_HEARTBEAT		0x048	/* counts up while firmware runs */
#define NNP_REG_FW_ERROR		0x04c	/* NNP_FW_ERR_* of the last fault */

/* Control */
#define NNP_REG_DEV_CTRL		0x050	/* write-only, NNP_DEV_CTRL_* */

/* Interrupt cause for vector 0; status is write-1-to-clear */
#define NNP_REG_INT_STATUS		0x060
#define NNP_REG_INT_ENABLE		0x064

/* Admin queue: rings in host memory, set up while disabled */
#define NNP_REG_AQ_SQ_BASE_LO		0x100
#define NNP_REG_AQ_SQ_BASE_HI		0x104
#define NNP_REG_AQ_CQ_BASE_LO		0x108
#define NNP_REG_AQ_CQ_BASE_HI		0x10c
#define NNP_REG_AQ_DEPTH		0x110	/* entries in each ring */
#define NNP_REG_AQ_CTRL			0x114	/* NNP_AQ_CTRL_* */
#define NNP_REG_AQ_STATUS		0x118	/* NNP_AQ_STATUS_* */
#define NNP_REG_AQ_SQ_TAIL		0x120	/* doorbell: next free SQ slot */
#define NNP_REG_AQ_CQ_HEAD		0x124	/* next CQ slot the driver reads */

/*
 * v1.6, read-only telemetry. TEMP and POWER come from the device's thermal
 * and power model (docs/hw-interface.md#telemetry): POWER is the average
 * over the last window of NNP_HW_TELEMETRY_WINDOW_MS, TEMP follows it with
 * a time constant. BUSY_NS is the time, since the last reset, during which
 * at least one user queue command was executing; a 64-bit count read as
 * HI, LO, HI again (until HI reads the same twice).
 */
#define NNP_REG_TEMP			0x200	/* millidegrees Celsius */
#define NNP_REG_POWER			0x204	/* microwatts */
#define NNP_REG_BUSY_NS_LO		0x208
#define NNP_REG_BUSY_NS_HI		0x20c

/* What TEMP and POWER read on a device that has done nothing for a while. */
#define NNP_HW_TEMP_IDLE_MC		35000
#define NNP_HW_POWER_IDLE_UW		30000000
#define NNP_HW_POWER_MAX_UW		300000000
#define NNP_HW_TELEMETRY_WINDOW_MS	100

/*
 * Firmware log (v1.19): the firmware's last NNP_HW_LOG_ENTRIES messages
 * (a guest's mistake, a command a link or a peer made fail), as struct
 * nnp_hw_log_entry[] in BAR0 at FW_LOG, read without the firmware's
 * help: a host reads it after the firmware stopped answering. LOG_SEQ
 * counts the messages logged since the device came up; message k (from
 * 0) is in entry k % NNP_HW_LOG_ENTRIES until message k + ENTRIES
 * replaces it, so a reader that reads LOG_SEQ (s1), the entries, then
 * LOG_SEQ again (s2) keeps messages s2 - ENTRIES to s1 - 1 whole. A reset
 * keeps the log.
 */
#define NNP_REG_FW_LOG_SEQ		0x210
#define NNP_REG_FW_LOG			0x4000
#define NNP_HW_LOG_ENTRIES		32
#define NNP_HW_LOG_GUEST_ERROR		1	/* the host did something wrong */
#define NNP_HW_LOG_WARNING		2	/* a link or a peer did */

struct nnp_hw_log_entry {
	nnp_le64 time_ns;	/* the device's clock when it was logged */
	nnp_le32 seq;		/* its number, as LOG_SEQ counts them */
	nnp_le16 kind;		/* NNP_HW_LOG_* */
	nnp_le16 rsvd;
	char msg[112];		/* NUL-terminated, cut short if longer */
};

/* Inter-chip link port registers (reserved in v1) */
#define NNP_REG_PORT_BASE		0x1000
#define NNP_REG_PORT_STRIDE		0x40
#define NNP_HW_MAX_PORTS		16	/* NUM_PORTS is at most this */

/*
 * One doorbell page per user queue, mappable into the process that owns
 * the queue. Offsets within a page:
 */
#define NNP_REG_DOORBELL_BASE		0x10000
#define NNP_REG_DOORBELL_STRIDE		0x1000
#define NNP_HW_MAX_QUEUES		64
#define NNP_DB_SQ_TAIL			0x0	/* RW: next free SQ slot */
#define NNP_DB_CQ_HEAD			0x4	/* RW: next CQ slot to read */
#define NNP_DB_STATUS			0x8	/* RO: NNP_QUEUE_STATUS_* */
#define NNP_DB_ERROR			0xc	/* RO: cid << 16 | status of the failure */
#define NNP_DB_SQ_HEAD			0x10	/* v1.5, RO: next SQ slot the device takes */

#define NNP_DOORBELL(q)			(NNP_REG_DOORBELL_BASE + (q) * NNP_REG_DOORBELL_STRIDE)

/* NNP_DB_STATUS bits */
#define NNP_QUEUE_STATUS_ENABLED	(1u << 0)
#define NNP_QUEUE_STATUS_ERROR		(1u << 1)	/* stopped after a failed command */
#define NNP_QUEUE_STATUS_BUSY		(1u << 2)	/* executing a command */
/*
 * v1.5: the command in flight waits on a link for another chip (a packet,
 * or room at the far end): the queue is healthy however long that takes.
 */
#define NNP_QUEUE_STATUS_WAITING	(1u << 3)

/* NNP_REG_CAPS bits */
#define NNP_CAP_ADMIN_QUEUE		(1u << 0)
#define NNP_CAP_USER_QUEUES		(1u << 1)
#define NNP_CAP_ICL			(1u << 2)	/* inter-chip links, SEND, RECV */
#define NNP_CAP_COLLECTIVES		(1u << 3)	/* communicators, NNP_CMD_ALLREDUCE.. */

/* NNP_REG_FW_STATUS values */
#define NNP_FW_STATUS_OFF		0	/* held in reset */
#define NNP_FW_STATUS_BOOTING		1
#define NNP_FW_STATUS_READY		2
#define NNP_FW_STATUS_HALTED		3	/* fatal fault; see FW_ERROR */

/* NNP_REG_FW_VERSION packing */
#define NNP_FW_VERSION(maj, min, pat)	(((maj) << 16) | ((min) << 8) | (pat))
#define NNP_FW_VERSION_MAJOR(v)		(((v) >> 16) & 0xffff)
#define NNP_FW_VERSION_MINOR(v)		(((v) >> 8) & 0xff)
#define NNP_FW_VERSION_PATCH(v)		((v) & 0xff)

/* NNP_REG_FW_ERROR values */
#define NNP_FW_ERR_NONE			0
#define NNP_FW_ERR_AQ_CONFIG		1	/* admin queue enabled with bad setup */
#define NNP_FW_ERR_AQ_DMA		2	/* admin ring unreachable by DMA */

/* NNP_REG_DEV_CTRL bits */
#define NNP_DEV_CTRL_RESET		(1u << 0)	/* reboot firmware, drop queues */

/* NNP_REG_INT_STATUS / NNP_REG_INT_ENABLE bits */
#define NNP_INT_ADMIN_CQ		(1u << 0)	/* admin completion posted */
#define NNP_INT_FW_EVENT		(1u << 1)	/* firmware state changed */
#define NNP_INT_ALL			(NNP_INT_ADMIN_CQ | NNP_INT_FW_EVENT)

/* MSI-X vector use */
#define NNP_VECTOR_ADMIN		0	/* admin completions, firmware events */
#define NNP_VECTOR_QUEUE(q)		(1 + (q))	/* user queue q's completions */

/* NNP_REG_AQ_CTRL bits */
#define NNP_AQ_CTRL_ENABLE		(1u << 0)

/* NNP_REG_AQ_STATUS bits */
#define NNP_AQ_STATUS_READY		(1u << 0)
#define NNP_AQ_STATUS_ERROR		(1u << 1)
/*
 * The firmware is executing a command, from the admin queue or a user
 * queue. After disabling the admin queue or resetting the device, wait for
 * this to clear before freeing rings or memory the device may still write.
 */
#define NNP_AQ_STATUS_BUSY		(1u << 2)

#define NNP_AQ_DEPTH_MIN		2
#define NNP_AQ_DEPTH_MAX		4096	/* a power of two in [MIN, MAX] */

/* ---- Admin queue entries ----------------------------------------------- */

/* Admin opcodes; the argument words each one uses are listed below. */
#define NNP_ADMIN_NOP			0x00
#define NNP_ADMIN_IDENTIFY		0x01
#define NNP_ADMIN_CTX_CREATE		0x02	/* args: ctx */
#define NNP_ADMIN_CTX_DESTROY		0x03	/* args: ctx */
#define NNP_ADMIN_KEY_REGISTER		0x04	/* see struct nnp_hw_key_args */
#define NNP_ADMIN_KEY_UNREGISTER	0x05	/* args: ctx, key */
#define NNP_ADMIN_QUEUE_CREATE		0x06	/* see struct nnp_hw_queue_args */
#define NNP_ADMIN_QUEUE_DESTROY		0x07	/* args: ctx, qid */
#define NNP_ADMIN_QUEUE_RESET		0x08	/* args: ctx, qid */
#define NNP_ADMIN_GET_COUNTERS		0x09	/* addr/len: struct nnp_hw_counters */
#define NNP_ADMIN_COMM_CREATE		0x0a	/* see struct nnp_hw_comm_args */
#define NNP_ADMIN_COMM_DESTROY		0x0b	/* args: ctx, comm, flags (v1.4) */
#define NNP_ADMIN_GET_PORTS		0x0c	/* addr/len: struct nnp_hw_port_info[] */
#define NNP_ADMIN_COMM_STATUS		0x0d	/* v1.4, args: ctx, comm */
#define NNP_ADMIN_COMM_TOPOLOGY		0x0e	/* v1.7, args: ctx, comm; see below */
#define NNP_ADMIN_GET_MODEL		0x0f	/* v1.8, addr/len: struct nnp_hw_model */
#define NNP_ADMIN_GET_CTX_USAGE		0x10	/* v1.10, args: ctx; struct nnp_hw_ctx_usage */
#define NNP_ADMIN_COMM_ROUTES		0x11	/* v1.12, args: ctx, comm; see below */
#define NNP_ADMIN_GET_EVENTS		0x12	/* v1.17, addr/len: struct nnp_hw_event[] */
#define NNP_ADMIN_COMM_STATE		0x13	/* v1.18, args: ctx, comm; see below */

/*
 * COMM_DESTROY flags (v1.4). ABORT: the communicator's commands in flight
 * end ABORTED at their next wait, and pass the abort down the ring, so
 * that every rank's stops (NCCL's ncclCommAbort); one of its commands
 * still queued ends ABORTED as it starts, until the context makes that
 * communicator number again. Without it a command in flight runs on to
 * its end, and one that starts later ends NOT_FOUND.
 */
#define NNP_HW_COMM_DESTROY_ABORT	(1u << 0)
/*
 * COMM_STATUS's result: the status of the communicator's first command
 * that failed (0: none), for a watchdog polling it (ncclCommGetAsyncError).
 */

/* Contexts are numbered 1..NNP_HW_MAX_CONTEXTS - 1 by the driver. */
#define NNP_HW_MAX_CONTEXTS		256
#define NNP_HW_MAX_KEYS			4096
#define NNP_HW_QUEUE_DEPTH_MIN		2
/*
 * A power of two. The rings of the deepest queue (2.5 MiB) must fit in one
 * coherent block of host memory, which a host kernel allocates up to 4 MiB.
 */
#define NNP_HW_QUEUE_DEPTH_MAX		32768
#define NNP_HW_PAGE_SIZE		4096	/* host page-list granule */

/* Ring entry sizes: struct nnp_hw_admin_cmd and nnp_hw_queue_cmd, nnp_hw_cqe. */
#define NNP_HW_SQE_SIZE			64
#define NNP_HW_CQE_SIZE			16

/* Submission entry: 64 bytes. Every field not used by an opcode must be 0. */
struct nnp_hw_admin_cmd {
	uint8_t opcode;
	uint8_t flags;		/* none defined: must be 0 */
	nnp_le16 cid;		/* echoed in the completion */
	nnp_le32 rsvd0;
	nnp_le64 addr;		/* host DMA address of the data buffer */
	nnp_le32 len;		/* data buffer length in bytes */
	nnp_le32 rsvd1;
	nnp_le32 args[10];	/* opcode arguments; none defined in v1 */
};

/*
 * Argument words of KEY_REGISTER (args[] of the admin command). A device
 * key names [dev_base, dev_base + length) of device memory. A host key
 * names length bytes starting page_offset bytes into a list of
 * NNP_HW_PAGE_SIZE pages; the command's addr/len point at that list
 * (little-endian u64 DMA addresses), which the firmware copies and keeps.
 * One host key is at most NNP_HW_HOST_KEY_MAX_PAGES pages long (else
 * INVALID_FIELD), and the host keys of a chip span at most
 * NNP_HW_MAX_KEY_PAGES pages in all: past that, NO_RESOURCES. Result: the
 * key (never 0).
 */
struct nnp_hw_key_args {
	nnp_le32 ctx;
	nnp_le32 type;		/* NNP_KEY_TYPE_* */
	nnp_le32 rights;	/* NNP_KEY_READ | NNP_KEY_WRITE */
	nnp_le32 page_offset;	/* host: offset into the first page */
	nnp_le64 length;
	nnp_le64 dev_base;	/* device: offset into device memory */
	nnp_le32 rsvd[2];
};

#define NNP_HW_HOST_KEY_MAX_PAGES	(1u << 20)	/* 4 GiB */
#define NNP_HW_MAX_KEY_PAGES		(1u << 22)	/* 16 GiB */

#define NNP_KEY_TYPE_DEVICE		1
#define NNP_KEY_TYPE_HOST		2
/*
 * v1.24: pages of another device's memory (a BAR, reached peer to peer),
 * given and checked as a host key's; bytes moved to or from them count in
 * peer_dma_bytes, not host_dma_bytes.
 */
#define NNP_KEY_TYPE_PEER		3
#define NNP_KEY_READ			(1u << 0)
#define NNP_KEY_WRITE			(1u << 1)

/*
 * Argument words of QUEUE_CREATE: rings in host memory (SQ of 64-byte
 * struct nnp_hw_queue_cmd, CQ of 16-byte struct nnp_hw_cqe), signalled on
 * MSI-X vector @vector.
 *
 * @irq_arm (v1.9), if not 0, is the host address of a 32-bit word that
 * says whether anyone sleeps on the queue's completions. After posting a
 * batch of completions the device reads it: 0, no interrupt; else it
 * writes 0 and raises @vector. A driver about to sleep writes 1, then
 * (after a full barrier) reads the CQ once more: a completion posted
 * before the device saw the 1 is then seen by that read. A word the
 * device cannot read raises the vector. With @irq_arm 0, every batch of
 * completions raises it, as before v1.9.
 */
struct nnp_hw_queue_args {
	nnp_le32 ctx;
	nnp_le32 qid;		/* 0..NNP_HW_MAX_QUEUES - 1: its doorbell page */
	nnp_le32 depth;
	nnp_le32 vector;
	nnp_le64 sq_base;
	nnp_le64 cq_base;
	nnp_le64 irq_arm;	/* v1.9; 4-byte aligned */
};

/*
 * Shadow doorbell of a user queue (v1.11): QUEUE_CREATE's data buffer
 * (addr 8-byte aligned, len 8; addr and len 0: none), in host memory the
 * queue's owner can write. The owner writes @sq_tail where it would write
 * the SQ_TAIL doorbell, and rings the doorbell as well only if the new
 * tail passes @sq_event, that is if (new - sq_event - 1) mod depth <
 * (new - old) mod depth. The device reads @sq_tail whenever it runs out
 * of the queue's commands; before it stops looking at the queue it writes
 * its SQ head to @sq_event and, after a full barrier, reads @sq_tail once
 * more. The owner's full barrier between its write of @sq_tail and its
 * read of @sq_event pairs with it: either the device sees the new tail,
 * or the owner sees that the device stopped at its old tail and rings.
 * So a queue the device is still working on takes commands with no
 * doorbell write, as virtio's event index and NVMe's shadow doorbell
 * buffer do. QUEUE_CREATE and QUEUE_RESET write both words 0. A @sq_tail
 * past the depth stops the queue as such a doorbell write does.
 */
struct nnp_hw_queue_shadow {
	nnp_le32 sq_tail;	/* written by the owner */
	nnp_le32 sq_event;	/* written by the device */
};

/*
 * Argument words of COMM_CREATE: this chip is rank @rank of @nranks in
 * communicator @comm of context @ctx. Collectives run around a ring: the
 * command's data buffer (addr, len) lists the rank at each ring position,
 * nranks 32-bit words (len 0: rank order). This chip sends to the next
 * position through port @send_port and receives from the previous one on
 * @recv_port. Every rank of one communicator gets the same @epoch, which
 * names the communicator on the links, and a communicator made again after
 * a failure a new one, so that nothing left on the links from the old one
 * is taken for the new. The epoch is the job's 64-bit secret: no two
 * communicators of a chip share one (BUSY), and the chip takes a packet
 * only for the communicator its epoch names, and only from the port that
 * communicator receives on (@recv_port for collectives, the port a RECV
 * names); any other is dropped and counted (the port's errors and the
 * chip's icl_dropped).
 *
 * @timeout_ms (v1.4) bounds each wait of the communicator's collectives,
 * SENDs and RECVs for a peer (PEER_TIMEOUT past it): 0 is the device's
 * default, 2 s, as before 1.4; NNP_HW_COMM_TIMEOUT_NEVER waits until the
 * packet comes, the link goes down, an abort arrives or the command is
 * torn down. A late peer is not a dead one: a dead link or chip is found
 * by link-down and the aborts, not by this timer.
 *
 * @flags (v1.22): NNP_HW_COMM_TRANSIT makes this chip none of the
 * communicator's ranks but a chip its packets cross, between ranks whose
 * chips share no link: @rank is 0, there is no ring order, and @nranks is
 * at least 2. Its collectives' packets (aborts and leaves included) that
 * come in on @send_port go out on @recv_port and the other way round,
 * one ring hop of the ranks', in arrival order; those on any other port
 * are dropped and counted. Its routed messages go on by COMM_ROUTES,
 * under the same room, per-communicator share, credits and stale bound as
 * a rank's; what came before it was made goes on once it is. A transit
 * communicator takes no queue command, COMM_TOPOLOGY
 * or COMM_STATE (NOT_FOUND); COMM_STATUS, COMM_ROUTES and COMM_DESTROY
 * take it. Should a port of its pair go down, it fails (LINK_DOWN) and
 * passes an abort out of the other, so the ranks on both sides hear it.
 * Destroying it (or its context) drops and counts what it held and
 * passes an abort out of both ports: the ranks fail at once rather than
 * wait for a hop that is gone. A device before 1.22
 * refuses the word as a reserved one (INVALID_FIELD).
 */
#define NNP_HW_COMM_TRANSIT		(1u << 0)

struct nnp_hw_comm_args {
	nnp_le32 ctx;
	nnp_le32 comm;		/* 1..NNP_HW_MAX_COMMS - 1 */
	nnp_le32 nranks;
	nnp_le32 rank;
	nnp_le32 send_port;
	nnp_le32 recv_port;
	nnp_le64 epoch;		/* v1.2: 32 bits, the high word zero */
	nnp_le32 timeout_ms;	/* v1.4: ms, 0 the default, or _NEVER */
	nnp_le32 flags;		/* v1.22: NNP_HW_COMM_TRANSIT */
};

#define NNP_HW_COMM_TIMEOUT_NEVER	0xffffffffu

/*
 * COMM_TOPOLOGY (v1.7): after COMM_CREATE, give communicator (ctx, comm)
 * the fabric it runs on and the allreduce algorithm, the same on every
 * rank; the command's data buffer is exactly one struct
 * nnp_hw_comm_topology (else INVALID_FIELD). Without it, or with algo
 * RING, every collective runs COMM_CREATE's ring. A ring dimension lists
 * the chips along it (n, 0: none), this chip's position and one or two
 * port pairs, each sending to position pos + 1 and receiving from
 * pos - 1. dim[1] with n > 0 makes a dim[0].n x dim[1].n torus, whose
 * product must be nranks; a ring's dim[0].n must be nranks. A position
 * not below n, a pair count not 1 or 2, a port the chip lacks, dim[1]
 * without dim[0], an unknown algo or a reserved word set: INVALID_FIELD;
 * no such communicator: NOT_FOUND. Only allreduce uses the topology, and
 * only with dim[0].n >= 2; TORUS without dim[1] runs the ring.
 */
#define NNP_HW_ALGO_AUTO		0	/* the device picks by size */
#define NNP_HW_ALGO_RING		1	/* COMM_CREATE's ring only */
#define NNP_HW_ALGO_BIDIR		2	/* dim[0]'s first pair both ways */
#define NNP_HW_ALGO_RINGS		3	/* every pair of dim[0], both ways */
#define NNP_HW_ALGO_TORUS		4	/* along dim[0], then dim[1] */

struct nnp_hw_ring_dim {
	nnp_le32 n;
	nnp_le32 pos;
	nnp_le32 pairs;		/* 1 or 2 when n > 0 */
	nnp_le32 next_port[2];
	nnp_le32 prev_port[2];
	nnp_le32 rsvd;
};

struct nnp_hw_comm_topology {
	nnp_le32 algo;		/* NNP_HW_ALGO_* */
	nnp_le32 rsvd;
	struct nnp_hw_ring_dim dim[2];
};

#define NNP_HW_MAX_COMMS		64
/* nranks at most: a rank is a 16-bit field (NNP_COLL_ROOT). */
#define NNP_HW_MAX_RANKS		0xffff

/*
 * COMM_ROUTES (v1.12): where this chip sends a routed message (SEND or
 * RECV with NNP_P2P_ROUTED) for each rank of the communicator. The data
 * buffer holds nranks bytes, byte r the port towards rank r (the next hop
 * of a shortest path; the same tables on every rank make every path),
 * NNP_HW_ROUTE_NONE for this chip's own rank and for a rank it cannot
 * reach. A length other than nranks, a port past the chip's or a port
 * named for its own rank is INVALID_FIELD. A packet of the communicator
 * arriving for another rank is forwarded by the firmware on its route,
 * under the same room, credits and timeouts as the chip's own; one for a
 * rank it has no route to is dropped and counted. Ranks of routed
 * messages are below NNP_HW_MAX_ROUTED_RANKS. It may be given again.
 */
#define NNP_HW_ROUTE_NONE		0xff
#define NNP_HW_MAX_ROUTED_RANKS		1024

/* GET_COUNTERS data, totals since the last reset. */
struct nnp_hw_counters {
	nnp_le64 host_dma_bytes;	/* read from + written to host memory by queues */
	nnp_le64 local_bytes;		/* copied or filled within device memory */
	nnp_le64 cmds_completed;	/* user queue commands that succeeded */
	nnp_le64 cmds_failed;		/* user queue commands that failed */
	nnp_le64 icl_tx_bytes;		/* payload sent on inter-chip links */
	nnp_le64 icl_rx_bytes;		/* payload received on inter-chip links */
	nnp_le64 icl_dropped;		/* v1.3: packets refused on arrival, all ports */
	nnp_le64 icl_held_bytes;	/* v1.3: payload the ports hold now */
	nnp_le64 peer_dma_bytes;	/* v1.24: to or from PEER keys by queues */
};

/*
 * GET_COUNTERS writes as much of the block as the buffer holds, at least
 * the 1.3 block (else BUFFER_TOO_SMALL), and returns the bytes written.
 */
#define NNP_HW_COUNTERS_SIZE_V1_3	64

/*
 * GET_MODEL data (v1.8): the chip's modeled clock (docs/architecture.md,
 * "The modeled clock") since the last reset, in modeled ns: its time, and
 * how long each engine was busy. A new block rather than fields appended
 * to GET_COUNTERS or GET_PORTS, whose callers ask for their exact size.
 */
struct nnp_hw_model {
	nnp_le64 now_ns;		/* the chip's modeled time */
	nnp_le64 commands;		/* user queue commands run to their end */
	nnp_le64 hbm_busy_ns;		/* device memory: copies, fills, reductions */
	nnp_le64 pcie_busy_ns;		/* host DMA */
	nnp_le64 port_tx_busy_ns[NNP_HW_MAX_PORTS];	/* each port's transmit side */
};

/*
 * GET_CTX_USAGE data (v1.10): how long each engine was busy with one
 * context's commands since CTX_CREATE, in modeled ns (the clock of
 * GET_MODEL): each command counts from its modeled start, after the
 * per-command overhead, to its modeled end. COPY, FILL and TIMESTAMP run
 * on the copy engine; collectives, SEND and RECV on the collective engine;
 * NOP and BARRIER on neither. A reset zeroes every context's.
 */
#define NNP_HW_ENGINE_COPY		0
#define NNP_HW_ENGINE_COLL		1
#define NNP_HW_ENGINES			2

struct nnp_hw_ctx_usage {
	nnp_le64 busy_ns[NNP_HW_ENGINES];	/* by NNP_HW_ENGINE_* */
};

/* GET_PORTS data: one entry per ICL port, NUM_PORTS entries. */
struct nnp_hw_port_info {
	nnp_le32 state;		/* NNP_PORT_* bits */
	nnp_le32 peer;		/* NNP_PORT_PEER(chip, port), if wired */
	nnp_le64 tx_bytes;
	nnp_le64 rx_bytes;
	nnp_le64 tx_packets;
	nnp_le64 rx_packets;
	nnp_le64 errors;	/* sends that found the link down, drops on arrival */
};

#define NNP_PORT_WIRED			(1u << 0)
#define NNP_PORT_UP			(1u << 1)
#define NNP_PORT_PEER(chip, port)	((chip) << 8 | (port))
#define NNP_PORT_PEER_CHIP(v)		((v) >> 8)
#define NNP_PORT_PEER_PORT(v)		((v) & 0xff)

/*
 * Events (v1.17). The firmware queues one when a communicator fails (its
 * first failure, the status COMM_STATUS then reports) and when a port's
 * link goes down or comes up, and latches NNP_INT_FW_EVENT for each.
 * GET_EVENTS takes the oldest queued, as many whole entries as len holds,
 * in order; result: the bytes written, 0 if none was queued. len not a
 * multiple of the entry, or 0: INVALID_FIELD. The firmware holds
 * NNP_HW_EVENTS; a new one past that drops the oldest, and the next one
 * taken counts in @lost those dropped since the last GET_EVENTS. A reset
 * empties the queue.
 */
#define NNP_HW_EVENTS			64
#define NNP_HW_EVENT_COMM_FAILED	1
#define NNP_HW_EVENT_LINK		2
#define NNP_HW_EVENT_NO_PORT		0xffff

struct nnp_hw_event {
	nnp_le16 kind;		/* NNP_HW_EVENT_* */
	/* COMM_FAILED: NNP_STATUS_* of the failure; LINK: 0 */
	nnp_le16 status;
	nnp_le32 ctx;		/* COMM_FAILED: the communicator's context */
	nnp_le32 comm;		/* and its id */
	/*
	 * LINK: the port; COMM_FAILED: the port the failure came from (a
	 * link down, an abort, a peer's silence), or NNP_HW_EVENT_NO_PORT
	 */
	nnp_le16 port;
	nnp_le16 state;		/* LINK: NNP_PORT_* bits now; else 0 */
	nnp_le32 lost;		/* events dropped before this one */
	nnp_le32 rsvd;
	nnp_le64 time_ns;	/* the chip's modeled time (GET_MODEL's clock) */
};

/*
 * COMM_STATE (v1.18): where communicator (ctx, comm) stands, for a view
 * of a job that hangs: which collective it is in and whom that waits
 * for. addr/len: struct nnp_hw_comm_state (a shorter len:
 * BUFFER_TOO_SMALL, nothing written); result: the bytes written. No such
 * communicator: NOT_FOUND.
 *
 * Collectives (ALLREDUCE to REDUCE, and the exchanges) are numbered
 * from 1 in the order the chip starts them, alike on every rank of a
 * correct program: a rank whose @calls is behind the others' has not
 * called the collective they are in. The command in flight is the one
 * of the communicator's that started first among those still running
 * (a GROUP: the group, @count its members). It waits when it is parked:
 * on @wait_port (the port of its part that waited longest), for
 * @wait_rank when that port is one of its ring's.
 */
#define NNP_HW_COMM_NO_PORT		0xffffffffu
#define NNP_HW_COMM_NO_RANK		0xffffffffu

struct nnp_hw_comm_state {
	nnp_le64 epoch;
	nnp_le32 rank;
	nnp_le32 nranks;
	nnp_le32 status;	/* COMM_STATUS's: its first failure, or 0 */
	nnp_le32 calls;		/* collectives started */
	nnp_le32 calls_done;	/* of them ended, whatever their status */
	nnp_le32 messages;	/* SENDs and RECVs ended */
	/* count x element size (SEND, RECV: len) of its commands that succeeded */
	nnp_le64 bytes;
	/* The command in flight: opcode NNP_CMD_*, or 0 for none. */
	uint8_t opcode;
	uint8_t dtype;
	uint8_t op;
	uint8_t rsvd;
	/* root of a rooted collective, a routed message's peer; else NO_RANK */
	nnp_le32 peer;
	nnp_le64 count;		/* elements (SEND, RECV: bytes; GROUP: members) */
	nnp_le32 wait_port;	/* NO_PORT: it is not waiting */
	nnp_le32 wait_rank;	/* NO_RANK: not known */
	nnp_le64 wait_ns;	/* how long it has waited there */
};

/* Completion entry (admin and user queues): 16 bytes. */
struct nnp_hw_cqe {
	nnp_le32 result;	/* opcode result: IDENTIFY -> bytes written */
	nnp_le16 sq_head;	/* SQ slots consumed up to here */
	nnp_le16 cid;
	nnp_le16 status;	/* NNP_STATUS_* */
	nnp_le16 phase;		/* bit 0 flips each pass over the ring */
	nnp_le32 rsvd;
};

#define NNP_CQE_PHASE			(1u << 0)

/* Completion status codes */
#define NNP_STATUS_SUCCESS		0x0000
#define NNP_STATUS_INVALID_OPCODE	0x0001
#define NNP_STATUS_INVALID_FIELD	0x0002	/* reserved field or flag set */
#define NNP_STATUS_DMA_ERROR		0x0003	/* data buffer unreachable */
#define NNP_STATUS_BUFFER_TOO_SMALL	0x0004
#define NNP_STATUS_BUSY			0x0005	/* id already in use */
#define NNP_STATUS_NOT_FOUND		0x0006	/* no such context, key or queue */
#define NNP_STATUS_NO_RESOURCES		0x0007	/* table full */
#define NNP_STATUS_KEY_INVALID		0x0010	/* unknown key, or another context's */
#define NNP_STATUS_OUT_OF_BOUNDS	0x0011	/* offset + length past the key */
#define NNP_STATUS_ACCESS_DENIED	0x0012	/* key lacks the right */
#define NNP_STATUS_LINK_DOWN		0x0013	/* a link the collective needs is down */
#define NNP_STATUS_PEER_TIMEOUT		0x0014	/* a peer chip did not answer in time */
#define NNP_STATUS_ABORTED		0x0015	/* another rank's part failed, or torn down */
#define NNP_STATUS_MISMATCH		0x0016	/* the ranks called it differently (v1.16) */
/*
 * A rank left the communicator (destroyed it, or its context went with
 * its process) after fewer collectives than this one's number (v1.20),
 * or before sending what a routed message waits for, or to it (v1.21):
 * its peers no longer wait for it to their timeout.
 */
#define NNP_STATUS_PEER_LEFT		0x0017

/*
 * A MISMATCH completion (v1.16) names the call of the rank whose chunk
 * disagreed with this one's: result = NNP_MISMATCH_CALL() of its opcode,
 * type, op and root; rsvd = NNP_MISMATCH_WHO() of its rank and the
 * NNP_MISMATCH_* fields that differ (a count, too large for the entry,
 * only as differing). A ring collective's chunks are checked whether it
 * reads them or not: as they arrive while it runs, and as it starts for
 * those that came before. So both sides of a mismatch fail fast, also
 * where neither reads what the other sends (two ranks that each think
 * they are a broadcast's root); a chunk of a later collective, from a
 * peer ahead, is not one of this collective's.
 */
#define NNP_MISMATCH_OPCODE		(1u << 0)
#define NNP_MISMATCH_DTYPE		(1u << 1)
#define NNP_MISMATCH_OP			(1u << 2)
#define NNP_MISMATCH_ROOT		(1u << 3)
#define NNP_MISMATCH_COUNT		(1u << 4)
/* v1.25: the peer's GROUP held other collectives of the communicator. */
#define NNP_MISMATCH_GROUP		(1u << 5)
/*
 * v1.27: a message or chunk came whose length is not what this rank's
 * RECV or collective takes from its sender (a SEND and RECV, or the
 * counts of an alltoallv, that disagree). With this field, result is
 * the length that came, in bytes (UINT32_MAX if more), not a call; the
 * rank is NNP_MISMATCH_RANK_UNKNOWN for a message by port from another
 * process, whose copy names no sender.
 */
#define NNP_MISMATCH_LENGTH		(1u << 6)
#define NNP_MISMATCH_RANK_UNKNOWN	0xffffu
#define NNP_MISMATCH_CALL(opcode, dtype, op, root) \
	((uint32_t)(opcode) | (uint32_t)(dtype) << 8 | (uint32_t)(op) << 12 | \
	 (uint32_t)(root) << 16)
#define NNP_MISMATCH_CALL_OPCODE(v)	((v) & 0xff)
#define NNP_MISMATCH_CALL_DTYPE(v)	(((v) >> 8) & 0xf)
#define NNP_MISMATCH_CALL_OP(v)		(((v) >> 12) & 0xf)
#define NNP_MISMATCH_CALL_ROOT(v)	((v) >> 16)
#define NNP_MISMATCH_WHO(rank, fields)	((uint32_t)(rank) | (uint32_t)(fields) << 16)
#define NNP_MISMATCH_WHO_RANK(v)	((v) & 0xffff)
#define NNP_MISMATCH_WHO_FIELDS(v)	((v) >> 16)

/* ---- User queue entries ------------------------------------------------ */

#define NNP_CMD_NOP			0x00
#define NNP_CMD_COPY			0x01	/* src -> dst, len bytes (see below) */
#define NNP_CMD_FILL			0x02	/* dst, len bytes of value's low byte */
#define NNP_CMD_TIMESTAMP		0x03	/* 8-byte ns time at dst */
#define NNP_CMD_BARRIER			0x04	/* earlier commands finish first */
/*
 * Collectives over a communicator: len is an element count, value holds
 * NNP_COLL_VALUE(dtype, op, comm, root); src and dst are device memory.
 * ALLREDUCE: len elements in and out. BROADCAST: len elements from rank
 * root's src to every dst (op 0). ALLGATHER: len elements in, nranks * len
 * out, rank r's at element r * len (op 0). REDUCE_SCATTER: nranks * len
 * in, len out: rank r gets elements r * len .. (r + 1) * len - 1 of the
 * reduction. Fields a collective does not use are zero.
 */
#define NNP_CMD_ALLREDUCE		0x05
#define NNP_CMD_BROADCAST		0x06
#define NNP_CMD_ALLGATHER		0x07
#define NNP_CMD_REDUCE_SCATTER		0x08
/*
 * Exchanges (v1.12), len elements to or from each rank, as routed
 * messages (COMM_ROUTES first, else INVALID_FIELD; communicators of at
 * most NNP_HW_MAX_ROUTED_RANKS), op 0. ALLTOALL: src holds nranks * len
 * elements, segment r for rank r; dst gets nranks * len, segment r from
 * rank r (root 0). GATHER: each rank's len elements of src to root's dst,
 * rank r's at element r * len; a rank other than root names no dst.
 * SCATTER: root's src holds nranks * len, segment r for rank r; each
 * rank's dst gets its len; a rank other than root names no src. src and
 * dst may overlap (in place).
 */
#define NNP_CMD_ALLTOALL		0x0b
#define NNP_CMD_GATHER			0x0c
#define NNP_CMD_SCATTER			0x0d
/*
 * REDUCE (v1.12): len elements of src from every rank, reduced by op into
 * root's dst; a rank other than root names no dst. Around the ring, as a
 * chain ending at the root.
 */
#define NNP_CMD_REDUCE			0x0e

#define NNP_COLL_VALUE(dtype, op, comm, root) \
	((dtype) | (op) << 8 | (uint64_t)(comm) << 16 | (uint64_t)(root) << 32)
#define NNP_COLL_DTYPE(v)		((v) & 0xff)
#define NNP_COLL_OP(v)			(((v) >> 8) & 0xff)
#define NNP_COLL_COMM(v)		(((v) >> 16) & 0xffff)
#define NNP_COLL_ROOT(v)		(((v) >> 32) & 0xffff)
#define NNP_COLL_RSVD(v)		((v) >> 48)

/*
 * Point-to-point between the chips of one job, through one ICL port of
 * the communicator's context: SEND reads len bytes of device memory at src
 * and sends them out of the port; RECV writes the next message of the same
 * communicator arriving on the port to dst, which must be exactly as long
 * (else INVALID_FIELD). Messages on one port of one communicator arrive in
 * the order sent; a RECV waits up to its communicator's timeout for its
 * own, and a SEND as long for room: a port holds at most 4 MiB for its
 * receivers. The command never holds the device's workers while it waits:
 * other queues run meanwhile. Destroying or resetting its queue or its
 * context, or unregistering a key it uses, ends it ABORTED at once.
 * value holds NNP_P2P_VALUE(comm, port).
 *
 * Routed (v1.12): value holds NNP_P2P_ROUTED_VALUE(comm, peer) instead,
 * the peer's rank rather than a port. A SEND leaves on the port
 * COMM_ROUTES gave for the peer and is forwarded chip to chip; a RECV
 * takes the peer's next routed message from whichever port it comes in
 * on. Messages of one pair arrive in the order sent. A peer at or past
 * NNP_HW_MAX_ROUTED_RANKS or the communicator's size, the chip's own
 * rank, or one with no route is INVALID_FIELD.
 *
 * From any source (v1.26): a RECV whose value holds NNP_P2P_ANY_VALUE(comm)
 * takes the first message for this rank of the communicator to have come,
 * by port or routed, whose number no RECV has taken yet (a RECV naming
 * its peer takes its number when it starts), and goes on as a RECV of
 * that message would. Its completion's result says whence:
 * NNP_P2P_FROM_ROUTED | the source's rank for a routed message, else the
 * port it came in on. It waits up to its communicator's timeout for the
 * first. An ALLTOALL's, GATHER's or SCATTER's chunk, numbered as routed
 * messages are, is passed over where its call is known (lent in process,
 * or a relay's copy of such); one copied from another process before the
 * receiver's own exchange started is not told apart. A SEND with
 * NNP_P2P_ANY, any other bit set, or a GROUP member is INVALID_FIELD.
 */
#define NNP_CMD_SEND			0x09
#define NNP_CMD_RECV			0x0a

#define NNP_P2P_VALUE(comm, port)	((uint64_t)(comm) << 16 | (port))
#define NNP_P2P_PORT(v)			((v) & 0xffff)
#define NNP_P2P_COMM(v)			(((v) >> 16) & 0xffff)
#define NNP_P2P_ROUTED			(1ull << 48)
#define NNP_P2P_ROUTED_VALUE(comm, peer) \
	(NNP_P2P_ROUTED | (uint64_t)(peer) << 32 | (uint64_t)(comm) << 16)
#define NNP_P2P_PEER(v)			(((v) >> 32) & 0xffff)
#define NNP_P2P_ANY			(1ull << 49)
#define NNP_P2P_ANY_VALUE(comm)		(NNP_P2P_ANY | (uint64_t)(comm) << 16)
#define NNP_P2P_FROM_ROUTED		(1u << 31)

/*
 * GROUP (v1.13): the len commands after it in the ring, each a SEND or a
 * RECV (v1.14: or an ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER or
 * REDUCE), run together, in any order and all at once, so that sends and
 * receives posted in any order never wait on each other (a ring of
 * messages posted in reverse order completes), and small collectives wait
 * for their neighbours at once, not one after another. Members must not
 * write what another member reads or writes. Every other field is zero.
 * len is 1 to depth / 2 - 1 (else INVALID_FIELD). The group starts once
 * its len members are in the ring and the completion queue has room for
 * len + 1 completions: an owner that writes CQ_HEAD at least every
 * depth / 2 completions always gives it that. It completes as one: on
 * success the GROUP's completion, then one per member, in ring order; a
 * member that fails ends the others ABORTED, and the GROUP alone
 * completes, with the first failure's status, and the queue stops as
 * after any failed command. Messages of one pair keep their order: each
 * member takes its label in ring order when the group starts. Since
 * v1.25 a communicator's collectives in a group that are all ALLREDUCEs
 * flagged NNP_CMD_FLAG_FUSE, of one type, op and count, each at most
 * 64 KiB, run as one allreduce of up to 1 MiB, one allreduce's packets;
 * each member still completes with its own cid, and those fused into a
 * failed one end ABORTED. Every rank must then group them alike.
 */
#define NNP_CMD_GROUP			0x0f

/*
 * Element types. Types below NNP_DTYPE_REDUCIBLE are numbers every
 * reduction takes; U8 (v1.15) is bytes, which BROADCAST, ALLGATHER,
 * ALLTOALL, GATHER and SCATTER move as they are, so that data of any type
 * moves; an ALLREDUCE, REDUCE_SCATTER or REDUCE of U8 is INVALID_FIELD.
 */
#define NNP_DTYPE_F32			0
#define NNP_DTYPE_F16			1
#define NNP_DTYPE_BF16			2
#define NNP_DTYPE_I32			3
#define NNP_DTYPE_F64			4
#define NNP_DTYPE_I64			5
#define NNP_DTYPE_REDUCIBLE		6
#define NNP_DTYPE_U8			6
#define NNP_DTYPE_COUNT			7

/* Reduction operations */
#define NNP_OP_SUM			0
#define NNP_OP_PROD			1
#define NNP_OP_MIN			2
#define NNP_OP_MAX			3
#define NNP_OP_AVG			4
#define NNP_OP_COUNT			5

/*
 * User queue command: 64 bytes. Memory is named only as (key, offset);
 * every field an opcode does not use must be zero, flags included (but
 * NNP_CMD_FLAG_FUSE on an ALLREDUCE, v1.25: see GROUP). A queue
 * runs its commands one after another, in order (a GROUP's members
 * together). COPY handles overlap when both sides are device memory;
 * overlapping host ranges are copied front to back.
 */
struct nnp_hw_queue_cmd {
	uint8_t opcode;
	uint8_t flags;
	nnp_le16 cid;
	nnp_le32 rsvd0;
	nnp_le32 src_key;
	nnp_le32 dst_key;
	nnp_le64 src_off;
	nnp_le64 dst_off;
	nnp_le64 len;
	nnp_le64 value;		/* FILL: low byte is the fill byte */
	nnp_le64 rsvd1;
	nnp_le64 rsvd2;
};

#define NNP_CMD_FLAG_FUSE		(1u << 0)

/* IDENTIFY data: written to cmd.addr; cmd.len must be >= its size. */
struct nnp_hw_identify {
	nnp_le32 magic;		/* NNP_HW_ID_MAGIC */
	nnp_le32 hw_version;
	nnp_le32 fw_version;
	nnp_le32 chip_id;
	nnp_le64 mem_size;
	nnp_le32 caps;
	nnp_le16 num_ports;
	nnp_le16 num_queues;
	nnp_le16 num_vectors;
	nnp_le16 rsvd0;
	nnp_le32 rsvd1;
	char serial[16];	/* NUL-terminated */
	char fw_build[32];	/* NUL-terminated build string */
	uint8_t rsvd2[168];
};

#define NNP_HW_IDENTIFY_SIZE		256

#endif /* NNP_HW_H */
