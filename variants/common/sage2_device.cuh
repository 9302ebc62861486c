/* Device building blocks of the sage2 attention kernels (INT8 Q·Kᵀ, FP8 P·V).
 *
 * The numerics contract is docs/SAGE2.md (shared/docs): every function below that touches a
 * value that reaches the output says which step of it it implements. Kernels that claim
 * byte-exactness with `baseline` must use these pieces for the arithmetic, and are free to
 * change only what SAGE2.md section 3 lists as free (order of issue, loads, layouts, ...).
 *
 * Build every variant with the same flags (see the baseline's notes): -O3 --use_fast_math, so
 * that fp32 arithmetic is flush-to-zero. The fp32 operations that matter are written with
 * __fmaf_rn / __fmul_rn / __fadd_rn / __fsub_rn and inline PTX, so the compiler cannot contract
 * or split them differently from one variant to the next.
 *
 * Fragment layouts used throughout (PTX ISA, mma.m16n8k32 for .s8 and .e4m3, identical):
 *   lane = 4*g + t  (g = groupID = lane>>2, t = thread in group = lane&3)
 *   A (16x32, row-major, 4 regs of 4 bytes): a0 row g, cols 4t..4t+3; a1 row g+8, same cols;
 *                                            a2 row g, cols 16+4t..; a3 row g+8, cols 16+4t..
 *   B (32x8, "col", 2 regs of 4 bytes):      b0 k 4t..4t+3 of column g; b1 k 16+4t.. of column g
 *   C/D (16x8 fp32/s32, 4 regs):             c0,c1 row g, cols 2t,2t+1; c2,c3 row g+8, same cols
 * A score tile of one 16-row slice is held as s[nb][i], nb = 8-key block (0..7), i as C above:
 * key = 8*nb + 2t + (i&1), row = g + 8*(i>>1).
 */
#ifndef SAGERUN_VARIANTS_SAGE2_DEVICE_CUH
#define SAGERUN_VARIANTS_SAGE2_DEVICE_CUH

#include <stdint.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "sage2_params.h"

namespace sage2 {

/* ---------------------------------------------------------------------------------------------
 * Tile constants
 * ------------------------------------------------------------------------------------------- */
constexpr int CTA_Q = 128;        /* query rows per CTA: SAGE2.md §2 (grid.x = ceil(N/128)) */
constexpr int CTA_K = 64;         /* keys per KV tile: SAGE2.md §2; part of the numerics (§3) */
constexpr int WARP_Q = 32;        /* query rows per warp, one Q scale each: SAGE2.md §1.2, §2 */
constexpr int NUM_WARPS = CTA_Q / WARP_Q;      /* 4 warps: SAGE2.md §2 launch */
constexpr int NUM_THREADS = NUM_WARPS * 32;    /* 128 threads: SAGE2.md §2 launch */
constexpr int MMA_M = 16;         /* rows of one mma.m16n8k32 A operand */
constexpr int MMA_N = 8;          /* columns of one mma.m16n8k32 B operand */
constexpr int MMA_K = 32;         /* reduction depth of one mma.m16n8k32 (int8 and e4m3) */
constexpr int SLICES = WARP_Q / MMA_M;         /* 2 sixteen-row slices per warp: SAGE2.md §2 */
constexpr int KEY_BLOCKS = CTA_K / MMA_N;      /* 8 eight-key blocks per tile (score fragment) */
constexpr int SUBTILES = CTA_K / 16;           /* 4 sixteen-key sub-tiles: SAGE2.md §2.4 */
constexpr int PV_KHALVES = CTA_K / MMA_K;      /* 2 k-halves chained per FP8 product: §2.5 */
constexpr int K_SCALE_ROWS = 64;  /* keys per K scale: SAGE2.md §1.3 (equals CTA_K) */
constexpr int V_PERM_GROUP = 16;  /* tokens per π-permuted group of V8: SAGE2.md §1.4 */
constexpr int SMEM_BYTES = 32768; /* dynamic smem: Q 16K + K 8K + V 8K (D=128), SAGE2.md §2 */

constexpr float LOG2E = 1.44269504f;     /* c0 = fl(sm_scale * 1.44269504f): SAGE2.md §2.2 */
constexpr float EXP_OFFSET = 8.807f;     /* ≈ log2(448), subtracted in the max: SAGE2.md §2.3 */
constexpr float NEG_BIG = -5000000.0f;   /* initial m, and masked scores: SAGE2.md §2.2, §2.3 */

static_assert(K_SCALE_ROWS == CTA_K, "one K scale per KV tile");
static_assert(SMEM_BYTES == CTA_Q * 128 + CTA_K * 128 + 128 * CTA_K, "smem budget for D=128");

/* Shared-memory footprint for a head dimension HD: Q tile, K tile, V tile (bytes). */
template <int HD> struct SmemLayout {
    static constexpr int Q_BYTES = CTA_Q * HD;  /* int8 [CTA_Q][HD] */
    static constexpr int K_BYTES = CTA_K * HD;  /* int8 [CTA_K][HD] */
    static constexpr int V_BYTES = HD * CTA_K;  /* e4m3 [HD][CTA_K], sequence contiguous */
    static constexpr int Q_OFF = 0;
    static constexpr int K_OFF = Q_BYTES;
    static constexpr int V_OFF = Q_BYTES + K_BYTES;
    static constexpr int TOTAL = Q_BYTES + K_BYTES + V_BYTES;
    static_assert(TOTAL <= SMEM_BYTES, "tiles exceed the dynamic shared memory");
};

/* ---------------------------------------------------------------------------------------------
 * PTX wrappers
 * ------------------------------------------------------------------------------------------- */
__device__ __forceinline__ uint32_t smem_u32(const void *ptr) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

/* 16-byte global->shared copy; src_bytes = 0 reads nothing and writes 16 zero bytes. */
__device__ __forceinline__ void cp_async_16(uint32_t saddr, const void *gptr, uint32_t src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(saddr), "l"(gptr),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t saddr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(saddr));
}

