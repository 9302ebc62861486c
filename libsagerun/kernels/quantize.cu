// The sage2 quantizer on the device (SAGE2.md section 1). Four kernels, launched in this order by
// quantize.c: column reduction (K sums, V max), finalize (k_mean, v_scale, V multipliers), row
// groups (INT8 Q, then INT8 K), V tiles (FP8, transposed and permuted). All memory-bound: 16-byte
// loads, coalesced along the channel axis, several in flight per thread; V is transposed through
// shared memory. The dtype is a template parameter (no per-element branches). Each kernel's
// seq_len is the rows of the tensor it reads (quantize.c sets it): Q's seq_len, K's and V's kv_len.
//
// Bit-exactness with SageAttention's quantizer rests on: rcp.approx.ftz.f32 for reciprocals,
// mul/sub with .rn and .ftz (compiled with -ftz=true), cvt.rni for INT8 and
// cvt.rn.satfinite.e4m3x2.f32 for FP8.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "quantize_math.h"

namespace {

__device__ __forceinline__ float rcp_approx_ftz(float x)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// Two floats to two e4m3 bytes: lo in bits 0-7, hi in bits 8-15.
__device__ __forceinline__ uint32_t e4m3x2(float lo, float hi)
{
    uint16_t r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ uint32_t int8_rn_sat(float x)
{
    int i = __float2int_rn(x); // cvt.rni.s32.f32: NaN gives 0
    i = max(-128, min(127, i));
    return (uint32_t)i & 0xFFu;
}

// Eight fp16/bf16 values of a 16-byte chunk to fp32 (exact).
__device__ __forceinline__ void unpack8(uint4 raw, uint32_t bf16, float out[8])
{
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if (bf16) {
            out[2 * i] = __uint_as_float(w[i] << 16);
            out[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
        } else {
            __half2 h = *reinterpret_cast<const __half2 *>(&w[i]);
            float2 f = __half22float2(h);
            out[2 * i] = f.x;
            out[2 * i + 1] = f.y;
        }
    }
}

__device__ __forceinline__ uint4 load16(const void *base, int64_t element_offset)
{
    return __ldg(reinterpret_cast<const uint4 *>(static_cast<const uint16_t *>(base) +
                                                 element_offset));
}

__device__ __forceinline__ float block_max(float v, float *scratch)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if ((threadIdx.x & 31) == 0)
        scratch[warp] = v;
    __syncthreads();
    float r = scratch[0];
    for (unsigned w = 1; w < warps; w++)
        r = fmaxf(r, scratch[w]);
    return r;
}

constexpr unsigned kColThreads = 128;   // SR_QUANT_COL_THREADS in quantize.c
constexpr unsigned kFinalThreads = 1024; // SR_QUANT_FINAL_THREADS
constexpr unsigned kVThreads = 256;     // SR_QUANT_V_THREADS

} // namespace

// Compile-time dtype versions of unpack8 (no per-element branch in the hot loops).
template <bool BF16> __device__ __forceinline__ void unpack8t(uint4 raw, float out[8])
{
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if (BF16) {
            out[2 * i] = __uint_as_float(w[i] << 16);
            out[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
        } else {
            __half2 h = *reinterpret_cast<const __half2 *>(&w[i]);
            float2 f = __half22float2(h);
            out[2 * i] = f.x;
            out[2 * i + 1] = f.y;
        }
    }
}

// ---- column reduction ----------------------------------------------------------------------
// grid: (ceil(heads*D/8 / 128), slices, B), 128 threads, each the max |V| over 8 channels of one
// (b, h) and the slice's tokens (SR_QUANT_MEAN_SLICE of them). K's mean is torch_mean.cu's.
constexpr uint32_t kColUnroll = 4;

