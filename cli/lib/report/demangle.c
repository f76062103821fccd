/*
 * demangle.c - see demangle.h.  libiberty's cplus_demangle does the work;
 * we only decide which names are worth handing to it and with which flags.
 */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"

char *dt_demangle(const char *sym)
{
	/* Itanium C++ and both Rust manglings start "_Z"/"_R" (legacy Rust
	 * is Itanium-shaped); D's start "_D".  Everything else is a C name,
	 * and the demangler would only spend time saying so. */
	if (sym == NULL || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R' && sym[1] != 'D'))
		return NULL;
	/* c++filt's default flags: parameters, ANSI qualifiers, and the
	 * Rust legacy hash kept (VERBOSE), so our names equal its output. */
	char *d = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE | DMGL_AUTO);
	/* DMGL_AUTO leaves D to an explicit request (as c++filt -s auto
	 * does), and "_D" never starts a C++ or Rust name. */
	if (d == NULL && sym[1] == 'D')
		d = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE | DMGL_DLANG);
	return d;
}
