/* sage2 `interleave-softmax`: the baseline's numerics (bit-exact; SAGE2.md is the contract),
 * scheduled so that the softmax overlaps the tensor-core work of the same warp.
 *
 * Two CTA programs, one per target (the plugin's fatbin has sm_89 and sm_90a code):
 *   - WgmmaCta (sm_90a, Hopper): asynchronous warpgroup MMAs. Q·Kᵀ of the two 16-row slices runs
 *     as one wgmma group while the V tile is converted to f16; the softmax of both slices runs
 *     as two interleaved chains; P·V is f16 wgmma (P in registers, V from shared memory) in
 *     32-channel groups, two in flight, each folded into O while the next runs. +25% over baseline on the seed workload
 *     of the H200 (test/bench/RESULTS.md, "Issue 6"). Why the bits stay baseline's:
 *     sage2_wgmma.cuh.
 *   - InterleaveCta (sm_89, and anything that JIT-compiles the compute_89 PTX): baseline's
 *     mma.sync with K and V double-buffered and one barrier per tile (-0.5% on the H200 when it
 *     was the only path; Ada was not measured).
 * The candidates tried on the way and their timings are in test/bench/NOTES-kernels.md.
 *
 * Launch: grid (ceil(N/128), Hq, B), 128 threads, SAGE2_SMEM_BYTES (interleave_softmax.c) = 64 KiB
 * of dynamic shared memory (WgmmaCta at D = 128: Q 16K + K 2x8K + V8 2x8K + V as f16 16K;
 * InterleaveCta uses the first 48K). */
#include "../common/sage2_params.h"
#include "../common/sage2_device.cuh"
#include "../common/sage2_wgmma.cuh"

namespace {

using namespace sage2;

template <int HD> struct InterleaveCta : Sage2Cta<HD> {
    using Base = Sage2Cta<HD>;
    using Base::k_bh, Base::v_bh, Base::ks_bh, Base::k_stride_n, Base::v_stride_d;
    using Base::N, Base::KV, Base::n_tiles, Base::tid, Base::warp, Base::lane, Base::q_scale, Base::c0;

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

    template <bool kScaleX, bool kMask, bool kCausal = false> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);
        const int cur = j & 1, nxt = cur ^ 1;

        /* everything issued so far has landed; every warp is done with tile j-1's buffers */
        cp_async_wait<0>();
        __syncthreads();
        if (j + 1 < n_tiles) {
            load_k_tile<HD>(k_buf(nxt), k_bh, k_stride_n, (j + 1) * CTA_K, KV, tid);
            load_v_tile<HD>(v8_buf(nxt), v_bh, v_stride_d, (j + 1) * CTA_K, tid);
        }
        cp_async_commit();

        int32_t s[SLICES][KEY_BLOCKS][4];
        compute_scores_warp<HD>(s, q_base, k_base0 + cur * K_BYTES);

        float alpha[SLICES][2];
        uint32_t p8[SLICES][PV_KHALVES][4];
        this->template softmax_tile<kScaleX, kMask, kCausal>(s, delta, c, KV - j * CTA_K, alpha, p8, j * CTA_K);
        this->pv_tile(p8, alpha, v_base0 + cur * V8_BYTES);
    }

    template <bool kCausal = false, bool kBf16 = false>
    __device__ __forceinline__ void run(const sage2_attn_params &p, uint8_t *smem_) {
        smem = smem_;
        this->begin(p);
        const int bx = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
        const int hk = h / (p.heads_q / p.heads_kv);
        const int row0 = bx * CTA_Q;
        if constexpr (kCausal) this->causal_begin(row0);

        q_base = q_frag_base<HD>(smem + Q_OFF, warp, lane);
        k_base0 = k_frag_base<HD>(k_buf(0), lane);
        v_base0 = v_frag_base(v8_buf(0), lane);

        const int8_t *q_bh = this->bind_tensors(p, b, h, hk, row0);

        /* prologue: {Q, K_0, V_0} */
        load_q_tile<HD>(smem + Q_OFF, q_bh, p.q_stride_n, 0, N - row0, tid);
        load_k_tile<HD>(k_buf(0), k_bh, k_stride_n, 0, KV, tid);
        load_v_tile<HD>(v8_buf(0), v_bh, v_stride_d, 0, tid);
        cp_async_commit();

        this->init_softmax(p, b, h, bx);

        walk_tiles<kCausal>(*this); /* returns with smem free: the O staging area */

        this->template store_o<kBf16>(p, smem, b, h, hk, row0); /* §2.6 epilogue */
    }
};


#if SAGE2_HAS_WGMMA || !defined(__CUDA_ARCH__) /* host pass: names only */
/* sm_90a: the warpgroup (the CTA's 4 warps) computes with asynchronous wgmma, so that tensor work
 * and the softmax of the same warp overlap:
 *   - Q·Kᵀ of both slices is issued as one wgmma group (Q and K straight from shared memory);
 *     the conversion of the V tile to f16 runs while it computes; then the softmax of the two
 *     slices runs as two independent chains;
 *   - P·V is f16 wgmma with P in registers and V (as f16) in shared memory, in groups of 32
 *     channels, double-buffered: the fold O = fma(α, O, B) of one group runs while the next
 *     group's products are computed.
 * The numerics are baseline's: integer scores are exact in any instruction, and P·V replays
 * ptxas's sm_90 lowering of the FP8 mma.sync (sage2_wgmma.cuh), so the output bytes are equal.
 * Shared memory (D = 128): Q 16K (rows permuted, below) + K 2x8K + V8 2x8K + V16 16K = 64 KiB. */
