/* Small text tests shared by the parsers and the metric-name rules: digits, prefixes, suffixes. */
#ifndef TEGRAWATCH_TEXT_H
#define TEGRAWATCH_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/** '0'..'9' only (isdigit() depends on the locale and takes an int). */
static inline bool
text_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/** Do the LEN bytes at S start with the PREFIX_LEN bytes of PREFIX? */
static inline bool
text_starts(const char *s, size_t len, const char *prefix, size_t prefix_len)
{
	return len >= prefix_len && memcmp(s, prefix, prefix_len) == 0;
}

/** Do the LEN bytes at S end with the SUFFIX_LEN bytes of SUFFIX? */
static inline bool
text_ends(const char *s, size_t len, const char *suffix, size_t suffix_len)
{
	return len >= suffix_len && memcmp(s + len - suffix_len, suffix, suffix_len) == 0;
}

/** Does the string S start with the string PREFIX? */
static inline bool
text_has_prefix(const char *s, const char *prefix)
{
	/* the first byte inline: most calls scan every metric of a sample for a few prefixes */
	return prefix[0] == '\0' || (s[0] == prefix[0] && strncmp(s, prefix, strlen(prefix)) == 0);
}

/** Does the string S end with the string SUFFIX? */
static inline bool
text_has_suffix(const char *s, const char *suffix)
{
	return text_ends(s, strlen(s), suffix, strlen(suffix));
}

/* The same, for a string literal LIT. */
#define TEXT_STARTS_LIT(s, len, lit) text_starts((s), (len), (lit), sizeof(lit) - 1)
#define TEXT_ENDS_LIT(s, len, lit) text_ends((s), (len), (lit), sizeof(lit) - 1)

#endif
