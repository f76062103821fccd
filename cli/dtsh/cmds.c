/*
 * cmds.c - the command table and the commands that are dtsh's own; the
 * analysis itself is libdtcli's (report.h, dtsql.h, record.h, probes.h).
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "dtcap_args.h"
#include "captures.h"
#include "dt_grow.h"
#include "dtsh.h"
#include "engine.h"
#include "dtsql.h"
#include "dtsym.h"
#include "probes.h"
#include "recargs.h"
#include "record.h"
#include "report.h"
#include "scan_pool.h"
#include "termsafe.h"
#include "util.h"

/* The handle a query is running on, for the SIGINT handler. */
static struct sqlite3 *volatile busy_db;

static int cmd_probes(struct dtsh *, int, char **, const char *);
static int cmd_describe(struct dtsh *, int, char **, const char *);
static int cmd_enable(struct dtsh *, int, char **, const char *);
static int cmd_disable(struct dtsh *, int, char **, const char *);
static int cmd_record(struct dtsh *, int, char **, const char *);
static int cmd_stats_(struct dtsh *, int, char **, const char *);
static int cmd_top_(struct dtsh *, int, char **, const char *);
static int cmd_flame_(struct dtsh *, int, char **, const char *);
static int cmd_calls_(struct dtsh *, int, char **, const char *);
static int cmd_annotate_(struct dtsh *, int, char **, const char *);
static int cmd_sql_(struct dtsh *, int, char **, const char *);
static int cmd_tables(struct dtsh *, int, char **, const char *);
static int cmd_schema(struct dtsh *, int, char **, const char *);
static int cmd_latency_(struct dtsh *, int, char **, const char *);
static int cmd_syscalls_(struct dtsh *, int, char **, const char *);
static int cmd_blame_(struct dtsh *, int, char **, const char *);
static int cmd_heatmap_(struct dtsh *, int, char **, const char *);
static int cmd_export_(struct dtsh *, int, char **, const char *);
static int cmd_open(struct dtsh *, int, char **, const char *);
static int cmd_close(struct dtsh *, int, char **, const char *);
static int cmd_help(struct dtsh *, int, char **, const char *);
static int cmd_quit(struct dtsh *, int, char **, const char *);
static int cmd_set(struct dtsh *, int, char **, const char *);

