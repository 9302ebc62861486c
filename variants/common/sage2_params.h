/* Parameters of the sage2 attention kernels (baseline and the variants that share its numerics).
 *
 * This header is included from both C (the plugin glue, which fills it) and CUDA (the kernels,
 * which receive it by value as their only parameter), so it holds plain C types only and its
 * layout must be identical on both sides: every field is 8-byte or 4-byte sized and the 64-bit
 * fields come first.
 *
 * Tensors (SAGE2.md section 1; shapes for layout NHD, HND swaps the N and H axes of Q/K/O);
 * N = seq_len (queries), KV = kv_len (keys, SageAttention's kv_len; = N for a square problem):
 *   q      int8  [B, N, Hq,  D]   per-warp quantized Q
 *   q_scale f32  [B, Hq,  q_scale_per_head]   one per 32-row group, covering whole 128-row blocks
 *   k      int8  [B, KV, Hkv, D]  per-block quantized K (after subtracting k_mean)
 *   k_scale f32  [B, Hkv, k_scale_per_head]   one per 64-row block
 *   v      e4m3  [B, D, Hkv, L]   (NHD) or [B, Hkv, D, L] (HND); L = v_len (KV padded to 64),
 *                                  sequence contiguous, tokens permuted within groups of 16,
 *                                  padding holds zeros
 *   v_scale f32  [B, Hkv, D]
 *   o      fp16  [B, N, Hq,  D]
 * Strides are in elements. */
#ifndef SAGERUN_VARIANTS_SAGE2_PARAMS_H
#define SAGERUN_VARIANTS_SAGE2_PARAMS_H

#include <stdint.h>

typedef struct sage2_attn_params {
    /* device addresses */
    uint64_t q, q_scale, k, k_scale, v, v_scale, o;

    /* element strides of Q and O (same shape) and of K, per axis */
    int64_t q_stride_b, q_stride_n, q_stride_h;
    int64_t k_stride_b, k_stride_n, k_stride_h;
    int64_t o_stride_b, o_stride_n, o_stride_h;
    /* element strides of V8 per axis; the sequence axis is contiguous */
    int64_t v_stride_b, v_stride_h, v_stride_d;

    int32_t batch, seq_len, heads_q, heads_kv, head_dim;
    int32_t q_scale_per_head; /* ceil(N/128)*4 for the baseline's 32-row groups */
    int32_t k_scale_per_head; /* ceil(KV/64) */
    int32_t v_len;            /* padded length L of V8's sequence axis */
    float sm_scale;
    int32_t kv_len; /* KV: keys (rows of K and V); the struct size stays a multiple of 8 */
} sage2_attn_params;

#endif
