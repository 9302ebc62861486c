/* The plot canvas: texts measured with cairo and placed where they overlap nothing, marks, and the
 * layout record; drawing to SVG, PNG or PDF replays what was recorded (plot.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cairo_lib.h"
#include "plot.h"

#define FONT_FACE "DejaVu Sans"
#define TEXT_PAD 1.0   /* units around a text's logical box */
#define PNG_SCALE 2.0  /* pixels per unit in a PNG */

typedef enum op_kind { OP_TEXT, OP_LINE, OP_RECT, OP_CIRCLE, OP_TRIANGLE } op_kind;

/* One thing to draw: geometry in v[], colors, a text. */
typedef struct op {
    op_kind kind;
    double v[6];
    char fill[8], stroke[8];
    double alpha, width;
    bool dashed, bold;
    char *text;
} op;

typedef struct placed {
    sr_box box;
    char *text, *group;
} placed;

struct sr_canvas {
    double width, height;
    cairo_surface_t *measure_surface;
    cairo_t *measure; /* measures text */
    op *ops;
    size_t n_ops, cap_ops;
    placed *texts;
    size_t n_texts, cap_texts;
    sr_box *obstacles;
    size_t n_obstacles, cap_obstacles;
    json_t *omitted; /* [{"text", "group"}] of the texts that found no place */
    json_t *panels, *series;
};

int sr_plot_format_of(const char *path)
{
    size_t n = strlen(path);
    if (strcmp(path, "-") == 0 || (n > 4 && strcasecmp(path + n - 4, ".svg") == 0))
        return SR_PLOT_SVG;
    if (n > 4 && strcasecmp(path + n - 4, ".png") == 0)
        return SR_PLOT_PNG;
    if (n > 4 && strcasecmp(path + n - 4, ".pdf") == 0)
        return SR_PLOT_PDF;
    return -1;
}

const char *sr_plot_format_name(sr_plot_format f)
{
    return f == SR_PLOT_PNG ? "PNG" : f == SR_PLOT_PDF ? "PDF" : "SVG";
}

