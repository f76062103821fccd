/*
 * termsafe.h - text from a capture (comms, symbol and module names, host
 * strings) as it may reach a terminal or a table: a comm is 16 bytes the
 * traced program chose, a symbol name whatever a module was built with.
 * Written as is, an escape sequence in one moves the cursor, retitles
 * the terminal or clears the screen, and a newline forges a row.  These
 * write such bytes escaped, as ls -b does: \n \r \t, \\ for a backslash,
 * and octal (\033) for the other control bytes, bytes that are no UTF-8
 * and the C1 controls.  Printable UTF-8 stays as it is.
 */
#ifndef DT_TERMSAFE_H
#define DT_TERMSAFE_H

#include <stddef.h>
#include <stdio.h>

/* Does s hold a byte termsafe would escape? */
int dtt_unsafe(const char *s);

/* s escaped into out (outsz bytes, NUL-terminated, cut at a whole escape
 * when it does not fit).  Returns the length of the whole escaped text
 * (snprintf's convention). */
size_t dtt_escape(char *out, size_t outsz, const char *s);

/* s itself when it is safe, else its escaped copy in one of 8 buffers of
 * the calling thread, reused in turn (so up to 8 in one printf; text
 * past 4 KB escaped is cut).  NULL stays NULL. */
const char *dtt_str(const char *s);

#endif
