/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp: PCIe device model of an NNP-T-class training accelerator.
 *
 * Thin glue between QEMU and the firmware simulator (firmware-sim/), which
 * holds the device's behaviour: this file owns the PCI function (config
 * space, BAR0 registers, BAR2 device memory, MSI-X on BAR4), DMA into guest
 * memory, and the threads that run the firmware's own side off the vCPU
 * threads: booting and the admin queue on one, the heartbeat on another,
 * so that an admin command waiting on a user's command cannot stop it.
 * User queue commands
 * run on the process's pool of workers, shared by all devices
 * (nnp_workers.c).
 *
 * -device nnp,chip-id=N,mem-size=SIZE[,num-ports=P][,fw-boot-ms=MS]
 *        [,fabric=TOPOLOGY]   (inter-chip links: see nnp_fabric.c)
 *        [,workers=N]         (pool threads; 0: min(host cores, 2 * devices))
 *        [,shadow-doorbells=on|off]
 *                             (off: hardware interface 1.10, no shadow
 *                             doorbells, for drivers' older path; default on)
 * Monitor: qom-set ID link-down|link-up PORT, qom-set ID fault SPEC.
 *        [,icl-secret=SECRET-ID,remote=PORT-CHIP.PORT:listen|connect:ADDR;...]
 *                             (links to other QEMUs: see nnp_icl_socket.c)
 *        [,icl-share=on|off]  (with remote: device memory in a sealed memfd,
 *                             shared with peers on unix sockets; default on)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qemu/cutils.h"
#include "qemu/memfd.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "system/dma.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "nnp_fabric.h"
#include "nnp_fw.h"
#include "nnp_icl_socket.h"
#include "nnp_workers.h"
#include "trace.h"

#define TYPE_NNP_PCI "nnp"
OBJECT_DECLARE_SIMPLE_TYPE(NnpState, NNP_PCI)

/* Longest the firmware thread sleeps when it has nothing timed to do. */
#define NNP_FW_IDLE_WAIT_MS 100

struct NnpState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion mem;

    struct nnp_fw *fw;
    NnpIclSockets *icl;      /* ports linked to other processes, or NULL */

    QemuThread thread;
    QemuThread beat_thread;  /* the heartbeat, apart from the admin work */
    QemuMutex lock;          /* guards the admin kick and stopping */
    QemuCond cond;           /* admin thread */
    QemuCond beat_cond;      /* heartbeat thread: signalled to stop */
    bool kick;
    bool stopping;
    NnpWorkersDev workers;   /* user queues, on the process's pool */

    /* properties */
    char *fabric;
    char *remote;
    char *icl_secret;        /* id of the secret object for remote links */
    uint32_t chip_id;
    uint64_t mem_size;
    uint16_t num_ports;
    uint32_t fw_boot_ms;
    uint32_t heartbeat_ms;
    /* the modeled clock's, docs/architecture.md; 0: NNP-T's figure */
    uint32_t icl_mbps;
    uint32_t icl_latency_ns;
    uint32_t hbm_mbps;
    uint32_t pcie_mbps;
    uint32_t pcie_latency_ns;
    uint32_t cmd_overhead_ns;
    uint32_t nworkers;       /* property "workers" */
    bool icl_share;
    bool shadow_doorbells;
    bool no_call_check;      /* property "call-check" off */
    bool timing_only;        /* property "timing-only" */
};

static void nnp_kick(NnpState *s, unsigned int what)
{
    bool admin = false;

    if (what & NNP_FW_KICK_ADMIN) {
        qemu_mutex_lock(&s->lock);
        admin = !s->kick;
        s->kick = true;
        qemu_mutex_unlock(&s->lock);
    }
    /*
     * Signalled once the lock is free, so that the woken thread does not
     * block on it at once; the caller may be a vCPU holding the BQL.
     */
    if (admin) {
        qemu_cond_signal(&s->cond);
    }
    if (what & NNP_FW_KICK_QUEUES) {
        nnp_workers_kick(&s->workers);
    }
}

static uint64_t nnp_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    NnpState *s = opaque;
    uint32_t val = nnp_fw_reg_read(s->fw, addr);

    trace_nnp_mmio_read(s->chip_id, addr, val);
    return val;
}

