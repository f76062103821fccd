/* src_dt.c - the /dev/dt source (dt.ko); see source.h. */
#include "dt_grow.h"
#include "dt_htab.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "dt_abi.h"
#include "machine.h"
#include "offcpu.h"
#include "unwind.h"
#include "unwind_pool.h"
#include "util.h"

/* the ring size with user stack copies, as the perf source's */
#define DEF_RING_UREGS	(4U << 20)

_Static_assert(DT_UREGS_MASK == DTUNW_REGS_MASK,
	       "dt.ko's user registers are the unwinder's, in its order");

/* The proc probes (dt(4)) that keep the process table. */
enum { PP_FORK, PP_EXEC, PP_EXIT, PP_MMAP, PP_N };
static const char *const pp_names[PP_N][2] = {
	[PP_FORK] = { "process", "fork" },
	[PP_EXEC] = { "process", "exec" },
	[PP_EXIT] = { "process", "exit" },
	[PP_MMAP] = { "mmap", "exec" },
};

struct src_dt {
	struct dtsrc	s;
	struct dt_stats	*cpustats;	/* [r] scratch for DTIOCGCPUSTATS */
	uint32_t	ncpus;
	/* DWARF user stacks (unwind_pool.h); NULL: frame pointers only */
	struct dtunw_pool *pool;
	uint64_t	fp_behind;	/* [r] kept the frame-pointer stack */
	int		pc_only;	/* [I] copies come without dt.ko's frame-
					 * pointer walk (dtsrc_cfg ustack_nofp):
					 * the copy's pc is the record's stack */
	int		stopped;	/* [r] reads now wait for the workers */
	uint32_t	self;		/* [I] our tgid: never unwound */
	struct dtm	*m;		/* [I] the session's machine, fed */
	/*
	 * The machine's process table, fed from dt.ko's proc probes (track):
	 * names, exec paths and executable mappings as they happen, so a
	 * process that exits before anyone could read its /proc has them.
	 */
	int		track;		/* [I] */
	uint32_t	pp_id[PP_N];	/* [I] probe ids, 0: none */
	int		pp_hide[PP_N];	/* [I] enabled for the table alone */
	uint64_t	*hidden;	/* [r] per CPU: records kept from record.c */
	size_t		nhidden;
	const struct dt_rec **pend;	/* [r] scratch: one read's proc records */
	size_t		pendcap;
	int		flight;		/* [I] the rings overwrite (DT_RING_OVERWRITE) */
	int		dumping;	/* between dump(1) and dump(0): frozen */
	uint64_t	*readbase;	/* flight: per CPU, read before this dump */
	uint32_t	nreadbase;
	/*
	 * flight: a second descriptor with the trigger probes alone, in a
	 * small ring that drops: every record read from it is one firing.
	 */
	int		trigfd;
	uint64_t	ntrig;
};

/* Which proc probe id is, or -1. */
static int
pp_of(const struct src_dt *d, uint32_t id)
{
	for (int i = 0; i < PP_N; i++)
		if (d->pp_id[i] && d->pp_id[i] == id)
			return i;
	return -1;
}

/*
 * The struct dt_path ending rec (sz bytes), NUL-terminated within the
 * record; NULL when the record has none or it is malformed.
 */
static const char *
rec_path(const struct dt_rec *rec, size_t sz, uint32_t *flags)
{
	size_t off = DT_REC_SIZE(rec->dtr_nargs, rec->dtr_nkstack, rec->dtr_nustack);
	struct dt_path ph;

	if (!(rec->dtr_flags & DTR_PATH) || off > sz)
		return NULL;
	if (rec->dtr_flags & DTR_UREGS) {
		struct dt_uregs ur;
		if (sz - off < sizeof(ur))
			return NULL;
		memcpy(&ur, (const char *)rec + off, sizeof(ur));
		if (ur.dtur_size > sz - off - sizeof(ur))
			return NULL;
		off += sizeof(ur) + ((ur.dtur_size + 7) & ~7U);
	}
	if (off > sz || sz - off < sizeof(ph))
		return NULL;
	memcpy(&ph, (const char *)rec + off, sizeof(ph));
	off += sizeof(ph);
	if (ph.dtph_len >= DT_PATHMAX || DT_PATH_PAD((size_t)ph.dtph_len) > sz - off ||
	    ((const char *)rec)[off + ph.dtph_len] != '\0')
		return NULL;
	*flags = ph.dtph_flags;
	return (const char *)rec + off;
}

