/* What a figure draws of one comparison report, read from its file (plot.h): the one place where
 * the plots meet the report model, so that the figures know nothing of how reports are stored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "plot.h"
#include "report.h"

static sr_plot_times times_of(const sr_summary *s)
{
    return (sr_plot_times){s->count, s->p50, s->p90, s->p99, s->min, s->max};
}

static char *copy_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static bool copy_variant(const sr_report_variant *v, sr_plot_variant *p)
{
    memset(p, 0, sizeof *p);
    p->label = strdup(sr_report_variant_label(v));
    p->is_baseline = v->is_baseline;
    p->timing = times_of(&v->timing);
    p->speedup_percent = v->speedup_percent;
    p->interval = (sr_plot_interval){v->interval.valid, v->interval.estimate, v->interval.low,
                                     v->interval.high};
    p->verdict = sr_verdict_name(v->verdict); /* static strings */
    p->failure = copy_or_null(v->failure);
    p->failure_phase = copy_or_null(v->failure_phase);
    p->round_count = v->round_count;
    p->rounds = calloc(v->round_count ? v->round_count : 1, sizeof *p->rounds);
    for (size_t k = 0; p->rounds && k < v->round_count; k++)
        p->rounds[k] = times_of(&v->rounds[k]);
    if (v->samples) {
        size_t n = v->sample_rounds * v->samples_per_round;
        if ((p->samples = malloc((n ? n : 1) * sizeof(double))))
            memcpy(p->samples, v->samples, n * sizeof(double));
        p->sample_rounds = v->sample_rounds;
        p->samples_per_round = v->samples_per_round;
    }
    return p->label && p->rounds && (!v->samples || p->samples) &&
           (!v->failure || p->failure) && (!v->failure_phase || p->failure_phase);
}

/* The report's header and every variant, copied. */
static bool copy_report(const sr_report *r, sr_plot_model *m)
{
    sr_report_format_shape(r, m->shape, sizeof m->shape);
    m->device = copy_or_null(r->device_name);
    m->commit = copy_or_null(r->source_commit);
    m->compute_capability = r->compute_capability;
    m->warmup = r->warmup;
    m->rounds = r->rounds;
    m->iterations = r->iterations;
    m->variants = calloc(r->variant_count ? r->variant_count : 1, sizeof *m->variants);
    if (!m->variants || (r->device_name && !m->device) || (r->source_commit && !m->commit))
        return false;
    for (size_t i = 0; i < r->variant_count; i++) {
        m->variant_count = i + 1; /* what a failed copy made is freed with the rest */
        if (!copy_variant(&r->variants[i], &m->variants[i]))
            return false;
    }
    return true;
}

sagerun_status sr_plot_model_read(const char *path, sr_plot_model *m, sagerun_error *err)
{
    memset(m, 0, sizeof *m);
    sr_report r;
    sagerun_status st = sr_report_read(path, &r, err);
    if (st != SAGERUN_OK)
        return st;
    m->threshold = isfinite(r.noise_threshold_percent) ? r.noise_threshold_percent : 1.0;
    if (!r.has_ext) { /* the seed's format: judged as 'sagerun show' judges it */
        sr_judge_report(&r, m->threshold, true);
        m->derived = r.variant_count > 1 && r.variants[0].round_count >= 2;
    }
    if (!copy_report(&r, m)) {
        sr_plot_model_clear(m);
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    sr_report_clear(&r);
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
