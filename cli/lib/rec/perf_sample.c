/*
 * perf_sample.c - a PERF_RECORD_SAMPLE of the perf source decoded into a dt_rec.
 */
#include "perf_int.h"

/*
 * A sample's PERF_SAMPLE_REGS_USER (abi, then one u64 per bit of mask,
 * lowest register first; none for a kernel thread) and
 * PERF_SAMPLE_STACK_USER (size, bytes, the valid length), registers stored
 * by perf number in regs (DTUP_NREGS).  The mask is the event's own: the
 * unwinder's and a uprobe's arguments' together, each taking what it needs.
 */
static int
take_user(const unsigned char **pp, const unsigned char *end, uint64_t mask, uint32_t stack,
	  uint64_t *regs, uint64_t *have, const unsigned char **stk, uint64_t *stklen)
{
	const unsigned char *p = *pp;
	uint64_t abi, size;

	*have = 0;
	if (mask) {
		if (end - p < 8)
			return -1;
		memcpy(&abi, p, 8);
		p += 8;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			for (int r = 0; r < 64; r++) {
				if (!(mask & (1ULL << r)))
					continue;
				if (end - p < 8)
					return -1;
				if (r < DTUP_NREGS) {
					memcpy(&regs[r], p, 8);
					*have |= 1ULL << r;
				}
				p += 8;
			}
			/* a 32-bit process's registers mean something else */
			if (abi != PERF_SAMPLE_REGS_ABI_64)
				*have = 0;
		}
	}
	if (stack) {
		if (end - p < 8)
			return -1;
		memcpy(&size, p, 8);
		p += 8;
		if (size) {
			if ((uint64_t)(end - p) < size + 8)
				return -1;
			*stk = p;
			memcpy(stklen, p + size, 8);
			if (*stklen > size)
				*stklen = size;
			p += size + 8;
		}
	}
	*pp = p;
	return 0;
}

/* A uprobe's dt slots: argument registers, rax on return, or SDT arguments. */
static unsigned
user_args(const struct dtp_uprobe *up, uint32_t site, const uint64_t *regs, uint64_t have,
	  const unsigned char *stk, uint64_t stklen, uint64_t *args)
{
	static const int8_t argreg[6] = { DTUP_DI, DTUP_SI, DTUP_DX, DTUP_CX, DTUP_R8, DTUP_R9 };
	unsigned n = 0;

	if (up->ret) {
		args[0] = have & (1ULL << DTUP_AX) ? regs[DTUP_AX] : 0;
		args[1] = 0;
		return 2;
	}
	if (!up->usdt) {
		for (int i = 0; i < 6; i++)
			args[i] = have & (1ULL << argreg[i]) ? regs[argreg[i]] : 0;
		return 6;
	}
	for (size_t i = 0; i < up->nsites; i++)
		if (up->sites[i].nargs > n)
			n = up->sites[i].nargs;
	if (site < up->nsites) {
		const struct dtp_usite *st = &up->sites[site];
		for (unsigned i = 0; i < st->nargs; i++) {
			int ok;
			args[i] = dtup_arg_value(&st->args[i], regs, have, stk, stklen, &ok);
		}
	}
	return n;
}

/*
 * Whether to keep a --offcpu event run by pid: 1 yes, 0 no.  System-wide
 * the recorder's own events go, but for its switches: they say who ran
 * next.  With targets each probe has two events: one per target task
 * (inherited, with stacks) for what the targets run, and a bare one per
 * CPU (bare: no stacks, so the system's other switches cost little ring
 * space) for the switches into a target and the wakeups of one that other
 * tasks run.  A target's thread that has begun to exit has no events of
 * its own any more (the kernel takes them away before its EXIT record,
 * and writes none of its samples after it), yet it still runs: its last
 * switch out, and the wakeups fired by an interrupt it takes meanwhile
 * (another target's timer), are the per-CPU copies' from its EXIT on.
 */
