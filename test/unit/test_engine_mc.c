/* Monte-Carlo of the measurement engine: the shipped schedule (schedule.h), the timer's choice of
 * calls per sample (timer.h) and the judgement (judge.h) — the real functions — driven by a
 * simulated device under five noise models:
 *   quiet    100 ms calls, 0.1% per-call noise (the H200's within-round spread on the seed
 *            workload: robust sd 0.02..0.14%, median 0.09%, test/bench/issue6);
 *   drift    quiet + a linear drift of 2.6% over 10 s;
 *   shift    quiet + a 0.9% level shift for 0.5 s starting inside some round;
 *   spikes   quiet + 2% of samples slowed by 2..30%;
 *   launch   10 us calls with 1% device jitter; timed per call without the hold kernel (the
 *            seed's timer), the host's launch cost adds -24%..+28% to each call; with the hold it
 *            is not timed.
 * Asserted, for the default schedule (six instances a side): A/A "faster" or "slower" in under
 * 0.1% of runs; the A/A interval holds the truth, 0, in >= 93% (95% nominal); the smallest true
 * speedup called "faster" in >= 80% of runs is <= 1.15% (100 ms models) and <= 1.5% (10 us); the
 * headline lies inside its interval. Per-instance offsets: test_instance_offsets. The seed
 * schedule (rotate, 3 + 5 x 10, one call per sample) is simulated beside it for the table
 * (SAGERUN_MC_TABLE=1 prints it; SAGERUN_MC_RUNS sets the A/A runs per cell, default 20000). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "schedule.h"
#include "timer.h"

typedef struct model {
    const char *name;
    double t;           /* true per-call seconds of the baseline */
    double sigma;       /* per-call relative noise (device) */
    double drift_per_s; /* relative drift per second */
    double shift;       /* relative level shift ... */
    double shift_len_s; /* ... lasting this long */
    double spike_p;     /* probability of a slowed sample */
    bool launch;        /* launch-dominated: the host's launch cost is timed without the hold */
    double max_speedup; /* the bar: smallest speedup called faster in 80% */
    double place_sd;    /* a factor per place of a sample in the sequence modulo 4, N(0, place_sd)
                         * drawn once per comparison (cold us samples on an H200) */
    bool cold;          /* one call per sample */
    uint32_t max_rounds; /* 0: the default plan's */
    double instance_sd; /* a factor per instance, N(0, instance_sd), drawn once per comparison:
                         * two instances of one variant differ for a whole process (us kernels) */
} model;

static const model models[] = {
    {"quiet", 0.1, 0.001, 0, 0, 0, 0, false, 1.15, 0, false, 0, 0},
    {"drift 2.6%", 0.1, 0.001, 0.0026, 0, 0, 0, false, 1.15, 0, false, 0, 0},
    {"shift 0.9%", 0.1, 0.001, 0, 0.009, 0.5, 0, false, 1.15, 0, false, 0, 0},
    {"spikes", 0.1, 0.001, 0, 0, 0, 0.02, false, 1.15, 0, false, 0, 0},
    {"launch 10us", 10e-6, 0.01, 0, 0, 0, 0, true, 1.5, 0, false, 0, 0},
};

/* ---- the simulated device -------------------------------------------------------------------- */

typedef struct sim {
    const model *m;
    double speedup; /* true, percent: the variant's call takes t / (1 + speedup/100) */
    bool seed;      /* the seed's schedule and timer */
    uint64_t rng;
    double now, shift_at;
    uint32_t k;     /* calls per sample */
    double place[4]; /* place_sd: this comparison's factors */
    uint64_t index;  /* samples taken in this comparison */
    uint32_t instances; /* per entry (the engine's default unless a test says) */
    double offset[2][SR_INSTANCES_MAX]; /* instance_sd: this comparison's factors per entry */
} sim;

