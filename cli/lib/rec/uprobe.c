/* uprobe.c - see uprobe.h. */
#include "dt_grow.h"
#include "uprobe.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* An open ELF file with its loadable segments. */
struct efile {
	int		fd;
	Elf		*e;
	GElf_Phdr	*ph;		/* PT_LOAD only */
	size_t		nph;
};

static void
efile_close(struct efile *f)
{
	if (f->e)
		elf_end(f->e);
	if (f->fd >= 0)
		close(f->fd);
	free(f->ph);
}

static int
efile_open(const char *path, struct efile *f, char *err, size_t errlen)
{
	size_t n;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		dtu_seterr(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -1;
	}
	/* a FIFO or a device is refused, not waited on */
	if ((f->fd = dtu_open_regular(path, 0, err, errlen)) < 0)
		return -1;
	f->e = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (f->e == NULL || elf_kind(f->e) != ELF_K_ELF) {
		dtu_seterr(err, errlen, "%s: not an ELF file", path);
		goto fail;
	}
	if (gelf_getclass(f->e) != ELFCLASS64) {
		dtu_seterr(err, errlen, "%s: not a 64-bit ELF file", path);
		goto fail;
	}
	if (elf_getphdrnum(f->e, &n) != 0 || n > 4096) {
		dtu_seterr(err, errlen, "%s: bad program headers", path);
		goto fail;
	}
	if ((f->ph = calloc(n ? n : 1, sizeof(*f->ph))) == NULL) {
		dtu_seterr(err, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->e, (int)i, &ph) != NULL && ph.p_type == PT_LOAD)
			f->ph[f->nph++] = ph;
	}
	if (f->nph == 0) {
		dtu_seterr(err, errlen, "%s: an ELF file with nothing to load (an object file?)",
			   path);
		goto fail;
	}
	return 0;
fail:
	efile_close(f);
	return -1;
}

/* The file offset of virtual address addr, or -1 outside every PT_LOAD. */
static int
to_offset(const struct efile *f, uint64_t addr, uint64_t *off)
{
	for (size_t i = 0; i < f->nph; i++) {
		const GElf_Phdr *p = &f->ph[i];
		if (addr >= p->p_vaddr && addr - p->p_vaddr < p->p_filesz) {
			*off = addr - p->p_vaddr + p->p_offset;
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------------- symbols */

static int
symname_cmp(const void *a, const void *b)
{
	const struct dtup_sym *x = a, *y = b;

	return strcmp(x->name, y->name);
}

void
dtup_syms_free(struct dtup_syms *s)
{
	free(s->v);
	free(s->strs);
	memset(s, 0, sizeof(*s));
}

int
dtup_syms_read(const char *path, struct dtup_syms *out, char *err, size_t errlen)
{
	struct efile f;
	size_t cap = 0, slen = 0, scap = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (efile_open(path, &f, err, errlen) < 0)
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;
		while ((scn = elf_nextscn(f.e, scn)) != NULL) {
			Elf_Data *data;
			size_t nsym;
			if (gelf_getshdr(scn, &sh) == NULL ||
			    sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) || sh.sh_entsize == 0)
				continue;
			if ((data = elf_getdata(scn, NULL)) == NULL)
				continue;
			nsym = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < nsym; i++) {
				GElf_Sym sym;
				const char *nm;
				uint64_t off;
				size_t l;
				if (gelf_getsym(data, (int)i, &sym) == NULL ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
				    sym.st_value == 0)
					continue;
				nm = elf_strptr(f.e, sh.sh_link, sym.st_name);
				if (nm == NULL || nm[0] == '\0' || to_offset(&f, sym.st_value, &off) < 0)
					continue;
				l = strlen(nm) + 1;
				if (DT_GROW(out->v, cap, out->n, 1, 256) ||
				    DT_GROW(out->strs, scap, slen, l, 16384))
					goto nomem;
				memcpy(out->strs + slen, nm, l);
				/* names point into strs once it stops moving */
				out->v[out->n].name = (const char *)(uintptr_t)slen;
				out->v[out->n].addr = sym.st_value;
				out->v[out->n].size = sym.st_size;
				out->v[out->n].offset = off;
				out->n++;
				slen += l;
			}
		}
	}
	for (size_t i = 0; i < out->n; i++)
		out->v[i].name = out->strs + (size_t)(uintptr_t)out->v[i].name;
	if (out->n) {
		/* a name in both tables (or an alias pair) is one function */
		size_t k = 0;
		qsort(out->v, out->n, sizeof(*out->v), symname_cmp);
		for (size_t i = 0; i < out->n; i++) {
			if (k && strcmp(out->v[k - 1].name, out->v[i].name) == 0)
				continue;
			out->v[k++] = out->v[i];
		}
		out->n = k;
	}
	ret = 0;
	goto out;
nomem:
	dtu_seterr(err, errlen, "out of memory");
	dtup_syms_free(out);
out:
	efile_close(&f);
	return ret;
}