static void nnp_regs_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    NnpState *s = opaque;
    unsigned int kick;

    trace_nnp_mmio_write(s->chip_id, addr, val);
    kick = nnp_fw_reg_write(s->fw, addr, val);
    if (kick) {
        trace_nnp_doorbell(s->chip_id, addr, val, kick);
        nnp_kick(s, kick);
    }
}

static const MemoryRegionOps nnp_regs_ops = {
    .read = nnp_regs_read,
    .write = nnp_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ---- host callbacks for the firmware ---- */

static int nnp_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
    NnpState *s = opaque;
    int ret = pci_dma_read(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK ? 0 : -1;

    trace_nnp_dma_read(s->chip_id, addr, len, ret);
    return ret;
}

static int nnp_dma_write(void *opaque, uint64_t addr, const void *buf,
                         size_t len)
{
    NnpState *s = opaque;
    int ret = pci_dma_write(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK ? 0 : -1;

    trace_nnp_dma_write(s->chip_id, addr, len, ret);
    return ret;
}

/*
 * Guest RAM for a copy to use in place, instead of a bounce through
 * dma_read/dma_write. Anything else (MMIO, a hole, bus mastering off) is
 * refused before it is touched, so that the firmware's fallback through
 * dma_read/dma_write reports the fault, and no MMIO read happens twice.
 */
static void *nnp_dma_map(void *opaque, uint64_t addr, uint64_t *len,
                         bool write)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);
    AddressSpace *as = pci_get_address_space(pdev);
    DMADirection dir = write ? DMA_DIRECTION_FROM_DEVICE
                             : DMA_DIRECTION_TO_DEVICE;
    dma_addr_t mapped = *len;
    hwaddr xlat, plen = *len;
    ram_addr_t ram_offset;
    MemoryRegion *mr;
    void *p;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(as, addr, &xlat, &plen, write,
                                 MEMTXATTRS_UNSPECIFIED);
    if (!memory_access_is_direct(mr, write, MEMTXATTRS_UNSPECIFIED)) {
        return NULL;
    }
    p = pci_dma_map(pdev, addr, &mapped, dir);
    if (p && !memory_region_from_host(p, &ram_offset)) {
        /* The memory map changed under us: a bounce buffer, not RAM. */
        pci_dma_unmap(pdev, p, mapped, dir, 0);
        p = NULL;
    }
    if (p) {
        *len = mapped;
    }
    trace_nnp_dma_map(NNP_PCI(opaque)->chip_id, addr, *len, write,
                      p ? mapped : 0);
    return p;
}

static void nnp_dma_unmap(void *opaque, void *ptr, uint64_t len, bool write,
                          uint64_t done)
{
    pci_dma_unmap(PCI_DEVICE(opaque), ptr, len,
                  write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE,
                  done);
}

static void nnp_raise_irq(void *opaque, unsigned int vector)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);

    /* Called from the firmware thread and from MMIO writes alike. */
    BQL_LOCK_GUARD();
    trace_nnp_irq(NNP_PCI(opaque)->chip_id, vector, msix_enabled(pdev));
    if (msix_enabled(pdev)) {
        msix_notify(pdev, vector);
    }
}

