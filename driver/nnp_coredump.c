// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko device coredump: before the watchdog resets a device, the state
 * that led to it (registers, every queue's ring pointers and last
 * commands, the communicators, the ports) goes to the kernel's
 * devcoredump, laid out as uapi/drm/nnp_coredump.h says. A reset takes
 * all of it away, so it is taken first, from what a hung device still
 * gives: registers and host memory always, admin answers only when the
 * firmware still runs (a job timeout).
 */
#include <drm/drm_file.h>
#include <linux/devcoredump.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "nnp_drv.h"
#include "nnp_accel.h"
#include "nnp_coredump.h"

/* The records the dump has room for, by kind. */
#define NNP_COREDUMP_QUEUES	64
#define NNP_COREDUMP_COMMS	64
#define NNP_COREDUMP_PORTS	16
#define NNP_COREDUMP_LOG	32

static_assert(NNP_COREDUMP_QUEUES == NNP_HW_MAX_QUEUES);
static_assert(NNP_COREDUMP_COMMS == NNP_HW_MAX_COMMS);
static_assert(NNP_COREDUMP_PORTS == NNP_HW_MAX_PORTS);
static_assert(NNP_COREDUMP_LOG == NNP_HW_LOG_ENTRIES);
static_assert(sizeof(struct nnp_coredump_log) == sizeof(struct nnp_hw_log_entry));
static_assert(offsetof(struct nnp_coredump_header, log_size) ==
	      NNP_COREDUMP_HEADER_SIZE_V1);
static_assert(NNP_COREDUMP_MAX_SIZE ==
	      sizeof(struct nnp_coredump_header) +
	      NNP_COREDUMP_QUEUES * sizeof(struct nnp_coredump_queue) +
	      NNP_COREDUMP_COMMS * sizeof(struct nnp_coredump_comm) +
	      NNP_COREDUMP_PORTS * sizeof(struct nnp_coredump_port) +
	      NNP_COREDUMP_LOG * sizeof(struct nnp_coredump_log));

/* The dump as it is filled: each kind in its own array, packed at the end. */
struct nnp_coredump_buf {
	struct nnp_coredump_header hdr;
	struct nnp_coredump_queue queues[NNP_COREDUMP_QUEUES];
	struct nnp_coredump_comm comms[NNP_COREDUMP_COMMS];
	struct nnp_coredump_port ports[NNP_COREDUMP_PORTS];
	struct nnp_coredump_log log[NNP_COREDUMP_LOG];
};

/*
 * The process behind @file, its number in @ns, and its command name into
 * @task (@len bytes, NUL-terminated); 0 and "" if it has gone, 0 if @ns
 * does not see it.
 */
u32 nnp_file_owner(struct drm_file *file, struct pid_namespace *ns, char *task,
		   size_t len)
{
	struct task_struct *t;
	struct pid *pid;
	u32 nr = 0;

	task[0] = '\0';
	rcu_read_lock();
	pid = rcu_dereference(file->pid);
	t = pid ? pid_task(pid, PIDTYPE_TGID) : NULL;
	if (t) {
		nr = pid_nr_ns(pid, ns);
		__get_task_comm(task, len, t);
	}
	rcu_read_unlock();
	return nr;
}

static void nnp_coredump_header(struct nnp_device *ndev,
				struct nnp_coredump_header *h, u32 reason,
				int stuck_qid)
{
	memcpy(h->magic, NNP_COREDUMP_MAGIC, sizeof(h->magic));
	h->version = NNP_COREDUMP_VERSION;
	h->header_size = sizeof(*h);
	h->queue_size = sizeof(struct nnp_coredump_queue);
	h->comm_size = sizeof(struct nnp_coredump_comm);
	h->port_size = sizeof(struct nnp_coredump_port);
	h->log_size = sizeof(struct nnp_coredump_log);
	h->reason = reason;
	h->reset_count = atomic_read(&ndev->resets) + 1;
	h->stuck_qid = stuck_qid < 0 ? NNP_COREDUMP_NONE : stuck_qid;
	h->time_ns = ktime_get_real_ns();
	h->hw_version = ndev->id.hw_version;
	h->fw_version = ndev->id.fw_version;
	h->chip_id = ndev->id.chip_id;
	h->fw_status = nnp_rd(ndev, NNP_REG_FW_STATUS);
	h->fw_error = nnp_rd(ndev, NNP_REG_FW_ERROR);
	h->fw_heartbeat = nnp_rd(ndev, NNP_REG_FW_HEARTBEAT);
	h->heartbeat_idle_ms = jiffies_to_msecs(jiffies - ndev->heartbeat_seen);
	h->aq_status = nnp_rd(ndev, NNP_REG_AQ_STATUS);
	h->aq_broken = READ_ONCE(ndev->aq.broken);
	strscpy(h->serial, ndev->id.serial, sizeof(h->serial));
	strscpy(h->fw_build, ndev->id.fw_build, sizeof(h->fw_build));
}

/* Every open file's communicators, with no admin command under the lock. */
static u32 nnp_coredump_comms(struct nnp_device *ndev,
			      struct nnp_coredump_comm *out)
{
	struct drm_file *file;
	char task[TASK_COMM_LEN];
	u32 n = 0;

	mutex_lock(&ndev->drm.filelist_mutex);
	list_for_each_entry(file, &ndev->drm.filelist, lhead)
		n += nnp_comms_dump(file->driver_priv,
				    nnp_file_owner(file, &init_pid_ns, task,
						   sizeof(task)),
				    out + n, NNP_COREDUMP_COMMS - n);
	mutex_unlock(&ndev->drm.filelist_mutex);
	return n;
}

