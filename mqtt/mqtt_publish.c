/*
 * What the MQTT sink publishes: state samples, limits when they change
 * and alert events through the spool (pumped to the connection at most
 * `inflight` at a time), the retained throttle and alerts/active topics, metric topics, Home
 * Assistant discovery, and the per-boot sequence file that numbers them.
 * Messages go out through mqtt_conn.c; no libmosquitto here.
 */
#include "mqtt_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/xalloc.h"

/* ---- the per-boot sequence ---- */

void
mqtt_pub_seq_open(struct mqtt_sink *s, const char *spool_file)
{
	uint64_t uptime_base = mqtt_seq_base_from_uptime(clock_boot_ms());
	s->seq = uptime_base;
	s->seq_fd = -1;
	if (!spool_file || !spool_file[0]) {
		return;
	}
	char path[4096];
	if (snprintf(path, sizeof(path), "%s.seq", spool_file) >= (int)sizeof(path)) {
		return;
	}
	s->seq_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->seq_fd < 0) {
		log_warn("mqtt: cannot open %s (%s): seq starts from the uptime", path, strerror(errno));
		return;
	}
	char text[128];
	ssize_t n = pread(s->seq_fd, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	uint64_t seq;
	int r = mqtt_seq_parse(text, s->boot_id, &seq);
	if (r == 0) {
		s->seq = seq;
	} else if (r == -ESTALE) {
		s->seq = 0; /* a new boot: count from 1 again */
	} else if (n > 0) {
		log_warn("mqtt: %s is damaged: seq continues from the uptime", path);
	}
	if (ftruncate(s->seq_fd, 0) < 0) {
		log_debug("mqtt: truncate %s: %s", path, strerror(errno));
	}
}

/*
 * The next sequence number, written down before it is used. No fsync: a
 * crash of the agent keeps the page cache, and a power cut starts a new
 * boot, where the count starts again anyway.
 */
static uint64_t
next_seq(struct mqtt_sink *s)
{
	s->seq++;
	if (s->seq_fd >= 0) {
		char text[96];
		size_t len = mqtt_seq_format(text, sizeof(text), s->boot_id, s->seq);
		if (pwrite(s->seq_fd, text, len, 0) != (ssize_t)len) {
			log_debug("mqtt: cannot write the sequence file: %s", strerror(errno));
		}
	}
	return s->seq;
}

/* ---- the spool and the retained topics ---- */

void
mqtt_pub_pump(struct mqtt_sink *s)
{
	while (s->state == CONN_CONNECTED && !s->lost && s->inflight_count < s->inflight_max) {
		const struct spool_record *rec = spool_peek_next(s->spool);
		if (!rec) {
			break;
		}
		int mid = 0;
		int r = mqtt_conn_send(s, rec, &mid);
		if (r == 0) {
			if (rec->qos == 0) {
				spool_ack(s->spool, rec->id); /* at most once: handed over is done */
			} else {
				s->inflight[s->inflight_count++] = (struct inflight){.mid = mid, .id = rec->id};
			}
			continue;
		}
		if (r == -EMSGSIZE) {
			/* this one can never go out: drop it (counted) rather than block the queue */
			s->local_drops++;
			spool_ack(s->spool, rec->id);
			continue;
		}
		/* the connection is gone (s->lost is set); the spool keeps the record */
		break;
	}
}

static void
emit_discovery(const char *topic, const char *payload, size_t len, void *data)
{
	mqtt_conn_publish(data, topic, payload, len, 1, true);
}

static void
publish_discovery(struct mqtt_sink *s, const struct metric_set *set)
{
	struct mqtt_ha_ctx ctx = {
		.ha_prefix = s->ha_prefix,
		.device_id = s->device_id,
		.state_topic = s->t_ha,
		.status_topic = s->t_status,
		.expire_after_s = mqtt_ha_expire_after_s(s->info.interval_ms, s->ha_interval_ms),
		.info = &s->info,
	};
	size_t n = mqtt_ha_discovery(&ctx, set, s->dict, emit_discovery, s);
	s->discovered = mqtt_ha_sensor_count(set, s->dict);
	s->metrics_seen = set->count;
	log_info("mqtt: published %zu Home Assistant discovery configs", n);
}

