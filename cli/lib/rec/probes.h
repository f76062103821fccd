/*
 * probes.h - /dev/dt access and probe names, for dtrec and dtsh.
 *
 * Names are btrace(8)-style "provider:function:name".  Errors come back as
 * one line in a caller buffer (no program prefix: the caller adds
 * "dtrec: "), e.g. "/dev/dt: no such device: is the dt module loaded?
 * (see dt(4))".  Nothing here prints or exits.
 */
#ifndef DT_PROBES_H
#define DT_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "uprobe.h"

#define DTP_ERRLEN	512

/*
 * The capture format (dtcap.h) and the user probes (uprobe.h) keep their own
 * copies of dt.ko's limits so that they build without dt_abi.h; this is the
 * one place that sees all three, so a change on one side fails the build
 * here instead of cutting arguments, stacks or names at run time.
 */
_Static_assert(DTCAP_MAXARGS == DT_MAXARGS, "argument slots: dtcap.h and dt_abi.h differ");
_Static_assert(DTUP_MAXARGS == DT_MAXARGS, "argument slots: uprobe.h and dt_abi.h differ");
_Static_assert(DTCAP_MAXFRAMES == DT_MAXFRAMES, "stack depth: dtcap.h and dt_abi.h differ");
_Static_assert(DTCAP_COMMLEN == DT_COMMLEN, "comm length: dtcap.h and dt_abi.h differ");
_Static_assert(DTCAP_ARGNAMELEN == DT_ARGNAMELEN,
	       "argument name length: dtcap.h and dt_abi.h differ");
_Static_assert(DT_PROVLEN + DT_FUNCLEN + DT_NAMELEN <= DTCAP_PROBENAMELEN,
	       "a dt.ko probe's \"prov:func:name\" must fit DTCAP_PROBENAMELEN");
_Static_assert(DTCAP_MAXCPUS == 1 << 8 * sizeof(((struct dt_rec *)0)->dtr_cpu),
	       "DTCAP_MAXCPUS is the range of dt_rec's dtr_cpu");

struct dtp_dev;

/*
 * Open /dev/dt (path NULL) or another node, check DTIOCGVERSION against
 * DT_ABI_VERSION and fetch the probe list.  rw: open read-write (needed
 * to record; listing works read-only).  NULL with err filled on failure,
 * and errno: open(2)'s when the node could not be opened, else EPROTO.
 */
struct dtp_dev *dtp_open(const char *path, int rw, char *err, size_t errlen);
void dtp_close(struct dtp_dev *d);

/*
 * Open a recording source's probe catalog: "dt" (/dev/dt, or device),
 * "perf" (perf_event_open: the timer probes, every tracefs tracepoint as
 * syscall:X:entry|return and tracepoint:SYS:NAME, kprobes where the kernel
 * has a kprobe PMU), or NULL: dt when /dev/dt opens, else perf.  Mounts
 * tracefs when it is absent and we may.
 */
struct dtp_dev *dtp_open_source(const char *source, const char *device, int rw,
				char *err, size_t errlen);
#define DTP_DT		0
#define DTP_PERF	1
int dtp_kind(const struct dtp_dev *d);
/* DTP_PERF: the tracefs root ("" when tracefs is unavailable), else NULL. */
const char *dtp_tracefs(const struct dtp_dev *d);
/*
 * Why the catalog holds only the timer probes (perf without a readable
 * tracefs: "... is not readable by this user ..."), or NULL.
 */
const char *dtp_missing(const struct dtp_dev *d);
/*
 * DTP_PERF: the tracefs subsystem and event of probe id (kprobes: the
 * function and ""; timers: "" and "").  Strings live as long as d.
 */
int dtp_perf_event(const struct dtp_dev *d, uint32_t id, const char **sys, const char **ev);
int dtp_fd(const struct dtp_dev *d);	/* -1 for the perf source */
/*
 * The kernel lockdown mode in force ("integrity", "confidentiality"), or
 * NULL when there is none or it cannot be read: EPERM from dt.ko under
 * lockdown means lockdown, not a missing capability (dt(4)).
 */
const char *dtp_lockdown(void);

/*
 * A user-space probe of the perf catalog (uprobe:PATH:SYMBOL:entry|return,
 * usdt:PATH:PROVIDER:NAME): the file and the sites its events go to, one
 * uprobe per site.  Lives as long as d.
 */
