/* Two reports of one workload, or two sweeps point by point: each variant judged statistically
 * from what both reports carry. The per-round p50s of the old and the new run give a 95% interval
 * (stats.h: paired by round where both runs have as many rounds, as compare pairs its variants;
 * else Yuen's two-sample interval over all rounds of each) and the engine's verdict (judge.h), so
 * a diff says "slower" only when the whole interval lies beyond the threshold, as compare does. A report without rounds (fewer than two in either) falls back to
 * the ratio of the p50s against the threshold, and says so. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "report.h"
#include "tolerance.h"
#include "safe_io.h"

/* a relative diff's baseline that moved more than this between the runs is said (percent) */
#define SR_DIFF_CONDITIONS_PERCENT 10.0

static const sr_report_variant *find_label(const sr_report *r, const char *label)
{
    for (size_t i = 0; i < r->variant_count; i++)
        if (strcmp(sr_report_variant_label(&r->variants[i]), label) == 0)
            return &r->variants[i];
    return NULL;
}

static sr_diff_row *new_row(sr_diff *d, const char *point, const char *label)
{
    if (d->count == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        sr_diff_row *rows = realloc(d->rows, cap * sizeof(*rows));
        if (!rows)
            return NULL;
        d->rows = rows;
        d->cap = cap;
    }
    char *p = strdup(point ? point : ""), *l = strdup(label);
    if (!p || !l) {
        free(p);
        free(l);
        return NULL;
    }
    sr_diff_row *row = &d->rows[d->count++];
    memset(row, 0, sizeof(*row));
    row->point = p;
    row->label = l;
    row->old_p50 = row->new_p50 = row->change_percent = NAN;
    row->old_exact = row->new_exact = -1;
    row->verdict = SR_VERDICT_NONE;
    return row;
}

static void add_finding(sr_diff_row *row, unsigned bit, const char *text)
{
    row->findings |= bit;
    size_t used = strlen(row->finding);
    snprintf(row->finding + used, sizeof(row->finding) - used, "%s%s", used ? ", " : "", text);
}

static size_t min_rounds(const sr_report_variant *a, const sr_report_variant *b)
{
    return a->round_count < b->round_count ? a->round_count : b->round_count;
}

/* Round k's p50 of v; over its baseline's in the same round when base is given. */
static double round_time(const sr_report_variant *v, const sr_report_variant *base, size_t k)
{
    return base ? v->rounds[k].p50 / base->rounds[k].p50 : v->rounds[k].p50;
}

/* One run's round times of v (over base's, relative), all the rounds both have; NULL when none. */
static double *run_times(const sr_report_variant *v, const sr_report_variant *base, size_t *n)
{
    *n = base ? min_rounds(v, base) : v->round_count;
    double *t = *n ? malloc(*n * sizeof(double)) : NULL;
    for (size_t k = 0; t && k < *n; k++)
        t[k] = round_time(v, base, k);
    return t;
}

/* The interval of new against old. Where both runs have as many rounds, round r of one against
 * round r of the other, as compare pairs its variants; where they differ (a timed schedule ends
 * on its own count in each run), all rounds of both, unpaired (Yuen): pairing only the first
 * rounds of the longer run judged 20 rounds against the first 20 of 64, and read "same" for a
 * variant whose later rounds were twice as slow. */
static sr_interval diff_interval(const double *old_t, size_t n_old, const double *new_t,
                                 size_t n_new)
{
    return n_old == n_new ? sr_paired_speedup_interval(old_t, new_t, n_old)
                          : sr_unpaired_speedup_interval(old_t, n_old, new_t, n_new);
}

/* The judgement of one variant's new run against its old one: by its time, or (ob and nb given:
 * relative) by its time over its own run's baseline's, round by round, so that what slowed or
 * sped up a whole run (load, clocks, another machine) cancels. */
