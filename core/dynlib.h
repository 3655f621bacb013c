/*
 * Shared libraries loaded at run time by the feature that uses them
 * (libcurl, libsnappy, zlib, NVML, libmosquitto, libmicrohttpd, ncursesw), the one
 * place that calls dlopen() and dlsym(): a host without the library runs
 * the same binary, and only what is used is mapped.
 */
#ifndef TEGRAWATCH_DYNLIB_H
#define TEGRAWATCH_DYNLIB_H

#include <stddef.h>

/*
 * A library's functions as a table of pointers, each of the type its header
 * declares (included before): LIST is an X-macro of their names.
 *
 *   static struct { struct dynlib *lib; LIST(DYNLIB_POINTER) } foo_lib;
 *   static const struct dynlib_symbol symbols[] = {LIST(FOO_SYMBOL)};
 *   with #define FOO_SYMBOL(name) DYNLIB_SYMBOL(foo_lib, name)
 */
#define DYNLIB_POINTER(name) __typeof__(name) *name;
#define DYNLIB_SYMBOL(table, name) {#name, (void **)&(table).name},

/** A loaded library. */
struct dynlib;

/** One symbol to resolve: its name and where its address goes, e.g. (void **)&lib.fn. */
struct dynlib_symbol {
	const char *name;
	void **slot;
};

/**
 * Loads the first of SONAMES (NULL-terminated) that loads, then resolves
 * all COUNT SYMBOLS: all or nothing, the slots are written only when every
 * symbol is there. Returns 0 and *RET, or -ENOENT with WHY saying what
 * failed: what the loader said of every soname tried ("libfoo.so.1: cannot
 * open shared object file: ...; libbar.so.1: ..."), or "libfoo.so.1 has no
 * foo_init"; the library is then not kept loaded.
 */
int dynlib_open(const char *const *sonames, const struct dynlib_symbol *symbols, size_t count, struct dynlib **ret,
		char *why, size_t why_size);

/**
 * As dynlib_open() into *LIB, once: 0 at once when *LIB is loaded already.
 * On failure logs "WHO: cannot load WHAT: ADVICE (what the loader said)"
 * and returns -ELIBACC, *LIB still NULL (a later call tries again). For the
 * libraries a feature loads when it starts: one thread, at start or reload.
 */
int dynlib_load_once(struct dynlib **lib, const char *const *sonames, const struct dynlib_symbol *symbols, size_t count,
		     const char *who, const char *what, const char *advice);

/** An optional symbol of LIB: its address, or NULL when the library has none. */
void *dynlib_find(const struct dynlib *lib, const char *name);

/** The soname that was loaded. */
const char *dynlib_name(const struct dynlib *lib);

/** Unloads LIB; every address taken from it is then invalid. NULL is a no-op. */
void dynlib_close(struct dynlib *lib);

#endif
