/* src_dt.c - the /dev/dt source (dt.ko); see source.h. */
#include "source.h"

#include <errno.h>
#include <poll.h>
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
};

static int
dt_enable(struct dtsrc *s, const struct dtp_sel *sel, size_t nsel,
	  const struct dtsrc_cfg *cfg, char *err, size_t errlen)
{
	int fd = dtp_fd(s->dev);

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
	if (ioctl(dtp_fd(s->dev), DTIOCRECORD, &on) < 0) {
		dtu_seterr(err, errlen, "/dev/dt: %s recording: %s", on ? "start" : "stop",
			   strerror(errno));
		return -1;
	}
	return 0;
}

static int dt_start(struct dtsrc *s, char *err, size_t errlen) { return dt_record(s, 1, err, errlen); }
static int dt_stop(struct dtsrc *s, char *err, size_t errlen) { return dt_record(s, 0, err, errlen); }

static ssize_t
dt_read(struct dtsrc *s, char *buf, size_t len, char *err, size_t errlen)
{
	ssize_t n = read(dtp_fd(s->dev), buf, len);

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
		out[i].produced = d->cpustats[i].dtst_produced;
		out[i].read = d->cpustats[i].dtst_read;
		out[i].dropped = d->cpustats[i].dtst_dropped;
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

static int dt_filters_targets(struct dtsrc *s) { (void)s; return 0; }

static void
dt_close(struct dtsrc *s)
{
	struct src_dt *d = (struct src_dt *)s;

	dtp_close(s->dev);
	free(d->cpustats);
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
	return &d->s;
}

struct dtsrc *
dtsrc_new(struct dtp_dev *dev, char *err, size_t errlen)
{
	if (dtp_kind(dev) == DTP_PERF)
		return dtsrc_perf_new(dev, err, errlen);
	return dtsrc_dt_new(dev, err, errlen);
}
