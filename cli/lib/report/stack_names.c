/*
 * stack_names.c - a capture's stacks named as flame graph frames, for the
 * reports that draw other stacks than profile samples (off-CPU, wakers,
 * blame).  Each (stack, process snapshot) is named once: the same stack
 * recurs on every switch out of the same wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "dtsym.h"
#include "engine.h"

struct memo {
	uint32_t	id;
	const struct dtcap_proc *proc;	/* NULL for kernel stacks */
	uint32_t	off, len;	/* into ids */
};

struct rpt_namer {
	const struct rpt_cap *c;
	struct dtsym	*sym, *own;
	struct flame	*fl;
	struct memo	*m;
	size_t		n;
	uint32_t	cap;
	struct dt_htab	ix;
	uint32_t	*ids;
	size_t		nids, idcap;
	int64_t		trunc_id;
};

static uint64_t
memo_hash(uint32_t id, const struct dtcap_proc *proc)
{
	return dt_htab_hash_int((uint64_t)id * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)proc);
}

static uint64_t
memo_rehash(const void *ctx, uint32_t e)
{
	const struct rpt_namer *n = ctx;
	return memo_hash(n->m[e].id, n->m[e].proc);
}

struct rpt_namer *
rpt_namer_new(const struct rpt_cap *c, struct flame *fl)
{
	struct rpt_namer *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->c = c;
	n->fl = fl;
	if ((n->sym = c->sym) == NULL && (n->sym = n->own = dtsym_open(c->r)) == NULL) {
		free(n);
		return NULL;
	}
	if (fl && (n->trunc_id = flame_intern(fl, "[truncated]", FLAME_SPECIAL)) < 0) {
		rpt_namer_free(n);
		return NULL;
	}
	return n;
}

void
rpt_namer_free(struct rpt_namer *n)
{
	if (n == NULL)
		return;
	dtsym_close(n->own);
	free(n->m);
	dt_htab_free(&n->ix);
	free(n->ids);
	free(n);
}

static void
pos_text(const struct dtcap_srcframe *f, char *out, size_t len)
{
	snprintf(out, len, "%s:%u", f->file[0] ? f->file : "??", f->line);
}

int
rpt_inline_frames(struct flame *fl, struct dtsym *sym, const uint64_t *pcs, unsigned k,
		  uint32_t pid, uint64_t ts, int by_srcline, uint32_t *buf, unsigned *nb,
		  unsigned room)
{
	if (!dtsym_inline || pcs[k] == 0)
		return 0;
	const struct dtcap_srcline *sl = dtsym_srcline(sym, k ? pcs[k] - 1 : pcs[k], 0, pid, ts);
	if (sl == NULL)
		return 0;
	/* the last frame is the function the symbol table named already */
	for (unsigned j = sl->nframes - 1; j-- > 0 && room > 0; room--) {
		char pos[4200];
		const char *nm = pos;
		if (by_srcline)
			pos_text(&sl->frames[j], pos, sizeof(pos));
		else
			nm = dtsym_func_name(sym, sl->frames[j].func, 1);
		int64_t fid = nm ? flame_intern(fl, nm, by_srcline ? FLAME_USER : FLAME_INLINE) : -1;
		if (fid < 0)
			return -1;
		buf[(*nb)++] = (uint32_t)fid;
	}
	return 0;
}

int
rpt_srcline_text(struct dtsym *sym, const uint64_t *pcs, unsigned k, int kernel, uint32_t pid,
		 uint64_t ts, char *out, size_t len)
{
	const struct dtcap_srcline *sl =
		pcs[k] ? dtsym_srcline(sym, k ? pcs[k] - 1 : pcs[k], kernel, pid, ts) : NULL;
	/* with inlined calls: the out-of-line function's own position;
	 * rpt_inline_frames gives the others */
	const struct dtcap_srcframe *f = sl ? &sl->frames[dtsym_inline ? sl->nframes - 1 : 0]
					    : NULL;
	if (f == NULL || (!f->file[0] && !f->line))
		return 0;
	pos_text(f, out, len);
	return 1;
}

/* Every frame but the innermost is a return address: name pc - 1 (the
 * call), as report_flame.c does, unless that names nothing better. */
