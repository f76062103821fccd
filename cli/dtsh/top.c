/*
 * top.c - `top [N] [by comm|pid|probe|stack|syscall]`: the busiest keys of
 * the open capture.  Counts by numeric id in one pass over the columns it
 * needs, then names the ids (stacks through dtsym) and merges equal names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtsh.h"
#include "report.h"
#include "dtsym.h"

#define TOP_FRAMES	3

struct slot {
	uint64_t key, count;
	int used;
};

struct map {
	struct slot *s;
	size_t cap, n;
};

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static struct slot *map_slot(struct map *m, uint64_t key);

static int
map_add(struct map *m, uint64_t key, uint64_t n)
{
	struct slot *s = map_slot(m, key);
	if (s == NULL)
		return -1;
	s->count += n;
	return 0;
}

/* The slot of key, created with count 0 when new; NULL on ENOMEM. */
static struct slot *
map_slot(struct map *m, uint64_t key)
{
	if (m->n * 2 >= m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 1024;
		struct slot *ns = calloc(nc, sizeof(*ns));
		if (ns == NULL)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->s[i].used)
				continue;
			size_t j = mix(m->s[i].key) & (nc - 1);
			while (ns[j].used)
				j = (j + 1) & (nc - 1);
			ns[j] = m->s[i];
		}
		free(m->s);
		m->s = ns;
		m->cap = nc;
	}
	size_t j = mix(key) & (m->cap - 1);
	while (m->s[j].used && m->s[j].key != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->s[j].used) {
		m->s[j].used = 1;
		m->s[j].key = key;
		m->n++;
	}
	return &m->s[j];
}