void
mqtt_pub_latest(struct mqtt_sink *s)
{
	if (s->state != CONN_CONNECTED) {
		return;
	}
	if (s->limits_dirty && s->limits_json) {
		/* not while the spool still holds it: the backlog delivers it in its place, after the older states */
		struct spool_stats st;
		spool_get_stats(s->spool, &st);
		if (st.depth <= st.pushed - s->limits_pushed) {
			mqtt_conn_publish(s, s->t_limits, s->limits_json, strlen(s->limits_json), 1, true);
		}
		s->limits_dirty = false;
	}
	if (s->throttle_dirty && s->throttle_json) {
		mqtt_conn_publish(s, s->t_throttle, s->throttle_json, strlen(s->throttle_json), 1, true);
		s->throttle_dirty = false;
	}
	if (s->active_dirty) {
		json_reset(&s->j);
		mqtt_active_json(&s->j, &s->active);
		mqtt_conn_publish(s, s->t_active, s->j.out.buf, s->j.out.len, 1, true);
		s->active_dirty = false;
	}
}

/* ---- the sink_ops that publish ---- */

static void
publish_metric_topics(struct mqtt_sink *s, const struct metric_set *set)
{
	char topic[MQTT_TOPIC_MAX + METRIC_NAME_MAX], value[40];
	for (size_t i = 0; i < set->count; i++) {
		const char *name = set->items[i].name;
		bool match = false;
		for (size_t g = 0; g < s->metric_glob_count && !match; g++) {
			match = metric_glob_match(s->metric_globs[g], name);
		}
		if (!match || !mqtt_format_value(set->items[i].value, value, sizeof(value))) {
			continue;
		}
		snprintf(topic, sizeof(topic), "%s/%s", s->t_metric, name);
		mqtt_conn_publish(s, topic, value, strlen(value), 0, false);
	}
}

/*
 * The view Home Assistant reads, live only: never spooled, so after an
 * outage HA gets the present, not the backlog stamped "now". It goes out
 * every ha_interval of sample time when it changed, at once when an edge
 * changed (throttling, alerts firing, power mode), and unchanged every
 * refresh so expire_after holds. Retained: a Home Assistant that restarts
 * reads the present at once.
 */
static void
publish_ha_view(struct mqtt_sink *s, const struct sample *smp)
{
	struct mqtt_ha_edges edges;
	mqtt_ha_view_edges(smp, s->dict, &edges);
	bool edge = !s->ha_view || !mqtt_ha_edges_equal(&edges, &s->ha_edges);
	int64_t since = smp->mono_ms - s->ha_view_ms; /* a wall clock step is no time */
	bool back = since < 0;                        /* a replay whose time went back: start again from now */
	if (!edge && !s->ha_view_due && !back && since < s->ha_interval_ms) {
		return;
	}
	json_reset(&s->j);
	const char *body = s->j.out.buf + mqtt_ha_view_json(&s->j, smp, s->dict);
	bool changed = !s->ha_view || strcmp(s->ha_view, body) != 0;
	if (!edge && !changed && !s->ha_view_due && !back && since < mqtt_ha_refresh_ms(s->ha_interval_ms)) {
		return;
	}
	free(s->ha_view);
	s->ha_view = xstrdup(body);
	s->ha_edges = edges;
	s->ha_view_ms = smp->mono_ms;
	s->ha_view_due = false;
	mqtt_conn_publish(s, s->t_ha, s->j.out.buf, s->j.out.len, 0, true);
}

/*
 * The limits when they differ from the last ones published: spooled
 * (retained, QoS 1) just before the state they were first seen with, so
 * the backlog after an outage keeps every change in its place; the latest
 * goes out again on every connect (mqtt_pub_latest).
 */
