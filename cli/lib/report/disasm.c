/*
 * disasm.c - a function's code from its ELF file on disk, checked against
 * the capture's build id, decoded with capstone (disasm.h).
 */
#include <capstone/capstone.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disasm.h"
#include "dt_buildid.h"
#include "util.h"

#define MAX_CODE	(1U << 20)	/* bytes of one function */
#define MAX_INSNS	65536

/* 1 if e carries the GNU build id f names; 0 if another or none. */
static int same_build(Elf *e, const struct dtcap_file *f)
{
	const void *id;
	size_t n;

	return dt_elf_build_id(e, &id, &n) && n == f->build_id_len &&
	       !memcmp(id, f->build_id, n);
}

struct rpt_insn *rpt_disasm(const struct dtcap_file *f, uint64_t addr, uint64_t size,
			    size_t *n, char *err, size_t errlen)
{
	char why[512];
	int fd = -1;
	Elf *e = NULL;
	uint8_t *code = NULL;
	struct rpt_insn *out = NULL;
	csh cs;
	int cs_ok = 0;
	size_t nph;

	*n = 0;
	if (f->build_id_len == 0) {
		dtu_seterr(err, errlen, "%s: the capture has no build id of it to check the "
			   "file on disk against", f->path);
		return NULL;
	}
	if (size == 0 || size > MAX_CODE) {
		dtu_seterr(err, errlen, "%s: function of %llu bytes", f->path,
			   (unsigned long long)size);
		return NULL;
	}
	elf_version(EV_CURRENT);
	if ((fd = dtu_open_regular(f->path, 0, why, sizeof(why))) < 0) {
		dtu_seterr(err, errlen, "%s", why);
		return NULL;
	}
	if ((e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL || elf_kind(e) != ELF_K_ELF) {
		dtu_seterr(err, errlen, "%s: not an ELF file", f->path);
		goto out;
	}
	if (!same_build(e, f)) {
		dtu_seterr(err, errlen, "%s: not the build recorded (its build id differs from "
			   "the capture's)", f->path);
		goto out;
	}
	GElf_Ehdr eh;
	if (gelf_getehdr(e, &eh) == NULL || eh.e_machine != EM_X86_64) {
		dtu_seterr(err, errlen, "%s: only x86-64 code is disassembled", f->path);
		goto out;
	}
	/* the executable segment holding the function: file bytes at
	 * p_offset + (addr - p_vaddr) */
	if (elf_getphdrnum(e, &nph) != 0)
		nph = 0;
	uint64_t foff = 0;
	int found = 0;
	for (size_t i = 0; i < nph && !found; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz &&
		    size <= ph.p_filesz - (addr - ph.p_vaddr)) {
			foff = ph.p_offset + (addr - ph.p_vaddr);
			found = 1;
		}
	}
	if (!found) {
		dtu_seterr(err, errlen, "%s: no executable segment holds 0x%llx", f->path,
			   (unsigned long long)addr);
		goto out;
	}
	if ((code = malloc(size)) == NULL || pread(fd, code, size, (off_t)foff) != (ssize_t)size) {
		dtu_seterr(err, errlen, "%s: cannot read the code", f->path);
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		dtu_seterr(err, errlen, "capstone: cannot open an x86-64 decoder");
		goto out;
	}
	cs_ok = 1;
	cs_insn *in = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = size, cap = 0;
	uint64_t a = addr;
	while (in && left && *n < MAX_INSNS) {
		if (!cs_disasm_iter(cs, &p, &left, &a, in)) {
			/* data or padding the decoder rejects: one byte */
			in->address = a;
			snprintf(in->mnemonic, sizeof(in->mnemonic), "(bad)");
			in->op_str[0] = '\0';
			p++, left--, a++;
		}
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct rpt_insn *t = realloc(out, nc * sizeof(*out));
			if (t == NULL) {
				free(out);
				out = NULL;
				*n = 0;
				dtu_seterr(err, errlen, "out of memory");
				break;
			}
			out = t;
			cap = nc;
		}
		out[*n].addr = in->address;
		/* operands past the column are cut: a table, not a listing */
		size_t ml = strnlen(in->mnemonic, sizeof(in->mnemonic));
		memcpy(out[*n].text, in->mnemonic, ml);
		out[*n].text[ml] = '\0';
		if (in->op_str[0] && ml + 2 < sizeof(out[*n].text)) {
			out[*n].text[ml] = ' ';
			size_t room = sizeof(out[*n].text) - ml - 2;
			size_t ol = strnlen(in->op_str, room);
			memcpy(out[*n].text + ml + 1, in->op_str, ol);
			out[*n].text[ml + 1 + ol] = '\0';
		}
		(*n)++;
	}
	if (in)
		cs_free(in, 1);
	else
		dtu_seterr(err, errlen, "out of memory");
out:
	if (cs_ok)
		cs_close(&cs);
	free(code);
	if (e)
		elf_end(e);
	close(fd);
	return out;
}
