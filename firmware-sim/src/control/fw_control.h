/* SPDX-License-Identifier: MIT */
/*
 * The firmware simulator's control plane, the top layer: the core's
 * registers and lifecycle (fw_core.c), the admin queue (fw_admin.c),
 * contexts and keys (fw_ctx.c), communicators (fw_comm.c), user queues
 * (fw_queue.c), telemetry (fw_thermal.c) and faults (fw_fault.c). It
 * answers the hooks of the layers below (fw_core.c registers them).
 */
#ifndef NNP_FW_CONTROL_H
#define NNP_FW_CONTROL_H

#include "fw_algorithms.h"

/* HW_VERSION as this device presents it: 1.10 without shadow doorbells. */
uint32_t nnp_fw_hw_version(const struct nnp_fw *fw);

/* Latch interrupt causes @bits; returns true if vector 0 must fire. */
bool nnp_fw_int_latch_locked(struct nnp_fw *fw, uint32_t bits);

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

/* Communicators (fw_comm.c) */
uint16_t nnp_fw_comm_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_comm_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_comm_topology(struct nnp_fw *fw,
			      const struct nnp_hw_admin_cmd *cmd);
/* COMM_ROUTES (v1.12): where routed messages go from this chip. */
uint16_t nnp_fw_comm_routes(struct nnp_fw *fw,
			    const struct nnp_hw_admin_cmd *cmd);
uint16_t nnp_fw_comm_status(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			    uint32_t *result);
/*
 * Link command @op of communicator @comm (@epoch) ended with @status,
 * which COMM_STATE counts, and its chunks are no longer checked against
 * its call: true if that is a failure the communicator had not had, to
 * be sent on as an abort (it is gone, or this is its first).
 */
bool nnp_fw_comm_ended(struct nnp_fw *fw, uint32_t comm, uint64_t epoch,
		       const struct nnp_fw_op *op, uint16_t status);
/*
 * Communicator @comm (@epoch), failed here by a command that sends no
 * abort of its own (a SEND or RECV): a worker sends its abort to the
 * peers, as for one that came in, so that none waits for its timeout.
 */
void nnp_fw_comm_pass_abort(struct nnp_fw *fw, uint32_t comm, uint64_t epoch);
/*
 * Communicator @m failed on this chip, with fw->lock held: an abort of it
 * came in (@status ABORTED), or its packets were dropped for want of room
 * (NO_RESOURCES). @status is what COMM_STATUS reports, its command in
 * flight ends ABORTED, and a worker sends the abort on to its peers, once.
 * True if a worker must run for it.
 */
bool nnp_fw_comm_failed_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
			       uint16_t status, uint32_t port);
/*
 * The peer of @m at @port left it after @calls collectives (v1.20), with
 * fw->lock held: its collectives numbered past those, and its messages
 * by that port once nothing is left for them, in flight now or started
 * later, end PEER_LEFT (and so fail it, as any failure does). True if a
 * worker must run for it.
 */
bool nnp_fw_comm_left_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
			     uint32_t calls, uint32_t port);
/*
 * How @op (a GROUP's member too) must end at its next wait for a leave of
 * its communicator, with fw->lock held; 0 if it may go on.
 */
uint16_t nnp_fw_comm_torn_locked(struct nnp_fw *fw, const struct nnp_fw_op *op);
/*
 * @op of @ctx, just made its queue's command in flight, with fw->lock
 * held: a failure or a leave of its communicator that came after it
 * started looked for it on the queues and missed it; it learns of it
 * here, as it would have there.
 */
void nnp_fw_comm_op_queued_locked(struct nnp_fw *fw, uint32_t ctx,
				  struct nnp_fw_op *op);
/*
 * Rank @rank of @m left it (v1.21), with fw->lock held: this chip's routed
 * messages with it, in flight now or started later, end PEER_LEFT once
 * they wait (all it sent here came before its leave). True if a worker
 * must run for it.
 */
bool nnp_fw_comm_rank_left_locked(struct nnp_fw *fw, struct nnp_fw_comm *m,
				  uint32_t rank);
/*
 * Events (fw_events.c, v1.17). A communicator's first failure, with
 * fw->lock held (@port it came from, or NNP_HW_EVENT_NO_PORT); a link's
 * new NNP_PORT_* @state; all gone at a reset. A worker, holding no lock,
 * raises NNP_INT_FW_EVENT for those queued since it last did.
 */
void nnp_fw_event_comm_failed_locked(struct nnp_fw *fw,
				     const struct nnp_fw_comm *m,
				     uint16_t status, uint32_t port);
void nnp_fw_event_link(struct nnp_fw *fw, uint32_t port, uint32_t state);
void nnp_fw_events_clear_locked(struct nnp_fw *fw);
void nnp_fw_events_notify(struct nnp_fw *fw);
/* COMM_STATE (fw_comm_state.c, v1.18). */
uint16_t nnp_fw_comm_state(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			   uint32_t *result);
uint16_t nnp_fw_get_events(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			   uint32_t *result);
/* Send on the aborts nnp_fw_comm_failed_locked() took in. */
void nnp_fw_comms_pass_aborts(struct nnp_fw *fw);
/* Forget communicators of @ctx (0: all) and what the links hold for them. */
void nnp_fw_comms_clear(struct nnp_fw *fw, uint32_t ctx);
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
 * (in-process peers, remembered for nnp_fw_faults_revive(); a remote
 * one's host tells its peer).
 */
void nnp_fw_links_take_down(struct nnp_fw *fw);
/*
 * Booted after a reset, no lock held: the links taken down come back, and
 * the remote ones where nothing else holds them down.
 */
void nnp_fw_faults_revive(struct nnp_fw *fw);

#endif /* NNP_FW_CONTROL_H */