/* ----------------------------------------------------------- SDT notes */

void
dtup_notes_free(struct dtup_notes *n)
{
	for (size_t i = 0; i < n->n; i++) {
		free(n->v[i].provider);
		free(n->v[i].name);
		free(n->v[i].args);
	}
	free(n->v);
	memset(n, 0, sizeof(*n));
}

int
dtup_notes_read(const char *path, struct dtup_notes *out, char *err, size_t errlen)
{
	struct efile f;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx, cap = 0;
	uint64_t base_addr = 0;
	int have_base = 0, ret = -1;

	memset(out, 0, sizeof(*out));
	if (efile_open(path, &f, err, errlen) < 0)
		return -1;
	if (elf_getshdrstrndx(f.e, &shstrndx) != 0) {
		dtu_seterr(err, errlen, "%s: no section names", path);
		goto out;
	}
	while ((scn = elf_nextscn(f.e, scn)) != NULL) {
		const char *nm;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		nm = elf_strptr(f.e, shstrndx, sh.sh_name);
		if (nm && strcmp(nm, ".stapsdt.base") == 0) {
			base_addr = sh.sh_addr;
			have_base = 1;
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(f.e, scn)) != NULL) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff, next;
		const char *nm;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
			continue;
		nm = elf_strptr(f.e, shstrndx, sh.sh_name);
		if (nm == NULL || strcmp(nm, ".note.stapsdt") != 0)
			continue;
		if ((data = elf_getdata(scn, NULL)) == NULL)
			continue;
		while ((next = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			const char *d = (const char *)data->d_buf + doff, *prov, *pname, *args;
			const char *dend = d + nh.n_descsz;
			uint64_t pc, base, sem;
			struct dtup_note *n;

			off = next;
			if (nh.n_type != 3 || nh.n_namesz != 8 ||
			    memcmp((const char *)data->d_buf + noff, "stapsdt", 8) != 0 ||
			    nh.n_descsz < 24 + 3)
				continue;
			memcpy(&pc, d, 8);
			memcpy(&base, d + 8, 8);
			memcpy(&sem, d + 16, 8);
			prov = d + 24;
			if ((pname = memchr(prov, '\0', (size_t)(dend - prov))) == NULL)
				continue;
			pname++;
			if (pname >= dend || (args = memchr(pname, '\0', (size_t)(dend - pname))) == NULL)
				continue;
			args++;
			if (args >= dend || memchr(args, '\0', (size_t)(dend - args)) == NULL)
				continue;
			/* prelinked or otherwise moved: the notes hold link-time addresses */
			if (have_base && base) {
				pc += base_addr - base;
				if (sem)
					sem += base_addr - base;
			}
			if (DT_GROW(out->v, cap, out->n, 1, 16))
				goto nomem;
			n = &out->v[out->n];
			memset(n, 0, sizeof(*n));
			if (to_offset(&f, pc, &n->pc_offset) < 0 ||
			    (sem && to_offset(&f, sem, &n->sem_offset) < 0)) {
				dtu_seterr(err, errlen, "%s: SDT note %s:%s points outside the file",
					   path, prov, pname);
				goto fail;
			}
			n->provider = strdup(prov);
			n->name = strdup(pname);
			n->args = strdup(args);
			out->n++;
			if (!n->provider || !n->name || !n->args)
				goto nomem;
		}
	}
	ret = 0;
	goto out;
nomem:
	dtu_seterr(err, errlen, "out of memory");
fail:
	dtup_notes_free(out);
out:
	efile_close(&f);
	return ret;
}

/* ------------------------------------------------------ SDT arguments */

