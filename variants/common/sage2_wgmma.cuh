/* Hopper (sm_90a) warpgroup MMA pieces for the sage2 kernels: wgmma wrappers, shared-memory
 * matrix descriptors, and the f16 form of the FP8 P·V product.
 *
 * Why f16 wgmma can stand in for the FP8 mma.sync of SAGE2.md §2.5 without changing a bit: Hopper
 * has no FP8 mma.sync. ptxas lowers each mma.m16n8k32.f32.e4m3.e4m3.f32 to exact e4m3->f16
 * unpacks and two chained HMMA.16816.F32 (the low 16 bits of every A/B register first, C = 0, then
 * the high 16 bits accumulating), and adds the mma's C operand afterwards with a non-flush-to-zero
 * FADD. The golden vectors were made that way. The kernel here builds the very same f16 operands
 * (P in registers, V once per tile in shared memory), issues the same two-step chain as wgmma
 * m64nNk16 (scale-d = 0, then 1), and adds the k-halves with the same non-ftz add, so each
 * product is the one the emulation computes. Measured on the H200 (test/bench/NOTES-kernels.md):
 * one wgmma step equals one HMMA.16816 bit for bit, the two-step chain equals the lowered FP8 mma,
 * and a chain whose products are all zero (+0 or -0) returns +0, never -0, from either; the
 * lowering's extra "0 + chain" add (which only turns -0 into +0) is therefore the identity and
 * the kernel leaves it out. test/gpu/test_sage2_golden.c checks the golden files, synthetic
 * shapes and an all-zero-products case against baseline. Integer Q·Kᵀ (§2.1) is exact in any
 * instruction.
 *
 * Everything here is compiled only for sm_90a (SAGE2_HAS_WGMMA); other targets use the mma.sync
 * pieces of sage2_device.cuh. */
#ifndef SAGERUN_VARIANTS_SAGE2_WGMMA_CUH
#define SAGERUN_VARIANTS_SAGE2_WGMMA_CUH

#include "sage2_device.cuh"

/* SAGE2_HAS_WGMMA: this device pass targets sm_90a. The host pass sees the declarations too
 * (templates' names must resolve there), but only sm_90a device code ever calls them. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SAGE2_HAS_WGMMA 1
#else
#define SAGE2_HAS_WGMMA 0
#endif

#if SAGE2_HAS_WGMMA || !defined(__CUDA_ARCH__)
namespace sage2 {
namespace wg {

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* Shared memory written by threads (st.shared, or cp.async after its wait) and then read by wgmma
 * (the async proxy): each writing thread fences before the barrier that publishes the data. */
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Pin registers around wgmma: after wait(), the accumulators, so that nothing reads them before
 * the wait; before fence(), the registers a wgmma reads (A fragments), so that the instructions
 * writing them stay ahead of the fence (a write between the fence and the wgmma is a hazard the
 * hardware does not cover: the wgmma may read the old value). */
__device__ __forceinline__ void hold(int32_t &x) { asm volatile("" : "+r"(x)::"memory"); }
__device__ __forceinline__ void hold(uint32_t &x) { asm volatile("" : "+r"(x)::"memory"); }
__device__ __forceinline__ void hold(float &x) { asm volatile("" : "+f"(x)::"memory"); }
template <class T, int R, int C> __device__ __forceinline__ void hold(T (&x)[R][C]) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c) hold(x[r][c]);
}

/* Descriptor of a K-major tile in shared memory whose rows are ROW_BYTES long (128: the 128-byte
 * swizzle, 64: the 64-byte swizzle, which is exactly smem_offset's XOR pattern) and whose 8-row
 * groups follow each other. The tile must be 1024-byte aligned; the k-th 16-byte column step is
 * desc + k (the address field counts 16-byte units). */