static uint64_t
map_get(const struct map *m, uint64_t key)
{
	if (m->cap == 0)
		return 0;
	size_t j = mix(key) & (m->cap - 1);
	while (m->s[j].used) {
		if (m->s[j].key == key)
			return m->s[j].count;
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
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

enum by { BY_COMM, BY_PID, BY_PROBE, BY_STACK, BY_SYSCALL };

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

int
dtsh_top(struct dtsh *sh, int argc, char **argv)
{
	unsigned long limit = 10;
	enum by by = BY_COMM;
	static const char *const bynames[] = { "comm", "pid", "probe", "stack", "syscall" };
	struct map m = { NULL, 0, 0 }, pcomm = { NULL, 0, 0 };
	struct dtcap_event e;
	struct dtcap_iter *it;
	unsigned cols = 0;
	uint64_t total = 0;
	struct row *rows = NULL;
	size_t nrows = 0;
	int i = 1, rc = 1, n;
	char *end;

	if (i < argc && argv[i][0] >= '0' && argv[i][0] <= '9') {
		limit = strtoul(argv[i], &end, 10);
		if (*end || limit == 0) {
			fprintf(stderr, "dtsh top: bad count '%s'\n", argv[i]);
			return 1;
		}
		i++;
	}
	if (i < argc) {
		int found = 0;
		if (strcmp(argv[i], "by") != 0 || i + 2 != argc) {
			fprintf(stderr, "usage: top [N] [by comm|pid|probe|stack|syscall]\n");
			return 1;
		}
		for (unsigned b = 0; b < 5; b++) {
			if (strcmp(argv[i + 1], bynames[b]) == 0) {
				by = (enum by)b;
				found = 1;
			}
		}
		if (!found) {
			fprintf(stderr, "dtsh top: cannot group by '%s' "
				"(comm, pid, probe, stack or syscall)\n", argv[i + 1]);
			return 1;
		}
	}

	/* Syscalls count entries; a capture of return probes only counts those. */
	const char *which = "entry";
	if (by == BY_SYSCALL) {
		char tmp[DTCAP_PROBENAMELEN];
		int any = 0;
		for (size_t p = 0; p < dtcap_nprobes(sh->cap); p++)
			any |= syscall_name(dtcap_probe_at(sh->cap, p)->name, "entry", tmp, sizeof(tmp));
		if (!any)
			which = "return";
	}

	switch (by) {
	case BY_COMM: cols = DTCAP_COL_COMM; break;
	case BY_PID: cols = DTCAP_COL_PID | DTCAP_COL_COMM; break;
	case BY_PROBE: case BY_SYSCALL: cols = DTCAP_COL_PROBE; break;
	case BY_STACK: cols = DTCAP_COL_KSTACK | DTCAP_COL_USTACK | DTCAP_COL_PID; break;
	}
	if ((it = dtcap_iter_new(sh->cap, 0, UINT64_MAX, cols)) == NULL) {
		fprintf(stderr, "dtsh top: %s\n", dtcap_reader_error(sh->cap));
		return 1;
	}
	while ((n = dtcap_iter_next(it, &e)) == 1) {
		uint64_t key = 0;
		if ((total & 0xffff) == 0 && dtsh_interrupted)
			break;
		switch (by) {
		case BY_COMM: key = e.comm; break;
		case BY_PID: {
			/* The pid's first comm names it when the capture has no
			 * process snapshot. */
			struct slot *c = e.comm ? map_slot(&pcomm, e.pid) : NULL;
			if (c && c->count == 0)
				c->count = e.comm;
			key = e.pid;
			break;
		}
		case BY_PROBE: key = e.probe; break;
		case BY_SYSCALL: {
			const struct dtcap_probe *p = dtcap_probe_by_id(sh->cap, e.probe);
			char tmp[DTCAP_PROBENAMELEN];
			if (p == NULL || !syscall_name(p->name, which, tmp, sizeof(tmp)))
				continue;
			key = e.probe;
			break;
		}
		case BY_STACK:
			/* Events without a stack say nothing about where time
			 * goes.  User stacks need the pid to be named. */
			if (e.kstack == 0 && e.ustack == 0)
				continue;
			key = e.kstack ? e.kstack : (1ULL << 63 | (uint64_t)e.pid << 32 | e.ustack);
			break;
		}
		total++;
		if (map_add(&m, key, 1)) {
			fprintf(stderr, "dtsh top: out of memory\n");
			goto out_it;
		}
	}
	if (n < 0) {
		fprintf(stderr, "dtsh top: %s\n", dtcap_reader_error(sh->cap));
		goto out_it;
	}
	if (dtsh_interrupted) {
		fprintf(stderr, "dtsh top: interrupted\n");
		dtsh_interrupted = 0;
		goto out_it;
	}

	struct dtsym *sym = by == BY_STACK ? dtsym_open(sh->cap) : NULL;
	if ((rows = calloc(m.n + 1, sizeof(*rows))) == NULL) {
		dtsym_close(sym);
		fprintf(stderr, "dtsh top: out of memory\n");
		goto out_it;
	}
	for (size_t s = 0; s < m.cap; s++) {
		char buf[64];
		const char *nm = NULL;
		uint64_t k = m.s[s].key;
		if (!m.s[s].used)
			continue;
		switch (by) {
		case BY_COMM:
			nm = dtcap_comm(sh->cap, (uint32_t)k);
			if (nm == NULL)
				nm = "(unknown)";
			rows[nrows].name = strdup(nm);
			break;
		case BY_PID: {
			const struct dtcap_proc *p = dtcap_proc_find(sh->cap, (uint32_t)k, UINT64_MAX);
			const char *cm = dtcap_comm(sh->cap, (uint32_t)map_get(&pcomm, k));
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
		case BY_PROBE: {
			const struct dtcap_probe *p = dtcap_probe_by_id(sh->cap, (uint32_t)k);
			if (p == NULL)
				snprintf(buf, sizeof(buf), "probe#%llu", (unsigned long long)k);
			rows[nrows].name = strdup(p ? p->name : buf);
			break;
		}
		case BY_SYSCALL: {
			char tmp[DTCAP_PROBENAMELEN];
			const struct dtcap_probe *p = dtcap_probe_by_id(sh->cap, (uint32_t)k);
			syscall_name(p->name, which, tmp, sizeof(tmp));
			rows[nrows].name = strdup(tmp);
			break;
		}
		case BY_STACK:
			rows[nrows].name = k ? stack_name(sh->cap, sym, k) : strdup("(no stack)");
			break;
		}
		if (rows[nrows].name == NULL)
			continue;
		rows[nrows++].count = m.s[s].count;
	}
	dtsym_close(sym);

	/* Different ids can name the same thing (stacks differing below the
	 * top frames, pids reused): merge them. */
	qsort(rows, nrows, sizeof(*rows), byname);
	size_t k = 0;
	for (size_t r = 0; r < nrows; r++) {
		if (k > 0 && strcmp(rows[k - 1].name, rows[r].name) == 0) {
			rows[k - 1].count += rows[r].count;
			free(rows[r].name);
		} else {
			rows[k++] = rows[r];
		}
	}
	nrows = k;
	qsort(rows, nrows, sizeof(*rows), bycount);
	printf("%12s %6s  %s\n", "COUNT", "PCT", bynames[by]);
	for (size_t r = 0; r < nrows && r < limit; r++)
		printf("%12llu %5.1f%%  %s\n", (unsigned long long)rows[r].count,
		       total ? 100.0 * (double)rows[r].count / (double)total : 0.0, rows[r].name);
	if (nrows == 0)
		printf("(no events)\n");
	rc = 0;
	for (size_t r = 0; r < nrows; r++)
		free(rows[r].name);
	free(rows);
out_it:
	dtcap_iter_free(it);
	free(m.s);
	free(pcomm.s);
	return rc;
}
