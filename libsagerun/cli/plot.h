/* sagerun plot, drawn with cairo: the canvas and its layout record (plot_canvas.c), scales and
 * ticks (plot_scale.c), the figure of one report (plot_report.c) and of a sweep (plot_sweep.c);
 * the command is cmd_plot.c.
 *
 * Every text is measured with cairo's text extents before it is placed, and every text and every
 * mark a text must not cover is recorded in the canvas's layout: a label goes to the first of its
 * candidate places where it overlaps nothing recorded and lies inside the canvas, or is left out
 * (counted). The layout can be written as JSON (plot --layout FILE) for tests and for checking a
 * figure: units are the SVG's viewBox units (a PNG is drawn at 2 pixels per unit). */
#ifndef SAGERUN_CLI_PLOT_H
#define SAGERUN_CLI_PLOT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "sagerun/sagerun.h"

typedef struct sr_box {
    double x0, y0, x1, y1; /* x0 <= x1, y0 <= y1 (y down) */
} sr_box;

typedef enum sr_plot_format { SR_PLOT_SVG, SR_PLOT_PNG, SR_PLOT_PDF } sr_plot_format;

/* The format a file name asks for by its extension (.svg, .png, .pdf, any case); -1 for another.
 * "-" (stdout) is SVG. */
int sr_plot_format_of(const char *path);
const char *sr_plot_format_name(sr_plot_format f);

/* ---- the canvas (plot_canvas.c) ----------------------------------------------------------- */
typedef struct sr_canvas sr_canvas;

/* A canvas that records the layout and measures text; drawing happens in sr_canvas_render. */
sr_canvas *sr_canvas_create(double width, double height);
void sr_canvas_destroy(sr_canvas *c);
double sr_canvas_width(const sr_canvas *c);
double sr_canvas_height(const sr_canvas *c);
/* The final height, once the content is laid out (nothing recorded lies below it). */
void sr_canvas_set_height(sr_canvas *c, double height);

typedef struct sr_text_style {
    double size; /* font size in units */
    bool bold;
    const char *color; /* "#rrggbb" */
    double angle;      /* degrees counter-clockwise: 0 or 90 */
} sr_text_style;

/* Where a text is anchored: h -1 left, 0 center, +1 right of x; v -1 top, 0 middle, +1 bottom of
 * y (of its logical box: the font's ascent and descent). */
typedef struct sr_anchor {
    double x, y;
    int h, v;
} sr_anchor;

/* The box a text would take at an anchor (with a margin of 1 unit around its logical extents). */
sr_box sr_canvas_measure(sr_canvas *c, const char *text, const sr_text_style *st, sr_anchor at);
/* Its advance width alone. */
double sr_canvas_text_width(sr_canvas *c, const char *text, const sr_text_style *st);
/* text cut to fit max_width, ending in an ellipsis where it was cut (malloc'ed). */
char *sr_canvas_fit(sr_canvas *c, const char *text, const sr_text_style *st, double max_width);
/* Whether box lies inside the canvas and overlaps no text or mark recorded. */
bool sr_canvas_free(const sr_canvas *c, sr_box box);

/* Draws text at the first anchor of at[0..n) where it fits; false when none does (the text is
 * left out and counted). group names the panel it belongs to in the layout. */
bool sr_canvas_place(sr_canvas *c, const char *group, const char *text, const sr_text_style *st,
                     const sr_anchor *at, size_t n);
/* As sr_canvas_place, where the text must also lie inside within (a panel's data area). */
bool sr_canvas_place_within(sr_canvas *c, const char *group, const char *text,
                            const sr_text_style *st, const sr_anchor *at, size_t n, sr_box within);
/* Draws text at one anchor, recorded whether or not it fits (for what the layout guarantees by
 * construction: titles, tick labels chosen to fit). */
void sr_canvas_text(sr_canvas *c, const char *group, const char *text, const sr_text_style *st,
                    sr_anchor at);
/* Records a mark that texts must not cover (a bar, a box, a legend swatch). */
void sr_canvas_obstacle(sr_canvas *c, sr_box box);

/* Marks (not recorded as obstacles). Colors "#rrggbb"; alpha 0..1. */
void sr_canvas_line(sr_canvas *c, double x0, double y0, double x1, double y1, const char *color,
                    double width, double alpha, bool dashed);
