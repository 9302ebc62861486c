/* The sweep summary (sweep.h): its files, its table, its exit code, reading it back. Written by
 * `sagerun sweep` and `sagerun merge`, read by merge, diff, show and plot. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sweep.h"
#include "sweep_gpus.h"
#include "sweep_axes.h"

static const char *str_or(const json_t *o, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : fallback;
}

typedef struct csv_source {
    const json_t *summary;
    const char *dir;
} csv_source;

/* The rows of one workload's report, its name and axis values first; a workload without one (it
 * failed, or its report does not read) gets one row that says why in the failure column (such a
 * workload was left out, and a sweep whose every workload failed wrote a header alone). */
static void csv_workload_rows(FILE *f, const csv_source *src, const json_t *w,
                              const char *const *axes, size_t n_axes)
{
    const char *name = json_string_value(json_object_get(w, "name"));
    const char *file = json_string_value(json_object_get(w, "report"));
    if (!name)
        return;
    char path[4096], why[sizeof(((sagerun_error *)0)->message) + 64];
    sagerun_compare_result *r = NULL;
    sagerun_error err = {0};
    snprintf(path, sizeof path, "%s/%s", src->dir, file ? file : "");
    if (!file)
        snprintf(why, sizeof why, "no report (status %s%s%s)", str_or(w, "status", "?"),
                 str_or(w, "error", NULL) ? ": " : "", str_or(w, "error", ""));
    else if (sagerun_compare_result_read(path, &r, &err) != SAGERUN_OK)
        snprintf(why, sizeof why, "its report does not read: %s", err.message);
    char *values[1 + SR_SWEEP_MAX_AXES] = {(char *)name};
    for (size_t k = 0; k < n_axes; k++)
        values[1 + k] = sr_sweep_row_axis_value(w, axes[k]);
    if (r)
        sagerun_compare_result_csv_rows(r, f, (const char *const *)values, 1 + n_axes);
    else
        sagerun_compare_csv_failure_row(f, (const char *const *)values, 1 + n_axes, why);
    for (size_t k = 0; k < n_axes; k++)
        free(values[1 + k]);
    sagerun_compare_result_destroy(r);
}

/* Rows of every workload's report (those that have one): the workload's name, a column per axis
 * (axis.N, axis.tuned[block]), then compare's columns. */
static bool write_summary_csv_cb(FILE *f, const void *user)
{
    const csv_source *src = user;
    const char *axes[SR_SWEEP_MAX_AXES];
    size_t n_axes = sr_sweep_summary_axes(src->summary, axes), i;
    char *lead[1 + SR_SWEEP_MAX_AXES] = {"workload"};
    bool ok = true;
    for (size_t k = 0; k < n_axes; k++) /* "axis.N": never one of compare's columns (dtype) */
        if (asprintf(&lead[1 + k], "axis.%s", axes[k]) < 0) {
            lead[1 + k] = NULL;
            ok = false;
        }
    if (ok)
        sagerun_compare_csv_header(f, (const char *const *)lead, 1 + n_axes);
    const json_t *w;
    json_array_foreach(json_object_get(src->summary, "workloads"), i, w) {
        if (ok)
            csv_workload_rows(f, src, w, axes, n_axes);
    }
    for (size_t k = 0; k < n_axes; k++)
        free(lead[1 + k]);
    return ok && !ferror(f);
}

sagerun_status sr_sweep_summary_write_csv(const json_t *summary, const char *dir,
                                          const char *path, sagerun_error *err)
{
    csv_source src = {summary, dir};
    return sr_cli_write_file(path, write_summary_csv_cb, &src, err);
}

bool sr_sweep_status_known(const char *status)
{
    static const char *const statuses[] = {"ok", "not-byte-exact", "failed", "incomplete",
                                           "error"};
    for (size_t k = 0; status && k < sizeof statuses / sizeof *statuses; k++)
        if (strcmp(status, statuses[k]) == 0)
            return true;
    return false;
}

