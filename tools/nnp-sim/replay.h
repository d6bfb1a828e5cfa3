/* SPDX-License-Identifier: MIT */
/*
 * nnp-sim --replay: a recorded job (trace.h) projected on n chips. Each
 * operation's device time comes from the simulated chips, the host's
 * compute from the recorded gaps, and the two are laid on one timeline
 * (docs/trace.md, "Replay").
 */
#ifndef NNP_SIM_REPLAY_H
#define NNP_SIM_REPLAY_H

#include "topo.h"
#include "trace.h"

/*
 * The chips @op runs on when the job runs on @n: @n for an operation of
 * the largest communicator (data parallelism grows it), else its own
 * communicator's size.
 */
unsigned int replay_chips(const struct trace_job *j, const struct trace_op *op,
			  unsigned int n);
/*
 * @op's element count on @chips chips: allgather, reduce_scatter,
 * alltoall, gather and scatter keep the whole tensor, count x nranks, and
 * split it over the chips (at least an element each); the others keep
 * theirs.
 */
uint64_t replay_count(const struct trace_op *op, unsigned int chips);

/*
 * The modeled device time @ns[k] of each of @j's operations on @n chips
 * wired as @t (@n chips of it, @algo), in order, after one barrier;
 * operations of a smaller communicator run on a ring of their own size.
 * 0, or -1 if the simulator failed.
 */
int replay_device(const struct trace_job *j, const struct topo *t,
		  unsigned int n, uint32_t algo,
		  const struct nnp_fw_config *model, uint64_t *ns);

/* The projected timeline, in ns. */
struct replay_time {
	double total;		/* the host's time after its last event */
	double compute;		/* the host's own work, scaled */
	double comm;		/* sum of the device times */
	double exposed;		/* of comm, what the host waited for */
};

/*
 * Walk @j's events (issue, wait, done of each operation, by recorded
 * time) with the device times @ns and the host's compute times @scale.
 */
void replay_host(const struct trace_job *j, const uint64_t *ns, double scale,
		 struct replay_time *r);

/* nnp-sim --replay's options (docs/nnp-sim.md). */
struct replay_opts {
	const char *files;		/* FILE[,FILE...] */
	const unsigned int *chips;
	unsigned int nruns;
	enum topo_kind kind;
	unsigned int rows, chassis;
	uint32_t algo;
	const struct nnp_fw_config *model;
	double compute_scale;
	unsigned int steps;
	bool json;
};

/*
 * Replay and print a row per chip count; the exit status: 0, 2 for a
 * trace or a topology refused (the reason on stderr), 1 if the simulator
 * failed.
 */
int replay_main(const struct replay_opts *o);

#endif /* NNP_SIM_REPLAY_H */
