/*
 * record_int.h - what the recording session's files share (record.c the
 * session, snapshots.c the process snapshots, flight.c the flight
 * recorder, spawn.c the command): struct rec and their calls into each
 * other.  Only they include it.
 */
#ifndef DT_RECORD_INT_H
#define DT_RECORD_INT_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dt_abi.h"
#include "dt_htab.h"
#include "dtcap.h"
#include "machine.h"
#include "record.h"
#include "source.h"
#include "srcline.h"
#include "targets.h"

/* Large reads: one syscall per megabytes of records keeps up with TCG. */
#define READBUF		(4U << 20)
#define STATUS_NS	500000000ULL
#define COUNTERS_NS	1000000000ULL
#define POLL_MS		100
#define PAUSE_MS	50
#define BACKLOG		(256U << 10)
#define LAST_MAX	(64U << 20)	/* bytes of /proc maps kept for JIT maps */

/*
 * A map u32 -> slot: per thread, the comm cache (record.c); per process,
 * what the capture holds of it (snapshots.c).
 */
struct tslot {
	uint32_t	key;		/* tid or pid */
	uint32_t	comm_id;	/* comm cache: interned id of comm */
	char		comm[DT_COMMLEN];
	/*
	 * The last snapshot while files of it are stored without symbols
	 * (no stored stack has reached them yet): a pc in one of them
	 * stores it again with the file's.  Names and exe owned.
	 */
	struct dtcap_proc sp;
	struct dtcap_map *smaps;
	int		spending;
	/* user stack ids checked against these maps, reaching none of the
	 * files that wait (by id % SCHECKED): a busy process switches
	 * between a few stacks, and each check walks every mapping */
#define SCHECKED	16
	uint32_t	schecked[SCHECKED];
	/* the last snapshot read from /proc (mv points into text): stored
	 * again with a JIT map that appears once the process is gone */
	struct dtcap_proc last;
	char		*last_text;
	size_t		last_bytes;
};
struct tmap {
	struct tslot	*v;		/* in order of first sight; moves as it grows */
	size_t		cap, n;
	struct dt_htab	ix;		/* key -> index in v */
};

struct rec {
	const struct dtrec_opts *o;
	FILE		*st;
	struct dtcap_writer *w;
	struct dtsrc	*src;
	struct dtp_dev	*dev;		/* src's catalog */
	struct elfsyms_cache *ec;
	struct jitmap_cache *jc;	/* perf maps of JIT code stored so far */
	struct srcl_set	*srcl;		/* user pcs of stored stacks, to resolve; NULL:
					 * --no-srcline or a flight recording */
	uint32_t	ustack_max;	/* user stack ids whose pcs srcl has */
	uint64_t	srcl_bytes;	/* of the capture, source lines (at the end) */
	struct srcl_stats srcl_st;
	struct tmap	comms, procs;
	struct dtm	*m;		/* the processes recorded (machine.h) */
	uint32_t	ncpus;
	struct dtcap_count *counts;
	uint64_t	nread, raw_bytes, nbad, nlost;
	uint64_t	base_bytes;	/* capture size before the first event */
	uint64_t	sym_bytes;	/* of the capture, symbol tables (at the end) */
	uint64_t	last_bytes;	/* held by tslot.last of every process */
	struct kused	*kused;		/* kallsyms, written as far as used */
	uint32_t	kstack_max;	/* kernel stack ids marked in kused */
	int		werr;		/* writer failed: stop writing */
	int		ustack_nofp;	/* [I] dtsrc_cfg's: copies without a walk */
	char		ustack_how[300];	/* auto: which walk user stacks got, why */
	int		tty;
	struct dtrec_targets tg;	/* -p: ends recording when all exited */
	pid_t		fg;		/* the terminal was given to the command: our group */
	struct sigaction ttou;		/* SIGTTOU's action before the terminal was given */
	int		not_run;	/* 126/127: the command could not be run */
};

/* record.c */
void rec_msg(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t rec_clock_ns(struct rec *r);
/* the per-CPU counters summed into *t */
void rec_sum_counts(const struct rec *r, struct dtcap_count *t);
ssize_t rec_drain_once(struct rec *r, char *buf);
int rec_put_counters(struct rec *r);
int rec_put_kused(struct rec *r);
void rec_fill_host(struct rec *r, struct dtcap_host *h);
int rec_write_metadata(struct rec *r, const struct dtp_sel *sel, size_t nsel,
		       const char *ksyms, size_t ksymslen, const char *mods, size_t modslen);

/* snapshots.c */
struct tslot *rec_tmap_get(struct tmap *m, uint32_t key, int *isnew);
void rec_tmap_free(struct tmap *m);
/* the machine's subscriber: a snapshot of the process that changed */
void rec_snap_changed(void *arg, const struct dtm_change *c);
void rec_reach_files(struct rec *r, const struct dt_rec *d, uint32_t ustack);
void rec_srcl_stack(struct rec *r, const struct dt_rec *d);
void rec_jit_final(struct rec *r);

/* spawn.c */
int rec_runnable(struct rec *r, const char *cmd);
pid_t rec_spawn(struct rec *r, char *const *argv, int *go_fd, int *err_fd);
int rec_release_child(struct rec *r, int *go_fd, int err_fd, pid_t *child, int *cmd_status);
void rec_take_terminal(struct rec *r);
void rec_reap(struct rec *r, pid_t child, int *status);

/* flight.c */
int rec_flight_loop(struct rec *r, const struct dtp_sel *sel, size_t nsel, const char *ksyms,
		    size_t ksymslen, const char *mods, size_t modslen, char *buf, pid_t *child,
		    int *cmd_status, struct dtrec_result *res);

#endif /* DT_RECORD_INT_H */