/* Why the sweep part (sweep.name, sha256, workload_count, the workload names) is unusable, or NULL. */
static const char *sweep_key_problem(const json_t *root)
{
    const json_t *sweep = json_object_get(root, "sweep"), *names = json_object_get(sweep, "workloads");
    const json_t *count = json_object_get(sweep, "workload_count");
    return !json_is_object(sweep)                                          ? "sweep"
           : !str_or(sweep, "name", NULL)                                        ? "sweep.name"
           : !str_or(sweep, "sha256", NULL)                                      ? "sweep.sha256"
           : !json_is_integer(count) || json_integer_value(count) < 0      ? "sweep.workload_count"
           : !json_is_array(names) || json_array_size(names) != (size_t)json_integer_value(count)
               ? "sweep.workloads"
           : !json_is_object(json_object_get(root, "options")) ? "options"
                                                               : NULL;
}

/* Why row i is unusable (into why), or false when it is fine. */
static bool row_problem(const json_t *root, const json_t *row, size_t i, char *why, size_t len)
{
    const json_t *names = json_object_get(json_object_get(root, "sweep"), "workloads");
    const json_t *idx = json_object_get(row, "index"), *shape = json_object_get(row, "shape");
    const json_t *variants = json_object_get(row, "variants"), *rj = json_object_get(row, "report");
    const char *name = str_or(row, "name", NULL), *report = str_or(row, "report", NULL);
    bool idx_ok = json_is_integer(idx) && json_integer_value(idx) >= 0 &&
                  (size_t)json_integer_value(idx) < json_array_size(names);
    const char *want = idx_ok ? json_string_value(json_array_get(names, (size_t)json_integer_value(idx)))
                              : NULL;
    if (!json_is_object(row) || !idx_ok || !name || !want || strcmp(name, want) != 0 ||
        !sr_sweep_status_known(str_or(row, "status", NULL)))
        snprintf(why, len, "workloads[%zu]: malformed row (index, name, status of ok, "
                 "not-byte-exact, failed, incomplete or error) or a name that is not the sweep's "
                 "workload at that index", i);
    else if (!report && (!json_is_null(rj) || strcmp(str_or(row, "status", NULL), "error") != 0))
        snprintf(why, len, "workloads[%zu].report: expected a file name (only a workload with "
                 "status \"error\" has none)", i);
    else if (report && (!*report || strchr(report, '/') || report[0] == '.'))
        snprintf(why, len, "workloads[%zu].report '%.64s': expected a file name next to the summary",
                 i, report);
    else if (shape && (!json_is_array(shape) || json_array_size(shape) != 4))
        snprintf(why, len, "workloads[%zu].shape: expected [B, N, Hq, D]", i);
    else if (variants && !json_is_array(variants))
        snprintf(why, len, "workloads[%zu].variants: expected an array", i);
    else {
        for (size_t k = 0; k < json_array_size(shape); k++) {
            const json_t *x = json_array_get(shape, k);
            if (!json_is_integer(x) || json_integer_value(x) <= 0) {
                snprintf(why, len, "workloads[%zu].shape[%zu]: expected a positive integer", i, k);
                return true;
            }
        }
        for (size_t k = 0; k < json_array_size(variants); k++) {
            const json_t *v = json_array_get(variants, k), *p50 = json_object_get(v, "p50_s");
            if (!json_is_object(v) || !(json_is_null(p50) || !p50 ||
                                        (json_is_number(p50) && json_number_value(p50) >= 0))) {
                snprintf(why, len, "workloads[%zu].variants[%zu]: expected an object whose "
                         "p50_s is a time in seconds (>= 0) or null", i, k);
                return true;
            }
        }
        return false;
    }
    return true;
}

