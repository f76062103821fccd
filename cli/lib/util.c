/* util.c - see util.h. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "dt_grow.h"
#include "dt_utf8.h"

/*
 * The one grammar of durations and times (util.h).  Exact in integers:
 * "@86400123456789ns" is a timestamp copied from the ts column and must
 * not lose its last digits in a double.
 */
int
dtu_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *suf; uint64_t mul; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "sec", 1000000000 }, { "m", 60000000000ULL }, { "min", 60000000000ULL },
		{ "h", 3600000000000ULL }, { "", 1000000000 },
	};
	uint64_t ip = 0, fp = 0, fscale = 1;
	const char *p = s;
	int ndig = 0;

	if (s == NULL)
		return -1;
	/* plain decimals only: no sign, space, exponent, hex, inf or nan */
	for (; isdigit((unsigned char)*p); p++, ndig++) {
		uint64_t dg = (uint64_t)(*p - '0');
		if (ip > (UINT64_MAX - dg) / 10)
			return -1;
		ip = ip * 10 + dg;
	}
	if (*p == '.') {
		p++;
		for (; isdigit((unsigned char)*p); p++, ndig++) {
			/* beyond 18 digits nothing is left of a nanosecond */
			if (fscale < 1000000000000000000ULL) {
				fp = fp * 10 + (uint64_t)(*p - '0');
				fscale *= 10;
			}
		}
	}
	if (ndig == 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suf) != 0)
			continue;
		uint64_t mul = units[i].mul;
		if (ip > UINT64_MAX / mul)
			return -1;
		uint64_t v = ip * mul;
		uint64_t f = (uint64_t)llroundl((long double)fp * (long double)mul /
						(long double)fscale);
		if (v > UINT64_MAX - f)
			return -1;
		*ns = v + f;
		return 0;
	}
	return -1;
}

int
dtu_parse_time(const char *s, uint64_t *ns, int *absolute)
{
	if (s == NULL)
		return -1;
	*absolute = s[0] == '@';
	return dtu_parse_duration(s + *absolute, ns);
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

/*
 * Optimal string alignment distance: Levenshtein's insert, delete and
 * substitute, and a swap of two neighbours counted as one edit, as git's
 * "did you mean" counts it: "tpo" is one typo away from "top", not two.
 */
unsigned
dtu_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned rows[3][256], *pp, *prev, *row;

	if (la > 255 || lb > 255)
		return 1000;
	pp = rows[0], prev = rows[1], row = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned best = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			row[j] = best;
		}
		unsigned *t = pp;
		pp = prev, prev = row, row = t;
	}
	return prev[lb];
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
		if (DT_GROW(buf, cap, len, 4096, 65536))
			goto fail;
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

#ifndef DT_VERSION
#define DT_VERSION "unknown"
#endif

const char *dtu_version(void)
{
	return DT_VERSION;
}

void
dtu_prefault(void *p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(pg - 1);

#ifdef MADV_POPULATE_WRITE
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)a, (void)e;
#endif
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
	return dt_utf8_len(s, n);
}

size_t dtu_utf8_char(const char *s, size_t n, const char **out, size_t *outlen)
{
	return dt_utf8_char(s, n, out, outlen);
}

const char *dtu_utf8_fix(const char *s, size_t n, size_t *outlen, char **buf, size_t *bufcap)
{
	return dt_utf8_fix(s, n, outlen, buf, bufcap);
}

