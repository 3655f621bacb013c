/*
 * Webhooks, the loop thread's side: the actions by name, their settings
 * (secret files read here), the events of a tick batched per action, the
 * firing alerts an alertmanager-api action sends again, and the counters.
 * Bodies are built here (webhook_format.c) and handed to the delivery
 * thread (webhook_deliver.c), which does all the network and queue I/O.
 */
#include "webhook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "build_config.h"
#include "webhook_deliver.h"

/* Alerts per request: a tick that changes hundreds of alerts makes several bodies of this many. */
#define ALERTS_PER_BODY 64

/* An alert event that outlives its notify() call: the strings it points at are owned here. */
struct held {
	struct alert_event ev;
	char *rule_name, *metric, *power_mode;
	struct alert_label *labels;
};

struct held_list {
	struct held *items;
	size_t count, cap;
};

struct action {
	struct action *next;
	char *name;
	char metric_prefix[METRIC_NAME_MAX]; /* "webhook.NAME.", "" when NAME cannot make metric names */
	int format;
	int64_t resend_ms;
	char *queue_file; /* as opened: a reload cannot move a queue */
	int queue_max;
	struct endpoint *ep;
	struct held_list batch;  /* this tick's events (alertmanager formats) */
	struct held_list firing; /* alertmanager-api: firing alerts, one per fingerprint */
	int64_t next_resend_ms;  /* monotonic */
	bool set;                /* by webhooks_set() since the last prune */
};

struct webhooks {
	struct deliverer *d;
	char *board_name, *device_id, *generator_url;
	struct agent_info board; /* pointing at the three strings above */
	struct action *actions;
};

/* ---- held events ---- */

static void
held_copy(struct held *h, const struct alert_event *ev)
{
	h->ev = *ev;
	h->rule_name = xstrdup(ev->rule_name ? ev->rule_name : "");
	h->metric = xstrdup(ev->metric ? ev->metric : "");
	h->power_mode = xstrdup(ev->power_mode ? ev->power_mode : "");
	h->labels = xcalloc(ev->label_count, sizeof(*h->labels));
	for (size_t i = 0; i < ev->label_count; i++) {
		h->labels[i].key = xstrdup(ev->labels[i].key);
		h->labels[i].value = xstrdup(ev->labels[i].value);
	}
	h->ev.rule_name = h->rule_name;
	h->ev.metric = h->metric;
	h->ev.power_mode = h->power_mode;
	h->ev.labels = h->labels;
	h->ev.rule = NULL; /* the rule and the names of its actions may be gone after a reload */
	h->ev.actions = NULL;
	h->ev.action_count = 0;
}

static void
held_free(struct held *h)
{
	for (size_t i = 0; i < h->ev.label_count; i++) {
		free(h->labels[i].key);
		free(h->labels[i].value);
	}
	free(h->labels);
	free(h->rule_name);
	free(h->metric);
	free(h->power_mode);
}

static struct held *
list_add(struct held_list *l)
{
	if (l->count == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->items = xrealloc(l->items, l->cap, sizeof(*l->items));
	}
	return &l->items[l->count++];
}

static void
list_clear(struct held_list *l)
{
	for (size_t i = 0; i < l->count; i++) {
		held_free(&l->items[i]);
	}
	l->count = 0;
}

static void
list_free(struct held_list *l)
{
	list_clear(l);
	free(l->items);
	*l = (struct held_list){0};
}

/* ---- actions ---- */

static struct action *
find(struct webhooks *w, const char *name)
{
	for (struct action *a = w->actions; a; a = a->next) {
		if (strcmp(a->name, name) == 0) {
			return a;
		}
	}
	return NULL;
}

/* "webhook.NAME." with NAME lower-cased and every other character '_': metric_name_valid() holds. */
static void
make_metric_prefix(const char *name, char *buf, size_t size)
{
	size_t len = strlen(name);
	if (len == 0 || len + sizeof("webhook..last_success_s") > size) {
		buf[0] = '\0';
		return;
	}
	size_t at = (size_t)snprintf(buf, size, "webhook.");
	for (const char *p = name; *p; p++) {
		char c = *p;
		buf[at++] = (c >= 'A' && c <= 'Z')                               ? (char)(c - 'A' + 'a')
			    : ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? c
										 : '_';
	}
	buf[at++] = '.';
	buf[at] = '\0';
}

