/*
 * schedgen - a synthetic capture of what dtrec --offcpu and syscall probes
 * record, for the analysis benchmarks (bench.sh): N events on 8 CPUs, each
 * CPU a stream of its own 32 threads (of 16 processes) making syscall
 * entry/return pairs, waking each other and switching, with kernel and
 * user stacks (a few wait sites a thread) on the switches and wakeups;
 * written in per-CPU batches, as
 * the recorder writes them, so rows are not in global time order.
 * Deterministic: the same N, the same file.
 *
 * usage: schedgen -o FILE -n EVENTS [-l N]
 * -l N: every Nth switch names no thread switched to (next_pid 0), as
 * when the kernel did not deliver a switch in: the intervals the sched
 * model must end at the thread's next event (the tests' lost switches).
 * -m: CPUs 2c and 2c+1 run the same threads (the same tids), so a
 * thread's events are out of time order in the file, its entries and
 * returns interleave from two streams (nested, unmatched), and every
 * other thread's tid lies past 2^22 (pid_max): the models' slow paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_abi.h"
#include "dtcap.h"

#define NCPU	8
#define NTHR	32	/* per CPU */
#define BATCH	256	/* events of one CPU written together */

static uint64_t s = 88172645463325252ULL;

static uint32_t
rnd(uint32_t n)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (uint32_t)((s >> 32) % n);
}

static void
die(const char *what)
{
	fprintf(stderr, "schedgen: %s\n", what);
	exit(1);
}

static const char *const sysn[] = { "read", "write", "futex", "epoll_wait", "clock_nanosleep",
				    "openat", "close", "sendto" };
#define NSYS	(sizeof(sysn) / sizeof(sysn[0]))

struct thr {
	uint32_t tid, pid, comm;
	int sleeping;
};

/* a thread waits and wakes others at a few places of its own, as real
 * ones do: 4 of the 300 stacks */
static uint32_t
site(const struct thr *t)
{
	return (t->tid * 7 + rnd(4)) % 300;
}

