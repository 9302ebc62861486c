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
/* The same as a stdio stream ("rb"); NULL with err set. */
FILE *sr_fopen_input(const char *path, sagerun_error *err);
/* json_load_file through sr_fopen_input: a file that cannot be opened, or is not a regular file,
 * gives NULL with jerr->line = -1, jerr->position = 0 and the reason in jerr->text. */
json_t *sr_json_load_input(const char *path, size_t flags, json_error_t *jerr);
/* True when both paths name one existing file (same device and inode, links followed). */
bool sr_same_file(const char *a, const char *b);

/* ---- outputs (safe_output.c) ----
 * "-" is standard output. Otherwise the output replaces a regular file atomically (a temporary
 * file in the same folder, fsync, rename), keeping an existing file's mode; a new file gets the
 * mode the umask gives. A symlink is written through, never replaced, and only when it leads to
 * a regular file (the target is replaced atomically). Anything else (a device, a FIFO, a folder,
 * a socket, a dangling symlink) is refused. */
bool sr_output_is_stdout(const char *path);
/* Checks that path could be written now: what it names (see above), and that its folder exists
 * and is writable. For checking every output before a long measurement. */
sagerun_status sr_output_check(const char *path, sagerun_error *err);
/* sr_output_check for an output, plus: not the same file as `input` (NULL: none). what names the
 * option in the message ("--json"). */
sagerun_status sr_output_check_against(const char *what, const char *path, const char *input,
                                       sagerun_error *err);

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
