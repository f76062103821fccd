/*
 * span_model.c - entry/return pairs of a capture's function-like probes
 * (engine.h rpt_spans_build): syscall:F:entry/return, kprobe:F:entry/
 * return, uprobe:...:entry/return.  The events of those probes are
 * collected on one block scan, put in order by thread and time (blocks hold
 * per-CPU batches), then paired per thread with a stack of open entries:
 * a return closes the innermost open entry of its probe, so nesting and
 * recursion pair up; entries it passes over lost their return, and a
 * return without an open entry lost its entry.  Both are counted.
 *
 * The collection runs on the scan pool (scan_pool.h): each worker keeps the
 * paired probes' events of its run of blocks, placed where the block
 * summaries put them or appended in block order, the list one walk would
 * have made, so the pairing below
 * (one thread: a thread's entry and return can lie in any two blocks)
 * sees the same events in the same order for any --threads.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
#include "report.h"
#include "scan_pool.h"

/* 32 bytes: millions of them; a return's value lives apart */
struct pev {
	uint64_t	ts;
	/* tid: once threads are numbered, the thread's index in th[] */
	uint32_t	tid, pid, comm, probe;	/* probe: the entry's id */
	uint8_t		ret_side;	/* a return */
	uint8_t		nargs;		/* an entry's, at most RPT_SPAN_ARGS */
	uint32_t	err;		/* a return's errno */
};
_Static_assert(sizeof(struct pev) == 32, "struct pev: 32 bytes");

struct pbuild {
	uint32_t	*entry_of;	/* by probe id: the entry's id, 0: not paired */
	uint8_t		*is_ret;
	uint32_t	np;
	int		want_args;	/* RPT_SPANS_ARGS */
	uint32_t	maxtid;
	size_t		nret;		/* returns among ev */
	struct pev	*ev;
	size_t		n, cap;
	uint64_t	(*args)[RPT_SPAN_ARGS];	/* want_args: by event */
	size_t		acap;
	int		want_ret;	/* not RPT_SPANS_NORET */
	int64_t		*ret;		/* want_ret: a return's value, by event */
	size_t		rcap;
	int		oom;
	/*
	 * Placed (an unfiltered scan of a capture with block summaries): every
	 * worker writes block blk's events into the caller's arrays at
	 * place[blk] .. place[blk + 1], counted from the summaries, so the
	 * list is in block order with nothing appended or copied.  lim: the
	 * end of the current block's room (0: not placed, the arrays grow).
	 */
	const size_t	*place;		/* [I] by block, nblocks + 1 */
	size_t		lim;
	int		misplaced;	/* a block held another count than its summary */
};

/* "P:F:entry" and "P:F:return" share "P:F". */
static int
base_len(const char *name, const char *suffix)
{
	size_t l = strlen(name), s = strlen(suffix);
	if (l <= s + 1 || strcmp(name + l - s, suffix) != 0 || name[l - s - 1] != ':')
		return -1;
	return (int)(l - s - 1);
}

/* One paired probe's event: a[j] is its argument slot j (j < na). */
static int
add_event(struct pbuild *pb, const struct dtcap_block *b, uint32_t i, uint32_t p,
	  const uint64_t *a, unsigned na)
{
	if (pb->place) {
		if (pb->n >= pb->lim) {
			pb->misplaced = 1;
			return 1;
		}
	} else if (DT_GROW(pb->ev, pb->cap, pb->n, 1, 4096) ||
		   (pb->want_args && DT_GROW(pb->args, pb->acap, pb->n, 1, 4096)) ||
		   (pb->want_ret && DT_GROW(pb->ret, pb->rcap, pb->n, 1, 4096))) {
		pb->oom = 1;
		return 1;
	}
	struct pev *e = &pb->ev[pb->n++];
	e->ts = b->ts[i];
	e->tid = b->tid[i];
	if (e->tid > pb->maxtid)
		pb->maxtid = e->tid;
	e->pid = b->pid[i];
	e->comm = b->comm[i];
	e->probe = pb->entry_of[p];
	e->ret_side = pb->is_ret[p];
	pb->nret += e->ret_side;
	e->nargs = 0;
	e->err = 0;
	if (!e->ret_side && pb->want_args) {
		e->nargs = (uint8_t)(na < RPT_SPAN_ARGS ? na : RPT_SPAN_ARGS);
		memset(pb->args[pb->n - 1], 0, sizeof(pb->args[0]));
		memcpy(pb->args[pb->n - 1], a, e->nargs * sizeof(uint64_t));
	}
	if (pb->want_ret) {
		pb->ret[pb->n - 1] = e->ret_side && na >= 2 ? (int64_t)a[0] : 0;
		e->err = e->ret_side && na >= 2 ? (uint32_t)a[1] : 0;
	}
	return 0;
}

