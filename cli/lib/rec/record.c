/* record.c - see record.h. */
#include "dt_grow.h"
#include "dt_htab.h"
#include "offcpu.h"
#include "record.h"

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
#include "procmaps.h"
#include "source.h"
#include "srcline.h"
#include "targets.h"
#include "util.h"

/* Large reads: one syscall per megabytes of records keeps up with TCG. */
#define READBUF		(4U << 20)
#define STATUS_NS	500000000ULL
#define COUNTERS_NS	1000000000ULL
#define POLL_MS		100
#define PAUSE_MS	50
#define BACKLOG		(256U << 10)
#define LAST_MAX	(64U << 20)	/* bytes of /proc maps kept for JIT maps */

/* A map u32 -> slot, for per-thread comm and per-process state. */
struct tslot {
	uint32_t	key;		/* tid or pid */
	uint32_t	comm_id;	/* comm cache: interned id of comm */
	char		comm[DT_COMMLEN];
	int		snapped;	/* process table: snapshots taken */
	uint32_t	nxr;		/* executable ranges of the last snapshot */
	uint32_t	misses;		/* snapshots taken for unmapped pcs */
	uint32_t	gen;		/* source's dtsrc_proc.gen last stored */
	uint64_t	*xr;		/* start, end pairs */
	/*
	 * The last snapshot while files of it are stored without symbols
	 * (no stored stack has reached them yet): a pc in one of them
	 * stores it again with the file's.  Names and exe owned.
	 */
	struct dtcap_proc sp;
	struct dtcap_map *smaps;
	int		spending;
	uint32_t	slast;		/* the user stack id last checked */
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
	uint32_t	exec_probe;	/* sched_process_exec id, 0: not enabled */
	uint32_t	ncpus;
	struct dtcap_count *counts;
	uint64_t	nread, raw_bytes, nbad, nlost;
	uint64_t	base_bytes;	/* capture size before the first event */
	uint64_t	sym_bytes;	/* of the capture, symbol tables (at the end) */
	uint64_t	last_bytes;	/* held by tslot.last of every process */
	struct kused	*kused;		/* kallsyms, written as far as used */
	uint32_t	kstack_max;	/* kernel stack ids marked in kused */
	int		werr;		/* writer failed: stop writing */
	char		ustack_how[300];	/* auto: which walk user stacks got, why */
	int		tty;
	struct dtrec_targets tg;	/* -p: ends recording when all exited */
	pid_t		fg;		/* the terminal was given to the command: our group */
	struct sigaction ttou;		/* SIGTTOU's action before the terminal was given */
	int		not_run;	/* 126/127: the command could not be run */
};

static void
msg(struct rec *r, const char *fmt, ...)
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

static uint64_t
tmap_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct tmap *)ctx)->v[e].key);
}

/* The slot of key, new ones zeroed (*isnew set); NULL when out of memory.
 * The pointer lasts until the next tmap_get on m. */
static struct tslot *
tmap_get(struct tmap *m, uint32_t key, int *isnew)
{
	uint64_t h = dt_htab_hash_int(key);
	uint32_t e;

	*isnew = 0;
	for (size_t i = dt_htab_first(&m->ix, h); (e = dt_htab_at(&m->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&m->ix, i))
		if (m->v[e].key == key)
			return &m->v[e];
	if (DT_GROW(m->v, m->cap, m->n, 1, 4096))
		return NULL;
	memset(&m->v[m->n], 0, sizeof(m->v[m->n]));
	m->v[m->n].key = key;
	if (dt_htab_add(&m->ix, h, (uint32_t)m->n, tmap_rehash, m))
		return NULL;
	*isnew = 1;
	return &m->v[m->n++];
}

static void
drop_kept(struct tslot *t)
{
	for (size_t i = 0; t->smaps && i < t->sp.nmaps; i++)
		free((char *)t->smaps[i].name);
	free(t->smaps);
	free((char *)t->sp.exe);
	memset(&t->sp, 0, sizeof(t->sp));
	t->smaps = NULL;
	t->spending = 0;
}

static void
tmap_free(struct tmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].xr);
		drop_kept(&m->v[i]);
		free((void *)m->v[i].last.maps);
		free((void *)m->v[i].last.exe);
		free(m->v[i].last_text);
	}
	free(m->v);
	dt_htab_free(&m->ix);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------ process snapshots */

/* A snapshot's maps, every one /proc lists (names into its text). */
struct snap_maps {
	struct dtcap_map *mv;
	size_t	nm, cap;
};

static int
snap_map(void *arg, const struct dtpm_map *m)
{
	struct snap_maps *sm = arg;

	if (DT_GROW(sm->mv, sm->cap, sm->nm, 1, 64))
		return -1;	/* out of memory: the maps so far */
	memset(&sm->mv[sm->nm], 0, sizeof(sm->mv[sm->nm]));
	sm->mv[sm->nm].start = m->start;
	sm->mv[sm->nm].end = m->end;
	sm->mv[sm->nm].offset = m->offset;
	sm->mv[sm->nm].prot = m->prot;
	sm->mv[sm->nm].name = m->name;
	sm->nm++;
	return 0;
}

/*
 * /proc/PID/{stat,exe,maps} plus the ELF symbols of every executable
 * mapping.  A process that is already gone is not an error: its events
 * simply stay unsymbolized.
 */
static int store_snapshot(struct rec *r, struct dtcap_proc *p, struct dtcap_map *mv,
			  size_t nm, struct tslot *t, const uint64_t *pcs, size_t npcs);
static void keep_last(struct rec *r, struct tslot *t, const struct dtcap_proc *p,
		      struct dtcap_map *mv, size_t nm, char *text);
static uint64_t rec_clock_ns(struct rec *r);

static int
snapshot(struct rec *r, uint32_t pid, uint64_t ts, const char *comm, struct tslot *t,
	 const uint64_t *pcs, size_t npcs)
{
	char path[64], exe[4096] = "", *maps, *stat;
	struct dtcap_map *mv = NULL;
	size_t nm = 0;
	struct dtcap_proc p;
	ssize_t l;
	int ret;

	memset(&p, 0, sizeof(p));
	p.ts = ts;
	p.pid = pid;
	snprintf(p.comm, sizeof(p.comm), "%.*s", DT_COMMLEN - 1, comm);
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	l = readlink(path, exe, sizeof(exe) - 1);
	exe[l > 0 ? l : 0] = '\0';
	p.exe = exe;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	stat = dtu_read_file(path, NULL);
	if (stat) {
		char *rp = strrchr(stat, ')');
		unsigned ppid;
		if (rp && sscanf(rp + 1, " %*c %u", &ppid) == 1)
			p.ppid = ppid;
		free(stat);
	}
	if ((maps = dtpm_read(pid)) != NULL) {
		struct snap_maps sm = { NULL, 0, 0 };

		(void)dtpm_parse(maps, 0, snap_map, &sm, NULL, 0);
		mv = sm.mv;
		nm = sm.nm;
	}
	if (nm == 0 && t->snapped > 1) {
		/* gone (or a kernel thread): an empty snapshot would hide the last one */
		free(mv);
		free(maps);
		return 0;
	}
	ret = store_snapshot(r, &p, mv, nm, t, pcs, npcs);
	keep_last(r, t, &p, mv, nm, maps);
	return ret;
}