static double uniform(sim *s)
{
    /* xorshift64*: fast, good enough for noise */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return (double)((s->rng * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

static double normal(sim *s)
{
    double u = uniform(s), v = uniform(s);
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

static double one_call(sim *s, size_t entry)
{
    const model *m = s->m;
    double t = entry == 0 ? m->t : m->t / (1.0 + s->speedup / 100.0);
    double f = 1.0 + m->drift_per_s * s->now;
    if (m->shift && s->now >= s->shift_at && s->now < s->shift_at + m->shift_len_s)
        f += m->shift;
    return t * f;
}

static bool sim_sample(void *user, size_t entry, size_t instance, size_t round, sr_sample *out)
{
    (void)round;
    sim *s = user;
    const model *m = s->m;
    double base = one_call(s, entry);
    /* K calls: their device noise averages; the launch term is timed only without the hold */
    double per_call = base * (1.0 + m->sigma / sqrt((double)s->k) * normal(s));
    if (m->launch && s->seed)
        per_call += base * (-0.24 + 0.52 * uniform(s));
    if (m->spike_p && uniform(s) < m->spike_p)
        per_call *= 1.02 + 0.28 * uniform(s);
    per_call *= 1.0 + s->place[s->index++ % 4];
    per_call *= 1.0 + s->offset[entry > 0][instance];
    s->now += per_call * s->k + 50e-6; /* + the sample's own overhead */
    out->per_call_s = per_call;
    out->clock_mhz = 1980;
    out->throttled = false;
    return true;
}

static double sim_now(void *user)
{
    return ((sim *)user)->now;
}

/* ---- one comparison, as the engine plans and judges it --------------------------------------- */

static sr_judgement compare_once(sim *s, size_t n)
{
    sr_schedule_plan plan;
    if (s->seed) {
        s->k = 1;
        plan = (sr_schedule_plan){.order = SR_ORDER_ROTATE, .samples_per_round = 10,
                                  .min_rounds = 5, .max_rounds = 5};
    } else {
        int mode;
        sr_timer_resolve(SR_TIMER_AUTO, s->m->cold ? SR_CACHE_COLD : SR_CACHE_HOT, s->m->t, &mode,
                         &s->k);
        sr_schedule_plan_timed(SR_ORDER_INTERLEAVE, s->m->t * s->k, SR_SCHEDULE_MAX_TIME_S,
                               SR_SCHEDULE_TARGET_HW, &plan);
        if (s->m->max_rounds)
            plan.max_rounds = s->m->max_rounds;
        plan.instances = s->instances ? s->instances : SR_SCHEDULE_INSTANCES;
        plan.order_seed = (uint64_t)(uniform(s) * 0x1p53) ^ s->rng;
    }
    s->now = 0;
    s->index = 0;
    for (int i = 0; i < 4; i++)
        s->place[i] = s->m->place_sd * normal(s);
    for (size_t k = 0; k < SR_INSTANCES_MAX; k++)
        for (int e = 0; e < 2; e++)
            s->offset[e][k] = s->m->instance_sd * normal(s);
    s->shift_at = 1.0 + 5.0 * uniform(s);
    sr_sampler sampler = {.user = s, .sample = sim_sample, .now = sim_now};
    sr_schedule_result res;
    if (!sr_schedule_run(&plan, n, &sampler, &res))
        fail_msg("out of memory");
    double b[SR_SCHEDULE_MAX_ROUNDS], x[SR_SCHEDULE_MAX_ROUNDS];
    sr_schedule_round_p50(&res, 0, b);
    sr_schedule_round_p50(&res, 1, x);
    sr_summary sb, sx;
    size_t count = res.rounds * res.per_round;
    sr_summarize(sr_schedule_entry_samples(&res, 0), count, NULL, &sb);
    sr_summarize(sr_schedule_entry_samples(&res, 1), count, NULL, &sx);
    sr_judgement j = sr_judge_pair(b, x, res.rounds, res.instances, sb.p50, sx.p50, 1.0);
    sr_schedule_result_free(&res);
    return j;
}

typedef struct cell {
    unsigned runs, faster, slower, outside, seed_outside;
    unsigned same, below, ambiguous, covered; /* verdicts; the interval held the true speedup */
    double half_width_sum, bias_sum;
} cell;

static void count(cell *c, const sr_judgement *j, double speedup)
{
    c->faster += j->verdict == SR_VERDICT_FASTER;
    c->slower += j->verdict == SR_VERDICT_SLOWER;
    c->same += j->verdict == SR_VERDICT_SAME;
    c->below += j->verdict == SR_VERDICT_BELOW_THRESHOLD;
    c->ambiguous += j->verdict == SR_VERDICT_AMBIGUOUS;
    c->covered += j->interval.valid && j->interval.low <= speedup && speedup <= j->interval.high;
    c->outside += !(j->interval.estimate >= j->interval.low &&
                    j->interval.estimate <= j->interval.high);
    c->seed_outside += j->seed_outside_interval;
    c->half_width_sum += sr_judge_half_width(&j->interval);
    c->bias_sum += j->interval.estimate - speedup;
}

static cell run_cell_instances(const model *m, double speedup, bool seed, unsigned runs,
                               uint64_t seed_rng, uint32_t instances)
{
    cell c = {.runs = runs};
    sim s = {.m = m, .speedup = speedup, .seed = seed, .rng = seed_rng | 1,
             .instances = instances};
    for (unsigned i = 0; i < runs; i++) {
        sr_judgement j = compare_once(&s, 2);
        count(&c, &j, speedup);
    }
    return c;
}

static cell run_cell(const model *m, double speedup, bool seed, unsigned runs, uint64_t seed_rng)
{
    return run_cell_instances(m, speedup, seed, runs, seed_rng, seed ? 1 : 0);
}

/* The smallest true speedup on a 0.05-point grid called "faster" in >= 80% of runs. */
static double smallest_detected(const model *m, bool seed, unsigned runs)
{
    for (int step = 0; step <= 60; step++) {
        double sp = step <= 20 ? 1.0 + 0.05 * step : 2.0 + 0.25 * (step - 20);
        cell c = run_cell(m, sp, seed, runs, 0x9e3779b97f4a7c15ull ^ (uint64_t)(sp * 1000));
        if (c.faster * 10 >= runs * 8)
            return sp;
    }
    return INFINITY;
}

static unsigned env_runs(void)
{
    const char *e = getenv("SAGERUN_MC_RUNS");
    long v = e ? strtol(e, NULL, 10) : 0;
    return v > 0 ? (unsigned)v : 20000u;
}

static void test_default_schedule(void **state)
{
    (void)state;
    unsigned runs = env_runs(), sens_runs = runs / 10 < 500 ? 500 : runs / 10;
    bool table = getenv("SAGERUN_MC_TABLE") != NULL;
    if (table)
        printf("| model | schedule | A/A false faster/slower | A/A same / below / ambiguous | "
               "A/A interval holds 0 | A/A mean half-width | smallest speedup called faster in "
               "80%% | seed formula outside its interval (A/A) |\n"
               "|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
        const model *m = &models[i];
        for (int seed = table ? 1 : 0; seed >= 0; seed--) {
            cell aa = run_cell(m, 0.0, seed, runs, 0x1234567ull + i);
            double smallest = smallest_detected(m, seed, sens_runs);
            if (table)
                printf("| %s | %s | %.3f%% | %.1f / %.1f / %.1f%% | %.2f%% | %.3f | %.2f%% | "
                       "%.1f%% |\n", m->name,
                       seed ? "seed (rotate 3+5x10)" : "default (interleave, timed)",
                       100.0 * (aa.faster + aa.slower) / runs, 100.0 * aa.same / runs,
                       100.0 * aa.below / runs, 100.0 * aa.ambiguous / runs,
                       100.0 * aa.covered / runs, aa.half_width_sum / runs, smallest,
                       100.0 * aa.seed_outside / runs);
            if (seed)
                continue;
            if ((aa.faster + aa.slower) * 1000u >= runs)
                fail_msg("%s: A/A called faster/slower in %u + %u of %u runs", m->name,
                         aa.faster, aa.slower, runs);
            if (aa.outside)
                fail_msg("%s: the headline fell outside its interval %u times", m->name,
                         aa.outside);
            if (aa.covered < 0.93 * runs) /* 95% nominal: the truth, 0, inside */
                fail_msg("%s: the A/A interval held 0 in %u of %u runs", m->name, aa.covered,
                         runs);
            if (!(smallest <= m->max_speedup))
                fail_msg("%s: the smallest speedup called faster in 80%% of runs is %.2f%%, "
                         "the bar %.2f%%", m->name, smallest, m->max_speedup);
        }
    }
}

/* A true slowdown of about 2% is called "slower", its interval covering the truth most times. */
static void test_slower_variant_covered(void **state)
{
    (void)state;
    const double truth = 1.0 / 1.02 * 100.0 - 100.0; /* -1.96% */
    for (size_t i = 0; i < 4; i++) {
        sim s = {.m = &models[i], .speedup = truth, .rng = 0xabcdefull + i};
        unsigned slower = 0, covered = 0, runs = 2000;
        for (unsigned r = 0; r < runs; r++) {
            sr_judgement j = compare_once(&s, 2);
            slower += j.verdict == SR_VERDICT_SLOWER;
            covered += j.interval.low <= truth && truth <= j.interval.high;
        }
        if (slower < runs * 99 / 100 || covered < runs * 90 / 100)
            fail_msg("%s: slower in %u of %u, the interval covered %.2f%% in %u", models[i].name,
                     slower, runs, truth, covered);
    }
}

/* Cold 20 us samples on an H200 differed by up to 3% with their place in the sequence of samples
 * modulo 4, a pattern fixed for the process (test/bench/RESULTS.md, issue 12 run 6); the order
 * A,B,B,A,... then gave two entries a fixed offset (1.15% in one A/A) that no interval saw. Here:
 * 20 us calls, 0.5% noise, 4 factors N(0, 1%) per comparison, 200 rounds (the device's 4 s). The
 * A/A's interval must hold 0 in >= 90% of comparisons (95% nominal) and say faster or slower in
 * under 1%. */
static void test_place_in_sequence(void **state)
{
    (void)state;
    static const model place = {"place mod 4", 20e-6, 0.005, 0, 0, 0, 0, false, 0, 0.01, true, 200,
                                0};
    unsigned runs = 400, covered = 0, wrong = 0;
    sim s = {.m = &place, .rng = 0x5eed5eedull};
    for (unsigned r = 0; r < runs; r++) {
        sr_judgement j = compare_once(&s, 2);
        covered += j.interval.valid && j.interval.low <= 0 && 0 <= j.interval.high;
        wrong += j.verdict == SR_VERDICT_FASTER || j.verdict == SR_VERDICT_SLOWER;
    }
    printf("place mod 4: the A/A interval held 0 in %u of %u, faster/slower %u\n", covered, runs,
           wrong);
    if (covered < runs * 9 / 10 || wrong * 100 >= runs)
        fail_msg("place mod 4: the A/A interval held 0 in %u of %u, faster/slower in %u", covered,
                 runs, wrong);
}

/* Two instances of one variant differ by a fixed offset for a whole process on us kernels (up to
 * 0.6% on an H200, issue 41): per instance a factor N(0, 0.3%), 20 us cold calls, 0.5% noise,
 * 200 rounds. With one instance per side an A/A read "differs" 69-88% of the time (the interval
 * covers the process's truth, not the kernel's); with the default instances the interval holds
 * their spread: "same" >= 95%, faster/slower <= 0.1%, the true ratio covered >= 93%.
 * SAGERUN_MC_INSTANCE_RUNS sets the A/As (default 200: a CI check, its bar 92%; from 5000 the
 * issue's 95%); SAGERUN_MC_TABLE=1 prints every count for 1, 2, 3, 4 and 6 instances. */
static const model instance_model = {"instance 0.3%", 20e-6, 0.005, 0, 0, 0, 0, false, 0, 0,
                                     true, 200, 0.003};

static unsigned env_count(const char *name, unsigned fallback)
{
    const char *e = getenv(name);
    long v = e ? strtol(e, NULL, 10) : 0;
    return v > 0 ? (unsigned)v : fallback;
}

static void print_cell(const char *model_name, uint32_t instances, const cell *c)
{
    double n = c->runs / 100.0;
    printf("| %s | %u | %.2f%% | %.2f%% | %.2f%% | %.3f%% | %.2f%% | %.3f |\n", model_name,
           instances, c->same / n, c->below / n, c->ambiguous / n, (c->faster + c->slower) / n,
           c->covered / n, c->half_width_sum / c->runs);
}

static void test_instance_offsets(void **state)
{
    (void)state;
    unsigned runs = env_count("SAGERUN_MC_INSTANCE_RUNS", 200);
    bool table = getenv("SAGERUN_MC_TABLE") != NULL;
    static const uint32_t counts[] = {1, 2, 3, 4, 6, 8};
    cell chosen = {0};
    if (table)
        printf("| model | instances | same | below-threshold | ambiguous | faster/slower | "
               "true ratio covered | mean half-width |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        uint32_t k = counts[i];
        if (!table && k != 1 && k != SR_SCHEDULE_INSTANCES)
            continue;
        cell c = run_cell_instances(&instance_model, 0.0, false, k == 1 ? runs / 3 : runs,
                                    0x1d57a11ceull + k, k);
        if (table)
            print_cell(instance_model.name, k, &c);
        if (k == 1 && c.same * 2 >= c.runs) /* the model bites: else this test proves nothing */
            fail_msg("one instance: the A/A read same in %u of %u", c.same, c.runs);
        if (k == SR_SCHEDULE_INSTANCES)
            chosen = c;
    }
    double bar = runs >= 5000 ? 0.95 : 0.92;
    if (chosen.same < bar * runs || (chosen.faster + chosen.slower) * 1000u > runs ||
        chosen.covered < 0.93 * runs)
        fail_msg("%u instances: same %u, faster/slower %u + %u, true ratio covered %u, of %u",
                 SR_SCHEDULE_INSTANCES, chosen.same, chosen.faster, chosen.slower,
                 chosen.covered, runs);
}

/* ---- the order itself ---------------------------------------------------------------------- */

typedef struct recorder {
    size_t order[64][8]; /* per round, the entries in the order they sampled */
    size_t taken[64];
} recorder;

static bool record_sample(void *user, size_t entry, size_t instance, size_t round,
                          sr_sample *out)
{
    (void)instance;
    recorder *r = user;
    assert_true(round < 64 && r->taken[round] < 8);
    r->order[round][r->taken[round]++] = entry;
    *out = (sr_sample){.per_call_s = 1e-3, .clock_mhz = 1980, .energy_j = NAN};
    return true;
}

static double zero_now(void *user)
{
    (void)user;
    return 0;
}

static void record_order(int order, size_t n, uint64_t seed, size_t rounds, recorder *r)
{
    memset(r, 0, sizeof *r);
    sr_schedule_plan plan = {.order = order, .samples_per_round = 1,
                             .min_rounds = (uint32_t)rounds, .max_rounds = (uint32_t)rounds,
                             .exact_rounds = true, .order_seed = seed};
    sr_sampler s = {.user = r, .sample = record_sample, .now = zero_now};
    sr_schedule_result res;
    assert_true(sr_schedule_run(&plan, n, &s, &res));
    assert_int_equal(res.rounds, rounds);
    sr_schedule_result_free(&res);
}

/* Interleave: in every period each entry comes first equally often (and every round holds each
 * entry once); the periods' rows come in a shift drawn from the seed, so the first entry of a
 * period varies; the same seed gives the same order, another seed another. Rotate ignores it. */
static void test_order_balanced_and_shifted(void **state)
{
    (void)state;
    static const size_t ns[] = {2, 3, 4};
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        size_t n = ns[t], period = sr_order_period(SR_ORDER_INTERLEAVE, n);
        size_t rounds = 60 / period * period;
        recorder a, b, c;
        record_order(SR_ORDER_INTERLEAVE, n, 42, rounds, &a);
        record_order(SR_ORDER_INTERLEAVE, n, 42, rounds, &b);
        record_order(SR_ORDER_INTERLEAVE, n, 43, rounds, &c);
        assert_memory_equal(a.order, b.order, sizeof a.order);
        assert_memory_not_equal(a.order, c.order, sizeof a.order);
        bool opener_varies = false;
        for (size_t p0 = 0; p0 < rounds; p0 += period) {
            size_t firsts[8] = {0};
            for (size_t r = p0; r < p0 + period; r++) {
                size_t seen[8] = {0};
                assert_int_equal(a.taken[r], n);
                for (size_t k = 0; k < n; k++)
                    seen[a.order[r][k]]++;
                for (size_t e = 0; e < n; e++)
                    assert_int_equal(seen[e], 1);
                firsts[a.order[r][0]]++;
            }
            for (size_t e = 0; e < n; e++)
                assert_int_equal(firsts[e], period / n);
            opener_varies |= a.order[p0][0] != a.order[0][0];
        }
        assert_true(opener_varies);
    }
    recorder a, b;
    record_order(SR_ORDER_ROTATE, 3, 1, 6, &a);
    record_order(SR_ORDER_ROTATE, 3, 2, 6, &b);
    assert_memory_equal(a.order, b.order, sizeof a.order);
    for (size_t r = 0; r < 6; r++)
        assert_int_equal(a.order[r][0], r % 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_schedule),
        cmocka_unit_test(test_slower_variant_covered),
        cmocka_unit_test(test_place_in_sequence),
        cmocka_unit_test(test_instance_offsets),
        cmocka_unit_test(test_order_balanced_and_shifted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
