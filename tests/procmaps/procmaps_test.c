/*
 * procmaps_test.c - cli/lib/rec/procmaps.c: crafted /proc/PID/maps lines
 * (deleted files, spaces in names, anonymous memory, [vdso], a huge line,
 * malformed lines that must be refused with a message, never a crash),
 * the three users' filters, this process's own maps, the re-read limit,
 * then a mutation fuzz of maps text checking what the users rely on.
 * Prints PASS/FAIL lines (tests/check.h).
 */
#define CHECK_PREFIX "procmaps."
#include "../check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procmaps.h"
#include "../xorshift.h"

#include <errno.h>

static int
one(const char *line, struct dtpm_map *m, char *err, size_t errlen)
{
	err[0] = '\0';
	return dtpm_parse_line(line, m, err, errlen);
}

static void
test_lines(void)
{
	struct dtpm_map m;
	char err[256];
	int r;

	r = one("55d4a1c00000-55d4a1c21000 r-xp 00002000 fe:01 1048601"
		"                    /usr/bin/cat", &m, err, sizeof(err));
	checkf("file", r == 0 && m.start == 0x55d4a1c00000ULL && m.end == 0x55d4a1c21000ULL &&
	       m.offset == 0x2000 && m.prot == (PROT_READ | PROT_EXEC) &&
	       strcmp(m.name, "/usr/bin/cat") == 0, "got %s", r ? err : m.name);
	r = one("7f0000000000-7f0000001000 r-xp 00000000 00:1f 77 /tmp/x (deleted)", &m, err,
		sizeof(err));
	checkf("deleted-kept", r == 0 && strcmp(m.name, "/tmp/x (deleted)") == 0, "got %s",
	       r ? err : m.name);
	r = one("7f0000000000-7f0000001000 r-xp 00000000 00:1f 77    /tmp/a b  c ", &m, err,
		sizeof(err));
	checkf("spaces-in-name", r == 0 && strcmp(m.name, "/tmp/a b  c ") == 0, "got \"%s\"",
	       r ? err : m.name);
	r = one("7f0000000000-7f0000021000 rw-p 00000000 00:00 0", &m, err, sizeof(err));
	checkf("anonymous", r == 0 && m.name[0] == '\0' && m.prot == (PROT_READ | PROT_WRITE),
	       "got \"%s\"", r ? err : m.name);
	r = one("7f0000000000-7f0000021000 rw-s 00000000 00:00 0   ", &m, err, sizeof(err));
	checkf("anonymous-padded", r == 0 && m.name[0] == '\0', "got \"%s\"", r ? err : m.name);
	r = one("7ffd5c3f3000-7ffd5c3f5000 r-xp 00000000 00:00 0                          [vdso]",
		&m, err, sizeof(err));
	checkf("vdso", r == 0 && strcmp(m.name, "[vdso]") == 0, "got \"%s\"", r ? err : m.name);
	r = one("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]", &m, err,
		sizeof(err));
	checkf("top-of-64-bits", r == 0 && m.end == 0xffffffffff601000ULL && m.prot == PROT_EXEC,
	       "got \"%s\"", r ? err : m.name);

	/* a path near PATH_MAX and far beyond: no line buffer cuts it */
	{
		size_t nl = 100000;
		char *line = malloc(nl + 64);
		int ok;

		if (line == NULL)
			abort();
		int k = snprintf(line, 64, "400000-401000 r-xp 00000000 08:01 12 /");
		memset(line + k, 'a', nl);
		line[k + nl] = '\0';
		ok = one(line, &m, err, sizeof(err)) == 0 && strlen(m.name) == nl + 1;
		checkf("huge-line", ok, "%s", err);
		free(line);
	}

	static const struct { const char *name, *line, *what; } bad[] = {
		{ "empty", "", "start" },
		{ "blank", "   ", "start" },
		{ "no-dash", "400000 401000 r-xp 0 08:01 1 /x", "'-'" },
		{ "bad-start", "zz-401000 r-xp 0 08:01 1 /x", "start" },
		{ "bad-end", "400000-zz r-xp 0 08:01 1 /x", "end" },
		{ "end-before-start", "401000-400000 r-xp 0 08:01 1 /x", "end" },
		{ "empty-range", "400000-400000 r-xp 0 08:01 1 /x", "end" },
		{ "over-64-bits", "10000000000000000-10000000000000001 r-xp 0 08:01 1 /x", "start" },
		{ "bad-perms", "400000-401000 rwzp 0 08:01 1 /x", "permissions" },
		{ "short-perms", "400000-401000 r-x 0 08:01 1 /x", "permissions" },
		{ "long-perms", "400000-401000 r-xpq 0 08:01 1 /x", "permissions" },
		{ "bad-offset", "400000-401000 r-xp g 08:01 1 /x", "offset" },
		{ "no-device", "400000-401000 r-xp 0", "device" },
		{ "no-inode", "400000-401000 r-xp 0 08:01", "inode" },
		{ "no-inode-blank", "400000-401000 r-xp 0 08:01 ", "inode" },
		{ "binary", "\x01\x02\xff-\x80", "start" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[64];
		int r = one(bad[i].line, &m, err, sizeof(err));

		snprintf(name, sizeof(name), "malformed-%s", bad[i].name);
		checkf(name, r < 0 && strstr(err, bad[i].what) != NULL,
		       "returned %d, message \"%s\" (wanted one naming %s)", r, err, bad[i].what);
	}
}

struct seen {
	size_t	n;
	char	names[16][64];
	int	stop_at;	/* fn fails at this call (1-based); 0: never */
};

static int
collect(void *arg, const struct dtpm_map *m)
{
	struct seen *s = arg;

	if (s->n < 16)
		snprintf(s->names[s->n], sizeof(s->names[s->n]), "%s", m->name);
	s->n++;
	return s->stop_at && (int)s->n == s->stop_at ? -1 : 0;
}

static const char sample_text[] =
	"55d4a1c00000-55d4a1c02000 r--p 00000000 fe:01 1048601 /usr/bin/cat\n"
	"55d4a1c02000-55d4a1c07000 r-xp 00002000 fe:01 1048601 /usr/bin/cat\n"
	"55d4a2000000-55d4a2021000 rw-p 00000000 00:00 0       [heap]\n"
	"this line is not a mapping\n"
	"7f0000000000-7f0000010000 r-xp 00000000 00:00 0\n"
	"\n"
	"7f0000100000-7f0000110000 r-xp 00001000 00:1f 77 /tmp/lib x.so (deleted)\n"
	"7ffd5c3f1000-7ffd5c3f3000 r--p 00000000 00:00 0 [vvar]\n"
	"7ffd5c3f3000-7ffd5c3f5000 r-xp 00000000 00:00 0 [vdso]\n"
	"401000-400000 r-xp 0 08:01 1 /backwards\n"
	"7ffd5c400000-7ffd5c421000 rw-p 00000000 00:00 0 [stack]";	/* no final newline */

static void
test_filters(void)
{
	static const struct { const char *name; unsigned filter; size_t n; const char *first, *last; } f[] = {
		/* record.c's snapshots: every mapping */
		{ "filter-all", 0, 8, "/usr/bin/cat", "[stack]" },
		/* proctab.c: executable ones, anonymous JIT code included */
		{ "filter-exec", DTPM_EXEC, 4, "/usr/bin/cat", "[vdso]" },
		/* unwind.c: executable files and the vDSO */
		{ "filter-exec-files", DTPM_EXEC | DTPM_FILES, 3, "/usr/bin/cat", "[vdso]" },
		{ "filter-files", DTPM_FILES, 4, "/usr/bin/cat", "[vdso]" },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		char *text = strdup(sample_text), err[256] = "";
		struct seen s = { 0 };
		long bad;

		if (text == NULL)
			abort();
		bad = dtpm_parse(text, f[i].filter, collect, &s, err, sizeof(err));
		checkf(f[i].name, bad == 2 && s.n == f[i].n && strcmp(s.names[0], f[i].first) == 0 &&
		       strcmp(s.names[s.n - 1 < 16 ? s.n - 1 : 15], f[i].last) == 0,
		       "%ld malformed, %zu maps, first \"%s\"", bad, s.n, s.names[0]);
		if (i == 0) {
			/* the message names the first bad line by its number */
			checkf("malformed-line-number", strstr(err, "line 4") != NULL, "\"%s\"", err);
			checkf("deleted-name-with-space", strcmp(s.names[4], "/tmp/lib x.so (deleted)") == 0,
			       "\"%s\"", s.names[4]);
		}
		free(text);
	}
	{
		char *text = strdup(sample_text);
		struct seen s = { .stop_at = 2 };

		if (text == NULL)
			abort();
		checkf("fn-stops", dtpm_parse(text, 0, collect, &s, NULL, 0) == -1 && s.n == 2,
		       "%zu calls", s.n);
		free(text);
	}
	{
		char text[] = "", err[64] = "";
		struct seen s = { 0 };

		check("empty-text", dtpm_parse(text, 0, collect, &s, err, sizeof(err)) == 0 && s.n == 0,
		      "empty text gave maps or errors");
	}
}

struct own {
	const char *exe;
	int found, nonfile;
};

static int
own_map(void *arg, const struct dtpm_map *m)
{
	struct own *o = arg;

	if (strcmp(m->name, o->exe) == 0)
		o->found = 1;
	if (m->name[0] != '/' && strcmp(m->name, "[vdso]") != 0)
		o->nonfile = 1;
	return 0;
}

static void
test_own(void)
{
	char exe[4096], err[256] = "";
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *maps = dtpm_read((uint32_t)getpid());
	struct own o = { exe, 0, 0 };
	long bad;

	exe[l > 0 ? l : 0] = '\0';
	if (maps == NULL) {
		check("own-maps", 0, "could not read /proc/self's maps");
		return;
	}
	bad = dtpm_parse(maps, DTPM_EXEC | DTPM_FILES, own_map, &o, err, sizeof(err));
	checkf("own-maps", bad == 0 && o.found && !o.nonfile,
	       "%ld malformed (%s), own executable %sfound, %s", bad, err, o.found ? "" : "not ",
	       o.nonfile ? "a non-file passed the filter" : "filter held");
	free(maps);
	errno = 0;
	check("gone-process", dtpm_read(0x7ffffff0u) == NULL && errno != 0,
	      "the maps of a pid that cannot exist were read");
}

static void
test_reread(void)
{
	uint32_t done = 0;
	int allowed = 0;

	while (dtpm_reread_left(done) && done < 1000) {
		allowed++;
		done++;
	}
	checkf("reread-limit", allowed == DTPM_MAX_REREADS && DTPM_MAX_REREADS == 16,
	       "%d re-reads allowed", allowed);
}

/* ---------------------------------------------------------------- fuzz */

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static const char *const pieces[] = {
	"-", " ", "\n", "\t", "0", "f", "ffffffffffffffff", "10000000000000000", "r-xp", "rwxs",
	"----", "(deleted)", "[vdso]", "/", "00:00", " 0 ", "\xff", "\x01",
};

struct check_fuzz {
	const char *lo, *hi;	/* the text's bounds */
	unsigned filter;
	size_t n, bad;
};

static int
fuzz_map(void *arg, const struct dtpm_map *m)
{
	struct check_fuzz *c = arg;

	c->n++;
	if (m->start >= m->end || m->name < c->lo || m->name >= c->hi ||
	    memchr(m->name, '\n', strlen(m->name)) != NULL ||
	    ((c->filter & DTPM_EXEC) && !(m->prot & PROT_EXEC)) ||
	    ((c->filter & DTPM_FILES) && m->name[0] != '/' && strcmp(m->name, "[vdso]") != 0))
		c->bad++;
	return 0;
}

static void
test_fuzz(void)
{
	char *seed = dtpm_read((uint32_t)getpid());
	size_t seedlen, cap, bad = 0, runs = 20000, maps = 0;

	if (seed == NULL) {
		check("fuzz", 0, "no seed: could not read /proc/self's maps");
		return;
	}
	/* this process's maps, then the crafted ones */
	seedlen = strlen(seed);
	cap = seedlen + sizeof(sample_text) + 4096;
	char *base = malloc(cap), *buf = malloc(cap);
	if (base == NULL || buf == NULL)
		abort();
	snprintf(base, cap, "%s%s", seed, sample_text);
	free(seed);
	for (size_t r = 0; r < runs; r++) {
		size_t len = strlen(base), nmut = 1 + xorshift64(&rng) % 8;
		struct check_fuzz c;

		memcpy(buf, base, len + 1);
		for (size_t k = 0; k < nmut && len > 0; k++) {
			size_t at = xorshift64(&rng) % len;

			switch (xorshift64(&rng) % 4) {
			case 0:	/* a byte flipped */
				buf[at] = (char)(1 + xorshift64(&rng) % 255);
				break;
			case 1:	/* cut */
				buf[at] = '\0';
				len = at;
				break;
			case 2: {	/* a piece written over */
				const char *p = pieces[xorshift64(&rng) % (sizeof(pieces) / sizeof(pieces[0]))];
				size_t pl = strlen(p);
				if (at + pl <= len)
					memcpy(buf + at, p, pl);
				break;
			}
			default:	/* a piece inserted */
				if (len + 32 < cap) {
					const char *p = pieces[xorshift64(&rng) % (sizeof(pieces) / sizeof(pieces[0]))];
					size_t pl = strlen(p);
					memmove(buf + at + pl, buf + at, len - at + 1);
					memcpy(buf + at, p, pl);
					len += pl;
				}
			}
		}
		/* the parser splits what it is given: a copy of exactly this size
		 * lets ASan see any read past it */
		char *t = malloc(len + 1);
		if (t == NULL)
			abort();
		memcpy(t, buf, len + 1);
		t[len] = '\0';
		c.lo = t;
		c.hi = t + len + 1;
		c.filter = (unsigned)(r % 4);
		c.n = c.bad = 0;
		if (dtpm_parse(t, c.filter, fuzz_map, &c, NULL, 0) < 0)
			c.bad++;
		bad += c.bad;
		maps += c.n;
		free(t);
	}
	printf("# %zu runs, %zu maps delivered\n", runs, maps);
	checkf("fuzz", bad == 0 && maps > runs, "%zu maps broke a rule, %zu delivered in all", bad, maps);
	free(base);
	free(buf);
}

int
main(void)
{
	test_lines();
	test_filters();
	test_own();
	test_reread();
	test_fuzz();
	return check_status();
}
