/* top/: the snapshot reader, the screen model at several sizes, the HTTP answer parser; no I/O. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "top/top.h"
#include "top/top_http.h"

static const char snapshot[] =
	"{\"board\": {\"model\": \"Jetson Orin Nano Super\", \"soc\": \"tegra234\", \"module\": \"p3767-0005\","
	" \"l4t\": \"36.4.3\", \"jetpack\": \"6.2\"},"
	" \"agent\": {\"version\": \"0.1.0\", \"interval_ms\": 1000, \"uptime_s\": 44},"
	" \"seq\": 440, \"ts\": \"2025-03-14T10:07:19Z\", \"time_ms\": 1741946839000, \"power_mode\": \"MAXN_SUPER\","
	" \"metrics\": {\"cpu.load_pct\": 40, \"cpu.0.load_pct\": 12, \"cpu.0.freq_mhz\": 1728, \"cpu.0.online\": 1,"
	" \"cpu.0.min_freq_mhz\": 729, \"cpu.0.max_freq_mhz\": 1728, \"cpu.1.online\": 0,"
	" \"temp.cpu_c\": 92.375, \"trip.cpu.passive_c\": 95, \"headroom.cpu_c\": 2.625, \"throttle_eta.cpu_s\": 40,"
	" \"temp.gpu_c\": 95.343, \"trip.gpu.passive_c\": 95, \"temp.soc0_c\": 50,"
	" \"gpu.freq_mhz\": 714, \"gpu.load_pct\": 99, \"emc.freq_mhz\": 3199, \"emc.load_pct\": 40,"
	" \"engine.nvenc.on\": 0, \"engine.ape.freq_mhz\": 174,"
	" \"power.vdd_in.mw\": 14144, \"power.vdd_in.avg_mw\": 12000, \"energy.vdd_in.joules_total\": 620,"
	" \"fan.0.pwm\": 255, \"fan.0.rpm\": 4200, \"thermal.hot_surface\": 1,"
	" \"ram.used_mb\": 3456, \"ram.total_mb\": 7620, \"swap.used_mb\": 0, \"swap.total_mb\": 3810,"
	" \"throttle.active\": 1},"
	" \"throttle\": {\"active\": true, \"reasons\": {\"thermal\": \"tj at 95.3 C >= passive trip 95.0 C\"},"
	" \"context\": \"power mode MAXN_SUPER\"},"
	" \"alerts\": [{\"rule\": \"temperature\", \"metric\": \"temp.gpu_c\", \"transition\": \"escalated\","
	" \"status\": \"firing\", \"severity\": \"critical\", \"value\": 95.312, \"threshold\": 95, \"labels\": {},"
	" \"at\": \"2025-03-14T10:07:13Z\", \"starts_at\": \"2025-03-14T10:05:11Z\", \"ends_at\": null,"
	" \"summary\": \"temp.gpu_c is 95.312 C (critical at 95 C)\"}]}";

static struct top_data *
loaded(void)
{
	struct top_data *d = top_data_create();
	assert_int_equal(top_data_from_snapshot(d, snapshot), 0);
	snprintf(d->source, sizeof(d->source), "agent 127.0.0.1:9474");
	return d;
}

/* The row holding NEEDLE, or -1. */
static int
row_of(const struct top_screen *s, const char *needle)
{
	for (int i = 0; i < s->height; i++) {
		if (strstr(s->lines[i].text, needle)) {
			return i;
		}
	}
	print_message("not on the screen: '%s'\n", needle);
	for (int i = 0; i < s->height; i++) {
		print_message("|%s|\n", s->lines[i].text);
	}
	return -1;
}

static void
assert_fits(const struct top_screen *s)
{
	for (int i = 0; i < s->height; i++) {
		assert_true((int)strlen(s->lines[i].text) <= s->width);
		for (int k = 0; k < s->lines[i].span_count; k++) {
			assert_true(s->lines[i].spans[k].col + s->lines[i].spans[k].len <= s->width);
		}
	}
}