void sr_canvas_rect(sr_canvas *c, sr_box b, const char *fill, double fill_alpha,
                    const char *stroke, double stroke_width);
void sr_canvas_circle(sr_canvas *c, double x, double y, double r, const char *fill,
                      double alpha, const char *stroke);
/* A triangle with its tip at (x, y), pointing dir: 'u', 'd', 'l' or 'r'. */
void sr_canvas_triangle(sr_canvas *c, double x, double y, double size, const char *fill,
                        char dir);

/* The layout record: panels (with their scales) and series, for --layout. */
void sr_canvas_panel(sr_canvas *c, const char *name, sr_box box, json_t *scales);
void sr_canvas_series(sr_canvas *c, const char *panel, const char *name, size_t points);
json_t *sr_canvas_layout(const sr_canvas *c);
/* Texts that found no place. */
size_t sr_canvas_omitted(const sr_canvas *c);

/* Loads cairo and fontconfig (cairo_lib.h), once, before the first canvas; false with err set
 * (what is missing, what to install) when they cannot be loaded. */
bool sr_canvas_load(sagerun_error *err);
/* Frees what cairo and fontconfig keep for the process (font caches, the configuration), once
 * every canvas is destroyed: a command that plots ends with it (else LeakSanitizer reports them). */
void sr_canvas_release_fonts(void);

/* Draws everything recorded to f in format (PNG at 2x); false on a cairo or write error. */
bool sr_canvas_render(const sr_canvas *c, sr_plot_format format, FILE *f);
/* Whether the figure fits a PNG: cairo's image surfaces stop at SR_PNG_MAX_PIXELS a side. */
#define SR_PNG_MAX_PIXELS 32767
bool sr_canvas_png_fits(const sr_canvas *c);

/* ---- scales (plot_scale.c) ---------------------------------------------------------------- */
/* A linear axis: values lo..hi onto p0..p1, ticks at multiples of step. */
typedef struct sr_scale {
    double lo, hi, step;
    double p0, p1;
} sr_scale;

/* lo..hi rounded out to a step of 1, 2 or 5 times a power of ten giving about `ticks` ticks. */
sr_scale sr_scale_nice(double lo, double hi, int ticks, double p0, double p1);
/* The pixel of v, v held within lo..hi (a value past the axis is drawn at its end). */
double sr_scale_px(const sr_scale *s, double v);
/* Tick k (from 0) and how many there are (1 to SR_SCALE_MAX_TICKS, whatever the scale). */
#define SR_SCALE_MAX_TICKS 100
size_t sr_scale_ticks(const sr_scale *s);
double sr_scale_tick(const sr_scale *s, size_t k);
/* A tick's label: decimals its step needs, times mult; signed adds '+' to positive values. */
void sr_scale_label(const sr_scale *s, double v, double mult, bool signed_, char *buf, size_t len);
/* The range of a speedup axis: the estimates and the noise band [-threshold, threshold], widened
 * to hold the intervals, but by at most the estimates' span again on each side (an interval of
 * two rounds may reach +9000%: its end is then drawn clipped, marked). */
void sr_speedup_range(const double *estimate, const double *low, const double *high, size_t n,
                      double threshold, double *lo, double *hi);
/* {"lo", "hi", "unit"} for the layout record. */
json_t *sr_scale_json(const sr_scale *s, double mult, const char *unit);

/* Seconds in the unit that suits the largest value. */
typedef struct sr_time_unit {
    double mult;
    const char *name;
} sr_time_unit;
sr_time_unit sr_time_unit_for(double max_s);

/* Tableau 10 (distinct for up to ten series, then repeated) and the verdicts' colors. */
const char *sr_plot_color(size_t i);
const char *sr_plot_verdict_color(const char *verdict);

/* ---- parts of figures (plot_parts.c) ------------------------------------------------------- */
extern const sr_text_style sr_style_title, sr_style_subtitle, sr_style_panel, sr_style_tick,
    sr_style_axis, sr_style_note, sr_style_label;
#define SR_PLOT_MARGIN 24.0

/* The title (bold) and a subtitle line, each cut to the canvas's width, from y; returns the y
 * below them. */