void dtu_json_str(FILE *f, const char *s)
{
	size_t left = s ? strlen(s) : 0;

	fputc('"', f);
	while (left) {
		unsigned char c = (unsigned char)*s;
		size_t n = 1;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else {
			const char *out;
			size_t ol;
			n = dtu_utf8_char(s, left, &out, &ol);
			if (out == s)
				fwrite(out, 1, ol, f);
			else	/* the same U+FFFD, kept ASCII for JSON's readers */
				fputs("\\ufffd", f);
		}
		s += n;
		left -= n;
	}
	fputc('"', f);
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

int dtu_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * What the signal handler removes: the temporary file being written and
 * an export's temporary directory.  Set with the fatal signals blocked.
 */
static char pending_tmp[PATH_MAX], pending_dirname[PATH_MAX];
static volatile sig_atomic_t pending_set, pending_dir_set;

static void pending(const char *tmp)
{
	pending_set = 0;
	if (tmp && strlen(tmp) < sizeof(pending_tmp)) {
		strcpy(pending_tmp, tmp);
		pending_set = 1;
	}
}

void dtu_block_fatal(sigset_t *old)
{
	sigset_t fatal;

	sigemptyset(&fatal);
	sigaddset(&fatal, SIGINT);
	sigaddset(&fatal, SIGTERM);
	sigaddset(&fatal, SIGHUP);
	sigaddset(&fatal, SIGQUIT);
	sigprocmask(SIG_BLOCK, &fatal, old);
}

void dtu_out_tmp_forget(void)
{
	pending(NULL);
}

void dtu_out_pending_dir(const char *dir)
{
	pending_dir_set = 0;
	if (dir && strlen(dir) < sizeof(pending_dirname)) {
		strcpy(pending_dirname, dir);
		pending_dir_set = 1;
	}
}

/*
 * Recursive removal with system calls only (getdents64, unlinkat), so the
 * signal handler may call it.  Never follows a link: unlinkat removes the
 * link itself, and openat(O_NOFOLLOW) refuses to descend through one.
 */
struct linux_dirent64_ {
	uint64_t	d_ino;
	int64_t		d_off;
	unsigned short	d_reclen;
	unsigned char	d_type;
	char		d_name[];
};

static int rm_at(int dfd, const char *name, int depth)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if ((errno != EISDIR && errno != EPERM) || depth <= 0)
		return -1;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n; ) {
			struct linux_dirent64_ *d = (struct linux_dirent64_ *)(buf + off);
			off += d->d_reclen;
			if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
				rm_at(fd, d->d_name, depth - 1);
		}
	}
	close(fd);
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

int dtu_rm_tree(const char *dir)
{
	return rm_at(AT_FDCWD, dir, 3);
}

static void on_fatal_signal(int sig)
{
	if (pending_set)
		unlink(pending_tmp);	/* async-signal-safe */
	if (pending_dir_set)
		dtu_rm_tree(pending_dirname);
	signal(sig, SIG_DFL);
	raise(sig);
}

void dtu_out_cleanup_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_fatal_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		/* what the caller ignores stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

static void out_free(struct dtu_out *o)
{
	pending(NULL);
	free(o->tmp);
	free(o->target);
	o->tmp = o->target = NULL;
	o->f = NULL;
}

/* Is the link lst, in the directory dir (no links in it), one to follow? */
static int link_ok(const char *link, const struct stat *lst, const char *dir, char *err,
		   size_t errlen)
{
	uid_t me = geteuid();
	struct stat dst;

	if (lst->st_uid == me)
		return 1;
	if (stat(dir, &dst) != 0) {
		dtu_seterr(err, errlen, "%s: %s", dir, strerror(errno));
		return 0;
	}
	if ((dst.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH)) {
		if (lst->st_uid == dst.st_uid)
			return 1;
		dtu_seterr(err, errlen, "%s: refusing to follow a symbolic link owned by uid %u "
			   "in the world-writable sticky directory %s (the rule of the kernel's "
			   "protected_symlinks: only the caller's or the directory owner's links)",
			   link, (unsigned)lst->st_uid, dir);
		return 0;
	}
	if (lst->st_uid == 0)
		return 1;
	dtu_seterr(err, errlen, "%s: refusing to follow a symbolic link owned by another user "
		   "(uid %u): it could be pointed anywhere", link, (unsigned)lst->st_uid);
	return 0;
}