static uint64_t nnp_now_ns(void *opaque)
{
    /* Virtual time: the firmware's clock stops while the VM is paused. */
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void nnp_guest_error(void *opaque, const char *msg)
{
    NnpState *s = opaque;

    qemu_log_mask(LOG_GUEST_ERROR, "nnp[chip %u]: %s\n", s->chip_id, msg);
}

/* A link or a peer failed a command: not the guest's mistake. */
static void nnp_warning(void *opaque, const char *msg)
{
    NnpState *s = opaque;

    trace_nnp_link_failure(s->chip_id, msg);
}

static int nnp_icl_tx(void *opaque, unsigned int port, uint64_t epoch,
                      uint32_t seq, bool abort, uint64_t model_ns,
                      const void *data, size_t len)
{
    NnpState *s = opaque;
    int ret = s->icl ? nnp_icl_sockets_send(s->icl, port, epoch, seq, abort,
                                            model_ns, data, len)
                     : -1;

    trace_nnp_icl_tx(s->chip_id, port, epoch, seq, abort, len, ret);
    return ret;
}

static int nnp_icl_tx_lent(void *opaque, unsigned int port, uint64_t epoch,
                           uint32_t seq, uint64_t model_ns, uint64_t offset,
                           size_t len, uint32_t tag)
{
    NnpState *s = opaque;
    int ret = s->icl ? nnp_icl_sockets_send_lent(s->icl, port, epoch, seq,
                                                 model_ns, offset, len, tag)
                     : -1;

    trace_nnp_icl_tx_lent(s->chip_id, port, seq, offset, len, tag, ret);
    return ret;
}

/* With firmware locks held: queued, never waits. */
static void nnp_icl_give_back(void *opaque, unsigned int port, uint32_t tag)
{
    NnpState *s = opaque;

    if (s->icl) {
        nnp_icl_sockets_give_back(s->icl, port, tag);
    }
}

/* With firmware locks held: added up, never waits. */
static void nnp_icl_credit(void *opaque, unsigned int port, size_t len)
{
    NnpState *s = opaque;

    if (s->icl) {
        nnp_icl_sockets_credit(s->icl, port, len);
    }
}

static void nnp_icl_reclaim(void *opaque, unsigned int port,
                            const uint32_t *tags, size_t n)
{
    NnpState *s = opaque;

    if (s->icl) {
        nnp_icl_sockets_reclaim(s->icl, port, tags, n);
    }
}

/* No lock held: the connection ends, never waiting. */
static void nnp_icl_drop(void *opaque, unsigned int port)
{
    NnpState *s = opaque;

    if (s->icl) {
        nnp_icl_sockets_drop(s->icl, port);
    }
}

/* No lock held: the far end hears our chip stopped, or runs again. */
static void nnp_icl_chip_state(void *opaque, unsigned int port, bool up)
{
    NnpState *s = opaque;

    if (s->icl) {
        nnp_icl_sockets_chip_state(s->icl, port, up);
    }
}

/* Device memory's pages handed back to the host: they read as zero after. */
static int nnp_mem_discard(void *opaque)
{
    NnpState *s = opaque;

    return ram_block_discard_range(s->mem.ram_block, 0, s->mem_size);
}

/*
 * The device memory: RAM, or with remote links that may share it a
 * memfd sealed against shrinking and growing, so that a peer on this
 * host can map it and rely on its size. Not yet against writes and new
 * seals: nnp_icl_shm_share() adds those once the RAM block has mapped it
 * writable. Returns its fd, -1 if not shared; false on failure.
 */
static bool nnp_mem_init(NnpState *s, int *fd, Error **errp)
{
    *fd = -1;
    if (!s->remote || !s->icl_share) {
        return memory_region_init_ram(&s->mem, OBJECT(s), "nnp-mem",
                                      s->mem_size, errp);
    }
    *fd = qemu_memfd_create("nnp-mem", s->mem_size, false, 0,
                            F_SEAL_SHRINK | F_SEAL_GROW, errp);
    if (*fd < 0) {
        return false;
    }
    /* The RAM block owns the fd from here and closes it when freed. */
    if (!memory_region_init_ram_from_fd(&s->mem, OBJECT(s), "nnp-mem",
                                        s->mem_size, RAM_SHARED, *fd, 0,
                                        errp)) {
        close(*fd);
        *fd = -1;
        return false;
    }
    vmstate_register_ram(&s->mem, DEVICE(s));
    return true;
}

/* A packet or a deadline for a parked command: the workers go on. */
static void nnp_fw_kick(void *opaque, unsigned int what)
{
    nnp_kick(opaque, what);
}

/* ---- firmware thread ---- */

static void *nnp_fw_thread(void *opaque)
{
    NnpState *s = opaque;

    rcu_register_thread();
    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (!s->kick) {
            uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
            uint64_t due = nnp_fw_next_deadline_ns(s->fw);
            uint64_t wait_ms = NNP_FW_IDLE_WAIT_MS;

            if (due > now && (due - now) / SCALE_MS < wait_ms) {
                wait_ms = (due - now + SCALE_MS - 1) / SCALE_MS;
            } else if (due <= now) {
                wait_ms = 0;
            }
            if (wait_ms) {
                qemu_cond_timedwait(&s->cond, &s->lock, wait_ms);
            }
        }
        s->kick = false;
        qemu_mutex_unlock(&s->lock);
        nnp_fw_run(s->fw);
        qemu_mutex_lock(&s->lock);
    }
    qemu_mutex_unlock(&s->lock);
    rcu_unregister_thread();
    return NULL;
}

