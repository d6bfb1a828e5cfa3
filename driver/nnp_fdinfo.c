// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko fdinfo: what one open file uses, in the keys of the kernel's
 * Documentation/gpu/drm-usage-stats.rst (docs/uapi.md, "fdinfo").
 *
 * drm_show_fdinfo() prints drm-driver, drm-client-id and drm-pdev; this
 * adds the memory of the file's objects, by region, and how long each
 * engine was busy with the file's commands. Commands go from user-mapped
 * rings straight to the device, so only the firmware sees them: it counts
 * each context's engine time on its modeled clock (GET_CTX_USAGE, hw 1.10)
 * and a file is one context. What is not measured is not printed: no
 * drm-active-* (the driver cannot tell which objects commands in flight
 * use), no drm-purgeable-* (nothing is purgeable).
 */
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "nnp_drv.h"
#include "nnp_bo.h"

static const char * const nnp_engine_names[NNP_HW_ENGINES] = {
	[NNP_HW_ENGINE_COPY] = "copy",
	[NNP_HW_ENGINE_COLL] = "collective",
};

/* Memory regions: the device's own memory, and host memory it reaches. */
enum { NNP_REGION_DEVICE, NNP_REGION_HOST, NNP_REGIONS };

static const char * const nnp_region_names[NNP_REGIONS] = {
	[NNP_REGION_DEVICE] = "device",
	[NNP_REGION_HOST] = "host",
};

struct nnp_region_stats {
	u64 total;
	u64 shared;
};

/* GET_CTX_USAGE: hardware interface 1.10 on. */
static bool nnp_has_ctx_usage(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 10;
}

/*
 * Every object with a handle in @file: device memory has a range of BAR2;
 * host pages and pinned user memory are the host's. Rings and doorbells
 * have no handle, so they are not counted. Every object is resident: its
 * memory is allocated, or pinned, from creation to free.
 */
static void nnp_fdinfo_memory(struct drm_printer *p, struct drm_file *file)
{
	struct nnp_region_stats st[NNP_REGIONS] = {};
	struct drm_gem_object *obj;
	int id, r;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct nnp_bo *bo = to_nnp_bo(obj);

		r = drm_mm_node_allocated(&bo->node) ? NNP_REGION_DEVICE :
						       NNP_REGION_HOST;
		st[r].total += obj->size;
		if (drm_gem_object_is_shared_for_memory_stats(obj))
			st[r].shared += obj->size;
	}
	spin_unlock(&file->table_lock);

	/* In bytes, the keys' default unit: exact at any size. */
	for (r = 0; r < NNP_REGIONS; r++) {
		drm_printf(p, "drm-total-%s:\t%llu\n", nnp_region_names[r],
			   st[r].total);
		drm_printf(p, "drm-shared-%s:\t%llu\n", nnp_region_names[r],
			   st[r].shared);
		drm_printf(p, "drm-resident-%s:\t%llu\n", nnp_region_names[r],
			   st[r].total);
	}
}

/*
 * The largest value of each engine shown so far, raised to @busy: after a
 * reset took the context (the firmware's counts start over, and the file
 * is lost) the file shows what it had, and never less.
 */
static u64 nnp_fdinfo_raise(atomic64_t *seen, u64 busy)
{
	s64 old = atomic64_read(seen);

	while (busy > (u64)old) {
		s64 prev = atomic64_cmpxchg(seen, old, busy);

		if (prev == old)
			return busy;
		old = prev;
	}
	return old;
}

static void nnp_fdinfo_engines(struct drm_printer *p, struct nnp_file *nf)
{
	struct nnp_device *ndev = nf->ndev;
	__le32 arg = cpu_to_le32(nf->ctx);
	struct nnp_hw_ctx_usage u = {};
	int i, ret = -ECANCELED;

	if (!nnp_has_ctx_usage(ndev))
		return;
	/* A lost file's context is gone with its counts: NOT_FOUND. */
	if (!nnp_file_lost(nf))
		ret = nnp_admin_read_args(ndev, NNP_ADMIN_GET_CTX_USAGE, &arg,
					  sizeof(arg), &u, sizeof(u), NULL);
	for (i = 0; i < NNP_HW_ENGINES; i++)
		drm_printf(p, "drm-engine-%s:\t%llu ns\n", nnp_engine_names[i],
			   nnp_fdinfo_raise(&nf->busy_ns[i],
					    ret ? 0 : le64_to_cpu(u.busy_ns[i])));
}

/* drm_driver.show_fdinfo: after drm_show_fdinfo()'s keys. */
void nnp_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	nnp_fdinfo_engines(p, file->driver_priv);
	nnp_fdinfo_memory(p, file);
	nnp_comms_fdinfo(file->driver_priv, p);
}
