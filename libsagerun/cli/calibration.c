/* The run-to-run movement of a machine (calibration.h). */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "calibration.h"
#include "repeat.h"
#include "sweep.h"

bool sr_cli_device_key(const char *report_path, char *buf, size_t len)
{
    sagerun_compare_result *r = NULL;
    sagerun_compare_info info = {.struct_size = sizeof info};
    bool ok = sagerun_compare_result_read(report_path, &r, NULL) == SAGERUN_OK &&
              sagerun_compare_result_info(r, &info, NULL) == SAGERUN_OK;
    if (ok)
        snprintf(buf, len, "%s:%s", info.backend ? info.backend : "?",
                 info.device_name ? info.device_name : "?");
    sagerun_compare_result_destroy(r);
    return ok;
}

/* The calibration file's path, into buf; false when no place is known. */
static bool calibration_path(char *buf, size_t len)
{
    const char *env = getenv("SAGERUN_CALIBRATION"), *xdg = getenv("XDG_CONFIG_HOME"),
               *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, len, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, len, "%s/sagerun/calibration.json", xdg);
    else if (home && *home)
        snprintf(buf, len, "%s/.config/sagerun/calibration.json", home);
    else
        return false;
    return true;
}

double sr_cli_calibration_sd(const char *device_key, bool relative, char *source, size_t len)
{
    char path[4096];
    json_error_t jerr;
    if (!calibration_path(path, sizeof path))
        return 0;
    json_t *root = sr_cli_json_load(path, 0, &jerr);
    json_t *dev = json_object_get(json_object_get(root, "devices"), device_key);
    double sd = json_number_value(json_object_get(
        dev, relative ? "between_run_sd_percent" : "between_run_time_sd_percent"));
    json_decref(root);
    if (!(sd > 0 && sd <= 100))
        return 0;
    snprintf(source, len, "%s", path);
    return sd;
}

/* Estimates of the runs, by variant and point: each a run's ln(time over the baseline's) and
 * ln(time). */
typedef struct estimate {
    char *key; /* "point\tlabel" */
    double rel, abs;
} estimate;
typedef struct estimates {
    estimate *e;
    size_t n, cap, runs;
} estimates;

static bool add_estimate(estimates *s, const char *point, const sagerun_compare_variant *v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        estimate *e = realloc(s->e, cap * sizeof(*e));
        if (!e)
            return false;
        s->e = e;
        s->cap = cap;
    }
    estimate *e = &s->e[s->n];
    if (asprintf(&e->key, "%s\t%s", point, v->label ? v->label : v->name) < 0)
        return false;
    e->rel = v->is_baseline ? NAN : -log1p(v->speedup_estimate_percent / 100.0);
    e->abs = v->timing.count && v->timing.p50_s > 0 ? log(v->timing.p50_s) : NAN;
    s->n++;
    return true;
}

/* The estimates of one report (point: the sweep's workload, or ""). */
static sagerun_status report_estimates(estimates *s, const char *point, const char *path,
                                       sagerun_error *err)
{
    sagerun_compare_result *r = NULL;
    if (sagerun_compare_result_read(path, &r, err) != SAGERUN_OK)
        return err->status;
    for (size_t i = 0; i < sagerun_compare_result_variant_count(r); i++) {
        sagerun_compare_variant v = {.struct_size = sizeof v};
        if (sagerun_compare_result_variant(r, i, &v, err) != SAGERUN_OK ||
            (v.ran && !add_estimate(s, point, &v))) {
            sagerun_compare_result_destroy(r);
            return err->status ? err->status
                               : sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        }
    }
    sagerun_compare_result_destroy(r);
    return SAGERUN_OK;
}

/* The path of a summary row's report beside the summary; NULL when it has none. */
static char *row_report(const char *summary_path, const json_t *w)
{
    const char *file = json_string_value(json_object_get(w, "report"));
    char *copy = file ? strdup(summary_path) : NULL, *out = NULL;
    if (copy && asprintf(&out, "%s/%s", dirname(copy), file) < 0)
        out = NULL;
    free(copy);
    return out;
}

/* The estimates of one run (a report, or a sweep's summary: every point's report); *key: the
 * device of its first report, when still empty. */
static sagerun_status run_estimates(estimates *s, const char *path, char *key, size_t key_len,
                                    sagerun_error *err)
{
    json_t *summary = sr_sweep_summary_load(path, err);
    if (!summary) {
        if (err->status != SAGERUN_OK)
            return err->status;
        if (!key[0])
            sr_cli_device_key(path, key, key_len);
        return report_estimates(s, "", path, err);
    }
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(summary, "workloads"), i, w) {
        char *report = row_report(path, w);
        const char *name = json_string_value(json_object_get(w, "name"));
        if (report && !key[0])
            sr_cli_device_key(report, key, key_len);
        sagerun_status st = report && name ? report_estimates(s, name, report, err) : SAGERUN_OK;
        free(report);
        if (st != SAGERUN_OK) {
            json_decref(summary);
            return st;
        }
    }
    json_decref(summary);
    return SAGERUN_OK;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const estimate *)a)->key, ((const estimate *)b)->key);
}

/* The pooled sd (percent) of the estimates within each variant and point over the runs; *dof:
 * its degrees of freedom (0: none, NaN returned). s sorted by key. */
