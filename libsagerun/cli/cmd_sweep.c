/* sagerun sweep: one comparison per workload of a sweep file (the engine of compare.h), a report
 * each and a summary table; --shard I/N runs every N-th workload from I so that shards run on
 * different GPUs or nodes, and `sagerun merge` combines their summaries. The sweep file is read by
 * sweep_file.c; the summary's writer and table (shared with merge, diff and show) are
 * sweep_summary.c's. Each workload runs as a child `sagerun compare` (run_one). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "cli.h"
#include "compare_options.h"
#include "repeat.h"
#include "isolate.h"
#include "sweep.h"
#include "sweep_axes.h"
#include "sweep_file.h"
#include "sweep_gpus.h"

static void sweep_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun sweep SWEEP.json [--shard I/N | --gpus all|LIST] [--out-dir DIR] [options]\n"
            "\n"
            "Runs 'sagerun compare' on every workload of a sweep file and writes one JSON report\n"
            "per workload (DIR/<workload>.json), the summary table on stdout, DIR/summary.md and\n"
            "DIR/summary.json. A workload that fails is recorded and the sweep goes on. The\n"
            "summary is rewritten after every workload, so an interrupted sweep keeps what ran.\n"
            "\n"
            "The sweep file (JSON; unknown keys are errors):\n"
            "  {\"name\": \"n-sweep\",                  default: the file name without .json\n"
            "   \"workloads\": [                        required, in the workload-file format:\n"
            "       {\"name\": \"n1k\", \"shape\": [1, 1024, 56, 128]},   an inline workload\n"
            "       \"wan-block24.json\"],              or a workload file, relative to this one\n"
            "   \"defaults\": {\"heads_kv\": 8},         keys added to every inline workload\n"
            "   \"baseline\": \"baseline\", \"variants\": [\"interleave-softmax\"],\n"
            "   \"warmup\": 3, \"rounds\": 5, \"iterations\": 10, \"noise_threshold_percent\": 1,\n"
            "   \"accuracy_rows\": 1024, \"accuracy\": true, \"clocks\": true,\n"
            "   \"axes\": {\"N\": [1024, 4096], \"dtype\": [\"fp16\", \"bf16\"],\n"
            "            \"tuned[block]\": [64, 128]},\n"
            "   \"description\": \"...\"}\n"
            "axes: each workload once per combination of their values (the first axis varies\n"
            "slowest), named NAME/N=1024,dtype=fp16,tuned[block]=64. Workload axes (inline\n"
            "workloads only): B, N, Hq, D set that entry of the shape; heads_kv, dtype, layout,\n"
            "causal, sm_scale, kv_len, softcap, window, varlen and page_size that key (values as\n"
            "in a workload file: 'sagerun workload --help'; window [L, R], varlen an array of\n"
            "lengths or \"random:MIN-MAX:SEED\"). A variant-parameter axis VARIANT[KEY] gives\n"
            "each compared variant VARIANT (named in variants or by --variant, plain or with other\n"
            "parameters) KEY=value at that point: tuned -> tuned[block=64]; the baseline keeps\n"
            "its own; every value is checked against the variant's declaration before anything\n"
            "runs. The summary gives each workload's \"axes\"; the CSV a column per axis.\n"
            "A sweep has at most 4096 workloads, every point of the axes counted.\n"
            "An inline workload without a name is named by its shape (1x1024x56x128).\n"
            "The file's warmup, rounds or iterations ask for compare's fixed schedule as the\n"
            "options do (unless --schedule says otherwise); without any, each workload gets\n"
            "compare's timed schedule.\n"
            "\n"
            "sharding (one process per GPU or node, each with its --device or\n"
            "CUDA_VISIBLE_DEVICES; then 'sagerun merge DIR...'):\n"
            "  --shard I/N            run the workloads whose index is I modulo N (0 <= I < N)\n"
            "  --gpus all|LIST        one shard per GPU of this host (LIST: CUDA ordinals, e.g.\n"
            "                         0,2,3), all at once, each bound to its GPU through\n"
            "                         CUDA_VISIBLE_DEVICES (a point's baseline and variants run on\n"
            "                         one card), each taking the next point, heaviest first, as it\n"
            "                         gets free; shard K in DIR/gpu-K (its log DIR/gpu-K.log), a\n"
            "                         line per finished point naming its GPU, then the shards\n"
            "                         merged into DIR as 'sagerun merge' does (a shard that\n"
            "                         fails is named, exit 1; the others take its points). GPUs of\n"
            "                         different models are refused unless --allow-mixed-gpus\n"
            "                         (test hook: SAGERUN_TEST_FAKE_GPUS=N or MODEL,MODEL,...)\n"
            "  --allow-mixed-gpus     --gpus: run on GPUs of different models all the same (the\n"
            "                         merged summary flags it)\n"
            "  --claim-dir DIR        with --shard (what --gpus gives its shards): instead of every\n"
            "                         N-th point, each point that no other shard claimed in DIR\n"
            "                         yet, heaviest first (B x N x keys x Hq x D), so that a GPU\n"
            "                         that is done takes the next\n"
            "output:\n"
            "  --out-dir DIR          default ./sweep-<name>, with --shard ./sweep-<name>-shard-IofN;\n"
            "                         refused where DIR holds another sweep's or shard's summary\n"
            "  --csv FILE             also write every workload's table as CSV: compare's\n"
            "                         columns after a 'workload' column (see 'compare --help');\n"
            "                         a workload without a report has one row, saying why in\n"
            "                         'failure'; - is stdout, and the table then goes to stderr\n"
            "  --quiet                no progress lines on stderr\n"
            SR_CLI_REPEAT_HELP
            "                         (each a whole sweep into DIR/repeat-K, the index\n"
            "                         DIR/repeats.json, which diff reads; needs --out-dir)\n"
            "compare options (over the sweep file's; passed on to each workload's compare, see\n"
            "'sagerun compare --help'):\n"
            SR_CLI_COMPARE_VARIANTS_HELP
            SR_CLI_COMPARE_SCHEDULE_HELP
            "checks:\n"
            SR_CLI_COMPARE_CHECKS_HELP
            SR_CLI_TOLERANCE_HELP
            SR_CLI_COMPARE_DEVICE_HELP
            "fault containment (each workload's compare):\n"
            SR_CLI_COMPARE_TIMEOUT_HELP
            "\n"
            "exit status:\n"
            "  0  every workload ran, every variant byte-exact with its reference\n"
            "  1  error: bad sweep file, or some workload or variant failed (the others ran)\n"
            "  2  usage error\n"
            "  3  everything ran, but some output is not byte-exact (nor within the tolerance\n"
            "     given: --max-ulp, --min-cos, --max-rel-l1)\n"
            "  129 (SIGHUP), 130 (SIGINT), 143 (SIGTERM)  interrupted: the running comparison\n"
            "     ends with its rounds so far, the summary, the table and --csv hold the\n"
            "     workloads that ran\n");
}

/* ---- running ---------------------------------------------------------------------------------- */

