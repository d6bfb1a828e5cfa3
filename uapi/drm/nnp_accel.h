/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * nnp accelerator: user-space interface of nnp.ko (/dev/accel/accelN).
 *
 * Rules every ioctl here follows (see Documentation/process/botching-up-ioctls.rst):
 * structures have no implicit padding and are laid out for 32- and 64-bit
 * user space alike; every flag or reserved field not defined must be zero
 * and is rejected otherwise; each invalid input has one documented errno.
 */
#ifndef _UAPI_NNP_ACCEL_H_
#define _UAPI_NNP_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * Version of this interface, reported by DRM_IOCTL_VERSION. 1.0 is the
 * interface of the first release (nnp 0.1.0). The minor grows by one with
 * every addition since then (an ioctl, a flag, a field, a query version),
 * and what was added is marked "since 1.N" where it is defined, so that
 * user space can tell from the version alone what the driver accepts:
 *
 * 1.1: DRM_IOCTL_NNP_COMM_STATUS, DRM_NNP_COMM_DESTROY_ABORT.
 * 1.2: drm_nnp_device_info version 2: reset_count, last_reset_reason.
 * 1.3: drm_nnp_ports.entry_size.
 * 1.4: DRM_IOCTL_NNP_COMM_TOPOLOGY.
 * 1.5: DRM_NNP_QUERY_MODEL.
 * 1.6: DRM_NNP_RESET_PCI, DRM_NNP_RESET_SUSPEND.
 * 1.7: DRM_NNP_QUEUE_SHADOW_DOORBELL, drm_nnp_queue_create.shadow_offset.
 * 1.8: DRM_IOCTL_NNP_COMM_ROUTES.
 * 1.9: drm_nnp_comm_create.name.
 * 1.10: events (struct drm_nnp_event), read() and poll() on the file.
 * 1.11: DRM_NNP_QUERY_COMMS.
 * 1.12: DRM_NNP_COMM_CREATE_TRANSIT.
 * 1.13: DRM_IOCTL_NNP_BO_IMPORT; other devices can attach exported objects;
 *       drm_nnp_counters version 2: peer_dma_bytes.
 *
 * The major changes only if something is taken away, which this header's
 * rules forbid.
 */
#define DRM_NNP_DRIVER_NAME		"nnp"
#define DRM_NNP_DRIVER_MAJOR		1
#define DRM_NNP_DRIVER_MINOR		13

#define DRM_NNP_QUERY			0x00
#define DRM_NNP_BO_CREATE		0x01
#define DRM_NNP_BO_USERPTR		0x02
#define DRM_NNP_QUEUE_CREATE		0x03
#define DRM_NNP_QUEUE_DESTROY		0x04
#define DRM_NNP_QUEUE_RESET		0x05
#define DRM_NNP_QUEUE_WAIT		0x06
#define DRM_NNP_COMM_CREATE		0x07
#define DRM_NNP_COMM_DESTROY		0x08
#define DRM_NNP_COMM_STATUS		0x09	/* since 1.1 */
#define DRM_NNP_COMM_TOPOLOGY		0x0a	/* since 1.4 */
#define DRM_NNP_COMM_ROUTES		0x0b	/* since 1.8 */
#define DRM_NNP_BO_IMPORT		0x0c	/* since 1.13 */

#define DRM_IOCTL_NNP_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_QUERY, struct drm_nnp_query)
#define DRM_IOCTL_NNP_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_BO_CREATE, struct drm_nnp_bo_create)
#define DRM_IOCTL_NNP_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_BO_USERPTR, struct drm_nnp_bo_userptr)
#define DRM_IOCTL_NNP_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_QUEUE_CREATE, struct drm_nnp_queue_create)
#define DRM_IOCTL_NNP_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NNP_QUEUE_DESTROY, struct drm_nnp_queue_op)
#define DRM_IOCTL_NNP_QUEUE_RESET \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NNP_QUEUE_RESET, struct drm_nnp_queue_op)
#define DRM_IOCTL_NNP_QUEUE_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NNP_QUEUE_WAIT, struct drm_nnp_queue_wait)
#define DRM_IOCTL_NNP_COMM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_COMM_CREATE, struct drm_nnp_comm_create)
#define DRM_IOCTL_NNP_COMM_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NNP_COMM_DESTROY, struct drm_nnp_comm_destroy)
#define DRM_IOCTL_NNP_COMM_STATUS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_COMM_STATUS, struct drm_nnp_comm_status)
#define DRM_IOCTL_NNP_COMM_TOPOLOGY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NNP_COMM_TOPOLOGY, struct drm_nnp_comm_topology)
#define DRM_IOCTL_NNP_COMM_ROUTES \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NNP_COMM_ROUTES, struct drm_nnp_comm_routes)
#define DRM_IOCTL_NNP_BO_IMPORT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_BO_IMPORT, struct drm_nnp_bo_import)

/*
 * DRM_NNP_QUERY_DEVICE_INFO - identity and basics of the device,
 * as struct drm_nnp_device_info.
 */
#define DRM_NNP_QUERY_DEVICE_INFO	1
/* DRM_NNP_QUERY_COUNTERS - device counters, as struct drm_nnp_counters. */
#define DRM_NNP_QUERY_COUNTERS		2
/* DRM_NNP_QUERY_PORTS - inter-chip link ports, as struct drm_nnp_ports. */
#define DRM_NNP_QUERY_PORTS		3
/*
 * DRM_NNP_QUERY_MODEL - since 1.5: the device's modeled clock and busy
 * times, as struct drm_nnp_model (%EOPNOTSUPP from a device older than
 * hardware interface 1.8).
 */