/* What the delivery thread needs: a copy of CFG, the keys from secret_file, the bearer token. */
static int
make_conf(const char *name, const struct webhook_config *cfg, struct endpoint_conf **out)
{
	struct endpoint_conf *conf = xcalloc(1, sizeof(*conf));
	webhook_config_copy(&conf->cfg, cfg);
	if (conf->cfg.timeout_ms <= 0) {
		conf->cfg.timeout_ms =
			10000; /* 0 would be libcurl's "never": a tarpit would hold the action for good */
	}
	char why[160];
	int r = 0;
	if (cfg->secret_file && cfg->secret_file[0]) {
		char *secrets[WEBHOOK_SECRETS_MAX];
		int n = webhook_read_secrets(cfg->secret_file, secrets, why, sizeof(why));
		if (n < 0) {
			log_error("webhook %s: cannot use secret_file %s: %s", name, cfg->secret_file, why);
			r = -EINVAL;
		}
		for (int i = 0; i < n; i++) {
			if (webhook_key_parse(secrets[i], &conf->keys[conf->nkeys]) == 0) {
				conf->nkeys++;
			}
			memset(secrets[i], 0, strlen(secrets[i]));
			free(secrets[i]);
		}
	}
	if (r == 0 && cfg->bearer_token_file && cfg->bearer_token_file[0]) {
		char *token;
		if (webhook_read_token(cfg->bearer_token_file, &token, why, sizeof(why)) < 0) {
			log_error("webhook %s: cannot use bearer_token_file %s: %s", name, cfg->bearer_token_file, why);
			r = -EINVAL;
		} else {
			size_t len = strlen(token) + sizeof("Authorization: Bearer ");
			conf->auth = xmalloc(len);
			snprintf(conf->auth, len, "Authorization: Bearer %s", token);
			memset(token, 0, strlen(token));
			free(token);
		}
	}
	if (r < 0) {
		endpoint_conf_free(conf);
		return r;
	}
	conf->user_agent = xstrdup("tegrawatch/" TEGRAWATCH_VERSION);
	*out = conf;
	return 0;
}

static void
action_free(struct action *a)
{
	list_free(&a->batch);
	list_free(&a->firing);
	free(a->queue_file);
	free(a->name);
	free(a);
}

/*
 * For tests only: WEBHOOK_BACKOFF_ENV=BASE[,CAP] (milliseconds) replaces
 * the retry back-off, so a test through the real binary sees retries in
 * seconds, not minutes. CAP defaults to 120 x BASE (the production ratio).
 * Read once, here; anything malformed is ignored (logged).
 */
static void
backoff_from_environment(struct deliverer *d)
{
	const char *text = getenv(WEBHOOK_BACKOFF_ENV);
	if (!text || !text[0]) {
		return;
	}
	char *end;
	errno = 0;
	long long base = strtoll(text, &end, 10), cap = -1;
	if (*end == ',') {
		cap = strtoll(end + 1, &end, 10);
	}
	if (errno || *end || base < 1 || base > WEBHOOK_BACKOFF_ENV_MAX_MS || (cap != -1 && cap < base) ||
	    cap > WEBHOOK_BACKOFF_ENV_MAX_MS) {
		log_warn("%s=%s ignored: expected BASE or BASE,CAP in milliseconds (1 to %d, CAP >= BASE)",
			 WEBHOOK_BACKOFF_ENV, text, WEBHOOK_BACKOFF_ENV_MAX_MS);
		return;
	}
	if (cap == -1) {
		cap = base * 120 < WEBHOOK_BACKOFF_ENV_MAX_MS ? base * 120 : WEBHOOK_BACKOFF_ENV_MAX_MS;
	}
	log_warn("webhook: retry back-off %lld ms doubling to %lld ms (%s, a setting for tests)", base, cap,
		 WEBHOOK_BACKOFF_ENV);
	deliverer_set_backoff(d, base, cap);
}

/* ---- the API ---- */