static void judge_rows(sr_diff_row *row, const sr_report_variant *ov, const sr_report_variant *nv,
                       const sr_report_variant *ob, const sr_report_variant *nb, double threshold)
{
    size_t n_old, n_new;
    double *old_t = run_times(ov, ob, &n_old), *new_t = run_times(nv, nb, &n_new);
    sr_interval iv = old_t && new_t ? diff_interval(old_t, n_old, new_t, n_new) : (sr_interval){0};
    free(old_t);
    free(new_t);
    if (iv.valid) {
        row->speedup = iv;
        row->verdict = sr_judge_verdict(&iv, threshold);
        row->rounds = n_old;
        row->new_rounds = n_new;
        if (row->verdict == SR_VERDICT_SLOWER)
            add_finding(row, SAGERUN_DIFF_REGRESSION, "SLOWER");
        return;
    }
    /* nothing to judge from: the p50 rule */
    double change = ob && nb ? ((row->new_p50 / nb->timing.p50) / (row->old_p50 / ob->timing.p50)
                                - 1.0) * 100.0
                             : row->change_percent;
    if (isfinite(change) && change > threshold)
        add_finding(row, SAGERUN_DIFF_REGRESSION,
                    n_old < 2 || n_new < 2 ? "SLOWER (p50 rule: no rounds to judge)"
                                           : "SLOWER (p50 rule: a round without a valid time)");
}

/* A relative diff's baseline row. The interval of a judgement holds the rounds' noise within each
 * run, not what differs between the runs; a baseline that moved by more than
 * SR_DIFF_CONDITIONS_PERCENT says that the runs' conditions differ at this point (a shared host's
 * load once moved one point's baseline by 27% between two sweeps, and a variant's ratio to it by
 * 8.6% under an interval of +-2.3%), so that a verdict there is read with that in mind. */
static void baseline_finding(sr_diff_row *row)
{
    add_finding(row, 0, "the baseline (relative: the others are judged against it)");
    if (fabs(row->change_percent) > SR_DIFF_CONDITIONS_PERCENT) {
        char text[96];
        snprintf(text, sizeof text, "it moved %+.1f%% between the runs: conditions differ",
                 row->change_percent);
        add_finding(row, 0, text);
    }
}

/* The baselines a relative diff judges against (both, or neither: *ob = *nb = NULL, said). */
typedef struct diff_baselines {
    const sr_report_variant *old_base, *new_base;
} diff_baselines;

static void diff_variant(sr_diff_row *row, const sr_report_variant *ov,
                         const sr_report_variant *nv, const diff_baselines *bl, double threshold)
{
    row->old_exact = ov->byte_exact;
    row->new_exact = nv->byte_exact;
    row->old_p50 = ov->timing.count ? ov->timing.p50 : NAN;
    row->new_p50 = nv->timing.count ? nv->timing.p50 : NAN;
    row->change_percent = (row->new_p50 / row->old_p50 - 1.0) * 100.0;
    bool is_base = bl && (ov == bl->old_base || nv == bl->new_base);
    if (!nv->timing.count && ov->timing.count)
        add_finding(row, SAGERUN_DIFF_REGRESSION, "DID NOT RUN");
    else if (nv->failure && !ov->failure) /* failed after its timing: not judged "same" */
        add_finding(row, SAGERUN_DIFF_REGRESSION, "FAILED");
    else if (nv->timing.count && !isfinite(nv->timing.p50))
        add_finding(row, SAGERUN_DIFF_REGRESSION, "NULL P50 in new"); /* ran, nothing to compare */
    else if (ov->timing.count && !isfinite(ov->timing.p50))
        add_finding(row, 0, "null p50 in old: not compared");
    else if (is_base)
        baseline_finding(row);
    else if (ov->timing.count && nv->timing.count)
        judge_rows(row, ov, nv, bl ? bl->old_base : NULL, bl ? bl->new_base : NULL, threshold);
    if (ov->byte_exact == 1 && nv->byte_exact != 1)
        add_finding(row, SAGERUN_DIFF_LOST_BYTE_EXACT, "LOST BYTE-EXACTNESS");
    else if (sr_report_variant_accepted(ov) && !sr_report_variant_accepted(nv) && nv->timing.count)
        add_finding(row, SAGERUN_DIFF_LOST_ACCEPTANCE,
                    nv->tolerance.present ? "LOST ACCEPTANCE (tol. FAIL)"
                                          : "LOST ACCEPTANCE (not byte-exact, no tolerance)");
    if (ov->output_sha256 && nv->output_sha256 && strcmp(ov->output_sha256, nv->output_sha256))
        add_finding(row, 0, "output hash changed");
}

