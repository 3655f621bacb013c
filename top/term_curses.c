/*
 * The full-screen terminal through ncurses(w), the only file that
 * includes <curses.h>: see term.h. ncurses is on every Jetson image and
 * knows every terminal from its terminfo (the alternate screen, the keys,
 * the colours, or none), redraws only what changed and turns SIGWINCH
 * into KEY_RESIZE.
 */
#include "term.h"

#include <curses.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/xalloc.h"

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
	/* newterm(), not initscr(): an unknown TERM is an answer here, not an exit */
	SCREEN *screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		return -ENOTTY;
	}
	set_term(screen);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	struct term *t = xcalloc(1, sizeof(*t));
	t->screen = screen;
	t->colour = colour && has_colors();
	if (t->colour) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_BLACK, COLOR_CYAN);
		init_pair(2, COLOR_CYAN, -1);
		init_pair(3, COLOR_GREEN, -1);
		init_pair(4, COLOR_YELLOW, -1);
		init_pair(5, COLOR_RED, -1);
		init_pair(6, COLOR_BLUE, -1);
	}
	*out = t;
	return 0;
}

void
term_close(struct term *t)
{
	if (t) {
		endwin();
		delscreen(t->screen);
		free(t);
	}
}

void
term_size(struct term *t, int *width, int *height)
{
	(void)t;
	*width = COLS;
	*height = LINES;
}

static attr_t
style_attr(const struct term *t, enum top_style s)
{
	if (!t->colour) {
		/* without colours: the title reversed, headings bold, alarms bold too */
		return s == TOP_STYLE_TITLE                                                ? A_REVERSE
		       : s == TOP_STYLE_HEAD || s == TOP_STYLE_CRIT || s == TOP_STYLE_WARN ? A_BOLD
											   : A_NORMAL;
	}
	attr_t a = COLOR_PAIR(style_pair[s]);
	return s == TOP_STYLE_HEAD || s == TOP_STYLE_CRIT ? a | A_BOLD : a;
}

void
term_draw(struct term *t, const struct top_screen *s)
{
	erase();
	for (int y = 0; y < s->height && y < LINES; y++) {
		const struct top_line *l = &s->lines[y];
		attrset(style_attr(t, l->style));
		mvaddnstr(y, 0, l->text, COLS);
		for (int k = 0; k < l->span_count; k++) {
			const struct top_span *sp = &l->spans[k];
			if (sp->col < COLS) {
				attrset(style_attr(t, sp->style));
				mvaddnstr(y, sp->col, l->text + sp->col, sp->len);
			}
		}
	}
	attrset(A_NORMAL);
	refresh();
}

int
term_key(struct term *t, int64_t timeout_ms)
{
	(void)t;
	timeout(timeout_ms > 0x7fffffff ? 0x7fffffff : (int)timeout_ms);
	int c = getch();
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
