/*
 * procmaps.h - the recording side's one reader of /proc/PID/maps, with
 * what each user keeps as a filter, and the one rule for reading /proc
 * again when a pc falls in no mapping known (code mapped since: dlopen,
 * JIT).  Users, all of them the machine's (machine.h): its reads for the
 * capture's snapshots (every mapping), proctab.c's processes first heard
 * of from their events (executable ones) and dtm_observe's for the
 * unwinding workers (executable files and [vdso]).
 */
#ifndef DT_PROCMAPS_H
#define DT_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

/* One line of maps.  name points into the text parsed. */
struct dtpm_map {
	uint64_t	start, end;	/* end > start */
	uint64_t	offset;		/* file offset of start */
	uint32_t	prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	const char	*name;		/* a path (a deleted file's ends in
					 * " (deleted)"), "[vdso]", "[heap]", ...,
					 * or "" for anonymous memory */
};

/* Filters: which lines reach the caller. */
#define DTPM_EXEC	0x1	/* executable mappings only */
#define DTPM_FILES	0x2	/* a path or [vdso] only: no anonymous memory,
				 * [heap], [stack], [vvar], ... */

/* The reads of /proc one process may cause by pcs in no known mapping:
 * a process that keeps jumping outside its maps (a JIT without perf maps,
 * a corrupt stack) costs at most this many. */
#define DTPM_MAX_REREADS	16

typedef int (*dtpm_fn)(void *arg, const struct dtpm_map *m);

/*
 * One line (no newline) into m, names pointing into line.  0, or -1 with
 * a message in err: a line that is not "START-END PERMS OFFSET DEV INODE
 * [NAME]" with hex START < END, PERMS [r-][w-][x-][ps] and hex OFFSET.
 */
int dtpm_parse_line(const char *line, struct dtpm_map *m, char *err, size_t errlen);

/*
 * Every line of text (split in place at its newlines) that passes filter,
 * in order, to fn; a malformed line is skipped, the first one's message
 * (with its line number) left in err.  The number of malformed lines, or
 * -1 as soon as fn returned < 0.
 */
long dtpm_parse(char *text, unsigned filter, dtpm_fn fn, void *arg, char *err, size_t errlen);

/* /proc/PID/maps, read whole (free it), or NULL with errno: gone. */
char *dtpm_read(uint32_t pid);

/*
 * Whether a pc in no known mapping of a process may read /proc again,
 * after done such reads of it (the caller's count, per process): at most
 * DTPM_MAX_REREADS.  Asked before the caller looks the pc up, so that a
 * process past the limit costs no lookup.
 */
int dtpm_reread_left(uint32_t done);

#endif /* DT_PROCMAPS_H */
