/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp ICL socket links: an inter-chip link between nnp devices in two QEMU
 * processes (multi-chassis), with the semantics of the in-process fabric:
 * the port has a peer (chip, port), a state, and counters kept by the
 * firmware, and the monitor takes both ends down or up.
 *
 * -object secret,id=SEC,file=PATH
 * -device nnp,...,icl-secret=SEC,remote=PORT-CHIP.PPORT:listen:HOST:TCPPORT
 *   (or :connect:...; several links separated by ';'; unix:PATH instead of
 *   HOST:TCPPORT): our PORT links to port PPORT of chip CHIP, and both
 *   ends must hold the job's secret SEC.
 *
 * Each link has a thread that makes the connection (accepting, or
 * connecting and retrying until the peer is there; a listening link takes
 * up to NNP_ICL_PENDING_MAX connections through their hellos at once, so
 * that strangers that connect and say nothing do not keep the peer out),
 * reads frames and hands packets to the firmware: a DATA frame's payload
 * is read straight into the packet the firmware queues, not through a
 * buffer of ours. Packets are sent by the firmware's own threads, one
 * frame at a time under the link's tx_lock. Every read of a frame and
 * every write has a deadline, so a peer that stalls mid-frame or stops
 * reading loses its connection instead of holding a thread or the lock.
 * A write's is short (NNP_ICL_SEND_MS): the firmware writes on the
 * device's admin path too (an abort, a RECLAIM), or holds up a queue the
 * admin path waits for, and the driver resets the whole device when an
 * admin command takes its timeout (5 s); a peer that does not take a
 * frame in time loses its link, the device goes on.
 *
 * On the wire (firmware-sim's nnp_icl_frame.h, which encodes and checks
 * every frame), a frame is a 24-byte little-endian header and a
 * payload. Both ends start with HELLO (chip id and port, the chip and port
 * the sender expects at the far end, whether the sender's end is up, and a
 * random nonce), then AUTH: HMAC-SHA256 under the secret of the sender's
 * hello followed by the receiver's. The link comes up once each end has
 * checked the other's AUTH and that the peer is the one it expects, and
 * stays down if either end was taken down. The MACs authenticate the
 * hellos only: no frame after them carries one, so on a TCP link whoever
 * is on the network path can read, alter, drop or inject frames. Across a
 * network not trusted that far, carry the link in a tunnel (WireGuard,
 * IPsec, ssh -L); a unix socket, or a trusted network, needs none.
 * DATA and ABORT carry the firmware's packets with their epoch and
 * sequence number, and, between ends whose hellos both offer it
 * (NNP_ICL_FEAT_MODEL), the packet's modeled arrival time in a version 4
 * header, 8 bytes longer: an end of version 3 is neither offered it nor
 * sent it, and its packets arrive at the receiver's own modeled time.
 * LINK_DOWN and LINK_UP carry the monitor's link-down and link-up to the
 * other end. A lost connection takes the link down; the connecting side
 * connects again, so a restarted peer comes back. Anything malformed or
 * unauthenticated from the peer is logged and drops the connection.
 *
 * Two QEMUs on one host, joined by a unix socket, share their device
 * memory instead (nnp_icl_share.c).
 *
 * This file is the link's top: it calls shared memory (nnp_icl_share.c)
 * and credits (nnp_icl_credit.c), and all three send and read frames
 * through nnp_icl_io.c, the bottom, which calls none of them back.
 */

#include "qemu/osdep.h"
#include "crypto/hmac.h"
#include "crypto/random.h"
#include "crypto/secret_common.h"
#include "qemu/cutils.h"
#include "qemu/error-report.h"
#include "qemu/event_notifier.h"
#include "qemu/host-utils.h"
#include "qemu/iov.h"
#include "qemu/sockets.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qapi/error.h"

#include "nnp_fw.h"
#include "nnp_icl_frame.h"
#include "nnp_icl_link.h"
#include "nnp_icl_shm.h"
#include "trace.h"

