/* elfsyms.c - see elfsyms.h. */
#include "elfsyms.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct owned {
	struct elfsyms_file ef;
	struct dtcap_sym *syms;
	char	*names;		/* one block holding every symbol name */
	char	*path;
};

struct centry {
	char	*path;
	dev_t	dev;
	ino_t	ino;
	struct timespec mtime;
	struct owned *file;	/* NULL: could not be read */
	char	*err;
	struct centry *next;
};

#define NBUCKETS 1024
struct elfsyms_cache {
	struct centry *b[NBUCKETS];
};


static int
symcmp(const void *a, const void *b)
{
	const struct dtcap_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* aliases at one address: prefer the longer (usually sized) symbol */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

void
elfsyms_file_free(struct elfsyms_file *f)
{
	struct owned *o = (struct owned *)f;

	if (o == NULL)
		return;
	free(o->syms);
	free(o->names);
	free(o->path);
	free(o);
}

static void
read_build_id(Elf *e, struct dtcap_file *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff, next;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data == NULL)
			continue;
		while ((next = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)data->d_buf + noff, "GNU", 4) == 0) {
				size_t n = nh.n_descsz < sizeof(f->build_id) ? nh.n_descsz
									: sizeof(f->build_id);
				memcpy(f->build_id, (char *)data->d_buf + doff, n);
				f->build_id_len = (uint32_t)n;
				return;
			}
			off = next;
		}
	}
}

static int
read_elf(Elf *e, struct owned *o, char *err, size_t errlen)
{
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr sh, symsh = { 0 };
	size_t nph, nsyms, namebytes = 0, used = 0, k = 0;
	Elf_Data *data;

	/* load bias: p_vaddr - p_offset of the first executable PT_LOAD */
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) == NULL)
				continue;
			if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				o->ef.f.load_bias_hint = ph.p_vaddr - ph.p_offset;
				break;
			}
		}
	}
	read_build_id(e, &o->ef.f);

	/* .symtab when present (unstripped), else the dynamic symbols */
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && symscn == NULL)) {
			if (symscn == NULL || sh.sh_type == SHT_SYMTAB) {
				symscn = scn;
				symsh = sh;
			}
		}
	}
	if (symscn == NULL || symsh.sh_entsize == 0)
		return 0;	/* no symbols: still useful for build id and mapping */
	data = elf_getdata(symscn, NULL);
	if (data == NULL) {
		dtu_seterr(err, errlen, "%s: %s", o->path, elf_errmsg(-1));
		return -1;
	}
	nsyms = symsh.sh_size / symsh.sh_entsize;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nsyms; i++) {
			GElf_Sym s;
			const char *name;
			int t;
			if (gelf_getsym(data, (int)i, &s) == NULL)
				continue;
			t = GELF_ST_TYPE(s.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
			    s.st_value == 0)
				continue;
			name = elf_strptr(e, symsh.sh_link, s.st_name);
			if (name == NULL || *name == '\0')
				continue;
			if (pass == 0) {
				namebytes += strlen(name) + 1;
				k++;
				continue;
			}
			size_t l = strlen(name) + 1;
			memcpy(o->names + used, name, l);
			o->syms[k].addr = s.st_value;
			o->syms[k].size = s.st_size;
			o->syms[k].name = o->names + used;
			used += l;
			k++;
		}
		if (pass == 0) {
			if (k == 0)
				return 0;
			o->syms = calloc(k, sizeof(*o->syms));
			o->names = malloc(namebytes);
			if (o->syms == NULL || o->names == NULL) {
				dtu_seterr(err, errlen, "%s: out of memory", o->path);
				return -1;
			}
			k = 0;
		}
	}
	qsort(o->syms, k, sizeof(*o->syms), symcmp);
	o->ef.f.syms = o->syms;
	o->ef.f.nsyms = (uint32_t)k;
	return 0;
}

struct elfsyms_file *
elfsyms_read(const char *path, const char *open_path, char *err, size_t errlen)
{
	struct owned *o;
	Elf *e;
	int fd, r;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		dtu_seterr(err, errlen, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	fd = open(open_path ? open_path : path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL || (o->path = strdup(path)) == NULL) {
		free(o);
		close(fd);
		dtu_seterr(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	o->ef.f.path = o->path;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL || elf_kind(e) != ELF_K_ELF) {
		dtu_seterr(err, errlen, "%s: not an ELF file", path);
		if (e)
			elf_end(e);
		close(fd);
		elfsyms_file_free(&o->ef);
		return NULL;
	}
	r = read_elf(e, o, err, errlen);
	elf_end(e);
	close(fd);
	if (r < 0) {
		elfsyms_file_free(&o->ef);
		return NULL;
	}
	return &o->ef;
}

struct elfsyms_cache *
elfsyms_cache_new(void)
{
	return calloc(1, sizeof(struct elfsyms_cache));
}

void
elfsyms_cache_free(struct elfsyms_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < NBUCKETS; i++) {
		struct centry *e = c->b[i], *n;
		for (; e; e = n) {
			n = e->next;
			elfsyms_file_free(e->file ? &e->file->ef : NULL);
			free(e->err);
			free(e->path);
			free(e);
		}
	}
	free(c);
}

static size_t
hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

struct elfsyms_file *
elfsyms_get(struct elfsyms_cache *c, const char *path, const char *open_path,
	    char *err, size_t errlen)
{
	struct centry *e;
	struct stat st;
	size_t h = hash(path);
	int have_st = stat(open_path ? open_path : path, &st) == 0;

	for (e = c->b[h]; e; e = e->next) {
		if (strcmp(e->path, path) != 0)
			continue;
		/* same path, different file (rebuilt): read it again */
		if (have_st && (e->dev != st.st_dev || e->ino != st.st_ino ||
				e->mtime.tv_sec != st.st_mtim.tv_sec ||
				e->mtime.tv_nsec != st.st_mtim.tv_nsec))
			continue;
		if (e->file == NULL)
			dtu_seterr(err, errlen, "%s", e->err ? e->err : path);
		return e->file ? &e->file->ef : NULL;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL || (e->path = strdup(path)) == NULL) {
		free(e);
		dtu_seterr(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if (have_st) {
		e->dev = st.st_dev;
		e->ino = st.st_ino;
		e->mtime = st.st_mtim;
	}
	{
		char msg[512] = "";
		struct elfsyms_file *f = elfsyms_read(path, open_path, msg, sizeof(msg));
		e->file = (struct owned *)f;
		if (f == NULL) {
			e->err = strdup(msg);
			dtu_seterr(err, errlen, "%s", msg);
		}
	}
	e->next = c->b[h];
	c->b[h] = e;
	return e->file ? &e->file->ef : NULL;
}
