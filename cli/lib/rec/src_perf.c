/*
 * src_perf.c - the perf_event_open(2) source; see source.h.
 *
 * Layout: one ring per CPU, owned by a "tracking" dummy event that also
 * reports COMM/FORK/EXIT/MMAP2; every probe event of that CPU redirects
 * its samples into the same ring (PERF_EVENT_IOC_SET_OUTPUT), as perf
 * record does.  Each sample starts with PERF_SAMPLE_IDENTIFIER, which maps
 * it back to its probe.  Samples become dt_recs in the caller's buffer.
 *
 * Accounting per CPU: read = samples kept, dropped = PERF_RECORD_LOST and
 * LOST_SAMPLES, so produced = read + dropped holds exactly; timer ticks
 * lost to throttling are counted as skipped (from THROTTLE/UNTHROTTLE
 * times and the period).  The recorder's own events never count.
 *
 * This file holds the source's operations; perf_int.h lists the files
 * that do the rest (attributes and opening, side band, samples, rings).
 */
#include "perf_int.h"

static int
perf_enable(struct dtsrc *s, const struct dtp_sel *sel, size_t nsel, const struct dtsrc_cfg *cfg,
	    char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;
	uint32_t bufsize = cfg->bufsize ? cfg->bufsize : DEF_RING;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	pid_t *targets = NULL;
	size_t ntargets = 0, tcap = 0;
	struct rlimit rl;
	int ret = -1;

	if ((sp->m = cfg->machine) == NULL) {
		dtu_seterr(err, errlen, "the perf source needs the session's process model");
		return -1;
	}
	dtm_feed(sp->m);
	if (bufsize < pg)
		bufsize = (uint32_t)pg;
	/* perf opens one descriptor per probe and CPU: allow what the hard limit allows */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sp->flight = cfg->flight;
	sp->no_fmtlost = sp->flight;	/* dumps account by counts (perf_dump) */
	sp->probes = calloc(nsel + 2, sizeof(*sp->probes));
	if (sp->probes == NULL)
		goto nomem;
	for (size_t i = 0; i < nsel; i++) {
		const struct dt_probe_info *info = dtp_by_id(s->dev, sel[i].id);
		struct pprobe *p = &sp->probes[sp->nprobes];
		const char *sys, *ev;

		if (info == NULL || dtp_perf_event(s->dev, sel[i].id, &sys, &ev) < 0)
			continue;
		p->id = sel[i].id;
		p->flags = info->dtpi_flags;
		p->period_ns = sel[i].period_ns;
		p->evtflags = (info->dtpi_flags & DT_PF_TIMER) ? cfg->timer_evtflags : cfg->evtflags;
		if (info->dtpi_flags & DT_PF_TIMER) {
			p->kind = PK_TIMER;
			if (!p->period_ns)
				p->period_ns = dtp_kind_of(info->dtpi_prov) == DTPK_PROFILE ?
					       1000000000ULL / 97 : 1000000000ULL;
		} else if ((p->up = dtp_uprobe(s->dev, sel[i].id)) != NULL) {
			p->kind = PK_UPROBE;
			if (sp->uprobe_type < 0) {
				dtu_seterr(err, errlen, "uprobes need the kernel's uprobe PMU, which "
					   "this kernel does not have");
				goto out;
			}
			if (!sp->uprobe_refctr) {
				for (size_t k = 0; k < p->up->nsites; k++)
					if (p->up->sites[k].refctr) {
						dtu_seterr(err, errlen, "%s: its SDT semaphore needs a kernel "
							   "whose uprobe PMU takes ref_ctr_offset (4.20 and later)",
							   dtp_full_name(s->dev, p->id));
						goto out;
					}
			}
		} else if (dtp_kind_of(info->dtpi_prov) == DTPK_KPROBE) {
			p->kind = PK_KPROBE;
			if (sp->kprobe_type < 0) {
				dtu_seterr(err, errlen, "kprobes need the kernel's kprobe PMU, which "
					   "this kernel does not have");
				goto out;
			}
		} else {
			p->kind = dtp_kind_of(info->dtpi_prov) != DTPK_SYSCALL ? PK_TP :
				  (info->dtpi_flags & DT_PF_RETURN) ? PK_SYSEXIT : PK_SYSENTER;
			if (p->kind != PK_TP && perf_sysnr(info->dtpi_func) >= 0 && !sp->no_raw) {
				p->raw = 1;	/* served by raw_syscalls (raw_groups) */
				sp->nprobes++;
				continue;
			}
			if ((p->fmt = malloc(sizeof(*p->fmt))) == NULL)
				goto nomem;
			if (dtt_read_format(sp->tfroot, sys, ev, p->fmt, err, errlen) < 0)
				goto out;
			dtt_layout(p->fmt, p->kind == PK_SYSENTER ? 1 : 0, &p->lay, NULL);
			if (cfg->offcpu && p->kind == PK_TP && (p->offcpu = (uint8_t)dtoff_kind(sys, ev))) {
				const char *of = dtoff_other_field(p->offcpu);
				p->evtflags |= DTEVT_KSTACK | DTEVT_USTACK;
				for (unsigned k = 0; k < p->fmt->nfields; k++)
					if (strcmp(p->fmt->f[k].name, of) == 0)
						p->ooff = p->fmt->f[k].offset;
					else if (p->offcpu == DTOFF_SWITCH &&
						 strcmp(p->fmt->f[k].name, "prev_pid") == 0)
						p->poff = p->fmt->f[k].offset;
				if (p->ooff == 0) {
					dtu_seterr(err, errlen, "--offcpu: %s:%s has no field %s", sys, ev, of);
					goto out;
				}
			}
		}
		sp->nprobes++;
	}
	if (perf_kprobe_addrs(sp, cfg->child > 0, err, errlen) < 0)
		goto out;
	if (perf_raw_groups(sp, cfg, err, errlen) < 0)
		goto out;
	if (cfg->ustack_mode != DTSRC_USTACK_FP) {
		int want = 0;
		for (size_t i = 0; i < sp->nprobes; i++)
			want |= dwarf_probe(cfg->ustack_mode == DTSRC_USTACK_AUTO ? 1 + cfg->ustack_all : 0,
					    &sp->probes[i]);
		if (want) {
			sp->ustack_size = cfg->ustack_size ? cfg->ustack_size : DTSRC_USTACK_SIZE;
			/* 2: auto, copying for every probe */
			sp->ustack_auto = cfg->ustack_mode == DTSRC_USTACK_AUTO ? 1 + cfg->ustack_all : 0;
			sp->ustack_nofp = cfg->ustack_nofp;
			sp->ustack_size &= ~7U;	/* perf wants a multiple of 8 */
			sp->pool = dtunw_pool_start(cfg->unwind_threads, sp->ncpus,
						    cfg->ustack_mode == DTSRC_USTACK_AUTO ? DTUNW_AUTO
											  : DTUNW_DWARF,
						    cfg->spool_dir);
			if (sp->pool == NULL)
				goto nomem;
			dtm_set_unwinders(sp->m, sp->pool);
			/* a sample is now up to ustack_size bytes: 1 MiB held 64 */
			if (!cfg->bufsize)
				bufsize = DEF_RING_DWARF;
		}
	}

	/* a stack with every context switch of the system (or a bare event
	 * each, with targets) fills 1 MiB quickly on a busy machine */
	if (cfg->offcpu && !cfg->bufsize)
		bufsize = DEF_RING_DWARF;
	sp->targeted = cfg->child > 0 || cfg->npids > 0;
	/* perf takes a task or a cgroup per event, not both */
	if (cfg->cgroupfd >= 0 && sp->targeted) {
		dtu_seterr(err, errlen, "--cgroup with -p or a COMMAND: the perf source takes one "
			   "or the other; use --source dt");
		goto out;
	}
	sp->cgfd = cfg->cgroupfd;
	if (cfg->child > 0) {
		/* p.ts: recorded from then on (its exec, on_comm) */
		struct task *t = task_get(&sp->tgts, (uint32_t)cfg->child, 1);
		if (t == NULL)
			goto nomem;
		t->p.ts = UINT64_MAX;
	}
	for (size_t i = 0; i < cfg->npids; i++)
		if (task_get(&sp->tgts, (uint32_t)cfg->pids[i], 1) == NULL)
			goto nomem;
	if (cfg->child > 0) {
		struct task *t = task_get(&sp->ttids, (uint32_t)cfg->child, 1);
		if (t == NULL)
			goto nomem;
		t->p.pid = (uint32_t)cfg->child;
	}
	if (cfg->child > 0) {
		sp->child_mode = 1;
		if (DT_GROW(targets, tcap, ntargets, 1, 1))
			goto nomem;
		targets[ntargets++] = cfg->child;
	} else {
		for (size_t i = 0; i < cfg->npids; i++) {
			size_t nt;
			pid_t *t = perf_threads_of(cfg->pids[i], &nt);
			if (t == NULL || nt == 0) {
				free(t);
				dtu_seterr(err, errlen, "-p %d: no such process", (int)cfg->pids[i]);
				goto out;
			}
			if (DT_GROW(targets, tcap, ntargets, nt, 64)) {
				free(t);
				goto nomem;
			}
			memcpy(targets + ntargets, t, nt * sizeof(*t));
			ntargets += nt;
			for (size_t k = 0; k < nt; k++) {
				struct task *tt = task_get(&sp->ttids, (uint32_t)t[k], 1);
				if (tt == NULL) {
					free(t);
					goto nomem;
				}
				tt->p.pid = (uint32_t)cfg->pids[i];
			}
			free(t);
		}
	}

	{
		size_t nt = ntargets ? ntargets : 1;
		sp->rings = calloc((size_t)sp->ncpus * nt, sizeof(*sp->rings));
		if (sp->rings == NULL)
			goto nomem;
		if (sp->flight && (sp->frings = calloc((size_t)sp->ncpus, sizeof(*sp->frings))) == NULL)
			goto nomem;
	}
	for (int cpu = 0; cpu < sp->ncpus; cpu++) {
		char path[96];
		struct ring *rg = NULL;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (cpu > 0) {
			char *on = dtu_read_file(path, NULL);
			int offline = on && on[0] == '0';
			free(on);
			if (offline)
				continue;
		}
		struct ring *frg = NULL;

		if (sp->flight && perf_open_ring(sp, -1, cpu, bufsize, 1, &frg, err, errlen) < 0)
			goto out;
		for (size_t t = 0; t < (ntargets ? ntargets : 1); t++) {
			pid_t pid = ntargets ? targets[t] : -1;
			struct ring *own;
			int lead;	/* the tracking event: its group's leader */

			/* one ring per CPU: later targets write into the first one */
			if (perf_open_ring(sp, pid, cpu, sp->flight ? FLIGHT_SB_RING : bufsize, 0, &own, err,
				      errlen) < 0)
				goto out;
			lead = own->fd;	/* own's slot is reused once redirected */
			if (rg == NULL)
				rg = own;
			else if (ioctl(own->fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) == 0) {
				munmap(own->meta, pg + own->size);
				sp->nrings--;
			}
			for (size_t i = 0; i < sp->nprobes; i++) {
				/* interval: one CPU system-wide; with targets, their CPU time */
				const struct dt_probe_info *info = dtp_by_id(s->dev, sp->probes[i].id);
				if (info && dtp_kind_of(info->dtpi_prov) == DTPK_INTERVAL && pid < 0 &&
				    rg != &sp->rings[0])
					continue;
				if (sp->probes[i].offcpu && sp->targeted && t == 0 &&
				    perf_open_probe(sp, i, -1, cpu, frg ? frg : rg, -1, bufsize, err,
					       errlen) < 0)
					goto out;	/* its bare copy (offcpu_keep) */
				if (sp->probes[i].kind == PK_UPROBE) {
					/* per CPU, filtered by tgts (see there) */
					if (t == 0 && perf_open_probe(sp, i, -1, cpu, frg ? frg : rg, -1,
								 bufsize, err, errlen) < 0)
						goto out;
					continue;
				}
				if (perf_open_probe(sp, i, pid, cpu, frg ? frg : rg, lead, bufsize, err,
						    errlen) < 0)
					goto out;
			}
		}
	}
	if (cfg->ntrig && perf_open_triggers(sp, cfg, err, errlen) < 0)
		goto out;
	ret = 0;
	goto out;
nomem:
	dtu_seterr(err, errlen, "out of memory");
out:
	free(targets);
	return ret;
}