static void
test_snapshot_read(void **state)
{
	(void)state;
	struct top_data *d = loaded();
	assert_string_equal(d->id.model, "Jetson Orin Nano Super");
	assert_string_equal(d->sample->power_mode, "MAXN_SUPER");
	assert_string_equal(d->ts, "2025-03-14T10:07:19Z");
	assert_true(d->have_sample && d->alerts_known);
	assert_true(d->sample->throttle.active && d->sample->throttle.reason[THROTTLE_THERMAL]);
	assert_int_equal(d->alert_count, 1);
	assert_string_equal(d->alerts[0].rule, "temperature");
	assert_string_equal(d->alerts[0].since, "2025-03-14T10:05:11Z");
	assert_true(fabs(d->alerts[0].value - 95.312) < 1e-9);
	/* a bad answer changes nothing */
	assert_int_equal(top_data_from_snapshot(d, "{\"metrics\": {\"temp.cpu_c\": 1}, \"alerts\": [}"), -EINVAL);
	assert_int_equal(d->alert_count, 1);
	double v;
	assert_true(metric_set_get(&d->sample->metrics, "temp.cpu_c", &v) && v == 92.375);
	/* before the agent's first sample */
	assert_int_equal(top_data_from_snapshot(d, "{\"seq\": 0, \"ts\": null, \"time_ms\": null, \"metrics\": {},"
						   " \"throttle\": {\"active\": false, \"reasons\": {}}, \"alerts\": []}"),
			 0);
	assert_false(d->have_sample);
	struct top_screen *s = top_screen_create(80, 24);
	top_render(s, d, TOP_VIEW_OVERVIEW);
	assert_true(row_of(s, "waiting for the first sample") > 0);
	top_screen_destroy(s);
	top_data_destroy(d);
}

static void
test_overview_80x24(void **state)
{
	(void)state;
	struct top_data *d = loaded();
	struct top_screen *s = top_screen_create(80, 24);
	top_render(s, d, TOP_VIEW_OVERVIEW);
	assert_fits(s);
	assert_int_equal(s->lines[0].style, TOP_STYLE_NORMAL);
	assert_int_equal(s->lines[0].spans[0].style, TOP_STYLE_TITLE);
	assert_int_equal(row_of(s, "tegrawatch top  2025-03-14T10:07:19Z  [agent 127.0.0.1:9474]"), 0);
	/* the alert count does not fit beside it at 80 columns: the ALERT line says it */
	assert_int_equal(row_of(s, "mode MAXN_SUPER  jetson_clocks ?  THROTTLED: thermal  HOT SURFACE"), 1);
	assert_true(row_of(s, " 0  12% 1728 729-1728") > 1);
	assert_true(row_of(s, " 1 off") > 1);
	assert_true(row_of(s, "99%  714 MHz") > 1);
	assert_true(row_of(s, "EMC   40%  3199 MHz") > 1);
	assert_true(row_of(s, "nvenc off  ape 174 MHz") > 1);
	assert_true(row_of(s, "cpu 92.4 (40s)  gpu 95.3  soc0 50.0") > 1);
	assert_true(row_of(s, "vdd_in 14.14 W") > 1);
	assert_true(row_of(s, "fan0 pwm 255 4200 rpm") > 1);
	assert_true(row_of(s, "RAM 3456/7620 MiB (45%)  swap 0/3810 MiB") > 1);
	assert_true(row_of(s, "temperature temp.gpu_c (critical)") > 1);
	assert_int_equal(row_of(s, "1 overview  2 thermal  3 power  4 alerts"), 23);
	/* the hot zones stand out: the gpu at its trip is critical, the cpu within 10 C a warning */
	int r = row_of(s, "cpu 92.4");
	const struct top_line *l = &s->lines[r];
	bool crit = false, warn = false;
	for (int k = 0; k < l->span_count; k++) {
		crit |= l->spans[k].style == TOP_STYLE_CRIT && strncmp(l->text + l->spans[k].col, "gpu", 3) == 0;
		warn |= l->spans[k].style == TOP_STYLE_WARN && strncmp(l->text + l->spans[k].col, "cpu", 3) == 0;
	}
	assert_true(crit && warn);
	top_screen_destroy(s);
	top_data_destroy(d);
}

