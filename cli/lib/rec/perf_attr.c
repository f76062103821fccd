/*
 * perf_attr.c - the perf source's events: perf_event_attr building, PMU and
 * tracefs lookup, opening events, rings, syscall groups and triggers.
 */
#include "perf_int.h"

/*
 * Syscall numbers of this architecture, from the build's <asm/unistd.h>.
 * Syscall probes whose number is known share one raw_syscalls event per
 * CPU with an id filter: one descriptor instead of one per syscall, and
 * closing 700 syscall events costs the kernel about 30 s of RCU grace
 * periods.  Syscalls newer than the headers keep their own events.
 */
static const struct { int nr; const char *name; } systab[] = {
#define DT_SYSCALL(nr, name) { nr, #name },
#include "usystab.h"
#undef DT_SYSCALL
};

static long
perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static void
open_error(int e, const char *what, struct src_perf *sp, char *err, size_t errlen)
{
	char *para = dtu_read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
	struct rlimit rl;

	if (para)
		para[strcspn(para, "\n")] = '\0';
	if (e == EACCES || e == EPERM)
		dtu_seterr(err, errlen, "%s: perf_event_open: %s: recording the kernel needs root or "
			   "CAP_PERFMON (kernel.perf_event_paranoid is %s)", what, strerror(e),
			   para ? para : "unknown");
	else if (e == EMFILE || e == ENFILE) {
		getrlimit(RLIMIT_NOFILE, &rl);
		dtu_seterr(err, errlen, "%s: too many open files: this recording needs more than %zu "
			   "descriptors and the limit is %llu: raise it (ulimit -n) or select fewer "
			   "probes", what, sp->nfds, (unsigned long long)rl.rlim_cur);
	} else if (e == ENOENT && sp->cgfd >= 0)
		dtu_seterr(err, errlen, "%s: --cgroup: the kernel has no perf_event state for this "
			   "cgroup (perf_event_open: %s); use --source dt", what, strerror(e));
	else if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
		dtu_seterr(err, errlen, "%s: this kernel has no PMU for it (perf_event_open: %s)",
			   what, strerror(e));
	else if (e == ESRCH)
		dtu_seterr(err, errlen, "%s: no such process", what);
	else
		dtu_seterr(err, errlen, "%s: perf_event_open: %s", what, strerror(e));
	free(para);
}

static int
add_fd(struct src_perf *sp, int fd, int cpu, uint32_t probe)
{
	/* three arrays share fdcap: the last to grow sets it */
	size_t c1 = sp->fdcap, c2 = sp->fdcap;
	if (DT_GROW(sp->fds, c1, sp->nfds, 1, 256) ||
	    DT_GROW(sp->fdcpu, c2, sp->nfds, 1, 256) ||
	    DT_GROW(sp->fdprobe, sp->fdcap, sp->nfds, 1, 256))
		return -1;
	sp->fdcpu[sp->nfds] = cpu;
	sp->fdprobe[sp->nfds] = probe;
	sp->fds[sp->nfds++] = fd;
	return 0;
}

/* perf gives every event its own id: no id is added twice. */
static int
add_id(struct src_perf *sp, uint64_t id, uint32_t probe, uint32_t site)
{
	if (DT_GROW(sp->ids, sp->idcap, sp->nids, 1, 512))
		return -1;
	sp->ids[sp->nids] = (struct evid){ .id = id, .probe = probe, .site = site };
	if (dt_htab_add(&sp->idix, dt_htab_hash_int(id), (uint32_t)sp->nids, perf_id_rehash, sp))
		return -1;
	sp->nids++;
	return 0;
}

static void
base_attr(struct src_perf *sp, struct perf_event_attr *a, uint32_t bufsize)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	/* no PERF_SAMPLE_IP: stacks carry the pc, and 8 bytes an event add up */
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;	/* dtr_ts's clock */
	a->disabled = 1;
	a->watermark = 1;
	a->wakeup_watermark = bufsize / 4;	/* no wakeup per event */
	if (sp->child_mode) {
		a->inherit = 1;
		a->enable_on_exec = 1;
	}
}

