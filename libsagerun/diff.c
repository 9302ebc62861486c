/* Diffs of reports (compare.h): one pair of report files (sagerun_report_diff), or a diff handle
 * that gathers the rows of many pairs (a sweep's points); the rows are report_diff.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* The options as library 0.2 and before had them: what a caller built against them allocates. */
typedef struct sr_report_diff_options_0_2 {
    uint32_t struct_size;
    double threshold_percent;
    int relative;
} sr_report_diff_options_0_2;

/* sagerun_report_diff_options_init@@SAGERUN_0.3, for callers built against 0.3's header (and
 * the library's own, internal.h). */
SAGERUN_API void sr_report_diff_options_init_0_3(sagerun_report_diff_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->struct_size = sizeof(*opts);
    opts->threshold_percent = 1.0; /* compare's noise threshold */
    opts->relative = 1;            /* what slows a whole run alike cancels */
    opts->fail_if_slower_percent = opts->require_faster_percent = NAN;
}

/* Callers linked before 0.3 (sagerun_report_diff_options_init@SAGERUN_0) allocated the 0.2
 * struct: writing 0.3's would run past it (it corrupted the Python package's memory, which
 * declared the 0.2 fields). They get the 0.2 struct and its defaults (relative 0, as then). */
SAGERUN_API void sr_report_diff_options_init_0_2(sr_report_diff_options_0_2 *opts);
SAGERUN_API void sr_report_diff_options_init_0_2(sr_report_diff_options_0_2 *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->struct_size = sizeof(*opts);
    opts->threshold_percent = 1.0;
}
__asm__(".symver sr_report_diff_options_init_0_2, sagerun_report_diff_options_init@SAGERUN_0");
__asm__(".symver sr_report_diff_options_init_0_3, sagerun_report_diff_options_init@@SAGERUN_0.3");

/* The caller's options over the defaults (as far as its struct_size covers), checked. */
static sagerun_status diff_options(const sagerun_report_diff_options *opts,
                                   sagerun_report_diff_options *o, sagerun_error *err)
{
    sr_report_diff_options_init_0_3(o);
    if (opts)
        memcpy(o, opts, opts->struct_size < sizeof(*o) ? opts->struct_size : sizeof(*o));
    if (!(o->threshold_percent >= 0) || o->threshold_percent > 1e6)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "diff: the threshold must be a percentage from 0 to 1000000 (got %g)",
                            o->threshold_percent);
    if (!(o->between_run_sd_percent >= 0) || o->between_run_sd_percent > 100)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "diff: the between-run sd must be a percentage from 0 to 100 (got %g)",
                            o->between_run_sd_percent);
    if (fabs(o->fail_if_slower_percent) > 1e6 || fabs(o->require_faster_percent) > 1e6)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "diff: a gate must be a percentage within +-1000000 (got %g, %g)",
                            o->fail_if_slower_percent, o->require_faster_percent);
    return SAGERUN_OK;
}

/* A diff of the options (checked). */
void sr_diff_options(sr_diff *d, const sagerun_report_diff_options *o)
{
    sr_diff_init(d, o->threshold_percent, o->relative != 0);
    d->between_run_sd = o->between_run_sd_percent;
    d->fail_if_slower = o->fail_if_slower_percent;
    d->require_faster = o->require_faster_percent;
}

sagerun_status sagerun_report_diff(const char *old_path, const char *new_path,
                                   const sagerun_report_diff_options *opts, FILE *out,
                                   unsigned *findings, sagerun_error *err)
{
    if (!old_path || !new_path || !out || !findings)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "report_diff: NULL argument");
    sagerun_report_diff_options o;
    sagerun_status st = diff_options(opts, &o, err); /* a NaN threshold hid every regression */
    if (st != SAGERUN_OK)
        return st;
    sr_report a, b;
    st = sr_report_read(old_path, &a, err);
    if (st != SAGERUN_OK)
        return st;
    if ((st = sr_report_read(new_path, &b, err)) != SAGERUN_OK) {
        sr_report_clear(&a);
        return st;
    }
    st = sr_report_diff_opts(&a, &b, &o, out, findings, err);
    sr_report_clear(&a);
    sr_report_clear(&b);
    return st;
}

