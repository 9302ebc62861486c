/* sagerun sweep --gpus all|LIST: one shard per GPU of this host, in parallel. The GPUs are found
 * through the library (a CUDA context on each ordinal until there is none: the lazily loaded
 * driver, which counts what CUDA_VISIBLE_DEVICES lets through, as the shards will; nvidia-smi
 * would list GPUs this process cannot see and is not on every node). Shard I/N is a child
 * `sagerun sweep --shard I/N` with CUDA_VISIBLE_DEVICES naming its one GPU, so that each point's
 * baseline and variants run on the same card; `sagerun merge` then combines the shards. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "isolate.h"
#include "sweep.h"
#include "sweep_gpus.h"

extern char **environ;

#define MAX_GPUS 64

typedef struct gpu {
    char name[256];    /* the model, as the driver names it */
    char visible[128]; /* CUDA_VISIBLE_DEVICES of its shard */
    int ordinal;       /* CUDA ordinal in this process */
} gpu;

/* A file's version: its inode and modification time (an atomic rewrite makes a new inode, so
 * that two writes within one tick of the clock still differ); zeros when there is none. */
typedef struct stamp {
    struct timespec mtime;
    ino_t ino;
} stamp;

/* One shard: its GPU, process, folder and the points it reported so far. */
typedef struct shard {
    gpu g;
    pid_t pid;
    int rc; /* exit code; -1 while it runs */
    char *dir, *log;
    size_t done; /* points it finished */
    stamp summary_before; /* its summary before it started: one left by an earlier run is not
                             merged as this run's */
    stamp summary_seen;   /* ... when its progress was last read */
} shard;

/* ---- which GPUs ------------------------------------------------------------------------------ */

/* The ordinals of a list "0,2,3" into out (at most MAX_GPUS, each once); -1 when it is not one. */
static int parse_list(const char *text, int *out)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long k = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1;
        if (k < 0 || k >= MAX_GPUS || errno || n == MAX_GPUS || (*end && *end != ','))
            return -1;
        for (int i = 0; i < n; i++)
            if (out[i] == (int)k)
                return -1;
        out[n++] = (int)k;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return -1; /* a trailing comma */
    }
    return n;
}

bool sr_sweep_gpus_valid(const char *text)
{
    int list[MAX_GPUS];
    return strcmp(text, "all") == 0 || parse_list(text, list) > 0;
}

/* Entry k of this process's CUDA_VISIBLE_DEVICES (what ordinal k is), else k itself. */
static void visible_entry(int k, char *buf, size_t len)
{
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(buf, len, "%d", k);
    for (int i = 0; list && *list; i++) {
        size_t n = strcspn(list, ",");
        if (i == k) {
            snprintf(buf, len, "%.*s", (int)n, list);
            return;
        }
        list += n + (list[n] == ',');
    }
}

/* The test hook's GPUs: a count, or the models' names. */
static int fake_gpus(const char *text, gpu *g)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (end != text && !*end)
        for (int k = 0; k < n && k < MAX_GPUS; k++)
            snprintf(g[k].name, sizeof g[k].name, "fake GPU");
    else
        for (n = 0; *text && n < MAX_GPUS; n++) {
            size_t len = strcspn(text, ",");
            snprintf(g[n].name, sizeof g[n].name, "%.*s", (int)len, text);
            text += len + (text[len] == ',');
        }
    return n < 1 || n > MAX_GPUS ? -1 : (int)n;
}

