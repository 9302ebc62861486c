/* The schedule of a comparison (schedule.h): order, rounds, stopping, redone rounds. */
#include "schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "kernels/generate_math.h"
#include "nvtx.h"
#include "stats.h"

static const char *const schedule_names[] = {"timed", "fixed", "seed"}; /* SAGERUN_SCHEDULE_* */

const char *sr_schedule_name(int schedule)
{
    return schedule >= 0 && schedule < (int)(sizeof schedule_names / sizeof *schedule_names) ? schedule_names[schedule]
                                                                          : NULL;
}

int sr_schedule_parse(const char *name)
{
    for (int i = 0; name && i < (int)(sizeof schedule_names / sizeof *schedule_names); i++)
        if (strcmp(name, schedule_names[i]) == 0)
            return i;
    return -1;
}

const char *sr_order_name(int order)
{
    return order == SR_ORDER_INTERLEAVE ? "interleave" : order == SR_ORDER_ROTATE ? "rotate" : NULL;
}

int sr_order_parse(const char *name)
{
    if (name && strcmp(name, "interleave") == 0)
        return SR_ORDER_INTERLEAVE;
    if (name && strcmp(name, "rotate") == 0)
        return SR_ORDER_ROTATE;
    return -1;
}

size_t sr_order_period(int order, size_t n)
{
    if (order == SR_ORDER_ROTATE || n <= 1)
        return 1;
    return n % 2 ? 2 * n : n;
}

/* Williams' balanced Latin square: row 0 is 0, 1, n-1, 2, n-2, ...; row r adds r (mod n); for
 * odd n, rows n .. 2n-1 are rows 0 .. n-1 reversed. */
static size_t williams(size_t n, size_t row, size_t pos)
{
    bool reversed = n % 2 && row >= n;
    size_t r = row % n, k = reversed ? n - 1 - pos : pos;
    size_t first = k == 0 ? 0 : k % 2 ? (k + 1) / 2 : n - k / 2;
    return (first + r) % n;
}

size_t sr_order_entry(int order, size_t n, size_t round, size_t slot, size_t per_round)
{
    if (n <= 1)
        return 0;
    if (order == SR_ORDER_ROTATE)
        return (round + slot / per_round) % n;
    return williams(n, round % sr_order_period(order, n), slot % n);
}

/* The square's row for the round-th round: within each period the rows come in an order shifted
 * by a random amount (from seed and the period's number), so that no entry keeps the same
 * positions in the sequence of samples (schedule.h). */
static size_t order_row(int order, size_t n, uint64_t seed, size_t round)
{
    size_t period = sr_order_period(order, n);
    if (order == SR_ORDER_ROTATE || period <= 1)
        return round;
    size_t shift = (size_t)(sr_gen_bits(seed, round / period) % period); /* splitmix64 */
    return (round % period + shift) % period;
}

/* ---- results ------------------------------------------------------------------------------- */

static size_t at(const sr_schedule_result *res, size_t e, size_t r, size_t i)
{
    return (e * res->capacity_rounds + r) * res->per_round + i;
}

const double *sr_schedule_entry_samples(const sr_schedule_result *res, size_t entry)
{
    return res->samples + at(res, entry, 0, 0);
}

static void round_medians(const sr_schedule_result *res, const double *data, size_t entry,
                          double *out)
{
    double scratch[64], *big = NULL, *buf = scratch;
    if (res->per_round > 64 && !(buf = big = malloc(res->per_round * sizeof(double)))) {
        for (size_t r = 0; r < res->rounds; r++)
            out[r] = NAN;
        return;
    }
    for (size_t r = 0; r < res->rounds; r++)
        out[r] = sr_median_finite(data + at(res, entry, r, 0), res->per_round, buf);
    free(big);
}

void sr_schedule_round_p50(const sr_schedule_result *res, size_t entry, double *out)
{
    round_medians(res, res->samples, entry, out);
}

void sr_schedule_round_energy(const sr_schedule_result *res, size_t entry, double *out)
{
    round_medians(res, res->energies, entry, out);
}

