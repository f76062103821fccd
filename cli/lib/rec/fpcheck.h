/*
 * fpcheck.h - whether a program was built with frame pointers, for
 * --user-stacks auto: a frame-pointer walk through code built without
 * them ends after a frame or two, so auto copies stacks for every probe
 * of such a program where the source can.
 */
#ifndef DT_FPCHECK_H
#define DT_FPCHECK_H

#include <stddef.h>

/*
 * The file cmd runs: cmd itself when it holds a '/', else the first
 * executable of that name on $PATH.  0, or -1 if none.
 */
int fpcheck_which(const char *cmd, char *out, size_t len);

/*
 * 1 when the ELF file at path was built with frame pointers (most of its
 * functions start by saving rbp and setting it from rsp), 0 when it was
 * not, -1 when it cannot tell (unreadable, not x86-64, no code).
 */
int fpcheck_file(const char *path);

#endif /* DT_FPCHECK_H */
