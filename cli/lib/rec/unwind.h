/*
 * unwind.h - user stacks from a register set and a copy of the user stack
 * (perf's PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER), unwound with
 * DWARF CFI (.eh_frame, .debug_frame, separate debug files under
 * /usr/lib/debug/.build-id) through elfutils' libdwfl, while recording, so
 * that only the program counters need to be stored.
 *
 * The unwinder keeps its own picture of each process's executable
 * mappings (fed from PERF_RECORD_MMAP2 or /proc/PID/maps).  ELF files are
 * opened once per dtunw and shared by every process that maps them (keyed
 * by build id, else by path, device and inode); each process gets one
 * libdwfl session built on the first sample and extended as mappings
 * arrive, so a repeated sample costs the CFI lookups only.
 *
 * Separate debug files are looked up under /usr/lib/debug, or under
 * $DT_DEBUG_DIR when that is set (read by the first dtunw_new).
 *
 * Threads: a dtunw is not thread-safe; give each worker thread its own
 * (each one then opens the files it needs itself).  Calls on different
 * dtunw objects may run in parallel.
 *
 * Strings and buffers passed in are copied or used only during the call.
 */
#ifndef DT_UNWIND_H
#define DT_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* perf's x86-64 user register numbers (asm/perf_regs.h, PERF_REG_X86_*). */
enum {
	DTUNW_REG_AX, DTUNW_REG_BX, DTUNW_REG_CX, DTUNW_REG_DX, DTUNW_REG_SI,
	DTUNW_REG_DI, DTUNW_REG_BP, DTUNW_REG_SP, DTUNW_REG_IP, DTUNW_REG_FLAGS,
	DTUNW_REG_CS, DTUNW_REG_SS, DTUNW_REG_DS, DTUNW_REG_ES, DTUNW_REG_FS,
	DTUNW_REG_GS, DTUNW_REG_R8, DTUNW_REG_R9, DTUNW_REG_R10, DTUNW_REG_R11,
	DTUNW_REG_R12, DTUNW_REG_R13, DTUNW_REG_R14, DTUNW_REG_R15,
};

/*
 * The registers to request (perf_event_attr.sample_regs_user): every
 * general-purpose register and ip.  The callee-saved ones (bx, bp,
 * r12-r15) and sp/ip are what unwinding past the first frame needs; the
 * others matter in the innermost frame only (a prologue that realigns
 * the stack keeps the CFA in r10, a PLT stub computes it from rsp and
 * rip), 72 bytes per sample that spare a truncated stack there.
 */
#define DTUNW_REGS_MASK							\
	((1ULL << DTUNW_REG_AX) | (1ULL << DTUNW_REG_BX) |		\
	 (1ULL << DTUNW_REG_CX) | (1ULL << DTUNW_REG_DX) |		\
	 (1ULL << DTUNW_REG_SI) | (1ULL << DTUNW_REG_DI) |		\
	 (1ULL << DTUNW_REG_BP) | (1ULL << DTUNW_REG_SP) |		\
	 (1ULL << DTUNW_REG_IP) | (0xffULL << DTUNW_REG_R8))

/* The least: enough for CFI unwinding outside prologues and PLT stubs. */
#define DTUNW_REGS_MASK_MIN						\
	((1ULL << DTUNW_REG_BX) | (1ULL << DTUNW_REG_BP) |		\
	 (1ULL << DTUNW_REG_SP) | (1ULL << DTUNW_REG_IP) |		\
	 (0xfULL << DTUNW_REG_R12))

struct dtunw;

/* NULL when out of memory. */
struct dtunw *dtunw_new(void);
void dtunw_free(struct dtunw *u);

/*
 * An executable mapping of pid: [start, start + len) maps path from file
 * offset pgoff.  Non-executable mappings need not be given.  path is
 * opened when a sample first needs it (through /proc/PID/root when
 * path is absolute and that exists, so containers work); "[vdso]" is
 * this machine's vDSO.  Mappings replace the overlapped parts of older
 * ones.  Returns 0, or -1 when out of memory (the mapping is then
 * unknown to the unwinder: its frames end stacks as truncated).
 */
int dtunw_map(struct dtunw *u, uint32_t pid, uint64_t start, uint64_t len,
	      uint64_t pgoff, const char *path);

/* pid exited or exec'd: drop what we know of its address space. */
void dtunw_forget(struct dtunw *u, uint32_t pid);

/* pid was forked by ppid: it starts with a copy of ppid's mappings. */
void dtunw_fork(struct dtunw *u, uint32_t ppid, uint32_t pid);

/*
 * Unwind one sample of pid.  regs holds the registers whose bits are set
 * in regs_mask, in increasing bit order (perf's sample layout); ip and sp
 * are required.  stack is a copy of stack_len bytes of the user stack
 * from regs' sp upwards.  Writes up to max program counters, innermost
 * (the sampled ip) first, callers' return addresses after it, and returns
 * how many (0 only when ip is missing or max is 0).
 *
 * An ip outside every mapping given with a readable ELF file (JIT code,
 * an unknown or exited process) gives that ip alone, truncated.
 *
 * *truncated (may be NULL) is 0 only when the chain reached a frame
 * whose CFI says it has no caller (_start, clone's thread entry): it is 1
 * when the stack copy ended, a return address was not in an executable
 * mapping or not after a call instruction, a file could not be read, or
 * max was reached.  A frame that fails those checks is not written, so a
 * corrupted stack yields a shorter stack marked truncated, not invented
 * callers.  Never reads outside stack[0, stack_len).
 */
int dtunw_unwind(struct dtunw *u, uint32_t pid, const uint64_t *regs,
		 uint64_t regs_mask, const void *stack, size_t stack_len,
		 uint64_t *pcs, unsigned max, int *truncated);

/* Counters since dtunw_new, for statistics and benchmarks. */
struct dtunw_stats {
	uint64_t	samples;	/* dtunw_unwind calls */
	uint64_t	complete;	/* ... that reached the program entry */
	uint64_t	fast;		/* ... served by the rule cache alone */
	uint64_t	frames;		/* pcs written */
	uint64_t	files;		/* ELF files opened */
	uint64_t	file_errors;	/* files that could not be opened */
};
void dtunw_get_stats(const struct dtunw *u, struct dtunw_stats *st);

/*
 * Most pcs have CFI of the simple kind (CFA = register + offset, registers
 * saved at CFA + offset); their rules are cached and such samples are
 * unwound without libdwfl, which gets the rest (expressions, signal
 * frames, .debug_frame).  on = 1 sends every sample to libdwfl: for tests
 * that compare the two, and for measuring.
 */
void dtunw_set_dwfl_only(struct dtunw *u, int on);

#endif /* DT_UNWIND_H */
