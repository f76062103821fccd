/*
 * flame.c - folding tree and writers (see flame.h).
 *
 * The SVG is self-contained: frames are <g class="f"> elements carrying
 * their position in samples (data-s: offset from the left of the whole
 * graph, data-n: width, data-d: depth) so the inline script can zoom and
 * search without any other data; search merges the intervals of matched
 * frames so nested matches are not counted twice.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "flame.h"
#include "termsafe.h"
#include "util.h"

struct fname {
	char		*s;
	uint32_t	kind;
	uint32_t	len;
};

/*
 * A node is made after its parent, so its number is greater: settle()
 * sums the totals up and the depths down in one sequential pass each,
 * where adding a stack used to touch every node of its path.
 */
struct fnode {
	uint32_t	parent;
	uint32_t	depth;		/* settle() */
	uint64_t	total[2];	/* settle(): self plus the children's */
	uint64_t	self[2];
};

/* What finding a child reads, apart from the nodes and dense: a lookup
 * reads 16 bytes a node, not a node's 40 beside them (cache misses were
 * most of a fold's time). */
struct flink {
	uint32_t	name;		/* UINT32_MAX for the root */
	uint32_t	next;		/* the next sibling, 0 = none (root is 0) */
	uint32_t	first;		/* the first child, 0 = none */
	uint32_t	nkids;
};

struct flame {
	struct fname	*names;
	uint32_t	nnames, capnames;
	struct dt_htab	nhash;		/* name text -> name id */

	struct fnode	*nodes;
	struct flink	*links;		/* beside nodes, as many */
	uint32_t	nnodes, capnodes, caplinks;
	int		unsettled;	/* totals and depths are not summed */
	/*
	 * (parent, name) -> child, for the parents of more than WIDE
	 * children only: a graph of a million events is hundreds of
	 * thousands of nodes, mostly chains of one child each, and indexing
	 * every node cost a cache miss per node made (the table is far
	 * beyond the caches) where the chain's one sibling list is as quick.
	 * The entries carry their key, so a probe reads no node.
	 */
	struct dt_htab	chash;
	struct cent {
		uint32_t	parent, name, node;
	}		*cents;
	uint32_t	capcents;

	char		*fixbuf;	/* dtu_utf8_fix's copies */
	size_t		fixcap;
	char		*tmp;		/* flame_intern's cleaned text */
	size_t		tmpcap;
};

static uint64_t strhash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return h;
}

struct flame *flame_new(void)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	if (DT_GROW(f->nodes, f->capnodes, 0, 1, 1024) ||
	    DT_GROW(f->links, f->caplinks, 0, 1, 1024)) {
		flame_free(f);
		return NULL;
	}
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	f->links[0] = (struct flink){ UINT32_MAX, 0, 0, 0 };
	f->nnodes = 1;
	return f;
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	for (uint32_t i = 0; i < f->nnames; i++)
		free(f->names[i].s);
	free(f->names);
	dt_htab_free(&f->nhash);
	free(f->nodes);
	free(f->links);
	dt_htab_free(&f->chash);
	free(f->cents);
	free(f->fixbuf);
	free(f->tmp);
	free(f);
}

/* The stored (cleaned) text, which is also what lookups hash. */
static uint64_t name_hash(const void *ctx, uint32_t e)
{
	const struct flame *f = ctx;
	return strhash(f->names[e].s, f->names[e].len);
}

static uint64_t cent_hash(const void *ctx, uint32_t e)
{
	const struct flame *f = ctx;
	return mix(f->cents[e].parent, f->cents[e].name);
}

int64_t flame_intern(struct flame *f, const char *name, enum flame_kind kind)
{
	/* Names as every output writes them (valid UTF-8; ';' separates
	 * folded frames and a newline ends a line, so neither is kept), and
	 * looked up as written, so two spellings of one name are one name. */
	size_t len;
	const char *v = dtu_utf8_fix(name, strlen(name), &len, &f->fixbuf, &f->fixcap);
	if (v == NULL)
		return -1;
	/* cleaned in a scratch buffer: most calls find the name (every
	 * sample's comm is interned), and need no copy of their own */
	if (DT_GROW(f->tmp, f->tmpcap, 0, len + 1, 256))
		return -1;
	char *t = f->tmp;
	for (size_t i = 0; i < len; i++)
		t[i] = v[i] == ';' ? ':' : (v[i] == '\n' || v[i] == '\r') ? ' ' : v[i];
	t[len] = 0;
	uint64_t h = strhash(t, len);
	uint32_t e;

	for (size_t i = dt_htab_first(&f->nhash, h); (e = dt_htab_at(&f->nhash, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&f->nhash, i)) {
		const struct fname *n = &f->names[e];
		if (n->len == len && !memcmp(n->s, t, len))
			return e;
	}
	if (DT_GROW(f->names, f->capnames, f->nnames, 1, 256))
		return -1;
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, t, len + 1);
	f->names[f->nnames] = (struct fname){ copy, kind, (uint32_t)len };
	if (dt_htab_add(&f->nhash, h, f->nnames, name_hash, f)) {
		free(copy);
		return -1;
	}
	return f->nnames++;
}

#define WIDE	8

static int index_child(struct flame *f, uint32_t parent, uint32_t name, uint32_t node)
{
	uint32_t e = (uint32_t)f->chash.n;

	if (DT_GROW(f->cents, f->capcents, e, 1, 256))
		return -1;
	f->cents[e] = (struct cent){ parent, name, node };
	return dt_htab_add(&f->chash, mix(parent, name), e, cent_hash, f);
}