/* What host/ reads on the real root: disks, network, available memory, OOM kills, with their styles. */
static void
test_overview_host(void **state)
{
	(void)state;
	static const char host[] =
		"{\"board\": {\"model\": \"x86 box\"}, \"ts\": \"2025-03-14T10:07:19Z\", \"time_ms\": 1,"
		" \"metrics\": {\"ram.used_mb\": 3456, \"ram.total_mb\": 7620, \"ram.available_mb\": 4100,"
		" \"filesystem.root.used_pct\": 42.4, \"filesystem.root.avail_mb\": 12288,"
		" \"filesystem.data.used_pct\": 97.5, \"filesystem.data.avail_mb\": 20, \"filesystem.data.readonly\": 1,"
		" \"network.eth0.up\": 1, \"network.eth0.receive_bytes_total\": 1610612736,"
		" \"network.eth0.transmit_bytes_total\": 209715200, \"network.wlan0.up\": 0, \"oom.kills_total\": 2},"
		" \"throttle\": {\"active\": false, \"reasons\": {}, \"context\": \"\"}, \"alerts\": []}";
	struct top_data *d = top_data_create();
	assert_int_equal(top_data_from_snapshot(d, host), 0);
	struct top_screen *s = top_screen_create(80, 24);
	top_render(s, d, TOP_VIEW_OVERVIEW);
	assert_fits(s);
	assert_true(row_of(s, "available 4100 MiB") > 1);
	int r = row_of(s, "root 42% (12.0 GiB free)");
	assert_true(r > 1);
	assert_true(row_of(s, "data 98% (20.0 MiB free)") >= r);
	assert_true(row_of(s, "data READ-ONLY") >= r);
	assert_true(row_of(s, "eth0 up rx 1.5 GiB tx 200.0 MiB") > r);
	assert_true(row_of(s, "wlan0 DOWN") > r);
	assert_true(row_of(s, "2 kills since boot") > r);
	/* a full or read-only file system is critical, a link down a warning */
	bool crit = false, warn = false;
	for (int i = 0; i < s->height; i++) {
		const struct top_line *l = &s->lines[i];
		for (int k = 0; k < l->span_count; k++) {
			crit |= l->spans[k].style == TOP_STYLE_CRIT && strncmp(l->text + l->spans[k].col, "data", 4) == 0;
			warn |= l->spans[k].style == TOP_STYLE_WARN && strncmp(l->text + l->spans[k].col, "wlan0", 5) == 0;
		}
	}
	assert_true(crit && warn);
	top_screen_destroy(s);
	top_data_destroy(d);
}

static void
test_overview_wide_and_small(void **state)
{
	(void)state;
	struct top_data *d = loaded();
	struct top_screen *s = top_screen_create(200, 60);
	top_render(s, d, TOP_VIEW_OVERVIEW);
	assert_fits(s);
	/* two columns: the temperatures beside the CPU */
	int cpu = row_of(s, "CPU"), temp = row_of(s, "TEMP");
	assert_int_equal(cpu, temp);
	assert_true(strstr(s->lines[temp].text, "TEMP") - s->lines[temp].text >= 99);
	assert_int_equal(row_of(s, "1 overview"), 59);
	assert_int_equal(row_of(s, "HOT SURFACE  1 alert firing"), 1);
	top_screen_destroy(s);
	/* too small for everything: it says so, and never writes past the edges */
	const int sizes[][2] = {{80, 8}, {20, 5}, {1, 1}, {5, 2}, {40, 3}};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		s = top_screen_create(sizes[i][0], sizes[i][1]);
		for (int v = 0; v < TOP_VIEWS; v++) {
			top_render(s, d, (enum top_view)v);
			assert_fits(s);
		}
		top_screen_destroy(s);
	}
	s = top_screen_create(80, 8);
	top_render(s, d, TOP_VIEW_OVERVIEW);
	assert_int_equal(row_of(s, "... more below"), 6);
	top_screen_destroy(s);
	top_data_destroy(d);
}