/* SAGE2.md §2.1: exact int8 products, s32 accumulation (c += a·b). */
__device__ __forceinline__ void mma_s8_m16n8k32(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* SAGE2.md §2.5: FP8 product starting a chain from zero (k-half 0). */
__device__ __forceinline__ void mma_e4m3_m16n8k32_init(float (&d)[4], const uint32_t (&a)[4],
                                                       uint32_t b0, uint32_t b1) {
    const float z = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(z));
}
/* SAGE2.md §2.5: FP8 product accumulating into the chain (k-half 1); never the running O. */
__device__ __forceinline__ void mma_e4m3_m16n8k32_acc(float (&d)[4], const uint32_t (&a)[4],
                                                      uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The fp32+fp16 path (baseline-fp16acc; SageAttention's "fp32+fp16", the sm89 kernel
 * qk_int8_sv_f8_accum_f16_fuse_v_scale_attn_inst_buf): the same FP8 product with an f16
 * accumulator (2 regs of f16x2: d0 row g, cols 2t, 2t+1; d1 row g+8). Chain start: C = +0. */
__device__ __forceinline__ void mma_e4m3_f16_m16n8k32_init(uint32_t (&d)[2], const uint32_t (&a)[4],
                                                           uint32_t b0, uint32_t b1) {
    const uint32_t z = 0u;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 "
                 "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %8};\n"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(z));
}
__device__ __forceinline__ void mma_e4m3_f16_m16n8k32_acc(uint32_t (&d)[2], const uint32_t (&a)[4],
                                                          uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 "
                 "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The hardware 2^x and 1/x the contract names (SAGE2.md notation). */
__device__ __forceinline__ float ex2_approx(float x) {
    float y;
    asm volatile("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ float rcp_approx(float x) {
    float y;
    asm volatile("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* Four fp32 -> four e4m3 bytes (rn, satfinite), byte i = value i. cvt puts its first source in
 * the upper byte of the 16-bit result. SAGE2.md §2.5. */
__device__ __forceinline__ uint32_t pack_e4m3x4(float v0, float v1, float v2, float v3) {
    uint16_t lo, hi;
    asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(v1), "f"(v0));
    asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(v3), "f"(v2));
    return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

__device__ __forceinline__ float quad_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
    return v;
}

/* ---------------------------------------------------------------------------------------------
 * Shared-memory swizzle: 16-byte chunks of a row are XOR-permuted so that the 8 rows read by one
 * ldmatrix 8x8 matrix (or written by one quad row of the O staging) hit distinct banks.
 * CPR = 16-byte chunks per row. Free of numerics (SAGE2.md §3: layouts).
 * ------------------------------------------------------------------------------------------- */
template <int CPR> __device__ __forceinline__ int swizzle_chunk(int row, int chunk) {
    static_assert(CPR == 4 || CPR == 8 || CPR == 16, "unsupported row width");
    if constexpr (CPR == 4)
        return chunk ^ ((row >> 1) & 3);
    else
        return chunk ^ (row & 7);
}
template <int ROW_BYTES> __device__ __forceinline__ int smem_offset(int row, int chunk) {
    return row * ROW_BYTES + (swizzle_chunk<ROW_BYTES / 16>(row, chunk) << 4);
}

/* ---------------------------------------------------------------------------------------------
 * Tile loaders (cp.async, 16 bytes per copy, zero-fill beyond the sequence end)
 * ------------------------------------------------------------------------------------------- */

/* ROWS rows [row0, row0+ROWS) of an int8 [.][HD] tensor (row stride stride_n) into a swizzled
 * [ROWS][HD] tile; rows >= N are zero-filled. */
template <int HD, int ROWS>
__device__ __forceinline__ void load_rows_tile(uint8_t *dst, const int8_t *src_bh, int64_t stride_n,
                                               int row0, int N, int tid) {
    constexpr int CPR = HD / 16;
    constexpr int ITERS = ROWS * CPR / NUM_THREADS;
    const uint32_t base = smem_u32(dst);
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
        const int idx = it * NUM_THREADS + tid;
        const int row = idx / CPR, chunk = idx % CPR;
        const int grow = row0 + row;
        const bool ok = grow < N;
        const int8_t *src = src_bh + (ok ? (int64_t)grow * stride_n + chunk * 16 : 0);
        cp_async_16(base + smem_offset<HD>(row, chunk), src, ok ? 16u : 0u);
    }
}

/* Q rows [row0, row0+CTA_Q) of one (b, h): int8 [CTA_Q][HD]; rows >= N are zero-filled. */
template <int HD>
__device__ __forceinline__ void load_q_tile(uint8_t *sQ, const int8_t *q_bh, int64_t stride_n,
                                            int row0, int N, int tid) {
    load_rows_tile<HD, CTA_Q>(sQ, q_bh, stride_n, row0, N, tid);
}

/* K keys [key0, key0+CTA_K) of one (b, hk): int8 [CTA_K][HD]; keys >= KV are zero-filled
 * (the last tile masks them anyway, SAGE2.md §2.2). */
template <int HD>
__device__ __forceinline__ void load_k_tile(uint8_t *sK, const int8_t *k_bh, int64_t stride_n,
                                            int key0, int KV, int tid) {
    load_rows_tile<HD, CTA_K>(sK, k_bh, stride_n, key0, KV, tid);
}

/* V8 slots [key0, key0+CTA_K) of all HD channels of one (b, hk): e4m3 [HD][CTA_K]. V8 is padded
 * with zeros to a multiple of 64 (SAGE2.md §1.4), so every tile is in bounds. */
template <int HD>
__device__ __forceinline__ void load_v_tile(uint8_t *sV, const uint8_t *v_bh, int64_t stride_d,
                                            int key0, int tid) {
    constexpr int CPR = CTA_K / 16;
    constexpr int ITERS = HD * CPR / NUM_THREADS;
    const uint32_t base = smem_u32(sV);
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
        const int idx = it * NUM_THREADS + tid;
        const int ch = idx / CPR, chunk = idx % CPR;
        const uint8_t *src = v_bh + (int64_t)ch * stride_d + key0 + chunk * 16;
        cp_async_16(base + smem_offset<CTA_K>(ch, chunk), src, 16u);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Scores: S_int = Q8 · K8ᵀ for one 16-row slice and the whole 64-key tile (SAGE2.md §2.1)
 * ------------------------------------------------------------------------------------------- */

/* Fragment addresses. The per-lane part of a fragment's shared address is computed once
 * (*_frag_base); moving to another 16-row slice / 16-key sub-tile / 8-channel block adds a
 * multiple of 8 rows (which leaves the swizzle unchanged), and moving to reduction columns
 * 32*kk XORs the chunk index with 2*kk (rows are 64 or 128 bytes and the tiles are 128-byte
 * aligned, so that XOR only touches the chunk bits). This keeps the address registers few. */

/* Q A fragment: rows [warp*32 + 16*sl, +16), reduction columns [32*kk, +32). */
template <int HD> __device__ __forceinline__ uint32_t q_frag_base(const uint8_t *sQ, int warp, int lane) {
    const int row = warp * WARP_Q + ((lane >> 3) & 1) * 8 + (lane & 7);
    return smem_u32(sQ) + smem_offset<HD>(row, lane >> 4);
}
template <int HD>
__device__ __forceinline__ void load_q_frag(uint32_t (&a)[4], uint32_t base, int sl, int kk) {
    ldmatrix_x4(a, (base + sl * MMA_M * HD) ^ (kk << 5));
}

/* K B fragments of keys [16f, 16f+16), reduction columns [32*kk, +32): b[0],b[1] for keys
 * 16f..16f+7, b[2],b[3] for keys 16f+8..16f+15. */
template <int HD> __device__ __forceinline__ uint32_t k_frag_base(const uint8_t *sK, int lane) {
    const int row = (lane >> 4) * 8 + (lane & 7);
    return smem_u32(sK) + smem_offset<HD>(row, (lane >> 3) & 1);
}
template <int HD>
__device__ __forceinline__ void load_k_frag(uint32_t (&b)[4], uint32_t base, int f, int kk) {
    ldmatrix_x4(b, (base + f * 16 * HD) ^ (kk << 5));
}

/* Integer scores of both slices of a warp: s[sl][nb][i] (K fragments shared by the slices). */
template <int HD>
__device__ __forceinline__ void compute_scores_warp(int32_t (&s)[SLICES][KEY_BLOCKS][4],
                                                    uint32_t q_base, uint32_t k_base) {
#pragma unroll
    for (int sl = 0; sl < SLICES; ++sl)
#pragma unroll
        for (int nb = 0; nb < KEY_BLOCKS; ++nb)
#pragma unroll
            for (int i = 0; i < 4; ++i) s[sl][nb][i] = 0;
#pragma unroll
    for (int kk = 0; kk < HD / MMA_K; ++kk) {
        uint32_t a[SLICES][4];
#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl) load_q_frag<HD>(a[sl], q_base, sl, kk);
#pragma unroll
        for (int f = 0; f < SUBTILES; ++f) {
            uint32_t b[4];
            load_k_frag<HD>(b, k_base, f, kk);
#pragma unroll
            for (int sl = 0; sl < SLICES; ++sl) {
                mma_s8_m16n8k32(s[sl][2 * f], a[sl], b[0], b[1]);
                mma_s8_m16n8k32(s[sl][2 * f + 1], a[sl], b[2], b[3]);
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Scale constants and the two tile classes (SAGE2.md §2.2)
 * ------------------------------------------------------------------------------------------- */

/* c0 = fl(sm_scale * log2 e). */
__device__ __forceinline__ float softmax_c0(float sm_scale) { return __fmul_rn(sm_scale, LOG2E); }

/* δ_j = fl(s_Q[warp] * s_K[j]). */
__device__ __forceinline__ float dequant_delta(float q_scale, float k_scale) {
    return __fmul_rn(q_scale, k_scale);
}

/* Slope of a tile: class 1 (tiles 0..n-3) c_j = fl(c0 * δ_j); class 2 (n-2, n-1) c0. */
template <bool kScaleX>
__device__ __forceinline__ float tile_slope(float c0, float delta) {
    return kScaleX ? c0 : __fmul_rn(c0, delta);
}

/* x values of one slice: class 1 x = float(S_int); class 2 x = fl(float(S_int) * δ_j); the
 * last tile sets keys >= KV (key index within the tile >= valid_keys) to -5e6 after that.
 * kCausal (is_causal = 1, only ever with kScaleX: the last two tiles of a causal CTA): keys
 * after the row (key index within the tile − row index within the slice > diag, where diag =
 * the slice's first query row − the tile's first key) are -5e6 too, also after the multiply. */
template <bool kScaleX, bool kMask, bool kCausal = false>
__device__ __forceinline__ void score_tile_scale(const int32_t (&s)[KEY_BLOCKS][4],
                                                 float (&x)[KEY_BLOCKS][4], float delta,
                                                 int valid_keys, int lane, int diag = 0) {
#pragma unroll
    for (int nb = 0; nb < KEY_BLOCKS; ++nb)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float v = __int2float_rn(s[nb][i]);
            if (kScaleX) v = __fmul_rn(v, delta);
            if (kMask) {
                const int key = nb * MMA_N + 2 * (lane & 3) + (i & 1);
                if (key >= valid_keys) v = NEG_BIG;
            }
            if constexpr (kCausal) {
                const int key = nb * MMA_N + 2 * (lane & 3) + (i & 1);
                const int row = (lane >> 2) + 8 * (i >> 1);
                if (key - row > diag) v = NEG_BIG;
            }
            x[nb][i] = v;
        }
}

/* ---------------------------------------------------------------------------------------------
 * Online softmax in base 2 and the denominator (SAGE2.md §2.3, §2.4)
 * ------------------------------------------------------------------------------------------- */

/* Row half rh of one slice (rh = 0: row g, rh = 1: row g+8), first part: the row's new maximum
 * from x and the slope c. No exponentials: a kernel may run it outside a section that owns the
 * MUFU (warp-specialized's ping-pong). */
/* The row's new maximum from the thread's largest x of it: slope, offset, the quad's maximum. */
__device__ __forceinline__ float row_max_of(float t, float c, float m) {
    return fmaxf(m, quad_max(__fmaf_rn(t, c, -EXP_OFFSET)));
}
__device__ __forceinline__ float softmax_row_max(const float (&x)[KEY_BLOCKS][4], float c, float m, int rh) {
    float t = NEG_BIG;
#pragma unroll
    for (int nb = 0; nb < KEY_BLOCKS; ++nb)
        t = fmaxf(t, fmaxf(x[nb][2 * rh], x[nb][2 * rh + 1]));
    return row_max_of(t, c, m);
}

/* The same from the integer scores of a class 1 tile without masked keys (x = float(S_int)):
 * float() rounds monotonically, so max float(s) = float(max s), and every S_int > NEG_BIG. */
__device__ __forceinline__ float softmax_row_max_int(const int32_t (&s)[KEY_BLOCKS][4], float c, float m, int rh) {
    int32_t ti = s[0][2 * rh];
#pragma unroll
    for (int nb = 0; nb < KEY_BLOCKS; ++nb) ti = max(ti, max(s[nb][2 * rh], s[nb][2 * rh + 1]));
    return row_max_of(__int2float_rn(ti), c, m);
}

/* Second part: the row's rescale factor α (returned), its x turned into P in place (fp32), m and
 * d updated. */
__device__ __forceinline__ float softmax_exp_sum(float (&x)[KEY_BLOCKS][4], float c, float m_new, float &m, float &d,
                                                 int rh) {
    const float alpha = ex2_approx(__fsub_rn(m, m_new));
    m = m_new;
    const float neg_m = -m_new;
#pragma unroll
    for (int nb = 0; nb < KEY_BLOCKS; ++nb) {
        x[nb][2 * rh] = ex2_approx(__fmaf_rn(x[nb][2 * rh], c, neg_m));
        x[nb][2 * rh + 1] = ex2_approx(__fmaf_rn(x[nb][2 * rh + 1], c, neg_m));
    }
    /* per 16-key sub-tile f: ((p0 + p1) + p4) + p5 (row g) / ((p2 + p3) + p6) + p7 (g+8) */
    float sf[SUBTILES];
#pragma unroll
    for (int f = 0; f < SUBTILES; ++f) {
        const float(&lo)[4] = x[2 * f];
        const float(&hi)[4] = x[2 * f + 1];
        sf[f] = __fadd_rn(__fadd_rn(__fadd_rn(lo[2 * rh], lo[2 * rh + 1]), hi[2 * rh]), hi[2 * rh + 1]);
    }
    float dd = __fmaf_rn(alpha, d, sf[0]);
#pragma unroll
    for (int f = 1; f < SUBTILES; ++f) dd = __fadd_rn(dd, sf[f]);
    d = dd;
    return alpha;
}

/* One slice: turns x into P in place (fp32), updates m and d of its two rows and returns their
 * rescale factors α. */
__device__ __forceinline__ void online_softmax_update(float (&x)[KEY_BLOCKS][4], float c,
                                                      float (&m)[2], float (&d)[2],
                                                      float (&alpha)[2]) {
#pragma unroll
    for (int rh = 0; rh < 2; ++rh)
        alpha[rh] = softmax_exp_sum(x, c, softmax_row_max(x, c, m[rh], rh), m[rh], d[rh], rh);
}

/* P (fp32, one slice) -> FP8 A operands of the two k-halves (SAGE2.md §2.5). The thread's values
 * land in k order (2t, 2t+1, 8+2t, 9+2t) of each 16-key sub-tile: the π of SAGE2.md §1.4. */
__device__ __forceinline__ void pack_p_e4m3(const float (&p)[KEY_BLOCKS][4],
                                            uint32_t (&a)[PV_KHALVES][4]) {
#pragma unroll
    for (int kh = 0; kh < PV_KHALVES; ++kh) {
        const int nb = 4 * kh; /* sub-tiles 2kh (blocks nb, nb+1) and 2kh+1 (nb+2, nb+3) */
        a[kh][0] = pack_e4m3x4(p[nb][0], p[nb][1], p[nb + 1][0], p[nb + 1][1]);
        a[kh][1] = pack_e4m3x4(p[nb][2], p[nb][3], p[nb + 1][2], p[nb + 1][3]);
        a[kh][2] = pack_e4m3x4(p[nb + 2][0], p[nb + 2][1], p[nb + 3][0], p[nb + 3][1]);
        a[kh][3] = pack_e4m3x4(p[nb + 2][2], p[nb + 2][3], p[nb + 3][2], p[nb + 3][3]);
    }
}

/* ---------------------------------------------------------------------------------------------
 * P·V (SAGE2.md §2.5)
 * ------------------------------------------------------------------------------------------- */

/* V B fragments of channels [8*cb, 8*cb+8) for the whole tile: v[0],v[1] k-half 0, v[2],v[3]
 * k-half 1 (sV is [HD][CTA_K] e4m3, rows of 64 bytes). */
__device__ __forceinline__ uint32_t v_frag_base(const uint8_t *sV, int lane) {
    return smem_u32(sV) + smem_offset<CTA_K>(lane & 7, lane >> 3);
}
__device__ __forceinline__ void load_v_frag(uint32_t (&v)[4], uint32_t base, int cb) {
    ldmatrix_x4(v, base + cb * MMA_N * CTA_K);
}

/* One 8-channel block of one slice: B = mma(P8[:,32:64], V8[32:64], mma(P8[:,0:32], V8[0:32], 0)),
 * then O = fma(α, O, B) on CUDA cores (c0,c1 row g: α[0]; c2,c3 row g+8: α[1]). */
__device__ __forceinline__ void pv_accumulate(float (&o)[4], const uint32_t (&p8)[PV_KHALVES][4],
                                              const uint32_t (&v)[4], const float (&alpha)[2]) {
    float acc[4];
    mma_e4m3_m16n8k32_init(acc, p8[0], v[0], v[1]);
    mma_e4m3_m16n8k32_acc(acc, p8[1], v[2], v[3]);
    o[0] = __fmaf_rn(alpha[0], o[0], acc[0]);
    o[1] = __fmaf_rn(alpha[0], o[1], acc[1]);
    o[2] = __fmaf_rn(alpha[1], o[2], acc[2]);
    o[3] = __fmaf_rn(alpha[1], o[3], acc[3]);
}

/* The fp32+fp16 path: B16 = mma16(P8[:,32:64], V8[32:64], mma16(P8[:,0:32], V8[0:32], +0)) with
 * f16 accumulation, then O = fma(α, O, f32(B16)) (SageAttention compiles its `O *= α` … `O +=
 * float(B16)` to that fma: checked in its PTX at d1a57a5). */
__device__ __forceinline__ void pv_accumulate_f16acc(float (&o)[4], const uint32_t (&p8)[PV_KHALVES][4],
                                                     const uint32_t (&v)[4], const float (&alpha)[2]) {
    uint32_t acc[2];
    mma_e4m3_f16_m16n8k32_init(acc, p8[0], v[0], v[1]);
    mma_e4m3_f16_m16n8k32_acc(acc, p8[1], v[2], v[3]);
    const float2 r0 = __half22float2(*reinterpret_cast<const __half2 *>(&acc[0]));
    const float2 r1 = __half22float2(*reinterpret_cast<const __half2 *>(&acc[1]));
    o[0] = __fmaf_rn(alpha[0], o[0], r0.x);
    o[1] = __fmaf_rn(alpha[0], o[1], r0.y);
    o[2] = __fmaf_rn(alpha[1], o[2], r1.x);
    o[3] = __fmaf_rn(alpha[1], o[3], r1.y);
}

/* ---------------------------------------------------------------------------------------------
 * Epilogue (SAGE2.md §2.6)
 * ------------------------------------------------------------------------------------------- */

/* D_row = (d + shfl_xor(d, 1)) + shfl_xor(that, 2); returns rcp(D_row). */
__device__ __forceinline__ float row_inv_denominator(float d) {
    const float d1 = __fadd_rn(d, __shfl_xor_sync(0xffffffffu, d, 1));
    const float d2 = __fadd_rn(d1, __shfl_xor_sync(0xffffffffu, d1, 2));
    return rcp_approx(d2);
}

/* out = fp16_rn((O * ρ) * s_V[c]). */
__device__ __forceinline__ __half2 finalize_pair(float o0, float o1, float rho, float sv0,
                                                 float sv1) {
    return __floats2half2_rn(__fmul_rn(__fmul_rn(o0, rho), sv0), __fmul_rn(__fmul_rn(o1, rho), sv1));
}

/* The same for a bf16 output (round to nearest even). */
__device__ __forceinline__ __nv_bfloat162 finalize_pair_bf16(float o0, float o1, float rho, float sv0,
                                                             float sv1) {
    return __floats2bfloat162_rn(__fmul_rn(__fmul_rn(o0, rho), sv0), __fmul_rn(__fmul_rn(o1, rho), sv1));
}

/* §2.2-§2.4: the starting state of NSL 16-row slices: O = 0, m = -5e6, d = 1. */
template <int NSL, int CBLOCKS>
__device__ __forceinline__ void init_rows(float (&o)[NSL][CBLOCKS][4], float (&m)[NSL][2], float (&d)[NSL][2]) {
#pragma unroll
    for (int sl = 0; sl < NSL; ++sl) {
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb)
#pragma unroll
            for (int i = 0; i < 4; ++i) o[sl][cb][i] = 0.0f;
        m[sl][0] = m[sl][1] = NEG_BIG;
        d[sl][0] = d[sl][1] = 1.0f;
    }
}

/* §2.6 epilogue of one warp's NSL 16-row slices (slice sl: rows wrow0 + SLICE_ROWS*sl + {g, g+8}):
 * normalise, dequantise V, round to fp16 (kBf16: bf16), stage in the warp's sO (NSL * 16 rows of
 * HD * 2 bytes, swizzled), store the rows < N. */
template <int HD, bool kBf16, int NSL, int SLICE_ROWS = MMA_M>
__device__ __forceinline__ void store_rows(const sage2_attn_params &p, const float (&o)[NSL][HD / MMA_N][4],
                                           const float (&d)[NSL][2], uint8_t *sO, int lane, int b, int h,
                                           int hk, int wrow0, int N) {
    constexpr int CBLOCKS = HD / MMA_N;
    const float *vs = reinterpret_cast<const float *>(p.v_scale) + ((int64_t)b * p.heads_kv + hk) * HD;
    constexpr int O_ROW_BYTES = HD * 2;
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int sl = 0; sl < NSL; ++sl) {
        const float rho0 = row_inv_denominator(d[sl][0]);
        const float rho1 = row_inv_denominator(d[sl][1]);
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb) {
            const int col = cb * MMA_N + 2 * t;
            const float sv0 = __ldg(vs + col), sv1 = __ldg(vs + col + 1);
            const int r0 = sl * MMA_M + g, r1 = r0 + 8;
            if constexpr (kBf16) {
                const __nv_bfloat162 h0 = finalize_pair_bf16(o[sl][cb][0], o[sl][cb][1], rho0, sv0, sv1);
                const __nv_bfloat162 h1 = finalize_pair_bf16(o[sl][cb][2], o[sl][cb][3], rho1, sv0, sv1);
                *reinterpret_cast<__nv_bfloat162 *>(sO + smem_offset<O_ROW_BYTES>(r0, cb) + 4 * t) = h0;
                *reinterpret_cast<__nv_bfloat162 *>(sO + smem_offset<O_ROW_BYTES>(r1, cb) + 4 * t) = h1;
            } else {
                const __half2 h0 = finalize_pair(o[sl][cb][0], o[sl][cb][1], rho0, sv0, sv1);
                const __half2 h1 = finalize_pair(o[sl][cb][2], o[sl][cb][3], rho1, sv0, sv1);
                *reinterpret_cast<__half2 *>(sO + smem_offset<O_ROW_BYTES>(r0, cb) + 4 * t) = h0;
                *reinterpret_cast<__half2 *>(sO + smem_offset<O_ROW_BYTES>(r1, cb) + 4 * t) = h1;
            }
        }
    }
    __syncwarp();

    constexpr int CPR = O_ROW_BYTES / 16;
    __half *o_bh = reinterpret_cast<__half *>(p.o) + b * p.o_stride_b + h * p.o_stride_h;
#pragma unroll
    for (int it = 0; it < NSL * MMA_M * CPR / 32; ++it) {
        const int idx = it * 32 + lane;
        const int r = idx / CPR, chunk = idx % CPR;
        const int grow = SLICE_ROWS == MMA_M ? wrow0 + r : wrow0 + (r / MMA_M) * SLICE_ROWS + r % MMA_M;
        if (grow < N) {
            const uint4 val = *reinterpret_cast<const uint4 *>(sO + smem_offset<O_ROW_BYTES>(r, chunk));
            *reinterpret_cast<uint4 *>(o_bh + (int64_t)grow * p.o_stride_n + chunk * 8) = val;
        }
    }
}

/* =============================================================================================
 * The CTA skeleton that the sage2 kernels share (baseline, interleave-softmax): grid
 * (ceil(N/128), Hq, B), 128 threads; warp w owns query rows 32w..32w+31 of the CTA's 128 as two
 * 16-row slices. A kernel derives its CTA from Sage2Cta<HD> and adds its shared-memory layout,
 * its copies and barriers, and its tile<kScaleX, kMask>(j) (scores, then softmax_tile and pv_tile);
 * every step that reaches the output is here. These are all inlined; the order of the calls in a
 * kernel is its schedule (SAGE2.md §3).
 * =========================================================================================== */
template <int HD> struct Sage2Cta {
    static constexpr int CBLOCKS = HD / MMA_N;           /* 8-channel blocks of O */
    static constexpr int O_WARP_BYTES = WARP_Q * HD * 2; /* fp16 O staging per warp */

    const int8_t *k_bh;
    const uint8_t *v_bh;
    const float *ks_bh;
    int64_t k_stride_n, v_stride_d;
    int N, KV, n_tiles, tid, warp, lane; /* N: query rows (seq_len), KV: keys (kv_len) */
    int qrow0; /* causal only: the warp's first query row (set by causal_begin) */
    float q_scale, c0;

    float o[SLICES][CBLOCKS][4];
    float m[SLICES][2], d[SLICES][2];

    /* Thread coordinates and the KV tile count (n = ceil(KV/64), SAGE2.md §2; SageAttention's
     * num_iterations = div_ceil(kv_len, CTA_K)). */
    __device__ __forceinline__ void begin(const sage2_attn_params &p) {
        tid = threadIdx.x;
        warp = tid >> 5;
        lane = tid & 31;
        N = p.seq_len;
        KV = p.kv_len;
        n_tiles = (KV + CTA_K - 1) / CTA_K;
    }

    /* Causal (is_causal = 1, q_len = kv_len): the CTA walks keys [0, min(KV, row0 + CTA_Q)) in
     * 64-key tiles, and §2.2's two tile classes are the last two of that walk (the only tiles
     * with keys after some of the CTA's rows, since CTA_Q = 2·CTA_K). */
    __device__ __forceinline__ void causal_begin(int row0) {
        const int kv_end = min(KV, row0 + CTA_Q);
        n_tiles = (kv_end + CTA_K - 1) / CTA_K;
        qrow0 = row0 + warp * WARP_Q;
    }

    /* Global pointers of the CTA's (b, h) and KV head hk; returns Q's, at query row row0. */
    __device__ __forceinline__ const int8_t *bind_tensors(const sage2_attn_params &p, int b, int h, int hk,
                                                          int row0) {
        const int8_t *q_bh = reinterpret_cast<const int8_t *>(p.q) + b * p.q_stride_b + h * p.q_stride_h +
                             (int64_t)row0 * p.q_stride_n;
        k_bh = reinterpret_cast<const int8_t *>(p.k) + b * p.k_stride_b + hk * p.k_stride_h;
        v_bh = reinterpret_cast<const uint8_t *>(p.v) + b * p.v_stride_b + hk * p.v_stride_h;
        k_stride_n = p.k_stride_n;
        v_stride_d = p.v_stride_d;
        ks_bh = reinterpret_cast<const float *>(p.k_scale) +
                ((int64_t)b * p.heads_kv + hk) * p.k_scale_per_head;
        return q_bh;
    }

    /* §1.2: the Q scale of this warp's 32-row group; §2.2: c0; O = 0, m = -5e6, d = 1. */
    __device__ __forceinline__ void init_softmax(const sage2_attn_params &p, int b, int h, int bx) {
        q_scale = __ldg(reinterpret_cast<const float *>(p.q_scale) +
                        ((int64_t)b * p.heads_q + h) * p.q_scale_per_head + bx * NUM_WARPS + warp);
        c0 = softmax_c0(p.sm_scale);
        init_rows(o, m, d);
    }

    /* §2.2-§2.5 for both slices of the warp: x from S_int, online softmax (m, d updated), P as
     * FP8 A operands p8, and the rescale factors α of the rows. */
    template <bool kScaleX, bool kMask, bool kCausal = false>
    __device__ __forceinline__ void softmax_tile(const int32_t (&s)[SLICES][KEY_BLOCKS][4], float delta,
                                                 float c, int valid_keys, float (&alpha)[SLICES][2],
                                                 uint32_t (&p8)[SLICES][PV_KHALVES][4], int key0 = 0) {
#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl) {
            float x[KEY_BLOCKS][4];
            score_tile_scale<kScaleX, kMask, kCausal>(s[sl], x, delta, valid_keys, lane,
                                                      kCausal ? qrow0 + sl * MMA_M - key0 : 0);
            online_softmax_update(x, c, m[sl], d[sl], alpha[sl]);
            pack_p_e4m3(x, p8[sl]);
        }
    }

    /* §2.5: O = fma(α, O, P·V) for both slices, one 8-channel block of V at a time (v_base: the
     * lane's fragment address of the V tile, v_frag_base). */
    __device__ __forceinline__ void pv_tile(const uint32_t (&p8)[SLICES][PV_KHALVES][4],
                                            const float (&alpha)[SLICES][2], uint32_t v_base) {
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb) {
            uint32_t v[4];
            load_v_frag(v, v_base, cb);
#pragma unroll
            for (int sl = 0; sl < SLICES; ++sl) pv_accumulate(o[sl][cb], p8[sl], v, alpha[sl]);
        }
    }

    /* The fp32+fp16 path's pv_tile (pv_accumulate_f16acc). */
    __device__ __forceinline__ void pv_tile_f16acc(const uint32_t (&p8)[SLICES][PV_KHALVES][4],
                                                   const float (&alpha)[SLICES][2], uint32_t v_base) {
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb) {
            uint32_t v[4];
            load_v_frag(v, v_base, cb);
#pragma unroll
            for (int sl = 0; sl < SLICES; ++sl) pv_accumulate_f16acc(o[sl][cb], p8[sl], v, alpha[sl]);
        }
    }

    /* §2.6 epilogue of the warp's 32 rows (store_rows; smem must be free: every tile consumed). */
    template <bool kBf16 = false>
    __device__ __forceinline__ void store_o(const sage2_attn_params &p, uint8_t *smem, int b, int h,
                                            int hk, int row0) {
        store_rows<HD, kBf16, SLICES>(p, o, d, smem + warp * O_WARP_BYTES, lane, b, h, hk,
                                      row0 + warp * WARP_Q, N);
    }
};

