/* The A/B comparison engine (compare.h): the driver. Each stage lives in a file of its own
 * (engine.h): entries.c (which variants, create, prepare), measure.c (warm-up and the timed
 * rounds: schedule.c and timer.c), verify.c (checked calls, hashes, byte differences, accuracy),
 * assemble.c (the report, judged by judge.c). */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "inputs.h"
#include "nvtx.h"

const char *sagerun_verdict_name(int verdict)
{
    return sr_verdict_name(verdict);
}

void sagerun_compare_options_init(sagerun_compare_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->struct_size = sizeof(*opts);
    opts->warmup = 3;
    opts->rounds = 5;
    opts->iterations = 10;
    opts->noise_threshold_percent = 1.0;
    opts->baseline = "baseline";
    opts->schedule = SAGERUN_SCHEDULE_TIMED;
    opts->order = SAGERUN_ORDER_INTERLEAVE;
    opts->timer = SAGERUN_TIMER_AUTO;
    opts->cache = SAGERUN_CACHE_HOT;
    opts->min_rounds = SR_SCHEDULE_MIN_ROUNDS;
    opts->max_rounds = SR_SCHEDULE_MAX_ROUNDS;
    opts->warmup_s = 0.25;
    opts->max_time_s = SR_SCHEDULE_MAX_TIME_S;
    opts->target_precision_percent = SR_SCHEDULE_TARGET_HW;
    opts->instances = SR_SCHEDULE_INSTANCES;
}

/* The option fields' words (compare.h): each field's own table (schedule.c, timer.c). */
static const struct option_field {
    const char *field;
    int (*parse)(const char *word);
    const char *(*word)(int value);
} option_fields[] = {{"schedule", sr_schedule_parse, sr_schedule_name},
                     {"order", sr_order_parse, sr_order_name},
                     {"timer", sr_timer_mode_parse, sr_timer_mode_name},
                     {"cache", sr_cache_mode_parse, sr_cache_mode_name}};

static const struct option_field *option_field(const char *field)
{
    for (size_t i = 0; field && i < SR_ARRAY_LEN(option_fields); i++)
        if (strcmp(field, option_fields[i].field) == 0)
            return &option_fields[i];
    return NULL;
}

int sagerun_compare_option_parse(const char *field, const char *word)
{
    const struct option_field *f = option_field(field);
    return f && word ? f->parse(word) : -1;
}

const char *sagerun_compare_option_word(const char *field, uint32_t value)
{
    const struct option_field *f = option_field(field);
    return f && value <= INT32_MAX ? f->word((int)value) : NULL;
}

static bool is_hex64(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
              (s[n] >= 'A' && s[n] <= 'F')))
            return false;
    return n == 64;
}

/* The caller's options over the defaults; an older, shorter struct keeps the schedule it had. */
static sagerun_status complete_options(const sagerun_compare_options *opts, sr_engine_options *eo,
                                       sagerun_error *err)
{
    sagerun_compare_options *o = &eo->o;
    sagerun_compare_options_init(o);
    if (opts) {
        if (opts->struct_size < offsetof(sagerun_compare_options, progress))
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "compare options: struct_size %u is too small", opts->struct_size);
        memcpy(o, opts, opts->struct_size < sizeof(*o) ? opts->struct_size : sizeof(*o));
        o->struct_size = sizeof(*o);
        if (opts->struct_size <= offsetof(sagerun_compare_options, schedule)) {
            o->schedule = SAGERUN_SCHEDULE_FIXED;
            o->order = SAGERUN_ORDER_ROTATE;
            o->instances = 1; /* and the one instance it had */
        }
        if (!o->baseline)
            o->baseline = "baseline";
    }
    memset(&eo->hooks, 0, sizeof(eo->hooks));
    if (o->hooks && o->hooks->struct_size < offsetof(sagerun_compare_hooks, call) +
                                                 sizeof(o->hooks->call))
        /* hooks that cover no hook were dropped in silence: interrupted and skip_labels too */
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare hooks: struct_size %u covers no hook (set it to "
                            "sizeof(sagerun_compare_hooks))", o->hooks->struct_size);
    if (o->hooks)
        memcpy(&eo->hooks, o->hooks,
               o->hooks->struct_size < sizeof(eo->hooks) ? o->hooks->struct_size
                                                         : sizeof(eo->hooks));
    if (o->schedule == SAGERUN_SCHEDULE_SEED) {
        o->warmup = 3;
        o->rounds = 5;
        o->iterations = 10;
    }
    return SAGERUN_OK;
}

