/*
 * filter.c - parsing and matching of the report filters (see filter.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_grow.h"
#include "filter.h"
#include "scan_pool.h"
#include "util.h"

void flt_init(struct flt_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->tmax = UINT64_MAX;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void flt_free(struct flt_filter *f)
{
	free(f->pids);
	free(f->tids);
	free(f->cpus);
	free_strv(f->comms, f->ncomms);
	free_strv(f->probes, f->nprobes);
	free(f->probe_ok);
	free(f->comm_ok);
	for (int x = 0; x < FLT_XN; x++)
		free(f->xv[x]);
	flt_init(f);
}

int flt_active(const struct flt_filter *f)
{
	return f->npids || f->ntids || f->ncpus || f->ncomms || f->nprobes ||
	       f->has_since || f->has_until || f->ctx_mask ||
	       f->probe_ok || f->comm_ok || f->xset || f->xrng;
}

static int add_u32_list(uint32_t **v, size_t *n, size_t *cap, const char *arg,
			const char *what, char *err, size_t errlen)
{
	const char *p = arg;

	if (!*p) {
		snprintf(err, errlen, "--%s: empty value", what);
		return -1;
	}
	while (*p) {
		char *end;
		errno = 0;
		unsigned long long x = strtoull(p, &end, 10);
		if (end == p || errno || x > UINT32_MAX || (*end && *end != ',') || *p == '-') {
			snprintf(err, errlen, "--%s: not a number list: '%s'", what, arg);
			return -1;
		}
		if (DT_GROW(*v, *cap, *n, 1, 8)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		(*v)[(*n)++] = (uint32_t)x;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int add_str_list(char ***v, size_t *n, size_t *cap, const char *arg,
			const char *what, char *err, size_t errlen)
{
	const char *p = arg;

	if (!*p) {
		snprintf(err, errlen, "--%s: empty value", what);
		return -1;
	}
	/* Probe names contain ':' but never ',', so ',' separates globs. */
	for (;;) {
		size_t len = strcspn(p, ",");
		if (DT_GROW(*v, *cap, *n, 1, 8) || !((*v)[*n] = strndup(p, len))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		(*n)++;
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

int flt_option(struct flt_filter *f, int opt, const char *arg, char *err, size_t errlen)
{
	switch (opt) {
	case FLT_OPT_PID:
		return add_u32_list(&f->pids, &f->npids, &f->pidcap, arg, "pid", err, errlen) ? -1 : 1;
	case FLT_OPT_TID:
		return add_u32_list(&f->tids, &f->ntids, &f->tidcap, arg, "tid", err, errlen) ? -1 : 1;
	case FLT_OPT_CPU:
		return add_u32_list(&f->cpus, &f->ncpus, &f->cpucap, arg, "cpu", err, errlen) ? -1 : 1;
	case FLT_OPT_COMM:
		return add_str_list(&f->comms, &f->ncomms, &f->commcap, arg, "comm", err, errlen) ? -1 : 1;
	case FLT_OPT_PROBE:
		return add_str_list(&f->probes, &f->nprobes, &f->probecap, arg, "probe", err, errlen) ? -1 : 1;
	case FLT_OPT_SALVAGE:
		f->salvage = 1;
		return 1;
	case FLT_OPT_THREADS: {
		unsigned n;
		if (dtsp_parse_threads(arg, &n)) {
			snprintf(err, errlen, "--threads: '%s' is not a number of threads "
				 "(1..%d)", arg, DTSP_MAX_THREADS);
			return -1;
		}
		dtsp_set_threads(n);
		return 1;
	}
	case FLT_OPT_CTX: {
		const char *p = arg;
		do {
			size_t len = strcspn(p, ","), k;
			/* bit k: DTCAP_CTX_k by its name, bit 4 "unknown" */
			for (k = 0; k < 5; k++) {
				const char *nm = k < 4 ? dtcap_ctx_name((unsigned)k) : "unknown";
				if (strlen(nm) == len && !strncmp(p, nm, len))
					break;
			}
			if (k == 5) {
				snprintf(err, errlen, "--ctx: '%.*s' is not task, softirq, hardirq, "
					 "nmi or unknown", (int)len, p);
				return -1;
			}
			f->ctx_mask |= 1u << k;
			p += len;
		} while (*p++ == ',');
		return 1;
	}
	case FLT_OPT_SINCE:
	case FLT_OPT_UNTIL: {
		uint64_t t;
		int rel;
		const char *what = opt == FLT_OPT_SINCE ? "since" : "until";
		int abs;
		if (dtu_parse_time(arg, &t, &abs)) {
			snprintf(err, errlen, "--%s: bad time '%s' (want seconds from the start "
				 "as 1.5, 200ms, 2m; or @T, an absolute ts: see dtreport(1))",
				 what, arg);
			return -1;
		}
		rel = !abs;
		if (opt == FLT_OPT_SINCE) {
			f->since = t, f->since_rel = rel, f->has_since = 1;
		} else {
			f->until = t, f->until_rel = rel, f->has_until = 1;
		}
		return 1;
	}
	default:
		return 0;
	}
}

static int glob_any(char **globs, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!fnmatch(globs[i], s, 0))
			return 1;
	return 0;
}

int flt_resolve(struct flt_filter *f, const struct dtcap_reader *r, char *err, size_t errlen)
{
	const struct dtcap_host *h = dtcap_host(r);
	uint64_t start = h ? h->start_ns : 0;

	free(f->probe_ok);
	free(f->comm_ok);
	f->probe_ok = NULL, f->comm_ok = NULL;

	f->tmin = 0, f->tmax = UINT64_MAX;
	if (f->has_since)
		f->tmin = f->since_rel ? start + f->since : f->since;
	if (f->has_until)
		f->tmax = f->until_rel ? start + f->until : f->until;
	if (f->tmin > f->tmax) {
		snprintf(err, errlen, "--since is after --until");
		return -1;
	}

	if (f->nprobes) {
		size_t n = dtcap_nprobes(r), hits = 0;
		f->nprobe_ok = dtcap_max_probe_id(r) + 1;
		f->probe_ok = calloc(f->nprobe_ok, 1);
		if (!f->probe_ok) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			const struct dtcap_probe *p = dtcap_probe_at(r, i);
			if (p && glob_any(f->probes, f->nprobes, p->name)) {
				f->probe_ok[p->id] = 1;
				hits++;
			}
		}
		if (!hits) {
			const char *best[1];
			const char **names = calloc(n ? n : 1, sizeof(*names));
			size_t k = 0, nb = 0;
			for (size_t i = 0; names && i < n; i++)
				if (dtcap_probe_at(r, i))
					names[k++] = dtcap_probe_at(r, i)->name;
			if (names)
				nb = dtu_suggest(f->probes[0], names, k, 0, best, 1);
			snprintf(err, errlen, "--probe %s%s: no probe of the capture matches%s%s%s",
				 f->probes[0], f->nprobes > 1 ? ",..." : "", nb ? " (did you mean '" : "",
				 nb ? best[0] : "", nb ? "'?)" : "");
			free(names);
			return -1;
		}
	}

	if (f->ncomms) {
		uint32_t n = dtcap_ncomms(r);
		f->ncomm_ok = n + 1;
		f->comm_ok = calloc(f->ncomm_ok, 1);
		if (!f->comm_ok) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		size_t hits = 0;
		for (uint32_t id = 1; id <= n; id++) {
			const char *c = dtcap_comm(r, id);
			if (c && glob_any(f->comms, f->ncomms, c)) {
				f->comm_ok[id] = 1;
				hits++;
			}
		}
		/* The rule of every filter: a value the capture never saw is an
		 * error (a typo, most likely), as for --probe. */
		if (!hits) {
			const char *best[1];
			const char **names = calloc(n ? n : 1, sizeof(*names));
			size_t k = 0, nb = 0;
			for (uint32_t id = 1; names && id <= n; id++)
				if (dtcap_comm(r, id))
					names[k++] = dtcap_comm(r, id);
			if (names)
				nb = dtu_suggest(f->comms[0], names, k, 0, best, 1);
			snprintf(err, errlen, "--comm %s%s: no process of the capture has that name%s%s%s",
				 f->comms[0], f->ncomms > 1 ? ",..." : "", nb ? " (did you mean '" : "",
				 nb ? best[0] : "", nb ? "'?)" : "");
			free(names);
			return -1;
		}
	}
	if (f->ncpus && h && h->ncpus) {
		for (size_t i = 0; i < f->ncpus; i++) {
			if (f->cpus[i] >= h->ncpus) {
				snprintf(err, errlen, "--cpu %u: the capture has CPUs 0-%u",
					 f->cpus[i], h->ncpus - 1);
				return -1;
			}
		}
	}

	f->pid_min = UINT32_MAX, f->pid_max = 0;
	for (size_t i = 0; i < f->npids; i++) {
		if (f->pids[i] < f->pid_min)
			f->pid_min = f->pids[i];
		if (f->pids[i] > f->pid_max)
			f->pid_max = f->pids[i];
	}
	return 0;
}

