/*
 * dtsql_tokens.h - SQL text as sqlite's tokens, for the rewrite of
 * dtsql_groupby.c, which checks a statement token by token.
 */
#ifndef DTSQL_TOKENS_H
#define DTSQL_TOKENS_H

#include <stddef.h>
#include <string.h>
#include <strings.h>

enum { K_ID, K_QID, K_STR, K_NUM, K_OP, K_OTHER };

struct tok {
	int		kind;
	const char	*p;
	size_t		n;
	int		other;	/* a column of the joined table ("f.name") */
};

struct toks {
	struct tok	*t;
	size_t		n, cap;
	char		eva[64];	/* the events table's alias; "" none */
};

/* Split s into sqlite's tokens (comments and blanks dropped), appended to
 * v.  -1 on what this does not handle (parameters, unterminated quotes):
 * no rewrite. */
int dtsql_tokenize(const char *s, struct toks *v);

/* The name an identifier token stands for, unquoted, in buf (NULL: not an
 * identifier, or too long to be one of ours). */
const char *dtsql_id_name(const struct tok *t, char *buf, size_t size);

/* A bare word, any case. */
static inline int is_kw(const struct tok *t, const char *w)
{
	return t->kind == K_ID && strlen(w) == t->n && strncasecmp(t->p, w, t->n) == 0;
}

/* t is one of the n words of w, in any case */
static inline int is_kw_of(const struct tok *t, const char *const *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_kw(t, w[i]))
			return 1;
	return 0;
}

static inline int is_op(const struct tok *t, const char *o)
{
	return t->kind == K_OP && strlen(o) == t->n && memcmp(t->p, o, t->n) == 0;
}

#endif
