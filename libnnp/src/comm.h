/* SPDX-License-Identifier: MIT */
/* libnnp communicator handles, shared by setup (comm.c) and collectives. */
#ifndef NNP_COMM_H
#define NNP_COMM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "ring_plan.h"

struct nnp_comm {
	nnp_device_t *dev;
	uint32_t id;		/* the driver's communicator id */
	int rank;
	int nranks;
	/* By peer rank: this chip's port to it and from it, -1 if no link. */
	int *send_port;
	int *recv_port;
	/*
	 * By peer rank: the port a routed message leaves on (route_plan.h),
	 * as the device has it; NULL if the device has no routes.
	 */
	uint8_t *routes;
	/* How long its commands wait for a late peer, as COMM_CREATE got it. */
	uint32_t timeout_ms;
	/* Its name on the links, the same on every rank; traces show it. */
	uint64_t epoch;
	/* Operations traced so far (NNP_TRACE_FILE). */
	uint64_t trace_seq;
	/* Its name (nnp_comm_config_t), or "". */
	char name[NNP_COMM_NAME_MAX];
	/* Its allreduces flagged NNP_CMD_FLAG_FUSE (group_fusion asked, and 1.25). */
	bool group_fusion;
	/* What its config asked (nnp_comm_opts): what splits of it ask. */
	int group_fusion_asked;
	/*
	 * By rank: the chips and ports it was planned on, from which
	 * nnp_comm_shrink() plans the survivors' communicator without talk.
	 */
	struct nnp_rank_info *all;
	/* The epochs of the communicators shrunk from it so far. */
	uint64_t *shrunk;
	uint32_t nshrunk;
	/* Its non-blocking creation (comm_async.c), or NULL if it had none. */
	struct nnp_comm_init *init;
	/* Its answers to the job's view (comm_job.c), or NULL. */
	struct nnp_job_link *job;
	/*
	 * The transit communicators (comm_transit.c) this chip holds for
	 * the groups split from it that it is no rank of: they end with it.
	 */
	uint32_t *transits;
	uint32_t ntransits;
	/* Its failure was logged: a watchdog polls it until it aborts it. */
	atomic_bool failure_logged;
};

/*
 * Answer the job's view of @comm, made by a rendezvous, on @link from now
 * on (comm_job.c); @link is ended if that cannot be.
 */
void nnp_comm_job_answer(nnp_comm_t *comm, struct nnp_job_link *link);

/* What a communicator is made with, from nnp_comm_config_t. */
struct nnp_comm_opts {
	uint32_t timeout_ms;		/* as COMM_CREATE takes it */
	char name[NNP_COMM_NAME_MAX];	/* or "" */
	int group_fusion;		/* 0, 1, or -1: as NNP_GROUP_FUSION says */
};

/* The options @comm was made with: what a split or shrink of it starts from. */
void nnp_comm_opts_of(const nnp_comm_t *comm, struct nnp_comm_opts *o);

/* nnp_comm_init_rank_config()'s work, arguments checked, blocking. */
nnp_result_t nnp_comm_init_opts(nnp_comm_t **comm, int nranks,
				const nnp_unique_id_t *id, int rank,
				nnp_device_t *dev, const struct nnp_comm_opts *o);

/* Does @cfg (NULL: the defaults) ask for a blocking creation? */
bool nnp_comm_config_blocking(const nnp_comm_config_t *cfg);

/*
 * The same on a thread of its own: *@comm at once, and NNP_IN_PROGRESS
 * (or an error before the thread starts).
 */
nnp_result_t nnp_comm_init_async(nnp_comm_t **comm, int nranks,
				 const nnp_unique_id_t *id, int rank,
				 nnp_device_t *dev, const struct nnp_comm_opts *o);

/*
 * Whether @comm is made and may be used: NNP_SUCCESS (also for NULL, which
 * the caller's own checks refuse), else NNP_IN_PROGRESS while its
 * non-blocking creation runs, or that creation's failure, the last error
 * saying which for @what ("nnp_allreduce").
 */
