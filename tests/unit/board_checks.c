/* What the board source tests share (see board_checks.h). */
#include "board_checks.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

int64_t fake_ms = 1000000;

static int64_t
fake_now(void *data)
{
	(void)data;
	return fake_ms;
}

struct board *
open_board(const char *root)
{
	struct board *b = NULL;
	assert_int_equal(board_open(root, &b), 0);
	assert_non_null(b);
	board_set_clock(b, fake_now, NULL);
	return b;
}

int
take(struct board *b, struct sample *s)
{
	sample_clear(s);
	return board_sample(b, s);
}
