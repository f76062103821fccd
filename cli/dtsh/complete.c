/*
 * complete.c - Tab completion: commands, probe names (capture or device),
 * file names, SQL table and column names.  One Tab inserts what all
 * candidates share; a Tab that cannot add anything lists them.
 */
#include <ctype.h>
#include <dirent.h>
#include <histedit.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dt_grow.h"
#include "dtsh.h"
#include "dtsql.h"
#include "probes.h"
#include "termsafe.h"

static struct dtsh *csh;

struct cands {
	char	**v;
	size_t	n, cap;
};

static void
add(struct cands *c, const char *s)
{
	if (DT_GROW(c->v, c->cap, c->n, 1, 64))
		return;
	if ((c->v[c->n] = strdup(s)) != NULL)
		c->n++;
}

static void
cands_free(struct cands *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
}

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keep those starting with prefix, sorted, without duplicates. */
static void
filter(struct cands *c, const char *prefix, int nocase)
{
	size_t k = 0, pl = strlen(prefix);

	for (size_t i = 0; i < c->n; i++) {
		int ok = nocase ? strncasecmp(c->v[i], prefix, pl) == 0
				: strncmp(c->v[i], prefix, pl) == 0;
		if (ok)
			c->v[k++] = c->v[i];
		else
			free(c->v[i]);
	}
	c->n = k;
	if (c->n > 1)
		qsort(c->v, c->n, sizeof(*c->v), cmpstr);
	k = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (k > 0 && strcmp(c->v[k - 1], c->v[i]) == 0)
			free(c->v[i]);
		else
			c->v[k++] = c->v[i];
	}
	c->n = k;
}

static void
files(struct cands *c, const char *prefix)
{
	const char *slash = strrchr(prefix, '/');
	char dir[4096], path[8192];
	const char *base = slash ? slash + 1 : prefix;
	DIR *d;
	struct dirent *de;

	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - prefix + 1), prefix);
	else
		dir[0] = '\0';
	if ((d = opendir(dir[0] ? dir : ".")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_name[0] == '.' && base[0] != '.')
			continue;
		if (strncmp(de->d_name, base, strlen(base)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s%s", dir, de->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			strncat(path, "/", sizeof(path) - strlen(path) - 1);
		add(c, path);
	}
	closedir(d);
}

static void
probes(struct cands *c)
{
	char **names;
	size_t n = dtsh_probe_names(csh, &names);

	for (size_t i = 0; i < n; i++) {
		/* a capture's name with control bytes would reach the
		 * terminal raw in the list of matches (and cannot be typed) */
		if (!dtt_unsafe(names[i]))
			add(c, names[i]);
		free(names[i]);
	}
	free(names);
}

/*
 * "uprobe:PATH..." and "usdt:PATH...": the file name first, then what
 * the file offers (its functions, entry and return; its SDT probes).
 */
static void
user_probes(struct cands *c, const char *prefix)
{
	int pl = strncmp(prefix, "usdt:", 5) == 0 ? 5 : 7;
	char buf[8192], err[DTP_ERRLEN], *glob, *list = NULL, *line, *save = NULL;
	size_t len = 0, n;
	FILE *m;

	if (strchr(prefix + pl, ':') == NULL) {
		struct cands f = { 0 };
		files(&f, prefix + pl);
		for (size_t i = 0; i < f.n; i++) {
			size_t l = strlen(f.v[i]);
			/* a file is complete: go on to its probes */
			snprintf(buf, sizeof(buf), "%.*s%s%s", pl, prefix, f.v[i],
				 l && f.v[i][l - 1] == '/' ? "" : ":");
			add(c, buf);
		}
		cands_free(&f);
		return;
	}
	if (asprintf(&glob, "%s*", prefix) < 0)
		return;
	if ((m = open_memstream(&list, &len)) != NULL) {
		(void)dtp_list_user(glob, m, &n, err, sizeof(err));
		fclose(m);
		for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			add(c, line);
		free(list);
	}
	free(glob);
}

static void
columns(struct cands *c, sqlite3 *db, const char *table)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(st, 0);
		if (col)
			add(c, col);
	}
	sqlite3_finalize(st);
}

