/*
 * The programs and log lines of alert actions. exec children are started
 * with posix_spawn (no shell), their stdout goes to /dev/null so the
 * agent's own stdout stays clean, and they are reaped with
 * waitpid(WNOHANG) from the loop.
 */
#include "actions.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/child.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/sample_json.h"
#include "core/xalloc.h"

extern char **environ;

#define RUNNING_MAX 8
#define QUEUE_MAX 256
#define KILL_GRACE_MS 2000
#define SWEEP_AFTER_MS 10000 /* keep looking for leftovers this long after the last program ended */

struct child {
	pid_t pid;
	char *name;
	int64_t deadline_ms;
	bool terminated; /* SIGTERM sent, SIGKILL follows after the grace */
};

/* A program waiting for a free slot: everything copied, a reload may free the config. */
struct job {
	char *name;
	char **argv;
	char **envp;
	int64_t timeout_ms;
};

/* An action given by actions_set(), copied: exec when it has argv, else log. */
struct action_def {
	char *name;
	char **argv;
	int64_t timeout_ms;
};

struct actions {
	struct action_def *defs;
	size_t def_count;
	struct child running[RUNNING_MAX];
	unsigned running_count;
	struct job queue[QUEUE_MAX]; /* ring */
	unsigned queue_head;
	unsigned queue_count;
	struct actions_stats stats;
	int64_t sweep_until_ms; /* leftovers of programs are looked for until then (and while some run) */
};

struct actions *
actions_create(void)
{
	struct actions *act = xcalloc(1, sizeof(*act));
	/*
	 * A program's process group bounds what stays in it; a process that
	 * leaves it (setsid, a double fork) is found as an orphan the agent
	 * adopts, and stopped (see child.h). A cgroup per program would bound
	 * both without /proc scans, but needs a delegated cgroup, which a
	 * plain install does not have.
	 */
	int r = child_become_subreaper();
	if (r < 0) {
		log_warn("cannot adopt what exec actions leave behind (PR_SET_CHILD_SUBREAPER): %s", strerror(-r));
	}
	return act;
}

void
actions_get_stats(const struct actions *act, struct actions_stats *out)
{
	*out = act->stats;
	out->running = act->running_count;
}

/* ---- environment for exec ---- */

struct envbuf {
	char **vars;
	size_t count;
	size_t cap;
};

static void
env_add(struct envbuf *env, const char *key, const char *value)
{
	if (env->count + 2 > env->cap) {
		env->cap = env->cap ? env->cap * 2 : 64;
		env->vars = xrealloc(env->vars, env->cap, sizeof(*env->vars));
	}
	size_t len = strlen(key) + strlen(value) + 2;
	char *var = xrealloc(NULL, len, 1);
	snprintf(var, len, "%s=%s", key, value);
	env->vars[env->count++] = var;
	env->vars[env->count] = NULL;
}

static void
env_add_number(struct envbuf *env, const char *key, double v)
{
	char buf[40];
	if (isnan(v)) {
		buf[0] = '\0';
	} else {
		snprintf(buf, sizeof(buf), "%.15g", v);
	}
	env_add(env, key, buf);
}

/* KEY as RFC 3339 in UTC and KEY_MS as epoch milliseconds ("" both when unset) */
static void
env_add_time(struct envbuf *env, const char *key, int64_t ms)
{
	char buf[RFC3339_LEN] = "", name[64], num[24] = "";
	if (ms > 0) {
		rfc3339_utc(ms, buf, sizeof(buf));
		snprintf(num, sizeof(num), "%lld", (long long)ms);
	}
	env_add(env, key, buf);
	snprintf(name, sizeof(name), "%s_MS", key);
	env_add(env, name, num);
}

