/* The figure of a sweep: each variant's speedup against the baseline (the paired estimate, with
 * its 95% interval) along one axis of the sweep, a line per variant and combination of the other
 * axes, over the verdict's noise band (plot.h). The numbers come from the workloads' reports
 * beside the summary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "sweep_axes.h"

#define FIG_W 1000.0
#define PLOT_H 380.0

typedef struct point {
    size_t x;                  /* index of its value on the x axis */
    double estimate, low, high; /* percent; low/high NaN without an interval */
} point;

typedef struct series {
    char key[512], name[256];
    point *points;
    size_t n, cap;
} series;

typedef struct sweep_fig {
    sr_canvas *c;
    const json_t *summary;
    const char *dir, *x_axis; /* x_axis NULL: the workloads in order */
    char *xs[SR_SWEEP_MAX_POINTS]; /* the x values' labels, in order */
    size_t n_x;
    series *ser; /* as many as there are lines: none is dropped */
    size_t n_ser, cap_ser, skipped;
    bool oom; /* a series or a point not kept: the figure fails */
    bool too_many_x; /* more x values than SR_SWEEP_MAX_POINTS (a hand-made summary): it fails */
    double threshold;
} sweep_fig;

static const char *str_or(const json_t *o, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : fallback;
}

/* The axis to draw along: the one asked for, else the first with two or more values. */
static sagerun_status pick_axis(sweep_fig *f, const char *want, sagerun_error *err)
{
    const char *names[SR_SWEEP_MAX_AXES];
    size_t n = sr_sweep_summary_axes(f->summary, names);
    char list[512] = "";
    for (size_t k = 0, at = 0; k < n && at < sizeof list; k++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", k ? ", " : "", names[k]);
    for (size_t k = 0; want && k < n; k++)
        if (strcmp(names[k], want) == 0)
            return f->x_axis = names[k], SAGERUN_OK;
    if (want)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT, "--x '%s': not an axis of the sweep "
                            "(%s)", want, n ? list : "it has no axes: its workloads are drawn "
                            "in order");
    const json_t *rows = json_object_get(f->summary, "workloads");
    for (size_t k = 0; k < n && !f->x_axis; k++) {
        char *first = sr_sweep_row_axis_value(json_array_get(rows, 0), names[k]);
        for (size_t i = 1; first && i < json_array_size(rows) && !f->x_axis; i++) {
            char *v = sr_sweep_row_axis_value(json_array_get(rows, i), names[k]);
            if (v && strcmp(v, first) != 0)
                f->x_axis = names[k];
            free(v);
        }
        free(first);
    }
    return SAGERUN_OK;
}

/* The index of a row's x value, added in order of appearance. */
static size_t x_index(sweep_fig *f, const json_t *row)
{
    char *v = f->x_axis ? sr_sweep_row_axis_value(row, f->x_axis)
                        : strdup(str_or(row, "name", "?"));
    for (size_t i = 0; v && i < f->n_x; i++)
        if (strcmp(f->xs[i], v) == 0) {
            free(v);
            return i;
        }
    if (!v || f->n_x == SR_SWEEP_MAX_POINTS) {
        f->oom |= !v;
        f->too_many_x |= v != NULL;
        free(v);
        return SIZE_MAX;
    }
    f->xs[f->n_x] = v;
    return f->n_x++;
}

