/* Deterministic synthetic inputs (see kernels/generate_math.h for the arithmetic). */
#ifndef SAGERUN_GENERATE_H
#define SAGERUN_GENERATE_H

#include <stdint.h>

#include "internal.h"

/* Distribution knobs of a synthetic workload. Real numbers are rounded to multiples of 1/256 when
 * the generator runs (the integer generator works in Q.8); each must lie in [0, 255]. */
typedef struct sr_synthetic {
    uint64_t seed;
    double q_std, k_std, v_std; /* standard deviation of each tensor (default 1) */
    double k_bias;              /* std of K's per-(kv head, channel) bias; 0 = off (default 2) */
    uint32_t outlier_channels;  /* channels per head of Q and K with a larger std (default 0) */
    double outlier_scale;       /* their std multiplier, >= 1 (default 8) */
} sr_synthetic;

#define SR_SYNTHETIC_KNOB_MAX 255.0

/* The defaults above with the given seed. */
void sr_synthetic_default(sr_synthetic *syn, uint64_t seed);

/* Checks the knobs' ranges against a problem (outlier_channels <= head_dim). */
sagerun_status sr_synthetic_check(const sr_synthetic *syn, const sagerun_problem *problem,
                                  sagerun_error *err);

/* Fills Q, K and V (addresses in ctx's memory, any of them 0 to skip) of a checked problem.
 * CUDA: one kernel launch on the context's stream, asynchronous. Host: computed in place. Both
 * produce the same bytes. CUDA requires head_dim % 8 == 0 and 16-byte aligned buffers. */
sagerun_status sr_generate_inputs(sagerun_context *ctx, const sagerun_problem *problem,
                                  const sr_synthetic *syn, uint64_t q, uint64_t k, uint64_t v,
                                  sagerun_error *err);

/* The host implementation, for a tensor in host memory: tensor is 0 (Q), 1 (K) or 2 (V). */
sagerun_status sr_generate_tensor_host(const sagerun_problem *problem, const sr_synthetic *syn,
                                       int tensor, void *out, sagerun_error *err);

#endif