/*
 * The tracking event of one CPU and target: side band, and the ring.
 * backward (flight): instead a silent event owning the CPU's overwriting
 * ring, which the probes write into; side band keeps its forward ring,
 * read all along, so processes are known however old their records are.
 */
int
perf_open_ring(struct src_perf *sp, pid_t pid, int cpu, uint32_t bufsize, int backward,
	  struct ring **out, char *err, size_t errlen)
{
	struct perf_event_attr a;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int fd;
	void *m;

	base_attr(sp, &a, bufsize);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	if (backward) {
		/* the newest records overwrite the oldest (read only on dump) */
		a.write_backward = 1;
		a.inherit = 0;
		a.enable_on_exec = 0;
		a.disabled = 0;
	} else {
		a.comm = 1;
		a.comm_exec = 1;
		a.task = 1;
		a.mmap = 1;
		a.mmap2 = 1;
		a.build_id = 1;
		if (pid > 0)
			a.inherit = 1;
	}
	fd = (int)perf_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		a.build_id = 0;	/* kernels before 5.12 */
		fd = (int)perf_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		char what[64];
		snprintf(what, sizeof(what), "tracking event on CPU %d", cpu);
		open_error(errno, what, sp, err, errlen);
		return -1;
	}
	/* a read-only mapping is what lets the kernel overwrite (flight) */
	m = mmap(NULL, pg + bufsize, backward ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		char *mk = dtu_read_file("/proc/sys/kernel/perf_event_mlock_kb", NULL);
		if (mk)
			mk[strcspn(mk, "\n")] = '\0';
		close(fd);
		if (e == EPERM || e == ENOMEM)
			dtu_seterr(err, errlen, "mapping a %u-byte ring for CPU %d: %s: over the locked "
				   "memory limit (kernel.perf_event_mlock_kb is %s KiB per user, plus "
				   "ulimit -l): use a smaller ring (-b), run as root, or raise the limit",
				   bufsize, cpu, strerror(e), mk ? mk : "unknown");
		else
			dtu_seterr(err, errlen, "mapping the ring of CPU %d: %s", cpu, strerror(e));
		free(mk);
		return -1;
	}
	if (add_fd(sp, fd, cpu, 0) < 0) {
		munmap(m, pg + bufsize);
		close(fd);
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	struct ring *rg = backward ? &sp->frings[sp->nfrings++] : &sp->rings[sp->nrings++];
	memset(rg, 0, sizeof(*rg));
	rg->fd = fd;
	rg->cpu = cpu;
	rg->meta = m;
	rg->data = (unsigned char *)m + pg;
	rg->size = bufsize;
	*out = rg;
	return 0;
}

/*
 * The uprobe PMU's event for one site (its format directory: config:0 is
 * retprobe, config:32-63 the semaphore's offset; config1 the path,
 * config2 the offset), with the user registers (and for USDT memory
 * operands the stack) its arguments come from.
 */
static void
uprobe_attr(struct src_perf *sp, const struct dtp_uprobe *up, uint32_t site,
	    struct perf_event_attr *a)
{
	const struct dtp_usite *st = &up->sites[site];

	a->type = (uint32_t)sp->uprobe_type;
	a->config = up->ret ? 1 : 0;
	if (st->refctr && sp->uprobe_refctr)
		a->config |= st->refctr << 32;
	a->config1 = (uint64_t)(uintptr_t)up->path;
	a->config2 = st->offset;
}

/* Add what a uprobe's arguments need to the user registers and stack copied. */
static void
uprobe_regs(const struct dtp_uprobe *up, struct perf_event_attr *a)
{
	if (up->regs) {
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user |= up->regs;
	}
	if (up->stack) {
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		if (a->sample_stack_user < up->stack)
			a->sample_stack_user = up->stack;
	}
}

int
perf_pmu_type(const char *pmu)
{
	char path[96], *t;
	int v;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	t = dtu_read_file(path, NULL);
	v = t ? atoi(t) : -1;
	free(t);
	return v;
}

