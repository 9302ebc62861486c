/* sagerun: the A/B comparison engine and its reports — part of libsagerun's C ABI.
 *
 * The same engine as `sagerun compare`: a C program creates a context, a registry and inputs
 * (sagerun.h), runs a comparison and reads the results, or writes the report files.
 *
 * One comparison: the baseline and each variant are instantiated for the same inputs and prepared
 * (prepare time measured apart, never in the headline); each runs `warmup` untimed calls; then
 * `rounds` rounds in which every variant runs `iterations` timed calls, the order of the variants
 * rotating by one from round to round so that drift of clocks and temperature hits all alike.
 * Every call is timed by device events on the context's stream (host backend: a monotonic clock).
 * Before the first and the last timed call of each variant its output is filled with a poison
 * pattern (0xFF bytes: NaN in fp16 and bf16); both outputs are hashed (SHA-256). Differing hashes
 * mean the variant is not deterministic. A variant is byte-exact when both hashes equal the
 * reference hash: the baseline's, or the one pinned by the caller. Where bytes differ from the
 * baseline's, the difference is measured on the device (elements, max abs, max ulp, first index).
 * Each output is also checked against exact attention over a sample of query rows (accuracy).
 *
 * Conventions are sagerun.h's: opaque handles, size-prefixed structs, caller-owned sagerun_error,
 * strings owned by the result and valid until it is destroyed. */
#ifndef SAGERUN_COMPARE_H
#define SAGERUN_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "sagerun.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The JSON report's schema_version (an extension key; the seed report has none). */
#define SAGERUN_REPORT_SCHEMA_VERSION 1

typedef enum sagerun_verdict {
    SAGERUN_VERDICT_NONE = 0,     /* the baseline itself, or a variant that did not run */
    SAGERUN_VERDICT_FASTER = 1,   /* the whole 95% interval of the speedup is above +threshold */
    SAGERUN_VERDICT_SLOWER = 2,   /* the whole interval is below -threshold */
    SAGERUN_VERDICT_SAME = 3,     /* the interval lies within [-threshold, +threshold] and holds 0 */
    SAGERUN_VERDICT_AMBIGUOUS = 4, /* anything else: more rounds or a quieter machine needed */
    SAGERUN_VERDICT_BELOW_THRESHOLD = 5 /* within [-threshold, +threshold] but excluding 0: a real
                                         * difference, smaller than the threshold */
} sagerun_verdict;

/* "faster", "slower", "same", "ambiguous", "below-threshold"; NULL for SAGERUN_VERDICT_NONE or
 * unknown values. */
SAGERUN_API const char *sagerun_verdict_name(int verdict);

/* Called between steps of a comparison (never inside a timed region). phase is "prepare",
 * "warmup", "round" or "check"; variant may be NULL; step counts from 1 to steps. */
typedef void (*sagerun_compare_progress_fn)(void *user, const char *phase, const char *variant,
                                            uint32_t step, uint32_t steps);

/* Options: initialise with sagerun_compare_options_init, then change fields. */
/* The most calls one sample may time (sagerun_compare_options.batch). */
#define SAGERUN_MAX_BATCH 10000u

