/* probes.c - see probes.h. */
#include "dt_grow.h"
#include "probes.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "insn.h"
#include "provkind.h"
#include "sysargs.h"
#include "tracefs.h"
#include "util.h"

/* What the perf catalog needs to open a probe's event. */
struct dtp_perf {
	char		sys[64];	/* tracefs subsystem, or kprobe function */
	char		ev[64];		/* tracefs event name */
	struct dtp_uprobe *up;		/* user-space probes, owned; else NULL */
};

/* All members [I] once loaded, except that kprobes append (load_probes). */
struct dtp_dev {
	int		kind;		/* DTP_DT or DTP_PERF */
	int		fd;		/* /dev/dt; -1 for perf */
	char		path[256];	/* /dev/dt, or the tracefs root */
	struct dt_probe_info *probes;
	size_t		nprobes, cap;
	char		**names;	/* "prov:func:name" per probe */
	struct dtp_perf	*perf;		/* DTP_PERF: per probe, same index */
	int		has_kprobe_pmu;	/* DTP_PERF */
	int		has_uprobe_pmu;	/* DTP_PERF */
	char		no_tracefs[256];	/* DTP_PERF: why only the timer probes */
	size_t		nusites;	/* uprobe sites created (DTP_MAXUSITES) */
	/*
	 * DTP_DT: the uprobes this catalog created (DTIOCUPROBE), by kernel
	 * id, with their full names: the kernel lists only a short label.
	 */
	struct dtp_dtup	*dtup;
	size_t		ndtup, dtupcap;
};

struct dtp_dtup {
	uint32_t	id;
	char		*full;		/* "uprobe:/bin/x:main:entry" */
};

static const char *
dtup_full(const struct dtp_dev *d, uint32_t id)
{
	for (size_t i = 0; i < d->ndtup; i++)
		if (d->dtup[i].id == id)
			return d->dtup[i].full;
	return NULL;
}


void
dtp_strerror(int e, const char *what, char *err, size_t errlen)
{
	if (e == ENOENT || e == ENXIO || e == ENODEV)
		dtu_seterr(err, errlen, "%s: no such device: is the dt module loaded? (see dt(4))", what);
	else if (e == EACCES || e == EPERM)
		dtu_seterr(err, errlen, "%s: %s: needs root or CAP_PERFMON", what, strerror(e));
	else
		dtu_seterr(err, errlen, "%s: %s", what, strerror(e));
}

static void
free_names(struct dtp_dev *d)
{
	for (size_t i = 0; d->names && i < d->nprobes; i++)
		free(d->names[i]);
	free(d->names);
	d->names = NULL;
}

/* (Re)load the probe table: after a kprobe is created the list grows. */
static int
load_probes(struct dtp_dev *d, char *err, size_t errlen)
{
	struct dt_probe_list pl;
	struct dt_probe_info *v = NULL;
	uint32_t cap = 1024;

	for (;;) {
		struct dt_probe_info *nv = realloc(v, cap * sizeof(*v));
		if (nv == NULL) {
			free(v);
			dtu_seterr(err, errlen, "%s: out of memory", d->path);
			return -1;
		}
		v = nv;
		memset(&pl, 0, sizeof(pl));
		pl.dtpl_count = cap;
		pl.dtpl_probes = (uint64_t)(uintptr_t)v;
		if (ioctl(d->fd, DTIOCGPLIST, &pl) < 0) {
			int e = errno;
			free(v);
			dtu_seterr(err, errlen, "%s: listing probes: %s", d->path, strerror(e));
			return -1;
		}
		if (pl.dtpl_count <= cap)
			break;
		cap = pl.dtpl_count + 64;
	}
	free_names(d);
	free(d->probes);
	d->probes = v;
	d->nprobes = pl.dtpl_count;
	d->names = calloc(d->nprobes ? d->nprobes : 1, sizeof(char *));
	if (d->names == NULL) {
		dtu_seterr(err, errlen, "%s: out of memory", d->path);
		return -1;
	}
	for (size_t i = 0; i < d->nprobes; i++) {
		char buf[DTCAP_PROBENAMELEN];
		/* the kernel promises NUL-terminated fields; do not trust it blindly */
		d->probes[i].dtpi_prov[DT_PROVLEN - 1] = '\0';
		d->probes[i].dtpi_func[DT_FUNCLEN - 1] = '\0';
		d->probes[i].dtpi_name[DT_NAMELEN - 1] = '\0';
		d->names[i] = strdup(dtp_name(&d->probes[i], buf, sizeof(buf)));
		if (d->names[i] == NULL) {
			dtu_seterr(err, errlen, "%s: out of memory", d->path);
			return -1;
		}
	}
	return 0;
}

struct dtp_dev *
dtp_open(const char *path, int rw, char *err, size_t errlen)
{
	struct dtp_dev *d;
	uint32_t ver = 0;

	if (path == NULL)
		path = DT_DEVICE;
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		dtu_seterr(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	snprintf(d->path, sizeof(d->path), "%s", path);
	d->fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK);
	if (d->fd < 0) {
		int e = errno;
		dtp_strerror(e, path, err, errlen);
		free(d);
		errno = e;	/* dtp_open_source tells "no device" from the rest */
		return NULL;
	}
	if (ioctl(d->fd, DTIOCGVERSION, &ver) < 0) {
		int e = errno;
		if (e == ENOTTY || e == EINVAL)
			dtu_seterr(err, errlen, "%s: not a dt device (DTIOCGVERSION: %s)", path, strerror(e));
		else
			dtp_strerror(e, path, err, errlen);
		goto fail;
	}
	if (ver != DT_ABI_VERSION) {
		dtu_seterr(err, errlen, "%s: ABI version %u, but this tool speaks version %u: "
		       "use tools and module from the same build", path, ver, DT_ABI_VERSION);
		goto fail;
	}
	if (load_probes(d, err, errlen) < 0)
		goto fail;
	return d;
fail:
	dtp_close(d);
	errno = EPROTO;	/* a device was there: not a reason to use another source */
	return NULL;
}

void
dtp_close(struct dtp_dev *d)
{
	if (d == NULL)
		return;
	if (d->fd >= 0)
		close(d->fd);
	for (size_t i = 0; d->perf && i < d->nprobes; i++) {
		if (d->perf[i].up) {
			free(d->perf[i].up->path);
			free(d->perf[i].up->sites);
			free(d->perf[i].up);
		}
	}
	free_names(d);
	for (size_t i = 0; i < d->ndtup; i++)
		free(d->dtup[i].full);
	free(d->dtup);
	free(d->probes);
	free(d->perf);
	free(d);
}

