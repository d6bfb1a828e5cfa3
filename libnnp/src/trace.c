// SPDX-License-Identifier: MIT
/*
 * libnnp's tracer: NNP_TRACE_FILE (docs/trace.md). Each traced operation
 * goes on its stream between two TIMESTAMP commands that write the chip's
 * modeled time into a host page of the stream's (one word per ring slot),
 * and is remembered by its command's sequence number until its completion
 * is reaped; then its line is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnp_hw.h"

#include "log.h"
#include "names.h"
#include "trace.h"

#define TRACE_VERSION	1

#define TRACE_FILES_MAX	64	/* devices one process traces, with %r */

bool nnp_trace_enabled;
static char *trace_path;

/*
 * A trace file, shared by every stream and thread that writes to it: the
 * process's one file, or with %r in the path one per device, named by
 * the rank of the device's first communicator. So a process that drives
 * several devices (nnp_comm_init_all) leaves one file per rank, as a job
 * of one process per rank does, and each file's gaps are its device's.
 */
struct trace_file {
	char dev[64];		/* the device's path; "" for the one file */
	FILE *f;
	int64_t start_ns;
	int64_t last_done_ns;	/* the latest completion seen */
	uint64_t in_flight;	/* traced operations not yet completed */
};

static struct {
	pthread_mutex_t lock;
	bool per_device;	/* the path names %r: set at the first open */
	unsigned int nfiles;
	struct trace_file files[TRACE_FILES_MAX];
} tr = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* One traced operation, from its submission to its line. */
struct pending {
	bool used;
	bool have_start, have_end;
	uint64_t seq;		/* its command's sequence number */
	uint64_t epoch, op_seq;
	int rank, nranks;
	struct nnp_trace_op op;
	int64_t issue_ns, gap_ns, wait_ns, done_ns;
	uint64_t dev_start, dev_end;
	const char *status;
	/* A member of a GROUP (group.c): no stamps of its own. */
	bool unstamped;
	char comm_name[NNP_COMM_NAME_MAX];	/* "" if none */
	struct trace_file *file;
};

struct nnp_stream_trace {
	nnp_mem_t *stamps;	/* host memory: one u64 per ring slot */
	volatile uint64_t *stamp;
	struct pending *pend;	/* by the operation's seq % depth */
	/*
	 * What the two stamps around an operation add to its span: two
	 * stamps with nothing between them, queued before the first
	 * operation (calib_seq, calib_seq + 1) and read when reaped.
	 */
	bool calibrating, calibrated;
	uint64_t calib_seq, bracket_ns;
};

/*
 * A fork() once the file is open must neither copy unwritten lines into
 * the child (its exit() would write them again) nor let the child add
 * lines to the parent's file: the parent writes what it has first, and
 * the child stops tracing. A child of a process that had no file yet
 * (a launcher forking its ranks) traces as any process does.
 */
static void trace_prefork(void)
{
	unsigned int i;

	pthread_mutex_lock(&tr.lock);
	for (i = 0; i < tr.nfiles; i++)
		fflush(tr.files[i].f);
}

static void trace_postfork_parent(void)
{
	pthread_mutex_unlock(&tr.lock);
}

static void trace_postfork_child(void)
{
	if (tr.nfiles)
		nnp_trace_enabled = false;
	tr.nfiles = 0;
	pthread_mutex_unlock(&tr.lock);
}

__attribute__((constructor)) static void trace_init(void)
{
	/* Not for a set-user-ID program: it would write where it may. */
	const char *p = secure_getenv("NNP_TRACE_FILE");

	if (p && *p)
		trace_path = strdup(p);
	nnp_trace_enabled = trace_path != NULL;
	if (nnp_trace_enabled)
		pthread_atfork(trace_prefork, trace_postfork_parent,
			       trace_postfork_child);
}

/*
 * NNP_TRACE_FILE with %r the rank, %p the pid and %% a %; *@names_rank
 * says whether it had a %r.
 */
