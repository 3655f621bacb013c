/* Labels a metric name cannot carry (see metric_attrs.h). */
#include "metric_attrs.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"

struct attrs_entry {
	bool used;
	const char *label; /* static text, the entry's kind */
	char segment[METRIC_NAME_MAX];
	size_t n;
	const char *names[METRIC_ATTRS_MAX];
	char values[METRIC_ATTRS_MAX][METRIC_LABEL_VALUE_MAX];
};

static pthread_mutex_t attrs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct attrs_entry attrs[METRIC_ATTRS_ENTRIES];

static struct attrs_entry *
find_locked(const char *label, const char *segment)
{
	for (size_t i = 0; i < METRIC_ATTRS_ENTRIES; i++) {
		if (attrs[i].used && strcmp(attrs[i].label, label) == 0 && strcmp(attrs[i].segment, segment) == 0) {
			return &attrs[i];
		}
	}
	return NULL;
}

int
metric_attrs_set(const char *label, const char *segment, size_t n, const char *const *names, const char *const *values)
{
	if (n == 0 || n > METRIC_ATTRS_MAX || strcmp(names[0], label) != 0 || strlen(segment) >= METRIC_NAME_MAX) {
		return -EINVAL;
	}
	int r = 0;
	pthread_mutex_lock(&attrs_lock);
	struct attrs_entry *e = find_locked(label, segment);
	for (size_t i = 0; !e && i < METRIC_ATTRS_ENTRIES; i++) {
		if (!attrs[i].used) {
			e = &attrs[i];
		}
	}
	if (!e) {
		r = -ENOSPC;
	} else {
		e->used = true;
		e->label = names[0];
		snprintf(e->segment, sizeof(e->segment), "%s", segment);
		e->n = n;
		for (size_t k = 0; k < n; k++) {
			e->names[k] = names[k];
			snprintf(e->values[k], sizeof(e->values[k]), "%s", values[k] ? values[k] : "");
		}
	}
	pthread_mutex_unlock(&attrs_lock);
	return r;
}

void
metric_attrs_forget(const char *label, const char *segment)
{
	pthread_mutex_lock(&attrs_lock);
	for (size_t i = 0; i < METRIC_ATTRS_ENTRIES; i++) {
		if (attrs[i].used && strcmp(attrs[i].label, label) == 0 &&
		    (!segment || strcmp(attrs[i].segment, segment) == 0)) {
			attrs[i].used = false;
		}
	}
	pthread_mutex_unlock(&attrs_lock);
}

size_t
metric_attrs_get(const char *label, const char *segment, size_t max, const char **names,
		 char (*values)[METRIC_LABEL_VALUE_MAX])
{
	size_t n = 0;
	pthread_mutex_lock(&attrs_lock);
	const struct attrs_entry *e = find_locked(label, segment);
	for (; e && n < e->n && n < max; n++) {
		names[n] = e->names[n];
		memcpy(values[n], e->values[n], METRIC_LABEL_VALUE_MAX);
	}
	pthread_mutex_unlock(&attrs_lock);
	return n;
}