template <int ROW_BYTES> __device__ __forceinline__ uint64_t kmajor_desc(uint32_t saddr) {
    static_assert(ROW_BYTES == 128 || ROW_BYTES == 64, "swizzle width");
    uint64_t d = (uint64_t)((saddr & 0x3FFFFu) >> 4);
    d |= (uint64_t)1 << 16;                          /* leading offset: unused when swizzled */
    d |= (uint64_t)((8 * ROW_BYTES) >> 4) << 32;     /* stride between 8-row groups */
    d |= (uint64_t)(ROW_BYTES == 128 ? 1 : 2) << 62; /* swizzle mode */
    return d;
}

/* D (m64 x n64, s32) [scale-d: += or =] A · B, both from shared memory (descriptors), K-major. */
template <int kScaleD>
__device__ __forceinline__ void wgmma_s8_m64n64k32(int32_t (&d)[KEY_BLOCKS][4], uint64_t desc_a, uint64_t desc_b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p;\n}\n"
                 : "+r"(d[0][0]), "+r"(d[0][1]), "+r"(d[0][2]), "+r"(d[0][3]), "+r"(d[1][0]), "+r"(d[1][1]), "+r"(d[1][2]), "+r"(d[1][3]), "+r"(d[2][0]), "+r"(d[2][1]), "+r"(d[2][2]), "+r"(d[2][3]), "+r"(d[3][0]), "+r"(d[3][1]), "+r"(d[3][2]), "+r"(d[3][3]), "+r"(d[4][0]), "+r"(d[4][1]), "+r"(d[4][2]), "+r"(d[4][3]), "+r"(d[5][0]), "+r"(d[5][1]), "+r"(d[5][2]), "+r"(d[5][3]), "+r"(d[6][0]), "+r"(d[6][1]), "+r"(d[6][2]), "+r"(d[6][3]), "+r"(d[7][0]), "+r"(d[7][1]), "+r"(d[7][2]), "+r"(d[7][3])
                 : "l"(desc_a), "l"(desc_b), "n"(kScaleD));
}

/* D (m64 x n32, f32) [scale-d: += or =] A (registers, f16) · B (descriptor, f16, K-major). */
template <int kScaleD>
__device__ __forceinline__ void wgmma_f16_m64n32k16_rs(float (&d)[4][4], const uint32_t (&a)[4], uint64_t desc_b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(kScaleD));
}

/* ---- FP8 P·V as f16 wgmma (SAGE2.md §2.5, replaying the sm_90 lowering) --------------------- */

/* Two e4m3 (the low 16 bits of w) -> f16x2, exact. */
__device__ __forceinline__ uint32_t cvt_e4m3x2_f16x2(uint32_t w) {
    uint32_t r;
    asm("{\n .reg .b16 t;\n cvt.u16.u32 t, %1;\n cvt.rn.f16x2.e4m3x2 %0, t;\n}\n" : "=r"(r) : "r"(w));
    return r;
}
/* Two fp32 -> two e4m3 (rn, satfinite, as pack_e4m3x4) -> f16x2: v0 low half, v1 high half. */
__device__ __forceinline__ uint32_t e4m3_round_f16x2(float v0, float v1) {
    uint32_t r;
    asm("{\n .reg .b16 t;\n cvt.rn.satfinite.e4m3x2.f32 t, %1, %2;\n cvt.rn.f16x2.e4m3x2 %0, t;\n}\n"
        : "=r"(r)
        : "f"(v1), "f"(v0));
    return r;
}

/* P (fp32, one 16-row slice) -> the f16 A registers of the four P·V steps. The FP8 A register
 * a_i of k-half kh (pack_p_e4m3) splits into its low 16 bits, used by the first HMMA of the
 * lowering, and its high 16 bits, used by the second: pf[kh][0] = {lo a0, lo a1, lo a2, lo a3},
 * pf[kh][1] = {hi a0, .., hi a3}. The wgmma m64nNk16 A fragment of a warp is the mma m16n8k16
 * fragment, so these registers go in unchanged. */
