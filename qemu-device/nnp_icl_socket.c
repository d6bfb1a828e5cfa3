/*
 * nnp ICL socket links: an inter-chip link between nnp devices in two QEMU
 * processes (multi-chassis), with the semantics of the in-process fabric:
 * the port has a peer (chip, port), a state, and counters kept by the
 * firmware, and the monitor takes both ends down or up.
 *
 * -device nnp,...,remote=PORT:listen:HOST:TCPPORT   (or PORT:connect:...;
 *   several links separated by ';'; unix:PATH instead of HOST:TCPPORT)
 *
 * Each link has a thread that makes the connection (accepting, or
 * connecting and retrying until the peer is there), reads frames and hands
 * packets to the firmware. Packets are sent by the firmware's own threads,
 * one frame at a time under the link's tx_lock, with a blocking send
 * bounded by a timeout.
 *
 * On the wire, every frame is a 24-byte little-endian header and a
 * payload. Both ends start with HELLO (chip id, port, whether the sender's
 * end is up); the link comes up once both are exchanged, unless either end
 * was taken down. DATA and ABORT carry the firmware's packets with their
 * epoch and sequence number; LINK_DOWN and LINK_UP carry the monitor's
 * link-down and link-up to the other end. A lost connection takes the link down; the connecting
 * side connects again, so a restarted peer comes back. Anything malformed
 * from the peer is logged and drops the connection.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include "qemu/error-report.h"
#include "qemu/iov.h"
#include "qemu/log.h"
#include "qemu/sockets.h"
#include "qemu/thread.h"
#include "qapi/error.h"

#include "nnp_fw.h"
#include "nnp_icl_socket.h"

#define NNP_ICL_MAGIC       0x4c43494eu     /* "NICL" */
#define NNP_ICL_VERSION     2
/* A peer that does not say hello in this long is not one of ours. */
#define NNP_ICL_HELLO_MS    5000
/* A peer that does not take a frame in this long is gone. */
#define NNP_ICL_SEND_MS     5000
/* How often the connecting side tries again. */
#define NNP_ICL_RETRY_MS    200

enum {
    NNP_ICL_HELLO = 1,
    NNP_ICL_DATA = 2,
    NNP_ICL_ABORT = 3,
    NNP_ICL_LINK_DOWN = 4,
    NNP_ICL_LINK_UP = 5,
};

typedef struct QEMU_PACKED NnpIclHeader {
    uint32_t magic;
    uint8_t version;
    uint8_t type;
    uint16_t rsvd0;
    uint32_t len;           /* payload bytes that follow */
    uint32_t seq;           /* DATA and ABORT: the packet's sequence */
    uint64_t epoch;         /* DATA and ABORT: its communicator's epoch */
} NnpIclHeader;

typedef struct QEMU_PACKED NnpIclHello {
    uint32_t chip_id;
    uint16_t port;
    uint8_t up;             /* the sender's end has not been taken down */
    uint8_t rsvd;
} NnpIclHello;

typedef struct NnpIclLink {
    NnpIclSockets *icl;
    unsigned port;
    bool listen;
    SocketAddress *addr;
    int listen_fd;
    QemuThread thread;
    bool started;
    uint8_t *rx_buf;        /* the thread's */
    size_t rx_size;

    QemuMutex tx_lock;      /* one frame at a time; taken before lock */
    QemuMutex lock;         /* guards what follows */
    QemuCond cond;          /* wakes the connect retry wait */
    int fd;                 /* the connection, -1 if none */
    bool connected;         /* hellos exchanged */
    bool admin_up;          /* not taken down, at either end */
    bool stopping;
} NnpIclLink;

struct NnpIclSockets {
    struct nnp_fw *fw;
    uint32_t chip_id;
    NnpIclLink *links[NNP_FW_MAX_PORTS];
};

static void link_log(NnpIclLink *l, const char *what)
{
    qemu_log_mask(LOG_GUEST_ERROR,
                  "nnp[chip %u] port %u: %s; dropping the connection\n",
                  l->icl->chip_id, l->port, what);
}

/* The firmware's port follows the link, with l->lock held. */
static void link_update_locked(NnpIclLink *l)
{
    nnp_fw_link_set(l->icl->fw, l->port, l->connected && l->admin_up);
}

/* ---- frames ---- */

/* Send @iov whole, with tx_lock held: false if the connection failed. */
static bool write_iov(int fd, struct iovec *iov, unsigned cnt)
{
    while (cnt) {
        struct msghdr msg = { .msg_iov = iov, .msg_iovlen = cnt };
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;   /* also the send timeout (EAGAIN) */
        }
        iov_discard_front(&iov, &cnt, n);
    }
    return true;
}

