/* The sagerun command-line tool: shared pieces of its commands. */
#ifndef SAGERUN_CLI_H
#define SAGERUN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "internal.h"

/* Exit codes of every command (documented in `sagerun --help` and README). */
enum {
    SR_EXIT_OK = 0,
    SR_EXIT_ERROR = 1,          /* something failed: input, plugin, device, I/O */
    SR_EXIT_USAGE = 2,          /* bad command line */
    SR_EXIT_NOT_BYTE_EXACT = 3, /* compare: ran, but a variant's output differs from the reference */
    SR_EXIT_REGRESSION = 4      /* diff: a regression beyond the threshold or lost byte-exactness */
};

/* Commands: argv[0] is the command name; each returns an exit code. */
int sr_cmd_list(int argc, char **argv);
int sr_cmd_run(int argc, char **argv);
int sr_cmd_workload(int argc, char **argv);
int sr_cmd_compare(int argc, char **argv);
int sr_cmd_show(int argc, char **argv);
int sr_cmd_diff(int argc, char **argv);

/* "sagerun: <message>" on stderr. */
void sr_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The context for --backend auto|host|cuda and --device: auto takes the CUDA device when there is
 * one and otherwise the host backend, saying so on stderr. */
sagerun_status sr_cli_context(const char *backend, int device, bool quiet, sagerun_context **out,
                              sagerun_error *err);

/* A registry with the default search path plus the explicit --plugin files/folders. */
sagerun_status sr_cli_registry(sagerun_context *ctx, char **plugin_paths, int n_plugin_paths,
                               sagerun_registry **out, sagerun_error *err);

/* Parses "B,N,H,D" or "B,N,Hq,Hkv,D" into problem (defaults for the rest). */
bool sr_cli_parse_shape(const char *text, sagerun_problem *problem);

#endif
