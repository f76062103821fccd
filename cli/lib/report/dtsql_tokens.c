/*
 * dtsql_tokens.c - SQL text split into sqlite's tokens (dtsql_tokens.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dtsql_tokens.h"

static int tok_push(struct toks *v, int kind, const char *p, size_t n)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		struct tok *t = realloc(v->t, cap * sizeof(*t));
		if (t == NULL)
			return -1;
		v->t = t;
		v->cap = cap;
	}
	v->t[v->n++] = (struct tok){ kind, p, n, 0 };
	return 0;
}

static int id_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

static int id_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

int dtsql_tokenize(const char *s, struct toks *v)
{
	const char *p = s;
	while (*p) {
		unsigned char c = (unsigned char)*p;
		const char *q = p;
		if (isspace(c)) {
			p++;
			continue;
		}
		if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			if (e == NULL)
				return -1;
			p = e + 2;
			continue;
		}
		int kind;
		if ((c == 'x' || c == 'X') && p[1] == '\'') {
			q = p + 1;
			c = '\'';
		}
		if (c == '\'' || c == '"' || c == '`' || c == '[') {
			char close = c == '[' ? ']' : (char)c;
			q++;
			for (;;) {
				if (*q == 0)
					return -1;
				if (*q == close) {
					if (close != ']' && q[1] == close) {
						q += 2;
						continue;
					}
					q++;
					break;
				}
				q++;
			}
			kind = c == '\'' ? K_STR : K_QID;
		} else if (id_start(c)) {
			while (id_char((unsigned char)*q))
				q++;
			kind = K_ID;
		} else if (isdigit(c) || (c == '.' && isdigit((unsigned char)p[1]))) {
			while (isalnum((unsigned char)*q) || *q == '.' ||
			       ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E')))
				q++;
			kind = K_NUM;
		} else if (c == '?' || c == ':' || c == '@' || c == '$' || c == '#') {
			return -1;	/* parameters: not rewritten */
		} else {
			static const char *const two[] = {
				"||", "<=", ">=", "<>", "!=", "==", "<<", ">>", "->",
			};
			q = p + 1;
			for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
				if (p[0] == two[i][0] && p[1] == two[i][1])
					q = p + 2;
			if (p[0] == '-' && p[1] == '>' && p[2] == '>')
				q = p + 3;
			kind = K_OP;
		}
		if (tok_push(v, kind, p, (size_t)(q - p)) < 0)
			return -1;
		p = q;
	}
	return 0;
}

const char *dtsql_id_name(const struct tok *t, char *buf, size_t size)
{
	if (t->kind == K_ID) {
		if (t->n >= size)
			return NULL;
		memcpy(buf, t->p, t->n);
		buf[t->n] = 0;
		return buf;
	}
	if (t->kind != K_QID)
		return NULL;
	size_t o = 0;
	char close = t->p[0] == '[' ? ']' : t->p[0];
	for (size_t i = 1; i + 1 < t->n; i++) {
		if (o + 1 >= size)
			return NULL;
		buf[o++] = t->p[i];
		if (t->p[i] == close && close != ']')
			i++;	/* a doubled quote */
	}
	buf[o] = 0;
	return buf;
}
