// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_uprobe.c - uprobe:FUNC:entry and uprobe:FUNC:return on an instruction
 * of a file (executable or shared library), created on demand by
 * DTIOCUPROBE from a path and a file offset that user space resolved (the
 * ELF symbol, or a USDT note with its semaphore).
 *
 * Each probe has its own uprobe consumer, registered with the kernel's
 * uprobe core when its first pcb is armed and unregistered at its last
 * disarm: a breakpoint sits in the processes that map the file only while
 * something records it, and a return probe hijacks return addresses only
 * then.  uprobe_unregister waits for handlers that are running.  Handlers
 * run in the probed task's context with the user registers.
 *
 * The file is held (igrab) for the module's lifetime; past DT_UPROBE_MAX
 * sites creating another fails with ENOSPC.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/uprobes.h>
#include <linux/uaccess.h>
#include <linux/err.h>

#include "dt.h"

#define DT_UPROBE_MAX	1024	/* sites: bounds the memory a user pins */

struct dt_up {
	struct uprobe_consumer	 u_uce;		/* [I] entry: handler */
	struct uprobe_consumer	 u_ucr;		/* [I] return: ret_handler */
	struct inode		*u_inode;	/* [I] held */
	loff_t			 u_offset;	/* [I] */
	loff_t			 u_refctr;	/* [I] semaphore offset or 0 */
	struct dt_probe		*u_entry;	/* [I] */
	struct dt_probe		*u_return;	/* [I] */
	struct list_head	 u_link;	/* [g] on dt_ups */
	bool			 u_regent;	/* [g] u_uce registered */
	bool			 u_regret;	/* [g] u_ucr registered */
};

static LIST_HEAD(dt_ups);		/* [g] */
static unsigned int dt_nups;		/* [g] */

static const struct dt_arg_info dt_upargs_entry[6] = {
	{ "arg0", "long", 0, 1 }, { "arg1", "long", 1, 1 },
	{ "arg2", "long", 2, 1 }, { "arg3", "long", 3, 1 },
	{ "arg4", "long", 4, 1 }, { "arg5", "long", 5, 1 },
};
/* errno: always 0 (no convention in user code), as on the perf source */
static const struct dt_arg_info dt_upargs_return[2] = {
	{ "retval", "long", 0, 1 }, { "errno", "int", 1, 1 },
};

static int dt_up_entry(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct dt_up *u = container_of(uc, struct dt_up, u_uce);
	u64 a[6];

	/* the x86-64 argument registers */
	a[0] = regs->di;
	a[1] = regs->si;
	a[2] = regs->dx;
	a[3] = regs->cx;
	a[4] = regs->r8;
	a[5] = regs->r9;
	dt_fire(u->u_entry, NULL, regs, a, 6, 0);
	return 0;
}

static int dt_up_return(struct uprobe_consumer *uc, unsigned long func,
			struct pt_regs *regs)
{
	struct dt_up *u = container_of(uc, struct dt_up, u_ucr);
	u64 a[2];

	a[0] = regs_return_value(regs);
	a[1] = 0;
	dt_fire(u->u_return, NULL, regs, a, 2, DTR_RETURN);
	return 0;
}

/* dp_narmed counts the pcb being armed, and on disarm the one going */
static int dt_up_arm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	struct dt_up *u = dp->dp_priv;
	bool ret = dp == u->u_return;
	bool *reg = ret ? &u->u_regret : &u->u_regent;
	int error;

	if (*reg)
		return 0;
	error = uprobe_register_refctr(u->u_inode, u->u_offset, u->u_refctr,
				       ret ? &u->u_ucr : &u->u_uce);
	if (error == 0)
		*reg = true;
	return error;
}

static void dt_up_disarm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	struct dt_up *u = dp->dp_priv;
	bool ret = dp == u->u_return;
	bool *reg = ret ? &u->u_regret : &u->u_regent;

	if (dp->dp_narmed != 1 || !*reg)
		return;
	uprobe_unregister(u->u_inode, u->u_offset, ret ? &u->u_ucr : &u->u_uce);
	*reg = false;
}

static const struct dt_provider dt_prov_uprobe = {
	.dtpv_name	= "uprobe",
	.dtpv_arm	= dt_up_arm,
	.dtpv_disarm	= dt_up_disarm,
};

