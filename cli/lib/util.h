/*
 * util.h - small helpers shared by dtrec, dtreport and dtsh: durations,
 * human-readable sizes and rates, "did you mean" suggestions, globs and
 * whole-file reads, safe output files.  Nothing here exits, and nothing
 * prints but the note of a stale temporary file removed (dtu_out_sweep).
 */
#ifndef DT_UTIL_H
#define DT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dt_utf8.h"

/*
 * Durations and times: one grammar for every tool (dtreport(1) "TIMES AND
 * DURATIONS"; dtrec(8) and dtsh(1) point there).
 *
 * A duration is a decimal number with an optional fraction and an optional
 * unit: ns, us, ms, s (sec), m (min), h; no unit means seconds.  "10s",
 * "500ms", "1.5", ".5", "2m", "250us".  No sign, exponent, space or
 * compound ("1h30m").  dtu_parse_duration: 0 with *ns set, -1 on anything
 * else (empty, negative, trailing junk, overflow).
 *
 * A time is a duration after the recording's start, or with a leading '@'
 * an absolute timestamp on the capture's clock (CLOCK_MONOTONIC, the unit
 * of the SQL ts column): "@86400.25", "@86400250000000ns".
 * dtu_parse_time: 0 with *ns and *absolute set, or -1.
 */
int dtu_parse_duration(const char *s, uint64_t *ns);
int dtu_parse_time(const char *s, uint64_t *ns, int *absolute);

/* "4096", "64k", "1M", "2MiB", "1g" (powers of 1024).  0 or -1. */
int dtu_parse_size(const char *s, uint64_t *bytes);

/* "812 B", "1.4 KiB", "33.0 MiB" into buf (>= 16 bytes); returns buf. */
const char *dtu_human_size(uint64_t bytes, char *buf, size_t len);
/* "950", "12.3k", "4.56M": counts and rates, into buf (>= 16 bytes). */
const char *dtu_human_count(double n, char *buf, size_t len);
/* "1.25s", "340ms", "2m05s" into buf (>= 16 bytes). */
const char *dtu_human_duration(uint64_t ns, char *buf, size_t len);

/* Levenshtein distance (bytes); sizes beyond 255 count as far apart. */
unsigned dtu_edit_distance(const char *a, const char *b);

/*
 * "Did you mean": the up to max candidates closest to name with distance
 * <= maxdist (0: a default that grows with the length of name), best first;
 * stores pointers into cands in out and returns how many.
 */
size_t dtu_suggest(const char *name, const char *const *cands, size_t ncands,
		   unsigned maxdist, const char **out, size_t max);

/* fnmatch(3) glob: 1 on match.  dtu_is_glob: does s contain * ? or [. */
int dtu_glob_match(const char *pattern, const char *s);
int dtu_is_glob(const char *s);

/*
 * Read a whole file, including /proc files whose st_size is 0.  Returns a
 * malloc'd NUL-terminated buffer (length in *len, may be NULL) or NULL
 * with errno set.
 */
char *dtu_read_file(const char *path, size_t *len);

/* The tree's version (the VERSION file), for every tool's --version. */
const char *dtu_version(void);

/* CLOCK_MONOTONIC in ns (dt.ko's dtr_ts is local_clock(): the sources' clock op). */
uint64_t dtu_now_ns(void);

/*
 * Ask the kernel for the pages of [p, p + len) at once (whole pages
 * inside it; MADV_POPULATE_WRITE), before a large new array is written
 * through: one call instead of a fault a page, which halved the time the
 * pairing spent taking its spans' pages.  A hint: where the kernel
 * refuses (before 5.14), the pages come by faults as before.
 */
void dtu_prefault(void *p, size_t len);

/*
 * The one rule for text that leaves dt in a file or on a terminal
 * (include/dt_utf8.h says why and how): dtu_utf8_len, dtu_utf8_char and
 * dtu_utf8_fix are its dt_utf8_len, dt_utf8_char and dt_utf8_fix.
 */
#define DTU_UTF8_BAD	DT_UTF8_BAD	/* U+FFFD, what a bad byte becomes */
int dtu_utf8_len(const unsigned char *s, size_t n);
size_t dtu_utf8_char(const char *s, size_t n, const char **out, size_t *outlen);
const char *dtu_utf8_fix(const char *s, size_t n, size_t *outlen, char **buf, size_t *bufcap);

/*
 * s (NULL: "") as a JSON string, quotes included: '"', '\\' and control
 * characters escaped ("\\n", "\\t", else "\\u00XX"), bytes that are not
 * UTF-8 replaced as dtu_utf8_char says.  The one JSON string writer
 * of stats --json and the Chrome trace export.
 */
