/* sagerun sweep: one comparison per workload of a sweep file (the engine of compare.h), a report
 * each and a summary table; --shard I/N runs every N-th workload from I so that shards run on
 * different GPUs or nodes, and `sagerun merge` combines their summaries. The summary's writer
 * and table (shared with merge, diff and show) are sweep_summary.c's. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "cli.h"
#include "compare_options.h"
#include "sweep.h"
#include "sweep_axes.h"

static void sweep_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun sweep SWEEP.json [--shard I/N] [--out-dir DIR] [options]\n"
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
            "causal and sm_scale that key. A variant-parameter axis VARIANT[KEY] gives each\n"
            "compared variant VARIANT (named in variants or by --variant, plain or with other\n"
            "parameters) KEY=value at that point: tuned -> tuned[block=64]; the baseline keeps\n"
            "its own; every value is checked against the variant's declaration before anything\n"
            "runs. The summary gives each workload's \"axes\"; the CSV a column per axis.\n"
            "An inline workload without a name is named by its shape (1x1024x56x128).\n"
            "The file's warmup, rounds or iterations ask for compare's fixed schedule as the\n"
            "options do (unless --schedule says otherwise); without any, each workload gets\n"
            "compare's timed schedule.\n"
            "\n"
            "sharding (one process per GPU or node, each with its --device or\n"
            "CUDA_VISIBLE_DEVICES; then 'sagerun merge DIR...'):\n"
            "  --shard I/N            run the workloads whose index is I modulo N (0 <= I < N)\n"
            "output:\n"
            "  --out-dir DIR          default ./sweep-<name>, with --shard ./sweep-<name>-shard-IofN\n"
            "  --csv FILE             also write every workload's table as CSV: compare's\n"
            "                         columns after a 'workload' column (see 'compare --help')\n"
            "  --quiet                no progress lines on stderr\n"
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
            "     given: --max-ulp, --min-cos, --max-rel-l1)\n");
}

/* ---- the sweep file --------------------------------------------------------------------------- */

typedef struct sweep {
    json_t *root;           /* the file's JSON; strings below point into it */
    json_t *expanded;       /* the workloads with the axes applied (NULL: no axes) */
    json_t **axes;          /* per workload: {axis: value} of its point (NULL: no axes) */
    char ***specs;          /* per workload: the variants it compares (NULL: no variant axes) */
    size_t spec_count;      /* entries of each specs[i] */
    char *name;
    char sha256[65];
    sagerun_workload **workloads; /* every workload of the file, parsed and checked */
    char **files;           /* report file name per workload */
    size_t count;
    /* compare options of the file (the command line overrides them) */
    const char *baseline;
    const char **variants;
    size_t variant_count;
    bool has_variants;
    long long warmup, rounds, iterations, accuracy_rows; /* -1: not given */
    double threshold;                                    /* NaN: not given */
    int accuracy, clocks;                                /* -1: not given */
} sweep;

static void sweep_free(sweep *s)
{
    for (size_t i = 0; s->workloads && i < s->count; i++)
        sagerun_workload_destroy(s->workloads[i]);
    for (size_t i = 0; s->files && i < s->count; i++)
        free(s->files[i]);
    for (size_t i = 0; s->axes && i < s->count; i++)
        json_decref(s->axes[i]);
    free(s->axes);
    for (size_t i = 0; s->specs && i < s->count; i++)
        sr_sweep_specs_free(s->specs[i], s->spec_count);
    free(s->specs);
    json_decref(s->expanded);
    free(s->workloads);
    free(s->files);
    free(s->variants);
    free(s->name);
    json_decref(s->root);
}

static const char *const sweep_keys[] = {
    "name",  "description", "workloads", "defaults",    "baseline",      "variants",
    "warmup", "rounds",     "iterations", "noise_threshold_percent", "accuracy_rows",
    "accuracy", "clocks", "axes"};

