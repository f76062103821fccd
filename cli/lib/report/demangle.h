/*
 * demangle.h - symbol names as their developers write them: C++ (Itanium
 * ABI), Rust (legacy and v0) and D, through libiberty's demangler, the one
 * binutils' c++filt uses, so names read exactly as c++filt prints them.
 */
#ifndef DT_DEMANGLE_H
#define DT_DEMANGLE_H

/*
 * The demangled form of sym, in a buffer the caller frees, or NULL when
 * sym is not a mangled name (plain C, kernel symbols), cannot be decoded,
 * or memory ran out: the caller then keeps sym.  sym is only read.
 */
char *dt_demangle(const char *sym);

#endif /* DT_DEMANGLE_H */
