/*
 * dtrec - record kernel events from /dev/dt into a .dtc capture.
 * The loop itself lives in cli/lib/rec/record.c so dtsh runs the same code.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtcap_args.h"
#include "probes.h"
#include "recargs.h"
#include "record.h"
#include "source.h"
#include "util.h"

/*
 * Exit statuses (dtrec(8) EXIT STATUS).  With a COMMAND dtrec exits with
 * the command's status, so its own failures take values a command rarely
 * uses, as timeout(1) and env(1) do: 125 dtrec failed, 126 the command
 * could not be run, 127 it was not found.
 */
#define EXIT_USAGE	2	/* a bad command line: nothing was run */
#define EXIT_CMD_FAIL	125	/* with COMMAND: dtrec itself failed */

static volatile sig_atomic_t stop, dump;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* --flight: each SIGUSR2 asks for one more dump */
static void
on_dump(int sig)
{
	(void)sig;
	dump++;
}

/*
 * -l -v: each probe matching glob, then its fields as the SQL views and
 * dtsh's describe name them (dtcap_args.h), so a query can be written from
 * this listing.  Returns how many probes matched.
 */
static size_t
list_fields(struct dtp_dev *d, const char *glob)
{
	size_t n = 0;

	for (size_t i = 0; i < dtp_count(d); i++) {
		const struct dt_probe_info *pi = dtp_at(d, i);
		struct dtcap_probe p;
		char name[DTCAP_PROBENAMELEN], err[DTP_ERRLEN];

		/* dt.ko's uprobes carry only a label, as in dtp_list */
		if (strcmp(pi->dtpi_prov, "uprobe") == 0 ||
		    (glob && !dtu_glob_match(glob, dtp_name(pi, name, sizeof(name)))))
			continue;
		n++;
		if (dtp_describe(d, pi, &p, err, sizeof(err)) != 0) {
			printf("%s\n  fields unknown: %s\n", dtp_name(pi, name, sizeof(name)), err);
			continue;
		}
		printf("%s\n", p.name);
		dtcap_arg_print(stdout, &p);
	}
	return n;
}

