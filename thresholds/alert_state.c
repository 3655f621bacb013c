/*
 * The alert state file: the pending and firing alerts, one per line, so
 * an alert that fired before a restart still gets its resolve (with its
 * original starts_at) after it.
 *
 *   # tegrawatch alert state 1
 *   FINGERPRINT KIND RULE METRIC STATE SEVERITY SINCE_MS STARTS_AT_MS LAST_NOTIFY_MS VALUE THRESHOLD
 *
 * KIND is value|absent, STATE pending|firing, SEVERITY warning|critical.
 * Fields are separated by one space; bytes <= 0x20, '%' and 0x7f inside a
 * field are written as %XX. SINCE_MS is when a pending condition began
 * (changes/increases rules: the last change). Written whole, mode 0600,
 * through core/atomic_file.h.
 */
#include "engine_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/readfile.h"

#define STATE_HEADER "# tegrawatch alert state 1"
#define STATE_LINE_MAX 1024
#define STATE_FIELDS 11

static void
put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c == '%' || c == 0x7f) {
			fprintf(f, "%%%02X", c);
		} else {
			fputc(c, f);
		}
	}
}

static void
put_number(FILE *f, double v)
{
	if (isnan(v)) {
		fputs("nan", f);
	} else {
		fprintf(f, "%.17g", v);
	}
}

static void
write_alert(FILE *f, const struct engine *e, const struct rule *r, const struct alert *a, const char *metric,
	    const char *fp, bool absent, int64_t since_ms, double value)
{
	if (a->state == ALERT_INACTIVE) {
		return;
	}
	fprintf(f, "%s %s ", fp, absent ? "absent" : "value");
	put_escaped(f, r->name);
	fputc(' ', f);
	put_escaped(f, metric);
	fprintf(f, " %s %s %lld %lld %lld ", a->state == ALERT_FIRING ? "firing" : "pending",
		severity_name(a->severity), (long long)engine_wall_ms(e, since_ms), (long long)engine_starts_at(e, a),
		(long long)engine_wall_ms(e, a->last_notify_ms));
	put_number(f, value);
	fputc(' ', f);
	put_number(f, a->threshold);
	fputc('\n', f);
}

static void
write_all(FILE *f, const struct engine *e)
{
	fputs(STATE_HEADER "\n", f);
	fputs("# fingerprint kind rule metric state severity since_ms starts_at_ms last_notify_ms value threshold\n",
	      f);
	for (size_t i = 0; i < e->rs_count; i++) {
		const struct rule_state *rs = &e->rs[i];
		const struct rule *r = rs->rule;
		bool changes = r->op == RULE_CHANGES || r->op == RULE_INCREASES;

		for (size_t k = 0; k < rs->count; k++) {
			const struct instance *in = &rs->inst[k];

			write_alert(f, e, r, &in->value, in->metric, in->fp_value, false,
				    changes ? in->last_change_ms : in->value.since_ms, in->last_value);
			write_alert(f, e, r, &in->absent, in->metric, in->fp_absent, true, in->absent.since_ms, NAN);
		}
		write_alert(f, e, r, &rs->pattern_absent, r->metric, rs->fp_pattern, true, rs->pattern_absent.since_ms,
			    NAN);
	}
}

int
engine_save_state(const struct engine *engine, const char *path)
{
	struct atomic_file *af;
	int r = atomic_file_create(path, 0600, &af);
	if (r < 0) {
		return r;
	}
	write_all(atomic_file_stream(af), engine);
	return atomic_file_commit(af);
}

/* ---- loading ----------------------------------------------------------- */

static int
hexval(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	return -1;
}

/* Decodes %XX in place; false on a bad escape or an empty field. */
static bool
unescape(char *s)
{
	char *w = s;

	if (!*s) {
		return false;
	}
	for (char *r = s; *r; r++) {
		if (*r == '%') {
			int hi = hexval(r[1]), lo = hi >= 0 ? hexval(r[2]) : -1;
			if (lo < 0 || (hi == 0 && lo == 0)) {
				return false;
			}
			*w++ = (char)(hi * 16 + lo);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	return true;
}

static bool
parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end) {
		return false;
	}
	*out = v;
	return true;
}

static bool
parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE || end == s || *end) {
		return false;
	}
	*out = v;
	return true;
}

struct saved {
	char *rule;
	char *metric;
	bool absent;
	bool firing;
	enum severity severity;
	int64_t since_ms;
	int64_t starts_at_ms;
	int64_t last_notify_ms;
	double value;
	double threshold;
};

