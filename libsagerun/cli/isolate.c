/* Fault containment for `sagerun compare`: the measurement runs in a child process.
 *
 * Why a child: a variant is foreign code. It can segfault, abort, hang, or fault on the GPU — and
 * an illegal address poisons the CUDA context of the whole process, so no other variant can run
 * in it afterwards. None of that may cost the results of the other variants.
 *
 * How (the GStreamer plugin scanner's scheme):
 *   - The parent never touches CUDA. It re-executes its own binary (/proc/self/exe) with the same
 *     command line plus hidden options: a pipe descriptor, a temporary report path, and the
 *     entries to leave out. fork+exec rather than a bare fork: the child starts clean (CUDA
 *     contexts do not survive fork, sanitizer runtimes and plugin state start fresh).
 *   - The child runs the library's in-process engine (sagerun_compare_run) with hooks that write
 *     one line per event to the pipe: "B" before and "E" after every call into a variant (label,
 *     phase, round, seconds), "P" progress, "L" when a variant's failure lost the CUDA context
 *     ("F" when the descriptors ran out after its call: it leaks them),
 *     "D" when a sanitizer is about to end the process, "O" before it loads plugins from a file
 *     or folder (and an empty "O" once they are loaded), "X" when a fatal signal came from code
 *     of a plugin other than the open call's (crash_site.c: a thread the plugin started). At
 *     the end it writes the JSON report to the temporary path and exits 0.
 *   - The parent reads the lines. When the child dies (signal, sanitizer, exit inside a call), the
 *     call that was open names the culprit, unless an "X" line named the plugin whose code
 *     crashed (then that variant, in phase "background"); when an open call outlives the
 *     watchdog, the parent kills the child and the open call is the culprit (a hang); an "L"
 *     line names the culprit of a lost context. The culprit is recorded failed (phase + reason)
 *     and the comparison starts again without it: the child passes it to sagerun_compare_run as
 *     an entry to leave out, so it stays in the report, failed, in its place. This repeats until
 *     a child finishes.
 *   - Watchdog per call: --timeout, else 120 s for calls with nothing to go by (create, prepare,
 *     the warm-up calls until one after the first has returned), and for later warm-up, checked
 *     and timed calls max(10 s, 20 x K x the slowest call of that variant so far), where K is the
 *     calls the event covers (a timed sample's batch; B and E lines carry it). The first warm-up
 *     call is first contact (module loading, JIT compilation) and sets no yardstick: times K it
 *     would put a later hang hours away. Without K, a slow baseline's samples, batched for a fast
 *     variant's sake (up to 10000 calls), outlived a limit made for one call.
 *   - After the child wrote its report it says so ("R"): a process that then dies or hangs (a
 *     plugin's destructor or exit handler; killed after SR_EXIT_GRACE_S) loses nothing; the
 *     parent warns and keeps the report. Before its first call into a variant the child has
 *     SR_SETUP_TIMEOUT_S (plugins loading, inputs made): a constructor that hangs only in the
 *     measuring process (the scanner, a process of its own, approved the file) is killed there,
 *     and the last "O" line names the file or folder it came from.
 *   - SIGINT/SIGTERM/SIGHUP: the parent forwards the signal to the child; the child's engine stops
 *     at the next call boundary and reports the rounds finished ("complete": false); the parent
 *     writes that report and exits 128 + the signal. A second signal (SR_SECOND_STOP_S or more
 *     after the first: one sooner is the same request) kills the child at once, and so does a
 *     child that has not stopped SR_STOP_GRACE_S after the first.
 *   - The child runs in a process group of its own, with its stdout on stderr (a plugin's prints
 *     never reach the table). A stop signal counts only when the parent sent it: one a variant
 *     sends itself or its group (raise, kill(0, ...)) ends the child, after a "K" line, and is
 *     that variant's failure. After each attempt the parent kills the group, so a process that a
 *     variant forked does not outlive the comparison.
 * The child also dies with the parent (PR_SET_PDEATHSIG). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "crash_site.h"
#include "isolate.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#include <sanitizer/common_interface_defs.h>
#define SR_HAVE_SANITIZER_DEATH_CALLBACK 1
#endif

#define SR_LINE_MAX 3072             /* one event line; shorter than PIPE_BUF: written at once */
#define SR_FIRST_CONTACT_TIMEOUT_S 120.0
#define SR_MIN_TIMEOUT_S 10.0
#define SR_TIMEOUT_FACTOR 20.0
#define SR_MAX_ATTEMPTS 64
#define SR_STOP_GRACE_S 30.0 /* after a forwarded stop signal, before the child is killed */
#define SR_SETUP_TIMEOUT_S 600.0 /* from the start to the first call into a variant */
#define SR_EXIT_GRACE_S 10.0     /* from the report written to the child's exit */
#define SR_PATH_MAX 4096

/* ---- stop signals ------------------------------------------------------------------------------ */

static volatile sig_atomic_t stop_signal_seen;

/* A second signal while stopping: the parent kills the child (see sr_isolate_run); negative. One
 * within SR_SECOND_STOP_S of the first is the same request (a job manager's TERM then INT, a
 * terminal's and a script's at once), which killed the child and lost the report. The stop
 * signals are blocked while this runs (sr_stop_signals_install): first is not torn. */
