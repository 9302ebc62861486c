/* sagerun plot: one SVG picture of a comparison report (ours or the seed's): per variant every
 * timed call by round (drift shows), the distribution of the calls, and the speedup against the
 * baseline with its 95% interval and the noise band. A report in the seed's format has per-round
 * summaries only: those are drawn instead of the calls. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sweep.h"
#include "judge.h"
#include "report.h"
#include "stats.h"

static void plot_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun plot REPORT.json [-o FILE.svg] [--title TEXT]\n\n"
            "Draws a comparison report (ours or one in the seed's format) as an SVG picture:\n"
            "  - every timed call of every variant in order, round by round, with each round's\n"
            "    median as a bar (drift of clocks or temperature shows as a slope);\n"
            "  - the distribution of each variant's calls (quartile box, min-max whiskers);\n"
            "  - the speedup of each variant against the baseline with its 95%% interval, inside\n"
            "    the noise band of the verdict.\n"
            "Reports written by 'sagerun compare' carry every call (samples_s); a report in the\n"
            "seed's format has per-round summaries only: then each round's p50 and min-max are\n"
            "drawn, and the interval is derived from the per-round p50s (1%% threshold).\n\n"
            "  -o, --output FILE   the SVG file (default: REPORT with .svg for .json; - = stdout)\n"
            "  --title TEXT        the picture's title (default: the report's file name)\n\n"
            "exit status: 0 success, 1 unreadable or malformed report or unwritable output,\n"
            "2 usage\n");
}

/* ---- geometry --------------------------------------------------------------------------------- */

#define PLOT_W 1000
#define PLOT_H 790
#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"

/* Tableau 10: distinct for up to ten variants, then repeated. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

static const char *color_of(size_t i)
{
    return palette[i % SR_ARRAY_LEN(palette)];
}

/* A linear axis: values lo..hi onto pixels p0..p1, ticks every step. */
typedef struct axis {
    double lo, hi, step;
    double p0, p1;
} axis;

static double to_px(const axis *a, double v)
{
    return a->p0 + (v - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

/* Round lo..hi out to a step of 1, 2 or 5 times a power of ten giving about `ticks` ticks. */
static void nice_axis(double lo, double hi, int ticks, double p0, double p1, axis *a)
{
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0.0;
        hi = 1.0;
    }
    if (hi - lo <= fabs(hi) * 1e-9) {
        double pad = fabs(hi) > 0 ? fabs(hi) * 0.01 : 1.0;
        lo -= pad;
        hi += pad;
    }
    double raw = (hi - lo) / ticks, mag = pow(10.0, floor(log10(raw))), norm = raw / mag;
    double step = (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0) * mag;
    a->lo = floor(lo / step) * step;
    a->hi = ceil(hi / step) * step;
    a->step = step;
    a->p0 = p0;
    a->p1 = p1;
}

/* Decimals that tick labels of this step need. */
static int tick_decimals(double step)
{
    int d = (int)-floor(log10(step) + 1e-9);
    return d > 0 ? d : 0;
}

/* Seconds shown in the unit that suits the largest value. */
typedef struct time_unit {
    double scale;
    const char *name;
} time_unit;

static time_unit unit_for(double max_s)
{
    if (max_s >= 1.0)
        return (time_unit){1.0, "s"};
    if (max_s >= 1e-3)
        return (time_unit){1e3, "ms"};
    return (time_unit){1e6, "\xc2\xb5s"};
}

/* ---- SVG output ------------------------------------------------------------------------------- */

static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            /* Control characters are not allowed in XML 1.0. */
            if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
                fputc(*s, f);
        }
    }
}

static void text_at(FILE *f, double x, double y, const char *anchor, const char *style,
                    const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s>", x, y, anchor,
            style ? " " : "", style ? style : "");
    xml_text(f, s);
    fputs("</text>\n", f);
}

static void line(FILE *f, double x1, double y1, double x2, double y2, const char *style)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x1, y1, x2, y2,
            style);
}

