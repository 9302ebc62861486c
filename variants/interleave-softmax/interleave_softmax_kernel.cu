/* sage2 `interleave-softmax`: the baseline's numerics (bit-exact; SAGE2.md is the contract),
 * scheduled so that the softmax overlaps the tensor-core work of the same warp.
 *
 * STATUS: experimental. Every configuration below is bit-exact with baseline (golden files, random
 * shapes, seed SHA-256), but none is faster on the H200: see .dev/NOTES.md (issue 6). The exported
 * kernel is the double-buffered one (-0.5% vs baseline); the others are template knobs.
 *
 * Differences from baseline, all in SAGE2.md §3's "free" list:
 *  - K and V are double-buffered, so one __syncthreads per tile suffices and a whole tile
 *    (scores, softmax, P·V) is one basic block: ptxas interleaves the ex2/fma/convert work of the
 *    softmax with the IMMA/HMMA work instead of the baseline's barrier-separated phases.
 *  - The int8 score accumulators start at the fp32 bit pattern of 1.5*2^23, so S_int -> fp32 is
 *    one FADD instead of an I2F on the conversion pipe (exact, see sage2_device.cuh).
 *  - sm_90: V is converted e4m3 -> f16 once per CTA into shared memory (each thread a quarter of
 *    the baseline's per-warp work) and P·V issues the f16 HMMA chain that ptxas emits for the
 *    baseline's FP8 mma.sync (sage2_device.cuh: pv_accumulate_f16). sm_89 keeps the native FP8 mma.
 *
 *  - kPipe: cross-tile software pipeline, scores of tile j and P·V of tile j-1 in one block.
 *  - kTree: the row max as a tree (exact).
 *  - Is8Cta: 8 warps x one 16-row slice (256 threads); bit-exact, but -2.5% at best on the H200
 *    (.dev/NOTES.md issue 7): 4 warps/scheduler x 1 slice is the same number of independent slices
 *    per scheduler as baseline's 2 x 2, while K/V fragment loads and the sm_90 V unpacks double.
 *    Exported only with IS_EXPORT_8W=1 (then the .c must set SAGE2_THREADS 256, SAGE2_WARP_Q 16).
 *
 * Launch: grid (ceil(N/128), Hq, B), 128 threads, SAGE2_SMEM_BYTES (interleave_softmax.c) of
 * dynamic shared memory: Q 16K + K 2x8K + V8 2x8K = 48 KiB for D = 128 (+ Vh 2x16K = 80 KiB with
 * the f16-V knob). */
#include "../common/sage2_params.h"
#include "../common/sage2_device.cuh"

namespace {

using namespace sage2;

/* Native FP8 mma on sm_89 (and in the compute_89 PTX); the f16 route on sm_90. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool kArchF16Pv = true;
#else
constexpr bool kArchF16Pv = false;
#endif

template <int HD, bool kVhReq, bool kBias, bool kTree, bool kPipe> struct IsCta {
    static constexpr bool kVh = kVhReq && kArchF16Pv && !kPipe;
    static constexpr int CBLOCKS = HD / MMA_N;
    static constexpr int Q_BYTES = CTA_Q * HD, K_BYTES = CTA_K * HD, V8_BYTES = HD * CTA_K;
    static constexpr int VH_BYTES = HD * VH_ROW_BYTES;
    static constexpr int Q_OFF = 0;
    static constexpr int K_OFF = Q_BYTES;              /* 2 buffers */
    static constexpr int V8_OFF = K_OFF + 2 * K_BYTES; /* 2 buffers */
    static constexpr int VH_OFF = V8_OFF + 2 * V8_BYTES; /* 2 buffers (sm_90) */
    static constexpr int TOTAL = kVh ? VH_OFF + 2 * VH_BYTES : VH_OFF; /* 80 KiB / 48 KiB at D=128 */
    static constexpr int O_WARP_BYTES = WARP_Q * HD * 2;
    static_assert(TOTAL <= 81920, "smem");

    uint8_t *smem;
    const int8_t *k_bh;
    const uint8_t *v_bh;
    const float *ks_bh;
    int64_t k_stride_n, v_stride_d;
    int N, n_tiles, tid, warp, lane;
    float q_scale, c0;
    uint32_t q_base, k_base0, v_base0; /* per-lane fragment addresses of buffer 0 */

