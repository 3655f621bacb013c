/*
 * Metric catalogue and pattern algebra. A pattern (catalogue entry or rule
 * glob) compiles to a list of tokens, each a set of characters, either
 * taken once or repeated any number of times. Two patterns share a metric
 * when the product of their automata reaches both ends; a name is close to
 * a pattern when an edit-distance table over (name, tokens) says so.
 */
#include "catalog.h"

#include <stdint.h>
#include <string.h>

#include "core/metric_dict.h"

#define MAX_PATTERN 64               /* longer globs are refused by the rule loader */
#define MAX_TOKENS (2 * MAX_PATTERN) /* a placeholder becomes two tokens */
#define FAR 0xFF                     /* distance "unreachable" in the edit table */

struct charset {
	uint64_t bits[2]; /* ASCII only: metric names are ASCII */
};

struct tok {
	struct charset set;
	bool star; /* any number of characters of SET, none included */
};

static void
set_add(struct charset *s, char c)
{
	unsigned char u = (unsigned char)c;
	if (u < 128) {
		s->bits[u >> 6] |= (uint64_t)1 << (u & 63);
	}
}

static bool
set_has(const struct charset *s, char c)
{
	unsigned char u = (unsigned char)c;
	return u < 128 && (s->bits[u >> 6] >> (u & 63) & 1);
}

static bool
set_meets(const struct charset *a, const struct charset *b)
{
	return (a->bits[0] & b->bits[0]) || (a->bits[1] & b->bits[1]);
}

/* The smallest character of S, to fill an inserted position of a suggestion. */
static char
set_first(const struct charset *s)
{
	for (int c = 0; c < 128; c++) {
		if (set_has(s, (char)c)) {
			return (char)c;
		}
	}
	return '?';
}

static void
set_range(struct charset *s, char lo, char hi)
{
	for (char c = lo; c <= hi; c++) {
		set_add(s, c);
	}
}

/* [a-z0-9_]: one segment of a name. */
static struct charset
word_set(void)
{
	struct charset s = {{0, 0}};
	set_range(&s, 'a', 'z');
	set_range(&s, '0', '9');
	set_add(&s, '_');
	return s;
}

static struct charset
digit_set(void)
{
	struct charset s = {{0, 0}};
	set_range(&s, '0', '9');
	return s;
}

/* Everything a metric name can hold: '*' never needs more. */
static struct charset
name_set(void)
{
	struct charset s = word_set();
	set_add(&s, '.');
	return s;
}

static size_t
push(struct tok *toks, size_t n, struct charset set, bool star)
{
	/* "**" is "*": keeps the token count bounded by the pattern length */
	if (star && n > 0 && toks[n - 1].star && memcmp(&toks[n - 1].set, &set, sizeof(set)) == 0) {
		return n;
	}
	toks[n].set = set;
	toks[n].star = star;
	return n + 1;
}

/*
 * Compiles TEXT into TOKS (room for MAX_TOKENS). With PLACEHOLDERS, an
 * upper-case run is a placeholder: "N" one or more digits, any other one
 * segment of [a-z0-9_]+. Returns the token count, or SIZE_MAX when TEXT is
 * too long.
 */
static size_t
compile(const char *text, bool placeholders, struct tok *toks)
{
	size_t n = 0;
	if (strlen(text) > MAX_PATTERN) {
		return SIZE_MAX;
	}
	for (const char *p = text; *p;) {
		if (*p == '*') {
			n = push(toks, n, name_set(), true);
			p++;
		} else if (placeholders && *p >= 'A' && *p <= 'Z') {
			const char *start = p;
			while (*p >= 'A' && *p <= 'Z') {
				p++;
			}
			struct charset s = (p - start == 1 && *start == 'N') ? digit_set() : word_set();
			n = push(toks, n, s, false);
			n = push(toks, n, s, true);
		} else {
			struct charset s = {{0, 0}};
			set_add(&s, *p);
			n = push(toks, n, s, false);
			p++;
		}
	}
	return n;
}

