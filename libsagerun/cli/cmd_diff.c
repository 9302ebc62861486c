/* sagerun diff: two reports of one workload, or two sweeps point by point (their summaries), each
 * variant judged from the per-round p50s both carry (report_diff.c); exit 4 on a regression. */
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "calibration.h"
#include "repeat.h"
#include "sweep.h"

static void diff_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun diff [--threshold PCT] [--absolute] [--between-run-sd PCT]\n"
            "                    [--fail-if-slower[=PCT]] [--require-faster PCT]\n"
            "                    [--json F] [--markdown F] [--csv F] OLD NEW\n"
            "       sagerun diff --calibrate RUNS\n\n"
            "Compares two reports of the same workload (same q_shape and metadata), or two\n"
            "sweeps (their summary.json: each workload of OLD against the one of the same name\n"
            "in NEW, read from the reports beside the summaries). OLD and NEW may each be the\n"
            "index of several runs (compare --repeat N --json FILE, sweep --repeat N: DIR/\n"
            "repeats.json). Variants are matched by label.\n\n"
            "The number shown is the speedup of NEW against OLD, as compare shows a variant's\n"
            "against its baseline (+ = NEW faster), with its 95%% interval and the ratio of\n"
            "the times ('1.05\u00d7 slower'). By default each variant is judged by its time over its own run's\n"
            "baseline's (both ran interleaved in each round), so what slowed a whole run\n"
            "alike (load, clocks, another machine) cancels; the baseline is not judged.\n"
            "Two runs share no rounds, and a whole process moves by more than its interval\n"
            "holds, so: with several runs on a side the process is the unit (one estimate\n"
            "per run, weighted by its own interval and the runs' spread; --absolute: Welch's\n"
            "t over the runs); with one run per side both runs' rounds are\n"
            "taken unpaired (Yuen), widened by the calibrated between-run sd where there is\n"
            "one, and the diff says which change it cannot tell from run-to-run movement.\n"
            "'slower' (a regression) only when the whole interval lies beyond the threshold.\n"
            "Reports with fewer than two rounds are compared by their p50s (the p50 rule).\n\n"
            "  --threshold PCT   noise threshold in percent (default 1, as compare's)\n"
            "  --absolute        judge each variant by its time alone (before 0.3 the default)\n"
            "  --relative        by its time over its run's baseline's (the default)\n"
            "  --between-run-sd PCT  run-to-run sd of a variant's estimate on this machine, for\n"
            "                    one run per side (default: the calibration of the device)\n"
            "  --calibrate RUNS  store the run-to-run sd of RUNS (an index of 3 or more runs:\n"
            "                    compare or sweep --repeat; an A/A is best) for its device in\n"
            "                    the calibration file, and print it\n"
            "  --fail-if-slower[=PCT]  exit 5 when a variant's whole interval is slower than\n"
            "                    -PCT (default: the threshold), as compare's gate\n"
            "  --require-faster PCT    exit 5 unless every variant's interval lies above +PCT\n"
            "  --json FILE       write the rows as JSON\n"
            "  --markdown FILE   write them as markdown\n"
            "  --csv FILE        write them as CSV (one row per point and variant)\n"
            "  A FILE of - is stdout, and the table then goes to stderr\n\n"
            "calibration file: $SAGERUN_CALIBRATION, else $XDG_CONFIG_HOME/sagerun/\n"
            "calibration.json (~/.config/...), one entry per device (backend and name).\n\n"
            "columns: old p50 and new p50 (the median of the runs' p50s); speedup [95%% CI]\n"
            "and times (the judged change, + = new faster); runs (old/new runs that judged\n"
            "it); verdict (compare's words for new against old); byte-exact; finding.\n\n"
            "exit status:\n"
            "  0  no regression, and the gates given are met\n"
            "  1  error: unreadable or malformed report, or not the same workload\n"
            "  2  usage error\n"
            "  4  regression: a variant slower beyond the threshold, one that no longer runs or\n"
            "     is missing (or a sweep's workload), one that lost byte-exactness, or one\n"
            "     whose output was accepted in OLD (byte-exact, or within its tolerance:\n"
            "     compare --max-ulp ...) and is not in NEW ('tol. FAIL')\n"
            "  5  no regression, but a gate is not met (--fail-if-slower, --require-faster)\n");
}