template <int HD> struct WgmmaCta : Sage2Cta<HD> {
    using Base = Sage2Cta<HD>;
    using Base::k_bh, Base::v_bh, Base::ks_bh, Base::k_stride_n, Base::v_stride_d;
    using Base::N, Base::KV, Base::n_tiles, Base::tid, Base::warp, Base::lane, Base::q_scale, Base::c0;
    using Base::o, Base::m, Base::d;

    static constexpr int Q_BYTES = CTA_Q * HD, K_BYTES = CTA_K * HD, V8_BYTES = HD * CTA_K;
    static constexpr int VH_BYTES = HD * wg::VH_ROW_BYTES;
    static constexpr int Q_OFF = 0;
    static constexpr int K_OFF = Q_BYTES;               /* 2 buffers */
    static constexpr int V8_OFF = K_OFF + 2 * K_BYTES;  /* 2 buffers */
    static constexpr int VH_OFF = V8_OFF + 2 * V8_BYTES;
    static constexpr int TOTAL = VH_OFF + VH_BYTES;     /* 64 KiB at D = 128 */
    static_assert(TOTAL <= 65536, "smem");
    static_assert(Q_OFF % 1024 == 0 && K_OFF % 1024 == 0 && V8_OFF % 1024 == 0 && VH_OFF % 1024 == 0,
                  "wgmma operands need 1024-byte aligned tiles");
    static_assert(NUM_WARPS * Base::O_WARP_BYTES <= TOTAL, "O staging exceeds the tiles' smem");

    uint8_t *smem;

    __device__ __forceinline__ uint8_t *k_buf(int b) { return smem + K_OFF + b * K_BYTES; }
    __device__ __forceinline__ uint8_t *v8_buf(int b) { return smem + V8_OFF + b * V8_BYTES; }

    /* Q rows in shared memory: CTA row 32w + 16sl + i goes to row 64sl + 16w + i, so that the 64
     * rows of slice sl of all four warps form the M = 64 A tile of one wgmma (warp w supplies rows
     * 16w..16w+15 of it, which are its own slice sl). */
    __device__ __forceinline__ void load_q_permuted(const int8_t *q_bh, int64_t stride_n, int rows_left) {
        constexpr int CPR = HD / 16;
        const uint32_t base = smem_u32(smem + Q_OFF);
#pragma unroll
        for (int it = 0; it < CTA_Q * CPR / NUM_THREADS; ++it) {
            const int idx = it * NUM_THREADS + tid;
            const int row = idx / CPR, chunk = idx % CPR;
            const int srow = ((row >> 4) & 1) * 64 + (row >> 5) * 16 + (row & 15);
            const bool ok = row < rows_left;
            const int8_t *src = q_bh + (ok ? (int64_t)row * stride_n + chunk * 16 : 0);
            cp_async_16(base + smem_offset<HD>(srow, chunk), src, ok ? 16u : 0u);
        }
    }

    /* The copies of load_k_tile / load_v_tile (sage2_device.cuh), with the per-thread address
     * arithmetic reduced to one base per tile: a thread's rows advance by a fixed count per copy
     * (16 or 32), which leaves the swizzle unchanged. Worth +0.8% here, where the tile is short;
     * baseline keeps the plain loaders, so the comparator stays the code that was measured. */
    __device__ __forceinline__ void load_k_hoisted(int b, int key0) {
        constexpr int CPR = HD / 16, ROWS_PER = NUM_THREADS / CPR, ITERS = CTA_K / ROWS_PER;
        static_assert(ROWS_PER % 8 == 0, "the row step must keep the swizzle");
        const int r0 = tid / CPR, chunk = tid % CPR;
        const uint32_t dst = smem_u32(k_buf(b)) + smem_offset<HD>(r0, chunk);
        const int8_t *src = k_bh + (int64_t)(key0 + r0) * k_stride_n + chunk * 16;
        const int64_t step = (int64_t)ROWS_PER * k_stride_n;
#pragma unroll
        for (int it = 0; it < ITERS; ++it) {
            const bool ok = key0 + r0 + it * ROWS_PER < KV;
            cp_async_16(dst + it * ROWS_PER * HD, ok ? src + it * step : k_bh, ok ? 16u : 0u);
        }
    }
    __device__ __forceinline__ void load_v_hoisted(int b, int key0) {
        constexpr int CPR = CTA_K / 16, ROWS_PER = NUM_THREADS / CPR, ITERS = HD / ROWS_PER;
        static_assert(ROWS_PER % 8 == 0, "the row step must keep the swizzle");
        const int r0 = tid / CPR, chunk = tid % CPR;
        const uint32_t dst = smem_u32(v8_buf(b)) + smem_offset<CTA_K>(r0, chunk);
        const uint8_t *src = v_bh + (int64_t)r0 * v_stride_d + key0 + chunk * 16;
        const int64_t step = (int64_t)ROWS_PER * v_stride_d;
#pragma unroll
        for (int it = 0; it < ITERS; ++it) cp_async_16(dst + it * ROWS_PER * CTA_K, src + it * step, 16u);
    }
    template <bool kScaleX, bool kMask, bool kCausal = false> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);
        const int cur = j & 1, nxt = cur ^ 1;

        /* K_j and V8_j have landed (and Q); every warp is done with tile j-1 (its wgmmas too) */
        cp_async_wait<0>();
        wg::fence_proxy_async();
        __syncthreads();
        if (j + 1 < n_tiles) {
            load_k_hoisted(nxt, (j + 1) * CTA_K);
            load_v_hoisted(nxt, (j + 1) * CTA_K);
        }
        cp_async_commit();

        /* §2.1: scores of both slices, one wgmma group */
        int32_t s[SLICES][KEY_BLOCKS][4];
        const uint64_t dq = wg::kmajor_desc<HD>(smem_u32(smem + Q_OFF));
        const uint64_t dk = wg::kmajor_desc<HD>(smem_u32(k_buf(cur)));
        wg::fence();