/* True when some string is accepted by both token lists. */
static bool
intersect(const struct tok *a, size_t na, const struct tok *b, size_t nb)
{
	/* (na + 1) x (nb + 1) of it in use, cleared alone: the whole is 16 KiB, asked for every catalogue entry */
	bool seen[(MAX_TOKENS + 1) * (MAX_TOKENS + 1)];
	uint8_t queue[(MAX_TOKENS + 1) * (MAX_TOKENS + 1)][2]; /* indices <= MAX_TOKENS fit */
	size_t head = 0, tail = 0, row = nb + 1;
	memset(seen, 0, (na + 1) * row * sizeof(seen[0]));
	seen[0] = true;
	queue[tail][0] = 0;
	queue[tail++][1] = 0;
	while (head < tail) {
		size_t i = queue[head][0], j = queue[head][1];
		head++;
		if (i == na && j == nb) {
			return true;
		}
		size_t next[3][2];
		size_t nn = 0;
		if (i < na && a[i].star) {
			next[nn][0] = i + 1;
			next[nn++][1] = j;
		}
		if (j < nb && b[j].star) {
			next[nn][0] = i;
			next[nn++][1] = j + 1;
		}
		if (i < na && j < nb && set_meets(&a[i].set, &b[j].set) && !(a[i].star && b[j].star)) {
			next[nn][0] = a[i].star ? i : i + 1;
			next[nn++][1] = b[j].star ? j : j + 1;
		}
		for (size_t k = 0; k < nn; k++) {
			size_t ni = next[k][0], nj = next[k][1];
			if (!seen[ni * row + nj]) {
				seen[ni * row + nj] = true;
				queue[tail][0] = (uint8_t)ni;
				queue[tail++][1] = (uint8_t)nj;
			}
		}
	}
	return false;
}

bool
catalog_glob_known(const char *glob)
{
	struct tok g[MAX_TOKENS], p[MAX_TOKENS];
	size_t ng = compile(glob, false, g);
	if (ng == SIZE_MAX) {
		return false;
	}
	/* the catalogue: the metric dictionary but what rules never see (webhook counters, added after them) */
	size_t count;
	const struct metric_def *t = metric_dict_table(&count);
	for (size_t k = 0; k < count; k++) {
		if (t[k].no_rules) {
			continue;
		}
		size_t np = compile(t[k].pattern, true, p);
		if (intersect(g, ng, p, np)) {
			return true;
		}
	}
	return false;
}

bool
catalog_pattern_match(const char *pattern, const char *name)
{
	struct tok p[MAX_TOKENS], s[MAX_TOKENS];
	size_t np = compile(pattern, true, p);
	if (np == SIZE_MAX || strchr(name, '*')) {
		return false;
	}
	size_t ns = compile(name, false, s);
	return ns != SIZE_MAX && intersect(p, np, s, ns);
}

/* Edit operations, for reading the suggestion back out of the table. */
enum {
	OP_NONE,
	OP_SKIP,    /* leave a repeated token behind: no character */
	OP_INSERT,  /* a character the name lacks */
	OP_DELETE,  /* a character of the name the pattern has no room for */
	OP_STAY,    /* a name character taken by a repeated token */
	OP_ADVANCE, /* a name character taken by a single token */
};

/*
 * Insert/delete distance between NAME (length n) and the closest string of
 * TOKS; MODE 0 only appends, 1 also inserts, 2 also deletes. With BUF, that
 * string is written there. Returns FAR when more than 2.
 */