static void
sqlnames(struct cands *c)
{
	static const char *const kw[] = {
		"SELECT", "FROM", "WHERE", "GROUP", "BY", "ORDER", "LIMIT",
		"COUNT", "DESC", "ASC", "AND", "OR", "NOT", "AS", "JOIN", "ON",
		"HAVING", "DISTINCT", "SUM", "WITH", NULL,
	};
	sqlite3 *db = dtsh_sql_db(csh);
	sqlite3_stmt *st;

	for (int i = 0; kw[i]; i++)
		add(c, kw[i]);
	if (db == NULL)
		return;
	/* dtsql's tables are eponymous (absent from pragma_table_list) */
	const char *const *tabs = dtsql_tables();
	for (int i = 0; tabs[i]; i++) {
		add(c, tabs[i]);
		columns(c, db, tabs[i]);
	}
	/* And whatever the user created (temp tables, views); not the probes'
	 * views: their names need quotes and their event_* columns would make
	 * "eve" ambiguous. */
	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_list "
			       "WHERE name NOT LIKE 'sqlite_%' AND name NOT GLOB '*:*'",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		if (t) {
			add(c, t);
			columns(c, db, t);
		}
	}
	sqlite3_finalize(st);
}

/* dtreport's options (filter.h) and, after one, its values. */
static void
filters(struct cands *c, int what, const char *prev, const char *prefix)
{
	static const char *const opts[] = {
		"--pid", "--tid", "--cpu", "--comm", "--probe", "--since", "--until", NULL,
	};
	static const char *const flame[] = {
		"-o", "--folded", "--title", "--width", "--minwidth", "--reverse",
		"--inverted", "--offcpu", "--oncpu-offcpu", "--wakers", "--state", NULL,
	};

	if (strcmp(prev, "--probe") == 0) {
		probes(c);
		return;
	}
	if (strcmp(prev, "--comm") == 0) {
		if (csh->cap)
			for (uint32_t i = 1; i <= dtcap_ncomms(csh->cap); i++)
				if (dtcap_comm(csh->cap, i))
					add(c, dtcap_comm(csh->cap, i));
		return;
	}
	if (prefix[0] != '-' && prefix[0] != '\0')
		return;
	for (int i = 0; opts[i]; i++)
		add(c, opts[i]);
	if (what == DTSH_C_FLAME)
		for (int i = 0; flame[i]; i++)
			add(c, flame[i]);
	else if (what == DTSH_C_STATS)
		add(c, "--json"), add(c, "--top");
}

static void
list(struct cands *c)
{
	size_t w = 0, cols, rows;
	struct winsize ws;
	unsigned width = 80;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		width = ws.ws_col;
	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->v[i]) > w)
			w = strlen(c->v[i]);
	w += 2;
	cols = width / w ? width / w : 1;
	rows = (c->n + cols - 1) / cols;
	fputc('\n', stdout);
	for (size_t r = 0; r < rows; r++) {
		for (size_t k = 0; k < cols; k++) {
			size_t i = k * rows + r;
			if (i < c->n)
				printf("%-*s", (int)w, c->v[i]);
		}
		fputc('\n', stdout);
	}
	fflush(stdout);
}

/* Insert text, escaping what the tokenizer would split on. */
static void
insert(EditLine *el, const char *s, int escape)
{
	char buf[1024];
	size_t k = 0;

	for (; *s && k + 2 < sizeof(buf); s++) {
		if (escape && strchr(" \t'\"\\;", *s))
			buf[k++] = '\\';
		buf[k++] = *s;
	}
	buf[k] = '\0';
	if (k)
		el_insertstr(el, buf);
}

