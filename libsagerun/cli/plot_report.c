/* The figure of one comparison report (ours or the seed's), three panels on scales of their own:
 *   - every timed call, round by round, one column per variant in each round, each round's
 *     median as a bar (drift shows as a slope);
 *   - each variant's distribution (quartile box, 1.5 IQR whiskers, the calls as dots, its p50
 *     beside the box), on one scale where every box still reads on it, else each on its own:
 *     one variant twice as fast as another does not flatten either box;
 *   - the speedup of each variant against the baseline: its paired estimate with the 95%
 *     interval over the verdict's noise band, the numbers beside the bar.
 * A report in the seed's format has per-round summaries only: each round's p50 and min-max are
 * drawn, the box is p50-p90. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plot.h"

#define FIG_W 1000.0
#define CALLS_H 230.0
#define DIST_H 170.0
#define ROW_H 36.0

/* What a variant's box shows: quartiles, whiskers and the range of its scale. */
typedef struct box_stats {
    bool valid;                                  /* it ran */
    double q1, q2, q3, w_lo, w_hi, tick; /* tick: p99 of a summary; NaN for calls */
    double lo, hi;             /* the box's own scale */
    double calls_lo, calls_hi; /* what the calls panel shows of it */
    double *sorted;                              /* the calls, ascending (NULL: summary) */
    size_t n;
} box_stats;

typedef struct fig {
    sr_canvas *c;
    const sr_plot_model *r;
    bool samples;      /* every variant that ran carries its calls */
    sr_time_unit unit; /* of every time shown */
    box_stats *boxes;  /* per variant */
} fig;

static const char *label_of(const sr_plot_variant *v)
{
    return v->label;
}

static bool ran(const sr_plot_variant *v)
{
    return v->timing.count > 0 && isfinite(v->timing.p50);
}

static size_t call_count(const sr_plot_variant *v)
{
    return v->samples ? v->sample_rounds * v->samples_per_round : 0;
}

/* NumPy's "linear" percentile q of n sorted values (what the library's summaries use). */
static double percentile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double h = (double)(n - 1) * (q / 100.0);
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    double t = h - (double)lo, a = sorted[lo], b = sorted[lo + 1];
    return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1 - t);
}

/* What a box shows: quartiles, whiskers and the scale's range. */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bool box_of(const sr_plot_variant *v, box_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!ran(v))
        return true;
    if (!v->samples) { /* summaries: box p50-p90, whiskers min-max, a tick at p99 */
        *s = (box_stats){true, v->timing.p50, v->timing.p50, v->timing.p90, v->timing.min,
                         v->timing.max, v->timing.p99, v->timing.min, v->timing.max,
                         v->timing.min, v->timing.max, NULL, 0};
        for (size_t k = 0; k < v->round_count; k++)
            s->calls_lo = fmin(s->calls_lo, v->rounds[k].min);
        return true;
    }
    size_t n = call_count(v);
    if (!(s->sorted = malloc((n ? n : 1) * sizeof(double))))
        return false;
    for (size_t k = 0; k < n; k++)
        if (isfinite(v->samples[k]))
            s->sorted[s->n++] = v->samples[k];
    qsort(s->sorted, s->n, sizeof(double), cmp_double);
    s->q1 = percentile_sorted(s->sorted, s->n, 25);
    s->q2 = percentile_sorted(s->sorted, s->n, 50);
    s->q3 = percentile_sorted(s->sorted, s->n, 75);
    double iqr = s->q3 - s->q1;
    s->w_lo = s->q1, s->w_hi = s->q3;
    for (size_t k = 0; k < s->n; k++) { /* Tukey: the furthest calls within 1.5 IQR */
        if (s->sorted[k] >= s->q1 - 1.5 * iqr)
            s->w_lo = fmin(s->w_lo, s->sorted[k]);
        if (s->sorted[k] <= s->q3 + 1.5 * iqr)
            s->w_hi = fmax(s->w_hi, s->sorted[k]);
    }
    /* the box's scale: the calls, but no further than half the whiskers' span beyond them, so
     * that the whiskers span at least a quarter of it whatever the ticks (a cold call or a burst
     * of load must not flatten the box); the calls beyond are marked on the edge and counted */
    double span = s->w_hi > s->w_lo ? s->w_hi - s->w_lo : fabs(s->q2) * 1e-3;
    s->lo = fmax(s->sorted[0], s->w_lo - span / 2);
    s->hi = fmin(s->sorted[s->n ? s->n - 1 : 0], s->w_hi + span / 2);
    /* the calls panel: the fastest call to the whiskers or the p95, whichever is higher */
    s->calls_lo = s->sorted[0];
    s->calls_hi = fmax(s->w_hi, percentile_sorted(s->sorted, s->n, 95));
    s->tick = NAN;
    s->valid = s->n > 0;
    return true;
}


