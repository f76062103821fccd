/*
 * report_latency.c - latency distributions of entry/return pairs (engine.h
 * rpt_latency): per probe, or per probe and comm, pid or tid, the count,
 * percentiles, maximum and a DTrace-style quantize histogram in text, or
 * one JSON document.  Pairs come from span_model.c; each group's
 * durations are sorted once, so percentiles are exact (nearest rank).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "par_run.h"
#include "report.h"
#include "util.h"

const char *const rpt_latency_keys[] = { "probe", "comm", "pid", "tid", NULL };



static uint64_t
group_key(int by, uint32_t probe, uint32_t comm, uint32_t pid, uint32_t tid)
{
	uint32_t k = by == RPT_LAT_COMM ? comm : by == RPT_LAT_PID ? pid : by == RPT_LAT_TID ? tid : 0;
	return (uint64_t)probe << 32 | k;
}

/* Nearest rank: the smallest value with at least q of them at or below. */
uint64_t
rpt_percentile(const uint64_t *sorted, size_t n, double q)
{
	size_t r;

	if (n == 0)
		return 0;
	r = (size_t)(q * (double)n + 0.999999999);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return sorted[r - 1];
}

/* The pair's name: "syscall:read" of "syscall:read:entry". */
static void
pair_name(const struct dtcap_reader *r, uint32_t probe, char *out, size_t len)
{
	const struct dtcap_probe *p = dtcap_probe_by_id(r, probe);
	const char *n = p ? p->name : "?";
	size_t l = strlen(n);

	if (l > 6 && strcmp(n + l - 6, ":entry") == 0)
		l -= 6;
	snprintf(out, len, "%.*s", (int)l, n);
}

static void
group_label(const struct dtcap_reader *r, int by, uint32_t k, char *out, size_t len)
{
	const char *c;

	switch (by) {
	case RPT_LAT_COMM:
		c = dtcap_comm(r, k);
		snprintf(out, len, "%s", c && *c ? c : "[unknown]");
		break;
	case RPT_LAT_PID:
	case RPT_LAT_TID:
		snprintf(out, len, "%u", k);
		break;
	default:
		out[0] = '\0';
	}
}

/* log2 buckets of microseconds, or linear buckets of width ns */
struct hist {
	uint64_t	*cnt;
	size_t		n;
	uint64_t	width;		/* linear: ns; 0: log2 of us */
};

static size_t
bucket_of(const struct hist *h, uint64_t ns)
{
	if (h->width)
		return (size_t)(ns / h->width);
	uint64_t us = ns / 1000;
	size_t b = 0;
	while (us) {	/* bucket b holds [2^(b-1), 2^b) us; 0 holds < 1 us */
		us >>= 1;
		b++;
	}
	return b;
}

static uint64_t
bucket_lo_ns(const struct hist *h, size_t b)
{
	if (h->width)
		return (uint64_t)b * h->width;
	return b == 0 ? 0 : (1ULL << (b - 1)) * 1000;
}