typedef struct sagerun_compare_options {
    uint32_t struct_size;            /* sizeof(sagerun_compare_options) of the caller */
    uint32_t warmup;                 /* untimed calls per variant before round 1 (3) */
    uint32_t rounds;                 /* >= 1; >= 2 for an interval and a verdict (5) */
    uint32_t iterations;             /* timed calls per variant and round, >= 1 (10) */
    double noise_threshold_percent;  /* verdict threshold on the speedup, percent (1.0) */
    const char *baseline;            /* variant name ("baseline") */
    const char *const *variants;     /* variant names, in report order; NULL: every other loaded
                                      * variant of the context's backend, by name */
    size_t variant_count;            /* entries of variants */
    const char *expect_sha256;       /* NULL, or 64 hex digits: the reference output hash */
    uint32_t accuracy_rows;          /* query rows sampled for accuracy; 0: automatic (all rows up
                                      * to 4096, else 1024 on CUDA and 256 on the host) */
    uint32_t flags;                  /* SAGERUN_COMPARE_* */
    sagerun_compare_progress_fn progress; /* NULL: no progress calls */
    void *progress_user;
    /* ---- added after the first release: read only when struct_size covers them ---- */
    const struct sagerun_compare_hooks *hooks; /* NULL: none (see below) */
    /* ---- the measurement engine (0.2). A caller whose struct_size stops before `schedule` gets
     * SAGERUN_SCHEDULE_FIXED with SAGERUN_ORDER_ROTATE: the schedule it asked for before. ---- */
    uint32_t schedule;          /* SAGERUN_SCHEDULE_*: TIMED (default), FIXED or SEED */
    uint32_t order;             /* SAGERUN_ORDER_*: INTERLEAVE (default) or ROTATE */
    uint32_t timer;             /* SAGERUN_TIMER_*: AUTO (default), EVENT, BATCH or GRAPH */
    uint32_t cache;             /* SAGERUN_CACHE_*: HOT (default) or COLD */
    uint32_t batch;             /* calls per sample for BATCH and GRAPH; 0: automatic; at most
                                 * SAGERUN_MAX_BATCH */
    uint32_t min_rounds;        /* TIMED: rounds before the precision target may stop the run (20;
                                 * whole periods); max_time_s may stop it sooner */
    uint32_t max_rounds;        /* TIMED: rounds at most (2000) */
    uint32_t instances;         /* TIMED, FIXED: instances of each variant, the rounds spread over
                                 * them in turn, their spread in the interval (6; 0: the default;
                                 * at most 16); SEED: one. (0.2's reserved0: a caller of 0.2 gets
                                 * the default) */
    double warmup_s;            /* TIMED: warm-up at least this long per variant (0.25 s) */
    double max_time_s;          /* TIMED: budget of the timed rounds, seconds (8) */
    double target_precision_percent; /* TIMED: stop once every interval's half-width is at most
                                      * this, percent points (0.05); 0: run to the budget */
} sagerun_compare_options;

/* The schedule. TIMED: warm-up by time and until the per-call time is stable, then rounds of one
 * sample per variant in interleaved, counterbalanced order until the target precision, the budget
 * or max_rounds (never because of a verdict). FIXED: warmup calls, then `rounds` rounds of
 * `iterations` samples per variant, in `order`. SEED: the seed's schedule exactly: 3 warm-up calls,
 * 5 rounds of 10, rotating order. */
#define SAGERUN_SCHEDULE_TIMED 0u
#define SAGERUN_SCHEDULE_FIXED 1u
#define SAGERUN_SCHEDULE_SEED 2u
/* INTERLEAVE: A,B,A,B... within a round, the starting variant alternating from round to round (a
 * balanced Latin square for more than two), the square's rows in a random shift in every period
 * (the report's measurement.order_seed). ROTATE: each variant's samples of a round back to back,
 * the first variant rotating by one per round (the seed's). */
#define SAGERUN_ORDER_INTERLEAVE 0u
#define SAGERUN_ORDER_ROTATE 1u
/* How one sample is timed (CUDA; see DESIGN and timer.h): the stream is held by a spinning kernel
 * while the events and calls are queued, so the host's launch cost is not timed. EVENT: one call
 * per sample. BATCH: K back-to-back calls (K so that a sample lasts >= 1 ms). GRAPH: K calls
 * captured once into a CUDA graph (the caller vouches that run may be captured). AUTO: EVENT for
 * calls of 1 ms and more, BATCH below. */
#define SAGERUN_TIMER_AUTO 0u
#define SAGERUN_TIMER_EVENT 1u
#define SAGERUN_TIMER_BATCH 2u
#define SAGERUN_TIMER_GRAPH 3u
/* COLD: L2 and the instruction caches are flushed before each sample (a kernel reads a buffer of
 * twice the L2 size, allocated once; the output's address translation is left warm); a cold
 * sample is one call, timed by its kernels' own timestamps where CUPTI loads, plus
 * the variant's launch gap (the device time back-to-back hot calls spend outside their kernels,
 * measured after warm-up; the report's launch_gap_s). */
#define SAGERUN_CACHE_HOT 0u
#define SAGERUN_CACHE_COLD 1u

#define SAGERUN_COMPARE_SKIP_ACCURACY 0x1u /* no reference computation */
#define SAGERUN_COMPARE_NO_CLOCKS 0x2u     /* do not load NVML */