/* "FAILED in run: the reason" or "did not run". */
static void failure_text(const sr_plot_variant *v, char *buf, size_t len)
{
    if (v->failure)
        snprintf(buf, len, "FAILED%s%s: %s", v->failure_phase ? " in " : "",
                 v->failure_phase ? v->failure_phase : "", v->failure);
    else
        snprintf(buf, len, "did not run");
}

/* ---- header ------------------------------------------------------------------------------- */

static void subtitle(const sr_plot_model *r, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "q_shape %s", r->shape);
    if (r->device && at < len)
        at += (size_t)snprintf(buf + at, len - at, "  \xc2\xb7  %s", r->device);
    if (r->compute_capability > 0 && at < len)
        at += (size_t)snprintf(buf + at, len - at, " (sm_%d)", r->compute_capability);
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at,
                               "  \xc2\xb7  warmup %llu, %llu rounds \xc3\x97 %llu iterations",
                               (unsigned long long)r->warmup, (unsigned long long)r->rounds,
                               (unsigned long long)r->iterations);
    if (r->commit && at < len)
        snprintf(buf + at, len - at, "  \xc2\xb7  commit %.12s", r->commit);
}

static double header(fig *f, const char *title)
{
    char sub[512];
    subtitle(f->r, sub, sizeof sub);
    double y = sr_plot_header(f->c, title, sub, 16);
    size_t n = f->r->variant_count;
    char **labels = calloc(n, sizeof *labels);
    const char **colors = calloc(n, sizeof *colors);
    for (size_t i = 0; labels && colors && i < n; i++) {
        const sr_plot_variant *v = &f->r->variants[i];
        if (asprintf(&labels[i], "%s%s%s", label_of(v), v->is_baseline ? " (baseline)" : "",
                     ran(v) ? "" : " (did not run)") < 0)
            labels[i] = NULL;
        colors[i] = sr_plot_color(i);
    }
    if (labels && colors)
        y = sr_plot_legend(f->c, (const char *const *)labels, colors, n, SR_PLOT_MARGIN,
                           FIG_W - SR_PLOT_MARGIN, y);
    for (size_t i = 0; labels && i < n; i++)
        free(labels[i]);
    free(labels);
    free(colors);
    return y;
}

/* ---- panel 1: every call, round by round -------------------------------------------------- */

/* The union of the variants' calls ranges (box_of: the few slowest calls lie above it). */
static void calls_range(const fig *f, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < f->r->variant_count; i++)
        if (f->boxes[i].valid) {
            *lo = fmin(*lo, f->boxes[i].calls_lo);
            *hi = fmax(*hi, f->boxes[i].calls_hi);
        }
}

static size_t max_rounds(const fig *f)
{
    size_t R = 0;
    for (size_t i = 0; i < f->r->variant_count; i++) {
        const sr_plot_variant *v = &f->r->variants[i];
        size_t vr = f->samples ? v->sample_rounds : v->round_count;
        R = vr > R ? vr : R;
    }
    return R;
}