#define DRM_NNP_QUERY_MODEL		4
/*
 * DRM_NNP_QUERY_COMMS - since 1.11: the communicators of the device's
 * open files and where each stands, as struct drm_nnp_comms.
 */
#define DRM_NNP_QUERY_COMMS		5

/**
 * struct drm_nnp_query - read one block of information about the device
 *
 * The kernel copies its structure for @query to @data, truncated to @size,
 * and sets @size to the number of bytes it wrote. Fields are only ever
 * appended to a query's structure, so an older caller gets the fields it
 * knows and a newer caller learns from @size which fields were filled.
 *
 * Errors (returned by ioctl() in errno):
 *
 * - %EINVAL: @flags or @reserved is not zero.
 * - %EOPNOTSUPP: @query is not a query this kernel knows, or one the
 *   device is too old to answer (MODEL).
 * - %ENOSPC: @size is not zero but smaller than the query's first version.
 * - %EFAULT: @data cannot be written for @size bytes.
 * - %ENOMEM: the kernel has no memory for the answer (COUNTERS, PORTS,
 *   MODEL, COMMS).
 * - %ENODEV: the device was removed (for example by unbinding the driver).
 */
struct drm_nnp_query {
	/** @query: in: which block, DRM_NNP_QUERY_*. */
	__u32 query;
	/** @flags: in: none defined, must be zero. */
	__u32 flags;
	/**
	 * @size: in: bytes available at @data, or 0 to ask for the size.
	 * out: bytes written, or with 0 in, the full size of the structure.
	 */
	__u32 size;
	/** @reserved: must be zero. */
	__u32 reserved;
	/** @data: in: user pointer to the buffer that receives the block. */
	__u64 data;
};

/* Capability bits of struct drm_nnp_device_info.caps */
#define DRM_NNP_CAP_ADMIN_QUEUE		(1ull << 0)
#define DRM_NNP_CAP_USER_QUEUES		(1ull << 1)
#define DRM_NNP_CAP_ICL			(1ull << 2)
#define DRM_NNP_CAP_COLLECTIVES		(1ull << 3)

/**
 * struct drm_nnp_device_info - answer to DRM_NNP_QUERY_DEVICE_INFO
 *
 * Version 1 is DRM_NNP_DEVICE_INFO_SIZE_V1 bytes.
 */
struct drm_nnp_device_info {
	/** @chip_id: the chip's id within its fabric. */
	__u32 chip_id;
	/** @hw_version: hardware interface version, major << 16 | minor. */
	__u32 hw_version;
	/**
	 * @fw_version: firmware version, major << 16 | minor << 8 | patch.
	 */
	__u32 fw_version;
	/** @num_icl_ports: number of inter-chip link ports. */
	__u32 num_icl_ports;
	/** @mem_size: device memory in bytes. */
	__u64 mem_size;
	/** @caps: DRM_NNP_CAP_* bits. */
	__u64 caps;
	/**
	 * @num_queues: user queues the device offers: one per MSI-X vector
	 * the driver got beside the admin queue's, at most the module
	 * parameter max_queues.
	 */
	__u32 num_queues;
	/** @fw_heartbeat: firmware heartbeat count, read at the query. */
	__u32 fw_heartbeat;
	/** @serial: the device's serial number, NUL-terminated. */
	char serial[16];
	/** @fw_build: the firmware's build string, NUL-terminated. */
	char fw_build[32];
	/**
	 * @reset_count: v2, since 1.2: device resets since the driver bound
	 * to it.
	 */
	__u32 reset_count;
	/**
	 * @last_reset_reason: v2, since 1.2: DRM_NNP_RESET_* of the last one
	 * (NONE: none).
	 */
	__u32 last_reset_reason;
};

#define DRM_NNP_DEVICE_INFO_SIZE_V1	88
#define DRM_NNP_DEVICE_INFO_SIZE_V2	96	/* since 1.2 */

/*
 * Since 1.2. Why the device was reset (drm_nnp_device_info.last_reset_reason, sysfs
 * last_reset_reason, the uevent's NNP_RESET_REASON). Every context open
 * at a reset is lost: its ioctls and mmap() fail with ECANCELED.
 */
#define DRM_NNP_RESET_NONE		0
#define DRM_NNP_RESET_HEARTBEAT		1	/* firmware heartbeat stopped */
#define DRM_NNP_RESET_JOB_TIMEOUT	2	/* a queue made no progress */
#define DRM_NNP_RESET_ADMIN		3	/* admin queue timed out or failed */
#define DRM_NNP_RESET_FW_HALTED		4	/* firmware reported HALTED */
#define DRM_NNP_RESET_USER		5	/* asked for: sysfs reset_device, nnptool reset */
#define DRM_NNP_RESET_PCI		6	/* since 1.6: the PCI core's FLR of the device */
#define DRM_NNP_RESET_SUSPEND		7	/* since 1.6: a system sleep */

