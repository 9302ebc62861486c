/* Comparison reports: the model, JSON in the seed's schema (+ extensions), reading back with
 * validation, the stdout table, markdown and the diff of two reports. */
#include "report.h"
#include "tolerance.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the model -------------------------------------------------------------------------------- */

char *sr_strdup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

void sr_report_variant_clear(sr_report_variant *v)
{
    free(v->name);
    free(v->path);
    free(v->output_sha256);
    free(v->rounds);
    free(v->label);
    free(v->version);
    free(v->backend);
    free(v->plugin_sha256);
    free(v->failure);
    free(v->failure_phase);
    free(v->last_output_sha256);
    free(v->samples);
    free(v->extension_path);
    free(v->extension_sha256);
    memset(v, 0, sizeof(*v));
}

void sr_report_clear(sr_report *r)
{
    json_decref(r->metadata);
    free(r->source_commit);
    free(r->reference_sha256);
    for (size_t i = 0; i < r->variant_count; i++)
        sr_report_variant_clear(&r->variants[i]);
    free(r->variants);
    free(r->tool_version);
    free(r->tool_commit);
    free(r->created_utc);
    free(r->device_name);
    free(r->driver_release);
    free(r->device_uuid);
    free(r->pci_bus_id);
    free(r->backend);
    free(r->expect_sha256);
    free(r->clock_source);
    free(r->clock_unavailable);
    free(r->clock_rounds);
    for (size_t i = 0; i < r->warning_count; i++)
        free(r->warnings[i]);
    free(r->warnings);
    free(r->cu_seqlens_q);
    free(r->cu_seqlens_kv);
    memset(r, 0, sizeof(*r));
}

static int32_t *copy_prefix(const int32_t *cu, uint32_t count)
{
    int32_t *c = malloc(sizeof *c * ((size_t)count + 1));
    if (c)
        memcpy(c, cu, sizeof *c * ((size_t)count + 1));
    return c;
}

bool sr_report_set_sequences(sr_report *r, const sagerun_sequences *s)
{
    free(r->cu_seqlens_q);
    free(r->cu_seqlens_kv);
    r->cu_seqlens_q = r->cu_seqlens_kv = NULL;
    if (!r->problem.varlen || !s || !s->cu_seqlens_q || !s->cu_seqlens_kv)
        return true;
    r->cu_seqlens_q = copy_prefix(s->cu_seqlens_q, r->problem.batch);
    r->cu_seqlens_kv = copy_prefix(s->cu_seqlens_kv, r->problem.batch);
    if (r->cu_seqlens_q && r->cu_seqlens_kv)
        return true;
    free(r->cu_seqlens_q);
    free(r->cu_seqlens_kv);
    r->cu_seqlens_q = r->cu_seqlens_kv = NULL;
    return false;
}

double sr_report_operations(const sr_report *r)
{
    if (r->has_problem) {
        sagerun_sequences s = {.struct_size = sizeof s, .count = r->problem.batch,
                               .cu_seqlens_q = r->cu_seqlens_q,
                               .cu_seqlens_kv = r->cu_seqlens_kv};
        return sagerun_problem_operations_seq(&r->problem, &s);
    }
    if (r->q_shape_len != 4)
        return NAN;
    /* the seed's q_shape is [B, N, H, D] */
    const uint64_t *q = r->q_shape;
    return 4.0 * (double)q[0] * (double)q[2] * (double)q[1] * (double)q[1] * (double)q[3];
}

bool sr_report_add_warning(sr_report *r, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < r->warning_count; i++)
        if (!strcmp(r->warnings[i], buf)) /* said already (a tolerance or derive applied again) */
            return true;
    char **w = realloc(r->warnings, (r->warning_count + 1) * sizeof(*w));
    if (!w)
        return false;
    r->warnings = w;
    if (!(w[r->warning_count] = strdup(buf)))
        return false;
    r->warning_count++;
    return true;
}

static const char *layout_name(uint32_t layout)
{
    return layout == SAGERUN_LAYOUT_HND ? "HND" : layout == SAGERUN_LAYOUT_NHD ? "NHD" : NULL;
}

/* ---- writing JSON ----------------------------------------------------------------------------- */

