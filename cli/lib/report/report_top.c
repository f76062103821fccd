/*
 * report_top.c - the top engine (engine.h rpt_top): the busiest comms,
 * pids, probes, stacks or syscalls of a capture.  Counts by numeric id in
 * one pass over the columns it needs, then names the ids (stacks through
 * dtsym) and merges equal names.  The command lines (dtreport top, dtsh's
 * top) are cmd_top.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dt_htab.h"
#include "dtsym.h"
#include "engine.h"
#include "filter.h"
#include "report.h"
#include "scan_pool.h"
#include "termsafe.h"

#define TOP_FRAMES	3

/* Counts by id: entries dense in first-seen order, indexed by dt_htab. */
struct slot {
	uint64_t key, count;
};

struct map {
	struct slot	*s;
	size_t		n;
	uint32_t	cap;		/* dt_htab numbers entries in 32 bits */
	struct dt_htab	ix;
};

static uint64_t
map_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct map *)ctx)->s[e].key);
}

/* The slot of key, NULL when absent. */
static struct slot *
map_find(const struct map *m, uint64_t key)
{
	uint32_t e;
	for (size_t i = dt_htab_first(&m->ix, dt_htab_hash_int(key)); (e = dt_htab_at(&m->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&m->ix, i))
		if (m->s[e].key == key)
			return &m->s[e];
	return NULL;
}

/* The slot of key, created with count 0 when new; NULL on ENOMEM. */
static struct slot *
map_slot(struct map *m, uint64_t key)
{
	struct slot *s = map_find(m, key);
	if (s)
		return s;
	if (DT_GROW(m->s, m->cap, m->n, 1, 512))
		return NULL;
	m->s[m->n] = (struct slot){ .key = key };
	if (dt_htab_add(&m->ix, dt_htab_hash_int(key), (uint32_t)m->n, map_rehash, m))
		return NULL;
	return &m->s[m->n++];
}

static int
map_add(struct map *m, uint64_t key, uint64_t n)
{
	struct slot *s = map_slot(m, key);
	if (s == NULL)
		return -1;
	s->count += n;
	return 0;
}

static uint64_t
map_get(const struct map *m, uint64_t key)
{
	const struct slot *s = map_find(m, key);
	return s ? s->count : 0;
}

static void
map_free(struct map *m)
{
	free(m->s);
	dt_htab_free(&m->ix);
}

struct row {
	char *name;
	uint64_t count;
};

static int
byname(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static int
bycount(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

const char *const rpt_top_keys[] = { "comm", "pid", "probe", "stack", "syscall", "sym", "dso",
				     "srcline", NULL };

/* The function part of "syscall:FUNC:entry", or NULL. */
static int
syscall_name(const char *probe, const char *which, char *out, size_t len)
{
	const char *f, *n;

	if (strncmp(probe, "syscall:", 8) != 0)
		return 0;
	f = probe + 8;
	if ((n = strchr(f, ':')) == NULL || strcmp(n + 1, which) != 0)
		return 0;
	snprintf(out, len, "%.*s", (int)(n - f), f);
	return 1;
}

static char *
stack_name(struct dtcap_reader *r, struct dtsym *sym, uint64_t key)
{
	uint32_t id = (uint32_t)key, pid = (uint32_t)(key >> 32) & 0x7fffffff;
	unsigned n = 0;
	int kernel = 0, trunc = 0;
	const uint64_t *pcs = dtcap_stack(r, id, &n, &kernel, &trunc);
	char buf[1024];
	size_t k = 0;

	buf[0] = '\0';
	if (pcs == NULL || n == 0)
		return strdup("(no stack)");
	for (unsigned i = 0; i < n && i < TOP_FRAMES; i++) {
		const char *nm = sym ? dtsym_name(sym, pcs[i], kernel, pid, 0) : NULL;
		char hex[24];
		if (nm == NULL) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)pcs[i]);
			nm = hex;
		}
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", i ? " <- " : "", nm);
		if (k >= sizeof(buf))
			break;
	}
	return strdup(buf);
}

/* The first pass: counts by id of the rows the filter passes. */
struct top_scan {
	struct dtcap_reader *r;
	enum rpt_top_by	by;
	const char	*which;		/* syscalls: "entry" or "return" */
	const uint8_t	*want;		/* by probe id, NULL: every probe */
	size_t		nwant;
	struct map	m, pcomm;
	uint64_t	total;
	int		oom;
};