/* A row of a filtered scan (arguments row-major). */
static int
span_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct pbuild *pb = ctx;
	uint32_t p = b->probe[i];

	if (p >= pb->np || !pb->entry_of[p])
		return 0;
	if (!b->args)	/* not decoded: neither arguments nor values wanted */
		return add_event(pb, b, i, p, NULL, 0);
	return add_event(pb, b, i, p, &b->args[(size_t)i * DTCAP_MAXARGS], b->nargs[i]);
}

/*
 * A whole block of an unfiltered scan, its arguments by slot: no row-major
 * array filled for the rows (most) that are not paired probes'.
 */
static int
span_block(void *ctx, const struct dtcap_block *b, size_t blk)
{
	struct pbuild *pb = ctx;
	size_t cur[RPT_SPAN_ARGS] = { 0 };
	uint64_t a[RPT_SPAN_ARGS];

	if (pb->place) {
		pb->n = pb->place[blk];
		pb->lim = pb->place[blk + 1];
	}
	for (uint32_t i = 0; i < b->rows; i++) {
		uint32_t p = b->probe[i];
		if (!b->nargs) {	/* not decoded: neither arguments nor values wanted */
			if (p < pb->np && pb->entry_of[p] && add_event(pb, b, i, p, NULL, 0))
				return 1;
			continue;
		}
		/* without entry arguments only slots 0 and 1 are decoded (DTCAP_COL_ARGS2) */
		unsigned lim = pb->want_args ? RPT_SPAN_ARGS : 2;
		unsigned na = b->nargs[i], nk = na < lim ? na : lim;
		if (p < pb->np && pb->entry_of[p]) {
			for (unsigned j = 0; j < nk; j++)
				a[j] = b->argslot[j][cur[j]];
			if (add_event(pb, b, i, p, a, na))
				return 1;
		}
		for (unsigned j = 0; j < nk; j++)
			cur[j]++;
	}
	if (pb->place && pb->n != pb->lim) {
		pb->misplaced = 1;
		return 1;
	}
	return 0;
}

/*
 * A worker's collection: a pbuild of its own sharing the caller's probe
 * tables (read only).  Room for every event of the capture in address
 * space only, as below: pages no event reaches are never touched, and the
 * arrays are never copied as they grow.
 */
static void *
span_part_new(void *ctx)
{
	const struct pbuild *m = ctx;
	struct pbuild *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->entry_of = m->entry_of;
	p->is_ret = m->is_ret;
	p->np = m->np;
	p->want_args = m->want_args;
	p->want_ret = m->want_ret;
	if (m->place) {
		/* the caller's arrays, each worker in its blocks' places */
		p->place = m->place;
		p->ev = m->ev;
		p->args = m->args;
		p->ret = m->ret;
		return p;
	}
	size_t room = m->cap;	/* the caller's wish: the capture's events */
	if (room && (p->ev = malloc(room * sizeof(*p->ev))) != NULL) {
		p->cap = room;
		if (p->want_ret && (p->ret = malloc(room * sizeof(*p->ret))) != NULL)
			p->rcap = room;
	}
	return p;
}

static void
span_part_free(void *ctx, void *part)
{
	struct pbuild *p = part;

	(void)ctx;
	if (!p->place) {
		free(p->ev);
		free(p->args);
		free(p->ret);
	}
	free(p);
}

