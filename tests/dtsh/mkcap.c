/*
 * mkcap - write a capture for the dtsh tests through the dtcap writer:
 * a probe table with tracepoint:sched:* and syscall probes (which dtgen may
 * not produce), a kallsyms snapshot, kernel stacks, and events whose counts
 * are known here, independently of any reader.
 *
 *	mkcap OUT.dtc EXPECTED
 *
 * EXPECTED gets lines "comm NAME COUNT", "probe NAME COUNT",
 * "syscall NAME COUNT", "stack TOPFRAME COUNT" and "total COUNT".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtcap.h"
#include "../xorshift.h"

static const char *const probes[] = {
	"tracepoint:sched:sched_switch",
	"tracepoint:sched:sched_wakeup",
	"tracepoint:sched:sched_process_exec",
	"syscall:openat:entry",
	"syscall:openat:return",
	"syscall:read:entry",
	"syscall:read:return",
	"profile:hz:97",
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static const char *const comms[] = { "bash", "sshd", "make", "cc1", "kworker/0:1" };
#define NCOMMS (sizeof(comms) / sizeof(comms[0]))

/* Functions of the fake kernel; stacks are built from these. */
static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T schedule\n"
	"ffffffff81002000 T do_syscall_64\n"
	"ffffffff81003000 T vfs_read\n"
	"ffffffff81004000 T do_sys_openat2\n"
	"ffffffff81005000 T entry_SYSCALL_64\n"
	"ffffffff81006000 T _etext\n";
static const char *const kfuncs[] = { "schedule", "vfs_read", "do_sys_openat2" };
static const uint64_t kaddr[] = { 0xffffffff81001010, 0xffffffff81003020, 0xffffffff81004030 };

static uint64_t rng = 88172645463325252ULL;
static uint64_t
next(void)
{
	return xorshift64(&rng);
}

static void
die(const char *what, const char *msg)
{
	fprintf(stderr, "mkcap: %s: %s\n", what, msg);
	exit(1);
}