/* A panel: frame, title, horizontal grid with the labels of a y axis in `unit`. */
static void y_grid(FILE *f, const axis *y, double x0, double x1, time_unit u, bool labels)
{
    int d = tick_decimals(y->step * u.scale);
    for (double v = y->lo; v <= y->hi + y->step * 1e-6; v += y->step) {
        double py = to_px(y, v);
        line(f, x0, py, x1, py, "stroke=\"#e5e5e5\" stroke-width=\"1\"");
        if (labels) {
            char buf[32];
            snprintf(buf, sizeof(buf), "%.*f", d, v * u.scale);
            text_at(f, x0 - 6, py + 4, "end", "font-size=\"11\" fill=\"#444\"", buf);
        }
    }
}

static void frame(FILE *f, double x0, double y0, double x1, double y1, const char *title)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#999\" stroke-width=\"1\"/>\n",
            x0, y0, x1 - x0, y1 - y0);
    text_at(f, x0, y0 - 8, "start", "font-size=\"13\" font-weight=\"bold\" fill=\"#222\"", title);
}

static void y_label(FILE *f, double x, double y, const char *s)
{
    fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\" "
               "font-size=\"12\" fill=\"#444\">",
            x, y);
    xml_text(f, s);
    fputs("</text>\n", f);
}

/* ---- what is drawn ---------------------------------------------------------------------------- */

typedef struct plot {
    const sr_report *r;
    const char *title;
    bool samples;       /* every variant that ran has per-call samples */
    time_unit unit;
    double t_lo, t_hi;  /* the time axis' data range (seconds) */
    double threshold;   /* noise threshold of the verdict, percent */
    bool derived;       /* intervals derived here from per-round p50s (seed format) */
} plot;

static const char *label_of(const sr_report_variant *v)
{
    return v->label ? v->label : v->name ? v->name : "?";
}

static bool ran(const sr_report_variant *v)
{
    return v->timing.count > 0 && isfinite(v->timing.p50);
}

/* The seed's format has no interval: derived from the per-round p50s as 'sagerun show' does. */
/* Intervals and verdicts a report lacks (the seed's format), by the engine's own judgement. */
static void derive_intervals(sr_report *r, double threshold)
{
    sr_judge_report(r, threshold, true);
}

/* The time range on the axes: fastest call to the slowest p99, so that one cold call does not
 * flatten the picture (calls above are drawn as marks on the top edge and counted). */
static void time_range(plot *p)
{
    double lo = INFINITY, hi = -INFINITY, max = -INFINITY;
    for (size_t i = 0; i < p->r->variant_count; i++) {
        const sr_report_variant *v = &p->r->variants[i];
        if (!ran(v))
            continue;
        lo = fmin(lo, v->timing.min);
        max = fmax(max, v->timing.max);
        hi = fmax(hi, p->samples ? v->timing.p99 : v->timing.max);
        for (size_t k = 0; !p->samples && k < v->round_count; k++)
            lo = fmin(lo, v->rounds[k].min);
    }
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0.0;
        hi = 1e-3;
        max = hi;
    }
    p->t_lo = lo;
    p->t_hi = hi;
    p->unit = unit_for(max);
}

