/*
 * unwind.c - see unwind.h.
 *
 * libdwfl does the CFI work (it is what perf's unwind-libdw.c uses): per
 * process a Dwfl whose modules are the mapped files, attached to a
 * "process" whose only thread is the current sample: set_initial_registers
 * hands over the sampled registers, memory_read serves the stack copy.
 * Unlike perf (a Dwfl per sample), the Dwfl lives as long as the process
 * and its modules share one libelf handle per file (elf_begin on a
 * reference only counts it), so the per-sample cost is the CFI lookups.
 *
 * What libdwfl returns is checked before it is stored: every caller pc
 * must lie in an executable mapping we know and follow a call instruction,
 * and the stack pointer must not move down, because libdwfl falls back to
 * following rbp when a pc has no CFI, and rbp is a general register in
 * code built without frame pointers.
 */
#include "dt_grow.h"
#include "unwind.h"
#include "procmaps.h"
#include "util.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXSEG		16	/* PT_LOADs remembered per file */
#define RULES		16384	/* unwind rule cache entries (direct-mapped) */
#define NREG		17	/* DWARF registers 0-15 and 16, the return address */
#define PROC_BUCKETS	1024
#define FILE_BUCKETS	256

/* One ELF file, opened once per dtunw; shared by every process mapping it. */
struct ufile {
	dev_t		dev;
	ino_t		ino;
	int		vdso;
	Elf		*elf;		/* its own reference; modules dup it */
	const unsigned char *raw;	/* whole file image (elf_rawfile) */
	size_t		rawlen;
	void		*mem;		/* vdso copy behind elf, else NULL */
	Dwarf_CFI	*cfi;		/* .eh_frame, for the fast path */
	int		cfi_tried;
	uint64_t	lo, hi;		/* p_vaddr span of the PT_LOADs */
	unsigned	nseg;
	struct { uint64_t off, vaddr, filesz; } seg[MAXSEG];
	char		*path;
	struct ufile	*next;
};

struct umap {
	uint64_t	start, end, pgoff;
	char		*path;
	struct ufile	*file;		/* NULL: not opened yet, or failed */
	uint64_t	bias;		/* runtime address - p_vaddr */
	int		state;		/* 0 new, 1 reported, -1 unusable */
};

struct uproc {
	uint32_t	pid;
	struct umap	*maps;		/* sorted by start, disjoint */
	size_t		n, cap;
	Dwfl		*dwfl;		/* NULL until a sample needs it */
	int		attached;
	int		stale;		/* a reported mapping went away */
	int		added;		/* new mappings to report */
	struct uproc	*next;
};

/*
 * How to find the caller's registers at one pc, when its CFI is the
 * common kind: CFA = register + offset, each callee-saved register and
 * the return address either unchanged, undefined or saved at CFA + offset.
 */
enum { R_SAME, R_AT, R_UNDEF };
struct rule {
	const struct ufile *file;	/* key, with vaddr; NULL: empty */
	uint64_t	vaddr;
	uint8_t		simple;		/* 0: leave this pc to libdwfl */
	int8_t		cfa_reg;
	int64_t		cfa_off;
	uint8_t		how[NREG];
	int64_t		off[NREG];
};

struct dtunw {
	struct uproc	*procs[PROC_BUCKETS];
	struct rule	*rules;		/* RULES entries */
	int		dwfl_only;
	struct ufile	*files[FILE_BUCKETS];
	struct dtunw_stats st;

	/* the sample being unwound [only during dtunw_unwind] */
	struct uproc	*cur;
	const uint64_t	*regs;
	uint64_t	regs_mask;
	const unsigned char *stack;
	uint64_t	sp;
	size_t		stack_len;
	uint64_t	*pcs;
	unsigned	n, max;
	uint64_t	last_sp;
	int		last_act;	/* last frame's pc is not a return address */
	int		bad, full;
};

/* ------------------------------------------------------------- files */

static void
file_free(struct ufile *f)
{
	if (f->cfi)
		dwarf_cfi_end(f->cfi);
	if (f->elf)
		elf_end(f->elf);
	free(f->mem);
	free(f->path);
	free(f);
}