/*
 * Events, since 1.10: read() on the file returns them as DRM events, each
 * a whole struct drm_nnp_event (base.type DRM_NNP_EVENT_*, base.length
 * its size), as many as fit, oldest first; poll() says POLLIN while one
 * waits. RESET goes to every file open at a reset, once it is done (their
 * contexts are lost, their reads go on); COMM_FAILED to the file whose
 * communicator failed, at its first failure (from a device of hardware
 * interface 1.17 on); LINK to every file of the device whose port's link
 * went down or came up (1.17 on). A file holds the unread ones in the 4
 * KiB DRM gives each file, DRM_NNP_EVENTS_MAX of them: a new one past
 * that drops the oldest, and the oldest kept counts in @lost those
 * dropped before it.
 */
#define DRM_NNP_EVENT_RESET		0x80000001
#define DRM_NNP_EVENT_COMM_FAILED	0x80000002
#define DRM_NNP_EVENT_LINK		0x80000003
#define DRM_NNP_EVENTS_MAX		102
/* drm_nnp_event.port of a failure met by a command of the chip itself. */
#define DRM_NNP_EVENT_NO_PORT		0xffff

/**
 * struct drm_nnp_event - what happened to the device or the file
 *
 * Since 1.10; read() gives it, see DRM_NNP_EVENT_*.
 */
struct drm_nnp_event {
	/** @base: type DRM_NNP_EVENT_*, length sizeof(struct drm_nnp_event). */
	struct drm_event base;
	/** @time_ns: CLOCK_MONOTONIC when the driver learnt of it. */
	__u64 time_ns;
	/** @lost: this file's events dropped, oldest first, before this one. */
	__u32 lost;
	/**
	 * @reason: RESET: DRM_NNP_RESET_*; COMM_FAILED: the device status
	 * of the failure, as drm_nnp_comm_status.status; LINK: 0.
	 */
	__u32 reason;
	/** @count: RESET: the reset's number (reset_count after it); else 0. */
	__u32 count;
	/** @comm: COMM_FAILED: the communicator, as COMM_CREATE named it. */
	__u32 comm;
	/**
	 * @port: LINK: the port; COMM_FAILED: the port an abort or a drop
	 * came in on, DRM_NNP_EVENT_NO_PORT if a command of this chip met
	 * the failure; RESET: 0.
	 */
	__u32 port;
	/** @state: LINK: DRM_NNP_PORT_* bits now; else 0. */
	__u32 state;
};

/**
 * struct drm_nnp_counters - answer to DRM_NNP_QUERY_COUNTERS
 *
 * Totals since the device was last reset (driver bind), all processes.
 */
struct drm_nnp_counters {
	/** @host_dma_bytes: bytes user queues read from or wrote to host memory. */
	__u64 host_dma_bytes;
	/** @local_bytes: bytes user queues copied or filled within device memory. */
	__u64 local_bytes;
	/** @cmds_completed: user queue commands that succeeded. */
	__u64 cmds_completed;
	/** @cmds_failed: user queue commands that failed. */
	__u64 cmds_failed;
	/** @mem_used: bytes of device memory held by memory objects now. */
	__u64 mem_used;
	/** @mem_objects: memory objects of all kinds alive now. */
	__u64 mem_objects;
	/**
	 * @peer_dma_bytes: since 1.13, version 2: bytes user queues read from
	 * or wrote to another device's memory imported with
	 * DRM_IOCTL_NNP_BO_IMPORT (not in @host_dma_bytes); 0 on a device
	 * before hardware interface 1.24, which counts them as host bytes.
	 */
	__u64 peer_dma_bytes;
};

#define DRM_NNP_COUNTERS_SIZE_V1	48
#define DRM_NNP_COUNTERS_SIZE_V2	56	/* since 1.13 */

/* struct drm_nnp_port.state bits */
#define DRM_NNP_PORT_WIRED		(1u << 0)	/* has a peer */
#define DRM_NNP_PORT_UP			(1u << 1)	/* the link is up */

/**
 * struct drm_nnp_port - one inter-chip link port
 */
struct drm_nnp_port {
	/** @state: DRM_NNP_PORT_* bits. */
	__u32 state;
	/** @peer_chip: chip id at the other end, if wired. */
	__u32 peer_chip;
	/** @peer_port: port at the other end, if wired. */
	__u32 peer_port;
	/** @reserved: zero. */
	__u32 reserved;
	/** @tx_bytes: payload bytes sent. */
	__u64 tx_bytes;
	/** @rx_bytes: payload bytes received. */
	__u64 rx_bytes;
	/** @tx_packets: packets sent. */
	__u64 tx_packets;
	/** @rx_packets: packets received. */
	__u64 rx_packets;
	/**
	 * @errors: sends that found the link down, and packets lost on
	 * arrival (link down, another communicator's, the wrong port).
	 */
	__u64 errors;
};

#define DRM_NNP_MAX_PORTS		16

/**
 * struct drm_nnp_ports - answer to DRM_NNP_QUERY_PORTS
 *
 * struct drm_nnp_port grows at its end like any query block. Entry i
 * starts at byte offsetof(struct drm_nnp_ports, port) + i * @entry_size of
 * the answer, and a caller copies min(@entry_size, sizeof(struct
 * drm_nnp_port)) bytes of it: @port[] is the layout only while the two
 * sizes are equal. A caller whose @size is DRM_NNP_PORTS_SIZE_V1 or less
 * (one that may predate @entry_size) gets 56-byte entries from every
 * kernel.
 */
