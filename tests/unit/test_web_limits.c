/* The HTTP server's limits without libmicrohttpd: the connection guard, failed logins per address. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "web/auth_limit.h"
#include "web/conn_guard.h"

#define CONNS 16

/* A connection as the guard sees it: our end of a socket pair, the peer's end to look at. */
struct fake {
	struct conn_entry e;
	int ours, peer;
};

static void
open_fake(struct fake *f)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	f->ours = sv[0];
	f->peer = sv[1];
}

static void
close_fake(struct conn_guard *g, struct fake *f)
{
	conn_guard_remove(g, &f->e);
	close(f->ours);
	if (f->peer >= 0) {
		close(f->peer);
	}
}

/* True when the guard shut the connection down: its peer reads end-of-file. */
static bool
shut(const struct fake *f)
{
	char buf[64];
	ssize_t n;
	while ((n = recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		/* an answer the test left unread */
	}
	return n == 0;
}

/* An answer written and not taken by the client. */
static void
answer_untaken(struct fake *f)
{
	assert_int_equal(send(f->ours, "HTTP", 4, 0), 4);
}

/* The client's request head, sent and not yet read by the server. */
static void
send_head(struct fake *f)
{
	assert_int_equal(send(f->peer, "G", 1, 0), 1);
}

static void
addr(unsigned char key[16], unsigned char last)
{
	memset(key, 0, 16);
	key[10] = key[11] = 0xff;
	key[12] = 127;
	key[15] = last;
}

static bool add(struct conn_guard *g, struct fake *f, unsigned char last, int64_t now);

/* A connection whose client has sent its request head, not yet read by the server. */
static bool
add_head(struct conn_guard *g, struct fake *f, unsigned char last, int64_t now)
{
	unsigned char key[16];
	addr(key, last);
	open_fake(f);
	send_head(f);
	return conn_guard_add(g, &f->e, f->ours, key, now);
}

static const struct conn_limits limits = {
	.max_conns = 6,
	.per_ip = 3,
	.max_streams = 2,
	.header_timeout_ms = 5000,
	.stall_ms = 30000,
};

static bool
add(struct conn_guard *g, struct fake *f, unsigned char last, int64_t now)
{
	unsigned char key[16];
	addr(key, last);
	open_fake(f);
	return conn_guard_add(g, &f->e, f->ours, key, now);
}

static void
test_per_address_evicts_the_longest_waiting(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	/* three from 127.0.0.1: the per-address limit */
	assert_true(add(&g, &f[0], 1, 1000));
	assert_true(add(&g, &f[1], 1, 1100));
	assert_true(add(&g, &f[2], 1, 1200));
	conn_guard_set_phase(&g, &f[1].e, CONN_BUSY, 1300);
	/* a fourth, once their grace is over, evicts the one that has waited longest for its request head */
	const int64_t t = 1200 + CONN_GRACE_MS;
	assert_true(add(&g, &f[3], 1, t));
	assert_true(shut(&f[0]));
	assert_false(shut(&f[1]) || shut(&f[2]) || shut(&f[3]));
	/* a busy connection counts; the next newcomer evicts the next waiting one */
	assert_true(add(&g, &f[4], 1, t + 100));
	assert_true(shut(&f[2]));
	assert_false(shut(&f[1]) || shut(&f[3]) || shut(&f[4]));
	/* another address is not touched by the per-address limit */
	assert_true(add(&g, &f[5], 2, t + 200));
	assert_false(shut(&f[5]));
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.evicted, 2);
	assert_int_equal(cs.refused, 0);
	assert_int_equal(cs.open, 6);
	for (int i = 0; i < 6; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.open, 0);
	conn_guard_fini(&g);
}

