/*
 * host/host_source.c on a /proc and /sys tree made here: network.IF.link_lost,
 * the link history the shipped rule network-link-down watches. An interface
 * down since the start never counts as lost (a USB gadget without a host, an
 * unconfigured CAN bus); one seen up, then down, does until it is up again; one
 * that goes and comes back starts a new history; an unreadable operstate
 * leaves both metrics out and keeps the history. The operstate and carrier
 * texts are the kernel's (Documentation/ABI/testing/sysfs-class-net); the
 * /proc/net/dev lines have the layout of netdev.c's comment.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/sample.h"
#include "helpers.h"
#include "host/host_source.h"

struct tree {
	char *root;
	char proc[512];
	char sys[512];
};

/* the directory BASE/REL, whose parent exists */
static void
dir_at(const char *base, const char *rel)
{
	char path[1024];
	th_join(path, sizeof(path), base, rel);
	assert_true(mkdir(path, 0755) == 0 || access(path, F_OK) == 0);
}

/* /proc/net/dev listing the interfaces of NAMES (NULL-terminated), every counter 0 */
static void
put_netdev(const struct tree *t, const char *const *names)
{
	char text[2048];
	size_t n = (size_t)snprintf(text, sizeof(text),
				    "Inter-|   Receive                                                |  Transmit\n"
				    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
				    "errs drop fifo colls carrier compressed\n");
	for (; *names; names++) {
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%6s: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", *names);
	}
	th_write_at(t->proc, "net/dev", text);
}

/* the sysfs link state of NAME: OPERSTATE, and CARRIER unless it is NULL (unreadable while down) */
static void
put_link(const struct tree *t, const char *name, const char *operstate, const char *carrier)
{
	char rel[128], path[1024];
	snprintf(rel, sizeof(rel), "class/net/%s", name);
	dir_at(t->sys, rel);
	snprintf(rel, sizeof(rel), "class/net/%s/operstate", name);
	th_write_at(t->sys, rel, operstate);
	snprintf(rel, sizeof(rel), "class/net/%s/carrier", name);
	th_join(path, sizeof(path), t->sys, rel);
	if (carrier) {
		th_write_text(path, carrier);
	} else {
		unlink(path);
	}
}

static void
up(const struct tree *t, const char *name)
{
	put_link(t, name, "up\n", "1\n");
}

static void
down(const struct tree *t, const char *name)
{
	put_link(t, name, "down\n", NULL);
}

static struct source *
source_on(const struct tree *t)
{
	struct host_config cfg = {.enabled = 1, .fs = {.off = 1}}; /* network only; disks off */
	struct host_source_options o = {.cfg = &cfg, .proc = t->proc, .sys = t->sys};
	struct source *src;
	assert_int_equal(host_source_create(&o, &src), 0);
	return src;
}

static struct sample *
tick(struct source *src, struct sample *s)
{
	sample_clear(s);
	assert_int_equal(src->ops->read(src, s), 0);
	return s;
}

/* network.IF.KEY of the last sample, NAN when absent */
static double
net(const struct sample *s, const char *segment, const char *key)
{
	char name[96];
	double v;
	snprintf(name, sizeof(name), "network.%s.%s", segment, key);
	return metric_set_get(&s->metrics, name, &v) ? v : NAN;
}

/* asserts IF's up and link_lost in S */
static void
link_is(const struct sample *s, const char *segment, double up_v, double lost_v)
{
	assert_true(net(s, segment, "up") == up_v);
	assert_true(net(s, segment, "link_lost") == lost_v);
}

static void
test_link_lost(void **state)
{
	(void)state;
	struct tree t = {.root = th_tmpdir("host-src")};
	snprintf(t.proc, sizeof(t.proc), "%s/proc", t.root);
	snprintf(t.sys, sizeof(t.sys), "%s/sys", t.root);
	dir_at(t.root, "proc");
	dir_at(t.proc, "net");
	dir_at(t.root, "sys");
	dir_at(t.sys, "class");
	dir_at(t.sys, "class/net");
	static const char *const all[] = {"eth0", "usb0", "can0", NULL};
	put_netdev(&t, all);
	up(&t, "eth0");
	put_link(&t, "usb0", "lowerlayerdown\n", "0\n"); /* set up, no carrier: nothing at the other end */
	down(&t, "can0");
	struct source *src = source_on(&t);
	struct sample *s = th_sample_new();

	/* down from the start: shown down, never lost, however long it stays so */
	for (int i = 0; i < 3; i++) {
		tick(src, s);
		link_is(s, "eth0", 1, 0);
		link_is(s, "usb0", 0, 0);
		link_is(s, "can0", 0, 0);
	}
	/* up, then down: lost until it is up again */
	down(&t, "eth0");
	link_is(tick(src, s), "eth0", 0, 1);
	put_link(&t, "eth0", "lowerlayerdown\n", "0\n");
	link_is(tick(src, s), "eth0", 0, 1);
	up(&t, "eth0");
	link_is(tick(src, s), "eth0", 1, 0);
	/* an interface used late (a CAN bus brought up by the application) is lost when it goes down */
	up(&t, "can0");
	link_is(tick(src, s), "can0", 1, 0);
	down(&t, "can0");
	link_is(tick(src, s), "can0", 0, 1);
	link_is(s, "usb0", 0, 0);
	/* "unknown" with a carrier is up (tun, some ppp): usb0 has been up now */
	put_link(&t, "usb0", "unknown\n", "1\n");
	link_is(tick(src, s), "usb0", 1, 0);
	put_link(&t, "usb0", "unknown\n", "0\n");
	link_is(tick(src, s), "usb0", 0, 1);

	/* an operstate that cannot be read or is no operstate: both left out, the history kept */
	put_link(&t, "can0", "garbage\n", NULL);
	tick(src, s);
	assert_true(isnan(net(s, "can0", "up")) && isnan(net(s, "can0", "link_lost")));
	assert_true(net(s, "can0", "receive_bytes_total") == 0);
	down(&t, "can0");
	link_is(tick(src, s), "can0", 0, 1);

	/* can0 goes (its module unloaded) and comes back down: a new interface, never up since */
	static const char *const no_can[] = {"eth0", "usb0", NULL};
	put_netdev(&t, no_can);
	tick(src, s);
	assert_true(isnan(net(s, "can0", "up")) && isnan(net(s, "can0", "link_lost")));
	put_netdev(&t, all);
	link_is(tick(src, s), "can0", 0, 0);
	up(&t, "can0");
	link_is(tick(src, s), "can0", 1, 0);
	down(&t, "can0");
	link_is(tick(src, s), "can0", 0, 1);

	free(s);
	src->ops->destroy(src);
	th_rmtree(t.root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
