// SPDX-License-Identifier: MIT
/*
 * libnnp streams: one device queue each. Commands go straight into the
 * mapped submission ring and the doorbell page; completions are read from
 * the mapped completion ring by their phase tag. The only system call is
 * the wait ioctl, when a bounded spin on the ring (NNP_SPIN_US) has not
 * seen the completion. Each doorbell write is an exit to the device
 * model, so CQ_HEAD is written only once half the ring has been consumed:
 * the device never runs out of completion slots while we wait; and on
 * hardware 1.11 the SQ tail goes to the queue's shadow doorbell in the
 * ring mapping, with a doorbell write only when the device has stopped
 * looking at the queue.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <xf86drm.h>
#include <nnp_accel.h>
#include "nnp_hw.h"

#include "group.h"
#include "internal.h"
#include "log.h"
#include "names.h"
#include "stream.h"
#include "trace.h"

#define STREAM_DEPTH		256
/*
 * Longest nnp_stream_destroy() waits for queued work before it destroys
 * the queue, which ends a command still in flight.
 */
#define STREAM_DESTROY_WAIT_NS	(60ll * 1000000000)
/*
 * nnp_stream_synchronize() and a full ring wait with no limit of their
 * own: the driver's watchdog and job timeout bound the device's work (a
 * reset ends the wait, DEVICE_LOST), and each wait of a collective for a
 * peer is bounded by its communicator's timeout (NNP_COLL_TIMEOUT_S).
 */
#define STREAM_WAIT_FOREVER	(-1)
/* The wait ioctl is called in slices so that a deadline is kept. */
#define WAIT_SLICE_NS		(1000ll * 1000000)

const char *nnp_status_text(uint16_t status)
{
	switch (status) {
	case NNP_STATUS_SUCCESS:
		return "success";
	case NNP_STATUS_INVALID_OPCODE:
		return "unknown opcode";
	case NNP_STATUS_INVALID_FIELD:
		return "invalid or reserved field set";
	case NNP_STATUS_DMA_ERROR:
		return "host memory unreachable by DMA";
	case NNP_STATUS_KEY_INVALID:
		return "memory key not valid for this process";
	case NNP_STATUS_OUT_OF_BOUNDS:
		return "access past the end of the memory";
	case NNP_STATUS_ACCESS_DENIED:
		return "memory is read-only to the device";
	case NNP_STATUS_NOT_FOUND:
		return "no such communicator";
	case NNP_STATUS_NO_RESOURCES:
		return "device out of resources";
	case NNP_STATUS_LINK_DOWN:
		return "an inter-chip link the collective needs is down";
	case NNP_STATUS_PEER_TIMEOUT:
		return "a peer chip did not answer in time";
	case NNP_STATUS_ABORTED:
		return "another rank's part of the collective failed";
	case NNP_STATUS_MISMATCH:
		return "the ranks called the collective differently";
	case NNP_STATUS_PEER_LEFT:
		return "a rank left the communicator (its process ended or destroyed it) "
		       "without its part of this collective or message";
	}
	return "device error";
}