/* The words of the schedule, order, timer and cache fields, as `sagerun compare` takes them and
 * the JSON report's "measurement" writes them. field "schedule": timed, fixed, seed; "order":
 * interleave, rotate; "timer": auto, event, batch, graph; "cache": hot, cold. parse returns the
 * SAGERUN_SCHEDULE_* / _ORDER_ / _TIMER_ / _CACHE_ value of the word, -1 for an unknown field or
 * word (NULL included); word returns NULL for an unknown field or value. */
SAGERUN_API int sagerun_compare_option_parse(const char *field, const char *word);
SAGERUN_API const char *sagerun_compare_option_word(const char *field, uint32_t value);

/* Fills the defaults: the TIMED schedule (see above), interleaved order, AUTO timer, hot cache,
 * threshold 1%, baseline "baseline", every other variant; warmup/rounds/iterations keep the seed's
 * numbers (3, 5, 10) for SAGERUN_SCHEDULE_FIXED. Sets struct_size. */
SAGERUN_API void sagerun_compare_options_init(sagerun_compare_options *opts);

typedef struct sagerun_compare_result sagerun_compare_result;

/* Runs one comparison of variants of reg on inputs (which belong to ctx). A variant that fails
 * (create, prepare or run) is recorded with its reason and the others go on; the call then still
 * returns SAGERUN_OK with a result; so does a failed baseline, every other variant then recorded
 * "not measured: the baseline LABEL failed". Errors: SAGERUN_INVALID_ARGUMENT (options),
 * SAGERUN_NOT_FOUND (a variant name), SAGERUN_OUT_OF_MEMORY (below), or the device's (a lost
 * CUDA context, naming the variant that lost it). opts may be NULL (defaults). On CUDA the device memory the comparison needs beyond the inputs (an output
 * per variant, the quantized tensors of sage2 variants, scratch for the quantizer, the accuracy
 * reference and library kernels) is checked against the memory free before any of it is
 * allocated: SAGERUN_OUT_OF_MEMORY, "the workload does not fit in device memory: needed about
 * ... (... bytes: inputs ..., N outputs ..., ...), free ...: refused before allocating". */
SAGERUN_API sagerun_status sagerun_compare_run(sagerun_registry *reg, sagerun_context *ctx,
                                               sagerun_inputs *inputs,
                                               const sagerun_compare_options *opts,
                                               sagerun_compare_result **out, sagerun_error *err);
/* The same comparison on a workload (workload.h): the memory check above counts the inputs too
 * and comes before they exist, so a workload that cannot fit is refused before anything is
 * allocated or generated; then the workload's inputs are created in ctx
 * (sagerun_workload_create_inputs), compared, and released. The report's metadata is the
 * workload's. */
SAGERUN_API sagerun_status sagerun_compare_run_workload(sagerun_registry *reg,
                                                        sagerun_context *ctx,
                                                        const sagerun_workload *workload,
                                                        const sagerun_compare_options *opts,
                                                        sagerun_compare_result **out,
                                                        sagerun_error *err);
SAGERUN_API void sagerun_compare_result_destroy(sagerun_compare_result *result);

/* The seed report's "timing" object, in seconds. */
typedef struct sagerun_timing_summary {
    uint32_t struct_size;
    uint32_t reserved;
    uint64_t count;
    double mean_s, p50_s, p90_s, p95_s, p99_s, min_s, max_s;
} sagerun_timing_summary;

/* One entry of the comparison; entry 0 is the baseline. Doubles are NaN where unknown (a variant
 * that failed, accuracy skipped); *_present fields say whether a group is filled. */
