/* Sweep axes: the cartesian product of a sweep file's "axes" over its workloads, and the variant
 * specs of each point (sweep_axes.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sweep_axes.h"

static const char *const shape_axes[] = {"B", "N", "Hq", "D"};
static const char *const field_axes[] = {"heads_kv", "dtype",   "layout", "causal",   "sm_scale",
                                         "kv_len",   "softcap", "window", "varlen",  "page_size"};

sagerun_status sr_sweep_bad_key(const char *file, const char *key, const char *expected,
                                const json_t *found, sagerun_error *err)
{
    static const char *const types[] = {"an object", "an array", "a string", "an integer",
                                        "a number",  "true",     "false",    "null"};
    char seen[96]; /* the value where it is one: "found 0" said "found an integer" */
    if (json_is_integer(found))
        snprintf(seen, sizeof seen, "%lld", (long long)json_integer_value(found));
    else if (json_is_real(found)) {
        snprintf(seen, sizeof seen, "%.17g", json_real_value(found));
        if (!strpbrk(seen, ".en")) /* 32.0, not 32: a real where an integer is wanted */
            strcat(seen, ".0");
    } else if (json_is_string(found))
        snprintf(seen, sizeof seen, "the string \"%.48s%s\"", json_string_value(found),
                 strlen(json_string_value(found)) > 48 ? "..." : "");
    else
        snprintf(seen, sizeof seen, "%s", found ? types[json_typeof(found)] : "nothing");
    return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: key '%s': expected %s, found %s", file, key,
                        expected, seen);
}

static int shape_axis(const char *name)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(shape_axes); i++)
        if (strcmp(name, shape_axes[i]) == 0)
            return (int)i;
    return -1;
}

static bool field_axis(const char *name)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(field_axes); i++)
        if (strcmp(name, field_axes[i]) == 0)
            return true;
    return false;
}

static bool all_of(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]))
            return false;
    return n > 0;
}

/* VARIANT[KEY]: a variant's name ([a-z0-9._-], 1 to 63) and a parameter key ([a-z0-9_], 1 to
 * SAGERUN_PLUGIN_MAX_KEY). variant and key may be NULL. */
static bool variant_axis(const char *name, char variant[64], char key[SAGERUN_PLUGIN_MAX_KEY + 1])
{
    const char *open = strchr(name, '[');
    size_t len = strlen(name);
    if (!open || len < 4 || name[len - 1] != ']')
        return false;
    size_t vn = (size_t)(open - name), kn = len - vn - 2;
    if (vn > 63 || kn > SAGERUN_PLUGIN_MAX_KEY ||
        !all_of(name, vn, "abcdefghijklmnopqrstuvwxyz0123456789._-") ||
        !all_of(open + 1, kn, "abcdefghijklmnopqrstuvwxyz0123456789_"))
        return false;
    if (variant)
        snprintf(variant, 64, "%.*s", (int)vn, name);
    if (key)
        snprintf(key, SAGERUN_PLUGIN_MAX_KEY + 1, "%.*s", (int)kn, open + 1);
    return true;
}

/* Two values of axis `name` that are one point: equal JSON, equal numbers (jansson holds 2 and 2.0
 * as different values, which ran one binding twice under two names), two spellings of one dtype
 * ("fp16", "f16", "half") or layout ("NHD", "nhd"), or two sm_scale (softcap) values of one
 * float. */