int
main(int argc, char **argv)
{
	struct dtcap_host host;
	struct dtcap_probe p[NPROBES];
	struct dtcap_writer_opts wo = { 0, 4096, 0, 1 };
	struct dtcap_writer *w;
	uint32_t commid[NCOMMS], stackid[3];
	uint64_t ncomm[NCOMMS] = { 0 }, nprobe[NPROBES] = { 0 }, nstack[3] = { 0 };
	const unsigned nevents = 30000;
	FILE *ex;

	if (argc != 3) {
		fprintf(stderr, "usage: mkcap OUT.dtc EXPECTED\n");
		return 2;
	}
	memset(&host, 0, sizeof(host));
	snprintf(host.kernel, sizeof(host.kernel), "6.1.0-test");
	snprintf(host.hostname, sizeof(host.hostname), "mkcap");
	host.ncpus = 2;
	host.clock_mono_ns = 1000000000ULL;
	host.clock_real_ns = 1700000000000000000LL;
	host.start_ns = 1000000000ULL;
	snprintf(host.command, sizeof(host.command), "mkcap");
	if ((w = dtcap_create(argv[1], &host, &wo)) == NULL)
		die(argv[1], dtcap_create_error());

	memset(p, 0, sizeof(p));
	for (unsigned i = 0; i < NPROBES; i++) {
		p[i].id = i + 1;
		snprintf(p[i].name, sizeof(p[i].name), "%s", probes[i]);
		if (strstr(probes[i], ":return"))
			p[i].flags = 0x2;
		if (strncmp(probes[i], "profile:", 8) == 0)
			p[i].flags = 0x1;
	}
	/* sched_switch: the real tracepoint's arguments, char[16] in 2 slots */
	p[0].nargs = 4;
	snprintf(p[0].args[0].name, DTCAP_ARGNAMELEN, "prev_comm");
	snprintf(p[0].args[0].type, DTCAP_ARGNAMELEN, "char[16]");
	p[0].args[0].slot = 0, p[0].args[0].nslots = 2;
	snprintf(p[0].args[1].name, DTCAP_ARGNAMELEN, "prev_pid");
	snprintf(p[0].args[1].type, DTCAP_ARGNAMELEN, "pid_t");
	p[0].args[1].slot = 2, p[0].args[1].nslots = 1;
	snprintf(p[0].args[2].name, DTCAP_ARGNAMELEN, "next_comm");
	snprintf(p[0].args[2].type, DTCAP_ARGNAMELEN, "char[16]");
	p[0].args[2].slot = 3, p[0].args[2].nslots = 2;
	snprintf(p[0].args[3].name, DTCAP_ARGNAMELEN, "next_pid");
	snprintf(p[0].args[3].type, DTCAP_ARGNAMELEN, "pid_t");
	p[0].args[3].slot = 5, p[0].args[3].nslots = 1;
	p[3].nargs = 3;
	snprintf(p[3].args[0].name, DTCAP_ARGNAMELEN, "dfd");
	snprintf(p[3].args[0].type, DTCAP_ARGNAMELEN, "int");
	snprintf(p[3].args[1].name, DTCAP_ARGNAMELEN, "filename");
	snprintf(p[3].args[1].type, DTCAP_ARGNAMELEN, "const char *");
	snprintf(p[3].args[2].name, DTCAP_ARGNAMELEN, "flags");
	snprintf(p[3].args[2].type, DTCAP_ARGNAMELEN, "int");
	for (unsigned a = 0; a < 3; a++)
		p[3].args[a].slot = (uint8_t)a, p[3].args[a].nslots = 1;
	if (dtcap_put_probes(w, p, NPROBES) || dtcap_put_kallsyms(w, kallsyms, strlen(kallsyms)))
		die(argv[1], dtcap_writer_error(w));
	for (unsigned i = 0; i < NCOMMS; i++)
		if ((commid[i] = dtcap_intern_comm(w, comms[i])) == 0)
			die(argv[1], dtcap_writer_error(w));
	for (unsigned i = 0; i < 3; i++) {
		uint64_t pcs[3] = { kaddr[i], 0xffffffff81002040, 0xffffffff81005050 };
		if ((stackid[i] = dtcap_intern_stack(w, pcs, 3, 1, 0)) == 0)
			die(argv[1], dtcap_writer_error(w));
	}

	for (unsigned i = 0; i < nevents; i++) {
		struct dtcap_event e;
		uint64_t r = next();
		/* Skewed so that the order of a top list is unambiguous. */
		unsigned c = (unsigned)(r % 15);
		c = c < 6 ? 0 : c < 10 ? 1 : c < 13 ? 2 : c < 14 ? 3 : 4;
		unsigned pr = (unsigned)((r >> 8) % 31);
		pr = pr < 9 ? 0 : pr < 14 ? 1 : pr < 15 ? 2 : pr < 21 ? 3 : pr < 24 ? 4 :
		     pr < 27 ? 5 : pr < 28 ? 6 : 7;
		memset(&e, 0, sizeof(e));
		e.ts = host.start_ns + (uint64_t)i * 100000;
		e.cpu = (uint32_t)(r >> 20) & 1;
		e.pid = 100 + c;
		e.tid = e.pid;
		e.probe = pr + 1;
		e.comm = commid[c];
		if (pr == 0 || pr == 7) {
			unsigned s = (unsigned)((r >> 32) % 7);
			s = s < 4 ? 0 : s < 6 ? 1 : 2;
			e.kstack = stackid[s];
			nstack[s]++;
		}
		if (pr == 0) {
			e.nargs = 6;
			memcpy(&e.args[0], comms[c], strlen(comms[c]) < 16 ? strlen(comms[c]) : 16);
			e.args[2] = e.pid;
			e.args[5] = 100 + (r >> 40) % NCOMMS;
		}
		if (dtcap_put_event(w, &e))
			die(argv[1], dtcap_writer_error(w));
		ncomm[c]++;
		nprobe[pr]++;
	}
	if (dtcap_close(w))
		die(argv[1], "close failed");

	if ((ex = fopen(argv[2], "w")) == NULL)
		die(argv[2], "cannot create");
	for (unsigned i = 0; i < NCOMMS; i++)
		fprintf(ex, "comm %s %llu\n", comms[i], (unsigned long long)ncomm[i]);
	for (unsigned i = 0; i < NPROBES; i++)
		fprintf(ex, "probe %s %llu\n", probes[i], (unsigned long long)nprobe[i]);
	fprintf(ex, "syscall openat %llu\n", (unsigned long long)nprobe[3]);
	fprintf(ex, "syscall read %llu\n", (unsigned long long)nprobe[5]);
	for (unsigned i = 0; i < 3; i++)
		fprintf(ex, "stack %s %llu\n", kfuncs[i], (unsigned long long)nstack[i]);
	fprintf(ex, "total %u\n", nevents);
	fclose(ex);
	return 0;
}