struct drm_nnp_ports {
	/** @num_ports: entries of @port that are the device's ports. */
	__u32 num_ports;
	/**
	 * @entry_size: since 1.3: bytes from one entry of @port to the next,
	 * DRM_NNP_PORT_SIZE_V1 or more (0 before 1.3: read it as 56).
	 */
	__u32 entry_size;
	/** @port: the ports, by number. */
	struct drm_nnp_port port[DRM_NNP_MAX_PORTS];
};

#define DRM_NNP_PORT_SIZE_V1		56	/* since 1.3 */

#define DRM_NNP_PORTS_SIZE_V1		904

/**
 * struct drm_nnp_model - answer to DRM_NNP_QUERY_MODEL (since 1.5)
 *
 * The device's modeled clock: what its work since it was last reset
 * (driver bind) would have taken on an NNP-T, in modeled ns, the same
 * whatever the host's load (docs/architecture.md, "The modeled clock").
 * All processes' work counts. A busy time over @now_ns is the share of
 * modeled time that engine or link direction was in use.
 */
struct drm_nnp_model {
	/** @now_ns: the device's modeled time. */
	__u64 now_ns;
	/** @commands: user queue commands run to their end. */
	__u64 commands;
	/** @hbm_busy_ns: device memory busy with copies, fills, reductions. */
	__u64 hbm_busy_ns;
	/** @pcie_busy_ns: host DMA busy. */
	__u64 pcie_busy_ns;
	/** @num_ports: entries of @port_tx_busy_ns that are the device's ports. */
	__u32 num_ports;
	/** @reserved: zero. */
	__u32 reserved;
	/** @port_tx_busy_ns: each port's transmit direction busy, by port. */
	__u64 port_tx_busy_ns[DRM_NNP_MAX_PORTS];
};

#define DRM_NNP_MODEL_SIZE_V1		168

/* drm_nnp_comm_info: no such rank, port or time. */
#define DRM_NNP_COMM_NONE		0xffffffff
/*
 * drm_nnp_comm_info.flags: the device said where the communicator stands
 * (hardware interface 1.18 on): the fields from @epoch on hold. Without
 * it they are zero, and the none values DRM_NNP_COMM_NONE.
 */
#define DRM_NNP_COMM_INFO_STATE		(1u << 0)

/**
 * struct drm_nnp_comm_info - one communicator of struct drm_nnp_comms
 *
 * Collectives are numbered from 1 in the order the chip starts them, alike
 * on every rank of a correct program: a rank whose @calls is behind its
 * peers' has not yet called the collective they are in.
 */
struct drm_nnp_comm_info {
	/** @comm: its id, as COMM_CREATE returned it. */
	__u32 comm;
	/**
	 * @pid: the process that opened its file, in the caller's pid
	 * namespace; 0 if it has gone or is not seen from there.
	 */
	__u32 pid;
	/** @uid: the effective uid that opened the file, in the caller's user namespace. */
	__u32 uid;
	/** @flags: DRM_NNP_COMM_INFO_* bits. */
	__u32 flags;
	/** @task: the process's command name, NUL-terminated ("" if gone). */
	char task[16];
	/** @name: as COMM_CREATE named it, NUL-padded; may be empty. */
	char name[32];
	/** @rank: this communicator's rank. */
	__u32 rank;
	/** @nranks: its size. */
	__u32 nranks;
	/** @epoch: the 64 bits that name it on the links, the same on every rank. */
	__u64 epoch;
	/** @status: its first failure's device status, as COMM_STATUS says; 0: none. */
	__u32 status;
	/** @calls: collectives it started. */
	__u32 calls;
	/** @calls_done: of them, those ended, whatever their status. */
	__u32 calls_done;
	/** @messages: SENDs and RECVs ended. */
	__u32 messages;
	/** @bytes: count x element size (SEND, RECV: length) of those that succeeded. */
	__u64 bytes;
	/**
	 * @opcode: its command in flight, the collective it started first
	 * of those still running, else a message or a group: the device's
	 * NNP_CMD_* (docs/hw-interface.md); 0: none.
	 */
	__u32 opcode;
	/** @dtype: its NNP_DTYPE_*. */
	__u32 dtype;
	/** @op: its reduction NNP_OP_*. */
	__u32 op;
	/** @peer: its root, or a routed message's peer; DRM_NNP_COMM_NONE. */
	__u32 peer;
	/** @count: its elements (SEND, RECV: bytes; GROUP: members). */
	__u64 count;
	/** @wait_port: the port it waits on; DRM_NNP_COMM_NONE: it is not waiting. */
	__u32 wait_port;
	/** @wait_rank: the rank at that port's far end, if known; else DRM_NNP_COMM_NONE. */
	__u32 wait_rank;
	/** @wait_ns: how long it has waited there. */
	__u64 wait_ns;
};

#define DRM_NNP_COMM_INFO_SIZE_V1	144

/* The most communicators a device holds. */
#define DRM_NNP_MAX_COMMS		64

/**
 * struct drm_nnp_comms - answer to DRM_NNP_QUERY_COMMS (since 1.11)
 *
 * The caller sees the communicators of the files opened under its own
 * effective uid; with CAP_SYS_ADMIN, every file's. The others are only
 * counted. Entry i starts at byte offsetof(struct drm_nnp_comms, comm) +
 * i * @entry_size, as struct drm_nnp_ports's do. Each is read from the
 * device apart: two entries of one job may be a few microseconds apart.
 */
