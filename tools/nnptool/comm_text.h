/* SPDX-License-Identifier: MIT */
/* A communicator's state as nnptool prints it (comm_text.c). */
#ifndef NNPTOOL_COMM_TEXT_H
#define NNPTOOL_COMM_TEXT_H

#include <stddef.h>

#include <nnp/nnp.h>

struct json_object;

/* "allreduce f32 max x1024 root 1", "send 4096 bytes peer 3", or "-". */
void comm_op_text(const struct nnp_comm_state *s, char *buf, size_t len);
/* "rank 1 on port 1 for 2.5 s", "port 0 for 1.0 s", or "-". */
void comm_wait_text(const struct nnp_comm_state *s, char *buf, size_t len);
/* Its "known" and, if known, the device's fields, into object @o. */
void comm_state_json(struct json_object *o, const struct nnp_comm_state *s);

#endif /* NNPTOOL_COMM_TEXT_H */
