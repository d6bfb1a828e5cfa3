/* SPDX-License-Identifier: MIT */
/*
 * The firmware simulator's engines: a queue command's DMA copies and fills
 * (fw_exec.c), SEND and RECV (fw_p2p.c), and the collective engine around
 * one ring (fw_coll.c), with the key lookups their DMA needs (fw_keys.c).
 * The allreduce algorithms above run their rings on struct coll and the
 * fw_coll.c calls below; the engine reaches them through fw->algo, and the
 * control plane through fw->engine_hooks.
 */
#ifndef NNP_FW_ENGINES_H
#define NNP_FW_ENGINES_H

#include "fw_transport.h"

/* What a link command tells the control plane when it ends. */
struct nnp_fw_engine_hooks {
	/* As nnp_fw_comm_ended(): true if the failure is to be passed on. */
	bool (*comm_ended)(struct nnp_fw *fw, uint32_t comm, uint64_t epoch,
			   const struct nnp_fw_op *op, uint16_t status);
	/* As nnp_fw_comm_pass_abort(): a worker tells the peers. */
	void (*pass_abort)(struct nnp_fw *fw, uint32_t comm, uint64_t epoch);
	/* As nnp_fw_comm_torn_locked(): how a leave tore @op down, or 0. */
	uint16_t (*torn_locked)(struct nnp_fw *fw, const struct nnp_fw_op *op);
};

/*
 * A key resolved for one access: a copy of its descriptor, valid while the
 * caller holds its queue's exec lock (unregistering waits for that).
 */
struct nnp_fw_span {
	uint32_t type;
	uint64_t start;		/* byte offset within the key */
	uint64_t len;
	uint64_t dev_base;
	uint32_t page_offset;
	const uint64_t *pages;
};

/* A key's index in fw->keys; a generation above it. */
#define NNP_FW_KEY_INDEX(k)	((k) & 0xffffu)

/* Key @key of @ctx, with fw->lock held; NULL if none or dying. */
struct nnp_fw_key *nnp_fw_key_lookup_locked(struct nnp_fw *fw, uint32_t ctx,
					    uint32_t key);
uint16_t nnp_fw_key_resolve(struct nnp_fw *fw, uint32_t ctx, uint32_t key,
			    uint64_t off, uint64_t len, uint32_t right,
			    struct nnp_fw_span *span);

/*
 * Start collective @cmd (ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER)
 * of context @ctx: *@op to run, or a status if it cannot start.
 */
uint16_t nnp_fw_collective(struct nnp_fw *fw, uint32_t ctx,
			   const struct nnp_hw_queue_cmd *cmd,
			   struct nnp_fw_op **op);
/*
 * Collective @op is in a GROUP (v1.14) after @first, the group's first
 * collective of its communicator: starting, it drops only the leftovers
 * below @first's label, not @first's packets, which may come before it.
 */
void nnp_fw_coll_grouped(struct nnp_fw_op *op, const struct nnp_fw_op *first);

/* ALLTOALL, GATHER or SCATTER (fw_xchg.c, v1.12). */
static inline bool nnp_fw_is_exchange(uint8_t opcode)
{
	return opcode == NNP_CMD_ALLTOALL || opcode == NNP_CMD_GATHER ||
	       opcode == NNP_CMD_SCATTER;
}

/* Start exchange @cmd of context @ctx, as above. */
uint16_t nnp_fw_exchange(struct nnp_fw *fw, uint32_t ctx,
			 const struct nnp_hw_queue_cmd *cmd,
			 struct nnp_fw_op **op);

/* Start SEND or RECV @cmd (fw_p2p.c) of context @ctx, as above. */
uint16_t nnp_fw_p2p(struct nnp_fw *fw, uint32_t ctx,
		    const struct nnp_hw_queue_cmd *cmd, struct nnp_fw_op **op);

/* One round of a command made of parts (fw_rounds.c). */
struct nnp_fw_round {
	uint16_t aborted;	/* what the command learnt before it */
	bool lost;
	uint32_t left;		/* parts still to run after it */
	bool moved;		/* a part went on */
	uint64_t deadline;	/* the earliest deadline of the parts waiting */
	/* The part waiting longest: since when, and on which port. */
	uint64_t since;
	uint32_t port;
};

