/* The comparison engine's stages, as the driver (compare.c) calls them:
 *   entries.c   which variants, their instances (create, prepare), the hooks around every call;
 *   measure.c   warm-up, the timer plan per variant, and the timed rounds (schedule.h + timer.h);
 *   verify.c    checked calls (poison, hash, determinism), byte differences, accuracy;
 *   judge.c     speedups, intervals, verdicts (judge.h);
 *   assemble.c  the report (report.h) from what the stages measured.
 * The driver owns the entries; each stage reads and fills its own part of them. */
#ifndef SAGERUN_ENGINE_H
#define SAGERUN_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "report.h"
#include "sagerun/compare.h"
#include "schedule.h"
#include "timer.h"

/* What one entry's checks found (verify.c). */
typedef struct sr_entry_check {
    char first_sha[65], last_sha[65];
    uint64_t snapshot;       /* device copy of the first checked output (0: none) */
    sr_hash_job *first_hash; /* hashing that copy, started after the rounds */
    sr_byte_diff diff;       /* against the baseline's output (present: measured) */
    sr_accuracy accuracy;    /* against exact attention (present: measured) */
} sr_entry_check;

/* What one entry's timing found (measure.c). */
typedef struct sr_entry_timing {
    uint32_t warmup_calls;
    double first_call_s, warm_call_s; /* the first warm-up call, and the warmed per-call time */
    int mode;                         /* sr_timer_mode resolved */
    uint32_t calls_per_sample;
    sr_timer_graph *graph;            /* GRAPH mode */
    sr_timer_graph *more_graphs[SR_INSTANCES_MAX - 1]; /* GRAPH mode: of the further instances */
    double launch_gap_s;              /* cold, CUPTI: added to every kernel-timed sample; NaN */
    uint32_t hold_timeouts;           /* samples whose hold gave up (launch cost timed) */
    double host_s;                    /* CUDA: host seconds queuing the timed calls... */
    uint64_t host_calls;              /* ...of this many calls (graphs excluded) */
    double energy_j, energy_s;        /* NVML energy and time over its samples (energy_ok) */
    uint64_t energy_calls;
    bool energy_ok;
    double *round_energy;             /* joules per call in each kept round (NaN: unknown) */
} sr_entry_timing;

typedef struct sr_entry {
    size_t index; /* in the registry */
    sagerun_variant_info info;
    char label[SR_LABEL_MAX + 16]; /* the registry's label, or "LABEL#K" for a repeat */
    sagerun_instance *inst;
    /* compare --instances: the further instances (1 .. instances-1), created and prepared after
     * inst; the rounds go to each in turn (sr_round_instance). The checked calls are inst's. */
    sagerun_instance *more[SR_INSTANCES_MAX - 1];
    size_t instances;
    bool optional;    /* chosen as one of every variant found, not named: left out (a warning),
                         not failed, when it does not do the problem (SAGERUN_UNSUPPORTED) */
    bool unsupported; /* create (geometry included) said SAGERUN_UNSUPPORTED */
    bool failed;
    char failure[SAGERUN_ERROR_MESSAGE_SIZE];
    char failure_phase[16]; /* sagerun_compare_call's phase names */
    bool prepared;
    double prepare_s;
    bool has_geometry;
    sagerun_launch_geometry geometry;
    sr_entry_timing timing;
    sr_entry_check check;
} sr_entry;

/* The options, completed: defaults for what the caller's struct does not cover, the schedule's
 * resolved numbers. */
typedef struct sr_engine_options {
    sagerun_compare_options o;
    sagerun_compare_hooks hooks;
} sr_engine_options;

/* The result handle of compare.h: the report, which owns everything it names. */
struct sagerun_compare_result {
    sr_report report;
};

/* ---- entries.c ---- */
/* The instances per entry the options ask for (1 for the seed's schedule). */
size_t sr_compare_instances(const sagerun_compare_options *o);
void sr_entry_fail(sr_entry *e, const sagerun_error *err, const char *what, const char *phase);
/* Instance k (0: inst) of an entry, and the graph timing it (GRAPH mode). */
sagerun_instance *sr_entry_instance(const sr_entry *e, size_t k);
sr_timer_graph *sr_entry_graph(const sr_entry *e, size_t k);
/* Around every call into a variant: the hooks' call announcements. calls: how many calls of the
 * variant the event covers (a sample's K, else 1). */
