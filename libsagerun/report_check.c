/* The values of a report read from a file, checked beyond their JSON types: a report is input
 * (show, diff, plot, merge) and a forged one must not pass for a measurement. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

static bool is_sha256(const char *s)
{
    return !s || (strlen(s) == 64 && strspn(s, "0123456789abcdefABCDEF") == 64);
}

static bool duration_ok(double s)
{
    return isnan(s) || s >= 0; /* NaN: absent */
}

static bool summary_ok(const sr_summary *t)
{
    const double v[] = {t->mean, t->p50, t->p90, t->p95, t->p99, t->min, t->max};
    for (size_t i = 0; i < SR_ARRAY_LEN(v); i++)
        if (!duration_ok(v[i]))
            return false;
    return true;
}

/* The first problem of one variant, or NULL. */
static const char *variant_problem(const sr_report_variant *v)
{
    if (!is_sha256(v->output_sha256))
        return "output_sha256 is not a SHA-256 (64 hex digits)";
    if (!is_sha256(v->last_output_sha256))
        return "determinism.last_output_sha256 is not a SHA-256 (64 hex digits)";
    if (!is_sha256(v->plugin_sha256))
        return "plugin_sha256 is not a SHA-256 (64 hex digits)";
    if (!summary_ok(&v->timing))
        return "timing: a negative duration";
    if (v->timing.count > 0 && !(v->timing.p50 > 0) && !isnan(v->timing.p50))
        return "timing.p50_s: 0 for a variant that ran (count > 0): no call takes no time";
    for (size_t i = 0; i < v->round_count; i++)
        if (!summary_ok(&v->rounds[i]))
            return "rounds: a negative duration";
    for (size_t i = 0; v->samples && i < v->sample_rounds * v->samples_per_round; i++)
        if (!duration_ok(v->samples[i]))
            return "samples_s: a negative duration";
    if (!duration_ok(v->prepare_s))
        return "prepare_s is negative";
    if (v->interval.valid && !(v->interval.low <= v->interval.high))
        return "speedup_interval_percent: low is above high";
    return NULL;
}

static const char *label_of(const sr_report_variant *v)
{
    return v->label ? v->label : v->name ? v->name : "";
}

sagerun_status sr_report_check(const sr_report *r, const char *name, sagerun_error *err)
{
    if (!is_sha256(r->reference_sha256))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: reference_output_sha256 is not a SHA-256 (64 hex digits)", name);
    if (!is_sha256(r->expect_sha256))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: expect_sha256 is not a SHA-256 (64 hex digits)", name);
    char shown[SAGERUN_ERROR_MESSAGE_SIZE]; /* a label in a message, on its line (report_text.c) */
    for (size_t i = 0; i < r->variant_count; i++) {
        const char *why = variant_problem(&r->variants[i]);
        sr_text_copy(shown, sizeof shown, label_of(&r->variants[i]));
        if (why)
            return sr_error_set(err, SAGERUN_FORMAT, "%s: variants[%zu] (%s): %s", name, i,
                                shown, why);
        for (size_t k = 0; k < i; k++)
            if (strcmp(label_of(&r->variants[k]), label_of(&r->variants[i])) == 0)
                return sr_error_set(err, SAGERUN_FORMAT,
                                    "%s: variants[%zu] and variants[%zu] have the same label "
                                    "'%s': rows could not be told apart",
                                    name, k, i, shown);
    }
    return SAGERUN_OK;
}
