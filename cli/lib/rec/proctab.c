/* proctab.c - see proctab.h. */
#include "dt_grow.h"
#include "proctab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jitmap.h"
#include "procmaps.h"
#include "unwind_pool.h"
#include "util.h"

/* exited processes whose mappings are kept (see proctab_read_end) */
#define PT_GONE_MAX	1024

void
proctab_free(struct proctab *pt)
{
	tasks_free(&pt->comms);
	tasks_free(&pt->procs);
	free(pt->exited);
	free(pt->forget);
	free(pt->gone);
	memset(pt, 0, sizeof(*pt));
}

void
proctab_set_comm(struct proctab *pt, uint32_t tid, const char *comm)
{
	struct task *t = task_get(&pt->comms, tid, 1);

	if (t)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
}

const char *
proctab_comm_of(struct proctab *pt, uint32_t pid, uint32_t tid, uint32_t cpu)
{
	struct task *t = task_get(&pt->comms, tid, 0);
	char path[64], *c;

	if (t)
		return t->comm;
	if ((t = task_get(&pt->comms, tid, 1)) == NULL)
		return "";
	if (tid == 0) {
		snprintf(t->comm, sizeof(t->comm), "swapper/%u", cpu);
		return t->comm;
	}
	/* a thread that existed before recording started: ask /proc once */
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if ((c = dtu_read_file(path, NULL)) != NULL) {
		c[strcspn(c, "\n")] = '\0';
		snprintf(t->comm, sizeof(t->comm), "%s", c);
		free(c);
	}
	return t->comm;
}

static void
proc_clear(struct task *p)
{
	for (size_t j = 0; j < p->p.nmaps; j++)
		free((char *)p->maps[j].name);
	p->p.nmaps = 0;
	free(p->exe);
	p->exe = NULL;
	p->p.exe = "";
}

/* Add an executable mapping, replacing what it overlaps. */
static int
proc_map(struct task *p, uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot,
	 const char *name, uint64_t ts)
{
	uint64_t end = start + len;
	size_t k = 0;
	int replaced = 0;

	for (size_t j = 0; j < p->p.nmaps; j++) {
		if (p->maps[j].start < end && start < p->maps[j].end) {
			free((char *)p->maps[j].name);
			replaced = 1;
			continue;
		}
		p->maps[k++] = p->maps[j];
	}
	p->p.nmaps = k;
	if (DT_GROW(p->maps, p->mcap, p->p.nmaps, 1, 16))
		return -1;
	struct dtcap_map *m = &p->maps[p->p.nmaps];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->offset = pgoff;
	m->prot = prot;
	if ((m->name = strdup(name)) == NULL)
		return -1;
	p->p.nmaps++;
	p->p.maps = p->maps;
	/*
	 * The set is valid from p.ts on (a snapshot of it is found by time).
	 * A mapping where nothing was mapped leaves p.ts alone: no pc of
	 * the time before it can lie in its range, and a snapshot taken
	 * between two such changes would otherwise claim the second for
	 * samples that ran only with the first.  One that replaces code
	 * starts the set at ts.  (MMAP2 passes no time: 0 keeps the
	 * image's exec time, so the snapshot taken after it does not claim
	 * to predate the one before.)
	 */
	if (ts && replaced)
		p->p.ts = ts;
	p->p.gen++;
	if (p->exe == NULL && name[0] == '/' && (p->exe = strdup(name)) != NULL)
		p->p.exe = p->exe;
	return 0;
}

/*
 * A process's mappings from /proc, for the unwinder too (mappings made
 * before recording started have no event).
 */
static void
pool_seed(struct proctab *pt, const struct task *p)
{
	if (pt->pool == NULL)
		return;
	for (size_t j = 0; j < p->p.nmaps; j++) {
		const struct dtcap_map *m = &p->maps[j];
		if (m->name[0] == '/' || strcmp(m->name, "[vdso]") == 0)
			dtunw_pool_map(pt->pool, p->p.pid, m->start, m->end - m->start, m->offset,
				       m->name);
	}
}