static int
top_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct top_scan *t = ctx;
	uint64_t key = 0;

	if (t->want && (b->probe[i] >= t->nwant || !t->want[b->probe[i]]))
		return 0;
	switch (t->by) {
	case RPT_TOP_COMM: key = b->comm[i]; break;
	case RPT_TOP_PID: {
		/* The pid's first comm names it when the capture has no
		 * process snapshot. */
		struct slot *c = b->comm[i] ? map_slot(&t->pcomm, b->pid[i]) : NULL;
		if (c && c->count == 0)
			c->count = b->comm[i];
		key = b->pid[i];
		break;
	}
	case RPT_TOP_PROBE: key = b->probe[i]; break;
	case RPT_TOP_SYSCALL: {
		const struct dtcap_probe *p = dtcap_probe_by_id(t->r, b->probe[i]);
		char tmp[DTCAP_PROBENAMELEN];
		if (p == NULL || !syscall_name(p->name, t->which, tmp, sizeof(tmp)))
			return 0;
		key = b->probe[i];
		break;
	}
	case RPT_TOP_STACK:
		/* Events without a stack say nothing about where time
		 * goes.  User stacks need the pid to be named. */
		if (b->kstack[i] == 0 && b->ustack[i] == 0)
			return 0;
		key = b->kstack[i] ? b->kstack[i] :
		      (1ULL << 63 | (uint64_t)b->pid[i] << 32 | b->ustack[i]);
		break;
	case RPT_TOP_SYM: case RPT_TOP_DSO: case RPT_TOP_SRCLINE:	/* never scanned here */
		return 1;
	}
	t->total++;
	if (map_add(&t->m, key, 1)) {
		t->oom = 1;
		return 1;
	}
	return 0;
}

/*
 * The first pass on the scan pool: a top_scan per worker, sharing the
 * caller's read-only fields, merged in block order (a pid keeps the first
 * comm seen, as one walk keeps it).
 */
static void *
top_part_new(void *ctx)
{
	const struct top_scan *m = ctx;
	struct top_scan *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->r = m->r;
	t->by = m->by;
	t->which = m->which;
	t->want = m->want;
	t->nwant = m->nwant;
	return t;
}

static void
top_part_free(void *ctx, void *part)
{
	struct top_scan *t = part;

	(void)ctx;
	map_free(&t->m);
	map_free(&t->pcomm);
	free(t);
}

static int
top_part_row(void *part, const struct dtcap_block *b, uint32_t row, char *err, size_t errlen)
{
	struct top_scan *t = part;

	if (top_row(t, b, row) == 0)
		return 0;
	snprintf(err, errlen, "%s", t->oom ? "out of memory" : "stopped");
	return 1;
}

static int
top_merge(void *ctx, void *part)
{
	struct top_scan *m = ctx;
	const struct top_scan *t = part;

	for (size_t i = 0; i < t->m.n; i++)
		if (map_add(&m->m, t->m.s[i].key, t->m.s[i].count))
			return -1;
	for (size_t i = 0; i < t->pcomm.n; i++) {
		struct slot *c = map_slot(&m->pcomm, t->pcomm.s[i].key);
		if (c == NULL)
			return -1;
		if (c->count == 0)
			c->count = t->pcomm.s[i].count;
	}
	m->total += t->total;
	return 0;
}

/*
 * Which probes' events count, and their names for the table's header.
 * Comms, pids and stacks rank where time goes: as flame, the timer
 * probes' samples when the capture has any and no --probe chose (the
 * stack of a tracepoint that fires 10000 times in a second says where
 * it fired, not where the CPU was).  Probes and syscalls rank events:
 * all of them.  NULL with *nwant 0 when every event counts (or --probe's
 * filter already chose), NULL with *nwant set on ENOMEM.
 */