const char *sr_sweep_summary_problem(const json_t *root, char *why, size_t len)
{
    const char *bad = sweep_key_problem(root);
    const json_t *sweep = json_object_get(root, "sweep");
    const json_t *names = json_object_get(sweep, "workloads");
    if (bad && !strcmp(bad, "sweep.workloads") && json_is_array(names)) /* it named the names */
        snprintf(why, len, "key 'sweep.workload_count' (%lld) is not the number of names in "
                 "'sweep.workloads' (%zu)",
                 (long long)json_integer_value(json_object_get(sweep, "workload_count")),
                 json_array_size(names));
    else if (bad)
        snprintf(why, len, "key '%s' is missing or malformed", bad);
    if (bad)
        return why;
    const json_t *rows = json_object_get(root, "workloads");
    for (size_t i = 0; i < json_array_size(rows); i++) {
        if (row_problem(root, json_array_get(rows, i), i, why, len))
            return why;
        for (size_t k = 0; k < i; k++)
            if (json_equal(json_object_get(json_array_get(rows, k), "index"),
                           json_object_get(json_array_get(rows, i), "index"))) {
                snprintf(why, len, "workloads[%zu] and workloads[%zu] are both workload %s: a "
                         "reader would take only the first", k, i,
                         str_or(json_array_get(rows, i), "name", NULL));
                return why;
            }
    }
    return NULL;
}

/* An exclusive lock on the folder itself (flock on its descriptor: nothing is left in it), held
 * until this process ends (the descriptor is never closed, and not inherited: the comparisons run
 * as children). Two sweeps into one folder both passed the summary check before either wrote
 * one: rows that did not match the reports on disk, or one summary written over the other, both
 * exiting 0. */
static bool lock_out_dir(const char *cmd, const char *out_dir)
{
    int fd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool ok = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (!ok && fd >= 0 && errno == EWOULDBLOCK)
        sr_cli_error("%s: --out-dir %s: another sweep or merge is writing into it now: give "
                     "another --out-dir, or wait for it", cmd, out_dir);
    else if (!ok)
        sr_cli_error("%s: --out-dir %s: cannot lock it: %s", cmd, out_dir, strerror(errno));
    if (!ok && fd >= 0)
        close(fd);
    return ok;
}

bool sr_sweep_out_dir_free(const char *cmd, const char *out_dir, const json_t *sweep,
                           const json_t *shard)
{
    return lock_out_dir(cmd, out_dir) && sr_sweep_out_dir_takes(cmd, out_dir, sweep, shard);
}

bool sr_sweep_out_dir_takes(const char *cmd, const char *out_dir, const json_t *sweep,
                            const json_t *shard)
{
    char *path = NULL;
    struct stat st;
    if (asprintf(&path, "%s/%s", out_dir, SR_SWEEP_SUMMARY_JSON) < 0) {
        sr_cli_error("%s: out of memory", cmd);
        return false;
    }
    if (lstat(path, &st) != 0 && errno == ENOENT) {
        free(path);
        return true; /* nothing there to lose */
    }
    sagerun_error err = {0};
    json_t *old = sr_sweep_summary_load(path, &err);
    const json_t *old_sweep = json_object_get(old, "sweep"), *old_shard = json_object_get(old, "shard");
    bool same_sweep = old && json_equal(json_object_get(old_sweep, "sha256"),
                                        json_object_get(sweep, "sha256"));
    bool same_shard = (!old_shard || json_is_null(old_shard)) ? (!shard || json_is_null(shard))
                                                              : shard && json_equal(old_shard, shard);
    if (!old)
        sr_cli_error("%s: --out-dir %s holds %s, which is not a sweep summary this sagerun reads%s%s: "
                     "refusing to write over it (give another --out-dir, or remove it)", cmd,
                     out_dir, path, err.status != SAGERUN_OK ? ": " : "", err.message);
    else if (!same_sweep || !same_shard) {
        const char *old_name = json_string_value(json_object_get(old_sweep, "name")) ?: "?";
        const char *name = json_string_value(json_object_get(sweep, "name")) ?: "";
        sr_cli_error("%s: --out-dir %s holds the summary of %s%s%s: refusing to write over it and "
                     "its reports (give another --out-dir, or remove it)", cmd, out_dir,
                     same_sweep                      ? "another shard or merge of this sweep"
                     : strcmp(old_name, name) == 0   ? "another version of sweep "
                                                     : "another sweep: ",
                     same_sweep ? "" : old_name,
                     !same_sweep && strcmp(old_name, name) == 0 ? " (the sweep file changed)" : "");
    }
    json_decref(old);
    free(path);
    return old && same_sweep && same_shard;
}