/* Whether one of pcs lies in an executable mapping of name. */
static int
file_reached(const struct dtcap_map *mv, size_t nm, const char *name, const uint64_t *pcs,
	     size_t npcs)
{
	for (size_t j = 0; j < nm; j++) {
		if (!(mv[j].prot & 4) || strcmp(mv[j].name, name) != 0)
			continue;
		for (size_t k = 0; k < npcs; k++)
			if (pcs[k] >= mv[j].start && pcs[k] < mv[j].end)
				return 1;
	}
	return 0;
}

/* Keep a copy of the snapshot stored last while files of it wait. */
static void
keep_snapshot(struct tslot *t, const struct dtcap_proc *p, const struct dtcap_map *mv, size_t nm,
	      int pending)
{
	if (mv == t->smaps) {	/* stored again from the copy */
		t->spending = pending;
		return;
	}
	drop_kept(t);
	if (!pending || (t->smaps = calloc(nm ? nm : 1, sizeof(*mv))) == NULL)
		return;
	t->sp = *p;
	t->sp.maps = t->smaps;
	t->sp.nmaps = 0;
	t->sp.exe = strdup(p->exe ? p->exe : "");
	for (size_t i = 0; i < nm; i++) {
		t->smaps[i] = mv[i];
		if ((t->smaps[i].name = strdup(mv[i].name)) == NULL)
			break;
		t->sp.nmaps++;
	}
	t->spending = t->sp.exe && t->sp.nmaps == nm;
	if (!t->spending)
		drop_kept(t);
}

/* Keep what snapshot() read (taking mv and text), within a bound. */
static void
keep_last(struct rec *r, struct tslot *t, const struct dtcap_proc *p, struct dtcap_map *mv,
	  size_t nm, char *text)
{
	size_t bytes = nm * sizeof(*mv) + (text ? strlen(text) : 0);

	free((void *)t->last.maps);
	free((void *)t->last.exe);
	free(t->last_text);
	r->last_bytes -= t->last_bytes;
	memset(&t->last, 0, sizeof(t->last));
	t->last_text = NULL;
	t->last_bytes = 0;
	char *exe = strdup(p->exe ? p->exe : "");
	if (!exe || r->last_bytes + bytes > LAST_MAX) {
		free(exe);
		free(mv);
		free(text);
		return;
	}
	t->last = *p;
	t->last.exe = exe;
	t->last.maps = mv;
	t->last.nmaps = (uint32_t)nm;
	t->last_text = text;
	t->last_bytes = bytes;
	r->last_bytes += bytes;
}

/*
 * Store a process snapshot: the ELF files behind its executable mappings
 * (symbols read once per file), then the maps.  mv's file ids are set.
 * A file's symbols go in only once a stored user pc lies in it (pcs: the
 * stack of the event at hand), as the kernel's go in as far as stacks
 * use them: a process maps dozens of libraries its stacks never reach
 * (node: 28 files, 254k symbols, for events without stacks at all).
 */
static int
store_snapshot(struct rec *r, struct dtcap_proc *pp, struct dtcap_map *mv, size_t nm,
	       struct tslot *t, const uint64_t *pcs, size_t npcs)
{
	struct dtcap_proc p = *pp;
	uint32_t pid = p.pid;
	int ret = 0, pending = 0;

	/* ELF files behind executable mappings; their other mappings share the id */
	for (size_t i = 0; i < nm; i++) {
		char err[512], opath[4200];
		struct elfsyms_file *f;
		const char *name = mv[i].name;

		if (!(mv[i].prot & 4) || name[0] != '/' || mv[i].file)
			continue;
		int known = elfsyms_known(r->ec, name);
		if (known < 0)
			continue;	/* unreadable: no symbols to wait for */
		if (known == 0 && !file_reached(mv, nm, name, pcs, npcs)) {
			pending = 1;
			continue;
		}
		/* the file may live in another mount namespace, or be deleted */
		if (strstr(name, " (deleted)"))
			snprintf(opath, sizeof(opath), "/proc/%u/map_files/%llx-%llx", pid,
				 (unsigned long long)mv[i].start, (unsigned long long)mv[i].end);
		else if (access(name, R_OK) == 0)
			snprintf(opath, sizeof(opath), "%s", name);
		else
			snprintf(opath, sizeof(opath), "/proc/%u/root%s", pid, name);
		/* deleted since the kernel reported the mapping (perf's MMAP2
		 * names carry no " (deleted)"): the process's own mapping */
		if (access(opath, R_OK) != 0)
			snprintf(opath, sizeof(opath), "/proc/%u/map_files/%llx-%llx", pid,
				 (unsigned long long)mv[i].start, (unsigned long long)mv[i].end);
		f = elfsyms_get(r->ec, name, opath, err, sizeof(err));
		if (f == NULL)
			continue;
		if (f->cap_id == 0 && !r->werr) {
			f->cap_id = dtcap_put_file(r->w, &f->f);
			if (f->cap_id == 0) {
				msg(r, "%s", dtcap_writer_error(r->w));
				r->werr = 1;
				ret = -1;
				break;
			}
		}
		if (r->srcl && f->cap_id && srcl_file(r->srcl, f->cap_id, &f->f, opath) < 0) {
			/* source lines are extra: their loss costs no event */
			srcl_free(r->srcl);
			r->srcl = NULL;
		}
		for (size_t j = i; j < nm; j++)
			if (strcmp(mv[j].name, name) == 0)
				mv[j].file = f->cap_id;
	}
	/*
	 * JIT code the process described itself (perf-PID.map, jitdump).
	 * Unlike an ELF file's, these symbols are stored as read, whether or
	 * not a stack has reached the code yet: a reading holds only from its
	 * time (code replaced in place), the map may be gone or rewritten by
	 * the time a stack reaches a region (a JVM writes it as it exits), and
	 * the reader stores a map again only when it changed, so there is no
	 * per-snapshot cost to save by waiting.
	 */
	const struct dtcap_map *pmv = mv;	/* as read: kept while files wait */
	size_t pnm = nm;
	struct dtcap_map *jm = NULL, *jm2 = NULL;
	size_t njm = 0, njm2 = 0;
	uint64_t ts2 = 0;
	char jerr[600] = "";
	if (ret == 0 && !r->werr &&
	    jitmap_apply(r->jc, r->w, pid, p.ts, rec_clock_ns(r), mv, nm, &jm, &njm, &jm2, &njm2,
			 &ts2, jerr, sizeof(jerr)) < 0) {
		msg(r, "%s", dtcap_writer_error(r->w));
		r->werr = 1;
		ret = -1;
	}
	if (jerr[0])
		msg(r, "%s", jerr);
	if (jm) {
		mv = jm;
		nm = njm;
	}
	p.nmaps = (uint32_t)nm;
	p.maps = mv;
	/* remember where code lives, to notice pcs outside it (dlopen, JIT) */
	free(t->xr);
	t->xr = NULL;
	t->nxr = 0;
	for (size_t i = 0, k = 0; i < nm; i++) {
		if (!(mv[i].prot & 4))
			continue;
		if (t->xr == NULL && (t->xr = malloc(2 * nm * sizeof(*t->xr))) == NULL)
			break;
		t->xr[k++] = mv[i].start;
		t->xr[k++] = mv[i].end;
		t->nxr++;
	}
	if (ret == 0 && !r->werr && dtcap_put_proc(r->w, &p) < 0) {
		msg(r, "%s", dtcap_writer_error(r->w));
		r->werr = 1;
		ret = -1;
	}
	/*
	 * The copy is of the maps before the JIT regions were laid over: its
	 * store again (reach_files) reads the JIT map again for the same
	 * time, so it keeps the regions, and also the later snapshot of code
	 * replaced in place, which would otherwise keep the file unnamed.
	 */
	keep_snapshot(t, &p, pmv, pnm, ret == 0 && pending);
	if (jm2 && ret == 0 && !r->werr) {
		/* JIT code replaced in place since: its new names from then on */
		p.ts = ts2;
		p.nmaps = (uint32_t)njm2;
		p.maps = jm2;
		if (dtcap_put_proc(r->w, &p) < 0) {
			msg(r, "%s", dtcap_writer_error(r->w));
			r->werr = 1;
			ret = -1;
		}
	}
	free(jm);
	free(jm2);
	return ret;
}