static int
span_part_row(void *part, const struct dtcap_block *b, uint32_t row, char *err, size_t errlen)
{
	if (span_row(part, b, row) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return 1;
}

#define MISPLACED	"block summary disagrees with its block"

static int
span_part_block(void *part, const struct dtcap_block *b, size_t blk, char *err, size_t errlen)
{
	if (span_block(part, b, blk) == 0)
		return 0;
	snprintf(err, errlen, "%s", ((struct pbuild *)part)->misplaced ? MISPLACED : "out of memory");
	return 1;
}

#define SWAP(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)

/* Partials in block order: the first non-empty one's arrays are taken
 * over (one thread copies nothing), the others appended and freed. */
static int
span_merge(void *ctx, void *part)
{
	struct pbuild *m = ctx, *p = part;

	if (p->maxtid > m->maxtid)
		m->maxtid = p->maxtid;
	m->nret += p->nret;
	if (m->place)
		return 0;	/* its events are in place already */
	if (p->n == 0)
		return 0;
	if (m->n == 0) {
		SWAP(m->ev, p->ev);
		SWAP(m->cap, p->cap);
		SWAP(m->args, p->args);
		SWAP(m->acap, p->acap);
		SWAP(m->ret, p->ret);
		SWAP(m->rcap, p->rcap);
		SWAP(m->n, p->n);
		return 0;
	}
	if (DT_GROW(m->ev, m->cap, m->n, p->n, 4096) ||
	    (m->want_args && DT_GROW(m->args, m->acap, m->n, p->n, 4096)) ||
	    (m->want_ret && DT_GROW(m->ret, m->rcap, m->n, p->n, 4096)))
		return -1;
	memcpy(m->ev + m->n, p->ev, p->n * sizeof(*p->ev));
	if (m->want_args)
		memcpy(m->args + m->n, p->args, p->n * sizeof(*p->args));
	if (m->want_ret)
		memcpy(m->ret + m->n, p->ret, p->n * sizeof(*p->ret));
	m->n += p->n;
	/* freed now, not after the last merge: the peak is the list and one
	 * run, not the list and every run */
	free(p->ev), free(p->args), free(p->ret);
	p->ev = NULL, p->args = NULL, p->ret = NULL;
	p->n = 0;
	return 0;
}

/*
 * Placing (pbuild.place): each block's paired events counted from its
 * summary, the blocks the scan skips as none, and the arrays allocated
 * once for them all.  0 with pb placed; -1 when a block the scan reads has
 * no summary (older captures) or the memory cannot be had: then the
 * workers append, as they do for filtered scans.
 */
static int
span_place(const struct dtcap_reader *r, const struct flt_filter *f, struct pbuild *pb)
{
	size_t nb = dtcap_nblocks(r), *pl = malloc((nb + 1) * sizeof(*pl));
	struct dtcap_blocksum bs;

	if (pl == NULL)
		return -1;
	pl[0] = 0;
	for (size_t i = 0; i < nb; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		size_t k = 0;
		if (bi && !flt_block_skip(f, bi)) {
			if (dtcap_block_summary(r, i, &bs) != 1) {
				free(pl);
				return -1;
			}
			/* the reader checked these add up to the block's rows */
			for (uint32_t j = 0; j < bs.nprobe; j++)
				if (bs.probe[2 * j] < pb->np && pb->entry_of[bs.probe[2 * j]])
					k += (size_t)bs.probe[2 * j + 1];
		}
		pl[i + 1] = pl[i] + k;
	}
	size_t n = pl[nb] ? pl[nb] : 1;
	pb->ev = malloc(n * sizeof(*pb->ev));
	pb->args = pb->want_args ? malloc(n * sizeof(*pb->args)) : NULL;
	pb->ret = pb->want_ret ? malloc(n * sizeof(*pb->ret)) : NULL;
	if (!pb->ev || (pb->want_args && !pb->args) || (pb->want_ret && !pb->ret)) {
		free(pb->ev), free(pb->args), free(pb->ret);
		pb->ev = NULL, pb->args = NULL, pb->ret = NULL;
		free(pl);
		return -1;
	}
	pb->cap = pb->acap = pb->rcap = pl[nb];
	pb->place = pl;
	return 0;
}

/* A thread's pairing state. */
struct pth {
	uint32_t	tid;
	int		disordered;	/* its events are not in time order in the file */
	uint64_t	last;		/* its latest time so far */
	size_t		*open;		/* its open entries (event indices), innermost last */
	size_t		nopen, ocap;
};

/* Threads by tid: a table for the usual ones (pid_max is at most 2^22),
 * a hash for the rest (perf's -1 for an exiting task, hand-made files). */
#define TMAP_MAX	(1u << 22)

static uint64_t
pth_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct pth *)ctx)[e].tid);
}