/* The same font and metrics everywhere (no hinting: a text measures alike on every surface). */
static void set_font(cairo_t *cr, double size, bool bold)
{
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
    cairo_select_font_face(cr, FONT_FACE, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

bool sr_canvas_load(sagerun_error *err)
{
    return sr_cairo_load(err);
}

sr_canvas *sr_canvas_create(double width, double height)
{
    sr_canvas *c = sr_cairo_loaded() ? calloc(1, sizeof *c) : NULL;
    if (!c)
        return NULL;
    c->width = width;
    c->height = height;
    c->measure_surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    c->measure = cairo_create(c->measure_surface);
    c->panels = json_array();
    c->series = json_array();
    c->omitted = json_array();
    if (cairo_status(c->measure) != CAIRO_STATUS_SUCCESS || !c->panels || !c->series ||
        !c->omitted) {
        sr_canvas_destroy(c);
        return NULL;
    }
    return c;
}

void sr_canvas_destroy(sr_canvas *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_ops; i++)
        free(c->ops[i].text);
    for (size_t i = 0; i < c->n_texts; i++) {
        free(c->texts[i].text);
        free(c->texts[i].group);
    }
    free(c->ops);
    free(c->texts);
    free(c->obstacles);
    if (c->measure)
        cairo_destroy(c->measure);
    if (c->measure_surface)
        cairo_surface_destroy(c->measure_surface);
    json_decref(c->panels);
    json_decref(c->series);
    json_decref(c->omitted);
    free(c);
}

void sr_canvas_release_fonts(void)
{
    if (!sr_cairo_loaded())
        return;
    cairo_debug_reset_static_data();
    FcFini();
}

double sr_canvas_width(const sr_canvas *c)
{
    return c->width;
}

double sr_canvas_height(const sr_canvas *c)
{
    return c->height;
}

void sr_canvas_set_height(sr_canvas *c, double height)
{
    c->height = height;
}

/* Grows an array of n elements of size sz to hold one more; false when out of memory. */
static bool grow(void **items, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return true;
    size_t next = *cap ? 2 * *cap : 64;
    void *p = realloc(*items, next * sz);
    if (!p)
        return false;
    *items = p;
    *cap = next;
    return true;
}

static op *add_op(sr_canvas *c, op_kind kind)
{
    if (!grow((void **)&c->ops, &c->cap_ops, c->n_ops, sizeof(op)))
        return NULL;
    op *o = &c->ops[c->n_ops++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->alpha = 1.0;
    return o;
}

static void set_color(char dst[8], const char *color)
{
    snprintf(dst, 8, "%s", color ? color : "");
}

/* ---- text ---------------------------------------------------------------------------------- */

typedef struct text_metrics {
    double advance, ascent, descent;
} text_metrics;

/* The length of the UTF-8 character at s that cairo takes (RFC 3629: no overlong forms, no
 * surrogates, at most U+10FFFF; no noncharacter: U+FDD0..U+FDEF, U+xFFFE, U+xFFFF), or 0. */
static size_t utf8_char(const unsigned char *s)
{
    if (s[0] < 0x80)
        return s[0] >= 0x20 || s[0] == '\t' ? 1 : 0;
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4   ? 4
               : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xc2 && s[0] < 0xe0  ? 2
                                              : 0;
    uint32_t cp = n == 2 ? s[0] & 0x1fu : n == 3 ? s[0] & 0x0fu : s[0] & 0x07u;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    bool ok = n && (n != 3 || cp >= 0x800) && (n != 4 || (cp >= 0x10000 && cp <= 0x10ffff)) &&
              !(cp >= 0xd800 && cp <= 0xdfff) && (cp & 0xfffe) != 0xfffe &&
              !(cp >= 0xfdd0 && cp <= 0xfdef); /* noncharacters, in every plane */
    return ok ? n : 0;
}

/* text as cairo can draw it: every byte that starts no valid character (a file name that is not
 * UTF-8, a label holding U+FFFE, a control character) becomes U+FFFD. Cairo refused such text,
 * and the figure failed as "cannot write: write failed". */
static char *drawable(const char *text)
{
    size_t n = strlen(text), at = 0;
    char *out = malloc(3 * n + 1);
    if (!out)
        return NULL;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        size_t k = utf8_char(s);
        if (k) {
            memcpy(out + at, s, k);
            at += k, s += k;
        } else {
            memcpy(out + at, "\xef\xbf\xbd", 3);
            at += 3, s++;
        }
    }
    out[at] = '\0';
    return out;
}

static text_metrics metrics(sr_canvas *c, const char *text, const sr_text_style *st)
{
    set_font(c->measure, st->size, st->bold);
    cairo_font_extents_t fe;
    cairo_text_extents_t te = {0};
    cairo_font_extents(c->measure, &fe);
    char *clean = drawable(text);
    if (clean)
        cairo_text_extents(c->measure, clean, &te);
    free(clean);
    return (text_metrics){te.x_advance, fe.ascent, fe.descent};
}

double sr_canvas_text_width(sr_canvas *c, const char *text, const sr_text_style *st)
{
    return metrics(c, text, st).advance;
}

static bool vertical(const sr_text_style *st)
{
    return fabs(st->angle - 90.0) < 1e-9;
}

sr_box sr_canvas_measure(sr_canvas *c, const char *text, const sr_text_style *st, sr_anchor at)
{
    text_metrics m = metrics(c, text, st);
    double along = m.advance + 2 * TEXT_PAD, across = m.ascent + m.descent + 2 * TEXT_PAD;
    double w = vertical(st) ? across : along, h = vertical(st) ? along : across;
    double x0 = at.x - w * (at.h + 1) / 2.0, y0 = at.y - h * (at.v + 1) / 2.0;
    return (sr_box){x0, y0, x0 + w, y0 + h};
}

/* Whether a UTF-8 string ends inside a character at n (a continuation byte follows). */
static bool mid_character(const char *s, size_t n)
{
    return ((unsigned char)s[n] & 0xc0) == 0x80;
}

/* buf = the first n bytes of text and an ellipsis */
static void ellipsize(char *buf, const char *text, size_t n)
{
    memcpy(buf, text, n);
    memcpy(buf + n, "\xe2\x80\xa6", 4); /* … */
}

/* The longest prefix that fits with its ellipsis, found by bisection over character boundaries
 * (a width grows with the prefix): one measurement per halving, where dropping one character at
 * a time took 53 s for a label of 30000 characters. */
char *sr_canvas_fit(sr_canvas *c, const char *text, const sr_text_style *st, double max_width)
{
    size_t n = strlen(text);
    char *buf = malloc(n + 4);
    if (!buf)
        return NULL;
    memcpy(buf, text, n + 1);
    if (sr_canvas_text_width(c, buf, st) <= max_width)
        return buf;
    size_t fits = 0, too_long = n; /* prefix lengths (character boundaries) */
    while (too_long - fits > 1) {
        size_t mid = fits + (too_long - fits) / 2;
        while (mid < too_long && mid_character(text, mid))
            mid++;
        if (mid == too_long) { /* no boundary in (fits + half, too_long): try below */
            mid = fits + (too_long - fits) / 2;
            while (mid > fits && mid_character(text, mid))
                mid--;
            if (mid == fits)
                break;
        }
        ellipsize(buf, text, mid);
        if (sr_canvas_text_width(c, buf, st) <= max_width)
            fits = mid;
        else
            too_long = mid;
    }
    ellipsize(buf, text, fits);
    return buf;
}

static bool overlap(sr_box a, sr_box b)
{
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

bool sr_canvas_free(const sr_canvas *c, sr_box box)
{
    if (box.x0 < 0 || box.y0 < 0 || box.x1 > c->width || box.y1 > c->height)
        return false;
    for (size_t i = 0; i < c->n_texts; i++)
        if (overlap(box, c->texts[i].box))
            return false;
    for (size_t i = 0; i < c->n_obstacles; i++)
        if (overlap(box, c->obstacles[i]))
            return false;
    return true;
}

static void record_text(sr_canvas *c, const char *group, const char *text, sr_box box)
{
    if (!grow((void **)&c->texts, &c->cap_texts, c->n_texts, sizeof(placed)))
        return;
    placed *p = &c->texts[c->n_texts++];
    p->box = box;
    p->text = drawable(text);
    p->group = strdup(group ? group : "");
}

static void draw_text_at(sr_canvas *c, const char *text, const sr_text_style *st, sr_box box)
{
    text_metrics m = metrics(c, text, st);
    op *o = add_op(c, OP_TEXT);
    if (!o)
        return;
    o->text = drawable(text);
    /* the baseline's origin; a vertical text reads upwards from the box's bottom */
    o->v[0] = vertical(st) ? box.x0 + TEXT_PAD + m.ascent : box.x0 + TEXT_PAD;
    o->v[1] = vertical(st) ? box.y1 - TEXT_PAD : box.y0 + TEXT_PAD + m.ascent;
    o->v[2] = st->size;
    o->v[3] = vertical(st) ? 90.0 : 0.0;
    o->bold = st->bold;
    set_color(o->fill, st->color ? st->color : "#222222");
}

void sr_canvas_text(sr_canvas *c, const char *group, const char *text, const sr_text_style *st,
                    sr_anchor at)
{
    sr_box box = sr_canvas_measure(c, text, st, at);
    record_text(c, group, text, box);
    draw_text_at(c, text, st, box);
}

static bool inside(sr_box a, sr_box outer)
{
    return a.x0 >= outer.x0 && a.y0 >= outer.y0 && a.x1 <= outer.x1 && a.y1 <= outer.y1;
}

bool sr_canvas_place_within(sr_canvas *c, const char *group, const char *text,
                            const sr_text_style *st, const sr_anchor *at, size_t n, sr_box within)
{
    for (size_t i = 0; i < n; i++) {
        sr_box box = sr_canvas_measure(c, text, st, at[i]);
        if (inside(box, within) && sr_canvas_free(c, box)) {
            record_text(c, group, text, box);
            draw_text_at(c, text, st, box);
            return true;
        }
    }
    json_array_append_new(c->omitted, json_pack("{s:s, s:s}", "text", text, "group",
                                                 group ? group : ""));
    return false;
}

bool sr_canvas_place(sr_canvas *c, const char *group, const char *text, const sr_text_style *st,
                     const sr_anchor *at, size_t n)
{
    return sr_canvas_place_within(c, group, text, st, at, n, (sr_box){0, 0, c->width, c->height});
}

void sr_canvas_obstacle(sr_canvas *c, sr_box box)
{
    if (grow((void **)&c->obstacles, &c->cap_obstacles, c->n_obstacles, sizeof(sr_box)))
        c->obstacles[c->n_obstacles++] = box;
}

size_t sr_canvas_omitted(const sr_canvas *c)
{
    return json_array_size(c->omitted);
}

/* ---- marks --------------------------------------------------------------------------------- */

void sr_canvas_line(sr_canvas *c, double x0, double y0, double x1, double y1, const char *color,
                    double width, double alpha, bool dashed)
{
    op *o = add_op(c, OP_LINE);
    if (!o)
        return;
    o->v[0] = x0, o->v[1] = y0, o->v[2] = x1, o->v[3] = y1;
    set_color(o->stroke, color);
    o->width = width;
    o->alpha = alpha;
    o->dashed = dashed;
}

void sr_canvas_rect(sr_canvas *c, sr_box b, const char *fill, double fill_alpha,
                    const char *stroke, double stroke_width)
{
    op *o = add_op(c, OP_RECT);
    if (!o)
        return;
    o->v[0] = b.x0, o->v[1] = b.y0, o->v[2] = b.x1, o->v[3] = b.y1;
    set_color(o->fill, fill);
    set_color(o->stroke, stroke);
    o->alpha = fill_alpha;
    o->width = stroke_width;
}

void sr_canvas_circle(sr_canvas *c, double x, double y, double r, const char *fill, double alpha,
                      const char *stroke)
{
    op *o = add_op(c, OP_CIRCLE);
    if (!o)
        return;
    o->v[0] = x, o->v[1] = y, o->v[2] = r;
    set_color(o->fill, fill);
    set_color(o->stroke, stroke);
    o->alpha = alpha;
    o->width = 1.2;
}

void sr_canvas_triangle(sr_canvas *c, double x, double y, double size, const char *fill,
                        char dir)
{
    op *o = add_op(c, OP_TRIANGLE);
    if (!o)
        return;
    o->v[0] = x, o->v[1] = y, o->v[2] = size;
    o->v[3] = dir == 'd' ? 180 : dir == 'l' ? 90 : dir == 'r' ? 270 : 0; /* degrees from up */
    set_color(o->fill, fill);
}

/* ---- the layout record ----------------------------------------------------------------------- */

static json_t *box_json(sr_box b)
{
    return json_pack("[f, f, f, f]", b.x0, b.y0, b.x1, b.y1);
}

void sr_canvas_panel(sr_canvas *c, const char *name, sr_box box, json_t *scales)
{
    json_array_append_new(c->panels, json_pack("{s:s, s:o, s:o}", "name", name, "box",
                                               box_json(box), "scales",
                                               scales ? scales : json_object()));
}

void sr_canvas_series(sr_canvas *c, const char *panel, const char *name, size_t points)
{
    json_array_append_new(c->series, json_pack("{s:s, s:s, s:I}", "panel", panel, "name", name,
                                               "points", (json_int_t)points));
}

json_t *sr_canvas_layout(const sr_canvas *c)
{
    json_t *texts = json_array(), *obstacles = json_array();
    for (size_t i = 0; i < c->n_texts; i++)
        json_array_append_new(texts, json_pack("{s:s, s:s, s:o}", "text", c->texts[i].text ?: "",
                                               "group", c->texts[i].group ?: "", "box",
                                               box_json(c->texts[i].box)));
    for (size_t i = 0; i < c->n_obstacles; i++)
        json_array_append_new(obstacles, box_json(c->obstacles[i]));
    return json_pack("{s:f, s:f, s:o, s:o, s:O, s:O, s:O}", "width", c->width, "height",
                     c->height, "texts", texts, "obstacles", obstacles, "panels", c->panels,
                     "series", c->series, "omitted", c->omitted);
}

/* ---- drawing ----------------------------------------------------------------------------------- */

static void source(cairo_t *cr, const char *hex, double alpha)
{
    unsigned rgb = 0;
    sscanf(hex + (hex[0] == '#'), "%6x", &rgb);
    cairo_set_source_rgba(cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                          (rgb & 0xff) / 255.0, alpha);
}

static void stroke_fill(cairo_t *cr, const op *o)
{
    if (o->fill[0]) {
        source(cr, o->fill, o->alpha);
        o->stroke[0] ? cairo_fill_preserve(cr) : cairo_fill(cr);
    }
    if (o->stroke[0]) {
        source(cr, o->stroke, 1.0);
        cairo_set_line_width(cr, o->width);
        cairo_stroke(cr);
    }
    cairo_new_path(cr);
}

static void draw_op(cairo_t *cr, const op *o)
{
    const double *v = o->v;
    switch (o->kind) {
    case OP_TEXT:
        cairo_save(cr);
        set_font(cr, v[2], o->bold);
        source(cr, o->fill, 1.0);
        cairo_move_to(cr, v[0], v[1]);
        cairo_rotate(cr, -v[3] * M_PI / 180.0);
        cairo_show_text(cr, o->text);
        cairo_restore(cr);
        break;
    case OP_LINE: {
        static const double dash[] = {3.0, 3.0};
        cairo_set_dash(cr, dash, o->dashed ? 2 : 0, 0);
        cairo_move_to(cr, v[0], v[1]);
        cairo_line_to(cr, v[2], v[3]);
        source(cr, o->stroke, o->alpha);
        cairo_set_line_width(cr, o->width);
        cairo_stroke(cr);
        cairo_set_dash(cr, dash, 0, 0);
        break;
    }
    case OP_RECT:
        cairo_rectangle(cr, v[0], v[1], v[2] - v[0], v[3] - v[1]);
        stroke_fill(cr, o);
        break;
    case OP_CIRCLE:
        cairo_arc(cr, v[0], v[1], v[2], 0, 2 * M_PI);
        stroke_fill(cr, o);
        break;
    case OP_TRIANGLE: /* its tip at (x, y), turned v[3] degrees counter-clockwise from up */
        cairo_save(cr);
        cairo_translate(cr, v[0], v[1]);
        cairo_rotate(cr, -v[3] * M_PI / 180.0);
        cairo_move_to(cr, 0, 0);
        cairo_line_to(cr, -v[2] / 2, v[2]);
        cairo_line_to(cr, v[2] / 2, v[2]);
        cairo_close_path(cr);
        stroke_fill(cr, o);
        cairo_restore(cr);
        break;
    }
}

static cairo_status_t write_stream(void *closure, const unsigned char *data, unsigned int length)
{
    return fwrite(data, 1, length, closure) == length ? CAIRO_STATUS_SUCCESS
                                                      : CAIRO_STATUS_WRITE_ERROR;
}

static cairo_surface_t *surface_for(const sr_canvas *c, sr_plot_format format, FILE *f)
{
    if (format == SR_PLOT_PNG)
        return cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(c->width * PNG_SCALE),
                                          (int)ceil(c->height * PNG_SCALE));
    if (format == SR_PLOT_PDF)
        return cairo_pdf_surface_create_for_stream(write_stream, f, c->width, c->height);
    cairo_surface_t *s = cairo_svg_surface_create_for_stream(write_stream, f, c->width, c->height);
    cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
    return s;
}

bool sr_canvas_png_fits(const sr_canvas *c)
{
    return ceil(c->width * PNG_SCALE) <= SR_PNG_MAX_PIXELS &&
           ceil(c->height * PNG_SCALE) <= SR_PNG_MAX_PIXELS;
}

bool sr_canvas_render(const sr_canvas *c, sr_plot_format format, FILE *f)
{
    cairo_surface_t *s = surface_for(c, format, f);
    cairo_t *cr = cairo_create(s);
    if (format == SR_PLOT_PNG)
        cairo_scale(cr, PNG_SCALE, PNG_SCALE);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    for (size_t i = 0; i < c->n_ops; i++)
        draw_op(cr, &c->ops[i]);
    bool ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
    cairo_destroy(cr);
    if (ok && format == SR_PLOT_PNG)
        ok = cairo_surface_write_to_png_stream(s, write_stream, f) == CAIRO_STATUS_SUCCESS;
    cairo_surface_finish(s);
    ok = ok && cairo_surface_status(s) == CAIRO_STATUS_SUCCESS;
    cairo_surface_destroy(s);
    return ok && !ferror(f);
}