/* jansson rejects NaN and Inf; the report says null for "unknown". */
static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* A string of the report, which may come from a plugin (a name, a version, a failure reason cut
 * at a buffer's end): bytes that are not UTF-8, which JSON cannot hold, as "\xNN". */
static json_t *text_json(const char *s)
{
    json_t *j = json_string(s);
    if (!j) {
        char *t = sr_text_utf8(s);
        j = t ? json_string(t) : NULL;
        free(t);
    }
    return j;
}

static json_t *string_or_null(const char *s)
{
    return s ? text_json(s) : json_null();
}

static json_t *tristate(int b)
{
    return b < 0 ? json_null() : json_boolean(b);
}

/* json_object_set_new that remembers a failure instead of checking every call. */
typedef struct builder {
    bool failed;
} builder;

static void put(builder *b, json_t *obj, const char *key, json_t *value)
{
    if (!obj || !value || json_object_set_new(obj, key, value) != 0)
        b->failed = true;
}

static void append(builder *b, json_t *arr, json_t *value)
{
    if (!arr || !value || json_array_append_new(arr, value) != 0)
        b->failed = true;
}

/* The seed's "timing" object; its key order. */
static json_t *timing_json(builder *b, const sr_summary *s)
{
    json_t *o = json_object();
    put(b, o, "count", json_integer((json_int_t)s->count));
    put(b, o, "mean_s", real_or_null(s->mean));
    put(b, o, "p50_s", real_or_null(s->p50));
    put(b, o, "p90_s", real_or_null(s->p90));
    put(b, o, "p95_s", real_or_null(s->p95));
    put(b, o, "p99_s", real_or_null(s->p99));
    put(b, o, "min_s", real_or_null(s->min));
    put(b, o, "max_s", real_or_null(s->max));
    return o;
}

static json_t *scheduler_json(builder *b, const sagerun_launch_geometry *g)
{
    json_t *o = json_object();
    put(b, o, "cta_q", json_integer(g->cta_q));
    put(b, o, "cta_k", json_integer(g->cta_k));
    put(b, o, "warp_q", json_integer(g->warp_q));
    put(b, o, "warp_k", json_integer(g->warp_k));
    put(b, o, "threads_per_cta", json_integer(g->threads_per_cta));
    put(b, o, "dynamic_shared_memory_bytes", json_integer(g->dynamic_shared_memory_bytes));
    put(b, o, "grid_ctas", json_integer((json_int_t)g->grid_ctas));
    return o;
}

static json_t *interval_json(builder *b, const sr_interval *iv, const char *method)
{
    if (!iv->valid)
        return json_null();
    json_t *o = json_object();
    put(b, o, "estimate", real_or_null(iv->estimate));
    put(b, o, "low", real_or_null(iv->low));
    put(b, o, "high", real_or_null(iv->high));
    put(b, o, "confidence", json_real(0.95));
    put(b, o, "dof", json_integer(iv->dof));
    put(b, o, "method", json_string(method));
    if (iv->instances > 1) { /* compare --instances: their spread is in the interval */
        put(b, o, "instances", json_integer(iv->instances));
        put(b, o, "instance_sd_percent", real_or_null(iv->instance_sd));
    }
    return o;
}

#define SR_INTERVAL_METHOD                                                                         \
    "per-round paired log-ratio of p50; 20%-trimmed mean with Tukey-McLaughlin t from 10 rounds, " \
    "Student t below"

static json_t *variant_timing_json(builder *b, const sr_variant_timing *t)
{
    if (!t->present)
        return json_null();
    json_t *o = json_object();
    put(b, o, "timer", json_string(t->timer));
    put(b, o, "calls_per_sample", json_integer(t->calls_per_sample));
    put(b, o, "warmup_calls", json_integer(t->warmup_calls));
    put(b, o, "first_call_s", real_or_null(t->first_call_s));
    put(b, o, "warm_call_s", real_or_null(t->warm_call_s));
    put(b, o, "sm_clock_mhz", real_or_null(t->clock_mhz));
    put(b, o, "energy_per_call_j", real_or_null(t->energy_per_call_j));
    put(b, o, "mean_power_w", real_or_null(t->mean_power_w));
    put(b, o, "energy_saving_interval_percent",
        interval_json(b, &t->energy_interval, "per-round paired log-ratio of energy per call"));
    put(b, o, "hold_timeouts", json_integer(t->hold_timeouts));
    put(b, o, "host_call_s", real_or_null(t->host_call_s));
    put(b, o, "launch_gap_s", real_or_null(t->launch_gap_s));
    return o;
}

static json_t *measurement_json(builder *b, const sr_measurement_info *m)
{
    if (!m->present)
        return json_null();
    json_t *o = json_object();
    put(b, o, "schedule", json_string(m->schedule));
    put(b, o, "order", json_string(m->order));
    put(b, o, "cache", json_string(m->cache));
    put(b, o, "ended_by", json_string(m->end));
    put(b, o, "min_rounds", json_integer(m->min_rounds));
    put(b, o, "max_rounds", json_integer(m->max_rounds));
    put(b, o, "target_half_width_percent", real_or_null(m->target_half_width));
    put(b, o, "max_time_s", real_or_null(m->max_time_s));
    put(b, o, "elapsed_s", real_or_null(m->elapsed_s));
    put(b, o, "half_width_percent", real_or_null(m->half_width));
    put(b, o, "rounds_redone", json_integer(m->redone));
    put(b, o, "rounds_redone_clock", json_integer(m->redone_clock));
    put(b, o, "rounds_redone_throttle", json_integer(m->redone_throttle));
    put(b, o, "launch_floor_s", real_or_null(m->launch_floor_s));
    put(b, o, "l2_flush_bytes", json_integer((json_int_t)m->flush_bytes));
    put(b, o, "sample_clock", string_or_null(m->sample_clock[0] ? m->sample_clock : NULL));
    put(b, o, "order_seed", string_or_null(m->order_seed[0] ? m->order_seed : NULL));
    if (m->instances)
        put(b, o, "instances", json_integer(m->instances));
    return o;
}

static json_t *variant_json(builder *b, const sr_report *r, const sr_report_variant *v)
{
    json_t *o = json_object();
    /* the seed's keys, in its order */
    put(b, o, "name", text_json(v->name ? v->name : ""));
    put(b, o, "path", string_or_null(v->path));
    put(b, o, "output_sha256", string_or_null(v->output_sha256));
    put(b, o, "byte_exact", tristate(v->byte_exact));
    put(b, o, "timing", timing_json(b, &v->timing));
    json_t *rounds = json_array();
    for (size_t i = 0; i < v->round_count; i++)
        append(b, rounds, timing_json(b, &v->rounds[i]));
    put(b, o, "rounds", rounds);
    put(b, o, "speedup_vs_baseline_percent", real_or_null(v->speedup_percent));
    if (!r->has_ext)
        return o;

    /* extensions */
    put(b, o, "label", string_or_null(v->label ? v->label : v->name));
    put(b, o, "is_baseline", json_boolean(v->is_baseline));
    put(b, o, "version", string_or_null(v->version));
    put(b, o, "backend", string_or_null(v->backend));
    put(b, o, "plugin_sha256", string_or_null(v->plugin_sha256));
    put(b, o, "extension_module",
        v->extension_path ? json_pack("{s:s, s:o}", "path", v->extension_path, "sha256",
                                      string_or_null(v->extension_sha256))
                          : json_null());
    put(b, o, "scheduler", v->has_scheduler ? scheduler_json(b, &v->scheduler) : json_null());
    put(b, o, "prepare_s", real_or_null(v->prepare_s));
    put(b, o, "tops", real_or_null(v->tops));
    put(b, o, "speedup_interval_percent", interval_json(b, &v->interval, SR_INTERVAL_METHOD));
    put(b, o, "verdict", string_or_null(sr_verdict_name(v->verdict)));
    json_t *det = json_object();
    put(b, det, "deterministic", tristate(v->deterministic));
    put(b, det, "first_output_sha256", string_or_null(v->output_sha256));
    put(b, det, "last_output_sha256", string_or_null(v->last_output_sha256));
    put(b, o, "determinism", det);
    if (v->accuracy.present) {
        const sr_accuracy *a = &v->accuracy;
        json_t *acc = json_object();
        put(b, acc, "reference", json_string(a->reference));
        put(b, acc, "rows", json_integer((json_int_t)a->rows));
        put(b, acc, "elements", json_integer((json_int_t)a->elements));
        put(b, acc, "nonfinite", json_integer((json_int_t)a->nonfinite));
        put(b, acc, "cosine_similarity", real_or_null(a->cosine));
        put(b, acc, "relative_l1", real_or_null(a->rel_l1));
        put(b, acc, "rmse", real_or_null(a->rmse));
        put(b, acc, "max_abs_error", real_or_null(a->max_abs));
        put(b, o, "accuracy", acc);
    } else {
        put(b, o, "accuracy", json_null());
    }
    if (v->byte_diff.present) {
        const sr_byte_diff *d = &v->byte_diff;
        json_t *bd = json_object();
        put(b, bd, "against", json_string("baseline"));
        put(b, bd, "elements", json_integer((json_int_t)d->elements));
        put(b, bd, "differing", json_integer((json_int_t)d->differing));
        put(b, bd, "first_index",
            d->differing ? json_integer((json_int_t)d->first_index) : json_null());
        /* Inf (a NaN against a number) is not JSON: written as null with nan_involved. */
        put(b, bd, "max_abs", real_or_null(d->max_abs));
        put(b, bd, "nan_involved", json_boolean(isinf(d->max_abs)));
        put(b, bd, "max_ulp", json_integer((json_int_t)d->max_ulp));
        put(b, o, "byte_diff", bd);
    } else {
        put(b, o, "byte_diff", json_null());
    }
    put(b, o, "tolerance", sr_tolerance_to_json(&v->tolerance));
    put(b, o, "accepted_by", v->byte_exact == 1                  ? json_string("bytes")
                             : sr_report_variant_accepted(v) ? json_string("tolerance")
                                                             : json_null());
    put(b, o, "failure", string_or_null(v->failure));
    put(b, o, "failure_phase", string_or_null(v->failure_phase));
    put(b, o, "measurement", variant_timing_json(b, &v->how));
    if (v->samples) {
        /* For plots of drift and distributions: every timed call, one array per round. */
        json_t *rounds_s = json_array();
        for (size_t k = 0; k < v->sample_rounds; k++) {
            json_t *round = json_array();
            for (size_t i = 0; i < v->samples_per_round; i++)
                append(b, round, real_or_null(v->samples[k * v->samples_per_round + i]));
            append(b, rounds_s, round);
        }
        put(b, o, "samples_s", rounds_s);
    }
    return o;
}

static json_t *tool_json(builder *b, const sr_report *r)
{
    json_t *tool = json_object();
    put(b, tool, "name", json_string("sagerun"));
    put(b, tool, "version", string_or_null(r->tool_version));
    put(b, tool, "git_commit", string_or_null(r->tool_commit));
    return tool;
}

static json_t *device_json(builder *b, const sr_report *r)
{
    json_t *dev = json_object();
    put(b, dev, "name", string_or_null(r->device_name));
    put(b, dev, "backend", string_or_null(r->backend));
    /* GPU fields only where there is a GPU (a host report has none of them) */
    bool gpu = !r->backend || strcmp(r->backend, "host") != 0;
    if (gpu && r->compute_capability > 0)
        put(b, dev, "compute_capability", json_integer(r->compute_capability));
    if (gpu && r->driver_version > 0)
        put(b, dev, "driver_version", json_integer(r->driver_version)); /* CUDA API */
    if (gpu && r->driver_release)
        put(b, dev, "driver_release", json_string(r->driver_release));
    if (gpu && r->multiprocessors > 0)
        put(b, dev, "multiprocessors", json_integer(r->multiprocessors));
    if (gpu) { /* which card: null where unknown */
        put(b, dev, "uuid", string_or_null(r->device_uuid));
        put(b, dev, "pci_bus_id", string_or_null(r->pci_bus_id));
    }
    return dev;
}

/* The lengths of a varlen report as {"q_lens": [...], "kv_lens": [...]}; null where there are
 * none. */
static json_t *varlen_json(builder *b, const sr_report *r)
{
    if (!r->problem.varlen || !r->cu_seqlens_q || !r->cu_seqlens_kv)
        return json_null();
    json_t *o = json_object(), *q = json_array(), *k = json_array();
    for (uint32_t i = 0; i < r->problem.batch; i++) {
        append(b, q, json_integer(r->cu_seqlens_q[i + 1] - r->cu_seqlens_q[i]));
        append(b, k, json_integer(r->cu_seqlens_kv[i + 1] - r->cu_seqlens_kv[i]));
    }
    put(b, o, "q_lens", q);
    put(b, o, "kv_lens", k);
    return o;
}

/* The keys of problem ABI 0.2, every one written (its default where unused). */
static void put_problem_02(builder *b, json_t *pj, const sr_report *r)
{
    const sagerun_problem *p = &r->problem;
    put(b, pj, "kv_len", json_integer(sagerun_problem_kv_len(p)));
    put(b, pj, "align", json_string(p->align == SAGERUN_ALIGN_BOTTOM_RIGHT ? "bottom-right"
                                                                           : "top-left"));
    json_t *window = json_null();
    if (p->window) {
        window = json_array();
        append(b, window, json_integer(p->window_left));
        append(b, window, json_integer(p->window_right));
    }
    put(b, pj, "window", window);
    put(b, pj, "softcap", json_real(p->softcap));
    put(b, pj, "varlen", varlen_json(b, r));
    put(b, pj, "page_size", json_integer(p->page_size));
    put(b, pj, "pages", json_integer(p->pages));
}

static json_t *problem_json(builder *b, const sr_report *r)
{
    if (!r->has_problem)
        return json_null();
    const sagerun_problem *p = &r->problem;
    json_t *pj = json_object();
    put(b, pj, "batch", json_integer(p->batch));
    put(b, pj, "seq_len", json_integer(p->seq_len));
    put(b, pj, "heads_q", json_integer(p->heads_q));
    put(b, pj, "heads_kv", json_integer(p->heads_kv));
    put(b, pj, "head_dim", json_integer(p->head_dim));
    put(b, pj, "layout", string_or_null(layout_name(p->layout)));
    put(b, pj, "dtype", string_or_null(sagerun_dtype_word((int)p->dtype)));
    put(b, pj, "causal", json_boolean(p->causal));
    put(b, pj, "sm_scale", json_real(p->sm_scale));
    put_problem_02(b, pj, r);
    double ops = sr_report_operations(r);
    put(b, pj, "operations", json_real(isfinite(ops) ? ops : 0.0));
    return pj;
}

static json_t *clock_round_json(builder *b, const sr_clock_sample *c, size_t round)
{
    json_t *s = json_object();
    put(b, s, "round", json_integer((json_int_t)round));
    put(b, s, "sm_clock_mhz", c->sm_clock_mhz >= 0 ? json_integer(c->sm_clock_mhz) : json_null());
    put(b, s, "temperature_c",
        c->temperature_c >= 0 ? json_integer(c->temperature_c) : json_null());
    if (!c->has_throttle) {
        put(b, s, "throttle_reasons", json_null());
        put(b, s, "throttle_reasons_mask", json_null());
        return s;
    }
    char names[512];
    sr_nvml_reason_names(c->throttle_reasons, names, sizeof(names));
    json_t *list = json_array();
    for (char *save = NULL, *t = strtok_r(names, ",", &save); t; t = strtok_r(NULL, ",", &save))
        append(b, list, json_string(t));
    put(b, s, "throttle_reasons", list);
    put(b, s, "throttle_reasons_mask", json_integer((json_int_t)c->throttle_reasons));
    return s;
}

static json_t *clocks_json(builder *b, const sr_report *r)
{
    json_t *clocks = json_object();
    put(b, clocks, "source", string_or_null(r->clock_source));
    if (r->clock_unavailable)
        put(b, clocks, "unavailable", json_string(r->clock_unavailable));
    put(b, clocks, "max_sm_clock_mhz",
        r->max_sm_clock_mhz >= 0 ? json_integer(r->max_sm_clock_mhz) : json_null());
    json_t *cr = json_array();
    for (size_t i = 0; i < r->clock_round_count; i++)
        append(b, cr, clock_round_json(b, &r->clock_rounds[i], i + 1));
    put(b, clocks, "rounds", cr);
    return clocks;
}

/* sagerun's keys after the seed's (has_ext) */
static void put_ext(builder *b, json_t *root, const sr_report *r)
{
    put(b, root, "schema_version", json_integer(r->schema_version));
    put(b, root, "complete", json_boolean(!r->incomplete));
    put(b, root, "rounds_completed",
        json_integer((json_int_t)(r->incomplete ? r->rounds_completed : r->rounds)));
    put(b, root, "tool", tool_json(b, r));
    put(b, root, "created_utc", string_or_null(r->created_utc));
    put(b, root, "device", device_json(b, r));
    put(b, root, "problem", problem_json(b, r));
    put(b, root, "noise_threshold_percent", real_or_null(r->noise_threshold_percent));
    put(b, root, "expect_sha256", string_or_null(r->expect_sha256));
    put(b, root, "clocks", clocks_json(b, r));
    put(b, root, "measurement", measurement_json(b, &r->measurement));
    json_t *warnings = json_array();
    for (size_t i = 0; i < r->warning_count; i++)
        append(b, warnings, text_json(r->warnings[i]));
    put(b, root, "warnings", warnings);
}

json_t *sr_report_to_json(const sr_report *r)
{
    builder b = {0};
    json_t *root = json_object();
    /* the seed's keys, in its order */
    put(&b, root, "metadata", r->metadata ? json_incref(r->metadata) : json_object());
    put(&b, root, "source_commit", json_string(r->source_commit ? r->source_commit : "unknown"));
    put(&b, root, "reference_output_sha256", string_or_null(r->reference_sha256));
    json_t *shape = json_array();
    for (size_t i = 0; i < r->q_shape_len; i++)
        append(&b, shape, json_integer((json_int_t)r->q_shape[i]));
    put(&b, root, "q_shape", shape);
    put(&b, root, "scheduler", r->has_scheduler ? scheduler_json(&b, &r->scheduler) : json_null());
    put(&b, root, "rounds", json_integer((json_int_t)r->rounds));
    put(&b, root, "warmup", json_integer((json_int_t)r->warmup));
    put(&b, root, "iterations_per_round", json_integer((json_int_t)r->iterations));
    json_t *vars = json_array();
    for (size_t i = 0; i < r->variant_count; i++)
        append(&b, vars, variant_json(&b, r, &r->variants[i]));
    put(&b, root, "variants", vars);
    if (r->has_ext)
        put_ext(&b, root, r);
    if (b.failed) {
        json_decref(root);
        return NULL;
    }
    return root;
}

static bool write_json_cb(FILE *f, const void *user)
{
    const json_t *root = user;
    if (json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0)
        return false;
    return fputc('\n', f) != EOF;
}

sagerun_status sr_report_write_json(const sr_report *r, const char *path, sagerun_error *err)
{
    json_t *root = sr_report_to_json(r);
    if (!root)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory building the report",
                            path);
    sagerun_status st = sr_write_file_atomic(path, write_json_cb, root, err);
    json_decref(root);
    return st;
}

