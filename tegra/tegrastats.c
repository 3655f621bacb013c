/*
 * tegrastats line parser, grammar part: the tokens and the metrics they
 * give. The value readers are in tegrastats_lex.c, the names of sensors,
 * engines and rails in tegrastats_names.c, the generic NAME VALUE tokens
 * (engines, power rails) in tegrastats_generic.c.
 *
 * The line is read word by word (words are separated by blanks). A word
 * holding "NAME@<digit or ->" is a temperature; a word that is a known token
 * name (RAM, CPU, GR3D_FREQ, ...) is parsed strictly by its own grammar; any
 * other upper-case NAME is classified by the shape of the following word:
 * `a/b` or `amW/bmW[/cmW]` is a power rail, `off`, `<MHz>`, `X%`, `X%@MHz`,
 * `X%@[..]` or `@[..]` an engine. Whatever fits nothing is skipped and
 * counted. Positions never matter.
 *
 * JetPack 7 forms (docs/metrics.md, "tegrastats token forms"):
 *   NAME amW/bmW/cmW   current, average, maximum: power.NAME.mw, .avg_mw, .max_mw
 *   name@T1C/T2C       current, maximum: temp.name_c, temp_max.name_c
 *   NVENC0, NVJPG1, PVA0_FREQ, ...   engines named as printed, index kept
 *   GR3D_FREQ @[f,f,f] GPC clocks and gpu.freq_mhz, no load
 *   NAME amW           no value taken: skipped and counted as unknown
 *
 * Values that stop short at the end of the line ("VDD_IN 4915mW/") make the
 * line an error, so a truncated paste never yields half a sample.
 *
 * Hot path rules: no allocation, no snprintf/strtod; numbers are read by
 * hand (mantissa / power of ten, correctly rounded for up to 15 digits) and
 * metric names are assembled with memcpy.
 */
#include "tegrastats.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tegrastats_priv.h"

/* ---- memory: RAM, SWAP, IRAM ---- */

enum mem_kind {
	MEM_RAM,
	MEM_SWAP,
	MEM_IRAM
};

/*
 * "(KEY N[xS]UNIT)" starting at *pos, possibly glued to the value before it
 * ("252kB(lfb 252kB)"). The size goes to *ret_kb.
 */
static int
read_group(const struct parser *p, size_t *pos, const char *key, size_t key_len, double *ret_kb)
{
	const char *s = p->s;
	size_t end = p->len;
	size_t i = *pos;
	int r = expect(s, end, &i, LIT("("));
	if (r == V_OK) {
		r = expect(s, end, &i, key, key_len);
	}
	if (r != V_OK) {
		return r;
	}
	if (i == end) {
		return V_SHORT;
	}
	if (!is_blank(s[i])) {
		return V_BAD;
	}
	i = skip_blanks(p, i);
	uint64_t n;
	r = read_uint(s, end, &i, &n);
	if (r == V_OK && i < end && s[i] == 'x') {
		i++;
		r = read_uint(s, end, &i, &n);
	}
	double unit_kb = 0;
	if (r == V_OK) {
		r = read_unit(s, end, &i, &unit_kb);
	}
	if (r == V_OK) {
		r = expect(s, end, &i, LIT(")"));
	}
	if (r == V_OK && !at_word_end(s, end, i)) {
		r = V_BAD;
	}
	if (r == V_OK) {
		*pos = i;
		*ret_kb = (double)n * unit_kb;
	}
	return r;
}