static int
by_ts(const void *a, const void *b)
{
	const struct dt_rec *x = *(const struct dt_rec *const *)a;
	const struct dt_rec *y = *(const struct dt_rec *const *)b;

	if (x->dtr_ts != y->dtr_ts)
		return x->dtr_ts < y->dtr_ts ? -1 : 1;
	return x < y ? -1 : x > y;	/* one CPU's records keep their order */
}

/* One proc record into the table. */
static void
pp_apply(struct src_dt *d, const struct dt_rec *rec)
{
	const uint64_t *a = (const uint64_t *)(const void *)(rec + 1);
	char comm[DT_COMMLEN + 1];
	const char *path;
	uint32_t pflags = 0;
	int k = pp_of(d, rec->dtr_probe);

	memcpy(comm, rec->dtr_comm, DT_COMMLEN);
	comm[DT_COMMLEN] = '\0';
	switch (k) {
	case PP_FORK:
		if (rec->dtr_nargs < 2 || a[0] == 0 || a[0] > UINT32_MAX)
			break;
		/* the record's comm is the parent's, which the child starts with */
		dtm_feed_fork(d->m, (uint32_t)a[0], rec->dtr_pid, rec->dtr_ts, comm);
		break;
	case PP_EXEC:
		if (rec->dtr_nargs < 3 || (path = rec_path(rec, rec->dtr_size, &pflags)) == NULL)
			break;
		/* the new comm is an argument: the record's is taken as it fires */
		memcpy(comm, &a[1], 16);
		comm[DT_COMMLEN] = '\0';
		dtm_feed_comm(d->m, rec->dtr_pid, comm);
		dtm_feed_exec(d->m, rec->dtr_pid, rec->dtr_ts, comm, path);
		break;
	case PP_EXIT:
		dtm_feed_exit(d->m, rec->dtr_pid);
		break;
	case PP_MMAP:
		if (rec->dtr_nargs < 6 || (path = rec_path(rec, rec->dtr_size, &pflags)) == NULL ||
		    (pflags & DTPH_UNKNOWN) || a[3] > UINT32_MAX)
			break;
		dtm_feed_mmap(d->m, rec->dtr_pid, a[0], a[1], a[2], (uint32_t)a[3], path,
			     rec->dtr_ts);
		break;
	default:
		break;
	}
}

/*
 * The proc records of one read (n bytes at buf), before anything else of
 * it: a sample of a process that exec'd, forked or mapped a library on
 * another CPU then finds its mappings.  They are applied in time order
 * across CPUs (a process may exec on one CPU and map its libraries on
 * another).  Those enabled for the table alone leave the buffer, the
 * others lose their paths (the capture has no place for them).  Returns
 * the bytes left.
 */
static size_t
dsrc_take_procs(struct src_dt *d, char *buf, size_t n)
{
	size_t r = 0, np = 0;

	while (r + sizeof(struct dt_rec) <= n) {
		const struct dt_rec *h = (const struct dt_rec *)(const void *)(buf + r);
		if (h->dtr_size < sizeof(*h) || h->dtr_size > n - r || h->dtr_size % 8 != 0)
			break;	/* not dt.ko's: record.c says so */
		if (pp_of(d, h->dtr_probe) >= 0 &&
		    DT_REC_SIZE(h->dtr_nargs, h->dtr_nkstack, h->dtr_nustack) <= h->dtr_size) {
			if (DT_GROW(d->pend, d->pendcap, np, 1, 256))
				break;	/* the rest stays unapplied: names, not events */
			d->pend[np++] = h;
		}
		r += h->dtr_size;
	}
	if (np == 0)
		return n;
	qsort(d->pend, np, sizeof(*d->pend), by_ts);
	for (size_t i = 0; i < np; i++)
		pp_apply(d, d->pend[i]);

	size_t w = 0;
	r = 0;
	while (r + sizeof(struct dt_rec) <= n) {
		struct dt_rec h;
		memcpy(&h, buf + r, sizeof(h));
		if (h.dtr_size < sizeof(h) || h.dtr_size > n - r || h.dtr_size % 8 != 0)
			break;
		size_t sz = h.dtr_size, base = DT_REC_SIZE(h.dtr_nargs, h.dtr_nkstack, h.dtr_nustack);
		int k = pp_of(d, h.dtr_probe);
		if (k >= 0 && d->pp_hide[k]) {
			if (h.dtr_cpu >= d->nhidden) {
				size_t nc = (size_t)h.dtr_cpu + 1;
				uint64_t *nv = realloc(d->hidden, nc * sizeof(*nv));
				if (nv != NULL) {
					memset(nv + d->nhidden, 0, (nc - d->nhidden) * sizeof(*nv));
					d->hidden = nv;
					d->nhidden = nc;
				}
			}
			if (h.dtr_cpu < d->nhidden)
				d->hidden[h.dtr_cpu]++;
			r += sz;
			continue;
		}
		memmove(buf + w, buf + r, sz);
		r += sz;
		if (k >= 0 && (h.dtr_flags & DTR_PATH) && !(h.dtr_flags & DTR_UREGS) && base <= sz) {
			/* dt_take_copies cuts a record with a copy at its stacks */
			h.dtr_size = (uint32_t)base;
			h.dtr_flags &= (uint8_t)~DTR_PATH;
			memcpy(buf + w, &h, sizeof(h));
			sz = base;
		}
		w += sz;
	}
	if (r < n) {
		memmove(buf + w, buf + r, n - r);
		w += n - r;
	}
	return w;
}