static uint8_t *
top_probes(struct dtcap_reader *r, const struct flt_filter *f, enum rpt_top_by by,
	   size_t *nwant, char *desc, size_t dlen)
{
	size_t np = dtcap_nprobes(r), ntimer = 0, named = 0, l;
	int timers = 0;
	uint8_t *want = NULL;

	*nwant = 0;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(r, i);
		ntimer += pr && (pr->flags & DT_PF_TIMER);
	}
	if (!f->probe_ok && ntimer && (by == RPT_TOP_COMM || by == RPT_TOP_PID ||
				       by == RPT_TOP_STACK)) {
		timers = 1;
		*nwant = dtcap_max_probe_id(r) + 1;
		if ((want = calloc(*nwant, 1)) == NULL)
			return NULL;
	}
	if (by == RPT_TOP_PROBE && !f->probe_ok) {
		snprintf(desc, dlen, "events of every probe");
		return want;
	}
	if (by == RPT_TOP_SYSCALL) {
		snprintf(desc, dlen, "events of the syscall probes%s",
			 f->probe_ok ? " --probe chose" : "");
		return want;
	}
	snprintf(desc, dlen, "%s", timers ? "samples of " : "events of ");
	if (!timers && !f->probe_ok) {
		snprintf(desc, dlen, "events of every probe: no profile/interval probe recorded");
		return want;
	}
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *pr = dtcap_probe_at(r, i);
		int w;
		if (pr == NULL)
			continue;
		w = timers ? !!(pr->flags & DT_PF_TIMER)
			   : pr->id < f->nprobe_ok && f->probe_ok[pr->id];
		if (!w)
			continue;
		if (want)
			want[pr->id] = 1;
		l = strlen(desc);
		if (named < 4)
			snprintf(desc + l, dlen - l, "%s%s", named ? ", " : "", pr->name);
		else if (named == 4)
			snprintf(desc + l, dlen - l, ", ...");
		named++;
	}
	if (named == 0)
		snprintf(desc, dlen, "no probe");
	else if (timers) {
		l = strlen(desc);
		snprintf(desc + l, dlen - l, "; --probe to choose");
	}
	return want;
}

