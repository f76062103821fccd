/*
 * report_annotate.c - the annotate engine (engine.h rpt_annotate): where
 * in a function its samples were taken, by source line (from the
 * capture's source lines, with the text where the source file is
 * readable here) and by instruction (disassembled from the file on disk
 * when it is the build recorded: disasm.c).
 *
 * The samples are those flame graphs count (rpt_sample_probes), each by
 * its innermost user frame: a function's self time, as top --by sym
 * counts it (a sample with a kernel stack was taken in the kernel, and
 * is not the function's).  They are counted per (user stack, process snapshot) in one
 * pass over the event columns, and only those combinations are named.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disasm.h"
#include "dt_grow.h"
#include "dt_htab.h"
#include "engine.h"
#include "report.h"
#include "termsafe.h"
#include "util.h"

struct agg {
	uint32_t	ustack, pid;
	const struct dtcap_proc *proc;
	uint64_t	ts, count;
};

struct scan {
	struct dtcap_reader *r;
	const uint8_t	*want;
	uint32_t	nwant;
	struct agg	*v;
	size_t		n, cap;
	struct dt_htab	ix;
	uint64_t	total;
	int		oom;
};

static uint64_t agg_hash(uint32_t u, const struct dtcap_proc *p)
{
	return dt_htab_hash_int((uint64_t)u * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)p);
}

static uint64_t agg_rehash(const void *ctx, uint32_t e)
{
	const struct scan *s = ctx;
	return agg_hash(s->v[e].ustack, s->v[e].proc);
}

static int scan_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct scan *s = ctx;
	uint32_t probe = b->probe[i];

	if (probe >= s->nwant || !s->want[probe])
		return 0;
	s->total++;
	uint32_t u = b->ustack[i];
	/* with a kernel stack the sample was taken in the kernel: the user
	 * frame is where the program entered it, not where it ran */
	if (u == 0 || b->kstack[i])
		return 0;
	const struct dtcap_proc *p = dtcap_proc_find(s->r, b->pid[i], b->ts[i]);
	uint64_t h = agg_hash(u, p);
	uint32_t e;
	for (size_t k = dt_htab_first(&s->ix, h); (e = dt_htab_at(&s->ix, k)) != DT_HTAB_NONE;
	     k = dt_htab_next(&s->ix, k))
		if (s->v[e].ustack == u && s->v[e].proc == p) {
			s->v[e].count++;
			return 0;
		}
	if (DT_GROW(s->v, s->cap, s->n, 1, 1024) ||
	    dt_htab_add(&s->ix, h, (uint32_t)s->n, agg_rehash, s)) {
		s->oom = 1;
		return -1;
	}
	s->v[s->n++] = (struct agg){ u, b->pid[i], p, b->ts[i], 1 };
	return 0;
}

/* One sampled address of a matched function. */
struct hit {
	const struct dtcap_file *f;
	const struct dtcap_sym *sym;
	uint64_t	vaddr, count;
	const char	*file;		/* source, "" unknown */
	uint32_t	line;
	const char	*fname;		/* the function's name as printed */
};

static int hit_cmp(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	if (x->f != y->f)
		return x->f->id < y->f->id ? -1 : 1;
	if (x->sym != y->sym)
		return x->sym->addr < y->sym->addr ? -1 : 1;
	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return 0;
}

struct lrow {
	const char	*file;
	uint32_t	line;
	uint64_t	count;
};

