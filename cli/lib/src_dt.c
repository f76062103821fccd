/* src_dt.c - the /dev/dt source (dt.ko); see source.h. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "dt_abi.h"
#include "util.h"

struct src_dt {
	struct dtsrc	s;
	struct dt_stats	*cpustats;	/* [r] scratch for DTIOCGCPUSTATS */
	uint32_t	ncpus;
	int		flight;		/* [I] the rings overwrite (DT_RING_OVERWRITE) */
	int		dumping;	/* between dump(1) and dump(0): frozen */
	uint64_t	*readbase;	/* flight: per CPU, read before this dump */
	uint32_t	nreadbase;
	/*
	 * flight: a second descriptor with the trigger probes alone, in a
	 * small ring that drops: every record read from it is one firing.
	 */
	int		trigfd;
	uint64_t	ntrig;
};

/*
 * The kernel keeps only the targets' events (DTIOCSETFILTER): the listed
 * processes and, followed at fork, their descendants; a COMMAND waiting to
 * exec becomes one at its exec.  Every descriptor leaves dtrec itself out.
 */
static int
dt_filter(int fd, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	struct dt_filter f;
	uint32_t *pids = NULL;

	memset(&f, 0, sizeof(f));
	if (cfg->npids || cfg->child > 0) {
		if (cfg->npids > DT_FILTER_MAXPIDS) {
			dtu_seterr(err, errlen, "at most %u processes (-p)", DT_FILTER_MAXPIDS);
			return -1;
		}
		if (cfg->npids && (pids = calloc(cfg->npids, sizeof(*pids))) == NULL) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		for (size_t i = 0; i < cfg->npids; i++)
			pids[i] = (uint32_t)cfg->pids[i];
		f.dtf_flags = DTF_PIDS | DTF_CHILDREN;
		f.dtf_npids = (uint32_t)cfg->npids;
		f.dtf_pids = (uint64_t)(uintptr_t)pids;
		f.dtf_execpid = cfg->child > 0 ? (uint32_t)cfg->child : 0;
	}
	if (ioctl(fd, DTIOCSETFILTER, &f) < 0) {
		int e = errno;
		if (e == ESRCH && cfg->npids)
			dtu_seterr(err, errlen, "-p: a process given is not running (or is a thread, "
				   "not a process)");
		else
			dtu_seterr(err, errlen, "/dev/dt: setting the process filter: %s", strerror(e));
		free(pids);
		return -1;
	}
	free(pids);
	return 0;
}

