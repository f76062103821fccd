/*
 * machine_test.c - the recording session's process model
 * (cli/lib/rec/machine.c), under ASan/UBSan, with a subscriber that logs
 * what it is told:
 *  - fed by the kernel's events (fork, exec, mmap, exit, comm in that
 *    order): the first event of a process tells of it once, a change of
 *    generation is told once at the next event or at the end of the read,
 *    nothing else is; each change carries the kernel's view (maps, exe,
 *    comm, the time of the change), and the told times of one process
 *    never go back;
 *  - not fed: the first event, an exec event, a new main-thread comm
 *    (under 8 changes) and a pc outside the code stored are told, as
 *    /proc re-reads, the pcs at most DTPM_MAX_REREADS times a process;
 *  - forgetting what was told (a flight dump) tells every process again;
 *  - subscribers are called in subscription order, DTM_MAXSUBS at most;
 *  - a sample handed over (dtm_sample) is named after its thread as the
 *    feed stands at that moment (a rename fed later does not reach it) and
 *    its frame-pointer stack ends at the first pc that is no code of its
 *    process, the record shorter and marked cut; an unfed machine cuts
 *    nothing.
 * The pids are ones no process has: the table's /proc reads find nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "machine.h"
#include "procmaps.h"

#define CHECK_PREFIX "machine/"
#include "../check.h"

#define MAXLOG	256

struct logent {
	int		sub;		/* which subscriber */
	uint32_t	pid, seq, gen;
	uint64_t	ts;
	int		kernel, reread;
	size_t		nmaps, npcs;
	char		comm[17], exe[64];
};
static struct logent logv[MAXLOG];
static size_t nlog;

static void
logsub(void *arg, const struct dtm_change *c)
{
	struct logent *e;

	if (nlog == MAXLOG)
		return;
	e = &logv[nlog++];
	memset(e, 0, sizeof(*e));
	e->sub = (int)(intptr_t)arg;
	e->pid = c->pid;
	e->seq = c->seq;
	e->ts = c->ts;
	e->kernel = c->kp != NULL;
	e->reread = c->rd != NULL;
	e->npcs = c->npcs;
	snprintf(e->comm, sizeof(e->comm), "%.16s", c->comm);
	if (c->kp) {
		e->gen = c->kp->gen;
		e->nmaps = c->kp->nmaps;
		snprintf(e->exe, sizeof(e->exe), "%s", c->kp->exe ? c->kp->exe : "");
	}
}

/* One event record of pid/tid with comm and a one-frame user stack at pc. */
struct ev {
	struct dt_rec	d;
	uint64_t	pc;
};

static const struct dt_rec *
ev(struct ev *e, uint32_t pid, uint32_t tid, const char *comm, uint64_t ts, uint64_t pc,
   uint32_t probe)
{
	memset(e, 0, sizeof(*e));
	e->d.dtr_size = sizeof(*e);
	e->d.dtr_pid = pid;
	e->d.dtr_tid = tid;
	e->d.dtr_ts = ts;
	e->d.dtr_probe = probe;
	e->d.dtr_nustack = pc ? 1 : 0;
	e->pc = pc;
	strncpy(e->d.dtr_comm, comm, DT_COMMLEN);
	return &e->d;
}

static size_t
told_of(uint32_t pid, int sub)
{
	size_t n = 0;

	for (size_t i = 0; i < nlog; i++)
		n += logv[i].pid == pid && logv[i].sub == sub;
	return n;
}

