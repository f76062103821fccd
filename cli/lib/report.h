/*
 * report.h - dtreport's subcommands, in libdtcli so dtsh runs the very same
 * code.  Each takes argv after the
 * subcommand word (argv[0] is the subcommand) and returns the exit status;
 * none calls exit(), and each resets getopt (optind = 0) before parsing.
 */
#ifndef DTREPORT_REPORT_H
#define DTREPORT_REPORT_H

int cmd_stats(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
