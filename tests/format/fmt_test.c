/*
 * fmt_test - the capture format's assertions (suite "format").
 *	fmt_test TMPDIR GENERATED.dtc
 * TMPDIR holds scratch files; GENERATED.dtc is a dtgen capture used for the
 * truncation, corruption and symbol tests.  Prints PASS/FAIL lines.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtcap.h"
#include "dtcap_int.h"
#include "fmt_harness.h"
#include "../xorshift.h"

static uint64_t rs = 0x12345678;
static uint64_t rnd(void)
{
	return xorshift64(&rs);
}

/* ------------------------------------------------------ the round trip */

struct model {
	struct dtcap_host host;
	struct dtcap_probe probes[3];
	char *ksyms, *mods;
	struct dtcap_sym syms[5];
	struct dtcap_file files[2];
	struct dtcap_map maps[3];
	struct dtcap_proc procs[3];
	const char *comms[4];
	uint64_t frames[6][DTCAP_MAXFRAMES];
	unsigned nframes[6];
	int kern[6], trunc[6];
	struct dtcap_event *ev;
	size_t nev;
	struct dtcap_count cnt[2][3];
	struct dtcap_count rec[2];
};

static void build_model(struct model *m, size_t nev)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->host.kernel, sizeof(m->host.kernel), "6.1.0-test");
	snprintf(m->host.hostname, sizeof(m->host.hostname), "h\xc3\xa9te");
	m->host.ncpus = 3;
	m->host.clock_mono_ns = 123456789;
	m->host.clock_real_ns = -5;
	m->host.start_ns = 1000;
	memset(m->host.command, 'c', sizeof(m->host.command) - 1);
	for (int i = 0; i < 3; i++) {
		struct dtcap_probe *p = &m->probes[i];
		p->id = 1 + 7 * i;
		p->flags = i;
		snprintf(p->name, sizeof(p->name), "prov%d:func:%s", i, i == 2 ? "return" : "entry");
		p->nargs = i == 1 ? DTCAP_MAXARGS : (uint32_t)i;
		for (uint32_t k = 0; k < p->nargs; k++) {
			snprintf(p->args[k].name, DTCAP_ARGNAMELEN, "arg%u", k);
			snprintf(p->args[k].type, DTCAP_ARGNAMELEN, k % 2 ? "char[16]" : "long");
			p->args[k].slot = (uint8_t)k;
			p->args[k].nslots = 1;
		}
	}
	m->ksyms = strdup("ffffffff81000000 T _stext\nffffffff81000100 T do_thing\n");
	m->mods = strdup("ext4 1000 1 - Live 0xffffffffc0000000\n");
	const char *sn[5] = {"zeta", "alpha", "mid", "", "last"};
	uint64_t sa[5] = {0x5000, 0x1000, 0x3000, 0x4000, 0xffffffffffff0000ULL};
	for (int i = 0; i < 5; i++)
		m->syms[i] = (struct dtcap_sym){sa[i], 16 * i, sn[i]};
	m->files[0] = (struct dtcap_file){0, "/usr/bin/x", {1, 2, 3}, 3, 0x400000, 5, m->syms};
	m->files[1] = (struct dtcap_file){0, "/lib/y.so", {0}, 0, 0, 0, NULL};
	m->maps[0] = (struct dtcap_map){0x400000, 0x401000, 0, 1, 5, "/usr/bin/x"};
	m->maps[1] = (struct dtcap_map){0x7f0000000000, 0x7f0000001000, 0x1000, 2, 1, "/lib/y.so"};
	m->maps[2] = (struct dtcap_map){0x7ffd00000000, 0x7ffd00021000, 0, 0, 3, "[stack]"};
	m->procs[0] = (struct dtcap_proc){500, 42, 1, "sh", "/bin/sh", 0, NULL};
	m->procs[1] = (struct dtcap_proc){900, 42, 1, "x", "/usr/bin/x", 3, m->maps};
	m->procs[2] = (struct dtcap_proc){100, 7, 0, "kthread", "", 0, NULL};
	m->comms[0] = "x";
	m->comms[1] = "a-very-long-command-name";	/* cut to 15 */
	m->comms[2] = "";
	m->comms[3] = "x-worker";
	for (int s = 0; s < 6; s++) {
		m->nframes[s] = s == 0 ? DTCAP_MAXFRAMES : s == 5 ? 0 : 1 + (unsigned)(rnd() % 40);
		m->kern[s] = s % 2;
		m->trunc[s] = s == 0;
		for (unsigned k = 0; k < m->nframes[s]; k++)
			m->frames[s][k] = s % 2 ? 0xffffffff81000000ULL + rnd() % 0x1000000 : rnd();
	}
	m->nev = nev;
	m->ev = calloc(nev ? nev : 1, sizeof(*m->ev));
	uint64_t ts = 5000;
	for (size_t i = 0; i < nev; i++) {
		struct dtcap_event *e = &m->ev[i];
		/* mostly forward, sometimes backwards: CPUs interleave */
		ts += rnd() % 3 ? rnd() % 100000 : (uint64_t)-(int64_t)(rnd() % 1000);
		e->ts = i == 7 ? UINT64_MAX - 5 : ts;
		e->cpu = rnd() % 3;
		e->pid = i % 97 == 0 ? UINT32_MAX : (uint32_t)(rnd() % 5000);
		e->tid = (uint32_t)rnd();
		e->probe = m->probes[rnd() % 3].id;
		e->comm = (uint32_t)(rnd() % 5);
		e->kstack = (uint32_t)(rnd() % 7);
		e->ustack = (uint32_t)(rnd() % 7);
		e->flags = (uint32_t)(rnd() % 16);
		e->ctx = (uint32_t)(i % 4);
		e->nargs = i % 13 == 0 ? DTCAP_MAXARGS : (uint32_t)(rnd() % 4);
		for (uint32_t k = 0; k < e->nargs; k++)
			e->args[k] = k % 2 ? rnd() : rnd() % 100;
	}
	for (int c = 0; c < 2; c++) {
		for (int k = 0; k < 3; k++)
			m->cnt[c][k] = (struct dtcap_count){rnd() % 1000, rnd() % 100, 3, 4, 5,
							    UINT64_MAX - k, 0, 0, 0};
		/* the user-stack tally is the recorder's only: it round-trips */
		m->rec[c] = (struct dtcap_count){1, 2, 3, 4, 5, 6, 7, 8, UINT64_MAX - c};
	}
}

static int write_model(const struct model *m, const char *path, uint32_t block,
		       int threaded, char *err, size_t errlen)
{
	struct dtcap_writer_opts o = {0, block, threaded, 1};
	struct dtcap_writer *w = dtcap_create(path, &m->host, &o);
#define WF(cond) do { if (cond) { snprintf(err, errlen, "line %d: %s", __LINE__, \
	w ? dtcap_writer_error(w) : dtcap_create_error()); if (w) dtcap_close(w); return -1; } } while (0)
	WF(!w);
	WF(dtcap_put_probes(w, m->probes, 3));
	WF(dtcap_put_kallsyms(w, m->ksyms, strlen(m->ksyms)));
	WF(dtcap_put_modules(w, m->mods, strlen(m->mods)));
	WF(dtcap_put_file(w, &m->files[0]) != 1);
	WF(dtcap_put_file(w, &m->files[1]) != 2);
	WF(dtcap_put_file(w, &m->files[0]) != 1);	/* dedup */
	for (int i = 0; i < 3; i++)
		WF(dtcap_put_proc(w, &m->procs[i]));
	for (int i = 0; i < 4; i++)
		WF(dtcap_intern_comm(w, m->comms[i]) != (uint32_t)i + 1);
	WF(dtcap_intern_comm(w, "x") != 1);
	for (int s = 0; s < 6; s++)
		WF(dtcap_intern_stack(w, m->frames[s], m->nframes[s], m->kern[s], m->trunc[s]) !=
		   (uint32_t)s + 1);
	WF(dtcap_intern_stack(w, m->frames[2], m->nframes[2], m->kern[2], m->trunc[2]) != 3);
	/* same frames, other kind: a different stack */
	WF(dtcap_intern_stack(w, m->frames[2], m->nframes[2], !m->kern[2], 0) != 7);
	for (size_t i = 0; i < m->nev; i++) {
		WF(dtcap_put_event(w, &m->ev[i]));
		if (i == m->nev / 2)
			WF(dtcap_put_counters(w, 77, m->cnt[0], 3, &m->rec[0]));
	}
	WF(dtcap_put_counters(w, 88, m->cnt[1], 3, &m->rec[1]));
	WF(dtcap_events_written(w) != m->nev);
	return dtcap_close(w) ? (snprintf(err, errlen, "close: %s", dtcap_create_error()), -1) : 0;
}