static const json_t *find_point(const json_t *summary, const char *name)
{
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(summary, "workloads"), i, w) {
        const char *n = json_string_value(json_object_get(w, "name"));
        if (n && strcmp(n, name) == 0)
            return w;
    }
    return NULL;
}

/* The index of a row in its summary's workloads. */
static size_t point_index(const json_t *summary, const json_t *row)
{
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(summary, "workloads"), i, w)
        if (w == row)
            return i;
    return 0;
}

/* The outputs of the diff (--json, --markdown, --csv; NULL where not given). */
typedef const char *const diff_outputs[3];

/* The path of a point's "report" file, beside the summary; false when the row has none. */
static bool point_path(const char *summary_path, const json_t *w, char *path, size_t len)
{
    const char *file = json_string_value(json_object_get(w, "report"));
    char *copy = file ? strdup(summary_path) : NULL;
    if (!copy)
        return false;
    snprintf(path, len, "%s/%s", dirname(copy), file);
    free(copy);
    return true;
}

/* A point's report that one of the diff's outputs would overwrite: an error naming both. */
static sagerun_status point_spared(const char *summary_path, const json_t *w, diff_outputs outs,
                                   sagerun_error *err)
{
    static const char *const opts[] = {"--json", "--markdown", "--csv"};
    char path[4096];
    if (!point_path(summary_path, w, path, sizeof path))
        return SAGERUN_OK; /* no report to spare */
    for (int k = 0; k < 3; k++)
        if (outs[k] && (strcmp(outs[k], path) == 0 || sr_cli_same_file(outs[k], path)))
            return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                    "%s %s is the report %s: refusing to overwrite it", opts[k],
                                    outs[k], path);
    return SAGERUN_OK;
}

/* Every point's report of a summary, spared by the outputs: a point only one sweep has (missing
 * in new, new in new, failed in old) is never read, but it is a file the outputs may name. */
static sagerun_status points_spared(const char *summary_path, const json_t *summary,
                                    diff_outputs outs, sagerun_error *err)
{
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(summary, "workloads"), i, w)
        if (point_spared(summary_path, w, outs, err) != SAGERUN_OK)
            return err->status;
    return SAGERUN_OK;
}

/* The report of one point of a summary. */
static sagerun_status read_point(const char *summary_path, const json_t *w,
                                 sagerun_compare_result **r, sagerun_error *err)
{
    char path[4096];
    if (!point_path(summary_path, w, path, sizeof path))
        return sr_cli_error_set(err, SAGERUN_FORMAT, "no report (status %s%s%s)",
                                json_string_value(json_object_get(w, "status")) ?: "?",
                                json_string_value(json_object_get(w, "error")) ? ": " : "",
                                json_string_value(json_object_get(w, "error")) ?: "");
    return sagerun_compare_result_read(path, r, err);
}

/* One side of the diff: the runs given (a report or a summary, or a repeat index of them). */
typedef struct diff_side {
    const char *path; /* as given */
    char **runs;      /* the files of its runs */
    size_t n;
    bool sweep;
    json_t **summaries; /* sweep: each run's summary */
} diff_side;

static void side_free(diff_side *s)
{
    for (size_t i = 0; s->summaries && i < s->n; i++)
        json_decref(s->summaries[i]);
    free(s->summaries);
    sr_cli_repeat_paths_free(s->runs, s->n);
    memset(s, 0, sizeof(*s));
}

/* The runs of path: a repeat index's, or path itself; each a summary or (all) reports. */
static sagerun_status side_load(diff_side *s, const char *path, sagerun_error *err)
{
    bool index_sweep = false;
    memset(s, 0, sizeof(*s));
    s->path = path;
    s->runs = sr_cli_repeat_paths(path, &s->n, &index_sweep, err);
    if (!s->runs && err->status != SAGERUN_OK)
        return err->status;
    if (!s->runs && (!(s->runs = calloc(1, sizeof(char *))) || !(s->runs[0] = strdup(path))))
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    s->n = s->n ? s->n : 1;
    if (!(s->summaries = calloc(s->n, sizeof(json_t *))))
        return sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < s->n; i++) {
        s->summaries[i] = sr_sweep_summary_load(s->runs[i], err);
        if (!s->summaries[i] && err->status != SAGERUN_OK)
            return err->status;
        if (i && (s->summaries[i] != NULL) != s->sweep)
            return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                    "%s: its runs mix sweep summaries and reports", path);
        s->sweep = s->summaries[i] != NULL;
    }
    return SAGERUN_OK;
}

