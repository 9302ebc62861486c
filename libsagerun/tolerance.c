/* Tolerance mode (tolerance.h): the limits a caller gives, and the judgement of each variant that
 * is not byte-exact against them. */
#include "tolerance.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const options[SR_TOL_METRICS] = {"--max-ulp", "--min-cos", "--max-rel-l1"};

const char *sr_tolerance_option(int metric)
{
    return metric >= 0 && metric < SR_TOL_METRICS ? options[metric] : "?";
}

static bool value_ok(int metric, double v)
{
    if (metric == SR_TOL_MAX_ULP)
        return v >= 0 && v <= 65535 && v == floor(v);
    if (metric == SR_TOL_MIN_COS)
        return v >= -1 && v <= 1;
    return v >= 0;
}

bool sr_tolerance_add(sr_tolerance_set *t, int metric, const char *spec, char *err, size_t len)
{
    const char *eq = strrchr(spec, '='), *text = eq ? eq + 1 : spec;
    const char *want = metric == SR_TOL_MAX_ULP   ? "a whole number of ulp, 0 to 65535"
                       : metric == SR_TOL_MIN_COS ? "a cosine similarity, -1 to 1"
                                                  : "a relative error >= 0";
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || !isfinite(v) || !value_ok(metric, v)) {
        snprintf(err, len, "%s '%s': expected [LABEL=]VALUE, VALUE %s", options[metric], spec,
                 want);
        return false;
    }
    size_t n = eq ? (size_t)(eq - spec) : 0;
    if ((eq && (n == 0 || n >= sizeof t->limits[0][0].label)) ||
        t->n[metric] >= SR_TOL_MAX_LIMITS) {
        snprintf(err, len, "%s '%s': %s", options[metric], spec,
                 eq && (n == 0 || n >= sizeof t->limits[0][0].label)
                     ? "the label is empty or too long" : "too many limits");
        return false;
    }
    for (size_t i = 0; i < t->n[metric]; i++) /* one limit per label: which would win is no answer */
        if (strlen(t->limits[metric][i].label) == n && !strncmp(t->limits[metric][i].label, spec, n)) {
            snprintf(err, len, "%s '%s': a second limit for %s%.*s (the first: %g)", options[metric],
                     spec, n ? "" : "every variant", (int)n, spec, t->limits[metric][i].value);
            return false;
        }
    sr_tolerance_limit *l = &t->limits[metric][t->n[metric]++];
    snprintf(l->label, sizeof l->label, "%.*s", (int)n, spec);
    l->value = v;
    return true;
}

bool sr_tolerance_empty(const sr_tolerance_set *t)
{
    return !t || (t->n[0] == 0 && t->n[1] == 0 && t->n[2] == 0);
}

/* The limit of metric for v: the one given for its label or name, else the general one, NaN. */
static double limit_for(const sr_tolerance_set *t, int metric, const sr_report_variant *v)
{
    double general = NAN;
    for (size_t i = 0; i < t->n[metric]; i++) {
        const sr_tolerance_limit *l = &t->limits[metric][i];
        if (!l->label[0])
            general = l->value;
        else if (!strcmp(l->label, sr_report_variant_label(v)) ||
                 (v->name && !strcmp(l->label, v->name)))
            return l->value;
    }
    return general;
}

/* Appends one finding to the detail; a failed one fails the variant. */
static void note(sr_tolerance *tol, bool ok, const char *text)
{
    size_t used = strlen(tol->detail);
    snprintf(tol->detail + used, sizeof tol->detail - used, "%s%s", used ? ", " : "", text);
    if (!ok)
        tol->passed = 0;
}

static void judge_ulp(sr_tolerance *tol, const sr_byte_diff *d)
{
    char text[96];
    if (!d->present || isinf(d->max_abs)) {
        note(tol, false, !d->present ? "byte difference not measured"
                                     : "a NaN against a number in the byte difference");
        return;
    }
    snprintf(text, sizeof text, "max %llu ulp (limit %.0f)", (unsigned long long)d->max_ulp,
             tol->max_ulp);
    note(tol, (double)d->max_ulp <= tol->max_ulp, text);
}

static void judge_accuracy(sr_tolerance *tol, const sr_accuracy *a)
{
    char text[96];
    if (!a->present || a->nonfinite) {
        note(tol, false, a->present ? "non-finite output" : "accuracy not measured");
        return;
    }
    if (isfinite(tol->min_cos)) {
        snprintf(text, sizeof text, "cosine %.9g (limit >= %.9g)", a->cosine, tol->min_cos);
        note(tol, a->cosine >= tol->min_cos, text);
    }
    if (isfinite(tol->max_rel_l1)) {
        snprintf(text, sizeof text, "relative L1 %.4g (limit <= %.4g)", a->rel_l1,
                 tol->max_rel_l1);
        note(tol, a->rel_l1 <= tol->max_rel_l1, text);
    }
}

static void judge_variant(sr_report_variant *v)
{
    sr_tolerance *tol = &v->tolerance;
    tol->passed = 1;
    tol->detail[0] = '\0';
    if (isfinite(tol->max_ulp))
        judge_ulp(tol, &v->byte_diff);
    if (isfinite(tol->min_cos) || isfinite(tol->max_rel_l1))
        judge_accuracy(tol, &v->accuracy);
    if (v->deterministic == 0)
        note(tol, true, "not deterministic");
}

