/*
 * Reading the files a configuration names (the configuration itself, its
 * includes, secret and token files) without ever waiting on them: a FIFO
 * or a device where a file is expected is refused, not opened for good.
 */
#ifndef TEGRAWATCH_READFILE_H
#define TEGRAWATCH_READFILE_H

#include <stddef.h>
#include <sys/stat.h>

/**
 * Opens PATH for reading with O_NONBLOCK (so opening a FIFO with no writer
 * returns at once), O_NOCTTY and O_CLOEXEC, and fills *ST. Returns the
 * descriptor, or -errno; -EINVAL when PATH is not a regular file (nothing
 * is read from it then; *ST says what it is).
 */
int readfile_open(const char *path, struct stat *st);

/**
 * Reads the regular file PATH whole into *OUT (NUL-terminated; *LEN
 * excludes the NUL) when it holds at most MAX bytes. Returns 0, or -errno:
 * -EINVAL when not a regular file, -EFBIG when larger than MAX. ST may be
 * NULL.
 */
int readfile_all(const char *path, size_t max, char **out, size_t *len, struct stat *st);

/**
 * For a secret file: 0 when only its owner may use it, -EACCES when group
 * or others have any access (*MODE gets its permission bits for the
 * message), or another -errno (see readfile_open()). A file inside
 * $CREDENTIALS_DIRECTORY is systemd's (LoadCredential=, readable by the
 * service alone whatever its mode bits say): 0.
 */
int readfile_private(const char *path, unsigned *mode);

/** "a FIFO", "a directory", ...: what a path that is not a regular file is, for messages. */
const char *readfile_kind(mode_t mode);

#endif
