/*
 * jitmap_test.c - the perf map reader of cli/lib/rec/jitmap.c on its
 * own: lines as JIT compilers write them, lines nobody should, random
 * damage (a small fuzz with fixed seeds), and the checks that keep an
 * attacker's /tmp file from being believed.  Runs as root (chown).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitdump.h"
#include "jitmap.h"
#include "../xorshift.h"

#include "../check.h"

static int parse(const char *t, struct dtcap_sym **s, size_t *n, char **names, size_t *bad)
{
	return jitmap_parse(t, strlen(t), s, n, names, bad);
}

/* Invariants of any parse: sorted distinct starts, sizes > 0, no wrap,
 * names non-empty single lines. */
static const char *invariants(const struct dtcap_sym *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!s[i].size)
			return "a symbol of size 0";
		if (s[i].addr + s[i].size < s[i].addr)
			return "a symbol wrapping around";
		if (!s[i].name || !s[i].name[0] || strchr(s[i].name, '\n'))
			return "an empty or multi-line name";
		if (i && s[i - 1].addr >= s[i].addr)
			return "starts not strictly increasing";
	}
	return NULL;
}

static void test_parse(void)
{
	struct dtcap_sym *s;
	size_t n, bad;
	char *names, why[256];

	/* V8's spelling (no 0x, names with spaces), the JVM's (0x), CRLF, tabs */
	const char *good =
		"7f0010002000 40 LazyCompile:*fib /tmp/fib.js:3\n"
		"\n"
		"0x7f0010001000 0x20 Interpreted:java.lang.String.hashCode()\r\n"
		"7f0010003000\t10\tstub  with  spaces \n"
		"7f0010004000 8 last-line-without-newline";
	int r = parse(good, &s, &n, &names, &bad);
	snprintf(why, sizeof(why), "r %d n %zu bad %zu first %s", r, n, bad,
		 n ? s[0].name : "-");
	check("parse-spellings",
	      r == 0 && n == 4 && bad == 0 && s[0].addr == 0x7f0010001000 && s[0].size == 0x20 &&
	      !strcmp(s[0].name, "Interpreted:java.lang.String.hashCode()") &&
	      !strcmp(s[1].name, "LazyCompile:*fib /tmp/fib.js:3") && s[1].size == 0x40 &&
	      !strcmp(s[2].name, "stub  with  spaces") &&
	      !strcmp(s[3].name, "last-line-without-newline"), why);
	free(s);
	free(names);

	/* each of these is one bad line, none may be taken */
	const char *bads[] = {
		"zz 10 name\n", "1000\n", "1000 10\n", "1000 10 \n", "1000 0 zero\n",
		"ffffffffffffff00 200 wraps\n", "10000000000000000 10 seventeen-digits\n",
		"1000 g name\n", "0x 10 nodigits\n", "1000x 10 glued\n", " 1000 10 leading-space\n",
	};
	for (size_t i = 0; i < sizeof(bads) / sizeof(*bads); i++) {
		char nm[64];
		r = parse(bads[i], &s, &n, &names, &bad);
		snprintf(nm, sizeof(nm), "parse-rejects-%zu", i);
		snprintf(why, sizeof(why), "'%.*s': r %d n %zu bad %zu", (int)strlen(bads[i]) - 1,
			 bads[i], r, n, bad);
		check(nm, r == 0 && n == 0 && bad == 1, why);
		free(s);
		free(names);
	}

	/* code recompiled in place: the later line names the region */
	r = parse("3000 10 old\n1000 10 other\n3000 20 new\n", &s, &n, &names, &bad);
	snprintf(why, sizeof(why), "n %zu, [1] %s", n, n > 1 ? s[1].name : "-");
	check("parse-later-line-wins",
	      r == 0 && n == 2 && s[0].addr == 0x1000 && !strcmp(s[1].name, "new") &&
	      s[1].size == 0x20, why);
	free(s);
	free(names);

	/* a NUL inside a line ends its name, it does not end the parse */
	const char nul[] = "1000 10 ab\0cd\n2000 10 next\n";
	r = jitmap_parse(nul, sizeof(nul) - 1, &s, &n, &names, &bad);
	check("parse-nul-in-line",
	      r == 0 && n == 2 && !strcmp(s[0].name, "ab") && !strcmp(s[1].name, "next"),
	      "not two symbols ab, next");
	free(s);
	free(names);
}

