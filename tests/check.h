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
 * even if a FAIL line were lost.  Threads may check at once (ring_test's
 * producers): the count is atomic and a line is written under stdout's
 * lock, so two FAIL lines never interleave.
 */
#ifndef DT_TESTS_CHECK_H
#define DT_TESTS_CHECK_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#ifndef CHECK_PREFIX
#define CHECK_PREFIX ""
#endif

static atomic_uint check_nfail;
__attribute__((unused))
static const char *check_prefix = CHECK_PREFIX;

/* PASS name when ok, else FAIL name: the formatted reason; returns ok. */
__attribute__((format(printf, 3, 4), unused))
static int checkf(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	if (ok) {
		printf("PASS %s%s\n", check_prefix, name);
	} else {
		atomic_fetch_add(&check_nfail, 1);
		printf("FAIL %s%s: ", check_prefix, name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	/* a crash after it must not lose the line */
	fflush(stdout);
	funlockfile(stdout);
	return ok != 0;
}

/* The same with a reason that is text, not a format. */
__attribute__((unused))
static int check(const char *name, int ok, const char *why)
{
	return checkf(name, ok, "%s", why);
}

/* main's exit status. */
__attribute__((unused))
static int check_status(void)
{
	return atomic_load(&check_nfail) != 0;
}

#endif
