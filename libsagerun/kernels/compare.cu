// Comparison kernels of libsagerun: exact fp32 attention over sampled query rows (the accuracy
// reference), accuracy partial sums of an output against it, and the bitwise difference of two
// outputs. Launched by compare.c through sr_launch_library_kernel; parameters in compare_params.h.
#include <cuda_fp16.h>
#include <stdint.h>

#include "compare_params.h"
#include "compare_rows.h"

namespace {

constexpr unsigned kThreads = SR_COMPARE_THREADS;
constexpr unsigned kWarps = kThreads / 32;

__device__ __forceinline__ float load_element(uint64_t base, uint64_t index, uint32_t dtype)
{
    const unsigned short bits = reinterpret_cast<const unsigned short *>(base)[index];
    if (dtype == 1)
        return __uint_as_float((uint32_t)bits << 16); // bf16 is the top half of an fp32
    return __half2float(__ushort_as_half(bits));
}

__device__ __forceinline__ float block_max(float x, float *scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    if ((threadIdx.x & 31) == 0)
        scratch[threadIdx.x >> 5] = x;
    __syncthreads();
    float r = scratch[0];
    for (unsigned w = 1; w < kWarps; w++)
        r = fmaxf(r, scratch[w]);
    __syncthreads();
    return r;
}

__device__ __forceinline__ float block_sum(float x, float *scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    if ((threadIdx.x & 31) == 0)
        scratch[threadIdx.x >> 5] = x;
    __syncthreads();
    float r = 0;
    for (unsigned w = 0; w < kWarps; w++) // fixed order: the same sum on every run
        r += scratch[w];
    __syncthreads();
    return r;
}

__device__ __forceinline__ double block_reduce_double(double x, double *scratch, bool take_max)
{
    for (int o = 16; o > 0; o >>= 1) {
        double y = __shfl_xor_sync(0xffffffffu, x, o);
        x = take_max ? fmax(x, y) : x + y;
    }
    if ((threadIdx.x & 31) == 0)
        scratch[threadIdx.x >> 5] = x;
    __syncthreads();
    double r = scratch[0];
    for (unsigned w = 1; w < kWarps; w++)
        r = take_max ? fmax(r, scratch[w]) : r + scratch[w];
    __syncthreads();
    return r;
}

// q·k_j scaled (and capped, where the problem has a softcap): the attention score of key j for
// the query row held in shared memory.
__device__ __forceinline__ float attention_score(const sr_compare_problem &p, const float *q_row,
                                                 const sr_compare_row &r, uint32_t j)
{
    const uint64_t base = sr_compare_kv_base(&p, &r, j);
    float s = 0;
    for (uint32_t d = 0; d < p.head_dim; d++)
        s = fmaf(q_row[d], load_element(p.k, base + d, p.dtype), s);
    s *= p.sm_scale;
    if (p.softcap > 0.0f)
        s = p.softcap * tanhf(s / p.softcap);
    return s;
}

// Maps the 16-bit value's bits to an order where neighbouring representable values differ
// by one, so that the distance in "ulps" is a subtraction (+0 and -0 both map to 0).
__device__ __forceinline__ int ordered_bits(unsigned short x)
{
    return (x & 0x8000) ? -(int)(x & 0x7fff) : (int)x;
}

__device__ __forceinline__ bool is_nan16(unsigned short x, uint32_t dtype)
{
    return dtype == 1 ? ((x & 0x7f80) == 0x7f80 && (x & 0x7f)) : ((x & 0x7c00) == 0x7c00 && (x & 0x3ff));
}

} // namespace

// Exact attention softmax(q·Kᵀ·scale)·V in fp32 for one sampled query row per block, over the
// keys [first, end) its mask leaves (compare_rows.h): pass 1 finds the row's maximum score, pass 2
// accumulates exp(s - max)·v over key tiles of kThreads keys (each thread one key for the
// probabilities, then each thread up to two output channels). A row attending no key is 0.
// Dynamic shared memory: (head_dim + kThreads + kWarps) floats.
extern "C" __global__ void __launch_bounds__(kThreads)
    sr_compare_reference_rows(sr_compare_reference_params prm)
{
    extern __shared__ float smem[];
    const sr_compare_problem &p = prm.p;
    float *q_row = smem;
    float *probs = q_row + p.head_dim;
    float *scratch = probs + kThreads;
    const uint64_t row = reinterpret_cast<const uint64_t *>(prm.rows)[blockIdx.x];
    const sr_compare_row r = sr_compare_decode_row(&p, row);
    for (uint32_t d = threadIdx.x; d < p.head_dim; d += kThreads)
        q_row[d] = load_element(p.q, r.q_base + d, p.dtype);
    __syncthreads();

    float m = -INFINITY;
    for (uint32_t j = r.first + threadIdx.x; j < r.end; j += kThreads)
        m = fmaxf(m, attention_score(p, q_row, r, j));
    m = block_max(m, scratch);

    float l = 0, acc0 = 0, acc1 = 0;
    const uint32_t d0 = threadIdx.x, d1 = threadIdx.x + kThreads;
    for (uint32_t j0 = r.first; j0 < r.end; j0 += kThreads) {
        const uint32_t j = j0 + threadIdx.x;
        const float pj = j < r.end ? expf(attention_score(p, q_row, r, j) - m) : 0.0f;
        probs[threadIdx.x] = pj;
        l += pj;
        __syncthreads();
        const uint32_t tile = min(kThreads, r.end - j0);
        for (uint32_t t = 0; t < tile; t++) {
            const uint64_t vbase = sr_compare_kv_base(&p, &r, j0 + t);
            if (d0 < p.head_dim)
                acc0 = fmaf(probs[t], load_element(p.v, vbase + d0, p.dtype), acc0);
            if (d1 < p.head_dim)
                acc1 = fmaf(probs[t], load_element(p.v, vbase + d1, p.dtype), acc1);
        }
        __syncthreads();
    }
    l = block_sum(l, scratch);
    float *out = reinterpret_cast<float *>(prm.out) + (uint64_t)blockIdx.x * p.head_dim;
    if (d0 < p.head_dim)
        out[d0] = l > 0 ? acc0 / l : 0.0f;
    if (d1 < p.head_dim)
        out[d1] = l > 0 ? acc1 / l : 0.0f;
}

