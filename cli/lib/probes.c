/* probes.c - see probes.h. */
#include "probes.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util.h"

struct dtp_dev {
	int		fd;
	char		path[256];
	struct dt_probe_info *probes;
	size_t		nprobes;
	char		**names;	/* "prov:func:name" per probe */
};


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
		dtp_strerror(errno, path, err, errlen);
		free(d);
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
	return NULL;
}

void
dtp_close(struct dtp_dev *d)
{
	if (d == NULL)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free_names(d);
	free(d->probes);
	free(d);
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
	return 0;
}

size_t
dtp_list(const struct dtp_dev *d, const char *glob, FILE *out)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nprobes; i++) {
		if (glob && !dtu_glob_match(glob, d->names[i]))
			continue;
		fprintf(out, "%s\n", d->names[i]);
		n++;
	}
	return n;
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
	memset(&kp, 0, sizeof(kp));
	snprintf(kp.dtkp_func, sizeof(kp.dtkp_func), "%s", func);
	if (ioctl(d->fd, DTIOCKPROBE, &kp) < 0) {
		int e = errno;
		if (e == ENOENT || e == EINVAL)
			dtu_seterr(err, errlen, "%s: no such kernel function to probe (%s)", spec, strerror(e));
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

int
dtp_resolve(struct dtp_dev *d, const char *spec, struct dtp_sel **sel,
	    size_t *nsel, char *err, size_t errlen)
{
	char buf[DTCAP_PROBENAMELEN], *prov, *func, *name;
	size_t matched = 0;

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
	if (strcmp(prov, "kprobe") == 0 && !dtu_is_glob(spec))
		return resolve_kprobe(d, spec, func, name, sel, nsel, err, errlen);
	if (dtu_is_glob(spec))
		dtu_seterr(err, errlen, "no probe matches '%s' (dtrec -l lists them)", spec);
	else
		unknown(d, spec, err, errlen);
	return -1;
}