static void
fed(void)
{
	struct dtm *m = dtm_new();
	struct ev e;
	uint32_t par = 3999980, kid = 3999981, rx = PROT_READ | PROT_EXEC;
	char why[256];

	if (m == NULL || dtm_subscribe(m, logsub, (void *)1) < 0) {
		check("fed-new", 0, "out of memory");
		return;
	}
	nlog = 0;
	dtm_feed(m);
	/* the parent, as the kernel's events describe it (no /proc: its
	 * exec is the first mention) */
	dtm_feed_comm(m, par, "parent");
	dtm_feed_exec(m, par, 10, "parent", "/bin/parent");
	dtm_feed_mmap(m, par, 0x10000, 0x1000, 0, rx, "/bin/parent", 11);
	dtm_event(m, ev(&e, par, par, "parent", 12, 0x10010, 0));
	snprintf(why, sizeof(why), "%zu told, first: kernel %d, %zu maps, exe %s, ts %llu, comm %s",
		 nlog, nlog ? logv[0].kernel : -1, nlog ? logv[0].nmaps : 0,
		 nlog ? logv[0].exe : "-", nlog ? (unsigned long long)logv[0].ts : 0,
		 nlog ? logv[0].comm : "-");
	check("fed-first-event-told",
	      nlog == 1 && logv[0].kernel && logv[0].seq == 1 && logv[0].nmaps == 1 &&
	      !strcmp(logv[0].exe, "/bin/parent") && logv[0].ts == 10 &&
	      !strcmp(logv[0].comm, "parent") && logv[0].npcs == 1, why);

	/* nothing changed: no news, at events or at the end of a read */
	dtm_event(m, ev(&e, par, par, "parent", 13, 0x10010, 0));
	dtm_read_end(m);
	check("fed-unchanged-silent", nlog == 1, "told again without a change");

	/* fork, exec, mmap of the child, then its first event */
	dtm_feed_fork(m, kid, par, 20, "");
	dtm_feed_exec(m, kid, 30, "kid", "/bin/kid");
	dtm_feed_mmap(m, kid, 0x40000, 0x2000, 0, rx, "/bin/kid", 31);
	dtm_event(m, ev(&e, kid, kid, "kid", 32, 0x40010, 0));
	snprintf(why, sizeof(why), "%zu told, last: pid %u, exe %s, %zu maps, ts %llu", nlog,
		 nlog ? logv[nlog - 1].pid : 0, nlog ? logv[nlog - 1].exe : "-",
		 nlog ? logv[nlog - 1].nmaps : 0,
		 nlog ? (unsigned long long)logv[nlog - 1].ts : 0);
	check("fed-fork-exec-mmap",
	      nlog == 2 && logv[1].pid == kid && !strcmp(logv[1].exe, "/bin/kid") &&
	      logv[1].nmaps == 1 && logv[1].ts == 30 && logv[1].seq == 1, why);

	/* a mapping reported after the child's last event of this read:
	 * told once at the end of the read, with the new generation */
	uint32_t gen = logv[1].gen;
	dtm_feed_mmap(m, kid, 0x80000, 0x1000, 0, rx, "/lib/libnew.so", 40);
	dtm_read_end(m);
	dtm_read_end(m);
	snprintf(why, sizeof(why), "%zu told, last gen %u (was %u), %zu maps, pcs %zu", nlog,
		 nlog ? logv[nlog - 1].gen : 0, gen, nlog ? logv[nlog - 1].nmaps : 0,
		 nlog ? logv[nlog - 1].npcs : 0);
	check("fed-generation-bump-told-once",
	      nlog == 3 && logv[2].pid == kid && logv[2].gen > gen && logv[2].nmaps == 2 &&
	      logv[2].npcs == 0 && logv[2].seq == 2, why);

	/* a change seen at an event is told there, with the event's stack */
	dtm_feed_mmap(m, kid, 0x90000, 0x1000, 0, rx, "/lib/libtwo.so", 50);
	dtm_event(m, ev(&e, kid, kid, "kid", 51, 0x90010, 0));
	dtm_read_end(m);
	check("fed-change-at-event",
	      nlog == 4 && logv[3].npcs == 1 && logv[3].nmaps == 3, "not told once at the event");

	/* exit: the table keeps the mappings; nothing changes for subscribers */
	dtm_feed_exit(m, kid);
	dtm_feed_read_end(m);
	dtm_read_end(m);
	check("fed-exit-silent", nlog == 4 && dtm_proc(m, kid) && dtm_proc(m, kid)->nmaps == 3,
	      "an exit was told, or its mappings dropped at once");

	/* one process's told times never go back */
	int mono = 1;
	for (size_t i = 1; i < nlog; i++)
		for (size_t j = 0; j < i; j++)
			if (logv[j].pid == logv[i].pid && logv[i].ts < logv[j].ts)
				mono = 0;
	check("fed-times-forward", mono, "a later change of a process told an earlier time");

	dtm_event(m, ev(&e, 0, 0, "swapper", 61, 0, 0));
	check("fed-idle-untold", told_of(0, 1) == 0, "the idle task was told of");
	dtm_free(m);
}