/* Splits and decodes one line; returns NULL or the reason it is bad. */
static const char *
parse_line(char *line, struct saved *sv)
{
	char *field[STATE_FIELDS];
	size_t n = 0;
	char *p = line;

	for (;;) {
		char *sp = strchr(p, ' ');

		if (n == STATE_FIELDS) {
			return "too many fields";
		}
		field[n++] = p;
		if (!sp) {
			break;
		}
		*sp = '\0';
		p = sp + 1;
	}
	if (n != STATE_FIELDS) {
		return "too few fields";
	}
	for (size_t i = 0; i < n; i++) {
		if (!unescape(field[i])) {
			return "empty field or bad %XX escape";
		}
	}
	sv->rule = field[2];
	sv->metric = field[3];
	if (strcmp(field[1], "value") == 0) {
		sv->absent = false;
	} else if (strcmp(field[1], "absent") == 0) {
		sv->absent = true;
	} else {
		return "kind is not value or absent";
	}
	if (strcmp(field[4], "firing") == 0) {
		sv->firing = true;
	} else if (strcmp(field[4], "pending") == 0 && !sv->absent) {
		sv->firing = false;
	} else {
		return "state is not firing or pending";
	}
	if (strcmp(field[5], "warning") == 0) {
		sv->severity = SEVERITY_WARNING;
	} else if (strcmp(field[5], "critical") == 0) {
		sv->severity = SEVERITY_CRITICAL;
	} else {
		return "severity is not warning or critical";
	}
	if (!parse_i64(field[6], &sv->since_ms) || !parse_i64(field[7], &sv->starts_at_ms) ||
	    !parse_i64(field[8], &sv->last_notify_ms)) {
		return "bad time";
	}
	if (!parse_double(field[9], &sv->value) || !parse_double(field[10], &sv->threshold)) {
		return "bad number";
	}
	return NULL;
}

static void
restore_alert(struct alert *a, const struct saved *sv)
{
	a->state = sv->firing ? ALERT_FIRING : ALERT_PENDING;
	a->severity = sv->severity;
	a->since_ms = sv->since_ms;
	a->starts_at_ms = sv->firing ? sv->starts_at_ms : 0;
	/* restored before the first sample, whose wall time starts the timeline: no offset yet */
	a->starts_wall_ms = a->starts_at_ms;
	a->starts_span_ms = 0;
	a->last_notify_ms = sv->last_notify_ms;
	a->threshold = sv->threshold;
}

/* Applies one saved alert; returns NULL or why it was refused. */
static const char *
apply(struct engine *e, const struct saved *sv)
{
	struct rule_state *rs = engine_find_rule(e, sv->rule);
	struct instance *in;
	bool changes;

	if (!rs) {
		return NULL; /* the rule was removed: its alert goes with it */
	}
	if (sv->absent && rs->is_glob && strcmp(sv->metric, rs->rule->metric) == 0) {
		if (rs->pattern_absent.state != ALERT_INACTIVE) {
			return "duplicate alert";
		}
		restore_alert(&rs->pattern_absent, sv);
		return NULL;
	}
	if (!rule_matches(rs->rule, sv->metric) || !metric_name_valid(sv->metric)) {
		return NULL; /* the rule's pattern changed: not one of its alerts any more */
	}
	in = rule_state_instance(rs, sv->metric);
	if (!in) {
		return "too many instances for the rule";
	}
	if (sv->absent) {
		if (in->absent.state != ALERT_INACTIVE) {
			return "duplicate alert";
		}
		restore_alert(&in->absent, sv);
		return NULL;
	}
	if (in->value.state != ALERT_INACTIVE) {
		return "duplicate alert";
	}
	restore_alert(&in->value, sv);
	in->last_value = sv->value;
	changes = rs->rule->op == RULE_CHANGES || rs->rule->op == RULE_INCREASES;
	if (changes) {
		in->has_baseline = !isnan(sv->value);
		in->last_change_ms = sv->since_ms;
	} else if (!sv->firing) {
		/* the `for` streak goes on from where it began */
		for (int s = SEVERITY_WARNING; s <= (int)sv->severity; s++) {
			in->hold_since[s] = sv->since_ms;
		}
	}
	return NULL;
}

int
engine_load_state(struct engine *engine, const char *path, struct diag_list *diags)
{
	char line[STATE_LINE_MAX];
	int lineno = 0;
	struct stat st;
	/* never blocks: a FIFO where the state file should be would stop the start */
	int fd = readfile_open(path, &st);
	if (fd < 0) {
		return fd == -ENOENT ? 0 : fd;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		int e = errno;
		close(fd);
		return -e;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		struct saved sv;
		const char *why;

		lineno++;
		if (len > 0 && line[len - 1] == '\n') {
			line[--len] = '\0';
		} else if (!feof(f)) {
			int c;

			diag_add(diags, path, lineno, 0, "line longer than %d bytes", STATE_LINE_MAX - 1);
			while ((c = fgetc(f)) != EOF && c != '\n') {
			}
			continue;
		}
		if (lineno == 1 && strncmp(line, "# tegrawatch alert state ", 25) == 0 &&
		    strcmp(line, STATE_HEADER) != 0) {
			diag_add(diags, path, lineno, 0, "unknown state file version '%s'", line + 25);
			break;
		}
		if (len == 0 || line[0] == '#') {
			continue;
		}
		why = parse_line(line, &sv);
		if (!why) {
			why = apply(engine, &sv);
		}
		if (why) {
			diag_add(diags, path, lineno, 0, "alert state: %s", why);
		}
	}
	if (ferror(f)) {
		int err = -EIO;
		fclose(f);
		return err;
	}
	fclose(f);
	return 0;
}
