/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp workers: the threads that run the user queues of every nnp device of
 * one QEMU process.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NNP_WORKERS_H
#define HW_NNP_WORKERS_H

#include "qemu/queue.h"

struct nnp_fw;

/* Largest pool the `workers` property may ask for. */
#define NNP_WORKERS_MAX 64

/* A device's place in the pool; fields are the pool's, under its lock. */
typedef struct NnpWorkersDev {
    struct nnp_fw *fw;
    QTAILQ_ENTRY(NnpWorkersDev) next;
    bool queued;            /* in the FIFO of kicked devices */
    int64_t queued_at;      /* when it went in, get_clock() */
    bool joined;            /* kicks are taken */
    unsigned int running;   /* pool threads inside nnp_fw_run_queues() */
} NnpWorkersDev;

/*
 * At realize: @dev runs @fw's queues on the pool, which grows to @workers
 * threads, or with 0 to min(host cores, 2 * devices).
 */
void nnp_workers_join(NnpWorkersDev *dev, struct nnp_fw *fw,
                      unsigned int workers);
/* Queue work for @dev: one idle pool thread wakes, if any is idle. */
void nnp_workers_kick(NnpWorkersDev *dev);
/*
 * At exit: no kick is taken any more, and once this returns no pool thread
 * runs @dev. The last device to leave stops the pool's threads.
 */
void nnp_workers_leave(NnpWorkersDev *dev);

#endif
