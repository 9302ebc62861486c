/* `sagerun run` watched from a parent process (supervise.h). The child tells the parent, through a
 * pipe, each phase it enters ("phase NAME") and, at the end, its exit code ("done CODE"); the
 * parent only waits. A child that ends without "done" was ended by what it ran. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "supervise.h"

static int phase_fd = -1; /* the child's end of the pipe; -1 when not supervised */

static void send_line(const char *word, const char *value)
{
    if (phase_fd < 0)
        return;
    char line[128];
    int n = snprintf(line, sizeof line, "%s %s\n", word, value);
    ssize_t w = -1;
    if (n > 0 && (size_t)n < sizeof line) /* one write, shorter than PIPE_BUF: never torn */
        while ((w = write(phase_fd, line, (size_t)n)) < 0 && errno == EINTR) {
        }
    if (w < 0 && errno == EBADF) /* a variant closed it: say so the only way left */
        _exit(SR_CHILD_EXIT_PIPE_CLOSED);
}

void sr_cli_supervise_phase(const char *phase) { send_line("phase", phase); }

static volatile sig_atomic_t child_pid, stop_seen;

static void forward_stop(int sig)
{
    stop_seen = sig;
    if (child_pid > 0)
        kill(-(pid_t)child_pid, sig); /* its group: what the variant forked stops too */
}

/* What the child said: its last phase and, when body returned, its code (-1: it did not). */
typedef struct child_story {
    char phase[64];
    int done;
} child_story;

static void read_story(int fd, child_story *s)
{
    snprintf(s->phase, sizeof s->phase, "%s", "start-up");
    s->done = -1;
    char buf[4096];
    size_t used = 0;
    ssize_t n;
    /* the child has ended: what it wrote is in the pipe; a process it forked may still hold the
     * pipe open, so the reads do not wait for the end of the stream */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (used < sizeof buf - 1 &&
           ((n = read(fd, buf + used, sizeof buf - 1 - used)) > 0 || (n < 0 && errno == EINTR)))
        used += n > 0 ? (size_t)n : 0;
    buf[used] = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "phase ", 6) == 0)
            snprintf(s->phase, sizeof s->phase, "%s", line + 6);
        else if (strncmp(line, "done ", 5) == 0)
            s->done = atoi(line + 5);
    }
}

/* The child's wait status; with a timeout, *timed_out and the child's group (it and what it
 * forked) killed when it runs past it. */
static int wait_child(pid_t pid, double timeout_s, bool *timed_out)
{
    int ws = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t r = waitpid(pid, &ws, timeout_s > 0 ? WNOHANG : 0);
        if (r == pid)
            return ws;
        if (r < 0 && errno != EINTR)
            return -1;
        if (timeout_s <= 0)
            continue;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 > timeout_s &&
            !*timed_out) {
            *timed_out = true;
            kill(-pid, SIGKILL);
        }
        struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

/* The parent's verdict on a child that ended with status ws after saying s. */
static int judge_end(const char *cmd, const char *variant, int ws, const child_story *s)
{
    char how[160];
    if (WIFSIGNALED(ws)) {
        char sig[96];
        sr_cli_describe_signal(WTERMSIG(ws), sig, sizeof sig);
        snprintf(how, sizeof how, "died of %s", sig);
    } else {
        snprintf(how, sizeof how, "ended with exit status %d", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    }
    if (s->done >= 0) { /* finished: a failure stands; a success still needs a clean exit (main
                           checks that stdout was written); a crash afterwards (a plugin's
                           destructor) costs no result */
        if (WIFSIGNALED(ws))
            fprintf(stderr, "sagerun: %s: warning: after it finished, the process %s (a plugin's "
                            "destructor at exit?)\n", cmd, how);
        return s->done || !WIFEXITED(ws) ? s->done : WEXITSTATUS(ws);
    }
    int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    if (stop_seen && (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == stop_seen)) {
        sr_cli_error("%s: interrupted (%s)", cmd, how + strlen("died of "));
        return 128 + (sig ? sig : stop_seen);
    }
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == SR_CHILD_EXIT_PIPE_CLOSED) {
        sr_cli_error("%s: variant '%s' closed the pipe through which the process running it "
                     "reports to sagerun (phase: %s; it closes descriptors it did not open): no "
                     "result", cmd, variant, s->phase);
        return SR_EXIT_ERROR;
    }
    sr_cli_error("%s: the process %s in variant '%s' (phase: %s), before %s finished: no result%s",
                 cmd, how, variant, s->phase, cmd,
                 WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? " (does the plugin call exit() or _exit()?)" : "");
    return SR_EXIT_ERROR;
}

int sr_cli_supervised(const char *cmd, const char *variant, double timeout_s,
                      int (*body)(void *arg), void *arg)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return body(arg);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return body(arg);
    }
    if (pid == 0) {
        /* A group of its own, as compare's child: a variant's kill(0, SIGTERM) ends its own run,
         * not the script that ran sagerun (the parent forwards the stop signals it gets). */
        setpgid(0, 0);
        close(fds[0]);
        phase_fd = fds[1];
        int rc = body(arg);
        fflush(stdout);
        char code[16];
        snprintf(code, sizeof code, "%d", rc);
        send_line("done", code);
        close(phase_fd);
        phase_fd = -1;
        return rc; /* and the process exits through main, as it would unsupervised */
    }
    setpgid(pid, pid); /* here too: the group exists before the parent signals it */
    close(fds[1]);
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_stop;
    sigemptyset(&sa.sa_mask);
    const int stops[3] = {SIGINT, SIGTERM, SIGHUP};
    child_pid = pid;
    for (int i = 0; i < 3; i++) { /* a signal this process ignores (nohup, a script's & job) the
                                     child ignores too: not forwarded */
        sigaction(stops[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN)
            sigaction(stops[i], &sa, NULL);
    }
    bool timed_out = false;
    int ws = wait_child(pid, timeout_s, &timed_out);
    for (int i = 0; i < 3; i++)
        sigaction(stops[i], &old[i], NULL);
    child_pid = 0;
    child_story s;
    read_story(fds[0], &s);
    close(fds[0]);
    if (ws < 0) {
        sr_cli_error("%s: lost the process that ran variant '%s': %s", cmd, variant, strerror(errno));
        return SR_EXIT_ERROR;
    }
    if (timed_out && s.done < 0) {
        sr_cli_error("%s: variant '%s' did not finish within %g s (phase: %s): killed (--timeout)",
                     cmd, variant, timeout_s, s.phase);
        return SR_EXIT_ERROR;
    }
    return judge_end(cmd, variant, ws, &s);
}
