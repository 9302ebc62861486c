// k_mean in torch.mean's summation order (torch_mean_math.h says which), on the device. Two
// kernels, launched by torch_mean.c: the partial sums (step 1), then one thread per column for
// the trees, the multiply and the rounding (steps 2-4). The thread-to-data mapping is free (it
// does not change bits); the arithmetic is the shared one, with 16-byte loads of 8 channels.
#include <stdint.h>

#include "torch_mean_math.h"

namespace {

constexpr unsigned kThreads = 256;

template <bool BF16> __device__ __forceinline__ void unpack8(uint4 raw, float out[8])
{
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const uint16_t lo = (uint16_t)(w[i] & 0xFFFFu), hi = (uint16_t)(w[i] >> 16);
        out[2 * i] = BF16 ? sr_bf16_to_float(lo) : sr_half_to_float(lo);
        out[2 * i + 1] = BF16 ? sr_bf16_to_float(hi) : sr_half_to_float(hi);
    }
}

template <bool BF16>
__device__ __forceinline__ void add8(float acc[8], const uint16_t *src)
{
    float x[8];
    unpack8<BF16>(__ldg(reinterpret_cast<const uint4 *>(src)), x);
#pragma unroll
    for (int j = 0; j < 8; j++)
        acc[j] = sr_add_rn_noftz(acc[j], x[j]);
}

// Step 1 (torch_mean_math.h) for 8 adjacent channels at once (the same operations per channel).
template <bool BF16>
__device__ __forceinline__ void partial8(const sr_torch_mean_partial_params &p, uint64_t t)
{
    const uint32_t chunks = p.heads * (p.head_dim / 8);
    const uint32_t cc = (uint32_t)(t % chunks);
    const uint64_t rest = t / chunks;
    const uint32_t part = (uint32_t)(rest % p.partials), b = (uint32_t)(rest / p.partials);
    const uint32_t h = cc / (p.head_dim / 8), c0 = (cc % (p.head_dim / 8)) * 8;
    const uint16_t *base = reinterpret_cast<const uint16_t *>(p.k) + (int64_t)b * p.stride_b +
                           (int64_t)h * p.stride_h + c0;
    const uint64_t step = p.partials, end = p.seq_len; /* K's rows: the problem's kv_len */
    const int64_t sn = p.stride_n;

    float acc[SR_TORCH_MEAN_ACCS][8];
#pragma unroll
    for (uint32_t i = 0; i < SR_TORCH_MEAN_ACCS; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0.0f;
    uint64_t idx = part;
    for (; idx + (SR_TORCH_MEAN_ACCS - 1) * step < end; idx += SR_TORCH_MEAN_ACCS * step) {
        uint4 raw[SR_TORCH_MEAN_ACCS];
#pragma unroll
        for (uint32_t i = 0; i < SR_TORCH_MEAN_ACCS; i++) // all loads in flight first
            raw[i] = __ldg(reinterpret_cast<const uint4 *>(base + (int64_t)(idx + i * step) * sn));
#pragma unroll
        for (uint32_t i = 0; i < SR_TORCH_MEAN_ACCS; i++) {
            float x[8];
            unpack8<BF16>(raw[i], x);
#pragma unroll
            for (int j = 0; j < 8; j++)
                acc[i][j] = sr_add_rn_noftz(acc[i][j], x[j]);
        }
    }
#pragma unroll
    for (uint32_t i = 0; i < SR_TORCH_MEAN_ACCS; i++) {
        if (idx >= end)
            break;
        add8<BF16>(acc[i], base + (int64_t)idx * sn);
        idx += step;
    }
    const uint64_t columns = (uint64_t)p.batch * p.heads * p.head_dim;
    const uint64_t col = ((uint64_t)b * p.heads + h) * p.head_dim + c0;
    float *out = reinterpret_cast<float *>(p.partial) + (uint64_t)part * columns + col;
    float s[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        s[j] = sr_add_rn_noftz(sr_add_rn_noftz(sr_add_rn_noftz(acc[0][j], acc[1][j]), acc[2][j]),
                               acc[3][j]);
    reinterpret_cast<float4 *>(out)[0] = make_float4(s[0], s[1], s[2], s[3]);
    reinterpret_cast<float4 *>(out)[1] = make_float4(s[4], s[5], s[6], s[7]);
}

} // namespace

// grid: ceil(B * P * H * D/8 / 256), 256 threads; thread t: chunk t % (H*D/8), then partial, then b.
extern "C" __global__ void __launch_bounds__(kThreads)
    sr_torch_mean_partial_kernel(sr_torch_mean_partial_params p)
{
    const uint64_t t = (uint64_t)blockIdx.x * kThreads + threadIdx.x;
    const uint64_t total = (uint64_t)p.batch * p.partials * p.heads * (p.head_dim / 8);
    if (t >= total)
        return;
    if (p.bf16)
        partial8<true>(p, t);
    else
        partial8<false>(p, t);
}

// grid: ceil(columns / 256), 256 threads; one column each.
extern "C" __global__ void __launch_bounds__(kThreads)
    sr_torch_mean_final_kernel(sr_torch_mean_final_params p)
{
    const uint32_t col = blockIdx.x * kThreads + threadIdx.x;
    if (col >= p.columns)
        return;
    float *buf = reinterpret_cast<float *>(p.partial) + col;
    reinterpret_cast<uint16_t *>(p.k_mean)[col] =
        sr_torch_mean_finish(buf, p.columns, p.rows, p.ctas, p.factor, p.bf16);
}
