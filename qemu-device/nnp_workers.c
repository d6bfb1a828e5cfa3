/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp workers: one pool of threads per QEMU process runs the user queues
 * of all its nnp devices.
 *
 * A device's own pair of workers would make 16 threads for 8 chips on a
 * 2-core host, and a ring step that hands a chunk to the next chip would
 * then cost a wake-up and a context switch of that chip's worker. The
 * pool has as many threads as the host has cores (at most two per
 * device), and a FIFO of kicked devices, each in it at most once: a
 * thread pops a device, runs nnp_fw_run_queues() on it (which stops at a
 * parked op and runs at most a batch of one queue before the others), and
 * pops the next, so the thread that hands a chunk on usually runs the
 * receiving chip itself instead of waking another thread.
 *
 * A kick wakes an idle thread only when no thread is awake, or when the
 * work has waited longer than a wake-up takes (NNP_WORKERS_LATE_NS, in
 * the kick or when a thread pops it with more behind it); otherwise the
 * awake thread takes it when its run ends. A small collective's ring
 * steps take a few microseconds each, less than waking a thread and
 * giving it a core: on a 2-core host shared with 2 vCPUs, an 8-byte
 * allreduce on 4 chips took 85-160 us when every kick found the other
 * thread idle woke it, 45-51 us now. A large one keeps a thread busy
 * folding while chunks queue for the other chips, which then wait long
 * enough to wake the second thread: 16 MiB ran at the same speed.
 *
 * Firmware commands never wait for another chip (a link op parks), so
 * fewer threads than chips cannot deadlock. Each device keeps its own
 * admin thread (nnp_pci.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "qemu/thread.h"
#include "qemu/timer.h"

#include "nnp_fw.h"
#include "nnp_workers.h"
#include "trace.h"

/* How long queued work may wait for an awake thread before another wakes. */
#define NNP_WORKERS_LATE_NS 30000

/* The one pool of this process. */
static struct {
    QemuMutex lock;         /* guards all below and the devices' fields */
    QemuCond work;          /* a device was queued, or stopping */
    QemuCond drained;       /* a leaving device's last run ended */
    QTAILQ_HEAD(, NnpWorkersDev) fifo;
    QemuThread threads[NNP_WORKERS_MAX];
    unsigned int nthreads;
    unsigned int devices;
    unsigned int idle;      /* threads waiting on @work */
    unsigned int wakeups;   /* signals sent that no thread took yet */
    bool stopping;
} pool;

/*
 * Made before main(): a device's firmware may kick it from a link's thread
 * before any device has joined (a remote link coming up during realize),
 * and such a kick must find the lock made, to be dropped under it.
 */
static void __attribute__((constructor)) nnp_workers_pool_init(void)
{
    qemu_mutex_init(&pool.lock);
    qemu_cond_init(&pool.work);
    qemu_cond_init(&pool.drained);
    QTAILQ_INIT(&pool.fifo);
}

static unsigned int nnp_workers_host_cores(void)
{
    cpu_set_t set;
    long n;

    /* Cores this process may run on, as nproc counts them. */
    if (!sched_getaffinity(0, sizeof(set), &set)) {
        return CPU_COUNT(&set);
    }
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/*
 * Whether to signal an idle thread for work queued at @queued_at, with the
 * lock held (counted if so): when no thread is awake or about to be, or
 * when the work has waited longer than a wake-up takes.
 */
static bool nnp_workers_wake_locked(int64_t queued_at)
{
    unsigned int awake = pool.nthreads - pool.idle + pool.wakeups;
    int64_t waited = get_clock() - queued_at;

    if (pool.idle <= pool.wakeups || (awake && waited <= NNP_WORKERS_LATE_NS)) {
        return false;
    }
    pool.wakeups++;
    trace_nnp_worker_wake(awake, waited);
    return true;
}

static void *nnp_workers_thread(void *opaque)
{
    NnpWorkersDev *dev;
    bool wake;

    rcu_register_thread();
    qemu_mutex_lock(&pool.lock);
    while (!pool.stopping) {
        dev = QTAILQ_FIRST(&pool.fifo);
        if (!dev) {
            pool.idle++;
            qemu_cond_wait(&pool.work, &pool.lock);
            pool.idle--;
            if (pool.wakeups) {
                pool.wakeups--;
            }
            continue;
        }
        QTAILQ_REMOVE(&pool.fifo, dev, next);
        dev->queued = false;
        dev->running++;
        /* Work waited longer than a wake-up takes: an idle thread helps. */
        wake = !QTAILQ_EMPTY(&pool.fifo) &&
               nnp_workers_wake_locked(dev->queued_at);
        qemu_mutex_unlock(&pool.lock);
        if (wake) {
            qemu_cond_signal(&pool.work);
        }
        nnp_fw_run_queues(dev->fw);
        qemu_mutex_lock(&pool.lock);
        if (!--dev->running && !dev->joined) {
            qemu_cond_broadcast(&pool.drained);
        }
    }
    qemu_mutex_unlock(&pool.lock);
    rcu_unregister_thread();
    return NULL;
}

void nnp_workers_join(NnpWorkersDev *dev, struct nnp_fw *fw,
                      unsigned int workers)
{
    unsigned int want;

    qemu_mutex_lock(&pool.lock);
    dev->fw = fw;
    dev->queued = false;
    dev->running = 0;
    dev->joined = true;
    pool.devices++;
    want = workers ? workers
                   : MIN(nnp_workers_host_cores(), 2 * pool.devices);
    want = MIN(want, NNP_WORKERS_MAX);
    /* A pool only grows: a thread too many sleeps, one too few queues. */
    while (pool.nthreads < want) {
        qemu_thread_create(&pool.threads[pool.nthreads++], "nnp-worker",
                           nnp_workers_thread, NULL, QEMU_THREAD_JOINABLE);
    }
    qemu_mutex_unlock(&pool.lock);
}

void nnp_workers_kick(NnpWorkersDev *dev)
{
    bool wake = false;

    qemu_mutex_lock(&pool.lock);
    if (dev->joined && !dev->queued) {
        dev->queued = true;
        QTAILQ_INSERT_TAIL(&pool.fifo, dev, next);
        dev->queued_at = get_clock();
        wake = nnp_workers_wake_locked(QTAILQ_FIRST(&pool.fifo)->queued_at);
    }
    qemu_mutex_unlock(&pool.lock);
    /*
     * Signalled once the lock is free, so that the woken thread does not
     * block on it at once; the caller may be a vCPU holding the BQL.
     */
    if (wake) {
        qemu_cond_signal(&pool.work);
    }
}

void nnp_workers_leave(NnpWorkersDev *dev)
{
    unsigned int i, n = 0;

    qemu_mutex_lock(&pool.lock);
    dev->joined = false;
    if (dev->queued) {
        QTAILQ_REMOVE(&pool.fifo, dev, next);
        dev->queued = false;
    }
    while (dev->running) {
        qemu_cond_wait(&pool.drained, &pool.lock);
    }
    if (!--pool.devices) {
        pool.stopping = true;
        n = pool.nthreads;
        qemu_cond_broadcast(&pool.work);
    }
    qemu_mutex_unlock(&pool.lock);
    if (!n) {
        return;
    }
    /* No device is left to kick the pool, or to join it before this ends. */
    for (i = 0; i < n; i++) {
        qemu_thread_join(&pool.threads[i]);
    }
    qemu_mutex_lock(&pool.lock);
    pool.nthreads = 0;
    pool.idle = 0;
    pool.wakeups = 0;
    pool.stopping = false;
    qemu_mutex_unlock(&pool.lock);
}
