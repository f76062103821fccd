/*
 * captures.c - expand capture arguments (files, directories of *.dtc).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "captures.h"
#include "dt_grow.h"

static int push(struct dtx_caps *c, const char *p)
{
	if (c->n == INT_MAX || DT_GROW(c->path, c->cap, (size_t)c->n, 1, 16))
		return -1;
	if ((c->path[c->n] = strdup(p)) == NULL)
		return -1;
	c->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int dtx_caps_add(struct dtx_caps *c, char *const *args, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(args[i], &st) < 0) {
			snprintf(err, errlen, "%s: %s", args[i], strerror(errno));
			return -1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (push(c, args[i]) < 0)
				goto oom;
			continue;
		}
		DIR *d = opendir(args[i]);
		if (d == NULL) {
			snprintf(err, errlen, "%s: %s", args[i], strerror(errno));
			return -1;
		}
		int first = c->n;
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			size_t l = strlen(de->d_name);
			if (l <= 4 || strcmp(de->d_name + l - 4, ".dtc"))
				continue;
			size_t pl = strlen(args[i]) + l + 2;
			char *p = malloc(pl);
			if (p == NULL) {
				closedir(d);
				goto oom;
			}
			snprintf(p, pl, "%s/%s", args[i], de->d_name);
			int r = push(c, p);
			free(p);
			if (r < 0) {
				closedir(d);
				goto oom;
			}
		}
		closedir(d);
		if (c->n == first) {
			snprintf(err, errlen, "%s: no .dtc captures in this directory", args[i]);
			return -1;
		}
		qsort(c->path + first, (size_t)(c->n - first), sizeof(*c->path), cmp_str);
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void dtx_caps_free(struct dtx_caps *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->path[i]);
	free(c->path);
	c->path = NULL;
	c->n = 0;
	c->cap = 0;
}

int dtx_is_capture_arg(const char *arg)
{
	struct stat st;
	return stat(arg, &st) == 0;
}

void dtx_capture_name(char *out, size_t outsz, const char *path)
{
	const char *b = strrchr(path, '/');
	b = b && b[1] ? b + 1 : path;
	snprintf(out, outsz, "%s", b);
	size_t l = strlen(out);
	if (l > 4 && !strcmp(out + l - 4, ".dtc"))
		out[l - 4] = 0;
}
