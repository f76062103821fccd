/*
 * jitmap.h - the symbols JIT compilers and interpreters write for perf
 * (/tmp/perf-PID.map: one "START SIZE name" line per code region, hex),
 * read for the processes a capture records and stored as a capture file
 * of their own, so their frames are named offline like any other.
 */
#ifndef DT_JITMAP_H
#define DT_JITMAP_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "dtcap.h"

/* A map file larger than this is refused (the reader holds it whole). */
#define JITMAP_MAX_BYTES	(64U << 20)

/*
 * The symbols of a perf map text, addresses sorted, a later line for the
 * same start replacing an earlier one (a region recompiled in place).
 * Lines that do not parse are counted in *bad and skipped.  The names
 * point into *names (one allocation, the caller frees it and *syms).
 * -1: out of memory.
 */
int jitmap_parse(const char *text, size_t len, struct dtcap_sym **syms, size_t *nsyms,
		 char **names, size_t *bad);

/*
 * The text of path, if it is safe to believe: a regular file (not a
 * link, not a FIFO) owned by uid or root, at most JITMAP_MAX_BYTES.
 * NULL with errno ENOENT when absent; other errors say why in err.
 */
char *jitmap_read_file(const char *path, uid_t uid, size_t *len, char *err, size_t errlen);

struct jitmap_cache;

struct jitmap_cache *jitmap_cache_new(void);
void jitmap_cache_free(struct jitmap_cache *c);

/* Has pid a perf map at all (one stat)?  Inline: the process table asks
 * at each exit and links nothing of the reader. */
static inline int jitmap_exists(uint32_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
	return lstat(path, &st) == 0;
}
/* Does pid's perf map differ from what jitmap_apply last stored? */
int jitmap_changed(struct jitmap_cache *c, uint32_t pid);

/*
 * pid's perf map and jitdump, stored through w as files (again only when
 * they changed), laid over the maps of its snapshot taken at ts: a new
 * array of *nout maps where the JIT regions replace the anonymous
 * mappings they overlap (file-backed mappings keep their addresses), or
 * NULL when pid has no usable map (then mv stays as it is).  mv is not
 * freed.  A reading that renames an address already described (code
 * replaced in place) is true from now on only: then a snapshot older
 * than that gets the names as they were, and *out2 (*nout2 maps) is a
 * second snapshot to store at *ts2 with the new ones.  A map that cannot
 * be believed or read leaves a message in err once per pid.  -1 only
 * when the writer failed.
 */
int jitmap_apply(struct jitmap_cache *c, struct dtcap_writer *w, uint32_t pid, uint64_t ts,
		 uint64_t now, const struct dtcap_map *mv, size_t nm, struct dtcap_map **out,
		 size_t *nout, struct dtcap_map **out2, size_t *nout2, uint64_t *ts2, char *err,
		 size_t errlen);

#endif /* DT_JITMAP_H */