static sagerun_status same_workload(const sr_report *o, const sr_report *n, sagerun_error *err)
{
    if (o->q_shape_len != n->q_shape_len ||
        memcmp(o->q_shape, n->q_shape, o->q_shape_len * sizeof(o->q_shape[0])) != 0) {
        char a[128], b[128];
        sr_report_format_shape(o, a, sizeof(a));
        sr_report_format_shape(n, b, sizeof(b));
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "not the same workload: q_shape %s against %s", a, b);
    }
    if (o->metadata && n->metadata && !json_equal(o->metadata, n->metadata))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "not the same workload: the reports' metadata differ");
    if (o->has_problem && n->has_problem &&
        (o->problem.heads_kv != n->problem.heads_kv || o->problem.layout != n->problem.layout ||
         o->problem.dtype != n->problem.dtype || o->problem.causal != n->problem.causal ||
         o->problem.sm_scale != n->problem.sm_scale))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "not the same workload: heads_kv, layout, dtype, causal or sm_scale "
                            "differ");
    char a[256], b[256]; /* kv_len, alignment, window, softcap, varlen, paged: as the header says */
    if (o->has_problem && n->has_problem) {
        sr_report_format_features(o, a, sizeof a);
        sr_report_format_features(n, b, sizeof b);
        if (strcmp(a, b) != 0 || o->problem.total_q != n->problem.total_q ||
            o->problem.total_kv != n->problem.total_kv)
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "not the same workload: (%s) against (%s)", a, b);
    }
    return SAGERUN_OK;
}

static void add_note(sr_diff *d, const char *point, const char *text)
{
    if (d->note_count < SR_ARRAY_LEN(d->notes))
        snprintf(d->notes[d->note_count], sizeof(d->notes[0]), "%s%s%s", point ? point : "",
                 point ? ": " : "", text);
    d->note_count++; /* beyond the array: counted, and said as "and N more" */
}

size_t sr_diff_note_count(const sr_diff *d)
{
    size_t cap = SR_ARRAY_LEN(d->notes);
    return d->note_count > cap ? cap + 1 : d->note_count;
}

const char *sr_diff_note(const sr_diff *d, size_t i, char *buf, size_t len)
{
    if (i < SR_ARRAY_LEN(d->notes))
        return d->notes[i];
    snprintf(buf, len, "and %zu more notes", d->note_count - SR_ARRAY_LEN(d->notes));
    return buf;
}

static const sr_report_variant *baseline_of(const sr_report *r)
{
    for (size_t i = 0; i < r->variant_count; i++)
        if (r->variants[i].is_baseline)
            return r->variants[i].timing.count && isfinite(r->variants[i].timing.p50)
                       ? &r->variants[i]
                       : NULL;
    return NULL;
}

/* The baseline of both runs for a relative diff: the same label in each, and it ran; else the
 * variants are judged by their time, said in a note. */
static void common_baseline(sr_diff *d, const char *point, const sr_report *o, const sr_report *n,
                            diff_baselines *bl)
{
    const sr_report_variant *ob = baseline_of(o), *nb = baseline_of(n);
    if (ob && nb &&
        strcmp(sr_report_variant_label(ob), sr_report_variant_label(nb)) == 0) {
        bl->old_base = ob;
        bl->new_base = nb;
        return;
    }
    char note[320];
    snprintf(note, sizeof note,
             "relative: no baseline that ran in both (old %s, new %s): judged by time",
             ob ? sr_report_variant_label(ob) : "none", nb ? sr_report_variant_label(nb) : "none");
    add_note(d, point, note);
}

void sr_diff_init(sr_diff *d, double threshold_percent, bool relative)
{
    memset(d, 0, sizeof(*d));
    d->threshold = threshold_percent;
    d->relative = relative;
}

void sr_diff_clear(sr_diff *d)
{
    for (size_t i = 0; i < d->count; i++) {
        free(d->rows[i].point);
        free(d->rows[i].label);
    }
    free(d->rows);
    memset(d, 0, sizeof(*d));
}