nnp_result_t nnp_stream_create(nnp_device_t *dev, nnp_stream_t **stream)
{
	struct drm_nnp_queue_create qc = {
		.depth = STREAM_DEPTH, .flags = DRM_NNP_QUEUE_SHADOW_DOORBELL,
	};
	struct drm_nnp_queue_op qd = { 0 };
	nnp_stream_t *s;
	void *db;

	if (!dev || !stream)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_stream_create: no device or no stream");
	*stream = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for a stream");
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc)) {
		nnp_result_t r = errno == EBUSY ?
			nnp_fail(NNP_ERROR_BUSY, "%s: every queue is in use", dev->path) :
			nnp_ioctl_failed(dev, "creating a queue", errno);

		free(s);
		return r;
	}
	/* The doorbell is one of the driver's pages: PAGE_SIZE, ours too. */
	s->ring = mmap(NULL, qc.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       dev->fd, (off_t)qc.ring_mmap_offset);
	db = mmap(NULL, nnp_page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
		  (off_t)qc.doorbell_mmap_offset);
	if (s->ring == MAP_FAILED || db == MAP_FAILED) {
		nnp_result_t r = nnp_ioctl_failed(dev, "mapping a queue", errno);

		if (s->ring != MAP_FAILED)
			munmap(s->ring, qc.ring_size);
		if (db != MAP_FAILED)
			munmap(db, nnp_page_size());
		qd.qid = qc.qid;
		drmIoctl(dev->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &qd);
		free(s);
		return r;
	}
	s->dev = dev;
	s->qid = qc.qid;
	s->depth = qc.depth;
	s->ring_len = qc.ring_size;
	s->sq = s->ring;
	s->cq = (const volatile struct nnp_hw_cqe *)((char *)s->ring + qc.cq_offset);
	s->db = db;
	/* Hardware 1.11 with a 1.7 driver: the shadow doorbell (below). */
	if (qc.shadow_offset && qc.shadow_offset <= qc.ring_size - sizeof(*s->shadow))
		s->shadow = (volatile struct nnp_hw_queue_shadow *)
			((char *)s->ring + qc.shadow_offset);
	s->phase = NNP_CQE_PHASE;
	s->spin = nnp_spin_policy();
	nnp_log(NNP_LOG_INFO,
		"%s: stream on queue %u: %s doorbell; a wait polls %lld us, %lld of them without pause",
		dev->path, s->qid, s->shadow ? "shadow" : "MMIO",
		(long long)s->spin.poll_ns / 1000, (long long)s->spin.spin_ns / 1000);
	*stream = s;
	return NNP_SUCCESS;
}

/* A call as "allreduce of 1000 i32, sum" (", root 2" for a rooted one). */
static void call_text(char *buf, size_t len, unsigned int opcode, int dtype,
		      int op, unsigned int root, const char *count)
{
	bool rooted = opcode == NNP_CMD_BROADCAST || opcode == NNP_CMD_REDUCE ||
		      opcode == NNP_CMD_GATHER || opcode == NNP_CMD_SCATTER;
	bool reduces = opcode == NNP_CMD_ALLREDUCE || opcode == NNP_CMD_REDUCE ||
		       opcode == NNP_CMD_REDUCE_SCATTER;
	const char *redop = reduces ? nnp_redop_name(op) : NULL;

	snprintf(buf, len, "%s of %s %s%s%s", nnp_opcode_name(opcode), count,
		 nnp_dtype_name(dtype), redop ? ", " : "", redop ? redop : "");
	if (rooted)
		snprintf(buf + strlen(buf), len - strlen(buf), ", root %u", root);
}

/*
 * The text of a MISMATCH of length (v1.27): @came bytes from the rank in
 * @who, where @own, or a member of it if a GROUP, takes another length.
 */
static const char *length_text(nnp_stream_t *s, const struct nnp_hw_queue_cmd *own,
			       uint32_t came, uint32_t who)
{
	uint32_t rank = NNP_MISMATCH_WHO_RANK(who);
	char from[48], takes[64];

	if (rank == NNP_MISMATCH_RANK_UNKNOWN)
		snprintf(from, sizeof(from), "a peer in another process");
	else
		snprintf(from, sizeof(from), "rank %u", rank);
	if (own->opcode == NNP_CMD_RECV)
		snprintf(takes, sizeof(takes), "its receive takes %llu",
			 (unsigned long long)own->len);
	else
		snprintf(takes, sizeof(takes), "its %s takes another length",
			 own->opcode == NNP_CMD_GROUP ? "group" :
			 nnp_opcode_name(own->opcode));
	snprintf(s->what, sizeof(s->what),
		 "the ranks disagree on a message's length: %s sent this rank %s%u bytes, where %s",
		 from, came == UINT32_MAX ? "at least " : "", came, takes);
	return s->what;
}

/*
 * The text of MISMATCH completion @e: this rank's call, from its command
 * still in the ring, and the peer's, from the completion (nnp_hw.h).
 */
