// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_kprobe.c - kprobe:FUNC:entry and kprobe:FUNC:return, created on
 * demand by DTIOCKPROBE.
 *
 * Both are registered at creation, disabled; arming enables them and the
 * last disarm disables them.  They stay registered while any descriptor
 * has one of them enabled; past DT_KPROBE_MAX functions, creating another
 * first frees those that no descriptor uses (their ids die and are never
 * reused; a later DTIOCKPROBE of the same function makes new ones).  Registering disabled
 * first lets us refuse the tracer's own functions before they can fire:
 * a kprobe there would recurse into the tracer.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/err.h>

#include "dt.h"

#define DT_KPROBE_MAX	512	/* functions: bounds the memory a user pins */
/* freed kprobes leave their two small dt_probes (ids) behind: bound them */
#define DT_KPROBE_DEAD_MAX	(16 * DT_KPROBE_MAX)

struct dt_kp {
	struct kprobe		 k_kp;		/* [I] entry */
	struct kretprobe	 k_krp;		/* [I] return */
	struct dt_probe		*k_entry;	/* [I] */
	struct dt_probe		*k_return;	/* [I] */
	struct list_head	 k_link;	/* [g] on dt_kps */
	bool			 k_krp_dead;	/* [g] kretprobe not registered */
};

static LIST_HEAD(dt_kps);		/* [g] */
static unsigned int dt_nkps;		/* [g] */
static unsigned int dt_nkps_dead;	/* [g] freed so far */

static const struct dt_arg_info dt_kpargs_entry[6] = {
	{ "arg0", "long", 0, 1 }, { "arg1", "long", 1, 1 },
	{ "arg2", "long", 2, 1 }, { "arg3", "long", 3, 1 },
	{ "arg4", "long", 4, 1 }, { "arg5", "long", 5, 1 },
};
static const struct dt_arg_info dt_kpargs_return[2] = {
	{ "retval", "long", 0, 1 }, { "errno", "int", 1, 1 },
};

/*
 * Hits the kprobe core lost: the entry kprobe's nmissed (it fired while a
 * kprobe handler was running on that CPU), and for the return probe also
 * the kretprobe's (no free instance: more calls inside than maxactive).
 */
static unsigned long dt_kp_nmissed(struct dt_kp *k, bool ret)
{
	if (ret)
		return (unsigned long)READ_ONCE(k->k_krp.nmissed) +
		    READ_ONCE(k->k_krp.kp.nmissed);
	return READ_ONCE(k->k_kp.nmissed);
}

static unsigned long dt_kp_missed(struct dt_probe *dp)
{
	struct dt_kp *k = dp->dp_priv;

	return dt_kp_nmissed(k, dp == k->k_return);
}

static int dt_kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct dt_kp *k = container_of(kp, struct dt_kp, k_kp);
	u64 a[6];

	/* the x86-64 argument registers */
	a[0] = regs->di;
	a[1] = regs->si;
	a[2] = regs->dx;
	a[3] = regs->cx;
	a[4] = regs->r8;
	a[5] = regs->r9;
	dt_fire(k->k_entry, NULL, regs, a, 6, 0);
	dt_missed(k->k_entry, dt_kp_nmissed(k, false));
	return 0;
}

static int dt_kp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *krp = get_kretprobe(ri);
	struct dt_kp *k;
	unsigned long ret = regs_return_value(regs);
	u64 a[2];

	if (krp == NULL)
		return 0;
	k = container_of(krp, struct dt_kp, k_krp);
	a[0] = ret;
	a[1] = IS_ERR_VALUE(ret) ? (u64)-(long)ret : 0;
	dt_fire(k->k_return, NULL, regs, a, 2, DTR_RETURN);
	dt_missed(k->k_return, dt_kp_nmissed(k, true));
	return 0;
}

static int dt_kp_arm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	struct dt_kp *k = dp->dp_priv;

	if (dp->dp_narmed != 1)
		return 0;
	if (dp == k->k_entry)
		return enable_kprobe(&k->k_kp);
	if (k->k_krp_dead)
		return -EIO;
	return enable_kretprobe(&k->k_krp);
}

static void dt_kp_disarm(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	struct dt_kp *k = dp->dp_priv;

	if (dp->dp_narmed != 1)
		return;
	if (dp == k->k_entry)
		disable_kprobe(&k->k_kp);
	else if (!k->k_krp_dead)
		disable_kretprobe(&k->k_krp);
}

static const struct dt_provider dt_prov_kprobe = {
	.dtpv_name	= "kprobe",
	.dtpv_arm	= dt_kp_arm,
	.dtpv_disarm	= dt_kp_disarm,
	.dtpv_missed	= dt_kp_missed,
	.dtpv_lockdown	= LOCKDOWN_KPROBES,
};

