/*
 * refcount - an independent reference for the report tests.  Walks the
 * capture row by row with dtcap_iter (not the block reader dtreport uses),
 * applies filters by plain comparisons, names frames by linear scans of the
 * raw kallsyms/modules text and file symbol tables (not dtsym's sorted
 * tables and caches), and prints either folded stacks (unsorted, one line
 * per event aggregated at the end with a simple hash-free list) or counts.
 *
 * usage: refcount CAP folded|stats [reverse] [allprobes] [pid=N] [tid=N]
 *        [cpu=N] [comm=S] [probe=S] [tmin=NS] [tmax=NS]
 * Output of folded: "stack count" lines in no particular order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dtcap.h"

static struct dtcap_reader *r;

/*
 * s as the outputs write text (written here from RFC 3629, not shared
 * with dt): each byte that does not start a well-formed sequence (no
 * overlong forms, surrogates or code points past U+10FFFF) is U+FFFD.
 */
static void utf8_clean(char *out, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	while (*p && o + 4 < len) {
		unsigned n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 :
			     (*p & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = n == 1 ? *p : n == 2 ? *p & 0x1fu : n == 3 ? *p & 0x0fu : *p & 0x07u;
		unsigned i;
		for (i = 1; i < n && (p[i] & 0xc0) == 0x80; i++)
			cp = cp << 6 | (p[i] & 0x3fu);
		static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
		if (n == 0 || i < n || cp < least[n] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		} else {
			memcpy(out + o, p, n);
			o += n;
			p += n;
		}
	}
	out[o] = 0;
}

/* ---- kernel naming by linear scan over the raw text ---- */
struct mod { char name[64]; uint64_t start, size; };
static struct mod mods[256];
static int nmods;
struct ks { uint64_t a; char name[160]; char mod[64]; };
static struct ks *kss;
static size_t nks;

static void load_kernel(void)
{
	size_t len;
	const char *t = dtcap_modules(r, &len);
	char line[1024];
	if (t) {
		const char *p = t;
		while (*p) {
			size_t l = strcspn(p, "\n");
			if (l < sizeof(line)) {
				memcpy(line, p, l), line[l] = 0;
				char n[64], d[256], st[32];
				unsigned long long sz, a;
				unsigned rc;
				if (sscanf(line, "%63s %llu %u %255s %31s %llx", n, &sz, &rc, d, st, &a) == 6 &&
				    nmods < 256) {
					strcpy(mods[nmods].name, n);
					mods[nmods].start = a, mods[nmods].size = sz;
					nmods++;
				}
			}
			p += l + (p[l] == '\n');
		}
	}
	t = dtcap_kallsyms(r, &len);
	if (!t)
		return;
	kss = calloc(len / 10 + 16, sizeof(*kss));
	const char *p = t;
	int nonzero = 0;
	while (*p) {
		size_t l = strcspn(p, "\n");
		if (l < sizeof(line)) {
			memcpy(line, p, l), line[l] = 0;
			unsigned long long a;
			char type, name[160] = "", mod[64] = "";
			int n = sscanf(line, "%llx %c %159s [%63[^]]]", &a, &type, name, mod);
			if (n >= 3 && strchr("tTwW", type)) {
				kss[nks].a = a;
				strcpy(kss[nks].name, name);
				strcpy(kss[nks].mod, n == 4 ? mod : "");
				nonzero |= a != 0;
				nks++;
			}
		}
		p += l + (p[l] == '\n');
	}
	if (!nonzero)
		nks = 0;
}

static const char *kname(uint64_t pc, char *buf, size_t len)
{
	const struct mod *m = NULL;
	for (int i = 0; i < nmods; i++)
		if (pc >= mods[i].start && pc - mods[i].start < mods[i].size)
			m = &mods[i];
	const struct ks *best = NULL;
	for (size_t i = 0; i < nks; i++) {
		if (kss[i].a > pc)
			continue;
		if (!best || kss[i].a > best->a ||
		    (kss[i].a == best->a && strcmp(kss[i].name, best->name) < 0) ||
		    (kss[i].a == best->a && !strcmp(kss[i].name, best->name) &&
		     strcmp(kss[i].mod, best->mod) < 0))
			best = &kss[i];
	}
	if (best) {
		if (best->mod[0]) {
			int ranged = 0, in = 0;
			for (int i = 0; i < nmods; i++)
				if (!strcmp(mods[i].name, best->mod)) {
					ranged = 1;
					in = &mods[i] == m;
				}
			if (!ranged || in) {
				snprintf(buf, len, "%s [%s]", best->name, best->mod);
				return buf;
			}
		} else if (!m && pc - best->a < (1ULL << 20)) {
			snprintf(buf, len, "%s", best->name);
			return buf;
		}
	}
	if (m)
		snprintf(buf, len, "%s+0x%" PRIx64, m->name, pc - m->start);
	else
		snprintf(buf, len, "0x%" PRIx64, pc);
	return buf;
}

static const char *uname_(uint32_t pid, uint64_t ts, uint64_t pc, char *buf, size_t len)
{
	const struct dtcap_proc *p = dtcap_proc_find(r, pid, ts);
	const struct dtcap_map *m = NULL;
	for (uint32_t i = 0; p && i < p->nmaps; i++)
		if (pc >= p->maps[i].start && pc < p->maps[i].end)
			m = &p->maps[i];
	if (!m) {
		snprintf(buf, len, "0x%" PRIx64, pc);
		return buf;
	}
	uint64_t foff = pc - m->start + m->offset;
	const struct dtcap_file *f = m->file ? dtcap_file_by_id(r, m->file) : NULL;
	if (f) {
		uint64_t v = foff + f->load_bias_hint;
		long hi = -1;	/* highest index with addr <= v */
		for (uint32_t i = 0; i < f->nsyms; i++)
			if (f->syms[i].addr <= v)
				hi = i;
		for (long i = hi; i >= 0; i--) {
			const struct dtcap_sym *s = &f->syms[i];
			if (!s->name || !s->name[0])
				continue;
			if ((s->size && v - s->addr < s->size) ||
			    (!s->size && i == hi && v - s->addr < 4096)) {
				snprintf(buf, len, "%s", s->name);
				return buf;
			}
		}
	}
	const char *nm = m->name && m->name[0] ? m->name : f && f->path ? f->path : "";
	const char *sl = strrchr(nm, '/');
	if (sl && sl[1])
		nm = sl + 1;
	if (!nm[0])
		snprintf(buf, len, "0x%" PRIx64, pc);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, nm, foff);
	return buf;
}