/* Every GPU this process sees, by ordinal, into g; -1 after saying why there is none. */
static int host_gpus(const char *spec, gpu *g)
{
    const char *fake = getenv(SR_SWEEP_FAKE_GPUS_ENV);
    if (fake && *fake) {
        int n = fake_gpus(fake, g);
        if (n < 0)
            sr_cli_error("sweep: %s='%s': expected 1 to %d, or GPU models separated by commas",
                         SR_SWEEP_FAKE_GPUS_ENV, fake, MAX_GPUS);
        return n;
    }
    int n = 0;
    for (; n < MAX_GPUS; n++) {
        sagerun_context *ctx = NULL;
        sagerun_error err = {0};
        sagerun_device_info info = {.struct_size = sizeof info};
        sagerun_status st = sagerun_context_create(SAGERUN_BACKEND_CUDA, n, &ctx, &err);
        if (st == SAGERUN_OK)
            st = sagerun_context_device_info(ctx, &info, &err);
        sagerun_context_destroy(ctx);
        if (st != SAGERUN_OK && n == 0) {
            sr_cli_error("sweep: --gpus %s: no GPU here: %s", spec, err.message);
            return -1;
        }
        if (st != SAGERUN_OK)
            break; /* the first ordinal past the last */
        snprintf(g[n].name, sizeof g[n].name, "%s", info.name);
    }
    return n;
}

/* The GPUs --gpus asks for, each with its shard's CUDA_VISIBLE_DEVICES; -1 after saying why. */
static int chosen_gpus(const char *spec, bool allow_mixed, gpu *out)
{
    gpu all[MAX_GPUS] = {0};
    int n_all = host_gpus(spec, all), want[MAX_GPUS], n = 0;
    if (n_all < 0)
        return -1;
    int n_want = strcmp(spec, "all") == 0 ? n_all : parse_list(spec, want);
    for (int i = 0; i < n_want; i++) {
        int k = strcmp(spec, "all") == 0 ? i : want[i];
        if (k >= n_all) {
            sr_cli_error("sweep: --gpus %s: there is no GPU %d here (%d GPU%s: 0 to %d)", spec, k,
                         n_all, n_all == 1 ? "" : "s", n_all - 1);
            return -1;
        }
        out[n] = all[k];
        out[n].ordinal = k;
        visible_entry(k, out[n].visible, sizeof out[n].visible);
        if (!allow_mixed && strcmp(out[n].name, out[0].name) != 0) {
            sr_cli_error("sweep: --gpus %s: GPU %d is '%s', GPU %d '%s': points timed on "
                         "different models do not compare along the sweep; pick GPUs of one "
                         "model, or --allow-mixed-gpus",
                         spec, out[0].ordinal, out[0].name, k, out[n].name);
            return -1;
        }
        n++;
    }
    return n;
}

/* ---- claiming points ------------------------------------------------------------------------ */

typedef struct weighed {
    double weight; /* B x N x keys x Hq x D */
    size_t index;
} weighed;

static int heavier_first(const void *a, const void *b)
{
    const weighed *x = a, *y = b;
    if (x->weight != y->weight)
        return (x->weight < y->weight) - (x->weight > y->weight);
    return (x->index > y->index) - (x->index < y->index);
}

size_t *sr_sweep_heaviest_first(const sr_sweep_file *s)
{
    size_t n = s->count ? s->count : 1, *order = malloc(n * sizeof *order);
    weighed *w = malloc(n * sizeof *w);
    for (size_t i = 0; order && w && i < s->count; i++) {
        const sagerun_problem *p = sagerun_workload_problem(s->workloads[i]);
        w[i].weight = (double)p->batch * p->seq_len * (p->kv_len ? p->kv_len : p->seq_len) *
                      p->heads_q * p->head_dim;
        w[i].index = i;
    }
    if (order && w)
        qsort(w, s->count, sizeof *w, heavier_first);
    for (size_t i = 0; order && w && i < s->count; i++)
        order[i] = w[i].index;
    if (!w) {
        free(order);
        order = NULL;
    }
    free(w);
    return order;
}