/* The file as JSON, read as the report reader reads one (at most 1 GiB: a report it reads must
 * not fail here for its size); NULL with err set when it does not read or is not JSON. */
static json_t *load_json(const char *path, sagerun_error *err)
{
    char *text;
    size_t len;
    if (sagerun_file_read(path, (size_t)1 << 30, &text, &len, err) != SAGERUN_OK)
        return NULL; /* the message names the path */
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root)
        sr_cli_error_set(err, SAGERUN_FORMAT, "%s:%d:%d: not valid JSON: %s", path, jerr.line,
                         jerr.column, jerr.text);
    return root;
}

json_t *sr_sweep_summary_load(const char *path, sagerun_error *err)
{
    if (err)
        err->status = SAGERUN_OK;
    json_t *root = load_json(path, err);
    if (!root || !json_object_get(root, "sagerun_sweep_summary")) {
        json_decref(root);
        return NULL;
    }
    if (json_integer_value(json_object_get(root, "sagerun_sweep_summary")) !=
            SR_SWEEP_SUMMARY_VERSION ||
        !json_is_array(json_object_get(root, "workloads"))) {
        sr_cli_error_set(err, SAGERUN_FORMAT,
                     "%s: not a sweep summary this sagerun reads (sagerun_sweep_summary %d with a "
                     "'workloads' array)",
                     path, SR_SWEEP_SUMMARY_VERSION);
        json_decref(root);
        return NULL;
    }
    if (json_array_size(json_object_get(root, "workloads")) > SR_SWEEP_MAX_POINTS) {
        /* no sweep has more; diff's matching of rows by name is quadratic (40000 rows: 6 min) */
        sr_cli_error_set(err, SAGERUN_FORMAT, "%s: %zu workloads, more than a sweep has (%d)", path,
                         json_array_size(json_object_get(root, "workloads")), SR_SWEEP_MAX_POINTS);
        json_decref(root);
        return NULL;
    }
    char why[512];
    if (sr_sweep_summary_problem(root, why, sizeof why)) {
        sr_cli_error_set(err, SAGERUN_FORMAT, "%s: %s", path, why);
        json_decref(root);
        return NULL;
    }
    return root;
}

sagerun_status sr_sweep_mkdirs(const char *dir, sagerun_error *err)
{
    if (!*dir) /* the walk below starts at its second byte */
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT, "an empty folder name");
    char *p = strdup(dir);
    if (!p)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            sagerun_status st = sr_cli_error_set(err, SAGERUN_IO, "%s: cannot create the folder: %s",
                                             p, strerror(errno));
            free(p);
            return st;
        }
        *s = saved;
        if (!saved)
            break;
    }
    free(p);
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return sr_cli_error_set(err, SAGERUN_IO, "%s: not a folder", dir);
    return SAGERUN_OK;
}

static double num_or_nan(const json_t *o, const char *key)
{
    const json_t *j = json_object_get(o, key);
    return json_is_number(j) ? json_number_value(j) : NAN;
}

/* A duration in the unit that suits it, as compare's table writes them: "243.919 ms". */
static void format_seconds(double s, char *buf, size_t len)
{
    static const struct {
        double at_least, scale;
        const char *format;
    } units[] = {{1.0, 1.0, "%.4f s"}, {1e-3, 1e3, "%.3f ms"}, {0.0, 1e6, "%.2f us"}};
    size_t u = 0;
    while (u + 1 < SR_ARRAY_LEN(units) && !(s >= units[u].at_least))
        u++;
    if (isfinite(s))
        snprintf(buf, len, units[u].format, s * units[u].scale);
    else
        snprintf(buf, len, "-");
}

enum { COLS = 9, CELL = 96 };
typedef struct table_row {
    char cell[COLS][CELL];
} table_row;

static const char *const table_head[COLS] = {"#",   "workload", "shape BxNxHqxD",
                                             "baseline p50", "variant", "p50",
                                             "speedup [95% CI]", "verdict", "byte-exact"};

