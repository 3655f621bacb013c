/*
 * tegrawatch top [-c FILE | --url URL] [--root DIR] [--once] [--interval MS] [--view NAME]:
 * the board at a glance, full screen (top/term.h), or one screen as plain
 * text (--once, or stdout not a terminal). The data come from the running
 * agent's API (/api/v1/snapshot) so the board has one reader; where no
 * agent answers, `top` reads the board itself as `snapshot` does, and
 * asks the agent again every refresh (docs/commands.md).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/exit_codes.h"
#include "core/sample_json.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "setup.h"
#include "tegra/board.h"
#include "tegra/sources.h"
#include "tegra/throttle.h"
#include "top/term.h"
#include "top/top.h"
#include "top/top_http.h"

struct top_run {
	struct top_endpoint ep;
	bool have_agent;   /* an endpoint to ask (web.listen "" has none) */
	bool explicit_url; /* --url: never read the board instead */
	bool agent_seen;   /* the agent answered once */
	const char *root;
	int64_t interval_ms;
	struct board *board;
	struct source *hwmon;
	struct throttle_detector *det;
	struct top_data *d;
	struct buf body;
};

static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/* One reading of the board into the screen's sample (the second and later have CPU loads). */
static int
read_board(struct top_run *tr)
{
	struct top_data *d = tr->d;
	if (!tr->board) {
		int r = board_open(tr->root, &tr->board);
		if (r < 0) {
			snprintf(d->notice, sizeof(d->notice), "cannot read the board below '%s': %s",
				 tr->root[0] ? tr->root : "/", strerror(-r));
			return r;
		}
		if (!tr->root[0] || strcmp(tr->root, "/") == 0) {
			hwmon_source_create(&tr->hwmon); /* generic hwmon chips, as snapshot reads them */
		}
		tr->det = throttle_detector_create();
		sample_clear(d->sample);
		board_sample(tr->board, d->sample); /* the first: rates need a previous reading */
		throttle_detector_update(tr->det, d->sample);
		clock_sleep_ms(250);
	}
	sample_clear(d->sample);
	d->sample->time_ms = clock_wall_ms();
	board_sample(tr->board, d->sample);
	if (tr->hwmon) {
		tr->hwmon->ops->read(tr->hwmon, d->sample);
	}
	throttle_detector_update(tr->det, d->sample);
	d->id = *board_identity(tr->board);
	d->have_sample = true;
	d->alerts_known = false;
	d->alert_count = d->alerts_omitted = 0;
	rfc3339_utc(d->sample->time_ms, d->ts, sizeof(d->ts));
	snprintf(d->source, sizeof(d->source), "board %s", tr->root[0] ? tr->root : "/");
	return 0;
}

/* Asks the agent: 0, or -errno with WHY said. */
static int
read_agent(struct top_run *tr, char *why, size_t size)
{
	int64_t timeout = tr->interval_ms < 200 ? 200 : tr->interval_ms > 2000 ? 2000 : tr->interval_ms;
	int status = 0, r = top_http_get(&tr->ep, "/api/v1/snapshot", timeout, &status, &tr->body);
	if (r == 0 && status != 200) {
		snprintf(why, size, "HTTP %d", status);
		return -EPROTO;
	}
	if (r == 0 && top_data_from_snapshot(tr->d, tr->body.buf) < 0) {
		snprintf(why, size, "not a snapshot");
		return -EPROTO;
	}
	if (r < 0) {
		snprintf(why, size, "%s", strerror(-r));
	}
	return r;
}

/* One refresh: the agent when it answers, else the board (not with --url). Returns 0 when there is data. */
static int
refresh(struct top_run *tr)
{
	struct top_data *d = tr->d;
	char why[128] = "";
	if (tr->have_agent) {
		int r = read_agent(tr, why, sizeof(why));
		if (r == 0) {
			tr->agent_seen = true;
			d->notice[0] = '\0';
			snprintf(d->source, sizeof(d->source), "agent %s:%s", tr->ep.host, tr->ep.port);
			return 0;
		}
		if (tr->explicit_url) {
			/* a notice longer than its line is cut: it is one line of the screen */
			int n = snprintf(d->notice, sizeof(d->notice), "agent %s:%s: %s%s; asking again every refresh",
					 tr->ep.host, tr->ep.port, why,
					 tr->agent_seen ? " (showing its last answer)" : "");
			(void)n;
			return tr->agent_seen ? 0 : -ENOTCONN;
		}
	}
	int r = read_board(tr);
	if (r == 0 && tr->agent_seen) {
		int n = snprintf(d->notice, sizeof(d->notice),
				 "agent %s:%s stopped (%s): reading the board itself; asking again", tr->ep.host,
				 tr->ep.port, why);
		(void)n; /* cut like the one above */
	} else if (r == 0) {
		d->notice[0] = '\0';
	}
	return r;
}

static int
print_once(struct top_run *tr, enum top_view view)
{
	if (refresh(tr) < 0) {
		fprintf(stderr, "tegrawatch top: %s\n", tr->d->notice);
		return EX_UNAVAILABLE;
	}
	const char *cols = getenv("COLUMNS");
	int width = cols && strtol(cols, NULL, 10) >= 40 ? (int)strtol(cols, NULL, 10) : 80;
	/* tall enough for everything; the keys line (the last) is no use on paper */
	struct top_screen *s = top_screen_create(width > 400 ? 400 : width, 400);
	top_render(s, tr->d, view);
	s->lines[s->height - 1].text[0] = '\0';
	char *text = top_screen_text(s);
	fputs(text, stdout);
	free(text);
	top_screen_destroy(s);
	return fflush(stdout) == 0 ? 0 : EX_IOERR;
}