bool sr_sweep_claim(const char *claim_dir, size_t i)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%zu", claim_dir, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST)
        sr_cli_error("sweep: --claim-dir: cannot claim workload %zu (%s): %s", i, path,
                     strerror(errno));
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* A fresh claim folder in out_dir for the shards of one run (NULL: said why not). */
static char *claim_dir_new(const char *out_dir)
{
    char *dir = NULL;
    sagerun_error err = {0};
    if (sr_sweep_mkdirs(out_dir, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: --out-dir: %s", err.message);
        return NULL;
    }
    if (asprintf(&dir, "%s/.claims-XXXXXX", out_dir) < 0 || !mkdtemp(dir)) {
        sr_cli_error("sweep: cannot make a claim folder in %s: %s", out_dir,
                     dir ? strerror(errno) : "out of memory");
        free(dir);
        return NULL;
    }
    return dir;
}

/* Removes the claim folder and the claims in it. */
static void claim_dir_remove(char *dir, size_t count)
{
    char path[4096];
    for (size_t i = 0; dir && i < count; i++) {
        snprintf(path, sizeof path, "%s/%zu", dir, i);
        unlink(path);
    }
    if (dir)
        rmdir(dir);
    free(dir);
}

/* ---- running the shards ---------------------------------------------------------------------- */

static bool self_path(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

/* environ with CUDA_VISIBLE_DEVICES=visible in place of its own; NULL when out of memory. */
static char **shard_environ(const char *visible)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env || asprintf(&env[0], "CUDA_VISIBLE_DEVICES=%s", visible) < 0) {
        free(env);
        return NULL;
    }
    for (size_t i = 0, k = 1; i < n; i++)
        if (strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) != 0)
            env[k++] = environ[i];
    return env;
}

/* argv of shard i/n: sweep SWEEP --shard i/n --out-dir DIR --claim-dir CLAIMS --quiet and the
 * compare options as
 * given (sweep passes them on to each point's compare). Strings are allocated (free_argv). */
static char **shard_argv(const sr_sweep_gpus_run *run, const sr_cli_compare_settings *set,
                         const shard *s, int i, int n, const char *claim_dir)
{
    char **a = calloc(2 * set->n_given + 12, sizeof *a);
    size_t k = 0;
    bool ok = a && asprintf(&a[k++], "sagerun") >= 0 && asprintf(&a[k++], "sweep") >= 0 &&
              asprintf(&a[k++], "%s", run->sweep_path) >= 0 &&
              asprintf(&a[k++], "--shard=%d/%d", i, n) >= 0 &&
              asprintf(&a[k++], "--out-dir=%s", s->dir) >= 0 &&
              asprintf(&a[k++], "--claim-dir=%s", claim_dir) >= 0 &&
              asprintf(&a[k++], "--quiet") >= 0;
    for (size_t g = 0; ok && g < set->n_given; g++) {
        ok = asprintf(&a[k++], "--%s", set->given_opts[g]->name) >= 0;
        if (ok && set->given_args[g])
            ok = asprintf(&a[k++], "%s", set->given_args[g]) >= 0;
    }
    if (ok)
        return a;
    for (size_t j = 0; a && j < k; j++)
        free(a[j]);
    free(a);
    return NULL;
}

static void free_argv(char **a)
{
    for (size_t j = 0; a && a[j]; j++)
        free(a[j]);
    free(a);
}

/* Starts argv as this program, stdout and stderr into the fresh file log (NULL: inherited), in
 * env; the pid, or -1 (errno set). */
static pid_t spawn_self(char **argv, char **env, const char *log)
{
    char self[4096];
    if (!self_path(self, sizeof self))
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (log) { /* ours: whatever had the name is replaced, never written through */
        unlink(log);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log,
                                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    }
    pid_t pid;
    int rc = posix_spawn(&pid, self, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return pid;
}

static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static stamp stamp_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (stamp){st.st_mtim, st.st_ino} : (stamp){{0, 0}, 0};
}

static bool same_stamp(stamp a, stamp b)
{
    return a.ino == b.ino && a.mtime.tv_sec == b.mtime.tv_sec && a.mtime.tv_nsec == b.mtime.tv_nsec;
}

