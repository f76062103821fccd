/*
 * record.c - see record.h: the recording session (open the source, enable,
 * the loop reading it into the capture, finish).  Process snapshots are
 * snapshots.c's, the flight recorder flight.c's, the command spawn.c's.
 */
#include "offcpu.h"
#include "record_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt_abi.h"
#include "dtcap.h"
#include "elfsyms.h"
#include "fpcheck.h"
#include "jitmap.h"
#include "kused.h"
#include "probes.h"
#include "source.h"
#include "srcline.h"
#include "targets.h"
#include "unwind_pool.h"
#include "util.h"

void
rec_msg(struct rec *r, const char *fmt, ...)
{
	va_list ap;

	if (r->tty)
		fputs("\r\033[K", r->st);
	fprintf(r->st, "%s: ", r->o->prog ? r->o->prog : "dtrec");
	va_start(ap, fmt);
	vfprintf(r->st, fmt, ap);
	va_end(ap);
	fputc('\n', r->st);
}

/* ------------------------------------------------------------- counters */

static int
get_counters(struct rec *r, char *err, size_t errlen)
{
	uint32_t n = r->ncpus;

	for (;;) {
		if (r->src->ops->counters(r->src, r->counts, r->ncpus, &n, err, errlen) < 0)
			return -1;
		if (n <= r->ncpus)
			break;
		struct dtcap_count *nc = realloc(r->counts, n * sizeof(*nc));
		if (nc == NULL) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		memset(nc, 0, n * sizeof(*nc));
		r->counts = nc;
		r->ncpus = n;
	}
	r->ncpus = n;
	return 0;
}

void
rec_sum_counts(const struct rec *r, struct dtcap_count *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t i = 0; i < r->ncpus; i++) {
		t->produced += r->counts[i].produced;
		t->read += r->counts[i].read;
		t->dropped += r->counts[i].dropped;
		t->skipped += r->counts[i].skipped;
		t->recursive += r->counts[i].recursive;
		t->nested += r->counts[i].nested;
	}
}

/*
 * Now in the clock of the records' dtr_ts, which only the source can read
 * (dt.ko stamps local_clock(), see dt(4); the perf source CLOCK_MONOTONIC).
 */
uint64_t
rec_clock_ns(struct rec *r)
{
	uint64_t mono;
	int64_t real;

	r->src->ops->clock(r->src, &mono, &real);
	return mono;
}

int
rec_put_counters(struct rec *r)
{
	struct dtcap_count mine = { 0 };
	char err[DTSRC_ERRLEN];

	if (get_counters(r, err, sizeof(err)) < 0) {
		rec_msg(r, "%s", err);
		return -1;
	}
	if (r->werr)
		return 0;
	/* the recorder's own tally: what it read and what it failed to keep */
	mine.read = r->nread;
	mine.dropped = r->nbad + r->nlost;
	mine.skipped = 0;	/* the kernel filters targets: dtrec leaves out none */
	if (r->src->ops->ustack_counts)
		r->src->ops->ustack_counts(r->src, &mine.ustack_dwarf, &mine.ustack_dwarf_trunc,
					   &mine.ustack_fp_behind);
	if (dtcap_put_counters(r->w, rec_clock_ns(r), r->counts, r->ncpus, &mine) < 0) {
		rec_msg(r, "%s", dtcap_writer_error(r->w));
		r->werr = 1;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- events */

static uint32_t
comm_of(struct rec *r, const struct dt_rec *d)
{
	struct tslot *t;
	int isnew;
	char c[DT_COMMLEN + 1];

	if (d->dtr_comm[0] == '\0')
		return 0;
	t = rec_tmap_get(&r->comms, d->dtr_tid, &isnew);
	if (t && !isnew && t->comm_id && memcmp(t->comm, d->dtr_comm, DT_COMMLEN) == 0)
		return t->comm_id;
	memcpy(c, d->dtr_comm, DT_COMMLEN);
	c[DT_COMMLEN] = '\0';
	uint32_t id = dtcap_intern_comm(r->w, c);
	if (t && id) {
		memcpy(t->comm, d->dtr_comm, DT_COMMLEN);
		t->comm_id = id;
	}
	return id;
}

static void
process(struct rec *r, const char *buf, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct dt_rec) <= len) {
		const struct dt_rec *d = (const struct dt_rec *)(buf + off);
		const uint64_t *a = (const uint64_t *)(d + 1);
		struct dtcap_event e;

		if (d->dtr_size < sizeof(*d) || d->dtr_size % 8 || d->dtr_size > len - off) {
			/* a broken length loses the rest of this batch: count it */
			r->nbad++;
			return;
		}
		off += d->dtr_size;
		r->nread++;
		if (d->dtr_nargs > DT_MAXARGS || d->dtr_nkstack > DT_MAXFRAMES ||
		    d->dtr_nustack > DT_MAXFRAMES ||
		    DT_REC_SIZE(d->dtr_nargs, d->dtr_nkstack, d->dtr_nustack) > d->dtr_size) {
			r->nbad++;
			continue;
		}
		if (r->werr) {
			r->nlost++;
			continue;
		}
		memset(&e, 0, sizeof(e));
		e.ts = d->dtr_ts;
		e.cpu = d->dtr_cpu;
		e.pid = d->dtr_pid;
		e.tid = d->dtr_tid;
		e.probe = d->dtr_probe;
		e.flags = d->dtr_flags;
		e.ctx = d->dtr_ctx;
		e.nargs = d->dtr_nargs;
		memcpy(e.args, a, 8 * (size_t)d->dtr_nargs);
		e.comm = comm_of(r, d);
		if (d->dtr_nkstack) {
			e.kstack = dtcap_intern_stack(r->w, a + d->dtr_nargs, d->dtr_nkstack, 1,
						      !!(d->dtr_flags & DTR_KSTACK_TRUNC));
			/* ids are dense: a new one is a stack not seen before */
			if (e.kstack > r->kstack_max) {
				kused_mark(r->kused, a + d->dtr_nargs, d->dtr_nkstack);
				r->kstack_max = e.kstack;
			}
		}
		if (d->dtr_nustack)
			e.ustack = dtcap_intern_stack(r->w, a + d->dtr_nargs + d->dtr_nkstack,
						      d->dtr_nustack, 0,
						      !!(d->dtr_flags & DTR_USTACK_TRUNC));
		if ((d->dtr_nkstack && !e.kstack) || (d->dtr_nustack && !e.ustack) ||
		    dtcap_put_event(r->w, &e) < 0) {
			rec_msg(r, "%s", dtcap_writer_error(r->w));
			r->werr = 1;
			r->nlost++;
			continue;
		}
		dtm_event(r->m, d);
		if (e.ustack)
			rec_reach_files(r, d, e.ustack);
		/* ids are dense: a new one is a stack not stored before */
		if (e.ustack > r->ustack_max) {
			r->ustack_max = e.ustack;
			if (r->srcl)
				rec_srcl_stack(r, d);
		}
	}
	if (off != len)
		r->nbad++;
}