int dtu_path_links_ok(const char *path, char *err, size_t errlen)
{
	/* cur: the part resolved so far, holding no link; rest: what is left */
	char cur[PATH_MAX], rest[PATH_MAX], next[2 * PATH_MAX + 2], tgt[PATH_MAX];
	int nlinks = 0;

	if (strlen(path) >= sizeof(rest)) {
		dtu_seterr(err, errlen, "%.60s...: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	strcpy(cur, path[0] == '/' ? "/" : ".");
	strcpy(rest, path);
	for (char *r = rest; ; ) {
		while (*r == '/')
			r++;
		if (*r == '\0')
			return 0;
		size_t cl = strcspn(r, "/");
		size_t l = strlen(cur);
		if (l + 1 + cl >= sizeof(cur)) {
			dtu_seterr(err, errlen, "%.60s...: %s", path, strerror(ENAMETOOLONG));
			return -1;
		}
		snprintf(next, sizeof(next), "%s%s%.*s", cur, cur[l - 1] == '/' ? "" : "/",
			 (int)cl, r);
		r += cl;
		struct stat lst;
		if (lstat(next, &lst) != 0)
			return 0;	/* what does not exist yet is no link; open says the rest */
		if (!S_ISLNK(lst.st_mode)) {
			strcpy(cur, next);
			continue;
		}
		if (!link_ok(next, &lst, cur, err, errlen))
			return -1;
		ssize_t n = readlink(next, tgt, sizeof(tgt) - 1);
		if (n < 0 || ++nlinks > 40) {
			dtu_seterr(err, errlen, "%s: %s", next, strerror(n < 0 ? errno : ELOOP));
			return -1;
		}
		tgt[n] = '\0';
		if (strlen(tgt) + 1 + strlen(r) >= sizeof(rest)) {
			dtu_seterr(err, errlen, "%.60s...: %s", path, strerror(ENAMETOOLONG));
			return -1;
		}
		/* the link's text takes its place; an absolute one starts over at / */
		snprintf(next, sizeof(next), "%s/%s", tgt, r);
		strcpy(rest, next);
		r = rest;
		if (tgt[0] == '/')
			strcpy(cur, "/");
	}
}

int dtu_out_device_ok(const struct stat *st)
{
	struct stat s;

	if (S_ISBLK(st->st_mode))
		return 0;
	if (!S_ISCHR(st->st_mode))
		return 1;
	if (major(st->st_rdev) == 1 && minor(st->st_rdev) == 3)
		return 1;	/* /dev/null */
	for (int fd = 1; fd <= 2; fd++)
		if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return 1;
	return 0;
}

int dtu_out_check(const char *path, struct stat *st, int *exists, char *err, size_t errlen)
{
	*exists = 0;
	if (dtu_path_links_ok(path, err, errlen) < 0)
		return -1;
	if (stat(path, st) != 0)
		return 0;
	*exists = 1;
	if (S_ISDIR(st->st_mode)) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(EISDIR));
		return -1;
	}
	if (!dtu_out_device_ok(st)) {
		dtu_seterr(err, errlen, "%s: refusing to write into a %s device (only /dev/null "
			   "and the standard streams are outputs)", path,
			   S_ISBLK(st->st_mode) ? "block" : "character");
		return -1;
	}
	return 0;
}

/* fd, opened O_NONBLOCK only so that a FIFO could not hold the open,
 * made blocking for the caller's reads and writes; -1 (fd closed) with
 * err on failure. */
static int blocking_again(int fd, const char *path, char *err, size_t errlen)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int dtu_out_open_special(const char *path, char *err, size_t errlen)
{
	struct stat st;
	/* a FIFO without a reader fails ENXIO instead of waiting for one */
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		dtu_seterr(err, errlen, "%s: %s", path, errno == ENXIO ?
			   "no process reads this FIFO (or socket)" : strerror(errno));
		return -1;
	}
	/* the node may have been swapped since dtu_out_check looked */
	if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode) || !dtu_out_device_ok(&st)) {
		dtu_seterr(err, errlen, "%s: refusing to write into a device (only /dev/null "
			   "and the standard streams are outputs)", path);
		close(fd);
		return -1;
	}
	return blocking_again(fd, path, err, errlen);
}

