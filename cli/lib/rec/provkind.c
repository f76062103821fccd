/*
 * provkind.c - the provider kinds' table; see provkind.h.
 */
#include "provkind.h"

#include <string.h>

#include "dt_abi.h"

static const struct dtp_kind_info kinds[] = {
	{ "", DTPK_OTHER, 0, "a provider this table does not know" },
	{ "profile", DTPK_PROFILE, DTPK_TIMER, "a timer on every CPU (profile:hz:N)" },
	{ "interval", DTPK_INTERVAL, DTPK_TIMER, "a timer firing once system-wide (interval:hz:N)" },
	{ "syscall", DTPK_SYSCALL, 0, "a system call's entry or return" },
	{ "tracepoint", DTPK_TRACEPOINT, 0, "a kernel tracepoint" },
	{ "kprobe", DTPK_KPROBE, DTPK_ONDEMAND, "a kernel function's entry or return" },
	{ "uprobe", DTPK_UPROBE, DTPK_USER | DTPK_ONDEMAND, "a user function's entry or return" },
	{ "usdt", DTPK_USDT, DTPK_USER | DTPK_ONDEMAND, "a user-level static probe (SDT note)" },
	{ "proc", DTPK_PROC, 0, "dt.ko's process events (fork, exec, exit, mmap)" },
};

/* the table is indexed by kind */
_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == DTPK_PROC + 1, "one entry per kind, in order");

enum dtp_kind
dtp_kind_of(const char *prov)
{
	for (size_t i = 1; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncmp(prov, kinds[i].name, DT_PROVLEN) == 0)
			return kinds[i].kind;
	return DTPK_OTHER;
}

const struct dtp_kind_info *
dtp_kind_info(enum dtp_kind k)
{
	if ((size_t)k >= sizeof(kinds) / sizeof(kinds[0]))
		k = DTPK_OTHER;
	return &kinds[k];
}

const char *
dtp_kind_name(enum dtp_kind k)
{
	return dtp_kind_info(k)->name;
}

unsigned
dtp_kind_flags(enum dtp_kind k)
{
	return dtp_kind_info(k)->flags;
}
