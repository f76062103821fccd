/*
 * dtsql_schema.c - the SQL tables' names and columns, and their listing
 * for .tables/.schema and `dtreport sql --schema`.  See dtsql_int.h.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dtsql.h"
#include "dtsql_int.h"

/* ", ts INTEGER, cpu INTEGER, ...": the leading ", " is skipped */
static const char events_cols[] = ""
#define DTSQL_EVCOL(id, name, type, cols, pqt, pqopt) ", " #name " " #type
#include "dtsql_events.def"
#undef DTSQL_EVCOL
	;

const struct dtsql_tabdef dtsql_tab[T_NTABLES] = {
	[T_EVENTS] = { "events", events_cols + 2, -1 },
	[T_PROBES] = { "probes",
		"id INTEGER, name TEXT, provider TEXT, function TEXT,"
		" probe TEXT, flags INTEGER, is_return INTEGER, nargs INTEGER,"
		" args TEXT", 0 },
	[T_PROBE_ARGS] = { "probe_args",
		"probe INTEGER, idx INTEGER, name TEXT, type TEXT,"
		" slot INTEGER, nslots INTEGER", 0 },
	[T_STACKS] = { "stacks",
		"id INTEGER, kernel INTEGER, depth INTEGER, truncated INTEGER", 0 },
	[T_FRAMES] = { "frames",
		"stack_id INTEGER, depth INTEGER, pc INTEGER, kernel INTEGER,"
		" name TEXT, origin TEXT, raw_name TEXT, dso TEXT, file TEXT,"
		" line INTEGER, inlined TEXT", 0 },
	[T_PROCESSES] = { "processes",
		"pid INTEGER, ppid INTEGER, comm TEXT, exe TEXT, ts INTEGER,"
		" nmaps INTEGER", 0 },
	[T_MAPS] = { "maps",
		"pid INTEGER, ts INTEGER, start INTEGER, \"end\" INTEGER,"
		" offset INTEGER, prot INTEGER, file INTEGER, name TEXT, build_id TEXT", 0 },
	[T_COUNTERS] = { "counters",
		"snapshot INTEGER, ts INTEGER, cpu INTEGER, produced INTEGER,"
		" read INTEGER, dropped INTEGER, skipped INTEGER,"
		" recursive INTEGER, nested INTEGER", 0 },
	[T_CAPTURE] = { "capture",
		"kernel TEXT, hostname TEXT, ncpus INTEGER, start_ns INTEGER,"
		" clock_mono_ns INTEGER, clock_real_ns INTEGER, command TEXT,"
		" nevents INTEGER, warning TEXT, source TEXT", -1 },
};


const char *const *dtsql_tables(void)
{
	static const char *names[T_NTABLES + 3];

	for (int k = 0; k < T_NTABLES; k++)
		names[k] = dtsql_tab[k].name;
	for (int k = 0; dtsql_derived_names[k]; k++)
		names[T_NTABLES + k] = dtsql_derived_names[k];
	return names;
}

int dtsql_schema(FILE *out, const char *name)
{
	int found = 0;

	for (int k = 0; k < T_NTABLES + 2; k++) {
		const char *tn = k < T_NTABLES ? dtsql_tab[k].name : dtsql_derived_names[k - T_NTABLES];
		const char *cols = k < T_NTABLES ? dtsql_tab[k].cols : dtsql_derived_cols(k - T_NTABLES);
		if (name && strcasecmp(name, tn))
			continue;
		found++;
		if (out == NULL)
			continue;
		/* one column a line: the list is what people read this for */
		fprintf(out, "CREATE TABLE %s(\n  ", tn);
		for (const char *c = cols; *c; c++) {
			if (*c == ',') {
				fputs(",\n  ", out);
				c += c[1] == ' ';
			} else {
				fputc(*c, out);
			}
		}
		fputs("\n);\n", out);
	}
	return found ? 0 : -1;
}

