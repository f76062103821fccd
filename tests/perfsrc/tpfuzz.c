/*
 * tpfuzz - mutation fuzzing of tracefs.c under ASan/UBSan: tracepoint
 * format files (this kernel's own, then lines duplicated, numbers
 * replaced by edge values, bytes flipped, text cut) through the parser and
 * the slot layout, and raw records of any length and content through the
 * decoder.  Checks what the perf source relies on: a layout never passes
 * DTCAP_MAXARGS slots, decode reports the layout's slot count, and text
 * decoded into slots stays NUL-terminated within them.  A crash or a
 * sanitizer report fails the suite; so does a parser that rejects this
 * kernel's own formats.
 *   tpfuzz TRACEFS_ROOT SCRATCH_DIR : prints PASS/FAIL lines, exits 1 on a FAIL
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtcap.h"
#include "tracefs.h"
#include "util.h"
#include "../check.h"
#include "../xorshift.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static uint64_t
rnd(void)
{
	return xorshift64(&rng);
}

static const char *const seeds[][2] = {
	{ "sched", "sched_process_exec" }, { "sched", "sched_switch" },
	{ "raw_syscalls", "sys_enter" }, { "raw_syscalls", "sys_exit" },
	{ "signal", "signal_generate" }, { "syscalls", "sys_enter_openat" },
	{ "irq", "irq_handler_entry" }, { "block", "block_rq_issue" },
};
#define NSEEDS (sizeof(seeds) / sizeof(seeds[0]))

static const char *const edge[] = {
	"0", "1", "3", "7", "8", "9", "16", "64", "65535", "65536", "4294967295",
	"18446744073709551615", "-1", "", "x",
};

/* one mutation of text (len bytes, room for 2*len+64) in place */
static size_t
mutate(char *t, size_t len, size_t room)
{
	size_t at = len ? rnd() % len : 0;

	switch (rnd() % 6) {
	case 0:	/* flip a byte */
		if (len)
			t[at] = (char)(rnd() & 0xff);
		break;
	case 1:	/* cut */
		len = at;
		break;
	case 2: {	/* a number becomes an edge value */
		char *d = NULL;
		for (size_t i = at; i < len && !d; i++)
			if (t[i] >= '0' && t[i] <= '9')
				d = t + i;
		if (d) {
			size_t dl = strspn(d, "0123456789");
			const char *e = edge[rnd() % (sizeof(edge) / sizeof(edge[0]))];
			size_t el = strlen(e);
			if (len - dl + el < room) {
				memmove(d + el, d + dl, len - (size_t)(d - t) - dl);
				memcpy(d, e, el);
				len = len - dl + el;
			}
		}
		break;
	}
	case 3: {	/* duplicate a line */
		char *s = memchr(t + at, '\n', len - at);
		char *e = s ? memchr(s + 1, '\n', len - (size_t)(s + 1 - t)) : NULL;
		if (s && e && len + (size_t)(e - s) < room) {
			size_t ll = (size_t)(e - s);
			memmove(e + ll, e, len - (size_t)(e - t));
			memcpy(e, s, ll);
			len += ll;
		}
		break;
	}
	case 4:	/* a separator where it hurts */
		if (len)
			t[at] = ";:[] \t\n"[rnd() % 7];
		break;
	default:	/* a field line of edge sizes */
		if (len + 120 < room)
			len += (size_t)snprintf(t + len, room - len,
						"\tfield:%s x%u[%s];\toffset:%s;\tsize:%s;\tsigned:1;\n",
						rnd() & 1 ? "char" : "__data_loc char[]",
						(unsigned)(rnd() % 100),
						edge[rnd() % 5], edge[rnd() % 13], edge[rnd() % 13]);
		break;
	}
	t[len] = '\0';
	return len;
}

