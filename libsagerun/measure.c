/* Measurement (engine.h): warm-up, each variant's timer plan, and the timed rounds — the schedule
 * (schedule.h) driven by a sampler over the sample timer (timer.h) and NVML. Nothing else of
 * sagerun's runs while a sample is timed: checks and hashing come before and after (verify.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine.h"
#include "nvtx.h"

#define SR_WARMUP_MAX_CALLS 1000u
#define SR_WARMUP_STABLE 0.05 /* the last three warm-up calls within 5% of each other */
#define SR_WARMUP_PLAN_S 1.0  /* --warmup-time 0: calls that plan the timer stop after this */
#define SR_FLOOR_LAUNCHES 100u
/* NVML's energy counter lags and updates in steps of tens of milliseconds: on 100 ms samples an
 * A/A attributed 83 J to one side and 56 J to the other (H200). Energy is kept only from samples
 * this long. */
#define SR_ENERGY_MIN_SAMPLE_S 1.0

typedef struct measurer {
    sagerun_context *ctx;
    const sr_engine_options *eo;
    sr_entry *es;
    size_t n;
    sr_sample_timer *timer;
    sr_nvml *nvml;
    sr_measurement *m;
    sagerun_status lost; /* SAGERUN_CUDA once a variant lost the context */
    sagerun_error *err;
    double t_rounds;     /* when the rounds began (wall clock) */
    double violation_s;  /* NVML's throttle-violation time at the last sample's end */
} measurer;

/* ---- one sample -------------------------------------------------------------------------------- */

/* NVML queries take milliseconds: a cold 20 us sample with six of them around it spent ~10 ms
 * per sample in NVML (H200: ~200 rounds in 4 s). The energy counter is read only around samples
 * long enough to keep (the entry's last known per-call time tells), and the violation counter
 * once per sample: a sample is throttled when the counter grew since the previous one ended. */
static bool energy_worth_reading(const sr_entry *e, uint32_t calls)
{
    double call_s = e->timing.warm_call_s; /* 0 before the first warm-up call: read */
    return !(call_s > 0 && call_s * calls < SR_ENERGY_MIN_SAMPLE_S / 2);
}

static bool throttled_since_last(measurer *ms)
{
    double v = sr_nvml_violation_s(ms->nvml), before = ms->violation_s;
    ms->violation_s = v;
    return v > before; /* false while either is NaN */
}

/* One sample of K calls of an entry's instance k, with NVML around it; the entry fails on error. */
static bool take(measurer *ms, sr_entry *e, size_t k, uint32_t calls, const sr_timer_graph *g,
                 const char *phase, uint32_t round, sr_sample *out)
{
    sagerun_instance *inst = sr_entry_instance(e, k);
    const sagerun_compare_hooks *h = &ms->eo->hooks;
    sagerun_error e_err = {0};
    bool energy = energy_worth_reading(e, calls);
    double e0 = energy ? sr_nvml_energy_j(ms->nvml) : NAN;
    uint64_t out_bytes = 0, out_ptr = sagerun_instance_output(inst, &out_bytes);
    sr_sample_timer_set_output(ms->timer, out_ptr, out_bytes);
    double t0 = sr_hook_begin(h, e, phase, round, calls);
    sr_timed_sample ts;
    if (sr_sample_timer_take(ms->timer, sr_instance_call, inst, calls, g, &ts, &e_err) !=
        SAGERUN_OK)
        sr_entry_fail(e, &e_err, strcmp(phase, "run") ? "warm-up run" : "timed run", phase);
    bool lost = sr_entry_lost_context(ms->ctx, e, ms->err);
    sr_hook_end(h, e, phase, round, calls, t0, lost);
    if (lost)
        ms->lost = SAGERUN_CUDA;
    if (e->failed)
        return false;
    double e1 = energy ? sr_nvml_energy_j(ms->nvml) : NAN;
    if (ts.kernel_timed && isfinite(e->timing.launch_gap_s))
        ts.seconds += e->timing.launch_gap_s * calls; /* the clock of a hot batch (timer.h) */
    out->per_call_s = ts.seconds / calls;
    out->clock_mhz = ts.clock_mhz;
    out->throttled = throttled_since_last(ms);
    out->energy_j = e1 >= e0 && ts.seconds >= SR_ENERGY_MIN_SAMPLE_S ? (e1 - e0) / calls : NAN;
    e->timing.hold_timeouts += ts.hold_timed_out;
    if (isfinite(ts.host_s) && strcmp(phase, "run") == 0) {
        e->timing.host_s += ts.host_s;
        e->timing.host_calls += calls;
    }
    if (isfinite(out->energy_j)) {
        e->timing.energy_ok = true;
        e->timing.energy_j += out->energy_j * calls;
        e->timing.energy_s += ts.seconds;
        e->timing.energy_calls += calls;
    }
    return true;
}

