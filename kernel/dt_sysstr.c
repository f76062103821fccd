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

void dt_sysstr_copy(unsigned long uaddr, u64 *slots)
{
	char *dst = (char *)slots;
	size_t done = 0, want = DT_SYSSTR_LEN - 1, n;

	BUILD_BUG_ON(DT_SYSSTR_LEN != 8 * DT_SYSSTR_SLOTS);
	memset(dst, 0, DT_SYSSTR_LEN);
	while (done < want) {
		n = min_t(size_t, want - done,
			  PAGE_SIZE - ((uaddr + done) & ~PAGE_MASK));
		if (dt_copy_user(dst + done,
				 (const void __user *)(uaddr + done), n)) {
			/* a failed copy may have written part of the chunk */
			memset(dst + done, 0, n);
			break;
		}
		if (memchr(dst + done, 0, n))
			break;
		done += n;
	}
	/* the bytes after the path are the process's, not the path's */
	n = strnlen(dst, DT_SYSSTR_LEN);
	memset(dst + n, 0, DT_SYSSTR_LEN - n);
}
