/*
 * The dashboard page (web/dashboard/index.html), turned into a C array at
 * build time by scripts/embed.c from web/dashboard/ and core/page/.
 */
#ifndef TEGRAWATCH_DASHBOARD_H
#define TEGRAWATCH_DASHBOARD_H

#include <stddef.h>

extern const unsigned char dashboard_html[];
extern const size_t dashboard_html_len;

#endif