/* A peer that has not authenticated in this long is not one of ours. */
#define NNP_ICL_HELLO_MS    5000
/* How often the connecting side tries again. */
#define NNP_ICL_RETRY_MS    200
/*
 * Connections a listening link takes through their hellos at once: a
 * stranger must keep this many stalled to hold up the peer even briefly.
 */
#define NNP_ICL_PENDING_MAX 8

/* The firmware's port follows the link, with l->lock held. */
/* Up if connected, not taken down, and both chips run. */
static void link_update_locked(NnpIclLink *l)
{
    trace_nnp_icl_link_state(l->icl->chip_id, l->port, l->connected,
                             l->admin_up, l->chip_up, l->peer_chip_up);
    nnp_fw_link_set(l->icl->fw, l->port, l->connected && l->admin_up &&
                    l->chip_up && l->peer_chip_up);
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

/*
 * The MAC that the end which sent @from proves the secret with:
 * HMAC(secret, @from's hello, @to's hello). Each end's nonce makes it
 * fresh, and the order makes it useless to reflect.
 */
static bool hello_mac(NnpIclLink *l, const uint8_t *from, const uint8_t *to,
                      uint8_t mac[NNP_ICL_MAC_LEN])
{
    struct iovec iov[2] = {
        { .iov_base = (void *)from, .iov_len = NNP_ICL_HELLO_BYTES },
        { .iov_base = (void *)to, .iov_len = NNP_ICL_HELLO_BYTES },
    };
    /* One use each: some backends cannot reset an HMAC once read. */
    g_autoptr(QCryptoHmac) hmac = qcrypto_hmac_new(QCRYPTO_HASH_ALGO_SHA256,
                                                   l->icl->key,
                                                   l->icl->key_len, NULL);
    g_autofree uint8_t *res = NULL;
    size_t len = 0;

    if (!hmac || qcrypto_hmac_bytesv(hmac, iov, 2, &res, &len, NULL) ||
        len != NNP_ICL_MAC_LEN) {
        return false;
    }
    memcpy(mac, res, len);
    return true;
}

/* Compare MACs in constant time: no timing hints about the secret. */
static bool mac_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0;
    unsigned i;

    for (i = 0; i < NNP_ICL_MAC_LEN; i++) {
        diff |= a[i] ^ b[i];
    }
    return !diff;
}

/*
 * A connection in its hello, read without blocking so that a peer that
 * stalls holds up no other: our HELLO, and the peer's HELLO and AUTH as
 * their bytes come, exactly these (nothing after them, such as SHARE's
 * descriptor, is read here).
 */
typedef struct NnpIclHello {
    int fd;
    int64_t deadline;       /* of the whole hello, SHARE included */
    uint8_t mine[NNP_ICL_HELLO_BYTES];
    uint8_t in[2 * NNP_ICL_HDR_BYTES + NNP_ICL_HELLO_BYTES + NNP_ICL_MAC_LEN];
    size_t got;             /* bytes of in[] */
} NnpIclHello;

/* Where the peer's frames end in NnpIclHello.in. */
enum {
    HELLO_HEADER_END = NNP_ICL_HDR_BYTES,
    HELLO_END = HELLO_HEADER_END + NNP_ICL_HELLO_BYTES,
    AUTH_HEADER_END = HELLO_END + NNP_ICL_HDR_BYTES,
    AUTH_END = AUTH_HEADER_END + NNP_ICL_MAC_LEN,
};

/* What hello_step() found. */
enum { HELLO_MORE, HELLO_PROVED, HELLO_FAILED };

/* Whether our hellos offer the peer our memory: unix sockets only. */
static bool link_shares(NnpIclLink *l)
{
    return l->is_unix && l->icl->share_fd >= 0;
}

/*
 * Start the hello on the new connection @fd into *@c: send our HELLO
 * (small, into an empty socket: it does not wait). False if it failed.
 */