static bool sampler_sample(void *user, size_t entry, size_t instance, size_t round,
                           sr_sample *out)
{
    measurer *ms = user;
    sr_entry *e = &ms->es[entry];
    if (e->failed)
        return false;
    return take(ms, e, instance, e->timing.calls_per_sample, sr_entry_graph(e, instance), "run",
                (uint32_t)round + 1, out);
}

static double sampler_now(void *user)
{
    (void)user;
    return sr_monotonic_seconds();
}

static bool sampler_stop(void *user)
{
    measurer *ms = user;
    return ms->lost != SAGERUN_OK || sr_hook_interrupted(&ms->eo->hooks);
}

static void sampler_round_done(void *user, size_t rounds, double half_width, double eta_s)
{
    measurer *ms = user;
    const sagerun_compare_options *o = &ms->eo->o;
    (void)half_width;
    if (!o->progress)
        return;
    double per_round = (sr_monotonic_seconds() - ms->t_rounds) / (double)rounds;
    uint32_t left = per_round > 0 ? (uint32_t)ceil(eta_s / per_round) : 0;
    o->progress(o->progress_user, "round", NULL, (uint32_t)rounds, (uint32_t)rounds + left);
}

/* ---- warm-up ------------------------------------------------------------------------------- */

static bool stable(const double *last3)
{
    double lo = fmin(last3[0], fmin(last3[1], last3[2]));
    double hi = fmax(last3[0], fmax(last3[1], last3[2]));
    return hi <= lo * (1.0 + SR_WARMUP_STABLE);
}

static bool warmup_done(const sagerun_compare_options *o, uint32_t calls, double elapsed,
                        const double *last3)
{
    /* fixed: the calls asked for, none for --warmup 0 (the report says what that leaves: no plan
     * of the timer, the first call in the first sample); timed: calls that plan the timer even for
     * --warmup-time 0 (with none, calls of 1 us were timed one per sample, and the first call read
     * 0 s): three, whose median plans it, or as many as SR_WARMUP_PLAN_S allows, one at least (a
     * first call of 17 us alone planned 1 us calls at K = 85, a cold call of 2 ms at K = 1) */
    if (o->schedule != SAGERUN_SCHEDULE_TIMED)
        return calls >= o->warmup;
    if (calls == 0)
        return false;
    if (o->warmup_s == 0)
        return calls >= 3 || elapsed >= SR_WARMUP_PLAN_S;
    if (calls >= SR_WARMUP_MAX_CALLS || elapsed >= 20 * o->warmup_s)
        return true;
    uint32_t need = last3[2] > 1.0 ? 2 : 3;
    return calls >= need && elapsed >= o->warmup_s && (need == 2 || stable(last3));
}

/* The first warm-up call of every instance of an entry, announced as one warm-up event of that
 * many calls: each is first contact (module loading, JIT), which a watchdog takes as such once per
 * entry (cli/isolate.c: the first warm-up event sets no yardstick; six 0.5 s first calls in events
 * of their own set a limit of 10 s for a later hang). out: the first instance's call. */
