/*
 * dtsql_print.c - dtsql_exec: run statements (and the dot-commands .tables
 * and .schema) and print their results as an aligned table, CSV or JSON.
 * See dtsql.h.
 */
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "dtsql.h"
#include "dtsql_int.h"
#include "termsafe.h"
#include "util.h"

/* Display width of UTF-8 text: code points (good enough for comms). */
static size_t u8width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/*
 * A syntax error near a word that is no SQL keyword but close to some
 * (FORM, SELET): "; did you mean FROM?", from SQLite's own keyword list.
 * "" when there is nothing to say.
 */
static const char *keyword_hint(const char *msg, char *buf, size_t len)
{
	const char *p = strstr(msg, "near \"");
	char word[48];
	size_t n;

	if (p == NULL || strstr(msg, "syntax error") == NULL)
		return "";
	p += 6;
	n = strcspn(p, "\"");
	if (n == 0 || n >= sizeof(word))
		return "";
	for (size_t i = 0; i < n; i++)
		word[i] = (char)toupper((unsigned char)p[i]);
	word[n] = 0;
	int nk = sqlite3_keyword_count();
	char (*kw)[32] = calloc((size_t)nk, sizeof(*kw));
	const char **kp = calloc((size_t)nk, sizeof(*kp));
	size_t m = 0;
	for (int i = 0; kw && kp && i < nk; i++) {
		const char *z;
		int l;
		if (sqlite3_keyword_name(i, &z, &l) == SQLITE_OK && l > 0 && l < 32) {
			memcpy(kw[m], z, (size_t)l);
			kw[m][l] = 0;
			if (!strcmp(kw[m], word)) {
				m = 0;	/* a keyword in the wrong place: no typo */
				break;
			}
			kp[m] = kw[m];
			m++;
		}
	}
	const char *best[3];
	size_t k = m ? dtu_suggest(word, kp, m, 0, best, 3) : 0;
	buf[0] = 0;
	if (k) {
		size_t o = (size_t)snprintf(buf, len, "; did you mean");
		for (size_t j = 0; j < k && o < len; j++)
			o += (size_t)snprintf(buf + o, len - o, "%s %s", j == 0 ? "" :
					      j + 1 == k ? " or" : ",", best[j]);
		if (o < len)
			snprintf(buf + o, len - o, "?");
	}
	free(kw);
	free(kp);
	return buf;
}

static void csv_field(FILE *out, const char *s)
{
	/* text a query made up (CAST(x'c3' AS TEXT)) is not cleaned by the
	 * tables: the same rule as every other writer */
	char *buf = NULL;
	size_t cap = 0, len;
	const char *v = dtu_utf8_fix(s, strlen(s), &len, &buf, &cap);
	s = v ? v : "\xef\xbf\xbd";
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, out);
		free(buf);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
	free(buf);
}

static void json_string(FILE *out, const char *s, int n)
{
	fputc('"', out);
	for (int i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x80) {
			/* comms are kernel bytes, not always UTF-8: the one
			 * rule of every writer, kept ASCII as dtu_json_str does */
			const char *o;
			size_t ol, len = dtu_utf8_char(s + i, (size_t)(n - i), &o, &ol);
			if (o != s + i)
				fputs("\\ufffd", out);
			else
				fwrite(o, 1, ol, out);
			i += (int)len - 1;
			continue;
		}
		switch (ch) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (ch < 0x20 || ch == 0x7f)
				fprintf(out, "\\u%04x", ch);
			else
				fputc(ch, out);
		}
	}
	fputc('"', out);
}

/* A cell as text for table/csv; blobs in hex. Returns malloc'd text. */
static char *cell_text(sqlite3_stmt *st, int i, int table)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		return strdup(table ? "NULL" : "");
	case SQLITE_BLOB: {
		int n = sqlite3_column_bytes(st, i);
		const unsigned char *b = sqlite3_column_blob(st, i);
		char *s = malloc((size_t)n * 2 + 4);
		if (s == NULL)
			return NULL;
		char *p = s;
		*p++ = 'x'; *p++ = '\'';
		for (int k = 0; k < n; k++)
			p += sprintf(p, "%02x", b[k]);
		*p++ = '\''; *p = 0;
		return s;
	}
	default: {
		const char *t = (const char *)sqlite3_column_text(st, i);
		if (t == NULL)
			return strdup("");
		if (!table || !dtt_unsafe(t))
			return strdup(t);
		/* a table is for a terminal: a comm's escape sequence or
		 * newline must not move the cursor or forge a row */
		size_t n = dtt_escape(NULL, 0, t) + 1;
		char *e = malloc(n);
		if (e)
			dtt_escape(e, n, t);
		return e;
	}
	}
}

