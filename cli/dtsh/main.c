/*
 * dtsh - interactive shell over dt: record from /dev/dt and analyze
 * captures without leaving it.  libedit on a terminal; plain line reading
 * (no prompt) for scripts on standard input or -c.
 */
#include <errno.h>
#include <histedit.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtsh.h"

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
	fprintf(out, "usage: dtsh [-c COMMANDS] [FILE]\n");
	if (out == stdout)
		fprintf(out,
		    "  Explore probes, record and query, on /dev/dt (live) or on a\n"
		    "  capture FILE (offline).\n"
		    "  -c COMMANDS  run COMMANDS (separated by ';') and exit\n"
		    "  Commands are also read from standard input when it is not a\n"
		    "  terminal; 'help' lists them.  See dtsh(1).\n");
	exit(status);
}

static struct dtsh sh;
static char prompt_buf[PATH_MAX + 16];

static char *
prompt(EditLine *el)
{
	(void)el;
	if (sh.cap_path) {
		const char *b = strrchr(sh.cap_path, '/');
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
		history(hist, &ev, H_LOAD, hpath);
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_PROMPT, prompt);
	el_set(el, EL_HIST, history, hist);
	dtsh_complete_setup(&sh, (struct editline *)el);
	el_source(el, NULL);

	while (!quit) {
		int count = 0;
		const char *line;

		errno = 0;
		line = el_gets(el, &count);
		if (line == NULL) {
			if (count == -1 && (errno == EINTR || dtsh_interrupted)) {
				/* Ctrl-C at the prompt discards the line. */
				dtsh_interrupted = 0;
				fputc('\n', stdout);
				continue;
			}
			fputc('\n', stdout);
			break;
		}
		dtsh_interrupted = 0;
		if (line[strspn(line, " \t\n")] == '\0')
			continue;
		char *copy = strdup(line);
		if (copy == NULL)
			break;
		copy[strcspn(copy, "\n")] = '\0';
		history(hist, &ev, H_ENTER, copy);
		/* Saved at once so a killed shell keeps its history too. */
		if (hpath)
			history(hist, &ev, H_SAVE, hpath);
		if (dtsh_run_line(&sh, copy, &failed) == DTSH_QUIT)
			quit = 1;
		free(copy);
		dtsh_interrupted = 0;
	}
	if (hpath)
		history(hist, &ev, H_SAVE, hpath);
	el_end(el);
	history_end(hist);
	free(hpath);
	return 0;
}

static int
script(FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	int failed = 0;

	while (getline(&line, &cap, in) >= 0) {
		line[strcspn(line, "\n")] = '\0';
		if (dtsh_run_line(&sh, line, &failed) == DTSH_QUIT)
			break;
		/* An interrupt nothing consumed stops a script, as in sh. */
		if (dtsh_interrupted) {
			free(line);
			return 130;
		}
	}
	free(line);
	return failed ? 1 : 0;
}

int
main(int argc, char **argv)
{
	const char *cmds = NULL;
	struct sigaction sa;
	int c, rc;

	if (argc > 1 && strcmp(argv[1], "--help") == 0)
		usage(stdout, 0);
	while ((c = getopt(argc, argv, "c:h")) != -1) {
		switch (c) {
		case 'c':
			cmds = optarg;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (argc - optind > 1)
		usage(stderr, 2);

	/* No SA_RESTART: a blocking read must return so Ctrl-C is seen. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (optind < argc && dtsh_open_capture(&sh, argv[optind]) != 0) {
		dtsh_free(&sh);
		return 1;
	}
	if (cmds) {
		int failed = 0;
		dtsh_run_line(&sh, cmds, &failed);
		rc = failed ? 1 : 0;
	} else if (isatty(STDIN_FILENO)) {
		sh.interactive = 1;
		rc = interactive();
	} else {
		rc = script(stdin);
	}
	dtsh_free(&sh);
	return rc;
}