typedef struct sagerun_compare_variant {
    uint32_t struct_size;
    uint32_t round_count;
    const char *name;         /* the variant name */
    const char *label;        /* unique in the report: name, or name#2.. for repeats (A/A); in a
                                 report of the seed's format, which has none, the name */
    const char *path;         /* its plugin file */
    const char *failure;      /* NULL when it ran; else why not */
    int is_baseline;
    int ran;                  /* every timed call completed */
    sagerun_timing_summary timing; /* all timed calls */
    double prepare_s;
    double tops;              /* 4*B*Hq*N^2*D / p50 / 1e12 */
    double speedup_percent;   /* (p50_baseline / p50 - 1) * 100 */
    double speedup_low_percent, speedup_high_percent; /* 95% interval; NaN when < 2 rounds */
    int verdict;              /* sagerun_verdict */
    char output_sha256[65];   /* first checked call; "" when it did not run */
    char last_output_sha256[65]; /* last checked call */
    int deterministic;        /* both checked outputs identical */
    int byte_exact;           /* deterministic and equal to the reference */
    int accuracy_present;
    uint64_t accuracy_rows;   /* query rows compared with exact attention */
    uint64_t accuracy_nonfinite; /* NaN/Inf elements among them */
    double cosine_similarity, relative_l1, rmse, max_abs_error;
    int byte_diff_present;    /* measured when the output differs from the baseline's */
    uint64_t diff_elements;   /* elements whose bits differ */
    uint64_t first_diff_index; /* element index in the output (problem layout) */
    double max_abs_diff;
    uint64_t max_ulp_diff;
    /* ---- added after the first release: written only when struct_size covers them ---- */
    double speedup_estimate_percent; /* the paired per-round estimate at the interval's centre
                                      * (what the table shows); NaN without an interval */
    uint32_t sample_rounds;          /* sagerun_compare_result_samples: sample_rounds rounds of */
    uint32_t samples_per_round;      /* samples_per_round seconds each (0, 0: no samples) */
    int accepted;                    /* byte-exact, or within its tolerance (below) */
} sagerun_compare_variant;

SAGERUN_API size_t sagerun_compare_result_variant_count(const sagerun_compare_result *result);
SAGERUN_API sagerun_status sagerun_compare_result_variant(const sagerun_compare_result *result,
                                                          size_t index,
                                                          sagerun_compare_variant *out,
                                                          sagerun_error *err);
/* Summary of one round (0-based) of one entry. */
SAGERUN_API sagerun_status sagerun_compare_result_round(const sagerun_compare_result *result,
                                                        size_t index, size_t round,
                                                        sagerun_timing_summary *out,
                                                        sagerun_error *err);
/* Every timed call of one entry in seconds, round after round (rounds * iterations values). */
SAGERUN_API sagerun_status sagerun_compare_result_samples(const sagerun_compare_result *result,
                                                          size_t index, const double **seconds,
                                                          size_t *count, sagerun_error *err);
/* The reference output hash (64 hex digits): the pinned one, or the baseline's; NULL when there is
 * none (a comparison interrupted before the baseline's checked call). */
SAGERUN_API const char *sagerun_compare_result_reference_sha256(
    const sagerun_compare_result *result);
/* Warnings (throttling, skipped variants, accuracy not computed...), one line each. */
SAGERUN_API size_t sagerun_compare_result_warning_count(const sagerun_compare_result *result);
SAGERUN_API const char *sagerun_compare_result_warning(const sagerun_compare_result *result,
                                                       size_t index);
/* 1 when every entry ran and is byte-exact. */
SAGERUN_API int sagerun_compare_result_all_ran(const sagerun_compare_result *result);
SAGERUN_API int sagerun_compare_result_all_byte_exact(const sagerun_compare_result *result);

/* Report files. metadata_json: the workload's metadata as a JSON object text (copied into the
 * report's "metadata"), or NULL for {}. The JSON report has every key of the seed report with the
 * seed's meaning and units, in the seed's order, then the extensions. Files are written atomically
 * (a temporary file in the same folder, then rename). */
SAGERUN_API sagerun_status sagerun_compare_result_set_metadata(sagerun_compare_result *result,
                                                               const char *metadata_json,
                                                               sagerun_error *err);
SAGERUN_API sagerun_status sagerun_compare_result_write_json(const sagerun_compare_result *result,
                                                             const char *path,
                                                             const char *metadata_json,
                                                             sagerun_error *err);
SAGERUN_API sagerun_status sagerun_compare_result_write_markdown(
    const sagerun_compare_result *result, const char *path, sagerun_error *err);
/* The human-readable table (variant, p50, spread, speedup with interval, verdict, byte-exact,
 * accuracy) and the warnings. */