/* NAME used/totalUNIT [(lfb ..)|(cached ..)]; the value starts at POS. */
static int
parse_memory(struct parser *p, size_t pos, size_t *next, enum mem_kind kind)
{
	static const char *const cut_msg[] = {"RAM value cut off", "SWAP value cut off", "IRAM value cut off"};
	static const char *const bad_msg[] = {"bad RAM value", "bad SWAP value", "bad IRAM value"};
	const char *s = p->s;
	size_t end = p->len;
	uint64_t used, total;
	double unit_kb = 0;
	size_t i = pos;
	int r = read_uint(s, end, &i, &used);
	if (r == V_OK) {
		r = expect(s, end, &i, LIT("/"));
	}
	if (r == V_OK) {
		r = read_uint(s, end, &i, &total);
	}
	if (r == V_OK) {
		r = read_unit(s, end, &i, &unit_kb);
	}
	if (r == V_OK && !at_word_end(s, end, i) && s[i] != '(') {
		r = V_BAD;
	}
	if (r != V_OK) {
		return fail_value(p, r, cut_msg[kind], bad_msg[kind], bad_msg[kind]);
	}
	/* the group may be glued to the value or follow after a blank */
	size_t q = skip_blanks(p, i);
	double group_kb = 0;
	bool has_group = false;
	if (q < end && s[q] == '(') {
		i = q;
		if (kind == MEM_SWAP) {
			r = read_group(p, &i, LIT("cached"), &group_kb);
		} else {
			r = read_group(p, &i, LIT("lfb"), &group_kb);
		}
		if (r != V_OK) {
			return fail_value(p, r,
					  kind == MEM_SWAP ? "unterminated (cached ..) group"
							   : "unterminated (lfb ..) group",
					  "bad memory group", "bad memory group");
		}
		has_group = true;
	}
	double used_kb = (double)used * unit_kb;
	double total_kb = (double)total * unit_kb;
	int e;
	switch (kind) {
	case MEM_RAM:
		e = PUT_LIT(p, "ram.used_mb", used_kb / 1024.0);
		if (e == 0) {
			e = PUT_LIT(p, "ram.total_mb", total_kb / 1024.0);
		}
		break;
	case MEM_SWAP:
		e = PUT_LIT(p, "swap.used_mb", used_kb / 1024.0);
		if (e == 0) {
			e = PUT_LIT(p, "swap.total_mb", total_kb / 1024.0);
		}
		if (e == 0 && has_group) {
			e = PUT_LIT(p, "swap.cached_mb", group_kb / 1024.0);
		}
		break;
	default:
		e = PUT_LIT(p, "iram.used_kb", used_kb);
		if (e == 0) {
			e = PUT_LIT(p, "iram.total_kb", total_kb);
		}
		break;
	}
	*next = i;
	return e;
}

/* ---- CPU ---- */

static int
parse_cpu(struct parser *p, size_t pos, size_t *next)
{
	struct cpu_entry cpus[MAX_CPUS];
	unsigned n = 0;
	int r = read_cpu_list(p->s, p->len, &pos, cpus, &n);
	if (r != V_OK) {
		return fail_value(p, r, "unterminated CPU list", "bad CPU list entry", "CPU value out of range");
	}
	p->has_cpu = true;
	p->cpu_online = 0;
	p->cpu_load_sum = 0;
	char buf[NAME_BUF];
	memcpy(buf, "cpu.", 4);
	for (unsigned k = 0; k < n; k++) {
		size_t len = 4 + fmt_uint(buf + 4, k);
		if (put_sfx(p, buf, len, &sfx_online, cpus[k].online ? 1 : 0) < 0) {
			return -1;
		}
		if (!cpus[k].online) {
			continue;
		}
		p->cpu_online++;
		p->cpu_load_sum += cpus[k].load_pct;
		if (put_sfx(p, buf, len, &sfx_load, cpus[k].load_pct) < 0) {
			return -1;
		}
		if (cpus[k].has_freq && put_sfx(p, buf, len, &sfx_freq, cpus[k].freq_mhz) < 0) {
			return -1;
		}
	}
	*next = pos;
	return 0;
}

/* ---- MTS fg X% bg Y%, EDP limit N ---- */