/* Event i of thread p, in the thread's time order.  0, or -1 on ENOMEM. */
static int
pair_event(const struct pbuild *pb, struct pth *p, size_t i, struct rpt_spans *out)
{
	const struct pev *e = &pb->ev[i];

	if (!e->ret_side) {
		if (DT_GROW(p->open, p->ocap, p->nopen, 1, 16))
			return -1;
		p->open[p->nopen++] = i;
		return 0;
	}
	size_t k = p->nopen;
	while (k > 0 && pb->ev[p->open[k - 1]].probe != e->probe)
		k--;
	if (k == 0)
		return rpt_spans_unmatched(out, &e->probe, p->tid, e->pid, e->comm, 0);
	/* entries inside it that never returned */
	for (size_t j = k; j < p->nopen; j++) {
		const struct pev *u = &pb->ev[p->open[j]];
		if (rpt_spans_unmatched(out, &u->probe, p->tid, u->pid, u->comm, 1))
			return -1;
	}
	const struct pev *s = &pb->ev[p->open[k - 1]];
	if (DT_GROW(out->v, out->cap, out->n, 1, 4096) ||
	    (pb->want_args && (DT_GROW(out->args, out->acap, out->n, 1, 4096) ||
			       DT_GROW(out->nargs, out->ncap, out->n, 1, 4096))))
		return -1;
	if (pb->want_args) {
		memcpy(out->args[out->n], pb->args[p->open[k - 1]], sizeof(out->args[0]));
		out->nargs[out->n] = s->nargs;
	}
	out->v[out->n++] = (struct rpt_span){
		.start = s->ts, .end = e->ts, .tid = p->tid, .pid = s->pid ? s->pid : e->pid,
		.comm = s->comm ? s->comm : e->comm, .probe = e->probe,
		.ret = pb->want_ret ? pb->ret[i] : 0, .err = e->err,
	};
	p->nopen = k - 1;
	return 0;
}