static const char usage_text[] =
"usage: dtrec [--source dt|perf] -l [-v] [GLOB]\n"
"       dtrec -o FILE [-e PROBE ...] [--offcpu] [-akqu] [-b RINGSIZE] [-d DURATION]\n"
"             [-p PID[,PID...]] [--comm NAME] [--cgroup DIR] [--source dt|perf]\n"
"             [--flush-interval DURATION] [--no-srcline]\n"
"             [--sync] [--user-stacks fp|dwarf|auto] [--user-stack-size SIZE]\n"
"             [--flight SIZE [--trigger PROBE ...] [--dump-interval DURATION]\n"
"             [--max-dumps N]] [-- COMMAND [ARG ...]]\n"
"\n"
"  -l [GLOB]     list the probes (matching GLOB, e.g. 'syscall:*:entry');\n"
"                with -v, each with its fields: the SQL column of the probe's\n"
"                view (dtreport sql), the type and the events columns argN\n"
"  -o FILE       write the capture to FILE (.dtc; mode 0600; refused: another\n"
"                user's symbolic link, devices, a FILE another dtrec writes)\n"
"  -e PROBE      enable PROBE: profile:hz:997, interval:hz:1, syscall:*:entry,\n"
"                tracepoint:sched:sched_switch, kprobe:vfs_read:entry, ...\n"
"                uprobe:PATH:SYMBOL[+OFF]:entry|return (a user function:\n"
"                args in arg0..5, return value in retval) and\n"
"                usdt:PATH:PROVIDER:NAME (SDT notes); -l 'uprobe:PATH:*' lists\n"
"  --offcpu      also record the scheduler's switches and wakeups\n"
"                (sched_switch with the state left in, sched_waking,\n"
"                which runs in the waker, sched_wakeup_new) with kernel\n"
"                and user stacks, for dtreport flame --offcpu/--wakers\n"
"                and blame; with -p or COMMAND also the switches into\n"
"                them and their wakeups (both sources)\n"
"  -k            record kernel stacks with every event\n"
"  -u            record user stacks with every event\n"
"                (neither -k nor -u: profile and interval events get both)\n"
"  --no-srcline  store no source lines or inlined calls of the user\n"
"                frames (by default read from the programs' DWARF, or\n"
"                their separate debug files, at the end of recording)\n"
"  -d DURATION   stop after DURATION: 10s, 500ms, 2m, or plain seconds\n"
"  -b RINGSIZE   per-CPU ring size: a power of two, 8k to 64M (default 1M;\n"
"                4M with DWARF user stacks)\n"
"  -p PID,...    record only these processes and their children\n"
"  -a            record the whole system (the default without -p or COMMAND)\n"
"  --comm NAME   record only tasks whose command name (comm, at most 15\n"
"                bytes, as in /proc/PID/comm) is NAME; dt source only\n"
"  --cgroup DIR  record only tasks in the cgroup v2 directory DIR (e.g.\n"
"                /sys/fs/cgroup/system.slice) or in cgroups below it; on the\n"
"                perf source not with -p or COMMAND.  On the dt source\n"
"                --comm, --cgroup, -p and COMMAND combine: an event must\n"
"                pass each one given\n"
"  --source dt|perf\n"
"                dt: /dev/dt (dt.ko); perf: perf_event_open, no module needed;\n"
"                default: dt when /dev/dt opens, perf otherwise\n"
"  --flush-interval DURATION\n"
"                write buffered events out this often (default 1s): a killed\n"
"                dtrec loses at most that much\n"
"  --sync        also fdatasync the capture at every flush\n"
"  --user-stacks fp|dwarf|auto\n"
"                how user stacks are walked: fp, the kernel follows frame\n"
"                pointers; dwarf, the kernel copies the top of the stack and\n"
"                dtrec unwinds it with DWARF CFI (.eh_frame, debug files),\n"
"                storing only the frames; auto (default): dwarf for profile,\n"
"                interval and user probes where the source can, frame\n"
"                pointers for the rest, or dwarf for every probe when the\n"
"                command (or a -p process) is built without frame pointers\n"
"  --user-stack-size SIZE\n"
"                stack bytes copied per sample for dwarf, 1k to 60k\n"
"                (default 16k): deeper stacks need more\n"
"  --flight SIZE flight recorder: rings of SIZE bytes per CPU\n"
"                (a power of two, 8k to 64M) keep only the newest events,\n"
"                nothing is written meanwhile; SIGUSR2, a --trigger probe and\n"
"                the end of recording each write what the rings hold to\n"
"                FILE.1.dtc, FILE.2.dtc, ... (FILE without its .dtc);\n"
"                unless -q, a line on stderr says when the rings record\n"
"  --trigger PROBE\n"
"                with --flight: dump when PROBE fires (also recorded)\n"
"  --trigger-filter EXPR\n"
"                only trigger events passing the tracefs filter EXPR, e.g.\n"
"                'ret < 0' for syscall:X:return (tracepoint triggers only;\n"
"                perf source only)\n"
"  --dump-interval DURATION\n"
"                with --flight: a trigger dumps only this long after the\n"
"                previous dump (default 5s); triggers in between are skipped\n"
"                and counted\n"
"  --max-dumps N with --flight: write at most N captures, the one at the end\n"
"                of recording included (default 10)\n"
"  -q            no status line and no summary (drops are still reported)\n"
"  -h, --help    this text\n"
"  --version     the version of dt (also recorded in every capture)\n"
"  -- COMMAND    run COMMAND and record only it and its descendants;\n"
"                recording ends when it exits\n"
"\n"
"Recording ends at SIGINT or SIGTERM, after DURATION, when COMMAND exits or\n"
"when every -p process has exited; the capture is complete in every case.\n"
"\n"
"Exit status: 0 recorded, 1 failed, 2 usage error.  With a COMMAND: the\n"
"command's status once the capture is written (128+N if signal N ended it),\n"
"125 if dtrec failed, 126 if COMMAND could not be run, 127 if not found.\n"
"See dtrec(8).\n";

/* A failed write to standard output (a full disk, a closed pipe) is an error. */
static int
stdout_werr(int status, int werr)
{
	int e;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	/* a long text met the error while stdio flushed it midway: the
	 * final flush then has nothing left to fail on, errno is werr's */
	e = errno ? errno : werr ? werr : EIO;
	fprintf(stderr, "dtrec: standard output: %s\n", strerror(e));
	return 1;
}

static int
stdout_done(int status)
{
	return stdout_werr(status, 0);
}

static int
usage(FILE *f, int status)
{
	errno = 0;
	fputs(usage_text, f);
	return f == stdout ? stdout_werr(status, errno) : status;
}

