/* Report assembly (engine.h): the report of a comparison from what the stages measured — the
 * header, each variant's timings, checks and timing plan, the judgement, and the warnings a
 * careful reader would want (throttling, outliers, noise, a slow first call, low clocks). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "judge.h"

#ifndef SAGERUN_GIT_COMMIT
#define SAGERUN_GIT_COMMIT "unknown"
#endif

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        snprintf(buf, len, "unknown");
}

static void fill_header(sr_report *rep, sagerun_context *ctx, const sagerun_inputs *in,
                        const sagerun_compare_options *o)
{
    const sagerun_problem *p = &in->problem;
    rep->has_ext = true;
    rep->schema_version = SAGERUN_REPORT_SCHEMA_VERSION;
    rep->source_commit = strdup(SAGERUN_GIT_COMMIT);
    rep->tool_version = strdup(sagerun_version_string());
    rep->tool_commit = strdup(SAGERUN_GIT_COMMIT);
    char now[32];
    utc_now(now, sizeof(now));
    rep->created_utc = strdup(now);
    /* q's shape as stored: [B, N, H, D] for NHD (the seed's), [B, H, N, D] for HND. */
    rep->q_shape_len = 4;
    rep->q_shape[0] = p->batch;
    rep->q_shape[1] = p->layout == SAGERUN_LAYOUT_HND ? p->heads_q : p->seq_len;
    rep->q_shape[2] = p->layout == SAGERUN_LAYOUT_HND ? p->seq_len : p->heads_q;
    rep->q_shape[3] = p->head_dim;
    rep->rounds = o->rounds;
    rep->warmup = o->warmup;
    rep->iterations = o->iterations;
    rep->has_problem = true;
    rep->problem = *p;
    rep->problem.sm_scale = sagerun_problem_sm_scale(p);
    sagerun_sequences seq = {.struct_size = sizeof seq};
    if (sagerun_inputs_sequences(in, &seq, NULL) != SAGERUN_OK ||
        !sr_report_set_sequences(rep, &seq))
        sr_report_add_warning(rep, "the sequence lengths could not be recorded: TOPS count each "
                                   "sequence as seq_len queries and kv_len keys");
    rep->noise_threshold_percent = o->noise_threshold_percent;
    rep->expect_sha256 = o->expect_sha256 ? strdup(o->expect_sha256) : NULL;
    if (rep->expect_sha256)
        for (char *c = rep->expect_sha256; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
    rep->backend = strdup(sagerun_backend_name(sagerun_context_backend(ctx)));
    rep->compute_capability = rep->driver_version = rep->multiprocessors = -1;
    rep->max_sm_clock_mhz = -1;
    sagerun_device_info di = {.struct_size = sizeof(di)};
    if (sagerun_context_device_info(ctx, &di, NULL) == SAGERUN_OK) {
        rep->device_name = strdup(di.name);
        if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_CUDA) {
            /* GPU fields only for a GPU: the host's would be 0 and its core count */
            rep->compute_capability = di.compute_capability;
            rep->driver_version = di.driver_version;
            rep->multiprocessors = di.multiprocessors;
            char release[96];
            if (sr_nvml_driver_release(release, sizeof release))
                rep->driver_release = strdup(release);
            char pci[32], uuid[96];
            if (sr_context_pci_bus_id(ctx, pci, sizeof pci)) {
                rep->pci_bus_id = strdup(pci);
                if (sr_nvml_uuid_by_pci(pci, uuid, sizeof uuid))
                    rep->device_uuid = strdup(uuid);
            }
        }
    }
}

static const char *end_name(int end)
{
    static const char *const names[] = {"rounds", "precision", "budget", "stopped", "baseline"};
    return end >= 0 && end < (int)SR_ARRAY_LEN(names) ? names[end] : "rounds";
}