/* §2.2's walk over the KV tiles: tiles 0..n-3 fold δ into the slope (class 1), n-2 and n-1 scale
 * x (class 2), n-1 masks; cta.tile<kScaleX, kMask>(j) runs tile j. Then (kCtaSync) waits for every
 * copy and every warp: shared memory is free (the O staging area). kCausal: n is the causal CTA's tile
 * count (Sage2Cta::causal_begin) and both class-2 tiles also mask keys after the row
 * (cta.tile<kScaleX, kMask, true>). */
template <bool kCausal = false, bool kCtaSync = true, class Cta> __device__ __forceinline__ void walk_tiles(Cta &cta) {
    int j = 0;
    for (; j < cta.n_tiles - 2; ++j) cta.template tile<false, false>(j);
    if constexpr (kCausal) {
        if (cta.n_tiles >= 2) cta.template tile<true, false, true>(j++);
        cta.template tile<true, true, true>(j);
    } else {
        if (cta.n_tiles >= 2) cta.template tile<true, false>(j++);
        cta.template tile<true, true>(j);
    }

    if constexpr (kCtaSync) { /* a CTA whose threads all walk; others synchronise themselves */
        cp_async_wait<0>();
        __syncthreads();
    }
}

/* Kernel body: the head dimensions handled (a uniform branch), anything else writes nothing.
 * kCausal / kBf16 pick the CTA program's causal walk and bf16 output (separate kernels: the
 * default instantiation is today's fp16 non-causal code, unchanged). */