static bool hello_begin(NnpIclLink *l, int fd, NnpIclHello *c)
{
    struct nnp_icl_hello mine = {
        .chip_id = l->icl->chip_id,
        .port = l->port,
        .want_chip = l->want_chip,
        .want_port = l->want_port,
        .features = NNP_ICL_FEAT_MODEL | NNP_ICL_FEAT_CREDIT |
                    NNP_ICL_FEAT_CHIP,
    };

    *c = (NnpIclHello){
        .fd = fd,
        .deadline = qemu_clock_get_ms(QEMU_CLOCK_REALTIME) + NNP_ICL_HELLO_MS,
    };
    if (qcrypto_random_bytes(mine.nonce, sizeof(mine.nonce), NULL)) {
        return false;
    }
    qemu_mutex_lock(&l->lock);
    mine.up = l->admin_up;
    qemu_mutex_unlock(&l->lock);
    if (link_shares(l)) {
        mine.features |= NNP_ICL_FEAT_SHARE;
        mine.mem_shift = ctz64(l->icl->mem_size);
    }
    nnp_icl_hello_encode(&mine, c->mine);
    /* Collectives wait on every chunk: no Nagle delay. */
    socket_set_nodelay(fd);
    /* Not connected yet: no sender writes on @fd, so no tx_lock. */
    return nnp_icl_write_frame(fd, NNP_ICL_HELLO, 0, 0, NULL, c->mine,
                               sizeof(c->mine));
}

/*
 * NULL if the header at @at in c->in is the one frame of @type and @len
 * the hello expects there, in version 3 as every hello is sent.
 */
static const char *hello_header(const NnpIclHello *c, size_t at, uint8_t type,
                                size_t len)
{
    struct nnp_icl_frame h;
    const char *bad = nnp_icl_header_decode(c->in + at, &h);

    if (!bad && nnp_icl_model_bytes(&h)) {
        return "the peer did not follow the hello protocol";
    }
    return bad ?: nnp_icl_frame_expect(&h, type, len);
}

/*
 * Read what the peer sent of its hello so far, answering its HELLO with
 * our AUTH: HELLO_PROVED once its AUTH proves the secret, HELLO_FAILED
 * (logged) once it cannot, HELLO_MORE while it may yet.
 */
static int hello_step(NnpIclLink *l, NnpIclHello *c)
{
    static const size_t ends[] = {
        HELLO_HEADER_END, HELLO_END, AUTH_HEADER_END, AUTH_END,
    };
    uint8_t mac[NNP_ICL_MAC_LEN];
    const char *bad = NULL;
    unsigned i = 0;

    while (!bad && c->got < AUTH_END) {
        ssize_t n;

        while (ends[i] <= c->got) {
            i++;
        }
        n = recv(c->fd, c->in + c->got, ends[i] - c->got, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (qemu_clock_get_ms(QEMU_CLOCK_REALTIME) < c->deadline) {
                return HELLO_MORE;
            }
            bad = nnp_icl_read_failure(-ETIMEDOUT);
            break;
        }
        if (n <= 0) {
            bad = "the peer left during the hello";
            break;
        }
        c->got += n;
        if (c->got == HELLO_HEADER_END) {
            bad = hello_header(c, 0, NNP_ICL_HELLO, NNP_ICL_HELLO_BYTES);
        } else if (c->got == AUTH_HEADER_END) {
            bad = hello_header(c, HELLO_END, NNP_ICL_AUTH, NNP_ICL_MAC_LEN);
        } else if (c->got == HELLO_END &&
                   (!hello_mac(l, c->mine, c->in + HELLO_HEADER_END, mac) ||
                    !nnp_icl_write_frame(c->fd, NNP_ICL_AUTH, 0, 0, NULL,
                                         mac, sizeof(mac)))) {
            return HELLO_FAILED;
        }
    }
    if (bad) {
        nnp_icl_link_log(l, "%s", bad);
        return HELLO_FAILED;
    }
    if (!hello_mac(l, c->in + HELLO_HEADER_END, c->mine, mac)) {
        return HELLO_FAILED;
    }
    if (!mac_equal(mac, c->in + AUTH_HEADER_END)) {
        nnp_icl_link_log(l, "the peer failed authentication (not the job's secret)");
        return HELLO_FAILED;
    }
    return HELLO_PROVED;
}

