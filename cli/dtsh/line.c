/*
 * line.c - how dtsh reads a line: ';' separates commands, quotes protect
 * spaces and ';' (SQL string literals and file names with spaces).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dt_grow.h"
#include "dtsh.h"

static char *
trimdup(const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

int
dtsh_split(const char *line, char ***out, char *err, size_t errlen)
{
	char **v = NULL;
	int n = 0;
	size_t vcap = 0;
	const char *start = line, *p;
	char q = 0;

	*out = NULL;
	for (p = line;; p++) {
		if (*p == '\0' && q) {
			snprintf(err, errlen, "unterminated %c quote", q);
			goto fail;
		}
		if (q) {
			/* SQL doubles a quote to escape it: '' stays inside. */
			if (*p == q)
				q = 0;
			else if (*p == '\\' && q == '"' && p[1])
				p++;
			continue;
		}
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '\'' || *p == '"') {
			q = *p;
			continue;
		}
		if (*p == ';' || *p == '\0') {
			char *c = trimdup(start, (size_t)(p - start));
			if (c == NULL)
				goto nomem;
			if (*c == '\0' || *c == '#') {
				/* empty commands and comments are nothing */
				free(c);
			} else {
				if (DT_GROW(v, vcap, (size_t)n, 1, 8)) {
					free(c);
					goto nomem;
				}
				v[n++] = c;
			}
			if (*p == '\0')
				break;
			start = p + 1;
		}
	}
	*out = v;
	return n;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	while (n > 0)
		free(v[--n]);
	free(v);
	return -1;
}

void
dtsh_free_argv(char **argv)
{
	if (argv == NULL)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

int
dtsh_tokenize(const char *s, int partial, char ***argvp, char *err, size_t errlen)
{
	char **v = NULL;
	int n = 0;
	size_t vcap = 0, len = strlen(s);
	char *w = malloc(len + 1);
	size_t wl;
	const char *p = s;

	*argvp = NULL;
	if (DT_GROW(v, vcap, 0, 1, 8) || w == NULL)
		goto nomem;
	v[0] = NULL;
	for (;;) {
		char q = 0;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		wl = 0;
		for (; *p; p++) {
			if (q == '\'') {
				if (*p == '\'')
					q = 0;
				else
					w[wl++] = *p;
				continue;
			}
			if (q == '"') {
				if (*p == '"')
					q = 0;
				else if (*p == '\\' && p[1])
					w[wl++] = *++p;
				else
					w[wl++] = *p;
				continue;
			}
			if (isspace((unsigned char)*p))
				break;
			if (*p == '\'' || *p == '"')
				q = *p;
			else if (*p == '\\' && p[1])
				w[wl++] = *++p;
			else
				w[wl++] = *p;
		}
		if (q && !partial) {
			snprintf(err, errlen, "unterminated %c quote", q);
			goto fail;
		}
		w[wl] = '\0';
		if (DT_GROW(v, vcap, (size_t)n, 2, 8))	/* the word and the NULL */
			goto nomem;
		if ((v[n] = strdup(w)) == NULL)
			goto nomem;
		v[++n] = NULL;
	}
	free(w);
	*argvp = v;
	return n;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	free(w);
	if (v) {
		v[n] = NULL;
		dtsh_free_argv(v);
	}
	return -1;
}

int
dtsh_is_sql_word(const char *word)
{
	return strcasecmp(word, "select") == 0 || strcasecmp(word, "with") == 0 ||
	       strcasecmp(word, "pragma") == 0 || strcasecmp(word, "explain") == 0;
}
