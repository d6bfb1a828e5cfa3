/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nnp.ko: DRM accel driver for NNP-T-class training accelerators.
 * State of one device, shared by the driver's source files.
 */
#ifndef __NNP_DRV_H__
#define __NNP_DRV_H__

#include <drm/drm_device.h>
#include <drm/drm_mm.h>
#include <drm/drm_print.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/workqueue.h>

#include "nnp_hw.h"
#include "nnp_admin.h"
#include "nnp_debug.h"

#define NNP_DRIVER_DESC "NNP-T-class training accelerator"

struct dma_buf;
struct drm_file;
struct drm_nnp_comms;
struct nnp_coredump_comm;
struct nnp_coredump_queue;
struct nnp_queue;
struct nnp_user;
struct pid_namespace;
struct seq_file;

/* What IDENTIFY reported, in CPU byte order (struct nnp_hw_identify). */
struct nnp_identity {
	u32 hw_version;
	u32 fw_version;
	u32 chip_id;
	u32 caps;
	u64 mem_size;
	u16 num_ports;
	u16 num_queues;
	char serial[16];
	char fw_build[32];
};

struct nnp_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	/* Device memory through BAR2, write-combined: for scrubbing. */
	void __iomem *mem;

	/* From IDENTIFY at probe; fixed for the life of the binding. */
	struct nnp_identity id;

	struct nnp_admin_queue aq;

	/* Device memory range allocator; mm_lock guards @mm and @mem_used. */
	struct mutex mm_lock;
	struct drm_mm mm;
	u64 mem_used;
	atomic64_t mem_objects;
	/* Device memory objects with a dma-buf (nnp_gem_export.c). */
	struct mutex exports_lock;
	struct list_head exports;

	/* Context ids of open files, communicator ids of the device. */
	struct ida ctx_ida;
	struct ida comm_ida;

	/*
	 * User queues by id; queue ids are bounded by MSI-X vectors.
	 * queue_lock guards @queues, each queue's ready and dead flags and
	 * the freeing of its irq, and its doorbell's revoked and lost flags.
	 */
	struct mutex queue_lock;
	struct nnp_queue *queues[NNP_HW_MAX_QUEUES];
	unsigned int num_queues;
	/*
	 * A word per queue id that the device reads before it interrupts
	 * (hw 1.9, struct nnp_hw_queue_args): QUEUE_WAIT sets it before it
	 * sleeps, so a process polling its ring takes no interrupts. Unused
	 * on an older device, which interrupts on every batch of completions.
	 */
	__le32 *irq_arm;
	dma_addr_t irq_arm_dma;
	/* Set by remove() before unplugging: sleeping waiters leave. */
	bool unplugging;

	/* What each user holds (nnp_limits.c); guards @users and their counts. */
	struct mutex users_lock;
	struct list_head users;

	/* Reset and recovery (nnp_reset.c). */
	struct mutex reset_lock;	/* one reset at a time */
	/* Resets so far: a file opened before the last one is lost. */
	atomic_t resets;
	u32 last_reset_reason;		/* DRM_NNP_RESET_* */
	/* A reset is under way: admin waiters leave, then wait on reset_wq. */
	bool resetting;
	/* Between the halves of a PCI reset or a sleep: no other reset. */
	bool reset_held;
	unsigned long reset_start;	/* jiffies when the last one began */
	wait_queue_head_t reset_wq;
	struct delayed_work watchdog;
	/* Where a lost file's doorbell mappings point after a reset. */
	struct page *dummy_page;
	u32 last_heartbeat;
	unsigned long heartbeat_seen;	/* jiffies when it last moved */

	/* Takes the device's events to the files (nnp_events.c). */
	struct work_struct events_work;
	/* One taker at a time: the work, or a closing file's drain. */
	struct mutex events_lock;
};

/*
 * Per open file: one device context. Its memory objects hold a reference,
 * since they may outlive the file (in a mapping) and give their key back
 * to @keys when freed.
 */