/* ---- reading JSON ----------------------------------------------------------------------------- */

/* Where we are in the document, for errors like "r.json: variants[1].timing.p50_s: ...". */
typedef struct reader {
    const char *file;
    sagerun_error *err;
    bool failed;
} reader;

static const char *type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

static void fail_at(reader *rd, const char *where, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail_at(reader *rd, const char *where, const char *key, const char *fmt, ...)
{
    if (rd->failed)
        return;
    rd->failed = true;
    char what[256], shown[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    sr_text_copy(shown, sizeof(shown), what); /* a value quoted from the file stays on its line */
    sr_error_set(rd->err, SAGERUN_FORMAT, "%s: %s%s%s: %s", rd->file, where,
                 (*where && key) ? "." : "", key ? key : "", shown);
}

enum { T_NULL_OK = 1 };

/* Member `key` of obj; NULL (and an error when required) when absent. */
static json_t *member(reader *rd, json_t *obj, const char *where, const char *key, bool required)
{
    json_t *j = json_object_get(obj, key);
    if (!j && required)
        fail_at(rd, where, key, "missing");
    return j;
}

static json_t *get_object(reader *rd, json_t *obj, const char *where, const char *key,
                          bool required, bool null_ok)
{
    json_t *j = member(rd, obj, where, key, required);
    if (!j || (null_ok && json_is_null(j)))
        return NULL;
    if (!json_is_object(j)) {
        fail_at(rd, where, key, "expected an object, found %s", type_name(j));
        return NULL;
    }
    return j;
}

static json_t *get_array(reader *rd, json_t *obj, const char *where, const char *key, bool required)
{
    json_t *j = member(rd, obj, where, key, required);
    if (!j)
        return NULL;
    if (!json_is_array(j)) {
        fail_at(rd, where, key, "expected an array, found %s", type_name(j));
        return NULL;
    }
    return j;
}

/* A string (copied) or null (NULL). */
static char *get_string(reader *rd, json_t *obj, const char *where, const char *key, bool required,
                        bool null_ok)
{
    json_t *j = member(rd, obj, where, key, required);
    if (!j || (null_ok && json_is_null(j)))
        return NULL;
    if (!json_is_string(j)) {
        fail_at(rd, where, key, "expected a string%s, found %s", null_ok ? " or null" : "",
                type_name(j));
        return NULL;
    }
    char *s = strdup(json_string_value(j));
    if (!s)
        fail_at(rd, where, key, "out of memory");
    return s;
}

/* A number (integer or real); NaN for null or absent. */
static double get_number(reader *rd, json_t *obj, const char *where, const char *key,
                         bool required, bool null_ok)
{
    json_t *j = member(rd, obj, where, key, required);
    if (!j || (null_ok && json_is_null(j)))
        return NAN;
    if (!json_is_number(j)) {
        fail_at(rd, where, key, "expected a number%s, found %s", null_ok ? " or null" : "",
                type_name(j));
        return NAN;
    }
    return json_number_value(j);
}

/* A non-negative integer; `fallback` for null (when allowed) or absent. */
static long long get_uint(reader *rd, json_t *obj, const char *where, const char *key,
                          bool required, bool null_ok, long long fallback)
{
    json_t *j = member(rd, obj, where, key, required);
    if (!j || (null_ok && json_is_null(j)))
        return fallback;
    if (!json_is_integer(j) || json_integer_value(j) < 0) {
        fail_at(rd, where, key, "expected a non-negative integer%s, found %s",
                null_ok ? " or null" : "", json_is_integer(j) ? "a negative one" : type_name(j));
        return fallback;
    }
    return (long long)json_integer_value(j);
}

/* get_uint for a 32-bit field: a value beyond it is an error naming the key (it wrapped). */
static uint32_t get_u32(reader *rd, json_t *obj, const char *where, const char *key, bool required,
                        bool null_ok, long long fallback)
{
    long long v = get_uint(rd, obj, where, key, required, null_ok, fallback);
    if (v > (long long)UINT32_MAX) {
        fail_at(rd, where, key, "%lld: at most %u", v, UINT32_MAX);
        return 0;
    }
    return (uint32_t)v;
}

/* 1/0, or -1 for null or absent. */
static int get_bool(reader *rd, json_t *obj, const char *where, const char *key, bool required,
                    bool null_ok)
{
    json_t *j = member(rd, obj, where, key, required);
    if (!j || (null_ok && json_is_null(j)))
        return -1;
    if (!json_is_boolean(j)) {
        fail_at(rd, where, key, "expected a boolean%s, found %s", null_ok ? " or null" : "",
                type_name(j));
        return -1;
    }
    return json_is_true(j);
}

static void read_timing(reader *rd, json_t *o, const char *where, sr_summary *s)
{
    s->count = (uint64_t)get_uint(rd, o, where, "count", true, false, 0);
    s->mean = get_number(rd, o, where, "mean_s", true, true);
    s->p50 = get_number(rd, o, where, "p50_s", true, true);
    s->p90 = get_number(rd, o, where, "p90_s", true, true);
    s->p95 = get_number(rd, o, where, "p95_s", true, true);
    s->p99 = get_number(rd, o, where, "p99_s", true, true);
    s->min = get_number(rd, o, where, "min_s", true, true);
    s->max = get_number(rd, o, where, "max_s", true, true);
}

static void read_scheduler(reader *rd, json_t *o, const char *where, sagerun_launch_geometry *g)
{
    g->struct_size = sizeof(*g);
    g->cta_q = get_u32(rd, o, where, "cta_q", true, false, 0);
    g->cta_k = get_u32(rd, o, where, "cta_k", true, false, 0);
    g->warp_q = get_u32(rd, o, where, "warp_q", true, false, 0);
    g->warp_k = get_u32(rd, o, where, "warp_k", true, false, 0);
    g->threads_per_cta = get_u32(rd, o, where, "threads_per_cta", true, false, 0);
    g->dynamic_shared_memory_bytes =
        get_u32(rd, o, where, "dynamic_shared_memory_bytes", true, false, 0);
    g->grid_ctas = (uint64_t)get_uint(rd, o, where, "grid_ctas", true, false, 0);
}

static void path_join(char *buf, size_t len, const char *where, const char *key)
{
    snprintf(buf, len, "%s%s%s", where, *where ? "." : "", key);
}

/* "samples_s": an array of rounds, each an array of the same number of seconds (null: unknown). */
static void read_samples(reader *rd, json_t *o, const char *where, sr_report_variant *v)
{
    json_t *rounds = json_object_get(o, "samples_s");
    if (!rounds || json_is_null(rounds) || rd->failed)
        return;
    char sub[128];
    path_join(sub, sizeof(sub), where, "samples_s");
    if (!json_is_array(rounds)) {
        fail_at(rd, sub, NULL, "expected an array of rounds, found %s", type_name(rounds));
        return;
    }
    size_t R = json_array_size(rounds), I = 0;
    for (size_t r = 0; r < R; r++) {
        json_t *round = json_array_get(rounds, r);
        snprintf(sub, sizeof(sub), "%s.samples_s[%zu]", where, r);
        if (!json_is_array(round)) {
            fail_at(rd, sub, NULL, "expected an array of seconds, found %s", type_name(round));
            return;
        }
        if (r == 0)
            I = json_array_size(round);
        else if (json_array_size(round) != I) {
            fail_at(rd, sub, NULL, "%zu values, round 0 has %zu", json_array_size(round), I);
            return;
        }
    }
    if (R == 0 || I == 0)
        return;
    if (!(v->samples = malloc(R * I * sizeof(double)))) {
        fail_at(rd, where, "samples_s", "out of memory");
        return;
    }
    v->sample_rounds = R;
    v->samples_per_round = I;
    for (size_t r = 0; r < R; r++)
        for (size_t i = 0; i < I; i++) {
            json_t *x = json_array_get(json_array_get(rounds, r), i);
            if (!json_is_number(x) && !json_is_null(x)) {
                snprintf(sub, sizeof(sub), "%s.samples_s[%zu][%zu]", where, r, i);
                fail_at(rd, sub, NULL, "expected a number or null, found %s", type_name(x));
                return;
            }
            v->samples[r * I + i] = json_is_null(x) ? NAN : json_number_value(x);
        }
}

static void read_interval(reader *rd, json_t *iv, const char *where, sr_interval *out)
{
    out->estimate = get_number(rd, iv, where, "estimate", false, true);
    out->low = get_number(rd, iv, where, "low", true, false);
    out->high = get_number(rd, iv, where, "high", true, false);
    out->dof = (unsigned)get_uint(rd, iv, where, "dof", false, false, 0);
    out->instances = get_u32(rd, iv, where, "instances", false, false, 1);
    out->instance_sd = get_number(rd, iv, where, "instance_sd_percent", false, true);
    out->valid = true;
    if (!rd->failed && !(out->low <= out->high))
        fail_at(rd, where, "low", "the interval's low bound %g lies above its high bound %g",
                out->low, out->high);
}

static void copy_word(char *dst, size_t len, char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
    free(src);
}

/* measurement.order_seed: 16 lowercase hex digits, or null. */
static void read_order_seed(reader *rd, json_t *o, const char *where, sr_measurement_info *m)
{
    char *s = get_string(rd, o, where, "order_seed", false, true);
    size_t n = 0;
    while (s && n < 17 && ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
        n++;
    if (s && (n != 16 || s[n])) {
        fail_at(rd, where, "order_seed", "expected 16 lowercase hex digits, found \"%.40s\"", s);
        free(s);
        s = NULL;
    }
    copy_word(m->order_seed, sizeof(m->order_seed), s);
}

static void read_variant_timing(reader *rd, json_t *o, const char *where, sr_variant_timing *t)
{
    char sub[160];
    copy_word(t->timer, sizeof(t->timer), get_string(rd, o, where, "timer", false, true));
    t->calls_per_sample = get_u32(rd, o, where, "calls_per_sample", false, false, 1);
    t->warmup_calls = get_u32(rd, o, where, "warmup_calls", false, false, 0);
    t->first_call_s = get_number(rd, o, where, "first_call_s", false, true);
    t->warm_call_s = get_number(rd, o, where, "warm_call_s", false, true);
    t->clock_mhz = get_number(rd, o, where, "sm_clock_mhz", false, true);
    t->energy_per_call_j = get_number(rd, o, where, "energy_per_call_j", false, true);
    t->mean_power_w = get_number(rd, o, where, "mean_power_w", false, true);
    json_t *iv = get_object(rd, o, where, "energy_saving_interval_percent", false, true);
    if (iv) {
        path_join(sub, sizeof(sub), where, "energy_saving_interval_percent");
        read_interval(rd, iv, sub, &t->energy_interval);
    }
    t->hold_timeouts = get_u32(rd, o, where, "hold_timeouts", false, false, 0);
    t->host_call_s = get_number(rd, o, where, "host_call_s", false, true);
    t->launch_gap_s = get_number(rd, o, where, "launch_gap_s", false, true);
    t->present = true;
}

static void read_measurement(reader *rd, json_t *o, sr_measurement_info *m)
{
    const char *w = "measurement";
    copy_word(m->schedule, sizeof(m->schedule), get_string(rd, o, w, "schedule", false, true));
    copy_word(m->order, sizeof(m->order), get_string(rd, o, w, "order", false, true));
    copy_word(m->cache, sizeof(m->cache), get_string(rd, o, w, "cache", false, true));
    copy_word(m->end, sizeof(m->end), get_string(rd, o, w, "ended_by", false, true));
    m->min_rounds = get_u32(rd, o, w, "min_rounds", false, false, 0);
    m->max_rounds = get_u32(rd, o, w, "max_rounds", false, false, 0);
    m->target_half_width = get_number(rd, o, w, "target_half_width_percent", false, true);
    m->max_time_s = get_number(rd, o, w, "max_time_s", false, true);
    m->elapsed_s = get_number(rd, o, w, "elapsed_s", false, true);
    m->half_width = get_number(rd, o, w, "half_width_percent", false, true);
    m->redone = get_u32(rd, o, w, "rounds_redone", false, false, 0);
    m->redone_clock = get_u32(rd, o, w, "rounds_redone_clock", false, false, 0);
    m->redone_throttle = get_u32(rd, o, w, "rounds_redone_throttle", false, false, 0);
    m->launch_floor_s = get_number(rd, o, w, "launch_floor_s", false, true);
    m->flush_bytes = (uint64_t)get_uint(rd, o, w, "l2_flush_bytes", false, false, 0);
    copy_word(m->sample_clock, sizeof(m->sample_clock),
              get_string(rd, o, w, "sample_clock", false, true));
    read_order_seed(rd, o, w, m);
    m->instances = get_u32(rd, o, w, "instances", false, false, 0);
    if (m->instances > SR_INSTANCES_MAX)
        fail_at(rd, w, "instances", "expected 1 to %u instances, found %u", SR_INSTANCES_MAX,
                m->instances);
    m->present = true;
}

/* What a JSON object that holds neither of a report's first keys looks like, for the message
 * (show of a workload file said "metadata: missing"); NULL when it may be a damaged report. */
static const char *other_kind(const json_t *root)
{
    if (json_object_get(root, "metadata"))
        return NULL;
    if (json_object_get(root, "workloads")) /* a report has none */
        return json_object_get(root, "sweep")
                   ? "a sweep summary that does not read as one (sagerun show names why)"
                   : "a sweep file (run it: 'sagerun sweep FILE')";
    if (json_object_get(root, "variants"))
        return NULL;
    if (json_object_get(root, "shape") || json_object_get(root, "input"))
        return "a workload file (run it: 'sagerun compare --workload FILE')";
    if (json_object_get(root, "rows") && json_object_get(root, "regression"))
        return "the JSON output of 'sagerun diff'";
    return "no 'metadata', no 'variants'";
}

/* The seed's format has names, no labels: a name's second entry (an A/A run) is labelled as
 * compare labels it, NAME#2, so that its rows can be told apart. false when out of memory. */
static bool label_repeats(sr_report *r)
{
    for (size_t i = 0; i < r->variant_count; i++) {
        sr_report_variant *v = &r->variants[i];
        unsigned repeat = 1;
        for (size_t k = 0; v->name && !v->label && k < i; k++)
            repeat += r->variants[k].name && strcmp(r->variants[k].name, v->name) == 0;
        if (repeat > 1 && asprintf(&v->label, "%s#%u", v->name, repeat) < 0) {
            v->label = NULL;
            return false;
        }
    }
    return true;
}

static void read_variant_ext(reader *rd, json_t *o, const char *where, sr_report_variant *v)
{
    char sub[128];
    v->label = get_string(rd, o, where, "label", false, true);
    v->is_baseline = get_bool(rd, o, where, "is_baseline", false, false) == 1;
    v->version = get_string(rd, o, where, "version", false, true);
    v->backend = get_string(rd, o, where, "backend", false, true);
    v->plugin_sha256 = get_string(rd, o, where, "plugin_sha256", false, true);
    json_t *ext = get_object(rd, o, where, "extension_module", false, true);
    if (ext) {
        path_join(sub, sizeof(sub), where, "extension_module");
        v->extension_path = get_string(rd, ext, sub, "path", true, false);
        v->extension_sha256 = get_string(rd, ext, sub, "sha256", false, true);
    }
    json_t *sch = get_object(rd, o, where, "scheduler", false, true);
    if (sch) {
        path_join(sub, sizeof(sub), where, "scheduler");
        read_scheduler(rd, sch, sub, &v->scheduler);
        v->has_scheduler = true;
    }
    v->prepare_s = get_number(rd, o, where, "prepare_s", false, true);
    v->tops = get_number(rd, o, where, "tops", false, true);
    json_t *iv = get_object(rd, o, where, "speedup_interval_percent", false, true);
    if (iv) {
        path_join(sub, sizeof(sub), where, "speedup_interval_percent");
        read_interval(rd, iv, sub, &v->interval);
    }
    char *verdict = get_string(rd, o, where, "verdict", false, true);
    if (verdict) {
        v->verdict = sr_verdict_parse(verdict);
        if (v->verdict == SR_VERDICT_NONE)
            fail_at(rd, where, "verdict", "unknown verdict \"%s\"", verdict);
        free(verdict);
    }
    json_t *det = get_object(rd, o, where, "determinism", false, true);
    if (det) {
        path_join(sub, sizeof(sub), where, "determinism");
        v->deterministic = get_bool(rd, det, sub, "deterministic", true, true);
        v->last_output_sha256 = get_string(rd, det, sub, "last_output_sha256", false, true);
    }
    json_t *acc = get_object(rd, o, where, "accuracy", false, true);
    if (acc) {
        sr_accuracy *a = &v->accuracy;
        path_join(sub, sizeof(sub), where, "accuracy");
        char *ref = get_string(rd, acc, sub, "reference", false, true);
        snprintf(a->reference, sizeof(a->reference), "%s", ref ? ref : "");
        free(ref);
        a->rows = (uint64_t)get_uint(rd, acc, sub, "rows", false, false, 0);
        a->elements = (uint64_t)get_uint(rd, acc, sub, "elements", false, false, 0);
        a->nonfinite = (uint64_t)get_uint(rd, acc, sub, "nonfinite", false, false, 0);
        a->cosine = get_number(rd, acc, sub, "cosine_similarity", true, true);
        a->rel_l1 = get_number(rd, acc, sub, "relative_l1", true, true);
        a->rmse = get_number(rd, acc, sub, "rmse", true, true);
        a->max_abs = get_number(rd, acc, sub, "max_abs_error", true, true);
        a->present = true;
    }
    json_t *bd = get_object(rd, o, where, "byte_diff", false, true);
    if (bd) {
        sr_byte_diff *d = &v->byte_diff;
        path_join(sub, sizeof(sub), where, "byte_diff");
        d->elements = (uint64_t)get_uint(rd, bd, sub, "elements", false, false, 0);
        d->differing = (uint64_t)get_uint(rd, bd, sub, "differing", true, false, 0);
        d->first_index = (uint64_t)get_uint(rd, bd, sub, "first_index", false, true, 0);
        d->max_abs = get_number(rd, bd, sub, "max_abs", false, true);
        if (get_bool(rd, bd, sub, "nan_involved", false, false) == 1)
            d->max_abs = INFINITY;
        d->max_ulp = (uint64_t)get_uint(rd, bd, sub, "max_ulp", false, false, 0);
        d->present = true;
    }
    const char *tol_problem = sr_tolerance_from_json(json_object_get(o, "tolerance"),
                                                     &v->tolerance);
    if (tol_problem)
        fail_at(rd, where, "tolerance", "%s", tol_problem);
    v->failure = get_string(rd, o, where, "failure", false, true);
    v->failure_phase = get_string(rd, o, where, "failure_phase", false, true);
    json_t *how = get_object(rd, o, where, "measurement", false, true);
    if (how) {
        path_join(sub, sizeof(sub), where, "measurement");
        read_variant_timing(rd, how, sub, &v->how);
    }
    read_samples(rd, o, where, v);
}

static void read_variant(reader *rd, json_t *o, const char *where, bool ext, sr_report_variant *v)
{
    char sub[128];
    v->byte_exact = -1;
    v->deterministic = -1;
    v->tolerance.passed = -1; /* not judged: the seed's format has no tolerance */
    v->prepare_s = v->tops = v->speedup_percent = NAN;
    v->name = get_string(rd, o, where, "name", true, false);
    v->path = get_string(rd, o, where, "path", true, true);
    v->output_sha256 = get_string(rd, o, where, "output_sha256", true, true);
    v->byte_exact = get_bool(rd, o, where, "byte_exact", true, true);
    json_t *timing = get_object(rd, o, where, "timing", true, false);
    if (timing) {
        path_join(sub, sizeof(sub), where, "timing");
        read_timing(rd, timing, sub, &v->timing);
    }
    json_t *rounds = get_array(rd, o, where, "rounds", true);
    if (rounds && !rd->failed) {
        size_t n = json_array_size(rounds);
        v->rounds = calloc(n ? n : 1, sizeof(*v->rounds));
        if (!v->rounds) {
            fail_at(rd, where, "rounds", "out of memory");
            return;
        }
        v->round_count = n;
        for (size_t i = 0; i < n && !rd->failed; i++) {
            snprintf(sub, sizeof(sub), "%s.rounds[%zu]", where, i);
            json_t *ro = json_array_get(rounds, i);
            if (!json_is_object(ro)) {
                fail_at(rd, sub, NULL, "expected an object, found %s", type_name(ro));
                break;
            }
            read_timing(rd, ro, sub, &v->rounds[i]);
        }
    }
    v->speedup_percent = get_number(rd, o, where, "speedup_vs_baseline_percent", true, true);
    if (ext && !rd->failed)
        read_variant_ext(rd, o, where, v);
}

static void read_device(reader *rd, json_t *dev, sr_report *r)
{
    r->device_name = get_string(rd, dev, "device", "name", false, true);
    r->backend = get_string(rd, dev, "device", "backend", false, true);
    r->compute_capability = (int)get_uint(rd, dev, "device", "compute_capability", false, true, -1);
    r->driver_version = (int)get_uint(rd, dev, "device", "driver_version", false, true, -1);
    r->multiprocessors = (int)get_uint(rd, dev, "device", "multiprocessors", false, true, -1);
    r->driver_release = get_string(rd, dev, "device", "driver_release", false, true);
    r->device_uuid = get_string(rd, dev, "device", "uuid", false, true);
    r->pci_bus_id = get_string(rd, dev, "device", "pci_bus_id", false, true);
}

/* A size of the problem: an integer from 1 to UINT32_MAX (sagerun_problem's), not cut to fit. */
static uint32_t get_size(reader *rd, json_t *pj, const char *key)
{
    json_t *j = member(rd, pj, "problem", key, true);
    json_int_t x = json_is_integer(j) ? json_integer_value(j) : 0;
    if (j && !(x >= 1 && x <= UINT32_MAX)) {
        char found[32];
        snprintf(found, sizeof found, "%" JSON_INTEGER_FORMAT, x);
        fail_at(rd, "problem", key, "expected an integer from 1 to %u, found %s", UINT32_MAX,
                json_is_integer(j) ? found : type_name(j));
    }
    return (uint32_t)x;
}

/* The words sagerun writes for a layout and a dtype (and wrote: the safetensors names of older
 * reports); any other is an error, not the default, so that a diff cannot match another workload. */
typedef struct word_value {
    const char *word;
    uint32_t value;
} word_value;

static const word_value layout_words[] = {{"NHD", SAGERUN_LAYOUT_NHD},
                                          {"HND", SAGERUN_LAYOUT_HND}};
static const word_value dtype_words[] = {{"fp16", SAGERUN_DTYPE_F16},
                                         {"bf16", SAGERUN_DTYPE_BF16},
                                         {"F16", SAGERUN_DTYPE_F16},
                                         {"BF16", SAGERUN_DTYPE_BF16}};

static uint32_t get_word(reader *rd, json_t *pj, const char *key, const word_value *w, size_t n)
{
    char *s = get_string(rd, pj, "problem", key, true, false);
    char list[96] = "";
    for (size_t i = 0; s && i < n; i++) {
        if (strcmp(s, w[i].word) == 0) {
            free(s);
            return w[i].value;
        }
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", w[i].word);
    }
    if (s)
        fail_at(rd, "problem", key, "expected one of %s, found \"%.40s\"", list, s);
    free(s);
    return w[0].value;
}

/* "window": null (none) or [left, right], each a number of keys or -1 (unbounded). */
static void read_window(reader *rd, json_t *pj, sagerun_problem *p)
{
    json_t *w = member(rd, pj, "problem", "window", false);
    if (!w || json_is_null(w))
        return;
    json_t *l = json_array_get(w, 0), *r = json_array_get(w, 1);
    if (!json_is_array(w) || json_array_size(w) != 2 || !json_is_integer(l) ||
        !json_is_integer(r) || json_integer_value(l) < -1 || json_integer_value(r) < -1 ||
        json_integer_value(l) > INT32_MAX || json_integer_value(r) > INT32_MAX) {
        fail_at(rd, "problem", "window", "expected null or [left, right], integers from -1 "
                "(unbounded) to %d", INT32_MAX);
        return;
    }
    p->window = 1;
    p->window_left = (int32_t)json_integer_value(l);
    p->window_right = (int32_t)json_integer_value(r);
}

/* One of "varlen"'s arrays into prefix sums, [count + 1]; NULL after an error. */
static int32_t *read_lengths(reader *rd, json_t *vj, const char *key, uint32_t count,
                             uint32_t *total, uint32_t *longest)
{
    json_t *a = get_array(rd, vj, "problem.varlen", key, true);
    if (!a)
        return NULL;
    if (json_array_size(a) != count) {
        fail_at(rd, "problem.varlen", key, "%zu lengths, the problem has batch %u",
                json_array_size(a), count);
        return NULL;
    }
    int32_t *cu = malloc(sizeof *cu * ((size_t)count + 1));
    if (!cu) {
        fail_at(rd, "problem.varlen", key, "out of memory");
        return NULL;
    }
    int64_t sum = 0;
    *longest = 0;
    cu[0] = 0;
    for (uint32_t i = 0; i < count; i++) {
        json_t *n = json_array_get(a, i);
        json_int_t x = json_is_integer(n) ? json_integer_value(n) : -1;
        if (x < 0 || (sum += x) > INT32_MAX) {
            fail_at(rd, "problem.varlen", key, "[%u]: expected a length from 0 to %d in all", i,
                    INT32_MAX);
            free(cu);
            return NULL;
        }
        cu[i + 1] = (int32_t)sum;
        *longest = (uint32_t)x > *longest ? (uint32_t)x : *longest;
    }
    *total = (uint32_t)sum;
    return cu;
}

static void read_varlen(reader *rd, json_t *pj, sr_report *r)
{
    json_t *vj = get_object(rd, pj, "problem", "varlen", false, true);
    if (!vj || rd->failed)
        return;
    sagerun_problem *p = &r->problem;
    uint32_t longest_q = 0, longest_kv = 0;
    r->cu_seqlens_q = read_lengths(rd, vj, "q_lens", p->batch, &p->total_q, &longest_q);
    if (r->cu_seqlens_q)
        r->cu_seqlens_kv = read_lengths(rd, vj, "kv_lens", p->batch, &p->total_kv, &longest_kv);
    if (rd->failed)
        return;
    if (longest_q > p->seq_len || longest_kv > sagerun_problem_kv_len(p))
        fail_at(rd, "problem", "varlen", "a sequence is longer than seq_len %u or kv_len %u",
                p->seq_len, sagerun_problem_kv_len(p));
    p->varlen = 1;
}

/* The keys of problem ABI 0.2; absent (a report of an older sagerun): the defaults. */
static void read_problem_02(reader *rd, json_t *pj, sr_report *r)
{
    sagerun_problem *p = &r->problem;
    p->window_left = p->window_right = -1;
    long long kv = get_uint(rd, pj, "problem", "kv_len", false, false, p->seq_len);
    if (kv < 1 || kv > UINT32_MAX)
        fail_at(rd, "problem", "kv_len", "expected an integer from 1 to %u", UINT32_MAX);
    p->kv_len = kv == p->seq_len ? 0 : (uint32_t)kv;
    static const word_value aligns[] = {{"top-left", SAGERUN_ALIGN_TOP_LEFT},
                                        {"bottom-right", SAGERUN_ALIGN_BOTTOM_RIGHT}};
    if (json_object_get(pj, "align"))
        p->align = get_word(rd, pj, "align", aligns, SR_ARRAY_LEN(aligns));
    read_window(rd, pj, p);
    double cap = get_number(rd, pj, "problem", "softcap", false, false);
    if (!isnan(cap) && !(cap >= 0 && cap <= FLT_MAX))
        fail_at(rd, "problem", "softcap", "expected a number from 0 (none) to %g, found %g",
                FLT_MAX, cap);
    p->softcap = cap >= 0 && cap <= FLT_MAX ? (float)cap : 0.0f;
    p->page_size = get_u32(rd, pj, "problem", "page_size", false, false, 0);
    p->pages = get_u32(rd, pj, "problem", "pages", false, false, 0);
    if (!p->page_size != !p->pages)
        fail_at(rd, "problem", "pages", "%u pages with page_size %u: both or neither", p->pages,
                p->page_size);
    if (p->page_size)
        p->pages_per_seq = (uint32_t)((sagerun_problem_kv_len(p) + (uint64_t)p->page_size - 1) /
                                      p->page_size);
    read_varlen(rd, pj, r);
}

static void read_problem(reader *rd, json_t *pj, sr_report *r)
{
    sagerun_problem *p = &r->problem;
    p->struct_size = sizeof(*p);
    p->batch = get_size(rd, pj, "batch");
    p->seq_len = get_size(rd, pj, "seq_len");
    p->heads_q = get_size(rd, pj, "heads_q");
    p->heads_kv = get_size(rd, pj, "heads_kv");
    p->head_dim = get_size(rd, pj, "head_dim");
    p->layout = get_word(rd, pj, "layout", layout_words, SR_ARRAY_LEN(layout_words));
    p->dtype = get_word(rd, pj, "dtype", dtype_words, SR_ARRAY_LEN(dtype_words));
    p->causal = get_bool(rd, pj, "problem", "causal", false, false) == 1;
    double scale = get_number(rd, pj, "problem", "sm_scale", false, true);
    if (!isnan(scale) && !(scale >= 0 && scale <= FLT_MAX))
        fail_at(rd, "problem", "sm_scale", "expected a number from 0 to %g (0: D^-0.5), found %g",
                FLT_MAX, scale);
    p->sm_scale = scale >= 0 && scale <= FLT_MAX ? (float)scale : 0.0f;
    if (!rd->failed)
        read_problem_02(rd, pj, r);
}

/* "clocks": the source, the maximum, and one sample per round. */
static void read_clocks(reader *rd, json_t *clocks, sr_report *r)
{
    r->clock_source = get_string(rd, clocks, "clocks", "source", false, true);
    r->clock_unavailable = get_string(rd, clocks, "clocks", "unavailable", false, true);
    r->max_sm_clock_mhz = (int)get_uint(rd, clocks, "clocks", "max_sm_clock_mhz", false, true, -1);
    json_t *cr = get_array(rd, clocks, "clocks", "rounds", false);
    size_t n = cr ? json_array_size(cr) : 0;
    if (!n || rd->failed)
        return;
    if (!(r->clock_rounds = calloc(n, sizeof(*r->clock_rounds)))) {
        fail_at(rd, "clocks", "rounds", "out of memory");
        return;
    }
    r->clock_round_count = n;
    for (size_t i = 0; i < n && !rd->failed; i++) {
        char sub[64];
        snprintf(sub, sizeof(sub), "clocks.rounds[%zu]", i);
        json_t *s = json_array_get(cr, i);
        if (!json_is_object(s)) {
            fail_at(rd, sub, NULL, "expected an object, found %s", type_name(s));
            return;
        }
        sr_clock_sample *c = &r->clock_rounds[i];
        c->sm_clock_mhz = (int)get_uint(rd, s, sub, "sm_clock_mhz", false, true, -1);
        c->temperature_c = (int)get_uint(rd, s, sub, "temperature_c", false, true, -1);
        long long mask = get_uint(rd, s, sub, "throttle_reasons_mask", false, true, -1);
        c->has_throttle = mask >= 0;
        c->throttle_reasons = mask >= 0 ? (uint64_t)mask : 0;
    }
}

/* The file's warnings as they are: one allocation, each kept whole. (Through
 * sr_report_add_warning, which compares every new warning with each one before it and cuts it at
 * 1023 bytes, 300,000 warnings took minutes.) */
static void read_warnings(reader *rd, json_t *warnings, sr_report *r)
{
    size_t n = json_array_size(warnings);
    if (!n)
        return;
    char **w = realloc(r->warnings, (r->warning_count + n) * sizeof(*w));
    if (!w) {
        fail_at(rd, "warnings", NULL, "out of memory");
        return;
    }
    r->warnings = w;
    for (size_t i = 0; i < n && !rd->failed; i++) {
        json_t *text = json_array_get(warnings, i);
        if (!json_is_string(text)) {
            char sub[32];
            snprintf(sub, sizeof(sub), "warnings[%zu]", i);
            fail_at(rd, sub, NULL, "expected a string, found %s", type_name(text));
            return;
        }
        if (!(w[r->warning_count] = strdup(json_string_value(text)))) {
            fail_at(rd, "warnings", NULL, "out of memory");
            return;
        }
        r->warning_count++;
    }
}

/* The keys of ours beside the seed's: completion, tool, device, problem, clocks, measurement,
 * warnings. */
static void read_ext(reader *rd, json_t *root, sr_report *r)
{
    r->incomplete = get_bool(rd, root, "", "complete", false, false) == 0;
    r->rounds_completed = (uint64_t)get_uint(rd, root, "", "rounds_completed", false, false,
                                             (long long)r->rounds);
    json_t *tool = get_object(rd, root, "", "tool", false, true);
    if (tool) {
        r->tool_version = get_string(rd, tool, "tool", "version", false, true);
        r->tool_commit = get_string(rd, tool, "tool", "git_commit", false, true);
    }
    r->created_utc = get_string(rd, root, "", "created_utc", false, true);
    json_t *dev = get_object(rd, root, "", "device", false, true);
    if (dev)
        read_device(rd, dev, r);
    json_t *pj = get_object(rd, root, "", "problem", false, true);
    if (pj) {
        read_problem(rd, pj, r);
        r->has_problem = true;
    }
    r->noise_threshold_percent = get_number(rd, root, "", "noise_threshold_percent", false, true);
    r->expect_sha256 = get_string(rd, root, "", "expect_sha256", false, true);
    json_t *clocks = get_object(rd, root, "", "clocks", false, true);
    if (clocks)
        read_clocks(rd, clocks, r);
    json_t *meas = get_object(rd, root, "", "measurement", false, true);
    if (meas && !rd->failed)
        read_measurement(rd, meas, &r->measurement);
    json_t *warnings = get_array(rd, root, "", "warnings", false);
    if (warnings && !rd->failed)
        read_warnings(rd, warnings, r);
}

sagerun_status sr_report_from_json(json_t *root, const char *name, sr_report *out,
                                   sagerun_error *err)
{
    reader rd = {.file = name, .err = err};
    sr_report *r = out;
    memset(r, 0, sizeof(*r));
    r->compute_capability = r->driver_version = r->multiprocessors = r->max_sm_clock_mhz = -1;
    r->noise_threshold_percent = NAN;
    if (!json_is_object(root)) {
        sr_error_set(err, SAGERUN_FORMAT, "%s: expected a JSON object at the top, found %s", name,
                     type_name(root));
        return SAGERUN_FORMAT;
    }
    const char *other = other_kind(root);
    if (other) {
        sr_error_set(err, SAGERUN_FORMAT, "%s: not a report: %s", name, other);
        return SAGERUN_FORMAT;
    }
    json_t *meta = get_object(&rd, root, "", "metadata", true, false);
    if (meta)
        r->metadata = json_incref(meta);
    r->source_commit = get_string(&rd, root, "", "source_commit", true, true);
    r->reference_sha256 = get_string(&rd, root, "", "reference_output_sha256", true, true);
    json_t *shape = get_array(&rd, root, "", "q_shape", true);
    if (shape) {
        if (json_array_size(shape) > SR_ARRAY_LEN(r->q_shape))
            fail_at(&rd, "", "q_shape", "more than %zu dimensions", SR_ARRAY_LEN(r->q_shape));
        for (size_t i = 0; !rd.failed && i < json_array_size(shape); i++) {
            json_t *d = json_array_get(shape, i);
            if (!json_is_integer(d) || json_integer_value(d) < 0) {
                char sub[32];
                snprintf(sub, sizeof(sub), "q_shape[%zu]", i);
                fail_at(&rd, sub, NULL, "expected a non-negative integer, found %s",
                        type_name(d));
                break;
            }
            r->q_shape[r->q_shape_len++] = (uint64_t)json_integer_value(d);
        }
    }
    json_t *sch = get_object(&rd, root, "", "scheduler", true, true);
    if (sch) {
        read_scheduler(&rd, sch, "scheduler", &r->scheduler);
        r->has_scheduler = true;
    }
    r->rounds = (uint64_t)get_uint(&rd, root, "", "rounds", true, false, 0);
    r->warmup = (uint64_t)get_uint(&rd, root, "", "warmup", true, false, 0);
    r->iterations = (uint64_t)get_uint(&rd, root, "", "iterations_per_round", true, false, 0);
    r->rounds_completed = r->rounds; /* the seed's format: all; ours says (read_ext) */
    json_t *sv = json_object_get(root, "schema_version");
    if (sv) {
        if (!json_is_integer(sv))
            fail_at(&rd, "", "schema_version", "expected an integer, found %s", type_name(sv));
        else if (json_integer_value(sv) != SAGERUN_REPORT_SCHEMA_VERSION)
            fail_at(&rd, "", "schema_version", "%lld: this sagerun reads version %d (a report of "
                    "another sagerun?)", (long long)json_integer_value(sv),
                    SAGERUN_REPORT_SCHEMA_VERSION);
        else
            r->schema_version = (long long)json_integer_value(sv);
        r->has_ext = true;
    }
    json_t *vars = get_array(&rd, root, "", "variants", true);
    if (vars && !rd.failed) {
        size_t n = json_array_size(vars);
        r->variants = calloc(n ? n : 1, sizeof(*r->variants));
        if (!r->variants)
            fail_at(&rd, "", "variants", "out of memory");
        for (size_t i = 0; r->variants && i < n && !rd.failed; i++) {
            char where[32];
            snprintf(where, sizeof(where), "variants[%zu]", i);
            json_t *vo = json_array_get(vars, i);
            r->variant_count = i + 1;
            if (!json_is_object(vo)) {
                fail_at(&rd, where, NULL, "expected an object, found %s", type_name(vo));
                break;
            }
            read_variant(&rd, vo, where, r->has_ext, &r->variants[i]);
        }
    }
    if (r->has_ext && !rd.failed)
        read_ext(&rd, root, r);
    if (!rd.failed && r->has_ext) {
        /* The seed's format has no baseline flag: its baseline is the entry with speedup 0 first. */
        bool any = false;
        for (size_t i = 0; i < r->variant_count; i++)
            any = any || r->variants[i].is_baseline;
        if (!any && r->variant_count)
            r->variants[0].is_baseline = true;
    } else if (!rd.failed && r->variant_count) {
        /* the seed's format: the baseline is the entry whose speedup over itself is 0, the
         * first such; the first entry when none is */
        size_t b = 0;
        while (b < r->variant_count && r->variants[b].speedup_percent != 0.0)
            b++;
        r->variants[b < r->variant_count ? b : 0].is_baseline = true;
        if (!label_repeats(r))
            fail_at(&rd, "", "variants", "out of memory");
    }
    if (!rd.failed && sr_report_check(r, name, err) != SAGERUN_OK)
        rd.failed = true;
    if (rd.failed) {
        sr_report_clear(r);
        return err ? (sagerun_status)err->status : SAGERUN_FORMAT;
    }
    return SAGERUN_OK;
}

sagerun_status sr_report_read(const char *path, sr_report *out, sagerun_error *err)
{
    memset(out, 0, sizeof(*out));
    char *text;
    size_t len;
    sagerun_status st = sagerun_file_read(path, (size_t)1 << 30, &text, &len, err);
    if (st != SAGERUN_OK)
        return st; /* the message names the path */
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root)
        return sr_error_set(err, SAGERUN_FORMAT, "%s:%d:%d: not valid JSON: %s", path, jerr.line,
                            jerr.column, jerr.text);
    st = sr_report_from_json(root, path, out, err);
    json_decref(root);
    return st;
}

/* ---- rendering -------------------------------------------------------------------------------- */

void sr_format_seconds(double s, char *buf, size_t len)
{
    if (!isfinite(s))
        snprintf(buf, len, "-");
    else if (s >= 1e6) /* a forged or absurd report: a number that fits, with its unit */
        snprintf(buf, len, "%.4g s", s);
    else if (s >= 1.0)
        snprintf(buf, len, "%.4f s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.3f ms", s * 1e3);
    else
        snprintf(buf, len, "%.2f us", s * 1e6);
}

const char *sr_report_interrupted(const sr_report *r, char *buf, size_t len)
{
    if (r->measurement.present && strcmp(r->measurement.schedule, "timed") == 0)
        snprintf(buf, len, "interrupted after %llu rounds", /* of no set count */
                 (unsigned long long)r->rounds_completed);
    else
        snprintf(buf, len, "interrupted after %llu of %llu rounds",
                 (unsigned long long)r->rounds_completed, (unsigned long long)r->rounds);
    return buf;
}

const char *sr_report_variant_label(const sr_report_variant *v)
{
    return v->label ? v->label : v->name ? v->name : "?";
}

/* The spread of one variant's calls around its median: "-1.85/+1.29%" from min and p90 (the
 * slowest tenth is left out: one-off hiccups are not spread), each with its own sign (a report
 * whose p50 lies above its p90, forged or edited, showed "-100.00/+-100.00%"). */
static void format_spread(const sr_summary *t, char *buf, size_t len)
{
    if (!(t->count > 0) || !isfinite(t->p50) || !(t->p50 > 0))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%+.2f/%+.2f%%", -((t->p50 - t->min) / t->p50 * 100.0),
                 (t->p90 - t->p50) / t->p50 * 100.0);
}

/* The headline is the paired estimate with its interval (judge.h) and the factor it means
 * ("-90.06% (10.06× slower)"); without an interval, the seed's ratio of p50s, labelled so. */
static void format_speedup(const sr_report_variant *v, char *buf, size_t len)
{
    char times[48];
    bool paired = v->interval.valid && isfinite(v->interval.estimate);
    sr_format_speedup_times(paired ? v->interval.estimate : v->speedup_percent, times,
                            sizeof times);
    if (v->is_baseline)
        snprintf(buf, len, "(baseline)");
    else if (paired)
        snprintf(buf, len, "%+.2f%% (%s) [%+.2f, %+.2f]", v->interval.estimate, times,
                 v->interval.low, v->interval.high);
    else if (!isfinite(v->speedup_percent))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%+.2f%% (%s, p50 ratio)", v->speedup_percent, times);
}

static void format_verdict(const sr_report *r, const sr_report_variant *v, char *buf, size_t len)
{
    double thr = isfinite(r->noise_threshold_percent) ? r->noise_threshold_percent : 1.0;
    const char *vn = sr_verdict_name(v->verdict);
    if (v->failure)
        snprintf(buf, len, "FAILED");
    else if (v->verdict == SR_VERDICT_SAME)
        snprintf(buf, len, "same (within \u00b1%.3g%%)", thr);
    else if (v->verdict == SR_VERDICT_BELOW_THRESHOLD)
        snprintf(buf, len, "differs, below \u00b1%.3g%%", thr);
    else
        snprintf(buf, len, "%s", vn ? vn : "-");
}

static void format_exact(const sr_report_variant *v, char *buf, size_t len)
{
    /* a variant judged by tolerance says how it came out */
    const char *tol = v->tolerance.passed == 1 ? ", tol. ok" : v->tolerance.passed == 0
                                                                   ? ", tol. FAIL" : "";
    if (v->byte_exact < 0)
        snprintf(buf, len, "-");
    else if (v->byte_exact)
        snprintf(buf, len, "yes");
    else if (v->deterministic == 0)
        snprintf(buf, len, "NO (nondet.)%s", tol);
    else if (v->byte_diff.present)
        snprintf(buf, len, "NO (%llu el.)%s", (unsigned long long)v->byte_diff.differing, tol);
    else
        snprintf(buf, len, "NO%s", tol);
}

static void format_accuracy(const sr_report_variant *v, char *buf, size_t len)
{
    const sr_accuracy *a = &v->accuracy;
    if (!a->present)
        snprintf(buf, len, "-");
    else if (a->nonfinite)
        snprintf(buf, len, "%llu non-finite", (unsigned long long)a->nonfinite);
    else
        snprintf(buf, len, "cos %.6f relL1 %.2e", a->cosine, a->rel_l1);
}

void sr_report_format_shape(const sr_report *r, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < r->q_shape_len && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%llu", i ? ", " : "",
                                 (unsigned long long)r->q_shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

/* Appends ", " (unless first) and a formatted part to buf (len bytes, *used of them taken). */
static void add_part(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_part(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    if (*used)
        *used += (size_t)snprintf(buf + *used, len - *used, ", ");
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    *used += (size_t)vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
}

void sr_report_format_features(const sr_report *r, char *buf, size_t len)
{
    const sagerun_problem *p = &r->problem;
    size_t used = 0;
    buf[0] = '\0';
    if (!r->has_problem)
        return;
    uint32_t kv = sagerun_problem_kv_len(p);
    /* the alignment matters where the lengths can differ; bottom-right is said always */
    bool differ = kv != p->seq_len || p->varlen;
    const char *align = p->align == SAGERUN_ALIGN_BOTTOM_RIGHT ? " bottom-right"
                        : differ                               ? " top-left"
                                                               : "";
    if (kv != p->seq_len)
        add_part(buf, len, &used, "kv_len %u", kv);
    if (p->causal)
        add_part(buf, len, &used, "causal%s", align);
    if (p->window)
        add_part(buf, len, &used, "window (%d, %d)%s", p->window_left, p->window_right,
                 p->causal ? "" : align);
    if (p->softcap > 0)
        add_part(buf, len, &used, "softcap %g", (double)p->softcap);
    if (p->varlen)
        add_part(buf, len, &used, "varlen %u sequences", p->batch);
    if (p->page_size)
        add_part(buf, len, &used, "paged %u", p->page_size);
}

/* " (NHD fp16, Hkv 2, causal bottom-right, ...)" after q_shape: what the shape does not say. */
static void print_problem(const sr_report *r, FILE *out)
{
    if (!r->has_problem)
        return;
    char features[256];
    sr_report_format_features(r, features, sizeof features);
    const char *layout = layout_name(r->problem.layout);
    const char *dtype = sagerun_dtype_word((int)r->problem.dtype);
    fprintf(out, " (%s %s, Hkv %u%s%s)", layout ? layout : "?", dtype ? dtype : "?",
            r->problem.heads_kv, *features ? ", " : "", features);
}

static void print_header(const sr_report *r, FILE *out, const char *bullet)
{
    char shape[128];
    sr_report_format_shape(r, shape, sizeof(shape));
    fprintf(out, "%sq_shape %s", bullet, shape);
    print_problem(r, out);
    fprintf(out, "\n");
    if (r->device_name) {
        sr_line_printf(out, "%sdevice %s", bullet, r->device_name);
        if (r->compute_capability > 0)
            fprintf(out, " (sm_%d", r->compute_capability);
        if (r->compute_capability > 0 && r->driver_version > 0)
            fprintf(out, ", CUDA %d.%d", r->driver_version / 1000,
                    (r->driver_version % 1000) / 10);
        if (r->compute_capability > 0 && r->driver_release)
            sr_line_printf(out, ", driver %s", r->driver_release);
        if (r->compute_capability > 0 && r->pci_bus_id)
            sr_line_printf(out, ", PCI %s", r->pci_bus_id);
        fprintf(out, "%s\n", r->compute_capability > 0 ? ")" : "");
    }
    const sr_measurement_info *m = &r->measurement;
    if (m->present) {
        sr_line_printf(out, "%sschedule: %s, %s order, %llu rounds x %llu samples, ended by %s",
                       bullet, m->schedule, m->order, (unsigned long long)r->rounds_completed,
                       (unsigned long long)r->iterations,
                       strcmp(m->end, "stopped") == 0 ? "an interruption" : m->end);
        if (isfinite(m->half_width))
            fprintf(out, " (half-width %.3f points", m->half_width);
        if (isfinite(m->half_width) && isfinite(m->target_half_width))
            fprintf(out, ", target %.3f", m->target_half_width);
        sr_line_printf(out, "%s, %s cache", isfinite(m->half_width) ? ")" : "", m->cache);
        if (m->sample_clock[0])
            sr_line_printf(out, ", timed by %s", m->sample_clock);
        if (m->redone)
            fprintf(out, ", %u rounds redone", m->redone);
        if (isfinite(m->launch_floor_s))
            fprintf(out, ", launch floor %.2f us", m->launch_floor_s * 1e6);
    } else {
        fprintf(out, "%sschedule: warmup %llu, %llu rounds x %llu iterations", bullet,
                (unsigned long long)r->warmup, (unsigned long long)r->rounds,
                (unsigned long long)r->iterations);
    }
    if (isfinite(r->noise_threshold_percent))
        fprintf(out, ", noise threshold %.3g%%", r->noise_threshold_percent);
    fprintf(out, "\n");
    if (r->incomplete) {
        char why[96];
        fprintf(out, "%sINCOMPLETE: %s\n", bullet, sr_report_interrupted(r, why, sizeof why));
    }
    if (r->reference_sha256)
        sr_line_printf(out, "%sreference output sha256 %s%s\n", bullet, r->reference_sha256,
                       r->expect_sha256 ? " (pinned)" : "");
    if (r->tool_version || r->source_commit)
        sr_line_printf(out, "%ssource commit %s%s%s\n", bullet,
                       r->source_commit ? r->source_commit : "unknown",
                       r->tool_version ? ", sagerun " : "", r->tool_version ? r->tool_version : "");
}

/* How a variant was timed: timer, calls per sample, clock, energy. */
static void print_timing_note(const sr_report_variant *v, FILE *out, const char *bullet)
{
    const sr_variant_timing *t = &v->how;
    if (!t->present)
        return;
    sr_line_printf(out, "%s%s: timer %s, %u call%s per sample", bullet, sr_report_variant_label(v),
                   t->timer, t->calls_per_sample, t->calls_per_sample == 1 ? "" : "s");
    if (isfinite(t->clock_mhz))
        fprintf(out, ", SM clock %.0f MHz", t->clock_mhz);
    if (v->interval.valid && v->interval.instances > 1)
        fprintf(out, isfinite(v->interval.instance_sd)
                         ? ", %u instances (their offsets' sd at most %.3f%%, in the interval)"
                         : ", %u instances (too few rounds each for their spread)",
                v->interval.instances, v->interval.instance_sd);
    if (isfinite(t->host_call_s))
        fprintf(out, ", %.2f us per call to queue it", t->host_call_s * 1e6);
    if (isfinite(t->launch_gap_s))
        fprintf(out, ", launch gap %.2f us added to each cold sample", t->launch_gap_s * 1e6);
    if (isfinite(t->energy_per_call_j))
        fprintf(out, ", %.4g J per call, %.0f W", t->energy_per_call_j, t->mean_power_w);
    if (t->energy_interval.valid)
        fprintf(out, ", energy %+.2f%% [%+.2f, %+.2f] less than the baseline",
                t->energy_interval.estimate, t->energy_interval.low, t->energy_interval.high);
    fprintf(out, "\n");
}

/* rmse and max error, and where some output was NaN or Inf, how much: they are over the finite
 * elements only, and said so (they were given as if over all). */
static void print_accuracy_note(const sr_accuracy *a, FILE *out)
{
    char rmse[32] = "-", max_abs[32] = "-";
    if (isfinite(a->rmse))
        snprintf(rmse, sizeof rmse, "%.3g", a->rmse);
    if (isfinite(a->max_abs))
        snprintf(max_abs, sizeof max_abs, "%.3g", a->max_abs);
    sr_line_printf(out, ", rmse %s, max abs error %s over %llu rows (%s)", rmse, max_abs,
                   (unsigned long long)a->rows, a->reference);
    if (a->nonfinite)
        fprintf(out, "; NOT FINITE: %llu of the %llu elements in those rows are NaN or Inf, "
                "left out of rmse, max error, cosine and relative L1",
                (unsigned long long)a->nonfinite, (unsigned long long)a->elements);
}

/* Notes under the table: failures, non-determinism, byte differences, clocks, warnings. */
static void print_notes(const sr_report *r, FILE *out, const char *bullet)
{
    for (size_t i = 0; i < r->variant_count; i++) {
        const sr_report_variant *v = &r->variants[i];
        const char *l = sr_report_variant_label(v);
        if (v->failure)
            sr_line_printf(out, "%s%s failed: %s\n", bullet, l, v->failure);
        if (v->deterministic == 0)
            sr_line_printf(out,
                           "%s%s is not deterministic: its first and last checked outputs differ\n",
                           bullet, l);
        if (v->byte_diff.present && v->byte_diff.differing) {
            const sr_byte_diff *d = &v->byte_diff;
            char at[128];
            sr_report_format_element(r, d->first_index, at, sizeof at);
            sr_line_printf(out,
                           "%s%s differs from the baseline in %llu of %llu elements (first at "
                           "%s: element %llu), max abs ",
                           bullet, l, (unsigned long long)d->differing,
                           (unsigned long long)d->elements, at, (unsigned long long)d->first_index);
            if (isinf(d->max_abs))
                fprintf(out, "inf (NaN involved)");
            else
                fprintf(out, "%.3g", d->max_abs);
            fprintf(out, ", max %llu ulp\n", (unsigned long long)d->max_ulp);
        }
        if (v->tolerance.passed >= 0)
            sr_line_printf(out, "%s%s %s the tolerance: %s\n", bullet, l,
                           v->tolerance.passed ? "is within" : "FAILS", v->tolerance.detail);
        if (isfinite(v->prepare_s)) {
            char prep[32];
            sr_format_seconds(v->prepare_s, prep, sizeof(prep));
            sr_line_printf(out, "%s%s: prepare %s", bullet, l, prep);
            if (isfinite(v->tops))
                fprintf(out, ", %.3g TOPS", v->tops);
            if (v->accuracy.present)
                print_accuracy_note(&v->accuracy, out);
            fprintf(out, "\n");
        }
        print_timing_note(v, out, bullet);
    }
    if (r->clock_source && r->clock_round_count && r->clock_round_count <= 40) {
        fprintf(out, "%sSM clock per round (MHz):", bullet);
        for (size_t i = 0; i < r->clock_round_count; i++)
            fprintf(out, " %d", r->clock_rounds[i].sm_clock_mhz);
        if (r->max_sm_clock_mhz > 0)
            fprintf(out, " (max %d)", r->max_sm_clock_mhz);
        bool temps = false;
        for (size_t i = 0; i < r->clock_round_count; i++)
            temps = temps || r->clock_rounds[i].temperature_c >= 0;
        if (temps)
            fprintf(out, "; temperature (C):");
        for (size_t i = 0; temps && i < r->clock_round_count; i++)
            fprintf(out, " %d", r->clock_rounds[i].temperature_c);
        fprintf(out, "\n");
    }
    for (size_t i = 0; i < r->warning_count; i++)
        sr_line_printf(out, "%swarning: %s\n", bullet, r->warnings[i]);
}

/* Column texts of one row of the table. */
typedef struct row_text {
    char label[SR_LABEL_MAX + 16], p50[32], spread[40], tops[16], speedup[112], verdict[40], exact[32],
        accuracy[64];
} row_text;

static void row_of(const sr_report *r, const sr_report_variant *v, row_text *t)
{
    sr_text_copy(t->label, sizeof(t->label), sr_report_variant_label(v));
    sr_format_seconds(v->timing.count ? v->timing.p50 : NAN, t->p50, sizeof(t->p50));
    format_spread(&v->timing, t->spread, sizeof(t->spread));
    if (isfinite(v->tops)) /* whole numbers up to 1e9, then with an exponent (never cut) */
        snprintf(t->tops, sizeof(t->tops), v->tops >= 100 && v->tops < 1e9 ? "%.0f" : "%.3g", v->tops);
    else
        snprintf(t->tops, sizeof(t->tops), "-");
    format_speedup(v, t->speedup, sizeof(t->speedup));
    format_verdict(r, v, t->verdict, sizeof(t->verdict));
    format_exact(v, t->exact, sizeof(t->exact));
    format_accuracy(v, t->accuracy, sizeof(t->accuracy));
}

/* Columns are as wide as their widest text on a terminal: UTF-8 continuation bytes take no
 * column. */
static int display_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void print_cell(FILE *out, const char *text, int width, const char *sep)
{
    fprintf(out, "%s%*s%s", text, width > display_width(text) ? width - display_width(text) : 0,
            "", sep);
}

void sr_report_print_table(const sr_report *r, FILE *out)
{
    print_header(r, out, "");
    static const char *const head[] = {"variant", "p50",     "spread",     "TOPS",
                                       "speedup [95% CI]",   "verdict", "byte-exact", "accuracy"};
    size_t n = r->variant_count;
    row_text *rows = calloc(n ? n : 1, sizeof(*rows));
    if (!rows)
        return;
    int w[8];
    for (int c = 0; c < 8; c++)
        w[c] = display_width(head[c]);
    for (size_t i = 0; i < n; i++) {
        row_of(r, &r->variants[i], &rows[i]);
        const char *cells[8] = {rows[i].label,   rows[i].p50,     rows[i].spread, rows[i].tops,
                                rows[i].speedup, rows[i].verdict, rows[i].exact,  rows[i].accuracy};
        for (int c = 0; c < 8; c++)
            if (display_width(cells[c]) > w[c])
                w[c] = display_width(cells[c]);
    }
    fprintf(out, "\n");
    for (int c = 0; c < 8; c++)
        print_cell(out, head[c], c == 7 ? 0 : w[c], c == 7 ? "\n" : "  ");
    for (size_t i = 0; i < n; i++) {
        const char *cells[8] = {rows[i].label,   rows[i].p50,     rows[i].spread, rows[i].tops,
                                rows[i].speedup, rows[i].verdict, rows[i].exact,  rows[i].accuracy};
        for (int c = 0; c < 8; c++)
            print_cell(out, cells[c], c == 7 ? 0 : w[c], c == 7 ? "\n" : "  ");
    }
    free(rows);
    fprintf(out, "\n");
    print_notes(r, out, "");
}

void sr_report_print_markdown(const sr_report *r, FILE *out)
{
    fprintf(out, "# sagerun comparison\n\n");
    print_header(r, out, "- ");
    fprintf(out, "\n| variant | p50 | spread | TOPS | speedup [95%% CI] | verdict | byte-exact | "
                 "accuracy |\n|---|---:|---:|---:|---|---|---|---|\n");
    for (size_t i = 0; i < r->variant_count; i++) {
        row_text t;
        row_of(r, &r->variants[i], &t);
        const char *cells[] = {t.label, t.p50, t.spread, t.tops, t.speedup, t.verdict, t.exact,
                               t.accuracy};
        for (size_t c = 0; c < SR_ARRAY_LEN(cells); c++) {
            fputs("| ", out);
            sr_markdown_cell(out, cells[c]);
            fputc(' ', out);
        }
        fputs("|\n", out);
    }
    fprintf(out, "\n");
    print_notes(r, out, "- ");
}

static bool write_markdown_cb(FILE *f, const void *user)
{
    sr_report_print_markdown(user, f);
    return !ferror(f);
}

sagerun_status sr_report_write_markdown(const sr_report *r, const char *path, sagerun_error *err)
{
    return sr_write_file_atomic(path, write_markdown_cb, r, err);
}