static bool first_contact(measurer *ms, sr_entry *e, sr_sample *out)
{
    const sagerun_compare_hooks *h = &ms->eo->hooks;
    sagerun_error e_err = {0};
    uint32_t n = (uint32_t)e->instances;
    double t0 = sr_hook_begin(h, e, "warmup", 0, n);
    *out = (sr_sample){.per_call_s = NAN, .clock_mhz = NAN, .energy_j = NAN};
    for (size_t k = 0; k < n && !e->failed; k++) {
        sagerun_instance *inst = sr_entry_instance(e, k);
        uint64_t bytes = 0, ptr = sagerun_instance_output(inst, &bytes);
        sr_timed_sample ts;
        sr_sample_timer_set_output(ms->timer, ptr, bytes);
        if (sr_sample_timer_take(ms->timer, sr_instance_call, inst, 1, NULL, &ts, &e_err) !=
            SAGERUN_OK)
            sr_entry_fail(e, &e_err, "warm-up run", "warmup");
        else if (k == 0)
            out->per_call_s = ts.seconds;
    }
    bool lost = sr_entry_lost_context(ms->ctx, e, ms->err);
    sr_hook_end(h, e, "warmup", 0, n, t0, lost);
    if (lost)
        ms->lost = SAGERUN_CUDA;
    return !e->failed;
}

/* The further instances (compare --instances): after their first contact, each makes as many
 * warm-up calls as the first did, at most SR_WARMUP_MORE_CALLS; none for --warmup 0, whose first
 * calls are timed, as the report warns. */
#define SR_WARMUP_MORE_CALLS 20u
static void warm_more(measurer *ms, sr_entry *e, uint32_t calls)
{
    uint32_t each = calls < SR_WARMUP_MORE_CALLS ? calls : SR_WARMUP_MORE_CALLS;
    sr_sample s;
    for (size_t k = 1; k < e->instances && !e->failed; k++)
        for (uint32_t c = 1; c < each && !sampler_stop(ms); c++) /* the first: first_contact */
            if (!take(ms, e, k, 1, NULL, "warmup", 0, &s))
                return;
}

/* Warm-up calls, one at a time, until warmup_done: the first call's time and the warmed per-call
 * time (median of the last three) are kept. */
static void warm_up(measurer *ms, sr_entry *e)
{
    const sagerun_compare_options *o = &ms->eo->o;
    double last3[3] = {NAN, NAN, NAN}, t0 = sr_monotonic_seconds();
    uint32_t calls = 0;
    e->timing.first_call_s = NAN; /* none made: null in the report, not 0 s */
    while (!e->failed && !warmup_done(o, calls, sr_monotonic_seconds() - t0, last3)) {
        if (sampler_stop(ms))
            return;
        sr_sample s;
        bool ok = calls == 0 && e->instances > 1 ? first_contact(ms, e, &s)
                                                 : take(ms, e, 0, 1, NULL, "warmup", 0, &s);
        if (!ok)
            return;
        if (calls++ == 0)
            e->timing.first_call_s = s.per_call_s;
        last3[0] = last3[1];
        last3[1] = last3[2];
        last3[2] = s.per_call_s;
        e->timing.warm_call_s = s.per_call_s; /* until warm-up ends: the last call's */
    }
    e->timing.warmup_calls = calls;
    warm_more(ms, e, calls);
    double sorted[3] = {last3[0], last3[1], last3[2]};
    int k = isfinite(sorted[0]) ? 3 : isfinite(sorted[1]) ? 2 : 1;
    double *v = sorted + 3 - k;
    e->timing.warm_call_s = k == 3   ? sr_median3(v[0], v[1], v[2])
                            : k == 2 ? (v[0] + v[1]) / 2
                                     : v[0];
}

/* ---- each entry's timer plan ----------------------------------------------------------------- */

/* Cold samples timed by kernel timestamps get the entry's launch gap added, measured here on
 * back-to-back calls of about a batch's length (at least 4 calls where they fit in 50 ms). */