struct webhooks *
webhooks_create(const struct agent_info *board)
{
	struct deliverer *d = deliverer_start();
	if (!d) {
		return NULL;
	}
	backoff_from_environment(d);
	struct webhooks *w = xcalloc(1, sizeof(*w));
	w->d = d;
	w->board_name = xstrdup(board->board_name ? board->board_name : "");
	w->device_id = xstrdup(board->device_id ? board->device_id : "");
	w->generator_url = xstrdup(board->generator_url ? board->generator_url : "");
	w->board = (struct agent_info){
		.board_name = w->board_name, .device_id = w->device_id, .generator_url = w->generator_url};
	return w;
}

int
webhooks_set(struct webhooks *w, const char *name, const struct webhook_config *cfg)
{
	if (!w || !name || !name[0] || !cfg->url) {
		return -EINVAL;
	}
	struct endpoint_conf *conf;
	int r = make_conf(name, cfg, &conf);
	if (r < 0) {
		return r;
	}
	struct action *a = find(w, name);
	if (a) {
		const char *qf = cfg->queue_file ? cfg->queue_file : "";
		if (strcmp(a->queue_file, qf) != 0 || a->queue_max != cfg->queue_max) {
			log_warn("webhook %s: queue_file and queue_max changes apply at the next start", name);
		}
		if (a->format != cfg->format) {
			list_clear(&a->batch);
			list_clear(&a->firing);
		}
		deliverer_update(w->d, a->ep, conf);
	} else {
		a = xcalloc(1, sizeof(*a));
		a->name = xstrdup(name);
		make_metric_prefix(name, a->metric_prefix, sizeof(a->metric_prefix));
		if (!a->metric_prefix[0]) {
			log_warn("webhook %s: the name is too long for metric names: no webhook.* counters", name);
		}
		a->queue_file = xstrdup(cfg->queue_file ? cfg->queue_file : "");
		a->queue_max = cfg->queue_max;
		a->ep = deliverer_add(w->d, name, conf);
		a->next = w->actions;
		w->actions = a;
	}
	a->format = cfg->format;
	a->resend_ms = cfg->resend_ms > 0 ? cfg->resend_ms : 60000;
	a->set = true;
	return 0;
}

void
webhooks_prune(struct webhooks *w)
{
	if (!w) {
		return;
	}
	for (struct action **pp = &w->actions; *pp;) {
		struct action *a = *pp;
		if (!a->set) {
			*pp = a->next;
			deliverer_remove(w->d, a->ep);
			action_free(a);
			continue;
		}
		a->set = false;
		pp = &a->next;
	}
}

/*
 * alertmanager-api: keeps the firing alerts by fingerprint. A severity
 * change is a new label set for Alertmanager, so the old one is resolved
 * in the same request.
 */
static void
track_firing(struct action *a, const struct alert_event *ev)
{
	size_t i = 0;
	while (i < a->firing.count && strcmp(a->firing.items[i].ev.fingerprint, ev->fingerprint) != 0) {
		i++;
	}
	bool known = i < a->firing.count;
	if (!webhook_event_firing(ev)) {
		if (known) {
			held_free(&a->firing.items[i]);
			a->firing.items[i] = a->firing.items[--a->firing.count];
		}
		return;
	}
	if (!known) {
		held_copy(list_add(&a->firing), ev);
		return;
	}
	struct held *old = &a->firing.items[i];
	if (old->ev.severity != ev->severity) {
		struct held *ended = list_add(&a->batch);
		*ended = *old; /* its strings move to the batch */
		ended->ev.transition = TRANSITION_RESOLVED;
		ended->ev.ends_at_ms = ev->at_ms;
	} else {
		held_free(old);
	}
	held_copy(old, ev);
}

void
webhooks_notify(struct webhooks *w, const char *name, const struct alert_event *ev)
{
	if (!w || !webhook_event_wanted(ev)) {
		return;
	}
	struct action *a = find(w, name);
	if (!a) {
		log_debug("webhook: an alert for the unknown action '%s'", name);
		return;
	}
	if (a->format == WEBHOOK_ALERTMANAGER_API) {
		/* restored alerts too: Alertmanager may have forgotten them while we were down */
		track_firing(a, ev);
		held_copy(list_add(&a->batch), ev);
		return;
	}
	if (ev->restored) {
		return; /* the receiver heard of it before the restart */
	}
	if (a->format == WEBHOOK_ALERTMANAGER) {
		held_copy(list_add(&a->batch), ev);
		return;
	}
	struct json j;
	json_init(&j);
	alert_event_to_json(&j, ev);                       /* json: the core event, which names the board */
	deliverer_push(w->d, a->ep, j.out.buf, j.out.len); /* the buffer is the body now */
	deliverer_wake(w->d);
}