static bool same_value(const char *name, const json_t *a, const json_t *b)
{
    if (!strcmp(name, "dtype") && json_is_string(a) && json_is_string(b)) {
        int da = sagerun_dtype_parse(json_string_value(a));
        return da >= 0 && da == sagerun_dtype_parse(json_string_value(b));
    }
    if (!strcmp(name, "layout") && json_is_string(a) && json_is_string(b))
        return !strcasecmp(json_string_value(a), json_string_value(b));
    if ((!strcmp(name, "sm_scale") || !strcmp(name, "softcap")) && json_is_number(a) &&
        json_is_number(b))
        return (float)json_number_value(a) == (float)json_number_value(b);
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

static sagerun_status check_values(const char *file, const char *name, const json_t *values,
                                   sagerun_error *err)
{
    char key[160];
    snprintf(key, sizeof key, "axes.%s", name);
    if (!json_is_array(values) || json_array_size(values) == 0)
        return sr_sweep_bad_key(file, key, "a non-empty array of values", values, err);
    if (json_array_size(values) > SR_SWEEP_MAX_POINTS) /* before the repeats' pairwise scan */
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: %s: %zu values, more than %d combinations",
                                file, key, json_array_size(values), SR_SWEEP_MAX_POINTS);
    for (size_t i = 0; i < json_array_size(values); i++) {
        const json_t *v = json_array_get(values, i);
        char at[200]; /* the value named (the array was: "found an array") */
        snprintf(at, sizeof at, "%s[%zu]", key, i);
        bool size = shape_axis(name) >= 0 || !strcmp(name, "kv_len") || !strcmp(name, "page_size");
        if (size && (!json_is_integer(v) || json_integer_value(v) < 1))
            return sr_sweep_bad_key(file, at, "a size >= 1 (an integer)", v, err);
        if (variant_axis(name, NULL, NULL) && !json_is_number(v) && !json_is_boolean(v))
            return sr_sweep_bad_key(file, at, "a parameter value (a number, true or false)", v, err);
        for (size_t k = 0; k < i; k++)
            if (same_value(name, v, json_array_get(values, k)))
                return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: %s: value %zu repeats value %zu",
                                    file, key, i, k);
    }
    return SAGERUN_OK;
}

static sagerun_status check_axes(const char *file, const json_t *axes, size_t *points,
                                 sagerun_error *err)
{
    if (!json_is_object(axes) || json_object_size(axes) == 0)
        return sr_sweep_bad_key(file, "axes", "an object of axis name -> array of values", axes,
                                err);
    const char *name;
    const json_t *values;
    *points = 1;
    if (json_object_size(axes) > SR_SWEEP_MAX_AXES)
        return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: axes: more than %d axes", file,
                            SR_SWEEP_MAX_AXES);
    json_object_foreach((json_t *)axes, name, values) {
        if (shape_axis(name) < 0 && !field_axis(name) && !variant_axis(name, NULL, NULL))
            return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: axes: unknown axis '%s' (B, N, Hq, D, heads_kv, dtype, "
                                "layout, causal, sm_scale, kv_len, softcap, window, varlen, "
                                "page_size, or VARIANT[KEY]: a parameter of a variant compared)",
                                file, name);
        sagerun_status st = check_values(file, name, values, err);
        if (st != SAGERUN_OK)
            return st;
        *points *= json_array_size(values);
        if (*points > SR_SWEEP_MAX_POINTS)
            return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: axes: more than %d combinations", file, SR_SWEEP_MAX_POINTS);
    }
    return SAGERUN_OK;
}

/* A value as a spec writes it: 64, 0.5, true. */
static char *value_text(const json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
}

char *sr_sweep_point_label(const json_t *point)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    const char *name;
    const json_t *v;
    bool first = true;
    json_object_foreach((json_t *)point, name, v) {
        char *value = value_text(v);
        fprintf(f, "%s%s=%s", first ? "" : ",", name, value ? value : "?");
        free(value);
        first = false;
    }
    fclose(f);
    return text;
}

size_t sr_sweep_summary_axes(const json_t *summary, const char *names[SR_SWEEP_MAX_AXES])
{
    size_t i, n = 0;
    const json_t *w;
    json_array_foreach(json_object_get(summary, "workloads"), i, w) {
        const json_t *axes = json_object_get(w, "axes"), *v;
        const char *name;
        if (!json_is_object(axes))
            continue;
        json_object_foreach((json_t *)axes, name, v) {
            if (n < SR_SWEEP_MAX_AXES)
                names[n++] = name;
        }
        break;
    }
    return n;
}

char *sr_sweep_row_axis_value(const json_t *row, const char *axis)
{
    const json_t *v = json_object_get(json_object_get(row, "axes"), axis);
    return v ? value_text(v) : NULL;
}

