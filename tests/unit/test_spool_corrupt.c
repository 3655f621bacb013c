/*
 * The spool file damaged: more than a thousand cases (every truncation, zeroed
 * pages, flipped bytes, hand-made ones) checked against a model of which
 * records were touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/log.h"
#include "core/spool.h"
#include "helpers.h"
#include "spool_checks.h"

/* ---- corruption: damaged files against a model ---- */

struct pushed {
	char topic[48];
	char payload[512];
	size_t payload_len;
	int qos;
	bool retain;
};

#define MAX_PUSHED 200
static struct pushed pushed[MAX_PUSHED + 1]; /* by id */

/* An entry of the pristine file, found by this test's own reading of the documented layout. */
struct entry {
	size_t off, len;
	bool is_ack;
	uint64_t value;
};

#define MAX_ENTRIES 256

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static unsigned
rnd_below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

static size_t
parse_entries(const uint8_t *buf, size_t len, struct entry *e)
{
	size_t n = 0, off = 0;
	while (off < len) {
		assert_true(len - off >= 20);
		uint32_t magic = le32(buf + off);
		assert_true(magic == 0x445053FEu || magic == 0x415053FEu);
		assert_true(n < MAX_ENTRIES);
		e[n].off = off;
		e[n].len = 12 + le32(buf + off + 4);
		e[n].is_ack = magic == 0x415053FEu;
		e[n].value = le64(buf + off + 12);
		assert_true(off + e[n].len <= len);
		off += e[n].len;
		n++;
	}
	return n;
}

/*
 * A spool file written through the API: records of random topics, JSON-like
 * payloads, QoS and retain; sometimes a prefix acknowledged (an ack record);
 * sometimes a second batch. Returns the number of ids used.
 */
static unsigned
make_layout(unsigned max_payload, unsigned min_first, unsigned max_first, unsigned max_second)
{
	unlink(spool_path);
	struct spool *sp = open_file(1000, 0);
	unsigned n1 = min_first + rnd_below(max_first - min_first + 1), n2 = rnd_below(max_second + 1), id = 0;
	for (unsigned batch = 0; batch < 2; batch++) {
		unsigned n = batch == 0 ? n1 : n2;
		for (unsigned i = 0; i < n; i++) {
			struct pushed *p = &pushed[++id];
			assert_true(id <= MAX_PUSHED);
			snprintf(p->topic, sizeof(p->topic), "tw/dev%u/%s", rnd_below(100),
				 rnd_below(4) ? "state" : "alerts");
			size_t len = rnd_below(max_payload + 1);
			int k = snprintf(p->payload, sizeof(p->payload), "{\"seq\":%u,\"v\":\"", id);
			while ((size_t)k < len && (size_t)k < sizeof(p->payload) - 1) {
				p->payload[k++] = (char)('a' + rnd_below(26));
			}
			p->payload_len = len < (size_t)k ? len : (size_t)k;
			p->qos = (int)rnd_below(3);
			p->retain = rnd_below(5) == 0;
			assert_int_equal(spool_push(sp, p->topic, p->payload, p->payload_len, p->qos, p->retain), 0);
		}
		assert_int_equal(spool_sync(sp), 0);
		if (batch == 0 && rnd_below(3)) {
			/* Deliver a prefix, out of order: the next sync appends an ack record. */
			unsigned k = 1 + rnd_below(n1);
			for (unsigned i = 0; i < k; i++) {
				assert_non_null(spool_peek_next(sp));
			}
			for (unsigned i = k; i >= 1; i--) {
				spool_ack(sp, i);
			}
		}
	}
	spool_close(sp);
	return id;
}

struct expect {
	uint64_t ids[MAX_ENTRIES];
	size_t count;
	uint64_t runs;
};

/*
 * What recovery must give for DAMAGED (of LEN bytes) made from PRISTINE:
 * every data record whose bytes are all unchanged and above the highest
 * intact ack marker, and one corrupt count per maximal run of touched
 * records (a zero tail beyond the old end joins the run before it).
 */
