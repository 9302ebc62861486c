/* cairo and fontconfig for `sagerun plot`, loaded when a figure is drawn (libcairo.so.2 and
 * libfontconfig.so.1, with dlopen): the sagerun command does not link them, so every other
 * command runs on a machine without them (a GPU node, typically), and plot says what is missing.
 * The headers give the types and prototypes at build time (libcairo2-dev); plot_canvas.c calls
 * the functions by their own names, which the #defines below turn into the table's entries.
 * Implemented in cairo_lib.c. */
#ifndef SAGERUN_CLI_CAIRO_LIB_H
#define SAGERUN_CLI_CAIRO_LIB_H

#include <stdbool.h>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>

#include "cli.h"

/* every function plot_canvas.c calls; X(library, name) */
#define SR_CAIRO_FUNCTIONS(X)                                                                     \
    X(cairo, cairo_arc) X(cairo, cairo_close_path) X(cairo, cairo_create)                         \
    X(cairo, cairo_debug_reset_static_data) X(cairo, cairo_destroy) X(cairo, cairo_fill)          \
    X(cairo, cairo_fill_preserve) X(cairo, cairo_font_extents) X(cairo, cairo_font_options_create) \
    X(cairo, cairo_font_options_destroy) X(cairo, cairo_font_options_set_hint_metrics)            \
    X(cairo, cairo_font_options_set_hint_style) X(cairo, cairo_image_surface_create)              \
    X(cairo, cairo_line_to) X(cairo, cairo_move_to) X(cairo, cairo_new_path) X(cairo, cairo_paint) \
    X(cairo, cairo_pdf_surface_create_for_stream) X(cairo, cairo_rectangle)                       \
    X(cairo, cairo_restore) X(cairo, cairo_rotate) X(cairo, cairo_save) X(cairo, cairo_scale)     \
    X(cairo, cairo_select_font_face) X(cairo, cairo_set_dash) X(cairo, cairo_set_font_options)    \
    X(cairo, cairo_set_font_size) X(cairo, cairo_set_line_cap) X(cairo, cairo_set_line_width)     \
    X(cairo, cairo_set_source_rgb) X(cairo, cairo_set_source_rgba) X(cairo, cairo_show_text)      \
    X(cairo, cairo_status) X(cairo, cairo_stroke) X(cairo, cairo_surface_destroy)                 \
    X(cairo, cairo_surface_finish) X(cairo, cairo_surface_status)                                 \
    X(cairo, cairo_surface_write_to_png_stream) X(cairo, cairo_svg_surface_create_for_stream)     \
    X(cairo, cairo_svg_surface_restrict_to_version) X(cairo, cairo_text_extents)                  \
    X(cairo, cairo_translate) X(fontconfig, FcFini)

typedef struct sr_cairo_table {
#define SR_CAIRO_ENTRY(lib, name) __typeof__(&name) name;
    SR_CAIRO_FUNCTIONS(SR_CAIRO_ENTRY)
#undef SR_CAIRO_ENTRY
} sr_cairo_table;

extern sr_cairo_table sr_cairo;

/* Loads both libraries and every function once; false with err set (which library, which
 * function, and what to install) when one is missing. */
bool sr_cairo_load(sagerun_error *err);
/* Whether sr_cairo_load has succeeded. */
bool sr_cairo_loaded(void);

#ifndef SR_CAIRO_LOADER
#define cairo_arc (sr_cairo.cairo_arc)
#define cairo_close_path (sr_cairo.cairo_close_path)
#define cairo_create (sr_cairo.cairo_create)
#define cairo_debug_reset_static_data (sr_cairo.cairo_debug_reset_static_data)
#define cairo_destroy (sr_cairo.cairo_destroy)
#define cairo_fill (sr_cairo.cairo_fill)
#define cairo_fill_preserve (sr_cairo.cairo_fill_preserve)
#define cairo_font_extents (sr_cairo.cairo_font_extents)
#define cairo_font_options_create (sr_cairo.cairo_font_options_create)
#define cairo_font_options_destroy (sr_cairo.cairo_font_options_destroy)
#define cairo_font_options_set_hint_metrics (sr_cairo.cairo_font_options_set_hint_metrics)
#define cairo_font_options_set_hint_style (sr_cairo.cairo_font_options_set_hint_style)
#define cairo_image_surface_create (sr_cairo.cairo_image_surface_create)
#define cairo_line_to (sr_cairo.cairo_line_to)
#define cairo_move_to (sr_cairo.cairo_move_to)
#define cairo_new_path (sr_cairo.cairo_new_path)
#define cairo_paint (sr_cairo.cairo_paint)
#define cairo_pdf_surface_create_for_stream (sr_cairo.cairo_pdf_surface_create_for_stream)
#define cairo_rectangle (sr_cairo.cairo_rectangle)
#define cairo_restore (sr_cairo.cairo_restore)
#define cairo_rotate (sr_cairo.cairo_rotate)
#define cairo_save (sr_cairo.cairo_save)
#define cairo_scale (sr_cairo.cairo_scale)
#define cairo_select_font_face (sr_cairo.cairo_select_font_face)
#define cairo_set_dash (sr_cairo.cairo_set_dash)
#define cairo_set_font_options (sr_cairo.cairo_set_font_options)
#define cairo_set_font_size (sr_cairo.cairo_set_font_size)
#define cairo_set_line_cap (sr_cairo.cairo_set_line_cap)
#define cairo_set_line_width (sr_cairo.cairo_set_line_width)
#define cairo_set_source_rgb (sr_cairo.cairo_set_source_rgb)
#define cairo_set_source_rgba (sr_cairo.cairo_set_source_rgba)
#define cairo_show_text (sr_cairo.cairo_show_text)
#define cairo_status (sr_cairo.cairo_status)
#define cairo_stroke (sr_cairo.cairo_stroke)
#define cairo_surface_destroy (sr_cairo.cairo_surface_destroy)
#define cairo_surface_finish (sr_cairo.cairo_surface_finish)
#define cairo_surface_status (sr_cairo.cairo_surface_status)
#define cairo_surface_write_to_png_stream (sr_cairo.cairo_surface_write_to_png_stream)
#define cairo_svg_surface_create_for_stream (sr_cairo.cairo_svg_surface_create_for_stream)
#define cairo_svg_surface_restrict_to_version (sr_cairo.cairo_svg_surface_restrict_to_version)
#define cairo_text_extents (sr_cairo.cairo_text_extents)
#define cairo_translate (sr_cairo.cairo_translate)
#define FcFini (sr_cairo.FcFini)
#endif

#endif