static void
test_views(void **state)
{
	(void)state;
	struct top_data *d = loaded();
	struct top_screen *s = top_screen_create(80, 24);
	top_render(s, d, TOP_VIEW_THERMAL);
	assert_fits(s);
	assert_true(row_of(s, "cpu               92.4     95.0        -       2.6        -  40 s") > 1);
	assert_true(row_of(s, "HOT SURFACE yes") > 1);
	top_render(s, d, TOP_VIEW_POWER);
	assert_true(row_of(s, "vdd_in                14.14    12.00        -         620") > 1);
	assert_true(row_of(s, "thermal:") > 1);
	assert_true(row_of(s, "tj at 95.3 C >= passive trip 95.0 C") > 1);
	top_render(s, d, TOP_VIEW_ALERTS);
	assert_true(row_of(s, "firing   critical temperature") > 1);
	assert_true(row_of(s, "temp.gpu_c is 95.312 C (critical at 95 C)") > 1);
	/* the text of a screen: no trailing blanks, the keys last */
	char *text = top_screen_text(s);
	assert_null(strstr(text, " \n"));
	assert_non_null(strstr(text, "q: quit\n"));
	free(text);
	/* read from the board: no alerts known */
	d->alerts_known = false;
	d->alert_count = 0;
	top_render(s, d, TOP_VIEW_OVERVIEW);
	assert_true(row_of(s, "none known: no agent") > 1);
	top_screen_destroy(s);
	top_data_destroy(d);
}

static void
test_http_parse(void **state)
{
	(void)state;
	int status;
	size_t body, len;
	const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}xx";
	assert_int_equal(top_http_parse(ok, sizeof(ok) - 1, &status, &body, &len), 0);
	assert_int_equal(status, 200);
	assert_int_equal(len, 2);
	assert_memory_equal(ok + body, "{}", 2);
	const char noclen[] = "HTTP/1.0 503 Busy\r\n\r\n{\"error\":1}";
	assert_int_equal(top_http_parse(noclen, sizeof(noclen) - 1, &status, &body, &len), 0);
	assert_int_equal(status, 503);
	assert_int_equal(len, 11);
	const char *bad[] = {"", "HTTP/1.1 20", "HTTP/1.1 2x0 OK\r\n\r\n", "SSH-2.0-OpenSSH\r\n\r\n",
			     "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "HTTP/1.1 200 OK\r\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(top_http_parse(bad[i], strlen(bad[i]), &status, &body, &len), -EBADMSG);
	}
	struct top_endpoint ep;
	assert_int_equal(top_endpoint_parse("http://127.0.0.1:9555/", &ep), 0);
	assert_string_equal(ep.host, "127.0.0.1");
	assert_string_equal(ep.port, "9555");
	assert_int_equal(top_endpoint_parse("[::1]:80", &ep), 0);
	assert_string_equal(ep.host, "::1");
	assert_int_equal(top_endpoint_parse("localhost", &ep), 0);
	assert_string_equal(ep.port, "9474");
	const char *refused[] = {"https://x:1", "", ":80", "x:", "x:123456", "x:80z", "[::1", "x:70000"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(top_endpoint_parse(refused[i], &ep), -EINVAL);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_read),       cmocka_unit_test(test_overview_80x24),
		cmocka_unit_test(test_overview_wide_and_small), cmocka_unit_test(test_views),
		cmocka_unit_test(test_http_parse),          cmocka_unit_test(test_overview_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
