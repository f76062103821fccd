/*
 * fmt_harness.h - what fmt_test and fmt_robust (suite "format") share:
 * result lines (tests/check.h's, in the argument order these tests were
 * written in), scratch paths under the suite's TMPDIR, whole-file reads
 * and writes.  Header only; each program is one file.
 */
#ifndef FMT_HARNESS_H
#define FMT_HARNESS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"

static char tmpdir[2048];		/* the suite's scratch directory (argv) */

/* PASS name, or FAIL name: the formatted reason (check_prefix before the
 * name: "tsan." for the TSan run) */
#define result(ok, name, ...)	checkf(name, ok, __VA_ARGS__)

/* tmpdir/name; four buffers in turn, so a call may take two or three. */
static inline char *tpath(const char *name)
{
	static char buf[4][4096];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

/* The whole file, malloc'd with 8 KiB to spare (tests append to it). */
static inline uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = n >= 0 ? malloc((size_t)n + 8192) : NULL;
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = n >= 0 ? (size_t)n : 0;
	return p;
}

static inline int spit(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int rc = fwrite(p, 1, n, f) == n ? 0 : -1;
	return fclose(f) || rc ? -1 : 0;
}

#endif /* FMT_HARNESS_H */