/* The calls of variant i in column c of every round; returns how many lie above the axis. */
static size_t draw_calls(fig *f, size_t i, size_t c, const sr_scale *y, sr_box b, double slot,
                         double col)
{
    const sr_plot_variant *v = &f->r->variants[i];
    size_t n = v->samples_per_round, above = 0;
    const char *color = sr_plot_color(i);
    for (size_t k = 0; k < v->sample_rounds; k++) {
        double x0 = b.x0 + slot * (double)k + col * (double)c;
        for (size_t j = 0; j < n; j++) {
            double s = v->samples[k * n + j], x = x0 + col * ((double)j + 0.5) / (double)n;
            if (!isfinite(s))
                continue;
            if (s > y->hi) {
                above++;
                sr_canvas_triangle(f->c, x, b.y0 + 1, 5, color, 'u');
            } else {
                sr_canvas_circle(f->c, x, sr_scale_px(y, s), 1.5, color, 0.7, NULL);
            }
        }
        if (k < v->round_count && isfinite(v->rounds[k].p50) && v->rounds[k].p50 <= y->hi) {
            double py = sr_scale_px(y, v->rounds[k].p50);
            sr_canvas_line(f->c, x0 + 0.5, py, x0 + col - 0.5, py, color, 2.5, 0.9, false);
        }
    }
    return above;
}

/* A summary-only variant: per round a dot at its p50 and a bar from min to max. */
static void draw_round_summaries(fig *f, size_t i, size_t c, const sr_scale *y, sr_box b,
                                 double slot, double col)
{
    const sr_plot_variant *v = &f->r->variants[i];
    const char *color = sr_plot_color(i);
    for (size_t k = 0; k < v->round_count; k++) {
        const sr_plot_times *s = &v->rounds[k];
        double x = b.x0 + slot * (double)k + col * ((double)c + 0.5);
        if (isfinite(s->min) && isfinite(s->max))
            sr_canvas_line(f->c, x, sr_scale_px(y, s->min), x, sr_scale_px(y, fmin(s->max, y->hi)),
                           color, 2, 1, false);
        if (isfinite(s->p50))
            sr_canvas_circle(f->c, x, sr_scale_px(y, s->p50), 3.5, color, 1, "#ffffff");
    }
}

/* Round numbers under the columns, every k-th where they would not fit. */
static double round_labels(fig *f, sr_box b, size_t R, double slot)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%zu", R);
    double w = sr_canvas_text_width(f->c, buf, &sr_style_tick) + 8, bottom = b.y1;
    size_t every = (size_t)ceil(w / slot);
    for (size_t k = 0; k < R; k += every) {
        snprintf(buf, sizeof buf, "%zu", k + 1);
        sr_anchor at = {b.x0 + slot * ((double)k + 0.5), b.y1 + 3, 0, -1};
        if (sr_canvas_place(f->c, "calls", buf, &sr_style_tick, &at, 1))
            bottom = fmax(bottom, sr_canvas_measure(f->c, buf, &sr_style_tick, at).y1);
    }
    return bottom;
}

static void calls_note(fig *f, sr_box b, size_t above)
{
    if (!above)
        return;
    char buf[96];
    snprintf(buf, sizeof buf, "\xe2\x96\xb2 %zu call%s above the axis", above,
             above == 1 ? "" : "s");
    const sr_anchor at[] = {{b.x1, b.y0 - 3, 1, 1}, {b.x1 - 4, b.y0 + 4, 1, -1},
                            {b.x0 + 4, b.y0 + 4, -1, -1}};
    sr_canvas_place(f->c, "calls", buf, &sr_style_note, at, 3);
}