static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *shard_json(long index, long count)
{
    return count > 0 ? json_pack("{s:i, s:i}", "index", (json_int_t)index, "count",
                                 (json_int_t)count)
                     : json_null();
}

/* The row of one workload: its place, shape and the comparison's headline per variant. */
static json_t *workload_row(size_t index, const sagerun_workload *w, const char *device,
                            const char *backend)
{
    const sagerun_problem *p = sagerun_workload_problem(w);
    return json_pack("{s:I, s:s, s:[I, I, I, I], s:I, s:n, s:s, s:n, s:s, s:s, s:[]}", "index",
                     (json_int_t)index, "name", sagerun_workload_name(w), "shape",
                     (json_int_t)p->batch,
                     (json_int_t)p->seq_len, (json_int_t)p->heads_q, (json_int_t)p->head_dim,
                     "heads_kv", (json_int_t)p->heads_kv, "report", "status", "error", "error",
                     "device", device, "backend", backend, "variants");
}

/* ---- one workload: a `sagerun compare` of its own ----------------------------------------------
 * Each workload runs as a child `sagerun compare` with the sweep's options spelled out, so it gets
 * compare's fault containment (a variant that crashes, hangs or poisons the CUDA context is
 * reported failed and the others are measured again without it) and a bad plugin costs its rows,
 * never the sweep. The child writes the workload's report; the row is read back from it. */

typedef struct arg_list {
    char **v;
    size_t n, cap;
} arg_list;

static bool args_add(arg_list *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool args_add(arg_list *a, const char *fmt, ...)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 32;
        char **v = realloc(a->v, cap * sizeof(*v));
        if (!v)
            return false;
        a->v = v;
        a->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&a->v[a->n], fmt, ap);
    va_end(ap);
    if (rc < 0)
        return false;
    a->v[++a->n] = NULL;
    return true;
}

static void args_free(arg_list *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof(*a));
}

/* The compare command line every workload shares (argv[0] is this program): the sweep file's
 * options first, where the command line does not give them, then the command line's compare
 * options as given (a later value wins in compare). With variant-parameter axes each point names
 * its own variants (run_one): none are shared. */
/* Every variant the comparisons name (the baseline, the variants: the sweep file's or --variant)
 * is found before any runs: a misspelt one failed every workload, one comparison at a time, and
 * left a folder of errors that a corrected sweep could not write over. false after saying which. */
static bool variants_found(const char *sweep_path, const sagerun_compare_options *o,
                           sagerun_registry *reg)
{
    sagerun_error err = {0};
    size_t n = o->variants ? o->variant_count : 0;
    for (size_t i = 0; i <= n; i++) {
        const char *name = i == 0 ? o->baseline : o->variants[i - 1];
        if (!name)
            continue;
        if (sr_cli_bind_specs(reg, &name, 1, &err) != SAGERUN_OK) {
            sr_cli_error("sweep: %s: %s", sweep_path, err.message);
            return false;
        }
        if (sagerun_registry_find(reg, name) < 0) {
            sr_cli_error("sweep: %s: no %s named '%s' (the sweep file's or the command line's; "
                         "see 'sagerun list' for what was found and rejected): nothing ran",
                         sweep_path, i == 0 ? "baseline variant" : "variant", name);
            return false;
        }
    }
    return true;
}