static void fill_measurement(sr_report *rep, const sr_engine_options *eo, const sr_measurement *m)
{
    sr_measurement_info *mi = &rep->measurement;
    const sagerun_compare_options *o = &eo->o;
    mi->present = true;
    snprintf(mi->schedule, sizeof(mi->schedule), "%s",
             m->schedule_name ? m->schedule_name : "none");
    snprintf(mi->order, sizeof(mi->order), "%s",
             sr_order_name(o->schedule == SAGERUN_SCHEDULE_SEED ? SR_ORDER_ROTATE : (int)o->order));
    snprintf(mi->cache, sizeof(mi->cache), "%s", sr_cache_mode_name((int)o->cache));
    snprintf(mi->end, sizeof(mi->end), "%s", end_name(m->sched.end));
    bool timed = o->schedule == SAGERUN_SCHEDULE_TIMED;
    mi->min_rounds = timed ? o->min_rounds : o->rounds;
    /* timed: the maximum the schedule kept (whole periods of the order) */
    mi->max_rounds = !timed ? o->rounds : m->sched.max_rounds ? (uint32_t)m->sched.max_rounds
                                                              : o->max_rounds;
    if (mi->min_rounds > mi->max_rounds)
        mi->min_rounds = mi->max_rounds;
    /* said where the user gave --max-rounds (the default 2000 is no promise of theirs) */
    size_t period = sr_order_period((int)o->order, m->sched.entries);
    if (timed && o->max_rounds < period)
        sr_report_add_warning(rep, "--max-rounds %u is less than one period of the %s order (%zu "
                                   "rounds): the order is not balanced over them",
                              o->max_rounds, mi->order, period);
    else if (timed && m->sched.max_rounds && m->sched.max_rounds != o->max_rounds &&
             o->max_rounds != SR_SCHEDULE_MAX_ROUNDS)
        sr_report_add_warning(rep, "--max-rounds %u is not a whole number of periods of the %s "
                                   "order: at most %zu rounds",
                              o->max_rounds, mi->order, m->sched.max_rounds);
    mi->target_half_width = timed ? o->target_precision_percent : NAN;
    mi->max_time_s = timed ? o->max_time_s : NAN;
    mi->elapsed_s = m->sched.elapsed_s;
    mi->half_width = sr_schedule_half_width(&m->sched);
    if (!isfinite(mi->half_width))
        mi->half_width = NAN;
    mi->redone = m->sched.redone;
    mi->redone_clock = m->sched.redone_clock;
    mi->redone_throttle = m->sched.redone_throttle;
    mi->launch_floor_s = m->launch_floor_s;
    mi->flush_bytes = m->flush_bytes;
    mi->instances = (uint32_t)m->sched.instances;
    snprintf(mi->sample_clock, sizeof(mi->sample_clock), "%s",
             m->sample_clock ? m->sample_clock : "");
    if (strcmp(mi->order, "interleave") == 0)
        snprintf(mi->order_seed, sizeof(mi->order_seed), "%016llx",
                 (unsigned long long)m->sched.order_seed);
    /* the seed's keys: what was asked for (fixed, seed) or what ran (timed) */
    rep->rounds = timed ? m->sched.rounds : o->rounds;
    rep->iterations = m->sched.per_round;
    rep->warmup = m->warmup_calls;
}

/* ---- one variant ----------------------------------------------------------------------------- */

static void fill_timings(sr_report_variant *v, const sr_schedule_result *sc, size_t e)
{
    size_t R = sc->rounds, I = sc->per_round;
    const double *samples = sr_schedule_entry_samples(sc, e);
    sr_summarize(samples, R * I, NULL, &v->timing);
    if ((v->rounds = calloc(R ? R : 1, sizeof(*v->rounds)))) {
        v->round_count = R;
        for (size_t r = 0; r < R; r++)
            sr_summarize(samples + r * I, I, NULL, &v->rounds[r]);
    }
    if ((v->samples = malloc((R * I > 0 ? R * I : 1) * sizeof(double)))) {
        memcpy(v->samples, samples, R * I * sizeof(double));
        v->sample_rounds = R;
        v->samples_per_round = I;
    }
}

static void fill_how(sr_variant_timing *t, const sr_entry *e, const sr_schedule_result *sc,
                     size_t index)
{
    const sr_entry_timing *et = &e->timing;
    t->present = true;
    /* a host variant's single call is timed by the host's monotonic clock: no event is involved,
     * and the report names the timer it used (it said "event" under "timed by host clock") */
    bool host = e->info.backend != SAGERUN_BACKEND_CUDA && et->mode == SR_TIMER_EVENT;
    snprintf(t->timer, sizeof(t->timer), "%s", host ? "host" : sr_timer_mode_name(et->mode));
    t->calls_per_sample = et->calls_per_sample;
    t->warmup_calls = et->warmup_calls;
    t->first_call_s = et->first_call_s;
    t->warm_call_s = et->warm_call_s;
    t->hold_timeouts = et->hold_timeouts;
    t->host_call_s = et->host_calls ? et->host_s / (double)et->host_calls : NAN;
    t->launch_gap_s = et->launch_gap_s;
    size_t cells = sc->rounds * sc->per_round;
    const double *clocks = sc->clocks + index * sc->capacity_rounds * sc->per_round;
    t->clock_mhz = sr_median_finite(clocks, cells, NULL);
    t->energy_per_call_j = et->energy_ok && et->energy_calls
                               ? et->energy_j / (double)et->energy_calls : NAN;
    t->mean_power_w = et->energy_ok && et->energy_s > 0 ? et->energy_j / et->energy_s : NAN;
}

