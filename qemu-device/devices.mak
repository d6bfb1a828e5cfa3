# SPDX-License-Identifier: GPL-2.0-or-later
# The devices our guests use, and none other: QEMU is configured
# --without-default-devices --with-devices-x86_64=nnp, which builds what
# these select and skips the rest of the PC's (display, USB, sound, SCSI,
# NVMe, IPMI, Xen, VFIO...): a new machine compiles QEMU faster.
# tools/nnp-vm's q35 machine (ICH9, AHCI, ISA serial, fw_cfg DMA with it)
CONFIG_Q35=y
# the PC's HPET, which QEMU builds only by default: every guest had it
# before this list, and its timers are what they were tested on
CONFIG_HPET=y
# the chips, each behind its own PCIe root port (hotplug: device_del)
CONFIG_NNP_PCI=y
CONFIG_PCIE_PORT=y
# a POD's LAN between QEMUs (nnp-vm --lan)
CONFIG_E1000_PCI=y
# --host-root: the host's root over virtio-9p
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_9P=y
