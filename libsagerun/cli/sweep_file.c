/* The sweep file: read, checked and turned into workloads and compare options (sweep_file.h). */
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"
#include "sweep_axes.h"
#include "sweep_file.h"


void sr_sweep_file_free(sr_sweep_file *s)
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
        snprintf(what, sizeof(what), "an integer from %lld to 100000000", min);
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

/* origin: where the workload is, for messages ("FILE: workloads[I]", with axes its point too). */
static sagerun_status parse_workload(const char *origin, const char *dir, json_t *defaults,
                                     json_t *item, sagerun_workload **w, sagerun_error *err)
{
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

/* The file's "variants": an array of variant names. */
static sagerun_status load_variants(const char *path, json_t *j, sr_sweep_file *s,
                                    sagerun_error *err)
{
    if (!json_is_array(j) || json_array_size(j) == 0) /* [] compared every variant found */
        return sr_sweep_bad_key(path, "variants",
                                "a non-empty array of variant names (without the key: every "
                                "variant found)", j, err);
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
    return SAGERUN_OK;
}

/* The file's name (or its file name without .json) and the compare options it sets. */
static sagerun_status load_options(const char *path, json_t *root, sr_sweep_file *s,
                                   sagerun_error *err)
{
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
    if ((j = json_object_get(root, "variants")) && (st = load_variants(path, j, s, err)))
        return st;
    if ((st = get_count(path, root, "warmup", 0, &s->warmup, err)) ||
        (st = get_count(path, root, "rounds", 1, &s->rounds, err)) ||
        (st = get_count(path, root, "iterations", 1, &s->iterations, err)) ||
        (st = get_count(path, root, "accuracy_rows", 1, &s->accuracy_rows, err)) ||
        (st = get_flag(path, root, "accuracy", &s->accuracy, err)) ||
        (st = get_flag(path, root, "clocks", &s->clocks, err)))
        return st;
    if ((j = json_object_get(root, "noise_threshold_percent"))) {
        if (!json_is_number(j) || !(json_number_value(j) >= 0) || json_number_value(j) > 1e6)
            return sr_sweep_bad_key(path, "noise_threshold_percent",
                                    "a percentage from 0 to 1000000 (as --noise-threshold)", j, err);
        s->threshold = json_number_value(j);
    }
    return SAGERUN_OK;
}

/* Workload i's report file name, which must be neither the summary's nor an earlier one's. */
static sagerun_status name_report(const char *path, sr_sweep_file *s, size_t i,
                                  sagerun_error *err)
{
    const char *name = sagerun_workload_name(s->workloads[i]);
    if (!(s->files[i] = report_file_name(name)))
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    if (strcmp(s->files[i], SR_SWEEP_SUMMARY_JSON) == 0)
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: workloads[%zu]: name '%s' is reserved: its report file "
                                "would be the sweep's %s",
                                path, i, name, SR_SWEEP_SUMMARY_JSON);
    for (size_t k = 0; k < i; k++)
        if (strcmp(s->files[k], s->files[i]) == 0)
            return sr_cli_error_set(err, SAGERUN_FORMAT,
                                    "%s: workloads[%zu]: name '%s' gives the same report file "
                                    "(%s) as workloads[%zu]: give the workloads distinct names",
                                    path, i, name, s->files[i], k);
    return SAGERUN_OK;
}

/* Every workload of the file, at every point of its axes, parsed and given its report file. */
static sagerun_status load_workloads(const char *path, json_t *root, sr_sweep_file *s,
                                     sagerun_error *err)
{
    sagerun_status st;
    json_t *defaults = json_object_get(root, "defaults");
    if (defaults && !json_is_object(defaults))
        return sr_sweep_bad_key(path, "defaults", "an object of workload keys", defaults, err);
    json_t *list = json_object_get(root, "workloads");
    if (!list)
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: key 'workloads' is missing (a list of "
                            "workload objects or workload file paths)", path);
    if (!json_is_array(list) || json_array_size(list) == 0)
        return sr_sweep_bad_key(path, "workloads", "a non-empty array of workloads", list, err);
    bool inline_any = false;
    for (size_t i = 0; i < json_array_size(list); i++) { /* each entry's kind before 'defaults' */
        json_t *w = json_array_get(list, i);
        if (!json_is_object(w) && !json_is_string(w)) {
            char k[40];
            snprintf(k, sizeof k, "workloads[%zu]", i);
            return sr_sweep_bad_key(path, k, "a workload object or a workload file path", w, err);
        }
        inline_any = inline_any || json_is_object(w);
    }
    if (defaults && json_object_size(defaults) && !inline_any) /* else never checked, nor used */
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: key 'defaults': its keys are added to "
                                "inline workload objects, and this sweep has none (only workload "
                                "files)", path);
    if (json_array_size(list) > SR_SWEEP_MAX_POINTS)
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: %zu workloads; a sweep has at most %d "
                                "(split it into several sweep files)",
                                path, json_array_size(list), SR_SWEEP_MAX_POINTS);
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
    char *copy = strdup(path);
    if (!s->workloads || !s->files || !copy) {
        free(copy);
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    const char *dir = dirname(copy);
    st = SAGERUN_OK;
    size_t per = s->axes && s->count ? s->count / json_array_size(json_object_get(root, "workloads")) : 1;
    for (size_t i = 0; st == SAGERUN_OK && i < s->count; i++) { /* failed entries stay NULL */
        /* errors name the file's entry (i / per), not its place after the axes' expansion */
        char origin[512], *label = s->axes ? sr_sweep_point_label(s->axes[i]) : NULL;
        if (s->axes)
            snprintf(origin, sizeof origin, "%s: workloads[%zu] at the point %s", path, i / per,
                     label ? label : "?");
        else
            snprintf(origin, sizeof origin, "%s: workloads[%zu]", path, i);
        free(label);
        st = parse_workload(origin, dir, defaults, json_array_get(list, i), &s->workloads[i],
                            err);
        if (st == SAGERUN_OK && s->axes && json_is_string(json_array_get(list, i)))
            st = name_point(s->workloads[i], s->axes[i], err); /* a file: named once loaded */
        if (st == SAGERUN_OK)
            st = name_report(path, s, i, err);
    }
    free(copy);
    return st;
}

sagerun_status sr_sweep_file_load(const char *path, sr_sweep_file *s, sagerun_error *err)
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
    if ((st = load_options(path, root, s, err)) || (st = load_workloads(path, root, s, err)))
        return st;
    return sagerun_file_sha256(path, s->sha256, err);
}

void sr_sweep_file_apply(const sr_sweep_file *s, sr_cli_compare_settings *set, bool on_host)
{
    sagerun_compare_options *o = &set->opts;
    /* the file's warmup, rounds and iterations are a fixed schedule's counts: a schedule given on
     * the command line other than fixed leaves them out (they made every point fail with
     * "--rounds ... apply to --schedule fixed, not timed") */
    bool counts = !sr_cli_compare_given(set, SR_OPT_SCHEDULE) ||
                  o->schedule == SAGERUN_SCHEDULE_FIXED;
    if (counts && s->warmup >= 0 && !sr_cli_compare_given(set, SR_OPT_WARMUP))
        o->warmup = (uint32_t)s->warmup;
    if (counts && s->rounds >= 0 && !sr_cli_compare_given(set, SR_OPT_ROUNDS))
        o->rounds = (uint32_t)s->rounds;
    if (counts && s->iterations >= 0 && !sr_cli_compare_given(set, SR_OPT_ITERATIONS))
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

sagerun_status sr_sweep_file_bind_points(sr_sweep_file *s, const char *path,
                                         const sagerun_compare_options *o,
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
