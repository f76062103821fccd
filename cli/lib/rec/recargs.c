/*
 * recargs.c - dtrec's options (recargs.h), the one parser of dtrec and
 * dtsh's record.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_abi.h"
#include "recargs.h"
#include "source.h"
#include "util.h"

int dtrec_args_parse(struct dtrec_args *a, int argc, char **argv, const char *prog)
{
	enum { OPT_SOURCE = 256, OPT_FLUSH, OPT_SYNC, OPT_USTACKS, OPT_USTACK_SIZE, OPT_FLIGHT,
	       OPT_TRIGGER, OPT_TRIGGER_FILTER, OPT_COMM, OPT_CGROUP, OPT_VERSION, OPT_DUMP_GAP,
	       OPT_MAX_DUMPS, OPT_OFFCPU, OPT_NO_SRCLINE };
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
		{ "offcpu", no_argument, NULL, OPT_OFFCPU },
		{ "no-srcline", no_argument, NULL, OPT_NO_SRCLINE },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t v;

	memset(a, 0, sizeof(*a));
	opterr = 0;	/* our own messages, without the full path of argv[0] */
	optind = 0;	/* GNU getopt starts over: dtsh parses a line at a time */
	/* '+': options end at the first operand, so COMMAND keeps its own */
	while ((c = getopt_long(argc, argv, "+lvo:e:kud:b:qhp:a", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			a->list = 1;
			break;
		case 'v':
			a->verbose = 1;
			break;
		case 'o':
			a->o.output = optarg;
			break;
		case 'e':
			if (a->nprobes == sizeof(a->probes) / sizeof(a->probes[0])) {
				fprintf(stderr, "%s: too many -e options (use a glob)\n", prog);
				return 2;
			}
			a->probes[a->nprobes++] = optarg;
			break;
		case 'k':
			a->o.kstack = 1;
			break;
		case 'u':
			a->o.ustack = 1;
			break;
		case 'd':
			if (dtu_parse_duration(optarg, &v) < 0 || v == 0) {
				fprintf(stderr, "%s: bad duration '%s' (e.g. 10s, 500ms, 2m)\n", prog, optarg);
				return 2;
			}
			a->o.duration_ns = v;
			break;
		case 'b':
			if (dtu_parse_size(optarg, &v) < 0 || v < DT_BUFSZ_MIN || v > DT_BUFSZ_MAX ||
			    (v & (v - 1)) != 0) {
				fprintf(stderr, "%s: bad ring size '%s': a power of two from 8k to 64M\n", prog,
					optarg);
				return 2;
			}
			a->o.bufsize = (uint32_t)v;
			break;
		case 'q':
			a->o.quiet = 1;
			break;
		case 'a':
			a->all = 1;
			break;
		case 'p': {
			char *p = optarg, *end;
			do {
				long pid;
				errno = 0;
				pid = strtol(p, &end, 10);
				if (end == p || errno || pid <= 0 || pid > 0x3fffffff ||
				    (*end && *end != ',')) {
					fprintf(stderr, "%s: bad process id list '%s' "
						"(e.g. -p 1234 or -p 1234,5678)\n", prog, optarg);
					return 2;
				}
				if (a->npids == sizeof(a->pids) / sizeof(a->pids[0])) {
					fprintf(stderr, "%s: too many process ids\n", prog);
					return 2;
				}
				a->pids[a->npids++] = (pid_t)pid;
				p = end + 1;
			} while (*end == ',');
			break;
		}
		case OPT_SOURCE:
			if (strcmp(optarg, "dt") != 0 && strcmp(optarg, "perf") != 0) {
				fprintf(stderr, "%s: unknown source '%s' (dt or perf)\n", prog, optarg);
				return 2;
			}
			a->o.source = optarg;
			break;
		case OPT_FLUSH:
			if (dtu_parse_duration(optarg, &v) < 0 || v < 10000000ULL) {
				fprintf(stderr, "%s: bad flush interval '%s' (at least 10ms, "
					"e.g. 500ms, 2s)\n", prog, optarg);
				return 2;
			}
			a->o.flush_ns = v;
			break;
		case OPT_SYNC:
			a->o.sync = 1;
			break;
		case OPT_USTACKS:
			if (strcmp(optarg, "fp") == 0)
				a->o.ustack_mode = DTSRC_USTACK_FP;
			else if (strcmp(optarg, "dwarf") == 0)
				a->o.ustack_mode = DTSRC_USTACK_DWARF;
			else if (strcmp(optarg, "auto") == 0)
				a->o.ustack_mode = DTSRC_USTACK_AUTO;
			else {
				fprintf(stderr, "%s: bad --user-stacks '%s' (fp, dwarf or auto)\n", prog,
					optarg);
				return 2;
			}
			break;
		case OPT_USTACK_SIZE:
			if (dtu_parse_size(optarg, &v) < 0 || v < 1024 || v > 61440) {
				fprintf(stderr, "%s: bad --user-stack-size '%s': 1k to 60k "
					"(e.g. 16k)\n", prog, optarg);
				return 2;
			}
			a->o.ustack_size = (uint32_t)(v & ~7ULL);
			break;
		case OPT_FLIGHT:
			if (dtu_parse_size(optarg, &v) < 0 || v < DT_BUFSZ_MIN || v > DT_BUFSZ_MAX ||
			    (v & (v - 1)) != 0) {
				fprintf(stderr, "%s: bad flight ring size '%s': a power of two from 8k "
					"to 64M\n", prog, optarg);
				return 2;
			}
			a->o.flight = (uint32_t)v;
			break;
		case OPT_TRIGGER:
			if (a->ntriggers == sizeof(a->triggers) / sizeof(a->triggers[0])) {
				fprintf(stderr, "%s: too many --trigger options\n", prog);
				return 2;
			}
			a->triggers[a->ntriggers++] = optarg;
			break;
		case OPT_TRIGGER_FILTER:
			a->o.trigger_filter = optarg;
			break;
		case OPT_OFFCPU:
			a->o.offcpu = 1;
			break;
		case OPT_NO_SRCLINE:
			a->o.no_srcline = 1;
			break;
		case OPT_DUMP_GAP:
			if (dtu_parse_duration(optarg, &v) < 0 || v == 0) {
				fprintf(stderr, "%s: bad --dump-interval '%s' (e.g. 5s, 500ms, 1m)\n",
					prog, optarg);
				return 2;
			}
			a->o.dump_gap_ns = v;
			break;
		case OPT_MAX_DUMPS: {
			char *end;
			unsigned long n;
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (end == optarg || *end || errno || n == 0 || n > 100000 || optarg[0] == '-') {
				fprintf(stderr, "%s: bad --max-dumps '%s': a count from 1 to 100000\n",
					prog, optarg);
				return 2;
			}
			a->o.max_dumps = (uint32_t)n;
			break;
		}
		case OPT_COMM:
			if (optarg[0] == '\0' || strlen(optarg) >= DT_COMMLEN) {
				fprintf(stderr, "%s: bad --comm '%s': a command name is 1 to %d "
					"bytes (the kernel keeps no more)\n", prog, optarg, DT_COMMLEN - 1);
				return 2;
			}
			a->o.comm = optarg;
			break;
		case OPT_CGROUP: {
			char err[512];
			int fd = dtu_open_cgroup(optarg, err, sizeof(err));
			if (fd < 0) {
				fprintf(stderr, "%s: %s\n", prog, err);
				return 2;
			}
			close(fd);	/* reopened when recording starts */
			a->o.cgroup = optarg;
			break;
		}
		case 'h':
			return a->help = 1, 0;
		case OPT_VERSION:
			return a->version = 1, 0;
		case '?':
			if (optopt && strchr("oedb", optopt))
				fprintf(stderr, "%s: -%c needs an argument\n", prog, optopt);
			else if (optopt)
				fprintf(stderr, "%s: unknown option -%c\n", prog, optopt);
			else
				fprintf(stderr, "%s: unknown option %s\n", prog, argv[optind - 1]);
			return a->print_usage = 1, 2;
		default:
			return a->print_usage = 1, 2;
		}
	}

	a->optind = optind;
	return -1;
}

int dtrec_args_check(struct dtrec_args *a, int argc, char **argv, const char *prog)
{
	if (a->o.trigger_filter && !a->ntriggers) {
		fprintf(stderr, "%s: --trigger-filter needs --trigger\n", prog);
		return 2;
	}
	if (a->ntriggers && !a->o.flight) {
		fprintf(stderr, "%s: --trigger needs --flight\n", prog);
		return 2;
	}
	if ((a->o.dump_gap_ns || a->o.max_dumps) && !a->o.flight) {
		fprintf(stderr, "%s: --dump-interval and --max-dumps need --flight\n", prog);
		return 2;
	}
	if (a->o.flight && a->o.bufsize) {
		fprintf(stderr, "%s: --flight SIZE is the ring size: leave out -b\n", prog);
		return 2;
	}
	if (a->optind < argc)
		a->o.argv = argv + a->optind;
	if ((a->o.argv != NULL) + (a->npids != 0) + a->all > 1) {
		fprintf(stderr, "%s: -a, -p and a COMMAND each choose what to record: "
			"give one of them\n", prog);
		return 2;
	}
	a->o.pids = a->npids ? a->pids : NULL;
	a->o.npids = a->npids;
	return 0;
}