int flt_block_skip(const struct flt_filter *f, const struct dtcap_blockinfo *bi)
{
	if (!bi)
		return 0;
	if (bi->rows == 0)
		return 1;
	if (bi->tmax < f->tmin || bi->tmin > f->tmax)
		return 1;
	if (f->npids && (bi->pid_max < f->pid_min || bi->pid_min > f->pid_max))
		return 1;
	if ((f->xrng >> FLT_X_PID & 1) &&
	    (bi->pid_max < f->xlo[FLT_X_PID] || bi->pid_min > f->xhi[FLT_X_PID]))
		return 1;
	if (f->xset >> FLT_X_PID & 1) {
		/* the first pid of the set not below the block's least */
		const uint32_t *v = f->xv[FLT_X_PID];
		size_t lo = 0, hi = f->nxv[FLT_X_PID];
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (v[mid] < bi->pid_min)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == f->nxv[FLT_X_PID] || v[lo] > bi->pid_max)
			return 1;
	}
	return 0;
}

/* The capture column of each FLT_X_* column. */
static const unsigned xcol[FLT_XN] = {
	DTCAP_COL_PID, DTCAP_COL_TID, DTCAP_COL_KSTACK, DTCAP_COL_USTACK, DTCAP_COL_FLAGS,
	DTCAP_COL_PROBE, DTCAP_COL_COMM,
};