static char *
join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (s == NULL)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int
main(int argc, char **argv)
{
	static struct dtrec_args args;
	struct dtrec_result res;
	int list, rc;

	/* the options, as dtsh's record takes them too */
	rc = dtrec_args_parse(&args, argc, argv, "dtrec");
	if (rc >= 0) {
		if (args.help)
			return usage(stdout, 0);
		if (args.version) {
			printf("dtrec %s\n", dtu_version());
			return stdout_done(0);
		}
		return args.print_usage ? usage(stderr, rc) : rc;
	}
	struct dtrec_opts o = args.o;
	const char **probes = args.probes, **triggers = args.triggers;
	size_t nprobes = args.nprobes, ntriggers = args.ntriggers;
	list = args.list;
	optind = args.optind;
	o.prog = "dtrec";

	if (args.verbose && !list) {
		fprintf(stderr, "dtrec: -v goes with -l\n");
		return usage(stderr, EXIT_USAGE);
	}
	if (list) {
		struct dtp_dev *d;
		char err[DTP_ERRLEN];
		const char *glob = optind < argc ? argv[optind] : NULL;

		if (optind + 1 < argc || o.output || nprobes) {
			fprintf(stderr, "dtrec: -l takes only an optional GLOB\n");
			return usage(stderr, EXIT_USAGE);
		}
		if (glob && dtp_is_user(glob)) {
			/* a file's functions or SDT notes: no source needed */
			size_t n;
			if (dtp_list_user(glob, stdout, &n, err, sizeof(err)) < 0) {
				fprintf(stderr, "dtrec: %s\n", err);
				return 1;
			}
			if (n == 0) {
				fprintf(stderr, "dtrec: no probe matches '%s'\n", glob);
				return 1;
			}
			return stdout_done(0);
		}
		d = dtp_open_source(o.source, NULL, 0, err, sizeof(err));
		if (d == NULL) {
			fprintf(stderr, "dtrec: %s\n", err);
			return 1;
		}
		size_t n = args.verbose ? list_fields(d, glob) : dtp_list(d, glob, stdout);
		char sub[256];
		if (glob && n == 0 && dtp_word_glob(glob, sub, sizeof(sub)))	/* "vfs_read": the probes holding it */
			n = args.verbose ? list_fields(d, sub) : dtp_list(d, sub, stdout);
		/* a short list must not pass for the whole catalog */
		if (dtp_missing(d))
			fprintf(stderr, "dtrec: warning: only profile and interval are listed: %s\n",
				dtp_missing(d));
		dtp_close(d);
		if (glob && n == 0) {
			fprintf(stderr, "dtrec: no probe matches '%s'\n", glob);
			return 1;
		}
		return stdout_done(0);
	}
	if (o.output == NULL) {
		fprintf(stderr, "dtrec: no output file (-o FILE)\n");
		return usage(stderr, EXIT_USAGE);
	}
	if (nprobes == 0 && ntriggers == 0 && !o.offcpu) {
		fprintf(stderr, "dtrec: no probe (-e PROBE or --offcpu); dtrec -l lists them\n");
		return usage(stderr, EXIT_USAGE);
	}
	args.o = o;
	if (dtrec_args_check(&args, argc, argv, "dtrec") != 0)
		return usage(stderr, EXIT_USAGE);
	o = args.o;
	/* an output that cannot be written fails before anything is recorded */
	{
		struct stat st;
		if (stat(o.output, &st) == 0 && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "dtrec: %s: %s\n", o.output, strerror(EISDIR));
			return 1;
		}
		if (stat(o.output, &st) == 0 && access(o.output, W_OK) < 0) {
			fprintf(stderr, "dtrec: %s: %s\n", o.output, strerror(errno));
			return 1;
		}
	}

	{
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;	/* no SA_RESTART: poll() returns at once */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		if (o.flight) {
			sa.sa_handler = on_dump;
			sigaction(SIGUSR2, &sa, NULL);
		}
		/* a closed stderr pipe must not kill us before the footer is written */
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
	}
	o.probes = probes;
	o.nprobes = nprobes;
	o.stop = &stop;
	o.dump = &dump;
	o.triggers = triggers;
	o.ntriggers = ntriggers;
	o.status = stderr;
	o.cmdline = join_args(argc, argv);

	rc = dtrec_record(&o, &res);
	free((void *)o.cmdline);
	if (o.argv == NULL)
		return rc;
	/* the command's status, as time(1) gives it; dtrec's failure said apart */
	if (rc != 0) {
		if (res.not_run)
			return res.not_run;
		if (res.cmd_status != -1 && WIFEXITED(res.cmd_status))
			fprintf(stderr, "dtrec: recording failed (the command exited with status "
				"%d): exit status %d\n", WEXITSTATUS(res.cmd_status), EXIT_CMD_FAIL);
		else if (res.cmd_status != -1 && WIFSIGNALED(res.cmd_status))
			fprintf(stderr, "dtrec: recording failed (the command was killed by signal "
				"%d): exit status %d\n", WTERMSIG(res.cmd_status), EXIT_CMD_FAIL);
		else
			fprintf(stderr, "dtrec: recording failed: exit status %d\n", EXIT_CMD_FAIL);
		return EXIT_CMD_FAIL;
	}
	if (res.cmd_status != -1 && WIFEXITED(res.cmd_status))
		return WEXITSTATUS(res.cmd_status);
	if (res.cmd_status != -1 && WIFSIGNALED(res.cmd_status))
		return 128 + WTERMSIG(res.cmd_status);
	return 0;
}