static void fill_variant(sr_report_variant *v, const sr_entry *e, size_t index,
                         const sr_schedule_result *sc)
{
    v->name = strdup(e->info.name);
    v->label = strdup(e->label);
    v->path = sr_strdup_or_null(e->info.path);
    v->version = sr_strdup_or_null(e->info.version);
    v->backend = sr_strdup_or_null(sagerun_backend_name(e->info.backend));
    v->plugin_sha256 = e->info.sha256[0] ? strdup(e->info.sha256) : NULL;
    v->extension_path = sr_strdup_or_null(e->info.extension_path);
    v->extension_sha256 = e->info.extension_path ? strdup(e->info.extension_sha256) : NULL;
    v->failure = e->failed ? strdup(e->failure) : NULL;
    v->failure_phase = e->failed && e->failure_phase[0] ? strdup(e->failure_phase) : NULL;
    v->is_baseline = index == 0;
    /* CTAs; a variant without a geometry of its own (a Python one) has none */
    v->has_scheduler = e->has_geometry && e->info.backend == SAGERUN_BACKEND_CUDA &&
                       e->geometry.threads_per_cta > 0;
    v->scheduler = e->geometry;
    v->prepare_s = e->prepared ? e->prepare_s : NAN;
    v->tops = v->speedup_percent = NAN;
    v->byte_exact = v->deterministic = -1;
    v->tolerance.passed = -1; /* judged by tolerance.c, where limits were given */
    v->how.seed_speedup_percent = NAN;
    if (e->failed || sc->rounds == 0 || sc->dropped[index]) {
        sr_summarize(NULL, 0, NULL, &v->timing);
        return;
    }
    fill_timings(v, sc, index);
    fill_how(&v->how, e, sc, index);
    v->output_sha256 = strdup(e->check.first_sha);
    v->last_output_sha256 = strdup(e->check.last_sha);
    v->deterministic = strcmp(e->check.first_sha, e->check.last_sha) == 0;
    v->byte_diff = e->check.diff;
    v->accuracy = e->check.accuracy;
}

/* Energy per call, paired per round against the baseline (positive: less energy), where both
 * sides have energy readings (samples of a second or more: measure.c). */
static void energy_intervals(sr_report *rep, const sr_schedule_result *sc)
{
    size_t R = sc->rounds;
    double *b = malloc((R ? R : 1) * 2 * sizeof(double));
    if (!b || R < 2 || !rep->variants[0].how.present ||
        !isfinite(rep->variants[0].how.energy_per_call_j)) {
        free(b);
        return;
    }
    double *x = b + R;
    sr_schedule_round_energy(sc, 0, b);
    for (size_t i = 1; i < rep->variant_count; i++) {
        if (!rep->variants[i].how.present || !isfinite(rep->variants[i].how.energy_per_call_j))
            continue;
        sr_schedule_round_energy(sc, i, x);
        rep->variants[i].how.energy_interval = sr_paired_speedup_interval(b, x, R);
    }
    free(b);
}

/* ---- warnings --------------------------------------------------------------------------------- */

static size_t samples_of(const sr_report_variant *v)
{
    return v->sample_rounds * v->samples_per_round;
}

/* Whether variant i's outliers are its own (judge.h: sr_judge_slow_mode) against the baseline, or
 * for the baseline against some variant judged against it. */
static bool slow_mode_of(const sr_report *rep, size_t i)
{
    const sr_report_variant *v = &rep->variants[i];
    for (size_t k = 0; k < rep->variant_count; k++) {
        const sr_report_variant *o = &rep->variants[k];
        if (k != i && (i == 0 || k == 0) && o->how.present &&
            sr_judge_slow_mode(v->samples, samples_of(v), o->samples, samples_of(o)))
            return true;
    }
    return false;
}

