/*
 * export_chrome.c - `dtreport export --format chrome`: the capture as
 * Chrome trace event JSON (the "JSON Object Format" of the Trace Event
 * Format document), which Perfetto's UI and chrome://tracing load.
 *
 *  - syscall and kprobe entry/return pairs become complete events
 *    ("ph":"X") on their thread: name = the function, cat = the provider,
 *    args.ret = the return value.  Pairing is per thread in time order; a
 *    return closes the innermost open entry of the same function (entries
 *    left open above it, whose returns were lost, are dropped, and a
 *    return without an entry is ignored), so slices always nest.
 *  - timer samples become thread instants ("ph":"i", cat "profile") named
 *    by their innermost frame (kernel side first), stack ids in args.
 *  - every other event (sched tracepoints, ...) is a thread instant named
 *    by its probe, cat = the provider.
 *  - thread_name / process_name metadata from the events' comms.
 * Times are microseconds since the recording start with ns precision
 * ("ts":12.345); displayTimeUnit is "ns".
 *
 * Instants are streamed in capture order; the entry/return events are
 * kept (24 bytes each) and sorted, since a capture's rows are per-CPU
 * batches, not time order.  The output is created O_EXCL (never replaces
 * a file) and removed if the export fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_abi.h"
#include "dt_grow.h"
#include "dtcap.h"
#include "dtsym.h"
#include "export.h"
#include "report.h"
#include "util.h"

static const char *prog(void)
{
	return program_invocation_short_name;
}

enum { K_INSTANT, K_SAMPLE, K_ENTRY, K_RETURN };

struct pev {
	uint64_t	ts;
	uint32_t	tid, pid;
	uint32_t	fn;		/* pair function index */
	uint32_t	isret;
	int64_t		ret;
	uint64_t	seq;		/* capture order: ties keep it */
};

struct thr {
	uint32_t	pid, tid, comm;
};

