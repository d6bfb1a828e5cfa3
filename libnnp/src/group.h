/* SPDX-License-Identifier: MIT */
/*
 * Group calls (nnp_group_start/nnp_group_end, group.c): the operations a
 * thread issues inside a group are held, then launched together.
 */
#ifndef NNP_GROUP_H
#define NNP_GROUP_H

#include <stdbool.h>

#include "comm.h"
#include "stream.h"
#include "trace.h"

/*
 * Launch operation @cmd of @comm on @s (@op as a trace names it, NULL for
 * none; @p2p for a SEND or RECV): at once, or if the calling thread has a
 * group open, at its nnp_group_end(). The last error says why it could
 * not.
 */
nnp_result_t nnp_op_submit(nnp_stream_t *s, nnp_comm_t *comm,
			   const struct nnp_trace_op *op,
			   struct nnp_hw_queue_cmd *cmd, bool p2p);

/*
 * An operation's call ended with @res: a refusal inside a group is the
 * group's error too (nnp_group_end() then launches nothing). Returns @res.
 */
nnp_result_t nnp_group_refuse(nnp_result_t res);
/* Whether the calling thread has a group open. */
bool nnp_group_open(void);

/*
 * @comm or @s (either may be NULL) is going away: every open group, on
 * any thread, drops its operations on them and will fail.
 */
void nnp_group_forget(const nnp_comm_t *comm, const nnp_stream_t *s);

#endif /* NNP_GROUP_H */
