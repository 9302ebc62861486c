/* The plugin scanner: a plugin file's code runs first in a child process (as GStreamer's
 * gst-plugin-scanner does), so that a constructor or entry point that crashes, calls exit(),
 * hangs, or a file that faults the loader (a truncated ELF: SIGBUS) costs a verdict, not sagerun.
 *
 * The child is forked (no exec: the library has no helper program to run), puts itself in a
 * process group of its own, sends its stdout to stderr, runs sr_plugin_open and writes one fixed-
 * size verdict to a pipe (shorter than PIPE_BUF: written at once), then _exit()s without running
 * the plugin's destructors. The parent waits up to the timeout, then kills the whole group: what
 * the plugin started goes with it. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin_load.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#include <sanitizer/common_interface_defs.h>
#define SR_HAVE_SANITIZER_DEATH_CALLBACK 1
#endif

#define SR_SCAN_DEFAULT_TIMEOUT_S 10.0

/* The child's end of the pipe: a sanitizer that ends the child (it handles SIGSEGV itself, then
 * exits 1) says so first, so that the verdict is a crash and not an exit. */
static int scan_fd = -1;

#ifdef SR_HAVE_SANITIZER_DEATH_CALLBACK
static void scan_sanitizer_death(void)
{
    sr_plugin_verdict v;
    memset(&v, 0, sizeof v);
    snprintf(v.reason, sizeof v.reason,
             "crashed while loading: a sanitizer report (see stderr) in the plugin scanner process");
    if (write(scan_fd, &v, sizeof v) < 0)
        _exit(1);
}
#endif

double sr_plugin_scan_timeout(void)
{
    const char *env = secure_getenv("SAGERUN_PLUGIN_SCAN_TIMEOUT");
    char *end;
    double t = env && *env ? strtod(env, &end) : 0;
    return env && *env && !*end && t > 0 && t <= 3600 ? t : SR_SCAN_DEFAULT_TIMEOUT_S;
}

/* A library that is no plugin (the Python bridge): loaded, its entry point looked up. */
static bool open_library(const char *path, const char *entry, char *reason, size_t len)
{
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h && dlsym(h, entry))
        return true;
    const char *e = dlerror();
    snprintf(reason, len, "cannot be loaded: %s", e ? e : "no entry point");
    return false;
}

static void child_examine(const char *path, const sagerun_host_services *services,
                          const char *entry, int fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(STDERR_FILENO, STDOUT_FILENO); /* a plugin that prints must not print into our output */
    signal(SIGPIPE, SIG_DFL);
    scan_fd = fd;
#ifdef SR_HAVE_SANITIZER_DEATH_CALLBACK
    __sanitizer_set_death_callback(scan_sanitizer_death);
#endif
    sr_plugin_verdict v;
    memset(&v, 0, sizeof v);
    void *handle;
    const sagerun_variant_descriptor *descs[SR_PLUGIN_MAX_VARIANTS];
    size_t n = 0;
    v.ok = entry ? open_library(path, entry, v.reason, sizeof v.reason)
                 : sr_plugin_open(path, services, &handle, descs, &n, v.reason, sizeof v.reason);
    /* A refusal the plugin answered (init failed, a missing library) may depend on the
     * environment or the machine: not cached. A crash, exit or hang is the file's own doing. */
    v.transient = !v.ok;
    if (v.ok && !entry)
        snprintf(v.name, sizeof v.name, "%s", descs[0]->name); /* a factory's first: the pins of
                                                                * the others are checked at load */
    ssize_t w;
    do
        w = write(fd, &v, sizeof v);
    while (w < 0 && errno == EINTR);
    _exit(w == (ssize_t)sizeof v ? 0 : 1);
}

static void describe_status(int ws, double timeout_s, bool timed_out, char *buf, size_t len)
{
    if (timed_out) {
        snprintf(buf, len, "hung while loading: no answer within %g s (constructor or %s); "
                 "killed (SAGERUN_PLUGIN_SCAN_TIMEOUT)", timeout_s, SAGERUN_PLUGIN_ENTRY_NAME);
    } else if (WIFSIGNALED(ws)) {
        int sig = WTERMSIG(ws);
        const char *abbrev = sigabbrev_np(sig), *desc = strsignal(sig);
        snprintf(buf, len, "crashed while loading: SIG%s (%s) in the plugin scanner process",
                 abbrev ? abbrev : "?", desc ? desc : "?");
    } else {
        snprintf(buf, len, "ended the process while loading (exit status %d, from a constructor "
                 "or %s): plugins must not call exit()", WEXITSTATUS(ws), SAGERUN_PLUGIN_ENTRY_NAME);
    }
}

/* Reads the verdict and reaps the child within timeout_s; true when the verdict arrived. A
 * grandchild may hold the pipe open: the child's exit, not the pipe's end, ends the wait. */
static bool wait_verdict(pid_t pid, int fd, double timeout_s, sr_plugin_verdict *v, int *ws,
                         bool *timed_out)
{
    size_t got = 0;
    bool reaped = false;
    double deadline = sr_monotonic_seconds() + timeout_s;
    while (!reaped && sr_monotonic_seconds() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 20);
        if (r > 0 && got < sizeof *v) {
            ssize_t n = read(fd, (char *)v + got, sizeof *v - got);
            got += n > 0 ? (size_t)n : 0;
        }
        reaped = waitpid(pid, ws, WNOHANG) == pid;
        if (!reaped && r > 0 && (got == sizeof *v || (p.revents & POLLHUP)))
            usleep(1000); /* nothing more to read: the child is exiting */
    }
    if (reaped && got < sizeof *v) { /* written just before the exit */
        ssize_t n = read(fd, (char *)v + got, sizeof *v - got);
        got += n > 0 ? (size_t)n : 0;
    }
    *timed_out = !reaped;
    kill(-pid, SIGKILL); /* the group: the child if it hangs, and whatever it started */
    if (!reaped)
        while (waitpid(pid, ws, 0) < 0 && errno == EINTR)
            ;
    /* a verdict then exit 0; or a sanitizer's verdict (not ok) before it ended the child */
    return got == sizeof *v && reaped && ((WIFEXITED(*ws) && WEXITSTATUS(*ws) == 0) || !v->ok);
}

static void scan(const char *path, const sagerun_host_services *services, const char *entry,
                 double timeout_s, sr_plugin_verdict *v)
{
    memset(v, 0, sizeof *v);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(v->reason, sizeof v->reason, "cannot examine: pipe: %s", strerror(errno));
        v->transient = true;
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_examine(path, services, entry, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
        snprintf(v->reason, sizeof v->reason, "cannot examine: fork: %s", strerror(errno));
        v->transient = true;
        close(fds[0]);
        return;
    }
    setpgid(pid, pid); /* also here: the group exists before the parent may kill it */
    int ws = 0;
    bool timed_out = false;
    if (!wait_verdict(pid, fds[0], timeout_s, v, &ws, &timed_out)) {
        memset(v, 0, sizeof *v);
        describe_status(ws, timeout_s, timed_out, v->reason, sizeof v->reason);
        v->transient = timed_out; /* a loaded machine may be slow: examine again next time */
    }
    close(fds[0]);
    v->name[sizeof v->name - 1] = '\0';
    v->reason[sizeof v->reason - 1] = '\0';
}

void sr_plugin_scan(const char *path, const sagerun_host_services *services, double timeout_s,
                    sr_plugin_verdict *v)
{
    scan(path, services, NULL, timeout_s, v);
}

void sr_library_scan(const char *path, const char *entry, double timeout_s, sr_plugin_verdict *v)
{
    scan(path, NULL, entry, timeout_s, v);
}
