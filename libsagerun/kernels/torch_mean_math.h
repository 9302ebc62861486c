/* k_mean in the summation order of torch.mean on CUDA (PyTorch's Reduce.cuh with MeanOps, fp32
 * accumulation), shared by the host (torch_mean.c) and the device (torch_mean.cu): the kernel
 * parameters and the scalar steps of the order. The plan (how many partial sums, how they
 * combine) is computed on the host by sr_torch_mean_plan_make (torch_mean.h).
 *
 * The order, for one output column x[0..N) and a plan of `rows` x `ctas` partials (P = rows *
 * ctas; a partial is one torch thread: warp row r of block c, partial index p = c * rows + r):
 *   1. partial p sums x[p], x[p + P], x[p + 2P], ... into four accumulators (element i of each
 *      group of four consecutive terms into accumulator i; the tail into 0, 1, 2 in turn), each
 *      starting from +0, then ((a0 + a1) + a2) + a3;
 *   2. the rows partials of block c combine as a tree: for offset rows/2, rows/4, ..., 1,
 *      v[r] += v[r + offset] for r < offset;
 *   3. with ctas = 1 that is the sum; otherwise g[r] = +0 + the block sums c = r, r + rows, ...
 *      in that order, and the g combine as the same tree;
 *   4. mean = sum * factor (fp32, factor = fl(fl(outputs) / fl(outputs * N))), rounded to the
 *      input dtype, nearest even.
 * All fp32 operations round to nearest without flushing subnormals (PyTorch is not built with
 * -ftz), hence the explicit .rn PTX on the device. */
#ifndef SAGERUN_KERNELS_TORCH_MEAN_MATH_H
#define SAGERUN_KERNELS_TORCH_MEAN_MATH_H

#include <stdint.h>

#include "quantize_math.h"

#define SR_TORCH_MEAN_ACCS 4u /* vt0: torch's accumulators per thread */

/* Partial sums: one thread per (b, h, 8 channels, partial p). */
typedef struct sr_torch_mean_partial_params {
    uint64_t k;                /* input, fp16 or bf16 */
    uint64_t partial;          /* f32 [P + rows][B * H * D]: partials, then the g of step 3 */
    int64_t stride_b, stride_n, stride_h; /* element strides of K */
    uint32_t batch, seq_len, heads, head_dim; /* seq_len: K's rows, the problem's kv_len */
    uint32_t partials;         /* P */
    uint32_t bf16;
} sr_torch_mean_partial_params;

/* Steps 2-4: one thread per column. */
typedef struct sr_torch_mean_final_params {
    uint64_t partial;          /* as above (modified in place) */
    uint64_t k_mean;           /* out: [B, H, D] in the input dtype */
    uint32_t columns;          /* B * H * D */
    uint32_t rows, ctas;
    uint32_t bf16;
    float factor;
    uint32_t reserved;
} sr_torch_mean_final_params;

/* fp32 add and multiply, round to nearest, subnormals kept (whatever -ftz says). */
SR_HD float sr_add_rn_noftz(float a, float b)
{
#if defined(__CUDA_ARCH__)
    float r;
    asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    return a + b;
#endif
}

SR_HD float sr_mul_rn_noftz(float a, float b)
{
#if defined(__CUDA_ARCH__)
    float r;
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    return a * b;
#endif
}

/* The tree of step 2 over v[0], v[stride], ..., v[(rows - 1) * stride] (rows a power of two);
 * the result lands in v[0]. */
SR_HD void sr_torch_mean_tree(float *v, uint64_t stride, uint32_t rows)
{
    for (uint32_t off = rows / 2; off > 0; off /= 2)
        for (uint32_t r = 0; r < off; r++)
            v[r * stride] = sr_add_rn_noftz(v[r * stride], v[(r + off) * stride]);
}

/* Steps 2-4 for the column whose partials are buf[p * stride], p < rows * ctas, with rows more
 * slots after them for step 3. Returns the mean's bits. */
SR_HD uint16_t sr_torch_mean_finish(float *buf, uint64_t stride, uint32_t rows, uint32_t ctas,
                                    float factor, uint32_t bf16)
{
    for (uint32_t c = 0; c < ctas; c++)
        sr_torch_mean_tree(buf + (uint64_t)c * rows * stride, stride, rows);
    float sum = buf[0];
    if (ctas > 1) {
        float *g = buf + (uint64_t)rows * ctas * stride;
        for (uint32_t r = 0; r < rows; r++) {
            float s = 0.0f;
            for (uint32_t c = r; c < ctas; c += rows)
                s = sr_add_rn_noftz(s, buf[(uint64_t)c * rows * stride]);
            g[r * stride] = s;
        }
        sr_torch_mean_tree(g, stride, rows);
        sum = g[0];
    }
    float m = sr_mul_rn_noftz(sum, factor);
    return bf16 ? sr_float_to_bf16(m) : sr_float_to_half(m);
}

#endif
