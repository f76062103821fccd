/*
 * dtcap_ksym.c - a compact form of /proc/kallsyms text (chunk KSYC).
 *
 * A kernel's kallsyms is 3-6 MB of text and zstd -3 leaves about 1 MB of
 * it, which dwarfs the events of a short recording.  Split into columns
 * (address deltas, type letters, names, module names) it compresses a
 * third smaller.  The writer only uses this form when decoding it gives
 * back the input byte for byte; anything unusual stays plain text (KSYM).
 *
 * Payload (before zstd):
 *	uv nlines, uv addrlen, addrlen bytes of zz(addr - previous) uv,
 *	nlines type bytes, nlines names each ending in '\n',
 *	nlines module names each ending in '\n' ("" = no module)
 * Line i is "%016llx %c %s\n", or "%016llx %c %s\t%s\n" with a module.
 */
#include <stdlib.h>
#include <string.h>

#include "dtcap_int.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int dtc_ksym_encode(const char *text, size_t len, struct dtc_buf *out)
{
	struct dtc_buf addr = {0}, types = {0}, names = {0}, mods = {0};
	uint64_t prev = 0, n = 0;
	const char *p = text, *end = text + len;
	int ok = len > 0 && text[len - 1] == '\n';
	while (ok && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		/* "xxxxxxxxxxxxxxxx T name\n" at the least */
		if (!nl || nl - p < 20 || p[16] != ' ' || p[18] != ' ' || p[17] == '\n') {
			ok = 0;
			break;
		}
		uint64_t a = 0;
		for (int i = 0; i < 16 && ok; i++) {
			int v = hexval(p[i]);
			ok = v >= 0;
			a = a << 4 | (uint64_t)(v & 15);
		}
		const char *name = p + 19, *tab = memchr(name, '\t', (size_t)(nl - name));
		const char *nend = tab ? tab : nl;
		if (!ok || nend == name || memchr(name, ' ', (size_t)(nend - name)) ||
		    (tab && memchr(tab + 1, '\t', (size_t)(nl - tab - 1)))) {
			ok = 0;
			break;
		}
		dtc_buf_uv(&addr, dtc_zz((int64_t)(a - prev)));
		prev = a;
		dtc_buf_u8(&types, (uint8_t)p[17]);
		dtc_buf_put(&names, name, (size_t)(nend - name));
		dtc_buf_u8(&names, '\n');
		if (tab)
			dtc_buf_put(&mods, tab + 1, (size_t)(nl - tab - 1));
		dtc_buf_u8(&mods, '\n');
		n++;
		p = nl + 1;
	}
	if (ok) {
		dtc_buf_uv(out, n);
		dtc_buf_uv(out, addr.len);
		dtc_buf_put(out, addr.p, addr.len);
		dtc_buf_put(out, types.p, types.len);
		dtc_buf_put(out, names.p, names.len);
		dtc_buf_put(out, mods.p, mods.len);
		ok = !out->err && !addr.err && !types.err && !names.err && !mods.err;
	}
	dtc_buf_free(&addr);
	dtc_buf_free(&types);
	dtc_buf_free(&names);
	dtc_buf_free(&mods);
	if (!ok)
		return -1;
	/* use the compact form only if it gives back exactly the input */
	size_t olen;
	char *back = dtc_ksym_decode(out->p, out->len, &olen);
	ok = back && olen == len && !memcmp(back, text, len);
	free(back);
	return ok ? 0 : -1;
}

char *dtc_ksym_decode(const uint8_t *p, size_t len, size_t *olen)
{
	struct dtc_cur c = {p, p + len, 0};
	uint64_t n = dtc_get_uv(&c), alen = dtc_get_uv(&c);
	if (c.err || n > len || alen > (size_t)(c.end - c.p))
		return NULL;
	struct dtc_cur a = {c.p, c.p + alen, 0};
	c.p += alen;
	const uint8_t *types = dtc_get_bytes(&c, n);
	if (!types)
		return NULL;
	/* names and modules: the rest, 2n newline-terminated strings */
	const char *s = (const char *)c.p, *send = (const char *)c.end;
	size_t rest = (size_t)(send - s);
	/* every line: 16 + 3 + name + (tab + module) + newline; the names
	 * and modules with their newlines are the rest of the payload */
	size_t cap = n * 20 + rest + 1;
	char *out = malloc(cap), *o = out;
	if (!out)
		return NULL;
	const char *names = s, *mods = NULL;
	/* find where the module list starts: after n newlines */
	const char *q = s;
	for (uint64_t i = 0; i < n; i++) {
		q = memchr(q, '\n', (size_t)(send - q));
		if (!q)
			goto bad;
		q++;
	}
	mods = q;
	uint64_t addr = 0;
	static const char hex[] = "0123456789abcdef";
	for (uint64_t i = 0; i < n; i++) {
		addr += (uint64_t)dtc_unzz(dtc_get_uv(&a));
		if (a.err || types[i] == '\n')
			goto bad;
		const char *ne = memchr(names, '\n', (size_t)(mods - names));
		const char *me = memchr(mods, '\n', (size_t)(send - mods));
		if (!ne || !me || ne == names)
			goto bad;
		for (int k = 0; k < 16; k++)
			o[k] = hex[(addr >> (60 - 4 * k)) & 15];
		o[16] = ' ';
		o[17] = (char)types[i];
		o[18] = ' ';
		o += 19;
		memcpy(o, names, (size_t)(ne - names));
		o += ne - names;
		if (me != mods) {
			*o++ = '\t';
			memcpy(o, mods, (size_t)(me - mods));
			o += me - mods;
		}
		*o++ = '\n';
		names = ne + 1;
		mods = me + 1;
	}
	if (a.p != a.end || mods != send || names != q)
		goto bad;
	*o = 0;
	*olen = (size_t)(o - out);
	return out;
bad:
	free(out);
	return NULL;
}
