/*
 * What the board source tests share: the fixture trees, a board opened on a
 * root with a clock the test moves, and one sample taken.
 */
#ifndef TEGRAWATCH_TESTS_BOARD_CHECKS_H
#define TEGRAWATCH_TESTS_BOARD_CHECKS_H

#include <stdint.h>

#include "core/sample.h"
#include "tegra/board.h"

#define BOARDS FIXTURES_DIR "/boards"
#define DEMO_ROOT FIXTURES_DIR "/../../configs/demo/root"

/* the metrics of orin-nano-jp6 over two samples (test_orin_nano_jp6 checks its table holds them all) */
#define NANO6_METRICS 87

/* the board's clock (ms): a test moves it */
extern int64_t fake_ms;

/** The board at ROOT, on the fake clock. */
struct board *open_board(const char *root);

/** One sample into *S (cleared first); board_sample()'s result. */
int take(struct board *b, struct sample *s);

#endif
