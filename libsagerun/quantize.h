/* The sage2 quantizer (SAGE2.md section 1), on the host and on CUDA.
 *
 * Tensors (NHD shapes; HND swaps N and H of Q/K and gives V8 as [B, Hkv, D, L]); N = seq_len
 * (queries), KV = sagerun_problem_kv_len (keys; = N unless the problem says kv_len):
 *   q_int8 [B,N,Hq,D] int8, q_scale [B,Hq,q_scale_per_head] f32 (one per q_group_rows rows,
 *   covering whole q_block_rows blocks), k_int8 [B,KV,Hkv,D] int8 of K - k_mean,
 *   k_scale [B,Hkv,ceil(KV/k_block_rows)] f32, v_fp8 [B,D,Hkv,L] e4m3 (L = KV padded to
 *   v_pad_rows, tokens permuted within groups of 16, padding zeros), v_scale [B,Hkv,D] f32,
 *   k_mean [B,1,Hkv,D] in the input dtype (fp16 for fp16 inputs, bf16 for bf16 inputs), the
 *   mean over K's KV rows. Dense problems only: varlen and paged inputs are refused by name.
 *
 * Numerics: CUDA uses rcp.approx.ftz.f32 and matches SageAttention's quantizer bit for bit. The
 * host uses an IEEE reciprocal (1.0f / a) in its place — a documented deviation: every scale is
 * identical, and an int8/e4m3 value differs by one step where the two reciprocals round
 * differently (about one element in 10^5). Everything else (flush-to-zero, nearest-even INT8,
 * e4m3 satfinite rounding) is emulated exactly. k_mean is torch.mean's, as SageAttention computes
 * it (torch_mean.h): the same order on the host and on CUDA, for the GPU whose properties the
 * plan takes (CUDA: the context's device; host: SAGERUN_TORCH_DEVICE or an H200), so host and
 * CUDA compute the same k_mean.
 *
 * An all-zero V channel (amax = 0) gives v_scale 0 and multiplier R * rcp(0) = inf, so its V8
 * bytes are NaN (0 * inf) and the attention output of that channel is NaN: kept as in the
 * reference (bit-exact path); sr_sage2_count_zero_v_channels lets the harness warn. */
#ifndef SAGERUN_QUANTIZE_H
#define SAGERUN_QUANTIZE_H

#include <stdint.h>

#include "internal.h"
#include "torch_mean.h"

/* The granularities of SageAttention's sm89 kernel (32/128/64/64) with R = v_range (448 for
 * fp32+fp32 accumulation, 2.25 for fp32+fp16), and of its Hopper kernel (16/64/128/128, R 448). */
sagerun_sage2_quant_params sr_sage2_params_sm89(float v_range);
sagerun_sage2_quant_params sr_sage2_params_sm90(void);

/* Sizes derived from a problem and params. */
typedef struct sr_sage2_sizes {
    uint32_t q_scale_per_head; /* ceil(N / q_block_rows) * (q_block_rows / q_group_rows) */
    uint32_t k_scale_per_head; /* ceil(KV / k_block_rows) */
    uint32_t v_len;            /* L: KV padded to v_pad_rows */
    uint64_t q_elements, kv_elements; /* B*N*Hq*D, B*KV*Hkv*D */
    uint64_t q_scale_count, k_scale_count, v_fp8_bytes, v_scale_count, k_mean_count;
    uint32_t mean_slices;      /* ceil(KV / SR_QUANT_MEAN_SLICE) */
} sr_sage2_sizes;

/* Whether the quantizer can use these parameters (block and group sizes, v_range); the reason
 * when not. sr_sage2_sizes_of checks them too; the loader checks a SAGE2 variant's at load. */
sagerun_status sr_sage2_quant_check(const sagerun_sage2_quant_params *params, sagerun_error *err);

/* Checks the params (and the problem: F16/BF16, Hq % Hkv == 0) and computes the sizes with
 * overflow checks. */
sagerun_status sr_sage2_sizes_of(const sagerun_problem *problem,
                                 const sagerun_sage2_quant_params *params, sr_sage2_sizes *sizes,
                                 sagerun_error *err);

/* Allocates every tensor of out in ctx's memory (16-byte aligned) and fills its shape fields and
 * params. On failure nothing stays allocated. */
