/* Resource limits checked before a comparison allocates anything: the device memory it needs,
 * estimated from the problem and the variants, against the memory free. Shapes whose sizes or
 * index arithmetic would overflow are refused earlier, by sagerun_problem_check (problem.c), which
 * every path that allocates inputs calls first (sr_inputs_alloc). */
#ifndef SAGERUN_RESOURCE_LIMITS_H
#define SAGERUN_RESOURCE_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Bytes, each part saturating at UINT64_MAX (an absurd shape gives a huge number, never a wrapped
 * small one). */
typedef struct sr_memory_estimate {
    uint64_t inputs;    /* Q, K, V (0 when they exist already) */
    uint64_t outputs;   /* one O per variant */
    uint64_t quantized; /* sage2 tensors, one set per sage2 variant (none shared) */
    uint64_t scratch;   /* quantizer workspace, accuracy reference, a margin for library kernels */
    uint64_t total;
    size_t variants, sage2_variants;
} sr_memory_estimate;

/* The memory of one comparison of the n variants (descriptors; NULL entries are skipped) on
 * problem p (already checked). accuracy_rows: rows sampled for accuracy (0: none). */
void sr_memory_estimate_compare(const sagerun_problem *p,
                                const sagerun_variant_descriptor *const *variants, size_t n,
                                bool include_inputs, uint32_t accuracy_rows,
                                sr_memory_estimate *out);

/* SAGERUN_OUT_OF_MEMORY, with the numbers (needed, by part, and free), when e->total exceeds
 * free_bytes; SAGERUN_OK otherwise. */
sagerun_status sr_memory_check(const sr_memory_estimate *e, uint64_t free_bytes,
                               sagerun_error *err);

#endif
