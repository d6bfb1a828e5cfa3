// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko firmware handshake: reset the device, wait (bounded) for the
 * firmware to report ready, check the versions we understand, and read the
 * device's identity over the admin queue.
 */
#include <linux/iopoll.h>

#include "nnp_drv.h"

#define NNP_FW_SUPPORTED_MAJOR 1

static const char *nnp_fw_status_name(u32 status)
{
	switch (status) {
	case NNP_FW_STATUS_OFF:
		return "off";
	case NNP_FW_STATUS_BOOTING:
		return "booting";
	case NNP_FW_STATUS_READY:
		return "ready";
	case NNP_FW_STATUS_HALTED:
		return "halted";
	}
	return "unknown";
}

int nnp_fw_boot(struct nnp_device *ndev)
{
	u32 magic, hw_ver, status, fw_ver;
	int ret;

	magic = nnp_rd(ndev, NNP_REG_ID);
	hw_ver = nnp_rd(ndev, NNP_REG_HW_VERSION);
	if (magic != NNP_HW_ID_MAGIC) {
		drm_err(&ndev->drm, "not an nnp device: id 0x%08x\n", magic);
		return -ENODEV;
	}
	if (NNP_HW_VERSION_MAJOR_OF(hw_ver) != NNP_HW_VERSION_MAJOR) {
		drm_err(&ndev->drm,
			"hardware interface %u.%u not supported (need %u.x)\n",
			hw_ver >> 16, hw_ver & 0xffff, NNP_HW_VERSION_MAJOR);
		return -ENODEV;
	}

	/* Start from a known state whatever a previous driver left. */
	nnp_wr(ndev, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	ret = readl_poll_timeout(ndev->regs + NNP_REG_FW_STATUS, status,
				 status == NNP_FW_STATUS_READY ||
				 status == NNP_FW_STATUS_HALTED,
				 1000, nnp_fw_timeout_ms * USEC_PER_MSEC);
	if (ret) {
		drm_err(&ndev->drm,
			"firmware not ready after %u ms (status %s)\n",
			nnp_fw_timeout_ms, nnp_fw_status_name(status));
		return -ETIMEDOUT;
	}
	if (status == NNP_FW_STATUS_HALTED) {
		drm_err(&ndev->drm, "firmware halted during boot, error %u\n",
			nnp_rd(ndev, NNP_REG_FW_ERROR));
		return -EIO;
	}

	fw_ver = nnp_rd(ndev, NNP_REG_FW_VERSION);
	if (NNP_FW_VERSION_MAJOR(fw_ver) != NNP_FW_SUPPORTED_MAJOR) {
		drm_err(&ndev->drm, "firmware %u.%u.%u not supported (need %u.x)\n",
			NNP_FW_VERSION_MAJOR(fw_ver),
			NNP_FW_VERSION_MINOR(fw_ver),
			NNP_FW_VERSION_PATCH(fw_ver), NNP_FW_SUPPORTED_MAJOR);
		return -ENODEV;
	}
	return 0;
}

int nnp_fw_identify(struct nnp_device *ndev)
{
	struct nnp_identity *id = &ndev->id;
	struct nnp_hw_identify hw;
	u32 result = 0;
	int ret;

	ret = nnp_admin_read(ndev, NNP_ADMIN_IDENTIFY, &hw, sizeof(hw), &result);
	if (ret) {
		drm_err(&ndev->drm, "IDENTIFY failed: %d\n", ret);
		return ret;
	}
	if (result != sizeof(hw) || le32_to_cpu(hw.magic) != NNP_HW_ID_MAGIC) {
		drm_err(&ndev->drm, "IDENTIFY returned bad data\n");
		return -EIO;
	}
	*id = (struct nnp_identity){
		.hw_version = le32_to_cpu(hw.hw_version),
		.fw_version = le32_to_cpu(hw.fw_version),
		.chip_id = le32_to_cpu(hw.chip_id),
		.caps = le32_to_cpu(hw.caps),
		.mem_size = le64_to_cpu(hw.mem_size),
		.num_ports = le16_to_cpu(hw.num_ports),
		.num_queues = le16_to_cpu(hw.num_queues),
	};
	static_assert(sizeof(id->serial) == sizeof(hw.serial));
	static_assert(sizeof(id->fw_build) == sizeof(hw.fw_build));
	strscpy(id->serial, hw.serial, sizeof(id->serial));
	strscpy(id->fw_build, hw.fw_build, sizeof(id->fw_build));
	return 0;
}
