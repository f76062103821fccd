/*
 * report_flame.c - the flame graph engine (engine.h dtr_flame_fold and
 * dtr_flame_write), for dtreport flame and diff and dtsh's flame; their
 * command lines are cmd_flame.c's.
 *
 * Two passes.  The first walks the event columns only and counts samples
 * per (comm, kernel stack id, user stack id, process snapshot): no names,
 * no strings, one hash probe per event.  The second names each distinct
 * combination once (kernel stacks memoised per stack id, frames by dtsym's
 * own cache) and folds it into the tree.  That is what keeps 10 M samples
 * fast: symbolization cost grows with distinct stacks, not with events.
 *
 * Folded stack of one sample, root first:
 *	comm;[truncated];user outermost..innermost;--;[truncated];kernel outermost..innermost
 * "[truncated]" appears only on a side whose stack was cut (its outermost
 * frames are missing); "--" only when both sides are present.  Frames other
 * than the innermost of each stack are return addresses, named at pc - 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dtsym.h"
#include "engine.h"
#include "filter.h"
#include "flame.h"
#include "report.h"
#include "util.h"

/* 32 bytes, so the hot part of the table stays in cache; count 0 = free. */
struct agg {
	uint32_t	comm, kstack, ustack, pid, snap;
	uint32_t	tsi;		/* index into prof.ts: the first sample's time */
	uint64_t	count;
};

/* Process snapshot times of pids with more than one snapshot (exec). */
struct psnap {
	uint32_t	pid;
	uint32_t	n;
	uint64_t	*ts;
};

struct prof {
	struct dtcap_reader *r;
	uint8_t		*want;		/* by probe id */
	uint32_t	nwant;
	struct agg	*tab;
	size_t		cap, n;
	struct psnap	*ps;		/* sorted by pid */
	size_t		nps;
	uint64_t	*ts;		/* by agg tsi: picks the process snapshot */
	size_t		nts, capts;
	uint64_t	samples;
	int		oom;
};

static uint64_t agg_hash(uint32_t comm, uint32_t k, uint32_t u, uint32_t pid, uint32_t snap)
{
	uint64_t h = ((uint64_t)k << 32 | u) * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)comm << 32 | pid) * 0xc2b2ae3d27d4eb4fULL;
	h ^= snap * 0x165667b19e3779f9ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return h;
}

static int agg_grow(struct prof *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 4096;
	struct agg *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -1;
	for (size_t i = 0; i < p->cap; i++) {
		struct agg *a = &p->tab[i];
		if (!a->count)
			continue;
		size_t j = agg_hash(a->comm, a->kstack, a->ustack, a->pid, a->snap) & (ncap - 1);
		while (nt[j].count)
			j = (j + 1) & (ncap - 1);
		nt[j] = *a;
	}
	free(p->tab);
	p->tab = nt;
	p->cap = ncap;
	return 0;
}

static int pair_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int build_psnaps(struct prof *p)
{
	size_t n = dtcap_nprocs(p->r), na = 0;
	uint64_t *pairs = malloc((n ? n : 1) * 2 * sizeof(uint64_t));
	struct psnap *all = calloc(n ? n : 1, sizeof(*all));

	if (!pairs || !all) {
		free(pairs);
		free(all);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dtcap_proc *pr = dtcap_proc_at(p->r, i);
		pairs[2 * i] = pr ? pr->pid : 0;
		pairs[2 * i + 1] = pr ? pr->ts : 0;
	}
	/* Sorted by (pid, ts): pids with one snapshot need no lookup at all. */
	qsort(pairs, n, 2 * sizeof(uint64_t), pair_cmp);
	p->ps = all;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && pairs[2 * j] == pairs[2 * i])
			j++;
		if (j - i > 1) {
			uint64_t *ts = malloc((j - i) * sizeof(*ts));
			if (!ts) {
				free(pairs);
				p->nps = na;
				return -1;
			}
			for (size_t k = i; k < j; k++)
				ts[k - i] = pairs[2 * k + 1];
			all[na++] = (struct psnap){ (uint32_t)pairs[2 * i], (uint32_t)(j - i), ts };
		}
		i = j;
	}
	free(pairs);
	p->nps = na;
	return 0;
}

/* Which snapshot of pid is in force at ts (dtcap_proc_find's rule). */
static uint32_t snap_of(const struct prof *p, uint32_t pid, uint64_t ts)
{
	size_t lo = 0, hi = p->nps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ps[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nps || p->ps[lo].pid != pid)
		return 0;
	const struct psnap *s = &p->ps[lo];
	uint32_t k = 0;
	while (k < s->n && s->ts[k] <= ts)
		k++;
	return k ? k - 1 : 0;
}