/* Whether the shard wrote its summary (its folder's summary.json changed since it started). */
static bool wrote_summary(const shard *s)
{
    char *path = NULL;
    bool wrote = s->dir && asprintf(&path, "%s/%s", s->dir, SR_SWEEP_SUMMARY_JSON) >= 0 &&
                 !same_stamp(stamp_of(path), s->summary_before);
    free(path);
    return wrote;
}

/* Starts shard i/n in OUT/gpu-K; false after saying why not. */
static bool start_shard(const sr_sweep_gpus_run *run, const sr_cli_compare_settings *set, shard *s,
                        int i, int n, const char *claim_dir)
{
    s->rc = -1;
    if (asprintf(&s->dir, "%s/gpu-%d", run->out_dir, s->g.ordinal) < 0 ||
        asprintf(&s->log, "%s/gpu-%d.log", run->out_dir, s->g.ordinal) < 0) {
        s->dir = s->log = NULL;
        sr_cli_error("sweep: out of memory");
        return false;
    }
    char **argv = shard_argv(run, set, s, i, n, claim_dir), *summary = NULL;
    char **env = shard_environ(s->g.visible);
    if (asprintf(&summary, "%s/%s", s->dir, SR_SWEEP_SUMMARY_JSON) >= 0)
        s->summary_before = stamp_of(summary);
    free(summary);
    sagerun_error err = {0};
    if (!argv || !env)
        sr_cli_error("sweep: out of memory");
    else if (sr_sweep_mkdirs(run->out_dir, &err) != SAGERUN_OK)
        sr_cli_error("sweep: --out-dir: %s", err.message);
    else if ((s->pid = spawn_self(argv, env, s->log)) < 0)
        sr_cli_error("sweep: cannot start shard %d/%d on GPU %d: %s", i, n, s->g.ordinal,
                     strerror(errno));
    else if (!run->quiet)
        fprintf(stderr,
                "sagerun sweep: shard %d/%d on GPU %d (%s, CUDA_VISIBLE_DEVICES=%s), log %s\n",
                i, n, s->g.ordinal, sr_cli_text(s->g.name), sr_cli_text(s->g.visible),
                sr_cli_text(s->log));
    if (env)
        free(env[0]);
    free(env);
    free_argv(argv);
    return s->pid > 0;
}

/* A line for every point the shard finished since the last call (its summary is rewritten after
 * each point); all_done counts the points of every shard. */
static void shard_progress(shard *s, size_t *all_done, size_t total, bool quiet)
{
    char *path = NULL;
    json_error_t jerr;
    if (asprintf(&path, "%s/%s", s->dir, SR_SWEEP_SUMMARY_JSON) < 0)
        return;
    stamp now = stamp_of(path);
    bool changed = !same_stamp(now, s->summary_before) && !same_stamp(now, s->summary_seen);
    s->summary_seen = now;
    json_t *root = changed ? sr_cli_json_load(path, 0, &jerr) : NULL;
    const json_t *rows = json_object_get(root, "workloads");
    for (size_t i = s->done; i < json_array_size(rows); i++) {
        const json_t *row = json_array_get(rows, i);
        ++*all_done;
        if (!quiet)
            fprintf(stderr, "sagerun sweep: GPU %d: [%zu] '%s' %s (%zu/%zu in all)\n",
                    s->g.ordinal, i + 1,
                    sr_cli_text(json_string_value(json_object_get(row, "name"))),
                    sr_cli_text(json_string_value(json_object_get(row, "status"))), *all_done,
                    total);
    }
    if (json_array_size(rows) > s->done)
        s->done = json_array_size(rows);
    json_decref(root);
    free(path);
}

