/* The MQTT sink's arithmetic: the reconnect back-off's draw and the size of a PUBLISH on the wire. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mqtt/mqtt_payload.h"

/* ---- back-off, wire size ---- */

static uint64_t
lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 11;
}

static void
test_backoff(void **state)
{
	(void)state;
	uint64_t x = 42;
	/* attempt 0: the ceiling is the base, so always the base */
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(mqtt_backoff_ms(1000, 60000, 0, lcg(&x)), 1000);
	}
	/* attempt 3: uniform in [0, 8000] raised to at least 1000 */
	double sum = 0;
	int64_t lo = INT64_MAX, hi = 0;
	const int draws = 100000;
	int at_floor = 0;
	for (int i = 0; i < draws; i++) {
		int64_t d = mqtt_backoff_ms(1000, 60000, 3, lcg(&x));
		assert_true(d >= 1000 && d <= 8000);
		sum += (double)d;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		at_floor += d == 1000;
	}
	assert_int_equal(lo, 1000);
	assert_true(hi >= 7990);
	/* mean of max(1000, U{0..8000}) = (1000 * 1001 + (1001 + 8000) * 7000 / 2) / 8001 = 4062.6 */
	assert_true(fabs(sum / draws - 4062.6) < 4062.6 * 0.02);
	/* P(d == floor) = 1001 / 8001 = 12.5 % */
	assert_true(at_floor > draws * 0.115 && at_floor < draws * 0.135);
	/* the cap bounds late attempts; huge attempt numbers do not overflow */
	hi = 0;
	for (int i = 0; i < 10000; i++) {
		int64_t d = mqtt_backoff_ms(1000, 60000, 20, lcg(&x));
		assert_true(d >= 1000 && d <= 60000);
		hi = d > hi ? d : hi;
	}
	assert_true(hi > 59000);
	assert_true(mqtt_backoff_ms(1000, 60000, 1000, UINT64_MAX) <= 60000);
	/* a cap below the base: the base */
	assert_int_equal(mqtt_backoff_ms(5000, 1000, 4, 123456), 5000);
}

static void
test_wire_bytes(void **state)
{
	(void)state;
	/* fixed header 1 + remaining length 1, topic 2 + 10, packet id 2, payload 100 */
	assert_int_equal(mqtt_publish_wire_bytes(10, 100, 1, false), 116);
	assert_int_equal(mqtt_publish_wire_bytes(10, 100, 0, false), 114);
	assert_int_equal(mqtt_publish_wire_bytes(10, 100, 1, true), 117);
	/* 3027 bytes remaining need two length bytes */
	assert_int_equal(mqtt_publish_wire_bytes(23, 3000, 1, false), 3030);
	/* 127 remaining: one byte; 128: two */
	assert_int_equal(mqtt_publish_wire_bytes(0, 123, 1, false), 129);
	assert_int_equal(mqtt_publish_wire_bytes(0, 124, 1, false), 131);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_wire_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
