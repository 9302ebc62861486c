/* Sweep axes (sweep_axes.c): a cartesian product over workload fields and variant parameters.
 *
 *   "axes": {"N": [1024, 4096], "dtype": ["fp16", "bf16"], "tuned[block]": [64, 128, 256]}
 *
 * Each workload of the sweep runs once per combination of the axes' values (the first axis varies
 * slowest), named "<name>/N=1024,dtype=fp16,tuned[block]=64". Workload axes: B, N, Hq, D set that
 * entry of an inline workload's "shape"; heads_kv, dtype, layout, causal and sm_scale that key.
 * A variant-parameter axis VARIANT[KEY] gives every compared variant named VARIANT (plain or with
 * other parameters) the value KEY=value at that point: tuned -> tuned[block=64]; the baseline keeps
 * its own. Workload files take variant-parameter axes only. */
#ifndef SAGERUN_CLI_SWEEP_AXES_H
#define SAGERUN_CLI_SWEEP_AXES_H

#include <jansson.h>

#include "cli.h"

#define SR_SWEEP_MAX_POINTS 4096
#define SR_SWEEP_MAX_AXES 16

/* Every workload of list once per point of axes: out[i] the workload (an inline one with the
 * point applied and its name set; a workload file's path as it was, named after loading with
 * sr_sweep_point_label), points[i] the point's {axis: value} (owned by the caller). */
sagerun_status sr_sweep_axes_expand(const char *file, const json_t *list, const json_t *defaults,
                                    const json_t *axes, json_t **out, json_t ***points,
                                    size_t *count, sagerun_error *err);

/* "N=1024,tuned[block]=64": the point's values in axis order (malloc'ed; NULL: out of memory). */
char *sr_sweep_point_label(const json_t *point);

/* The axes of a sweep summary (its first row's "axes", in order): up to SR_SWEEP_MAX_AXES names
 * into names, their count returned (0: no axes). Each row's value of one as text (malloc'ed;
 * NULL when the row has none): 1024, fp16, true. */
size_t sr_sweep_summary_axes(const json_t *summary, const char *names[SR_SWEEP_MAX_AXES]);
char *sr_sweep_row_axis_value(const json_t *row, const char *axis);

/* Whether any axis of the point is a variant parameter. */
bool sr_sweep_point_has_variant_axes(const json_t *point);

/* The variant specs one point compares: variants[0..n) with the point's variant-parameter values
 * added to those named by an axis. *out: n malloc'ed strings (sr_sweep_specs_free). Errors name
 * the axis: its variant is not among variants (or no variants are named), or a spec sets the key
 * the axis sweeps. */
sagerun_status sr_sweep_point_variants(const char *file, const json_t *point,
                                       const char *const *variants, size_t n, char ***out,
                                       sagerun_error *err);
void sr_sweep_specs_free(char **specs, size_t n);

/* "FILE: key 'KEY': expected EXPECTED, found a string" for the sweep file's keys. */
sagerun_status sr_sweep_bad_key(const char *file, const char *key, const char *expected,
                                const json_t *found, sagerun_error *err);

#endif