static void plan_launch_gap(measurer *ms, sr_entry *e)
{
    sr_entry_timing *t = &e->timing;
    t->launch_gap_s = NAN;
    if (ms->eo->o.cache != SAGERUN_CACHE_COLD || e->failed)
        return;
    uint32_t calls = sr_timer_batch_for(t->warm_call_s, SR_TIMER_MIN_SAMPLE_S);
    if (calls < 4 && 4 * t->warm_call_s <= 0.05)
        calls = 4;
    sagerun_error e_err = {0};
    sr_nvtx_push("%s launch gap", e->label);
    /* the variant's code runs here too: announced as warm-up (three samples of `calls`), so that
     * a watchdog sees a hang in it and a crash is blamed on it */
    double t0 = sr_hook_begin(&ms->eo->hooks, e, "warmup", 0, 3 * calls);
    sagerun_status st = sr_sample_timer_launch_gap(ms->timer, sr_instance_call, e->inst, calls,
                                                   &t->launch_gap_s, &e_err);
    if (st != SAGERUN_OK)
        sr_entry_fail(e, &e_err, "launch gap", "warmup");
    bool lost = sr_entry_lost_context(ms->ctx, e, ms->err);
    sr_hook_end(&ms->eo->hooks, e, "warmup", 0, 3 * calls, t0, lost);
    sr_nvtx_pop();
    if (lost)
        ms->lost = SAGERUN_CUDA;
}

/* Every entry gets the same mode and K, resolved for the fastest call: each sample then lasts at
 * least the batch's minimum, and no entry's per-call time carries a different share of the
 * sample's fixed cost (an A/A with K = 77 against K = 76 differed by 0.01%). Except an entry whose
 * sample would last more than SR_SAMPLE_SPREAD times the fastest's: its K is cut to that (a 5 ms
 * variant beside a 1 us baseline took K = 908, 4.5 s per sample, and overran --max-time 9x); a
 * fixed cost's share is nothing beside a 10x difference. --batch K is kept as given. */
#define SR_SAMPLE_SPREAD 10.0
/* The graph of instance k of the entry (GRAPH mode), launched once. */
static void capture_graph(measurer *ms, sr_entry *e, size_t k)
{
    sr_entry_timing *t = &e->timing;
    sr_timer_graph **g = k == 0 ? &t->graph : &t->more_graphs[k - 1];
    sagerun_error e_err = {0};
    sr_sample s;
    sr_nvtx_push("%s graph capture", e->label);
    /* capturing runs the variant's host code K times: announced like a warm-up sample */
    double t0 = sr_hook_begin(&ms->eo->hooks, e, "warmup", 0, t->calls_per_sample);
    sagerun_status st = sr_timer_graph_capture(ms->timer, sr_instance_call,
                                               sr_entry_instance(e, k), t->calls_per_sample, g,
                                               &e_err);
    if (st != SAGERUN_OK)
        sr_entry_fail(e, &e_err, "graph timer", "warmup");
    bool lost = sr_entry_lost_context(ms->ctx, e, ms->err);
    sr_hook_end(&ms->eo->hooks, e, "warmup", 0, t->calls_per_sample, t0, lost);
    sr_nvtx_pop();
    if (lost)
        ms->lost = SAGERUN_CUDA;
    else if (st == SAGERUN_OK)
        take(ms, e, k, t->calls_per_sample, *g, "warmup", 0, &s); /* the graph's first launch */
}

static void plan_timer(measurer *ms, sr_entry *e, double fastest_call_s)
{
    const sagerun_compare_options *o = &ms->eo->o;
    sr_entry_timing *t = &e->timing;
    sr_timer_resolve((int)o->timer, (int)o->cache, fastest_call_s, &t->mode,
                     &t->calls_per_sample);
    double longest = SR_SAMPLE_SPREAD * fastest_call_s * t->calls_per_sample;
    if (t->calls_per_sample > 1 && t->warm_call_s * t->calls_per_sample > longest)
        t->calls_per_sample = (uint32_t)fmax(1.0, ceil(longest / t->warm_call_s));
    if (o->batch && (t->mode == SR_TIMER_BATCH || t->mode == SR_TIMER_GRAPH))
        t->calls_per_sample = o->batch;
    if (o->schedule == SAGERUN_SCHEDULE_SEED)
        t->calls_per_sample = 1; /* the seed timed every call */
    plan_launch_gap(ms, e);
    if (t->mode != SR_TIMER_GRAPH || e->failed)
        return;
    sagerun_error e_err = {0};
    if (e->info.backend == SAGERUN_BACKEND_CUDA &&
        !(e->info.flags & SAGERUN_VARIANT_GRAPH_CAPTURABLE)) {
        /* capturing a run that synchronises, allocates or uses a stream of its own fails or,
         * worse, replays something else than a call (plugin.h section 6) */
        sr_error_set(&e_err, SAGERUN_UNSUPPORTED,
                     "variant %s does not declare SAGERUN_VARIANT_GRAPH_CAPTURABLE (plugin ABI "
                     "1.1): its run may not be captured into a CUDA graph; use --timer batch",
                     e->info.name);
        sr_entry_fail(e, &e_err, "graph timer", "warmup");
        return;
    }
    for (size_t k = 0; k < e->instances && !e->failed && ms->lost == SAGERUN_OK; k++)
        capture_graph(ms, e, k);
}

