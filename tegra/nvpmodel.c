/*
 * nvpmodel.conf and status parsers. Pure: no I/O.
 *
 * The conf is line based: "< KEYWORD KEY=VALUE ... >" opens a section;
 * POWER_MODEL sections hold "PARAM ARG VALUE" limit lines, PARAM sections
 * define where those limits are written (skipped here), PM_CONFIG names
 * the default mode. '#' starts a comment anywhere on a line, so
 * "CPU_A57 MAX_FREQ -1 # 1479000[Hz]" is a plain limit line.
 */
#include "nvpmodel.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/text.h"

#define LINE_MAX_LEN 512
#define TOKENS_MAX 8

enum section {
	SECTION_NONE,
	SECTION_MODE,  /* POWER_MODEL */
	SECTION_OTHER, /* PARAM, PM_CONFIG, anything unknown */
};

struct token {
	const char *s;
	size_t len;
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool
token_is(const struct token *t, const char *word)
{
	size_t n = strlen(word);
	return t->len == n && memcmp(t->s, word, n) == 0;
}

static bool
token_has_prefix(const struct token *t, const char *prefix)
{
	return text_starts(t->s, t->len, prefix, strlen(prefix));
}

/* Splits S (LEN bytes) at blanks into at most TOKENS_MAX tokens; returns the count. */
static int
split(const char *s, size_t len, struct token *tok)
{
	int n = 0;
	size_t i = 0;
	while (i < len && n < TOKENS_MAX) {
		while (i < len && is_space(s[i])) {
			i++;
		}
		if (i == len) {
			break;
		}
		size_t start = i;
		while (i < len && !is_space(s[i])) {
			i++;
		}
		tok[n].s = s + start;
		tok[n].len = i - start;
		n++;
	}
	return n;
}

/* Non-negative decimal that fits an int. */
static bool
parse_id(const char *s, size_t len, int *out)
{
	if (len == 0 || len > 9) {
		return false;
	}
	int v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!text_is_digit(s[i])) {
			return false;
		}
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* A limit value: -1 (no cap) gives 0; otherwise a non-negative decimal. */
static bool
parse_limit(const struct token *t, uint64_t *out)
{
	if (token_is(t, "-1")) {
		*out = 0;
		return true;
	}
	if (t->len == 0 || t->len > 19) {
		return false;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < t->len; i++) {
		if (!text_is_digit(t->s[i])) {
			return false;
		}
		v = v * 10 + (uint64_t)(t->s[i] - '0');
	}
	*out = v;
	return true;
}

/* Finds KEY=VALUE among the tokens of a section header. */
static bool
find_attr(const struct token *tok, int n, const char *key, struct token *value)
{
	size_t klen = strlen(key);
	for (int i = 1; i < n; i++) {
		if (tok[i].len > klen && memcmp(tok[i].s, key, klen) == 0 && tok[i].s[klen] == '=') {
			value->s = tok[i].s + klen + 1;
			value->len = tok[i].len - klen - 1;
			return true;
		}
	}
	return false;
}

struct parser {
	struct nvpmodel_conf conf;
	enum section section;
	struct nvpmodel_mode *mode; /* NULL inside a POWER_MODEL past the capacity */
	bool cpu_uncapped;          /* a CPU cluster of the current mode has MAX_FREQ -1 */
	struct token default_name;  /* PM_CONFIG DEFAULT given as a name */
	bool have_mode;
};

static void
end_mode(struct parser *ps)
{
	if (ps->mode && ps->cpu_uncapped) {
		ps->mode->cpu_max_khz = 0;
	}
	ps->mode = NULL;
	ps->cpu_uncapped = false;
}

/* "< KEYWORD ATTR=V ... >": TEXT is what is inside the brackets. */
static int
section_line(struct parser *ps, const char *text, size_t len)
{
	struct token tok[TOKENS_MAX];
	int n = split(text, len, tok);
	end_mode(ps);
	ps->section = SECTION_OTHER;
	if (n == 0) {
		return -EINVAL;
	}
	struct token v;
	if (token_is(&tok[0], "POWER_MODEL")) {
		int id;
		if (!find_attr(tok, n, "ID", &v) || !parse_id(v.s, v.len, &id)) {
			return -EINVAL;
		}
		ps->section = SECTION_MODE;
		ps->have_mode = true;
		if (ps->conf.mode_count == NVPMODEL_MODES_MAX) {
			return 0; /* more modes than we keep: the rest are skipped */
		}
		struct nvpmodel_mode *m = &ps->conf.modes[ps->conf.mode_count++];
		memset(m, 0, sizeof(*m));
		m->id = id;
		m->cores_online = -1;
		if (find_attr(tok, n, "NAME", &v)) {
			size_t l = v.len < NVPMODEL_NAME_MAX - 1 ? v.len : NVPMODEL_NAME_MAX - 1;
			memcpy(m->name, v.s, l);
			m->name[l] = '\0';
		}
		ps->mode = m;
	} else if (token_is(&tok[0], "PM_CONFIG") || token_is(&tok[0], "PM_STATUS")) {
		/* PM_STATUS is the mid-2017 spelling of the same section */
		if (find_attr(tok, n, "DEFAULT", &v)) {
			int id;
			if (parse_id(v.s, v.len, &id)) {
				ps->conf.default_id = id;
			} else {
				ps->default_name = v;
			}
		}
	}
	return 0;
}

/* "PARAM ARG VALUE" inside a POWER_MODEL. Unknown lines are ignored. */
static void
limit_line(struct parser *ps, const char *text, size_t len)
{
	struct token tok[TOKENS_MAX];
	int n = split(text, len, tok);
	struct nvpmodel_mode *m = ps->mode;
	if (!m || n != 3) {
		return;
	}
	const struct token *param = &tok[0];
	const struct token *arg = &tok[1];
	uint64_t v;
	if (token_is(param, "CPU_ONLINE")) {
		if (token_has_prefix(arg, "CORE_") && token_is(&tok[2], "1")) {
			m->cores_online = m->cores_online < 0 ? 1 : m->cores_online + 1;
		} else if (token_has_prefix(arg, "CORE_") && token_is(&tok[2], "0") && m->cores_online < 0) {
			m->cores_online = 0;
		}
		return;
	}
	/* JetPack 6 files reportedly also spell the EMC cap MAX_FREQ_KNEXT */
	if (!token_is(arg, "MAX_FREQ") && !token_is(arg, "MAX_FREQ_KNEXT")) {
		return;
	}
	if (!parse_limit(&tok[2], &v)) {
		return;
	}
	if (token_is(param, "GPU")) {
		m->gpu_max_hz = v;
	} else if (token_is(param, "EMC")) {
		m->emc_max_hz = v;
	} else if (token_has_prefix(param, "CPU_")) {
		/* CPU_A57, CPU_DENVER_1, CPU_A78_0 ...: one line per cluster */
		if (v == 0) {
			ps->cpu_uncapped = true;
		} else if (v > m->cpu_max_khz) {
			m->cpu_max_khz = v;
		}
	}
}

int
nvpmodel_parse_conf(const char *text, struct nvpmodel_conf *out)
{
	if (!text || !out) {
		return -EINVAL;
	}
	static const struct parser zero;
	struct parser ps = zero;
	ps.conf.default_id = -1;
	ps.section = SECTION_NONE;

	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *next = nl ? nl + 1 : p + len;
		const char *hash = memchr(p, '#', len);
		if (hash) {
			len = (size_t)(hash - p);
		}
		while (len > 0 && is_space(*p)) {
			p++;
			len--;
		}
		while (len > 0 && is_space(p[len - 1])) {
			len--;
		}
		if (len > LINE_MAX_LEN) {
			return -EINVAL;
		}
		if (len > 0 && p[0] == '<') {
			if (p[len - 1] != '>') {
				return -EINVAL;
			}
			int err = section_line(&ps, p + 1, len - 2);
			if (err < 0) {
				return err;
			}
		} else if (len > 0 && ps.section == SECTION_MODE) {
			limit_line(&ps, p, len);
		}
		p = next;
	}
	end_mode(&ps);
	if (!ps.have_mode) {
		return -EINVAL;
	}
	if (ps.default_name.s) {
		for (int i = 0; i < ps.conf.mode_count; i++) {
			const char *name = ps.conf.modes[i].name;
			if (strlen(name) == ps.default_name.len &&
			    memcmp(name, ps.default_name.s, ps.default_name.len) == 0) {
				ps.conf.default_id = ps.conf.modes[i].id;
			}
		}
	}
	*out = ps.conf;
	return 0;
}