/* The regular file at the user's path, held, or an error pointer. */
static struct inode *dt_up_inode(u64 upath)
{
	struct inode *inode;
	struct path path;
	char *name;
	int error;

	name = strndup_user(u64_to_user_ptr(upath), PATH_MAX);
	if (IS_ERR(name))
		return ERR_CAST(name);
	error = kern_path(name, LOOKUP_FOLLOW, &path);
	kfree(name);
	if (error)
		return ERR_PTR(error);
	inode = d_real_inode(path.dentry);
	if (!S_ISREG(inode->i_mode))
		inode = ERR_PTR(-EINVAL);
	else
		inode = igrab(inode);
	path_put(&path);
	return inode != NULL ? inode : ERR_PTR(-ENOENT);
}

int dt_uprobe_create(struct dt_uprobe *req)
{
	struct inode *inode;
	struct dt_up *u;
	loff_t size;
	size_t len;
	int error;

	len = strnlen(req->dtup_func, sizeof(req->dtup_func));
	if (len == 0 || len == sizeof(req->dtup_func))
		return -EINVAL;
	if (req->dtup_offset > LLONG_MAX || req->dtup_refctr > LLONG_MAX)
		return -EINVAL;
	inode = dt_up_inode(req->dtup_path);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	/* uprobe_register refuses these too, but only once something records */
	size = i_size_read(inode);
	if ((loff_t)req->dtup_offset >= size ||
	    (loff_t)req->dtup_refctr >= size) {
		iput(inode);
		return -EINVAL;
	}

	mutex_lock(&dt_lock);
	list_for_each_entry(u, &dt_ups, u_link) {
		if (u->u_inode != inode || u->u_offset != req->dtup_offset ||
		    u->u_refctr != req->dtup_refctr ||
		    strcmp(u->u_entry->dp_func, req->dtup_func) != 0)
			continue;
		req->dtup_entry_id = u->u_entry->dp_id;
		req->dtup_return_id = u->u_return->dp_id;
		mutex_unlock(&dt_lock);
		iput(inode);
		return 0;
	}
	error = -ENOSPC;
	if (dt_nups >= DT_UPROBE_MAX)
		goto unlock;
	/* after this, inserting cannot fail */
	error = dt_probe_reserve(2);
	if (error)
		goto unlock;
	error = -ENOMEM;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (u == NULL)
		goto unlock;
	u->u_entry = dt_probe_new(&dt_prov_uprobe, req->dtup_func, "entry", 6,
				  6, dt_upargs_entry, 0);
	u->u_return = dt_probe_new(&dt_prov_uprobe, req->dtup_func, "return",
				   2, 2, dt_upargs_return, DT_PF_RETURN);
	if (u->u_entry == NULL || u->u_return == NULL) {
		kfree(u->u_entry);
		kfree(u->u_return);
		kfree(u);
		goto unlock;
	}
	u->u_entry->dp_priv = u;
	u->u_return->dp_priv = u;
	u->u_uce.handler = dt_up_entry;
	u->u_ucr.ret_handler = dt_up_return;
	u->u_inode = inode;
	u->u_offset = req->dtup_offset;
	u->u_refctr = req->dtup_refctr;
	dt_probe_insert(u->u_entry);
	dt_probe_insert(u->u_return);
	list_add_tail(&u->u_link, &dt_ups);
	dt_nups++;
	req->dtup_entry_id = u->u_entry->dp_id;
	req->dtup_return_id = u->u_return->dp_id;
	mutex_unlock(&dt_lock);
	return 0;
unlock:
	mutex_unlock(&dt_lock);
	iput(inode);
	return error;
}

/* Module unload: no descriptor is open, so none is registered. */
void dt_uprobe_exit(void)
{
	struct dt_up *u, *tmp;

	list_for_each_entry_safe(u, tmp, &dt_ups, u_link) {
		if (u->u_regent)
			uprobe_unregister(u->u_inode, u->u_offset, &u->u_uce);
		if (u->u_regret)
			uprobe_unregister(u->u_inode, u->u_offset, &u->u_ucr);
		iput(u->u_inode);
		list_del(&u->u_link);
		kfree(u);	/* the dt_probes go with the probe table */
	}
	dt_nups = 0;
}