static bool compare_args(arg_list *a, const sr_sweep_file *s, const sr_cli_compare_settings *set)
{
    const sagerun_compare_options *o = &set->opts;
    bool per_point = s->specs != NULL;
    bool ok = args_add(a, "sagerun") && args_add(a, "compare") && args_add(a, "--quiet") &&
              args_add(a, "--baseline") && args_add(a, "%s", o->baseline);
    for (size_t i = 0; ok && !per_point && !set->n_variants && s->has_variants &&
                       i < s->variant_count;
         i++)
        ok = args_add(a, "--variant") && args_add(a, "%s", s->variants[i]);
    /* the file's counts are a fixed schedule's: seed has its own, timed none (sweep_file.c) */
    bool fixed = o->schedule == SAGERUN_SCHEDULE_FIXED;
    if (ok && s->warmup >= 0 && fixed)
        ok = args_add(a, "--warmup") && args_add(a, "%lld", s->warmup);
    if (ok && s->rounds >= 0 && fixed)
        ok = args_add(a, "--rounds") && args_add(a, "%lld", s->rounds);
    if (ok && s->iterations >= 0 && fixed)
        ok = args_add(a, "--iterations") && args_add(a, "%lld", s->iterations);
    if (ok && isfinite(s->threshold)) { /* a plain decimal (the option takes no exponent) */
        int places = 0;
        char text[400];
        do
            snprintf(text, sizeof text, "%.*f", places, s->threshold);
        while (strtod(text, NULL) != s->threshold && ++places < 340);
        ok = args_add(a, "--noise-threshold") && args_add(a, "%s", text);
    }
    if (ok && s->accuracy_rows >= 0)
        ok = args_add(a, "--accuracy-rows") && args_add(a, "%lld", s->accuracy_rows);
    if (ok && s->accuracy == 0)
        ok = args_add(a, "--no-accuracy");
    if (ok && s->clocks == 0)
        ok = args_add(a, "--no-clocks");
    for (size_t i = 0; ok && i < set->n_given; i++)
        if (!per_point || set->given_opts[i]->val != SR_OPT_VARIANT)
            ok = args_add(a, "--%s", set->given_opts[i]->name) &&
                 (!set->given_args[i] || args_add(a, "%s", set->given_args[i]));
    return ok;
}

/* Runs `argv` as this program with stdout discarded and stderr into the file `log`; returns its
 * exit status, 128+signal when it was killed, or -1 (errno set) when it could not start. */
static int run_self(char **argv, const char *log)
{
    char self[4096];
    if (!sr_cli_self_exe(self, sizeof self))
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    /* a fresh file (run_one removed whatever had the name): never through a link or a FIFO */
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, log,
                                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    /* a stop signal of the sweep's own (kill PID, not the terminal's, which reaches the whole
     * group) is passed on once: the comparison ends with its rounds so far, not orphaned */
    int status, passed = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
        if (sr_stop_signal() && !passed)
            kill(pid, passed = sr_stop_signal());
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* One variant of the row, from the workload's report. */
static json_t *variant_row(const sagerun_compare_variant *v)
{
    bool timed = v->timing.count > 0;
    const char *verdict = sagerun_verdict_name(v->verdict);
    json_t *iv = isfinite(v->speedup_low_percent) && isfinite(v->speedup_high_percent)
                     ? json_pack("[f, f]", v->speedup_low_percent, v->speedup_high_percent)
                     : json_null();
    /* speedup_percent: the seed's ratio of the p50s; speedup_estimate_percent: the paired
     * estimate at the centre of interval_percent, the headline (as compare's table) */
    return json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "label",
                     v->label ? v->label : v->name, "name", v->name, "is_baseline",
                     v->is_baseline, "p50_s", real_or_null(timed ? v->timing.p50_s : NAN),
                     "speedup_percent", real_or_null(v->speedup_percent),
                     "speedup_estimate_percent", real_or_null(v->speedup_estimate_percent),
                     "interval_percent", iv,
                     "verdict", verdict ? json_string(verdict) : json_null(), "byte_exact",
                     timed ? json_boolean(v->byte_exact) : json_null(), "failure",
                     v->failure ? json_string(v->failure) : json_null());
}

/* The row's variants and status from the workload's report. */
static bool fill_from_report(json_t *row, const sagerun_compare_result *r)
{
    json_t *vs = json_object_get(row, "variants");
    bool failed = false, inexact = false;
    for (size_t i = 0; i < sagerun_compare_result_variant_count(r); i++) {
        sagerun_compare_variant v = {.struct_size = sizeof v};
        if (sagerun_compare_result_variant(r, i, &v, NULL) != SAGERUN_OK)
            return false;
        json_t *o = variant_row(&v);
        if (!o || json_array_append_new(vs, o) != 0)
            return false;
        failed |= !v.ran;
        inexact |= !v.accepted; /* byte-exact, or within the tolerance given */
    }
    const char *status = !sagerun_compare_result_complete(r) ? "incomplete"
                         : failed                            ? "failed"
                         : inexact                           ? "not-byte-exact"
                                                             : "ok";
    json_object_set_new(row, "status", json_string(status));
    json_object_set_new(row, "error", json_null());
    return true;
}