/* A label without the parameter the x axis sweeps: work[block=16] -> work. */
static void strip_x_param(const char *label, const char *x_axis, char *out, size_t len)
{
    snprintf(out, len, "%s", label);
    const char *open = x_axis ? strchr(x_axis, '[') : NULL, *lopen = strchr(label, '[');
    if (!open || !lopen || (size_t)(lopen - label) != (size_t)(open - x_axis) ||
        strncmp(label, x_axis, (size_t)(open - x_axis)) != 0)
        return;
    char key[64];
    snprintf(key, sizeof key, "%.*s=", (int)(strlen(open + 1) - 1), open + 1);
    size_t at = (size_t)(lopen - label);
    if (at >= len) /* a name longer than the buffer (a summary's keys have no limit): cut, as is */
        return;
    out[at] = '\0';
    char args[256];
    snprintf(args, sizeof args, "%.*s", (int)(strlen(lopen + 1) - 1), lopen + 1);
    bool first = true;
    char *save = NULL;
    for (char *item = strtok_r(args, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (strncmp(item, key, strlen(key)) == 0)
            continue;
        at += (size_t)snprintf(out + at, at < len ? len - at : 0, "%s%s", first ? "[" : ",", item);
        first = false;
    }
    if (!first && at < len)
        snprintf(out + at, len - at, "]");
}

/* The other axes of a row (all but x) as "k=v, ..."; workload axes only when only_workload. */
static void other_axes(const sweep_fig *f, const json_t *row, bool only_workload, char *out,
                       size_t len)
{
    const json_t *axes = json_object_get(row, "axes"), *v;
    const char *name;
    size_t at = 0;
    out[0] = '\0';
    json_object_foreach((json_t *)axes, name, v) {
        if ((f->x_axis && strcmp(name, f->x_axis) == 0) || (only_workload && strchr(name, '[')))
            continue;
        char *value = sr_sweep_row_axis_value(row, name);
        if (at < len)
            at += (size_t)snprintf(out + at, len - at, "%s%s=%s", at ? ", " : "", name,
                                   value ? value : "?");
        free(value);
    }
}

static series *series_for(sweep_fig *f, const json_t *row, size_t j, const char *label)
{
    char key[512], rest[384];
    other_axes(f, row, false, rest, sizeof rest);
    snprintf(key, sizeof key, "%zu|%s", j, rest);
    for (size_t s = 0; s < f->n_ser; s++)
        if (strcmp(f->ser[s].key, key) == 0)
            return &f->ser[s];
    if (f->n_ser == f->cap_ser) {
        size_t cap = f->cap_ser ? 2 * f->cap_ser : 16;
        series *more = realloc(f->ser, cap * sizeof *more);
        if (!more)
            return f->oom = true, NULL;
        f->ser = more;
        f->cap_ser = cap;
    }
    series *s = &f->ser[f->n_ser++];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    char name[200], workload[256];
    strip_x_param(label, f->x_axis, name, sizeof name);
    other_axes(f, row, true, workload, sizeof workload);
    snprintf(s->name, sizeof s->name, "%s%s%s", name, workload[0] ? ", " : "", workload);
    return s;
}

static bool add_point(series *s, point p)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        point *q = realloc(s->points, cap * sizeof *q);
        if (!q)
            return false;
        s->points = q;
        s->cap = cap;
    }
    s->points[s->n++] = p;
    return true;
}

/* The points of one workload: its report's variants (the baseline excepted). */
static void add_row(sweep_fig *f, const json_t *row)
{
    const char *file = str_or(row, "report", NULL);
    char path[4096];
    sr_plot_model r;
    snprintf(path, sizeof path, "%s/%s", f->dir, file ? file : "");
    sagerun_error err = {0};
    if (!file || sr_plot_model_read(path, &r, &err) != SAGERUN_OK) {
        if (file) /* a point that ran, its report unreadable: said, not only counted */
            fprintf(stderr, "sagerun: plot: warning: %s: %s; not drawn\n",
                    sr_cli_text(str_or(row, "name", "?")), sr_cli_text(err.message));
        f->skipped++;
        return;
    }
    size_t x = x_index(f, row), j = 0;
    for (size_t i = 0; x != SIZE_MAX && i < r.variant_count; i++) {
        const sr_plot_variant *v = &r.variants[i];
        if (v->is_baseline)
            continue;
        series *s = series_for(f, row, j++, v->label);
        bool iv = v->interval.valid;
        point p = {x, iv ? v->interval.estimate : v->speedup_percent, iv ? v->interval.low : NAN,
                   iv ? v->interval.high : NAN};
        if (s && isfinite(p.estimate) && !add_point(s, p))
            f->oom = true;
    }
    sr_plot_model_clear(&r);
}

static sr_scale y_scale(const sweep_fig *f, double p0, double p1)
{
    size_t n = 0, k = 0;
    for (size_t s = 0; s < f->n_ser; s++)
        n += f->ser[s].n;
    double *e = calloc(3 * (n ? n : 1), sizeof(double)), lo = -f->threshold, hi = f->threshold;
    for (size_t s = 0; e && s < f->n_ser; s++)
        for (size_t j = 0; j < f->ser[s].n; j++, k++) {
            const point *p = &f->ser[s].points[j];
            e[k] = p->estimate, e[n + k] = p->low, e[2 * n + k] = p->high;
        }
    if (e)
        sr_speedup_range(e, e + n, e + 2 * n, n, f->threshold, &lo, &hi);
    free(e);
    return sr_scale_nice(lo, hi, 6, p0, p1);
}


