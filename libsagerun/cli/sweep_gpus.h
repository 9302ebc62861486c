/* sagerun sweep --gpus: one shard per GPU of this host, run in parallel and merged (sweep_gpus.c);
 * and where each point of a sweep ran, which every summary row records. */
#ifndef SAGERUN_CLI_SWEEP_GPUS_H
#define SAGERUN_CLI_SWEEP_GPUS_H

#include <jansson.h>
#include <stdio.h>

#include "compare_options.h"
#include "sweep_file.h"

/* Test hook: SAGERUN_TEST_FAKE_GPUS=N (1 to 64) or "MODEL,MODEL,..." makes --gpus see that many
 * GPUs (of those models; "fake GPU" for N) instead of asking the CUDA driver. Each shard is then
 * bound to its fake GPU through CUDA_VISIBLE_DEVICES as to a real one, and runs on whatever
 * backend the options say (--backend host in CI). */
#define SR_SWEEP_FAKE_GPUS_ENV "SAGERUN_TEST_FAKE_GPUS"

/* Whether text is a --gpus value: "all" or ordinals "0,2,3" (no repeats). */
bool sr_sweep_gpus_valid(const char *text);

/* What `sagerun sweep --gpus` runs with. */
typedef struct sr_sweep_gpus_run {
    const char *gpus;       /* "all" or "0,2,3" */
    const char *sweep_path; /* the sweep file */
    size_t workload_count;  /* its points */
    const char *out_dir;    /* the merged summary's folder; shard K in OUT/gpu-K */
    const char *csv_path;   /* --csv of the merged summary, or NULL */
    bool quiet, allow_mixed;
} sr_sweep_gpus_run;

/* Runs shard I/N of the sweep on the I-th GPU asked, all at once, each a child `sagerun sweep
 * --shard I/N --claim-dir` with the compare options of set, bound to its GPU by
 * CUDA_VISIBLE_DEVICES (its log in OUT/gpu-K.log), taking the points heaviest first as it gets
 * free; prints a line per finished point naming its GPU; then merges the shards that
 * wrote a summary (merge --allow-missing: a failed shard costs only its points) into out_dir and
 * prints the table. Returns sweep's exit code (1 also when a shard failed or a point is missing). */
int sr_sweep_gpus(const sr_sweep_gpus_run *run, const sr_cli_compare_settings *set);

/* The points of a sweep, heaviest first (B x N x keys x Hq x D; ties by index), the order in which
 * the shards of --gpus claim them: the longest run starts first, and a GPU that is done takes
 * the next. NULL when out of memory. */
size_t *sr_sweep_heaviest_first(const sr_sweep_file *s);
/* Claims point i for this process in claim_dir (--claim-dir: a file named i, created exclusively);
 * false when another shard has it, or, said, when the folder cannot take it. */
bool sr_sweep_claim(const char *claim_dir, size_t i);

/* Where the row's point ran, for its "ran_on": {"cuda_visible_devices" (this process's, or null),
 * "uuid", "pci_bus_id", "driver_release", "sm_clock_mhz" [lowest, highest] of its rounds} from the
 * report next to the summary (null where the report has none). NULL when out of memory. */
json_t *sr_sweep_ran_on(const char *out_dir, const json_t *row);

/* Under a summary's table: one line per place its points ran (GPU model, UUID or
 * CUDA_VISIBLE_DEVICES) when there are two or more, and the models mixed (merge
 * --allow-mixed-gpus). */
void sr_sweep_print_where(const json_t *summary, FILE *out, const char *bullet);

#endif
