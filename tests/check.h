/*
 * check.h - the one PASS/FAIL line writer of the C tests, as tests/lib.sh's
 * pass and fail are the shell harnesses': "PASS NAME" or "FAIL NAME: WHY",
 * one line per assertion (doc/DESIGN.md, Tests), so that run-suite.sh and
 * summarize.sh read every test alike.
 *
 * A test that names its assertions under a common prefix ("util.",
 * "proctab/") defines CHECK_PREFIX before including this, or sets
 * check_prefix when it is known only at run time ("tsan.").  main returns
 * check_status(): non-zero once any assertion failed, so the suite fails
 * even if a FAIL line were lost.
 */
#ifndef DT_TESTS_CHECK_H
#define DT_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

#ifndef CHECK_PREFIX
#define CHECK_PREFIX ""
#endif

static unsigned check_nfail;
__attribute__((unused))
static const char *check_prefix = CHECK_PREFIX;

/* PASS name when ok, else FAIL name: the formatted reason. */
__attribute__((format(printf, 3, 4), unused))
static void checkf(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s%s\n", check_prefix, name);
	} else {
		check_nfail++;
		printf("FAIL %s%s: ", check_prefix, name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	/* a crash after it must not lose the line */
	fflush(stdout);
}

/* The same with a reason that is text, not a format. */
__attribute__((unused))
static void check(const char *name, int ok, const char *why)
{
	checkf(name, ok, "%s", why);
}

/* main's exit status. */
__attribute__((unused))
static int check_status(void)
{
	return check_nfail != 0;
}

#endif