/* Waits for every shard, saying what each finished as it goes; a stop signal is passed on once. */
static void wait_shards(shard *sh, int n, size_t total, bool quiet)
{
    int running = 0, passed = 0;
    size_t all_done = 0;
    for (int i = 0; i < n; i++)
        running += sh[i].pid > 0;
    while (running > 0) {
        for (int i = 0; i < n; i++) {
            int status;
            bool running_before = sh[i].pid > 0 && sh[i].rc < 0;
            if (running_before && waitpid(sh[i].pid, &status, WNOHANG) == sh[i].pid) {
                sh[i].rc = exit_code(status);
                running--;
            }
            if (sh[i].pid > 0)
                shard_progress(&sh[i], &all_done, total, quiet);
        }
        int sig = sr_stop_signal();
        for (int i = 0; sig && !passed && i < n; i++)
            if (sh[i].pid > 0 && sh[i].rc < 0)
                kill(sh[i].pid, sig);
        passed |= sig;
        struct timespec nap = {0, 200 * 1000 * 1000};
        if (running > 0)
            nanosleep(&nap, NULL);
    }
}

/* The last line of a shard's log: its error, when it failed. */
static void last_line(const char *log, char *buf, size_t len)
{
    FILE *f = fopen(log, "r");
    char line[SAGERUN_ERROR_MESSAGE_SIZE + 64];
    buf[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0]) /* without the program's name: the message says it */
            snprintf(buf, len, "%s", strncmp(line, "sagerun: ", 9) == 0 ? line + 9 : line);
    }
    if (f)
        fclose(f);
}

/* Says which shards failed (anything but 0 and 3); whether one did. */
static bool shards_failed(const shard *sh, int n)
{
    bool failed = false;
    for (int i = 0; i < n; i++) {
        if (sh[i].rc == SR_EXIT_OK || sh[i].rc == SR_EXIT_NOT_BYTE_EXACT)
            continue;
        char last[SAGERUN_ERROR_MESSAGE_SIZE + 64] = "";
        if (sh[i].log)
            last_line(sh[i].log, last, sizeof last);
        sr_cli_error("sweep: shard %d/%d on GPU %d (%s) %s %d after %zu point%s%s%s; its log: %s",
                     i, n, sh[i].g.ordinal, sr_cli_text(sh[i].g.name),
                     sh[i].rc > 128 ? "ended by signal" : "failed with exit code",
                     sh[i].rc > 128 ? sh[i].rc - 128 : sh[i].rc, sh[i].done,
                     sh[i].done == 1 ? "" : "s",
                     last[0] ? ": " : "", sr_cli_text(last),
                     sr_cli_text(sh[i].log ? sh[i].log : "none"));
        failed = true;
    }
    return failed;
}

/* ---- merging --------------------------------------------------------------------------------- */

/* `sagerun merge --allow-missing` of the shards that wrote a summary into out_dir; the merged
 * summary (loaded), or NULL when there was nothing to merge or merge refused (it said why). */
static json_t *merge_shards(const sr_sweep_gpus_run *run, const shard *sh, int n)
{
    char **a = calloc((size_t)n + 8, sizeof *a), *summary = NULL;
    size_t k = 0, inputs = 0;
    bool ok = a && asprintf(&a[k++], "sagerun") >= 0 && asprintf(&a[k++], "merge") >= 0 &&
              asprintf(&a[k++], "--quiet") >= 0 && asprintf(&a[k++], "--allow-missing") >= 0 &&
              asprintf(&a[k++], "--out-dir=%s", run->out_dir) >= 0 &&
              (!run->allow_mixed || asprintf(&a[k++], "--allow-mixed-gpus") >= 0) &&
              asprintf(&summary, "%s/%s", run->out_dir, SR_SWEEP_SUMMARY_JSON) >= 0;
    for (int i = 0; ok && i < n; i++)
        if (wrote_summary(&sh[i]) && (ok = asprintf(&a[k++], "%s", sh[i].dir) >= 0))
            inputs++;
    json_t *merged = NULL;
    stamp before = ok ? stamp_of(summary) : (stamp){{0, 0}, 0};
    pid_t pid = ok && inputs ? spawn_self(a, environ, NULL) : -1;
    int status;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    stamp after = ok ? stamp_of(summary) : before;
    json_error_t jerr;
    if (pid > 0 && !same_stamp(after, before))
        merged = sr_cli_json_load(summary, 0, &jerr); /* merge wrote it */
    else if (!ok)
        sr_cli_error("sweep: out of memory");
    else if (!inputs)
        sr_cli_error("sweep: no shard wrote a summary: nothing to merge");
    free_argv(a);
    free(summary);
    return merged;
}

