/*
 * jitdump.c - see jitdump.h.  The layout is perf's (tools/perf/util/
 * jitdump.h): a header (u32 magic 'JiTD', version, header size, ELF
 * machine, pad, pid, u64 timestamp, flags), then records, each a u32 id,
 * u32 total size and u64 timestamp, then per id: CODE_LOAD (0) u32 pid,
 * tid, u64 vma, code_addr, code_size, code_index, the name NUL
 * terminated, the code bytes; CODE_MOVE (1) u32 pid, tid, u64 vma,
 * old_code_addr, new_code_addr, code_size, code_index.  Others are
 * skipped by their size.  The code bytes are never read: records are
 * read one at a time and code skipped by offset, so a dump of any size
 * costs memory for its names only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "jitdump.h"
#include "util.h"

#define JITD_MAGIC	0x4A695444U
#define JITD_LOAD	0
#define JITD_MOVE	1
#define NAME_MAX_LEN	4096

struct jload {
	uint64_t	addr, size, index;
	size_t		order;		/* record number: later wins */
	size_t		name;		/* offset in the names buffer */
};

struct jd {
	struct jload	*v;
	size_t		n, cap;
	struct dt_htab	ix;		/* code index -> latest entry for it */
	char		*names;
	size_t		nlen, ncap;
};

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static uint64_t idx_hash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct jd *)ctx)->v[e].index);
}

static struct jload *by_index(struct jd *d, uint64_t index)
{
	uint32_t e, best = DT_HTAB_NONE;

	for (size_t i = dt_htab_first(&d->ix, dt_htab_hash_int(index));
	     (e = dt_htab_at(&d->ix, i)) != DT_HTAB_NONE; i = dt_htab_next(&d->ix, i))
		if (d->v[e].index == index && (best == DT_HTAB_NONE || e > best))
			best = e;
	return best == DT_HTAB_NONE ? NULL : &d->v[best];
}

static int add(struct jd *d, uint64_t addr, uint64_t size, uint64_t index, size_t name)
{
	if (DT_GROW(d->v, d->cap, d->n, 1, 256))
		return -1;
	d->v[d->n] = (struct jload){ addr, size, index, d->n, name };
	if (dt_htab_add(&d->ix, dt_htab_hash_int(index), (uint32_t)d->n, idx_hash, d))
		return -1;
	d->n++;
	return 0;
}

static int jload_cmp(const void *a, const void *b)
{
	const struct jload *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int jitdump_read(int fd, struct dtcap_sym **syms, size_t *nsyms, char **names, char *err,
		 size_t errlen)
{
	uint32_t hdr[10] = { 0 };
	struct stat st;
	struct jd d = { 0 };
	off_t off;
	int ret = -1;

	*syms = NULL;
	*nsyms = 0;
	*names = NULL;
	if (pread_all(fd, hdr, sizeof(hdr), 0) || hdr[0] != JITD_MAGIC) {
		dtu_seterr(err, errlen, hdr[0] == __builtin_bswap32(JITD_MAGIC) ?
			   "a jitdump of the other byte order" : "not a jitdump");
		return -1;
	}
	if (hdr[2] < sizeof(hdr) || hdr[2] > 4096) {
		dtu_seterr(err, errlen, "jitdump header of %u bytes", hdr[2]);
		return -1;
	}
	/* the size now: a writer appending later is read next time */
	if (fstat(fd, &st) < 0) {
		dtu_seterr(err, errlen, "%s", strerror(errno));
		return -1;
	}
	off = hdr[2];
	for (size_t rec = 0; rec < JITDUMP_MAX_RECORDS; rec++) {
		uint32_t pre[4];	/* id, total size, timestamp */
		if (pread_all(fd, pre, sizeof(pre), off))
			break;		/* the end, or a record still being written */
		uint32_t id = pre[0], total = pre[1];
		if (total < sizeof(pre))
			break;		/* damaged: what came before stands */
		if ((uint64_t)off + total > (uint64_t)st.st_size)
			break;		/* still being written */
		if (id == JITD_LOAD) {
			uint64_t f[5];	/* pid|tid, vma, code_addr, code_size, code_index */
			if (total < sizeof(pre) + sizeof(f) + 1 ||
			    pread_all(fd, f, sizeof(f), off + (off_t)sizeof(pre)))
				break;
			uint64_t addr = f[2], size = f[3], index = f[4];
			uint64_t room = total - sizeof(pre) - sizeof(f);
			if (size >= room || addr + size < addr)
				goto next;	/* no room for a name: skipped */
			size_t nl = (size_t)(room - size);
			if (nl > NAME_MAX_LEN)
				nl = NAME_MAX_LEN;
			if (DT_GROW(d.names, d.ncap, d.nlen, nl + 1, 4096))
				goto out_oom;
			if (pread_all(fd, d.names + d.nlen, nl, off + (off_t)(sizeof(pre) + sizeof(f))))
				break;
			d.names[d.nlen + nl] = '\0';
			size_t l = strlen(d.names + d.nlen);
			if (l == 0 || size == 0)
				goto next;
			if (add(&d, addr, size, index, d.nlen))
				goto out_oom;
			d.nlen += l + 1;
		} else if (id == JITD_MOVE) {
			uint64_t f[6];	/* pid|tid, vma, old, new, code_size, code_index */
			if (total < sizeof(pre) + sizeof(f) ||
			    pread_all(fd, f, sizeof(f), off + (off_t)sizeof(pre)))
				break;
			struct jload *l = by_index(&d, f[5]);
			if (l && f[4] && f[3] + f[4] >= f[3]) {
				size_t name = l->name;
				if (add(&d, f[3], f[4], f[5], name))
					goto out_oom;
			}
		}
next:
		off += total;
	}
	if (d.n)
		qsort(d.v, d.n, sizeof(*d.v), jload_cmp);
	struct dtcap_sym *sv = d.n ? malloc(d.n * sizeof(*sv)) : NULL;
	if (d.n && !sv)
		goto out_oom;
	size_t k = 0;
	for (size_t i = 0; i < d.n; i++) {
		if (k && sv[k - 1].addr == d.v[i].addr)
			k--;
		/* names are offsets until the buffer stops moving */
		sv[k++] = (struct dtcap_sym){ d.v[i].addr, d.v[i].size,
					      d.names + d.v[i].name };
	}
	*syms = sv;
	*nsyms = k;
	*names = d.names;
	d.names = NULL;
	ret = 0;
	goto out;
out_oom:
	dtu_seterr(err, errlen, "out of memory");
out:
	free(d.v);
	free(d.names);
	dt_htab_free(&d.ix);
	return ret;
}