static int
put(const char *path, const char *t, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	if (len && fwrite(t, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static int
check_layout(const struct dtt_format *fmt, unsigned skip, const char **why)
{
	struct dtt_layout lay;
	struct dtcap_probe pr;
	uint64_t slots[DTCAP_MAXARGS];
	unsigned char raw[320];

	memset(&pr, 0, sizeof(pr));
	dtt_layout(fmt, skip, &lay, &pr);
	if (lay.nslots > DTCAP_MAXARGS || lay.nargs > DTCAP_MAXARGS || pr.nargs != lay.nargs) {
		*why = "layout beyond DTCAP_MAXARGS";
		return -1;
	}
	for (int r = 0; r < 8; r++) {
		size_t n = rnd() % sizeof(raw);
		for (size_t i = 0; i < n; i++)
			raw[i] = (unsigned char)rnd();
		if (dtt_decode(fmt, &lay, raw, n, slots) != lay.nslots) {
			*why = "decode disagrees with the layout's slot count";
			return -1;
		}
		for (unsigned k = 0; k < lay.nargs; k++) {
			const struct dtt_field *f = &fmt->f[lay.a[k].field];
			const unsigned char *s = (const unsigned char *)&slots[lay.a[k].slot];
			size_t room = 8u * lay.a[k].nslots;
			if ((f->kind == DTT_CHARS || f->is_char) && f->kind != DTT_SCALAR &&
			    memchr(s, 0, room) == NULL) {
				*why = "decoded text is not NUL-terminated within its slots";
				return -1;
			}
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char dir[600], path[700], err[512], *seed[NSEEDS];
	size_t seedlen[NSEEDS], nseed = 0, cap;
	const char *why = NULL;
	unsigned runs = 0, accepted = 0, fails = 0;
	static struct dtt_format fmt;

	if (argc != 3) {
		fprintf(stderr, "usage: tpfuzz TRACEFS_ROOT SCRATCH_DIR\n");
		return 2;
	}
	/* this kernel's formats parse, lay out and decode as they are */
	for (size_t i = 0; i < NSEEDS; i++) {
		if (dtt_read_format(argv[1], seeds[i][0], seeds[i][1], &fmt, err, sizeof(err)) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", argv[1], seeds[i][0],
			 seeds[i][1]);
		if ((seed[nseed] = dtu_read_file(path, &seedlen[nseed])) == NULL)
			continue;
		if (fmt.nfields == 0 || check_layout(&fmt, 0, &why) < 0) {
			checkf("tpfuzz-real-formats", 0, "%s:%s: %s", seeds[i][0], seeds[i][1],
			       why ? why : "no fields");
			return check_status();
		}
		nseed++;
	}
	if (!checkf("tpfuzz-real-formats", nseed >= 4, "only %zu of this kernel's formats parsed",
		    nseed))
		return check_status();

	snprintf(dir, sizeof(dir), "%s/events/f/t", argv[2]);
	snprintf(path, sizeof(path), "%s/events", argv[2]);
	mkdir(argv[2], 0700);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/events/f", argv[2]);
	mkdir(path, 0700);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		checkf("tpfuzz-mutated", 0, "%s: %s", dir, strerror(errno));
		return check_status();
	}
	snprintf(path, sizeof(path), "%s/format", dir);
	cap = 0;
	for (size_t i = 0; i < nseed; i++)
		cap = seedlen[i] > cap ? seedlen[i] : cap;
	cap = 4 * cap + 4096;
	char *t = malloc(cap);
	if (t == NULL)
		return 1;
	for (unsigned it = 0; it < 6000; it++) {
		size_t k = rnd() % nseed, len = seedlen[k];
		memcpy(t, seed[k], len);
		t[len] = '\0';
		for (unsigned m = 1 + rnd() % 6; m; m--)
			len = mutate(t, len, cap / 2);
		if (put(path, t, len) < 0) {
			checkf("tpfuzz-mutated", 0, "writing %s: %s", path, strerror(errno));
			return check_status();
		}
		runs++;
		if (dtt_read_format(argv[2], "f", "t", &fmt, err, sizeof(err)) < 0) {
			if (err[0] == '\0') {
				check("tpfuzz-mutated", 0, "rejected without a message");
				fails++;
			}
			continue;
		}
		accepted++;
		if (fmt.nfields > DTT_MAXFIELDS || check_layout(&fmt, (unsigned)(rnd() % 2), &why) < 0) {
			checkf("tpfuzz-mutated", 0, "iteration %u: %s", it, why ? why : "nfields");
			fails++;
			break;
		}
	}
	free(t);
	for (size_t i = 0; i < nseed; i++)
		free(seed[i]);
	printf("# tpfuzz-mutated: %u formats, %u accepted\n", runs, accepted);
	if (fails == 0)
		checkf("tpfuzz-mutated", accepted > runs / 10 && accepted < runs, "%u of %u mutated "
		       "formats accepted (the mutations do not exercise both paths)", accepted, runs);
	return check_status();
}
