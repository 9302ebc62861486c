/* The results of a comparison (compare.h): read access to the report, its files, and reports
 * read back (read, show). Diffs are diff.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "judge.h"
#include "tolerance.h"
#include "workload.h"

/* ---- results ---------------------------------------------------------------------------------- */

void sagerun_compare_result_destroy(sagerun_compare_result *res)
{
    if (!res)
        return;
    sr_report_clear(&res->report);
    free(res);
}

size_t sagerun_compare_result_variant_count(const sagerun_compare_result *res)
{
    return res ? res->report.variant_count : 0;
}

static void timing_out(const sr_summary *s, sagerun_timing_summary *t)
{
    t->reserved = 0;
    t->count = s->count;
    t->mean_s = s->mean;
    t->p50_s = s->p50;
    t->p90_s = s->p90;
    t->p95_s = s->p95;
    t->p99_s = s->p99;
    t->min_s = s->min;
    t->max_s = s->max;
}

sagerun_status sagerun_compare_result_variant(const sagerun_compare_result *res, size_t index,
                                              sagerun_compare_variant *out, sagerun_error *err)
{
    if (!res || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_variant: NULL argument");
    if (index >= res->report.variant_count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range (%zu)",
                            index, res->report.variant_count);
    if (out->struct_size < offsetof(sagerun_compare_variant, timing))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare_result_variant: struct_size %u is too small",
                            out->struct_size);
    const sr_report_variant *v = &res->report.variants[index];
    sagerun_compare_variant full;
    memset(&full, 0, sizeof(full));
    full.struct_size = out->struct_size;
    full.round_count = (uint32_t)v->round_count;
    full.name = v->name;
    full.label = sr_report_variant_label(v); /* a seed-format report has names only */
    full.path = v->path;
    full.failure = v->failure;
    full.is_baseline = v->is_baseline;
    full.ran = !v->failure && v->timing.count > 0;
    full.timing.struct_size = sizeof(full.timing);
    timing_out(&v->timing, &full.timing);
    full.prepare_s = v->prepare_s;
    full.tops = v->tops;
    full.speedup_percent = v->speedup_percent;
    full.speedup_low_percent = v->interval.valid ? v->interval.low : NAN;
    full.speedup_high_percent = v->interval.valid ? v->interval.high : NAN;
    full.verdict = v->verdict;
    snprintf(full.output_sha256, sizeof(full.output_sha256), "%s",
             v->output_sha256 ? v->output_sha256 : "");
    snprintf(full.last_output_sha256, sizeof(full.last_output_sha256), "%s",
             v->last_output_sha256 ? v->last_output_sha256 : "");
    full.deterministic = v->deterministic == 1;
    full.byte_exact = v->byte_exact == 1;
    full.accuracy_present = v->accuracy.present;
    full.accuracy_rows = v->accuracy.rows;
    full.accuracy_nonfinite = v->accuracy.nonfinite;
    full.cosine_similarity = v->accuracy.present ? v->accuracy.cosine : NAN;
    full.relative_l1 = v->accuracy.present ? v->accuracy.rel_l1 : NAN;
    full.rmse = v->accuracy.present ? v->accuracy.rmse : NAN;
    full.max_abs_error = v->accuracy.present ? v->accuracy.max_abs : NAN;
    full.byte_diff_present = v->byte_diff.present;
    full.diff_elements = v->byte_diff.differing;
    full.first_diff_index = v->byte_diff.first_index;
    full.max_abs_diff = v->byte_diff.present ? v->byte_diff.max_abs : NAN;
    full.max_ulp_diff = v->byte_diff.max_ulp;
    full.speedup_estimate_percent = v->interval.valid ? v->interval.estimate : NAN;
    full.sample_rounds = v->samples ? (uint32_t)v->sample_rounds : 0;
    full.samples_per_round = v->samples ? (uint32_t)v->samples_per_round : 0;
    full.accepted = sr_report_variant_accepted(v);
    /* Only the bytes the caller's struct has (it may be an older, shorter one). */
    memcpy(out, &full, out->struct_size < sizeof(full) ? out->struct_size : sizeof(full));
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_result_round(const sagerun_compare_result *res, size_t index,
                                            size_t round, sagerun_timing_summary *out,
                                            sagerun_error *err)
{
    if (!res || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_round: NULL argument");
    if (index >= res->report.variant_count ||
        round >= res->report.variants[index].round_count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "round %zu of variant %zu: out of range", round, index);
    if (out->struct_size < sizeof(*out))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare_result_round: struct_size %u is too small", out->struct_size);
    timing_out(&res->report.variants[index].rounds[round], out);
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_result_samples(const sagerun_compare_result *res, size_t index,
                                              const double **seconds, size_t *count,
                                              sagerun_error *err)
{
    if (!res || !seconds || !count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_samples: NULL argument");
    if (index >= res->report.variant_count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range",
                            index);
    const sr_report_variant *v = &res->report.variants[index];
    *seconds = v->samples;
    *count = v->samples ? v->sample_rounds * v->samples_per_round : 0;
    return SAGERUN_OK;
}

const char *sagerun_compare_result_reference_sha256(const sagerun_compare_result *res)
{
    return res ? res->report.reference_sha256 : NULL;
}

size_t sagerun_compare_result_warning_count(const sagerun_compare_result *res)
{
    return res ? res->report.warning_count : 0;
}

const char *sagerun_compare_result_warning(const sagerun_compare_result *res, size_t index)
{
    return res && index < res->report.warning_count ? res->report.warnings[index] : NULL;
}

int sagerun_compare_result_complete(const sagerun_compare_result *res)
{
    return res && !res->report.incomplete;
}

uint32_t sagerun_compare_result_rounds_completed(const sagerun_compare_result *res)
{
    return res ? (uint32_t)res->report.rounds_completed : 0;
}

const char *sagerun_compare_result_failure_phase(const sagerun_compare_result *res, size_t index)
{
    return res && index < res->report.variant_count ? res->report.variants[index].failure_phase
                                                    : NULL;
}

int sagerun_compare_result_all_ran(const sagerun_compare_result *res)
{
    if (!res)
        return 0;
    for (size_t i = 0; i < res->report.variant_count; i++)
        if (res->report.variants[i].failure || !res->report.variants[i].timing.count)
            return 0;
    return 1;
}

void sagerun_compare_result_apply_tolerance(sagerun_compare_result *res,
                                            const sagerun_tolerance *t)
{
    if (res)
        sr_tolerance_apply(&res->report, t ? sr_tolerance_limits(t) : NULL);
}

int sagerun_compare_result_all_accepted(const sagerun_compare_result *res)
{
    if (!res)
        return 0;
    for (size_t i = 0; i < res->report.variant_count; i++)
        if (!sr_report_variant_accepted(&res->report.variants[i]))
            return 0;
    return 1;
}

int sagerun_compare_result_all_byte_exact(const sagerun_compare_result *res)
{
    if (!res)
        return 0;
    for (size_t i = 0; i < res->report.variant_count; i++)
        if (res->report.variants[i].byte_exact != 1)
            return 0;
    return 1;
}

sagerun_status sagerun_compare_result_set_metadata(sagerun_compare_result *res,
                                                   const char *metadata_json, sagerun_error *err)
{
    if (!res)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "set_metadata: NULL result");
    json_t *meta = NULL;
    sagerun_status st = metadata_json ? sr_metadata_parse(metadata_json, &meta, err) : SAGERUN_OK;
    if (st != SAGERUN_OK)
        return st;
    json_decref(res->report.metadata);
    res->report.metadata = meta;
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_result_write_json(const sagerun_compare_result *res,
                                                 const char *path, const char *metadata_json,
                                                 sagerun_error *err)
{
    if (!res || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "write_json: NULL argument");
    if (!metadata_json)
        return sr_report_write_json(&res->report, path, err);
    /* A shallow copy of the report with other metadata: the result stays as it was. */
    sagerun_compare_result tmp = *res;
    tmp.report.metadata = NULL;
    sagerun_status st = sagerun_compare_result_set_metadata(&tmp, metadata_json, err);
    if (st == SAGERUN_OK)
        st = sr_report_write_json(&tmp.report, path, err);
    json_decref(tmp.report.metadata);
    return st;
}

sagerun_status sagerun_compare_result_write_markdown(const sagerun_compare_result *res,
                                                     const char *path, sagerun_error *err)
{
    if (!res || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "write_markdown: NULL argument");
    return sr_report_write_markdown(&res->report, path, err);
}

void sagerun_compare_result_print(const sagerun_compare_result *res, FILE *out)
{
    if (res && out)
        sr_report_print_table(&res->report, out);
}

sagerun_status sagerun_compare_result_write_csv(const sagerun_compare_result *res,
                                                const char *path, sagerun_error *err)
{
    if (!res || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "write_csv: NULL argument");
    return sr_report_write_csv(&res->report, path, err);
}

void sagerun_compare_csv_header(FILE *out, const char *const *lead, size_t n_lead)
{
    if (out)
        sr_report_csv_header(out, lead, lead ? n_lead : 0);
}

void sagerun_compare_result_csv_rows(const sagerun_compare_result *res, FILE *out,
                                     const char *const *lead, size_t n_lead)
{
    if (res && out)
        sr_report_csv_rows(out, &res->report, lead, lead ? n_lead : 0);
}

void sagerun_compare_csv_failure_row(FILE *out, const char *const *lead, size_t n_lead,
                                     const char *failure)
{
    if (out)
        sr_report_csv_failure_row(out, lead, lead ? n_lead : 0, failure);
}

/* ---- reports read back ------------------------------------------------------------------------ */

/* A report in the seed's format has no interval, verdict or TOPS, but its per-round p50s and
 * q_shape ([B, N, H, D]: the seed's NHD) give them: derived for display, at the default threshold,
 * by the engine's own judgement. */
static void derive_missing(sr_report *r)
{
    if (r->has_ext || r->variant_count == 0)
        return;
    size_t outside = sr_judge_report(r, 1.0, true);
    if (r->variant_count > 1 && r->variants[0].round_count >= 2)
        sr_report_add_warning(r, "interval, verdict (1%% threshold) and TOPS derived from the "
                                 "report's per-round p50s and q_shape");
    if (outside)
        sr_report_add_warning(r, "the seed's speedup (ratio of pooled p50s) lies outside the "
                                 "paired interval for %zu variant(s): the table shows the paired "
                                 "estimate",
                              outside);
}

sagerun_status sagerun_compare_result_read(const char *path, sagerun_compare_result **out,
                                           sagerun_error *err)
{
    if (!path || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_read: NULL argument");
    *out = NULL;
    sagerun_compare_result *res = calloc(1, sizeof(*res));
    if (!res)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sagerun_status st = sr_report_read(path, &res->report, err);
    if (st != SAGERUN_OK) {
        free(res); /* the reader leaves the report cleared */
        return st;
    }
    *out = res;
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_result_info(const sagerun_compare_result *res,
                                           sagerun_compare_info *out, sagerun_error *err)
{
    if (!res || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_info: NULL argument");
    if (out->struct_size < offsetof(sagerun_compare_info, q_shape))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare_result_info: struct_size %u is too small", out->struct_size);
    const sr_report *r = &res->report;
    sagerun_compare_info full;
    memset(&full, 0, sizeof(full));
    full.struct_size = out->struct_size;
    full.schema_version = r->has_ext ? (int)r->schema_version : 0;
    full.q_shape_len = (uint32_t)(r->q_shape_len < 8 ? r->q_shape_len : 8);
    memcpy(full.q_shape, r->q_shape, full.q_shape_len * sizeof(full.q_shape[0]));
    full.complete = !r->incomplete;
    full.warmup = r->warmup;
    full.rounds = r->rounds;
    full.iterations = r->iterations;
    full.noise_threshold_percent = r->noise_threshold_percent;
    full.source_commit = r->source_commit;
    full.device_name = r->device_name;
    full.backend = r->backend;
    full.compute_capability = r->compute_capability;
    full.has_problem = r->has_problem;
    if (r->has_problem)
        full.problem = r->problem;
    memcpy(out, &full, out->struct_size < sizeof(full) ? out->struct_size : sizeof(full));
    return SAGERUN_OK;
}

void sagerun_compare_result_derive(sagerun_compare_result *res)
{
    if (res)
        derive_missing(&res->report);
}

sagerun_status sagerun_report_show(const char *path, int markdown, FILE *out, sagerun_error *err)
{
    if (!path || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "report_show: NULL argument");
    sr_report r;
    sagerun_status st = sr_report_read(path, &r, err);
    if (st != SAGERUN_OK)
        return st;
    derive_missing(&r);
    if (markdown)
        sr_report_print_markdown(&r, out);
    else
        sr_report_print_table(&r, out);
    sr_report_clear(&r);
    return SAGERUN_OK;
}