static int
file_load(struct ufile *f)
{
	size_t nph;

	if (elf_kind(f->elf) != ELF_K_ELF || gelf_getclass(f->elf) != ELFCLASS64 ||
	    elf_getphdrnum(f->elf, &nph) != 0)
		return -1;
	f->raw = (const unsigned char *)elf_rawfile(f->elf, &f->rawlen);
	f->lo = UINT64_MAX;
	f->hi = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
		if ((ph.p_vaddr & ~(align - 1)) < f->lo)
			f->lo = ph.p_vaddr & ~(align - 1);
		if (ph.p_vaddr + ph.p_memsz > f->hi)
			f->hi = ph.p_vaddr + ph.p_memsz;
		if (f->nseg < MAXSEG) {
			f->seg[f->nseg].off = ph.p_offset;
			f->seg[f->nseg].vaddr = ph.p_vaddr;
			f->seg[f->nseg].filesz = ph.p_filesz;
			f->nseg++;
		}
	}
	return f->nseg ? 0 : -1;
}

/* This machine's vDSO: every process has the same one. */
static struct ufile *
file_vdso(void)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)img;
	struct ufile *f;
	size_t len;

	if (img == NULL || memcmp(img, ELFMAG, SELFMAG) != 0)
		return NULL;
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (len < sizeof(*eh) || len > (1U << 20))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (f == NULL || (f->mem = malloc(len)) == NULL || (f->path = strdup("[vdso]")) == NULL)
		goto fail;
	memcpy(f->mem, img, len);
	f->vdso = 1;
	f->elf = elf_memory(f->mem, len);
	if (f->elf == NULL || file_load(f) < 0)
		goto fail;
	return f;
fail:
	if (f)
		file_free(f);
	return NULL;
}

static struct ufile *
file_get(struct dtunw *u, uint32_t pid, const char *path, uint64_t start, uint64_t end)
{
	char rooted[4200];
	struct ufile *f;
	struct stat st;
	int fd = -1;
	size_t h;

	if (strcmp(path, "[vdso]") == 0) {
		for (f = u->files[0]; f; f = f->next)
			if (f->vdso)
				return f;
		f = file_vdso();
		if (f == NULL) {
			u->st.file_errors++;
			return NULL;
		}
		u->st.files++;
		f->next = u->files[0];
		u->files[0] = f;
		return f;
	}
	if (path[0] != '/')
		return NULL;
	/* a file replaced since it was mapped (an upgrade): the process's
	 * own mapping of it; else the process's root first, since a
	 * container sees other files */
	size_t pl = strlen(path);
	if (pl > 10 && strcmp(path + pl - 10, " (deleted)") == 0)
		snprintf(rooted, sizeof(rooted), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
			 pid, start, end);
	else
		snprintf(rooted, sizeof(rooted), "/proc/%" PRIu32 "/root%s", pid, path);
	fd = open(rooted, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* deleted or replaced after it was mapped */
		snprintf(rooted, sizeof(rooted), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
			 pid, start, end);
		fd = open(rooted, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		u->st.file_errors++;
		return NULL;
	}
	h = (size_t)(st.st_ino * 31 + st.st_dev) % FILE_BUCKETS;
	for (f = u->files[h]; f; f = f->next) {
		if (!f->vdso && f->dev == st.st_dev && f->ino == st.st_ino) {
			close(fd);
			return f->elf ? f : NULL;
		}
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL || (f->path = strdup(path)) == NULL) {
		free(f);
		close(fd);
		return NULL;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f->elf && file_load(f) < 0) {
		elf_end(f->elf);
		f->elf = NULL;
	}
	/* mapped: the descriptor is not needed any more */
	if (f->elf)
		elf_cntl(f->elf, ELF_C_FDDONE);
	close(fd);
	/* failures stay cached: a bad file costs one attempt */
	f->next = u->files[h];
	u->files[h] = f;
	if (f->elf == NULL) {
		u->st.file_errors++;
		return NULL;
	}
	u->st.files++;
	return f;
}

/* ------------------------------------------------------------- libdwfl */

static int
find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
	 char **file_name, Elf **elfp)
{
	struct ufile *f = *userdata;

	(void)mod;
	(void)modname;
	(void)base;
	if (f == NULL || f->elf == NULL)
		return -1;
	/* a second reference to our handle, which libdwfl will elf_end */
	*elfp = elf_begin(-1, ELF_C_READ_MMAP, f->elf);
	if (*elfp == NULL)
		return -1;
	*file_name = f->vdso ? NULL : strdup(f->path);
	return -1;
}