#define TABLE_BUFFER	2000	/* rows buffered to size the columns */

struct tbl {
	int		ncol;
	size_t		*w;
	int		*num;		/* right-align: every value numeric */
	char		**cells;	/* buffered rows, row-major */
	size_t		nrows;
	int		printed_head;
	unsigned long long total;
};

static void tbl_print_row(FILE *out, const struct tbl *t, char **row)
{
	for (int i = 0; i < t->ncol; i++) {
		size_t w = u8width(row[i]);
		size_t pad = t->w[i] > w ? t->w[i] - w : 0;
		if (i)
			fputs("  ", out);
		if (t->num[i])
			fprintf(out, "%*s%s", (int)pad, "", row[i]);
		else if (i == t->ncol - 1)
			fputs(row[i], out);
		else
			fprintf(out, "%s%*s", row[i], (int)pad, "");
	}
	fputc('\n', out);
}

static void tbl_flush(FILE *out, struct tbl *t, sqlite3_stmt *st)
{
	if (!t->printed_head) {
		for (int i = 0; i < t->ncol; i++)
			if (t->num[i] == -1)
				t->num[i] = 0;
		char **h = calloc((size_t)t->ncol, sizeof(*h));
		for (int i = 0; h && i < t->ncol; i++) {
			h[i] = (char *)dtt_str(sqlite3_column_name(st, i));
			/* dtt_str's buffers go round: a copy for each name */
			if ((h[i] = strdup(h[i] ? h[i] : "")) == NULL) {
				while (i--)
					free(h[i]);
				free(h);
				h = NULL;
			}
		}
		for (int i = 0; h && i < t->ncol; i++)
			if (u8width(h[i]) > t->w[i])
				t->w[i] = u8width(h[i]);
		if (h) {
			tbl_print_row(out, t, h);
			for (int i = 0; i < t->ncol; i++)
				free(h[i]);
			free(h);
		}
		for (int i = 0; i < t->ncol; i++) {
			if (i)
				fputs("  ", out);
			for (size_t k = 0; k < t->w[i]; k++)
				fputc('-', out);
		}
		fputc('\n', out);
		t->printed_head = 1;
	}
	for (size_t r = 0; r < t->nrows; r++) {
		tbl_print_row(out, t, t->cells + r * (size_t)t->ncol);
		for (int i = 0; i < t->ncol; i++)
			free(t->cells[r * (size_t)t->ncol + i]);
	}
	t->nrows = 0;
}

static int on_progress(void *arg)
{
	volatile sig_atomic_t *f = arg;
	return f && *f;
}

static void csv_head(FILE *out, sqlite3_stmt *st, int ncol, int nres)
{
	if (nres)
		fputc('\n', out);	/* results of a script: blank-separated */
	for (int i = 0; i < ncol; i++) {
		if (i)
			fputc(',', out);
		csv_field(out, sqlite3_column_name(st, i));
	}
	fputc('\n', out);
}

