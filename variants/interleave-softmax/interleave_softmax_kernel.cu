/* sage2 `interleave-softmax`: the baseline's numerics (bit-exact; SAGE2.md is the contract),
 * scheduled so that the softmax can overlap the tensor-core work of the same warp.
 *
 * The one difference from baseline (SAGE2.md §3's "free" list: order of issue, buffering): K and
 * V are double-buffered, so one __syncthreads per tile suffices and a whole tile (scores,
 * softmax, P·V) is one basic block, which ptxas may interleave freely. Bit-exact with baseline,
 * but not faster on the H200 (-0.5%). The other candidates tried (biased int->float scores, V as
 * f16 in shared memory on sm_90, tree max, cross-tile pipeline, 8 warps x 16 rows) and their
 * timings are in test/bench/RESULTS.md, section "Issue 6"; their code is in the git history
 * (commit dc2be1a, variants/interleave-softmax and variants/common/sage2_device.cuh).
 *
 * Launch: grid (ceil(N/128), Hq, B), 128 threads, SAGE2_SMEM_BYTES (interleave_softmax.c) of
 * dynamic shared memory: Q 16K + K 2x8K + V 2x8K = 48 KiB for D = 128. */
#include "../common/sage2_params.h"
#include "../common/sage2_device.cuh"

namespace {

using namespace sage2;

template <int HD> struct InterleaveCta : Sage2Cta<HD> {
    using Base = Sage2Cta<HD>;
    using Base::k_bh, Base::v_bh, Base::ks_bh, Base::k_stride_n, Base::v_stride_d;
    using Base::N, Base::n_tiles, Base::tid, Base::warp, Base::lane, Base::q_scale, Base::c0;

    static constexpr int Q_BYTES = CTA_Q * HD, K_BYTES = CTA_K * HD, V8_BYTES = HD * CTA_K;
    static constexpr int Q_OFF = 0;
    static constexpr int K_OFF = Q_BYTES;              /* 2 buffers */
    static constexpr int V8_OFF = K_OFF + 2 * K_BYTES; /* 2 buffers */
    static constexpr int TOTAL = V8_OFF + 2 * V8_BYTES; /* 48 KiB at D=128 */
    static_assert(TOTAL <= 81920, "smem");
    static_assert(NUM_WARPS * Base::O_WARP_BYTES <= TOTAL, "O staging exceeds the tiles' smem");

    uint8_t *smem;
    uint32_t q_base, k_base0, v_base0; /* per-lane fragment addresses of buffer 0 */

    __device__ __forceinline__ uint8_t *k_buf(int b) { return smem + K_OFF + b * K_BYTES; }
    __device__ __forceinline__ uint8_t *v8_buf(int b) { return smem + V8_OFF + b * V8_BYTES; }

    template <bool kScaleX, bool kMask> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);
        const int cur = j & 1, nxt = cur ^ 1;

        /* everything issued so far has landed; every warp is done with tile j-1's buffers */
        cp_async_wait<0>();
        __syncthreads();
        if (j + 1 < n_tiles) {
            load_k_tile<HD>(k_buf(nxt), k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
            load_v_tile<HD>(v8_buf(nxt), v_bh, v_stride_d, (j + 1) * CTA_K, tid);
        }
        cp_async_commit();

        int32_t s[SLICES][KEY_BLOCKS][4];
        compute_scores_warp<HD>(s, q_base, k_base0 + cur * K_BYTES);

        float alpha[SLICES][2];
        uint32_t p8[SLICES][PV_KHALVES][4];
        this->template softmax_tile<kScaleX, kMask>(s, delta, c, N - j * CTA_K, alpha, p8);
        this->pv_tile(p8, alpha, v_base0 + cur * V8_BYTES);
    }

    __device__ __forceinline__ void run(const sage2_attn_params &p, uint8_t *smem_) {
        smem = smem_;
        this->begin(p);
        const int bx = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
        const int hk = h / (p.heads_q / p.heads_kv);
        const int row0 = bx * CTA_Q;

        q_base = q_frag_base<HD>(smem + Q_OFF, warp, lane);
        k_base0 = k_frag_base<HD>(k_buf(0), lane);
        v_base0 = v_frag_base(v8_buf(0), lane);

        const int8_t *q_bh = this->bind_tensors(p, b, h, hk, row0);

        /* prologue: {Q, K_0, V_0} */
        load_q_tile<HD>(smem + Q_OFF, q_bh, p.q_stride_n, 0, N - row0, tid);
        load_k_tile<HD>(k_buf(0), k_bh, k_stride_n, 0, N, tid);
        load_v_tile<HD>(v8_buf(0), v_bh, v_stride_d, 0, tid);
        cp_async_commit();

        this->init_softmax(p, b, h, bx);

        walk_tiles(*this); /* returns with smem free: the O staging area */

        this->store_o(p, smem, b, h, hk, row0); /* §2.6 epilogue */
    }
};

} // namespace

extern "C" __global__ void __launch_bounds__(128) sage2_attn_interleave_softmax(const sage2_attn_params p) {
    /* 128-byte alignment is required: the fragment addressing XORs bits 4..6 (sage2_device.cuh) */
    extern __shared__ __align__(128) uint8_t sage2_smem[];
    run_any_head_dim<InterleaveCta>(p, sage2_smem);
}