static int ev_eq(const struct dtcap_event *a, const struct dtcap_event *b)
{
	if (a->ts != b->ts || a->cpu != b->cpu || a->pid != b->pid || a->tid != b->tid ||
	    a->probe != b->probe || a->comm != b->comm || a->kstack != b->kstack ||
	    a->ustack != b->ustack || a->flags != b->flags || a->nargs != b->nargs ||
	    a->ctx != b->ctx)
		return 0;
	for (uint32_t k = 0; k < DTCAP_MAXARGS; k++)
		if (a->args[k] != (k < a->nargs ? b->args[k] : 0))
			return 0;
	return 1;
}

static const char *check_model(const struct model *m, struct dtcap_reader *r)
{
	static char why[256];
	const struct dtcap_host *h = dtcap_host(r);
	if (strcmp(h->kernel, m->host.kernel) || strcmp(h->hostname, m->host.hostname) ||
	    h->ncpus != 3 || h->clock_mono_ns != m->host.clock_mono_ns ||
	    h->clock_real_ns != -5 || h->start_ns != 1000 || strcmp(h->command, m->host.command))
		return "host differs";
	if (dtcap_nprobes(r) != 3)
		return "probe count";
	for (int i = 0; i < 3; i++) {
		const struct dtcap_probe *p = dtcap_probe_by_id(r, m->probes[i].id);
		if (!p || memcmp(p, &m->probes[i], sizeof(*p)))
			return "probe differs";
	}
	if (dtcap_probe_by_id(r, 2))
		return "probe 2 should not exist";
	size_t len;
	const char *t = dtcap_kallsyms(r, &len);
	if (!t || len != strlen(m->ksyms) || strcmp(t, m->ksyms))
		return "kallsyms differ";
	t = dtcap_modules(r, &len);
	if (!t || len != strlen(m->mods) || strcmp(t, m->mods))
		return "modules differ";
	if (dtcap_nfiles(r) != 2)
		return "file count";
	const struct dtcap_file *f = dtcap_file_by_id(r, 1);
	if (!f || strcmp(f->path, "/usr/bin/x") || f->build_id_len != 3 ||
	    memcmp(f->build_id, "\1\2\3", 3) || f->load_bias_hint != 0x400000 || f->nsyms != 5)
		return "file 1 differs";
	for (uint32_t i = 0; i < 5; i++) {
		if (i && f->syms[i - 1].addr > f->syms[i].addr)
			return "symbols not sorted";
		int found = 0;
		for (int k = 0; k < 5; k++)
			found |= f->syms[i].addr == m->syms[k].addr &&
				 f->syms[i].size == m->syms[k].size &&
				 !strcmp(f->syms[i].name, m->syms[k].name);
		if (!found)
			return "symbol differs";
	}
	f = dtcap_file_by_id(r, 2);
	if (!f || f->id != 2 || strcmp(f->path, "/lib/y.so") || f->build_id_len || f->nsyms)
		return "file 2 differs";
	if (dtcap_file_by_id(r, 3) || dtcap_file_by_id(r, 0))
		return "file ids beyond range";
	if (dtcap_nprocs(r) != 3)
		return "proc count";
	for (int i = 0; i < 3; i++) {
		const struct dtcap_proc *p = dtcap_proc_at(r, i), *q = &m->procs[i];
		if (p->ts != q->ts || p->pid != q->pid || p->ppid != q->ppid ||
		    strcmp(p->comm, q->comm) || strcmp(p->exe, q->exe) || p->nmaps != q->nmaps)
			return "proc differs";
		for (uint32_t k = 0; k < p->nmaps; k++) {
			const struct dtcap_map *a = &p->maps[k], *b = &q->maps[k];
			if (a->start != b->start || a->end != b->end || a->offset != b->offset ||
			    a->file != b->file || a->prot != b->prot || strcmp(a->name, b->name))
				return "map differs";
		}
	}
	const struct dtcap_proc *p = dtcap_proc_find(r, 42, 0);
	if (!p || p->ts != 500)
		return "proc_find before first";
	if (!(p = dtcap_proc_find(r, 42, 899)) || p->ts != 500)
		return "proc_find before exec";
	if (!(p = dtcap_proc_find(r, 42, 900)) || p->ts != 900)
		return "proc_find after exec";
	if (dtcap_proc_find(r, 43, 900))
		return "proc_find of unknown pid";
	if (dtcap_ncomms(r) != 4)
		return "comm count";
	if (strcmp(dtcap_comm(r, 1), "x") || strcmp(dtcap_comm(r, 2), "a-very-long-com") ||
	    strcmp(dtcap_comm(r, 3), "") || strcmp(dtcap_comm(r, 4), "x-worker") ||
	    dtcap_comm(r, 0) || dtcap_comm(r, 5))
		return "comm differs";
	if (dtcap_nstacks(r) != 7)
		return "stack count";
	for (int s = 0; s < 7; s++) {
		unsigned n;
		int k, tr;
		const uint64_t *fr = dtcap_stack(r, s + 1, &n, &k, &tr);
		int ms = s == 6 ? 2 : s;
		if (!fr || n != m->nframes[ms] || k != (s == 6 ? !m->kern[2] : m->kern[s]) ||
		    tr != (s == 6 ? 0 : m->trunc[s]) ||
		    (n && memcmp(fr, m->frames[ms], n * 8))) {
			snprintf(why, sizeof(why), "stack %d differs", s + 1);
			return why;
		}
	}
	if (dtcap_stack(r, 0, NULL, NULL, NULL) || dtcap_stack(r, 8, NULL, NULL, NULL))
		return "stack ids beyond range";
	if (dtcap_ncounters(r) != 2)
		return "counter count";
	for (int c = 0; c < 2; c++) {
		uint64_t ts;
		uint32_t n;
		struct dtcap_count rec;
		const struct dtcap_count *pc = dtcap_counters_at(r, c, &ts, &n, &rec);
		if (!pc || ts != (c ? 88u : 77u) || n != 3 || memcmp(pc, m->cnt[c], sizeof(m->cnt[c])) ||
		    memcmp(&rec, &m->rec[c], sizeof(rec)))
			return "counters differ";
	}
	if (dtcap_nevents(r) != m->nev)
		return "event count";
	struct dtcap_iter *it = dtcap_iter_new(r, 0, UINT64_MAX, DTCAP_COL_ALL);
	struct dtcap_event e;
	size_t i = 0;
	int k;
	while ((k = dtcap_iter_next(it, &e)) == 1) {
		if (i >= m->nev || !ev_eq(&e, &m->ev[i])) {
			snprintf(why, sizeof(why), "event %zu differs", i);
			dtcap_iter_free(it);
			return why;
		}
		i++;
	}
	dtcap_iter_free(it);
	if (k < 0 || i != m->nev)
		return "iteration short or failed";
	return NULL;
}

