/*
 * SHA-256 and HMAC-SHA256 against the published vectors (FIPS 180-4
 * examples, RFC 4231), and the default device id made with them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/device_id.h"
#include "core/sha256.h"
#include "helpers.h"

static void
hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		snprintf(out + 2 * i, 3, "%02x", p[i]);
	}
}

static void
check_sha(const void *data, size_t len, const char *want)
{
	uint8_t d[SHA256_BYTES];
	char got[2 * SHA256_BYTES + 1];
	sha256(data, len, d);
	hex(d, sizeof(d), got);
	assert_string_equal(got, want);
}

static void
test_sha256(void **state)
{
	(void)state;
	check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: a second block */
	check_sha(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	char *million = malloc(1000000);
	assert_non_null(million);
	memset(million, 'a', 1000000);
	check_sha(million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

static void
check_hmac(const void *key, size_t key_len, const char *msg, const char *want)
{
	uint8_t d[SHA256_BYTES];
	char got[2 * SHA256_BYTES + 1];
	hmac_sha256(key, key_len, msg, strlen(msg), d);
	hex(d, sizeof(d), got);
	assert_string_equal(got, want);
}

static void
test_hmac_sha256(void **state)
{
	(void)state;
	uint8_t key[131];
	memset(key, 0x0b, 20);
	check_hmac(key, 20, "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	check_hmac("Jefe", 4, "what do ya want for nothing?",
		   "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, sizeof(key)); /* longer than a block: hashed first */
	check_hmac(key, sizeof(key), "Test Using Larger Than Block-Size Key - Hash Key First",
		   "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void
test_machine_id(void **state)
{
	(void)state;
	char out[33] = "untouched";
	assert_int_equal(device_id_parse_machine_id("0123456789ABCDEF0123456789abcdef\n", out, sizeof(out)), 0);
	assert_string_equal(out, "0123456789abcdef0123456789abcdef");
	assert_int_equal(device_id_parse_machine_id("0123456789abcdef0123456789abcdef", out, sizeof(out)), 0);
	strcpy(out, "untouched");
	assert_int_equal(device_id_parse_machine_id("uninitialized\n", out, sizeof(out)), -EINVAL);
	assert_int_equal(device_id_parse_machine_id("", out, sizeof(out)), -EINVAL);
	assert_int_equal(device_id_parse_machine_id("00000000000000000000000000000000\n", out, sizeof(out)), -EINVAL);
	assert_int_equal(device_id_parse_machine_id("0123456789abcdef0123456789abcdef0\n", out, sizeof(out)), -EINVAL);
	assert_int_equal(device_id_parse_machine_id("0123456789abcdef0123456789abcdeg\n", out, sizeof(out)), -EINVAL);
	assert_int_equal(device_id_parse_machine_id("0123456789abcdef0123456789abcdef\n\n", out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "untouched");
}

static void
test_derive(void **state)
{
	(void)state;
	char a[DEVICE_ID_MAX], b[DEVICE_ID_MAX];
	const char *mid = "0123456789abcdef0123456789abcdef";
	device_id_derive(mid, a, sizeof(a));
	/* HMAC-SHA256(key = the machine id text, "tegrawatch device id"), its first 8 bytes */
	uint8_t mac[SHA256_BYTES];
	char want[64] = "jetson-";
	hmac_sha256(mid, strlen(mid), "tegrawatch device id", 20, mac);
	hex(mac, 8, want + 7);
	assert_string_equal(a, want);
	assert_int_equal(strlen(a), 7 + 16);
	assert_null(strstr(a, "0123456789abcdef")); /* the machine id cannot be read from it */
	device_id_derive(mid, b, sizeof(b));
	assert_string_equal(a, b); /* stable */
	device_id_derive("0123456789abcdef0123456789abcdee", b, sizeof(b));
	assert_string_not_equal(a, b);
}

static void
test_default_order(void **state)
{
	(void)state;
	char *root = th_tmpdir("devid");
	char etc[64], path[96], out[DEVICE_ID_MAX], want[DEVICE_ID_MAX];
	const char *from = NULL;
	struct board_identity id = {0};
	/* nothing readable: the board name as it is */
	device_id_default(root, &id, "orin-lab-1", out, sizeof(out), &from);
	assert_string_equal(out, "orin-lab-1");
	assert_string_equal(from, "board name");
	/* machine-id */
	snprintf(etc, sizeof(etc), "%s/etc", root);
	assert_int_equal(mkdir(etc, 0755), 0);
	snprintf(path, sizeof(path), "%s/machine-id", etc);
	th_write_text(path, "5f2b7c1e9a0d4e6f8b3c2a1d0e9f8a7b\n");
	device_id_default(root, &id, "orin-lab-1", out, sizeof(out), &from);
	device_id_derive("5f2b7c1e9a0d4e6f8b3c2a1d0e9f8a7b", want, sizeof(want));
	assert_string_equal(out, want);
	assert_string_equal(from, "machine-id");
	/* no root (a replay of another board's recording): machine-id is not read */
	device_id_default(NULL, NULL, "orin-lab-1", out, sizeof(out), &from);
	assert_string_equal(out, "orin-lab-1");
	/* the serial wins over machine-id (a cloned image copies machine-id) */
	strcpy(id.serial, "1422019012345");
	device_id_default(root, &id, "orin-lab-1", out, sizeof(out), &from);
	device_id_derive("1422019012345", want, sizeof(want));
	assert_string_equal(out, want);
	assert_string_equal(from, "serial number");
	/* a machine-id during first boot ("uninitialized") is not an id */
	id.serial[0] = '\0';
	th_write_text(path, "uninitialized\n");
	device_id_default(root, &id, "orin-lab-1", out, sizeof(out), &from);
	assert_string_equal(out, "orin-lab-1");
	th_rmtree(root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_hmac_sha256),
		cmocka_unit_test(test_machine_id),
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_default_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
