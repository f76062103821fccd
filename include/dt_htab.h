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
 * Removal keeps them dense the way a caller's array stays dense: the
 * last entry takes the removed one's number (dt_htab_remove), and the
 * caller moves its last item into the hole (swap with last), so a caller
 * that removes gives up the order of addition.  The slot
 * the entry leaves is refilled from behind it in its probe run
 * (backward-shift deletion) instead of being marked deleted: no
 * tombstones, so a lookup still ends at the first empty slot and a table
 * that churns (processes come and go) never fills with dead slots.
 *
 * A zeroed struct dt_htab is an empty table; nothing is allocated until
 * the first add.  dt_htab_clear empties the whole table.  At most
 * DT_HTAB_MAX entries.
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

/* A hash for an integer key (pid, event id, address): the table indexes
 * by the low bits, and these depend on every bit of the key (MurmurHash3's
 * finalizer, halved), so keys that differ only high up still spread. */
static inline uint64_t dt_htab_hash_int(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

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

/* The slot holding entry e, whose hash is h; t->mask + 1 when it is not there. */
static inline size_t dt_htab_slot_of(const struct dt_htab *t, uint64_t h, uint32_t e)
{
	uint32_t x;
	for (size_t i = dt_htab_first(t, h); (x = dt_htab_at(t, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(t, i))
		if (x == e)
			return i;
	return t->mask + 1;
}

/*
 * Remove entry e (< t->n), renumbering the last entry, n-1, as e.  The
 * caller then moves its own item n-1 to index e and counts one fewer:
 *	if (dt_htab_remove(t, e, hash, ctx) == 0)
 *		v[e] = v[--n];
 * hash(ctx, x) must still give every stored entry's hash during the call,
 * so the caller's array changes only after it.  The entries after e in
 * its probe run move back into the hole where their own probe allows
 * (Knuth's algorithm R for linear probing): no slot is marked deleted.
 * Costs one probe run and a hash() call for each entry in it; the slots
 * are kept (the table never shrinks).  0, or -1 with errno EINVAL when e
 * is not an entry, or e or n-1 is not where hash() says (a key changed
 * since it was added), the table then as it was.
 */
__attribute__((noinline, unused))	/* cold: keeps the callers' probe loops small */
static int dt_htab_remove(struct dt_htab *t, uint32_t e,
			  uint64_t (*hash)(const void *ctx, uint32_t e), const void *ctx)
{
	if (e >= t->n) {
		errno = EINVAL;
		return -1;
	}
	uint32_t last = (uint32_t)t->n - 1;
	size_t hole = dt_htab_slot_of(t, hash(ctx, e), e);
	size_t ls = dt_htab_slot_of(t, hash(ctx, last), last);
	if (hole > t->mask || ls > t->mask) {
		errno = EINVAL;
		return -1;
	}
	t->slot[hole] = 0;
	for (size_t j = dt_htab_next(t, hole); t->slot[j]; j = dt_htab_next(t, j)) {
		/* j's entry stays when its home lies in (hole, j]: a probe
		 * from there never passes the hole.  Else it fills the hole. */
		size_t home = dt_htab_first(t, hash(ctx, t->slot[j] - 1));
		if (((j - home) & t->mask) >= ((j - hole) & t->mask)) {
			t->slot[hole] = t->slot[j];
			t->slot[j] = 0;
			if (ls == j)
				ls = hole;
			hole = j;
		}
	}
	if (e != last)
		t->slot[ls] = e + 1;
	t->n--;
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
