/* Files that sagerun reads and writes, opened so that a hostile path cannot hang, crash or make
 * sagerun destroy something that is not its own output (safe_input.c, safe_output.c). */
#ifndef SAGERUN_SAFE_IO_H
#define SAGERUN_SAFE_IO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "internal.h"

/* ---- inputs (safe_input.c) ---- */
/* What a file of this mode is, for messages: "a folder", "a FIFO", "a character device", ... */
const char *sr_file_kind(mode_t mode);
/* Opens path for reading. The open itself never blocks (O_NONBLOCK: a FIFO without a writer, a
 * tape device), then anything but a regular file is refused with its name and kind. Returns the
 * descriptor (blocking, close-on-exec), or -1 with err set (NOT_FOUND, IO). */
int sr_open_input(const char *path, sagerun_error *err);
/* The same as a stdio stream ("rb"); NULL with err set. sagerun_file_read (sagerun.h) reads a
 * whole input file. */
FILE *sr_fopen_input(const char *path, sagerun_error *err);

/* ---- outputs (safe_output.c): the rules are sagerun.h's ("Files"); sagerun_output_check and
 * sagerun_file_write are the public face of what follows. ---- */
bool sr_output_is_stdout(const char *path);
/* STDOUT_FILENO for "-", or the standard descriptor (1, 2) already open on the file path leads
 * to (/dev/stdout, the file stdout was redirected to): written in place through it, never
 * replaced; -1 for any other path. */
int sr_output_standard_fd(const char *path);

typedef struct sr_output {
    int fd;       /* write here */
    char *tmp;    /* the temporary file, NULL for stdout */
    char *target; /* what tmp replaces at commit */
} sr_output;
sagerun_status sr_output_open(const char *path, sr_output *o, sagerun_error *err);
/* fsync, close and rename into place (stdout: flushed, errors checked). Aborts on failure. */
sagerun_status sr_output_commit(sr_output *o, const char *path, sagerun_error *err);
/* Removes the temporary file; the target is left as it was. */
void sr_output_abort(sr_output *o);

/* Points the stdout descriptor at stderr while foreign code runs (a plugin's constructor, entry
 * point or calls), so that what it prints cannot mix into sagerun's own output. Returns the saved
 * descriptor for sr_stdout_restore (-1: nothing diverted). */
int sr_stdout_divert(void);
void sr_stdout_restore(int saved);

/* An output written through stdio: `write` fills f, returns false on failure. */
sagerun_status sr_write_file_atomic(const char *path, bool (*write)(FILE *f, const void *user),
                                    const void *user, sagerun_error *err);

#endif