static void outlier_warning(sr_report *rep, size_t i, size_t outliers)
{
    const sr_report_variant *v = &rep->variants[i];
    const char *l = v->label ? v->label : v->name;
    if (!slow_mode_of(rep, i)) {
        sr_report_add_warning(rep, "%s: %zu of %zu samples are outliers (beyond 10 robust "
                                   "standard deviations): other load on the machine? The "
                                   "trimmed interval discounts them",
                              l, outliers, samples_of(v));
        return;
    }
    sr_report_add_warning(rep, "%s: %zu of %zu samples are outliers (beyond 10 robust standard "
                               "deviations), far more than the %s taken between them: a slow mode "
                               "of its own, not load on the machine (mean %.3g ms, %.2fx its "
                               "median). The medians leave it out: a verdict the means do not "
                               "tell too reads ambiguous",
                          l, outliers, samples_of(v), i == 0 ? "variants'" : "baseline's",
                          v->timing.mean * 1e3, v->timing.mean / v->timing.p50);
}

/* A variant whose speedup drifted during the run (judge.h: sr_judge_drift, set by judge_all). */
static void drift_warning(sr_report *rep, size_t i)
{
    const sr_report_variant *v = &rep->variants[i];
    if (!v->drift.found)
        return;
    sr_report_add_warning(rep, "%s: its speedup drifted during the run, from %+.1f%% in the first "
                               "third of the rounds to %+.1f%% in the last (rank correlation with "
                               "time %+.2f): the interval takes the rounds as draws of one ratio, "
                               "so it holds for a run of this length only%s",
                          v->label ? v->label : v->name, v->drift.first_percent,
                          v->drift.last_percent, v->drift.rank_correlation,
                          sr_drift_splits_verdict(&v->drift, rep->noise_threshold_percent)
                              ? "; the two thirds tell different verdicts, so it reads ambiguous"
                              : "");
}

static void variant_warnings(sr_report *rep, size_t index, double floor_s)
{
    const sr_report_variant *v = &rep->variants[index];
    const char *l = v->label ? v->label : v->name;
    const sr_variant_timing *t = &v->how;
    double cv;
    size_t outliers = sr_outliers(v->samples, samples_of(v), &cv);
    if (outliers)
        outlier_warning(rep, index, outliers);
    drift_warning(rep, index);
    if (cv > 0.05)
        sr_report_add_warning(rep, "%s is noisy: its samples spread by %.1f%% (robust sd / "
                                   "median)",
                              l, cv * 100);
    if (t->warmup_calls == 0)
        sr_report_add_warning(rep, "%s: no warm-up call (--warmup 0): no call's time planned the "
                                   "timer (%u call(s) per sample), and the first timed sample holds "
                                   "the first call's one-time costs",
                              l, t->calls_per_sample);
    if (t->warmup_calls > 1 && t->first_call_s > 3 * t->warm_call_s && t->first_call_s > 1e-3)
        sr_report_add_warning(rep, "%s: the first call took %.3g ms, %.0fx a warmed call (one-"
                                   "time costs, left out of the timing)",
                              l, t->first_call_s * 1e3, t->first_call_s / t->warm_call_s);
    if (isfinite(t->clock_mhz) && rep->max_sm_clock_mhz > 0 &&
        t->clock_mhz < 0.97 * rep->max_sm_clock_mhz)
        sr_report_add_warning(rep, "%s ran at %.0f MHz (median SM clock), below the device's "
                                   "maximum %d MHz",
                              l, t->clock_mhz, rep->max_sm_clock_mhz);
    if (t->hold_timeouts)
        sr_report_add_warning(rep, "%s: in %u samples the stream could not be held while the "
                                   "calls were queued: those samples include launch cost",
                              l, t->hold_timeouts);
    if (isfinite(floor_s) && t->warm_call_s < 3 * floor_s && t->calls_per_sample == 1)
        sr_report_add_warning(rep, "%s: a call (%.3g us) is within 3x the launch floor (%.3g "
                                   "us): use --timer batch or graph",
                              l, t->warm_call_s * 1e6, floor_s * 1e6);
    if (isfinite(t->seed_speedup_percent))
        sr_report_add_warning(rep, "%s: the seed's ratio of p50s (%+.3f%%) lies outside the "
                                   "paired interval [%+.3f, %+.3f]; the headline is the paired "
                                   "estimate",
                              l, t->seed_speedup_percent, v->interval.low, v->interval.high);
}

bool sr_cold_offset_warned(const char *cache, const char *sample_clock, double fastest_call_s)
{
    return cache && strcmp(cache, "cold") == 0 && sample_clock && *sample_clock &&
           strcmp(sample_clock, "host monotonic clock") != 0 &&
           fastest_call_s < SR_COLD_INSTANCE_OFFSET_CALL_S;
}

