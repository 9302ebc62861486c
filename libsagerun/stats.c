/* Timing statistics: percentiles, summaries, the paired speedup interval and the verdict. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double sr_percentile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0)
        return sorted[0];
    if (q >= 100)
        return sorted[n - 1];
    /* NumPy "linear" (method 7 of Hyndman & Fan): the virtual index (n-1)*q/100, interpolated
     * between its floor and ceiling neighbours. */
    double h = (double)(n - 1) * (q / 100.0);
    size_t lo = (size_t)floor(h);
    double frac = h - (double)lo;
    if (lo + 1 >= n)
        return sorted[n - 1];
    /* NumPy's _lerp: a + (b - a) * t, switching to b - (b - a) * (1 - t) for t >= 0.5 so that the
     * result is exact at both ends; this keeps our last bits equal to NumPy's. */
    double a = sorted[lo], b = sorted[lo + 1], diff = b - a;
    return frac >= 0.5 ? b - diff * (1.0 - frac) : a + diff * frac;
}

double sr_median3(double a, double b, double c)
{
    return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

bool sr_summarize(const double *values, size_t n, double *scratch, sr_summary *out)
{
    memset(out, 0, sizeof(*out));
    out->count = n;
    if (n == 0) {
        out->mean = out->p50 = out->p90 = out->p95 = out->p99 = out->min = out->max = NAN;
        return true;
    }
    double *sorted = scratch ? scratch : malloc(n * sizeof(double));
    if (!sorted)
        return false;
    memcpy(sorted, values, n * sizeof(double));
    qsort(sorted, n, sizeof(double), compare_doubles);

    /* Summed in the original order. NumPy's mean sums pairwise in blocks of 8; the two agree to an
     * ulp or two, far below the resolution of a timer. */
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    out->mean = sum / (double)n;
    out->p50 = sr_percentile_sorted(sorted, n, 50);
    out->p90 = sr_percentile_sorted(sorted, n, 90);
    out->p95 = sr_percentile_sorted(sorted, n, 95);
    out->p99 = sr_percentile_sorted(sorted, n, 99);
    out->min = sorted[0];
    out->max = sorted[n - 1];
    if (!scratch)
        free(sorted);
    return true;
}

double sr_median_finite(const double *v, size_t n, double *scratch)
{
    double *tmp = scratch ? scratch : malloc((n ? n : 1) * sizeof(double));
    if (!tmp)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            tmp[k++] = v[i];
    qsort(tmp, k, sizeof(double), compare_doubles);
    double median = sr_percentile_sorted(tmp, k, 50);
    if (!scratch)
        free(tmp);
    return median;
}

/* Values beyond 10 robust standard deviations of the median, and beyond min_rel of it; slow_only:
 * above it only. */
static size_t outliers_beyond(const double *values, size_t n, double min_rel, bool slow_only,
                              double *robust_cv)
{
    size_t count = 0;
    double *dev = malloc((n ? n : 1) * 2 * sizeof(double)), *tmp = dev ? dev + (n ? n : 1) : NULL;
    if (robust_cv)
        *robust_cv = NAN;
    double med = dev ? sr_median_finite(values, n, tmp) : NAN;
    if (!(med > 0)) {
        free(dev);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        dev[i] = isfinite(values[i]) ? fabs(values[i] - med) : NAN;
    double sd = 1.4826 * sr_median_finite(dev, n, tmp);
    /* half the values or more equal (a coarse timer, a steady kernel): no spread to measure
     * against, and only the relative bound, where there is one, tells (every fifth call 10x
     * slower beside sixteen equal ones read no slow mode) */
    for (size_t i = 0; i < n; i++)
        count += (sd > 0 ? dev[i] > 10 * sd : min_rel > 0) && dev[i] > min_rel * med &&
                 (!slow_only || values[i] > med);
    if (robust_cv)
        *robust_cv = sd / med;
    free(dev);
    return count;
}

size_t sr_outliers(const double *values, size_t n, double *robust_cv)
{
    return outliers_beyond(values, n, 0, false, robust_cv);
}

size_t sr_slow_outliers(const double *values, size_t n)
{
    return outliers_beyond(values, n, 0.10, true, NULL);
}

double sr_speedup_percent(double p50_baseline, double p50_variant)
{
    return (p50_baseline / p50_variant - 1.0) * 100.0;
}

/* A quantile of Student's t: exact values (to 9 decimals) up to 30 dof, where the normal
 * approximation is poor; beyond, the Cornish-Fisher expansion of t in powers of 1/dof around the
 * normal quantile z (Abramowitz & Stegun 26.7.5), within 1e-6 of it from 30 dof at 0.975 and
 * within 4e-6 from 31 dof at 0.9995. */
static double t_quantile(unsigned dof, const double *table, size_t n_table, double z)
{
    if (dof == 0)
        return NAN;
    if (dof < n_table)
        return table[dof];
    double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
    double v = (double)dof;
    double g1 = (z3 + z) / 4.0;
    double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96.0;
    double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384.0;
    double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160.0;
    return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

double sr_t_quantile_975(unsigned dof)
{
    static const double table[] = {
        NAN,         12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
        2.446911851, 2.364624252,  2.306004135, 2.262157163, 2.228138852, 2.200985160,
        2.178812830, 2.160368656,  2.144786688, 2.131449546, 2.119905299, 2.109815578,
        2.100922040, 2.093024054,  2.085963447, 2.079613845, 2.073873068, 2.068657610,
        2.063898562, 2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642,
        2.042272456,
    };
    return t_quantile(dof, table, sizeof table / sizeof table[0], 1.959963984540054);
}

double sr_t_quantile_9995(unsigned dof)
{
    static const double table[] = {
        NAN,         636.619248769, 31.599054576, 12.923978637, 8.610301581, 6.868826626,
        5.958816179, 5.407882521,   5.041305433,  4.780912586,  4.586893859, 4.436979338,
        4.317791284, 4.220831728,   4.140454113,  4.072765196,  4.014996327, 3.965126272,
        3.921645825, 3.883405853,   3.849516275,  3.819277164,  3.792130672, 3.767626804,
        3.745398619, 3.725143950,   3.706611743,  3.689591713,  3.673906401, 3.659405019,
        3.645958635,
    };
    return t_quantile(dof, table, sizeof table / sizeof table[0], 3.290526731491926);
}

/* The 20%-trimmed mean of n sorted values, and their winsorized standard deviation. */
static void trimmed_stats(const double *d, size_t n, size_t g, double *mean, double *wsd)
{
    double sum = 0, wsum = 0, ss = 0;
    for (size_t i = g; i < n - g; i++)
        sum += d[i];
    *mean = sum / (double)(n - 2 * g);
    for (size_t i = 0; i < n; i++)
        wsum += d[i < g ? g : i >= n - g ? n - g - 1 : i];
    double wmean = wsum / (double)n;
    for (size_t i = 0; i < n; i++) {
        double w = d[i < g ? g : i >= n - g ? n - g - 1 : i] - wmean;
        ss += w * w;
    }
    *wsd = sqrt(ss / (double)(n - 1));
}

/* The location and scale of n sorted values: the 20%-trimmed mean and winsorized SD where trim
 * says so (g values cut at each end), else the plain mean and SD. Where the middle values are all
 * equal but the others are not, the winsorized SD is 0, and a "95% interval" of width 0 came of
 * rounds at 2x either way (ratios 1.02 x8, 0.5, 2.0: +2.00% [+2.00, +2.00], faster): the scale is
 * then the plain SD, of all values (*g_scale 0: the interval is Student's on it), the location
 * still the trimmed mean. *g_scale: the values cut for the scale. */
static void location_scale(const double *d, size_t n, bool trim, size_t *g_scale, double *mean,
                           double *sd)
{
    size_t g = trim ? (size_t)floor(0.2 * (double)n) : 0;
    trimmed_stats(d, n, g, mean, sd);
    if (g > 0 && d[g] == d[n - 1 - g] && d[0] != d[n - 1]) { /* the winsorized values all equal */
        double plain_mean;
        g = 0;
        trimmed_stats(d, n, 0, &plain_mean, sd);
    }
    *g_scale = g;
}

/* The instance of a side that took round r (stats.h): the baseline's cycles with the round, a
 * variant's moves one further every `instances` rounds, so that over instances^2 rounds every
 * pair of a baseline instance and a variant instance meets once (a crossed design: each side's
 * instance offsets are seen apart from the other's). */
size_t sr_round_instance(bool variant, size_t round, size_t instances)
{
    if (instances <= 1)
        return 0;
    return variant ? (round + round / instances) % instances : round % instances;
}

/* The k-th smallest of n values (k < n), reordering them so that none before k is larger and
 * none after it smaller (Hoare's selection). */
static double select_kth(double *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            break; /* between j and i: equal to the pivot, in place */
    }
    return v[k];
}

/* The median of n >= 1 values (the mean of the middle two for even n), reordering them: the
 * stopping rule asks for it at every period, where sorting each instance's rounds was most of a
 * comparison's time. */
static double median_in_place(double *v, size_t n)
{
    double upper = select_kth(v, n, n / 2);
    if (n % 2)
        return upper;
    double lower = v[0]; /* the largest of the values below n/2, which selection left there */
    for (size_t i = 1; i < n / 2; i++)
        lower = fmax(lower, v[i]);
    return (lower + upper) / 2;
}

/* The variance of one side's instance locations of d: the sample variance of its instances'
 * medians of d, each over the rounds it ran (sr_round_instance; medians, as a spike of 30% in the
 * 7 rounds of one instance of a 100 ms run moved their mean by 4%). The noise's share of it is not
 * taken off: subtracted (and cut at 0), the interval of an A/A with offsets of sd 0.3% covered 0
 * in 93% of 300 (test_engine_mc); kept, 97% with 6 instances, and where there are no offsets it
 * costs the 100 ms MDE little (1.10 -> 1.15%). */
static double instance_variance(const double *d, size_t rounds, bool variant, size_t instances)
{
    double *group = malloc(rounds * sizeof(double)), loc[SR_INSTANCES_MAX], mean = 0, ss = 0;
    size_t start[SR_INSTANCES_MAX + 1] = {0}, fill[SR_INSTANCES_MAX];
    if (!group)
        return INFINITY;
    for (size_t r = 0; r < rounds; r++) /* counts, then each instance's rounds in one block */
        start[sr_round_instance(variant, r, instances) + 1]++;
    for (size_t k = 0; k < instances; k++)
        start[k + 1] += start[k];
    for (size_t k = 0; k < instances; k++)
        fill[k] = start[k];
    for (size_t r = 0; r < rounds; r++)
        group[fill[sr_round_instance(variant, r, instances)]++] = d[r];
    for (size_t k = 0; k < instances; k++) {
        loc[k] = median_in_place(group + start[k], start[k + 1] - start[k]);
        mean += loc[k] / (double)instances;
    }
    free(group);
    for (size_t k = 0; k < instances; k++)
        ss += (loc[k] - mean) * (loc[k] - mean);
    return ss / (double)(instances - 1);
}

/* The instances' share of the interval (compare --instances): the estimate's variance is the
 * within-round error se2 (dof) plus each side's instance variance over the instances it ran on;
 * the degrees of freedom Welch-Satterthwaite's, each side's share with instances - 1. Where the
 * offsets are nothing beside the noise this is the plain interval; where they are large, the
 * few instances are what the interval rests on, and it widens (Student's t at few dof). */
static void add_instance_share(const double *d, size_t rounds, size_t instances, double *se2,
                               unsigned *dof, double *instance_sd)
{
    double vb = instance_variance(d, rounds, false, instances) / (double)instances;
    double vx = instance_variance(d, rounds, true, instances) / (double)instances;
    double total = *se2 + vb + vx, k1 = (double)(instances - 1);
    double denom = *se2 * *se2 / (double)*dof + vb * vb / k1 + vx * vx / k1;
    *instance_sd = sqrt((vb + vx) * (double)instances / 2.0);
    if (vb + vx > 0 && denom > 0)
        *dof = (unsigned)fmax(1.0, floor(total * total / denom));
    *se2 = total;
}

/* The timer's step as the round times of both sides show it, relative to the slower side's median
 * round: the smallest gap between two of them, where every time is a whole multiple of it (a
 * quantised timer); 0 where no two times differ or they lie on no such grid (a run's copy scaled
 * by 1.05, whose rounds tie at one ratio too, is exact). Where every round ties at one ratio (5.0
 * against 5.1 us every round: -1.96% [-1.96, -1.96], "slower") the noise lies below the step, and
 * the interval is not narrower than it (up to 0). */
static double relative_quantum(const double *baseline, const double *variant, size_t rounds)
{
    double *t = malloc(2 * rounds * sizeof(double)), step = INFINITY;
    if (!t)
        return 0;
    memcpy(t, baseline, rounds * sizeof(double));
    memcpy(t + rounds, variant, rounds * sizeof(double));
    qsort(t, 2 * rounds, sizeof(double), compare_doubles);
    for (size_t i = 1; i < 2 * rounds; i++)
        if (t[i] > t[i - 1])
            step = fmin(step, t[i] - t[i - 1]);
    for (size_t i = 0; i < 2 * rounds && isfinite(step); i++)
        if (fabs(t[i] / step - nearbyint(t[i] / step)) > 1e-3)
            step = INFINITY; /* off the grid: not a timer's step */
    double median = fmax(sr_median_finite(baseline, rounds, t),
                         sr_median_finite(variant, rounds, t));
    free(t);
    return isfinite(step) && median > 0 ? log1p(step / median) : 0;
}

sr_interval sr_paired_speedup_interval(const double *baseline, const double *variant,
                                       size_t rounds)
{
    return sr_paired_speedup_interval_instances(baseline, variant, rounds, 1);
}

/* The log-ratios d_r = ln(baseline_r / variant_r) of the rounds, in their order; false where a
 * time is not positive and finite. */
static bool log_ratios(const double *baseline, const double *variant, size_t rounds, double *d)
{
    for (size_t r = 0; r < rounds; r++) {
        if (!(baseline[r] > 0) || !(variant[r] > 0) || !isfinite(baseline[r]) ||
            !isfinite(variant[r]))
            return false;
        d[r] = log(baseline[r] / variant[r]);
    }
    return true;
}

sr_interval sr_paired_speedup_interval_instances(const double *baseline, const double *variant,
                                                 size_t rounds, size_t instances)
{
    /* Each round r gives one paired observation d_r = ln(baseline_r / variant_r): both variants
     * ran in the same round, so drift between rounds (clocks, temperature) cancels in the ratio,
     * and the log makes "2x faster" and "2x slower" symmetric. The location of d is its 20%-trimmed
     * mean (g = floor(0.2 R) rounds cut at each end: a round hit by a spike does not move it), with
     * the Tukey-McLaughlin interval: mean +- t(0.975, R-2g-1) * s_w / ((1 - 2g/R) sqrt(R)), s_w the
     * winsorized standard deviation. Below 10 rounds nothing is trimmed (it would cost too many
     * degrees of freedom) and this is Student's t on the plain mean. With several instances per
     * side (two rounds each at least) their offsets' share is added (add_instance_share); rounds
     * that all tie are as wide as the timer's step (relative_quantum). In percent:
     * (exp(bound) - 1) * 100, the seed's sign convention. */
    sr_interval iv = {.instances = instances > 1 ? (unsigned)instances : 1,
                      .instance_sd = NAN};
    if (rounds < 2 || instances > SR_INSTANCES_MAX)
        return iv;
    double *d = malloc(2 * rounds * sizeof(double));
    if (!d || !log_ratios(baseline, variant, rounds, d)) {
        free(d);
        return iv;
    }
    double *sorted = d + rounds;
    memcpy(sorted, d, rounds * sizeof(double));
    qsort(sorted, rounds, sizeof(double), compare_doubles);
    size_t g;
    double mean, wsd;
    location_scale(sorted, rounds, rounds >= 10, &g, &mean, &wsd);
    iv.dof = (unsigned)(rounds - 2 * g - 1);
    double kept = 1.0 - 2.0 * (double)g / (double)rounds;
    double se = wsd / (kept * sqrt((double)rounds)), se2 = se * se;
    if (instances > 1 && rounds >= 2 * instances)
        add_instance_share(d, rounds, instances, &se2, &iv.dof, &iv.instance_sd);
    double half = sr_t_quantile_975(iv.dof) * sqrt(se2);
    if (sorted[0] == sorted[rounds - 1]) /* every round tied at one ratio: the timer's steps */
        half = fmax(half, fmin(fabs(mean), relative_quantum(baseline, variant, rounds)));
    free(d);
    iv.instance_sd *= 100.0;
    iv.estimate = expm1(mean) * 100.0;
    iv.low = expm1(mean - half) * 100.0;
    iv.high = expm1(mean + half) * 100.0;
    iv.valid = true;
    return iv;
}

/* The 95% interval of a log-ratio `mean` whose squared standard error is the sum of two groups'
 * (se2_a of h_a values kept, se2_b of h_b), Welch's degrees of freedom (rounded down), in percent:
 * (exp(bound) - 1) * 100. */
static sr_interval welch_interval(double mean, double se2_a, size_t h_a, double se2_b, size_t h_b)
{
    sr_interval iv = {.valid = true, .instances = 1, .instance_sd = NAN};
    double se2 = se2_a + se2_b;
    double dof = se2 > 0 ? se2 * se2 / (se2_a * se2_a / (double)(h_a - 1) +
                                        se2_b * se2_b / (double)(h_b - 1))
                         : (double)(h_a + h_b - 2);
    iv.dof = dof >= 1 ? (unsigned)floor(fmin(dof, 1e6)) : 1;
    double half = sr_t_quantile_975(iv.dof) * sqrt(se2);
    iv.estimate = expm1(mean) * 100.0;
    iv.low = expm1(mean - half) * 100.0;
    iv.high = expm1(mean + half) * 100.0;
    return iv;
}

/* One group of Yuen's test: the sorted logs of n positive times, their 20%-trimmed mean (where
 * trim says: both groups alike, or the two means estimate different things) and its squared
 * standard error (n-1) s_w^2 / (h (h-1)), h the values kept. false where a time is not positive
 * and finite, or fewer than two are kept. */
static bool yuen_group(const double *t, size_t n, bool trim, double *mean, double *se2,
                       size_t *kept)
{
    double *x = n >= 2 ? malloc(n * sizeof(double)) : NULL;
    if (!x)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] > 0) || !isfinite(t[i])) {
            free(x);
            return false;
        }
        x[i] = log(t[i]);
    }
    qsort(x, n, sizeof(double), compare_doubles);
    size_t g;
    double wsd;
    location_scale(x, n, trim, &g, mean, &wsd);
    size_t h = n - 2 * g;
    free(x);
    *se2 = (double)(n - 1) * wsd * wsd / ((double)h * (double)(h - 1));
    *kept = h;
    return h >= 2;
}

