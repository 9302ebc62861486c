/* The comparison report: one model for a report just measured and one read back from a file (ours
 * or the seed's), its JSON form, markdown, the stdout table, and the diff of two reports.
 *
 * The JSON keys of the seed report (../shared/fixtures/seed-report.json) come first, in its order
 * and with its meaning and units (seconds); our additions follow under keys of their own. A model
 * read from the seed file has has_ext false and every extension absent. */
#ifndef SAGERUN_REPORT_H
#define SAGERUN_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"
#include "safe_io.h"
#include "sagerun/compare.h"
#include "stats.h"

/* Accuracy of one output against exact attention over sampled query rows. */
typedef struct sr_accuracy {
    bool present;
    uint64_t rows, elements, nonfinite;
    double cosine, rel_l1, rmse, max_abs;
    char reference[32]; /* how the reference was computed: "fp64-host", "fp32-device" */
} sr_accuracy;

/* How an output's bytes differ from the baseline's. */
typedef struct sr_byte_diff {
    bool present;
    uint64_t elements, differing, first_index, max_ulp;
    double max_abs; /* +Inf when a NaN meets a number */
} sr_byte_diff;

/* How a variant that is not byte-exact was judged by tolerance (tolerance.h). */
typedef struct sr_tolerance {
    bool present;                        /* some limit applied to it */
    double max_ulp, min_cos, max_rel_l1; /* the limits; NaN = none */
    int passed;                          /* 1, 0; -1 = not judged (byte-exact, or did not run) */
    char detail[256];                    /* what was compared and found */
} sr_tolerance;

/* NVML readings taken at the end of one round; -1 / false where unknown. */
typedef struct sr_clock_sample {
    int sm_clock_mhz;
    int temperature_c;
    bool has_throttle;
    uint64_t throttle_reasons; /* nvmlClocksThrottleReasons bits */
} sr_clock_sample;

/* How one variant was timed (the engine's extension; present false = absent). */
typedef struct sr_variant_timing {
    bool present;
    char timer[8];             /* "event", "batch", "graph" */
    uint32_t calls_per_sample; /* K */
    uint32_t warmup_calls;
    double first_call_s, warm_call_s; /* the first warm-up call; the warmed per-call time */
    double clock_mhz;          /* median effective SM clock of its samples; NaN = unknown */
    double energy_per_call_j, mean_power_w; /* NaN = unknown */
    sr_interval energy_interval; /* paired, percent less energy per call than the baseline */
    uint32_t hold_timeouts;
    double host_call_s; /* CUDA: host seconds per timed call to queue it (launch cost); NaN */
    double launch_gap_s; /* cold, CUPTI: per call, added to each kernel-timed sample; NaN */
    double seed_speedup_percent; /* the seed's formula, kept when it lies outside the interval */
} sr_variant_timing;

/* How the comparison was measured (present false = absent: a seed report, or an older one). */
typedef struct sr_measurement_info {
    bool present;
    char schedule[8], order[12], cache[8], end[12]; /* end: rounds/precision/budget/stopped */
    double target_half_width, max_time_s, elapsed_s, half_width; /* NaN = absent */
    uint32_t min_rounds, max_rounds;
    uint32_t redone, redone_clock, redone_throttle;
    double launch_floor_s; /* NaN = unknown */
    uint64_t flush_bytes;
    char sample_clock[32]; /* what timed the samples */
    char order_seed[17];   /* interleave: the seed of the rows' random shifts, 16 hex digits
                            * (schedule.h); "" = null (rotate, or an older report) */
    uint32_t instances;    /* per variant, the rounds spread over them (compare --instances);
                            * 0 = absent (an older report: one) */
} sr_measurement_info;

typedef struct sr_report_variant {
    /* the seed's keys */
    char *name, *path, *output_sha256; /* output_sha256 NULL = null */
    int byte_exact;                    /* 1, 0, -1 = null */
    sr_summary timing;                 /* count 0 and NaN = did not run */
    sr_summary *rounds;
    size_t round_count;
    double speedup_percent; /* NaN = null */
    /* extensions */
    char *label, *version, *backend, *plugin_sha256, *failure; /* NULL = absent */
    char *failure_phase; /* "create", "prepare", "warmup", "run", "destroy"; NULL = absent */
    bool is_baseline;
    bool has_scheduler;
    sagerun_launch_geometry scheduler;
    double prepare_s, tops; /* NaN = absent */
    sr_interval interval;   /* valid false = absent */
    int verdict;            /* sr_verdict; NONE = absent */
    sr_drift drift;         /* set by sr_judge_report (judge.h); not in the JSON but as a warning */
    int deterministic;      /* 1, 0, -1 = absent */
    char *last_output_sha256;
    sr_accuracy accuracy;
    sr_byte_diff byte_diff;
    sr_tolerance tolerance; /* present false = none applied */
    char *extension_path, *extension_sha256; /* a script variant's extension module; NULL = none */
    /* every timed call in seconds, round after round ("samples_s": one array per round);
     * NULL = absent (the seed's format has per-round summaries only) */
    double *samples;
    size_t sample_rounds, samples_per_round;
    sr_variant_timing how; /* "measurement" */
} sr_report_variant;