double sr_schedule_half_width(const sr_schedule_result *res)
{
    if (res->rounds < 2)
        return INFINITY;
    double *b = malloc(2 * res->rounds * sizeof(double)), worst = 0;
    if (!b)
        return INFINITY;
    double *x = b + res->rounds;
    sr_schedule_round_p50(res, 0, b);
    for (size_t e = 1; e < res->entries; e++) {
        if (res->dropped[e])
            continue;
        sr_schedule_round_p50(res, e, x);
        sr_judgement j = sr_judge_pair(b, x, res->rounds, res->instances, NAN, NAN, 0);
        worst = fmax(worst, sr_judge_half_width(&j.interval));
    }
    free(b);
    return worst;
}

void sr_schedule_result_free(sr_schedule_result *res)
{
    free(res->samples);
    free(res->clocks);
    free(res->energies);
    free(res->dropped);
    free(res->clock_median);
    free(res->clock_rounds);
    memset(res, 0, sizeof(*res));
}

/* Room for rounds [0, rounds) at least: the arrays grown (doubling, at most max_rounds) and each
 * entry's block moved to the new stride, the new rows NaN. Allocating max_rounds up front took
 * gigabytes for a large --max-rounds that --max-time ends after a few rounds. */
static bool result_grow(sr_schedule_result *res, size_t rounds)
{
    size_t old = res->capacity_rounds, n = res->entries, I = res->per_round;
    if (rounds <= old)
        return true;
    size_t cap = old * 2 > rounds ? old * 2 : rounds;
    if (cap > res->max_rounds)
        cap = res->max_rounds;
    if (cap < rounds || (n && cap > SIZE_MAX / sizeof(double) / n / I))
        return false;
    double **arrays[3] = {&res->samples, &res->clocks, &res->energies};
    for (int a = 0; a < 3; a++) {
        double *grown = realloc(*arrays[a], n * cap * I * sizeof(double));
        if (!grown)
            return false;
        *arrays[a] = grown;
        for (size_t e = n; e-- > 0;) { /* last first: a block moves up, past its old place */
            memmove(grown + e * cap * I, grown + e * old * I, old * I * sizeof(double));
            for (size_t i = old * I; i < cap * I; i++)
                grown[e * cap * I + i] = NAN;
        }
    }
    res->capacity_rounds = cap;
    return true;
}

static bool result_alloc(sr_schedule_result *res, size_t n, size_t per_round, size_t rounds)
{
    memset(res, 0, sizeof(*res));
    res->entries = n;
    res->per_round = per_round;
    res->max_rounds = rounds;
    res->dropped = calloc(n, sizeof(bool));
    res->clock_median = malloc(n * sizeof(double));
    res->clock_rounds = calloc(n, sizeof(size_t));
    for (size_t e = 0; res->clock_median && e < n; e++)
        res->clock_median[e] = NAN;
    if (!res->dropped || !res->clock_median || !res->clock_rounds ||
        !result_grow(res, rounds < 64 ? rounds : 64)) {
        sr_schedule_result_free(res);
        return false;
    }
    return true;
}

/* ---- one round ------------------------------------------------------------------------------ */

typedef enum { ROUND_OK, ROUND_STOPPED, ROUND_BASELINE_FAILED } round_status;

/* Takes every sample of round slot `r` (the round's data go to row r of the result). */
static round_status take_round(const sr_schedule_plan *p, const sr_sampler *s,
                               sr_schedule_result *res, size_t r, size_t sequence, bool *throttled)
{
    size_t n = res->entries, I = res->per_round;
    size_t *taken = calloc(n, sizeof(size_t));
    if (!taken)
        return ROUND_STOPPED;
    round_status st = ROUND_OK;
    *throttled = false;
    for (size_t e = 0; e < n; e++)
        for (size_t i = 0; i < I; i++)
            res->samples[at(res, e, r, i)] = res->clocks[at(res, e, r, i)] =
                res->energies[at(res, e, r, i)] = NAN;
    for (size_t slot = 0; slot < n * I && st == ROUND_OK; slot++) {
        size_t e = sr_order_entry(p->order, n, order_row(p->order, n, p->order_seed, sequence),
                                  slot, I);
        if (res->dropped[e])
            continue;
        if (s->stop && s->stop(s->user)) {
            st = ROUND_STOPPED;
            break;
        }
        sr_sample smp = {.per_call_s = NAN, .clock_mhz = NAN, .energy_j = NAN};
        size_t k = sr_round_instance(e > 0, r, res->instances);
        if (!s->sample(s->user, e, k, sequence, &smp)) {
            res->dropped[e] = true;
            if (e == 0)
                st = ROUND_BASELINE_FAILED;
            continue;
        }
        size_t i = taken[e]++;
        res->samples[at(res, e, r, i)] = smp.per_call_s;
        res->clocks[at(res, e, r, i)] = smp.clock_mhz;
        res->energies[at(res, e, r, i)] = smp.energy_j;
        *throttled = *throttled || smp.throttled;
    }
    free(taken);
    return st;
}