static void fill_row(table_row *t, const json_t *w, const json_t *base, const json_t *v)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->cell[0], CELL, "%lld", (long long)json_integer_value(json_object_get(w, "index")));
    snprintf(t->cell[1], CELL, "%s", str_or(w, "name", "?"));
    const json_t *shape = json_object_get(w, "shape");
    size_t used = 0;
    for (size_t i = 0; i < json_array_size(shape) && used < CELL; i++)
        used += (size_t)snprintf(t->cell[2] + used, CELL - used, "%s%lld", i ? "x" : "",
                                 (long long)json_integer_value(json_array_get(shape, i)));
    format_seconds(base ? num_or_nan(base, "p50_s") : NAN, t->cell[3], CELL);
    const char *status = str_or(w, "status", "?");
    if (strcmp(status, "error") == 0) {
        snprintf(t->cell[4], CELL, "ERROR");
        for (int c = 5; c < COLS; c++)
            snprintf(t->cell[c], CELL, "-");
        return;
    }
    if (!v) {
        snprintf(t->cell[4], CELL, "(none)");
        for (int c = 5; c < COLS; c++)
            snprintf(t->cell[c], CELL, "-");
        return;
    }
    snprintf(t->cell[4], CELL, "%s", str_or(v, "label", "?"));
    format_seconds(num_or_nan(v, "p50_s"), t->cell[5], CELL);
    /* the paired estimate, the centre of the interval (summaries before it: the p50s' ratio) */
    double sp = num_or_nan(v, "speedup_estimate_percent");
    if (!isfinite(sp))
        sp = num_or_nan(v, "speedup_percent");
    const json_t *iv = json_object_get(v, "interval_percent");
    char times[48];
    sr_cli_speedup_times(sp, times, sizeof times);
    if (json_is_true(json_object_get(v, "is_baseline")))
        snprintf(t->cell[6], CELL, "(baseline)");
    else if (!isfinite(sp))
        snprintf(t->cell[6], CELL, "-");
    else if (json_array_size(iv) == 2)
        snprintf(t->cell[6], CELL, "%+.2f%% (%s) [%+.2f, %+.2f]", sp, times,
                 json_number_value(json_array_get(iv, 0)),
                 json_number_value(json_array_get(iv, 1)));
    else /* no interval: the p50s' ratio, said so */
        snprintf(t->cell[6], CELL, "%+.2f%% (%s, p50 ratio)", sp, times);
    snprintf(t->cell[7], CELL, "%s",
             json_is_string(json_object_get(v, "failure")) ? "FAILED" : str_or(v, "verdict", "-"));
    const json_t *be = json_object_get(v, "byte_exact");
    snprintf(t->cell[8], CELL, "%s", json_is_true(be) ? "yes" : json_is_false(be) ? "NO" : "-");
}

/* The sweep's name, its shard or merge, and the options its workloads ran with. */
static void print_heading(const json_t *s, FILE *out, const char *bullet, bool markdown)
{
    const json_t *sweep = json_object_get(s, "sweep"), *opts = json_object_get(s, "options");
    const json_t *shard = json_object_get(s, "shard"), *merged = json_object_get(s, "merged_from");
    if (markdown)
        fprintf(out, "# sagerun sweep %s\n\n", str_or(sweep, "name", "?"));
    fprintf(out, "%ssweep %s: %zu of %lld workloads", bullet, str_or(sweep, "name", "?"),
            json_array_size(json_object_get(s, "workloads")),
            (long long)json_integer_value(json_object_get(sweep, "workload_count")));
    if (json_is_object(shard))
        fprintf(out, " (shard %lld/%lld)",
                (long long)json_integer_value(json_object_get(shard, "index")),
                (long long)json_integer_value(json_object_get(shard, "count")));
    if (json_is_array(merged))
        fprintf(out, " (merged from %zu summaries)", json_array_size(merged));
    if (strcmp(str_or(opts, "schedule", "fixed"), "timed") == 0)
        fprintf(out, "\n%sbaseline %s; compare's timed schedule; noise threshold %.3g%%\n",
                bullet, str_or(opts, "baseline", "?"), num_or_nan(opts, "noise_threshold_percent"));
    else
        fprintf(out, "\n%sbaseline %s; warmup %lld, %lld rounds x %lld iterations; noise "
                     "threshold %.3g%%\n",
                bullet, str_or(opts, "baseline", "?"),
                (long long)json_integer_value(json_object_get(opts, "warmup")),
                (long long)json_integer_value(json_object_get(opts, "rounds")),
                (long long)json_integer_value(json_object_get(opts, "iterations")),
                num_or_nan(opts, "noise_threshold_percent"));
}

