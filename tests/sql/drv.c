/*
 * drv - stand-in for dtreport while cli/dtreport/main.c does not exist:
 * dispatches "sql" and "export" to the very library functions dtreport
 * runs.  Installed as .../sqldrv/dtreport so messages carry that name.
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "sql") == 0)
		return cmd_sql(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	fprintf(stderr, "usage: dtreport sql|export ...\n");
	return 1;
}