/* Panel 1: every call in time order, a column per round; each round's median as a bar. */
static void panel_calls(FILE *f, const plot *p, double x0, double y0, double x1, double y1)
{
    const sr_report *r = p->r;
    size_t R = 0, I = 1;
    for (size_t i = 0; i < r->variant_count; i++) {
        const sr_report_variant *v = &r->variants[i];
        size_t vr = p->samples ? v->sample_rounds : v->round_count;
        if (vr > R) {
            R = vr;
            I = p->samples ? v->samples_per_round : 1;
        }
    }
    frame(f, x0, y0, x1, y1,
          p->samples ? "Every timed call, round by round (bar: the round's median)"
                     : "Per round: p50 (dot) and min\xe2\x80\x93max (bar) \xe2\x80\x94 the report "
                       "has no per-call samples");
    axis y;
    nice_axis(p->t_lo, p->t_hi, 6, y1, y0, &y);
    y_grid(f, &y, x0, x1, p->unit, true);
    char ylab[32];
    snprintf(ylab, sizeof(ylab), "time per call (%s)", p->unit.name);
    y_label(f, x0 - 52, (y0 + y1) / 2, ylab);
    if (R == 0) {
        text_at(f, (x0 + x1) / 2, (y0 + y1) / 2, "middle", "fill=\"#666\"", "nothing ran");
        return;
    }
    double slot = (x1 - x0) / (double)R; /* one round */
    int every = slot >= 28 ? 1 : (int)ceil(28 / slot);
    for (size_t k = 0; k < R; k++) {
        double sx = x0 + slot * (double)k;
        if (k)
            line(f, sx, y0, sx, y1, "stroke=\"#bbb\" stroke-dasharray=\"3,3\"");
        if (k % (size_t)every == 0) {
            char buf[16];
            snprintf(buf, sizeof(buf), "%zu", k + 1);
            text_at(f, sx + slot / 2, y1 + 15, "middle", "font-size=\"11\" fill=\"#444\"", buf);
        }
    }
    text_at(f, (x0 + x1) / 2, y1 + 32, "middle", "font-size=\"12\" fill=\"#444\"",
            p->samples ? "round (calls in order within each round; the variants' order rotates "
                         "between rounds)"
                       : "round");
    size_t above = 0;
    double top = y0 + 4;
    size_t V = r->variant_count;
    for (size_t i = 0; i < V; i++) {
        const sr_report_variant *v = &r->variants[i];
        fprintf(f, "<g class=\"series\" data-variant=\"");
        xml_text(f, label_of(v));
        fprintf(f, "\" stroke=\"%s\" fill=\"%s\">\n", color_of(i), color_of(i));
        if (p->samples && v->samples) {
            size_t n = v->samples_per_round;
            double dx = slot / (double)(n ? n : 1);
            for (size_t k = 0; k < v->sample_rounds; k++) {
                fputs("<polyline fill=\"none\" stroke-width=\"1\" stroke-opacity=\"0.45\" points=\"",
                      f);
                for (size_t j = 0; j < n; j++) {
                    double s = v->samples[k * n + j];
                    if (!isfinite(s))
                        continue;
                    fprintf(f, "%.1f,%.1f ", x0 + slot * (double)k + dx * ((double)j + 0.5),
                            s > y.hi ? top : to_px(&y, s));
                }
                fputs("\"/>\n", f);
                for (size_t j = 0; j < n; j++) {
                    double s = v->samples[k * n + j];
                    if (!isfinite(s))
                        continue;
                    double cx = x0 + slot * (double)k + dx * ((double)j + 0.5);
                    if (s > y.hi) {
                        above++;
                        fprintf(f, "<path d=\"M%.1f,%.1f l-3.5,6 h7 z\" stroke=\"none\"/>\n", cx,
                                top - 3);
                    } else {
                        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" stroke=\"none\" "
                                   "fill-opacity=\"0.75\"/>\n",
                                cx, to_px(&y, s));
                    }
                }
                if (k < v->round_count && isfinite(v->rounds[k].p50)) {
                    double py = to_px(&y, v->rounds[k].p50);
                    line(f, x0 + slot * (double)k + 2, py, x0 + slot * (double)(k + 1) - 2, py,
                         "stroke-width=\"2.5\" stroke-opacity=\"0.9\"");
                }
            }
        } else if (!p->samples && ran(v)) {
            /* Summary only: a dot per round at its p50, a bar from its min to max. */
            double off = V > 1 ? ((double)i - (double)(V - 1) / 2.0) * fmin(slot * 0.5 / V, 14.0)
                               : 0.0;
            fputs("<polyline fill=\"none\" stroke-width=\"1.5\" stroke-opacity=\"0.6\" points=\"",
                  f);
            for (size_t k = 0; k < v->round_count; k++)
                if (isfinite(v->rounds[k].p50))
                    fprintf(f, "%.1f,%.1f ", x0 + slot * ((double)k + 0.5) + off,
                            to_px(&y, v->rounds[k].p50));
            fputs("\"/>\n", f);
            for (size_t k = 0; k < v->round_count; k++) {
                const sr_summary *s = &v->rounds[k];
                double cx = x0 + slot * ((double)k + 0.5) + off;
                if (isfinite(s->min) && isfinite(s->max))
                    line(f, cx, to_px(&y, s->min), cx, to_px(&y, s->max), "stroke-width=\"2\"");
                if (isfinite(s->p50))
                    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" stroke=\"#fff\" "
                               "stroke-width=\"1\"/>\n",
                            cx, to_px(&y, s->p50));
            }
        }
        fputs("</g>\n", f);
    }
    (void)I;
    if (above) {
        char buf[96];
        snprintf(buf, sizeof(buf), "\xe2\x96\xb2 %zu call%s above the axis (slower than the "
                 "slowest p99)", above, above == 1 ? "" : "s");
        text_at(f, x1 - 4, y0 + 16, "end", "font-size=\"11\" fill=\"#444\"", buf);
    }
}

