/* Parts every figure has: the header, a legend, panel frames and axes (plot.h). Each label is
 * measured and placed so that it overlaps nothing: tick labels are thinned or turned until they
 * fit, titles and legend entries are cut to the room they have. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

const sr_text_style sr_style_title = {17, true, "#111111", 0};
const sr_text_style sr_style_subtitle = {12, false, "#444444", 0};
const sr_text_style sr_style_panel = {13, true, "#222222", 0};
const sr_text_style sr_style_tick = {11, false, "#444444", 0};
const sr_text_style sr_style_axis = {12, false, "#444444", 0};
const sr_text_style sr_style_note = {11, false, "#555555", 0};
const sr_text_style sr_style_label = {12, false, "#222222", 0};

/* One line of text cut to [x0, x1], anchored at its top left; returns the y below it. */
static double fitted_line(sr_canvas *c, const char *group, const char *text,
                          const sr_text_style *st, double x0, double x1, double y)
{
    char *fit = sr_canvas_fit(c, text, st, x1 - x0 - 2);
    if (!fit)
        return y;
    sr_anchor at = {x0, y, -1, -1};
    sr_canvas_text(c, group, fit, st, at);
    double bottom = sr_canvas_measure(c, fit, st, at).y1;
    free(fit);
    return bottom;
}

double sr_plot_header(sr_canvas *c, const char *title, const char *subtitle, double y)
{
    double x1 = sr_canvas_width(c) - SR_PLOT_MARGIN;
    y = fitted_line(c, "header", title, &sr_style_title, SR_PLOT_MARGIN, x1, y) + 2;
    if (subtitle && subtitle[0])
        y = fitted_line(c, "header", subtitle, &sr_style_subtitle, SR_PLOT_MARGIN, x1, y);
    return y + 6;
}

double sr_plot_legend(sr_canvas *c, const char *const *labels, const char *const *colors,
                      size_t n, double x0, double x1, double y)
{
    const double swatch = 12, gap = 18, row = 18;
    double x = x0;
    for (size_t i = 0; i < n; i++) {
        char *fit = sr_canvas_fit(c, labels[i], &sr_style_label, x1 - x0 - swatch - 6);
        if (!fit)
            continue;
        double w = swatch + 5 + sr_canvas_text_width(c, fit, &sr_style_label) + 2;
        if (x > x0 && x + w > x1) {
            x = x0;
            y += row;
        }
        sr_box sw = {x, y + 4, x + swatch, y + 14};
        sr_canvas_rect(c, sw, colors[i], 1.0, NULL, 0);
        sr_canvas_obstacle(c, sw);
        sr_canvas_text(c, "legend", fit, &sr_style_label, (sr_anchor){x + swatch + 4, y + 9, -1, 0});
        free(fit);
        x += w + gap;
    }
    return n ? y + row + 4 : y;
}

void sr_plot_frame(sr_canvas *c, const char *group, sr_box b, const char *title,
                   const char *title_color)
{
    sr_canvas_rect(c, b, NULL, 0, "#999999", 1);
    if (!title)
        return;
    sr_text_style st = sr_style_panel;
    st.color = title_color ? title_color : st.color;
    char *fit = sr_canvas_fit(c, title, &st, b.x1 - b.x0);
    if (fit)
        sr_canvas_text(c, group, fit, &st, (sr_anchor){b.x0, b.y0 - 3, -1, 1});
    free(fit);
}

double sr_plot_y_labels_width(sr_canvas *c, const sr_scale *s, double mult, bool signed_)
{
    double w = 0;
    for (size_t k = 0; k < sr_scale_ticks(s); k++) {
        char buf[32];
        sr_scale_label(s, sr_scale_tick(s, k), mult, signed_, buf, sizeof buf);
        w = fmax(w, sr_canvas_text_width(c, buf, &sr_style_tick));
    }
    return w + 2;
}

void sr_plot_y_axis(sr_canvas *c, const char *group, sr_box b, const sr_scale *s, double mult,
                    bool signed_, const char *title)
{
    for (size_t k = 0; k < sr_scale_ticks(s); k++) {
        double v = sr_scale_tick(s, k), py = sr_scale_px(s, v);
        char buf[32];
        sr_scale_label(s, v, mult, signed_, buf, sizeof buf);
        sr_canvas_line(c, b.x0, py, b.x1, py, "#e5e5e5", 1, 1, false);
        sr_anchor at = {b.x0 - 5, py, 1, 0};
        sr_canvas_place(c, group, buf, &sr_style_tick, &at, 1);
    }
    if (!title)
        return;
    sr_text_style st = sr_style_axis;
    st.angle = 90;
    char *fit = sr_canvas_fit(c, title, &st, b.y1 - b.y0);
    double x = b.x0 - 5 - sr_plot_y_labels_width(c, s, mult, signed_) - 4;
    sr_anchor at = {x, (b.y0 + b.y1) / 2, 1, 0};
    if (fit)
        sr_canvas_place(c, group, fit, &st, &at, 1);
    free(fit);
}