/* Entry e's median clock over the kept rounds and round r, computed again once the rounds grew by
 * a tenth (a sort of every sample so far, every round, was quadratic: most of a long run's
 * schedule time); the median of a steady clock moves little in between. */
static double run_clock(sr_schedule_result *res, size_t e, size_t r, double *all)
{
    if (!(10 * (r + 1) < 11 * res->clock_rounds[e]) || !isfinite(res->clock_median[e])) {
        res->clock_median[e] = sr_median_finite(res->clocks + at(res, e, 0, 0),
                                                (r + 1) * res->per_round, all);
        res->clock_rounds[e] = r + 1;
    }
    return res->clock_median[e];
}

/* Whether some entry's median clock in round r lies more than drop below its run's median
 * (run_clock). Round r's median comes first: where it is unknown (the host backend has no
 * clock), the run's is not needed. */
static bool clock_dropped(sr_schedule_result *res, size_t r, double drop)
{
    size_t n = res->entries, I = res->per_round, cells = (r + 1) * I;
    double *all = malloc(cells * sizeof(double)), *mine = malloc(I * sizeof(double));
    bool low = false;
    if (all && mine && drop > 0) {
        for (size_t e = 0; e < n && !low; e++) {
            if (res->dropped[e])
                continue;
            double here = sr_median_finite(res->clocks + at(res, e, r, 0), I, mine);
            if (!isfinite(here))
                continue;
            double run = run_clock(res, e, r, all);
            low = isfinite(run) && here < (1.0 - drop) * run;
        }
    }
    free(all);
    free(mine);
    return low;
}

/* ---- the schedule ---------------------------------------------------------------------------- */

static bool may_stop_here(size_t rounds, size_t period)
{
    return rounds % period == 0 && rounds >= period;
}

/* The half-width is computed only where the schedule may stop on it (a period's end past the
 * minimum, with a target) and the rounds grew by a tenth since it was last: every computation
 * re-sorts all rounds, which grew quadratically and ate a fifth of a 20 s budget of 20 us calls
 * (and, with the instances' medians, five times the Monte-Carlo test's time); it may stop a tenth
 * late. *half_width: NaN where not computed. */
static int end_after_round(const sr_schedule_plan *p, sr_schedule_result *res, size_t period,
                           double elapsed, double *half_width)
{
    *half_width = NAN;
    if (res->rounds >= res->max_rounds)
        return SR_SCHEDULE_ROUNDS;
    if (!may_stop_here(res->rounds, period))
        return -1;
    if (p->max_time_s > 0 && elapsed >= p->max_time_s)
        return SR_SCHEDULE_BUDGET;
    if (res->rounds < p->min_rounds || !(p->target_half_width > 0) ||
        10 * res->rounds < 11 * res->checked_rounds)
        return -1;
    res->checked_rounds = res->rounds;
    if ((*half_width = sr_schedule_half_width(res)) <= p->target_half_width)
        return SR_SCHEDULE_PRECISION;
    return -1;
}

/* Seconds left: to min_rounds, else one more period; not past the budget, but never less than
 * the rest of the period, which the schedule cannot end before (it showed "round 3/3, 4/4, ..."
 * once the budget was spent inside a long period). */