const struct dtsh_cmd dtsh_cmds[] = {
	{ "probes", "probes [GLOB|WORD]",
	  "List probes matching GLOB (all without one): the capture's when one\n"
	  "is open, else those of /dev/dt.  A WORD that matches no name as it\n"
	  "is lists the names holding it (sched_switch), as dtrec -l does.",
	  cmd_probes, DTSH_C_PROBE },
	{ "describe", "describe PROBE",
	  "Show a probe's id, flags and arguments with their types, and the SQL\n"
	  "columns that hold them (its view's, and the events columns).",
	  cmd_describe, DTSH_C_PROBE },
	{ "enable", "enable [PROBE [stacks]]",
	  "Add PROBE (a name or glob of /dev/dt) to the next recording; with\n"
	  "`stacks' its events carry kernel and user stacks.  Without PROBE,\n"
	  "list what is enabled.",
	  cmd_enable, DTSH_C_PROBE },
	{ "disable", "disable [PROBE]",
	  "Remove PROBE from the next recording (every probe without one).",
	  cmd_disable, DTSH_C_PROBE },
	{ "record", "record [DURATION] [-o FILE] [dtrec's options] [-- COMMAND]",
	  "Record the enabled probes for DURATION (e.g. 500ms, 2 (seconds), 1m; until\n"
	  "Ctrl-C without one) into FILE (default dtsh-TIME.dtc), showing live\n"
	  "counters.  Ctrl-C ends it early and keeps what was recorded; the new\n"
	  "capture is then opened.  dtrec's options, through dtrec's own parser:\n"
	  "-e PROBE (besides the enabled ones), -k, -u, -b SIZE, -p PID[,PID], -a,\n"
	  "--user-stacks fp|dwarf|auto, --flight SIZE, --source dt|perf, ..., and a\n"
	  "COMMAND to run and record after '--'.", cmd_record, DTSH_C_RECORD },
	{ "stats", "stats [--top N] [--all] [FILTERS...]",
	  "Summary of the open capture: accounting and losses first, then the\n"
	  "probes and CPUs with events (--all: every one), top comms and pids\n"
	  "(dtreport stats, same options and filters: --pid --comm --since ...).",
	  cmd_stats_, DTSH_C_STATS },
	{ "top", "top [N] [by comm|pid|probe|stack|syscall|sym|dso|srcline] [--children] [FILTERS...]",
	  "The N (default 10) busiest comms, pids, probes, stacks (symbolized\n"
	  "top frames) or syscalls of the open capture, or its sampled functions,\n"
	  "objects and source lines by self time (--children: inclusive)\n"
	  "(dtreport top; same filters).  Ctrl-C stops it, as it does stats and\n"
	  "flame.", cmd_top_, DTSH_C_TOP },
	{ "callers", "callers FUNC [--folded] [--min-pct P] [FILTERS...]",
	  "The call tree into the functions matching FUNC (a glob, or /regex/),\n"
	  "merged over the sampled stacks, with shares of all samples\n"
	  "(dtreport callers).", cmd_calls_, DTSH_C_TOP },
	{ "callees", "callees FUNC [--folded] [--min-pct P] [FILTERS...]",
	  "The call tree out of the functions matching FUNC (dtreport callees).",
	  cmd_calls_, DTSH_C_TOP },
	{ "annotate", "annotate FUNC [--no-source] [--no-insns] [FILTERS...]",
	  "The samples taken in the functions matching FUNC by source line (with\n"
	  "the text where the source is readable) and by instruction, disassembled\n"
	  "from the binary on disk when it is the build recorded (dtreport annotate).",
	  cmd_annotate_, DTSH_C_TOP },
	{ "flame", "flame [-o FILE] [--offcpu|--wakers [--state S,D,R]] [FILTERS...]",
	  "Write a flame graph SVG of the open capture (dtreport flame; same\n"
	  "options and filters: --offcpu draws off-CPU time).  Default FILE:\n"
	  "flame.svg.", cmd_flame_, DTSH_C_FLAME },
	{ "latency", "latency [--probe GLOB] [--by probe|comm|pid|tid] [--hist log2|linear:W] "
	  "[--json] [FILTERS...]",
	  "Entry/return latency of the open capture: per probe (and comm, pid or\n"
	  "tid) count, p50, p90, p99, p99.9, max and a histogram (dtreport latency).",
	  cmd_latency_, DTSH_C_STATS },
	{ "syscalls", "syscalls [--by comm|pid] [--json] [FILTERS...]",
	  "Per syscall calls, errors by errno, total, avg, min, max, stddev and p99\n"
	  "time of the open capture (dtreport syscalls; strace -c).",
	  cmd_syscalls_, DTSH_C_STATS },
	{ "blame", "blame --tid T [--since A] [--until B] [--depth N] [--folded] [-o FILE]",
	  "Where thread T's time went in the open capture: on-CPU, runqueue,\n"
	  "blocked, each wait under its waker and what that did meanwhile, N hops\n"
	  "(dtreport blame).", cmd_blame_, DTSH_C_STATS },
	{ "heatmap", "heatmap [-o FILE] [--rows N] [FILTERS...]",
	  "Write the subsecond-offset heat map SVG of the open capture (dtreport\n"
	  "heatmap); clicking two cells shows the flame --since/--until of that\n"
	  "range.  Default FILE: heatmap.svg.", cmd_heatmap_, DTSH_C_STATS },
	{ "export", "export [--format sqlite|parquet|pprof|chrome] [FILTERS...] -o OUT",
	  "Write the open capture's events that pass the filters (all without\n"
	  "any) to OUT as a SQLite database, a Parquet dataset directory (every\n"
	  "open capture is added to it), a pprof profile or a Chrome trace\n"
	  "(dtreport export: same options and filters).  OUT appears only once\n"
	  "complete; Ctrl-C stops it and leaves no OUT, nor changes one that was\n"
	  "there.", cmd_export_, DTSH_C_FILE },
	{ "sql", "sql [--csv|--json|--table] QUERY [--csv|--json|--table]",
	  "Run QUERY on the open capture's tables and its probes' views (options\n"
	  "before or after it; describe PROBE names a view's columns).  A line\n"
	  "starting with SELECT, WITH, PRAGMA or EXPLAIN is a query too, and so\n"
	  "are the sqlite3 shell's .tables and .schema.  A statement without its\n"
	  "closing ';' goes on over the next lines (prompt ...>) until one\n"
	  "starts a new command.  Ctrl-C interrupts it (and the symbol loading\n"
	  "before it).  It writes no file: ATTACH, VACUUM and changes outside\n"
	  "TEMP tables are refused.",
	  cmd_sql_, DTSH_C_SQL },
	{ "tables", "tables", "List the SQL tables of a capture.",
	  cmd_tables, DTSH_C_NONE },
	{ "schema", "schema [TABLE]", "Show the columns of the SQL tables (or of one).",
	  cmd_schema, DTSH_C_TABLE },
	{ "open", "open [--partial] FILE|DIR...",
	  "Open a capture for analysis (offline mode).  Several captures, or a\n"
	  "directory (its *.dtc files), are opened together: stats, flame and sql\n"
	  "then read them all (sql's events carry capture and host columns), as\n"
	  "dtreport does with several; probes and describe show the first one's,\n"
	  "and top reads one capture only.  --partial: also captures that were\n"
	  "cut short (a killed recording, a truncated copy).",
	  cmd_open, DTSH_C_FILE },
	{ "close", "close", "Close the capture(s) and return to live mode.",
	  cmd_close, DTSH_C_NONE },
	{ "set", "set [threads N]",
	  "Set how many threads decode and count a capture's blocks for stats,\n"
	  "flame, top, heatmap and sql's grouped statements, and collect the\n"
	  "events of latency, syscalls, blame, flame --offcpu/--wakers and the\n"
	  "spans and sched tables (1..256; 0: the CPUs it may run on, the\n"
	  "default), as dtreport's\n"
	  "--threads does; the output is the same for any N.  Without arguments,\n"
	  "show the setting.", cmd_set, DTSH_C_NONE },
	{ "help", "help [COMMAND]", "List the commands, or explain one.",
	  cmd_help, DTSH_C_CMD },
	{ "quit", "quit", "Leave dtsh (so does Ctrl-D).", cmd_quit, DTSH_C_NONE },
	{ "exit", "exit", "Leave dtsh.", cmd_quit, DTSH_C_NONE },
	{ NULL, NULL, NULL, NULL, 0 },
};

