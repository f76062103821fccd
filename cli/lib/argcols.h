/*
 * argcols.h - how a probe's arguments are reached in SQL: the column of
 * its per-probe view that holds each field, and how the field's event slots
 * are decoded (text, a signed or unsigned integer of the C type's width,
 * bytes).  The one rule shared by the views (dtsql_views.c), dtsh's
 * describe and `dtrec -l -v`, so every place that names an argument names
 * the same column.
 */
#ifndef DT_ARGCOLS_H
#define DT_ARGCOLS_H

#include <stddef.h>
#include <stdio.h>

#include "dtcap.h"

enum dta_kind {
	DTA_RAW,	/* the slot as stored: a pointer, long, unknown type */
	DTA_INT,	/* an integer narrower than the slot: width and sign below */
	DTA_TEXT,	/* char[N]: the slots' bytes up to the first NUL, as text */
	DTA_BYTES,	/* u8[N]: the slots' bytes as a blob */
};

struct dta_col {
	char		name[DTCAP_ARGNAMELEN + 8];	/* the view's column */
	enum dta_kind	kind;
	unsigned	bytes;		/* DTA_INT: the type's width, 1, 2 or 4 */
	int		is_signed;	/* DTA_INT */
	unsigned	slot, nslots;	/* events.argSLOT .. */
	unsigned	arg;		/* the probe's argument (p->args[arg]) */
};

/* The event columns every probe view starts with, in order; a field of
 * the same name takes the name and the event's column becomes event_NAME. */
extern const char *const dta_event_cols[];

/*
 * The view columns of p's arguments, in p's order: fields keep their
 * names (made unique with _2, _3, ...; an empty one is argN), slots
 * out of range are dropped.  Returns the number filled (<= DTCAP_MAXARGS).
 * *errno_name is set to the index of the column after which the view
 * puts errno_name (a return probe's errno), or -1.
 */
unsigned dta_columns(const struct dtcap_probe *p, struct dta_col *out, int *errno_name);

/* The name of the event column ec (of dta_event_cols) in p's view. */
const char *dta_event_col(const struct dtcap_probe *p, const char *ec, char *buf, size_t len);

/* "arg2", "arg0..arg1": the events columns holding c. */
const char *dta_slots(const struct dta_col *c, char *buf, size_t len);

/*
 * p's arguments as describe and `dtrec -l -v` print them: how to select
 * the fields by name, then per column its C type, the events columns that
 * hold it and how they are decoded.
 */
void dta_print(FILE *f, const struct dtcap_probe *p);

#endif