/* An executable mapping of a process first heard of, from /proc. */
struct known_maps {
	struct task	*p;
	uint64_t	ts;
};

static int
known_map(void *arg, const struct dtpm_map *m)
{
	struct known_maps *km = arg;

	proc_map(km->p, m->start, m->end - m->start, m->offset, 5, m->name, km->ts);
	return 0;
}

/*
 * A process we first hear of from its events (an mmap, a fork of it):
 * what it mapped before recording started comes from /proc.
 */
struct task *
proctab_known(struct proctab *pt, uint32_t pid, uint64_t ts)
{
	struct task *p;
	char *maps;

	if (pid == pt->self)
		return NULL;	/* the recorder: /proc as events come (record.c) */
	if ((p = task_get(&pt->procs, pid, 1)) == NULL || p->known)
		return p;
	p->known = 1;
	p->p.pid = pid;
	p->p.exe = "";
	if ((maps = dtpm_read(pid)) == NULL)
		return p;
	{
		struct known_maps km = { p, ts };

		(void)dtpm_parse(maps, DTPM_EXEC, known_map, &km, NULL, 0);
	}
	if (ts)
		p->p.ts = ts;
	free(maps);
	pool_seed(pt, p);
	return p;
}

int
proctab_is_code(struct proctab *pt, uint32_t pid, uint64_t ts, uint64_t pc)
{
	const struct task *p;

	/* x86-64 user space is below 2^47; the first page is never mapped */
	if (pc < 4096 || pc >= (1ULL << 47))
		return 0;
	if ((p = proctab_known(pt, pid, ts)) == NULL || p->p.nmaps == 0 || ts < p->p.ts)
		return -1;
	for (size_t j = 0; j < p->p.nmaps; j++)
		if (pc >= p->maps[j].start && pc < p->maps[j].end)
			return 1;
	return 0;
}

void
proctab_mmap(struct proctab *pt, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	     uint32_t prot, const char *name, uint64_t ts)
{
	struct task *p;

	if (!(prot & PROT_EXEC) || pid == pt->self)
		return;
	if ((p = proctab_known(pt, pid, 0)) == NULL)
		return;
	proc_map(p, start, len, pgoff, (prot & PROT_READ ? 1 : 0) | (prot & PROT_WRITE ? 2 : 0) | 4,
		 name, ts);
	if (pt->pool && (name[0] == '/' || strcmp(name, "[vdso]") == 0))
		dtunw_pool_map(pt->pool, pid, start, len, pgoff, name);
}

void
proctab_exec(struct proctab *pt, uint32_t pid, uint64_t ts, const char *comm, const char *path)
{
	struct task *p;

	if (pid == pt->self || (p = task_get(&pt->procs, pid, 1)) == NULL)
		return;
	/* a new image: its mappings follow */
	proc_clear(p);
	p->known = 1;
	p->exited = 0;
	p->p.pid = pid;
	p->p.ts = ts;
	p->p.gen++;
	snprintf(p->p.comm, sizeof(p->p.comm), "%s", comm);
	if (path[0] == '/' && (p->exe = strdup(path)) != NULL)
		p->p.exe = p->exe;
}