static void
unfed(void)
{
	struct dtm *m = dtm_new();
	struct ev e;
	uint32_t pid = 3999970, exec_id = 77;
	char why[256];

	if (m == NULL || dtm_subscribe(m, logsub, (void *)1) < 0 ||
	    dtm_subscribe(m, logsub, (void *)2) < 0) {
		check("unfed-new", 0, "out of memory");
		return;
	}
	for (int i = 2; i < DTM_MAXSUBS; i++)
		(void)dtm_subscribe(m, logsub, (void *)(intptr_t)(10 + i));
	check("subscribers-bounded", dtm_subscribe(m, logsub, (void *)99) < 0,
	      "more than DTM_MAXSUBS subscribers taken");
	dtm_set_exec_probe(m, exec_id);
	nlog = 0;
	dtm_event(m, ev(&e, pid, pid, "prog", 100, 0x1010, 0));
	check("unfed-first-event",
	      nlog == DTM_MAXSUBS && !logv[0].kernel && logv[0].reread && logv[0].seq == 1 &&
	      logv[0].ts == 100 && !strcmp(logv[0].comm, "prog") && logv[0].sub == 1 &&
	      logv[1].sub == 2, "not told once to each subscriber, in order, as a /proc read");
	check("unfed-no-kernel-view", dtm_proc(m, pid) == NULL, "an unfed machine has a view");

	/* the subscriber stored [0x1000, 0x2000) as code: pcs there are known */
	struct dtcap_map code = { .start = 0x1000, .end = 0x2000, .prot = 5, .name = "/bin/prog" };
	dtm_set_code(m, pid, &code, 1);
	size_t before = told_of(pid, 1);
	dtm_event(m, ev(&e, pid, pid + 1, "prog", 101, 0x1800, 0));
	dtm_event(m, ev(&e, pid, pid + 1, "worker", 102, 0x1800, 0));
	dtm_event(m, ev(&e, pid, pid, "prog", 103, 0, 0));
	check("unfed-known-code-silent", told_of(pid, 1) == before,
	      "a pc in stored code, or a thread's own comm, was told");

	/* a new main-thread comm: a new image (exec renames the task) */
	dtm_event(m, ev(&e, pid, pid, "renamed", 104, 0x1800, 0));
	check("unfed-comm-change-told", told_of(pid, 1) == before + 1 &&
	      !strcmp(dtm_comm(m, pid), "renamed"), "a new main-thread comm was not told");
	/* an exec event: told whatever the pc */
	dtm_event(m, ev(&e, pid, pid, "renamed", 105, 0x1800, exec_id));
	check("unfed-exec-told", told_of(pid, 1) == before + 2, "an exec event was not told");

	/* pcs outside the code: told, each once, at most DTPM_MAX_REREADS */
	size_t at = told_of(pid, 1);
	for (int i = 0; i < 3 * DTPM_MAX_REREADS; i++)
		dtm_event(m, ev(&e, pid, pid, "renamed", 200 + (uint64_t)i, 0x900000 + 16 * (uint64_t)i,
				0));
	snprintf(why, sizeof(why), "%zu re-reads for %d pcs outside the code",
		 told_of(pid, 1) - at, 3 * DTPM_MAX_REREADS);
	check("unfed-reread-bound", told_of(pid, 1) - at == DTPM_MAX_REREADS, why);
	/* after the bound, a new image is still told (up to 8 changes) */
	size_t n0 = told_of(pid, 1);
	dtm_event(m, ev(&e, pid, pid, "again", 400, 0x1800, exec_id));
	check("unfed-exec-after-bound", told_of(pid, 1) == n0 + 1, "an exec after the bound lost");

	/* forgetting (a flight dump): the next event tells of it as new */
	dtm_forget_told(m);
	nlog = 0;
	dtm_event(m, ev(&e, pid, pid, "again", 500, 0x1800, 0));
	check("forget-told-starts-over", told_of(pid, 1) == 1 && logv[0].seq == 1,
	      "a forgotten process was not told of as new");
	dtm_free(m);
}