template <template <int> class Cta, bool kCausal = false, bool kBf16 = false>
__device__ __forceinline__ void run_any_head_dim(const sage2_attn_params &p, uint8_t *smem) {
    if (p.head_dim == 128) {
        Cta<128> cta;
        cta.template run<kCausal, kBf16>(p, smem);
    } else if (p.head_dim == 64) {
        Cta<64> cta;
        cta.template run<kCausal, kBf16>(p, smem);
    }
}

/* The other three kernels of a sage2 variant, beside NAME (fp16, non-causal: the kernel each
 * variant defines itself, today's code): NAME_causal, NAME_bf16, NAME_bf16_causal. The plugin
 * glue (sage2_plugin.h) picks one by the problem. Use at file scope, outside any namespace. */
#define SAGE2_DEFINE_MORE_KERNELS(NAME, CTA, ALIGN)                                                \
    extern "C" __global__ void __launch_bounds__(128) NAME##_causal(const sage2_attn_params p) {  \
        extern __shared__ __align__(ALIGN) uint8_t NAME##_smem_c[];                               \
        sage2::run_any_head_dim<CTA, true, false>(p, NAME##_smem_c);                              \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(128) NAME##_bf16(const sage2_attn_params p) {    \
        extern __shared__ __align__(ALIGN) uint8_t NAME##_smem_b[];                               \
        sage2::run_any_head_dim<CTA, false, true>(p, NAME##_smem_b);                              \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(128) NAME##_bf16_causal(const sage2_attn_params p) { \
        extern __shared__ __align__(ALIGN) uint8_t NAME##_smem_bc[];                              \
        sage2::run_any_head_dim<CTA, true, true>(p, NAME##_smem_bc);                              \
    }

} // namespace sage2

#endif
