/*
 * sysargs.c - a dt.ko syscall entry's arguments named as the kernel names
 * them.  Without this, openat's dfd would be "arg0, long" in a dt capture
 * and AT_FDCWD read as 4294967196; with it the capture says "dfd, int",
 * as a perf capture does, and dt.ko's copy of the path is "filename_str".
 * See sysargs.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysargs.h"
#include "tracefs.h"

/*
 * Which register dt.ko's name for an argument stands for: "argK" (one
 * slot: the register itself) and "argK_str" (*copy set: its copy,
 * kernel/dt_sysstr.c) give K; names of dt.ko's own (execve's argv0,
 * argv0_len) give -1, -2 a name that looks like neither.
 */
static int
reg_of(const char *name, int *copy)
{
	unsigned k;
	int end = 0;

	*copy = 0;
	if (strncmp(name, "arg", 3) != 0 || name[3] < '0' || name[3] > '9')
		return -1;
	if (sscanf(name, "arg%u%n", &k, &end) == 1 && name[end] == '\0' && k < 6)
		return (int)k;
	if (sscanf(name, "arg%u_str%n", &k, &end) == 1 && name[end] == '\0' && k < 6) {
		*copy = 1;
		return (int)k;
	}
	return -2;
}

void
dtp_sysargs(struct dtcap_probe *out, const char *func)
{
	char ev[96], err[256];
	const char *root;
	struct dtt_format *fmt;
	unsigned nregs = 0, top = 0, ncopies = 0, n, ok = 1;
	int copy;

	/*
	 * dt.ko's description: registers named argK, one slot each (all six,
	 * or when its copies need their slots only those that still mean
	 * something: execveat keeps fd and flags), at most one copy of a path
	 * argument, and what else it copied under names of its own.
	 */
	for (uint32_t i = 0; i < out->nargs; i++) {
		int k = reg_of(out->args[i].name, &copy);
		if (k == -2)
			return;
		if (k < 0)
			continue;
		if (copy) {
			ncopies++;
		} else {
			if (out->args[i].nslots != 1)
				return;
			nregs++;
		}
		if ((unsigned)k + 1 > top)
			top = (unsigned)k + 1;
	}
	if (nregs == 0 || ncopies > 1 || strlen(func) > 80)
		return;
	if ((root = dtt_root(err, sizeof(err))) == NULL)
		return;
	if ((fmt = malloc(sizeof(*fmt))) == NULL)
		return;
	snprintf(ev, sizeof(ev), "sys_enter_%s", func);
	/* field 0 is __syscall_nr; the arguments follow, 8 bytes each */
	if (dtt_read_format(root, "syscalls", ev, fmt, err, sizeof(err)) != 0 || fmt->nfields < 1 ||
	    fmt->nfields - 1 > 6) {
		free(fmt);
		return;
	}
	n = fmt->nfields - 1;
	for (unsigned i = 0; i < n; i++)
		ok &= fmt->f[i + 1].kind == DTT_SCALAR && fmt->f[i + 1].size == 8;
	/*
	 * Six registers are every call's, the unused ones dropped here; fewer
	 * were chosen by dt.ko for this call, which must then be the call
	 * tracefs describes (its last argument the last register kept).
	 */
	if (nregs < 6)
		ok &= top == n;
	for (uint32_t i = 0; ok && i < out->nargs; i++) {
		int k = reg_of(out->args[i].name, &copy);
		ok &= k < 0 || (unsigned)k < n || (!copy && nregs == 6);
	}
	if (ok) {
		uint32_t w = 0;
		for (uint32_t i = 0; i < out->nargs; i++) {
			int k = reg_of(out->args[i].name, &copy);
			if (k >= 0 && (unsigned)k >= n)
				continue;	/* a register the call does not take */
			out->args[w] = out->args[i];
			if (k >= 0 && copy) {
				/* "filename_str" */
				snprintf(out->args[w].name, DTCAP_ARGNAMELEN, "%.*s_str",
					 DTCAP_ARGNAMELEN - 5, fmt->f[k + 1].name);
			} else if (k >= 0) {
				snprintf(out->args[w].name, DTCAP_ARGNAMELEN, "%.*s",
					 DTCAP_ARGNAMELEN - 1, fmt->f[k + 1].name);
				snprintf(out->args[w].type, DTCAP_ARGNAMELEN, "%.*s",
					 DTCAP_ARGNAMELEN - 1, fmt->f[k + 1].type);
			}
			w++;
		}
		out->nargs = w;
	}
	free(fmt);
}