/* One statement's result in fmt.  Returns the sqlite3_step() end code. */
static int run_stmt(sqlite3_stmt *st, enum dtsql_format fmt, FILE *out, int *nres)
{
	int ncol = sqlite3_column_count(st);
	int rc;
	if (ncol == 0) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		return rc;
	}
	/* An interrupted statement prints nothing that could pass for its
	 * result: no header, count or closing bracket after the rows that
	 * were out already.  So heads wait for the first row or the end. */
	if (fmt == DTSQL_JSON) {
		/* Rows are objects keyed by column name: what json.load users want. */
		unsigned long long n = 0;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (ferror(out))
				return SQLITE_IOERR;
			if (n == 0)
				fputs(*nres ? "\n[" : "[", out);
			fputs(n++ ? ",\n{" : "\n{", out);
			for (int i = 0; i < ncol; i++) {
				const char *name = sqlite3_column_name(st, i);
				if (i)
					fputc(',', out);
				json_string(out, name, (int)strlen(name));
				fputc(':', out);
				switch (sqlite3_column_type(st, i)) {
				case SQLITE_NULL: fputs("null", out); break;
				case SQLITE_INTEGER:
					fprintf(out, "%lld", (long long)sqlite3_column_int64(st, i));
					break;
				case SQLITE_FLOAT: {
					double d = sqlite3_column_double(st, i);
					if (isfinite(d))
						fprintf(out, "%.17g", d);
					else
						fputs("null", out);
					break;
				}
				case SQLITE_BLOB: {
					char *s = cell_text(st, i, 0);
					json_string(out, s ? s : "", s ? (int)strlen(s) : 0);
					free(s);
					break;
				}
				default:
					json_string(out, (const char *)sqlite3_column_text(st, i),
						    sqlite3_column_bytes(st, i));
				}
			}
			fputc('}', out);
		}
		if (rc == SQLITE_INTERRUPT)
			return rc;
		if (n == 0)
			fputs(*nres ? "\n[" : "[", out);
		fputs(n ? "\n]\n" : "]\n", out);
		(*nres)++;
		return rc;
	}
	if (fmt == DTSQL_CSV) {
		int head = 0;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (ferror(out))
				return SQLITE_IOERR;
			if (!head) {
				csv_head(out, st, ncol, *nres);
				head = 1;
			}
			for (int i = 0; i < ncol; i++) {
				if (i)
					fputc(',', out);
				if (sqlite3_column_type(st, i) == SQLITE_TEXT) {
					csv_field(out, (const char *)sqlite3_column_text(st, i));
				} else {
					char *s = cell_text(st, i, 0);
					if (s)
						fputs(s, out);
					free(s);
				}
			}
			fputc('\n', out);
		}
		if (rc == SQLITE_INTERRUPT)
			return rc;
		if (!head)
			csv_head(out, st, ncol, *nres);
		(*nres)++;
		return rc;
	}
	/* table */
	struct tbl t = { .ncol = ncol };
	t.w = calloc((size_t)ncol, sizeof(*t.w));
	t.num = calloc((size_t)ncol, sizeof(*t.num));
	t.cells = calloc((size_t)ncol * TABLE_BUFFER, sizeof(*t.cells));
	if (!t.w || !t.num || !t.cells) {
		free(t.w); free(t.num); free(t.cells);
		return SQLITE_NOMEM;
	}
	for (int i = 0; i < ncol; i++)
		t.num[i] = -1;	/* unknown until a value is seen */
	int sep = *nres;	/* a blank line before the first output */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char **row = t.cells + t.nrows * (size_t)ncol;
		for (int i = 0; i < ncol; i++) {
			int ty = sqlite3_column_type(st, i);
			row[i] = cell_text(st, i, 1);
			if (row[i] == NULL)
				row[i] = strdup("?");
			if (!t.printed_head) {
				size_t w = u8width(row[i] ? row[i] : "");
				if (w > t.w[i])
					t.w[i] = w;
				if (ty != SQLITE_NULL) {
					int isnum = ty == SQLITE_INTEGER || ty == SQLITE_FLOAT;
					t.num[i] = t.num[i] == -1 ? isnum : (t.num[i] && isnum);
				}
			}
		}
		t.total++;
		if (++t.nrows == TABLE_BUFFER) {
			if (sep)
				fputc('\n', out);
			sep = 0;
			tbl_flush(out, &t, st);
			if (ferror(out)) {
				rc = SQLITE_IOERR;
				break;
			}
		}
	}
	if (rc == SQLITE_INTERRUPT) {
		/* the rows held back stay unprinted, and no count */
		for (size_t k = 0; k < t.nrows * (size_t)ncol; k++)
			free(t.cells[k]);
		free(t.w); free(t.num); free(t.cells);
		return rc;
	}
	if (sep)
		fputc('\n', out);
	tbl_flush(out, &t, st);
	fprintf(out, "(%llu row%s)\n", t.total, t.total == 1 ? "" : "s");
	free(t.w); free(t.num); free(t.cells);
	(*nres)++;
	return rc;
}

/* Skip whitespace and comments: where the next statement starts. */
static const char *skip_blank(const char *p)
{
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else {
			return p;
		}
	}
}

static int dot_command(sqlite3 *db, const char *line, size_t len, FILE *out, char **err)
{
	char buf[128], *w[3] = { 0 };
	int n = 0;

	if (len >= sizeof(buf)) {
		*err = sqlite3_mprintf("unknown command: %.40s...", line);
		return -1;
	}
	memcpy(buf, line, len);
	buf[len] = 0;
	for (char *t = strtok(buf, " \t\r;"); t && n < 3; t = strtok(NULL, " \t\r;"))
		w[n++] = t;
	if (n == 1 && !strcmp(w[0], ".tables")) {
		const char *const *t = dtsql_tables();
		for (int k = 0; t[k]; k++)
			fprintf(out, "%s%s", k ? "  " : "", t[k]);
		fputc('\n', out);
		/* the probes' views (dtsql_views.c), one a line: names are long */
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_temp_master WHERE type = 'view'"
				       " AND name GLOB '*:*' ORDER BY name", -1, &st, NULL) == SQLITE_OK)
			while (sqlite3_step(st) == SQLITE_ROW) {
				/* quoted as a query names it */
				char *q = sqlite3_mprintf("\"%w\"", sqlite3_column_text(st, 0));
				if (q)
					fprintf(out, "%s\n", dtt_str(q));
				sqlite3_free(q);
			}
		sqlite3_finalize(st);
		return 0;
	}
	if (n <= 2 && !strcmp(w[0], ".schema")) {
		if (dtsql_schema(out, w[1]) < 0) {
			*err = sqlite3_mprintf("no such table: %s", w[1]);
			return -1;
		}
		return 0;
	}
	*err = sqlite3_mprintf("unknown command or wrong arguments: %s "
			       "(known: .tables, .schema [TABLE])", buf);
	return -1;
}