int
rpt_top(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_top_opts *o,
	FILE *out, volatile sig_atomic_t *cancel)
{
	struct dtcap_reader *r = c->r;
	unsigned long limit = o->limit ? o->limit : 10;
	enum rpt_top_by by = o->by;
	struct top_scan t = { .r = r, .by = by };
	struct dtsym *own_sym = NULL;
	unsigned cols = 0;
	struct row *rows = NULL;
	size_t nrows = 0;
	int rc = RPT_EXIT_ERROR;
	char err[512], counted[256];
	uint8_t *want = NULL;

	if (by == RPT_TOP_SYM || by == RPT_TOP_DSO || by == RPT_TOP_SRCLINE)
		return rpt_top_frames(c, f, o, out, cancel);
	if (o->children) {
		rpt_err("top", "--children goes with --by sym, dso or srcline");
		return RPT_EXIT_USAGE;
	}

	if (flt_resolve(f, r, err, sizeof(err))) {
		rpt_err("top", "%s: %s", c->path, err);
		return RPT_EXIT_ERROR;
	}
	/* Syscalls count entries; a capture of return probes only counts those. */
	const char *which = "entry";
	if (by == RPT_TOP_SYSCALL) {
		char tmp[DTCAP_PROBENAMELEN];
		int any = 0;
		for (size_t p = 0; p < dtcap_nprobes(r); p++)
			any |= syscall_name(dtcap_probe_at(r, p)->name, "entry", tmp, sizeof(tmp));
		if (!any)
			which = "return";
	}

	switch (by) {
	case RPT_TOP_COMM: cols = DTCAP_COL_COMM; break;
	case RPT_TOP_PID: cols = DTCAP_COL_PID | DTCAP_COL_COMM; break;
	case RPT_TOP_PROBE: case RPT_TOP_SYSCALL: cols = DTCAP_COL_PROBE; break;
	case RPT_TOP_STACK: cols = DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_PID; break;
	case RPT_TOP_SYM: case RPT_TOP_DSO: case RPT_TOP_SRCLINE: break;	/* report_frames.c's */
	}
	t.which = which;
	if ((want = top_probes(r, f, by, &t.nwant, counted, sizeof(counted))) == NULL &&
	    t.nwant) {
		rpt_err("top", "out of memory");
		goto out;
	}
	if ((t.want = want) != NULL)
		cols |= DTCAP_COL_PROBE;
	struct dtsp_job job = { .part_new = top_part_new, .part_free = top_part_free,
				.row = top_part_row, .merge = top_merge };
	if (dtsp_scan(r, f, cols, &job, &t, cancel,
		      rpt_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err))) {
		rpt_err("top", "%s", err);
		goto out;
	}
	rpt_note_empty("top", c->path, t.total, flt_active(f));
	struct map m = t.m;
	uint64_t total = t.total;

	struct dtsym *sym = NULL;
	if (by == RPT_TOP_STACK && (sym = c->sym) == NULL)
		sym = own_sym = dtsym_open(r);
	if ((rows = calloc(m.n + 1, sizeof(*rows))) == NULL) {
		rpt_err("top", "out of memory");
		goto out;
	}
	for (size_t s = 0; s < m.n; s++) {
		char buf[64];
		const char *nm = NULL;
		uint64_t k = m.s[s].key;
		switch (by) {
		case RPT_TOP_COMM:
			nm = dtcap_comm(r, (uint32_t)k);
			if (nm == NULL)
				nm = "(unknown)";
			rows[nrows].name = strdup(nm);
			break;
		case RPT_TOP_PID: {
			const struct dtcap_proc *p = dtcap_proc_find(r, (uint32_t)k, UINT64_MAX);
			const char *cm = dtcap_comm(r, (uint32_t)map_get(&t.pcomm, k));
			if (k == 0)	/* every CPU's swapper/N: as in stats */
				snprintf(buf, sizeof(buf), "0 " DT_IDLE_NAME);
			else if (p && p->comm[0])
				snprintf(buf, sizeof(buf), "%llu (%.16s)", (unsigned long long)k, p->comm);
			else if (cm)
				snprintf(buf, sizeof(buf), "%llu (%.16s)", (unsigned long long)k, cm);
			else
				snprintf(buf, sizeof(buf), "%llu", (unsigned long long)k);
			rows[nrows].name = strdup(buf);
			break;
		}
		case RPT_TOP_PROBE: {
			const struct dtcap_probe *p = dtcap_probe_by_id(r, (uint32_t)k);
			if (p == NULL)
				snprintf(buf, sizeof(buf), "probe#%llu", (unsigned long long)k);
			rows[nrows].name = strdup(p ? p->name : buf);
			break;
		}
		case RPT_TOP_SYSCALL: {
			char tmp[DTCAP_PROBENAMELEN];
			const struct dtcap_probe *p = dtcap_probe_by_id(r, (uint32_t)k);
			syscall_name(p->name, which, tmp, sizeof(tmp));
			rows[nrows].name = strdup(tmp);
			break;
		}
		case RPT_TOP_STACK:
			rows[nrows].name = k ? stack_name(r, sym, k) : strdup("(no stack)");
			break;
		case RPT_TOP_SYM: case RPT_TOP_DSO: case RPT_TOP_SRCLINE:
			break;
		}
		if (rows[nrows].name == NULL)
			continue;
		rows[nrows++].count = m.s[s].count;
	}

	/* Different ids can name the same thing (stacks differing below the
	 * top frames, pids reused): merge them. */
	qsort(rows, nrows, sizeof(*rows), byname);
	size_t k = 0;
	for (size_t x = 0; x < nrows; x++) {
		if (k > 0 && strcmp(rows[k - 1].name, rows[x].name) == 0) {
			rows[k - 1].count += rows[x].count;
			free(rows[x].name);
		} else {
			rows[k++] = rows[x];
		}
	}
	nrows = k;
	qsort(rows, nrows, sizeof(*rows), bycount);
	fprintf(out, "%12s %6s  %s (%s)\n", "COUNT", "PCT", rpt_top_keys[by], dtt_str(counted));
	for (size_t x = 0; x < nrows && x < limit; x++)
		fprintf(out, "%12llu %5.1f%%  %s\n", (unsigned long long)rows[x].count,
			total ? 100.0 * (double)rows[x].count / (double)total : 0.0,
			dtt_str(rows[x].name));	/* comms and symbols: the capture's */
	if (nrows == 0)
		fprintf(out, "(no events)\n");
	rc = 0;
	for (size_t x = 0; x < nrows; x++)
		free(rows[x].name);
	free(rows);
out:
	free(want);
	dtsym_close(own_sym);
	map_free(&t.m);
	map_free(&t.pcomm);
	return rc;
}