static int prof_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct prof *p = ctx;
	uint32_t probe = b->probe[i];

	if (probe >= p->nwant || !p->want[probe])
		return 0;
	uint32_t comm = b->comm[i], k = b->kstack[i], u = b->ustack[i];
	uint32_t pid = 0, snap = 0;
	if (u) {
		/* Only user frames depend on the process. */
		pid = b->pid[i];
		if (p->nps)	/* then the TS column was decoded */
			snap = snap_of(p, pid, b->ts[i]);
	}
	if ((p->n + 1) * 2 > p->cap && agg_grow(p)) {
		p->oom = 1;
		return 1;
	}
	/* The table outgrows L2 on big captures and the loop is bound by its
	 * misses: fetch the slot of a row a few ahead while this one works
	 * (snapshot 0 is right for nearly every row). */
	if (i + 8 < b->rows) {
		uint32_t i2 = i + 8, u2 = b->ustack[i2];
		__builtin_prefetch(&p->tab[agg_hash(b->comm[i2], b->kstack[i2], u2,
						    u2 ? b->pid[i2] : 0, 0) & (p->cap - 1)]);
	}
	size_t j = agg_hash(comm, k, u, pid, snap) & (p->cap - 1);
	for (;;) {
		struct agg *a = &p->tab[j];
		if (!a->count) {
			if (DT_GROW(p->ts, p->capts, p->nts, 1, 4096)) {
				p->oom = 1;
				return 1;
			}
			p->ts[p->nts] = b->ts ? b->ts[i] : 0;
			*a = (struct agg){ comm, k, u, pid, snap, (uint32_t)p->nts++, 1 };
			p->n++;
			break;
		}
		if (a->comm == comm && a->kstack == k && a->ustack == u && a->pid == pid &&
		    a->snap == snap) {
			a->count++;
			break;
		}
		j = (j + 1) & (p->cap - 1);
	}
	p->samples++;
	return 0;
}

static enum flame_kind kind_of(const char *origin, int kernel)
{
	if (!strcmp(origin, "module"))
		return FLAME_MODULE;
	return kernel ? FLAME_KERNEL : FLAME_USER;
}

/* Interned names of a stack's frames, outermost first, memoised by id. */
struct kmemo {
	uint32_t	*off;		/* by stack id: offset + 1 into ids */
	uint32_t	*len;
	uint32_t	*ids;
	size_t		n, cap;
};

static int push_id(struct kmemo *m, uint32_t id)
{
	if (DT_GROW(m->ids, m->cap, m->n, 1, 4096))
		return -1;
	m->ids[m->n++] = id;
	return 0;
}

/* Append the named frames of stack id (outermost first) to buf. */
static int name_stack(struct flame *fl, struct dtsym *sym, const struct dtcap_reader *r,
		      uint32_t id, int kernel, uint32_t pid, uint64_t ts, uint32_t *buf,
		      unsigned *nb, uint32_t trunc_id)
{
	unsigned n;
	int kflag, trunc;
	const uint64_t *pcs = dtcap_stack(r, id, &n, &kflag, &trunc);

	if (!pcs)
		return 0;	/* an unknown id: the writer's loss, name nothing */
	if (n > DTCAP_MAXFRAMES) {
		/* Not from a real recorder; keep the innermost frames. */
		n = DTCAP_MAXFRAMES;
		trunc = 1;
	}
	if (trunc)
		buf[(*nb)++] = trunc_id;
	for (unsigned k = n; k-- > 0;) {
		/* Every frame but the innermost is a return address: it follows a
		 * call, and after a call to a noreturn function it is already the
		 * next function's first byte.  Name pc - 1, as perf does; but show
		 * unnamed addresses as they are, not one byte off. */
		uint64_t pc = k && pcs[k] ? pcs[k] - 1 : pcs[k];
		const char *nm = dtsym_name(sym, pc, kernel, pid, ts);
		const char *org = dtsym_origin(sym, pc, kernel, pid, ts);
		if (pc != pcs[k] && (!strcmp(org, "unknown") || strstr(nm, "+0x"))) {
			nm = dtsym_name(sym, pcs[k], kernel, pid, ts);
			org = dtsym_origin(sym, pcs[k], kernel, pid, ts);
		}
		int64_t fid = flame_intern(fl, nm, kind_of(org, kernel));
		if (fid < 0)
			return -1;
		buf[(*nb)++] = (uint32_t)fid;
	}
	return 0;
}