static sagerun_status get_count(const char *file, json_t *root, const char *key, long long min,
                                long long *out, sagerun_error *err)
{
    json_t *j = json_object_get(root, key);
    *out = -1;
    if (!j)
        return SAGERUN_OK;
    if (!json_is_integer(j) || json_integer_value(j) < min || json_integer_value(j) > 100000000) {
        char what[48];
        snprintf(what, sizeof(what), "an integer >= %lld", min);
        return sr_sweep_bad_key(file, key, what, j, err);
    }
    *out = (long long)json_integer_value(j);
    return SAGERUN_OK;
}

static sagerun_status get_flag(const char *file, json_t *root, const char *key, int *out,
                               sagerun_error *err)
{
    json_t *j = json_object_get(root, key);
    *out = -1;
    if (!j)
        return SAGERUN_OK;
    if (!json_is_boolean(j))
        return sr_sweep_bad_key(file, key, "true or false", j, err);
    *out = json_is_true(j);
    return SAGERUN_OK;
}

/* A file name for a workload's report: its name with characters other than [A-Za-z0-9._-]
 * replaced by '_'. */
static char *report_file_name(const char *name)
{
    char *s = malloc(strlen(name) + 6);
    if (!s)
        return NULL;
    size_t n = 0;
    for (const char *c = name; *c; c++)
        s[n++] = (strchr("._-", *c) || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
                  (*c >= 'A' && *c <= 'Z'))
                     ? *c
                     : '_';
    if (n && s[0] == '.')
        s[0] = '_'; /* no hidden files, no ".." */
    strcpy(s + n, ".json");
    return s;
}

static sagerun_status parse_workload(const char *file, const char *dir, json_t *defaults,
                                     json_t *item, size_t i, sagerun_workload **w,
                                     sagerun_error *err)
{
    char origin[512];
    snprintf(origin, sizeof(origin), "%s: workloads[%zu]", file, i);
    sagerun_status st;
    if (json_is_string(item)) {
        const char *p = json_string_value(item);
        char *path = NULL;
        if (p[0] == '/' ? !(path = strdup(p)) : asprintf(&path, "%s/%s", dir, p) < 0)
            return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        st = sagerun_workload_load(path, w, err);
        free(path);
        return st == SAGERUN_OK ? st : sr_cli_error_prefix(err, "%s", origin);
    }
    if (!json_is_object(item)) {
        static const char *const types[] = {"an object", "an array", "a string", "an integer",
                                            "a number",  "true",     "false",    "null"};
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                            "%s: expected a workload object or a workload file path, found %s",
                            origin, types[json_typeof(item)]);
    }
    json_t *obj = json_copy(item);
    if (!obj || (defaults && json_object_update_missing(obj, defaults) != 0)) {
        json_decref(obj);
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    char *text = json_dumps(obj, JSON_COMPACT);
    bool named = json_object_get(obj, "name") != NULL;
    json_decref(obj);
    if (!text)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    st = sagerun_workload_parse(text, origin, dir, w, err);
    free(text);
    if (st != SAGERUN_OK || named)
        return st;
    const sagerun_problem *p = sagerun_workload_problem(*w);
    char name[64];
    snprintf(name, sizeof name, "%ux%ux%ux%u", p->batch, p->seq_len, p->heads_q, p->head_dim);
    return sagerun_workload_set_name(*w, name, err);
}