static int
hist_fill(struct hist *h, const uint64_t *d, size_t n, uint64_t width)
{
	h->width = width;
	h->n = n ? bucket_of(h, d[n - 1]) + 1 : 0;
	if (h->width && h->n > 100000) {
		/* linear buckets too narrow for the range: not drawn */
		h->n = 0;
		h->cnt = NULL;
		return 1;
	}
	if ((h->cnt = calloc(h->n + 1, sizeof(*h->cnt))) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		h->cnt[bucket_of(h, d[i])]++;
	return 0;
}

/* A duration with 4 significant digits at most: "20.06ms", "873ns". */
static const char *
fmt_dur(uint64_t ns, char *buf, size_t len)
{
	static const struct { double div; const char *unit; } u[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
	};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if ((double)ns >= u[i].div) {
			double v = (double)ns / u[i].div;
			snprintf(buf, len, "%.*f%s", v >= 100 ? 1 : v >= 10 ? 2 : 3, v, u[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64 "ns", ns);
	return buf;
}

static void
fmt_us(uint64_t ns, char *buf, size_t len)
{
	if (ns % 1000 == 0)
		snprintf(buf, len, "%" PRIu64, ns / 1000);
	else
		snprintf(buf, len, "%.3f", (double)ns / 1000.0);
}

/* DTrace's quantize: a row per bucket from the first to the last used,
 * with one empty row either side, bars of 40 @. */
static void
hist_text(FILE *out, const struct hist *h, uint64_t total)
{
	size_t lo = 0, hi = h->n;
	char v[32];

	while (lo < h->n && h->cnt[lo] == 0)
		lo++;
	while (hi > lo && h->cnt[hi - 1] == 0)
		hi--;
	if (lo > 0)
		lo--;
	fprintf(out, "  %14s  %-40s %s\n", "value (us)", "---------- Distribution ----------",
		"count");
	for (size_t b = lo; b <= hi && b <= h->n; b++) {
		uint64_t c = b < h->n ? h->cnt[b] : 0;
		unsigned bars = total ? (unsigned)((c * 40 + total / 2) / total) : 0;
		char bar[41];
		memset(bar, ' ', 40);
		memset(bar, '@', bars);
		bar[40] = '\0';
		fmt_us(bucket_lo_ns(h, b), v, sizeof(v));
		fprintf(out, "  %14s |%s %" PRIu64 "\n", v, bar, c);
	}
}

/* The pairs' keys and durations, a range of them (rpt_par_for). */
struct keys {
	const struct rpt_spans *sp;	/* [I] */
	int		by;		/* [I] */
	uint64_t	*keys, *dur;	/* by pair: each range writes its own */
};

static void
keys_part(void *ctx, size_t lo, size_t hi)
{
	struct keys *kx = ctx;

	for (size_t i = lo; i < hi; i++) {
		const struct rpt_span *s = &kx->sp->v[i];
		kx->keys[i] = group_key(kx->by, s->probe, s->comm, s->pid, s->tid);
		kx->dur[i] = s->end - s->start;
	}
}

int
rpt_latency(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_latency_opts *o,
	    FILE *out, volatile sig_atomic_t *cancel)
{
	struct rpt_spans sp;
	struct rpt_groups g = { 0 };
	uint64_t *d = NULL, *unm = NULL, *keys = NULL, *dur = NULL;
	size_t ng = 0;
	int ret;

	if ((ret = rpt_spans_build(c, "latency", f, o->glob, RPT_SPANS_NORET, &sp, cancel)) != 0)
		return ret;
	ret = RPT_EXIT_ERROR;
	if ((keys = malloc((sp.n + 1) * sizeof(*keys))) == NULL ||
	    (dur = malloc((sp.n + 1) * sizeof(*dur))) == NULL)
		goto oom;
	struct keys kx = { .sp = &sp, .by = o->by, .keys = keys, .dur = dur };
	rpt_par_for(sp.n, 65536, keys_part, &kx);
	/* the pairs are their keys and durations now: their pages go back first */
	free(sp.v);
	sp.v = NULL;
	sp.cap = 0;
	if (rpt_group_by(keys, dur, sp.n, &g))
		goto oom;
	size_t maxg = 0;
	for (size_t gi = 0; gi < g.n; gi++)
		if (g.start[gi + 1] - g.start[gi] > maxg)
			maxg = g.start[gi + 1] - g.start[gi];
	if ((d = malloc((maxg + 1) * sizeof(*d))) == NULL)
		goto oom;
	/* unmatched entries by group, looked up by a sorted key list */
	if ((unm = calloc(sp.nu + 1, sizeof(*unm))) == NULL)
		goto oom;
	for (size_t i = 0; i < sp.nu; i++)
		unm[i] = sp.u[i].entry ? group_key(o->by, sp.u[i].probe, sp.u[i].comm, sp.u[i].pid,
						   sp.u[i].tid) : UINT64_MAX;
	uint64_t nret_unmatched = 0;
	for (size_t i = 0; i < sp.nu; i++)
		nret_unmatched += !sp.u[i].entry;

	if (o->json)
		fprintf(out, "{\"capture\":");
	if (o->json) {
		dtu_json_str(out, c->path);
		fprintf(out, ",\"by\":\"%s\",\"unmatched_returns\":%" PRIu64 ",\"groups\":[",
			rpt_latency_keys[o->by], nret_unmatched);
	}
	for (size_t gi = 0; gi < g.n; gi++) {
		size_t n = g.start[gi + 1] - g.start[gi];
		for (size_t k = 0; k < n; k++)
			d[k] = dur[g.idx[g.start[gi] + k]];
		uint64_t key = g.key[gi], nun = 0;
		for (size_t k = 0; k < sp.nu; k++)	/* few: entries cut off at the end */
			nun += unm[k] == key;
		char pname[DTCAP_PROBENAMELEN], glabel[64];
		pair_name(c->r, (uint32_t)(key >> 32), pname, sizeof(pname));
		group_label(c->r, o->by, (uint32_t)key, glabel, sizeof(glabel));
		uint64_t p50 = rpt_percentile(d, n, 0.50), p90 = rpt_percentile(d, n, 0.90),
			 p99 = rpt_percentile(d, n, 0.99), p999 = rpt_percentile(d, n, 0.999),
			 mx = d[n - 1], mn = d[0];
		struct hist h;
		int hr = hist_fill(&h, d, n, o->hist_width);
		if (hr < 0)
			goto oom;
		if (o->json) {
			fprintf(out, "%s{\"probe\":", ng ? "," : "");
			dtu_json_str(out, pname);
			if (o->by != RPT_LAT_PROBE) {
				fprintf(out, ",\"%s\":", rpt_latency_keys[o->by]);
				if (o->by == RPT_LAT_COMM)
					dtu_json_str(out, glabel);
				else
					fprintf(out, "%s", glabel);
			}
			fprintf(out, ",\"count\":%zu,\"unmatched\":%" PRIu64 ",\"min_ns\":%" PRIu64
				",\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
				",\"p99_9_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"hist\":[", n, nun, mn,
				p50, p90, p99, p999, mx);
			int first = 1;
			for (size_t b = 0; b < h.n; b++) {
				if (!h.cnt[b])
					continue;
				fprintf(out, "%s{\"lo_ns\":%" PRIu64 ",\"count\":%" PRIu64 "}",
					first ? "" : ",", bucket_lo_ns(&h, b), h.cnt[b]);
				first = 0;
			}
			fprintf(out, "]}");
		} else {
			char a[5][32];
			fmt_dur(p50, a[0], sizeof(a[0]));
			fmt_dur(p90, a[1], sizeof(a[1]));
			fmt_dur(p99, a[2], sizeof(a[2]));
			fmt_dur(p999, a[3], sizeof(a[3]));
			fmt_dur(mx, a[4], sizeof(a[4]));
			fprintf(out, "%s%s%s%s%s%s\n", ng ? "\n" : "", pname, glabel[0] ? "  " : "",
				glabel[0] ? rpt_latency_keys[o->by] : "", glabel[0] ? "=" : "", glabel);
			fprintf(out, "  count %zu  unmatched %" PRIu64 "  p50 %s  p90 %s  p99 %s  "
				"p99.9 %s  max %s\n", n, nun, a[0], a[1], a[2], a[3], a[4]);
			if (hr == 0)
				hist_text(out, &h, n);
			else
				fprintf(out, "  (no histogram: more than 100000 buckets of that width)\n");
		}
		free(h.cnt);
		ng++;
	}
	/* groups whose every entry went unreturned still say so */
	for (size_t k = 0; k < sp.nu; k++) {
		uint64_t key = unm[k];
		int seen = key == UINT64_MAX;
		for (size_t x = 0; x < k && !seen; x++)
			seen = unm[x] == key;
		if (!seen && g.n) {
			/* printed above if it has pairs: the groups are in key order */
			size_t lo = 0, hi = g.n;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (g.key[mid] < key)
					lo = mid + 1;
				else
					hi = mid;
			}
			seen = lo < g.n && g.key[lo] == key;
		}
		if (seen)
			continue;
		uint64_t nun = 0;
		for (size_t x = k; x < sp.nu; x++)
			nun += unm[x] == key;
		char pname[DTCAP_PROBENAMELEN], glabel[64];
		pair_name(c->r, (uint32_t)(key >> 32), pname, sizeof(pname));
		group_label(c->r, o->by, (uint32_t)key, glabel, sizeof(glabel));
		if (o->json) {
			fprintf(out, "%s{\"probe\":", ng ? "," : "");
			dtu_json_str(out, pname);
			if (o->by != RPT_LAT_PROBE) {
				fprintf(out, ",\"%s\":", rpt_latency_keys[o->by]);
				if (o->by == RPT_LAT_COMM)
					dtu_json_str(out, glabel);
				else
					fprintf(out, "%s", glabel);
			}
			fprintf(out, ",\"count\":0,\"unmatched\":%" PRIu64 "}", nun);
		} else {
			fprintf(out, "%s%s%s%s%s%s\n  count 0  unmatched %" PRIu64 " (entries "
				"without their return)\n", ng ? "\n" : "", pname, glabel[0] ? "  " : "",
				glabel[0] ? rpt_latency_keys[o->by] : "", glabel[0] ? "=" : "", glabel,
				nun);
		}
		ng++;
	}
	if (o->json)
		fprintf(out, "]}\n");
	else if (nret_unmatched)
		fprintf(out, "\n%" PRIu64 " returns without their entry (recorded after it)\n",
			nret_unmatched);
	if (ng == 0 && !o->json)
		fprintf(out, "(no entry/return pairs)\n");
	rpt_note_empty("latency", c->path, sp.n + sp.nu, flt_active(f) || o->glob);
	ret = 0;
	goto out;
oom:
	rpt_err("latency", "%s: out of memory", c->path);
out:
	rpt_groups_free(&g);
	free(keys);
	free(dur);
	free(d);
	free(unm);
	rpt_spans_free(&sp);
	return ret;
}