/* ------------------------------------------------- the perf catalog */

static int
add_probe(struct dtp_dev *d, const char *prov, const char *func, const char *name,
	  uint16_t flags, const char *sys, const char *ev)
{
	struct dt_probe_info *p;
	char buf[DTCAP_PROBENAMELEN];

	/* three arrays share cap: the last to grow sets it */
	size_t c1 = d->cap, c2 = d->cap;
	if (DT_GROW(d->probes, c1, d->nprobes, 1, 1024) ||
	    DT_GROW(d->names, c2, d->nprobes, 1, 1024) ||
	    DT_GROW(d->perf, d->cap, d->nprobes, 1, 1024))
		return -1;
	p = &d->probes[d->nprobes];
	memset(p, 0, sizeof(*p));
	p->dtpi_id = (uint32_t)d->nprobes + 1;
	p->dtpi_flags = flags;
	snprintf(p->dtpi_prov, DT_PROVLEN, "%s", prov);
	snprintf(p->dtpi_func, DT_FUNCLEN, "%s", func);
	snprintf(p->dtpi_name, DT_NAMELEN, "%s", name);
	snprintf(d->perf[d->nprobes].sys, sizeof(d->perf[0].sys), "%s", sys);
	snprintf(d->perf[d->nprobes].ev, sizeof(d->perf[0].ev), "%s", ev);
	d->perf[d->nprobes].up = NULL;
	if ((d->names[d->nprobes] = strdup(dtp_name(p, buf, sizeof(buf)))) == NULL)
		return -1;
	d->nprobes++;
	return 0;
}

/*
 * tracefs names the dt way: syscalls/sys_enter_X is syscall:X:entry,
 * other events tracepoint:SYS:NAME.  ftrace's own events are not
 * tracepoints perf can open.
 */
static int
perf_walk(const char *sys, const char *ev, void *ctx)
{
	struct dtp_dev *d = ctx;

	if (strcmp(sys, "ftrace") == 0)
		return 0;
	if (strcmp(sys, "syscalls") == 0) {
		if (strncmp(ev, "sys_enter_", 10) == 0)
			return add_probe(d, dtp_kind_name(DTPK_SYSCALL), ev + 10, "entry", 0, sys, ev);
		if (strncmp(ev, "sys_exit_", 9) == 0)
			return add_probe(d, dtp_kind_name(DTPK_SYSCALL), ev + 9, "return", DT_PF_RETURN, sys,
					 ev);
		return 0;
	}
	if (strlen(sys) >= DT_FUNCLEN || strlen(ev) >= DT_NAMELEN)
		return 0;	/* cannot be named in the capture: leave it out */
	return add_probe(d, dtp_kind_name(DTPK_TRACEPOINT), sys, ev, 0, sys, ev);
}

static struct dtp_dev *
open_perf(char *err, size_t errlen)
{
	struct dtp_dev *d = calloc(1, sizeof(*d));
	const char *root;
	struct stat st;

	if (d == NULL) {
		dtu_seterr(err, errlen, "out of memory");
		return NULL;
	}
	d->kind = DTP_PERF;
	d->fd = -1;
	if (access("/proc/sys/kernel/perf_event_paranoid", F_OK) != 0) {
		dtu_seterr(err, errlen, "this kernel has no perf_event support "
			   "(/proc/sys/kernel/perf_event_paranoid is missing)");
		goto fail;
	}
	/* the timer probes, as dt.ko lists them: the rate comes from the spec */
	if (add_probe(d, dtp_kind_name(DTPK_PROFILE), "hz", "97", DT_PF_TIMER, "", "") < 0 ||
	    add_probe(d, dtp_kind_name(DTPK_INTERVAL), "hz", "1", DT_PF_TIMER, "", "") < 0)
		goto nomem;
	d->has_kprobe_pmu = stat("/sys/bus/event_source/devices/kprobe/type", &st) == 0;
	d->has_uprobe_pmu = stat("/sys/bus/event_source/devices/uprobe/type", &st) == 0;
	root = dtt_root(d->no_tracefs, sizeof(d->no_tracefs));
	if (root == NULL) {
		/* profile and interval still work without tracefs: said on use */
		snprintf(d->path, sizeof(d->path), "%s", "");
		return d;
	}
	snprintf(d->path, sizeof(d->path), "%s", root);
	if (dtt_walk(root, perf_walk, d, err, errlen) != 0) {
		if (d->nprobes == 0 || err[0] == '\0')
			goto nomem;
		goto fail;
	}
	return d;
nomem:
	dtu_seterr(err, errlen, "out of memory");
fail:
	dtp_close(d);
	return NULL;
}

struct dtp_dev *
dtp_open_source(const char *source, const char *device, int rw, char *err, size_t errlen)
{
	struct dtp_dev *d;
	char derr[DTP_ERRLEN];

	if (source && strcmp(source, "perf") == 0)
		return open_perf(err, errlen);
	if (source && strcmp(source, "dt") != 0) {
		dtu_seterr(err, errlen, "unknown source '%s' (dt or perf)", source);
		return NULL;
	}
	d = dtp_open(device, rw, source ? err : derr, source ? errlen : sizeof(derr));
	if (d || source)
		return d;
	/*
	 * Only a missing device means "no dt.ko here": a device that refuses
	 * us or speaks another ABI is reported, not quietly replaced.
	 */
	if (errno != ENOENT && errno != ENODEV && errno != ENXIO) {
		dtu_seterr(err, errlen, "%s", derr);
		return NULL;
	}
	/* no dt.ko here (the usual case): the perf_event source needs no module */
	d = open_perf(err, errlen);
	if (d == NULL) {
		char perr[DTP_ERRLEN];
		snprintf(perr, sizeof(perr), "%s", err);
		dtu_seterr(err, errlen, "no source can record here: %s; and perf: %s", derr, perr);
	}
	return d;
}

int dtp_kind(const struct dtp_dev *d) { return d->kind; }
const char *dtp_tracefs(const struct dtp_dev *d) { return d->kind == DTP_PERF ? d->path : NULL; }
const char *dtp_missing(const struct dtp_dev *d) { return d->no_tracefs[0] ? d->no_tracefs : NULL; }

int
dtp_perf_event(const struct dtp_dev *d, uint32_t id, const char **sys, const char **ev)
{
	if (d->kind != DTP_PERF || id == 0 || id > d->nprobes)
		return -1;
	*sys = d->perf[id - 1].sys;
	*ev = d->perf[id - 1].ev;
	return 0;
}