const struct dtsh_cmd *
dtsh_find_cmd(const char *name)
{
	for (const struct dtsh_cmd *c = dtsh_cmds; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* An unknown first word: the closest commands and the words that start a
 * query (a misspelt SELECT is an unknown command too). */
static void
suggest_cmd(const char *word)
{
	static const char *const sqlw[] = { "select", "with", "pragma", "explain",
					    ".tables", ".schema" };
	const char *names[sizeof(dtsh_cmds) / sizeof(dtsh_cmds[0]) + sizeof(sqlw) / sizeof(sqlw[0])];
	size_t n = 0;
	char low[64];

	for (const struct dtsh_cmd *c = dtsh_cmds; c->name; c++)
		names[n++] = c->name;
	for (size_t i = 0; i < sizeof(sqlw) / sizeof(sqlw[0]); i++)
		names[n++] = sqlw[i];
	/* SQL's words are case-blind: SELCT is as close to select as selct */
	snprintf(low, sizeof(low), "%s", word);
	for (char *c = low; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	const char *best[3];
	size_t k = dtu_suggest(low, names, n, 0, best, 3);
	if (k == 0) {
		fprintf(stderr, "dtsh: unknown command '%.64s'%s; type 'help' for the list\n",
			word, strlen(word) > 64 ? "..." : "");
		return;
	}
	fprintf(stderr, "dtsh: unknown command '%.64s'; did you mean", word);
	for (size_t j = 0; j < k; j++)
		fprintf(stderr, "%s '%s'", j == 0 ? "" : j + 1 == k ? " or" : ",", best[j]);
	fprintf(stderr, "?\n");
}

/* ------------------------------------------------------------ probes */

/* The device for listing, opened read-only once; NULL with the message
 * dtrec would give printed (unless quiet). */
static struct dtp_dev *
device(struct dtsh *sh, int quiet)
{
	char err[DTP_ERRLEN];

	if (sh->dev)
		return sh->dev;
	if ((sh->dev = dtp_open_source(NULL, NULL, 0, err, sizeof(err))) == NULL && !quiet)
		fprintf(stderr, "dtsh: %s\n", err);
	return sh->dev;
}

size_t
dtsh_probe_names(struct dtsh *sh, char ***names)
{
	size_t n, k = 0;
	char **v;
	struct dtp_dev *d = NULL;

	*names = NULL;
	if (sh->cap)
		n = dtcap_nprobes(sh->cap);
	else if ((d = device(sh, 1)) != NULL)
		n = dtp_count(d);
	else
		return 0;
	if ((v = calloc(n + 1, sizeof(*v))) == NULL)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char buf[DTCAP_PROBENAMELEN];
		const char *nm = sh->cap ? dtcap_probe_at(sh->cap, i)->name
					 : dtp_name(dtp_at(d, i), buf, sizeof(buf));
		if ((v[k] = strdup(nm)) != NULL)
			k++;
	}
	*names = v;
	return k;
}

static void
free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void
suggest_probe(struct dtsh *sh, const char *what)
{
	char **names;
	size_t n = dtsh_probe_names(sh, &names);
	const char *best[3];
	size_t k = dtu_suggest(what, (const char *const *)names, n, 0, best, 3);

	if (k > 0) {
		fprintf(stderr, "dtsh: did you mean:");
		for (size_t j = 0; j < k; j++)
			fprintf(stderr, " %s", best[j]);
		fprintf(stderr, "?\n");
	}
	free_names(names, n);
}

/* Where probes come from: the open capture, else the device. */
static int
probe_source(struct dtsh *sh)
{
	if (sh->cap)
		return 0;
	return device(sh, 0) ? 0 : -1;
}

static int
cmd_probes(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	const char *glob = argc > 1 ? argv[1] : "*";
	size_t shown = 0;

	(void)rest;
	if (argc > 2) {
		fprintf(stderr, "usage: probes [GLOB|WORD]\n");
		return 1;
	}
	if (probe_source(sh))
		return 1;
	if (!sh->cap && dtp_is_user(glob)) {
		char err[DTP_ERRLEN];
		if (dtp_list_user(glob, stdout, &shown, err, sizeof(err)) < 0) {
			fprintf(stderr, "dtsh: %s\n", err);
			return 1;
		}
	} else {
		/* as dtrec -l: the glob, else a bare word inside the names */
		char sub[256];
		for (const char *g = glob; g && shown == 0;
		     g = g == glob ? dtp_word_glob(glob, sub, sizeof(sub)) : NULL) {
			if (sh->cap == NULL) {
				shown = dtp_list(sh->dev, g, stdout);
				continue;
			}
			for (size_t i = 0; i < dtcap_nprobes(sh->cap); i++) {
				const struct dtcap_probe *p = dtcap_probe_at(sh->cap, i);
				if (dtu_glob_match(g, p->name)) {
					printf("%s\n", dtt_str(p->name));
					shown++;
				}
			}
		}
	}
	if (shown == 0) {
		fprintf(stderr, "dtsh: no probe matches '%s'\n", glob);
		suggest_probe(sh, glob);
		return 1;
	}
	return 0;
}

static void
print_probe(const struct dtcap_probe *p)
{
	/* the capture's names: escaped for the terminal */
	printf("%s\n  id %u%s%s\n", dtt_str(p->name), p->id,
	       (p->flags & DT_PF_TIMER) ? ", timer" : "",
	       (p->flags & DT_PF_RETURN) ? ", return" : "");
	/* capture text, escaped for the terminal as every other line (termsafe.h) */
	struct dtcap_probe q = *p;
	dtt_escape(q.name, sizeof(q.name), p->name);
	for (uint32_t i = 0; i < q.nargs && i < DTCAP_MAXARGS; i++)
		dtt_escape(q.args[i].type, sizeof(q.args[i].type), p->args[i].type);
	dtcap_arg_print(stdout, &q);
}

static int
cmd_describe(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	int found = 0;

	(void)rest;
	if (argc != 2) {
		fprintf(stderr, "usage: describe PROBE\n");
		return 1;
	}
	if (probe_source(sh))
		return 1;
	if (sh->cap) {
		for (size_t i = 0; i < dtcap_nprobes(sh->cap); i++) {
			const struct dtcap_probe *p = dtcap_probe_at(sh->cap, i);
			if (dtu_glob_match(argv[1], p->name)) {
				print_probe(p);
				found++;
			}
		}
	} else {
		for (size_t i = 0; i < dtp_count(sh->dev); i++) {
			const struct dt_probe_info *pi = dtp_at(sh->dev, i);
			struct dtcap_probe p;
			char buf[DTCAP_PROBENAMELEN], err[DTP_ERRLEN];
			if (!dtu_glob_match(argv[1], dtp_name(pi, buf, sizeof(buf))))
				continue;
			found++;
			if (dtp_describe(sh->dev, pi, &p, err, sizeof(err)) != 0) {
				fprintf(stderr, "dtsh: %s\n", err);
				return 1;
			}
			print_probe(&p);
		}
	}
	if (!found) {
		fprintf(stderr, "dtsh: unknown probe '%s'\n", argv[1]);
		suggest_probe(sh, argv[1]);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------- live commands */

static int
cmd_enable(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (argc == 1) {
		if (sh->nen == 0)
			printf("no probe enabled\n");
		for (size_t i = 0; i < sh->nen; i++)
			printf("%s%s\n", sh->en[i].spec, sh->en[i].stacks ? " stacks" : "");
		return 0;
	}
	if (argc > 3 || (argc == 3 && strcmp(argv[2], "stacks") != 0)) {
		fprintf(stderr, "usage: enable [PROBE [stacks]]\n");
		return 1;
	}
	/* Resolve now, so a typo is reported here rather than at record. */
	struct dtp_dev *d = device(sh, 0);
	struct dtp_sel *sel = NULL;
	size_t nsel = 0;
	char err[DTP_ERRLEN];
	if (d == NULL)
		return 1;
	if (dtp_resolve(d, argv[1], &sel, &nsel, err, sizeof(err)) != 0) {
		fprintf(stderr, "dtsh: %s\n", err);
		free(sel);
		return 1;
	}
	free(sel);
	if (nsel == 0) {
		fprintf(stderr, "dtsh: no probe matches '%s'\n", argv[1]);
		suggest_probe(sh, argv[1]);
		return 1;
	}
	for (size_t i = 0; i < sh->nen; i++) {
		if (strcmp(sh->en[i].spec, argv[1]) == 0) {
			sh->en[i].stacks = argc == 3;
			return 0;
		}
	}
	if (DT_GROW(sh->en, sh->encap, sh->nen, 1, 8) ||
	    (sh->en[sh->nen].spec = strdup(argv[1])) == NULL) {
		fprintf(stderr, "dtsh: out of memory\n");
		return 1;
	}
	sh->en[sh->nen].stacks = argc == 3;
	sh->nen++;
	return 0;
}

static int
cmd_disable(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (argc > 2) {
		fprintf(stderr, "usage: disable [PROBE]\n");
		return 1;
	}
	if (argc == 1) {
		for (size_t i = 0; i < sh->nen; i++)
			free(sh->en[i].spec);
		sh->nen = 0;
		return 0;
	}
	for (size_t i = 0; i < sh->nen; i++) {
		if (strcmp(sh->en[i].spec, argv[1]) == 0) {
			free(sh->en[i].spec);
			memmove(&sh->en[i], &sh->en[i + 1], sizeof(*sh->en) * (sh->nen - i - 1));
			sh->nen--;
			return 0;
		}
	}
	fprintf(stderr, "dtsh: '%s' is not enabled\n", argv[1]);
	return 1;
}

static int
cmd_record(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	uint64_t dur = 0;
	const char *out = NULL;
	char defname[64], cmdline[1024];
	const char **specs;
	int stacks = 0, rc, stopped;
	/* large (process ids, probes) and argv-bound: one record at a time */
	static struct dtrec_args a;
	struct dtrec_opts o;
	struct dtrec_result res;
	static const char usage_line[] =
		"usage: record [DURATION] [-o FILE] [dtrec's options] [-- COMMAND [ARG...]]\n";

	/* dtrec's parser, after a leading DURATION (dtrec's -d otherwise) */
	int skip = argc > 1 && argv[1][0] != '-' && dtu_parse_duration(argv[1], &dur) == 0 &&
		   dur > 0;
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	if (av == NULL) {
		fprintf(stderr, "dtsh: out of memory\n");
		return 1;
	}
	av[0] = argv[0];
	for (int i = 1 + skip; i < argc; i++)
		av[i - skip] = argv[i];
	int ac = argc - skip;
	rc = dtrec_args_parse(&a, ac, av, "dtsh record");
	if (rc >= 0) {
		if (a.help)
			fputs(usage_line, stdout);
		else if (a.version)
			printf("dtsh %s\n", dtu_version());
		else
			fputs(usage_line, stderr);
		free(av);
		return rc ? 1 : 0;
	}
	/* operands without '--': the DURATION of old (record -o F 5s) */
	if (a.optind == ac - 1 && strcmp(av[a.optind - 1], "--") != 0 && dur == 0 &&
	    av[a.optind][0] != '-' && dtu_parse_duration(av[a.optind], &dur) == 0 && dur > 0)
		ac--;
	else if (a.optind < ac && strcmp(av[a.optind - 1], "--") != 0) {
		fprintf(stderr, "dtsh record: bad argument '%s' (a COMMAND follows '--')\n%s",
			av[a.optind], usage_line);
		free(av);
		return 1;
	}
	if (a.list || a.verbose) {
		fprintf(stderr, "dtsh record: -l%s lists nothing here: 'probes' and 'describe' do\n",
			a.verbose ? " -v" : "");
		free(av);
		return 1;
	}
	if (dtrec_args_check(&a, ac, av, "dtsh record") != 0) {
		fputs(usage_line, stderr);
		free(av);
		return 1;
	}
	if (dur && a.o.duration_ns) {
		fprintf(stderr, "dtsh record: a DURATION and -d: give one\n");
		free(av);
		return 1;
	}
	dur = dur ? dur : a.o.duration_ns;
	out = a.o.output;
	for (int i = 0; out != NULL && i < sh->ncaps; i++)
		if (dtu_same_file(out, sh->cap_paths[i])) {
			fprintf(stderr, "dtsh record: %s: refusing to overwrite the open capture\n",
				out);
			free(av);
			return 1;
		}
	if (sh->nen == 0 && a.nprobes == 0 && a.ntriggers == 0) {
		fprintf(stderr, "dtsh: nothing to record: 'enable PROBE' (or record -e PROBE) first\n");
		free(av);
		return 1;
	}
	if (out == NULL) {
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(defname, sizeof(defname), "dtsh-%Y%m%d-%H%M%S.dtc", &tm);
		out = defname;
	}
	if ((specs = calloc(sh->nen + a.nprobes + 1, sizeof(*specs))) == NULL) {
		fprintf(stderr, "dtsh: out of memory\n");
		free(av);
		return 1;
	}
	size_t k = (size_t)snprintf(cmdline, sizeof(cmdline), "dtsh: record");
	size_t nspec = 0;
	for (size_t i = 0; i < sh->nen; i++) {
		specs[nspec++] = sh->en[i].spec;
		stacks |= sh->en[i].stacks;
		if (k < sizeof(cmdline))
			k += (size_t)snprintf(cmdline + k, sizeof(cmdline) - k, " %s%s",
					      sh->en[i].spec, sh->en[i].stacks ? "(stacks)" : "");
	}
	for (size_t i = 0; i < a.nprobes; i++)
		specs[nspec++] = a.probes[i];
	for (int i = 1; i < argc && k < sizeof(cmdline); i++)
		k += (size_t)snprintf(cmdline + k, sizeof(cmdline) - k, " %s", argv[i]);
	/* The recorder opens the device itself, and kprobes it creates must
	 * show up in the next listing. */
	dtp_close(sh->dev);
	sh->dev = NULL;
	o = a.o;
	o.prog = "dtsh";
	o.output = out;
	o.probes = specs;
	o.nprobes = nspec;
	o.kstack |= stacks;
	o.ustack |= stacks;
	o.duration_ns = dur;
	o.triggers = a.triggers;
	o.ntriggers = a.ntriggers;
	o.stop = &dtsh_interrupted;
	o.status = stderr;
	o.cmdline = cmdline;
	dtsh_interrupted = 0;
	rc = dtrec_record(&o, &res);
	stopped = dtsh_interrupted;
	dtsh_interrupted = 0;
	free(specs);
	free(av);
	if (rc != 0)
		return 1;
	if (stopped)
		fprintf(stderr, "dtsh: recording ended by Ctrl-C; kept %llu events in %s\n",
			(unsigned long long)res.events, out);
	if (dtsh_open_capture(sh, out, 1) != 0)
		return 1;
	return 0;
}

/* ---------------------------------------------------------- analysis */

static int
need_capture(struct dtsh *sh, const char *what)
{
	if (sh->cap)
		return 0;
	fprintf(stderr, "dtsh: %s needs a capture: 'open FILE' or 'record' first\n", what);
	return -1;
}

/*
 * The symbols of the first open capture (all: of every one), loaded on
 * first use and kept.  Ctrl-C stops the loading as it stops a query (a
 * crafted capture can hold millions of symbols): -1 then, said on stderr.
 */
static int
load_syms(struct dtsh *sh, int all)
{
	for (int i = 0; i < (all ? sh->ncaps : 1); i++) {
		struct dtsym **sp = i == 0 ? &sh->sym : &sh->syms[i];
		if (*sp)
			continue;
		*sp = dtsym_open_cancel(i == 0 ? sh->cap : sh->caps[i], &dtsh_interrupted);
		if (*sp == NULL) {
			fprintf(stderr, "dtsh: %s\n", errno == EINTR
				? "interrupted while loading symbols" : "out of memory");
			dtsh_interrupted = 0;
			return -1;
		}
	}
	return 0;
}

/* The open capture as the report engine takes it, its symbols opened on
 * first use and kept (top by stack and flame name frames). */
static struct rpt_cap
engine_cap(struct dtsh *sh)
{
	if (sh->sym == NULL)
		sh->sym = dtsym_open(sh->cap);
	return (struct rpt_cap){ sh->cap, sh->sym, sh->cap_path };
}

/* Every open capture so (caps[0] is engine_cap's); with names, symbols
 * opened on first use and kept.  malloc'd; NULL when out of memory. */
static struct rpt_cap *
engine_caps(struct dtsh *sh, int names)
{
	struct rpt_cap *c = calloc((size_t)sh->ncaps, sizeof(*c));

	if (c == NULL) {
		fprintf(stderr, "dtsh: out of memory\n");
		return NULL;
	}
	c[0] = names ? engine_cap(sh) : (struct rpt_cap){ sh->cap, sh->sym, sh->cap_path };
	sh->syms[0] = sh->sym;
	for (int i = 1; i < sh->ncaps; i++) {
		if (names && sh->syms[i] == NULL)
			sh->syms[i] = dtsym_open(sh->caps[i]);
		c[i] = (struct rpt_cap){ sh->caps[i], sh->syms[i], sh->cap_paths[i] };
	}
	return c;
}

/*
 * Report commands run here, in-process, on the capture and symbols the
 * shell holds; Ctrl-C sets dtsh_interrupted, which the engine polls.
 */
static int
report_done(int rc)
{
	/* stdout is checked (and its error reported) by dtsh_run */
	dtsh_interrupted = 0;
	return rc;
}

static int
cmd_stats_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (need_capture(sh, "stats"))
		return 1;
	struct rpt_cap *c = engine_caps(sh, 0);
	if (c == NULL)
		return 1;
	dtsh_interrupted = 0;
	int rc = report_done(cmd_stats_on(c, sh->ncaps, argc, argv, &dtsh_interrupted));
	free(c);
	return rc;
}

static int
cmd_top_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (need_capture(sh, "top"))
		return 1;
	if (sh->ncaps > 1) {
		fprintf(stderr, "dtsh top: reads one capture, and %d are open "
			"(open it alone, or use sql or stats over all)\n", sh->ncaps);
		return 1;
	}
	dtsh_interrupted = 0;
	if (load_syms(sh, 0))
		return 1;
	struct rpt_cap c = engine_cap(sh);
	return report_done(cmd_top_on(&c, argc, argv, &dtsh_interrupted));
}

/* callers, callees, annotate, latency, syscalls, blame: one capture,
 * in-process, Ctrl-C stops them */
static int
one_cap_report(struct dtsh *sh, const char *name, int argc, char **argv,
	       int (*fn)(const struct rpt_cap *, int, char **, volatile sig_atomic_t *))
{
	if (need_capture(sh, name))
		return 1;
	if (sh->ncaps > 1) {
		fprintf(stderr, "dtsh %s: reads one capture, and %d are open (open it alone)\n",
			name, sh->ncaps);
		return 1;
	}
	struct rpt_cap c = engine_cap(sh);
	dtsh_interrupted = 0;
	return report_done(fn(&c, argc, argv, &dtsh_interrupted));
}

static int
cmd_calls_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	return one_cap_report(sh, argv[0], argc, argv, cmd_calls_on);
}

static int
cmd_annotate_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	return one_cap_report(sh, argv[0], argc, argv, cmd_annotate_on);
}