struct drm_nnp_comms {
	/** @num_comms: entries of @comm filled. */
	__u32 num_comms;
	/** @hidden: communicators of other users' files, not shown. */
	__u32 hidden;
	/** @entry_size: bytes from one entry of @comm to the next. */
	__u32 entry_size;
	/** @pad: zero. */
	__u32 pad;
	/** @comm: the communicators, by file, then by id. */
	struct drm_nnp_comm_info comm[DRM_NNP_MAX_COMMS];
};

#define DRM_NNP_COMMS_SIZE_V1		9232

/* Memory object placement, struct drm_nnp_bo_create.flags */
#define DRM_NNP_BO_DEVICE		(1u << 0)	/* device memory (BAR2) */
#define DRM_NNP_BO_HOST			(1u << 1)	/* host pages the kernel allocates */
/* The device may only read the object (BO_CREATE, BO_USERPTR, BO_IMPORT). */
#define DRM_NNP_BO_READ_ONLY		(1u << 2)

/**
 * struct drm_nnp_bo_create - allocate a memory object
 *
 * Device memory comes from the device's BAR and is scrubbed when freed,
 * and zeroed by the device reset at every unbind and bind; host memory is
 * zeroed pages, charged to the caller's memory cgroup.
 * Either is mapped with mmap() at @mmap_offset (device memory
 * write-combined) by this file only, and named in queue commands by @key,
 * which only this file's queues may use. Closing the handle
 * (DRM_IOCTL_GEM_CLOSE) or the file frees it once unmapped. A dma-buf
 * exported from it (DRM_IOCTL_PRIME_HANDLE_TO_FD) can be mapped only while
 * the driver stays bound: after an unbind mmap() of it fails with %ENODEV
 * and its mappings fault with SIGBUS. Since 1.13 other devices can attach
 * it (and DRM_IOCTL_NNP_BO_IMPORT of this or another nnp device import
 * it): host memory as its pages, device memory as its range of BAR2,
 * which the unbind takes back from every importer.
 *
 * Errors: %EINVAL for flags other than exactly one of DEVICE and HOST
 * (plus READ_ONLY), nonzero @reserved, or @size 0; %E2BIG for @size past
 * the device memory (DEVICE) or 2 GiB (HOST); %EMFILE when this file
 * already holds max_keys_per_file objects (a module parameter, default
 * 1024); %ENOSPC when the device memory has no free range that large, or
 * the device has no free key; %ENOMEM when the host has no memory or the
 * caller's memory cgroup reached its limit.
 */
struct drm_nnp_bo_create {
	/** @size: in: bytes, rounded up to whole pages. */
	__u64 size;
	/** @flags: in: DRM_NNP_BO_DEVICE or DRM_NNP_BO_HOST, | READ_ONLY. */
	__u32 flags;
	/** @handle: out: GEM handle. */
	__u32 handle;
	/** @mmap_offset: out: offset to mmap() the object at. */
	__u64 mmap_offset;
	/** @key: out: memory key for this file's queue commands. */
	__u32 key;
	/** @reserved: must be zero. */
	__u32 reserved;
};

/**
 * struct drm_nnp_bo_userptr - register existing user memory
 *
 * Pins the pages under [@user_ptr, @user_ptr + @size) (any alignment) until
 * the object is freed, and makes them a key. The memory stays mapped where
 * it is; there is no mmap offset. The pinned pages are charged to the
 * caller's RLIMIT_MEMLOCK (VmPin in /proc/PID/status) until then, as RDMA
 * does; CAP_IPC_LOCK lifts the limit.
 *
 * Errors: %EINVAL for unknown flags, nonzero @reserved or @size 0;
 * %E2BIG when the pages the range touches exceed 2 GiB; %EMFILE as for
 * DRM_NNP_BO_CREATE; %ENOMEM when the pages would take the caller past
 * RLIMIT_MEMLOCK, or the host has no memory; %EFAULT if the range is not
 * mapped (writable, unless READ_ONLY) in the caller; %ENOSPC when the
 * device has no free key.
 */
struct drm_nnp_bo_userptr {
	/** @user_ptr: in: start of the range. */
	__u64 user_ptr;
	/** @size: in: bytes. */
	__u64 size;
	/** @flags: in: 0 or DRM_NNP_BO_READ_ONLY. */
	__u32 flags;
	/** @handle: out: GEM handle. */
	__u32 handle;
	/** @key: out: memory key for this file's queue commands. */
	__u32 key;
	/** @reserved: must be zero. */
	__u32 reserved;
};

/**
 * struct drm_nnp_bo_import - make a dma-buf a memory object (since 1.13)
 *
 * Attaches the dma-buf @fd of an exporter nnp takes (udmabuf, the system
 * dma-buf heap, an object of this or another nnp device exported with
 * DRM_IOCTL_PRIME_HANDLE_TO_FD) and makes the pages it maps a key, as for
 * host memory. The object holds the dma-buf until closed; it has no mmap
 * offset (map the dma-buf itself). Its key counts against this file's
 * keys; the memory stays charged to whoever made it. When the exporter
 * takes the memory back (an nnp device does at unbind and reset), the key
 * is unregistered once the commands using it have finished, and later
 * commands naming it fail as for an unknown key.
 * DRM_IOCTL_PRIME_FD_TO_HANDLE cannot do this: it gives no key.
 *
 * Errors: %EINVAL for unknown flags, an @fd that is not a dma-buf, or a
 * dma-buf whose mapping is not in whole pages; %EBADF for an @fd not open;
 * %EOPNOTSUPP for a dma-buf of another exporter;
 * %E2BIG for a dma-buf over 2 GiB; %EMFILE as for DRM_NNP_BO_CREATE;
 * %ENODEV when the exporter's device is gone; %ENOSPC when the device has
 * no free key; %ENOMEM when the host has no memory.
 */