int
perf_kprobe_type(void)
{
	char *t = dtu_read_file("/sys/bus/event_source/devices/kprobe/type", NULL);
	int v = t ? atoi(t) : -1;

	free(t);
	return v;
}

/*
 * The stack walks the kernel makes for p's events.  A system call's kernel
 * stack at entry and exit is the same few entry frames every time, and
 * walking them from the tracepoint doubled the cost of a traced call: perf
 * records none for syscall events either.  The frame-pointer user stack
 * stays beside a copy (what a sample keeps when unwinding falls behind, or
 * when it is the longer one), but not for programs without frame pointers
 * (pc_only), where the walk (about 1 us a sample here) finds only the pc
 * the copy has.
 */
static void
walk_attr(struct perf_event_attr *a, const struct pprobe *p, int pc_only)
{
	a->exclude_callchain_kernel = !(p->evtflags & DTEVT_KSTACK) ||
		p->kind == PK_RAWENTER || p->kind == PK_RAWEXIT ||
		p->kind == PK_SYSENTER || p->kind == PK_SYSEXIT;
	a->exclude_callchain_user = !(p->evtflags & DTEVT_USTACK) || pc_only;
	if (!a->exclude_callchain_kernel || !a->exclude_callchain_user) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->sample_max_stack = DT_MAXFRAMES;
	}
}

/*
 * One probe's event (site: of a uprobe) on cpu for pid, into ring rg.
 * group: the tracking event of pid on cpu, or -1.  A tracepoint that
 * names a task (sched_wakeup's wakee) is also delivered to that task's
 * events for the CPU when another task runs it, and each such delivery
 * counts in the event without writing a sample.  The kernel (6.2 on)
 * looks for those events among the groups led by tracepoint events only,
 * so a target's tracepoint event in the tracking event's group counts
 * exactly the samples it wrote: what a flight dump needs to say how many
 * were overwritten (perf_counters).
 */
