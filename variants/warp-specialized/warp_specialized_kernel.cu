/* sage2 `warp-specialized`: the baseline's numerics (byte-identical; SAGE2.md is the contract)
 * with FlashAttention-3's data movement on Hopper (sm_90a only):
 *   - V is made f16 once per call: a pre-pass kernel (sage2_ws_v_to_f16) writes every V8 tile in
 *     the f16 operand layout of P·V (sage2_wgmma.cuh) to a scratch tensor (WS_V_F16, default),
 *     followed by the tile's K scale, so that the softmax finds it in shared memory;
 *   - one thread issues bulk tensor copies (TMA) of Q once and of the K and f16 V tiles into a
 *     ring of STAGES stages, each completing on an mbarrier. By default that is thread 0 of the
 *     consumers, which refills a stage once every consumer warp has released it, so the consumers
 *     keep the whole register file (255 per thread, no spills); with WS_PRODUCER a producer
 *     warpgroup (registers lowered to PRODUCER_REGS, the consumers' raised to CONSUMER_REGS)
 *     issues them and, without WS_V_F16, converts each V8 tile into a ring of VH_STAGES stages.
 *   - the consumers hold the CTA's 128 query rows as M = 64 wgmma tiles (ws_params.h):
 *     WS_SLICES 2 (default), one warpgroup with two tiles, two CTAs per SM, per KV tile Q·Kᵀ,
 *     softmax, P·V (Consumer::tile); WS_SLICES 1, two warpgroups of one tile, whose softmax
 *     overlaps their next Q·Kᵀ and previous P·V (Consumer::tile_deferred); WS_PINGPONG, two
 *     warpgroups of two tiles sharing one ring, taking turns at the exponentials.
 * The consumers release each stage with mbarrier arrivals; nothing synchronises the whole CTA
 * until the epilogue. Measured on the H200: test/bench/NOTES-kernels.md (issue 17).
 * Why the bytes are baseline's: every value that reaches the output goes through the same pieces
 * as interleave-softmax (score_tile_scale, online_softmax_update or its two halves, the f16 replay of the FP8
 * P·V with V unpacked by the same unpack_v_group, store_rows); rows keep their Q scale (one per
 * 32 rows), tiles their order and classes.
 *
 * Launch: grid (ceil(N/128), Hq, B), WS_THREADS threads, WS_SMEM_BYTES of dynamic shared memory
 * (ws_params.h: the configurations), after the pre-pass (grid (KV tiles, Hkv, B), 128 threads). */
#include "ws_params.h"
#include "../common/sage2_device.cuh"
#include "../common/sage2_wgmma.cuh"
#include "../common/sage2_async.cuh"