static void draw_series(sweep_fig *f, size_t s, const sr_scale *y, const double *xs, double dodge)
{
    const series *se = &f->ser[s];
    const char *color = sr_plot_color(s);
    double off = ((double)s - (double)(f->n_ser - 1) / 2.0) * dodge;
    for (size_t k = 0; k < se->n; k++) {
        const point *p = &se->points[k];
        double x = xs[p->x] + off, py = sr_scale_px(y, p->estimate);
        if (k > 0)
            sr_canvas_line(f->c, xs[se->points[k - 1].x] + off,
                           sr_scale_px(y, se->points[k - 1].estimate), x, py, color, 1.5, 0.6,
                           false);
        if (isfinite(p->low)) {
            double a = sr_plot_interval_end(f->c, y, p->low, x, true, color);
            double b = sr_plot_interval_end(f->c, y, p->high, x, true, color);
            sr_canvas_line(f->c, x, a, x, b, color, 2, 1, false);
            if (p->low >= y->lo)
                sr_canvas_line(f->c, x - 3, a, x + 3, a, color, 1.5, 1, false);
            if (p->high <= y->hi)
                sr_canvas_line(f->c, x - 3, b, x + 3, b, color, 1.5, 1, false);
        }
        sr_canvas_circle(f->c, x, py, 3.5, isfinite(p->low) ? color : "#ffffff", 1, color);
    }
    sr_canvas_series(f->c, "sweep", se->name, se->n);
}

static void subtitle(const sweep_fig *f, char *buf, size_t len)
{
    const json_t *o = json_object_get(f->summary, "options");
    const json_t *rows = json_object_get(f->summary, "workloads");
    size_t at = (size_t)snprintf(buf, len, "baseline %s", str_or(o, "baseline", "?"));
    const char *device = str_or(json_array_get(rows, 0), "device", NULL);
    if (device && at < len)
        at += (size_t)snprintf(buf + at, len - at, "  \xc2\xb7  %s", device);
    if (at < len && strcmp(str_or(o, "schedule", "fixed"), "fixed") == 0)
        at += (size_t)snprintf(buf + at, len - at,
                               "  \xc2\xb7  warmup %lld, %lld rounds \xc3\x97 %lld iterations",
                               (long long)json_integer_value(json_object_get(o, "warmup")),
                               (long long)json_integer_value(json_object_get(o, "rounds")),
                               (long long)json_integer_value(json_object_get(o, "iterations")));
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, "  \xc2\xb7  %zu workloads", json_array_size(rows));
    if (f->skipped && at < len)
        snprintf(buf + at, len - at, " (%zu without a report, not drawn)", f->skipped);
}

static double legend(sweep_fig *f, double y)
{
    const char **labels = calloc(2 * f->n_ser, sizeof *labels), **colors = labels + f->n_ser;
    if (!labels)
        return f->oom = true, y;
    for (size_t s = 0; s < f->n_ser; s++) {
        labels[s] = f->ser[s].name;
        colors[s] = sr_plot_color(s);
    }
    y = sr_plot_legend(f->c, labels, colors, f->n_ser, SR_PLOT_MARGIN, FIG_W - SR_PLOT_MARGIN, y);
    free(labels);
    return y;
}

