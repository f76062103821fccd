/* table_test - include/dt_grow.h and include/dt_htab.h, under ASan/UBSan. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "dt_htab.h"
#include "../xorshift.h"

#define CHECK_PREFIX "table."
#include "../check.h"

static void test_grow(void)
{
	char why[160] = "";
	int *v = NULL;
	uint32_t cap = 0, n;
	int ok = 1;

	/* appends one at a time: every item survives each doubling */
	for (n = 0; n < 100000 && ok; n++) {
		uint32_t before = cap;
		if (DT_GROW(v, cap, n, 1, 64)) {
			snprintf(why, sizeof(why), "failed at %u", n);
			ok = 0;
			break;
		}
		if (cap != before && cap != (before ? 2 * before : 64)) {
			snprintf(why, sizeof(why), "cap %u -> %u, not doubled", before, cap);
			ok = 0;
		}
		v[n] = (int)n * 3;
	}
	for (uint32_t i = 0; i < n && ok; i++)
		if (v[i] != (int)i * 3) {
			snprintf(why, sizeof(why), "item %u lost", i);
			ok = 0;
		}
	check("grow.append", ok && cap == 131072, why[0] ? why : "final capacity not 131072");

	/* a need far past cap doubles as often as it takes, at once */
	uint32_t c2 = cap;
	ok = DT_GROW(v, cap, 0, 1000000, 64) == 0 && cap == c2 * 8 && v[99999] == 99999 * 3;
	check("grow.jump", ok, "need 1000000 from 131072 did not give 1048576");
	/* room already there: nothing moves */
	int *same = v;
	ok = DT_GROW(v, cap, 10, 10, 64) == 0 && v == same && cap == c2 * 8;
	check("grow.noop", ok, "a need within cap changed the array");
	free(v);

	/* a capacity of a narrow type stops at its maximum, never wraps */
	uint16_t c16 = 40000;
	char *b = malloc(c16);
	ok = b && DT_GROW(b, c16, 40000, 1, 16) == 0 && c16 == 65535;
	check("grow.clamp_to_type", ok, "uint16_t cap 40000 did not become 65535");
	errno = 0;
	char *ob = b;
	ok = DT_GROW(b, c16, 65535, 1, 16) == -1 && errno == EOVERFLOW && b == ob && c16 == 65535;
	check("grow.type_full", ok, "a uint16_t cap at 65535 grew or wrapped");
	free(b);

	/* n + more wraps size_t: refused, not taken as a small need */
	size_t cs = 4;
	long *l = malloc(4 * sizeof(*l));
	long *ol = l;
	errno = 0;
	ok = DT_GROW(l, cs, SIZE_MAX - 1, 8, 4) == -1 && errno == EOVERFLOW && l == ol && cs == 4;
	check("grow.count_wraps", ok, "n + more past SIZE_MAX was not refused");
	/* items * size past SIZE_MAX: refused before realloc sees a small size */
	errno = 0;
	ok = DT_GROW(l, cs, SIZE_MAX / sizeof(*l), 1, 4) == -1 && errno == EOVERFLOW && l == ol;
	check("grow.bytes_wrap", ok, "an item count whose bytes pass SIZE_MAX was not refused");
	/* too large to allocate: ENOMEM, the array still the caller's */
	errno = 0;
	ok = DT_GROW(l, cs, (size_t)1 << 58, 0, 4) == -1 && errno == ENOMEM && l == ol &&
	     cs == 4;
	l[3] = 7;	/* ASan: still the same live block */
	check("grow.enomem", ok, "an impossible allocation did not fail cleanly");
	free(l);

	/* the capacity alone, for callers that charge memory before allocating */
	size_t nc = 0;
	ok = dt_grow_cap(0, 5, 8, 16, SIZE_MAX, &nc) == 0 && nc == 16 &&
	     dt_grow_cap(16, 17, 8, 16, SIZE_MAX, &nc) == 0 && nc == 32 &&
	     dt_grow_cap(32, 20, 8, 16, SIZE_MAX, &nc) == 0 && nc == 32 &&
	     dt_grow_cap(600, 700, 1, 16, 1000, &nc) == 0 && nc == 1000 &&
	     dt_grow_cap(600, 1001, 1, 16, 1000, &nc) == -1 &&
	     dt_grow_cap(0, 10, 1, 4096, 100, &nc) == 0 && nc == 100;
	check("grow.cap", ok, "dt_grow_cap: 16, 32, 32, clamp to 1000, refuse 1001, min cut to 100 expected");

	/* the function form, from an empty array with its min */
	size_t c0 = 0;
	void *p = dt_grow_array(NULL, &c0, 3, 8, 16, SIZE_MAX);
	check("grow.min", p && c0 == 16, "first allocation did not use min");
	free(p);
}

