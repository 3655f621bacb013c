/*
 * Replacing a file whole, the one way every writer of the tree does it: the
 * new content goes to PATH.tmp in the same directory, is fsynced, renamed
 * over PATH, and the directory is fsynced. A reader, a crash or a power cut
 * sees the old file or the new one, never a mix. On a failure before the
 * rename the temporary file is removed and the old file stays as it was.
 *
 * PATH.tmp is locked (flock) while it is written, so two writers of the same
 * PATH never write into each other's file: the second gets -EBUSY. A
 * PATH.tmp left by a crash is taken over by the next writer.
 */
#ifndef TEGRAWATCH_ATOMIC_FILE_H
#define TEGRAWATCH_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/** A replacement of one file being written (its temporary file, open). */
struct atomic_file;

/**
 * Replaces PATH with the LEN bytes of DATA (created with MODE, less the
 * umask, when PATH.tmp does not exist). Returns 0, or -errno: before the
 * rename nothing changed; a failed fsync of the directory, the one step after
 * it, leaves the new file in place, not yet known to be on the disk.
 */
int atomic_write_file(const char *path, const void *data, size_t len, mode_t mode);

/**
 * Starts a replacement of PATH: opens (creates with MODE, less the umask)
 * and locks PATH.tmp, empty. Returns 0 and *RET, or -errno (-EBUSY: another
 * writer is replacing PATH now). End it with exactly one of
 * atomic_file_commit(), atomic_file_commit_keep() or atomic_file_abort().
 */
int atomic_file_create(const char *path, mode_t mode, struct atomic_file **ret);

/** The temporary file's stream (made on first use), for writers that print; commit flushes it. */
FILE *atomic_file_stream(struct atomic_file *af);

/** The temporary file's descriptor (read and write), for writers that write() or pwrite(). */
int atomic_file_fd(const struct atomic_file *af);

/**
 * Flushes the stream, fsyncs the file, renames it over PATH, fsyncs the
 * directory, closes and frees AF. Returns 0 or -errno as atomic_write_file()
 * does; an error met by the stream before (a full disk) fails it too.
 */
int atomic_file_commit(struct atomic_file *af);

/**
 * As atomic_file_commit(), for a file that stays in use under its new name
 * (the spool): the descriptor is not closed but given to the caller in *FD,
 * still locked. Not for a replacement written through the stream. Here the
 * directory's fsync is best effort: a power cut before it reaches the disk
 * brings the old file back whole, which a caller that keeps the file must
 * accept anyway. -errno only before the rename (*FD untouched, AF freed).
 */
int atomic_file_commit_keep(struct atomic_file *af, int *fd);

/** Removes the temporary file and frees AF; PATH stays as it was. NULL is a no-op. */
void atomic_file_abort(struct atomic_file *af);

#endif