static int
run_screen(struct top_run *tr, enum top_view view, bool colour)
{
	struct term *t;
	int r = term_open(colour, &t);
	if (r < 0) {
		/* -ELIBACC: core/dynlib.c has said which library and why */
		fprintf(stderr, "tegrawatch top: %s; `tegrawatch top --once` prints one screen\n",
			r == -ENOTSUP   ? "built without ncurses (meson -Dtop=enabled)"
			: r == -ELIBACC ? "the full screen needs ncursesw"
					: "no usable terminal");
		return EX_UNAVAILABLE;
	}
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct top_screen *s = NULL;
	bool quit = false;
	while (!quit && !stop_signal) {
		refresh(tr);
		int64_t due = monotonic_ms() + tr->interval_ms;
		bool redraw = true;
		while (!quit && !stop_signal) {
			if (redraw) {
				int w, h;
				term_size(t, &w, &h);
				if (!s || s->width != w || s->height != h) {
					top_screen_destroy(s);
					s = top_screen_create(w, h);
				}
				top_render(s, tr->d, view);
				term_draw(t, s);
				redraw = false;
			}
			int64_t left = due - monotonic_ms();
			if (left <= 0) {
				break;
			}
			int k = term_key(t, left);
			if (k == 'q' || k == 'Q') {
				quit = true;
			} else if (k >= '1' && k < '1' + TOP_VIEWS) {
				view = (enum top_view)(k - '1');
				redraw = true;
			} else if (k == TERM_KEY_NEXT || k == TERM_KEY_PREV) {
				view = (enum top_view)((view + (k == TERM_KEY_NEXT ? 1 : TOP_VIEWS - 1)) % TOP_VIEWS);
				redraw = true;
			} else if (k == TERM_KEY_RESIZE) {
				redraw = true;
			}
		}
	}
	top_screen_destroy(s);
	term_close(t);
	return 0;
}

/* Where the agent listens: --url, else web.listen of -c FILE (or of the default file), else 127.0.0.1:9474. */
static int
find_agent(struct top_run *tr, const char *url, const char *config_path)
{
	char listen[128] = "127.0.0.1:9474";
	if (!url && (config_path || access(CONFIG_DEFAULT_PATH, R_OK) == 0)) {
		struct config *cfg;
		if (setup_load_config(config_path ? config_path : CONFIG_DEFAULT_PATH, &cfg) != 0) {
			return EX_CONFIG;
		}
		snprintf(listen, sizeof(listen), "%s", cfg->web.listen);
		config_destroy(cfg);
		if (!listen[0]) {
			return 0; /* the web server is off: nobody to ask */
		}
	}
	if (top_endpoint_parse(url ? url : listen, &tr->ep) < 0) {
		fprintf(stderr, "tegrawatch top: cannot use '%s' (http://HOST:PORT)\n", url ? url : listen);
		return EX_USAGE;
	}
	/* a server on every address is asked on loopback */
	if (strcmp(tr->ep.host, "0.0.0.0") == 0 || strcmp(tr->ep.host, "*") == 0) {
		snprintf(tr->ep.host, sizeof(tr->ep.host), "127.0.0.1");
	} else if (strcmp(tr->ep.host, "::") == 0) {
		snprintf(tr->ep.host, sizeof(tr->ep.host), "::1");
	}
	tr->have_agent = true;
	tr->explicit_url = url != NULL;
	return 0;
}

int
cmd_top(int argc, char **argv)
{
	const char *url = NULL, *config_path = NULL;
	bool once = false;
	enum top_view view = TOP_VIEW_OVERVIEW;
	struct top_run tr = {.root = "", .interval_ms = 1000};
	int c;
	while ((c = cli_getopt("top", argc, argv)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			config_path = optarg;
			break;
		case OPT_URL:
			url = optarg;
			break;
		case OPT_ROOT:
			tr.root = optarg;
			break;
		case OPT_ONCE:
			once = true;
			break;
		case OPT_INTERVAL:
			tr.interval_ms = strtol(optarg, NULL, 10);
			if (tr.interval_ms < 100 || tr.interval_ms > 60000) {
				fprintf(stderr, "tegrawatch top: --interval takes 100 to 60000 (ms)\n");
				return EX_USAGE;
			}
			break;
		case OPT_VIEW: {
			int k = 0;
			while (k < TOP_VIEWS && strcmp(optarg, top_view_name((enum top_view)k)) != 0) {
				k++;
			}
			if (k == TOP_VIEWS) {
				fprintf(stderr, "tegrawatch top: --view takes overview, thermal, power or alerts\n");
				return EX_USAGE;
			}
			view = (enum top_view)k;
			break;
		}
		case OPT_HELP:
			cli_usage(stdout, "top");
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tegrawatch top: unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}
	if (url && config_path) {
		fprintf(stderr, "tegrawatch top: --url or -c, not both\n");
		return EX_USAGE;
	}
	int r = find_agent(&tr, url, config_path);
	if (r != 0) {
		return r;
	}
	tr.d = top_data_create();
	buf_init(&tr.body);
	const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR");
	if (!once && (!isatty(STDOUT_FILENO) || (term && strcmp(term, "dumb") == 0))) {
		once = true; /* a pipe, a file, a terminal that cannot place text: one plain screen */
	}
	r = once ? print_once(&tr, view) : run_screen(&tr, view, !(no_color && no_color[0]));
	buf_free(&tr.body);
	top_data_destroy(tr.d);
	throttle_detector_destroy(tr.det);
	source_destroy(tr.hwmon);
	board_destroy(tr.board);
	return r;
}
