/* Timing statistics of a comparison: pure functions, no I/O, no allocation beyond what is said.
 *
 * Percentiles follow NumPy's default ("linear": interpolation between the closest ranks), which is
 * what the seed report's numbers are consistent with. Speedups follow the seed's formula
 * (p50_baseline / p50_variant - 1) * 100, in percent; positive means the variant is faster. */
#ifndef SAGERUN_STATS_H
#define SAGERUN_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The seed report's "timing" object (seconds). */
typedef struct sr_summary {
    uint64_t count;
    double mean, p50, p90, p95, p99, min, max;
} sr_summary;

/* The q-th percentile (0 <= q <= 100) of n >= 1 values sorted ascending; NaN when n == 0. */
double sr_percentile_sorted(const double *sorted, size_t n, double q);

/* The median of three values. */
double sr_median3(double a, double b, double c);

/* Summary of n values (any order). scratch must hold n doubles (it receives the sorted values); it
 * may be NULL, then a copy is allocated (false on allocation failure). n == 0 gives count 0 and NaN
 * everywhere else. */
bool sr_summarize(const double *values, size_t n, double *scratch, sr_summary *out);

/* The median of the finite values among n (NaN when none, or on allocation failure). scratch holds
 * n doubles (it receives the sorted finite values); NULL: a copy is allocated. */
double sr_median_finite(const double *v, size_t n, double *scratch);

/* How many of n values (NaNs ignored) lie beyond 10 robust standard deviations (1.4826 times the
 * median absolute deviation) of their median; *robust_cv (may be NULL): that deviation over the
 * median, NaN where the median is not positive. 0 on allocation failure. */
size_t sr_outliers(const double *values, size_t n, double *robust_cv);

/* How many of n values lie above their median by more than 10 robust standard deviations and by
 * more than 10% of it: slow calls that matter. Busy or precise timings have a tiny deviation, so a
 * jitter of 1% is an outlier to sr_outliers; it is not a slow call. */
size_t sr_slow_outliers(const double *values, size_t n);

/* (p50_baseline / p50_variant - 1) * 100, exactly as the seed computes it. */
double sr_speedup_percent(double p50_baseline, double p50_variant);

/* The 0.975 quantile of Student's t distribution with dof degrees of freedom (dof >= 1): the
 * multiplier of a two-sided 95% interval; and the 0.9995 quantile, of a two-sided test at
 * p < 0.001. */
double sr_t_quantile_975(unsigned dof);
double sr_t_quantile_9995(unsigned dof);

/* A 95% confidence interval of the speedup, in percent (same sign convention as
 * sr_speedup_percent). valid is false when fewer than two rounds or a non-positive time. */
typedef struct sr_interval {
    bool valid;
    double estimate; /* exp(trimmed mean log-ratio) - 1, in percent: the paired speedup */
    double low, high;
    unsigned dof;
    unsigned instances; /* per side the rounds were spread over (compare --instances); 0/1: one */
    double instance_sd; /* percent: the sd of one instance's offset (the mean over both sides),
                         * whose share is in the interval; an upper bound, the noise's share not
                         * taken off; NaN: one instance, or too few rounds */
} sr_interval;

/* Interval from per-round paired times: baseline[r] and variant[r] are the two variants' p50 in
 * round r (the same round, so drift within a round hits both alike). */
sr_interval sr_paired_speedup_interval(const double *baseline, const double *variant,
                                       size_t rounds);

/* Instances per side at most (compare --instances). */
#define SR_INSTANCES_MAX 16u

/* The instance (0 .. instances-1) of the baseline (variant false) or of a variant that takes
 * round r when each side has `instances` of them: a crossed design, every pair meets once in
 * instances^2 rounds. */
size_t sr_round_instance(bool variant, size_t round, size_t instances);

/* The same interval where each side's rounds were spread over `instances` instances
 * (sr_round_instance): two instances of one variant differ by a fixed offset for the whole
 * process (0.6% seen on us kernels), which the rounds of one instance cannot show. Each side's
 * instance means of d_r give the variance of those offsets beyond the noise; their share
 * (variance / instances per side) is added to the squared standard error, the degrees of freedom
 * Welch-Satterthwaite's. From two rounds per instance; with fewer, or one instance, the plain
 * interval. Where every round gives one ratio, as wide as the step of the timer that the round
 * times show, up to 0 (5.0 against 5.1 us every round gave -1.96% [-1.96, -1.96], slower). */
sr_interval sr_paired_speedup_interval_instances(const double *baseline, const double *variant,
                                                 size_t rounds, size_t instances);

/* Interval from two runs' per-round times that share no rounds (two reports: diff), over all
 * rounds of each: Yuen's test on the logs (20%-trimmed means from 10 rounds, Welch's degrees of
 * freedom). Same sign convention; valid false below two rounds or with a non-positive time. */
sr_interval sr_unpaired_speedup_interval(const double *baseline, size_t n_baseline,
                                         const double *variant, size_t n_variant);

/* Fisher's exact test, one-sided: the chance that a of n_a draws or more are marked when a + b of
 * the n_a + n_b are (a side's slow samples against the other's). NaN for counts beyond n. */
double sr_fisher_greater(size_t a, size_t n_a, size_t b, size_t n_b);

/* The speedup by the ratio of the two sides' mean times (slow calls counted), with Welch's
 * interval on the log of the ratio (delta method: s^2 / (n mean^2) per side, Welch's dof). Same
 * sign convention; valid false below two samples a side or with a non-positive time. */
sr_interval sr_means_speedup_interval(const double *baseline, size_t n_baseline,
                                      const double *variant, size_t n_variant);

/* Drift of a paired ratio during a run: judge.h's sr_judge_drift says when it is found. */
typedef struct sr_drift {
    bool found;
    double first_percent, last_percent; /* the first and last third's speedup; NaN: too few rounds */
    double rank_correlation;            /* Spearman's rho of the rounds' log-ratios with time */
} sr_drift;

typedef enum sr_verdict {
    SR_VERDICT_NONE = 0, /* the baseline itself, or nothing measured */
    SR_VERDICT_FASTER = 1,
    SR_VERDICT_SLOWER = 2,
    SR_VERDICT_SAME = 3,
    SR_VERDICT_AMBIGUOUS = 4,
    SR_VERDICT_BELOW_THRESHOLD = 5 /* differs from 0, but within the threshold */
} sr_verdict;

/* The verdict of an interval is judge.h's sr_judge_verdict (one place for it). */
/* "faster", "slower", "same", "ambiguous", "below-threshold"; NULL for SR_VERDICT_NONE or an
 * unknown value. */
const char *sr_verdict_name(int verdict);
/* The inverse of sr_verdict_name; SR_VERDICT_NONE for an unknown name. */
sr_verdict sr_verdict_parse(const char *name);

#endif