/* Why @op was torn down (its aborted, read under fw->lock); 0: it was not. */
uint16_t nnp_fw_op_torn(struct nnp_fw *fw, const struct nnp_fw_op *op);
/* Before @part's step in round @r: it learns what the command did. */
void nnp_fw_part_begin(struct nnp_fw *fw, const struct nnp_fw_round *r,
		       struct nnp_fw_op *part);
/* @part waits: its deadline, and how long it has waited, count in @r's. */
void nnp_fw_part_waits(struct nnp_fw_round *r, const struct nnp_fw_op *part);
/* @part's step parked: it is left, and waits. */
void nnp_fw_part_parked(struct nnp_fw_round *r, const struct nnp_fw_op *part);
/*
 * Park command @op, with fw->lock held, on any port until the first of
 * @r's parts may go on: a wake on any port, or the earliest deadline.
 */
void nnp_fw_park_parts_locked(struct nnp_fw_op *op,
			      const struct nnp_fw_round *r);
/*
 * Step command @op by @round until no part is left (SUCCESS) or one fails;
 * NNP_FW_PARKED, on any port, when a round moved none and no wake came.
 */
uint16_t nnp_fw_rounds(struct nnp_fw *fw, struct nnp_fw_op *op,
		       uint16_t (*round)(struct nnp_fw *fw,
					 struct nnp_fw_op *op,
					 struct nnp_fw_round *r));

/*
 * Start GROUP @cmd (fw_group.c, v1.13) of context @ctx with its @n
 * members, the commands after it in the ring, as above.
 */
uint16_t nnp_fw_group(struct nnp_fw *fw, uint32_t ctx,
		      const struct nnp_hw_queue_cmd *cmd,
		      const struct nnp_hw_queue_cmd *members, uint32_t n,
		      struct nnp_fw_op **op);

/*
 * Command execution (fw_exec.c): returns NNP_STATUS_*, or for a link
 * command sets *@op for the queue to run.
 */
uint16_t nnp_fw_exec(struct nnp_fw *fw, uint32_t ctx,
		     const struct nnp_hw_queue_cmd *cmd, struct nnp_fw_op **op);
/* Add device-memory bytes a command moved to the counters. */
void nnp_fw_count_local(struct nnp_fw *fw, uint64_t bytes);


/* A collective's state around one ring, and what the algorithms may call. */
/* The largest packet a remote link carries: chunks cross it as copies. */
#define CHUNK_MAX	NNP_FW_ICL_MAX_PACKET
/* A ring step is cut into at least this many chunks, to pipeline. */
#define CHUNKS_PER_STEP	8
/*
 * Chunks sent ahead of the receives. They must fit what one communicator
 * may hold of the next chip's port (NNP_FW_EPOCH_RX_BYTES, 3 MiB: a
 * sender past it parks until its peer receives, and a peer that is itself
 * parked sending never does): 3 chunks of CHUNK_MAX, or of two lanes of
 * LANE_CHUNK_MAX on one port.
 */
#define WINDOW		(NNP_FW_EPOCH_RX_BYTES / CHUNK_MAX)

