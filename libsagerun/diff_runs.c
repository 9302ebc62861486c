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

sr_interval sr_between_runs_interval(const double *old_x, size_t n_old, const double *new_x,
                                     size_t n_new, double min_se2)
{
    sr_interval iv = {0};
    if (!n_old || !n_new || n_old + n_new < 3 || !all_finite(old_x, n_old) ||
        !all_finite(new_x, n_new))
        return iv;
    double mo, vo, mn, vn, se2, dof;
    mean_var(old_x, n_old, &mo, &vo);
    mean_var(new_x, n_new, &mn, &vn);
    if (n_old > 1 && n_new > 1) { /* Welch */
        double a = vo / (double)n_old, b = vn / (double)n_new;
        se2 = a + b;
        dof = se2 > 0 ? se2 * se2 / (a * a / (double)(n_old - 1) + b * b / (double)(n_new - 1))
                      : (double)(n_old + n_new - 2);
    } else { /* one run on one side: the other side's spread stands for both */
        double v = n_old > 1 ? vo : vn;
        se2 = v * (1.0 / (double)n_old + 1.0 / (double)n_new);
        dof = (double)((n_old > 1 ? n_old : n_new) - 1);
    }
    iv.dof = dof >= 1 ? (unsigned)floor(fmin(dof, 1e6)) : 1;
    se2 = fmax(se2, isfinite(min_se2) ? min_se2 : 0.0);
    double half = sr_t_quantile_975(iv.dof) * sqrt(se2), d = mo - mn; /* ln(old / new) */
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
