/*
 * flametree.c - flame.c's folding tree against a naive one (a child list
 * searched linearly, totals added along each path as stacks come), under
 * ASan/UBSan: random stacks over few names, so that parents pass the
 * width where flame.c starts hashing their children, added whole
 * (flame_add) and in two steps (flame_node, flame_add_at) on both sides;
 * then the folded text (diff form: both sides' own counts), the indented
 * tree (every node's total) and flame_walk compared, written again after
 * more stacks are added.  Prints PASS/FAIL lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"

#define CHECK_PREFIX "flametree-"
#include "../check.h"

#define NNAMES	40
#define MAXD	7

struct rnode {
	uint32_t	name;
	uint64_t	self[2], total[2];
	struct rnode	*kids, *next;
};

static char names[NNAMES][16];
static uint32_t ids[NNAMES];		/* flame_intern's */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static struct rnode *rchild(struct rnode *p, uint32_t name)
{
	for (struct rnode *k = p->kids; k; k = k->next)
		if (k->name == name)
			return k;
	struct rnode *k = calloc(1, sizeof(*k));
	if (!k)
		abort();
	k->name = name;
	k->next = p->kids;
	p->kids = k;
	return k;
}

/* path holds indexes into names, not flame ids */
static void radd(struct rnode *root, const uint32_t *path, unsigned n, uint64_t cnt, int side)
{
	struct rnode *cur = root;

	root->total[side] += cnt;
	for (unsigned i = 0; i < n; i++) {
		cur = rchild(cur, path[i]);
		cur->total[side] += cnt;
	}
	cur->self[side] += cnt;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(names[(*(struct rnode *const *)a)->name], names[(*(struct rnode *const *)b)->name]);
}

static int by_total(const void *a, const void *b)
{
	const struct rnode *x = *(struct rnode *const *)a, *y = *(struct rnode *const *)b;

	if (x->total[0] != y->total[0])
		return x->total[0] < y->total[0] ? 1 : -1;
	return strcmp(names[x->name], names[y->name]);
}

static struct rnode **sorted_kids(const struct rnode *n, int (*cmp)(const void *, const void *),
				  size_t *nk)
{
	size_t k = 0;
	for (struct rnode *c = n->kids; c; c = c->next)
		k++;
	struct rnode **v = malloc((k + 1) * sizeof(*v));
	if (!v)
		abort();
	k = 0;
	for (struct rnode *c = n->kids; c; c = c->next)
		v[k++] = c;
	qsort(v, k, sizeof(*v), cmp);
	*nk = k;
	return v;
}

static void rfolded(FILE *o, const struct rnode *n, uint32_t *path, unsigned d)
{
	if (d && (n->self[0] || n->self[1])) {
		for (unsigned i = 0; i < d; i++)
			fprintf(o, "%s%s", i ? ";" : "", names[path[i]]);
		fprintf(o, " %" PRIu64 " %" PRIu64 "\n", n->self[0], n->self[1]);
	}
	size_t nk;
	struct rnode **v = sorted_kids(n, by_name, &nk);
	for (size_t i = 0; i < nk; i++) {
		path[d] = v[i]->name;
		rfolded(o, v[i], path, d + 1);
	}
	free(v);
}

static void rtree(FILE *o, const struct rnode *n, unsigned d, uint64_t all)
{
	if (d) {
		fprintf(o, "%7.2f%% %10" PRIu64 "  ", 100.0 * (double)n->total[0] / (double)all,
			n->total[0]);
		for (unsigned i = 1; i < d; i++)
			fputs("  ", o);
		fprintf(o, "%s\n", names[n->name]);
	}
	size_t nk;
	struct rnode **v = sorted_kids(n, by_total, &nk);
	for (size_t i = 0; i < nk; i++)
		rtree(o, v[i], d + 1, all);
	free(v);
}

static void rfree(struct rnode *n)
{
	for (struct rnode *k = n->kids, *nx; k; k = nx) {
		nx = k->next;
		rfree(k);
		free(k);
	}
}

/* The text fn writes into a memory stream. */
static char *capture(int (*fn)(const struct flame *, FILE *, const void *), const struct flame *f,
		     const void *arg, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	if (!o)
		abort();
	*rc = fn(f, o, arg);
	fclose(o);
	return buf;
}

static int w_folded(const struct flame *f, FILE *o, const void *arg)
{
	(void)arg;
	return flame_write_folded(f, o, 1);
}

static int w_tree(const struct flame *f, FILE *o, const void *arg)
{
	return flame_write_tree(f, o, *(const uint64_t *)arg, 0.0);
}

/* flame_walk's paths, summed back into a naive tree of their own */
struct walk {
	struct rnode	root;
	const struct flame *f;
	int		side, bad;
};

