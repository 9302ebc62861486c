// Synthetic Q/K/V on the device: one pass, each thread writes 8 elements with one 16-byte store.
// The arithmetic lives in generate_math.h, shared with the host backend (generate.c).
#include <stdint.h>

#include "generate_math.h"

namespace {

constexpr unsigned kThreads = 256; // must match SR_GEN_THREADS in generate.c

// Storage row -> logical coordinates with 32-bit divisions (rows < 2^32 is checked by the host).
__device__ __forceinline__ uint64_t row_coords32(const sr_gen_tensor_params &p, uint32_t row,
                                                 uint32_t *h)
{
    uint32_t b, n;
    if (p.layout == 0) {
        uint32_t bn = row / p.heads;
        *h = row - bn * p.heads;
        b = bn / p.seq_len;
        n = bn - b * p.seq_len;
    } else {
        uint32_t bh = row / p.seq_len;
        n = row - bh * p.seq_len;
        b = bh / p.heads;
        *h = bh - b * p.heads;
    }
    return (((uint64_t)b * p.seq_len + n) * p.heads + *h) * p.head_dim;
}

} // namespace

// grid: (x, 3): blockIdx.y picks Q, K or V; grid-stride over 8-element chunks.
// Requires head_dim % 8 == 0, a 16-byte aligned output and B*N*H < 2^32 (checked by the caller).
extern "C" __global__ void __launch_bounds__(kThreads)
    sr_generate_qkv_kernel(sr_gen_launch_params lp)
{
    const sr_gen_tensor_params &p = lp.t[blockIdx.y];
    if (p.out == 0)
        return;
    const uint32_t chunks_per_row = p.head_dim / SR_GEN_VECTOR;
    const uint64_t chunks = p.elements / SR_GEN_VECTOR;
    uint4 *out = reinterpret_cast<uint4 *>(p.out);
    for (uint64_t i = (uint64_t)blockIdx.x * kThreads + threadIdx.x; i < chunks;
         i += (uint64_t)gridDim.x * kThreads) {
        uint32_t row, c0;
        if (chunks >> 32) {
            row = (uint32_t)(i / chunks_per_row);
            c0 = (uint32_t)(i - (uint64_t)row * chunks_per_row) * SR_GEN_VECTOR;
        } else { // the common case: 32-bit division is several times cheaper
            uint32_t i32 = (uint32_t)i;
            row = i32 / chunks_per_row;
            c0 = (i32 - row * chunks_per_row) * SR_GEN_VECTOR;
        }
        uint32_t h;
        uint64_t base = row_coords32(p, row, &h) + c0;
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t lo = sr_gen_element(&p, base + 2 * j, h, c0 + 2 * j);
            uint32_t hi = sr_gen_element(&p, base + 2 * j + 1, h, c0 + 2 * j + 1);
            w[j] = lo | (hi << 16);
        }
        out[i] = make_uint4(w[0], w[1], w[2], w[3]);
    }
}