static void test_fuzz(void)
{
	const char *seed =
		"7f0010002000 40 LazyCompile:*fib /tmp/fib.js:3\n"
		"0x7f0010001000 0x20 Interpreted:x\r\n"
		"7f0010003000\t10\tstub\n";
	const char alphabet[] = "0123456789abcdefxX \t\r\n\0zG:*-";
	size_t sl = strlen(seed);
	uint64_t st = 0x9e3779b97f4a7c15ULL;
	char buf[512];
	const char *bad_inv = NULL;
	unsigned long runs = 0;

	for (int it = 0; it < 200000 && !bad_inv; it++, runs++) {
		size_t len = sl;
		memcpy(buf, seed, sl);
		int edits = 1 + (int)(xorshift64(&st) % 8);
		for (int e = 0; e < edits; e++) {
			size_t pos = (size_t)(xorshift64(&st) % (len + 1));
			char c = alphabet[xorshift64(&st) % (sizeof(alphabet) - 1)];
			switch (xorshift64(&st) % 3) {
			case 0:	/* replace */
				if (pos < len)
					buf[pos] = c;
				break;
			case 1:	/* insert */
				if (len < sizeof(buf) - 1) {
					memmove(buf + pos + 1, buf + pos, len - pos);
					buf[pos] = c;
					len++;
				}
				break;
			default:	/* delete */
				if (pos < len) {
					memmove(buf + pos, buf + pos + 1, len - pos - 1);
					len--;
				}
			}
		}
		/* exactly len bytes: ASan sees any read past them */
		char *exact = malloc(len ? len : 1);
		memcpy(exact, buf, len);
		struct dtcap_sym *s;
		size_t n, bad;
		char *names;
		if (jitmap_parse(exact, len, &s, &n, &names, &bad) == 0) {
			bad_inv = invariants(s, n);
			free(s);
			free(names);
		}
		free(exact);
	}
	printf("# fuzz: %lu inputs\n", runs);
	check("parse-fuzz-invariants", !bad_inv, bad_inv ? bad_inv : "");
}

static void test_read(const char *dir)
{
	char p[512], q[512], err[512], why[700];
	size_t len;
	char *t;

	snprintf(p, sizeof(p), "%s/perf-1.map", dir);
	FILE *f = fopen(p, "w");
	fputs("1000 10 whole\n2000 10 cut-off-by-a-writ", f);
	fclose(f);
	if (chown(p, 1000, 1000))
		perror("chown");
	err[0] = 0;
	t = jitmap_read_file(p, 1000, &len, err, sizeof(err));
	check("read-owner-partial-line", t && !strcmp(t, "1000 10 whole\n") && len == 14,
	      t ? t : err);
	free(t);

	err[0] = 0;
	t = jitmap_read_file(p, 2000, &len, err, sizeof(err));
	snprintf(why, sizeof(why), "read: %s; message: %s", t ? t : "(null)", err);
	check("read-refuses-other-owner", !t && strstr(err, "owned by uid 1000"), why);
	free(t);

	snprintf(q, sizeof(q), "%s/perf-2.map", dir);
	if (symlink(p, q))
		perror("symlink");
	err[0] = 0;
	t = jitmap_read_file(q, 1000, &len, err, sizeof(err));
	snprintf(why, sizeof(why), "read: %s; message: %s", t ? t : "(null)", err);
	check("read-refuses-symlink", !t && strstr(err, "symbolic link"), why);
	free(t);

	/* a FIFO with no writer: opened without blocking, then refused */
	snprintf(q, sizeof(q), "%s/perf-3.map", dir);
	if (mkfifo(q, 0600))
		perror("mkfifo");
	time_t t0 = time(NULL);
	err[0] = 0;
	t = jitmap_read_file(q, 0, &len, err, sizeof(err));
	snprintf(why, sizeof(why), "read: %s; message: %s", t ? t : "(null)", err);
	check("read-refuses-fifo-without-blocking",
	      !t && strstr(err, "not a regular file") && time(NULL) - t0 < 5, why);
	free(t);

	/* too large: refused before a byte is read (sparse) */
	snprintf(q, sizeof(q), "%s/perf-4.map", dir);
	int fd = open(q, O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)JITMAP_MAX_BYTES + 1))
		perror("ftruncate");
	close(fd);
	err[0] = 0;
	t = jitmap_read_file(q, 0, &len, err, sizeof(err));
	snprintf(why, sizeof(why), "read: %s; message: %s", t ? "text" : "(null)", err);
	check("read-refuses-oversized", !t && strstr(err, "more than"), why);
	free(t);

	snprintf(q, sizeof(q), "%s/perf-5.map", dir);
	err[0] = 0;
	errno = 0;
	t = jitmap_read_file(q, 0, &len, err, sizeof(err));
	check("read-absent-is-quiet", !t && errno == ENOENT && !err[0], err);
	free(t);
}

/* ---- jitdump: a dump written here as perf's jitdump.h lays it out */

struct dbuf {
	unsigned char	b[8192];
	size_t		n;
};

static void put(struct dbuf *d, const void *p, size_t l)
{
	memcpy(d->b + d->n, p, l);
	d->n += l;
}

static void put32(struct dbuf *d, uint32_t v) { put(d, &v, 4); }
static void put64(struct dbuf *d, uint64_t v) { put(d, &v, 8); }

static void header(struct dbuf *d, uint32_t magic)
{
	put32(d, magic);
	put32(d, 1);		/* version */
	put32(d, 40);		/* header size */
	put32(d, 62);		/* EM_X86_64 */
	put32(d, 0xdeadbeef);
	put32(d, 1234);		/* pid */
	put64(d, 1);		/* timestamp */
	put64(d, 0);		/* flags */
}

