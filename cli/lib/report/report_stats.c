/*
 * report_stats.c - the stats engine (engine.h rpt_stats): what was
 * recorded and whether every event the kernel produced is accounted for.
 * The command line is cmd_stats.c's.
 *
 * Accounting uses the last counter snapshot (the final tally dtrec writes
 * after draining the rings):
 *	events in the capture + recorder losses == kernel read   (OK / MISMATCH)
 *	kernel produced == read + dropped                      (per CPU)
 * Drops are events the kernel could not put in a full ring; they are never
 * in the capture, so they are shown as a share of produced and flagged.
 * Filters narrow the event tables only; the accounting is always of the
 * whole capture.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
#include "filter.h"
#include "report.h"
#include "scan_pool.h"
#include "termsafe.h"
#include "util.h"

struct pidc {
	uint32_t	pid, comm;
	uint64_t	n;
	/* stats_block: the block and row of comm, so the latest name wins */
	size_t		cblk;
	uint32_t	crow;
};

struct st {
	uint64_t	*byprobe;
	uint32_t	nprobe;
	uint64_t	*bycpu;
	uint32_t	ncpu;
	uint64_t	*bycomm;
	uint32_t	ncomm;
	struct pidc	*pids;		/* in order of first event */
	size_t		pcap, pn;
	struct dt_htab	pidx;		/* pid -> index in pids */
	uint64_t	matched;
	uint64_t	tmin, tmax;
	int		oom;
	/* stats_block's per-block scratch, by context */
	uint32_t	*cnt, *last;
	size_t		dcap;
	const struct dtcap_reader *r;	/* [I] for block index entries */
};

/* Make (*v)[idx] a counter; new ones are zero. */
static int grow_u64(uint64_t **v, uint32_t *n, uint32_t idx)
{
	uint32_t old = *n;

	if (DT_GROW(*v, *n, idx, 1, 16))
		return -1;
	memset(*v + old, 0, (*n - old) * sizeof(**v));
	return 0;
}

static uint64_t pidc_hash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct st *)ctx)->pids[e].pid);
}

/*
 * What wrote the capture and on which machine (format 3; "?" for older
 * files), and how far the wall clock moved against the monotonic one
 * between the first and last clock pair: NTP steps and drift show here.
 */
static void print_meta(FILE *o, const struct dtcap_reader *r, int json)
{
	const struct dtcap_host *h = dtcap_host(r);
	uint32_t compat = 0, incompat = 0, v = dtcap_format_version(r, &compat, &incompat);
	size_t nc = dtcap_nclocks(r);
	uint64_t m0 = 0, m1 = 0;
	int64_t w0 = 0, w1 = 0;
	dtcap_clock_at(r, 0, &m0, &w0);
	dtcap_clock_at(r, nc ? nc - 1 : 0, &m1, &w1);
	/* (w1 - m1) - (w0 - m0): offset change, in ns */
	double drift_ms = (double)((w1 - w0) - (int64_t)(m1 - m0)) / 1e6;
	if (json) {
		fprintf(o, ",\"format\":%u,\"tool_version\":", v);
		dtu_json_str(o, h->tool_version);
		fputs(",\"kernel_build_id\":", o);
		dtu_json_str(o, h->kernel_build_id);
		fputs(",\"cpu_model\":", o);
		dtu_json_str(o, h->cpu_model);
		fputs(",\"boot_id\":", o);
		dtu_json_str(o, h->boot_id);
		fputs(",\"source\":", o);
		dtu_json_str(o, h->source);
		fprintf(o, ",\"clock_pairs\":%zu,\"clock_drift_ms\":%.3f,\"salvaged\":[", nc,
			nc > 1 ? drift_ms : 0.0);
		for (size_t i = 0; i < dtcap_ndamage(r); i++) {
			const struct dtcap_damage *d = dtcap_damage_at(r, i);
			fprintf(o, "%s{\"offset\":%" PRIu64 ",\"length\":%" PRIu64 ",\"what\":",
				i ? "," : "", d->offset, d->length);
			dtu_json_str(o, d->what);
			if (d->events_lost == UINT64_MAX)
				fputs(",\"events_lost\":null}", o);
			else
				fprintf(o, ",\"events_lost\":%" PRIu64 "}", d->events_lost);
		}
		fputs("]", o);
		return;
	}
	/* every string here is the capture's: escaped for the terminal */
	fprintf(o, "written by   dt %s, format %u (features %#x), %s source\n",
		h->tool_version[0] ? dtt_str(h->tool_version) : "?", v, compat,
		h->source[0] ? dtt_str(h->source) : "unknown");
	fprintf(o, "machine      %s; kernel build-id %s; boot %s\n",
		h->cpu_model[0] ? dtt_str(h->cpu_model) : "CPU ?",
		h->kernel_build_id[0] ? dtt_str(h->kernel_build_id) : "?",
		h->boot_id[0] ? dtt_str(h->boot_id) : "?");
	if (nc > 1)
		fprintf(o, "clock        %zu (monotonic, wall) pairs; wall moved %+.3f ms against "
			"monotonic\n", nc, drift_ms);
	else
		fprintf(o, "clock        one (monotonic, wall) pair, at the start\n");
	/* --salvage: every range it skipped, not just the warning's first */
	for (size_t i = 0; i < dtcap_ndamage(r); i++) {
		const struct dtcap_damage *d = dtcap_damage_at(r, i);
		char lost[48] = "events lost unknown";
		if (d->events_lost != UINT64_MAX)
			snprintf(lost, sizeof(lost), "%" PRIu64 " events lost", d->events_lost);
		fprintf(o, "SALVAGED     skipped bytes %" PRIu64 "..%" PRIu64 " (%s): %s\n",
			d->offset, d->offset + d->length, dtt_str(d->what), lost);
	}
}