static sagerun_status warm_and_plan(measurer *ms, bool *stop)
{
    const sagerun_compare_options *o = &ms->eo->o;
    double fastest = INFINITY;
    uint32_t fewest = UINT32_MAX;
    for (size_t i = 0; i < ms->n; i++) {
        sr_entry *e = &ms->es[i];
        if (e->failed)
            continue;
        if ((*stop = sampler_stop(ms)))
            return ms->lost;
        if (o->progress)
            o->progress(o->progress_user, "warmup", e->label, (uint32_t)i + 1, (uint32_t)ms->n);
        warm_up(ms, e);
        if (ms->lost != SAGERUN_OK)
            return ms->lost;
        if (e->failed && i == 0)
            return sr_error_set(ms->err, SAGERUN_VARIANT, "baseline %s", e->failure);
        if (!e->failed)
            fastest = fmin(fastest, e->timing.warm_call_s);
        if (!e->failed && e->timing.warmup_calls < fewest)
            fewest = e->timing.warmup_calls;
    }
    if (o->schedule == SAGERUN_SCHEDULE_TIMED && fewest != UINT32_MAX)
        ms->m->warmup_calls = fewest; /* the seed's "warmup": calls every variant had at least */
    for (size_t i = 0; i < ms->n && !*stop; i++) {
        if (!ms->es[i].failed)
            plan_timer(ms, &ms->es[i], fastest);
        if (ms->lost != SAGERUN_OK)
            return ms->lost;
        if (ms->es[i].failed && i == 0)
            return sr_error_set(ms->err, SAGERUN_VARIANT, "baseline %s", ms->es[i].failure);
    }
    return SAGERUN_OK;
}

/* ---- the rounds ------------------------------------------------------------------------------ */

/* The schedule's plan from the options; the order's random row shifts from a fresh seed. */
static void plan_schedule(const measurer *ms, sr_schedule_plan *p)
{
    const sagerun_compare_options *o = &ms->eo->o;
    double slowest = 0;
    for (size_t i = 0; i < ms->n; i++)
        if (!ms->es[i].failed)
            slowest = fmax(slowest, ms->es[i].timing.warm_call_s *
                                        ms->es[i].timing.calls_per_sample);
    if (o->schedule == SAGERUN_SCHEDULE_TIMED) {
        sr_schedule_plan_timed((int)o->order, slowest, o->max_time_s, o->target_precision_percent,
                               p);
        p->min_rounds = o->min_rounds;
        p->max_rounds = o->max_rounds;
    } else {
        memset(p, 0, sizeof(*p));
        p->order = o->schedule == SAGERUN_SCHEDULE_SEED ? SR_ORDER_ROTATE : (int)o->order;
        p->samples_per_round = o->iterations;
        p->min_rounds = p->max_rounds = o->rounds;
        p->exact_rounds = true;
        if (o->schedule == SAGERUN_SCHEDULE_FIXED) {
            p->max_redos = o->rounds / 4 + 1;
            p->clock_drop = SR_SCHEDULE_CLOCK_DROP;
        }
    }
    p->order_seed = (uint64_t)randombytes_random() << 32 | randombytes_random();
    p->instances = (uint32_t)sr_compare_instances(o);
}

