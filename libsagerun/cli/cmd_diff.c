/* sagerun diff: two reports of one workload, or two sweeps point by point (their summaries), each
 * variant judged from the per-round p50s both carry (report_diff.c); exit 4 on a regression. */
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sweep.h"

static void diff_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun diff [--threshold PCT] [--relative] [--json F] [--markdown F] [--csv F]\n"
            "                    OLD NEW\n\n"
            "Compares two reports of the same workload (same q_shape and metadata), or two\n"
            "sweeps (their summary.json: each workload of OLD against the one of the same name\n"
            "in NEW, read from the reports beside the summaries). Variants are matched by label.\n"
            "Each change is judged statistically as compare judges a speedup: the per-round\n"
            "p50s of the old and the new run, paired by round, give the log-ratio's 20%%-trimmed\n"
            "mean and its 95%% interval (runs of different lengths: all rounds of each, Yuen's\n"
            "two-sample interval on the logs); 'slower' (a regression) only when the whole\n"
            "interval lies beyond the threshold. Reports with fewer than two rounds are compared\n"
            "by their p50s (the p50 rule, said in the finding). The interval holds the noise\n"
            "of the rounds within each run, not what differs between the two runs (another\n"
            "load, other clocks): re-run, or use --relative, where that matters.\n\n"
            "  --threshold PCT   noise threshold in percent (default 1, as compare's)\n"
            "  --relative        judge each variant by its time over its own run's baseline,\n"
            "                    round by round (both ran interleaved in each round), instead of\n"
            "                    by its time: what slowed a whole run alike (load on a shared\n"
            "                    host, clocks, another machine) cancels. The baseline (the same\n"
            "                    label in both) is not judged; without one, by time (a note).\n"
            "                    A baseline that moved more than 10%% between the runs says so\n"
            "                    in its finding: the runs' conditions differ at that point\n"
            "  --json FILE       write the rows as JSON\n"
            "  --markdown FILE   write them as markdown\n"
            "  --csv FILE        write them as CSV (one row per point and variant)\n"
            "  A FILE of - is stdout, and the table then goes to stderr\n\n"
            "columns: change [95%% CI] is the new time against the old (+ = slower); verdict is\n"
            "compare's (faster / slower / same / below-threshold / ambiguous) for the new run.\n\n"
            "exit status:\n"
            "  0  no regression\n"
            "  1  error: unreadable or malformed report, or not the same workload\n"
            "  2  usage error\n"
            "  4  regression: a variant slower beyond the threshold, one that no longer runs or\n"
            "     is missing (or a sweep's workload), one that lost byte-exactness, or one\n"
            "     whose output was accepted in OLD (byte-exact, or within its tolerance:\n"
            "     compare --max-ulp ...) and is not in NEW ('tol. FAIL')\n");
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

static sagerun_status diff_sweeps(sagerun_diff *d, const char *old_path, const json_t *os,
                                  const char *new_path, const json_t *ns, diff_outputs outs,
                                  sagerun_error *err)
{
    size_t i, judged = 0;
    const json_t *w;
    if (points_spared(old_path, os, outs, err) != SAGERUN_OK ||
        points_spared(new_path, ns, outs, err) != SAGERUN_OK)
        return err->status;
    json_array_foreach(json_object_get(os, "workloads"), i, w) {
        const char *name = json_string_value(json_object_get(w, "name"));
        if (!name)
            return sr_cli_error_set(err, SAGERUN_FORMAT, "%s: workloads[%zu]: no name", old_path, i);
        const json_t *nw = find_point(ns, name);
        if (!nw) {
            judged++;
            if (sagerun_diff_add_missing(d, name, "MISSING in new", err) != SAGERUN_OK)
                return err->status;
            continue;
        }
        sagerun_compare_result *a = NULL, *b = NULL;
        sagerun_error perr = {0};
        char why[sizeof(perr.message) + 32];
        if (read_point(old_path, w, &a, &perr) != SAGERUN_OK) {
            if (json_is_string(json_object_get(w, "report"))) /* it ran: its report must read */
                return sr_cli_error_set(err, perr.status, "%s: workloads[%zu] (%s): %s", old_path,
                                        i, name, perr.message);
            fprintf(stderr, "sagerun: diff: %s: old: %s (not compared)\n", sr_cli_text(name),
                    sr_cli_text(perr.message));
            continue; /* it failed in the old sweep: nothing to regress from */
        }
        judged++;
        if (read_point(new_path, nw, &b, &perr) != SAGERUN_OK) {
            sagerun_compare_result_destroy(a);
            if (json_is_string(json_object_get(nw, "report"))) /* it ran: as in old, an error */
                return sr_cli_error_set(err, perr.status, "%s: workload %s: %s", new_path, name,
                                        perr.message);
            /* it failed in the new sweep: a regression */
            snprintf(why, sizeof why, "NO REPORT in new: %s", perr.message);
            if (sagerun_diff_add_missing(d, name, why, err) != SAGERUN_OK)
                return err->status;
            continue;
        }
        sagerun_status st = sagerun_diff_add(d, name, a, b, err);
        if (st != SAGERUN_OK)
            sr_cli_error_prefix(err, "point %s (%s against %s)", name, old_path, new_path);
        sagerun_compare_result_destroy(a);
        sagerun_compare_result_destroy(b);
        if (st != SAGERUN_OK)
            return st;
    }
    json_array_foreach(json_object_get(ns, "workloads"), i, w) { /* not a regression: said */
        const char *name = json_string_value(json_object_get(w, "name"));
        if (name && !find_point(os, name))
            fprintf(stderr, "sagerun: diff: %s: new in %s, not in %s (not compared)\n",
                    sr_cli_text(name), sr_cli_text(new_path), sr_cli_text(old_path));
    }
    if (!judged) /* a gate that compared nothing must not pass */
        return sr_cli_error_set(err, SAGERUN_FORMAT,
                                "%s: no point with a report to compare (%zu workloads)", old_path,
                                json_array_size(json_object_get(os, "workloads")));
    return SAGERUN_OK;
}