/* A deterministic jitter in [-0.5, 0.5) for point k. */
static double jitter(size_t k)
{
    uint32_t h = (uint32_t)k * 2654435761u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (double)(h & 0xffff) / 65536.0 - 0.5;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Panel 2: per variant the calls as jittered points, the quartile box and min-max whiskers (from
 * summaries: a box p50-p90, whiskers min-max, a tick at p99). */
static void panel_distribution(FILE *f, const plot *p, double x0, double y0, double x1, double y1)
{
    const sr_report *r = p->r;
    frame(f, x0, y0, x1, y1,
          p->samples ? "Distribution of the calls" : "Distribution (summaries only)");
    text_at(f, (x0 + x1) / 2, y1 + 32, "middle", "font-size=\"11\" fill=\"#444\"",
            p->samples ? "box: quartiles \xc2\xb7 bar: median \xc2\xb7 whiskers: "
                         "min\xe2\x80\x93max \xc2\xb7 dots: calls"
                       : "box: p50\xe2\x80\x93p90 \xc2\xb7 whiskers: min\xe2\x80\x93max "
                         "\xc2\xb7 dashed: p99");
    axis y;
    nice_axis(p->t_lo, p->t_hi, 6, y1, y0, &y);
    y_grid(f, &y, x0, x1, p->unit, true);
    char ylab[32];
    snprintf(ylab, sizeof(ylab), "time per call (%s)", p->unit.name);
    y_label(f, x0 - 52, (y0 + y1) / 2, ylab);
    size_t V = r->variant_count;
    double col = (x1 - x0) / (double)(V ? V : 1), half = fmin(col * 0.3, 40.0);
    for (size_t i = 0; i < V; i++) {
        const sr_report_variant *v = &r->variants[i];
        double cx = x0 + col * ((double)i + 0.5);
        char name[40];
        snprintf(name, sizeof(name), "%s", label_of(v));
        size_t max_chars = (size_t)(col / 6.5);
        if (max_chars >= 4 && strlen(name) > max_chars)
            strcpy(name + max_chars - 3, "...");
        text_at(f, cx, y1 + 15, "middle", "font-size=\"11\" fill=\"#222\"", name);
        fprintf(f, "<g class=\"distribution\" data-variant=\"");
        xml_text(f, label_of(v));
        fprintf(f, "\" stroke=\"%s\" fill=\"%s\">\n", color_of(i), color_of(i));
        if (!ran(v)) {
            text_at(f, cx, (y0 + y1) / 2, "middle", "stroke=\"none\" fill=\"#666\"",
                    "did not run");
            fputs("</g>\n", f);
            continue;
        }
        double q1, q2, q3, top_whisker, tick = NAN;
        if (p->samples && v->samples) {
            size_t n = v->sample_rounds * v->samples_per_round, m = 0;
            double *sorted = malloc((n ? n : 1) * sizeof(double));
            if (!sorted) {
                fputs("</g>\n", f);
                continue;
            }
            for (size_t k = 0; k < n; k++) {
                double s = v->samples[k];
                if (!isfinite(s))
                    continue;
                sorted[m++] = s;
                double py = s > y.hi ? y0 + 3 : to_px(&y, s);
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" stroke=\"none\" "
                           "fill-opacity=\"0.3\"/>\n",
                        cx + jitter(k) * half * 1.6, py);
            }
            qsort(sorted, m, sizeof(double), cmp_double);
            q1 = sr_percentile_sorted(sorted, m, 25);
            q2 = sr_percentile_sorted(sorted, m, 50);
            q3 = sr_percentile_sorted(sorted, m, 75);
            top_whisker = m ? sorted[m - 1] : NAN;
            free(sorted);
        } else {
            q1 = v->timing.p50;
            q2 = v->timing.p50;
            q3 = v->timing.p90;
            top_whisker = v->timing.max;
            tick = v->timing.p99;
        }
        double lo = to_px(&y, v->timing.min), hi = to_px(&y, fmin(top_whisker, y.hi));
        line(f, cx, lo, cx, hi, "stroke-width=\"1.2\"");
        line(f, cx - half / 3, lo, cx + half / 3, lo, "stroke-width=\"1.2\"");
        line(f, cx - half / 3, hi, cx + half / 3, hi, "stroke-width=\"1.2\"");
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill-opacity=\"0.15\" "
                   "stroke-width=\"1.5\"/>\n",
                cx - half, to_px(&y, q3), 2 * half, fmax(to_px(&y, q1) - to_px(&y, q3), 1.0));
        line(f, cx - half, to_px(&y, q2), cx + half, to_px(&y, q2), "stroke-width=\"3\"");
        if (isfinite(tick) && tick <= y.hi)
            line(f, cx - half / 2, to_px(&y, tick), cx + half / 2, to_px(&y, tick),
                 "stroke-width=\"1.5\" stroke-dasharray=\"2,2\"");
        char buf[48];
        snprintf(buf, sizeof(buf), "p50 %.4g %s", q2 * p->unit.scale, p->unit.name);
        text_at(f, cx, to_px(&y, q2) - 6, "middle",
                "font-size=\"10\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\" "
                "fill=\"#222\"",
                buf);
        fputs("</g>\n", f);
    }
}