/* Microseconds since start, ns precision. */
static void json_ts(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

static int pev_cmp(const void *a, const void *b)
{
	const struct pev *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int thr_cmp(const void *a, const void *b)
{
	const struct thr *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int export_chrome(const char *path, const char *cap, int partial, int salvage)
{
	int status;
	struct dtcap_reader *r = export_open(path, cap, partial, salvage, &status);
	if (r == NULL)
		return status;
	int ret = 1, created = 0;
	FILE *f = NULL;
	struct dtu_out out;
	struct dtsym *sym = dtsym_open(r);
	struct dtcap_block *b = dtcap_block_new();
	uint8_t *kind = NULL;
	uint32_t *fnof = NULL;
	char (*fnames)[DTCAP_PROBENAMELEN] = NULL;
	size_t nfn = 0;
	struct pev *pe = NULL;
	size_t npe = 0, cpe = 0;
	struct thr *th = NULL;
	size_t nth = 0, cth = 0;
	const char **kleaf = NULL;
	uint64_t nslices = 0, ninst = 0;
	if (!sym || !b)
		goto oom;

	size_t np = dtcap_nprobes(r);
	uint32_t maxid = dtcap_max_probe_id(r);
	kind = calloc((size_t)maxid + 1, 1);
	fnof = calloc((size_t)maxid + 1, sizeof(*fnof));
	fnames = calloc(np ? np : 1, sizeof(*fnames));
	kleaf = calloc((size_t)dtcap_nstacks(r) + 1, sizeof(*kleaf));
	if (!kind || !fnof || !fnames || !kleaf)
		goto oom;
	for (size_t i = 0; i < np; i++) {
		const struct dtcap_probe *p = dtcap_probe_at(r, i);
		size_t l = strlen(p->name);
		int entry = l > 6 && !strcmp(p->name + l - 6, ":entry");
		int paired = !strncmp(p->name, "syscall:", 8) || !strncmp(p->name, "kprobe:", 7);
		if (p->flags & DT_PF_TIMER)
			kind[p->id] = K_SAMPLE;
		else if (paired && (entry || (p->flags & DT_PF_RETURN)))
			kind[p->id] = entry ? K_ENTRY : K_RETURN;
		else
			kind[p->id] = K_INSTANT;
		if (kind[p->id] == K_ENTRY || kind[p->id] == K_RETURN) {
			/* "provider:function": the pair's key and the slice's name */
			char key[DTCAP_PROBENAMELEN];
			snprintf(key, sizeof(key), "%s", p->name);
			char *c = strrchr(key, ':');
			if (c)
				*c = 0;
			size_t k;
			for (k = 0; k < nfn && strcmp(fnames[k], key); k++)
				;
			if (k == nfn)
				memcpy(fnames[nfn++], key, sizeof(key));
			fnof[p->id] = (uint32_t)k;
		}
	}

	/* under a temporary name until complete: an interrupted export
	 * leaves nothing under the final one */
	char oerr[512];
	if (dtu_out_open_new(&out, path, &cap, 1, oerr, sizeof(oerr)) < 0) {
		fprintf(stderr, "%s: export: %s\n", prog(), oerr);
		goto out;
	}
	f = out.f;
	created = 1;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	const struct dtcap_host *h = dtcap_host(r);
	uint64_t t0 = h->start_ns;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"host\":", f);
	dtu_json_str(f, h->hostname);
	fputs(",\"kernel\":", f);
	dtu_json_str(f, h->kernel);
	fputs(",\"command\":", f);
	dtu_json_str(f, h->command);
	fputs("},\n\"traceEvents\":[\n", f);
	int first = 1;
#define SEP() (first ? (first = 0, "") : ",\n")

	uint64_t seq = 0;
	for (size_t bi = 0; bi < dtcap_nblocks(r); bi++) {
		if (dtcap_read_block(r, bi, DTCAP_COL_ALL, b) < 0) {
			fprintf(stderr, "%s: export: %s\n", prog(), dtcap_reader_error(r));
			goto out;
		}
		for (uint32_t i = 0; i < b->rows; i++, seq++) {
			uint32_t id = b->probe[i];
			int k = id <= maxid ? kind[id] : K_INSTANT;
			uint64_t ts = b->ts[i] > t0 ? b->ts[i] - t0 : 0;
			/* threads seen, with their latest comm */
			if (nth == 0 || th[nth - 1].tid != b->tid[i] || th[nth - 1].pid != b->pid[i]) {
				if (DT_GROW(th, cth, nth, 1, 1024))
					goto oom;
				th[nth++] = (struct thr){ b->pid[i], b->tid[i], b->comm[i] };
				if (nth == cth && cth >= 1u << 16) {
					/* dedup now and then: runs of one thread are long */
					qsort(th, nth, sizeof(*th), thr_cmp);
					size_t o = 0;
					for (size_t j = 0; j < nth; j++)
						if (o == 0 || thr_cmp(&th[o - 1], &th[j]))
							th[o++] = th[j];
						else if (th[j].comm)
							th[o - 1].comm = th[j].comm;
					nth = o;
				}
			} else if (b->comm[i]) {
				th[nth - 1].comm = b->comm[i];
			}
			if (k == K_ENTRY || k == K_RETURN) {
				if (DT_GROW(pe, cpe, npe, 1, 4096))
					goto oom;
				pe[npe++] = (struct pev){ b->ts[i], b->tid[i], b->pid[i], fnof[id],
							  k == K_RETURN,
							  (int64_t)b->args[i * DTCAP_MAXARGS], seq };
				continue;
			}
			const char *name, *cat;
			char catbuf[64];
			if (k == K_SAMPLE) {
				uint32_t ks = b->kstack[i], us = b->ustack[i];
				unsigned n;
				int kern, tr;
				name = "[no stack]";
				if (ks && ks <= dtcap_nstacks(r) && kleaf[ks]) {
					name = kleaf[ks];
				} else if (ks) {
					const uint64_t *pcs = dtcap_stack(r, ks, &n, &kern, &tr);
					if (pcs && n)
						name = kleaf[ks] = dtsym_name(sym, pcs[0], 1, 0, 0);
				} else if (us) {
					const uint64_t *pcs = dtcap_stack(r, us, &n, &kern, &tr);
					if (pcs && n)
						name = dtsym_name(sym, pcs[0], 0, b->pid[i], b->ts[i]);
				}
				cat = "profile";
			} else {
				const struct dtcap_probe *p = dtcap_probe_by_id(r, id);
				name = p ? p->name : "[unknown probe]";
				const char *c = strchr(name, ':');
				size_t cl = c ? (size_t)(c - name) : strlen(name);
				cl = cl < sizeof(catbuf) - 1 ? cl : sizeof(catbuf) - 1;
				memcpy(catbuf, name, cl);
				catbuf[cl] = 0;
				cat = catbuf;
			}
			fputs(SEP(), f);
			fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":", f);
			dtu_json_str(f, name);
			fputs(",\"cat\":", f);
			dtu_json_str(f, cat);
			json_ts(f, "ts", ts);
			fprintf(f, ",\"pid\":%u,\"tid\":%u,\"args\":{\"cpu\":%u", b->pid[i],
				b->tid[i], b->cpu[i]);
			if (k == K_SAMPLE)
				fprintf(f, ",\"kstack\":%u,\"ustack\":%u", b->kstack[i], b->ustack[i]);
			else
				for (unsigned a = 0; a < b->nargs[i] && a < DTCAP_MAXARGS; a++)
					fprintf(f, ",\"arg%u\":%lld", a,
						(long long)b->args[i * DTCAP_MAXARGS + a]);
			fputs("}}", f);
			ninst++;
		}
	}

	/* slices: per thread, in time order, returns close matching entries */
	if (npe)
		qsort(pe, npe, sizeof(*pe), pev_cmp);
	size_t open_[128], nopen = 0;
	for (size_t i = 0; i < npe; i++) {
		if (i == 0 || pe[i].tid != pe[i - 1].tid)
			nopen = 0;
		if (!pe[i].isret) {
			if (nopen == sizeof(open_) / sizeof(open_[0])) {
				/* deeper than any real nesting: the oldest was lost */
				memmove(open_, open_ + 1, (nopen - 1) * sizeof(open_[0]));
				nopen--;
			}
			open_[nopen++] = i;
			continue;
		}
		size_t d = nopen;
		while (d > 0 && pe[open_[d - 1]].fn != pe[i].fn)
			d--;
		if (d == 0)
			continue;
		const struct pev *e = &pe[open_[d - 1]];
		nopen = d - 1;
		const char *fnm = fnames[e->fn], *c = strchr(fnm, ':');
		char catbuf[64];
		snprintf(catbuf, sizeof(catbuf), "%.*s", c ? (int)(c - fnm) : 0, fnm);
		fputs(SEP(), f);
		fputs("{\"ph\":\"X\",\"name\":", f);
		dtu_json_str(f, c ? c + 1 : fnm);
		fputs(",\"cat\":", f);
		dtu_json_str(f, catbuf);
		json_ts(f, "ts", e->ts > t0 ? e->ts - t0 : 0);
		json_ts(f, "dur", pe[i].ts - e->ts);
		fprintf(f, ",\"pid\":%u,\"tid\":%u,\"args\":{\"ret\":%lld}}", e->pid, e->tid,
			(long long)pe[i].ret);
		nslices++;
	}

	/* names of threads and processes */
	if (nth)
		qsort(th, nth, sizeof(*th), thr_cmp);
	for (size_t j = 0; j < nth; j++) {
		if (j && !thr_cmp(&th[j - 1], &th[j]))
			continue;
		/* the latest comm of the thread: the last duplicate in the run */
		size_t l = j;
		while (l + 1 < nth && !thr_cmp(&th[l + 1], &th[j]))
			l++;
		uint32_t cm = th[l].comm;
		for (size_t m = j; !cm && m <= l; m++)
			cm = th[m].comm;
		const char *cn = dtcap_comm(r, cm);
		if (cn == NULL)
			continue;
		fputs(SEP(), f);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":", th[j].pid, th[j].tid);
		dtu_json_str(f, cn);
		fputs("}}", f);
		if (th[j].pid == th[j].tid) {
			fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,"
				"\"args\":{\"name\":", th[j].pid);
			dtu_json_str(f, cn);
			fputs("}}", f);
		}
	}
	fputs("\n]}\n", f);
	if (ferror(f) || fflush(f) == EOF) {
		fprintf(stderr, "%s: export: %s: %s\n", prog(), path, strerror(errno ? errno : EIO));
		goto out;
	}
	created = 0;
	if (dtu_out_commit(&out, oerr, sizeof(oerr)) < 0) {
		fprintf(stderr, "%s: export: %s\n", prog(), oerr);
		goto out;
	}
	printf("%s: %llu slices, %llu instants\n", path, (unsigned long long)nslices,
	       (unsigned long long)ninst);
	ret = 0;
	goto out;
oom:
	fprintf(stderr, "%s: export: out of memory\n", prog());
out:
	if (created)
		dtu_out_abort(&out);	/* ours, and incomplete */
	free(kind);
	free(fnof);
	free(fnames);
	free(kleaf);
	free(pe);
	free(th);
	dtcap_block_free(b);
	if (sym)
		dtsym_close(sym);
	dtcap_reader_close(r);
	return ret;
}