#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl) {
            const uint64_t dqs = dq + ((sl * 64 * HD) >> 4);
            wg::wgmma_s8_m64n64k32<0>(s[sl], dqs, dk);
#pragma unroll
            for (int kk = 1; kk < HD / MMA_K; ++kk) wg::wgmma_s8_m64n64k32<1>(s[sl], dqs + 2 * kk, dk + 2 * kk);
        }
        wg::commit();

        /* V8_j -> f16 while the scores are computed */
        wg::convert_v_tile_f16<HD>(smem + VH_OFF, v8_buf(cur), tid);
        wg::fence_proxy_async();

        /* §2.2-§2.5 for both slices at once: two independent dependency chains (max, shuffles,
         * ex2, sums) that ptxas interleaves. Starting slice 0's softmax while slice 1's scores
         * were still in flight measured 5% slower (test/bench/NOTES-kernels.md). */
        float alpha[SLICES][2];
        uint32_t pf[SLICES][PV_KHALVES][2][4];
        const int valid_keys = KV - j * CTA_K;
        wg::wait<0>();
        wg::hold(s[0]);
        wg::hold(s[1]);
#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl)
            wg::softmax_slice<kScaleX, kMask, kCausal>(s[sl], delta, c, valid_keys, lane, m[sl], d[sl], alpha[sl],
                                                       pf[sl], kCausal ? this->qrow0 + sl * MMA_M - j * CTA_K : 0);

        __syncthreads(); /* the f16 V tile is complete */

        /* §2.5: groups (sl, cg) in order, two in flight (sage2_wgmma.cuh) */
        wg::pv_slices<HD, SLICES>(o, pf, alpha, smem_u32(smem + VH_OFF));
    }

    template <bool kCausal = false, bool kBf16 = false>
    __device__ __forceinline__ void run(const sage2_attn_params &p, uint8_t *smem_) {
        smem = smem_;
        if (smem_u32(smem) & 1023) __trap(); /* wgmma descriptors assume 1024-byte alignment */
        this->begin(p);
        const int bx = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
        const int hk = h / (p.heads_q / p.heads_kv);
        const int row0 = bx * CTA_Q;
        if constexpr (kCausal) this->causal_begin(row0);
        const int8_t *q_bh = this->bind_tensors(p, b, h, hk, row0);

        /* prologue: {Q, K_0, V8_0} */
        load_q_permuted(q_bh, p.q_stride_n, N - row0);
        load_k_hoisted(0, 0);
        load_v_hoisted(0, 0);
        cp_async_commit();

        this->init_softmax(p, b, h, bx);

        walk_tiles<kCausal>(*this); /* returns with smem free: the O staging area */

        this->template store_o<kBf16>(p, smem, b, h, hk, row0); /* §2.6 epilogue */
    }
};
#endif

} // namespace

extern "C" __global__ void __launch_bounds__(128) sage2_attn_interleave_softmax(const sage2_attn_params p) {
    /* the fragment addressing XORs address bits 4..6 (sage2_device.cuh), and wgmma's swizzled
     * descriptors need 1024-byte aligned tiles */
    extern __shared__ __align__(1024) uint8_t interleave_smem[];
#if SAGE2_HAS_WGMMA
    run_any_head_dim<WgmmaCta>(p, interleave_smem);
#else
    run_any_head_dim<InterleaveCta>(p, interleave_smem);
#endif
}

/* sage2_attn_interleave_softmax_causal, _bf16, _bf16_causal (sage2_device.cuh), the same CTA
 * program per target as above */
#if SAGE2_HAS_WGMMA
#define INTERLEAVE_CTA WgmmaCta
#else
#define INTERLEAVE_CTA InterleaveCta
#endif
SAGE2_DEFINE_MORE_KERNELS(sage2_attn_interleave_softmax, INTERLEAVE_CTA, 1024)