void dtu_json_str(FILE *f, const char *s);

/*
 * Binary search in n items sorted by a key: how many have key <= x, which
 * is the index of the first with key > x.  key is an expression of the
 * index variable named i (evaluated for O(log n) values of i):
 *	size_t k = DTU_UPPER_BOUND(nmaps, j, maps[j].start, pc);
 *	m = k && pc < maps[k - 1].end ? &maps[k - 1] : NULL;
 * "The mapping that holds pc" and "the last symbol at or below pc" are
 * this, in symbolization, unwinding and kallsyms trimming alike.
 */
#define DTU_UPPER_BOUND(n, i, key, x) __extension__ ({			\
	size_t dtu_lo_ = 0, dtu_hi_ = (n);				\
	while (dtu_lo_ < dtu_hi_) {					\
		size_t i = dtu_lo_ + (dtu_hi_ - dtu_lo_) / 2;		\
		if ((key) <= (x))					\
			dtu_lo_ = i + 1;				\
		else							\
			dtu_hi_ = i;					\
	}								\
	dtu_lo_;							\
})

/* printf into a caller's error buffer (nothing if err is NULL or errlen 0). */
void dtu_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Output files that never destroy what the user had.
 *
 * dtu_out_open refuses an output that is one of the inputs (same device
 * and inode: through symbolic and hard links too; standard output is
 * checked the same way, so `>> in.dtc` is refused) and writes a regular
 * file through a temporary file beside it, which dtu_out_commit renames
 * over the target only once every byte is written: a failing or
 * interrupted command leaves the old file as it was.  A new file gets mode
 * 0600 whatever the umask (outputs hold what the capture holds: kernel
 * addresses, maps, arguments); a replaced one keeps its mode.  path NULL or
 * "-" is standard output.  The path goes through dtu_out_check first
 * (links, devices, FIFOs: see there); a FIFO, /dev/null or a standard
 * stream is written in place.  dtu_out_open_new is the same for outputs
 * that must not exist yet: its commit fails with EEXIST rather than
 * replace a file that appeared meanwhile.
 *
 * The temporary file is named .BASE.PID.XXXXXX after the process that
 * writes it, so one left by a killed run is recognised: each open first
 * removes those of the same target whose process is gone and says so on
 * standard error (the one thing in this file that prints).
 *
 * A writer that needs a file name (SQLite) fcloses f, sets it NULL and
 * writes tmp by name before the commit.
 *
 * dtu_out_commit flushes, checks ferror, fsyncs and closes: 0, or -1 with the
 * reason in err (the temporary file is then removed).  dtu_out_abort
 * discards the output.  Both free what dtu_out_open allocated; the struct
 * may be reused after either.  Standard output is flushed and checked but
 * left open (dtsh writes more to it), its error flag cleared after a
 * failure so the next command starts clean.
 */
struct dtu_out {
	FILE	*f;		/* write here; NULL after commit/abort */
	const char *name;	/* for messages: the path, or "standard output" */
	char	*tmp;		/* the temporary file, NULL when written in place */
	char	*target;	/* what tmp replaces (links resolved) */
	int	is_stdout;
	int	noreplace;	/* dtu_out_open_new: the commit never replaces */
	unsigned mode;		/* the permissions tmp gets */
};
/*
 * Make SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the temporary file of an
 * output not yet committed (and a temporary directory, dtu_out_pending_dir)
 * before the process dies of them (a Ctrl-C during `flame -o` leaves no
 * stray file).  For a tool's main(); signals the process ignores stay
 * ignored, and a command that handles SIGINT itself (sql's cancel)
 * overrides it while it runs.
 */
void dtu_out_cleanup_on_signals(void);
int dtu_out_open(struct dtu_out *o, const char *path, const char *const *inputs,
		 size_t ninputs, char *err, size_t errlen);
int dtu_out_open_new(struct dtu_out *o, const char *path, const char *const *inputs,
		     size_t ninputs, char *err, size_t errlen);
int dtu_out_commit(struct dtu_out *o, char *err, size_t errlen);
void dtu_out_abort(struct dtu_out *o);