sagerun_status sr_diff_reports(sr_diff *d, const char *point, const sr_report *o,
                               const sr_report *n, sagerun_error *err)
{
    sagerun_status st = same_workload(o, n, err);
    if (st != SAGERUN_OK)
        return point ? sr_error_prefix(st, err, "%s", point) : st;
    size_t measured = 0;
    for (size_t i = 0; i < o->variant_count; i++)
        measured += o->variants[i].timing.count > 0;
    if (!measured && !point) /* a gate that compared nothing must not pass (a sweep's point: said) */
        return sr_error_set(err, SAGERUN_FORMAT,
                            "the old report has no measured variant (%zu variants, none with "
                            "timings): nothing to compare against",
                            o->variant_count);
    char note[256];
    if (!measured) {
        snprintf(note, sizeof note, "the old report has no measured variant: nothing compared");
        add_note(d, point, note);
    }
    if (o->reference_sha256 && n->reference_sha256 &&
        strcmp(o->reference_sha256, n->reference_sha256) != 0) {
        snprintf(note, sizeof note, "reference output changed: %.64s -> %.64s",
                 o->reference_sha256, n->reference_sha256);
        add_note(d, point, note);
    }
    diff_baselines bl = {NULL, NULL};
    if (d->relative)
        common_baseline(d, point, o, n, &bl);
    const sr_report *both[2] = {o, n};
    for (int k = 0; k < 2; k++)
        if (both[k]->incomplete) {
            char why[96];
            snprintf(note, sizeof note,
                     "the %s report is incomplete (%s): its numbers cover only the rounds "
                     "finished",
                     k ? "new" : "old", sr_report_interrupted(both[k], why, sizeof why));
            add_note(d, point, note);
        }
    for (size_t i = 0; i < o->variant_count; i++) {
        const char *label = sr_report_variant_label(&o->variants[i]);
        sr_diff_row *row = new_row(d, point, label);
        if (!row)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        const sr_report_variant *nv = find_label(n, label);
        if (nv) {
            diff_variant(row, &o->variants[i], nv, bl.old_base ? &bl : NULL, d->threshold);
        } else {
            row->old_exact = o->variants[i].byte_exact;
            row->old_p50 = o->variants[i].timing.count ? o->variants[i].timing.p50 : NAN;
            add_finding(row, SAGERUN_DIFF_MISSING, "MISSING in new");
        }
        d->findings |= row->findings;
    }
    for (size_t i = 0; i < n->variant_count; i++) {
        const sr_report_variant *nv = &n->variants[i];
        if (find_label(o, sr_report_variant_label(nv)))
            continue;
        sr_diff_row *row = new_row(d, point, sr_report_variant_label(nv));
        if (!row)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        row->new_exact = nv->byte_exact;
        row->new_p50 = nv->timing.count ? nv->timing.p50 : NAN;
        add_finding(row, 0, "new");
    }
    return SAGERUN_OK;
}

sagerun_status sr_diff_missing_point(sr_diff *d, const char *point, const char *why,
                                     sagerun_error *err)
{
    sr_diff_row *row = new_row(d, point, "-");
    if (!row)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    add_finding(row, SAGERUN_DIFF_MISSING, why);
    d->findings |= row->findings;
    return SAGERUN_OK;
}

/* ---- output -------------------------------------------------------------------------------- */

static const char *exact_word(int b)
{
    return b < 0 ? "-" : b ? "yes" : "NO";
}

/* A speedup of new against old (+ = faster) as the change of its time (+ = slower). */
static double time_change(double speedup_percent)
{
    return (100.0 / (100.0 + speedup_percent) - 1.0) * 100.0 + 0.0; /* + 0.0: no "-0.00" */
}

static void format_change(const sr_diff_row *row, char *buf, size_t len)
{
    if (row->speedup.valid) /* the judged change, in time: + = slower, as "change" reads */
        snprintf(buf, len, "%+.2f%% [%+.2f, %+.2f]", time_change(row->speedup.estimate),
                 time_change(row->speedup.high), time_change(row->speedup.low));
    else if (isfinite(row->change_percent))
        snprintf(buf, len, "%+.2f%%", row->change_percent);
    else
        snprintf(buf, len, "-");
}

static bool has_points(const sr_diff *d)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->rows[i].point[0])
            return true;
    return false;
}

/* A row of the markdown table: point (NULL: none), label and finding as cells (report_text.c). */
static void markdown_row(FILE *out, const char *point, const char *label, const char *op,
                         const char *np, const char *change, const char *verdict,
                         const char *exact, const char *finding)
{
    const char *cells[] = {point, label, op, np, change, verdict, exact, finding};
    for (size_t c = point ? 0 : 1; c < SR_ARRAY_LEN(cells); c++) {
        fputs("| ", out);
        sr_markdown_cell(out, cells[c]);
        fputc(' ', out);
    }
    fputs("|\n", out);
}

