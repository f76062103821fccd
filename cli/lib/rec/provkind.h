/*
 * provkind.h - the provider kinds of the probe catalog as data: the one
 * place that knows the provider names ("syscall", "kprobe", ...) and what
 * each kind is, so that the catalog (probes.c) and the perf source ask a
 * probe's kind instead of comparing its provider string.
 */
#ifndef DT_PROVKIND_H
#define DT_PROVKIND_H

enum dtp_kind {
	DTPK_OTHER,		/* a provider this table does not know */
	DTPK_PROFILE,		/* profile:hz:N, sampling on every CPU */
	DTPK_INTERVAL,		/* interval:hz:N, one firing system-wide */
	DTPK_SYSCALL,		/* syscall:NAME:entry|return */
	DTPK_TRACEPOINT,	/* tracepoint:SYS:EVENT */
	DTPK_KPROBE,		/* kprobe:FUNC:entry|return */
	DTPK_UPROBE,		/* uprobe:PATH:SYMBOL */
	DTPK_USDT,		/* usdt:PATH:PROVIDER:NAME */
	DTPK_PROC,		/* dt.ko's process events */
};

/* What a kind is. */
#define DTPK_TIMER	0x1	/* fires on a clock: no arguments, a period */
#define DTPK_USER	0x2	/* in user code: resolved from a file's symbols */
#define DTPK_ONDEMAND	0x4	/* entered in the catalog when a spec names it */

struct dtp_kind_info {
	const char	*name;		/* the provider part of a probe's name */
	enum dtp_kind	kind;
	unsigned	flags;		/* DTPK_TIMER ... */
	const char	*what;		/* a line for humans */
};

/* The kind of provider prov (at most DT_PROVLEN bytes read), DTPK_OTHER
 * for none known. */
enum dtp_kind dtp_kind_of(const char *prov);

/* The table's entry of kind k (DTPK_OTHER's: name ""). */
const struct dtp_kind_info *dtp_kind_info(enum dtp_kind k);

/* Shorthands. */
const char *dtp_kind_name(enum dtp_kind k);
unsigned dtp_kind_flags(enum dtp_kind k);

#endif /* DT_PROVKIND_H */
