/* Kernel parameter of the `warp-specialized` variant: the sage2 parameters plus the tensor maps
 * of the bulk tensor copies (TMA) of Q, K and V, built on the host (warp_specialized.c) with
 * cuTensorMapEncodeTiled, and the f16 V tensor of the pre-pass. Included from C and CUDA;
 * CUtensorMap (cuda.h) is 64-byte aligned on both sides, so the layout is the same.
 *
 * Every map is 4-D with the innermost axis contiguous and one box per copy: 64 rows of Q or K
 * ([64][D] int8, the head dimension innermost); of V, one KV tile: with WS_V_F16 the D rows of
 * 128 bytes of the f16 V tensor, without it all D channels of 64 V8 slots ([D][64] e4m3, the
 * sequence innermost). Swizzled as the kernels' smem_offset (128-byte rows: 128B, 64-byte rows:
 * 64B). The two middle axes are the row (sequence, channel or tile row) and the head, in the
 * order of their strides: *_heads_inner says the head axis is map axis 1 rather than axis 2. */
#ifndef SAGERUN_VARIANTS_WS_PARAMS_H
#define SAGERUN_VARIANTS_WS_PARAMS_H

#include <cuda.h>

#include "../common/sage2_params.h"

/* The CTA program (warp_specialized_kernel.cu): WS_CONSUMER_WGS consumer warpgroups of
 * WS_SLICES M = 64 tiles each (one 16-row slice per warp and tile), and a producer warpgroup
 * where one is needed:
 *   SLICES 2, WGS 1: 128 rows, two CTAs per SM (3 KV stages); 128 threads, or 256 with a producer
 *                    (the default: no producer, V as f16; the consumers get 255 registers);
 *   SLICES 2, WGS 2: 256 rows (two of SAGE2.md's 128-row blocks), 384 threads, one CTA per SM;
 *   SLICES 1, WGS 2: 128 rows, 384 threads, one CTA per SM, each softmax overlapping its own
 *                    warpgroup's next Q·Kᵀ and previous P·V; with WS_PRODUCER 0, 256 threads
 *                    (the warps of warpgroup 0 taking turns at the refills) and 6 KV stages
 *                    (25% slower than the default, issue 17 run 32);
 *   WS_PINGPONG 1:   SLICES 2, WGS 2 without a producer (256 rows, 256 threads, one CTA per SM, one
 *                    ring of 4 stages), the warpgroups taking turns at the exponentials;
 *   SLICES 1, WGS 1, WS_CTAS_PER_SM 3: 64 rows, 128 threads, three CTAs per SM (168 registers,
 *                    2 KV stages), Q·Kᵀ, softmax and P·V in turn (3% slower than the default,
 *                    1% faster on causal 4x8192x32x128; issue 17 runs 38-39).
 * Where V is turned into P·V's f16 operand:
 *   WS_V_F16 0: in every CTA, by the producer warpgroup, from the V8 tiles of the ring;
 *   WS_V_F16 1: once per call, by a pre-pass kernel (sage2_ws_v_to_f16) into a scratch tensor
 *               ([B][Hkv][KV tile][D + WS_VH_SCALE_ROWS] rows of 128 bytes, the operand layout
 *               unswizzled, then the tile's K scale), whose tiles the ring then receives as they are;
 * and who issues the copies: WS_PRODUCER 1, a producer warpgroup; WS_PRODUCER 0 (needs WS_V_F16),
 * consumer warps between their tiles, which leaves the whole register file to the consumers (the
 * default wherever it applies).
 * Measured on the H200: test/bench/NOTES-kernels.md (issue 17). */
#ifndef WS_SLICES
#define WS_SLICES 2
#endif
#ifndef WS_CONSUMER_WGS
#define WS_CONSUMER_WGS (2 / WS_SLICES)
#endif
#ifndef WS_V_F16
#define WS_V_F16 1
#endif
#ifndef WS_PINGPONG /* FlashAttention-3's ping-pong: two consumer warpgroups of two slices (256-row CTAs)
                       sharing one ring, no producer, taking turns; not faster (issue 17, runs 27-30) */
