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
 * dt.ko's own description of an entry: *nregs registers arg0.. (six, or
 * as many as the call takes when copies use the others' slots), one slot
 * each, then for a call naming a path "argK_str", its copy
 * (kernel/dt_sysstr.c), then what else dt.ko copied under names of its
 * own (execve's argv0, argv0_len).  Returns K, -1 without a copy, -2 for
 * any other layout.
 */
static int
registers_only(const struct dtcap_probe *p, unsigned *nregs)
{
	char want[24];
	unsigned k, n = 0;

	while (n < p->nargs && n < 6) {
		snprintf(want, sizeof(want), "arg%u", n);
		if (strcmp(p->args[n].name, want))
			break;
		if (p->args[n].slot != n || p->args[n].nslots != 1)
			return -2;
		n++;
	}
	*nregs = n;
	if (n == 0)
		return -2;
	if (n == p->nargs)
		return n == 6 ? -1 : -2;
	if (sscanf(p->args[n].name, "arg%u_str", &k) != 1 || k >= n || p->args[n].slot != n)
		return -2;
	snprintf(want, sizeof(want), "arg%u_str", k);
	if (strcmp(p->args[n].name, want))
		return -2;
	/* six registers and a copy, or fewer and what dt.ko put in their place */
	if (n == 6 ? p->nargs != 7 : p->nargs == n + 1)
		return -2;
	return (int)k;
}

void
dtp_sysargs(struct dtcap_probe *out, const char *func)
{
	char ev[96], err[256];
	const char *root;
	struct dtt_format *fmt;
	unsigned nregs;

	int k = registers_only(out, &nregs);

	if (k < -1 || strlen(func) > 80)
		return;
	if ((root = dtt_root(err, sizeof(err))) == NULL)
		return;
	if ((fmt = malloc(sizeof(*fmt))) == NULL)
		return;
	snprintf(ev, sizeof(ev), "sys_enter_%s", func);
	/* field 0 is __syscall_nr; the arguments follow, 8 bytes each */
	if (dtt_read_format(root, "syscalls", ev, fmt, err, sizeof(err)) == 0 &&
	    fmt->nfields >= 1 && fmt->nfields - 1 <= nregs) {
		unsigned n = fmt->nfields - 1, ok = 1;
		for (unsigned i = 0; i < n; i++)
			ok &= fmt->f[i + 1].kind == DTT_SCALAR && fmt->f[i + 1].size == 8;
		/* fewer registers than six: the kernel's own count must be the call's */
		ok &= nregs == 6 || n == nregs;
		for (unsigned i = 0; ok && i < n; i++) {
			snprintf(out->args[i].name, DTCAP_ARGNAMELEN, "%.*s", DTCAP_ARGNAMELEN - 1,
				 fmt->f[i + 1].name);
			snprintf(out->args[i].type, DTCAP_ARGNAMELEN, "%.*s", DTCAP_ARGNAMELEN - 1,
				 fmt->f[i + 1].type);
		}
		if (ok && k >= 0 && (unsigned)k < n) {
			/* the path's copy after the arguments: "filename_str" */
			unsigned extra = out->nargs - nregs - 1;
			out->args[n] = out->args[nregs];
			snprintf(out->args[n].name, DTCAP_ARGNAMELEN, "%.*s_str",
				 DTCAP_ARGNAMELEN - 5, fmt->f[k + 1].name);
			/* then argv0 and the like, named as dt.ko names them */
			memmove(&out->args[n + 1], &out->args[nregs + 1], extra * sizeof(out->args[0]));
			out->nargs = n + 1 + extra;
		} else if (ok && k < 0) {
			out->nargs = n;
		}
	}
	free(fmt);
}
