/*
 * flight.c - the flight recorder's loop and dumps: the source's rings
 * overwrite their oldest events and are read into OUTPUT.N.dtc only when
 * a dump is asked for.
 */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfsyms.h"
#include "jitmap.h"
#include "kused.h"
#include "probes.h"
#include "provkind.h"
#include "util.h"
#include "record_int.h"

/* ------------------------------------------------------ flight recorder */

/* What a dump starts from: the per-capture state of struct rec, fresh. */
static int
flight_reset(struct rec *r, const char *ksyms, size_t ksymslen)
{
	char *k;

	rec_tmap_free(&r->comms);
	rec_tmap_free(&r->procs);
	dtm_forget_told(r->m);
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
 * What a flight dump's overwritten count leaves out or takes in beyond
 * the events asked for, "" when it is exact: on the perf source timers
 * count time, not samples, and with targets per-CPU uprobes and
 * --offcpu's bare copies count other processes' events (dtrec(8) BUGS).
 */
static const char *
flight_count_caveat(const struct rec *r, const struct dtp_sel *sel, size_t nsel)
{
	int timer = 0, user = 0;

	if (strcmp(r->src->ops->name, "perf") != 0)
		return "";
	for (size_t i = 0; i < nsel; i++) {
		const struct dt_probe_info *p = dtp_by_id(r->dev, sel[i].id);
		enum dtp_kind k = p ? dtp_kind_of(p->dtpi_prov) : DTPK_OTHER;
		timer |= (dtp_kind_flags(k) & DTPK_TIMER) != 0;
		user |= k == DTPK_UPROBE || k == DTPK_USDT;
	}
	if ((r->o->argv || r->o->npids) && (user || r->o->offcpu))
		return timer ? " (an upper bound for uprobes and --offcpu, overwritten timer "
			       "samples not counted: dtrec(8) BUGS)"
			     : " (an upper bound for uprobes and --offcpu: dtrec(8) BUGS)";
	return timer ? " (overwritten timer samples not counted: dtrec(8) BUGS)" : "";
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
		rec_msg(r, "%s", err);
		return -1;
	}
	/* named after this process, removed by the signal handler and swept
	 * by the next run when a kill left it (util.h dtu_out_tmp_create) */
	if ((fd = dtu_out_tmp_create(path, &tmp, err, sizeof(err))) < 0) {
		rec_msg(r, "%s", err);
		return -1;
	}
	close(fd);
	if (flight_reset(r, ksyms, ksymslen) < 0) {
		rec_msg(r, "out of memory");
		goto out;
	}
	rec_fill_host(r, &host);
	memset(&wo, 0, sizeof(wo));
	wo.level = r->o->level;
	wo.threaded = 1;
	if ((r->w = dtcap_create(tmp, &host, &wo)) == NULL) {
		rec_msg(r, "%s", dtcap_create_error());
		goto out;
	}
	if (rec_write_metadata(r, sel, nsel, NULL, 0, mods, modslen) < 0)
		goto close;
	if (r->src->ops->dump(r->src, 1, err, sizeof(err)) < 0) {
		rec_msg(r, "%s", err);
		goto close;
	}
	frozen = 1;
	for (;;) {
		ssize_t n = rec_drain_once(r, buf);
		if (n < 0)
			goto close;
		if (n == 0)
			break;
	}
	if (rec_put_counters(r) < 0 || rec_put_kused(r) < 0)
		goto close;
	ret = 0;
close:
	if (frozen && r->src->ops->dump(r->src, 0, err, sizeof(err)) < 0) {
		rec_msg(r, "%s", err);
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
		if (!r->o->quiet) {
			struct dtcap_count t;
			rec_sum_counts(r, &t);
			rec_msg(r, "%s: %llu events (%s); %llu of %llu overwritten or lost%s", path,
				(unsigned long long)ev, why, (unsigned long long)t.dropped,
				(unsigned long long)t.produced, flight_count_caveat(r, sel, nsel));
		}
		return 0;
	}
	if (ret == 0)
		rec_msg(r, "%s: %s", path, r->werr ? "writing failed" : strerror(errno));
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
int
rec_flight_loop(struct rec *r, const struct dtp_sel *sel, size_t nsel, const char *ksyms,
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
				rec_msg(r, "--max-dumps %u reached: the next dump is the one at the end "
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
		if (rec_drain_once(r, buf) < 0)
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
		rec_msg(r, "%llu trigger%s fired without a dump (--dump-interval %.3gs, --max-dumps %u)",
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