double sr_plot_header(sr_canvas *c, const char *title, const char *subtitle, double y);
/* A swatch and a label per entry, flowing in rows within [x0, x1] from y (a label too long for a
 * row is cut); returns the y below the last row. */
double sr_plot_legend(sr_canvas *c, const char *const *labels, const char *const *colors,
                      size_t n, double x0, double x1, double y);
/* A panel: its frame, and its title (cut to the frame's width) above it. */
void sr_plot_frame(sr_canvas *c, const char *group, sr_box b, const char *title,
                   const char *title_color);
/* The widest tick label of a y scale. */
double sr_plot_y_labels_width(sr_canvas *c, const sr_scale *s, double mult, bool signed_);
/* A y axis left of b: a grid line and a label per tick, and the axis title (vertical) left of
 * the labels (NULL: none). */
void sr_plot_y_axis(sr_canvas *c, const char *group, sr_box b, const sr_scale *s, double mult,
                    bool signed_, const char *title);
/* An x axis below b: a grid line and a label per tick (every k-th where they would not fit),
 * then the axis title (NULL: none); returns the y below it. */
double sr_plot_x_axis(sr_canvas *c, const char *group, sr_box b, const sr_scale *s, bool signed_,
                      const char *title);
/* Where value v of a speedup scale lies on it, clipped to the scale: an interval's end beyond it
 * is drawn there with an arrow head pointing on (at: the other coordinate; vertical: the scale
 * runs up the y axis). */
double sr_plot_interval_end(sr_canvas *c, const sr_scale *s, double v, double at, bool vertical,
                            const char *color);
/* Categorical x labels below b, one per slot centred at xs[i]: horizontal when they fit, else
 * vertical, else every k-th; then the axis title; returns the y below it. */
double sr_plot_x_categories(sr_canvas *c, const char *group, sr_box b, const char *const *labels,
                            const double *xs, size_t n, const char *title);

/* ---- what a figure draws of a report (plot_model.c) ---------------------------------------- */
typedef struct sr_plot_times {
    uint64_t count; /* 0: did not run */
    double p50, p90, p99, min, max; /* seconds; NaN = absent */
} sr_plot_times;

typedef struct sr_plot_interval {
    bool valid;
    double estimate, low, high; /* the paired speedup and its 95% interval, percent */
} sr_plot_interval;

typedef struct sr_plot_variant {
    char *label;
    bool is_baseline;
    sr_plot_times timing;
    sr_plot_times *rounds; /* round_count */
    size_t round_count;
    double *samples; /* every timed call, round after round; NULL: summaries only */
    size_t sample_rounds, samples_per_round;
    sr_plot_interval interval;
    double speedup_percent; /* the seed's formula (ratio of the pooled p50s); NaN = none */
    const char *verdict;    /* "faster", "slower", "same", ...; NULL = none */
    char *failure, *failure_phase; /* NULL = none */
} sr_plot_variant;

typedef struct sr_plot_model {
    char shape[128]; /* "[1, 37810, 56, 128]" */
    char *device, *commit; /* NULL = unknown */
    int compute_capability; /* 0 or less: none (the host) */
    uint64_t warmup, rounds, iterations;
    double threshold; /* the verdict's noise band, percent */
    bool derived;     /* the intervals were derived here (a report in the seed's format) */
    sr_plot_variant *variants;
    size_t variant_count;
} sr_plot_model;

/* Reads a report (ours or the seed's, judged as 'sagerun show' judges one without intervals). */
sagerun_status sr_plot_model_read(const char *path, sr_plot_model *m, sagerun_error *err);
void sr_plot_model_clear(sr_plot_model *m);

/* ---- figures ------------------------------------------------------------------------------ */
/* The figure of one comparison report: every call by round, each variant's distribution on its
 * own scale, the speedups with their intervals. */
sr_canvas *sr_plot_report(const sr_plot_model *m, const char *title);

/* The figure of a sweep: for each variant (and each combination of the other axes) its speedup
 * against the baseline along the axis x_axis (NULL: the first axis with two or more values, or
 * the workloads in order), with 95% intervals. The reports are read from dir. NULL with err set
 * when the summary has nothing to draw or x_axis is not one of its axes. */
sr_canvas *sr_plot_sweep(const json_t *summary, const char *dir, const char *title,
                         const char *x_axis, sagerun_error *err);

#endif
