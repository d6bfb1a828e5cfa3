/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp ICL socket links: inter-chip links to nnp devices in other QEMU
 * processes.
 */
#ifndef HW_NNP_ICL_SOCKET_H
#define HW_NNP_ICL_SOCKET_H

struct nnp_fw;
typedef struct NnpIclSockets NnpIclSockets;

/*
 * Make the ports named in @spec links to a chip in another process, a
 * thread each: "PORT-CHIP.PPORT:listen:ADDR;PORT-CHIP.PPORT:connect:ADDR;..."
 * (our PORT to port PPORT of chip CHIP) with ADDR either HOST:TCPPORT or
 * unix:PATH. Peers authenticate with the secret in the secret object
 * @secret_id. Listening sockets are open on return, so a peer may connect
 * as soon as realize is done. @mem_fd (-1: none) is the sealed memfd of
 * the device's @mem_size bytes of memory, shared read-only with peers on
 * unix sockets that share theirs.
 */
NnpIclSockets *nnp_icl_sockets_new(const char *spec, const char *secret_id,
                                   struct nnp_fw *fw, uint32_t chip_id,
                                   unsigned num_ports, int mem_fd,
                                   uint64_t mem_size, Error **errp);
bool nnp_icl_sockets_has_port(NnpIclSockets *icl, unsigned port);
/* The firmware's icl_tx: 0 once the packet is sent, -1 if not connected. */
int nnp_icl_sockets_send(NnpIclSockets *icl, unsigned port, uint64_t epoch,
                         uint32_t seq, bool abort, uint64_t model_ns,
                         const void *data, size_t len);
/* The firmware's icl_tx_lent: a LENT frame; returns as _send(). */
int nnp_icl_sockets_send_lent(NnpIclSockets *icl, unsigned port,
                              uint64_t epoch, uint32_t seq, uint64_t model_ns,
                              uint64_t offset, size_t len, uint32_t tag);
/* The firmware's icl_give_back: queued for the link's thread, no waiting. */
void nnp_icl_sockets_give_back(NnpIclSockets *icl, unsigned port,
                               uint32_t tag);
/* The firmware's icl_credit: added up for the link's thread, no waiting. */
void nnp_icl_sockets_credit(NnpIclSockets *icl, unsigned port, size_t len);
/* The firmware's icl_reclaim: RECLAIM frames. */
void nnp_icl_sockets_reclaim(NnpIclSockets *icl, unsigned port,
                             const uint32_t *tags, size_t n);
/* The firmware's icl_drop: end @port's connection, no waiting. */
void nnp_icl_sockets_drop(NnpIclSockets *icl, unsigned port);
/* Take @port's link down or up at both ends (the monitor's link-down). */
void nnp_icl_sockets_set_link(NnpIclSockets *icl, unsigned port, bool up);
/* The firmware's icl_chip_state: our chip stopped, or runs again. */
void nnp_icl_sockets_chip_state(NnpIclSockets *icl, unsigned port, bool up);
/*
 * Stop the threads and close the sockets: the ports go down, later sends
 * fail. Free only once nothing may send any more.
 */
void nnp_icl_sockets_stop(NnpIclSockets *icl);
void nnp_icl_sockets_free(NnpIclSockets *icl);

#endif