SAGERUN_API void sagerun_compare_result_print(const sagerun_compare_result *result, FILE *out);

/* CSV (RFC 4180), one row per variant for spreadsheets and pandas: variant, is_baseline,
 * backend, the problem (batch, seq_len, heads_q, heads_kv, head_dim, layout, dtype, causal),
 * count, p50_s, min_s, p90_s, mean_s, tops, speedup_percent, speedup_low_percent,
 * speedup_high_percent, verdict, byte_exact, output_sha256, cosine_similarity, relative_l1,
 * failure, accepted_by, complete (false: the run was interrupted, its numbers cover the rounds
 * finished); empty where the report has no value. write_csv writes the header and the rows as a
 * file (as sagerun_file_write writes). header and rows print them to a stream after leading
 * columns of the caller's (e.g. a sweep's "workload"): lead names the columns in the header,
 * the values in the rows (n_lead of each; NULL, 0 for none). failure_row prints one row of a
 * comparison that has no report (a sweep's workload that failed): the leading values, then every
 * column empty but failure. */
SAGERUN_API sagerun_status sagerun_compare_result_write_csv(const sagerun_compare_result *result,
                                                            const char *path, sagerun_error *err);
SAGERUN_API void sagerun_compare_csv_header(FILE *out, const char *const *lead, size_t n_lead);
SAGERUN_API void sagerun_compare_result_csv_rows(const sagerun_compare_result *result, FILE *out,
                                                 const char *const *lead, size_t n_lead);
SAGERUN_API void sagerun_compare_csv_failure_row(FILE *out, const char *const *lead, size_t n_lead,
                                                 const char *failure);

/* ---- Reports read back (any report: ours or the seed's) ---------------------------------------*/
/* Reads and validates a JSON report as a result: every accessor and writer above works on it
 * (the round summaries and samples are the file's). A report in the seed's format reads as it is
 * (no interval, verdict or TOPS: see sagerun_compare_result_derive). Errors name the file and
 * the key ("r.json: variants[1].timing.p50_s: expected a number"); the file is read as
 * sagerun_file_read reads. */
SAGERUN_API sagerun_status sagerun_compare_result_read(const char *path,
                                                       sagerun_compare_result **out,
                                                       sagerun_error *err);
/* What a report says about the whole comparison. Strings are owned by the result. */
typedef struct sagerun_compare_info {
    uint32_t struct_size;        /* sizeof(sagerun_compare_info) of the caller: only that much
                                  * is written */
    int schema_version;          /* SAGERUN_REPORT_SCHEMA_VERSION (or the one a file says) for a
                                  * report of ours; 0 for one in the seed's format */
    uint64_t q_shape[8];         /* the seed's q_shape ([B, N, Hq, D]) */
    uint32_t q_shape_len;
    int complete;                /* sagerun_compare_result_complete */
    uint64_t warmup, rounds, iterations; /* the seed's "warmup", "rounds",
                                          * "iterations_per_round" */
    double noise_threshold_percent; /* of the verdicts; NaN when absent (the seed's format) */
    const char *source_commit;   /* NULL when absent */
    const char *device_name;     /* NULL when absent */
    const char *backend;         /* "cuda", "host"; NULL when absent */
    int compute_capability;      /* major*10 + minor; -1 when absent (the host's) */
    int has_problem;             /* problem is filled (our reports) */
    sagerun_problem problem;
} sagerun_compare_info;
SAGERUN_API sagerun_status sagerun_compare_result_info(const sagerun_compare_result *result,
                                                       sagerun_compare_info *out,
                                                       sagerun_error *err);
/* For a report in the seed's format: the interval, verdict (at the 1% default threshold) and TOPS
 * of every variant derived from its per-round p50s and q_shape by the engine's own judgement, and
 * a warning saying so, as `sagerun show` shows such a report. A report of ours is left as it
 * is. */
SAGERUN_API void sagerun_compare_result_derive(sagerun_compare_result *result);

/* Reads and validates a JSON report and prints it as the table (markdown != 0: as markdown).
 * Errors name the file and the key ("r.json: variants[1].timing.p50_s: expected a number"). */
SAGERUN_API sagerun_status sagerun_report_show(const char *path, int markdown, FILE *out,
                                               sagerun_error *err);