static char *expand_path(int rank, bool *names_rank)
{
	size_t cap = strlen(trace_path) * 12 + 1, n = 0;
	char *out = malloc(cap);
	const char *p;

	if (!out)
		return NULL;
	for (p = trace_path; *p; p++) {
		if (*p != '%') {
			out[n++] = *p;
			continue;
		}
		switch (p[1]) {
		case 'r':
			n += (size_t)snprintf(out + n, cap - n, "%d", rank);
			*names_rank = true;
			p++;
			break;
		case 'p':
			n += (size_t)snprintf(out + n, cap - n, "%d", (int)getpid());
			p++;
			break;
		case '%':
			out[n++] = '%';
			p++;
			break;
		default:
			out[n++] = '%';
		}
	}
	out[n] = '\0';
	return out;
}

/* @dev's trace file, or NULL if it has none yet; with tr.lock held. */
static struct trace_file *file_of_locked(const nnp_device_t *dev)
{
	unsigned int i;

	for (i = 0; i < tr.nfiles; i++)
		if (!tr.per_device || !strcmp(tr.files[i].dev, dev->path))
			return &tr.files[i];
	return NULL;
}

nnp_result_t nnp_trace_open(const nnp_device_t *dev, int rank)
{
	nnp_result_t res = NNP_SUCCESS;
	struct trace_file *file;
	bool names_rank = false;
	char *path;
	FILE *f;
	int fd;

	if (!nnp_trace_enabled)
		return NNP_SUCCESS;
	pthread_mutex_lock(&tr.lock);
	if (file_of_locked(dev))
		goto out;
	if (tr.nfiles == TRACE_FILES_MAX) {
		res = nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
			       "NNP_TRACE_FILE: %s would be this process's trace file number %d; %d is the most",
			       dev->path, TRACE_FILES_MAX + 1, TRACE_FILES_MAX);
		goto out;
	}
	path = expand_path(rank, &names_rank);
	if (!tr.nfiles)
		tr.per_device = names_rank;
	/*
	 * Not through a symbolic link: in a directory others may write
	 * (/tmp), one planted at the trace's name would have root's trace
	 * truncate a file of the planter's choice. The user's alone: a
	 * trace names communicators by their epochs, which the job keeps
	 * from others (docs/security.md).
	 */
	fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			 0600) : -1;
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int err = path ? errno : ENOMEM;

		/* Not a device's error: the path the user gave is the problem. */
		res = nnp_fail(err == ENOMEM ? NNP_ERROR_OUT_OF_MEMORY :
			       NNP_ERROR_INVALID_ARGUMENT,
			       "NNP_TRACE_FILE: cannot write %s: %s",
			       path ? path : trace_path,
			       err == ELOOP ? "it is a symbolic link, not followed" :
			       strerror(err));
		if (fd >= 0)
			close(fd);
	} else {
		file = &tr.files[tr.nfiles++];
		*file = (struct trace_file){ .f = f, .start_ns = nnp_now_ns() };
		if (tr.per_device)
			snprintf(file->dev, sizeof(file->dev), "%s", dev->path);
		file->last_done_ns = file->start_ns;
		fprintf(f, "{\"nnp_trace\":%d,\"pid\":%d,\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":%" PRId64 "}\n",
			TRACE_VERSION, (int)getpid(), file->start_ns);
	}
	free(path);
out:
	pthread_mutex_unlock(&tr.lock);
	return res;
}

void nnp_trace_flush(void)
{
	unsigned int i;

	if (!nnp_trace_enabled)
		return;
	pthread_mutex_lock(&tr.lock);
	for (i = 0; i < tr.nfiles; i++)
		fflush(tr.files[i].f);
	pthread_mutex_unlock(&tr.lock);
}

/* @v as a JSON integer, or null when @have is false. */
static const char *int_or_null(char *buf, size_t len, bool have, int64_t v)
{
	if (!have)
		return "null";
	snprintf(buf, len, "%" PRId64, v);
	return buf;
}

