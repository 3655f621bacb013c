/* Command lines against a regex (see proc_match.h). */
#include "proc_match.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>

#include "core/xalloc.h"

struct proc_matcher {
	regex_t re;
};

int
proc_regex_check(const char *text, char *err, size_t size)
{
	regex_t re;
	int r = regcomp(&re, text, REG_EXTENDED | REG_NOSUB);
	if (r != 0) {
		regerror(r, &re, err, size);
		return -EINVAL;
	}
	regfree(&re);
	return 0;
}

struct proc_matcher *
proc_matcher_create(const char *regex)
{
	struct proc_matcher *m = xcalloc(1, sizeof(*m));
	if (regcomp(&m->re, regex, REG_EXTENDED | REG_NOSUB) != 0) {
		free(m);
		return NULL;
	}
	return m;
}

void
proc_matcher_destroy(struct proc_matcher *m)
{
	if (m) {
		regfree(&m->re);
		free(m);
	}
}

bool
proc_matcher_test(const struct proc_matcher *m, const char *line)
{
	return regexec(&m->re, line, 0, NULL, 0) == 0;
}