void sr_diff_print(const sr_diff *d, FILE *out, bool markdown)
{
    bool points = has_points(d);
    if (markdown)
        fprintf(out, "# sagerun diff\n\n");
    if (d->relative)
        fprintf(out, "a change is judged from the per-round p50s of both runs, each over its "
                     "run's baseline in the same round (95%% interval); slower beyond %.3g%% is "
                     "a regression\n",
                d->threshold);
    else
        fprintf(out, "a change is judged from the per-round p50s of both runs (95%% interval); "
                     "slower beyond %.3g%% is a regression\n",
                d->threshold);
    char more[64];
    for (size_t i = 0; i < sr_diff_note_count(d); i++)
        sr_line_printf(out, "%snote: %s\n", markdown ? "- " : "", sr_diff_note(d, i, more, sizeof more));
    if (markdown)
        fprintf(out, "\n|%s variant | old p50 | new p50 | change [95%% CI] | verdict | "
                     "byte-exact | finding |\n|%s---|---|---|---|---|---|---|\n",
                points ? " point |" : "", points ? "---|" : "");
    else
        fprintf(out, "\n%s%-24s  %-10s  %-10s  %-26s  %-15s  %-11s  %s\n",
                points ? "point                 " : "", "variant", "old p50", "new p50",
                "change [95% CI]", "verdict", "byte-exact", "finding");
    for (size_t i = 0; i < d->count; i++) {
        const sr_diff_row *row = &d->rows[i];
        char op[32], np[32], change[64], exact[32];
        sr_format_seconds(row->old_p50, op, sizeof(op));
        sr_format_seconds(row->new_p50, np, sizeof(np));
        format_change(row, change, sizeof(change));
        snprintf(exact, sizeof(exact), "%s -> %s", exact_word(row->old_exact),
                 exact_word(row->new_exact));
        const char *verdict = sr_verdict_name(row->verdict);
        if (markdown)
            markdown_row(out, points ? row->point : NULL, row->label, op, np, change,
                         verdict ? verdict : "-", exact, row->finding[0] ? row->finding : "ok");
        else
            sr_line_printf(out, "%s%s%-24s  %-10s  %-10s  %-26s  %-15s  %-11s  %s\n",
                           points ? row->point : "",
                           points ? &"                      "[strlen(row->point) < 22 ? strlen(row->point) : 21] : "",
                           row->label, op, np, change, verdict ? verdict : "-", exact, row->finding);
    }
}

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *exact_json(int b)
{
    return b < 0 ? json_null() : json_boolean(b);
}

json_t *sr_diff_to_json(const sr_diff *d)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < d->count; i++) {
        const sr_diff_row *r = &d->rows[i];
        json_t *iv = r->speedup.valid
                         ? json_pack("{s:o, s:o, s:o, s:f, s:I, s:I}", "estimate",
                                     number_or_null(r->speedup.estimate), "low",
                                     number_or_null(r->speedup.low), "high",
                                     number_or_null(r->speedup.high), "confidence", 0.95, "rounds",
                                     (json_int_t)r->rounds, "new_rounds", (json_int_t)r->new_rounds)
                         : json_null();
        const char *verdict = sr_verdict_name(r->verdict);
        json_array_append_new(
            rows, json_pack("{s:s?, s:s, s:o, s:o, s:o, s:o, s:s?, s:o, s:o, s:b, s:b, s:b, s:b, s:s}",
                            "point", r->point[0] ? r->point : NULL, "variant", r->label,
                            "old_p50_s", number_or_null(r->old_p50), "new_p50_s",
                            number_or_null(r->new_p50), "p50_change_percent",
                            number_or_null(r->change_percent), "speedup_interval_percent", iv,
                            "verdict", verdict, "old_byte_exact", exact_json(r->old_exact),
                            "new_byte_exact", exact_json(r->new_exact), "regression",
                            (r->findings & SAGERUN_DIFF_REGRESSION) != 0, "lost_byte_exact",
                            (r->findings & SAGERUN_DIFF_LOST_BYTE_EXACT) != 0, "lost_acceptance",
                            (r->findings & SAGERUN_DIFF_LOST_ACCEPTANCE) != 0, "missing",
                            (r->findings & SAGERUN_DIFF_MISSING) != 0, "finding", r->finding));
    }
    json_t *notes = json_array();
    char more[64];
    for (size_t i = 0; i < sr_diff_note_count(d); i++)
        json_array_append_new(notes, json_string(sr_diff_note(d, i, more, sizeof more)));
    return json_pack("{s:i, s:f, s:s, s:b, s:b, s:o, s:o}", "sagerun_diff", 1,
                     "threshold_percent", d->threshold, "method",
                     d->relative ? "per-round p50s of old and new, each over its run's baseline "
                                   "in the same round; paired by round where both runs have as "
                                   "many rounds, else all rounds of each (Yuen's test on the "
                                   "logs); 20%-trimmed means, 95% interval; p50 ratio without "
                                   "rounds"
                                 : "per-round p50s of old and new; paired by round where both runs "
                                   "have as many rounds, else all rounds of each (Yuen's test on "
                                   "the logs); 20%-trimmed means, 95% interval; p50 ratio without "
                                   "rounds",
                     "relative", d->relative,
                     "regression", d->findings != 0,
                     "rows", rows, "notes", notes);
}

