/*
 * cmd_run.c - the command-line skeleton of the engine's reports (cmd_run.h):
 * one place that says how many captures a command reads, how --salvage
 * and --partial reach the opening, and which status a --help or a usage
 * error leaves, for dtreport and dtsh alike.
 */
#include <getopt.h>
#include <stdio.h>

#include "cmd_run.h"
#include "report.h"

int rpt_cmd_main(const struct rpt_cmd *cmd, void *st, int argc, char **argv)
{
	struct flt_filter filt;
	int partial = 0, ret;

	flt_init(&filt);
	if ((ret = cmd->parse(argc, argv, st, &filt, &partial)) != 0) {
		flt_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	if (argc - optind != 1) {
		if (argc - optind > 1)
			rpt_err(cmd->name, "unexpected argument '%s' (%s takes one capture)",
				argv[optind + 1], cmd->name);
		else
			rpt_err(cmd->name, "no capture given");
		cmd->usage(stderr);
		flt_free(&filt);
		return RPT_EXIT_USAGE;
	}
	struct rpt_cap c = { NULL, NULL, argv[optind] };
	if ((c.r = rpt_open(cmd->name, c.path, partial, filt.salvage, &ret)) != NULL) {
		ret = cmd->run(&c, &filt, st, NULL);
		dtcap_reader_close(c.r);
	}
	flt_free(&filt);
	return ret;
}

int rpt_cmd_on(const struct rpt_cmd *cmd, void *st, const struct rpt_cap *c, int argc,
	       char **argv, volatile sig_atomic_t *cancel)
{
	struct flt_filter filt;
	int partial = 0, ret;

	flt_init(&filt);
	if ((ret = cmd->parse(argc, argv, st, &filt, &partial)) == 0 &&
	    (cmd->words == NULL || (ret = cmd->words(argc, argv, st)) == 0) &&
	    (ret = rpt_shell_operands(cmd->name, argc, argv, filt.salvage, cmd->usage)) == 0)
		ret = cmd->run(c, &filt, st, cancel);
	flt_free(&filt);
	return ret < 0 ? 0 : ret;
}