/* A workload file's workload at a point of the axes: "NAME/tuned[block]=64". */
static sagerun_status name_point(sagerun_workload *w, const json_t *point, sagerun_error *err)
{
    char *label = sr_sweep_point_label(point), *full = NULL;
    if (!label || asprintf(&full, "%s/%s", sagerun_workload_name(w), label) < 0) {
        free(label);
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    free(label);
    sagerun_status st = sagerun_workload_set_name(w, full, err);
    free(full);
    return st;
}

static sagerun_status sweep_load(const char *path, sweep *s, sagerun_error *err)
{
    memset(s, 0, sizeof(*s));
    s->threshold = NAN;
    json_error_t jerr;
    s->root = sr_cli_json_load(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!s->root) {
        if (jerr.line <= 0 && jerr.position == 0)
            return sr_cli_error_set(err, SAGERUN_IO, "%s", jerr.text); /* "unable to open PATH: ..." */
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s:%d:%d: not valid JSON: %s", path, jerr.line,
                            jerr.column, jerr.text);
    }
    json_t *root = s->root;
    if (!json_is_object(root))
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: a sweep file must be a JSON object", path);
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        bool known = false;
        for (size_t i = 0; i < SR_ARRAY_LEN(sweep_keys) && !known; i++)
            known = strcmp(key, sweep_keys[i]) == 0;
        if (!known)
            return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: unknown key '%s' (known: name, description, workloads, "
                                "defaults, baseline, variants, warmup, rounds, iterations, "
                                "noise_threshold_percent, accuracy_rows, accuracy, clocks, axes)",
                                path, key);
    }
    sagerun_status st;
    json_t *j;
    if ((j = json_object_get(root, "name"))) {
        if (!json_is_string(j) || !json_string_value(j)[0])
            return sr_sweep_bad_key(path, "name", "a non-empty string", j, err);
        s->name = strdup(json_string_value(j));
    } else {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0)
            n -= 5;
        s->name = strndup(base, n);
    }
    if (!s->name)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    if ((j = json_object_get(root, "description")) && !json_is_string(j))
        return sr_sweep_bad_key(path, "description", "a string", j, err);
    if ((j = json_object_get(root, "baseline"))) {
        if (!json_is_string(j) || !json_string_value(j)[0])
            return sr_sweep_bad_key(path, "baseline", "a variant name", j, err);
        s->baseline = json_string_value(j);
    }
    if ((j = json_object_get(root, "variants"))) {
        if (!json_is_array(j))
            return sr_sweep_bad_key(path, "variants", "an array of variant names", j, err);
        s->variant_count = json_array_size(j);
        s->has_variants = true;
        if (!(s->variants = calloc(s->variant_count + 1, sizeof(*s->variants))))
            return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        for (size_t i = 0; i < s->variant_count; i++) {
            json_t *v = json_array_get(j, i);
            if (!json_is_string(v) || !json_string_value(v)[0]) {
                char k[32];
                snprintf(k, sizeof(k), "variants[%zu]", i);
                return sr_sweep_bad_key(path, k, "a variant name", v, err);
            }
            s->variants[i] = json_string_value(v);
        }
    }
    if ((st = get_count(path, root, "warmup", 0, &s->warmup, err)) ||
        (st = get_count(path, root, "rounds", 1, &s->rounds, err)) ||
        (st = get_count(path, root, "iterations", 1, &s->iterations, err)) ||
        (st = get_count(path, root, "accuracy_rows", 1, &s->accuracy_rows, err)) ||
        (st = get_flag(path, root, "accuracy", &s->accuracy, err)) ||
        (st = get_flag(path, root, "clocks", &s->clocks, err)))
        return st;
    if ((j = json_object_get(root, "noise_threshold_percent"))) {
        if (!json_is_number(j) || !(json_number_value(j) >= 0) || !isfinite(json_number_value(j)))
            return sr_sweep_bad_key(path, "noise_threshold_percent", "a percentage >= 0", j, err);
        s->threshold = json_number_value(j);
    }
    json_t *defaults = json_object_get(root, "defaults");
    if (defaults && !json_is_object(defaults))
        return sr_sweep_bad_key(path, "defaults", "an object of workload keys", defaults, err);
    json_t *list = json_object_get(root, "workloads");
    if (!list)
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: key 'workloads' is missing (a list of "
                            "workload objects or workload file paths)", path);
    if (!json_is_array(list) || json_array_size(list) == 0)
        return sr_sweep_bad_key(path, "workloads", "a non-empty array of workloads", list, err);

    json_t *axes = json_object_get(root, "axes");
    if (axes) {
        size_t n = 0;
        if ((st = sr_sweep_axes_expand(path, list, defaults, axes, &s->expanded, &s->axes, &n, err)))
            return st;
        list = s->expanded;
    }
    s->count = json_array_size(list);
    s->workloads = calloc(s->count, sizeof(*s->workloads));
    s->files = calloc(s->count, sizeof(*s->files));
    if (!s->workloads || !s->files)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    char *copy = strdup(path);
    if (!copy)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    const char *dir = dirname(copy);
    for (size_t i = 0; i < s->count; i++) {
        st = parse_workload(path, dir, defaults, json_array_get(list, i), i, &s->workloads[i],
                            err);
        if (st == SAGERUN_OK && s->axes && json_is_string(json_array_get(list, i)))
            st = name_point(s->workloads[i], s->axes[i], err); /* a file: named once loaded */
        const char *name = st == SAGERUN_OK ? sagerun_workload_name(s->workloads[i]) : NULL;
        if (st != SAGERUN_OK) {
            /* the entries that failed are left NULL */
            free(copy);
            return st;
        }
        if (!(s->files[i] = report_file_name(name))) {
            free(copy);
            return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        }
        if (strcmp(s->files[i], SR_SWEEP_SUMMARY_JSON) == 0) {
            free(copy);
            return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: workloads[%zu]: name '%s' is reserved: its report file "
                                "would be the sweep's %s",
                                path, i, name, SR_SWEEP_SUMMARY_JSON);
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->files[k], s->files[i]) == 0) {
                free(copy);
                return sr_cli_error_set(err, SAGERUN_FORMAT,
                                    "%s: workloads[%zu]: name '%s' gives the same report file "
                                    "(%s) as workloads[%zu]: give the workloads distinct names",
                                    path, i, name, s->files[i], k);
            }
    }
    free(copy);
    if ((st = sagerun_file_sha256(path, s->sha256, err)) != SAGERUN_OK)
        return st;
    return SAGERUN_OK;
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
static bool compare_args(arg_list *a, const sweep *s, const sr_cli_compare_settings *set)
{
    const sagerun_compare_options *o = &set->opts;
    bool per_point = s->specs != NULL;
    bool ok = args_add(a, "sagerun") && args_add(a, "compare") && args_add(a, "--quiet") &&
              args_add(a, "--baseline") && args_add(a, "%s", o->baseline);
    for (size_t i = 0; ok && !per_point && !set->n_variants && s->has_variants &&
                       i < s->variant_count;
         i++)
        ok = args_add(a, "--variant") && args_add(a, "%s", s->variants[i]);
    if (ok && s->warmup >= 0)
        ok = args_add(a, "--warmup") && args_add(a, "%lld", s->warmup);
    if (ok && s->rounds >= 0)
        ok = args_add(a, "--rounds") && args_add(a, "%lld", s->rounds);
    if (ok && s->iterations >= 0)
        ok = args_add(a, "--iterations") && args_add(a, "%lld", s->iterations);
    if (ok && isfinite(s->threshold))
        ok = args_add(a, "--noise-threshold") && args_add(a, "%.17g", s->threshold);
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

/* The effective compare options: the command line over the sweep file over compare's defaults
 * (the baseline: the host's "reference" when neither names one). */
static void apply_sweep_file(const sweep *s, sr_cli_compare_settings *set, bool on_host)
{
    sagerun_compare_options *o = &set->opts;
    if (s->warmup >= 0 && !sr_cli_compare_given(set, SR_OPT_WARMUP))
        o->warmup = (uint32_t)s->warmup;
    if (s->rounds >= 0 && !sr_cli_compare_given(set, SR_OPT_ROUNDS))
        o->rounds = (uint32_t)s->rounds;
    if (s->iterations >= 0 && !sr_cli_compare_given(set, SR_OPT_ITERATIONS))
        o->iterations = (uint32_t)s->iterations;
    if (s->accuracy_rows >= 0 && !sr_cli_compare_given(set, SR_OPT_ACC_ROWS))
        o->accuracy_rows = (uint32_t)s->accuracy_rows;
    if (isfinite(s->threshold) && !sr_cli_compare_given(set, SR_OPT_THRESHOLD))
        o->noise_threshold_percent = s->threshold;
    if (s->accuracy == 0)
        o->flags |= SAGERUN_COMPARE_SKIP_ACCURACY;
    if (s->clocks == 0)
        o->flags |= SAGERUN_COMPARE_NO_CLOCKS;
    if ((s->warmup >= 0 || s->rounds >= 0 || s->iterations >= 0) &&
        !sr_cli_compare_given(set, SR_OPT_SCHEDULE))
        o->schedule = SAGERUN_SCHEDULE_FIXED;
    if (!set->n_variants && s->has_variants) {
        o->variants = s->variants;
        o->variant_count = s->variant_count;
    }
    if (!sr_cli_compare_given(set, SR_OPT_BASELINE))
        o->baseline = s->baseline ? s->baseline : on_host ? "reference" : o->baseline;
}

/* Runs `argv` as this program with stdout discarded and stderr into the file `log`; returns its
 * exit status, 128+signal when it was killed, or -1 (errno set) when it could not start. */
static int run_self(char **argv, const char *log)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
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
    return json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o}", "label",
                     v->label ? v->label : v->name, "name", v->name, "is_baseline",
                     v->is_baseline, "p50_s", real_or_null(timed ? v->timing.p50_s : NAN),
                     "speedup_percent", real_or_null(v->speedup_percent), "interval_percent", iv,
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