static int
cmd_latency_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	return one_cap_report(sh, "latency", argc, argv, cmd_latency_on);
}

static int
cmd_syscalls_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	return one_cap_report(sh, "syscalls", argc, argv, cmd_syscalls_on);
}

static int
cmd_blame_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	return one_cap_report(sh, "blame", argc, argv, cmd_blame_on);
}

static int
cmd_heatmap_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (need_capture(sh, "heatmap"))
		return 1;
	if (sh->ncaps > 1) {
		fprintf(stderr, "dtsh heatmap: reads one capture, and %d are open\n", sh->ncaps);
		return 1;
	}
	struct rpt_cap c = engine_cap(sh);
	dtsh_interrupted = 0;
	return report_done(cmd_heatmap_on(&c, argc, argv, "heatmap.svg", &dtsh_interrupted));
}

static int
cmd_export_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (need_capture(sh, "export"))
		return 1;
	dtsh_interrupted = 0;
	if (load_syms(sh, 1))
		return 1;
	struct rpt_cap *c = engine_caps(sh, 1);
	if (c == NULL)
		return 1;
	int rc = report_done(cmd_export_on(c, sh->ncaps, argc, argv, &dtsh_interrupted));
	free(c);
	return rc;
}

static int
cmd_flame_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (need_capture(sh, "flame"))
		return 1;
	int has_o = 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-o") == 0 || strncmp(argv[i], "--output", 8) == 0)
			has_o = 1;
	dtsh_interrupted = 0;
	if (load_syms(sh, 1))
		return 1;
	struct rpt_cap *c = engine_caps(sh, 1);
	if (c == NULL)
		return 1;
	/* A shell has no stdout worth an SVG: default to a file. */
	int rc = report_done(cmd_flame_on(c, sh->ncaps, argc, argv, "flame.svg",
					  &dtsh_interrupted));
	free(c);
	if (rc == 0 && !has_o && sh->interactive)
		printf("wrote flame.svg\n");
	return rc;
}