/* A sample of pid/tid with a three-frame user stack, as a source hands it over. */
struct sev {
	struct dt_rec	d;
	uint64_t	pcs[3];
};

static struct dt_rec *
sev(struct sev *e, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t a, uint64_t b, uint64_t c)
{
	memset(e, 0, sizeof(*e));
	e->d.dtr_size = sizeof(*e);
	e->d.dtr_pid = pid;
	e->d.dtr_tid = tid;
	e->d.dtr_ts = ts;
	e->d.dtr_nustack = 3;
	e->pcs[0] = a;
	e->pcs[1] = b;
	e->pcs[2] = c;
	return &e->d;
}

static void
sampled(void)
{
	struct dtm *m = dtm_new();
	struct sev e1, e2, e3;
	uint32_t pid = 3999990, rx = PROT_READ | PROT_EXEC;

	if (m == NULL) {
		check("sample-new", 0, "out of memory");
		return;
	}
	dtm_feed(m);
	dtm_feed_exec(m, pid, 10, "before", "/bin/sampled");
	dtm_feed_comm(m, pid, "before");
	dtm_feed_mmap(m, pid, 0x10000, 0x1000, 0, rx, "/bin/sampled", 11);
	/* in code, in code, then data read as a return address */
	dtm_sample(m, sev(&e1, pid, pid, 20, 0x10010, 0x10020, 0x7000000), DTM_NAME | DTM_FP_CUT);
	dtm_feed_comm(m, pid, "after");
	dtm_sample(m, sev(&e2, pid, pid, 30, 0x10010, 0x10020, 0x10030), DTM_NAME | DTM_FP_CUT);
	checkf("sample-named-in-order", strncmp(e1.d.dtr_comm, "before", DT_COMMLEN) == 0 &&
	       strncmp(e2.d.dtr_comm, "after", DT_COMMLEN) == 0,
	       "names '%.16s', '%.16s' (want before, after)", e1.d.dtr_comm, e2.d.dtr_comm);
	checkf("sample-cut-at-non-code", e1.d.dtr_nustack == 2 &&
	       (e1.d.dtr_flags & DTR_USTACK_TRUNC) && e1.d.dtr_size == DT_REC_SIZE(0, 0, 2),
	       "nustack %u, flags %#x, size %u", e1.d.dtr_nustack, e1.d.dtr_flags, e1.d.dtr_size);
	checkf("sample-code-kept", e2.d.dtr_nustack == 3 && !(e2.d.dtr_flags & DTR_USTACK_TRUNC) &&
	       e2.d.dtr_size == sizeof(e2), "nustack %u, flags %#x", e2.d.dtr_nustack,
	       e2.d.dtr_flags);
	dtm_free(m);

	/* not fed: the machine knows no code and cuts nothing */
	if ((m = dtm_new()) == NULL)
		return;
	dtm_sample(m, sev(&e3, pid, pid, 20, 0x10010, 0x10020, 0x7000000), DTM_FP_CUT);
	checkf("sample-unfed-uncut", e3.d.dtr_nustack == 3 && !(e3.d.dtr_flags & DTR_USTACK_TRUNC),
	       "nustack %u", e3.d.dtr_nustack);
	dtm_free(m);
}

int
main(void)
{
	fed();
	unfed();
	sampled();
	return check_status();
}