/* The reports of one point in every run of a side that has it, into rs (*count of them). A row
 * that names a report that does not read is an error; *why: the last row's reason for having
 * none ("" where no run has the point). */
static sagerun_status side_point(const diff_side *s, bool is_old, const char *name,
                                 sagerun_compare_result **rs, size_t *count, char *why,
                                 size_t why_len, sagerun_error *err)
{
    *count = 0;
    why[0] = '\0';
    for (size_t r = 0; r < s->n; r++) {
        const json_t *w = find_point(s->summaries[r], name);
        sagerun_error perr = {0};
        if (!w)
            continue;
        if (read_point(s->runs[r], w, &rs[*count], &perr) == SAGERUN_OK) {
            (*count)++;
            continue;
        }
        if (json_is_string(json_object_get(w, "report")) && !is_old) /* it ran: must read */
            return sr_cli_error_set(err, perr.status, "%s: workload %s: %s", s->runs[r], name,
                                    perr.message);
        if (json_is_string(json_object_get(w, "report")))
            return sr_cli_error_set(err, perr.status, "%s: workloads[%zu] (%s): %s", s->runs[r],
                                    point_index(s->summaries[r], w), name, perr.message);
        snprintf(why, why_len, "%s", perr.message);
    }
    return SAGERUN_OK;
}

static void results_free(sagerun_compare_result **rs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sagerun_compare_result_destroy(rs[i]);
}

/* One point of the sweeps: every run's report of it on each side. *judged: it was compared. */
static sagerun_status diff_point(sagerun_diff *d, const diff_side *o, const diff_side *n,
                                 const char *name, size_t *judged, sagerun_error *err)
{
    sagerun_compare_result **a = calloc(o->n, sizeof(*a)), **b = calloc(n->n, sizeof(*b));
    size_t na = 0, nb = 0;
    char why[SAGERUN_ERROR_MESSAGE_SIZE], nwhy[SAGERUN_ERROR_MESSAGE_SIZE + 32];
    sagerun_status st = a && b ? side_point(o, true, name, a, &na, why, sizeof why, err)
                               : sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    if (st == SAGERUN_OK && !na) /* it failed in every old run: nothing to regress from */
        fprintf(stderr, "sagerun: diff: %s: old: %s (not compared)\n", sr_cli_text(name),
                sr_cli_text(why));
    else if (st == SAGERUN_OK) {
        (*judged)++;
        st = side_point(n, false, name, b, &nb, why, sizeof why, err);
        if (st == SAGERUN_OK && !nb) { /* missing or failed in every new run: a regression */
            snprintf(nwhy, sizeof nwhy, why[0] ? "NO REPORT in new: %s" : "MISSING in new", why);
            st = sagerun_diff_add_missing(d, name, nwhy, err);
        } else if (st == SAGERUN_OK) {
            st = sagerun_diff_add_runs(d, name, (const sagerun_compare_result *const *)a, na,
                                       (const sagerun_compare_result *const *)b, nb, err);
            if (st != SAGERUN_OK)
                sr_cli_error_prefix(err, "point %s (%s against %s)", name, o->path, n->path);
        }
    }
    results_free(a, na);
    results_free(b, nb);
    free(a);
    free(b);
    return st;
}

static sagerun_status diff_sweeps(sagerun_diff *d, const diff_side *o, const diff_side *n,
                                  diff_outputs outs, sagerun_error *err)
{
    size_t i, judged = 0;
    const json_t *w;
    for (size_t k = 0; k < o->n + n->n; k++)
        if (points_spared(k < o->n ? o->runs[k] : n->runs[k - o->n],
                          k < o->n ? o->summaries[k] : n->summaries[k - o->n], outs,
                          err) != SAGERUN_OK)
            return err->status;
    json_array_foreach(json_object_get(o->summaries[0], "workloads"), i, w) {
        const char *name = json_string_value(json_object_get(w, "name"));
        if (!name)
            return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: workloads[%zu]: no name",
                                    o->runs[0], i);
        if (diff_point(d, o, n, name, &judged, err) != SAGERUN_OK)
            return err->status;
    }
    json_array_foreach(json_object_get(n->summaries[0], "workloads"), i, w) { /* said only */
        const char *name = json_string_value(json_object_get(w, "name"));
        if (name && !find_point(o->summaries[0], name))
            fprintf(stderr, "sagerun: diff: %s: new in %s, not in %s (not compared)\n",
                    sr_cli_text(name), sr_cli_text(n->path), sr_cli_text(o->path));
    }
    if (!judged) /* a gate that compared nothing must not pass */
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: no point with a report to compare (%zu workloads)", o->path,
                                json_array_size(json_object_get(o->summaries[0], "workloads")));
    return SAGERUN_OK;
}

