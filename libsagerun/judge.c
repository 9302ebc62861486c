/* Judgement (judge.h): the paired speedup, its interval and the verdict. */
#include "judge.h"

#include <math.h>
#include <stdlib.h>

#include "report.h"

int sr_judge_verdict(const sr_interval *iv, double threshold)
{
    if (!iv->valid || !(threshold >= 0))
        return SR_VERDICT_AMBIGUOUS;
    if (iv->low > threshold)
        return SR_VERDICT_FASTER;
    if (iv->high < -threshold)
        return SR_VERDICT_SLOWER;
    if (iv->low >= -threshold && iv->high <= threshold)
        return iv->low <= 0 && iv->high >= 0 ? SR_VERDICT_SAME : SR_VERDICT_BELOW_THRESHOLD;
    return SR_VERDICT_AMBIGUOUS;
}

bool sr_judge_slow_mode(const double *mine, size_t n_mine, const double *theirs, size_t n_theirs)
{
    if (!mine || !theirs || !n_mine || !n_theirs)
        return false;
    size_t out = sr_slow_outliers(mine, n_mine), other = sr_slow_outliers(theirs, n_theirs);
    return out >= 3 && out * 20 >= n_mine && out > 3 * other &&
           sr_fisher_greater(out, n_mine, other, n_theirs) < SR_SLOW_MODE_P;
}

/* ---- drift ------------------------------------------------------------------------------------ */

typedef struct ranked {
    double value;
    size_t at;
} ranked;

static int by_value(const void *pa, const void *pb)
{
    double a = ((const ranked *)pa)->value, b = ((const ranked *)pb)->value;
    return (a > b) - (a < b);
}

/* Spearman's rho of v[0..n) with its index: the Pearson correlation of v's ranks (ties: their mean
 * rank) with 1..n. NaN on allocation failure or where v is constant. */
static double rank_correlation_with_time(const double *v, size_t n)
{
    ranked *r = malloc(n * sizeof(*r));
    double *rank = malloc(n * sizeof(*rank));
    double rho = NAN;
    if (r && rank) {
        for (size_t i = 0; i < n; i++)
            r[i] = (ranked){v[i], i};
        qsort(r, n, sizeof(*r), by_value);
        for (size_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && r[j].value == r[i].value; j++)
                ;
            for (size_t k = i; k < j; k++)
                rank[r[k].at] = (double)(i + j + 1) / 2.0; /* the mean of ranks i+1 .. j */
        }
        double mean = (double)(n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;
        for (size_t i = 0; i < n; i++) {
            double dx = (double)(i + 1) - mean, dy = rank[i] - mean;
            sxy += dx * dy;
            sxx += dx * dx;
            syy += dy * dy;
        }
        if (syy > 0)
            rho = sxy / sqrt(sxx * syy);
    }
    free(r);
    free(rank);
    return rho;
}

static double third_speedup(const double *d, size_t n, double *scratch)
{
    return (exp(sr_median_finite(d, n, scratch)) - 1.0) * 100.0;
}

sr_drift sr_judge_drift(const double *b, const double *x, size_t rounds, double threshold)
{
    sr_drift dr = {.first_percent = NAN, .last_percent = NAN, .rank_correlation = NAN};
    double *d = malloc((rounds ? rounds : 1) * 2 * sizeof(double));
    size_t n = 0;
    for (size_t r = 0; d && r < rounds; r++)
        if (b[r] > 0 && x[r] > 0 && isfinite(b[r]) && isfinite(x[r]))
            d[n++] = log(b[r] / x[r]);
    if (n >= SR_DRIFT_MIN_ROUNDS) {
        size_t third = n / 3;
        dr.first_percent = third_speedup(d, third, d + rounds);
        dr.last_percent = third_speedup(d + n - third, third, d + rounds);
        dr.rank_correlation = rank_correlation_with_time(d, n);
        double moved = dr.last_percent - dr.first_percent;
        double rho = dr.rank_correlation, n2 = (double)(n - 2);
        bool trend = fabs(rho) >= 1.0 ||
                     fabs(rho) * sqrt(n2 / (1.0 - rho * rho)) > sr_t_quantile_9995(n - 2);
        dr.found = trend && fabs(moved) > fmax(threshold, 2.0) && moved * rho > 0;
    }
    free(d);
    return dr;
}

static int side_of(double speedup, double threshold)
{
    return speedup > threshold ? 1 : speedup < -threshold ? -1 : 0;
}

