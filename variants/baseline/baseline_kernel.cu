/* sage2 `baseline`: SageAttention2's INT8-QK / FP8-PV attention forward, bit-exact with the
 * golden vectors (shared/docs/SAGE2.md is the contract, section numbers below refer to it).
 *
 * Launch: grid (ceil(N/128), Hq, B), 128 threads, 32768 bytes of dynamic shared memory.
 * Each CTA: 128 query rows of one (b, h); warp w owns rows 32w..32w+31 as two 16-row slices.
 * The KV sequence is walked in 64-key tiles; K and V are single-buffered (Q 16K + K 8K + V 8K
 * fill the 32 KB): the next K tile is fetched (cp.async) while this tile's softmax and P·V run,
 * the next V tile while the next tile's scores run. P·V is done one 8-channel block at a time
 * and folded into O at once (O = fma(α, O, B)), which keeps the temporaries small.
 * head_dim 128 and 64 are handled (runtime branch, uniform); any other value writes nothing.
 *
 * On sm_90 ptxas lowers the FP8 mma.sync to e4m3->f16 unpacks + HMMA.16816.F32; the golden
 * vectors were made that way on an H200, so keep using mma.sync (not wgmma) for bit-exactness.
 *
 * Build flags (same for every variant): -O3 -std=c++17 --use_fast_math
 *   -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90
 *   -gencode arch=compute_89,code=compute_89 */
#include "../common/sage2_params.h"
#include "../common/sage2_device.cuh"

namespace {

using namespace sage2;

template <int HD> struct BaselineCta {
    using L = SmemLayout<HD>;
    static constexpr int CBLOCKS = HD / MMA_N; /* 8-channel blocks of O */

    uint8_t *sQ, *sK, *sV;
    const int8_t *k_bh;
    const uint8_t *v_bh;
    const float *ks_bh;
    int64_t k_stride_n, v_stride_d;
    int N, n_tiles, tid, warp, lane;
    float q_scale, c0;
    uint32_t q_base, k_base, v_base; /* per-lane fragment addresses */

    float o[SLICES][CBLOCKS][4];
    float m[SLICES][2], d[SLICES][2];

    /* One 64-key tile j. kScaleX: class 2 of §2.2 (tiles n-2, n-1); kMask: tile n-1. */
    template <bool kScaleX, bool kMask> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);

        /* K_j (and Q, on the first tile) has landed; V_j may still be in flight. */
        cp_async_wait<1>();
        __syncthreads();

        int32_t s[SLICES][KEY_BLOCKS][4];
        compute_scores_warp<HD>(s, q_base, k_base);
        __syncthreads(); /* every warp is done with sK */
        if (j + 1 < n_tiles) load_k_tile<HD>(sK, k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
        cp_async_commit();

        uint32_t p8[SLICES][PV_KHALVES][4];
        float alpha[SLICES][2];
        const int valid_keys = N - j * CTA_K;
#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl) {
            float x[KEY_BLOCKS][4];
            score_tile_scale<kScaleX, kMask>(s[sl], x, delta, valid_keys, lane);
            online_softmax_update(x, c, m[sl], d[sl], alpha[sl]);
            pack_p_e4m3(x, p8[sl]);
        }