static int
cmd_sql_(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)argc; (void)argv;
	if (need_capture(sh, "sql"))
		return 1;
	enum dtsql_format fmt = DTSQL_TABLE;
	struct sqlite3 *db;
	char *err = NULL;
	int rc;

	/* Options, then the query as raw text (the tokenizer would eat its quotes). */
	while (rest && rest[0] == '-' && rest[1] == '-' && rest[2] != ' ' && rest[2]) {
		size_t wl = strcspn(rest, " \t\n");
		if (wl == 5 && !strncmp(rest, "--csv", 5)) {
			fmt = DTSQL_CSV;
		} else if (wl == 6 && !strncmp(rest, "--json", 6)) {
			fmt = DTSQL_JSON;
		} else if (wl == 7 && !strncmp(rest, "--table", 7)) {
			fmt = DTSQL_TABLE;
		} else {
			fprintf(stderr, "dtsh sql: unknown option %.*s\n"
				"usage: sql [--csv|--json|--table] QUERY\n", (int)wl, rest);
			return 1;
		}
		rest += wl;
		rest += strspn(rest, " \t\n");
	}
	/*
	 * And after it, as dtreport takes them: a last word --csv would
	 * otherwise be an SQL comment and the output silently a table.
	 */
	size_t qlen = rest ? strlen(rest) : 0;
	for (;;) {
		while (qlen && strchr(" \t\n", rest[qlen - 1]))
			qlen--;
		size_t w = qlen;
		while (w && !strchr(" \t\n", rest[w - 1]))
			w--;
		if (w == 0)
			break;	/* the only word: the query's */
		if (qlen - w == 5 && !strncmp(rest + w, "--csv", 5))
			fmt = DTSQL_CSV;
		else if (qlen - w == 6 && !strncmp(rest + w, "--json", 6))
			fmt = DTSQL_JSON;
		else if (qlen - w == 7 && !strncmp(rest + w, "--table", 7))
			fmt = DTSQL_TABLE;
		else
			break;
		qlen = w;
	}
	if (qlen == 0) {
		fprintf(stderr, "usage: sql [--csv|--json|--table] QUERY\n");
		return 1;
	}
	dtsh_interrupted = 0;
	if ((db = dtsh_sql_db(sh)) == NULL)
		return 1;
	char *query = strndup(rest, qlen);
	if (query == NULL) {
		fprintf(stderr, "dtsh sql: out of memory\n");
		return 1;
	}
	busy_db = db;
	rc = dtsql_exec(db, query, fmt, stdout, &dtsh_interrupted, &err);
	free(query);
	busy_db = NULL;
	dtsh_interrupted = 0;
	if (rc != 0) {
		/* A write error is reported once, by dtsh_run's check of stdout. */
		if (!ferror(stdout))
			fprintf(stderr, "dtsh sql: %s\n", err ? err : "failed");
		sqlite3_free(err);
		return 1;
	}
	return 0;
}