int
main(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t n = 0, lose = 0, nsw = 0;
	int c, mix = 0;

	while ((c = getopt(argc, argv, "o:n:l:m")) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (c == 'l')
			lose = strtoull(optarg, NULL, 10);
		else if (c == 'm')
			mix = 1;
		else
			die("usage: schedgen -o FILE -n EVENTS [-l N] [-m]");
	}
	if (!out || !n)
		die("usage: schedgen -o FILE -n EVENTS [-l N] [-m]");

	struct dtcap_host host;
	memset(&host, 0, sizeof(host));
	snprintf(host.kernel, sizeof(host.kernel), "6.1.0-schedgen");
	snprintf(host.hostname, sizeof(host.hostname), "schedgen");
	host.ncpus = NCPU;
	host.start_ns = 1000000000000ULL;
	host.clock_mono_ns = host.start_ns;
	snprintf(host.command, sizeof(host.command), "schedgen -n %llu", (unsigned long long)n);
	snprintf(host.source, sizeof(host.source), "perf");
	struct dtcap_writer_opts wo = { .synthetic = 1 };
	struct dtcap_writer *w = dtcap_create(out, &host, &wo);
	if (!w)
		die(dtcap_create_error());

	/* probes: syscall pairs 1..16, sched_switch 100, sched_wakeup 101 */
	struct dtcap_probe pr[NSYS * 2 + 2];
	memset(pr, 0, sizeof(pr));
	size_t np = 0;
	for (size_t i = 0; i < NSYS; i++) {
		for (int r = 0; r < 2; r++) {
			struct dtcap_probe *p = &pr[np++];
			p->id = (uint32_t)(1 + 2 * i + r);
			p->flags = r ? DT_PF_RETURN : 0;
			snprintf(p->name, sizeof(p->name), "syscall:%s:%s", sysn[i], r ? "return" : "entry");
			p->nargs = r ? 2 : 3;
			for (uint32_t k = 0; k < p->nargs; k++) {
				snprintf(p->args[k].name, DTCAP_ARGNAMELEN, "%s",
					 r ? (k ? "errno" : "retval") : (k == 0 ? "fd" : k == 1 ? "buf" : "count"));
				snprintf(p->args[k].type, DTCAP_ARGNAMELEN, "long");
				p->args[k].slot = (uint8_t)k;
				p->args[k].nslots = 1;
			}
		}
	}
	struct dtcap_probe *sw = &pr[np++], *wk = &pr[np++];
	sw->id = 100;
	snprintf(sw->name, sizeof(sw->name), "tracepoint:sched:sched_switch");
	static const char *const swa[] = { "prev_comm", "prev_pid", "prev_prio", "prev_state",
					   "next_comm", "next_pid", "next_prio" };
	static const uint8_t sws[] = { 0, 2, 3, 4, 5, 7, 8 }, swn[] = { 2, 1, 1, 1, 2, 1, 1 };
	sw->nargs = 7;
	for (int k = 0; k < 7; k++) {
		snprintf(sw->args[k].name, DTCAP_ARGNAMELEN, "%s", swa[k]);
		snprintf(sw->args[k].type, DTCAP_ARGNAMELEN, "%s", swn[k] == 2 ? "char[16]" : "int");
		sw->args[k].slot = sws[k];
		sw->args[k].nslots = swn[k];
	}
	wk->id = 101;
	snprintf(wk->name, sizeof(wk->name), "tracepoint:sched:sched_wakeup");
	static const char *const wka[] = { "comm", "pid", "prio", "target_cpu" };
	static const uint8_t wks[] = { 0, 2, 3, 4 }, wkn[] = { 2, 1, 1, 1 };
	wk->nargs = 4;
	for (int k = 0; k < 4; k++) {
		snprintf(wk->args[k].name, DTCAP_ARGNAMELEN, "%s", wka[k]);
		snprintf(wk->args[k].type, DTCAP_ARGNAMELEN, "%s", wkn[k] == 2 ? "char[16]" : "int");
		wk->args[k].slot = wks[k];
		wk->args[k].nslots = wkn[k];
	}
	if (dtcap_put_probes(w, pr, np))
		die(dtcap_writer_error(w));

	/* kallsyms: 400 functions, so stacks are named as in a real capture */
	char *ks = malloc(400 * 64);
	size_t kl = 0;
	for (int i = 0; i < 400; i++)
		kl += (size_t)sprintf(ks + kl, "ffffffff81%06x T kfunc_%d\n", i * 0x400, i);
	if (dtcap_put_kallsyms(w, ks, kl))
		die(dtcap_writer_error(w));
	free(ks);

	/* 300 kernel and 300 user stacks, 6 to 30 frames */
	uint32_t kst[300], ust[300];
	for (int i = 0; i < 300; i++) {
		uint64_t pcs[32];
		unsigned d = 6 + rnd(25);
		for (unsigned k = 0; k < d; k++)
			pcs[k] = 0xffffffff81000000ULL + (uint64_t)rnd(400) * 0x400 + 0x10 + rnd(0x100);
		if (!(kst[i] = dtcap_intern_stack(w, pcs, d, 1, 0)))
			die(dtcap_writer_error(w));
		for (unsigned k = 0; k < d; k++)
			pcs[k] = 0x401000ULL + (uint64_t)rnd(0x10000) * 0x10;
		if (!(ust[i] = dtcap_intern_stack(w, pcs, d, 0, 0)))
			die(dtcap_writer_error(w));
	}

	struct thr th[NCPU][NTHR];
	uint32_t cur[NCPU];
	uint64_t now[NCPU];
	char comm[16];
	for (int cpu = 0; cpu < NCPU; cpu++) {
		for (int k = 0; k < NTHR; k++) {
			struct thr *t = &th[cpu][k];
			t->pid = 1000 + (uint32_t)(cpu * NTHR + k) / 16 * 16;
			t->tid = 1000 + (uint32_t)(cpu * NTHR + k);
			if (mix)
				t->tid = 1000 + (uint32_t)(cpu / 2 * NTHR + k) + (k % 2 ? (1u << 22) : 0);
			snprintf(comm, sizeof(comm), "app%u", t->pid);
			t->comm = dtcap_intern_comm(w, comm);
			t->sleeping = k != 0;
		}
		cur[cpu] = 0;
		now[cpu] = host.start_ns + 1000;
	}

	uint64_t written = 0;
	struct dtcap_event e;
	while (written < n) {
		for (int cpu = 0; cpu < NCPU && written < n; cpu++) {
			for (int b = 0; b < BATCH && written < n; b++) {
				struct thr *t = &th[cpu][cur[cpu]];
				memset(&e, 0, sizeof(e));
				e.cpu = (uint32_t)cpu;
				e.pid = t->pid;
				e.tid = t->tid;
				e.comm = t->comm;
				uint32_t a = rnd(100);
				now[cpu] += 1000 + rnd(20000);
				e.ts = now[cpu];
				if (a < 60 && written + 1 < n) {
					/* a syscall: entry, return */
					uint32_t sc = rnd(NSYS);
					e.probe = 1 + 2 * sc;
					e.nargs = 3;
					e.args[0] = rnd(64);
					e.args[1] = 0x7ffd00000000ULL + rnd(1 << 20);
					e.args[2] = 1u << rnd(16);
					if (dtcap_put_event(w, &e))
						die(dtcap_writer_error(w));
					now[cpu] += 500 + rnd(100000);
					e.ts = now[cpu];
					e.probe = 2 + 2 * sc;
					e.flags = DTR_RETURN;
					e.nargs = 2;
					e.args[0] = rnd(10) ? rnd(4096) : (uint64_t)-11;
					e.args[1] = e.args[0] == (uint64_t)-11 ? 11 : 0;
					e.args[2] = 0;
					written++;
				} else if (a < 80) {
					/* it wakes one of its CPU's sleepers */
					uint32_t k = rnd(NTHR);
					e.probe = 101;
					e.nargs = 5;
					memcpy(&e.args[0], "app", 3);
					e.args[2] = th[cpu][k].tid;
					e.args[3] = 120;
					e.args[4] = (uint64_t)cpu;
					e.kstack = kst[site(t)];
					e.ustack = ust[site(t)];
					th[cpu][k].sleeping = 0;
				} else {
					/* it leaves the CPU, to a woken thread (else any) */
					uint32_t k = rnd(NTHR), tries = 0;
					while ((th[cpu][k].sleeping || k == cur[cpu]) && tries++ < NTHR)
						k = (k + 1) % NTHR;
					if (k == cur[cpu])
						k = (k + 1) % NTHR;
					int st = rnd(10) < 7 ? 1 : 0;
					e.probe = 100;
					e.nargs = 10;
					memcpy(&e.args[0], "app", 3);
					e.args[2] = t->tid;
					e.args[3] = 120;
					e.args[4] = (uint64_t)st;
					memcpy(&e.args[5], "app", 3);
					e.args[7] = lose && ++nsw % lose == 0 ? 0 : th[cpu][k].tid;
					e.args[8] = 120;
					e.kstack = kst[site(t)];
					e.ustack = ust[site(t)];
					t->sleeping = st;
					th[cpu][k].sleeping = 0;
					cur[cpu] = k;
				}
				if (dtcap_put_event(w, &e))
					die(dtcap_writer_error(w));
				written++;
			}
		}
	}
	struct dtcap_count cnt[NCPU];
	memset(cnt, 0, sizeof(cnt));
	if (dtcap_put_counters(w, now[0], cnt, NCPU, NULL) || dtcap_close(w))
		die(dtcap_create_error());
	return 0;
}
