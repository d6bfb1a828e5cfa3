/* SPDX-License-Identifier: MIT */
/*
 * nnp-sim's reader of the traces libnnp writes (docs/trace.md, format 1):
 * one file's lines, every key checked, and several files checked to be
 * the ranks of one job. Every error is said on stderr, naming the file
 * (and its line), as "nnp-sim: FILE:LINE: ...".
 */
#ifndef NNP_SIM_TRACE_H
#define NNP_SIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_VERSION	1

enum trace_kind {
	TRACE_ALLREDUCE, TRACE_BROADCAST, TRACE_ALLGATHER,
	TRACE_REDUCE_SCATTER, TRACE_SEND, TRACE_RECV, TRACE_REDUCE,
	TRACE_ALLTOALL, TRACE_GATHER, TRACE_SCATTER,
};

/* One operation line. */
struct trace_op {
	unsigned int line;		/* in its file, from 1 */
	uint64_t seq, comm;
	uint32_t rank, nranks;
	enum trace_kind kind;
	uint8_t dtype, redop;		/* NNP_DTYPE_*, NNP_OP_* (0: none) */
	uint64_t count, bytes;
	uint64_t issue_ns, wait_ns, done_ns;
	bool ran;			/* dev_start_ns, dev_end_ns known */
	uint64_t dev_start_ns, dev_end_ns;
	bool ok;			/* status "ok" */
};

struct trace_file {
	const char *path;
	struct trace_op *ops;
	size_t nops;
};

/* Read and check @path; 0, or -1 with the reason on stderr. */
int trace_read(const char *path, struct trace_file *f);
void trace_free(struct trace_file *f);

/*
 * The job the files are the ranks of: the timeline is the file of the
 * lowest rank in the largest communicator; an operation is kept if it is
 * "ok" in every file that holds it, its modeled times the latest of those
 * files' (so that a kept operation's dev_end_ns - dev_start_ns is its
 * modeled duration across the ranks given).
 */
struct trace_job {
	const struct trace_file *timeline;
	struct trace_op *ops;		/* the timeline's kept operations */
	size_t nops;
	size_t skipped;			/* the timeline's operations not kept */
	uint32_t nranks;		/* of the largest communicator */
	bool all_ranks;			/* a file for each of its ranks */
	uint64_t recorded_comm_ns;	/* sum of the kept ops' durations */
};

/*
 * Check that @files are the ranks of one job (each (comm, seq) held by
 * files of distinct ranks of a communicator of one size, doing the same
 * operation; every operation of the largest communicator in every file)
 * and make @j; 0, or -1 with the reason on stderr.
 */
int trace_job(const struct trace_file *files, unsigned int nfiles,
	      struct trace_job *j);
void trace_job_free(struct trace_job *j);

/* Bytes of an element of NNP_DTYPE_* @dtype. */
unsigned int trace_dtype_size(uint8_t dtype);

#endif /* NNP_SIM_TRACE_H */
