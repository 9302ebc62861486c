/* Two reports of one workload, or two sweeps point by point, or the replicates of each side
 * (compare/sweep --repeat): each variant judged statistically from what the reports carry.
 * Two runs are two processes: they share no rounds, and what moves a whole process is in no run's
 * interval (diff_runs.h). So one run per side is judged from all rounds of each, unpaired
 * (Yuen's interval on the logs), widened by a calibrated between-run sd where there is one; with
 * several runs on a side the process is the unit, one estimate per run. By default (relative)
 * a variant's time is taken over its own run's baseline's, paired within the run as compare
 * pairs them, so that what slowed a whole run alike cancels. The verdict is the engine's
 * (judge.h): "slower" only when the whole interval lies beyond the threshold. A report without
 * usable rounds falls back to the ratio of the p50s against the threshold, and says so. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_runs.h"
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

/* A time the logs can take: positive, finite and normal (a round of 5e-324 s gave [-nan, -nan]) */
static bool usable_time(double t)
{
    return t > 0 && isnormal(t);
}

/* Round k's p50 of v; over its baseline's in the same round when base is given (NaN where either
 * is not a usable time: the interval then is not valid). */
static double round_time(const sr_report_variant *v, const sr_report_variant *base, size_t k)
{
    double t = v->rounds[k].p50, b = base ? base->rounds[k].p50 : 1.0;
    return usable_time(t) && usable_time(b) && usable_time(t / b) ? t / b : NAN;
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

/* An interval is shown and judged only with finite bounds (a ratio of 1e300 read +inf%). */
static sr_interval finite_interval(sr_interval iv)
{
    if (!isfinite(iv.estimate) || !isfinite(iv.low) || !isfinite(iv.high) || iv.low <= -100.0)
        iv.valid = false;
    return iv;
}

/* The verdict and findings of a judged row, compare's gates included (percent; NaN = off):
 * --fail-if-slower P, the whole interval slower than -P; --require-faster P, not wholly above +P. */
static void judge_interval(sr_diff_row *row, sr_interval iv, const sr_diff *d)
{
    row->speedup = iv;
    row->verdict = sr_judge_verdict(&iv, d->threshold);
    if (row->verdict == SR_VERDICT_SLOWER)
        add_finding(row, SAGERUN_DIFF_REGRESSION, "SLOWER");
    if (isfinite(d->fail_if_slower) && iv.high < -d->fail_if_slower)
        add_finding(row, SAGERUN_DIFF_GATE, "GATE --fail-if-slower");
    if (isfinite(d->require_faster) && !(iv.low > d->require_faster))
        add_finding(row, SAGERUN_DIFF_GATE, "GATE --require-faster");
}

/* Nothing to judge from: the p50s against the threshold, said in the finding. */
static void p50_rule(sr_diff_row *row, double change, bool no_rounds, const sr_diff *d)
{
    if (isfinite(change) && change > d->threshold)
        add_finding(row, SAGERUN_DIFF_REGRESSION,
                    no_rounds ? "SLOWER (p50 rule: no rounds to judge)"
                              : "SLOWER (p50 rule: a round without a usable time)");
    else
        add_finding(row, 0, no_rounds ? "not judged: no rounds (p50 rule)"
                                      : "not judged: a round without a usable time (p50 rule)");
    if (isfinite(d->require_faster))
        add_finding(row, SAGERUN_DIFF_GATE, "GATE --require-faster (no interval)");
}

/* One run per side: all rounds of each, unpaired (Yuen on the logs). The rounds of two processes
 * share no drift, so round r of one is not paired with round r of the other even where the counts
 * match; a calibrated between-run sd widens the interval (what moves a whole process). */
static void judge_single(sr_diff_row *row, const sr_report_variant *ov,
                         const sr_report_variant *nv, const sr_report_variant *ob,
                         const sr_report_variant *nb, sr_diff *d)
{
    size_t n_old, n_new;
    double *old_t = run_times(ov, ob, &n_old), *new_t = run_times(nv, nb, &n_new);
    sr_interval iv = old_t && new_t ? sr_unpaired_speedup_interval(old_t, n_old, new_t, n_new)
                                    : (sr_interval){0};
    free(old_t);
    free(new_t);
    iv = finite_interval(sr_interval_add_between_runs(iv, d->between_run_sd));
    row->old_runs = row->new_runs = 1;
    if (iv.valid) {
        row->rounds = n_old;
        row->new_rounds = n_new;
        d->single_rows++;
        judge_interval(row, iv, d);
        return;
    }
    double change = ob && nb ? ((row->new_p50 / nb->timing.p50) / (row->old_p50 / ob->timing.p50)
                                - 1.0) * 100.0
                             : row->change_percent;
    p50_rule(row, change, n_old < 2 || n_new < 2, d);
}

/* One run's estimate of a variant: ln of its time (the p50), or relative (base_label given) ln of
 * its time over its run's baseline's, from the rounds paired within the run (as compare pairs
 * them), else from the p50s. NaN where the run has no usable time for either. *se2: the squared
 * standard error of the paired estimate within its run (0 where there is none). */
static double run_estimate(const sr_report *r, const char *label, const char *base_label,
                           double *se2)
{
    const sr_report_variant *v = find_label(r, label);
    const sr_report_variant *b = base_label ? find_label(r, base_label) : NULL;
    *se2 = 0;
    if (!v || !v->timing.count || !usable_time(v->timing.p50) || v->failure ||
        (base_label && (!b || !b->timing.count || !usable_time(b->timing.p50))))
        return NAN;
    if (!b)
        return log(v->timing.p50);
    size_t n;
    double *t = run_times(v, b, &n), *ones = n ? malloc(n * sizeof(double)) : NULL;
    for (size_t k = 0; ones && k < n; k++)
        ones[k] = 1.0;
    sr_interval iv = t && ones ? finite_interval(sr_paired_speedup_interval(ones, t, n))
                               : (sr_interval){0};
    free(t);
    free(ones);
    if (!iv.valid)
        return log(v->timing.p50 / b->timing.p50);
    double se = (log1p(iv.high / 100.0) - log1p(iv.low / 100.0)) / 2 / sr_t_quantile_975(iv.dof);
    *se2 = se * se;
    return -log1p(iv.estimate / 100.0);
}

/* The runs of one side. */
typedef struct diff_side {
    const sr_report *const *runs;
    size_t count;
} diff_side;

/* One side's estimates of a variant, the runs without one left out; the count kept. v: each one's
 * squared standard error within its run (0 where it has none). */
static size_t side_estimates(const diff_side *s, const char *label, const char *base_label,
                             double *x, double *v)
{
    size_t n = 0;
    for (size_t i = 0; i < s->count; i++) {
        double e = run_estimate(s->runs[i], label, base_label, &v[n]);
        if (isfinite(e))
            x[n++] = e;
    }
    return n;
}

/* Replicates: each run one estimate, the change judged with the process as the unit (each run
 * weighted by its own interval and the runs' spread; Welch's t where a run has no interval), its
 * error no less than the calibrated between-run sd says. Fewer than three estimates in all: one
 * run per side, from the first runs. */
static void judge_replicates(sr_diff_row *row, const diff_side *o, const diff_side *n,
                             const char *base_label, const sr_report_variant *fo[2],
                             sr_diff *d)
{
    double *buf = malloc(2 * (o->count + n->count + 2) * sizeof(double));
    double *xo = buf, *vo = buf + o->count + 1, *xn = vo + o->count + 1, *vn = xn + n->count + 1;
    size_t no = buf ? side_estimates(o, row->label, base_label, xo, vo) : 0;
    size_t nn = buf ? side_estimates(n, row->label, base_label, xn, vn) : 0;
    double b = d->between_run_sd > 0 ? log1p(d->between_run_sd / 100.0) : 0;
    double floor2 = no && nn ? b * b * (1.0 / (double)no + 1.0 / (double)nn) : 0;
    sr_interval iv = no && nn && no + nn >= 3
                         ? finite_interval(sr_between_runs_interval(xo, vo, no, xn, vn, nn, floor2))
                         : (sr_interval){0};
    free(buf);
    if (!iv.valid) {
        judge_single(row, fo[0], fo[1], base_label ? find_label(o->runs[0], base_label) : NULL,
                     base_label ? find_label(n->runs[0], base_label) : NULL, d);
        return;
    }
    row->old_runs = no;
    row->new_runs = nn;
    judge_interval(row, iv, d);
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

/* The median of the runs' p50s of a variant (NaN where none ran). */
static double side_p50(const diff_side *s, const char *label)
{
    double *p = malloc(s->count * sizeof(double));
    size_t k = 0;
    for (size_t i = 0; p && i < s->count; i++) {
        const sr_report_variant *v = find_label(s->runs[i], label);
        if (v && v->timing.count)
            p[k++] = v->timing.p50;
    }
    double m = k ? sr_median_finite(p, k, NULL) : NAN;
    free(p);
    return m;
}

/* One variant of both sides: ov and nv of the first runs (byte-exactness, failures), the p50s and
 * the change of all runs. base_label: a relative diff's common baseline, or NULL. */
static void diff_variant(sr_diff_row *row, const sr_report_variant *ov,
                         const sr_report_variant *nv, const diff_side *o, const diff_side *n,
                         const char *base_label, sr_diff *d)
{
    row->old_exact = ov->byte_exact;
    row->new_exact = nv->byte_exact;
    row->old_p50 = side_p50(o, row->label);
    row->new_p50 = side_p50(n, row->label);
    row->change_percent = (row->new_p50 / row->old_p50 - 1.0) * 100.0;
    bool is_base = base_label && strcmp(row->label, base_label) == 0;
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
        judge_replicates(row, o, n, base_label, (const sr_report_variant *[2]){ov, nv}, d);
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
 * variants are judged by their time (NULL), said in a note. */
static const char *common_baseline(sr_diff *d, const char *point, const sr_report *o,
                                   const sr_report *n)
{
    const sr_report_variant *ob = baseline_of(o), *nb = baseline_of(n);
    if (ob && nb && strcmp(sr_report_variant_label(ob), sr_report_variant_label(nb)) == 0)
        return sr_report_variant_label(ob);
    char note[320];
    snprintf(note, sizeof note,
             "relative: no baseline that ran in both (old %s, new %s): judged by time",
             ob ? sr_report_variant_label(ob) : "none", nb ? sr_report_variant_label(nb) : "none");
    add_note(d, point, note);
    return NULL;
}

void sr_diff_init(sr_diff *d, double threshold_percent, bool relative)
{
    memset(d, 0, sizeof(*d));
    d->threshold = threshold_percent;
    d->relative = relative;
    d->fail_if_slower = d->require_faster = NAN;
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

/* The notes of a pair of first runs: nothing measured in old (an error for a single pair: a gate
 * that compared nothing must not pass), a changed reference output, incomplete reports. */
static sagerun_status point_notes(sr_diff *d, const char *point, const sr_report *o,
                                  const sr_report *n, sagerun_error *err)
{
    size_t measured = 0;
    for (size_t i = 0; i < o->variant_count; i++)
        measured += o->variants[i].timing.count > 0;
    if (!measured && !point)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "the old report has no measured variant (%zu variants, none with "
                            "timings): nothing to compare against",
                            o->variant_count);
    char note[256];
    if (!measured)
        add_note(d, point, "the old report has no measured variant: nothing compared");
    if (o->reference_sha256 && n->reference_sha256 &&
        strcmp(o->reference_sha256, n->reference_sha256) != 0) {
        snprintf(note, sizeof note, "reference output changed: %.64s -> %.64s",
                 o->reference_sha256, n->reference_sha256);
        add_note(d, point, note);
    }
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
    return SAGERUN_OK;
}

/* Every run of both sides of the first old run's workload. */
static sagerun_status same_workloads(const diff_side *o, const diff_side *n, const char *point,
                                     sagerun_error *err)
{
    for (size_t k = 0; k < o->count + n->count; k++) {
        const sr_report *r = k < o->count ? o->runs[k] : n->runs[k - o->count];
        sagerun_status st = same_workload(o->runs[0], r, err);
        if (st != SAGERUN_OK)
            return point ? sr_error_prefix(st, err, "%s", point) : st;
    }
    return SAGERUN_OK;
}

/* The rows of the variants only new has: "new", not a finding. */
static sagerun_status new_variants(sr_diff *d, const char *point, const sr_report *o,
                                   const sr_report *n, sagerun_error *err)
{
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

sagerun_status sr_diff_runs(sr_diff *d, const char *point, const sr_report *const *old_r,
                            size_t n_old, const sr_report *const *new_r, size_t n_new,
                            sagerun_error *err)
{
    const diff_side o = {old_r, n_old}, n = {new_r, n_new};
    if (!n_old || !n_new)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "diff: no run on one side");
    sagerun_status st = same_workloads(&o, &n, point, err);
    if (st != SAGERUN_OK || (st = point_notes(d, point, old_r[0], new_r[0], err)) != SAGERUN_OK)
        return st;
    const char *base = d->relative ? common_baseline(d, point, old_r[0], new_r[0]) : NULL;
    for (size_t i = 0; i < old_r[0]->variant_count; i++) {
        const sr_report_variant *ov = &old_r[0]->variants[i];
        sr_diff_row *row = new_row(d, point, sr_report_variant_label(ov));
        if (!row)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        const sr_report_variant *nv = find_label(new_r[0], row->label);
        if (nv) {
            diff_variant(row, ov, nv, &o, &n, base, d);
        } else {
            row->old_exact = ov->byte_exact;
            row->old_p50 = side_p50(&o, row->label);
            add_finding(row, SAGERUN_DIFF_MISSING, "MISSING in new");
        }
        d->findings |= row->findings;
    }
    return new_variants(d, point, old_r[0], new_r[0], err);
}

sagerun_status sr_diff_reports(sr_diff *d, const char *point, const sr_report *o,
                               const sr_report *n, sagerun_error *err)
{
    return sr_diff_runs(d, point, &o, 1, &n, 1, err);
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

/* "+5.00% [+3.10, +6.93]  1.05x faster": the judged speedup of new against old (+ = faster, as
 * compare's), its interval and the ratio of the times; "-" where any of them is not finite. */
static void format_change(const sr_diff_row *row, char *buf, size_t len, char *times, size_t tlen)
{
    const sr_interval *s = &row->speedup;
    snprintf(buf, len, "-");
    snprintf(times, tlen, "-");
    if (!s->valid || !isfinite(s->estimate) || !isfinite(s->low) || !isfinite(s->high))
        return;
    snprintf(buf, len, "%+.2f%% [%+.2f, %+.2f]", s->estimate + 0.0, s->low + 0.0, s->high + 0.0);
    double ratio = 1.0 + s->estimate / 100.0; /* old time / new time */
    if (ratio > 0)
        snprintf(times, tlen, "%.2f\u00d7 %s", ratio >= 1 ? ratio : 1.0 / ratio,
                 ratio >= 1 ? "faster" : "slower");
}

static bool has_points(const sr_diff *d)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->rows[i].point[0])
            return true;
    return false;
}

/* The cells of one row, as both tables show them. */
typedef struct row_cells {
    char op[32], np[32], change[64], times[32], runs[24], exact[32];
    const char *verdict;
} row_cells;

static void fill_cells(const sr_diff_row *row, row_cells *c)
{
    sr_format_seconds(row->old_p50, c->op, sizeof c->op);
    sr_format_seconds(row->new_p50, c->np, sizeof c->np);
    format_change(row, c->change, sizeof c->change, c->times, sizeof c->times);
    if (row->old_runs)
        snprintf(c->runs, sizeof c->runs, "%zu/%zu", row->old_runs, row->new_runs);
    else
        snprintf(c->runs, sizeof c->runs, "-");
    snprintf(c->exact, sizeof c->exact, "%s -> %s", exact_word(row->old_exact),
             exact_word(row->new_exact));
    c->verdict = sr_verdict_name(row->verdict) ? sr_verdict_name(row->verdict) : "-";
}

/* A row of the markdown table: point (NULL: none), label and finding as cells (report_text.c). */
static void markdown_row(FILE *out, const char *point, const sr_diff_row *row, const row_cells *c)
{
    const char *cells[] = {point, row->label, c->op, c->np, c->change, c->times, c->runs,
                           c->verdict, c->exact, row->finding[0] ? row->finding : "ok"};
    for (size_t k = point ? 0 : 1; k < SR_ARRAY_LEN(cells); k++) {
        fputs("| ", out);
        sr_markdown_cell(out, cells[k]);
        fputc(' ', out);
    }
    fputs("|\n", out);
}

/* What the numbers are: the method, then what one run per side cannot tell. */
static void print_method(const sr_diff *d, FILE *out, bool markdown)
{
    fprintf(out, "speedup of new against old (+ = new faster, as compare's), %s, 95%% interval: "
                 "with several runs on a side each run is one estimate (the process as the "
                 "unit: weighted by its interval and the runs' spread); with one run per side, all rounds of each (never paired by round); "
                 "slower beyond %.3g%% is a regression\n",
            d->relative ? "each variant's time over its run's baseline's" : "by time",
            d->threshold);
    if (!d->single_rows)
        return;
    if (d->between_run_sd > 0)
        fprintf(out, "%snote: one run per side: a change under %.2f%% cannot be told from "
                     "run-to-run movement on this machine (calibrated between-run sd %.3g%%, "
                     "added to the intervals)\n",
                markdown ? "- " : "", sr_between_runs_floor_percent(d->between_run_sd),
                d->between_run_sd);
    else
        fprintf(out, "%snote: one run per side: the intervals hold each run's rounds only, not "
                     "what moves a whole process; run-to-run movement on this machine is not "
                     "calibrated (sagerun diff --calibrate), so a change under it cannot be "
                     "told: repeat each side (--repeat 3)\n",
                markdown ? "- " : "");
}

void sr_diff_print(const sr_diff *d, FILE *out, bool markdown)
{
    bool points = has_points(d);
    if (markdown)
        fprintf(out, "# sagerun diff\n\n");
    print_method(d, out, markdown);
    char more[64];
    for (size_t i = 0; i < sr_diff_note_count(d); i++)
        sr_line_printf(out, "%snote: %s\n", markdown ? "- " : "", sr_diff_note(d, i, more, sizeof more));
    if (markdown)
        fprintf(out, "\n|%s variant | old p50 | new p50 | speedup [95%% CI] | times | runs | "
                     "verdict | byte-exact | finding |\n|%s---|---|---|---|---|---|---|---|---|\n",
                points ? " point |" : "", points ? "---|" : "");
    else
        fprintf(out, "\n%s%-24s  %-10s  %-10s  %-26s  %-13s  %-5s  %-15s  %-11s  %s\n",
                points ? "point                 " : "", "variant", "old p50", "new p50",
                "speedup [95% CI]", "times", "runs", "verdict", "byte-exact", "finding");
    for (size_t i = 0; i < d->count; i++) {
        const sr_diff_row *row = &d->rows[i];
        row_cells c;
        fill_cells(row, &c);
        size_t pl = strlen(row->point) < 22 ? strlen(row->point) : 21;
        if (markdown)
            markdown_row(out, points ? row->point : NULL, row, &c);
        else /* the width of times counts the two bytes of the x sign */
            sr_line_printf(out, "%s%s%-24s  %-10s  %-10s  %-26s  %-*s  %-5s  %-15s  %-11s  %s\n",
                           points ? row->point : "", points ? &"                      "[pl] : "",
                           row->label, c.op, c.np, c.change, strstr(c.times, "\u00d7") ? 14 : 13,
                           c.times, c.runs, c.verdict, c.exact, row->finding);
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
                         ? json_pack("{s:o, s:o, s:o, s:f, s:I, s:I, s:I, s:I}", "estimate",
                                     number_or_null(r->speedup.estimate), "low",
                                     number_or_null(r->speedup.low), "high",
                                     number_or_null(r->speedup.high), "confidence", 0.95, "rounds",
                                     (json_int_t)r->rounds, "new_rounds", (json_int_t)r->new_rounds,
                                     "old_runs", (json_int_t)r->old_runs, "new_runs",
                                     (json_int_t)r->new_runs)
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
    json_t *j = json_pack("{s:i, s:f, s:s, s:b, s:b, s:o, s:o}", "sagerun_diff", 1,
                          "threshold_percent", d->threshold, "method",
                          "speedup of new against old (+ = new faster), each variant's time "
                          "(relative: over its run's baseline's, paired within each run); several "
                          "runs on a side: one estimate per run, each weighted by 1 / (its "
                          "squared error + the between-run variance, DerSimonian-Laird), each "
                          "side's error scaled by its runs' scatter (Hartung-Knapp), Welch's "
                          "degrees of freedom (--absolute: Welch's t on the runs); one run "
                          "per side: all rounds of each, unpaired (Yuen's test on the logs, "
                          "20%-trimmed means), widened by between_run_sd_percent where set; "
                          "95% interval; p50 ratio without rounds",
                          "relative", d->relative, "regression",
                          (d->findings & ~(unsigned)SAGERUN_DIFF_GATE) != 0, "rows", rows,
                          "notes", notes);
    json_object_set_new(j, "gate", json_boolean((d->findings & SAGERUN_DIFF_GATE) != 0));
    json_object_set_new(j, "between_run_sd_percent", number_or_null(d->between_run_sd));
    json_object_set_new(j, "one_run_per_side_rows", json_integer((json_int_t)d->single_rows));
    return j;
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
          "regression,finding,lost_byte_exact,lost_acceptance,missing,old_runs,new_runs,gate\n", f);
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
        fprintf(f, ",%zu,%zu", r->old_runs, r->new_runs);
        sr_csv_field(f, r->findings & SAGERUN_DIFF_GATE ? "true" : "false", false);
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
    sagerun_report_diff_options opts;
    sr_report_diff_options_init_0_3(&opts);
    opts.threshold_percent = threshold_percent;
    opts.relative = relative;
    return sr_report_diff_opts(o, n, &opts, out, findings, err);
}

sagerun_status sr_report_diff_opts(const sr_report *o, const sr_report *n,
                                   const sagerun_report_diff_options *opts, FILE *out,
                                   unsigned *findings, sagerun_error *err)
{
    sr_diff d;
    sr_diff_options(&d, opts);
    sagerun_status st = sr_diff_reports(&d, NULL, o, n, err);
    *findings = st == SAGERUN_OK ? d.findings : 0;
    if (st == SAGERUN_OK)
        sr_diff_print(&d, out, false);
    sr_diff_clear(&d);
    return st;
}