/* Write @p's line and forget it. */
static void emit(struct pending *p)
{
	const char *redop = nnp_redop_name(p->op.redop);
	char root[24], peer[24], start[24], end[24];
	struct trace_file *file = p->file;

	pthread_mutex_lock(&tr.lock);
	if (p->done_ns > file->last_done_ns)
		file->last_done_ns = p->done_ns;
	file->in_flight--;
	/* Closed in a child after fork(): the parent writes it. */
	if (tr.nfiles)
		fprintf(file->f,
			"{\"seq\":%" PRIu64 ",\"comm\":\"%016" PRIx64 "\",\"rank\":%d,\"nranks\":%d,"
			"\"op\":\"%s\",\"dtype\":\"%s\",\"count\":%zu,\"bytes\":%zu,"
			"\"redop\":%s%s%s,\"root\":%s,\"peer\":%s,"
			"\"issue_ns\":%" PRId64 ",\"wait_ns\":%" PRId64 ",\"done_ns\":%" PRId64
			",\"gap_ns\":%" PRId64 ",\"dev_start_ns\":%s,\"dev_end_ns\":%s,\"status\":\"%s\","
			"\"name\":%s%s%s}\n",
			p->op_seq, p->epoch, p->rank, p->nranks, p->op.name,
			nnp_dtype_name(p->op.dtype), p->op.count,
			p->op.count * nnp_dtype_size(p->op.dtype),
			redop ? "\"" : "", redop ? redop : "null", redop ? "\"" : "",
			int_or_null(root, sizeof(root), p->op.root >= 0, p->op.root),
			int_or_null(peer, sizeof(peer), p->op.peer >= 0, p->op.peer),
			p->issue_ns, p->wait_ns, p->done_ns, p->gap_ns,
			int_or_null(start, sizeof(start), p->have_start && p->have_end,
				    (int64_t)p->dev_start),
			int_or_null(end, sizeof(end), p->have_start && p->have_end,
				    (int64_t)p->dev_end),
			p->status, p->comm_name[0] ? "\"" : "",
			p->comm_name[0] ? p->comm_name : "null",
			p->comm_name[0] ? "\"" : "");
	pthread_mutex_unlock(&tr.lock);
	p->used = false;
}

/* @s's tracing state, made on its first traced operation. */
static struct nnp_stream_trace *stream_trace(nnp_stream_t *s)
{
	struct nnp_stream_trace *t;
	void *map;

	if (s->trace)
		return s->trace;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->pend = calloc(s->depth, sizeof(*t->pend));
	if (!t->pend ||
	    nnp_mem_alloc(s->dev, NNP_MEM_HOST, s->depth * sizeof(uint64_t), 0,
			  &t->stamps) != NNP_SUCCESS)
		goto fail;
	if (nnp_mem_map(t->stamps, &map) != NNP_SUCCESS)
		goto fail;
	t->stamp = map;
	s->trace = t;
	return t;
fail:
	if (t) {
		nnp_mem_free(t->stamps);
		free(t->pend);
		free(t);
	}
	return NULL;
}

/* A TIMESTAMP into the word of ring slot @seq % depth. */
static struct nnp_hw_queue_cmd stamp_at(const nnp_stream_t *s,
					const struct nnp_stream_trace *t,
					uint64_t seq)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_TIMESTAMP, .dst_key = t->stamps->key,
		.dst_off = (seq % s->depth) * sizeof(uint64_t),
	};
}

/* Remember operation @op of @comm, command @seq of @s, issued at @issue. */
static void remember(nnp_stream_t *s, struct nnp_stream_trace *t,
		     nnp_comm_t *comm, const struct nnp_trace_op *op,
		     uint64_t seq, int64_t issue, bool unstamped)
{
	struct trace_file *file;
	int64_t gap;

	/* Its communicator's creation opened it (nnp_trace_open()). */
	pthread_mutex_lock(&tr.lock);
	file = file_of_locked(comm->dev);
	if (file) {
		gap = file->in_flight ? 0 : issue - file->last_done_ns;
		file->in_flight++;
	}
	pthread_mutex_unlock(&tr.lock);
	if (!file)
		return;	/* a child after fork(): no line */
	t->pend[seq % s->depth] = (struct pending){
		.used = true, .seq = seq, .epoch = comm->epoch,
		.op_seq = comm->trace_seq++, .rank = comm->rank,
		.nranks = comm->nranks, .op = *op, .issue_ns = issue,
		.gap_ns = gap < 0 ? 0 : gap, .unstamped = unstamped,
		.file = file,
	};
	/* Letters, digits and ".-_" only: nothing to escape in JSON. */
	memcpy(t->pend[seq % s->depth].comm_name, comm->name, sizeof(comm->name));
}