static const char *mismatch_text(nnp_stream_t *s, const volatile struct nnp_hw_cqe *e)
{
	const struct nnp_hw_queue_cmd *own =
		&s->sq[(e->sq_head + s->depth - 1) % s->depth];
	uint32_t call = e->result, who = e->rsvd;
	bool grouped = own->opcode == NNP_CMD_GROUP;
	char here[96], there[96], count[32];

	if (NNP_MISMATCH_WHO_FIELDS(who) & NNP_MISMATCH_LENGTH)
		return length_text(s, own, call, who);
	/* Which member of a GROUP failed is not known here, nor its count. */
	snprintf(count, sizeof(count), "%llu", (unsigned long long)own->len);
	if (grouped)
		snprintf(here, sizeof(here), "a collective of its group");
	else
		call_text(here, sizeof(here), own->opcode,
			  NNP_COLL_DTYPE(own->value), NNP_COLL_OP(own->value),
			  NNP_COLL_ROOT(own->value), count);
	call_text(there, sizeof(there), NNP_MISMATCH_CALL_OPCODE(call),
		  NNP_MISMATCH_CALL_DTYPE(call), NNP_MISMATCH_CALL_OP(call),
		  NNP_MISMATCH_CALL_ROOT(call),
		  NNP_MISMATCH_WHO_FIELDS(who) & NNP_MISMATCH_COUNT ?
		  "another count" : grouped ? "the same count" : count);
	snprintf(s->what, sizeof(s->what),
		 "the ranks called the collective differently: this rank %s, rank %u %s%s",
		 here, NNP_MISMATCH_WHO_RANK(who), there,
		 NNP_MISMATCH_WHO_FIELDS(who) & NNP_MISMATCH_GROUP ?
		 ", in a group holding other collectives of the communicator" : "");
	return s->what;
}

nnp_result_t nnp_stream_expect_sources(nnp_stream_t *s)
{
	if (!s->any)
		s->any = calloc(s->depth, sizeof(*s->any));
	return s->any ? NNP_SUCCESS :
			nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "nnp_recv_any: no memory");
}

void nnp_stream_note_source(nnp_stream_t *s, int *source,
			    const int16_t *rank_at)
{
	uint32_t back, slot = s->tail;

	*source = -1;
	/* The newest one: a trace puts timestamps after it (trace.c). */
	for (back = 1; back < s->depth; back++) {
		slot = (s->tail + s->depth - back) % s->depth;
		if (s->sq[slot].opcode == NNP_CMD_RECV &&
		    s->sq[slot].value & NNP_P2P_ANY)
			break;
	}
	s->any[slot].source = source;
	memcpy(s->any[slot].rank_at, rank_at, sizeof(s->any[slot].rank_at));
}

/*
 * The source completion @e's RECV from any source took from, if the
 * command was one (nnp_hw.h: a routed rank, or a port), into its caller's
 * int; -1 if it failed.
 */
static void take_source(nnp_stream_t *s, const volatile struct nnp_hw_cqe *e,
			uint16_t status)
{
	uint32_t slot = (e->sq_head + s->depth - 1) % s->depth;
	struct nnp_any_source *a = &s->any[slot];
	uint32_t from = e->result;

	if (!a->source || s->sq[slot].opcode != NNP_CMD_RECV ||
	    !(s->sq[slot].value & NNP_P2P_ANY))
		return;
	if (status)
		*a->source = -1;
	else if (from & NNP_P2P_FROM_ROUTED)
		*a->source = (int)(from & ~NNP_P2P_FROM_ROUTED);
	else
		*a->source = from < NNP_MAX_PORTS ? a->rank_at[from] : -1;
	a->source = NULL;
}

static bool cqe_arrived(const nnp_stream_t *s)
{
	return (s->cq[s->head].phase & NNP_CQE_PHASE) == s->phase;
}

/* Consume every completion that has arrived; true if any did. */
static bool reap(nnp_stream_t *s)
{
	bool any = false;

	while (cqe_arrived(s)) {
		uint16_t status;

		atomic_thread_fence(memory_order_acquire);
		status = s->cq[s->head].status;
		if (s->trace)
			nnp_trace_reaped(s, s->completed, status);
		if (s->any)
			take_source(s, &s->cq[s->head], status);
		if (status && !s->failed) {
			s->failed = true;
			s->err.seq = s->completed;
			s->err.status = status;
			s->err.what = status == NNP_STATUS_MISMATCH ?
				      mismatch_text(s, &s->cq[s->head]) :
				      nnp_status_text(status);
		}
		s->head = (s->head + 1) % s->depth;
		if (!s->head)
			s->phase ^= NNP_CQE_PHASE;
		s->completed++;
		any = true;
	}
	/*
	 * The device stops when its view of the CQ is full (depth - 1
	 * unread). Written at half the depth, the lag stays below that, so
	 * the completion a wait is for always has a slot.
	 */
	if (s->completed - s->acked >= s->depth / 2) {
		s->db[NNP_DB_CQ_HEAD / 4] = s->head;
		s->acked = s->completed;
	}
	return any;
}