static unsigned char
complete(EditLine *el, int ch)
{
	const LineInfo *li = el_line(el);
	size_t len = (size_t)(li->cursor - li->buffer);
	char *text = strndup(li->buffer, len), *cmd, *prefix, err[64], **argv = NULL;
	struct cands c = { NULL, 0, 0 };
	int argc, sql = 0, escape = 1, nocase = 0;
	unsigned char rc = CC_REFRESH;

	(void)ch;
	if (text == NULL)
		return CC_ERROR;
	cmd = strrchr(text, ';');
	cmd = cmd ? cmd + 1 : text;
	cmd += strspn(cmd, " \t");
	prefix = cmd + strlen(cmd);
	while (prefix > cmd && !isspace((unsigned char)prefix[-1]))
		prefix--;

	argc = dtsh_tokenize(cmd, 1, &argv, err, sizeof(err));
	if (argc < 0)
		goto out;
	/* argv counts the word being typed when there is one. */
	int nbefore = *prefix ? argc - 1 : argc;
	if (nbefore <= 0) {
		for (const struct dtsh_cmd *k = dtsh_cmds; k->name; k++)
			add(&c, k->name);
	} else {
		const struct dtsh_cmd *k = dtsh_find_cmd(argv[0]);
		const char *prev = argv[nbefore - 1];
		if (dtsh_is_sql_word(argv[0]) || (k && k->complete == DTSH_C_SQL)) {
			sql = 1;
		} else if (k == NULL) {
			rc = CC_REFRESH_BEEP;
			goto out;
		} else if (strcmp(prev, "-o") == 0) {
			files(&c, prefix);
		} else {
			switch (k->complete) {
			case DTSH_C_PROBE:
				if (nbefore == 1 && dtp_is_user(prefix)) {
					user_probes(&c, prefix);
				} else if (nbefore == 1) {
					probes(&c);
					add(&c, "uprobe:");
					add(&c, "usdt:");
				}
				else if (strcmp(argv[0], "enable") == 0 && nbefore == 2)
					add(&c, "stacks");
				break;
			case DTSH_C_FILE:
				if (nbefore == 1 || (nbefore == 2 && !strcmp(prev, "--partial")))
					files(&c, prefix);
				if (nbefore == 1 && !strcmp(argv[0], "open"))
					add(&c, "--partial");
				break;
			case DTSH_C_TABLE:
				if (nbefore == 1) {
					const char *const *t = dtsql_tables();
					for (int i = 0; t[i]; i++)
						add(&c, t[i]);
				}
				break;
			case DTSH_C_CMD:
				if (nbefore == 1)
					for (const struct dtsh_cmd *q = dtsh_cmds; q->name; q++)
						add(&c, q->name);
				break;
			case DTSH_C_TOP:
				if (strcmp(prev, "by") == 0) {
					static const char *const by[] = {
						"comm", "pid", "probe", "stack", "syscall", "sym", "dso", NULL };
					for (int i = 0; by[i]; i++)
						add(&c, by[i]);
				} else if (prefix[0] == '-' || strcmp(prev, "--probe") == 0 ||
					   strcmp(prev, "--comm") == 0) {
					filters(&c, k->complete, prev, prefix);
				} else {
					add(&c, "by");
				}
				break;
			case DTSH_C_FLAME:
			case DTSH_C_STATS:
				filters(&c, k->complete, prev, prefix);
				break;
			case DTSH_C_RECORD:
				add(&c, "-o");
				break;
			}
		}
	}
	if (sql) {
		/* SQL words end at punctuation, not only at spaces. */
		prefix = text + len;
		while (prefix > cmd && (isalnum((unsigned char)prefix[-1]) || prefix[-1] == '_'))
			prefix--;
		sqlnames(&c);
		escape = 0;
		nocase = 1;
	}
	filter(&c, prefix, nocase);
	if (c.n == 0) {
		rc = CC_REFRESH_BEEP;
		goto out;
	}
	size_t pl = strlen(prefix), lcp = strlen(c.v[0]);
	for (size_t i = 1; i < c.n; i++) {
		size_t j = 0;
		while (j < lcp && c.v[i][j] && (nocase
		    ? tolower((unsigned char)c.v[i][j]) == tolower((unsigned char)c.v[0][j])
		    : c.v[i][j] == c.v[0][j]))
			j++;
		lcp = j;
	}
	if (c.n == 1) {
		insert(el, c.v[0] + pl, escape);
		/* a directory, or a probe's file ("uprobe:PATH:"), goes on */
		if (c.v[0][strlen(c.v[0]) - 1] != '/' && c.v[0][strlen(c.v[0]) - 1] != ':')
			el_insertstr(el, " ");
	} else if (lcp > pl) {
		char *s = strndup(c.v[0] + pl, lcp - pl);
		if (s)
			insert(el, s, escape);
		free(s);
	} else {
		list(&c);
		rc = CC_REDISPLAY;
	}
out:
	dtsh_free_argv(argv);
	cands_free(&c);
	free(text);
	return rc;
}

void
dtsh_complete_setup(struct dtsh *sh, struct editline *e)
{
	EditLine *el = (EditLine *)e;

	csh = sh;
	/* el_set's narrow EL_ADDFN copies the strings and never frees them;
	 * the wide call keeps ours (static). */
	el_wset(el, EL_ADDFN, L"dtsh-complete", L"complete a word", complete);
	el_set(el, EL_BIND, "^I", "dtsh-complete", NULL);
}
