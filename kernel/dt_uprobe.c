// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_uprobe.c - uprobe:FUNC:entry and uprobe:FUNC:return on an instruction
 * of a file (executable or shared library), created on demand by
 * DTIOCUPROBE from a path and a file offset that user space resolved (the
 * ELF symbol, or a USDT note with its semaphore).
 *
 * Each probe has its own uprobe consumer, registered with the kernel's
 * uprobe core when its first pcb is prepared (before it is armed) and
 * unregistered when its last one is unprepared (after its disarm): a
 * breakpoint sits in the processes that map the file only while something
 * records it, and a return probe hijacks return addresses only then.
 * uprobe_unregister waits for handlers that are running.  Handlers run in
 * the probed task's context with the user registers.  Registering reads
 * the file (the probed instruction, in every process mapping it), which
 * on FUSE or a slow disk can take as long as the file system likes: it is
 * done outside dt_lock (dtpv_prepare), under dt_up_reglock, which only
 * other uprobe (un)registrations wait for.  A site list cannot change
 * meanwhile: a probe with pcbs is neither reaped nor joined.
 *
 * A USDT probe has a site per note of its provider and name, each with
 * its operands (dt_uparg), decoded in the handler from the user registers
 * and, for memory operands, the task's memory.  Each site holds its file
 * by path (dentry and mount, as trace_uprobe and perf's uprobe PMU do): an
 * inode held alone lets its file system be unmounted under the site, and
 * the later uprobe_register or iput touches a freed superblock.  Holding
 * the mount makes umount fail with EBUSY instead, so sites are not kept
 * longer than needed: when the last descriptor closes, every probe no
 * descriptor has enabled is freed (dt_uprobe_idle).  Past DT_UPROBE_MAX
 * sites, creating another first frees those probes too (their ids die and
 * are never reused, as with kprobes); only when every site is in use does
 * it fail with ENOSPC.
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
/* freed uprobes leave their two small dt_probes (ids) behind: bound them */
#define DT_UPROBE_DEAD_MAX	(16 * DT_UPROBE_MAX)

struct dt_up;

/* One probed instruction; a USDT probe has one per note. */
struct dt_upsite {
	struct uprobe_consumer	 us_uce;	/* [I] entry: handler */
	struct uprobe_consumer	 us_ucr;	/* [I] return: ret_handler */
	struct dt_up		*us_up;		/* [I] */
	struct path		 us_path;	/* [I] held: the mount too */
	struct inode		*us_inode;	/* [I] us_path's real inode */
	loff_t			 us_offset;	/* [I] */
	loff_t			 us_refctr;	/* [I] semaphore offset or 0 */
	bool			 us_usdt;	/* [I] else the argument registers */
	u32			 us_nargs;	/* [I] USDT operands */
	struct dt_uparg		 us_args[DT_MAXARGS];	/* [I] */
	struct list_head	 us_link;	/* [g] on u_sites */
	bool			 us_regent;	/* [dt_up_reglock] us_uce registered */
	bool			 us_regret;	/* [dt_up_reglock] us_ucr registered */
};

struct dt_up {
	struct dt_probe		*u_entry;	/* [I] */
	struct dt_probe		*u_return;	/* [I] */
	/* [dt_up_reglock] prepared pcbs: [0] entry, [1] return */
	unsigned int		 u_nprep[2];
	struct list_head	 u_sites;	/* [g] dt_upsite, at least one */
	struct list_head	 u_link;	/* [g] on dt_ups */
};

static LIST_HEAD(dt_ups);		/* [g] */
/* uprobe (un)registration, which reads the file: not under dt_lock */
static DEFINE_MUTEX(dt_up_reglock);
static unsigned int dt_nupsites;	/* [g] */
static unsigned int dt_nups_dead;	/* [g] dt_probes of freed uprobes */

static const struct dt_arg_info dt_upargs_entry[DT_MAXARGS] = {
	{ "arg0", "long", 0, 1 }, { "arg1", "long", 1, 1 },
	{ "arg2", "long", 2, 1 }, { "arg3", "long", 3, 1 },
	{ "arg4", "long", 4, 1 }, { "arg5", "long", 5, 1 },
	{ "arg6", "long", 6, 1 }, { "arg7", "long", 7, 1 },
	{ "arg8", "long", 8, 1 }, { "arg9", "long", 9, 1 },
};
/* errno: always 0 (no convention in user code), as on the perf source */
static const struct dt_arg_info dt_upargs_return[2] = {
	{ "retval", "long", 0, 1 }, { "errno", "int", 1, 1 },
};

/* A user register by perf's x86 number, as USDT operands name them. */
static bool dt_up_reg(struct pt_regs *regs, unsigned int r, u64 *v)
{
	switch (r) {
	case 0: *v = regs->ax; break;
	case 1: *v = regs->bx; break;
	case 2: *v = regs->cx; break;
	case 3: *v = regs->dx; break;
	case 4: *v = regs->si; break;
	case 5: *v = regs->di; break;
	case 6: *v = regs->bp; break;
	case 7: *v = regs->sp; break;
	case 8: *v = regs->ip; break;
	case 16: *v = regs->r8; break;
	case 17: *v = regs->r9; break;
	case 18: *v = regs->r10; break;
	case 19: *v = regs->r11; break;
	case 20: *v = regs->r12; break;
	case 21: *v = regs->r13; break;
	case 22: *v = regs->r14; break;
	case 23: *v = regs->r15; break;
	default: return false;
	}
	return true;
}

static u64 dt_up_extend(u64 v, unsigned int size, bool sign)
{
	unsigned int bits = size * 8;

	if (bits >= 64)
		return v;
	v &= (1ULL << bits) - 1;
	if (sign && (v & (1ULL << (bits - 1))))
		v |= ~((1ULL << bits) - 1);
	return v;
}

/* One USDT operand; what cannot be read is 0.  The task's own context. */
static u64 dt_up_arg(struct pt_regs *regs, const struct dt_uparg *a)
{
	u64 v = 0, base;

	switch (a->dtua_kind) {
	case DT_UA_CONST:
		return dt_up_extend((u64)a->dtua_value, a->dtua_size,
				    a->dtua_signed);
	case DT_UA_REG:
		if (!dt_up_reg(regs, a->dtua_reg, &v))
			return 0;
		return dt_up_extend(v >> a->dtua_shift, a->dtua_size,
				    a->dtua_signed);
	case DT_UA_MEM:
		if (!dt_up_reg(regs, a->dtua_reg, &base))
			return 0;
		/* little-endian: the low bytes of v */
		if (dt_copy_user(&v,
		    (const void __user *)(unsigned long)(base + (u64)a->dtua_value),
		    a->dtua_size) != 0)
			return 0;
		return dt_up_extend(v, a->dtua_size, a->dtua_signed);
	default:
		return 0;
	}
}

static int dt_up_entry(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct dt_upsite *us = container_of(uc, struct dt_upsite, us_uce);
	struct dt_probe *dp = us->us_up->u_entry;
	u64 a[DT_MAXARGS];
	unsigned int i, n;

	memset(a, 0, sizeof(a));
	if (!us->us_usdt) {
		/* the x86-64 argument registers */
		a[0] = regs->di;
		a[1] = regs->si;
		a[2] = regs->dx;
		a[3] = regs->cx;
		a[4] = regs->r8;
		a[5] = regs->r9;
	} else {
		n = min_t(unsigned int, us->us_nargs, dp->dp_nslots);
		for (i = 0; i < n; i++)
			a[i] = dt_up_arg(regs, &us->us_args[i]);
	}
	dt_fire(dp, NULL, regs, a, dp->dp_nslots, 0);
	return 0;
}

static int dt_up_return(struct uprobe_consumer *uc, unsigned long func,
			struct pt_regs *regs)
{
	struct dt_upsite *us = container_of(uc, struct dt_upsite, us_ucr);
	u64 a[2];

	a[0] = regs_return_value(regs);
	a[1] = 0;
	dt_fire(us->us_up->u_return, NULL, regs, a, 2, DTR_RETURN);
	return 0;
}

static void dt_up_unreg(struct dt_up *u, bool ret)
{
	struct dt_upsite *us;

	list_for_each_entry(us, &u->u_sites, us_link) {
		bool *reg = ret ? &us->us_regret : &us->us_regent;

		if (!*reg)
			continue;
		uprobe_unregister(us->us_inode, us->us_offset,
				  ret ? &us->us_ucr : &us->us_uce);
		*reg = false;
	}
}

/*
 * [d] held, not [g].  The first pcb of the probe registers its consumer
 * on every site.  Events come only once the pcb is armed (on dp_pcbs).
 */
static int dt_up_prepare(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	struct dt_up *u = dp->dp_priv;
	bool ret = dp == u->u_return;
	struct dt_upsite *us;
	int error = 0;

	mutex_lock(&dt_up_reglock);
	if (u->u_nprep[ret]++ != 0)
		goto out;
	list_for_each_entry(us, &u->u_sites, us_link) {
		bool *reg = ret ? &us->us_regret : &us->us_regent;

		if (*reg)
			continue;
		error = uprobe_register_refctr(us->us_inode, us->us_offset,
					       us->us_refctr,
					       ret ? &us->us_ucr : &us->us_uce);
		if (error) {
			/* all or none: dt_start fails */
			dt_up_unreg(u, ret);
			u->u_nprep[ret]--;
			break;
		}
		*reg = true;
	}
out:
	mutex_unlock(&dt_up_reglock);
	return error;
}

/* [d] held, not [g], the pcb disarmed: the last one unregisters */
static void dt_up_unprepare(struct dt_pcb *pcb)
{
	struct dt_probe *dp = pcb->pcb_probe;
	struct dt_up *u = dp->dp_priv;
	bool ret = dp == u->u_return;

	mutex_lock(&dt_up_reglock);
	if (--u->u_nprep[ret] == 0)
		dt_up_unreg(u, ret);
	mutex_unlock(&dt_up_reglock);
}

/* the consumers are registered already (dt_up_prepare) */
static int dt_up_arm(struct dt_pcb *pcb)
{
	return 0;
}

static void dt_up_disarm(struct dt_pcb *pcb)
{
}

static const struct dt_provider dt_prov_uprobe = {
	.dtpv_name	= "uprobe",
	.dtpv_prepare	= dt_up_prepare,
	.dtpv_unprepare	= dt_up_unprepare,
	.dtpv_arm	= dt_up_arm,
	.dtpv_disarm	= dt_up_disarm,
};

/*
 * The regular file at the user's path: *path held (path_put to release),
 * its real inode (an overlay's lower file) returned, or an error pointer.
 */
static struct inode *dt_up_inode(u64 upath, struct path *path)
{
	struct inode *inode;
	char *name;
	int error;

	name = strndup_user(u64_to_user_ptr(upath), PATH_MAX);
	if (IS_ERR(name))
		return ERR_CAST(name);
	error = kern_path(name, LOOKUP_FOLLOW, path);
	kfree(name);
	if (error)
		return ERR_PTR(error);
	inode = d_real_inode(path->dentry);
	if (!S_ISREG(inode->i_mode)) {
		path_put(path);
		return ERR_PTR(-EINVAL);
	}
	return inode;
}

static int dt_up_checkargs(const struct dt_uprobe *req)
{
	const struct dt_uparg *a;
	u32 i;

	if ((req->dtup_flags & ~DTUP_USDT) || req->dtup_pad != 0 ||
	    req->dtup_nargs > DT_MAXARGS ||
	    (!(req->dtup_flags & DTUP_USDT) && req->dtup_nargs != 0))
		return -EINVAL;
	for (i = 0; i < DT_MAXARGS; i++) {
		a = &req->dtup_args[i];
		if (i >= req->dtup_nargs) {
			if (memchr_inv(a, 0, sizeof(*a)) != NULL)
				return -EINVAL;
			continue;
		}
		if (a->dtua_kind > DT_UA_MEM || a->dtua_signed > 1 ||
		    (a->dtua_shift != 0 && a->dtua_shift != 8) ||
		    memchr_inv(a->dtua_pad, 0, sizeof(a->dtua_pad)) != NULL)
			return -EINVAL;
		if (a->dtua_size != 1 && a->dtua_size != 2 && a->dtua_size != 4 &&
		    a->dtua_size != 8)
			return -EINVAL;
		if ((a->dtua_kind == DT_UA_REG || a->dtua_kind == DT_UA_MEM) &&
		    (a->dtua_reg > 23 || (a->dtua_reg > 8 && a->dtua_reg < 16)))
			return -EINVAL;
	}
	return 0;
}

static bool dt_up_same(const struct dt_upsite *us, struct inode *inode,
		       const struct dt_uprobe *req)
{
	return us->us_inode == inode && us->us_offset == req->dtup_offset &&
	       us->us_refctr == req->dtup_refctr &&
	       us->us_usdt == !!(req->dtup_flags & DTUP_USDT) &&
	       us->us_nargs == req->dtup_nargs &&
	       memcmp(us->us_args, req->dtup_args, sizeof(us->us_args)) == 0;
}

/* [g] held: a probe created by DTIOCUPROBE, by its entry id, or NULL */
static struct dt_up *dt_up_byid(u32 id)
{
	struct dt_up *u;

	list_for_each_entry(u, &dt_ups, u_link)
		if (u->u_entry->dp_id == id)
			return u;
	return NULL;
}

/*
 * [g] held.  Free the probes, but keep, that no descriptor has enabled:
 * nothing arms them, so none of their sites is registered and no handler
 * can run.  Their dt_probes stay in the probe table, dead.
 */
static void dt_up_reap(struct dt_up *keep)
{
	struct dt_upsite *us, *ts;
	struct dt_up *u, *tmp;

	list_for_each_entry_safe(u, tmp, &dt_ups, u_link) {
		if (u == keep || u->u_entry->dp_nref != 0 || u->u_return->dp_nref != 0)
			continue;
		if (dt_nups_dead + 2 > DT_UPROBE_DEAD_MAX)
			break;
		dt_up_unreg(u, false);	/* none is registered: kept safe */
		dt_up_unreg(u, true);
		u->u_entry->dp_dead = true;
		u->u_return->dp_dead = true;
		dt_nups_dead += 2;
		list_for_each_entry_safe(us, ts, &u->u_sites, us_link) {
			path_put(&us->us_path);
			list_del(&us->us_link);
			kfree(us);
			dt_nupsites--;
		}
		list_del(&u->u_link);
		kfree(u);
	}
}

/*
 * [g] held, the last descriptor closed: nothing is enabled, so free every
 * probe (and drop the mounts its sites hold).
 */
void dt_uprobe_idle(void)
{
	lockdep_assert_held(&dt_lock);
	dt_up_reap(NULL);
}

int dt_uprobe_create(struct dt_uprobe *req)
{
	struct dt_upsite *us = NULL, *s;
	struct path path;
	struct inode *inode;
	struct dt_up *u;
	loff_t size;
	size_t len;
	u16 nargs;
	int error;

	len = strnlen(req->dtup_func, sizeof(req->dtup_func));
	if (len == 0 || len == sizeof(req->dtup_func))
		return -EINVAL;
	if (req->dtup_offset > LLONG_MAX || req->dtup_refctr > LLONG_MAX)
		return -EINVAL;
	error = dt_up_checkargs(req);
	if (error)
		return error;
	/* memory operands copy user memory: as DTEVT_UREGS does (dt_dev.c) */
	for (nargs = 0; nargs < req->dtup_nargs; nargs++) {
		if (req->dtup_args[nargs].dtua_kind != DT_UA_MEM)
			continue;
		error = security_locked_down(LOCKDOWN_PERF);
		if (error)
			return error;
		break;
	}
	inode = dt_up_inode(req->dtup_path, &path);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	/* uprobe_register refuses these too, but only once something records */
	size = i_size_read(inode);
	if ((loff_t)req->dtup_offset >= size ||
	    (loff_t)req->dtup_refctr >= size) {
		path_put(&path);
		return -EINVAL;
	}

	mutex_lock(&dt_lock);
	if (req->dtup_attach != 0) {
		u = dt_up_byid(req->dtup_attach);
		error = -ENOENT;
		if (u == NULL)
			goto unlock;
		list_for_each_entry(s, &u->u_sites, us_link)
			if (dt_up_same(s, inode, req))
				goto found;
		error = -EBUSY;
		if (u->u_entry->dp_nref != 0 || u->u_return->dp_nref != 0)
			goto unlock;	/* enabled somewhere: its sites are fixed */
	} else {
		list_for_each_entry(u, &dt_ups, u_link) {
			if (strcmp(u->u_entry->dp_func, req->dtup_func) != 0)
				continue;
			list_for_each_entry(s, &u->u_sites, us_link)
				if (dt_up_same(s, inode, req))
					goto found;
		}
		u = NULL;
	}
	error = -ENOSPC;
	if (dt_nupsites >= DT_UPROBE_MAX)
		dt_up_reap(u);
	if (dt_nupsites >= DT_UPROBE_MAX)
		goto unlock;
	error = -ENOMEM;
	us = kzalloc(sizeof(*us), GFP_KERNEL);
	if (us == NULL)
		goto unlock;
	if (u == NULL) {
		/* after this, inserting cannot fail */
		error = dt_probe_reserve(2);
		if (error)
			goto unlock;
		error = -ENOMEM;
		u = kzalloc(sizeof(*u), GFP_KERNEL);
		if (u == NULL)
			goto unlock;
		nargs = (req->dtup_flags & DTUP_USDT) ? (u16)req->dtup_nargs : 6;
		u->u_entry = dt_probe_new(&dt_prov_uprobe, req->dtup_func,
					  "entry", nargs, (u8)nargs,
					  dt_upargs_entry, 0);
		u->u_return = dt_probe_new(&dt_prov_uprobe, req->dtup_func,
					   "return", 2, 2, dt_upargs_return,
					   DT_PF_RETURN);
		if (u->u_entry == NULL || u->u_return == NULL) {
			kfree(u->u_entry);
			kfree(u->u_return);
			kfree(u);
			goto unlock;
		}
		u->u_entry->dp_priv = u;
		u->u_return->dp_priv = u;
		INIT_LIST_HEAD(&u->u_sites);
		dt_probe_insert(u->u_entry);
		dt_probe_insert(u->u_return);
		list_add_tail(&u->u_link, &dt_ups);
	}
	us->us_uce.handler = dt_up_entry;
	us->us_ucr.ret_handler = dt_up_return;
	us->us_up = u;
	us->us_path = path;
	us->us_inode = inode;
	us->us_offset = req->dtup_offset;
	us->us_refctr = req->dtup_refctr;
	us->us_usdt = !!(req->dtup_flags & DTUP_USDT);
	us->us_nargs = req->dtup_nargs;
	memcpy(us->us_args, req->dtup_args, sizeof(us->us_args));
	list_add_tail(&us->us_link, &u->u_sites);
	dt_nupsites++;
	inode = NULL;	/* the site holds path */
	us = NULL;
found:
	req->dtup_entry_id = u->u_entry->dp_id;
	req->dtup_return_id = u->u_return->dp_id;
	error = 0;
unlock:
	mutex_unlock(&dt_lock);
	kfree(us);
	if (inode != NULL)
		path_put(&path);
	return error;
}

/* Module unload: no descriptor is open, so none is registered. */
void dt_uprobe_exit(void)
{
	struct dt_upsite *us, *ts;
	struct dt_up *u, *tmp;

	list_for_each_entry_safe(u, tmp, &dt_ups, u_link) {
		dt_up_unreg(u, false);
		dt_up_unreg(u, true);
		list_for_each_entry_safe(us, ts, &u->u_sites, us_link) {
			path_put(&us->us_path);
			list_del(&us->us_link);
			kfree(us);
		}
		list_del(&u->u_link);
		kfree(u);	/* the dt_probes go with the probe table */
	}
	dt_nupsites = 0;
}
