/*
 * flame.h - stack folding tree, folded-text and interactive SVG writers.
 *
 * Frames are interned names with a kind (for colour).  Stacks are added root
 * first with a count for side 0 (the profile, or diff's A) or side 1
 * (diff's B).  The tree merges common prefixes; its children are ordered by
 * name so every output is deterministic.
 */
#ifndef DT_FLAME_H
#define DT_FLAME_H

#include <stdint.h>
#include <stdio.h>

enum flame_kind {
	FLAME_USER,
	FLAME_KERNEL,
	FLAME_MODULE,
	FLAME_SPECIAL,	/* comm root, "--" separator, "[truncated]", unknown */
	FLAME_INLINE,	/* an inlined call ("f (inlined)"): a lighter shade */
};

struct flame;

struct flame *flame_new(void);
void flame_free(struct flame *f);

/* Name -> id (same name, same id; the first kind given sticks).  -1 on ENOMEM. */
int64_t flame_intern(struct flame *f, const char *name, enum flame_kind kind);

/* Add one stack (root first).  -1 on ENOMEM. */
int flame_add(struct flame *f, const uint32_t *ids, unsigned n, uint64_t count, int side);
/*
 * The same in two steps, for callers that add many paths sharing a prefix:
 * flame_node() is the node at the end of path ids (made, with no count, if
 * new), and flame_add_at() counts the path through node, then ids below it,
 * and returns the node where it ends (-1: out of memory).
 * flame_node(p, np) then flame_add_at(node, q, nq) is flame_add(p + q).
 */
int64_t flame_node(struct flame *f, const uint32_t *ids, unsigned n);
int64_t flame_add_at(struct flame *f, uint32_t node, const uint32_t *ids, unsigned n,
		     uint64_t count, int side);

/* The text and kind of name id (from flame_intern); the string lives as
 * long as f. */
const char *flame_name(const struct flame *f, uint32_t id, enum flame_kind *kind);

/*
 * Every distinct stack with samples of its own on side: fn gets its name
 * ids root first (a buffer valid during the call only), their number and
 * that count.  A non-zero return from fn stops the walk and is returned;
 * -1 on ENOMEM.
 */
typedef int (*flame_path_fn)(void *ctx, const uint32_t *ids, unsigned n, uint64_t count);
int flame_walk(const struct flame *f, int side, flame_path_fn fn, void *ctx);

/*
 * The tree as indented text, as perf report's call graphs read: one line
 * a node, "PCT% COUNT  name" with the name indented two spaces a level,
 * children by count (then name); PCT is the node's side-0 total over
 * pct_of.  Nodes under minpct percent are left out.  -1 on a write error.
 */
int flame_write_tree(const struct flame *f, FILE *out, uint64_t pct_of, double minpct);

/*
 * "a;b;c N" lines, one per distinct stack, in tree (name) order.  diff:
 * "a;b;c A B" for the union of both sides.  -1 on a write error.
 */
int flame_write_folded(const struct flame *f, FILE *out, int diff);

/*
 * Folded text ("a;b;c N" lines, as flamegraph.pl reads them) added to f
 * on side 0: the count is the line's last space-separated word, every
 * frame before it is a name of kind FLAME_USER.  Empty lines and a
 * trailing CR are ignored.  0, or -1 with a message in err ("LINE: why",
 * a read error's errno text, or "out of memory").
 */
int flame_read_folded(struct flame *f, FILE *in, uint64_t *samples, char *err, size_t errlen);

struct flame_svg_opts {
	const char	*title;
	const char	*subtitle;	/* may be NULL */
	unsigned	width;		/* px, default 1200 */
	unsigned	frameheight;	/* px per frame, 0: 16 (flamegraph.pl --height) */
	unsigned	fontsize;	/* px, 0: 12 */
	double		minwidth;	/* px: narrower frames are omitted */
	int		inverted;	/* icicle: root at the top */
	int		diff;		/* widths from side 1, colours by delta */
	const char	*countname;	/* "samples"; [A-Za-z0-9 ._-] only (it goes
					 * into a JSON string in an XML attribute) */
	const char	*colors;	/* palette (flame_palette_ok), NULL: "kind" */
};

/*
 * Palettes of flamegraph.pl's --colors: "kind" (the default: user frames
 * red-yellow, kernel aqua, modules violet), "hot", "mem", "io", "red",
 * "green", "blue", "aqua", "yellow", "purple", "orange".  1 if known.
 */
int flame_palette_ok(const char *name);
/* The palette names, comma-separated, for messages. */
#define FLAME_PALETTES "kind, hot, mem, io, red, green, blue, aqua, yellow, purple, orange"

int flame_write_svg(const struct flame *f, FILE *out, const struct flame_svg_opts *o);

#endif