/* The table's lines: one per non-baseline variant of each workload (one when it has none);
 * NULL when out of memory. */
static table_row *table_rows(const json_t *rows, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        size_t k = 0;
        const json_t *vs = json_object_get(json_array_get(rows, i), "variants");
        for (size_t j = 0; j < json_array_size(vs); j++)
            k += !json_is_true(json_object_get(json_array_get(vs, j), "is_baseline"));
        n += k ? k : 1;
    }
    table_row *t = calloc(n ? n : 1, sizeof(*t));
    size_t m = 0;
    for (size_t i = 0; t && i < json_array_size(rows); i++) {
        const json_t *w = json_array_get(rows, i), *vs = json_object_get(w, "variants"),
                     *base = NULL;
        for (size_t j = 0; j < json_array_size(vs) && !base; j++)
            if (json_is_true(json_object_get(json_array_get(vs, j), "is_baseline")))
                base = json_array_get(vs, j);
        size_t before = m;
        for (size_t j = 0; j < json_array_size(vs); j++) {
            const json_t *v = json_array_get(vs, j);
            if (!json_is_true(json_object_get(v, "is_baseline")))
                fill_row(&t[m++], w, base, v);
        }
        if (m == before)
            fill_row(&t[m++], w, base, NULL);
    }
    *count = m;
    return t;
}

static void print_table(const table_row *t, size_t m, FILE *out, bool markdown)
{
    fprintf(out, "\n");
    if (markdown) {
        fprintf(out, "|");
        for (int c = 0; c < COLS; c++)
            fprintf(out, " %s |", table_head[c]);
        fprintf(out, "\n|---:|---|---|---:|---|---:|---|---|---|\n");
        for (size_t i = 0; i < m; i++) {
            fprintf(out, "|");
            for (int c = 0; c < COLS; c++)
                fprintf(out, " %s |", t[i].cell[c]);
            fprintf(out, "\n");
        }
        fprintf(out, "\n");
        return;
    }
    int width[COLS];
    for (int c = 0; c < COLS; c++) {
        width[c] = (int)strlen(table_head[c]);
        for (size_t i = 0; i < m; i++)
            if ((int)strlen(t[i].cell[c]) > width[c])
                width[c] = (int)strlen(t[i].cell[c]);
    }
    for (int c = 0; c < COLS; c++)
        fprintf(out, "%-*s%s", c == COLS - 1 ? 0 : width[c], table_head[c],
                c == COLS - 1 ? "\n" : "  ");
    for (size_t i = 0; i < m; i++)
        for (int c = 0; c < COLS; c++)
            fprintf(out, "%-*s%s", c == COLS - 1 ? 0 : width[c], t[i].cell[c],
                    c == COLS - 1 ? "\n" : "  ");
    fprintf(out, "\n");
}

/* Under the table: errors, failures, outputs not byte-exact, what is missing, where the reports
 * are. */