/*
 * The records read() left at buf (n bytes), in place: each one's user
 * registers and stack copy (DTR_UREGS) go to the unwinding workers, which
 * return the record later with its DWARF user stack; the record leaves
 * the buffer.  A record they refuse (over budget) keeps its
 * frame-pointer stack and is counted.  No copy stays in a record: they
 * never reach the capture.  Returns the bytes left.
 */
static size_t
dsrc_take_copies(struct src_dt *d, char *buf, size_t n)
{
	size_t r = 0, w = 0;

	while (r < n) {
		struct dt_rec h;
		size_t base, sz;

		if (n - r < sizeof(h))
			break;
		memcpy(&h, buf + r, sizeof(h));
		sz = h.dtr_size;
		if (sz < sizeof(h) || sz > n - r || sz % 8 != 0)
			break;	/* not dt.ko's: record.c says so */
		base = DT_REC_SIZE(h.dtr_nargs, h.dtr_nkstack, h.dtr_nustack);
		if (!(h.dtr_flags & DTR_UREGS) || base > sz) {
			memmove(buf + w, buf + r, sz);
			r += sz;
			/*
			 * dt.ko's frame-pointer walk through code built without
			 * frame pointers reads data as return addresses: the
			 * machine, which knows the code, cuts the stack there.
			 */
			if (d->track && base == sz && h.dtr_nustack) {
				struct dt_rec *k = (struct dt_rec *)(void *)(buf + w);
				dtm_sample(d->m, k, DTM_FP_CUT);
				sz = k->dtr_size;
			}
			w += sz;
			continue;
		}
		struct dt_uregs ur;
		const char *stk = buf + r + base + sizeof(ur);
		int ok = base + sizeof(ur) <= sz;
		if (ok) {
			memcpy(&ur, buf + r + base, sizeof(ur));
			ok = ur.dtur_size <= sz - base - sizeof(ur);
		}
		/* the record without its copy; the copy lies beyond it */
		memmove(buf + w, buf + r, base);
		h.dtr_size = (uint32_t)base;
		h.dtr_flags &= (uint8_t)~DTR_UREGS;
		if (ok && d->pc_only && h.dtr_nustack == 0) {
			/* no walk was asked for: the pc, until the copy is
			 * unwound (8 bytes over what the copy's header held) */
			memcpy(buf + w + base, &ur.dtur_regs[DT_UREG_IP], 8);
			base += 8;
			h.dtr_size = (uint32_t)base;
			h.dtr_nustack = 1;
			h.dtr_flags |= DTR_USTACK_TRUNC;
		}
		memcpy(buf + w, &h, sizeof(h));
		r += sz;
		if (ok && d->pool && h.dtr_pid != 0 && h.dtr_pid != d->self) {
			if (d->track)	/* first heard of: what it mapped before, from /proc */
				dtm_sample(d->m, (struct dt_rec *)(void *)(buf + w), DTM_UNWIND);
			else
				dtm_observe(d->m, h.dtr_pid, h.dtr_tid, h.dtr_comm,
					    ur.dtur_regs[DT_UREG_IP]);
			if (dtunw_pool_submit(d->pool, (const struct dt_rec *)(void *)(buf + w),
					      ur.dtur_regs, DT_UREGS_MASK, stk, ur.dtur_size) == 0)
				continue;	/* it comes back from the pool */
			d->fp_behind++;
		}
		w += base;
	}
	if (r < n) {
		/* a malformed tail: passed on whole for record.c to reject */
		memmove(buf + w, buf + r, n - r);
		w += n - r;
	}
	return w;
}