static double panel_calls(fig *f, double top)
{
    double lo, hi;
    calls_range(f, &lo, &hi);
    sr_box b = {0, top + 20, FIG_W - SR_PLOT_MARGIN, top + 20 + CALLS_H};
    sr_scale y = sr_scale_nice(lo, hi, 6, b.y1, b.y0);
    b.x0 = SR_PLOT_MARGIN + 20 + sr_plot_y_labels_width(f->c, &y, f->unit.mult, false) + 5;
    sr_plot_frame(f->c, "calls", b, f->samples ? "Every timed call, round by round (bar: the "
                                                 "round's median)"
                                               : "Per round: p50 (dot) and min\xe2\x80\x93max "
                                                 "(bar); the report has no per-call samples",
                  NULL);
    char title[48];
    snprintf(title, sizeof title, "time per call (%s)", f->unit.name);
    sr_plot_y_axis(f->c, "calls", b, &y, f->unit.mult, false, title);
    size_t R = max_rounds(f), V = f->r->variant_count, above = 0, cols = 0, c = 0;
    for (size_t i = 0; i < V; i++)
        cols += ran(&f->r->variants[i]); /* a column per variant that ran */
    double slot = (b.x1 - b.x0) / (double)(R ? R : 1), col = slot / (double)(cols ? cols : 1);
    for (size_t k = 1; k < R && slot >= 6; k++)
        sr_canvas_line(f->c, b.x0 + slot * (double)k, b.y0, b.x0 + slot * (double)k, b.y1,
                       "#bbbbbb", 1, 1, true);
    for (size_t i = 0; i < V; i++) {
        const sr_plot_variant *v = &f->r->variants[i];
        if (f->samples && v->samples && ran(v))
            above += draw_calls(f, i, c++, &y, b, slot, col);
        else if (!f->samples && ran(v))
            draw_round_summaries(f, i, c++, &y, b, slot, col);
        sr_canvas_series(f->c, "calls", label_of(v), f->samples ? call_count(v) : v->round_count);
    }
    calls_note(f, b, above);
    sr_canvas_panel(f->c, "calls", b, json_pack("{s:o}", "y", sr_scale_json(&y, f->unit.mult,
                                                                             f->unit.name)));
    double bottom = R ? round_labels(f, b, R, slot) : b.y1;
    sr_anchor at = {(b.x0 + b.x1) / 2, bottom + 2, 0, -1};
    const char *xt = f->samples ? "round (each round: one column per variant, its calls in order)"
                                : "round";
    sr_canvas_place(f->c, "calls", xt, &sr_style_axis, &at, 1);
    return sr_canvas_measure(f->c, xt, &sr_style_axis, at).y1;
}

/* ---- panel 2: each variant's distribution, on its own scale ------------------------------- */

/* A deterministic jitter in [-0.5, 0.5) for call k. */
static double jitter(size_t k)
{
    uint32_t h = (uint32_t)k * 2654435761u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (double)(h & 0xffff) / 65536.0 - 0.5;
}

/* The calls as dots over the box; counts those above and below the scale. */
static void draw_dots(fig *f, const box_stats *s, const sr_scale *y, double cx, double half,
                      const char *color, sr_box b, size_t beyond[2])
{
    for (size_t k = 0; k < s->n; k++) {
        double x = cx + jitter(k) * half * 2.4;
        if (s->sorted[k] > y->hi) {
            beyond[0]++;
            sr_canvas_triangle(f->c, x, b.y0 + 1, 5, color, 'u');
        } else if (s->sorted[k] < y->lo) {
            beyond[1]++;
            sr_canvas_triangle(f->c, x, b.y1 - 1, 5, color, 'd');
        } else {
            sr_canvas_circle(f->c, x, sr_scale_px(y, s->sorted[k]), 1.4, color, 0.3, NULL);
        }
    }
}

static void draw_box(fig *f, const box_stats *s, const sr_scale *y, double cx, double half,
                     const char *color)
{
    double lo = sr_scale_px(y, s->w_lo), hi = sr_scale_px(y, fmin(s->w_hi, y->hi));
    sr_canvas_line(f->c, cx, lo, cx, hi, color, 1.2, 1, false);
    sr_canvas_line(f->c, cx - half / 2, lo, cx + half / 2, lo, color, 1.2, 1, false);
    sr_canvas_line(f->c, cx - half / 2, hi, cx + half / 2, hi, color, 1.2, 1, false);
    double top = sr_scale_px(y, s->q3), bottom = sr_scale_px(y, s->q1);
    sr_box box = {cx - half, top, cx + half, fmax(bottom, top + 1)};
    sr_canvas_rect(f->c, box, color, 0.15, color, 1.5);
    double med = sr_scale_px(y, s->q2);
    sr_canvas_line(f->c, cx - half, med, cx + half, med, color, 3, 1, false);
    if (isfinite(s->tick) && s->tick <= y->hi)
        sr_canvas_line(f->c, cx - half / 2, sr_scale_px(y, s->tick), cx + half / 2,
                       sr_scale_px(y, s->tick), color, 1.5, 1, true);
    sr_canvas_obstacle(f->c, (sr_box){cx - half, hi, cx + half, lo});
}