static void load_rec(struct dbuf *d, uint64_t addr, uint64_t size, uint64_t index,
		     const char *name)
{
	size_t nl = strlen(name) + 1;
	put32(d, 0);
	put32(d, (uint32_t)(16 + 40 + nl + size));
	put64(d, 2);
	put32(d, 1234);
	put32(d, 1234);
	put64(d, addr);
	put64(d, addr);
	put64(d, size);
	put64(d, index);
	put(d, name, nl);
	for (uint64_t i = 0; i < size; i++)
		d->b[d->n++] = 0xcc;	/* the code: never read */
}

static void move_rec(struct dbuf *d, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	put32(d, 1);
	put32(d, 16 + 48);
	put64(d, 3);
	put32(d, 1234);
	put32(d, 1234);
	put64(d, to);
	put64(d, from);
	put64(d, to);
	put64(d, size);
	put64(d, index);
}

static int dump_of(const char *dir, const struct dbuf *d, size_t len, struct dtcap_sym **s,
		   size_t *n, char **names, char *err)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/jit-1234.dump", dir);
	int fd = open(p, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || write(fd, d->b, len) != (ssize_t)len)
		perror("dump");
	int r = jitdump_read(fd, s, n, names, err, 256);
	close(fd);
	return r;
}

static void test_jitdump(const char *dir)
{
	struct dbuf d = { .n = 0 };
	struct dtcap_sym *s;
	size_t n;
	char *names, err[256] = "", why[512];

	header(&d, 0x4A695444);
	load_rec(&d, 0x5000, 0x40, 1, "JS:*fib /a.js:1");
	put32(&d, 4);		/* unwinding info: skipped by its size */
	put32(&d, 16 + 24);
	put64(&d, 0);
	put64(&d, 0);
	put64(&d, 0);
	put64(&d, 0);
	load_rec(&d, 0x3000, 0x20, 2, "stub");
	move_rec(&d, 0x5000, 0x9000, 0x40, 1);	/* fib moves */
	load_rec(&d, 0x3000, 0x30, 3, "stub-recompiled");
	size_t whole = d.n;
	load_rec(&d, 0xa000, 0x10, 4, "cut-off");

	/* the last record cut short, as by a writer still appending */
	int r = dump_of(dir, &d, d.n - 5, &s, &n, &names, err);
	snprintf(why, sizeof(why), "r %d (%s) n %zu: %s %s %s %s", r, err, n,
		 n > 0 ? s[0].name : "-", n > 1 ? s[1].name : "-", n > 2 ? s[2].name : "-",
		 n > 3 ? s[3].name : "-");
	check("jitdump-loads-moves-cut",
	      r == 0 && n == 3 && s[0].addr == 0x3000 && !strcmp(s[0].name, "stub-recompiled") &&
	      s[0].size == 0x30 && s[1].addr == 0x5000 && !strcmp(s[1].name, "JS:*fib /a.js:1") &&
	      s[2].addr == 0x9000 && !strcmp(s[2].name,
	      "JS:*fib /a.js:1") && s[2].size == 0x40, why);
	if (!r) {
		free(s);
		free(names);
	}

	/* other byte order, and not a dump at all */
	struct dbuf o = { .n = 0 };
	header(&o, 0x4454694A);
	r = dump_of(dir, &o, o.n, &s, &n, &names, err);
	check("jitdump-other-byte-order", r < 0 && strstr(err, "byte order"), err);
	r = dump_of(dir, &d, 3, &s, &n, &names, err);
	check("jitdump-too-short", r < 0 && strstr(err, "not a jitdump"), err);

	/* fuzz: random bytes over the whole dump; never a crash, invariants hold */
	uint64_t st = 0x243f6a8885a308d3ULL;
	const char *bad_inv = NULL;
	struct dbuf f;
	for (int it = 0; it < 3000 && !bad_inv; it++) {
		f = d;
		f.n = whole;
		int edits = 1 + (int)(xorshift64(&st) % 6);
		for (int e = 0; e < edits; e++) {
			size_t pos = 40 + (size_t)(xorshift64(&st) % (f.n - 40));
			f.b[pos] = (unsigned char)xorshift64(&st);
		}
		size_t len = f.n - (size_t)(xorshift64(&st) % 16);
		if (dump_of(dir, &f, len, &s, &n, &names, err) == 0) {
			for (size_t i = 0; i < n && !bad_inv; i++)
				if (!s[i].size || !s[i].name[0] || (i && s[i - 1].addr >= s[i].addr))
					bad_inv = "an empty or unsorted symbol";
			free(s);
			free(names);
		}
	}
	check("jitdump-fuzz-invariants", !bad_inv, bad_inv ? bad_inv : "");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: jitmap_test SCRATCHDIR\n");
		return 2;
	}
	test_parse();
	test_fuzz();
	test_read(argv[1]);
	test_jitdump(argv[1]);
	return check_status();
}
