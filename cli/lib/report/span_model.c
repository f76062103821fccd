/*
 * span_model.c - entry/return pairs of a capture's function-like probes
 * (engine.h dtr_spans_build): syscall:F:entry/return, kprobe:F:entry/
 * return, uprobe:...:entry/return.  The events of those probes are
 * collected on one block scan, put in order by thread and time (blocks hold
 * per-CPU batches), then paired per thread with a stack of open entries:
 * a return closes the innermost open entry of its probe, so nesting and
 * recursion pair up; entries it passes over lost their return, and a
 * return without an open entry lost its entry.  Both are counted.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "engine.h"
#include "report.h"

struct pev {
	uint64_t	ts;
	uint32_t	tid, pid, comm, probe;	/* probe: the entry's id */
	int64_t		ret;
	uint32_t	err;
	uint8_t		ret_side;	/* a return */
	uint8_t		nargs;		/* an entry's, at most DTR_SPAN_ARGS */
};

struct pbuild {
	uint32_t	*entry_of;	/* by probe id: the entry's id, 0: not paired */
	uint8_t		*is_ret;
	uint32_t	np;
	int		want_args;	/* DTR_SPANS_ARGS */
	struct pev	*ev;
	size_t		n, cap;
	uint64_t	(*args)[DTR_SPAN_ARGS];	/* want_args: by event */
	size_t		acap;
	int		oom;
};

/* "P:F:entry" and "P:F:return" share "P:F". */
static int
base_len(const char *name, const char *suffix)
{
	size_t l = strlen(name), s = strlen(suffix);
	if (l <= s + 1 || strcmp(name + l - s, suffix) != 0 || name[l - s - 1] != ':')
		return -1;
	return (int)(l - s - 1);
}

static int
span_row(void *ctx, const struct dtcap_block *b, uint32_t i)
{
	struct pbuild *pb = ctx;
	uint32_t p = b->probe[i];

	if (p >= pb->np || !pb->entry_of[p])
		return 0;
	if (DT_GROW(pb->ev, pb->cap, pb->n, 1, 4096) ||
	    (pb->want_args && DT_GROW(pb->args, pb->acap, pb->n, 1, 4096))) {
		pb->oom = 1;
		return 1;
	}
	struct pev *e = &pb->ev[pb->n++];
	e->ts = b->ts[i];
	e->tid = b->tid[i];
	e->pid = b->pid[i];
	e->comm = b->comm[i];
	e->probe = pb->entry_of[p];
	e->ret_side = pb->is_ret[p];
	e->ret = 0;
	e->err = 0;
	e->nargs = 0;
	if (!e->ret_side && pb->want_args) {
		e->nargs = b->nargs[i] < DTR_SPAN_ARGS ? b->nargs[i] : DTR_SPAN_ARGS;
		memset(pb->args[pb->n - 1], 0, sizeof(pb->args[0]));
		memcpy(pb->args[pb->n - 1], &b->args[(size_t)i * DTCAP_MAXARGS],
		       e->nargs * sizeof(uint64_t));
	}
	if (e->ret_side && b->nargs[i] >= 2) {
		e->ret = (int64_t)b->args[(size_t)i * DTCAP_MAXARGS];
		e->err = (uint32_t)b->args[(size_t)i * DTCAP_MAXARGS + 1];
	}
	return 0;
}

/* The events' order by thread, then time (file order among equal times):
 * by time, then stably by thread. */
static struct dtr_key *
thread_order(const struct pbuild *pb)
{
	struct dtr_key *o = malloc((pb->n + 1) * sizeof(*o));

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < pb->n; i++)
		o[i] = (struct dtr_key){ pb->ev[i].ts, i };
	if (dtr_key_sort(o, pb->n))
		goto fail;
	for (size_t i = 0; i < pb->n; i++)
		o[i].k = pb->ev[o[i].i].tid;
	if (dtr_key_sort(o, pb->n))
		goto fail;
	return o;
fail:
	free(o);
	return NULL;
}

