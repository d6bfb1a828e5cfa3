/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace events of qemu-device/trace-events, generated into QEMU's build
 * tree as the hw/nnp group (scripts/qemu-add-device.sh).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trace/trace-hw_nnp.h"