/* Issue 21: a burst of fresh connections from one address is read before anyone is evicted. */
static void
test_burst_is_admitted_then_trimmed(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	/* twice the global limit from one address at once, their heads sent and none read yet: all admitted */
	for (int i = 0; i < 12; i++) {
		assert_true(add_head(&g, &f[i], 1, 1000 + i));
	}
	for (int i = 0; i < 12; i++) {
		assert_false(shut(&f[i]));
	}
	/* beyond twice the global limit, with nobody past its grace nor idle, the newcomer goes */
	assert_false(add_head(&g, &f[12], 1, 1015));
	assert_true(shut(&f[12]));
	/* three are answered and kept alive; the sweep leaves everybody alone within the grace */
	for (int i = 0; i < 3; i++) {
		conn_guard_set_phase(&g, &f[i].e, CONN_BUSY, 1015);
		conn_guard_set_phase(&g, &f[i].e, CONN_WAITING, 1020);
	}
	conn_guard_sweep(&g, 1000 + CONN_GRACE_MS - 1);
	for (int i = 0; i < 12; i++) {
		assert_false(shut(&f[i]));
	}
	/* past it, a head still unread is the server's delay: nobody goes */
	conn_guard_sweep(&g, 1020 + CONN_GRACE_MS - 1);
	for (int i = 0; i < 12; i++) {
		assert_false(shut(&f[i]));
	}
	/* once read, heads still incomplete (slow clients) go, oldest first, down to the per-address limit */
	for (int i = 0; i < 12; i++) {
		char c;
		assert_int_equal(recv(f[i].ours, &c, 1, MSG_DONTWAIT), 1);
	}
	conn_guard_sweep(&g, 1020 + CONN_GRACE_MS - 1);
	for (int i = 3; i < 12; i++) {
		assert_true(shut(&f[i]));
	}
	assert_false(shut(&f[0]) || shut(&f[1]) || shut(&f[2]));
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.evicted, 9);
	assert_int_equal(cs.refused, 1);
	for (int i = 0; i < 13; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_fini(&g);
}

/*
 * A head the server has read but not parsed yet (TSan: a newcomer's accept ran in between) is not idle for
 * CONN_READ_GRACE_MS; a connection served before and waiting again is idle at once.
 */