#define SR_SECOND_STOP_S 1.0
static void on_stop_signal(int sig)
{
    static struct timespec first;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe */
    if (!stop_signal_seen) {
        stop_signal_seen = sig;
        first = now;
    } else if ((double)(now.tv_sec - first.tv_sec) + (double)(now.tv_nsec - first.tv_nsec) * 1e-9 >=
               SR_SECOND_STOP_S) {
        stop_signal_seen = stop_signal_seen < 0 ? stop_signal_seen : -stop_signal_seen;
    }
}

void sr_stop_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sa.sa_flags = 0; /* no SA_RESTART: poll() returns at once */
    sigaction(SIGINT, &sa, NULL); /* also in a script's background job, whose shell ignores it:
                                     `kill -INT` is how a script stops a comparison and keeps it */
    sigaction(SIGTERM, &sa, NULL);
    /* SIGHUP: a closed terminal, stop as for SIGTERM and clean up; unless the caller ignores it
     * (nohup), which is what asked to outlive the terminal */
    struct sigaction old;
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
}

int sr_stop_signal(void)
{
    int s = stop_signal_seen;
    return s < 0 ? -s : s;
}

int sr_stop_interrupted(void *user)
{
    (void)user;
    return stop_signal_seen != 0;
}

/* ---- the child ------------------------------------------------------------------------------- */

static int child_fd = -1;

/* Writes one line made of fields separated by tabs; tabs and newlines inside a field become
 * spaces. One write(): lines are shorter than PIPE_BUF, so never interleaved or torn. */
static void send_fields(int count, ...)
{
    if (child_fd < 0)
        return;
    char line[SR_LINE_MAX];
    size_t used = 0;
    va_list ap;
    va_start(ap, count);
    for (int i = 0; i < count; i++) {
        const char *f = va_arg(ap, const char *);
        if (i && used < sizeof line - 2)
            line[used++] = '\t';
        for (; f && *f && used < sizeof line - 2; f++)
            line[used++] = (*f == '\t' || *f == '\n' || *f == '\r') ? ' ' : *f;
    }
    va_end(ap);
    line[used++] = '\n';
    for (size_t off = 0; off < used;) {
        ssize_t w = write(child_fd, line + off, used - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EBADF) /* a variant closed it: the parent names the open call */
            _exit(SR_CHILD_EXIT_PIPE_CLOSED);
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

static void child_progress(void *user, const char *phase, const char *variant, uint32_t step,
                           uint32_t steps)
{
    (void)user;
    char a[16], b[16];
    snprintf(a, sizeof a, "%u", step);
    snprintf(b, sizeof b, "%u", steps);
    send_fields(5, "P", phase, variant ? variant : "", a, b);
}

static void child_signals_install(void);

/* A variant that blocked the stop signals (sigprocmask) holds back the stop the parent forwards
 * until the child is killed, the report lost: after each call they are unblocked (a stop waiting
 * then arrives at once), and the variant named the first time. */
static void child_unblock_stops(const char *label)
{
    static char named[8][64];
    sigset_t now, stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    if (sigprocmask(SIG_BLOCK, NULL, &now) != 0 ||
        !(sigismember(&now, SIGINT) || sigismember(&now, SIGTERM) || sigismember(&now, SIGHUP)))
        return;
    bool said = false;
    size_t k = 0;
    for (; k < 8 && named[k][0] && !said; k++)
        said = strncmp(named[k], label, sizeof named[k] - 1) == 0;
    if (!said) {
        if (k < 8)
            snprintf(named[k], sizeof named[k], "%s", label);
        char *shown = sagerun_text_escape(label, 0);
        fprintf(stderr, "sagerun: compare: warning: variant %s blocked SIGINT, SIGTERM or SIGHUP "
                        "(sigprocmask) in its call: unblocked after each call (plugin.h section "
                        "8)\n", shown ? shown : "?");
        free(shown);
    }
    sigprocmask(SIG_UNBLOCK, &stops, NULL);
}

/* Whether this process's descriptors are running out: three quarters of RLIMIT_NOFILE open (the
 * lowest free one first, which costs one system call; then a count). A variant leaking one per
 * call ended the comparison with "Too many open files" at the report, no report, nobody
 * blamed: past this mark the variant whose call just ended is. */
static bool child_fds_running_out(unsigned *open_fds, unsigned *limit)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur < 64)
        return false;
    rlim_t mark = rl.rlim_cur / 4 * 3;
    int probe = fcntl(0, F_DUPFD_CLOEXEC, 0);
    if (probe >= 0)
        close(probe);
    if (probe >= 0 && (rlim_t)probe < mark)
        return false;
    unsigned n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    *open_fds = n;
    *limit = (unsigned)rl.rlim_cur;
    return d && n >= mark;
}