static int
offcpu_keep(struct src_perf *sp, const struct pprobe *p, int bare, uint32_t pid, uint32_t tid,
	    uint64_t ts, const unsigned char *raw, uint32_t rawsize)
{
	int32_t other = -1;
	const struct task *t, *th;

	if (raw && (size_t)p->ooff + 4 <= rawsize)
		memcpy(&other, raw + p->ooff, 4);
	if (!sp->targeted)
		return pid != sp->self || p->offcpu == DTOFF_SWITCH;
	t = task_get(&sp->tgts, pid, 0);
	if (!bare)
		return t != NULL && ts >= t->p.ts;
	if (t != NULL) {
		/* a target's own: its inherited event has it, until its exit; a
		 * thread already released (tid -1: it has no pid any more, and
		 * its EXIT was long written) runs only its last moments */
		if (ts < t->p.ts)
			return 0;
		if (tid == UINT32_MAX)
			return 1;
		th = task_get(&sp->ttids, tid, 0);
		return th != NULL && th->exited && ts >= th->p.ts;
	}
	if (other <= 0 || (t = task_get(&sp->ttids, (uint32_t)other, 0)) == NULL)
		return 0;
	return (t = task_get(&sp->tgts, t->p.pid, 0)) != NULL && ts >= t->p.ts;
}

/*
 * One PERF_RECORD_SAMPLE as a dt_rec at out (room bytes).  Returns the
 * record's size, 0 if it is not kept (our own, unknown id), or -1 when
 * it does not fit.
 */
