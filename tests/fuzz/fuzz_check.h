/* What the fuzz targets share: CHECK(cond) aborts, naming the condition, its file and line, when an invariant fails. */
#ifndef TEGRAWATCH_FUZZ_CHECK_H
#define TEGRAWATCH_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                 \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

#endif