/* Separate debug files by build id only: never debuginfod, never the network. */
static int
find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
	       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
	       char **debuginfo_file_name)
{
	struct ufile *f = *userdata;

	if (f && f->vdso)
		return -1;
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc,
					    debuginfo_file_name);
}

/*
 * Where separate debug files live: /usr/lib/debug (libdwfl's default when
 * NULL), or DT_DEBUG_DIR as for names (elfsyms.c); tests use that.  Set
 * by dtunw_new before any Dwfl exists.
 */
static char *debuginfo_path;

static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static pid_t
next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct dtunw *u = arg;

	if (*thread_argp != NULL)
		return 0;
	*thread_argp = u;
	return dwfl_pid(dwfl);
}

static bool
get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool
memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct dtunw *u = arg;
	uint64_t off = addr - u->sp;

	(void)dwfl;
	if (addr < u->sp || u->stack_len < 8 || off > u->stack_len - 8)
		return false;
	memcpy(result, u->stack + off, 8);
	return true;
}

/* DWARF register number -> perf register number (x86-64). */
static const uint8_t dwarf2perf[17] = {
	DTUNW_REG_AX, DTUNW_REG_DX, DTUNW_REG_CX, DTUNW_REG_BX,
	DTUNW_REG_SI, DTUNW_REG_DI, DTUNW_REG_BP, DTUNW_REG_SP,
	DTUNW_REG_R8, DTUNW_REG_R9, DTUNW_REG_R10, DTUNW_REG_R11,
	DTUNW_REG_R12, DTUNW_REG_R13, DTUNW_REG_R14, DTUNW_REG_R15,
	DTUNW_REG_IP,
};

static int
perf_reg(uint64_t mask, const uint64_t *regs, unsigned r, uint64_t *val)
{
	if (r >= 64 || !(mask & (1ULL << r)))
		return 0;
	*val = regs[__builtin_popcountll(mask & ((1ULL << r) - 1))];
	return 1;
}

static bool
set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct dtunw *u = arg;

	for (unsigned d = 0; d < 17; d++) {
		uint64_t v;
		Dwarf_Word w;
		if (!perf_reg(u->regs_mask, u->regs, dwarf2perf[d], &v))
			continue;
		w = v;
		if (!dwfl_thread_state_registers(thread, (int)d, 1, &w))
			return false;
	}
	return true;
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* ------------------------------------------------------------- processes */