ssize_t
perf_sample(struct src_perf *sp, struct ring *rg, const struct perf_event_header *h,
       const unsigned char *r, char *out, size_t room)
{
	const unsigned char *p = r, *end = r + (h->size - sizeof(*h));
	uint64_t id, ts, nr = 0;
	int rawbase = -1;
	uint32_t pid, tid, cpu, rawsize = 0;
	const uint64_t *chain = NULL;
	const unsigned char *raw = NULL;
	struct pprobe *pr;
	struct dt_rec *d;
	uint64_t args[DTCAP_MAXARGS], *dst;
	unsigned nargs = 0, nk = 0, nu = 0, flags = 0;
	const uint64_t *kf = NULL, *uf = NULL;
	size_t need;
	uint32_t site = 0;
	struct pprobe *evpr;
	uint64_t allregs[DTUP_NREGS], have = 0, ustk_len = 0;
	uint64_t uregs[__builtin_popcountll(DTUNW_REGS_MASK)];
	const unsigned char *ustk = NULL;
	int have_regs = 0, unwind;

#define TAKE(dstp, n) do { if ((size_t)(end - p) < (n)) return 0; memcpy((dstp), p, (n)); p += (n); } while (0)
	TAKE(&id, 8);
	TAKE(&pid, 4);
	TAKE(&tid, 4);
	TAKE(&ts, 8);
	TAKE(&cpu, 4);
	p += 4;
	if ((pr = perf_probe_site(sp, id, &site)) == NULL)
		return 0;
	evpr = pr;	/* the event's own layout, before raw syscalls name the probe */
	/* --offcpu with targets: site 1 is the bare per-CPU event */
	int bare = pr->offcpu && site == 1;
	if (cpu < (uint32_t)sp->ncpus && pr->kind != PK_TIMER)
		sp->seen[cpu]++;
	if (pr->kind == PK_UPROBE && sp->targeted) {
		/* a per-CPU uprobe hit outside the targets, or in the command
		 * before its exec (still dtrec's code): not recorded */
		const struct task *t = task_get(&sp->tgts, pid, 0);
		if (t == NULL || ts < t->p.ts)
			return 0;
	}
	if (pr->kind == PK_RAWENTER || pr->kind == PK_RAWEXIT) {
		/* the raw event's record names the syscall: that is the probe */
		const unsigned char *q = p;
		uint64_t skip = 0, nrv;
		uint32_t rs;
		if (evpr->chain) {
			if ((size_t)(end - q) < 8)
				return 0;
			memcpy(&skip, q, 8);
			if (skip > 4096 || (size_t)(end - q) < 8 + skip * 8)
				return 0;
			q += 8 + skip * 8;
		}
		if ((size_t)(end - q) < 4 + 16)
			return 0;
		memcpy(&rs, q, 4);
		memcpy(&nrv, q + 4 + 8, 8);
		if (rs < 16 || nrv >= NSYS || pr->bynr[nrv] == 0)
			return 0;
		rawbase = pr->kind;
		pr = &sp->probes[pr->bynr[nrv] - 1];
	}
	if (evpr->chain && !bare) {
		TAKE(&nr, 8);
		if (nr > 4096 || (size_t)(end - p) < nr * 8)
			return 0;
		chain = (const uint64_t *)(const void *)p;
		p += nr * 8;
	}
	if (pr->kind != PK_TIMER && pr->kind != PK_KPROBE && pr->kind != PK_UPROBE) {
		TAKE(&rawsize, 4);
		if ((size_t)(end - p) < rawsize)
			return 0;
		raw = p;
		p += rawsize;
	}
	if ((evpr->regs_mask || evpr->stack_req) && !bare) {
		if (take_user(&p, end, evpr->regs_mask, evpr->stack_req, allregs, &have, &ustk,
			      &ustk_len) < 0)
			return 0;
		if (evpr->ustack_copy && (have & DTUNW_REGS_MASK) == DTUNW_REGS_MASK) {
			/* the unwinder takes its registers in its mask's order */
			unsigned k = 0;
			for (int r = 0; r < DTUP_NREGS; r++)
				if (DTUNW_REGS_MASK & (1ULL << r))
					uregs[k++] = allregs[r];
			have_regs = 1;
		}
	}
	if (evpr->intr_mask) {
		uint64_t abi, v;
		unsigned k = 0;
		TAKE(&abi, 8);
		for (int r = 0; abi != PERF_SAMPLE_REGS_ABI_NONE && r < 64; r++) {
			if (!(evpr->intr_mask & (1ULL << r)))
				continue;
			TAKE(&v, 8);
			if (r < DTUP_NREGS)
				allregs[r] = v;
			k++;
		}
		if (abi == PERF_SAMPLE_REGS_ABI_NONE || k == 0)
			have = 0;
		else
			have = evpr->intr_mask;
	}
#undef TAKE
	if (evpr->offcpu) {
		/*
		 * A thread past its release has no pid: the kernel names it -1
		 * (its tid, and its process too once the pid is gone), but a
		 * switch names the task it switches out, and a target's thread
		 * is known by its process.
		 */
		if (bare && (tid == UINT32_MAX || pid == UINT32_MAX) && evpr->poff && raw &&
		    (size_t)evpr->poff + 4 <= rawsize) {
			const struct task *th;
			memcpy(&tid, raw + evpr->poff, 4);
			if (pid == UINT32_MAX && (th = task_get(&sp->ttids, tid, 0)) != NULL)
				pid = th->p.pid;
		}
		if (!offcpu_keep(sp, evpr, bare, pid, tid, ts, raw, rawsize))
			return 0;
	} else if (pid == sp->self) {
		return 0;
	}
	/* callchain: context markers, then frames; entries above CTX_MARK switch */
	if (chain) {
		int ctx = 0;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t v;
			memcpy(&v, &chain[i], 8);
			if (v >= CTX_MARK) {
				ctx = v == (uint64_t)PERF_CONTEXT_KERNEL ? 1 :
				      v == (uint64_t)PERF_CONTEXT_USER ? 2 : 0;
				if (ctx == 1 && !kf)
					kf = &chain[i + 1];
				if (ctx == 2 && !uf)
					uf = &chain[i + 1];
				continue;
			}
			if (ctx == 1 && nk < DT_MAXFRAMES)
				nk++;
			else if (ctx == 1)
				flags |= DTR_KSTACK_TRUNC;
			else if (ctx == 2 && nu < DT_MAXFRAMES)
				nu++;
			else if (ctx == 2)
				flags |= DTR_USTACK_TRUNC;
		}
		if (!(pr->evtflags & DTEVT_KSTACK))
			nk = 0;
		if (!(pr->evtflags & DTEVT_USTACK))
			nu = 0;
	}
	if (evpr->pc_only && have_regs && (pr->evtflags & DTEVT_USTACK)) {
		/* no walk was asked for: the pc, until the copy is unwound */
		uf = &uregs[__builtin_popcountll(DTUNW_REGS_MASK & ((1ULL << DTUNW_REG_IP) - 1))];
		nu = 1;
		flags |= DTR_USTACK_TRUNC;
	}
	memset(args, 0, sizeof(args));
	switch (pr->kind) {
	case PK_SYSEXIT: {
		int64_t ret = 0;
		/* sys_exit_X and raw_syscalls:sys_exit both keep ret at 16 */
		if (raw && rawsize >= 24)
			memcpy(&ret, raw + 16, 8);
		args[0] = (uint64_t)ret;
		args[1] = ret < 0 && ret >= -4095 ? (uint64_t)-ret : 0;
		nargs = 2;
		flags |= DTR_RETURN;
		break;
	}
	case PK_SYSENTER:
		if (rawbase == PK_RAWENTER) {
			/* raw_syscalls:sys_enter: long id; unsigned long args[6] */
			if (raw && rawsize >= 64)
				memcpy(args, raw + 16, 48);
			nargs = 6;
			break;
		}
		/* FALLTHROUGH */
	case PK_TP:
		if (raw && pr->fmt)
			nargs = dtt_decode(pr->fmt, &pr->lay, raw, rawsize, args);
		break;
	case PK_KPROBE:
		if ((have & KP_RET_REGS) && (pr->flags & DT_PF_RETURN)) {
			uint64_t ret = allregs[DTUP_AX];
			args[0] = ret;
			args[1] = ret >= (uint64_t)-4095 ? -ret : 0;	/* IS_ERR_VALUE */
			nargs = 2;
		} else if ((have & KP_ARG_REGS) == KP_ARG_REGS) {
			static const int ar[6] = { DTUP_DI, DTUP_SI, DTUP_DX, DTUP_CX, DTUP_R8,
						   DTUP_R9 };
			for (int i = 0; i < 6; i++)
				args[i] = allregs[ar[i]];
			nargs = 6;
		}
		if (pr->flags & DT_PF_RETURN)
			flags |= DTR_RETURN;
		break;
	case PK_UPROBE:
		nargs = user_args(pr->up, site, allregs, have, ustk, ustk_len, args);
		if (pr->up->ret)
			flags |= DTR_RETURN;
		break;
	default:
		break;
	}
	if (h->misc & PERF_RECORD_MISC_USER)
		flags |= DTR_USERMODE;
	need = DT_REC_SIZE(nargs, nk, nu);
	if (need > room)
		return -1;
	d = (struct dt_rec *)(void *)out;
	memset(d, 0, sizeof(*d));
	d->dtr_size = (uint32_t)need;
	d->dtr_probe = pr->id;
	d->dtr_ts = ts;
	d->dtr_pid = pid;
	d->dtr_tid = tid;
	d->dtr_cpu = (uint16_t)cpu;
	d->dtr_nargs = (uint8_t)nargs;
	d->dtr_nkstack = (uint8_t)nk;
	d->dtr_nustack = (uint8_t)nu;
	d->dtr_flags = (uint8_t)flags;
	/* timers fire from a hard interrupt; tracepoints say where they ran */
	d->dtr_ctx = DTR_CTX_TASK;
	if (pr->kind == PK_TIMER)
		d->dtr_ctx = DTR_CTX_HARDIRQ;
	else if (raw && rawsize > TP_COMMON_FLAGS_OFF)
		d->dtr_ctx = tp_flags_ctx(raw[TP_COMMON_FLAGS_OFF]);
	dst = (uint64_t *)(void *)(d + 1);
	memcpy(dst, args, 8 * (size_t)nargs);
	if (nk)
		memcpy(dst + nargs, kf, 8 * (size_t)nk);
	if (nu)
		memcpy(dst + nargs + nk, uf, 8 * (size_t)nu);
	(void)rg;
	sp->counts[cpu < (uint32_t)sp->ncpus ? cpu : 0].read++;
	unwind = have_regs && ustk_len && sp->pool && (pr->evtflags & DTEVT_USTACK);
	/* named and its stack cut by the machine, now: names change in ring order */
	dtm_sample(sp->m, d, (pr->evtflags & DTEVT_COMM ? DTM_NAME : 0) | (nu ? DTM_FP_CUT : 0) |
			     (unwind ? DTM_UNWIND : 0));
	need = d->dtr_size;
	if (unwind) {
		if (dtunw_pool_submit(sp->pool, d, uregs, DTUNW_REGS_MASK, ustk, ustk_len) == 0)
			return 0;	/* it comes back from the pool */
		sp->fp_behind++;
	}
	return (ssize_t)need;
}
