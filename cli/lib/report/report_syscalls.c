/*
 * report_syscalls.c - the system call summary (engine.h rpt_syscalls):
 * strace -c and perf trace -s in one table, from the syscall entry/return
 * pairs of span_model.c.  Per syscall (and per comm or pid with --by):
 * calls, errors by errno name, total, average, min, max, standard
 * deviation and p99 time.  Entries without their return (exit, exit_group,
 * calls still running at the end) are counted apart, not as calls.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "par_run.h"
#include "report.h"
#include "util.h"


struct row {
	uint64_t	key, calls, errors, total, min, max, p99;
	double		sd;
	char		errs[256];	/* "ENOENT 2, EBADF 1" */
};

static int
by_outer_total(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if ((a->key >> 32) != (b->key >> 32))
		return (a->key >> 32) < (b->key >> 32) ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

static int
by_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void
sys_name(const struct dtcap_reader *r, uint32_t probe, char *out, size_t len)
{
	const struct dtcap_probe *p = dtcap_probe_by_id(r, probe);
	const char *n = p ? p->name : "?", *e;

	if (!strncmp(n, "syscall:", 8))
		n += 8;
	e = strrchr(n, ':');
	snprintf(out, len, "%.*s", e ? (int)(e - n) : (int)strlen(n), n);
}

static void
errs_text(uint32_t *e, size_t n, char *out, size_t len)
{
	size_t k = 0;

	out[0] = '\0';
	qsort(e, n, sizeof(*e), by_u32);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && e[j] == e[i])
			j++;
		const char *nm = e[i] < 4096 ? strerrorname_np((int)e[i]) : NULL;
		char num[16];
		if (nm == NULL) {
			snprintf(num, sizeof(num), "errno %u", e[i]);
			nm = num;
		}
		if (k < len)
			k += (size_t)snprintf(out + k, len - k, "%s%s %zu", k ? ", " : "", nm, j - i);
		i = j;
	}
}

static void
outer_label(const struct dtcap_reader *r, int by, uint32_t k, char *out, size_t len)
{
	const char *c;
	if (by == RPT_SYS_COMM) {
		c = dtcap_comm(r, k);
		snprintf(out, len, "comm %s", c && *c ? c : "[unknown]");
	} else if (by == RPT_SYS_PID) {
		snprintf(out, len, "pid %u", k);
	} else {
		out[0] = '\0';
	}
}

/* The pairs' keys, durations and errnos, a range of them (rpt_par_for). */
struct keys {
	const struct rpt_spans *sp;	/* [I] */
	int		by;		/* [I] */
	uint64_t	*keys, *dur;	/* by pair: each range writes its own */
	uint32_t	*err;
};

static void
keys_part(void *ctx, size_t lo, size_t hi)
{
	struct keys *kx = ctx;

	for (size_t i = lo; i < hi; i++) {
		const struct rpt_span *s = &kx->sp->v[i];
		uint32_t outer = kx->by == RPT_SYS_COMM ? s->comm : kx->by == RPT_SYS_PID ? s->pid : 0;
		kx->keys[i] = (uint64_t)outer << 32 | s->probe;
		kx->dur[i] = s->end - s->start;
		kx->err[i] = s->err ? s->err : (s->ret < 0 && s->ret >= -4095 ? (uint32_t)-s->ret : 0);
	}
}