/* One workload; returns the child's exit status (130/143: the sweep was interrupted). */
static int run_one(const arg_list *shared, char *const *variants, size_t n_variants,
                   const sagerun_workload *w, const char *out_dir, const char *file, json_t *row)
{
    char *report = NULL, *spec = NULL, *log = NULL, why[SAGERUN_ERROR_MESSAGE_SIZE] = "";
    char last[SAGERUN_ERROR_MESSAGE_SIZE] = "";
    arg_list a = {0};
    char *wj = sagerun_workload_to_json(w, 2);
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

/* Where the axes sweep variant parameters: each point's variant specs (s->specs), each bound once
 * so that an unknown key or a value out of range stops the sweep before anything runs. */
static sagerun_status point_specs(sweep *s, const char *path, const sagerun_compare_options *o,
                                  sagerun_registry *reg, sagerun_error *err)
{
    bool any = false;
    for (size_t i = 0; s->axes && i < s->count; i++)
        any = any || sr_sweep_point_has_variant_axes(s->axes[i]);
    if (!any)
        return SAGERUN_OK;
    if (!(s->specs = calloc(s->count, sizeof(*s->specs))))
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    s->spec_count = o->variants ? o->variant_count : 0;
    for (size_t i = 0; i < s->count; i++) {
        sagerun_status st = sr_sweep_point_variants(path, s->axes[i], o->variants,
                                                    s->spec_count, &s->specs[i], err);
        for (size_t k = 0; st == SAGERUN_OK && k < s->spec_count; k++) {
            long index;
            if ((st = sagerun_registry_bind(reg, s->specs[i][k], &index, err)) != SAGERUN_OK)
                sr_cli_error_prefix(err, "%s: workload '%s': %s", path,
                                    sagerun_workload_name(s->workloads[i]),
                                s->specs[i][k]);
        }
        if (st != SAGERUN_OK)
            return st;
    }
    return SAGERUN_OK;
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

int sr_cmd_sweep(int argc, char **argv)
{
    enum { O_OUT_DIR = 256, O_SHARD, O_QUIET, O_CSV };
    static const struct option longopts[] = {
        SR_CLI_COMPARE_OPTIONS,
        {"out-dir", required_argument, 0, O_OUT_DIR},
        {"csv", required_argument, 0, O_CSV},
        {"shard", required_argument, 0, O_SHARD},
        {"quiet", no_argument, 0, O_QUIET},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    sr_cli_compare_settings set;
    if (!sr_cli_compare_settings_init(&set, "sweep", argc))
        return SR_EXIT_ERROR;
    int c, rc = SR_EXIT_USAGE;
    arg_list shared = {0};
    const char *out_dir = NULL, *csv_path = NULL;
    bool quiet = false;
    long shard_index = 0, shard_count = 0;
    sweep s = {0};
    bool loaded = false;
    char *dir_buf = NULL;
    sagerun_context *ctx = NULL;
    sagerun_registry *reg = NULL;
    json_t *summary = NULL;
    sagerun_error err = {0};
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case O_OUT_DIR: out_dir = optarg; break;
        case O_CSV: csv_path = optarg; break;
        case O_SHARD:
            if (!parse_shard(optarg, &shard_index, &shard_count)) {
                sr_cli_error("sweep: --shard '%s': expected I/N with 0 <= I < N (e.g. 0/2)",
                             optarg);
                goto out;
            }
            break;
        case O_QUIET: quiet = true; break;
        case 'h': sweep_usage(stdout); rc = SR_EXIT_OK; goto out;
        default: {
            int taken = sr_cli_compare_option("sweep", &set, c, optarg);
            if (taken < 0)
                goto out;
            if (!taken) {
                rc = sr_cli_bad_option("sweep", c, argv);
                goto out;
            }
        }
        }
    }
    if (argc - optind != 1) {
        sr_cli_error("sweep: expected one sweep file (see 'sagerun sweep --help')");
        goto out;
    }
    if (!sr_cli_compare_settings_finish("sweep", &set))
        goto out;
    const char *sweep_path = argv[optind];
    const char *const csv_opt[] = {"--csv"}, *const csv_in[] = {sweep_path};
    if (csv_path && !sr_cli_check_outputs("sweep", csv_opt, &csv_path, 1, csv_in, 1)) {
        rc = SR_EXIT_ERROR;
        goto out;
    }

    rc = SR_EXIT_ERROR;
    loaded = true;
    if (sweep_load(sweep_path, &s, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        goto out;
    }
    if (sr_cli_context(set.backend, (int)set.device, quiet, &ctx, &err) != SAGERUN_OK ||
        sr_cli_registry(ctx, set.plugins, set.n_plugins, &set.policy, &reg, &err) !=
            SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        goto out;
    }
    bool on_host = sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST;
    apply_sweep_file(&s, &set, on_host);
    const sagerun_compare_options opts = set.opts;
    if (on_host && !sr_cli_compare_given(&set, SR_OPT_BASELINE) && !s.baseline && !quiet)
        fprintf(stderr, "sagerun: host backend: baseline 'reference' (CUDA variants need a GPU)\n");
    if (point_specs(&s, sweep_path, &opts, reg, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        goto out;
    }
    if (!compare_args(&shared, &s, &set)) {
        sr_cli_error("sweep: out of memory");
        goto out;
    }
    sagerun_device_info info = {.struct_size = sizeof info};
    if (sagerun_context_device_info(ctx, &info, &err) != SAGERUN_OK)
        snprintf(info.name, sizeof(info.name), "unknown");
    const char *backend_name = sagerun_backend_name(sagerun_context_backend(ctx));

    if (!out_dir) {
        int n = shard_count ? asprintf(&dir_buf, "sweep-%s-shard-%ldof%ld", s.name, shard_index,
                                       shard_count)
                            : asprintf(&dir_buf, "sweep-%s", s.name);
        if (n < 0) {
            dir_buf = NULL;
            sr_cli_error("sweep: out of memory");
            goto out;
        }
        for (char *p = dir_buf; *p; p++)
            if (*p == '/')
                *p = '_';
        out_dir = dir_buf;
    }
    if (sr_sweep_mkdirs(out_dir, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: --out-dir: %s", err.message);
        goto out;
    }

    json_t *names = json_array(), *variants = json_null();
    for (size_t i = 0; names && i < s.count; i++)
        json_array_append_new(names, json_string(sagerun_workload_name(s.workloads[i])));
    if (opts.variants) {
        variants = json_array();
        for (size_t i = 0; i < opts.variant_count; i++)
            json_array_append_new(variants, json_string(opts.variants[i]));
    }
    summary = json_pack(
        "{s:i, s:{s:s, s:s, s:s, s:I, s:o}, s:{s:s, s:o, s:s, s:I, s:I, s:I, s:f, s:I, s:b, s:b}, "
        "s:o, s:{s:s, s:s, s:s}, s:[]}",
        "sagerun_sweep_summary", SR_SWEEP_SUMMARY_VERSION, "sweep", "name", s.name, "file",
        sweep_path, "sha256", s.sha256, "workload_count", (json_int_t)s.count, "workloads", names,
        "options", "baseline", opts.baseline, "variants", variants, "schedule",
        opts.schedule == SAGERUN_SCHEDULE_FIXED  ? "fixed"
        : opts.schedule == SAGERUN_SCHEDULE_SEED ? "seed"
                                                 : "timed",
        "warmup",
        (json_int_t)opts.warmup, "rounds", (json_int_t)opts.rounds, "iterations",
        (json_int_t)opts.iterations, "noise_threshold_percent", opts.noise_threshold_percent,
        "accuracy_rows", (json_int_t)opts.accuracy_rows, "accuracy",
        !(opts.flags & SAGERUN_COMPARE_SKIP_ACCURACY), "clocks",
        !(opts.flags & SAGERUN_COMPARE_NO_CLOCKS), "shard", shard_json(shard_index, shard_count),
        "tool", "name", "sagerun", "version", SAGERUN_VERSION_STRING, "git_commit",
        SAGERUN_GIT_COMMIT, "workloads");
    if (!summary) {
        sr_cli_error("sweep: out of memory");
        goto out;
    }
    json_t *rows = json_object_get(summary, "workloads");
    size_t mine = 0, done = 0;
    for (size_t i = 0; i < s.count; i++)
        mine += !shard_count || (long)(i % (size_t)shard_count) == shard_index;
    if (mine == 0 && !quiet)
        fprintf(stderr, "sagerun sweep: shard %ld/%ld has no workload (the sweep has %zu)\n",
                shard_index, shard_count, s.count);
    /* an empty summary first: a shard that dies early still says which sweep it belonged to */
    if (sr_sweep_summary_write(out_dir, summary, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: %s", err.message);
        goto out;
    }
    for (size_t i = 0; i < s.count; i++) {
        if (shard_count && (long)(i % (size_t)shard_count) != shard_index)
            continue;
        const sagerun_workload *w = s.workloads[i];
        const sagerun_problem *wp = sagerun_workload_problem(w);
        if (!quiet) {
            fprintf(stderr, "sagerun sweep: [%zu/%zu] workload %zu '%s' [%u, %u, %u, %u]%s%s\n",
                    ++done, mine, i, sagerun_workload_name(w), wp->batch, wp->seq_len,
                    wp->heads_q, wp->head_dim, on_host ? "" : " on ", on_host ? "" : info.name);
        }
        json_t *row = workload_row(i, w, info.name, backend_name ? backend_name : "?");
        if (row && s.axes)
            json_object_set(row, "axes", s.axes[i]); /* the point's named axes */
        if (!row || json_array_append_new(rows, row) != 0) {
            sr_cli_error("sweep: out of memory");
            goto out;
        }
        int child = run_one(&shared, s.specs ? s.specs[i] : NULL, s.specs ? s.spec_count : 0, w,
                            out_dir, s.files[i], row);
        if (!quiet && json_is_string(json_object_get(row, "error")))
            fprintf(stderr, "sagerun sweep: workload '%s': %s\n", sagerun_workload_name(w),
                    json_string_value(json_object_get(row, "error")));
        if (sr_sweep_summary_write(out_dir, summary, &err) != SAGERUN_OK) {
            sr_cli_error("sweep: %s", err.message);
            goto out;
        }
        if (child == SR_EXIT_SIGINT || child == SR_EXIT_SIGTERM) {
            /* The interrupt reached the comparison too (same process group): stop here; the
             * summary holds what ran, this workload's report is marked incomplete. */
            sr_cli_error("sweep: interrupted; the summary in %s holds the workloads that ran",
                         out_dir);
            rc = child;
            goto out;
        }
    }
    sr_sweep_summary_print(summary, stdout, false);
    fprintf(stdout, "summary: %s/%s, %s/%s\n", out_dir, SR_SWEEP_SUMMARY_JSON, out_dir,
            SR_SWEEP_SUMMARY_MD);
    rc = sr_sweep_summary_exit_code(summary);
    if (csv_path && sr_sweep_summary_write_csv(summary, out_dir, csv_path, &err) != SAGERUN_OK) {
        sr_cli_error("sweep: --csv: %s", err.message);
        rc = SR_EXIT_ERROR;
    }
out:
    args_free(&shared);
    json_decref(summary);
    if (loaded)
        sweep_free(&s);
    free(dir_buf);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(ctx);
    sr_cli_compare_settings_free(&set);
    return rc;
}