static int
cmd_tables(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)sh; (void)argv; (void)rest;
	if (argc != 1) {
		fprintf(stderr, "dtsh tables: unexpected argument '%s'\nusage: tables\n", argv[1]);
		return 1;
	}
	const char *const *t = dtsql_tables();
	for (int k = 0; t[k]; k++)
		printf("%s\n", t[k]);
	return 0;
}

static int
cmd_schema(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)sh; (void)rest;
	if (argc > 2) {
		fprintf(stderr, "dtsh schema: unexpected argument '%s'\nusage: schema [TABLE]\n",
			argv[2]);
		return 1;
	}
	if (dtsql_schema(stdout, argc == 2 ? argv[1] : NULL) < 0) {
		fprintf(stderr, "dtsh schema: no such table: %s (see 'tables')\n", argv[1]);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------- SQL */

void
dtsh_interrupt_hook(void)
{
	struct sqlite3 *db = busy_db;
	if (db)
		sqlite3_interrupt(db);
}

/* Several captures: as dtreport sql with several, views over them all
 * with capture and host columns (dtsql_attach_many). */
static struct sqlite3 *
sql_db_many(struct dtsh *sh)
{
	int n = sh->ncaps, ok = 1;
	char (*names)[256] = calloc((size_t)n, sizeof(*names));
	const char **np = calloc((size_t)n, sizeof(*np));
	const char **hosts = calloc((size_t)n, sizeof(*hosts));
	char *err = NULL;

	ok = names && np && hosts;
	sh->syms[0] = sh->sym;
	for (int i = 0; ok && i < n; i++) {
		if (sh->syms[i] == NULL && (sh->syms[i] = dtsym_open(sh->caps[i])) == NULL)
			ok = 0;
		dtx_capture_name(names[i], sizeof(names[i]), sh->cap_paths[i]);
		np[i] = names[i];
		hosts[i] = dtcap_host(sh->caps[i])->hostname;
	}
	sh->sym = sh->syms[0];	/* closed as sym */
	if (ok && dtsql_attach_many(sh->db, sh->caps, sh->syms, np, hosts, (size_t)n,
				    &err) != 0)
		ok = 0;
	free(names);
	free(np);
	free(hosts);
	if (!ok) {
		fprintf(stderr, "dtsh sql: %s\n", err ? err : "out of memory");
		sqlite3_free(err);
		sqlite3_close(sh->db);
		sh->db = NULL;
	}
	return sh->db;
}

struct sqlite3 *
dtsh_sql_db(struct dtsh *sh)
{
	char *err = NULL;

	if (sh->db || sh->cap == NULL)
		return sh->db;
	if (sh->ncaps > DTSQL_MAX_CAPTURES) {
		/* before the symbols of them all are loaded for nothing */
		fprintf(stderr, "dtsh sql: %d captures are open: at most %d at once\n",
			sh->ncaps, DTSQL_MAX_CAPTURES);
		return NULL;
	}
	/* Frames are named through dtsym: loaded first, as Ctrl-C stops it */
	if (load_syms(sh, 1))
		return NULL;
	/* guarded: SQL typed here writes no file (dtsql_open) */
	if ((sh->db = dtsql_open(&err)) == NULL) {
		fprintf(stderr, "dtsh sql: %s\n", err ? err : "out of memory");
		sqlite3_free(err);
		return NULL;
	}
	if (sh->ncaps > 1)
		return sql_db_many(sh);
	if (dtsql_attach(sh->db, sh->cap, sh->sym, &err) == NULL) {
		fprintf(stderr, "dtsh sql: %s\n", err ? err : "cannot attach the capture");
		sqlite3_free(err);
		sqlite3_close(sh->db);
		sh->db = NULL;
	}
	return sh->db;
}

/* ------------------------------------------------------------- modes */

void
dtsh_close_capture(struct dtsh *sh)
{
	/* The handle reads the capture in place: it goes first. */
	if (sh->db)
		sqlite3_close(sh->db);
	sh->db = NULL;
	/* [0] of caps, syms and cap_paths are cap, sym and cap_path */
	for (int i = 1; i < sh->ncaps; i++) {
		dtsym_close(sh->syms[i]);
		dtcap_reader_close(sh->caps[i]);
		free(sh->cap_paths[i]);
	}
	free(sh->syms);
	free(sh->caps);
	free(sh->cap_paths);
	sh->syms = NULL;
	sh->caps = NULL;
	sh->cap_paths = NULL;
	sh->ncaps = 0;
	dtsym_close(sh->sym);
	sh->sym = NULL;
	if (sh->cap)
		dtcap_reader_close(sh->cap);
	sh->cap = NULL;
	free(sh->cap_path);
	sh->cap_path = NULL;
}

int
dtsh_open_capture(struct dtsh *sh, const char *path, int partial)
{
	char *a[1] = { (char *)path };

	return dtsh_open_captures(sh, a, 1, partial);
}

int
dtsh_open_captures(struct dtsh *sh, char *const *args, int nargs, int partial)
{
	struct dtx_caps cl = { 0 };
	struct stat st;
	char err[512];
	int status = RPT_EXIT_ERROR, n = 0;

	/* One argument that is not a directory is that capture, whatever its
	 * name (rpt_open says why it cannot be read); directories stand for
	 * their *.dtc files. */
	if (nargs == 1 && !(stat(args[0], &st) == 0 && S_ISDIR(st.st_mode))) {
		if ((cl.path = calloc(1, sizeof(*cl.path))) == NULL ||
		    (cl.path[0] = strdup(args[0])) == NULL) {
			free(cl.path);
			fprintf(stderr, "dtsh: out of memory\n");
			return RPT_EXIT_ERROR;
		}
		cl.n = 1;
		cl.cap = 1;
	} else if (dtx_caps_add(&cl, args, nargs, err, sizeof(err)) < 0) {
		fprintf(stderr, "dtsh open: %s\n", err);
		dtx_caps_free(&cl);
		return RPT_EXIT_USAGE;
	}
	struct dtcap_reader **rs = calloc((size_t)cl.n, sizeof(*rs));
	struct dtsym **syms = calloc((size_t)cl.n, sizeof(*syms));
	if (rs == NULL || syms == NULL) {
		fprintf(stderr, "dtsh: out of memory\n");
		goto fail;
	}
	for (n = 0; n < cl.n; n++)
		if ((rs[n] = rpt_open("open", cl.path[n], partial, 0, &status)) == NULL)
			goto fail;
	dtsh_close_capture(sh);
	sh->caps = rs;
	sh->syms = syms;
	sh->cap_paths = cl.path;	/* the list's strings are the shell's now */
	sh->ncaps = cl.n;
	sh->cap = rs[0];
	sh->cap_path = cl.path[0];
	return 0;
fail:
	for (int i = 0; i < n; i++)
		dtcap_reader_close(rs[i]);
	free(rs);
	free(syms);
	dtx_caps_free(&cl);
	return status;
}

static int
cmd_open(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	int partial = sh->partial;

	(void)rest;
	if (argc >= 3 && strcmp(argv[1], "--partial") == 0) {
		partial = 1;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: open [--partial] FILE|DIR...\n");
		return 1;
	}
	if (dtsh_open_captures(sh, argv + 1, argc - 1, partial))
		return 1;
	if (sh->interactive && sh->ncaps == 1) {
		printf("%s: %llu events, %zu probes\n", argv[1],
		       (unsigned long long)dtcap_nevents(sh->cap), dtcap_nprobes(sh->cap));
	} else if (sh->interactive) {
		unsigned long long ev = 0;
		for (int i = 0; i < sh->ncaps; i++)
			ev += dtcap_nevents(sh->caps[i]);
		printf("%d captures: %llu events\n", sh->ncaps, ev);
	}
	return 0;
}

/* More words than a command takes: refused with the reason and the usage. */
static int
extra_args(int argc, char **argv, int max)
{
	if (argc <= max)
		return 0;
	const struct dtsh_cmd *c = dtsh_find_cmd(argv[0]);
	fprintf(stderr, "dtsh %s: unexpected argument '%s'\nusage: %s\n", argv[0], argv[max],
		c ? c->usage : argv[0]);
	return 1;
}

static int
cmd_close(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)rest;
	if (extra_args(argc, argv, 1))
		return 1;
	if (sh->cap == NULL) {
		fprintf(stderr, "dtsh: no capture is open\n");
		return 1;
	}
	dtsh_close_capture(sh);
	return 0;
}

