/*
 * dt_htab.h - the one hash table of dt's user space (libdtcap and the
 * tools): an index from a key to an entry number.  The caller keeps its
 * entries in its own array (names, stacks, nodes, rows: dense, in the
 * order they were added, which is what the file formats and outputs want)
 * and the table holds only entry numbers, 4 bytes a slot, by open
 * addressing with linear probing.  The caller hashes its keys and says
 * when two are equal; the table owns sizing, probing and rehashing.
 *
 * Lookups inline: the probe loop is the caller's hot path (one per event
 * in a flame graph), so it is written with the callbacks visible to the
 * compiler, not through a library call.
 *
 * Entries are numbered densely in the order they are added: the table
 * holds exactly 0 .. n-1, and dt_htab_add takes e == n.  That is how every
 * caller keeps its array anyway, and it lets a rehash walk the caller's
 * array in order (cache friendly) instead of chasing the old slots.
 *
 * A zeroed struct dt_htab is an empty table; nothing is allocated until
 * the first add.  Entries are never removed one by one (dt_htab_clear
 * empties the whole table).  At most DT_HTAB_MAX entries.
 */
#ifndef DT_HTAB_H
#define DT_HTAB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DT_HTAB_NONE	UINT32_MAX	/* "no entry" */
#define DT_HTAB_MAX	(UINT32_MAX / 2)	/* entries; slots stay < 2^32 */

struct dt_htab {
	uint32_t	*slot;		/* entry + 1; 0: empty */
	size_t		mask;		/* slots - 1 (a power of two); 0: no slots */
	size_t		n;		/* entries */
};

/* The entry numbers stored under hash h, in probe order: */
static inline size_t dt_htab_first(const struct dt_htab *t, uint64_t h)
{
	return (size_t)h & t->mask;
}
static inline size_t dt_htab_next(const struct dt_htab *t, size_t i)
{
	return (i + 1) & t->mask;
}
/* The entry in slot i, or DT_HTAB_NONE where the probe ends. */
static inline uint32_t dt_htab_at(const struct dt_htab *t, size_t i)
{
	return t->slot ? t->slot[i] - 1 : DT_HTAB_NONE;
}

/*
 * The entry e under hash h for which eq(ctx, e, key) is true, or
 * DT_HTAB_NONE.  The same loop written out, for callers that compare
 * inline:
 *	for (i = dt_htab_first(t, h); (e = dt_htab_at(t, i)) != DT_HTAB_NONE;
 *	     i = dt_htab_next(t, i))
 *		if (equal(e, key)) return e;
 */
static inline uint32_t dt_htab_find(const struct dt_htab *t, uint64_t h,
				    int (*eq)(const void *ctx, uint32_t e, const void *key),
				    const void *ctx, const void *key)
{
	uint32_t e;
	for (size_t i = dt_htab_first(t, h); (e = dt_htab_at(t, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(t, i))
		if (eq(ctx, e, key))
			return e;
	return DT_HTAB_NONE;
}

/* The slots dt_htab_reserve(t, n) leaves t with: the current ones when
 * they hold n at a load of one half, else the least power of two (16 at
 * least) that does; 0 when n is past DT_HTAB_MAX.  For callers that must
 * account for the memory (4 bytes a slot) before it is allocated. */
static inline size_t dt_htab_slots_for(const struct dt_htab *t, size_t n)
{
	if (n > DT_HTAB_MAX)
		return 0;
	size_t slots = t->slot ? t->mask + 1 : 0;
	if (n <= slots / 2)
		return slots;
	size_t ns = slots ? slots : 16;
	while (n > ns / 2)
		ns *= 2;
	return ns;
}

/* Room for at least n entries at a load of one half (dt_htab_slots_for).
 * 0, or -1 with errno (ENOMEM, EOVERFLOW past DT_HTAB_MAX) and the table
 * as it was.  hash(ctx, e) gives each stored entry's hash again. */
__attribute__((noinline, unused))	/* cold: keeps the callers' probe loops small */
static int dt_htab_reserve(struct dt_htab *t, size_t n,
				  uint64_t (*hash)(const void *ctx, uint32_t e),
				  const void *ctx)
{
	size_t slots = t->slot ? t->mask + 1 : 0;
	size_t ns = dt_htab_slots_for(t, n);
	if (!ns) {
		errno = EOVERFLOW;
		return -1;
	}
	if (ns == slots)
		return 0;
	uint32_t *s = calloc(ns, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t e = 0; e < t->n; e++) {
		size_t j = (size_t)hash(ctx, (uint32_t)e) & (ns - 1);
		while (s[j])
			j = (j + 1) & (ns - 1);
		s[j] = (uint32_t)e + 1;
	}
	free(t->slot);
	t->slot = s;
	t->mask = ns - 1;
	return 0;
}

/*
 * Add entry e under hash h: e is the next number, t->n (EINVAL else), and
 * its key must not be in the table already (look it up first).  Grows
 * first when the table would pass half full, rehashing entries 0 .. n-1
 * through hash().  0, or -1 with errno (EINVAL, ENOMEM, EOVERFLOW past
 * DT_HTAB_MAX) and the table as it was (e not added).
 */
static inline int dt_htab_add(struct dt_htab *t, uint64_t h, uint32_t e,
			      uint64_t (*hash)(const void *ctx, uint32_t e),
			      const void *ctx)
{
	if (e != t->n) {
		errno = EINVAL;
		return -1;
	}
	if (e >= DT_HTAB_MAX) {
		errno = EOVERFLOW;
		return -1;
	}
	if ((!t->slot || t->n + 1 > (t->mask + 1) / 2) &&
	    dt_htab_reserve(t, t->n + 1, hash, ctx))
		return -1;
	size_t i = dt_htab_first(t, h);
	while (t->slot[i])
		i = dt_htab_next(t, i);
	t->slot[i] = e + 1;
	t->n++;
	return 0;
}

/* Forget every entry, keeping the slots. */
static inline void dt_htab_clear(struct dt_htab *t)
{
	if (t->slot)
		memset(t->slot, 0, (t->mask + 1) * sizeof(*t->slot));
	t->n = 0;
}

/* Free the slots; the table is then empty and may be used again. */
static inline void dt_htab_free(struct dt_htab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->mask = 0;
	t->n = 0;
}

#endif /* DT_HTAB_H */