bool sr_sweep_point_has_variant_axes(const json_t *point)
{
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)point, name, v)
        if (variant_axis(name, NULL, NULL))
            return true;
    return false;
}

static bool has_workload_axes(const json_t *axes)
{
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)axes, name, v)
        if (!variant_axis(name, NULL, NULL))
            return true;
    return false;
}

/* An inline workload with the point's workload axes applied: a new object, "name" set. */
static json_t *apply_point(const json_t *base, const json_t *defaults, const json_t *point)
{
    /* the defaults copied too: merged as they are, their arrays (a shape) would be one array
     * shared by every point, and setting a point's entry would set it for all of them */
    json_t *w = json_deep_copy(base), *own = defaults ? json_deep_copy(defaults) : NULL;
    bool merged = w && (!defaults || (own && json_object_update_missing(w, own) == 0));
    json_decref(own);
    if (!merged) {
        json_decref(w);
        return NULL;
    }
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)point, name, v) {
        int k = shape_axis(name);
        json_t *shape = json_object_get(w, "shape");
        if (k >= 0 && json_is_array(shape) && json_array_size(shape) == 4)
            json_array_set(shape, (size_t)k, v);
        else if (k < 0 && field_axis(name))
            json_object_set(w, name, v);
    }
    char *label = sr_sweep_point_label(point), *full = NULL;
    const json_t *bn = json_object_get(w, "name");
    if (!label || (json_is_string(bn) ? asprintf(&full, "%s/%s", json_string_value(bn), label) < 0
                                      : !(full = strdup(label)))) {
        free(label);
        json_decref(w);
        return NULL;
    }
    free(label);
    json_object_set_new(w, "name", json_string(full));
    free(full);
    return w;
}

/* Point p of the axes (mixed radix, the first axis slowest). */
static json_t *nth_point(const json_t *axes, size_t p, size_t points)
{
    json_t *point = json_object();
    size_t rest = p, stride = points;
    const char *name;
    const json_t *values;
    json_object_foreach((json_t *)axes, name, values) {
        stride /= json_array_size(values);
        if (point)
            json_object_set(point, name, json_array_get(values, rest / stride));
        rest %= stride;
    }
    return point;
}

static sagerun_status expand_one(const char *file, const json_t *base, size_t b,
                                 const json_t *defaults, const json_t *point, json_t **w,
                                 sagerun_error *err)
{
    const json_t *name = json_object_get(base, "name");
    if (name && (!json_is_string(name) || !json_string_value(name)[0])) /* not dropped: refused */
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: workloads[%zu]: key 'name' must be a non-empty string", file,
                                b);
    if (json_is_object(base))
        *w = apply_point(base, defaults, point);
    else if (json_is_string(base)) /* variant axes only: named once loaded */
        *w = json_copy((json_t *)base);
    else
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                            "%s: workloads[%zu]: expected a workload object or a workload file "
                            "path",
                            file, b);
    return *w ? SAGERUN_OK : sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
}

sagerun_status sr_sweep_axes_expand(const char *file, const json_t *list, const json_t *defaults,
                                    const json_t *axes, json_t **out, json_t ***points_out,
                                    size_t *n_out, sagerun_error *err)
{
    size_t points = 0;
    sagerun_status st = check_axes(file, axes, &points, err);
    if (st != SAGERUN_OK)
        return st;
    for (size_t b = 0; b < json_array_size(list); b++)
        if (json_is_string(json_array_get(list, b)) && has_workload_axes(axes))
            return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: workloads[%zu]: workload axes apply to inline workload "
                                "objects, not to workload files (VARIANT[KEY] axes apply to both)",
                                file, b);
    size_t total = json_array_size(list) * points, n = 0;
    if (total > SR_SWEEP_MAX_POINTS) /* every workload at every point: the sweep's size */
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: %zu workloads at %zu points of the axes are %zu; a sweep has "
                                "at most %d (split it into several sweep files)",
                                file, json_array_size(list), points, total, SR_SWEEP_MAX_POINTS);
    json_t *res = json_array();
    json_t **pts = calloc(total ? total : 1, sizeof(*pts));
    if (!res || !pts)
        st = sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    for (size_t b = 0; st == SAGERUN_OK && b < json_array_size(list); b++)
        for (size_t p = 0; p < points && st == SAGERUN_OK; p++) {
            json_t *point = nth_point(axes, p, points), *w = NULL;
            st = point ? expand_one(file, json_array_get(list, b), b, defaults, point, &w, err)
                       : sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
            if (st == SAGERUN_OK && json_array_append_new(res, w) != 0)
                st = sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
            if (st == SAGERUN_OK)
                pts[n++] = point;
            else
                json_decref(point);
        }
    if (st != SAGERUN_OK) {
        for (size_t i = 0; i < n; i++)
            json_decref(pts[i]);
        free(pts);
        json_decref(res);
        return st;
    }
    *out = res;
    *points_out = pts;
    *n_out = n;
    return SAGERUN_OK;
}

