// The sage2 quantizer on the device (SAGE2.md section 1). Four kernels, launched in this order by
// quantize.c: column reduction (K sums, V max), finalize (k_mean, v_scale, V multipliers), row
// groups (INT8 Q, then INT8 K), V tiles (FP8, transposed and permuted). All memory-bound: 16-byte
// loads, coalesced along the channel axis; V is transposed through shared memory.
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
constexpr unsigned kFinalThreads = 256; // SR_QUANT_FINAL_THREADS
constexpr unsigned kVThreads = 256;     // SR_QUANT_V_THREADS
static_assert(SR_QUANT_V_TILE_CHANNELS * SR_QUANT_V_TILE_TOKENS / 16 == kVThreads,
              "one 16-byte output group per thread");

} // namespace

// grid: (ceil(heads*D/8 / 128), slices, B). Each thread: 8 channels of one (b, h), one slice of
// tokens; writes the slice's K sums (token order from 0) and V max |v|.
extern "C" __global__ void __launch_bounds__(kColThreads)
    sr_quant_colreduce_kernel(sr_quant_colreduce_params p)
{
    const uint32_t chunks_per_row = p.head_dim / 8;
    const uint32_t cc = blockIdx.x * kColThreads + threadIdx.x;
    if (cc >= p.heads * chunks_per_row)
        return;
    const uint32_t h = cc / chunks_per_row, c0 = (cc - h * chunks_per_row) * 8;
    const uint32_t b = blockIdx.z, s = blockIdx.y;
    const uint32_t n0 = s * SR_QUANT_MEAN_SLICE;
    const uint32_t n1 = min(p.seq_len, n0 + SR_QUANT_MEAN_SLICE);
    const int64_t base = (int64_t)b * p.stride_b + (int64_t)h * p.stride_h + c0;
    const void *k = reinterpret_cast<const void *>(p.k);
    const void *v = reinterpret_cast<const void *>(p.v);

    float sum[8], mx[8], x[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        sum[j] = mx[j] = 0.0f;
#pragma unroll 4
    for (uint32_t n = n0; n < n1; n++) {
        const int64_t off = base + (int64_t)n * p.stride_n;
        if (k) {
            unpack8(load16(k, off), p.bf16, x);
#pragma unroll
            for (int j = 0; j < 8; j++)
                sum[j] = __fadd_rn(sum[j], x[j]);
        }
        unpack8(load16(v, off), p.bf16, x);
#pragma unroll
        for (int j = 0; j < 8; j++)
            mx[j] = fmaxf(mx[j], fabsf(x[j]));
    }
    const uint64_t col = ((uint64_t)s * p.batch + b) * p.heads * p.head_dim +
                         (uint64_t)h * p.head_dim + c0;
    float4 *ps = reinterpret_cast<float4 *>(reinterpret_cast<float *>(p.partial_sum) + col);
    float4 *pm = reinterpret_cast<float4 *>(reinterpret_cast<float *>(p.partial_max) + col);
    if (k) {
        ps[0] = make_float4(sum[0], sum[1], sum[2], sum[3]);
        ps[1] = make_float4(sum[4], sum[5], sum[6], sum[7]);
    }
    pm[0] = make_float4(mx[0], mx[1], mx[2], mx[3]);
    pm[1] = make_float4(mx[4], mx[5], mx[6], mx[7]);
}

// One thread per (b, hk, c): k_mean, v_scale = amax * fl(1/R), v_inv = R * rcp(amax).
extern "C" __global__ void __launch_bounds__(kFinalThreads)
    sr_quant_finalize_kernel(sr_quant_finalize_params p)
{
    const uint32_t i = blockIdx.x * kFinalThreads + threadIdx.x;
    if (i >= p.columns)
        return;
    const float *ps = reinterpret_cast<const float *>(p.partial_sum);
    const float *pm = reinterpret_cast<const float *>(p.partial_max);
    uint16_t *mean = reinterpret_cast<uint16_t *>(p.k_mean);
    if (p.given_k_mean) {
        mean[i] = reinterpret_cast<const uint16_t *>(p.given_k_mean)[i];
    } else {
        float total = 0.0f;
#pragma unroll 16
        for (uint32_t s = 0; s < p.slices; s++) // loads run ahead; the sum keeps its order
            total = __fadd_rn(total, ps[(uint64_t)s * p.columns + i]);
        const float m = __fdiv_rn(total, (float)p.seq_len);
        mean[i] = p.bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(m))
                         : __half_as_ushort(__float2half_rn(m));
    }
    float amax = 0.0f;
#pragma unroll 16
    for (uint32_t s = 0; s < p.slices; s++)
        amax = fmaxf(amax, pm[(uint64_t)s * p.columns + i]);
    reinterpret_cast<float *>(p.v_scale)[i] = __fmul_rn(amax, p.v_range_inv);
    reinterpret_cast<float *>(p.v_inv)[i] = __fmul_rn(p.v_range, rcp_approx_ftz(amax));
}