/* The queue stopped without a completion to say why (its ring failed). */
static void note_stopped(nnp_stream_t *s)
{
	uint32_t err = s->db[NNP_DB_ERROR / 4];

	if (!s->failed && (s->db[NNP_DB_STATUS / 4] & NNP_QUEUE_STATUS_ERROR)) {
		s->failed = true;
		s->err.seq = s->completed;
		s->err.status = (uint16_t)err;
		s->err.what = nnp_status_text(s->err.status);
	}
}

int64_t nnp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Poll the ring for the next completion until @until, without pause for
 * the policy's spin_ns from @start, then giving the CPU up between polls
 * (spin.c); true if it came.
 */
static bool spin_until(const nnp_stream_t *s, int64_t start, int64_t until)
{
	int64_t now;

	do {
		if (cqe_arrived(s))
			return true;
		now = nnp_now_ns();
		if (now - start < s->spin.spin_ns)
			cpu_relax();
		else
			sched_yield();
	} while (now < until);
	return false;
}

/* Wait until @seq commands have completed; @timeout_ns < 0: no limit. */
static nnp_result_t wait_for(nnp_stream_t *s, uint64_t seq, int64_t timeout_ns)
{
	int64_t deadline = timeout_ns < 0 ? -1 : nnp_now_ns() + timeout_ns;
	int64_t spin_start = -1, spin_end = -1;

	if (s->trace)
		s->wait_ns = nnp_now_ns();

	for (;;) {
		struct drm_nnp_queue_wait w = { .qid = s->qid };
		int64_t left = WAIT_SLICE_NS;

		reap(s);
		if (s->failed && s->err.seq < seq)
			return NNP_ERROR_COMMAND_FAILED;
		if (s->completed >= seq)
			return NNP_SUCCESS;
		if (deadline >= 0) {
			left = deadline - nnp_now_ns();
			if (left <= 0)
				return NNP_ERROR_TIMEOUT;
			if (left > WAIT_SLICE_NS)
				left = WAIT_SLICE_NS;
		}
		/* What comes within poll_ns of the wait's start costs no sleep. */
		if (s->spin.poll_ns) {
			if (spin_end < 0) {
				spin_start = nnp_now_ns();
				spin_end = spin_start +
					   (left < s->spin.poll_ns ? left : s->spin.poll_ns);
			}
			if (nnp_now_ns() < spin_end && spin_until(s, spin_start, spin_end))
				continue;
		}
		w.cq_index = s->head;
		w.phase = s->phase;
		w.timeout_ns = left;
		if (drmIoctl(s->dev->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w) == 0)
			continue;
		switch (errno) {
		case ETIMEDOUT:
			continue;
		case EIO:
			reap(s);
			note_stopped(s);
			if (s->failed)
				return NNP_ERROR_COMMAND_FAILED;
			continue;
		default:
			return nnp_result_from_errno(errno);
		}
	}
}

/* What a wait of @s for command @seq ended with, said as the last error. */
static nnp_result_t wait_result(const nnp_stream_t *s, uint64_t seq, nnp_result_t res)
{
	if (res == NNP_ERROR_COMMAND_FAILED && s->failed)
		return nnp_fail(s->err.status == NNP_STATUS_MISMATCH ?
				NNP_ERROR_MISMATCH : res,
				"%s: stream command %llu failed: %s (status %#x)",
				s->dev->path, (unsigned long long)s->err.seq,
				s->err.what, s->err.status);
	if (res != NNP_SUCCESS)
		return nnp_fail(res, "%s: waiting for stream command %llu, %llu done",
				s->dev->path, (unsigned long long)seq,
				(unsigned long long)s->completed);
	return res;
}