/* x86-64 register names in every width: name, register, bytes, shift */
static const struct { const char *n; int8_t reg; uint8_t size, shift; } regnames[] = {
	{ "rax", DTUP_AX, 8, 0 }, { "eax", DTUP_AX, 4, 0 }, { "ax", DTUP_AX, 2, 0 },
	{ "al", DTUP_AX, 1, 0 }, { "ah", DTUP_AX, 1, 8 },
	{ "rbx", DTUP_BX, 8, 0 }, { "ebx", DTUP_BX, 4, 0 }, { "bx", DTUP_BX, 2, 0 },
	{ "bl", DTUP_BX, 1, 0 }, { "bh", DTUP_BX, 1, 8 },
	{ "rcx", DTUP_CX, 8, 0 }, { "ecx", DTUP_CX, 4, 0 }, { "cx", DTUP_CX, 2, 0 },
	{ "cl", DTUP_CX, 1, 0 }, { "ch", DTUP_CX, 1, 8 },
	{ "rdx", DTUP_DX, 8, 0 }, { "edx", DTUP_DX, 4, 0 }, { "dx", DTUP_DX, 2, 0 },
	{ "dl", DTUP_DX, 1, 0 }, { "dh", DTUP_DX, 1, 8 },
	{ "rsi", DTUP_SI, 8, 0 }, { "esi", DTUP_SI, 4, 0 }, { "si", DTUP_SI, 2, 0 },
	{ "sil", DTUP_SI, 1, 0 },
	{ "rdi", DTUP_DI, 8, 0 }, { "edi", DTUP_DI, 4, 0 }, { "di", DTUP_DI, 2, 0 },
	{ "dil", DTUP_DI, 1, 0 },
	{ "rbp", DTUP_BP, 8, 0 }, { "ebp", DTUP_BP, 4, 0 }, { "bp", DTUP_BP, 2, 0 },
	{ "bpl", DTUP_BP, 1, 0 },
	{ "rsp", DTUP_SP, 8, 0 }, { "esp", DTUP_SP, 4, 0 }, { "sp", DTUP_SP, 2, 0 },
	{ "spl", DTUP_SP, 1, 0 },
	{ "rip", DTUP_IP, 8, 0 },
};

/* "%r12d" and friends: r8..r15 with b/w/d suffixes. */
static int
parse_reg(const char *s, size_t len, int8_t *reg, uint8_t *size, uint8_t *shift)
{
	char nm[8];

	if (len == 0 || len >= sizeof(nm))
		return -1;
	memcpy(nm, s, len);
	nm[len] = '\0';
	for (size_t i = 0; i < sizeof(regnames) / sizeof(regnames[0]); i++) {
		if (strcmp(regnames[i].n, nm) == 0) {
			*reg = regnames[i].reg;
			*size = regnames[i].size;
			*shift = regnames[i].shift;
			return 0;
		}
	}
	if (nm[0] == 'r' && isdigit((unsigned char)nm[1])) {
		char *end;
		long n = strtol(nm + 1, &end, 10);
		if (n < 8 || n > 15)
			return -1;
		*reg = (int8_t)(DTUP_R8 + (n - 8));
		*shift = 0;
		if (*end == '\0')
			*size = 8;
		else if (strcmp(end, "d") == 0)
			*size = 4;
		else if (strcmp(end, "w") == 0)
			*size = 2;
		else if (strcmp(end, "b") == 0)
			*size = 1;
		else
			return -1;
		return 0;
	}
	return -1;
}

/* One "SIZE@OPERAND" token. */
static int
parse_one(const char *t, size_t len, struct dtup_arg *a)
{
	char buf[128], *at, *op, *end;
	long sz;
	uint8_t rsize, shift;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, t, len);
	buf[len] = '\0';
	memset(a, 0, sizeof(*a));
	a->reg = -1;
	a->kind = DTUP_ARG_NONE;
	if ((at = strchr(buf, '@')) == NULL) {
		/* old notes without a size: a long */
		op = buf;
		sz = 8;
		a->sign = 1;
	} else {
		*at = '\0';
		sz = strtol(buf, &end, 10);
		if (end == buf || *end != '\0')
			return -1;
		a->sign = sz < 0;
		if (sz < 0)
			sz = -sz;
		op = at + 1;
	}
	if (sz != 1 && sz != 2 && sz != 4 && sz != 8)
		return -1;
	a->size = (uint8_t)sz;
	if (op[0] == '$') {
		errno = 0;
		a->value = strtoll(op + 1, &end, 0);
		if (end == op + 1 || errno)
			return 0;	/* a symbol's address: not fetched */
		a->kind = DTUP_ARG_CONST;
		return 0;
	}
	if (op[0] == '%') {
		if (parse_reg(op + 1, strlen(op + 1), &a->reg, &rsize, &shift) < 0)
			return -1;
		a->shift = shift;
		a->kind = DTUP_ARG_REG;
		return 0;
	}
	/* DISP(%reg): anything else (index registers, symbols, rip) is left unfetched */
	{
		char *lp = strchr(op, '('), *rp = lp ? strchr(lp, ')') : NULL;
		long long disp = 0;
		if (lp == NULL || rp == NULL || rp[1] != '\0')
			return 0;
		if (lp != op) {
			errno = 0;
			disp = strtoll(op, &end, 0);
			if (end != lp || errno)
				return 0;
		}
		if (lp[1] != '%' || memchr(lp, ',', (size_t)(rp - lp)) != NULL)
			return 0;
		if (parse_reg(lp + 2, (size_t)(rp - lp - 2), &a->reg, &rsize, &shift) < 0 ||
		    rsize != 8 || a->reg == DTUP_IP) {
			a->reg = -1;
			return 0;
		}
		a->value = disp;
		a->kind = DTUP_ARG_MEM;
	}
	return 0;
}