// grid: (groups_per_head, H, B), 128 threads. One block per group of rows of one (b, h):
// a = max(eps, max |x - mean|), scale = a * fl(1/127), x8 = rni_sat(x * (127 * rcp(a))).
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

// CACHE = chunks each thread keeps in registers: the smallest of 4, 8, 16 that holds the group
// (quantize.c picks it), so the common groups load once with few registers.
#define SR_QUANT_ROWS_KERNEL(cache)                                                                \
    extern "C" __global__ void __launch_bounds__(SR_QUANT_ROWS_THREADS)                            \
        sr_quant_rows##cache##_kernel(sr_quant_rows_params p)                                      \
    {                                                                                              \
        quant_rows<cache>(p);                                                                      \
    }
SR_QUANT_ROWS_KERNEL(4)
SR_QUANT_ROWS_KERNEL(8)
SR_QUANT_ROWS_KERNEL(16)

// grid: (ceil(L/64), H * ceil(D/64), B), 256 threads. A tile of 64 tokens x 64 channels is
// loaded along the channels, quantized, stored to shared memory transposed and permuted, then
// written out as 64-byte runs of tokens per channel.
extern "C" __global__ void __launch_bounds__(kVThreads) sr_quant_v_kernel(sr_quant_v_params p)
{
    constexpr uint32_t TT = SR_QUANT_V_TILE_TOKENS, TC = SR_QUANT_V_TILE_CHANNELS;
    constexpr uint32_t GROUPS = TT / SR_QUANT_PERM_GROUP;
    // [channel][group ^ swizzle][16 slots]; the swizzle spreads channels over banks
    __shared__ __align__(16) uint8_t tile[TC * TT];

    const uint32_t cblocks = (p.head_dim + TC - 1) / TC;
    const uint32_t h = blockIdx.y / cblocks, cb = blockIdx.y - h * cblocks, b = blockIdx.z;
    const uint32_t tok0 = blockIdx.x * TT, t = threadIdx.x;
    const void *v = reinterpret_cast<const void *>(p.v);
    const float *inv = reinterpret_cast<const float *>(p.v_inv) +
                       ((uint64_t)b * p.heads + h) * p.head_dim;

    for (uint32_t idx = t; idx < TT * (TC / 8); idx += kVThreads) {
        const uint32_t tok = idx / (TC / 8), cl0 = (idx % (TC / 8)) * 8;
        const uint32_t n = tok0 + tok, c0 = cb * TC + cl0;
        uint32_t bytes[8];
        if (n < p.seq_len && c0 < p.head_dim) {
            float x[8];
            unpack8(load16(v, (int64_t)b * p.stride_b + (int64_t)n * p.stride_n +
                                  (int64_t)h * p.stride_h + c0),
                    p.bf16, x);
            const float4 i0 = *reinterpret_cast<const float4 *>(inv + c0);
            const float4 i1 = *reinterpret_cast<const float4 *>(inv + c0 + 4);
            const float m[8] = {i0.x, i0.y, i0.z, i0.w, i1.x, i1.y, i1.z, i1.w};
#pragma unroll
            for (int k = 0; k < 8; k += 2) {
                const uint32_t pair = e4m3x2(__fmul_rn(x[k], m[k]), __fmul_rn(x[k + 1], m[k + 1]));
                bytes[k] = pair & 0xFFu;
                bytes[k + 1] = pair >> 8;
            }
        } else {
#pragma unroll
            for (int k = 0; k < 8; k++)
                bytes[k] = 0; // padding tokens are exact zeros
        }
        const uint32_t group = tok / SR_QUANT_PERM_GROUP;
        const uint32_t slot = sr_quant_perm_slot(tok % SR_QUANT_PERM_GROUP);
#pragma unroll
        for (int k = 0; k < 8; k++) {
            const uint32_t cl = cl0 + k;
            tile[cl * TT + ((group ^ ((cl >> 3) & (GROUPS - 1))) * SR_QUANT_PERM_GROUP) + slot] =
                (uint8_t)bytes[k];
        }
    }
    __syncthreads();

    const uint32_t cl = t / GROUPS, group = t % GROUPS;
    const uint32_t c = cb * TC + cl, slot0 = tok0 + group * SR_QUANT_PERM_GROUP;
    if (c < p.head_dim && slot0 < p.v_len) {
        const uint4 val = *reinterpret_cast<const uint4 *>(
            &tile[cl * TT + ((group ^ ((cl >> 3) & (GROUPS - 1))) * SR_QUANT_PERM_GROUP)]);
        uint8_t *dst = reinterpret_cast<uint8_t *>(p.dst) + (int64_t)b * p.out_stride_b +
                       (int64_t)h * p.out_stride_h + (int64_t)c * p.out_stride_d + slot0;
        *reinterpret_cast<uint4 *>(dst) = val;
    }
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
