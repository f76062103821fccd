/*
 * dthostile - write the crafted captures that once made symbol loading
 * quadratic or printed control bytes raw, for the tests, the fuzz corpus
 * and the bench (not a user tool).  Deterministic: same arguments, same
 * bytes.
 *
 *	dthostile KIND N OUT [EVENTS]
 *
 * EVENTS replaces the kind's event count (small seeds for the fuzzer).
 * KIND:
 *	mods       N kallsyms lines, each in a module of its own ("[hm17]")
 *	           that /proc/modules does not list
 *	aliases    N names of one kernel address, and events whose kernel
 *	           frames are distinct pcs after it
 *	modranges  N /proc/modules lines with ranges, and events whose
 *	           frames fall in them
 *	escapes    comms, a kernel symbol, a module and the probe holding
 *	           terminal escapes and newlines (N events)
 *	many       N kernel symbols of random names and addresses: seconds
 *	           of loading, to interrupt
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dtcap.h"

#define KBASE	0xffffffff81000000ULL
#define MBASE	0xffffffffc0000000ULL
#define DEPTH	32

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dthostile: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

struct text {
	char	*p;
	size_t	len, cap;
};

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			die("format");
		if (t->p && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = (t->cap + (size_t)n + 1) * 2;
		if (!(t->p = realloc(t->p, t->cap)))
			die("out of memory");
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: dthostile mods|aliases|modranges|escapes|many N OUT [EVENTS]\n");
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		usage(stderr);
		return 2;
	}
	const char *kind = argv[1], *out = argv[3];
	char *end;
	unsigned long n = strtoul(argv[2], &end, 0);
	if (*end || n < 1 || n > 10000000)
		die("bad N (1..10000000): %s", argv[2]);
	int mods = !strcmp(kind, "mods"), aliases = !strcmp(kind, "aliases"),
	    ranges = !strcmp(kind, "modranges"), escapes = !strcmp(kind, "escapes"),
	    many = !strcmp(kind, "many");
	if (!mods && !aliases && !ranges && !escapes && !many) {
		usage(stderr);
		return 2;
	}

	struct dtcap_host host;
	memset(&host, 0, sizeof(host));
	snprintf(host.kernel, sizeof(host.kernel), "6.1.0-dthostile-amd64");
	snprintf(host.hostname, sizeof(host.hostname), "hostile");
	host.ncpus = 1;
	host.start_ns = 1000000000000ULL;
	host.clock_mono_ns = host.start_ns - 1000;
	host.clock_real_ns = 1763700000000000000LL;
	snprintf(host.command, sizeof(host.command), "dthostile %s %lu", kind, n);
	struct dtcap_writer_opts wo = { 0, 0, 0, 1 };
	struct dtcap_writer *w = dtcap_create(out, &host, &wo);
	if (!w)
		die("%s", dtcap_create_error());
#define CK(x) do { if (x) die("%s", dtcap_writer_error(w)); } while (0)

	struct dtcap_probe probe;
	memset(&probe, 0, sizeof(probe));
	probe.id = 1;
	probe.flags = DT_PF_TIMER;
	/* escapes: the probe's name would retitle the terminal */
	snprintf(probe.name, DTCAP_PROBENAMELEN, "%s",
		 escapes ? "profile:hz:997\033]0;p\007" : "profile:hz:997");
	CK(dtcap_put_probes(w, &probe, 1));

	/* kallsyms: a core kernel in every kind, then the kind's lines */
	struct text ks = { 0 }, md = { 0 };
	add(&ks, "%016" PRIx64 " T _stext\n", KBASE - 0x1000);
	unsigned long nev = 4000;
	if (mods) {
		for (unsigned long i = 0; i < n; i++)
			add(&ks, "%016" PRIx64 " t hf%lu\t[hm%lu]\n", MBASE + 16 * i, i, i);
		nev = 64;
	} else if (aliases) {
		for (unsigned long i = 0; i < n; i++)
			add(&ks, "%016" PRIx64 " T alias%07lu\n", KBASE, i);
		add(&ks, "%016" PRIx64 " T after_aliases\n", KBASE + 0x200000);
		nev = 12000;
	} else if (many) {
		uint64_t y = 88172645463325252ULL;
		for (unsigned long i = 0; i < n; i++) {
			y ^= y << 13, y ^= y >> 7, y ^= y << 17;
			uint64_t z = y * 0x2545f4914f6cdd1dULL;
			add(&ks, "%016" PRIx64 " T k%016" PRIx64 "\n",
			    KBASE + (y >> 40), z);
		}
		nev = 16;
	} else if (ranges) {
		for (unsigned long i = 0; i < n; i++)
			add(&md, "hr%lu 4096 0 - Live 0x%" PRIx64 "\n", i, MBASE + 0x2000 * i);
	} else {
		/* a symbol and a module whose names would clear the screen,
		 * retitle the terminal and start a forged line */
		add(&ks, "%016" PRIx64 " T evil\033[2J\033]0;owned\007\nFORGED_sym\n", KBASE);
		add(&ks, "%016" PRIx64 " t modfn\t[m\033[31mred]\n", MBASE);
		add(&md, "m\033[31mred 4096 0 - Live 0x%" PRIx64 "\n", MBASE);
		nev = n;
	}
	if (argc == 5) {
		nev = strtoul(argv[4], &end, 0);
		if (*end || nev > 10000000)
			die("bad EVENTS (0..10000000): %s", argv[4]);
	}
	if (ks.len)
		CK(dtcap_put_kallsyms(w, ks.p, ks.len));
	if (md.len)
		CK(dtcap_put_modules(w, md.p, md.len));

	/* comms: plain, or with escapes and a newline (escapes) */
	uint32_t comm[3];
	CK(!(comm[0] = dtcap_intern_comm(w, escapes ? "a\033[2Jb" : "hostile")));
	CK(!(comm[1] = dtcap_intern_comm(w, escapes ? "x\ny 1 FORGED" : "hostile")));
	CK(!(comm[2] = dtcap_intern_comm(w, escapes ? "\033]0;t\007\r" : "hostile")));

	/* events: kernel stacks of DEPTH distinct pcs each where the kind
	 * makes lookups cost (aliases, modranges, mods) */
	struct dtcap_event e;
	memset(&e, 0, sizeof(e));
	uint64_t pcs[DEPTH];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (unsigned long i = 0; i < nev; i++) {
		for (unsigned k = 0; k < DEPTH; k++) {
			uint64_t j = i * DEPTH + k;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (aliases)
				pcs[k] = KBASE + 1 + j % 0x1fff00;
			else if (ranges)
				pcs[k] = MBASE + 0x2000 * (x % n) + 1 + j % 0xff0;
			else if (mods)
				pcs[k] = MBASE + 16 * (x % n) + 4;
			else
				pcs[k] = k & 1 ? MBASE + 8 : KBASE + 8;
		}
		e.ts = host.start_ns + 1000 * i;
		e.probe = 1;
		e.pid = e.tid = 100 + (uint32_t)(i % 3);
		e.comm = comm[i % 3];
		e.ctx = DTCAP_CTX_HARDIRQ;
		CK(!(e.kstack = dtcap_intern_stack(w, pcs, escapes ? 2 : DEPTH, 1, 0)));
		CK(dtcap_put_event(w, &e));
	}
	free(ks.p);
	free(md.p);
	if (dtcap_close(w))
		die("closing %s failed", out);
	return 0;
}
