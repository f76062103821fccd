/*
 * termsafe.c - capture text escaped for terminals and tables (termsafe.h).
 */
#include <stdio.h>
#include <string.h>

#include "termsafe.h"
#include "util.h"

/* The bytes of s[i..] that stay as they are: 1 for a printable ASCII byte,
 * the sequence's length for printable UTF-8, 0 for a byte to escape. */
static size_t keep(const unsigned char *s, size_t left)
{
	if (s[0] >= 0x20 && s[0] < 0x7f)
		return s[0] == '\\' ? 0 : 1;
	if (s[0] < 0x80)
		return 0;
	int n = dtu_utf8_len(s, left);
	/* U+0080..U+009F are C1 controls: CSI (U+009B) starts a sequence */
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return n > 0 ? (size_t)n : 0;
}

int dtt_unsafe(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);

	while (left) {
		size_t k = keep(p, left);
		if (k == 0)
			return 1;
		p += k;
		left -= k;
	}
	return 0;
}

size_t dtt_escape(char *out, size_t outsz, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s), len = 0, w = 0;
	int full = outsz == 0;

	while (left) {
		char esc[8];
		const char *piece = (const char *)p;
		size_t k = keep(p, left), adv = k;
		if (k == 0) {
			adv = 1;
			switch (*p) {
			case '\n': memcpy(esc, "\\n", 3); break;
			case '\r': memcpy(esc, "\\r", 3); break;
			case '\t': memcpy(esc, "\\t", 3); break;
			case '\\': memcpy(esc, "\\\\", 3); break;
			default: snprintf(esc, sizeof(esc), "\\%03o", *p);
			}
			piece = esc;
			k = strlen(esc);
		}
		/* a whole escape or character, or nothing from here on */
		if (!full && w + k < outsz) {
			memcpy(out + w, piece, k);
			w += k;
		} else {
			full = 1;
		}
		len += k;
		p += adv;
		left -= adv;
	}
	if (outsz)
		out[w] = 0;
	return len;
}

const char *dtt_str(const char *s)
{
	static _Thread_local char buf[8][4096];
	static _Thread_local unsigned next;

	if (s == NULL || !dtt_unsafe(s))
		return s;
	char *b = buf[next++ % 8];
	dtt_escape(b, sizeof(buf[0]), s);
	return b;
}
