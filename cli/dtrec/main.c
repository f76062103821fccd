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
"       dtrec -o FILE -e PROBE [-e PROBE ...] [-akqu] [-b RINGSIZE] [-d DURATION]\n"
"             [-p PID[,PID...]] [--comm NAME] [--cgroup DIR] [--source dt|perf]\n"
"             [--flush-interval DURATION]\n"
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
"  -k            record kernel stacks with every event\n"
"  -u            record user stacks with every event\n"
"                (neither -k nor -u: profile and interval events get both)\n"
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
"                FILE.1.dtc, FILE.2.dtc, ... (FILE without its .dtc)\n"
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
	enum { OPT_SOURCE = 256, OPT_FLUSH, OPT_SYNC, OPT_USTACKS, OPT_USTACK_SIZE, OPT_FLIGHT,
	       OPT_TRIGGER, OPT_TRIGGER_FILTER, OPT_COMM, OPT_CGROUP, OPT_VERSION, OPT_DUMP_GAP,
	       OPT_MAX_DUMPS };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "flush-interval", required_argument, NULL, OPT_FLUSH },
		{ "sync", no_argument, NULL, OPT_SYNC },
		{ "user-stacks", required_argument, NULL, OPT_USTACKS },
		{ "user-stack-size", required_argument, NULL, OPT_USTACK_SIZE },
		{ "flight", required_argument, NULL, OPT_FLIGHT },
		{ "trigger", required_argument, NULL, OPT_TRIGGER },
		{ "trigger-filter", required_argument, NULL, OPT_TRIGGER_FILTER },
		{ "dump-interval", required_argument, NULL, OPT_DUMP_GAP },
		{ "max-dumps", required_argument, NULL, OPT_MAX_DUMPS },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	static const char *probes[256], *triggers[64];
	size_t ntriggers = 0;
	static pid_t pids[1024];
	size_t nprobes = 0, npids = 0;
	struct dtrec_opts o;
	struct dtrec_result res;
	int c, list = 0, verbose = 0, rc, all = 0;
	uint64_t v;

	memset(&o, 0, sizeof(o));
	o.prog = "dtrec";
	opterr = 0;	/* our own messages, without the full path of argv[0] */
	/* '+': options end at the first operand, so COMMAND keeps its own */
	while ((c = getopt_long(argc, argv, "+lvo:e:kud:b:qhp:a", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			list = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'e':
			if (nprobes == sizeof(probes) / sizeof(probes[0])) {
				fprintf(stderr, "dtrec: too many -e options (use a glob)\n");
				return EXIT_USAGE;
			}
			probes[nprobes++] = optarg;
			break;
		case 'k':
			o.kstack = 1;
			break;
		case 'u':
			o.ustack = 1;
			break;
		case 'd':
			if (dtu_parse_duration(optarg, &v) < 0 || v == 0) {
				fprintf(stderr, "dtrec: bad duration '%s' (e.g. 10s, 500ms, 2m)\n", optarg);
				return EXIT_USAGE;
			}
			o.duration_ns = v;
			break;
		case 'b':
			if (dtu_parse_size(optarg, &v) < 0 || v < DT_BUFSZ_MIN || v > DT_BUFSZ_MAX ||
			    (v & (v - 1)) != 0) {
				fprintf(stderr, "dtrec: bad ring size '%s': a power of two from 8k to 64M\n",
					optarg);
				return EXIT_USAGE;
			}
			o.bufsize = (uint32_t)v;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'a':
			all = 1;
			break;
		case 'p': {
			char *p = optarg, *end;
			do {
				long pid;
				errno = 0;
				pid = strtol(p, &end, 10);
				if (end == p || errno || pid <= 0 || pid > 0x3fffffff ||
				    (*end && *end != ',')) {
					fprintf(stderr, "dtrec: bad process id list '%s' "
						"(e.g. -p 1234 or -p 1234,5678)\n", optarg);
					return EXIT_USAGE;
				}
				if (npids == sizeof(pids) / sizeof(pids[0])) {
					fprintf(stderr, "dtrec: too many process ids\n");
					return EXIT_USAGE;
				}
				pids[npids++] = (pid_t)pid;
				p = end + 1;
			} while (*end == ',');
			break;
		}
		case OPT_SOURCE:
			if (strcmp(optarg, "dt") != 0 && strcmp(optarg, "perf") != 0) {
				fprintf(stderr, "dtrec: unknown source '%s' (dt or perf)\n", optarg);
				return EXIT_USAGE;
			}
			o.source = optarg;
			break;
		case OPT_FLUSH:
			if (dtu_parse_duration(optarg, &v) < 0 || v < 10000000ULL) {
				fprintf(stderr, "dtrec: bad flush interval '%s' (at least 10ms, "
					"e.g. 500ms, 2s)\n", optarg);
				return EXIT_USAGE;
			}
			o.flush_ns = v;
			break;
		case OPT_SYNC:
			o.sync = 1;
			break;
		case OPT_USTACKS:
			if (strcmp(optarg, "fp") == 0)
				o.ustack_mode = DTSRC_USTACK_FP;
			else if (strcmp(optarg, "dwarf") == 0)
				o.ustack_mode = DTSRC_USTACK_DWARF;
			else if (strcmp(optarg, "auto") == 0)
				o.ustack_mode = DTSRC_USTACK_AUTO;
			else {
				fprintf(stderr, "dtrec: bad --user-stacks '%s' (fp, dwarf or auto)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_USTACK_SIZE:
			if (dtu_parse_size(optarg, &v) < 0 || v < 1024 || v > 61440) {
				fprintf(stderr, "dtrec: bad --user-stack-size '%s': 1k to 60k "
					"(e.g. 16k)\n", optarg);
				return EXIT_USAGE;
			}
			o.ustack_size = (uint32_t)(v & ~7ULL);
			break;
		case OPT_FLIGHT:
			if (dtu_parse_size(optarg, &v) < 0 || v < DT_BUFSZ_MIN || v > DT_BUFSZ_MAX ||
			    (v & (v - 1)) != 0) {
				fprintf(stderr, "dtrec: bad flight ring size '%s': a power of two from 8k "
					"to 64M\n", optarg);
				return EXIT_USAGE;
			}
			o.flight = (uint32_t)v;
			break;
		case OPT_TRIGGER:
			if (ntriggers == sizeof(triggers) / sizeof(triggers[0])) {
				fprintf(stderr, "dtrec: too many --trigger options\n");
				return EXIT_USAGE;
			}
			triggers[ntriggers++] = optarg;
			break;
		case OPT_TRIGGER_FILTER:
			o.trigger_filter = optarg;
			break;
		case OPT_DUMP_GAP:
			if (dtu_parse_duration(optarg, &v) < 0 || v == 0) {
				fprintf(stderr, "dtrec: bad --dump-interval '%s' (e.g. 5s, 500ms, 1m)\n",
					optarg);
				return 2;
			}
			o.dump_gap_ns = v;
			break;
		case OPT_MAX_DUMPS: {
			char *end;
			unsigned long n;
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (end == optarg || *end || errno || n == 0 || n > 100000 || optarg[0] == '-') {
				fprintf(stderr, "dtrec: bad --max-dumps '%s': a count from 1 to 100000\n",
					optarg);
				return 2;
			}
			o.max_dumps = (uint32_t)n;
			break;
		}
		case OPT_COMM:
			if (optarg[0] == '\0' || strlen(optarg) >= DT_COMMLEN) {
				fprintf(stderr, "dtrec: bad --comm '%s': a command name is 1 to %d "
					"bytes (the kernel keeps no more)\n", optarg, DT_COMMLEN - 1);
				return EXIT_USAGE;
			}
			o.comm = optarg;
			break;
		case OPT_CGROUP: {
			char err[512];
			int fd = dtu_open_cgroup(optarg, err, sizeof(err));
			if (fd < 0) {
				fprintf(stderr, "dtrec: %s\n", err);
				return EXIT_USAGE;
			}
			close(fd);	/* reopened when recording starts */
			o.cgroup = optarg;
			break;
		}
		case 'h':
			return usage(stdout, 0);
		case OPT_VERSION:
			printf("dtrec %s\n", dtu_version());
			return stdout_done(0);
		case '?':
			if (optopt && strchr("oedb", optopt))
				fprintf(stderr, "dtrec: -%c needs an argument\n", optopt);
			else if (optopt)
				fprintf(stderr, "dtrec: unknown option -%c\n", optopt);
			else
				fprintf(stderr, "dtrec: unknown option %s\n", argv[optind - 1]);
			return usage(stderr, EXIT_USAGE);
		default:
			return usage(stderr, EXIT_USAGE);
		}
	}

	if (verbose && !list) {
		fprintf(stderr, "dtrec: -v goes with -l\n");
		return usage(stderr, 1);
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
		size_t n = verbose ? list_fields(d, glob) : dtp_list(d, glob, stdout);
		if (glob && n == 0 && !dtu_is_glob(glob) && strlen(glob) < 200) {
			/* a bare word such as "vfs_read" finds the probes containing it */
			char sub[256];
			snprintf(sub, sizeof(sub), "*%s*", glob);
			n = verbose ? list_fields(d, sub) : dtp_list(d, sub, stdout);
		}
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
	if (nprobes == 0 && ntriggers == 0) {
		fprintf(stderr, "dtrec: no probe (-e PROBE); dtrec -l lists them\n");
		return usage(stderr, EXIT_USAGE);
	}
	if (o.trigger_filter && !ntriggers) {
		fprintf(stderr, "dtrec: --trigger-filter needs --trigger\n");
		return usage(stderr, EXIT_USAGE);
	}
	if (ntriggers && !o.flight) {
		fprintf(stderr, "dtrec: --trigger needs --flight\n");
		return usage(stderr, EXIT_USAGE);
	}
	if ((o.dump_gap_ns || o.max_dumps) && !o.flight) {
		fprintf(stderr, "dtrec: --dump-interval and --max-dumps need --flight\n");
		return EXIT_USAGE;
	}
	if (o.flight && o.bufsize) {
		fprintf(stderr, "dtrec: --flight SIZE is the ring size: leave out -b\n");
		return usage(stderr, EXIT_USAGE);
	}
	if (optind < argc)
		o.argv = argv + optind;
	if ((o.argv != NULL) + (npids != 0) + all > 1) {
		fprintf(stderr, "dtrec: -a, -p and a COMMAND each choose what to record: "
			"give one of them\n");
		return usage(stderr, EXIT_USAGE);
	}
	o.pids = npids ? pids : NULL;
	o.npids = npids;
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
