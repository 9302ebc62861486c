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
 * vectors were made that way on an H200, so FP8 wgmma (which accumulates differently) cannot be
 * bit-exact. f16 wgmma can replay the lowering exactly: see interleave-softmax (sage2_wgmma.cuh).
 *
 * Build flags (same for every variant): -O3 -std=c++17 --use_fast_math
 *   -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90
 *   -gencode arch=compute_89,code=compute_89 */
#include "../common/sage2_params.h"
#include "../common/sage2_device.cuh"

namespace {

using namespace sage2;

template <int HD> struct BaselineCta : Sage2Cta<HD> {
    using Base = Sage2Cta<HD>;
    using Base::k_bh, Base::v_bh, Base::ks_bh, Base::k_stride_n, Base::v_stride_d;
    using Base::N, Base::KV, Base::n_tiles, Base::tid, Base::warp, Base::lane, Base::q_scale, Base::c0;
    using L = SmemLayout<HD>;
    static_assert(NUM_WARPS * Base::O_WARP_BYTES <= L::TOTAL, "O staging exceeds the tiles' smem");

    uint8_t *sQ, *sK, *sV;
    uint32_t q_base, k_base, v_base; /* per-lane fragment addresses */

    /* One 64-key tile j. kScaleX: class 2 of §2.2 (tiles n-2, n-1); kMask: tile n-1; kCausal:
     * a class-2 tile of a causal CTA (keys after the row masked too). */
    template <bool kScaleX, bool kMask, bool kCausal = false> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);

        /* K_j (and Q, on the first tile) has landed; V_j may still be in flight. */
        cp_async_wait<1>();
        __syncthreads();

        int32_t s[SLICES][KEY_BLOCKS][4];
        compute_scores_warp<HD>(s, q_base, k_base);
        __syncthreads(); /* every warp is done with sK */
        if (j + 1 < n_tiles) load_k_tile<HD>(sK, k_bh, k_stride_n, (j + 1) * CTA_K, KV, tid);
        cp_async_commit();

        uint32_t p8[SLICES][PV_KHALVES][4];
        float alpha[SLICES][2];
        this->template softmax_tile<kScaleX, kMask, kCausal>(s, delta, c, KV - j * CTA_K, alpha, p8, j * CTA_K);

        /* V_j has landed (K_{j+1} may still be in flight). */
        cp_async_wait<1>();
        __syncthreads();
        this->pv_tile(p8, alpha, v_base);
        __syncthreads(); /* every warp is done with sV */
        if (j + 1 < n_tiles) load_v_tile<HD>(sV, v_bh, v_stride_d, (j + 1) * CTA_K, tid);
        cp_async_commit();
    }

    template <bool kCausal = false, bool kBf16 = false>
    __device__ __forceinline__ void run(const sage2_attn_params &p, uint8_t *smem) {
        this->begin(p);
        const int bx = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
        const int hk = h / (p.heads_q / p.heads_kv);
        const int row0 = bx * CTA_Q;
        if constexpr (kCausal) this->causal_begin(row0);

        sQ = smem + L::Q_OFF;
        sK = smem + L::K_OFF;
        sV = smem + L::V_OFF;
        q_base = q_frag_base<HD>(sQ, warp, lane);
        k_base = k_frag_base<HD>(sK, lane);
        v_base = v_frag_base(sV, lane);

        const int8_t *q_bh = this->bind_tensors(p, b, h, hk, row0);

        /* prologue: {Q, K_0}, {V_0} */
        load_q_tile<HD>(sQ, q_bh, p.q_stride_n, 0, N - row0, tid);
        load_k_tile<HD>(sK, k_bh, k_stride_n, 0, KV, tid);
        cp_async_commit();
        load_v_tile<HD>(sV, v_bh, v_stride_d, 0, tid);
        cp_async_commit();

        this->init_softmax(p, b, h, bx);

        walk_tiles<kCausal>(*this); /* returns with smem free: the O staging area */

        this->template store_o<kBf16>(p, smem, b, h, hk, row0); /* §2.6 epilogue */
    }
};

} // namespace

extern "C" __global__ void __launch_bounds__(128) sage2_attn_baseline(const sage2_attn_params p) {
    /* 128-byte alignment is required: the fragment addressing XORs bits 4..6 (sage2_device.cuh) */
    extern __shared__ __align__(128) uint8_t sage2_smem[];
    run_any_head_dim<BaselineCta>(p, sage2_smem);
}

/* sage2_attn_baseline_causal, _bf16, _bf16_causal (sage2_device.cuh) */
SAGE2_DEFINE_MORE_KERNELS(sage2_attn_baseline, BaselineCta, 128)
