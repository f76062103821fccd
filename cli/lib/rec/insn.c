/* insn.c - see insn.h. */
#include "insn.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* x86's longest instruction: what may follow off to find the next boundary */
#define INSN_MAX	15
/* a symbol without a size is decoded this far at most (the offset is the user's) */
#define INSN_SCAN_MAX	0x100000

int
dtup_insn_boundary(const char *spec, const char *path, const char *func, uint64_t start,
		   uint64_t size, uint64_t off, char *err, size_t errlen)
{
	unsigned char *code = NULL;
	const uint8_t *p;
	size_t want, got = 0, left;
	uint64_t addr = 0;
	int fd = -1, ret = -1;
	csh h = 0;
	cs_insn *in = NULL;
	ssize_t r;

	if (off == 0)
		return 0;
	if (!size && off > INSN_SCAN_MAX) {
		dtu_seterr(err, errlen, "%s: offset %#llx into %s, a function of unknown size: at "
			   "most %#x", spec, (unsigned long long)off, func, INSN_SCAN_MAX);
		return -1;
	}
	/* the bytes up to the instruction after off: enough for both neighbours */
	want = (size_t)off + 2 * INSN_MAX;
	if (size && size < want)
		want = (size_t)size;
	if ((code = malloc(want)) == NULL) {
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	while (got < want) {
		r = pread(fd, code + got, want - got, (off_t)(start + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got <= off) {
		dtu_seterr(err, errlen, "%s: offset %#llx is beyond the end of %s", spec,
			   (unsigned long long)off, path);
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK || (in = cs_malloc(h)) == NULL) {
		dtu_seterr(err, errlen, "%s: capstone: cannot start the x86-64 decoder", spec);
		goto out;
	}
	p = code;
	left = got;
	for (;;) {
		uint64_t at = addr;
		if (at == off) {
			ret = 0;
			break;
		}
		/* cs_disasm_iter moves p, left and addr past the instruction */
		if (!cs_disasm_iter(h, &p, &left, &addr, in)) {
			dtu_seterr(err, errlen, "%s: %s+%#llx does not decode as an x86-64 "
				   "instruction: whether +%#llx is an instruction boundary is unknown, "
				   "so no probe is placed there", spec, func, (unsigned long long)at,
				   (unsigned long long)off);
			break;
		}
		if (addr > off) {
			char nxt[32] = "";
			/* the end of the function is no place for a probe */
			if (!size || addr < size)
				snprintf(nxt, sizeof(nxt), " and +%#llx", (unsigned long long)addr);
			dtu_seterr(err, errlen, "%s: offset +%#llx is inside the instruction at "
				   "%s+%#llx (%s%s%s, %u bytes): a breakpoint there would corrupt it; "
				   "the nearest instruction boundaries are +%#llx%s", spec,
				   (unsigned long long)off, func, (unsigned long long)at, in->mnemonic,
				   in->op_str[0] ? " " : "", in->op_str, (unsigned)in->size,
				   (unsigned long long)at, nxt);
			break;
		}
	}
out:
	if (in)
		cs_free(in, 1);
	if (h)
		cs_close(&h);
	if (fd >= 0)
		close(fd);
	free(code);
	return ret;
}