static double pooled_sd(const estimates *s, bool rel, size_t *dof)
{
    double ss = 0;
    *dof = 0;
    for (size_t i = 0, j; i < s->n; i = j) {
        double sum = 0;
        size_t k = 0;
        for (j = i; j < s->n && strcmp(s->e[j].key, s->e[i].key) == 0; j++)
            if (isfinite(rel ? s->e[j].rel : s->e[j].abs))
                sum += rel ? s->e[j].rel : s->e[j].abs, k++;
        for (size_t m = i; k > 1 && m < j; m++) {
            double x = rel ? s->e[m].rel : s->e[m].abs;
            if (isfinite(x))
                ss += (x - sum / (double)k) * (x - sum / (double)k);
        }
        *dof += k > 1 ? k - 1 : 0;
    }
    return *dof ? expm1(sqrt(ss / (double)*dof)) * 100.0 : NAN;
}

static bool write_json_cb(FILE *f, const void *user)
{
    return json_dumpf(user, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 && fputc('\n', f) != EOF;
}

/* Stores the device's entry in the calibration file (made, with its folder, where absent). */
static sagerun_status store(const char *key, json_t *entry, char *path, size_t len,
                            sagerun_error *err)
{
    json_error_t jerr;
    if (!calibration_path(path, len))
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "no place for the calibration: set SAGERUN_CALIBRATION or HOME");
    char *copy = strdup(path);
    const char *dir = copy ? dirname(copy) : ".";
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) { /* one level: ~/.config/sagerun */
        sr_cli_error_set(err, SAGERUN_IO, "%s: %s", dir, strerror(errno));
        free(copy);
        return err->status;
    }
    free(copy);
    json_t *root = sr_cli_json_load(path, 0, &jerr);
    if (!json_is_object(root) || !json_is_object(json_object_get(root, "devices"))) {
        json_decref(root);
        root = json_pack("{s:i, s:{}}", "sagerun_calibration", 1, "devices");
    }
    json_object_set_new(json_object_get(root, "devices"), key, entry);
    sagerun_status st = sr_cli_write_file(path, write_json_cb, root, err);
    json_decref(root);
    return st;
}

/* The entry of the device: both sds, what they came of. */
static json_t *entry_of(const estimates *s, const char *index_path)
{
    size_t dof_rel, dof_abs;
    double rel = pooled_sd(s, true, &dof_rel), abs = pooled_sd(s, false, &dof_abs);
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    return json_pack("{s:o, s:o, s:I, s:I, s:s, s:s}", "between_run_sd_percent",
                     isfinite(rel) ? json_real(rel) : json_null(), "between_run_time_sd_percent",
                     isfinite(abs) ? json_real(abs) : json_null(), "runs", (json_int_t)s->runs,
                     "degrees_of_freedom", (json_int_t)dof_rel, "source", index_path, "created_utc", when);
}

static void estimates_free(estimates *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->e[i].key);
    free(s->e);
}

int sr_cli_calibrate(const char *index_path)
{
    sagerun_error err = {0};
    size_t n = 0;
    bool sweep = false;
    char **runs = sr_cli_repeat_paths(index_path, &n, &sweep, &err), key[512] = "", path[4096];
    estimates s = {0};
    if (!runs && err.status == SAGERUN_OK)
        sr_cli_error_set(&err, SAGERUN_INVALID_ARGUMENT,
                         "%s is not a repeat index (compare --repeat N --json FILE, sweep "
                         "--repeat N: DIR/repeats.json)", index_path);
    else if (runs && n < 3)
        sr_cli_error_set(&err, SAGERUN_INVALID_ARGUMENT,
                         "%s: %zu runs with a file: a calibration needs 3 or more", index_path, n);
    for (size_t i = 0; runs && n >= 3 && i < n && err.status == SAGERUN_OK; i++)
        run_estimates(&s, runs[i], key, sizeof key, &err);
    s.runs = n;
    json_t *entry = NULL;
    if (err.status == SAGERUN_OK) {
        qsort(s.e, s.n, sizeof(*s.e), by_key);
        entry = entry_of(&s, index_path);
        if (!json_is_real(json_object_get(entry, "between_run_sd_percent")))
            sr_cli_error_set(&err, SAGERUN_FORMAT,
                             "%s: no variant with an estimate in two runs or more", index_path);
    }
    double sd = json_real_value(json_object_get(entry, "between_run_sd_percent"));
    if (err.status == SAGERUN_OK && store(key, json_incref(entry), path, sizeof path, &err) == SAGERUN_OK)
        printf("calibration of %s: between-run sd %.3g%% (a variant's time over its baseline's; "
               "its time alone: %.3g%%), from %zu runs; one run per side then cannot tell a "
               "change under %.2f%%\nstored in %s\n",
               sr_cli_text(key), sd,
               json_number_value(json_object_get(entry, "between_run_time_sd_percent")), n,
               expm1(1.959964 * sqrt(2.0) * log1p(sd / 100.0)) * 100.0, sr_cli_text(path));
    json_decref(entry);
    estimates_free(&s);
    sr_cli_repeat_paths_free(runs, n);
    if (err.status == SAGERUN_OK)
        return SR_EXIT_OK;
    sr_cli_error("diff: --calibrate: %s", err.message);
    return SR_EXIT_ERROR;
}
