/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp fabric: the inter-chip links between the nnp devices of one QEMU.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NNP_FABRIC_H
#define HW_NNP_FABRIC_H

struct nnp_fw;

/*
 * A chip joins the process's fabric at realize, naming its topology (every
 * chip must name the same); the links are made once the machine is built.
 */
bool nnp_fabric_join(const char *topology, uint32_t chip_id,
                     struct nnp_fw *fw, Error **errp);
void nnp_fabric_leave(struct nnp_fw *fw);

#endif
