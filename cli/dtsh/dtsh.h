/*
 * dtsh.h - state and internal interfaces of the interactive shell.
 *
 * dtsh owns only the interaction: parsing, completion, history, modes.
 * Recording, symbolization, flame graphs and SQL are the libdtcli code the
 * other tools run, called from here.
 */
#ifndef DTSH_H
#define DTSH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dtcap.h"

struct sqlite3;
struct dtp_dev;
struct dtsym;

/* A probe the next `record` enables, as the user wrote it. */
struct dtsh_enabled {
	char	*spec;
	int	stacks;
};

struct dtsh {
	int	interactive;	/* libedit on a terminal, with a prompt */
	/* Offline when a capture is open; live (/dev/dt) otherwise.  `open'
	 * of several captures (or a directory) opens each: cap and cap_path
	 * are the first (probes, completion), caps[0..ncaps) all of them
	 * (stats, flame, sql); ncaps is 1 for one capture. */
	char	*cap_path;
	struct dtcap_reader *cap;
	struct dtsym *sym;	/* the capture's symbols (SQL frames, flame, top), lazily */
	struct sqlite3 *db;	/* one handle per open capture, lazily */
	struct dtcap_reader **caps;	/* caps[0] == cap */
	char	**cap_paths;		/* cap_paths[0] == cap_path */
	struct dtsym **syms;		/* several: each one's, lazily */
	int	ncaps;
	struct dtp_dev *dev;	/* /dev/dt, read-only, opened on first use */
	struct dtsh_enabled *en;
	size_t	nen, encap;
	int	partial;	/* --partial: open captures that were cut short */
};

/* Set by SIGINT; each long operation polls it and clears it when done. */
extern volatile sig_atomic_t dtsh_interrupted;

/* ---- line.c: splitting and tokenizing */

/*
 * Split a line into commands at ';' outside quotes.  Returns the number of
 * commands; *out is a malloc'd array of malloc'd strings (trimmed, empty
 * ones dropped).  -1 with a message in err on an unterminated quote.
 */
int dtsh_split(const char *line, char ***out, char *err, size_t errlen);

/*
 * Tokenize one command: whitespace separates words, '...' and "..."
 * quote, backslash escapes outside single quotes.  Returns argc (argv is
 * NULL-terminated, free with dtsh_free_argv) or -1 with a message.
 * If partial is set, an unterminated quote is accepted (for completion).
 */
int dtsh_tokenize(const char *s, int partial, char ***argv, char *err, size_t errlen);
void dtsh_free_argv(char **argv);

/* Is the command (first word) one whose rest is raw SQL? */
int dtsh_is_sql_word(const char *word);

/* ---- cmds.c */

struct dtsh_cmd {
	const char *name;
	const char *usage;
	const char *help;
	int (*fn)(struct dtsh *sh, int argc, char **argv, const char *rest);
	/* What completes after the command word; see complete.c. */
	int	complete;
};

#define DTSH_C_NONE	0
#define DTSH_C_PROBE	1
#define DTSH_C_FILE	2
#define DTSH_C_SQL	3
#define DTSH_C_CMD	4
#define DTSH_C_TOP	5
#define DTSH_C_FLAME	6
#define DTSH_C_RECORD	7
#define DTSH_C_STATS	8
#define DTSH_C_TABLE	9

extern const struct dtsh_cmd dtsh_cmds[];
const struct dtsh_cmd *dtsh_find_cmd(const char *name);

/* Run one command (no ';' inside).  0 ok, non-zero failed, DTSH_QUIT. */
#define DTSH_QUIT	(-100)
int dtsh_run(struct dtsh *sh, const char *cmdline);
/* Run a whole line (commands separated by ';'); failures are counted. */
int dtsh_run_line(struct dtsh *sh, const char *line, int *failed);

/*
 * Open a capture (replacing the open one).  A capture cut short is refused
 * unless partial is set.  0, or the exit status (report.h RPT_EXIT_*) with
 * the message printed.
 */
int dtsh_open_capture(struct dtsh *sh, const char *path, int partial);
/* Several captures, or directories standing for their *.dtc files (see
 * captures.h), opened together in place of what was open; nothing changes
 * if any fails to open.  0, or the exit status after printing why. */
int dtsh_open_captures(struct dtsh *sh, char *const *args, int nargs, int partial);
void dtsh_close_capture(struct dtsh *sh);
void dtsh_free(struct dtsh *sh);

/* Probe names for completion: from the capture, else from the device. */
size_t dtsh_probe_names(struct dtsh *sh, char ***names);

/* The open capture's SQL handle (opened on first use), or NULL. */
struct sqlite3 *dtsh_sql_db(struct dtsh *sh);
/* Called from the SIGINT handler: stops a running query. */
void dtsh_interrupt_hook(void);

/* ---- complete.c */

struct editline;
void dtsh_complete_setup(struct dtsh *sh, struct editline *el);

#endif /* DTSH_H */