/* Keys: strings in an array; entries are indexes into it. */
struct strs {
	char	**s;
	uint32_t n;
};

static uint64_t hstr(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static uint64_t rehash(const void *ctx, uint32_t e)
{
	return hstr(((const struct strs *)ctx)->s[e]);
}

static int eq(const void *ctx, uint32_t e, const void *key)
{
	return strcmp(((const struct strs *)ctx)->s[e], key) == 0;
}

/* Every hash the same: the probe chain is the whole table. */
static uint64_t hzero(const void *ctx, uint32_t e)
{
	(void)ctx;
	(void)e;
	return 0;
}

static void test_htab(void)
{
	struct dt_htab t = {0};
	struct strs k = {0};
	char why[160] = "", buf[32];
	int ok;

	check("htab.empty", dt_htab_find(&t, hstr("x"), eq, &k, "x") == DT_HTAB_NONE &&
	      t.slot == NULL && dt_htab_slots_for(&t, 1) == 16 && dt_htab_slots_for(&t, 9) == 32,
	      "a zeroed table found something, allocated, or sizes oddly");

	enum { N = 50000 };
	k.s = calloc(N, sizeof(*k.s));
	ok = k.s != NULL;
	for (uint32_t i = 0; i < N && ok; i++) {
		snprintf(buf, sizeof(buf), "key%u", i * 7);
		k.s[i] = strdup(buf);
		if (dt_htab_find(&t, hstr(buf), eq, &k, buf) != DT_HTAB_NONE) {
			snprintf(why, sizeof(why), "%s found before it was added", buf);
			ok = 0;
		} else if (dt_htab_add(&t, hstr(buf), i, rehash, &k)) {
			snprintf(why, sizeof(why), "add %u failed", i);
			ok = 0;
		}
		k.n = i + 1;
	}
	check("htab.add", ok && t.n == N, why[0] ? why : "count wrong");

	/* every key found again after all the rehashing, no stranger */
	ok = 1;
	for (uint32_t i = 0; i < N && ok; i++) {
		snprintf(buf, sizeof(buf), "key%u", i * 7);
		uint32_t e = dt_htab_find(&t, hstr(buf), eq, &k, buf);
		if (e != i) {
			snprintf(why, sizeof(why), "%s gave %u, not %u", buf, e, i);
			ok = 0;
		}
		snprintf(buf, sizeof(buf), "key%u", i * 7 + 1);
		if (dt_htab_find(&t, hstr(buf), eq, &k, buf) != DT_HTAB_NONE) {
			snprintf(why, sizeof(why), "absent %s was found", buf);
			ok = 0;
		}
	}
	check("htab.find", ok, why);
	check("htab.load", t.mask + 1 >= 2 * t.n && t.mask + 1 <= 4 * t.n && !(t.mask & (t.mask + 1)),
	      "slots not a power of two between 2x and 4x the entries");

	/* the open-coded probe loop sees the same entries */
	uint32_t e, seen = 0;
	for (size_t i = dt_htab_first(&t, hstr("key700")); (e = dt_htab_at(&t, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&t, i))
		if (!strcmp(k.s[e], "key700"))
			seen = e + 1;
	check("htab.loop", seen == 101, "the probe loop did not find key700 as entry 100");

	size_t slots = t.mask + 1;
	check("htab.slots_for", dt_htab_slots_for(&t, t.n) == slots &&
	      dt_htab_slots_for(&t, slots / 2 + 1) == 2 * slots &&
	      dt_htab_slots_for(&t, (size_t)DT_HTAB_MAX + 1) == 0,
	      "slots_for disagrees with the table's own sizing");
	dt_htab_clear(&t);
	check("htab.clear", t.n == 0 && t.mask + 1 == slots &&
	      dt_htab_find(&t, hstr("key0"), eq, &k, "key0") == DT_HTAB_NONE,
	      "clear kept an entry or dropped the slots");

	errno = 0;
	check("htab.entry_not_next", dt_htab_add(&t, 1, 5, rehash, &k) == -1 &&
	      errno == EINVAL && t.n == 0, "entry 5 was taken where 0 is next");
	errno = 0;
	t.n = DT_HTAB_MAX;	/* as if full: the limit is checked before any slot */
	int lim = dt_htab_add(&t, 1, DT_HTAB_MAX, rehash, &k);
	t.n = 0;
	check("htab.entry_limit", lim == -1 && errno == EOVERFLOW,
	      "an entry number at DT_HTAB_MAX was taken");
	errno = 0;
	check("htab.reserve_limit", dt_htab_reserve(&t, (size_t)DT_HTAB_MAX + 1, rehash, &k) == -1 &&
	      errno == EOVERFLOW && t.mask + 1 == slots, "a reserve past the limit changed the table");
	dt_htab_free(&t);

	/* all in one chain: still exact, and the table still ends */
	ok = 1;
	for (uint32_t i = 0; i < 300 && ok; i++)
		ok = dt_htab_add(&t, 0, i, hzero, &k) == 0;
	for (uint32_t i = 0; i < 300 && ok; i++)
		ok = dt_htab_find(&t, 0, eq, &k, k.s[i]) == i;
	ok = ok && dt_htab_find(&t, 0, eq, &k, "nosuch") == DT_HTAB_NONE;
	check("htab.collisions", ok, "300 colliding keys were not all found");
	dt_htab_free(&t);
	check("htab.free", t.slot == NULL && t.n == 0 &&
	      dt_htab_find(&t, 0, eq, &k, "key0") == DT_HTAB_NONE, "free left state behind");

	for (uint32_t i = 0; i < k.n; i++)
		free(k.s[i]);
	free(k.s);
}

/*
 * Removal: random adds and removes of keys from a small universe (so
 * both happen often), checked after every step against a reference map
 * from key to entry.  Keys are u64s in a dense array; the hash is chosen
 * per run: a good one, one that piles every key onto a few home slots
 * (long runs, so removals shift many entries back), and one whose homes
 * are the table's last slots (every run wraps past the end).
 */
struct keys {
	uint64_t *v;
	int	 kind;
};

static uint64_t khash(const struct keys *k, uint64_t key)
{
	switch (k->kind) {
	case 0: return key * 0x9E3779B97F4A7C15ULL;
	case 1: return key % 5;
	default: return UINT64_MAX - key % 7;
	}
}

static int keq(const void *ctx, uint32_t e, const void *key)
{
	return ((const struct keys *)ctx)->v[e] == *(const uint64_t *)key;
}

static uint64_t krehash(const void *ctx, uint32_t e)
{
	const struct keys *k = ctx;
	return khash(k, k->v[e]);
}

/* The table against the reference: every key of the universe found
 * exactly where ref says, and no slot used but by the n entries. */
static int remove_agrees(const struct dt_htab *t, const struct keys *k, const uint32_t *ref,
			 uint32_t universe, char *why, size_t wl)
{
	uint32_t e, used = 0;
	for (uint32_t key = 0; key < universe; key++) {
		uint32_t found = DT_HTAB_NONE;
		for (size_t i = dt_htab_first(t, khash(k, key)); (e = dt_htab_at(t, i)) != DT_HTAB_NONE;
		     i = dt_htab_next(t, i))
			if (k->v[e] == key) {
				found = e;
				break;
			}
		if (found != ref[key]) {
			snprintf(why, wl, "key %u: entry %u, reference %u", key, found, ref[key]);
			return 0;
		}
	}
	for (size_t i = 0; t->slot && i <= t->mask; i++) {
		if (!t->slot[i])
			continue;
		used++;
		if (t->slot[i] - 1 >= t->n) {
			snprintf(why, wl, "slot %zu holds %u past the %zu entries", i,
				 t->slot[i] - 1, t->n);
			return 0;
		}
	}
	if (used != t->n) {
		snprintf(why, wl, "%u slots used for %zu entries", used, t->n);
		return 0;
	}
	return 1;
}

static void test_htab_remove(void)
{
	enum { U = 3000, STEPS = 40000 };
	static const char *const kinds[] = { "mixed", "piled", "wrapping" };
	char why[160] = "", name[64];

	for (int kind = 0; kind < 3; kind++) {
		struct dt_htab t = {0};
		struct keys k = { calloc(U, sizeof(uint64_t)), kind };
		uint32_t *ref = malloc(U * sizeof(*ref));	/* key -> entry */
		uint32_t n = 0, adds = 0, removes = 0;
		uint64_t seed = 88172645463325252ULL + (uint64_t)kind;
		int ok = k.v && ref;

		for (uint32_t i = 0; ok && i < U; i++)
			ref[i] = DT_HTAB_NONE;
		why[0] = '\0';
		for (uint32_t step = 0; ok && step < STEPS; step++) {
			xorshift64(&seed);
			/* a universe that widens then narrows: the table fills
			 * past several doublings, then drains nearly empty */
			uint32_t width = step < STEPS / 2 ? 64 + step / 8 : U - (step - STEPS / 2) / 7;
			uint32_t key = (uint32_t)(seed >> 33) % (width < U ? width : U);
			/* narrowing: mostly removes */
			int del = ref[key] != DT_HTAB_NONE &&
				  (step < STEPS / 2 ? (seed & 3) != 0 : (seed & 7) != 0);
			uint32_t moved = DT_HTAB_NONE;	/* the entry renumbered */
			if (ref[key] == DT_HTAB_NONE) {
				k.v[n] = key;
				if (dt_htab_add(&t, khash(&k, key), n, krehash, &k)) {
					snprintf(why, sizeof(why), "add of key %u failed", key);
					ok = 0;
					break;
				}
				ref[key] = n++;
				adds++;
			} else if (del) {
				uint32_t e = ref[key];
				if (dt_htab_remove(&t, e, krehash, &k)) {
					snprintf(why, sizeof(why), "remove of entry %u failed", e);
					ok = 0;
					break;
				}
				ref[key] = DT_HTAB_NONE;
				k.v[e] = k.v[--n];	/* the last takes its number */
				if (e < n)
					ref[k.v[moved = e]] = e;
				removes++;
			}
			/* every step: the key and the entry that moved; now
			 * and then (and near empty): the whole universe */
			uint32_t got;
			uint64_t kk = key;
			if (t.n != n) {
				snprintf(why, sizeof(why), "table counts %zu, reference %u", t.n, n);
				ok = 0;
			} else if ((got = dt_htab_find(&t, khash(&k, key), keq, &k, &kk)) != ref[key]) {
				snprintf(why, sizeof(why), "key %u just changed: entry %u, reference %u",
					 key, got, ref[key]);
				ok = 0;
			} else if (moved != DT_HTAB_NONE &&
				   (got = dt_htab_find(&t, khash(&k, k.v[moved]), keq, &k,
						       &k.v[moved])) != moved) {
				snprintf(why, sizeof(why), "renumbered key %u: entry %u, not %u",
					 (unsigned)k.v[moved], got, moved);
				ok = 0;
			} else if ((step % 512 == 0 || n < 40) &&
				   !remove_agrees(&t, &k, ref, U, why, sizeof(why))) {
				ok = 0;
			}
		}
		ok = ok && remove_agrees(&t, &k, ref, U, why, sizeof(why));
		snprintf(name, sizeof(name), "htab.remove_random_%s", kinds[kind]);
		if (ok && (adds < 3000 || removes < 3000))
			snprintf(why, sizeof(why), "only %u adds and %u removes", adds, removes), ok = 0;
		check(name, ok, why);

		/* drained to nothing, then filled again: the slots still work */
		while (ok && n > 0) {
			uint32_t e = n / 2;
			ok = dt_htab_remove(&t, e, krehash, &k) == 0;
			ref[k.v[e]] = DT_HTAB_NONE;
			k.v[e] = k.v[--n];
			if (e < n)
				ref[k.v[e]] = e;
		}
		ok = ok && t.n == 0 && remove_agrees(&t, &k, ref, U, why, sizeof(why));
		for (uint32_t key = 0; ok && key < 100; key++) {
			k.v[n] = key;
			ok = dt_htab_add(&t, khash(&k, key), n, krehash, &k) == 0;
			ref[key] = n++;
		}
		ok = ok && remove_agrees(&t, &k, ref, U, why, sizeof(why));
		snprintf(name, sizeof(name), "htab.remove_drain_%s", kinds[kind]);
		check(name, ok, why[0] ? why : "draining or refilling failed");

		errno = 0;
		size_t before = t.n;
		snprintf(name, sizeof(name), "htab.remove_not_entry_%s", kinds[kind]);
		check(name, dt_htab_remove(&t, (uint32_t)t.n, krehash, &k) == -1 &&
		      errno == EINVAL && t.n == before, "entry n was removed");
		dt_htab_free(&t);
		free(k.v);
		free(ref);
	}

	/* a key changed behind the table's back: refused, nothing moved */
	struct dt_htab t = {0};
	uint64_t v[2] = { 1, 2 };
	struct keys k = { v, 0 };
	int ok = dt_htab_add(&t, khash(&k, 1), 0, krehash, &k) == 0 &&
		 dt_htab_add(&t, khash(&k, 2), 1, krehash, &k) == 0;
	v[1] = 99;
	errno = 0;
	ok = ok && dt_htab_remove(&t, 0, krehash, &k) == -1 && errno == EINVAL && t.n == 2;
	v[1] = 2;
	uint32_t ref[3] = { DT_HTAB_NONE, 0, 1 };
	ok = ok && remove_agrees(&t, &k, ref, 3, why, sizeof(why));
	check("htab.remove_stale_key", ok, "a remove through a changed key went ahead");
	dt_htab_free(&t);
}

/* dt_htab_hash_int: keys that differ only in their high bits (pids
 * shifted into an id, addresses of one page) still spread over the low
 * bits the table indexes by. */
static void test_hash_int(void)
{
	enum { N = 4096 };
	static unsigned char seen[N];
	unsigned distinct = 0, lo = 0;

	for (uint64_t i = 0; i < N; i++) {
		size_t b = (size_t)dt_htab_hash_int(i << 40) & (N - 1);
		distinct += !seen[b];
		seen[b] = 1;
	}
	memset(seen, 0, sizeof(seen));
	for (uint64_t i = 0; i < N; i++) {
		size_t b = (size_t)dt_htab_hash_int(i) & (N - 1);
		lo += !seen[b];
		seen[b] = 1;
	}
	/* random placement fills about 1 - 1/e of the buckets: 2589 */
	char why[96];
	snprintf(why, sizeof(why), "%u and %u of %u buckets used", distinct, lo, N);
	check("htab.hash_int_spreads", distinct > 2400 && lo > 2400, why);
}

int main(void)
{
	test_grow();
	test_htab();
	test_htab_remove();
	test_hash_int();
	return check_status();
}