sr_interval sr_unpaired_speedup_interval(const double *baseline, size_t n_baseline,
                                         const double *variant, size_t n_variant)
{
    /* Yuen's two-sample test on the logs: the difference of the 20%-trimmed means, its standard
     * error the root of the two groups' squared ones, Welch's degrees of freedom (rounded down).
     * In percent as the paired interval: (exp(bound) - 1) * 100. */
    sr_interval iv = {0};
    double mb, mv, db, dv;
    size_t hb, hv;
    /* trimmed from 10 rounds on, as the paired interval, but both or neither: a run of 9 rounds
     * (a plain mean) against one of 10 (a trimmed mean) of one skewed distribution read +2.14% */
    bool trim = n_baseline >= 10 || n_variant >= 10;
    if (!yuen_group(baseline, n_baseline, trim, &mb, &db, &hb) ||
        !yuen_group(variant, n_variant, trim, &mv, &dv, &hv))
        return iv;
    return welch_interval(mb - mv, db, hb, dv, hv);
}

double sr_fisher_greater(size_t a, size_t n_a, size_t b, size_t n_b)
{
    /* P(X >= a), X hypergeometric: n_a drawn from n_a + n_b of which a + b are marked */
    size_t marked = a + b, total = n_a + n_b, top = marked < n_a ? marked : n_a;
    if (a > n_a || b > n_b)
        return NAN;
    double p = 0, denom = lgamma((double)total + 1) - lgamma((double)n_a + 1) -
                          lgamma((double)n_b + 1);
    for (size_t x = a; x <= top; x++) {
        if (marked - x > n_b)
            continue;
        size_t unmarked = total - marked;
        double ways = lgamma((double)marked + 1) - lgamma((double)x + 1) -
                      lgamma((double)(marked - x) + 1) + lgamma((double)unmarked + 1) -
                      lgamma((double)(n_a - x) + 1) - lgamma((double)(unmarked - n_a + x) + 1);
        p += exp(ways - denom);
    }
    return fmin(1.0, p);
}