/* Outer frames are return addresses: named at pc - 1 unless that gives no
 * symbol (then the address as recorded). */
static const char *retname(int kernel, uint32_t pid, uint64_t ts, uint64_t pc, unsigned k,
			   char *buf, size_t len)
{
	const char *nm;
	if (k && pc) {
		nm = kernel ? kname(pc - 1, buf, len) : uname_(pid, ts, pc - 1, buf, len);
		if (strncmp(nm, "0x", 2) && !strstr(nm, "+0x"))
			return nm;
	}
	return kernel ? kname(pc, buf, len) : uname_(pid, ts, pc, buf, len);
}

/* ---- aggregation: a plain growing list with linear search by line ---- */
struct line { char *s; uint64_t n; };
static struct line *lines;
static size_t nlines, caplines;
/* A tiny index to keep this from being quadratic on big captures. */
#define NB 65536
static long *bucket_next;
static long buckets[NB];

static void add_line(const char *s)
{
	uint32_t h = 5381;
	for (const char *p = s; *p; p++)
		h = h * 33 + (unsigned char)*p;
	h %= NB;
	for (long i = buckets[h] - 1; i >= 0; i = bucket_next[i] - 1)
		if (!strcmp(lines[i].s, s)) {
			lines[i].n++;
			return;
		}
	if (nlines == caplines) {
		caplines = caplines ? caplines * 2 : 1024;
		lines = realloc(lines, caplines * sizeof(*lines));
		bucket_next = realloc(bucket_next, caplines * sizeof(long));
	}
	lines[nlines] = (struct line){ strdup(s), 1 };
	bucket_next[nlines] = buckets[h];
	buckets[h] = (long)nlines + 1;
	nlines++;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	r = dtcap_open(argv[1]);
	if (!r) {
		fprintf(stderr, "refcount: %s\n", dtcap_open_error());
		return 1;
	}
	int folded = !strcmp(argv[2], "folded"), reverse = 0, allprobes = 0;
	int nocomm = 0, konly = 0, uonly = 0;
	long pid = -1, tid = -1, cpu = -1;
	const char *comm = NULL, *probe = NULL;
	uint64_t tmin = 0, tmax = UINT64_MAX;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "reverse")) reverse = 1;
		else if (!strcmp(argv[i], "allprobes")) allprobes = 1;
		else if (!strcmp(argv[i], "nocomm")) nocomm = 1;
		else if (!strcmp(argv[i], "kernel")) konly = 1;
		else if (!strcmp(argv[i], "user")) uonly = 1;
		else if (!strncmp(argv[i], "pid=", 4)) pid = atol(argv[i] + 4);
		else if (!strncmp(argv[i], "tid=", 4)) tid = atol(argv[i] + 4);
		else if (!strncmp(argv[i], "cpu=", 4)) cpu = atol(argv[i] + 4);
		else if (!strncmp(argv[i], "comm=", 5)) comm = argv[i] + 5;
		else if (!strncmp(argv[i], "probe=", 6)) probe = argv[i] + 6;
		else if (!strncmp(argv[i], "tmin=", 5)) tmin = strtoull(argv[i] + 5, NULL, 10);
		else if (!strncmp(argv[i], "tmax=", 5)) tmax = strtoull(argv[i] + 5, NULL, 10);
		else return 2;
	}
	load_kernel();
	struct dtcap_iter *it = dtcap_iter_new(r, 0, UINT64_MAX, DTCAP_COL_ALL);
	struct dtcap_event e;
	int rc;
	uint64_t total = 0;
	static uint64_t byprobe[4096], bycpu[4096];
	static uint64_t bycomm[65536];
	char line[200000], nb[400];
	while ((rc = dtcap_iter_next(it, &e)) == 1) {
		const struct dtcap_probe *pp = dtcap_probe_by_id(r, e.probe);
		const char *cm = dtcap_comm(r, e.comm);
		if (e.ts < tmin || e.ts > tmax) continue;
		if (pid >= 0 && e.pid != (uint32_t)pid) continue;
		if (tid >= 0 && e.tid != (uint32_t)tid) continue;
		if (cpu >= 0 && e.cpu != (uint32_t)cpu) continue;
		if (comm && (!cm || strcmp(cm, comm))) continue;
		if (probe && (!pp || strcmp(pp->name, probe))) continue;
		if (folded && !probe && !allprobes && !(pp && (pp->flags & DT_PF_TIMER))) continue;
		total++;
		if (!folded) {
			if (e.probe < 4096) byprobe[e.probe]++;
			if (e.cpu < 4096) bycpu[e.cpu]++;
			if (e.comm < 65536) bycomm[e.comm]++;
			continue;
		}
		/* Frames root first into an array of strings. */
		static char frames[300][400];
		int nf = 0;
		if (!nocomm)
			utf8_clean(frames[nf++], 400, cm && cm[0] ? cm : "[unknown]");
		unsigned n;
		int kflag, trunc;
		const uint64_t *pcs;
		int nu = 0;
		if (e.ustack && !konly && (pcs = dtcap_stack(r, e.ustack, &n, &kflag, &trunc))) {
			if (trunc) strcpy(frames[nf++], "[truncated]"), nu++;
			for (unsigned k = n; k-- > 0;)
				snprintf(frames[nf++], 400, "%s", retname(0, e.pid, e.ts, pcs[k], k, nb, sizeof(nb))), nu++;
		}
		if (e.kstack && !uonly && (pcs = dtcap_stack(r, e.kstack, &n, &kflag, &trunc))) {
			if (nu && (n || trunc)) strcpy(frames[nf++], "--");
			if (trunc) strcpy(frames[nf++], "[truncated]");
			for (unsigned k = n; k-- > 0;)
				snprintf(frames[nf++], 400, "%s", retname(1, 0, 0, pcs[k], k, nb, sizeof(nb)));
		}
		if (!nf)
			strcpy(frames[nf++], "[no stack]");
		line[0] = 0;
		size_t l = 0;
		for (int k = 0; k < nf; k++) {
			const char *f = frames[reverse ? nf - 1 - k : k];
			l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%s", k ? ";" : "", f);
		}
		for (char *q = line; *q; q++)	/* as the writer: no ';' inside names */
			(void)q;
		add_line(line);
	}
	if (rc < 0) {
		fprintf(stderr, "refcount: %s\n", dtcap_reader_error(r));
		return 1;
	}
	if (folded) {
		for (size_t i = 0; i < nlines; i++)
			printf("%s %" PRIu64 "\n", lines[i].s, lines[i].n);
	} else {
		printf("total %" PRIu64 "\n", total);
		for (int i = 0; i < 4096; i++)
			if (byprobe[i]) printf("probe %d %" PRIu64 "\n", i, byprobe[i]);
		for (int i = 0; i < 4096; i++)
			if (bycpu[i]) printf("cpu %d %" PRIu64 "\n", i, bycpu[i]);
		for (int i = 0; i < 65536; i++)
			if (bycomm[i]) printf("comm %s %" PRIu64 "\n", i ? dtcap_comm(r, i) : "", bycomm[i]);
	}
	dtcap_iter_free(it);
	dtcap_reader_close(r);
	return 0;
}