#define WS_PINGPONG 0
#endif
#if WS_PINGPONG
#undef WS_CONSUMER_WGS
#define WS_CONSUMER_WGS 2
#endif
#ifndef WS_PRODUCER /* wherever the consumers can do without one */
#define WS_PRODUCER (!WS_V_F16 || (WS_CONSUMER_WGS > 1 && !WS_PINGPONG))
#endif
#define WS_CTA_ROWS (64 * WS_SLICES * WS_CONSUMER_WGS)
#define WS_THREADS (128 * (WS_PRODUCER + WS_CONSUMER_WGS))
/* two CTAs per SM where a CTA's 128 rows are one consumer warpgroup's: two such warpgroups of 255
 * registers fill the SM's 64K (a producer warpgroup of 24 fits beside each); otherwise one */
#ifndef WS_CTAS_PER_SM /* 3: the 64-row CTAs above */
#define WS_CTAS_PER_SM (WS_CONSUMER_WGS == 1 && WS_CTA_ROWS == 128 ? 2 : 1)
#endif
#ifndef WS_STAGES /* KV tiles in flight; one slice per warp without a producer refills three tiles
                     behind (tile j-3's stage with tile j-3+STAGES), so it needs at least 5 */
#define WS_STAGES (WS_CTAS_PER_SM >= 3 ? 2 : WS_CTAS_PER_SM == 2 ? 3 : WS_SLICES == 1 && !WS_PRODUCER ? 6 : 4)
#endif
/* Dynamic shared memory per CTA (D = 128: Q; K 8K and V8 8K (or f16 V 16K) per stage; with V8,
 * f16 V 2x16K; mbarriers; D = 64 uses half of it). The kernel checks its layout against it. */
#ifndef WS_SMEM_PAD /* experiment: 1 forces one CTA per SM */
#define WS_SMEM_PAD 0
#endif
#ifndef WS_TRACE /* experiment: per-warp clock cycles of the tile loop's phases, printed at destroy */
#define WS_TRACE 0
#endif
/* WS_TRACE: bytes of the trace (4 words per warp of each CTA of head 0, batch 0) */
#define WS_TRACE_BYTES(seq_len) (((uint64_t)(seq_len) + WS_CTA_ROWS - 1) / WS_CTA_ROWS * (WS_THREADS / 32) * 16)
/* WS_V_F16: rows of 128 bytes per KV tile of the f16 V tensor beyond its D channel rows: the first
 * float of row D is the tile's K scale (written by the pre-pass, delivered with the tile; the
 * softmax reads it from shared memory instead of global memory), the rest is zeros */
#define WS_VH_SCALE_ROWS 8
#if WS_V_F16
#define WS_SMEM_BYTES (WS_CTA_ROWS * 128 + WS_STAGES * (8192 + 16384 + WS_VH_SCALE_ROWS * 128) + 1024 + WS_SMEM_PAD * 40960)
#else
#define WS_SMEM_BYTES (WS_CTA_ROWS * 128 + WS_STAGES * 2 * 8192 + 2 * 16384 + 1024)
#endif

typedef struct ws_attn_params {
    sage2_attn_params p;
    int32_t q_heads_inner, k_heads_inner, v_heads_inner;
    int32_t v_tiles;    /* WS_V_F16: KV tiles per head of the f16 V tensor */
    uint64_t v_f16;     /* WS_V_F16: its device address (the pre-pass writes it) */
#if WS_TRACE
    uint64_t trace;     /* experiment: per-warp phase cycles of the CTAs of head 0, batch 0 */
#endif
    CUtensorMap map_q, map_k, map_v; /* map_v: V8, or with WS_V_F16 the f16 V tensor */
} ws_attn_params;

#endif
