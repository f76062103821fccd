/*
 * dtcap_args.h - how a probe's arguments are reached in SQL: the column of
 * its per-probe view that holds each field, and how the field's event slots
 * are decoded (text, a signed or unsigned integer of the C type's width,
 * bytes).  The one rule shared by the views (dtsql_views.c), dtsh's
 * describe and `dtrec -l -v`, so every place that names an argument names
 * the same column.  In libdtcap, beside the format it reads (FORMAT.md,
 * PROB), since readers of both halves of the tools need it.
 */
#ifndef DTCAP_ARGS_H
#define DTCAP_ARGS_H

#include <stddef.h>
#include <stdio.h>

#include "dtcap.h"

enum dtcap_argkind {
	DTCAP_ARG_RAW,	/* the slot as stored: a pointer, long, unknown type */
	DTCAP_ARG_INT,	/* an integer narrower than the slot: width and sign below */
	DTCAP_ARG_TEXT,	/* char[N]: the slots' bytes up to the first NUL, as text */
	DTCAP_ARG_BYTES,	/* u8[N]: the slots' bytes as a blob */
};

struct dtcap_argcol {
	char		name[DTCAP_ARGNAMELEN + 8];	/* the view's column */
	enum dtcap_argkind	kind;
	unsigned	bytes;		/* DTCAP_ARG_INT: the type's width, 1, 2 or 4 */
	int		is_signed;	/* DTCAP_ARG_INT */
	unsigned	slot, nslots;	/* events.argSLOT .. */
	unsigned	arg;		/* the probe's argument (p->args[arg]) */
};

/* The event columns every probe view starts with, in order; a field of
 * the same name takes the name and the event's column becomes event_NAME. */
extern const char *const dtcap_arg_event_cols[];

/*
 * The view columns of p's arguments, in p's order: fields keep their
 * names (made unique with _2, _3, ...; an empty one is argN), slots
 * out of range are dropped.  Returns the number filled (<= DTCAP_MAXARGS).
 * *errno_name is set to the index of the column after which the view
 * puts errno_name (a return probe's errno), or -1.
 */
unsigned dtcap_arg_columns(const struct dtcap_probe *p, struct dtcap_argcol *out, int *errno_name);

/* The name of the event column ec (of dtcap_arg_event_cols) in p's view. */
const char *dtcap_arg_event_col(const struct dtcap_probe *p, const char *ec, char *buf, size_t len);

/* "arg2", "arg0..arg1": the events columns holding c. */
const char *dtcap_arg_slots(const struct dtcap_argcol *c, char *buf, size_t len);

/*
 * p's arguments as describe and `dtrec -l -v` print them: how to select
 * the fields by name, then per column its C type, the events columns that
 * hold it and how they are decoded.
 */
void dtcap_arg_print(FILE *f, const struct dtcap_probe *p);

#endif
