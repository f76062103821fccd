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

int dtr_cmd_main(const struct dtr_cmd *cmd, void *st, int argc, char **argv)
{
	struct dtf_filter filt;
	int partial = 0, ret;

	dtf_init(&filt);
	if ((ret = cmd->parse(argc, argv, st, &filt, &partial)) != 0) {
		dtf_free(&filt);
		return ret < 0 ? 0 : ret;
	}
	if (argc - optind != 1) {
		if (argc - optind > 1)
			dtr_err(cmd->name, "unexpected argument '%s' (%s takes one capture)",
				argv[optind + 1], cmd->name);
		else
			dtr_err(cmd->name, "no capture given");
		cmd->usage(stderr);
		dtf_free(&filt);
		return DTR_EXIT_USAGE;
	}
	struct dtr_cap c = { NULL, NULL, argv[optind] };
	if ((c.r = dtr_open(cmd->name, c.path, partial, filt.salvage, &ret)) != NULL) {
		ret = cmd->run(&c, &filt, st, NULL);
		dtcap_reader_close(c.r);
	}
	dtf_free(&filt);
	return ret;
}

int dtr_cmd_on(const struct dtr_cmd *cmd, void *st, const struct dtr_cap *c, int argc,
	       char **argv, volatile sig_atomic_t *cancel)
{
	struct dtf_filter filt;
	int partial = 0, ret;

	dtf_init(&filt);
	if ((ret = cmd->parse(argc, argv, st, &filt, &partial)) == 0 &&
	    (cmd->words == NULL || (ret = cmd->words(argc, argv, st)) == 0) &&
	    (ret = dtr_shell_operands(cmd->name, argc, argv, filt.salvage, cmd->usage)) == 0)
		ret = cmd->run(c, &filt, st, cancel);
	dtf_free(&filt);
	return ret < 0 ? 0 : ret;
}