int
nvpmodel_parse_status(const char *text, int *id)
{
	if (!text || !id) {
		return -EINVAL;
	}
	/* "pmode:0002", maybe followed by " fmode:..." or a second line */
	for (const char *p = text; (p = strstr(p, "pmode:")) != NULL; p += 6) {
		if (p != text && !is_space(p[-1]) && p[-1] != '\n') {
			continue;
		}
		const char *d = p + 6;
		size_t len = 0;
		while (text_is_digit(d[len])) {
			len++;
		}
		char after = d[len];
		if (!is_space(after) && after != '\n' && after != '\0') {
			return -EINVAL;
		}
		int v;
		if (!parse_id(d, len, &v)) {
			return -EINVAL;
		}
		*id = v;
		return 0;
	}
	return -EINVAL;
}

const struct nvpmodel_mode *
nvpmodel_find(const struct nvpmodel_conf *conf, int id)
{
	for (int i = 0; i < conf->mode_count; i++) {
		if (conf->modes[i].id == id) {
			return &conf->modes[i];
		}
	}
	return NULL;
}

/* ---- the clocks against a mode ------------------------------------------------ */

/* sysfs rounds a written ceiling to a clock step: 612000000 may read 624750000 */
#define CEILING_TOLERANCE 0.03

enum part {
	PART_GPU,
	PART_CPU,
	PART_COUNT
};

enum agreement {
	UNKNOWN,
	AGREE,
	ABOVE,
	BELOW
};