static bool write_frame(int fd, uint8_t type, uint64_t epoch, uint32_t seq,
                        const void *data, size_t len)
{
    NnpIclHeader h = {
        .magic = cpu_to_le32(NNP_ICL_MAGIC),
        .version = NNP_ICL_VERSION,
        .type = type,
        .len = cpu_to_le32(len),
        .seq = cpu_to_le32(seq),
        .epoch = cpu_to_le64(epoch),
    };
    struct iovec iov[2] = {
        { .iov_base = &h, .iov_len = sizeof(h) },
        { .iov_base = (void *)data, .iov_len = len },
    };

    return write_iov(fd, iov, len ? 2 : 1);
}

/* Read exactly @len bytes: false on end of file or error. */
static bool read_full(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len) {
        ssize_t n = recv(fd, p, len, 0);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= n;
    }
    return true;
}

/*
 * Read one frame into *@h and l->rx_buf. False if the connection ended
 * or the frame is malformed (@bad then says why).
 */
static bool read_frame(NnpIclLink *l, int fd, NnpIclHeader *h,
                       const char **bad)
{
    if (!read_full(fd, h, sizeof(*h))) {
        return false;
    }
    h->magic = le32_to_cpu(h->magic);
    h->len = le32_to_cpu(h->len);
    h->seq = le32_to_cpu(h->seq);
    h->epoch = le64_to_cpu(h->epoch);
    if (h->magic != NNP_ICL_MAGIC || h->version != NNP_ICL_VERSION) {
        *bad = "not an nnp ICL frame (magic or version)";
        return false;
    }
    if (h->len > NNP_FW_ICL_MAX_PACKET) {
        *bad = "frame longer than the largest packet";
        return false;
    }
    if (h->len > l->rx_size) {
        l->rx_buf = g_realloc(l->rx_buf, h->len);
        l->rx_size = h->len;
    }
    return read_full(fd, l->rx_buf, h->len);
}

/* Send a frame on @l's connection, if there is one; false if not sent. */
static bool link_send(NnpIclLink *l, uint8_t type, uint64_t epoch,
                      uint32_t seq, const void *data, size_t len)
{
    bool ok = false;
    int fd;

    qemu_mutex_lock(&l->tx_lock);
    qemu_mutex_lock(&l->lock);
    fd = l->connected ? l->fd : -1;
    qemu_mutex_unlock(&l->lock);
    if (fd >= 0) {
        ok = write_frame(fd, type, epoch, seq, data, len);
    }
    qemu_mutex_unlock(&l->tx_lock);
    if (fd >= 0 && !ok) {
        /* A half-sent frame: the receiving thread sees the end. */
        qemu_mutex_lock(&l->lock);
        if (l->fd == fd) {
            shutdown(fd, SHUT_RDWR);
        }
        qemu_mutex_unlock(&l->lock);
    }
    return ok;
}

/* ---- the link's thread ---- */

static bool link_stopping(NnpIclLink *l)
{
    bool stopping;

    qemu_mutex_lock(&l->lock);
    stopping = l->stopping;
    qemu_mutex_unlock(&l->lock);
    return stopping;
}

/* A new connection, or -1 once the link is stopping. */
static int link_open(NnpIclLink *l)
{
    while (!link_stopping(l)) {
        int fd = l->listen ? qemu_accept(l->listen_fd, NULL, NULL)
                           : socket_connect(l->addr, NULL);

        qemu_mutex_lock(&l->lock);
        if (l->stopping) {
            qemu_mutex_unlock(&l->lock);
            if (fd >= 0) {
                close(fd);
            }
            return -1;
        }
        if (fd >= 0) {
            l->fd = fd;
            qemu_mutex_unlock(&l->lock);
            return fd;
        }
        /* The peer is not there yet: try again shortly. */
        qemu_cond_timedwait(&l->cond, &l->lock, NNP_ICL_RETRY_MS);
        qemu_mutex_unlock(&l->lock);
    }
    return -1;
}