/* A return probe's arguments: retval (slot 0), and errno (slot 1) when n is 2. */
static void
describe_return(struct dtcap_probe *out, unsigned n)
{
	static const char *const names[2] = { "retval", "errno" }, *const types[2] = { "long", "int" };

	out->nargs = n;
	for (unsigned i = 0; i < n; i++) {
		snprintf(out->args[i].name, DTCAP_ARGNAMELEN, "%s", names[i]);
		snprintf(out->args[i].type, DTCAP_ARGNAMELEN, "%s", types[i]);
		out->args[i].slot = (uint8_t)i;
		out->args[i].nslots = 1;
	}
}

/* n register-sized arguments named arg0... */
static void
describe_args(struct dtcap_probe *out, unsigned n)
{
	out->nargs = n;
	for (unsigned i = 0; i < n; i++) {
		snprintf(out->args[i].name, DTCAP_ARGNAMELEN, "arg%u", i);
		snprintf(out->args[i].type, DTCAP_ARGNAMELEN, "long");
		out->args[i].slot = (uint8_t)i;
		out->args[i].nslots = 1;
	}
}

/*
 * uprobe entries: the six argument registers; returns: rax as retval and
 * an errno slot that is always 0 (a user function has no errno
 * convention), so they read like syscall returns; USDT: the note's
 * arguments.
 */
static void
describe_user(const struct dtp_uprobe *up, struct dtcap_probe *out)
{
	unsigned n = 0;

	if (up->ret) {
		describe_return(out, 2);
		return;
	}
	if (!up->usdt)
		n = 6;
	for (size_t i = 0; up->usdt && i < up->nsites; i++)
		if (up->sites[i].nargs > n)
			n = up->sites[i].nargs;
	describe_args(out, n);
}

/* Arguments of a perf probe: from the tracepoint's format, in dt's slots. */
static int
describe_perf(struct dtp_dev *d, const struct dt_probe_info *p, struct dtcap_probe *out,
	      char *err, size_t errlen)
{
	const struct dtp_perf *pp = &d->perf[p->dtpi_id - 1];
	struct dtt_format *fmt;
	struct dtt_layout lay;

	if (dtp_kind_flags(dtp_kind_of(p->dtpi_prov)) & DTPK_TIMER)
		return 0;
	if (pp->up) {
		describe_user(pp->up, out);
		snprintf(out->name, sizeof(out->name), "%s", d->names[p->dtpi_id - 1]);
		return 0;
	}
	if (dtp_kind_of(p->dtpi_prov) == DTPK_KPROBE) {
		/* as dt.ko stores them: the source samples the registers */
		if (p->dtpi_flags & DT_PF_RETURN)
			describe_return(out, 2);
		else
			describe_args(out, 6);
		return 0;
	}
	if (p->dtpi_flags & DT_PF_RETURN) {
		/* as dt.ko stores them: the return value and, on failure, errno */
		describe_return(out, 2);
		return 0;
	}
	if ((fmt = malloc(sizeof(*fmt))) == NULL) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	if (dtt_read_format(d->path, pp->sys, pp->ev, fmt, err, errlen) < 0) {
		free(fmt);
		return -1;
	}
	/* syscall entries: __syscall_nr is the probe itself, not an argument */
	dtt_layout(fmt, dtp_kind_of(p->dtpi_prov) == DTPK_SYSCALL ? 1 : 0, &lay, out);
	free(fmt);
	return 0;
}


int dtp_fd(const struct dtp_dev *d) { return d->fd; }
size_t dtp_count(const struct dtp_dev *d) { return d->nprobes; }

const struct dt_probe_info *
dtp_at(const struct dtp_dev *d, size_t i)
{
	return i < d->nprobes ? &d->probes[i] : NULL;
}

const struct dt_probe_info *
dtp_by_id(const struct dtp_dev *d, uint32_t id)
{
	for (size_t i = 0; i < d->nprobes; i++)
		if (d->probes[i].dtpi_id == id)
			return &d->probes[i];
	return NULL;
}

const char *
dtp_name(const struct dt_probe_info *p, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s:%.*s:%.*s", DT_PROVLEN, p->dtpi_prov,
		 DT_FUNCLEN, p->dtpi_func, DT_NAMELEN, p->dtpi_name);
	return buf;
}

int
dtp_describe(struct dtp_dev *d, const struct dt_probe_info *p,
	     struct dtcap_probe *out, char *err, size_t errlen)
{
	struct dt_probe_args pa;

	memset(out, 0, sizeof(*out));
	out->id = p->dtpi_id;
	out->flags = p->dtpi_flags;
	dtp_name(p, out->name, sizeof(out->name));
	if (d->kind == DTP_DT && dtup_full(d, p->dtpi_id))
		snprintf(out->name, sizeof(out->name), "%s", dtup_full(d, p->dtpi_id));
	if (d->kind == DTP_PERF)
		return describe_perf(d, p, out, err, errlen);
	memset(&pa, 0, sizeof(pa));
	pa.dtpa_id = p->dtpi_id;
	if (ioctl(d->fd, DTIOCGARGS, &pa) < 0) {
		dtu_seterr(err, errlen, "%s: arguments of %s: %s", d->path, out->name, strerror(errno));
		return -1;
	}
	if (pa.dtpa_nargs > DT_MAXARGS)
		pa.dtpa_nargs = DT_MAXARGS;
	out->nargs = pa.dtpa_nargs;
	for (uint32_t i = 0; i < pa.dtpa_nargs; i++) {
		snprintf(out->args[i].name, DTCAP_ARGNAMELEN, "%.*s", DT_ARGNAMELEN - 1,
			 pa.dtpa_args[i].dtai_name);
		snprintf(out->args[i].type, DTCAP_ARGNAMELEN, "%.*s", DT_ARGNAMELEN - 1,
			 pa.dtpa_args[i].dtai_type);
		out->args[i].slot = pa.dtpa_args[i].dtai_slot;
		out->args[i].nslots = pa.dtpa_args[i].dtai_nslots;
	}
	if (!(p->dtpi_flags & DT_PF_RETURN) &&
	    dtp_kind_of(p->dtpi_prov) == DTPK_SYSCALL) {
		char fn[DT_FUNCLEN + 1];
		snprintf(fn, sizeof(fn), "%.*s", DT_FUNCLEN, p->dtpi_func);
		dtp_sysargs(out, fn);
	}
	return 0;
}