static void open_clocks(measurer *ms)
{
    sr_measurement *m = ms->m;
    m->max_sm_clock_mhz = -1;
    sr_nvtx_push("launch floor");
    m->launch_floor_s = sr_sample_timer_launch_floor(ms->timer, SR_FLOOR_LAUNCHES);
    sr_nvtx_pop();
    m->flush_bytes = sr_sample_timer_flush_bytes(ms->timer);
    m->sample_clock = sr_sample_timer_clock(ms->timer);
    if (sagerun_context_backend(ms->ctx) != SAGERUN_BACKEND_CUDA) {
        snprintf(m->clock_unavailable, sizeof(m->clock_unavailable), "host backend");
        return;
    }
    if (ms->eo->o.flags & SAGERUN_COMPARE_NO_CLOCKS) {
        snprintf(m->clock_unavailable, sizeof(m->clock_unavailable), "not asked for");
        return;
    }
    ms->nvml = sr_nvml_open(ms->ctx->device, m->clock_unavailable, sizeof(m->clock_unavailable));
    m->nvml = ms->nvml != NULL;
    m->max_sm_clock_mhz = sr_nvml_max_sm_clock(ms->nvml);
}

sagerun_status sr_measure_warmup(sagerun_context *ctx, const sr_engine_options *eo,
                                 sr_entry *es, size_t n, sr_measurement *m, bool *stop,
                                 sagerun_error *err)
{
    measurer ms = {.ctx = ctx, .eo = eo, .es = es, .n = n, .m = m, .err = err};
    m->schedule_name = sr_schedule_name((int)eo->o.schedule);
    m->warmup_calls = eo->o.schedule == SAGERUN_SCHEDULE_TIMED ? 0 : eo->o.warmup;
    sagerun_status st = sr_sample_timer_create(ctx, (int)eo->o.cache, &ms.timer, err);
    if (st != SAGERUN_OK)
        return st;
    m->timer = ms.timer;
    open_clocks(&ms);
    m->nvml_handle = ms.nvml;
    ms.violation_s = sr_nvml_violation_s(ms.nvml);
    return warm_and_plan(&ms, stop);
}

sagerun_status sr_measure_rounds(sagerun_context *ctx, const sr_engine_options *eo, sr_entry *es,
                                 size_t n, sr_measurement *m, bool *stop, sagerun_error *err)
{
    measurer ms = {.ctx = ctx, .eo = eo, .es = es, .n = n, .m = m, .err = err,
                   .timer = m->timer, .nvml = m->nvml_handle};
    sr_schedule_plan plan;
    plan_schedule(&ms, &plan);
    sr_sampler s = {.user = &ms, .sample = sampler_sample, .now = sampler_now,
                    .stop = sampler_stop, .round_done = sampler_round_done};
    ms.t_rounds = sr_monotonic_seconds();
    ms.violation_s = sr_nvml_violation_s(ms.nvml);
    sagerun_status st = SAGERUN_OK;
    if (!sr_schedule_run(&plan, n, &s, &m->sched))
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory (samples)");
    else if (ms.lost != SAGERUN_OK)
        st = ms.lost;
    else if (m->sched.end == SR_SCHEDULE_BASELINE)
        st = sr_error_set(err, SAGERUN_VARIANT, "baseline %s", es[0].failure);
    *stop = st == SAGERUN_OK && m->sched.end == SR_SCHEDULE_STOPPED;
    return st;
}

void sr_measurement_free(sr_measurement *m, sr_entry *es, size_t n)
{
    for (size_t i = 0; es && i < n; i++) {
        sr_timer_graph_destroy(es[i].timing.graph);
        es[i].timing.graph = NULL;
        for (size_t k = 0; k < SR_INSTANCES_MAX - 1; k++) {
            sr_timer_graph_destroy(es[i].timing.more_graphs[k]);
            es[i].timing.more_graphs[k] = NULL;
        }
    }
    sr_schedule_result_free(&m->sched);
    sr_nvml_close(m->nvml_handle);
    sr_sample_timer_destroy(m->timer);
    m->nvml_handle = NULL;
    m->timer = NULL;
}
