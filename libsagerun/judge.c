/* Judgement (judge.h): the paired speedup, its interval and the verdict. */
#include "judge.h"

#include <math.h>

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

double sr_judge_half_width(const sr_interval *iv)
{
    return iv->valid ? (iv->high - iv->low) / 2.0 : INFINITY;
}

sr_judgement sr_judge_pair(const double *b, const double *x, size_t rounds, double b_p50,
                           double x_p50, double threshold)
{
    sr_judgement j = {.seed_speedup = NAN, .verdict = SR_VERDICT_AMBIGUOUS};
    if (b_p50 > 0 && x_p50 > 0)
        j.seed_speedup = sr_speedup_percent(b_p50, x_p50);
    j.interval = sr_paired_speedup_interval(b, x, rounds);
    j.verdict = sr_judge_verdict(&j.interval, threshold);
    j.seed_outside_interval = j.interval.valid && isfinite(j.seed_speedup) &&
                              (j.seed_speedup < j.interval.low || j.seed_speedup > j.interval.high);
    return j;
}