static void child_call(void *user, const sagerun_compare_call *c)
{
    (void)user;
    char round[16], calls[16], secs[32];
    snprintf(round, sizeof round, "%u", c->round);
    snprintf(calls, sizeof calls, "%u", c->calls ? c->calls : 1);
    if (!c->end) {
        send_fields(5, "B", c->label, c->phase, round, calls);
        sr_crash_site_call(c->label);
        return;
    }
    sr_crash_site_call(NULL);
    snprintf(secs, sizeof secs, "%.9g", c->seconds);
    send_fields(8, "E", c->label, c->phase, round, secs, c->failure_phase ? c->failure_phase : "",
                c->failure ? c->failure : "", calls);
    child_signals_install(); /* a variant that ignored or took SIGINT/SIGTERM/SIGHUP: ours again */
    child_unblock_stops(c->label);
    unsigned open_fds, limit;
    if (child_fds_running_out(&open_fds, &limit)) {
        char why[160];
        snprintf(why, sizeof why, "%u file descriptors open after its call, of a limit of %u "
                 "(RLIMIT_NOFILE): it leaks them", open_fds, limit);
        send_fields(4, "F", c->label, c->failure_phase ? c->failure_phase : c->phase, why);
        _exit(SR_EXIT_ERROR);
    }
    if (c->context_lost) {
        /* Nothing more can run in this process: say who, and let the parent start afresh. */
        send_fields(4, "L", c->label, c->failure_phase ? c->failure_phase : c->phase,
                    c->failure ? c->failure : "");
        _exit(SR_EXIT_ERROR);
    }
}

/* In the child, a stop signal counts only from the parent (which forwards the user's): one the
 * process sent itself or its group (raise, kill(0, ...)) came from a variant's code. It ends the
 * child by that signal, after a "K" line saying so, and the parent blames the open call. */
static pid_t child_parent_pid;