/* Every run's report of a side (rs: s->n of them, read). */
static sagerun_status side_reports(const diff_side *s, sagerun_compare_result **rs,
                                   sagerun_error *err)
{
    for (size_t i = 0; i < s->n; i++)
        if (sagerun_compare_result_read(s->runs[i], &rs[i], err) != SAGERUN_OK)
            return err->status;
    return SAGERUN_OK;
}

static sagerun_status diff_reports(sagerun_diff *d, const diff_side *o, const diff_side *n,
                                   sagerun_error *err)
{
    sagerun_compare_result **a = calloc(o->n, sizeof(*a)), **b = calloc(n->n, sizeof(*b));
    sagerun_status st = !a || !b ? sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory")
                                 : side_reports(o, a, err);
    if (st == SAGERUN_OK && (st = side_reports(n, b, err)) == SAGERUN_OK) {
        st = sagerun_diff_add_runs(d, NULL, (const sagerun_compare_result *const *)a, o->n,
                                   (const sagerun_compare_result *const *)b, n->n, err);
        if (st != SAGERUN_OK)
            sr_cli_error_prefix(err, "%s against %s", o->path, n->path);
    }
    results_free(a, a ? o->n : 0);
    results_free(b, b ? n->n : 0);
    free(a);
    free(b);
    return st;
}

static sagerun_status diff_files(sagerun_diff *d, const diff_side *o, const diff_side *n,
                                 diff_outputs outs, sagerun_error *err)
{
    if (o->sweep != n->sweep)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "%s is a sweep summary and %s is not: diff two reports or two "
                                "sweeps",
                                o->sweep ? o->path : n->path, o->sweep ? n->path : o->path);
    return o->sweep ? diff_sweeps(d, o, n, outs, err) : diff_reports(d, o, n, err);
}

/* The between-run sd of the old side's device from the calibration (unless given): a note of
 * where it came from on stderr. */
static void calibrated_sd(const diff_side *o, sagerun_report_diff_options *opts)
{
    char key[512], source[4096], report[4096];
    const char *first = o->runs[0];
    if (o->sweep) {
        size_t i;
        const json_t *w;
        first = NULL;
        json_array_foreach(json_object_get(o->summaries[0], "workloads"), i, w)
            if (!first && point_path(o->runs[0], w, report, sizeof report))
                first = report;
    }
    if (!first || !sr_cli_device_key(first, key, sizeof key))
        return;
    opts->between_run_sd_percent =
        sr_cli_calibration_sd(key, opts->relative != 0, source, sizeof source);
    if (opts->between_run_sd_percent > 0)
        fprintf(stderr, "sagerun: diff: between-run sd %.3g%% of %s (calibration %s)\n",
                opts->between_run_sd_percent, sr_cli_text(key), sr_cli_text(source));
}

/* The diff's options from the command line; an exit code other than OK when it ends here. */
typedef struct diff_cmd {
    sagerun_report_diff_options o;
    const char *outs[3], *calibrate;
    bool sd_given;
} diff_cmd;