/*
 * A user stack of pid reaching a file its last snapshot stored without
 * symbols: the snapshot again (same time: it replaces the first for
 * every event), with them.
 */
static void
reach_files(struct rec *r, const struct dt_rec *d, uint32_t ustack)
{
	const uint64_t *u = (const uint64_t *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;
	struct tslot *t;
	int isnew;

	if (d->dtr_pid == 0 || (t = tmap_get(&r->procs, d->dtr_pid, &isnew)) == NULL ||
	    !t->spending || t->slast == ustack)
		return;
	t->slast = ustack;
	for (size_t i = 0; i < t->sp.nmaps; i++) {
		const struct dtcap_map *m = &t->smaps[i];
		if (!(m->prot & 4) || m->file || m->name[0] != '/')
			continue;
		for (uint32_t k = 0; k < d->dtr_nustack; k++) {
			if (u[k] < m->start || u[k] >= m->end)
				continue;
			/* the file's name looked up only once a pc is in it: for
			 * every new stack of a busy process this ran for every
			 * mapping, a sixth of dtrec --offcpu's time */
			if (elfsyms_known(r->ec, m->name) < 0)
				break;
			struct dtcap_proc p = t->sp;
			store_snapshot(r, &p, t->smaps, t->sp.nmaps, t, u, d->dtr_nustack);
			return;
		}
	}
}

/*
 * A user stack stored for the first time: its pcs, as readers look them
 * up (the innermost as is, return addresses at pc - 1), with the ELF file
 * they lie in, for srcl_write at the end.  The maps are the source's
 * process table now, or the last ones read from /proc.
 */
static void
srcl_stack(struct rec *r, const struct dt_rec *d)
{
	const uint64_t *u = (const uint64_t *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;
	const struct dtsrc_proc *sp = r->src->ops->proc ? r->src->ops->proc(r->src, d->dtr_pid)
							 : NULL;
	const struct dtcap_map *mv = sp ? sp->maps : NULL;
	size_t nm = sp ? sp->nmaps : 0;
	struct tslot *t;
	int isnew;

	if (mv == NULL && (t = tmap_get(&r->procs, d->dtr_pid, &isnew)) != NULL) {
		mv = t->last.maps;
		nm = t->last.nmaps;
	}
	const struct dtcap_map *last = NULL;
	uint32_t id = 0;
	uint64_t bias = 0;
	for (uint32_t k = 0; k < d->dtr_nustack && r->srcl; k++) {
		uint64_t pc = k && u[k] ? u[k] - 1 : u[k];
		if (last == NULL || pc < last->start || pc >= last->end) {
			last = NULL;
			for (size_t i = 0; i < nm; i++)
				if (pc >= mv[i].start && pc < mv[i].end && (mv[i].prot & 4) &&
				    mv[i].name && mv[i].name[0] == '/') {
					last = &mv[i];
					id = srcl_lookup(r->srcl, last->name, &bias);
					break;
				}
			if (last == NULL)
				continue;
		}
		if (id && srcl_add(r->srcl, id, pc - last->start + last->offset + bias) < 0) {
			srcl_free(r->srcl);
			r->srcl = NULL;
		}
	}
}

/* A snapshot of what the source's kernel records say pid has mapped. */
static int
snapshot_src(struct rec *r, const struct dtsrc_proc *sp, struct tslot *t, const uint64_t *pcs,
	     size_t npcs)
{
	struct dtcap_map *mv = NULL;
	struct dtcap_proc p;
	int ret;

	if (sp->nmaps && (mv = malloc(sp->nmaps * sizeof(*mv))) == NULL)
		return -1;
	for (size_t i = 0; i < sp->nmaps; i++) {
		mv[i] = sp->maps[i];
		mv[i].file = 0;
	}
	memset(&p, 0, sizeof(p));
	p.ts = sp->ts;
	p.pid = sp->pid;
	p.ppid = sp->ppid;
	memcpy(p.comm, t->comm[0] ? t->comm : sp->comm, DTCAP_COMMLEN);
	p.comm[DTCAP_COMMLEN - 1] = '\0';
	p.exe = sp->exe ? sp->exe : "";
	ret = store_snapshot(r, &p, mv, sp->nmaps, t, pcs, npcs);
	free(mv);
	return ret;
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

static void
sum_counts(const struct rec *r, struct dtcap_count *t)
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
static uint64_t
rec_clock_ns(struct rec *r)
{
	uint64_t mono;
	int64_t real;

	r->src->ops->clock(r->src, &mono, &real);
	return mono;
}

static int
put_counters(struct rec *r)
{
	struct dtcap_count mine = { 0 };
	char err[DTSRC_ERRLEN];

	if (get_counters(r, err, sizeof(err)) < 0) {
		msg(r, "%s", err);
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
		msg(r, "%s", dtcap_writer_error(r->w));
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
	t = tmap_get(&r->comms, d->dtr_tid, &isnew);
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

/* Snapshot a process when first seen, and again when it execs. */
static void
track_proc(struct rec *r, const struct dt_rec *d)
{
	struct tslot *t;
	int isnew, exec;
	char c[DT_COMMLEN + 1];

	if (d->dtr_pid == 0)
		return;		/* the idle task has no user space */
	const uint64_t *pcs = (const uint64_t *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;

	t = tmap_get(&r->procs, d->dtr_pid, &isnew);
	if (t == NULL)
		return;
	{
		/* the kernel told the source what this process mapped: no /proc race */
		const struct dtsrc_proc *sp = r->src->ops->proc(r->src, d->dtr_pid);
		if (sp) {
			if (!t->snapped || t->gen != sp->gen) {
				t->gen = sp->gen;
				t->snapped++;
				snapshot_src(r, sp, t, pcs, d->dtr_nustack);
			}
			return;
		}
	}
	exec = r->exec_probe && d->dtr_probe == r->exec_probe;
	/*
	 * exec renames the task: a changed main-thread comm means a new
	 * image.  prctl(PR_SET_NAME) does too, so a process that keeps
	 * renaming itself gets only a few snapshots.
	 */
	if (!exec && t->snapped && !(t->snapped < 8 && d->dtr_tid == d->dtr_pid &&
				     d->dtr_comm[0] &&
				     memcmp(t->comm, d->dtr_comm, DT_COMMLEN) != 0)) {
		/* a user pc in no executable mapping: code mapped since (dlopen, JIT) */
		const uint64_t *u = (const uint64_t *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;
		int known = 0;

		if (d->dtr_nustack == 0 || u[0] == 0 || !dtpm_reread_left(t->misses))
			return;
		for (uint32_t i = 0; i < t->nxr && !known; i++)
			known = u[0] >= t->xr[2 * i] && u[0] < t->xr[2 * i + 1];
		if (known)
			return;
		t->misses++;
	}
	if (d->dtr_tid == d->dtr_pid || !t->snapped)
		memcpy(t->comm, d->dtr_comm, DT_COMMLEN);
	t->snapped++;
	memcpy(c, d->dtr_comm, DT_COMMLEN);
	c[DT_COMMLEN] = '\0';
	snapshot(r, d->dtr_pid, d->dtr_ts, c, t, pcs, d->dtr_nustack);
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
			msg(r, "%s", dtcap_writer_error(r->w));
			r->werr = 1;
			r->nlost++;
			continue;
		}
		track_proc(r, d);
		if (e.ustack)
			reach_files(r, d, e.ustack);
		/* ids are dense: a new one is a stack not stored before */
		if (e.ustack > r->ustack_max) {
			r->ustack_max = e.ustack;
			if (r->srcl)
				srcl_stack(r, d);
		}
	}
	if (off != len)
		r->nbad++;
}

/*
 * A source's process table may learn of a process's mappings after its
 * last events were read (the mapping was written to a CPU's ring the read
 * had already passed, the samples to one it had not): snapshot every
 * process with events whose entry changed since, so the samples find the
 * snapshot (by time) that holds what they ran in.
 */
static void
resnap(struct rec *r)
{
	for (size_t i = 0; i < r->procs.n && !r->werr; i++) {
		struct tslot *t = &r->procs.v[i];
		const struct dtsrc_proc *sp;

		if (t->key == 0 || !t->snapped ||
		    (sp = r->src->ops->proc(r->src, t->key)) == NULL || sp->gen == t->gen)
			continue;
		t->gen = sp->gen;
		t->snapped++;
		snapshot_src(r, sp, t, NULL, 0);
	}
}

/*
 * Recording ends: a JIT compiler may have described code since a
 * process's last snapshot (its map grows as it compiles, a JVM writes it
 * as it exits), so every process whose perf map changed is snapshotted
 * once more.
 */
static void
jit_final(struct rec *r)
{
	for (size_t i = 0; i < r->procs.n && !r->werr; i++) {
		struct tslot *t = &r->procs.v[i];
		const struct dtsrc_proc *sp;

		if (t->key == 0 || !t->snapped || !jitmap_changed(r->jc, t->key))
			continue;
		t->snapped++;
		if ((sp = r->src->ops->proc(r->src, t->key)) != NULL) {
			snapshot_src(r, sp, t, NULL, 0);
		} else if (t->last.nmaps) {
			/* known from /proc only, and maybe gone (a JVM writes
			 * its map as it exits): its last maps, JIT laid over */
			struct dtcap_proc p = t->last;
			store_snapshot(r, &p, (struct dtcap_map *)t->last.maps, t->last.nmaps, t,
				       NULL, 0);
		}
	}
}

/* One read of what the rings hold: bytes read, 0 if empty, -1 on error. */
static ssize_t
drain_once(struct rec *r, char *buf)
{
	char err[DTSRC_ERRLEN];
	ssize_t n = r->src->ops->read(r->src, buf, READBUF, err, sizeof(err));

	if (n < 0) {
		msg(r, "%s", err);
		return -1;
	}
	if (n == 0)
		return 0;
	r->raw_bytes += (uint64_t)n;
	process(r, buf, (size_t)n);
	resnap(r);
	return n;
}

static void
status_line(struct rec *r, uint64_t elapsed)
{
	char a[32], b[32], c[32], d[32];
	struct dtcap_count t;
	uint64_t bytes = dtcap_bytes_written(r->w);
	double secs = elapsed / 1e9;

	sum_counts(r, &t);
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

static int
write_metadata(struct rec *r, const struct dtp_sel *sel, size_t nsel,
	       const char *ksyms, size_t ksymslen, const char *mods, size_t modslen)
{
	struct dtcap_probe *pv = calloc(nsel ? nsel : 1, sizeof(*pv));
	char err[DTP_ERRLEN];
	size_t n = 0;
	int ret = -1;

	if (pv == NULL) {
		msg(r, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nsel; i++) {
		const struct dt_probe_info *p = dtp_by_id(r->dev, sel[i].id);
		if (p == NULL)
			continue;
		if (dtp_describe(r->dev, p, &pv[n], err, sizeof(err)) < 0) {
			msg(r, "%s", err);
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
	msg(r, "%s", dtcap_writer_error(r->w));
	r->werr = 1;
out:
	free(pv);
	return ret;
}

static void
fill_host(struct rec *r, struct dtcap_host *h)
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

/* Fork the command stopped on a pipe: it execs only once recording runs. */
static pid_t
spawn(struct rec *r, char *const *argv, int *go_fd, int *err_fd)
{
	int go[2], ep[2];
	pid_t pid, parent;

	if (pipe2(go, O_CLOEXEC) < 0) {
		msg(r, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		msg(r, "pipe: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return -1;
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		msg(r, "fork: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		char c;
		int e;
		/* a recorder killed outright takes the command with it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		/* its own group: ended as a whole, never with the recorder's */
		setpgid(0, 0);
		close(go[1]);
		close(ep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the recorder gave up before starting */
		execvp(argv[0], argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	/* both sides set the group: whichever runs first, it exists before exec */
	setpgid(pid, pid);
	/*
	 * In the terminal's foreground the command takes the terminal, as a
	 * shell's job does: it reads it, and Ctrl-C ends it (then recording).
	 */
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp() &&
	    tcsetpgrp(STDIN_FILENO, pid) == 0) {
		struct sigaction ign;
		r->fg = getpgrp();
		/* in the background now: the status line must not stop us (stty tostop) */
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigaction(SIGTTOU, &ign, &r->ttou);
	}
	*go_fd = go[1];
	*err_fd = ep[0];
	return pid;
}

/* The terminal back to the recorder's group, if the command had it. */
static void
take_terminal(struct rec *r)
{
	if (r->fg == 0)
		return;
	/* SIGTTOU, which a background group setting the foreground gets, is ignored */
	(void)tcsetpgrp(STDIN_FILENO, r->fg);
	sigaction(SIGTTOU, &r->ttou, NULL);
	r->fg = 0;
}

/*
 * Recording stopped before the command ended: end its process group (what
 * it started too), SIGTERM first, SIGKILL to what is left two seconds on.
 */
static void
reap(struct rec *r, pid_t child, int *status)
{
	int reaped = 0;

	if (killpg(child, SIGTERM) < 0)
		kill(child, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (!reaped && waitpid(child, status, WNOHANG) == child)
			reaped = 1;
		if (reaped && killpg(child, 0) < 0)
			break;
		usleep(10000);
	}
	if (killpg(child, SIGKILL) < 0 && !reaped)
		kill(child, SIGKILL);
	if (!reaped)
		waitpid(child, status, 0);
	take_terminal(r);
}

static void
summary(struct rec *r, uint64_t elapsed, int cmd_status, uint64_t bytes)
{
	char a[32], b[32], c[32];
	struct dtcap_count t;
	uint64_t ev = r->nread - r->nlost - r->nbad;

	sum_counts(r, &t);
	if (r->werr) {
		msg(r, "%s: writing failed: the capture keeps the events written before the "
		    "failure (%s of %llu recorded)", r->o->output, dtu_human_size(bytes, a, sizeof(a)),
		    (unsigned long long)ev);
	} else if (!r->o->quiet) {
		char d[32], e[32];
		/* what the events take, apart from the header, probe list and
		 * symbol tables: a short recording is all symbol tables */
		uint64_t meta = r->base_bytes + r->sym_bytes + r->srcl_bytes;
		uint64_t evb = bytes > meta ? bytes - meta : 0;
		msg(r, "%s: %llu events in %s (%s/s) from the %s source, %s: %.1f bytes/event "
		    "for the events, %s of symbol tables, %s of header and probes",
		    r->o->output, (unsigned long long)ev,
		    dtu_human_duration(elapsed, a, sizeof(a)),
		    dtu_human_count(elapsed ? ev / (elapsed / 1e9) : 0, b, sizeof(b)),
		    r->src->ops->name, dtu_human_size(bytes, c, sizeof(c)),
		    ev ? (double)evb / (double)ev : 0.0,
		    dtu_human_size(r->sym_bytes, d, sizeof(d)),
		    dtu_human_size(r->base_bytes, e, sizeof(e)));
		if (r->srcl_st.addrs)
			msg(r, "source lines: %llu of %llu user addresses (%llu in inlined "
			    "calls), %s; %u of %u files without DWARF line tables",
			    (unsigned long long)r->srcl_st.resolved,
			    (unsigned long long)r->srcl_st.addrs,
			    (unsigned long long)r->srcl_st.inlined,
			    dtu_human_size(r->srcl_bytes, d, sizeof(d)),
			    r->srcl_st.files_nodwarf, r->srcl_st.files);
		if (t.skipped || t.recursive)
			msg(r, "%llu timer ticks skipped, %llu recursive events not recorded",
			    (unsigned long long)t.skipped, (unsigned long long)t.recursive);
		if (cmd_status != -1 && WIFEXITED(cmd_status) && WEXITSTATUS(cmd_status))
			msg(r, "the command exited with status %d", WEXITSTATUS(cmd_status));
		else if (cmd_status != -1 && WIFSIGNALED(cmd_status))
			msg(r, "the command was killed by signal %d", WTERMSIG(cmd_status));
	}
	/* losses are never quiet: a profile with holes misleads */
	if (t.dropped)
		msg(r, "WARNING: the kernel dropped %llu of %llu events (%.2f%%): "
		    "use a larger ring (-b) or fewer probes",
		    (unsigned long long)t.dropped, (unsigned long long)t.produced,
		    t.produced ? 100.0 * (double)t.dropped / (double)t.produced : 0.0);
	if (r->nbad)
		msg(r, "WARNING: %llu malformed records from the kernel were skipped",
		    (unsigned long long)r->nbad);
	if (r->nlost)
		msg(r, "WARNING: %llu events read but not written", (unsigned long long)r->nlost);
	if (r->ustack_how[0] && !r->o->quiet)
		msg(r, "%s", r->ustack_how);
	if (r->src->ops->ustack_counts) {
		uint64_t dw, dwt, fpb;
		r->src->ops->ustack_counts(r->src, &dw, &dwt, &fpb);
		if ((dw || fpb) && !r->o->quiet)
			msg(r, "user stacks: %llu unwound with DWARF (%llu of them stopped short)",
			    (unsigned long long)dw, (unsigned long long)dwt);
		/* a silent downgrade would mislead as much as a drop */
		if (fpb)
			msg(r, "WARNING: %llu samples kept their frame-pointer user stack: unwinding "
			    "fell behind (fewer probes, a lower rate or a smaller "
			    "--user-stack-size)", (unsigned long long)fpb);
	}
	if (r->src->ops->ustack_spool) {
		uint64_t n, peak, lost;
		char h[32];
		r->src->ops->ustack_spool(r->src, &n, &peak, &lost);
		if (n && !r->o->quiet)
			msg(r, "user stacks: %llu samples waited in the spool file (at most %s) "
			    "to be unwound when the CPUs were idle", (unsigned long long)n,
			    dtu_human_size(peak, h, sizeof(h)));
		if (lost)
			msg(r, "WARNING: %llu spooled samples were lost: reading the spool file "
			    "failed", (unsigned long long)lost);
	}
}


/* The kernel symbols of the stacks stored so far, when there are new ones. */
static int
put_kused(struct rec *r)
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
		msg(r, "%s", err);
		return -1;
	}
	if (have && !S_ISREG(st.st_mode)) {
		if ((*lockfd = dtu_out_open_special(out, err, sizeof(err))) < 0) {
			msg(r, "%s", err);
			return -1;
		}
		snprintf(tmp, len, "%s", out);
		return 0;
	}
	/* an existing link to a regular file: replace the file it names */
	if ((*target = have ? realpath(out, NULL) : strdup(out)) == NULL) {
		msg(r, "%s: %s", out, strerror(errno));
		return -1;
	}
	/* another dtrec's temporary file, then its output: after its rename
	 * the lock is on the output, so in this order one of them shows it */
	if (dtu_out_sweep(*target, NULL, &other) > 0 || (have && dtu_out_locked(*target))) {
		if (other)
			msg(r, "%s: another dtrec (process %ld) is writing it; refusing to "
			    "replace its capture", out, other);
		else
			msg(r, "%s: another dtrec is writing it (the file is locked); refusing "
			    "to replace its capture", out);
		goto fail;
	}
	if ((*lockfd = dtu_out_tmp_create(*target, &t, err, sizeof(err))) < 0) {
		msg(r, "%s", err);
		goto fail;
	}
	if (strlen(t) >= len) {
		msg(r, "%s: path too long", out);
		goto fail;
	}
	snprintf(tmp, len, "%s", t);
	/* two started at once both see the other's file now: both refuse */
	if (dtu_out_sweep(*target, t, &other) > 0) {
		msg(r, "%s: another dtrec (process %ld) is writing it; refusing to replace its "
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

/* Is argv[0] something execvp will run?  Checked before anything is created. */
static int
runnable(struct rec *r, const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK) == 0)
			return 1;
		r->not_run = errno == ENOENT || errno == ENOTDIR ? 127 : 126;
		msg(r, "%s: %s", cmd, strerror(errno));
		return 0;
	}
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; ; ) {
		const char *c = strchr(p, ':');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, l ? p : ".", cmd);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!c)
			break;
		p = c + 1;
	}
	msg(r, "%s: command not found", cmd);
	r->not_run = 127;
	return 0;
}

/*
 * --user-stacks auto with -u: whether every probe gets a stack copy.  The
 * sampled probes always do; system calls and tracepoints keep the cheaper
 * frame-pointer walk, unless a target's program was built without frame
 * pointers, where that walk ends after a frame or two.  r->ustack_how says
 * which, for the summary.
 */
static int
ustack_choice(struct rec *r)
{
	const struct dtrec_opts *o = r->o;
	char path[4096], exe[4096];
	int fp = -1, nofp = 0;

	if (o->argv && o->argv[0]) {
		if (fpcheck_which(o->argv[0], path, sizeof(path)) == 0 &&
		    (fp = fpcheck_file(path)) == 0)
			nofp = 1;
		snprintf(exe, sizeof(exe), "%s", path);
	}
	for (size_t i = 0; !nofp && i < o->npids; i++) {
		ssize_t l;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)o->pids[i]);
		if ((l = readlink(path, exe, sizeof(exe) - 1)) < 0)
			continue;
		exe[l] = '\0';
		if ((fp = fpcheck_file(path)) == 0)
			nofp = 1;
	}
	if (nofp)
		snprintf(r->ustack_how, sizeof(r->ustack_how), "user stacks: DWARF for every probe: "
			 "%.200s is built without frame pointers", exe);
	else if (fp == 1)
		snprintf(r->ustack_how, sizeof(r->ustack_how), "user stacks: DWARF for the sampled "
			 "probes, frame pointers for the rest: %.200s keeps frame pointers", exe);
	else
		snprintf(r->ustack_how, sizeof(r->ustack_how), "user stacks: DWARF for the sampled "
			 "probes, frame pointers for the rest (--user-stacks dwarf for every probe)");
	return nofp;
}

/* Let the waiting command exec.  -1 (message printed) if it could not. */
static int
release_child(struct rec *r, int *go_fd, int err_fd, pid_t *child, int *cmd_status)
{
	int e = 0;
	ssize_t n;

	if (write(*go_fd, "g", 1) != 1) {
		msg(r, "starting %s: %s", r->o->argv[0], strerror(errno));
		return -1;
	}
	close(*go_fd);
	*go_fd = -1;
	/* EOF: exec succeeded (close-on-exec); an int: its errno */
	do
		n = read(err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(e)) {
		r->not_run = e == ENOENT || e == ENOTDIR ? 127 : 126;
		msg(r, "%s: %s", r->o->argv[0], strerror(e));
		waitpid(*child, cmd_status, 0);
		*child = -1;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------ flight recorder */

/* What a dump starts from: the per-capture state of struct rec, fresh. */
static int
flight_reset(struct rec *r, const char *ksyms, size_t ksymslen)
{
	char *k;

	tmap_free(&r->comms);
	tmap_free(&r->procs);
	/* file ids (cap_id) belong to one capture */
	elfsyms_cache_free(r->ec);
	jitmap_cache_free(r->jc);
	r->jc = NULL;
	kused_free(r->kused);
	r->kused = NULL;
	r->kstack_max = 0;
	r->nread = r->raw_bytes = r->nbad = r->nlost = 0;
	r->werr = 0;
	if ((r->ec = elfsyms_cache_new()) == NULL || (r->jc = jitmap_cache_new()) == NULL)
		return -1;
	if (ksyms) {
		if ((k = malloc(ksymslen + 1)) == NULL)
			return -1;
		memcpy(k, ksyms, ksymslen + 1);
		if ((r->kused = kused_new(k, ksymslen)) == NULL)
			return -1;
	}
	return 0;
}

/*
 * One dump: freeze the rings, write what they hold to OUTPUT.N.dtc
 * (under a temporary name until complete; an existing N is skipped, never
 * overwritten), let them run on.  0, or -1 (message printed).
 */
static int
flight_dump(struct rec *r, unsigned *seq, const struct dtp_sel *sel, size_t nsel,
	    const char *ksyms, size_t ksymslen, const char *mods, size_t modslen, char *buf,
	    const char *why, uint64_t *total)
{
	const char *out = r->o->output;
	size_t ol = strlen(out);
	char path[4200], *tmp = NULL, err[DTSRC_ERRLEN];
	struct dtcap_writer_opts wo;
	struct dtcap_host host;
	struct stat st;
	int fd, ret = -1, frozen = 0;
	uint64_t ev;

	if (ol >= 4 && strcmp(out + ol - 4, ".dtc") == 0)
		ol -= 4;
	do
		snprintf(path, sizeof(path), "%.*s.%u.dtc", (int)ol, out, ++*seq);
	while (lstat(path, &st) == 0 && *seq < 100000);
	/* the dumps' directory obeys -o's rules (util.h dtu_out_check) */
	if (dtu_path_links_ok(path, err, sizeof(err)) < 0) {
		msg(r, "%s", err);
		return -1;
	}
	/* named after this process, removed by the signal handler and swept
	 * by the next run when a kill left it (util.h dtu_out_tmp_create) */
	if ((fd = dtu_out_tmp_create(path, &tmp, err, sizeof(err))) < 0) {
		msg(r, "%s", err);
		return -1;
	}
	close(fd);
	if (flight_reset(r, ksyms, ksymslen) < 0) {
		msg(r, "out of memory");
		goto out;
	}
	fill_host(r, &host);
	memset(&wo, 0, sizeof(wo));
	wo.level = r->o->level;
	wo.threaded = 1;
	if ((r->w = dtcap_create(tmp, &host, &wo)) == NULL) {
		msg(r, "%s", dtcap_create_error());
		goto out;
	}
	if (write_metadata(r, sel, nsel, NULL, 0, mods, modslen) < 0)
		goto close;
	if (r->src->ops->dump(r->src, 1, err, sizeof(err)) < 0) {
		msg(r, "%s", err);
		goto close;
	}
	frozen = 1;
	for (;;) {
		ssize_t n = drain_once(r, buf);
		if (n < 0)
			goto close;
		if (n == 0)
			break;
	}
	if (put_counters(r) < 0 || put_kused(r) < 0)
		goto close;
	ret = 0;
close:
	if (frozen && r->src->ops->dump(r->src, 0, err, sizeof(err)) < 0) {
		msg(r, "%s", err);
		ret = -1;
	}
	if (r->w && dtcap_close(r->w) < 0)
		ret = -1;
	r->w = NULL;
	if (ret == 0 && !r->werr && rename(tmp, path) == 0) {
		dtu_out_tmp_forget();
		free(tmp);
		ev = r->nread - r->nlost - r->nbad;
		*total += ev;
		if (!r->o->quiet)
			msg(r, "%s: %llu events (%s)", path, (unsigned long long)ev, why);
		return 0;
	}
	if (ret == 0)
		msg(r, "%s: %s", path, r->werr ? "writing failed" : strerror(errno));
	ret = -1;
out:
	unlink(tmp);
	dtu_out_tmp_forget();
	free(tmp);
	return ret;
}

/*
 * Flight recording: the source's rings overwrite their oldest events and
 * nothing is read until a dump is asked for (o->dump changes, a trigger
 * probe fired) or recording ends, which dumps once more.
 */
static int
flight_loop(struct rec *r, const struct dtp_sel *sel, size_t nsel, const char *ksyms,
	    size_t ksymslen, const char *mods, size_t modslen, char *buf, pid_t *child,
	    int *cmd_status, struct dtrec_result *res)
{
	const struct dtrec_opts *o = r->o;
	uint64_t start = dtu_now_ns(), total = 0, last = 0, skipped = 0;
	uint64_t gap = o->dump_gap_ns ? o->dump_gap_ns : DTREC_DUMP_GAP_DEF;
	uint32_t max = o->max_dumps ? o->max_dumps : DTREC_MAX_DUMPS_DEF;
	uint64_t trig = r->src->ops->triggered ? r->src->ops->triggered(r->src) : 0;
	sig_atomic_t asked = o->dump ? *o->dump : 0;
	unsigned seq = 0, dumps = 0;
	int failed = 0, said_max = 0, dumped = 0;

	for (;;) {
		uint64_t now = dtu_now_ns(), t;
		const char *why = NULL;

		if (o->stop && *o->stop)
			break;
		if (o->duration_ns && now - start >= o->duration_ns)
			break;
		if (*child > 0 && waitpid(*child, cmd_status, WNOHANG) == *child) {
			*child = -1;
			break;
		}
		if (r->tg.n && dtrec_targets_gone(&r->tg))
			break;
		if (o->dump && *o->dump != asked) {
			asked = *o->dump;
			why = "SIGUSR2";
		} else if (o->ntriggers && (t = r->src->ops->triggered(r->src)) != trig) {
			uint64_t fired = t - trig;
			trig = t;
			/* a trigger inside the gap is skipped, not deferred: by
			 * the gap's end the rings hold other events */
			if (!dumped || now - last >= gap) {
				why = "trigger";
				fired--;
			}
			skipped += fired;
		}
		/* the last dump is kept for the end of recording */
		if (why && dumps + 1 >= max) {
			if (!said_max && !o->quiet)
				msg(r, "--max-dumps %u reached: the next dump is the one at the end "
				    "of recording", (unsigned)max);
			said_max = 1;
			if (strcmp(why, "trigger") == 0)
				skipped++;
			why = NULL;
		}
		if (why) {
			if (flight_dump(r, &seq, sel, nsel, ksyms, ksymslen, mods, modslen, buf, why,
					&total) < 0)
				failed = 1;
			else
				dumps++;
			last = dtu_now_ns();
			dumped = 1;
			continue;
		}
		/* keeps the source's process table current (side band) */
		if (drain_once(r, buf) < 0)
			failed = 1;
		/* the poll interval is how late a trigger's dump can be */
		(void)poll(NULL, 0, 20);
	}
	if (flight_dump(r, &seq, sel, nsel, ksyms, ksymslen, mods, modslen, buf,
			"end of recording", &total) < 0)
		failed = 1;
	else
		dumps++;
	/* silence would read as "the trigger fired this often" */
	if (skipped)
		msg(r, "%llu trigger%s fired without a dump (--dump-interval %.3gs, --max-dumps %u)",
		    (unsigned long long)skipped, skipped == 1 ? "" : "s", (double)gap / 1e9,
		    (unsigned)max);
	if (res) {
		res->events = total;
		res->dumps = dumps;
		res->triggers_skipped = skipped;
		res->elapsed_ns = dtu_now_ns() - start;
	}
	return failed ? -1 : 0;
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
		msg(r, "no probe given (-e PROBE)");
		return 1;
	}
	if (o->argv && o->argv[0] && !runnable(r, o->argv[0])) {
		if (res)
			res->not_run = r->not_run;
		return 1;
	}
	dev = dtp_open_source(o->source, o->device, 1, err, sizeof(err));
	if (dev == NULL) {
		msg(r, "%s", err);
		return 1;
	}
	r->src = dtsrc_new(dev, err, sizeof(err));
	if (r->src == NULL) {
		msg(r, "%s", err);
		return 1;
	}
	r->dev = r->src->dev;
	if (o->flight && r->src->ops->dump == NULL) {
		msg(r, "--flight: the %s source has no flight recorder: use --source perf",
		    r->src->ops->name);
		goto out;
	}
	/* a trigger is recorded too: the dump shows what led up to it */
	for (size_t i = 0; i < o->ntriggers; i++) {
		if (dtp_resolve(r->dev, o->triggers[i], &tsel, &ntsel, err, sizeof(err)) < 0 ||
		    dtp_resolve(r->dev, o->triggers[i], &sel, &nsel, err, sizeof(err)) < 0) {
			msg(r, "--trigger: %s", err);
			goto out;
		}
	}
	for (size_t i = 0; i < o->nprobes; i++) {
		if (dtp_resolve(r->dev, o->probes[i], &sel, &nsel, err, sizeof(err)) < 0) {
			msg(r, "%s", err);
			goto out;
		}
	}
	for (size_t i = 0; o->offcpu && dtoff_probes[i]; i++) {
		if (dtp_resolve(r->dev, dtoff_probes[i], &sel, &nsel, err, sizeof(err)) < 0) {
			msg(r, "--offcpu: %s", err);
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
			r->exec_probe = sel[i].id;
	}
	buf = malloc(READBUF);
	r->ec = elfsyms_cache_new();
	r->jc = jitmap_cache_new();
	/* a flight recorder's dumps are each a capture of their own: their
	 * file ids restart, and a dump must be quick */
	if (!o->no_srcline && !o->flight && (r->srcl = srcl_new()) == NULL) {
		msg(r, "out of memory");
		goto out;
	}
	r->ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	if (r->ncpus < 1)
		r->ncpus = 1;
	r->counts = calloc(r->ncpus, sizeof(*r->counts));
	if (!buf || !r->ec || !r->jc || !r->counts) {
		msg(r, "out of memory");
		goto out;
	}

	/* both sources filter targets in the kernel, following their forks */
	if ((o->npids || (o->argv && o->argv[0])) && !r->src->ops->filters_targets(r->src)) {
		msg(r, "the %s source cannot record only some processes (-p, COMMAND)",
		    r->src->ops->name);
		goto out;
	}
	if (o->comm && !r->src->ops->filters_comm) {
		msg(r, "--comm: the %s source cannot filter by command name; use --source dt",
		    r->src->ops->name);
		goto out;
	}
	if (o->cgroup && !r->src->ops->filters_cgroup) {
		msg(r, "--cgroup: the %s source cannot filter by cgroup; use --source dt",
		    r->src->ops->name);
		goto out;
	}
	if (o->comm && (o->comm[0] == '\0' || strlen(o->comm) >= DT_COMMLEN)) {
		msg(r, "--comm '%s': a command name is 1 to %d bytes", o->comm, DT_COMMLEN - 1);
		goto out;
	}
	if (o->cgroup && (cgfd = dtu_open_cgroup(o->cgroup, err, sizeof(err))) < 0) {
		msg(r, "%s", err);
		goto out;
	}
	/* the command waits on a pipe: the sources follow it from its exec */
	if (o->argv && o->argv[0]) {
		child = spawn(r, o->argv, &go_fd, &err_fd);
		if (child < 0)
			goto out;
	}
	memset(&cfg, 0, sizeof(cfg));
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
		msg(r, "--user-stacks dwarf: the %s source copies no user stacks; use fp or auto",
		    r->src->ops->name);
		goto out;
	}
	if (o->ustack_mode == DTSRC_USTACK_AUTO && r->src->ops->ustack_counts == NULL)
		cfg.ustack_mode = DTSRC_USTACK_FP;
	if (cfg.ustack_mode == DTSRC_USTACK_AUTO && !o->flight && (cfg.evtflags & DTEVT_USTACK))
		cfg.ustack_all = ustack_choice(r);
	if (o->flight) {
		/* a dump is read in one go: samples still with the unwinding
		 * workers would miss it, so flight stacks are frame pointers */
		if (o->ustack_mode == DTSRC_USTACK_DWARF) {
			msg(r, "--user-stacks dwarf does not work with --flight (yet): use fp");
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
		msg(r, "%s", err);
		goto out;
	}
	if (dtrec_targets_open(&r->tg, o->pids, o->npids) < 0) {
		msg(r, "out of memory");
		goto out;
	}

	/*
	 * Read the symbol tables before the capture exists: on a slow machine
	 * this takes seconds, which should not count as recording time.
	 * Without root kallsyms shows zeros: still stored, the reader notices.
	 */
	ksyms = dtu_read_file("/proc/kallsyms", &ksymslen);
	if (ksyms == NULL)
		msg(r, "warning: /proc/kallsyms: %s: kernel frames stay unnamed", strerror(errno));
	else {
		/* every flight dump starts its own list of used symbols */
		if (o->flight && (ksyms_keep = malloc(ksymslen + 1)) != NULL)
			memcpy(ksyms_keep, ksyms, ksymslen + 1);
		r->kused = kused_new(ksyms, ksymslen);
		ksyms = NULL;
		if (r->kused == NULL) {
			msg(r, "out of memory");
			goto out;
		}
	}
	mods = dtu_read_file("/proc/modules", &modslen);

	if (o->flight) {
		/* said before recording, not at the first dump */
		if (dtu_path_links_ok(o->output, err, sizeof(err)) < 0) {
			msg(r, "%s", err);
			goto out;
		}
		if (r->src->ops->start(r->src, err, sizeof(err)) < 0) {
			msg(r, "%s", err);
			goto out;
		}
		if (child > 0 && release_child(r, &go_fd, err_fd, &child, &cmd_status) < 0) {
			r->src->ops->stop(r->src, err, sizeof(err));
			goto out;
		}
		ret = flight_loop(r, sel, nsel, ksyms_keep, ksymslen, mods, modslen, buf, &child,
				  &cmd_status, res) < 0 ? 1 : 0;
		if (r->src->ops->stop(r->src, err, sizeof(err)) < 0)
			msg(r, "%s", err);
		if (child > 0) {
			reap(r, child, &cmd_status);
			child = -1;
		}
		if (res)
			res->cmd_status = cmd_status;
		goto out;
	}

	if (make_temp(r, tmp, sizeof(tmp), &target, &lockfd) < 0)
		goto out;
	fill_host(r, &host);
	memset(&wo, 0, sizeof(wo));
	wo.level = o->level;
	wo.threaded = 1;	/* zstd on the writer's thread: reading never waits */
	r->w = dtcap_create(tmp, &host, &wo);
	if (r->w == NULL) {
		msg(r, "%s", dtcap_create_error());
		goto out;
	}
	if (write_metadata(r, sel, nsel, ksyms, ksymslen, mods, modslen) < 0)
		goto finish;
	free(ksyms);
	free(mods);
	ksyms = mods = NULL;
	/* out before the first event, so sizes and ratios can leave it aside */
	if (dtcap_flush(r->w) < 0) {
		msg(r, "%s", dtcap_writer_error(r->w));
		r->werr = 1;
		goto finish;
	}
	r->base_bytes = dtcap_bytes_written(r->w);
	if (r->src->ops->start(r->src, err, sizeof(err)) < 0) {
		msg(r, "%s", err);
		goto finish;
	}
	recording = 1;
	start = last_status = last_counters = last_flush = dtu_now_ns();
	{
		/* an eighth of all rings: small rings must not wait long */
		uint64_t all = (uint64_t)(o->bufsize ? o->bufsize : DT_BUFSZ_DEFAULT) * r->ncpus;
		backlog = all / 8 < BACKLOG ? (size_t)(all / 8) : BACKLOG;
	}
	if (child > 0 && release_child(r, &go_fd, err_fd, &child, &cmd_status) < 0) {
		failed = 1;
		goto finish;
	}
	/* recording runs: now the capture may take the output's name */
	if (target && rename(tmp, target) < 0) {
		msg(r, "%s: %s", o->output, strerror(errno));
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
		got = drain_once(r, buf);
		if (got < 0) {
			failed = 1;
			break;
		}
		if (r->werr)
			break;
		now = dtu_now_ns();
		if (now - last_counters >= COUNTERS_NS) {
			put_counters(r);
			last_counters = now;
		}
		/* a killed recorder loses at most one interval of events */
		if (now - last_flush >= flush_ns) {
			/* what the rings hold now goes out with this flush */
			if (drain_once(r, buf) < 0) {
				failed = 1;
				break;
			}
			uint64_t ev = dtcap_events_written(r->w);
			if (ev != flushed_events) {
				if (put_kused(r) < 0 || dtcap_flush(r->w) < 0) {
					msg(r, "%s", dtcap_writer_error(r->w));
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
			msg(r, "%s", err);
		/* after the stop nothing new arrives: empty the rings completely */
		for (int i = 0; i < 100000; i++)
			if (drain_once(r, buf) <= 0)
				break;
		jit_final(r);
		put_counters(r);
	}
	if (child > 0) {
		reap(r, child, &cmd_status);
		child = -1;
		if (go_fd >= 0)
			cmd_status = -1;	/* never released: it ran nothing */
	}
	take_terminal(r);
	if (r->tty && recording)
		fputs("\r\033[K", r->st);
	if (r->w) {
		uint64_t bytes;
		if (recording && !r->werr && r->srcl &&
		    srcl_write(r->srcl, r->w, &r->srcl_st) < 0) {
			msg(r, "%s", dtcap_writer_error(r->w));
			r->werr = 1;
		}
		if (recording && !r->werr && (put_kused(r) < 0 || dtcap_flush(r->w) < 0)) {
			msg(r, "%s", dtcap_writer_error(r->w));
			r->werr = 1;
		}
		r->sym_bytes = dtcap_symbol_bytes(r->w);	/* final: flushed */
		r->srcl_bytes = dtcap_srcline_bytes(r->w);
		if (dtcap_close(r->w) < 0) {
			if (!r->werr)
				msg(r, "%s: cannot finalize the capture", o->output);
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
			sum_counts(r, &t);
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
		reap(r, child, &cmd_status);
	take_terminal(r);
	if (res)
		res->not_run = r->not_run;
	dtrec_targets_close(&r->tg);
	dtsrc_close(r->src);
	elfsyms_cache_free(r->ec);
	jitmap_cache_free(r->jc);
	srcl_free(r->srcl);
	kused_free(r->kused);
	tmap_free(&r->comms);
	tmap_free(&r->procs);
	free(r->counts);
	free(sel);
	free(tsel);
	free(ksyms_keep);
	free(buf);
	free(ksyms);
	free(mods);
	return ret;
}
