/*
 * dtsh - interactive shell over dt: record from /dev/dt and analyze
 * captures without leaving it.  libedit on a terminal; plain line reading
 * (no prompt) for scripts on standard input or -c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <histedit.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "dtsh.h"
#include "report.h"
#include "util.h"

volatile sig_atomic_t dtsh_interrupted;

static void
on_sigint(int sig)
{
	(void)sig;
	dtsh_interrupted = 1;
	dtsh_interrupt_hook();
}

static void
usage(FILE *out, int status)
{
	fprintf(out, "usage: dtsh [--partial] [-c COMMANDS]... [FILE]\n"
		"       dtsh --version\n");
	if (out == stdout)
		fprintf(out,
		    "  Explore probes, record and query, on /dev/dt (live) or on a\n"
		    "  capture FILE (offline).\n"
		    "  -c COMMANDS  run COMMANDS (separated by ';') and exit; several -c\n"
		    "               run in order, until one says quit\n"
		    "  --partial    open FILE even if it was cut short (else exit 3)\n"
		    "  Commands are also read from standard input when it is not a\n"
		    "  terminal; 'help' lists them.  An SQL statement runs on until\n"
		    "  its ';' (or a line that starts a new command).  See dtsh(1).\n");
	/* --help into a full disk or a closed pipe is an error, as any output */
	if (out == stdout) {
		char err[512];
		if (dtu_stdout_check(err, sizeof(err)) < 0) {
			fprintf(stderr, "dtsh: %s\n", err);
			exit(1);
		}
	}
	exit(status);
}

static struct dtsh sh;
static char prompt_buf[PATH_MAX + 16];
static int continuing;	/* the prompt of an SQL statement's next line */

/* The first word of s (up to len bytes of it) in word. */
static void
first_word(const char *s, char *word, size_t len)
{
	s += strspn(s, " \t\n");
	size_t wl = strcspn(s, " \t\n;");
	snprintf(word, len, "%.*s", (int)(wl < len - 1 ? wl : len - 1), s);
}

/*
 * Does next continue the SQL statement in pending?  Yes while the
 * statement is incomplete (sqlite3_complete: no closing ';' outside
 * quotes, comments and triggers), unless next starts a command of its own:
 * scripts written a line per query keep working without ';'.
 */
static int
continues(const char *pending, const char *next)
{
	char w[32];

	first_word(pending, w, sizeof(w));
	if (!dtsh_is_sql_word(w) && strcmp(w, "sql") != 0)
		return 0;
	if (sqlite3_complete(pending))
		return 0;
	if (next == NULL)
		return 1;
	first_word(next, w, sizeof(w));
	return !(dtsh_is_sql_word(w) || dtsh_find_cmd(w) || w[0] == '.');
}

/* pending + "\n" + line, in a new buffer (pending freed); NULL on ENOMEM. */
static char *
join(char *pending, const char *line)
{
	char *j = NULL;

	if (asprintf(&j, "%s\n%s", pending, line) < 0)
		j = NULL;
	free(pending);
	return j;
}

static char *
prompt(EditLine *el)
{
	(void)el;
	if (continuing) {
		snprintf(prompt_buf, sizeof(prompt_buf), "   ...> ");
	} else if (sh.cap_path) {
		const char *b = strrchr(sh.cap_path, '/');
		if (sh.ncaps > 1)
			snprintf(prompt_buf, sizeof(prompt_buf), "dt %s+%d> ",
				 b ? b + 1 : sh.cap_path, sh.ncaps - 1);
		else
			snprintf(prompt_buf, sizeof(prompt_buf), "dt %s> ", b ? b + 1 : sh.cap_path);
	} else {
		snprintf(prompt_buf, sizeof(prompt_buf), "dt live> ");
	}
	return prompt_buf;
}

static char *
history_path(void)
{
	const char *e = getenv("DTSH_HISTORY"), *home = getenv("HOME");
	char *p = NULL;

	if (e && *e)
		return strdup(e);
	if (home == NULL || *home == '\0')
		return NULL;
	if (asprintf(&p, "%s/.dtsh_history", home) < 0)
		return NULL;
	return p;
}

/*
 * The history file is opened here, never by libedit's H_LOAD/H_SAVE by
 * name: those follow a symbolic link and chmod whatever they find to 0600
 * (as root, a link in a home directory would retarget both).  A link, a
 * FIFO, a device or a file of another user is not touched, and dtsh says
 * once why it keeps no history.  -1 (and *hpath freed and NULL) on refusal.
 */
