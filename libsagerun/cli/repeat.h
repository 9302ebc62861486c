/* compare --repeat N and sweep --repeat N (repeat.c): N processes, each a full run of the same
 * command line, their files kept beside an index that diff reads as N runs of one side. */
#ifndef SAGERUN_CLI_REPEAT_H
#define SAGERUN_CLI_REPEAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

#define SR_CLI_REPEAT_HELP                                                                         \
    "  --repeat N             N runs (1 to 100), each its own process: what moves a whole\n"     \
    "                         process (instances' placement, clocks) is then in the spread\n"    \
    "                         of the runs, which diff judges with the process as the unit\n"

/* This program's path (/proc/self/exe), into buf; false when it cannot be read. */
bool sr_cli_self_exe(char *buf, size_t len);

/* Takes --repeat N (or --repeat=N) out of argv (argc updated); *n: 0 when absent. false after
 * saying what is wrong with it. */
bool sr_cli_repeat_take(const char *cmd, int *argc, char **argv, unsigned *n);

/* Runs the command line n times ("compare": each with its --json/--markdown/--csv FILE as
 * FILE-stem.rK.ext, the index written at the --json path; "sweep": each with --out-dir DIR/repeat-K,
 * the index DIR/repeats.json). Every run is made, a failed one said by number; the exit status is
 * the first nonzero one of the runs (0 when all are 0), SR_EXIT_ERROR when the index is not
 * written. */
int sr_cli_repeat_run(const char *cmd, int argc, char **argv, unsigned n);

/* The runs of an index (a key "sagerun_repeats"): NULL with err->status OK when the file is not
 * one; else the paths of the runs whose file is there (resolved beside the index), *n of them,
 * each run without one said on stderr; NULL with err set when it does not read, or no run has
 * a file. *sweep: the runs are sweep summaries. Free with sr_cli_repeat_paths_free. */
char **sr_cli_repeat_paths(const char *path, size_t *n, bool *sweep, sagerun_error *err);
void sr_cli_repeat_paths_free(char **paths, size_t n);

#endif
