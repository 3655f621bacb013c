/* Checks of configured http(s) URLs (see url.h). */
#include "url.h"

#include <string.h>
#include <strings.h>

const char url_has_credentials[] = "credentials in the URL would be logged and shown";

const char *
url_problem(const char *url)
{
	size_t skip = strncasecmp(url, "http://", 7) == 0 ? 7 : strncasecmp(url, "https://", 8) == 0 ? 8 : 0;
	if (!skip) {
		return "only http:// and https:// URLs are supported";
	}
	for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
		if (*p <= 0x20 || *p >= 0x7f) {
			return "the URL holds a space, control character or non-ASCII byte (percent-encode it)";
		}
	}
	const char *host = url + skip;
	size_t authority = strcspn(host, "/?#");
	if (authority == 0 || host[0] == ':') {
		return "the URL has no host";
	}
	if (memchr(host, '@', authority)) {
		return url_has_credentials;
	}
	return NULL;
}