static void on_child_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (si && si->si_code == SI_USER && si->si_pid == child_parent_pid) {
        on_stop_signal(sig);
        return;
    }
    char line[16] = "K\t";
    size_t n = 2;
    if (sig >= 10)
        line[n++] = (char)('0' + sig / 10);
    line[n++] = (char)('0' + sig % 10);
    line[n++] = '\n';
    if (child_fd >= 0 && write(child_fd, line, n) < 0) {
        /* nothing to do: the parent still sees the signal */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void child_signals_install(void)
{
    child_parent_pid = getppid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_child_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

#ifdef SR_HAVE_SANITIZER_DEATH_CALLBACK
static void child_sanitizer_death(void)
{
    send_fields(1, "D");
}
#endif

void sr_isolate_child_report_written(void)
{
    send_fields(1, "R");
}

void sr_isolate_child_loading(const char *what)
{
    send_fields(2, "O", what);
}

void sr_isolate_child_loaded(const sagerun_registry *reg)
{
    send_fields(2, "O", "");
    sr_crash_site_map(reg, child_fd);
}

/* The file size limit the child started with (before any plugin loaded). */
static struct rlimit child_fsize;
static bool child_fsize_known;

bool sr_isolate_child_args_ok(const char *fd_text, const char *report, int *fd)
{
    static const char *const why = "compare: --" SR_ISOLATE_OPT_CHILD " and --" SR_ISOLATE_OPT_REPORT
                                   " are sagerun's own, for the child process it starts";
    char *end = NULL;
    errno = 0;
    long v = fd_text ? strtol(fd_text, &end, 10) : -1;
    struct stat st;
    if (!fd_text || end == fd_text || *end || errno || v <= STDERR_FILENO || v > INT_MAX ||
        fstat((int)v, &st) != 0 || !S_ISFIFO(st.st_mode)) {
        sr_cli_error("%s: '%s' is not a pipe from a parent", why, fd_text ? fd_text : "");
        return false;
    }
    char dir[SR_PATH_MAX];
    const char *slash = report ? strrchr(report, '/') : NULL;
    if (!slash || slash == report || (size_t)(slash - report) >= sizeof dir) {
        sr_cli_error("%s: the report path '%s' is not in a folder of the parent's", why,
                     report ? report : "");
        return false;
    }
    memcpy(dir, report, (size_t)(slash - report));
    dir[slash - report] = 0;
    if (lstat(report, &st) == 0 || errno != ENOENT || lstat(dir, &st) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        sr_cli_error("%s: '%s' is not a new file in a private folder of this user's", why, report);
        return false;
    }
    *fd = (int)v;
    return true;
}

void sr_isolate_child_setup(int fd, sagerun_compare_options *opts, sagerun_compare_hooks *hooks,
                            char **skips, size_t n, const char **labels, const char **phases,
                            const char **reasons)
{
    child_fd = fd;
    child_fsize_known = getrlimit(RLIMIT_FSIZE, &child_fsize) == 0;
    signal(SIGPIPE, SIG_DFL);
    child_signals_install();
#ifdef SR_HAVE_SANITIZER_DEATH_CALLBACK
    __sanitizer_set_death_callback(child_sanitizer_death);
#endif
    opts->progress = child_progress;
    opts->progress_user = NULL;
    hooks->struct_size = sizeof *hooks;
    hooks->call = child_call;
    hooks->interrupted = sr_stop_interrupted;
    for (size_t i = 0; i < n; i++) {
        char *save = NULL;
        labels[i] = strtok_r(skips[i], "\t", &save);
        phases[i] = strtok_r(NULL, "\t", &save);
        reasons[i] = strtok_r(NULL, "", &save);
    }
    hooks->skip_labels = labels;
    hooks->skip_phases = phases;
    hooks->skip_reasons = reasons;
    hooks->skip_count = n;
    opts->hooks = hooks;
}

void sr_isolate_child_before_report(void)
{
    umask(077);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit now;
    if (!child_fsize_known || getrlimit(RLIMIT_FSIZE, &now) != 0 ||
        (now.rlim_cur == child_fsize.rlim_cur && now.rlim_max == child_fsize.rlim_max))
        return;
    if (setrlimit(RLIMIT_FSIZE, &child_fsize) == 0)
        fprintf(stderr, "sagerun: compare: warning: a plugin changed the file size limit "
                "(RLIMIT_FSIZE) during the comparison; set back to write the report (plugins "
                "must not change resource limits, plugin.h section 8)\n");
    else
        fprintf(stderr, "sagerun: compare: a plugin lowered the file size limit (RLIMIT_FSIZE) "
                "for good (%s): the report may not be written\n", strerror(errno));
}

/* ---- the parent ------------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What the failure text calls each phase (the in-process engine's words). */
static const char *phase_words(const char *phase)
{
    static const char *const map[][2] = {{"create", "create"},        {"prepare", "prepare"},
                                         {"warmup", "warm-up run"},   {"run", "timed run"},
                                         {"check", "checked run"},
                                         {"destroy", "destroy"}};
    for (size_t i = 0; i < SR_ARRAY_LEN(map); i++)
        if (strcmp(phase, map[i][0]) == 0)
            return map[i][1];
    return phase;
}

/* The slowest call of each label so far, per call (a sample's time over its K calls): the
 * watchdog's yardstick. The first warm-up call does not count: it is first contact (module
 * loading, JIT), and times K it would put a later hang hours away. */
typedef struct slowest {
    char label[SR_LINE_MAX]; /* a field is never longer than its line */
    double seconds;
    bool warmed; /* the first warm-up call has returned */
} slowest;

typedef struct skip {
    char *arg; /* "LABEL\tPHASE\tREASON" */
    char label[SR_LINE_MAX]; /* a field is never longer than its line */
} skip;

typedef struct attempt {
    /* the call open now */
    bool open;
    char label[SR_LINE_MAX], phase[16];
    double started, limit;
    /* what happened */
    bool lost, timed_out, sanitizer, report_written;
    bool lost_context; /* lost: the CUDA context ("L"), not the descriptors ("F") */
    bool called;        /* a call into a variant began */
    double written_at;  /* when the report was said written ("R") */
    double stuck_idle;  /* killed outside any call after this many seconds (idle_limit) */
    char loading[SR_LINE_MAX]; /* plugins being loaded from this file or folder ("O"); "" none */
    bool loaded;        /* the plugins were loaded (an empty "O") */
    int own_signal; /* a signal the child's code sent itself ("K") */
    char lost_label[SR_LINE_MAX], lost_phase[16], lost_reason[1024];
    char crash_label[SR_LINE_MAX], crash_file[SR_LINE_MAX]; /* code that faulted ("X") */
    double timed_out_limit;
    char buf[2 * SR_LINE_MAX];
    size_t used;
    bool progress_shown;
} attempt;

typedef struct parent {
    const sr_isolate_options *o;
    slowest *slow;
    size_t slow_count;
    skip *skips;
    size_t skip_count;
    char baseline[SR_LINE_MAX]; /* the label of the first call's variant: the baseline's */
} parent;

/* What follows a variant's failure: the others measured again, except after the baseline's */
static const char *afterwards(const parent *p, const char *label)
{
    return strcmp(p->baseline, label) == 0
               ? "nothing else is measured without the baseline: the report records its failure"
               : "the others were measured again without it";
}

static slowest *slowest_of(parent *p, const char *label)
{
    for (size_t i = 0; i < p->slow_count; i++)
        if (strcmp(p->slow[i].label, label) == 0)
            return &p->slow[i];
    slowest *s = realloc(p->slow, (p->slow_count + 1) * sizeof(*s));
    if (!s)
        return NULL;
    p->slow = s;
    snprintf(s[p->slow_count].label, sizeof s->label, "%s", label);
    s[p->slow_count].seconds = 0;
    s[p->slow_count].warmed = false;
    return &s[p->slow_count++];
}

/* The least limit of a call timed by its variant's slowest call: SR_MIN_TIMEOUT_S, or for the
 * tests SAGERUN_TEST_WATCHDOG_MIN_S (so that a test can catch a limit that ignores a sample's K
 * without samples of 10 s). */
static double min_limit(void)
{
    const char *v = secure_getenv("SAGERUN_TEST_WATCHDOG_MIN_S");
    char *end;
    double s = v && *v ? strtod(v, &end) : 0;
    return v && *v && !*end && s > 0 && s < SR_MIN_TIMEOUT_S ? s : SR_MIN_TIMEOUT_S;
}

/* A call of `calls` calls into the variant (a timed sample is K of them, all on one clock): K
 * times the slowest call's time so far, by the factor, else the first contact's limit. */
static double call_limit(parent *p, const char *label, const char *phase, uint32_t calls)
{
    if (p->o->timeout_s > 0)
        return p->o->timeout_s;
    const slowest *slow = slowest_of(p, label);
    if (slow && !slow->warmed && strcmp(phase, "warmup") == 0)
        return SR_FIRST_CONTACT_TIMEOUT_S; /* first contact of this process (a retry's too) */
    if ((strcmp(phase, "warmup") == 0 || strcmp(phase, "run") == 0 ||
         strcmp(phase, "check") == 0) && slow && slow->seconds > 0)
        return fmax(min_limit(), SR_TIMEOUT_FACTOR * slow->seconds * (calls ? calls : 1));
    return SR_FIRST_CONTACT_TIMEOUT_S;
}

/* An E line's time per call into the yardstick of its label (warm-up, check and timed calls). */
static void note_call_time(parent *p, const char *label, const char *phase, double per_call_s)
{
    slowest *s = slowest_of(p, label);
    if (!s || (strcmp(phase, "warmup") != 0 && strcmp(phase, "run") != 0 &&
               strcmp(phase, "check") != 0))
        return;
    if (strcmp(phase, "warmup") == 0 && !s->warmed) {
        s->warmed = true;
        return;
    }
    if (per_call_s > s->seconds)
        s->seconds = per_call_s;
}

static uint32_t calls_field(char **f, int nf, int at)
{
    unsigned long n = nf > at ? strtoul(f[at], NULL, 10) : 1;
    return n >= 1 && n <= UINT32_MAX ? (uint32_t)n : 1;
}

static void handle_line(parent *p, attempt *a, char *line)
{
    char *f[9] = {0};
    int nf = 0;
    for (char *t = line; t && nf < 9;) { /* fields may be empty: no strtok */
        f[nf++] = t;
        if ((t = strchr(t, '\t')))
            *t++ = 0;
    }
    if (nf < 1 || !f[0][0] || a->timed_out) /* after a watchdog kill the open call stays */
        return;
    switch (f[0][0]) {
    case 'B':
        if (nf < 3)
            return;
        a->crash_label[0] = 0; /* an "X" the process lived through (a plugin's handler) is void */
        a->open = a->called = true;
        snprintf(a->label, sizeof a->label, "%s", f[1]);
        if (!p->baseline[0]) /* entries are created in order, the baseline first */
            snprintf(p->baseline, sizeof p->baseline, "%s", f[1]);
        snprintf(a->phase, sizeof a->phase, "%s", f[2]);
        a->started = now_s();
        a->limit = call_limit(p, f[1], f[2], calls_field(f, nf, 4));
        break;
    case 'E':
        if (nf >= 5)
            note_call_time(p, f[1], f[2], strtod(f[4], NULL) / calls_field(f, nf, 7));
        a->open = false;
        break;
    case 'L':
    case 'F':
        if (nf < 3)
            return;
        a->lost = true;
        a->lost_context = f[0][0] == 'L';
        snprintf(a->lost_label, sizeof a->lost_label, "%s", f[1]);
        snprintf(a->lost_phase, sizeof a->lost_phase, "%s", f[2]);
        snprintf(a->lost_reason, sizeof a->lost_reason, "%s", nf > 3 ? f[3] : "");
        break;
    case 'D':
        a->sanitizer = true;
        break;
    case 'X':
        if (nf >= 3) {
            snprintf(a->crash_label, sizeof a->crash_label, "%s", f[1]);
            snprintf(a->crash_file, sizeof a->crash_file, "%s", f[2]);
        }
        break;
    case 'R':
        a->report_written = true;
        a->written_at = now_s();
        break;
    case 'K':
        if (nf >= 2)
            a->own_signal = atoi(f[1]);
        break;
    case 'O':
        snprintf(a->loading, sizeof a->loading, "%s", nf >= 2 ? f[1] : "");
        a->loaded = !a->loading[0];
        break;
    case 'P':
        if (p->o->show_progress && nf >= 2) {
            if (strcmp(f[1], "round") == 0 && nf >= 5)
                fprintf(stderr, "\r\033[Ksagerun compare: round %s/%s", f[3], f[4]);
            else
                fprintf(stderr, "\r\033[Ksagerun compare: %s %s", f[1], nf >= 3 ? f[2] : "");
            fflush(stderr);
            a->progress_shown = true;
        }
        break;
    }
}

static void read_lines(parent *p, attempt *a, int fd, bool *eof)
{
    ssize_t r = read(fd, a->buf + a->used, sizeof a->buf - a->used - 1);
    if (r < 0) {
        if (errno != EINTR && errno != EAGAIN)
            *eof = true;
        return;
    }
    if (r == 0) {
        *eof = true;
        return;
    }
    a->used += (size_t)r;
    a->buf[a->used] = 0;
    char *start = a->buf, *nl;
    while ((nl = memchr(start, '\n', a->used - (size_t)(start - a->buf)))) {
        *nl = 0;
        handle_line(p, a, start);
        start = nl + 1;
    }
    size_t rest = a->used - (size_t)(start - a->buf);
    if (rest == sizeof a->buf - 1) /* a line longer than any we write: drop it */
        rest = 0;
    memmove(a->buf, start, rest);
    a->used = rest;
}

static bool add_skip(parent *p, const char *label, const char *phase, const char *reason)
{
    for (size_t i = 0; i < p->skip_count; i++)
        if (strcmp(p->skips[i].label, label) == 0)
            return false; /* left out already, and still the culprit: do not loop */
    skip *s = realloc(p->skips, (p->skip_count + 1) * sizeof(*s));
    if (!s)
        return false;
    p->skips = s;
    size_t n = strlen(label) + strlen(phase) + strlen(reason) + 3;
    char *arg = malloc(n);
    if (!arg)
        return false;
    snprintf(arg, n, "%s\t%s\t%s", label, phase, reason);
    for (char *c = arg + strlen(label) + strlen(phase) + 2; *c; c++)
        if (*c == '\t' || *c == '\n')
            *c = ' ';
    s[p->skip_count].arg = arg;
    snprintf(s[p->skip_count].label, sizeof s->label, "%s", label);
    p->skip_count++;
    return true;
}

/* Starts one child; returns its pid (or -1), *fd_out the read end of its pipe. */
static pid_t spawn(parent *p, const char *report_path, int attempt_no, int *fd_out)
{
    char exe[SR_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        sr_cli_error("compare: cannot find my own executable (/proc/self/exe): %s; use "
                     "--in-process",
                     strerror(errno));
        return -1;
    }
    exe[n] = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        sr_cli_error("compare: pipe: %s", strerror(errno));
        return -1;
    }
    const sr_isolate_options *o = p->o;
    size_t cap = (size_t)o->argc + 8 + 2 * p->skip_count;
    char **argv = calloc(cap, sizeof(*argv));
    char fdbuf[16];
    snprintf(fdbuf, sizeof fdbuf, "%d", fds[1]);
    if (!argv) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    /* "compare", the hidden options, then the user's (which may end with "--") */
    size_t k = 0;
    argv[k++] = exe;
    argv[k++] = o->argv[0];
    if (attempt_no > 1 && !o->quiet)
        argv[k++] = "--quiet";
    argv[k++] = "--" SR_ISOLATE_OPT_CHILD;
    argv[k++] = fdbuf;
    argv[k++] = "--" SR_ISOLATE_OPT_REPORT;
    argv[k++] = (char *)report_path;
    for (size_t i = 0; i < p->skip_count; i++) {
        argv[k++] = "--" SR_ISOLATE_OPT_SKIP;
        argv[k++] = p->skips[i].arg;
    }
    for (int i = 1; i < o->argc; i++)
        argv[k++] = o->argv[i];
    argv[k] = NULL;
    pid_t parent_pid = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent_pid)
            _exit(SR_EXIT_ERROR);
        /* A group of its own: what a variant signals or starts stays in it, and ends with it. */
        setpgid(0, 0);
        /* The child prints nothing on stdout: what a plugin prints goes to stderr, never into
         * the parent's table. */
        dup2(STDERR_FILENO, STDOUT_FILENO);
        fcntl(fds[1], F_SETFD, 0); /* the write end survives exec */
        execv(exe, argv);
        fprintf(stderr, "sagerun: compare: cannot run %s: %s\n", exe, strerror(errno));
        _exit(SR_EXIT_ERROR);
    }
    int saved = errno;
    if (pid > 0)
        setpgid(pid, pid); /* here too: the group exists before the parent signals it */
    free(argv);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        sr_cli_error("compare: fork: %s", strerror(saved));
        return -1;
    }
    *fd_out = fds[0];
    return pid;
}