static const char *verdict_color(int verdict)
{
    switch (verdict) {
    case SR_VERDICT_FASTER: return "#1a7f37";
    case SR_VERDICT_SLOWER: return "#c62828";
    case SR_VERDICT_AMBIGUOUS: return "#b26a00";
    default: return "#444";
    }
}

/* Panel 3: per variant the speedup against the baseline (the seed's p50 formula, a dot) with its
 * 95% interval (a bar), over the noise band [-threshold, +threshold] of the verdict. */
static void panel_speedup(FILE *f, const plot *p, double x0, double y0, double x1, double y1)
{
    const sr_report *r = p->r;
    char title[160];
    snprintf(title, sizeof(title), "Speedup vs %s, 95%% interval%s",
             r->variant_count ? label_of(&r->variants[0]) : "baseline",
             p->derived ? " (from per-round p50s)" : "");
    frame(f, x0, y0, x1, y1, title);
    double lo = -p->threshold * 1.5, hi = p->threshold * 1.5;
    size_t rows = 0;
    for (size_t i = 0; i < r->variant_count; i++) {
        const sr_report_variant *v = &r->variants[i];
        if (v->is_baseline)
            continue;
        rows++;
        double xs[4] = {v->speedup_percent, v->interval.valid ? v->interval.low : NAN,
                        v->interval.valid ? v->interval.high : NAN,
                        v->interval.valid ? v->interval.estimate : NAN};
        for (int k = 0; k < 4; k++)
            if (isfinite(xs[k])) {
                lo = fmin(lo, xs[k]);
                hi = fmax(hi, xs[k]);
            }
    }
    axis x;
    double pad = (hi - lo) * 0.08;
    nice_axis(lo - pad, hi + pad, 6, x0, x1, &x);
    int d = tick_decimals(x.step);
    for (double t = x.lo; t <= x.hi + x.step * 1e-6; t += x.step) {
        double px = to_px(&x, t);
        line(f, px, y0, px, y1, "stroke=\"#eee\"");
        char buf[32];
        if (fabs(t) < x.step * 1e-6)
            snprintf(buf, sizeof(buf), "0");
        else if (fabs(t) >= 1e4) /* a variant far off: short labels, or they overlap */
            snprintf(buf, sizeof(buf), "%+.2g", t);
        else
            snprintf(buf, sizeof(buf), "%+.*f", d, t);
        text_at(f, px, y1 + 15, "middle", "font-size=\"11\" fill=\"#444\"", buf);
    }
    text_at(f, (x0 + x1) / 2, y1 + 32, "middle", "font-size=\"12\" fill=\"#444\"",
            "speedup (%), right is faster");
    text_at(f, (x0 + x1) / 2, y1 + 48, "middle", "font-size=\"11\" fill=\"#444\"",
            "\xe2\x97\x8f paired per-round estimate, bar: its 95% interval \xc2\xb7 "
            "\xe2\x97\x8b ratio of the overall p50s");
    double b0 = to_px(&x, -p->threshold), b1 = to_px(&x, p->threshold);
    fprintf(f, "<rect class=\"noise-band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
               "fill=\"#9e9e9e\" fill-opacity=\"0.18\"/>\n",
            b0, y0, b1 - b0, y1 - y0);
    char band[64];
    snprintf(band, sizeof(band), "noise \xc2\xb1%.3g%%", p->threshold);
    text_at(f, (b0 + b1) / 2, y1 - 6, "middle", "font-size=\"10\" fill=\"#666\"", band);
    line(f, to_px(&x, 0), y0, to_px(&x, 0), y1, "stroke=\"#555\" stroke-width=\"1\"");
    if (rows == 0) {
        text_at(f, (x0 + x1) / 2, (y0 + y1) / 2, "middle", "fill=\"#666\"",
                "no variant besides the baseline");
        return;
    }
    double h = (y1 - y0 - 14) / (double)rows;
    size_t row = 0;
    for (size_t i = 0; i < r->variant_count; i++) {
        const sr_report_variant *v = &r->variants[i];
        if (v->is_baseline)
            continue;
        double cy = y0 + h * ((double)row + 0.5) + 4;
        row++;
        const char *vn = sr_verdict_name(v->verdict);
        char text[200];
        if (v->failure || !isfinite(v->speedup_percent))
            snprintf(text, sizeof(text), "%s: %s", label_of(v), v->failure ? "FAILED" : "-");
        else if (v->interval.valid)
            snprintf(text, sizeof(text), "%s: %+.2f%% [%+.2f, %+.2f] %s", label_of(v),
                     v->speedup_percent, v->interval.low, v->interval.high, vn ? vn : "");
        else
            snprintf(text, sizeof(text), "%s: %+.2f%% (no interval: one round) %s", label_of(v),
                     v->speedup_percent, vn ? vn : "");
        fprintf(f, "<g class=\"speedup\" data-variant=\"");
        xml_text(f, label_of(v));
        fprintf(f, "\" stroke=\"%s\" fill=\"%s\">\n", color_of(i), color_of(i));
        char style[96];
        snprintf(style, sizeof(style), "font-size=\"11\" stroke=\"none\" fill=\"%s\"",
                 verdict_color(v->verdict));
        text_at(f, x0 + 6, cy - fmin(h * 0.25, 14) - 2, "start", style, text);
        if (v->interval.valid) {
            double a = to_px(&x, v->interval.low), b = to_px(&x, v->interval.high);
            line(f, a, cy, b, cy, "stroke-width=\"3\"");
            line(f, a, cy - 6, a, cy + 6, "stroke-width=\"2\"");
            line(f, b, cy - 6, b, cy + 6, "stroke-width=\"2\"");
        }
        /* The interval is about the paired per-round estimate; the seed's headline number is the
         * ratio of the overall p50s. Both are drawn: they differ when rounds drift. */
        if (v->interval.valid && isfinite(v->interval.estimate))
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" stroke=\"#fff\" "
                       "stroke-width=\"1.5\"/>\n",
                    to_px(&x, v->interval.estimate), cy);
        if (isfinite(v->speedup_percent))
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#fff\" "
                       "fill-opacity=\"0.6\" stroke-width=\"1.5\"/>\n",
                    to_px(&x, v->speedup_percent), cy);
        fputs("</g>\n", f);
    }
}