struct drm_nnp_bo_import {
	/** @fd: in: the dma-buf. */
	__s32 fd;
	/** @flags: in: 0 or DRM_NNP_BO_READ_ONLY. */
	__u32 flags;
	/** @size: out: bytes, the dma-buf's size. */
	__u64 size;
	/** @handle: out: GEM handle. */
	__u32 handle;
	/** @key: out: memory key for this file's queue commands. */
	__u32 key;
};

/**
 * struct drm_nnp_queue_create - create a DMA queue owned by this file
 *
 * The submission ring (@depth 64-byte commands) starts at offset 0 of the
 * ring mapping and the completion ring (@depth 16-byte entries) at
 * @cq_offset; both are mapped with mmap() at @ring_mmap_offset for
 * @ring_size bytes. The queue's doorbell page (see docs/hw-interface.md) is
 * mapped at @doorbell_mmap_offset for 4096 bytes. Only this file can map
 * either. Commands, completions and the doorbell protocol are those of the
 * hardware interface.
 *
 * Since 1.7, with %DRM_NNP_QUEUE_SHADOW_DOORBELL in @flags, on a device
 * of hardware interface 1.11 or later, @shadow_offset is the offset in
 * the ring mapping of the queue's shadow doorbell (struct
 * nnp_hw_queue_shadow of nnp_hw.h): write the SQ tail there, and the
 * SQ_TAIL doorbell only when its event index says the device stopped
 * looking (docs/hw-interface.md); the device then reads the tail from
 * there, so a queue that asked for one must write it. 0: the queue has
 * none (not asked for, or an older device).
 *
 * Errors: %EINVAL for @depth not a power of two in 2..32768, an unknown
 * flag, nonzero @qid, @cq_offset, @shadow_offset or @pad; %EBUSY when every
 * hardware queue is taken; %ENOMEM when the host has no contiguous memory
 * for the rings (2.5 MiB at 32768, a page more with a shadow doorbell).
 */
#define DRM_NNP_QUEUE_SHADOW_DOORBELL	(1u << 0)	/* since 1.7 */

