/* Between-run statistics of a diff (diff_runs.h). */
#include <math.h>

#include "diff_runs.h"

static void mean_var(const double *x, size_t n, double *mean, double *var)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : NAN;
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* Welch's t (or Student's with the other side's spread where one side has one run): the squared
 * standard error of mean(old) - mean(new) and its degrees of freedom. */
static void welch(const double *old_x, size_t n_old, const double *new_x, size_t n_new,
                  double *d, double *se2, double *dof)
{
    double mo, vo, mn, vn;
    mean_var(old_x, n_old, &mo, &vo);
    mean_var(new_x, n_new, &mn, &vn);
    *d = mo - mn;
    if (n_old > 1 && n_new > 1) {
        double a = vo / (double)n_old, b = vn / (double)n_new;
        *se2 = a + b;
        *dof = *se2 > 0 ? *se2 * *se2 / (a * a / (double)(n_old - 1) + b * b / (double)(n_new - 1))
                        : (double)(n_old + n_new - 2);
    } else {
        double v = n_old > 1 ? vo : vn;
        *se2 = v * (1.0 / (double)n_old + 1.0 / (double)n_new);
        *dof = (double)((n_old > 1 ? n_old : n_new) - 1);
    }
}

/* One side's inverse-variance mean with weights 1 / (v_i + tau2): *sum_w, and what the
 * DerSimonian-Laird estimate of tau2 needs at tau2 = 0 (Q's share, sum w, sum w^2). */
static double weighted_mean(const double *x, const double *v, size_t n, double tau2,
                            double *sum_w, double *q, double *sw2)
{
    double sw = 0, swx = 0;
    *sw2 = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / (v[i] + tau2);
        sw += w, swx += w * x[i], *sw2 += w * w;
    }
    double m = swx / sw;
    *q = 0;
    for (size_t i = 0; i < n; i++)
        *q += (x[i] - m) * (x[i] - m) / (v[i] + tau2);
    *sum_w = sw;
    return m;
}

/* Each run weighted by its own precision and a between-run variance tau2 estimated from both
 * sides (DerSimonian-Laird, pooled over the sides): a run that a loaded host left with a wide
 * interval counts for little, and where the runs disagree beyond their intervals tau2 makes the
 * weights equal, as Welch's. Each side's error is scaled by its runs' own scatter about its mean
 * where that is larger (Hartung-Knapp), with Welch's degrees of freedom. */
static void random_effects(const double *xo, const double *vo, size_t no, const double *xn,
                           const double *vn, size_t nn, double *d, double *se2, double *dof)
{
    double swo, swn, qo, qn, s2o, s2n;
    weighted_mean(xo, vo, no, 0, &swo, &qo, &s2o);
    weighted_mean(xn, vn, nn, 0, &swn, &qn, &s2n);
    double df = (double)(no - 1 + nn - 1), c = swo - s2o / swo + swn - s2n / swn;
    double tau2 = c > 0 ? fmax(0.0, (qo + qn - df) / c) : 0;
    double mo = weighted_mean(xo, vo, no, tau2, &swo, &qo, &s2o);
    double mn = weighted_mean(xn, vn, nn, tau2, &swn, &qn, &s2n);
    *d = mo - mn;
    /* each side's error scaled by its runs' scatter where that is larger (Hartung-Knapp), and
     * Welch's degrees of freedom over the two: with three runs a side tau2 is often estimated
     * short, and the pooled t read 1.1-1.3% false regressions under a 2% per-entry offset */
    double a = 1.0 / swo, b = 1.0 / swn;
    if (no > 1 && nn > 1) {
        a *= fmax(1.0, qo / (double)(no - 1));
        b *= fmax(1.0, qn / (double)(nn - 1));
        *dof = a + b > 0 ? (a + b) * (a + b) / (a * a / (double)(no - 1) + b * b / (double)(nn - 1))
                         : df;
    } else { /* one run on a side: the other side's scatter for both */
        double f = fmax(1.0, (qo + qn) / df);
        a *= f, b *= f;
        *dof = df;
    }
    *se2 = a + b;
}

static bool all_positive(const double *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        if (!(v[i] > 0) || !isfinite(v[i]))
            return false;
    return v != NULL;
}

sr_interval sr_between_runs_interval(const double *old_x, const double *old_v, size_t n_old,
                                     const double *new_x, const double *new_v, size_t n_new,
                                     double min_se2)
{
    sr_interval iv = {0};
    if (!n_old || !n_new || n_old + n_new < 3 || !all_finite(old_x, n_old) ||
        !all_finite(new_x, n_new))
        return iv;
    double d, se2, dof;
    if (all_positive(old_v, n_old) && all_positive(new_v, n_new))
        random_effects(old_x, old_v, n_old, new_x, new_v, n_new, &d, &se2, &dof);
    else
        welch(old_x, n_old, new_x, n_new, &d, &se2, &dof);
    iv.dof = dof >= 1 ? (unsigned)floor(fmin(dof, 1e6)) : 1;
    se2 = fmax(se2, isfinite(min_se2) ? min_se2 : 0.0);
    double half = sr_t_quantile_975(iv.dof) * sqrt(se2); /* d = ln(old / new) */
    iv.estimate = expm1(d) * 100.0;
    iv.low = expm1(d - half) * 100.0;
    iv.high = expm1(d + half) * 100.0;
    iv.valid = isfinite(iv.low) && isfinite(iv.high);
    return iv;
}

/* 1.96 sqrt(2) sd: the 95% half-width of the difference of two runs that each moved by sd */
static double between_half(double sd_percent)
{
    return 1.959964 * sqrt(2.0) * log1p(sd_percent / 100.0);
}

sr_interval sr_interval_add_between_runs(sr_interval iv, double between_run_sd_percent)
{
    if (!iv.valid || !(between_run_sd_percent > 0))
        return iv;
    double d = log1p(iv.estimate / 100.0);
    double lo = d - log1p(iv.low / 100.0), hi = log1p(iv.high / 100.0) - d, b = between_half(between_run_sd_percent);
    lo = sqrt(lo * lo + b * b);
    hi = sqrt(hi * hi + b * b);
    iv.low = expm1(d - lo) * 100.0;
    iv.high = expm1(d + hi) * 100.0;
    return iv;
}

double sr_between_runs_floor_percent(double between_run_sd_percent)
{
    return between_run_sd_percent > 0 ? expm1(between_half(between_run_sd_percent)) * 100.0 : NAN;
}
