/*
 * dlopen() and dlsym() behind one small interface (see dynlib.h). Built
 * only where a library is loaded this way (libcurl, NVML, libmosquitto,
 * libmicrohttpd): the static build has none of them.
 */
#include "dynlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <dlfcn.h>

#include "log.h"
#include "xalloc.h"

struct dynlib {
	void *handle;
	char *name; /* a copy: a configured soname need not outlive the call */
};

/* Appends TEXT to WHY (after "; " when WHY already holds something), cut at its size. */
static void
append(char *why, size_t size, size_t *used, const char *text)
{
	if (*used >= size) {
		return;
	}
	int n = snprintf(why + *used, size - *used, "%s%s", *used ? "; " : "", text);
	*used += n < 0 ? 0 : (size_t)n;
}

int
dynlib_open(const char *const *sonames, const struct dynlib_symbol *symbols, size_t count, struct dynlib **ret,
	    char *why, size_t why_size)
{
	void *h = NULL;
	const char *name = NULL;
	size_t used = 0;
	if (why_size > 0) {
		why[0] = '\0';
	}
	for (size_t i = 0; !h && sonames[i]; i++) {
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			name = sonames[i];
		} else {
			const char *e = dlerror();
			append(why, why_size, &used, e ? e : sonames[i]);
		}
	}
	if (!h) {
		return -ENOENT;
	}
	/* every address first, so that a missing one leaves every slot as it was */
	void **found = xcalloc(count ? count : 1, sizeof(*found));
	for (size_t i = 0; i < count; i++) {
		found[i] = dlsym(h, symbols[i].name);
		if (!found[i]) {
			snprintf(why, why_size, "%s has no %s", name, symbols[i].name);
			free(found);
			dlclose(h);
			return -ENOENT;
		}
	}
	for (size_t i = 0; i < count; i++) {
		*symbols[i].slot = found[i];
	}
	free(found);
	struct dynlib *lib = xcalloc(1, sizeof(*lib));
	lib->handle = h;
	lib->name = xstrdup(name);
	*ret = lib;
	return 0;
}

int
dynlib_load_once(struct dynlib **lib, const char *const *sonames, const struct dynlib_symbol *symbols, size_t count,
		 const char *who, const char *what, const char *advice)
{
	if (*lib) {
		return 0;
	}
	char why[512];
	if (dynlib_open(sonames, symbols, count, lib, why, sizeof(why)) < 0) {
		log_error("%s: cannot load %s: %s (%s)", who, what, advice, why);
		return -ELIBACC;
	}
	return 0;
}

void *
dynlib_find(const struct dynlib *lib, const char *name)
{
	return dlsym(lib->handle, name);
}

const char *
dynlib_name(const struct dynlib *lib)
{
	return lib->name;
}

void
dynlib_close(struct dynlib *lib)
{
	if (lib) {
		dlclose(lib->handle);
		free(lib->name);
		free(lib);
	}
}