/* A limit given for a label no variant of r has: said in a warning (it judged nothing). */
static void warn_unmatched(sr_report *r, const sr_tolerance_set *t)
{
    for (int m = 0; m < SR_TOL_METRICS; m++)
        for (size_t i = 0; i < t->n[m]; i++) {
            const char *l = t->limits[m][i].label;
            bool found = !l[0];
            for (size_t k = 0; k < r->variant_count && !found; k++)
                found = !strcmp(l, sr_report_variant_label(&r->variants[k])) ||
                        (r->variants[k].name && !strcmp(l, r->variants[k].name));
            if (!found)
                sr_report_add_warning(r, "%s %s=%g: no variant %s in this comparison",
                                      options[m], l, t->limits[m][i].value, l);
        }
}

void sr_tolerance_apply(sr_report *r, const sr_tolerance_set *t)
{
    static const sr_tolerance_set none;
    if (!t) /* no limits: every variant's judgement cleared (an earlier one stayed) */
        t = &none;
    warn_unmatched(r, t);
    for (size_t i = 0; i < r->variant_count; i++) {
        sr_report_variant *v = &r->variants[i];
        sr_tolerance *tol = &v->tolerance;
        tol->max_ulp = limit_for(t, SR_TOL_MAX_ULP, v);
        tol->min_cos = limit_for(t, SR_TOL_MIN_COS, v);
        tol->max_rel_l1 = limit_for(t, SR_TOL_MAX_REL_L1, v);
        tol->present = isfinite(tol->max_ulp) || isfinite(tol->min_cos) ||
                       isfinite(tol->max_rel_l1);
        tol->passed = -1;
        if (tol->present && v->byte_exact == 0 && !v->failure && v->timing.count > 0)
            judge_variant(v);
    }
}

bool sr_report_variant_accepted(const sr_report_variant *v)
{
    return v->byte_exact == 1 || (v->tolerance.present && v->tolerance.passed == 1);
}

/* ---- JSON (the report's "tolerance" of a variant) ---------------------------------------------- */

static json_t *limit_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *sr_tolerance_to_json(const sr_tolerance *t)
{
    if (!t->present)
        return json_null();
    return json_pack("{s:o, s:o, s:o, s:b, s:o, s:o}", "max_ulp", limit_json(t->max_ulp),
                     "min_cosine", limit_json(t->min_cos), "max_relative_l1",
                     limit_json(t->max_rel_l1), "judged", t->passed >= 0, "passed",
                     t->passed < 0 ? json_null() : json_boolean(t->passed),
                     "detail", t->passed < 0 ? json_null() : json_string(t->detail));
}

/* One limit: a number or null; false when it is neither. */
static bool limit_read(json_t *o, const char *key, double *out)
{
    json_t *x = json_object_get(o, key);
    *out = x && json_is_number(x) ? json_number_value(x) : NAN;
    return !x || json_is_null(x) || json_is_number(x);
}

const char *sr_tolerance_from_json(json_t *o, sr_tolerance *t)
{
    memset(t, 0, sizeof *t);
    t->passed = -1;
    if (!o || json_is_null(o))
        return NULL;
    if (!json_is_object(o))
        return "expected an object or null";
    if (!limit_read(o, "max_ulp", &t->max_ulp) || !limit_read(o, "min_cosine", &t->min_cos) ||
        !limit_read(o, "max_relative_l1", &t->max_rel_l1))
        return "a limit (max_ulp, min_cosine, max_relative_l1) is not a number or null";
    json_t *passed = json_object_get(o, "passed"), *detail = json_object_get(o, "detail");
    if (passed && !json_is_null(passed) && !json_is_boolean(passed))
        return "passed: expected a boolean or null";
    if (detail && !json_is_null(detail) && !json_is_string(detail))
        return "detail: expected a string or null";
    t->present = true;
    t->passed = passed && json_is_boolean(passed) ? json_is_true(passed) : -1;
    snprintf(t->detail, sizeof t->detail, "%s", detail && json_is_string(detail)
                                                    ? json_string_value(detail) : "");
    return NULL;
}

/* ---- the public face (compare.h) ------------------------------------------------------------ */

struct sagerun_tolerance {
    sr_tolerance_set set;
};

sagerun_status sagerun_tolerance_create(sagerun_tolerance **out, sagerun_error *err)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "tolerance_create: NULL argument");
    if (!(*out = calloc(1, sizeof(**out))))
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    return SAGERUN_OK;
}

void sagerun_tolerance_destroy(sagerun_tolerance *t)
{
    free(t);
}

sagerun_status sagerun_tolerance_add(sagerun_tolerance *t, int metric, const char *spec,
                                     sagerun_error *err)
{
    if (!t || !spec)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "tolerance_add: NULL argument");
    if (metric < 0 || metric >= SR_TOL_METRICS)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "tolerance: unknown metric %d", metric);
    char why[SAGERUN_ERROR_MESSAGE_SIZE];
    if (!sr_tolerance_add(&t->set, metric, spec, why, sizeof why))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "%s", why);
    return SAGERUN_OK;
}

const sr_tolerance_set *sr_tolerance_limits(const sagerun_tolerance *t)
{
    return &t->set;
}

size_t sagerun_tolerance_count(const sagerun_tolerance *t, int metric)
{
    return t && metric >= 0 && metric < SR_TOL_METRICS ? t->set.n[metric] : 0;
}