int
rpt_syscalls(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_syscalls_opts *o,
	     FILE *out, volatile sig_atomic_t *cancel)
{
	struct rpt_spans sp;
	struct rpt_groups g = { 0 };
	struct row *rows = NULL;
	uint64_t *d = NULL, *keys = NULL, *dur = NULL;
	uint32_t *ev = NULL, *err = NULL;
	size_t nrows = 0;
	int ret;

	if ((ret = rpt_spans_build(c, "syscalls", f, NULL, RPT_SPANS_SYSCALLS, &sp, cancel)) != 0)
		return ret;
	ret = RPT_EXIT_ERROR;
	if (!(keys = malloc((sp.n + 1) * sizeof(*keys))) || !(dur = malloc((sp.n + 1) * sizeof(*dur))) ||
	    !(err = malloc((sp.n + 1) * sizeof(*err))))
		goto oom;
	struct keys kx = { .sp = &sp, .by = o->by, .keys = keys, .dur = dur, .err = err };
	rpt_par_for(sp.n, 65536, keys_part, &kx);
	/* the pairs are their keys, durations and errnos now: their pages go back first */
	free(sp.v);
	sp.v = NULL;
	sp.cap = 0;
	if (rpt_group_by(keys, dur, sp.n, &g) || !(rows = calloc(g.n + 1, sizeof(*rows))))
		goto oom;
	size_t maxg = 0;
	for (size_t gi = 0; gi < g.n; gi++)
		if (g.start[gi + 1] - g.start[gi] > maxg)
			maxg = g.start[gi + 1] - g.start[gi];
	if (!(d = malloc((maxg + 1) * sizeof(*d))) || !(ev = malloc((maxg + 1) * sizeof(*ev))))
		goto oom;
	for (size_t gi = 0; gi < g.n; gi++) {
		const uint32_t *ix = g.idx + g.start[gi];
		size_t n = g.start[gi + 1] - g.start[gi], ne = 0;
		struct row *rw = &rows[nrows++];
		double sum = 0, sq = 0;
		rw->key = g.key[gi];
		rw->calls = n;
		rw->min = dur[ix[0]];
		rw->max = dur[ix[n - 1]];
		for (size_t k = 0; k < n; k++) {
			d[k] = dur[ix[k]];
			rw->total += d[k];
			sum += (double)d[k];
			if (err[ix[k]])
				ev[ne++] = err[ix[k]];
		}
		double mean = sum / (double)rw->calls;
		for (size_t k = 0; k < n; k++)
			sq += ((double)d[k] - mean) * ((double)d[k] - mean);
		rw->sd = sqrt(sq / (double)rw->calls);
		rw->p99 = rpt_percentile(d, rw->calls, 0.99);
		rw->errors = ne;
		errs_text(ev, ne, rw->errs, sizeof(rw->errs));
	}
	qsort(rows, nrows, sizeof(*rows), by_outer_total);
	if (o->json) {
		fprintf(out, "{\"capture\":");
		dtu_json_str(out, c->path);
		fprintf(out, ",\"syscalls\":[");
	}
	for (size_t i = 0; i < nrows; i++) {
		const struct row *rw = &rows[i];
		char nm[DTCAP_PROBENAMELEN], ol[64];
		sys_name(c->r, (uint32_t)rw->key, nm, sizeof(nm));
		outer_label(c->r, o->by, (uint32_t)(rw->key >> 32), ol, sizeof(ol));
		if (o->json) {
			fprintf(out, "%s{\"syscall\":", i ? "," : "");
			dtu_json_str(out, nm);
			if (o->by == RPT_SYS_COMM) {
				fprintf(out, ",\"comm\":");
				dtu_json_str(out, ol + 5);
			} else if (o->by == RPT_SYS_PID) {
				fprintf(out, ",\"pid\":%s", ol + 4);
			}
			fprintf(out, ",\"calls\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"errnos\":",
				rw->calls, rw->errors);
			dtu_json_str(out, rw->errs);
			fprintf(out, ",\"total_ns\":%" PRIu64 ",\"avg_ns\":%.0f,\"min_ns\":%" PRIu64
				",\"max_ns\":%" PRIu64 ",\"stddev_ns\":%.0f,\"p99_ns\":%" PRIu64 "}",
				rw->total, (double)rw->total / (double)rw->calls, rw->min, rw->max,
				rw->sd, rw->p99);
			continue;
		}
		if (i == 0 || (rows[i - 1].key >> 32) != (rw->key >> 32)) {
			if (ol[0])
				fprintf(out, "%s%s\n", i ? "\n" : "", ol);
			fprintf(out, "%-20s %9s %7s %12s %10s %10s %10s %10s %10s  %s\n", "syscall",
				"calls", "errors", "total(ms)", "avg(us)", "min(us)", "max(us)",
				"stddev(us)", "p99(us)", "errors by errno");
		}
		fprintf(out, "%-20s %9" PRIu64 " %7" PRIu64 " %12.3f %10.3f %10.3f %10.3f %10.3f "
			"%10.3f  %s\n", nm, rw->calls, rw->errors, (double)rw->total / 1e6,
			(double)rw->total / (double)rw->calls / 1e3, (double)rw->min / 1e3,
			(double)rw->max / 1e3, rw->sd / 1e3, (double)rw->p99 / 1e3, rw->errs);
	}
	uint64_t nent = 0, nret = 0;
	for (size_t i = 0; i < sp.nu; i++)
		*(sp.u[i].entry ? &nent : &nret) += 1;
	if (o->json) {
		fprintf(out, "],\"entries_without_return\":%" PRIu64 ",\"returns_without_entry\":%"
			PRIu64 "}\n", nent, nret);
	} else {
		if (nrows == 0)
			fprintf(out, "(no syscall entry/return pairs)\n");
		if (nent || nret)
			fprintf(out, "\nnot counted: %" PRIu64 " entries without their return (exit, "
				"exit_group, calls running at the end), %" PRIu64 " returns without "
				"their entry (calls begun before recording, execve)\n", nent, nret);
	}
	rpt_note_empty("syscalls", c->path, sp.n + sp.nu, flt_active(f));
	ret = 0;
	goto out;
oom:
	rpt_err("syscalls", "%s: out of memory", c->path);
out:
	rpt_groups_free(&g);
	free(keys);
	free(dur);
	free(err);
	free(d);
	free(ev);
	free(rows);
	rpt_spans_free(&sp);
	return ret;
}