template <bool BF16>
__device__ __forceinline__ void colreduce_stream(const sr_quant_colreduce_params &p, uint32_t cc)
{
    const uint32_t chunks_per_row = p.head_dim / 8;
    const uint32_t h = cc / chunks_per_row, c0 = (cc - h * chunks_per_row) * 8;
    const uint32_t b = blockIdx.z, s = blockIdx.y;
    const uint32_t n0 = s * SR_QUANT_MEAN_SLICE;
    const uint32_t cnt = min(p.seq_len - n0, SR_QUANT_MEAN_SLICE);
    const uint16_t *src = reinterpret_cast<const uint16_t *>(p.v) + (int64_t)b * p.stride_b +
                          (int64_t)h * p.stride_h + (int64_t)n0 * p.stride_n + c0;
    const int64_t sn = p.stride_n;

    float acc[8], x[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        acc[j] = 0.0f;
    uint32_t n = 0;
    for (; n + kColUnroll <= cnt; n += kColUnroll) {
        uint4 raw[kColUnroll];
#pragma unroll
        for (uint32_t u = 0; u < kColUnroll; u++)
            raw[u] = __ldg(reinterpret_cast<const uint4 *>(src + u * sn));
        src += kColUnroll * sn;
#pragma unroll
        for (uint32_t u = 0; u < kColUnroll; u++) {
            unpack8t<BF16>(raw[u], x);
#pragma unroll
            for (int j = 0; j < 8; j++)
                acc[j] = fmaxf(acc[j], fabsf(x[j]));
        }
    }
    for (; n < cnt; n++) {
        unpack8t<BF16>(__ldg(reinterpret_cast<const uint4 *>(src)), x);
        src += sn;
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[j] = fmaxf(acc[j], fabsf(x[j]));
    }
    const uint64_t col = ((uint64_t)s * p.batch + b) * p.heads * p.head_dim +
                         (uint64_t)h * p.head_dim + c0;
    float4 *o = reinterpret_cast<float4 *>(reinterpret_cast<float *>(p.partial_max) + col);
    o[0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
    o[1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
}

extern "C" __global__ void __launch_bounds__(kColThreads, 8)
    sr_quant_colreduce_kernel(sr_quant_colreduce_params p)
{
    const uint32_t cc = blockIdx.x * kColThreads + threadIdx.x;
    if (cc >= p.heads * (p.head_dim / 8))
        return;
    if (p.bf16)
        colreduce_stream<true>(p, cc);
    else
        colreduce_stream<false>(p, cc);
}

// ---- finalize ------------------------------------------------------------------------------
// grid: ceil(columns / 32), 1024 threads. The 32 warps load the V maxima of 32 columns (a warp
// reads 128 contiguous bytes per slice, up to kFinalPer slices per thread all in flight),
// reducing them on the way; then warp 0 writes, per (b, hk, c): v_scale = amax * fl(1/R),
// v_inv = R * rcp(amax), and copies a given k_mean (the computed one is torch_mean.cu's).
constexpr uint32_t kFinalCols = 32, kFinalWarps = kFinalThreads / 32, kFinalPer = 10;
constexpr uint32_t kFinalChunk = kFinalWarps * kFinalPer; // slices per round

extern "C" __global__ void __launch_bounds__(kFinalThreads)
    sr_quant_finalize_kernel(sr_quant_finalize_params p)
{
    __shared__ float maxes[kFinalWarps][kFinalCols];
    const uint32_t lane = threadIdx.x % kFinalCols, w = threadIdx.x / kFinalCols;
    const uint32_t i = blockIdx.x * kFinalCols + lane;
    const bool valid = i < p.columns;
    const float *pm = reinterpret_cast<const float *>(p.partial_max);

    float amax = 0.0f;
    for (uint32_t s0 = 0; s0 < p.slices; s0 += kFinalChunk) {
        const uint32_t ns = min(kFinalChunk, p.slices - s0);
        float vm[kFinalPer];
#pragma unroll
        for (uint32_t u = 0; u < kFinalPer; u++) { // all loads first
            const uint32_t s = w + u * kFinalWarps;
            vm[u] = valid && s < ns ? pm[(uint64_t)(s0 + s) * p.columns + i] : 0.0f;
        }
#pragma unroll
        for (uint32_t u = 0; u < kFinalPer; u++)
            amax = fmaxf(amax, vm[u]);
    }
    maxes[w][lane] = amax;
    __syncthreads();
    if (w != 0 || !valid)
        return;
#pragma unroll
    for (uint32_t k = 1; k < kFinalWarps; k++)
        amax = fmaxf(amax, maxes[k][lane]);
    if (p.given_k_mean)
        reinterpret_cast<uint16_t *>(p.k_mean)[i] =
            reinterpret_cast<const uint16_t *>(p.given_k_mean)[i];
    reinterpret_cast<float *>(p.v_scale)[i] = __fmul_rn(amax, p.v_range_inv);
    reinterpret_cast<float *>(p.v_inv)[i] = __fmul_rn(p.v_range, rcp_approx_ftz(amax));
}

// ---- INT8 rows (Q, K) ----------------------------------------------------------------------
// grid: (groups_per_head, H, B), 128 threads. One block per group of rows of one (b, h):
// a = max(eps, max |x - mean|), scale = a * fl(1/127), x8 = rni_sat(x * (127 * rcp(a))).
// When 128 is a multiple of D/8 (D = 64, 128, ...), a thread always holds the same 8 channels:
// its chunk i is row r0 + i * (128 / (D/8)), and K's mean for them is loaded once.
template <uint32_t CACHE, bool BF16, bool MEAN>
__device__ __forceinline__ void quant_rows_fixed(const sr_quant_rows_params &p, float *scratch)
{
    const uint32_t g = blockIdx.x, h = blockIdx.y, b = blockIdx.z, t = threadIdx.x;
    const uint32_t cpr = p.head_dim / 8, rstep = SR_QUANT_ROWS_THREADS / cpr;
    const uint32_t r0 = t / cpr, c0 = (t - r0 * cpr) * 8;
    const uint32_t n0 = g * p.group_rows;
    const uint32_t rows = n0 >= p.seq_len ? 0 : min(p.group_rows, p.seq_len - n0);
    const int64_t off0 = (int64_t)b * p.stride_b + (int64_t)h * p.stride_h +
                         (int64_t)(n0 + r0) * p.stride_n + c0;
    const int64_t step = (int64_t)rstep * p.stride_n;
    const uint16_t *src = reinterpret_cast<const uint16_t *>(p.src);

    float m[8];
    if (MEAN) {
        const uint16_t *mean =
            reinterpret_cast<const uint16_t *>(p.mean) + ((uint64_t)b * p.heads + h) * p.head_dim;
        unpack8t<BF16>(__ldg(reinterpret_cast<const uint4 *>(mean + c0)), m);
    }
    auto centred = [&](uint4 raw, float x[8]) {
        unpack8t<BF16>(raw, x);
        if (MEAN) {
#pragma unroll
            for (int k = 0; k < 8; k++)
                x[k] = __fsub_rn(x[k], m[k]);
        }
    };

    uint4 cache[CACHE];
    float amax = 0.0f, x[8];
#pragma unroll
    for (uint32_t i = 0; i < CACHE; i++)
        if (r0 + i * rstep < rows)
            cache[i] = __ldg(reinterpret_cast<const uint4 *>(src + off0 + (int64_t)i * step));
#pragma unroll
    for (uint32_t i = 0; i < CACHE; i++) {
        if (r0 + i * rstep < rows) {
            centred(cache[i], x);
#pragma unroll
            for (int k = 0; k < 8; k++)
                amax = fmaxf(amax, fabsf(x[k]));
        }
    }
    for (uint32_t i = CACHE; r0 + i * rstep < rows; i++) {
        centred(__ldg(reinterpret_cast<const uint4 *>(src + off0 + (int64_t)i * step)), x);
#pragma unroll
        for (int k = 0; k < 8; k++)
            amax = fmaxf(amax, fabsf(x[k]));
    }
    amax = block_max(amax, scratch);

    const float a = fmaxf(amax, SR_QUANT_INT8_EPS);
    const float inv = __fmul_rn(SR_QUANT_INT8_MAX, rcp_approx_ftz(a));
    if (t == 0)
        reinterpret_cast<float *>(p.scale)[((uint64_t)b * p.heads + h) * p.groups_per_head + g] =
            __fmul_rn(a, 1.0f / SR_QUANT_INT8_MAX);

    int8_t *dst = reinterpret_cast<int8_t *>(p.dst);
    auto quantize_store = [&](uint4 raw, int64_t off) {
        centred(raw, x);
        uint32_t lo = 0, hi = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            lo |= int8_rn_sat(__fmul_rn(x[k], inv)) << (8 * k);
            hi |= int8_rn_sat(__fmul_rn(x[k + 4], inv)) << (8 * k);
        }
        *reinterpret_cast<uint2 *>(dst + off) = make_uint2(lo, hi);
    };
#pragma unroll
    for (uint32_t i = 0; i < CACHE; i++)
        if (r0 + i * rstep < rows)
            quantize_store(cache[i], off0 + (int64_t)i * step);
    for (uint32_t i = CACHE; r0 + i * rstep < rows; i++) {
        const int64_t off = off0 + (int64_t)i * step;
        quantize_store(__ldg(reinterpret_cast<const uint4 *>(src + off)), off);
    }
}

// Any D (a multiple of 8): chunk j of the group is row j / (D/8), channels 8 * (j % (D/8)).
template <uint32_t CACHE> __device__ __forceinline__ void quant_rows(const sr_quant_rows_params &p)
{
    __shared__ float scratch[SR_QUANT_ROWS_THREADS / 32];
    const uint32_t g = blockIdx.x, h = blockIdx.y, b = blockIdx.z, t = threadIdx.x;
    const uint32_t chunks_per_row = p.head_dim / 8;
    const uint32_t n0 = g * p.group_rows;
    const uint32_t rows = n0 >= p.seq_len ? 0 : min(p.group_rows, p.seq_len - n0);
    const uint32_t chunks = rows * chunks_per_row;
    const int64_t base = (int64_t)b * p.stride_b + (int64_t)h * p.stride_h +
                         (int64_t)n0 * p.stride_n;
    const void *src = reinterpret_cast<const void *>(p.src);
    const uint16_t *mean =
        p.mean ? reinterpret_cast<const uint16_t *>(p.mean) + ((uint64_t)b * p.heads + h) *
                                                                  p.head_dim
               : nullptr;

    auto offset_of = [&](uint32_t j, uint32_t *c0) {
        const uint32_t r = j / chunks_per_row;
        *c0 = (j - r * chunks_per_row) * 8;
        return base + (int64_t)r * p.stride_n + *c0;
    };
    // x - mean for the 8 values of chunk j (channels c0..c0+7).
    auto centred = [&](uint4 raw, uint32_t c0, float x[8]) {
        unpack8(raw, p.bf16, x);
        if (mean) {
            float m[8];
            unpack8(*reinterpret_cast<const uint4 *>(mean + c0), p.bf16, m);
#pragma unroll
            for (int k = 0; k < 8; k++)
                x[k] = __fsub_rn(x[k], m[k]);
        }
    };

    uint4 cache[CACHE];
    float amax = 0.0f, x[8];
#pragma unroll
    for (uint32_t i = 0; i < CACHE; i++) {
        const uint32_t j = t + i * SR_QUANT_ROWS_THREADS;
        if (j < chunks) {
            uint32_t c0;
            cache[i] = load16(src, offset_of(j, &c0));
        }
    }
#pragma unroll
    for (uint32_t i = 0; i < CACHE; i++) {
        const uint32_t j = t + i * SR_QUANT_ROWS_THREADS;
        if (j < chunks) {
            uint32_t c0;
            offset_of(j, &c0);
            centred(cache[i], c0, x);
#pragma unroll
            for (int k = 0; k < 8; k++)
                amax = fmaxf(amax, fabsf(x[k]));
        }
    }
    for (uint32_t j = t + CACHE * SR_QUANT_ROWS_THREADS; j < chunks;
         j += SR_QUANT_ROWS_THREADS) {
        uint32_t c0;
        const int64_t off = offset_of(j, &c0);
        centred(load16(src, off), c0, x);
#pragma unroll
        for (int k = 0; k < 8; k++)
            amax = fmaxf(amax, fabsf(x[k]));
    }
    amax = block_max(amax, scratch);

    const float a = fmaxf(amax, SR_QUANT_INT8_EPS);
    const float inv = __fmul_rn(SR_QUANT_INT8_MAX, rcp_approx_ftz(a));
    if (t == 0)
        reinterpret_cast<float *>(p.scale)[((uint64_t)b * p.heads + h) * p.groups_per_head + g] =
            __fmul_rn(a, 1.0f / SR_QUANT_INT8_MAX);

    int8_t *dst = reinterpret_cast<int8_t *>(p.dst);
    auto quantize_store = [&](uint4 raw, uint32_t j) {
        uint32_t c0;
        const int64_t off = offset_of(j, &c0);
        centred(raw, c0, x);
        uint32_t lo = 0, hi = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            lo |= int8_rn_sat(__fmul_rn(x[k], inv)) << (8 * k);
            hi |= int8_rn_sat(__fmul_rn(x[k + 4], inv)) << (8 * k);
        }
        *reinterpret_cast<uint2 *>(dst + off) = make_uint2(lo, hi);
    };
#pragma unroll
    for (uint32_t i = 0; i < CACHE; i++) {
        const uint32_t j = t + i * SR_QUANT_ROWS_THREADS;
        if (j < chunks)
            quantize_store(cache[i], j);
    }
    for (uint32_t j = t + CACHE * SR_QUANT_ROWS_THREADS; j < chunks;
         j += SR_QUANT_ROWS_THREADS) {
        uint32_t c0;
        quantize_store(load16(src, offset_of(j, &c0)), j);
    }
}

template <uint32_t CACHE>
__device__ __forceinline__ void quant_rows_fixed_any(const sr_quant_rows_params &p)
{
    __shared__ float scratch[SR_QUANT_ROWS_THREADS / 32];
    if (p.bf16) {
        if (p.mean)
            quant_rows_fixed<CACHE, true, true>(p, scratch);
        else
            quant_rows_fixed<CACHE, true, false>(p, scratch);
    } else {
        if (p.mean)
            quant_rows_fixed<CACHE, false, true>(p, scratch);
        else
            quant_rows_fixed<CACHE, false, false>(p, scratch);
    }
}

// CACHE = chunks each thread keeps in registers: the smallest of 4, 8, 16 that holds the group
// (quantize.c picks it), so the common groups load once with few registers. sr_quant_rowsN_kernel
// takes any D; sr_quant_rowsfN_kernel needs 128 % (D/8) == 0 (quantize.c checks). min_blocks:
// blocks per SM the register budget must allow (12 x 128 threads: 40 registers).
#define SR_QUANT_ROWS_KERNEL(cache, min_blocks)                                                    \
    extern "C" __global__ void __launch_bounds__(SR_QUANT_ROWS_THREADS)                            \
        sr_quant_rows##cache##_kernel(sr_quant_rows_params p)                                      \
    {                                                                                              \
        quant_rows<cache>(p);                                                                      \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(SR_QUANT_ROWS_THREADS, min_blocks)                \
        sr_quant_rowsf##cache##_kernel(sr_quant_rows_params p)                                     \
    {                                                                                              \
        quant_rows_fixed_any<cache>(p);                                                            \
    }
SR_QUANT_ROWS_KERNEL(4, 12)
SR_QUANT_ROWS_KERNEL(8, 8)
SR_QUANT_ROWS_KERNEL(16, 1)

// ---- FP8 V ---------------------------------------------------------------------------------
// grid: (ceil(L/128), H * ceil(D/64), B), 256 threads. A tile of 128 tokens x 64 channels. Thread
// t owns the 8 channels 8 * (t % 8) (their multipliers are loaded once) and the four tokens
// {2j, 2j+1, 2j+8, 2j+9} of the tile's 16-token group t / 32, j = (t / 8) % 4: exactly the tokens
// of storage slots 4j..4j+3 of that group (pi = [0,1,8,9, 2,3,10,11, ...]), so each channel's four
// codes are one 32-bit word in shared memory. The tile is [channel][32 words], word w of channel
// cl stored at w ^ (4 * ((cl / 8) % 8)): conflict-free word stores, and the 4-word groups stay
// contiguous for the 16-byte reads. Output: 128-byte runs of tokens per channel.
constexpr uint32_t kVTokens = SR_QUANT_V_TILE_TOKENS, kVChannels = SR_QUANT_V_TILE_CHANNELS;
static_assert(kVTokens == 128 && kVChannels == 64 && SR_QUANT_PERM_GROUP == 16 &&
                  kVTokens * kVChannels / 32 == kVThreads,
              "V tile mapping: four tokens x eight channels per thread");

constexpr uint32_t kVWords = kVTokens / 4; // per channel

template <bool BF16>
__device__ __forceinline__ void quant_v(const sr_quant_v_params &p, uint32_t *tile)
{
    constexpr uint32_t WORDS = kVWords;

    const uint32_t cblocks = (p.head_dim + kVChannels - 1) / kVChannels;
    const uint32_t h = blockIdx.y / cblocks, cb = blockIdx.y - h * cblocks, b = blockIdx.z;
    const uint32_t tok0 = blockIdx.x * kVTokens, t = threadIdx.x;
    const uint32_t ck = t % 8, j = (t / 8) % 4, grp = t / 32;
    const uint32_t cl0 = ck * 8, c0 = cb * kVChannels + cl0;
    const bool cvalid = c0 < p.head_dim;
    const uint32_t tk = tok0 + grp * SR_QUANT_PERM_GROUP + 2 * j; // tokens tk, +1, +8, +9

    const uint16_t *v = reinterpret_cast<const uint16_t *>(p.v) + (int64_t)b * p.stride_b +
                        (int64_t)h * p.stride_h + c0;
    const uint32_t dt[4] = {0, 1, 8, 9};
    uint4 raw[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
        const uint32_t n = tk + dt[u];
        raw[u] = make_uint4(0, 0, 0, 0);
        if (cvalid && n < p.seq_len)
            raw[u] = __ldg(reinterpret_cast<const uint4 *>(v + (int64_t)n * p.stride_n));
    }
    float m[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (cvalid) {
        const float *inv = reinterpret_cast<const float *>(p.v_inv) +
                           ((uint64_t)b * p.heads + h) * p.head_dim + c0;
        const float4 i0 = __ldg(reinterpret_cast<const float4 *>(inv));
        const float4 i1 = __ldg(reinterpret_cast<const float4 *>(inv + 4));
        m[0] = i0.x, m[1] = i0.y, m[2] = i0.z, m[3] = i0.w;
        m[4] = i1.x, m[5] = i1.y, m[6] = i1.z, m[7] = i1.w;
    }
    // pairs[u][k]: channel k's codes of tokens (tk + dt[2u], tk + dt[2u+1]) as two bytes
    uint32_t pairs[2][8];
#pragma unroll
    for (int u = 0; u < 2; u++) {
        float x0[8], x1[8];
        unpack8t<BF16>(raw[2 * u], x0);
        unpack8t<BF16>(raw[2 * u + 1], x1);
#pragma unroll
        for (int k = 0; k < 8; k++)
            pairs[u][k] = e4m3x2(__fmul_rn(x0[k], m[k]), __fmul_rn(x1[k], m[k]));
    }
    // padding tokens (n >= seq_len, V's kv_len) are exact zeros: their codes must be 0, not e4m3(0 * inf)
#pragma unroll
    for (int u = 0; u < 4; u++) {
        if (!(tk + dt[u] < p.seq_len)) {
            const uint32_t keep = (u & 1) ? 0x00FFu : 0xFF00u;
#pragma unroll
            for (int k = 0; k < 8; k++)
                pairs[u >> 1][k] &= keep;
        }
    }
    const uint32_t word = grp * 4 + j;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint32_t cl = cl0 + k;
        tile[cl * WORDS + (word ^ (4 * ck))] = pairs[0][k] | (pairs[1][k] << 16);
    }
    __syncthreads();

    // 64 channels x 8 runs of 16 bytes: thread t writes run t % 8 of channels t / 8, 32 + t / 8
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const uint32_t cl = t / 8 + 32 * r, run = t % 8;
        const uint32_t c = cb * kVChannels + cl, slot0 = tok0 + run * SR_QUANT_PERM_GROUP;
        if (c < p.head_dim && slot0 < p.v_len) {
            const uint4 val = *reinterpret_cast<const uint4 *>(
                &tile[cl * WORDS + ((run * 4) ^ (4 * ((cl / 8) % 8)))]);
            uint8_t *dst = reinterpret_cast<uint8_t *>(p.dst) + (int64_t)b * p.out_stride_b +
                           (int64_t)h * p.out_stride_h + (int64_t)c * p.out_stride_d + slot0;
            *reinterpret_cast<uint4 *>(dst) = val;
        }
    }
}

extern "C" __global__ void __launch_bounds__(kVThreads, 8)
    sr_quant_v_kernel(sr_quant_v_params p)
{
    __shared__ __align__(16) uint32_t tile[kVChannels * kVWords];
    if (p.bf16)
        quant_v<true>(p, tile);
    else
        quant_v<false>(p, tile);
}

// A plain 16-byte copy (bytes % 16 == 0): the memory-bandwidth yardstick of the GPU tests.
extern "C" __global__ void __launch_bounds__(256)
    sr_copy16_kernel(uint64_t dst, uint64_t src, uint64_t bytes)
{
    const uint64_t n = bytes / 16;
    uint4 *d = reinterpret_cast<uint4 *>(dst);
    const uint4 *s = reinterpret_cast<const uint4 *>(src);
    for (uint64_t i = (uint64_t)blockIdx.x * 256 + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * 256)
        d[i] = s[i];
}