typedef struct sagerun_report_diff_options {
    uint32_t struct_size;
    double threshold_percent; /* noise threshold: slower beyond it is a regression (1.0) */
    /* ---- added after the first release: read only when struct_size covers it ---- */
    int relative; /* nonzero: judge each variant by its time over its own run's baseline's,
                   * round by round (both ran interleaved in each round), so that what slowed a
                   * whole run alike cancels; the baseline (the same label in both) is not
                   * judged, and without one the variants are judged by time (a note says so).
                   * 0: by time (`sagerun diff --absolute`). sagerun_report_diff_options_init
                   * sets 1 (since library 0.3; it set 0 before) */
    /* ---- added in library 0.3 ---- */
    double between_run_sd_percent; /* run-to-run sd of a variant's time on this machine (a
                                    * calibration, `sagerun diff --calibrate`): where each side
                                    * has one run, the interval is widened by it; 0 (default):
                                    * none, and the diff says that it cannot tell */
    double fail_if_slower_percent; /* a gate (NaN, the default: off): SAGERUN_DIFF_GATE when a
                                    * variant's whole interval is slower than -PCT (compare's
                                    * --fail-if-slower) */
    double require_faster_percent; /* a gate (NaN: off): SAGERUN_DIFF_GATE when a variant's
                                    * interval is not wholly above +PCT, or it has none */
} sagerun_report_diff_options;

SAGERUN_API void sagerun_report_diff_options_init(sagerun_report_diff_options *opts);

#define SAGERUN_DIFF_REGRESSION 0x1u      /* some variant slower beyond the threshold, or one
                                             that ran in old and failed or did not run in new */
#define SAGERUN_DIFF_LOST_BYTE_EXACT 0x2u /* some variant byte-exact in old, not in new */
#define SAGERUN_DIFF_MISSING 0x4u         /* a variant of old is absent from new */
#define SAGERUN_DIFF_LOST_ACCEPTANCE 0x8u /* some variant accepted in old (byte-exact, or within
                                             its tolerance) is not in new (e.g. "tol. FAIL") */
#define SAGERUN_DIFF_GATE 0x10u           /* a gate of the options is not met (never set
                                             without one) */

/* Compares two reports of the same workload (same q_shape and metadata; SAGERUN_INVALID_ARGUMENT
 * when not), prints per variant the judged speedup of new against old (+ = new faster) and
 * byte-exactness changes, and sets *findings to SAGERUN_DIFF_* bits. Variants are matched by
 * label (name in the seed's format). */
SAGERUN_API sagerun_status sagerun_report_diff(const char *old_path, const char *new_path,
                                               const sagerun_report_diff_options *opts, FILE *out,
                                               unsigned *findings, sagerun_error *err);

/* ---- Tolerance ---------------------------------------------------------------------------------
 * A variant whose output is not byte-exact (a torch SDPA against a sage2 kernel, a float32
 * rewrite) is accepted when it stays within limits the caller sets, instead of failing:
 *   SAGERUN_TOLERANCE_MAX_ULP     the largest difference from the baseline's output in units in
 *                                 the last place of the output dtype (a NaN against a number
 *                                 fails);
 *   SAGERUN_TOLERANCE_MIN_COS     the least cosine similarity with exact attention;
 *   SAGERUN_TOLERANCE_MAX_REL_L1  the largest relative L1 error against exact attention.
 * A limit holds for every variant, or for one: a spec "[LABEL=]VALUE", LABEL a variant's label
 * or name (the limit given for a variant wins over the general one). Byte-exact variants need no
 * tolerance; a variant that did not run is not judged. The report then says per variant which
 * limits applied and how it came out (JSON "tolerance", "accepted_by"; the table's "tol. ok" /
 * "tol. FAIL"). `sagerun compare --max-ulp/--min-cos/--max-rel-l1` are these. */
#define SAGERUN_TOLERANCE_MAX_ULP 0
#define SAGERUN_TOLERANCE_MIN_COS 1
#define SAGERUN_TOLERANCE_MAX_REL_L1 2
typedef struct sagerun_tolerance sagerun_tolerance;
SAGERUN_API sagerun_status sagerun_tolerance_create(sagerun_tolerance **out, sagerun_error *err);
SAGERUN_API void sagerun_tolerance_destroy(sagerun_tolerance *tolerance);
/* Adds a spec for a metric: SAGERUN_INVALID_ARGUMENT naming the option ("--max-ulp 'x': ...")
 * for a bad value, an unknown metric, more than 32 limits of one metric, or a second limit of
 * the metric for the same label (or a second general one). */
