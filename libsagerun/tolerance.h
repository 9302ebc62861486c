/* Tolerance mode: a variant whose output is not byte-exact (a torch SDPA against a sage2 kernel, a
 * float32 rewrite) is accepted when it stays within limits the caller sets, instead of failing the
 * comparison (compare's exit 3):
 *   max_ulp     the largest difference from the baseline's output, in units in the last place of
 *               the output dtype (the report's byte_diff.max_ulp; a NaN against a number fails);
 *   min_cos     the least cosine similarity with exact attention (the report's accuracy);
 *   max_rel_l1  the largest relative L1 error against exact attention.
 * A limit holds for every variant, or for one: "[LABEL=]VALUE", LABEL a variant's label or name
 * (the one given for a variant wins over the general one). Byte-exact variants need no tolerance;
 * a variant that did not run is not judged. The report says, per variant, which limits applied,
 * whether it passed and why (sr_report_variant.tolerance), and how it was accepted. */
#ifndef SAGERUN_TOLERANCE_H
#define SAGERUN_TOLERANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"
#include "sagerun/compare.h"

enum { SR_TOL_MAX_ULP = 0, SR_TOL_MIN_COS = 1, SR_TOL_MAX_REL_L1 = 2, SR_TOL_METRICS = 3 };
#define SR_TOL_MAX_LIMITS 32 /* per metric */

typedef struct sr_tolerance_limit {
    char label[SR_LABEL_MAX + 16]; /* "" = every variant; as long as a registry label may be */
    double value;
} sr_tolerance_limit;

typedef struct sr_tolerance_set {
    sr_tolerance_limit limits[SR_TOL_METRICS][SR_TOL_MAX_LIMITS];
    size_t n[SR_TOL_METRICS];
} sr_tolerance_set;

/* The option that sets a metric: "--max-ulp", "--min-cos", "--max-rel-l1". */
const char *sr_tolerance_option(int metric);
/* Adds "[LABEL=]VALUE" for metric; false with the reason in err (names the option). */
bool sr_tolerance_add(sr_tolerance_set *t, int metric, const char *spec, char *err, size_t len);
bool sr_tolerance_empty(const sr_tolerance_set *t);
/* Judges every variant of r that is not byte-exact by t, replacing any earlier judgement (t NULL
 * or empty: none); limits naming no variant of r become warnings of r. */
void sr_tolerance_apply(sr_report *r, const sr_tolerance_set *t);
/* The limits of the public handle (compare.h's sagerun_tolerance). */
const sr_tolerance_set *sr_tolerance_limits(const sagerun_tolerance *t);
/* Whether the variant's output is acceptable: byte-exact, or within its tolerance. */
bool sr_report_variant_accepted(const sr_report_variant *v);

/* The report's "tolerance" object (null when none applied), and back: NULL, or what is wrong. */
json_t *sr_tolerance_to_json(const sr_tolerance *t);
const char *sr_tolerance_from_json(json_t *o, sr_tolerance *t);

#endif