/*
 * The rules every output path obeys before anything is opened, whoever
 * writes it (dtrec's capture, reports, exports, dtsh):
 *  - a symbolic link on the way is followed only when the caller (the
 *    effective uid) or root owns it, or, in a world-writable sticky
 *    directory such as /tmp, when the caller or the directory's owner owns
 *    it: the kernel's protected_symlinks rule, applied here because hosts
 *    turn it off, and stricter outside sticky directories (a link another
 *    user may retarget is never written through);
 *  - a block device is refused, and so is a character device other than
 *    /dev/null and what standard output or standard error already are;
 *  - a directory is refused.
 * 0 (with *st filled and *exists set when the path exists), or -1 with the
 * reason in err.  dtu_path_links_ok is the first rule alone, for inputs.
 */
int dtu_out_check(const char *path, struct stat *st, int *exists, char *err, size_t errlen);
int dtu_path_links_ok(const char *path, char *err, size_t errlen);
/* Is a character or block device one an output may be? (the rule above) */
int dtu_out_device_ok(const struct stat *st);

/*
 * Open an output that is not a regular file (FIFO, /dev/null, a standard
 * stream) for writing without ever blocking: a FIFO nobody reads is an
 * error, not a hang.  The descriptor (blocking again), or -1 with err.
 */
int dtu_out_open_special(const char *path, char *err, size_t errlen);

/*
 * The temporary file beside target (links already resolved): removes the
 * stale temporaries of target first (dtu_out_sweep), creates
 * .BASE.PID.XXXXXX with mode 0600, takes an exclusive flock(2) on it
 * (which moves with the file when it is renamed over target: dtrec's
 * "someone is writing this" mark; best effort, a file system without
 * locks still writes) and names it to the signal handler.
 * The descriptor with *tmp malloc'd, or -1 with err.
 */
int dtu_out_tmp_create(const char *target, char **tmp, char *err, size_t errlen);
/* The signal handler stops removing tmp (renamed, or removed by the caller). */
void dtu_out_tmp_forget(void);
/*
 * Hold the signals whose handler (dtu_out_cleanup_on_signals) removes
 * temporaries, SIGINT, SIGTERM, SIGHUP and SIGQUIT, while a temporary is
 * made or moved into place; the previous mask in *old, for sigprocmask's
 * SIG_SETMASK.
 */
void dtu_block_fatal(sigset_t *old);

/*
 * Temporaries of target in its directory: those of a process that is
 * gone and that nobody holds locked are removed (a message on standard
 * error says so); returns how many belong to a live writer, with the pid
 * of one in *live (may be NULL).  skip: a temporary of our own to ignore.
 */
int dtu_out_sweep(const char *target, const char *skip, long *live);
/* Is path an existing file someone holds an exclusive flock(2) on? */
int dtu_out_locked(const char *path);

/*
 * A temporary directory an export fills (parquet: .tmp-export-PID.XXXXXX
 * under the dataset), for the signal handler to remove with its contents;
 * NULL: no more.  dtu_out_sweep_dirs removes the ones under dir whose
 * process is gone, saying so.  dtu_rm_tree removes one (async-signal-safe,
 * three levels deep at most: what an export makes).
 */
void dtu_out_pending_dir(const char *dir);
void dtu_out_sweep_dirs(const char *dir, const char *prefix);
int dtu_rm_tree(const char *dir);

/*
 * Refuse a standard output that is one of the inputs (a regular file with
 * the same device and inode: `1<> cap.dtc`, `>> cap.dtc`), before any byte
 * is written: 0, or -1 with err.  Every command of every tool calls it
 * through rpt_open / dtu_out_open.
 */
int dtu_stdout_not_input(const char *const *inputs, size_t ninputs, char *err, size_t errlen);

/*
 * Open a file to read that must be a regular file (a capture, an ELF file
 * for a probe, a history) without blocking on a FIFO or a device: opened
 * non-blocking, checked with fstat, the flag cleared.  nofollow: refuse a
 * symbolic link as the last component.  The descriptor, or -1 with err
 * ("PATH: a FIFO, not a regular file").
 */
int dtu_open_regular(const char *path, int nofollow, char *err, size_t errlen);

/* Do a and b name the same file (device and inode)?  0 if either is absent. */
int dtu_same_file(const char *a, const char *b);

/*
 * Flush standard output and report whether every write to it succeeded
 * since the last call: 0, or -1 with the reason in err (the error flag is
 * then cleared).  Every command ends with it: `> /dev/full` is an error.
 */
int dtu_stdout_check(char *err, size_t errlen);

/*
 * Open a cgroup v2 directory (O_RDONLY | O_DIRECTORY | O_CLOEXEC) for a
 * filter: the descriptor, or -1 with err naming path and why (absent, not
 * a directory, not on a cgroup2 file system).  The caller closes it.
 */
int dtu_open_cgroup(const char *path, char *err, size_t errlen);

#endif /* DT_UTIL_H */