/* "p50 12.34 µs" beside the box, and how many calls lie beyond the scale. Beside the box at the
 * median's height, else just above or below it there (a median at the panel's edge leaves no
 * room for a centred label), else left of the box, else over or under the whiskers. */
static void box_labels(fig *f, const box_stats *s, const sr_scale *y, double cx, double half,
                       sr_box b, const size_t beyond[2])
{
    char buf[64];
    snprintf(buf, sizeof buf, "p50 %.4g %s", s->q2 * f->unit.mult, f->unit.name);
    double med = sr_scale_px(y, s->q2), right = cx + half + 5, left = cx - half - 5;
    const sr_anchor at[] = {{right, med, -1, 0},     {right, med - 1, -1, 1},
                            {right, med + 1, -1, -1}, {left, med, 1, 0},
                            {left, med - 1, 1, 1},    {left, med + 1, 1, -1},
                            {cx, sr_scale_px(y, fmin(s->w_hi, y->hi)) - 3, 0, 1},
                            {cx, sr_scale_px(y, s->w_lo) + 3, 0, -1}};
    sr_canvas_place_within(f->c, "distribution", buf, &sr_style_label, at, sizeof at / sizeof at[0], b);
    if (!beyond[0] && !beyond[1])
        return;
    if (beyond[0] && beyond[1])
        snprintf(buf, sizeof buf, "\xe2\x96\xb2 %zu above \xc2\xb7 \xe2\x96\xbc %zu below",
                 beyond[0], beyond[1]);
    else
        snprintf(buf, sizeof buf, beyond[0] ? "\xe2\x96\xb2 %zu above" : "\xe2\x96\xbc %zu below",
                 beyond[0] ? beyond[0] : beyond[1]);
    const sr_anchor up[] = {{b.x1, b.y0 - 3, 1, 1}, {b.x1 - 3, b.y0 + 3, 1, -1},
                            {b.x0 + 3, b.y0 + 3, -1, -1}};
    sr_canvas_place(f->c, "distribution", buf, &sr_style_note, up, 3);
}

/* One scale for every box when on it every box's whiskers still span a quarter of it (an A/A);
 * else each its own, so that one variant twice as fast does not flatten the other's box. */
static bool common_scale(const fig *f, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < f->r->variant_count; i++)
        if (f->boxes[i].valid) {
            *lo = fmin(*lo, f->boxes[i].lo);
            *hi = fmax(*hi, f->boxes[i].hi);
        }
    sr_scale y = sr_scale_nice(*lo, *hi, 4, 1, 0);
    for (size_t i = 0; i < f->r->variant_count; i++)
        if (f->boxes[i].valid && f->boxes[i].w_hi - f->boxes[i].w_lo < (y.hi - y.lo) / 4)
            return false;
    return true;
}

static void distribution_cell(fig *f, size_t i, sr_box cell, bool common)
{
    const sr_plot_variant *v = &f->r->variants[i];
    box_stats s = f->boxes[i];
    if (!s.valid) {
        sr_plot_frame(f->c, "distribution", cell, label_of(v), sr_plot_color(i));
        char why[SAGERUN_ERROR_MESSAGE_SIZE + 64];
        failure_text(v, why, sizeof why);
        char *fit = sr_canvas_fit(f->c, why, &sr_style_note, cell.x1 - cell.x0 - 12);
        if (fit)
            sr_canvas_place(f->c, "distribution", fit, &sr_style_note,
                            &(sr_anchor){(cell.x0 + cell.x1) / 2, (cell.y0 + cell.y1) / 2, 0, 0},
                            1);
        free(fit);
        sr_canvas_series(f->c, "distribution", label_of(v), 0);
        return;
    }
    double lo = s.lo, hi = s.hi;
    if (common)
        common_scale(f, &lo, &hi);
    sr_scale y = sr_scale_nice(lo, hi, 4, cell.y1, cell.y0);
    sr_box b = cell;
    b.x0 += sr_plot_y_labels_width(f->c, &y, f->unit.mult, false) + 6;
    sr_plot_frame(f->c, "distribution", b, label_of(v), sr_plot_color(i));
    sr_plot_y_axis(f->c, "distribution", b, &y, f->unit.mult, false, NULL);
    double half = fmin(22, (b.x1 - b.x0) * 0.12), cx = b.x0 + (b.x1 - b.x0) * 0.3;
    size_t beyond[2] = {0, 0};
    if (s.sorted)
        draw_dots(f, &s, &y, cx, half, sr_plot_color(i), b, beyond);
    draw_box(f, &s, &y, cx, half, sr_plot_color(i));
    box_labels(f, &s, &y, cx, half, b, beyond);
    char name[160];
    snprintf(name, sizeof name, "distribution:%s", label_of(v));
    sr_canvas_panel(f->c, name, b, json_pack("{s:o, s:f, s:f}", "y",
                                             sr_scale_json(&y, f->unit.mult, f->unit.name),
                                             "whisker_low", s.w_lo * f->unit.mult, "whisker_high",
                                             s.w_hi * f->unit.mult));
    sr_canvas_series(f->c, "distribution", label_of(v), s.sorted ? s.n : 1);
}