/* Exchange hellos; false if the peer is not a well-behaved nnp link. */
static bool link_hello(NnpIclLink *l, int fd)
{
    NnpIclHello mine = {
        .chip_id = cpu_to_le32(l->icl->chip_id),
        .port = cpu_to_le16(l->port),
    }, peer;
    GPollFD pfd = { .fd = fd, .events = G_IO_IN };
    const char *bad = NULL;
    NnpIclHeader h;
    bool ok;

    qemu_mutex_lock(&l->lock);
    mine.up = l->admin_up;
    qemu_mutex_unlock(&l->lock);
    qemu_mutex_lock(&l->tx_lock);
    ok = write_frame(fd, NNP_ICL_HELLO, 0, 0, &mine, sizeof(mine));
    qemu_mutex_unlock(&l->tx_lock);
    if (!ok) {
        return false;
    }
    if (g_poll(&pfd, 1, NNP_ICL_HELLO_MS) != 1) {
        link_log(l, "no hello from the peer");
        return false;
    }
    if (!read_frame(l, fd, &h, &bad)) {
        if (bad) {
            link_log(l, bad);
        }
        return false;
    }
    if (h.type != NNP_ICL_HELLO || h.len != sizeof(peer)) {
        link_log(l, "the peer did not start with a hello");
        return false;
    }
    memcpy(&peer, l->rx_buf, sizeof(peer));
    if (le16_to_cpu(peer.port) >= NNP_FW_MAX_PORTS) {
        link_log(l, "the peer's port is out of range");
        return false;
    }
    if (nnp_fw_link_attach_remote(l->icl->fw, l->port,
                                  le32_to_cpu(peer.chip_id),
                                  le16_to_cpu(peer.port))) {
        /* Only the command line can fix this: stop trying. */
        error_report("nnp[chip %u]: port %u is also in the fabric; "
                     "its remote link is off", l->icl->chip_id, l->port);
        qemu_mutex_lock(&l->lock);
        l->stopping = true;
        qemu_mutex_unlock(&l->lock);
        return false;
    }
    qemu_mutex_lock(&l->lock);
    l->connected = true;
    /* Down at either end keeps the link down. */
    l->admin_up = l->admin_up && peer.up;
    link_update_locked(l);
    qemu_mutex_unlock(&l->lock);
    return true;
}

/* Frames until the connection ends or goes wrong. */
static void link_receive(NnpIclLink *l, int fd)
{
    const char *bad = NULL;
    NnpIclHeader h;

    while (read_frame(l, fd, &h, &bad)) {
        switch (h.type) {
        case NNP_ICL_DATA:
        case NNP_ICL_ABORT:
            /* A port that is down drops it (the firmware counts it). */
            nnp_fw_icl_deliver(l->icl->fw, l->port, h.epoch, h.seq,
                               h.type == NNP_ICL_ABORT, l->rx_buf, h.len);
            break;
        case NNP_ICL_LINK_DOWN:
        case NNP_ICL_LINK_UP:
            if (h.len) {
                link_log(l, "link state frame with a payload");
                return;
            }
            qemu_mutex_lock(&l->lock);
            l->admin_up = h.type == NNP_ICL_LINK_UP;
            link_update_locked(l);
            qemu_mutex_unlock(&l->lock);
            break;
        default:
            link_log(l, "unexpected frame type");
            return;
        }
    }
    if (bad) {
        link_log(l, bad);
    }
}

static void link_close(NnpIclLink *l, int fd)
{
    qemu_mutex_lock(&l->lock);
    if (l->connected) {
        l->connected = false;
        link_update_locked(l);
    }
    l->fd = -1;
    qemu_mutex_unlock(&l->lock);
    /* Wake a sender blocked on the socket, then wait until it is out. */
    shutdown(fd, SHUT_RDWR);
    qemu_mutex_lock(&l->tx_lock);
    qemu_mutex_unlock(&l->tx_lock);
    close(fd);
}

static void *link_thread(void *opaque)
{
    NnpIclLink *l = opaque;
    int fd;

    while ((fd = link_open(l)) >= 0) {
        struct timeval send_timeout = {
            .tv_sec = NNP_ICL_SEND_MS / 1000,
            .tv_usec = (NNP_ICL_SEND_MS % 1000) * 1000,
        };

        /* Collectives wait on every chunk: no Nagle delay. */
        socket_set_nodelay(fd);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout,
                   sizeof(send_timeout));
        if (link_hello(l, fd)) {
            link_receive(l, fd);
        }
        link_close(l, fd);
    }
    g_free(l->rx_buf);
    l->rx_buf = NULL;
    return NULL;
}

/* ---- set-up and the device's calls ---- */

static void link_free(NnpIclLink *l)
{
    if (l->listen_fd >= 0) {
        close(l->listen_fd);
    }
    qapi_free_SocketAddress(l->addr);
    qemu_cond_destroy(&l->cond);
    qemu_mutex_destroy(&l->lock);
    qemu_mutex_destroy(&l->tx_lock);
    g_free(l);
}