size_t sr_compare_instances(const sagerun_compare_options *o)
{
    if (o->schedule == SAGERUN_SCHEDULE_SEED)
        return 1; /* the seed's schedule, exactly */
    return o->instances ? o->instances : SR_SCHEDULE_INSTANCES;
}

static sagerun_status check_options(const sagerun_compare_options *o, sagerun_error *err)
{
    if (o->instances > SR_INSTANCES_MAX)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: instances must be 1 to %u (got %u)", SR_INSTANCES_MAX,
                            o->instances);
    if (o->rounds < 1 || o->iterations < 1)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: rounds and iterations must be at least 1 (got %u and %u)",
                            o->rounds, o->iterations);
    if (!(o->noise_threshold_percent >= 0) || !isfinite(o->noise_threshold_percent))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: the noise threshold must be a percentage >= 0");
    if (o->expect_sha256 && !is_hex64(o->expect_sha256))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: expected SHA-256 '%s' is not 64 hex digits",
                            o->expect_sha256);
    if (o->schedule > SAGERUN_SCHEDULE_SEED || o->order > SAGERUN_ORDER_ROTATE ||
        o->timer > SAGERUN_TIMER_GRAPH || o->cache > SAGERUN_CACHE_COLD)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: unknown schedule %u, order %u, timer %u or cache %u",
                            o->schedule, o->order, o->timer, o->cache);
    if (o->schedule == SAGERUN_SCHEDULE_TIMED &&
        (o->min_rounds < 2 || o->max_rounds < o->min_rounds || !(o->max_time_s > 0) ||
         !(o->warmup_s >= 0) || !(o->target_precision_percent >= 0)))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: the timed schedule needs 2 <= min_rounds (%u) <= max_rounds "
                            "(%u), a budget > 0 (%g s), warm-up >= 0 (%g s) and a target >= 0 "
                            "(%g)",
                            o->min_rounds, o->max_rounds, o->max_time_s, o->warmup_s,
                            o->target_precision_percent);
    if (o->batch > 1 && o->cache == SAGERUN_CACHE_COLD)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: batch %u with a cold cache: a cold sample is one call (the "
                            "flush cannot sit between a batch's calls, which would run hot)",
                            o->batch);
    if (o->batch > SR_TIMER_MAX_BATCH)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: batch %u is above the most calls per sample (%u)", o->batch,
                            SR_TIMER_MAX_BATCH);
    return SAGERUN_OK;
}

/* The entries chosen by default that do not do the problem (create said UNSUPPORTED): left out of
 * the comparison with a warning, as variants of another backend are, not failed. */
static size_t drop_unsupported(sr_entry *es, size_t n, sr_report *rep)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (es[i].optional && es[i].failed && es[i].unsupported) {
            sr_report_add_warning(rep, "variant %s skipped: it does not do this problem (%s)",
                                  es[i].label, es[i].failure);
            continue;
        }
        if (kept != i)
            es[kept] = es[i];
        kept++;
    }
    return kept;
}

/* After a stage of many calls (warm-up, rounds): the inputs put back if some call changed them;
 * the checked calls that follow then say which variant did. */
static sagerun_status inputs_after(sagerun_context *ctx, sr_input_guard *g, const char *stage,
                                   sagerun_error *err)
{
    const char *changed = NULL;
    sagerun_status st = sr_input_guard_check(ctx, g, &changed, err);
    g->changed_in = changed ? stage : NULL;
    g->changed = changed;
    g->caught = false;
    return st;
}

/* After the checked calls that follow such a stage: a change no checked call repeated is one no
 * variant can be blamed for, and every result is in doubt. */
static sagerun_status inputs_judged(sr_input_guard *g, sr_report *rep, sagerun_error *err)
{
    if (!g->changed_in)
        return SAGERUN_OK;
    if (!g->caught)
        return sr_error_set(err, SAGERUN_VARIANT,
                            "the inputs (%s) changed during the %s, and no variant's checked call "
                            "changed them again: a variant writes into the inputs it shares with "
                            "the others (read-only, plugin.h) now and then, which cannot be told",
                            g->changed, g->changed_in);
    if (strcmp(g->changed_in, "rounds") == 0) /* the culprit left the warm-up's out of the rounds */
        sr_report_add_warning(rep, "the inputs (%s) changed during the rounds: the other variants' "
                                   "times may have been taken on changed inputs (every output was "
                                   "checked on the inputs put back)",
                              g->changed);
    g->changed_in = NULL;
    return SAGERUN_OK;
}