static sagerun_status diff_files(sagerun_diff *d, const char *old_path, const char *new_path,
                                 diff_outputs outs, sagerun_error *err)
{
    json_t *os = sr_sweep_summary_load(old_path, err);
    if (!os && err->status != SAGERUN_OK)
        return err->status;
    json_t *ns = sr_sweep_summary_load(new_path, err);
    bool old_sweep = os != NULL, new_sweep = ns != NULL;
    sagerun_status st = SAGERUN_OK;
    if (!ns && err->status != SAGERUN_OK)
        st = err->status;
    else if (old_sweep != new_sweep)
        st = sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                          "%s is a sweep summary and %s is not: diff two reports or two sweeps",
                          old_sweep ? old_path : new_path, old_sweep ? new_path : old_path);
    else if (old_sweep)
        st = diff_sweeps(d, old_path, os, new_path, ns, outs, err);
    else {
        sagerun_compare_result *a = NULL, *b = NULL;
        if ((st = sagerun_compare_result_read(old_path, &a, err)) != SAGERUN_OK)
            goto done;
        if ((st = sagerun_compare_result_read(new_path, &b, err)) == SAGERUN_OK) {
            st = sagerun_diff_add(d, NULL, a, b, err);
            if (st != SAGERUN_OK)
                sr_cli_error_prefix(err, "%s against %s", old_path, new_path);
            sagerun_compare_result_destroy(b);
        }
        sagerun_compare_result_destroy(a);
    }
done:
    json_decref(os);
    json_decref(ns);
    return st;
}

int sr_cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {{"threshold", required_argument, 0, 't'},
                                         {"json", required_argument, 0, 'j'},
                                         {"markdown", required_argument, 0, 'm'},
                                         {"csv", required_argument, 0, 'c'},
                                         {"relative", no_argument, 0, 'r'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    sagerun_report_diff_options o;
    sagerun_report_diff_options_init(&o);
    const char *json_path = NULL, *md_path = NULL, *csv_path = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!sr_cli_parse_decimal("diff", "--threshold", optarg, 0, true, 1e6,
                                      &o.threshold_percent))
                return SR_EXIT_USAGE;
            break;
        case 'j': json_path = optarg; break;
        case 'm': md_path = optarg; break;
        case 'c': csv_path = optarg; break;
        case 'r': o.relative = 1; break;
        case 'h': diff_usage(stdout); return SR_EXIT_OK;
        default: return sr_cli_bad_option("diff", c, argv, opts);
        }
    }
    if (argc - optind != 2) {
        sr_cli_error("diff: expected two report files or two sweep summaries (see 'sagerun "
                     "diff --help')");
        return SR_EXIT_USAGE;
    }
    const char *const out_opts[] = {"--json", "--markdown", "--csv"},
                      *const outs[] = {json_path, md_path, csv_path};
    const char *const ins[] = {argv[optind], argv[optind + 1]};
    int rc = sr_cli_check_outputs("diff", out_opts, outs, 3, ins, 2);
    if (rc != SR_EXIT_OK)
        return rc;
    sagerun_diff *d = NULL;
    sagerun_error err = {0};
    rc = SR_EXIT_ERROR;
    if (sagerun_diff_create(&o, &d, &err) != SAGERUN_OK ||
        diff_files(d, argv[optind], argv[optind + 1], outs, &err) != SAGERUN_OK) {
        sr_cli_error("diff: %s", err.message);
        goto out;
    }
    FILE *table = sr_cli_table_out(outs, 3);
    FILE *out = sr_cli_escaping_stream(table);
    sagerun_diff_print(d, out, 0);
    sr_cli_escaping_close(out, table);
    fflush(table);
    if (json_path && sagerun_diff_write_json(d, json_path, &err) != SAGERUN_OK) {
        sr_cli_error("diff: --json: %s", err.message);
        goto out;
    }
    if (md_path && sagerun_diff_write_markdown(d, md_path, &err) != SAGERUN_OK) {
        sr_cli_error("diff: --markdown: %s", err.message);
        goto out;
    }
    if (csv_path && sagerun_diff_write_csv(d, csv_path, &err) != SAGERUN_OK) {
        sr_cli_error("diff: --csv: %s", err.message);
        goto out;
    }
    rc = sagerun_diff_findings(d) ? SR_EXIT_REGRESSION : SR_EXIT_OK;
out:
    sagerun_diff_destroy(d);
    return rc;
}
