/* The screen model's mechanics: lines of text with styled spans. See top.h. */
#include "top.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"

struct top_screen *
top_screen_create(int width, int height)
{
	struct top_screen *s = xcalloc(1, sizeof(*s));
	s->width = width < 1 ? 1 : width;
	s->height = height < 1 ? 1 : height;
	s->lines = xcalloc((size_t)s->height, sizeof(*s->lines));
	for (int i = 0; i < s->height; i++) {
		s->lines[i].text = xcalloc((size_t)s->width + 1, 1);
	}
	return s;
}

void
top_screen_destroy(struct top_screen *s)
{
	if (!s) {
		return;
	}
	for (int i = 0; i < s->height; i++) {
		free(s->lines[i].text);
	}
	free(s->lines);
	free(s);
}

void
top_screen_clear(struct top_screen *s)
{
	for (int i = 0; i < s->height; i++) {
		s->lines[i].text[0] = '\0';
		s->lines[i].style = TOP_STYLE_NORMAL;
		s->lines[i].span_count = 0;
	}
}

static void
add_span(struct top_line *l, int col, int len, enum top_style style)
{
	if (len <= 0 || style == TOP_STYLE_NORMAL) {
		return;
	}
	if (l->span_count > 0) {
		struct top_span *last = &l->spans[l->span_count - 1];
		if (last->style == style && last->col + last->len == col) {
			last->len += len; /* one span for neighbours of one style */
			return;
		}
	}
	if (l->span_count < TOP_SPANS_MAX) {
		l->spans[l->span_count++] = (struct top_span){.col = col, .len = len, .style = style};
	}
}

int
top_screen_add(struct top_screen *s, int row, enum top_style style, const char *text)
{
	if (row < 0 || row >= s->height) {
		return 0;
	}
	struct top_line *l = &s->lines[row];
	int col = (int)strlen(l->text), n = 0;
	for (; text[n] && col + n < s->width; n++) {
		unsigned char c = (unsigned char)text[n];
		l->text[col + n] = c >= 0x20 && c < 0x7f ? (char)c : '?'; /* the terminal gets ASCII only */
	}
	l->text[col + n] = '\0';
	add_span(l, col, n, style);
	return n;
}

void
top_screen_blit(struct top_screen *s, int row, int col, const struct top_screen *src)
{
	for (int i = 0; i < src->height && row + i < s->height; i++) {
		struct top_line *to = &s->lines[row + i];
		const struct top_line *from = &src->lines[i];
		int len = (int)strlen(to->text);
		if (col > len && col < s->width) {
			memset(to->text + len, ' ', (size_t)(col - len));
			to->text[col] = '\0';
		}
		if ((int)strlen(to->text) != col) {
			continue; /* the left part is wider than its place */
		}
		top_screen_add(s, row + i, from->style, from->text);
		/* its line style became a span of the whole part; its spans follow, moved */
		for (int k = 0; k < from->span_count && to->span_count < TOP_SPANS_MAX; k++) {
			const struct top_span *sp = &from->spans[k];
			int end = sp->col + sp->len;
			if (col + sp->col < s->width) {
				int len2 = (col + end > s->width ? s->width - col : end) - sp->col;
				to->spans[to->span_count++] =
					(struct top_span){.col = col + sp->col, .len = len2, .style = sp->style};
			}
		}
	}
}

char *
top_screen_text(const struct top_screen *s)
{
	int last = s->height - 1;
	while (last >= 0 && strspn(s->lines[last].text, " ") == strlen(s->lines[last].text)) {
		last--;
	}
	struct buf b;
	buf_init(&b);
	for (int i = 0; i <= last; i++) {
		size_t len = strlen(s->lines[i].text);
		while (len > 0 && s->lines[i].text[len - 1] == ' ') {
			len--;
		}
		buf_add(&b, s->lines[i].text, len);
		buf_addc(&b, '\n');
	}
	return buf_take(&b, NULL);
}