size_t
dtp_list(const struct dtp_dev *d, const char *glob, FILE *out)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nprobes; i++) {
		if (glob && !dtu_glob_match(glob, d->names[i]))
			continue;
		/* dt.ko's uprobes carry only a label: 'uprobe:PATH' lists them */
		if (d->kind == DTP_DT && dtp_kind_of(d->probes[i].dtpi_prov) == DTPK_UPROBE)
			continue;
		fprintf(out, "%s\n", d->names[i]);
		n++;
	}
	return n;
}

const char *
dtp_word_glob(const char *word, char *buf, size_t len)
{
	if (dtu_is_glob(word) || strlen(word) + 3 > len)
		return NULL;
	snprintf(buf, len, "*%s*", word);
	return buf;
}

static int
add_sel(struct dtp_sel **sel, size_t *nsel, const struct dt_probe_info *p,
	uint64_t period)
{
	struct dtp_sel *ns;

	for (size_t i = 0; i < *nsel; i++)
		if ((*sel)[i].id == p->dtpi_id)
			return 0;
	ns = realloc(*sel, (*nsel + 1) * sizeof(**sel));
	if (ns == NULL)
		return -1;
	*sel = ns;
	ns[*nsel].id = p->dtpi_id;
	ns[*nsel].flags = p->dtpi_flags;
	ns[*nsel].period_ns = period;
	(*nsel)++;
	return 0;
}

static void
unknown(const struct dtp_dev *d, const char *spec, char *err, size_t errlen)
{
	const char *best[3];
	size_t n = dtu_suggest(spec, (const char *const *)d->names, d->nprobes, 0, best, 3);

	/* the catalog is short of everything tracefs names: that is the cause */
	if (d->no_tracefs[0]) {
		dtu_seterr(err, errlen, "unknown probe '%s': only profile and interval are "
			   "known: %s", spec, d->no_tracefs);
		return;
	}
	if (n == 0) {
		dtu_seterr(err, errlen, "unknown probe '%s' (dtrec -l lists them)", spec);
		return;
	}
	if (n == 1)
		dtu_seterr(err, errlen, "unknown probe '%s': did you mean '%s'?", spec, best[0]);
	else if (n == 2)
		dtu_seterr(err, errlen, "unknown probe '%s': did you mean '%s' or '%s'?",
		       spec, best[0], best[1]);
	else
		dtu_seterr(err, errlen, "unknown probe '%s': did you mean '%s', '%s' or '%s'?",
		       spec, best[0], best[1], best[2]);
}