/*
 * The heartbeat on a thread of its own: the firmware thread can wait in an
 * admin command for a user's command to finish (a long copy), and the
 * driver's watchdog resets the device when the heartbeat stops. Twice a
 * period, so that a beat is never a whole period late.
 */
static void *nnp_beat_thread(void *opaque)
{
    NnpState *s = opaque;
    uint32_t wait_ms = MAX(s->heartbeat_ms / 2, 1);

    rcu_register_thread();
    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        qemu_cond_timedwait(&s->beat_cond, &s->lock, wait_ms);
        if (s->stopping) {
            break;
        }
        qemu_mutex_unlock(&s->lock);
        nnp_fw_beat(s->fw);
        qemu_mutex_lock(&s->lock);
    }
    qemu_mutex_unlock(&s->lock);
    rcu_unregister_thread();
    return NULL;
}

/* ---- PCI device ---- */

static void nnp_realize(PCIDevice *pdev, Error **errp)
{
    NnpState *s = NNP_PCI(pdev);
    struct nnp_fw_host host = {
        .opaque = s,
        .dma_read = nnp_dma_read,
        .dma_write = nnp_dma_write,
        .dma_map = nnp_dma_map,
        .dma_unmap = nnp_dma_unmap,
        .raise_irq = nnp_raise_irq,
        .now_ns = nnp_now_ns,
        .guest_error = nnp_guest_error,
        .warning = nnp_warning,
        .icl_tx = nnp_icl_tx,
        .icl_tx_lent = nnp_icl_tx_lent,
        .icl_give_back = nnp_icl_give_back,
        .icl_reclaim = nnp_icl_reclaim,
        .icl_drop = nnp_icl_drop,
        .icl_credit = nnp_icl_credit,
        .icl_chip_state = nnp_icl_chip_state,
        .kick = nnp_fw_kick,
        /* A memfd a peer maps is sealed against writes: cleared instead. */
        .mem_discard = s->remote && s->icl_share ? NULL : nnp_mem_discard,
    };
    struct nnp_fw_config cfg = {
        .chip_id = s->chip_id,
        .mem_size = s->mem_size,
        .num_ports = s->num_ports,
        .boot_time_ms = s->fw_boot_ms,
        .heartbeat_ms = s->heartbeat_ms,
        .icl_mbps = s->icl_mbps,
        .icl_latency_ns = s->icl_latency_ns,
        .hbm_mbps = s->hbm_mbps,
        .pcie_mbps = s->pcie_mbps,
        .pcie_latency_ns = s->pcie_latency_ns,
        .cmd_overhead_ns = s->cmd_overhead_ns,
        .no_shadow_doorbells = !s->shadow_doorbells,
        .timing_only = s->timing_only,
    };
    unsigned int nvec = NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES);
    const char *why = NULL;
    unsigned int i;
    int mem_fd;

    if (s->mem_size < NNP_MEM_SIZE_MIN || s->mem_size > NNP_MEM_SIZE_MAX ||
        !is_power_of_2(s->mem_size)) {
        error_setg(errp, "nnp: mem-size must be a power of two from 1M to 64G");
        return;
    }
    if (s->nworkers > NNP_WORKERS_MAX) {
        error_setg(errp, "nnp: workers must be 0 (automatic) to %u",
                   NNP_WORKERS_MAX);
        return;
    }
    if (!nnp_mem_init(s, &mem_fd, errp)) {
        return;
    }
    cfg.mem = memory_region_get_ram_ptr(&s->mem);
    s->fw = nnp_fw_create(&cfg, &host, &why);
    if (!s->fw) {
        error_setg(errp, "nnp: %s", why);
        return;
    }
    nnp_fw_set_call_check(s->fw, !s->no_call_check);

    pcie_endpoint_cap_init(pdev, 0x80);
    /* The guest's PCI core may reset the function: sysfs "reset", VFIO. */
    pcie_cap_flr_init(pdev);
    if (msix_init_exclusive_bar(pdev, nvec, NNP_BAR_MSIX, errp)) {
        nnp_fw_destroy(s->fw);
        s->fw = NULL;
        return;
    }
    for (i = 0; i < nvec; i++) {
        msix_vector_use(pdev, i);
    }

    memory_region_init_io(&s->regs, OBJECT(s), &nnp_regs_ops, s, "nnp-regs",
                          NNP_BAR0_SIZE);
    pci_register_bar(pdev, NNP_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs);
    pci_register_bar(pdev, NNP_BAR_MEM,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->mem);

    if (s->fabric && !nnp_fabric_join(s->fabric, s->chip_id, s->fw, errp)) {
        msix_uninit_exclusive_bar(pdev);
        nnp_fw_destroy(s->fw);
        s->fw = NULL;
        return;
    }
    if (s->remote) {
        s->icl = nnp_icl_sockets_new(s->remote, s->icl_secret, s->fw,
                                     s->chip_id, s->num_ports, mem_fd,
                                     s->mem_size, errp);
        if (!s->icl) {
            if (s->fabric) {
                nnp_fabric_leave(s->fw);
            }
            msix_uninit_exclusive_bar(pdev);
            nnp_fw_destroy(s->fw);
            s->fw = NULL;
            return;
        }
    }

    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->cond);
    qemu_cond_init(&s->beat_cond);
    nnp_workers_join(&s->workers, s->fw, s->nworkers);
    qemu_thread_create(&s->thread, "nnp-fw", nnp_fw_thread, s,
                       QEMU_THREAD_JOINABLE);
    qemu_thread_create(&s->beat_thread, "nnp-beat", nnp_beat_thread, s,
                       QEMU_THREAD_JOINABLE);
}