/*
 * Which probes copy user stacks: with dwarf every probe that records
 * user stacks; with auto the timers, where the stack is the point of
 * the event (a 16k copy on every system call or tracepoint would cost
 * far more than the event; ask for dwarf to have it anyway).
 */
/*
 * What a probe's events carry: -k and -u's stacks, and --offcpu's on the
 * scheduler tracepoints whatever those say, with their subject's events
 * (a switch into a target, a wakeup of one: DTEVT_SUBJECT in dt(4)).
 */
static unsigned
sel_flags(struct dtsrc *s, const struct dtp_sel *sel, const struct dtsrc_cfg *cfg)
{
	unsigned fl = (sel->flags & DT_PF_TIMER) ? cfg->timer_evtflags : cfg->evtflags;

	if (cfg->offcpu) {
		const struct dt_probe_info *p = dtp_by_id(s->dev, sel->id);
		if (p && strcmp(p->dtpi_prov, "tracepoint") == 0 &&
		    dtoff_kind(p->dtpi_func, p->dtpi_name))
			fl |= DTEVT_KSTACK | DTEVT_USTACK | DTEVT_SUBJECT;
	}
	return fl;
}

static int
dsrc_copies(struct dtsrc *s, const struct dtp_sel *sel, const struct dtsrc_cfg *cfg)
{
	unsigned fl = sel_flags(s, sel, cfg);

	if (!(fl & DTEVT_USTACK) || cfg->ustack_mode == DTSRC_USTACK_FP)
		return 0;
	return cfg->ustack_mode == DTSRC_USTACK_DWARF || cfg->ustack_all || (sel->flags & DT_PF_TIMER);
}


/*
 * The kernel keeps only the targets' events (DTIOCSETFILTER): the listed
 * processes and, followed at fork, their descendants; a COMMAND waiting to
 * exec becomes one at its exec; with --comm and --cgroup only those tasks
 * too.  Every descriptor leaves dtrec itself out.
 */
static int
dsrc_filter(int fd, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	struct dt_filter f;
	uint32_t *pids = NULL;

	memset(&f, 0, sizeof(f));
	if (cfg->npids || cfg->child > 0) {
		if (cfg->npids > DT_FILTER_MAXPIDS) {
			dtu_seterr(err, errlen, "at most %u processes (-p)", DT_FILTER_MAXPIDS);
			return -1;
		}
		if (cfg->npids && (pids = calloc(cfg->npids, sizeof(*pids))) == NULL) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		for (size_t i = 0; i < cfg->npids; i++)
			pids[i] = (uint32_t)cfg->pids[i];
		f.dtf_flags = DTF_PIDS | DTF_CHILDREN;
		f.dtf_npids = (uint32_t)cfg->npids;
		f.dtf_pids = (uint64_t)(uintptr_t)pids;
		f.dtf_execpid = cfg->child > 0 ? (uint32_t)cfg->child : 0;
	}
	if (cfg->comm) {
		f.dtf_flags |= DTF_COMM;
		snprintf(f.dtf_comm, sizeof(f.dtf_comm), "%s", cfg->comm);
	}
	if (cfg->cgroupfd >= 0) {
		f.dtf_flags |= DTF_CGROUP;
		f.dtf_cgroupfd = cfg->cgroupfd;
	}
	if (ioctl(fd, DTIOCSETFILTER, &f) < 0) {
		int e = errno;
		if (e == ESRCH && cfg->npids)
			dtu_seterr(err, errlen, "-p: a process given is not running (or is a thread, "
				   "not a process)");
		else if (e == EBADF && cfg->cgroupfd >= 0)
			dtu_seterr(err, errlen, "--cgroup: dt.ko takes it for no cgroup v2 directory");
		else
			dtu_seterr(err, errlen, "/dev/dt: setting the process filter: %s", strerror(e));
		free(pids);
		return -1;
	}
	free(pids);
	return 0;
}