double sr_hook_begin(const sagerun_compare_hooks *h, const sr_entry *e, const char *phase,
                     uint32_t round, uint32_t calls);
void sr_hook_end(const sagerun_compare_hooks *h, const sr_entry *e, const char *phase,
                 uint32_t round, uint32_t calls, double t0, bool context_lost);
bool sr_hook_interrupted(const sagerun_compare_hooks *h);
/* After a failure on the GPU: true when the CUDA context is lost (then err names the entry). */
bool sr_entry_lost_context(sagerun_context *ctx, const sr_entry *e, sagerun_error *err);
sagerun_status sr_entries_select(sagerun_registry *reg, sagerun_context *ctx,
                                 const sagerun_compare_options *o, sr_report *rep, sr_entry **out,
                                 size_t *count, sagerun_error *err);
/* Without the baseline (failed, or left out) nothing is measured: every other entry is recorded
 * failed, "not measured: the baseline LABEL failed", so that the report says why (it was an
 * error, and the report was lost). */
void sr_entries_without_baseline(sr_entry *es, size_t n);
/* Entries the caller leaves out (hooks); leaving out the baseline leaves out every entry, each
 * recorded as not measured for that reason. */
sagerun_status sr_entries_skip(const sagerun_compare_hooks *h, sr_entry *es, size_t n,
                               sagerun_error *err);
/* The device memory of the comparison of the entries not failed on problem p (with_inputs: Q, K,
 * V counted too, for inputs not allocated yet) against the memory free: SAGERUN_OUT_OF_MEMORY
 * with the numbers when it cannot fit. The driver checks once, before anything is allocated. */
sagerun_status sr_entries_check_memory(sagerun_registry *reg, sagerun_context *ctx,
                                       const sagerun_problem *p, bool with_inputs,
                                       const sr_entry *es, size_t n,
                                       const sagerun_compare_options *o, sagerun_error *err);
/* create and prepare every entry: the baseline must succeed, the others are recorded when they
 * fail. *stop is set when interrupted. */
sagerun_status sr_entries_prepare(sagerun_registry *reg, sagerun_context *ctx,
                                  sagerun_inputs *in, const sagerun_compare_hooks *h,
                                  const sagerun_compare_options *o, sr_entry *es, size_t n,
                                  bool *stop, sagerun_error *err);
void sr_entries_destroy(sagerun_context *ctx, const sagerun_compare_hooks *h, sr_entry *es,
                        size_t n);

/* ---- measure.c ---- */
/* What the rounds ran on: filled by sr_measure_run. */
typedef struct sr_measurement {
    sr_schedule_result sched;
    const char *schedule_name; /* "timed", "fixed", "seed" */
    uint32_t warmup_calls;     /* FIXED/SEED: per entry; TIMED: the fewest an entry made */
    double launch_floor_s;     /* per launch of an empty kernel; NaN on the host */
    uint64_t flush_bytes;      /* cold: the flush buffer */
    const char *sample_clock;  /* sr_sample_timer_clock */
    int max_sm_clock_mhz;      /* NVML; -1 */
    bool nvml;
    char clock_unavailable[128];
    sr_sample_timer *timer; /* from warm-up to the end of the rounds */
    sr_nvml *nvml_handle;
} sr_measurement;

/* Warm-up (by count, or by time and until stable) and each entry's timer plan (mode, calls per
 * sample, graph). Both return non-OK only for the baseline's failure or a lost context; *stop is
 * set when interrupted. */
sagerun_status sr_measure_warmup(sagerun_context *ctx, const sr_engine_options *eo,
                                 sr_entry *es, size_t n, sr_measurement *m, bool *stop,
                                 sagerun_error *err);
/* The timed rounds: the schedule over the sample timer. */
sagerun_status sr_measure_rounds(sagerun_context *ctx, const sr_engine_options *eo, sr_entry *es,
                                 size_t n, sr_measurement *m, bool *stop, sagerun_error *err);
void sr_measurement_free(sr_measurement *m, sr_entry *es, size_t n);