static int64_t child(struct flame *f, uint32_t parent, uint32_t name)
{
	struct flink *p = &f->links[parent];
	uint32_t e;

	if (p->nkids > WIDE) {
		uint64_t h = mix(parent, name);
		for (size_t i = dt_htab_first(&f->chash, h);
		     (e = dt_htab_at(&f->chash, i)) != DT_HTAB_NONE; i = dt_htab_next(&f->chash, i))
			if (f->cents[e].parent == parent && f->cents[e].name == name)
				return f->cents[e].node;
	} else {
		for (uint32_t k = p->first; k; k = f->links[k].next)
			if (f->links[k].name == name)
				return k;
	}
	if (DT_GROW(f->nodes, f->capnodes, f->nnodes, 1, 1024) ||
	    DT_GROW(f->links, f->caplinks, f->nnodes, 1, 1024))
		return -1;
	p = &f->links[parent];
	uint32_t id = f->nnodes;
	struct fnode *n = &f->nodes[id];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	/* the family past WIDE is indexed whole, then each newcomer */
	if (p->nkids == WIDE) {
		for (uint32_t k = p->first; k; k = f->links[k].next)
			if (index_child(f, parent, f->links[k].name, k))
				return -1;
	}
	if (p->nkids >= WIDE && index_child(f, parent, name, id))
		return -1;
	f->nnodes++;
	f->unsettled = 1;
	p->nkids++;
	f->links[id] = (struct flink){ name, p->first, 0, 0 };
	p->first = id;
	return id;
}

int flame_add(struct flame *f, const uint32_t *ids, unsigned n, uint64_t count, int side)
{
	uint32_t cur = 0;

	side = side ? 1 : 0;
	for (unsigned i = 0; i < n; i++) {
		int64_t c = child(f, cur, ids[i]);
		if (c < 0)
			return -1;
		cur = (uint32_t)c;
	}
	f->nodes[cur].self[side] += count;
	f->unsettled = 1;
	return 0;
}

int64_t flame_node(struct flame *f, const uint32_t *ids, unsigned n)
{
	uint32_t cur = 0;

	for (unsigned i = 0; i < n; i++) {
		int64_t c = child(f, cur, ids[i]);
		if (c < 0)
			return -1;
		cur = (uint32_t)c;
	}
	return cur;
}

int64_t flame_add_at(struct flame *f, uint32_t node, const uint32_t *ids, unsigned n,
		     uint64_t count, int side)
{
	side = side ? 1 : 0;
	uint32_t cur = node;
	for (unsigned i = 0; i < n; i++) {
		int64_t c = child(f, cur, ids[i]);
		if (c < 0)
			return -1;
		cur = (uint32_t)c;
	}
	f->nodes[cur].self[side] += count;
	f->unsettled = 1;
	return cur;
}

/*
 * The totals and depths of the nodes, before anything reads them.  The
 * writers take a const graph: what they see of it (the stacks and their
 * counts) does not change here, and no struct flame is ever defined const.
 */
static void settle(const struct flame *cf)
{
	struct flame *f = (struct flame *)cf;
	struct fnode *nd = f->nodes;

	if (!f->unsettled)
		return;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		nd[i].depth = i ? nd[nd[i].parent].depth + 1 : 0;
		nd[i].total[0] = nd[i].self[0];
		nd[i].total[1] = nd[i].self[1];
	}
	for (uint32_t i = f->nnodes; i-- > 1;) {
		nd[nd[i].parent].total[0] += nd[i].total[0];
		nd[nd[i].parent].total[1] += nd[i].total[1];
	}
	f->unsettled = 0;
}

const char *flame_name(const struct flame *f, uint32_t id, enum flame_kind *kind)
{
	if (id >= f->nnames)
		return NULL;
	if (kind)
		*kind = (enum flame_kind)f->names[id].kind;
	return f->names[id].s;
}

int flame_walk(const struct flame *f, int side, flame_path_fn fn, void *ctx)
{
	uint32_t maxd = 0, *path;
	int rc = 0;

	settle(f);
	side = side ? 1 : 0;
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (f->nodes[i].depth > maxd)
			maxd = f->nodes[i].depth;
	if ((path = malloc((maxd + 1) * sizeof(*path))) == NULL)
		return -1;
	/* Nodes are numbered as made, so the walk is in first-seen order;
	 * each path is read back up its parent links. */
	for (uint32_t i = 1; i < f->nnodes && rc == 0; i++) {
		const struct fnode *n = &f->nodes[i];
		if (n->self[side] == 0)
			continue;
		uint32_t d = n->depth;
		for (uint32_t x = i; x != 0; x = f->nodes[x].parent)
			path[--d] = f->links[x].name;
		rc = fn(ctx, path, n->depth, n->self[side]);
	}
	free(path);
	return rc;
}

/* ---------------------------------------------------- folded input */

int flame_read_folded(struct flame *f, FILE *in, uint64_t *samples, char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint32_t *ids = NULL;
	size_t capids = 0;
	uint64_t lineno = 0, sum = 0;
	int rc = -1;

	errno = 0;
	while ((len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		size_t n = (size_t)len;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		if (memchr(line, '\0', n)) {
			snprintf(err, errlen, "line %" PRIu64 ": a NUL byte", lineno);
			goto out;
		}
		line[n] = '\0';
		char *sp = strrchr(line, ' ');
		const char *num = sp ? sp + 1 : line;
		if (!sp || sp == line || !*num || num[strspn(num, "0123456789")]) {
			snprintf(err, errlen, "line %" PRIu64 ": want \"frame;frame;... COUNT\"",
				 lineno);
			goto out;
		}
		errno = 0;
		uint64_t cnt = strtoull(num, NULL, 10);
		if (errno == ERANGE || cnt > UINT64_MAX - sum) {
			snprintf(err, errlen, "line %" PRIu64 ": counts past %" PRIu64, lineno,
				 UINT64_MAX);
			goto out;
		}
		sum += cnt;
		*sp = '\0';
		unsigned nf = 0;
		for (char *fr = line, *semi;; fr = semi + 1) {
			if ((semi = strchr(fr, ';')) != NULL)
				*semi = '\0';
			int64_t id = flame_intern(f, fr, FLAME_USER);
			if (id < 0 || DT_GROW(ids, capids, nf, 1, 64))
				goto oom;
			ids[nf++] = (uint32_t)id;
			if (!semi)
				break;
		}
		if (flame_add(f, ids, nf, cnt, 0))
			goto oom;
	}
	if (ferror(in)) {
		snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
		goto out;
	}
	*samples = sum;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(line);
	free(ids);
	return rc;
}

/* ------------------------------------------------ sorted children */

struct sorted {
	uint32_t	*kids;		/* all children grouped by parent */
	uint32_t	*off;		/* parent -> first index in kids */
	uint32_t	*cnt;
	uint32_t	*rank;		/* name_ranks */
};

static const struct flame *rank_names;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(rank_names->names[*(const uint32_t *)a].s,
		      rank_names->names[*(const uint32_t *)b].s);
}

