/*
 * Replays fuzz inputs without libFuzzer, so gcc builds run the corpus as an
 * ordinary test:
 *
 *   fuzz_X_replay FILE|DIR...
 *
 * Every FILE, and every regular file directly inside every DIR, is read into
 * a buffer of exactly its size (so ASan sees over-reads) and passed to
 * LLVMFuzzerTestOneInput(). Exits 1 when an argument cannot be read; an
 * invariant violation aborts inside the target.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return -1;
	}
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (len < cap) {
			break;
		}
		uint8_t *bigger = realloc(buf, cap * 2);
		if (!bigger) {
			free(buf);
			fclose(f);
			return -1;
		}
		buf = bigger;
		cap *= 2;
	}
	int failed = ferror(f);
	fclose(f);
	if (failed) {
		fprintf(stderr, "%s: read error\n", path);
		free(buf);
		return -1;
	}
	/* an exact-size copy: reading one byte past the input is caught */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int
run_dir(const char *dir, unsigned *count)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	int ret = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;
		if (e->d_name[0] == '.') {
			continue;
		}
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path)) {
			ret = -1;
			continue;
		}
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			continue;
		}
		if (run_file(path) < 0) {
			ret = -1;
		} else {
			(*count)++;
		}
	}
	closedir(d);
	return ret;
}

int
main(int argc, char **argv)
{
	unsigned count = 0;
	int ret = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			ret = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count) < 0) {
				ret = 1;
			}
		} else if (run_file(argv[i]) < 0) {
			ret = 1;
		} else {
			count++;
		}
	}
	printf("replayed %u inputs\n", count);
	if (count == 0) {
		return 1; /* an empty corpus is a broken test */
	}
	return ret;
}
