/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp fabric: wires the ICL ports of the nnp devices in one QEMU.
 *
 * -device nnp,chip-id=N,fabric=TOPOLOGY on every chip, with TOPOLOGY one of
 *   ring          port 0 to the next chip's port 1 (chips in chip id order)
 *   full          chip i reaches chip j on port j (j < i) or j - 1 (j > i)
 *   mesh:WxH      chip i at (i % W, i / W): port 0 east to port 1,
 *   torus:WxH     port 2 south to port 3; a torus wraps around
 *   links:A.P-B.Q;...   explicit chip.port pairs
 * At run time, from the monitor (for a device with id=nnp0):
 *   qom-set /machine/peripheral/nnp0 link-down 0   (and link-up)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/notify.h"
#include "system/system.h"

#include "nnp_fabric.h"
#include "nnp_fw.h"

struct NnpChip {
    uint32_t id;
    struct nnp_fw *fw;
};

/* The one fabric of this process; touched only under the BQL. */
static struct {
    char *topology;
    GArray *chips;          /* struct NnpChip */
    Notifier machine_done;
} fabric;

static struct nnp_fw *chip_fw(uint32_t id)
{
    guint i;

    for (i = 0; i < fabric.chips->len; i++) {
        struct NnpChip *c = &g_array_index(fabric.chips, struct NnpChip, i);

        if (c->id == id) {
            return c->fw;
        }
    }
    return NULL;
}

static bool wire(uint32_t a, unsigned pa, uint32_t b, unsigned pb,
                 Error **errp)
{
    struct nnp_fw *fa = chip_fw(a), *fb = chip_fw(b);

    if (!fa || !fb) {
        error_setg(errp, "nnp fabric: no chip %u", fa ? b : a);
        return false;
    }
    if (nnp_fw_link_connect(fa, pa, fb, pb)) {
        error_setg(errp, "nnp fabric: cannot link chip %u port %u to chip %u "
                   "port %u (no such port, or already linked)", a, pa, b, pb);
        return false;
    }
    return true;
}

static bool wire_grid(unsigned w, unsigned h, bool wrap, Error **errp)
{
    unsigned x, y;

    if (w * h != fabric.chips->len) {
        error_setg(errp, "nnp fabric: %ux%u grid for %u chips", w, h,
                   fabric.chips->len);
        return false;
    }
    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            uint32_t me = y * w + x;

            if ((x + 1 < w || (wrap && w > 1)) &&
                !wire(me, 0, y * w + (x + 1) % w, 1, errp)) {
                return false;
            }
            if ((y + 1 < h || (wrap && h > 1)) &&
                !wire(me, 2, ((y + 1) % h) * w + x, 3, errp)) {
                return false;
            }
        }
    }
    return true;
}

static bool wire_links(const char *spec, Error **errp)
{
    g_auto(GStrv) pairs = g_strsplit(spec, ";", -1);
    char **p;

    for (p = pairs; *p; p++) {
        unsigned a, pa, b, pb;
        char end;

        if (sscanf(*p, "%u.%u-%u.%u%c", &a, &pa, &b, &pb, &end) != 4) {
            error_setg(errp, "nnp fabric: bad link '%s' (want A.P-B.Q)", *p);
            return false;
        }
        if (!wire(a, pa, b, pb, errp)) {
            return false;
        }
    }
    return true;
}

static bool wire_topology(const char *t, Error **errp)
{
    unsigned n = fabric.chips->len, i, j, w, h;

    if (!strcmp(t, "ring")) {
        for (i = 0; i < n && n > 1; i++) {
            if (!wire(i, 0, (i + 1) % n, 1, errp)) {
                return false;
            }
        }
        return true;
    }
    if (!strcmp(t, "full")) {
        for (i = 0; i < n; i++) {
            for (j = i + 1; j < n; j++) {
                if (!wire(i, j - 1, j, i, errp)) {
                    return false;
                }
            }
        }
        return true;
    }
    if (sscanf(t, "mesh:%ux%u", &w, &h) == 2) {
        return wire_grid(w, h, false, errp);
    }
    if (sscanf(t, "torus:%ux%u", &w, &h) == 2) {
        return wire_grid(w, h, true, errp);
    }
    if (g_str_has_prefix(t, "links:")) {
        return wire_links(t + strlen("links:"), errp);
    }
    error_setg(errp, "nnp fabric: unknown topology '%s'", t);
    return false;
}

/* Every device is realized now: make the links (a bad fabric is fatal). */
static void nnp_fabric_machine_done(Notifier *n, void *data)
{
    wire_topology(fabric.topology, &error_fatal);
}

bool nnp_fabric_join(const char *topology, uint32_t chip_id,
                     struct nnp_fw *fw, Error **errp)
{
    struct NnpChip c = { .id = chip_id, .fw = fw };

    if (!fabric.chips) {
        fabric.chips = g_array_new(false, true, sizeof(struct NnpChip));
        fabric.topology = g_strdup(topology);
        fabric.machine_done.notify = nnp_fabric_machine_done;
        qemu_add_machine_init_done_notifier(&fabric.machine_done);
    } else if (strcmp(fabric.topology, topology)) {
        error_setg(errp, "nnp: fabric '%s' differs from another chip's '%s'",
                   topology, fabric.topology);
        return false;
    }
    if (chip_fw(chip_id)) {
        error_setg(errp, "nnp: two chips with chip-id %u on one fabric",
                   chip_id);
        return false;
    }
    g_array_append_val(fabric.chips, c);
    return true;
}

void nnp_fabric_leave(struct nnp_fw *fw)
{
    guint i;

    for (i = 0; fabric.chips && i < fabric.chips->len; i++) {
        if (g_array_index(fabric.chips, struct NnpChip, i).fw == fw) {
            g_array_remove_index(fabric.chips, i);
            return;
        }
    }
}
