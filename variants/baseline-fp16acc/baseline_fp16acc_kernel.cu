/* sage2 `baseline-fp16acc`: baseline's kernel (baseline_kernel.cu, SAGE2.md) with SageAttention's
 * "fp32+fp16" P·V: for each 64-key tile, 16-row slice and 8-channel block,
 *     B16 = mma_e4m3_f16(P8[:, 32:64], V8[32:64], mma_e4m3_f16(P8[:, 0:32], V8[0:32], +0))
 *     O   = fma(α, O, f32(B16))
 * (mma.sync.m16n8k32.f16.e4m3.e4m3.f16: the FP8 MMA with an f16 accumulator; on sm_90 ptxas
 * lowers it as it did for the golden files, which were made on an H200). Everything else — Q·Kᵀ,
 * the two tile classes, the online softmax, the denominator, the epilogue — is baseline's; V is
 * quantized with R = 2.25 (baseline_fp16acc.c), so that the f16 sums of 64 products of P ≤ 448
 * and |V8| ≤ 2.25 stay finite. SageAttention's source at d1a57a5 is the arbiter (SAGE2.md §5);
 * the golden files carry its output as o_sm89_f16acc.
 * Same launch, shared memory, pipelining and build flags as baseline. */
#include "../common/sage2_params.h"
#include "../common/sage2_device.cuh"

namespace {

using namespace sage2;

template <int HD> struct Fp16AccCta : Sage2Cta<HD> {
    using Base = Sage2Cta<HD>;
    using Base::k_bh, Base::v_bh, Base::ks_bh, Base::k_stride_n, Base::v_stride_d;
    using Base::N, Base::KV, Base::n_tiles, Base::tid, Base::warp, Base::lane, Base::q_scale, Base::c0;
    using L = SmemLayout<HD>;
    static_assert(NUM_WARPS * Base::O_WARP_BYTES <= L::TOTAL, "O staging exceeds the tiles' smem");

    uint8_t *sQ, *sK, *sV;
    uint32_t q_base, k_base, v_base; /* per-lane fragment addresses */

    template <bool kScaleX, bool kMask, bool kCausal = false> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);

        cp_async_wait<1>(); /* K_j (and Q) has landed */
        __syncthreads();

        int32_t s[SLICES][KEY_BLOCKS][4];
        compute_scores_warp<HD>(s, q_base, k_base);
        __syncthreads(); /* every warp is done with sK */
        if (j + 1 < n_tiles) load_k_tile<HD>(sK, k_bh, k_stride_n, (j + 1) * CTA_K, KV, tid);
        cp_async_commit();

        uint32_t p8[SLICES][PV_KHALVES][4];
        float alpha[SLICES][2];
        this->template softmax_tile<kScaleX, kMask, kCausal>(s, delta, c, KV - j * CTA_K, alpha, p8, j * CTA_K);

        cp_async_wait<1>(); /* V_j has landed */
        __syncthreads();
        this->pv_tile_f16acc(p8, alpha, v_base);
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

        load_q_tile<HD>(sQ, q_bh, p.q_stride_n, 0, N - row0, tid);
        load_k_tile<HD>(sK, k_bh, k_stride_n, 0, KV, tid);
        cp_async_commit();
        load_v_tile<HD>(sV, v_bh, v_stride_d, 0, tid);
        cp_async_commit();

        this->init_softmax(p, b, h, bx);
        walk_tiles<kCausal>(*this);
        this->template store_o<kBf16>(p, smem, b, h, hk, row0);
    }
};

} // namespace

extern "C" __global__ void __launch_bounds__(128) sage2_attn_baseline_fp16acc(const sage2_attn_params p) {
    extern __shared__ __align__(128) uint8_t sage2_smem[];
    run_any_head_dim<Fp16AccCta>(p, sage2_smem);
}

/* sage2_attn_baseline_fp16acc_causal, _bf16, _bf16_causal (sage2_device.cuh) */
SAGE2_DEFINE_MORE_KERNELS(sage2_attn_baseline_fp16acc, Fp16AccCta, 128)
