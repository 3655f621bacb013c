/* The cgroup memory limit on v2, v1 and hybrid hosts (issue 25 item 4). */
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

#include "core/cgroup_memory.h"
#include "helpers.h"

/* A unified (v2) host: systemd's MemoryMax= is memory.max of the service's cgroup. */
static const char v2_cgroup[] = "0::/system.slice/tegrawatch.service\n";
static const char v2_mounts[] =
	"24 30 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
	"35 25 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";

/*
 * A hybrid host (v1 controllers, name=systemd, and a v2 mount without
 * controllers at /sys/fs/cgroup/unified), as systemd 252 sets it up on
 * this project's CI machines: the limit is the v1 memory controller's.
 */
static const char hybrid_cgroup[] = "9:name=systemd:/system.slice/tegrawatch.service\n"
				    "8:pids:/system.slice/tegrawatch.service\n"
				    "4:memory:/system.slice/tegrawatch.service\n"
				    "2:cpu,cpuacct:/system.slice/tegrawatch.service\n"
				    "0::/system.slice/tegrawatch.service\n";
static const char hybrid_mounts[] =
	"40 30 0:35 / /sys/fs/cgroup ro,nosuid,nodev,noexec - tmpfs tmpfs ro,size=4096k,mode=755\n"
	"41 40 0:36 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw\n"
	"42 40 0:37 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,name=systemd\n"
	"45 40 0:40 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,memory\n"
	"46 40 0:41 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu,cpuacct\n";

/* A container whose memory mount's root is its own cgroup (no cgroup namespace). */
static const char nested_cgroup[] = "4:memory:/docker/abc/system.slice/x.service\n";
static const char nested_mounts[] =
	"50 40 0:40 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";

static void
test_files(void **state)
{
	(void)state;
	char paths[1024];
	assert_int_equal(cgroup_memory_files(v2_cgroup, v2_mounts, paths, sizeof(paths)), 0);
	assert_string_equal(paths, "/sys/fs/cgroup/system.slice/tegrawatch.service/memory.max");
	assert_int_equal(paths[strlen(paths) + 1], '\0');

	assert_int_equal(cgroup_memory_files(hybrid_cgroup, hybrid_mounts, paths, sizeof(paths)), 0);
	assert_string_equal(paths, "/sys/fs/cgroup/unified/system.slice/tegrawatch.service/memory.max");
	const char *second = paths + strlen(paths) + 1;
	assert_string_equal(second, "/sys/fs/cgroup/memory/system.slice/tegrawatch.service/memory.limit_in_bytes");

	assert_int_equal(cgroup_memory_files(nested_cgroup, nested_mounts, paths, sizeof(paths)), 0);
	assert_string_equal(paths, "/sys/fs/cgroup/memory/system.slice/x.service/memory.limit_in_bytes");

	/* the root cgroup, and no cgroup file system at all */
	assert_int_equal(cgroup_memory_files("0::/\n", v2_mounts, paths, sizeof(paths)), 0);
	assert_string_equal(paths, "/sys/fs/cgroup/memory.max");
	assert_int_equal(cgroup_memory_files(v2_cgroup, "", paths, sizeof(paths)), -ENOENT);
	assert_int_equal(cgroup_memory_files("", v2_mounts, paths, sizeof(paths)), -ENOENT);
}

static void
put(const char *root, const char *rel, const char *text)
{
	char path[1024], cmd[1100];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	th_write_text(path, text);
}

/* Read below a fixture root: the hybrid host's v2 mount has no memory.max, so the v1 limit is the one. */
static void
test_limit_read(void **state)
{
	(void)state;
	char *root = th_tmpdir("cgroup");
	put(root, "/proc/self/cgroup", hybrid_cgroup);
	put(root, "/proc/self/mountinfo", hybrid_mounts);
	put(root, "/sys/fs/cgroup/memory/system.slice/tegrawatch.service/memory.limit_in_bytes", "67108864\n");
	assert_int_equal(cgroup_memory_limit(root), 67108864);
	/* v1 without a limit reports the page counter's maximum */
	put(root, "/sys/fs/cgroup/memory/system.slice/tegrawatch.service/memory.limit_in_bytes",
	    "9223372036854771712\n");
	assert_int_equal(cgroup_memory_limit(root), 0);
	/* a v2 limit where there is one wins; "max" is none */
	put(root, "/sys/fs/cgroup/unified/system.slice/tegrawatch.service/memory.max", "33554432\n");
	assert_int_equal(cgroup_memory_limit(root), 33554432);
	put(root, "/sys/fs/cgroup/unified/system.slice/tegrawatch.service/memory.max", "max\n");
	assert_int_equal(cgroup_memory_limit(root), 0);
	th_rmtree(root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_limit_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