static int
parse_words(struct parser *p, size_t pos, size_t *next, const char *const *keys, unsigned nkeys, double *vals, bool pct,
	    const char *cut_msg, const char *bad_msg)
{
	for (unsigned k = 0; k < nkeys; k++) {
		size_t ws, we;
		if (!take_word(p, &pos, &ws, &we)) {
			return fail(p, cut_msg);
		}
		if (!word_is(p->s + ws, we - ws, keys[k], strlen(keys[k]))) {
			return fail(p, we == p->len ? cut_msg : bad_msg);
		}
		if (!take_word(p, &pos, &ws, &we)) {
			return fail(p, cut_msg);
		}
		size_t i = ws;
		int r = pct ? read_pct(p->s, we, &i, &vals[k]) : read_freq(p->s, we, &i, &vals[k]);
		if (r == V_OK && i != we) {
			r = V_BAD;
		}
		if (r == V_SHORT && we != p->len) {
			r = V_BAD;
		}
		if (r != V_OK) {
			return fail_value(p, r, cut_msg, bad_msg, "value out of range");
		}
	}
	*next = pos;
	return 0;
}

static int
parse_mts(struct parser *p, size_t pos, size_t *next)
{
	static const char *const keys[] = {"fg", "bg"};
	double v[2];
	if (parse_words(p, pos, next, keys, 2, v, true, "MTS token cut off", "bad MTS token") < 0) {
		return -1;
	}
	if (PUT_LIT(p, "mts.fg_pct", v[0]) < 0) {
		return -1;
	}
	return PUT_LIT(p, "mts.bg_pct", v[1]);
}

static int
parse_edp(struct parser *p, size_t pos, size_t *next)
{
	static const char *const keys[] = {"limit"};
	double v;
	if (parse_words(p, pos, next, keys, 1, &v, false, "EDP token cut off", "bad EDP token") < 0) {
		return -1;
	}
	return PUT_LIT(p, "cpu.edp_limit_mhz", v);
}

/* ---- temperatures: NAME@T C, NAME@T1C/T2C ---- */

/*
 * JetPack 7's "T1C/T2C" is the current reading and the highest since
 * tegrastats started. The highest goes to its own prefix, temp_max., so
 * that nothing that takes every temp.*_c as a current temperature (the
 * hottest sensor, thermal throttle, rules on temp.*) ever reads it. Each
 * value is absent when it is the -256 "no reading" mark. A pair whose
 * current is above its maximum is emitted as printed: the two may be read
 * at different moments, and the current value is the same field as on
 * every other JetPack.
 */
static int
parse_temp(struct parser *p, size_t ws, size_t at, size_t we)
{
	struct temp_values tv;
	int r = read_temp(p->s, we, at + 1, &tv);
	if (r == V_SHORT && we != p->len) {
		r = V_BAD;
	}
	if (r != V_OK) {
		return fail_value(p, r, "temperature cut off", "bad temperature", "temperature out of range");
	}
	char buf[NAME_BUF];
	memcpy(buf, "temp.", 5);
	size_t n = tegra_sensor_name(p->s + ws, at - ws, buf + 5, MAX_NAME_LEN + 1);
	if (n == 0 || tegra_sensor_is_placeholder(buf + 5)) {
		return 0; /* absent means absent */
	}
	if (tv.c[0] != TEMP_OFFLINE_C && put_sfx(p, buf, 5 + n, &sfx_c, tv.c[0]) < 0) {
		return -1;
	}
	if (tv.n == 2 && tv.c[1] != TEMP_OFFLINE_C) {
		char max_buf[NAME_BUF];
		memcpy(max_buf, "temp_max.", 9);
		memcpy(max_buf + 9, buf + 5, n);
		return put_sfx(p, max_buf, 9 + n, &sfx_c, tv.c[1]);
	}
	return 0;
}

/* ---- GPU, EMC ---- */

static int
parse_gpu(struct parser *p, size_t pos, size_t *next, bool second_gpc)
{
	struct load_freq lf;
	int r = ts_read_load_freq(p->s, p->len, &pos, &lf);
	if (r != V_OK) {
		return fail_value(p, r, "GR3D_FREQ value cut off", "bad GR3D_FREQ value",
				  "GR3D_FREQ value out of range");
	}
	p->gpu.seen = true;
	if (!second_gpc) {
		p->gpu.gr3d = lf;
	} else if (lf.has_freq) {
		/* a GR3D2 percentage never replaces the GR3D_FREQ one */
		p->gpu.has_gr3d2_freq = true;
		p->gpu.gr3d2_freq_mhz = lf.freq_max_mhz;
	}
	*next = pos;
	return 0;
}

