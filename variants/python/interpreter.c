/* Finding the Python interpreter and starting it (bridge.h). The interpreter is a setting, not a
 * build choice: SAGERUN_PYTHON (a path, or a name searched in PATH), else the active virtual
 * environment's ($VIRTUAL_ENV/bin/python3), else python3 on PATH. sagerun asks it once, in a
 * process of its own, for sys.executable, sys.hexversion, its shared libpython and sys.path; then
 * loads that libpython with RTLD_GLOBAL (the interpreter's extension modules resolve their Py*
 * symbols against it), embed.so, and starts it as that interpreter (its venv's packages
 * importable). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bridge.h"

#define PY_QUERY_TIMEOUT_MS 60000
#define PY_QUERY_MAX_BYTES (1u << 20)
#define PY_MAX_PATH_ENTRIES 256

/* What the interpreter says of itself: NUL-separated executable, hexversion, libpython (or ""),
 * then the entries of sys.path. */
static const char query_script[] =
    "import os, sys, sysconfig\n"
    "v = sysconfig.get_config_var\n"
    "lib = ''\n"
    "for name in (v('INSTSONAME'), v('LDLIBRARY')):\n"
    "    for folder in (v('LIBDIR'), v('LIBPL')):\n"
    "        if not lib and name and folder and '.so' in name and "
    "os.path.exists(os.path.join(folder, name)):\n"
    "            lib = os.path.join(folder, name)\n"
    "out = [sys.executable, str(sys.hexversion), lib] + [p for p in sys.path if p]\n"
    "sys.stdout.buffer.write(b'\\0'.join(os.fsencode(x) for x in out))\n";

typedef struct py_query {
    char *buf; /* the answer; the fields point into it */
    const char *executable, *libpython;
    unsigned long hexversion;
    const char *path[PY_MAX_PATH_ENTRIES];
    size_t n_path;
} py_query;

static const char *interpreter_command(char *buf, size_t len)
{
    const char *env = getenv("SAGERUN_PYTHON"), *venv = getenv("VIRTUAL_ENV");
    if (env && *env)
        return snprintf(buf, len, "%s", env), "SAGERUN_PYTHON";
    if (venv && *venv)
        return snprintf(buf, len, "%s/bin/python3", venv), "VIRTUAL_ENV";
    return snprintf(buf, len, "python3"), "python3 on PATH";
}

/* The child: stdout to the pipe, nothing else of ours open, then the interpreter. */
static void query_child(const char *cmd, int out_fd, long max_fd)
{
    char *const argv[] = {(char *)cmd, "-c", (char *)query_script, NULL};
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0)
        dup2(devnull, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    for (long fd = 3; fd < max_fd; fd++)
        close((int)fd);
    execvp(cmd, argv);
    _exit(127);
}

/* Reads the child's stdout until EOF, the size limit or the deadline; the bytes read, or -1. */
static ssize_t read_answer(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = PY_QUERY_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
                                        (t.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (ms <= 0 || (poll(&p, 1, (int)ms) < 0 && errno != EINTR))
            return -1;
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || (n += (size_t)got) >= cap)
            return got < 0 ? -1 : (ssize_t)n;
    }
}