static int
open_event(struct src_perf *sp, size_t pi, uint32_t site, pid_t pid, int cpu, struct ring *rg,
	   int group, uint32_t bufsize, char *err, size_t errlen)
{
	struct pprobe *p = &sp->probes[pi];
	struct perf_event_attr a;
	char nm[DTCAP_PROBENAMELEN];
	const struct dt_probe_info *info = dtp_by_id(sp->s.dev, p->id);
	uint64_t id;
	int fd;
	/* --cgroup: a system-wide per-CPU event counts only the cgroup's tasks */
	pid_t opid = pid < 0 && sp->cgfd >= 0 ? sp->cgfd : pid;
	unsigned long ofl = PERF_FLAG_FD_CLOEXEC | (opid != pid ? PERF_FLAG_PID_CGROUP : 0);
	/* --offcpu with targets: the per-CPU copy, without stacks (offcpu_keep) */
	int bare = p->offcpu && pid < 0 && sp->targeted;
	int copy, pc_only;

	base_attr(sp, &a, bufsize);
	if (pid > 0)
		a.inherit = 1;
	a.write_backward = sp->flight ? 1 : 0;	/* as the flight ring it writes to */
	a.sample_period = 1;
	switch (p->kind) {
	case PK_TIMER:
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = p->period_ns;	/* cpu-clock counts ns */
		break;
	case PK_KPROBE: {
		const char *func, *ev;
		dtp_perf_event(sp->s.dev, p->id, &func, &ev);
		a.type = (uint32_t)sp->kprobe_type;
		a.config = (p->flags & DT_PF_RETURN) ? 1 : 0;	/* format/retprobe: config:0 */
		/*
		 * By address where kallsyms gives one: a kprobe event placed by
		 * name is re-created in every forked child of a target from
		 * config1, which then points into the child's memory, not ours,
		 * and the child's fork fails.
		 */
		if (p->kaddr)
			a.config2 = p->kaddr;
		else
			a.config1 = (uint64_t)(uintptr_t)func;
		a.sample_type |= PERF_SAMPLE_REGS_INTR;
		a.sample_regs_intr = (p->flags & DT_PF_RETURN) ? KP_RET_REGS : KP_ARG_REGS;
		break;
	}
	case PK_UPROBE:
		uprobe_attr(sp, p->up, site, &a);
		a.inherit = 0;
		a.enable_on_exec = 0;
		break;
	default:
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = p->fmt ? p->fmt->id : 0;
		a.sample_type |= PERF_SAMPLE_RAW;
		if (p->offcpu && pid < 0)
			a.enable_on_exec = 0;	/* per CPU: no exec of its own */
		break;
	}
	if (p->raw)
		return 0;	/* its raw_syscalls event records it */
	copy = sp->pool && dwarf_probe(sp->ustack_auto, p) && !bare;
	if (copy) {
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = DTUNW_REGS_MASK;
		a.sample_stack_user = sp->ustack_size;
		p->ustack_copy = 1;
	}
	pc_only = copy && sp->ustack_nofp;
	if ((p->evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) && !bare)
		walk_attr(&a, p, pc_only);
	if (p->kind == PK_UPROBE)
		uprobe_regs(p->up, &a);
	if (!sp->flight && !sp->no_fmtlost)
		a.read_format = PERF_FORMAT_LOST;
	if (a.type != PERF_TYPE_TRACEPOINT || pid <= 0 || !sp->flight)
		group = -1;
	if (group >= 0 && group == sp->lead_lost)
		group = sp->lead_new;
	fd = (int)perf_open(&a, opid, cpu, group, ofl);
	/*
	 * A target that forks while its tracking event is opened can have
	 * its context swapped with the child's at a context switch (equal
	 * clones): the event may land in the child's, and the kernel refuses
	 * siblings in the target's (EINVAL, ENODEV).  A leader of our own,
	 * then, opened anew; failing that, alone (counted as before).
	 */
	for (int k = 0; fd < 0 && group >= 0 && (errno == EINVAL || errno == ENODEV); k++) {
		if (k == 3 && group != sp->lead_new) {
			struct perf_event_attr d;
			int lfd;
			base_attr(sp, &d, bufsize);
			d.type = PERF_TYPE_SOFTWARE;
			d.config = PERF_COUNT_SW_DUMMY;
			d.inherit = 1;
			if ((lfd = (int)perf_open(&d, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC)) >= 0) {
				if (add_fd(sp, lfd, cpu, 0) < 0) {
					close(lfd);
				} else {
					sp->lead_lost = group;
					sp->lead_new = group = lfd;
				}
			}
		} else if (k == 6) {
			group = -1;
		}
		fd = (int)perf_open(&a, opid, cpu, group, ofl);
	}
	if (fd < 0 && errno == EINVAL && a.read_format) {
		a.read_format = 0;	/* before 6.0 */
		if ((fd = (int)perf_open(&a, opid, cpu, group, ofl)) >= 0)
			sp->no_fmtlost = 1;
		else
			a.read_format = PERF_FORMAT_LOST;
	}
	if (fd < 0 && errno == EINVAL && p->ustack_copy && sp->ustack_auto) {
		/* auto: a kernel that cannot copy user stacks gets frame pointers */
		a.sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
		a.sample_regs_user = 0;
		a.sample_stack_user = 0;
		p->ustack_copy = 0;
		if (pc_only) {
			pc_only = 0;
			walk_attr(&a, p, 0);	/* the walk is the stack now */
		}
		if (p->kind == PK_UPROBE)
			uprobe_regs(p->up, &a);
		fd = (int)perf_open(&a, opid, cpu, group, ofl);
	}
	if (fd < 0 && errno == EOVERFLOW && a.sample_max_stack) {
		a.sample_max_stack = 0;	/* above kernel.perf_event_max_stack */
		fd = (int)perf_open(&a, opid, cpu, group, ofl);
	}
	if (fd < 0) {
		int e = errno;
		if (p->kind == PK_KPROBE && (e == ENOENT || e == EINVAL))
			dtu_seterr(err, errlen, "%s: no such kernel function to probe (%s)",
				   info ? dtp_name(info, nm, sizeof(nm)) : "kprobe", strerror(e));
		else if (p->kind == PK_UPROBE)
			dtu_seterr(err, errlen, "%s: the kernel refused the uprobe at offset %#llx of %s: "
				   "%s", dtp_full_name(sp->s.dev, p->id),
				   (unsigned long long)p->up->sites[site].offset, p->up->path, strerror(e));
		else
			open_error(e, info ? dtp_name(info, nm, sizeof(nm)) : "probe", sp, err, errlen);
		return -1;
	}
	/* how perf_sample() finds its way through this event's records (a bare
	 * copy's, site 1, are known to have none of them) */
	if (!bare) {
		p->chain = (a.sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
		p->pc_only = (uint8_t)pc_only;
		p->regs_mask = (a.sample_type & PERF_SAMPLE_REGS_USER) ? a.sample_regs_user : 0;
		p->intr_mask = (a.sample_type & PERF_SAMPLE_REGS_INTR) ? a.sample_regs_intr : 0;
		p->stack_req = (a.sample_type & PERF_SAMPLE_STACK_USER) ? a.sample_stack_user : 0;
	}
	/*
	 * A task's sched_wakeup event outside a group also counts the wakeups
	 * of that task by others (see above), which it does not sample: its
	 * count says nothing of losses (CPU -1: not read).
	 */
	if (add_fd(sp, fd, p->offcpu == DTOFF_WAKEUP && pid > 0 && group < 0 ? -1 : cpu,
		   (uint32_t)pi + 1) < 0) {
		close(fd);
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		dtu_seterr(err, errlen, "%s: redirecting to the CPU ring: %s",
			   info ? dtp_name(info, nm, sizeof(nm)) : "probe", strerror(errno));
		return -1;
	}
	if (add_id(sp, id, (uint32_t)pi, bare ? 1 : site) < 0) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Every event of probe pi on cpu for pid: uprobes have one per site. */
int
perf_open_probe(struct src_perf *sp, size_t pi, pid_t pid, int cpu, struct ring *rg,
	   int group, uint32_t bufsize, char *err, size_t errlen)
{
	const struct pprobe *p = &sp->probes[pi];
	size_t n = p->kind == PK_UPROBE ? p->up->nsites : 1;

	for (size_t i = 0; i < n; i++)
		if (open_event(sp, pi, (uint32_t)i, pid, cpu, rg, group, bufsize, err, errlen) < 0)
			return -1;
	return 0;
}

int
perf_sysnr(const char *name)
{
	for (size_t i = 0; i < sizeof(systab) / sizeof(systab[0]); i++)
		if (strcmp(systab[i].name, name) == 0)
			return systab[i].nr < NSYS ? systab[i].nr : -1;
	return -1;
}

/* "id == 3 || (id >= 5 && id <= 9)" for the numbers set in bynr. */
static int
id_filter(const uint32_t *bynr, char *buf, size_t len)
{
	size_t used = 0;
	int n;

	buf[0] = '\0';
	for (int i = 0; i < NSYS; i++) {
		int j = i;
		if (!bynr[i])
			continue;
		while (j + 1 < NSYS && bynr[j + 1])
			j++;
		if (i == j)
			n = snprintf(buf + used, len - used, "%sid == %d", used ? " || " : "", i);
		else
			n = snprintf(buf + used, len - used, "%s(id >= %d && id <= %d)",
				     used ? " || " : "", i, j);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
		i = j;
	}
	return 0;
}

/* The raw_syscalls events that serve every probe marked raw. */
int
perf_raw_groups(struct src_perf *sp, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	for (int dir = 0; dir < 2; dir++) {
		int want = dir ? PK_SYSEXIT : PK_SYSENTER;
		uint32_t *bynr = NULL;
		struct pprobe *g;
		unsigned ev = 0;

		for (size_t i = 0; i < sp->nprobes; i++) {
			struct pprobe *p = &sp->probes[i];
			const struct dt_probe_info *info;
			if (!p->raw || p->kind != want)
				continue;
			if (bynr == NULL && (bynr = calloc(NSYS, sizeof(*bynr))) == NULL)
				goto nomem;
			info = dtp_by_id(sp->s.dev, p->id);
			bynr[perf_sysnr(info->dtpi_func)] = (uint32_t)i + 1;
			ev |= p->evtflags;
		}
		if (bynr == NULL)
			continue;
		g = &sp->probes[sp->nprobes];
		memset(g, 0, sizeof(*g));
		g->kind = dir ? PK_RAWEXIT : PK_RAWENTER;
		g->evtflags = ev;
		g->bynr = bynr;
		if ((g->fmt = malloc(sizeof(*g->fmt))) == NULL)
			goto nomem;
		if (dtt_read_format(sp->tfroot, "raw_syscalls", dir ? "sys_exit" : "sys_enter",
				    g->fmt, err, errlen) < 0)
			return -1;
		if (id_filter(bynr, g->filter, sizeof(g->filter)) < 0) {
			dtu_seterr(err, errlen, "too many syscall ranges for one filter");
			return -1;
		}
		/*
		 * Every system call of this direction that the kernel names
		 * selected: no filter to evaluate on each one (it costs about
		 * as much as the event).  Numbers whose tracepoint has another
		 * name (stat is sys_enter_newstat) then arrive unmapped and are
		 * passed over; their own probes are served by their own events.
		 */
		{
			size_t ncat = 0, nselected = 0;
			for (size_t k = 0; k < dtp_count(sp->s.dev); k++) {
				const struct dt_probe_info *q = dtp_at(sp->s.dev, k);
				if (dtp_kind_of(q->dtpi_prov) == DTPK_SYSCALL &&
				    !(q->dtpi_flags & DT_PF_RETURN) == !dir)
					ncat++;
			}
			for (size_t k = 0; k < sp->nprobes; k++)
				if (sp->probes[k].kind == want)
					nselected++;
			if (ncat && nselected == ncat)
				g->filter[0] = '\0';
		}
		sp->nprobes++;
	}
	(void)cfg;
	return 0;
nomem:
	dtu_seterr(err, errlen, "out of memory");
	return -1;
}

/* The threads of process pid (its tasks), malloc'd. */
pid_t *
perf_threads_of(pid_t pid, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *v = NULL;
	size_t cap = 0;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (DT_GROW(v, cap, *n, 1, 16))
			break;
		v[(*n)++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	return v;
}

/*
 * Flight triggers: a counting event per CPU and site for each cfg.trig
 * probe (system calls through their own tracepoint), polled by
 * triggered().  They count every process but the recorder.
 */
int
perf_open_triggers(struct src_perf *sp, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	char self[600];

	if (cfg->trig_filter && strlen(cfg->trig_filter) > 500) {
		dtu_seterr(err, errlen, "--trigger-filter: longer than 500 bytes");
		return -1;
	}
	if (cfg->trig_filter)
		snprintf(self, sizeof(self), "(%s) && common_pid != %d", cfg->trig_filter,
			 (int)getpid());
	else
		snprintf(self, sizeof(self), "common_pid != %d", (int)getpid());
	for (size_t i = 0; i < cfg->ntrig; i++) {
		const struct dt_probe_info *info = dtp_by_id(sp->s.dev, cfg->trig[i].id);
		const struct dtp_uprobe *up = dtp_uprobe(sp->s.dev, cfg->trig[i].id);
		const char *sys, *ev;
		struct perf_event_attr a;
		struct dtt_format *fmt = NULL;
		size_t nsites = up ? up->nsites : 1;
		char nm[DTCAP_PROBENAMELEN];

		if (info == NULL || dtp_perf_event(sp->s.dev, cfg->trig[i].id, &sys, &ev) < 0)
			continue;
		if (info->dtpi_flags & DT_PF_TIMER) {
			dtu_seterr(err, errlen, "--trigger %s: a timer probe cannot trigger a dump",
				   dtp_name(info, nm, sizeof(nm)));
			return -1;
		}
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (!up && dtp_kind_of(info->dtpi_prov) != DTPK_KPROBE) {
			if ((fmt = malloc(sizeof(*fmt))) == NULL) {
				dtu_seterr(err, errlen, "out of memory");
				return -1;
			}
			if (dtt_read_format(sp->tfroot, sys, ev, fmt, err, errlen) < 0) {
				free(fmt);
				return -1;
			}
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = fmt->id;
			free(fmt);
		}
		for (size_t k = 0; k < nsites; k++) {
			if (up) {
				a.type = (uint32_t)sp->uprobe_type;
				a.config = up->ret ? 1 : 0;
				if (up->sites[k].refctr && sp->uprobe_refctr)
					a.config |= up->sites[k].refctr << 32;
				a.config1 = (uint64_t)(uintptr_t)up->path;
				a.config2 = up->sites[k].offset;
			} else if (dtp_kind_of(info->dtpi_prov) == DTPK_KPROBE) {
				a.type = (uint32_t)sp->kprobe_type;
				a.config = (info->dtpi_flags & DT_PF_RETURN) ? 1 : 0;
				a.config1 = (uint64_t)(uintptr_t)sys;
			}
			for (int cpu = 0; cpu < sp->ncpus; cpu++) {
				int fd = (int)perf_open(&a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
				if (fd < 0 && (errno == ENODEV || errno == EINVAL) && cpu > 0)
					continue;	/* an offline CPU */
				if (fd < 0) {
					open_error(errno, dtp_name(info, nm, sizeof(nm)), sp, err, errlen);
					return -1;
				}
				if (DT_GROW(sp->trigfds, sp->trigcap, sp->ntrigfds, 1, 16)) {
					close(fd);
					dtu_seterr(err, errlen, "out of memory");
					return -1;
				}
				sp->trigfds[sp->ntrigfds++] = fd;
				if (a.type != PERF_TYPE_TRACEPOINT) {
					if (dtp_kind_of(info->dtpi_prov) != DTPK_KPROBE)
						(void)ioctl(fd, PERF_EVENT_IOC_SET_FILTER, self);
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, self) < 0 &&
					   cfg->trig_filter) {
					/* a filter the kernel cannot parse for this event */
					dtu_seterr(err, errlen, "--trigger-filter '%s' on %s: %s (the "
						   "fields are those of the tracepoint's format)",
						   cfg->trig_filter, dtp_name(info, nm, sizeof(nm)),
						   strerror(errno));
					return -1;
				}
			}
		}
	}
	return 0;
}

/*
 * The addresses of the kprobed functions, from kallsyms: the first text
 * symbol of the name, the one the kernel's own lookup by name finds.  A
 * command's children inherit its events, which only works for kprobes
 * placed by address (open_probe); kallsyms that hides addresses from us
 * (kptr_restrict=2) is reported there rather than losing the children.
 */
int
perf_kprobe_addrs(struct src_perf *sp, int child, char *err, size_t errlen)
{
	size_t want = 0;
	char line[512];
	int hidden = 0;
	FILE *f;

	for (size_t i = 0; i < sp->nprobes; i++)
		want += sp->probes[i].kind == PK_KPROBE;
	if (want == 0)
		return 0;
	if ((f = fopen("/proc/kallsyms", "re")) == NULL)
		return 0;
	while (want && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		hidden |= addr == 0;
		if (addr == 0 || (type != 't' && type != 'T'))
			continue;
		for (size_t i = 0; i < sp->nprobes; i++) {
			struct pprobe *p = &sp->probes[i];
			const char *func, *ev;
			if (p->kind != PK_KPROBE || p->kaddr ||
			    dtp_perf_event(sp->s.dev, p->id, &func, &ev) < 0 || strcmp(func, name) != 0)
				continue;
			p->kaddr = addr;
			want--;
		}
	}
	fclose(f);
	for (size_t i = 0; i < sp->nprobes && hidden && child; i++) {
		const char *func, *ev;
		if (sp->probes[i].kind != PK_KPROBE || sp->probes[i].kaddr)
			continue;
		dtp_perf_event(sp->s.dev, sp->probes[i].id, &func, &ev);
		dtu_seterr(err, errlen, "kprobe:%s: a command's children can only be kprobed by "
			   "address, and /proc/kallsyms gives none (kernel.kptr_restrict); record "
			   "system-wide (-a) or use the dt source", func);
		return -1;
	}
	return 0;
}