/* Waits for the child of one attempt, feeding the watchdog and forwarding stop signals. */
/* The limit on the child's time outside any call into a variant, 0 for none, from *since: before
 * its first call (plugins loading, inputs made) SR_SETUP_TIMEOUT_S, after its report
 * SR_EXIT_GRACE_S. Only plugins' constructors and destructors run there besides sagerun. */
static double idle_limit(const attempt *a, double spawned, double *since)
{
    if (a->open)
        return 0;
    if (a->report_written) {
        *since = a->written_at;
        return SR_EXIT_GRACE_S;
    }
    if (a->called)
        return 0;
    *since = spawned;
    const char *v = secure_getenv("SAGERUN_TEST_SETUP_TIMEOUT_S"); /* tests only */
    double t = v && *v ? strtod(v, NULL) : 0;
    return t > 0 && t < SR_SETUP_TIMEOUT_S ? t : SR_SETUP_TIMEOUT_S;
}

/* Kills the child's group when its open call, or its time outside calls, passed its limit (true);
 * else shortens *wait_ms to the next deadline. */
static bool watchdog(attempt *a, pid_t pid, double spawned, int *wait_ms)
{
    double since = 0, idle = idle_limit(a, spawned, &since);
    double left = a->open ? a->started + a->limit - now_s() : idle > 0 ? since + idle - now_s() : 1e9;
    if (left <= 0) {
        if (a->open) {
            a->timed_out = true;
            a->timed_out_limit = a->limit;
        } else {
            a->stuck_idle = idle;
        }
        kill(-pid, SIGKILL);
        return true;
    }
    if (left * 1000 < *wait_ms)
        *wait_ms = (int)(left * 1000) + 1;
    return false;
}

