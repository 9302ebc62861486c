/* Judgement: what the timings of a comparison say. The one place where a speedup, its interval and
 * the verdict are derived from samples — the engine after measuring, `show` and `plot` for a report
 * that lacks them, and the schedule's precision check all call these functions.
 *
 * The headline is the paired estimate: each round r gives d_r = ln(p50 of the baseline in r / p50
 * of the variant in r) (both ran in the same round, interleaved, so drift cancels in the ratio);
 * the estimate is exp(m) - 1, m the mean of d (from 10 rounds on its 20%-trimmed mean), and the
 * 95% interval Student's t on m (from 10 rounds on the Tukey-McLaughlin interval of the trimmed
 * mean; where the winsorized values are all equal, the plain SD: stats.c), with the spread between
 * each side's instances added where the rounds went to several (compare --instances). The seed's
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
    sr_drift drift;            /* of the ratio during the run (sr_judge_drift) */
} sr_judgement;

/* Judges a variant against the baseline from the per-round p50s of both (rounds entries each; each
 * side's rounds spread over `instances` instances, stats.h) and their pooled p50s (NaN when
 * unknown: then seed_speedup is NaN). threshold in percent. */
sr_judgement sr_judge_pair(const double *baseline_round_p50, const double *variant_round_p50,
                           size_t rounds, size_t instances, double baseline_p50,
                           double variant_p50, double threshold_percent);

/* The verdict of an interval: faster / slower when the whole interval lies beyond +threshold /
 * -threshold; inside [-threshold, +threshold]: same when it holds 0, below-threshold when it does
 * not (a real difference, smaller than the threshold); ambiguous otherwise. */
int sr_judge_verdict(const sr_interval *interval, double threshold_percent);

/* Whether one side of a pair has a slow mode of its own: at least 3 of its samples, and 1 in 20,
 * are slow outliers (sr_slow_outliers), more than three times as many as the other side's, whose samples
 * were taken between them, and more than chance gives: Fisher's exact test one-sided below
 * SR_SLOW_MODE_P (3 slow of 40 against 0 of 40, p 0.12, was called a slow mode: 1.07% of clean
 * 100 ms A/As read ambiguous). Interleaved samples share the machine's load, so such outliers are
 * that variant's behaviour (every fifth call 10x slower, say), which the rounds' medians and the
 * trimmed interval leave out: a verdict of same would hide a mean 2.8x the baseline's. */
#define SR_SLOW_MODE_P 0.025 /* one-sided: a two-sided test at 0.05 */
bool sr_judge_slow_mode(const double *mine, size_t n_mine, const double *theirs, size_t n_theirs);

/* Drift of a variant's speedup during the run (stats.h: sr_drift). The rounds, in the order they
 * ran, give d_r = ln(baseline p50 / variant p50) (rounds where either is not a positive time are left
 * out). The rounds' interleaving cancels drift that hits both sides alike (clocks, temperature); a
 * drift of the ratio itself does not cancel, and the interval, which takes the rounds as draws of
 * one ratio, then holds for a run of this length only. Found where, over at least
 * SR_DRIFT_MIN_ROUNDS rounds, Spearman's rank correlation rho of d_r with time is beyond chance at
 * two-sided p < 0.001 (rho sqrt((n - 2) / (1 - rho^2)) against Student's t on n - 2 dof: the normal
 * form, sqrt(n - 1) rho beyond 3.29, asked for rho 0.992 at 12 rounds, a false-alarm rate of 5e-8,
 * and missed a drift across the threshold there) and the speedups of the
 * first and the last third of the rounds (exp of the third's median d, minus 1) differ, in the same
 * direction, by more than max(threshold, 2) percent points. */
enum { SR_DRIFT_MIN_ROUNDS = 12 };
sr_drift sr_judge_drift(const double *baseline_round_p50, const double *variant_round_p50,
                        size_t rounds, double threshold_percent);

/* Whether a drift found moves the speedup across the threshold: the first and the last third of
 * the rounds would not tell the same of the variant (faster than +threshold, slower than
 * -threshold, or within it). Then no verdict holds for the run, and judge_report says ambiguous. */
bool sr_drift_splits_verdict(const sr_drift *drift, double threshold_percent);

/* Half the width of the interval in percent points; +Inf when invalid. */
double sr_judge_half_width(const sr_interval *interval);

/* Judges every variant of a report against its baseline (the entry flagged is_baseline, else the
 * first) from its per-round p50s: the seed's
 * speedup, the interval, the verdict, TOPS (where the workload is known). Where either side has a
 * slow mode (sr_judge_slow_mode, from the samples where the report has them), a verdict that the
 * ratio of the means (which count the slow calls; the verdict of its Welch interval,
 * sr_means_speedup_interval) does not tell too is ambiguous instead; so is one
 * whose speedup drifted across the threshold during the run (sr_drift_splits_verdict; the drift is
 * kept in the variant's drift, for the warning). only_missing: leaves
 * variants that already carry an interval as they are (a report read back). Returns how many
 * variants' seed speedup lies outside their interval. */
struct sr_report;
size_t sr_judge_report(struct sr_report *r, double threshold_percent, bool only_missing);

#endif
