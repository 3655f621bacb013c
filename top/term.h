/*
 * The full-screen terminal: draws a top_screen and reads keys. The one
 * user of <curses.h> is term_curses.c (ncursesw, loaded when the screen
 * opens; term_none.c in a build without it, where term_open() says so).
 */
#ifndef TEGRAWATCH_TERM_H
#define TEGRAWATCH_TERM_H

#include <stdbool.h>
#include <stdint.h>

#include "top.h"

/* What term_key() gives besides a character. */
enum term_key {
	TERM_KEY_NONE = -1,   /* the time passed */
	TERM_KEY_RESIZE = -2, /* the terminal changed size: term_size() again */
	TERM_KEY_NEXT = -3,   /* tab, right, down */
	TERM_KEY_PREV = -4,   /* shift-tab, left, up */
};

struct term;

/** Whether this build can open a terminal (built with ncurses). */
bool term_available(void);

/**
 * Takes the terminal (the alternate screen, no echo, keys one by one).
 * COLOUR false: no colour at all (NO_COLOR); colours are used only where
 * the terminal has them. Returns 0, -ENOTSUP (built without ncurses),
 * -ELIBACC (ncursesw cannot be loaded: logged) or -ENOTTY (no usable
 * terminal).
 */
int term_open(bool colour, struct term **out);

/** Gives the terminal back as it was. NULL is a no-op. */
void term_close(struct term *t);

/** The size now (columns, rows). */
void term_size(struct term *t, int *width, int *height);

/** Draws S (of the size term_size() gave) at once. */
void term_draw(struct term *t, const struct top_screen *s);

/** Waits up to TIMEOUT_MS for a key: a character, or an enum term_key. */
int term_key(struct term *t, int64_t timeout_ms);

#endif
