/*
 * mkcap - a small capture with known symbol snapshots for the report tests
 * (dtgen makes the big, realistic ones).  What it holds is chosen to hit
 * each naming rule: core kernel and module symbols, an address inside a
 * module without a symbol, an address outside everything, user frames in
 * an executable with a load bias and in a shared library, a [vdso] frame,
 * an anonymous frame, truncated stacks, a pid that execs (two snapshots
 * with different layouts), events without comm.  Events are drawn by a
 * seeded LCG so two seeds give two different captures.
 *
 * usage: mkcap OUT.dtc [SEED] [NEVENTS]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "../capbuild.h"

#define K(x)	(0xffffffff81000000ULL + (x))
#define M(x)	(0xffffffffc0000000ULL + (x))

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81002000 t vfs_read\n"
	"ffffffff81002000 T vfs_read_alias\n"
	"ffffffff81003000 T schedule\n"
	"ffffffff81004000 T asm_sysvec_apic_timer_interrupt\n"
	"ffffffff81005000 D some_data\n"
	"ffffffffc0001000 t mod_func\t[testmod]\n"
	"ffffffffc0002000 t mod_other\t[testmod]\n";
static const char modules[] =
	"testmod 16384 0 - Live 0xffffffffc0000000\n"
	"othermod 8192 0 - Live 0xffffffffc0010000\n";

int main(int argc, char **argv)
{
	unsigned seed, nev;
	int st = cb_args(argc, argv, "mkcap", &seed, &nev);
	if (st)
		return st;

	struct dtcap_host h;
	cb_host(&h, 4, "dtrec -o test.dtc profile:hz:99");
	strcpy(h.kernel_build_id, "4b65726e656c4275696c644964303132");
	struct dtcap_writer_opts o = { .block_events = 1000, .synthetic = 1 };
	struct dtcap_writer *w = dtcap_create(argv[1], &h, &o);
	if (!w)
		return cb_die("mkcap", argv[1], NULL);

	struct dtcap_probe p[3] = { 0 };
	p[0].id = 1, p[0].flags = DT_PF_TIMER, strcpy(p[0].name, "profile:hz:99");
	p[1].id = 2, strcpy(p[1].name, "syscall:read:entry");
	p[2].id = 5, p[2].flags = DT_PF_TIMER, strcpy(p[2].name, "interval:ms:10");
	if (dtcap_put_probes(w, p, 3) || dtcap_put_kallsyms(w, kallsyms, strlen(kallsyms)) ||
	    dtcap_put_modules(w, modules, strlen(modules)))
		return cb_die("mkcap", "metadata", w);

	/* app: non-PIE, text at file offset 0x1000 mapped at 0x401000, so
	 * load bias hint 0x400000; libc: PIE-like, bias 0. */
	static const struct dtcap_sym appsyms[] = {
		{ 0x401000, 0x40, "_start" }, { 0x401100, 0x100, "main" },
		{ 0x401200, 0x200, "work" }, { 0x401400, 0, "nosize" },
	};
	static const struct dtcap_sym libcsyms[] = {
		{ 0x2000, 0x80, "__libc_start_main" }, { 0x3000, 0x100, "read" },
	};
	struct dtcap_file fa = { .path = "/usr/bin/app", .load_bias_hint = 0x400000,
				 .nsyms = 4, .syms = appsyms, .build_id_len = 20,
				 .build_id = { 0xa0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
					       0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
					       0x10, 0x11, 0x12, 0xff } };
	struct dtcap_file fl = { .path = "/lib/libc.so.6", .load_bias_hint = 0,
				 .nsyms = 2, .syms = libcsyms };
	uint32_t ida = dtcap_put_file(w, &fa), idl = dtcap_put_file(w, &fl);
	if (!ida || !idl)
		return cb_die("mkcap", "files", w);
	struct dtcap_map maps1[] = {
		{ 0x401000, 0x402000, 0x1000, ida, 5, "/usr/bin/app" },
		{ 0x7f0000002000, 0x7f0000004000, 0x2000, idl, 5, "/lib/libc.so.6" },
		{ 0x7fff00000000, 0x7fff00002000, 0, 0, 5, "[vdso]" },
		{ 0x10000000, 0x10010000, 0, 0, 7, "" },
	};
	/* After exec: the same app mapped elsewhere (as if PIE, bias 0 would
	 * be wrong here: same file, so the same hint), libc gone. */
	struct dtcap_map maps2[] = {
		{ 0x501000, 0x502000, 0x1000, ida, 5, "/usr/bin/app" },
	};
	struct dtcap_proc pr[] = {
		{ 0, 100, 1, "app", "/usr/bin/app", 4, maps1 },
		{ 0, 200, 1, "sh", "/bin/sh", 4, maps1 },
		{ 1500000000ULL, 200, 1, "app", "/usr/bin/app", 1, maps2 },
	};
	for (int i = 0; i < 3; i++)
		if (dtcap_put_proc(w, &pr[i]))
			return cb_die("mkcap", "proc", w);

	uint64_t ks[6][4] = {
		{ K(0x3010), K(0x2010), K(0x1010), 0 },		/* schedule<vfs_read<do_syscall_64 */
		{ M(0x1004), K(0x1020), 0, 0 },			/* mod_func<do_syscall_64 */
		{ M(0x0100), K(0x4010), 0, 0 },			/* testmod+0x100 */
		/* A call at the very end of vfs_read: the return address is
		 * schedule's first byte, the frame is vfs_read's. */
		{ M(0x1004), K(0x3000), K(0x1010), 0 },
		{ M(0x10020), 0xffffffff90000000ULL, 0, 0 },	/* othermod+0x20, 0xffffffff90000000 */
		{ K(0x2004), K(0x1004), 0, 0 },			/* truncated below */
	};
	unsigned kn[] = { 3, 2, 2, 3, 2, 2 };
	uint64_t us[][4] = {
		{ 0x401210, 0x401110, 0x401010, 0 },		/* work<main<_start */
		{ 0x7f0000003010, 0x401150, 0x401010, 0 },	/* read<main<_start */
		{ 0x7fff00000100, 0x401410, 0 , 0},		/* [vdso]+0x100<nosize */
		{ 0x10000040, 0x401900, 0x12345678, 0 },		/* 0x10000040<app+0x1900<0x12345678 */
		{ 0x501210, 0x501110, 0, 0 },			/* post-exec work<main */
	};
	unsigned un[] = { 3, 3, 2, 3, 2 };
	uint32_t kid[6], uid[5];
	for (int i = 0; i < 6; i++)
		if (!(kid[i] = dtcap_intern_stack(w, ks[i], kn[i], 1, i == 5)))
			return cb_die("mkcap", "stack", w);
	for (int i = 0; i < 5; i++)
		if (!(uid[i] = dtcap_intern_stack(w, us[i], un[i], 0, i == 3)))
			return cb_die("mkcap", "stack", w);
	uint32_t capp = dtcap_intern_comm(w, "app"), csh = dtcap_intern_comm(w, "sh");
	/* Not UTF-8, and XML/JSON specials: the SVG and JSON must stay valid. */
	uint32_t cweird = dtcap_intern_comm(w, "we\xffrd<&\"x>");
	if (!capp || !csh || !cweird)
		return cb_die("mkcap", "comm", w);

	uint64_t ts = h.start_ns;
	uint64_t nread[4] = { 0 };
	for (unsigned i = 0; i < nev; i++) {
		struct dtcap_event e = { 0 };
		ts += 1 + cb_rnd(2000000000ULL / nev * 2);
		e.ts = ts;
		e.cpu = cb_rnd(4);
		unsigned who = cb_rnd(3);	/* 0: app 100, 1: app thread 101, 2: pid 200 */
		e.pid = who == 2 ? 200 : 100;
		e.tid = who == 1 ? 101 : e.pid;
		e.comm = who == 2 ? (ts >= 1500000000ULL ? capp : csh) : capp;
		if (cb_rnd(who == 2 ? 5 : 50) == 0)
			e.comm = 0;
		else if (who == 0 && cb_rnd(40) == 0)
			e.comm = cweird;
		unsigned r = cb_rnd(10);
		e.probe = r < 6 ? 1 : r < 8 ? 5 : 2;
		unsigned kk = cb_rnd(7), uu = cb_rnd(6);
		e.kstack = kk < 6 ? kid[kk] : 0;
		/* after the exec, also the stack work<main had before it: the
		 * same addresses, other names (the old mapping is gone), so
		 * a sample counted under the wrong snapshot shows */
		if (e.pid == 200 && ts >= 1500000000ULL)
			e.ustack = uu < 2 ? uid[4] : uu == 2 ? uid[0] : 0;
		else
			e.ustack = uu < 4 ? uid[uu] : 0;
		if (!e.kstack && !e.ustack && cb_rnd(2))
			e.ustack = uid[0];
		if (e.probe == 2)
			e.nargs = 3, e.args[0] = 3, e.args[1] = 0x1000, e.args[2] = 4096;
		if (dtcap_put_event(w, &e))
			return cb_die("mkcap", "event", w);
		nread[e.cpu]++;
	}
	struct dtcap_count c[4] = { 0 }, rec = { 0 };
	for (int i = 0; i < 4; i++) {
		c[i].read = nread[i];
		c[i].dropped = i == 1 ? 7 : 0;
		c[i].produced = c[i].read + c[i].dropped;
		c[i].skipped = i;
	}
	rec.read = nev;
	if (dtcap_put_counters(w, ts + 1000, c, 4, &rec))
		return cb_die("mkcap", "counters", w);
	if (dtcap_close(w))
		return cb_die("mkcap", "close", NULL);
	return 0;
}