/* One read of what the rings hold: bytes read, 0 if empty, -1 on error. */
ssize_t
rec_drain_once(struct rec *r, char *buf)
{
	char err[DTSRC_ERRLEN];
	ssize_t n = r->src->ops->read(r->src, buf, READBUF, err, sizeof(err));

	if (n < 0) {
		rec_msg(r, "%s", err);
		return -1;
	}
	if (n == 0)
		return 0;
	r->raw_bytes += (uint64_t)n;
	process(r, buf, (size_t)n);
	dtm_read_end(r->m);
	return n;
}

static void
status_line(struct rec *r, uint64_t elapsed)
{
	char a[32], b[32], c[32], d[32];
	struct dtcap_count t;
	uint64_t bytes = dtcap_bytes_written(r->w);
	double secs = elapsed / 1e9;

	rec_sum_counts(r, &t);
	fprintf(r->st, "\r\033[K%s  %s  %s events  %s/s  %s written",
		r->src->ops->name, dtu_human_duration(elapsed, a, sizeof(a)),
		dtu_human_count((double)r->nread, b, sizeof(b)),
		dtu_human_count(secs > 0 ? r->nread / secs : 0, c, sizeof(c)),
		dtu_human_size(bytes, d, sizeof(d)));
	/* the ratio of the events alone: the symbol tables would swamp it */
	uint64_t evbytes = bytes - r->base_bytes - dtcap_symbol_bytes(r->w);
	if (bytes > r->base_bytes + dtcap_symbol_bytes(r->w) && evbytes > 4096)
		fprintf(r->st, "  %.1fx", (double)r->raw_bytes / (double)evbytes);
	if (t.dropped)
		fprintf(r->st, "  DROPPED %llu (%.1f%%)", (unsigned long long)t.dropped,
			t.produced ? 100.0 * (double)t.dropped / (double)t.produced : 0.0);
	if (t.skipped)
		fprintf(r->st, "  %llu ticks skipped", (unsigned long long)t.skipped);
	if (t.recursive)
		fprintf(r->st, "  %llu recursive", (unsigned long long)t.recursive);
	fflush(r->st);
}

/* ------------------------------------------------------------- setup */

/*
 * The kernel lists one timer probe per provider under a default rate
 * ("profile:hz:97"); the capture names the rate actually recorded, so
 * reports say "profile:hz:997" as the user typed it.
 */
static void
name_timer(struct dtcap_probe *cp, const struct dt_probe_info *p, uint64_t period)
{
	uint64_t hz = (1000000000ULL + period / 2) / period;

	if (hz >= 1 && 1000000000ULL / hz == period)
		snprintf(cp->name, sizeof(cp->name), "%s:hz:%llu", p->dtpi_prov,
			 (unsigned long long)hz);
	else
		snprintf(cp->name, sizeof(cp->name), "%s:ns:%llu", p->dtpi_prov,
			 (unsigned long long)period);
}

