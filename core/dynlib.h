/*
 * Optional shared libraries loaded at run time (libcurl, libsnappy, zlib,
 * NVML), the one place that calls dlopen() and dlsym(): a host without the
 * library runs the same binary, and only what is used is mapped.
 */
#ifndef TEGRAWATCH_DYNLIB_H
#define TEGRAWATCH_DYNLIB_H

#include <stddef.h>

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

/** An optional symbol of LIB: its address, or NULL when the library has none. */
void *dynlib_find(const struct dynlib *lib, const char *name);

/** The soname that was loaded. */
const char *dynlib_name(const struct dynlib *lib);

/** Unloads LIB; every address taken from it is then invalid. NULL is a no-op. */
void dynlib_close(struct dynlib *lib);

#endif