int
rpt_spans_build(const struct rpt_cap *c, const char *cmd, struct flt_filter *f,
		const char *glob, unsigned flags, struct rpt_spans *out,
		volatile sig_atomic_t *cancel)
{
	struct pbuild pb = { .want_args = !!(flags & RPT_SPANS_ARGS),
			     .want_ret = !(flags & RPT_SPANS_NORET) };
	int syscalls_only = !!(flags & RPT_SPANS_SYSCALLS);
	struct rpt_key *ord = NULL;
	struct pth *th = NULL;
	size_t nth = 0, thcap = 0;
	uint32_t *tmap = NULL;
	struct dt_htab bigix = { 0 };
	char err[512];
	int ret = RPT_EXIT_ERROR, npairs = 0;
	size_t nprobes = dtcap_nprobes(c->r);
	struct { uint32_t id; int ret; int len; const char *name; } *pr = NULL;

	memset(out, 0, sizeof(*out));
	if (flt_resolve(f, c->r, err, sizeof(err))) {
		rpt_err(cmd, "%s: %s", c->path, err);
		return RPT_EXIT_ERROR;
	}
	pb.np = dtcap_max_probe_id(c->r) + 1;
	pb.entry_of = calloc(pb.np, sizeof(*pb.entry_of));
	pb.is_ret = calloc(pb.np, 1);
	pr = calloc(nprobes + 1, sizeof(*pr));
	if (!pb.entry_of || !pb.is_ret || !pr)
		goto oom;
	for (size_t i = 0; i < nprobes; i++) {
		const struct dtcap_probe *p = dtcap_probe_at(c->r, i);
		int l;
		pr[i].id = p->id;
		pr[i].name = p->name;
		if ((l = base_len(p->name, "entry")) < 0 && (l = base_len(p->name, "return")) >= 0)
			pr[i].ret = 1;
		pr[i].len = l;
	}
	/* each return finds its entry by name */
	for (size_t i = 0; i < nprobes; i++) {
		if (!pr[i].ret || pr[i].len < 0)
			continue;
		if (syscalls_only && strncmp(pr[i].name, "syscall:", 8) != 0)
			continue;
		for (size_t j = 0; j < nprobes; j++) {
			if (pr[j].ret || pr[j].len != pr[i].len ||
			    strncmp(pr[j].name, pr[i].name, (size_t)pr[i].len) != 0)
				continue;
			if (glob) {
				char base[DTCAP_PROBENAMELEN];
				snprintf(base, sizeof(base), "%.*s", pr[j].len, pr[j].name);
				if (fnmatch(glob, base, 0) != 0 && fnmatch(glob, pr[j].name, 0) != 0 &&
				    fnmatch(glob, pr[i].name, 0) != 0)
					break;
			}
			pb.entry_of[pr[i].id] = pr[j].id;
			pb.is_ret[pr[i].id] = 1;
			pb.entry_of[pr[j].id] = pr[j].id;
			npairs++;
			break;
		}
	}
	if (npairs == 0) {
		rpt_err(cmd, "%s: no %sentry and return probes%s%s%s: record both, e.g. dtrec -e "
			"'syscall:*:entry' -e 'syscall:*:return'", c->path, syscalls_only ? "syscall " : "",
			glob ? " matching '" : "", glob ? glob : "", glob ? "'" : "");
		ret = RPT_EXIT_ERROR;
		goto out;
	}
	/*
	 * Room for every event of the capture, in address space only (each
	 * worker's, span_part_new): pages no event reaches are never touched,
	 * and the array is not copied as it grows (a copy per doubling was a
	 * fifth of a large pairing).  If the room cannot be had, it grows as
	 * usual.  pb.cap only carries the wish to the workers here.
	 */
	uint64_t nev = dtcap_nevents(c->r);
	if (nev > 4096 && nev < ((uint64_t)1 << 31))
		pb.cap = (size_t)nev;
	unsigned cols = DTCAP_COL_TS | DTCAP_COL_TID | DTCAP_COL_PID | DTCAP_COL_COMM |
			DTCAP_COL_PROBE;
	int need_args = pb.want_args || pb.want_ret;
	if (need_args)
		cols |= DTCAP_COL_ARGS;
	const char *what = rpt_shell ? "dtsh: reading" : "dtreport: reading";
	struct dtsp_job job = { .part_new = span_part_new, .part_free = span_part_free,
				.merge = span_merge };
	if (flt_active(f)) {
		job.row = span_part_row;
	} else {
		job.block = span_part_block;
		if (need_args)
			cols |= pb.want_args ? DTCAP_COL_ARGSLOTS :
				DTCAP_COL_ARGSLOTS | DTCAP_COL_ARGS2;
	}
	int sr;
	size_t wish = pb.cap;
	if (job.block && span_place(c->r, f, &pb) == 0) {
		sr = dtsp_scan(c->r, f, cols, &job, &pb, cancel, what, err, sizeof(err));
		if (sr == 0) {
			pb.n = pb.cap;
		} else if (strcmp(err, MISPLACED) == 0) {
			/* a summary that adds up but is not this block's counts
			 * (a hand-made or damaged file): appended, as without
			 * summaries */
			free(pb.ev), free(pb.args), free(pb.ret);
			free((size_t *)pb.place);
			pb.ev = NULL, pb.args = NULL, pb.ret = NULL, pb.place = NULL;
			pb.n = pb.acap = pb.rcap = pb.nret = 0;
			pb.maxtid = 0;
			pb.cap = wish;
			sr = 1;
		}
		if (sr == 0 || strcmp(err, MISPLACED) != 0)
			goto scanned;
	}
	sr = dtsp_scan(c->r, f, cols, &job, &pb, cancel, what, err, sizeof(err));
	pb.cap = pb.n ? pb.cap : 0;	/* no array of the workers' taken: the wish only */
scanned:
	if (sr) {
		if (strcmp(err, "out of memory") == 0)
			goto oom;	/* said with the capture's name, as before */
		rpt_err(cmd, "%s", err);
		goto out;
	}
	/*
	 * Per thread, in file order: a thread's events are in time order there
	 * unless it moved between CPUs whose batches overlap in time.  Those
	 * threads' events are put in time order first; the others are paired as they come, which reads the events once, in
	 * order, and sorts nothing.
	 */
	if ((tmap = calloc((size_t)(pb.maxtid < TMAP_MAX ? pb.maxtid : TMAP_MAX) + 1,
			   sizeof(*tmap))) == NULL)
		goto oom;
	for (size_t i = 0; i < pb.n; i++) {
		struct pev *e = &pb.ev[i];
		uint32_t t = 0, e2;
		uint64_t h = dt_htab_hash_int(e->tid);
		if (e->tid <= TMAP_MAX) {
			t = tmap[e->tid];
		} else {
			for (size_t j = dt_htab_first(&bigix, h); (e2 = dt_htab_at(&bigix, j)) != DT_HTAB_NONE;
			     j = dt_htab_next(&bigix, j))
				if (th[e2].tid == e->tid) {
					t = e2 + 1;
					break;
				}
		}
		if (t == 0) {
			if (DT_GROW(th, thcap, nth, 1, 64))
				goto oom;
			th[nth] = (struct pth){ .tid = e->tid };
			t = (uint32_t)++nth;
			if (e->tid <= TMAP_MAX)
				tmap[e->tid] = t;
			else if (dt_htab_add(&bigix, h, t - 1, pth_rehash, th))
				goto oom;
		}
		struct pth *p = &th[t - 1];
		if (e->ts < p->last)
			p->disordered = 1;
		else
			p->last = e->ts;
		/* from here on an event names its thread by index (th[].tid) */
		e->tid = t - 1;
	}
	/* a pair per return at most: the pairs' array is never copied either */
	if (pb.nret > 4096 && (out->v = malloc(pb.nret * sizeof(*out->v))) != NULL) {
		out->cap = pb.nret;
	}
	size_t ndis = 0;
	for (size_t i = 0; i < pb.n; i++) {
		struct pth *p = &th[pb.ev[i].tid];
		if ((i & 0xffff) == 0 && cancel && *cancel) {
			rpt_err(cmd, "interrupted");
			goto out;
		}
		if (p->disordered) {
			ndis++;
			continue;
		}
		if (pair_event(&pb, p, i, out))
			goto oom;
	}
	if (ndis) {
		if ((ord = malloc(ndis * sizeof(*ord))) == NULL)
			goto oom;
		size_t k = 0;
		for (size_t i = 0; i < pb.n; i++)
			if (th[pb.ev[i].tid].disordered)
				ord[k++] = (struct rpt_key){ pb.ev[i].ts, i };
		if (rpt_key_sort(ord, ndis))
			goto oom;
		for (size_t x = 0; x < ndis; x++)
			if (pair_event(&pb, &th[pb.ev[ord[x].i].tid], ord[x].i, out))
				goto oom;
	}
	/* what is still open never returned */
	for (size_t t = 0; t < nth; t++)
		for (size_t k = 0; k < th[t].nopen; k++) {
			const struct pev *e = &pb.ev[th[t].open[k]];
			if (rpt_spans_unmatched(out, &e->probe, th[t].tid, e->pid, e->comm, 1))
				goto oom;
		}
	ret = 0;
	goto out;
oom:
	rpt_err(cmd, "%s: out of memory", c->path);
	ret = RPT_EXIT_ERROR;
out:
	if (ret)
		rpt_spans_free(out);
	free(pr);
	free(ord);
	for (size_t t = 0; t < nth; t++)
		free(th[t].open);
	free(th);
	free(tmap);
	dt_htab_free(&bigix);
	free(pb.entry_of);
	free(pb.is_ret);
	free((size_t *)pb.place);
	free(pb.ev);
	free(pb.args);
	free(pb.ret);
	return ret;
}

int
rpt_spans_unmatched(struct rpt_spans *s, const uint32_t *probe, uint32_t tid, uint32_t pid,
		    uint32_t comm, int entry)
{
	if (DT_GROW(s->u, s->ucap, s->nu, 1, 256))
		return -1;
	s->u[s->nu++] = (struct rpt_unmatched){ *probe, tid, pid, comm, (uint8_t)entry };
	return 0;
}

void
rpt_spans_free(struct rpt_spans *s)
{
	free(s->v);
	free(s->u);
	free(s->args);
	free(s->nargs);
	memset(s, 0, sizeof(*s));
}