struct drm_nnp_queue_create {
	/** @depth: in: ring entries. */
	__u32 depth;
	/** @flags: in: %DRM_NNP_QUEUE_SHADOW_DOORBELL or 0. */
	__u32 flags;
	/** @qid: out: queue id. */
	__u32 qid;
	/** @cq_offset: out: offset of the completion ring in the mapping. */
	__u32 cq_offset;
	/** @ring_mmap_offset: out: mmap() offset of the rings. */
	__u64 ring_mmap_offset;
	/** @doorbell_mmap_offset: out: mmap() offset of the doorbell page. */
	__u64 doorbell_mmap_offset;
	/** @ring_size: out: bytes to map at @ring_mmap_offset. */
	__u64 ring_size;
	/** @shadow_offset: out: the shadow doorbell's offset in the mapping, or 0 (since 1.7). */
	__u32 shadow_offset;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_nnp_queue_op - destroy or reset a queue of this file
 *
 * DESTROY waits for the command in flight and frees the queue. RESET
 * clears the error state of a queue stopped by a failed command, zeroes
 * the completion ring and starts both rings over at slot 0 with phase 1;
 * commands still queued are dropped.
 *
 * Errors: %ENOENT if @qid is not a queue of this file; %EINVAL for
 * nonzero @flags.
 */
struct drm_nnp_queue_op {
	/** @qid: in: queue id. */
	__u32 qid;
	/** @flags: in: none defined, must be zero. */
	__u32 flags;
};

/**
 * struct drm_nnp_queue_wait - sleep until a completion arrives
 *
 * Returns once completion ring slot @cq_index holds phase tag @phase,
 * sleeping on the queue's interrupt.
 *
 * Errors: %ETIMEDOUT when @timeout_ns passes first (0: check once);
 * %EINTR when a signal arrives; %EIO when the queue stopped on a failed
 * command before that slot completed; %ENOENT for a @qid not of this
 * file; %EINVAL for @cq_index past the depth, @phase > 1, negative
 * @timeout_ns or nonzero @flags.
 */
struct drm_nnp_queue_wait {
	/** @qid: in: queue id. */
	__u32 qid;
	/** @flags: in: none defined, must be zero. */
	__u32 flags;
	/** @cq_index: in: completion ring slot. */
	__u32 cq_index;
	/** @phase: in: phase tag (0 or 1) the slot will carry when done. */
	__u32 phase;
	/** @timeout_ns: in: longest wait, relative, in nanoseconds. */
	__s64 timeout_ns;
};

/* Bytes of struct drm_nnp_comm_create's @name, its NUL included. */
#define DRM_NNP_COMM_NAME_MAX		32

/**
 * struct drm_nnp_comm_create - make this chip one rank of a communicator
 *
 * Collectives on the communicator run around a ring of the ranks' chips:
 * @ring points to @nranks __u32 words, the rank at each ring position
 * (0: the ring follows rank order). This chip sends to the next position
 * through port @send_port and receives from the previous one on port
 * @recv_port. Every rank of one communicator passes the same @ring and
 * @epoch: the job's random 64-bit secret from its rendezvous, which names
 * the communicator on the links (the device takes a packet only for the
 * communicator its epoch names, from the port it expects). A communicator
 * made again after a failure needs a new epoch. The id returned is named
 * in the collective commands of this file's queues.
 *
 * Each wait of the communicator's commands for a peer (a packet, or room
 * at the far end) lasts at most @timeout_ms, then the command fails with
 * PEER_TIMEOUT: 0 is the device's default (2 s, and what a caller that
 * predates the field gets), %DRM_NNP_COMM_TIMEOUT_NEVER no limit. A peer
 * that is late is not dead: a link that goes down or a rank that fails
 * ends the command at once whatever the timeout.
 *
 * @name (since 1.9) names the communicator in the file's fdinfo, where
 * anyone who may read it (nnptool ps) sees it: so only letters, digits,
 * '.', '-' and '_', NUL-terminated within %DRM_NNP_COMM_NAME_MAX bytes;
 * all zeros for none. A caller built before 1.9 passes a shorter struct,
 * which the kernel extends with zeros: no name.
 *
 * With %DRM_NNP_COMM_CREATE_TRANSIT (since 1.12) this chip is none of the
 * ranks but a chip their packets cross, where two ranks' chips share no
 * link: what comes in on @send_port goes out on @recv_port and the other
 * way round (one hop of the ranks' ring), and routed messages go on by
 * the routes DRM_IOCTL_NNP_COMM_ROUTES gives it. @rank is 0, @ring 0,
 * @nranks at least 2 and the two ports differ. It counts against the
 * file's communicators as any other; its id names it to COMM_ROUTES,
 * COMM_STATUS and COMM_DESTROY only, and a queue command naming it fails
 * NOT_FOUND. A link of its pair going down fails it, and the ranks beyond
 * hear of it.
 *
 * Errors: %EINVAL for @rank >= @nranks, @nranks 0, a port past the
 * device's, an unknown flag, nonzero @pad, a @ring that is not a
 * permutation of the ranks, a @name with any other byte or no NUL, and
 * for a transit a @rank, a @ring, fewer than 2 ranks or one port twice;
 * %EOPNOTSUPP for a transit on a device older than hardware interface
 * 1.22, and for a nonzero @timeout_ms on one older than 1.4;
 * %EFAULT if @ring cannot be read; %ENOSPC when the device has no free
 * communicator; %EBUSY when a communicator on the device already has
 * @epoch; %ENOMEM when the kernel has no memory.
 */
struct drm_nnp_comm_create {
	/** @nranks: in: ranks in the communicator. */
	__u32 nranks;
	/** @rank: in: this chip's rank. */
	__u32 rank;
	/** @send_port: in: port towards the next ring position. */
	__u32 send_port;
	/** @recv_port: in: port from the previous ring position. */
	__u32 recv_port;
	/** @flags: in: since 1.12, %DRM_NNP_COMM_CREATE_TRANSIT or 0. */
	__u32 flags;
	/** @comm: out: communicator id. */
	__u32 comm;
	/** @epoch: in: the job's secret, the same on every rank. */
	__u64 epoch;
	/** @ring: in: user pointer to the ring order, or 0 for rank order. */
	__u64 ring;
	/** @timeout_ms: in: longest wait for a peer, 0: the default. */
	__u32 timeout_ms;
	/** @pad: in: must be zero. */
	__u32 pad;
	/** @name: in, since 1.9: the communicator's name, or all zeros. */
	char name[DRM_NNP_COMM_NAME_MAX];
};

#define DRM_NNP_COMM_TIMEOUT_NEVER	0xffffffffu
/* Since 1.12: a chip the ranks' packets cross, not a rank (see above). */
#define DRM_NNP_COMM_CREATE_TRANSIT	(1u << 0)

/**
 * struct drm_nnp_comm_destroy - forget a communicator of this file
 *
 * Without flags a command of the communicator in flight runs on to its
 * end. With %DRM_NNP_COMM_DESTROY_ABORT (NCCL's ncclCommAbort) such a
 * command ends ABORTED at its next wait, and passes the abort down the
 * ring to the ranks waiting on it; a caller blocked on its stream returns.
 *
 * Errors: %ENOENT if @comm is not this file's; %EINVAL for an unknown
 * flag; %EOPNOTSUPP for %DRM_NNP_COMM_DESTROY_ABORT on a device older
 * than hardware interface 1.4 (nothing is destroyed then).
 */
struct drm_nnp_comm_destroy {
	/** @comm: in: communicator id. */
	__u32 comm;
	/** @flags: in: 0 or %DRM_NNP_COMM_DESTROY_ABORT (since 1.1). */
	__u32 flags;
};

#define DRM_NNP_COMM_DESTROY_ABORT	(1u << 0)	/* since 1.1 */

/**
 * struct drm_nnp_comm_status - has a command of the communicator failed?
 *
 * Since 1.1.
 * For a watchdog thread polling a communicator while others wait on its
 * streams (NCCL's ncclCommGetAsyncError): @status is the device status of
 * the first of its collectives or messages that failed, 0 if none (a peer
 * timing out, a link going down, an abort from another rank: 0x14, 0x13,
 * 0x15, see docs/hw-interface.md).
 *
 * Errors: %ENOENT if @comm is not this file's; %EINVAL for nonzero
 * @flags; %EOPNOTSUPP on a device older than hardware interface 1.4.
 */
struct drm_nnp_comm_status {
	/** @comm: in: communicator id. */
	__u32 comm;
	/** @flags: in: none defined, must be zero. */
	__u32 flags;
	/** @status: out: the first failure's device status, or 0. */
	__u32 status;
	/** @pad: in: must be zero. */
	__u32 pad;
};

/**
 * struct drm_nnp_ring_dim - one ring dimension of a communicator's fabric
 *
 * The chips along it (@n; 0: no such dimension), this chip's position
 * @pos on it, and @pairs (1 or 2) port pairs: pair k sends to position
 * @pos + 1 through @next_port[k] and receives from @pos - 1 on
 * @prev_port[k]. Ports of a pair past @pairs are not read.
 */
struct drm_nnp_ring_dim {
	/** @n: in: chips along this dimension, 0: none. */
	__u32 n;
	/** @pos: in: this chip's position, below @n. */
	__u32 pos;
	/** @pairs: in: port pairs along it, 1 or 2 when @n > 0. */
	__u32 pairs;
	/** @next_port: in: per pair, the port towards @pos + 1. */
	__u32 next_port[2];
	/** @prev_port: in: per pair, the port from @pos - 1. */
	__u32 prev_port[2];
	/** @pad: in: must be zero. */
	__u32 pad;
};

/* Allreduce algorithms of struct drm_nnp_comm_topology (since 1.4). */
#define DRM_NNP_ALGO_AUTO		0	/* the device picks by size */
#define DRM_NNP_ALGO_RING		1	/* the communicator's one ring */
#define DRM_NNP_ALGO_BIDIR		2	/* dim[0]'s first pair both ways */
#define DRM_NNP_ALGO_RINGS		3	/* every pair of dim[0] both ways */
#define DRM_NNP_ALGO_TORUS		4	/* along dim[0], then dim[1] */

/**
 * struct drm_nnp_comm_topology - the fabric a communicator's allreduces run on
 *
 * Since 1.4. After DRM_IOCTL_NNP_COMM_CREATE, every rank gives its
 * communicator the same fabric, as this chip sees it, and the same
 * allreduce algorithm (docs/architecture.md, "Allreduce algorithms"):
 * a ring of @dim[0].n = nranks chips, or with @dim[1].n a @dim[0].n x
 * @dim[1].n torus (product nranks). Without it, or with
 * %DRM_NNP_ALGO_RING, allreduce runs the communicator's one ring; other
 * collectives always do. It may be given again, between collectives.
 *
 * Errors: %ENOENT if @comm is not this file's; %EINVAL for nonzero @flags
 * or pad, an unknown @algo, @pairs not 1 or 2, a position not below @n, a
 * port past the device's, @dim[1] without @dim[0], or sizes that do not
 * make nranks (the device refuses those); %EOPNOTSUPP on a device older
 * than hardware interface 1.7; %ENOMEM when the kernel has no memory.
 */
struct drm_nnp_comm_topology {
	/** @comm: in: communicator id. */
	__u32 comm;
	/** @algo: in: %DRM_NNP_ALGO_*. */
	__u32 algo;
	/** @flags: in: none defined, must be zero. */
	__u32 flags;
	/** @pad: in: must be zero. */
	__u32 pad;
	/** @dim: in: the ring dimensions, dim[0] first. */
	struct drm_nnp_ring_dim dim[2];
};

/* A rank of struct drm_nnp_comm_routes this chip has no route to. */
#define DRM_NNP_ROUTE_NONE		0xff

/**
 * struct drm_nnp_comm_routes - where routed messages go from this chip
 *
 * Since 1.8. After DRM_IOCTL_NNP_COMM_CREATE, each rank gives its
 * communicator the port of its chip towards every rank: @routes points
 * at @nranks bytes, byte r the port towards rank r (the first hop of a
 * shortest path to it), %DRM_NNP_ROUTE_NONE for the caller's own rank and
 * for ranks its chip cannot reach. The device then forwards the
 * communicator's routed messages (queue commands SEND and RECV naming a
 * peer rank, docs/hw-interface.md) for other ranks on these routes, and
 * sends its own on them. It may be given again, between messages, on
 * every rank.
 *
 * Errors: %ENOENT if @comm is not this file's; %EINVAL for nonzero @flags
 * or pad, @nranks 0 or past the device's limit, a port past the device's,
 * or (the device refuses these) @nranks not the communicator's or a port
 * named for the caller's own rank; %EFAULT if @routes is unreadable;
 * %EOPNOTSUPP on a device older than hardware interface 1.12; %ENOMEM
 * when the kernel has no memory.
 */
struct drm_nnp_comm_routes {
	/** @comm: in: communicator id. */
	__u32 comm;
	/** @nranks: in: bytes at @routes, the communicator's size. */
	__u32 nranks;
	/** @flags: in: none defined, must be zero. */
	__u32 flags;
	/** @pad: in: must be zero. */
	__u32 pad;
	/** @routes: in: user pointer to @nranks bytes, a port each. */
	__u64 routes;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_NNP_ACCEL_H_ */
