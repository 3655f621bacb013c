/* Failed logins per address (see auth_limit.h). */
#include "auth_limit.h"

#include <string.h>

#include "core/log.h"

#define REPORT_MS 60000

void
auth_limit_init(struct auth_limit *l)
{
	memset(l, 0, sizeof(*l));
	atomic_init(&l->failures, 0);
	atomic_init(&l->throttled, 0);
}

static struct auth_slot *
find(struct auth_limit *l, const unsigned char key[16])
{
	for (size_t i = 0; i < AUTH_ADDRS; i++) {
		if (l->slots[i].used && memcmp(l->slots[i].key, key, 16) == 0) {
			return &l->slots[i];
		}
	}
	return NULL;
}

int64_t
auth_limit_check(struct auth_limit *l, const unsigned char key[16], int64_t now_ms)
{
	const struct auth_slot *s = find(l, key);
	if (!s || s->count < AUTH_FAILS_MAX) {
		return 0;
	}
	/* a full ring: its oldest failure is at NEXT */
	int64_t wait = s->fails[s->next] + AUTH_WINDOW_MS - now_ms;
	if (wait <= 0) {
		return 0;
	}
	atomic_fetch_add(&l->throttled, 1);
	return wait;
}

void
auth_limit_failed(struct auth_limit *l, const unsigned char key[16], int64_t now_ms)
{
	atomic_fetch_add(&l->failures, 1);
	struct auth_slot *s = find(l, key);
	if (!s) {
		s = &l->slots[0];
		for (size_t i = 0; i < AUTH_ADDRS && s->used; i++) {
			if (!l->slots[i].used || l->slots[i].last_ms < s->last_ms) {
				s = &l->slots[i];
			}
		}
		memset(s, 0, sizeof(*s));
		s->used = true;
		memcpy(s->key, key, 16);
	}
	s->fails[s->next] = now_ms;
	s->next = (s->next + 1) % AUTH_FAILS_MAX;
	if (s->count < AUTH_FAILS_MAX) {
		s->count++;
	}
	s->last_ms = now_ms;
}

void
auth_limit_add_metrics(struct auth_limit *l, struct metric_set *m, int64_t now_ms)
{
	unsigned long long failures = atomic_load(&l->failures);
	unsigned long long throttled = atomic_load(&l->throttled);
	metric_set_put(m, "agent.http_auth_failures_total", (double)failures);
	metric_set_put(m, "agent.http_auth_throttled_total", (double)throttled);
	if (failures + throttled == l->reported || (l->reported_ms && now_ms - l->reported_ms < REPORT_MS)) {
		return;
	}
	log_warn("web: %llu failed logins, %llu more refused with 429 since start (%d failures a minute per address)",
		 failures, throttled, AUTH_FAILS_MAX);
	l->reported = failures + throttled;
	l->reported_ms = now_ms;
}
