/* What a figure draws of one comparison report, read from its file (plot.h): the one place where
 * the plots meet the report model, so that the figures know nothing of how reports are stored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plot.h"

static sr_plot_times times_of(const sagerun_timing_summary *s)
{
    return (sr_plot_times){s->count, s->p50_s, s->p90_s, s->p99_s, s->min_s, s->max_s};
}

static char *copy_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Variant i of the result: its summary, its rounds, its samples, copied. */
static bool copy_variant(const sagerun_compare_result *r, size_t i, sr_plot_variant *p)
{
    memset(p, 0, sizeof *p);
    sagerun_compare_variant v = {.struct_size = sizeof v};
    const double *samples = NULL;
    size_t n = 0;
    if (sagerun_compare_result_variant(r, i, &v, NULL) != SAGERUN_OK ||
        sagerun_compare_result_samples(r, i, &samples, &n, NULL) != SAGERUN_OK)
        return false;
    const char *phase = sagerun_compare_result_failure_phase(r, i);
    p->label = strdup(v.label ? v.label : v.name ? v.name : "?");
    p->is_baseline = v.is_baseline;
    p->timing = times_of(&v.timing);
    p->speedup_percent = v.speedup_percent;
    bool valid = isfinite(v.speedup_low_percent) && isfinite(v.speedup_high_percent);
    p->interval = (sr_plot_interval){valid, v.speedup_estimate_percent, v.speedup_low_percent,
                                     v.speedup_high_percent};
    p->verdict = sagerun_verdict_name(v.verdict); /* static strings */
    p->failure = copy_or_null(v.failure);
    p->failure_phase = copy_or_null(phase);
    p->round_count = v.round_count;
    p->rounds = calloc(v.round_count ? v.round_count : 1, sizeof *p->rounds);
    for (uint32_t k = 0; p->rounds && k < v.round_count; k++) {
        sagerun_timing_summary t = {.struct_size = sizeof t};
        sagerun_compare_result_round(r, i, k, &t, NULL);
        p->rounds[k] = times_of(&t);
    }
    if (n) {
        if ((p->samples = malloc(n * sizeof(double))))
            memcpy(p->samples, samples, n * sizeof(double));
        p->sample_rounds = v.sample_rounds;
        p->samples_per_round = v.samples_per_round;
    }
    return p->label && p->rounds && (!n || p->samples) && (!v.failure || p->failure) &&
           (!phase || p->failure_phase);
}

/* "[1, 37810, 56, 128]" of the report's q_shape. */
static void format_shape(const sagerun_compare_info *info, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < info->q_shape_len && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%llu", i ? ", " : "",
                                 (unsigned long long)info->q_shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

/* The report's header and every variant, copied. */
static bool copy_report(const sagerun_compare_result *r, const sagerun_compare_info *info,
                        sr_plot_model *m)
{
    size_t count = sagerun_compare_result_variant_count(r);
    format_shape(info, m->shape, sizeof m->shape);
    m->device = copy_or_null(info->device_name);
    m->commit = copy_or_null(info->source_commit);
    m->compute_capability = info->compute_capability;
    m->warmup = info->warmup;
    m->rounds = info->rounds;
    m->iterations = info->iterations;
    m->variants = calloc(count ? count : 1, sizeof *m->variants);
    if (!m->variants || (info->device_name && !m->device) || (info->source_commit && !m->commit))
        return false;
    for (size_t i = 0; i < count; i++) {
        m->variant_count = i + 1; /* what a failed copy made is freed with the rest */
        if (!copy_variant(r, i, &m->variants[i]))
            return false;
    }
    return true;
}

sagerun_status sr_plot_model_read(const char *path, sr_plot_model *m, sagerun_error *err)
{
    memset(m, 0, sizeof *m);
    sagerun_compare_result *r = NULL;
    sagerun_status st = sagerun_compare_result_read(path, &r, err);
    if (st != SAGERUN_OK)
        return st;
    sagerun_compare_info info = {.struct_size = sizeof info};
    sagerun_compare_result_info(r, &info, NULL);
    m->threshold = isfinite(info.noise_threshold_percent) ? info.noise_threshold_percent : 1.0;
    if (info.schema_version == 0) { /* the seed's format: judged as 'sagerun show' judges it */
        sagerun_compare_result_derive(r);
        sagerun_compare_variant b = {.struct_size = sizeof b};
        m->derived = sagerun_compare_result_variant_count(r) > 1 &&
                     sagerun_compare_result_variant(r, 0, &b, NULL) == SAGERUN_OK &&
                     b.round_count >= 2;
    }
    if (!copy_report(r, &info, m)) {
        sr_plot_model_clear(m);
        st = sr_cli_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    sagerun_compare_result_destroy(r);
    return st;
}

void sr_plot_model_clear(sr_plot_model *m)
{
    for (size_t i = 0; m->variants && i < m->variant_count; i++) {
        sr_plot_variant *v = &m->variants[i];
        free(v->label);
        free(v->failure);
        free(v->failure_phase);
        free(v->rounds);
        free(v->samples);
    }
    free(m->variants);
    free(m->device);
    free(m->commit);
    memset(m, 0, sizeof *m);
}
