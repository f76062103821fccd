/*
 * uprobe.h - where user-space probes go in an ELF file: function symbols
 * as file offsets (for uprobe:PATH:SYMBOL), systemtap SDT notes (for
 * usdt:PATH:PROVIDER:NAME) and their argument specs, decoded from the
 * user registers and stack a perf sample copies.
 *
 * Offsets are file offsets, as the kernel's uprobe API takes them: an
 * address is mapped through the PT_LOAD program header that holds it.
 * Nothing here prints or exits; errors come back as one line in a caller
 * buffer, naming the file.
 */
#ifndef DT_UPROBE_H
#define DT_UPROBE_H

#include <stddef.h>
#include <stdint.h>

#define DTUP_ERRLEN	512
#define DTUP_MAXARGS	10	/* = DT_MAXARGS: SDT allows 12, the rest are dropped */

/* perf's x86-64 register numbers (asm/perf_regs.h) */
enum {
	DTUP_AX = 0, DTUP_BX, DTUP_CX, DTUP_DX, DTUP_SI, DTUP_DI, DTUP_BP, DTUP_SP,
	DTUP_IP, DTUP_FLAGS, DTUP_R8 = 16, DTUP_R9, DTUP_R10, DTUP_R11, DTUP_R12,
	DTUP_R13, DTUP_R14, DTUP_R15, DTUP_NREGS
};
/* rdi, rsi, rdx, rcx, r8, r9: the System V integer argument registers */
#define DTUP_ARGREGS_MASK	((1ULL << DTUP_DI) | (1ULL << DTUP_SI) | (1ULL << DTUP_DX) | \
				 (1ULL << DTUP_CX) | (1ULL << DTUP_R8) | (1ULL << DTUP_R9))

/* One function of a file. */
struct dtup_sym {
	const char	*name;		/* owned by the dtup_syms */
	uint64_t	addr, size;	/* st_value, st_size */
	uint64_t	offset;		/* file offset of addr */
};

struct dtup_syms {
	struct dtup_sym	*v;		/* sorted by name, one per name */
	size_t		n;
	char		*strs;		/* the names */
};

/*
 * The functions (STT_FUNC, defined, with a file offset) of the ELF file
 * at path: .symtab, then .dynsym names .symtab lacks.  0, or -1 with err
 * ("PATH: not an ELF file", "PATH: No such file or directory").  Free
 * with dtup_syms_free.
 */
int dtup_syms_read(const char *path, struct dtup_syms *out, char *err, size_t errlen);
void dtup_syms_free(struct dtup_syms *s);

/* How an SDT argument is fetched. */
#define DTUP_ARG_CONST	0	/* value */
#define DTUP_ARG_REG	1	/* reg */
#define DTUP_ARG_MEM	2	/* *(reg + value), when it falls in the stack copy */
#define DTUP_ARG_NONE	3	/* a form we cannot fetch (index, rip-relative): 0 */

struct dtup_arg {
	uint8_t		kind;		/* DTUP_ARG_* */
	uint8_t		size;		/* bytes: 1, 2, 4, 8 */
	uint8_t		sign;		/* sign-extend to 64 bits */
	int8_t		reg;		/* DTUP_* register; -1 none */
	uint8_t		shift;		/* 8 for %ah-style high bytes */
	int64_t		value;		/* constant or displacement */
};

/*
 * Parse an SDT argument string ("-4@%edi 8@-16(%rbp) 4@$5") into
 * args[0..*nargs).  Forms we cannot fetch become DTUP_ARG_NONE, not an
 * error; a string that is not SDT syntax at all is -1 with err.
 */
int dtup_parse_args(const char *spec, struct dtup_arg *args, unsigned *nargs,
		    char *err, size_t errlen);

/*
 * An argument's value from the user registers (regs[] indexed by DTUP_*,
 * have[] says which were copied) and the stack copy (stack, stacklen
 * bytes from the sampled sp).  *ok is 0 when it could not be fetched.
 */
uint64_t dtup_arg_value(const struct dtup_arg *a, const uint64_t *regs, uint64_t have_mask,
			const unsigned char *stack, uint64_t stacklen, int *ok);
/* The registers an argument needs, as a perf mask. */
uint64_t dtup_arg_regs(const struct dtup_arg *a);

/* One SDT note: a probe site. */
struct dtup_note {
	char		*provider, *name, *args;	/* owned by the dtup_notes */
	uint64_t	pc_offset;	/* file offset of the site */
	uint64_t	sem_offset;	/* file offset of the semaphore, 0: none */
};

struct dtup_notes {
	struct dtup_note *v;
	size_t		n;
};

/*
 * The .note.stapsdt notes of path, their addresses corrected by where
 * .stapsdt.base really is (prelink) and mapped to file offsets.  A file
 * without notes gives n == 0.  0, or -1 with err.
 */
int dtup_notes_read(const char *path, struct dtup_notes *out, char *err, size_t errlen);
void dtup_notes_free(struct dtup_notes *n);

/*
 * A library or program name without '/' ("libc.so.6"), looked up in the
 * usual library directories, then $PATH; an absolute path is kept.  The
 * result goes to buf.  0, or -1 with err.
 */
int dtup_find_file(const char *name, char *buf, size_t len, char *err, size_t errlen);

#endif /* DT_UPROBE_H */