static double fastest_warm_call(const sr_report *rep)
{
    double fastest = INFINITY;
    for (size_t i = 0; i < rep->variant_count; i++)
        if (rep->variants[i].how.warm_call_s > 0) /* a variant that failed first has none */
            fastest = fmin(fastest, rep->variants[i].how.warm_call_s);
    return fastest;
}

/* Several variants judged against one baseline, each interval at 95%: the chance that one of k
 * A/As reads other than "same" by luck is up to 1 - 0.95^k (18.5% for four), said rather than
 * hidden. The intervals are not widened for it (Bonferroni's would cost each variant's MDE). */
static void family_warning(sr_report *rep)
{
    size_t k = 0;
    for (size_t i = 0; i < rep->variant_count; i++)
        k += !rep->variants[i].is_baseline && rep->variants[i].interval.valid;
    if (k >= 2)
        sr_report_add_warning(rep, "%zu variants judged against one baseline, each interval at "
                                   "95%%: if none differed, the chance that one of them still "
                                   "reads other than same is up to %.1f%%; a lone difference "
                                   "among them needs a run of its own to stand",
                              k, 100.0 * (1.0 - pow(0.95, (double)k)));
}

static void run_warnings(sr_report *rep, const sr_measurement *m)
{
    const sr_measurement_info *mi = &rep->measurement;
    if (mi->instances <= 1 &&
        sr_cold_offset_warned(mi->cache, mi->sample_clock, fastest_warm_call(rep)))
        sr_report_add_warning(rep, "cold samples of calls under %.0f us on one instance of each "
                                   "variant: two instances of one variant have differed by up to "
                                   "0.6%% for a whole process on an H200, an offset the interval "
                                   "sees only with several (--instances); a difference below 1%% "
                                   "here needs an A/A (--baseline V --variant V) and repeated "
                                   "processes to stand",
                              SR_COLD_INSTANCE_OFFSET_CALL_S * 1e6);
    family_warning(rep);
    if (mi->redone_clock)
        sr_report_add_warning(rep, "%u round(s) redone: a variant's SM clock fell more than 3%% "
                                   "below the run's median",
                              mi->redone_clock);
    if (mi->redone_throttle)
        sr_report_add_warning(rep, "%u round(s) redone: the GPU reported power or thermal "
                                   "throttling during them",
                              mi->redone_throttle);
    if (m->sched.end == SR_SCHEDULE_BUDGET && isfinite(mi->target_half_width) &&
        mi->target_half_width > 0 && !(mi->half_width <= mi->target_half_width))
        sr_report_add_warning(rep, "the budget (%.3g s) ran out before the target precision: "
                                   "half-width %.3f points, target %.3f (--max-time, "
                                   "--target-precision)",
                              mi->max_time_s, mi->half_width, mi->target_half_width);
    bool timed = isfinite(mi->max_time_s);
    if (timed && m->sched.end == SR_SCHEDULE_ROUNDS && mi->target_half_width > 0 &&
        !(mi->half_width <= mi->target_half_width))
        sr_report_add_warning(rep, "the rounds reached --max-rounds (%u) before the target "
                                   "precision: half-width %.3f points, target %.3f",
                              mi->max_rounds, mi->half_width, mi->target_half_width);
    if (m->sched.end == SR_SCHEDULE_BUDGET && rep->rounds_completed < mi->min_rounds)
        sr_report_add_warning(rep, "the budget (%.3g s) ended the rounds at %zu, below "
                                   "--min-rounds %u: the interval rests on few rounds "
                                   "(--max-time)",
                              mi->max_time_s, rep->rounds_completed, mi->min_rounds);
    if (timed && mi->max_time_s > 0 && mi->elapsed_s > 1.25 * mi->max_time_s)
        sr_report_add_warning(rep, "the rounds took %.3g s, over the budget of %.3g s: the "
                                   "schedule ends only after a whole period of the order (%zu "
                                   "rounds of every variant's sample), and these were long",
                              mi->elapsed_s, mi->max_time_s,
                              sr_order_period(sr_order_parse(mi->order), m->sched.entries));
    if (rep->rounds_completed == 1 && rep->variant_count > 1)
        sr_report_add_warning(rep, "one round gives no interval: use 2 rounds or more for a "
                                   "verdict");
}