void
proctab_fork(struct proctab *pt, uint32_t pid, uint32_t ppid, uint64_t ts)
{
	struct task *parent, *child;

	if (pid == ppid || pid == pt->self)
		return;		/* a thread: same address space */
	child = task_get(&pt->procs, pid, 0);
	if (child && child->known && !child->exited) {
		/*
		 * The child's own records came first: it ran (and exec'd) on
		 * another CPU whose ring was read before this one.  They are
		 * newer than the fork; copying the parent over them would
		 * name its samples after the shell it was forked from.  (A
		 * pid reused after an exit starts over: it is exited.)
		 */
		child->p.ppid = ppid;
		return;
	}
	if ((parent = proctab_known(pt, ppid, ts)) == NULL ||
	    (child = task_get(&pt->procs, pid, 1)) == NULL)
		return;
	/* task_get may have moved the parent when the table grew */
	parent = task_get(&pt->procs, ppid, 0);
	proc_clear(child);
	child->known = 1;
	child->exited = 0;
	child->p.pid = pid;
	child->p.ppid = ppid;
	if (parent == NULL)
		return;
	memcpy(child->p.comm, parent->p.comm, sizeof(child->p.comm));
	/* another worker's parent: the child's worker learns its mappings here */
	int seed = pt->pool && dtunw_pool_fork(pt->pool, ppid, pid) < 0;
	for (size_t j = 0; j < parent->p.nmaps; j++) {
		const struct dtcap_map *m = &parent->maps[j];
		proc_map(child, m->start, m->end - m->start, m->offset, m->prot, m->name, ts);
	}
	child->p.ts = ts;
	if (seed) {
		dtunw_pool_forget(pt->pool, pid);
		pool_seed(pt, child);
	}
}

/*
 * An exit: the unwinder forgets the process one read later, when every
 * ring has been read past the moment of the exit, so samples taken before
 * it on other CPUs still find its mappings; the table later still.
 */
void
proctab_exit(struct proctab *pt, uint32_t pid)
{
	struct task *p;

	if (pid == pt->self)
		return;
	if ((p = task_get(&pt->procs, pid, 0)) != NULL) {
		p->exited = 1;
		/* its JIT map is final now: a new generation has it read */
		if (jitmap_exists(pid))
			p->p.gen++;
	}
	if (pt->keep_all)
		return;
	if (DT_GROW(pt->exited, pt->capexited, pt->nexited, 1, 64))
		return;		/* kept: memory, not correctness */
	pt->exited[pt->nexited++] = pid;
}

void
proctab_read_end(struct proctab *pt)
{
	/*
	 * The mappings of exited processes go once PT_GONE_MAX of them have
	 * piled up, the oldest first (a long system-wide recording would
	 * otherwise keep every process it ever saw); until then a late
	 * sample (one the unwinding workers took long over) still finds
	 * them.  A pid reused since is a new process and stays.
	 */
	if (pt->ngone > 2 * PT_GONE_MAX) {
		size_t drop = pt->ngone - PT_GONE_MAX;
		for (size_t i = 0; i < drop; i++) {
			struct task *p = task_get(&pt->procs, pt->gone[i], 0);
			if (p && p->exited) {
				proc_clear(p);
				p->known = 0;
				p->exited = 0;
				p->p.comm[0] = '\0';
			}
		}
		memmove(pt->gone, pt->gone + drop, (pt->ngone - drop) * sizeof(*pt->gone));
		pt->ngone -= drop;
	}
	/* exits seen one read ago: every ring has been read past them */
	for (size_t i = 0; i < pt->nforget; i++) {
		if (pt->pool)
			dtunw_pool_forget(pt->pool, pt->forget[i]);
		if (DT_GROW(pt->gone, pt->capgone, pt->ngone, 1, 1024))
			continue;	/* kept: memory, not correctness */
		pt->gone[pt->ngone++] = pt->forget[i];
	}
	uint32_t *t = pt->forget;
	size_t tc = pt->capforget;
	pt->forget = pt->exited;
	pt->capforget = pt->capexited;
	pt->nforget = pt->nexited;
	pt->exited = t;
	pt->capexited = tc;
	pt->nexited = 0;
}

const struct kproc *
proctab_proc(struct proctab *pt, uint32_t pid)
{
	struct task *p = task_get(&pt->procs, pid, 0);

	if (p == NULL || !p->known)
		return NULL;
	if (!p->p.comm[0]) {
		struct task *c = task_get(&pt->comms, pid, 0);
		if (c)
			memcpy(p->p.comm, c->comm, sizeof(p->p.comm));
	}
	if (p->p.exe == NULL)
		p->p.exe = "";
	return &p->p;
}
