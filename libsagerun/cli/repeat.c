/* compare --repeat N and sweep --repeat N (repeat.h). Two runs of one variant in two processes
 * differ by more than either run's interval holds (an instance's placement, the clocks, another
 * load: 0.6% on µs kernels, 2.3% for a 12 ms baseline between identical H200 sweeps), so the
 * unit of a comparison across runs is the process. Each repeat is this program again, with its
 * own files; the index lists them with each run's exit status, and one failed run costs only
 * itself.
 *
 * Index (JSON): {"sagerun_repeats": 1, "command": "compare" | "sweep", "repeat": N,
 *   "runs": [{"repeat": K, "file": PATH relative to the index's folder, "exit_status": S}]} */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "repeat.h"

extern char **environ;

bool sr_cli_repeat_take(const char *cmd, int *argc, char **argv, unsigned *n)
{
    *n = 0;
    for (int i = 1; i < *argc; i++) {
        const char *value = NULL;
        int take = 0;
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--repeat") == 0) {
            if (i + 1 >= *argc) {
                sr_cli_error("%s: --repeat needs a number of runs", cmd);
                return false;
            }
            value = argv[i + 1], take = 2;
        } else if (strncmp(argv[i], "--repeat=", 9) == 0) {
            value = argv[i] + 9, take = 1;
        } else {
            continue;
        }
        uint32_t v;
        if (!sr_cli_parse_u32(cmd, "--repeat", value, 1, &v))
            return false;
        if (v > 100) {
            sr_cli_error("%s: --repeat '%s': expected an integer from 1 to 100", cmd, value);
            return false;
        }
        *n = v;
        memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take + 1) * sizeof(char *));
        *argc -= take;
        i--;
    }
    return true;
}

/* The index of an option that takes a file (--json F or --json=F) in argv; -1 when absent. */
static int find_option(int argc, char **argv, const char *opt, const char **value)
{
    size_t len = strlen(opt);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], opt) == 0 && i + 1 < argc) {
            *value = argv[i + 1];
            return i + 1;
        }
        if (strncmp(argv[i], opt, len) == 0 && argv[i][len] == '=') {
            *value = argv[i] + len + 1;
            return i;
        }
    }
    return -1;
}

/* "out.json" -> "out.r3.json" (k = 3); "out" -> "out.r3". */
static char *repeat_file(const char *path, unsigned k)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (dot && (dot < (slash ? slash + 1 : path) || dot == (slash ? slash + 1 : path)))
        dot = NULL; /* a dot of a folder, or a hidden file's leading one */
    size_t stem = dot ? (size_t)(dot - path) : strlen(path);
    char *out = NULL;
    if (asprintf(&out, "%.*s.r%u%s", (int)stem, path, k, dot ? dot : "") < 0)
        return NULL;
    return out;
}

/* This program with argv (argv[0] the command); stdio inherited. Its exit status, 128+signal, or
 * -1 when it could not start. */
