/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * nnp accelerator: the layout of nnp.ko's device coredump.
 *
 * Before its watchdog resets a device (reasons heartbeat, job-timeout,
 * admin and fw-halted; not a reset a user, the PCI core or a sleep asks
 * for), nnp.ko takes the device's state into a devcoredump:
 * /sys/class/devcoredump/devcdN/data, readable by root only, whose
 * failing_device link names the PCI device. The kernel keeps one dump per
 * device until it is cleared (any write to data) or 5 minutes pass; a
 * watchdog reset meanwhile makes no second one. `nnptool coredump`
 * decodes it.
 *
 * The dump holds states, pointers (memory keys and offsets) and sizes,
 * never data: no byte of device or host memory, and a FILL command's
 * value (its fill byte) is written 0. It is at most
 * NNP_COREDUMP_MAX_SIZE bytes.
 *
 * Layout, in the byte order of the machine that made it: a struct
 * nnp_coredump_header, then num_queues struct nnp_coredump_queue, then
 * num_comms struct nnp_coredump_comm, then num_ports struct
 * nnp_coredump_port, then (version 2 on) num_log struct
 * nnp_coredump_log. The header gives each record's size, so that a
 * decoder can step over fields a later version appends; a version only
 * ever appends, the header too: version 1's is
 * NNP_COREDUMP_HEADER_SIZE_V1 bytes, and ends before log_size.
 */
#ifndef _UAPI_NNP_COREDUMP_H_
#define _UAPI_NNP_COREDUMP_H_

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define NNP_COREDUMP_MAGIC		"NNPDUMP"	/* and its NUL: 8 bytes */
#define NNP_COREDUMP_VERSION		2
/* A field with no value: no queue, not asked. */
#define NNP_COREDUMP_NONE		0xffffffffu

/*
 * Header flags. FW_ASKED: the firmware still answered its admin queue
 * (a job timeout), so the communicators' status and the ports are its
 * answers; without it they were not asked (status NNP_COREDUMP_NONE, no
 * ports).
 */
#define NNP_COREDUMP_FW_ASKED		(1u << 0)

struct nnp_coredump_header {
	char magic[8];		/* NNP_COREDUMP_MAGIC */
	__u32 version;		/* NNP_COREDUMP_VERSION */
	__u32 header_size;	/* sizeof(struct nnp_coredump_header) */
	__u32 queue_size;	/* sizeof(struct nnp_coredump_queue) */
	__u32 comm_size;	/* sizeof(struct nnp_coredump_comm) */
	__u32 port_size;	/* sizeof(struct nnp_coredump_port) */
	__u32 num_queues;
	__u32 num_comms;
	__u32 num_ports;
	__u32 reason;		/* DRM_NNP_RESET_* of the reset that follows */
	__u32 reset_count;	/* the number that reset takes */
	/* job-timeout: the queue that made no progress; else _NONE */
	__u32 stuck_qid;
	__u32 flags;		/* NNP_COREDUMP_* flags */
	__u64 time_ns;		/* CLOCK_REALTIME of the capture */
	__u32 hw_version;	/* as IDENTIFY reported them */
	__u32 fw_version;
	__u32 chip_id;
	__u32 fw_status;	/* registers FW_STATUS, FW_ERROR, FW_HEARTBEAT */
	__u32 fw_error;
	__u32 fw_heartbeat;
	/* How long the heartbeat had not moved, in ms. */
	__u32 heartbeat_idle_ms;
	__u32 aq_status;	/* register AQ_STATUS */
	__u32 aq_broken;	/* 1: the driver gave up on the admin queue */
	__u32 pad;
	char serial[16];	/* NUL-terminated */
	char fw_build[32];	/* NUL-terminated */
	/* Version 2: */
	__u32 log_size;		/* sizeof(struct nnp_coredump_log) */
	__u32 num_log;
	/*
	 * The messages the firmware logged since the device came up (its
	 * FW_LOG_SEQ, hw 1.19; 0 before): the log holds the newest ones.
	 */
	__u32 log_seq;
	__u32 pad2;
};