static int supervise(parent *p, attempt *a, pid_t pid, int fd, int *wstatus)
{
    bool eof = false, forwarded = false, killed = false, reaped = false;
    double forwarded_at = 0, resent_at = 0, spawned = now_s();
    while (!eof) {
        int sig = stop_signal_seen;
        if (sig > 0 && !forwarded) {
            kill(pid, sig);
            forwarded = true;
            forwarded_at = resent_at = now_s();
        } else if (forwarded && !killed && !reaped && sig > 0 && now_s() - resent_at > 1.0 &&
                   now_s() - forwarded_at <= SR_STOP_GRACE_S) {
            kill(pid, sig); /* again each second: one a variant's code ignored is lost */
            resent_at = now_s();
        } else if (forwarded && !killed && !reaped && now_s() - forwarded_at > SR_STOP_GRACE_S) {
            /* stuck where the engine cannot see the stop (outside any call) */
            fprintf(stderr, "sagerun: compare: the measurement did not stop within %g s: "
                            "killed\n", SR_STOP_GRACE_S);
            kill(-pid, SIGKILL);
            killed = true;
        } else if (sig < 0 && !killed) {
            kill(-pid, SIGKILL); /* a second signal: no more waiting */
            killed = true;
        }
        int wait_ms = 250;
        if (!killed && watchdog(a, pid, spawned, &wait_ms))
            killed = true;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, reaped ? 0 : wait_ms);
        if (r > 0)
            read_lines(p, a, fd, &eof);
        else if (r < 0 && errno != EINTR)
            eof = true;
        else if (r == 0 && reaped)
            eof = true; /* the child is gone and said everything (a grandchild may hold the pipe) */
        if (!reaped && waitpid(pid, wstatus, WNOHANG) == pid)
            reaped = true;
    }
    close(fd);
    while (!reaped && waitpid(pid, wstatus, 0) < 0) {
        if (errno != EINTR)
            return -1;
        if (stop_signal_seen < 0)
            kill(-pid, SIGKILL);
    }
    kill(-pid, SIGKILL); /* whatever a variant started (a forked process that lingers) */
    if (a->progress_shown)
        fprintf(stderr, "\r\033[K");
    return 0;
}

