/*
 * jitdump.h - the jitdump files JIT compilers write for perf inject --jit
 * (jit-PID.dump, mapped executable by the process so that perf sees
 * where it is; node --perf-prof, the JVM's perf agents): the code loads
 * and moves it records, as symbols at runtime addresses.
 */
#ifndef DT_JITDUMP_H
#define DT_JITDUMP_H

#include <stddef.h>
#include <sys/types.h>

#include "dtcap.h"

/* Records read from one dump at most (each is a code load or move). */
#define JITDUMP_MAX_RECORDS	(4U << 20)

/*
 * The code regions of the dump open at fd, as it stands now (a record
 * cut by a writer still appending ends the read), in record order: a
 * load adds its region, a move places the region of its code index
 * anew.  Sorted by address, a later record for the same start winning.
 * The names point into *names; the caller frees it and *syms.  0, or -1
 * with err saying why (not a jitdump, another byte order, out of memory).
 */
int jitdump_read(int fd, struct dtcap_sym **syms, size_t *nsyms, char **names, char *err,
		 size_t errlen);

#endif /* DT_JITDUMP_H */
