/*
 * sysargs.h - a system call's argument names and C types for the dt
 * source, which describes syscall entries as arg0..arg5 of type long.
 */
#ifndef DT_SYSARGS_H
#define DT_SYSARGS_H

#include "dtcap.h"

/*
 * Name out's arguments (a syscall entry described by dt.ko: six register
 * slots arg0..arg5, and argK_str, the copy of a path argument K; or, for
 * execve, its three registers, the copy, argv0 and argv0_len; for
 * execveat, arg0 and arg4, the copy, argv0 and argv0_len) after
 * tracefs's syscalls/sys_enter_FUNC/format, keep only as many as the call
 * takes, and name the copy after its argument ("filename_str").  dt.ko stores the registers in
 * argument order, one slot each, so the slots stay.  Without tracefs or
 * that event, or for any other layout, out is left as it is.
 */
void dtp_sysargs(struct dtcap_probe *out, const char *func);

#endif