    float o[SLICES][CBLOCKS][4];
    float m[SLICES][2], d[SLICES][2];

    __device__ __forceinline__ uint8_t *k_buf(int b) { return smem + K_OFF + b * K_BYTES; }
    __device__ __forceinline__ uint8_t *v8_buf(int b) { return smem + V8_OFF + b * V8_BYTES; }
    __device__ __forceinline__ uint8_t *vh_buf(int b) { return smem + VH_OFF + b * VH_BYTES; }

    template <bool kScaleX, bool kMask> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);
        const int cur = j & 1, nxt = cur ^ 1;

        /* everything issued so far has landed; every warp is done with tile j-1's buffers */
        cp_async_wait<0>();
        __syncthreads();
        if (kVh) {
            if (j + 1 < n_tiles) convert_v_tile_f16<HD>(vh_buf(nxt), v8_buf(nxt), tid);
            if (j + 1 < n_tiles) load_k_tile<HD>(k_buf(nxt), k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
            if (j + 2 < n_tiles) load_v_tile<HD>(v8_buf(cur), v_bh, v_stride_d, (j + 2) * CTA_K, tid);
        } else if (j + 1 < n_tiles) {
            load_k_tile<HD>(k_buf(nxt), k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
            load_v_tile<HD>(v8_buf(nxt), v_bh, v_stride_d, (j + 1) * CTA_K, tid);
        }
        cp_async_commit();

        int32_t s[SLICES][KEY_BLOCKS][4];
        compute_scores_warp_init<HD>(s, q_base, k_base0 + cur * K_BYTES, kBias ? SCORE_BIAS_BITS : 0);

        float alpha[SLICES][2];
        const int valid_keys = N - j * CTA_K;
        if constexpr (kVh) {
            uint32_t pf[SLICES][PV_KHALVES][2][4];
#pragma unroll
            for (int sl = 0; sl < SLICES; ++sl) {
                float x[KEY_BLOCKS][4];
                if (kBias) score_tile_scale_biased<kScaleX, kMask>(s[sl], x, delta, valid_keys, lane);
                else score_tile_scale<kScaleX, kMask>(s[sl], x, delta, valid_keys, lane);
                if (kTree) online_softmax_update_tree(x, c, m[sl], d[sl], alpha[sl]);
                else online_softmax_update(x, c, m[sl], d[sl], alpha[sl]);
                pack_p_f16(x, pf[sl]);
            }
            const uint32_t vb = v_base0 + cur * VH_BYTES;
#pragma unroll
            for (int cb = 0; cb < CBLOCKS; ++cb) {
                uint32_t v[PV_KHALVES][4];
                load_vh_frag(v, vb, cb);
#pragma unroll
                for (int sl = 0; sl < SLICES; ++sl) pv_accumulate_f16(o[sl][cb], pf[sl], v, alpha[sl]);
            }
        } else {
            uint32_t p8[SLICES][PV_KHALVES][4];
#pragma unroll
            for (int sl = 0; sl < SLICES; ++sl) {
                float x[KEY_BLOCKS][4];
                if (kBias) score_tile_scale_biased<kScaleX, kMask>(s[sl], x, delta, valid_keys, lane);
                else score_tile_scale<kScaleX, kMask>(s[sl], x, delta, valid_keys, lane);
                if (kTree) online_softmax_update_tree(x, c, m[sl], d[sl], alpha[sl]);
                else online_softmax_update(x, c, m[sl], d[sl], alpha[sl]);
                pack_p_e4m3(x, p8[sl]);
            }
            const uint32_t vb = v_base0 + cur * V8_BYTES;
#pragma unroll
            for (int cb = 0; cb < CBLOCKS; ++cb) {
                uint32_t v[4];
                load_v_frag(v, vb, cb);
#pragma unroll
                for (int sl = 0; sl < SLICES; ++sl) pv_accumulate(o[sl][cb], p8[sl], v, alpha[sl]);
            }
        }
    }

    /* Cross-tile software pipeline (kPipe, native FP8 mma): step j issues the scores of tile j
     * and the P·V of tile j-1 in one basic block (independent MMA streams for the scheduler),
     * then the softmax of tile j. p8 / alpha of tile j-1 stay live across the step. */
    uint32_t pp8[SLICES][PV_KHALVES][4];
    float palpha[SLICES][2];

    __device__ __forceinline__ void pv_prev(int jp) {
        const uint32_t vb = v_base0 + (jp & 1) * V8_BYTES;
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb) {
            uint32_t v[4];
            load_v_frag(v, vb, cb);
#pragma unroll
            for (int sl = 0; sl < SLICES; ++sl) pv_accumulate(o[sl][cb], pp8[sl], v, palpha[sl]);
        }
    }

    template <bool kScaleX, bool kMask> __device__ __forceinline__ void step(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);
        cp_async_wait<0>();
        __syncthreads(); /* K_j, V_{j-1} landed; K[(j+1)&1], V[j&1] free */
        if (j + 1 < n_tiles) load_k_tile<HD>(k_buf((j + 1) & 1), k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
        load_v_tile<HD>(v8_buf(j & 1), v_bh, v_stride_d, j * CTA_K, tid);
        cp_async_commit();

        int32_t s[SLICES][KEY_BLOCKS][4];
        compute_scores_warp_init<HD>(s, q_base, k_base0 + (j & 1) * K_BYTES, kBias ? SCORE_BIAS_BITS : 0);
        if (j > 0) pv_prev(j - 1);
        const int valid_keys = N - j * CTA_K;
#pragma unroll
        for (int sl = 0; sl < SLICES; ++sl) {
            float x[KEY_BLOCKS][4];
            if (kBias) score_tile_scale_biased<kScaleX, kMask>(s[sl], x, delta, valid_keys, lane);
            else score_tile_scale<kScaleX, kMask>(s[sl], x, delta, valid_keys, lane);
            if (kTree) online_softmax_update_tree(x, c, m[sl], d[sl], palpha[sl]);
            else online_softmax_update(x, c, m[sl], d[sl], palpha[sl]);
            pack_p_e4m3(x, pp8[sl]);
        }
    }

    __device__ __forceinline__ void run(const sage2_attn_params &p, uint8_t *smem_) {
        smem = smem_;
        tid = threadIdx.x;
        warp = tid >> 5;
        lane = tid & 31;
        const int bx = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
        N = p.seq_len;
        n_tiles = (N + CTA_K - 1) / CTA_K;
        const int hk = h / (p.heads_q / p.heads_kv);
        const int row0 = bx * CTA_Q;

        q_base = q_frag_base<HD>(smem + Q_OFF, warp, lane);
        k_base0 = k_frag_base<HD>(k_buf(0), lane);
        v_base0 = kVh ? vh_frag_base(vh_buf(0), lane) : v_frag_base(v8_buf(0), lane);

        const int8_t *q_bh = reinterpret_cast<const int8_t *>(p.q) + b * p.q_stride_b + h * p.q_stride_h +
                             (int64_t)row0 * p.q_stride_n;
        k_bh = reinterpret_cast<const int8_t *>(p.k) + b * p.k_stride_b + hk * p.k_stride_h;
        v_bh = reinterpret_cast<const uint8_t *>(p.v) + b * p.v_stride_b + hk * p.v_stride_h;
        k_stride_n = p.k_stride_n;
        v_stride_d = p.v_stride_d;
        ks_bh = reinterpret_cast<const float *>(p.k_scale) +
                ((int64_t)b * p.heads_kv + hk) * p.k_scale_per_head;

        /* prologue: {Q, K_0, V8_0} (+ {V8_1} and V_0's conversion on sm_90) */
        load_q_tile<HD>(smem + Q_OFF, q_bh, p.q_stride_n, 0, N - row0, tid);
        load_k_tile<HD>(k_buf(0), k_bh, k_stride_n, 0, N, tid);
        if (!kPipe) load_v_tile<HD>(v8_buf(0), v_bh, v_stride_d, 0, tid);
        cp_async_commit();
        if (kVh) {
            if (n_tiles > 1) load_v_tile<HD>(v8_buf(1), v_bh, v_stride_d, CTA_K, tid);
            cp_async_commit();
            cp_async_wait<1>();
            __syncthreads();
            convert_v_tile_f16<HD>(vh_buf(0), v8_buf(0), tid);
        }

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

        if constexpr (kPipe) {
            int j = 0;
            for (; j < n_tiles - 2; ++j) step<false, false>(j);
            if (n_tiles >= 2) step<true, false>(j++);
            step<true, true>(j);
            cp_async_wait<0>();
            __syncthreads();
            pv_prev(n_tiles - 1);
        } else {
            int j = 0;
            for (; j < n_tiles - 2; ++j) tile<false, false>(j);
            if (n_tiles >= 2) tile<true, false>(j++);
            tile<true, true>(j);
        }

        cp_async_wait<0>();
        __syncthreads(); /* all tiles consumed: smem becomes the O staging area */

        /* §2.6 epilogue (as baseline) */
        const float *vs = reinterpret_cast<const float *>(p.v_scale) + ((int64_t)b * p.heads_kv + hk) * HD;
        uint8_t *sO = smem + warp * O_WARP_BYTES;
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

template <bool kVh, bool kBias, bool kTree = false, bool kPipe = false> __device__ __forceinline__ void is_body(const sage2_attn_params &p) {
    extern __shared__ __align__(128) uint8_t sage2_smem[];
    if (p.head_dim == 128) {
        IsCta<128, kVh, kBias, kTree, kPipe> cta;
        cta.run(p, sage2_smem);
    } else if (p.head_dim == 64) {
        IsCta<64, kVh, kBias, kTree, kPipe> cta;
        cta.run(p, sage2_smem);
    }
}

/* ---------------------------------------------------------------------------------------------
 * 8 warps per CTA, one 16-row slice per warp (256 threads). Same CTA (128 query rows), same
 * 64-key tiles, same key-to-tile mapping; warp w owns rows 16w..16w+15 = slice (w & 1) of the
 * baseline's warp w >> 1, so it uses that warp's Q scale (group w >> 1). Every row goes through
 * exactly the baseline's per-slice code (score_tile_scale, online_softmax_update, pack_p_e4m3,
 * pv_accumulate): only which warp holds a row changes (SAGE2.md §3). The O accumulator is 64
 * registers per thread instead of 128.
 *   kDB:   K/V double-buffered, one barrier per tile (48 KiB); else baseline's single buffers with
 *          four barriers per tile (32 KiB).
 *   kQreg: the slice's Q fragments stay in registers (16 at D=128) instead of 4 ldmatrix per tile.
 * ------------------------------------------------------------------------------------------- */
constexpr int IS8_WARPS = 8;
constexpr int IS8_THREADS = IS8_WARPS * 32;

template <int HD, bool kDB, bool kQreg, bool kVhReq = false> struct Is8Cta {
    static constexpr int NT = IS8_THREADS;
    static constexpr bool kVh = kVhReq && kDB && kArchF16Pv; /* f16 V in smem (sm_90 only) */
    static constexpr int CBLOCKS = HD / MMA_N;
    static constexpr int KK = HD / MMA_K;
    static constexpr int NBUF = kDB ? 2 : 1;
    static constexpr int Q_BYTES = CTA_Q * HD, K_BYTES = CTA_K * HD, V_BYTES = HD * CTA_K;
    static constexpr int Q_OFF = 0;
    static constexpr int K_OFF = Q_BYTES;
    static constexpr int V_OFF = K_OFF + NBUF * K_BYTES;
    static constexpr int VH_BYTES = HD * VH_ROW_BYTES;
    static constexpr int VH_OFF = V_OFF + NBUF * V_BYTES;
    static constexpr int TOTAL = kVh ? VH_OFF + 2 * VH_BYTES : VH_OFF; /* D=128: 32 / 48 / 80 KiB */
    static constexpr int O_WARP_BYTES = MMA_M * HD * 2;  /* fp16 staging of one 16-row slice */
    static_assert(IS8_WARPS * MMA_M == CTA_Q, "8 slices of 16 rows cover the CTA");
    static_assert(IS8_WARPS * O_WARP_BYTES <= TOTAL, "O staging exceeds the tiles' smem");

    uint8_t *smem;
    const int8_t *k_bh;
    const uint8_t *v_bh;
    const float *ks_bh;
    int64_t k_stride_n, v_stride_d;
    int N, n_tiles, tid, warp, lane;
    float q_scale, c0;
    uint32_t q_base, k_base0, v_base0, vh_base0;

    uint32_t qa[KK][4];
    float o[CBLOCKS][4];
    float m[2], d[2];

    __device__ __forceinline__ uint8_t *k_buf(int b) { return smem + K_OFF + b * K_BYTES; }
    __device__ __forceinline__ uint8_t *v_buf(int b) { return smem + V_OFF + b * V_BYTES; }
    __device__ __forceinline__ uint8_t *vh_buf(int b) { return smem + VH_OFF + b * VH_BYTES; }

    __device__ __forceinline__ void scores(int32_t (&s)[KEY_BLOCKS][4], uint32_t k_base) {
        if constexpr (kQreg) compute_scores_qreg<HD>(s, qa, k_base);
        else compute_scores<HD>(s, q_base, k_base, 0);
    }

    template <bool kScaleX, bool kMask>
    __device__ __forceinline__ void softmax(int32_t (&s)[KEY_BLOCKS][4], int j, float delta, float c,
                                            uint32_t (&p8)[PV_KHALVES][4], float (&alpha)[2]) {
        float x[KEY_BLOCKS][4];
        score_tile_scale<kScaleX, kMask>(s, x, delta, N - j * CTA_K, lane);
        online_softmax_update(x, c, m, d, alpha);
        pack_p_e4m3(x, p8);
    }

    __device__ __forceinline__ void pv(const uint32_t (&p8)[PV_KHALVES][4], const float (&alpha)[2],
                                       uint32_t v_base) {
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb) {
            uint32_t v[4];
            load_v_frag(v, v_base, cb);
            pv_accumulate(o[cb], p8, v, alpha);
        }
    }

    template <bool kScaleX, bool kMask> __device__ __forceinline__ void tile(int j) {
        const float delta = dequant_delta(q_scale, __ldg(ks_bh + j));
        const float c = tile_slope<kScaleX>(c0, delta);
        int32_t s[KEY_BLOCKS][4];
        uint32_t p8[PV_KHALVES][4];
        float alpha[2];
        if constexpr (kVh) {
            /* V8 runs two tiles ahead; V8_{j+1} is converted to f16 during tile j (sm_90) */
            const int cur = j & 1, nxt = cur ^ 1;
            cp_async_wait<0>();
            __syncthreads();
            if (j + 1 < n_tiles) {
                convert_v_tile_f16_nt<HD, NT>(vh_buf(nxt), v_buf(nxt), tid);
                load_k_tile_nt<HD, NT>(k_buf(nxt), k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
            }
            if (j + 2 < n_tiles) load_v_tile_nt<HD, NT>(v_buf(cur), v_bh, v_stride_d, (j + 2) * CTA_K, tid);
            cp_async_commit();
            scores(s, k_base0 + cur * K_BYTES);
            uint32_t pf[PV_KHALVES][2][4];
            {
                float x[KEY_BLOCKS][4];
                score_tile_scale<kScaleX, kMask>(s, x, delta, N - j * CTA_K, lane);
                online_softmax_update(x, c, m, d, alpha);
                pack_p_f16(x, pf);
            }
            const uint32_t vb = vh_base0 + cur * VH_BYTES;
#pragma unroll
            for (int cb = 0; cb < CBLOCKS; ++cb) {
                uint32_t v[PV_KHALVES][4];
                load_vh_frag(v, vb, cb);
                pv_accumulate_f16(o[cb], pf, v, alpha);
            }
            (void)p8;
        } else if constexpr (kDB) {
            const int cur = j & 1, nxt = cur ^ 1;
            cp_async_wait<0>();
            __syncthreads(); /* tile j landed; every warp is done with tile j-1's buffers */
            if (j + 1 < n_tiles) {
                load_k_tile_nt<HD, NT>(k_buf(nxt), k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
                load_v_tile_nt<HD, NT>(v_buf(nxt), v_bh, v_stride_d, (j + 1) * CTA_K, tid);
            }
            cp_async_commit();
            scores(s, k_base0 + cur * K_BYTES);
            softmax<kScaleX, kMask>(s, j, delta, c, p8, alpha);
            pv(p8, alpha, v_base0 + cur * V_BYTES);
        } else {
            cp_async_wait<1>();
            __syncthreads(); /* K_j landed */
            scores(s, k_base0);
            __syncthreads(); /* every warp is done with sK */
            if (j + 1 < n_tiles) load_k_tile_nt<HD, NT>(k_buf(0), k_bh, k_stride_n, (j + 1) * CTA_K, N, tid);
            cp_async_commit();
            softmax<kScaleX, kMask>(s, j, delta, c, p8, alpha);
            cp_async_wait<1>();
            __syncthreads(); /* V_j landed */
            pv(p8, alpha, v_base0);
            __syncthreads(); /* every warp is done with sV */
            if (j + 1 < n_tiles) load_v_tile_nt<HD, NT>(v_buf(0), v_bh, v_stride_d, (j + 1) * CTA_K, tid);
            cp_async_commit();
        }
    }

    __device__ __forceinline__ void run(const sage2_attn_params &p, uint8_t *smem_) {
        smem = smem_;
        tid = threadIdx.x;
        warp = tid >> 5;
        lane = tid & 31;
        const int bx = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
        N = p.seq_len;
        n_tiles = (N + CTA_K - 1) / CTA_K;
        const int hk = h / (p.heads_q / p.heads_kv);
        const int row0 = bx * CTA_Q;
        const int qgroup = warp >> 1; /* the baseline warp (32-row Q scale group) of this slice */

        /* rows 16*warp .. +15 = slice (warp & 1) of baseline warp qgroup */
        q_base = q_frag_base<HD>(smem + Q_OFF, qgroup, lane) + (warp & 1) * MMA_M * HD;
        k_base0 = k_frag_base<HD>(k_buf(0), lane);
        v_base0 = v_frag_base(v_buf(0), lane);
        vh_base0 = kVh ? vh_frag_base(vh_buf(0), lane) : 0u;

        const int8_t *q_bh = reinterpret_cast<const int8_t *>(p.q) + b * p.q_stride_b + h * p.q_stride_h +
                             (int64_t)row0 * p.q_stride_n;
        k_bh = reinterpret_cast<const int8_t *>(p.k) + b * p.k_stride_b + hk * p.k_stride_h;
        v_bh = reinterpret_cast<const uint8_t *>(p.v) + b * p.v_stride_b + hk * p.v_stride_h;
        k_stride_n = p.k_stride_n;
        v_stride_d = p.v_stride_d;
        ks_bh = reinterpret_cast<const float *>(p.k_scale) +
                ((int64_t)b * p.heads_kv + hk) * p.k_scale_per_head;

        /* prologue: kDB {Q, K_0, V_0}; single buffer {Q, K_0}, {V_0} (as baseline) */
        load_q_tile_nt<HD, NT>(smem + Q_OFF, q_bh, p.q_stride_n, 0, N - row0, tid);
        load_k_tile_nt<HD, NT>(k_buf(0), k_bh, k_stride_n, 0, N, tid);
        if (!kDB) cp_async_commit();
        load_v_tile_nt<HD, NT>(v_buf(0), v_bh, v_stride_d, 0, tid);
        cp_async_commit();
        if (kVh) { /* {V8_1}; V_0 -> f16 */
            if (n_tiles > 1) load_v_tile_nt<HD, NT>(v_buf(1), v_bh, v_stride_d, CTA_K, tid);
            cp_async_commit();
            cp_async_wait<1>();
            __syncthreads();
            convert_v_tile_f16_nt<HD, NT>(vh_buf(0), v_buf(0), tid);
        }

        q_scale = __ldg(reinterpret_cast<const float *>(p.q_scale) +
                        ((int64_t)b * p.heads_q + h) * p.q_scale_per_head + bx * NUM_WARPS + qgroup);
        c0 = softmax_c0(p.sm_scale);

#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb)
#pragma unroll
            for (int i = 0; i < 4; ++i) o[cb][i] = 0.0f;
        m[0] = m[1] = NEG_BIG;
        d[0] = d[1] = 1.0f;

        if constexpr (kQreg) {
            if (kDB) cp_async_wait<0>();
            else cp_async_wait<1>();
            __syncthreads(); /* Q landed */
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) load_q_frag<HD>(qa[kk], q_base, 0, kk);
        }

        int j = 0;
        for (; j < n_tiles - 2; ++j) tile<false, false>(j);
        if (n_tiles >= 2) tile<true, false>(j++);
        tile<true, true>(j);

        cp_async_wait<0>();
        __syncthreads(); /* all tiles consumed: smem becomes the O staging area */

        /* §2.6 epilogue (as baseline, one 16-row slice per warp) */
        const float *vs = reinterpret_cast<const float *>(p.v_scale) + ((int64_t)b * p.heads_kv + hk) * HD;
        uint8_t *sO = smem + warp * O_WARP_BYTES;
        constexpr int O_ROW_BYTES = HD * 2;
        const int g = lane >> 2, t = lane & 3;
        const float rho0 = row_inv_denominator(d[0]);
        const float rho1 = row_inv_denominator(d[1]);
#pragma unroll
        for (int cb = 0; cb < CBLOCKS; ++cb) {
            const int col = cb * MMA_N + 2 * t;
            const float sv0 = __ldg(vs + col), sv1 = __ldg(vs + col + 1);
            const __half2 h0 = finalize_pair(o[cb][0], o[cb][1], rho0, sv0, sv1);
            const __half2 h1 = finalize_pair(o[cb][2], o[cb][3], rho1, sv0, sv1);
            *reinterpret_cast<__half2 *>(sO + smem_offset<O_ROW_BYTES>(g, cb) + 4 * t) = h0;
            *reinterpret_cast<__half2 *>(sO + smem_offset<O_ROW_BYTES>(g + 8, cb) + 4 * t) = h1;
        }
        __syncwarp();

        constexpr int CPR = O_ROW_BYTES / 16;
        __half *o_bh = reinterpret_cast<__half *>(p.o) + b * p.o_stride_b + h * p.o_stride_h;
        const int wrow0 = row0 + warp * MMA_M;
#pragma unroll
        for (int it = 0; it < MMA_M * CPR / 32; ++it) {
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

template <bool kDB, bool kQreg, bool kVh = false> __device__ __forceinline__ void is8_body(const sage2_attn_params &p) {
    extern __shared__ __align__(128) uint8_t sage2_smem[];
    if (p.head_dim == 128) {
        Is8Cta<128, kDB, kQreg, kVh> cta;
        cta.run(p, sage2_smem);
    } else if (p.head_dim == 64) {
        Is8Cta<64, kDB, kQreg, kVh> cta;
        cta.run(p, sage2_smem);
    }
}

} // namespace

/* Exported configuration. IS_EXPORT_8W = 1: the 8-warp kernel (256 threads; interleave_softmax.c
 * must then define SAGE2_THREADS 256 and SAGE2_WARP_Q 16); 0: the 4-warp double-buffered v0b0
 * (128 threads, SAGE2_WARP_Q 32). */
#ifndef IS_EXPORT_8W
#define IS_EXPORT_8W 0
#endif
#ifndef IS_DEFAULT_VH
#define IS_DEFAULT_VH false
#endif
#ifndef IS_DEFAULT_BIAS
#define IS_DEFAULT_BIAS false
#endif
#ifndef IS8_DEFAULT_DB
#define IS8_DEFAULT_DB true
#endif
#ifndef IS8_DEFAULT_QREG
#define IS8_DEFAULT_QREG false
#endif
#ifndef IS8_DEFAULT_MINB
#define IS8_DEFAULT_MINB 2
#endif
#if IS_EXPORT_8W
extern "C" __global__ void __launch_bounds__(IS8_THREADS, IS8_DEFAULT_MINB)
    sage2_attn_interleave_softmax(const sage2_attn_params p) {
    if (blockDim.x != IS8_THREADS) __trap(); /* the host must launch SAGE2_THREADS = 256 */
    is8_body<IS8_DEFAULT_DB, IS8_DEFAULT_QREG>(p);
}
#else
extern "C" __global__ void __launch_bounds__(128) sage2_attn_interleave_softmax(const sage2_attn_params p) {
    is_body<IS_DEFAULT_VH, IS_DEFAULT_BIAS>(p);
}
#endif