namespace {

using namespace sage2;

constexpr int NSL = WS_SLICES;                /* 16-row slices per consumer warp */
constexpr int CONSUMER_WGS = WS_CONSUMER_WGS; /* consumer warpgroups */
constexpr int CTA_ROWS = WS_CTA_ROWS;         /* 64 * NSL * CONSUMER_WGS query rows */
constexpr int CONSUMER_WARPS = CONSUMER_WGS * NUM_WARPS;
constexpr int STAGES = WS_STAGES;             /* K and V tiles in flight */
constexpr bool V_F16 = WS_V_F16;              /* V arrives as f16 (the pre-pass), not as V8 */
constexpr bool PRODUCER = WS_PRODUCER;        /* a producer warpgroup issues the copies */
constexpr bool SWAP_H1 = V_F16;               /* the pre-pass swaps k-half 1's channel pairs (pv_fold) */
constexpr int VH_STAGES = 2;                  /* f16 V tiles the producer converts into (V8 only) */
constexpr int VH_RING = V_F16 ? 0 : VH_STAGES; /* of them in shared memory */
constexpr int WG_THREADS = 128;
constexpr int CTA_THREADS = WS_THREADS;
constexpr int CTAS_PER_SM = WS_CTAS_PER_SM;
/* 64K registers per SM: 2 x (128 x 24 + 128 x 232), or 128 x WS_PRODUCER_REGS + 256 x the rest */
#ifndef WS_PRODUCER_REGS
#define WS_PRODUCER_REGS 40 /* 24 (consumers 240) spilled in the producer: -9% (NOTES-kernels.md) */
#endif
constexpr int PRODUCER_REGS = CTAS_PER_SM == 2 ? 24 : WS_PRODUCER_REGS;
/* setmaxnreg moves registers within what the CTA got at launch (the entry cap times its threads);
 * asking for more blocks forever (a 256-row build with 32/240 hung: 65536 > 384 x 168) */
constexpr int ENTRY_REGS = 65536 / CTAS_PER_SM / CTA_THREADS / 8 * 8;
constexpr int CONSUMER_REGS =
    (ENTRY_REGS * CTA_THREADS - PRODUCER_REGS * WG_THREADS) / (CONSUMER_WGS * WG_THREADS) / 8 * 8;
static_assert(PRODUCER_REGS * WG_THREADS + CONSUMER_REGS * CONSUMER_WGS * WG_THREADS <= ENTRY_REGS * CTA_THREADS,
              "the warpgroups' registers exceed the CTA's");
/* 64-row CTAs (WS_CTAS_PER_SM 3) walk their 128-row block's tiles (Consumer::init) */
static_assert(CTA_ROWS % CTA_Q == 0 || CTA_ROWS == 64, "whole 128-row blocks, or half of one, per CTA");
/* one slice per warp in two warpgroups: FlashAttention-3's intra-warpgroup overlap (Consumer::
 * tile_deferred); otherwise Q·Kᵀ, softmax and P·V in turn (Consumer::tile) */
constexpr bool DEFERRED = NSL == 1 && CONSUMER_WGS > 1;
static_assert(CTAS_PER_SM < 3 || (CTA_ROWS == 64 && !PRODUCER), "three CTAs per SM: 64 rows each, no producer");
[[maybe_unused]] constexpr int BAR_PRODUCER = 1; /* named barrier of the producer warpgroup (V8) */
constexpr int BAR_CONSUMERS = 2;   /* named barrier of the consumer warpgroups */
constexpr bool PINGPONG = WS_PINGPONG;
constexpr int BAR_TURN = 4; /* PINGPONG: warpgroup g's turn to run its exponentials (4 + g) */
static_assert(PRODUCER || (V_F16 && (NSL == 1 || CONSUMER_WGS == 1 || PINGPONG)),
              "without a producer the V8 tiles have nobody to convert them; 256-row CTAs only as the ping-pong");
/* one slice per warp without a producer: at tile j a warp of warpgroup 0 refills tile j - REFILL_LAG's
 * stage (the lag lets warpgroup 1 trail by REFILL_LAG - 1 tiles before the refill waits for it) with
 * tile j - REFILL_LAG + STAGES, which should land a tile or more before Q·Kᵀ(j + 1) needs it */
#ifndef WS_REFILL_LAG
#define WS_REFILL_LAG 3
#endif
constexpr int REFILL_LAG = WS_REFILL_LAG;
static_assert(PRODUCER || !DEFERRED || STAGES >= REFILL_LAG + 2, "a ring too short for the refill lag");

/* Shared memory of one CTA for head dimension HD: every tile 1024-byte aligned (the 128-byte
 * swizzle of TMA and wgmma), the mbarriers last. */
template <int HD> struct WsLayout {
    static constexpr int VH_BYTES = HD * wg::VH_ROW_BYTES;
    static constexpr int Q_BYTES = CTA_ROWS * HD, K_BYTES = CTA_K * HD, V_BYTES = V_F16 ? VH_BYTES + WS_VH_SCALE_ROWS * wg::VH_ROW_BYTES : HD * CTA_K;
    static constexpr int Q_TILE = 64 * HD; /* one M = 64 wgmma tile of Q, one TMA box */
    static constexpr int Q_OFF = 0;
    static constexpr int K_OFF = Q_OFF + Q_BYTES;
    static constexpr int V_OFF = K_OFF + STAGES * K_BYTES; /* the ring's V: V8, or f16 V (V_F16) */
    static constexpr int VH_OFF = V_OFF + STAGES * V_BYTES;
    static constexpr int BAR_OFF = VH_OFF + VH_RING * VH_BYTES;
    /* barriers: Q full, KV full[STAGES], KV empty[STAGES], VH full[VH_RING], VH empty[VH_RING] */
    static constexpr int BAR_Q = 0, BAR_KV_FULL = 1, BAR_KV_EMPTY = BAR_KV_FULL + STAGES;
    static constexpr int BAR_VH_FULL = BAR_KV_EMPTY + STAGES, BAR_VH_EMPTY = BAR_VH_FULL + VH_RING;
    static constexpr int N_BARS = BAR_VH_EMPTY + VH_RING;
    static_assert(BAR_OFF + N_BARS * 8 <= WS_SMEM_BYTES, "the layout exceeds the plugin's shared memory");
    static constexpr int TX_KV = K_BYTES + V_BYTES; /* bytes per KV stage */
    static_assert(K_OFF % 1024 == 0 && V_OFF % 1024 == 0 && VH_OFF % 1024 == 0, "tile alignment");
    static_assert(CTA_ROWS * HD * 2 <= BAR_OFF, "the O staging of the CTA's rows exceeds the tiles' smem");
};

/* KV tiles a 128-row block starting at row `block_row0` walks (Sage2Cta::causal_begin). */
__device__ __forceinline__ int block_tiles(int KV, int block_row0, bool causal) {
    const int kv_end = causal ? min(KV, block_row0 + CTA_Q) : KV;
    return (kv_end + CTA_K - 1) / CTA_K;
}

/* The CTA's coordinates; n_tiles: the KV tiles the producer delivers (those of its last block). */
struct WsCta {
    int N, KV, n_tiles, row0, b, h, hk; /* N: query rows (seq_len), KV: keys (kv_len) */
    __device__ __forceinline__ void begin(const sage2_attn_params &p, bool causal) {
        N = p.seq_len;
        KV = p.kv_len;
        row0 = blockIdx.x * CTA_ROWS;
        h = blockIdx.y;
        b = blockIdx.z;
        hk = h / (p.heads_q / p.heads_kv);
        const int last_block_row0 = (min(row0 + CTA_ROWS, N) - 1) / CTA_Q * CTA_Q; /* of rows < N */
        n_tiles = block_tiles(KV, last_block_row0, causal);
    }
};

/* Map coordinates of a box: rows (or channels) `row` of head `head` of batch b. */
__device__ __forceinline__ void tma_box(uint32_t dst, const CUtensorMap &map, uint32_t bar, int inner, int row,
                                        int head, int b, int heads_inner) {
    if (heads_inner)
        async::tma_load_4d(dst, &map, bar, inner, head, row, b);
    else
        async::tma_load_4d(dst, &map, bar, inner, row, head, b);
}

/* The copies of one CTA, issued by one thread: Q once, the KV tiles into the ring. */
template <int HD> struct Loader {
    using L = WsLayout<HD>;
    const ws_attn_params &P;
    const WsCta &cta;
    uint32_t sbase, bars;

    __device__ __forceinline__ uint32_t bar(int i) const { return bars + 8 * i; }

    /* KV tile t into stage t % STAGES. */
    __device__ __forceinline__ void issue_kv(int t) const {
        const int st = t % STAGES;
        async::bar_arrive_expect(bar(L::BAR_KV_FULL + st), L::TX_KV);
        tma_box(sbase + L::K_OFF + st * L::K_BYTES, P.map_k, bar(L::BAR_KV_FULL + st), 0, t * CTA_K, cta.hk, cta.b,
                P.k_heads_inner);
        if constexpr (V_F16) /* the tile's rows of the f16 V tensor: HD channels, then K's scale */
            tma_box(sbase + L::V_OFF + st * L::V_BYTES, P.map_v, bar(L::BAR_KV_FULL + st), 0, t * (HD + WS_VH_SCALE_ROWS), cta.hk, cta.b,
                    P.v_heads_inner);
        else
            tma_box(sbase + L::V_OFF + st * L::V_BYTES, P.map_v, bar(L::BAR_KV_FULL + st), t * CTA_K, 0, cta.hk,
                    cta.b, P.v_heads_inner);
    }
    /* Q and the first STAGES tiles. */
    __device__ __forceinline__ void start() const {
        async::prefetch_map(&P.map_q);
        async::prefetch_map(&P.map_k);
        async::prefetch_map(&P.map_v);
        async::bar_arrive_expect(bar(L::BAR_Q), L::Q_BYTES);
        for (int t = 0; t < CTA_ROWS / 64; ++t)
            tma_box(sbase + L::Q_OFF + t * L::Q_TILE, P.map_q, bar(L::BAR_Q), 0, cta.row0 + 64 * t, cta.h, cta.b,
                    P.q_heads_inner);
        for (int t = 0; t < STAGES && t < cta.n_tiles; ++t) issue_kv(t);
    }
    /* Tile j + STAGES into tile j's stage, once every consumer warp has released it. */
    __device__ __forceinline__ void refill(int j) const {
        if (j + STAGES >= cta.n_tiles) return;
        async::bar_wait(bar(L::BAR_KV_EMPTY + j % STAGES), (j / STAGES) & 1);
        /* a stage that threads wrote (the producer's V8 conversion) is fenced before the copies
         * overwrite it; a ring only TMA writes and only wgmma reads needs no proxy fence (the
         * readers' wgmma.wait precedes their release; measured neutral, run 24) */
        if (PRODUCER || !V_F16) wg::fence_proxy_async();
        issue_kv(j + STAGES);
    }
};

template <int HD> struct Producer {
    using L = WsLayout<HD>;
    const Loader<HD> &ld;
    const WsCta &cta;
    uint8_t *smem;
    uint32_t sbase, bars;
    int tid; /* 0..127 */

    __device__ __forceinline__ uint32_t bar(int i) const { return bars + 8 * i; }

    __device__ __forceinline__ void run() const {
        if (tid == 0) ld.start();
        if constexpr (V_F16) { /* the tiles need no conversion: only the refills */
            if (tid == 0)
                for (int j = 0; j < cta.n_tiles; ++j) ld.refill(j);
        } else {
            convert_tiles();
        }
        /* and exits: the consumers have waited for every byte it delivered before they finish */
    }

    /* Each V8 tile into the f16 ring, and the refills once the stage's V8 is converted. */
    __device__ __forceinline__ void convert_tiles() const {
        for (int j = 0; j < cta.n_tiles; ++j) {
            const int st = j % STAGES, hs = j % VH_STAGES;
            async::bar_wait(bar(L::BAR_KV_FULL + st), (j / STAGES) & 1);
            if (j >= VH_STAGES) async::bar_wait(bar(L::BAR_VH_EMPTY + hs), (j / VH_STAGES - 1) & 1);
            wg::convert_v_tile_f16<HD>(smem + L::VH_OFF + hs * L::VH_BYTES, smem + L::V_OFF + st * L::V_BYTES, tid);
            wg::fence_proxy_async(); /* the f16 tile is read by wgmma next */
            async::bar_arrive(bar(L::BAR_VH_FULL + hs));
            if (j + STAGES < cta.n_tiles) {
                async::named_sync(BAR_PRODUCER, WG_THREADS); /* every thread is done with V8 of stage st */
                if (tid == 0) ld.refill(j); /* and the consumers with K */
            }
        }
    }
};

/* A consumer warpgroup: NSL M = 64 tiles of the CTA's Q (tile t = NSL * cw + sl, rows 64t..64t+63);
 * warp w of the warpgroup holds rows 64t + 16w .. +15 of each, one 16-row slice per tile. */
/* kTurns: the ping-pong's turns at the exponentials (PINGPONG, non-causal kernels only: a causal
 * CTA's warpgroups walk different numbers of tiles) */
template <int HD, bool kTurns = false> struct Consumer {
    using L = WsLayout<HD>;
    static constexpr int CBLOCKS = HD / MMA_N;
    const sage2_attn_params &p;
    const WsCta &cta;
    const Loader<HD> &ld; /* without a producer, thread 0 issues the copies */
    uint8_t *smem;
    uint32_t sbase, bars;
    int cw, w, lane; /* consumer warpgroup, warp in it, lane */
    int n_tiles;     /* walk_tiles reads it */
    const float *ks_bh;
    float c0;
    float q_scale[NSL];
    float o[NSL][CBLOCKS][4], m[NSL][2], d[NSL][2];
    int32_t s[NSL][KEY_BLOCKS][4];       /* scores of the tile being computed */
    uint32_t pf[NSL][PV_KHALVES][2][4];  /* P of the tile whose P·V is pending */
    float alpha[NSL][2];                 /* and its α */
#if WS_TRACE /* experiment: clock cycles per phase of the tile loop, summed (read back at destroy) */
    uint32_t tr_qk = 0, tr_sm = 0, tr_pv = 0, tr_n = 0;
    uint64_t trace_addr = 0;
    __device__ __forceinline__ static uint32_t clk() {
        uint32_t t;
        asm volatile("mov.u32 %0, %%clock;" : "=r"(t)::"memory");
        return t;
    }
#endif

    __device__ __forceinline__ uint32_t bar(int i) const { return bars + 8 * i; }
    /* Q's wgmma descriptors, made once (per tile they cost uniform-datapath instructions: with the
     * P·V groups' from the V tile's, -1.3% on the seed, issue 17 run 37) */
    uint64_t dq_tile[NSL];
    /* The rings, as a consumer sees them: wait until tile j's stage has landed (its shared
     * address), and release it to the producer (lane 0 of each consumer warp arrives). With
     * V_F16 a stage holds K and the f16 V of its tile, released once P·V is done with it. */
    __device__ __forceinline__ uint32_t k_wait(int j) const {
        async::bar_wait(bar(L::BAR_KV_FULL + j % STAGES), (j / STAGES) & 1);
        return sbase + L::K_OFF + (j % STAGES) * L::K_BYTES;
    }
    __device__ __forceinline__ void kv_release(int j) const {
        if (lane == 0) async::bar_arrive(bar(L::BAR_KV_EMPTY + j % STAGES));
    }
    __device__ __forceinline__ uint32_t vh_wait(int j) const {
        if constexpr (V_F16) {
            return sbase + L::V_OFF + (j % STAGES) * L::V_BYTES; /* landed with K */
        } else {
            async::bar_wait(bar(L::BAR_VH_FULL + j % VH_STAGES), (j / VH_STAGES) & 1);
            return sbase + L::VH_OFF + (j % VH_STAGES) * L::VH_BYTES;
        }
    }
    __device__ __forceinline__ void vh_release(int j) const {
        if constexpr (V_F16)
            kv_release(j);
        else if (lane == 0)
            async::bar_arrive(bar(L::BAR_VH_EMPTY + j % VH_STAGES));
    }
    /* δ's K scale of tile j: with V_F16 from the tile's stage (row HD of its f16 V, landed with K: a
     * shared load where a global one sat on the softmax's path, run 29), else from global memory */
    __device__ __forceinline__ float k_scale_of(int j) const {
        if constexpr (V_F16)
            return *reinterpret_cast<const float *>(smem + L::V_OFF + (j % STAGES) * L::V_BYTES + L::VH_BYTES);
        else
            return __ldg(ks_bh + j);
    }
    /* first CTA row of slice sl of this warp */
    __device__ __forceinline__ int slice_row(int sl) const { return 64 * (NSL * cw + sl) + MMA_M * w; }

    /* first row of the warpgroup; a warpgroup past the sequence's end only releases the stages */
    __device__ __forceinline__ int wg_row0() const { return cta.row0 + 64 * NSL * cw; }

    template <bool kCausal> __device__ __forceinline__ void init() {
        n_tiles = block_tiles(cta.KV, wg_row0() / CTA_Q * CTA_Q, kCausal); /* its 128-row block's walk */
        ks_bh = reinterpret_cast<const float *>(p.k_scale) + ((int64_t)cta.b * p.heads_kv + cta.hk) * p.k_scale_per_head;
        const float *qs = reinterpret_cast<const float *>(p.q_scale) +
                          ((int64_t)cta.b * p.heads_q + cta.h) * p.q_scale_per_head;
        c0 = softmax_c0(p.sm_scale);
#pragma unroll
        for (int sl = 0; sl < NSL; ++sl) {
            dq_tile[sl] = wg::kmajor_desc<HD>(sbase + L::Q_OFF + (NSL * cw + sl) * L::Q_TILE);
            /* opaque from here on: ptxas would rebuild them from the warpgroup index every tile,
             * four uniform instructions each (-0.7% on the seed, issue 17 run 41) */
            asm volatile("" : "+l"(dq_tile[sl]));
        }
#pragma unroll
        for (int sl = 0; sl < NSL; ++sl)
            q_scale[sl] = __ldg(qs + (cta.row0 + slice_row(sl)) / WARP_Q); /* §1.2: one scale per 32 rows */
        init_rows(o, m, d);
    }

    /* §2.1: S_int of the warpgroup's tiles and KV tile j, one wgmma group (not waited for). */
    __device__ __forceinline__ void issue_scores(int j) {
        const uint64_t dk = wg::kmajor_desc<HD>(k_wait(j));
        wg::fence();
#pragma unroll
        for (int sl = 0; sl < NSL; ++sl) {
            const uint64_t dq = dq_tile[sl];
            wg::wgmma_s8_m64n64k32<0>(s[sl], dq, dk);
#pragma unroll
            for (int kk = 1; kk < HD / MMA_K; ++kk) wg::wgmma_s8_m64n64k32<1>(s[sl], dq + 2 * kk, dk + 2 * kk);
        }
        wg::commit();
    }
    __device__ __forceinline__ void scores_done(int j) {
#pragma unroll
        for (int sl = 0; sl < NSL; ++sl) wg::hold(s[sl]);
        if constexpr (!V_F16) kv_release(j);
    }

    /* §2.5 for tile jj with the P and α kept from its softmax; returns with every wgmma done. The
     * groups slice-inner: one channel group's V descriptors serve both slices (-1.2%, run 41). */
    __device__ __forceinline__ void pv(int jj) {
        wg::pv_slices<HD, NSL, SWAP_H1, true, true>(o, pf, alpha, vh_wait(jj));
        vh_release(jj);
    }

    /* §2.2-§2.5 of tile j for every slice (both chains interleaved by ptxas) */
    template <bool kScaleX, bool kMask, bool kCausal> __device__ __forceinline__ void softmax(int j) {
        const float k_scale = k_scale_of(j);
        if constexpr (kTurns) {
            softmax_taking_turns<kScaleX, kMask>(j, k_scale);
        } else {
#pragma unroll
            for (int sl = 0; sl < NSL; ++sl) {
                const float delta = dequant_delta(q_scale[sl], k_scale);
                const int diag = kCausal ? cta.row0 + slice_row(sl) - j * CTA_K : 0; /* first row - first key */
                wg::softmax_slice<kScaleX, kMask, kCausal, true>(s[sl], delta, tile_slope<kScaleX>(c0, delta),
                                                                 cta.KV - j * CTA_K, lane, m[sl], d[sl], alpha[sl], pf[sl], diag);
            }
        }
    }
    /* The same for the ping-pong (non-causal): the row maxima before the turn, the exponentials in it,
     * the packing after it */
    template <bool kScaleX, bool kMask> __device__ __forceinline__ void softmax_taking_turns(int j, float k_scale) {
        float x[NSL][KEY_BLOCKS][4], c[NSL], m_new[NSL][2];
#pragma unroll
        for (int sl = 0; sl < NSL; ++sl) {
            const float delta = dequant_delta(q_scale[sl], k_scale);
            score_tile_scale<kScaleX, kMask>(s[sl], x[sl], delta, cta.KV - j * CTA_K, lane);
            c[sl] = tile_slope<kScaleX>(c0, delta);
#pragma unroll
            for (int rh = 0; rh < 2; ++rh) /* class 1: from the integers, as softmax_slice's kIntMax */
                m_new[sl][rh] = !kScaleX && !kMask ? softmax_row_max_int(s[sl], c[sl], m[sl][rh], rh)
                                                   : softmax_row_max(x[sl], c[sl], m[sl][rh], rh);
        }
        turn_wait();
#pragma unroll
        for (int sl = 0; sl < NSL; ++sl)
#pragma unroll
            for (int rh = 0; rh < 2; ++rh)
                alpha[sl][rh] = softmax_exp_sum(x[sl], c[sl], m_new[sl][rh], m[sl][rh], d[sl][rh], rh);
        turn_give();
#pragma unroll
        for (int sl = 0; sl < NSL; ++sl) wg::pack_p_f16(x[sl], pf[sl]);
    }

    /* Tile j (walk_tiles): Q·Kᵀ(j), its softmax, P·V(j) (two slices per warp leave no registers
     * for a second score tile; nor do one slice's 168 in 64-row CTAs). One slice per warp in two
     * warpgroups: tile_deferred. */
    template <bool kScaleX, bool kMask, bool kCausal = false> __device__ __forceinline__ void tile(int j) {
        if constexpr (DEFERRED) {
            tile_deferred<kScaleX, kMask, kCausal>(j);
        } else {
#if WS_TRACE
            const uint32_t t0 = clk();
#endif
            issue_scores(j);
            if constexpr (!PRODUCER) { /* tile j-1's stage, released by every warp before this Q·Kᵀ; the
                                          warps take turns (warp 0 alone: 841 cycles per tile in this
                                          phase against ~460 for the others, run 23; -2.3%, run 24) */
                if constexpr (PINGPONG) { /* the second warpgroup, which trails, refills two tiles back */
                    if (j > 1 && cw == 1 && w == j % NUM_WARPS && lane == 0) ld.refill(j - 2);
                } else {
                    if (j > 0 && w == j % NUM_WARPS && lane == 0) ld.refill(j - 1);
                }
                __syncwarp();
            }
            wg::wait<0>();
            scores_done(j);
#if WS_TRACE
            const uint32_t t1 = clk();
#endif
            softmax<kScaleX, kMask, kCausal>(j);
#if WS_TRACE
#pragma unroll
            for (int sl = 0; sl < NSL; ++sl) wg::hold(pf[sl][0]), wg::hold(pf[sl][1]);
            const uint32_t t2 = clk();
#endif
            pv(j);
#if WS_TRACE
            const uint32_t t3 = clk();
            tr_qk += t1 - t0, tr_sm += t2 - t1, tr_pv += t3 - t2, ++tr_n;
#endif
        }
    }

    /* One slice per warp (FlashAttention-3's intra-warpgroup overlap): the softmax of j overlaps
     * Q·Kᵀ(j+1) and the last two P·V groups of j-1. Tile j runs
     * C(j-1) A(j) B(j): C packs P(j-1) and issues its P·V, folding its first groups; A reads the
     * scores of j, issues Q·Kᵀ(j+1) and runs the softmax of j while the last two groups of j-1
     * compute; B folds them. Between tiles only Q·Kᵀ(j+1) is in flight. (An order that kept P·V
     * groups in flight across tiles, v3 in NOTES-kernels.md, was serialised by ptxas; the cause
     * found later, undefined accumulators materialised inside a wgmma's stage, is fixed in run(),
     * so that order is untried since.) */
    float h[2][2][wg::PV_NB][4]; /* the P·V groups in flight */
    float x[KEY_BLOCKS][4];      /* P (fp32) of the tile whose P·V is next */
    float alpha_prev[2];         /* α of that tile */

    /* C: P·V of tile jj (P in x): its groups in order, the last two left in flight */
    __device__ __forceinline__ void pv_start(int jj) {
        constexpr int G = HD / wg::PV_N; /* groups per tile (even) */
        wg::pack_p_f16(x, pf[0]);
        const uint32_t vh = vh_wait(jj);
        wg::hold(pf[0][0]), wg::hold(pf[0][1]);
        wg::fence();
        wg::pv_issue(h[0], pf[0], vh, 0);
        wg::pv_issue(h[1], pf[0], vh, 1);
#pragma unroll
        for (int cg = 0; cg + 2 < G; ++cg) { /* pending: cg, cg+1 */
            wg::wait<1>();
            wg::hold(h[cg & 1][0]), wg::hold(h[cg & 1][1]);
            wg::pv_fold<CBLOCKS, SWAP_H1>(o[0], h[cg & 1], cg, alpha_prev);
            wg::fence();
            wg::pv_issue(h[cg & 1], pf[0], vh, cg + 2);
        }
    }
    /* B: the last two groups of tile jj; kNewer: Q·Kᵀ(jj+2) was committed after them */
    template <bool kNewer> __device__ __forceinline__ void pv_finish(int jj) {
        constexpr int G = HD / wg::PV_N;
        wg::wait<kNewer ? 2 : 1>();
        wg::hold(h[0][0]), wg::hold(h[0][1]);
        wg::pv_fold<CBLOCKS, SWAP_H1>(o[0], h[0], G - 2, alpha_prev);
        wg::wait<kNewer ? 1 : 0>();
        wg::hold(h[1][0]), wg::hold(h[1][1]);
        wg::pv_fold<CBLOCKS, SWAP_H1>(o[0], h[1], G - 1, alpha_prev);
        wg::hold(pf[0][0]), wg::hold(pf[0][1]);
        vh_release(jj);
    }

    template <bool kScaleX, bool kMask, bool kCausal> __device__ __forceinline__ void tile_deferred(int j) {
        if (j > 0) {
            pv_start(j - 1);
            wg::wait<2>(); /* Q·Kᵀ(j), committed before those groups (pv_start's waits cover it at D = 128) */
        } else {
            wg::wait<0>();
        }
        scores_done(j);
        const float delta = dequant_delta(q_scale[0], k_scale_of(j));
        float xn[KEY_BLOCKS][4];
        score_tile_scale<kScaleX, kMask, kCausal>(s[0], xn, delta, cta.KV - j * CTA_K, lane,
                                                  kCausal ? cta.row0 + slice_row(0) - j * CTA_K : 0);
        wg::hold(xn); /* read out before the next Q·Kᵀ overwrites the registers */
        if constexpr (!kMask) issue_scores(j + 1);
        if constexpr (!PRODUCER) { /* warpgroup 0's warps take turns (a warp that also refilled every
                                      tile was the slow one, run 23) */
            if (cw == 0 && j >= REFILL_LAG && w == j % NUM_WARPS && lane == 0) ld.refill(j - REFILL_LAG);
            __syncwarp();
        }
        float alpha_j[2];
        online_softmax_update(xn, tile_slope<kScaleX>(c0, delta), m[0], d[0], alpha_j);
        if (j > 0) pv_finish<!kMask>(j - 1);
#pragma unroll
        for (int nb = 0; nb < KEY_BLOCKS; ++nb)
#pragma unroll
            for (int i = 0; i < 4; ++i) x[nb][i] = xn[nb][i];
        alpha_prev[0] = alpha_j[0];
        alpha_prev[1] = alpha_j[1];
        if constexpr (kMask) { /* the last tile: its own P·V now */
            pv_start(j);
            pv_finish<false>(j);
        }
    }

    /* Tiles [from, the producer's count) this warpgroup does not walk: received and released. */
    __device__ __forceinline__ void drain(int from) {
        if (kTurns && from == 0) turn_give(); /* walk's first turn (only warpgroup 1 has no rows) */
        for (int t = from; t < cta.n_tiles; ++t) {
            k_wait(t);
            if constexpr (!V_F16) kv_release(t), vh_wait(t);
            if (kTurns) turn_wait(), turn_give(); /* the second warpgroup with no rows */
            vh_release(t);
            if (PINGPONG && cw == 1 && t > 1 && w == 0 && lane == 0) ld.refill(t - 2);
            __syncwarp();
        }
    }
    /* PINGPONG: warpgroup g waits on BAR_TURN + g before its exponentials and gives the other's
     * turn after them; warpgroup 1 gives warpgroup 0 its first turn. bar.sync and bar.arrive
     * without a memory clobber: the turn orders issue, not memory (with the clobber ptxas spilled
     * 104 B, run 27). */
    __device__ __forceinline__ void turn_wait() const { /* orders issue only, not memory */
        asm volatile("bar.sync %0, %1;\n" ::"r"(BAR_TURN + cw), "n"(2 * WG_THREADS));
    }
    /* every turn gives the other's; warpgroup 1's last one is taken by warpgroup 0 after its walk */
    __device__ __forceinline__ void turn_give() const {
        asm volatile("bar.arrive %0, %1;\n" ::"r"(BAR_TURN + 1 - cw), "n"(2 * WG_THREADS));
    }

    template <bool kCausal, bool kBf16> __device__ __forceinline__ void run() {
        /* one warpgroup: it starts at the CTA's first row and walks the producer's tiles */
        const bool active = CONSUMER_WGS == 1 || wg_row0() < cta.N;
        if (active) {
            init<kCausal>();
            walk<kCausal>();
        }
        if constexpr (CONSUMER_WGS > 1) drain(active ? n_tiles : 0);
        if (kTurns && cw == 0) turn_wait(); /* warpgroup 1's last turn */
        /* every consumer is done with the tiles: shared memory is free for the O staging (the
         * producer takes no part: a CTA barrier reached from its code and from ours would be two
         * barriers in divergent code, which synccheck rightly refuses) */
        async::named_sync(BAR_CONSUMERS, CONSUMER_WGS * WG_THREADS);
#if WS_TRACE
        if (lane == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
            uint32_t *t = reinterpret_cast<uint32_t *>(trace_addr) + 4 * (WS_THREADS / 32 * blockIdx.x + NUM_WARPS * cw + w);
            t[0] = tr_n, t[1] = tr_qk, t[2] = tr_sm, t[3] = tr_pv;
        }
#endif
        if (active)
            store_rows<HD, kBf16, NSL, 64>(p, o, d, smem + (NUM_WARPS * cw + w) * (NSL * MMA_M * HD * 2), lane,
                                           cta.b, cta.h, cta.hk, cta.row0 + slice_row(0), cta.N);
    }

    template <bool kCausal> __device__ __forceinline__ void walk() {
        async::bar_wait(bar(L::BAR_Q), 0);
        if constexpr (DEFERRED) {
            /* h defined before any wgmma is in flight (an undefined accumulator is materialised
             * by movs, which inside a wgmma's pipeline stage make ptxas serialise: C7515) */
#pragma unroll
            for (int b2 = 0; b2 < 2; ++b2)
#pragma unroll
                for (int kh = 0; kh < 2; ++kh)
#pragma unroll
                    for (int nb = 0; nb < wg::PV_NB; ++nb)
#pragma unroll
                        for (int i = 0; i < 4; ++i) h[b2][kh][nb][i] = 0.0f;
#pragma unroll
            for (int nb = 0; nb < KEY_BLOCKS; ++nb)
#pragma unroll
                for (int i = 0; i < 4; ++i) s[0][nb][i] = 0;
            wg::hold(h[0][0]), wg::hold(h[0][1]), wg::hold(h[1][0]), wg::hold(h[1][1]), wg::hold(s[0]);
            issue_scores(0); /* the tile programs find it in flight */
        }
        if (kTurns && cw == 1) turn_give(); /* warpgroup 0's first turn */
        walk_tiles<kCausal, false>(*this);
    }
};

template <int HD, bool kCausal, bool kBf16>
__device__ __forceinline__ void ws_run(const ws_attn_params &P, uint8_t *smem) {
    using L = WsLayout<HD>;
    WsCta cta;
    cta.begin(P.p, kCausal);
    const uint32_t sbase = smem_u32(smem), bars = sbase + L::BAR_OFF;
    const int tid = threadIdx.x, wgi = tid / WG_THREADS;
    if (tid == 0) {
        async::bar_init(bars + 8 * L::BAR_Q, 1);
        for (int s = 0; s < STAGES; ++s) {
            async::bar_init(bars + 8 * (L::BAR_KV_FULL + s), 1);
            async::bar_init(bars + 8 * (L::BAR_KV_EMPTY + s), CONSUMER_WARPS); /* lane 0 of each consumer warp */
        }
        for (int s = 0; s < VH_RING; ++s) {
            async::bar_init(bars + 8 * (L::BAR_VH_FULL + s), WG_THREADS); /* every producer thread */
            async::bar_init(bars + 8 * (L::BAR_VH_EMPTY + s), CONSUMER_WARPS);
        }
        async::bar_init_fence();
    }
    __syncthreads();
    const Loader<HD> ld{P, cta, sbase, bars};
    if (PRODUCER && wgi == 0) {
        async::regs_lower<PRODUCER_REGS>();
        const Producer<HD> pr{ld, cta, smem, sbase, bars, tid};
        pr.run();
    } else {
        if constexpr (PRODUCER) async::regs_raise<CONSUMER_REGS>();
        else if (tid == 0) ld.start();
        /* the warpgroup index broadcast from lane 0, so that ptxas knows it is warp-uniform and keeps
         * what depends on it (Q's descriptors, rows, the turn) in uniform registers: without it the
         * causal kernels spilled 272 B (4.62 against 4.06 ms on 4x8192x32x128 causal, run 29) */
        const int cwu = __shfl_sync(0xffffffffu, wgi - PRODUCER, 0);
        Consumer<HD, PINGPONG && !kCausal> co{P.p, cta, ld, smem, sbase, bars, cwu, (tid / 32) % NUM_WARPS, tid & 31};
#if WS_TRACE
        co.trace_addr = P.trace;
#endif
        co.template run<kCausal, kBf16>();
    }
}

template <bool kCausal, bool kBf16> __device__ __forceinline__ void ws_any_head_dim(const ws_attn_params &P, uint8_t *smem) {
    if (smem_u32(smem) & 1023) __trap(); /* TMA's and wgmma's 128-byte swizzle need aligned tiles */
    if (P.p.head_dim == 128)
        ws_run<128, kCausal, kBf16>(P, smem);
    else if (P.p.head_dim == 64)
        ws_run<64, kCausal, kBf16>(P, smem);
}

#if WS_V_F16
/* The pre-pass: KV tile t of head (b, hk) of V8 into the f16 V tensor, rows of 128 bytes in the
 * operand layout of P·V (convert_v_tile_f16's, unswizzled: the copies into the ring swizzle),
 * followed by WS_VH_SCALE_ROWS rows holding the tile's K scale (ws_params.h),
 * except that k-half 1 of each channel pair is swapped (row d holds channel d^1; pv_fold's
 * kSwapH1).
 * Thread: group q of rows r0, r0 + 32, ... V padding past KV is real zeros (SAGE2.md §2.2). */
template <int HD> __device__ __forceinline__ void v_to_f16(const ws_attn_params &P) {
    const sage2_attn_params &p = P.p;
    const int t = blockIdx.x, hk = blockIdx.y, b = blockIdx.z, q = threadIdx.x & 3;
    const uint8_t *src = reinterpret_cast<const uint8_t *>(p.v) + b * p.v_stride_b + hk * p.v_stride_h +
                         t * CTA_K + 16 * q;
    const int64_t bh = (int64_t)b * p.heads_kv + hk;
    uint8_t *tile = reinterpret_cast<uint8_t *>(P.v_f16) + (bh * P.v_tiles + t) * (HD + WS_VH_SCALE_ROWS) * wg::VH_ROW_BYTES;
    uint8_t *dst = tile + 16 * wg::v_group_chunk(q);
    /* the scale rows: the tile's K scale, then zeros (8 bytes per thread) */
    static_assert(WS_VH_SCALE_ROWS * wg::VH_ROW_BYTES == 128 * 8, "8 bytes per thread");
    const float ks = threadIdx.x == 0 ? reinterpret_cast<const float *>(p.k_scale)[bh * p.k_scale_per_head + t] : 0.0f;
    *reinterpret_cast<uint2 *>(tile + HD * wg::VH_ROW_BYTES + 8 * threadIdx.x) = make_uint2(__float_as_uint(ks), 0u);
#pragma unroll
    for (int r = threadIdx.x >> 2; r < HD; r += 32) {
        uint4 lo, hi;
        wg::unpack_v_group(*reinterpret_cast<const uint4 *>(src + r * p.v_stride_d), lo, hi);
        const int rr = q >= 2 ? r ^ 1 : r; /* k-half 1 (groups 2, 3) of channel r into row r^1 (SWAP_H1) */
        *reinterpret_cast<uint4 *>(dst + rr * wg::VH_ROW_BYTES) = lo;
        *reinterpret_cast<uint4 *>(dst + rr * wg::VH_ROW_BYTES + 32) = hi;
    }
}
#endif

} // namespace

#if WS_V_F16
/* Grid (KV tiles, Hkv, B), 128 threads. */
extern "C" __global__ void __launch_bounds__(128) sage2_ws_v_to_f16(const __grid_constant__ ws_attn_params P) {
    if (P.p.head_dim == 128)
        v_to_f16<128>(P);
    else if (P.p.head_dim == 64)
        v_to_f16<64>(P);
}
#endif

/* One kernel per (causal, bf16), as the other sage2 variants (sage2_plugin.h picks by name). */
#define WS_KERNEL(NAME, CAUSAL, BF16)                                                                  \
    extern "C" __global__ void __launch_bounds__(CTA_THREADS, CTAS_PER_SM) NAME(const __grid_constant__ ws_attn_params P) { \
        extern __shared__ __align__(1024) uint8_t NAME##_smem[];                                       \
        ws_any_head_dim<CAUSAL, BF16>(P, NAME##_smem);                                                 \
    }
WS_KERNEL(sage2_attn_warp_specialized, false, false)
WS_KERNEL(sage2_attn_warp_specialized_causal, true, false)
WS_KERNEL(sage2_attn_warp_specialized_bf16, false, true)
WS_KERNEL(sage2_attn_warp_specialized_bf16_causal, true, true)
