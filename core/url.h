/* Checks of the http(s) URLs a configuration names (webhook actions, the fleet sinks). Pure. */
#ifndef TEGRAWATCH_URL_H
#define TEGRAWATCH_URL_H

/* What url_problem() returns for user:password@ in the URL: the caller says what to use instead. */
extern const char url_has_credentials[];

/**
 * NULL when URL is http:// or https://, has a host, no credentials and
 * nothing a request line cannot carry; else what is wrong, for a message.
 */
const char *url_problem(const char *url);

#endif