/* Hands the alerts of LIST to A's queue, ALERTS_PER_BODY a request. */
static void
send_list(struct webhooks *w, struct action *a, const struct held_list *list)
{
	const struct alert_event *evs[ALERTS_PER_BODY];
	for (size_t at = 0; at < list->count; at += ALERTS_PER_BODY) {
		size_t n = list->count - at < ALERTS_PER_BODY ? list->count - at : ALERTS_PER_BODY;
		for (size_t i = 0; i < n; i++) {
			evs[i] = &list->items[at + i].ev;
		}
		struct json j;
		json_init(&j);
		if (a->format == WEBHOOK_ALERTMANAGER) {
			webhook_format_alertmanager(&j, &w->board, a->name, evs, n);
		} else {
			webhook_format_alertmanager_api(&j, &w->board, evs, n);
		}
		deliverer_push(w->d, a->ep, j.out.buf, j.out.len);
	}
}

void
webhooks_flush(struct webhooks *w)
{
	if (!w) {
		return;
	}
	int64_t now = monotonic_ms();
	bool pushed = false;
	for (struct action *a = w->actions; a; a = a->next) {
		if (a->batch.count) {
			send_list(w, a, &a->batch);
			list_clear(&a->batch);
			pushed = true;
		}
		if (a->format == WEBHOOK_ALERTMANAGER_API && a->firing.count && now >= a->next_resend_ms) {
			/* only when nothing waits: what is queued says the same, and re-sends must not pile up */
			struct webhook_stats st;
			deliverer_stats(w->d, a->ep, &st);
			if (a->next_resend_ms && st.queue_depth == 0 && !st.disabled) {
				send_list(w, a, &a->firing);
				pushed = true;
			}
			a->next_resend_ms = now + a->resend_ms;
		}
	}
	if (pushed) {
		deliverer_wake(w->d);
	}
	deliverer_print_logs(w->d);
}

void
webhooks_add_metrics(struct webhooks *w, struct metric_set *m)
{
	if (!w) {
		return;
	}
	static const char *const names[] = {"sent_total",    "failed_total", "retried_total",
					    "dropped_total", "queue_depth",  "last_success_s"};
	for (struct action *a = w->actions; a; a = a->next) {
		if (!a->metric_prefix[0]) {
			continue;
		}
		struct webhook_stats st;
		deliverer_stats(w->d, a->ep, &st);
		double values[] = {(double)st.sent,    (double)st.failed,      (double)st.retried,
				   (double)st.dropped, (double)st.queue_depth, (double)st.last_success_s};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			char name[METRIC_NAME_MAX];
			/* make_metric_prefix() left room for the longest suffix; gcc 11 cannot see that */
			if (snprintf(name, sizeof(name), "%s%s", a->metric_prefix, names[i]) >= (int)sizeof(name)) {
				continue;
			}
			metric_set_put(m, name, values[i]);
		}
	}
}

void
webhooks_destroy(struct webhooks *w)
{
	if (!w) {
		return;
	}
	webhooks_flush(w);
	deliverer_stop(w->d, WEBHOOK_STOP_GRACE_MS);
	while (w->actions) {
		struct action *a = w->actions;
		w->actions = a->next;
		action_free(a);
	}
	free(w->board_name);
	free(w->device_id);
	free(w->generator_url);
	free(w);
}

void
webhooks_set_backoff_for_tests(struct webhooks *w, int64_t base_ms, int64_t cap_ms)
{
	if (w) {
		deliverer_set_backoff(w->d, base_ms, cap_ms);
	}
}

int
webhooks_get_stats(struct webhooks *w, const char *name, struct webhook_stats *out)
{
	struct action *a = w ? find(w, name) : NULL;
	if (!a) {
		return -ENOENT;
	}
	deliverer_stats(w->d, a->ep, out);
	return 0;
}