static void test_roundtrip(void)
{
	struct model m;
	build_model(&m, 5500);
	char err[512];
	const char *a = tpath("rt-a.dtc"), *b = tpath("rt-b.dtc");
	if (write_model(&m, a, 1000, 0, err, sizeof(err))) {
		result(0, "roundtrip.write", "%s", err);
		return;
	}
	result(1, "roundtrip.write", "%s", "");
	if (write_model(&m, b, 1000, 1, err, sizeof(err))) {
		result(0, "roundtrip.write_threaded", "%s", err);
		return;
	}
	result(1, "roundtrip.write_threaded", "%s", "");
	size_t la, lb;
	uint8_t *pa = slurp(a, &la), *pb = slurp(b, &lb);
	result(pa && pb && la == lb && !memcmp(pa, pb, la), "roundtrip.threaded_same_bytes",
	       "threaded and unthreaded files differ (%zu vs %zu bytes)", la, lb);
	free(pa);
	free(pb);
	struct dtcap_reader *r = dtcap_open(a);
	if (!r) {
		result(0, "roundtrip.open", "%s", dtcap_open_error());
		return;
	}
	result(!dtcap_reader_warning(r), "roundtrip.no_warning", "%s",
	       dtcap_reader_warning(r) ? dtcap_reader_warning(r) : "");
	const char *why = check_model(&m, r);
	result(!why, "roundtrip.every_field", "%s", why);
	result(dtcap_nblocks(r) == 6, "roundtrip.blocks", "%zu blocks, want 6", dtcap_nblocks(r));

	/* block index: counts, min/max */
	int ok = 1;
	size_t base = 0;
	for (size_t bi = 0; bi < dtcap_nblocks(r); bi++) {
		const struct dtcap_blockinfo *inf = dtcap_block_info(r, bi);
		uint64_t tmin = UINT64_MAX, tmax = 0;
		uint32_t pmin = UINT32_MAX, pmax = 0;
		for (size_t i = base; i < base + inf->rows; i++) {
			tmin = m.ev[i].ts < tmin ? m.ev[i].ts : tmin;
			tmax = m.ev[i].ts > tmax ? m.ev[i].ts : tmax;
			pmin = m.ev[i].pid < pmin ? m.ev[i].pid : pmin;
			pmax = m.ev[i].pid > pmax ? m.ev[i].pid : pmax;
		}
		ok &= inf->tmin == tmin && inf->tmax == tmax && inf->pid_min == pmin &&
		      inf->pid_max == pmax;
		base += inf->rows;
	}
	result(ok && base == m.nev, "roundtrip.block_index", "block min/max wrong");

	/* column selection: only asked-for arrays */
	struct dtcap_block *blk = dtcap_block_new();
	ok = !dtcap_read_block(r, 1, DTCAP_COL_PID | DTCAP_COL_ARGS, blk) && blk->pid &&
	     blk->nargs && blk->args && !blk->ts && !blk->cpu && !blk->tid && !blk->probe &&
	     !blk->comm && !blk->kstack && !blk->ustack && !blk->flags && blk->rows == 1000;
	for (uint32_t i = 0; ok && i < blk->rows; i++) {
		const struct dtcap_event *e = &m.ev[1000 + i];
		ok &= blk->pid[i] == e->pid && blk->nargs[i] == e->nargs;
		for (uint32_t k = 0; k < DTCAP_MAXARGS; k++)
			ok &= blk->args[i * DTCAP_MAXARGS + k] == (k < e->nargs ? e->args[k] : 0);
	}
	result(ok, "roundtrip.read_block_columns", "selected columns wrong");
	ok = !dtcap_read_block(r, 5, DTCAP_COL_TS | DTCAP_COL_KSTACK, blk) && blk->ts &&
	     blk->kstack && !blk->pid && blk->rows == 500;
	for (uint32_t i = 0; ok && i < blk->rows; i++)
		ok &= blk->ts[i] == m.ev[5000 + i].ts && blk->kstack[i] == m.ev[5000 + i].kstack;
	result(ok, "roundtrip.read_block_reuse", "second read into the same block wrong");
	/* by context: each row's context, and the context's values, are the
	 * row's values; the per-row arrays of those columns are not filled */
	ok = !dtcap_read_block(r, 2, DTCAP_COL_BYCTX | DTCAP_COL_TS | DTCAP_COL_PID |
			       DTCAP_COL_TID | DTCAP_COL_PROBE | DTCAP_COL_COMM |
			       DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_FLAGS |
			       DTCAP_COL_CTX, blk) &&
	     blk->ts && blk->cidx && !blk->pid && !blk->comm && !blk->ctx && blk->dict.pid &&
	     blk->dict.tid && blk->dict.probe && blk->dict.comm && blk->dict.kstack &&
	     blk->dict.ustack && blk->dict.flags && blk->dict.ctx && blk->rows == 1000 &&
	     blk->ndict >= 1 && blk->ndict <= blk->rows;
	uint32_t ndistinct = 0;
	for (uint32_t i = 0; ok && i < blk->rows; i++) {
		const struct dtcap_event *e = &m.ev[2000 + i];
		uint32_t c = blk->cidx[i];
		ok &= c < blk->ndict && blk->ts[i] == e->ts && blk->dict.pid[c] == e->pid &&
		      blk->dict.tid[c] == e->tid && blk->dict.probe[c] == e->probe &&
		      blk->dict.comm[c] == e->comm && blk->dict.kstack[c] == e->kstack &&
		      blk->dict.ustack[c] == e->ustack && blk->dict.flags[c] == e->flags &&
		      blk->dict.ctx[c] == e->ctx;
		ndistinct = c + 1 > ndistinct ? c + 1 : ndistinct;
	}
	result(ok && ndistinct == blk->ndict, "roundtrip.read_block_byctx",
	       "per-context values differ from the rows' (%u of %u contexts used)",
	       ndistinct, blk->ndict);
	/* a filter by context: the contexts alone first (no row's number),
	 * then the rows whose context passes, with their ts and cpu alone;
	 * and the rows' context numbers asked for without a column */
	{
		struct dtcap_block *b1 = dtcap_block_new(), *b2 = dtcap_block_new(),
				   *b3 = dtcap_block_new();
		uint8_t ok1[1000];
		ok = b1 && b2 && b3 &&
		     !dtcap_read_block(r, 2, DTCAP_COL_BYCTX | DTCAP_COL_NOINDEX | DTCAP_COL_TID, b1) &&
		     !b1->cidx && !b1->ts && !b1->cpu && b1->dict.tid && !b1->dict.pid &&
		     b1->ndict >= 1 && b1->ndict <= 1000;
		for (uint32_t d = 0; ok && d < b1->ndict; d++)
			ok1[d] = b1->dict.tid[d] % 3 == 0;
		ok = ok && !dtcap_read_rows_mt(r, 2, DTCAP_COL_TS | DTCAP_COL_CPU, ok1, b2) &&
		     b2->ndict == b1->ndict && b2->cidx && b2->ts && b2->cpu && !b2->pid;
		uint32_t x = 0;
		for (uint32_t i = 0; ok && i < 1000; i++) {
			const struct dtcap_event *e = &m.ev[2000 + i];
			if (e->tid % 3 != 0)
				continue;
			ok &= x < b2->rows && b2->cidx[x] < b1->ndict &&
			      b1->dict.tid[b2->cidx[x]] == e->tid && b2->ts[x] == e->ts &&
			      b2->cpu[x] == e->cpu;
			x++;
		}
		result(ok && x == b2->rows && x > 0 && x < 1000, "roundtrip.read_rows_by_context",
		       "rows kept by their context differ (%u kept)", ok ? x : 0);
		ok = !dtcap_read_block(r, 2, DTCAP_COL_CIDX | DTCAP_COL_CPU, b3) && b3->cidx &&
		     b3->ndict == b1->ndict && !b3->dict.tid && b3->rows == 1000;
		for (uint32_t i = 0; ok && i < 1000; i++)
			ok &= b1->dict.tid[b3->cidx[i]] == m.ev[2000 + i].tid;
		ok &= dtcap_read_rows_mt(r, 2, DTCAP_COL_PID, ok1, b2) == -1 &&
		      strstr(dtcap_block_error(b2), "ts and cpu only") != NULL;
		result(ok, "roundtrip.read_block_cidx_alone",
		       "the rows' contexts without a column, or a column read_rows cannot give");
		dtcap_block_free(b1);
		dtcap_block_free(b2);
		dtcap_block_free(b3);
	}
	/* per slot: slot j holds the args[j] of the rows with nargs > j, in
	 * row order, and no row-major array is filled */
	ok = !dtcap_read_block(r, 3, DTCAP_COL_ARGS | DTCAP_COL_ARGSLOTS, blk) &&
	     blk->nargs && !blk->args && blk->rows == 1000;
	for (unsigned j = 0; ok && j < DTCAP_MAXARGS; j++) {
		uint32_t k = 0;
		for (uint32_t i = 0; ok && i < blk->rows; i++) {
			const struct dtcap_event *e = &m.ev[3000 + i];
			ok &= blk->nargs[i] == e->nargs;
			if (e->nargs > j)
				ok &= k < blk->nargslot[j] && blk->argslot[j][k++] == e->args[j];
		}
		ok &= k == blk->nargslot[j] && (k == 0 || blk->argslot[j] != NULL);
	}
	result(ok, "roundtrip.read_block_argslots",
	       "per-slot arguments differ from the rows'");
	result(dtcap_read_block(r, 6, DTCAP_COL_TS, blk) == -1 &&
	       strstr(dtcap_reader_error(r), a), "roundtrip.read_block_range",
	       "block 6 of 6 did not fail with the file name");
	dtcap_block_free(blk);

	/* time-range iteration equals brute force */
	ok = 1;
	for (int q = 0; q < 20 && ok; q++) {
		uint64_t lo = 5000 + rnd() % 300000000, hi = lo + rnd() % 100000000;
		if (q == 0)
			lo = hi = m.ev[4321].ts;
		size_t want = 0, got = 0;
		for (size_t i = 0; i < m.nev; i++)
			want += m.ev[i].ts >= lo && m.ev[i].ts <= hi;
		struct dtcap_iter *it = dtcap_iter_new(r, lo, hi, DTCAP_COL_PID);
		struct dtcap_event e;
		while (dtcap_iter_next(it, &e) == 1) {
			got++;
			ok &= e.ts >= lo && e.ts <= hi && e.kstack == 0;
		}
		dtcap_iter_free(it);
		ok &= want == got;
	}
	result(ok, "roundtrip.iter_time_range", "time-range iteration differs from brute force");
	dtcap_reader_close(r);

	/* one big block (default size) too */
	if (!write_model(&m, a, 0, 0, err, sizeof(err)) && (r = dtcap_open(a))) {
		why = check_model(&m, r);
		result(!why && dtcap_nblocks(r) == 1, "roundtrip.default_block", "%s",
		       why ? why : "not one block");
		dtcap_reader_close(r);
	} else {
		result(0, "roundtrip.default_block", "%s", err);
	}
	free(m.ev);
	free(m.ksyms);
	free(m.mods);
}