int
dtup_parse_args(const char *spec, struct dtup_arg *args, unsigned *nargs, char *err,
		size_t errlen)
{
	const char *p = spec;

	*nargs = 0;
	while (*p) {
		size_t len;
		struct dtup_arg a;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		len = strcspn(p, " \t");
		if (parse_one(p, len, &a) < 0) {
			dtu_seterr(err, errlen, "bad SDT argument '%.*s'", (int)(len < 60 ? len : 60), p);
			return -1;
		}
		if (*nargs < DTUP_MAXARGS)
			args[(*nargs)++] = a;
		p += len;
	}
	return 0;
}

uint64_t
dtup_arg_regs(const struct dtup_arg *a)
{
	if (a->kind == DTUP_ARG_REG)
		return 1ULL << a->reg;
	if (a->kind == DTUP_ARG_MEM)
		return (1ULL << a->reg) | (1ULL << DTUP_SP);
	return 0;
}

static uint64_t
extend(uint64_t v, unsigned size, int sign)
{
	if (size >= 8)
		return v;
	v &= (1ULL << (8 * size)) - 1;
	if (sign && (v >> (8 * size - 1)) & 1)
		v |= ~0ULL << (8 * size);
	return v;
}

uint64_t
dtup_arg_value(const struct dtup_arg *a, const uint64_t *regs, uint64_t have,
	       const unsigned char *stack, uint64_t stacklen, int *ok)
{
	uint64_t v = 0, addr, sp;

	*ok = 0;
	switch (a->kind) {
	case DTUP_ARG_CONST:
		*ok = 1;
		return extend((uint64_t)a->value, a->size, a->sign);
	case DTUP_ARG_REG:
		if (a->reg < 0 || !(have & (1ULL << a->reg)))
			return 0;
		*ok = 1;
		return extend(regs[a->reg] >> a->shift, a->size, a->sign);
	case DTUP_ARG_MEM:
		if (a->reg < 0 || !(have & (1ULL << a->reg)) || !(have & (1ULL << DTUP_SP)) ||
		    stack == NULL)
			return 0;
		addr = regs[a->reg] + (uint64_t)a->value;
		sp = regs[DTUP_SP];
		/* only what the kernel copied from the stack can be read */
		if (addr < sp || addr - sp > stacklen || stacklen - (addr - sp) < a->size)
			return 0;
		memcpy(&v, stack + (addr - sp), a->size);
		*ok = 1;
		return extend(v, a->size, a->sign);
	default:
		return 0;
	}
}

/* ---------------------------------------------------------- file names */

int
dtup_find_file(const char *name, char *buf, size_t len, char *err, size_t errlen)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
		"/lib", "/usr/lib", "/usr/local/lib",
	};
	const char *path;

	if (name[0] == '\0') {
		dtu_seterr(err, errlen, "empty file name");
		return -1;
	}
	if (strchr(name, '/')) {
		if (name[0] != '/') {
			dtu_seterr(err, errlen, "%s: give an absolute path, or a bare library name", name);
			return -1;
		}
		if ((size_t)snprintf(buf, len, "%s", name) >= len) {
			dtu_seterr(err, errlen, "%.60s...: path too long", name);
			return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if ((size_t)snprintf(buf, len, "%s/%s", dirs[i], name) < len && access(buf, R_OK) == 0)
			return 0;
	}
	if ((path = getenv("PATH")) != NULL) {
		while (*path) {
			size_t n = strcspn(path, ":");
			if (n && (size_t)snprintf(buf, len, "%.*s/%s", (int)n, path, name) < len &&
			    buf[0] == '/' && access(buf, R_OK) == 0)
				return 0;
			path += n;
			if (*path == ':')
				path++;
		}
	}
	dtu_seterr(err, errlen, "%s: no such library or program (in the library directories "
		   "or $PATH): give its absolute path", name);
	return -1;
}
