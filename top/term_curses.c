/*
 * The full-screen terminal through ncurses(w), the only file that
 * includes <curses.h>: see term.h. ncurses is on every Jetson image and
 * knows every terminal from its terminfo (the alternate screen, the keys,
 * the colours, or none), redraws only what changed and turns SIGWINCH
 * into KEY_RESIZE.
 *
 * It is loaded with dlopen() when the screen opens: only `top` uses it,
 * and linked it is mapped by every agent. Only functions whose ABI is the
 * same in ncurses 5 and 6 are called (no chtype crosses: attributes go as
 * int, through wattrset), so Ubuntu 18.04's libncursesw.so.5 does too.
 */
#include "term.h"

#include <curses.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dynlib.h"
#include "core/xalloc.h"

/* clang-format off */
#define NC_FUNCTIONS(X) \
	X(newterm) X(set_term) X(delscreen) X(endwin) X(cbreak) X(noecho) X(nonl) X(keypad) X(curs_set) \
	X(has_colors) X(start_color) X(use_default_colors) X(init_pair) \
	X(werase) X(wattrset) X(mvwaddnstr) X(wrefresh) X(wtimeout) X(wgetch) \
	X(stdscr) X(COLS) X(LINES)
/* clang-format on */

/* the screen's variables (stdscr, COLS, LINES) come as their addresses */
static struct {
	struct dynlib *lib;
	NC_FUNCTIONS(DYNLIB_POINTER)
} nc;

#define NC(name) (nc.name)
#define NC_SYMBOL(name) DYNLIB_SYMBOL(nc, name)
#define NC_STDSCR (*nc.stdscr)

struct term {
	SCREEN *screen;
	bool colour;
};

/* the colour pairs of the styles (0: the terminal's own) */
static const short style_pair[] = {
	[TOP_STYLE_NORMAL] = 0, [TOP_STYLE_TITLE] = 1, [TOP_STYLE_HEAD] = 2, [TOP_STYLE_OK] = 3,
	[TOP_STYLE_WARN] = 4,   [TOP_STYLE_CRIT] = 5,  [TOP_STYLE_DIM] = 6,
};

bool
term_available(void)
{
	return true;
}

int
term_open(bool colour, struct term **out)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		return -ENOTTY;
	}
	static const char *const names[] = {"libncursesw.so.6", "libncursesw.so.5", NULL};
	static const struct dynlib_symbol symbols[] = {NC_FUNCTIONS(NC_SYMBOL)};
	if (dynlib_load_once(&nc.lib, names, symbols, sizeof(symbols) / sizeof(symbols[0]), "top", "ncursesw",
			     "install libncursesw6") < 0) {
		return -ELIBACC;
	}
	/* newterm(), not initscr(): an unknown TERM is an answer here, not an exit */
	SCREEN *screen = NC(newterm)(NULL, stdout, stdin);
	if (!screen) {
		return -ENOTTY;
	}
	NC(set_term)(screen);
	NC(cbreak)();
	NC(noecho)();
	NC(nonl)();
	NC(keypad)(NC_STDSCR, TRUE);
	NC(curs_set)(0);
	struct term *t = xcalloc(1, sizeof(*t));
	t->screen = screen;
	t->colour = colour && NC(has_colors)();
	if (t->colour) {
		NC(start_color)();
		NC(use_default_colors)();
		NC(init_pair)(1, COLOR_BLACK, COLOR_CYAN);
		NC(init_pair)(2, COLOR_CYAN, -1);
		NC(init_pair)(3, COLOR_GREEN, -1);
		NC(init_pair)(4, COLOR_YELLOW, -1);
		NC(init_pair)(5, COLOR_RED, -1);
		NC(init_pair)(6, COLOR_BLUE, -1);
	}
	*out = t;
	return 0;
}

void
term_close(struct term *t)
{
	if (t) {
		NC(endwin)();
		NC(delscreen)(t->screen);
		free(t);
	}
}

void
term_size(struct term *t, int *width, int *height)
{
	(void)t;
	*width = *NC(COLS);
	*height = *NC(LINES);
}

static int
style_attr(const struct term *t, enum top_style s)
{
	if (!t->colour) {
		/* without colours: the title reversed, headings bold, alarms bold too */
		attr_t a = s == TOP_STYLE_TITLE                                                ? A_REVERSE
			   : s == TOP_STYLE_HEAD || s == TOP_STYLE_CRIT || s == TOP_STYLE_WARN ? A_BOLD
											       : A_NORMAL;
		return (int)a;
	}
	int a = (int)COLOR_PAIR(style_pair[s]);
	return s == TOP_STYLE_HEAD || s == TOP_STYLE_CRIT ? a | (int)A_BOLD : a;
}

void
term_draw(struct term *t, const struct top_screen *s)
{
	WINDOW *w = NC_STDSCR;
	int cols = *NC(COLS), lines = *NC(LINES);
	NC(werase)(w);
	for (int y = 0; y < s->height && y < lines; y++) {
		const struct top_line *l = &s->lines[y];
		NC(wattrset)(w, style_attr(t, l->style));
		NC(mvwaddnstr)(w, y, 0, l->text, cols);
		for (int k = 0; k < l->span_count; k++) {
			const struct top_span *sp = &l->spans[k];
			if (sp->col < cols) {
				NC(wattrset)(w, style_attr(t, sp->style));
				NC(mvwaddnstr)(w, y, sp->col, l->text + sp->col, sp->len);
			}
		}
	}
	NC(wattrset)(w, (int)A_NORMAL);
	NC(wrefresh)(w);
}

int
term_key(struct term *t, int64_t timeout_ms)
{
	(void)t;
	NC(wtimeout)(NC_STDSCR, timeout_ms > 0x7fffffff ? 0x7fffffff : (int)timeout_ms);
	int c = NC(wgetch)(NC_STDSCR);
	switch (c) {
	case ERR:
		return TERM_KEY_NONE;
	case KEY_RESIZE:
		return TERM_KEY_RESIZE;
	case '\t':
	case KEY_RIGHT:
	case KEY_DOWN:
		return TERM_KEY_NEXT;
	case KEY_BTAB:
	case KEY_LEFT:
	case KEY_UP:
		return TERM_KEY_PREV;
	default:
		return c >= 0 && c < 256 ? c : TERM_KEY_NONE;
	}
}
