/* k_mean as SageAttention computes it: `k.mean(dim=seq_dim, keepdim=True)` on the fp16/bf16 K,
 * i.e. torch.mean on CUDA, whose summation order is that of PyTorch's reduction kernel
 * (aten/src/ATen/native/cuda/Reduce.cuh, setReduceConfig and ReduceOp, with MeanOps: fp32
 * accumulation, a multiply by factor = outputs / numel, rounding to the input dtype). That order
 * depends on the shape and on two properties of the device, so the plan takes them as inputs:
 * the host backend reproduces the bits of any GPU given its properties.
 *
 * Scope (what the plan models): the reduced axis is not the fastest-moving one (true for K of
 * [B, kv_len, H, D] or [B, H, kv_len, D] with D > 1, reduced over kv_len), the input is aligned
 * to 8 bytes (as tensors torch allocates are), and K fits torch's 32-bit indexing (under 2 GiB; larger inputs
 * are split by TensorIterator into sub-reductions, not modelled: refused with a message). */
#ifndef SAGERUN_TORCH_MEAN_H
#define SAGERUN_TORCH_MEAN_H

#include <stdint.h>

#include "internal.h"

/* The device properties setReduceConfig reads. */
typedef struct sr_torch_device {
    uint32_t sm_count;           /* multiProcessorCount */
    uint32_t max_threads_per_sm; /* maxThreadsPerMultiProcessor */
} sr_torch_device;

/* The H200 (the seed's device), what the host backend assumes unless SAGERUN_TORCH_DEVICE says
 * otherwise ("SMSxTHREADS", e.g. "128x1536"). */
#define SR_TORCH_DEVICE_DEFAULT {132u, 2048u}

/* torch's configuration of one mean reduction, and the order it implies (torch_mean_math.h). */
typedef struct sr_torch_mean_plan {
    uint64_t outputs;   /* columns reduced (num_outputs) */
    uint32_t n;         /* inputs per output */
    uint32_t vec;       /* output_vec_size: outputs per thread (4, 2 or 1) */
    uint32_t block_x, block_y, grid_x; /* torch's launch (grid.y = ctas) */
    uint32_t rows;      /* threads of a block along the reduction: block_y when the input is split
                           across warps, else 1 */
    uint32_t ctas;      /* blocks per output (ctas_per_output) */
    float factor;       /* fl(fl(outputs) / fl(outputs * n)) */
} sr_torch_mean_plan;

/* The plan for reducing `n` inputs into each of `outputs` outputs, `vec` outputs per thread, on
 * device dev. Errors: sizes beyond torch's int32 configuration, vec not 1, 2 or 4. */
sagerun_status sr_torch_mean_plan_make(uint64_t outputs, uint64_t n, uint32_t vec,
                                       const sr_torch_device *dev, sr_torch_mean_plan *plan,
                                       sagerun_error *err);

/* The plan of K's mean over the sequence for a problem (K [B, kv_len, Hkv, D] NHD or
 * [B, Hkv, kv_len, D] HND, contiguous, fp16 or bf16; kv_len is sagerun_problem_kv_len: torch's
 * order depends on the shape, so K's own length, not the queries'). */
sagerun_status sr_torch_kmean_plan(const sagerun_problem *problem, const sr_torch_device *dev,
                                   sr_torch_mean_plan *plan, sagerun_error *err);

/* The properties of ctx's device (CUDA), or the assumed ones (host: SAGERUN_TORCH_DEVICE or the
 * default). */
sagerun_status sr_torch_device_of(sagerun_context *ctx, sr_torch_device *dev, sagerun_error *err);

/* Floats of scratch the CUDA k_mean needs (the partials and step 3's slots). */
uint64_t sr_torch_kmean_scratch_floats(const sagerun_problem *problem,
                                       const sr_torch_mean_plan *plan);

/* K's mean on the host, in the plan's order: k_mean [B, Hkv, D] in the input dtype. */
sagerun_status sr_torch_kmean_host(const sagerun_problem *problem, const sr_torch_mean_plan *plan,
                                   const uint16_t *k, uint16_t *k_mean, sagerun_error *err);

/* The same on CUDA: enqueues two kernels on ctx's stream. scratch holds
 * sr_torch_kmean_scratch_floats floats; K 16-byte aligned, D a multiple of 8. */
sagerun_status sr_torch_kmean_cuda(sagerun_context *ctx, const sagerun_problem *problem,
                                   const sr_torch_mean_plan *plan, uint64_t k, uint64_t scratch,
                                   uint64_t k_mean, sagerun_error *err);

#endif