static struct uproc *
proc_find(struct dtunw *u, uint32_t pid, int create)
{
	struct uproc **pp = &u->procs[pid % PROC_BUCKETS], *p;

	for (p = *pp; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create || (p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->pid = pid;
	p->next = *pp;
	*pp = p;
	return p;
}

static void
proc_drop_dwfl(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = 0;
	p->stale = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->maps[i].state == 1)
			p->maps[i].state = 0;
	p->added = p->n > 0;
}

static void
proc_free(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	for (size_t i = 0; i < p->n; i++)
		free(p->maps[i].path);
	free(p->maps);
	free(p);
}

/* Binary search: the mapping holding addr, or NULL. */
static struct umap *
proc_map_at(struct uproc *p, uint64_t addr)
{
	size_t lo = DTU_UPPER_BOUND(p->n, i, p->maps[i].start, addr);

	if (lo > 0 && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

static int
proc_reserve(struct uproc *p, size_t extra)
{
	return DT_GROW(p->maps, p->cap, p->n, extra, 16);
}

int
dtunw_map(struct dtunw *u, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	  const char *path)
{
	struct uproc *p;
	uint64_t end = start + len;
	size_t i, j;
	char *pcopy;

	if (len == 0 || end < start || path == NULL)
		return 0;
	p = proc_find(u, pid, 1);
	if (p == NULL || proc_reserve(p, 2) < 0 || (pcopy = strdup(path)) == NULL)
		return -1;
	/* cut what the new mapping overlaps (at most one is split in two) */
	for (i = 0; i < p->n; i++) {
		struct umap *m = &p->maps[i];
		if (m->end <= start || m->start >= end)
			continue;
		if (m->state == 1)
			p->stale = 1;
		if (m->start < start && m->end > end) {
			memmove(m + 2, m + 1, (p->n - i - 1) * sizeof(*m));
			p->n++;
			m[1] = m[0];
			m[1].path = strdup(m->path);
			if (m[1].path == NULL) {
				memmove(m + 1, m + 2, (p->n - i - 2) * sizeof(*m));
				p->n--;
				free(pcopy);
				return -1;
			}
			m[1].pgoff += end - m->start;
			m[1].start = end;
			m->end = start;
			i++;
		} else if (m->start < start) {
			m->end = start;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
		} else {
			free(m->path);
			memmove(m, m + 1, (p->n - i - 1) * sizeof(*m));
			p->n--;
			i--;
		}
	}
	for (j = 0; j < p->n && p->maps[j].start < start; j++)
		;
	memmove(&p->maps[j + 1], &p->maps[j], (p->n - j) * sizeof(p->maps[0]));
	p->maps[j] = (struct umap){ .start = start, .end = end, .pgoff = pgoff, .path = pcopy };
	p->n++;
	p->added = 1;
	return 0;
}

void
dtunw_forget(struct dtunw *u, uint32_t pid)
{
	struct uproc **pp = &u->procs[pid % PROC_BUCKETS], *p;

	for (; (p = *pp) != NULL; pp = &p->next) {
		if (p->pid == pid) {
			*pp = p->next;
			proc_free(p);
			return;
		}
	}
}

void
dtunw_fork(struct dtunw *u, uint32_t ppid, uint32_t pid)
{
	struct uproc *pp = proc_find(u, ppid, 0);

	dtunw_forget(u, pid);
	if (pp == NULL)
		return;
	for (size_t i = 0; i < pp->n; i++) {
		const struct umap *m = &pp->maps[i];
		if (dtunw_map(u, pid, m->start, m->end - m->start, m->pgoff, m->path) < 0)
			return;
	}
}

/* Open and place the file of m: its bias from the PT_LOAD holding pgoff. */
static int
map_resolve(struct dtunw *u, struct uproc *p, struct umap *m)
{
	struct ufile *f;
	unsigned k;

	if (m->state < 0)
		return -1;
	if (m->file)
		return 0;
	f = file_get(u, p->pid, m->path, m->start, m->end);
	if (f == NULL) {
		m->state = -1;
		return -1;
	}
	for (k = 0; k < f->nseg; k++) {
		uint64_t off0 = f->seg[k].off & ~0xfffULL;
		if (m->pgoff >= off0 && m->pgoff < f->seg[k].off + f->seg[k].filesz)
			break;
	}
	if (k == f->nseg) {
		m->state = -1;
		return -1;
	}
	m->bias = m->start - m->pgoff + f->seg[k].off - f->seg[k].vaddr;
	m->file = f;
	return 0;
}

static int
proc_report(struct dtunw *u, struct uproc *p)
{
	Elf *arch = NULL;

	if (p->stale)
		proc_drop_dwfl(p);
	if (p->dwfl && !p->added)
		return 0;
	if (p->dwfl == NULL) {
		p->dwfl = dwfl_begin(&dwfl_cbs);
		if (p->dwfl == NULL)
			return -1;
		p->attached = 0;
	}
	dwfl_report_begin_add(p->dwfl);
	for (size_t i = 0; i < p->n; i++) {
		struct umap *m = &p->maps[i];
		Dwfl_Module *mod;
		void **ud;

		if (m->state != 0 || map_resolve(u, p, m) < 0)
			continue;
		mod = dwfl_report_module(p->dwfl, m->path, m->bias + m->file->lo,
					 m->bias + m->file->hi);
		if (mod == NULL) {
			m->state = -1;
			continue;
		}
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = m->file;
		m->state = 1;
		if (arch == NULL)
			arch = m->file->elf;
	}
	if (dwfl_report_end(p->dwfl, NULL, NULL) != 0) {
		proc_drop_dwfl(p);
		return -1;
	}
	p->added = 0;
	if (!p->attached) {
		if (arch == NULL) {
			/* nothing usable yet: try again when mappings arrive */
			dwfl_end(p->dwfl);
			p->dwfl = NULL;
			return -1;
		}
		if (!dwfl_attach_state(p->dwfl, arch, (pid_t)(p->pid ? p->pid : 1),
				       &thread_cbs, u)) {
			proc_drop_dwfl(p);
			return -1;
		}
		p->attached = 1;
	}
	return 0;
}

/* ------------------------------------------------------------- frames */

/*
 * Is there a call instruction ending right before pc in the file?  Direct
 * (e8 rel32) and every length of indirect call (ff /2, optional REX).
 */
static int
after_call(const struct umap *m, uint64_t pc)
{
	const struct ufile *f = m->file;
	uint64_t off = pc - m->start + m->pgoff;
	const unsigned char *b;

	if (f == NULL || f->raw == NULL || off < 7 || off > f->rawlen)
		return 0;
	b = f->raw + off;
	if (b[-5] == 0xe8)
		return 1;
	for (int len = 2; len <= 7; len++) {
		const unsigned char *i = b - len;
		int need;
		if (i[0] >= 0x40 && i[0] <= 0x4f)
			i++;
		if (i[0] != 0xff || ((i[1] >> 3) & 7) != 2)
			continue;
		unsigned mod = i[1] >> 6, rm = i[1] & 7;
		need = (int)(i - (b - len)) + 2;
		if (mod != 3 && rm == 4)
			need++;			/* SIB */
		if (mod == 1)
			need += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			need += 4;
		else if (mod == 0 && rm == 4 && (i[2] & 7) == 5)
			need += 4;		/* SIB without base */
		if (need == len)
			return 1;
	}
	return 0;
}

static int
frame_cb(Dwfl_Frame *state, void *arg)
{
	struct dtunw *u = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool act;
	int have_sp;

	if (!dwfl_frame_pc(state, &pc, &act)) {
		u->bad = 1;
		return DWARF_CB_ABORT;
	}
	have_sp = dwfl_frame_reg(state, 7, &sp) == 0;
	if (u->n > 0) {
		struct umap *m = proc_map_at(u->cur, pc);
		if (m == NULL || m->file == NULL || (!act && !after_call(m, pc)) ||
		    (have_sp && sp < u->last_sp) ||
		    (have_sp && sp == u->last_sp && pc == u->pcs[u->n - 1])) {
			u->bad = 1;
			return DWARF_CB_ABORT;
		}
	}
	if (u->n >= u->max) {
		u->full = 1;
		return DWARF_CB_ABORT;
	}
	u->pcs[u->n++] = pc;
	u->last_act = act;
	if (have_sp)
		u->last_sp = sp;
	return DWARF_CB_OK;
}


/* ------------------------------------------------------------- fast path */

/* Registers a caller frame can know: callee-saved, sp and the return address. */
static const uint8_t tracked[] = { 3, 6, 12, 13, 14, 15, 16 };

static void
rule_fill(struct rule *r, struct ufile *f)
{
	Dwarf_Frame *fr;
	Dwarf_Op *ops, mem[3];
	size_t nops;
	Dwarf_Addr start, end;
	bool sig;

	r->simple = 0;
	if (!f->cfi_tried) {
		f->cfi_tried = 1;
		f->cfi = dwarf_getcfi_elf(f->elf);
	}
	if (f->cfi == NULL || dwarf_cfi_addrframe(f->cfi, r->vaddr, &fr) != 0)
		return;
	if (dwarf_frame_info(fr, &start, &end, &sig) < 0 || sig)
		goto out;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops != 1)
		goto out;
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg16) {
		r->cfa_reg = (int8_t)(ops[0].atom - DW_OP_breg0);
		r->cfa_off = (int64_t)ops[0].number;
	} else if (ops[0].atom == DW_OP_bregx && ops[0].number < NREG) {
		r->cfa_reg = (int8_t)ops[0].number;
		r->cfa_off = (int64_t)ops[0].number2;
	} else {
		goto out;
	}
	for (size_t i = 0; i < sizeof(tracked); i++) {
		unsigned reg = tracked[i];
		if (dwarf_frame_register(fr, (int)reg, mem, &ops, &nops) != 0)
			goto out;
		if (nops == 0) {
			r->how[reg] = ops == mem ? R_UNDEF : R_SAME;
		} else if (ops[0].atom == DW_OP_call_frame_cfa &&
			   (nops == 1 || (nops == 2 && ops[1].atom == DW_OP_plus_uconst))) {
			r->how[reg] = R_AT;
			r->off[reg] = nops == 2 ? (int64_t)ops[1].number : 0;
		} else {
			goto out;	/* expressions, val_offset, register rules */
		}
	}
	r->simple = 1;
out:
	free(fr);
}

static const struct rule *
rule_get(struct dtunw *u, struct ufile *f, uint64_t vaddr)
{
	size_t h = (size_t)((vaddr ^ ((uintptr_t)f >> 4)) * 0x9e3779b97f4a7c15ULL >> 50) % RULES;
	struct rule *r = &u->rules[h];

	if (r->file != f || r->vaddr != vaddr) {
		r->file = f;
		r->vaddr = vaddr;
		rule_fill(r, f);
	}
	return r;
}

/*
 * Unwind with cached rules alone.  1: done (u->n, u->bad, u->full and
 * *outer set); 0: something needs libdwfl (no rule, an expression, a
 * signal frame, a register we do not know), start over there.  Frames
 * are checked exactly as in frame_cb, so both paths agree.
 */
static int
fast_unwind(struct dtunw *u, struct uproc *p, int *outer)
{
	uint64_t r[NREG];
	uint32_t known = 0;
	int act = 1;

	for (unsigned d = 0; d < NREG; d++)
		if (perf_reg(u->regs_mask, u->regs, dwarf2perf[d], &r[d]))
			known |= 1U << d;
	*outer = 0;
	for (;;) {
		uint64_t pc = r[16], sp = r[7];
		struct umap *m = proc_map_at(p, pc);

		if (u->n > 0) {
			if (m == NULL || m->file == NULL || (!act && !after_call(m, pc)) ||
			    sp < u->last_sp || (sp == u->last_sp && pc == u->pcs[u->n - 1])) {
				u->bad = 1;
				return 1;
			}
		} else if (m == NULL || m->file == NULL || m->state != 1) {
			return 0;
		}
		if (u->n >= u->max) {
			u->full = 1;
			return 1;
		}
		u->pcs[u->n++] = pc;
		u->last_sp = sp;

		const struct rule *ru = rule_get(u, m->file, pc - (act ? 0 : 1) - m->bias);
		if (!ru->simple || !(known & (1U << ru->cfa_reg)))
			return 0;
		uint64_t cfa = r[ru->cfa_reg] + (uint64_t)ru->cfa_off;
		uint64_t nr[NREG];
		uint32_t nknown = 0;
		for (size_t i = 0; i < sizeof(tracked); i++) {
			unsigned reg = tracked[i];
			uint64_t a = cfa + (uint64_t)ru->off[reg], off = a - u->sp;
			switch (ru->how[reg]) {
			case R_SAME:
				nr[reg] = r[reg];
				nknown |= known & (1U << reg);
				break;
			case R_UNDEF:
				break;
			case R_AT:
				if (a < u->sp || u->stack_len < 8 || off > u->stack_len - 8) {
					if (reg == 16) {
						u->bad = 1;	/* the copy ends here */
						return 1;
					}
					break;		/* unknown, as in libdwfl */
				}
				memcpy(&nr[reg], u->stack + off, 8);
				nknown |= 1U << reg;
				break;
			}
		}
		if (!(nknown & (1U << 16))) {
			*outer = ru->how[16] == R_UNDEF;
			if (!*outer)
				u->bad = 1;
			return 1;
		}
		nr[7] = cfa;
		nknown |= 1U << 7;
		memcpy(r, nr, sizeof(r));
		known = nknown;
		act = 0;
	}
}

/*
 * Does the CFI of pc say its frame has no caller (return address
 * undefined, as in _start)?  libdwfl also ends the walk without an error
 * when a return address could not be read, so its word is not enough.
 */
static int
outermost(Dwfl *dwfl, uint64_t pc, int ret_addr)
{
	Dwfl_Module *mod;

	if (ret_addr)
		pc--;		/* the call, not what follows it */
	mod = dwfl_addrmodule(dwfl, pc);
	if (mod == NULL)
		return 0;
	for (int k = 0; k < 2; k++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = k == 0 ? dwfl_module_eh_cfi(mod, &bias)
					: dwfl_module_dwarf_cfi(mod, &bias);
		Dwarf_Frame *fr;
		Dwarf_Op mem[3], *ops;
		size_t nops;
		int und;

		if (cfi == NULL || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
			continue;
		/* 16: rip, x86-64's return address column */
		und = dwarf_frame_register(fr, 16, mem, &ops, &nops) == 0 && nops == 0 &&
		      ops == mem;
		free(fr);
		return und;
	}
	return 0;
}

int
dtunw_unwind(struct dtunw *u, uint32_t pid, const uint64_t *regs, uint64_t regs_mask,
	     const void *stack, size_t stack_len, uint64_t *pcs, unsigned max, int *truncated)
{
	uint64_t ip, sp;
	struct uproc *p;
	struct umap *m;
	int r, outer, complete;

	if (truncated)
		*truncated = 1;
	u->st.samples++;
	if (max == 0 || !perf_reg(regs_mask, regs, DTUNW_REG_IP, &ip))
		return 0;
	pcs[0] = ip;
	p = proc_find(u, pid, 0);
	/* ip must be in a file we could read: CFI of what used to be mapped
	 * there (or of a neighbour sharing its module) would invent callers */
	if (!perf_reg(regs_mask, regs, DTUNW_REG_SP, &sp) || p == NULL ||
	    proc_report(u, p) < 0 || p->dwfl == NULL ||
	    (m = proc_map_at(p, ip)) == NULL || m->file == NULL) {
		u->st.frames++;
		return 1;
	}
	u->cur = p;
	u->regs = regs;
	u->regs_mask = regs_mask;
	u->stack = stack;
	u->stack_len = stack ? stack_len : 0;
	u->sp = sp;
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	u->last_sp = sp;
	u->bad = u->full = 0;
	if (!u->dwfl_only && u->rules && fast_unwind(u, p, &outer)) {
		u->st.fast++;
		complete = outer && !u->bad && !u->full;
	} else {
		u->n = 0;
		u->last_sp = sp;
		u->bad = u->full = 0;
		r = dwfl_getthread_frames(p->dwfl, (pid_t)(pid ? pid : 1), frame_cb, u);
		if (u->n == 0)
			pcs[u->n++] = ip;
		complete = r == 0 && !u->bad && !u->full &&
			   outermost(p->dwfl, u->pcs[u->n - 1], u->n > 1 && !u->last_act);
	}
	if (complete) {
		if (truncated)
			*truncated = 0;
		u->st.complete++;
	}
	u->cur = NULL;
	u->stack = NULL;
	u->st.frames += u->n;
	return (int)u->n;
}

/* ------------------------------------------------------------- life */

struct dtunw *
dtunw_new(void)
{
	struct dtunw *u;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	if (debuginfo_path == NULL) {
		const char *d = getenv("DT_DEBUG_DIR");
		if (d && d[0] == '/')
			debuginfo_path = strdup(d);	/* kept: Dwfls of any dtunw use it */
	}
	u = calloc(1, sizeof(*u));
	if (u && (u->rules = calloc(RULES, sizeof(*u->rules))) == NULL) {
		free(u);
		return NULL;
	}
	return u;
}

void
dtunw_free(struct dtunw *u)
{
	if (u == NULL)
		return;
	/* processes first: their Dwfls hold references to the files */
	for (size_t i = 0; i < PROC_BUCKETS; i++) {
		struct uproc *p, *n;
		for (p = u->procs[i]; p; p = n) {
			n = p->next;
			proc_free(p);
		}
	}
	for (size_t i = 0; i < FILE_BUCKETS; i++) {
		struct ufile *f, *n;
		for (f = u->files[i]; f; f = n) {
			n = f->next;
			file_free(f);
		}
	}
	free(u->rules);
	free(u);
}

void
dtunw_set_dwfl_only(struct dtunw *u, int on)
{
	u->dwfl_only = on;
}

void
dtunw_get_stats(const struct dtunw *u, struct dtunw_stats *st)
{
	*st = u->st;
}