/* The inherited environment minus our own names, plus the alert's fields. */
static void
build_env(struct envbuf *env, const struct alert_event *ev)
{
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "TEGRAWATCH_", 11) == 0) {
			continue;
		}
		char *key = xstrndup(*e, strcspn(*e, "="));
		const char *eq = strchr(*e, '=');
		env_add(env, key, eq ? eq + 1 : "");
		free(key);
	}
	env_add(env, "TEGRAWATCH_RULE", ev->rule_name);
	env_add(env, "TEGRAWATCH_METRIC", ev->metric);
	env_add(env, "TEGRAWATCH_SEVERITY", severity_name(ev->severity));
	env_add(env, "TEGRAWATCH_PREVIOUS_SEVERITY", severity_name(ev->previous));
	env_add(env, "TEGRAWATCH_TRANSITION", alert_transition_name(ev->transition));
	env_add(env, "TEGRAWATCH_STATUS", ev->transition == TRANSITION_RESOLVED ? "resolved" : "firing");
	env_add(env, "TEGRAWATCH_ABSENT", ev->absent ? "1" : "0");
	env_add_number(env, "TEGRAWATCH_VALUE", ev->value);
	env_add_number(env, "TEGRAWATCH_THRESHOLD", ev->threshold);
	env_add(env, "TEGRAWATCH_FINGERPRINT", ev->fingerprint);
	env_add(env, "TEGRAWATCH_SUMMARY", ev->summary);
	env_add(env, "TEGRAWATCH_DESCRIPTION", ev->description);
	env_add(env, "TEGRAWATCH_THROTTLE", ev->throttle);
	char top[512];
	top_processes_text(&ev->processes, false, top, sizeof(top));
	env_add(env, "TEGRAWATCH_TOP_CPU", top); /* what ran as it fired: "" when not taken */
	top_processes_text(&ev->processes, true, top, sizeof(top));
	env_add(env, "TEGRAWATCH_TOP_MEMORY", top);
	env_add(env, "TEGRAWATCH_POWER_MODE", ev->power_mode ? ev->power_mode : "");
	env_add_time(env, "TEGRAWATCH_STARTS_AT", ev->starts_at_ms);
	env_add_time(env, "TEGRAWATCH_ENDS_AT", ev->ends_at_ms);
	env_add_time(env, "TEGRAWATCH_AT", ev->at_ms);
	env_add(env, "TEGRAWATCH_BOARD", ev->board ? ev->board : "");
	env_add(env, "TEGRAWATCH_DEVICE_ID", ev->device_id ? ev->device_id : "");
	for (size_t i = 0; i < ev->label_count; i++) {
		char key[128];
		size_t n = (size_t)snprintf(key, sizeof(key), "TEGRAWATCH_LABEL_%s", ev->labels[i].key);
		for (size_t k = 17; k < n && k < sizeof(key); k++) {
			char c = key[k];
			key[k] = (c >= 'a' && c <= 'z')                               ? (char)(c - 32)
				 : ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c
										      : '_';
		}
		env_add(env, key, ev->labels[i].value);
	}
}

/* ---- running programs ---- */

static char **
copy_strv(char *const *v)
{
	size_t n = 0;
	while (v[n]) {
		n++;
	}
	char **out = xcalloc(n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		out[i] = xstrdup(v[i]);
	}
	return out;
}

static void
free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++) {
		free(v[i]);
	}
	free(v);
}

static void
job_free(struct job *job)
{
	free(job->name);
	free_strv(job->argv);
	free_strv(job->envp);
	memset(job, 0, sizeof(*job));
}

static void
start_job(struct actions *act, struct job *job)
{
	struct child_spec spec = {.argv = job->argv, .envp = job->envp, .stdout_fd = -1};
	pid_t pid;
	int r = child_spawn(&spec, &pid);
	if (r < 0) {
		act->stats.failures++;
		log_warn("action %s: cannot run %s: %s", job->name, job->argv[0], strerror(-r));
		job_free(job);
		return;
	}
	struct child *c = &act->running[act->running_count++];
	c->pid = pid;
	c->name = job->name;
	job->name = NULL;
	c->deadline_ms = monotonic_ms() + job->timeout_ms;
	c->terminated = false;
	act->stats.runs++;
	job_free(job);
}

/* Starts queued programs while there are free slots, oldest first. */
static void
start_queued(struct actions *act)
{
	while (act->queue_count > 0 && act->running_count < RUNNING_MAX) {
		struct job *job = &act->queue[act->queue_head];
		act->queue_head = (act->queue_head + 1) % QUEUE_MAX;
		act->queue_count--;
		start_job(act, job);
	}
}

/* Queues the program of the exec action NAME, everything copied: a reload may replace the definitions. */
static void
exec_action(struct actions *act, const char *name, char *const *argv, int64_t timeout_ms, const struct alert_event *ev)
{
	if (act->queue_count == QUEUE_MAX) {
		/* the oldest waiting call goes first: the newest news matters most */
		job_free(&act->queue[act->queue_head]);
		act->queue_head = (act->queue_head + 1) % QUEUE_MAX;
		act->queue_count--;
		act->stats.dropped++;
		log_warn("action queue full: dropped the oldest waiting call");
	}
	struct envbuf env = {0};
	build_env(&env, ev);
	struct job *job = &act->queue[(act->queue_head + act->queue_count) % QUEUE_MAX];
	job->name = xstrdup(name);
	job->argv = copy_strv(argv);
	job->envp = env.vars; /* the job owns the strings now */
	job->timeout_ms = timeout_ms;
	act->queue_count++;
	start_queued(act);
}

static void
log_action(const struct alert_event *ev)
{
	char value[40] = "", threshold[40] = "";
	if (!isnan(ev->value)) {
		snprintf(value, sizeof(value), " value=%.15g", ev->value);
	}
	if (!isnan(ev->threshold)) {
		snprintf(threshold, sizeof(threshold), " threshold=%.15g", ev->threshold);
	}
	/* what ran as it fired: "(top CPU: trtexec[4242] 187%, ...; top memory: ...)" */
	char cpu[256], mem[256], top[600] = "";
	top_processes_text(&ev->processes, false, cpu, sizeof(cpu));
	top_processes_text(&ev->processes, true, mem, sizeof(mem));
	if (cpu[0] || mem[0]) {
		snprintf(top, sizeof(top), " (top CPU: %s; top memory: %s)", cpu[0] ? cpu : "none",
			 mem[0] ? mem : "none");
	}
	log_event(LOG_WARN, "alert %s %s [%s] %s%s%s%s: %s%s", alert_transition_name(ev->transition), ev->rule_name,
		  severity_name(ev->severity), ev->metric, ev->absent ? " absent" : "", value, threshold, ev->summary,
		  top);
}