// Per sampled row: the partial sums of the accuracy metrics of an output against the reference
// rows (slots in compare_params.h), in double so that summing many rows loses nothing.
extern "C" __global__ void __launch_bounds__(kThreads)
    sr_compare_accuracy_rows(sr_compare_accuracy_params prm)
{
    __shared__ double scratch[kWarps];
    const sr_compare_problem &p = prm.p;
    const uint64_t row = reinterpret_cast<const uint64_t *>(prm.rows)[blockIdx.x];
    const sr_compare_row r = sr_compare_decode_row(&p, row);
    const float *ref = reinterpret_cast<const float *>(prm.reference) + (uint64_t)blockIdx.x * p.head_dim;
    double s[SR_COMPARE_ACC_SLOTS] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t d = threadIdx.x; d < p.head_dim; d += kThreads) {
        const double o = load_element(prm.output, r.q_base + d, p.dtype);
        const double x = ref[d];
        if (!isfinite(o)) {
            s[SR_ACC_NONFINITE] += 1;
            continue;
        }
        const double diff = o - x;
        s[SR_ACC_DOT] += o * x;
        s[SR_ACC_OO] += o * o;
        s[SR_ACC_RR] += x * x;
        s[SR_ACC_ABS_DIFF] += fabs(diff);
        s[SR_ACC_ABS_REF] += fabs(x);
        s[SR_ACC_SQ_DIFF] += diff * diff;
        s[SR_ACC_MAX_ABS] = fmax(s[SR_ACC_MAX_ABS], fabs(diff));
    }
    double *out = reinterpret_cast<double *>(prm.partials) + (uint64_t)blockIdx.x * SR_COMPARE_ACC_SLOTS;
    for (int k = 0; k < SR_COMPARE_ACC_SLOTS; k++) {
        const double v = block_reduce_double(s[k], scratch, k == SR_ACC_MAX_ABS);
        if (threadIdx.x == 0)
            out[k] = v;
    }
}

// How two outputs of 16-bit elements differ: count, first index, max ulp distance, max |a-b|.
// One atomic per warp and quantity into the caller-initialised result.
extern "C" __global__ void __launch_bounds__(kThreads)
    sr_compare_byte_diff(sr_compare_diff_params prm)
{
    const unsigned short *a = reinterpret_cast<const unsigned short *>(prm.a);
    const unsigned short *b = reinterpret_cast<const unsigned short *>(prm.b);
    unsigned long long differing = 0, first = ~0ull;
    unsigned int max_ulp = 0;
    float max_abs = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * kThreads + threadIdx.x; i < prm.elements;
         i += (uint64_t)gridDim.x * kThreads) {
        const unsigned short x = a[i], y = b[i];
        if (x == y)
            continue;
        differing++;
        first = min(first, (unsigned long long)i);
        max_ulp = max(max_ulp, (unsigned int)abs(ordered_bits(x) - ordered_bits(y)));
        float d;
        if (is_nan16(x, prm.dtype) || is_nan16(y, prm.dtype))
            d = INFINITY;
        else
            d = fabsf(load_element(prm.a, i, prm.dtype) - load_element(prm.b, i, prm.dtype));
        max_abs = fmaxf(max_abs, isnan(d) ? INFINITY : d); // Inf - Inf
    }
    for (int o = 16; o > 0; o >>= 1) {
        differing += __shfl_xor_sync(0xffffffffu, differing, o);
        first = min(first, __shfl_xor_sync(0xffffffffu, first, o));
        max_ulp = max(max_ulp, __shfl_xor_sync(0xffffffffu, max_ulp, o));
        max_abs = fmaxf(max_abs, __shfl_xor_sync(0xffffffffu, max_abs, o));
    }
    if ((threadIdx.x & 31) != 0 || differing == 0)
        return;
    sr_compare_diff_result *r = reinterpret_cast<sr_compare_diff_result *>(prm.result);
    atomicAdd(&r->differing, differing);
    atomicMin(&r->first_index, first);
    atomicMax(&r->max_ulp, max_ulp);
    atomicMax(&r->max_abs_bits, __float_as_uint(max_abs)); // non-negative floats order as unsigned
}