static int
parse_emc(struct parser *p, size_t pos, size_t *next)
{
	struct load_freq lf;
	int r = ts_read_load_freq(p->s, p->len, &pos, &lf);
	if (r != V_OK) {
		return fail_value(p, r, "EMC_FREQ value cut off", "bad EMC_FREQ value", "EMC_FREQ value out of range");
	}
	if (lf.has_load && PUT_LIT(p, "emc.load_pct", lf.load_pct) < 0) {
		return -1;
	}
	if (lf.has_freq && PUT_LIT(p, "emc.freq_mhz", lf.freq_max_mhz) < 0) {
		return -1;
	}
	*next = pos;
	return 0;
}

/*
 * GPU metrics once the whole line is read, since GR3D_FREQ and GR3D2_FREQ
 * may come in any order. gpu.freq_mhz is the highest GPC, and only when the
 * first GPC's clock is known (non-root "GR3D_FREQ 0% GR3D2_FREQ 0%@0" gives
 * gpc.1 alone: its 0 says nothing about GPC 0).
 */
static int
finish_gpu(struct parser *p)
{
	const struct gpu_state *g = &p->gpu;
	const struct load_freq *lf = &g->gr3d;
	if (!g->seen) {
		return 0;
	}
	if (lf->has_load && PUT_LIT(p, "gpu.load_pct", lf->load_pct) < 0) {
		return -1;
	}
	double max_mhz = lf->freq_max_mhz;
	unsigned ngpc = 0;
	if (lf->is_list) {
		char buf[NAME_BUF];
		memcpy(buf, "gpu.gpc.", 8);
		for (unsigned k = 0; k < lf->nfreq; k++) {
			size_t len = 8 + fmt_uint(buf + 8, k);
			if (put_sfx(p, buf, len, &sfx_freq, lf->freq_mhz[k]) < 0) {
				return -1;
			}
		}
		ngpc = lf->nfreq;
	} else if (lf->has_freq && g->has_gr3d2_freq) {
		if (PUT_LIT(p, "gpu.gpc.0.freq_mhz", lf->freq_max_mhz) < 0) {
			return -1;
		}
		ngpc = 1;
	}
	if (g->has_gr3d2_freq && ngpc < 2) {
		if (PUT_LIT(p, "gpu.gpc.1.freq_mhz", g->gr3d2_freq_mhz) < 0) {
			return -1;
		}
		if (g->gr3d2_freq_mhz > max_mhz) {
			max_mhz = g->gr3d2_freq_mhz;
		}
	}
	if (lf->has_freq && PUT_LIT(p, "gpu.freq_mhz", max_mhz) < 0) {
		return -1;
	}
	return 0;
}

/*
 * A name of LEN bytes starting with a letter, whose characters' classes
 * (SEEN, or-ed while the word was scanned) are all in ALLOWED.
 */
static bool
name_ok(const char *s, size_t len, unsigned seen, unsigned allowed)
{
	return len > 0 && (class_of(s[0]) & C_ALPHA) && !(seen & ~allowed);
}

/* A known token name: dispatched before the generic rules. */
enum known {
	K_NONE,
	K_RAM,
	K_SWAP,
	K_IRAM,
	K_CPU,
	K_CPU_OLD,
	K_MTS,
	K_EDP,
	K_GR3D,
	K_GR3D2,
	K_EMC,
};

