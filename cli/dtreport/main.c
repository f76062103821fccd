/*
 * dtreport - analyse a dt capture offline: stats, flame graphs, differential
 * flame graphs, top, SQL and export.  The subcommands live in libdtcli
 * (report.h, engine.h) so dtsh runs the same code; this is only the
 * dispatch.
 */
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "util.h"

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*what;
} cmds[] = {
	{ "stats",  cmd_stats,  "what was recorded, events per probe/CPU/process, drop accounting" },
	{ "flame",  cmd_flame,  "flame graph (SVG, or --folded text) of sampled stacks" },
	{ "diff",   cmd_diff,   "differential flame graph of B against A" },
	{ "top",    cmd_top,    "the busiest comms, pids, probes, stacks, syscalls, functions or objects" },
	{ "callers", cmd_calls, "the call tree into a function, merged over the sampled stacks" },
	{ "callees", cmd_calls, "the call tree out of a function, merged over the sampled stacks" },
	{ "annotate", cmd_annotate, "a function's samples by source line and instruction" },
	{ "latency", cmd_latency, "entry/return latency: percentiles and histograms" },
	{ "syscalls", cmd_syscalls, "per syscall calls, errors and times (strace -c)" },
	{ "blame",  cmd_blame,  "where a thread's time went: on-CPU, runqueue, blocked by whom" },
	{ "heatmap", cmd_heatmap, "subsecond-offset heat map (SVG) of samples over time" },
	{ "sql",    cmd_sql,    "SQL queries over the capture's tables" },
	{ "export", cmd_export, "write the capture as SQLite, Parquet, pprof or a Chrome trace" },
};

static void usage(FILE *to)
{
	fprintf(to, "usage: dtreport COMMAND [options] FILE.dtc ...\n"
		"       dtreport --version\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(to, "  %-8s %s\n", cmds[i].name, cmds[i].what);
	fprintf(to, "\n'dtreport COMMAND --help' for a command's options; see dtreport(1).\n"
		"Exit status: 0 done, 1 error, 2 usage error, 3 capture cut short "
		"(--partial reads it).\n");
}

/* Whatever a command wrote must have reached its destination. */
static int close_stdout(int rc)
{
	if (fclose(stdout) != 0 && rc == 0) {
		perror("dtreport: writing standard output");
		return RPT_EXIT_ERROR;
	}
	return rc;
}

int main(int argc, char **argv)
{
	dtu_out_cleanup_on_signals();
	if (argc < 2) {
		fprintf(stderr, "dtreport: no command given\n");
		usage(stderr);
		return RPT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return close_stdout(0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("dtreport %s\n", dtu_version());
		return close_stdout(0);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return close_stdout(cmds[i].fn(argc - 1, argv + 1));
	fprintf(stderr, "dtreport: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return RPT_EXIT_USAGE;
}