struct coll {
	struct nnp_fw_op link;	/* first: the queue's handle on it */
	struct nnp_fw *fw;
	uint32_t nranks;
	uint32_t pos;		/* this chip's ring position */
	uint32_t rank;
	uint32_t send_port, recv_port;
	uint32_t *order;	/* rank at each position (a copy), or NULL */
	uint64_t epoch;
	uint32_t seq;		/* the collective's number */
	/*
	 * Its epoch's packets labelled below this are a failed collective's
	 * leftovers, dropped when it starts: its own seq, or in a GROUP
	 * (v1.14) the first collective's of its communicator there, whose
	 * packets may come before this one starts.
	 */
	uint32_t purge_below;
	unsigned int opcode, dtype, op;
	uint32_t root;
	uint32_t comm;		/* its id, for messages */
	size_t es;
	uint64_t count;
	uint8_t *src, *dst;	/* device memory; src NULL if unused */
	uint8_t *acc;		/* reduce-scatter's result, or a scratch copy */
	uint8_t *acc2;		/* reduce-scatter's other partial sums (fold_buf) */
	uint64_t local;		/* bytes copied within device memory */
	uint64_t chunk;		/* in elements; the same on every rank */
	bool fold_src;		/* allreduce reads src in its ring, no copy first */
	/* Where the next step goes on. */
	bool started;
	uint32_t stage;		/* allreduce: 0 reduce-scatter, 1 allgather */
	uint32_t s;		/* ring step */
	uint64_t off;		/* received, in elements */
	uint64_t sent;		/* lent (ring steps), in elements */
	uint32_t step_lent;	/* link.lent when this ring step began */
	uint32_t prev_step_lent;	/* and when the one before it began */
	/*
	 * Modeled: when each chunk received in the last ring step was ready
	 * (reduced or copied here), so when the same chunk, which this step
	 * sends on, may leave; and the latest such time used so far, so the
	 * ring's chunks leave in order. A chunk does not wait for the rest
	 * of the step before it: the steps pipeline chunk by chunk.
	 */
	uint64_t *ready;
	uint64_t nready;
	uint64_t tx_ns;
	bool half;		/* broadcast: this chunk's receive is done */
	/* Allreduce: */
	bool rs_only;		/* stop after the reduce-scatter stage */
	uint32_t avg_div;	/* AVG: divide the own segment by this; 0: no */
	uint64_t chunk_max;	/* bytes; 0: CHUNK_MAX */
	uint64_t chunk_min;	/* bytes; 0: NNP_FW_CHUNK_BYTES */
	uint32_t algo;		/* enum nnp_fw_algo, picked at its start */
	struct nnp_fw_topology topo;	/* its communicator's */
	struct nnp_fw_lanes *lanes;	/* algo other than RING: its rings */
	/* A lane's ring: at most @round_left chunks sent, then COLL_YIELD. */
	bool rationed;
	uint32_t round_left;
	/* NNP_CMD_FLAG_FUSE: in a GROUP, it may run fused with others. */
	bool fuse;
	/* A GROUP's allreduces this one runs for (fw_fuse.c), or NULL. */
	struct nnp_fw_fused *fused;
};

/* Not a status: a rationed ring sent its share of this round. */
#define COLL_YIELD	(NNP_FW_PARKED - 2)

/* Allreduce around the ring @c names, from its cursor (stage, step). */
uint16_t nnp_fw_coll_allreduce(struct coll *c);
/* Segment @k of the allreduce buffer at @base: *@n elements. */
uint8_t *nnp_fw_coll_seg(const struct coll *c, uint8_t *base, uint32_t k,
			 uint64_t *n);
/* The position @back steps before @c's. */
uint32_t nnp_fw_coll_behind(const struct coll *c, uint32_t back);
/* Elements per chunk, from the command and the ring alone. */
uint64_t nnp_fw_coll_chunk(const struct coll *c);
/* Wait until the first @want chunks @c lent came back. */
uint16_t nnp_fw_coll_lent_back(struct coll *c, uint32_t want);
/* With c->chunk set: every chunk of the first step is ready now. */
uint16_t nnp_fw_coll_ready_init(struct coll *c);

/*
 * A GROUP's small allreduces of one communicator as one (fw_fuse.c).
 * Members @member, made from @cmds: *@lead of each, the member it runs
 * in (itself, unless fused into another).
 */
void nnp_fw_fuse_group(struct nnp_fw_op **member,
		       const struct nnp_hw_queue_cmd *cmds, uint32_t n,
		       uint32_t *lead);
/* Fused @c starts: its members' inputs into its scratch, its buffer. */
uint16_t nnp_fw_fuse_gather(struct coll *c);
/* Fused @c is done: the results to its members' outputs. */
void nnp_fw_fuse_scatter(struct coll *c);
/* @c's first label: a fused one is checked under all its members'. */
uint32_t nnp_fw_fuse_first_seq(const struct coll *c);
/* @c ends: a fused one's scratch back. */
void nnp_fw_fuse_end(struct coll *c);

/*
 * What the allreduce algorithms that run several rings at once
 * (fw_algo.c) give the engine: fw->algo, registered by nnp_fw_create().
 */
struct nnp_fw_algo_ops {
	/* The algorithm of collective @opcode of @count elements on @nranks. */
	uint32_t (*pick)(const struct nnp_fw_topology *t, unsigned int opcode,
			 uint64_t count, uint32_t nranks);
	/* Collective numbers (packet labels) an allreduce by @algo takes. */
	uint32_t (*seqs)(uint32_t algo);
	/* After coll_start: make the rings of @c's algorithm. */
	uint16_t (*start)(struct coll *c);
	/* One step of all its rings: a status, or NNP_FW_PARKED. */
	uint16_t (*step)(struct coll *c);
	/* @c ends: take back what its rings lent, and @tell them of a failure. */
	void (*end)(struct coll *c, bool tell);
};

#endif /* NNP_FW_ENGINES_H */