static double eta(const sr_schedule_plan *p, size_t rounds, size_t period, double elapsed)
{
    double per_round = elapsed / (double)rounds;
    size_t to_period = period - rounds % period;
    size_t left = p->min_rounds > rounds ? p->min_rounds - rounds : to_period;
    double s = per_round * (double)left;
    if (p->max_time_s > 0)
        s = fmin(s, fmax(0.0, p->max_time_s - elapsed));
    if (rounds < p->max_rounds)
        s = fmax(s, per_round * (double)(rounds % period ? to_period : 0));
    return s;
}

/* rounds in whole periods of the order (which balance it): up for a minimum, down for a maximum
 * (which is a promise: --max-rounds), at least one period for a minimum; a maximum below one
 * period is kept as it is (the order unbalanced: the report warns) */
static uint32_t whole_periods(uint32_t rounds, size_t period, bool down)
{
    size_t r = rounds < 1 ? 1 : rounds;
    if (down)
        return (uint32_t)(r < period ? r : r / period * period);
    r = (r + period - 1) / period * period;
    return (uint32_t)r;
}

bool sr_schedule_run(const sr_schedule_plan *plan, size_t n, const sr_sampler *s,
                     sr_schedule_result *res)
{
    sr_schedule_plan p = *plan;
    size_t period = p.exact_rounds ? 1 : sr_order_period(p.order, n);
    p.max_rounds = whole_periods(p.max_rounds < p.min_rounds ? p.min_rounds : p.max_rounds, period, true);
    p.min_rounds = whole_periods(p.min_rounds, period, false);
    if (p.min_rounds > p.max_rounds)
        p.min_rounds = p.max_rounds;
    size_t I = p.samples_per_round ? p.samples_per_round : 1;
    if (!result_alloc(res, n, I, p.max_rounds))
        return false;
    res->end = SR_SCHEDULE_ROUNDS;
    res->order_seed = p.order_seed;
    res->instances = p.instances > 1 && p.instances <= SR_INSTANCES_MAX ? p.instances : 1;
    double t0 = s->now(s->user);
    size_t sequence = 0; /* rounds taken, redone ones included: the order's row */
    for (;;) {
        bool throttled;
        if (!result_grow(res, res->rounds + 1))
            return false; /* out of memory, as an allocation up front said before */
        sr_nvtx_push("round %zu", res->rounds + 1); /* a redone round shows twice */
        round_status st = take_round(&p, s, res, res->rounds, sequence++, &throttled);
        sr_nvtx_pop();
        if (st != ROUND_OK) {
            res->end = st == ROUND_STOPPED ? SR_SCHEDULE_STOPPED : SR_SCHEDULE_BASELINE;
            break;
        }
        bool slow = clock_dropped(res, res->rounds, p.clock_drop);
        if ((slow || throttled) && res->redone < p.max_redos) {
            res->redone++;
            res->redone_clock += slow;
            res->redone_throttle += !slow && throttled;
            /* the redone round keeps the order's row sequence, so balance holds */
            sequence--;
            continue;
        }
        res->rounds++;
        double elapsed = s->now(s->user) - t0, hw;
        int end = end_after_round(&p, res, period, elapsed, &hw);
        if (s->round_done)
            s->round_done(s->user, res->rounds, hw, eta(&p, res->rounds, period, elapsed));
        if (end >= 0) {
            res->end = end;
            break;
        }
    }
    res->elapsed_s = s->now(s->user) - t0;
    return true;
}

/* ---- the time-based plan --------------------------------------------------------------------- */

void sr_schedule_plan_timed(int order, double sample_s, double max_time_s, double target_hw,
                            sr_schedule_plan *out)
{
    memset(out, 0, sizeof(*out));
    out->order = order;
    (void)sample_s;
    out->samples_per_round = 1; /* a round is one sample each: A,B then B,A (see schedule.h) */
    out->min_rounds = SR_SCHEDULE_MIN_ROUNDS;
    out->max_rounds = SR_SCHEDULE_MAX_ROUNDS;
    out->max_time_s = max_time_s;
    out->target_half_width = target_hw;
    out->max_redos = SR_SCHEDULE_MIN_ROUNDS / 2;
    out->clock_drop = SR_SCHEDULE_CLOCK_DROP;
}
