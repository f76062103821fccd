/*
 * snapshots.c - process snapshots into the capture: /proc or the kernel's
 * events, the ELF files behind executable mappings (symbols once a stored
 * stack reaches them), JIT maps laid over, source lines of stored stacks.
 * It subscribes to the machine (machine.h: "process P changed at ts");
 * its state is struct rec's table of what the capture holds of each
 * process (record_int.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_grow.h"
#include "elfsyms.h"
#include "jitmap.h"
#include "procmaps.h"
#include "srcline.h"
#include "util.h"
#include "record_int.h"

static uint64_t
tmap_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct tmap *)ctx)->v[e].key);
}

/* The slot of key, new ones zeroed (*isnew set); NULL when out of memory.
 * The pointer lasts until the next tmap_get on m. */
struct tslot *
rec_tmap_get(struct tmap *m, uint32_t key, int *isnew)
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
	memset(t->schecked, 0, sizeof(t->schecked));
}

void
rec_tmap_free(struct tmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
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

/*
 * What the machine read of /proc/PID/{stat,exe,maps} plus the ELF symbols
 * of every executable mapping.  A process that is already gone is not an
 * error: its events simply stay unsymbolized.
 */
static int store_snapshot(struct rec *r, struct dtcap_proc *p, struct dtcap_map *mv,
			  size_t nm, struct tslot *t, const uint64_t *pcs, size_t npcs);
static void keep_last(struct rec *r, struct tslot *t, const struct dtcap_proc *p,
		      struct dtcap_map *mv, size_t nm, char *text);

static int
snapshot(struct rec *r, const struct dtm_change *c, struct tslot *t)
{
	struct dtm_read *rd = c->rd;
	struct dtcap_proc p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.ts = c->ts;
	p.pid = c->pid;
	snprintf(p.comm, sizeof(p.comm), "%.*s", DT_COMMLEN - 1, c->comm);
	p.exe = rd->exe;
	p.ppid = rd->ppid;
	if (rd->nm == 0 && c->seq > 1)
		return 0;	/* gone (or a kernel thread): an empty snapshot would
				 * hide the last one */
	ret = store_snapshot(r, &p, rd->mv, rd->nm, t, c->pcs, c->npcs);
	/* the snapshot keeps the maps and their text: taken from the read */
	keep_last(r, t, &p, rd->mv, rd->nm, rd->text);
	rd->mv = NULL;
	rd->text = NULL;
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
				rec_msg(r, "%s", dtcap_writer_error(r->w));
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
		rec_msg(r, "%s", dtcap_writer_error(r->w));
		r->werr = 1;
		ret = -1;
	}
	if (jerr[0])
		rec_msg(r, "%s", jerr);
	if (jm) {
		mv = jm;
		nm = njm;
	}
	p.nmaps = (uint32_t)nm;
	p.maps = mv;
	/* where code lives, to notice pcs outside it (dlopen, JIT) */
	dtm_set_code(r->m, pid, mv, nm);
	if (ret == 0 && !r->werr && dtcap_put_proc(r->w, &p) < 0) {
		rec_msg(r, "%s", dtcap_writer_error(r->w));
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
			rec_msg(r, "%s", dtcap_writer_error(r->w));
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
void
rec_reach_files(struct rec *r, const struct dt_rec *d, uint32_t ustack)
{
	const uint64_t *u = (const uint64_t *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;
	struct tslot *t;
	int isnew;

	if (d->dtr_pid == 0 || (t = rec_tmap_get(&r->procs, d->dtr_pid, &isnew)) == NULL ||
	    !t->spending || t->schecked[ustack % SCHECKED] == ustack)
		return;
	t->schecked[ustack % SCHECKED] = ustack;
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
 * they lie in, for srcl_write at the end.  The maps are the kernel's
 * events' now (the machine), or the last ones read from /proc.
 */
void
rec_srcl_stack(struct rec *r, const struct dt_rec *d)
{
	const uint64_t *u = (const uint64_t *)(d + 1) + d->dtr_nargs + d->dtr_nkstack;
	const struct kproc *sp = dtm_proc(r->m, d->dtr_pid);
	const struct dtcap_map *mv = sp ? sp->maps : NULL;
	size_t nm = sp ? sp->nmaps : 0;
	struct tslot *t;
	int isnew;

	if (mv == NULL && (t = rec_tmap_get(&r->procs, d->dtr_pid, &isnew)) != NULL) {
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

/* A snapshot of what the kernel's events say pid has mapped (comm: 16 bytes). */
static int
snapshot_src(struct rec *r, const struct kproc *sp, const char *comm, struct tslot *t,
	     const uint64_t *pcs, size_t npcs)
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
	memcpy(p.comm, comm, DTCAP_COMMLEN);
	p.comm[DTCAP_COMMLEN - 1] = '\0';
	p.exe = sp->exe ? sp->exe : "";
	ret = store_snapshot(r, &p, mv, sp->nmaps, t, pcs, npcs);
	free(mv);
	return ret;
}

/*
 * The machine's subscriber: process c->pid changed (first seen, a new
 * image, new mappings, a pc outside those stored).
 */
void
rec_snap_changed(void *arg, const struct dtm_change *c)
{
	struct rec *r = arg;
	struct tslot *t;
	int isnew;

	if (r->werr || (t = rec_tmap_get(&r->procs, c->pid, &isnew)) == NULL)
		return;
	if (c->kp)
		snapshot_src(r, c->kp, c->comm, t, c->pcs, c->npcs);
	else if (c->rd)
		snapshot(r, c, t);
	else if (t->last.nmaps) {
		/* known from /proc only, and maybe gone (a JVM writes its
		 * map as it exits): its last maps, JIT laid over */
		struct dtcap_proc p = t->last;
		store_snapshot(r, &p, (struct dtcap_map *)t->last.maps, t->last.nmaps, t, NULL, 0);
	}
}

/*
 * Recording ends: a JIT compiler may have described code since a
 * process's last snapshot (its map grows as it compiles, a JVM writes it
 * as it exits), so every process whose perf map changed is snapshotted
 * once more.
 */
void
rec_jit_final(struct rec *r)
{
	for (size_t i = 0; i < r->procs.n && !r->werr; i++) {
		struct tslot *t = &r->procs.v[i];
		const struct kproc *sp;

		if (t->key == 0 || !jitmap_changed(r->jc, t->key))
			continue;
		if ((sp = dtm_proc(r->m, t->key)) != NULL) {
			const char *comm = dtm_comm(r->m, t->key);
			snapshot_src(r, sp, comm[0] ? comm : sp->comm, t, NULL, 0);
		} else if (t->last.nmaps) {
			/* known from /proc only, and maybe gone (a JVM writes
			 * its map as it exits): its last maps, JIT laid over */
			struct dtcap_proc p = t->last;
			store_snapshot(r, &p, (struct dtcap_map *)t->last.maps, t->last.nmaps, t,
				       NULL, 0);
		}
	}
}