bool sr_drift_splits_verdict(const sr_drift *dr, double threshold)
{
    return dr->found &&
           side_of(dr->first_percent, threshold) != side_of(dr->last_percent, threshold);
}

double sr_judge_half_width(const sr_interval *iv)
{
    return iv->valid ? (iv->high - iv->low) / 2.0 : INFINITY;
}

sr_judgement sr_judge_pair(const double *b, const double *x, size_t rounds, size_t instances,
                           double b_p50, double x_p50, double threshold)
{
    sr_judgement j = {.seed_speedup = NAN, .verdict = SR_VERDICT_AMBIGUOUS,
                      .drift = {.first_percent = NAN, .last_percent = NAN, .rank_correlation = NAN}};
    if (b_p50 > 0 && x_p50 > 0)
        j.seed_speedup = sr_speedup_percent(b_p50, x_p50);
    j.interval = sr_paired_speedup_interval_instances(b, x, rounds, instances);
    j.verdict = sr_judge_verdict(&j.interval, threshold);
    j.seed_outside_interval = j.interval.valid && isfinite(j.seed_speedup) &&
                              (j.seed_speedup < j.interval.low || j.seed_speedup > j.interval.high);
    return j;
}

/* ---- a whole report ---------------------------------------------------------------------------- */

static sr_judgement judge_variant(const sr_report_variant *base, const sr_report_variant *v,
                                  size_t instances, double threshold)
{
    size_t R = base->round_count == v->round_count ? v->round_count : 0;
    double *b = malloc((R ? R : 1) * 2 * sizeof(double));
    if (!b)
        R = 0;
    double *x = b ? b + (R ? R : 1) : NULL;
    for (size_t k = 0; k < R; k++) {
        b[k] = base->rounds[k].p50;
        x[k] = v->rounds[k].p50;
    }
    sr_judgement j = sr_judge_pair(b, x, R, instances, base->timing.p50, v->timing.p50, threshold);
    j.drift = sr_judge_drift(b, x, R, threshold);
    free(b);
    if (sr_drift_splits_verdict(&j.drift, threshold))
        j.verdict = SR_VERDICT_AMBIGUOUS;
    size_t nb = base->sample_rounds * base->samples_per_round, nx = v->sample_rounds * v->samples_per_round;
    /* a slow mode on either side: the verdict stands only where the means, which count the slow
     * calls, tell the same (reference-mt's thread-scheduling tail leaves it 2x faster) */
    if (sr_judge_slow_mode(v->samples, nx, base->samples, nb) ||
        sr_judge_slow_mode(base->samples, nb, v->samples, nx)) {
        sr_interval by_means = sr_means_speedup_interval(base->samples, nb, v->samples, nx);
        int told = sr_judge_verdict(&by_means, threshold), said = j.verdict;
        told = told == SR_VERDICT_BELOW_THRESHOLD ? SR_VERDICT_SAME : told;
        said = said == SR_VERDICT_BELOW_THRESHOLD ? SR_VERDICT_SAME : said;
        if (said != told)
            j.verdict = SR_VERDICT_AMBIGUOUS;
    }
    return j;
}

/* The report's baseline: the entry flagged so (a seed-format file: its 0% entry, report.c), else
 * the first. */
static size_t baseline_index(const sr_report *r)
{
    for (size_t i = 0; i < r->variant_count; i++)
        if (r->variants[i].is_baseline)
            return i;
    return 0;
}

size_t sr_judge_report(sr_report *r, double threshold, bool only_missing)
{
    size_t outside = 0, b = baseline_index(r);
    double ops = sr_report_operations(r); /* the pairs attended: varlen's own lengths */
    for (size_t i = 0; i < r->variant_count; i++) {
        sr_report_variant *v = &r->variants[i];
        if (v->failure || !v->timing.count)
            continue;
        if (!isfinite(v->tops) && v->timing.p50 > 0 && isfinite(ops))
            v->tops = ops / v->timing.p50 / 1e12;
        if (i == b) {
            v->speedup_percent = 0.0;
            continue;
        }
        if (only_missing && v->interval.valid)
            continue;
        sr_judgement j = judge_variant(&r->variants[b], v, r->measurement.instances, threshold);
        if (!only_missing || !isfinite(v->speedup_percent))
            v->speedup_percent = j.seed_speedup;
        v->interval = j.interval;
        v->verdict = j.verdict;
        v->drift = j.drift;
        outside += j.seed_outside_interval;
    }
    return outside;
}
