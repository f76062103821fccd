/*
 * report_frames.c - breakdowns by frame, on the flame engine's folding:
 * top by function or object (self or inclusive), and the call tree into
 * or out of a function (engine.h rpt_top_frames, rpt_calls).
 *
 * The samples are folded once, exactly as a flame graph folds them (the
 * same probes, filters, names and demangling), without the comm root; the
 * answers are then read off the folded stacks, whose number grows with
 * distinct stacks, not with events.  Frames of kind FLAME_SPECIAL ("--"
 * between user and kernel, "[truncated]") are not functions and are
 * skipped; a stack reads user outermost .. user innermost, kernel
 * outermost .. kernel innermost, so its last function is where the
 * sample was taken.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "engine.h"
#include "flame.h"
#include "report.h"
#include "termsafe.h"

/* Fold c's samples into a new flame; NULL with the message printed. */
static struct flame *fold(const struct rpt_cap *c, struct flt_filter *f, const char *cmd,
			  int by, uint64_t *n, char *probedesc, size_t pdlen,
			  volatile sig_atomic_t *cancel, int *rc)
{
	struct rpt_flame_opts fo;
	struct flame *fl = flame_new();

	rpt_flame_opts_init(&fo, cmd);
	fo.no_comm = 1;
	fo.by_dso = by == RPT_TOP_DSO;
	fo.by_srcline = by == RPT_TOP_SRCLINE;
	if (fl == NULL) {
		rpt_err(cmd, "out of memory");
		*rc = RPT_EXIT_ERROR;
		return NULL;
	}
	/* functions as perf --sort sym counts them: an inlined call is its
	 * caller's time; lines each have theirs, inlined or not */
	int inl = dtsym_inline;
	dtsym_inline = by == RPT_TOP_SRCLINE;
	*rc = rpt_flame_fold(c, f, &fo, fl, 0, n, probedesc, pdlen, cancel);
	dtsym_inline = inl;
	if (*rc != 0) {
		flame_free(fl);
		return NULL;
	}
	return fl;
}

/* Whether a frame of a folded path is code: not "--", "[truncated]" or
 * "[no stack]".  "[unknown]" is special as a comm, never as a frame of a
 * fold without comms, and by object it is the unmapped code's. */
static int is_func(const struct flame *fl, uint32_t id)
{
	enum flame_kind k;
	const char *nm = flame_name(fl, id, &k);

	return nm != NULL && (k != FLAME_SPECIAL || !strcmp(nm, "[unknown]"));
}

/* ------------------------------------------------------------- top */

struct topw {
	const struct flame *fl;
	uint64_t	*count;		/* by name id */
	uint32_t	*stamp;		/* by name id: last path that counted it */
	uint32_t	path;
	int		children;
};

static int top_path(void *ctx, const uint32_t *ids, unsigned n, uint64_t w)
{
	struct topw *t = ctx;

	t->path++;
	if (!t->children) {
		for (unsigned k = n; k-- > 0;)
			if (is_func(t->fl, ids[k])) {
				t->count[ids[k]] += w;
				break;
			}
		return 0;
	}
	for (unsigned k = 0; k < n; k++)
		if (is_func(t->fl, ids[k]) && t->stamp[ids[k]] != t->path) {
			t->stamp[ids[k]] = t->path;
			t->count[ids[k]] += w;
		}
	return 0;
}

struct toprow {
	const char	*name;
	uint64_t	count;
};

