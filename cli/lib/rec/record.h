/*
 * record.h - the recording loop of dtrec, reusable by dtsh.
 *
 * dtrec_record() opens a source (/dev/dt, or perf_event_open: source.h),
 * enables the probes, writes a .dtc capture
 * (host info, probe table, kallsyms/modules, process and ELF symbol
 * snapshots, events, counters) and returns when the duration elapses, the
 * command exits or *stop becomes non-zero.  The capture is finalized in
 * every case, including errors after it was created (disk full): a
 * partial capture still opens.  The capture is written under a temporary
 * name and takes o->output's name only once recording runs, so a failed
 * start leaves an existing file untouched.  Messages go to o->status prefixed with
 * o->prog; nothing here exits or installs signal handlers.
 */
#ifndef DT_RECORD_H
#define DT_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct dtrec_opts {
	const char	*prog;		/* message prefix, "dtrec" */
	const char	*output;	/* capture path */
	const char *const *probes;	/* specs, see dtp_resolve() */
	size_t		nprobes;
	int		kstack, ustack;	/* -k, -u.  Neither: timer probes get
					 * both, since a profile sample without
					 * a stack says little */
	uint64_t	duration_ns;	/* 0: until stop / command exit */
	char *const	*argv;		/* command to run, or NULL */
	uint32_t	bufsize;	/* per-CPU ring bytes; 0: kernel default */
	int		quiet;		/* no status line, no summary */
	int		level;		/* zstd level, 0: library default */
	volatile sig_atomic_t *stop;	/* may be NULL */
	FILE		*status;	/* NULL: stderr */
	const char	*cmdline;	/* stored in the capture's host info */
	const char	*device;	/* NULL: /dev/dt */
	const char	*source;	/* "dt", "perf"; NULL: dt if /dev/dt opens */
	const pid_t	*pids;		/* -p: record only these processes (and
					 * their children); NULL: all, or argv's */
	size_t		npids;
	const char	*comm;		/* --comm: only tasks of this comm (at
					 * most 15 bytes); NULL: any */
	const char	*cgroup;	/* --cgroup: only tasks in this cgroup v2
					 * directory or below it; NULL: any */
	uint64_t	flush_ns;	/* write the open block this often; 0: 1 s */
	int		sync;		/* fdatasync after every flush */
	int		ustack_mode;	/* DTSRC_USTACK_* (source.h); 0: auto */
	uint32_t	ustack_size;	/* stack bytes per sample; 0: default */
	/*
	 * Flight recorder (perf source): rings of this many bytes per CPU
	 * keep the newest events and nothing is written while recording; a
	 * capture of what they hold goes to OUTPUT.N.dtc (OUTPUT without its
	 * .dtc, N from 1, existing files skipped) whenever *dump changes,
	 * a trigger probe fires, and when recording ends.  0: off.
	 */
	uint32_t	flight;
	volatile sig_atomic_t *dump;	/* may be NULL */
	const char *const *triggers;	/* probe specs, see dtp_resolve() */
	size_t		ntriggers;
	const char	*trigger_filter;	/* for the tracepoint triggers: "ret < 0" */
	/*
	 * A trigger that fires often would fill the disk with dumps of the
	 * whole rings: a trigger dumps only dump_gap_ns after the previous
	 * dump, and no more than max_dumps captures are written in all (the
	 * one at the end included; SIGUSR2 obeys the count, not the gap).
	 * Triggers that fire without a dump are counted.  0: the defaults.
	 */
	uint64_t	dump_gap_ns;
	uint32_t	max_dumps;
	/* --offcpu: also the scheduler events of offcpu.h, with kernel and
	 * user stacks whatever -k/-u say; with targets, also the switches
	 * into a target and the wakeups of one (run by other tasks) */
	int		offcpu;
	/* --no-srcline: store no source lines or inline chains (SRCL) of
	 * the user pcs stacks hold, which dtrec otherwise reads from DWARF at
	 * the end of recording */
	int		no_srcline;
};
#define DTREC_DUMP_GAP_DEF	5000000000ULL	/* 5 s */
#define DTREC_MAX_DUMPS_DEF	10

struct dtrec_result {
	uint64_t	events;		/* written to the capture (flight: all dumps) */
	uint32_t	dumps;		/* flight: captures written */
	uint64_t	triggers_skipped;	/* flight: trigger firings without a dump */
	uint64_t	bytes;		/* capture size */
	uint64_t	raw_bytes;	/* read from the kernel */
	uint64_t	produced, dropped, skipped, recursive;
	uint64_t	elapsed_ns;
	int		cmd_status;	/* wait status of the command, -1: none */
	int		not_run;	/* 127: the command was not found, 126: not run */
	uint64_t	ustack_dwarf, ustack_dwarf_trunc, ustack_fp_behind;
};

/*
 * Record.  Returns 0 on success, 1 on any error (message already printed).
 * res may be NULL.
 */
int dtrec_record(const struct dtrec_opts *o, struct dtrec_result *res);

#endif /* DT_RECORD_H */
