/* SPDX-License-Identifier: MIT */
/* libnnp's stream, shared by stream.c and the tracer (trace.c). */
#ifndef NNP_STREAM_H
#define NNP_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "spin.h"

struct nnp_stream_trace;

struct nnp_stream {
	nnp_device_t *dev;
	uint32_t qid;
	uint32_t depth;
	struct nnp_hw_queue_cmd *sq;
	const volatile struct nnp_hw_cqe *cq;
	volatile uint32_t *db;
	/* In the ring mapping, on hardware 1.11; NULL: every tail rings db. */
	volatile struct nnp_hw_queue_shadow *shadow;
	void *ring;
	size_t ring_len;
	uint32_t tail;		/* next submission slot */
	uint32_t head;		/* next completion slot */
	uint16_t phase;		/* phase tag a fresh completion at head has */
	uint64_t submitted;	/* commands submitted; the next one's seq */
	uint64_t completed;	/* completions consumed */
	uint64_t acked;		/* completions consumed when CQ_HEAD was written */
	struct nnp_spin spin;	/* how a wait polls the ring before sleeping */
	bool failed;
	struct nnp_stream_error err;
	/* err.what when the device said more than its status (a MISMATCH). */
	char what[320];
	/* NNP_TRACE_FILE: its operations in flight (trace.c), else NULL. */
	struct nnp_stream_trace *trace;
	/* With a trace: when the wait that is reaping began. */
	int64_t wait_ns;
	/* By ring slot, its RECV from any source; NULL until the first. */
	struct nnp_any_source *any;
};

/* Where a RECV from any source (nnp_recv_any()) says whence it took. */
struct nnp_any_source {
	int *source;			/* NULL: no such RECV in the slot */
	int16_t rank_at[NNP_MAX_PORTS];	/* the rank at each port's far end */
};

/*
 * Ready @s for RECVs from any source: NNP_ERROR_OUT_OF_MEMORY if it could
 * not be. Then, right after one is submitted, nnp_stream_note_source()
 * says where its completion's source goes: *@source (-1 until then, and
 * if it fails), the rank at a port by @rank_at.
 */
nnp_result_t nnp_stream_expect_sources(nnp_stream_t *s);
void nnp_stream_note_source(nnp_stream_t *s, int *source,
			    const int16_t *rank_at);

/*
 * Whether the tail moved from @old to @new passes @event, where the device
 * stopped looking at the queue (struct nnp_hw_queue_shadow): only then
 * must the doorbell be written. Indexes of a ring of @depth, a power of
 * two, with at most depth - 1 commands outstanding.
 */
static inline bool nnp_shadow_needs_doorbell(uint32_t event, uint32_t new,
					     uint32_t old, uint32_t depth)
{
	return ((new - event - 1) & (depth - 1)) < ((new - old) & (depth - 1));
}

#endif /* NNP_STREAM_H */
