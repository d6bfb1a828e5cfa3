/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp ICL socket links: credits (firmware-sim's fw_icl_credit.c says
 * why). Between ends whose hellos both offer NNP_ICL_FEAT_CREDIT, the
 * firmware tells us of each packet of the peer's it no longer holds, with
 * its locks held; we add it up, and the link's thread sends the sum in one
 * CREDIT frame when it next wakes, so a burst of packets taken costs one
 * frame, not one each. A CREDIT from the peer gives our firmware's sender
 * its room back; a peer crediting what it never held is dropped.
 */

#include "qemu/osdep.h"

#include "nnp_icl_link.h"
#include "trace.h"

/* With firmware locks held: added up for the link's thread, no waiting. */
void nnp_icl_sockets_credit(NnpIclSockets *icl, unsigned port, size_t len)
{
    NnpIclLink *l;

    if (!nnp_icl_sockets_has_port(icl, port)) {
        return;
    }
    l = icl->links[port];
    qemu_mutex_lock(&l->gb_lock);
    l->cr_packets++;
    l->cr_bytes += len;
    qemu_mutex_unlock(&l->gb_lock);
    event_notifier_set(&l->gb_pending);
}

bool nnp_icl_send_credits(NnpIclLink *l)
{
    struct nnp_icl_credit c;
    uint8_t raw[NNP_ICL_CREDIT_BYTES];

    qemu_mutex_lock(&l->gb_lock);
    c.packets = l->cr_packets;
    c.bytes = l->cr_bytes;
    l->cr_packets = 0;
    l->cr_bytes = 0;
    qemu_mutex_unlock(&l->gb_lock);
    if (!c.packets) {
        return true;
    }
    trace_nnp_icl_credit_tx(l->icl->chip_id, l->port, c.packets, c.bytes);
    nnp_icl_credit_encode(&c, raw);
    return nnp_icl_link_send(l, NNP_ICL_CREDIT, 0, 0, 0, raw, sizeof(raw));
}

bool nnp_icl_link_credit(NnpIclLink *l, int fd, const struct nnp_icl_frame *h,
                         int64_t deadline, const char **bad)
{
    struct nnp_icl_credit c;

    if (!nnp_icl_read_payload(l, fd, h, deadline, bad)) {
        return false;
    }
    *bad = nnp_icl_credit_decode(l->rx_buf, &c);
    if (!*bad && nnp_fw_icl_credits_back(l->icl->fw, l->port, c.packets,
                                         c.bytes)) {
        *bad = "the peer credited packets it does not hold";
    }
    trace_nnp_icl_credit_rx(l->icl->chip_id, l->port, c.packets, c.bytes,
                            *bad ? -1 : 0);
    return !*bad;
}

void nnp_icl_credits_start(NnpIclLink *l, bool on)
{
    nnp_fw_link_credits(l->icl->fw, l->port, on);
    /* What was added up for the last connection means nothing to this. */
    qemu_mutex_lock(&l->gb_lock);
    l->cr_packets = 0;
    l->cr_bytes = 0;
    qemu_mutex_unlock(&l->gb_lock);
}
