/*
 * perf_sideband.c - the perf source's side band: COMM/FORK/EXIT/MMAP2 into the
 * process table, LOST/THROTTLE into the counters, and event ids to probes.
 */
#include "perf_int.h"

static void
on_mmap2(struct src_perf *sp, const struct perf_event_header *h, const unsigned char *r)
{
	uint32_t pid, prot;
	uint64_t addr, len, pgoff;
	const char *name;
	size_t fixed = 8 + 24 + 24 + 8;	/* pid,tid; addr,len,pgoff; maj..gen; prot,flags */

	if (h->size < sizeof(*h) + fixed + 1)
		return;
	memcpy(&pid, r, 4);
	memcpy(&addr, r + 8, 8);
	memcpy(&len, r + 16, 8);
	memcpy(&pgoff, r + 24, 8);
	memcpy(&prot, r + 56, 4);
	name = (const char *)r + 64;
	if (memchr(name, '\0', h->size - sizeof(*h) - fixed) == NULL)
		return;
	/* the trailer's time is not needed: ordering comes from the ring */
	dtm_feed_mmap(sp->m, pid, addr, len, pgoff, prot, name, 0);
}

void
perf_sb_comm(struct src_perf *sp, const struct perf_event_header *h, const unsigned char *r,
	const struct sb_trailer *tr, int in_order)
{
	uint32_t pid, tid;
	char comm[DTCAP_COMMLEN];

	if (h->size < sizeof(*h) + 9)
		return;
	memcpy(&pid, r, 4);
	memcpy(&tid, r + 4, 4);
	snprintf(comm, sizeof(comm), "%.*s", (int)(h->size - sizeof(*h) - 8), (const char *)r + 8);
	if (!in_order) {
		/* names change in ring order, with the samples around them */
		dtm_feed_comm(sp->m, tid, comm);
		return;
	}
	if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && pid != sp->self && sp->targeted) {
		/* the command is ours until its exec: kept from then on */
		struct task *t = task_get(&sp->tgts, pid, 0);
		if (t && t->p.ts == UINT64_MAX)
			t->p.ts = tr->time;
	}
	/* a new image: its mappings follow as MMAP2 records */
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
		dtm_feed_exec(sp->m, pid, tr->time, comm, "");
}

static void
on_fork(struct src_perf *sp, const unsigned char *r, const struct sb_trailer *tr)
{
	uint32_t pid, ppid;

	/* the child's name comes in order, with the samples (fork_comm) */
	memcpy(&pid, r, 4);
	memcpy(&ppid, r + 4, 4);
	if (sp->targeted && pid != ppid)
		task_get(&sp->tgts, pid, 1);
	if (sp->targeted && task_get(&sp->tgts, pid, 0)) {
		/* a target's thread: switches into it and wakeups of it are kept
		 * from the per-CPU copies (--offcpu) */
		uint32_t tid;
		memcpy(&tid, r + 8, 4);
		struct task *t = task_get(&sp->ttids, tid, 1);
		if (t) {
			t->p.pid = pid;
			t->exited = 0;	/* a tid used again */
		}
	}
	dtm_feed_fork(sp->m, pid, ppid, tr->time, "");
}

void
perf_sb_trailer(const struct perf_event_header *h, const unsigned char *r, size_t body,
	      struct sb_trailer *tr)
{
	/* TID, TIME, CPU, IDENTIFIER: 32 bytes at the end of every record */
	memset(tr, 0, sizeof(*tr));
	if (h->size < sizeof(*h) + body + 32)
		return;
	r += h->size - sizeof(*h) - 32;
	memcpy(&tr->pid, r, 4);
	memcpy(&tr->tid, r + 4, 4);
	memcpy(&tr->time, r + 8, 8);
	memcpy(&tr->cpu, r + 16, 4);
	memcpy(&tr->id, r + 24, 8);
}

uint64_t
perf_id_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct src_perf *)ctx)->ids[e].id);
}

struct pprobe *
perf_probe_site(struct src_perf *sp, uint64_t id, uint32_t *site)
{
	uint32_t e;

	for (size_t i = dt_htab_first(&sp->idix, dt_htab_hash_int(id));
	     (e = dt_htab_at(&sp->idix, i)) != DT_HTAB_NONE; i = dt_htab_next(&sp->idix, i)) {
		if (sp->ids[e].id == id) {
			*site = sp->ids[e].site;
			return &sp->probes[sp->ids[e].probe];
		}
	}
	return NULL;
}

static struct pprobe *
probe_of(struct src_perf *sp, uint64_t id)
{
	uint32_t site;

	return perf_probe_site(sp, id, &site);
}

void
perf_sideband(struct src_perf *sp, struct ring *rg, const struct perf_event_header *h,
	 const unsigned char *r)
{
	struct sb_trailer tr;
	uint32_t cpu = rg->cpu >= 0 ? (uint32_t)rg->cpu : 0;

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		on_mmap2(sp, h, r);
		break;
	case PERF_RECORD_COMM:
		perf_sb_trailer(h, r, 9, &tr);
		perf_sb_comm(sp, h, r, &tr, 1);
		break;
	case PERF_RECORD_FORK:
		if (h->size < sizeof(*h) + 24)
			break;
		perf_sb_trailer(h, r, 24, &tr);
		on_fork(sp, r, &tr);
		break;
	case PERF_RECORD_EXIT: {
		uint32_t pid, tid;
		if (h->size < sizeof(*h) + 16)
			break;
		memcpy(&pid, r, 4);
		memcpy(&tid, r + 8, 4);
		if (pid == tid)
			dtm_feed_exit(sp->m, pid);
		if (sp->targeted && h->size >= sizeof(*h) + 24) {
			/* a target's thread whose inherited events the kernel
			 * has just taken away: what it runs from now on only the
			 * per-CPU copies see (offcpu_keep) */
			struct task *t = task_get(&sp->ttids, tid, 0);
			if (t) {
				t->exited = 1;
				memcpy(&t->p.ts, r + 16, 8);
			}
		}
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost;
		if (h->size < sizeof(*h) + 16)
			break;
		memcpy(&lost, r + 8, 8);
		sp->lost[cpu] += lost;
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		uint64_t lost;
		if (h->size < sizeof(*h) + 8)
			break;
		memcpy(&lost, r, 8);
		sp->lost[cpu] += lost;
		break;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		uint64_t t, id;
		struct pprobe *p;
		if (h->size < sizeof(*h) + 16)
			break;
		memcpy(&t, r, 8);
		memcpy(&id, r + 8, 8);
		p = probe_of(sp, id);
		if (p == NULL || p->kind != PK_TIMER || !p->period_ns)
			break;
		if (h->type == PERF_RECORD_THROTTLE) {
			rg->throttled_at = t ? t : 1;
		} else if (rg->throttled_at) {
			/* the ticks the timer would have taken meanwhile */
			if (t > rg->throttled_at)
				sp->counts[cpu].skipped += (t - rg->throttled_at) / p->period_ns;
			rg->throttled_at = 0;
		}
		break;
	}
	default:
		break;
	}
}
