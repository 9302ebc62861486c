/* sagerun sweep: the sweep file (its keys are in `sagerun sweep --help`), read and checked in full
 * before anything runs: every workload parsed, its point of the axes, the name of its report file,
 * and the compare options the file sets (implemented in sweep_file.c). */
#ifndef SAGERUN_CLI_SWEEP_FILE_H
#define SAGERUN_CLI_SWEEP_FILE_H

#include <jansson.h>
#include <stdbool.h>

#include "cli.h"
#include "compare_options.h"

typedef struct sr_sweep_file {
    json_t *root;           /* the file's JSON; strings below point into it */
    json_t *expanded;       /* the workloads with the axes applied (NULL: no axes) */
    json_t **axes;          /* per workload: {axis: value} of its point (NULL: no axes) */
    char ***specs;          /* per workload: the variants it compares (NULL: no variant axes) */
    size_t spec_count;      /* entries of each specs[i] */
    char *name;
    char sha256[65];
    sagerun_workload **workloads; /* every workload of the file, parsed and checked */
    char **files;           /* report file name per workload */
    size_t count;
    /* compare options of the file (the command line overrides them) */
    const char *baseline;
    const char **variants;
    size_t variant_count;
    bool has_variants;
    long long warmup, rounds, iterations, accuracy_rows; /* -1: not given */
    double threshold;                                    /* NaN: not given */
    int accuracy, clocks;                                /* -1: not given */
} sr_sweep_file;

/* Reads and checks the sweep file at path into s (zeroed first): an error names the file and the
 * key or workload that is wrong. s is freed with sr_sweep_file_free, also after a failure. */
sagerun_status sr_sweep_file_load(const char *path, sr_sweep_file *s, sagerun_error *err);
void sr_sweep_file_free(sr_sweep_file *s);

/* The effective compare options: the command line over the sweep file over compare's defaults
 * (the baseline: the host's "reference" when neither names one). */
void sr_sweep_file_apply(const sr_sweep_file *s, sr_cli_compare_settings *set, bool on_host);

/* Where the axes sweep variant parameters: each point's variant specs (s->specs), each bound once
 * so that an unknown key or a value out of range stops the sweep before anything runs. */
sagerun_status sr_sweep_file_bind_points(sr_sweep_file *s, const char *path,
                                         const sagerun_compare_options *o,
                                         sagerun_registry *reg, sagerun_error *err);

#endif
