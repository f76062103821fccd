/*
 * report_common.c - what every report command shares: who speaks in
 * messages, opening a capture (and refusing a cut one), exit statuses.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "util.h"

int rpt_shell;

const char *rpt_prog(void)
{
	return rpt_shell ? "dtsh" : "dtreport";
}

const char *rpt_reading(void)
{
	return rpt_shell ? "dtsh: reading" : "dtreport: reading";
}

void rpt_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", rpt_prog(), cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct dtcap_reader *rpt_open(const char *cmd, const char *path, int partial, int salvage,
			      int *status)
{
	struct dtcap_read_opts o = { salvage ? DTCAP_OPEN_SALVAGE : 0, 0 };
	char err[512];

	/* every command opens its captures here before it writes a byte:
	 * the one place `1<> cap.dtc` is refused for all of them */
	if (dtu_stdout_not_input(&path, 1, err, sizeof(err)) < 0) {
		rpt_err(cmd, "%s", err);
		*status = RPT_EXIT_ERROR;
		return NULL;
	}
	struct dtcap_reader *r = dtcap_open_opts(path, &o);

	if (r == NULL) {
		/* The library's message starts with the path already. */
		rpt_err(cmd, "%s", dtcap_open_error());
		*status = RPT_EXIT_ERROR;
		return NULL;
	}
	const char *w = dtcap_reader_warning(r);
	/*
	 * Only a cut loses events: a lost index or bytes after an intact
	 * trailer are told and read on (FORMAT.md), with status 0.
	 */
	if (w && (dtcap_reader_status(r) & DTCAP_ST_TRUNCATED) && !partial && !salvage) {
		/* The library's warning names the file and the offset. */
		rpt_err(cmd, "%s", w);
		rpt_err(cmd, "%s: incomplete capture (%llu events before the cut); "
			"--partial reads them", path, (unsigned long long)dtcap_nevents(r));
		dtcap_reader_close(r);
		*status = RPT_EXIT_PARTIAL;
		return NULL;
	}
	if (w)
		rpt_err(cmd, "warning: %s", w);
	return r;
}

void rpt_note_empty(const char *cmd, const char *path, unsigned long long matched,
		    int filtered)
{
	if (matched == 0 && filtered)
		rpt_err(cmd, "%s: no event matches the filters", path);
}

int rpt_shell_operands(const char *cmd, int argc, char **argv, int salvage,
		       void (*usage)(FILE *))
{
	if (argc > optind) {
		rpt_err(cmd, "unexpected argument '%s' (%s reads the open capture)", argv[optind],
			cmd);
		usage(stderr);
		return RPT_EXIT_USAGE;
	}
	if (salvage) {
		rpt_err(cmd, "--salvage: the capture is open already; it is an option of "
			"dtreport, which opens one");
		return RPT_EXIT_USAGE;
	}
	return 0;
}