static bool write_json_cb(FILE *f, const void *user)
{
    json_t *j = sr_diff_to_json(user);
    bool ok = j && json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 && fputc('\n', f) != EOF;
    json_decref(j);
    return ok;
}

static bool write_markdown_cb(FILE *f, const void *user)
{
    sr_diff_print(user, f, true);
    return !ferror(f);
}

sagerun_status sr_diff_write_json(const sr_diff *d, const char *path, sagerun_error *err)
{
    return sr_write_file_atomic(path, write_json_cb, d, err);
}

sagerun_status sr_diff_write_markdown(const sr_diff *d, const char *path, sagerun_error *err)
{
    return sr_write_file_atomic(path, write_markdown_cb, d, err);
}

static void csv_number(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.9g", v);
}

static bool write_csv_cb(FILE *f, const void *user)
{
    const sr_diff *d = user;
    fputs("point,variant,old_p50_s,new_p50_s,p50_change_percent,speedup_percent,"
          "speedup_low_percent,speedup_high_percent,verdict,old_byte_exact,new_byte_exact,"
          "regression,finding,lost_byte_exact,lost_acceptance,missing\n", f);
    for (size_t i = 0; i < d->count; i++) {
        const sr_diff_row *r = &d->rows[i];
        sr_csv_field(f, r->point, true);
        sr_csv_field(f, r->label, false);
        csv_number(f, r->old_p50);
        csv_number(f, r->new_p50);
        csv_number(f, r->change_percent);
        csv_number(f, r->speedup.valid ? r->speedup.estimate : NAN);
        csv_number(f, r->speedup.valid ? r->speedup.low : NAN);
        csv_number(f, r->speedup.valid ? r->speedup.high : NAN);
        sr_csv_field(f, sr_verdict_name(r->verdict), false);
        sr_csv_field(f, r->old_exact < 0 ? NULL : r->old_exact ? "true" : "false", false);
        sr_csv_field(f, r->new_exact < 0 ? NULL : r->new_exact ? "true" : "false", false);
        sr_csv_field(f, r->findings & SAGERUN_DIFF_REGRESSION ? "true" : "false", false);
        sr_csv_field(f, r->finding, false);
        sr_csv_field(f, r->findings & SAGERUN_DIFF_LOST_BYTE_EXACT ? "true" : "false", false);
        sr_csv_field(f, r->findings & SAGERUN_DIFF_LOST_ACCEPTANCE ? "true" : "false", false);
        sr_csv_field(f, r->findings & SAGERUN_DIFF_MISSING ? "true" : "false", false);
        fputc('\n', f);
    }
    return !ferror(f);
}

sagerun_status sr_diff_write_csv(const sr_diff *d, const char *path, sagerun_error *err)
{
    return sr_write_file_atomic(path, write_csv_cb, d, err);
}

sagerun_status sr_report_diff(const sr_report *o, const sr_report *n, double threshold_percent,
                              bool relative, FILE *out, unsigned *findings, sagerun_error *err)
{
    sr_diff d;
    sr_diff_init(&d, threshold_percent, relative);
    sagerun_status st = sr_diff_reports(&d, NULL, o, n, err);
    *findings = st == SAGERUN_OK ? d.findings : 0;
    if (st == SAGERUN_OK)
        sr_diff_print(&d, out, false);
    sr_diff_clear(&d);
    return st;
}