static unsigned
closest(const char *name, size_t n, const struct tok *toks, size_t m, int mode, char *buf, size_t size)
{
	uint8_t d[MAX_PATTERN + 1][MAX_TOKENS + 1];
	uint8_t op[MAX_PATTERN + 1][MAX_TOKENS + 1];
	memset(d, FAR, sizeof(d));
	memset(op, OP_NONE, sizeof(op));
	d[0][0] = 0;
	for (size_t i = 0; i <= n; i++) {
		for (size_t j = 0; j < m; j++) {
			if (d[i][j] == FAR) {
				continue;
			}
			if (!toks[j].star && mode == 0 && i < n) {
				continue;
			}
			unsigned c = d[i][j] + (toks[j].star ? 0u : 1u);
			if (c < d[i][j + 1]) {
				d[i][j + 1] = (uint8_t)c;
				op[i][j + 1] = toks[j].star ? OP_SKIP : OP_INSERT;
			}
		}
		if (i == n) {
			break;
		}
		for (size_t j = 0; j <= m; j++) {
			if (d[i][j] == FAR) {
				continue;
			}
			if (mode == 2 && d[i][j] + 1u < d[i + 1][j]) {
				d[i + 1][j] = (uint8_t)(d[i][j] + 1);
				op[i + 1][j] = OP_DELETE;
			}
			if (j < m) {
				/* a substitution costs more than the limit: suggestions keep every
				 * character the user typed ("temp.soc" -> "temp.soc_c", not "temp.s_c") */
				unsigned c = d[i][j] + (set_has(&toks[j].set, name[i]) ? 0u : 3u);
				size_t nj = toks[j].star ? j : j + 1;
				if (c < d[i + 1][nj]) {
					d[i + 1][nj] = (uint8_t)c;
					op[i + 1][nj] = toks[j].star ? OP_STAY : OP_ADVANCE;
				}
			}
		}
		/* nothing above 2 is a suggestion: keep the numbers small */
		for (size_t j = 0; j <= m; j++) {
			if (d[i + 1][j] > 2) {
				d[i + 1][j] = FAR;
			}
		}
	}
	unsigned dist = d[n][m];
	if (dist > 2 || !buf) {
		return dist > 2 ? FAR : dist;
	}
	/* walk back from (n, m), collecting characters in reverse */
	char rev[MAX_PATTERN + MAX_TOKENS + 1];
	size_t len = 0;
	size_t i = n, j = m;
	while (i > 0 || j > 0) {
		switch (op[i][j]) {
		case OP_SKIP:
			j--;
			break;
		case OP_INSERT:
			j--;
			rev[len++] = set_first(&toks[j].set);
			break;
		case OP_DELETE:
			i--;
			break;
		case OP_STAY:
		case OP_ADVANCE: {
			if (op[i][j] == OP_ADVANCE) {
				j--;
			}
			i--;
			rev[len++] = set_has(&toks[j].set, name[i]) ? name[i] : set_first(&toks[j].set);
			break;
		}
		default:
			return FAR; /* cannot happen: every reached cell has an operation */
		}
	}
	if (len + 1 > size) {
		return FAR;
	}
	for (size_t k = 0; k < len; k++) {
		buf[k] = rev[len - 1 - k];
	}
	buf[len] = '\0';
	return dist;
}

bool
catalog_suggest(const char *name, char *buf, size_t size)
{
	size_t n = strlen(name);
	if (n > MAX_PATTERN || n == 0) {
		return false;
	}
	struct tok toks[MAX_TOKENS];
	size_t count;
	const struct metric_def *t = metric_dict_table(&count);
	/* the least intrusive fix first: "temp.soc" -> "temp.soc_c", not "temp.so_c" */
	for (int mode = 0; mode <= 2; mode++) {
		unsigned best = FAR;
		size_t best_k = 0;
		for (size_t k = 0; k < count; k++) {
			if (t[k].no_rules) {
				continue;
			}
			size_t m = compile(t[k].pattern, true, toks);
			unsigned dist = closest(name, n, toks, m, mode, NULL, 0);
			if (dist < best) {
				best = dist;
				best_k = k;
			}
		}
		if (best != FAR && best != 0 && best < n) {
			size_t m = compile(t[best_k].pattern, true, toks);
			return closest(name, n, toks, m, mode, buf, size) == best;
		}
	}
	return false;
}