int dtu_open_regular(const char *path, int nofollow, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
		      (nofollow ? O_NOFOLLOW : 0));

	if (fd < 0) {
		dtu_seterr(err, errlen, "%s: %s", path, errno == ELOOP && nofollow ?
			   "a symbolic link (not followed)" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		dtu_seterr(err, errlen, "%s: %s, not a regular file", path,
			   S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ?
			   "a character device" : S_ISBLK(st.st_mode) ? "a block device" :
			   S_ISDIR(st.st_mode) ? "a directory" : S_ISSOCK(st.st_mode) ?
			   "a socket" : "a special file");
		close(fd);
		return -1;
	}
	return blocking_again(fd, path, err, errlen);
}

int dtu_stdout_not_input(const char *const *inputs, size_t ninputs, char *err, size_t errlen)
{
	struct stat so, si;

	/* only a regular file can be an input: /dev/null may be "both" */
	if (fstat(STDOUT_FILENO, &so) != 0 || !S_ISREG(so.st_mode))
		return 0;
	for (size_t i = 0; i < ninputs; i++) {
		if (inputs[i] && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev &&
		    si.st_ino == so.st_ino) {
			dtu_seterr(err, errlen, "standard output is the input %s: refusing to "
				   "write into it", inputs[i]);
			return -1;
		}
	}
	return 0;
}

/* Does name (in a directory) read PREFIX PID "." XXXXXX?  The pid, or 0. */
static long tmp_pid(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);
	char *end;

	if (strncmp(name, prefix, pl) || !isdigit((unsigned char)name[pl]))
		return 0;
	long pid = strtol(name + pl, &end, 10);
	if (pid <= 0 || *end != '.' || strlen(end + 1) != 6)
		return 0;
	return pid;
}

static int pid_alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int dtu_out_locked(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	int locked = 0;

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0)
		locked = errno == EWOULDBLOCK;
	close(fd);
	return locked;
}

/* dir and base of target, split into the buffers */
static int split(const char *target, char *dir, size_t dl, const char **base)
{
	const char *slash = strrchr(target, '/');

	*base = slash ? slash + 1 : target;
	if (!slash)
		return snprintf(dir, dl, ".") >= (int)dl ? -1 : 0;
	return snprintf(dir, dl, "%.*s", slash == target ? 1 : (int)(slash - target),
			target) >= (int)dl ? -1 : 0;
}

static const char *progname(void)
{
	return program_invocation_short_name;
}

int dtu_out_sweep(const char *target, const char *skip, long *live)
{
	char dir[PATH_MAX], prefix[NAME_MAX + 3], p[PATH_MAX + NAME_MAX + 2];
	const char *base;
	struct dirent *de;
	int nlive = 0;

	if (split(target, dir, sizeof(dir), &base) < 0 ||
	    snprintf(prefix, sizeof(prefix), ".%s.", base) >= (int)sizeof(prefix))
		return 0;
	/* skip is beside target: its last component names it */
	const char *skipbase = skip ? strrchr(skip, '/') : NULL;
	skipbase = skipbase ? skipbase + 1 : skip;
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		long pid = tmp_pid(de->d_name, prefix);
		struct stat st;
		if (pid == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if ((skipbase && strcmp(de->d_name, skipbase) == 0) || lstat(p, &st) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;	/* not ours to judge */
		if (pid_alive(pid) || dtu_out_locked(p)) {
			if (live)
				*live = pid;
			nlive++;
			continue;
		}
		if (unlink(p) == 0)
			fprintf(stderr, "%s: removed %s, left by an interrupted run (process %ld "
				"is gone)\n", progname(), p, pid);
	}
	closedir(d);
	return nlive;
}

void dtu_out_sweep_dirs(const char *dir, const char *prefix)
{
	char p[PATH_MAX + NAME_MAX + 2];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		long pid = tmp_pid(de->d_name, prefix);
		struct stat st;
		if (pid == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    pid_alive(pid))
			continue;
		if (dtu_rm_tree(p) == 0)
			fprintf(stderr, "%s: removed %s, left by an interrupted run (process %ld "
				"is gone)\n", progname(), p, pid);
	}
	closedir(d);
}