static void header(FILE *f, const plot *p)
{
    const sr_report *r = p->r;
    text_at(f, 24, 28, "start", "font-size=\"17\" font-weight=\"bold\" fill=\"#111\"", p->title);
    char line1[512];
    size_t used = (size_t)snprintf(line1, sizeof(line1), "q_shape [");
    for (size_t i = 0; i < r->q_shape_len && used < sizeof(line1); i++)
        used += (size_t)snprintf(line1 + used, sizeof(line1) - used, "%s%llu", i ? ", " : "",
                                 (unsigned long long)r->q_shape[i]);
    if (used < sizeof(line1))
        used += (size_t)snprintf(line1 + used, sizeof(line1) - used, "]");
    if (r->device_name && used < sizeof(line1)) {
        used += (size_t)snprintf(line1 + used, sizeof(line1) - used, "  \xc2\xb7  %s",
                                 r->device_name);
        if (r->compute_capability > 0 && used < sizeof(line1))
            used += (size_t)snprintf(line1 + used, sizeof(line1) - used, " (sm_%d)",
                                     r->compute_capability);
    }
    if (used < sizeof(line1))
        used += (size_t)snprintf(line1 + used, sizeof(line1) - used,
                                 "  \xc2\xb7  warmup %llu, %llu rounds \xc3\x97 %llu iterations",
                                 (unsigned long long)r->warmup, (unsigned long long)r->rounds,
                                 (unsigned long long)r->iterations);
    if (r->source_commit && used < sizeof(line1))
        snprintf(line1 + used, sizeof(line1) - used, "  \xc2\xb7  commit %.12s", r->source_commit);
    text_at(f, 24, 48, "start", "font-size=\"12\" fill=\"#444\"", line1);
    /* the legend: one swatch per variant */
    double x = 24;
    for (size_t i = 0; i < r->variant_count; i++) {
        const sr_report_variant *v = &r->variants[i];
        char buf[128];
        snprintf(buf, sizeof(buf), "%s%s%s", label_of(v), v->is_baseline ? " (baseline)" : "",
                 ran(v) ? "" : " (did not run)");
        double w = 22 + 6.6 * (double)strlen(buf) + 18;
        if (x + w > PLOT_W - 24 && x > 24)
            break; /* the panels below name every variant too */
        fprintf(f, "<rect x=\"%.1f\" y=\"60\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", x,
                color_of(i));
        text_at(f, x + 20, 70, "start", "font-size=\"12\" fill=\"#222\"", buf);
        x += w;
    }
}

