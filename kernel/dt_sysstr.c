// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_sysstr.c - the path a system call names, copied from user memory at
 * its entry.  A syscall:NAME:entry event holds the six argument registers;
 * for a call whose first or second argument is a path (openat's filename,
 * execve's filename, ...) the record also carries the path's first
 * DT_SYSSTR_LEN - 1 bytes in slots 6..9, described as "argN_str" char[32],
 * since the pointer alone means nothing once the process has moved on.
 *
 * The copy runs in the sys_enter tracepoint, with preemption disabled: it
 * may not fault pages in, so dt_copy_user, page by page (a path
 * that ends before an unmapped page is still copied whole).  A path not
 * resident in memory is recorded empty.
 *
 * execve names its program twice: the path, and argv[0], what the caller
 * says the program is (a shell's name for it, python3 for a script's
 * interpreter, a login shell's "-bash").  Its three arguments leave the
 * slots of three registers free: argv[0]'s first DT_ARGV0_LEN - 1 bytes
 * and its length go there (dt_sysstr_argv0), the length counted on past
 * the copy so that a cut name says it was cut.  execveat's argv is its
 * third argument; its five leave no room, so its record keeps fd and
 * flags, the path and argv[0], and not the three user addresses.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/unistd.h>

#include "dt.h"

int dt_sysstr_arg(unsigned long nr)
{
	switch (nr) {
	case __NR_open: case __NR_creat: case __NR_execve: case __NR_stat:
	case __NR_lstat: case __NR_access: case __NR_unlink: case __NR_mkdir:
	case __NR_rmdir: case __NR_chdir: case __NR_chmod: case __NR_chown:
	case __NR_lchown: case __NR_truncate: case __NR_readlink:
	case __NR_rename: case __NR_link: case __NR_symlink: case __NR_mknod:
	case __NR_statfs: case __NR_chroot: case __NR_acct: case __NR_swapon:
	case __NR_swapoff: case __NR_uselib:
		return 0;
	case __NR_openat: case __NR_openat2: case __NR_execveat:
	case __NR_newfstatat: case __NR_statx: case __NR_faccessat:
	case __NR_faccessat2: case __NR_unlinkat: case __NR_mkdirat:
	case __NR_fchmodat: case __NR_fchownat: case __NR_readlinkat:
	case __NR_renameat: case __NR_renameat2: case __NR_linkat:
	case __NR_mknodat: case __NR_utimensat: case __NR_futimesat:
	case __NR_inotify_add_watch: case __NR_name_to_handle_at:
		return 1;
	}
	return -1;
}

/*
 * The NUL-terminated string at uaddr: its first size - 1 bytes into dst,
 * NUL-padded, and its length counted on up to scan bytes (reading into a
 * bounce buffer past the copy).  Returns the length, scan when it is at
 * least that long, -1 when it runs into memory not resident (what was
 * read before stays in dst).
 */
static long dt_ustr(unsigned long uaddr, char *dst, size_t size, size_t scan)
{
	char tmp[64];
	size_t done = 0, n;
	long len = (long)scan;
	const char *z;
	char *b;

	memset(dst, 0, size);
	while (done < scan) {
		n = min_t(size_t, scan - done,
			  PAGE_SIZE - ((uaddr + done) & ~PAGE_MASK));
		if (done < size - 1) {
			b = dst + done;
			n = min_t(size_t, n, size - 1 - done);
		} else {
			b = tmp;
			n = min_t(size_t, n, sizeof(tmp));
		}
		if (dt_copy_user(b, (const void __user *)(uaddr + done), n)) {
			/* a failed copy may have written part of the chunk */
			memset(b, 0, n);
			len = -1;
			break;
		}
		z = memchr(b, 0, n);
		if (z != NULL) {
			len = (long)(done + (size_t)(z - b));
			break;
		}
		done += n;
	}
	/* the bytes after the string are the process's, not the string's */
	n = strnlen(dst, size);
	memset(dst + n, 0, size - n);
	return len;
}

void dt_sysstr_copy(unsigned long uaddr, u64 *slots)
{
	BUILD_BUG_ON(DT_SYSSTR_LEN != 8 * DT_SYSSTR_SLOTS);
	dt_ustr(uaddr, (char *)slots, DT_SYSSTR_LEN, DT_SYSSTR_LEN - 1);
}

void dt_sysstr_argv0(unsigned long uargv, u64 *slots)
{
	unsigned long a0 = 0;
	long len = -1;

	BUILD_BUG_ON(DT_ARGV0_LEN != 8 * (DT_ARGV0_SLOTS - 1));
	/* a NULL argv is an empty one (the kernel warns and allows it) */
	if (uargv != 0 &&
	    dt_copy_user(&a0, (const void __user *)uargv, sizeof(a0)) != 0)
		a0 = 0;
	if (a0 != 0)
		len = dt_ustr(a0, (char *)slots, DT_ARGV0_LEN, DT_ARGV0_SCAN);
	else
		memset(slots, 0, DT_ARGV0_LEN);
	slots[DT_ARGV0_SLOTS - 1] = (u64)len;
}