static int
history_fd(char **hpath, int create)
{
	char err[512];
	struct stat st;
	int fd;

	errno = 0;
	if (create) {
		fd = open(*hpath, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
			  O_NOCTTY, 0600);
		if (fd < 0)
			snprintf(err, sizeof(err), "%s: %s", *hpath, errno == ELOOP ?
				 "a symbolic link (not followed)" : errno == ENXIO ?
				 "a FIFO, not a regular file" : strerror(errno));
	} else {
		fd = dtu_open_regular(*hpath, 1, err, sizeof(err));
	}
	if (fd < 0 && errno == ENOENT)
		return -1;	/* nothing yet: the first save creates it */
	if (fd < 0)
		;
	else if (fstat(fd, &st) != 0)
		snprintf(err, sizeof(err), "%s: %s", *hpath, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(err, sizeof(err), "%s: not a regular file", *hpath);
	else if (st.st_uid != geteuid())
		snprintf(err, sizeof(err), "%s: owned by uid %u, not by this user", *hpath,
			 (unsigned)st.st_uid);
	else
		return fd;
	fprintf(stderr, "dtsh: history file %s; history is not kept\n", err);
	if (fd >= 0)
		close(fd);
	free(*hpath);
	*hpath = NULL;
	return -1;
}

static void
history_load(History *hist, char **hpath)
{
	HistEvent ev;
	char via[64];
	int fd = history_fd(hpath, 0);

	if (fd < 0)
		return;
	/* libedit loads by name only: the name of the descriptor checked */
	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	history(hist, &ev, H_LOAD, via);
	close(fd);
}

static void
history_save(History *hist, char **hpath)
{
	HistEvent ev;
	char buf[8192];
	size_t n;
	int fd = history_fd(hpath, 1), bad = 0;
	/* H_SAVE_FP chmods its file: let it be an anonymous one, then copy */
	FILE *t = fd >= 0 ? tmpfile() : NULL;

	if (t == NULL || history(hist, &ev, H_SAVE_FP, t) < 0 || fflush(t) != 0 ||
	    fseek(t, 0, SEEK_SET) != 0 || ftruncate(fd, 0) != 0)
		bad = 1;
	while (!bad && (n = fread(buf, 1, sizeof(buf), t)) > 0)
		if (write(fd, buf, n) != (ssize_t)n)
			bad = 1;
	if (t)
		fclose(t);
	if (fd >= 0)
		close(fd);
	(void)bad;	/* a history that could not be saved costs no command */
}

/*
 * One history entry per statement, however many lines it took (an SQL
 * statement continued over lines comes back whole with the up arrow, its
 * lines joined by spaces), saved at once so a killed shell keeps it too.
 */
static void
remember(History *hist, char **hpath, const char *stmt)
{
	HistEvent ev;
	char *one = strdup(stmt);

	if (one == NULL)
		return;
	for (char *c = one; *c; c++)
		if (*c == '\n')
			*c = ' ';
	history(hist, &ev, H_ENTER, one);
	if (*hpath)
		history_save(hist, hpath);
	free(one);
}

static int
interactive(void)
{
	HistEvent ev;
	History *hist = history_init();
	EditLine *el = el_init("dtsh", stdin, stdout, stderr);
	char *hpath = history_path();
	int quit = 0, failed = 0;

	if (hist == NULL || el == NULL) {
		fprintf(stderr, "dtsh: cannot initialize line editing\n");
		if (hist)
			history_end(hist);
		if (el)
			el_end(el);
		free(hpath);
		return 1;
	}
	history(hist, &ev, H_SETSIZE, 1000);
	history(hist, &ev, H_SETUNIQUE, 1);
	if (hpath)
		history_load(hist, &hpath);
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_PROMPT, prompt);
	el_set(el, EL_HIST, history, hist);
	dtsh_complete_setup(&sh, (struct editline *)el);
	el_source(el, NULL);

	char *pending = NULL;	/* an SQL statement awaiting its end */

	while (!quit) {
		int count = 0;
		const char *line;

		errno = 0;
		continuing = pending != NULL;
		line = el_gets(el, &count);
		if (line == NULL) {
			/* Ctrl-C during an incremental search (Ctrl-R) makes
			 * libedit give up the line with a count of 0, as at
			 * end of file: the flag tells them apart. */
			if (dtsh_interrupted || (count == -1 && errno == EINTR)) {
				/* Ctrl-C at the prompt discards the line (and the statement). */
				dtsh_interrupted = 0;
				free(pending);
				pending = NULL;
				fputc('\n', stdout);
				continue;
			}
			fputc('\n', stdout);
			if (pending) {
				/* Ctrl-D ends the statement: run what there is. */
				remember(hist, &hpath, pending);
				dtsh_run_line(&sh, pending, &failed);
				free(pending);
				pending = NULL;
			}
			break;
		}
		dtsh_interrupted = 0;
		if (!pending && line[strspn(line, " \t\n")] == '\0')
			continue;
		char *copy = strdup(line);
		if (copy == NULL)
			break;
		copy[strcspn(copy, "\n")] = '\0';
		if (pending && !continues(pending, copy)) {
			/* A new command: the unfinished statement runs as it is. */
			remember(hist, &hpath, pending);
			if (dtsh_run_line(&sh, pending, &failed) == DTSH_QUIT)
				quit = 1;
			free(pending);
			pending = NULL;
			if (quit) {
				free(copy);
				break;
			}
		}
		if (pending) {
			if ((pending = join(pending, copy)) == NULL) {
				free(copy);
				break;
			}
			free(copy);
		} else {
			pending = copy;
		}
		if (continues(pending, NULL))
			continue;
		remember(hist, &hpath, pending);
		if (dtsh_run_line(&sh, pending, &failed) == DTSH_QUIT)
			quit = 1;
		free(pending);
		pending = NULL;
		dtsh_interrupted = 0;
	}
	free(pending);
	if (hpath)
		history_save(hist, &hpath);
	el_end(el);
	history_end(hist);
	free(hpath);
	return 0;
}

