/*
 * insn.h - is an offset into a function an instruction boundary?
 *
 * A uprobe replaces the first byte at its address with int3: placed inside
 * an instruction it corrupts that instruction for every process mapping the
 * file (a shared library: every process on the machine).  The function's
 * machine code is decoded from its first byte with capstone, as perf probe
 * decodes it with its own decoder, and an offset that is not the start of
 * an instruction is refused.  x86-64 only, as the rest of the uprobe code.
 */
#ifndef DT_INSN_H
#define DT_INSN_H

#include <stddef.h>
#include <stdint.h>

/*
 * The function whose code starts at file offset start of the file at path,
 * size bytes long (0: unknown, decoded up to the offset), is probed at
 * +off.  0 when off is the start of an instruction; -1 with err naming the
 * instruction off falls into and the nearest valid offsets (spec, the
 * probe as the user wrote it, begins the message).
 */
int dtup_insn_boundary(const char *spec, const char *path, const char *func,
		       uint64_t start, uint64_t size, uint64_t off, char *err, size_t errlen);

#endif