#define DTP_MAXUSITES	512	/* sites per session: each is one uprobe per CPU */
struct dtp_usite {
	uint64_t	offset;		/* file offset of the probed instruction */
	uint64_t	refctr;		/* USDT semaphore's file offset; 0: none */
	unsigned	nargs;		/* USDT: the note's arguments */
	struct dtup_arg	args[DTUP_MAXARGS];
};
struct dtp_uprobe {
	char		*path;		/* absolute */
	int		usdt;		/* arguments from the sites' specs */
	int		ret;		/* a return probe: retval from rax */
	size_t		nsites;
	struct dtp_usite *sites;
	uint64_t	regs;		/* perf user registers the events copy */
	uint32_t	stack;		/* user stack bytes copied (USDT memory operands) */
};
/* The uprobe behind id, or NULL when id is not a user-space probe. */
const struct dtp_uprobe *dtp_uprobe(const struct dtp_dev *d, uint32_t id);
/* The full name of probe id ("uprobe:/bin/x:main:entry"), or NULL. */
const char *dtp_full_name(const struct dtp_dev *d, uint32_t id);

/* The probe table as the kernel listed it (plus kprobes created since). */
size_t dtp_count(const struct dtp_dev *d);
const struct dt_probe_info *dtp_at(const struct dtp_dev *d, size_t i);
const struct dt_probe_info *dtp_by_id(const struct dtp_dev *d, uint32_t id);
/* "provider:function:name" of p into buf (DTCAP_PROBENAMELEN). */
const char *dtp_name(const struct dt_probe_info *p, char *buf, size_t len);

/* DTIOCGARGS into a capture probe record (id, flags, name, args). */
int dtp_describe(struct dtp_dev *d, const struct dt_probe_info *p,
		 struct dtcap_probe *out, char *err, size_t errlen);

/* Print every probe whose name matches glob (NULL: all), one per line. */
size_t dtp_list(const struct dtp_dev *d, const char *glob, FILE *out);
/*
 * What `dtrec -l WORD` and dtsh's `probes WORD` match next when WORD
 * matched no name as a glob: a bare word (no * ? [) is looked for inside
 * the names, "*WORD*" in buf; NULL when WORD is a glob or too long.
 */
const char *dtp_word_glob(const char *word, char *buf, size_t len);
/*
 * Is spec a user-space probe name ("uprobe:..." or "usdt:...")?  Then
 * dtp_list_user lists, for "uprobe:PATH[:GLOB]" and "usdt:PATH[:GLOB]",
 * the probes the file PATH offers (every function, entry and return;
 * every SDT note) that match; 0 with *n, or -1 with err.
 */
int dtp_is_user(const char *spec);
int dtp_list_user(const char *glob, FILE *out, size_t *n, char *err, size_t errlen);

/* One probe to enable, as resolved from a user's spec. */
struct dtp_sel {
	uint32_t	id;
	uint16_t	flags;		/* DT_PF_* */
	uint64_t	period_ns;	/* timer probes: from the spec; else 0 */
};

/*
 * Resolve one spec into probes, appending to *sel (realloc'd, *nsel
 * updated); duplicates of probes already in *sel are skipped.
 *  - "profile:hz:997", "interval:hz:1": the provider's timer probe with
 *    period 1e9/N ns; units hz, s, ms, us, ns ("profile:ms:10").
 *  - globs over the kernel's names: "syscall:*:entry", "tracepoint:sched:*".
 *  - "kprobe:FUNC:entry|return": created on demand (DTIOCKPROBE).
 *  - "uprobe:PATH:SYMBOL[+OFF]:entry|return" and
 *    "usdt:PATH:PROVIDER:NAME", created on demand from the ELF file (both
 *    sources: the uprobe PMU, or DTIOCUPROBE); globs on SYMBOL, PROVIDER
 *    and NAME, at most DTP_MAXUSITES sites in all.
 * Unknown names fail with "unknown probe 'x': did you mean 'y'?".
 */
int dtp_resolve(struct dtp_dev *d, const char *spec, struct dtp_sel **sel,
		size_t *nsel, char *err, size_t errlen);

/* Fill err with the message for an errno of open/ioctl on /dev/dt. */
void dtp_strerror(int errnum, const char *what, char *err, size_t errlen);

#endif /* DT_PROBES_H */
