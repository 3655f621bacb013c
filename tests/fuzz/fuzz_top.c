/*
 * Fuzz target for `top`'s reading of the agent (top/): the HTTP answer
 * splitter, the snapshot reader and the screen model over what it read.
 * Invariants: a parsed answer's body lies inside it; every rendered line
 * fits the screen. Any violation aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top/top.h"
#include "top/top_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int status;
	size_t body, len;
	if (top_http_parse((const char *)data, size, &status, &body, &len) == 0 && body + len > size) {
		fprintf(stderr, "fuzz_top: body past the answer\n");
		abort();
	}
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct top_data *d = top_data_create();
	top_data_from_snapshot(d, text);
	struct top_screen *s = top_screen_create(80, 24);
	for (int v = 0; v < TOP_VIEWS; v++) {
		top_render(s, d, (enum top_view)v);
		for (int i = 0; i < s->height; i++) {
			if ((int)strlen(s->lines[i].text) > s->width) {
				fprintf(stderr, "fuzz_top: a line past the edge\n");
				abort();
			}
		}
	}
	top_screen_destroy(s);
	top_data_destroy(d);
	free(text);
	return 0;
}
