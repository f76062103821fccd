/* kused.c - see kused.h. */
#include "kused.h"

#include <stdlib.h>
#include <string.h>

#include "dt_grow.h"
#include "util.h"

struct kline {
	uint64_t	addr;
	uint32_t	off, len;	/* the line in text, newline included */
};

struct kused {
	char		*text;		/* [I] */
	size_t		len;
	struct kline	*v;		/* [I] text symbols, sorted by address */
	size_t		n;
	uint8_t		*used;		/* per line of text (by index in lines) */
	uint32_t	*lineidx;	/* v[i] -> its line number */
	uint32_t	*lineoff;	/* line number -> offset, file order */
	size_t		nlines;
	int		whole;		/* unprivileged text: keep it all */
	int		dirty;		/* marked since the last kused_text */
	char		*out;		/* the last kused_text */
	size_t		outcap;
};

static int
cmp_addr(const void *a, const void *b)
{
	const struct kline *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static uint64_t
hex(const char *p, const char *end, int *ok)
{
	uint64_t v = 0;
	int n = 0;

	for (; p < end && *p != ' '; p++, n++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (d < 0 || n >= 16) {
			*ok = 0;
			return 0;
		}
		v = v << 4 | (uint64_t)d;
	}
	*ok = n > 0;
	return v;
}

struct kused *
kused_new(char *text, size_t len)
{
	struct kused *k = calloc(1, sizeof(*k));
	size_t cap = 0, lcap = 0, nz = 0;
	const char *p = text, *end = text + len;

	if (k == NULL) {
		free(text);
		return NULL;
	}
	k->text = text;
	k->len = len;
	k->dirty = 1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl + 1 : end;
		int ok;
		uint64_t a = hex(p, e, &ok);

		if (DT_GROW(k->lineoff, lcap, k->nlines, 1, 65536))
			goto nomem;
		k->lineoff[k->nlines] = (uint32_t)(p - text);
		/* "addr T name": text symbols bound functions; data ones do not */
		if (ok && a && e - p > 19 && strchr("tTwW", p[17])) {
			if (DT_GROW(k->v, cap, k->n, 1, 65536))
				goto nomem;
			k->v[k->n].addr = a;
			k->v[k->n].off = (uint32_t)k->nlines;	/* line number until sorted */
			k->v[k->n].len = (uint32_t)(e - p);
			k->n++;
		}
		if (ok && a)
			nz++;
		k->nlines++;
		p = e;
	}
	k->whole = nz == 0 || len > UINT32_MAX;
	if ((k->used = calloc(k->nlines ? k->nlines : 1, 1)) == NULL)
		goto nomem;
	qsort(k->v, k->n, sizeof(*k->v), cmp_addr);
	/* the kernel's text bounds: readers tell kernel from module addresses */
	for (size_t i = 0; i < k->nlines; i++) {
		const char *l = text + k->lineoff[i];
		size_t rest = len - k->lineoff[i];
		if (rest > 19 && (!strncmp(l + 19, "_text\n", 6) || !strncmp(l + 19, "_stext\n", 7) ||
				  !strncmp(l + 19, "_etext\n", 7)))
			k->used[i] = 1;
	}
	return k;
nomem:
	kused_free(k);
	return NULL;
}

void
kused_free(struct kused *k)
{
	if (k == NULL)
		return;
	free(k->text);
	free(k->v);
	free(k->used);
	free(k->lineoff);
	free(k->out);
	free(k);
}

void
kused_mark(struct kused *k, const uint64_t *pcs, unsigned n)
{
	if (k == NULL || k->whole)
		return;
	for (unsigned i = 0; i < n; i++) {
		/* the last symbol at or below the pc: v[lo - 1] */
		size_t lo = DTU_UPPER_BOUND(k->n, j, k->v[j].addr, pcs[i]);
		if (lo == 0)
			continue;
		for (size_t j = lo - 1; j <= lo && j < k->n; j++) {
			if (!k->used[k->v[j].off]) {
				k->used[k->v[j].off] = 1;
				k->dirty = 1;
			}
		}
	}
}

const char *
kused_text(struct kused *k, size_t *len)
{
	size_t used = 0;

	if (k == NULL || !k->dirty)
		return NULL;
	k->dirty = 0;
	if (k->whole) {
		*len = k->len;
		return k->text;
	}
	for (size_t i = 0; i < k->nlines; i++) {
		size_t l;
		if (!k->used[i])
			continue;
		l = (i + 1 < k->nlines ? k->lineoff[i + 1] : k->len) - k->lineoff[i];
		if (DT_GROW(k->out, k->outcap, used, l, 65536))
			return NULL;
		memcpy(k->out + used, k->text + k->lineoff[i], l);
		used += l;
	}
	*len = used;
	return used ? k->out : NULL;
}