__device__ __forceinline__ void pack_p_f16(const float (&p)[KEY_BLOCKS][4], uint32_t (&pf)[PV_KHALVES][2][4]) {
#pragma unroll
    for (int kh = 0; kh < PV_KHALVES; ++kh)
#pragma unroll
        for (int hl = 0; hl < 2; ++hl) {
            const int nb = 4 * kh + hl;
            pf[kh][hl][0] = e4m3_round_f16x2(p[nb][0], p[nb][1]);
            pf[kh][hl][1] = e4m3_round_f16x2(p[nb][2], p[nb][3]);
            pf[kh][hl][2] = e4m3_round_f16x2(p[nb + 2][0], p[nb + 2][1]);
            pf[kh][hl][3] = e4m3_round_f16x2(p[nb + 2][2], p[nb + 2][3]);
        }
}

/* The V tile as f16, [HD][CTA_K] rows of 128 bytes, 128-byte swizzle (smem_offset<128>). Step
 * s = 2*kh + hl of the P·V chain (k-half kh, low/high 16 bits hl) reads bytes [32s, 32s+32) of
 * every row: f16 k index κ = 2t'+e (κ < 8) is V8 slot 32kh + 4t' + 2hl + e and κ = 8+2t'+e is
 * slot 32kh + 16 + 4t' + 2hl + e; the same pairing of k that the HMMA operands of the lowering
 * have. So a 16-slot group q of V8 (four words) gives two 16-byte chunks: its low halves
 * (chunk 4(q>>1) + (q&1)) and its high halves (chunk 4(q>>1) + 2 + (q&1)). */
constexpr int VH_ROW_BYTES = CTA_K * 2;
/* One 16-slot group of V8 (w, four words) -> its low-half chunk and its high-half chunk. */
__device__ __forceinline__ void unpack_v_group(const uint4 &w, uint4 &lo, uint4 &hi) {
    lo.x = cvt_e4m3x2_f16x2(w.x & 0xffffu);
    hi.x = cvt_e4m3x2_f16x2(w.x >> 16);
    lo.y = cvt_e4m3x2_f16x2(w.y & 0xffffu);
    hi.y = cvt_e4m3x2_f16x2(w.y >> 16);
    lo.z = cvt_e4m3x2_f16x2(w.z & 0xffffu);
    hi.z = cvt_e4m3x2_f16x2(w.z >> 16);
    lo.w = cvt_e4m3x2_f16x2(w.w & 0xffffu);
    hi.w = cvt_e4m3x2_f16x2(w.w >> 16);
}
/* The chunk of an f16 V row that holds the low halves of V8 group q (the high halves: +2). */
__device__ __forceinline__ int v_group_chunk(int q) { return 4 * (q >> 1) + (q & 1); }
template <int HD>
__device__ __forceinline__ void convert_v_tile_f16(uint8_t *sVh, const uint8_t *sV8, int tid) {
    /* thread: group q of rows r0 + 32*it; a row step of 32 keeps both swizzles (row & 7 and
     * (row >> 1) & 3), so one base address per side serves every iteration */
    const int r0 = tid >> 2, q = tid & 3, c0 = v_group_chunk(q);
    const uint8_t *src = sV8 + smem_offset<CTA_K>(r0, q);
    uint8_t *dst_lo = sVh + smem_offset<VH_ROW_BYTES>(r0, c0);
    uint8_t *dst_hi = sVh + smem_offset<VH_ROW_BYTES>(r0, c0 + 2);
    static_assert(NUM_THREADS == 128, "4 groups x 32 rows per pass");
#pragma unroll
    for (int it = 0; it < HD / 32; ++it) {
        const uint4 w = *reinterpret_cast<const uint4 *>(src + it * 32 * CTA_K);
        uint4 lo, hi;
        unpack_v_group(w, lo, hi);
        *reinterpret_cast<uint4 *>(dst_lo + it * 32 * VH_ROW_BYTES) = lo;
        *reinterpret_cast<uint4 *>(dst_hi + it * 32 * VH_ROW_BYTES) = hi;
    }
}