static int
script(FILE *in)
{
	char *line = NULL, *pending = NULL;
	size_t cap = 0;
	int failed = 0, quit = 0, eof = 0;

	while (!quit) {
		eof = getline(&line, &cap, in) < 0;
		if (!eof)
			line[strcspn(line, "\n")] = '\0';
		if (pending && !eof && continues(pending, line)) {
			if ((pending = join(pending, line)) == NULL)
				break;
			continue;
		}
		/* pending is complete (or ends here): run it before the new line */
		if (pending) {
			quit = dtsh_run_line(&sh, pending, &failed) == DTSH_QUIT;
			free(pending);
			pending = NULL;
			if (dtsh_interrupted) {
				free(line);
				return 130;
			}
		}
		if (eof || quit)
			break;
		if ((pending = strdup(line)) == NULL)
			break;
		if (continues(pending, NULL))
			continue;
		quit = dtsh_run_line(&sh, pending, &failed) == DTSH_QUIT;
		free(pending);
		pending = NULL;
		/* An interrupt nothing consumed stops a script, as in sh. */
		if (dtsh_interrupted) {
			free(line);
			return 130;
		}
	}
	free(pending);
	free(line);
	return failed ? 1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		RPT_LONGOPT_PARTIAL,
		{ NULL, 0, NULL, 0 },
	};
	const char **cmds = NULL;
	int ncmds = 0;
	struct sigaction sa;
	int c, rc;

	rpt_shell = 1;	/* the report commands speak as dtsh */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': {
			const char **v = realloc(cmds, ((size_t)ncmds + 1) * sizeof(*cmds));
			if (v == NULL) {
				fprintf(stderr, "dtsh: out of memory\n");
				return 1;
			}
			cmds = v;
			cmds[ncmds++] = optarg;
			break;
		}
		case 'h':
			usage(stdout, 0);
			break;
		case 'V': {
			char err[512];
			printf("dtsh %s\n", dtu_version());
			if (dtu_stdout_check(err, sizeof(err)) < 0) {
				fprintf(stderr, "dtsh: %s\n", err);
				return 1;
			}
			return 0;
		}
		case RPT_OPT_PARTIAL:
			sh.partial = 1;
			break;
		case ':':
			fprintf(stderr, "dtsh: option %s needs a value\n", argv[optind - 1]);
			usage(stderr, 2);
			break;
		default:
			fprintf(stderr, "dtsh: unknown option %s\n", argv[optind - 1]);
			usage(stderr, 2);
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "dtsh: unexpected argument '%s' (dtsh opens one capture)\n",
			argv[optind + 1]);
		usage(stderr, 2);
	}

	/* flame writes its output here, in-process: SIGTERM, SIGHUP or
	 * SIGQUIT must not leave its temporary file behind (SIGINT is ours,
	 * just below: it stops the command, which removes the file). */
	dtu_out_cleanup_on_signals();
	/* No SA_RESTART: a blocking read must return so Ctrl-C is seen. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (optind < argc && (rc = dtsh_open_capture(&sh, argv[optind], sh.partial)) != 0) {
		dtsh_free(&sh);
		free(cmds);
		return rc;
	}
	if (cmds) {
		/* each -c in turn, as lines of a script: quit or Ctrl-C ends them */
		int failed = 0;
		for (int i = 0; i < ncmds && !dtsh_interrupted; i++)
			if (dtsh_run_line(&sh, cmds[i], &failed) == DTSH_QUIT)
				break;
		rc = failed ? 1 : 0;
	} else if (isatty(STDIN_FILENO)) {
		sh.interactive = 1;
		rc = interactive();
	} else {
		rc = script(stdin);
	}
	dtsh_free(&sh);
	free(cmds);
	if (fclose(stdout) != 0 && rc == 0) {
		perror("dtsh: writing standard output");
		rc = 1;
	}
	return rc;
}