static const char *const part_names[PART_COUNT] = {"GPU", "CPU"};

/* Mode M's ceiling of P in MHz: its cap, or the hardware's where it sets none; false when unknown. */
static bool
mode_ceiling(const struct nvpmodel_mode *m, enum part p, const struct nvpmodel_clocks *now, double *mhz)
{
	uint64_t cap = p == PART_GPU ? m->gpu_max_hz : m->cpu_max_khz;
	if (cap) {
		/* the numbers nvpmodel writes: devfreq's unit (Hz, kHz on Thor) and cpufreq's kHz */
		double gpu_unit = now->gpu_mhz_per_unit > 0 ? now->gpu_mhz_per_unit : 1e-6;
		*mhz = (double)cap * (p == PART_GPU ? gpu_unit : 1e-3);
		return true;
	}
	*mhz = p == PART_GPU ? now->gpu_hw_max_mhz : now->cpu_hw_max_mhz;
	return p == PART_GPU ? now->gpu_hw_ok : now->cpu_hw_ok;
}

static bool
read_ceiling(const struct nvpmodel_clocks *now, enum part p, double *mhz)
{
	*mhz = p == PART_GPU ? now->gpu_max_mhz : now->cpu_max_mhz;
	return p == PART_GPU ? now->gpu_ok : now->cpu_ok;
}

static enum agreement
compare(const struct nvpmodel_mode *m, enum part p, const struct nvpmodel_clocks *now)
{
	double want, got;
	if (!mode_ceiling(m, p, now, &want) || !read_ceiling(now, p, &got) || want <= 0) {
		return UNKNOWN;
	}
	if (got > want * (1 + CEILING_TOLERANCE)) {
		return ABOVE;
	}
	return got < want * (1 - CEILING_TOLERANCE) ? BELOW : AGREE;
}

/* Every ceiling read agrees with M's, and at least one was compared. */
static bool
all_agree(const struct nvpmodel_mode *m, const struct nvpmodel_clocks *now)
{
	int agreed = 0;
	for (int p = 0; p < PART_COUNT; p++) {
		double got;
		if (!read_ceiling(now, (enum part)p, &got)) {
			continue;
		}
		if (compare(m, (enum part)p, now) != AGREE) {
			return false;
		}
		agreed++;
	}
	return agreed > 0;
}

/* "15W (id 0)", or "id 0" for a mode without a name. */
static void
add_mode(struct buf *b, const struct nvpmodel_mode *m)
{
	if (m->name[0]) {
		buf_addf(b, "%s (id %d)", m->name, m->id);
	} else {
		buf_addf(b, "id %d", m->id);
	}
}

static void
describe(const struct nvpmodel_mode *m, const struct nvpmodel_mode *other, const enum agreement *a,
	 const struct nvpmodel_clocks *now, char *why, size_t size)
{
	struct buf b;
	buf_init(&b);
	buf_adds(&b, "nvpmodel's status says ");
	add_mode(&b, m);
	if (other) {
		buf_adds(&b, " but the clocks run under the ceilings of ");
		add_mode(&b, other);
	} else {
		buf_adds(&b, " but the clocks run above its ceilings");
	}
	const char *sep = ": ";
	for (int p = 0; p < PART_COUNT; p++) {
		double got, want;
		if (a[p] == ABOVE || a[p] == BELOW) {
			read_ceiling(now, (enum part)p, &got);
			mode_ceiling(m, (enum part)p, now, &want);
			buf_addf(&b, "%s%s %g MHz (%s: %g)", sep, part_names[p], got, m->name[0] ? m->name : "its",
				 want);
			sep = ", ";
		}
	}
	buf_addf(&b, "; nvpmodel may have failed to apply it at boot ('sudo nvpmodel -m %d' applies it again)", m->id);
	snprintf(why, size, "%s", b.buf);
	buf_free(&b);
}

int
nvpmodel_check_clocks(const struct nvpmodel_conf *conf, int id, const struct nvpmodel_clocks *now,
		      struct nvpmodel_verdict *out)
{
	const struct nvpmodel_mode *m = nvpmodel_find(conf, id);
	if (!m) {
		return -ENOENT;
	}
	enum agreement a[PART_COUNT];
	bool compared = false, above = false, below = false;
	for (int p = 0; p < PART_COUNT; p++) {
		a[p] = compare(m, (enum part)p, now);
		compared = compared || a[p] != UNKNOWN;
		above = above || a[p] == ABOVE;
		below = below || a[p] == BELOW;
	}
	if (!compared) {
		return -ENODATA;
	}
	const struct nvpmodel_mode *other = NULL;
	for (int i = 0; i < conf->mode_count && !other && (above || below); i++) {
		if (conf->modes[i].id != id && all_agree(&conf->modes[i], now)) {
			other = &conf->modes[i];
		}
	}
	struct nvpmodel_verdict v = {.mismatch = above || (below && other), .other_id = other ? other->id : -1};
	if (v.mismatch) {
		describe(m, other, a, now, v.why, sizeof(v.why));
	}
	*out = v;
	return 0;
}