static void test_small(void)
{
	const char *p = tpath("empty.dtc");
	struct dtcap_writer *w = dtcap_create(p, NULL, NULL);
	int ok = w && !dtcap_close(w);
	struct dtcap_reader *r = ok ? dtcap_open(p) : NULL;
	result(r && dtcap_nevents(r) == 0 && dtcap_nblocks(r) == 0 && !dtcap_reader_warning(r) &&
	       !dtcap_kallsyms(r, NULL) && dtcap_nstacks(r) == 0 && dtcap_ncounters(r) == 0,
	       "empty_capture", "%s", r ? "wrong contents" : dtcap_open_error());
	if (r) {
		struct dtcap_iter *it = dtcap_iter_new(r, 0, UINT64_MAX, DTCAP_COL_ALL);
		struct dtcap_event e;
		result(dtcap_iter_next(it, &e) == 0, "empty_capture.iter", "rows from nothing");
		dtcap_iter_free(it);
		dtcap_reader_close(r);
	}

	/* a capture whose first stack is empty: the reader has no frames
	 * yet when it meets it (the fuzzer's clang UBSan flagged arithmetic
	 * on the NULL frames array there; gcc's does not, so this checks
	 * only that such a stack reads back) */
	p = tpath("emptystack.dtc");
	w = dtcap_create(p, NULL, NULL);
	uint64_t one = 0x401000;
	uint32_t s0 = w ? dtcap_intern_stack(w, NULL, 0, 0, 0) : 0;
	uint32_t s1 = w ? dtcap_intern_stack(w, &one, 1, 0, 0) : 0;
	ok = w && s0 && s1 && s0 != s1 && !dtcap_close(w);
	r = ok ? dtcap_open(p) : NULL;
	unsigned n0 = 9, n1 = 9;
	const uint64_t *f1 = r ? dtcap_stack(r, s1, &n1, NULL, NULL) : NULL;
	result(r && dtcap_nstacks(r) == 2 && dtcap_stack(r, s0, &n0, NULL, NULL) && n0 == 0 &&
	       f1 && n1 == 1 && f1[0] == one, "empty_first_stack",
	       "%s", r ? "stacks read back wrong" : ok ? dtcap_open_error() : "write failed");
	dtcap_reader_close(r);

	p = tpath("one.dtc");
	struct dtcap_host h = {0};
	snprintf(h.kernel, sizeof(h.kernel), "k");
	w = dtcap_create(p, &h, NULL);
	struct dtcap_event e = {0}, got;
	e.ts = 42;
	e.pid = 7;
	e.probe = 1;
	e.nargs = DTCAP_MAXARGS;
	for (int k = 0; k < DTCAP_MAXARGS; k++)
		e.args[k] = UINT64_MAX - k;
	uint64_t deep[DTCAP_MAXFRAMES + 5];
	for (int k = 0; k < DTCAP_MAXFRAMES + 5; k++)
		deep[k] = 0xffffffff81000000ULL + 16 * k;
	e.kstack = w ? dtcap_intern_stack(w, deep, DTCAP_MAXFRAMES + 5, 1, 0) : 0;
	ok = w && e.kstack == 1 && !dtcap_put_event(w, &e) && !dtcap_close(w);
	r = ok ? dtcap_open(p) : NULL;
	struct dtcap_iter *it = r ? dtcap_iter_new(r, 0, UINT64_MAX, DTCAP_COL_ALL) : NULL;
	unsigned n = 0;
	int k = 0, tr = 0;
	ok = it && dtcap_iter_next(it, &got) == 1 && ev_eq(&got, &e) &&
	     dtcap_iter_next(it, &got) == 0 && dtcap_nblocks(r) == 1 &&
	     dtcap_stack(r, 1, &n, &k, &tr) && n == DTCAP_MAXFRAMES && k && tr &&
	     !memcmp(dtcap_stack(r, 1, NULL, NULL, NULL), deep, DTCAP_MAXFRAMES * 8);
	result(ok, "one_event.max_args_and_frames", "%s", r ? "contents differ" : dtcap_open_error());
	dtcap_iter_free(it);
	dtcap_reader_close(r);

	/* bad ids are refused, and the writer keeps going */
	w = dtcap_create(tpath("bad.dtc"), NULL, NULL);
	struct dtcap_event bad = {0};
	bad.kstack = 3;
	ok = w && dtcap_put_event(w, &bad) == -1 && strstr(dtcap_writer_error(w), "bad.dtc");
	bad.kstack = 0;
	bad.nargs = DTCAP_MAXARGS + 1;
	ok = ok && dtcap_put_event(w, &bad) == -1;
	bad.nargs = 0;
	struct dtcap_map bm = {0x1000, 0x2000, 0, 9, 5, "x"};
	struct dtcap_proc bp = {1, 2, 1, "p", "", 1, &bm};
	ok = ok && dtcap_put_proc(w, &bp) == -1;	/* no file 9 */
	bm.file = 0;
	ok = ok && dtcap_put_proc(w, &bp) == 0;
	ok = ok && dtcap_put_event(w, &bad) == 0 && dtcap_close(w) == 0;
	struct dtcap_reader *br = ok ? dtcap_open(tpath("bad.dtc")) : NULL;
	ok = br && dtcap_nprocs(br) == 1 && dtcap_nevents(br) == 1;
	dtcap_reader_close(br);
	result(ok, "writer.rejects_bad_ids", "bad ids accepted or error lacks the file name");

	/* strings at and past their limits, unterminated fixed fields: the
	 * writer cuts them to what the reader accepts */
	p = tpath("long.dtc");
	struct dtcap_host lh;
	memset(&lh, 'k', sizeof(lh));
	lh.ncpus = 1;
	struct dtcap_probe lp;
	memset(&lp, 'n', sizeof(lp));
	lp.id = 5;
	lp.nargs = 1;
	lp.args[0].slot = 0;
	lp.args[0].nslots = 1;
	static char longpath[10000];
	memset(longpath, '/', sizeof(longpath) - 1);
	struct dtcap_file lf = {0, longpath, {0}, 0, 0, 0, NULL};
	struct dtcap_map lm = {1, 2, 0, 1, 7, longpath};
	struct dtcap_proc lpr = {1, 1, 0, "c", longpath, 1, &lm};
	memset(lpr.comm, 'c', sizeof(lpr.comm));
	struct dtcap_probe p0 = {0};
	w = dtcap_create(p, &lh, NULL);
	ok = w && !dtcap_put_probes(w, &lp, 1) && dtcap_put_file(w, &lf) == 1 &&
	     !dtcap_put_proc(w, &lpr) && dtcap_put_probes(w, &p0, 1) == -1;
	ok = !dtcap_close(w) && ok;
	r = ok ? dtcap_open(p) : NULL;
	ok = r && strlen(dtcap_host(r)->kernel) == 64 && strlen(dtcap_host(r)->command) == 1023 &&
	     dtcap_probe_by_id(r, 5) && strlen(dtcap_probe_by_id(r, 5)->name) == 199 &&
	     strlen(dtcap_probe_by_id(r, 5)->args[0].name) == 23 &&
	     strlen(dtcap_file_at(r, 0)->path) == 4096 && strlen(dtcap_proc_at(r, 0)->comm) == 15;
	result(ok, "writer.cuts_long_strings", "%s", r ? "wrong lengths" : dtcap_open_error());
	dtcap_reader_close(r);

	result(!dtcap_create("/nonexistent-dir/x.dtc", NULL, NULL) &&
	       strstr(dtcap_create_error(), "/nonexistent-dir/x.dtc") &&
	       !strchr(dtcap_create_error(), '\n'), "writer.create_error",
	       "create error: %s", dtcap_create_error());
	/* kallsyms comes back byte for byte, in compact or plain form */
	size_t klen = 0;
	char *real = (char *)slurp("/proc/kallsyms", &klen);	/* size 0 in procfs */
	if (real) {
		free(real);
		FILE *kf = fopen("/proc/kallsyms", "r");
		size_t cap = 1 << 20;
		real = malloc(cap);
		klen = 0;
		size_t got;
		while (kf && real && (got = fread(real + klen, 1, cap - klen, kf)) > 0) {
			klen += got;
			if (klen == cap)
				real = realloc(real, cap *= 2);
		}
		if (kf)
			fclose(kf);
	}
	const char *texts[] = {
		real ? real : "ffffffff81000000 T x\n",
		"ffffffff81000000 T _stext\nffffffff81000010 t a\t[m]\n0000000000000000 A z\n",
		"ffffffff81000000 T no_newline_at_end",
		"ffffffff81000000 T two\ttabs\t[x]\n",
		"ffffffff8100000 T short_address\n",
		"FFFFFFFF81000000 T upper_hex\n",
		"ffffffff81000000 T \n",
		"\n",
		"x",
	};
	ok = 1;
	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]) && ok; t++) {
		size_t tl = t == 0 && real ? klen : strlen(texts[t]);
		w = dtcap_create(tpath("ksym.dtc"), NULL, NULL);
		ok = w && !dtcap_put_kallsyms(w, texts[t], tl) && !dtcap_close(w);
		r = ok ? dtcap_open(tpath("ksym.dtc")) : NULL;
		size_t rl = 0;
		const char *back = r ? dtcap_kallsyms(r, &rl) : NULL;
		ok = back && rl == tl && !memcmp(back, texts[t], tl) && back[tl] == 0;
		if (!ok)
			printf("# kallsyms text %zu differs (%zu vs %zu bytes)\n", t, rl, tl);
		dtcap_reader_close(r);
	}
	result(ok && klen > 1000, "writer.kallsyms_exact",
	       "kallsyms text not returned exactly (host kallsyms %zu bytes)", klen);
	free(real);

	/* a full disk: the header write fails at create, with the reason */
	w = dtcap_create("/dev/full", NULL, NULL);
	result(!w && strstr(dtcap_create_error(), "/dev/full") &&
	       strstr(dtcap_create_error(), "space"), "writer.disk_full",
	       "create on /dev/full: %s", w ? "succeeded" : dtcap_create_error());
	if (w)
		dtcap_close(w);
	result(!dtcap_open(tpath("nope.dtc")) && strstr(dtcap_open_error(), "nope.dtc") &&
	       !strchr(dtcap_open_error(), '\n'), "reader.open_missing", "%s", dtcap_open_error());
	spit(tpath("text.dtc"), (const uint8_t *)"hello, this is not a capture\n", 29);
	result(!dtcap_open(tpath("text.dtc")) && strstr(dtcap_open_error(), "text.dtc") &&
	       strstr(dtcap_open_error(), "offset"), "reader.not_a_capture", "%s",
	       dtcap_open_error());
	result(!dtcap_open(tmpdir), "reader.directory", "opened a directory");
}

