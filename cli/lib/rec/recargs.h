/*
 * recargs.h - dtrec's command line, parsed once for dtrec and for dtsh's
 * record: one set of options (-e, -o, -k, -u, -d, -b, -p, -a, --user-stacks,
 * --flight, ... and a COMMAND after them) with one set of messages.
 */
#ifndef DT_RECARGS_H
#define DT_RECARGS_H

#include <sys/types.h>

#include "record.h"

struct dtrec_args {
	struct dtrec_opts o;		/* what the options set (o.prog not) */
	const char	*probes[256];	/* -e, in order */
	size_t		nprobes;
	const char	*triggers[64];	/* --trigger */
	size_t		ntriggers;
	pid_t		pids[1024];	/* -p */
	size_t		npids;
	int		list, all;	/* -l, -a */
	int		verbose;	/* -v: -l lists each probe's fields */
	int		help, version;	/* -h, --version: the caller answers */
	int		print_usage;	/* with a usage error: show the usage */
	int		optind;		/* the first operand (COMMAND or -l's GLOB) */
};

/*
 * Parse argv (argv[0] the command's name; getopt is reset, so a shell can
 * parse line after line) into *a, zeroed first.  Messages go to stderr as
 * "PROG: ...".  -1 to go on; else the status to exit with (0 for -h and
 * --version, then a->help or a->version says which; 2 for a bad command
 * line, a->print_usage when the usage should follow).
 */
int dtrec_args_parse(struct dtrec_args *a, int argc, char **argv, const char *prog);

/*
 * The checks between options of a recording (--trigger-filter needs
 * --trigger, --trigger needs --flight, --flight leaves out -b; one of -a,
 * -p and COMMAND), messages as dtrec_args_parse's; on success a->o gets
 * the COMMAND (argv from a->optind) and the process ids.  0, or 2 (the
 * caller shows its usage).
 */
int dtrec_args_check(struct dtrec_args *a, int argc, char **argv, const char *prog);

#endif /* DT_RECARGS_H */