nnp_result_t nnp_comm_ready(const nnp_comm_t *comm, const char *what);

/*
 * End @comm's non-blocking creation if it has one: stop it where it is
 * and wait for its thread. NNP_SUCCESS if the communicator was made (then
 * destroy it as any other), else what the creation ended with.
 */
nnp_result_t nnp_comm_init_end(nnp_comm_t *comm);

/*
 * @cfg (NULL: the defaults) checked, for @what ("nnp_comm_shrink") to make
 * a communicator with, into @o; members left at their defaults (timeout
 * and group_fusion -1, name NULL) or past the size of @cfg get @def's.
 * NNP_ERROR_INVALID_ARGUMENT naming a bad member.
 */
nnp_result_t nnp_comm_config_take(const nnp_comm_config_t *cfg, const char *what,
				  const struct nnp_comm_opts *def,
				  struct nnp_comm_opts *o);

/* "comm NAME: " to start an error about @comm with, or "" if unnamed. */
const char *nnp_comm_label(const nnp_comm_t *comm, char *buf, size_t len);

/* @dev's chip and port table, as the ring planner takes it. */
nnp_result_t nnp_comm_rank_info(nnp_device_t *dev, struct nnp_rank_info *ri);

/*
 * Plan the ring of @n ranks described by @all (nnp_ring_plan()); when
 * there is none, the last error says which rank or link is missing. At
 * NNP_DEBUG=INFO the ring is printed hop by hop, with @epoch.
 */
nnp_result_t nnp_comm_plan(const struct nnp_rank_info *all, uint32_t n,
			   uint64_t epoch, struct nnp_ring *ring);

/*
 * Allreduce algorithms, as NNP_ALGO names them (like NCCL_ALGO): the
 * values of the driver's DRM_NNP_ALGO_* and the device's.
 */
enum nnp_algo {
	NNP_ALGO_AUTO,		/* the device picks by size, on a torus if any */
	NNP_ALGO_RING,		/* the communicator's one ring */
	NNP_ALGO_BIDIR,		/* the ring both ways */
	NNP_ALGO_RINGS,		/* the ring's two port pairs, both ways */
	NNP_ALGO_TORUS,		/* along rows, then columns */
	NNP_ALGO_COUNT
};

extern const char *const nnp_algo_names[NNP_ALGO_COUNT];

/*
 * The algorithm NNP_ALGO asks for (unset or empty: auto, any case) in
 * *@algo, and in @topo (nnp_topo_free()) what the fabric of @n ranks
 * @all, planned as @ring, offers it: NNP_ERROR_INVALID_ARGUMENT for a
 * name it does not know, NNP_ERROR_NO_PATH if the fabric cannot run it
 * (rings: a hop of the ring with one link; torus: no torus), the last
 * error naming it and why. At NNP_DEBUG=INFO it says what it found.
 */
nnp_result_t nnp_comm_plan_algo(const struct nnp_rank_info *all, uint32_t n,
				const struct nnp_ring *ring, struct nnp_topo *topo,
				enum nnp_algo *algo);

/*
 * Make @dev rank @rank of the @nranks ranks @all, on the planned @ring and
 * @topo running @algo, with @routes (@nranks bytes; NULL: planned over
 * the ranks' chips), named @epoch on the links, with the options @o: its
 * commands wait o->timeout_ms for a late peer (DRM_NNP_COMM_TIMEOUT_NEVER:
 * for ever), its name is o->name ("": none; the driver shows it in fdinfo
 * since 1.9); *@comm on success, else the last error says why.
 */
nnp_result_t nnp_comm_make(nnp_device_t *dev, uint32_t nranks, uint32_t rank,
			   const struct nnp_rank_info *all,
			   const struct nnp_ring *ring,
			   const struct nnp_topo *topo, enum nnp_algo algo,
			   const uint8_t *routes, uint64_t epoch,
			   const struct nnp_comm_opts *o, nnp_comm_t **comm);

#endif /* NNP_COMM_H */
