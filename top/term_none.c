/* A build without ncurses: no full-screen view (`top --once` still works). See term.h. */
#include "term.h"

#include <errno.h>

bool
term_available(void)
{
	return false;
}

int
term_open(bool colour, struct term **out)
{
	(void)colour;
	(void)out;
	return -ENOTSUP;
}

void
term_close(struct term *t)
{
	(void)t;
}

void
term_size(struct term *t, int *width, int *height)
{
	(void)t;
	*width = 80;
	*height = 24;
}

void
term_draw(struct term *t, const struct top_screen *s)
{
	(void)t;
	(void)s;
}

int
term_key(struct term *t, int64_t timeout_ms)
{
	(void)t;
	(void)timeout_ms;
	return TERM_KEY_NONE;
}