static void
model(const uint8_t *pristine, size_t plen, const uint8_t *damaged, size_t len, struct expect *ex)
{
	static struct entry e[MAX_ENTRIES];
	size_t n = parse_entries(pristine, plen, e);
	bool bad[MAX_ENTRIES];
	uint64_t marker = 0;
	bool prev_bad = false;
	ex->count = 0;
	ex->runs = 0;
	for (size_t i = 0; i < n; i++) {
		if (e[i].off >= len) {
			bad[i] = false;
			break;
		}
		bad[i] = e[i].off + e[i].len > len || memcmp(pristine + e[i].off, damaged + e[i].off, e[i].len) != 0;
		if (bad[i] && !prev_bad) {
			ex->runs++;
		}
		prev_bad = bad[i];
		if (!bad[i] && e[i].is_ack && e[i].value > marker) {
			marker = e[i].value;
		}
	}
	if (len > plen && !prev_bad) {
		ex->runs++;
	}
	for (size_t i = 0; i < n && e[i].off < len; i++) {
		if (!bad[i] && !e[i].is_ack && e[i].value > marker) {
			ex->ids[ex->count++] = e[i].value;
		}
	}
}

static unsigned cases_run;

/* Opens DAMAGED as the spool file and checks recovery against the model, twice. */
static void
check_case(const uint8_t *pristine, size_t plen, const uint8_t *damaged, size_t len)
{
	struct expect ex;
	model(pristine, plen, damaged, len, &ex);
	th_write_bytes(spool_path, damaged, len, 0644);
	for (int round = 0; round < 2; round++) {
		struct spool *sp = open_file(1000, 0);
		struct spool_stats st = stats(sp);
		/* The first open rewrote the file: the second finds no damage. */
		assert_int_equal(st.corrupt_records, round == 0 ? ex.runs : 0);
		assert_int_equal(st.depth, ex.count);
		assert_int_equal(st.dropped, 0);
		for (size_t i = 0; i < ex.count; i++) {
			const struct spool_record *r = spool_peek_next(sp);
			assert_non_null(r);
			assert_int_equal(r->id, ex.ids[i]);
			const struct pushed *p = &pushed[r->id];
			assert_string_equal(r->topic, p->topic);
			assert_int_equal(r->payload_len, p->payload_len);
			assert_memory_equal(r->payload, p->payload, p->payload_len);
			assert_int_equal(r->qos, p->qos);
			assert_int_equal(r->retain, p->retain);
		}
		assert_null(spool_peek_next(sp));
		spool_close(sp);
	}
	cases_run++;
}

static void
test_corrupt_truncate_every_offset(void **state)
{
	(void)state;
	rng_state = 0x5eed0001;
	make_layout(60, 10, 12, 6);
	size_t plen;
	uint8_t *pristine = (uint8_t *)th_read_file(spool_path, &plen);
	assert_true(plen > 500);
	for (size_t cut = 0; cut <= plen; cut++) {
		check_case(pristine, plen, pristine, cut);
	}
	free(pristine);
}

enum damage {
	DAMAGE_TRUNCATE,
	DAMAGE_FLIP_BYTES,
	DAMAGE_FLIP_HEADER,
	DAMAGE_ZERO_PAGES,
	DAMAGE_ZERO_TAIL,
	DAMAGE_MIXED,
	DAMAGE_KINDS,
};

static void
zero_random_page(uint8_t *buf, size_t len)
{
	size_t pages = (len + 4095) / 4096;
	size_t start = (size_t)rnd_below((unsigned)pages) * 4096;
	size_t end = start + 4096 < len ? start + 4096 : len;
	memset(buf + start, 0, end - start);
}

static void
flip_random_bytes(uint8_t *buf, size_t len, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		buf[rnd_below((unsigned)len)] ^= (uint8_t)(1 + rnd_below(255));
	}
}