nnp_result_t nnp_trace_submit(nnp_stream_t *s, nnp_comm_t *comm,
			      const struct nnp_trace_op *op,
			      struct nnp_hw_queue_cmd *cmd)
{
	struct nnp_stream_trace *t = stream_trace(s);
	int64_t issue = nnp_now_ns();
	struct nnp_hw_queue_cmd cmds[5];
	uint32_t n = 0;
	uint64_t seq;
	nnp_result_t res;

	if (!t)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
				"NNP_TRACE_FILE: no memory for the stream's timestamps");
	/* One doorbell for them all: each is an exit to the device model. */
	if (!t->calibrated && !t->calibrating) {
		cmds[n] = stamp_at(s, t, s->submitted + n);
		n++;
		cmds[n] = stamp_at(s, t, s->submitted + n);
		n++;
	}
	seq = s->submitted + n + 1;
	cmds[n++] = stamp_at(s, t, seq - 1);
	cmds[n++] = *cmd;
	cmds[n++] = stamp_at(s, t, seq + 1);
	res = nnp_stream_submit_n(s, cmds, n);
	if (res != NNP_SUCCESS)
		return res;
	if (n == 5) {
		t->calibrating = true;
		t->calib_seq = seq - 3;
	}
	remember(s, t, comm, op, seq, issue, false);
	return NNP_SUCCESS;
}

void nnp_trace_held(nnp_stream_t *s, nnp_comm_t *comm,
		    const struct nnp_trace_op *op, uint64_t seq)
{
	struct nnp_stream_trace *t = stream_trace(s);

	if (t)
		remember(s, t, comm, op, seq, nnp_now_ns(), true);
}

void nnp_trace_reaped(nnp_stream_t *s, uint64_t seq, uint16_t status)
{
	struct nnp_stream_trace *t = s->trace;
	uint32_t d = s->depth;
	struct pending *p = &t->pend[(seq + 1) % d];

	if (t->calibrating && seq == t->calib_seq + 1) {
		t->calibrating = false;
		t->calibrated = !status;
		t->bracket_ns = t->stamp[seq % d] - t->stamp[(seq + d - 1) % d];
		return;
	}
	/* The opening stamp of the operation after it. */
	if (p->used && p->seq == seq + 1 && !p->unstamped) {
		p->dev_start = t->stamp[seq % d];
		p->have_start = !status;
		return;
	}
	p = &t->pend[seq % d];
	if (p->used && p->seq == seq) {
		p->done_ns = nnp_now_ns();
		p->wait_ns = s->wait_ns > p->issue_ns ? s->wait_ns : p->issue_ns;
		p->status = nnp_status_name(status);
		if (!p->status)
			p->status = "error";
		if (status || p->unstamped)
			emit(p);
		return;
	}
	/* The closing stamp of the operation before it. */
	p = &t->pend[(seq + d - 1) % d];
	if (seq && p->used && p->seq == seq - 1) {
		p->dev_end = t->stamp[seq % d] - t->bracket_ns;
		p->have_end = !status && t->calibrated;
		emit(p);
	}
}

void nnp_trace_dropped(nnp_stream_t *s)
{
	struct nnp_stream_trace *t = s->trace;
	uint32_t i;

	if (t)
		t->calibrating = false;	/* its stamps may never come */
	for (i = 0; t && i < s->depth; i++) {
		struct pending *p = &t->pend[i];

		if (!p->used)
			continue;
		/* Ran, but its closing stamp did not. */
		if (!p->status) {
			p->status = "not_run";
			p->done_ns = nnp_now_ns();
			p->wait_ns = p->done_ns;
			p->have_start = false;
		}
		emit(p);
	}
}

void nnp_trace_stream_free(nnp_stream_t *s)
{
	struct nnp_stream_trace *t = s->trace;

	if (!t)
		return;
	nnp_mem_free(t->stamps);
	free(t->pend);
	free(t);
	s->trace = NULL;
}