/* The measuring part: prepare, warm-up, first checks, rounds, last checks, outputs compared;
 * each stage an NVTX range of its name (nvtx.h). The shared inputs are guarded from the end of
 * prepare (input_guard.c). */
static sagerun_status run_stages(sagerun_registry *reg, sagerun_context *ctx,
                                 sagerun_inputs *in, const sr_engine_options *eo, sr_entry *es,
                                 size_t *n_entries, sr_measurement *m, bool *stop, sr_report *rep,
                                 sagerun_error *err)
{
    const sagerun_compare_hooks *h = &eo->hooks;
    sr_input_guard g = {0};
    sr_nvtx_push("create and prepare");
    sagerun_status st = sr_entries_prepare(reg, ctx, in, h, &eo->o, es, *n_entries, stop, err);
    size_t n = *n_entries = drop_unsupported(es, *n_entries, rep);
    if (st == SAGERUN_OK && !*stop)
        st = sr_input_guard_take(ctx, in, &g, err);
    sr_nvtx_pop();
    if (st == SAGERUN_OK && !*stop) {
        sr_nvtx_push("warm-up");
        st = sr_measure_warmup(ctx, eo, es, n, m, stop, err);
        if (st == SAGERUN_OK)
            st = inputs_after(ctx, &g, "warm-up", err);
        sr_nvtx_pop();
    }
    if (st == SAGERUN_OK && !*stop) {
        sr_nvtx_push("first checked calls");
        st = sr_verify_first(ctx, h, es, n, &g, stop, err);
        if (st == SAGERUN_OK && !*stop)
            st = inputs_judged(&g, rep, err);
        sr_nvtx_pop();
    }
    if (st == SAGERUN_OK && !*stop) {
        sr_nvtx_push("rounds");
        st = sr_measure_rounds(ctx, eo, es, n, m, stop, err);
        if (st == SAGERUN_OK)
            st = inputs_after(ctx, &g, "rounds", err);
        sr_nvtx_pop();
    }
    if (st == SAGERUN_OK && m->sched.rounds) {
        sr_nvtx_push("last checked calls");
        st = sr_verify_last(ctx, in, h, es, n, &g, *stop, err);
        if (st == SAGERUN_OK && !*stop)
            st = inputs_judged(&g, rep, err);
        sr_nvtx_pop();
    }
    if (st == SAGERUN_OK && !*stop && m->sched.rounds)
        sr_verify_outputs(ctx, in, &eo->o, es, n, rep);
    sr_input_guard_release(ctx, &g);
    return st;
}

/* The entries (the baseline first, on the context's backend), those left out, and the one memory
 * check: of the inputs too when they do not exist yet (w). */
static sagerun_status choose_entries(sagerun_registry *reg, sagerun_context *ctx,
                                     const sagerun_inputs *in, const sr_workload *w,
                                     const sr_engine_options *eo, sr_report *rep, sr_entry **es,
                                     size_t *n, sagerun_error *err)
{
    sagerun_status st = sr_entries_select(reg, ctx, &eo->o, rep, es, n, err);
    if (st == SAGERUN_OK && (*es)[0].info.backend != sagerun_context_backend(ctx))
        st = sr_error_set(err, SAGERUN_UNSUPPORTED,
                          "baseline %s runs on the %s backend, the context is %s (--backend)",
                          (*es)[0].info.name, sagerun_backend_name((*es)[0].info.backend),
                          sagerun_backend_name(sagerun_context_backend(ctx)));
    if (st == SAGERUN_OK)
        st = sr_entries_skip(&eo->hooks, *es, *n, err);
    if (st == SAGERUN_OK)
        st = sr_entries_check_memory(reg, ctx, in ? &in->problem : &w->problem, !in, *es, *n,
                                     &eo->o, err);
    return st;
}

/* One comparison on inputs, or (inputs NULL) on the workload's, made after the memory check and
 * released at the end; the report carries the workload's metadata. */
