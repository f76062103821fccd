/* util.c - see util.h. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int
dtu_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *suf; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "sec", 1e9 }, { "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
		{ "", 1e9 },
	};
	char *end;
	double v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		return -1;
	const char *p = s;

	/* strtod would accept "inf", "1e3" and hex floats: plain decimals only */
	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	if (*p && !isalpha((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end != p || errno != 0 || !(v >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suf) == 0) {
			double r = v * units[i].mul;
			if (r >= 1.8e19)
				return -1;
			*ns = (uint64_t)llround(r);
			return 0;
		}
	}
	return -1;
}

int
dtu_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case '\0': break;
	case 'k': shift = 10; end++; break;
	case 'm': shift = 20; end++; break;
	case 'g': shift = 30; end++; break;
	default: return -1;
	}
	if (shift && (strcasecmp(end, "ib") == 0 || strcasecmp(end, "b") == 0))
		end += strlen(end);
	if (*end != '\0')
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

const char *
dtu_human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int i = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, u[i]);
	return buf;
}

const char *
dtu_human_count(double n, char *buf, size_t len)
{
	static const char *u[] = { "", "k", "M", "G", "T" };
	int i = 0;

	if (n < 1000) {
		snprintf(buf, len, "%.0f", n);
		return buf;
	}
	while (n >= 1000 && i < 4) {
		n /= 1000;
		i++;
	}
	snprintf(buf, len, "%.*f%s", n < 10 ? 2 : n < 100 ? 1 : 0, n, u[i]);
	return buf;
}

const char *
dtu_human_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000000ULL)
		snprintf(buf, len, "%lluus", (unsigned long long)(ns / 1000));
	else if (ns < 1000000000ULL)
		snprintf(buf, len, "%llums", (unsigned long long)(ns / 1000000));
	else if (ns < 60000000000ULL)
		snprintf(buf, len, "%.2fs", ns / 1e9);
	else {
		uint64_t s = ns / 1000000000ULL;
		if (s < 3600)
			snprintf(buf, len, "%llum%02llus", (unsigned long long)(s / 60),
				 (unsigned long long)(s % 60));
		else
			snprintf(buf, len, "%lluh%02llum", (unsigned long long)(s / 3600),
				 (unsigned long long)(s / 60 % 60));
	}
	return buf;
}

unsigned
dtu_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[256];

	if (la > 255 || lb > 255)
		return 1000;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

size_t
dtu_suggest(const char *name, const char *const *cands, size_t ncands,
	    unsigned maxdist, const char **out, size_t max)
{
	unsigned dist[16];
	size_t n = 0;

	if (max > 16)
		max = 16;
	if (maxdist == 0) {
		size_t l = strlen(name);
		maxdist = l < 4 ? 1 : l < 10 ? 2 : l < 20 ? 3 : 4;
	}
	for (size_t i = 0; i < ncands && max > 0; i++) {
		unsigned d = dtu_edit_distance(name, cands[i]);
		size_t k;
		if (d > maxdist || d == 0)
			continue;
		/* keep out[] sorted by distance, insertion order among equals */
		if (n == max && d >= dist[n - 1])
			continue;
		k = n < max ? n++ : n - 1;
		while (k > 0 && dist[k - 1] > d) {
			dist[k] = dist[k - 1];
			out[k] = out[k - 1];
			k--;
		}
		dist[k] = d;
		out[k] = cands[i];
	}
	return n;
}

int
dtu_glob_match(const char *pattern, const char *s)
{
	return fnmatch(pattern, s, 0) == 0;
}

int
dtu_is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

char *
dtu_read_file(const char *path, size_t *lenp)
{
	size_t cap = 65536, len = 0;
	char *buf;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (buf == NULL)
		goto fail;
	for (;;) {
		ssize_t r;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
fail:
	e = errno;
	free(buf);
	close(fd);
	errno = e;
	return NULL;
}

uint64_t
dtu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int dtu_utf8_len(const unsigned char *s, size_t n)
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

void dtu_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
