/* Judgement: what the timings of a comparison say. The one place where a speedup, its interval and
 * the verdict are derived from samples — the engine after measuring, `show` and `plot` for a report
 * that lacks them, and the schedule's precision check all call these functions.
 *
 * The headline is the paired estimate: each round r gives d_r = ln(p50 of the baseline in r / p50
 * of the variant in r) (both ran in the same round, interleaved, so drift cancels in the ratio);
 * the estimate is exp(mean d) - 1 and the 95% interval is Student's t on the mean of d. The seed's
 * formula (ratio of the pooled p50s) is kept beside it for the seed's JSON key, flagged when it
 * falls outside the interval. */
#ifndef SAGERUN_JUDGE_H
#define SAGERUN_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "stats.h"

typedef struct sr_judgement {
    double seed_speedup;       /* (pooled p50 baseline / pooled p50 variant - 1) * 100; NaN = none */
    sr_interval interval;      /* the paired estimate and its interval (valid = >= 2 rounds) */
    int verdict;               /* sr_verdict */
    bool seed_outside_interval; /* the seed's number lies outside the interval */
} sr_judgement;

/* Judges a variant against the baseline from the per-round p50s of both (rounds entries each) and
 * their pooled p50s (NaN when unknown: then seed_speedup is NaN). threshold in percent. */
sr_judgement sr_judge_pair(const double *baseline_round_p50, const double *variant_round_p50,
                           size_t rounds, double baseline_p50, double variant_p50,
                           double threshold_percent);

/* The verdict of an interval: faster / slower when the whole interval lies beyond +threshold /
 * -threshold; inside [-threshold, +threshold]: same when it holds 0, below-threshold when it does
 * not (a real difference, smaller than the threshold); ambiguous otherwise. */
int sr_judge_verdict(const sr_interval *interval, double threshold_percent);

/* Whether one side of a pair has a slow mode of its own: at least 3 of its samples, and 1 in 20,
 * are slow outliers (sr_slow_outliers), more than three times as many as the other side's, whose samples
 * were taken between them. Interleaved samples share the machine's load, so such outliers are that
 * variant's behaviour (every fifth call 10x slower, say), which the rounds' medians and the
 * trimmed interval leave out: a verdict of same would hide a mean 2.8x the baseline's. */
bool sr_judge_slow_mode(const double *mine, size_t n_mine, const double *theirs, size_t n_theirs);

/* Half the width of the interval in percent points; +Inf when invalid. */
double sr_judge_half_width(const sr_interval *interval);

/* Judges every variant of a report against its baseline (the entry flagged is_baseline, else the
 * first) from its per-round p50s: the seed's
 * speedup, the interval, the verdict, TOPS (where the workload is known). Where either side has a
 * slow mode (sr_judge_slow_mode, from the samples where the report has them), a verdict that the
 * ratio of the means (which count the slow calls) does not tell too is ambiguous instead. only_missing: leaves
 * variants that already carry an interval as they are (a report read back). Returns how many
 * variants' seed speedup lies outside their interval. */
struct sr_report;
size_t sr_judge_report(struct sr_report *r, double threshold_percent, bool only_missing);

#endif