/* End the hello of c[@i], one of the *@n under way, keeping the others. */
static void hello_drop(NnpIclHello *c, unsigned *n, unsigned i)
{
    close(c[i].fd);
    c[i] = c[--*n];
}

/*
 * Make room for one more of the @n hellos under way: the oldest makes
 * way once NNP_ICL_PENDING_MAX are.
 */
static void hello_make_room(NnpIclLink *l, NnpIclHello *c, unsigned *n)
{
    unsigned i, oldest = 0;

    if (*n < NNP_ICL_PENDING_MAX) {
        return;
    }
    for (i = 1; i < *n; i++) {
        if (c[i].deadline < c[oldest].deadline) {
            oldest = i;
        }
    }
    nnp_icl_link_log(l, "%u connections in their hello: the oldest makes way",
                     *n);
    hello_drop(c, n, oldest);
}

/*
 * Wait until one of the @n hellos under way in @c, or (@listen) a new
 * connection, may have moved, at most NNP_ICL_RETRY_MS.
 */
static void hello_wait(NnpIclLink *l, const NnpIclHello *c, unsigned n,
                       bool listen)
{
    GPollFD pfd[NNP_ICL_PENDING_MAX + 1];
    int64_t now = qemu_clock_get_ms(QEMU_CLOCK_REALTIME);
    int64_t wait = NNP_ICL_RETRY_MS;
    unsigned i;

    for (i = 0; i < n; i++) {
        pfd[i] = (GPollFD){ .fd = c[i].fd, .events = G_IO_IN };
        wait = MIN(wait, MAX(c[i].deadline - now, 0));
    }
    if (listen) {
        pfd[n++] = (GPollFD){ .fd = l->listen_fd, .events = G_IO_IN };
    }
    if (n) {
        g_poll(pfd, n, wait);
        return;
    }
    /* The peer is not there yet: try again shortly. */
    qemu_mutex_lock(&l->lock);
    if (!l->stopping) {
        qemu_cond_timedwait(&l->cond, &l->lock, NNP_ICL_RETRY_MS);
    }
    qemu_mutex_unlock(&l->lock);
}

/*
 * A new connection whose peer proved the secret, its hello in *@won; -1
 * once the link is stopping. A connecting link makes one connection at a
 * time. A listening one takes every connection that comes, each through
 * its hello at once with its own deadline (up to NNP_ICL_PENDING_MAX, the
 * oldest making way for a new one): a stranger that connects and stalls
 * holds up no peer that proves the secret meanwhile. The first that
 * proves it wins; the others are closed.
 */
static int link_open(NnpIclLink *l, NnpIclHello *won)
{
    NnpIclHello c[NNP_ICL_PENDING_MAX];
    unsigned n = 0, i;
    int fd = -1;

    while (fd < 0 && !link_stopping(l)) {
        int new = l->listen ? qemu_accept(l->listen_fd, NULL, NULL) :
                  n ? -1 : socket_connect(l->addr, NULL);
        /* No connection to take, or none for now (EMFILE): poll later. */
        bool listen = l->listen && new < 0 && errno == EAGAIN;

        if (new >= 0) {
            hello_make_room(l, c, &n);
            if (hello_begin(l, new, &c[n])) {
                n++;
            } else {
                close(new);
            }
            listen = l->listen;
        }
        hello_wait(l, c, n, listen);
        for (i = n; i-- > 0;) {
            int step = hello_step(l, &c[i]);

            if (step == HELLO_PROVED) {
                fd = c[i].fd;
                *won = c[i];
                c[i] = c[--n];
                break;
            }
            if (step == HELLO_FAILED) {
                hello_drop(c, &n, i);
            }
        }
    }
    while (n) {
        hello_drop(c, &n, n - 1);
    }
    qemu_mutex_lock(&l->lock);
    if (fd >= 0 && l->stopping) {
        close(fd);
        fd = -1;
    }
    l->fd = fd;
    qemu_mutex_unlock(&l->lock);
    return fd;
}

