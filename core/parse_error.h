/*
 * Where and why input could not be read: filled by parsers and loaders,
 * printed by the caller as "FILE:LINE:COL: message".
 */
#ifndef TEGRAWATCH_PARSE_ERROR_H
#define TEGRAWATCH_PARSE_ERROR_H

#define PARSE_ERROR_MSG_MAX 160

struct parse_error {
	int line;   /* 1-based, 0 when unknown */
	int column; /* 1-based, 0 when unknown */
	char msg[PARSE_ERROR_MSG_MAX];
};

#endif