static int parse_diff(diff_cmd *c, int argc, char **argv)
{
    enum { O_ABS = 300, O_SD, O_CALIB, O_SLOWER, O_FASTER };
    static const struct option opts[] = {{"threshold", required_argument, 0, 't'},
                                         {"json", required_argument, 0, 'j'},
                                         {"markdown", required_argument, 0, 'm'},
                                         {"csv", required_argument, 0, 'c'},
                                         {"relative", no_argument, 0, 'r'},
                                         {"absolute", no_argument, 0, O_ABS},
                                         {"between-run-sd", required_argument, 0, O_SD},
                                         {"calibrate", required_argument, 0, O_CALIB},
                                         {"fail-if-slower", optional_argument, 0, O_SLOWER},
                                         {"require-faster", required_argument, 0, O_FASTER},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int ch;
    bool slower = false;
    double slower_pct = NAN;
    optind = 1;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        bool ok = true;
        switch (ch) {
        case 't': ok = sr_cli_parse_decimal("diff", "--threshold", optarg, 0, true, 1e6,
                                            &c->o.threshold_percent); break;
        case 'j': c->outs[0] = optarg; break;
        case 'm': c->outs[1] = optarg; break;
        case 'c': c->outs[2] = optarg; break;
        case 'r': c->o.relative = 1; break;
        case O_ABS: c->o.relative = 0; break;
        case O_SD: ok = sr_cli_parse_decimal("diff", "--between-run-sd", optarg, 0, true, 100,
                                             &c->o.between_run_sd_percent);
                   c->sd_given = true; break;
        case O_CALIB: c->calibrate = optarg; break;
        case O_SLOWER: slower = true;
                       ok = !optarg || sr_cli_parse_decimal("diff", "--fail-if-slower", optarg, 0,
                                                            true, 1e6, &slower_pct); break;
        case O_FASTER: ok = sr_cli_parse_decimal("diff", "--require-faster", optarg, -1e6, true,
                                                 1e6, &c->o.require_faster_percent); break;
        case 'h': diff_usage(stdout); return -1;
        default: return sr_cli_bad_option("diff", ch, argv, opts);
        }
        if (!ok)
            return SR_EXIT_USAGE;
    }
    if (slower) /* the threshold by default, as compare's (whichever order they came in) */
        c->o.fail_if_slower_percent = isfinite(slower_pct) ? slower_pct : c->o.threshold_percent;
    if (c->calibrate ? argc - optind != 0 : argc - optind != 2) {
        sr_cli_error(c->calibrate ? "diff: --calibrate takes no other file"
                                  : "diff: expected two report files or two sweep summaries "
                                    "(see 'sagerun diff --help')");
        return SR_EXIT_USAGE;
    }
    return SR_EXIT_OK;
}

/* The table and the files; the exit code of the findings: 4 a regression, else 5 a gate. */
static int diff_output(const sagerun_diff *d, const char *const *outs)
{
    static const char *const names[] = {"--json", "--markdown", "--csv"};
    sagerun_status (*const write[])(const sagerun_diff *, const char *, sagerun_error *) = {
        sagerun_diff_write_json, sagerun_diff_write_markdown, sagerun_diff_write_csv};
    FILE *table = sr_cli_table_out(outs, 3);
    FILE *out = sr_cli_escaping_stream(table);
    sagerun_diff_print(d, out, 0);
    sr_cli_escaping_close(out, table);
    fflush(table);
    sagerun_error err = {0};
    for (int k = 0; k < 3; k++)
        if (outs[k] && write[k](d, outs[k], &err) != SAGERUN_OK) {
            sr_cli_error("diff: %s: %s", names[k], err.message);
            return SR_EXIT_ERROR;
        }
    unsigned f = sagerun_diff_findings(d);
    return f & ~SAGERUN_DIFF_GATE ? SR_EXIT_REGRESSION : f ? SR_EXIT_GATE : SR_EXIT_OK;
}

int sr_cmd_diff(int argc, char **argv)
{
    diff_cmd c = {0};
    sagerun_report_diff_options_init(&c.o);
    int rc = parse_diff(&c, argc, argv);
    if (rc != SR_EXIT_OK)
        return rc < 0 ? SR_EXIT_OK : rc;
    if (c.calibrate)
        return sr_cli_calibrate(c.calibrate);
    const char *const out_opts[] = {"--json", "--markdown", "--csv"};
    const char *const ins[] = {argv[optind], argv[optind + 1]};
    if ((rc = sr_cli_check_outputs("diff", out_opts, c.outs, 3, ins, 2)) != SR_EXIT_OK)
        return rc;
    sagerun_diff *d = NULL;
    sagerun_error err = {0};
    diff_side o = {0}, n = {0};
    rc = SR_EXIT_ERROR;
    if (side_load(&o, ins[0], &err) == SAGERUN_OK && side_load(&n, ins[1], &err) == SAGERUN_OK) {
        if (!c.sd_given)
            calibrated_sd(&o, &c.o);
        if (sagerun_diff_create(&c.o, &d, &err) == SAGERUN_OK &&
            diff_files(d, &o, &n, c.outs, &err) == SAGERUN_OK)
            rc = diff_output(d, c.outs);
    }
    if (rc == SR_EXIT_ERROR && err.status != SAGERUN_OK)
        sr_cli_error("diff: %s", err.message);
    side_free(&o);
    side_free(&n);
    sagerun_diff_destroy(d);
    return rc;
}
