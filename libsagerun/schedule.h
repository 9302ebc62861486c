/* The schedule of a comparison: which entry takes the next timed sample, how many rounds, when to
 * stop, which rounds to redo. It knows nothing of GPUs: a sampler (the engine's, over timer.h, or
 * a simulation in the tests) takes the samples, so the Monte-Carlo test drives exactly this code.
 *
 * Order. "interleave" (the default): in every round each entry takes samples_per_round samples,
 * one entry after the other (A,B,A,B,... for two), the sequence of a round taken from a balanced
 * Latin square (Williams design) whose row changes from round to round, so that every entry is
 * first equally often and follows every other equally often over a period of rounds (2 rounds for
 * two entries). Within each period the rows come in a randomly shifted order (order_seed), so that
 * no entry keeps fixed places in the sequence of samples: an effect of the place in the sequence
 * that is fixed for a process would otherwise become an offset between entries that no interval
 * sees. On an H200, cold 20 us A/As kept such an offset (0.3-2%) even with byte-identical launches
 * under the fixed order; with the shift it fell to 0.1-0.6% (test/bench/RESULTS.md, issue 12 runs
 * 6-10).
 * Rounds end on whole periods. "rotate" (the seed's): each
 * entry takes all its samples of the round back to back, the starting entry rotating by one from
 * round to round.
 *
 * Stopping. At the end of every whole period from min_rounds on, the schedule stops when the widest
 * 95% interval of a variant against entry 0 is at most target_half_width percent points (computed
 * again once the rounds grew by a tenth), when the budget max_time_s (on the sampler's clock) is
 * spent, or at max_rounds. It never stops because of a verdict.
 *
 * Redone rounds. A round in which an entry's median clock is more than clock_drop below the run's
 * median, or a sample saw throttling, is taken again (at most max_redos times; then kept). */
#ifndef SAGERUN_SCHEDULE_H
#define SAGERUN_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sr_order { SR_ORDER_INTERLEAVE = 0, SR_ORDER_ROTATE = 1 } sr_order;

/* "interleave", "rotate"; NULL for an unknown value. And back (-1 for an unknown name). */
const char *sr_order_name(int order);
int sr_order_parse(const char *name);
/* The same for SAGERUN_SCHEDULE_*: "timed", "fixed", "seed". */
const char *sr_schedule_name(int schedule);
int sr_schedule_parse(const char *name);

/* Rounds in one balanced period of the order for n entries (interleave: n, or 2n for odd n > 1;
 * rotate: 1). */
size_t sr_order_period(int order, size_t n);
/* The entry that takes slot `slot` (0 .. n*per_round-1) of a round of row `round` (interleave: the
 * square's row, the period's random shift applied; rotate: the round's number). */
size_t sr_order_entry(int order, size_t n, size_t round, size_t slot, size_t per_round);

/* One timed sample, as the sampler reports it. */
typedef struct sr_sample {
    double per_call_s; /* seconds per call (a sample of K calls: its time / K) */
    double clock_mhz;  /* effective SM clock of the sample; NaN when unknown */
    bool throttled;    /* the device reported clock throttling during the sample */
    double energy_j;   /* joules per call over the sample; NaN when unknown */
} sr_sample;

typedef struct sr_sampler {
    void *user;
    /* Takes one timed sample of `entry` on its instance `instance` (stats.h: sr_round_instance of
     * the kept round; 0 with one instance) in `round`. false: the entry failed (it drops out of
     * the schedule; entry 0 failing ends it). */
    bool (*sample)(void *user, size_t entry, size_t instance, size_t round, sr_sample *out);
    double (*now)(void *user);  /* seconds, the budget's clock */
    bool (*stop)(void *user);   /* interrupted (polled before every sample); NULL: never */
    /* After every kept round: rounds kept, the widest half-width so far (percent points; +Inf
     * before two rounds) and the estimated seconds left. NULL: none. */
    void (*round_done)(void *user, size_t rounds, double half_width, double eta_s);
} sr_sampler;

typedef struct sr_schedule_plan {
    int order;                  /* sr_order */
    uint32_t samples_per_round; /* per entry, >= 1 */
    uint32_t min_rounds;        /* rounded up to whole periods; >= 1 */
    uint32_t max_rounds;        /* >= min_rounds; rounded down to whole periods (one at least) */
    double max_time_s;          /* <= 0: no budget */
    double target_half_width;   /* percent points; <= 0: no precision target */
    uint32_t max_redos;         /* rounds taken again at most */
    double clock_drop;          /* e.g. 0.03; <= 0: clocks never redo a round */
    bool exact_rounds;          /* a fixed schedule: exactly max_rounds, whole periods or not */
    uint64_t order_seed;        /* interleave: the rows' random shifts (the engine draws it) */
    uint32_t instances;         /* per entry, the rounds spread over them (sr_round_instance);
                                   0 or 1: one, and SR_INSTANCES_MAX at most */
} sr_schedule_plan;