static const char *
frame_name(struct dtsym *sym, const uint64_t *pcs, unsigned k, int kernel, uint32_t pid,
	   uint64_t ts, const char **origin)
{
	uint64_t pc = k && pcs[k] ? pcs[k] - 1 : pcs[k];
	const char *nm = dtsym_name(sym, pc, kernel, pid, ts);
	const char *org = dtsym_origin(sym, pc, kernel, pid, ts);

	if (pc != pcs[k] && (!strcmp(org, "unknown") || strstr(nm, "+0x"))) {
		nm = dtsym_name(sym, pcs[k], kernel, pid, ts);
		org = dtsym_origin(sym, pcs[k], kernel, pid, ts);
	}
	*origin = org;
	return nm;
}

int
rpt_namer_stack(struct rpt_namer *n, uint32_t id, int kernel, uint32_t pid, uint64_t ts,
		uint32_t *buf, unsigned *nb)
{
	unsigned cnt;
	int kflag, trunc;
	const uint64_t *pcs = dtcap_stack(n->c->r, id, &cnt, &kflag, &trunc);
	const struct dtcap_proc *proc = kernel ? NULL : dtcap_proc_find(n->c->r, pid, ts);
	uint64_t h = memo_hash(id, proc);
	uint32_t e;

	if (pcs == NULL)
		return 0;
	for (size_t i = dt_htab_first(&n->ix, h); (e = dt_htab_at(&n->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&n->ix, i))
		if (n->m[e].id == id && n->m[e].proc == proc) {
			memcpy(buf + *nb, n->ids + n->m[e].off, n->m[e].len * sizeof(*buf));
			*nb += n->m[e].len;
			return 0;
		}
	if (cnt > DTCAP_MAXFRAMES) {
		cnt = DTCAP_MAXFRAMES;
		trunc = 1;
	}
	unsigned start = *nb, inl = 0;
	if (trunc)
		buf[(*nb)++] = (uint32_t)n->trunc_id;
	for (unsigned k = cnt; k-- > 0;) {
		const char *org;
		const char *nm = frame_name(n->sym, pcs, k, kernel, pid, ts, &org);
		enum flame_kind kind = !strcmp(org, "module") ? FLAME_MODULE :
				       kernel ? FLAME_KERNEL : FLAME_USER;
		int64_t fid = flame_intern(n->fl, nm, kind);
		if (fid < 0)
			return -1;
		buf[(*nb)++] = (uint32_t)fid;
		/* inlined calls as frames of their own, as the profile's graph
		 * draws them (the caller's buffer has RPT_INLINE_ROOM for them) */
		unsigned before = *nb;
		if (!kernel && rpt_inline_frames(n->fl, n->sym, pcs, k, pid, ts, 0, buf, nb,
						 RPT_INLINE_ROOM - inl) < 0)
			return -1;
		inl += *nb - before;
	}
	if (DT_GROW(n->m, n->cap, n->n, 1, 1024) ||
	    DT_GROW(n->ids, n->idcap, n->nids, *nb - start, 4096))
		return -1;
	memcpy(n->ids + n->nids, buf + start, (*nb - start) * sizeof(*buf));
	n->m[n->n] = (struct memo){ id, proc, (uint32_t)n->nids, *nb - start };
	n->nids += *nb - start;
	if (dt_htab_add(&n->ix, h, (uint32_t)n->n, memo_rehash, n))
		return -1;
	n->n++;
	return 0;
}

void
rpt_namer_text(struct rpt_namer *n, uint32_t id, int kernel, uint32_t pid, uint64_t ts,
	       unsigned nframes, char *out, size_t len)
{
	unsigned cnt;
	int kflag, trunc;
	const uint64_t *pcs = dtcap_stack(n->c->r, id, &cnt, &kflag, &trunc);
	size_t k = 0;

	out[0] = '\0';
	if (pcs == NULL || cnt == 0) {
		snprintf(out, len, "(no stack)");
		return;
	}
	for (unsigned i = 0; i < cnt && i < nframes && k < len; i++) {
		const char *org;
		const char *nm = frame_name(n->sym, pcs, i, kernel, pid, ts, &org);
		k += (size_t)snprintf(out + k, len - k, "%s%s", i ? " <- " : "", nm);
	}
}