/* Runs the query; 0 with q->buf (len bytes, NUL-terminated), or -1 with the reason. */
static int run_query(const char *cmd, const char *from, py_query *q, size_t *len, char *err,
                     size_t errlen)
{
    int fds[2];
    long max_fd = sysconf(_SC_OPEN_MAX);
    if (!(q->buf = malloc(PY_QUERY_MAX_BYTES + 1)) || pipe(fds) != 0) {
        snprintf(err, errlen, "cannot ask the Python interpreter: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0)
        query_child(cmd, fds[1], max_fd > 0 && max_fd < 65536 ? max_fd : 4096);
    close(fds[1]);
    ssize_t got = pid > 0 ? read_answer(fds[0], q->buf, PY_QUERY_MAX_BYTES) : -1;
    close(fds[0]);
    int status = 0;
    if (pid > 0 && got < 0)
        kill(pid, SIGKILL);
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (pid < 0 || got < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "the Python interpreter '%s' (%s) %s", cmd, from,
                 pid < 0 ? "could not be started (fork failed)"
                 : got < 0 ? "did not answer within 60 s (asked for its libpython and sys.path)"
                 : WIFEXITED(status) && WEXITSTATUS(status) == 127
                     ? "could not be run: no such program (set SAGERUN_PYTHON to its path)"
                     : "failed when asked for its libpython and sys.path (its stderr is above)");
        return -1;
    }
    q->buf[got] = '\0';
    *len = (size_t)got;
    return 0;
}

/* Splits the answer into its fields; -1 when it is not one. */
static int parse_query(py_query *q, size_t len)
{
    const char *fields[3 + PY_MAX_PATH_ENTRIES];
    size_t n = 0;
    for (size_t i = 0; i <= len && n < 3 + PY_MAX_PATH_ENTRIES;) {
        fields[n++] = q->buf + i;
        i += strlen(q->buf + i) + 1;
    }
    if (n < 3)
        return -1;
    char *end;
    q->executable = fields[0];
    q->hexversion = strtoul(fields[1], &end, 10);
    q->libpython = fields[2];
    for (size_t i = 3; i < n; i++)
        q->path[q->n_path++] = fields[i];
    return *fields[0] && !*end ? 0 : -1;
}

static void version_text(unsigned long v, char *buf, size_t len)
{
    snprintf(buf, len, "%lu.%lu.%lu", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
}

/* embed.so beside bridge.so: not writable by anyone but its owner (the user or root). */
static const py_embed_api *load_embed(char *err, size_t errlen)
{
    Dl_info info;
    char path[PATH_MAX + 16];
    struct stat sb;
    if (!dladdr((void *)py_interpreter_load, &info) || !info.dli_fname) {
        snprintf(err, errlen, "the Python bridge cannot find its own file");
        return NULL;
    }
    const char *slash = strrchr(info.dli_fname, '/');
    snprintf(path, sizeof path, "%.*s/embed.so", slash ? (int)(slash - info.dli_fname) : 1,
             slash ? info.dli_fname : ".");
    if (stat(path, &sb) != 0) {
        snprintf(err, errlen, "the Python bridge's %s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(sb.st_mode) || (sb.st_mode & (S_IWGRP | S_IWOTH)) ||
        (sb.st_uid != getuid() && sb.st_uid != 0)) {
        snprintf(err, errlen, "the Python bridge's %s: not a file of this user or root, or "
                 "writable by others: not loaded", path);
        return NULL;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *sym = h ? dlsym(h, PY_EMBED_API_NAME) : NULL;
    if (!sym) {
        snprintf(err, errlen, "%s cannot be loaded: %s", path, dlerror());
        return NULL;
    }
    py_embed_api_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn();
}

/* The interpreter's libpython, checked and loaded; -1 with the reason. */
static int load_libpython(const py_query *q, const char *cmd, const char *from, char *err,
                          size_t errlen)
{
    char version[32], need[32];
    version_text(q->hexversion, version, sizeof version);
    version_text(PY_EMBED_MIN_VERSION, need, sizeof need);
    if (q->hexversion < PY_EMBED_MIN_VERSION) {
        snprintf(err, errlen, "the Python interpreter %s (%s) is %s; sagerun's Python bridge "
                 "needs %s or newer", q->executable, from, version, need);
        return -1;
    }
    if (!q->libpython[0]) {
        snprintf(err, errlen, "the Python interpreter %s (%s, from '%s') has no shared libpython "
                 "(built without --enable-shared?): sagerun embeds Python through it; use an "
                 "interpreter that has one (SAGERUN_PYTHON)", q->executable, from, cmd);
        return -1;
    }
    if (!dlopen(q->libpython, RTLD_NOW | RTLD_GLOBAL)) {
        snprintf(err, errlen, "cannot load libpython of %s (%s): %s", q->executable, from,
                 dlerror());
        return -1;
    }
    return 0;
}

/* Inside a Python process already (sagerun loaded by a Python program): its interpreter. */
static bool python_running(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    int (*is_initialized)(void);
    if (!sym)
        return false;
    memcpy(&is_initialized, &sym, sizeof is_initialized);
    return is_initialized() != 0;
}

const py_embed_api *py_interpreter_load(const sagerun_host_services *s, char *err, size_t errlen)
{
    char cmd[PATH_MAX], version[32];
    const char *from = interpreter_command(cmd, sizeof cmd);
    py_query q = {0};
    size_t len = 0;
    const py_embed_api *api = NULL;
    bool attach = python_running();
    if (!attach && run_query(cmd, from, &q, &len, err, errlen) != 0)
        goto out;
    if (!attach && parse_query(&q, len) != 0) {
        snprintf(err, errlen, "the Python interpreter '%s' (%s) gave an answer sagerun cannot "
                 "read (is it CPython 3?)", cmd, from);
        goto out;
    }
    if (!attach && load_libpython(&q, cmd, from, err, errlen) != 0)
        goto out;
    if (!(api = load_embed(err, errlen)) || api->struct_size < sizeof *api) {
        api = NULL;
        goto out;
    }
    const py_interpreter interp = {.executable = q.executable, .path = q.path,
                                   .n_path = q.n_path};
    if (api->start(attach ? NULL : &interp, err, errlen) != 0) {
        api = NULL;
        goto out;
    }
    version_text(q.hexversion, version, sizeof version);
    s->log(s->host, SAGERUN_LOG_INFO, "python: %s", attach ? "the interpreter of this process"
                                                           : q.executable);
    if (!attach)
        s->log(s->host, SAGERUN_LOG_INFO, "python: %s, %s", version, q.libpython);
out:
    free(q.buf);
    return api;
}