int
rec_write_metadata(struct rec *r, const struct dtp_sel *sel, size_t nsel,
	       const char *ksyms, size_t ksymslen, const char *mods, size_t modslen)
{
	struct dtcap_probe *pv = calloc(nsel ? nsel : 1, sizeof(*pv));
	char err[DTP_ERRLEN];
	size_t n = 0;
	int ret = -1;

	if (pv == NULL) {
		rec_msg(r, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nsel; i++) {
		const struct dt_probe_info *p = dtp_by_id(r->dev, sel[i].id);
		if (p == NULL)
			continue;
		if (dtp_describe(r->dev, p, &pv[n], err, sizeof(err)) < 0) {
			rec_msg(r, "%s", err);
			goto out;
		}
		if ((sel[i].flags & DT_PF_TIMER) && sel[i].period_ns)
			name_timer(&pv[n], p, sel[i].period_ns);
		n++;
	}
	if (dtcap_put_probes(r->w, pv, n) < 0)
		goto werr;
	(void)ksyms;
	(void)ksymslen;
	if (mods && dtcap_put_modules(r->w, mods, modslen) < 0)
		goto werr;
	ret = 0;
	goto out;
werr:
	rec_msg(r, "%s", dtcap_writer_error(r->w));
	r->werr = 1;
out:
	free(pv);
	return ret;
}

void
rec_fill_host(struct rec *r, struct dtcap_host *h)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0) {
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->hostname, sizeof(h->hostname), "%s", u.nodename);
	}
	h->ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	r->src->ops->clock(r->src, &h->clock_mono_ns, &h->clock_real_ns);
	snprintf(h->source, sizeof(h->source), "%s", r->src->ops->name);
	h->start_ns = rec_clock_ns(r);
	snprintf(h->command, sizeof(h->command), "%s", r->o->cmdline ? r->o->cmdline : "");
}

static void
summary(struct rec *r, uint64_t elapsed, int cmd_status, uint64_t bytes)
{
	char a[32], b[32], c[32];
	struct dtcap_count t;
	uint64_t ev = r->nread - r->nlost - r->nbad;

	rec_sum_counts(r, &t);
	if (r->werr) {
		rec_msg(r, "%s: writing failed: the capture keeps the events written before the "
		    "failure (%s of %llu recorded)", r->o->output, dtu_human_size(bytes, a, sizeof(a)),
		    (unsigned long long)ev);
	} else if (!r->o->quiet) {
		char d[32], e[32];
		/* what the events take, apart from the header, probe list and
		 * symbol tables: a short recording is all symbol tables */
		uint64_t meta = r->base_bytes + r->sym_bytes + r->srcl_bytes;
		uint64_t evb = bytes > meta ? bytes - meta : 0;
		rec_msg(r, "%s: %llu events in %s (%s/s) from the %s source, %s: %.1f bytes/event "
		    "for the events, %s of symbol tables, %s of header and probes",
		    r->o->output, (unsigned long long)ev,
		    dtu_human_duration(elapsed, a, sizeof(a)),
		    dtu_human_count(elapsed ? ev / (elapsed / 1e9) : 0, b, sizeof(b)),
		    r->src->ops->name, dtu_human_size(bytes, c, sizeof(c)),
		    ev ? (double)evb / (double)ev : 0.0,
		    dtu_human_size(r->sym_bytes, d, sizeof(d)),
		    dtu_human_size(r->base_bytes, e, sizeof(e)));
		if (r->srcl_st.addrs)
			rec_msg(r, "source lines: %llu of %llu user addresses (%llu in inlined "
			    "calls), %s; %u of %u files without DWARF line tables",
			    (unsigned long long)r->srcl_st.resolved,
			    (unsigned long long)r->srcl_st.addrs,
			    (unsigned long long)r->srcl_st.inlined,
			    dtu_human_size(r->srcl_bytes, d, sizeof(d)),
			    r->srcl_st.files_nodwarf, r->srcl_st.files);
		if (t.skipped || t.recursive)
			rec_msg(r, "%llu timer ticks skipped, %llu recursive events not recorded",
			    (unsigned long long)t.skipped, (unsigned long long)t.recursive);
		if (cmd_status != -1 && WIFEXITED(cmd_status) && WEXITSTATUS(cmd_status))
			rec_msg(r, "the command exited with status %d", WEXITSTATUS(cmd_status));
		else if (cmd_status != -1 && WIFSIGNALED(cmd_status))
			rec_msg(r, "the command was killed by signal %d", WTERMSIG(cmd_status));
	}
	/* losses are never quiet: a profile with holes misleads */
	if (t.dropped)
		rec_msg(r, "WARNING: the kernel dropped %llu of %llu events (%.2f%%): "
		    "use a larger ring (-b) or fewer probes",
		    (unsigned long long)t.dropped, (unsigned long long)t.produced,
		    t.produced ? 100.0 * (double)t.dropped / (double)t.produced : 0.0);
	if (r->nbad)
		rec_msg(r, "WARNING: %llu malformed records from the kernel were skipped",
		    (unsigned long long)r->nbad);
	if (r->nlost)
		rec_msg(r, "WARNING: %llu events read but not written", (unsigned long long)r->nlost);
	if (r->ustack_how[0] && !r->o->quiet)
		rec_msg(r, "%s", r->ustack_how);
	if (r->src->ops->ustack_counts) {
		uint64_t dw, dwt, fpb;
		r->src->ops->ustack_counts(r->src, &dw, &dwt, &fpb);
		if ((dw || fpb) && !r->o->quiet)
			rec_msg(r, "user stacks: %llu unwound with DWARF (%llu of them stopped short)",
			    (unsigned long long)dw, (unsigned long long)dwt);
		/* a silent downgrade would mislead as much as a drop */
		if (fpb)
			rec_msg(r, "WARNING: %llu samples kept their frame-pointer user stack%s: "
			    "unwinding fell behind (fewer probes, a lower rate or a smaller "
			    "--user-stack-size)", (unsigned long long)fpb,
			    r->ustack_nofp ? " (only the pc: the program has no frame pointers)" : "");
	}
	/* the spool is the pool's, whichever source unwinds: the pool answers */
	if (dtm_unwinders(r->m) != NULL) {
		uint64_t n, peak, lost;
		char h[32];
		dtunw_pool_spool_stats(dtm_unwinders(r->m), &n, &peak, &lost);
		if (n && !r->o->quiet)
			rec_msg(r, "user stacks: %llu samples waited in the spool file (at most %s) "
			    "to be unwound when the CPUs were idle", (unsigned long long)n,
			    dtu_human_size(peak, h, sizeof(h)));
		if (lost)
			rec_msg(r, "WARNING: %llu spooled samples were lost: reading the spool file "
			    "failed", (unsigned long long)lost);
	}
}


