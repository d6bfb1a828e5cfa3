// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko per-user limits. Contexts, queues and communicators live in
 * device-wide tables (255, 64 and 63 entries): with no share per user, one
 * user could take a whole table and lock every other user out of the
 * device. Each user (by real uid, as RLIMIT_MEMLOCK counts) gets at most
 * a module parameter's worth of each; a file opened with CAP_SYS_RESOURCE
 * goes past them, as it does past rlimits. Over a limit: -EDQUOT.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "nnp_drv.h"

static unsigned int nnp_user_max[NNP_LIMIT_COUNT] = {
	[NNP_LIMIT_CONTEXTS] = 64,
	[NNP_LIMIT_QUEUES] = 16,
	[NNP_LIMIT_COMMS] = 16,
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

/* What one user holds on one device; lives while the user has a file. */
struct nnp_user {
	struct list_head node;
	kuid_t uid;
	unsigned int used[NNP_LIMIT_COUNT];
};

static struct nnp_user *nnp_user_find(struct nnp_device *ndev, kuid_t uid)
{
	struct nnp_user *u;

	list_for_each_entry(u, &ndev->users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* Under users_lock: charge one @what to @nf's user, or -EDQUOT. */
static int nnp_user_charge_locked(struct nnp_file *nf, enum nnp_limit what)
{
	lockdep_assert_held(&nf->ndev->users_lock);
	if (!nf->unlimited &&
	    nf->user->used[what] >= READ_ONCE(nnp_user_max[what]))
		return -EDQUOT;
	nf->user->used[what]++;
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

int nnp_user_charge(struct nnp_file *nf, enum nnp_limit what)
{
	int ret;

	mutex_lock(&nf->ndev->users_lock);
	ret = nnp_user_charge_locked(nf, what);
	mutex_unlock(&nf->ndev->users_lock);
	return ret;
}

void nnp_user_uncharge(struct nnp_file *nf, enum nnp_limit what)
{
	mutex_lock(&nf->ndev->users_lock);
	if (!WARN_ON(!nf->user->used[what]))
		nf->user->used[what]--;
	mutex_unlock(&nf->ndev->users_lock);
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
	ret = nnp_user_charge_locked(nf, NNP_LIMIT_CONTEXTS);
	if (ret) {
		nnp_user_drop_unused(u);
		nf->user = NULL;
	}
	mutex_unlock(&ndev->users_lock);
	kfree(fresh);
	return ret;
}

/* The file is closed, its queues and communicators already gone. */
void nnp_user_close(struct nnp_file *nf)
{
	mutex_lock(&nf->ndev->users_lock);
	nf->user->used[NNP_LIMIT_CONTEXTS]--;
	nnp_user_drop_unused(nf->user);
	mutex_unlock(&nf->ndev->users_lock);
	nf->user = NULL;
}
