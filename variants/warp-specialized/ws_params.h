/* Kernel parameter of the `warp-specialized` variant: the sage2 parameters plus the tensor maps
 * of the bulk tensor copies (TMA) of Q, K and V8, built on the host (warp_specialized.c) with
 * cuTensorMapEncodeTiled. Included from C and CUDA; CUtensorMap (cuda.h) is 64-byte aligned on
 * both sides, so the layout is the same.
 *
 * Every map is 4-D with the innermost axis contiguous (Q, K: the head dimension; V8: the
 * sequence) and one box per copy: 64 rows of Q or K ([64][D] int8), or all D channels of 64 V8
 * slots ([D][64] e4m3), swizzled as the kernels' smem_offset (128-byte rows: 128B, 64-byte rows:
 * 64B). The two middle axes are the row (sequence or channel) and the head, in the order of their
 * strides: *_heads_inner says the head axis is map axis 1 (NHD) rather than axis 2 (HND). */
#ifndef SAGERUN_VARIANTS_WS_PARAMS_H
#define SAGERUN_VARIANTS_WS_PARAMS_H

#include <cuda.h>

#include "../common/sage2_params.h"

/* The CTA program (warp_specialized_kernel.cu): a producer warpgroup and WS_CONSUMER_WGS consumer
 * warpgroups of WS_SLICES M = 64 tiles each (one 16-row slice per warp and tile):
 *   SLICES 2, WGS 1: 128 rows, 256 threads, two CTAs per SM (3 KV stages);
 *   SLICES 2, WGS 2: 256 rows (two of SAGE2.md's 128-row blocks), 384 threads, one CTA per SM;
 *   SLICES 1, WGS 2: 128 rows, 384 threads, one CTA per SM, each softmax overlapping its own
 *                    warpgroup's next Q·Kᵀ and previous P·V.
 * Measured on the H200: test/bench/NOTES-kernels.md (issue 17). */
#ifndef WS_SLICES
#define WS_SLICES 2
#endif
#ifndef WS_CONSUMER_WGS
#define WS_CONSUMER_WGS (2 / WS_SLICES)
#endif
#define WS_CTA_ROWS (64 * WS_SLICES * WS_CONSUMER_WGS)
#define WS_THREADS (128 * (1 + WS_CONSUMER_WGS))
#define WS_CTAS_PER_SM (WS_THREADS == 256 ? 2 : 1)
#define WS_STAGES (WS_CTAS_PER_SM == 2 ? 3 : 4)
/* Dynamic shared memory per CTA (D = 128: Q, K and V8 8K per stage, f16 V 2x16K, mbarriers;
 * D = 64 uses half of it). The kernel checks its layout against it. */
#define WS_SMEM_BYTES (WS_CTA_ROWS * 128 + WS_STAGES * 2 * 8192 + 2 * 16384 + 1024)

typedef struct ws_attn_params {
    sage2_attn_params p;
    int32_t q_heads_inner, k_heads_inner, v_heads_inner, reserved;
    CUtensorMap map_q, map_k, map_v;
} ws_attn_params;

#endif