/* Which variant an attempt lost and why (label empty: none; the process ended on its own). */
typedef struct blame {
    char label[SR_LINE_MAX], phase[16], why[1200];
} blame;

/* How the process ended inside a variant's call, in words. */
static void ending_words(const attempt *a, int ws, char *what, size_t len)
{
    char sig[96] = "";
    if (WIFSIGNALED(ws))
        sr_cli_describe_signal(WTERMSIG(ws), sig, sizeof sig);
    if (a->sanitizer)
        snprintf(what, len, "a sanitizer report (see stderr); exit status %d",
                 WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    else if (WIFSIGNALED(ws) && a->own_signal == WTERMSIG(ws))
        snprintf(what, len, "sent %s to its own process or group (not a stop request: only "
                            "sagerun's own are)", sig);
    else if (WIFSIGNALED(ws))
        snprintf(what, len, "crashed: %s", sig);
    else if (WEXITSTATUS(ws) == SR_CHILD_EXIT_PIPE_CLOSED)
        snprintf(what, len, "closed the measuring process's pipe to sagerun (it closes "
                            "descriptors it did not open)");
    else
        snprintf(what, len, "the process exited with status %d inside the call",
                 WEXITSTATUS(ws));
}

/* A crash in code of a plugin file other than the open call's (crash_site.c), before the report
 * was written: that file's variant, outside its calls ("background"), not the variant whose call
 * happened to be open. */
static void blame_crash_site(const parent *p, const attempt *a, int ws, blame *b)
{
    char sig[96], when[SR_LINE_MAX + 64];
    sr_cli_describe_signal(WTERMSIG(ws), sig, sizeof sig);
    if (a->open)
        snprintf(when, sizeof when, "while %s's %s was running", a->label, phase_words(a->phase));
    else
        snprintf(when, sizeof when, "between calls");
    snprintf(b->label, sizeof b->label, "%s", a->crash_label);
    snprintf(b->phase, sizeof b->phase, "background");
    snprintf(b->why, sizeof b->why, "crashed: %s in its plugin's code (%s) outside its own "
                                    "calls (in a thread it started?), %s; %s",
             sig, a->crash_file, when, afterwards(p, b->label));
}

/* The variant an attempt that ended with wait status ws is to be blamed for, if any. */
static void blame_attempt(const parent *p, const attempt *a, int ws, blame *b)
{
    memset(b, 0, sizeof *b);
    if (a->lost) {
        snprintf(b->label, sizeof b->label, "%s", a->lost_label);
        snprintf(b->phase, sizeof b->phase, "%s", a->lost_phase);
        snprintf(b->why, sizeof b->why, "%s (%s: the other variants were measured again in a "
                                        "new process)",
                 a->lost_reason, a->lost_context ? "this left the CUDA context unusable"
                                                 : "nothing more could be opened");
    } else if (a->crash_label[0] && WIFSIGNALED(ws) && !a->report_written) {
        blame_crash_site(p, a, ws, b);
    } else if (a->timed_out && a->open) {
        snprintf(b->label, sizeof b->label, "%s", a->label);
        snprintf(b->phase, sizeof b->phase, "%s", a->phase);
        snprintf(b->why, sizeof b->why, "%s: timeout: no answer within %g s (hung?): killed; "
                                        "%s (--timeout)",
                 phase_words(a->phase), a->timed_out_limit, afterwards(p, a->label));
    } else if (a->open && (WIFSIGNALED(ws) || WIFEXITED(ws))) {
        /* the process ended inside a variant's call: whatever the way, that variant */
        snprintf(b->label, sizeof b->label, "%s", a->label);
        snprintf(b->phase, sizeof b->phase, "%s", a->phase);
        char what[200];
        ending_words(a, ws, what, sizeof what);
        snprintf(b->why, sizeof b->why, "%s: %s; %s", phase_words(a->phase), what,
                 afterwards(p, b->label));
    }
}

/* After the child's report (a->report_written, an "R" line): how it ended, when not cleanly. */
static void warn_late_ending(const attempt *a, int ws)
{
    char how[128] = "", sig[96];
    if (a->stuck_idle > 0) {
        snprintf(how, sizeof how, "did not exit within %g s", a->stuck_idle);
    } else if (WIFSIGNALED(ws)) {
        sr_cli_describe_signal(WTERMSIG(ws), sig, sizeof sig);
        snprintf(how, sizeof how, "ended with %s", sig);
    } else
        snprintf(how, sizeof how, "ended with exit status %d", WEXITSTATUS(ws));
    fprintf(stderr, "sagerun: compare: warning: the measurement process %s after writing its "
                    "report (in code that runs at exit, a plugin's destructor or exit handler, or "
                    "after a plugin closed stdout and stderr?); the report is kept\n",
            how);
}

/* The exit code of the last attempt, none blamed: its report read, or why there is none. */
static int last_attempt(int ws, bool stopping, const attempt *a, const char *report_path,
                        sagerun_compare_result **report)
{
    bool clean = WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
    /* after the report, a signal or the exit grace is a warning; so is a non-zero exit status
     * (a plugin that closed stdout and stderr, so that the exit's flush failed), except in a
     * sanitizer build, where a leak or race report ends the process so and CI must see it */
#ifdef SR_HAVE_SANITIZER_DEATH_CALLBACK
    bool late_status = false;
#else
    bool late_status = WIFEXITED(ws);
#endif
    bool late = a->report_written && !a->sanitizer &&
                (WIFSIGNALED(ws) || a->stuck_idle > 0 || late_status);
    if (clean || late) {
        if (!clean)
            warn_late_ending(a, ws);
        sagerun_error err = {0};
        if (sagerun_compare_result_read(report_path, report, &err) == SAGERUN_OK)
            return SR_EXIT_OK;
        sr_cli_error("compare: reading the measurement's report: %s", err.message);
    } else if (stopping) {
        sr_cli_error("compare: interrupted; the measurement ended without a report");
    } else if (a->stuck_idle > 0 && a->loading[0]) {
        sr_cli_error("compare: the measurement process made no call into a variant within %g s "
                     "of starting: killed while loading the plugins of %s (a constructor that "
                     "hangs when loaded in the measuring process?)",
                     a->stuck_idle, a->loading);
    } else if (a->stuck_idle > 0) {
        sr_cli_error("compare: the measurement process made no call into a variant within %g s "
                     "of starting (%s): killed", a->stuck_idle,
                     a->loaded ? "the plugins were loaded: making the inputs"
                               : "before loading plugins: starting the device");
    } else if (WIFEXITED(ws) && a->report_written) {
        sr_cli_error("compare: the measurement process exited with status %d after writing its "
                     "report", WEXITSTATUS(ws));
        return WEXITSTATUS(ws);
    } else if (WIFEXITED(ws)) {
        return WEXITSTATUS(ws); /* the child said why on stderr */
    } else if (WIFSIGNALED(ws)) {
        char sig[96];
        sr_cli_describe_signal(WTERMSIG(ws), sig, sizeof sig);
        sr_cli_error("compare: the measurement process died of %s outside any variant's code",
                     sig);
    }
    return SR_EXIT_ERROR;
}

/* A private folder for the child's report: under $TMPDIR, else /tmp. */
static char *make_private_dir(char *buf, size_t len)
{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(buf, len, "%s/sagerun-compare.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    char *d = mkdtemp(buf);
    if (!d) {
        snprintf(buf, len, "/tmp/sagerun-compare.XXXXXX");
        d = mkdtemp(buf);
    }
    if (!d)
        sr_cli_error("compare: cannot create a temporary folder: %s", strerror(errno));
    return d;
}

int sr_isolate_run(const sr_isolate_options *o, sagerun_compare_result **report,
                   int *stop_signal)
{
    *report = NULL;
    *stop_signal = 0;
    parent p = {.o = o};
    int rc = SR_EXIT_ERROR;
    char dirbuf[SR_PATH_MAX];
    char *d = make_private_dir(dirbuf, sizeof dirbuf);
    if (!d)
        return SR_EXIT_ERROR;
    char report_path[SR_PATH_MAX + 16];
    snprintf(report_path, sizeof report_path, "%s/report.json", d);
    sr_stop_signals_install();

    for (int attempt_no = 1; attempt_no <= SR_MAX_ATTEMPTS; attempt_no++) {
        attempt *a = calloc(1, sizeof(*a));
        int fd = -1, ws = 0;
        if (!a) {
            sr_cli_error("compare: out of memory");
            break;
        }
        unlink(report_path);
        for (size_t i = 0; i < p.slow_count; i++)
            p.slow[i].warmed = false; /* a new process: each first call is first contact again */
        pid_t pid = spawn(&p, report_path, attempt_no, &fd);
        if (pid < 0 || supervise(&p, a, pid, fd, &ws) != 0) {
            free(a);
            break;
        }
        *stop_signal = sr_stop_signal();
        blame b;
        blame_attempt(&p, a, ws, &b);
        if (!b.label[0] || *stop_signal) {
            rc = last_attempt(ws, *stop_signal != 0, a, report_path, report);
            free(a);
            break;
        }
        free(a);
        if (!add_skip(&p, b.label, b.phase, b.why)) {
            sr_cli_error("compare: %s failed again after being left out: %s", b.label, b.why);
            break;
        }
        if (!o->quiet)
            fprintf(stderr, "sagerun: %s failed: %s\n", b.label, b.why);
    }
    unlink(report_path);
    rmdir(d);
    for (size_t i = 0; i < p.skip_count; i++)
        free(p.skips[i].arg);
    free(p.skips);
    free(p.slow);
    return rc;
}