/* The kernel symbols of the stacks stored so far, when there are new ones. */
int
rec_put_kused(struct rec *r)
{
	size_t len;
	const char *t = kused_text(r->kused, &len);

	if (t == NULL || r->werr)
		return 0;
	return dtcap_put_kallsyms(r->w, t, len);
}

/*
 * Where DWARF samples the unwinding workers cannot keep in memory wait:
 * beside the capture, on the disk the user chose for it, not in a /tmp
 * that may be a small tmpfs.  A capture going to a device or a FIFO (the
 * standard output, /dev/null) has no such disk: $TMPDIR or /tmp.
 */
static const char *
spool_dir(const char *out, char *buf, size_t len)
{
	const char *slash = strrchr(out, '/');
	const char *tmp = getenv("TMPDIR");
	struct stat st;

	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode))
		return tmp && *tmp == '/' ? tmp : "/tmp";
	if (slash == NULL)
		return ".";
	if (slash == out)
		return "/";
	if ((size_t)(slash - out) >= len)
		return NULL;	/* no spool: samples past the budget keep frame pointers */
	memcpy(buf, out, (size_t)(slash - out));
	buf[slash - out] = 0;
	return buf;
}

/*
 * The capture is written under a temporary name beside the output and
 * renamed over it only once recording has really started: a mistyped
 * probe or command never destroys the capture a user already has.  The
 * rename goes to where a symbolic link points (the link stays; only a link
 * the rules of util.h dtu_out_check let us follow), and an output that is
 * not a regular file (/dev/stdout, a FIFO, /dev/null) is written in place:
 * renaming over it would replace the node itself.
 * *target gets the path to rename to (malloc'd), or NULL: write in place.
 * *lockfd holds the temporary file's flock (which the rename carries over
 * to the output) for as long as recording runs: a second dtrec sees it and
 * refuses; for a FIFO it is the write end that proved a reader is there.
 */
static int
make_temp(struct rec *r, char *tmp, size_t len, char **target, int *lockfd)
{
	const char *out = r->o->output;
	char err[512], *t = NULL;
	struct stat st;
	int have;
	long other = 0;

	*target = NULL;
	if (dtu_out_check(out, &st, &have, err, sizeof(err)) < 0) {
		rec_msg(r, "%s", err);
		return -1;
	}
	if (have && !S_ISREG(st.st_mode)) {
		if ((*lockfd = dtu_out_open_special(out, err, sizeof(err))) < 0) {
			rec_msg(r, "%s", err);
			return -1;
		}
		snprintf(tmp, len, "%s", out);
		return 0;
	}
	/* an existing link to a regular file: replace the file it names */
	if ((*target = have ? realpath(out, NULL) : strdup(out)) == NULL) {
		rec_msg(r, "%s: %s", out, strerror(errno));
		return -1;
	}
	/* another dtrec's temporary file, then its output: after its rename
	 * the lock is on the output, so in this order one of them shows it */
	if (dtu_out_sweep(*target, NULL, &other) > 0 || (have && dtu_out_locked(*target))) {
		if (other)
			rec_msg(r, "%s: another dtrec (process %ld) is writing it; refusing to "
			    "replace its capture", out, other);
		else
			rec_msg(r, "%s: another dtrec is writing it (the file is locked); refusing "
			    "to replace its capture", out);
		goto fail;
	}
	if ((*lockfd = dtu_out_tmp_create(*target, &t, err, sizeof(err))) < 0) {
		rec_msg(r, "%s", err);
		goto fail;
	}
	if (strlen(t) >= len) {
		rec_msg(r, "%s: path too long", out);
		goto fail;
	}
	snprintf(tmp, len, "%s", t);
	/* two started at once both see the other's file now: both refuse */
	if (dtu_out_sweep(*target, t, &other) > 0) {
		rec_msg(r, "%s: another dtrec (process %ld) is writing it; refusing to replace its "
		    "capture", out, other);
		unlink(t);
		goto fail;
	}
	free(t);
	return 0;
fail:
	if (t)
		dtu_out_tmp_forget();
	free(t);
	if (*lockfd >= 0)
		close(*lockfd);
	*lockfd = -1;
	free(*target);
	*target = NULL;
	tmp[0] = '\0';
	return -1;
}

/*
 * Whether a target's program (the command's, or a -p process's) is built
 * without frame pointers: exe names the one that decided, or the last
 * looked at.  1: without, 0: with, -1: none could be read.
 */
