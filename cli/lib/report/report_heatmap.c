/*
 * report_heatmap.c - FlameScope's subsecond-offset heatmap (engine.h
 * rpt_heatmap): one column per second of the recording, one row per slice
 * of a second (offset within it, top to bottom), each cell coloured by the
 * samples in it.  A self-contained SVG: hovering a cell says its time and
 * count; clicking two cells says the range between them as the --since and
 * --until to give dtreport flame (or dtsh's flame).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "engine.h"
#include "report.h"
#include "scan_pool.h"

#define MAXCOLS		36000	/* ten hours of seconds */

struct hm {
	const uint8_t	*want;		/* by probe id */
	uint32_t	nwant;
	uint64_t	start;
	uint32_t	rows;
	uint64_t	*cells;		/* [col * rows + row] */
	size_t		ncols, colcap;
	uint64_t	n, before;
	int		oom;
};

static int
hm_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct hm *h = ctx;
	uint32_t p = b->probe[i];

	if (p >= h->nwant || !h->want[p])
		return 0;
	if (b->ts[i] < h->start) {
		h->before++;
		return 0;
	}
	uint64_t off = b->ts[i] - h->start;
	size_t col = (size_t)(off / 1000000000ULL);
	uint32_t row = (uint32_t)((off % 1000000000ULL) * h->rows / 1000000000ULL);
	if (col >= MAXCOLS)
		return 0;
	if (col >= h->ncols) {
		size_t need = col + 1;
		if (need > h->colcap) {
			size_t nc = h->colcap ? h->colcap * 2 : 64;
			while (nc < need)
				nc *= 2;
			uint64_t *c = realloc(h->cells, nc * h->rows * sizeof(*c));
			if (c == NULL) {
				h->oom = 1;
				return 1;
			}
			memset(c + h->colcap * h->rows, 0, (nc - h->colcap) * h->rows * sizeof(*c));
			h->cells = c;
			h->colcap = nc;
		}
		h->ncols = need;
	}
	h->cells[col * h->rows + row]++;
	h->n++;
	return 0;
}

/*
 * On the scan pool: each worker counts its blocks into cells of its own
 * (sharing the caller's probe set, read only); the merge adds them.  Sums
 * do not depend on the order, so the map is the same for any --threads.
 */
static void *
hm_part_new(void *ctx)
{
	const struct hm *m = ctx;
	struct hm *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->want = m->want;
	p->nwant = m->nwant;
	p->start = m->start;
	p->rows = m->rows;
	return p;
}

static void
hm_part_free(void *ctx, void *part)
{
	struct hm *p = part;

	(void)ctx;
	free(p->cells);
	free(p);
}

