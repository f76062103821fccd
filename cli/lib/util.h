/*
 * util.h - small helpers shared by dtrec, dtreport and dtsh: durations,
 * human-readable sizes and rates, "did you mean" suggestions, globs and
 * whole-file reads.  Nothing here prints or exits.
 */
#ifndef DT_UTIL_H
#define DT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * "10s", "500ms", "2m", "1h", "250us", "100ns" or plain (fractional)
 * seconds "1.5".  0 on success with *ns set; -1 on anything else
 * (empty, negative, trailing junk, overflow).
 */
int dtu_parse_duration(const char *s, uint64_t *ns);

/* "4096", "64k", "1M", "2MiB", "1g" (powers of 1024).  0 or -1. */
int dtu_parse_size(const char *s, uint64_t *bytes);

/* "812 B", "1.4 KiB", "33.0 MiB" into buf (>= 16 bytes); returns buf. */
const char *dtu_human_size(uint64_t bytes, char *buf, size_t len);
/* "950", "12.3k", "4.56M": counts and rates, into buf (>= 16 bytes). */
const char *dtu_human_count(double n, char *buf, size_t len);
/* "1.25s", "340ms", "2m05s" into buf (>= 16 bytes). */
const char *dtu_human_duration(uint64_t ns, char *buf, size_t len);

/* Levenshtein distance (bytes); sizes beyond 255 count as far apart. */
unsigned dtu_edit_distance(const char *a, const char *b);

/*
 * "Did you mean": the up to max candidates closest to name with distance
 * <= maxdist (0: a default that grows with the length of name), best first;
 * stores pointers into cands in out and returns how many.
 */
size_t dtu_suggest(const char *name, const char *const *cands, size_t ncands,
		   unsigned maxdist, const char **out, size_t max);

/* fnmatch(3) glob: 1 on match.  dtu_is_glob: does s contain * ? or [. */
int dtu_glob_match(const char *pattern, const char *s);
int dtu_is_glob(const char *s);

/*
 * Read a whole file, including /proc files whose st_size is 0.  Returns a
 * malloc'd NUL-terminated buffer (length in *len, may be NULL) or NULL
 * with errno set.
 */
char *dtu_read_file(const char *path, size_t *len);

/* CLOCK_MONOTONIC in ns (dt_rec's dtr_ts is local_clock(): DTIOCGCLOCK). */
uint64_t dtu_now_ns(void);

/*
 * Length of the valid UTF-8 sequence at s with n bytes left (SIZE_MAX for
 * a NUL-terminated string: a NUL ends any sequence), 0 if invalid
 * (overlong forms and surrogates included).  Comms and symbol names are
 * arbitrary bytes, and one bad byte makes a whole SVG or JSON unreadable.
 */
int dtu_utf8_len(const unsigned char *s, size_t n);

/* printf into a caller's error buffer (nothing if err is NULL or errlen 0). */
void dtu_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* DT_UTIL_H */