bool sr_cli_self_exe(char *buf, size_t len)
{
    ssize_t n = len ? readlink("/proc/self/exe", buf, len - 1) : -1;
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

/* A stop signal (SIGINT, SIGTERM, SIGHUP) while the runs go on: the running repeat ends as a
 * compare or sweep ends on it (its files written), then no other starts and the index is still
 * written. Caught, not ignored: a spawned run gets the default disposition back. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static int run_child(char **argv)
{
    char self[4096];
    if (!sr_cli_self_exe(self, sizeof self))
        return -1;
    pid_t pid;
    if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0)
        return -1;
    int status, passed = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
        if (stop_signal && !passed) /* a signal to this process alone (kill PID): passed on once */
            kill(pid, passed = stop_signal);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* What one repeat changes in the command line: the files it writes. */
typedef struct repeat_plan {
    const char *cmd, *index_dir;
    char *index;          /* the index's path (owned) */
    int slots[4];         /* argv indices of the values to rewrite; -1 none */
    const char *values[4];
    bool joined[4];       /* "--json=F": the slot holds the option too */
    const char *names[4];
} repeat_plan;

/* The value of slot s for repeat k: FILE-stem.rK.ext, or (sweep's --out-dir) DIR/repeat-K. */
static char *repeat_value(const repeat_plan *p, int s, unsigned k)
{
    char *v = NULL, *out = NULL;
    if (strcmp(p->names[s], "--out-dir") == 0) {
        if (asprintf(&v, "%s/repeat-%u", p->values[s], k) < 0)
            v = NULL;
    } else { /* stdout ("-") stays stdout: every run's table there, one after the other */
        v = strcmp(p->values[s], "-") == 0 ? strdup("-") : repeat_file(p->values[s], k);
    }
    if (!v || !p->joined[s])
        return v;
    if (asprintf(&out, "%s=%s", p->names[s], v) < 0)
        out = NULL;
    free(v);
    return out;
}

/* The plan of a command line: compare needs --json FILE (the index), sweep --out-dir DIR. */
static bool plan_repeat(repeat_plan *p, const char *cmd, int argc, char **argv)
{
    static const char *const compare_opts[] = {"--json", "--markdown", "--csv", NULL},
                             *const sweep_opts[] = {"--out-dir", "--csv", NULL, NULL};
    bool sweep = strcmp(cmd, "sweep") == 0;
    const char *const *opts = sweep ? sweep_opts : compare_opts;
    memset(p, 0, sizeof(*p));
    p->cmd = cmd;
    for (int s = 0; s < 4; s++) {
        p->slots[s] = opts[s] ? find_option(argc, argv, opts[s], &p->values[s]) : -1;
        p->names[s] = opts[s];
        p->joined[s] = p->slots[s] >= 0 && strncmp(argv[p->slots[s]], "--", 2) == 0;
    }
    if (p->slots[0] < 0 || strcmp(p->values[0], "-") == 0) {
        sr_cli_error("%s: --repeat needs %s (the runs' files are kept beside an index there, "
                     "which diff reads)", cmd, sweep ? "--out-dir DIR" : "--json FILE");
        return false;
    }
    if (sweep) {
        if (mkdir(p->values[0], 0755) != 0 && errno != EEXIST) {
            sr_cli_error("%s: --out-dir %s: %s", cmd, p->values[0], strerror(errno));
            return false;
        }
        if (asprintf(&p->index, "%s/repeats.json", p->values[0]) < 0)
            p->index = NULL;
    } else {
        p->index = strdup(p->values[0]);
    }
    return p->index != NULL;
}

/* A run's file as the index names it: relative to the index's folder where it lies there. */
static const char *index_relative(const repeat_plan *p, const char *file)
{
    size_t len = strlen(p->index_dir);
    if (strcmp(p->index_dir, ".") != 0 && strncmp(file, p->index_dir, len) == 0 &&
        file[len] == '/')
        return file + len + 1;
    return file;
}

/* The command line of repeat k: "sagerun", then argv with the plan's values rewritten (owned
 * strings in owned[]); *file: the run's file for the index. */
static char **repeat_argv(const repeat_plan *p, int argc, char **argv, unsigned k, char **owned,
                          char **file)
{
    char **a = calloc((size_t)argc + 2, sizeof(char *));
    if (!a)
        return NULL;
    a[0] = "sagerun";
    for (int i = 0; i < argc; i++)
        a[i + 1] = argv[i];
    for (int s = 0; s < 4; s++) {
        owned[s] = p->slots[s] >= 0 ? repeat_value(p, s, k) : NULL;
        if (p->slots[s] >= 0 && !owned[s]) {
            free(a);
            return NULL;
        }
        if (owned[s])
            a[p->slots[s] + 1] = owned[s];
    }
    char *v = p->slots[0] >= 0 ? repeat_value(&(repeat_plan){.names = {p->names[0]},
                                                              .values = {p->values[0]}},
                                              0, k)
                               : NULL;
    if (v && strcmp(p->cmd, "sweep") == 0) {
        char *f = NULL;
        *file = asprintf(&f, "%s/summary.json", v) < 0 ? NULL : f;
        free(v);
    } else {
        *file = v;
    }
    return a;
}

static bool write_index_cb(FILE *f, const void *user)
{
    return json_dumpf(user, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 && fputc('\n', f) != EOF;
}

/* One repeat: run, said before and (when it fails) after; its row appended to runs. */
static int one_repeat(const repeat_plan *p, int argc, char **argv, unsigned k, unsigned n,
                      json_t *runs)
{
    char *owned[4] = {0}, *file = NULL;
    char **a = repeat_argv(p, argc, argv, k, owned, &file);
    int rc = -1;
    if (a && file) {
        fprintf(stderr, "sagerun: %s: repeat %u of %u (%s)\n", p->cmd, k, n, sr_cli_text(file));
        fflush(stdout);
        rc = run_child(a);
        if (rc != 0)
            fprintf(stderr, "sagerun: %s: repeat %u of %u %s (exit %d)%s\n", p->cmd, k, n,
                    rc < 0 ? "could not start" : "failed", rc,
                    k < n && !stop_signal ? "; the others go on" : "");
        json_array_append_new(runs, json_pack("{s:I, s:s, s:i}", "repeat", (json_int_t)k, "file",
                                              index_relative(p, file), "exit_status", rc));
    }
    for (int s = 0; s < 4; s++)
        free(owned[s]);
    free(file);
    free(a);
    return a ? rc : -1;
}

int sr_cli_repeat_run(const char *cmd, int argc, char **argv, unsigned n)
{
    repeat_plan p;
    if (!plan_repeat(&p, cmd, argc, argv))
        return SR_EXIT_USAGE;
    char *dir_copy = strdup(p.index);
    p.index_dir = dir_copy ? dirname(dir_copy) : ".";
    json_t *runs = json_array();
    int first = 0;
    catch_stop_signals();
    for (unsigned k = 1; k <= n; k++) {
        int rc = one_repeat(&p, argc, argv, k, n, runs);
        if (rc != 0 && !first)
            first = rc < 0 ? SR_EXIT_ERROR : rc;
        if (stop_signal && !first)
            first = 128 + stop_signal;
        if (stop_signal || rc == SR_EXIT_SIGINT || rc == SR_EXIT_SIGTERM || rc == SR_EXIT_SIGHUP) {
            fprintf(stderr, "sagerun: %s: stopped after repeat %u of %u\n", cmd, k, n);
            break;
        }
    }
    json_t *index = json_pack("{s:i, s:s, s:I, s:o}", "sagerun_repeats", 1, "command", cmd,
                              "repeat", (json_int_t)n, "runs", runs);
    sagerun_error err = {0};
    if (!index || sr_cli_write_file(p.index, write_index_cb, index, &err) != SAGERUN_OK) {
        sr_cli_error("%s: --repeat: the index %s: %s", cmd, p.index,
                     index ? err.message : "out of memory");
        first = SR_EXIT_ERROR;
    } else {
        fprintf(stderr, "sagerun: %s: %zu of %u runs, index %s\n", cmd, json_array_size(runs), n,
                sr_cli_text(p.index));
    }
    json_decref(index);
    free(dir_copy);
    free(p.index);
    return first;
}

void sr_cli_repeat_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}

/* The path of a run's file, beside the index. */
static char *beside(const char *index, const char *file)
{
    if (file[0] == '/')
        return strdup(file);
    char *copy = strdup(index), *out = NULL;
    if (copy && asprintf(&out, "%s/%s", dirname(copy), file) < 0)
        out = NULL;
    free(copy);
    return out;
}

char **sr_cli_repeat_paths(const char *path, size_t *n, bool *sweep, sagerun_error *err)
{
    json_error_t jerr;
    *n = 0;
    json_t *root = sr_cli_json_load(path, 0, &jerr);
    if (!root || !json_is_object(root) || !json_object_get(root, "sagerun_repeats")) {
        json_decref(root);
        return NULL; /* not an index: the other readers say what it is */
    }
    json_t *runs = json_object_get(root, "runs");
    const char *cmd = json_string_value(json_object_get(root, "command"));
    *sweep = cmd && strcmp(cmd, "sweep") == 0;
    char **paths = calloc(json_array_size(runs) + 1, sizeof(char *));
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        const char *file = json_string_value(json_object_get(r, "file"));
        char *p = file && paths ? beside(path, file) : NULL;
        struct stat st;
        if (p && stat(p, &st) == 0 && S_ISREG(st.st_mode)) { /* a failed run may have none */
            paths[(*n)++] = p;
            continue;
        }
        fprintf(stderr, "sagerun: %s: runs[%zu] (repeat %lld, exit %lld): no file %s: left out\n",
                sr_cli_text(path), i, json_integer_value(json_object_get(r, "repeat")),
                json_integer_value(json_object_get(r, "exit_status")), file ? sr_cli_text(file) : "?");
        free(p);
    }
    json_decref(root);
    if (!*n) {
        sr_cli_repeat_paths_free(paths, 0);
        sr_cli_error_set(err, SAGERUN_FORMAT, "%s: a repeat index with no run that has a file",
                         path);
        return NULL;
    }
    return paths;
}
