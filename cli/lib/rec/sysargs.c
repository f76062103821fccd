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
 * dt.ko's own description of an entry: arg0..arg5, one slot each, and for
 * a call naming a path "argK_str", its copy (kernel/dt_sysstr.c).  Returns
 * K, 6 without the copy, or -1 for any other layout.
 */
static int
registers_only(const struct dtcap_probe *p)
{
	char want[16];
	unsigned k = 6;

	if (p->nargs != 6 && p->nargs != 7)
		return -1;
	for (unsigned i = 0; i < 6; i++) {
		snprintf(want, sizeof(want), "arg%u", i);
		if (strcmp(p->args[i].name, want) || p->args[i].slot != i ||
		    p->args[i].nslots != 1)
			return -1;
	}
	if (p->nargs == 7) {
		if (sscanf(p->args[6].name, "arg%u_str", &k) != 1 || k >= 6 ||
		    p->args[6].slot != 6)
			return -1;
		snprintf(want, sizeof(want), "arg%u_str", k);
		if (strcmp(p->args[6].name, want))
			return -1;
	}
	return (int)k;
}

void
dtp_sysargs(struct dtcap_probe *out, const char *func)
{
	char ev[96], err[256];
	const char *root;
	struct dtt_format *fmt;

	int k = registers_only(out);

	if (k < 0 || strlen(func) > 80)
		return;
	if ((root = dtt_root(err, sizeof(err))) == NULL)
		return;
	if ((fmt = malloc(sizeof(*fmt))) == NULL)
		return;
	snprintf(ev, sizeof(ev), "sys_enter_%s", func);
	/* field 0 is __syscall_nr; the arguments follow, 8 bytes each */
	if (dtt_read_format(root, "syscalls", ev, fmt, err, sizeof(err)) == 0 &&
	    fmt->nfields >= 1 && fmt->nfields - 1 <= 6) {
		unsigned n = fmt->nfields - 1, ok = 1;
		for (unsigned i = 0; i < n; i++)
			ok &= fmt->f[i + 1].kind == DTT_SCALAR && fmt->f[i + 1].size == 8;
		for (unsigned i = 0; ok && i < n; i++) {
			snprintf(out->args[i].name, DTCAP_ARGNAMELEN, "%.*s", DTCAP_ARGNAMELEN - 1,
				 fmt->f[i + 1].name);
			snprintf(out->args[i].type, DTCAP_ARGNAMELEN, "%.*s", DTCAP_ARGNAMELEN - 1,
				 fmt->f[i + 1].type);
		}
		if (ok && k < 6 && (unsigned)k < n) {
			/* the path's copy after the arguments: "filename_str" */
			out->args[n] = out->args[6];
			snprintf(out->args[n].name, DTCAP_ARGNAMELEN, "%.*s_str",
				 DTCAP_ARGNAMELEN - 5, fmt->f[k + 1].name);
			out->nargs = n + 1;
		} else if (ok && k == 6) {
			out->nargs = n;
		}
	}
	free(fmt);
}
