// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_kptarget.c - not part of dt: a module for the vm-kernel tests only
 * (never installed).  It holds one function to put kprobes on in a module
 * the guest can unload, so that what dt.ko does with a probe whose code
 * went away (re-registering its kretprobe) is driven by a test.
 */
#include <linux/module.h>
#include <linux/kernel.h>

/* noinline and called through a pointer: it stays a function of its own */
static noinline int dt_kptarget_fn(int x)
{
	return x + 1;
}

static int (*volatile dt_kptarget_call)(int) = dt_kptarget_fn;

static int __init dt_kptarget_init(void)
{
	return dt_kptarget_call(-1);
}

static void __exit dt_kptarget_exit(void)
{
}

module_init(dt_kptarget_init);
module_exit(dt_kptarget_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("dt tests: a function to probe in an unloadable module");
