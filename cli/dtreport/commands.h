/*
 * commands.h - dtreport's subcommands.  Each takes argv after the
 * subcommand word (argv[0] is the subcommand) and returns the exit status.
 */
#ifndef DTREPORT_COMMANDS_H
#define DTREPORT_COMMANDS_H

int cmd_stats(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