static enum known
known_token(const char *w, size_t wl)
{
	switch (w[0]) {
	case 'R':
		return word_is(w, wl, LIT("RAM")) ? K_RAM : K_NONE;
	case 'S':
		return word_is(w, wl, LIT("SWAP")) ? K_SWAP : K_NONE;
	case 'I':
		return word_is(w, wl, LIT("IRAM")) ? K_IRAM : K_NONE;
	case 'C':
		return word_is(w, wl, LIT("CPU")) ? K_CPU : K_NONE;
	case 'c':
		return word_is(w, wl, LIT("cpu")) ? K_CPU_OLD : K_NONE;
	case 'M':
		return word_is(w, wl, LIT("MTS")) ? K_MTS : K_NONE;
	case 'E':
		if (word_is(w, wl, LIT("EMC_FREQ")) || word_is(w, wl, LIT("EMC"))) {
			return K_EMC;
		}
		return word_is(w, wl, LIT("EDP")) ? K_EDP : K_NONE;
	case 'G':
		if (word_is(w, wl, LIT("GR3D_FREQ")) || word_is(w, wl, LIT("GR3D"))) {
			return K_GR3D;
		}
		return word_is(w, wl, LIT("GR3D2_FREQ")) ? K_GR3D2 : K_NONE;
	default:
		return K_NONE;
	}
}

static int
known_result(int r)
{
	return r < 0 ? TOK_ERROR : TOK_OK;
}

/*
 * The word [ws, we) with its first '@' at AT (or AT == we); SEEN is the
 * classes of the characters before AT.
 */
static int
parse_token(struct parser *p, size_t ws, size_t we, size_t at, unsigned seen, size_t *next)
{
	const char *s = p->s;
	const char *w = s + ws;
	size_t wl = we - ws;
	if (at < we) {
		if (at - ws > MAX_NAME_LEN || !name_ok(w, at - ws, seen, C_ALPHA | C_DIGIT | C_UNDER | C_DASH)) {
			return TOK_UNKNOWN;
		}
		if (at + 1 == we) {
			return fail(p, "temperature without value");
		}
		if (!text_is_digit(s[at + 1]) && s[at + 1] != '-') {
			return TOK_UNKNOWN;
		}
		return known_result(parse_temp(p, ws, at, we));
	}
	if (!name_ok(w, wl, seen, C_ALPHA | C_DIGIT | C_UNDER)) {
		return TOK_UNKNOWN_WORD;
	}
	size_t vs = skip_blanks(p, we);
	bool has_value = vs < p->len;
	enum known k = known_token(w, wl);
	if (k == K_CPU || k == K_CPU_OLD) {
		if (has_value && s[vs] == '[') {
			return known_result(parse_cpu(p, vs, next));
		}
		if (k == K_CPU_OLD) {
			return has_value ? TOK_UNKNOWN_WORD : fail(p, "CPU list missing");
		}
		/* "CPU 466/466" is a rail on AGX Xavier: generic below */
		k = K_NONE;
	} else if (!is_upper(w[0])) {
		return TOK_UNKNOWN_WORD;
	}
	if (!has_value) {
		return fail_named(p, ws, "value missing (line cut off?)", w, wl);
	}
	switch (k) {
	case K_RAM:
		return known_result(parse_memory(p, vs, next, MEM_RAM));
	case K_SWAP:
		return known_result(parse_memory(p, vs, next, MEM_SWAP));
	case K_IRAM:
		return known_result(parse_memory(p, vs, next, MEM_IRAM));
	case K_MTS:
		return known_result(parse_mts(p, we, next));
	case K_EDP:
		return known_result(parse_edp(p, we, next));
	case K_GR3D:
		return known_result(parse_gpu(p, vs, next, false));
	case K_GR3D2:
		return known_result(parse_gpu(p, vs, next, true));
	case K_EMC:
		return known_result(parse_emc(p, vs, next));
	default:
		break;
	}
	if (wl > MAX_NAME_LEN) {
		return TOK_UNKNOWN;
	}
	return ts_parse_generic(p, ws, we, vs, next);
}

/* ---- entry point ---- */

static void
copy_msg(char *dst, size_t size, size_t *at, const char *src, size_t len)
{
	size_t room = size - 1 - *at;
	if (len > room) {
		len = room;
	}
	memcpy(dst + *at, src, len);
	*at += len;
	dst[*at] = '\0';
}