nnp_result_t nnp_stream_submit_n(nnp_stream_t *s, struct nnp_hw_queue_cmd *cmds,
				 uint32_t n)
{
	uint32_t i, old = s->tail;

	if (s->failed)
		return wait_result(s, s->submitted, NNP_ERROR_COMMAND_FAILED);
	/* One slot stays free: the device never fills the last CQ slot. */
	while (s->submitted - s->completed + n > s->depth - 1) {
		nnp_result_t r = wait_for(s, s->completed + 1, STREAM_WAIT_FOREVER);

		if (r != NNP_SUCCESS)
			return wait_result(s, s->completed + 1, r);
	}
	for (i = 0; i < n; i++) {
		cmds[i].cid = (uint16_t)s->submitted;
		s->sq[s->tail] = cmds[i];
		s->tail = (s->tail + 1) % s->depth;
		s->submitted++;
	}
	/* The commands are in the ring before the device hears of them. */
	atomic_thread_fence(memory_order_release);
	if (s->shadow) {
		s->shadow->sq_tail = s->tail;
		/*
		 * The tail's write before sq_event's read, against the
		 * device's write of sq_event before its last read of the tail.
		 */
		atomic_thread_fence(memory_order_seq_cst);
		if (!nnp_shadow_needs_doorbell(s->shadow->sq_event, s->tail, old, s->depth))
			return NNP_SUCCESS;
	}
	s->db[NNP_DB_SQ_TAIL / 4] = s->tail;
	return NNP_SUCCESS;
}

nnp_result_t nnp_stream_submit(nnp_stream_t *s, struct nnp_hw_queue_cmd *cmd)
{
	return nnp_stream_submit_n(s, cmd, 1);
}

int nnp_stream_range_ok(const nnp_stream_t *s, const nnp_mem_t *m, size_t off,
			size_t len)
{
	return m && m->dev == s->dev && off <= m->size && len <= m->size - off;
}

nnp_result_t nnp_copy_cmd(const char *what, const nnp_stream_t *s,
			  nnp_mem_t *dst, size_t dst_off, nnp_mem_t *src,
			  size_t src_off, size_t len, struct nnp_hw_queue_cmd *c)
{
	if (!s || !nnp_stream_range_ok(s, dst, dst_off, len) || !nnp_stream_range_ok(s, src, src_off, len))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s of %zu bytes: no stream, or a buffer not of its device or too small",
				what, len);
	*c = (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_COPY, .src_key = src->key, .src_off = src_off,
		.dst_key = dst->key, .dst_off = dst_off, .len = len,
	};
	return NNP_SUCCESS;
}

nnp_result_t nnp_memcpy_async(nnp_stream_t *s, nnp_mem_t *dst, size_t dst_off,
			      nnp_mem_t *src, size_t src_off, size_t len)
{
	struct nnp_hw_queue_cmd c;
	nnp_result_t res = nnp_copy_cmd("nnp_memcpy_async", s, dst, dst_off, src,
					src_off, len, &c);

	return res == NNP_SUCCESS ? nnp_stream_submit(s, &c) : res;
}

nnp_result_t nnp_memset_async(nnp_stream_t *s, nnp_mem_t *dst, size_t off,
			      uint8_t byte, size_t len)
{
	struct nnp_hw_queue_cmd c = { .opcode = NNP_CMD_FILL };

	if (!s || !nnp_stream_range_ok(s, dst, off, len))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_memset_async of %zu bytes: no stream, or a buffer not of its device or too small",
				len);
	c.dst_key = dst->key;
	c.dst_off = off;
	c.len = len;
	c.value = byte;
	return nnp_stream_submit(s, &c);
}

nnp_result_t nnp_timestamp_async(nnp_stream_t *s, nnp_mem_t *dst, size_t off)
{
	struct nnp_hw_queue_cmd c = { .opcode = NNP_CMD_TIMESTAMP };

	if (!s || !nnp_stream_range_ok(s, dst, off, sizeof(uint64_t)))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_timestamp_async: no stream, or a buffer not of its device or without 8 bytes at %zu",
				off);
	c.dst_key = dst->key;
	c.dst_off = off;
	return nnp_stream_submit(s, &c);
}

nnp_result_t nnp_stream_synchronize(nnp_stream_t *s)
{
	if (!s)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_stream_synchronize: stream is NULL");
	return wait_result(s, s->submitted, wait_for(s, s->submitted, STREAM_WAIT_FOREVER));
}

/* 0.9's version: a program built before binds to the old one (compat_0_8.c). */
__asm__(".symver nnp_stream_error, nnp_stream_error@@@LIBNNP_0.9");