/* IEEE fp32 add without flush-to-zero: how ptxas adds the FP8 mma's C operand on sm_90. */
__device__ __forceinline__ float fadd_noftz(float a, float b) {
    float r;
    asm("add.rn.f32 %0, %1, %2;\n" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

/* §2.2-§2.5 for one 16-row slice: x from S_int, the online softmax (m, d of its two rows, α),
 * and P as the f16 A registers of P·V. diag: the causal offset of score_tile_scale. kIntMax:
 * class 1 tiles take the row maxima from S_int (softmax_row_max_int, the same values; the maxima
 * no longer wait for the conversions: warp-specialized -3.6%, issue 17 run 33). */
template <bool kScaleX, bool kMask, bool kCausal, bool kIntMax = false>
__device__ __forceinline__ void softmax_slice(const int32_t (&s)[KEY_BLOCKS][4], float delta, float c, int valid_keys,
                                              int lane, float (&m)[2], float (&d)[2], float (&alpha)[2],
                                              uint32_t (&pf)[PV_KHALVES][2][4], int diag) {
    float x[KEY_BLOCKS][4];
    score_tile_scale<kScaleX, kMask, kCausal>(s, x, delta, valid_keys, lane, diag);
    if constexpr (kIntMax && !kScaleX && !kMask && !kCausal) {
#pragma unroll
        for (int rh = 0; rh < 2; ++rh)
            alpha[rh] = softmax_exp_sum(x, c, softmax_row_max_int(s, c, m[rh], rh), m[rh], d[rh], rh);
    } else {
        online_softmax_update(x, c, m, d, alpha);
    }
    pack_p_f16(x, pf);
}

/* ---- P·V of a warpgroup: 16-row slices x 32-channel groups, two groups in flight ------------- */
constexpr int PV_N = 32;          /* channels per P·V group (16: +4%, 64: +2.5%, spilling; 32: +18%,
                                     interleave-softmax's first round) */
constexpr int PV_NB = PV_N / MMA_N; /* 8-channel blocks per group */

/* One P·V group: channels [PV_N*cg, +PV_N) of a slice, the four steps of the chain (k-half kh:
 * its low then its high 16 bits, scale-d 0 then 1) into h[kh]. vh: the f16 V tile. */
__device__ __forceinline__ void pv_issue_desc(float (&h)[2][PV_NB][4], const uint32_t (&pf)[PV_KHALVES][2][4],
                                              uint64_t dv) {
    wgmma_f16_m64n32k16_rs<0>(h[0], pf[0][0], dv + 0);
    wgmma_f16_m64n32k16_rs<1>(h[0], pf[0][1], dv + 2);
    wgmma_f16_m64n32k16_rs<0>(h[1], pf[1][0], dv + 4);
    wgmma_f16_m64n32k16_rs<1>(h[1], pf[1][1], dv + 6);
    commit();
}
__device__ __forceinline__ void pv_issue(float (&h)[2][PV_NB][4], const uint32_t (&pf)[PV_KHALVES][2][4],
                                         uint32_t vh, int cg) {
    pv_issue_desc(h, pf, kmajor_desc<VH_ROW_BYTES>(vh + cg * PV_N * VH_ROW_BYTES));
}
/* The same from the descriptor of the V tile (dv0 = kmajor_desc(vh)): group cg's is dv0 plus its
 * rows' offset in 16-byte units (the address field; a tile never crosses 256 KB, so no carry),
 * which spares recomputing a descriptor from an address per group (uniform datapath work). */
__device__ __forceinline__ void pv_issue_from(float (&h)[2][PV_NB][4], const uint32_t (&pf)[PV_KHALVES][2][4],
                                              uint64_t dv0, int cg) {
    pv_issue_desc(h, pf, dv0 + (uint64_t)(cg * PV_N * VH_ROW_BYTES / 16));
}
/* B = H(k-half 0) + H(k-half 1), a non-ftz add; O = fma(α, O, B) (SAGE2.md §2.5). The sm_90
 * lowering computes (0 + H0) + H1: its first add changes nothing but a −0 into +0, and a chain
 * that starts from zero never yields −0 on this hardware (above), so it is left out (−10% of
 * interleave-softmax's instructions, +6% speed). o: the slice's accumulator, [HD/8][4].
 * kSwapH1: the tile's k-half 1 has channel pairs swapped (row d of its f16 V holds channel d^1, as
 * the warp-specialized pre-pass writes it), so H1 of channel c sits in the register of c^1, the
 * other element of the same thread's pair. Each channel's products and sums are the same (a
 * wgmma computes every output column alike; the golden test checks the bytes); what changes is
 * that the FADD pairs h0[i] with h1[i^1], registers of different parity, where the unswapped
 * pairs R(a+i) + R(b+i) of two aligned accumulator blocks (issue 17 run 24: -0.7%). */
template <int CBLOCKS, bool kSwapH1 = false>
__device__ __forceinline__ void pv_fold(float (&o)[CBLOCKS][4], const float (&h)[2][PV_NB][4], int cg,
                                        const float (&alpha)[2]) {
#pragma unroll
    for (int nb = 0; nb < PV_NB; ++nb) {
        float(&oc)[4] = o[cg * PV_NB + nb];
#pragma unroll
        for (int i = 0; i < 4; ++i)
            oc[i] = __fmaf_rn(alpha[i >> 1], oc[i], fadd_noftz(h[0][nb][i], h[1][nb][kSwapH1 ? i ^ 1 : i]));
    }
}
/* §2.5 for NSL slices: groups (sl, cg) in order (kSliceInner: (cg, sl)), two in flight, each
 * folded into O while the next one computes. kBaseDesc: the groups' descriptors from the tile's
 * (pv_issue_from), not each from its address. The f16 V tile at vh must be complete and visible
 * to the async proxy; wgmma groups committed before (a Q·Kᵀ) complete by the first fold. Returns
 * with every group done. */
template <int HD, int NSL, bool kSwapH1 = false, bool kBaseDesc = false, bool kSliceInner = false>
__device__ __forceinline__ void pv_slices(float (&o)[NSL][HD / MMA_N][4], uint32_t (&pf)[NSL][PV_KHALVES][2][4],
                                          const float (&alpha)[NSL][2], uint32_t vh) {
    constexpr int GROUPS = NSL * (HD / PV_N);
    float h[2][2][PV_NB][4];
    const uint64_t dv0 = kBaseDesc ? kmajor_desc<VH_ROW_BYTES>(vh) : 0; /* the tile's (kBaseDesc) */
    auto issue = [&](float (&hh)[2][PV_NB][4], const uint32_t (&p)[PV_KHALVES][2][4], int cg) {
        if constexpr (kBaseDesc)
            pv_issue_from(hh, p, dv0, cg);
        else
            pv_issue(hh, p, vh, cg);
    };
#pragma unroll
    for (int sl = 0; sl < NSL; ++sl) hold(pf[sl][0]), hold(pf[sl][1]);
    fence();
    /* group gi: slice and channel group (kSliceInner: the slices of one channel group in turn,
     * so that a group's V descriptors serve every slice back to back) */
    auto slice_of = [](int gi) { return kSliceInner ? gi % NSL : gi / (HD / PV_N); };
    auto cgroup_of = [](int gi) { return kSliceInner ? gi / NSL : gi % (HD / PV_N); };
    issue(h[0], pf[0], 0);
#pragma unroll
    for (int gi = 0; gi < GROUPS; ++gi) {
        const int sl = slice_of(gi), cg = cgroup_of(gi);
        if (gi + 1 < GROUPS) {
            issue(h[(gi + 1) & 1], pf[slice_of(gi + 1)], cgroup_of(gi + 1));
            wait<1>();
        } else {
            wait<0>();
        }
        hold(h[gi & 1][0]);
        hold(h[gi & 1][1]);
        pv_fold<HD / MMA_N, kSwapH1>(o[sl], h[gi & 1], cg, alpha[sl]);
        if (gi + 2 < GROUPS) fence(); /* the fold wrote registers near the next wgmma */
    }
#pragma unroll
    for (int sl = 0; sl < NSL; ++sl) hold(pf[sl][0]), hold(pf[sl][1]);
}

} // namespace wg
} // namespace sage2
#endif /* SAGE2_HAS_WGMMA || host pass */

#endif
