/*
 * upfuzz - mutation fuzzing of uprobe.c's parsers under ASan/UBSan: SDT
 * argument strings (random and mutated from real ones) and ELF files
 * (bytes of real executables flipped, truncated) through the symbol and
 * note readers.  A crash or sanitizer report fails the suite; so does a
 * parser that accepts nothing or rejects valid input.
 *   upfuzz ELF... : prints PASS/FAIL lines
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uprobe.h"
#include "util.h"
#include "../check.h"
#include "../xorshift.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t
rnd(void)
{
	return xorshift64(&rng);
}

static int
fuzz_args(void)
{
	static const char *const seeds[] = {
		"-4@%edi 8@-16(%rbp) 4@$5", "-8@%rdi -8@$-5 -8@%rax -8@8(%rsp)", "1@%ah 2@%r12w",
		"8@(%rax,%rbx,8) 8@foo(%rip) -4@$0x10", "%rdi", "8@%r15d",
	};
	static const char alpha[] = "-@%$()0123456789abcdehilrsxpw, \t8";
	char buf[160], err[DTUP_ERRLEN];
	struct dtup_arg a[DTUP_MAXARGS];
	uint64_t regs[DTUP_NREGS];
	unsigned char stack[64];
	unsigned n, ok = 0, bad = 0;

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		if (dtup_parse_args(seeds[i], a, &n, err, sizeof(err)) < 0) {
			checkf("fuzz-args-seeds", 0, "'%s' refused: %s", seeds[i], err);
			return 1;
		}
	}
	for (int it = 0; it < 300000; it++) {
		size_t len;
		if (it & 1) {
			snprintf(buf, sizeof(buf), "%s", seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))]);
			len = strlen(buf);
			for (int k = (int)(rnd() % 4); k >= 0 && len; k--)
				buf[rnd() % len] = alpha[rnd() % (sizeof(alpha) - 1)];
		} else {
			len = rnd() % (sizeof(buf) - 1);
			for (size_t k = 0; k < len; k++)
				buf[k] = alpha[rnd() % (sizeof(alpha) - 1)];
			buf[len] = '\0';
		}
		if (dtup_parse_args(buf, a, &n, err, sizeof(err)) < 0) {
			bad++;
			continue;
		}
		ok++;
		for (size_t r = 0; r < DTUP_NREGS; r++)
			regs[r] = rnd();
		regs[DTUP_SP] = rnd() & 0xff;
		for (size_t k = 0; k < sizeof(stack); k++)
			stack[k] = (unsigned char)rnd();
		for (unsigned k = 0; k < n; k++) {
			int fetched;
			(void)dtup_arg_value(&a[k], regs, rnd(), stack, rnd() % (sizeof(stack) + 1),
					     &fetched);
		}
	}
	return !checkf("fuzz-args", ok && bad, "%u accepted, %u refused: both must happen", ok, bad);
}

static int
fuzz_elf(const char *path)
{
	size_t len;
	char *orig = dtu_read_file(path, &len), *m, err[DTUP_ERRLEN];
	char tmp[] = "/tmp/upfuzz.XXXXXX";
	int fd = mkstemp(tmp), okread = 0;
	struct dtup_syms ss;
	struct dtup_notes nn;
	/* each file its own assertion, its FAILs under the name it PASSes by */
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char name[128];

	snprintf(name, sizeof(name), "fuzz-elf-%s", base);

	if (orig == NULL || fd < 0 || (m = malloc(len)) == NULL) {
		checkf(name, 0, "cannot read %s", path);
		return 1;
	}
	close(fd);
	if (dtup_syms_read(path, &ss, err, sizeof(err)) < 0 || ss.n == 0) {
		checkf(name, 0, "%s unreadable before fuzzing: %s", path, err);
		return 1;
	}
	dtup_syms_free(&ss);
	for (int it = 0; it < 1500; it++) {
		FILE *f;
		size_t l = len;
		memcpy(m, orig, len);
		/* headers, program and section headers and small files matter most */
		for (int k = (int)(rnd() % 16); k >= 0; k--) {
			size_t at = (rnd() & 1) ? rnd() % (len < 4096 ? len : 4096) :
				    len - 1 - rnd() % (len < 8192 ? len : 8192);
			m[at] = (char)rnd();
		}
		if (it % 10 == 0)
			l = rnd() % len;
		if ((f = fopen(tmp, "wb")) == NULL || fwrite(m, 1, l, f) != l || fclose(f) != 0) {
			checkf(name, 0, "writing %s", tmp);
			return 1;
		}
		if (dtup_syms_read(tmp, &ss, err, sizeof(err)) == 0) {
			okread++;
			dtup_syms_free(&ss);
		}
		if (dtup_notes_read(tmp, &nn, err, sizeof(err)) == 0)
			dtup_notes_free(&nn);
	}
	unlink(tmp);
	free(m);
	free(orig);
	printf("# %s: %d of 1500 mutants still read\n", name, okread);
	check(name, 1, "");
	return 0;
}

int
main(int argc, char **argv)
{
	int rc = fuzz_args();

	for (int i = 1; i < argc; i++)
		rc |= fuzz_elf(argv[i]);
	return rc | check_status();
}