/* ------------------------------------------------------- truncation */

struct ref {
	size_t nblocks;
	uint64_t *bend;		/* end offset of block i */
	uint64_t *brows;	/* events before and in block i */
	uint64_t *sum;		/* running hash of events through block i */
	uint64_t *bounds;	/* every chunk start */
	size_t nbounds;
	uint32_t *ctype;	/* type and end of chunk i (i < nchunks) */
	uint64_t *cend;
	size_t nchunks;
};

static uint64_t ev_hash(uint64_t h, const struct dtcap_event *e)
{
	const uint64_t *w = (const uint64_t *)e;
	for (size_t i = 0; i < sizeof(*e) / 8; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return h;
}

/* Hash of all events, and per block the running values. */
static int scan_events(struct dtcap_reader *r, uint64_t *rows, uint64_t *hash,
		       uint64_t *perblock)
{
	struct dtcap_block *b = dtcap_block_new();
	uint64_t h = 0xcbf29ce484222325ULL, n = 0;
	for (size_t i = 0; i < dtcap_nblocks(r); i++) {
		if (dtcap_read_block(r, i, DTCAP_COL_ALL, b)) {
			dtcap_block_free(b);
			return -1;
		}
		for (uint32_t k = 0; k < b->rows; k++) {
			struct dtcap_event e = {0};
			e.ts = b->ts[k]; e.cpu = b->cpu[k]; e.pid = b->pid[k]; e.tid = b->tid[k];
			e.probe = b->probe[k]; e.comm = b->comm[k]; e.kstack = b->kstack[k];
			e.ustack = b->ustack[k]; e.flags = b->flags[k]; e.nargs = b->nargs[k];
			e.ctx = b->ctx[k];
			memcpy(e.args, b->args + (size_t)k * DTCAP_MAXARGS, sizeof(e.args));
			if (e.kstack > dtcap_nstacks(r) || e.ustack > dtcap_nstacks(r) ||
			    e.comm > dtcap_ncomms(r)) {
				dtcap_block_free(b);
				return -2;	/* used before defined */
			}
			h = ev_hash(h, &e);
			n++;
		}
		if (perblock)
			perblock[i] = h;
	}
	dtcap_block_free(b);
	*rows = n;
	*hash = h;
	return 0;
}

static int build_ref(const char *path, const uint8_t *data, size_t len, struct ref *ref)
{
	struct dtcap_reader *r = dtcap_open(path);
	if (!r)
		return -1;
	ref->nblocks = dtcap_nblocks(r);
	ref->bend = calloc(ref->nblocks + 1, 8);
	ref->brows = calloc(ref->nblocks + 1, 8);
	ref->sum = calloc(ref->nblocks + 1, 8);
	uint64_t rows, h;
	if (scan_events(r, &rows, &h, ref->sum)) {
		dtcap_reader_close(r);
		return -1;
	}
	uint64_t acc = 0;
	for (size_t i = 0; i < ref->nblocks; i++) {
		const struct dtcap_blockinfo *bi = dtcap_block_info(r, i);
		const uint8_t *hd = data + bi->offset;
		ref->bend[i] = bi->offset + DTC_CHDR_LEN + dtc_rd32(hd + 8) + dtc_rd32(hd + 12);
		acc += bi->rows;
		ref->brows[i] = acc;
	}
	dtcap_reader_close(r);
	ref->bounds = calloc(len / DTC_CHDR_LEN + 4, 8);
	ref->ctype = calloc(len / DTC_CHDR_LEN + 4, 4);
	ref->cend = calloc(len / DTC_CHDR_LEN + 4, 8);
	uint64_t off = DTC_FILEHDR_LEN;
	while (off + DTC_CHDR_LEN <= len) {
		ref->bounds[ref->nbounds++] = off;
		uint32_t type = dtc_rd32(data + off);
		off += DTC_CHDR_LEN + dtc_rd32(data + off + 8) + dtc_rd32(data + off + 12);
		ref->ctype[ref->nchunks] = type;
		ref->cend[ref->nchunks++] = off;
		if (type == DTC_FOOT)
			break;
	}
	ref->bounds[ref->nbounds++] = off;	/* the trailer */
	ref->bounds[ref->nbounds++] = len;
	return 0;
}

/* Open the first cut bytes; 0 if it yields exactly the complete blocks. */
static int check_cut(const char *tp, const uint8_t *data, size_t len, size_t cut,
		     const struct ref *ref, char *why, size_t wl)
{
	(void)data;
	if (truncate(tp, (off_t)cut)) {
		snprintf(why, wl, "truncate %s: failed", tp);
		return -1;
	}
	struct dtcap_reader *r = dtcap_open(tp);
	if (!r) {
		snprintf(why, wl, "cut %zu: open failed: %s", cut, dtcap_open_error());
		return -1;
	}
	size_t want = 0;
	while (want < ref->nblocks && ref->bend[want] <= cut)
		want++;
	uint64_t rows, h;
	int rc = scan_events(r, &rows, &h, NULL);
	uint64_t wrows = want ? ref->brows[want - 1] : 0;
	uint64_t wh = want ? ref->sum[want - 1] : 0xcbf29ce484222325ULL;
	const char *warn = dtcap_reader_warning(r);
	/* and all metadata of complete chunks: one file per FILE chunk, one
	 * snapshot per CNTR chunk, kallsyms once its chunk is whole */
	size_t files = 0, cntrs = 0, ksym = 0;
	for (size_t k = 0; k < ref->nchunks && ref->cend[k] <= cut; k++) {
		files += ref->ctype[k] == DTC_FILE;
		cntrs += ref->ctype[k] == DTC_CNTR;
		ksym |= ref->ctype[k] == DTC_KSYM || ref->ctype[k] == DTC_KSYC;
	}
	int ok = rc == 0 && dtcap_nblocks(r) == want && rows == wrows && h == wh &&
		 dtcap_nevents(r) == wrows && dtcap_nfiles(r) == files &&
		 dtcap_ncounters(r) == cntrs && !!dtcap_kallsyms(r, NULL) == !!ksym;
	if (!ok)
		snprintf(why, wl, "cut %zu: %zu blocks %llu rows (rc %d) %zu files %zu counters, "
			 "want %zu blocks %llu rows %zu files %zu counters",
			 cut, dtcap_nblocks(r), (unsigned long long)rows, rc, dtcap_nfiles(r),
			 dtcap_ncounters(r), want, (unsigned long long)wrows, files, cntrs);
	else if (cut < len && (!warn || !strstr(warn, "truncated at offset") ||
			       !strstr(warn, tp) || strchr(warn, '\n'))) {
		snprintf(why, wl, "cut %zu: no or bad warning: %s", cut, warn ? warn : "(none)");
		ok = 0;
	} else if (cut == len && warn) {
		snprintf(why, wl, "whole file warns: %s", warn);
		ok = 0;
	}
	dtcap_reader_close(r);
	return ok ? 0 : -1;
}

static void test_truncation(const char *name, const char *src, int every)
{
	size_t len;
	uint8_t *data = slurp(src, &len);
	struct ref ref = {0};
	char why[600] = "";
	if (!data || build_ref(src, data, len, &ref)) {
		result(0, name, "cannot read reference capture %s", src);
		return;
	}
	const char *tp = tpath("cut.dtc");
	spit(tp, data, len);
	int ok = 1;
	size_t tried = 0;
	if (every) {
		/* descending, so each cut is one ftruncate of the same file */
		for (size_t cut = len + 1; cut-- > 0 && ok;) {
			ok = !check_cut(tp, data, len, cut, &ref, why, sizeof(why));
			tried++;
		}
	} else {
		size_t cuts[4096], nc = 0;
		for (size_t i = 0; i < ref.nbounds; i++)
			for (int d = -1; d <= 1; d++)
				if ((int64_t)ref.bounds[i] + d >= 0 && ref.bounds[i] + d <= len)
					cuts[nc++] = ref.bounds[i] + d;
		for (int i = 0; i < 300; i++)
			cuts[nc++] = (size_t)((double)len * i / 300.0) + rnd() % 64;
		cuts[nc++] = len;
		/* descending order: truncate only shrinks */
		for (size_t i = 0; i < nc; i++)
			for (size_t j = i + 1; j < nc; j++)
				if (cuts[j] > cuts[i]) {
					size_t t = cuts[i]; cuts[i] = cuts[j]; cuts[j] = t;
				}
		for (size_t i = 0; i < nc && ok; i++) {
			if (cuts[i] > len)
				continue;
			ok = !check_cut(tp, data, len, cuts[i], &ref, why, sizeof(why));
			tried++;
		}
	}
	result(ok, name, "%s", why);
	if (ok)
		printf("# %s: %zu cuts of %zu bytes, %zu blocks\n", name, tried, len, ref.nblocks);
	free(data);
	free(ref.bend);
	free(ref.brows);
	free(ref.sum);
	free(ref.bounds);
	free(ref.ctype);
	free(ref.cend);
}

/* ------------------------------------------------------- corruption */

static void test_corruption(const char *name, const char *src, size_t step)
{
	size_t len;
	uint8_t *data = slurp(src, &len);
	struct dtcap_reader *r0 = data ? dtcap_open(src) : NULL;
	uint64_t rows0, h0;
	if (!r0 || scan_events(r0, &rows0, &h0, NULL)) {
		result(0, name, "cannot read %s", src);
		return;
	}
	uint32_t nst0 = dtcap_nstacks(r0);
	dtcap_reader_close(r0);
	const char *tp = tpath("flip.dtc");
	int fd = -1;
	spit(tp, data, len);
	fd = open(tp, O_WRONLY);
	int ok = 1;
	size_t tried = 0, silent = 0;
	char why[700] = "";
	for (size_t off = 0; off < len && ok; off += step + rnd() % (step + 1)) {
		uint8_t x = data[off] ^ (uint8_t)(1 + rnd() % 255);
		if (pwrite(fd, &x, 1, (off_t)off) != 1)
			break;
		tried++;
		struct dtcap_reader *r = dtcap_open(tp);
		if (!r) {
			const char *e = dtcap_open_error();
			if (!strstr(e, tp) || !strstr(e, "offset") || strchr(e, '\n')) {
				snprintf(why, sizeof(why), "flip at %zu: bad error: %s", off, e);
				ok = 0;
			}
		} else {
			uint64_t rows, h;
			int rc = scan_events(r, &rows, &h, NULL);
			if (rc == -1) {
				const char *e = dtcap_reader_error(r);
				if (!strstr(e, tp) || !strstr(e, "offset")) {
					snprintf(why, sizeof(why), "flip at %zu: bad error: %s", off, e);
					ok = 0;
				}
			} else if (rc != 0 || rows != rows0 || h != h0 ||
				   dtcap_nstacks(r) != nst0) {
				snprintf(why, sizeof(why),
					 "flip at %zu: opened and gave different data silently (warning: %s)",
					 off, dtcap_reader_warning(r) ? dtcap_reader_warning(r) : "none");
				ok = 0;
			} else if (!dtcap_reader_warning(r)) {
				/* same data is fine (a damaged footer or trailer
				 * loses nothing) but never without a word */
				silent++;
			}
			dtcap_reader_close(r);
		}
		if (pwrite(fd, &data[off], 1, (off_t)off) != 1)
			break;
	}
	close(fd);
	result(ok && tried > 10, name, "%s", why);
	/* every byte is covered by a checksum: no flip may go unnoticed */
	char n2[128];
	snprintf(n2, sizeof(n2), "%s.every_byte_covered", name);
	result(silent == 0, n2, "%zu of %zu flips went unnoticed", silent, tried);
	printf("# %s: %zu flips\n", name, tried);
	free(data);
}

/* ---------------------------------------------- the generated capture */

struct ksym { uint64_t a; };
static int u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Known: the nearest kallsyms address below is close (functions < 4K). */
static int near_sym(const uint64_t *ka, size_t nk, uint64_t pc)
{
	size_t lo = 0, hi = nk;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ka[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && pc - ka[lo - 1] < 4096;
}

static void test_generated(const char *path)
{
	struct dtcap_reader *r = dtcap_open(path);
	if (!r) {
		result(0, "gen.open", "%s", dtcap_open_error());
		return;
	}
	result(!dtcap_reader_warning(r), "gen.open", "warning: %s", dtcap_reader_warning(r));
	const struct dtcap_host *h = dtcap_host(r);
	result(h->ncpus >= 2 && h->ncpus <= 8 && strstr(h->command, "dtgen"), "gen.host",
	       "ncpus %u command %s", h->ncpus, h->command);
	/* counters: read == events written, with drops */
	uint64_t rd = 0, dr = 0, pr = 0;
	uint32_t nc = 0;
	const struct dtcap_count *pc = dtcap_ncounters(r) ?
		dtcap_counters_at(r, dtcap_ncounters(r) - 1, NULL, &nc, NULL) : NULL;
	for (uint32_t i = 0; pc && i < nc; i++) {
		rd += pc[i].read;
		dr += pc[i].dropped;
		pr += pc[i].produced;
	}
	result(pc && rd == dtcap_nevents(r) && dr > 0 && pr == rd + dr, "gen.counters",
	       "read %llu events %llu dropped %llu produced %llu",
	       (unsigned long long)rd, (unsigned long long)dtcap_nevents(r),
	       (unsigned long long)dr, (unsigned long long)pr);
	result(dtcap_nstacks(r) >= 1000, "gen.many_stacks", "%u stacks", dtcap_nstacks(r));

	/* every frame inside a named symbol, except a few on purpose */
	size_t kl;
	const char *ks = dtcap_kallsyms(r, &kl);
	uint64_t *ka = calloc(kl / 20 + 1, 8);
	size_t nk = 0;
	for (const char *p = ks; p && *p;) {
		ka[nk++] = strtoull(p, NULL, 16);
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	qsort(ka, nk, 8, u64cmp);
	uint64_t kframes = 0, kknown = 0, uframes = 0, uknown = 0;
	struct dtcap_block *b = dtcap_block_new();
	for (size_t bi = 0; bi < dtcap_nblocks(r) && bi < 4; bi++) {
		if (dtcap_read_block(r, bi, DTCAP_COL_ALL, b))
			break;
		for (uint32_t i = 0; i < b->rows; i += 7) {
			unsigned n;
			const uint64_t *f = dtcap_stack(r, b->kstack[i], &n, NULL, NULL);
			for (unsigned k = 0; f && k < n; k++) {
				kframes++;
				kknown += near_sym(ka, nk, f[k]);
			}
			f = dtcap_stack(r, b->ustack[i], &n, NULL, NULL);
			const struct dtcap_proc *p = dtcap_proc_find(r, b->pid[i], b->ts[i]);
			for (unsigned k = 0; f && p && k < n; k++) {
				uframes++;
				for (uint32_t m = 0; m < p->nmaps; m++) {
					const struct dtcap_map *mp = &p->maps[m];
					const struct dtcap_file *fl = dtcap_file_by_id(r, mp->file);
					if (!fl || f[k] < mp->start || f[k] >= mp->end)
						continue;
					uint64_t va = f[k] - mp->start + mp->offset + fl->load_bias_hint;
					for (uint32_t s = 0; s < fl->nsyms; s++)
						if (va >= fl->syms[s].addr &&
						    va < fl->syms[s].addr + fl->syms[s].size)
							uknown++;
				}
			}
		}
	}
	dtcap_block_free(b);
	/* and a few, somewhere in the stack table, on purpose unknown */
	uint64_t kunknown = 0;
	for (uint32_t s = 1; s <= dtcap_nstacks(r); s++) {
		unsigned n;
		int kern;
		const uint64_t *f = dtcap_stack(r, s, &n, &kern, NULL);
		for (unsigned k = 0; kern && k < n; k++)
			kunknown += !near_sym(ka, nk, f[k]);
	}
	result(kunknown > 0, "gen.some_unknown_kernel_frames", "%s", "none");
	result(kframes > 1000 && kknown * 1000 >= kframes * 990,
	       "gen.kernel_frames_symbolize", "%llu of %llu kernel frames in kallsyms range",
	       (unsigned long long)kknown, (unsigned long long)kframes);
	result(uframes > 1000 && uknown * 1000 >= uframes * 990,
	       "gen.user_frames_symbolize", "%llu of %llu user frames in a file symbol",
	       (unsigned long long)uknown, (unsigned long long)uframes);
	free(ka);
	dtcap_reader_close(r);
}

/* ------------------------------------------------------ column codecs */

/* The ts column of t0 + deltas, decoded: the times and their extremes must
 * be those of the running sum, whichever way dtc_dec_ts finds them (the
 * in-order shortcut or the scan). */
static int ts_case(uint64_t t0, const int64_t *d, uint32_t n)
{
	uint64_t zz[64], want[64], got[64], lo = UINT64_MAX, hi = 0, t = t0, glo, ghi;
	for (uint32_t i = 0; i < n; i++) {
		zz[i] = ((uint64_t)d[i] << 1) ^ (uint64_t)(d[i] >> 63);
		t += (uint64_t)d[i];
		want[i] = t;
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	struct dtc_buf b = {0};
	dtc_enc_u64(&b, zz, n);
	int ok = !b.err && !dtc_dec_ts(b.p, b.len, got, n, t0, &glo, &ghi) &&
		 !memcmp(got, want, n * sizeof(*got)) && glo == lo && ghi == hi;
	dtc_buf_free(&b);
	return ok;
}

static void test_codecs(void)
{
	int64_t d[64];
	int ok = 1;
	/* in order, with ties */
	for (uint32_t i = 0; i < 64; i++)
		d[i] = i % 5 ? (int64_t)(rnd() % 100000) : 0;
	ok &= ts_case(5000, d, 64) && ts_case(0, d, 1);
	/* one step back, at the start, middle and end */
	for (uint32_t at = 0; at < 64; at += 21) {
		int64_t keep = d[at];
		d[at] = -(int64_t)(rnd() % 1000) - 1;
		ok &= ts_case(1u << 30, d, 64);
		d[at] = keep;
	}
	/* never back, but the sum wraps past 2^64: the extremes are not
	 * the first and last rows */
	for (uint32_t i = 0; i < 64; i++)
		d[i] = 1000;
	ok &= ts_case(UINT64_MAX - 20000, d, 64);
	d[0] = INT64_MAX;
	d[1] = INT64_MAX;
	ok &= ts_case(10, d, 3);
	/* all-equal times (width 0) */
	for (uint32_t i = 0; i < 64; i++)
		d[i] = 0;
	ok &= ts_case(77, d, 64);
	result(ok, "codec.ts_times_and_extremes", "dtc_dec_ts differs from the running sum");

	/* the ranged u32 decoder: every width, ranges in any order, its
	 * largest value, equal to the whole-column decoder */
	ok = 1;
	for (unsigned w = 0; w <= 4 && ok; w++) {
		uint32_t v[300], a[300], c[300], lo = 1000;
		uint64_t range = w ? (1ull << (8 * w)) - 1 : 0;
		if (w == 4)
			lo = 0;
		for (uint32_t i = 0; i < 300; i++)
			v[i] = lo + (uint32_t)(range ? rnd() % (range + 1) : 0);
		v[17] = lo + (uint32_t)range;	/* the width is exactly w */
		v[18] = lo;
		struct dtc_buf b = {0};
		dtc_enc_u32(&b, v, 300);
		struct dtc_u32col col;
		ok &= !b.err && b.p[0] == w && !dtc_dec_u32(b.p, b.len, a, 300) &&
		      !dtc_u32col_open(&col, b.p, b.len, 300);
		static const uint32_t cut[][2] = {{100, 300}, {0, 1}, {1, 100}, {5, 5}};
		for (unsigned k = 0; ok && k < 4; k++) {
			uint32_t mx = 0;
			for (uint32_t i = cut[k][0]; i < cut[k][1]; i++)
				mx = v[i] > mx ? v[i] : mx;
			ok &= dtc_u32col_get(&col, c, cut[k][0], cut[k][1]) == mx;
		}
		ok &= !memcmp(a, v, sizeof(v)) && !memcmp(c, v, sizeof(v)) &&
		      dtc_u32col_open(&col, b.p, b.len - 1, 300) == -1 &&
		      (!w || dtc_u32col_open(&col, b.p, b.len, 299) == -1);
		dtc_buf_free(&b);
	}
	/* a base near 2^32 with planes that carry past it: damage, reported
	 * as the largest value so a bound check refuses it */
	uint8_t bad[5 + 2] = {1, 0xf0, 0xff, 0xff, 0xff, 0x01, 0x20};
	struct dtc_u32col col;
	uint32_t out[2];
	ok &= !dtc_u32col_open(&col, bad, sizeof(bad), 2) &&
	      dtc_u32col_get(&col, out, 0, 2) == UINT32_MAX;
	result(ok, "codec.u32_ranges", "dtc_u32col_get differs from dtc_dec_u32");
}

/* SRCL: source lines round trip, sorted, the first of a duplicate kept;
 * a second chunk of the same file merges; bad input refused */
static void test_srclines(void)
{
	const char *p = tpath("srcl.dtc");
	struct dtcap_writer *w = dtcap_create(p, NULL, NULL);
	struct dtcap_sym sy = { 0x1000, 0x100, "walk" };
	struct dtcap_file f = { 0, "/bin/prog", { 1, 2, 3 }, 3, 0, 1, &sy };
	uint32_t id = w ? dtcap_put_file(w, &f) : 0;
	struct dtcap_srcframe a[2] = { { "_Z6helperm", "/src/h.h", 7 }, { "walk", "/src/w.c", 24 } };
	struct dtcap_srcframe b = { "walk", "/src/w.c", 25 }, dup = { "other", "x.c", 1 };
	struct dtcap_srcline sl[3] = { { 0x1040, 1, &b }, { 0x1010, 2, a }, { 0x1040, 1, &dup } };
	struct dtcap_srcline more = { 0x1080, 1, &b }, bad = { 0x1090, 0, &b };
	int ok = w && id == 1 && !dtcap_put_srclines(w, id, sl, 3) &&
		 !dtcap_put_srclines(w, id, &more, 1);
	int refused = w && dtcap_put_srclines(w, 7, &more, 1) < 0 &&
		      dtcap_put_srclines(w, id, &bad, 1) < 0;
	ok = ok && !dtcap_close(w);
	struct dtcap_reader *r = ok ? dtcap_open(p) : NULL;
	const struct dtcap_srcline *x = r ? dtcap_srcline_find(r, 1, 0x1010) : NULL;
	const struct dtcap_srcline *y = r ? dtcap_srcline_find(r, 1, 0x1040) : NULL;
	const struct dtcap_srcline *z = r ? dtcap_srcline_find(r, 1, 0x1080) : NULL;
	uint32_t fid = 0;
	result(r && dtcap_nsrclines(r) == 3 && x && x->nframes == 2 &&
	       !strcmp(x->frames[0].func, "_Z6helperm") && !strcmp(x->frames[0].file, "/src/h.h") &&
	       x->frames[0].line == 7 && !strcmp(x->frames[1].file, "/src/w.c") &&
	       x->frames[1].line == 24 && y && y->nframes == 1 && y->frames[0].line == 25 &&
	       z && z->frames[0].line == 25 && !dtcap_srcline_find(r, 1, 0x1011) &&
	       !dtcap_srcline_find(r, 2, 0x1010) && dtcap_srcline_at(r, 0, &fid) == x && fid == 1,
	       "srclines.roundtrip", "%s", r ? "wrong contents" : dtcap_open_error());
	result(refused, "srclines.bad_input_refused", "unknown file or 0 frames accepted");
	dtcap_reader_close(r);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--tsan")) {
		/* the threaded writer under TSan: the round trips only */
		check_prefix = "tsan.";
		snprintf(tmpdir, sizeof(tmpdir), "%s", argv[2]);
		test_roundtrip();
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: fmt_test TMPDIR GENERATED.dtc | --tsan TMPDIR\n");
		return 2;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", argv[1]);
	test_codecs();
	test_roundtrip();
	test_small();
	test_srclines();
	test_generated(argv[2]);

	/* a small capture: every cut and every fourth byte flipped */
	struct model m;
	build_model(&m, 700);
	char err[512];
	const char *small = tpath("small.dtc");
	if (write_model(&m, small, 100, 0, err, sizeof(err)))
		result(0, "truncation.small", "%s", err);
	else {
		test_truncation("truncation.small_every_offset", small, 1);
		test_corruption("corruption.small", small, 2);
	}
	free(m.ev);
	free(m.ksyms);
	free(m.mods);
	test_truncation("truncation.generated", argv[2], 0);
	test_corruption("corruption.generated", argv[2], 1500);
	return 0;
}