/* Copies the child's messages to stderr and keeps its last line (its error, when it failed). */
static void relay_log(const char *log, char *last, size_t len)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    char line[SAGERUN_ERROR_MESSAGE_SIZE + 64];
    while (fgets(line, sizeof(line), f)) {
        fputs(line, stderr);
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n)
            snprintf(last, len, "%s", strncmp(line, "sagerun: ", 9) == 0 ? line + 9 : line);
    }
    fclose(f);
}

/* The workload as a file for the compare that measures it, which reads it from out_dir: an
 * input path relative to here made absolute (compare would take it relative to out_dir, and read
 * a missing file there, or silently another one of the same name). NULL when out of memory. */
static char *workload_text(const sagerun_workload *w)
{
    char *text = sagerun_workload_to_json(w, 2);
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    json_t *in = json_object_get(j, "input"), *path = json_object_get(in, "path");
    if (!json_is_string(path) || json_string_value(path)[0] == '/' || !json_string_value(path)[0]) {
        json_decref(j);
        return text;
    }
    char *cwd = getcwd(NULL, 0), *full = NULL, *out = NULL;
    if (cwd && asprintf(&full, "%s/%s", cwd, json_string_value(path)) >= 0 &&
        json_object_set_new(in, "path", json_string(full)) == 0)
        out = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    free(cwd);
    free(full);
    free(text);
    json_decref(j);
    return out;
}

/* One workload; returns the child's exit status (130/143: the sweep was interrupted). */
static int run_one(const arg_list *shared, char *const *variants, size_t n_variants,
                   const sagerun_workload *w, const char *out_dir, const char *file, json_t *row)
{
    char *report = NULL, *spec = NULL, *log = NULL, why[SAGERUN_ERROR_MESSAGE_SIZE] = "";
    char last[SAGERUN_ERROR_MESSAGE_SIZE] = "";
    arg_list a = {0};
    char *wj = workload_text(w);
    sagerun_compare_result *r = NULL;
    sagerun_error err = {0};
    int rc = SR_EXIT_ERROR;
    if (asprintf(&report, "%s/%s", out_dir, file) < 0 ||
        asprintf(&spec, "%s/.%s.workload.json", out_dir, file) < 0 ||
        asprintf(&log, "%s/.%s.log", out_dir, file) < 0) {
        report = spec = log = NULL;
        snprintf(why, sizeof(why), "out of memory");
        goto done;
    }
    unlink(spec); /* our hidden files: a link or a FIFO under their names is replaced, not used */
    unlink(log);
    if (!wj || sagerun_file_write(spec, wj, strlen(wj), &err) != SAGERUN_OK) {
        snprintf(why, sizeof(why), "cannot write the workload file %s: %s", spec,
                 wj ? err.message : "out of memory");
        goto done;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < shared->n; i++)
        ok = args_add(&a, "%s", shared->v[i]);
    for (size_t i = 0; ok && i < n_variants; i++)
        ok = args_add(&a, "--variant") && args_add(&a, "%s", variants[i]);
    if (!ok || !args_add(&a, "--workload") || !args_add(&a, "%s", spec) ||
        !args_add(&a, "--json") || !args_add(&a, "%s", report)) {
        snprintf(why, sizeof(why), "out of memory");
        goto done;
    }
    unlink(report); /* a report left by an earlier run must not pass for this one */
    rc = run_self(a.v, log);
    relay_log(log, last, sizeof(last));
    if (rc < 0) {
        snprintf(why, sizeof(why), "cannot start sagerun compare: %s", strerror(errno));
        rc = SR_EXIT_ERROR;
        goto done;
    }
    if (access(report, F_OK) != 0) {
        snprintf(why, sizeof(why), "%s", last[0] ? last : "sagerun compare failed without a report");
        goto done;
    }
    if (sagerun_compare_result_read(report, &r, &err) != SAGERUN_OK) {
        snprintf(why, sizeof(why), "%s", err.message);
        goto done;
    }
    if (!fill_from_report(row, r)) {
        snprintf(why, sizeof(why), "out of memory");
        goto done;
    }
    json_object_set_new(row, "report", json_string(file));
done:
    if (why[0]) {
        json_object_set_new(row, "status", json_string("error"));
        json_object_set_new(row, "error", json_string(why));
        json_array_clear(json_object_get(row, "variants"));
    }
    if (spec)
        unlink(spec);
    if (log)
        unlink(log);
    free(log);
    sagerun_compare_result_destroy(r);
    free(wj);
    args_free(&a);
    free(report);
    free(spec);
    return rc;
}

static bool parse_shard(const char *text, long *index, long *count)
{
    char *end;
    errno = 0;
    long i = strtol(text, &end, 10);
    if (end == text || *end != '/' || errno)
        return false;
    const char *c = end + 1;
    long n = strtol(c, &end, 10);
    if (end == c || *end || errno || n < 1 || i < 0 || i >= n || n > 100000)
        return false;
    *index = i;
    *count = n;
    return true;
}