static void
test_read_grace_and_served(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	/* three read (nothing left unread), not parsed; f[0] was served before and waits again */
	for (int i = 0; i < 3; i++) {
		assert_true(add(&g, &f[i], 1, 1000));
	}
	conn_guard_set_phase(&g, &f[0].e, CONN_BUSY, 1001);
	conn_guard_set_phase(&g, &f[0].e, CONN_WAITING, 1002);
	/* a fourth within the read grace: only the served one goes */
	assert_true(add(&g, &f[3], 1, 1003));
	assert_true(shut(&f[0]));
	assert_false(shut(&f[1]) || shut(&f[2]) || shut(&f[3]));
	/* a fifth past the read grace: the longest waiting of the others goes */
	assert_true(add(&g, &f[4], 1, 1000 + CONN_READ_GRACE_MS));
	assert_true(shut(&f[1]));
	assert_false(shut(&f[2]) || shut(&f[3]) || shut(&f[4]));
	for (int i = 0; i < 5; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_fini(&g);
}

/* A connection whose client has closed its end frees its slot without evicting anyone. */
static void
test_gone_clients_do_not_count(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	/* two that never sent anything and whose clients went away */
	assert_true(add(&g, &f[0], 1, 1000));
	assert_true(add(&g, &f[1], 1, 1000));
	close(f[0].peer);
	close(f[1].peer);
	f[0].peer = f[1].peer = -1;
	/* six with their heads waiting fit under twice the limit without evicting anyone: the two gone do not count */
	for (int i = 2; i < 8; i++) {
		assert_true(add_head(&g, &f[i], 1, 1001));
	}
	for (int i = 2; i < 8; i++) {
		assert_false(shut(&f[i]));
	}
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.evicted + cs.refused, 0);
	for (int i = 0; i < 8; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_fini(&g);
}

static void
test_all_busy_admits_up_to_twice_the_limit(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	for (int i = 0; i < 3; i++) {
		assert_true(add(&g, &f[i], 1, 1000));
		conn_guard_set_phase(&g, &f[i].e, CONN_BUSY, 1000);
	}
	/* answers under way for less than CONN_STUCK_MS: newcomers wait beside them, up to twice the global limit */
	const int64_t t = 1000 + CONN_STUCK_MS - 1;
	for (int i = 3; i < 12; i++) {
		assert_true(add_head(&g, &f[i], 1, t));
	}
	assert_false(add_head(&g, &f[12], 1, t));
	assert_true(shut(&f[12]));
	/* answers being made for CONN_STUCK_MS (a slow machine) are nobody's fault: the newcomer is refused */
	assert_false(add(&g, &f[13], 1, 1000 + CONN_STUCK_MS));
	assert_false(shut(&f[0]) || shut(&f[1]) || shut(&f[2]));
	/* answers waiting in their sockets for CONN_STUCK_MS (clients that do not read) make room */
	for (int i = 0; i < 3; i++) {
		answer_untaken(&f[i]);
	}
	assert_true(add(&g, &f[14], 1, 1000 + CONN_STUCK_MS));
	assert_true(shut(&f[0]) && shut(&f[1]) && shut(&f[2]));
	for (int i = 3; i < 12; i++) {
		assert_false(shut(&f[i]));
	}
	assert_false(shut(&f[14]));
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.refused, 2);
	assert_int_equal(cs.evicted, 3);
	for (int i = 0; i < 15; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_fini(&g);
}

static void
test_global_limit_and_header_timeout(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	/* two from each of three addresses: the global limit of 6 */
	for (int i = 0; i < 6; i++) {
		assert_true(add(&g, &f[i], (unsigned char)(2 + i / 2), 1000 + i));
	}
	/* a seventh, from yet another address, evicts the oldest waiting anywhere */
	assert_true(add(&g, &f[6], 9, 1000 + CONN_GRACE_MS + 3));
	assert_true(shut(&f[0]));
	/* the sweep closes what waited for its request head for the header timeout */
	conn_guard_set_phase(&g, &f[1].e, CONN_BUSY, 1500);
	conn_guard_sweep(&g, 1001 + 5000);
	assert_true(shut(&f[1]) == false);
	assert_true(shut(&f[2]) == false);
	conn_guard_sweep(&g, 1005 + 5000);
	for (int i = 2; i < 6; i++) {
		assert_true(shut(&f[i]));
	}
	assert_false(shut(&f[1]) || shut(&f[6]));
	/* an answer done: the kept-alive connection waits again, and times out from then */
	conn_guard_set_phase(&g, &f[1].e, CONN_WAITING, 7000);
	conn_guard_sweep(&g, 7000 + 4999);
	assert_false(shut(&f[1]));
	conn_guard_sweep(&g, 7000 + 5000);
	assert_true(shut(&f[1]));
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.evicted, 1);
	assert_int_equal(cs.timed_out, 6); /* f[2..5], f[6] at 3003 + 5000 <= 12000, f[1] */
	for (int i = 0; i < 7; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_fini(&g);
}

/* Issue 21: a stream whose client went away frees its place in the budget at once. */
static void
test_gone_stream_frees_its_place(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	for (int i = 0; i < 3; i++) {
		assert_true(add(&g, &f[i], 1, 1000));
		conn_guard_set_phase(&g, &f[i].e, CONN_BUSY, 1000);
	}
	assert_int_equal(conn_guard_start_stream(&g, &f[0].e, 1000), 0);
	assert_int_equal(conn_guard_start_stream(&g, &f[1].e, 1000), 0);
	close(f[0].peer);
	f[0].peer = -1;
	assert_int_equal(conn_guard_start_stream(&g, &f[2].e, 1000), 0);
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.streams_refused, 0);
	for (int i = 0; i < 3; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_fini(&g);
}

static void
test_streams_have_their_own_budget(void **state)
{
	(void)state;
	struct conn_guard g;
	conn_guard_init(&g, &limits);
	struct fake f[CONNS];
	for (int i = 0; i < 3; i++) {
		assert_true(add(&g, &f[i], 1, 1000));
		conn_guard_set_phase(&g, &f[i].e, CONN_BUSY, 1000);
	}
	assert_int_equal(conn_guard_start_stream(&g, &f[0].e, 1000), 0);
	assert_int_equal(conn_guard_start_stream(&g, &f[1].e, 1000), 0);
	assert_int_equal(conn_guard_start_stream(&g, &f[2].e, 1000), -EBUSY);
	/* streams do not count against the per-address limit, nor time out waiting for events */
	conn_guard_stream_progress(&f[0].e, 1000, true);
	conn_guard_stream_progress(&f[1].e, 1000, true);
	assert_true(add(&g, &f[3], 1, 1000));
	assert_true(add(&g, &f[4], 1, 1000));
	conn_guard_sweep(&g, 100000);
	assert_false(shut(&f[0]) || shut(&f[1]));
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.streams, 2);
	assert_int_equal(cs.streams_refused, 1);
	assert_int_equal(cs.evicted + cs.refused, 0);
	close_fake(&g, &f[0]);
	assert_int_equal(conn_guard_start_stream(&g, &f[2].e, 1000), 0);
	for (int i = 1; i < 5; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.streams, 0);
	assert_int_equal(cs.open, 0);
	conn_guard_fini(&g);
}

