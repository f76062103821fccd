/*
 * procmaps.c - /proc/PID/maps parsed once for every recording user; see
 * procmaps.h.
 */
#include "procmaps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

/* A hex number of at most 16 digits at *pp; the pointer moves past it. */
static int
hex(const char **pp, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	int n = 0;

	for (;; p++, n++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (n == 16)
			return -1;	/* more than 64 bits */
		x = x << 4 | d;
	}
	if (n == 0)
		return -1;
	*pp = p;
	*v = x;
	return 0;
}

/* A field of non-blank characters; the pointer moves past it. */
static int
field(const char **pp)
{
	const char *p = *pp;

	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (p == *pp)
		return -1;
	*pp = p;
	return 0;
}

static int
blanks(const char **pp)
{
	const char *p = *pp;

	while (*p == ' ' || *p == '\t')
		p++;
	if (p == *pp)
		return -1;
	*pp = p;
	return 0;
}

int
dtpm_parse_line(const char *line, struct dtpm_map *m, char *err, size_t errlen)
{
	const char *p = line, *what;

	memset(m, 0, sizeof(*m));
	what = "start address";
	if (hex(&p, &m->start) < 0)
		goto bad;
	what = "'-' after the start";
	if (*p++ != '-')
		goto bad;
	what = "end address";
	if (hex(&p, &m->end) < 0 || m->end <= m->start)
		goto bad;
	what = "permissions";
	if (blanks(&p) < 0 || (p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's') ||
	    (p[4] != ' ' && p[4] != '\t'))
		goto bad;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += 4;
	what = "offset";
	if (blanks(&p) < 0 || hex(&p, &m->offset) < 0)
		goto bad;
	what = "device";
	if (blanks(&p) < 0 || field(&p) < 0)
		goto bad;
	what = "inode";
	if (blanks(&p) < 0 || field(&p) < 0)
		goto bad;
	/* the name is the rest, spaces inside it included (the kernel pads
	 * before it, and escapes only newlines in it) */
	while (*p == ' ' || *p == '\t')
		p++;
	m->name = p;
	return 0;
bad:
	dtu_seterr(err, errlen, "bad %s in \"%.60s%s\"", what, line, strlen(line) > 60 ? "..." : "");
	return -1;
}

static int
passes(const struct dtpm_map *m, unsigned filter)
{
	if ((filter & DTPM_EXEC) && !(m->prot & PROT_EXEC))
		return 0;
	if ((filter & DTPM_FILES) && m->name[0] != '/' && strcmp(m->name, "[vdso]") != 0)
		return 0;
	return 1;
}

long
dtpm_parse(char *text, unsigned filter, dtpm_fn fn, void *arg, char *err, size_t errlen)
{
	char *line = text, *nl;
	long bad = 0;
	size_t no = 0;

	for (; line && *line; line = nl) {
		struct dtpm_map m;
		char why[160];

		no++;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = '\0';
		if (*line == '\0')
			continue;
		if (dtpm_parse_line(line, &m, why, sizeof(why)) < 0) {
			if (bad++ == 0)
				dtu_seterr(err, errlen, "maps line %zu: %s", no, why);
			continue;
		}
		if (passes(&m, filter) && fn(arg, &m) < 0)
			return -1;
	}
	return bad;
}

char *
dtpm_read(uint32_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	return dtu_read_file(path, NULL);
}

int
dtpm_reread_left(uint32_t done)
{
	return done < DTPM_MAX_REREADS;
}
