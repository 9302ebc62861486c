/* sagerun plot: a figure of a comparison report (ours or the seed's) or of a sweep, drawn with
 * cairo as SVG, PNG or PDF by the output's extension (plot.h; plot_report.c, plot_sweep.c). */
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plot.h"
#include "sweep.h"

static void plot_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun plot REPORT.json|SUMMARY.json [-o FILE.svg|.png|.pdf] [--title TEXT]\n"
            "                    [--x AXIS] [--layout FILE.json]\n\n"
            "Draws a comparison report (ours or one in the seed's format):\n"
            "  - every timed call of every variant, round by round, one column per variant in\n"
            "    each round, with each round's median as a bar (drift shows as a slope);\n"
            "  - each variant's distribution: quartile box, whiskers to the furthest calls\n"
            "    within 1.5 IQR, the calls as dots, its p50 beside the box; all on one scale\n"
            "    where every box still spans a quarter of it (an A/A), else each variant on its\n"
            "    own scale (the panel's title says which);\n"
            "  - the speedup of each variant against the baseline: the paired estimate (filled\n"
            "    dot) with its 95%% interval over the verdict's noise band, its numbers and the\n"
            "    factor (\"1.25\u00d7 faster\") beside the bar; a hollow dot: the ratio of the p50s.\n"
            "A report in the seed's format has per-round summaries only: then each round's p50\n"
            "and min-max are drawn, and the interval is derived from the per-round p50s.\n"
            "A sweep's summary.json is drawn as the speedup of each variant (the paired estimate\n"
            "and its 95%% interval, from the reports beside it) along one axis of the sweep, a\n"
            "line per variant and combination of the other axes.\n\n"
            "  -o, --output FILE   the figure; its extension says the format: .svg, .png (drawn\n"
            "                      at 2x) or .pdf (default: the input with .svg for .json;\n"
            "                      - = SVG on stdout)\n"
            "  --title TEXT        the figure's title (default: the input's file name, or the\n"
            "                      sweep's name)\n"
            "  --x AXIS            for a sweep: the axis along x (default: the first axis with\n"
            "                      two or more values; without axes, the workloads in order)\n"
            "  --layout FILE       also write where every text was placed and every panel's\n"
            "                      scale, as JSON (in the units of the SVG's viewBox; the PNG\n"
            "                      is drawn at 2x): for tests and checks that no two texts\n"
            "                      overlap and every label lies inside the figure\n\n"
            "exit status: 0 success, 1 unreadable or malformed input or unwritable output,\n"
            "2 usage\n");
}

static char *default_output(const char *input)
{
    size_t n = strlen(input);
    bool json = n > 5 && strcmp(input + n - 5, ".json") == 0;
    char *out = malloc(n + 5);
    if (!out)
        return NULL;
    memcpy(out, input, n - (json ? 5 : 0));
    strcpy(out + n - (json ? 5 : 0), ".svg");
    return out;
}

static const char *base_name(const char *path)
{
    const char *base = strrchr(path, '/');
    return base ? base + 1 : path;
}

/* The figure of a report file. */
static sr_canvas *report_figure(const char *path, const char *title, sagerun_error *err)
{
    sr_plot_model m;
    if (sr_plot_model_read(path, &m, err) != SAGERUN_OK)
        return NULL;
    sr_canvas *c = NULL;
    if (m.variant_count == 0)
        sr_cli_error_set(err, SAGERUN_FORMAT, "%s: no variants to plot", path);
    else if (!(c = sr_plot_report(&m, title ? title : base_name(path))))
        sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sr_plot_model_clear(&m);
    return c;
}

/* The figure of a sweep summary: its reports lie beside it. */
static sr_canvas *sweep_figure(const char *path, const json_t *summary, const char *title,
                               const char *x_axis, sagerun_error *err)
{
    char *copy = strdup(path);
    if (!copy)
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory"), NULL;
    const char *name = json_string_value(json_object_get(json_object_get(summary, "sweep"),
                                                         "name"));
    char fallback[300];
    snprintf(fallback, sizeof fallback, "sweep %s", name ? name : base_name(path));
    sr_canvas *c = sr_plot_sweep(summary, dirname(copy), title ? title : fallback, x_axis, err);
    free(copy);
    if (!c)
        sr_cli_error_prefix(err, "%s", path);
    return c;
}

/* Whether no output is one of the reports the summary at path names (the figure reads them);
 * else says which, as for the summary itself. */
static bool spares_reports(const char *path, const json_t *summary, const char *const *opts,
                           const char *const *outs)
{
    const json_t *rows = json_object_get(summary, "workloads");
    size_t n = json_array_size(rows), k = 0;
    char *copy = strdup(path), **in = calloc(n ? n : 1, sizeof *in), *p;
    const char *dir = copy ? dirname(copy) : NULL;
    bool ok = copy && in;
    for (size_t i = 0; ok && i < n; i++) {
        const char *file = json_string_value(json_object_get(json_array_get(rows, i), "report"));
        if (file && (ok = asprintf(&p, "%s/%s", dir, file) >= 0))
            in[k++] = p;
    }
    if (!ok)
        sr_cli_error("plot: out of memory");
    ok = ok &&
         sr_cli_check_outputs("plot", opts, outs, 2, (const char *const *)in, k) == SR_EXIT_OK;
    while (k)
        free(in[--k]);
    free(in);
    free(copy);
    return ok;
}