/* Per-round SM clocks, the median of the probe over every sample of the round. */
static void fill_clocks(sr_report *rep, const sr_measurement *m)
{
    const sr_schedule_result *sc = &m->sched;
    rep->max_sm_clock_mhz = m->max_sm_clock_mhz;
    if (!m->nvml && m->clock_unavailable[0])
        rep->clock_unavailable = strdup(m->clock_unavailable);
    size_t per = sc->entries * sc->per_round;
    double *tmp = malloc((per ? per : 1) * sizeof(double));
    if (!tmp || !sc->rounds || (rep->backend && strcmp(rep->backend, "host") == 0))
        goto out;
    rep->clock_source = strdup(m->nvml ? "device clock probe; nvml" : "device clock probe");
    rep->clock_rounds = calloc(sc->rounds, sizeof(*rep->clock_rounds));
    for (size_t r = 0; rep->clock_rounds && r < sc->rounds; r++) {
        for (size_t e = 0; e < sc->entries; e++)
            memcpy(tmp + e * sc->per_round,
                   sc->clocks + (e * sc->capacity_rounds + r) * sc->per_round,
                   sc->per_round * sizeof(double));
        double mhz = sr_median_finite(tmp, per, NULL);
        rep->clock_rounds[r] = (sr_clock_sample){.sm_clock_mhz = isfinite(mhz) ? (int)lround(mhz)
                                                                               : -1,
                                                 .temperature_c = -1};
        rep->clock_round_count = r + 1;
    }
out:
    free(tmp);
}

/* ---- the report -------------------------------------------------------------------------------- */

static void fill_checks(sr_report *rep, const sr_entry *es, size_t n, bool have_rounds)
{
    rep->reference_sha256 = rep->expect_sha256              ? strdup(rep->expect_sha256)
                            : es[0].check.first_sha[0] && have_rounds ? strdup(es[0].check.first_sha)
                                                                    : NULL;
    for (size_t i = 0; i < n; i++) {
        sr_report_variant *v = &rep->variants[i];
        if (es[i].failed || !have_rounds || !v->timing.count)
            continue;
        v->byte_exact = v->deterministic == 1 && rep->reference_sha256 &&
                        strcmp(es[i].check.first_sha, rep->reference_sha256) == 0;
        if (v->deterministic == 0)
            sr_report_add_warning(rep, "%s is not deterministic: two runs gave different outputs",
                                  es[i].label);
    }
}

static void judge_all(sr_report *rep, const sr_measurement *m, double threshold)
{
    sr_judge_report(rep, threshold, false);
    for (size_t i = 1; i < rep->variant_count; i++) {
        sr_report_variant *v = &rep->variants[i];
        if (v->interval.valid && isfinite(v->speedup_percent) &&
            (v->speedup_percent < v->interval.low || v->speedup_percent > v->interval.high))
            v->how.seed_speedup_percent = v->speedup_percent;
    }
    energy_intervals(rep, &m->sched);
    for (size_t i = 0; i < rep->variant_count; i++)
        if (rep->variants[i].how.present)
            variant_warnings(rep, i, m->launch_floor_s);
    run_warnings(rep, m);
}

sagerun_status sr_assemble_report(sr_report *rep, sagerun_context *ctx, const sagerun_inputs *in,
                                  const sr_engine_options *eo, const sr_entry *es, size_t n,
                                  const sr_measurement *m, bool stopped, sagerun_error *err)
{
    fill_header(rep, ctx, in, &eo->o);
    fill_measurement(rep, eo, m);
    rep->rounds_completed = m->sched.rounds;
    rep->incomplete = stopped;
    if (stopped) /* also when stopped before the rounds, which never ended them */
        snprintf(rep->measurement.end, sizeof(rep->measurement.end), "%s", end_name(SR_SCHEDULE_STOPPED));
    if (!(rep->variants = calloc(n ? n : 1, sizeof(*rep->variants))))
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    rep->variant_count = n;
    for (size_t i = 0; i < n; i++)
        fill_variant(&rep->variants[i], &es[i], i, &m->sched);
    rep->has_scheduler = es[0].has_geometry && es[0].info.backend == SAGERUN_BACKEND_CUDA &&
                         es[0].geometry.threads_per_cta > 0;
    rep->scheduler = es[0].geometry;
    fill_checks(rep, es, n, m->sched.rounds > 0);
    fill_clocks(rep, m);
    judge_all(rep, m, eo->o.noise_threshold_percent);
    if (stopped)
        sr_report_add_warning(rep, "interrupted after %zu rounds: the report holds the rounds "
                                   "finished; byte differences and accuracy were not measured, "
                                   "the last output hash is that of the latest call",
                              m->sched.rounds);
    return SAGERUN_OK;
}