/*
 * Each name id's place in strcmp order: children are sorted by name, and
 * comparing two integers instead of two strings (through two arrays) is
 * most of what sorting hundreds of thousands of nodes costs.  Interned
 * names are distinct strings, so the order is the same.
 */
static uint32_t *name_ranks(const struct flame *f)
{
	uint32_t *ids = malloc((f->nnames + 1) * sizeof(uint32_t));
	uint32_t *rank = malloc((f->nnames + 1) * sizeof(uint32_t));

	if (!ids || !rank) {
		free(ids);
		free(rank);
		return NULL;
	}
	for (uint32_t i = 0; i < f->nnames; i++)
		ids[i] = i;
	rank_names = f;
	qsort(ids, f->nnames, sizeof(uint32_t), name_cmp);
	for (uint32_t i = 0; i < f->nnames; i++)
		rank[ids[i]] = i;
	free(ids);
	return rank;
}

static const struct flame *sort_ctx;
static const uint32_t *sort_rank;

static int kid_cmp(const void *a, const void *b)
{
	const struct flink *l = sort_ctx->links;
	uint32_t x = sort_rank[l[*(const uint32_t *)a].name], y = sort_rank[l[*(const uint32_t *)b].name];

	return x < y ? -1 : x > y;
}

static int sort_tree(const struct flame *f, struct sorted *s)
{
	uint32_t n = f->nnodes;

	s->kids = malloc(n * sizeof(uint32_t));
	s->off = calloc(n + 1, sizeof(uint32_t));
	s->cnt = calloc(n, sizeof(uint32_t));
	s->rank = name_ranks(f);
	if (!s->kids || !s->off || !s->cnt || !s->rank) {
		free(s->kids), free(s->off), free(s->cnt), free(s->rank);
		return -1;
	}
	for (uint32_t i = 1; i < n; i++)
		s->cnt[f->nodes[i].parent]++;
	uint32_t acc = 0;
	for (uint32_t i = 0; i < n; i++) {
		s->off[i] = acc;
		acc += s->cnt[i];
	}
	s->off[n] = acc;
	memset(s->cnt, 0, n * sizeof(uint32_t));
	for (uint32_t i = 1; i < n; i++) {
		uint32_t p = f->nodes[i].parent;
		s->kids[s->off[p] + s->cnt[p]++] = i;
	}
	sort_ctx = f;
	sort_rank = s->rank;
	for (uint32_t i = 0; i < n; i++)
		if (s->cnt[i] > 1)
			qsort(s->kids + s->off[i], s->cnt[i], sizeof(uint32_t), kid_cmp);
	return 0;
}

static void sorted_free(struct sorted *s)
{
	free(s->kids);
	free(s->off);
	free(s->cnt);
	free(s->rank);
}

/*
 * The outputs' text is built by hand in a buffer written out in big
 * pieces: a graph is tens of thousands of frames, each a dozen numbers,
 * and stdio's formatting was most of the time to write one.  Each helper
 * writes exactly what the printf conversion named beside it would.
 */
struct sbuf {
	char		*p;
	size_t		len, cap;
	FILE		*out;
	int		err;
};

static void sb_flush(struct sbuf *b)
{
	if (b->len && fwrite(b->p, 1, b->len, b->out) != b->len)
		b->err = 1;
	b->len = 0;
}

/* Room for n more bytes (n <= cap / 2). */
static inline char *sb_room(struct sbuf *b, size_t n)
{
	if (b->cap - b->len < n)
		sb_flush(b);
	return b->p + b->len;
}

static inline void sb_mem(struct sbuf *b, const char *s, size_t n)
{
	if (n > b->cap / 2) {
		sb_flush(b);
		if (fwrite(s, 1, n, b->out) != n)
			b->err = 1;
		return;
	}
	memcpy(sb_room(b, n), s, n);
	b->len += n;
}

#define SB_LIT(b, lit)	sb_mem((b), (lit), sizeof(lit) - 1)

static inline void sb_str(struct sbuf *b, const char *s)
{
	sb_mem(b, s, strlen(s));
}