/*
 * The peer on @fd proved the secret in its hello *@c: bring the link up,
 * unless it is not the chip and port we link to or does not expect us,
 * or sharing memory with it fails (within the hello's deadline).
 */
static bool link_join(NnpIclLink *l, int fd, const NnpIclHello *c)
{
    struct nnp_icl_hello peer;
    bool stopped;

    nnp_icl_hello_decode(c->in + HELLO_HEADER_END, &peer);
    if (!nnp_icl_hello_matches(&peer, l->icl->chip_id, l->port,
                               l->want_chip, l->want_port)) {
        nnp_icl_link_log(l, "the peer is chip %u port %u linking to chip %u port %u, "
                 "not chip %u port %u linking to us", peer.chip_id, peer.port,
                 peer.want_chip, peer.want_port, l->want_chip, l->want_port);
        return false;
    }
    if (nnp_fw_link_attach_remote(l->icl->fw, l->port, peer.chip_id,
                                  peer.port)) {
        /* Only the command line can fix this: stop trying. */
        error_report("nnp[chip %u]: port %u is also in the fabric; "
                     "its remote link is off", l->icl->chip_id, l->port);
        qemu_mutex_lock(&l->lock);
        l->stopping = true;
        qemu_mutex_unlock(&l->lock);
        return false;
    }
    if (link_shares(l) && (peer.features & NNP_ICL_FEAT_SHARE) &&
        !nnp_icl_link_share(l, fd, nnp_icl_hello_mem_size(&peer),
                            c->deadline)) {
        return false;
    }
    nnp_icl_credits_start(l, peer.features & NNP_ICL_FEAT_CREDIT);
    qemu_mutex_lock(&l->lock);
    l->connected = true;
    l->peer_model = peer.features & NNP_ICL_FEAT_MODEL;
    /* Down at either end keeps the link down. */
    l->admin_up = l->admin_up && peer.up;
    /* A chip that stopped says so first thing (link_wait()). */
    l->peer_chip_frames = peer.features & NNP_ICL_FEAT_CHIP;
    l->peer_chip_up = true;
    stopped = l->peer_chip_frames && !l->chip_up;
    l->send_chip = stopped;
    link_update_locked(l);
    qemu_mutex_unlock(&l->lock);
    if (stopped) {
        event_notifier_set(&l->state_changed);
    }
    return true;
}

/* Tell the peer what changed: the monitor's link state, our chip's. */
static bool link_send_state(NnpIclLink *l)
{
    bool admin, chip, admin_up, chip_up;

    qemu_mutex_lock(&l->lock);
    admin = l->send_admin;
    chip = l->send_chip && l->peer_chip_frames;
    admin_up = l->admin_up;
    chip_up = l->chip_up;
    l->send_admin = l->send_chip = false;
    qemu_mutex_unlock(&l->lock);
    if (admin && !nnp_icl_link_send(l, admin_up ? NNP_ICL_LINK_UP :
                                    NNP_ICL_LINK_DOWN, 0, 0, 0, NULL, 0)) {
        return false;
    }
    return !chip || nnp_icl_link_send(l, chip_up ? NNP_ICL_CHIP_UP :
                                      NNP_ICL_CHIP_DOWN, 0, 0, 0, NULL, 0);
}

/*
 * Wait, without a bound (an idle link is fine), until a frame starts on
 * @fd or our link state changed, sending give-backs meanwhile: false if
 * the connection is over.
 */
static bool link_wait(NnpIclLink *l, int fd)
{
    GPollFD pfd[3] = {
        { .fd = fd, .events = G_IO_IN },
        { .fd = event_notifier_get_fd(&l->state_changed), .events = G_IO_IN },
        { .fd = event_notifier_get_fd(&l->gb_pending), .events = G_IO_IN },
    };

    for (;;) {
        if (g_poll(pfd, 3, -1) < 0 && errno != EINTR) {
            return false;
        }
        if (pfd[1].revents && event_notifier_test_and_clear(&l->state_changed)
            && !link_send_state(l)) {
            return false;
        }
        if (pfd[2].revents && event_notifier_test_and_clear(&l->gb_pending)
            && (!nnp_icl_send_give_backs(l) || !nnp_icl_send_credits(l))) {
            return false;
        }
        if (pfd[0].revents) {
            return true;
        }
    }
}