#define NNP_COREDUMP_HEADER_SIZE_V1	152

/* Where a command stood in its queue at the capture. */
#define NNP_COREDUMP_CMD_DONE		0	/* before the SQ head */
#define NNP_COREDUMP_CMD_RUNNING	1	/* at the SQ head */
#define NNP_COREDUMP_CMD_QUEUED		2	/* after it, before the tail */

/* A command of a queue's ring, as struct nnp_hw_queue_cmd names it. */
struct nnp_coredump_cmd {
	__u32 slot;		/* its index in the ring */
	__u32 state;		/* NNP_COREDUMP_CMD_* */
	__u8 opcode;		/* NNP_CMD_* */
	__u8 flags;
	__u16 cid;
	__u32 src_key;
	__u32 dst_key;
	__u32 pad;
	__u64 src_off;
	__u64 dst_off;
	__u64 len;
	__u64 value;		/* 0 for FILL */
};

/*
 * The commands kept of a queue: up to 3 done before the SQ head, the one
 * at the head, and up to 4 queued after it, up to the tail the device
 * works to (shadow_tail if the queue has a shadow doorbell, else sq_tail).
 */
#define NNP_COREDUMP_CMDS		8

struct nnp_coredump_queue {
	__u32 qid;
	__u32 ctx;		/* 0: destroyed, its owner maybe gone */
	__u32 pid;		/* the owner's process (0: unknown) */
	__u32 depth;
	__u32 sq_head;		/* doorbell registers at the capture */
	__u32 sq_tail;
	__u32 cq_head;
	__u32 status;		/* NNP_QUEUE_STATUS_* */
	/*
	 * The shadow doorbell's words (hw 1.11), _NONE without one: the
	 * owner may queue commands up to shadow_tail without writing the
	 * doorbell's SQ tail, and the device takes them.
	 */
	__u32 shadow_tail;
	__u32 shadow_event;
	/* How long the SQ head had not moved with work queued, in ms. */
	__u32 idle_ms;
	__u32 num_cmds;		/* of cmds[], in ring order */
	char task[16];		/* the owner's command name, NUL-terminated */
	struct nnp_coredump_cmd cmds[NNP_COREDUMP_CMDS];
};

struct nnp_coredump_comm {
	__u32 id;
	__u32 ctx;
	__u32 rank;
	__u32 nranks;
	/* Its first failed command's NNP_STATUS_* (0: none), or _NONE. */
	__u32 status;
	__u32 pid;		/* its maker's process (0: unknown) */
	char name[32];		/* as made, NUL-padded; may be empty */
};

struct nnp_coredump_port {
	__u32 port;
	__u32 state;		/* NNP_PORT_* bits */
	__u32 peer;		/* NNP_PORT_PEER(chip, port), if wired */
	__u32 pad;
	__u64 tx_bytes;
	__u64 rx_bytes;
	__u64 tx_packets;
	__u64 rx_packets;
	__u64 errors;
};

/*
 * Version 2: a message of the firmware's log (hw 1.19), oldest first,
 * each whole: read from the device without its help, so a dead
 * firmware's too. Its text is the firmware's, NUL-terminated.
 */
#define NNP_COREDUMP_LOG_GUEST_ERROR	1	/* the host did something wrong */
#define NNP_COREDUMP_LOG_WARNING	2	/* a link or a peer did */

struct nnp_coredump_log {
	__u64 time_ns;		/* the device's clock when it was logged */
	__u32 seq;		/* its number, from the device's start */
	__u16 kind;		/* NNP_COREDUMP_LOG_* */
	__u16 pad;
	char msg[112];		/* NUL-terminated */
};

/* 64 queues, 64 communicators, 16 ports and 32 log messages at most. */
#define NNP_COREDUMP_MAX_SIZE \
	(sizeof(struct nnp_coredump_header) + \
	 64 * sizeof(struct nnp_coredump_queue) + \
	 64 * sizeof(struct nnp_coredump_comm) + \
	 16 * sizeof(struct nnp_coredump_port) + \
	 32 * sizeof(struct nnp_coredump_log))

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_NNP_COREDUMP_H_ */
