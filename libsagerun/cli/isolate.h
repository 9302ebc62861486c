/* sagerun compare's fault containment: the measurement runs in a child process that streams every
 * call into a variant to the parent, which survives the child's crashes and hangs (isolate.c). */
#ifndef SAGERUN_CLI_ISOLATE_H
#define SAGERUN_CLI_ISOLATE_H

#include <stdbool.h>

#include "sagerun/compare.h"

/* The hidden options by which the parent starts a child (never shown in --help). */
#define SR_ISOLATE_OPT_CHILD "isolated-child"   /* FD: the pipe to the parent */
#define SR_ISOLATE_OPT_REPORT "isolated-report" /* PATH: where the child writes the JSON report */
#define SR_ISOLATE_OPT_SKIP "isolated-skip"     /* LABEL\tPHASE\tREASON: an entry not to run */

/* ---- the child side ---- */
/* Whether the hidden options name what the parent gives its child, else a usage error printed:
 * fd_text a pipe's descriptor above 2, report a file not there yet in a folder of this user's that
 * nobody else may enter (the parent's mkdtemp folder). So the options, which skip the output checks,
 * cannot write a report over any file (as root, --isolated-report /etc/passwd did). *fd: the pipe. */
bool sr_isolate_child_args_ok(const char *fd_text, const char *report, int *fd);

/* Routes opts' progress and hooks' calls to the parent through fd, and makes hooks->interrupted
 * report SIGINT/SIGTERM (sr_stop_signals_install). skips: "LABEL\tPHASE\tREASON" strings, split
 * in place, n of them. */
void sr_isolate_child_setup(int fd, sagerun_compare_options *opts, sagerun_compare_hooks *hooks,
                            char **skips, size_t n, const char **labels, const char **phases,
                            const char **reasons);
/* Readies the child to write its report whatever a plugin did to the process: a umask of 077 (the
 * report is for the parent, in a private folder: 0777 made it unreadable), SIGXFSZ ignored, and
 * the file size limit the child started with set back (a plugin that set it to 0 lost the whole
 * comparison), with a warning when a plugin had changed it. */
void sr_isolate_child_before_report(void);
/* Tells the parent the report is written whole: whatever ends the process after this (a plugin's
 * destructor crashing at exit) costs no results. */
void sr_isolate_child_report_written(void);
/* Tells the parent (in a child; nothing elsewhere) that plugins are loaded next from `what`, a file
 * or folder: a hang before the first call is then named. */
void sr_isolate_child_loading(const char *what);
/* Tells the parent that loading is over, and notes where each plugin's code lies, so that a crash
 * in a plugin's own thread is blamed on that plugin (crash_site.h). */
void sr_isolate_child_loaded(const sagerun_registry *reg);

/* ---- both ---- */
/* SIGINT and SIGTERM set a flag instead of ending the process; returns the signal seen (0: none). */
void sr_stop_signals_install(void);
int sr_stop_signal(void);
int sr_stop_interrupted(void *user); /* for sagerun_compare_hooks.interrupted */

/* ---- the parent side ---- */
typedef struct sr_isolate_options {
    int argc;            /* the compare command line, argv[0] = "compare" */
    char **argv;
    double timeout_s;    /* per call into a variant; 0: the default (isolate.c) */
    bool quiet;          /* re-runs are always quiet */
    bool show_progress;  /* a progress line on stderr */
} sr_isolate_options;

/* Runs the comparison in child processes until one finishes: a variant that crashes, hangs or
 * loses the CUDA context is recorded as failed and the comparison runs again without it.
 * Returns SR_EXIT_OK with *report (the child's report, read back: complete, or incomplete when
 * interrupted), or an exit code after printing why (the child's own errors are its stderr's).
 * *stop_signal: SIGINT/SIGTERM when interrupted, else 0. */
int sr_isolate_run(const sr_isolate_options *o, sagerun_compare_result **report,
                   int *stop_signal);

#endif