static double panel_distributions(fig *f, double top)
{
    size_t V = f->r->variant_count, cols = V < 4 ? V : 4, rows = (V + cols - 1) / cols;
    double lo, hi;
    bool common = common_scale(f, &lo, &hi);
    char title[160];
    snprintf(title, sizeof title, "%s (%s), %s",
             f->samples ? "Distribution of the calls" : "Distribution (summaries only)",
             f->unit.name, common ? "on one scale" : "each variant on its own scale");
    sr_canvas_text(f->c, "distribution", title, &sr_style_panel,
                   (sr_anchor){SR_PLOT_MARGIN, top, -1, -1});
    double gap = 18, w = (FIG_W - 2 * SR_PLOT_MARGIN - gap * (double)(cols - 1)) / (double)cols;
    double y = top + 42;
    for (size_t i = 0; i < V; i++) {
        size_t row = i / cols, col = i % cols;
        double x0 = SR_PLOT_MARGIN + (w + gap) * (double)col, y0 = y + (DIST_H + 40) * (double)row;
        distribution_cell(f, i, (sr_box){x0, y0, x0 + w, y0 + DIST_H}, common);
    }
    double bottom = y + (DIST_H + 40) * (double)rows - 40 + 10; /* below the last tick label */
    const char *key = f->samples ? "box: quartiles \xc2\xb7 bar: median \xc2\xb7 whiskers: the "
                                   "furthest calls within 1.5 IQR \xc2\xb7 dots: the calls"
                                 : "box: p50\xe2\x80\x93p90 \xc2\xb7 whiskers: min\xe2\x80\x93max "
                                   "\xc2\xb7 dashed: p99";
    sr_anchor at = {SR_PLOT_MARGIN, bottom, -1, -1};
    sr_canvas_place(f->c, "distribution", key, &sr_style_note, &at, 1);
    return sr_canvas_measure(f->c, key, &sr_style_note, at).y1;
}

/* ---- panel 3: the speedups -------------------------------------------------------------- */

static size_t compared(const fig *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->r->variant_count; i++)
        n += !f->r->variants[i].is_baseline;
    return n;
}

static sr_scale speedup_scale(const fig *f, double x0, double x1)
{
    size_t n = 2 * f->r->variant_count, k = 0;
    double *e = calloc(3 * (n ? n : 1), sizeof(double)), lo = -f->r->threshold, hi = f->r->threshold;
    for (size_t i = 0; e && i < f->r->variant_count; i++) {
        const sr_plot_variant *v = &f->r->variants[i];
        bool iv = v->interval.valid && !v->is_baseline;
        e[k] = v->is_baseline ? NAN : v->speedup_percent;
        e[k + 1] = iv ? v->interval.estimate : NAN;
        e[n + k] = e[n + k + 1] = iv ? v->interval.low : NAN;
        e[2 * n + k] = e[2 * n + k + 1] = iv ? v->interval.high : NAN;
        k += 2;
    }
    if (e)
        sr_speedup_range(e, e + n, e + 2 * n, n, f->r->threshold, &lo, &hi);
    free(e);
    return sr_scale_nice(lo, hi, 6, x0, x1);
}


static double label_column(fig *f)
{
    double w = 0;
    for (size_t i = 0; i < f->r->variant_count; i++)
        if (!f->r->variants[i].is_baseline)
            w = fmax(w, sr_canvas_text_width(f->c, label_of(&f->r->variants[i]), &sr_style_label));
    return fmin(w + 2, FIG_W * 0.3);
}