static void nnp_exit(PCIDevice *pdev)
{
    NnpState *s = NNP_PCI(pdev);

    /*
     * Remote links first: their ports go down, so firmware threads waiting
     * on them wake, and later sends fail without touching a socket.
     */
    if (s->icl) {
        nnp_icl_sockets_stop(s->icl);
    }
    qemu_mutex_lock(&s->lock);
    s->stopping = true;
    qemu_cond_signal(&s->cond);
    qemu_cond_signal(&s->beat_cond);
    qemu_mutex_unlock(&s->lock);
    qemu_thread_join(&s->thread);
    qemu_thread_join(&s->beat_thread);
    /* Kicks from the peers' packets are dropped from now on. */
    nnp_workers_leave(&s->workers);
    qemu_cond_destroy(&s->cond);
    qemu_cond_destroy(&s->beat_cond);
    qemu_mutex_destroy(&s->lock);

    msix_uninit_exclusive_bar(pdev);
    if (s->fabric) {
        nnp_fabric_leave(s->fw);
    }
    /* No firmware thread is left to send on the links. */
    nnp_icl_sockets_free(s->icl);
    s->icl = NULL;
    nnp_fw_destroy(s->fw);
    s->fw = NULL;
}

static void nnp_reset(DeviceState *dev)
{
    NnpState *s = NNP_PCI(dev);

    /* The firmware finishes the reset on its own thread. */
    nnp_fw_reset(s->fw);
    nnp_kick(s, NNP_FW_KICK_ADMIN);
}

/* An FLR resets the device as a power-on does (nnp_reset) and config space. */
static void nnp_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                             int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

static const Property nnp_props[] = {
    DEFINE_PROP_STRING("fabric", NnpState, fabric),
    DEFINE_PROP_STRING("remote", NnpState, remote),
    DEFINE_PROP_STRING("icl-secret", NnpState, icl_secret),
    DEFINE_PROP_UINT32("chip-id", NnpState, chip_id, 0),
    DEFINE_PROP_SIZE("mem-size", NnpState, mem_size, 256 * MiB),
    DEFINE_PROP_UINT16("num-ports", NnpState, num_ports, 4),
    DEFINE_PROP_UINT32("fw-boot-ms", NnpState, fw_boot_ms, 20),
    DEFINE_PROP_UINT32("heartbeat-ms", NnpState, heartbeat_ms, 100),
    DEFINE_PROP_UINT32("icl-mbps", NnpState, icl_mbps, 0),
    DEFINE_PROP_UINT32("icl-latency-ns", NnpState, icl_latency_ns, 0),
    DEFINE_PROP_UINT32("hbm-mbps", NnpState, hbm_mbps, 0),
    DEFINE_PROP_UINT32("pcie-mbps", NnpState, pcie_mbps, 0),
    DEFINE_PROP_UINT32("pcie-latency-ns", NnpState, pcie_latency_ns, 0),
    DEFINE_PROP_UINT32("cmd-overhead-ns", NnpState, cmd_overhead_ns, 0),
    DEFINE_PROP_UINT32("workers", NnpState, nworkers, 0),
    DEFINE_PROP_BOOL("icl-share", NnpState, icl_share, true),
    DEFINE_PROP_BOOL("shadow-doorbells", NnpState, shadow_doorbells, true),
    DEFINE_PROP_BOOL("timing-only", NnpState, timing_only, false),
};