static int toprow_cmp(const void *a, const void *b)
{
	const struct toprow *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

int rpt_top_frames(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_top_opts *o,
		   FILE *out, volatile sig_atomic_t *cancel)
{
	char probes[256];
	uint64_t total = 0;
	int rc;
	struct flame *fl = fold(c, f, "top", (int)o->by, &total, probes, sizeof(probes),
				cancel, &rc);

	if (fl == NULL)
		return rc;
	/* Name ids are dense: at most one per interned name. */
	uint32_t nn = 0;
	while (flame_name(fl, nn, NULL))
		nn++;
	struct topw t = { fl, calloc(nn + 1, sizeof(uint64_t)), calloc(nn + 1, sizeof(uint32_t)), 0,
			  o->children };
	struct toprow *rows = calloc(nn + 1, sizeof(*rows));
	rc = RPT_EXIT_ERROR;
	if (!t.count || !t.stamp || !rows || flame_walk(fl, 0, top_path, &t)) {
		rpt_err("top", "out of memory");
		goto out;
	}
	size_t nr = 0;
	for (uint32_t i = 0; i < nn; i++)
		if (t.count[i])
			rows[nr++] = (struct toprow){ flame_name(fl, i, NULL), t.count[i] };
	qsort(rows, nr, sizeof(*rows), toprow_cmp);
	unsigned long limit = o->limit ? o->limit : 10;
	fprintf(out, "# %s of %" PRIu64 " samples (%s)\n",
		o->children ? "inclusive (children)" : "self", total,
		probes[0] ? dtt_str(probes) : "no probe");
	fprintf(out, "%12s %6s  %s\n", "COUNT", "PCT", rpt_top_keys[o->by]);
	for (size_t x = 0; x < nr && x < limit; x++)
		fprintf(out, "%12" PRIu64 " %5.1f%%  %s\n", rows[x].count,
			total ? 100.0 * (double)rows[x].count / (double)total : 0.0,
			dtt_str(rows[x].name));
	if (nr == 0)
		fprintf(out, "(no samples)\n");
	rc = RPT_EXIT_OK;
out:
	free(rows);
	free(t.count);
	free(t.stamp);
	flame_free(fl);
	return rc;
}

/* ----------------------------------------------------- callers/callees */

struct callw {
	const struct flame *fl;
	struct flame	*tree;		/* rooted at the matched functions */
	uint8_t		*match;		/* by name id: 0 unknown, 1 no, 2 yes */
	const char	*glob;
	regex_t		*re;
	uint32_t	*buf;
	size_t		bufcap;
	int		callers;
	uint64_t	matched;
};

static int matches(struct callw *w, uint32_t id)
{
	if (!w->match[id]) {
		const char *nm = flame_name(w->fl, id, NULL);
		/* A C++ name pasted whole is itself, though its "[clone ...]"
		 * or "operator[]" would read as a glob's bracket expression. */
		int yes = w->re ? regexec(w->re, nm, 0, NULL, 0) == 0
				: !strcmp(w->glob, nm) || fnmatch(w->glob, nm, 0) == 0;
		w->match[id] = yes ? 2 : 1;
	}
	return w->match[id] == 2;
}

/* Re-intern name id of the folded flame in the tree's own name table. */
static int64_t tree_id(struct callw *w, uint32_t id)
{
	enum flame_kind k;
	const char *nm = flame_name(w->fl, id, &k);

	return flame_intern(w->tree, nm, k);
}

static int call_path(void *ctx, const uint32_t *ids, unsigned n, uint64_t cnt)
{
	struct callw *w = ctx;
	unsigned m = 0;
	long at = -1;

	for (unsigned k = 0; k < n; k++)
		if (is_func(w->fl, ids[k]) && matches(w, ids[k])) {
			at = k;
			if (!w->callers)
				break;	/* callees: the outermost match */
		}
	if (at < 0)
		return 0;
	if (DT_GROW(w->buf, w->bufcap, 0, n, 64))
		return -1;
	if (w->callers) {	/* the function, then its callers up to the root */
		for (long k = at; k >= 0; k--)
			if (is_func(w->fl, ids[k])) {
				int64_t t = tree_id(w, ids[k]);
				if (t < 0)
					return -1;
				w->buf[m++] = (uint32_t)t;
			}
	} else {		/* the function, then what it calls */
		for (unsigned k = (unsigned)at; k < n; k++)
			if (is_func(w->fl, ids[k])) {
				int64_t t = tree_id(w, ids[k]);
				if (t < 0)
					return -1;
				w->buf[m++] = (uint32_t)t;
			}
	}
	w->matched += cnt;
	return flame_add(w->tree, w->buf, m, cnt, 0);
}

int rpt_calls(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_calls_opts *o,
	      FILE *out, volatile sig_atomic_t *cancel)
{
	const char *cmd = o->callers ? "callers" : "callees";
	char probes[256], ebuf[256];
	uint64_t total = 0;
	regex_t re;
	int rc, have_re = 0;
	size_t pl = strlen(o->pattern);

	if (pl >= 2 && o->pattern[0] == '/' && o->pattern[pl - 1] == '/') {
		char *body = strndup(o->pattern + 1, pl - 2);
		int e = body ? regcomp(&re, body, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;
		free(body);
		if (e) {
			regerror(e, &re, ebuf, sizeof(ebuf));
			rpt_err(cmd, "bad regular expression '%s': %s", o->pattern, ebuf);
			return RPT_EXIT_USAGE;
		}
		have_re = 1;
	}
	struct flame *fl = fold(c, f, cmd, RPT_TOP_SYM, &total, probes, sizeof(probes), cancel, &rc);
	if (fl == NULL) {
		if (have_re)
			regfree(&re);
		return rc;
	}
	uint32_t nn = 0;
	while (flame_name(fl, nn, NULL))
		nn++;
	struct callw w = { .fl = fl, .tree = flame_new(), .match = calloc(nn + 1, 1),
			   .glob = o->pattern, .re = have_re ? &re : NULL, .callers = o->callers };
	rc = RPT_EXIT_ERROR;
	if (!w.tree || !w.match || flame_walk(fl, 0, call_path, &w)) {
		rpt_err(cmd, "out of memory");
		goto out;
	}
	if (w.matched == 0) {
		rpt_err(cmd, "%s: no sampled function matches '%s' (%" PRIu64 " samples of %s)",
			c->path, dtt_str(o->pattern), total, probes[0] ? dtt_str(probes) : "no probe");
		rc = RPT_EXIT_OK;
		goto out;
	}
	int werr;
	if (o->folded) {
		werr = flame_write_folded(w.tree, out, 0);
	} else {
		fprintf(out, "# %s of '%s': %" PRIu64 " of %" PRIu64 " samples (%.2f%%, %s)\n",
			cmd, dtt_str(o->pattern), w.matched, total,
			total ? 100.0 * (double)w.matched / (double)total : 0.0,
			probes[0] ? dtt_str(probes) : "no probe");
		werr = flame_write_tree(w.tree, out, total, o->minpct);
	}
	rc = werr ? RPT_EXIT_ERROR : RPT_EXIT_OK;
	if (werr)
		rpt_err(cmd, "writing the output failed");
out:
	free(w.match);
	free(w.buf);
	flame_free(w.tree);
	flame_free(fl);
	if (have_re)
		regfree(&re);
	return rc;
}