static int
targets_nofp(const struct dtrec_opts *o, char *exe, size_t len)
{
	char path[4096];
	int fp = -1;

	exe[0] = '\0';
	if (o->argv && o->argv[0] && fpcheck_which(o->argv[0], path, sizeof(path)) == 0) {
		snprintf(exe, len, "%s", path);
		if ((fp = fpcheck_file(path)) == 0)
			return 1;
	}
	for (size_t i = 0; i < o->npids; i++) {
		ssize_t l;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)o->pids[i]);
		if ((l = readlink(path, exe, len - 1)) < 0)
			continue;
		exe[l] = '\0';
		if ((fp = fpcheck_file(path)) == 0)
			return 1;
	}
	return fp == 1 ? 0 : -1;
}

/*
 * --user-stacks auto with -u: whether every probe gets a stack copy.  The
 * sampled probes always do; system calls and tracepoints keep the cheaper
 * frame-pointer walk, unless a target's program was built without frame
 * pointers (nofp, targets_nofp's), where that walk ends after a frame or
 * two.  r->ustack_how says which, for the summary.
 */
static int
ustack_choice(struct rec *r, int nofp, const char *exe)
{
	if (nofp == 1)
		snprintf(r->ustack_how, sizeof(r->ustack_how), "user stacks: DWARF for every probe: "
			 "%.200s is built without frame pointers", exe);
	else if (nofp == 0)
		snprintf(r->ustack_how, sizeof(r->ustack_how), "user stacks: DWARF for the sampled "
			 "probes, frame pointers for the rest: %.200s keeps frame pointers", exe);
	else
		snprintf(r->ustack_how, sizeof(r->ustack_how), "user stacks: DWARF for the sampled "
			 "probes, frame pointers for the rest (--user-stacks dwarf for every probe)");
	return nofp == 1;
}

