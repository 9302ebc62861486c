/* Scales of the plots: nice ranges and ticks, tick labels, time units, colors (plot.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"

/* Past these magnitudes a scale's step leaves the normal doubles (0 or inf, then NaN ticks):
 * values are cut to SCALE_MAX, and a range narrower than SCALE_MIN is one value. */
#define SCALE_MAX 1e300
#define SCALE_MIN 1e-280

sr_scale sr_scale_nice(double lo, double hi, int ticks, double p0, double p1)
{
    if (!isfinite(lo) || !isfinite(hi) || lo > hi) {
        lo = 0.0;
        hi = 1.0;
    }
    lo = fmin(fmax(lo, -SCALE_MAX), SCALE_MAX);
    hi = fmin(fmax(hi, -SCALE_MAX), SCALE_MAX);
    double m = fmax(fabs(hi), fabs(lo));
    if (hi - lo <= fmax(m * 1e-9, SCALE_MIN)) { /* one value: a small range around it */
        double pad = m * 0.01 > SCALE_MIN ? m * 0.01 : 1.0; /* a subnormal one is 0 */
        lo -= pad;
        hi += pad;
    }
    double raw = (hi - lo) / (ticks > 1 ? ticks : 1), mag = pow(10.0, floor(log10(raw)));
    double norm = raw / mag;
    double step = (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0) * mag;
    return (sr_scale){floor(lo / step + 1e-9) * step, ceil(hi / step - 1e-9) * step, step, p0, p1};
}

double sr_scale_px(const sr_scale *s, double v)
{
    /* values past the axis (beyond SCALE_MAX, which cut the range) stay on it, not off the panel */
    if (v < s->lo)
        v = s->lo;
    else if (v > s->hi)
        v = s->hi;
    return s->p0 + (v - s->lo) / (s->hi - s->lo) * (s->p1 - s->p0);
}

size_t sr_scale_ticks(const sr_scale *s)
{
    double n = floor((s->hi - s->lo) / s->step + 1e-6) + 1;
    return !(n >= 1) ? 1 : n > SR_SCALE_MAX_TICKS ? SR_SCALE_MAX_TICKS : (size_t)n;
}

double sr_scale_tick(const sr_scale *s, size_t k)
{
    double v = s->lo + s->step * (double)k;
    return fabs(v) < s->step * 1e-6 ? 0.0 : v;
}

void sr_scale_label(const sr_scale *s, double v, double mult, bool signed_, char *buf, size_t len)
{
    int d = (int)-floor(log10(s->step * mult) + 1e-9);
    if (d < 0)
        d = 0;
    if (v == 0.0)
        snprintf(buf, len, "0");
    else if (fabs(v * mult) >= 1e5) /* a far-off value: short labels */
        snprintf(buf, len, signed_ ? "%+.2g" : "%.2g", v * mult);
    else
        snprintf(buf, len, signed_ ? "%+.*f" : "%.*f", d, v * mult);
}

void sr_speedup_range(const double *estimate, const double *low, const double *high, size_t n,
                      double threshold, double *lo, double *hi)
{
    *lo = -threshold * 1.5;
    *hi = threshold * 1.5;
    for (size_t i = 0; i < n; i++)
        if (isfinite(estimate[i])) {
            *lo = fmin(*lo, estimate[i]);
            *hi = fmax(*hi, estimate[i]);
        }
    double span = *hi - *lo, min = *lo - span, max = *hi + span;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(low[i]))
            *lo = fmin(*lo, fmax(low[i], min));
        if (isfinite(high[i]))
            *hi = fmax(*hi, fmin(high[i], max));
    }
    double pad = (*hi - *lo) * 0.06;
    *lo -= pad;
    *hi += pad;
}

json_t *sr_scale_json(const sr_scale *s, double mult, const char *unit)
{
    return json_pack("{s:f, s:f, s:s}", "lo", s->lo * mult, "hi", s->hi * mult, "unit", unit);
}

sr_time_unit sr_time_unit_for(double max_s)
{
    if (max_s >= 1.0)
        return (sr_time_unit){1.0, "s"};
    if (max_s >= 1e-3)
        return (sr_time_unit){1e3, "ms"};
    return (sr_time_unit){1e6, "\xc2\xb5s"};
}

const char *sr_plot_color(size_t i)
{
    static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                          "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                          "#7f7f7f", "#bcbd22"};
    return palette[i % (sizeof palette / sizeof palette[0])];
}

const char *sr_plot_verdict_color(const char *verdict)
{
    if (verdict && strcmp(verdict, "faster") == 0)
        return "#1a7f37";
    if (verdict && strcmp(verdict, "slower") == 0)
        return "#c62828";
    if (verdict && strcmp(verdict, "ambiguous") == 0)
        return "#b26a00";
    return "#444444";
}
