/* `sagerun run` watched from a parent process (supervise.c): a variant that ends the process
 * (exit(), _exit(), a crash, a signal) is named as the failure it is, never passed off as a run
 * that succeeded with no output. compare has its own, fuller containment (isolate.h). */
#ifndef SAGERUN_CLI_SUPERVISE_H
#define SAGERUN_CLI_SUPERVISE_H

/* Runs body(arg) in a child process and returns its exit code. The child says which phase it is
 * in (sr_cli_supervise_phase) and, when body returns, its code: if it ends any other way the
 * parent prints "CMD: the process ended ... while PHASE of variant VARIANT" and returns
 * SR_EXIT_ERROR (a stop signal: SR_EXIT_SIGINT / SR_EXIT_SIGTERM, forwarded to the child).
 * Where fork fails, body runs in this process. */
/* timeout_s > 0: the child is killed when it has not finished by then, and that is said (with
 * the phase) and is SR_EXIT_ERROR. */
int sr_cli_supervised(const char *cmd, const char *variant, double timeout_s,
                      int (*body)(void *arg), void *arg);

/* In the child: the phase that begins ("create", "prepare", ...); nothing outside one. */
void sr_cli_supervise_phase(const char *phase);

#endif