/* What the run of a sweep needs beyond the file: where, which shard, and on what. */
typedef struct sweep_run {
    const char *out_dir;
    long shard_index, shard_count; /* count 0: not sharded */
    bool quiet, on_host;
    const char *device, *backend;
    const char *gpus; /* --gpus: all, or a list of ordinals; NULL: this process runs the points */
    bool allow_mixed_gpus;
    const char *claim_dir; /* --claim-dir (a --gpus shard): points claimed there, not by index */
} sweep_run;

static bool in_shard(const sweep_run *run, size_t i)
{
    return !run->shard_count || (long)(i % (size_t)run->shard_count) == run->shard_index;
}

/* Whether this process runs point i: its shard's, or (--claim-dir) one no other shard took. */
static bool takes(const sweep_run *run, size_t i)
{
    return run->claim_dir ? sr_sweep_claim(run->claim_dir, i) : in_shard(run, i);
}

/* The compare command line every workload ran with, past "sagerun compare": options.compare_args
 * of the summary, so that merge refuses shards measured another way (--timer, --order, a
 * tolerance, ...), which the options' fields alone do not show. Left out: where a shard ran and
 * its watchdog (--device, --timeout), which shards may differ in. */
static json_t *compare_args_json(const arg_list *shared)
{
    json_t *a = json_array();
    for (size_t i = 2; a && i < shared->n; i++)
        if (!strcmp(shared->v[i], "--device") || !strcmp(shared->v[i], "--timeout"))
            i++; /* and its value */
        else if (json_array_append_new(a, sr_cli_json_text(shared->v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* The summary before anything ran (sweep.h): the sweep, its effective options, no rows yet. */
static json_t *summary_new(const sr_sweep_file *s, const char *sweep_path,
                           const sagerun_compare_options *opts, const sweep_run *run,
                           const arg_list *shared)
{
    json_t *names = json_array(), *variants = json_null();
    for (size_t i = 0; names && i < s->count; i++)
        json_array_append_new(names, json_string(sagerun_workload_name(s->workloads[i])));
    if (opts->variants) {
        variants = json_array();
        for (size_t i = 0; i < opts->variant_count; i++)
            json_array_append_new(variants, json_string(opts->variants[i]));
    }
    const char *schedule = opts->schedule == SAGERUN_SCHEDULE_FIXED  ? "fixed"
                           : opts->schedule == SAGERUN_SCHEDULE_SEED ? "seed"
                                                                     : "timed";
    return json_pack(
        "{s:i, s:{s:o, s:o, s:s, s:I, s:o}, s:{s:s, s:o, s:s, s:I, s:I, s:I, s:f, s:I, s:b, s:b, "
        "s:o}, s:o, s:{s:s, s:s, s:s}, s:[]}",
        "sagerun_sweep_summary", SR_SWEEP_SUMMARY_VERSION, "sweep", "name",
        sr_cli_json_text(s->name), "file", sr_cli_json_text(sweep_path), "sha256", s->sha256,
        "workload_count", (json_int_t)s->count, "workloads", names, "options", "baseline",
        opts->baseline, "variants", variants, "schedule", schedule,
        "warmup", (json_int_t)opts->warmup, "rounds", (json_int_t)opts->rounds, "iterations",
        (json_int_t)opts->iterations, "noise_threshold_percent", opts->noise_threshold_percent,
        "accuracy_rows", (json_int_t)opts->accuracy_rows, "accuracy",
        !(opts->flags & SAGERUN_COMPARE_SKIP_ACCURACY), "clocks",
        !(opts->flags & SAGERUN_COMPARE_NO_CLOCKS), "compare_args", compare_args_json(shared), "shard",
        shard_json(run->shard_index, run->shard_count), "tool", "name", "sagerun", "version",
        SAGERUN_VERSION_STRING, "git_commit", SAGERUN_GIT_COMMIT, "workloads");
}

/* The files the sweep reads: the sweep file, the workload files it names, their inputs. */
static bool sweep_inputs(const sr_sweep_file *s, const char *sweep_path, arg_list *in)
{
    char *copy = strdup(sweep_path);
    if (!copy || !args_add(in, "%s", sweep_path)) {
        free(copy);
        return false;
    }
    const char *dir = dirname(copy);
    bool ok = true;
    size_t i;
    const json_t *item;
    json_array_foreach(json_object_get(s->root, "workloads"), i, item) {
        const char *p = json_string_value(item);
        if (p && ok)
            ok = p[0] == '/' ? args_add(in, "%s", p) : args_add(in, "%s/%s", dir, p);
    }
    for (size_t k = 0; ok && k < s->count; k++) {
        const char *input = sagerun_workload_input_path(s->workloads[k]);
        if (input)
            ok = args_add(in, "%s", input);
    }
    free(copy);
    return ok;
}

/* Before anything runs: no file the sweep writes (a point's report, its hidden workload and log
 * files, the summary, the CSV) is one the sweep reads. A workload named like the sweep file, or
 * --out-dir holding the inputs, replaced them with reports. false after printing why. */
static bool outputs_spare_inputs(const sr_sweep_file *s, const char *sweep_path,
                                 const char *out_dir, const char *csv_path)
{
    arg_list in = {0}, out = {0};
    bool ok = sweep_inputs(s, sweep_path, &in);
    for (size_t i = 0; ok && i < s->count; i++)
        ok = args_add(&out, "%s/%s", out_dir, s->files[i]) &&
             args_add(&out, "%s/.%s.workload.json", out_dir, s->files[i]) &&
             args_add(&out, "%s/.%s.log", out_dir, s->files[i]);
    ok = ok && args_add(&out, "%s/%s", out_dir, SR_SWEEP_SUMMARY_JSON) &&
         args_add(&out, "%s/%s", out_dir, SR_SWEEP_SUMMARY_MD) &&
         (!csv_path || args_add(&out, "%s", csv_path));
    if (!ok)
        sr_cli_error("sweep: out of memory");
    for (size_t o = 0; ok && o < out.n; o++)
        for (size_t k = 0; ok && k < in.n; k++)
            if (strcmp(out.v[o], in.v[k]) == 0 || sr_cli_same_file(out.v[o], in.v[k])) {
                sr_cli_error("sweep: %s, which the sweep writes, is the input %s: refusing to "
                             "overwrite it (another --out-dir, or rename the workload)",
                             out.v[o], in.v[k]);
                ok = false;
            }
    for (size_t o = 0; ok && csv_path && o + 1 < out.n; o++)
        if (strcmp(out.v[o], csv_path) == 0 || sr_cli_same_file(out.v[o], csv_path)) {
            sr_cli_error("sweep: --csv %s is %s, which the sweep writes", csv_path, out.v[o]);
            ok = false;
        }
    args_free(&in);
    args_free(&out);
    return ok;
}

/* Point i of the sweep (the done-th of the shard's mine), its row appended to the summary and
 * the summary written; -1 to go on, else the exit code. */
static int run_point(const sr_sweep_file *s, const arg_list *shared, const sweep_run *run,
                     json_t *summary, size_t i, size_t done, size_t mine)
{
    sagerun_error err = {0};
    json_t *rows = json_object_get(summary, "workloads");
    const sagerun_workload *w = s->workloads[i];
    const sagerun_problem *wp = sagerun_workload_problem(w);
    if (!run->quiet)
        fprintf(stderr, "sagerun sweep: [%zu/%zu] workload %zu '%s' [%u, %u, %u, %u]%s%s\n",
                done, mine, i, sr_cli_text(sagerun_workload_name(w)), wp->batch, wp->seq_len,
                wp->heads_q, wp->head_dim, run->on_host ? "" : " on ",
                run->on_host ? "" : run->device);
    json_t *row = workload_row(i, w, run->device, run->backend);
    if (row && s->axes)
        json_object_set(row, "axes", s->axes[i]); /* the point's named axes */
    if (!row || json_array_append_new(rows, row) != 0) {
        sr_cli_error("sweep: out of memory");
        return SR_EXIT_ERROR;
    }
    int child = run_one(shared, s->specs ? s->specs[i] : NULL, s->specs ? s->spec_count : 0,
                        w, run->out_dir, s->files[i], row);
    json_object_set_new(row, "ran_on", sr_sweep_ran_on(run->out_dir, row));
    if (!run->quiet && json_is_string(json_object_get(row, "error")))
        fprintf(stderr, "sagerun sweep: workload '%s': %s\n", sr_cli_text(sagerun_workload_name(w)),
                sr_cli_text(json_string_value(json_object_get(row, "error"))));
    if (sr_sweep_summary_write(run->out_dir, summary, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        return SR_EXIT_ERROR;
    }
    int sig = sr_stop_signal();
    if (sig || child == SR_EXIT_SIGINT || child == SR_EXIT_SIGTERM || child == SR_EXIT_SIGHUP) {
        /* the comparison got the signal too (the terminal's group, or passed on by run_self):
         * stop here; the summary holds what ran, this workload's report is incomplete */
        sr_cli_error("sweep: interrupted; the summary in %s holds the workloads that ran",
                     run->out_dir);
        return sig ? 128 + sig : child;
    }
    return -1;
}

/* Runs the shard's workloads one by one, the summary written before the first and after each
 * (an interrupted sweep keeps what ran). Returns -1 when they all ran, else the exit code. */
static int run_workloads(const sr_sweep_file *s, const arg_list *shared, const sweep_run *run,
                         json_t *summary)
{
    sagerun_error err = {0};
    size_t mine = 0, done = 0, *order = run->claim_dir ? sr_sweep_heaviest_first(s) : NULL;
    for (size_t i = 0; i < s->count; i++)
        mine += run->claim_dir || in_shard(run, i); /* claims: at most all of them */
    if (run->claim_dir && !order) {
        sr_cli_error("sweep: out of memory");
        return SR_EXIT_ERROR;
    }
    if (mine == 0 && !run->quiet)
        fprintf(stderr, "sagerun sweep: shard %ld/%ld has no workload (the sweep has %zu)\n",
                run->shard_index, run->shard_count, s->count);
    /* an empty summary first: a shard that dies early still says which sweep it belonged to */
    if (sr_sweep_summary_write(run->out_dir, summary, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        free(order);
        return SR_EXIT_ERROR;
    }
    int rc = -1;
    for (size_t k = 0; rc < 0 && k < s->count; k++) {
        size_t i = order ? order[k] : k;
        if (!takes(run, i))
            continue;
        rc = run_point(s, shared, run, summary, i, ++done, mine);
    }
    free(order);
    return rc;
}

static bool interrupted_exit(int rc)
{
    return rc == SR_EXIT_SIGINT || rc == SR_EXIT_SIGTERM || rc == SR_EXIT_SIGHUP;
}

/* --gpus and --claim-dir with the other options; false after saying what does not go. */
static bool gpu_options_agree(const sweep_run *run, const sr_cli_compare_settings *set)
{
    if (run->claim_dir && (!run->shard_count || run->gpus || !*run->claim_dir)) {
        sr_cli_error("sweep: --claim-dir: a folder, with --shard (what --gpus gives its shards)");
        return false;
    }
    if (run->gpus && (run->shard_count || sr_cli_compare_given(set, SR_OPT_DEVICE))) {
        sr_cli_error("sweep: --gpus runs a shard per GPU: not with --%s",
                     run->shard_count ? "shard" : "device");
        return false;
    }
    return true;
}

/* --gpus: the shards check and run the points, once the out dir is known to take the merge (it
 * was found only after every point had run). This process lets its context and registry go
 * first: it needs no GPU of its own while they run. */
static int sweep_on_gpus(const sweep_run *run, const sr_cli_compare_settings *set,
                         const char *sweep_path, const sr_sweep_file *s, const char *csv_path,
                         sagerun_registry **reg, sagerun_context **ctx)
{
    sagerun_registry_destroy(*reg);
    sagerun_context_destroy(*ctx);
    *reg = NULL;
    *ctx = NULL;
    json_t *sweep = json_pack("{s:o, s:s}", "name", sr_cli_json_text(s->name), "sha256", s->sha256);
    bool free_dir = sweep && sr_sweep_out_dir_takes("sweep", run->out_dir, sweep, NULL);
    json_decref(sweep);
    if (!free_dir)
        return SR_EXIT_ERROR;
    const sr_sweep_gpus_run g = {run->gpus, sweep_path, s->count, run->out_dir, csv_path,
                                 run->quiet, run->allow_mixed_gpus};
    return sr_sweep_gpus(&g, set);
}

/* The sweep's own options (the compare options go to set); returns -1 to go on, else the exit
 * code (--help, a usage error). */
static int parse_options(int argc, char **argv, sr_cli_compare_settings *set, sweep_run *run,
                         const char **csv_path)
{
    enum { O_OUT_DIR = 256, O_SHARD, O_QUIET, O_CSV, O_GPUS, O_MIXED, O_CLAIM };
    static const struct option longopts[] = {
        SR_CLI_COMPARE_OPTIONS,
        {"out-dir", required_argument, 0, O_OUT_DIR},
        {"csv", required_argument, 0, O_CSV},
        {"shard", required_argument, 0, O_SHARD},
        {"quiet", no_argument, 0, O_QUIET},
        {"gpus", required_argument, 0, O_GPUS},
        {"allow-mixed-gpus", no_argument, 0, O_MIXED},
        {"claim-dir", required_argument, 0, O_CLAIM},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case O_OUT_DIR: run->out_dir = optarg; break;
        case O_CSV: *csv_path = optarg; break;
        case O_SHARD:
            if (!parse_shard(optarg, &run->shard_index, &run->shard_count)) {
                sr_cli_error("sweep: --shard '%s': expected I/N with 0 <= I < N (e.g. 0/2)",
                             optarg);
                return SR_EXIT_USAGE;
            }
            break;
        case O_QUIET: run->quiet = true; break;
        case O_GPUS:
            if (!sr_sweep_gpus_valid(optarg)) {
                sr_cli_error("sweep: --gpus '%s': expected all, or CUDA ordinals separated by "
                             "commas, each once (e.g. 0,2,3)",
                             optarg);
                return SR_EXIT_USAGE;
            }
            run->gpus = optarg;
            break;
        case O_MIXED: run->allow_mixed_gpus = true; break;
        case O_CLAIM: run->claim_dir = optarg; break;
        case 'h': sweep_usage(stdout); return SR_EXIT_OK;
        default: {
            int taken = sr_cli_compare_option("sweep", set, c, optarg);
            if (taken < 0)
                return SR_EXIT_USAGE;
            if (!taken)
                return sr_cli_bad_option("sweep", c, argv, longopts);
        }
        }
    }
    if (argc - optind != 1) {
        sr_cli_error("sweep: expected one sweep file (see 'sagerun sweep --help')");
        return SR_EXIT_USAGE;
    }
    if (!gpu_options_agree(run, set))
        return SR_EXIT_USAGE;
    if (run->out_dir && !*run->out_dir) {
        sr_cli_error("sweep: --out-dir: an empty path");
        return SR_EXIT_USAGE;
    }
    if (!sr_cli_compare_settings_finish("sweep", set))
        return SR_EXIT_USAGE;
    const char *const csv_opt[] = {"--csv"}, *const csv_in[] = {argv[optind]};
    int rc = *csv_path ? sr_cli_check_outputs("sweep", csv_opt, csv_path, 1, csv_in, 1)
                       : SR_EXIT_OK;
    return rc != SR_EXIT_OK ? rc : -1;
}

/* The sweep's points in this process's children, one after the other: the summary written
 * before the first and after each, then the table and the CSV of what ran. */
static int sweep_here(sweep_run *run, const sr_cli_compare_settings *set, sr_sweep_file *s,
                      const char *sweep_path, const char *csv_path)
{
    arg_list shared = {0};
    json_t *summary = NULL;
    sagerun_error err = {0};
    int rc = SR_EXIT_ERROR;
    if (!compare_args(&shared, s, set) ||
        !(summary = summary_new(s, sweep_path, &set->opts, run, &shared))) {
        sr_cli_error("sweep: out of memory");
        goto out;
    }
    if (sr_sweep_mkdirs(run->out_dir, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: --out-dir: %s", err.message);
        goto out;
    }
    if (!outputs_spare_inputs(s, sweep_path, run->out_dir, csv_path) ||
        !sr_sweep_out_dir_free("sweep", run->out_dir, json_object_get(summary, "sweep"),
                               json_object_get(summary, "shard")))
        goto out;
    /* SIGINT, SIGTERM, SIGHUP: passed on to the running comparison, which ends with a report of
     * its rounds so far; then the table and the CSV of what ran (an interrupted sweep keeps it) */
    sr_stop_signals_install();
    int ran = run_workloads(s, &shared, run, summary);
    if (ran >= 0 && !interrupted_exit(ran)) {
        rc = ran;
        goto out;
    }
    const char *const csv_out[] = {csv_path};
    FILE *table = sr_cli_table_out(csv_out, 1);
    sr_sweep_summary_print(summary, table, false);
    fprintf(table, "summary: %s/%s, %s/%s\n", run->out_dir, SR_SWEEP_SUMMARY_JSON, run->out_dir,
            SR_SWEEP_SUMMARY_MD);
    rc = ran >= 0 ? ran : sr_sweep_summary_exit_code(summary);
    if (csv_path &&
        sr_sweep_summary_write_csv(summary, run->out_dir, csv_path, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: --csv: %s", err.message);
        rc = SR_EXIT_ERROR;
    }
out:
    args_free(&shared);
    json_decref(summary);
    return rc;
}

int sr_cmd_sweep(int argc, char **argv)
{
    unsigned repeat;
    if (!sr_cli_repeat_take("sweep", &argc, argv, &repeat))
        return SR_EXIT_USAGE;
    if (repeat)
        return sr_cli_repeat_run("sweep", argc, argv, repeat);
    sr_cli_compare_settings set;
    if (!sr_cli_compare_settings_init(&set, "sweep", argc))
        return SR_EXIT_ERROR;
    sweep_run run = {0};
    const char *csv_path = NULL;
    sr_sweep_file s = {0};
    char *dir_buf = NULL;
    sagerun_context *ctx = NULL;
    sagerun_registry *reg = NULL;
    sagerun_error err = {0};
    int rc = parse_options(argc, argv, &set, &run, &csv_path);
    if (rc >= 0)
        goto out;
    const char *sweep_path = argv[optind];
    rc = SR_EXIT_ERROR;
    if (sr_sweep_file_load(sweep_path, &s, &err) != SAGERUN_OK ||
        sr_cli_context(set.backend, (int)set.device, run.quiet, &ctx, &err) != SAGERUN_OK ||
        sr_cli_registry(ctx, set.plugins, set.n_plugins, &set.policy, &reg, &err) !=
            SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        goto out;
    }
    run.on_host = sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST;
    sr_sweep_file_apply(&s, &set, run.on_host);
    const sagerun_compare_options opts = set.opts;
    if (run.on_host && !sr_cli_compare_given(&set, SR_OPT_BASELINE) && !s.baseline && !run.quiet)
        fprintf(stderr, "sagerun: host backend: baseline 'reference' (CUDA variants need a GPU)\n");
    if (!variants_found(sweep_path, &opts, reg))
        goto out;
    if (sr_sweep_file_bind_points(&s, sweep_path, &opts, reg, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        goto out;
    }
    sagerun_device_info info = {.struct_size = sizeof info};
    if (sagerun_context_device_info(ctx, &info, &err) != SAGERUN_OK)
        snprintf(info.name, sizeof(info.name), "unknown");
    const char *backend_name = sagerun_backend_name(sagerun_context_backend(ctx));
    run.device = info.name;
    run.backend = backend_name ? backend_name : "?";
    if (!run.out_dir && !(run.out_dir = dir_buf = sr_sweep_default_out_dir(s.name, run.shard_index,
                                                                           run.shard_count))) {
        sr_cli_error("sweep: out of memory");
        goto out;
    }
    if (run.gpus) {
        rc = sweep_on_gpus(&run, &set, sweep_path, &s, csv_path, &reg, &ctx);
        goto out;
    }
    rc = sweep_here(&run, &set, &s, sweep_path, csv_path);
out:
    sr_sweep_file_free(&s);
    free(dir_buf);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(ctx);
    sr_cli_compare_settings_free(&set);
    return rc;
}
