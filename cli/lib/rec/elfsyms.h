/*
 * elfsyms.h - function symbols, build id and load bias of ELF files, as
 * struct dtcap_file for dtcap_put_file().  A cache reads each file once
 * (keyed by path, re-read when its inode or mtime changes).
 */
#ifndef DT_ELFSYMS_H
#define DT_ELFSYMS_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"

struct elfsyms_cache;

/* One file as read.  cap_id is free for the caller (dtcap_put_file's id). */
struct elfsyms_file {
	struct dtcap_file f;		/* f.id is 0; symbols sorted by addr */
	uint32_t	cap_id;
};

struct elfsyms_cache *elfsyms_cache_new(void);
void elfsyms_cache_free(struct elfsyms_cache *c);

/*
 * The symbols of path, read on first use.  open_path, if not NULL, is
 * where to read it from (e.g. "/proc/PID/root/usr/bin/x") while path is
 * the name recorded.  NULL with err filled when the file cannot be read or
 * is not ELF; failures are cached too, so a bad path costs one attempt.
 */
struct elfsyms_file *elfsyms_get(struct elfsyms_cache *c, const char *path,
				 const char *open_path, char *err, size_t errlen);

/* Read one file without a cache; free with elfsyms_file_free. */
/* What the cache knows of path, reading nothing: 1 some version of it has
 * a capture id, -1 it could not be read, 0 neither. */
int elfsyms_known(const struct elfsyms_cache *c, const char *path);
struct elfsyms_file *elfsyms_read(const char *path, const char *open_path,
				  char *err, size_t errlen);
void elfsyms_file_free(struct elfsyms_file *f);

/*
 * The separate debug file of e (whose identity f gives: path, build id),
 * by build id under the debug root (/usr/lib/debug, or $DT_DEBUG_DIR),
 * else by .gnu_debuglink; prefix ("/proc/PID/root", or NULL) is tried
 * first.  Its descriptor and *out, or -1 when there is none of the same
 * build.  The caller elf_end()s *out and closes the descriptor.
 */
int elfsyms_debug_open(Elf *e, const struct dtcap_file *f, const char *prefix, Elf **out);

#endif /* DT_ELFSYMS_H */