nnp_result_t nnp_stream_error(const nnp_stream_t *s, struct nnp_stream_error *err)
{
	struct nnp_stream_error out;

	if (!s || !err)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_stream_error: no stream or no err");
	if (nnp_size_check(err->size, NNP_END_OF(struct nnp_stream_error, what),
			   sizeof(out), "nnp_stream_error: err"))
		return NNP_ERROR_INVALID_ARGUMENT;
	if (!s->failed)
		return NNP_SUCCESS;
	out = s->err;
	out.size = err->size;
	memcpy(err, &out, err->size);
	return NNP_ERROR_COMMAND_FAILED;
}

nnp_result_t nnp_stream_reset(nnp_stream_t *s)
{
	struct drm_nnp_queue_op op;

	if (!s)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_stream_reset: stream is NULL");
	op = (struct drm_nnp_queue_op){ .qid = s->qid };
	if (drmIoctl(s->dev->fd, DRM_IOCTL_NNP_QUEUE_RESET, &op))
		return nnp_ioctl_failed(s->dev, "resetting a queue", errno);
	/* The driver cleared the completion ring; what was queued is dropped. */
	if (s->trace)
		nnp_trace_dropped(s);
	/* Their sources stay -1: none of them ran. */
	if (s->any)
		memset(s->any, 0, s->depth * sizeof(*s->any));
	s->tail = 0;
	s->head = 0;
	s->phase = NNP_CQE_PHASE;
	s->completed = s->submitted;
	s->acked = s->completed;
	s->failed = false;
	memset(&s->err, 0, sizeof(s->err));
	return NNP_SUCCESS;
}

void nnp_stream_destroy(nnp_stream_t *s)
{
	struct drm_nnp_queue_op op;

	if (!s)
		return;
	nnp_group_forget(NULL, s);
	wait_for(s, s->submitted, STREAM_DESTROY_WAIT_NS);
	if (s->trace)
		nnp_trace_dropped(s);
	munmap(s->ring, s->ring_len);
	munmap((void *)s->db, nnp_page_size());
	op = (struct drm_nnp_queue_op){ .qid = s->qid };
	drmIoctl(s->dev->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op);
	/* No command of the queue can write its stamps any more. */
	nnp_trace_stream_free(s);
	free(s->any);
	free(s);
}

/* 0.9's versions: a program built before binds to the old ones (compat_0_8.c). */
__asm__(".symver nnp_event_record, nnp_event_record@@@LIBNNP_0.9");
__asm__(".symver nnp_event_query, nnp_event_query@@@LIBNNP_0.9");
__asm__(".symver nnp_event_synchronize, nnp_event_synchronize@@@LIBNNP_0.9");

/* @ev, if given, of a size this libnnp knows (@call's); recorded if @recorded. */
static nnp_result_t event_check(const nnp_event_t *ev, const char *call,
				bool recorded)
{
	char what[48];

	if (!ev)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "%s: event is NULL", call);
	snprintf(what, sizeof(what), "%s: event", call);
	if (nnp_size_check(ev->size, sizeof(*ev), sizeof(*ev), what))
		return NNP_ERROR_INVALID_ARGUMENT;
	if (recorded && !ev->stream)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "%s: event not recorded", call);
	return NNP_SUCCESS;
}

nnp_result_t nnp_event_record(nnp_stream_t *s, nnp_event_t *ev)
{
	if (!s)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_event_record: stream is NULL");
	if (event_check(ev, "nnp_event_record", false))
		return NNP_ERROR_INVALID_ARGUMENT;
	ev->stream = s;
	ev->seq = s->submitted;
	return NNP_SUCCESS;
}

nnp_result_t nnp_event_query(const nnp_event_t *ev)
{
	if (event_check(ev, "nnp_event_query", true))
		return NNP_ERROR_INVALID_ARGUMENT;
	if (ev->stream->trace)
		ev->stream->wait_ns = nnp_now_ns();
	reap(ev->stream);
	if (ev->stream->failed && ev->stream->err.seq < ev->seq)
		return wait_result(ev->stream, ev->seq, NNP_ERROR_COMMAND_FAILED);
	return ev->stream->completed >= ev->seq ? NNP_SUCCESS : NNP_ERROR_NOT_READY;
}

nnp_result_t nnp_event_synchronize(const nnp_event_t *ev, int64_t timeout_ns)
{
	if (event_check(ev, "nnp_event_synchronize", true))
		return NNP_ERROR_INVALID_ARGUMENT;
	return wait_result(ev->stream, ev->seq, wait_for(ev->stream, ev->seq, timeout_ns));
}