static void
push_limits(struct mqtt_sink *s, const struct sample *smp, uint64_t seq)
{
	const struct buf *now = &s->limits.out;
	if (s->limits_metrics && strlen(s->limits_metrics) == now->len &&
	    memcmp(s->limits_metrics, now->buf, now->len) == 0) {
		return;
	}
	free(s->limits_metrics);
	s->limits_metrics = xstrdup(now->buf);
	struct json j;
	json_init(&j);
	mqtt_limits_json(&j, smp, s->boot_id, seq, &s->limits);
	free(s->limits_json);
	s->limits_json = xstrdup(j.out.buf);
	json_free(&j);
	int r = spool_push(s->spool, s->t_limits, s->limits_json, strlen(s->limits_json), 1, true);
	if (r < 0) {
		log_warn("mqtt: cannot queue the limits: %s", strerror(-r));
		return;
	}
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	s->limits_pushed = st.pushed;
}

int
mqtt_pub_write(struct sink *sink, const struct sample *smp)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	uint64_t seq = next_seq(s);
	json_reset(&s->j);
	mqtt_state_json(&s->j, &s->limits, smp, s->boot_id, seq, s->state_full, s->dict);
	push_limits(s, smp, seq);
	int r = spool_push(s->spool, s->t_state, s->j.out.buf, s->j.out.len, s->qos, false);

	mqtt_throttle_signature(&s->j, &smp->throttle);
	if (!s->throttle_signature || strcmp(s->throttle_signature, s->j.out.buf) != 0) {
		free(s->throttle_signature);
		s->throttle_signature = xstrdup(s->j.out.buf);
		json_reset(&s->j);
		mqtt_throttle_json(&s->j, &smp->throttle);
		free(s->throttle_json);
		s->throttle_json = xstrdup(s->j.out.buf);
		s->throttle_dirty = true;
	}
	if (s->state == CONN_CONNECTED && !s->lost) {
		mqtt_pub_latest(s);
		if (s->metric_glob_count) {
			publish_metric_topics(s, &smp->metrics);
		}
		if (s->ha && s->discovery_due_ms >= 0 && monotonic_ms() >= s->discovery_due_ms) {
			s->discovery_due_ms = -1;
			publish_discovery(s, &smp->metrics);
		} else if (s->ha && s->discovery_due_ms < 0 && smp->metrics.count > s->metrics_seen) {
			/* more metrics than ever (tegrastats started late, a fan spun up): new sensors? */
			s->metrics_seen = smp->metrics.count;
			if (mqtt_ha_sensor_count(&smp->metrics, s->dict) > s->discovered) {
				publish_discovery(s, &smp->metrics);
			}
		}
		if (s->ha) {
			publish_ha_view(s, smp);
		}
		mqtt_pub_pump(s);
	}
	return r;
}

void
mqtt_pub_notify(struct sink *sink, const struct alert_event *ev)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	if (ev->restored) {
		/* alerts/active only: the transition itself was published by an earlier run */
		if (mqtt_active_update(&s->active, ev)) {
			s->active_dirty = true;
		}
		return;
	}
	if (!mqtt_alert_published(ev->transition)) {
		return;
	}
	uint64_t seq = next_seq(s);
	struct json j;
	json_init(&j);
	mqtt_alert_json(&j, ev, s->boot_id, seq);
	int r = spool_push(s->spool, s->t_alerts, j.out.buf, j.out.len, 1, false);
	if (r < 0) {
		log_warn("mqtt: cannot queue an alert event: %s", strerror(-r));
	}
	json_free(&j);
	if (mqtt_active_update(&s->active, ev)) {
		s->active_dirty = true;
	}
}

void
mqtt_pub_add_metrics(struct sink *sink, struct metric_set *m)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	metric_set_put(m, "agent.mqtt_connected", s->state == CONN_CONNECTED ? 1 : 0);
	metric_set_put(m, "agent.mqtt_connects_total", (double)s->connects);
	metric_set_put(m, "agent.mqtt_disconnects_total", (double)s->disconnects);
	metric_set_put(m, "agent.mqtt_publishes_total", (double)s->publishes);
	metric_set_put(m, "agent.mqtt_spool_depth", (double)st.depth);
	metric_set_put(m, "agent.mqtt_dropped_total", (double)(st.dropped + s->local_drops));
	metric_set_put(m, "agent.mqtt_spool_corrupt_total", (double)st.corrupt_records);
	metric_set_put(m, "agent.mqtt_spool_write_errors_total", (double)st.write_errors);
}