/* ---- the variants of a point ------------------------------------------------------------------ */

/* Whether the spec NAME[k=v,...] sets key. */
static bool spec_sets(const char *spec, const char *key)
{
    const char *args = strchr(spec, '[');
    size_t kn = strlen(key);
    for (const char *p = args; p && *p; p = strchr(p, ','))
        if (strncmp(++p, key, kn) == 0 && p[kn] == '=')
            return true;
    return false;
}

static bool same_variant(const char *spec, const char *variant)
{
    size_t n = strcspn(spec, "[");
    return strlen(variant) == n && strncmp(spec, variant, n) == 0;
}

/* spec with key=value added: "tuned" -> "tuned[block=64]", "t[a=1]" -> "t[a=1,block=64]". */
static char *spec_with(const char *spec, const char *key, const json_t *value)
{
    char *v = value_text(value), *res = NULL;
    size_t n = strlen(spec);
    bool open = n && spec[n - 1] == ']';
    if (v && asprintf(&res, "%.*s%s%s=%s]", (int)(open ? n - 1 : n), spec, open ? "," : "[", key,
                      v) < 0)
        res = NULL;
    free(v);
    return res;
}

/* Adds one axis's value to every spec of its variant. */
static sagerun_status apply_variant_axis(const char *file, const char *axis, const json_t *value,
                                         char **specs, size_t n, sagerun_error *err)
{
    char variant[64], key[SAGERUN_PLUGIN_MAX_KEY + 1];
    variant_axis(axis, variant, key);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        if (!same_variant(specs[i], variant))
            continue;
        if (spec_sets(specs[i], key))
            return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: axes: '%s' sweeps %s, which the variant '%s' sets already",
                                file, axis, key, specs[i]);
        char *next = spec_with(specs[i], key, value);
        if (!next)
            return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        free(specs[i]);
        specs[i] = next;
        found = true;
    }
    if (!found)
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                            "%s: axes: '%s' sweeps a parameter of variant '%s', which is not "
                            "among the variants compared: name it in \"variants\" (or "
                            "--variant)",
                            file, axis, variant);
    return SAGERUN_OK;
}

sagerun_status sr_sweep_point_variants(const char *file, const json_t *point,
                                       const char *const *variants, size_t n, char ***out,
                                       sagerun_error *err)
{
    char **specs = calloc(n ? n : 1, sizeof(*specs));
    if (!specs)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sagerun_status st = SAGERUN_OK;
    for (size_t i = 0; i < n && st == SAGERUN_OK; i++)
        if (!(specs[i] = strdup(variants[i])))
            st = sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)point, name, v) {
        if (st == SAGERUN_OK && variant_axis(name, NULL, NULL))
            st = apply_variant_axis(file, name, v, specs, n, err);
    }
    if (st != SAGERUN_OK) {
        sr_sweep_specs_free(specs, n);
        return st;
    }
    *out = specs;
    return SAGERUN_OK;
}

void sr_sweep_specs_free(char **specs, size_t n)
{
    for (size_t i = 0; specs && i < n; i++)
        free(specs[i]);
    free(specs);
}