/* pid's counter, new ones zero and in order of first event; NULL (and
 * s->oom) out of memory. */
static struct pidc *pid_entry(struct st *s, uint32_t pid)
{
	uint64_t h = dt_htab_hash_int(pid);
	uint32_t e;
	for (size_t k = dt_htab_first(&s->pidx, h); (e = dt_htab_at(&s->pidx, k)) != DT_HTAB_NONE;
	     k = dt_htab_next(&s->pidx, k))
		if (s->pids[e].pid == pid)
			return &s->pids[e];
	if (DT_GROW(s->pids, s->pcap, s->pn, 1, 1024) ||
	    dt_htab_add(&s->pidx, h, (uint32_t)s->pn, pidc_hash, s)) {
		s->oom = 1;
		return NULL;
	}
	struct pidc *p = &s->pids[s->pn++];
	*p = (struct pidc){ .pid = pid, .cblk = SIZE_MAX };
	return p;
}

static int stats_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct st *s = ctx;
	uint32_t probe = b->probe[i], cpu = b->cpu[i], comm = b->comm[i], pid = b->pid[i];

	if ((probe >= s->nprobe && grow_u64(&s->byprobe, &s->nprobe, probe)) ||
	    (cpu >= s->ncpu && grow_u64(&s->bycpu, &s->ncpu, cpu)) ||
	    (comm >= s->ncomm && grow_u64(&s->bycomm, &s->ncomm, comm))) {
		s->oom = 1;
		return 1;
	}
	s->byprobe[probe]++;
	s->bycpu[cpu]++;
	s->bycomm[comm]++;
	struct pidc *p = pid_entry(s, pid);
	if (!p)
		return 1;
	p->n++;
	if (comm)
		p->comm = comm;	/* the latest name: after exec it is the new one */
	uint64_t ts = b->ts[i];
	if (ts < s->tmin)
		s->tmin = ts;
	if (ts > s->tmax)
		s->tmax = ts;
	s->matched++;
	return 0;
}

/*
 * A whole block by context (no filters): the per-context columns counted
 * once per context, the CPU column per row, the times from the block's
 * index entry (the reader checks it against the rows).  A pid's name is
 * its latest row's that has one, as stats_row keeps it.
 */