static int
cmd_help(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)sh; (void)rest;
	if (extra_args(argc, argv, 2))
		return 1;
	if (argc == 1) {
		for (const struct dtsh_cmd *c = dtsh_cmds; c->name; c++) {
			const char *nl = strchr(c->help, '\n');
			int len = nl ? (int)(nl - c->help) : (int)strlen(c->help);
			printf("  %-42s %.*s%s\n", c->usage, len, c->help, nl ? "..." : "");
		}
		printf("Commands are separated by ';'.  'help COMMAND' for more.\n");
		return 0;
	}
	const struct dtsh_cmd *c = dtsh_find_cmd(argv[1]);
	if (c == NULL) {
		suggest_cmd(argv[1]);
		return 1;
	}
	printf("usage: %s\n%s\n", c->usage, c->help);
	return 0;
}

static int
cmd_quit(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	(void)sh; (void)rest;
	if (extra_args(argc, argv, 1))
		return 1;
	return DTSH_QUIT;
}

static int
cmd_set(struct dtsh *sh, int argc, char **argv, const char *rest)
{
	unsigned n;

	(void)sh; (void)rest;
	if (argc == 1) {
		printf("threads %u\n", dtsp_threads());
		return 0;
	}
	if (strcmp(argv[1], "threads") != 0) {
		fprintf(stderr, "dtsh: set: unknown setting '%s' (threads)\n", argv[1]);
		return 1;
	}
	if (argc != 3) {
		fprintf(stderr, "dtsh: set threads: one number expected\n");
		return 1;
	}
	if (strcmp(argv[2], "0") == 0)
		n = 0;
	else if (dtsp_parse_threads(argv[2], &n)) {
		fprintf(stderr, "dtsh: set threads: '%s' is not a number of threads (0..%d)\n",
			argv[2], DTSP_MAX_THREADS);
		return 1;
	}
	dtsp_set_threads(n);
	return 0;
}