/*
 * Hand the DATA or ABORT frame *@h, whose payload is still on the socket,
 * to the firmware. Its payload is read straight into the packet the
 * firmware queues; only when the firmware has no packet for it (a port or
 * length it refuses, no memory) does it go through l->rx_buf, for
 * nnp_fw_icl_deliver() to count. False if the payload did not come whole.
 */
static bool link_deliver(NnpIclLink *l, int fd, const struct nnp_icl_frame *h,
                         int64_t deadline, const char **bad)
{
    struct nnp_fw *fw = l->icl->fw;
    bool abort = h->type == NNP_ICL_ABORT;
    struct nnp_fw_packet *pk = nnp_fw_icl_rx_alloc(fw, l->port, h->len);
    int ret;

    if (pk) {
        ret = nnp_icl_read_full(fd, nnp_fw_icl_rx_data(pk), h->len, deadline);
        if (ret) {
            nnp_fw_icl_rx_drop(pk);
            *bad = nnp_icl_read_failure(ret);
            return false;
        }
        /* A port that is down drops it (the firmware counts it). */
        ret = nnp_fw_icl_rx_queue(fw, l->port, pk, h->epoch, h->seq, abort,
                                  h->model);
    } else {
        if (!nnp_icl_read_payload(l, fd, h, deadline, bad)) {
            return false;
        }
        ret = nnp_fw_icl_deliver(fw, l->port, h->epoch, h->seq, abort,
                                 h->model, l->rx_buf, h->len);
    }
    trace_nnp_icl_rx(l->icl->chip_id, l->port, h->epoch, h->seq, abort,
                     h->len, ret);
    return true;
}

