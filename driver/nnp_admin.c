// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko admin queue: one submission and one completion ring in coherent
 * DMA memory, a doorbell register, completions found by their phase tag and
 * signalled on MSI-X vector 0.
 */
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>

#include "nnp_drv.h"
#include "nnp_trace.h"

#define NNP_AQ_DEPTH 16

static bool nnp_admin_cqe_ready(struct nnp_admin_queue *aq)
{
	return (le16_to_cpu(READ_ONCE(aq->cq[aq->cq_head].phase)) &
		NNP_CQE_PHASE) == aq->phase;
}

void nnp_admin_irq(struct nnp_device *ndev)
{
	wake_up(&ndev->aq.wq);
}

/* No interrupts, no admin queue, and a reset, which stops every user queue. */
static void nnp_admin_stop_device(struct nnp_device *ndev)
{
	nnp_wr(ndev, NNP_REG_INT_ENABLE, 0);
	nnp_wr(ndev, NNP_REG_AQ_CTRL, 0);
	nnp_wr(ndev, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
}

/*
 * Stop the device touching host memory and wait until no command is
 * executing, so that rings and pages can be freed.
 */
static void nnp_admin_quiesce(void *data)
{
	struct nnp_device *ndev = data;
	u32 status;

	nnp_admin_stop_device(ndev);
	if (readl_poll_timeout(ndev->regs + NNP_REG_AQ_STATUS, status,
			       !(status & NNP_AQ_STATUS_BUSY), 100,
			       nnp_fw_timeout_ms * USEC_PER_MSEC))
		drm_warn_once(&ndev->drm,
			      "device still busy after reset\n");
	complete_all(&ndev->aq.quiesced);
}

/*
 * For memory freed once the device is unplugged (drm_dev_enter() fails):
 * unbinding unplugs first and resets the device a little later, and until
 * that reset the device may still write what a file is about to free.
 */
void nnp_admin_wait_quiesced(struct nnp_device *ndev)
{
	wait_for_completion(&ndev->aq.quiesced);
}

/* Program the rings (empty, from slot 0) and enable the queue. */
static int nnp_admin_start(struct nnp_device *ndev)
{
	struct nnp_admin_queue *aq = &ndev->aq;
	u32 status;

	memset(aq->sq, 0, NNP_AQ_DEPTH * sizeof(*aq->sq));
	memset(aq->cq, 0, NNP_AQ_DEPTH * sizeof(*aq->cq));
	aq->sq_tail = 0;
	aq->cq_head = 0;
	aq->phase = NNP_CQE_PHASE;
	aq->broken = false;

	nnp_wr(ndev, NNP_REG_AQ_SQ_BASE_LO, lower_32_bits(aq->sq_dma));
	nnp_wr(ndev, NNP_REG_AQ_SQ_BASE_HI, upper_32_bits(aq->sq_dma));
	nnp_wr(ndev, NNP_REG_AQ_CQ_BASE_LO, lower_32_bits(aq->cq_dma));
	nnp_wr(ndev, NNP_REG_AQ_CQ_BASE_HI, upper_32_bits(aq->cq_dma));
	nnp_wr(ndev, NNP_REG_AQ_DEPTH, NNP_AQ_DEPTH);
	nnp_wr(ndev, NNP_REG_INT_STATUS, NNP_INT_ALL);
	/* Events from 1.17, by the register: IDENTIFY may not have run yet. */
	nnp_wr(ndev, NNP_REG_INT_ENABLE, NNP_INT_ADMIN_CQ |
	       ((nnp_rd(ndev, NNP_REG_HW_VERSION) & 0xffff) >= 17 ?
		NNP_INT_FW_EVENT : 0));
	nnp_wr(ndev, NNP_REG_AQ_CTRL, NNP_AQ_CTRL_ENABLE);

	status = nnp_rd(ndev, NNP_REG_AQ_STATUS);
	if (!(status & NNP_AQ_STATUS_READY)) {
		drm_err(&ndev->drm,
			"admin queue did not start: status 0x%x, fw error %u\n",
			status, nnp_rd(ndev, NNP_REG_FW_ERROR));
		aq->broken = true;
		return -EIO;
	}
	return 0;
}

int nnp_admin_init(struct nnp_device *ndev)
{
	struct nnp_admin_queue *aq = &ndev->aq;
	struct device *dev = &ndev->pdev->dev;
	int ret;

	mutex_init(&aq->lock);
	init_waitqueue_head(&aq->wq);
	init_completion(&aq->quiesced);
	aq->sq = dmam_alloc_coherent(dev, NNP_AQ_DEPTH * sizeof(*aq->sq),
				     &aq->sq_dma, GFP_KERNEL);
	aq->cq = dmam_alloc_coherent(dev, NNP_AQ_DEPTH * sizeof(*aq->cq),
				     &aq->cq_dma, GFP_KERNEL);
	if (!aq->sq || !aq->cq)
		return -ENOMEM;

	/* From here on the device may DMA into the rings: undo on unbind. */
	ret = devm_add_action_or_reset(dev, nnp_admin_quiesce, ndev);
	if (ret)
		return ret;
	return nnp_admin_start(ndev);
}

/*
 * A reset's first half, with ndev->resetting set: a submitter waiting for
 * the device leaves at once and lets go of the lock. The device is reset:
 * it stops every user queue, drops all contexts, keys and queues and zeroes
 * its memory. It stays stopped until nnp_admin_restart(), however long: a
 * PCI function reset or a system sleep may come in between.
 */
void nnp_admin_stop(struct nnp_device *ndev)
{
	mutex_lock(&ndev->aq.lock);
	nnp_admin_stop_device(ndev);
	mutex_unlock(&ndev->aq.lock);
}

/*
 * The second half: the firmware boots again from a reset of its own
 * (whatever happened to the device meanwhile) and the admin queue starts
 * on the same rings.
 */
int nnp_admin_restart(struct nnp_device *ndev)
{
	struct nnp_admin_queue *aq = &ndev->aq;
	int ret;

	mutex_lock(&aq->lock);
	/* READY comes only once the device has finished its reset. */
	ret = nnp_fw_boot(ndev);
	if (!ret)
		ret = nnp_admin_start(ndev);
	else
		aq->broken = true;
	mutex_unlock(&aq->lock);
	return ret;
}

static int nnp_admin_status_to_errno(u16 status)
{
	switch (status) {
	case NNP_STATUS_SUCCESS:
		return 0;
	case NNP_STATUS_INVALID_OPCODE:
		return -EOPNOTSUPP;
	case NNP_STATUS_INVALID_FIELD:
		return -EINVAL;
	case NNP_STATUS_BUFFER_TOO_SMALL:
	case NNP_STATUS_NO_RESOURCES:
		return -ENOSPC;
	case NNP_STATUS_BUSY:
		return -EBUSY;
	case NNP_STATUS_NOT_FOUND:
		return -ENOENT;
	default:
		return -EIO;
	}
}

/* A completion to read, or a reset that makes the wait pointless. */
static bool nnp_admin_wait_over(struct nnp_device *ndev)
{
	return nnp_admin_cqe_ready(&ndev->aq) || READ_ONCE(ndev->resetting);
}

/*
 * Run @cmd (its cid is assigned here) and wait for its completion, which is
 * copied to @cqe. Returns 0, the errno for the completion's error status,
 * -ETIMEDOUT if the firmware does not answer in time, -EIO once the queue
 * is broken, or -ECANCELED if a reset came first: then it returns only
 * once the reset is over, so the device holds nothing of the command.
 */
static int nnp_admin_submit(struct nnp_device *ndev,
			    struct nnp_hw_admin_cmd *cmd,
			    struct nnp_hw_cqe *cqe)
{
	struct nnp_admin_queue *aq = &ndev->aq;
	long left;
	int ret;

	mutex_lock(&aq->lock);
	if (READ_ONCE(ndev->resetting)) {
		ret = -ECANCELED;
		goto out;
	}
	if (aq->broken) {
		ret = -EIO;
		goto out;
	}
	cmd->cid = cpu_to_le16(aq->next_cid++);
	aq->sq[aq->sq_tail] = *cmd;
	aq->sq_tail = (aq->sq_tail + 1) % NNP_AQ_DEPTH;
	/* writel orders the ring update before the doorbell. */
	nnp_wr(ndev, NNP_REG_AQ_SQ_TAIL, aq->sq_tail);
	trace_nnp_admin_submit(ndev, cmd->opcode, le16_to_cpu(cmd->cid),
			       aq->sq_tail);

	left = wait_event_timeout(aq->wq, nnp_admin_wait_over(ndev),
				  msecs_to_jiffies(nnp_fw_timeout_ms));
	if (!nnp_admin_cqe_ready(aq) && READ_ONCE(ndev->resetting)) {
		ret = -ECANCELED;
		goto out_submitted;
	}
	if (!left) {
		aq->broken = true;
		drm_err(&ndev->drm,
			"admin command 0x%x (cid %u) timed out after %u ms\n",
			cmd->opcode, le16_to_cpu(cmd->cid), nnp_fw_timeout_ms);
		ret = -ETIMEDOUT;
		goto out_submitted;
	}
	/* Read the entry only after seeing its phase tag. */
	dma_rmb();
	*cqe = aq->cq[aq->cq_head];
	aq->cq_head = (aq->cq_head + 1) % NNP_AQ_DEPTH;
	if (!aq->cq_head)
		aq->phase ^= NNP_CQE_PHASE;
	nnp_wr(ndev, NNP_REG_AQ_CQ_HEAD, aq->cq_head);

	if (cqe->cid != cmd->cid) {
		aq->broken = true;
		drm_err(&ndev->drm, "admin completion for cid %u, expected %u\n",
			le16_to_cpu(cqe->cid), le16_to_cpu(cmd->cid));
		ret = -EIO;
		goto out_submitted;
	}
	ret = nnp_admin_status_to_errno(le16_to_cpu(cqe->status));
out_submitted:
	trace_nnp_admin_complete(ndev, cmd->opcode, le16_to_cpu(cmd->cid),
				 le16_to_cpu(cqe->status),
				 le32_to_cpu(cqe->result), ret);
	if (ret)
		nnp_dbg(ndev, ADMIN, "opcode 0x%x cid %u: status %u, %d\n",
			cmd->opcode, le16_to_cpu(cmd->cid),
			le16_to_cpu(cqe->status), ret);
out:
	mutex_unlock(&aq->lock);
	if (ret == -ECANCELED)
		wait_event(ndev->reset_wq, !READ_ONCE(ndev->resetting));
	return ret;
}

int nnp_admin_run(struct nnp_device *ndev, u8 opcode, const void *args,
		  size_t args_len, dma_addr_t addr, u32 len, u32 *result)
{
	struct nnp_hw_admin_cmd cmd = {
		.opcode = opcode,
		.addr = cpu_to_le64(addr),
		.len = cpu_to_le32(len),
	};
	struct nnp_hw_cqe cqe = {};
	int ret;

	if (WARN_ON(args_len > sizeof(cmd.args)))
		return -EINVAL;
	memcpy(cmd.args, args, args_len);
	ret = nnp_admin_submit(ndev, &cmd, &cqe);
	if (result)
		*result = le32_to_cpu(cqe.result);
	return ret;
}

/* Run admin @opcode that writes @len bytes of data; copy them to @out. */
int nnp_admin_read(struct nnp_device *ndev, u8 opcode, void *out, u32 len,
		   u32 *result)
{
	return nnp_admin_read_args(ndev, opcode, NULL, 0, out, len, result);
}

int nnp_admin_read_args(struct nnp_device *ndev, u8 opcode, const void *args,
			size_t args_len, void *out, u32 len, u32 *result)
{
	struct device *dev = &ndev->pdev->dev;
	dma_addr_t dma;
	void *buf;
	int ret;

	buf = dma_alloc_coherent(dev, len, &dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = nnp_admin_run(ndev, opcode, args, args_len, dma, len, result);
	if (!ret)
		memcpy(out, buf, len);
	/* A device that did not answer may still write into @buf: keep it. */
	if (ret != -ETIMEDOUT)
		dma_free_coherent(dev, len, buf, dma);
	return ret;
}

/* GET_PORTS for the device's @n ports (n <= NUM_PORTS) into @info. */
int nnp_admin_get_ports(struct nnp_device *ndev, struct nnp_hw_port_info *info,
			u32 n)
{
	u32 result = 0;
	int ret;

	if (!n)
		return 0;
	ret = nnp_admin_read(ndev, NNP_ADMIN_GET_PORTS, info, n * sizeof(*info),
			     &result);
	if (!ret && result != n * sizeof(*info))
		ret = -EIO;
	return ret;
}