/* flight: the trigger probes on a descriptor of their own */
static int
dt_trig_open(struct src_dt *d, const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	char path[64];
	uint32_t sz = DT_BUFSZ_MIN;

	/* the same device, whatever its path: a new open is a new descriptor */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dtp_fd(d->s.dev));
	d->trigfd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (d->trigfd < 0) {
		dtu_seterr(err, errlen, "/dev/dt: opening it for --trigger: %s", strerror(errno));
		return -1;
	}
	if (ioctl(d->trigfd, DTIOCSETBUFSZ, &sz) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: --trigger ring: %s", strerror(errno));
		return -1;
	}
	/* a trigger counts every process but dtrec, targets or not (as on perf) */
	struct dtsrc_cfg all = *cfg;
	all.pids = NULL;
	all.npids = 0;
	all.child = 0;
	if (dt_filter(d->trigfd, &all, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < cfg->ntrig; i++) {
		struct dt_enable en;

		memset(&en, 0, sizeof(en));
		en.dten_id = cfg->trig[i].id;
		en.dten_period_ns = cfg->trig[i].period_ns;
		if (cfg->trig[i].flags & DT_PF_TIMER) {
			const struct dt_probe_info *p = dtp_by_id(d->s.dev, cfg->trig[i].id);
			char nm[DTCAP_PROBENAMELEN];
			dtu_seterr(err, errlen, "--trigger %s: a timer probe cannot trigger a dump",
				   p ? dtp_name(p, nm, sizeof(nm)) : "probe");
			return -1;
		}
		if (ioctl(d->trigfd, DTIOCPRBENABLE, &en) < 0 && errno != EEXIST) {
			dtu_seterr(err, errlen, "--trigger: enabling probe %u: %s", cfg->trig[i].id,
				   strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int
dt_enable(struct dtsrc *s, const struct dtp_sel *sel, size_t nsel,
	  const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	int fd = dtp_fd(s->dev);

	if (cfg->trig_filter) {
		dtu_seterr(err, errlen, "--trigger-filter needs the perf source (--source perf): "
			   "dt.ko has no tracefs filters");
		return -1;
	}
	if (dt_filter(fd, cfg, err, errlen) < 0)
		return -1;
	if (cfg->flight) {
		uint32_t m = DT_RING_OVERWRITE;
		if (ioctl(fd, DTIOCSETRMODE, &m) < 0) {
			dtu_seterr(err, errlen, "/dev/dt: overwriting rings: %s", strerror(errno));
			return -1;
		}
		d->flight = 1;
		if (cfg->ntrig && dt_trig_open(d, cfg, err, errlen) < 0)
			return -1;
	}
	if (cfg->bufsize && ioctl(fd, DTIOCSETBUFSZ, &cfg->bufsize) < 0) {
		dtu_seterr(err, errlen, "ring size %u: %s (a power of two from %u to %u bytes)",
			   cfg->bufsize, strerror(errno), DT_BUFSZ_MIN, DT_BUFSZ_MAX);
		return -1;
	}
	for (size_t i = 0; i < nsel; i++) {
		struct dt_enable en;
		char nm[DTCAP_PROBENAMELEN];

		memset(&en, 0, sizeof(en));
		en.dten_id = sel[i].id;
		en.dten_evtflags = (sel[i].flags & DT_PF_TIMER) ? cfg->timer_evtflags : cfg->evtflags;
		en.dten_period_ns = sel[i].period_ns;
		if (ioctl(fd, DTIOCPRBENABLE, &en) < 0) {
			const struct dt_probe_info *p = dtp_by_id(s->dev, sel[i].id);
			dtu_seterr(err, errlen, "enabling %s: %s",
				   p ? dtp_name(p, nm, sizeof(nm)) : "probe", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int
dt_record(struct dtsrc *s, uint32_t on, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;

	/* triggers first on, last off: none fires unseen while the rings record */
	if (on && d->trigfd >= 0 && ioctl(d->trigfd, DTIOCRECORD, &on) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: start recording the triggers: %s", strerror(errno));
		return -1;
	}
	if (ioctl(dtp_fd(s->dev), DTIOCRECORD, &on) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: %s recording: %s", on ? "start" : "stop",
			   strerror(errno));
		return -1;
	}
	if (!on && d->trigfd >= 0)
		(void)ioctl(d->trigfd, DTIOCRECORD, &on);
	return 0;
}

static int dt_start(struct dtsrc *s, char *err, size_t errlen) { return dt_record(s, 1, err, errlen); }
static int dt_stop(struct dtsrc *s, char *err, size_t errlen) { return dt_record(s, 0, err, errlen); }

static ssize_t
dt_read(struct dtsrc *s, char *buf, size_t len, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	ssize_t n;

	/* an overwriting ring is read only by a dump (frozen) */
	if (d->flight && !d->dumping)
		return 0;
	n = read(dtp_fd(s->dev), buf, len);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		dtu_seterr(err, errlen, "/dev/dt: read: %s", strerror(errno));
		return -1;
	}
	return n;
}

static void
dt_wait(struct dtsrc *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = dtp_fd(s->dev), .events = POLLIN };

	(void)poll(&pfd, 1, timeout_ms);
}

static int
dt_counters(struct dtsrc *s, struct dtcap_count *out, uint32_t cap, uint32_t *ncpus,
	    char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	struct dt_cpu_stats cs;

	if (d->ncpus < cap) {
		struct dt_stats *n = realloc(d->cpustats, cap * sizeof(*n));
		if (n == NULL) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		d->cpustats = n;
		d->ncpus = cap;
	}
	memset(d->cpustats, 0, cap * sizeof(*d->cpustats));
	memset(&cs, 0, sizeof(cs));
	cs.dtcs_ncpus = cap;
	cs.dtcs_stats = (uint64_t)(uintptr_t)d->cpustats;
	if (ioctl(dtp_fd(s->dev), DTIOCGCPUSTATS, &cs) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: counters: %s", strerror(errno));
		return -1;
	}
	*ncpus = cs.dtcs_ncpus;
	for (uint32_t i = 0; i < cs.dtcs_ncpus && i < cap; i++) {
		const struct dt_stats *st = &d->cpustats[i];
		out[i].produced = st->dtst_produced;
		out[i].read = st->dtst_read;
		/*
		 * A dump counts what it read; everything else fired since enable
		 * is gone from its point of view: overwritten, dropped while
		 * frozen, or read by an earlier dump (source.h).
		 */
		out[i].dropped = st->dtst_dropped + st->dtst_overwritten;
		if (d->flight) {
			uint64_t base = i < d->nreadbase ? d->readbase[i] : 0;
			out[i].read = st->dtst_read - base;
			out[i].dropped += base;
		}
		out[i].skipped = d->cpustats[i].dtst_skipped;
		out[i].recursive = d->cpustats[i].dtst_recursive;
		out[i].nested = d->cpustats[i].dtst_nested;
	}
	return 0;
}

static void
dt_clock(struct dtsrc *s, uint64_t *mono, int64_t *real)
{
	struct dt_clock ck;
	struct timespec ts;

	memset(&ck, 0, sizeof(ck));
	if (ioctl(dtp_fd(s->dev), DTIOCGCLOCK, &ck) == 0) {
		*mono = ck.dtck_mono_ns;
		*real = ck.dtck_real_ns;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	*mono = dtu_now_ns();
	*real = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const struct dtsrc_proc *
dt_proc(struct dtsrc *s, uint32_t pid)
{
	(void)s;
	(void)pid;
	return NULL;	/* dt.ko reports no mappings yet: record.c reads /proc */
}

static int dt_filters_targets(struct dtsrc *s) { (void)s; return 1; }

/*
 * Freeze: the kernel returns once no event is being written; reads then
 * return what the rings hold, and 0 at the end.  The counters' read
 * before this dump is kept so that the dump counts only its own.
 */
static int
dt_dump(struct dtsrc *s, int begin, char *err, size_t errlen)
{
	struct src_dt *d = (struct src_dt *)s;
	uint32_t v = begin ? 1 : 0;

	if (!d->flight) {
		dtu_seterr(err, errlen, "not a flight recording");
		return -1;
	}
	if (begin) {
		struct dt_cpu_stats cs;
		uint32_t n = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
		uint64_t *rb;
		struct dt_stats *st;

		if (n < 1)
			n = 1;
		for (;;) {
			if ((st = calloc(n, sizeof(*st))) == NULL) {
				dtu_seterr(err, errlen, "out of memory");
				return -1;
			}
			memset(&cs, 0, sizeof(cs));
			cs.dtcs_ncpus = n;
			cs.dtcs_stats = (uint64_t)(uintptr_t)st;
			if (ioctl(dtp_fd(s->dev), DTIOCFREEZE, &v) < 0 ||
			    ioctl(dtp_fd(s->dev), DTIOCGCPUSTATS, &cs) < 0) {
				dtu_seterr(err, errlen, "/dev/dt: freezing the rings: %s", strerror(errno));
				free(st);
				return -1;
			}
			if (cs.dtcs_ncpus <= n)
				break;
			n = cs.dtcs_ncpus;
			free(st);
		}
		if ((rb = realloc(d->readbase, n * sizeof(*rb))) == NULL) {
			free(st);
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		d->readbase = rb;
		d->nreadbase = n;
		for (uint32_t i = 0; i < n; i++)
			rb[i] = st[i].dtst_read;
		free(st);
		d->dumping = 1;
		return 0;
	}
	d->dumping = 0;
	if (ioctl(dtp_fd(s->dev), DTIOCFREEZE, &v) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: thawing the rings: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Each record on the trigger descriptor is one firing of a trigger. */
static uint64_t
dt_triggered(struct dtsrc *s)
{
	struct src_dt *d = (struct src_dt *)s;
	char buf[16384];
	ssize_t n;

	if (d->trigfd < 0)
		return 0;
	while ((n = read(d->trigfd, buf, sizeof(buf))) > 0) {
		for (size_t off = 0; off + sizeof(struct dt_rec) <= (size_t)n;) {
			const struct dt_rec *r = (const struct dt_rec *)(buf + off);
			if (r->dtr_size < sizeof(*r) || r->dtr_size > (size_t)n - off)
				break;
			d->ntrig++;
			off += r->dtr_size;
		}
	}
	return d->ntrig;
}

static void
dt_close(struct dtsrc *s)
{
	struct src_dt *d = (struct src_dt *)s;

	dtp_close(s->dev);
	if (d->trigfd >= 0)
		close(d->trigfd);
	free(d->cpustats);
	free(d->readbase);
	free(d);
}

static const struct dtsrc_ops dt_ops = {
	.name = "dt",
	.enable = dt_enable,
	.start = dt_start,
	.stop = dt_stop,
	.read = dt_read,
	.wait = dt_wait,
	.counters = dt_counters,
	.clock = dt_clock,
	.proc = dt_proc,
	.filters_targets = dt_filters_targets,
	.dump = dt_dump,
	.triggered = dt_triggered,
	.close = dt_close,
};

struct dtsrc *
dtsrc_dt_new(struct dtp_dev *dev, char *err, size_t errlen)
{
	struct src_dt *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		dtu_seterr(err, errlen, "out of memory");
		dtp_close(dev);
		return NULL;
	}
	d->s.ops = &dt_ops;
	d->s.dev = dev;
	d->trigfd = -1;
	return &d->s;
}

struct dtsrc *
dtsrc_new(struct dtp_dev *dev, char *err, size_t errlen)
{
	if (dtp_kind(dev) == DTP_PERF)
		return dtsrc_perf_new(dev, err, errlen);
	return dtsrc_dt_new(dev, err, errlen);
}