static int lrow_cmp(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* The source file read once, its lines found on demand. */
struct srcfile {
	char		*path;
	char		*text;		/* NULL: not readable here */
	size_t		len;
};

static void src_load(struct srcfile *s, const char *path)
{
	char err[512];
	if (s->path && !strcmp(s->path, path))
		return;
	free(s->path);
	free(s->text);
	s->text = NULL;
	s->len = 0;
	s->path = strdup(path);
	if (!path[0] || !s->path)
		return;
	int fd = dtu_open_regular(path, 0, err, sizeof(err));
	if (fd < 0)
		return;
	size_t cap = 0;
	for (;;) {
		if (s->len == cap) {
			/* a source file, not a data set: 64 MiB is plenty */
			if (cap >= (64U << 20))
				break;
			size_t nc = cap ? 2 * cap : 65536;
			char *t = realloc(s->text, nc + 1);
			if (!t)
				break;
			s->text = t;
			cap = nc;
		}
		ssize_t k = read(fd, s->text + s->len, cap - s->len);
		if (k <= 0)
			break;
		s->len += (size_t)k;
	}
	close(fd);
	if (s->text)
		s->text[s->len] = '\0';
}

/* Line n of the loaded file, tabs as spaces, cut at 100 bytes; NULL if
 * the file is not readable or shorter. */
static const char *src_line(const struct srcfile *s, uint32_t n, char *buf, size_t len)
{
	if (!s->text || n == 0)
		return NULL;
	const char *p = s->text, *end = s->text + s->len;
	for (uint32_t k = 1; k < n; k++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return NULL;
		p = nl + 1;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	size_t o = 0;
	for (; p < end && *p != '\n' && o + 1 < len && o < 100; p++)
		buf[o++] = *p == '\t' ? ' ' : *p;
	buf[o] = '\0';
	return buf;
}

static int print_func(FILE *out, const struct hit *h, size_t n, uint64_t total,
		      const struct rpt_annotate_opts *o, struct srcfile *src)
{
	uint64_t fsum = 0;
	for (size_t i = 0; i < n; i++)
		fsum += h[i].count;
	fprintf(out, "# %s: %" PRIu64 " of %" PRIu64 " samples (%.1f%%) taken in it "
		"(self)\n", dtt_str(h[0].fname), fsum, total,
		total ? 100.0 * (double)fsum / (double)total : 0.0);
	fprintf(out, "# %s, function at 0x%" PRIx64 ", %" PRIu64 " bytes\n",
		dtt_str(h[0].f->path), h[0].sym->addr, h[0].sym->size);

	/* source lines: each address by its innermost position (an
	 * inlined call's line where it was inlined), in source order */
	struct lrow *lr = calloc(n, sizeof(*lr));
	size_t nl = 0, nknown = 0;
	if (!lr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < nl; k++)
			if (lr[k].line == h[i].line && !strcmp(lr[k].file, h[i].file))
				break;
		if (k == nl)
			lr[nl++] = (struct lrow){ h[i].file, h[i].line, 0 };
		lr[k].count += h[i].count;
		nknown += h[i].line != 0;
	}
	qsort(lr, nl, sizeof(*lr), lrow_cmp);
	if (nknown == 0) {
		fprintf(out, "# source lines: none in the capture (recorded with --no-srcline, "
			"or the file has no DWARF line table)\n");
	} else {
		fprintf(out, "%12s %6s  %-s\n", "COUNT", "PCT", "LINE  SOURCE");
		for (size_t k = 0; k < nl; k++) {
			char buf[128];
			const char *t = NULL;
			if (!o->no_source && lr[k].line) {
				src_load(src, lr[k].file);
				t = src_line(src, lr[k].line, buf, sizeof(buf));
			}
			char pos[4200];
			snprintf(pos, sizeof(pos), "%s:%u", lr[k].file[0] ? lr[k].file : "??",
				 lr[k].line);
			fprintf(out, "%12" PRIu64 " %5.1f%%  %s%s%s\n", lr[k].count,
				fsum ? 100.0 * (double)lr[k].count / (double)fsum : 0.0,
				dtt_str(pos), t ? "  " : "", t ? dtt_str(t) : "");
		}
	}
	free(lr);
	if (o->no_insns)
		return 0;

	/* instructions: every one of the function, its samples beside it */
	char err[600];
	size_t ni = 0;
	struct rpt_insn *in = rpt_disasm(h[0].f, h[0].sym->addr, h[0].sym->size, &ni, err,
					 sizeof(err));
	if (!in) {
		fprintf(out, "# instructions: not disassembled: %s\n", dtt_str(err));
		fprintf(out, "%12s %6s  %s\n", "COUNT", "PCT", "ADDRESS");
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%12" PRIu64 " %5.1f%%  0x%" PRIx64 "\n", h[i].count,
				fsum ? 100.0 * (double)h[i].count / (double)fsum : 0.0,
				h[i].vaddr);
		return 0;
	}
	fprintf(out, "# instructions (from %s, the build recorded)\n", dtt_str(h[0].f->path));
	fprintf(out, "%12s %6s  %-10s %-40s %s\n", "COUNT", "PCT", "ADDRESS", "INSTRUCTION",
		"LINE");
	size_t j = 0;
	for (size_t k = 0; k < ni; k++) {
		uint64_t cnt = 0;
		const struct hit *hh = NULL;
		/* samples at an address no instruction starts at (a misread
		 * stack) go to the instruction that covers it */
		while (j < n && h[j].vaddr < (k + 1 < ni ? in[k + 1].addr : UINT64_MAX)) {
			if (h[j].vaddr >= in[k].addr) {
				cnt += h[j].count;
				hh = &h[j];
			}
			j++;
		}
		char pct[16] = "", cs[24] = "", ln[32] = "";
		if (cnt) {
			snprintf(cs, sizeof(cs), "%" PRIu64, cnt);
			snprintf(pct, sizeof(pct), "%5.1f%%",
				 fsum ? 100.0 * (double)cnt / (double)fsum : 0.0);
			if (hh->line)
				snprintf(ln, sizeof(ln), "%u", hh->line);
		}
		fprintf(out, "%12s %6s  0x%-8" PRIx64 " %-40s %s\n", cs, pct, in[k].addr,
			dtt_str(in[k].text), ln);
	}
	free(in);
	return 0;
}