struct nnp_file {
	struct kref ref;
	struct nnp_device *ndev;
	u32 ctx;
	/*
	 * The user it is charged to, for as long as the file or one of its
	 * memory objects lives; opened with CAP_SYS_RESOURCE: no limits.
	 */
	struct nnp_user *user;
	bool unlimited;
	/* Memory keys this file's objects hold: max_keys_per_file at most. */
	atomic_t keys;
	/* Communicator ids this file made. */
	DECLARE_BITMAP(comms, NNP_HW_MAX_COMMS);
	/* What fdinfo says of each, by id: NULL for none (nnp_comm.c). */
	struct mutex comm_lock;
	struct nnp_comm_label *comm_labels[NNP_HW_MAX_COMMS];
	/* ndev->resets when the context was made: any other value, lost. */
	int resets;
	/* The engine times fdinfo showed last (nnp_fdinfo.c), by NNP_HW_ENGINE_*. */
	atomic64_t busy_ns[NNP_HW_ENGINES];
	/*
	 * Events dropped with none left queued to count them on, for the
	 * next one (nnp_events.c); under drm.event_lock.
	 */
	u32 events_lost;
};

/* A reset took the file's context: every call fails with -ECANCELED. */
static inline bool nnp_file_lost(struct nnp_file *nf)
{
	return nf->resets != atomic_read(&nf->ndev->resets);
}

static inline struct nnp_device *to_nnp(struct drm_device *drm)
{
	return container_of(drm, struct nnp_device, drm);
}

static inline u32 nnp_rd(struct nnp_device *ndev, u32 reg)
{
	return readl(ndev->regs + reg);
}

static inline void nnp_wr(struct nnp_device *ndev, u32 reg, u32 val)
{
	writel(val, ndev->regs + reg);
}

/* Telemetry registers (TEMP, POWER, BUSY_NS): hw interface 1.6 on. */
static inline bool nnp_has_telemetry(struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 6;
}

/* Milliseconds to wait for the firmware: boot, admin commands, quiesce. */
extern unsigned int nnp_fw_timeout_ms;

/* nnp_coredump.c */
void nnp_coredump(struct nnp_device *ndev, u32 reason, int stuck_qid);
u32 nnp_file_owner(struct drm_file *file, struct pid_namespace *ns, char *task,
		   size_t len);

/* nnp_comm_view.c */
int nnp_comms_view(struct nnp_device *ndev, struct drm_nnp_comms *v);

/* nnp_debugfs.c */
void nnp_debugfs_init(struct nnp_device *ndev);

/* nnp_drv.c */
void nnp_file_put(struct nnp_file *nf);

/* nnp_events.c */
bool nnp_has_events(const struct nnp_device *ndev);
void nnp_events_init(struct nnp_device *ndev);
void nnp_events_start(struct nnp_device *ndev);
void nnp_events_fini(struct nnp_device *ndev);
void nnp_events_irq(struct nnp_device *ndev);
void nnp_events_drain(struct nnp_device *ndev);
void nnp_events_reset(struct nnp_device *ndev, u32 reason, int count);

/* nnp_fdinfo.c */
void nnp_show_fdinfo(struct drm_printer *p, struct drm_file *file);

/* nnp_fw.c */
int nnp_fw_boot(struct nnp_device *ndev);
int nnp_fw_identify(struct nnp_device *ndev);

/* nnp_gem.c */
int nnp_mem_init(struct nnp_device *ndev);
int nnp_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int nnp_ioctl_bo_userptr(struct drm_device *drm, void *data, struct drm_file *file);

/* nnp_gem_export.c, nnp_gem_import.c */
int nnp_exports_init(struct nnp_device *ndev);
void nnp_exports_revoke(struct nnp_device *ndev);
struct drm_gem_object *nnp_gem_prime_import(struct drm_device *dev,
					    struct dma_buf *dmabuf);