static void speedup_text(const sr_plot_variant *v, char *buf, size_t len)
{
    const char *vn = v->verdict;
    char times[48];
    sr_cli_speedup_times(v->interval.valid ? v->interval.estimate : v->speedup_percent, times, sizeof times);
    if (v->failure || !isfinite(v->speedup_percent))
        failure_text(v, buf, len);
    else if (v->interval.valid)
        snprintf(buf, len, "%+.2f%% (%s) [%+.2f, %+.2f] %s", v->interval.estimate, times,
                 v->interval.low, v->interval.high, vn ? vn : "");
    else
        snprintf(buf, len, "%+.2f%% (%s, p50 ratio; no interval: one round) %s",
                 v->speedup_percent, times, vn ? vn : "");
}

/* One variant's row: its label at the left, the interval and dots, the numbers beside them. */
static void speedup_row(fig *f, size_t i, const sr_scale *x, sr_box b, double cy, double colw)
{
    const sr_plot_variant *v = &f->r->variants[i];
    const char *color = sr_plot_color(i);
    sr_box sw = {SR_PLOT_MARGIN, cy - 5, SR_PLOT_MARGIN + 10, cy + 5};
    sr_canvas_rect(f->c, sw, color, 1, NULL, 0);
    char *fit = sr_canvas_fit(f->c, label_of(v), &sr_style_label, colw);
    if (fit)
        sr_canvas_text(f->c, "speedup", fit, &sr_style_label, (sr_anchor){sw.x1 + 4, cy, -1, 0});
    free(fit);
    sr_canvas_line(f->c, b.x0, cy, b.x1, cy, "#f0f0f0", 1, 1, false);
    double a = NAN, z = NAN; /* the ends of what the label stands beside: the estimate's bar */
    if (v->interval.valid) {
        a = sr_plot_interval_end(f->c, x, v->interval.low, cy, false, color);
        z = sr_plot_interval_end(f->c, x, v->interval.high, cy, false, color);
        sr_canvas_line(f->c, a, cy, z, cy, color, 3, 1, false);
        if (v->interval.low >= x->lo)
            sr_canvas_line(f->c, a, cy - 6, a, cy + 6, color, 2, 1, false);
        if (v->interval.high <= x->hi)
            sr_canvas_line(f->c, z, cy - 6, z, cy + 6, color, 2, 1, false);
        sr_canvas_circle(f->c, sr_scale_px(x, v->interval.estimate), cy, 5, color, 1, "#ffffff");
    }
    if (isfinite(v->speedup_percent)) { /* the seed's number: the ratio of the pooled p50s */
        double px = sr_scale_px(x, v->speedup_percent);
        sr_canvas_circle(f->c, px, cy, 4, "#ffffff", 0.6, color);
        sr_canvas_obstacle(f->c, (sr_box){px - 5, cy - 6, px + 5, cy + 6});
        if (!v->interval.valid) /* then the label is the p50 ratio's, and beside it */
            a = px - 5, z = px + 5;
    }
    char text[SAGERUN_ERROR_MESSAGE_SIZE + 64];
    speedup_text(v, text, sizeof text);
    sr_text_style st = sr_style_label;
    st.color = sr_plot_verdict_color(v->verdict);
    if (isfinite(a))
        sr_canvas_obstacle(f->c, (sr_box){a - 1, cy - 7, z + 1, cy + 7});
    else
        a = z = b.x0;
    fit = sr_canvas_fit(f->c, text, &st, b.x1 - b.x0 - 12);
    const sr_anchor at[] = {{z + 6, cy, -1, 0}, {a - 6, cy, 1, 0}, {(a + z) / 2, cy - 8, 0, 1},
                            {(a + z) / 2, cy + 8, 0, -1}, {b.x0 + 6, cy - 8, -1, 1}};
    if (fit)
        sr_canvas_place_within(f->c, "speedup", fit, &st, at, 5, b);
    free(fit);
    sr_canvas_series(f->c, "speedup", label_of(v), v->interval.valid ? 1 : 0);
}