struct sagerun_diff {
    sr_diff d;
};

sagerun_status sagerun_diff_create(const sagerun_report_diff_options *opts, sagerun_diff **out,
                                   sagerun_error *err)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "diff_create: NULL argument");
    *out = NULL;
    sagerun_report_diff_options o;
    sagerun_status st = diff_options(opts, &o, err);
    if (st != SAGERUN_OK)
        return st;
    if (!(*out = calloc(1, sizeof(**out))))
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sr_diff_options(&(*out)->d, &o);
    return SAGERUN_OK;
}

void sagerun_diff_destroy(sagerun_diff *diff)
{
    if (!diff)
        return;
    sr_diff_clear(&diff->d);
    free(diff);
}

sagerun_status sagerun_diff_add(sagerun_diff *diff, const char *point,
                                const sagerun_compare_result *old_result,
                                const sagerun_compare_result *new_result, sagerun_error *err)
{
    if (!diff || !old_result || !new_result)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "diff_add: NULL argument");
    return sr_diff_reports(&diff->d, point, &old_result->report, &new_result->report, err);
}

/* The reports of n results, into a new array (NULL: out of memory, or a NULL result). */
static const sr_report **result_reports(const sagerun_compare_result *const *r, size_t n)
{
    const sr_report **out = n ? malloc(n * sizeof(*out)) : NULL;
    for (size_t i = 0; out && i < n; i++) {
        if (!r[i]) {
            free(out);
            return NULL;
        }
        out[i] = &r[i]->report;
    }
    return out;
}

sagerun_status sagerun_diff_add_runs(sagerun_diff *diff, const char *point,
                                     const sagerun_compare_result *const *old_results,
                                     size_t n_old,
                                     const sagerun_compare_result *const *new_results,
                                     size_t n_new, sagerun_error *err)
{
    if (!diff || !old_results || !new_results || !n_old || !n_new)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "diff_add_runs: NULL argument or no run on a side");
    const sr_report **o = result_reports(old_results, n_old),
                    **n = result_reports(new_results, n_new);
    sagerun_status st = o && n ? sr_diff_runs(&diff->d, point, o, n_old, n, n_new, err)
                               : sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                              "diff_add_runs: a NULL result (or out of memory)");
    free(o);
    free(n);
    return st;
}

sagerun_status sagerun_diff_add_missing(sagerun_diff *diff, const char *point, const char *why,
                                        sagerun_error *err)
{
    if (!diff || !point || !why)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "diff_add_missing: NULL argument");
    return sr_diff_missing_point(&diff->d, point, why, err);
}

unsigned sagerun_diff_findings(const sagerun_diff *diff)
{
    return diff ? diff->d.findings : 0;
}

void sagerun_diff_print(const sagerun_diff *diff, FILE *out, int markdown)
{
    if (diff && out)
        sr_diff_print(&diff->d, out, markdown != 0);
}

sagerun_status sagerun_diff_write_json(const sagerun_diff *diff, const char *path,
                                       sagerun_error *err)
{
    if (!diff || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "diff_write_json: NULL argument");
    return sr_diff_write_json(&diff->d, path, err);
}

sagerun_status sagerun_diff_write_markdown(const sagerun_diff *diff, const char *path,
                                           sagerun_error *err)
{
    if (!diff || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "diff_write_markdown: NULL argument");
    return sr_diff_write_markdown(&diff->d, path, err);
}

sagerun_status sagerun_diff_write_csv(const sagerun_diff *diff, const char *path,
                                      sagerun_error *err)
{
    if (!diff || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "diff_write_csv: NULL argument");
    return sr_diff_write_csv(&diff->d, path, err);
}