int
dtrec_record(const struct dtrec_opts *o, struct dtrec_result *res)
{
	struct rec R, *r = &R;
	struct dtp_sel *sel = NULL, *tsel = NULL;
	size_t nsel = 0, ntsel = 0;
	char *ksyms_keep = NULL;
	char err[DTP_ERRLEN], tmp[4200] = "";
	struct dtcap_host host;
	struct dtcap_writer_opts wo;
	struct dtsrc_cfg cfg;
	char spooldir[4096];
	struct dtp_dev *dev;
	char *buf = NULL, *ksyms = NULL, *mods = NULL;
	size_t ksymslen = 0, modslen = 0;
	pid_t child = -1;
	int go_fd = -1, err_fd = -1, cmd_status = -1, ret = 1, recording = 0, failed = 0;
	int renamed = 0, syncfd = -1, cgfd = -1, lockfd = -1;
	char *target = NULL;		/* rename the capture here; NULL: in place */
	uint64_t start = 0, now, last_status = 0, last_counters = 0, last_flush = 0;
	uint64_t flush_ns = o->flush_ns ? o->flush_ns : 1000000000ULL, flushed_events = 0;
	size_t backlog = BACKLOG;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->st = o->status ? o->status : stderr;
	r->tty = !o->quiet && isatty(fileno(r->st));
	if (res) {
		memset(res, 0, sizeof(*res));
		res->cmd_status = -1;
	}
	if (o->nprobes == 0 && o->ntriggers == 0 && !o->offcpu) {
		rec_msg(r, "no probe given (-e PROBE)");
		return 1;
	}
	if (o->argv && o->argv[0] && !rec_runnable(r, o->argv[0])) {
		if (res)
			res->not_run = r->not_run;
		return 1;
	}
	dev = dtp_open_source(o->source, o->device, 1, err, sizeof(err));
	if (dev == NULL) {
		rec_msg(r, "%s", err);
		return 1;
	}
	r->src = dtsrc_new(dev, err, sizeof(err));
	if (r->src == NULL) {
		rec_msg(r, "%s", err);
		return 1;
	}
	r->dev = r->src->dev;
	/* the session's, not the source's: the source feeds it, the
	 * snapshots subscribe */
	if ((r->m = dtm_new()) == NULL || dtm_subscribe(r->m, rec_snap_changed, r) < 0) {
		rec_msg(r, "out of memory");
		goto out;
	}
	dtm_keep_all(r->m, o->flight != 0);
	if (o->flight && r->src->ops->dump == NULL) {
		rec_msg(r, "--flight: the %s source has no flight recorder: use --source perf",
		    r->src->ops->name);
		goto out;
	}
	/* a trigger is recorded too: the dump shows what led up to it */
	for (size_t i = 0; i < o->ntriggers; i++) {
		if (dtp_resolve(r->dev, o->triggers[i], &tsel, &ntsel, err, sizeof(err)) < 0 ||
		    dtp_resolve(r->dev, o->triggers[i], &sel, &nsel, err, sizeof(err)) < 0) {
			rec_msg(r, "--trigger: %s", err);
			goto out;
		}
	}
	for (size_t i = 0; i < o->nprobes; i++) {
		if (dtp_resolve(r->dev, o->probes[i], &sel, &nsel, err, sizeof(err)) < 0) {
			rec_msg(r, "%s", err);
			goto out;
		}
	}
	for (size_t i = 0; o->offcpu && dtoff_probes[i]; i++) {
		if (dtp_resolve(r->dev, dtoff_probes[i], &sel, &nsel, err, sizeof(err)) < 0) {
			rec_msg(r, "--offcpu: %s", err);
			goto out;
		}
	}
	for (size_t i = 0; i < nsel; i++) {
		char nm[DTCAP_PROBENAMELEN];
		const struct dt_probe_info *p = dtp_by_id(r->dev, sel[i].id);
		size_t l;
		if (p && strcmp(p->dtpi_prov, "tracepoint") == 0 &&
		    (l = strlen(dtp_name(p, nm, sizeof(nm)))) >= 18 &&
		    strcmp(nm + l - 18, "sched_process_exec") == 0)
			dtm_set_exec_probe(r->m, sel[i].id);
	}
	buf = malloc(READBUF);
	r->ec = elfsyms_cache_new();
	r->jc = jitmap_cache_new();
	/* a flight recorder's dumps are each a capture of their own: their
	 * file ids restart, and a dump must be quick */
	if (!o->no_srcline && !o->flight && (r->srcl = srcl_new()) == NULL) {
		rec_msg(r, "out of memory");
		goto out;
	}
	r->ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	if (r->ncpus < 1)
		r->ncpus = 1;
	r->counts = calloc(r->ncpus, sizeof(*r->counts));
	if (!buf || !r->ec || !r->jc || !r->counts) {
		rec_msg(r, "out of memory");
		goto out;
	}

	if (o->comm && !r->src->ops->filters_comm) {
		rec_msg(r, "--comm: the %s source cannot filter by command name; use --source dt",
		    r->src->ops->name);
		goto out;
	}
	if (o->cgroup && !r->src->ops->filters_cgroup) {
		rec_msg(r, "--cgroup: the %s source cannot filter by cgroup; use --source dt",
		    r->src->ops->name);
		goto out;
	}
	if (o->comm && (o->comm[0] == '\0' || strlen(o->comm) >= DT_COMMLEN)) {
		rec_msg(r, "--comm '%s': a command name is 1 to %d bytes", o->comm, DT_COMMLEN - 1);
		goto out;
	}
	if (o->cgroup && (cgfd = dtu_open_cgroup(o->cgroup, err, sizeof(err))) < 0) {
		rec_msg(r, "%s", err);
		goto out;
	}
	/* the command waits on a pipe: the sources follow it from its exec */
	if (o->argv && o->argv[0]) {
		child = rec_spawn(r, o->argv, &go_fd, &err_fd);
		if (child < 0)
			goto out;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.machine = r->m;
	cfg.bufsize = o->bufsize;
	cfg.evtflags = DTEVT_COMM | DTEVT_FUNCARGS;
	if (o->kstack)
		cfg.evtflags |= DTEVT_KSTACK;
	if (o->ustack)
		cfg.evtflags |= DTEVT_USTACK;
	cfg.timer_evtflags = cfg.evtflags;
	if (!o->kstack && !o->ustack)
		cfg.timer_evtflags |= DTEVT_KSTACK | DTEVT_USTACK;
	cfg.pids = o->pids;
	cfg.npids = o->npids;
	cfg.child = child > 0 ? child : 0;
	cfg.comm = o->comm;
	cfg.cgroupfd = cgfd;
	cfg.offcpu = o->offcpu;
	cfg.ustack_mode = o->ustack_mode;
	cfg.ustack_size = o->ustack_size;
	cfg.spool_dir = spool_dir(o->output, spooldir, sizeof(spooldir));
	if (o->ustack_mode == DTSRC_USTACK_DWARF && r->src->ops->ustack_counts == NULL) {
		rec_msg(r, "--user-stacks dwarf: the %s source copies no user stacks; use fp or auto",
		    r->src->ops->name);
		goto out;
	}
	if (o->ustack_mode == DTSRC_USTACK_AUTO && r->src->ops->ustack_counts == NULL)
		cfg.ustack_mode = DTSRC_USTACK_FP;
	if (cfg.ustack_mode != DTSRC_USTACK_FP && !o->flight &&
	    ((cfg.evtflags | cfg.timer_evtflags) & DTEVT_USTACK)) {
		char exe[4096];
		int nofp = targets_nofp(o, exe, sizeof(exe));

		cfg.ustack_nofp = r->ustack_nofp = nofp == 1;
		if (cfg.ustack_mode == DTSRC_USTACK_AUTO && (cfg.evtflags & DTEVT_USTACK))
			cfg.ustack_all = ustack_choice(r, nofp, exe);
	}
	if (o->flight) {
		/* a dump is read in one go: samples still with the unwinding
		 * workers would miss it, so flight stacks are frame pointers */
		if (o->ustack_mode == DTSRC_USTACK_DWARF) {
			rec_msg(r, "--user-stacks dwarf does not work with --flight (yet): use fp");
			goto out;
		}
		cfg.ustack_mode = DTSRC_USTACK_FP;
		cfg.bufsize = o->flight;
		cfg.flight = 1;
		cfg.trig = tsel;
		cfg.ntrig = ntsel;
		cfg.trig_filter = o->trigger_filter;
	}
	if (r->src->ops->enable(r->src, sel, nsel, &cfg, err, sizeof(err)) < 0) {
		rec_msg(r, "%s", err);
		goto out;
	}
	if (dtrec_targets_open(&r->tg, o->pids, o->npids) < 0) {
		rec_msg(r, "out of memory");
		goto out;
	}

	/*
	 * Read the symbol tables before the capture exists: on a slow machine
	 * this takes seconds, which should not count as recording time.
	 * Without root kallsyms shows zeros: still stored, the reader notices.
	 */
	ksyms = dtu_read_file("/proc/kallsyms", &ksymslen);
	if (ksyms == NULL)
		rec_msg(r, "warning: /proc/kallsyms: %s: kernel frames stay unnamed", strerror(errno));
	else {
		/* every flight dump starts its own list of used symbols */
		if (o->flight && (ksyms_keep = malloc(ksymslen + 1)) != NULL)
			memcpy(ksyms_keep, ksyms, ksymslen + 1);
		r->kused = kused_new(ksyms, ksymslen);
		ksyms = NULL;
		if (r->kused == NULL) {
			rec_msg(r, "out of memory");
			goto out;
		}
	}
	mods = dtu_read_file("/proc/modules", &modslen);

	if (o->flight) {
		/* said before recording, not at the first dump */
		if (dtu_path_links_ok(o->output, err, sizeof(err)) < 0) {
			rec_msg(r, "%s", err);
			goto out;
		}
		if (r->src->ops->start(r->src, err, sizeof(err)) < 0) {
			rec_msg(r, "%s", err);
			goto out;
		}
		if (child > 0 && rec_release_child(r, &go_fd, err_fd, &child, &cmd_status) < 0) {
			r->src->ops->stop(r->src, err, sizeof(err));
			goto out;
		}
		/* no file appears until a dump: a user (or a script starting a
		 * workload) learns here that the rings are recording */
		if (!o->quiet)
			rec_msg(r, "flight recorder running: SIGUSR2 dumps what the rings hold");
		ret = rec_flight_loop(r, sel, nsel, ksyms_keep, ksymslen, mods, modslen, buf, &child,
				  &cmd_status, res) < 0 ? 1 : 0;
		if (r->src->ops->stop(r->src, err, sizeof(err)) < 0)
			rec_msg(r, "%s", err);
		if (child > 0) {
			rec_reap(r, child, &cmd_status);
			child = -1;
		}
		if (res)
			res->cmd_status = cmd_status;
		goto out;
	}

	if (make_temp(r, tmp, sizeof(tmp), &target, &lockfd) < 0)
		goto out;
	rec_fill_host(r, &host);
	memset(&wo, 0, sizeof(wo));
	wo.level = o->level;
	wo.threaded = 1;	/* zstd on the writer's thread: reading never waits */
	r->w = dtcap_create(tmp, &host, &wo);
	if (r->w == NULL) {
		rec_msg(r, "%s", dtcap_create_error());
		goto out;
	}
	if (rec_write_metadata(r, sel, nsel, ksyms, ksymslen, mods, modslen) < 0)
		goto finish;
	free(ksyms);
	free(mods);
	ksyms = mods = NULL;
	/* out before the first event, so sizes and ratios can leave it aside */
	if (dtcap_flush(r->w) < 0) {
		rec_msg(r, "%s", dtcap_writer_error(r->w));
		r->werr = 1;
		goto finish;
	}
	r->base_bytes = dtcap_bytes_written(r->w);
	if (r->src->ops->start(r->src, err, sizeof(err)) < 0) {
		rec_msg(r, "%s", err);
		goto finish;
	}
	recording = 1;
	start = last_status = last_counters = last_flush = dtu_now_ns();
	{
		/* an eighth of all rings: small rings must not wait long */
		uint64_t all = (uint64_t)(o->bufsize ? o->bufsize : DT_BUFSZ_DEFAULT) * r->ncpus;
		backlog = all / 8 < BACKLOG ? (size_t)(all / 8) : BACKLOG;
	}
	if (child > 0 && rec_release_child(r, &go_fd, err_fd, &child, &cmd_status) < 0) {
		failed = 1;
		goto finish;
	}
	/* recording runs: now the capture may take the output's name */
	if (target && rename(tmp, target) < 0) {
		rec_msg(r, "%s: %s", o->output, strerror(errno));
		failed = 1;
		goto finish;
	}
	renamed = 1;
	dtu_out_tmp_forget();
	if (o->sync)
		syncfd = open(o->output, O_RDONLY | O_CLOEXEC);

	for (;;) {
		int timeout = POLL_MS;
		ssize_t got;

		if (o->stop && *o->stop)
			break;
		now = dtu_now_ns();
		if (o->duration_ns) {
			if (now - start >= o->duration_ns)
				break;
			uint64_t left = (o->duration_ns - (now - start)) / 1000000 + 1;
			if (left < (uint64_t)timeout)
				timeout = (int)left;
		}
		if (child > 0 && waitpid(child, &cmd_status, WNOHANG) == child) {
			child = -1;
			break;
		}
		if (r->tg.n && dtrec_targets_gone(&r->tg))
			break;
		got = rec_drain_once(r, buf);
		if (got < 0) {
			failed = 1;
			break;
		}
		if (r->werr)
			break;
		now = dtu_now_ns();
		if (now - last_counters >= COUNTERS_NS) {
			rec_put_counters(r);
			last_counters = now;
		}
		/* a killed recorder loses at most one interval of events */
		if (now - last_flush >= flush_ns) {
			/* what the rings hold now goes out with this flush */
			if (rec_drain_once(r, buf) < 0) {
				failed = 1;
				break;
			}
			uint64_t ev = dtcap_events_written(r->w);
			if (ev != flushed_events) {
				if (rec_put_kused(r) < 0 || dtcap_flush(r->w) < 0) {
					rec_msg(r, "%s", dtcap_writer_error(r->w));
					r->werr = 1;
					break;
				}
				if (syncfd >= 0)
					(void)fdatasync(syncfd);
				flushed_events = ev;
			}
			last_flush = now;
		}
		if (r->tty && now - last_status >= STATUS_NS) {
			status_line(r, now - start);
			last_status = now;
		}
		/*
		 * A backlog is read again at once.  A trickle waits a little
		 * before the next read: reading as soon as anything is there
		 * would feed on itself when syscalls are traced, since every
		 * read is an event.  The rings hold far more than one pause.
		 */
		if ((size_t)got >= backlog)
			continue;
		if (got > 0 && !r->src->ops->watermark) {
			int pause = (size_t)got < backlog / 4 ? PAUSE_MS : PAUSE_MS / 5;
			(void)poll(NULL, 0, timeout < pause ? timeout : pause);
		} else
			r->src->ops->wait(r->src, timeout);
	}

finish:
	now = dtu_now_ns();
	if (recording) {
		if (r->src->ops->stop(r->src, err, sizeof(err)) < 0)
			rec_msg(r, "%s", err);
		/* after the stop nothing new arrives: empty the rings completely */
		for (int i = 0; i < 100000; i++)
			if (rec_drain_once(r, buf) <= 0)
				break;
		rec_jit_final(r);
		rec_put_counters(r);
	}
	if (child > 0) {
		rec_reap(r, child, &cmd_status);
		child = -1;
		if (go_fd >= 0)
			cmd_status = -1;	/* never released: it ran nothing */
	}
	rec_take_terminal(r);
	if (r->tty && recording)
		fputs("\r\033[K", r->st);
	if (r->w) {
		uint64_t bytes;
		if (recording && !r->werr && r->srcl &&
		    srcl_write(r->srcl, r->w, &r->srcl_st) < 0) {
			rec_msg(r, "%s", dtcap_writer_error(r->w));
			r->werr = 1;
		}
		if (recording && !r->werr && (rec_put_kused(r) < 0 || dtcap_flush(r->w) < 0)) {
			rec_msg(r, "%s", dtcap_writer_error(r->w));
			r->werr = 1;
		}
		r->sym_bytes = dtcap_symbol_bytes(r->w);	/* final: flushed */
		r->srcl_bytes = dtcap_srcline_bytes(r->w);
		if (dtcap_close(r->w) < 0) {
			if (!r->werr)
				rec_msg(r, "%s: cannot finalize the capture", o->output);
			r->werr = 1;
		}
		r->w = NULL;
		bytes = 0;
		{
			struct stat st;
			if (stat(renamed ? o->output : tmp, &st) == 0)
				bytes = (uint64_t)st.st_size;
		}
		/* the summary comes after the footer: a closed pipe cannot cost the capture */
		if (recording && renamed)
			summary(r, now - start, cmd_status, bytes);
		if (res) {
			struct dtcap_count t;
			rec_sum_counts(r, &t);
			res->events = r->nread - r->nlost - r->nbad;
			res->bytes = bytes;
			res->raw_bytes = r->raw_bytes;
			res->produced = t.produced;
			res->dropped = t.dropped;
			res->skipped = t.skipped;
			res->recursive = t.recursive;
			res->elapsed_ns = recording ? now - start : 0;
			res->cmd_status = cmd_status;
			if (r->src && r->src->ops->ustack_counts)
				r->src->ops->ustack_counts(r->src, &res->ustack_dwarf,
							   &res->ustack_dwarf_trunc,
							   &res->ustack_fp_behind);
		}
		if (recording && renamed && !r->werr && !failed)
			ret = 0;
	}
out:
	if (tmp[0] && !renamed && target) {
		unlink(tmp);
		dtu_out_tmp_forget();
	}
	free(target);
	if (lockfd >= 0)
		close(lockfd);
	if (syncfd >= 0) {
		(void)fdatasync(syncfd);
		close(syncfd);
	}
	if (go_fd >= 0)
		close(go_fd);
	if (cgfd >= 0)
		close(cgfd);
	if (err_fd >= 0)
		close(err_fd);
	if (child > 0)
		rec_reap(r, child, &cmd_status);
	rec_take_terminal(r);
	if (res)
		res->not_run = r->not_run;
	dtrec_targets_close(&r->tg);
	dtsrc_close(r->src);
	dtm_free(r->m);
	elfsyms_cache_free(r->ec);
	jitmap_cache_free(r->jc);
	srcl_free(r->srcl);
	kused_free(r->kused);
	rec_tmap_free(&r->comms);
	rec_tmap_free(&r->procs);
	free(r->counts);
	free(sel);
	free(tsel);
	free(ksyms_keep);
	free(buf);
	free(ksyms);
	free(mods);
	return ret;
}