/* ----------------------------------------------------------- running */

/* Did everything the command printed get out?  (`> /dev/full` is an error.) */
static int
stdout_ok(const char *cmd)
{
	char err[256];

	if (dtu_stdout_check(err, sizeof(err)) == 0)
		return 1;
	fprintf(stderr, "dtsh %s: %s\n", cmd, err);
	return 0;
}

int
dtsh_run(struct dtsh *sh, const char *cmdline)
{
	char err[128], **argv;
	int argc, rc;
	const char *rest;
	size_t wl = strcspn(cmdline, " \t\n");
	char word[32];

	snprintf(word, sizeof(word), "%.*s", (int)(wl < 31 ? wl : 31), cmdline);
	/* --no-demangle and --no-inline hold for the one command that says it. */
	dtsym_demangle = 1;
	dtsym_inline = 1;
	if (dtsh_is_sql_word(word) || word[0] == '.') {
		/* The query is raw text: the tokenizer would eat its quotes. */
		char *a[] = { "sql", NULL };
		rc = cmd_sql_(sh, 1, a, cmdline);
		return stdout_ok("sql") ? rc : 1;
	}
	if ((argc = dtsh_tokenize(cmdline, 0, &argv, err, sizeof(err))) < 0) {
		fprintf(stderr, "dtsh: %s\n", err);
		return 1;
	}
	if (argc == 0) {
		dtsh_free_argv(argv);
		return 0;
	}
	const struct dtsh_cmd *c = dtsh_find_cmd(argv[0]);
	if (c == NULL) {
		suggest_cmd(argv[0]);
		dtsh_free_argv(argv);
		return 1;
	}
	rest = cmdline + wl;
	rest += strspn(rest, " \t\n");
	fflush(stdout);
	rc = c->fn(sh, argc, argv, rest);
	if (!stdout_ok(c->name) && rc != DTSH_QUIT)
		rc = 1;
	dtsh_free_argv(argv);
	return rc;
}

int
dtsh_run_line(struct dtsh *sh, const char *line, int *failed)
{
	char err[128], **cmds;
	int n = dtsh_split(line, &cmds, err, sizeof(err)), rc = 0;

	if (n < 0) {
		fprintf(stderr, "dtsh: %s\n", err);
		(*failed)++;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (rc == DTSH_QUIT)
			break;
		rc = dtsh_run(sh, cmds[i]);
		if (rc != 0 && rc != DTSH_QUIT)
			(*failed)++;
	}
	for (int i = 0; i < n; i++)
		free(cmds[i]);
	free(cmds);
	return rc;
}

void
dtsh_free(struct dtsh *sh)
{
	dtsh_close_capture(sh);
	dtp_close(sh->dev);
	sh->dev = NULL;
	for (size_t i = 0; i < sh->nen; i++)
		free(sh->en[i].spec);
	free(sh->en);
	sh->en = NULL;
	sh->nen = 0;
}