static int
perf_ioctl_all(struct src_perf *sp, unsigned long req, char *err, size_t errlen)
{
	for (size_t i = 0; i < sp->nfds; i++) {
		if (ioctl(sp->fds[i], req, 0) < 0) {
			dtu_seterr(err, errlen, "perf_event: %s: %s",
				   req == PERF_EVENT_IOC_ENABLE ? "enable" : "disable", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * System-wide, the recorder's own threads (all started by now: the
 * capture writer's included) are filtered out by the kernel on every
 * tracepoint, so its reads and writes neither cost ring space nor feed
 * back into what it records.  Timer samples of ours are dropped on read.
 */
static int
set_filters(struct src_perf *sp, char *err, size_t errlen)
{
	char pids[512] = "", f[4700];
	size_t n, used = 0;
	/* uprobes are per CPU even with targets: they always need it */
	pid_t *t = perf_threads_of(getpid(), &n);

	for (size_t i = 0; t && i < n && used < sizeof(pids) - 32; i++)
		used += (size_t)snprintf(pids + used, sizeof(pids) - used, "%scommon_pid != %d",
					 i ? " && " : "", (int)t[i]);
	free(t);
	for (size_t i = 0; i < sp->nfds; i++) {
		const struct pprobe *p;
		if (!sp->fdprobe[i])
			continue;
		p = &sp->probes[sp->fdprobe[i] - 1];
		if (p->kind == PK_TIMER || p->kind == PK_KPROBE)
			continue;
		if (p->kind == PK_UPROBE) {
			/*
			 * Keep our own calls of a probed library out of the rings;
			 * a kernel that refuses filters on uprobes costs ring space
			 * only (perf_sample() drops them).
			 */
			if (pids[0])
				(void)ioctl(sp->fds[i], PERF_EVENT_IOC_SET_FILTER, pids);
			continue;
		}
		if (sp->targeted && !p->filter[0])
			continue;
		/* the kernel takes one filter per event: the syscall ids and us */
		if (sp->targeted)
			snprintf(f, sizeof(f), "%s", p->filter);
		else if (p->filter[0] && pids[0])
			snprintf(f, sizeof(f), "(%s) && %s", p->filter, pids);
		else
			snprintf(f, sizeof(f), "%s", p->filter[0] ? p->filter : pids);
		if (!f[0])
			continue;
		if (ioctl(sp->fds[i], PERF_EVENT_IOC_SET_FILTER, f) < 0) {
			dtu_seterr(err, errlen, "tracepoint filter '%.80s': %s", f, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int
perf_start(struct dtsrc *s, char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;

	if (set_filters(sp, err, errlen) < 0)
		return -1;
	/* a command's events switch on by themselves when it execs; uprobes
	 * and --offcpu's events are per CPU, filtered by tgts */
	if (sp->child_mode) {
		for (size_t i = 0; i < sp->nfds; i++) {
			const struct pprobe *p = sp->fdprobe[i] ? &sp->probes[sp->fdprobe[i] - 1] : NULL;
			if (!p || (p->kind != PK_UPROBE && !p->offcpu))
				continue;
			if (ioctl(sp->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
				dtu_seterr(err, errlen, "perf_event: enable: %s", strerror(errno));
				return -1;
			}
		}
		return 0;
	}
	return perf_ioctl_all(sp, PERF_EVENT_IOC_ENABLE, err, errlen);
}

static int
perf_stop(struct dtsrc *s, char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;

	sp->stopped = 1;	/* reads now wait for the unwinding workers */
	if (perf_ioctl_all(sp, PERF_EVENT_IOC_DISABLE, err, errlen) < 0)
		return -1;
	/* how often each event fired, lost samples included */
	if (sp->fired == NULL && (sp->fired = calloc((size_t)sp->ncpus, sizeof(*sp->fired))) == NULL)
		return 0;
	memset(sp->fired, 0, (size_t)sp->ncpus * sizeof(*sp->fired));	/* flight dumps used it */
	if (sp->fmtlost == NULL && (sp->fmtlost = calloc((size_t)sp->ncpus, sizeof(*sp->fmtlost))) == NULL)
		sp->no_fmtlost = 1;
	for (size_t i = 0; i < sp->nfds; i++) {
		uint64_t v[2];
		ssize_t k;
		const struct pprobe *p;
		if (!sp->fdprobe[i] || sp->fdcpu[i] < 0 || sp->fdcpu[i] >= sp->ncpus ||
		    (k = read(sp->fds[i], v, sizeof(v))) < (ssize_t)sizeof(v[0]))
			continue;
		p = &sp->probes[sp->fdprobe[i] - 1];
		if (k == (ssize_t)sizeof(v) && sp->fmtlost)
			sp->fmtlost[sp->fdcpu[i]] += v[1];
		/*
		 * A timer's count is CPU time, and inherited copies add their
		 * partial periods together: no exact tick count.  Its losses
		 * come from LOST records alone.
		 */
		if (p->kind == PK_TIMER)
			continue;
		sp->fired[sp->fdcpu[i]] += v[0];
	}
	return 0;
}

static void
perf_ustack_counts(struct dtsrc *s, uint64_t *dwarf, uint64_t *dwarf_trunc, uint64_t *fp_behind)
{
	struct src_perf *sp = (struct src_perf *)s;

	*dwarf = *dwarf_trunc = 0;
	if (sp->pool)
		dtunw_pool_stats(sp->pool, dwarf, dwarf_trunc);
	*fp_behind = sp->fp_behind;
}

/* whether CPU cpu's flight ring, as the last dump copied it, had wrapped */
static int
flight_wrapped(const struct src_perf *sp, int cpu)
{
	for (size_t i = 0; i < sp->nfrings; i++)
		if (sp->frings[i].cpu == cpu)
			return sp->frings[i].fwrapped;
	return 1;
}

static int
perf_counters(struct dtsrc *s, struct dtcap_count *out, uint32_t cap, uint32_t *ncpus,
	      char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;

	(void)err;
	(void)errlen;
	*ncpus = (uint32_t)sp->ncpus;
	for (uint32_t i = 0; i < cap && i < (uint32_t)sp->ncpus; i++) {
		uint64_t fired = sp->fired ? sp->fired[i] : 0, miss = 0;
		if (!sp->no_fmtlost && sp->fmtlost) {
			out[i] = sp->counts[i];
			out[i].dropped = sp->lost[i] > sp->fmtlost[i] ? sp->lost[i] : sp->fmtlost[i];
			out[i].produced = out[i].read + out[i].dropped;
			continue;
		}
		/*
		 * Losses: what LOST records reported, or, once stopped, what
		 * the counting events fired beyond the samples that reached us
		 * if that is more (the kernel reports a loss only at its next
		 * successful write, so a ring full until the end would hide the
		 * last ones).
		 */
		if (fired > sp->seen[i])
			miss = fired - sp->seen[i];
		/*
		 * A flight ring that wrapped: what its events wrote beyond what
		 * it holds was overwritten.  A target's tracepoint events count
		 * only what they wrote (in the tracking event's group: not the
		 * wakeups of the target by others, open_event), so this is
		 * exact for them; per-CPU uprobes and --offcpu's bare copies
		 * count the other processes' samples the reader would have
		 * dropped too (dtrec(8) BUGS).  A ring that never wrapped holds
		 * every sample written to it: its losses are the LOST records.
		 */
		if (sp->flight && !flight_wrapped(sp, (int)i))
			miss = 0;
		out[i] = sp->counts[i];
		out[i].dropped = sp->lost[i] > miss ? sp->lost[i] : miss;
		out[i].produced = out[i].read + out[i].dropped;
	}
	return 0;
}

static void
perf_clock(struct dtsrc *s, uint64_t *mono, int64_t *real)
{
	struct timespec ts;

	(void)s;
	clock_gettime(CLOCK_REALTIME, &ts);
	*mono = dtu_now_ns();
	*real = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* How often each counting event fired, per CPU, into sp->fired. */
static int
read_fired(struct src_perf *sp)
{
	if (sp->fired == NULL && (sp->fired = calloc((size_t)sp->ncpus, sizeof(*sp->fired))) == NULL)
		return -1;
	memset(sp->fired, 0, (size_t)sp->ncpus * sizeof(*sp->fired));
	for (size_t i = 0; i < sp->nfds; i++) {
		uint64_t v;
		if (!sp->fdprobe[i] || sp->fdcpu[i] < 0 || sp->fdcpu[i] >= sp->ncpus ||
		    sp->probes[sp->fdprobe[i] - 1].kind == PK_TIMER ||
		    read(sp->fds[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		sp->fired[sp->fdcpu[i]] += v;
	}
	return 0;
}

/*
 * Freeze every ring (PAUSE_OUTPUT) just long enough to copy it and count
 * what fired, so producers lose only what comes during the copies (the
 * kernel counts those as lost; they count as dropped like the overwritten
 * ones).  A backward ring holds its newest record at data_head and older
 * ones above it; the walk stops at never-written space (size 0) or at the
 * oldest record, cut by newer ones.
 */
static int
perf_dump(struct dtsrc *s, int begin, char *err, size_t errlen)
{
	struct src_perf *sp = (struct src_perf *)s;
	uint64_t *heads;
	size_t paused = 0;
	int ret = -1;

	if (!sp->flight) {
		dtu_seterr(err, errlen, "not a flight recording");
		return -1;
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i];
		free(rg->fpos);
		free(rg->fcopy);
		rg->fpos = NULL;
		rg->fcopy = NULL;
		rg->fn = rg->fcur = 0;
	}
	sp->dumping = 0;
	if (!begin)
		return 0;
	if ((heads = calloc(sp->nfrings ? sp->nfrings : 1, sizeof(*heads))) == NULL)
		goto nomem;
	for (size_t i = 0; i < sp->nfrings; i++)
		if ((sp->frings[i].fcopy = malloc(sp->frings[i].size)) == NULL)
			goto nomem;
	for (; paused < sp->nfrings; paused++) {
		struct ring *rg = &sp->frings[paused];
		if (ioctl(rg->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0) {
			dtu_seterr(err, errlen, "pausing the ring of CPU %d: %s", rg->cpu, strerror(errno));
			goto out;
		}
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i];
		heads[i] = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);
		memcpy(rg->fcopy, rg->data, rg->size);
	}
	/* this dump's accounting: everything fired until now against what it holds */
	if (read_fired(sp) < 0)
		goto nomem;
	for (; paused > 0; paused--)
		(void)ioctl(sp->frings[paused - 1].fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	/* a process's fork and exec precede its samples: what the copies hold is known now */
	perf_flight_sideband(sp);
	for (size_t i = 0; i < sp->nfrings; i++) {
		struct ring *rg = &sp->frings[i], copy = *rg;
		const struct perf_event_header *h;
		size_t cap = 0;
		uint64_t pos;

		copy.data = rg->fcopy;
		rg->fend = heads[i] + rg->size;
		/* a backward ring's head runs down from 0: -head bytes written */
		rg->fwrapped = 0 - heads[i] > rg->size;
		for (pos = heads[i]; (h = perf_at(sp, &copy, pos, rg->fend)) != NULL; pos += h->size) {
			if (DT_GROW(rg->fpos, cap, rg->fn, 1, 4096))
				goto nomem;
			rg->fpos[rg->fn++] = pos;
		}
		/* newest first in the ring: oldest first for the capture */
		for (size_t a = 0, b = rg->fn; a + 1 < b; a++, b--) {
			uint64_t t = rg->fpos[a];
			rg->fpos[a] = rg->fpos[b - 1];
			rg->fpos[b - 1] = t;
		}
	}
	memset(sp->seen, 0, (size_t)sp->ncpus * sizeof(*sp->seen));
	memset(sp->lost, 0, (size_t)sp->ncpus * sizeof(*sp->lost));
	for (int c = 0; c < sp->ncpus; c++)
		sp->counts[c].read = sp->counts[c].skipped = 0;
	sp->dumping = 1;
	ret = 0;
	goto out;
nomem:
	dtu_seterr(err, errlen, "out of memory");
out:
	for (; paused > 0; paused--)
		(void)ioctl(sp->frings[paused - 1].fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	free(heads);
	return ret;
}

static uint64_t
perf_triggered(struct dtsrc *s)
{
	struct src_perf *sp = (struct src_perf *)s;
	uint64_t sum = 0, v;

	for (size_t i = 0; i < sp->ntrigfds; i++)
		if (read(sp->trigfds[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v;
	return sum;
}

static void
perf_close(struct dtsrc *s)
{
	struct src_perf *sp = (struct src_perf *)s;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (sp->m)
		dtm_set_unwinders(sp->m, NULL);
	dtunw_pool_free(sp->pool);
	for (size_t i = 0; i < sp->nrings; i++) {
		munmap(sp->rings[i].meta, pg + sp->rings[i].size);
	}
	for (size_t i = 0; i < sp->nfrings; i++) {
		munmap(sp->frings[i].meta, pg + sp->frings[i].size);
		free(sp->frings[i].fpos);
		free(sp->frings[i].fcopy);
	}
	free(sp->frings);
	for (size_t i = 0; i < sp->nfds; i++)
		close(sp->fds[i]);
	for (size_t i = 0; i < sp->nprobes; i++) {
		free(sp->probes[i].fmt);
		free(sp->probes[i].bynr);
	}
	free(sp->probes);
	free(sp->fds);
	free(sp->ids);
	dt_htab_free(&sp->idix);
	free(sp->rings);
	free(sp->counts);
	free(sp->seen);
	free(sp->lost);
	free(sp->fmtlost);
	free(sp->fired);
	free(sp->fdcpu);
	free(sp->fdprobe);
	free(sp->tmp);
	free(sp->pf);
	tasks_free(&sp->tgts);
	tasks_free(&sp->ttids);
	for (size_t i = 0; i < sp->ntrigfds; i++)
		close(sp->trigfds[i]);
	free(sp->trigfds);
	dtp_close(s->dev);
	free(sp);
}

static const struct dtsrc_ops perf_ops = {
	.name = "perf",
	.watermark = 1,
	.enable = perf_enable,
	.start = perf_start,
	.stop = perf_stop,
	.read = perf_read,
	.wait = perf_wait,
	.counters = perf_counters,
	.clock = perf_clock,
	.ustack_counts = perf_ustack_counts,
	.filters_cgroup = 1,
	.dump = perf_dump,
	.triggered = perf_triggered,
	.close = perf_close,
};

struct dtsrc *
dtsrc_perf_new(struct dtp_dev *dev, char *err, size_t errlen)
{
	struct src_perf *sp = calloc(1, sizeof(*sp));
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (sp != NULL)
		sp->cgfd = sp->lead_lost = sp->lead_new = -1;

	if (sp == NULL || (sp->counts = calloc(n > 0 ? (size_t)n : 1, sizeof(*sp->counts))) == NULL ||
	    (sp->seen = calloc(n > 0 ? (size_t)n : 1, sizeof(*sp->seen))) == NULL ||
	    (sp->lost = calloc(n > 0 ? (size_t)n : 1, sizeof(*sp->lost))) == NULL) {
		if (sp) {
			free(sp->counts);
			free(sp->seen);
		}
		free(sp);
		dtp_close(dev);
		dtu_seterr(err, errlen, "out of memory");
		return NULL;
	}
	sp->s.ops = &perf_ops;
	sp->s.dev = dev;
	sp->tfroot = dtp_tracefs(dev);
	sp->ncpus = n > 0 ? (int)n : 1;
	sp->self = (uint32_t)getpid();
	sp->kprobe_type = perf_kprobe_type();
	sp->uprobe_type = perf_pmu_type("uprobe");
	{
		struct stat st;
		sp->uprobe_refctr = stat("/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset",
					 &st) == 0;
	}
	sp->no_raw = getenv("DTREC_PERF_NO_RAW_SYSCALLS") != NULL;
	return &sp->s;
}