static sagerun_status compare(sagerun_registry *reg, sagerun_context *ctx, sagerun_inputs *inputs,
                              const sr_workload *w, const sr_engine_options *eo,
                              sagerun_compare_result *res, sagerun_error *err)
{
    sr_entry *es = NULL;
    size_t n = 0;
    sr_measurement m;
    memset(&m, 0, sizeof(m));
    bool stop = false;
    sagerun_inputs *own = NULL;
    sagerun_status st = choose_entries(reg, ctx, inputs, w, eo, &res->report, &es, &n, err);
    sr_nvtx_push("sagerun compare");
    if (st == SAGERUN_OK && !inputs && (st = sr_inputs_create_for_workload(ctx, w, &own, err)) ==
                                           SAGERUN_OK)
        inputs = own;
    if (st == SAGERUN_OK && !es[0].failed) /* a baseline left out (sr_entries_skip): no stage */
        st = run_stages(reg, ctx, inputs, eo, es, &n, &m, &stop, &res->report, err);
    if ((st == SAGERUN_OK || st == SAGERUN_VARIANT) && n && es[0].failed) {
        /* the baseline failed (its error in err): a report of that, the others not measured */
        sr_entries_without_baseline(es, n);
        m.sched.end = SR_SCHEDULE_BASELINE;
        m.launch_floor_s = m.launch_floor_s > 0 ? m.launch_floor_s : NAN;
        st = SAGERUN_OK;
    }
    if (st == SAGERUN_OK)
        st = sr_assemble_report(&res->report, ctx, inputs, eo, es, n, &m, stop, err);
    if (st == SAGERUN_OK && w && w->metadata) {
        json_decref(res->report.metadata);
        if (!(res->report.metadata = json_deep_copy(w->metadata)))
            st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    sr_measurement_free(&m, es, n);
    if (es)
        sr_entries_destroy(ctx, &eo->hooks, es, n);
    sr_nvtx_pop();
    sagerun_inputs_destroy(own);
    return st;
}

static sagerun_status compare_entry(sagerun_registry *reg, sagerun_context *ctx,
                                    sagerun_inputs *inputs, const sr_workload *w,
                                    const sagerun_compare_options *opts,
                                    sagerun_compare_result **out, sagerun_error *err)
{
    if (!reg || !ctx || !(inputs || w) || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_run: NULL argument");
    *out = NULL;
    sr_engine_options eo;
    sagerun_status st = complete_options(opts, &eo, err);
    if (st == SAGERUN_OK)
        st = check_options(&eo.o, err);
    if (st == SAGERUN_OK && eo.o.cache == SAGERUN_CACHE_COLD &&
        sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST) /* it said "cold", flushed nothing */
        st = sr_error_set(err, SAGERUN_UNSUPPORTED,
                          "a cold cache (--cache cold) needs a CUDA device: the host backend has "
                          "no cache flush");
    if (st == SAGERUN_OK && eo.o.timer == SAGERUN_TIMER_GRAPH &&
        sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST) /* refused before any call, not after
                                                                 the warm-up */
        st = sr_error_set(err, SAGERUN_UNSUPPORTED,
                          "the graph timer (--timer graph) needs a CUDA device: the host backend "
                          "has no CUDA graphs");
    if (st == SAGERUN_OK && inputs && inputs->ctx != ctx)
        st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                          "compare: the inputs belong to another context");
    if (st != SAGERUN_OK)
        return st;
    sagerun_compare_result *res = calloc(1, sizeof(*res));
    if (!res)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    if ((st = compare(reg, ctx, inputs, w, &eo, res, err)) != SAGERUN_OK) {
        sagerun_compare_result_destroy(res);
        return st;
    }
    *out = res;
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_run(sagerun_registry *reg, sagerun_context *ctx,
                                   sagerun_inputs *inputs, const sagerun_compare_options *opts,
                                   sagerun_compare_result **out, sagerun_error *err)
{
    return compare_entry(reg, ctx, inputs, NULL, opts, out, err);
}

sagerun_status sagerun_compare_run_workload(sagerun_registry *reg, sagerun_context *ctx,
                                            const sagerun_workload *workload,
                                            const sagerun_compare_options *opts,
                                            sagerun_compare_result **out, sagerun_error *err)
{
    return compare_entry(reg, ctx, NULL, workload ? &workload->w : NULL, opts, out, err);
}
