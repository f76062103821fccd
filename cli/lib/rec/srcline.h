/*
 * srcline.h - source lines and inlined calls of the user addresses stored
 * stacks hold, read from DWARF at the end of recording and stored as SRCL
 * chunks (dtcap_put_srclines), so a capture names them anywhere.
 *
 * The recorder adds each address once it is in a stored stack, as the
 * reader will look it up (the innermost pc, pc - 1 for return addresses),
 * with the capture file it lies in; srcl_write reads each file's DWARF
 * once (or its separate debug file's) and writes what it resolved.
 */
#ifndef DT_SRCLINE_H
#define DT_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"

struct srcl_set;

struct srcl_set *srcl_new(void);
void srcl_free(struct srcl_set *s);

/*
 * Capture file id is f (path, build id: a debug file must match it, load
 * bias), read through open_path (NULL: f->path).  The first call for an
 * id counts.  -1 on ENOMEM.
 */
int srcl_file(struct srcl_set *s, uint32_t id, const struct dtcap_file *f,
	      const char *open_path);
/* The newest file id known by path, and its load bias; 0 if none. */
uint32_t srcl_lookup(struct srcl_set *s, const char *path, uint64_t *bias);
/* vaddr (file virtual address) of file id, to resolve.  -1 on ENOMEM. */
int srcl_add(struct srcl_set *s, uint32_t id, uint64_t vaddr);

/* What srcl_write did, for the recording summary. */
struct srcl_stats {
	uint64_t	addrs;		/* asked for */
	uint64_t	resolved;	/* with a source line */
	uint64_t	inlined;	/* of those, inside an inlined call */
	uint32_t	files, files_nodwarf;
};

/* Resolve and store everything added.  -1 when the writer failed (its
 * message says why); files without DWARF are only counted. */
int srcl_write(struct srcl_set *s, struct dtcap_writer *w, struct srcl_stats *st);

#endif /* DT_SRCLINE_H */