static void
fill_error(const struct parser *p, struct parse_error *err)
{
	size_t at = 0;
	err->line = 0;
	err->column = (int)(p->err_pos < (size_t)INT32_MAX ? p->err_pos + 1 : INT32_MAX);
	err->msg[0] = '\0';
	copy_msg(err->msg, sizeof(err->msg), &at, p->err_msg, strlen(p->err_msg));
	if (p->err_name) {
		copy_msg(err->msg, sizeof(err->msg), &at, LIT(": "));
		copy_msg(err->msg, sizeof(err->msg), &at, p->err_name, p->err_name_len);
	}
}

int
tegrastats_parse_line(const char *line, size_t len, struct metric_set *out, struct tegrastats_info *info,
		      struct parse_error *err)
{
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || is_blank(line[len - 1]))) {
		len--;
	}
	struct parser p = {.s = line, .len = len, .out = out};
	const char *nul = memchr(line, '\0', len);
	if (nul) {
		/* a torn write: the tokens around the NUL would be lost without a word */
		fail_named(&p, (size_t)(nul - line), "NUL byte in the line", NULL, 0);
	}

	struct tegrastats_stamp stamp = {.present = false};
	size_t pos = skip_blanks(&p, 0);
	if (!p.failed && pos < len && text_is_digit(line[pos])) {
		p.tok = pos;
		ts_parse_stamp(&p, pos, &stamp, &pos);
	}
	while (!p.failed) {
		pos = skip_blanks(&p, pos);
		if (pos >= len) {
			break;
		}
		/* one pass finds the word's first '@' (or its end), then its end */
		size_t at = pos;
		unsigned seen = 0;
		while (at < len) {
			unsigned c = class_of(line[at]);
			if (c & (C_BLANK | C_AT)) {
				break;
			}
			seen |= c;
			at++;
		}
		size_t we = at;
		if (at < len && line[at] == '@') {
			while (we < len && !is_blank(line[we])) {
				we++;
			}
		}
		size_t next = we;
		p.tok = pos;
		int r = parse_token(&p, pos, we, at, seen, &next);
		switch (r) {
		case TOK_OK:
			p.tokens++;
			p.in_unknown = false;
			pos = next;
			break;
		case TOK_UNKNOWN_WORD:
			/* a stray word continues the unknown token before it */
			if (!p.in_unknown) {
				p.unknown++;
			}
			p.in_unknown = true;
			pos = we;
			break;
		case TOK_UNKNOWN_PAIR:
			p.unknown++;
			p.in_unknown = false;
			pos = next;
			break;
		case TOK_UNKNOWN:
			p.unknown++;
			p.in_unknown = true;
			pos = we;
			break;
		default:
			break;
		}
	}
	if (!p.failed && p.has_cpu && p.cpu_online > 0) {
		PUT_LIT(&p, "cpu.load_pct", p.cpu_load_sum / p.cpu_online);
	}
	if (!p.failed) {
		finish_gpu(&p);
	}
	if (!p.failed && p.tokens == 0) {
		fail_named(&p, 0, len == 0 ? "empty line" : "no tegrastats token in line", NULL, 0);
	}
	if (p.failed) {
		metric_set_clear(out);
		fill_error(&p, err);
		return -EINVAL;
	}
	info->stamp = stamp;
	info->tokens = p.tokens;
	info->unknown_tokens = p.unknown;
	return 0;
}

int
tegrastats_parse_record(const char *line, size_t len, struct metric_set *out, struct tegrastats_info *info,
			struct parse_error *err)
{
	if (len == 0 || line[len - 1] != '\n') {
		/* the writer stopped mid-line: what is there may parse, but it is not the whole line */
		metric_set_clear(out);
		static const char msg[] = "line cut off (no newline at its end)";
		*err = (struct parse_error){.column = (int)(len < (size_t)INT32_MAX ? len + 1 : INT32_MAX)};
		memcpy(err->msg, msg, sizeof(msg));
		return -EINVAL;
	}
	return tegrastats_parse_line(line, len, out, info, err);
}
