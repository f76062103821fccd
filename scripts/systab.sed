# systab.sed - the one generator of the syscall tables (number -> name):
# `sed -n -f scripts/systab.sed` turns the `#define __NR_NAME NUMBER` lines
# of <asm/unistd.h> (dt.ko: the kernel headers' asm/unistd_64.h; the perf
# source: what the compiler's own header defines) into DT_SYSCALL(NUMBER,
# NAME) lines.  __NR_syscalls is the table's size, not a system call.
/^#define __NR_syscalls[[:space:]]/d
s/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$/DT_SYSCALL(\2, \1)/p