static int on_path(void *ctx, const uint32_t *p, unsigned n, uint64_t count)
{
	struct walk *w = ctx;
	uint32_t path[MAXD + 1];

	if (n > MAXD || count == 0) {
		w->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		const char *s = flame_name(w->f, p[i], NULL);
		unsigned k = 0;
		while (k < NNAMES && (!s || strcmp(s, names[k])))
			k++;
		if (k == NNAMES) {
			w->bad = 1;
			return 0;
		}
		path[i] = k;
	}
	radd(&w->root, path, n, count, w->side);
	return 0;
}

static char *ref_text(const struct rnode *root, int tree)
{
	char *buf = NULL;
	size_t len = 0;
	uint32_t path[MAXD + 1];
	FILE *o = open_memstream(&buf, &len);
	if (!o)
		abort();
	if (tree)
		rtree(o, root, 0, root->total[0]);
	else
		rfolded(o, root, path, 0);
	fclose(o);
	return buf;
}

static void compare(const char *what, struct flame *f, const struct rnode *ref)
{
	char name[64];
	int rc;
	uint64_t all = ref->total[0];

	char *got = capture(w_folded, f, NULL, &rc), *want = ref_text(ref, 0);
	snprintf(name, sizeof(name), "%s-folded", what);
	checkf(name, rc == 0 && !strcmp(got, want), "rc %d, %zu bytes, want %zu", rc,
	       strlen(got), strlen(want));
	free(got);
	free(want);

	got = capture(w_tree, f, &all, &rc), want = ref_text(ref, 1);
	snprintf(name, sizeof(name), "%s-totals", what);
	checkf(name, rc == 0 && !strcmp(got, want), "rc %d, %zu bytes, want %zu", rc,
	       strlen(got), strlen(want));
	free(got);
	free(want);

	/* the walk's paths, both sides, rebuilt into the same tree */
	struct walk w = { .f = f };
	int r0 = flame_walk(f, 0, on_path, &w);
	w.side = 1;
	int r1 = flame_walk(f, 1, on_path, &w);
	got = ref_text(&w.root, 0), want = ref_text(ref, 0);
	snprintf(name, sizeof(name), "%s-walk", what);
	checkf(name, !r0 && !r1 && !w.bad && !strcmp(got, want), "rc %d/%d, bad %d", r0, r1,
	       w.bad);
	free(got);
	free(want);
	rfree(&w.root);
}

static int add_random(struct flame *f, struct rnode *ref, unsigned nstacks)
{
	uint32_t path[MAXD], fids[MAXD];

	for (unsigned s = 0; s < nstacks; s++) {
		/* a few wide levels near the root and narrow ones below, so
		 * some parents have a handful of children and some dozens */
		unsigned n = rnd(MAXD + 1);
		for (unsigned i = 0; i < n; i++) {
			path[i] = rnd(i < 2 ? NNAMES : 4 + i);
			fids[i] = ids[path[i]];
		}
		uint64_t cnt = 1 + rnd(5);
		int side = rnd(3) == 0;
		if (rnd(2) || n == 0) {
			if (flame_add(f, fids, n, cnt, side))
				return -1;
		} else {
			unsigned cut = rnd(n + 1);
			int64_t node = flame_node(f, fids, cut);
			if (node < 0 || flame_add_at(f, (uint32_t)node, fids + cut, n - cut, cnt,
						     side) < 0)
				return -1;
		}
		radd(ref, path, n, cnt, side);
	}
	return 0;
}

int main(void)
{
	struct flame *f = flame_new();
	struct rnode ref = { 0 };

	if (!f)
		return 1;
	/* names whose strcmp order is not their interning order */
	for (unsigned i = 0; i < NNAMES; i++) {
		snprintf(names[i], sizeof(names[i]), "%c%u", 'a' + (i * 7) % 26, (i * 13) % 10);
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				snprintf(names[i], sizeof(names[i]), "z%u", i);
		int64_t id = flame_intern(f, names[i], i % 2 ? FLAME_KERNEL : FLAME_USER);
		if (id < 0)
			return 1;
		ids[i] = (uint32_t)id;
	}
	checkf("intern-again", flame_intern(f, names[3], FLAME_USER) == ids[3],
	       "a second intern of one name gave another id");

	int rc = add_random(f, &ref, 3000);
	checkf("add", rc == 0, "out of memory");
	compare("first", f, &ref);
	/* written once (totals summed), then more stacks: written again */
	rc = add_random(f, &ref, 3000);
	checkf("add-more", rc == 0, "out of memory");
	compare("again", f, &ref);

	/* an empty graph writes nothing and fails nothing */
	struct flame *e = flame_new();
	struct rnode eref = { 0 };
	if (!e)
		return 1;
	compare("empty", e, &eref);
	flame_free(e);

	flame_free(f);
	rfree(&ref);
	return check_status();
}