static int
hm_part_row(void *part, const struct dtcap_block *b, uint32_t row, char *err, size_t errlen)
{
	if (hm_row(part, b, row) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return 1;
}

static int
hm_merge(void *ctx, void *part)
{
	struct hm *m = ctx, *p = part;

	m->n += p->n;
	m->before += p->before;
	if (p->ncols > m->ncols) {
		if (m->ncols == 0) {
			/* the first with columns: taken over, not added up */
			uint64_t *c = m->cells;
			size_t cap = m->colcap;
			m->cells = p->cells, m->colcap = p->colcap, m->ncols = p->ncols;
			p->cells = c, p->colcap = cap, p->ncols = 0;
			return 0;
		}
		if (p->ncols > m->colcap) {
			uint64_t *c = realloc(m->cells, p->ncols * m->rows * sizeof(*c));
			if (c == NULL)
				return -1;
			m->cells = c;
			m->colcap = p->ncols;
		}
		memset(m->cells + m->ncols * m->rows, 0,
		       (p->ncols - m->ncols) * m->rows * sizeof(*m->cells));
		m->ncols = p->ncols;
	}
	for (size_t k = 0; k < p->ncols * p->rows; k++)
		m->cells[k] += p->cells[k];
	return 0;
}

/* white, through yellow and orange, to dark red: FlameScope's scale */
static void
colour(uint64_t v, uint64_t max, char *out, size_t len)
{
	if (v == 0 || max == 0) {
		snprintf(out, len, "#f8f8f8");
		return;
	}
	double x = (double)v / (double)max;
	int r = 255, g, b;
	if (x < 0.5) {
		g = (int)(240 - 140 * (x / 0.5));
		b = (int)(200 - 200 * (x / 0.5));
	} else {
		r = (int)(255 - 100 * ((x - 0.5) / 0.5));
		g = (int)(100 - 100 * ((x - 0.5) / 0.5));
		b = 0;
	}
	snprintf(out, len, "#%02x%02x%02x", r, g, b);
}

static void
esc(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"var first = null, info = document.getElementById('info'), sel = document.getElementById('sel');\n"
"function t(c) { return parseInt(c.getAttribute('data-c')) + parseInt(c.getAttribute('data-r')) / ROWS; }\n"
"function fmt(x) { return x.toFixed(3); }\n"
"document.querySelectorAll('rect.c').forEach(function (c) {\n"
"  c.addEventListener('mouseover', function () {\n"
"    info.textContent = 'time ' + fmt(t(c)) + 's to ' + fmt(t(c) + 1 / ROWS) + 's: ' +\n"
"      c.getAttribute('data-n') + ' ' + UNIT;\n"
"  });\n"
"  c.addEventListener('click', function () {\n"
"    if (first === null) {\n"
"      first = c; c.setAttribute('stroke', 'black');\n"
"      sel.textContent = 'from ' + fmt(t(c)) + 's: click the end cell';\n"
"      return;\n"
"    }\n"
"    var a = Math.min(t(first), t(c)), b = Math.max(t(first), t(c)) + 1 / ROWS;\n"
"    first.removeAttribute('stroke'); first = null;\n"
"    sel.textContent = 'dtreport flame --since ' + fmt(a) + ' --until ' + fmt(b) + ' ' + CAP +\n"
"      '    (dtsh: flame --since ' + fmt(a) + ' --until ' + fmt(b) + ')';\n"
"  });\n"
"});\n"
"document.documentElement.setAttribute('data-ready', '1');\n"
"]]></script>\n";

int
rpt_heatmap(const struct rpt_cap *c, struct flt_filter *f, const struct rpt_heatmap_opts *o,
	    FILE *out, const char *outname, volatile sig_atomic_t *cancel)
{
	struct hm h = { 0 };
	uint8_t *want = NULL;
	char err[512], desc[256] = "";
	int ret = RPT_EXIT_ERROR;

	if (flt_resolve(f, c->r, err, sizeof(err))) {
		rpt_err("heatmap", "%s: %s", c->path, err);
		return RPT_EXIT_ERROR;
	}
	h.rows = o->rows ? o->rows : 50;
	h.start = dtcap_host(c->r)->start_ns;
	h.nwant = dtcap_max_probe_id(c->r) + 1;
	if ((want = calloc(h.nwant, 1)) == NULL)
		goto oom;
	/* the timer probes' samples, as flame counts them, or --probe's events */
	size_t ntimer = 0, nw = 0;
	for (size_t i = 0; i < dtcap_nprobes(c->r); i++)
		ntimer += !!(dtcap_probe_at(c->r, i)->flags & DT_PF_TIMER);
	for (size_t i = 0; i < dtcap_nprobes(c->r); i++) {
		const struct dtcap_probe *p = dtcap_probe_at(c->r, i);
		int w = f->probe_ok ? p->id < f->nprobe_ok && f->probe_ok[p->id] :
			ntimer ? !!(p->flags & DT_PF_TIMER) : 1;
		if (!w)
			continue;
		want[p->id] = 1;
		size_t l = strlen(desc);
		if (nw < 3)
			snprintf(desc + l, sizeof(desc) - l, "%s%s", nw ? ", " : "", p->name);
		else if (nw == 3)
			snprintf(desc + l, sizeof(desc) - l, ", ...");
		nw++;
	}
	h.want = want;
	struct dtsp_job job = { .part_new = hm_part_new, .part_free = hm_part_free,
				.row = hm_part_row, .merge = hm_merge };
	if (dtsp_scan(c->r, f, DTCAP_COL_TS | DTCAP_COL_PROBE, &job, &h, cancel,
		      rpt_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err))) {
		if (strcmp(err, "out of memory") == 0)
			goto oom;
		rpt_err("heatmap", "%s", err);
		goto out;
	}
	rpt_note_empty("heatmap", c->path, h.n, flt_active(f));
	uint64_t max = 0;
	for (size_t k = 0; k < h.ncols * h.rows; k++)
		max = h.cells[k] > max ? h.cells[k] : max;
	unsigned cw = h.ncols ? 1200 / (unsigned)h.ncols : 20, ch = o->rows > 100 ? 4 : 10;
	cw = cw < 6 ? 6 : cw > 40 ? 40 : cw;
	unsigned W = 60 + (unsigned)h.ncols * cw + 20, H = 90 + h.rows * ch + 40;
	if (W < 700)
		W = 700;
	const char *unit = ntimer && !f->probe_ok ? "samples" : "events";
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana, sans-serif\" "
		"font-size=\"12\">\n", W, H, W, H);
	fprintf(out, "<text x=\"%u\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">Subsecond "
		"Offset Heat Map</text>\n<text x=\"%u\" y=\"42\" text-anchor=\"middle\" fill=\"#555\">",
		W / 2, W / 2);
	esc(out, c->path);
	fprintf(out, ": %" PRIu64 " %s of ", h.n, unit);
	esc(out, desc[0] ? desc : "no probe");
	fprintf(out, "; columns: seconds, rows: offset within the second (%u ms each), "
		"max %" PRIu64 " a cell</text>\n", 1000 / h.rows, max);
	fprintf(out, "<text id=\"info\" x=\"10\" y=\"62\"> </text>\n"
		"<text id=\"sel\" x=\"10\" y=\"%u\">click two cells for the --since and "
		"--until of that range</text>\n", H - 12);
	for (size_t col = 0; col < h.ncols; col++) {
		if (col % (h.ncols > 60 ? 10 : h.ncols > 20 ? 5 : 1) == 0)
			fprintf(out, "<text x=\"%zu\" y=\"%u\" font-size=\"10\">%zu</text>\n",
				60 + col * cw, 84, col);
		for (uint32_t row = 0; row < h.rows; row++) {
			char fill[16];
			uint64_t v = h.cells[col * h.rows + row];
			colour(v, max, fill, sizeof(fill));
			fprintf(out, "<rect class=\"c\" x=\"%zu\" y=\"%u\" width=\"%u\" height=\"%u\" "
				"fill=\"%s\" data-c=\"%zu\" data-r=\"%u\" data-n=\"%" PRIu64 "\"/>\n",
				60 + col * cw, 90 + row * ch, cw, ch, fill, col, row, v);
		}
		if ((col & 63) == 0 && cancel && *cancel) {
			rpt_err("heatmap", "interrupted");
			goto out;
		}
	}
	for (uint32_t row = 0; row < h.rows; row += h.rows / 5 ? h.rows / 5 : 1)
		fprintf(out, "<text x=\"52\" y=\"%u\" font-size=\"10\" text-anchor=\"end\">%.2f</text>\n",
			90 + row * ch + ch, (double)row / h.rows);
	fprintf(out, "<script type=\"text/ecmascript\">var ROWS = %u, UNIT = '%s', CAP = '", h.rows,
		unit);
	/* the capture's path inside a JS string inside XML: only safe bytes */
	for (const char *s = c->path; *s; s++)
		fputc(strchr("'\\<>&\"\n\r", *s) ? '_' : *s, out);
	fprintf(out, "';</script>\n%s</svg>\n", script);
	if (ferror(out)) {
		rpt_err("heatmap", "%s: write error", outname);
		goto out;
	}
	ret = 0;
	goto out;
oom:
	rpt_err("heatmap", "%s: out of memory", c->path);
	ret = RPT_EXIT_ERROR;
out:
	free(want);
	free(h.cells);
	return ret;
}