unsigned flt_columns(const struct flt_filter *f)
{
	unsigned c = 0;

	if (f->npids)
		c |= DTCAP_COL_PID;
	if (f->ntids)
		c |= DTCAP_COL_TID;
	if (f->ncpus)
		c |= DTCAP_COL_CPU;
	if (f->ncomms)
		c |= DTCAP_COL_COMM;
	if (f->nprobes)
		c |= DTCAP_COL_PROBE;
	if (f->has_since || f->has_until)
		c |= DTCAP_COL_TS;
	if (f->ctx_mask)
		c |= DTCAP_COL_CTX;
	if (f->comm_ok)
		c |= DTCAP_COL_COMM;
	if (f->probe_ok)
		c |= DTCAP_COL_PROBE;
	for (int x = 0; x < FLT_XN; x++)
		if ((f->xset | f->xrng) >> x & 1)
			c |= xcol[x];
	return c;
}

static int in_list(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* A block's values of the per-context columns, as rows (b->pid...) or
 * once per context (b->dict); NULL where not read. */
struct ctx_vals {
	const uint32_t	*v[FLT_XN];	/* by FLT_X_* */
};

static const uint32_t *row_col(const struct dtcap_block *b, int x)
{
	switch (x) {
	case FLT_X_PID: return b->pid;
	case FLT_X_TID: return b->tid;
	case FLT_X_KSTACK: return b->kstack;
	case FLT_X_USTACK: return b->ustack;
	case FLT_X_FLAGS: return b->flags;
	case FLT_X_PROBE: return b->probe;
	default: return b->comm;
	}
}

int flt_match_x(const struct flt_filter *f, const struct dtcap_block *b, uint32_t i)
{
	unsigned m = f->xset | f->xrng;
	for (int x = 0; m >> x; x++) {
		if (!(m >> x & 1))
			continue;
		uint32_t v = row_col(b, x)[i];
		if ((f->xrng >> x & 1) && (v < f->xlo[x] || v > f->xhi[x]))
			return 0;
		if ((f->xset >> x & 1) && !flt_in_set(f->xv[x], f->nxv[x], v))
			return 0;
	}
	return 1;
}

/* ok[d] &= (v[d] is in the sorted set s of n values). */
static void and_set(uint8_t *ok, uint32_t nd, const uint32_t *v, const uint32_t *s, size_t n)
{
	if (n == 1) {	/* a loop the compiler vectorizes */
		const uint32_t s0 = s[0];
		for (uint32_t d = 0; d < nd; d++)
			ok[d] &= (uint8_t)(v[d] == s0);
		return;
	}
	for (uint32_t d = 0; d < nd; d++)
		if (ok[d])
			ok[d] = (uint8_t)flt_in_set(s, n, v[d]);
}

/* ok[d] &= (v[d] is one of the n values of an option's list). */
static void and_list(uint8_t *ok, uint32_t nd, const uint32_t *v, const uint32_t *s, size_t n)
{
	for (uint32_t d = 0; d < nd; d++)
		if (ok[d])
			ok[d] = (uint8_t)in_list(s, n, v[d]);
}

/* ok[d] &= tab[v[d]] (ids past the table's n: not passed). */
static void and_table(uint8_t *ok, uint32_t nd, const uint32_t *v, const uint8_t *tab,
		      uint32_t n)
{
	for (uint32_t d = 0; d < nd; d++)
		ok[d] &= (uint8_t)(v[d] < n && tab[v[d]]);
}

/*
 * The tests of the columns a block stores per context, on nd contexts'
 * values: into ok[d], returning how many pass.  Column by column, each
 * test a pass over its values (a loop the compiler vectorizes for one
 * value or a range) rather than every test per context: a block has
 * thousands of contexts.  The one implementation of these tests, on the
 * contexts' own values (flt_ctx_pass) or on a row of each (flt_select).
 */
static uint32_t ctx_tests(const struct flt_filter *f, const struct ctx_vals *cv, uint32_t nd,
			  uint8_t *ok)
{
	memset(ok, 1, nd);
	if (f->probe_ok)
		and_table(ok, nd, cv->v[FLT_X_PROBE], f->probe_ok, f->nprobe_ok);
	if (f->comm_ok)
		and_table(ok, nd, cv->v[FLT_X_COMM], f->comm_ok, f->ncomm_ok);
	for (int x = 0; x < FLT_XN; x++) {
		const uint32_t *v = cv->v[x];
		if (f->xrng >> x & 1) {
			const uint32_t lo = f->xlo[x], hi = f->xhi[x];
			for (uint32_t d = 0; d < nd; d++)
				ok[d] &= (uint8_t)((v[d] >= lo) & (v[d] <= hi));
		}
		if (f->xset >> x & 1)
			and_set(ok, nd, v, f->xv[x], f->nxv[x]);
	}
	if (f->npids)
		and_list(ok, nd, cv->v[FLT_X_PID], f->pids, f->npids);
	if (f->ntids)
		and_list(ok, nd, cv->v[FLT_X_TID], f->tids, f->ntids);
	uint32_t n = 0;
	for (uint32_t d = 0; d < nd; d++)
		n += ok[d];
	return n;
}

uint32_t flt_ctx_pass(const struct flt_filter *f, const struct dtcap_block *b, uint8_t *ok)
{
	const struct ctx_vals cv = { .v = {
		[FLT_X_PID] = b->dict.pid, [FLT_X_TID] = b->dict.tid,
		[FLT_X_KSTACK] = b->dict.kstack, [FLT_X_USTACK] = b->dict.ustack,
		[FLT_X_FLAGS] = b->dict.flags, [FLT_X_PROBE] = b->dict.probe,
		[FLT_X_COMM] = b->dict.comm,
	} };
	return ctx_tests(f, &cv, b->ndict, ok);
}

uint32_t flt_select(const struct flt_filter *f, const struct dtcap_block *b, uint32_t *sel)
{
	/* A filter on a column the block stores per context had it decode
	 * its contexts (cidx), their values given per row: a row of each
	 * context stands for it, its values gathered, and the tests made
	 * once per context (ctx_tests); the rows then cost a lookup, and
	 * the time and CPU tests. */
	const unsigned fc = flt_ctx_columns(f);
	const uint32_t nd = b->ndict;
	uint32_t *rep = NULL;	/* per context: a row of it, UINT32_MAX none */
	uint32_t *vals = NULL;	/* the gathered values, nd per column */
	uint8_t *ok = NULL;
	uint32_t n = 0;

	if (fc && b->cidx && nd) {
		rep = malloc((size_t)nd * sizeof(*rep));
		vals = malloc((size_t)nd * FLT_XN * sizeof(*vals));
		ok = malloc(nd);
	}
	if (!rep || !vals || !ok) {
		free(rep);
		free(vals);
		free(ok);
		for (uint32_t i = 0; i < b->rows; i++)
			if (flt_match_row(f, b, i))
				sel[n++] = i;
		return n;
	}
	memset(rep, 0xff, (size_t)nd * sizeof(*rep));
	for (uint32_t i = 0; i < b->rows; i++)
		if (b->cidx[i] < nd)
			rep[b->cidx[i]] = i;
	struct ctx_vals cv;
	for (int x = 0; x < FLT_XN; x++) {
		const uint32_t *col = row_col(b, x);
		cv.v[x] = NULL;
		if (!col || !(fc & xcol[x]))
			continue;
		uint32_t *v = vals + (size_t)x * nd;
		for (uint32_t d = 0; d < nd; d++)
			v[d] = rep[d] != UINT32_MAX ? col[rep[d]] : 0;
		cv.v[x] = v;
	}
	ctx_tests(f, &cv, nd, ok);
	int tsf = f->has_since || f->has_until;
	for (uint32_t i = 0; i < b->rows; i++) {
		uint32_t d = b->cidx[i];
		if (d >= nd) {
			if (flt_match_row(f, b, i))
				sel[n++] = i;
			continue;
		}
		if (!ok[d])
			continue;
		if (tsf && (b->ts[i] < f->tmin || b->ts[i] > f->tmax))
			continue;
		if (f->ncpus && !in_list(f->cpus, f->ncpus, b->cpu[i]))
			continue;
		if (f->ctx_mask && b->ctx && !(f->ctx_mask & flt_ctx_bit(b->ctx[i])))
			continue;
		sel[n++] = i;
	}
	free(rep);
	free(vals);
	free(ok);
	return n;
}

int flt_match_slow(const struct flt_filter *f, uint64_t ts, uint32_t cpu, uint32_t pid,
		   uint32_t tid, uint32_t probe, uint32_t comm)
{
	if (f->probe_ok && (probe >= f->nprobe_ok || !f->probe_ok[probe]))
		return 0;
	if (f->comm_ok && (comm >= f->ncomm_ok || !f->comm_ok[comm]))
		return 0;
	if ((f->has_since || f->has_until) && (ts < f->tmin || ts > f->tmax))
		return 0;
	if (f->npids && !in_list(f->pids, f->npids, pid))
		return 0;
	if (f->ntids && !in_list(f->tids, f->ntids, tid))
		return 0;
	if (f->ncpus && !in_list(f->cpus, f->ncpus, cpu))
		return 0;
	return 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* flt_scan and flt_scan_blocks: one walk, rows or whole blocks to fn. */
static int scan(struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
		flt_row_fn fn, flt_block_fn bfn, void *ctx, volatile sig_atomic_t *cancel,
		const char *what, char *err, size_t errlen)
{
	size_t nb = dtcap_nblocks(r);
	uint64_t total = 0, done = 0;
	int progress = what && isatty(2);
	double last = progress ? now_s() : 0;
	/* tests: DT_PROGRESS_AFTER=0 shows it on the smallest capture */
	const char *pa = getenv("DT_PROGRESS_AFTER");
	double after = pa && *pa ? atof(pa) : 0.2;
	int shown = 0, ret = 0;
	struct dtcap_block *b = dtcap_block_new();

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cols |= flt_columns(f);
	for (size_t i = 0; i < nb; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		total += bi ? bi->rows : 0;
	}
	for (size_t i = 0; i < nb && !ret; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		if (cancel && *cancel) {
			snprintf(err, errlen, "interrupted");
			ret = FLT_SCAN_CANCELLED;
			break;
		}
		if (progress) {
			double t = now_s();
			/* Only runs longer than a moment get a progress line. */
			if (t - last >= after) {
				fprintf(stderr, "\r%s: %3.0f%% (%" PRIu64 " of %" PRIu64 " events)",
					what, total ? 100.0 * (double)done / (double)total : 100.0,
					done, total);
				last = t;
				shown = 1;
			}
		}
		done += bi ? bi->rows : 0;
		if (flt_block_skip(f, bi))
			continue;
		if (dtcap_read_block(r, i, cols, b)) {
			snprintf(err, errlen, "%s", dtcap_reader_error(r));
			ret = -1;
			break;
		}
		if (bfn) {
			ret = bfn(ctx, b, i);
			continue;
		}
		for (uint32_t row = 0; row < b->rows; row++) {
			if (!flt_match_row(f, b, row))
				continue;
			if ((ret = fn(ctx, b, row)) != 0)
				break;
		}
	}
	if (shown)
		fputs("\r\033[K", stderr);
	dtcap_block_free(b);
	if (ret > 0 || (ret < -1 && ret != FLT_SCAN_CANCELLED))
		snprintf(err, errlen, "stopped");
	return ret;
}

int flt_scan(struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
	     flt_row_fn fn, void *ctx, volatile sig_atomic_t *cancel, const char *what,
	     char *err, size_t errlen)
{
	return scan(r, f, cols, fn, NULL, ctx, cancel, what, err, errlen);
}

int flt_scan_blocks(struct dtcap_reader *r, const struct flt_filter *f, unsigned cols,
		    flt_block_fn fn, void *ctx, volatile sig_atomic_t *cancel,
		    const char *what, char *err, size_t errlen)
{
	if (flt_active(f)) {
		snprintf(err, errlen, "internal error: a block walk with row filters");
		return -1;
	}
	return scan(r, f, cols, NULL, fn, ctx, cancel, what, err, errlen);
}