SAGERUN_API sagerun_status sagerun_tolerance_add(sagerun_tolerance *tolerance, int metric,
                                                 const char *spec, sagerun_error *err);
/* How many limits of a metric were added (0 for an unknown metric). */
SAGERUN_API size_t sagerun_tolerance_count(const sagerun_tolerance *tolerance, int metric);
/* Judges every variant of the result that is not byte-exact by the limits (NULL: none); limits
 * that name no variant of the result become warnings of it. */
SAGERUN_API void sagerun_compare_result_apply_tolerance(sagerun_compare_result *result,
                                                        const sagerun_tolerance *tolerance);
/* 1 when every entry's output is acceptable: byte-exact, or within its tolerance. */
SAGERUN_API int sagerun_compare_result_all_accepted(const sagerun_compare_result *result);

/* ---- Diffs of many reports: two sweeps, point by point ------------------------------------------
 * A diff holds rows of old against new, one per variant of old and point (a sweep's workload, or
 * none for one pair of reports), judged as sagerun_report_diff judges them: from the per-round
 * p50s of each run, never paired across runs (slower only when the whole 95% interval of the
 * speedup of new against old, + = new faster, lies beyond the threshold; the ratio of the p50s
 * when either has fewer than two usable rounds, and the row says so); sagerun_diff_add_runs for
 * several runs per side. */
typedef struct sagerun_diff sagerun_diff;
/* opts: NULL for the defaults (threshold 1%). */
SAGERUN_API sagerun_status sagerun_diff_create(const sagerun_report_diff_options *opts,
                                               sagerun_diff **out, sagerun_error *err);
SAGERUN_API void sagerun_diff_destroy(sagerun_diff *diff);
/* Adds the rows of one point: every variant of old_result, matched by label in new_result
 * (absent: a MISSING row; no longer running or no longer byte-exact: its finding). point: the
 * sweep's workload, or NULL. SAGERUN_INVALID_ARGUMENT, adding nothing, when the two are not
 * reports of the same workload (q_shape, problem and metadata). */
SAGERUN_API sagerun_status sagerun_diff_add(sagerun_diff *diff, const char *point,
                                            const sagerun_compare_result *old_result,
                                            const sagerun_compare_result *new_result,
                                            sagerun_error *err);
/* The same for several runs of each side (compare/sweep --repeat: n_old, n_new >= 1, each a
 * report of the same workload): the rows, byte-exactness and failures from the first run of each
 * side, the p50s the median of the runs', and the change judged with the process as the unit:
 * each run gives one estimate (its time over its baseline's, paired within the run; --absolute:
 * its p50), each weighted by its own interval and the runs' spread (DerSimonian-Laird, with
 * the Hartung-Knapp scale and Welch's degrees of freedom; --absolute, without intervals: Welch's
 * t on them). One run per side: both runs' rounds, never paired by round (Yuen), widened by
 * between_run_sd_percent where set. */
SAGERUN_API sagerun_status sagerun_diff_add_runs(sagerun_diff *diff, const char *point,
                                                 const sagerun_compare_result *const *old_results,
                                                 size_t n_old,
                                                 const sagerun_compare_result *const *new_results,
                                                 size_t n_new, sagerun_error *err);
/* A point of old that new lacks or could not read: one MISSING row saying why. */
SAGERUN_API sagerun_status sagerun_diff_add_missing(sagerun_diff *diff, const char *point,
                                                    const char *why, sagerun_error *err);
/* SAGERUN_DIFF_* bits of every row. */
SAGERUN_API unsigned sagerun_diff_findings(const sagerun_diff *diff);
/* The rows as the table `sagerun diff` prints (markdown != 0: a markdown table), then notes
 * (a changed reference output, incomplete reports). */