/* Monitor: qom-set /machine/peripheral/ID link-down PORT (or link-up). */
static void nnp_set_link(Object *obj, const char *value, bool up, Error **errp)
{
    NnpState *s = NNP_PCI(obj);
    unsigned int port;

    if (qemu_strtoui(value, NULL, 10, &port) || port >= s->num_ports) {
        error_setg(errp, "nnp: no port '%s'", value);
        return;
    }
    if (s->icl && nnp_icl_sockets_has_port(s->icl, port)) {
        /* The far end is in another process: tell it too. */
        nnp_icl_sockets_set_link(s->icl, port, up);
        return;
    }
    nnp_fw_link_set(s->fw, port, up);
}

static void nnp_set_link_down(Object *obj, const char *value, Error **errp)
{
    nnp_set_link(obj, value, false, errp);
}

static void nnp_set_link_up(Object *obj, const char *value, Error **errp)
{
    nnp_set_link(obj, value, true, errp);
}

/*
 * Monitor: qom-set /machine/peripheral/ID fault SPEC, a fault on demand
 * (hang, die, queue-stuck=Q, msix-lost=N, dma-fail=N, link-drop=P,
 * link-delay=P:MS, none; see docs/hw-interface.md).
 */
static void nnp_set_fault(Object *obj, const char *value, Error **errp)
{
    NnpState *s = NNP_PCI(obj);
    enum nnp_fw_fault fault;

    if (!s->fw) {
        error_setg(errp, "nnp: faults can be set on a running device only");
        return;
    }
    if (nnp_fw_fault_parse(s->fw, value, &fault)) {
        error_setg(errp, "nnp: bad fault '%s'", value);
        return;
    }
    nnp_kick(s, NNP_FW_KICK_ADMIN | NNP_FW_KICK_QUEUES);
}

/*
 * call-check: whether each collective's ranks are checked to call it
 * alike (on by default). Settable on a running device too (qom-set), so
 * that make bench measures the check's cost in one VM.
 */
static bool nnp_get_call_check(Object *obj, Error **errp)
{
    return !NNP_PCI(obj)->no_call_check;
}

static void nnp_set_call_check(Object *obj, bool on, Error **errp)
{
    NnpState *s = NNP_PCI(obj);

    s->no_call_check = !on;
    if (s->fw) {
        nnp_fw_set_call_check(s->fw, on);
    }
}

static const VMStateDescription nnp_vmstate = {
    .name = "nnp",
    .unmigratable = 1,
};

static void nnp_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);

    pc->realize = nnp_realize;
    pc->exit = nnp_exit;
    pc->config_write = nnp_write_config;
    pc->vendor_id = NNP_PCI_VENDOR_ID;
    pc->device_id = NNP_PCI_DEVICE_ID;
    pc->revision = NNP_PCI_REVISION;
    pc->class_id = NNP_PCI_CLASS;

    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    dc->desc = "NNP-T-class deep-learning training accelerator";
    device_class_set_props(dc, nnp_props);
    dc->vmsd = &nnp_vmstate;
    device_class_set_legacy_reset(dc, nnp_reset);
    object_class_property_add_str(oc, "link-down", NULL, nnp_set_link_down);
    object_class_property_add_str(oc, "link-up", NULL, nnp_set_link_up);
    object_class_property_add_str(oc, "fault", NULL, nnp_set_fault);
    object_class_property_add_bool(oc, "call-check", nnp_get_call_check,
                                   nnp_set_call_check);
}

static const TypeInfo nnp_info = {
    .name = TYPE_NNP_PCI,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(NnpState),
    .class_init = nnp_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void nnp_register_types(void)
{
    type_register_static(&nnp_info);
}

type_init(nnp_register_types)
