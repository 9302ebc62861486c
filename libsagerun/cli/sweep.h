/* sagerun sweep and merge: the sweep summary both write (implemented in sweep_summary.c).
 *
 * DIR/summary.json:
 *   {"sagerun_sweep_summary": 1,
 *    "sweep": {"name", "file", "sha256" (of the sweep file's bytes), "workload_count",
 *              "workloads": [every workload name, in the file's order]},
 *    "options": {the effective compare options: baseline, variants, warmup, rounds, iterations,
 *                noise_threshold_percent, accuracy_rows, accuracy, clocks, and compare_args: the
 *                compare command line every workload ran with, past "sagerun compare"},
 *    "shard": {"index", "count"} | null,
 *    "merged_from": [{"summary", "shard"}]          (merge only)
 *    "tool": {"version", "git_commit"},
 *    "workloads": [one row per workload run, by index: {"index", "name", "shape" [B, N, Hq, D],
 *                  "heads_kv", "report" (file name next to summary.json, or null), "status"
 *                  ("ok", "not-byte-exact", "failed", "error"), "error", "device", "backend",
 *                  "ran_on": {"cuda_visible_devices", "uuid", "pci_bus_id", "driver_release",
 *                             "sm_clock_mhz" [lowest, highest]} (sweep_gpus.h; null where unknown),
 *                  "variants": [{"label", "name", "is_baseline", "p50_s", "speedup_percent",
 *                                "interval_percent" [low, high] | null, "verdict",
 *                                "byte_exact", "failure"}]}],
 *    "missing": [{"index", "name"}]                 (merge --allow-missing only)
 *    "mixed_gpus": [the devices of the rows]       (merge --allow-mixed-gpus, when two or more)}
 * DIR/summary.md: the same table as stdout, in markdown. */
#ifndef SAGERUN_CLI_SWEEP_H
#define SAGERUN_CLI_SWEEP_H

#include <jansson.h>

#include "cli.h"

#define SR_SWEEP_SUMMARY_VERSION 1 /* the value of "sagerun_sweep_summary" */
#define SR_SWEEP_SUMMARY_JSON "summary.json"
#define SR_SWEEP_SUMMARY_MD "summary.md"

/* The output folder of a sweep named name when none is given: sweep-NAME, a shard's
 * sweep-NAME-shard-IofN (shard_count 0: not sharded), a '/' of NAME as '_'; NULL: out of memory. */
char *sr_sweep_default_out_dir(const char *name, long shard_index, long shard_count);

/* Creates dir and its parents where missing. */
sagerun_status sr_sweep_mkdirs(const char *dir, sagerun_error *err);

/* Writes DIR/summary.json and DIR/summary.md, each atomically. */
sagerun_status sr_sweep_summary_write(const char *dir, const json_t *summary, sagerun_error *err);

/* The summary as a table: one line per variant and workload (markdown: a markdown table). */
void sr_sweep_summary_print(const json_t *summary, FILE *out, bool markdown);

/* The exit code a summary's rows call for: SR_EXIT_ERROR when a workload failed or a variant
 * did not run, else SR_EXIT_NOT_BYTE_EXACT when some output is not byte-exact, else SR_EXIT_OK. */
int sr_sweep_summary_exit_code(const json_t *summary);

/* The sweep summary at path, when the file is one (a key "sagerun_sweep_summary"): NULL with
 * err->status OK when it is JSON but not one (a report: the report reader says what is wrong),
 * NULL with err set when the file does not read, is not JSON, or is a summary this sagerun
 * cannot read. */
json_t *sr_sweep_summary_load(const char *path, sagerun_error *err);
/* Why a sweep summary's structure is unusable (into why, which it returns), or NULL: the sweep's
 * keys (name, sha256, workload_count >= 0, the workloads' names), options, and each row (index and
 * name as the sweep's, a known status, a report file name next to the summary or none for an
 * error, a shape of four positive integers, variants whose p50_s is >= 0 or null), no workload in
 * two rows. Every reader of summaries (show, diff, plot, merge) checks this. */
const char *sr_sweep_summary_problem(const json_t *root, char *why, size_t len);
/* Whether out_dir may take a summary of this sweep (its "sweep" object) and shard (NULL or null:
 * unsharded, or a merge): true when it holds no summary.json, or one of the same sweep (sha256)
 * and shard, a run again. Another sweep's or shard's summary, or a file that is not one, would be
 * replaced with its reports without a word: false after saying so (cmd names the command).
 * First it takes an exclusive lock on the folder for the rest of the process: a second sweep or
 * merge into it meanwhile is refused. */
bool sr_sweep_out_dir_free(const char *cmd, const char *out_dir, const json_t *sweep,
                           const json_t *shard);
/* The same check without the lock: for sweep --gpus, before its shards run (the merge into
 * out_dir, a process of its own, takes the lock). */
bool sr_sweep_out_dir_takes(const char *cmd, const char *out_dir, const json_t *sweep,
                            const json_t *shard);
/* Whether status is one a summary's row may have: ok, not-byte-exact, failed, incomplete, error. */
bool sr_sweep_status_known(const char *status);

/* Every workload's report (read from dir) as CSV rows, the workload's name first. */
sagerun_status sr_sweep_summary_write_csv(const json_t *summary, const char *dir,
                                          const char *path, sagerun_error *err);

#endif