static void
test_corrupt_generated_cases(void **state)
{
	(void)state;
	rng_state = 0x5eed0002;
	static struct entry e[MAX_ENTRIES];
	unsigned kinds[DAMAGE_KINDS] = {0};
	for (unsigned layout = 0; layout < 100; layout++) {
		make_layout(400, 20, 60, 40);
		size_t plen;
		uint8_t *pristine = (uint8_t *)th_read_file(spool_path, &plen);
		size_t n = parse_entries(pristine, plen, e);
		uint8_t *buf = malloc(plen + 8192);
		assert_non_null(buf);
		for (unsigned c = 0; c < DAMAGE_KINDS * 2; c++) {
			enum damage kind = (enum damage)(c % DAMAGE_KINDS);
			size_t len = plen;
			memcpy(buf, pristine, plen);
			switch (kind) {
			case DAMAGE_TRUNCATE:
				len = rnd_below((unsigned)plen + 1);
				break;
			case DAMAGE_FLIP_BYTES:
				flip_random_bytes(buf, len, 1 + rnd_below(8));
				break;
			case DAMAGE_FLIP_HEADER: {
				/* magic, length or CRC of one record */
				const struct entry *t = &e[rnd_below((unsigned)n)];
				buf[t->off + rnd_below(12)] ^= (uint8_t)(1 + rnd_below(255));
				break;
			}
			case DAMAGE_ZERO_PAGES:
				zero_random_page(buf, len);
				if (rnd_below(2)) {
					zero_random_page(buf, len);
				}
				break;
			case DAMAGE_ZERO_TAIL:
				/* What a power cut can leave: the size grew, the data never came. */
				memset(buf + plen, 0, 8192);
				len = plen + 1 + rnd_below(8191);
				break;
			case DAMAGE_MIXED:
				len = plen / 2 + rnd_below((unsigned)(plen / 2 + 1));
				if (len > 0) {
					flip_random_bytes(buf, len, 1 + rnd_below(4));
				}
				if (len > 0 && rnd_below(2)) {
					zero_random_page(buf, len);
				}
				break;
			case DAMAGE_KINDS:
				break;
			}
			check_case(pristine, plen, buf, len);
			kinds[kind]++;
		}
		free(buf);
		free(pristine);
	}
	for (int k = 0; k < DAMAGE_KINDS; k++) {
		assert_int_equal(kinds[k], 200);
	}
}

static void
test_corrupt_case_count(void **state)
{
	(void)state;
	/* Runs after the two corruption tests: the acceptance figure is at least 1,000 cases. */
	printf("spool corruption cases checked: %u\n", cases_run);
	assert_true(cases_run >= 1000);
}

/* Garbage before, between and after records: skipped, counted, never fatal. */
static void
test_corrupt_handmade(void **state)
{
	(void)state;
	struct spool *sp = open_file(100, 0);
	for (unsigned i = 1; i <= 3; i++) {
		push_numbered(sp, i);
	}
	spool_close(sp);
	size_t len;
	uint8_t *good = (uint8_t *)th_read_file(spool_path, &len);
	assert_int_equal(len, 3 * 38);
	/* A fake magic with an absurd length, a run of 0xFE, text, and a second copy of record 2. */
	static const uint8_t junk[] = {0xFE, 'S', 'P', 'D', 0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 0xFE, 0xFE, 0xFE, 'x'};
	uint8_t buf[512];
	size_t n = 0;
	memcpy(buf + n, junk, sizeof(junk));
	n += sizeof(junk);
	memcpy(buf + n, good, 38); /* id 1 */
	n += 38;
	memcpy(buf + n, junk, sizeof(junk));
	n += sizeof(junk);
	memcpy(buf + n, good + 38, 76); /* ids 2, 3 */
	n += 76;
	memcpy(buf + n, good + 38, 38); /* id 2 again: not above 3, so refused */
	n += 38;
	memcpy(buf + n, junk, 5);
	n += 5;
	th_write_bytes(spool_path, buf, n, 0644);
	sp = open_file(100, 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.corrupt_records, 3);
	assert_int_equal(st.depth, 3);
	for (uint64_t id = 1; id <= 3; id++) {
		expect_next(sp, id);
	}
	spool_close(sp);
	/* An empty file and a file of zeros. */
	th_write_bytes(spool_path, buf, 0, 0644);
	sp = open_file(100, 0);
	assert_int_equal(stats(sp).corrupt_records, 0);
	assert_int_equal(stats(sp).depth, 0);
	spool_close(sp);
	memset(buf, 0, sizeof(buf));
	th_write_bytes(spool_path, buf, sizeof(buf), 0644);
	sp = open_file(100, 0);
	assert_int_equal(stats(sp).corrupt_records, 1);
	assert_int_equal(stats(sp).depth, 0);
	push_numbered(sp, 1);
	expect_next(sp, 1);
	spool_close(sp);
	free(good);
}

int
main(void)
{
	/* Thousands of damaged files: warnings are still counted, just not printed. */
	log_set_level(LOG_ERROR);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_corrupt_handmade, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_corrupt_truncate_every_offset, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_corrupt_generated_cases, setup_dir, teardown_dir),
		cmocka_unit_test(test_corrupt_case_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