static void noise_band(fig *f, const sr_scale *x, sr_box b)
{
    double b0 = sr_scale_px(x, -f->r->threshold), b1 = sr_scale_px(x, f->r->threshold);
    sr_canvas_rect(f->c, (sr_box){b0, b.y0, b1, b.y1}, "#9e9e9e", 0.18, NULL, 0);
    sr_canvas_line(f->c, sr_scale_px(x, 0), b.y0, sr_scale_px(x, 0), b.y1, "#555555", 1, 1, false);
}

static double panel_speedup(fig *f, double top)
{
    const sr_plot_model *r = f->r;
    size_t rows = compared(f);
    double colw = label_column(f);
    sr_box b = {SR_PLOT_MARGIN + 14 + colw + 10, top + 20, FIG_W - SR_PLOT_MARGIN,
                top + 20 + ROW_H * (double)(rows ? rows : 1) + 16};
    char title[200];
    snprintf(title, sizeof title, "Speedup vs %s, 95%% interval%s",
             r->variant_count ? label_of(&r->variants[0]) : "the baseline",
             f->r->derived ? " (from per-round p50s)" : "");
    sr_plot_frame(f->c, "speedup", (sr_box){SR_PLOT_MARGIN, b.y0, b.x1, b.y1}, title, NULL);
    sr_scale x = speedup_scale(f, b.x0, b.x1);
    noise_band(f, &x, b);
    double bottom = sr_plot_x_axis(f->c, "speedup", b, &x, true, "speedup (%), right is faster");
    size_t row = 0;
    for (size_t i = 0; i < r->variant_count; i++)
        if (!r->variants[i].is_baseline)
            speedup_row(f, i, &x, b, b.y0 + 8 + ROW_H * ((double)row++ + 0.5), colw);
    if (!rows)
        sr_canvas_place(f->c, "speedup", "no variant besides the baseline", &sr_style_note,
                        &(sr_anchor){(b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2, 0, 0}, 1);
    char key[200];
    snprintf(key, sizeof key, "\xe2\x97\x8f paired per-round estimate, bar: its 95%% interval "
             "\xc2\xb7 \xe2\x97\x8b ratio of the overall p50s \xc2\xb7 shaded: the noise band "
             "\xc2\xb1%.3g%%", f->r->threshold);
    sr_anchor at = {SR_PLOT_MARGIN, bottom + 4, -1, -1};
    sr_canvas_place(f->c, "speedup", key, &sr_style_note, &at, 1);
    sr_canvas_panel(f->c, "speedup", b, json_pack("{s:o}", "x", sr_scale_json(&x, 1, "%")));
    return sr_canvas_measure(f->c, key, &sr_style_note, at).y1;
}

static void fig_free(fig *f)
{
    for (size_t i = 0; f->boxes && i < f->r->variant_count; i++)
        free(f->boxes[i].sorted);
    free(f->boxes);
}

sr_canvas *sr_plot_report(const sr_plot_model *r, const char *title)
{
    fig f = {sr_canvas_create(FIG_W, 100000), r, true, {1e6, "\xc2\xb5s"},
             calloc(r->variant_count ? r->variant_count : 1, sizeof(box_stats))};
    bool any = false, ok = f.c && f.boxes;
    for (size_t i = 0; i < r->variant_count; i++) {
        const sr_plot_variant *v = &r->variants[i];
        any = any || ran(v);
        f.samples = f.samples && (!ran(v) || v->samples);
    }
    f.samples = f.samples && any;
    for (size_t i = 0; ok && i < r->variant_count; i++)
        ok = box_of(&r->variants[i], &f.boxes[i]);
    if (ok) {
        double lo, hi;
        calls_range(&f, &lo, &hi);
        f.unit = sr_time_unit_for(isfinite(hi) ? hi : 0);
        double y = header(&f, title);
        y = panel_calls(&f, y + 6);
        y = panel_distributions(&f, y + 14);
        y = panel_speedup(&f, y + 16);
        sr_canvas_set_height(f.c, ceil(y + SR_PLOT_MARGIN));
    }
    fig_free(&f);
    if (!ok) {
        sr_canvas_destroy(f.c);
        return NULL;
    }
    return f.c;
}
