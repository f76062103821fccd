/*
 * disasm.h - a sampled function's instructions, disassembled with
 * capstone from the ELF file on disk, when it is the build the capture
 * names (captures store symbols and line numbers, never code).
 */
#ifndef DT_DISASM_H
#define DT_DISASM_H

#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"

struct rpt_insn {
	uint64_t	addr;		/* file virtual address */
	char		text[160];	/* "mnemonic operands" */
};

/*
 * The instructions of [addr, addr + size) of file f, read from f->path:
 * a malloc'd array and its length in *n, or NULL with the reason in err
 * (the file is gone, is another build, is not x86-64, ...).  At most
 * 65536 instructions.
 */
struct rpt_insn *rpt_disasm(const struct dtcap_file *f, uint64_t addr, uint64_t size,
			    size_t *n, char *err, size_t errlen);

#endif