/* "%" PRIu64 */
static inline void sb_u64(struct sbuf *b, uint64_t v)
{
	char t[20];
	int n = 0;
	do {
		t[sizeof(t) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_mem(b, t + sizeof(t) - n, (size_t)n);
}

/*
 * v with d (1 or 2) decimals, exactly as printf's "%.*f": v * 10^d is exact
 * in long double (64-bit mantissa: 53 bits times at most 7), and rintl
 * rounds that exact value to nearest, ties to even, as glibc does.  A
 * graph has one rect per frame: printf's arbitrary-precision path was a
 * tenth of the time to write one.  Values beyond 1e15 go to snprintf.
 */
static void sb_fixed(struct sbuf *b, double v, int d)
{
	long double sc = d == 1 ? 10.0L : 100.0L, a = fabsl((long double)v) * sc;
	if (!(a < 1e15L)) {
		char t[400];
		int n = snprintf(t, sizeof(t), "%.*f", d, v);
		sb_mem(b, t, n > 0 ? (size_t)n : 0);
		return;
	}
	unsigned long long r = (unsigned long long)rintl(a);
	unsigned dv = d == 1 ? 10 : 100;
	if (signbit(v))
		SB_LIT(b, "-");
	sb_u64(b, r / dv);
	char *o = sb_room(b, 3);
	unsigned fp = (unsigned)(r % dv);
	o[0] = '.';
	if (d == 1) {
		o[1] = (char)('0' + fp);
		b->len += 2;
	} else {
		o[1] = (char)('0' + fp / 10);
		o[2] = (char)('0' + fp % 10);
		b->len += 3;
	}
}

/* xml_esc's text into the buffer */
static void sb_esc(struct sbuf *b, const char *s)
{
	while (*s) {
		/* the plain run first, in one copy */
		const char *r = s;
		while ((unsigned char)*r >= 0x20 && (unsigned char)*r < 0x80 && *r != '&' &&
		       *r != '<' && *r != '>' && *r != '"')
			r++;
		if (r > s) {
			sb_mem(b, s, (size_t)(r - s));
			s = r;
			continue;
		}
		switch (*s) {
		case '&': SB_LIT(b, "&amp;"); break;
		case '<': SB_LIT(b, "&lt;"); break;
		case '>': SB_LIT(b, "&gt;"); break;
		case '"': SB_LIT(b, "&quot;"); break;
		default: {
			/* XML 1.0 holds no control characters: U+FFFD, as for a
			 * byte that is not UTF-8 */
			const char *o;
			size_t ol, n = dtu_utf8_char(s, strnlen(s, 4), &o, &ol);
			if ((unsigned char)*s < 0x20)
				o = DTU_UTF8_BAD, ol = sizeof(DTU_UTF8_BAD) - 1;
			sb_mem(b, o, ol);
			s += n;
			continue;
		}
		}
		s++;
	}
}

/* ---------------------------------------------------------- folded */

struct fold_ctx {
	struct sbuf	sb;
	const struct flame *f;
	const struct sorted *s;
	int		diff;
	uint32_t	*pathids;	/* name ids on the way down */
};

static void fold_walk(struct fold_ctx *c, uint32_t node, uint32_t depth)
{
	const struct fnode *n = &c->f->nodes[node];

	if (node) {
		c->pathids[depth - 1] = c->f->links[node].name;
		int has = c->diff ? (n->self[0] || n->self[1]) : n->self[0] != 0;
		if (has) {
			for (uint32_t i = 0; i < depth; i++) {
				const struct fname *nm = &c->f->names[c->pathids[i]];
				if (i)
					SB_LIT(&c->sb, ";");
				/* the stored text, up to a NUL as fputs wrote it */
				sb_str(&c->sb, nm->s);
			}
			SB_LIT(&c->sb, " ");
			sb_u64(&c->sb, n->self[0]);
			if (c->diff) {
				SB_LIT(&c->sb, " ");
				sb_u64(&c->sb, n->self[1]);
			}
			SB_LIT(&c->sb, "\n");
		}
	}
	for (uint32_t k = 0; k < c->s->cnt[node]; k++)
		fold_walk(c, c->s->kids[c->s->off[node] + k], depth + 1);
}

int flame_write_folded(const struct flame *f, FILE *out, int diff)
{
	struct sorted s;
	uint32_t maxd = 0;

	settle(f);
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (f->nodes[i].depth > maxd)
			maxd = f->nodes[i].depth;
	if (sort_tree(f, &s))
		return -1;
	struct fold_ctx c = { { malloc(1 << 18), 0, 1 << 18, out, 0 }, f, &s, diff,
			      calloc(maxd + 1, sizeof(uint32_t)) };
	if (!c.pathids || !c.sb.p) {
		free(c.pathids);
		free(c.sb.p);
		sorted_free(&s);
		return -1;
	}
	fold_walk(&c, 0, 0);
	sb_flush(&c.sb);
	free(c.sb.p);
	free(c.pathids);
	sorted_free(&s);
	return c.sb.err || fflush(out) || ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------ tree */

static const struct flame *tree_ctx;

static int kid_total_cmp(const void *a, const void *b)
{
	const struct flame *f = tree_ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct fnode *x = &f->nodes[i], *y = &f->nodes[j];

	if (x->total[0] != y->total[0])
		return x->total[0] < y->total[0] ? 1 : -1;
	return kid_cmp(a, b);
}

struct tree_ctx {
	struct sbuf	sb;
	const struct flame *f;
	const struct sorted *s;
	uint64_t	pct_of;
	double		minpct;
};

static void tree_walk(struct tree_ctx *c, uint32_t node, uint32_t depth)
{
	const struct fnode *n = &c->f->nodes[node];

	if (node) {
		double pct = c->pct_of ? 100.0 * (double)n->total[0] / (double)c->pct_of : 0.0;
		if (pct < c->minpct)
			return;
		char num[64];
		snprintf(num, sizeof(num), "%7.2f%% %10" PRIu64 "  ", pct, n->total[0]);
		sb_str(&c->sb, num);
		for (uint32_t i = 1; i < depth; i++)
			SB_LIT(&c->sb, "  ");
		/* a terminal's text, not a machine format: escaped (termsafe.h) */
		sb_str(&c->sb, dtt_str(c->f->names[c->f->links[node].name].s));
		SB_LIT(&c->sb, "\n");
	}
	for (uint32_t k = 0; k < c->s->cnt[node]; k++)
		tree_walk(c, c->s->kids[c->s->off[node] + k], depth + 1);
}

int flame_write_tree(const struct flame *f, FILE *out, uint64_t pct_of, double minpct)
{
	struct sorted s;

	settle(f);
	if (sort_tree(f, &s))
		return -1;
	tree_ctx = f;
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (s.cnt[i] > 1)
			qsort(s.kids + s.off[i], s.cnt[i], sizeof(uint32_t), kid_total_cmp);
	struct tree_ctx c = { { malloc(1 << 16), 0, 1 << 16, out, 0 }, f, &s, pct_of, minpct };
	if (!c.sb.p) {
		sorted_free(&s);
		return -1;
	}
	tree_walk(&c, 0, 0);
	sb_flush(&c.sb);
	free(c.sb.p);
	sorted_free(&s);
	return c.sb.err || fflush(out) || ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------- SVG */

#define FRAMEH	16	/* defaults of flamegraph.pl */
#define FONTSZ	12
#define XPAD	10

static void xml_esc(FILE *out, const char *s)
{
	while (*s) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: {
			/* as in the escaper above */
			const char *o;
			size_t ol, n = dtu_utf8_char(s, strnlen(s, 4), &o, &ol);
			if ((unsigned char)*s < 0x20)
				o = DTU_UTF8_BAD, ol = sizeof(DTU_UTF8_BAD) - 1;
			fwrite(o, 1, ol, out);
			s += n;
			continue;
		}
		}
		s++;
	}
}

static const char *const palettes[] = {
	"kind", "hot", "mem", "io", "red", "green", "blue", "aqua", "yellow", "purple",
	"orange", NULL,
};

int flame_palette_ok(const char *name)
{
	for (int i = 0; palettes[i]; i++)
		if (!strcmp(name, palettes[i]))
			return 1;
	return 0;
}

/* "rgb(%d,%d,%d)" of components 0 .. 255 */
static void rgb_text(char *buf, size_t len, int r, int g, int b)
{
	int v[3] = { r, g, b };
	char t[24], *o = t;
	memcpy(o, "rgb(", 4);
	o += 4;
	for (int k = 0; k < 3; k++) {
		int x = v[k];
		if (x < 0 || x > 255) {	/* not from the palettes: printf it */
			snprintf(buf, len, "rgb(%d,%d,%d)", r, g, b);
			return;
		}
		if (x >= 100)
			*o++ = (char)('0' + x / 100);
		if (x >= 10)
			*o++ = (char)('0' + x / 10 % 10);
		*o++ = (char)('0' + x % 10);
		*o++ = k < 2 ? ',' : ')';
	}
	*o = 0;
	size_t n = (size_t)(o - t) < len ? (size_t)(o - t) : len - 1;
	memcpy(buf, t, n);
	buf[n] = 0;
}

static void colour(const struct fname *n, const char *pal, char *buf, size_t len)
{
	/* Stable per name: the same function has the same colour in every
	 * graph, so two graphs can be compared by eye. */
	uint64_t h = strhash(n->s, n->len);
	double v1 = (double)(h & 0xffff) / 65535.0;
	double v2 = (double)((h >> 16) & 0xffff) / 65535.0;
	double v3 = (double)((h >> 32) & 0xffff) / 65535.0;
	int r, g, b;

	if (n->kind == FLAME_SPECIAL) {	/* grey in every palette */
		r = g = b = 180 + (int)(30 * v1);
	} else if (!pal || !strcmp(pal, "kind")) {
		switch (n->kind) {
		case FLAME_KERNEL:	/* aqua: far from the user palette at a glance */
			r = 50 + (int)(60 * v1), g = 165 + (int)(55 * v2), b = 165 + (int)(55 * v3);
			break;
		case FLAME_MODULE:	/* violet */
			r = 165 + (int)(45 * v1), g = 120 + (int)(40 * v2), b = 215 + (int)(40 * v3);
			break;
		case FLAME_INLINE:	/* user, washed out: as perf marks inlined frames */
			r = 235 + (int)(20 * v3), g = 150 + (int)(90 * v1), b = 130 + (int)(60 * v2);
			break;
		default:		/* user: the classic red to yellow */
			r = 205 + (int)(50 * v3), g = (int)(230 * v1), b = (int)(55 * v2);
			break;
		}
	} else if (!strcmp(pal, "hot")) {	/* flamegraph.pl's formulas */
		r = 205 + (int)(50 * v3), g = (int)(230 * v1), b = (int)(55 * v2);
	} else if (!strcmp(pal, "mem")) {
		r = 0, g = 190 + (int)(50 * v2), b = (int)(210 * v1);
	} else if (!strcmp(pal, "io")) {
		r = 80 + (int)(60 * v1), g = r, b = 190 + (int)(55 * v2);
	} else if (!strcmp(pal, "red")) {
		r = 200 + (int)(55 * v1), g = b = 50 + (int)(80 * v1);
	} else if (!strcmp(pal, "green")) {
		g = 200 + (int)(55 * v1), r = b = 50 + (int)(60 * v1);
	} else if (!strcmp(pal, "blue")) {
		b = 205 + (int)(50 * v1), r = g = 80 + (int)(60 * v1);
	} else if (!strcmp(pal, "aqua")) {
		r = 50 + (int)(60 * v1), g = 165 + (int)(55 * v1), b = 165 + (int)(55 * v1);
	} else if (!strcmp(pal, "yellow")) {
		r = g = 175 + (int)(55 * v1), b = 50 + (int)(20 * v1);
	} else if (!strcmp(pal, "purple")) {
		r = b = 190 + (int)(65 * v1), g = 80 + (int)(60 * v1);
	} else {	/* orange */
		r = 190 + (int)(65 * v1), g = 90 + (int)(65 * v1), b = 0;
	}
	rgb_text(buf, len, r, g, b);
}

/*
 * Red grew, blue shrank, by the size of the change relative to the largest
 * one.  Unchanged frames are a neutral grey, never white on white: with
 * every diff frame outlined, the graph keeps its shape (as difffolded.pl
 * and flamegraph.pl show it).
 */
static void diff_colour(double delta, double maxabs, char *buf, size_t len)
{
	int c = 235;

	if (maxabs > 0 && delta != 0) {
		/* Intensity relative to the largest change in the graph. */
		double r = fabs(delta) / maxabs;
		c = 235 - (int)lround(190 * r);
	}
	if (delta > 0)
		snprintf(buf, len, "rgb(255,%d,%d)", c, c);
	else if (delta < 0)
		snprintf(buf, len, "rgb(%d,%d,255)", c, c);
	else
		snprintf(buf, len, "rgb(215,215,215)");
}

struct svg_ctx {
	struct sbuf	sb;
	const struct flame *f;
	/*
	 * The children of the frames drawn, sorted as each is drawn: a
	 * stack of runs, one per level being drawn.  Most nodes are too
	 * narrow to draw, and neither sorting nor indexing them all (as
	 * sort_tree does for the other writers) is needed.
	 */
	uint32_t	*kids;
	size_t		nkids, capkids;
	const uint32_t	*rank;		/* name_ranks */
	int		oom;
	const struct flame_svg_opts *o;
	FILE		*out;
	int		side;
	double		scale;		/* px per sample */
	uint64_t	total[2];
	double		maxabs;
	unsigned	height, ytop, ybot;
	unsigned	fh, fs;		/* frame height, font size (px) */
	uint32_t	maxdepth;
};

static double node_delta(const struct svg_ctx *c, const struct fnode *n)
{
	double a = c->total[0] ? (double)n->total[0] / (double)c->total[0] : 0;
	double b = c->total[1] ? (double)n->total[1] / (double)c->total[1] : 0;

	return b - a;
}

/* Depth of the deepest frame wide enough to draw. */
static uint32_t svg_depth(const struct svg_ctx *c, uint32_t node)
{
	uint32_t d = c->f->nodes[node].depth;

	for (uint32_t ch = c->f->links[node].first; ch; ch = c->f->links[ch].next) {
		if ((double)c->f->nodes[ch].total[c->side] * c->scale < c->o->minwidth ||
		    !c->f->nodes[ch].total[c->side])
			continue;
		uint32_t cd = svg_depth(c, ch);
		if (cd > d)
			d = cd;
	}
	return d;
}

static void fit_label(const char *name, double w, unsigned fs, char *buf, size_t len)
{
	int m = (int)((w - 3) / (fs * 0.59));
	size_t nl = strlen(name);

	buf[0] = 0;
	if (m < 3)
		return;
	if ((size_t)m >= nl) {
		size_t n = nl < len ? nl : len - 1;
		memcpy(buf, name, n);
		buf[n] = 0;
		return;
	}
	if ((size_t)m > len - 3)
		m = (int)len - 3;
	memcpy(buf, name, (size_t)m - 2);
	memcpy(buf + m - 2, "..", 3);
}

static void svg_walk(struct svg_ctx *c, uint32_t node, uint64_t start)
{
	const struct fnode *n = &c->f->nodes[node];
	uint64_t cnt = n->total[c->side];
	double x = XPAD + (double)start * c->scale, w = (double)cnt * c->scale;
	const char *name = node ? c->f->names[c->f->links[node].name].s : "all";
	double y = c->o->inverted ? c->ytop + (double)n->depth * c->fh
				  : c->height - c->ybot - (double)(n->depth + 1) * c->fh;
	char fill[40], label[512];
	const char *unit = c->o->countname ? c->o->countname : "samples";
	uint64_t tot = c->total[c->side];

	if (c->o->diff)
		diff_colour(node_delta(c, n), c->maxabs, fill, sizeof(fill));
	else if (!node)
		snprintf(fill, sizeof(fill), "rgb(220,220,220)");
	else
		colour(&c->f->names[c->f->links[node].name], c->o->colors, fill, sizeof(fill));

	struct sbuf *sb = &c->sb;
	SB_LIT(sb, "<g class=\"f\" data-s=\"");
	sb_u64(sb, start);
	SB_LIT(sb, "\" data-n=\"");
	sb_u64(sb, cnt);
	SB_LIT(sb, "\" data-d=\"");
	sb_u64(sb, n->depth);
	SB_LIT(sb, "\"><title>");
	sb_esc(sb, name);
	if (c->o->diff) {
		char t[512];
		double pa = c->total[0] ? 100.0 * (double)n->total[0] / (double)c->total[0] : 0;
		double pb = c->total[1] ? 100.0 * (double)n->total[1] / (double)c->total[1] : 0;
		int k = snprintf(t, sizeof(t), "\nA: %" PRIu64 " %s (%.2f%%)  B: %" PRIu64
				 " %s (%.2f%%)  delta %+.2f%%", n->total[0], unit, pa,
				 n->total[1], unit, pb, pb - pa);
		sb_mem(sb, t, k < 0 ? 0 : (size_t)k < sizeof(t) ? (size_t)k : sizeof(t) - 1);
	} else {
		SB_LIT(sb, "\n");
		sb_u64(sb, cnt);
		SB_LIT(sb, " ");
		sb_str(sb, unit);
		SB_LIT(sb, ", ");
		sb_fixed(sb, tot ? 100.0 * (double)cnt / (double)tot : 0.0, 2);
		SB_LIT(sb, "%");
	}
	SB_LIT(sb, "</title><rect x=\"");
	sb_fixed(sb, x, 2);
	SB_LIT(sb, "\" y=\"");
	sb_fixed(sb, y, 1);
	SB_LIT(sb, "\" width=\"");
	sb_fixed(sb, w, 2);
	SB_LIT(sb, "\" height=\"");
	sb_u64(sb, c->fh - 1);
	SB_LIT(sb, "\" fill=\"");
	sb_str(sb, fill);
	SB_LIT(sb, "\" rx=\"2\" ry=\"2\"");
	if (c->o->diff)
		SB_LIT(sb, " stroke=\"rgb(150,150,150)\" stroke-width=\"0.5\"");
	SB_LIT(sb, "/><text x=\"");
	sb_fixed(sb, x + 3, 2);
	SB_LIT(sb, "\" y=\"");
	sb_fixed(sb, y + c->fh - (c->fh - c->fs * 0.75) / 2 - 0.5, 1);
	SB_LIT(sb, "\">");
	fit_label(name, w, c->fs, label, sizeof(label));
	sb_esc(sb, label);
	SB_LIT(sb, "</text></g>\n");

	/* every child counts in the offsets, drawn or not, in name order */
	size_t base = c->nkids;
	const struct flink *l = &c->f->links[node];
	if (DT_GROW(c->kids, c->capkids, base, l->nkids, 256)) {
		c->oom = 1;
		return;
	}
	for (uint32_t ch = l->first; ch; ch = c->f->links[ch].next)
		c->kids[c->nkids++] = ch;
	if (l->nkids > 1) {
		sort_ctx = c->f;
		sort_rank = c->rank;
		qsort(c->kids + base, l->nkids, sizeof(uint32_t), kid_cmp);
	}
	uint64_t off = start;
	for (size_t k = base; k < base + l->nkids && !c->oom; k++) {
		uint32_t ch = c->kids[k];
		uint64_t cc = c->f->nodes[ch].total[c->side];
		if (cc && (double)cc * c->scale >= c->o->minwidth)
			svg_walk(c, ch, off);
		off += cc;
	}
	c->nkids = base;
}

static const char svg_script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"(function () {\n"
"var svg = document.documentElement, cfg = JSON.parse(svg.getAttribute('data-cfg'));\n"
"var cw = cfg.fs * 0.59, frames = [], zoomed = null, searchRe = '', ignoreCase = false;\n"
"var details = document.getElementById('details'), matched = document.getElementById('matched');\n"
"var unzoomBtn = document.getElementById('unzoom'), searchBtn = document.getElementById('search');\n"
"var icBtn = document.getElementById('ignorecase');\n"
"var gs = document.getElementsByClassName('f');\n"
"for (var k = 0; k < gs.length; k++) {\n"
"  var g = gs[k], t = g.getElementsByTagName('title')[0].textContent;\n"
"  var fr = { g: g, s: +g.getAttribute('data-s'), n: +g.getAttribute('data-n'),\n"
"    d: +g.getAttribute('data-d'), name: t.split('\\n')[0], info: t.split('\\n')[1] || '',\n"
"    r: g.getElementsByTagName('rect')[0], t: g.getElementsByTagName('text')[0] };\n"
"  fr.fill = fr.r.getAttribute('fill');\n"
"  g._fr = fr; frames.push(fr);\n"
"}\n"
"function fit(name, w) {\n"
"  var m = Math.floor((w - 3) / cw);\n"
"  if (m < 3) return '';\n"
"  return name.length <= m ? name : name.substring(0, m - 2) + '..';\n"
"}\n"
"function layout() {\n"
"  var zs = 0, zn = cfg.total, zd = 0;\n"
"  if (zoomed) { zs = zoomed.s; zn = zoomed.n; zd = zoomed.d; }\n"
"  var sc = cfg.pw / (zn || 1);\n"
"  frames.forEach(function (f) {\n"
"    var vis = false, x = 0, w = 0, par = false;\n"
"    if (f.d < zd) {\n"
"      if (f.s <= zs && f.s + f.n >= zs + zn) { vis = true; x = cfg.x0; w = cfg.pw; par = true; }\n"
"    } else if (f.s >= zs && f.s + f.n <= zs + zn) {\n"
"      x = cfg.x0 + (f.s - zs) * sc; w = f.n * sc; vis = w >= 0.1;\n"
"    }\n"
"    f.g.style.display = vis ? '' : 'none';\n"
"    if (!vis) return;\n"
"    f.r.setAttribute('x', x.toFixed(2)); f.r.setAttribute('width', w.toFixed(2));\n"
"    f.t.setAttribute('x', (x + 3).toFixed(2)); f.t.textContent = fit(f.name, w);\n"
"    f.r.style.opacity = par ? '0.5' : '';\n"
"  });\n"
"  unzoomBtn.style.opacity = zoomed ? '1' : '0';\n"
"  svg.setAttribute('data-zoom', zoomed ? zoomed.s + ':' + zoomed.d : '');\n"
"}\n"
"function saveUrl() {\n"
"  var h = [];\n"
"  if (zoomed) h.push('z=' + zoomed.s + ':' + zoomed.d);\n"
"  if (searchRe) h.push('s=' + encodeURIComponent(searchRe));\n"
"  if (ignoreCase) h.push('i=1');\n"
"  var u = location.pathname + location.search + (h.length ? '#' + h.join('&') : '');\n"
"  try { history.replaceState(null, '', u); } catch (e) { location.hash = h.join('&'); }\n"
"}\n"
"function zoom(f) {\n"
"  zoomed = (f && f.d > 0) ? f : null; layout(); saveUrl();\n"
"}\n"
"// ic: case-insensitive (flamegraph.pl's 'ic' toggle); undefined keeps the current mode\n"
"function search(re, ic) {\n"
"  var rx = null;\n"
"  searchRe = re || '';\n"
"  if (ic !== undefined) ignoreCase = !!ic;\n"
"  icBtn.style.opacity = ignoreCase ? '1' : '0.4';\n"
"  if (searchRe) { try { rx = new RegExp(searchRe, ignoreCase ? 'i' : ''); } catch (e) { rx = null; searchRe = ''; } }\n"
"  var hits = [];\n"
"  frames.forEach(function (f) {\n"
"    var hit = rx !== null && rx.test(f.name);\n"
"    f.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
"    if (hit) hits.push(f);\n"
"  });\n"
"  // Nested matches lie inside an outer match's interval: merge intervals.\n"
"  hits.sort(function (a, b) { return a.s - b.s || b.n - a.n; });\n"
"  var sum = 0, end = -1;\n"
"  hits.forEach(function (f) {\n"
"    var e = f.s + f.n;\n"
"    if (f.s >= end) { sum += f.n; end = e; }\n"
"    else if (e > end) { sum += e - end; end = e; }\n"
"  });\n"
"  var pct = cfg.total ? 100 * sum / cfg.total : 0;\n"
"  svg.setAttribute('data-matched', rx ? String(sum) : '');\n"
"  matched.textContent = rx ? 'Matched: ' + pct.toFixed(2) + '% (' + sum + ' ' + cfg.unit + ')' : '';\n"
"  searchBtn.textContent = rx ? 'Reset Search' : 'Search';\n"
"  saveUrl();\n"
"  return pct;\n"
"}\n"
"svg.addEventListener('click', function (ev) {\n"
"  var g = ev.target.closest ? ev.target.closest('g.f') : null;\n"
"  if (g && g._fr) zoom(g._fr);\n"
"});\n"
"svg.addEventListener('mouseover', function (ev) {\n"
"  var g = ev.target.closest ? ev.target.closest('g.f') : null;\n"
"  details.textContent = g && g._fr ? g._fr.name + ' (' + g._fr.info + ')' : ' ';\n"
"});\n"
"unzoomBtn.addEventListener('click', function (ev) { ev.stopPropagation(); zoom(null); });\n"
"icBtn.addEventListener('click', function (ev) { ev.stopPropagation(); search(searchRe, !ignoreCase); });\n"
"searchBtn.addEventListener('click', function (ev) {\n"
"  ev.stopPropagation();\n"
"  if (searchRe) { search(''); return; }\n"
"  var re = prompt('Search regex (JavaScript syntax):', ''); if (re) search(re);\n"
"});\n"
"window.addEventListener('keydown', function (ev) {\n"
"  if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f') { ev.preventDefault(); searchBtn.dispatchEvent(new MouseEvent('click')); }\n"
"  else if ((ev.ctrlKey || ev.metaKey) && ev.key === 'i') { ev.preventDefault(); search(searchRe, !ignoreCase); }\n"
"  else if (ev.key === 'Escape') search('');\n"
"});\n"
"window.flameZoom = function (s, d) {\n"
"  zoom(frames.filter(function (f) { return f.s === s && f.d === d; })[0] || null);\n"
"};\n"
"window.flameSearch = search;\n"
"(location.hash || '').replace(/^#/, '').split('&').forEach(function (kv) {\n"
"  var i = kv.indexOf('='), k = kv.substring(0, i), v = decodeURIComponent(kv.substring(i + 1));\n"
"  if (k === 'z') { var p = v.split(':'); window.flameZoom(+p[0], +p[1]); }\n"
"  else if (k === 'i') search(searchRe, v === '1');\n"
"  else if (k === 's') search(v);\n"
"});\n"
"svg.setAttribute('data-ready', '1');\n"
"})();\n"
"]]></script>\n";

int flame_write_svg(const struct flame *f, FILE *out, const struct flame_svg_opts *o)
{
	struct svg_ctx c = { 0 };
	unsigned width = o->width ? o->width : 1200;

	settle(f);
	if (width < 100)
		width = 100;
	c.f = f, c.o = o, c.out = out;
	c.side = o->diff ? 1 : 0;
	c.total[0] = f->nodes[0].total[0];
	c.total[1] = f->nodes[0].total[1];
	uint64_t tot = c.total[c.side];
	double pw = width - 2 * XPAD;
	c.scale = tot ? pw / (double)tot : 0;
	if (o->diff)
		for (uint32_t i = 0; i < f->nnodes; i++) {
			double d = fabs(node_delta(&c, &f->nodes[i]));
			if (d > c.maxabs)
				c.maxabs = d;
		}
	c.maxdepth = tot ? svg_depth(&c, 0) : 0;
	c.fh = o->frameheight ? o->frameheight : FRAMEH;
	c.fs = o->fontsize ? o->fontsize : FONTSZ;
	c.ytop = (o->subtitle ? 66 : 48) + (c.fs > FONTSZ ? c.fs - FONTSZ : 0);
	c.ybot = 22 + c.fs;
	c.height = c.ytop + c.ybot + (c.maxdepth + 1) * c.fh;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\" "
		"data-cfg='{\"x0\":%d,\"pw\":%.2f,\"total\":%" PRIu64 ",\"fs\":%u,\"unit\":\"%s\"}'>\n",
		width, c.height, width, c.height, XPAD, pw, tot, c.fs,
		o->countname ? o->countname : "samples");
	fprintf(out, "<style type=\"text/css\">\n"
		"text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }\n"
		"g.f text { pointer-events: none; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		".btn { cursor: pointer; fill: #333; }\n"
		".title { font-size: 17px; text-anchor: middle; }\n"
		".sub { fill: #666; text-anchor: middle; }\n"
		"</style>\n", c.fs);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"%s\"/>\n", width,
		c.height, o->diff ? "#f8f8f8" : "#f4f4ea");
	fputs("<text class=\"title\" x=\"", out);
	fprintf(out, "%u\" y=\"24\">", width / 2);
	xml_esc(out, o->title ? o->title : "Flame Graph");
	fputs("</text>\n", out);
	if (o->subtitle) {
		fprintf(out, "<text class=\"sub\" x=\"%u\" y=\"44\">", width / 2);
		xml_esc(out, o->subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"%d\" style=\"opacity:0\">"
		"Reset Zoom</text>\n", XPAD, c.ytop - 16);
	fprintf(out, "<text id=\"search\" class=\"btn\" x=\"%u\" y=\"%d\" "
		"text-anchor=\"end\">Search</text>\n", width - XPAD - 4 * c.fs, c.ytop - 16);
	fprintf(out, "<text id=\"ignorecase\" class=\"btn\" x=\"%u\" y=\"%d\" "
		"text-anchor=\"end\" style=\"opacity:0.4\"><title>case-insensitive search "
		"(Ctrl-I)</title>ic</text>\n", width - XPAD, c.ytop - 16);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, c.height - 12);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n",
		width - XPAD, c.height - 12);
	if (!tot) {
		fprintf(out, "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\">no samples</text>\n",
			width / 2, c.ytop + 12);
	}
	fputs("<g id=\"frames\">\n", out);
	if (tot) {
		c.sb = (struct sbuf){ malloc(1 << 18), 0, 1 << 18, out, 0 };
		if (!c.sb.p || !(c.rank = name_ranks(f))) {
			free(c.sb.p);
			return -1;
		}
		svg_walk(&c, 0, 0);
		sb_flush(&c.sb);
		free(c.sb.p);
		free(c.kids);
		free((uint32_t *)c.rank);
		if (c.sb.err || c.oom)
			return -1;
	}
	fputs("</g>\n", out);
	fputs(svg_script, out);
	fputs("</svg>\n", out);
	return fflush(out) || ferror(out) ? -1 : 0;
}