/* flight: the trigger probes on a descriptor of their own */
static int
dsrc_trig_open(struct src_dt *d, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	char path[64];
	uint32_t sz = DT_BUFSZ_MIN;

	/* the same device, whatever its path: a new open is a new descriptor */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dtp_fd(d->s.dev));
	d->trigfd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (d->trigfd < 0) {
		dtu_seterr(err, errlen, "/dev/dt: opening it for --trigger: %s", strerror(errno));
		return -1;
	}
	if (ioctl(d->trigfd, DTIOCSETBUFSZ, &sz) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: --trigger ring: %s", strerror(errno));
		return -1;
	}
	/* a trigger counts every process but dtrec, targets or not (as on perf) */
	struct dtsrc_cfg all = *cfg;
	all.pids = NULL;
	all.npids = 0;
	all.child = 0;
	all.comm = NULL;
	all.cgroupfd = -1;
	if (dsrc_filter(d->trigfd, &all, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < cfg->ntrig; i++) {
		struct dt_enable en;

		memset(&en, 0, sizeof(en));
		en.dten_id = cfg->trig[i].id;
		en.dten_period_ns = cfg->trig[i].period_ns;
		if (cfg->trig[i].flags & DT_PF_TIMER) {
			const struct dt_probe_info *p = dtp_by_id(d->s.dev, cfg->trig[i].id);
			char nm[DTCAP_PROBENAMELEN];
			dtu_seterr(err, errlen, "--trigger %s: a timer probe cannot trigger a dump",
				   p ? dtp_name(p, nm, sizeof(nm)) : "probe");
			return -1;
		}
		if (ioctl(d->trigfd, DTIOCPRBENABLE, &en) < 0 && errno != EEXIST) {
			dtu_seterr(err, errlen, "--trigger: enabling probe %u: %s", cfg->trig[i].id,
				   strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int
dsrc_enable(struct dtsrc *s, const struct dtp_sel *sel, size_t nsel,
	  const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	int fd = dtp_fd(s->dev), copies = 0;

	if ((d->m = cfg->machine) == NULL) {
		dtu_seterr(err, errlen, "the dt source needs the session's process model");
		return -1;
	}
	uint32_t bufsize = cfg->bufsize, ustack = 0;

	if (cfg->trig_filter) {
		dtu_seterr(err, errlen, "--trigger-filter needs the perf source (--source perf): "
			   "dt.ko has no tracefs filters");
		return -1;
	}
	if (dsrc_filter(fd, cfg, err, errlen) < 0)
		return -1;
	if (cfg->flight) {
		uint32_t m = DT_RING_OVERWRITE;
		if (ioctl(fd, DTIOCSETRMODE, &m) < 0) {
			dtu_seterr(err, errlen, "/dev/dt: overwriting rings: %s", strerror(errno));
			return -1;
		}
		d->flight = 1;
		if (cfg->ntrig && dsrc_trig_open(d, cfg, err, errlen) < 0)
			return -1;
	}
	/*
	 * A flight recorder's dumps keep frame-pointer stacks: its records
	 * sit in the rings until a dump, and a dump must hold them all when
	 * it ends, not as the unwinding workers return them.
	 */
	for (size_t i = 0; i < nsel && !d->flight; i++)
		copies |= dsrc_copies(s, &sel[i], cfg);
	if (copies) {
		ustack = (cfg->ustack_size ? cfg->ustack_size : DTSRC_USTACK_SIZE) & ~7U;
		if (!bufsize)
			bufsize = DEF_RING_UREGS;
		if (DT_REC_MAXSIZE(ustack) > bufsize / 2) {
			uint32_t need = DT_BUFSZ_MIN;
			while (need / 2 < DT_REC_MAXSIZE(ustack))
				need *= 2;
			dtu_seterr(err, errlen, "ring size %u is too small for user stack copies of "
				   "%u bytes: a record must fit twice (-b %uk or more, or a smaller "
				   "--user-stack-size)", bufsize, ustack, need >> 10);
			return -1;
		}
	}
	if (bufsize && ioctl(fd, DTIOCSETBUFSZ, &bufsize) < 0) {
		dtu_seterr(err, errlen, "ring size %u: %s (a power of two from %u to %u bytes)",
			   bufsize, strerror(errno), DT_BUFSZ_MIN, DT_BUFSZ_MAX);
		return -1;
	}
	if (copies) {
		if (ioctl(fd, DTIOCSETUSTACK, &ustack) < 0) {
			dtu_seterr(err, errlen, "user stack size %u: %s (%u to %u bytes)", ustack,
				   strerror(errno), DT_USTACK_MIN, DT_USTACK_MAX);
			return -1;
		}
		long nc = sysconf(_SC_NPROCESSORS_CONF);
		d->pool = dtunw_pool_start(cfg->unwind_threads, nc > 0 ? nc : 1,
					   cfg->ustack_mode == DTSRC_USTACK_AUTO ? DTUNW_AUTO
										 : DTUNW_DWARF,
					   cfg->spool_dir);
		if (d->pool == NULL) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		dtm_set_unwinders(d->m, d->pool);
	}
	/*
	 * User stacks are named from the process table: the proc probes keep
	 * it (with their paths, if the ring holds their longest record twice;
	 * else /proc is read as processes appear).  Not in a flight recorder,
	 * whose rings keep only the newest records, of whatever kind.
	 */
	if ((((cfg->evtflags | cfg->timer_evtflags) & DTEVT_USTACK) || cfg->offcpu) && !d->flight &&
	    (bufsize ? bufsize : DT_BUFSZ_DEFAULT) / 2 >= DT_REC_PATHMAXSIZE) {
		int all = 1;
		for (int k = 0; k < PP_N; k++) {
			for (size_t i = 0; i < dtp_count(s->dev) && !d->pp_id[k]; i++) {
				const struct dt_probe_info *p = dtp_at(s->dev, i);
				if (strcmp(p->dtpi_prov, "proc") == 0 &&
				    strcmp(p->dtpi_func, pp_names[k][0]) == 0 &&
				    strcmp(p->dtpi_name, pp_names[k][1]) == 0)
					d->pp_id[k] = p->dtpi_id;
			}
			all &= d->pp_id[k] != 0;
		}
		if (!all)
			memset(d->pp_id, 0, sizeof(d->pp_id));
		d->track = all;
		if (all)
			dtm_feed(d->m);
	}
	/*
	 * Probes are armed in the order they were enabled, mmap first: a
	 * process that execs while the others are being armed still has
	 * every mapping it makes reported (an exec seen after them would
	 * clear them).
	 */
	static const int order[PP_N] = { PP_MMAP, PP_FORK, PP_EXEC, PP_EXIT };
	for (int o = 0; o < PP_N && d->track; o++) {
		int k = order[o];
		struct dt_enable en;
		int mine = 1;

		for (size_t i = 0; i < nsel; i++)
			mine &= sel[i].id != d->pp_id[k];
		d->pp_hide[k] = mine;
		if (!mine)
			continue;	/* enabled below, with what the table needs */
		memset(&en, 0, sizeof(en));
		en.dten_id = d->pp_id[k];
		en.dten_evtflags = DTEVT_COMM | DTEVT_FUNCARGS;
		if (ioctl(fd, DTIOCPRBENABLE, &en) < 0) {
			dtu_seterr(err, errlen, "enabling proc:%s:%s: %s", pp_names[k][0],
				   pp_names[k][1], strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < nsel; i++) {
		struct dt_enable en;
		char nm[DTCAP_PROBENAMELEN];

		memset(&en, 0, sizeof(en));
		en.dten_id = sel[i].id;
		en.dten_evtflags = sel_flags(s, &sel[i], cfg);
		if (copies && dsrc_copies(s, &sel[i], cfg)) {
			en.dten_evtflags |= DTEVT_UREGS;
			/* as the perf source: a walk through code without frame
			 * pointers finds only the pc the copy has */
			if (cfg->ustack_nofp) {
				en.dten_evtflags &= ~(uint32_t)DTEVT_USTACK;
				d->pc_only = 1;
			}
		}
		if (pp_of(d, sel[i].id) >= 0)
			en.dten_evtflags |= DTEVT_COMM | DTEVT_FUNCARGS;
		en.dten_period_ns = sel[i].period_ns;
		if (ioctl(fd, DTIOCPRBENABLE, &en) < 0) {
			const struct dt_probe_info *p = dtp_by_id(s->dev, sel[i].id);
			int e = errno;
			const char *ld = e == EPERM ? dtp_lockdown() : NULL;

			if (ld != NULL)
				dtu_seterr(err, errlen, "enabling %s: refused by kernel lockdown (%s): "
					   "no kprobes, kernel stacks or user stack copies (--user-stacks "
					   "dwarf) while the kernel is locked down",
					   p ? dtp_name(p, nm, sizeof(nm)) : "probe", ld);
			else
				dtu_seterr(err, errlen, "enabling %s: %s",
					   p ? dtp_name(p, nm, sizeof(nm)) : "probe", strerror(e));
			return -1;
		}
	}
	return 0;
}

static int
dsrc_record(struct dtsrc *s, uint32_t on, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;

	/* triggers first on, last off: none fires unseen while the rings record */
	if (on && d->trigfd >= 0 && ioctl(d->trigfd, DTIOCRECORD, &on) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: start recording the triggers: %s", strerror(errno));
		return -1;
	}
	if (ioctl(dtp_fd(s->dev), DTIOCRECORD, &on) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: %s recording: %s", on ? "start" : "stop",
			   strerror(errno));
		return -1;
	}
	if (!on && d->trigfd >= 0)
		(void)ioctl(d->trigfd, DTIOCRECORD, &on);
	return 0;
}

static int dsrc_start(struct dtsrc *s, char *err, size_t errlen) { return dsrc_record(s, 1, err, errlen); }

static int
dsrc_stop(struct dtsrc *s, char *err, size_t errlen)
{
	((struct src_dt *)s)->stopped = 1;
	return dsrc_record(s, 0, err, errlen);
}

static ssize_t
dsrc_read(struct dtsrc *s, char *buf, size_t len, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	size_t used = 0;
	ssize_t n;

	/* an overwriting ring is read only by a dump (frozen) */
	if (d->flight && !d->dumping)
		return 0;

	/* samples the unwinding workers finished since the last read */
	if (d->pool)
		used = dtunw_pool_collect(d->pool, buf, len / 2);
	n = read(dtp_fd(s->dev), buf + used, len - used);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			if (used)	/* the workers' records first; the error recurs */
				return (ssize_t)used;
			dtu_seterr(err, errlen, "/dev/dt: read: %s", strerror(errno));
			return -1;
		}
		n = 0;
	}
	if (d->track)
		n = (ssize_t)dsrc_take_procs(d, buf + used, (size_t)n);
	used += dsrc_take_copies(d, buf + used, (size_t)n);
	if (d->track)
		dtm_feed_read_end(d->m);
	if (d->pool)
		used = dtunw_pool_read_end(d->pool, buf, used, len, d->stopped);
	return (ssize_t)used;
}

static void
dsrc_ustack_counts(struct dtsrc *s, uint64_t *dwarf, uint64_t *dwarf_trunc, uint64_t *fp_behind)
{
	struct src_dt *d = (struct src_dt *)s;

	*dwarf = *dwarf_trunc = 0;
	if (d->pool)
		dtunw_pool_stats(d->pool, dwarf, dwarf_trunc);
	*fp_behind = d->fp_behind;
}

static void
dsrc_wait(struct dtsrc *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = dtp_fd(s->dev), .events = POLLIN };

	(void)poll(&pfd, 1, timeout_ms);
}

static int
dsrc_counters(struct dtsrc *s, struct dtcap_count *out, uint32_t cap, uint32_t *ncpus,
	    char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	struct dt_cpu_stats cs;

	if (d->ncpus < cap) {
		struct dt_stats *n = realloc(d->cpustats, cap * sizeof(*n));
		if (n == NULL) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		d->cpustats = n;
		d->ncpus = cap;
	}
	memset(d->cpustats, 0, cap * sizeof(*d->cpustats));
	memset(&cs, 0, sizeof(cs));
	cs.dtcs_ncpus = cap;
	cs.dtcs_stats = (uint64_t)(uintptr_t)d->cpustats;
	if (ioctl(dtp_fd(s->dev), DTIOCGCPUSTATS, &cs) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: counters: %s", strerror(errno));
		return -1;
	}
	*ncpus = cs.dtcs_ncpus;
	for (uint32_t i = 0; i < cs.dtcs_ncpus && i < cap; i++) {
		const struct dt_stats *st = &d->cpustats[i];
		/* the proc records kept for the table were never record.c's */
		uint64_t hid = i < d->nhidden ? d->hidden[i] : 0;
		if (hid > st->dtst_read)
			hid = st->dtst_read;
		out[i].produced = st->dtst_produced - hid;
		out[i].read = st->dtst_read - hid;
		/*
		 * A dump counts what it read; everything else fired since enable
		 * is gone from its point of view: overwritten, dropped while
		 * frozen, or read by an earlier dump (source.h).
		 */
		out[i].dropped = st->dtst_dropped + st->dtst_overwritten;
		if (d->flight) {
			uint64_t base = i < d->nreadbase ? d->readbase[i] : 0;
			out[i].read = st->dtst_read - base;
			out[i].dropped += base;
		}
		out[i].skipped = d->cpustats[i].dtst_skipped;
		out[i].recursive = d->cpustats[i].dtst_recursive;
		out[i].nested = d->cpustats[i].dtst_nested;
	}
	return 0;
}

static void
dsrc_clock(struct dtsrc *s, uint64_t *mono, int64_t *real)
{
	struct dt_clock ck;
	struct timespec ts;

	memset(&ck, 0, sizeof(ck));
	if (ioctl(dtp_fd(s->dev), DTIOCGCLOCK, &ck) == 0) {
		*mono = ck.dtck_mono_ns;
		*real = ck.dtck_real_ns;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	*mono = dtu_now_ns();
	*real = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}


/*
 * Freeze: the kernel returns once no event is being written; reads then
 * return what the rings hold, and 0 at the end.  The counters' read
 * before this dump is kept so that the dump counts only its own.
 */
static int
dsrc_dump(struct dtsrc *s, int begin, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	uint32_t v = begin ? 1 : 0;

	if (!d->flight) {
		dtu_seterr(err, errlen, "not a flight recording");
		return -1;
	}
	if (begin) {
		struct dt_cpu_stats cs;
		uint32_t n = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
		uint64_t *rb;
		struct dt_stats *st;

		if (n < 1)
			n = 1;
		for (;;) {
			if ((st = calloc(n, sizeof(*st))) == NULL) {
				dtu_seterr(err, errlen, "out of memory");
				return -1;
			}
			memset(&cs, 0, sizeof(cs));
			cs.dtcs_ncpus = n;
			cs.dtcs_stats = (uint64_t)(uintptr_t)st;
			if (ioctl(dtp_fd(s->dev), DTIOCFREEZE, &v) < 0 ||
			    ioctl(dtp_fd(s->dev), DTIOCGCPUSTATS, &cs) < 0) {
				dtu_seterr(err, errlen, "/dev/dt: freezing the rings: %s", strerror(errno));
				free(st);
				return -1;
			}
			if (cs.dtcs_ncpus <= n)
				break;
			n = cs.dtcs_ncpus;
			free(st);
		}
		if ((rb = realloc(d->readbase, n * sizeof(*rb))) == NULL) {
			free(st);
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		d->readbase = rb;
		d->nreadbase = n;
		for (uint32_t i = 0; i < n; i++)
			rb[i] = st[i].dtst_read;
		free(st);
		d->dumping = 1;
		return 0;
	}
	d->dumping = 0;
	if (ioctl(dtp_fd(s->dev), DTIOCFREEZE, &v) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: thawing the rings: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Each record on the trigger descriptor is one firing of a trigger. */
static uint64_t
dsrc_triggered(struct dtsrc *s)
{
	struct src_dt *d = (struct src_dt *)s;
	char buf[16384];
	ssize_t n;

	if (d->trigfd < 0)
		return 0;
	while ((n = read(d->trigfd, buf, sizeof(buf))) > 0) {
		for (size_t off = 0; off + sizeof(struct dt_rec) <= (size_t)n;) {
			const struct dt_rec *r = (const struct dt_rec *)(buf + off);
			if (r->dtr_size < sizeof(*r) || r->dtr_size > (size_t)n - off)
				break;
			d->ntrig++;
			off += r->dtr_size;
		}
	}
	return d->ntrig;
}

static void
dsrc_close(struct dtsrc *s)
{
	struct src_dt *d = (struct src_dt *)s;

	if (d->m)
		dtm_set_unwinders(d->m, NULL);
	dtunw_pool_free(d->pool);
	free(d->hidden);
	free(d->pend);
	dtp_close(s->dev);
	if (d->trigfd >= 0)
		close(d->trigfd);
	free(d->cpustats);
	free(d->readbase);
	free(d);
}

static const struct dtsrc_ops dsrc_ops = {
	.name = "dt",
	.enable = dsrc_enable,
	.start = dsrc_start,
	.stop = dsrc_stop,
	.read = dsrc_read,
	.wait = dsrc_wait,
	.counters = dsrc_counters,
	.clock = dsrc_clock,
	.ustack_counts = dsrc_ustack_counts,
	.filters_comm = 1,
	.filters_cgroup = 1,
	.dump = dsrc_dump,
	.triggered = dsrc_triggered,
	.close = dsrc_close,
};

struct dtsrc *
dtsrc_dt_new(struct dtp_dev *dev, char *err, size_t errlen)
{
	struct src_dt *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		dtu_seterr(err, errlen, "out of memory");
		dtp_close(dev);
		return NULL;
	}
	d->s.ops = &dsrc_ops;
	d->s.dev = dev;
	d->self = (uint32_t)getpid();
	d->trigfd = -1;
	return &d->s;
}