/*
 * What only the firmware knows: each communicator's status and the
 * ports. A communicator destroyed since it was listed keeps _NONE.
 */
static void nnp_coredump_ask_fw(struct nnp_device *ndev,
				struct nnp_coredump_buf *d)
{
	struct nnp_hw_port_info info[NNP_COREDUMP_PORTS];
	u32 i, n = min_t(u32, ndev->id.num_ports, NNP_COREDUMP_PORTS);

	d->hdr.flags |= NNP_COREDUMP_FW_ASKED;
	for (i = 0; i < d->hdr.num_comms; i++) {
		struct nnp_coredump_comm *c = &d->comms[i];
		u32 status;

		if (!nnp_comm_status(ndev, c->ctx, c->id, &status))
			c->status = status;
	}
	if (nnp_admin_get_ports(ndev, info, n))
		return;
	for (i = 0; i < n; i++) {
		struct nnp_coredump_port *p = &d->ports[i];

		p->port = i;
		p->state = le32_to_cpu(info[i].state);
		p->peer = le32_to_cpu(info[i].peer);
		p->tx_bytes = le64_to_cpu(info[i].tx_bytes);
		p->rx_bytes = le64_to_cpu(info[i].rx_bytes);
		p->tx_packets = le64_to_cpu(info[i].tx_packets);
		p->rx_packets = le64_to_cpu(info[i].rx_packets);
		p->errors = le64_to_cpu(info[i].errors);
	}
	d->hdr.num_ports = n;
}

/* FW_LOG: hardware interface 1.19 on. */
static bool nnp_has_fw_log(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 19;
}

/* Entry @i of the firmware's log window, in the device's byte order. */
static void nnp_coredump_log_entry(struct nnp_device *ndev, u32 i,
				   struct nnp_hw_log_entry *e)
{
	__le32 *w = (__le32 *)e;
	u32 k;

	for (k = 0; k < sizeof(*e) / 4; k++)
		w[k] = cpu_to_le32(nnp_rd(ndev, NNP_REG_FW_LOG + i * sizeof(*e) + 4 * k));
}

/*
 * The firmware's log, read from BAR0 without its help: the messages that
 * cannot have been replaced while they were read (LOG_SEQ before and
 * after), oldest first, each with its NUL.
 */
static void nnp_coredump_log(struct nnp_device *ndev, struct nnp_coredump_buf *d)
{
	struct nnp_hw_log_entry *ring = kcalloc(NNP_COREDUMP_LOG, sizeof(*ring),
						GFP_KERNEL);
	u32 first, seq, k;

	if (!ring || !nnp_has_fw_log(ndev)) {
		kfree(ring);
		return;
	}
	seq = nnp_rd(ndev, NNP_REG_FW_LOG_SEQ);
	for (k = 0; k < NNP_COREDUMP_LOG; k++)
		nnp_coredump_log_entry(ndev, k, &ring[k]);
	d->hdr.log_seq = nnp_rd(ndev, NNP_REG_FW_LOG_SEQ);
	first = d->hdr.log_seq > NNP_COREDUMP_LOG ?
		d->hdr.log_seq - NNP_COREDUMP_LOG : 0;
	for (k = first; k < seq; k++) {
		const struct nnp_hw_log_entry *e = &ring[k % NNP_COREDUMP_LOG];
		struct nnp_coredump_log *l = &d->log[d->hdr.num_log++];

		l->time_ns = le64_to_cpu(e->time_ns);
		l->seq = le32_to_cpu(e->seq);
		l->kind = le16_to_cpu(e->kind);
		memcpy(l->msg, e->msg, sizeof(l->msg) - 1);
	}
	kfree(ring);
}

/* Moves the used records of @d together after its header; returns the size. */
static size_t nnp_coredump_pack(struct nnp_coredump_buf *d)
{
	const struct nnp_coredump_header *h = &d->hdr;
	u8 *end = (u8 *)d->queues + h->num_queues * sizeof(d->queues[0]);

	memmove(end, d->comms, h->num_comms * sizeof(d->comms[0]));
	end += h->num_comms * sizeof(d->comms[0]);
	memmove(end, d->ports, h->num_ports * sizeof(d->ports[0]));
	end += h->num_ports * sizeof(d->ports[0]);
	memmove(end, d->log, h->num_log * sizeof(d->log[0]));
	end += h->num_log * sizeof(d->log[0]);
	return end - (u8 *)d;
}

/*
 * Take the device's state before a watchdog reset for @reason (the
 * queue that made no progress: @stuck_qid, else -1). The kernel keeps
 * one dump a device and drops this one if an earlier one is still
 * there. With no memory for it (vzalloc says so) the reset goes on
 * without one.
 */
void nnp_coredump(struct nnp_device *ndev, u32 reason, int stuck_qid)
{
	struct nnp_coredump_buf *d = vzalloc(sizeof(*d));

	if (!d)
		return;
	nnp_coredump_header(ndev, &d->hdr, reason, stuck_qid);
	d->hdr.num_queues = nnp_queues_dump(ndev, d->queues);
	d->hdr.num_comms = nnp_coredump_comms(ndev, d->comms);
	if (reason == DRM_NNP_RESET_JOB_TIMEOUT && !d->hdr.aq_broken)
		nnp_coredump_ask_fw(ndev, d);
	nnp_coredump_log(ndev, d);
	dev_coredumpv(&ndev->pdev->dev, d, nnp_coredump_pack(d), GFP_KERNEL);
}