int nnp_ioctl_bo_import(struct drm_device *drm, void *data, struct drm_file *file);

/* nnp_queue.c */
int nnp_ioctl_queue_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int nnp_ioctl_queue_destroy(struct drm_device *drm, void *data,
			    struct drm_file *file);
int nnp_ioctl_queue_reset(struct drm_device *drm, void *data,
			  struct drm_file *file);
int nnp_ioctl_queue_wait(struct drm_device *drm, void *data,
			 struct drm_file *file);
void nnp_queues_release(struct nnp_file *nf);
int nnp_queues_init(struct nnp_device *ndev);
void nnp_queues_wake_all(struct nnp_device *ndev);
void nnp_queues_detach_irqs(struct nnp_device *ndev);
void nnp_queues_fini(struct drm_device *drm, void *data);
void nnp_queues_lost(struct nnp_device *ndev);
int nnp_queues_find_stuck(struct nnp_device *ndev, unsigned long timeout);
void nnp_queues_show(struct nnp_device *ndev, struct seq_file *m);
u32 nnp_queues_dump(struct nnp_device *ndev, struct nnp_coredump_queue *out);

/* nnp_reset.c */
int nnp_reset_init(struct nnp_device *ndev);
void nnp_reset_start(struct nnp_device *ndev);
void nnp_reset_fini(struct nnp_device *ndev);
int nnp_reset(struct nnp_device *ndev, u32 reason);
const char *nnp_reset_reason_name(u32 reason);
extern const struct pci_error_handlers nnp_err_handlers;
extern const struct dev_pm_ops nnp_pm_ops;

/* nnp_limits.c: what one user may hold of each device-wide resource. */
enum nnp_limit {
	NNP_LIMIT_CONTEXTS,
	NNP_LIMIT_QUEUES,
	NNP_LIMIT_COMMS,
	NNP_LIMIT_KEYS,
	NNP_LIMIT_DEVICE_MEM,	/* in bytes */
	NNP_LIMIT_COUNT
};

int nnp_user_open(struct nnp_file *nf);
void nnp_user_close(struct nnp_file *nf);
int nnp_user_charge(struct nnp_file *nf, enum nnp_limit what);
void nnp_user_uncharge(struct nnp_file *nf, enum nnp_limit what);
int nnp_user_charge_n(struct nnp_file *nf, enum nnp_limit what, u64 n);
void nnp_user_uncharge_n(struct nnp_file *nf, enum nnp_limit what, u64 n);

/* nnp_comm.c */
int nnp_ioctl_comm_create(struct drm_device *drm, void *data,
			  struct drm_file *file);
int nnp_ioctl_comm_destroy(struct drm_device *drm, void *data,
			   struct drm_file *file);
int nnp_ioctl_comm_status(struct drm_device *drm, void *data,
			  struct drm_file *file);
int nnp_comm_status(struct nnp_device *ndev, u32 ctx, u32 comm, u32 *status);
int nnp_ioctl_comm_topology(struct drm_device *drm, void *data,
			    struct drm_file *file);
int nnp_ioctl_comm_routes(struct drm_device *drm, void *data,
			  struct drm_file *file);
void nnp_comms_release(struct nnp_file *nf);
void nnp_comms_show(struct nnp_file *nf, struct seq_file *m);
void nnp_comms_fdinfo(struct nnp_file *nf, struct drm_printer *p);
u32 nnp_comms_dump(struct nnp_file *nf, u32 pid, struct nnp_coredump_comm *out,
		   u32 room);

/* nnp_query.c */
int nnp_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file);

/* nnp_sysfs.c, nnp_sysfs_ports.c, nnp_hwmon.c */
extern const struct attribute_group *nnp_dev_groups[];
int nnp_sysfs_ports_init(struct nnp_device *ndev);
int nnp_hwmon_init(struct nnp_device *ndev);

#endif /* __NNP_DRV_H__ */
