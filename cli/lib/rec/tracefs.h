/*
 * tracefs.h - the kernel's tracepoint catalog as tracefs shows it: where
 * tracefs is (mounted on demand), which events exist, and their record
 * layouts, turned into the capture's argument slots.
 *
 * Used by the perf_event source: a tracepoint sample carries the event's
 * raw record (PERF_SAMPLE_RAW), laid out as events/SYS/NAME/format says.
 * Nothing here prints or exits; errors come back as one line in a caller
 * buffer.
 */
#ifndef DT_TRACEFS_H
#define DT_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

#include "dtcap.h"

/*
 * The tracefs root ("/sys/kernel/tracing", or debugfs's tracing/).  When
 * neither is mounted and we may, mounts tracefs at /sys/kernel/tracing,
 * as perf's users do by hand.  Returns a static string or NULL with err.
 */
const char *dtt_root(char *err, size_t errlen);

/*
 * Every event "SYS/NAME" under events/, in directory order, to cb; a
 * non-zero return from cb stops the walk and is returned.  -1 on error.
 */
int dtt_walk(const char *root, int (*cb)(const char *sys, const char *name, void *ctx),
	     void *ctx, char *err, size_t errlen);

/* Where one field's value sits in the raw record. */
enum dtt_kind {
	DTT_SCALAR,	/* integer or pointer, size <= 8 */
	DTT_CHARS,	/* char NAME[N]: inline text */
	DTT_BYTES,	/* any other fixed array */
	DTT_DATALOC,	/* __data_loc: u32 (len << 16 | offset from record start) */
	DTT_RELLOC,	/* __rel_loc: the same, offset from the field's end */
};

#define DTT_MAXFIELDS	64

struct dtt_field {
	char		type[64];	/* "pid_t", "char[16]", "const char *" */
	char		name[64];
	uint16_t	offset, size;
	uint8_t		is_signed;
	uint8_t		kind;		/* enum dtt_kind */
	uint8_t		is_char;	/* DATALOC/RELLOC of char: a string */
};

struct dtt_format {
	uint32_t	id;		/* the tracepoint's id: perf's attr.config */
	unsigned	nfields;	/* excluding the common_* fields */
	struct dtt_field f[DTT_MAXFIELDS];
};

/* Parse events/SYS/NAME/format.  0, or -1 with err ("no such tracepoint"). */
int dtt_read_format(const char *root, const char *sys, const char *name,
		    struct dtt_format *fmt, char *err, size_t errlen);

/*
 * How a tracepoint's fields map onto the DTCAP_MAXARGS u64 slots of an
 * event: each scalar takes one slot, strings and arrays the slots left
 * over, shared out evenly (at most 8, 64 bytes, each; longer text is cut
 * and stays NUL-terminated within its slots).  Fields past the tenth
 * slot are not recorded.
 */
struct dtt_layout {
	unsigned	nargs;		/* logical arguments kept */
	unsigned	nslots;		/* slots used */
	struct {
		uint16_t	field;	/* index into dtt_format.f */
		uint8_t		slot, nslots;
	} a[DTCAP_MAXARGS];
};

/*
 * Lay out fmt's fields (skipping the first `skip`, e.g. __syscall_nr) and
 * describe them into out's args (names, types "char[N]" for text).
 */
void dtt_layout(const struct dtt_format *fmt, unsigned skip, struct dtt_layout *lay,
		struct dtcap_probe *out);

/*
 * Decode one raw record into slots (zeroed first; DTCAP_MAXARGS of them).
 * Fields that point outside the record are left 0.  Returns the slots used.
 */
unsigned dtt_decode(const struct dtt_format *fmt, const struct dtt_layout *lay,
		    const void *raw, size_t rawlen, uint64_t *slots);

#endif /* DT_TRACEFS_H */