SAGERUN_API void sagerun_diff_print(const sagerun_diff *diff, FILE *out, int markdown);
/* Files, as sagerun_file_write writes: JSON ({"sagerun_diff": 1, "threshold_percent",
 * "method", "regression", "rows": [{"point", "variant", "old_p50_s", "new_p50_s",
 * "p50_change_percent", "speedup_interval_percent", "verdict", "old_byte_exact",
 * "new_byte_exact", "regression", "lost_byte_exact", "lost_acceptance", "missing", "finding"}],
 * "notes"}), the markdown table, or CSV (one row per point and variant; the same flags as
 * columns). */
SAGERUN_API sagerun_status sagerun_diff_write_json(const sagerun_diff *diff, const char *path,
                                                   sagerun_error *err);
SAGERUN_API sagerun_status sagerun_diff_write_markdown(const sagerun_diff *diff, const char *path,
                                                       sagerun_error *err);
SAGERUN_API sagerun_status sagerun_diff_write_csv(const sagerun_diff *diff, const char *path,
                                                  sagerun_error *err);

/* ---- Reliability hooks (added after the first release) ----------------------------------------
 * What a caller needs to contain faulty variants and to keep partial results: every call into a
 * variant's code announced before and after (a supervising process learns which variant was
 * running when it crashed or hung, and how long calls take), a way to stop a comparison early
 * with a report of the rounds finished, and entries to leave out (recorded as failed). */

/* One call into a variant's plugin code. phase: "create" (geometry and create), "prepare",
 * "warmup", "check" (an untimed call with the output poisoned before and hashed after: one after
 * the warm-up, one after the rounds), "run" (a timed sample: its calls) or "destroy". */
typedef struct sagerun_compare_call {
    uint32_t struct_size;
    int end;                /* 0: the call begins; 1: it returned */
    const char *label;      /* the entry's label */
    const char *phase;
    uint32_t round;         /* "run": the round, from 1; else 0 */
    double seconds;         /* end: wall-clock seconds of the call */
    const char *failure;    /* end: NULL, or the failure recorded for the entry */
    const char *failure_phase; /* end: the phase recorded with the failure */
    int context_lost;       /* end: the failure left the CUDA context unusable: the comparison
                             * returns SAGERUN_CUDA next, naming this entry */
    /* ---- added later: read only when struct_size covers it ---- */
    uint32_t calls;         /* the variant's calls this event covers: the sample's K for "run"
                             * and for a CUDA graph's first launch ("warmup"), else 1. A watchdog
                             * scales its limit by it: a sample of K calls takes K calls' time */
} sagerun_compare_call;

typedef struct sagerun_compare_hooks {
    uint32_t struct_size;   /* sizeof(sagerun_compare_hooks) of the caller */
    uint32_t reserved;
    /* Called before and after every call into a variant (from the comparing thread). */
    void (*call)(void *user, const sagerun_compare_call *call);
    void *call_user;
    /* Polled between calls (it may be called often: keep it cheap, e.g. read a flag a signal
     * handler sets). Nonzero stops the comparison: the result then holds the rounds finished so
     * far, sagerun_compare_result_complete says 0, and byte differences and accuracy are not
     * measured. */
    int (*interrupted)(void *user);
    void *interrupted_user;
    /* Entries not to run, by label: each stays in the report as failed, with its phase and
     * reason (e.g. a crash seen by a supervising process). Leaving out the baseline measures
     * nothing: every other entry is recorded failed too ("not measured: the baseline LABEL
     * failed") and the result holds the baseline's failure. */
    const char *const *skip_labels;
    const char *const *skip_phases;
    const char *const *skip_reasons;
    size_t skip_count;
} sagerun_compare_hooks;

/* 1 when every round ran, 0 when the comparison was interrupted (hooks->interrupted). */
SAGERUN_API int sagerun_compare_result_complete(const sagerun_compare_result *result);
/* Rounds whose timed calls all ran (rounds, when complete). */
SAGERUN_API uint32_t sagerun_compare_result_rounds_completed(const sagerun_compare_result *result);
/* The phase of an entry's failure ("create", "prepare", "warmup", "check", "run", "destroy"), or
 * NULL. */
SAGERUN_API const char *sagerun_compare_result_failure_phase(const sagerun_compare_result *result,
                                                             size_t index);

#ifdef __cplusplus
}
#endif
#endif