typedef struct sr_report {
    /* the seed's keys */
    json_t *metadata; /* an object, owned (a reference); NULL is written as {} */
    char *source_commit, *reference_sha256;
    uint64_t q_shape[8];
    size_t q_shape_len;
    bool has_scheduler;
    sagerun_launch_geometry scheduler;
    uint64_t rounds, warmup, iterations;
    sr_report_variant *variants;
    size_t variant_count;
    /* extensions */
    bool has_ext; /* schema_version present */
    long long schema_version;
    bool incomplete;           /* interrupted: only rounds_completed rounds ran ("complete") */
    uint64_t rounds_completed; /* rounds whose timed calls all ran */
    char *tool_version, *tool_commit, *created_utc;
    char *device_name, *backend;
    int compute_capability, driver_version, multiprocessors; /* -1 = absent (the host's) */
    char *driver_release; /* the NVIDIA driver's own version, "580.159.04"; NULL = unknown */
    char *device_uuid;    /* "GPU-8f2c...", from NVML; NULL = unknown (or the host) */
    char *pci_bus_id;     /* "00000000:19:00.0", from the CUDA driver; NULL = unknown */
    bool has_problem;
    sagerun_problem problem;
    /* a varlen problem's lengths as prefix sums ([problem.batch + 1] each, owned; "varlen" in the
     * JSON as the lengths); NULL: dense, or the lengths were not recorded */
    int32_t *cu_seqlens_q, *cu_seqlens_kv;
    double noise_threshold_percent; /* NaN = absent */
    char *expect_sha256;
    char *clock_source;       /* "nvml"; NULL = no clocks */
    char *clock_unavailable;  /* why there are none, when known */
    int max_sm_clock_mhz;     /* -1 = unknown */
    sr_clock_sample *clock_rounds;
    size_t clock_round_count;
    char **warnings;
    size_t warning_count;
    sr_measurement_info measurement; /* "measurement" */
} sr_report;

/* Checks the values of a report read from a file (report_check.c): durations >= 0, hashes of 64
 * hex digits, intervals ordered, labels unique. name: the file, for the message. */
sagerun_status sr_report_check(const sr_report *r, const char *name, sagerun_error *err);

/* Frees what r owns and zeroes it. */
void sr_report_clear(sr_report *r);
/* Copies a varlen problem's lengths (r->problem set first) from sequences into r; nothing for
 * another problem. false on allocation failure. */
bool sr_report_set_sequences(sr_report *r, const sagerun_sequences *sequences);
/* The (query, key) pairs the report's problem attends, as operations (4*D per pair, every head):
 * the recorded lengths of a varlen problem, the seed's q_shape when there is no problem; NaN
 * when neither says. */
double sr_report_operations(const sr_report *r);
/* The features of the problem beyond the 1.1 one, for the header line: "kv_len 4096, causal
 * bottom-right, window (1024, 0), softcap 30, varlen 16 sequences, paged 16" ("" for none). */