/* The guard's refusal of the statement at head, named: VACUUM is refused
 * as the ATTACH of its copy, which the user did not write. */
static char *refusal(const char *head)
{
	const char *what = dtsql_guard_refused();
	if (strncasecmp(head, "VACUUM", 6) == 0 && !isalnum((unsigned char)head[6]) &&
	    head[6] != '_')
		what = "VACUUM";
	return sqlite3_mprintf("%s refused: SQL here writes no file and changes only TEMP "
			       "tables and views (CREATE TEMP TABLE ... AS SELECT ...)", what);
}

int dtsql_exec(sqlite3 *db, const char *sql, enum dtsql_format fmt, FILE *out,
	       volatile sig_atomic_t *cancel, char **err)
{
	const char *tail = sql;
	char *dummy = NULL;
	int nres = 0, ret = 0, multi = 0, stopped = 0;
	if (err == NULL)
		err = &dummy;
	volatile sig_atomic_t *outer = dtsql_cancel;
	dtsql_cancel = cancel;
	if (cancel)
		sqlite3_progress_handler(db, 10000, on_progress, (void *)cancel);
	while (tail && *(tail = skip_blank(tail))) {
		sqlite3_stmt *st = NULL;
		if (*tail == '.') {
			size_t len = strcspn(tail, "\n");
			if (dot_command(db, tail, len, out, err) < 0) {
				ret = -1;
				break;
			}
			tail += len;
			continue;
		}
		const char *head = tail;
		dtsql_guard_clear();
		int rc = sqlite3_prepare_v2(db, tail, -1, &st, &tail);
		if (rc == SQLITE_AUTH && dtsql_guard_refused()) {
			*err = refusal(head);
			ret = -1;
			break;
		}
		if (rc != SQLITE_OK) {
			char hint[160];
			*err = sqlite3_mprintf("%s%s", sqlite3_errmsg(db),
					       keyword_hint(sqlite3_errmsg(db), hint, sizeof(hint)));
			ret = -1;
			break;
		}
		if (st == NULL)		/* whitespace or a comment */
			continue;
		/* Several statements in JSON: one array holding each result. */
		if (fmt == DTSQL_JSON && nres == 0 && !multi && *skip_blank(tail) &&
		    sqlite3_column_count(st)) {
			multi = 1;
			fputs("[", out);
		}
		if (multi && nres && sqlite3_column_count(st))
			fputc(',', out);
		/* a GROUP BY over the events may run over their groups */
		sqlite3_stmt *fast = dtsql_groupby(db, st);
		if (fast) {
			sqlite3_finalize(st);
			st = fast;
		}
		rc = run_stmt(st, fmt, out, &nres);
		if (rc != SQLITE_DONE) {
			/* errno is still the failed write's: nothing ran since */
			if (rc == SQLITE_IOERR && ferror(out))
				*err = errno ? sqlite3_mprintf("write error: %s", strerror(errno)) :
					       sqlite3_mprintf("write error");
			else if (rc == SQLITE_INTERRUPT)
				*err = sqlite3_mprintf("interrupted"), stopped = 1;
			else if (rc == SQLITE_NOMEM)
				*err = sqlite3_mprintf("out of memory");
			else if (rc == SQLITE_AUTH && dtsql_guard_refused())
				*err = refusal(head);	/* re-prepared on a schema change */
			else
				*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			sqlite3_finalize(st);
			ret = -1;
			break;
		}
		sqlite3_finalize(st);
	}
	if (multi && !stopped)	/* cut short: no closing that makes it whole */
		fputs("]\n", out);
	if (cancel)
		sqlite3_progress_handler(db, 0, NULL, NULL);
	dtsql_cancel = outer;
	fflush(out);
	if (ret == 0 && ferror(out)) {
		*err = sqlite3_mprintf("write error");
		ret = -1;
	}
	sqlite3_free(dummy);
	return ret;
}
