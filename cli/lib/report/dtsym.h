/*
 * dtsym.h - name the frames of a capture offline, from the capture alone:
 * kernel frames from its kallsyms/modules snapshot, user frames from the
 * ELF symbol tables it carries for every mapped file.
 */
#ifndef DTSYM_H
#define DTSYM_H

#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"

struct dtsym;

#include <signal.h>

/* Index the capture's symbol snapshots once.  NULL only on ENOMEM. */
struct dtsym *dtsym_open(const struct dtcap_reader *r);
/* The same, stopped when *cancel turns non-zero (a SIGINT handler's flag;
 * polled every few thousand lines): NULL with errno EINTR then, or ENOMEM. */
struct dtsym *dtsym_open_cancel(const struct dtcap_reader *r,
				volatile sig_atomic_t *cancel);
void dtsym_close(struct dtsym *s);

/*
 * The name of pc: "func" for a known symbol (demangled, see below), "module+0xoff" (kernel
 * module or mapped file basename) when only the mapping is known, else
 * "0x<hex>".  kernel: pc is a kernel address; otherwise a user address of
 * pid as of time ts.  The string lives until dtsym_close().
 */
const char *dtsym_name(struct dtsym *s, uint64_t pc, int kernel,
		       uint32_t pid, uint64_t ts);

/*
 * The same pc's name as its symbol table spells it (mangled C++, Rust or
 * D names stay mangled), whatever dtsym_demangle says.  Same lifetime.
 */
const char *dtsym_raw_name(struct dtsym *s, uint64_t pc, int kernel,
			   uint32_t pid, uint64_t ts);

/*
 * Whether dtsym_name() demangles (C++, Rust, D, as c++filt prints them;
 * demangle.h): 1 by default, 0 after a command's --no-demangle.  Process
 * wide, read at each call: dtreport runs one command, dtsh sets it back
 * to 1 before each command it runs.
 */
extern int dtsym_demangle;

/*
 * The object pc lies in, as perf names it: "[kernel.kallsyms]", "[mod]"
 * for a kernel module, the mapped file's basename ("libc.so.6",
 * "[vdso]"), else "[unknown]".  Same lifetime as dtsym_name()'s strings.
 */
const char *dtsym_dso(struct dtsym *s, uint64_t pc, int kernel, uint32_t pid,
		      uint64_t ts);

/*
 * Source line and inlined calls of a user pc of pid at ts, as the capture
 * stores them (SRCL; dtrec resolved the innermost pc of each stack as is
 * and return addresses at pc - 1: pass the same), or NULL.
 */
const struct dtcap_srcline *dtsym_srcline(struct dtsym *s, uint64_t pc, int kernel,
					  uint32_t pid, uint64_t ts);

/*
 * The frame name of a function DWARF names (a srcline frame's func):
 * demangled unless dtsym_demangle is 0, with " (inlined)" after it when
 * inlined is set.  Same lifetime as dtsym_name()'s strings; NULL on ENOMEM.
 */
const char *dtsym_func_name(struct dtsym *s, const char *func, int inlined);

/*
 * Where user pc of pid at ts lies: its capture file (*f), the file virtual
 * address (*vaddr) and the symbol that covers it (*sym, NULL if none, as
 * dtsym_name finds it).  0, or -1 when no stored file maps pc.
 */
int dtsym_locate(struct dtsym *s, uint64_t pc, uint32_t pid, uint64_t ts,
		 const struct dtcap_file **f, uint64_t *vaddr, const struct dtcap_sym **sym);

/*
 * What the SQL frames table and its export say of frame depth of a stack
 * (pc; return addresses looked up at pc - 1): 1 and the source file and
 * line, and in *inlined the inlined calls there, outermost first, ';'
 * between (as folded stacks read: "name;inlined"; demangled as
 * dtsym_name), or NULL when there is none; 0 when the capture has no
 * source line there.  Strings live until dtsym_close().
 */
int dtsym_frame_src(struct dtsym *s, uint64_t pc, unsigned depth, int kernel, uint32_t pid,
		    uint64_t ts, const char **file, uint32_t *line, const char **inlined);

/*
 * Whether reports show inlined calls as frames of their own (1, the
 * default) or fold them into the function they were inlined into (0,
 * --no-inline).  Process wide, as dtsym_demangle.
 */
extern int dtsym_inline;

/* Where the name came from: "kernel", "module", "user", "unknown". */
const char *dtsym_origin(struct dtsym *s, uint64_t pc, int kernel,
			 uint32_t pid, uint64_t ts);

#endif /* DTSYM_H */