/* Frames until the connection ends or goes wrong. */
static void link_receive(NnpIclLink *l, int fd)
{
    const char *bad = NULL;
    struct nnp_icl_frame h;
    int64_t deadline;

    while (link_wait(l, fd)) {
        deadline = qemu_clock_get_ms(QEMU_CLOCK_REALTIME) + NNP_ICL_FRAME_MS;
        if (!nnp_icl_read_header(fd, &h, deadline, &bad)) {
            break;
        }
        bad = l->peer_mem ? nnp_icl_frame_check_shared(&h)
                          : nnp_icl_frame_check_linked(&h);
        if (bad) {
            break;
        }
        if (h.type == NNP_ICL_DATA || h.type == NNP_ICL_ABORT) {
            if (!link_deliver(l, fd, &h, deadline, &bad)) {
                break;
            }
            continue;
        }
        if (h.type == NNP_ICL_LENT) {
            if (!nnp_icl_deliver_lent(l, fd, &h, deadline, &bad)) {
                break;
            }
            continue;
        }
        if (h.type == NNP_ICL_GIVE_BACK || h.type == NNP_ICL_RECLAIM) {
            if (!nnp_icl_link_tags(l, fd, &h, deadline, &bad)) {
                break;
            }
            continue;
        }
        if (h.type == NNP_ICL_CREDIT) {
            if (!nnp_icl_link_credit(l, fd, &h, deadline, &bad)) {
                break;
            }
            continue;
        }
        /* Link and chip state frames have no payload (checked above). */
        qemu_mutex_lock(&l->lock);
        if (h.type == NNP_ICL_CHIP_DOWN || h.type == NNP_ICL_CHIP_UP) {
            l->peer_chip_up = h.type == NNP_ICL_CHIP_UP;
        } else {
            l->admin_up = h.type == NNP_ICL_LINK_UP;
        }
        link_update_locked(l);
        qemu_mutex_unlock(&l->lock);
    }
    if (bad) {
        nnp_icl_link_log(l, "%s", bad);
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
    l->tx_failed = false;
    qemu_mutex_unlock(&l->tx_lock);
    close(fd);
    nnp_icl_link_unshare(l);
    nnp_icl_credits_start(l, false);
}

static void *link_thread(void *opaque)
{
    NnpIclLink *l = opaque;
    NnpIclHello hello;
    int fd;

    while ((fd = link_open(l, &hello)) >= 0) {
        if (link_join(l, fd, &hello)) {
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
    event_notifier_cleanup(&l->state_changed);
    event_notifier_cleanup(&l->gb_pending);
    qemu_mutex_destroy(&l->gb_lock);
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
    unsigned port, want_chip, want_port;
    NnpIclLink *l;
    char end;
    int ret;

    if (g_strv_length(f) != 3 ||
        sscanf(f[0], "%u-%u.%u%c", &port, &want_chip, &want_port, &end) != 3 ||
        (strcmp(f[1], "listen") && strcmp(f[1], "connect"))) {
        error_setg(errp, "nnp: bad remote link '%s' (want "
                   "PORT-CHIP.PORT:listen:ADDR or PORT-CHIP.PORT:connect:ADDR)",
                   item);
        return NULL;
    }
    if (port >= num_ports) {
        error_setg(errp, "nnp: remote link '%s': no port %u", item, port);
        return NULL;
    }
    if (want_port >= NNP_FW_MAX_PORTS) {
        error_setg(errp, "nnp: remote link '%s': no port %u on any chip",
                   item, want_port);
        return NULL;
    }
    if (icl->links[port]) {
        error_setg(errp, "nnp: port %u named twice in remote", port);
        return NULL;
    }
    l = g_new0(NnpIclLink, 1);
    l->icl = icl;
    l->port = port;
    l->want_chip = want_chip;
    l->want_port = want_port;
    l->listen = !strcmp(f[1], "listen");
    l->listen_fd = -1;
    l->fd = -1;
    l->admin_up = true;
    l->chip_up = true;
    l->peer_chip_up = true;
    qemu_mutex_init(&l->tx_lock);
    qemu_mutex_init(&l->lock);
    qemu_mutex_init(&l->gb_lock);
    qemu_cond_init(&l->cond);
    ret = event_notifier_init(&l->state_changed, false);
    if (!ret) {
        ret = event_notifier_init(&l->gb_pending, false);
    }
    if (ret) {
        error_setg_errno(errp, -ret, "nnp: remote link '%s'", item);
        link_free(l);
        return NULL;
    }
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
    l->is_unix = l->addr->type == SOCKET_ADDRESS_TYPE_UNIX;
    if (l->listen) {
        l->listen_fd = socket_listen(l->addr, NNP_ICL_PENDING_MAX, errp);
        if (l->listen_fd < 0) {
            error_prepend(errp, "nnp: remote link '%s': ", item);
            link_free(l);
            return NULL;
        }
        /* link_open() polls it with the connections in their hello. */
        qemu_socket_set_nonblock(l->listen_fd);
    }
    return l;
}

/* Into icl->key, the secret of the secret object @secret_id (not empty). */
static bool secret_load(NnpIclSockets *icl, const char *secret_id,
                        Error **errp)
{
    if (!secret_id) {
        error_setg(errp, "nnp: remote links need icl-secret, the id of a "
                   "secret object holding the job's secret");
        return false;
    }
    if (qcrypto_secret_lookup(secret_id, &icl->key, &icl->key_len, errp)) {
        return false;
    }
    if (!icl->key_len ||
        !qcrypto_hmac_supports(QCRYPTO_HASH_ALGO_SHA256)) {
        error_setg(errp, "nnp: the ICL secret '%s' is empty, or this QEMU "
                   "has no HMAC-SHA256", secret_id);
        return false;
    }
    return true;
}

NnpIclSockets *nnp_icl_sockets_new(const char *spec, const char *secret_id,
                                   struct nnp_fw *fw, uint32_t chip_id,
                                   unsigned num_ports, int mem_fd,
                                   uint64_t mem_size, Error **errp)
{
    NnpIclSockets *icl = g_new0(NnpIclSockets, 1);
    g_auto(GStrv) items = g_strsplit(spec, ";", -1);
    bool shares = false;
    unsigned i;
    char **p;

    icl->fw = fw;
    icl->chip_id = chip_id;
    icl->share_fd = -1;
    icl->mem_size = mem_size;
    if (!secret_load(icl, secret_id, errp)) {
        nnp_icl_sockets_free(icl);
        return NULL;
    }
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
        shares |= l->is_unix;
    }
    /* Only links on unix sockets share: only then is it all allocated. */
    if (mem_fd >= 0 && shares) {
        icl->share_fd = nnp_icl_shm_share(mem_fd);
        if (icl->share_fd < 0) {
            error_setg_errno(errp, -icl->share_fd,
                             "nnp: cannot allocate and seal the device "
                             "memory to share");
            nnp_icl_sockets_free(icl);
            return NULL;
        }
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

int nnp_icl_sockets_send(NnpIclSockets *icl, unsigned port, uint64_t epoch,
                         uint32_t seq, bool abort, uint64_t model_ns,
                         const void *data, size_t len)
{
    if (!nnp_icl_sockets_has_port(icl, port)) {
        return -1;
    }
    return nnp_icl_link_send(icl->links[port], abort ? NNP_ICL_ABORT : NNP_ICL_DATA,
                     epoch, seq, model_ns, data, len) ? 0 : -1;
}

/*
 * Set one part of @l's state (@part, under l->lock) to @up, and have the
 * link's thread tell the peer (@send): never waits for the network.
 */
static void link_change(NnpIclLink *l, bool *part, bool *send, bool up)
{
    qemu_mutex_lock(&l->lock);
    *part = up;
    *send = true;
    link_update_locked(l);
    qemu_mutex_unlock(&l->lock);
    event_notifier_set(&l->state_changed);
}

/*
 * Under the BQL, from the monitor. The link's thread tells the peer (or
 * the next hello does, if not connected).
 */
void nnp_icl_sockets_set_link(NnpIclSockets *icl, unsigned port, bool up)
{
    NnpIclLink *l = icl->links[port];

    link_change(l, &l->admin_up, &l->send_admin, up);
}

/*
 * From the firmware, no lock held: our chip stopped (a reset, or it died)
 * or runs again. As in one process, a stopped chip's links are down at
 * both ends, so that the far end's collectives end LINK_DOWN at once; the
 * link comes back when both chips run, unless the monitor keeps it down.
 * A peer not connected now hears of it first thing once it is
 * (link_join()).
 */
void nnp_icl_sockets_chip_state(NnpIclSockets *icl, unsigned port, bool up)
{
    NnpIclLink *l;

    if (!nnp_icl_sockets_has_port(icl, port)) {
        return;
    }
    l = icl->links[port];
    link_change(l, &l->chip_up, &l->send_chip, up);
}

/*
 * The firmware gave up on @port's peer (it did not give back lent chunks
 * in time): end the connection, never waiting; the link's thread takes
 * the link down and stops sharing, and (connecting) links again.
 */
void nnp_icl_sockets_drop(NnpIclSockets *icl, unsigned port)
{
    NnpIclLink *l;

    if (!nnp_icl_sockets_has_port(icl, port)) {
        return;
    }
    l = icl->links[port];
    nnp_icl_link_log(l, "the peer did not give lent chunks back in time");
    /* Under l->lock: link_close() forgets l->fd before closing it. */
    qemu_mutex_lock(&l->lock);
    if (l->fd >= 0) {
        shutdown(l->fd, SHUT_RDWR);
    }
    qemu_mutex_unlock(&l->lock);
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
    if (icl->key) {
        explicit_bzero(icl->key, icl->key_len);
        g_free(icl->key);
    }
    if (icl->share_fd >= 0) {
        close(icl->share_fd);
    }
    g_free(icl);
}