/* The merged table as sweep prints it, and --csv. false after saying why the CSV failed. */
static bool print_merged(const sr_sweep_gpus_run *run, const json_t *merged)
{
    const char *const csv_out[] = {run->csv_path};
    FILE *table = sr_cli_table_out(csv_out, 1);
    sr_sweep_summary_print(merged, table, false);
    fprintf(table, "summary: %s/%s, %s/%s\n", run->out_dir, SR_SWEEP_SUMMARY_JSON, run->out_dir,
            SR_SWEEP_SUMMARY_MD);
    sagerun_error err = {0};
    if (run->csv_path &&
        sr_sweep_summary_write_csv(merged, run->out_dir, run->csv_path, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: --csv: %s", err.message);
        return false;
    }
    return true;
}

/* After the shards: which failed, the merge, the table; sweep's exit code. */
static int finish(const sr_sweep_gpus_run *run, shard *sh, int n)
{
    int sig = sr_stop_signal();
    bool failed = shards_failed(sh, n);
    json_t *merged = merge_shards(run, sh, n);
    int rc = merged ? sr_sweep_summary_exit_code(merged) : SR_EXIT_ERROR;
    if (merged && !print_merged(run, merged))
        rc = SR_EXIT_ERROR;
    if (merged && json_array_size(json_object_get(merged, "missing")))
        rc = SR_EXIT_ERROR; /* said under the table */
    json_decref(merged);
    if (failed)
        rc = SR_EXIT_ERROR;
    return sig ? 128 + sig : rc;
}

int sr_sweep_gpus(const sr_sweep_gpus_run *run, const sr_cli_compare_settings *set)
{
    gpu g[MAX_GPUS];
    shard sh[MAX_GPUS] = {0};
    int n = chosen_gpus(run->gpus, run->allow_mixed, g);
    if (n < 0)
        return SR_EXIT_ERROR;
    if (!run->quiet)
        fprintf(stderr, "sagerun sweep: %zu points on %d GPU%s, one shard each; merged into %s\n",
                run->workload_count, n, n == 1 ? "" : "s", sr_cli_text(run->out_dir));
    char *claims = claim_dir_new(run->out_dir);
    if (!claims)
        return SR_EXIT_ERROR;
    sr_stop_signals_install();
    int started = 0;
    for (int i = 0; i < n; i++) {
        sh[i].g = g[i];
        started += start_shard(run, set, &sh[i], i, n, claims);
    }
    wait_shards(sh, n, run->workload_count, run->quiet);
    claim_dir_remove(claims, run->workload_count);
    int rc = started ? finish(run, sh, n) : SR_EXIT_ERROR;
    for (int i = 0; i < n; i++) {
        free(sh[i].dir);
        free(sh[i].log);
    }
    return rc;
}

/* ---- where each point ran -------------------------------------------------------------------- */

/* [lowest, highest] SM clock of a report's rounds; null when it has none. */
static json_t *clocks_seen(const json_t *report)
{
    const json_t *rounds = json_object_get(json_object_get(report, "clocks"), "rounds"), *r;
    json_int_t lo = -1, hi = -1;
    size_t i;
    json_array_foreach(rounds, i, r) {
        const json_t *c = json_object_get(r, "sm_clock_mhz");
        if (!json_is_integer(c))
            continue;
        json_int_t v = json_integer_value(c);
        lo = lo < 0 || v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    return lo < 0 ? json_null() : json_pack("[I, I]", lo, hi);
}

static json_t *string_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string(json_string_value(v)) : json_null();
}

json_t *sr_sweep_ran_on(const char *out_dir, const json_t *row)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES"), *file = NULL;
    json_t *report = NULL;
    char *path = NULL;
    json_error_t jerr;
    if ((file = json_string_value(json_object_get(row, "report"))) &&
        asprintf(&path, "%s/%s", out_dir, file) >= 0)
        report = sr_cli_json_load(path, 0, &jerr);
    free(path);
    const json_t *dev = json_object_get(report, "device");
    json_t *on = json_pack("{s:o, s:o, s:o, s:o, s:o}", "cuda_visible_devices",
                           visible ? sr_cli_json_text(visible) : json_null(), "uuid",
                           string_of(dev, "uuid"), "pci_bus_id", string_of(dev, "pci_bus_id"),
                           "driver_release", string_of(dev, "driver_release"), "sm_clock_mhz",
                           clocks_seen(report));
    json_decref(report);
    return on;
}