typedef struct render_job {
    const sr_canvas *c;
    sr_plot_format format;
} render_job;

static bool render_cb(FILE *f, const void *user)
{
    const render_job *job = user;
    return sr_canvas_render(job->c, job->format, f);
}

static bool layout_cb(FILE *f, const void *user)
{
    json_t *j = sr_canvas_layout(user);
    bool ok = j && json_dumpf(j, f, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) == 0 &&
              fputc('\n', f) != EOF;
    json_decref(j);
    return ok;
}

/* Writes the figure (and the layout); an error message on failure. */
static int write_outputs(const sr_canvas *c, const char *output, const char *layout)
{
    sagerun_error err = {0};
    render_job job = {c, (sr_plot_format)sr_plot_format_of(output)};
    if (job.format == SR_PLOT_PNG && !sr_canvas_png_fits(c)) {
        sr_cli_error("plot: %s: the figure is too large for a PNG (more than %d pixels a side, "
                     "at %g x %g points): write .svg or .pdf",
                     output, SR_PNG_MAX_PIXELS, sr_canvas_width(c), sr_canvas_height(c));
        return SR_EXIT_ERROR;
    }
    if (strcmp(output, "-") == 0) {
        if (!sr_canvas_render(c, SR_PLOT_SVG, stdout) || fflush(stdout) != 0) {
            sr_cli_error("plot: cannot write the SVG to stdout");
            return SR_EXIT_ERROR;
        }
    } else if (sr_cli_write_file(output, render_cb, &job, &err) != SAGERUN_OK) {
        sr_cli_error("plot: %s", err.message);
        return SR_EXIT_ERROR;
    }
    if (layout && sr_cli_write_file(layout, layout_cb, c, &err) != SAGERUN_OK) {
        sr_cli_error("plot: --layout: %s", err.message);
        return SR_EXIT_ERROR;
    }
    return SR_EXIT_OK;
}

typedef struct plot_args {
    const char *input, *output, *title, *x_axis, *layout;
} plot_args;

static int parse_args(int argc, char **argv, plot_args *a)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"title", required_argument, 0, 't'},
                                         {"x", required_argument, 0, 'x'},
                                         {"layout", required_argument, 0, 'l'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case 't': a->title = optarg; break;
        case 'x': a->x_axis = optarg; break;
        case 'l': a->layout = optarg; break;
        case 'h': plot_usage(stdout); return SR_EXIT_OK;
        default: return sr_cli_bad_option("plot", c, argv, opts);
        }
    }
    if (argc - optind != 1) {
        sr_cli_error("plot: expected one report or sweep summary (see 'sagerun plot --help')");
        return SR_EXIT_USAGE;
    }
    a->input = argv[optind];
    return -1;
}

int sr_cmd_plot(int argc, char **argv)
{
    plot_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    char *out_path = a.output ? NULL : default_output(a.input);
    const char *const out_opts[] = {"-o", "--layout"}, *const in[] = {a.input};
    const char *outs[] = {a.output ? a.output : out_path, a.layout};
    if (!outs[0]) {
        sr_cli_error("plot: out of memory");
        return SR_EXIT_ERROR;
    }
    rc = SR_EXIT_ERROR;
    sagerun_error err = {0};
    sr_canvas *c = NULL;
    json_t *summary = NULL;
    if ((rc = sr_cli_check_outputs("plot", out_opts, outs, 2, in, 1)) != SR_EXIT_OK)
        goto out;
    rc = SR_EXIT_ERROR;
    if (sr_plot_format_of(outs[0]) < 0) { /* after the checks that name a file we must not touch */
        sr_cli_error("plot: -o '%s': the extension says the format: .svg, .png or .pdf", outs[0]);
        rc = SR_EXIT_USAGE;
        goto out;
    }
    if (!sr_canvas_load(&err)) {
        sr_cli_error("plot: %s", err.message);
        goto out;
    }
    summary = sr_sweep_summary_load(a.input, &err);
    if (summary && !spares_reports(a.input, summary, out_opts, outs))
        goto out;
    if (err.status == SAGERUN_OK && a.x_axis && !summary) { /* an option that does not apply */
        sr_cli_error("plot: --x: %s is a report, not a sweep summary", a.input);
        rc = SR_EXIT_USAGE;
        goto out;
    }
    c = err.status != SAGERUN_OK ? NULL
        : summary                ? sweep_figure(a.input, summary, a.title, a.x_axis, &err)
                                 : report_figure(a.input, a.title, &err);
    if (!c) {
        sr_cli_error("plot: %s", err.message);
        if (summary && err.status == SAGERUN_INVALID_ARGUMENT) /* --x names no axis: usage */
            rc = SR_EXIT_USAGE;
        goto out;
    }
    rc = write_outputs(c, outs[0], a.layout);
    if (rc == SR_EXIT_OK && !a.output) /* a name of our choosing: say which (it said nothing) */
        fprintf(stderr, "sagerun: plot: wrote %s\n", outs[0]);
out:
    sr_canvas_destroy(c);
    sr_canvas_release_fonts();
    json_decref(summary);
    free(out_path);
    return rc;
}