static NnpIclLink *link_new(NnpIclSockets *icl, const char *item,
                            unsigned num_ports, Error **errp)
{
    ERRP_GUARD();
    g_auto(GStrv) f = g_strsplit(item, ":", 3);
    NnpIclLink *l;
    unsigned port;

    if (g_strv_length(f) != 3 ||
        (strcmp(f[1], "listen") && strcmp(f[1], "connect"))) {
        error_setg(errp, "nnp: bad remote link '%s' (want PORT:listen:ADDR "
                   "or PORT:connect:ADDR)", item);
        return NULL;
    }
    if (qemu_strtoui(f[0], NULL, 10, &port) || port >= num_ports) {
        error_setg(errp, "nnp: remote link '%s': no port %s", item, f[0]);
        return NULL;
    }
    if (icl->links[port]) {
        error_setg(errp, "nnp: port %u named twice in remote", port);
        return NULL;
    }
    l = g_new0(NnpIclLink, 1);
    l->icl = icl;
    l->port = port;
    l->listen = !strcmp(f[1], "listen");
    l->listen_fd = -1;
    l->fd = -1;
    l->admin_up = true;
    qemu_mutex_init(&l->tx_lock);
    qemu_mutex_init(&l->lock);
    qemu_cond_init(&l->cond);
    l->addr = socket_parse(f[2], errp);
    if (!l->addr) {
        error_prepend(errp, "nnp: remote link '%s': ", item);
        link_free(l);
        return NULL;
    }
    if (l->addr->type != SOCKET_ADDRESS_TYPE_INET &&
        l->addr->type != SOCKET_ADDRESS_TYPE_UNIX) {
        error_setg(errp, "nnp: remote link '%s': want HOST:TCPPORT or "
                   "unix:PATH", item);
        link_free(l);
        return NULL;
    }
    if (l->listen) {
        l->listen_fd = socket_listen(l->addr, 1, errp);
        if (l->listen_fd < 0) {
            error_prepend(errp, "nnp: remote link '%s': ", item);
            link_free(l);
            return NULL;
        }
    }
    return l;
}

NnpIclSockets *nnp_icl_sockets_new(const char *spec, struct nnp_fw *fw,
                                   uint32_t chip_id, unsigned num_ports,
                                   Error **errp)
{
    NnpIclSockets *icl = g_new0(NnpIclSockets, 1);
    g_auto(GStrv) items = g_strsplit(spec, ";", -1);
    unsigned i;
    char **p;

    icl->fw = fw;
    icl->chip_id = chip_id;
    for (p = items; *p; p++) {
        NnpIclLink *l;

        if (!**p) {
            continue;   /* a trailing ';' */
        }
        l = link_new(icl, *p, num_ports, errp);
        if (!l) {
            nnp_icl_sockets_free(icl);
            return NULL;
        }
        icl->links[l->port] = l;
    }
    for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
        if (icl->links[i]) {
            qemu_thread_create(&icl->links[i]->thread, "nnp-icl", link_thread,
                               icl->links[i], QEMU_THREAD_JOINABLE);
            icl->links[i]->started = true;
        }
    }
    return icl;
}

bool nnp_icl_sockets_has_port(NnpIclSockets *icl, unsigned port)
{
    return port < NNP_FW_MAX_PORTS && icl->links[port];
}

int nnp_icl_sockets_send(NnpIclSockets *icl, unsigned port, uint64_t epoch,
                         uint32_t seq, bool abort, const void *data,
                         size_t len)
{
    if (!nnp_icl_sockets_has_port(icl, port)) {
        return -1;
    }
    return link_send(icl->links[port], abort ? NNP_ICL_ABORT : NNP_ICL_DATA,
                     epoch, seq, data, len) ? 0 : -1;
}

/*
 * Under the BQL, from the monitor: may wait for a frame a firmware thread
 * is sending, at most the send timeout.
 */
void nnp_icl_sockets_set_link(NnpIclSockets *icl, unsigned port, bool up)
{
    NnpIclLink *l = icl->links[port];

    qemu_mutex_lock(&l->lock);
    l->admin_up = up;
    link_update_locked(l);
    qemu_mutex_unlock(&l->lock);
    /* Not connected: the next hello tells the peer. */
    link_send(l, up ? NNP_ICL_LINK_UP : NNP_ICL_LINK_DOWN, 0, 0, NULL, 0);
}

void nnp_icl_sockets_stop(NnpIclSockets *icl)
{
    unsigned i;

    for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
        NnpIclLink *l = icl->links[i];

        if (!l) {
            continue;
        }
        /* Wake the thread wherever it waits: accept, recv or retry. */
        qemu_mutex_lock(&l->lock);
        l->stopping = true;
        if (l->fd >= 0) {
            shutdown(l->fd, SHUT_RDWR);
        }
        if (l->listen_fd >= 0) {
            shutdown(l->listen_fd, SHUT_RDWR);
        }
        qemu_cond_broadcast(&l->cond);
        qemu_mutex_unlock(&l->lock);
    }
    for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
        if (icl->links[i] && icl->links[i]->started) {
            qemu_thread_join(&icl->links[i]->thread);
            icl->links[i]->started = false;
        }
    }
}

void nnp_icl_sockets_free(NnpIclSockets *icl)
{
    unsigned i;

    if (!icl) {
        return;
    }
    nnp_icl_sockets_stop(icl);
    for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
        if (icl->links[i]) {
            link_free(icl->links[i]);
        }
    }
    g_free(icl);
}
