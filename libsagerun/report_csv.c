/* A report as CSV (RFC 4180): one row per variant, for spreadsheets and pandas. Columns that a
 * report lacks are empty; times in seconds, percentages in percent points, as in the JSON. A
 * sweep writes the same rows after leading columns of its own (the workload, its axes). */
#include <math.h>
#include <string.h>

#include "report.h"
#include "safe_io.h"
#include "tolerance.h"

/* The columns after the caller's leading ones: one list, for the header and the rows alike. */
static const char *const csv_columns[] = {
    "variant", "is_baseline", "backend", "batch", "seq_len", "heads_q", "heads_kv", "head_dim",
    "layout", "dtype", "causal", "count", "p50_s", "min_s", "p90_s", "mean_s", "tops",
    "speedup_percent", "speedup_low_percent", "speedup_high_percent", "verdict", "byte_exact",
    "output_sha256", "cosine_similarity", "relative_l1", "failure", "accepted_by", "complete",
    /* problem ABI 0.2, after the columns of before so that none of theirs moves */
    "kv_len", "align", "window_left", "window_right", "softcap", "total_q", "total_kv",
    "page_size",
    /* what speedup_percent is (the paired estimate, or the p50 ratio where there is no
     * interval) and the factor it means, baseline / variant */
    "speedup_source", "speedup_times",
    /* issue 41: the instances the interval's rounds were spread over, their offsets' sd */
    "instances", "instance_sd_percent"};

void sr_csv_field(FILE *f, const char *text, bool first)
{
    if (!first)
        fputc(',', f);
    if (!text)
        return;
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *c = text; *c; c++) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

static void csv_number(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.9g", v);
}

static void csv_uint(FILE *f, unsigned long long v, bool present)
{
    fputc(',', f);
    if (present)
        fprintf(f, "%llu", v);
}

void sr_report_csv_header(FILE *f, const char *const *lead, size_t n_lead)
{
    for (size_t i = 0; i < n_lead; i++)
        sr_csv_field(f, lead[i], i == 0);
    for (size_t i = 0; i < SR_ARRAY_LEN(csv_columns); i++)
        sr_csv_field(f, csv_columns[i], i == 0 && n_lead == 0);
    fputc('\n', f);
}

static void csv_int(FILE *f, long long v, bool present)
{
    fputc(',', f);
    if (present)
        fprintf(f, "%lld", v);
}

/* The columns of problem ABI 0.2: the window's sides and the varlen totals empty where the
 * problem has none; everything empty without a problem. */
static void csv_problem_02(FILE *f, const sagerun_problem *p)
{
    csv_uint(f, p ? sagerun_problem_kv_len(p) : 0, p);
    sr_csv_field(f, !p ? NULL : p->align == SAGERUN_ALIGN_BOTTOM_RIGHT ? "bottom-right"
                                                                       : "top-left", false);
    csv_int(f, p ? p->window_left : 0, p && p->window);
    csv_int(f, p ? p->window_right : 0, p && p->window);
    csv_number(f, p ? p->softcap : NAN);
    csv_uint(f, p ? p->total_q : 0, p && p->varlen);
    csv_uint(f, p ? p->total_kv : 0, p && p->varlen);
    csv_uint(f, p ? p->page_size : 0, p);
}

static void csv_variant(FILE *f, const sr_report *r, const sr_report_variant *v, bool first)
{
    const sagerun_problem *p = &r->problem;
    bool hp = r->has_problem;
    sr_csv_field(f, v->label ? v->label : v->name, first);
    sr_csv_field(f, v->is_baseline ? "true" : "false", false);
    sr_csv_field(f, v->backend, false);
    csv_uint(f, p->batch, hp);
    csv_uint(f, p->seq_len, hp);
    csv_uint(f, p->heads_q, hp);
    csv_uint(f, p->heads_kv, hp);
    csv_uint(f, p->head_dim, hp);
    sr_csv_field(f, hp ? (p->layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD") : NULL, false);
    sr_csv_field(f, hp ? sagerun_dtype_word((int)p->dtype) : NULL, false);
    sr_csv_field(f, hp ? (p->causal ? "true" : "false") : NULL, false);
    csv_uint(f, v->timing.count, true);
    bool timed = v->timing.count > 0;
    csv_number(f, timed ? v->timing.p50 : NAN);
    csv_number(f, timed ? v->timing.min : NAN);
    csv_number(f, timed ? v->timing.p90 : NAN);
    csv_number(f, timed ? v->timing.mean : NAN);
    csv_number(f, v->tops);
    const sr_interval *iv = &v->interval;
    csv_number(f, iv->valid ? iv->estimate : v->speedup_percent);
    csv_number(f, iv->valid ? iv->low : NAN);
    csv_number(f, iv->valid ? iv->high : NAN);
    sr_csv_field(f, sr_verdict_name(v->verdict), false);
    sr_csv_field(f, v->byte_exact < 0 ? NULL : v->byte_exact ? "true" : "false", false);
    sr_csv_field(f, v->output_sha256, false);
    csv_number(f, v->accuracy.present ? v->accuracy.cosine : NAN);
    csv_number(f, v->accuracy.present ? v->accuracy.rel_l1 : NAN);
    sr_csv_field(f, v->failure, false);
    sr_csv_field(f, v->byte_exact == 1 ? "bytes" : sr_report_variant_accepted(v) ? "tolerance"
                                                                                : NULL, false);
    sr_csv_field(f, r->incomplete ? "false" : "true", false); /* false: interrupted */
    csv_problem_02(f, hp ? p : NULL);
    double speedup = iv->valid ? iv->estimate : v->speedup_percent;
    sr_csv_field(f, v->is_baseline || !isfinite(speedup) ? NULL : iv->valid ? "paired_estimate"
                                                                           : "p50_ratio", false);
    csv_number(f, v->is_baseline ? NAN : sr_speedup_times(speedup));
    csv_uint(f, iv->instances, iv->valid && iv->instances > 1);
    csv_number(f, iv->valid && iv->instances > 1 ? iv->instance_sd : NAN);
    fputc('\n', f);
}

void sr_report_csv_rows(FILE *f, const sr_report *r, const char *const *lead, size_t n_lead)
{
    for (size_t i = 0; i < r->variant_count; i++) {
        for (size_t k = 0; k < n_lead; k++)
            sr_csv_field(f, lead[k], k == 0);
        csv_variant(f, r, &r->variants[i], n_lead == 0);
    }
}

void sr_report_csv_failure_row(FILE *f, const char *const *lead, size_t n_lead,
                               const char *failure)
{
    for (size_t k = 0; k < n_lead; k++)
        sr_csv_field(f, lead[k], k == 0);
    for (size_t i = 0; i < SR_ARRAY_LEN(csv_columns); i++)
        sr_csv_field(f, strcmp(csv_columns[i], "failure") == 0 ? failure : NULL,
                     i == 0 && n_lead == 0);
    fputc('\n', f);
}

static bool write_csv_cb(FILE *f, const void *user)
{
    const sr_report *r = user;
    sr_report_csv_header(f, NULL, 0);
    sr_report_csv_rows(f, r, NULL, 0);
    return !ferror(f);
}

sagerun_status sr_report_write_csv(const sr_report *r, const char *path, sagerun_error *err)
{
    return sr_write_file_atomic(path, write_csv_cb, r, err);
}