/*
 * 0, or why a function cannot be probed.  register_kprobe has refused the
 * kprobe blacklist (NOKPROBE_SYMBOL, noinstr, entry code) already.  The
 * kernel's kprobe tracer also refuses functions ftrace cannot trace
 * (notrace: code that runs where tracing is not safe, within_notrace_func)
 * unless built with KPROBE_EVENTS_ON_NOTRACE; register_kprobe put the probe
 * on the function's ftrace site exactly when it has one
 * (check_ftrace_location), so the flag tells.
 */
static int dt_kp_check(struct kprobe *kp)
{
	unsigned long addr = (unsigned long)kp->addr;

	if (within_module(addr, THIS_MODULE))
		return -EPERM;
#if defined(CONFIG_KPROBES_ON_FTRACE) && !defined(CONFIG_KPROBE_EVENTS_ON_NOTRACE)
	if (!(kp->flags & KPROBE_FLAG_FTRACE))
		return -EINVAL;
#endif
	return 0;
}

static unsigned int dt_krp_default(void)
{
	return clamp_t(unsigned int, 16 * num_possible_cpus(),
		       DT_KRP_MAXACTIVE_DEFAULT, DT_KRP_MAXACTIVE_MAX);
}

/* [g] held; k's return probe is not armed (its kretprobe is disabled) */
static int dt_krp_register(struct dt_kp *k, unsigned int maxactive)
{
	memset(&k->k_krp, 0, sizeof(k->k_krp));
	k->k_krp.kp.symbol_name = k->k_return->dp_func;
	k->k_krp.kp.flags = KPROBE_FLAG_DISABLED;
	k->k_krp.handler = dt_kp_ret;
	k->k_krp.maxactive = maxactive;
	return register_kretprobe(&k->k_krp);
}

/*
 * [g] held, k's return probe not armed: register its kretprobe again with
 * more instances.  A kretprobe that is not registered (k_krp_dead: a
 * re-registration failed, say because the function's module was unloaded)
 * must not be unregistered: its rethook is gone, and unregistering
 * dereferences it.  If the new count cannot be registered, the old one is
 * tried again (it worked before); if that fails too the return probe is
 * dead (arming it fails with EIO) until a later raise registers it.
 */
static int dt_krp_raise(struct dt_kp *k, unsigned int maxactive)
{
	unsigned int old = k->k_krp.maxactive;
	int error;

	if (!k->k_krp_dead)
		unregister_kretprobe(&k->k_krp);
	error = dt_krp_register(k, maxactive);
	if (error == 0) {
		k->k_krp_dead = false;
		return 0;
	}
	if (!k->k_krp_dead && dt_krp_register(k, old) == 0)
		return error;
	if (!k->k_krp_dead)
		pr_warn("dt: kretprobe %s lost\n", k->k_return->dp_func);
	k->k_krp_dead = true;
	/* what a dead probe reports: the count asked for last */
	k->k_krp.maxactive = old;
	return error;
}

static void dt_kp_free(struct dt_kp *k)
{
	kfree(k->k_entry);
	kfree(k->k_return);
	kfree(k);
}

/*
 * [g] held.  Free the kprobes no descriptor has enabled (so none is armed
 * and no handler can run), unregistering them in two batches.
 */
static void dt_kp_reap(void)
{
	struct dt_kp *k, *tmp;
	struct kprobe **kps;
	struct kretprobe **krps;
	unsigned int n = 0, nr = 0;
	LIST_HEAD(dead);

	kps = kcalloc(dt_nkps, sizeof(*kps), GFP_KERNEL);
	krps = kcalloc(dt_nkps, sizeof(*krps), GFP_KERNEL);
	if (kps == NULL || krps == NULL)
		goto out;
	list_for_each_entry_safe(k, tmp, &dt_kps, k_link) {
		if (k->k_entry->dp_nref != 0 || k->k_return->dp_nref != 0)
			continue;
		if (dt_nkps_dead + 2 > DT_KPROBE_DEAD_MAX)
			break;
		kps[n++] = &k->k_kp;
		if (!k->k_krp_dead)
			krps[nr++] = &k->k_krp;
		k->k_entry->dp_dead = true;
		k->k_return->dp_dead = true;
		dt_nkps_dead += 2;
		list_move(&k->k_link, &dead);
		dt_nkps--;
	}
	if (n != 0)
		unregister_kprobes(kps, n);
	if (nr != 0)
		unregister_kretprobes(krps, nr);
	/* the dt_probes stay in the probe table, dead; their ids never return */
	list_for_each_entry_safe(k, tmp, &dead, k_link) {
		list_del(&k->k_link);
		kfree(k);
	}
out:
	kfree(kps);
	kfree(krps);
}

