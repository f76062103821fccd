/*
 * mksql - write a capture for the SQL tests through the dtcap writer, with
 * the facts the tests check computed here, independently of any reader:
 * read/openat entry/return pairs with known latencies per thread, kernel
 * and user stacks with known top frames, a comm that needs CSV quoting,
 * processes and counter snapshots.
 *
 *	mksql OUT.dtc EXPECTED [NEVENTS [unsorted|nulls|wide]]
 *
 * "unsorted" moves every third event 250 ns back in time, so rows (and the
 * blocks' time ranges) are out of order as in a real capture of several
 * CPUs; its latency lines are then meaningless.  "nulls" gives every 13th
 * event no comm (SQL NULL) and every 17th a probe id the capture does not
 * name (probe_name NULL), and the tallies of EXPECTED do not count that.
 * "wide" spreads the return values over the whole 64 bits (the edges of
 * the small values events_grouped counts densely, and beyond) and the
 * threads over some 2400 tids, more keys than its dense table takes; the
 * tallies of EXPECTED then do not hold.
 * EXPECTED gets "key value..." lines (see the fprintf calls at the end).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "../xorshift.h"

enum { P_READ_E = 1, P_READ_R, P_PROF, P_OPEN_E, P_OPEN_R, NPROBES = 5 };
static const char *const pnames[NPROBES + 1] = {
	NULL, "syscall:read:entry", "syscall:read:return", "profile:hz:97",
	"syscall:openat:entry", "syscall:openat:return",
};

/* The third comm needs CSV and JSON quoting. */
static const char *const comms[] = { "bash", "make", "a,b\"c", "kworker/0:1" };
#define NCOMMS 4
#define NTHREADS 8	/* pid 100+t/2, tid 1000+t */

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T schedule\n"
	"ffffffff81002000 T do_syscall_64\n"
	"ffffffff81003000 T vfs_read\n"
	"ffffffff81004000 T entry_SYSCALL_64\n"
	"ffffffff81005000 T _etext\n";

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
	return xorshift64(&rng);
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "mksql: %s: %s\n", what, msg);
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: mksql OUT.dtc EXPECTED [NEVENTS [unsorted|nulls|wide|tidblocks ...]]\n");
		return 2;
	}
	unsigned long nevents = argc > 3 ? strtoul(argv[3], NULL, 0) : 100000;
	/* the modes after the count, any of them together */
	int unsorted = 0, nulls = 0, wide = 0, tidblocks = 0;
	for (int a = 4; a < argc; a++) {
		unsorted |= strcmp(argv[a], "unsorted") == 0;
		nulls |= strcmp(argv[a], "nulls") == 0;
		wide |= strcmp(argv[a], "wide") == 0;
		/* every 5th event of block k (1000 events a block) by thread
		 * 5000 + k: threads each in one block only, for the scans
		 * that skip blocks by their contexts */
		tidblocks |= strcmp(argv[a], "tidblocks") == 0;
	}
	struct dtcap_host host;
	memset(&host, 0, sizeof(host));
	snprintf(host.kernel, sizeof(host.kernel), "6.1.0-sqltest");
	snprintf(host.hostname, sizeof(host.hostname), "mksql");
	host.ncpus = 2;
	host.clock_mono_ns = 5000000000ULL;
	host.clock_real_ns = 1700000000000000000LL;
	host.start_ns = 5000000000ULL;
	snprintf(host.command, sizeof(host.command), "mksql");
	struct dtcap_writer_opts wo = { 0, 1000, 0, 1 };
	struct dtcap_writer *w = dtcap_create(argv[1], &host, &wo);
	if (w == NULL)
		die(argv[1], dtcap_create_error());

	struct dtcap_probe p[NPROBES];
	memset(p, 0, sizeof(p));
	for (unsigned i = 0; i < NPROBES; i++) {
		p[i].id = i + 1;
		snprintf(p[i].name, sizeof(p[i].name), "%s", pnames[i + 1]);
		if (strstr(pnames[i + 1], ":return")) {
			p[i].flags = DT_PF_RETURN;
			p[i].nargs = 2;
			snprintf(p[i].args[0].name, DTCAP_ARGNAMELEN, "retval");
			snprintf(p[i].args[0].type, DTCAP_ARGNAMELEN, "long");
			snprintf(p[i].args[1].name, DTCAP_ARGNAMELEN, "errno");
			snprintf(p[i].args[1].type, DTCAP_ARGNAMELEN, "int");
			p[i].args[0].slot = 0, p[i].args[1].slot = 1;
			p[i].args[0].nslots = p[i].args[1].nslots = 1;
		}
		if (strstr(pnames[i + 1], "profile"))
			p[i].flags = DT_PF_TIMER;
	}
	p[P_READ_E - 1].nargs = 3;
	static const char *const an[] = { "fd", "buf", "count" };
	static const char *const at[] = { "unsigned int", "char *", "size_t" };
	for (unsigned a = 0; a < 3; a++) {
		snprintf(p[P_READ_E - 1].args[a].name, DTCAP_ARGNAMELEN, "%s", an[a]);
		snprintf(p[P_READ_E - 1].args[a].type, DTCAP_ARGNAMELEN, "%s", at[a]);
		p[P_READ_E - 1].args[a].slot = (uint8_t)a;
		p[P_READ_E - 1].args[a].nslots = 1;
	}
	if (dtcap_put_probes(w, p, NPROBES) ||
	    dtcap_put_kallsyms(w, kallsyms, strlen(kallsyms)))
		die(argv[1], dtcap_writer_error(w));

	/* One ELF file with two symbols, mapped by every process. */
	static const struct dtcap_sym syms[] = {
		{ 0x1000, 0x100, "main" }, { 0x1100, 0x100, "work" },
	};
	struct dtcap_file f = { .path = "/usr/bin/sqltest", .nsyms = 2, .syms = syms };
	uint32_t fid = dtcap_put_file(w, &f);
	if (fid == 0)
		die(argv[1], dtcap_writer_error(w));
	for (unsigned i = 0; i < NTHREADS / 2; i++) {
		struct dtcap_map m = { 0x400000, 0x402000, 0, fid, 5, "/usr/bin/sqltest" };
		struct dtcap_proc pr = { .ts = host.start_ns, .pid = 100 + i, .ppid = 1,
					 .exe = "/usr/bin/sqltest", .nmaps = 1, .maps = &m };
		snprintf(pr.comm, sizeof(pr.comm), "%s", comms[i % NCOMMS]);
		if (dtcap_put_proc(w, &pr))
			die(argv[1], dtcap_writer_error(w));
	}

	uint32_t cid[NCOMMS];
	for (unsigned i = 0; i < NCOMMS; i++)
		if ((cid[i] = dtcap_intern_comm(w, comms[i])) == 0)
			die(argv[1], dtcap_writer_error(w));
	/* kstack 1: vfs_read <- do_syscall_64 <- entry_SYSCALL_64 */
	uint64_t kpcs[3] = { 0xffffffff81003010, 0xffffffff81002020, 0xffffffff81004030 };
	uint32_t ks = dtcap_intern_stack(w, kpcs, 3, 1, 0);
	/* kstack 2: schedule (truncated) */
	uint64_t kpcs2[1] = { 0xffffffff81001040 };
	uint32_t ks2 = dtcap_intern_stack(w, kpcs2, 1, 1, 1);
	/* ustack: work <- main */
	uint64_t upcs[2] = { 0x401110, 0x401010 };
	uint32_t us = dtcap_intern_stack(w, upcs, 2, 0, 0);
	if (!ks || !ks2 || !us)
		die(argv[1], dtcap_writer_error(w));

	unsigned long ncomm[NCOMMS] = { 0 }, npid[NTHREADS / 2] = { 0 }, nprobe[NPROBES + 1] = { 0 };
	unsigned long nks = 0, nks2 = 0, nus = 0;
	/* pending entry per thread: probe and ts */
	unsigned pend[NTHREADS] = { 0 };
	uint64_t pend_ts[NTHREADS] = { 0 };
	unsigned long npairs[2] = { 0 }, nerr = 0;
	unsigned long long latsum[2] = { 0 }, latmax[2] = { 0 };
	uint64_t ts = host.start_ns, tmin = 0, tmax = 0;
	for (unsigned long i = 0; i < nevents; i++) {
		uint64_t r = next();
		unsigned t = (unsigned)(r % NTHREADS);
		unsigned pi = t / 2;
		unsigned c = pi % NCOMMS;
		struct dtcap_event e;
		memset(&e, 0, sizeof(e));
		ts += 100 + (r >> 40) % 1000;	/* strictly increasing */
		e.ts = unsorted && i % 3 == 1 ? ts - 250 : ts;
		e.cpu = (uint32_t)(r >> 8) & 1;
		e.pid = 100 + pi;
		e.tid = 1000 + t + (wide ? 8 * (unsigned)((r >> 44) % 300) : 0);
		if (tidblocks && i % 5 == 0)
			e.tid = 5000 + (unsigned)(i / 1000);
		e.comm = cid[c];
		if (pend[t]) {
			/* close the open call: its latency is known here */
			int isopen = pend[t] == P_OPEN_E;
			e.probe = isopen ? P_OPEN_R : P_READ_R;
			e.flags = DTR_RETURN;
			e.nargs = 2;
			int fail = (r >> 16) % 5 == 0;
			e.args[0] = fail ? (uint64_t)-1 : (r >> 20) % 4096;
			if (wide) {
				static const int64_t edge[] = {
					-4097, -4096, -4095, 4095, 4096, 4097, INT64_MIN,
					INT64_MAX, -1, 0, 1 << 20, -(1 << 20),
				};
				unsigned k = (unsigned)(r >> 50) % 16;
				e.args[0] = k < 12 ? (uint64_t)edge[k] : r ^ (r << 17);
			}
			e.args[1] = fail ? 2 : 0;
			nerr += fail;
			uint64_t lat = ts - pend_ts[t];
			npairs[isopen]++;
			latsum[isopen] += lat;
			if (lat > latmax[isopen])
				latmax[isopen] = lat;
			pend[t] = 0;
		} else {
			unsigned k = (unsigned)((r >> 24) % 10);
			if (k < 5) {
				e.probe = P_READ_E;
				e.nargs = 3;
				e.args[0] = 3 + t;
				e.args[1] = 0x7ffd0000 + (r & 0xff0);
				e.args[2] = 4096;
				e.kstack = ks;
				nks++;
			} else if (k < 7) {
				e.probe = P_OPEN_E;
			} else {
				e.probe = P_PROF;
				e.kstack = ks2;
				e.ustack = us;
				e.flags = DTR_KSTACK_TRUNC;
				nks2++;
				nus++;
			}
			if (e.probe != P_PROF) {
				pend[t] = e.probe;
				pend_ts[t] = ts;
			}
		}
		if (nulls && i % 13 == 3)
			e.comm = 0;
		if (nulls && i % 17 == 5)
			e.probe = 77;
		if (i == 0 || e.ts < tmin)
			tmin = e.ts;
		if (e.ts > tmax)
			tmax = e.ts;
		if (dtcap_put_event(w, &e))
			die(argv[1], dtcap_writer_error(w));
		ncomm[c]++;
		npid[pi]++;
		nprobe[e.probe]++;
		if (i == nevents / 2) {
			struct dtcap_count pc[2] = { { 10, 9, 1, 0, 0, 0, 0, 0, 0 }, { 20, 20, 0, 1, 0, 0, 0, 0, 0 } };
			struct dtcap_count rc = { 0, 0, 0, 0, 0, 0, 0, 0, 0 };
			if (dtcap_put_counters(w, ts, pc, 2, &rc))
				die(argv[1], dtcap_writer_error(w));
		}
	}
	struct dtcap_count pc[2] = { { 100, 90, 10, 0, 0, 0, 0, 0, 0 }, { 200, 200, 0, 2, 0, 1, 0, 0, 0 } };
	struct dtcap_count rc = { 0, 0, 3, 0, 0, 0, 0, 0, 0 };
	if (dtcap_put_counters(w, ts, pc, 2, &rc))
		die(argv[1], dtcap_writer_error(w));
	if (dtcap_close(w))
		die(argv[1], "close failed");

	FILE *ex = fopen(argv[2], "w");
	if (ex == NULL)
		die(argv[2], "cannot create");
	fprintf(ex, "total %lu\n", nevents);
	fprintf(ex, "tmin %llu\ntmax %llu\n", (unsigned long long)tmin,
		(unsigned long long)tmax);
	for (unsigned i = 0; i < NCOMMS; i++)
		fprintf(ex, "comm %s %lu\n", comms[i], ncomm[i]);
	for (unsigned i = 0; i < NTHREADS / 2; i++)
		fprintf(ex, "pid %u %lu\n", 100 + i, npid[i]);
	for (unsigned i = 1; i <= NPROBES; i++)
		fprintf(ex, "probe %u %s %lu\n", i, pnames[i], nprobe[i]);
	fprintf(ex, "kstack %u vfs_read,do_syscall_64,entry_SYSCALL_64 %lu\n", ks, nks);
	fprintf(ex, "kstack %u schedule %lu\n", ks2, nks2);
	fprintf(ex, "ustack %u work,main %lu\n", us, nus);
	fprintf(ex, "lat read %lu %llu %llu\n", npairs[0], latsum[0], latmax[0]);
	fprintf(ex, "lat openat %lu %llu %llu\n", npairs[1], latsum[1], latmax[1]);
	fprintf(ex, "errors %lu\n", nerr);
	fprintf(ex, "procs %u\n", NTHREADS / 2);
	fprintf(ex, "counters %u\n", 2 * 3);
	fclose(ex);
	return 0;
}