void sr_report_format_features(const sr_report *r, char *buf, size_t len);
void sr_report_variant_clear(sr_report_variant *v);
/* Appends a formatted warning unless r has it already; false on allocation failure. */
bool sr_report_add_warning(sr_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* strdup that accepts NULL. */
char *sr_strdup_or_null(const char *s);

/* JSON. to_json returns a new reference or NULL (out of memory). */
json_t *sr_report_to_json(const sr_report *r);
sagerun_status sr_report_write_json(const sr_report *r, const char *path, sagerun_error *err);
/* Parses and validates; `name` (usually the file name) prefixes every error. On failure *out is
 * left cleared. */
sagerun_status sr_report_from_json(json_t *root, const char *name, sr_report *out,
                                   sagerun_error *err);
sagerun_status sr_report_read(const char *path, sr_report *out, sagerun_error *err);

/* Renderings. */
void sr_report_print_table(const sr_report *r, FILE *out);
void sr_report_print_markdown(const sr_report *r, FILE *out);
sagerun_status sr_report_write_markdown(const sr_report *r, const char *path, sagerun_error *err);
/* CSV (report_csv.c): one row per variant; a header names the columns. lead / n_lead: columns
 * of the caller's put first (a sweep's workload); NULL, 0 for none. */
sagerun_status sr_report_write_csv(const sr_report *r, const char *path, sagerun_error *err);
void sr_report_csv_header(FILE *f, const char *const *lead, size_t n_lead);
void sr_report_csv_rows(FILE *f, const sr_report *r, const char *const *lead, size_t n_lead);
void sr_report_csv_failure_row(FILE *f, const char *const *lead, size_t n_lead,
                               const char *failure);
/* One CSV field (quoted where it holds a comma, quote or line break), preceded by a comma unless
 * first; NULL is an empty field. */
void sr_csv_field(FILE *f, const char *text, bool first);
/* Text from a report or a plugin in the text and markdown renderings (report_text.c): control
 * characters and Unicode line breaks written visibly (\xNN, \uNNNN), so that it cannot end its
 * line and forge rows (sr_text_copy: internal.h). A markdown cell escapes '|' and '\' too;
 * sr_line_printf escapes the whole formatted text but the format's own final '\n'. */
void sr_markdown_cell(FILE *out, const char *s);
void sr_line_printf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A variant's label (its name in the seed's format); "[B, N, H, D]" of q_shape. */
const char *sr_report_variant_label(const sr_report_variant *v);
/* How an incomplete report's run ended, into buf: "interrupted after 12 of 20 rounds" (12 rounds
 * where the schedule is timed: it had no set count). Returns buf. */
const char *sr_report_interrupted(const sr_report *r, char *buf, size_t len);
void sr_report_format_shape(const sr_report *r, char *buf, size_t len);

/* ---- diff (report_diff.c) ----
 * Rows of old-against-new, one per variant and point (a sweep's workload; "" for one report). */
typedef struct sr_diff_row {
    char *point, *label;       /* owned; whole, however long (a summary's names, a plugin's labels) */
    double old_p50, new_p50;   /* seconds (the median of the runs' p50s); NaN = absent */
    double change_percent;     /* (new p50 / old p50 - 1) * 100: + = slower (the p50s') */
    sr_interval speedup;       /* the judged change of new against old: + = new faster */
    size_t rounds, new_rounds; /* one run per side: the rounds of each the interval used */
    size_t old_runs, new_runs; /* the runs of each side that judged it (replicates: >= 2) */
    int verdict;               /* sr_verdict of that interval; NONE without one */
    int old_exact, new_exact;  /* byte_exact; -1 = absent */
    unsigned findings;         /* SAGERUN_DIFF_* */
    char finding[160];         /* what the row says: "SLOWER", "LOST BYTE-EXACTNESS", ... */
} sr_diff_row;
typedef struct sr_diff {
    double threshold;          /* percent */
    bool relative;             /* judge each variant's time over its run's baseline's */
    double between_run_sd;     /* percent: calibrated run-to-run sd for one run per side; 0 none */
    double fail_if_slower;     /* gates (percent; NaN = off): SAGERUN_DIFF_GATE */
    double require_faster;
    size_t single_rows;        /* rows judged from one run per side */
    sr_diff_row *rows;
    size_t count, cap;
    unsigned findings;         /* SAGERUN_DIFF_* of every row */
    char notes[16][320];       /* reference output changed, incomplete reports */
    size_t note_count;         /* all of them: those past the array are only counted */
} sr_diff;
void sr_diff_init(sr_diff *d, double threshold_percent, bool relative);
void sr_diff_clear(sr_diff *d);
/* Adds the rows of one pair of reports (point: the sweep's workload, or NULL); fails
 * (INVALID_ARGUMENT) when they are not of the same workload. */
sagerun_status sr_diff_reports(sr_diff *d, const char *point, const sr_report *old_r,
                               const sr_report *new_r, sagerun_error *err);
/* The same for the replicates of each side (n_old, n_new >= 1 runs of one workload): rows and
 * findings from the first run of each, the change judged with the process as the unit
 * (diff_runs.h) where a side has two runs or more. */
sagerun_status sr_diff_runs(sr_diff *d, const char *point, const sr_report *const *old_r,
                            size_t n_old, const sr_report *const *new_r, size_t n_new,
                            sagerun_error *err);