/* ---- input_guard.c ---- */
/* The inputs the variants share (Q, K, V, the sequences' device arrays, k_mean, the sage2 tensors
 * quantized once), each kept as a copy (or, where memory is short, its SHA-256): a variant that
 * writes into them fails at its checked call and the copy is put back for the others. */
typedef struct sr_guarded {
    const char *name; /* "q", "sage2 k_int8", ... */
    uint64_t addr, bytes;
    uint64_t copy;    /* 0: only the hash is kept */
    char sha[65];
} sr_guarded;
typedef struct sr_input_guard {
    sr_guarded t[16];
    size_t count;
    const char *changed_in, *changed; /* a stage after which the inputs had changed, and what */
    bool caught;                      /* a variant's checked call was caught changing them */
} sr_input_guard;
sagerun_status sr_input_guard_take(sagerun_context *ctx, const sagerun_inputs *in,
                                   sr_input_guard *g, sagerun_error *err);
/* *changed: the first tensor that differs from its copy (NULL: none); every such tensor is put
 * back. Non-OK when it cannot check or put back (then the comparison cannot go on). */
sagerun_status sr_input_guard_check(sagerun_context *ctx, sr_input_guard *g, const char **changed,
                                    sagerun_error *err);
void sr_input_guard_release(sagerun_context *ctx, sr_input_guard *g);

/* ---- verify.c ---- */
/* *equal: the two buffers of `bytes` (even) hold the same bits (compared on the device). */
sagerun_status sr_buffers_equal(sagerun_context *ctx, uint64_t a, uint64_t b, uint64_t bytes,
                                bool *equal, sagerun_error *err);
/* The first checked call of every entry (before the rounds): poisoned output, one call, a device
 * copy of the output (or its hash in line when there is no room), the shared inputs checked (g). */
sagerun_status sr_verify_first(sagerun_context *ctx, const sagerun_compare_hooks *h, sr_entry *es,
                               size_t n, sr_input_guard *g, bool *stop, sagerun_error *err);
/* The last checked call (after the rounds) and both hashes; hashing runs on several threads, with
 * nothing timed. */
sagerun_status sr_verify_last(sagerun_context *ctx, const sagerun_inputs *in,
                              const sagerun_compare_hooks *h, sr_entry *es, size_t n,
                              sr_input_guard *g, bool stopped, sagerun_error *err);
/* Byte differences against the baseline and accuracy against exact attention, into each entry's
 * check; what could not be measured becomes a warning of rep. */
void sr_verify_outputs(sagerun_context *ctx, const sagerun_inputs *in,
                       const sagerun_compare_options *o, sr_entry *es, size_t n, sr_report *rep);
uint32_t sr_verify_accuracy_rows(const sagerun_problem *p, uint32_t wanted, int backend);
/* The accuracy of one output of in's problem (its dtype and storage, in ctx's memory) against
 * exact attention over the rows a comparison samples (rows: as its accuracy_rows, 0 = the
 * default), as sr_verify_outputs measures each variant's. */
sagerun_status sr_verify_accuracy(sagerun_context *ctx, const sagerun_inputs *in, uint32_t rows,
                                  uint64_t output, sr_accuracy *a, sagerun_error *err);
void sr_verify_release(sagerun_context *ctx, sr_entry *es, size_t n);

/* ---- assemble.c ---- */
/* Cold samples of calls under this long, timed on the device: two instances of one variant were
 * seen to differ by up to 0.6% for a whole process on an H200 (20 of 90 A/As read "differs, below
 * threshold"), an offset the interval cannot see (test/bench/RESULTS.md, issue 12 runs 8-10); the
 * report warns of it. */
#define SR_COLD_INSTANCE_OFFSET_CALL_S 100e-6
/* true when a comparison in cache mode `cache` ("hot", "cold"), timed by sample_clock
 * (sr_sample_timer_clock), whose fastest warmed call took fastest_call_s, gets that warning. */
bool sr_cold_offset_warned(const char *cache, const char *sample_clock, double fastest_call_s);
sagerun_status sr_assemble_report(sr_report *rep, sagerun_context *ctx, const sagerun_inputs *in,
                                  const sr_engine_options *eo, const sr_entry *es, size_t n,
                                  const sr_measurement *m, bool stopped, sagerun_error *err);

#endif