static int stats_block(struct st *s, const struct dtcap_block *b, size_t blk,
		       const struct dtcap_blockinfo *bi)
{
	uint32_t nd = b->ndict, rows = b->rows;

	if (nd > s->dcap) {
		free(s->cnt);
		free(s->last);
		s->cnt = malloc(nd * sizeof(*s->cnt));
		s->last = malloc(nd * sizeof(*s->last));
		s->dcap = s->cnt && s->last ? nd : 0;
		if (!s->dcap)
			goto oom;
	}
	memset(s->cnt, 0, nd * sizeof(*s->cnt));
	for (uint32_t i = 0; i < rows; i++) {
		uint32_t c = b->cidx[i];
		s->cnt[c]++;
		s->last[c] = i;
	}
	uint32_t maxcpu = 0;
	for (uint32_t i = 0; i < rows; i++)
		maxcpu = b->cpu[i] > maxcpu ? b->cpu[i] : maxcpu;
	if (rows && maxcpu >= s->ncpu && grow_u64(&s->bycpu, &s->ncpu, maxcpu))
		goto oom;
	for (uint32_t i = 0; i < rows; i++)
		s->bycpu[b->cpu[i]]++;
	for (uint32_t c = 0; c < nd; c++) {
		uint32_t probe = b->dict.probe[c], comm = b->dict.comm[c];
		if (!s->cnt[c])
			continue;
		if ((probe >= s->nprobe && grow_u64(&s->byprobe, &s->nprobe, probe)) ||
		    (comm >= s->ncomm && grow_u64(&s->bycomm, &s->ncomm, comm)))
			goto oom;
		s->byprobe[probe] += s->cnt[c];
		s->bycomm[comm] += s->cnt[c];
		struct pidc *p = pid_entry(s, b->dict.pid[c]);
		if (!p)
			return 1;
		p->n += s->cnt[c];
		if (comm && (p->cblk != blk || s->last[c] > p->crow)) {
			p->comm = comm;
			p->cblk = blk;
			p->crow = s->last[c];
		}
	}
	if (rows) {
		s->tmin = bi->tmin < s->tmin ? bi->tmin : s->tmin;
		s->tmax = bi->tmax > s->tmax ? bi->tmax : s->tmax;
	}
	s->matched += rows;
	return 0;
oom:
	s->oom = 1;
	return 1;
}

/*
 * Without filters, from the blocks' summaries (BSUM) when every block has
 * one: no column decoded, the cost is the summaries' size.  1 when it
 * did the counting, 0 when some block lacks a summary (older captures),
 * -1 out of memory or interrupted (message in err).
 */
