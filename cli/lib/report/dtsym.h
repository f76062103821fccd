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
 * The name of pc: "func" for a known symbol, "module+0xoff" (kernel
 * module or mapped file basename) when only the mapping is known, else
 * "0x<hex>".  kernel: pc is a kernel address; otherwise a user address of
 * pid as of time ts.  The string lives until dtsym_close().
 */
const char *dtsym_name(struct dtsym *s, uint64_t pc, int kernel,
		       uint32_t pid, uint64_t ts);

/* Where the name came from: "kernel", "module", "user", "unknown". */
const char *dtsym_origin(struct dtsym *s, uint64_t pc, int kernel,
			 uint32_t pid, uint64_t ts);

#endif /* DTSYM_H */
