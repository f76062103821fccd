/*
 * awkcap - a small capture whose frame names are awkward for folded text
 * and for readers of it (tests/export/flamegraph_pl.sh): spaces (C++
 * operators, parameter lists, a name with a trailing space), ';' inside a
 * name (dt writes ':', flame.c), XML specials, non-ASCII UTF-8 (German,
 * Japanese, an emoji), bytes that are not UTF-8 (dt writes U+FFFD), a
 * 4263-byte demangled C++ template name (a lambda passed to a function
 * template over nested std::map/vector/function types, mangled as g++ 12
 * mangles it: dt demangles it) and a realistic std::vector one; comms with
 * a space, a ';' and a non-ASCII letter.  No name ends in a space and
 * digits: flamegraph.pl reads such a last frame as the first count of a
 * differential line (dtreport(1), flame).  Events are drawn by a seeded
 * LCG.
 *
 * usage: awkcap OUT.dtc [SEED] [NEVENTS]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "../capbuild.h"

#define K(x)	(0xffffffff81000000ULL + (x))

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81002000 T __x64_sys_futex\n"
	"ffffffff81003000 T schedule\n"
	"ffffffff81004000 T asm_sysvec_apic_timer_interrupt\n";

/* The app's functions, 0x100 bytes each from 0x401000. */
static const char *const names[] = {
	"_start",
	"main",
	"operator new(unsigned long)",
	"ns::parse;field;value",
	"name with  two spaces and a trailing space ",
	"a&b<c>\"quoted\" 'single'",
	"gr\xc3\xb6\xc3\x9f" "e_berechnen",
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe9\x96\xa2\xe6\x95\xb0",
	"\xf0\x9f\x94\xa5hot_path",
	"caf\xe9_latin1",
	/* engine::detail::visit_all<...>(...) with a lambda of main */
	"_ZN6engine6detail9visit_allINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE4PairISt6vec"
	"torIS7_SaIS7_EESt3mapIiSt8functionIFvRKS7_dEESt4lessIiESaISt4pairIKiSH_EEEEZ4mainEUlSF_RKSP_"
	"E_EEvRKSC_IT_S9_IT0_SaISU_EESI_IST_ESaISK_IKST_SW_EEET1_",
	/* void std::vector<int>::_M_realloc_insert<int const&>(iterator, int const&) */
	"_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
	"{lambda(int)#1}::operator()(int) const",
	"(anonymous namespace)::worker_loop()",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))
#define FN(i)	(0x401000ULL + 0x100 * (i) + 0x10)

int main(int argc, char **argv)
{
	unsigned seed, nev;
	int st = cb_args(argc, argv, "awkcap", &seed, &nev);
	if (st)
		return st;

	struct dtcap_host h;
	cb_host(&h, 2, "dtrec -o awk.dtc profile:hz:99");
	struct dtcap_writer_opts o = { .block_events = 1000, .synthetic = 1 };
	struct dtcap_writer *w = dtcap_create(argv[1], &h, &o);
	if (!w)
		return cb_die("awkcap", argv[1], NULL);

	struct dtcap_probe p = { .id = 1, .flags = DT_PF_TIMER };
	strcpy(p.name, "profile:hz:99");
	if (dtcap_put_probes(w, &p, 1) || dtcap_put_kallsyms(w, kallsyms, strlen(kallsyms)))
		return cb_die("awkcap", "metadata", w);

	struct dtcap_sym syms[NNAMES];
	for (unsigned i = 0; i < NNAMES; i++)
		syms[i] = (struct dtcap_sym){ 0x401000 + 0x100 * i, 0x100, names[i] };
	struct dtcap_file f = { .path = "/opt/app/bin/app", .load_bias_hint = 0x400000,
				.nsyms = NNAMES, .syms = syms };
	uint32_t fid = dtcap_put_file(w, &f);
	if (!fid)
		return cb_die("awkcap", "file", w);
	struct dtcap_map maps[] = {
		{ 0x401000, 0x402000, 0x1000, fid, 5, "/opt/app/bin/app" },
	};
	struct dtcap_proc pr[] = {
		{ 0, 100, 1, "my app;v2", "/opt/app/bin/app", 1, maps },
		{ 0, 200, 1, "caf\xc3\xa9 worker", "/opt/app/bin/app", 1, maps },
	};
	for (int i = 0; i < 2; i++)
		if (dtcap_put_proc(w, &pr[i]))
			return cb_die("awkcap", "proc", w);

	/* user stacks, innermost first, each ending main < _start */
	enum { NU = 20 };
	uint64_t us[NU][4];
	unsigned un[NU];
	for (unsigned i = 0; i < NU; i++) {
		unsigned a = 2 + i % (NNAMES - 2), b = 2 + (i * 5 + 3) % (NNAMES - 2);
		us[i][0] = FN(a);
		un[i] = 3;
		if (i >= NNAMES - 2) {	/* the rest: two awkward frames each */
			us[i][1] = FN(b);
			un[i] = 4;
		}
		us[i][un[i] - 2] = FN(1);
		us[i][un[i] - 1] = FN(0);
	}
	uint64_t ks[3][3] = {
		{ K(0x3010), K(0x2010), K(0x1010) },
		{ K(0x4010), 0, 0 },
		{ K(0x2010), K(0x1010), 0 },
	};
	unsigned kn[] = { 3, 1, 2 };
	uint32_t uid[NU], kid[3];
	for (unsigned i = 0; i < NU; i++)
		if (!(uid[i] = dtcap_intern_stack(w, us[i], un[i], 0, 0)))
			return cb_die("awkcap", "stack", w);
	for (unsigned i = 0; i < 3; i++)
		if (!(kid[i] = dtcap_intern_stack(w, ks[i], kn[i], 1, 0)))
			return cb_die("awkcap", "stack", w);
	uint32_t comm[2];
	for (int i = 0; i < 2; i++)
		if (!(comm[i] = dtcap_intern_comm(w, pr[i].comm)))
			return cb_die("awkcap", "comm", w);

	uint64_t ts = h.start_ns, nread[2] = { 0 };
	for (unsigned i = 0; i < nev; i++) {
		struct dtcap_event e = { 0 };
		ts += 1 + cb_rnd(2000000000ULL / nev * 2);
		e.ts = ts;
		e.cpu = cb_rnd(2);
		unsigned who = cb_rnd(2);
		e.pid = e.tid = who ? 200 : 100;
		e.comm = comm[who];
		e.probe = 1;
		/* a user frame is the innermost of a quarter of the stacks, and
		 * one sample in 50 has no stack: its line is the comm alone */
		e.ustack = uid[cb_rnd(NU)];
		unsigned k = cb_rnd(4);
		e.kstack = k < 3 ? kid[k] : 0;
		if (cb_rnd(50) == 0)
			e.ustack = e.kstack = 0;
		if (dtcap_put_event(w, &e))
			return cb_die("awkcap", "event", w);
		nread[e.cpu]++;
	}
	struct dtcap_count c[2] = { 0 }, rec = { 0 };
	for (int i = 0; i < 2; i++)
		c[i].read = c[i].produced = nread[i];
	rec.read = nev;
	if (dtcap_put_counters(w, ts + 1000, c, 2, &rec))
		return cb_die("awkcap", "counters", w);
	if (dtcap_close(w))
		return cb_die("awkcap", "close", NULL);
	return 0;
}
