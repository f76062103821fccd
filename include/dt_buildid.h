/*
 * dt_buildid.h - the GNU build id of an ELF file open in libelf: what the
 * recorder stores for each mapped file (elfsyms.c) and what srcline.c and
 * annotate's disassembler (disasm.c) compare a file on disk with before
 * trusting its DWARF or its code.
 *
 * Header only: the recording and the report halves of libdtcli never
 * include each other's headers, and both need it.
 */
#ifndef DT_BUILDID_H
#define DT_BUILDID_H

#include <gelf.h>
#include <stddef.h>
#include <string.h>

/*
 * The descriptor of e's first NT_GNU_BUILD_ID note, in *id (pointing into
 * e's data: valid while e is open) and its length in *len.  1 if found, 0
 * if e has none.
 */
static inline int dt_elf_build_id(Elf *e, const void **id, size_t *len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff, next;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE ||
		    (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		while ((next = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) == 0) {
				*id = (const char *)d->d_buf + doff;
				*len = nh.n_descsz;
				return 1;
			}
			off = next;
		}
	}
	return 0;
}

#endif
