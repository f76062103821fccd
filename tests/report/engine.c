/*
 * engine.c - the report engine (engine.h) called as dtsh calls it: on one
 * open reader and symbol table, several times, with one cancellation
 * flag.  Prints PASS/FAIL lines.
 *
 * usage: engine SMALL.dtc OTHER.dtc BIG.dtc
 *	SMALL, OTHER: repeated calls give equal output, the engine keeps
 *	nothing between calls (a symbol table passed or its own, one filter
 *	used on two captures in turn); BIG: a flag set before the call, or
 *	by a timer during it, stops stats, flame and top with status 1 and
 *	nothing but a partial report written.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "dtcap.h"
#include "dtsym.h"
#include "engine.h"
#include "filter.h"
#include "report.h"

#define CHECK_PREFIX "engine-"
#include "../check.h"

static volatile sig_atomic_t cancel;

static void on_alarm(int sig)
{
	(void)sig;
	cancel = 1;
}

enum { STATS, FLAME, TOP };

/* Run one engine call into a memory buffer; *out malloc'd, *len its size. */
static int run(int what, const struct rpt_cap *c, struct flt_filter *f, char **out, size_t *len)
{
	FILE *m = open_memstream(out, len);
	int rc;

	if (m == NULL) {
		perror("open_memstream");
		exit(2);
	}
	if (what == STATS) {
		struct rpt_stats_opts o = { .json = 0, .all = 1, .top = 5 };
		rc = rpt_stats(c, f, &o, m, &cancel);
	} else if (what == FLAME) {
		struct rpt_flame_opts o;
		rpt_flame_opts_init(&o, "flame");
		o.folded = 1;
		rc = rpt_flame(c, f, &o, m, "memory", &cancel);
	} else {
		struct rpt_top_opts o = { .limit = 5, .by = RPT_TOP_STACK };
		rc = rpt_top(c, f, &o, m, &cancel);
	}
	fclose(m);
	return rc;
}

static const char *const names[] = { "stats", "flame", "top" };

int main(int argc, char **argv)
{
	char why[256];

	if (argc != 4) {
		fprintf(stderr, "usage: engine SMALL.dtc OTHER.dtc BIG.dtc\n");
		return 2;
	}
	struct dtcap_reader *r = dtcap_open(argv[1]), *r2 = dtcap_open(argv[2]);
	struct dtcap_reader *big = dtcap_open(argv[3]);
	if (!r || !r2 || !big) {
		fprintf(stderr, "engine: %s\n", dtcap_open_error());
		return 2;
	}
	struct dtsym *sym = dtsym_open(r);
	struct rpt_cap c = { r, sym, argv[1] }, c_own = { r, NULL, argv[1] };
	struct rpt_cap c2 = { r2, NULL, argv[2] }, cb = { big, NULL, argv[3] };
	struct flt_filter f;

	/* twice on the same reader and symbols, and with symbols of its own */
	for (int w = STATS; w <= TOP; w++) {
		char *a = NULL, *b = NULL, *o = NULL;
		size_t na, nb, no;
		flt_init(&f);
		int ra = run(w, &c, &f, &a, &na);
		int rb = run(w, &c, &f, &b, &nb);
		int ro = run(w, &c_own, &f, &o, &no);
		snprintf(why, sizeof(why), "status %d %d %d, %zu %zu %zu bytes", ra, rb, ro,
			 na, nb, no);
		char name[64];
		snprintf(name, sizeof(name), "%s-repeatable", names[w]);
		check(name, !ra && !rb && !ro && na > 0 && na == nb && na == no &&
		      !memcmp(a, b, na) && !memcmp(a, o, na), why);
		free(a), free(b), free(o);
		flt_free(&f);
	}

	/* one filter on two captures in turn: each as if it were fresh */
	{
		char err[256], *x = NULL, *y = NULL, *z = NULL;
		size_t nx, ny, nz;
		struct flt_filter g;
		flt_init(&f);
		flt_init(&g);
		if (flt_option(&f, FLT_OPT_CPU, "0,1", err, sizeof(err)) != 1 ||
		    flt_option(&g, FLT_OPT_CPU, "0,1", err, sizeof(err)) != 1) {
			fprintf(stderr, "engine: --cpu: %s\n", err);
			return 2;
		}
		int rx = run(TOP, &c, &f, &x, &nx);
		int ry = run(TOP, &c2, &f, &y, &ny);
		int rz = run(TOP, &c2, &g, &z, &nz);
		snprintf(why, sizeof(why), "status %d %d %d", rx, ry, rz);
		check("filter-reused", !rx && !ry && !rz && ny == nz && !memcmp(y, z, ny) &&
		      (nx != ny || memcmp(x, y, nx)), why);
		free(x), free(y), free(z);
		flt_free(&f);
		flt_free(&g);
	}

	/* the flag set before the call: nothing done */
	for (int w = STATS; w <= TOP; w++) {
		char *a = NULL, name[64];
		size_t na;
		flt_init(&f);
		cancel = 1;
		int ra = run(w, &cb, &f, &a, &na);
		snprintf(why, sizeof(why), "status %d, %zu bytes written, flag %d", ra, na,
			 (int)cancel);
		snprintf(name, sizeof(name), "%s-cancelled-before", names[w]);
		/* stats prints nothing before its scan; the flag stays the caller's */
		check(name, ra == RPT_EXIT_ERROR && na == 0 && cancel == 1, why);
		free(a);
		flt_free(&f);
	}

	/* the flag set by a signal while the call works: it stops soon */
	signal(SIGALRM, on_alarm);
	for (int w = STATS; w <= TOP; w++) {
		char *a = NULL, name[64];
		size_t na;
		struct timespec t0, t1;
		struct itimerval it = { { 0, 0 }, { 0, 20000 } };
		flt_init(&f);
		/* stats without filters reads the block summaries, done in
		 * no time: a filter that keeps every row makes it decode */
		char ferr[128];
		if (w == STATS && flt_option(&f, FLT_OPT_SINCE, "0", ferr, sizeof(ferr)) != 1) {
			fprintf(stderr, "engine: --since: %s\n", ferr);
			return 2;
		}
		cancel = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		setitimer(ITIMER_REAL, &it, NULL);
		int ra = run(w, &cb, &f, &a, &na);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		snprintf(why, sizeof(why), "status %d after %.3f s, flag %d", ra, s, (int)cancel);
		snprintf(name, sizeof(name), "%s-cancelled-during", names[w]);
		check(name, ra == RPT_EXIT_ERROR && cancel == 1, why);
		free(a);
		flt_free(&f);
	}

	dtsym_close(sym);
	dtcap_reader_close(r);
	dtcap_reader_close(r2);
	dtcap_reader_close(big);
	return check_status();
}