int rpt_annotate(const struct rpt_cap *c, struct flt_filter *f,
		 const struct rpt_annotate_opts *o, FILE *out, volatile sig_atomic_t *cancel)
{
	struct scan s = { .r = c->r };
	struct dtsym *sym = c->sym, *own = NULL;
	struct hit *hits = NULL;
	size_t nh = 0, hcap = 0;
	char err[512], probes[256];
	int rc = RPT_EXIT_ERROR, use_re = 0;
	regex_t re;
	struct srcfile src = { 0 };
	const char *pat = o->func;
	size_t pl = strlen(pat);

	if (pl >= 2 && pat[0] == '/' && pat[pl - 1] == '/') {
		char *p = strndup(pat + 1, pl - 2);
		int e = p ? regcomp(&re, p, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;
		free(p);
		if (e) {
			rpt_err("annotate", "bad regular expression %s", pat);
			return RPT_EXIT_USAGE;
		}
		use_re = 1;
	}
	if (flt_resolve(f, s.r, err, sizeof(err))) {
		rpt_err("annotate", "%s: %s", c->path, err);
		goto out;
	}
	s.nwant = dtcap_max_probe_id(s.r) + 1;
	if (!(s.want = rpt_sample_probes(s.r, f, "annotate", c->path, probes, sizeof(probes))))
		goto oom;
	if (flt_scan(s.r, f, DTCAP_COL_PROBE | DTCAP_COL_USTACK | DTCAP_COL_KSTACK | DTCAP_COL_PID |
			     DTCAP_COL_TS,
		     scan_row, &s, cancel, rpt_shell ? "dtsh: reading" : "dtreport: reading",
		     err, sizeof(err))) {
		rpt_err("annotate", "%s", s.oom ? "out of memory" : err);
		goto out;
	}
	rpt_note_empty("annotate", c->path, s.total, flt_active(f));
	if (!sym && !(sym = own = dtsym_open(s.r)))
		goto oom;
	for (size_t i = 0; i < s.n; i++) {
		const struct agg *a = &s.v[i];
		unsigned np;
		int k, t;
		const uint64_t *pcs = dtcap_stack(s.r, a->ustack, &np, &k, &t);
		if (!pcs || np == 0)
			continue;
		const char *nm = dtsym_name(sym, pcs[0], 0, a->pid, a->ts);
		int yes = use_re ? regexec(&re, nm, 0, NULL, 0) == 0
				 : !strcmp(nm, pat) || fnmatch(pat, nm, 0) == 0;
		const struct dtcap_file *file;
		const struct dtcap_sym *fs;
		uint64_t v;
		if (!yes || dtsym_locate(sym, pcs[0], a->pid, a->ts, &file, &v, &fs) < 0 || !fs)
			continue;
		const struct dtcap_srcline *sl = dtsym_srcline(sym, pcs[0], 0, a->pid, a->ts);
		if (DT_GROW(hits, hcap, nh, 1, 256))
			goto oom;
		hits[nh++] = (struct hit){ file, fs, v, a->count,
					   sl ? sl->frames[0].file : "", sl ? sl->frames[0].line : 0,
					   nm };
	}
	if (nh == 0) {
		rpt_err("annotate", "%s: no sample was taken in a function matching '%s'",
			c->path, pat);
		rc = RPT_EXIT_OK;
		goto out;
	}
	qsort(hits, nh, sizeof(*hits), hit_cmp);
	/* merge the same address met through several stacks */
	size_t m = 0;
	for (size_t i = 0; i < nh; i++) {
		if (m && hits[m - 1].f == hits[i].f && hits[m - 1].vaddr == hits[i].vaddr)
			hits[m - 1].count += hits[i].count;
		else
			hits[m++] = hits[i];
	}
	nh = m;
	fprintf(out, "# annotate %s: samples of %s\n", dtt_str(pat),
		probes[0] ? dtt_str(probes) : "no probe");
	for (size_t i = 0; i < nh;) {
		size_t j = i;
		while (j < nh && hits[j].f == hits[i].f && hits[j].sym == hits[i].sym)
			j++;
		if (i)
			fputc('\n', out);
		if (print_func(out, hits + i, j - i, s.total, o, &src) < 0)
			goto oom;
		i = j;
	}
	rc = fflush(out) == 0 && !ferror(out) ? RPT_EXIT_OK : RPT_EXIT_ERROR;
	goto out;
oom:
	rpt_err("annotate", "%s: out of memory", c->path);
	rc = RPT_EXIT_ERROR;
out:
	if (use_re)
		regfree(&re);
	free(src.path);
	free(src.text);
	free(hits);
	free(s.v);
	dt_htab_free(&s.ix);
	free((void *)s.want);
	dtsym_close(own);
	return rc;
}