/* A point of old that new lacks (or could not read): a MISSING row saying why. */
sagerun_status sr_diff_missing_point(sr_diff *d, const char *point, const char *why,
                                     sagerun_error *err);
void sr_diff_print(const sr_diff *d, FILE *out, bool markdown);
/* The notes to show: the kept ones, then "and N more notes" for those only counted. */
size_t sr_diff_note_count(const sr_diff *d);
const char *sr_diff_note(const sr_diff *d, size_t i, char *buf, size_t len);
json_t *sr_diff_to_json(const sr_diff *d);
sagerun_status sr_diff_write_json(const sr_diff *d, const char *path, sagerun_error *err);
sagerun_status sr_diff_write_markdown(const sr_diff *d, const char *path, sagerun_error *err);
sagerun_status sr_diff_write_csv(const sr_diff *d, const char *path, sagerun_error *err);
/* A diff set up from the library's (checked) options. */
void sr_diff_options(sr_diff *d, const sagerun_report_diff_options *o);
/* The diff of two reports printed as text (options as sr_diff_options'); *findings:
 * SAGERUN_DIFF_* bits. sr_report_diff: the default options but these two. */
sagerun_status sr_report_diff_opts(const sr_report *old_r, const sr_report *new_r,
                                   const sagerun_report_diff_options *o, FILE *out,
                                   unsigned *findings, sagerun_error *err);
sagerun_status sr_report_diff(const sr_report *old_r, const sr_report *new_r,
                              double threshold_percent, bool relative, FILE *out,
                              unsigned *findings, sagerun_error *err);

/* Output files are written with sr_write_file_atomic (safe_io.h). */

/* ---- NVML (nvml.c): optional, loaded lazily ---- */
typedef struct sr_nvml sr_nvml;
/* Opens NVML for the CUDA device `ordinal` (mapped through CUDA_VISIBLE_DEVICES). NULL when NVML is
 * absent or fails; why goes to `why` (why_len bytes). */
sr_nvml *sr_nvml_open(int ordinal, char *why, size_t why_len);
/* The NVIDIA driver's version ("580.159.04"): NVML's nvmlSystemGetDriverVersion, else the
 * kernel module's /proc/driver/nvidia/version; false (buf "") when neither answers. */
bool sr_nvml_driver_release(char *buf, size_t len);
/* The UUID ("GPU-8f2c...") of the GPU at PCI bus id `pci` ("00000000:19:00.0"), by NVML; false
 * (buf "") when NVML is absent or does not know it. */
bool sr_nvml_uuid_by_pci(const char *pci, char *buf, size_t len);
/* The version in the text of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64
 * Kernel Module  580.159.04  Thu ..."): false when it holds none. */
bool sr_nvidia_proc_version_parse(const char *text, char *buf, size_t len);
void sr_nvml_close(sr_nvml *n);
void sr_nvml_sample(sr_nvml *n, sr_clock_sample *out);
int sr_nvml_max_sm_clock(sr_nvml *n); /* -1 when unknown */
/* Throttle reasons that slow the clocks (power, thermal, hardware slowdown), not idle or app
 * settings. */
uint64_t sr_nvml_slowdown_mask(void);
/* Names of the set bits, comma-separated, into buf. */
void sr_nvml_reason_names(uint64_t reasons, char *buf, size_t len);
/* The device's energy counter in joules (NaN when unknown). */
double sr_nvml_energy_j(sr_nvml *n);
/* Seconds the device spent throttled for power or heat since boot (NaN when unknown): a rise
 * between two readings is throttling in between. */
double sr_nvml_violation_s(sr_nvml *n);


/* Element index of a variant's output (flat, as the byte difference counts them) in its
 * layout's terms: "b 0, n 96, h 1, d 57" (NHD, as the seed's q_shape), "b, h, n, d" (HND), or
 * "token 300 (sequence 1, its query 44), h 0, d 5" (varlen) (report_element.c). */
void sr_report_format_element(const sr_report *r, uint64_t index, char *buf, size_t len);

/* What a speedup in percent (baseline / variant - 1, + faster) means as a factor: "1.25× faster",
 * "10.06× slower", "1.00×" for none; "-" where it means no factor (not finite, or -100% and
 * below). Every readout of a speedup puts it beside the percentage. */
void sr_format_speedup_times(double percent, char *buf, size_t len);
/* The factor itself, baseline / variant (NaN where it means none). */
double sr_speedup_times(double percent);

/* A duration with a unit chosen for it: "243.919 ms", "1.2345 s", "131.30 us"; "-" if not finite. */
void sr_format_seconds(double s, char *buf, size_t len);

#endif