static int stats_summaries(struct st *s, const struct dtcap_reader *r,
			   volatile sig_atomic_t *cancel, char *err, size_t errlen)
{
	size_t nb = dtcap_nblocks(r);
	struct dtcap_blocksum bs;

	for (size_t i = 0; i < nb; i++)
		if (!dtcap_block_summary(r, i, &bs))
			return 0;
	for (size_t i = 0; i < nb; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		if ((i & 255) == 0 && cancel && *cancel) {
			snprintf(err, errlen, "interrupted");
			return -1;
		}
		dtcap_block_summary(r, i, &bs);
		/* ids are the reader's checked ones: below its limits */
		for (uint32_t k = 0; k < bs.nprobe; k++) {
			uint32_t id = (uint32_t)bs.probe[2 * k];
			if (id >= s->nprobe && grow_u64(&s->byprobe, &s->nprobe, id))
				goto oom;
			s->byprobe[id] += bs.probe[2 * k + 1];
		}
		for (uint32_t k = 0; k < bs.ncpu; k++) {
			uint32_t id = (uint32_t)bs.cpu[2 * k];
			if (id >= s->ncpu && grow_u64(&s->bycpu, &s->ncpu, id))
				goto oom;
			s->bycpu[id] += bs.cpu[2 * k + 1];
		}
		for (uint32_t k = 0; k < bs.ncomm; k++) {
			uint32_t id = (uint32_t)bs.comm[2 * k];
			if (id >= s->ncomm && grow_u64(&s->bycomm, &s->ncomm, id))
				goto oom;
			s->bycomm[id] += bs.comm[2 * k + 1];
		}
		for (uint32_t k = 0; k < bs.npid; k++) {
			struct pidc *p = pid_entry(s, (uint32_t)bs.pid[3 * k]);
			if (!p)
				goto oom;
			p->n += bs.pid[3 * k + 1];
			/* blocks in file order: a later block's name is the latest */
			if (bs.pid[3 * k + 2])
				p->comm = (uint32_t)bs.pid[3 * k + 2];
		}
		s->tmin = bi->tmin < s->tmin ? bi->tmin : s->tmin;
		s->tmax = bi->tmax > s->tmax ? bi->tmax : s->tmax;
		s->matched += bi->rows;
	}
	return 1;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The scan on the pool: a struct st per worker, merged in block order
 * into the caller's. */
static void *st_part_new(void *ctx)
{
	struct st *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->tmin = UINT64_MAX;
	s->r = ((const struct st *)ctx)->r;
	return s;
}

static void st_free(struct st *s)
{
	free(s->byprobe);
	free(s->bycpu);
	free(s->bycomm);
	free(s->pids);
	dt_htab_free(&s->pidx);
	free(s->cnt);
	free(s->last);
}

static void st_part_free(void *ctx, void *part)
{
	(void)ctx;
	st_free(part);
	free(part);
}

static int st_part_row(void *part, const struct dtcap_block *b, uint32_t row, char *err,
		       size_t errlen)
{
	if (!stats_row(part, b, row))
		return 0;
	snprintf(err, errlen, "out of memory");
	return 1;
}

static int st_part_block(void *part, const struct dtcap_block *b, size_t blk, char *err,
			 size_t errlen)
{
	struct st *s = part;

	if (!stats_block(s, b, blk, dtcap_block_info(s->r, blk)))
		return 0;
	snprintf(err, errlen, "out of memory");
	return 1;
}

static int add_u64s(uint64_t **v, uint32_t *n, const uint64_t *x, uint32_t nx)
{
	if (nx > *n && grow_u64(v, n, nx - 1))
		return -1;
	for (uint32_t i = 0; i < nx; i++)
		(*v)[i] += x[i];
	return 0;
}

static int st_merge(void *ctx, void *part)
{
	struct st *m = ctx;
	const struct st *s = part;

	if (add_u64s(&m->byprobe, &m->nprobe, s->byprobe, s->nprobe) ||
	    add_u64s(&m->bycpu, &m->ncpu, s->bycpu, s->ncpu) ||
	    add_u64s(&m->bycomm, &m->ncomm, s->bycomm, s->ncomm))
		return -1;
	for (size_t i = 0; i < s->pn; i++) {
		struct pidc *p = pid_entry(m, s->pids[i].pid);
		if (!p)
			return -1;
		p->n += s->pids[i].n;
		/* a later partial is later blocks: its name is the latest */
		if (s->pids[i].comm)
			p->comm = s->pids[i].comm;
	}
	m->matched += s->matched;
	m->tmin = s->tmin < m->tmin ? s->tmin : m->tmin;
	m->tmax = s->tmax > m->tmax ? s->tmax : m->tmax;
	return 0;
}

struct rank {
	uint64_t	n;
	uint32_t	key, aux;
};

static int rank_cmp(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void json_count(FILE *o, const struct dtcap_count *c)
{
	fprintf(o, "{\"produced\":%" PRIu64 ",\"read\":%" PRIu64 ",\"dropped\":%" PRIu64
		",\"skipped\":%" PRIu64 ",\"recursive\":%" PRIu64 ",\"nested\":%" PRIu64 "}",
		c->produced, c->read, c->dropped, c->skipped, c->recursive, c->nested);
}

static void fmt_wall(const struct dtcap_host *h, uint64_t ts, char *buf, size_t len)
{
	int64_t wall = (int64_t)ts + (h->clock_real_ns - (int64_t)h->clock_mono_ns);
	time_t sec = (time_t)(wall / 1000000000);
	struct tm tm;

	if (wall <= 0 || !gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/*
 * What a pid is called in a ranking.  pid 0 is every CPU's idle task
 * (swapper/0, swapper/1, ...): one name for it, as dtsh's top shows it.
 */
static const char *pid_name(const struct dtcap_reader *r, uint32_t pid, uint32_t comm)
{
	if (pid == 0)
		return DT_IDLE_NAME;
	return comm ? dtcap_comm(r, comm) : NULL;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The verdict first: drops must not hide below the tables. */
static void print_accounting(FILE *o, int have_counters, uint64_t nev,
			     const struct dtcap_count *rec, const struct dtcap_count *t,
			     const char *acct, int conserved)
{
	struct dtcap_count tot = *t;

	fprintf(o, "\naccounting (final counter snapshot, whole capture)\n");
	if (!have_counters) {
		fprintf(o, "  no counter snapshot in the capture: cannot check\n");
	} else {
		fprintf(o, "  events in capture %" PRIu64 " + recorder losses %" PRIu64
			" = %" PRIu64 ", kernel read %" PRIu64 ": %s\n", nev, rec->dropped + rec->skipped,
			nev + rec->dropped + rec->skipped, tot.read, acct);
		fprintf(o, "  kernel produced %" PRIu64 " = read + dropped: %s\n",
			tot.produced, conserved ? "OK" : "MISMATCH (rings not drained?)");
		if (tot.dropped)
			fprintf(o, "  *** DROPPED %" PRIu64 " events (%.2f%% of produced): rings "
				"were full; record with a bigger buffer or fewer probes ***\n",
				tot.dropped, pct(tot.dropped, tot.produced));
		else
			fprintf(o, "  dropped 0 (0.00%%)\n");
		if (rec->dropped)
			fprintf(o, "  *** RECORDER LOST %" PRIu64 " events it had read ***\n",
				rec->dropped);
		if (rec->skipped)
			fprintf(o, "  left out by the recorder as not its targets: %" PRIu64 "\n",
				rec->skipped);
		if (rec->ustack_dwarf || rec->ustack_fp_behind)
			fprintf(o, "  user stacks unwound with DWARF: %" PRIu64 " (%" PRIu64
				" stopped short of the program entry)\n", rec->ustack_dwarf,
				rec->ustack_dwarf_trunc);
		if (rec->ustack_fp_behind)
			fprintf(o, "  *** %" PRIu64 " samples kept their frame-pointer user stack "
				"(only the pc, for a program without frame pointers): "
				"unwinding fell behind ***\n", rec->ustack_fp_behind);
		if (tot.skipped)
			fprintf(o, "  timer ticks skipped (overruns): %" PRIu64 "\n", tot.skipped);
		if (tot.recursive)
			fprintf(o, "  recursion: %" PRIu64 " probe hits inside the tracer "
				"(not recorded), %" PRIu64 " nested events kept\n", tot.recursive,
				tot.nested);
	}
}

int rpt_stats(const struct rpt_cap *c, struct flt_filter *filt, const struct rpt_stats_opts *so,
	      FILE *o, volatile sig_atomic_t *cancel)
{
	struct dtcap_reader *r = c->r;
	const char *path = c->path;
	int json = so->json, all = so->all, ret = RPT_EXIT_ERROR;
	unsigned top = so->top;
	char err[512];
	struct st s = { 0 };
	struct rank *rk = NULL;
	struct dtcap_count *percpu_copy = NULL;

	const char *warn = dtcap_reader_warning(r);
	if (flt_resolve(filt, r, err, sizeof(err))) {
		rpt_err("stats", "%s: %s", path, err);
		goto out;
	}
	s.tmin = UINT64_MAX;
	s.r = r;
	struct dtsp_job job = { .part_new = st_part_new, .part_free = st_part_free,
				.merge = st_merge };
	unsigned cols = DTCAP_COL_CPU | DTCAP_COL_PID | DTCAP_COL_PROBE | DTCAP_COL_COMM;
	if (flt_active(filt))
		job.row = st_part_row, cols |= DTCAP_COL_TS;
	else
		job.block = st_part_block, cols |= DTCAP_COL_BYCTX;
	int sr = flt_active(filt) ? 0 : stats_summaries(&s, r, cancel, err, sizeof(err));
	if (sr == 0)
		sr = dtsp_scan(r, filt, cols, &job, &s, cancel,
			       rpt_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err));
	else if (sr == 1)
		sr = 0;
	if (sr) {
		rpt_err("stats", "%s", err);
		goto out;
	}
	rpt_note_empty("stats", path, s.matched, flt_active(filt));

	const struct dtcap_host *h = dtcap_host(r);
	uint64_t nev = dtcap_nevents(r);

	/* The final counter snapshot. */
	size_t nsnap = dtcap_ncounters(r);
	uint64_t snap_ts = 0;
	uint32_t ncpus = 0;
	struct dtcap_count rec = { 0 }, tot = { 0 };
	const struct dtcap_count *pc = NULL;
	if (nsnap) {
		pc = dtcap_counters_at(r, nsnap - 1, &snap_ts, &ncpus, &rec);
		if (!pc)
			ncpus = 0;
	}
	if (ncpus) {
		percpu_copy = calloc(ncpus, sizeof(*percpu_copy));
		if (!percpu_copy) {
			rpt_err("stats", "out of memory");
			goto out;
		}
		memcpy(percpu_copy, pc, ncpus * sizeof(*pc));
	}
	int conserved = 1;
	for (uint32_t i = 0; i < ncpus; i++) {
		const struct dtcap_count *x = &percpu_copy[i];
		tot.produced += x->produced, tot.read += x->read, tot.dropped += x->dropped;
		tot.skipped += x->skipped, tot.recursive += x->recursive, tot.nested += x->nested;
		if (x->produced != x->read + x->dropped)
			conserved = 0;
	}
	int have_counters = ncpus > 0;
	/* the recorder's losses and what it left out as not its targets */
	int acct_ok = have_counters && nev + rec.dropped + rec.skipped == tot.read;
	const char *acct = !have_counters ? "NO_COUNTERS" : acct_ok ? "OK" : "MISMATCH";

	/* Span: from the recording start to the final snapshot (or last event). */
	uint64_t first = UINT64_MAX, last = 0;
	for (size_t i = 0; i < dtcap_nblocks(r); i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		if (!bi || !bi->rows)
			continue;
		if (bi->tmin < first)
			first = bi->tmin;
		if (bi->tmax > last)
			last = bi->tmax;
	}
	uint64_t start = h && h->start_ns ? h->start_ns : first;
	uint64_t end = snap_ts > last ? snap_ts : last;
	uint64_t dur = start != UINT64_MAX && end > start ? end - start : 0;
	char wall[64] = "?";
	if (h && start != UINT64_MAX)
		fmt_wall(h, start, wall, sizeof(wall));

	/* Rankings: comms and pids by matched events. */
	size_t nrk = (s.ncomm > s.pn ? s.ncomm : s.pn) + 1;
	rk = calloc(nrk, sizeof(*rk));
	if (!rk) {
		rpt_err("stats", "out of memory");
		goto out;
	}
	size_t ncr = 0, npr = 0;
	struct rank *crk = rk;

	size_t np = dtcap_nprobes(r);
	if (json) {
		fputs("{\"file\":", o);
		dtu_json_str(o, path);
		fputs(",\"host\":{\"hostname\":", o);
		dtu_json_str(o, h ? h->hostname : "");
		fputs(",\"kernel\":", o);
		dtu_json_str(o, h ? h->kernel : "");
		fprintf(o, ",\"ncpus\":%u,\"command\":", h ? h->ncpus : 0);
		dtu_json_str(o, h ? h->command : "");
		print_meta(o, r, 1);
		fprintf(o, ",\"start_ns\":%" PRIu64 ",\"start_wall\":", start == UINT64_MAX ? 0 : start);
		dtu_json_str(o, wall);
		fprintf(o, "},\"duration_ns\":%" PRIu64 ",\"events\":%" PRIu64
			",\"events_matched\":%" PRIu64 ",\"filtered\":%s,\"warning\":",
			dur, nev, s.matched, flt_active(filt) ? "true" : "false");
		if (warn)
			dtu_json_str(o, warn);
		else
			fputs("null", o);
		fputs(",\"probes\":[", o);
		for (size_t i = 0; i < np; i++) {
			const struct dtcap_probe *p = dtcap_probe_at(r, i);
			if (!p)
				continue;
			fprintf(o, "%s{\"id\":%u,\"name\":", i ? "," : "", p->id);
			dtu_json_str(o, p->name);
			fprintf(o, ",\"timer\":%s,\"events\":%" PRIu64 "}",
				p->flags & DT_PF_TIMER ? "true" : "false",
				p->id < s.nprobe ? s.byprobe[p->id] : 0);
		}
		fputs("],\"cpus\":[", o);
		uint32_t ncpu_rows = ncpus;
		for (uint32_t i = 0; i < s.ncpu; i++)
			if (s.bycpu[i] && i + 1 > ncpu_rows)
				ncpu_rows = i + 1;
		for (uint32_t i = 0; i < ncpu_rows; i++) {
			fprintf(o, "%s{\"cpu\":%u,\"events\":%" PRIu64 ",\"counters\":", i ? "," : "",
				i, i < s.ncpu ? s.bycpu[i] : 0);
			if (i < ncpus)
				json_count(o, &percpu_copy[i]);
			else
				fputs("null", o);
			fputc('}', o);
		}
		fputs("],\"comms\":[", o);
	}

	for (uint32_t i = 0; i < s.ncomm; i++)
		if (s.bycomm[i])
			crk[ncr++] = (struct rank){ s.bycomm[i], i, 0 };
	qsort(crk, ncr, sizeof(*crk), rank_cmp);
	if (json) {
		for (size_t i = 0; i < ncr && i < top; i++) {
			fputs(i ? ",{\"comm\":" : "{\"comm\":", o);
			dtu_json_str(o, crk[i].key ? dtcap_comm(r, crk[i].key) : "");
			fprintf(o, ",\"events\":%" PRIu64 "}", crk[i].n);
		}
		fputs("],\"pids\":[", o);
	} else {
		/* capture strings (host, command, probes, comms) are escaped:
		 * a comm must not move the cursor or forge a row */
		fprintf(o, "capture      %s\n", dtt_str(path));
		if (warn)
			fprintf(o, "WARNING      %s\n", dtt_str(warn));
		fprintf(o, "host         %s, kernel %s, %u CPUs\n", h ? dtt_str(h->hostname) : "?",
			h ? dtt_str(h->kernel) : "?", h ? h->ncpus : 0);
		fprintf(o, "command      %s\n", h && h->command[0] ? dtt_str(h->command) : "?");
		print_meta(o, r, 0);
		fprintf(o, "recorded     %s for %.3fs\n", wall, (double)dur / 1e9);
		fprintf(o, "events       %" PRIu64, nev);
		if (flt_active(filt))
			fprintf(o, " (%" PRIu64 " match the filters)", s.matched);
		fputc('\n', o);
		if (s.matched)
			fprintf(o, "event span   %.3fs .. %.3fs from the start\n",
				start != UINT64_MAX && s.tmin >= start ? (double)(s.tmin - start) / 1e9 : 0,
				start != UINT64_MAX && s.tmax >= start ? (double)(s.tmax - start) / 1e9 : 0);
		/* The verdict first: drops must not hide below the tables. */
		print_accounting(o, have_counters, nev, &rec, &tot, acct, conserved);
		/* Hundreds of probes never fire: the answer is in the ones that did. */
		size_t hidden = 0;
		fprintf(o, "\nprobes\n  %5s %12s %7s  %s\n", "id", "events", "%", "name");
		for (size_t i = 0; i < np; i++) {
			const struct dtcap_probe *p = dtcap_probe_at(r, i);
			if (!p)
				continue;
			uint64_t n = p->id < s.nprobe ? s.byprobe[p->id] : 0;
			if (!n && !all) {
				hidden++;
				continue;
			}
			fprintf(o, "  %5u %12" PRIu64 " %6.2f%%  %s%s\n", p->id, n, pct(n, s.matched),
				dtt_str(p->name), p->flags & DT_PF_TIMER ? "  (timer)" : "");
		}
		if (hidden)
			fprintf(o, "  (%zu probe%s without events not shown: --all)\n", hidden,
				hidden == 1 ? "" : "s");
		fprintf(o, "\nper CPU\n  %4s %12s %12s %12s %10s %7s %9s %9s %9s\n", "cpu",
			"events", "produced", "read", "dropped", "drop%", "skipped", "recursive",
			"nested");
		uint32_t ncpu_rows = ncpus;
		for (uint32_t i = 0; i < s.ncpu; i++)
			if (s.bycpu[i] && i + 1 > ncpu_rows)
				ncpu_rows = i + 1;
		hidden = 0;
		for (uint32_t i = 0; i < ncpu_rows; i++) {
			uint64_t n = i < s.ncpu ? s.bycpu[i] : 0;
			if (!n && !all && (i >= ncpus || !percpu_copy[i].produced)) {
				hidden++;
				continue;
			}
			if (i < ncpus) {
				const struct dtcap_count *x = &percpu_copy[i];
				fprintf(o, "  %4u %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64
					" %6.2f%% %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n", i, n,
					x->produced, x->read, x->dropped, pct(x->dropped, x->produced),
					x->skipped, x->recursive, x->nested);
			} else {
				fprintf(o, "  %4u %12" PRIu64 "   (no counters)\n", i, n);
			}
		}
		if (ncpus)
			fprintf(o, "  %4s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64
				" %6.2f%% %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n", "all", s.matched,
				tot.produced, tot.read, tot.dropped, pct(tot.dropped, tot.produced),
				tot.skipped, tot.recursive, tot.nested);
		if (hidden)
			fprintf(o, "  (%zu idle CPU%s not shown: --all)\n", hidden, hidden == 1 ? "" : "s");
		fprintf(o, "\ntop comms\n  %12s %7s  %s\n", "events", "%", "comm");
		for (size_t i = 0; i < ncr && i < top; i++) {
			const char *cm = crk[i].key ? dtcap_comm(r, crk[i].key) : NULL;
			fprintf(o, "  %12" PRIu64 " %6.2f%%  %s\n", crk[i].n, pct(crk[i].n, s.matched),
				cm ? dtt_str(cm) : "[unknown]");
		}
	}

	npr = 0;
	for (size_t i = 0; i < s.pn; i++)
		rk[npr++] = (struct rank){ s.pids[i].n, s.pids[i].pid, s.pids[i].comm };
	qsort(rk, npr, sizeof(*rk), rank_cmp);
	if (json) {
		for (size_t i = 0; i < npr && i < top; i++) {
			fprintf(o, "%s{\"pid\":%u,\"comm\":", i ? "," : "", rk[i].key);
			const char *cm = pid_name(r, rk[i].key, rk[i].aux);
			dtu_json_str(o, cm ? cm : "");
			fprintf(o, ",\"events\":%" PRIu64 "}", rk[i].n);
		}
		fputs("],\"counters\":{\"snapshots\":", o);
		fprintf(o, "%zu,\"total\":", nsnap);
		if (have_counters)
			json_count(o, &tot);
		else
			fputs("null", o);
		fputs(",\"recorder\":", o);
		json_count(o, &rec);
		fprintf(o, ",\"user_stacks\":{\"dwarf\":%" PRIu64 ",\"dwarf_truncated\":%" PRIu64
			",\"fp_behind\":%" PRIu64 "}", rec.ustack_dwarf, rec.ustack_dwarf_trunc,
			rec.ustack_fp_behind);
		fprintf(o, "},\"accounting\":{\"events_in_capture\":%" PRIu64 ",\"kernel_read\":%"
			PRIu64 ",\"recorder_lost\":%" PRIu64 ",\"status\":\"%s\",\"conserved\":%s"
			",\"dropped\":%" PRIu64 ",\"dropped_pct\":%.4f}}\n", nev, tot.read,
			rec.dropped, acct, conserved ? "true" : "false", tot.dropped,
			pct(tot.dropped, tot.produced));
	} else {
		fprintf(o, "\ntop pids\n  %12s %7s %8s  %s\n", "events", "%", "pid", "comm");
		for (size_t i = 0; i < npr && i < top; i++) {
			const char *cm = pid_name(r, rk[i].key, rk[i].aux);
			fprintf(o, "  %12" PRIu64 " %6.2f%% %8u  %s\n", rk[i].n, pct(rk[i].n, s.matched),
				rk[i].key, cm ? dtt_str(cm) : "[unknown]");
		}
	}
	ret = 0;
out:
	free(percpu_copy);
	free(rk);
	st_free(&s);
	return ret;
}