typedef enum sr_schedule_end {
    SR_SCHEDULE_ROUNDS = 0,    /* max_rounds (a fixed schedule) */
    SR_SCHEDULE_PRECISION = 1, /* the target half-width was reached */
    SR_SCHEDULE_BUDGET = 2,    /* max_time_s was spent */
    SR_SCHEDULE_STOPPED = 3,   /* interrupted */
    SR_SCHEDULE_BASELINE = 4   /* entry 0 failed */
} sr_schedule_end;

typedef struct sr_schedule_result {
    size_t entries, per_round;
    size_t capacity_rounds; /* rounds allocated (the stride below), grown as rounds are taken */
    size_t max_rounds;      /* the plan's: the schedule ends there */
    size_t rounds;       /* rounds kept */
    double *samples;     /* entry e, round r, sample i at [(e * capacity_rounds + r) * per_round + i] */
    double *clocks;      /* the same shape: clock_mhz */
    double *energies;    /* the same shape: energy_j */
    bool *dropped;       /* per entry: failed and left the schedule */
    uint64_t order_seed; /* the plan's */
    size_t instances;    /* the plan's, 1 at least */
    size_t checked_rounds; /* rounds when the half-width was last computed (schedule.c) */
    double *clock_median;  /* per entry: its run's median clock, computed at ... */
    size_t *clock_rounds;  /* ... this many rounds (schedule.c) */
    uint32_t redone;     /* rounds taken again */
    uint32_t redone_clock, redone_throttle; /* why */
    int end;             /* sr_schedule_end */
    double elapsed_s;    /* on the sampler's clock */
} sr_schedule_result;

/* Runs the schedule for n >= 1 entries. false only when out of memory (out is then freed). */
bool sr_schedule_run(const sr_schedule_plan *plan, size_t n, const sr_sampler *sampler,
                     sr_schedule_result *out);
void sr_schedule_result_free(sr_schedule_result *res);
/* The samples of one entry, round after round (rounds * per_round values). */
const double *sr_schedule_entry_samples(const sr_schedule_result *res, size_t entry);
/* The p50 of each kept round of one entry into out (res->rounds values). */
void sr_schedule_round_p50(const sr_schedule_result *res, size_t entry, double *out);
/* The same for the energy per call (NaN where unknown). */
void sr_schedule_round_energy(const sr_schedule_result *res, size_t entry, double *out);
/* The widest half-width (percent points) of every non-dropped entry against entry 0 over the kept
 * rounds; +Inf with fewer than two rounds. */
double sr_schedule_half_width(const sr_schedule_result *res);

/* ---- the time-based schedule's plan ---------------------------------------------------------- */
/* Defaults of the time-based schedule (sagerun_compare_options_init has the same numbers). */
#define SR_SCHEDULE_MIN_ROUNDS 20u
#define SR_SCHEDULE_MAX_ROUNDS 2000u
#define SR_SCHEDULE_MAX_TIME_S 8.0    /* budget of the timed rounds */
#define SR_SCHEDULE_TARGET_HW 0.05    /* percent points */
#define SR_SCHEDULE_CLOCK_DROP 0.03
/* Instances per variant (compare --instances): under offsets of sd 0.3% per instance an A/A read
 * "same" in 85% with 4 (12% ambiguous: each side's spread rests on 3 dof), 97% with 6, 97.4% with
 * 8 (test_engine_mc, test/bench/RESULTS.md issue 41); each costs its output and workspace in
 * device memory. */
#define SR_SCHEDULE_INSTANCES 6u

/* The time-based plan: one sample of each entry per round (the paired unit; with two entries the
 * rounds run A,B then B,A), SR_SCHEDULE_MIN_ROUNDS to SR_SCHEDULE_MAX_ROUNDS rounds, until the
 * target half-width or the budget. Per-round medians of several samples were measured worse in
 * the Monte-Carlo test (test/bench/RESULTS.md): the 20%-trimmed interval already discounts spikes.
 * sample_s (the slowest entry's sample) is kept for plans that depend on it. */
void sr_schedule_plan_timed(int order, double sample_s, double max_time_s, double target_hw,
                            sr_schedule_plan *out);

#endif
