/*
 * fpcheck.c - whether a program was built with frame pointers; see
 * fpcheck.h.  The test is the one a reader of the disassembly makes: with
 * -fno-omit-frame-pointer nearly every function opens with
 * "push %rbp; mov %rsp,%rbp" (after an endbr64 under CET, sometimes after
 * a scheduled move), without it hardly any does; the C runtime's entry
 * points never do, whatever the program.  Function symbols say where functions start; a file
 * without them is judged by how often the pair occurs in its code.
 */
#include "fpcheck.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const unsigned char prologue[4] = { 0x55, 0x48, 0x89, 0xe5 };	/* push rbp; mov rsp,rbp */

int
fpcheck_which(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return access(cmd, X_OK) == 0 ? 0 : -1;
	}
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; ; ) {
		const char *c = strchr(p, ':');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		snprintf(out, len, "%.*s/%s", (int)l, l ? p : ".", cmd);
		if (access(out, X_OK) == 0)
			return 0;
		if (!c)
			return -1;
		p = c + 1;
	}
}

/*
 * Does the function at addr (size bytes, in .text) set up rbp as a frame
 * pointer in its first instructions?  The compiler schedules other moves
 * before the push and between it and the move, so both are looked for in
 * the first 24 bytes.
 */
static int
saves_rbp(const Elf_Data *text, const GElf_Shdr *sh, uint64_t addr, uint64_t size)
{
	const unsigned char *b;
	uint64_t off = addr - sh->sh_addr, n = size < 24 ? size : 24;

	if (addr < sh->sh_addr || off + n > text->d_size || n < 4)
		return -1;
	b = (const unsigned char *)text->d_buf + off;
	/* the push, then the move, maybe with other moves between */
	for (uint64_t i = 0; i + 4 <= n; i++) {
		if (b[i] != 0x55)
			continue;
		for (uint64_t j = i + 1; j + 3 <= n; j++)
			if (memcmp(b + j, prologue + 1, 3) == 0)
				return 1;
		break;
	}
	return 0;
}

int
fpcheck_file(const char *path)
{
	int fd, ret = -1;
	Elf *e = NULL;
	Elf_Scn *scn = NULL, *textscn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr textsh = { 0 }, sh;
	Elf_Data *text = NULL;
	size_t funcs = 0, withfp = 0;

	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL || gelf_getehdr(e, &eh) == NULL ||
	    eh.e_machine != EM_X86_64)
		goto out;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		const char *nm;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		nm = elf_strptr(e, eh.e_shstrndx, sh.sh_name);
		if (nm && strcmp(nm, ".text") == 0 && sh.sh_type == SHT_PROGBITS) {
			textscn = scn;
			textsh = sh;
		}
	}
	if (textscn == NULL || (text = elf_getdata(textscn, NULL)) == NULL || text->d_buf == NULL)
		goto out;
	/* the functions of .symtab, else .dynsym, big enough to set up a
	 * frame (a leaf of a few bytes may not, even with the option) */
	for (int want = SHT_SYMTAB; want && funcs == 0; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0) {
		scn = NULL;
		while ((scn = elf_nextscn(e, scn)) != NULL) {
			Elf_Data *d;
			if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != (unsigned)want ||
			    (d = elf_getdata(scn, NULL)) == NULL || sh.sh_entsize == 0)
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *nm;
				int r;
				if (gelf_getsym(d, (int)i, &s) == NULL ||
				    GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_size < 16 ||
				    s.st_shndx != elf_ndxscn(textscn) ||
				    ((nm = elf_strptr(e, sh.sh_link, s.st_name)) && strcmp(nm, "_start") == 0) ||
				    (r = saves_rbp(text, &textsh, s.st_value, s.st_size)) < 0)
					continue;
				funcs++;
				withfp += (size_t)r;
			}
		}
	}
	if (funcs >= 1) {
		ret = withfp * 2 > funcs;
	} else if (text->d_size >= 1024) {
		/* no symbols: code with frame pointers has the pair every few
		 * hundred bytes, code without it hardly anywhere */
		const unsigned char *b = text->d_buf;
		size_t n = 0;
		for (size_t i = 0; i + 4 <= text->d_size; i++)
			n += b[i] == 0x55 && memcmp(b + i, prologue, 4) == 0;
		ret = n * 2000 >= text->d_size;
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}