int
dtr_spans_build(const struct dtr_cap *c, const char *cmd, struct dtf_filter *f,
		const char *glob, unsigned flags, struct dtr_spans *out,
		volatile sig_atomic_t *cancel)
{
	struct pbuild pb = { .want_args = !!(flags & DTR_SPANS_ARGS) };
	int syscalls_only = !!(flags & DTR_SPANS_SYSCALLS);
	struct dtr_key *ord = NULL;
	char err[512];
	int ret = DTR_EXIT_ERROR, npairs = 0;
	size_t nprobes = dtcap_nprobes(c->r);
	struct { uint32_t id; int ret; int len; const char *name; } *pr = NULL;

	memset(out, 0, sizeof(*out));
	if (dtf_resolve(f, c->r, err, sizeof(err))) {
		dtr_err(cmd, "%s: %s", c->path, err);
		return DTR_EXIT_ERROR;
	}
	pb.np = dtcap_max_probe_id(c->r) + 1;
	pb.entry_of = calloc(pb.np, sizeof(*pb.entry_of));
	pb.is_ret = calloc(pb.np, 1);
	pr = calloc(nprobes + 1, sizeof(*pr));
	if (!pb.entry_of || !pb.is_ret || !pr)
		goto oom;
	for (size_t i = 0; i < nprobes; i++) {
		const struct dtcap_probe *p = dtcap_probe_at(c->r, i);
		int l;
		pr[i].id = p->id;
		pr[i].name = p->name;
		if ((l = base_len(p->name, "entry")) < 0 && (l = base_len(p->name, "return")) >= 0)
			pr[i].ret = 1;
		pr[i].len = l;
	}
	/* each return finds its entry by name */
	for (size_t i = 0; i < nprobes; i++) {
		if (!pr[i].ret || pr[i].len < 0)
			continue;
		if (syscalls_only && strncmp(pr[i].name, "syscall:", 8) != 0)
			continue;
		for (size_t j = 0; j < nprobes; j++) {
			if (pr[j].ret || pr[j].len != pr[i].len ||
			    strncmp(pr[j].name, pr[i].name, (size_t)pr[i].len) != 0)
				continue;
			if (glob) {
				char base[DTCAP_PROBENAMELEN];
				snprintf(base, sizeof(base), "%.*s", pr[j].len, pr[j].name);
				if (fnmatch(glob, base, 0) != 0 && fnmatch(glob, pr[j].name, 0) != 0 &&
				    fnmatch(glob, pr[i].name, 0) != 0)
					break;
			}
			pb.entry_of[pr[i].id] = pr[j].id;
			pb.is_ret[pr[i].id] = 1;
			pb.entry_of[pr[j].id] = pr[j].id;
			npairs++;
			break;
		}
	}
	if (npairs == 0) {
		dtr_err(cmd, "%s: no %sentry and return probes%s%s%s: record both, e.g. dtrec -e "
			"'syscall:*:entry' -e 'syscall:*:return'", c->path, syscalls_only ? "syscall " : "",
			glob ? " matching '" : "", glob ? glob : "", glob ? "'" : "");
		ret = DTR_EXIT_ERROR;
		goto out;
	}
	if (dtf_scan(c->r, f, DTCAP_COL_TS | DTCAP_COL_TID | DTCAP_COL_PID | DTCAP_COL_COMM |
		     DTCAP_COL_PROBE | DTCAP_COL_ARGS, span_row, &pb, cancel,
		     dtr_shell ? "dtsh: reading" : "dtreport: reading", err, sizeof(err))) {
		if (pb.oom)
			goto oom;
		dtr_err(cmd, "%s", err);
		goto out;
	}
	if ((ord = thread_order(&pb)) == NULL)
		goto oom;

	/* the open entries of the thread at hand, innermost last */
	size_t *open = NULL, nopen = 0, ocap = 0;
	for (size_t x = 0; x < pb.n; x++) {
		size_t i = ord[x].i;
		const struct pev *e = &pb.ev[i];
		if ((x & 0xffff) == 0 && cancel && *cancel) {
			free(open);
			dtr_err(cmd, "interrupted");
			goto out;
		}
		if (x > 0 && e->tid != pb.ev[ord[x - 1].i].tid) {
			for (size_t k = 0; k < nopen; k++)
				if (dtr_spans_unmatched(out, &pb.ev[open[k]].probe, pb.ev[open[k]].tid,
							pb.ev[open[k]].pid, pb.ev[open[k]].comm, 1))
					goto oom_open;
			nopen = 0;
		}
		if (!e->ret_side) {
			if (DT_GROW(open, ocap, nopen, 1, 64))
				goto oom_open;
			open[nopen++] = i;
			continue;
		}
		size_t k = nopen;
		while (k > 0 && pb.ev[open[k - 1]].probe != e->probe)
			k--;
		if (k == 0) {
			if (dtr_spans_unmatched(out, &e->probe, e->tid, e->pid, e->comm, 0))
				goto oom_open;
			continue;
		}
		/* entries inside it that never returned */
		for (size_t j = k; j < nopen; j++)
			if (dtr_spans_unmatched(out, &pb.ev[open[j]].probe, pb.ev[open[j]].tid,
						pb.ev[open[j]].pid, pb.ev[open[j]].comm, 1))
				goto oom_open;
		const struct pev *s = &pb.ev[open[k - 1]];
		nopen = k - 1;
		if (DT_GROW(out->v, out->cap, out->n, 1, 4096))
			goto oom_open;
		struct dtr_span *o = &out->v[out->n++];
		*o = (struct dtr_span){
			.start = s->ts, .end = e->ts, .tid = e->tid, .pid = s->pid ? s->pid : e->pid,
			.comm = s->comm ? s->comm : e->comm, .probe = e->probe, .ret = e->ret,
			.err = e->err, .nargs = s->nargs,
		};
		if (pb.want_args)
			memcpy(o->args, pb.args[open[k - 1]], sizeof(o->args));
	}
	for (size_t k = 0; k < nopen; k++)
		if (dtr_spans_unmatched(out, &pb.ev[open[k]].probe, pb.ev[open[k]].tid,
					pb.ev[open[k]].pid, pb.ev[open[k]].comm, 1))
			goto oom_open;
	free(open);
	ret = 0;
	goto out;
oom_open:
	free(open);
oom:
	dtr_err(cmd, "%s: out of memory", c->path);
	ret = DTR_EXIT_ERROR;
out:
	if (ret)
		dtr_spans_free(out);
	free(pr);
	free(ord);
	free(pb.entry_of);
	free(pb.is_ret);
	free(pb.ev);
	free(pb.args);
	return ret;
}

int
dtr_spans_unmatched(struct dtr_spans *s, const uint32_t *probe, uint32_t tid, uint32_t pid,
		    uint32_t comm, int entry)
{
	if (DT_GROW(s->u, s->ucap, s->nu, 1, 256))
		return -1;
	s->u[s->nu++] = (struct dtr_unmatched){ *probe, tid, pid, comm, (uint8_t)entry };
	return 0;
}

void
dtr_spans_free(struct dtr_spans *s)
{
	free(s->v);
	free(s->u);
	memset(s, 0, sizeof(*s));
}