static void
test_stalled_streams(void **state)
{
	(void)state;
	struct conn_guard g;
	struct conn_limits lim = limits;
	lim.stall_ms = 30000;
	conn_guard_init(&g, &lim);
	struct fake f[CONNS];
	for (int i = 0; i < 3; i++) {
		assert_true(add(&g, &f[i], 1, 1000));
		conn_guard_set_phase(&g, &f[i].e, CONN_BUSY, 1000);
	}
	assert_int_equal(conn_guard_start_stream(&g, &f[0].e, 1000), 0);
	assert_int_equal(conn_guard_start_stream(&g, &f[1].e, 1000), 0);
	/* f[0] waits for events (parked): never stalled; f[1] has had something to send since 2000 */
	conn_guard_stream_progress(&f[0].e, 1000, true);
	conn_guard_stream_progress(&f[1].e, 2000, false);
	conn_guard_sweep(&g, 2000 + 29999);
	assert_false(shut(&f[0]) || shut(&f[1]));
	conn_guard_sweep(&g, 2000 + 30000);
	assert_true(shut(&f[1]));
	assert_false(shut(&f[0]));
	conn_guard_sweep(&g, 1000000);
	assert_false(shut(&f[0]));
	struct conn_stats cs;
	conn_guard_get_stats(&g, &cs);
	assert_int_equal(cs.streams_stalled, 1);
	for (int i = 0; i < 3; i++) {
		close_fake(&g, &f[i]);
	}
	conn_guard_fini(&g);
}

static void
test_failed_logins(void **state)
{
	(void)state;
	static struct auth_limit l; /* 30 KiB: not on the stack */
	auth_limit_init(&l);
	unsigned char a[16], b[16];
	addr(a, 1);
	addr(b, 2);
	/* ten failures a second apart: the eleventh attempt waits for the first to leave the minute */
	for (int i = 0; i < AUTH_FAILS_MAX; i++) {
		assert_int_equal(auth_limit_check(&l, a, 1000 + i * 1000), 0);
		auth_limit_failed(&l, a, 1000 + i * 1000);
	}
	assert_int_equal(auth_limit_check(&l, a, 10500), 1000 + AUTH_WINDOW_MS - 10500);
	assert_int_equal(auth_limit_check(&l, b, 10500), 0); /* another address */
	assert_int_equal(auth_limit_check(&l, a, 1000 + AUTH_WINDOW_MS - 1), 1);
	assert_int_equal(auth_limit_check(&l, a, 1000 + AUTH_WINDOW_MS), 0);
	/* one more failure: blocked again until the second one leaves */
	auth_limit_failed(&l, a, 1000 + AUTH_WINDOW_MS);
	assert_int_equal(auth_limit_check(&l, a, 1000 + AUTH_WINDOW_MS), 1000);
	assert_int_equal(atomic_load(&l.failures), AUTH_FAILS_MAX + 1);
	assert_int_equal(atomic_load(&l.throttled), 3);
	/* a full table: the address that failed least recently makes room */
	for (int i = 0; i < AUTH_ADDRS; i++) {
		unsigned char k[16];
		addr(k, 0);
		k[13] = (unsigned char)(i + 1);
		auth_limit_failed(&l, k, 100000 + i);
	}
	assert_int_equal(auth_limit_check(&l, a, 100000), 0); /* a was forgotten */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_address_evicts_the_longest_waiting),
		cmocka_unit_test(test_burst_is_admitted_then_trimmed),
		cmocka_unit_test(test_gone_clients_do_not_count),
		cmocka_unit_test(test_read_grace_and_served),
		cmocka_unit_test(test_all_busy_admits_up_to_twice_the_limit),
		cmocka_unit_test(test_gone_stream_frees_its_place),
		cmocka_unit_test(test_global_limit_and_header_timeout),
		cmocka_unit_test(test_streams_have_their_own_budget),
		cmocka_unit_test(test_stalled_streams),
		cmocka_unit_test(test_failed_logins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