static void print_notes(const json_t *s, FILE *out, const char *bullet)
{
    const json_t *rows = json_object_get(s, "workloads"), *missing = json_object_get(s, "missing");
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const json_t *w = json_array_get(rows, i), *vs = json_object_get(w, "variants");
        const char *name = str_or(w, "name", "?");
        if (json_is_string(json_object_get(w, "error")))
            fprintf(out, "%s%s: error: %s\n", bullet, name, str_or(w, "error", ""));
        for (size_t j = 0; j < json_array_size(vs); j++) {
            const json_t *v = json_array_get(vs, j);
            if (json_is_string(json_object_get(v, "failure")))
                fprintf(out, "%s%s: %s failed: %s\n", bullet, name, str_or(v, "label", "?"),
                        str_or(v, "failure", ""));
            else if (json_is_false(json_object_get(v, "byte_exact")))
                fprintf(out, "%s%s: %s is not byte-exact with the reference\n", bullet, name,
                        str_or(v, "label", "?"));
        }
    }
    for (size_t i = 0; i < json_array_size(missing); i++) {
        const json_t *x = json_array_get(missing, i);
        fprintf(out, "%smissing: workload %lld (%s) is in no summary merged\n", bullet,
                (long long)json_integer_value(json_object_get(x, "index")),
                str_or(x, "name", "?"));
    }
    sr_sweep_print_where(s, out, bullet);
    fprintf(out, "%sreports: <workload>.json next to summary.json ('sagerun show', 'sagerun plot')"
                 "\n",
            bullet);
}

/* Every string of a summary as one line shows it, by the library's rule (sagerun_text_escape: a
 * name or label of a hostile summary cannot end its line and forge the rows after it, nor drive
 * the terminal); in markdown also as a table cell ('|', '\\', '<', '&' escaped). In place:
 * the copy print takes. */
static void one_line_strings(json_t *j, bool markdown)
{
    const char *key;
    json_t *v;
    size_t i;
    if (json_is_object(j))
        json_object_foreach(j, key, v) one_line_strings(v, markdown);
    else if (json_is_array(j))
        json_array_foreach(j, i, v) one_line_strings(v, markdown);
    if (!json_is_string(j))
        return;
    char *shown = sagerun_text_escape(json_string_value(j), markdown ? SAGERUN_TEXT_MARKDOWN_CELL : 0);
    if (shown)
        json_string_set(j, shown);
    free(shown);
}

void sr_sweep_summary_print(const json_t *summary, FILE *out, bool markdown)
{
    const char *bullet = markdown ? "- " : "";
    size_t m = 0;
    json_t *s = json_deep_copy(summary);
    if (!s)
        return;
    one_line_strings(s, markdown);
    table_row *t = table_rows(json_object_get(s, "workloads"), &m);
    if (t) {
        print_heading(s, out, bullet, markdown);
        print_table(t, m, out, markdown);
        free(t);
        print_notes(s, out, bullet);
    }
    json_decref(s);
}

int sr_sweep_summary_exit_code(const json_t *s)
{
    int rc = SR_EXIT_OK;
    const json_t *rows = json_object_get(s, "workloads");
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const char *status = str_or(json_array_get(rows, i), "status", "error");
        if (strcmp(status, "ok") == 0)
            continue;
        if (strcmp(status, "not-byte-exact") == 0)
            rc = rc == SR_EXIT_OK ? SR_EXIT_NOT_BYTE_EXACT : rc;
        else
            rc = SR_EXIT_ERROR;
    }
    return rc;
}

static bool write_json_cb(FILE *f, const void *user)
{
    return json_dumpf(user, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) == 0 &&
           fputc('\n', f) != EOF;
}

static bool write_md_cb(FILE *f, const void *user)
{
    sr_sweep_summary_print(user, f, true);
    return !ferror(f);
}

sagerun_status sr_sweep_summary_write(const char *dir, const json_t *summary, sagerun_error *err)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, SR_SWEEP_SUMMARY_JSON) < 0)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sagerun_status st = sr_cli_write_file(path, write_json_cb, summary, err);
    free(path);
    if (st != SAGERUN_OK)
        return st;
    if (asprintf(&path, "%s/%s", dir, SR_SWEEP_SUMMARY_MD) < 0)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    st = sr_cli_write_file(path, write_md_cb, summary, err);
    free(path);
    return st;
}

char *sr_sweep_default_out_dir(const char *name, long shard_index, long shard_count)
{
    char *dir = NULL;
    int n = shard_count ? asprintf(&dir, "sweep-%s-shard-%ldof%ld", name, shard_index, shard_count)
                        : asprintf(&dir, "sweep-%s", name);
    if (n < 0)
        return NULL;
    for (char *p = dir; *p; p++)
        if (*p == '/')
            *p = '_';
    return dir;
}