/* The mean of n values and their variance's share in the squared standard error of its log,
 * s^2 / (n mean^2); false where a value is not positive and finite or n < 2. */
static bool log_mean_se2(const double *t, size_t n, double *mean, double *se2)
{
    double sum = 0, ss = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] > 0) || !isfinite(t[i]))
            return false;
        sum += t[i];
    }
    *mean = n >= 2 ? sum / (double)n : NAN;
    for (size_t i = 0; i < n; i++)
        ss += (t[i] - *mean) * (t[i] - *mean);
    *se2 = ss / (double)(n - 1) / ((double)n * *mean * *mean);
    return n >= 2;
}

sr_interval sr_means_speedup_interval(const double *baseline, size_t n_baseline,
                                      const double *variant, size_t n_variant)
{
    sr_interval iv = {.instances = 1, .instance_sd = NAN};
    double mb, mx, vb, vx;
    if (!baseline || !variant || !log_mean_se2(baseline, n_baseline, &mb, &vb) ||
        !log_mean_se2(variant, n_variant, &mx, &vx))
        return iv;
    return welch_interval(log(mb / mx), vb, n_baseline, vx, n_variant);
}

static const char *const verdict_names[] = {
    [SR_VERDICT_FASTER] = "faster",
    [SR_VERDICT_SLOWER] = "slower",
    [SR_VERDICT_SAME] = "same",
    [SR_VERDICT_AMBIGUOUS] = "ambiguous",
    [SR_VERDICT_BELOW_THRESHOLD] = "below-threshold",
};

const char *sr_verdict_name(int verdict)
{
    if (verdict <= SR_VERDICT_NONE || verdict > SR_VERDICT_BELOW_THRESHOLD)
        return NULL;
    return verdict_names[verdict];
}

sr_verdict sr_verdict_parse(const char *name)
{
    for (int v = SR_VERDICT_FASTER; name && v <= SR_VERDICT_BELOW_THRESHOLD; v++)
        if (strcmp(name, verdict_names[v]) == 0)
            return (sr_verdict)v;
    return SR_VERDICT_NONE;
}