static void
free_defs(struct actions *act)
{
	for (size_t i = 0; i < act->def_count; i++) {
		free(act->defs[i].name);
		free_strv(act->defs[i].argv);
	}
	free(act->defs);
	act->defs = NULL;
	act->def_count = 0;
}

void
actions_set(struct actions *act, const struct alert_action *defs, size_t count)
{
	free_defs(act);
	act->defs = xcalloc(count, sizeof(*act->defs));
	for (size_t i = 0; i < count; i++) {
		act->defs[i].name = xstrdup(defs[i].name);
		act->defs[i].argv = defs[i].argv ? copy_strv(defs[i].argv) : NULL;
		act->defs[i].timeout_ms = defs[i].timeout_ms;
	}
	act->def_count = count;
}

void
actions_notify(struct actions *act, const struct alert_event *ev)
{
	if (ev->restored) {
		return; /* logged, or run, before the restart */
	}
	for (size_t i = 0; i < ev->action_count; i++) {
		const struct action_def *def = NULL;
		for (size_t k = 0; k < act->def_count && !def; k++) {
			def = strcmp(act->defs[k].name, ev->actions[i]) == 0 ? &act->defs[k] : NULL;
		}
		if (!def) {
			continue; /* a webhook (webhook/ delivers it), or gone with a reload */
		}
		if (def->argv) {
			exec_action(act, def->name, def->argv, def->timeout_ms, ev);
		} else {
			log_action(ev);
		}
	}
}

static void
forget_child(struct actions *act, unsigned i)
{
	free(act->running[i].name);
	act->running[i] = act->running[--act->running_count];
}

/* Stops what programs left behind, while they run and for a while after. */
static void
sweep(struct actions *act, int64_t now)
{
	if (act->running_count == 0 && now >= act->sweep_until_ms) {
		return; /* nothing can be left: no /proc scan */
	}
	unsigned stopped = 0;
	int left = child_sweep(KILL_GRACE_MS, &stopped);
	if (stopped > 0) {
		act->stats.leftovers += stopped;
		log_warn("exec actions left %u process(es) behind: stopping them", stopped);
	}
	if (left > 0) {
		act->sweep_until_ms = now + SWEEP_AFTER_MS;
	}
}

void
actions_poll(struct actions *act)
{
	int64_t now = monotonic_ms();
	for (unsigned i = 0; i < act->running_count;) {
		struct child *c = &act->running[i];
		int status;
		pid_t r = waitpid(c->pid, &status, WNOHANG);
		if (r == c->pid || (r < 0 && errno == ECHILD)) {
			child_forget(c->pid);
			act->sweep_until_ms = now + SWEEP_AFTER_MS; /* what it left behind is adopted now */
			if (r == c->pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
				act->stats.failures++;
				if (!c->terminated) {
					log_warn("action %s: program failed (status %d)", c->name, status);
				}
			}
			forget_child(act, i);
			continue;
		}
		if (now >= c->deadline_ms) {
			if (!c->terminated) {
				act->stats.timeouts++;
				log_warn("action %s: still running after its timeout, stopping it", c->name);
				kill(-c->pid, SIGTERM);
				c->terminated = true;
				c->deadline_ms = now + KILL_GRACE_MS;
			} else {
				kill(-c->pid, SIGKILL);
			}
		}
		i++;
	}
	sweep(act, now);
	start_queued(act);
}

void
actions_destroy(struct actions *act)
{
	if (!act) {
		return;
	}
	/* give queued and running programs their grace, then stop them: no zombies left behind */
	int64_t until = monotonic_ms() + KILL_GRACE_MS;
	while ((act->running_count > 0 || act->queue_count > 0) && monotonic_ms() < until) {
		actions_poll(act);
		clock_sleep_ms(20);
	}
	while (act->queue_count > 0) {
		act->stats.dropped++;
		job_free(&act->queue[act->queue_head]);
		act->queue_head = (act->queue_head + 1) % QUEUE_MAX;
		act->queue_count--;
	}
	for (unsigned i = 0; i < act->running_count; i++) {
		kill(-act->running[i].pid, SIGKILL);
		waitpid(act->running[i].pid, NULL, 0);
		child_forget(act->running[i].pid);
		free(act->running[i].name);
	}
	/* and what they left behind, escaped from their groups or not: the agent stops with nothing left over */
	until = monotonic_ms() + KILL_GRACE_MS + 1000;
	while (child_sweep(KILL_GRACE_MS, NULL) > 0 && monotonic_ms() < until) {
		clock_sleep_ms(20);
	}
	child_sweep(0, NULL); /* reaps the last of them */
	free_defs(act);
	free(act);
}