int dtr_flame_fold(const struct dtr_cap *c, struct dtf_filter *filt,
		   const struct dtr_flame_opts *fo, struct flame *fl, int side, uint64_t *nsamples,
		   char *probedesc, size_t pdlen, volatile sig_atomic_t *cancel)
{
	char err[512];
	struct prof p = { 0 };
	struct dtsym *sym = c->sym, *own_sym = NULL;
	struct kmemo km = { 0 };
	uint32_t *buf = NULL;
	const char *cmd = fo->cmd, *path = c->path;
	int ret = DTR_EXIT_ERROR;

	p.r = c->r;
	if (dtf_resolve(filt, p.r, err, sizeof(err))) {
		dtr_err(cmd, "%s: %s", path, err);
		goto out;
	}

	/* Samples are the timer probes' events unless --probe says otherwise. */
	size_t np = dtcap_nprobes(p.r);
	p.nwant = dtcap_max_probe_id(p.r) + 1;
	p.want = calloc(p.nwant, 1);
	if (!p.want)
		goto oom;
	size_t nwanted = 0, ntimer = 0;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(p.r, i);
		if (pr && (pr->flags & DT_PF_TIMER))
			ntimer++;
	}
	probedesc[0] = 0;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(p.r, i);
		if (!pr)
			continue;
		int w = filt->probe_ok ? pr->id < filt->nprobe_ok && filt->probe_ok[pr->id]
			: ntimer ? !!(pr->flags & DT_PF_TIMER) : 1;
		if (w) {
			p.want[pr->id] = 1;
			size_t l = strlen(probedesc);
			if (nwanted < 4)
				snprintf(probedesc + l, pdlen - l, "%s%s", nwanted ? ", " : "",
					 pr->name);
			else if (nwanted == 4)
				snprintf(probedesc + l, pdlen - l, ", ...");
			nwanted++;
		}
	}
	if (!filt->probe_ok && !ntimer && np)
		dtr_err(cmd, "%s: no profile/interval probe recorded; "
			"counting the events of every probe (choose with --probe)", path);

	if (build_psnaps(&p))
		goto oom;
	if (agg_grow(&p))
		goto oom;
	/* Times matter only to choose between snapshots of a pid that exec'd
	 * (and to filters, which add the column themselves): with one
	 * snapshot per pid, time 0 finds it, and the column is not decoded. */
	unsigned cols = DTCAP_COL_PROBE | DTCAP_COL_COMM | DTCAP_COL_KSTACK |
			DTCAP_COL_USTACK | DTCAP_COL_PID | (p.nps ? DTCAP_COL_TS : 0);
	int sr = dtf_scan(p.r, filt, cols, prof_row, &p, cancel,
			  dtr_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err));
	if (p.oom)
		goto oom;
	if (sr) {
		dtr_err(cmd, "%s", err);
		goto out;
	}
	dtr_note_empty(cmd, path, p.samples, dtf_active(filt));

	/* Second pass: name each distinct combination once. */
	if (!sym && !(sym = own_sym = dtsym_open(p.r)))
		goto oom;
	uint32_t nst = dtcap_nstacks(p.r);
	km.off = calloc((size_t)nst + 1, sizeof(uint32_t));
	km.len = calloc((size_t)nst + 1, sizeof(uint32_t));
	buf = malloc((2 * DTCAP_MAXFRAMES + 8) * sizeof(uint32_t));
	if (!km.off || !km.len || !buf)
		goto oom;
	int64_t trunc_id = flame_intern(fl, "[truncated]", FLAME_SPECIAL);
	int64_t sep_id = flame_intern(fl, "--", FLAME_SPECIAL);
	int64_t nocomm_id = flame_intern(fl, "[unknown]", FLAME_SPECIAL);
	int64_t nostack_id = flame_intern(fl, "[no stack]", FLAME_SPECIAL);
	if (trunc_id < 0 || sep_id < 0 || nocomm_id < 0 || nostack_id < 0)
		goto oom;
	for (size_t i = 0; i < p.cap; i++) {
		const struct agg *a = &p.tab[i];
		unsigned nb = 0;
		if (!a->count)
			continue;
		if ((i & 255) == 0 && cancel && *cancel) {
			dtr_err(cmd, "interrupted");
			goto out;
		}
		const char *c = dtcap_comm(p.r, a->comm);
		int64_t cid = c && c[0] ? flame_intern(fl, c, FLAME_SPECIAL) : nocomm_id;
		if (cid < 0)
			goto oom;
		if (!fo->no_comm)
			buf[nb++] = (uint32_t)cid;
		unsigned ustart = nb;
		if (a->ustack && fo->only != DTR_ONLY_KERNEL &&
		    name_stack(fl, sym, p.r, a->ustack, 0, a->pid, p.ts[a->tsi], buf, &nb,
			       (uint32_t)trunc_id))
			goto oom;
		if (a->kstack && a->kstack <= nst && fo->only != DTR_ONLY_USER) {
			if (!km.off[a->kstack]) {
				unsigned kn = 0;
				uint32_t kb[DTCAP_MAXFRAMES + 2];
				if (name_stack(fl, sym, p.r, a->kstack, 1, 0, 0, kb, &kn,
					       (uint32_t)trunc_id))
					goto oom;
				km.off[a->kstack] = (uint32_t)km.n + 1;
				km.len[a->kstack] = kn;
				for (unsigned k = 0; k < kn; k++)
					if (push_id(&km, kb[k]))
						goto oom;
			}
			if (nb > ustart && km.len[a->kstack])
				buf[nb++] = (uint32_t)sep_id;
			memcpy(buf + nb, km.ids + km.off[a->kstack] - 1,
			       km.len[a->kstack] * sizeof(uint32_t));
			nb += km.len[a->kstack];
		}
		/* A sample is counted even when nothing of it is left to name. */
		if (!nb)
			buf[nb++] = (uint32_t)nostack_id;
		if (fo->reverse)
			for (unsigned x = 0, y = nb - 1; x < y; x++, y--) {
				uint32_t t = buf[x];
				buf[x] = buf[y];
				buf[y] = t;
			}
		if (flame_add(fl, buf, nb, a->count, side))
			goto oom;
	}
	*nsamples = p.samples;
	ret = 0;
	goto out;