int dt_kprobe_create(struct dt_kprobe *req)
{
	struct dt_kp *k;
	unsigned int maxactive;
	size_t len;
	int error;

	len = strnlen(req->dtkp_func, sizeof(req->dtkp_func));
	if (len == 0 || len == sizeof(req->dtkp_func))
		return -EINVAL;
	if (len >= DT_FUNCLEN)
		return -ENAMETOOLONG;
	if (req->dtkp_pad != 0 || req->dtkp_maxactive > DT_KRP_MAXACTIVE_MAX)
		return -EINVAL;
	/* lockdown=confidentiality: no kprobes, as for the kprobe tracer */
	error = security_locked_down(LOCKDOWN_KPROBES);
	if (error)
		return error;
	maxactive = req->dtkp_maxactive ? req->dtkp_maxactive :
	    dt_krp_default();

	mutex_lock(&dt_lock);
	list_for_each_entry(k, &dt_kps, k_link) {
		if (strcmp(k->k_entry->dp_func, req->dtkp_func) != 0)
			continue;
		error = 0;
		/*
		 * Raise (never lower) the instances of an idle return probe:
		 * another descriptor may rely on the larger count.
		 */
		if (req->dtkp_maxactive > (u32)k->k_krp.maxactive) {
			if (k->k_return->dp_narmed != 0)
				error = -EBUSY;
			else
				error = dt_krp_raise(k, maxactive);
		}
		req->dtkp_entry_id = k->k_entry->dp_id;
		req->dtkp_return_id = k->k_return->dp_id;
		req->dtkp_maxactive = k->k_krp.maxactive;
		mutex_unlock(&dt_lock);
		return error;
	}
	if (dt_nkps >= DT_KPROBE_MAX)
		dt_kp_reap();
	if (dt_nkps >= DT_KPROBE_MAX) {
		error = -ENOSPC;
		goto unlock;
	}
	/* after registering, inserting must not fail */
	error = dt_probe_reserve(2);
	if (error)
		goto unlock;
	error = -ENOMEM;
	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (k == NULL)
		goto unlock;
	k->k_entry = dt_probe_new(&dt_prov_kprobe, req->dtkp_func, "entry", 6,
				  6, dt_kpargs_entry, 0);
	k->k_return = dt_probe_new(&dt_prov_kprobe, req->dtkp_func, "return",
				   2, 2, dt_kpargs_return, DT_PF_RETURN);
	if (k->k_entry == NULL || k->k_return == NULL)
		goto fail;
	k->k_entry->dp_priv = k;
	k->k_return->dp_priv = k;

	/* symbol_name must outlive the kprobe: the probe's copy does */
	k->k_kp.symbol_name = k->k_entry->dp_func;
	k->k_kp.pre_handler = dt_kp_pre;
	k->k_kp.flags = KPROBE_FLAG_DISABLED;
	error = register_kprobe(&k->k_kp);
	if (error) {
		/* unknown symbol: ENOENT; blacklisted or unprobeable: EINVAL */
		if (error != -ENOENT)
			error = -EINVAL;
		goto fail;
	}
	error = dt_kp_check(&k->k_kp);
	if (error) {
		unregister_kprobe(&k->k_kp);
		goto fail;
	}
	error = dt_krp_register(k, maxactive);
	if (error) {
		unregister_kprobe(&k->k_kp);
		if (error != -ENOENT)
			error = -EINVAL;
		goto fail;
	}
	dt_probe_insert(k->k_entry);
	dt_probe_insert(k->k_return);
	list_add_tail(&k->k_link, &dt_kps);
	dt_nkps++;
	req->dtkp_entry_id = k->k_entry->dp_id;
	req->dtkp_return_id = k->k_return->dp_id;
	req->dtkp_maxactive = k->k_krp.maxactive;
	mutex_unlock(&dt_lock);
	return 0;
fail:
	dt_kp_free(k);
unlock:
	mutex_unlock(&dt_lock);
	return error;
}

/*
 * Module unload: no descriptor is open, every kprobe is disabled.  One
 * batch per kind: each unregister call waits for running handlers once
 * for the whole array, not once per probe.
 */
void dt_kprobe_exit(void)
{
	struct dt_kp *k, *tmp;
	struct kprobe **kps;
	struct kretprobe **krps;
	unsigned int n = 0, nr = 0;

	if (dt_nkps == 0)
		return;
	kps = kcalloc(dt_nkps, sizeof(*kps), GFP_KERNEL);
	krps = kcalloc(dt_nkps, sizeof(*krps), GFP_KERNEL);
	list_for_each_entry(k, &dt_kps, k_link) {
		if (kps != NULL && krps != NULL) {
			kps[n++] = &k->k_kp;
			if (!k->k_krp_dead)
				krps[nr++] = &k->k_krp;
		} else {
			unregister_kprobe(&k->k_kp);
			if (!k->k_krp_dead)
				unregister_kretprobe(&k->k_krp);
		}
	}
	if (n != 0)
		unregister_kprobes(kps, n);
	if (nr != 0)
		unregister_kretprobes(krps, nr);
	kfree(kps);
	kfree(krps);
	/* unregister waits for running handlers; probes are freed later */
	list_for_each_entry_safe(k, tmp, &dt_kps, k_link) {
		list_del(&k->k_link);
		kfree(k);
	}
	dt_nkps = 0;
}
