// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko per-user limits. Contexts, queues, communicators and memory keys
 * live in device-wide tables (255, 64, 63 and 4096 entries), and device
 * memory is one pool: with no share per user, one user could take a whole
 * table or all the memory and lock every other user out of the device.
 * Each user (by real uid, as RLIMIT_MEMLOCK counts) gets at most a module
 * parameter's worth of each; a file opened with CAP_SYS_RESOURCE goes past
 * them, as it does past rlimits. Over a limit: -EDQUOT.
 *
 * A memory object can outlive its file (in a mapping or a dma-buf): its
 * key and memory stay charged to the user until it is freed, and the user
 * is remembered until it holds nothing.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "nnp_drv.h"

static unsigned int nnp_user_max[NNP_LIMIT_COUNT] = {
	[NNP_LIMIT_CONTEXTS] = 64,
	[NNP_LIMIT_QUEUES] = 16,
	[NNP_LIMIT_COMMS] = 16,
	[NNP_LIMIT_KEYS] = 1024,
	[NNP_LIMIT_DEVICE_MEM] = 50,
};
module_param_named(max_contexts_per_user, nnp_user_max[NNP_LIMIT_CONTEXTS],
		   uint, 0644);
MODULE_PARM_DESC(max_contexts_per_user,
		 "Open files (device contexts) one user may hold per device");
module_param_named(max_queues_per_user, nnp_user_max[NNP_LIMIT_QUEUES], uint,
		   0644);
MODULE_PARM_DESC(max_queues_per_user, "Queues one user may hold per device");
module_param_named(max_comms_per_user, nnp_user_max[NNP_LIMIT_COMMS], uint,
		   0644);
MODULE_PARM_DESC(max_comms_per_user,
		 "Communicators one user may hold per device");
module_param_named(max_keys_per_user, nnp_user_max[NNP_LIMIT_KEYS], uint,
		   0644);
MODULE_PARM_DESC(max_keys_per_user,
		 "Memory objects one user may hold per device (the device has "
		 __stringify(NNP_HW_MAX_KEYS) " keys for all)");
module_param_named(max_device_mem_per_user,
		   nnp_user_max[NNP_LIMIT_DEVICE_MEM], uint, 0644);
MODULE_PARM_DESC(max_device_mem_per_user,
		 "Percent of device memory one user may hold (0-100)");

/*
 * What one user holds on one device; lives while the user holds anything:
 * a file, or a memory object that outlived its file.
 */
struct nnp_user {
	struct list_head node;
	kuid_t uid;
	u64 used[NNP_LIMIT_COUNT];	/* device memory in bytes */
};

static struct nnp_user *nnp_user_find(struct nnp_device *ndev, kuid_t uid)
{
	struct nnp_user *u;

	list_for_each_entry(u, &ndev->users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * How much of @what one user may hold. Device memory's limit is a share of
 * the device's, since devices differ in size.
 */
static u64 nnp_user_cap(struct nnp_device *ndev, enum nnp_limit what)
{
	unsigned int max = READ_ONCE(nnp_user_max[what]);

	if (what == NNP_LIMIT_DEVICE_MEM)
		return div_u64(ndev->id.mem_size * min(max, 100U), 100);
	return max;
}

/* Under users_lock: charge @n of @what to @nf's user, or -EDQUOT. */
static int nnp_user_charge_locked(struct nnp_file *nf, enum nnp_limit what,
				  u64 n)
{
	lockdep_assert_held(&nf->ndev->users_lock);
	if (!nf->unlimited &&
	    nf->user->used[what] + n > nnp_user_cap(nf->ndev, what))
		return -EDQUOT;
	nf->user->used[what] += n;
	return 0;
}

/* Under users_lock: a user who holds nothing on the device is forgotten. */
static void nnp_user_drop_unused(struct nnp_user *u)
{
	unsigned int i;

	for (i = 0; i < NNP_LIMIT_COUNT; i++)
		if (u->used[i])
			return;
	list_del(&u->node);
	kfree(u);
}

int nnp_user_charge_n(struct nnp_file *nf, enum nnp_limit what, u64 n)
{
	int ret;

	mutex_lock(&nf->ndev->users_lock);
	ret = nnp_user_charge_locked(nf, what, n);
	mutex_unlock(&nf->ndev->users_lock);
	return ret;
}

int nnp_user_charge(struct nnp_file *nf, enum nnp_limit what)
{
	return nnp_user_charge_n(nf, what, 1);
}

/*
 * Give back @n of @what. @nf may be closed already (its memory object
 * lived on); its user is forgotten with the last thing it held.
 */
void nnp_user_uncharge_n(struct nnp_file *nf, enum nnp_limit what, u64 n)
{
	struct nnp_user *u = nf->user;

	mutex_lock(&nf->ndev->users_lock);
	if (!WARN_ON(u->used[what] < n))
		u->used[what] -= n;
	nnp_user_drop_unused(u);
	mutex_unlock(&nf->ndev->users_lock);
}

void nnp_user_uncharge(struct nnp_file *nf, enum nnp_limit what)
{
	nnp_user_uncharge_n(nf, what, 1);
}

/* A new file of the calling user: its context is charged to the user. */
int nnp_user_open(struct nnp_file *nf)
{
	struct nnp_device *ndev = nf->ndev;
	kuid_t uid = current_uid();
	struct nnp_user *u, *fresh;
	int ret;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;
	nf->unlimited = capable(CAP_SYS_RESOURCE);
	mutex_lock(&ndev->users_lock);
	u = nnp_user_find(ndev, uid);
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		list_add(&u->node, &ndev->users);
	}
	nf->user = u;
	ret = nnp_user_charge_locked(nf, NNP_LIMIT_CONTEXTS, 1);
	if (ret) {
		nnp_user_drop_unused(u);
		nf->user = NULL;
	}
	mutex_unlock(&ndev->users_lock);
	kfree(fresh);
	return ret;
}

/*
 * The file is closed, its queues and communicators already gone. Its
 * memory objects may not be: @nf keeps its user for them to give their
 * charges back to.
 */
void nnp_user_close(struct nnp_file *nf)
{
	nnp_user_uncharge(nf, NNP_LIMIT_CONTEXTS);
}