/* The string at rows[j] (key NULL) or its key; "?" when there is none. */
static const char *str_at(const json_t *rows, size_t j, const char *key)
{
    const json_t *x = json_array_get(rows, j);
    const char *v = json_string_value(key ? json_object_get(x, key) : x);
    return v ? v : "?";
}

/* Where a row ran, as one phrase: its device, UUID, PCI bus and CUDA_VISIBLE_DEVICES. */
static void place_of(const json_t *row, char *buf, size_t len)
{
    const json_t *on = json_object_get(row, "ran_on");
    const char *dev = json_string_value(json_object_get(row, "device"));
    const char *uuid = json_string_value(json_object_get(on, "uuid"));
    const char *pci = json_string_value(json_object_get(on, "pci_bus_id"));
    const char *vis = json_string_value(json_object_get(on, "cuda_visible_devices"));
    snprintf(buf, len, "%s%s%s%s%s%s%s", dev ? dev : "?", uuid ? " " : "", uuid ? uuid : "",
             pci ? " PCI " : "", pci ? pci : "", vis ? " CUDA_VISIBLE_DEVICES=" : "",
             vis ? vis : "");
}

/* The first of places[0..i] that is places[i]. */
static size_t first_of(char (*place)[512], size_t i)
{
    size_t k = 0;
    while (k < i && strcmp(place[k], place[i]) != 0)
        k++;
    return k;
}

void sr_sweep_print_where(const json_t *summary, FILE *out, const char *bullet)
{
    const json_t *rows = json_object_get(summary, "workloads");
    const json_t *mixed = json_object_get(summary, "mixed_gpus");
    size_t n = json_array_size(rows), places = 0;
    char (*place)[512] = calloc(n ? n : 1, sizeof *place);
    for (size_t i = 0; place && i < n; i++) {
        place_of(json_array_get(rows, i), place[i], sizeof place[i]);
        places += first_of(place, i) == i;
    }
    for (size_t i = 0; place && places > 1 && i < n; i++) {
        if (first_of(place, i) < i)
            continue; /* said with its first point */
        fprintf(out, "%sran on %s:", bullet, place[i]);
        for (size_t j = i; j < n; j++)
            if (strcmp(place[j], place[i]) == 0)
                fprintf(out, " %s", str_at(rows, j, "name"));
        fprintf(out, "\n");
    }
    free(place);
    for (size_t i = 0; i < json_array_size(mixed); i++)
        fprintf(out, "%s%s%s", i ? ", " : bullet,
                i ? "" : "GPU models mixed (merge --allow-mixed-gpus; compare points only within "
                         "one model): ",
                str_at(mixed, i, NULL));
    if (json_array_size(mixed))
        fprintf(out, "\n");
}