sagerun_status sr_sage2_tensors_alloc(sagerun_context *ctx, const sagerun_problem *problem,
                                      const sagerun_sage2_quant_params *params,
                                      sagerun_sage2_tensors *out, sagerun_error *err);
/* (declared in internal.h) void sr_sage2_tensors_free(sagerun_context *, sagerun_sage2_tensors *);
 * frees every non-zero address and zeroes them. */

/* Scratch of the CUDA quantizer: K's mean in torch's order (its plan and partial sums), V maxima
 * per 128-token slice, V's multipliers. Allocate once to time repeated quantizations without allocations in between. */
typedef struct sr_sage2_workspace {
    uint64_t kmean_scratch; /* sr_torch_kmean_scratch_floats floats */
    uint64_t partial_max, v_inv;
    sr_torch_mean_plan kmean_plan; /* for the context's device */
} sr_sage2_workspace;

sagerun_status sr_sage2_workspace_alloc(sagerun_context *ctx, const sagerun_problem *problem,
                                        sr_sage2_workspace *ws, sagerun_error *err);
void sr_sage2_workspace_free(sagerun_context *ctx, sr_sage2_workspace *ws);

/* Quantizes Q, K, V (in ctx's memory) into out, allocated by sr_sage2_tensors_alloc with the same
 * problem (its params are used). given_k_mean: address of a k_mean ([B,1,Hkv,D], input dtype)
 * to use instead of computing one (it is copied to out->k_mean), or 0. CUDA: enqueues six
 * kernels on the context's stream and returns (ws required). Host: computes in place (ws
 * ignored, may be NULL). */
sagerun_status sr_sage2_quantize_into(sagerun_context *ctx, const sagerun_problem *problem,
                                      uint64_t q, uint64_t k, uint64_t v, uint64_t given_k_mean,
                                      sagerun_sage2_tensors *out, const sr_sage2_workspace *ws,
                                      sagerun_error *err);

/* The CUDA kernels one by one, for timing them (the host ignores stages and does everything);
 * only the full sequence produces valid outputs. */
enum {
    SR_SAGE2_STAGE_COLUMNS = 1,  /* k_mean (torch_mean.cu, unless given), V partial max */
    SR_SAGE2_STAGE_FINALIZE = 2, /* v_scale, V multipliers, a given k_mean copied */
    SR_SAGE2_STAGE_Q = 4,
    SR_SAGE2_STAGE_K = 8,
    SR_SAGE2_STAGE_V = 16,
    SR_SAGE2_STAGE_ALL = 31
};
sagerun_status sr_sage2_quantize_stages(sagerun_context *ctx, const sagerun_problem *problem,
                                        uint64_t q, uint64_t k, uint64_t v, uint64_t given_k_mean,
                                        sagerun_sage2_tensors *out, const sr_sage2_workspace *ws,
                                        unsigned stages, sagerun_error *err);

/* Allocates out and quantizes, synchronously; *zero_v_channels (when not NULL) receives the count
 * of all-zero V channels. On failure nothing stays allocated.
 * sr_sage2_quantize_inputs (internal.h) is this with given_k_mean 0 and no count. */
sagerun_status sr_sage2_quantize(sagerun_context *ctx, const sagerun_problem *problem, uint64_t q,
                                 uint64_t k, uint64_t v, const sagerun_sage2_quant_params *params,
                                 uint64_t given_k_mean, sagerun_sage2_tensors *out,
                                 uint64_t *zero_v_channels, sagerun_error *err);

/* Counts the V channels of quantized tensors whose scale is not positive (amax = 0: NaN V8). */
sagerun_status sr_sage2_count_zero_v_channels(sagerun_context *ctx,
                                              const sagerun_problem *problem,
                                              const sagerun_sage2_tensors *t, uint64_t *count,
                                              sagerun_error *err);

/* Says on stderr, once per inputs, that V has all-zero channels (count > 0): the sage2 output is
 * NaN there, as SageAttention's is (v_scale 0). */
void sr_sage2_warn_zero_v(sagerun_inputs *in, uint64_t count);

/* The host's float -> INT8 step: nearest-even, saturated to [-128, 127], NaN -> 0. */
int8_t sr_quant_int8_rn_sat(float x);

#endif
