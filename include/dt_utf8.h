/*
 * dt_utf8.h - the one rule for text that leaves dt in a file or on a
 * terminal (Parquet, pprof, SQLite, CSV, JSON, folded, SVG alike): comms
 * are cut by the kernel at 15 bytes, mid-character, and one bad byte makes
 * a whole dataset unreadable to DuckDB, arrow, strict protobuf or Python's
 * sqlite3.  Each byte that does not start a valid sequence becomes U+FFFD,
 * the rest is kept as it is.
 *
 * Header only, like dt_grow.h: the Parquet writer (formats/parquet/) links
 * nothing of the tools, and the tools' util.h (dtu_utf8_*) is this.
 */
#ifndef DT_UTF8_H
#define DT_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DT_UTF8_BAD	"\xef\xbf\xbd"	/* U+FFFD, what a bad byte becomes */

/*
 * Length of the valid UTF-8 sequence at s with n bytes left (SIZE_MAX for
 * a NUL-terminated string: a NUL ends any sequence), 0 if invalid
 * (overlong forms and surrogates included).
 */
static inline int dt_utf8_len(const unsigned char *s, size_t n)
{
	int len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;
	if (len == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return len;
}

/*
 * The character at s[0..n), n >= 1: its bytes in *out and their count in
 * *outlen; returns how many bytes of s it stands for.
 */
static inline size_t dt_utf8_char(const char *s, size_t n, const char **out, size_t *outlen)
{
	int len = dt_utf8_len((const unsigned char *)s, n);

	if (len == 0) {
		*out = DT_UTF8_BAD;
		*outlen = sizeof(DT_UTF8_BAD) - 1;
		return 1;
	}
	*out = s;
	*outlen = (size_t)len;
	return (size_t)len;
}

/*
 * s[0..n) under the rule: s itself when it is valid already (no copy),
 * else a copy in *buf (malloc'd or grown, NUL-terminated; the caller frees
 * it once, after the last call), NULL when memory ran out.  *outlen: the
 * length returned.
 */
static inline const char *dt_utf8_fix(const char *s, size_t n, size_t *outlen, char **buf,
				      size_t *bufcap)
{
	size_t i = 0;

	/* the common case: ASCII, then valid sequences, no copy */
	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		int len = dt_utf8_len((const unsigned char *)s + i, n - i);
		if (len == 0)
			break;
		i += (size_t)len;
	}
	if (i == n) {
		*outlen = n;
		return s;
	}
	/* at most 3 bytes out for each byte in */
	if (n > (SIZE_MAX - 1) / 3)
		return NULL;
	size_t need = 3 * n + 1;
	if (*bufcap < need) {
		char *p = realloc(*buf, need);
		if (p == NULL)
			return NULL;
		*buf = p;
		*bufcap = need;
	}
	char *o = *buf;
	memcpy(o, s, i);
	size_t k = i;
	while (i < n) {
		const char *c;
		size_t cl;
		i += dt_utf8_char(s + i, n - i, &c, &cl);
		memcpy(o + k, c, cl);
		k += cl;
	}
	o[k] = 0;
	*outlen = k;
	return o;
}

#endif