        /* V_j has landed (K_{j+1} may still be in flight). */
        cp_async_wait<1>();
        __syncthreads();
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb) {
            uint32_t v[4];
            load_v_frag(v, v_base, cb);
#pragma unroll
            for (int sl = 0; sl < SLICES; ++sl) pv_accumulate(o[sl][cb], p8[sl], v, alpha[sl]);
        }
        __syncthreads(); /* every warp is done with sV */
        if (j + 1 < n_tiles) load_v_tile<HD>(sV, v_bh, v_stride_d, (j + 1) * CTA_K, tid);
        cp_async_commit();
    }

    __device__ __forceinline__ void run(const sage2_attn_params &p, uint8_t *smem) {
        tid = threadIdx.x;
        warp = tid >> 5;
        lane = tid & 31;
        const int bx = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
        N = p.seq_len;
        n_tiles = (N + CTA_K - 1) / CTA_K;
        const int hk = h / (p.heads_q / p.heads_kv);
        const int row0 = bx * CTA_Q;

        sQ = smem + L::Q_OFF;
        sK = smem + L::K_OFF;
        sV = smem + L::V_OFF;
        q_base = q_frag_base<HD>(sQ, warp, lane);
        k_base = k_frag_base<HD>(sK, lane);
        v_base = v_frag_base(sV, lane);

        const int8_t *q_bh = reinterpret_cast<const int8_t *>(p.q) + b * p.q_stride_b + h * p.q_stride_h +
                             (int64_t)row0 * p.q_stride_n;
        k_bh = reinterpret_cast<const int8_t *>(p.k) + b * p.k_stride_b + hk * p.k_stride_h;
        v_bh = reinterpret_cast<const uint8_t *>(p.v) + b * p.v_stride_b + hk * p.v_stride_h;
        k_stride_n = p.k_stride_n;
        v_stride_d = p.v_stride_d;
        ks_bh = reinterpret_cast<const float *>(p.k_scale) +
                ((int64_t)b * p.heads_kv + hk) * p.k_scale_per_head;

        /* prologue: {Q, K_0}, {V_0} */
        load_q_tile<HD>(sQ, q_bh, p.q_stride_n, 0, N - row0, tid);
        load_k_tile<HD>(sK, k_bh, k_stride_n, 0, N, tid);
        cp_async_commit();
        load_v_tile<HD>(sV, v_bh, v_stride_d, 0, tid);
        cp_async_commit();

        /* §1.2: the Q scale of this warp's 32-row group */
        q_scale = __ldg(reinterpret_cast<const float *>(p.q_scale) +
                        ((int64_t)b * p.heads_q + h) * p.q_scale_per_head + bx * NUM_WARPS + warp);
        c0 = softmax_c0(p.sm_scale);

#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl) {
#pragma unroll
            for (int cb = 0; cb < CBLOCKS; ++cb)
#pragma unroll
                for (int i = 0; i < 4; ++i) o[sl][cb][i] = 0.0f;
            m[sl][0] = m[sl][1] = NEG_BIG;
            d[sl][0] = d[sl][1] = 1.0f;
        }

        /* §2.2: tiles 0..n-3 fold δ into the slope; n-2 and n-1 scale x; n-1 masks. */
        int j = 0;
        for (; j < n_tiles - 2; ++j) tile<false, false>(j);
        if (n_tiles >= 2) tile<true, false>(j++);
        tile<true, true>(j);

        cp_async_wait<0>();
        __syncthreads(); /* all tiles consumed: smem becomes the O staging area */

        /* §2.6 epilogue: normalise, dequantise V, round to fp16, stage per warp, store rows < N */
        const float *vs = reinterpret_cast<const float *>(p.v_scale) + ((int64_t)b * p.heads_kv + hk) * HD;
        uint8_t *sO = smem + warp * L::O_WARP_BYTES;
        constexpr int O_ROW_BYTES = HD * 2;
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl) {
            const float rho0 = row_inv_denominator(d[sl][0]);
            const float rho1 = row_inv_denominator(d[sl][1]);
#pragma unroll
            for (int cb = 0; cb < CBLOCKS; ++cb) {
                const int col = cb * MMA_N + 2 * t;
                const float sv0 = __ldg(vs + col), sv1 = __ldg(vs + col + 1);
                const __half2 h0 = finalize_pair(o[sl][cb][0], o[sl][cb][1], rho0, sv0, sv1);
                const __half2 h1 = finalize_pair(o[sl][cb][2], o[sl][cb][3], rho1, sv0, sv1);
                const int r0 = sl * MMA_M + g, r1 = r0 + 8;
                *reinterpret_cast<__half2 *>(sO + smem_offset<O_ROW_BYTES>(r0, cb) + 4 * t) = h0;
                *reinterpret_cast<__half2 *>(sO + smem_offset<O_ROW_BYTES>(r1, cb) + 4 * t) = h1;
            }
        }
        __syncwarp();

        constexpr int CPR = O_ROW_BYTES / 16;
        __half *o_bh = reinterpret_cast<__half *>(p.o) + b * p.o_stride_b + h * p.o_stride_h;
        const int wrow0 = row0 + warp * WARP_Q;
#pragma unroll
        for (int it = 0; it < WARP_Q * CPR / 32; ++it) {
            const int idx = it * 32 + lane;
            const int r = idx / CPR, chunk = idx % CPR;
            const int grow = wrow0 + r;
            if (grow < N) {
                const uint4 val = *reinterpret_cast<const uint4 *>(sO + smem_offset<O_ROW_BYTES>(r, chunk));
                *reinterpret_cast<uint4 *>(o_bh + (int64_t)grow * p.o_stride_n + chunk * 8) = val;
            }
        }
    }
};

} // namespace

extern "C" __global__ void __launch_bounds__(128) sage2_attn_baseline(const sage2_attn_params p) {
    /* 128-byte alignment is required: the fragment addressing XORs bits 4..6 (sage2_device.cuh) */
    extern __shared__ __align__(128) uint8_t sage2_smem[];
    if (p.head_dim == 128) {
        BaselineCta<128> cta;
        cta.run(p, sage2_smem);
    } else if (p.head_dim == 64) {
        BaselineCta<64> cta;
        cta.run(p, sage2_smem);
    }
}
