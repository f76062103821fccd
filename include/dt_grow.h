/*
 * dt_grow.h - the one way an array grows in dt's user space (libdtcap and
 * the tools): capacity doubles from a first size until it holds what is
 * needed, and no multiplication may wrap.  A wrapped `cap * 2` or
 * `cap * sizeof(x)` hands realloc a small size that the caller then
 * writes past, so every step is checked against the largest value the
 * capacity's own type (and size_t) can hold.
 *
 * Header only: libdtcap links nothing of the tools, and the hot callers
 * (interning, flame graph nodes) inline the test that there is room.
 */
#ifndef DT_GROW_H
#define DT_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * The capacity an array of elem-byte items with capacity cap grows to so
 * that it holds need: cap doubled (min when cap is 0) as often as it takes,
 * cut to capmax only if doubling would pass it.  0 with *ncap set (cap
 * itself when need <= cap), or -1 with errno EOVERFLOW when need items
 * cannot be counted in capmax or their bytes in size_t.  For callers that
 * must account for the memory before they allocate it.
 */
static inline int dt_grow_cap(size_t cap, size_t need, size_t elem, size_t min,
			      size_t capmax, size_t *ncap)
{
	if (need <= cap) {
		*ncap = cap;
		return 0;
	}
	if (capmax > SIZE_MAX / (elem ? elem : 1))
		capmax = SIZE_MAX / (elem ? elem : 1);
	if (need > capmax) {
		errno = EOVERFLOW;
		return -1;
	}
	size_t nc = cap ? cap : (min ? min : 1);
	if (nc > capmax)
		nc = capmax;	/* a first size past what the type counts */
	while (nc < need)
		nc = nc > capmax / 2 ? capmax : nc * 2;
	*ncap = nc;
	return 0;
}

/*
 * Grow p, an array of elem-byte items holding *cap of them, to the
 * capacity dt_grow_cap gives.  Returns the reallocated array with *cap
 * set, or NULL with errno ENOMEM (or EOVERFLOW), p then left as it was and
 * still the caller's.  need <= *cap returns p.
 */
__attribute__((noinline, unused))	/* cold: DT_GROW inlines only its test */
static void *dt_grow_array(void *p, size_t *cap, size_t need, size_t elem,
			   size_t min, size_t capmax)
{
	size_t nc;
	if (dt_grow_cap(*cap, need, elem, min, capmax, &nc))
		return NULL;
	if (nc == *cap)
		return p;
	void *np = realloc(p, nc * elem);
	if (!np) {
		errno = ENOMEM;
		return NULL;
	}
	*cap = nc;
	return np;
}

/* The largest value an unsigned lvalue's type holds, as a size_t. */
#define DT_UMAX(x)	(sizeof(x) >= sizeof(size_t) ? SIZE_MAX : \
			 ((size_t)1 << (8 * sizeof(x))) - 1)

/*
 * DT_GROW(arr, cap, n, more, min): make the array arr (a pointer lvalue)
 * with capacity cap (an unsigned lvalue of any width) hold n + more items,
 * by dt_grow_array.  n + more is summed as size_t and checked, so a count
 * at the top of its type is refused instead of wrapping to a small need.  0 with arr
 * and cap updated, or -1 with both untouched (errno set).  arr and cap
 * are evaluated more than once.
 *
 *	if (DT_GROW(v, cap, n, 1, 64))
 *		return -1;
 *	v[n++] = x;
 */
#define DT_GROW(arr, cap, n, more, min) __extension__ ({			\
	_Static_assert((__typeof__(cap))-1 > 0, "DT_GROW: cap is unsigned"); \
	size_t dtg_n_ = (n), dtg_need_ = dtg_n_ + (size_t)(more);	\
	size_t dtg_cap_ = (cap);					\
	int dtg_rc_ = 0;						\
	if (dtg_need_ > dtg_cap_ || dtg_need_ < dtg_n_) {		\
		void *dtg_p_ = dtg_need_ < dtg_n_ ? (errno = EOVERFLOW, NULL) : \
			dt_grow_array((arr), &dtg_cap_, dtg_need_,	\
				      sizeof(*(arr)), (min), DT_UMAX(cap)); \
		if (dtg_p_) {						\
			(arr) = dtg_p_;					\
			(cap) = dtg_cap_;				\
		} else {						\
			dtg_rc_ = -1;					\
		}							\
	}								\
	dtg_rc_;							\
})

#endif /* DT_GROW_H */