/* "profile:hz:997" and friends: a timer probe with a period from the spec. */
static int
resolve_timer(struct dtp_dev *d, const char *spec, const char *prov,
	      const char *unit, const char *num, struct dtp_sel **sel,
	      size_t *nsel, char *err, size_t errlen)
{
	const struct dt_probe_info *p = NULL;
	char *end;
	unsigned long long n;
	double period;

	for (size_t i = 0; i < d->nprobes; i++) {
		const struct dt_probe_info *q = &d->probes[i];
		if (!(q->dtpi_flags & DT_PF_TIMER) || strcmp(q->dtpi_prov, prov) != 0)
			continue;
		/* prefer the probe whose own name is the spec, if the kernel has one */
		if (p == NULL || (strcmp(q->dtpi_func, unit) == 0 && strcmp(q->dtpi_name, num) == 0))
			p = q;
	}
	if (p == NULL)
		return 1;	/* not a timer provider: the caller tries plain names */
	if (!isdigit((unsigned char)num[0])) {
		dtu_seterr(err, errlen, "%s: '%s' is not a number (e.g. %s:hz:97)", spec, num, prov);
		return -1;
	}
	errno = 0;
	n = strtoull(num, &end, 10);
	if (*end != '\0' || errno != 0 || n == 0) {
		dtu_seterr(err, errlen, "%s: '%s' is not a positive number", spec, num);
		return -1;
	}
	if (strcmp(unit, "hz") == 0)
		period = 1e9 / (double)n;
	else if (strcmp(unit, "s") == 0)
		period = 1e9 * (double)n;
	else if (strcmp(unit, "ms") == 0)
		period = 1e6 * (double)n;
	else if (strcmp(unit, "us") == 0)
		period = 1e3 * (double)n;
	else if (strcmp(unit, "ns") == 0)
		period = (double)n;
	else {
		dtu_seterr(err, errlen, "%s: unknown unit '%s' (hz, s, ms, us or ns)", spec, unit);
		return -1;
	}
	if (period < (double)DT_PERIOD_MIN_NS) {
		dtu_seterr(err, errlen, "%s: period %.0f ns is below the minimum of %llu ns",
		       spec, period, (unsigned long long)DT_PERIOD_MIN_NS);
		return -1;
	}
	if (period > (double)DT_PERIOD_MAX_NS) {
		dtu_seterr(err, errlen, "%s: period is above the maximum of one hour", spec);
		return -1;
	}
	for (size_t i = 0; i < *nsel; i++) {
		/* one timer probe has one period per recording */
		if ((*sel)[i].id == p->dtpi_id && (*sel)[i].period_ns != (uint64_t)(period + 0.5)) {
			dtu_seterr(err, errlen, "%s: the %s probe is already enabled with another rate",
			       spec, prov);
			return -1;
		}
	}
	if (add_sel(sel, nsel, p, (uint64_t)(period + 0.5)) < 0) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static int
resolve_kprobe(struct dtp_dev *d, const char *spec, const char *func,
	       const char *name, struct dtp_sel **sel, size_t *nsel,
	       char *err, size_t errlen)
{
	struct dt_kprobe kp;
	const struct dt_probe_info *p;
	uint32_t id;

	if (strcmp(name, "entry") != 0 && strcmp(name, "return") != 0) {
		dtu_seterr(err, errlen, "%s: a kprobe is FUNC:entry or FUNC:return", spec);
		return -1;
	}
	if (strlen(func) >= DT_KPROBE_FUNCLEN || func[0] == '\0') {
		dtu_seterr(err, errlen, "%s: bad function name", spec);
		return -1;
	}
	if (d->kind == DTP_PERF) {
		size_t at = d->nprobes;
		if (!d->has_kprobe_pmu) {
			dtu_seterr(err, errlen, "%s: this kernel has no kprobe PMU "
				   "(/sys/bus/event_source/devices/kprobe), so the perf source cannot "
				   "place kprobes: use a tracepoint, or the dt source (dt.ko)", spec);
			return -1;
		}
		if (strlen(func) >= sizeof(d->perf[0].sys)) {
			dtu_seterr(err, errlen, "%s: function name too long", spec);
			return -1;
		}
		if (add_probe(d, dtp_kind_name(DTPK_KPROBE), func, "entry", 0, func, "") < 0 ||
		    add_probe(d, dtp_kind_name(DTPK_KPROBE), func, "return", DT_PF_RETURN, func, "") < 0 ||
		    add_sel(sel, nsel, &d->probes[at + (strcmp(name, "entry") == 0 ? 0 : 1)], 0) < 0) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	memset(&kp, 0, sizeof(kp));
	snprintf(kp.dtkp_func, sizeof(kp.dtkp_func), "%s", func);
	if (ioctl(d->fd, DTIOCKPROBE, &kp) < 0) {
		int e = errno;
		const char *ld = e == EPERM ? dtp_lockdown() : NULL;
		if (ld != NULL)
			dtu_seterr(err, errlen, "%s: refused by kernel lockdown (%s): no kprobes "
				   "while the kernel is locked down", spec, ld);
		else if (e == ENOENT)
			dtu_seterr(err, errlen, "%s: no such kernel function to probe (%s)", spec, strerror(e));
		else if (e == EINVAL)
			dtu_seterr(err, errlen, "%s: the kernel does not let this function be probed "
				   "(notrace or on the kprobe blacklist, see dt(4))", spec);
		else if (e == EACCES || e == EPERM)
			dtu_seterr(err, errlen, "%s: %s: needs root or CAP_PERFMON", spec, strerror(e));
		else
			dtu_seterr(err, errlen, "%s: %s", spec, strerror(e));
		return -1;
	}
	id = strcmp(name, "entry") == 0 ? kp.dtkp_entry_id : kp.dtkp_return_id;
	if (load_probes(d, err, errlen) < 0)
		return -1;
	p = dtp_by_id(d, id);
	if (p == NULL) {
		dtu_seterr(err, errlen, "%s: the kernel created probe %u but does not list it", spec, id);
		return -1;
	}
	if (add_sel(sel, nsel, p, 0) < 0) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* --------------------------------------------------- user-space probes */

int
dtp_is_user(const char *spec)
{
	return strncmp(spec, "uprobe:", 7) == 0 || strncmp(spec, "usdt:", 5) == 0;
}

const struct dtp_uprobe *
dtp_uprobe(const struct dtp_dev *d, uint32_t id)
{
	if (d->kind != DTP_PERF || id == 0 || id > d->nprobes)
		return NULL;
	return d->perf[id - 1].up;
}

const char *
dtp_full_name(const struct dtp_dev *d, uint32_t id)
{
	if (d->kind == DTP_DT)
		return dtup_full(d, id);
	if (id == 0 || id > d->nprobes || d->names == NULL)
		return NULL;
	return d->names[id - 1];
}

/*
 * "uprobe:PATH:REST": *usdt, the file (a bare library name looked up,
 * see dtup_find_file) and REST (NULL when the spec stops after PATH).
 * PATH ends at the first ':' after the provider, so it cannot hold one.
 */
static int
split_user(const char *spec, int *usdt, char *path, size_t plen, const char **rest,
	   char *err, size_t errlen)
{
	const char *p = spec + (strncmp(spec, "usdt:", 5) == 0 ? 5 : 7), *c;
	char name[4096];

	*usdt = spec[1] == 's';
	c = strchr(p, ':');
	*rest = c ? c + 1 : NULL;
	if ((size_t)(c ? c - p : (ptrdiff_t)strlen(p)) >= sizeof(name)) {
		dtu_seterr(err, errlen, "%.60s...: path too long", spec);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(c ? c - p : (ptrdiff_t)strlen(p)), p);
	if (name[0] == '\0') {
		dtu_seterr(err, errlen, "%s: no file: expected %s", spec, *usdt ?
			   "usdt:PATH:PROVIDER:NAME" : "uprobe:PATH:SYMBOL:entry (or :return)");
		return -1;
	}
	if (dtu_is_glob(name)) {
		dtu_seterr(err, errlen, "%s: the file name cannot be a glob", spec);
		return -1;
	}
	if (dtup_find_file(name, path, plen, err, errlen) < 0)
		return -1;
	return 0;
}

static ssize_t
find_name(const struct dtp_dev *d, const char *full)
{
	for (size_t i = 0; i < d->nprobes; i++)
		if (d->perf[i].up && strcmp(d->names[i], full) == 0)
			return (ssize_t)i;
	return -1;
}

/*
 * dt.ko: a uprobe on one site, created in the kernel (or found there),
 * its full name kept here.  Takes up.
 */
static int
add_user_dt(struct dtp_dev *d, const char *full, const char *label, struct dtp_uprobe *up,
	    struct dtp_sel **sel, size_t *nsel, char *err, size_t errlen)
{
	struct dt_uprobe ku;
	const struct dt_probe_info *p;
	uint32_t id;
	int ret = -1;

	/* one site after the other; USDT probes join their first site's */
	memset(&ku, 0, sizeof(ku));
	for (size_t k = 0; k < up->nsites; k++) {
		const struct dtp_usite *st = &up->sites[k];
		uint32_t first = ku.dtup_entry_id;

		memset(&ku, 0, sizeof(ku));
		ku.dtup_path = (uint64_t)(uintptr_t)up->path;
		ku.dtup_offset = st->offset;
		ku.dtup_refctr = st->refctr;
		ku.dtup_attach = k ? first : 0;
		/* a label the kernel lists; the full name stays here */
		snprintf(ku.dtup_func, sizeof(ku.dtup_func), "%s", label);
		if (up->usdt) {
			ku.dtup_flags = DTUP_USDT;
			ku.dtup_nargs = st->nargs < DT_MAXARGS ? st->nargs : DT_MAXARGS;
			for (unsigned j = 0; j < st->nargs && j < DT_MAXARGS; j++) {
				const struct dtup_arg *a = &st->args[j];
				struct dt_uparg *ka = &ku.dtup_args[j];
				ka->dtua_kind = a->kind == DTUP_ARG_CONST ? DT_UA_CONST :
						a->kind == DTUP_ARG_REG ? DT_UA_REG :
						a->kind == DTUP_ARG_MEM ? DT_UA_MEM : DT_UA_NONE;
				ka->dtua_reg = a->reg >= 0 ? (uint8_t)a->reg : 0;
				ka->dtua_size = a->size;
				ka->dtua_signed = a->sign ? 1 : 0;
				ka->dtua_shift = a->shift;
				ka->dtua_value = a->value;
				if (ka->dtua_kind == DT_UA_NONE) {
					memset(ka, 0, sizeof(*ka));
					ka->dtua_size = 8;
				}
			}
		}
		if (ioctl(d->fd, DTIOCUPROBE, &ku) < 0) {
			int e = errno;
			if (e == EACCES || e == EPERM)
				dtu_seterr(err, errlen, "%s: %s: needs root or CAP_PERFMON", full,
					   strerror(e));
			else if (e == ENOSPC)
				dtu_seterr(err, errlen, "%s: dt.ko holds its most uprobe sites (1024): "
					   "reload the module to free them", full);
			else if (e == EBUSY)
				dtu_seterr(err, errlen, "%s: another recording has this USDT probe "
					   "enabled with fewer sites: try again once it ends", full);
			else
				dtu_seterr(err, errlen, "%s: placing the uprobe: %s", full, strerror(e));
			goto out;
		}
	}
	id = up->ret ? ku.dtup_return_id : ku.dtup_entry_id;
	if (dtup_full(d, id) == NULL) {
		if (DT_GROW(d->dtup, d->dtupcap, d->ndtup, 1, 8) ||
		    (d->dtup[d->ndtup].full = strdup(full)) == NULL)
			goto nomem;
		d->dtup[d->ndtup++].id = id;
		if (load_probes(d, err, errlen) < 0)
			goto out;
	}
	if ((p = dtp_by_id(d, id)) == NULL) {
		dtu_seterr(err, errlen, "%s: the kernel created probe %u but does not list it", full, id);
		goto out;
	}
	if (add_sel(sel, nsel, p, 0) < 0)
		goto nomem;
	ret = 0;
	goto out;
nomem:
	dtu_seterr(err, errlen, "out of memory");
out:
	free(up->path);
	free(up->sites);
	free(up);
	return ret;
}

/* Enter a user probe in the catalog (taking up) and select it. */
static int
add_user(struct dtp_dev *d, const char *full, const char *func, const char *name,
	 struct dtp_uprobe *up, struct dtp_sel **sel, size_t *nsel, char *err, size_t errlen)
{
	ssize_t at;
	char *nm;

	if (d->kind == DTP_DT)
		return add_user_dt(d, full, func, up, sel, nsel, err, errlen);
	at = find_name(d, full);

	if (at >= 0) {
		free(up->path);
		free(up->sites);
		free(up);
		return add_sel(sel, nsel, &d->probes[at], 0) < 0 ? -1 : 0;
	}
	if (d->nusites + up->nsites > DTP_MAXUSITES) {
		dtu_seterr(err, errlen, "%s: more than %d user-space probe sites in one recording "
			   "(each is one uprobe per CPU): select fewer functions", full, DTP_MAXUSITES);
		goto fail;
	}
	if ((nm = strdup(full)) == NULL)
		goto nomem;
	if (add_probe(d, dtp_kind_name(up->usdt ? DTPK_USDT : DTPK_UPROBE), func, name, up->ret ? DT_PF_RETURN : 0,
		      "", "") < 0) {
		free(nm);
		goto nomem;
	}
	free(d->names[d->nprobes - 1]);
	d->names[d->nprobes - 1] = nm;
	d->perf[d->nprobes - 1].up = up;
	d->nusites += up->nsites;
	if (add_sel(sel, nsel, &d->probes[d->nprobes - 1], 0) < 0) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	return 0;
nomem:
	dtu_seterr(err, errlen, "out of memory");
fail:
	free(up->path);
	free(up->sites);
	free(up);
	return -1;
}

static struct dtp_uprobe *
new_user(const char *path, int usdt, int ret, size_t nsites)
{
	struct dtp_uprobe *up = calloc(1, sizeof(*up));

	if (up == NULL)
		return NULL;
	up->path = strdup(path);
	up->sites = calloc(nsites ? nsites : 1, sizeof(*up->sites));
	if (up->path == NULL || up->sites == NULL) {
		free(up->path);
		free(up->sites);
		free(up);
		return NULL;
	}
	up->usdt = usdt;
	up->ret = ret;
	up->nsites = nsites;
	return up;
}

/* No such function: the closest names of the file, if any are close. */
static void
no_symbol(const char *spec, const char *sym, const char *path, const struct dtup_syms *ss,
	  char *err, size_t errlen)
{
	const char **names = malloc((ss->n ? ss->n : 1) * sizeof(*names));
	const char *best[1];
	size_t n = 0;

	if (names) {
		for (size_t i = 0; i < ss->n; i++)
			names[i] = ss->v[i].name;
		n = dtu_suggest(sym, names, ss->n, 0, best, 1);
	}
	if (n)
		dtu_seterr(err, errlen, "%s: no function '%s' in %s: did you mean '%s'?", spec, sym,
			   path, best[0]);
	else
		dtu_seterr(err, errlen, "%s: no function '%s' in %s (dtrec -l 'uprobe:%s:*' lists "
			   "them)", spec, sym, path, path);
	free(names);
}

static int
resolve_uprobe(struct dtp_dev *d, const char *spec, const char *path, const char *rest,
	       struct dtp_sel **sel, size_t *nsel, char *err, size_t errlen)
{
	static const char *const names[2] = { "entry", "return" };
	char symspec[1024], *plus;
	const char *colon = strrchr(rest, ':'), *name;
	unsigned long long off = 0;
	int want[2], ret = -1;
	struct dtup_syms ss;
	size_t nmatch = 0;

	if (colon == NULL || colon == rest || (size_t)(colon - rest) >= sizeof(symspec)) {
		dtu_seterr(err, errlen, "%s: expected uprobe:PATH:SYMBOL:entry (or :return)", spec);
		return -1;
	}
	snprintf(symspec, sizeof(symspec), "%.*s", (int)(colon - rest), rest);
	name = colon + 1;
	want[0] = dtu_glob_match(name, "entry");
	want[1] = dtu_glob_match(name, "return");
	if (!want[0] && !want[1]) {
		dtu_seterr(err, errlen, "%s: a uprobe is SYMBOL:entry or SYMBOL:return, not '%s'",
			   spec, name);
		return -1;
	}
	if ((plus = strchr(symspec, '+')) != NULL) {
		char *end;
		errno = 0;
		off = strtoull(plus + 1, &end, 0);
		if (plus[1] == '\0' || *end != '\0' || errno || dtu_is_glob(symspec)) {
			dtu_seterr(err, errlen, "%s: bad offset '%s' (SYMBOL+0x10 on one function)",
				   spec, plus + 1);
			return -1;
		}
		if (off && want[1]) {
			dtu_seterr(err, errlen, "%s: a return probe is on the function itself, "
				   "without +OFFSET", spec);
			return -1;
		}
		*plus = '\0';
	}
	if (dtup_syms_read(path, &ss, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < ss.n; i++) {
		const struct dtup_sym *sy = &ss.v[i];
		if (dtu_is_glob(symspec) ? !dtu_glob_match(symspec, sy->name) :
		    strcmp(symspec, sy->name) != 0)
			continue;
		if (off && sy->size && off >= sy->size) {
			dtu_seterr(err, errlen, "%s: offset %llu is beyond %s's %llu bytes", spec, off,
				   sy->name, (unsigned long long)sy->size);
			goto out;
		}
		if (off && dtup_insn_boundary(spec, path, sy->name, sy->offset, sy->size, off, err,
					      errlen) < 0)
			goto out;
		nmatch++;
		for (int k = 0; k < 2; k++) {
			char full[DTCAP_PROBENAMELEN + 1], offs[32] = "";
			struct dtp_uprobe *up;
			if (!want[k])
				continue;
			if (off)
				snprintf(offs, sizeof(offs), "+%#llx", off);
			if ((size_t)snprintf(full, sizeof(full), "uprobe:%s:%s%s:%s", path, sy->name, offs,
					     names[k]) >= DTCAP_PROBENAMELEN) {
				dtu_seterr(err, errlen, "uprobe:%s:%s: the probe name is longer than %d "
					   "bytes", path, sy->name, DTCAP_PROBENAMELEN - 1);
				goto out;
			}
			if ((up = new_user(path, 0, k, 1)) == NULL) {
				dtu_seterr(err, errlen, "out of memory");
				goto out;
			}
			up->sites[0].offset = sy->offset + off;
			up->regs = k ? 1ULL << DTUP_AX : DTUP_ARGREGS_MASK;
			/* dt.ko's label: SYMBOL[+OFFSET], cut to what it keeps */
			char label[DT_FUNCLEN + 32];
			snprintf(label, sizeof(label), "%.40s%s", sy->name, offs);
			label[DT_FUNCLEN - 1] = '\0';
			if (add_user(d, full, d->kind == DTP_DT ? label : sy->name, names[k], up, sel,
				     nsel, err, errlen) < 0)
				goto out;
		}
	}
	if (nmatch == 0) {
		if (dtu_is_glob(symspec))
			dtu_seterr(err, errlen, "%s: no function in %s matches '%s'", spec, path, symspec);
		else
			no_symbol(spec, symspec, path, &ss, err, errlen);
		goto out;
	}
	ret = 0;
out:
	dtup_syms_free(&ss);
	return ret;
}

/* usdt:PATH:PROVIDER:NAME: one probe per provider:name, a uprobe per note. */
static int
resolve_usdt(struct dtp_dev *d, const char *spec, const char *path, const char *rest,
	     struct dtp_sel **sel, size_t *nsel, char *err, size_t errlen)
{
	char prov[256];
	const char *colon = strchr(rest, ':'), *name;
	struct dtup_notes nn;
	size_t nmatch = 0;
	int ret = -1;

	if (colon == NULL || (size_t)(colon - rest) >= sizeof(prov) || strchr(colon + 1, ':')) {
		dtu_seterr(err, errlen, "%s: expected usdt:PATH:PROVIDER:NAME", spec);
		return -1;
	}
	snprintf(prov, sizeof(prov), "%.*s", (int)(colon - rest), rest);
	name = colon + 1;
	if (dtup_notes_read(path, &nn, err, errlen) < 0)
		return -1;
	if (nn.n == 0) {
		dtu_seterr(err, errlen, "%s: %s has no SDT probes (no .note.stapsdt section)", spec, path);
		goto out;
	}
	for (size_t i = 0; i < nn.n; i++) {
		char full[DTCAP_PROBENAMELEN + 1];
		struct dtp_uprobe *up;
		size_t ns = 0, j;
		int seen = 0;

		if (!dtu_glob_match(prov, nn.v[i].provider) || !dtu_glob_match(name, nn.v[i].name))
			continue;
		/* the first note of each provider:name gathers its others */
		for (j = 0; j < i && !seen; j++)
			seen = strcmp(nn.v[j].provider, nn.v[i].provider) == 0 &&
			       strcmp(nn.v[j].name, nn.v[i].name) == 0;
		if (seen)
			continue;
		nmatch++;
		for (j = i; j < nn.n; j++)
			if (strcmp(nn.v[j].provider, nn.v[i].provider) == 0 &&
			    strcmp(nn.v[j].name, nn.v[i].name) == 0)
				ns++;
		if ((size_t)snprintf(full, sizeof(full), "usdt:%s:%s:%s", path, nn.v[i].provider,
				     nn.v[i].name) >= DTCAP_PROBENAMELEN) {
			dtu_seterr(err, errlen, "usdt:%s:%s:%s: the probe name is longer than %d bytes",
				   path, nn.v[i].provider, nn.v[i].name, DTCAP_PROBENAMELEN - 1);
			goto out;
		}
		if ((up = new_user(path, 1, 0, ns)) == NULL) {
			dtu_seterr(err, errlen, "out of memory");
			goto out;
		}
		ns = 0;
		for (j = i; j < nn.n; j++) {
			struct dtp_usite *st = &up->sites[ns];
			char aerr[DTUP_ERRLEN];
			if (strcmp(nn.v[j].provider, nn.v[i].provider) != 0 ||
			    strcmp(nn.v[j].name, nn.v[i].name) != 0)
				continue;
			st->offset = nn.v[j].pc_offset;
			st->refctr = nn.v[j].sem_offset;
			if (dtup_parse_args(nn.v[j].args, st->args, &st->nargs, aerr, sizeof(aerr)) < 0) {
				dtu_seterr(err, errlen, "%s: %s", full, aerr);
				free(up->path);
				free(up->sites);
				free(up);
				goto out;
			}
			for (unsigned k = 0; k < st->nargs; k++) {
				const struct dtup_arg *a = &st->args[k];
				up->regs |= dtup_arg_regs(a);
				if (a->kind == DTUP_ARG_MEM) {
					/* the frame around sp; deeper operands read as 0 */
					int64_t need = a->reg == DTUP_SP ? a->value + a->size : 1024;
					if (need < 1024)
						need = 1024;
					if (need > 8192)
						need = 8192;
					if ((uint32_t)need > up->stack)
						up->stack = ((uint32_t)need + 7) & ~7U;
				}
			}
			ns++;
		}
		if (add_user(d, full, nn.v[i].provider, nn.v[i].name, up, sel, nsel, err, errlen) < 0)
			goto out;
	}
	if (nmatch == 0) {
		dtu_seterr(err, errlen, "%s: no SDT probe of %s matches '%s:%s' (dtrec -l 'usdt:%s' "
			   "lists them)", spec, path, prov, name, path);
		goto out;
	}
	ret = 0;
out:
	dtup_notes_free(&nn);
	return ret;
}

static int
resolve_user(struct dtp_dev *d, const char *spec, struct dtp_sel **sel, size_t *nsel,
	     char *err, size_t errlen)
{
	char path[4096];
	const char *rest;
	int usdt;

	if (split_user(spec, &usdt, path, sizeof(path), &rest, err, errlen) < 0)
		return -1;
	if (rest == NULL) {
		dtu_seterr(err, errlen, "%s: expected %s", spec, usdt ? "usdt:PATH:PROVIDER:NAME" :
			   "uprobe:PATH:SYMBOL:entry (or :return)");
		return -1;
	}
	if (d->kind != DTP_PERF) {
		if (usdt)
			return resolve_usdt(d, spec, path, rest, sel, nsel, err, errlen);
		return resolve_uprobe(d, spec, path, rest, sel, nsel, err, errlen);
	}
	if (!d->has_uprobe_pmu) {
		dtu_seterr(err, errlen, "%s: this kernel has no uprobe PMU "
			   "(/sys/bus/event_source/devices/uprobe)", spec);
		return -1;
	}
	if (usdt)
		return resolve_usdt(d, spec, path, rest, sel, nsel, err, errlen);
	return resolve_uprobe(d, spec, path, rest, sel, nsel, err, errlen);
}

int
dtp_list_user(const char *glob, FILE *out, size_t *n, char *err, size_t errlen)
{
	char path[4096], *pat;
	const char *rest;
	int usdt, ret = -1;
	size_t plen;

	*n = 0;
	if (split_user(glob, &usdt, path, sizeof(path), &rest, err, errlen) < 0)
		return -1;
	/* the pattern names the file as found, so "libc.so.6" matches its path */
	plen = strlen(path) + (rest ? strlen(rest) : 0) + 16;
	if ((pat = malloc(plen)) == NULL) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	snprintf(pat, plen, "%s:%s:%s", dtp_kind_name(usdt ? DTPK_USDT : DTPK_UPROBE), path,
		 rest ? rest : "*");
	if (usdt) {
		struct dtup_notes nn;
		if (dtup_notes_read(path, &nn, err, errlen) < 0)
			goto out;
		for (size_t i = 0; i < nn.n; i++) {
			char *full;
			int dup = 0;
			for (size_t j = 0; j < i && !dup; j++)
				dup = strcmp(nn.v[j].provider, nn.v[i].provider) == 0 &&
				      strcmp(nn.v[j].name, nn.v[i].name) == 0;
			if (dup || asprintf(&full, "usdt:%s:%s:%s", path, nn.v[i].provider,
					    nn.v[i].name) < 0)
				continue;
			if (dtu_glob_match(pat, full)) {
				fprintf(out, "%s\n", full);
				(*n)++;
			}
			free(full);
		}
		dtup_notes_free(&nn);
	} else {
		struct dtup_syms ss;
		if (dtup_syms_read(path, &ss, err, errlen) < 0)
			goto out;
		for (size_t i = 0; i < ss.n; i++) {
			for (int k = 0; k < 2; k++) {
				char *full;
				if (asprintf(&full, "uprobe:%s:%s:%s", path, ss.v[i].name,
					     k ? "return" : "entry") < 0)
					continue;
				if (dtu_glob_match(pat, full)) {
					fprintf(out, "%s\n", full);
					(*n)++;
				}
				free(full);
			}
		}
		dtup_syms_free(&ss);
	}
	ret = 0;
out:
	free(pat);
	return ret;
}

int
dtp_resolve(struct dtp_dev *d, const char *spec, struct dtp_sel **sel,
	    size_t *nsel, char *err, size_t errlen)
{
	char buf[DTCAP_PROBENAMELEN], *prov, *func, *name;
	size_t matched = 0;

	if (dtp_is_user(spec))
		return resolve_user(d, spec, sel, nsel, err, errlen);

	if (strlen(spec) >= sizeof(buf) || spec[0] == '\0') {
		dtu_seterr(err, errlen, "bad probe name '%.40s'", spec);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	prov = buf;
	func = strchr(prov, ':');
	name = func ? strchr(func + 1, ':') : NULL;
	if (func == NULL || name == NULL || strchr(name + 1, ':') != NULL) {
		/* kprobe function names never contain ':', so this is always wrong */
		dtu_seterr(err, errlen, "bad probe name '%s': expected provider:function:name", spec);
		return -1;
	}
	*func++ = '\0';
	*name++ = '\0';

	if (!dtu_is_glob(spec)) {
		int r = resolve_timer(d, spec, prov, func, name, sel, nsel, err, errlen);
		if (r <= 0)
			return r;
	}
	for (size_t i = 0; i < d->nprobes; i++) {
		if (!dtu_glob_match(spec, d->names[i]))
			continue;
		/* a glob that hits timer probes gets their default period */
		if (add_sel(sel, nsel, &d->probes[i], 0) < 0) {
			dtu_seterr(err, errlen, "out of memory");
			return -1;
		}
		matched++;
	}
	if (matched)
		return 0;
	if (dtp_kind_of(prov) == DTPK_KPROBE && !dtu_is_glob(spec))
		return resolve_kprobe(d, spec, func, name, sel, nsel, err, errlen);
	if (dtu_is_glob(spec))
		dtu_seterr(err, errlen, "no probe matches '%s' (dtrec -l lists them)", spec);
	else
		unknown(d, spec, err, errlen);
	return -1;
}

const char *
dtp_lockdown(void)
{
	static char mode[32];
	char buf[128], *o, *c;
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");

	if (f == NULL)
		return NULL;
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	/* "none integrity [confidentiality]": the bracketed one is in force */
	o = strchr(buf, '[');
	c = o != NULL ? strchr(o, ']') : NULL;
	if (c == NULL || (size_t)(c - o - 1) >= sizeof(mode))
		return NULL;
	memcpy(mode, o + 1, (size_t)(c - o - 1));
	mode[c - o - 1] = '\0';
	return strcmp(mode, "none") == 0 ? NULL : mode;
}