static double plot_panel(sweep_fig *f, double top)
{
    sr_box b = {0, top + 20, FIG_W - SR_PLOT_MARGIN, top + 20 + PLOT_H};
    sr_scale y = y_scale(f, b.y1, b.y0);
    b.x0 = SR_PLOT_MARGIN + 20 + sr_plot_y_labels_width(f->c, &y, 1, true) + 5;
    const json_t *o = json_object_get(f->summary, "options");
    char title[200];
    snprintf(title, sizeof title, "Speedup vs %s along %s, 95%% intervals",
             str_or(o, "baseline", "the baseline"), f->x_axis ? f->x_axis : "the workloads");
    sr_plot_frame(f->c, "sweep", b, title, NULL);
    double b0 = sr_scale_px(&y, f->threshold), b1 = sr_scale_px(&y, -f->threshold);
    sr_canvas_rect(f->c, (sr_box){b.x0, b0, b.x1, b1}, "#9e9e9e", 0.18, NULL, 0);
    sr_plot_y_axis(f->c, "sweep", b, &y, 1, true, "speedup (%), up is faster");
    sr_canvas_line(f->c, b.x0, sr_scale_px(&y, 0), b.x1, sr_scale_px(&y, 0), "#555555", 1, 1,
                   false);
    double slot = (b.x1 - b.x0) / (double)(f->n_x ? f->n_x : 1), xs[SR_SWEEP_MAX_POINTS];
    for (size_t i = 0; i < f->n_x; i++)
        xs[i] = b.x0 + slot * ((double)i + 0.5);
    double dodge = fmin(slot * 0.6 / (double)(f->n_ser ? f->n_ser : 1), 10);
    for (size_t s = 0; s < f->n_ser; s++)
        draw_series(f, s, &y, xs, dodge);
    double bottom = sr_plot_x_categories(f->c, "sweep", b, (const char *const *)f->xs, xs,
                                         f->n_x, f->x_axis ? f->x_axis : "workload");
    json_t *xv = json_array();
    for (size_t i = 0; i < f->n_x; i++)
        json_array_append_new(xv, json_string(f->xs[i]));
    sr_canvas_panel(f->c, "sweep", b, json_pack("{s:o, s:{s:s?, s:o}}", "y",
                                                sr_scale_json(&y, 1, "%"), "x", "axis", f->x_axis,
                                                "values", xv));
    char key[160];
    snprintf(key, sizeof key, "\xe2\x97\x8f paired per-round estimate, bar: its 95%% interval "
             "(\xe2\x97\x8b: one round, no interval; \xe2\x96\xb2: it goes on beyond the axis) \xc2\xb7 "
             "shaded: the noise band \xc2\xb1%.3g%%",
             f->threshold);
    sr_anchor at = {SR_PLOT_MARGIN, bottom + 4, -1, -1};
    sr_canvas_place(f->c, "sweep", key, &sr_style_note, &at, 1);
    return sr_canvas_measure(f->c, key, &sr_style_note, at).y1;
}

static void fig_free(sweep_fig *f)
{
    for (size_t i = 0; i < f->n_x; i++)
        free(f->xs[i]);
    for (size_t s = 0; s < f->n_ser; s++)
        free(f->ser[s].points);
    free(f->ser);
}

/* The figure of the rows added; NULL with err set when nothing is to be drawn or a line or a
 * point could not be kept (out of memory). */
static sr_canvas *draw(sweep_fig *f, const char *title, sagerun_error *err)
{
    if (f->too_many_x)
        return sr_cli_error_set(err, SAGERUN_FORMAT, "more than %d values on the x axis "
                                "(a sweep has at most %d workloads)", SR_SWEEP_MAX_POINTS,
                                SR_SWEEP_MAX_POINTS), NULL;
    if (f->n_ser == 0 && !f->oom)
        return sr_cli_error_set(err, SAGERUN_FORMAT, "nothing to draw: no workload has "
                                "a report with a variant besides the baseline"), NULL;
    sr_canvas *c = f->oom ? NULL : (f->c = sr_canvas_create(FIG_W, 100000));
    if (c) {
        char sub[512];
        subtitle(f, sub, sizeof sub);
        double y = legend(f, sr_plot_header(c, title, sub, 16));
        sr_canvas_set_height(c, ceil(plot_panel(f, y + 6) + SR_PLOT_MARGIN));
    }
    if (c && !f->oom)
        return c;
    sr_canvas_destroy(c);
    return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory"), NULL;
}

sr_canvas *sr_plot_sweep(const json_t *summary, const char *dir, const char *title,
                         const char *x_axis, sagerun_error *err)
{
    sweep_fig *f = calloc(1, sizeof *f);
    if (!f)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory"), NULL;
    f->summary = summary;
    f->dir = dir;
    double t = json_number_value(json_object_get(json_object_get(summary, "options"),
                                                 "noise_threshold_percent"));
    f->threshold = t > 0 ? t : 1.0;
    sr_canvas *c = NULL;
    if (pick_axis(f, x_axis, err) == SAGERUN_OK) {
        size_t i;
        const json_t *row;
        json_array_foreach(json_object_get(summary, "workloads"), i, row)
            add_row(f, row);
        c = draw(f, title, err);
    }
    fig_free(f);
    free(f);
    return c;
}