static bool render(FILE *f, const void *user)
{
    const plot *p = user;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"%s\">\n",
            PLOT_W, PLOT_H, PLOT_W, PLOT_H, FONT);
    fputs("<title>", f);
    xml_text(f, p->title);
    fputs("</title>\n<desc>sagerun plot: every timed call by round, the distribution, and the "
          "speedup with its 95% interval against the baseline</desc>\n",
          f);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", PLOT_W, PLOT_H);
    header(f, p);
    panel_calls(f, p, 84, 104, PLOT_W - 24, 384);
    panel_distribution(f, p, 84, 452, 470, 716);
    panel_speedup(f, p, 510, 452, PLOT_W - 24, 716);
    fputs("</svg>\n", f);
    return !ferror(f);
}

static char *default_output(const char *report)
{
    size_t n = strlen(report);
    bool json = n > 5 && strcmp(report + n - 5, ".json") == 0;
    char *out = malloc(n + 5);
    if (!out)
        return NULL;
    memcpy(out, report, n - (json ? 5 : 0));
    strcpy(out + n - (json ? 5 : 0), ".svg");
    return out;
}

int sr_cmd_plot(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"title", required_argument, 0, 't'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *output = NULL, *title = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 't': title = optarg; break;
        case 'h': plot_usage(stdout); return SR_EXIT_OK;
        default: return sr_cli_bad_option("plot", c, argv);
        }
    }
    if (argc - optind != 1) {
        sr_cli_error("plot: expected one report file (see 'sagerun plot --help')");
        return SR_EXIT_USAGE;
    }
    const char *path = argv[optind];
    const char *const out_opt[] = {"-o"}, *const in[] = {path};
    if (output && !sr_cli_check_outputs("plot", out_opt, &output, 1, in, 1))
        return SR_EXIT_ERROR;
    sagerun_error err = {0};
    json_t *summary = sr_sweep_summary_load(path, &err);
    if (summary || err.status != SAGERUN_OK) {
        json_decref(summary);
        sr_cli_error("plot: %s%s", err.status != SAGERUN_OK ? err.message : path,
                     err.status != SAGERUN_OK ? ""
                                              : " is a sweep summary: plot one of its workloads' "
                                                "reports (beside it; 'sagerun show' lists them)");
        return SR_EXIT_ERROR;
    }
    sr_report r;
    if (sr_report_read(path, &r, &err) != SAGERUN_OK) {
        sr_cli_error("plot: %s", err.message);
        return SR_EXIT_ERROR;
    }
    int rc = SR_EXIT_ERROR;
    char *out_path = NULL;
    if (r.variant_count == 0) {
        sr_cli_error("plot: %s: no variants to plot", path);
        goto out;
    }
    plot p = {.r = &r, .title = title, .samples = true, .threshold = 1.0};
    if (isfinite(r.noise_threshold_percent))
        p.threshold = r.noise_threshold_percent;
    bool any_ran = false;
    for (size_t i = 0; i < r.variant_count; i++) {
        const sr_report_variant *v = &r.variants[i];
        any_ran = any_ran || ran(v);
        if (ran(v) && !v->samples)
            p.samples = false;
    }
    p.samples = p.samples && any_ran;
    if (!r.has_ext) {
        /* 'sagerun show' derives the same, at the default threshold */
        derive_intervals(&r, p.threshold);
        p.derived = r.variant_count > 1 && r.variants[0].round_count >= 2;
    }
    if (!title) {
        const char *base = strrchr(path, '/');
        p.title = base ? base + 1 : path;
    }
    time_range(&p);
    if (output && strcmp(output, "-") == 0) {
        rc = render(stdout, &p) && fflush(stdout) == 0 ? SR_EXIT_OK : SR_EXIT_ERROR;
        if (rc != SR_EXIT_OK)
            sr_cli_error("plot: cannot write the SVG to stdout");
        goto out;
    }
    if (!output && !(output = out_path = default_output(path))) {
        sr_cli_error("plot: out of memory");
        goto out;
    }
    if (out_path && !sr_cli_check_outputs("plot", out_opt, (const char *const *)&out_path, 1, in, 1))
        goto out;
    if (sr_write_file_atomic(output, render, &p, &err) != SAGERUN_OK) {
        sr_cli_error("plot: %s", err.message);
        goto out;
    }
    rc = SR_EXIT_OK;
out:
    free(out_path);
    sr_report_clear(&r);
    return rc;
}