/* The axis title centred below y; returns the y below it. */
static double x_title(sr_canvas *c, const char *group, sr_box b, double y, const char *title)
{
    if (!title)
        return y;
    char *fit = sr_canvas_fit(c, title, &sr_style_axis, b.x1 - b.x0);
    if (!fit)
        return y;
    sr_anchor at = {(b.x0 + b.x1) / 2, y + 2, 0, -1};
    sr_canvas_place(c, group, fit, &sr_style_axis, &at, 1);
    double bottom = sr_canvas_measure(c, fit, &sr_style_axis, at).y1;
    free(fit);
    return bottom;
}

double sr_plot_x_axis(sr_canvas *c, const char *group, sr_box b, const sr_scale *s, bool signed_,
                      const char *title)
{
    size_t n = sr_scale_ticks(s);
    double widest = 0, spacing = n > 1 ? fabs(sr_scale_px(s, sr_scale_tick(s, 1)) -
                                              sr_scale_px(s, sr_scale_tick(s, 0)))
                                       : b.x1 - b.x0;
    char buf[32];
    for (size_t k = 0; k < n; k++) {
        sr_scale_label(s, sr_scale_tick(s, k), 1, signed_, buf, sizeof buf);
        widest = fmax(widest, sr_canvas_text_width(c, buf, &sr_style_tick));
    }
    size_t every = (size_t)ceil((widest + 10) / fmax(spacing, 1e-9));
    double bottom = b.y1;
    for (size_t k = 0; k < n; k++) {
        double v = sr_scale_tick(s, k), px = sr_scale_px(s, v);
        sr_canvas_line(c, px, b.y0, px, b.y1, "#eeeeee", 1, 1, false);
        if (k % (every ? every : 1))
            continue;
        sr_scale_label(s, v, 1, signed_, buf, sizeof buf);
        sr_anchor at = {px, b.y1 + 3, 0, -1};
        if (sr_canvas_place(c, group, buf, &sr_style_tick, &at, 1))
            bottom = fmax(bottom, sr_canvas_measure(c, buf, &sr_style_tick, at).y1);
    }
    return x_title(c, group, b, bottom, title);
}

double sr_plot_interval_end(sr_canvas *c, const sr_scale *s, double v, double at, bool vertical,
                            const char *color)
{
    double p = sr_scale_px(s, fmin(fmax(v, s->lo), s->hi));
    if (v < s->lo || v > s->hi)
        sr_canvas_triangle(c, vertical ? at : p, vertical ? p : at, vertical ? 8 : 9, color,
                           vertical ? (v < s->lo ? 'd' : 'u') : (v < s->lo ? 'l' : 'r'));
    return p;
}

double sr_plot_x_categories(sr_canvas *c, const char *group, sr_box b, const char *const *labels,
                            const double *xs, size_t n, const char *title)
{
    double slot = b.x1 - b.x0, widest = 0;
    for (size_t i = 1; i < n; i++)
        slot = fmin(slot, xs[i] - xs[i - 1]);
    for (size_t i = 0; i < n; i++)
        widest = fmax(widest, sr_canvas_text_width(c, labels[i], &sr_style_tick));
    sr_text_style st = sr_style_tick;
    double height = sr_canvas_measure(c, "Ag", &st, (sr_anchor){0, 0, -1, -1}).y1;
    size_t every = 1;
    if (widest + 8 > slot) { /* vertical, and every k-th where even those do not fit */
        st.angle = 90;
        every = (size_t)ceil((height + 2) / fmax(slot, 1e-9));
    }
    double max_len = fmin(widest, 160), bottom = b.y1;
    for (size_t i = 0; i < n; i += every ? every : 1) {
        char *fit = sr_canvas_fit(c, labels[i], &st, max_len);
        sr_anchor at = {xs[i], b.y1 + 3, 0, -1};
        if (fit && sr_canvas_place(c, group, fit, &st, &at, 1))
            bottom = fmax(bottom, sr_canvas_measure(c, fit, &st, at).y1);
        free(fit);
    }
    return x_title(c, group, b, bottom, title);
}
