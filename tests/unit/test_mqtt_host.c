/* Which broker addresses are this machine (issue 25 item 4: no "tls is off" warning for a local broker). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mqtt/mqtt_config.h"

static void
test_loopback_hosts(void **state)
{
	(void)state;
	const char *local[] = {"localhost", "LOCALHOST", "broker.localhost", "127.0.0.1", "127.1.2.3", "::1",
			       "::ffff:127.0.0.1"};
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++) {
		assert_true(mqtt_host_is_loopback(local[i]));
	}
	const char *remote[] = {"broker.lan", "10.0.0.5", "128.0.0.1", "::2", "::ffff:10.0.0.1", "localhost.example.com",
				"", "127.0.0.1.nip.io"};
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++) {
		assert_false(mqtt_host_is_loopback(remote[i]));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback_hosts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