int dtu_out_tmp_create(const char *target, char **tmp, char *err, size_t errlen)
{
	const char *slash = strrchr(target, '/');
	int dirlen = slash ? (int)(slash - target) + 1 : 0;

	dtu_out_sweep(target, NULL, NULL);
	if (asprintf(tmp, "%.*s.%s.%ld.XXXXXX", dirlen, target, slash ? slash + 1 : target,
		     (long)getpid()) < 0) {
		*tmp = NULL;
		dtu_seterr(err, errlen, "out of memory");
		return -1;
	}
	/* a signal between mkstemp and pending() would leave the file
	 * behind: hold the fatal ones until the handler knows its name */
	sigset_t old;
	dtu_block_fatal(&old);
	/* mkstemp: 0600, whatever the umask */
	int fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd >= 0)
		pending(*tmp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		dtu_seterr(err, errlen, "%s: %s", target, strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	/* a new file nobody else can hold; a file system without locks
	 * (old NFS) only loses dtrec's check after the rename */
	(void)flock(fd, LOCK_EX | LOCK_NB);
	return fd;
}

static int out_open(struct dtu_out *o, const char *path, const char *const *inputs,
		    size_t ninputs, int noreplace, char *err, size_t errlen)
{
	struct stat so, si;
	int have;

	memset(o, 0, sizeof(*o));
	o->noreplace = noreplace;
	if (path == NULL || strcmp(path, "-") == 0) {
		o->f = stdout;
		o->name = "standard output";
		o->is_stdout = 1;
		return dtu_stdout_not_input(inputs, ninputs, err, errlen);
	}
	o->name = path;
	if (dtu_out_check(path, &so, &have, err, errlen) < 0)
		return -1;
	/* Only a regular file can be an input: /dev/null may be "both". */
	for (size_t i = 0; have && S_ISREG(so.st_mode) && i < ninputs; i++) {
		if (stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
			dtu_seterr(err, errlen, "%s: refusing to overwrite the input %s",
				   o->name, inputs[i]);
			return -1;
		}
	}
	if (have && noreplace && S_ISREG(so.st_mode)) {
		dtu_seterr(err, errlen, "%s: %s (not replaced; remove it or choose another name)",
			   path, strerror(EEXIST));
		return -1;
	}
	if (have && !S_ISREG(so.st_mode)) {
		/* A FIFO, /dev/null or a standard stream: there is nothing to replace. */
		int fd = dtu_out_open_special(path, err, errlen);
		if (fd < 0)
			return -1;
		if ((o->f = fdopen(fd, "w")) == NULL) {
			dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		return 0;
	}
	if (have)
		o->target = realpath(path, NULL);
	else
		o->target = strdup(path);
	if (o->target == NULL) {
		dtu_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int fd = dtu_out_tmp_create(o->target, &o->tmp, err, errlen);
	if (fd < 0) {
		out_free(o);
		return -1;
	}
	/* a replaced file keeps its mode; a new one stays mkstemp's 0600 */
	o->mode = have ? (so.st_mode & 07777) : 0600;
	if (fchmod(fd, o->mode) != 0 ||
	    (o->f = fdopen(fd, "w")) == NULL) {
		dtu_seterr(err, errlen, "%s: %s", o->tmp, strerror(errno));
		close(fd);
		unlink(o->tmp);
		out_free(o);
		return -1;
	}
	return 0;
}

int dtu_out_open(struct dtu_out *o, const char *path, const char *const *inputs,
		 size_t ninputs, char *err, size_t errlen)
{
	return out_open(o, path, inputs, ninputs, 0, err, errlen);
}

int dtu_out_open_new(struct dtu_out *o, const char *path, const char *const *inputs,
		     size_t ninputs, char *err, size_t errlen)
{
	return out_open(o, path, inputs, ninputs, 1, err, errlen);
}

/* rename, or for dtu_out_open_new a rename that never replaces */
static int publish(struct dtu_out *o)
{
	if (!o->noreplace)
		return rename(o->tmp, o->target);
	if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->target, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* a file system without RENAME_NOREPLACE: link() never replaces either */
	if (link(o->tmp, o->target) != 0)
		return -1;
	unlink(o->tmp);
	return 0;
}

int dtu_stdout_check(char *err, size_t errlen)
{
	errno = 0;
	int fl = fflush(stdout);
	int e = errno;

	if (fl == 0 && !ferror(stdout))
		return 0;
	dtu_seterr(err, errlen, "writing standard output: %s",
		   fl && e ? strerror(e) : "write error");
	clearerr(stdout);
	return -1;
}

int dtu_out_commit(struct dtu_out *o, char *err, size_t errlen)
{
	int ret = 0;

	if (o->is_stdout) {
		o->f = NULL;
		return dtu_stdout_check(err, errlen);
	}
	if (o->f == NULL) {
		/* The caller wrote tmp by name (e.g. SQLite): make it durable too. */
		int fd = o->tmp ? open(o->tmp, O_RDONLY | O_CLOEXEC) : -1;
		if (o->tmp && (fd < 0 || fsync(fd) != 0 || chmod(o->tmp, o->mode) != 0)) {
			dtu_seterr(err, errlen, "%s: %s", o->name, strerror(errno));
			ret = -1;
		}
		if (fd >= 0)
			close(fd);
	} else {
		errno = 0;
		int fl = fflush(o->f);
		int e = errno;
		int bad = fl != 0 || ferror(o->f);
		/* rename must not publish data still only in the page cache */
		if (!bad && o->tmp && fsync(fileno(o->f)) != 0)
			bad = 1, e = errno;
		if (fclose(o->f) != 0 && !bad)
			bad = 1, e = errno;
		o->f = NULL;
		if (bad) {
			dtu_seterr(err, errlen, "%s: %s", o->name,
				   e ? strerror(e) : "write error");
			ret = -1;
		}
	}
	if (o->tmp) {
		if (ret == 0 && publish(o) != 0) {
			dtu_seterr(err, errlen, "%s: %s%s", o->name, strerror(errno), errno == EEXIST ?
				   " (appeared meanwhile; not replaced)" : "");
			ret = -1;
		}
		if (ret != 0)
			unlink(o->tmp);
	}
	out_free(o);
	return ret;
}

void dtu_out_abort(struct dtu_out *o)
{
	if (o->is_stdout) {
		fflush(stdout);
		clearerr(stdout);
	} else if (o->f) {
		fclose(o->f);
	}
	if (o->tmp)
		unlink(o->tmp);
	out_free(o);
}

int
dtu_open_cgroup(const char *path, char *err, size_t errlen)
{
	/* linux/magic.h's CGROUP2_SUPER_MAGIC; v1 hierarchies have another */
	const unsigned long cgroup2_magic = 0x63677270;
	struct statfs sfs;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		dtu_seterr(err, errlen, "--cgroup %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstatfs(fd, &sfs) < 0) {
		dtu_seterr(err, errlen, "--cgroup %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if ((unsigned long)sfs.f_type != cgroup2_magic) {
		dtu_seterr(err, errlen, "--cgroup %s: not a cgroup v2 directory (cgroup2 is "
			   "usually mounted on /sys/fs/cgroup)", path);
		close(fd);
		return -1;
	}
	return fd;
}
