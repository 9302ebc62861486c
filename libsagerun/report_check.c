/* The values of a report read from a file, checked beyond their JSON types: a report is input
 * (show, diff, plot, merge) and a forged one must not pass for a measurement. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "judge.h"
#include "report.h"

static bool is_sha256(const char *s)
{
    return !s || (strlen(s) == 64 && strspn(s, "0123456789abcdefABCDEF") == 64);
}

static bool duration_ok(double s)
{
    return isnan(s) || s >= 0; /* NaN: absent */
}

/* The key of t's first negative duration, or NULL. */
static const char *negative_key(const sr_summary *t)
{
    static const char *const keys[] = {"mean_s", "p50_s", "p90_s", "p95_s", "p99_s", "min_s", "max_s"};
    const double v[] = {t->mean, t->p50, t->p90, t->p95, t->p99, t->min, t->max};
    for (size_t i = 0; i < SR_ARRAY_LEN(v); i++)
        if (!duration_ok(v[i]))
            return keys[i];
    return NULL;
}

/* The first problem of one variant into why (its JSON path and what is wrong); false if none. */
static bool variant_problem(const sr_report_variant *v, char *why, size_t len)
{
    const char *key;
    if (!is_sha256(v->output_sha256))
        snprintf(why, len, "output_sha256 is not a SHA-256 (64 hex digits)");
    else if (!is_sha256(v->last_output_sha256))
        snprintf(why, len, "determinism.last_output_sha256 is not a SHA-256 (64 hex digits)");
    else if (!is_sha256(v->plugin_sha256))
        snprintf(why, len, "plugin_sha256 is not a SHA-256 (64 hex digits)");
    else if ((key = negative_key(&v->timing)))
        snprintf(why, len, "timing.%s: a negative duration", key);
    else if (v->timing.count > 0 && !(v->timing.p50 > 0) && !isnan(v->timing.p50))
        snprintf(why, len, "timing.p50_s: 0 for a variant that ran (count > 0): no call takes no time");
    else if (!isnan(v->prepare_s) && v->prepare_s < 0)
        snprintf(why, len, "prepare_s is negative");
    else if (v->interval.valid && !(v->interval.low <= v->interval.high))
        snprintf(why, len, "speedup_interval_percent: low is above high");
    else if (v->interval.valid && !(v->interval.low > -100))
        snprintf(why, len, "speedup_interval_percent: low %g is not above -100%% (a variant "
                 "cannot take less than no time)", v->interval.low);
    else {
        for (size_t i = 0; i < v->round_count; i++)
            if ((key = negative_key(&v->rounds[i]))) {
                snprintf(why, len, "rounds[%zu].%s: a negative duration", i, key);
                return true;
            }
        size_t per = v->samples_per_round ? v->samples_per_round : 1;
        for (size_t i = 0; v->samples && i < v->sample_rounds * v->samples_per_round; i++)
            if (!duration_ok(v->samples[i])) {
                snprintf(why, len, "samples_s[%zu][%zu]: a negative duration", i / per, i % per);
                return true;
            }
        return false;
    }
    return true;
}

/* A stored verdict that its interval contradicts: faster with an interval that reaches 0 or
 * below, slower with one that reaches 0 or above. (Not the exact rule at the threshold: older
 * reports judged "same" and "differs, below" by other rules, and a slow mode or a drift makes a
 * verdict ambiguous, judge.h.) */
static bool verdict_problem(const sr_report_variant *v, char *why, size_t len)
{
    const sr_interval *iv = &v->interval;
    if (!iv->valid || !((v->verdict == SR_VERDICT_FASTER && !(iv->low > 0)) ||
                        (v->verdict == SR_VERDICT_SLOWER && !(iv->high < 0))))
        return false;
    snprintf(why, len, "verdict '%s' contradicts its interval [%+.3f, %+.3f]",
             sr_verdict_name(v->verdict), iv->low, iv->high);
    return true;
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
        char why[192];
        bool bad = variant_problem(&r->variants[i], why, sizeof why) ||
                   verdict_problem(&r->variants[i], why, sizeof why);
        sr_text_copy(shown, sizeof shown, label_of(&r->variants[i]));
        if (bad)
            return sr_error_set(err, SAGERUN_FORMAT, "%s: variants[%zu] (%s): %s", name, i,
                                shown, why);
        for (size_t k = 0; k < i; k++)
            if (r->variants[k].is_baseline && r->variants[i].is_baseline)
                return sr_error_set(err, SAGERUN_FORMAT,
                                    "%s: variants[%zu] and variants[%zu] are both the baseline "
                                    "(is_baseline)", name, k, i);
        for (size_t k = 0; k < i; k++)
            if (strcmp(label_of(&r->variants[k]), label_of(&r->variants[i])) == 0)
                return sr_error_set(err, SAGERUN_FORMAT,
                                    "%s: variants[%zu] and variants[%zu] have the same label "
                                    "'%s': rows could not be told apart",
                                    name, k, i, shown);
    }
    return SAGERUN_OK;
}