oom:
	dtr_err(cmd, "%s: out of memory", path);
	ret = DTR_EXIT_ERROR;
out:
	free(buf);
	free(km.off);
	free(km.len);
	free(km.ids);
	dtsym_close(own_sym);
	for (size_t i = 0; i < p.nps; i++)
		free(p.ps[i].ts);
	free(p.ps);
	free(p.tab);
	free(p.ts);
	free(p.want);
	return ret;
}


void dtr_flame_opts_init(struct dtr_flame_opts *o, const char *cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->minwidth = 0.1;
	o->width = 1200;
}

void dtr_flame_subtitle(char *buf, size_t len, const struct dtr_flame_opts *o, int ncaps,
			const char *path, uint64_t n, const char *probes, int filtered)
{
	if (ncaps > 1)
		snprintf(buf, len, "%d captures: %" PRIu64 " %s of %s%s", ncaps, n,
			 o->countname ? o->countname : "samples", probes[0] ? probes : "no probe",
			 filtered ? " (filtered)" : "");
	else
		snprintf(buf, len, "%s: %" PRIu64 " %s of %s%s", path, n,
			 o->countname ? o->countname : "samples", probes[0] ? probes : "no probe",
			 filtered ? " (filtered)" : "");
}

int dtr_flame_write(const struct flame *fl, const struct dtr_flame_opts *fo, const char *sub,
		    int diff, FILE *out)
{
	const char *title = fo->title ? fo->title : diff ? "Differential Flame Graph" :
			    fo->inverted ? "Icicle Graph" : "Flame Graph";
	struct flame_svg_opts so = {
		.title = title,
		.subtitle = sub, .width = fo->width ? fo->width : 1200, .minwidth = fo->minwidth,
		.inverted = fo->inverted, .diff = diff,
		.countname = fo->countname ? fo->countname : "samples",
		.frameheight = fo->height, .fontsize = fo->fontsize, .colors = fo->colors,
	};
	errno = 0;
	return fo->folded ? flame_write_folded(fl, out, diff) : flame_write_svg(fl, out, &so);
}

int dtr_flame(const struct dtr_cap *c, struct dtf_filter *f, const struct dtr_flame_opts *o,
	      FILE *out, const char *outname, volatile sig_atomic_t *cancel)
{
	char probes[256], sub[400];
	uint64_t n = 0;
	struct flame *fl = flame_new();
	int ret;

	if (!fl) {
		dtr_err(o->cmd, "out of memory");
		return DTR_EXIT_ERROR;
	}
	if ((ret = dtr_flame_fold(c, f, o, fl, 0, &n, probes, sizeof(probes), cancel)) == 0) {
		dtr_flame_subtitle(sub, sizeof(sub), o, 1, c->path, n, probes, dtf_active(f));
		if (dtr_flame_write(fl, o, sub, 0, out)) {
			dtr_err(o->cmd, "%s: %s", outname, errno ? strerror(errno) : "write error");
			ret = DTR_EXIT_ERROR;
		}
	}
	flame_free(fl);
	return ret;
}
